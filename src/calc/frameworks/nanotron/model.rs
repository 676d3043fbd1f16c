//! nanotron's part of the model stage: its settings as typed (`recompute_layer`, the optimizer's
//! `zero_stage` and `accumulate_grad_in_fp32`, `tp_mode`, `tp_linear_async_communication`,
//! `pp_engine`), published in the plan with their memory effect, each taken from nanotron's code
//! (huggingface/nanotron@2411b022a75fb7f7561a1bb4166706da5e1b76de, HEAD of 2026-04-07):
//!
//! - `zero_stage` > 0 wraps the optimizer in `ZeroDistributedOptimizer` over the dp group
//!   (`helpers.py`, `init_optimizer_and_grad_accumulator`): the optimizer's parameters, so its
//!   states and, with fp32 accumulation, their fp32 master copies, are sharded; the gradient
//!   buffers are not (`FP32GradientAccumulator`'s `grad_buckets_named_params` is every
//!   parameter "even when Zero 1 is used"). There is no stage 2 or 3: any stage above 0 is this.
//! - `accumulate_grad_in_fp32: true` builds `FP32GradientAccumulator`
//!   (`optim/gradient_accumulator.py`): an fp32 gradient buffer per parameter and a flat fp32
//!   copy of the optimizer's parameters, on which AdamW keeps fp32 states (12 bytes per
//!   parameter with the master, gradients 4). `false`: `torch.optim.AdamW` on the model's bf16
//!   parameters (`ModelArgs.dtype` bfloat16), whose states are `zeros_like(p)`: 4 bytes, no
//!   master, bf16 gradients.
//! - `tp_mode: REDUCE_SCATTER` is sequence parallelism (`ParallelismArgs`' docstring): the
//!   column linears save their TP-sharded input (`_ColumnLinearNoAsyncCommunicationReduceScatterMode`
//!   with `tp_recompute_allgather`, nanotron's default).
//! - `tp_linear_async_communication` changes when the all-gather runs, not what is saved:
//!   `_ColumnLinearAsyncCommunication.forward` saves `(tensor, weight)`, the same sharded input
//!   (with `tp_recompute_allgather`) or the unsharded one under ALL_REDUCE, as the synchronous
//!   path (`parallel/tensor_parallel/functional.py`). No memory effect.
//! - `pp_engine` (`parallel/pipeline_parallel/engine.py`): `afab`, nanotron's default
//!   (`ParallelismArgs.__post_init__`), runs every micro batch's forward and registers its loss
//!   for the backward before any backward, so each rank holds all
//!   `batch_accumulation_per_replica` micro batches, also at pp 1; `1f1b` runs
//!   `pp − rank − 1` warm-up forwards, then one forward and one backward, and asserts at least
//!   `pp − 1` micro batches.
//!
//! Without `zero_stage` or `accumulate_grad_in_fp32` (both required in nanotron's config, so a
//! link without them names no nanotron run) dpcalc keeps its count from before they were
//! inputs: replicated states, bf16 gradients and AdamW's 12 bytes with an fp32 master.

use crate::calc::parse::{settings, Reader};
use crate::calc::plan::{Pipeline, Recompute, Schedule, Settings, Sharding, Zero};
use crate::calc::spec::AsBuilt;
use crate::calc::{Diag, Field, Level, Param, RawInputs, Refusal, Report};

