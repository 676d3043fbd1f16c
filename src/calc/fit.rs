//! The model, memory and compute stage, for every framework: the model a link names (a preset by
//! its Hub id, with config.json's keys or Megatron's arguments overriding it), its parameter
//! counts, the frameworks' own estimators for its memory and FLOPs, and the GPU.
//!
//! What is exact (each the named framework function's value, tested against its recorded runs
//! in tests/model.rs): the parameter counts (transformers' `num_parameters()`), DeepSpeed's ZeRO
//! model-state estimators (with ZeRO stage 2 or 3 where the framework reads DeepSpeed's keys),
//! Megatron-LM's `report_theoretical_memory` (under Megatron) and the four FLOPs conventions.
//! What is estimated: the memory per GPU with its breakdown (published formulas, `estimate.rs`)
//! and tokens per second from an MFU (`mfu × peak ÷ FLOPs per token`). Each is labelled so in its
//! worked step; none is "measured".
//!
//! The stage runs after the framework's rules and before tokens and time ([`run`], called by
//! `Framework::compute`): it reads the report's grid and batch, never changes a value the rules
//! set, and hands the time stage an estimated throughput when only an MFU is given.

use super::estimate::{self, Change, Plan, Recompute};
use super::field::Field;
use super::lora::{lora_trainable_parameters, LoraError, LoraTarget};
use super::model::{self, Model, ModelType};
use super::parse::Reader;
use super::spec::{FlopsConvention, Sharding, Spec};
use super::{flops, memory, Diag, Grid, Level, Num, Output, Param, RawInputs, Refusal, Report};

/// A GPU dpcalc knows: its `gpu=` id, name, memory (the vendor's figure, GB = 10⁹ bytes) and dense
/// BF16 peak (torchtitan 0.3.0's `get_peak_flops` table).
pub struct Gpu {
    pub id: &'static str,
    pub name: &'static str,
    pub memory_gb: u64,
    pub peak_tflops: u64,
}

pub const GPUS: &[Gpu] = &[
    Gpu {
        id: "a100-40gb",
        name: "A100 40GB",
        memory_gb: 40,
        peak_tflops: 312,
    },
    Gpu {
        id: "a100-80gb",
        name: "A100 80GB",
        memory_gb: 80,
        peak_tflops: 312,
    },
    Gpu {
        id: "h100-sxm",
        name: "H100 SXM",
        memory_gb: 80,
        peak_tflops: 989,
    },
    Gpu {
        id: "h100-pcie",
        name: "H100 PCIe",
        memory_gb: 80,
        peak_tflops: 756,
    },
    Gpu {
        id: "h100-nvl",
        name: "H100 NVL",
        memory_gb: 94,
        peak_tflops: 835,
    },
    Gpu {
        id: "h200",
        name: "H200",
        memory_gb: 141,
        peak_tflops: 989,
    },
    Gpu {
        id: "b200",
        name: "B200",
        memory_gb: 180,
        peak_tflops: 2250,
    },
    Gpu {
        id: "gb200",
        name: "GB200",
        memory_gb: 186,
        peak_tflops: 2500,
    },
    Gpu {
        id: "mi300x",
        name: "MI300X",
        memory_gb: 192,
        peak_tflops: 1300,
    },
];

pub fn gpu(id: &str) -> Option<&'static Gpu> {
    GPUS.iter().find(|g| g.id.eq_ignore_ascii_case(id.trim()))
}

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
];

/// The architecture's switches (read after the sizes).
const FLAG_KEYS: &[&str] = &[
    "tie_word_embeddings",
    "untie_embeddings_and_output_weights",
    "attention_bias",
    "swiglu",
    "group_query_attention",
];

