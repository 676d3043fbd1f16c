//! The planner: for the model, the cluster, the global batch and the sequence length of the
//! current inputs, every plan the framework accepts and that fits the GPU, ranked by estimated
//! step time (`estimate/time.rs`).
//!
//! A plan is a layout of the explorer (`layout.rs`: every combination of the framework's
//! model-parallel sizes, each row computed by the framework's own rules), at a micro batch per
//! GPU with the gradient accumulation that keeps the global batch exactly, with one of the
//! activation recomputes and one of the shardings the framework offers and, where it has them,
//! virtual pipeline stages (`Spec::layout.plans`, in the framework's own keys). The planner
//! runs the explorer once per micro batch and choice (each run memoised by the explorer), keeps
//! the rows the framework accepts whose global batch is the current one and whose memory on the
//! device fits, and sorts them by step time (ties: fewer GPUs in model parallelism, then the
//! enumeration order).
//!
//! The best rows are then computed again as their links would be ([`Framework::compute`] on
//! the current inputs with the plan's assignments): a row shows the figures its link shows, and
//! a plan whose full computation the framework refuses or that does not fit is dropped.

use super::estimate::time::StepTime;
use super::fit::MemoryContext;
use super::frameworks::{Concept, Framework};
use super::layout::{self, Dim, Fit};
use super::{Field, Level, Num, Output, RawInputs, Report};

/// How many plans the page lists.
pub const SHOWN: usize = 20;

/// The most candidates computed in full for the list.
const VERIFIED: usize = 100;

/// The micro batches per GPU the planner tries (with the current one).
const MICRO_BATCHES: [u64; 6] = [1, 2, 4, 8, 16, 32];

/// The virtual pipeline stages per rank tried where the framework has them.
const VIRTUAL_STAGES: [u64; 3] = [1, 2, 4];

/// One plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Its sizes in the framework's dimension order ([`layout::dims_at`]) with their kinds.
    pub sizes: Vec<(Dim, u64)>,
    /// The data-parallel replicas the batch counts.
    pub dp: u64,
    pub micro_batch: u64,
    pub recompute: &'static str,
    pub sharding: &'static str,
    /// Virtual pipeline stages per rank (1: none).
    pub virtual_stages: u64,
    pub step: StepTime,
    pub step_seconds: f64,
    pub tokens_per_second_per_gpu: f64,
    /// In the framework's FLOPs convention; `None` without its FLOPs per token.
    pub mfu: Option<f64>,
    /// On the device, per GPU.
    pub memory_bytes: u128,
    /// What applying the plan sets, in the framework's own keys.
    pub assignments: Vec<(Field, String)>,
}

impl Plan {
    /// A dimension's size (1 when the framework lacks it).
    pub fn size(&self, dim: Dim) -> u64 {
        self.sizes
            .iter()
            .find(|(d, _)| *d == dim)
            .map_or(1, |&(_, s)| s)
    }

