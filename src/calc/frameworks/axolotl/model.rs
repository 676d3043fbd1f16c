//! axolotl's part of the model stage: its settings as typed (LoRA and QLoRA, the optimizer,
//! `attn_implementation`, the `fsdp_config` block and `dp_shard_size`, DeepSpeed's keys),
//! published in the plan, and LoRA's trainable parameters as PEFT counts them for the
//! LoraConfig axolotl builds, with PEFT's refusals.

use crate::calc::lora::{lora_trainable_parameters, LoraError, LoraTarget};
use crate::calc::parse::{self, settings, Reader};
use crate::calc::plan::{FsdpRows, Lora, NamedModel, Settings, Sharding};
use crate::calc::spec::AsBuilt;
use crate::calc::{Diag, Field, Level, Num, Output, Param, RawInputs, Refusal, Report};

/// The model stage's settings (`Spec::fit.settings`).
pub fn settings(raw: &RawInputs, report: &mut Report) {
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let recompute = settings::gradient_checkpointing(raw, &mut diags);
    // eager attention materialises the scores; sdpa, flash and flex (the default) do not (the
    // rules read and check the key)
    let flash_attention = raw.get(Field::AttnImplementation).trim() != "eager";
    let lora = lora(raw, &mut diags);
    let optimizer_bytes_per_param = settings::optimizer(Field::Optimizer, raw, &mut diags);
    let fsdp = fsdp_reshard(raw);
    let offload = parse::flag(
        Field::FsdpOffloadParams,
        raw.get(Field::FsdpOffloadParams),
        &mut Vec::new(),
    )
    .given()
        == Some(true);
    let zero = settings::zero(raw, &mut diags);
    let sharding = match (zero, fsdp) {
        (Some(z), _) => Sharding::Zero(z),
        (None, Some(reshard_after_forward)) => Sharding::Fsdp {
            name: "FSDP",
            dp_shard: parse::count(
                Field::DpShardSize,
                raw.get(Field::DpShardSize),
                &mut Vec::new(),
            )
            .given()
            .filter(|&s| s > 0),
            reshard_after_forward,
            offload,
            rows: FsdpRows::ExpertsSplit,
        },
        (None, None) => Sharding::Replicated {
            words: "replicated (DDP)",
        },
    };
    let precision = bf16(raw, &mut diags);
    // a full fine-tune of the bf16-loaded model without DeepSpeed (whose bf16 optimizer keeps
    // fp32 master weights) or FSDP (accelerate upcasts the sharded parameters to fp32); PEFT
    // upcasts LoRA's adapters to fp32 (`autocast_adapter_dtype=True`), so their states stay fp32
    let pure = precision == Some(Precision::Bf16)
        && lora.is_none()
        && matches!(sharding, Sharding::Replicated { .. });
    let optimizer_bytes_per_param = if pure {
        settings::states_in_param_dtype(optimizer_bytes_per_param)
    } else {
        optimizer_bytes_per_param
    };
    let mut s = Settings {
        gpu,
        recompute,
        flash_attention,
        lora,
        optimizer_bytes_per_param,
        optimizer_8bit: settings::optimizer_8bit(Field::Optimizer, raw),
        sharding,
        // the Trainer runs the model eagerly unless `torch_compile` (not read for axolotl, whose
        // "auto" depends on the torch release) is set
        fusion: crate::calc::plan::Fusion::Eager,
        ..Settings::default()
    };
    if precision == Some(Precision::Fp32) {
        // fp32 weights are the optimizer's own (no master copy), fp32 gradients
        s.memory.fp32_params = true;
        s.memory.fp32_grads = true;
    }
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
}

/// The precision axolotl loads the model in (`resolve_dtype` in `utils/config/__init__.py`:
/// `cfg.torch_dtype = torch.bfloat16` when `bf16` or `bfloat16`, else float32 without fp16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Precision {
    /// `bf16: true`, or `auto` (bf16 on every GPU dpcalc knows: Ampere and later, MI300X).
    Bf16,
    /// `bf16: false`: the model in fp32.
    Fp32,
}