/// Whether a config.json (or Megatron) key describes the architecture (a size or a switch).
pub fn is_architecture_key(key: &str) -> bool {
    key == "model_type" || HF_KEYS.iter().any(|(k, _)| *k == key) || FLAG_KEYS.contains(&key)
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

/// What the stage resolved, for the views (the explorer's memory column reads it too).
pub struct Resolved {
    pub model: Model,
    /// Megatron's `--swiglu` (the counts assume a gated MLP; a plain one is Megatron-only).
    pub swiglu: bool,
}

/// Reads the model: a preset, overridden key by key. `None` when no model is named or typed
/// (nothing to say), or when what was typed is incomplete or invalid (said at its field).
pub fn resolve(spec: &'static Spec, raw: &RawInputs, report: &mut Report) -> Option<Resolved> {
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
) -> Option<Resolved> {
    let mut rd = Reader { raw, diags };
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
                        super::parse::shorten(&id)
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
        .any(key_given);
    let mut m = match (preset, typed_type) {
        (Some(p), Some(t)) => Model { model_type: t, ..p },
        (Some(p), None) => p,
        (None, Some(t)) => Model::blank(t),
        (None, None) if any_typed => Model::blank(ModelType::Llama),
        (None, None) => return None,
    };
    let from_preset = m.hidden_size != 0;
    let mut ok = true;
    for (k, set) in HF_KEYS {
        let Some(f) = field_of(spec, k) else { continue };
        match rd.count(f) {
            Param::Given(v) => set(&mut m, v),
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
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
    let mut swiglu = true;
    if let Some(f) = field_of(spec, "swiglu") {
        match rd.flag(f) {
            Param::Given(v) => swiglu = v,
            Param::Invalid => ok = false,
            Param::Absent => {}
        }
    }
    if let Some(f) = field_of(spec, "group_query_attention") {
        match rd.flag(f) {
            // without --group-query-attention every head has its own key and value
            Param::Given(false) => m.num_key_value_heads = m.num_attention_heads,
            Param::Invalid => ok = false,
            _ => {}
        }
    }
    if !ok {
        return None;
    }
    if !from_preset {
        // a model typed from scratch: key/value heads default to the attention heads
        if !key_given("num_key_value_heads") && !key_given("num_query_groups") {
            m.num_key_value_heads = m.num_attention_heads;
        }
        let missing: Vec<&str> = REQUIRED.iter().copied().filter(|k| !key_given(k)).collect();
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
    if m.num_attention_heads % m.num_key_value_heads != 0 {
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
    Some(Resolved { model: m, swiglu })
}

fn set_int(report: &mut Report, output: Output, v: u128) -> Option<i128> {
    let v = i128::try_from(v).ok()?;
    report.set(output, Num::Int(v));
    Some(v)
}

fn fmt_f(x: f64) -> String {
    super::num::float_repr(x)
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
            .filter_map(|k| field_of(spec, k))
            .any(|f| given(raw, f))
}

/// Whether the model of `raw` has routed experts: the named or typed model is a mixture of
/// experts, or an expert count above one is typed (the layout explorer offers expert
/// parallelism only then, or when the link sets it).
pub fn has_experts(spec: &'static Spec, raw: &RawInputs) -> bool {
    let typed = ["num_experts", "num_local_experts", "n_routed_experts"]
        .iter()
        .filter_map(|k| field_of(spec, k))
        .any(|f| raw.get(f).trim().parse::<u64>().is_ok_and(|n| n > 1));
    typed
        || (names_model(spec, raw)
            && resolve(spec, raw, &mut Report::default()).is_some_and(|r| r.model.is_moe()))
}

/// Whether a field is given (or given twice).
fn given(raw: &RawInputs, f: Field) -> bool {
    !raw.get(f).trim().is_empty() || raw.conflict(f).is_some()
}

/// The sequence length the framework trains on: its key, or its default.
fn seq_len(spec: &'static Spec, raw: &RawInputs) -> Option<u64> {
    let field = spec.field_for(super::spec::Concept::SeqLen)?;
    let mut scratch = Vec::new();
    match super::parse::count(field, raw.get(field), &mut scratch) {
        Param::Given(v) if v > 0 => Some(v),
        Param::Absent => spec.default_sequence_len.and_then(|s| s.parse().ok()),
        _ => None,
    }
}

/// See the module documentation. Returns the estimated tokens per second per GPU (from `mfu`).
pub fn run(spec: &'static Spec, raw: &RawInputs, report: &mut Report) -> Option<f64> {
    let mut diags: Vec<Diag> = Vec::new();
    let gpu_fields = read_gpu(raw, report, &mut diags);
    let (training, zero_settings, megatron_settings) = settings(spec, raw, &mut diags);
    merge(report, diags);
    if cfg!(feature = "first") {
        // a first view leaves a link that names a model to the full app (see `names_model`)
        return None;
    }
    let resolved = resolve(spec, raw, report)?;
    let m = &resolved.model;
    let counts = if resolved.swiglu {
        // num_parameters_exclude_embeddings() is num_parameters() less the embedding: counted
        // once here (each count walks every layer)
        let n = m.num_parameters();
        (n, n.and_then(|n| n.checked_sub(m.embedding_params()?)))
    } else {
        report.diag(
            Field::Swiglu,
            Level::Note,
            "without --swiglu dpcalc counts no parameters or FLOPs outside Megatron's own estimator (its counts are for gated MLPs as transformers builds them)",
        );
        (None, None)
    };
    if let (Some(n), Some(ne)) = counts {
        let (Some(_), Some(_)) = (
            set_int(report, Output::NumParameters, n),
            set_int(report, Output::NumParametersExcludeEmbeddings, ne),
        ) else {
            return None;
        };
        report.explain(
            Output::NumParameters,
            "num_parameters = transformers PreTrainedModel.num_parameters() for the architecture (tied weights once)",
            format!("num_parameters = {n} ({}: {} layers × {} hidden)", m.model_type.key(), m.num_hidden_layers, m.hidden_size),
        );
    }
    if let (Some(n), true) = (counts.0, training.lora.is_none()) {
        set_int(report, Output::TrainableParameters, n);
    } else if let Some(l) = &training.lora {
        trainable(report, m, l);
    }
    let seq = seq_len(spec, raw);
    let grid = report.grid;
    if let Some(z) = &zero_settings {
        zero(raw, report, m, counts.0, z);
    }
    if let Some(ms) = &megatron_settings {
        megatron(report, m, resolved.swiglu, seq, grid, ms);
    }
    if let (Some(g), Some(seq)) = (grid, seq) {
        if resolved.swiglu {
            published(
                spec,
                raw,
                report,
                m,
                g,
                seq,
                &training,
                zero_settings.as_ref(),
                megatron_settings.as_ref(),
            );
        }
    }
    let per_token = flops_stage(spec, raw, report, m, resolved.swiglu, seq, grid);
    let (peak, mfu) = gpu_fields;
    let (Some(peak), Some(mfu), Some((fpt, convention))) = (peak, mfu, per_token) else {
        return None;
    };
    let tps = mfu * peak * 1e12 / fpt;
    if !tps.is_finite() || tps <= 0.0 {
        return None;
    }
    report.set(Output::TokensPerSecondPerGpu, Num::Float(tps));
    report.explain(
        Output::TokensPerSecondPerGpu,
        format!("tokens_per_second_per_gpu = mfu × peak ÷ FLOPs per token ({convention}) — an estimate, not a measurement"),
        format!(
            "tokens_per_second_per_gpu = {} × {}e12 ÷ {} = {}",
            fmt_f(mfu),
            fmt_f(peak),
            fmt_f(fpt),
            fmt_f(tps)
        ),
    );
    Some(tps)
}

/// The GPU's memory and peak: sets `gpu_memory_bytes` and `peak_tflops`; returns the peak and
/// the MFU.
fn read_gpu(
    raw: &RawInputs,
    report: &mut Report,
    diags: &mut Vec<Diag>,
) -> (Option<f64>, Option<f64>) {
    let mut rd = Reader { raw, diags };
    let g = match rd.text(Field::Gpu) {
        Param::Given(id) => match gpu(&id) {
            Some(g) => Some(g),
            None => {
                rd.diags.push(Diag::new(
                    Field::Gpu,
                    Level::Error,
                    format!(
                        "dpcalc does not know the GPU “{}”: pick one of {}",
                        super::parse::shorten(&id),
                        GPUS.iter().map(|g| g.id).collect::<Vec<_>>().join(", ")
                    ),
                ));
                None
            }
        },
        _ => None,
    };
    let mem = rd.real(Field::GpuMemoryGib);
    let mfu = match rd.real(Field::Mfu) {
        Param::Given(x) if x > 0.0 && x <= 1.0 => Some(x),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::Mfu,
                Level::Error,
                "mfu is a fraction of the GPU's peak: more than 0, at most 1 (0.4 is a good run)",
            ));
            None
        }
        _ => None,
    };
    let bytes = match mem {
        Param::Given(gib) if gib > 0.0 && gib < 1.0e9 => Some((gib * 1_073_741_824.0) as u128),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::GpuMemoryGib,
                Level::Error,
                "gpu_memory_gib must be more than 0 (and below a billion GiB)",
            ));
            None
        }
        _ => g.map(|g| u128::from(g.memory_gb) * 1_000_000_000),
    };
    if let Some(b) = bytes {
        report.set(Output::GpuMemoryBytes, Num::Int(b as i128));
    }
    if mfu.is_some() && g.is_none() {
        rd.diags.push(Diag::new(
            Field::Gpu,
            Level::Hint,
            "an MFU needs the GPU (its peak FLOPS) to estimate tokens per second",
        ));
    }
    let peak = g.map(|g| {
        report.set(Output::PeakTflops, Num::Int(i128::from(g.peak_tflops)));
        report.explain(
            Output::PeakTflops,
            "peak_tflops = the GPU's dense BF16 peak (torchtitan 0.3.0 get_peak_flops)",
            format!("peak_tflops = {} ({})", g.peak_tflops, g.name),
        );
        g.peak_tflops as f64
    });
    (peak, mfu)
}

