//! The layout explorer: for the current world size, every parallel layout the framework can
//! take — each combination of its model-parallel sizes (tensor, context, sequence, pipeline,
//! where it has them) whose product divides the world size — with the data-parallel size, the
//! gradient accumulation that keeps the current global batch at the current micro batch, and
//! the global batch and optimizer steps the framework then computes.
//!
//! Every number in a row is the framework's own: the row's inputs (the user's, with the sizes
//! and the gradient accumulation substituted through [`Framework::field_for`]) go through
//! [`Framework::compute`]. The compute is memoised by what differs between rows: for a fixed
//! world, micro batch and target batch, two rows with the same data-parallel size and the same
//! set of dimensions above 1 get the same batch, steps and messages (the per-framework rules
//! key on `dp` and on whether a dimension is on). `tests/layout.rs` checks the memoised rows
//! against a direct compute of every row. 65,536 GPUs (969 layouts of three dimensions) need
//! 17 distinct data-parallel sizes. The memoised rows' inputs are built in place on one copy of
//! the current inputs (only the fields a row sets change between rows, `Scratch`); the direct
//! compute gives each row a fresh copy.
//!
//! The per-framework dimensions ([`dims`]) are the framework's own config keys:
//! axolotl `tensor_parallel_size`, `context_parallel_size` (and from 0.21.0
//! `expert_parallel_size`, whose rows also set `dp_shard_size` = the rest of the world and
//! `fsdp_config.state_dict_type: FULL_STATE_DICT`, as its expert-parallel checks need; expert
//! ranks read their own data, so a row's batch counts `dp × ep`, [`batch_dp`]); HF Trainer (accelerate
//! `ParallelismConfig`) `tp_size`, `cp_size`, `sp_size`; DeepSpeed `autotp_size`,
//! `sequence_parallel_size`; Megatron `tensor_model_parallel_size`, `context_parallel_size`,
//! `pipeline_model_parallel_size`; torchtitan `tensor_parallel_degree`,
//! `context_parallel_degree`, `pipeline_parallel_degree` (with `data_parallel_shard_degree = -1`
//! filling the rest); nanotron `tp`, `pp` (with `dp = world // (tp × pp)`, which nanotron needs
//! set).
//!
//! With a model, each row also has its memory per GPU ([`Row::memory_bytes`]): the published
//! estimate on the device (`memory_on_device_bytes`) the report makes for the current inputs (`fit::LayoutEstimator`, the model resolved
//! once per explore), on the row's grid ([`row_grid`]) at the current micro batch per GPU; no
//! framework compute, so memoisation does not touch it. [`Explorer::capacity`] is the GPU's memory.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use super::fit::LayoutEstimator;
use super::frameworks::{Concept, Framework};
use super::spec::{MemoKey, RowKey};
use super::{Field, Grid, Level, Num, Output, RawInputs, Report};

pub use super::spec::Dim;

/// A framework's model-parallel dimensions and their config keys, in the order the explorer's
/// columns (and a row's `data-layout`) list them.
pub fn dims(framework: Framework) -> &'static [(Dim, Field)] {
    framework.spec().layout.dims
}

/// The dimensions at a release (the HF Trainer up to 4.52 has tensor parallelism only).
pub fn dims_at(framework: Framework, release: &str) -> &'static [(Dim, Field)] {
    let layout = &framework.spec().layout;
    (layout.dims_at)(release).unwrap_or(layout.dims)
}

/// What else a layout sets so the framework fills the data-parallel size (torchtitan's
/// `data_parallel_shard_degree = -1`, nanotron's `dp`, which has no default, axolotl's
/// `dp_shard_size` and FSDP2 state dict under expert parallelism); `sizes` in the release's
/// dimension order.
fn fills(framework: Framework, dp: u64, sizes: &[u64]) -> Vec<(Field, String)> {
    (framework.spec().layout.fills)(dp, sizes)
}

/// The data-parallel size the batch counts: `dp` times the sizes of the dimensions whose ranks
/// read their own data (expert parallelism, [`Dim::reads_data`]).
pub fn batch_dp(dims: &[(Dim, Field)], sizes: &[u64], dp: u64) -> u64 {
    dims.iter()
        .zip(sizes)
        .filter(|((d, _), _)| d.reads_data())
        .fold(dp, |p, (_, &s)| p.saturating_mul(s))
}

/// The largest world the explorer enumerates (its divisors are found by trial division up to
/// the square root, 4,096 divisions).
pub const MAX_WORLD: u64 = 1 << 24;

/// The most rows listed (a world with very many divisors is cut, and says so).
pub const MAX_ROWS: usize = 20_000;

/// How a row's global batch compares with the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchMatch {
    /// The same global batch.
    Exact,
    /// The nearest achievable; `miss` = row batch − current batch.
    Near { miss: i128 },
    /// No batch to compare (the framework computes none for this row, or there is no current one).
    Unknown,
}