/// `bf16` as axolotl's schema reads it (`Literal["auto"] | bool | None`); `None` when absent
/// (dpcalc then keeps its mixed-precision count, fp32 master weights, as before the key was an
/// input) or invalid (said at the field). `full` is refused as the schema refuses it, although
/// the description and the trainer builder (`bf16_full_eval`) still name it: checked at
/// axolotl-ai-cloud/axolotl@067b021c8b87a9e5e380b9173c704cf7340e30f5
/// (`utils/schemas/config.py`, `core/builders/base.py`) with pydantic 2.13's validation.
fn bf16(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<Precision> {
    let mut rd = Reader { raw, diags };
    let text = match rd.text(Field::Bf16) {
        Param::Given(t) => t,
        _ => return None,
    };
    if text.eq_ignore_ascii_case("auto") {
        return Some(Precision::Bf16);
    }
    match parse::flag(Field::Bf16, &text, &mut Vec::new()) {
        Param::Given(true) => Some(Precision::Bf16),
        Param::Given(false) => {
            rd.diags.push(Diag::new(
                Field::Bf16,
                Level::Note,
                "bf16: false trains in fp32: the model states are counted in fp32, the activations still in 16 bits (dpcalc has no fp32 activations), so the memory estimate is low",
            ));
            Some(Precision::Fp32)
        }
        _ => {
            rd.diags.push(Diag::new(
                Field::Bf16,
                Level::Error,
                format!(
                    "bf16 is true, false or auto (axolotl's schema refuses {}: Input should be 'auto')",
                    parse::shorten(&text)
                ),
            ));
            None
        }
    }
}

/// `Some(reshard_after_forward)` when FSDP shards the model: axolotl's
/// `bool(cfg.fsdp or cfg.fsdp_config)` (`is_fsdp` in rules/grid.rs), a key of the `fsdp_config` block (a
/// top-level `fsdp_version` alone is not FSDP).
fn fsdp_reshard(raw: &RawInputs) -> Option<bool> {
    let block = [
        Field::FsdpConfigFsdpVersion,
        Field::FsdpStateDictType,
        Field::FsdpFinalStateDictType,
        Field::FsdpReshardAfterForward,
        Field::FsdpOffloadParams,
        Field::FsdpShardingStrategy,
    ]
    .iter()
    .any(|&f| raw.is_given(f));
    let reshard = parse::flag(
        Field::FsdpReshardAfterForward,
        raw.get(Field::FsdpReshardAfterForward),
        &mut Vec::new(),
    )
    .or(true)
    .unwrap_or(true);
    block.then_some(reshard)
}

/// `adapter: lora | qlora` with its rank and targets (`None`: a full fine-tune, or unreadable).
fn lora(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<Lora> {
    let mut rd = Reader { raw, diags };
    let adapter = rd.text(Field::Adapter);
    let r = rd.count(Field::LoraR);
    let linear = rd.flag(Field::LoraTargetLinear).or(false);
    let modules = rd.text(Field::LoraTargetModules);
    match adapter {
        Param::Given(a) if a == "lora" || a == "qlora" => {
            let (Some(r), Some(linear), false) =
                (r.or(8), linear, matches!(modules, Param::Invalid))
            else {
                return None;
            };
            let modules = match modules {
                Param::Given(m) => m
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(',')
                    .map(|x| x.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                    .filter(|x| !x.is_empty())
                    .collect(),
                _ => Vec::new(),
            };
            Some(Lora {
                r,
                linear,
                qlora: a == "qlora",
                modules,
            })
        }
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::Adapter,
                Level::Error,
                "adapter is lora or qlora (leave it empty for a full fine-tune)",
            ));
            None
        }
        _ => None,
    }
}

/// LoRA's trainable parameters as PEFT counts them for the LoraConfig axolotl builds, or PEFT's
/// refusal at the key it concerns.
pub fn own(named: &NamedModel, report: &mut Report) {
    let Some(l) = report.plan.settings.lora.clone() else {
        return;
    };
    let m = &named.model;
    let modules: Vec<&str> = l.modules.iter().map(String::as_str).collect();
    let target = LoraTarget {
        linear: l.linear,
        modules: &modules,
    };
    match lora_trainable_parameters(m, l.r, target) {
        Ok(n) => {
            if let Ok(v) = i128::try_from(n) {
                report.set(Output::TrainableParameters, Num::Int(v));
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