/// DeepSpeed's ZeRO estimators, where the framework reads DeepSpeed's keys and stage 2 or 3 is set.
fn zero(raw: &RawInputs, report: &mut Report, m: &Model, total: Option<u128>, s: &ZeroSettings) {
    let (Some(total), Some(largest)) = (total, m.largest_layer_params()) else {
        return;
    };
    let (nodes, gpn) = cluster_shape(raw, report);
    let states = match s.stage {
        2 => memory::zero2_model_states(
            total,
            gpn,
            nodes,
            s.offload_optimizer,
            memory::ADDITIONAL_BUFFER_FACTOR,
        ),
        3 => memory::zero3_model_states(
            total,
            largest,
            gpn,
            nodes,
            s.offload_optimizer,
            s.offload_param,
            s.zero_init,
            memory::ADDITIONAL_BUFFER_FACTOR,
        ),
        _ => return,
    };
    let Some(st) = states else { return };
    let (Some(g), Some(c)) = (
        set_int(report, Output::ZeroModelStatesGpuBytes, st.gpu_mem),
        set_int(report, Output::ZeroModelStatesCpuBytes, st.cpu_mem),
    ) else {
        return;
    };
    let function = if s.stage == 2 {
        format!("estimate_zero2_model_states_mem_needs(total_params={total}, num_gpus_per_node={gpn}, num_nodes={nodes}, cpu_offload={})", py(s.offload_optimizer))
    } else {
        format!(
            "estimate_zero3_model_states_mem_needs(total_params={total}, largest_layer_params={largest}, num_gpus_per_node={gpn}, num_nodes={nodes}, cpu_offload={}, cpu_offload_params={}, zero_init={})",
            py(s.offload_optimizer),
            py(s.offload_param),
            py(s.zero_init)
        )
    };
    report.explain(
        Output::ZeroModelStatesGpuBytes,
        "DeepSpeed 0.19.8's own estimator (model states only: no activations, buffer factor 1.5)",
        format!("{function} → gpu {g} B, cpu {c} B per node"),
    );
}

fn py(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// DeepSpeed's `zero_optimization` settings as typed.
pub struct ZeroSettings {
    pub stage: u64,
    pub offload_optimizer: bool,
    pub offload_param: bool,
    pub zero_init: bool,
}

fn device(rd: &mut Reader, field: Field) -> Option<bool> {
    match rd.text(field) {
        Param::Given(d) => match d.to_ascii_lowercase().as_str() {
            "cpu" | "nvme" => Some(true),
            "none" => Some(false),
            _ => {
                rd.diags.push(Diag::new(
                    field,
                    Level::Error,
                    format!("{} is cpu, nvme or none", field.key()),
                ));
                None
            }
        },
        Param::Invalid => None,
        Param::Absent => Some(false),
    }
}

/// `None`: no stage given, or an invalid value (said at its field).
pub fn zero_settings(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<ZeroSettings> {
    let mut rd = Reader { raw, diags };
    let stage = rd.count(Field::ZeroStage);
    let offload_optimizer = device(&mut rd, Field::OffloadOptimizerDevice);
    let offload_param = device(&mut rd, Field::OffloadParamDevice);
    let zero_init = rd.flag(Field::ZeroInit).or(true);
    let stage = match stage {
        Param::Given(s) if s <= 3 => s,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::ZeroStage,
                Level::Error,
                "zero_optimization.stage is 0, 1, 2 or 3",
            ));
            return None;
        }
        _ => return None,
    };
    Some(ZeroSettings {
        stage,
        offload_optimizer: offload_optimizer?,
        offload_param: offload_param?,
        zero_init: zero_init?,
    })
}

/// `(num_nodes, num_gpus_per_node)` as DeepSpeed's estimators take them.
fn cluster_shape(raw: &RawInputs, report: &Report) -> (u64, u64) {
    let mut scratch = Vec::new();
    let mut rd = Reader {
        raw,
        diags: &mut scratch,
    };
    let nodes = rd.count(Field::Nodes).given().filter(|&n| n > 0);
    let gpn = rd.count(Field::GpusPerNode).given().filter(|&n| n > 0);
    let world = report.count(Output::WorldSize);
    match (nodes, gpn, world) {
        (n, Some(g), _) => (n.unwrap_or(1), g),
        (n, None, Some(w)) if raw.get(Field::WorldSize).trim() != "" => {
            let n = n.unwrap_or(1);
            (n, w / n)
        }
        (n, None, _) => (n.unwrap_or(1), super::cluster::DEFAULT_GPUS_PER_NODE),
    }
}

/// Megatron's memory settings as typed.
pub struct MegatronSettings {
    pub distributed_optimizer: bool,
    pub sequence_parallel: bool,
    pub selective: bool,
    pub full: bool,
    /// `Some` when full recompute has its method.
    pub method_ok: bool,
    pub divisible: u64,
    pub expert_tp: Option<u64>,
}

