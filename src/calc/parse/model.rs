//! The model a link names, read: a preset by its Hub id (`Spec::fit.model_key`), overridden key
//! by key by config.json's keys (or Megatron's arguments for the same sizes and its switches: the
//! MLP, the linear biases, the norm, the position embeddings), or a model typed from scratch
//! (`Spec::fit.typed`: a Llama from config.json's keys, Megatron's GPT from its arguments, each
//! absent one at Megatron's default). Each framework's model-stage settings call [`resolve`] once per edit and publish
//! the result in the plan (`plan::Settings::model`); nothing after the rules reads these keys.

use super::{Param, Reader};
use crate::calc::field::Field;
use crate::calc::model::{self, Model, ModelType};
use crate::calc::plan::NamedModel;
use crate::calc::report::{Diag, Level};
use crate::calc::spec::Spec;
use crate::calc::{RawInputs, Report};

/// config.json's architecture keys, with what each sets on a [`Model`].
type Setter = fn(&mut Model, u64);

const HF_KEYS: &[(&str, Setter)] = &[
    ("hidden_size", |m, v| m.hidden_size = v),
    ("num_hidden_layers", |m, v| m.num_hidden_layers = v),
    ("num_attention_heads", |m, v| m.num_attention_heads = v),
    ("num_key_value_heads", |m, v| m.num_key_value_heads = v),
    ("head_dim", |m, v| m.head_dim = Some(v)),
    ("intermediate_size", |m, v| m.intermediate_size = v),
    ("vocab_size", |m, v| m.vocab_size = v),
    ("num_experts", |m, v| m.num_experts = v),
    ("num_experts_per_tok", |m, v| m.num_experts_per_tok = v),
    ("moe_intermediate_size", |m, v| m.moe_intermediate_size = v),
    ("n_shared_experts", |m, v| m.n_shared_experts = v),
    ("first_k_dense_replace", |m, v| m.first_k_dense_replace = v),
    ("q_lora_rank", |m, v| m.q_lora_rank = Some(v)),
    ("kv_lora_rank", |m, v| m.kv_lora_rank = v),
    ("qk_nope_head_dim", |m, v| m.qk_nope_head_dim = v),
    ("qk_rope_head_dim", |m, v| m.qk_rope_head_dim = v),
    ("v_head_dim", |m, v| m.v_head_dim = v),
    // Megatron's arguments for the same sizes
    ("num_layers", |m, v| m.num_hidden_layers = v),
    ("ffn_hidden_size", |m, v| m.intermediate_size = v),
    ("num_query_groups", |m, v| m.num_key_value_heads = v),
    ("kv_channels", |m, v| m.head_dim = Some(v)),
    ("moe_router_topk", |m, v| m.num_experts_per_tok = v),
    ("moe_ffn_hidden_size", |m, v| m.moe_intermediate_size = v),
    ("qk_head_dim", |m, v| m.qk_nope_head_dim = v),
    ("qk_pos_emb_head_dim", |m, v| m.qk_rope_head_dim = v),
];

/// The architecture's switches (read after the sizes).
const FLAG_KEYS: &[&str] = &[
    "tie_word_embeddings",
    "untie_embeddings_and_output_weights",
    "attention_bias",
    "swiglu",
    "group_query_attention",
    "disable_bias_linear",
    "qk_layernorm",
    "multi_latent_attention",
];

/// Megatron's arguments that choose a module (read after the switches): the norm, the position
/// embedding and its rows.
const CHOICE_KEYS: &[&str] = &[
    "normalization",
    "position_embedding_type",
    "max_position_embeddings",
];

/// Whether a config.json (or Megatron) key describes the architecture (a size or a switch).
pub fn is_architecture_key(key: &str) -> bool {
    key == "model_type"
        || HF_KEYS.iter().any(|(k, _)| *k == key)
        || FLAG_KEYS.contains(&key)
        || CHOICE_KEYS.contains(&key)
}

/// The keys a model typed without a preset needs.
const REQUIRED: &[&str] = &[
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
];

