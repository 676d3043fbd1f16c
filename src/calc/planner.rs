//! The planner: for the model, the cluster, the global batch and the sequence length of the
//! current inputs, every plan the framework accepts and that fits the GPU, ranked by estimated
//! step time (`estimate/time.rs`).
//!
//! A plan is a layout of the explorer (`layout.rs`: every combination of the framework's
//! model-parallel sizes, each row computed by the framework's own rules), at a micro batch per
//! GPU with the gradient accumulation that keeps the global batch exactly, with one of the
//! activation recomputes and one of the shardings the framework offers and, where it has them,
//! virtual pipeline stages (`Spec::layout.planner`, in the framework's own keys). The planner
//! runs the explorer's rules once per micro batch and number of virtual stages (memoised by the
//! explorer) and keeps the rows the framework accepts whose global batch is the current one;
//! for each recompute and sharding it reads the framework's settings once
//! ([`Framework::compute_plan`]) and estimates each kept row's memory on the device and, when
//! it fits, its step time; it sorts them by step time (ties: fewer GPUs in model parallelism,
//! then the enumeration order). [`Planning`] does this in slices for the page.
//!
//! The best rows are then computed again as their links would be ([`Framework::compute`] on
//! the current inputs with the plan's assignments): a row shows the figures its link shows, and
//! a plan whose full computation the framework refuses or that does not fit is dropped.

use super::estimated::StepTime;
use super::fit::LayoutEstimator;
use super::frameworks::{Concept, Framework};
use super::layout::{self, BatchMatch, Dim};
use super::spec::Choice;
use super::{Field, Output, RawInputs, Report};

/// How many plans the page lists.
pub const SHOWN: usize = 20;

/// The most candidates computed in full for the list.
const VERIFIED: usize = 100;

/// Candidates computed in full per slice.
const VERIFY_SLICE: usize = 4;

/// The micro batches per GPU the planner tries (with the current one).
const MICRO_BATCHES: [u64; 6] = [1, 2, 4, 8, 16, 32];

/// The virtual pipeline stages per rank tried where the framework has them.
const VIRTUAL_STAGES: [u64; 3] = [1, 2, 4];

/// One plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRow {
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
    /// The run's wall-clock time, GPU-hours and (with `gpu_hour_price`) cost, as the plan's
    /// link computes them (`schedule.rs`); `None` without a length of the run or a price.
    pub total_seconds: Option<f64>,
    pub gpu_hours: Option<f64>,
    pub total_cost: Option<f64>,
    /// The compute factor its step time was calibrated with (`calibration_compute_factor`, which
    /// its link carries); `None`: uncalibrated.
    pub compute_factor: Option<f64>,
    /// The communication factor, likewise (`calibration_comm_factor`).
    pub comm_factor: Option<f64>,
    /// What applying the plan sets, in the framework's own keys.
    pub assignments: Vec<(Field, String)>,
}