impl MegatronSettings {
    fn read(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<MegatronSettings> {
        let mut rd = Reader { raw, diags };
        let dist = rd.flag(Field::UseDistributedOptimizer).or(false);
        let sp = rd.flag(Field::SequenceParallel).or(false);
        let granularity = rd.text(Field::RecomputeGranularity);
        let method = rd.text(Field::RecomputeMethod);
        let divisible = match rd.count(Field::MakeVocabSizeDivisibleBy) {
            Param::Given(0) => {
                rd.diags.push(Diag::new(
                    Field::MakeVocabSizeDivisibleBy,
                    Level::Error,
                    "make_vocab_size_divisible_by must be at least 1",
                ));
                None
            }
            p => p.or(128),
        };
        let (selective, full) = match &granularity {
            Param::Given(g) if g == "selective" => (true, false),
            Param::Given(g) if g == "full" => (false, true),
            Param::Given(_) => {
                rd.diags.push(Diag::new(
                    Field::RecomputeGranularity,
                    Level::Error,
                    "--recompute-granularity is full or selective",
                ));
                return None;
            }
            Param::Invalid => return None,
            Param::Absent => (false, false),
        };
        let method_ok = match &method {
            Param::Given(x) if x == "uniform" || x == "block" => true,
            Param::Given(_) => {
                rd.diags.push(Diag::new(
                    Field::RecomputeMethod,
                    Level::Error,
                    "--recompute-method is uniform or block",
                ));
                return None;
            }
            _ => false,
        };
        let expert_tp = super::parse::count(
            Field::ExpertTensorParallelSize,
            raw.get(Field::ExpertTensorParallelSize),
            &mut Vec::new(),
        )
        .given()
        .filter(|&e| e > 0);
        Some(MegatronSettings {
            expert_tp,
            distributed_optimizer: dist?,
            sequence_parallel: sp?,
            selective,
            full,
            method_ok,
            divisible: divisible?,
        })
    }
}

/// Megatron-LM's own `report_theoretical_memory`, and the refusals of building its model.
fn megatron(
    report: &mut Report,
    m: &Model,
    swiglu: bool,
    seq: Option<u64>,
    grid: Option<Grid>,
    s: &MegatronSettings,
) {
    if s.full && !s.method_ok {
        report.refuse(
            Field::RecomputeMethod,
            Refusal::new(
                "Megatron-LM refuses this when it builds the model (TransformerConfig)",
                "ValueError: Using recompute_granularity: full so recompute_method must be \"block\" or \"uniform\"",
            )
            .fix("Add --recompute-method uniform (or block)."),
        );
        return;
    }
    let (dist, sp, selective, divisible) = (
        s.distributed_optimizer,
        s.sequence_parallel,
        s.selective,
        s.divisible,
    );
    let Some(grid) = grid else { return };
    if m.num_attention_heads % grid.tp != 0 {
        report.refuse(
            Field::ModelNumAttentionHeads,
            Refusal::new(
                "Megatron-LM refuses this when it builds the model (TransformerConfig)",
                format!(
                    "ValueError: num_attention_heads ({}) must be a multiple of tensor_model_parallel_size ({}).",
                    m.num_attention_heads, grid.tp
                ),
            )
            .fix("Pick a tensor parallel size that divides the heads."),
        );
        return;
    }
    if m.num_hidden_layers % grid.pp != 0 {
        report.refuse(
            Field::NumLayers,
            Refusal::new(
                "Megatron-LM refuses this in validate_args",
                "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size",
            )
            .fix("Pick a pipeline parallel size that divides the layers."),
        );
        return;
    }
    if sp && grid.tp == 1 {
        report.diag(
            Field::SequenceParallel,
            Level::Note,
            "Megatron turns it off: “Disabling sequence parallelism because tensor model parallelism is disabled” (validate_args)",
        );
    }
    let (Some(seq), Some(mbs), Some(nmb)) = (
        seq,
        report.count(Output::GlobalBatchSize).and_then(|g| {
            let per = report
                .count(Output::NumMicrobatches)?
                .checked_mul(grid.dp)?;
            (per > 0 && g % per == 0).then(|| g / per)
        }),
        report.count(Output::NumMicrobatches),
    ) else {
        return;
    };
    let Some(vocab) = flops::megatron_padded_vocab_size(m.vocab_size, divisible, grid.tp) else {
        return;
    };
    let Some(vocab64) = u64::try_from(vocab).ok() else {
        return;
    };
    report.set(Output::PaddedVocabSize, Num::Int(vocab as i128));
    report.explain(
        Output::PaddedVocabSize,
        "padded_vocab_size = vocab_size rounded up to a multiple of make_vocab_size_divisible_by × TP (Megatron's _vocab_size_with_padding)",
        format!("padded_vocab_size = ceil({} / ({divisible} × {})) × {} = {vocab}", m.vocab_size, grid.tp, divisible * grid.tp),
    );
    if m.is_mla() {
        report.diag(
            Field::ModelId,
            Level::Note,
            "Megatron's theoretical memory is not computed for multi-latent attention (DeepSeek-V3) here: no recorded run covers it",
        );
        return;
    }
    let moe = m.is_moe();
    let pattern = if m.model_type.is_deepseek() {
        (0..m.num_hidden_layers)
            .map(|i| u8::from(m.is_moe_layer(i)))
            .collect()
    } else {
        Vec::new()
    };
    let Some(kv_channels) = m.resolved_head_dim() else {
        return;
    };
    let args = memory::MegatronArgs {
        num_layers: m.num_hidden_layers,
        hidden_size: m.hidden_size,
        ffn_hidden_size: m.intermediate_size,
        num_attention_heads: m.num_attention_heads,
        num_query_groups: (m.num_key_value_heads != m.num_attention_heads)
            .then_some(m.num_key_value_heads),
        kv_channels,
        swiglu,
        rms_norm: true,
        add_bias_linear: false,
        untie_embeddings_and_output_weights: !m.tie_word_embeddings,
        multi_latent_attention: false,
        num_experts: moe.then_some(m.num_experts),
        moe_ffn_hidden_size: if moe {
            m.expert_intermediate_size()
        } else {
            m.intermediate_size
        },
        moe_shared_expert_intermediate_size: (moe && m.n_shared_experts > 0).then(|| {
            m.n_shared_experts
                .saturating_mul(m.expert_intermediate_size())
        }),
        moe_layer_pattern: pattern,
        padded_vocab_size: vocab64,
        tensor_model_parallel_size: grid.tp,
        pipeline_model_parallel_size: grid.pp,
        virtual_pipeline_model_parallel_size: None,
        expert_model_parallel_size: grid.ep,
        // --expert-tensor-parallel-size (TP unless given; the rules check it)
        expert_tensor_parallel_size: s.expert_tp.unwrap_or(grid.tp),
        world_size: grid.world,
        data_parallel_size: grid.dp,
        use_distributed_optimizer: dist,
        seq_length: seq,
        micro_batch_size: mbs,
        sequence_parallel: sp && grid.tp > 1,
        recompute_selective: selective,
        num_microbatches: nmb,
    };
    let Some(mem) = memory::megatron_theoretical_memory(&args) else {
        return;
    };
    report.set(
        Output::WeightAndOptimizerMemoryMb,
        Num::Float(mem.weight_and_optimizer_memory_mb),
    );
    report.set(
        Output::ActivationMemoryMb,
        Num::Float(mem.activation_memory_mb),
    );
    report.set(Output::TotalMemoryMb, Num::Float(mem.total_memory_mb));
    report.explain(
        Output::TotalMemoryMb,
        "Megatron-LM 0.19.2 report_theoretical_memory: weights and optimizer of the first stage + activations (MB = bytes / 2^20); it does not see CP, full recompute, or MoE/MLA activations",
        format!(
            "{} MB + {} MB = {} MB ({} branch)",
            fmt_f(mem.weight_and_optimizer_memory_mb),
            fmt_f(mem.activation_memory_mb),
            fmt_f(mem.total_memory_mb),
            if mem.uses_sp_branch { "sequence parallel + selective recompute" } else { "without sequence parallel" }
        ),
    );
}

/// The four FLOPs conventions; returns the framework's own per-token figure and its name.
fn flops_stage(
    spec: &'static Spec,
    raw: &RawInputs,
    report: &mut Report,
    m: &Model,
    swiglu: bool,
    seq: Option<u64>,
    grid: Option<Grid>,
) -> Option<(f64, &'static str)> {
    if !swiglu {
        return None;
    }
    let seq = seq?;
    let tp = grid.map_or(1, |g| g.tp);
    let mut scratch = Vec::new();
    let divisible = super::parse::count(
        Field::MakeVocabSizeDivisibleBy,
        raw.get(Field::MakeVocabSizeDivisibleBy),
        &mut scratch,
    )
    .given()
    .filter(|&d| d > 0 && spec.fields().any(|f| f == Field::MakeVocabSizeDivisibleBy))
    .unwrap_or(128);
    let hf = flops::hf(m).and_then(|v| i128::try_from(v).ok());
    let meg = flops::megatron(m, seq, divisible, tp);
    let tt = flops::torchtitan(m, seq).and_then(|v| i128::try_from(v).ok());
    let nt = flops::nanotron(m, seq);
    if let Some(v) = hf {
        report.set(Output::FlopsPerTokenHf, Num::Int(v));
    }
    if let Some(v) = meg {
        report.set(Output::FlopsPerTokenMegatron, Num::Float(v));
    }
    if let Some(v) = tt {
        report.set(Output::FlopsPerTokenTorchtitan, Num::Int(v));
    }
    if let Some(v) = nt {
        report.set(Output::FlopsPerTokenNanotron, Num::Float(v));
    }
    let (own, name, rule): (Option<Num>, &str, &str) = match spec.fit.flops {
        FlopsConvention::Hf => (hf.map(Num::Int), "HF Trainer", "transformers Trainer.floating_point_ops ÷ tokens = 6 × num_parameters(exclude_embeddings=True): no attention term, every expert counted"),
        FlopsConvention::Megatron => (meg.map(Num::Float), "Megatron-LM", "megatron-core 0.19.2 num_floating_point_operations ÷ tokens: causal-halved attention, logits over the padded vocabulary (depends on TP)"),
        FlopsConvention::Torchtitan => (tt.map(Num::Int), "torchtitan", "torchtitan 0.3.0 get_nparams_and_flops: 6 × matmul parameters (active experts) + 6·L·heads·2·head_dim·seq, no causal halving"),
        FlopsConvention::Nanotron => (nt.map(Num::Float), "nanotron", "nanotron get_flops ÷ tokens (hidden ÷ heads as the head size, no norms)"),
    };
    let Some(own) = own else {
        report.diag(
            spec.fit.model_key,
            Level::Note,
            format!("{name}'s FLOPs counter has no model of this family; the other conventions are listed"),
        );
        return None;
    };
    report.set(Output::FlopsPerToken, own);
    report.explain(
        Output::FlopsPerToken,
        format!("flops_per_token = {rule}"),
        format!(
            "at {seq} tokens per sequence: HF {} · Megatron {} · torchtitan {} · nanotron {} (HF counts no attention and every expert; Megatron halves attention for causality and adds the padded vocabulary; torchtitan counts the active experts and full attention; nanotron leaves out the norms)",
            hf.map_or("—".into(), |v| v.to_string()),
            meg.map_or("—".into(), fmt_f),
            tt.map_or("—".into(), |v| v.to_string()),
            nt.map_or("—".into(), fmt_f),
        ),
    );
    Some((own.to_f64(), name))
}

/// axolotl's LoRA settings.
pub struct Lora {
    pub r: u64,
    /// `lora_target_linear`.
    pub linear: bool,
    /// `adapter: qlora` (a 4-bit base).
    pub qlora: bool,
    /// `lora_target_modules`.
    pub modules: Vec<String>,
}

/// The training settings the memory estimate reads, as typed.
pub struct Training {
    pub recompute: Recompute,
    pub flash_attention: bool,
    pub lora: Option<Lora>,
    pub optimizer_bytes_per_param: u64,
    /// An `fsdp_config` block is given (axolotl): FSDP shards the model.
    pub fsdp: Option<bool>,
    /// axolotl's `fsdp_config.offload_params` (FSDP2's `CPUOffloadPolicy`: parameters, gradients
    /// and optimizer states on the CPU).
    pub fsdp_offload: bool,
}

/// Bytes of optimizer state per trained parameter for an optimizer name (transformers'
/// `OptimizerNames`): fp32 master weights plus the states; `None` for a name not recognised.
fn optimizer_bytes(name: &str) -> Option<u64> {
    let n = name.to_ascii_lowercase();
    Some(if n.contains("8bit") {
        6 // 4 B master + two 1-byte states
    } else if n.starts_with("adamw") || n.starts_with("adam") || n.contains("lamb") {
        12
    } else if n.contains("lion") || n.starts_with("sgd") || n.contains("rmsprop") {
        8
    } else if n.contains("adafactor") {
        4
    } else {
        return None;
    })
}

/// The memory settings as typed, read once for the report and for the explorer's rows: the
/// training settings, DeepSpeed's keys where the framework reads them, Megatron's where it is
/// Megatron (whose `--recompute-granularity` is the training's recompute).
fn settings(
    spec: &'static Spec,
    raw: &RawInputs,
    diags: &mut Vec<Diag>,
) -> (Training, Option<ZeroSettings>, Option<MegatronSettings>) {
    let mut training = Training::read(spec, raw, diags);
    let zero = matches!(spec.fit.sharding, Sharding::Zero | Sharding::ZeroOrFsdp)
        .then(|| zero_settings(raw, diags))
        .flatten();
    let megatron = (spec.fit.flops == FlopsConvention::Megatron)
        .then(|| MegatronSettings::read(raw, diags))
        .flatten();
    if let Some(m) = &megatron {
        if m.full {
            training.recompute = Recompute::Full;
        } else if m.selective {
            training.recompute = Recompute::Selective;
        }
    }
    (training, zero, megatron)
}

impl Training {
    fn read(spec: &'static Spec, raw: &RawInputs, diags: &mut Vec<Diag>) -> Training {
        let has = |f: Field| spec.fields().any(|x| x == f);
        let mut rd = Reader { raw, diags };
        let mut recompute = Recompute::None;
        if has(Field::GradientCheckpointing)
            && rd.flag(Field::GradientCheckpointing).or(false) == Some(true)
        {
            recompute = Recompute::Full;
        }
        if has(Field::RecomputeLayer) && rd.flag(Field::RecomputeLayer).or(false) == Some(true) {
            recompute = Recompute::Full;
        }
        if has(Field::ActivationCheckpointMode) {
            recompute = match rd.text(Field::ActivationCheckpointMode) {
                Param::Given(m) if m == "none" => Recompute::None,
                Param::Given(m) if m == "full" => Recompute::Full,
                Param::Given(m) if m == "selective" || m == "memory_budget" => Recompute::Selective,
                Param::Given(_) => {
                    rd.diags.push(Diag::new(
                        Field::ActivationCheckpointMode,
                        Level::Error,
                        "activation_checkpoint.mode is none, selective, full or memory_budget",
                    ));
                    Recompute::Selective
                }
                _ => Recompute::Selective,
            };
        }
        // eager attention materialises the scores; sdpa, flash and flex (everyone's default) do
        // not (the framework's rules read and check the key)
        let flash = raw.get(Field::AttnImplementation).trim() != "eager";
        let mut lora = None;
        if has(Field::Adapter) {
            let adapter = rd.text(Field::Adapter);
            let r = rd.count(Field::LoraR);
            let linear = rd.flag(Field::LoraTargetLinear).or(false);
            let modules = rd.text(Field::LoraTargetModules);
            match adapter {
                Param::Given(a) if a == "lora" || a == "qlora" => {
                    if let (Some(r), Some(linear), false) =
                        (r.or(8), linear, matches!(modules, Param::Invalid))
                    {
                        let modules = match modules {
                            Param::Given(m) => m
                                .trim_matches(|c| c == '[' || c == ']')
                                .split(',')
                                .map(|x| {
                                    x.trim().trim_matches(|c| c == '"' || c == '\'').to_string()
                                })
                                .filter(|x| !x.is_empty())
                                .collect(),
                            _ => Vec::new(),
                        };
                        lora = Some(Lora {
                            r,
                            linear,
                            qlora: a == "qlora",
                            modules,
                        });
                    }
                }
                Param::Given(_) => rd.diags.push(Diag::new(
                    Field::Adapter,
                    Level::Error,
                    "adapter is lora or qlora (leave it empty for a full fine-tune)",
                )),
                _ => {}
            }
        }
        let mut optimizer_bytes_per_param = 12;
        for f in [Field::Optimizer, Field::Optim] {
            if !has(f) {
                continue;
            }
            if let Param::Given(name) = rd.text(f) {
                match optimizer_bytes(&name) {
                    Some(b) => optimizer_bytes_per_param = b,
                    None => rd.diags.push(Diag::new(
                        f,
                        Level::Note,
                        format!("dpcalc does not know the optimizer “{}”: the memory estimate assumes AdamW's 12 bytes per trained parameter", super::parse::shorten(&name)),
                    )),
                }
            }
        }
        let fsdp = has(Field::FsdpReshardAfterForward).then(|| {
            // axolotl's `bool(cfg.fsdp or cfg.fsdp_config)` (rules.rs `is_fsdp`): a key of the
            // fsdp_config block; a top-level fsdp_version alone is not FSDP
            let block = [
                Field::FsdpConfigFsdpVersion,
                Field::FsdpStateDictType,
                Field::FsdpFinalStateDictType,
                Field::FsdpReshardAfterForward,
                Field::FsdpOffloadParams,
                Field::FsdpShardingStrategy,
            ]
            .iter()
            .any(|&f| !raw.get(f).trim().is_empty());
            let reshard = super::parse::flag(
                Field::FsdpReshardAfterForward,
                raw.get(Field::FsdpReshardAfterForward),
                &mut Vec::new(),
            )
            .or(true)
            .unwrap_or(true);
            block.then_some(reshard)
        });
        let fsdp_offload = has(Field::FsdpOffloadParams)
            && super::parse::flag(
                Field::FsdpOffloadParams,
                raw.get(Field::FsdpOffloadParams),
                &mut Vec::new(),
            )
            .given()
                == Some(true);
        Training {
            recompute,
            flash_attention: flash,
            lora,
            optimizer_bytes_per_param,
            fsdp: fsdp.flatten(),
            fsdp_offload,
        }
    }
}

/// Micro batch per GPU: the global batch over dp × the micro batches of a step.
fn micro_batch(report: &Report, dp: u64) -> Option<u64> {
    // DeepSpeed derives it itself (its batch check may count the whole world, not dp)
    if let Some(m) = report.count(Output::TrainMicroBatchSizePerGpu) {
        return Some(m).filter(|&m| m > 0);
    }
    let global = report.count(Output::GlobalBatchSize)?;
    let accum = report
        .count(Output::NumMicrobatches)
        .or_else(|| report.count(Output::GradientAccumulationSteps))
        .unwrap_or(1);
    // torchtitan splits each local batch into the pipeline's microbatches
    let pipeline = report.count(Output::NumPpMicrobatches).unwrap_or(1);
    let per = dp.checked_mul(accum)?.checked_mul(pipeline)?;
    (per > 0 && global % per == 0)
        .then(|| global / per)
        .filter(|&m| m > 0)
}

/// What the published estimate reads besides the layout (the grid, the micro batch per GPU and
/// the data-parallel shard size): the same for the current inputs ([`published`]) and for every
/// layout the explorer lists ([`MemoryContext::row_memory`]).
struct Setup<'a> {
    sharding: Sharding,
    seq: u64,
    training: &'a Training,
    zero: Option<&'a ZeroSettings>,
    meg: Option<&'a MegatronSettings>,
    /// LoRA's trainable parameters; `None`: every parameter trains.
    trainable: Option<u128>,
}