/// One layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// One size per [`dims`] entry.
    pub sizes: Vec<u64>,
    /// `world / product(sizes)`.
    pub dp: u64,
    /// The gradient accumulation the row sets (when the framework takes it as an input and the
    /// current batch is known).
    pub ga: Option<u64>,
    pub batch_match: BatchMatch,
    /// What the framework computes for this row.
    pub dp_world_size: Option<Num>,
    pub gradient_accumulation_steps: Option<Num>,
    pub global_batch_size: Option<Num>,
    pub max_steps: Option<Num>,
    /// The framework's first error for this layout (one the current inputs without model
    /// parallelism do not have), if any.
    pub problem: Option<Rc<str>>,
    /// The memory on the device per GPU by published formulas (`fit::LayoutEstimator::row_memory`):
    /// the estimate the report makes for the current inputs (`memory_on_device_bytes`), on this row's grid at the current micro batch
    /// per GPU. `None` without a model (or what the estimate needs).
    pub memory_bytes: Option<u128>,
}

impl Row {
    pub fn valid(&self) -> bool {
        self.problem.is_none()
    }
}

/// How the rows keep the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Each row sets gradient accumulation to keep the current global batch.
    SetAccumulation,
    /// Each row sets the global batch input (Megatron's `global_batch_size`, DeepSpeed's
    /// `train_batch_size`) to `micro × dp × accumulation`, the achievable batch nearest the
    /// current one, and the framework derives the accumulation (a given accumulation field is
    /// set to match, as DeepSpeed checks all three).
    SetGlobal,
    /// Only the sizes change (the framework has no accumulation input, or no current batch).
    SizesOnly,
}

/// The explorer for one set of inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Explorer {
    pub framework: Framework,
    pub dims: &'static [(Dim, Field)],
    pub world: Option<u64>,
    pub rows: Vec<Row>,
    /// The row of the current inputs.
    pub current: Option<usize>,
    /// The current global batch.
    pub target: Option<u64>,
    /// The current per-replica samples per micro step (`global / (dp × ga)`).
    pub micro: Option<u64>,
    pub mode: Mode,
    /// The accumulation and global-batch fields a row sets (see [`Mode`]).
    pub accum_field: Option<Field>,
    pub global_field: Option<Field>,
    /// Why there are no rows, or that the list is cut.
    pub note: Option<String>,
    /// How many framework computes the rows took (the memo's size).
    pub computes: usize,
    /// The memory the GPU gives PyTorch (`gpu_usable_memory_bytes` of the current report), when known.
    pub capacity: Option<u128>,
    /// Expert parallelism is left out (every row has ep = 1, its column is not shown): the
    /// model has no experts and the link does not set it (`plan::Settings::has_experts`).
    pub no_ep: bool,
    /// The current inputs' own report (what a value missing from every row still needs).
    pub base: Report,
}