impl PlanRow {
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
    pub rows: Vec<PlanRow>,
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

/// The ranked plans for `raw` at `release` (see the module documentation), in one go.
pub fn rank(framework: Framework, release: &str, raw: &RawInputs) -> Planner {
    let mut p = Planning::new(framework, release, raw);
    while !p.step() {}
    p.finish()
}

/// The pass being evaluated: its index, its accepted rows, its inputs, the recompute and
/// sharding choice under way (recompute × shardings + sharding), the next row, and the choice's
/// settings (its grid, memory context and GPU memory) once computed.
struct Current {
    pass: usize,
    rows: Vec<usize>,
    inputs: RawInputs,
    choice: usize,
    cursor: usize,
    context: Option<(super::Grid, LayoutEstimator, u64)>,
}

/// Rows evaluated per slice.
const ROW_SLICE: usize = 48;

/// A choice list with one entry that sets nothing (a framework without such a choice).
const CURRENT: &[Choice] = &[("current", &[])];

/// The planner as slices of work, for a page that must stay responsive while it runs: each
/// [`Planning::step`] runs one explorer pass, one recompute-and-sharding choice over a pass's
/// layouts, or the full computation of a few candidates. [`rank`] runs them all.
pub struct Planning {
    framework: Framework,
    release: String,
    raw: RawInputs,
    out: Planner,
    target: u64,
    micro_field: Option<Field>,
    /// What every plan's link sets besides its layout: the compute factor the current inputs'
    /// measured speed fits, and that speed cleared (it is the current layout's, not the plan's).
    calibration: Vec<(Field, String)>,
    layers: u64,
    recomputes: &'static [Choice],
    shardings: &'static [Choice],
    /// The (micro batch, virtual stages) passes still to run.
    todo: Vec<(u64, u64)>,
    /// The pass being evaluated.
    current: Option<Current>,
    passes: Vec<Pass>,
    candidates: Vec<Candidate>,
    /// Candidates computed in full so far (`None`: not sorted yet).
    verified: Option<usize>,
    done: bool,
}

impl Planning {
    /// Checks what the planner needs; a planning that cannot start is done at once, with its
    /// note.
    pub fn new(framework: Framework, release: &str, raw: &RawInputs) -> Planning {
        let plans = &framework.spec().layout.planner;
        let mut p = Planning {
            framework,
            release: release.to_string(),
            raw: raw.clone(),
            out: Planner::default(),
            target: 0,
            micro_field: framework.field_for(Concept::Micro),
            calibration: Vec::new(),
            layers: 0,
            recomputes: if plans.recompute.is_empty() {
                CURRENT
            } else {
                plans.recompute
            },
            shardings: if plans.sharding.is_empty() {
                CURRENT
            } else {
                plans.sharding
            },
            todo: Vec::new(),
            current: None,
            passes: Vec::new(),
            candidates: Vec::new(),
            verified: None,
            done: true,
        };
        let base = framework.compute(release, raw);
        let need = |what: &str| Some(format!("The planner needs {what}."));
        if base.plan.settings.model.is_none() {
            p.out.note = need("a model");
            return p;
        }
        if base.plan.settings.gpu.gpu.is_none() {
            p.out.note = need("the GPU");
            return p;
        }
        // the global batch as the framework shows it (with a ramp-up, its final one), as the
        // explorer's rows keep it
        let (Some(target), Some(_)) = (base.positive(Output::GlobalBatchSize), p.micro_field)
        else {
            p.out.note = need("a global batch");
            return p;
        };
        if base.estimated.step.is_none() {
            p.out.note =
                need("the step time of the current inputs (a model, the GPU, a sequence length)");
            return p;
        }
        p.target = target;
        p.calibration = calibration(&base, raw);
        p.layers = (base.plan.settings.model.as_ref()).map_or(0, |m| m.model.num_hidden_layers);
        let current_micro = base.plan.micro_batch.unwrap_or(1);
        let mut micros: Vec<u64> = MICRO_BATCHES.to_vec();
        if !micros.contains(&current_micro) {
            micros.push(current_micro);
        }
        micros.retain(|&m| m <= target);
        let virtuals: &[u64] = if plans.virtual_stages.is_some() {
            &VIRTUAL_STAGES
        } else {
            &VIRTUAL_STAGES[..1]
        };
        for &m in micros.iter().rev() {
            for &v in virtuals.iter().rev() {
                p.todo.push((m, v));
            }
        }
        p.done = false;
        p
    }

    /// Runs one slice of the work; `true` when the planning is done.
    pub fn step(&mut self) -> bool {
        if self.done {
            return true;
        }
        if self.current.is_some() {
            self.choice();
        } else if let Some((micro, v)) = self.todo.pop() {
            self.pass(micro, v);
        } else {
            self.verify(VERIFY_SLICE);
        }
        self.done
    }

    /// The plans verified so far, fastest first, while the planning runs (`None` before the
    /// first is verified): what the page streams before the ranking is done.
    pub fn partial(&self) -> Option<Planner> {
        if self.done || self.out.rows.is_empty() {
            return None;
        }
        let mut out = self.out.clone();
        out.rows
            .sort_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
        Some(out)
    }

    /// The plans found (complete once [`Planning::step`] returned `true`).
    pub fn finish(self) -> Planner {
        self.out
    }