/// LoRA's trainable parameters as the report counted them: `Some(None)` for a full fine-tune,
/// `None` when LoRA is set but its count is not known (no estimate then).
fn trainable_of(report: &Report, t: &Training) -> Option<Option<u128>> {
    match &t.lora {
        None => Some(None),
        Some(_) => report
            .count(Output::TrainableParameters)
            .map(|n| Some(u128::from(n))),
    }
}

/// axolotl's typed `dp_shard_size` (a positive count), the FSDP shard group.
fn typed_dp_shard(raw: &RawInputs) -> Option<u64> {
    super::parse::count(
        Field::DpShardSize,
        raw.get(Field::DpShardSize),
        &mut Vec::new(),
    )
    .given()
    .filter(|&s| s > 0)
}

/// The data-parallel shard size the framework reads for the current inputs: torchtitan's
/// `data_parallel_shard_degree` as its rules resolved it, axolotl's typed `dp_shard_size`.
fn dp_shard(spec: &'static Spec, raw: &RawInputs, report: &Report) -> Option<u64> {
    match spec.fit.sharding {
        Sharding::Fsdp => report.count(Output::DataParallelShardDegree),
        _ => typed_dp_shard(raw),
    }
}

/// The one place a [`Plan`] is built: the setup on grid `g` with `micro` samples per GPU per
/// micro step and the data-parallel shard size `dp_shard` (see [`dp_shard`]; `None`: all of dp).
/// Returns the plan and how the model states are sharded, in words.
fn plan(s: &Setup, g: Grid, micro: u64, dp_shard: Option<u64>) -> (Plan, &'static str) {
    let t = s.training;
    // FSDP's offload applies where FSDP shards (not beside DeepSpeed's keys)
    let fsdp_offload = s.zero.is_none()
        && t.fsdp.is_some()
        && t.fsdp_offload
        && matches!(s.sharding, Sharding::Zero | Sharding::ZeroOrFsdp);
    let (sharding, shard, how) = match s.sharding {
        Sharding::Zero | Sharding::ZeroOrFsdp => match (s.zero, t.fsdp) {
            (Some(z), _) => (
                [
                    estimate::Sharding::Replicated,
                    estimate::Sharding::Zero1,
                    estimate::Sharding::Zero2,
                    estimate::Sharding::Zero3,
                ][z.stage.min(3) as usize],
                g.dp,
                "ZeRO over the data-parallel ranks",
            ),
            // accelerate 1.15.0's mesh as axolotl 0.21.0 builds it (run): FSDP shards over the
            // flattened `dp_shard_cp` dimension, dp_shard × cp (replicated over dp_replicate)
            (None, Some(reshard)) => (
                if reshard {
                    estimate::Sharding::Zero3
                } else {
                    estimate::Sharding::Zero2
                },
                dp_shard.unwrap_or(g.dp).saturating_mul(g.cp),
                if t.fsdp_offload {
                    "FSDP over dp_shard × cp, offloaded to the CPU"
                } else {
                    "FSDP over dp_shard × cp"
                },
            ),
            (None, None) => (estimate::Sharding::Replicated, g.dp, "replicated (DDP)"),
        },
        Sharding::Fsdp => (
            estimate::Sharding::Zero3,
            dp_shard.unwrap_or(g.dp).saturating_mul(g.cp),
            "FSDP2 over dp_shard × cp",
        ),
        Sharding::DistributedOptimizer => {
            if s.meg.is_some_and(|m| m.distributed_optimizer) {
                (
                    estimate::Sharding::DistributedOptimizer,
                    g.dp.saturating_mul(g.cp),
                    "distributed optimizer over dp × cp",
                )
            } else {
                (estimate::Sharding::Replicated, g.dp, "replicated optimizer")
            }
        }
        Sharding::Replicated => (
            estimate::Sharding::Replicated,
            g.dp,
            "replicated (ZeRO stage 0)",
        ),
    };
    let plan = Plan {
        tp: g.tp,
        pp: g.pp,
        cp: g.cp,
        sp: g.sp,
        ep: g.ep,
        shard: shard.max(1),
        sharding,
        offload_optimizer: s.zero.is_some_and(|z| z.offload_optimizer) || fsdp_offload,
        offload_param: s.zero.is_some_and(|z| z.offload_param) || fsdp_offload,
        micro_batch: micro,
        seq_len: s.seq,
        recompute: t.recompute,
        flash_attention: t.flash_attention,
        sequence_parallel: s.meg.is_some_and(|m| m.sequence_parallel) && g.tp > 1,
        weight_bits: if t.lora.as_ref().is_some_and(|l| l.qlora) {
            4
        } else {
            16
        },
        trainable: s.trainable,
        optimizer_bytes_per_param: t.optimizer_bytes_per_param,
    };
    (plan, how)
}

