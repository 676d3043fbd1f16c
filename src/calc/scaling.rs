//! The scaling view: how many GPUs to rent. For node counts 1, 2, 4, … up to the link's (or
//! `max_nodes`), the planner's best plan at that size ([`planner::rank`] on the link with its
//! cluster changed), keeping the model, the global batch and the sequence length; each size's
//! step time, tokens per second per GPU, MFU, the run's total time and GPU-hours and, with
//! `gpu_hour_price`, its cost. With `deadline_hours` the cheapest size whose run ends within the
//! deadline is marked (ties: fewer GPUs).
//!
//! The global batch is kept, never changed: at each size the link's batch keys are set so that
//! the framework's own rules give the link's global batch (`global_batch_size` where the
//! framework has that key, else the accumulation, `micro × accumulation × dp = global`), on a
//! starting layout whose data-parallel size divides it (the link's own model-parallel sizes, else
//! none, else more tensor then pipeline parallelism). A size where no such layout reaches the
//! exact global batch (more replicas than samples, or a batch they do not divide) has no plan
//! and says so. The planner then ranks every layout at that size as it does for any link.
//!
//! [`Scaling`] does the work in slices (one planner slice at a time) for the page; [`scale`]
//! runs it in one go.

use super::layout::{self, Dim};
use super::planner::{self, PlanRow, Planning};
use super::spec::Concept;
use super::{Field, Framework, Output, Param, RawInputs, Report};

/// One cluster size.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleRow {
    pub nodes: u64,
    pub gpus: u64,
    /// The link at this size before the planner (the cluster and the batch keys changed); a
    /// plan's link is these inputs with the plan's assignments.
    pub inputs: RawInputs,
    /// The planner's best plan at this size.
    pub plan: Option<PlanRow>,
    /// Why there is no plan (the batch cannot be kept, or the planner's note).
    pub note: Option<String>,
    /// With a deadline and a plan with a total time: whether the run ends within it.
    pub meets_deadline: Option<bool>,
}

impl ScaleRow {
    /// The plan's link as a query fragment's pairs: the size's inputs with the plan applied.
    pub fn plan_inputs(&self) -> Option<RawInputs> {
        let plan = self.plan.as_ref()?;
        let mut raw = self.inputs.clone();
        for (f, t) in &plan.assignments {
            raw.set(*f, t);
        }
        Some(raw)
    }
}

/// The scaling view of one link.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Scale {
    /// Smallest size first.
    pub rows: Vec<ScaleRow>,
    /// The global batch kept at every size.
    pub global_batch: Option<u64>,
    pub deadline_hours: Option<f64>,
    /// Index in `rows` of the cheapest size that meets the deadline.
    pub cheapest: Option<usize>,
    /// Why there are no rows.
    pub note: Option<String>,
}

/// The sizes: 1, 2, 4, … nodes below `max`, then `max` itself.
pub fn sizes(max: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut n = 1u64;
    while n < max {
        out.push(n);
        n = n.saturating_mul(2);
    }
    if max >= 1 {
        out.push(max);
    }
    out
}

/// The scaling view for `raw` at `release`, in one go.
pub fn scale(framework: Framework, release: &str, raw: &RawInputs) -> Scale {
    let mut s = Scaling::new(framework, release, raw);
    while !s.step() {}
    s.finish()
}

/// The scaling view as slices of work: each [`Scaling::step`] runs one slice of the current
/// size's planning.
pub struct Scaling {
    framework: Framework,
    release: String,
    link: Report,
    raw: RawInputs,
    gpus_per_node: u64,
    todo: std::vec::IntoIter<u64>,
    current: Option<(ScaleRow, Planning)>,
    out: Scale,
    done: bool,
}