    /// The explorer's rules for every layout at one micro batch and pipeline.
    fn pass(&mut self, micro: u64, v: u64) {
        let plans = &self.framework.spec().layout.planner;
        let Some(micro_field) = self.micro_field else {
            return;
        };
        let mut sets = self.calibration.clone();
        sets.push((micro_field, micro.to_string()));
        if let Some((per_rank, other)) = plans.virtual_stages {
            let text = if v > 1 { v.to_string() } else { String::new() };
            sets.push((per_rank, text));
            sets.push((other, String::new()));
        }
        let mut inputs = self.raw.clone();
        for (f, t) in &sets {
            inputs.set(*f, t);
        }
        // the rows keep the link's global batch (not this micro batch × the link's accumulation)
        let ex = layout::explore_rules_keeping(self.framework, &self.release, &inputs, self.target);
        self.out.considered += ex.rows.len() * self.recomputes.len() * self.shardings.len();
        let layers = self.layers;
        let rows: Vec<usize> = (0..ex.rows.len())
            .filter(|&i| {
                let row = &ex.rows[i];
                let pp = (ex.dims.iter().zip(&row.sizes))
                    .find(|((d, _), _)| *d == Dim::Pp)
                    .map_or(1, |(_, &s)| s);
                // interleaving needs a pipeline whose stages split the layers evenly
                row.valid()
                    && row.batch_match == BatchMatch::Exact
                    && (v == 1 || (pp > 1 && layers % pp.saturating_mul(v) == 0))
            })
            .collect();
        if rows.is_empty() {
            return;
        }
        self.current = Some(Current {
            pass: self.passes.len(),
            rows,
            inputs,
            choice: 0,
            cursor: 0,
            context: None,
        });
        self.passes.push(Pass {
            micro,
            virtual_stages: v,
            sets,
            ex,
        });
    }

    /// One recompute and sharding over the current pass's rows, [`ROW_SLICE`] rows at a time:
    /// the framework's settings for it (once), then each layout's memory and, when it fits, its
    /// step time.
    fn choice(&mut self) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        let (ri, si) = (
            cur.choice / self.shardings.len(),
            cur.choice % self.shardings.len(),
        );
        if cur.context.is_none() {
            let mut variant = cur.inputs.clone();
            for &(f, t) in self.recomputes[ri].1.iter().chain(self.shardings[si].1) {
                variant.set(f, t);
            }
            // the rules and the settings suffice (LoRA's count is the model stage's)
            let mut base = self.framework.compute_plan(&self.release, &variant);
            if base.plan.settings.lora.is_some() {
                base = self.framework.compute(&self.release, &variant);
            }
            let order = self.framework.spec().mesh.order;
            let capacity = base.plan.settings.gpu.memory_bytes;
            cur.context = match (
                base.grid,
                LayoutEstimator::new(&base, order),
                capacity.and_then(|c| u64::try_from(c).ok()),
            ) {
                (Some(grid), Some(ctx), Some(capacity)) => Some((grid, ctx, capacity)),
                // nothing to evaluate for this choice
                _ => {
                    cur.cursor = cur.rows.len();
                    None
                }
            };
        }
        if let Some((grid, ctx, capacity)) = &cur.context {
            let ex = &self.passes[cur.pass].ex;
            let end = (cur.cursor + ROW_SLICE).min(cur.rows.len());
            for &i in &cur.rows[cur.cursor..end] {
                let row = &ex.rows[i];
                let g = layout::row_grid(*grid, ex.dims, &row.sizes, row.dp);
                if let (Some(_), Some(step)) = ctx.row(g, ctx.micro, true, u128::from(*capacity)) {
                    self.candidates.push(Candidate {
                        pass: cur.pass,
                        row: i,
                        recompute: ri,
                        sharding: si,
                        step: step.total(),
                        model_parallel: row.sizes.iter().product(),
                    });
                }
            }
            cur.cursor = end;
        }
        if cur.cursor < cur.rows.len() {
            self.current = Some(cur);
        } else if cur.choice + 1 < self.recomputes.len() * self.shardings.len() {
            self.current = Some(Current {
                choice: cur.choice + 1,
                cursor: 0,
                context: None,
                ..cur
            });
        }
    }

    /// The best candidates, computed as their links are (a few the full computation refuses
    /// are passed over; at most [`VERIFIED`] are tried), `n` at a time.
    fn verify(&mut self, n: usize) {
        let start = match self.verified {
            Some(i) => i,
            None => {
                self.out.fitting = self.candidates.len();
                self.candidates.sort_by(|a, b| {
                    (a.step.total_cmp(&b.step)).then(a.model_parallel.cmp(&b.model_parallel))
                });
                0
            }
        };
        let end = (start + n).min(self.candidates.len()).min(VERIFIED);
        for i in start..end {
            if self.out.rows.len() >= SHOWN {
                break;
            }
            if let Some(p) = self.full(i) {
                self.out.rows.push(p);
            }
        }
        self.verified = Some(end);
        if end >= self.candidates.len().min(VERIFIED) || self.out.rows.len() >= SHOWN {
            self.out
                .rows
                .sort_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
            if self.out.rows.is_empty() {
                self.out.note = Some(
                    "No plan the framework accepts fits the GPU at this global batch: more GPUs, a GPU with more memory or a smaller model."
                        .into(),
                );
            }
            self.done = true;
        }
    }