/// The memory per GPU by published formulas (`estimate.rs`), as this framework shards it, and
/// whether it fits the GPU.
#[allow(clippy::too_many_arguments)]
fn published(
    spec: &'static Spec,
    raw: &RawInputs,
    report: &mut Report,
    m: &Model,
    g: Grid,
    seq: u64,
    t: &Training,
    zero: Option<&ZeroSettings>,
    meg: Option<&MegatronSettings>,
) {
    let Some(micro) = micro_batch(report, g.dp) else {
        return;
    };
    let Some(trainable) = trainable_of(report, t) else {
        return;
    };
    let setup = Setup {
        sharding: spec.fit.sharding,
        seq,
        training: t,
        zero,
        meg,
        trainable,
    };
    let (plan, how) = plan(&setup, g, micro, dp_shard(spec, raw, report));
    let Some(e) = estimate::estimate(m, &plan) else {
        return;
    };
    let Some(total) = e.total() else { return };
    for (o, v) in [
        (Output::MemoryPerGpuBytes, total),
        (Output::WeightsBytes, e.weights),
        (Output::GradientsBytes, e.gradients),
        (Output::OptimizerBytes, e.optimizer),
        (Output::ActivationBytes, e.activations),
    ] {
        if set_int(report, o, v).is_none() {
            return;
        }
    }
    report.explain(
        Output::MemoryPerGpuBytes,
        "memory_per_gpu = weights + gradients + optimizer states (Rajbhandari et al. 2019, ZeRO) + activations (Korthikanti et al. 2022, Table 2): a published-formula estimate, not a measurement; CUDA context, fragmentation and communication buffers are not counted",
        format!(
            "{how}, shard {}, micro batch {micro} × {seq} tokens, recompute {:?}, {} attention: {} + {} + {} + {} = {total} B",
            plan.shard,
            plan.recompute,
            if plan.flash_attention { "flash/sdpa" } else { "eager" },
            e.weights,
            e.gradients,
            e.optimizer,
            e.activations
        ),
    );
    let Some(Num::Int(cap)) = report.value(Output::GpuMemoryBytes) else {
        return;
    };
    let cap = cap as u128;
    if total <= cap {
        return;
    }
    let over = total - cap;
    let fix = match estimate::nearest_fit(m, &plan, cap) {
        Some((c, new_total)) => {
            let what = match c {
                Change::Zero3 => "ZeRO-3 / FSDP full shard".to_string(),
                Change::Recompute(Recompute::Full) => {
                    "full recompute (gradient checkpointing)".to_string()
                }
                Change::Recompute(_) => "selective recompute".to_string(),
                Change::MicroBatch(b) => format!("micro batch {b}"),
                Change::MoreTp(tp) => format!("tensor parallel size {tp}"),
            };
            format!(
                "The nearest change that fits: {what} (estimated {}).",
                gib(new_total)
            )
        }
        None => "No single change fits: add GPUs, offload to CPU, or use LoRA.".to_string(),
    };
    report.diag(
        Field::Gpu,
        Level::Warning,
        format!(
            "does not fit: the estimate is {} per GPU, {} more than the GPU's {}. {fix}",
            gib(total),
            gib(over),
            gib(cap)
        ),
    );
}