/// This framework's field for a config.json (or Megatron) key: its own key, or nanotron's
/// `model.model_config.` form of it.
pub fn field_of(spec: &'static Spec, key: &str) -> Option<Field> {
    spec.fields().find(|f| {
        f.key() == key
            || f.key().strip_prefix("model.model_config.") == Some(key)
            || (key == "num_hidden_layers" && f.key() == "num_layers")
            || (key == "intermediate_size" && f.key() == "ffn_hidden_size")
    })
}

/// Reads the model: a preset, overridden key by key. `None` when no model is named or typed
/// (nothing to say), or when what was typed is incomplete or invalid (said at its field).
pub fn resolve(spec: &'static Spec, raw: &RawInputs, report: &mut Report) -> Option<NamedModel> {
    let mut diags: Vec<Diag> = Vec::new();
    let out = resolve_into(spec, raw, report, &mut diags);
    merge(report, diags);
    out
}

/// Adds the stage's reading messages, except at a field the framework's rules already spoke
/// about (a key both read, such as Megatron's `num_experts`: its message stays the only one).
fn merge(report: &mut Report, diags: Vec<Diag>) {
    for d in diags {
        if !report.diags.iter().any(|x| x.field == d.field) {
            report.diags.push(d);
        }
    }
}

fn resolve_into(
    spec: &'static Spec,
    raw: &RawInputs,
    report: &mut Report,
    diags: &mut Vec<Diag>,
) -> Option<NamedModel> {
    let mut rd = Reader { raw, diags };
    let mut m = base_model(spec, &mut rd, report)?;
    let from_preset = m.hidden_size != 0;
    // the GPT Megatron builds from its own arguments: each one absent takes Megatron's
    // default (a GeLU MLP, linear biases, LayerNorm, learned absolute positions; a preset keeps
    // its own)
    let megatron_defaults = !from_preset && m.model_type == ModelType::MegatronGpt;
    if megatron_defaults {
        m.gated_mlp = false;
        m.linear_bias = true;
        m.layer_norm = true;
    }
    let counts_ok = typed_counts(spec, &mut rd, &mut m);
    let flags_ok =
        typed_flags(spec, &mut rd, &mut m, megatron_defaults) && typed_mla(spec, &mut rd, &mut m);
    let (choices_ok, positions_missing) =
        typed_choices(spec, &mut rd, report, &mut m, megatron_defaults);
    let ok = counts_ok && flags_ok && choices_ok;
    if !ok {
        return None;
    }
    if !from_preset {
        scratch_defaults(spec, raw, report, &mut m, megatron_defaults)?;
    }
    model_checked(spec, report, m, positions_missing)
}