/// The model stage's settings (`Spec::fit.settings`).
pub fn settings(raw: &RawInputs, report: &mut Report) {
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let mut rd = Reader {
        raw,
        diags: &mut diags,
    };
    let recompute = if rd.flag(Field::RecomputeLayer).or(false) == Some(true) {
        Recompute::Full
    } else {
        Recompute::None
    };
    let zero_stage = rd.count(Field::NanotronZeroStage);
    let fp32_accumulation = rd.flag(Field::AccumulateGradInFp32);
    // no memory effect (see the module doc), but a value nanotron cannot read is said
    let _ = rd.flag(Field::TpLinearAsyncCommunication);
    let sequence_parallel = tp_mode(&mut rd) == Some(true);
    let schedule = pp_engine(&mut rd);
    let sharding = match zero_stage {
        Param::Given(z) if z > 0 => {
            if z > 1 {
                rd.diags.push(Diag::new(
                    Field::NanotronZeroStage,
                    Level::Warning,
                    format!("nanotron has ZeRO-1 only: zero_stage {z} builds the same ZeroDistributedOptimizer as 1 (optimizer states sharded over dp, gradients and weights whole)"),
                ));
            }
            Sharding::Zero(Zero {
                stage: 1,
                offload_optimizer: false,
                offload_param: false,
                zero_init: false,
            })
        }
        _ => Sharding::Replicated {
            words: "replicated (ZeRO stage 0)",
        },
    };
    let mut s = Settings {
        gpu,
        recompute,
        sharding,
        sequence_parallel,
        ..Settings::default()
    };
    match fp32_accumulation {
        Param::Given(true) => s.memory.fp32_grads = true,
        Param::Given(false) => {
            s.optimizer_bytes_per_param = settings::states_in_param_dtype(12);
        }
        _ => {}
    }
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
    if let Some(schedule) = schedule {
        publish_pipeline(report, schedule);
    }
}

/// `tp_mode` as `TensorParallelLinearMode[tp_mode.upper()]` reads it: `Some(true)` for
/// REDUCE_SCATTER, `Some(false)` for ALL_REDUCE or absent, `None` when nanotron refuses it.
fn tp_mode(rd: &mut Reader) -> Option<bool> {
    match rd.text(Field::TpMode) {
        Param::Given(t) => match t.to_ascii_uppercase().as_str() {
            "REDUCE_SCATTER" => Some(true),
            "ALL_REDUCE" => Some(false),
            _ => {
                rd.diags.push(Diag::new(
                    Field::TpMode,
                    Level::Error,
                    format!(
                        "tp_mode is ALL_REDUCE or REDUCE_SCATTER (nanotron: KeyError: '{}')",
                        crate::calc::parse::shorten(&t.to_ascii_uppercase())
                    ),
                ));
                None
            }
        },
        Param::Absent => Some(false),
        Param::Invalid => None,
    }
}

/// `pp_engine` as `cast_str_to_pipeline_engine` reads it (exact names; absent: `afab`,
/// `ParallelismArgs.__post_init__`'s default); `None` when refused.
fn pp_engine(rd: &mut Reader) -> Option<Schedule> {
    match rd.text(Field::PpEngine) {
        Param::Given(t) if t == "afab" => Some(Schedule::AllForwardAllBackward),
        Param::Given(t) if t == "1f1b" => Some(Schedule::OneFOneB),
        Param::Given(t) => {
            rd.diags.push(Diag::new(
                Field::PpEngine,
                Level::Error,
                format!(
                    "ValueError: pp_engine should be a string selected in ['afab', '1f1b'] and not {}",
                    crate::calc::parse::shorten(&t)
                ),
            ));
            None
        }
        Param::Absent => Some(Schedule::AllForwardAllBackward),
        Param::Invalid => None,
    }
}

/// The pipeline engine in the plan, at every PP size (afab holds all micro batches at pp 1
/// too), and `OneForwardOneBackwardPipelineEngine.train_batch_iter`'s assertion.
fn publish_pipeline(report: &mut Report, schedule: Schedule) {
    let (Some(grid), Some(m)) = (report.grid, report.plan.accumulation) else {
        return;
    };
    if schedule == Schedule::OneFOneB && m < grid.pp.saturating_sub(1) {
        report.refuse(
            Field::PpEngine,
            Refusal::new(
                "nanotron asserts this in OneForwardOneBackwardPipelineEngine.train_batch_iter",
                format!(
                    "AssertionError: Number of microbatches ({m}) must be at least PP_SIZE-1={} when using the OneForwardOneBackwardPipelineEngine",
                    grid.pp - 1
                ),
            )
            .fix("Raise batch_accumulation_per_replica to at least pp − 1, or use pp_engine: afab."),
        );
        return;
    }
    report.plan.pipeline = Some(Pipeline {
        schedule,
        virtual_stages: 1,
        layers: Vec::new(),
    });
}