/// Bytes in GiB, three significant digits.
pub fn gib(bytes: u128) -> String {
    let g = bytes as f64 / 1_073_741_824.0;
    if g >= 100.0 {
        format!("{g:.0} GiB")
    } else if g >= 10.0 {
        format!("{g:.1} GiB")
    } else {
        format!("{g:.2} GiB")
    }
}

/// LoRA's trainable parameters as PEFT counts them for the LoraConfig axolotl builds, or PEFT's
/// refusal at the key it concerns.
fn trainable(report: &mut Report, m: &Model, l: &Lora) {
    let modules: Vec<&str> = l.modules.iter().map(String::as_str).collect();
    let target = LoraTarget {
        linear: l.linear,
        modules: &modules,
    };
    match lora_trainable_parameters(m, l.r, target) {
        Ok(n) => {
            if set_int(report, Output::TrainableParameters, n).is_some() {
                report.explain(
                    Output::TrainableParameters,
                    "trainable_parameters = PEFT 0.21 get_nb_trainable_parameters() for axolotl 0.21.0's LoraConfig (r·(in + out) per targeted module)",
                    format!(
                        "r = {}, {}{}: {n}",
                        l.r,
                        if l.linear { "every linear layer but lm_head" } else { "" },
                        if modules.is_empty() { String::new() } else { format!("{}{}", if l.linear { " + " } else { "" }, modules.join(", ")) }
                    ),
                );
            }
        }
        Err(LoraError::Overflow) => {}
        Err(e) => {
            let field = match e {
                LoraError::Rank => Field::LoraR,
                LoraError::NoTargets => Field::LoraTargetLinear,
                _ => Field::LoraTargetModules,
            };
            if let LoraError::Path(_) = e {
                report.diag(field, Level::Error, e.to_string());
                return;
            }
            let class = match e {
                LoraError::NoTargets | LoraError::NotFound(_) => "NoMatchingPeftModuleError",
                _ => "ValueError",
            };
            let (by, says) = (
                "PEFT refuses this in get_peft_model",
                format!("{class}: {e}"),
            );
            report.refuse(
                field,
                Refusal::new(by, says).fix("Set lora_target_linear: true, or list module names the model has (q_proj, k_proj, v_proj, o_proj, …)."),
            );
        }
    }
}