/// Megatron's `--normalization` and `--position-embedding-type` (argparse's choices), and the
/// rows of learned positions: whether they were readable, and the field to give when the rows
/// are missing.
fn typed_choices(
    spec: &'static Spec,
    rd: &mut Reader,
    report: &mut Report,
    m: &mut Model,
    megatron_defaults: bool,
) -> (bool, Option<Field>) {
    let mut learned_positions = megatron_defaults;
    let mut ok = true;
    if let Some(f) = field_of(spec, "normalization") {
        match rd.text(f) {
            Param::Given(v) if v == "LayerNorm" => m.layer_norm = true,
            Param::Given(v) if v == "RMSNorm" => m.layer_norm = false,
            Param::Given(_) => {
                report.diag(f, Level::Error, "--normalization is LayerNorm or RMSNorm");
                ok = false;
            }
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "position_embedding_type") {
        // argparse's choices; only learned_absolute has parameters
        let choices = f.choices().map_or(&[][..], |(_, c)| c);
        match rd.text(f) {
            Param::Given(v) if choices.contains(&v.as_str()) => {
                learned_positions = v == "learned_absolute";
            }
            Param::Given(_) => {
                report.diag(
                    f,
                    Level::Error,
                    format!("--position-embedding-type is one of {}", choices.join(", ")),
                );
                ok = false;
            }
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    // learned absolute positions have --max-position-embeddings rows (which Megatron requires)
    let mut positions_missing = None;
    match field_of(spec, "max_position_embeddings").map(|f| (f, rd.count(f))) {
        Some((_, Param::Given(rows))) if learned_positions => m.position_embeddings = rows,
        Some((f, Param::Absent)) if learned_positions => positions_missing = Some(f),
        Some((_, Param::Invalid)) => ok = false,
        _ => {}
    }
    (ok, positions_missing)
}

/// A model typed from scratch: key/value heads and Megatron's FFN size by default, the required
/// keys (`None`, with a hint at each, when one is missing).
fn scratch_defaults(
    spec: &'static Spec,
    raw: &RawInputs,
    report: &mut Report,
    m: &mut Model,
    megatron_defaults: bool,
) -> Option<()> {
    let key_given = |k: &str| field_of(spec, k).is_some_and(|f| given(raw, f));
    // a model typed from scratch: key/value heads default to the attention heads
    if !key_given("num_key_value_heads") && !key_given("num_query_groups") {
        m.num_key_value_heads = m.num_attention_heads;
    }
    // Megatron's --ffn-hidden-size default: 4h, or for SwiGLU 2/3 of it rounded down to a
    // multiple of 64 (validate_args)
    if megatron_defaults && !key_given("ffn_hidden_size") {
        let four_h = m.hidden_size.saturating_mul(4);
        m.intermediate_size = if m.gated_mlp {
            four_h.saturating_mul(2) / 3 / 64 * 64
        } else {
            four_h
        };
    }
    // (Megatron's FFN size has its default)
    let defaulted = |k: &str| megatron_defaults && k == "intermediate_size";
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|k| !key_given(k) && !defaulted(k))
        .collect();
    if !missing.is_empty() {
        for k in &missing {
            if let Some(f) = field_of(spec, k) {
                report.diag(
                    f,
                    Level::Hint,
                    format!(
                        "the model's memory and FLOPs need {} (or pick a model)",
                        f.key()
                    ),
                );
            }
        }
        return None;
    }
    Some(())
}

fn base_model(spec: &'static Spec, rd: &mut Reader, report: &mut Report) -> Option<Model> {
    let raw = rd.raw;
    let key = spec.fit.model_key;
    let preset = match rd.text(key) {
        Param::Given(id) => match model::preset(&id) {
            Some(m) => Some(m),
            None => {
                report.diag(
                    key,
                    Level::Note,
                    format!(
                        "dpcalc has no preset for “{}”: for its memory and FLOPs pick a preset with the same architecture or type its config.json keys (or paste its config.json)",
                        super::shorten(&id)
                    ),
                );
                return None;
            }
        },
        Param::Invalid => return None,
        Param::Absent => None,
    };
    let type_field = field_of(spec, "model_type");
    let typed_type = match type_field.map(|f| (f, rd.text(f))) {
        Some((f, Param::Given(t))) => match ModelType::from_key(&t) {
            Some(t) => Some(t),
            None => {
                report.diag(
                    f,
                    Level::Error,
                    "model_type must be one of llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gemma, gemma2, phi3, gemma3_text, deepseek_v2",
                );
                return None;
            }
        },
        _ => None,
    };
    let key_given = |k: &str| field_of(spec, k).is_some_and(|f| given(raw, f));
    let any_typed = HF_KEYS
        .iter()
        .map(|(k, _)| *k)
        .chain(FLAG_KEYS.iter().copied())
        .chain(CHOICE_KEYS.iter().copied())
        .any(key_given);
    Some(match (preset, typed_type) {
        (Some(p), Some(t)) => Model {
            model_type: t,
            qk_norm: t.has_qk_norm(),
            ..p
        },
        (Some(p), None) => p,
        (None, Some(t)) => Model::blank(t),
        (None, None) if any_typed => Model::blank(spec.fit.typed),
        (None, None) => return None,
    })
}

/// The counts of config.json's keys as typed; whether every one was readable.
fn typed_counts(spec: &'static Spec, rd: &mut Reader, m: &mut Model) -> bool {
    let mut ok = true;
    for (k, set) in HF_KEYS {
        let Some(f) = field_of(spec, k) else { continue };
        match rd.count(f) {
            Param::Given(v) => set(m, v),
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    ok
}

/// The architecture's flags as typed (Megatron's as their negations where they are); whether
/// every one was readable.
fn typed_flags(
    spec: &'static Spec,
    rd: &mut Reader,
    m: &mut Model,
    megatron_defaults: bool,
) -> bool {
    let mut ok = true;
    // flags
    if let Some(f) = field_of(spec, "tie_word_embeddings") {
        match rd.flag(f) {
            Param::Given(v) => m.tie_word_embeddings = v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "untie_embeddings_and_output_weights") {
        match rd.flag(f) {
            Param::Given(v) => m.tie_word_embeddings = !v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "attention_bias") {
        match rd.flag(f) {
            Param::Given(v) => m.attention_bias = v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "swiglu") {
        match rd.flag(f) {
            Param::Given(v) => m.gated_mlp = v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "disable_bias_linear") {
        match rd.flag(f) {
            Param::Given(v) => m.linear_bias = !v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "qk_layernorm") {
        match rd.flag(f) {
            Param::Given(v) => m.qk_norm = v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "group_query_attention") {
        match rd.flag(f) {
            // without --group-query-attention every head has its own key and value (Megatron
            // ignores --num-query-groups then)
            Param::Given(false) => m.num_key_value_heads = m.num_attention_heads,
            Param::Absent if megatron_defaults => m.num_key_value_heads = m.num_attention_heads,
            Param::Invalid => ok = false,
            _ => {}
        }
    }
    ok
}

/// Megatron's `--multi-latent-attention`: its GPT's attention becomes `MLASelfAttention`, each
/// size not given at Megatron's default (`_add_mla_args`, megatron/training/arguments.py at
/// 0.19.2: `--q-lora-rank` None, a full query projection; `--kv-lora-rank` 32, `--qk-head-dim`
/// 128, `--qk-pos-emb-head-dim` 64, `--v-head-dim` 128). A model that is MLA already (DeepSeek's
/// presets) keeps its sizes. Whether the flag was readable.
fn typed_mla(spec: &'static Spec, rd: &mut Reader, m: &mut Model) -> bool {
    let Some(f) = field_of(spec, "multi_latent_attention") else {
        return true;
    };
    match rd.flag(f) {
        Param::Given(true) if !m.is_mla() => {
            m.multi_latent_attention = true;
            for (k, set, default) in [
                ("kv_lora_rank", (|m, v| m.kv_lora_rank = v) as Setter, 32),
                ("qk_head_dim", |m, v| m.qk_nope_head_dim = v, 128),
                ("qk_pos_emb_head_dim", |m, v| m.qk_rope_head_dim = v, 64),
                ("v_head_dim", |m, v| m.v_head_dim = v, 128),
            ] {
                if !field_of(spec, k).is_some_and(|f| given(rd.raw, f)) {
                    set(m, default);
                }
            }
            true
        }
        Param::Invalid => false,
        _ => true,
    }
}

/// The model's last checks: Megatron's position rows, sizes of at least 1, the heads against the
/// key/value heads, the experts per token.
fn model_checked(
    spec: &'static Spec,
    report: &mut Report,
    m: Model,
    positions_missing: Option<Field>,
) -> Option<NamedModel> {
    let key = spec.fit.model_key;
    if let Some(f) = positions_missing {
        report.diag(
            f,
            Level::Hint,
            "the model's memory and FLOPs need max_position_embeddings: the rows of its learned position embeddings (--position-embedding-type learned_absolute, Megatron's default), which Megatron requires (validate_args: “max_position_embeddings argument is None”)",
        );
        return None;
    }
    for (k, v) in [
        ("hidden_size", m.hidden_size),
        ("num_hidden_layers", m.num_hidden_layers),
        ("num_attention_heads", m.num_attention_heads),
        ("num_key_value_heads", m.num_key_value_heads),
        ("vocab_size", m.vocab_size),
    ] {
        if v == 0 {
            let f = field_of(spec, k).unwrap_or(key);
            report.diag(f, Level::Error, format!("{} must be at least 1", f.key()));
            return None;
        }
    }
    // (multi-latent attention has no key/value heads of its own)
    if !m.is_mla() && m.num_attention_heads % m.num_key_value_heads != 0 {
        let f = field_of(spec, "num_key_value_heads").unwrap_or(key);
        report.diag(
            f,
            Level::Error,
            format!(
                "num_attention_heads ({}) must be a multiple of {} ({}): each key/value head serves the same number of query heads",
                m.num_attention_heads,
                f.key(),
                m.num_key_value_heads
            ),
        );
        return None;
    }
    if m.is_moe() && (m.num_experts_per_tok == 0 || m.num_experts_per_tok > m.num_experts) {
        let f = field_of(spec, "num_experts_per_tok")
            .or_else(|| field_of(spec, "moe_router_topk"))
            .unwrap_or(key);
        report.diag(
            f,
            Level::Error,
            format!(
                "{} must be between 1 and the number of experts ({})",
                f.key(),
                m.num_experts
            ),
        );
        return None;
    }
    Some(NamedModel { model: m })
}

/// Whether `raw` gives anything [`resolve`] reads: the model key, `model_type`, or an
/// architecture key (given, or given twice). Without any of them `resolve` finds no model and says
/// nothing, so the stage ends after its settings; a first view (feature `first`) leaves out what
/// follows and leaves a link that names a model to the full app.
pub fn names_model(spec: &'static Spec, raw: &RawInputs) -> bool {
    given(raw, spec.fit.model_key)
        || std::iter::once("model_type")
            .chain(HF_KEYS.iter().map(|(k, _)| *k))
            .chain(FLAG_KEYS.iter().copied())
            .chain(CHOICE_KEYS.iter().copied())
            .filter_map(|k| field_of(spec, k))
            .any(|f| given(raw, f))
}

/// The routed experts of the preset `raw` names at `key` (the framework's
/// `Spec::fit.model_key`), as Megatron's `--num-experts` ([`Model::megatron_num_experts`]), with
/// the preset's id. Read quietly: `None` without a model, for a name dpcalc has no preset for, a
/// dense preset, or a key given twice ([`resolve`] says so at the field in the model stage). What
/// a framework's rules read when no expert count is typed (Megatron's `validate_args` checks it
/// against expert parallelism before the model stage runs).
pub fn preset_experts(raw: &RawInputs, key: Field) -> Option<(&'static str, u64)> {
    let mut quiet = Vec::new();
    let Param::Given(id) = (Reader {
        raw,
        diags: &mut quiet,
    })
    .text(key) else {
        return None;
    };
    let id = model::preset_id(&id)?;
    Some((id, model::preset(id)?.megatron_num_experts()?))
}

/// Whether the model of `raw` has routed experts: the named or typed model (`model`, as
/// [`resolve`] read it) is a mixture of experts, or an expert count above one is typed (the
/// layout explorer offers expert parallelism only then, or when the link sets it).
pub fn has_experts(spec: &'static Spec, raw: &RawInputs, model: Option<&NamedModel>) -> bool {
    let typed = ["num_experts", "num_local_experts", "n_routed_experts"]
        .iter()
        .filter_map(|k| field_of(spec, k))
        .any(|f| {
            super::count(f, raw.get(f), &mut Vec::new())
                .given()
                .is_some_and(|n| n > 1)
        });
    typed || model.is_some_and(|m| m.model.is_moe())
}

/// Whether a field is given (or given twice).
fn given(raw: &RawInputs, f: Field) -> bool {
    raw.is_given(f) || raw.conflict(f).is_some()
}