    /// The assignments as a query fragment.
    pub fn query(&self) -> String {
        self.assignments
            .iter()
            .map(|(f, v)| format!("{}={v}", f.key()))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// The ranked plans for one set of inputs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Planner {
    /// The best plans, fastest first (at most [`SHOWN`]).
    pub plans: Vec<Plan>,
    /// The plans evaluated, and those the framework accepts that fit.
    pub considered: usize,
    pub fitting: usize,
    /// Why there is no plan.
    pub note: Option<String>,
}

/// A candidate before its link is computed: its pass (micro batch and virtual stages), its
/// row there and its recompute and sharding.
struct Candidate {
    pass: usize,
    row: usize,
    recompute: usize,
    sharding: usize,
    step: f64,
    model_parallel: u64,
}

/// One explorer pass: a micro batch and virtual stages, what they set, and the rows.
struct Pass {
    micro: u64,
    virtual_stages: u64,
    sets: Vec<(Field, String)>,
    ex: layout::Explorer,
}

/// The ranked plans for `raw` at `release` (see the module documentation).
pub fn plan(framework: Framework, release: &str, raw: &RawInputs) -> Planner {
    let mut out = Planner::default();
    let base = framework.compute(release, raw);
    let need = |what: &str| Some(format!("The planner needs {what}."));
    if base.plan.settings.model.is_none() {
        out.note = need("a model");
        return out;
    }
    if base.plan.settings.gpu.gpu.is_none() {
        out.note = need("the GPU");
        return out;
    }
    let (Some(target), Some(micro_field)) = (
        positive(&base, Output::GlobalBatchSize),
        framework.field_for(Concept::Micro),
    ) else {
        out.note = need("a global batch");
        return out;
    };
    if base.value(Output::StepTimeSeconds).is_none() {
        out.note =
            need("the step time of the current inputs (a model, the GPU, a sequence length)");
        return out;
    }
    let plans = &framework.spec().layout.plans;
    let current_micro = base.plan.micro_batch.unwrap_or(1);
    let mut micros: Vec<u64> = MICRO_BATCHES.to_vec();
    if !micros.contains(&current_micro) {
        micros.push(current_micro);
    }
    micros.retain(|&m| m <= target);
    let layers = base
        .plan
        .settings
        .model
        .as_ref()
        .map_or(0, |m| m.model.num_hidden_layers);
    let recomputes: &[_] = if plans.recompute.is_empty() {
        &[("current", &[] as &[(Field, &str)])]
    } else {
        plans.recompute
    };
    let shardings: &[_] = if plans.sharding.is_empty() {
        &[("current", &[] as &[(Field, &str)])]
    } else {
        plans.sharding
    };
    let virtuals: &[u64] = if plans.virtual_stages.is_some() {
        &VIRTUAL_STAGES
    } else {
        &VIRTUAL_STAGES[..1]
    };
    let order = framework.spec().mesh.order;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut passes: Vec<Pass> = Vec::new();
    for &micro in &micros {
        for &v in virtuals {
            // the framework's rules for every layout at this micro batch and pipeline
            let mut sets: Vec<(Field, String)> = vec![(micro_field, micro.to_string())];
            if let Some((per_rank, other)) = plans.virtual_stages {
                let text = if v > 1 { v.to_string() } else { String::new() };
                sets.push((per_rank, text));
                sets.push((other, String::new()));
            }
            let mut inputs = raw.clone();
            for (f, t) in &sets {
                inputs.set(*f, t);
            }
            let ex = layout::explore_rules(framework, release, &inputs);
            out.considered += ex.rows.len() * recomputes.len() * shardings.len();
            let rows: Vec<usize> = (0..ex.rows.len())
                .filter(|&i| {
                    let row = &ex.rows[i];
                    let pp = ex
                        .dims
                        .iter()
                        .zip(&row.sizes)
                        .find(|((d, _), _)| *d == Dim::Pp)
                        .map_or(1, |(_, &s)| s);
                    // interleaving needs a pipeline whose stages split the layers evenly
                    row.valid()
                        && row.fit == Fit::Exact
                        && (v == 1 || (pp > 1 && layers % pp.saturating_mul(v) == 0))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let pass = passes.len();
            // each recompute and sharding: the framework's settings for it, then each layout's
            // memory and, when it fits, its step time
            for (ri, &(_, rc_sets)) in recomputes.iter().enumerate() {
                for (si, &(_, sh_sets)) in shardings.iter().enumerate() {
                    let mut inputs = inputs.clone();
                    for &(f, t) in rc_sets.iter().chain(sh_sets) {
                        inputs.set(f, t);
                    }
                    let base = framework.compute(release, &inputs);
                    let (Some(grid), Some(ctx), Some(capacity)) = (
                        base.grid,
                        MemoryContext::new(&base, order),
                        positive(&base, Output::GpuMemoryBytes),
                    ) else {
                        continue;
                    };
                    for &i in &rows {
                        let row = &ex.rows[i];
                        let g = layout::row_grid(grid, ex.dims, &row.sizes, row.dp);
                        if let (Some(_), Some(step)) =
                            ctx.row(g, ctx.micro, true, u128::from(capacity))
                        {
                            candidates.push(Candidate {
                                pass,
                                row: i,
                                recompute: ri,
                                sharding: si,
                                step: step.total(),
                                model_parallel: row.sizes.iter().product(),
                            });
                        }
                    }
                }
            }
            passes.push(Pass {
                micro,
                virtual_stages: v,
                sets,
                ex,
            });
        }
    }
    out.fitting = candidates.len();
    candidates.sort_by(|a, b| {
        a.step
            .total_cmp(&b.step)
            .then(a.model_parallel.cmp(&b.model_parallel))
    });
    // the best, computed as their links are (a few the full computation refuses are passed
    // over; at most VERIFIED are tried)
    for c in candidates.iter().take(VERIFIED) {
        if out.plans.len() >= SHOWN {
            break;
        }
        let pass = &passes[c.pass];
        let row = &pass.ex.rows[c.row];
        let (recompute, rc_sets) = recomputes[c.recompute];
        let (sharding, sh_sets) = shardings[c.sharding];
        let mut assignments = pass.sets.clone();
        let choices = rc_sets
            .iter()
            .chain(sh_sets)
            .map(|&(f, t)| (f, t.to_string()));
        // a size of 1 the inputs leave out stays out (DeepSpeed reads a given
        // `sequence_parallel_size` of 1 differently from none)
        let sizes = pass.ex.assignments(row).into_iter().map(|(f, t)| {
            let dim = pass.ex.dims.iter().any(|&(_, d)| d == f);
            if dim && t == "1" && raw.get(f).trim().is_empty() {
                (f, String::new())
            } else {
                (f, t)
            }
        });
        for (f, t) in choices.chain(sizes) {
            match assignments.iter_mut().find(|(g, _)| *g == f) {
                Some(slot) => slot.1 = t,
                None => assignments.push((f, t)),
            }
        }
        let mut inputs = raw.clone();
        for (f, t) in &assignments {
            inputs.set(*f, t);
        }
        let report = framework.compute(release, &inputs);
        let plan = Plan {
            sizes: (pass.ex.dims.iter().map(|&(d, _)| d))
                .zip(row.sizes.iter().copied())
                .collect(),
            dp: row.dp,
            micro_batch: pass.micro,
            recompute,
            sharding,
            virtual_stages: pass.virtual_stages,
            step: StepTime::default(),
            step_seconds: 0.0,
            tokens_per_second_per_gpu: 0.0,
            mfu: None,
            memory_bytes: 0,
            assignments,
        };
        if let Some(p) = verified(&report, plan, target) {
            out.plans.push(p);
        }
    }
    out.plans
        .sort_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
    if out.plans.is_empty() {
        out.note = Some(
            "No plan the framework accepts fits the GPU at this global batch: more GPUs, a GPU with more memory or a smaller model."
                .into(),
        );
    }
    out
}

/// A candidate's figures from its own full computation, when the framework accepts it, the
/// batch is the current one and it fits.
fn verified(report: &Report, plan: Plan, target: u64) -> Option<Plan> {
    if report.diags.iter().any(|d| d.level == Level::Error) {
        return None;
    }
    if positive(report, Output::GlobalBatchSize) != Some(target) {
        return None;
    }
    let memory = positive(report, Output::MemoryOnDeviceBytes)?;
    let capacity = positive(report, Output::GpuMemoryBytes)?;
    if memory > capacity {
        return None;
    }
    let float = |o: Output| match report.value(o) {
        Some(Num::Float(x)) => Some(x),
        Some(Num::Int(i)) => Some(i as f64),
        _ => None,
    };
    let step_seconds = float(Output::StepTimeSeconds)?;
    let step = StepTime {
        compute: float(Output::StepComputeSeconds)?,
        tp: float(Output::StepTpCommSeconds)?,
        cp: float(Output::StepCpCommSeconds)?,
        ep: float(Output::StepEpCommSeconds)?,
        pp_bubble: float(Output::StepPpBubbleSeconds)?,
        dp: float(Output::StepDpCommSeconds)?,
    };
    Some(Plan {
        step,
        step_seconds,
        tokens_per_second_per_gpu: float(Output::TokensPerSecondPerGpu)?,
        mfu: float(Output::MfuEstimate),
        memory_bytes: u128::from(memory),
        ..plan
    })
}

fn positive(report: &Report, output: Output) -> Option<u64> {
    match report.value(output)? {
        Num::Int(v) if v > 0 => u64::try_from(v).ok(),
        _ => None,
    }
}

/// The benchmark hook: the planner for `world` GPUs of H100 with Llama 3.1 8B, 4,096 tokens per
/// sample and a global batch of 2 × world samples, the framework's defaults otherwise. Returns
/// the plans found.
pub fn bench(framework: Framework, world: u64) -> usize {
    let mut raw = RawInputs::default();
    raw.set(Field::WorldSize, world.to_string());
    raw.set(Field::Gpu, "h100-sxm");
    if let Some(f) = framework.field_for(Concept::Model) {
        raw.set(f, "meta-llama/Llama-3.1-8B");
    }
    for (concept, text) in [
        (Concept::Samples, "1000000"),
        (Concept::Steps, "100"),
        (Concept::Micro, "1"),
        (Concept::SeqLen, "4096"),
    ] {
        if let Some(f) = framework.field_for(concept) {
            raw.set(f, text);
        }
    }
    if framework.field_for(Concept::SeqLen).is_none() {
        raw.set(Field::MaxLength, "4096");
    }
    match framework.field_for(Concept::Global) {
        Some(f) => raw.set(f, (world * 2).to_string()),
        None => {
            if let Some(f) = framework.field_for(Concept::Accum) {
                raw.set(f, "2");
            }
        }
    }
    // the sizes a framework requires (nanotron's tp, pp and dp), at 1 and the rest data parallel
    let dims = layout::dims(framework);
    let base = framework.compute(framework.default_release().id, &raw);
    let required = |f: Field| base.diags.iter().any(|d| d.field == f);
    let ones = vec![1; dims.len()];
    let fills = (framework.spec().layout.fills)(world, &ones);
    if dims
        .iter()
        .map(|&(_, f)| f)
        .chain(fills.iter().map(|(f, _)| *f))
        .any(required)
    {
        for &(_, f) in dims {
            raw.set(f, "1");
        }
        for (f, t) in fills {
            raw.set(f, t);
        }
    }
    plan(framework, framework.default_release().id, &raw)
        .plans
        .len()
}