/// The published estimate for the layouts the explorer lists: what [`published`] reads for the
/// current inputs (the model, resolved once; the training settings; LoRA's count; the sequence;
/// the micro batch per GPU), held so that a layout's memory is arithmetic on its grid alone.
pub struct MemoryContext {
    model: Model,
    /// The model's parameter counts, counted once.
    params: estimate::Params,
    sharding: Sharding,
    seq: u64,
    training: Training,
    zero: Option<ZeroSettings>,
    meg: Option<MegatronSettings>,
    trainable: Option<u128>,
    /// axolotl's typed `dp_shard_size`.
    typed_shard: Option<u64>,
    /// torchtitan's data-parallel replicas (`dp ÷ data_parallel_shard_degree` of the current
    /// inputs; 1 elsewhere).
    replicate: u64,
    /// The current inputs' samples per GPU per micro step (every layout keeps it).
    pub micro: u64,
}

impl MemoryContext {
    /// From the current inputs and their report (`Framework::compute`); `None` when the report
    /// has no estimate to share (no model, no grid, no sequence or micro batch, LoRA without its
    /// count, or a plain MLP under Megatron).
    pub fn new(spec: &'static Spec, raw: &RawInputs, base: &Report) -> Option<MemoryContext> {
        let g = base.grid?;
        let micro = micro_batch(base, g.dp)?;
        let seq = seq_len(spec, raw)?;
        let mut diags = Vec::new();
        let (training, zero, meg) = settings(spec, raw, &mut diags);
        let trainable = trainable_of(base, &training)?;
        let resolved = resolve(spec, raw, &mut Report::default())?;
        if !resolved.swiglu {
            return None;
        }
        let replicate = match (spec.fit.sharding, dp_shard(spec, raw, base)) {
            (Sharding::Fsdp, Some(s)) if s > 0 && g.dp % s == 0 => g.dp / s,
            _ => 1,
        };
        Some(MemoryContext {
            params: estimate::Params::of(&resolved.model)?,
            model: resolved.model,
            sharding: spec.fit.sharding,
            seq,
            training,
            zero,
            meg,
            trainable,
            typed_shard: typed_dp_shard(raw),
            replicate,
            micro,
        })
    }

    /// The memory per GPU of a layout: its grid (`dp` = the data-parallel size the batch
    /// counts) at `micro` samples per GPU per micro step. Its data-parallel shard is what the
    /// explorer's row sets: torchtitan's `data_parallel_shard_degree = -1` (the rest: dp over the
    /// replicas; `None` when they do not divide it), axolotl's `dp_shard_size` = dp ÷ ep under
    /// expert parallelism, the typed one otherwise.
    pub fn row_memory(&self, grid: Grid, micro: u64) -> Option<u128> {
        let dp_shard = match self.sharding {
            // a row whose data-parallel size the replicas do not divide is refused: no estimate
            Sharding::Fsdp if grid.dp % self.replicate != 0 => return None,
            Sharding::Fsdp => Some(grid.dp / self.replicate),
            _ if grid.ep > 1 && self.training.fsdp.is_some() => Some(grid.dp / grid.ep),
            _ => self.typed_shard,
        };
        let setup = Setup {
            sharding: self.sharding,
            seq: self.seq,
            training: &self.training,
            zero: self.zero.as_ref(),
            meg: self.meg.as_ref(),
            trainable: self.trainable,
        };
        let (plan, _) = plan(&setup, grid, micro, dp_shard);
        estimate::estimate_with(&self.model, self.params, &plan)?.total()
    }
}