impl Scaling {
    /// Reads the link: its global batch, node shape, deadline and largest size. A scaling that
    /// cannot start is done at once, with its note.
    pub fn new(framework: Framework, release: &str, raw: &RawInputs) -> Scaling {
        let link = framework.compute(release, raw);
        let settings = &link.plan.settings;
        let mut s = Scaling {
            framework,
            release: release.to_string(),
            raw: raw.clone(),
            gpus_per_node: 0,
            todo: Vec::new().into_iter(),
            current: None,
            out: Scale {
                global_batch: link.positive(Output::GlobalBatchSize),
                deadline_hours: match settings.deadline_hours {
                    Param::Given(h) => Some(h),
                    _ => None,
                },
                ..Scale::default()
            },
            done: true,
            link: Report::default(),
        };
        let (Some(shape), Some(_)) = (link.plan.node_shape, s.out.global_batch) else {
            s.out.note = Some("The scaling view needs the cluster and a global batch.".into());
            s.link = link;
            return s;
        };
        let max = match settings.max_nodes {
            Param::Given(n) => n,
            Param::Absent => shape.nodes,
            _ => {
                s.out.note = Some("The scaling view needs a valid max_nodes.".into());
                s.link = link;
                return s;
            }
        };
        s.gpus_per_node = shape.gpus_per_node;
        // a measured speed is the link's own size's: every size takes the factor it fits
        for (f, v) in planner::calibration(&link, raw) {
            s.raw.set(f, &v);
        }
        s.todo = sizes(max).into_iter();
        s.link = link;
        s.done = false;
        s
    }

    /// Runs one slice; `true` when every size is planned.
    pub fn step(&mut self) -> bool {
        if self.done {
            return true;
        }
        match self.current.as_mut() {
            Some((_, planning)) => {
                if planning.step() {
                    if let Some((mut row, planning)) = self.current.take() {
                        let p = planning.finish();
                        row.plan = p.rows.into_iter().next();
                        if row.plan.is_none() {
                            row.note = p.note;
                        }
                        self.out.rows.push(row);
                    }
                }
            }
            None => match self.todo.next() {
                Some(nodes) => self.start(nodes),
                None => self.finish_rows(),
            },
        }
        self.done
    }

    /// The sizes planned so far, smallest first, while the scaling runs (`None` before the first).
    pub fn partial(&self) -> Option<Scale> {
        (!self.done && !self.out.rows.is_empty()).then(|| self.out.clone())
    }

    /// The scaling view (complete once [`Scaling::step`] returned `true`).
    pub fn finish(self) -> Scale {
        self.out
    }

    /// Starts the planning at `nodes`, or records why that size has no plan.
    fn start(&mut self, nodes: u64) {
        let gpus = nodes.saturating_mul(self.gpus_per_node);
        let target = self.out.global_batch.unwrap_or(0);
        let mut row = ScaleRow {
            nodes,
            gpus,
            inputs: RawInputs::default(),
            plan: None,
            note: None,
            meets_deadline: None,
        };
        match at_size(
            self.framework,
            &self.release,
            &self.raw,
            &self.link,
            nodes,
            self.gpus_per_node,
            target,
        ) {
            Some(inputs) => {
                let planning = Planning::new(self.framework, &self.release, &inputs);
                row.inputs = inputs;
                self.current = Some((row, planning));
            }
            None => {
                row.note = Some(format!(
                    "The global batch of {target} cannot be kept on {gpus} GPUs (no layout's data-parallel size divides it)."
                ));
                self.out.rows.push(row);
            }
        }
    }

    /// The deadline marks and the cheapest size that meets the deadline (ties: fewer GPUs).
    fn finish_rows(&mut self) {
        self.done = true;
        let Some(deadline) = self.out.deadline_hours else {
            return;
        };
        for row in &mut self.out.rows {
            row.meets_deadline = row
                .plan
                .as_ref()
                .and_then(|p| p.total_seconds)
                .map(|t| t <= deadline * 3600.0);
        }
        let cost = |r: &ScaleRow| {
            let p = r.plan.as_ref()?;
            p.total_cost.or(p.gpu_hours)
        };
        self.out.cheapest = (self.out.rows.iter().enumerate())
            .filter(|(_, r)| r.meets_deadline == Some(true))
            .filter_map(|(i, r)| cost(r).map(|c| (i, c, r.gpus)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)))
            .map(|(i, _, _)| i);
    }
}