impl Explorer {
    /// The dimensions the table shows, with their index in a row's sizes: all of them, but
    /// expert parallelism when it is left out.
    pub fn shown_dims(&self) -> impl Iterator<Item = (usize, Dim, Field)> + '_ {
        (self.dims.iter().enumerate())
            .filter(|(_, (d, _))| !(self.no_ep && *d == Dim::Ep))
            .map(|(i, &(d, f))| (i, d, f))
    }

    /// The row's sizes as a query fragment in the framework's own names, plus what fills the
    /// data-parallel size (`tensor_parallel_size=2&context_parallel_size=1`).
    pub fn query(&self, row: &Row) -> String {
        self.sizes(row)
            .iter()
            .map(|(f, v)| format!("{}={v}", f.key()))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn sizes(&self, row: &Row) -> Vec<(Field, String)> {
        let mut out: Vec<(Field, String)> = self
            .dims
            .iter()
            .zip(&row.sizes)
            .map(|(&(_, f), s)| (f, s.to_string()))
            .collect();
        out.extend(fills(self.framework, row.dp, &row.sizes));
        out
    }

    /// Everything applying the row sets: its sizes, the fills and the gradient accumulation.
    pub fn assignments(&self, row: &Row) -> Vec<(Field, String)> {
        let mut out = self.sizes(row);
        out.extend(batch_fields(
            self.accum_field,
            self.global_field,
            self.micro,
            batch_dp(self.dims, &row.sizes, row.dp),
            row.ga,
        ));
        out
    }

    /// The assignments as a query fragment.
    pub fn apply_query(&self, row: &Row) -> String {
        self.assignments(row)
            .iter()
            .map(|(f, v)| format!("{}={v}", f.key()))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// A column to sort by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// The n-th dimension of [`dims`].
    Size(usize),
    Dp,
    Ga,
    Miss,
    Global,
    Steps,
    /// The memory per GPU ([`Row::memory_bytes`]).
    Memory,
}

/// The row indices sorted by `key` (stable: ties keep the enumeration order); rows without a
/// value go last.
pub fn order(ex: &Explorer, key: SortKey, descending: bool) -> Vec<usize> {
    let value = |r: &Row| -> Option<f64> {
        match key {
            SortKey::Size(i) => r.sizes.get(i).map(|&s| s as f64),
            SortKey::Dp => Some(r.dp as f64),
            SortKey::Ga => r.gradient_accumulation_steps.map(Num::to_f64),
            SortKey::Miss => match r.batch_match {
                BatchMatch::Exact => Some(0.0),
                BatchMatch::Near { miss } => Some((miss as f64).abs()),
                BatchMatch::Unknown => None,
            },
            SortKey::Global => r.global_batch_size.map(Num::to_f64),
            SortKey::Steps => r.max_steps.map(Num::to_f64),
            SortKey::Memory => r.memory_bytes.map(|b| b as f64),
        }
    };
    let mut idx: Vec<usize> = (0..ex.rows.len()).collect();
    idx.sort_by(|&a, &b| {
        let (va, vb) = (value(&ex.rows[a]), value(&ex.rows[b]));
        match (va, vb) {
            (Some(x), Some(y)) => {
                let o = x.total_cmp(&y);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            }
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    });
    idx
}

/// The divisors of `n` in increasing order (`None` above [`MAX_WORLD`] or for 0).
pub fn divisors(n: u64) -> Option<Vec<u64>> {
    if n == 0 || n > MAX_WORLD {
        return None;
    }
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n % d == 0 {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    Some(small)
}

/// How many `k`-tuples of positive integers have a product dividing `n`:
/// `∏ C(a + k, k)` over the prime powers `p^a` of `n`. Independent of the enumeration.
pub fn count_layouts(n: u64, k: u32) -> Option<u64> {
    if n == 0 {
        return None;
    }
    let mut m = n;
    let mut total: u64 = 1;
    let mut p = 2;
    while p * p <= m {
        let mut a = 0u64;
        while m % p == 0 {
            m /= p;
            a += 1;
        }
        if a > 0 {
            total = total.checked_mul(binomial(a + u64::from(k), u64::from(k))?)?;
        }
        p += 1;
    }
    if m > 1 {
        total = total.checked_mul(binomial(1 + u64::from(k), u64::from(k))?)?;
    }
    Some(total)
}

fn binomial(n: u64, k: u64) -> Option<u64> {
    let mut r: u64 = 1;
    for i in 0..k {
        r = r.checked_mul(n - i)? / (i + 1);
    }
    Some(r)
}

/// Every tuple of `k` sizes whose product divides `world`, in lexicographic order, at most
/// [`MAX_ROWS`] (the second value says whether the list is cut); `None` above [`MAX_WORLD`].
pub fn enumerate(world: u64, k: usize) -> Option<(Vec<Vec<u64>>, bool)> {
    let divs = divisors(world)?;
    Some(tuples(world, &divs, k, MAX_ROWS))
}

/// A layout the framework refuses at launch that its module may not model (it is checked only
/// when the framework's own compute gives no error for the row); `sizes` in [`dims`] order.
pub fn launch_refusal(framework: Framework, sizes: &[u64]) -> Option<String> {
    (framework.spec().layout.launch_refusal)(sizes)
}

/// Every tuple of `k` sizes whose product divides `world` (each taken from `divs`, the divisors
/// of `world`), in lexicographic order, at most `limit`.
fn tuples(world: u64, divs: &[u64], k: usize, limit: usize) -> (Vec<Vec<u64>>, bool) {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(k);
    let mut cut = false;
    fn go(
        rest: u64,
        divs: &[u64],
        k: usize,
        cur: &mut Vec<u64>,
        out: &mut Vec<Vec<u64>>,
        limit: usize,
        cut: &mut bool,
    ) {
        if cur.len() == k {
            if out.len() >= limit {
                *cut = true;
            } else {
                out.push(cur.clone());
            }
            return;
        }
        for &d in divs {
            if d > rest {
                break;
            }
            if rest % d == 0 {
                cur.push(d);
                go(rest / d, divs, k, cur, out, limit, cut);
                cur.pop();
                if *cut {
                    return;
                }
            }
        }
    }
    go(world, divs, k, &mut cur, &mut out, limit, &mut cut);
    (out, cut)
}

/// The current size of each dimension (empty = 1; a value axolotl-style 0 counts as 1), or
/// `None` when one is unreadable.
pub fn current_sizes(framework: Framework, raw: &RawInputs) -> Option<Vec<u64>> {
    current_sizes_of(dims(framework), raw)
}

fn current_sizes_of(dims: &[(Dim, Field)], raw: &RawInputs) -> Option<Vec<u64>> {
    super::parse::sizes(dims.iter().map(|&(_, f)| f), raw)
}

/// What the explorer holds fixed across rows.
struct Context<'a> {
    framework: Framework,
    release: &'a str,
    /// The release's dimensions ([`dims_at`]).
    dims: &'static [(Dim, Field)],
    raw: &'a RawInputs,
    world: u64,
    mode: Mode,
    target: Option<u64>,
    micro: Option<u64>,
    accum_field: Option<Field>,
    global_field: Option<Field>,
    /// Errors the framework gives without any model parallelism: not a layout's fault.
    baseline: Vec<String>,
}

/// What a row sets to keep the batch: the accumulation and/or the global batch
/// `micro × dp × ga`.
fn batch_fields(
    accum: Option<Field>,
    global: Option<Field>,
    micro: Option<u64>,
    dp: u64,
    ga: Option<u64>,
) -> Vec<(Field, String)> {
    batch_counts(accum, global, micro, dp, ga)
        .into_iter()
        .flatten()
        .map(|(f, v)| (f, v.to_string()))
        .collect()
}

/// [`batch_fields`] as numbers.
fn batch_counts(
    accum: Option<Field>,
    global: Option<Field>,
    micro: Option<u64>,
    dp: u64,
    ga: Option<u64>,
) -> [Option<(Field, u64)>; 2] {
    let Some(ga) = ga else { return [None, None] };
    let batch = micro
        .and_then(|m| m.checked_mul(dp))
        .and_then(|x| x.checked_mul(ga));
    [accum.map(|f| (f, ga)), global.zip(batch)]
}

/// The accumulation that brings `micro × dp × ga` nearest to `target` (ties: the smaller).
pub fn accumulation_for(target: u64, micro: u64, dp: u64) -> Option<u64> {
    let per = micro.checked_mul(dp)?;
    if per == 0 {
        return None;
    }
    let lo = (target / per).max(1);
    let hi = lo.checked_add(1)?;
    let err = |g: u64| (i128::from(per) * i128::from(g) - i128::from(target)).abs();
    Some(if target % per == 0 || err(lo) <= err(hi) {
        lo
    } else {
        hi
    })
}

/// The computed part of a row (shared by rows with the same key).
#[derive(Clone)]
struct Computed {
    batch_match: BatchMatch,
    dp_world_size: Option<Num>,
    gradient_accumulation_steps: Option<Num>,
    global_batch_size: Option<Num>,
    max_steps: Option<Num>,
    /// Shared: every row of one memo entry (up to hundreds) holds the same message.
    problem: Option<Rc<str>>,
}

/// A row's inputs, built in place: the current inputs with what the row sets
/// ([`Context::set_row`]). Cloning every field's text for each row cost more than most
/// frameworks' computes; consecutive rows mostly set the same fields, many to the same text.
struct Scratch {
    raw: RawInputs,
    /// The fields the last row set.
    set: Vec<Field>,
    /// The fields the row being built sets.
    next: Vec<Field>,
}

impl Scratch {
    fn new(raw: &RawInputs) -> Scratch {
        Scratch {
            raw: raw.clone(),
            set: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Sets `field` to `text` for the row being built (`RawInputs::set` also settles a conflict
    /// at the field; a field that already holds `text` and no conflict is left as it is).
    fn put(&mut self, field: Field, text: &str) {
        if self.raw.get(field) != text || self.raw.conflict(field).is_some() {
            self.raw.set(field, text);
        }
        self.next.push(field);
    }

    /// Ends the row being built: a field the last row set and this one does not goes back to
    /// what it is in `base`, its text or the values given more than once. The inputs are then
    /// `base` with this row's fields set: the same text at every field and the same conflicts
    /// (a conflict is looked up by its field, so its place in the list is not observable).
    fn finish(&mut self, base: &RawInputs) {
        for f in self.set.drain(..) {
            if self.next.contains(&f) {
                continue;
            }
            match base.conflict(f) {
                Some(values) => self.raw.set_conflict(f, values.to_vec()),
                None => self.raw.set(f, base.get(f)),
            }
        }
        std::mem::swap(&mut self.set, &mut self.next);
    }
}

/// `n` in decimal, written in `buf` (what `n.to_string()` gives, without an allocation).
fn decimal(n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

impl Context<'_> {
    /// Builds a row's inputs on the scratch inputs: its sizes, the fills and the batch fields,
    /// as [`Context::inputs`] sets them.
    fn set_row(&self, scratch: &mut Scratch, sizes: &[u64], dp: u64, ga: Option<u64>) {
        let mut buf = [0; 20];
        for (&(_, f), &s) in self.dims.iter().zip(sizes) {
            scratch.put(f, decimal(s, &mut buf));
        }
        for (f, v) in fills(self.framework, dp, sizes) {
            scratch.put(f, &v);
        }
        let data = batch_dp(self.dims, sizes, dp);
        let batch = batch_counts(self.accum_field, self.global_field, self.micro, data, ga);
        for (f, v) in batch.into_iter().flatten() {
            scratch.put(f, decimal(v, &mut buf));
        }
        scratch.finish(self.raw);
    }

    /// A row's inputs as a value of their own.
    fn inputs(&self, sizes: &[u64], dp: u64, ga: Option<u64>) -> RawInputs {
        let mut raw = self.raw.clone();
        for (&(_, f), s) in self.dims.iter().zip(sizes) {
            raw.set(f, s.to_string());
        }
        for (f, v) in fills(self.framework, dp, sizes) {
            raw.set(f, v);
        }
        let data = batch_dp(self.dims, sizes, dp);
        for (f, v) in batch_fields(self.accum_field, self.global_field, self.micro, data, ga) {
            raw.set(f, v);
        }
        raw
    }

    fn ga(&self, dp: u64) -> Option<u64> {
        match self.mode {
            Mode::SetAccumulation | Mode::SetGlobal => {
                accumulation_for(self.target?, self.micro?, dp)
            }
            Mode::SizesOnly => None,
        }
    }

    /// The framework's compute for a row: on the scratch inputs when given (the memoised
    /// explore), else on inputs of its own ([`Context::inputs`], the direct one, which
    /// `tests/layout.rs` compares with it).
    fn compute(&self, scratch: Option<&mut Scratch>, sizes: &[u64]) -> Computed {
        let product: u64 = sizes.iter().product();
        let dp = self.world / product;
        let ga = self.ga(batch_dp(self.dims, sizes, dp));
        let report = match scratch {
            Some(scratch) => {
                self.set_row(scratch, sizes, dp, ga);
                self.framework.compute_rules(self.release, &scratch.raw)
            }
            None => self
                .framework
                .compute_rules(self.release, &self.inputs(sizes, dp, ga)),
        };
        let global = report.value(Output::GlobalBatchSize);
        // a whole float is the same batch (DeepSpeed's float division once
        // `sequence_parallel_size` is given)
        let whole = match global {
            Some(Num::Int(g)) => Some(g),
            Some(Num::Float(g)) if g.fract() == 0.0 && g.abs() < 9.0e15 => Some(g as i128),
            _ => None,
        };
        let fit = match (whole, self.target) {
            (Some(g), Some(t)) if g == i128::from(t) => BatchMatch::Exact,
            (Some(g), Some(t)) => BatchMatch::Near {
                miss: g - i128::from(t),
            },
            _ => BatchMatch::Unknown,
        };
        let (dp_world_size, gradient_accumulation_steps, max_steps) = (
            report.value(Output::DpWorldSize),
            report.value(Output::GradientAccumulationSteps),
            report.value(Output::MaxSteps),
        );
        // the first new error's message, taken from the report rather than copied
        let problem = report
            .diags
            .into_iter()
            .find(|d| d.level == Level::Error && !self.baseline.contains(&d.message))
            .map(|d| d.message)
            .or_else(|| launch_refusal(self.framework, sizes))
            .map(Rc::from);
        Computed {
            batch_match: fit,
            dp_world_size,
            gradient_accumulation_steps,
            global_batch_size: global,
            max_steps,
            problem,
        }
    }
}

/// A row's memo key ([`memo_key`]).
type MemoKeyValue = (u64, u32, u64, u64);

/// The memo's hasher: a multiply-rotate mix of the key's few integers. The memo is rebuilt for
/// every explore from small numbers; SipHash showed in the explorer's profile in the browser.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What a row's computed numbers and messages depend on, besides the inputs every row shares:
/// its data-parallel size, which of its dimensions are above 1, and what the framework's own
/// memo rule (`Spec::layout.memo`) adds: the sizes its rules or messages use one by one. That
/// rule is the one place to widen if a framework gains a rule on a dimension's value
/// (`memoised_rows_equal_direct_compute` in `tests/layout.rs` checks every framework against the
/// direct compute).
fn memo_key(extra: &MemoKey, sizes: &[u64], dp: u64) -> (MemoKeyValue, bool) {
    let mask = sizes
        .iter()
        .enumerate()
        .fold(0u32, |m, (i, &s)| if s > 1 { m | (1 << i) } else { m });
    match extra(sizes) {
        RowKey::Sizes(a, b) => ((dp, mask, a, b), false),
        // no row has a data-parallel size of 0: these keys are apart from every other
        RowKey::Refused(a, b) => ((0, 0, a, b), true),
    }
}

/// A row's grid: the current grid (`template`, for what the rows keep, such as Megatron's expert
/// parallel size) with the row's sizes, and as its data-parallel size the one the batch counts
/// ([`batch_dp`]).
pub fn row_grid(template: Grid, dims: &[(Dim, Field)], sizes: &[u64], dp: u64) -> Grid {
    let mut g = template;
    for (&(d, _), &s) in dims.iter().zip(sizes) {
        match d {
            Dim::Tp => g.tp = s,
            Dim::Cp => g.cp = s,
            Dim::Sp => g.sp = s,
            Dim::Pp => g.pp = s,
            Dim::Ep => g.ep = s,
        }
    }
    g.dp = batch_dp(dims, sizes, dp);
    g
}

/// Lists every layout for the current inputs, memoised (see the module documentation).
pub fn explore(framework: Framework, release: &str, raw: &RawInputs) -> Explorer {
    build(framework, release, raw, true, true, None)
}

/// The same rows without their memory: what the framework's rules say of each (the planner's
/// first pass, which estimates each plan's memory and time itself).
pub fn explore_rules(framework: Framework, release: &str, raw: &RawInputs) -> Explorer {
    build(framework, release, raw, true, false, None)
}

/// [`explore_rules`] with the rows keeping the global batch `target` rather than the one `raw`
/// gives: the planner's pass at another micro batch than a link's keeps the link's batch (a link
/// that sets the accumulation would otherwise give a batch of that micro batch × the link's
/// accumulation), each row's accumulation derived to keep it.
pub fn explore_rules_keeping(
    framework: Framework,
    release: &str,
    raw: &RawInputs,
    target: u64,
) -> Explorer {
    build(framework, release, raw, true, false, Some(target))
}

/// The same rows, each computed directly (for tests and comparisons; slower).
pub fn explore_direct(framework: Framework, release: &str, raw: &RawInputs) -> Explorer {
    build(framework, release, raw, false, true, None)
}

/// The benchmark hook: the explorer for `nodes × gpus_per_node` GPUs with axolotl's defaults
/// otherwise (`num_samples` given so that steps are computed). Returns the row count.
pub fn bench(framework: Framework, world: u64) -> usize {
    let mut raw = RawInputs::default();
    raw.set(Field::WorldSize, world.to_string());
    if let Some(f) = framework.field_for(Concept::Samples) {
        raw.set(f, "1000000");
    }
    explore(framework, framework.default_release().id, &raw)
        .rows
        .len()
}

/// The explorer: the framework's own report on the inputs (`base`), then every layout's row.
/// Its phases: the explorer's frame ([`frame`]), what a row keeps of the batch ([`batch_mode`]),
/// the rows' shared context with the errors no layout causes ([`context`]), the layouts
/// ([`layouts`]) and their rows ([`fill_rows`]). `keep`: the global batch the rows keep, when
/// not `base`'s.
fn build(
    framework: Framework,
    release: &str,
    raw: &RawInputs,
    memo: bool,
    with_memory: bool,
    keep: Option<u64>,
) -> Explorer {
    let dims = dims_at(framework, release);
    let base = framework.compute(release, raw);
    let mut ex = frame(framework, dims, raw, &base);
    let Some(world) = ex.world else {
        ex.base = base;
        ex.note = Some("The layouts need a valid world size.".into());
        return ex;
    };
    let Some(divs) = divisors(world) else {
        ex.note = Some(format!(
            "{world} GPUs: the explorer lists layouts for up to {MAX_WORLD} GPUs."
        ));
        ex.base = base;
        return ex;
    };
    batch_mode(&mut ex, raw, &base);
    // the per-replica micro batch stays `base`'s; the rows keep `keep`
    if let (Some(t), Mode::SetAccumulation | Mode::SetGlobal) = (keep, ex.mode) {
        ex.target = Some(t);
    }
    let ctx = context(&ex, release, raw, world);
    let all = layouts(&mut ex, world, &divs);
    // the rows keep values and messages, never worked steps
    super::report::quietly(|| fill_rows(&mut ex, &ctx, all, &base, memo, with_memory));
    ex.base = base;
    ex
}

/// The explorer before its rows: the world size, the target batch and the memory capacity of
/// the framework's report, and whether expert parallelism is left out.
fn frame(
    framework: Framework,
    dims: &'static [(Dim, Field)],
    raw: &RawInputs,
    base: &Report,
) -> Explorer {
    let mut ex = Explorer {
        framework,
        dims,
        world: base.positive(Output::WorldSize),
        rows: Vec::new(),
        current: None,
        target: base.positive(Output::GlobalBatchSize),
        micro: None,
        mode: Mode::SizesOnly,
        accum_field: None,
        global_field: None,
        note: None,
        computes: 0,
        capacity: base.estimated.gpu_memory.filter(|&b| b > 0),
        no_ep: false,
        base: Report::default(),
    };
    // expert parallelism only for a model with experts, or when the link sets it
    let ep_set = (dims.iter())
        .filter(|(d, _)| *d == Dim::Ep)
        .any(|&(_, f)| !matches!(raw.get(f).trim(), "" | "1"));
    ex.no_ep =
        dims.iter().any(|(d, _)| *d == Dim::Ep) && !ep_set && !base.plan.settings.has_experts;
    ex
}

/// What each row keeps of the batch: the per-replica samples of one micro step, and which
/// field a row sets (the accumulation, the global batch, or neither).
fn batch_mode(ex: &mut Explorer, raw: &RawInputs, base: &Report) {
    let framework = ex.framework;
    // The per-replica samples of one micro step, as the framework computed them.
    ex.micro = match (
        ex.target,
        base.positive(Output::DpWorldSize),
        base.positive(Output::GradientAccumulationSteps),
    ) {
        (Some(t), Some(dp), Some(ga)) => dp.checked_mul(ga).filter(|&d| t % d == 0).map(|d| t / d),
        _ => None,
    };
    let accum = framework.field_for(Concept::Accum);
    let global = framework.field_for(Concept::Global);
    let given = |f: Option<Field>| f.is_some_and(|f| raw.is_given(f));
    let known = ex.target.is_some() && ex.micro.is_some();
    (ex.mode, ex.accum_field, ex.global_field) = if !known {
        (Mode::SizesOnly, None, None)
    } else if given(global) {
        (Mode::SetGlobal, accum.filter(|&f| given(Some(f))), global)
    } else if accum.is_some() {
        (Mode::SetAccumulation, accum, None)
    } else if global.is_some() {
        (Mode::SetGlobal, None, global)
    } else {
        (Mode::SizesOnly, None, None)
    };
}

/// What every row is computed from, with the errors the framework gives without any model
/// parallelism (not a layout's fault).
fn context<'a>(ex: &Explorer, release: &'a str, raw: &'a RawInputs, world: u64) -> Context<'a> {
    let (framework, dims) = (ex.framework, ex.dims);
    let mut ctx = Context {
        framework,
        release,
        dims,
        raw,
        world,
        mode: ex.mode,
        target: ex.target,
        micro: ex.micro,
        accum_field: ex.accum_field,
        global_field: ex.global_field,
        baseline: Vec::new(),
    };
    let ones = vec![1; dims.len()];
    let dp1 = world;
    let base1 = framework.compute_rules(release, &ctx.inputs(&ones, dp1, ctx.ga(dp1)));
    ctx.baseline = base1
        .diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| d.message.clone())
        .collect();
    ctx
}

/// The layouts listed: the sizes of every dimension whose product divides the world (at most
/// [`MAX_ROWS`], with a note when cut), without expert parallelism when it is left out.
fn layouts(ex: &mut Explorer, world: u64, divs: &[u64]) -> Vec<Vec<u64>> {
    let dims = ex.dims;
    let (mut all, cut) = tuples(world, divs, dims.len(), MAX_ROWS);
    if ex.no_ep {
        all.retain(|sizes| (dims.iter().zip(sizes)).all(|((d, _), &s)| *d != Dim::Ep || s == 1));
    }
    if cut {
        ex.note = Some(format!(
            "{world} GPUs have more than {MAX_ROWS} layouts; the first {MAX_ROWS} are listed."
        ));
    }
    all
}

/// Each layout's row: the framework's rules on the row's inputs (memoised by [`memo_key`]
/// unless `memo` is off) and, `with_memory`, its memory per GPU.
fn fill_rows(
    ex: &mut Explorer,
    ctx: &Context,
    all: Vec<Vec<u64>>,
    base: &Report,
    memo: bool,
    with_memory: bool,
) {
    let (framework, release, raw, dims, world) =
        (ctx.framework, ctx.release, ctx.raw, ctx.dims, ctx.world);
    let current = current_sizes_of(dims, raw);
    // the memo: each key's index in `computed`
    let mut cache: HashMap<MemoKeyValue, usize, BuildHasherDefault<KeyHasher>> =
        HashMap::with_capacity_and_hasher(all.len(), Default::default());
    let mut computed: Vec<Computed> = Vec::new();
    let mut scratch = Scratch::new(raw);
    let extra = (framework.spec().layout.memo)(release, raw);
    // the model and the training settings, resolved once; each row's memory is arithmetic
    let memory = base
        .grid
        .filter(|_| with_memory)
        .and_then(|g| Some((g, LayoutEstimator::new(base, framework.spec().mesh.order)?)));
    ex.rows.reserve_exact(all.len());
    for sizes in all {
        let product: u64 = sizes.iter().product();
        let dp = world / product;
        let ga = ctx.ga(batch_dp(dims, &sizes, dp));
        let c = if memo {
            let (key, refused) = memo_key(&extra, &sizes, dp);
            let i = *cache.entry(key).or_insert_with(|| {
                computed.push(ctx.compute(Some(&mut scratch), &sizes));
                computed.len() - 1
            });
            let mut c = computed[i].clone();
            // a refused row's entry is another row's: of its values, only the accumulation it
            // sets is its own (the framework echoes it)
            if let (true, Some(g), Some(_)) = (refused, ga, ctx.accum_field) {
                c.gradient_accumulation_steps = Some(Num::Int(g.into()));
            }
            c
        } else {
            ex.computes += 1;
            ctx.compute(None, &sizes)
        };
        if current.as_deref() == Some(sizes.as_slice()) {
            ex.current = Some(ex.rows.len());
        }
        let memory_bytes = memory
            .as_ref()
            .and_then(|(g, m)| m.row_memory(row_grid(*g, dims, &sizes, dp), m.micro));
        ex.rows.push(Row {
            sizes,
            dp,
            ga,
            batch_match: c.batch_match,
            dp_world_size: c.dp_world_size,
            gradient_accumulation_steps: c.gradient_accumulation_steps,
            global_batch_size: c.global_batch_size,
            max_steps: c.max_steps,
            problem: c.problem,
            memory_bytes,
        });
    }
    if memo {
        ex.computes = computed.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scratch inputs of a row are the current ones with the row's fields set, whatever the
    /// rows before set: every other field's text and conflict (a field given twice, which a
    /// row's value settles) come back.
    #[test]
    fn scratch_rows_are_the_current_inputs_with_their_fields() {
        let mut base = RawInputs::default();
        base.set(Field::WorldSize, "48");
        base.set(Field::GradientAccumulationSteps, " 3 ");
        base.set_conflict(Field::TensorParallelSize, vec!["2".into(), "4".into()]);
        base.set_conflict(Field::DpShardSize, vec!["x".into(), "y".into(), "z".into()]);
        let same = |a: &RawInputs, b: &RawInputs| {
            Field::ALL
                .iter()
                .all(|&f| a.get(f) == b.get(f) && a.conflict(f) == b.conflict(f))
        };
        let rows: &[&[(Field, &str)]] = &[
            &[(Field::TensorParallelSize, "1"), (Field::WorldSize, "8")],
            // set twice in one row (a fill and a size may name the same field)
            &[
                (Field::TensorParallelSize, "2"),
                (Field::DpShardSize, "2"),
                (Field::DpShardSize, "4"),
            ],
            &[(Field::TensorParallelSize, "2"), (Field::WorldSize, "8")],
            &[(Field::GradientAccumulationSteps, "3")],
            &[],
            &[(Field::DpShardSize, "x"), (Field::TensorParallelSize, "4")],
            &[(Field::TensorParallelSize, "4")],
            // a conflict's text is empty: setting it empty still settles the conflict
            &[(Field::DpShardSize, "")],
        ];
        let mut scratch = Scratch::new(&base);
        for (i, row) in rows.iter().enumerate() {
            let mut direct = base.clone();
            for &(f, v) in *row {
                scratch.put(f, v);
                direct.set(f, v);
            }
            scratch.finish(&base);
            assert!(same(&scratch.raw, &direct), "row {i}");
        }
        let mut buf = [0; 20];
        for n in [0, 7, 10, 65_536, u64::MAX] {
            assert_eq!(decimal(n, &mut buf), n.to_string());
        }
    }

    #[test]
    fn batch_fields_keep_the_three_consistent() {
        // DeepSpeed with train_batch_size and gradient_accumulation_steps given: both are set,
        // train_batch_size = micro × dp × ga
        let f = batch_fields(
            Some(Field::GradientAccumulationSteps),
            Some(Field::TrainBatchSize),
            Some(2),
            4,
            Some(3),
        );
        assert_eq!(
            f,
            vec![
                (Field::GradientAccumulationSteps, "3".to_string()),
                (Field::TrainBatchSize, "24".to_string())
            ]
        );
        // Megatron: only global_batch_size
        let f = batch_fields(None, Some(Field::GlobalBatchSize), Some(1), 8, Some(2));
        assert_eq!(f, vec![(Field::GlobalBatchSize, "16".to_string())]);
        assert!(batch_fields(None, Some(Field::GlobalBatchSize), Some(1), 8, None).is_empty());
        // an overflowing batch sets nothing for it
        let f = batch_fields(
            None,
            Some(Field::GlobalBatchSize),
            Some(u64::MAX),
            2,
            Some(1),
        );
        assert!(f.is_empty());
        assert_eq!(
            memo_key(
                &(Framework::default().spec().layout.memo)("", &RawInputs::default()),
                &[1, 4, 1],
                2
            ),
            ((2, 0b010, 1, 1), false)
        );
        // a row refused for two sizes alone: one key whatever its other sizes and dp
        let refused: MemoKey = Box::new(|s| match *s {
            [_, a, b] if a > 1 && b > 1 => RowKey::Refused(a, b),
            _ => RowKey::Sizes(1, 1),
        });
        assert_eq!(memo_key(&refused, &[4, 2, 8], 2), ((0, 0, 2, 8), true));
        assert_eq!(
            memo_key(&refused, &[1, 2, 8], 8).0,
            memo_key(&refused, &[4, 2, 8], 2).0
        );
        assert_eq!(memo_key(&refused, &[4, 1, 8], 2), ((2, 0b101, 1, 1), false));
    }
}