    /// Candidate `i` computed in full: its plan, when the framework accepts it and it fits.
    fn full(&self, i: usize) -> Option<PlanRow> {
        let c = &self.candidates[i];
        let pass = &self.passes[c.pass];
        let row = &pass.ex.rows[c.row];
        let (recompute, rc_sets) = self.recomputes[c.recompute];
        let (sharding, sh_sets) = self.shardings[c.sharding];
        let mut assignments = pass.sets.clone();
        let choices = (rc_sets.iter().chain(sh_sets)).map(|&(f, t)| (f, t.to_string()));
        // a size of 1 the inputs leave out stays out (DeepSpeed reads a given
        // `sequence_parallel_size` of 1 differently from none)
        let sizes = pass.ex.assignments(row).into_iter().map(|(f, t)| {
            let dim = pass.ex.dims.iter().any(|&(_, d)| d == f);
            if dim && t == "1" && !self.raw.is_given(f) {
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
        let mut inputs = self.raw.clone();
        for (f, t) in &assignments {
            inputs.set(*f, t);
        }
        let report = self.framework.compute(&self.release, &inputs);
        let plan = PlanRow {
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
            total_seconds: None,
            gpu_hours: None,
            total_cost: None,
            compute_factor: None,
            comm_factor: None,
            assignments,
        };
        verified(&report, plan, self.target)
    }
}

/// What every plan's link sets for a measured speed of the current inputs (`tokens_per_second_per_gpu`
/// or `seconds_per_step`, which is the current layout's, and a second run's at another node
/// count): the speeds cleared, and the factors they fit (`calibration_compute_factor`,
/// `calibration_comm_factor`), so that every plan is ranked, and its link computed, with the
/// calibration (the scaling view's sizes too). A typed factor is in the inputs already.
pub fn calibration(base: &Report, raw: &RawInputs) -> Vec<(Field, String)> {
    let measured = [
        Field::TokensPerSecondPerGpu,
        Field::SecondsPerStep,
        Field::SecondRunNodes,
        Field::SecondRunTokensPerSecondPerGpu,
        Field::SecondRunSecondsPerStep,
    ];
    if !measured.iter().any(|&f| raw.is_given(f)) {
        return Vec::new();
    }
    let mut sets: Vec<(Field, String)> = measured.iter().map(|&f| (f, String::new())).collect();
    for (factor, field) in [
        (
            base.estimated.compute_factor,
            Field::CalibrationComputeFactor,
        ),
        (base.estimated.comm_factor, Field::CalibrationCommFactor),
    ] {
        if let Some(k) = factor.filter(|_| !raw.is_given(field)) {
            sets.push((field, super::num::float_repr(k)));
        }
    }
    sets
}

/// A candidate's figures from its own full computation (the model stage's typed estimate),
/// when the framework accepts it, the batch is the current one and it fits.
fn verified(report: &Report, plan: PlanRow, target: u64) -> Option<PlanRow> {
    if report.has_errors() || report.positive(Output::GlobalBatchSize) != Some(target) {
        return None;
    }
    let e = &report.estimated;
    let memory = e.memory_on_device.filter(|&m| m > 0)?;
    if memory > e.gpu_memory.filter(|&c| c > 0)? {
        return None;
    }
    let step = e.step?;
    let float = |o: Output| report.value(o).map(super::Num::to_f64);
    Some(PlanRow {
        total_seconds: float(Output::TotalTimeSeconds),
        gpu_hours: float(Output::GpuHours),
        total_cost: float(Output::TotalCost),
        step,
        step_seconds: step.total(),
        tokens_per_second_per_gpu: e.tokens_per_second_per_gpu?,
        mfu: e.mfu,
        memory_bytes: memory,
        compute_factor: e.compute_factor,
        comm_factor: e.comm_factor,
        ..plan
    })
}

/// The benchmark hook: the planner for [`bench_inputs`] at the framework's newest release.
/// Returns the plans found.
pub fn bench(framework: Framework, world: u64) -> usize {
    let raw = bench_inputs(framework, world);
    rank(framework, framework.default_release().id, &raw)
        .rows
        .len()
}

/// The benchmark's inputs: `world` GPUs of H100 with Llama 3.1 8B, 4,096 tokens per sample and
/// a global batch of 2 × world samples, the framework's defaults otherwise (inputs the planner
/// finds plans for, in every framework).
pub fn bench_inputs(framework: Framework, world: u64) -> RawInputs {
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
    raw
}