/// The link at `nodes` nodes with its global batch kept: the inputs, or `None` when no starting
/// layout reaches `target` exactly (see the module documentation).
fn at_size(
    framework: Framework,
    release: &str,
    raw: &RawInputs,
    link: &Report,
    nodes: u64,
    gpus_per_node: u64,
    target: u64,
) -> Option<RawInputs> {
    let world = nodes.checked_mul(gpus_per_node)?;
    let mut sized = raw.clone();
    sized.set(Field::Nodes, nodes.to_string());
    sized.set(Field::GpusPerNode, gpus_per_node.to_string());
    sized.set(Field::WorldSize, "");
    let dims = layout::dims_at(framework, release);
    let own: Vec<u64> = (dims.iter())
        .map(|&(_, f)| raw.get(f).trim().parse::<u64>().unwrap_or(1).max(1))
        .collect();
    let micro = link.plan.micro_batch.unwrap_or(1).max(1);
    for sizes in starts(dims, &own, world, gpus_per_node) {
        let product: u64 = sizes.iter().product();
        let dp = layout::batch_dp(dims, &sizes, world / product);
        let Some(m) = [micro, 1]
            .into_iter()
            .find(|&m| m.checked_mul(dp).is_some_and(|x| target % x == 0))
        else {
            continue;
        };
        let ga = target / (m * dp);
        let mut inputs = sized.clone();
        for (&(_, f), s) in dims.iter().zip(&sizes) {
            if *s != 1 || raw.is_given(f) {
                inputs.set(f, s.to_string());
            } else {
                inputs.set(f, "");
            }
        }
        for (f, v) in (framework.spec().layout.fills)(world / product, &sizes) {
            inputs.set(f, v);
        }
        batch_keys(framework, raw, &mut inputs, m, ga, target);
        let r = framework.compute(release, &inputs);
        if !r.has_errors() && r.positive(Output::GlobalBatchSize) == Some(target) {
            return Some(inputs);
        }
    }
    None
}

/// The starting layouts tried at a size, in order: the link's own model-parallel sizes, none,
/// then tensor parallelism up to a node and pipeline parallelism beyond (each product dividing
/// the world).
fn starts(dims: &[(Dim, Field)], own: &[u64], world: u64, gpus_per_node: u64) -> Vec<Vec<u64>> {
    let ones = vec![1; dims.len()];
    let mut out = vec![own.to_vec(), ones.clone()];
    let tp = dims.iter().position(|(d, _)| *d == Dim::Tp);
    let pp = dims.iter().position(|(d, _)| *d == Dim::Pp);
    let mut product = 2u64;
    while product <= world {
        let mut s = ones.clone();
        let t = product.min(gpus_per_node.max(1));
        match (tp, pp) {
            (Some(i), Some(j)) if product % t == 0 => {
                s[i] = t;
                s[j] = product / t;
            }
            (Some(i), None) if product <= gpus_per_node => s[i] = product,
            _ => break,
        }
        out.push(s);
        product = product.saturating_mul(2);
    }
    out.retain(|s| {
        s.iter()
            .try_fold(1u64, |p, &x| p.checked_mul(x))
            .is_some_and(|p| world % p == 0)
    });
    out
}

/// Sets the batch keys for `micro × ga × dp = target`, as the explorer does: the global batch
/// where the link gives it (with the accumulation when that is given too), else the
/// accumulation, else the global batch.
fn batch_keys(
    framework: Framework,
    raw: &RawInputs,
    inputs: &mut RawInputs,
    micro: u64,
    ga: u64,
    target: u64,
) {
    if let Some(f) = framework.field_for(Concept::Micro) {
        inputs.set(f, micro.to_string());
    }
    let accum = framework.field_for(Concept::Accum);
    let global = framework.field_for(Concept::Global);
    let given = |f: Option<Field>| f.is_some_and(|f| raw.is_given(f));
    if given(global) || accum.is_none() {
        if let Some(f) = global {
            inputs.set(f, target.to_string());
        }
        if let Some(f) = accum.filter(|&f| raw.is_given(f)) {
            inputs.set(f, ga.to_string());
        }
    } else if let Some(f) = accum {
        inputs.set(f, ga.to_string());
    }
}

/// The benchmark hook: the scaling view for the planner's benchmark inputs on `nodes` nodes of
/// 8 GPUs (1, 2, 4, … `nodes`). Returns the sizes with a plan.
pub fn bench(framework: Framework, nodes: u64) -> usize {
    let raw = planner::bench_inputs(framework, nodes * 8);
    scale(framework, framework.default_release().id, &raw)
        .rows
        .iter()
        .filter(|r| r.plan.is_some())
        .count()
}
