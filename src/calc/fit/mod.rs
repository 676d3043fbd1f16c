//! The model, memory and compute stage, for every framework: the model's parameter counts, the
//! frameworks' own estimators for its memory and FLOPs, the memory per GPU by published formulas
//! and the throughput an MFU implies.
//!
//! What is exact (each the named framework function's value, tested against its recorded runs
//! in tests/model.rs and tests/fit.rs): the parameter counts (transformers' `num_parameters()`;
//! for Megatron's own arguments, its `GPTModel`'s), DeepSpeed's ZeRO
//! model-state estimators (with ZeRO stage 2 or 3 where the framework reads DeepSpeed's keys),
//! Megatron-LM's `report_theoretical_memory` (under Megatron, in its folder) and the four FLOPs
//! conventions. What is estimated: the memory per GPU with its breakdown (published formulas,
//! `estimate/`), the step time (`estimate/time.rs`) and tokens per second from an MFU (`mfu ×
//! peak ÷ FLOPs per token`) or from the step time. Each is
//! labelled so in its worked step; none is "measured".
//!
//! The stage runs after the framework's rules and its settings reader ([`run`], called by
//! `Framework::compute`). It reads the plan they published (`report.plan`: the batch, the
//! sequence length, the node shape, the settings with the model) and the grid, never the typed
//! text, and never changes a value the rules set. Its parts:
//! - [`model`]: the parameter counts and the FLOPs per token;
//! - `memory`: DeepSpeed's estimators and the published estimate with the fit warning;
//! - `setup`: the estimate's input built from the resolved plan (for the report and every row);
//! - `layouts`: each explorer and planner layout's memory and step time ([`LayoutEstimator`]);
//! - [`throughput`]: the GPU's outputs and the MFU's tokens per second;
//! - [`time`]: the step time (`estimate/time.rs`) with its parts, the MFU it implies, and the
//!   tokens per second the time outputs use when no throughput or MFU is given.

mod layouts;
mod memory;
mod model;
mod setup;
mod throughput;
mod time;

pub use layouts::LayoutEstimator;

use super::plan::Sharding;
use super::spec::Spec;
use super::{Field, Report};

/// See the module documentation. Returns the estimated tokens per second per GPU (from `mfu`,
/// else from the step-time estimate) and the time rule that says where it comes from.
/// `second`: the plan of a second measured run at another node count
/// (`Framework::compute`), which calibrates the communication.
pub(crate) fn run(
    spec: &'static Spec,
    report: &mut Report,
    second: Option<&Report>,
) -> Option<(f64, &'static str)> {
    let peak = throughput::gpu_outputs(report);
    let named = report.plan.settings.model.clone()?;
    let Some(counts) = model::counts(report, &named) else {
        beyond_counting(spec, report, &named.model);
        return None;
    };
    (spec.fit.own)(&named, report);
    let m = &named.model;
    if let Sharding::Zero(z) = report.plan.settings.sharding {
        memory::zero(report, m, counts.0, &z);
    }
    if let (Some(g), Some(seq)) = (report.grid, report.plan.seq_len) {
        memory::published(report, m, g, seq);
    }
    unwalked_layers(spec, report, m);
    let per_token = model::flops_stage(spec, report, &named);
    let stepped = time::step(spec, report, m, per_token, second);
    if stepped.is_none() {
        beyond_counting(spec, report, m);
    }
    throughput::estimate(report, peak, per_token)
        .map(|t| (t, "time_per_step = tokens_per_step / (estimated tokens_per_second_per_gpu × world_size) — an estimate from the MFU"))
        .or_else(|| {
            let t = stepped?;
            throughput::from_step_time(report, t);
            Some((t, "time_per_step = tokens_per_step / (estimated tokens_per_second_per_gpu × world_size) — the step-time estimate (step_time_seconds)"))
        })
}

/// A step time the estimate cannot count (its parameters, FLOPs, bytes or seconds overflow for
/// hostile sizes, e.g. a hidden size of 2^63 or 2^63 micro batches per step), when everything it
/// needs is there and nothing else explains its absence: said at the largest of the sizes it
/// multiplies (the overflow's cause), never left blank.
fn beyond_counting(spec: &'static Spec, report: &mut Report, m: &super::model::Model) {
    use super::estimate::{Params, MAX_LAYERS};
    use super::spec::Concept;
    let plan = &report.plan;
    let ready = report.grid.is_some()
        && plan.node_shape.is_some()
        // a global batch the report shows (the plan's may be past u64: 2^63 × 8)
        && report.value(super::Output::GlobalBatchSize).is_some()
        && plan.micro_batch.is_some()
        && plan.seq_len.is_some()
        && plan.settings.gpu.gpu.is_some();
    let walked = m.num_hidden_layers <= MAX_LAYERS || Params::of(m).is_some();
    if !ready || !walked || report.has_errors() {
        return;
    }
    let sizes = [
        (spec.field_for(Concept::Layers), Some(m.num_hidden_layers)),
        (Some(Field::HiddenSize), Some(m.hidden_size)),
        (spec.field_for(Concept::Ffn), Some(m.intermediate_size)),
        (Some(Field::VocabSize), Some(m.vocab_size)),
        (spec.field_for(Concept::Micro), plan.micro_batch),
        (spec.field_for(Concept::Accum), plan.accumulation),
        (
            spec.field_for(Concept::SeqLen).or(Some(Field::MaxLength)),
            plan.seq_len,
        ),
    ];
    let largest = (sizes.iter())
        .filter_map(|&(f, v)| Some((f?, v?)))
        .max_by_key(|&(_, v)| v);
    if let Some((field, value)) = largest {
        report.diag(
            field,
            super::Level::Warning,
            format!(
                "No step-time estimate: {} {value} is beyond what the estimate counts (its parameters, FLOPs or bytes overflow); the batch math holds.",
                field.key()
            ),
        );
    }
}

/// A model whose layers are not all alike and are more than the estimate walks one by one has
/// no memory or step-time estimate: said at the layer count, not left blank.
fn unwalked_layers(spec: &'static Spec, report: &mut Report, m: &super::model::Model) {
    use super::estimate::{Params, MAX_LAYERS};
    if m.num_hidden_layers <= MAX_LAYERS || Params::of(m).is_some() {
        return;
    }
    let Some(field) = spec.field_for(super::spec::Concept::Layers) else {
        return;
    };
    report.diag(
        field,
        super::Level::Warning,
        format!(
            "No memory or step-time estimate: {} layers of two kinds (dense and mixture-of-experts) are more than the {MAX_LAYERS} the estimate walks one by one.",
            m.num_hidden_layers
        ),
    );
}
