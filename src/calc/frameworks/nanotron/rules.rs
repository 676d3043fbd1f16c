//! nanotron 0.4 (the PyPI release, the default) and nanotron HEAD `2411b02` (with context
//! parallelism).
//!
//! Mirrors, in this order of execution:
//! - the config parsing, `src/nanotron/config/config.py::get_config_from_dict` (dacite,
//!   `strict=True`) of `ParallelismArgs` (`config/parallelism_config.py`: `dp`, `pp`, `tp` required,
//!   `expert_parallel_size = 1`; HEAD adds `context_parallel_size = 1`) and `TokensArgs`
//!   (`config/config.py`: `sequence_length`, `train_steps`, `micro_batch_size`,
//!   `batch_accumulation_per_replica`, all required, none checked for positivity);
//! - `Config.global_batch_size` (`config/config.py`) = `micro_batch_size ×
//!   batch_accumulation_per_replica × dp`, and the tokens per step the trainer logs
//!   (`trainer.py`: `global_batch_size * sequence_length`; HEAD's `global_batch_size_in_tokens`);
//! - the world-size checks of `ParallelContext.__init__` (`src/nanotron/parallel/context.py`),
//!   which `DistributedTrainer.__init__` runs first: in 0.4 three checks in order (dp divides the
//!   world, `tp·pp·ep` divides the world, `tp·pp·ep·dp` equals it); at HEAD one assertion,
//!   `tp·pp·cp·dp == WORLD_SIZE` (expert parallelism is not in it);
//! - the training loop `for step in range(start + 1, train_steps + 1)` (`trainer.py`).
//!
//! Every error text is what Python prints as the last line of the traceback, checked by running
//! nanotron 0.4's own code (`tests/fixtures/nanotron.txt`).

use crate::calc::cluster;
use crate::calc::field::Reader;
use crate::calc::field::CLUSTER;
use crate::calc::num::Num;
use crate::calc::spec::Release;
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};

/// The releases dpcalc models, newest release (the default) first.
pub const RELEASES: &[Release] = &[
    Release {
        id: "0.4",
        label: "0.4 (PyPI)",
    },
    Release {
        id: "head",
        label: "HEAD 2411b02 (context parallel)",
    },
];

/// The form: nanotron's `parallelism` and `tokens` sections.
pub const GROUPS: &[(&str, &[Field])] = &[
    ("Cluster", CLUSTER),
    (
        "Parallelism",
        &[
            Field::Dp,
            Field::Tp,
            Field::Pp,
            Field::ContextParallelSize,
            Field::ExpertParallelSize,
        ],
    ),
    (
        "Tokens",
        &[
            Field::MicroBatchSize,
            Field::BatchAccumulationPerReplica,
            Field::SequenceLength,
            Field::TrainSteps,
        ],
    ),
];

/// The results, in page order.
pub const OUTPUTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GradientAccumulationSteps,
    Output::GlobalBatchSize,
    Output::TokensPerStep,
    Output::MaxSteps,
    Output::TotalTokens,
];

/// The inputs an embedded view always shows.
pub const KEY_FIELDS: &[Field] = &[
    Field::Nodes,
    Field::GpusPerNode,
    Field::Dp,
    Field::Tp,
    Field::Pp,
    Field::MicroBatchSize,
    Field::BatchAccumulationPerReplica,
    Field::SequenceLength,
];

/// nanotron's names for its results.
pub fn output_label(output: Output) -> Option<(&'static str, &'static str)> {
    Some(match output {
        Output::DpWorldSize => ("Data-parallel replicas", "parallelism.dp"),
        Output::GradientAccumulationSteps => (
            "Micro batches per step",
            "tokens.batch_accumulation_per_replica",
        ),
        Output::GlobalBatchSize => (
            "Global batch (samples per optimizer step)",
            "global_batch_size",
        ),
        Output::TokensPerStep => ("Global batch in tokens", "global_batch_size_in_tokens"),
        Output::MaxSteps => ("Optimizer steps the run takes", "tokens.train_steps"),
        Output::TotalTokens => ("Tokens the run trains on", "total_tokens"),
        _ => return None,
    })
}

/// Which nanotron's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// 0.4: no context parallelism; `tp·pp·ep·dp == world_size`, checked in three steps.
    V04,
    /// HEAD: `tp·pp·cp·dp == world_size`, one assertion; EP not counted.
    Head,
}

impl Version {
    fn from_id(id: &str) -> Version {
        if id == "head" {
            Version::Head
        } else {
            Version::V04
        }
    }
}

/// The inputs, typed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Inputs {
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    world_size: Param<u64>,
    dp: Param<u64>,
    tp: Param<u64>,
    pp: Param<u64>,
    cp: Param<u64>,
    ep: Param<u64>,
    micro_batch_size: Param<u64>,
    batch_accumulation_per_replica: Param<u64>,
    sequence_length: Param<u64>,
    train_steps: Param<u64>,
}

impl Inputs {
    fn parse(raw: &RawInputs, report: &mut Report) -> Inputs {
        let mut r = Reader {
            raw,
            diags: &mut report.diags,
        };
        Inputs {
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
            dp: r.count(Field::Dp),
            tp: r.count(Field::Tp),
            pp: r.count(Field::Pp),
            cp: r.count(Field::ContextParallelSize),
            ep: r.count(Field::ExpertParallelSize),
            micro_batch_size: r.count(Field::MicroBatchSize),
            batch_accumulation_per_replica: r.count(Field::BatchAccumulationPerReplica),
            sequence_length: r.count(Field::SequenceLength),
            train_steps: r.count(Field::TrainSteps),
        }
    }
}

/// The `parallelism` section after nanotron parsed it.
#[derive(Clone, Copy, Debug)]
struct Par {
    dp: u64,
    tp: u64,
    pp: u64,
    /// 1 in 0.4 (it has no such key).
    cp: u64,
    ep: u64,
}

/// The config after nanotron parsed it.
#[derive(Clone, Copy, Debug)]
struct Config {
    dp: u64,
    pp: u64,
    ep: u64,
    mbs: u64,
    accum: u64,
    seq: u64,
    steps: u64,
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; anything else is 0.4).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    let version = Version::from_id(release);
    report.enter(Stage::Grid);
    let ws = cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, &mut report);
    report.enter(Stage::Checks);
    let (par, config) = parse_config(version, &i, &mut report);
    report.enter(Stage::Batch);
    if let Some(c) = config {
        batch(&c, &mut report);
        tokens_checks(version, &c, &mut report);
    }
    // nanotron parses the whole config first; the world check is shown as soon as the
    // parallelism section is complete, so a layout that cannot launch is visible early.
    report.enter(Stage::Grid);
    if let (Some(p), Some(ws)) = (par, ws) {
        let errors = report.diags.len();
        match version {
            Version::V04 => world_checks_04(ws, &p, &mut report),
            Version::Head => world_check_head(ws, &p, &mut report),
        }
        if report.diags[errors..]
            .iter()
            .all(|d| d.level != Level::Error)
        {
            report.publish_grid(crate::calc::Grid {
                world: ws,
                dp: p.dp,
                tp: p.tp,
                cp: p.cp,
                sp: 1,
                pp: p.pp,
                ep: p.ep,
            });
        }
    }
    report
}

/// `get_config_from_dict`: dacite with `strict=True`. A missing required key stops nanotron
/// before anything is computed; so does a key the release does not have.
fn parse_config(version: Version, i: &Inputs, r: &mut Report) -> (Option<Par>, Option<Config>) {
    let mut ok = true;
    let mut required = |field: Field, section: &str, p: Param<u64>, r: &mut Report| match p {
        Param::Given(v) => Some(v),
        Param::Absent => {
            r.diag(
                field,
                Level::Hint,
                format!(
                    "Required: nanotron stops with dacite.exceptions.MissingValueError: missing value for field \"{section}.{}\"",
                    field.key()
                ),
            );
            ok = false;
            None
        }
        Param::Invalid => {
            ok = false;
            None
        }
    };
    let dp = required(Field::Dp, "parallelism", i.dp, r);
    let tp = required(Field::Tp, "parallelism", i.tp, r);
    let pp = required(Field::Pp, "parallelism", i.pp, r);
    let mbs = required(Field::MicroBatchSize, "tokens", i.micro_batch_size, r);
    let accum = required(
        Field::BatchAccumulationPerReplica,
        "tokens",
        i.batch_accumulation_per_replica,
        r,
    );
    let seq = required(Field::SequenceLength, "tokens", i.sequence_length, r);
    let steps = required(Field::TrainSteps, "tokens", i.train_steps, r);
    let ep = i.ep.or(1);
    let cp = match (version, i.cp) {
        (Version::V04, Param::Given(_)) => {
            r.refuse(
                Field::ContextParallelSize,
                Refusal::new(
                    "nanotron 0.4 reads its config with dacite and stops with",
                    "dacite.exceptions.UnexpectedDataError: can not match \"context_parallel_size\" to any \
                     data class field",
                )
                .fix("0.4 has no context parallelism: remove the key, or choose the HEAD release."),
            );
            None
        }
        (Version::V04, p) => p.or(1),
        (Version::Head, p) => p.or(1),
    };
    let par = (|| {
        Some(Par {
            dp: dp?,
            tp: tp?,
            pp: pp?,
            cp: cp?,
            ep: ep?,
        })
    })();
    let config = (|| {
        let p = par?;
        Some(Config {
            dp: p.dp,
            pp: p.pp,
            ep: p.ep,
            mbs: mbs?,
            accum: accum?,
            seq: seq?,
            steps: steps?,
        })
    })()
    .filter(|_| ok);
    (par, config)
}

/// A product too large for dpcalc to count (Python's integers are unbounded).
fn too_large(r: &mut Report, what: &str) {
    r.diag(
        Field::MicroBatchSize,
        Level::Error,
        format!("{what} is too large for dpcalc to count exactly"),
    );
}

/// `Config.global_batch_size`, the tokens per step and the run's length.
fn batch(c: &Config, r: &mut Report) {
    r.set(Output::DpWorldSize, Num::Int(c.dp.into()));
    r.explain(
        Output::DpWorldSize,
        "dp_world_size = parallelism.dp (nanotron takes it as given)",
        format!("dp_world_size = {}", c.dp),
    );
    r.set(Output::GradientAccumulationSteps, Num::Int(c.accum.into()));
    r.explain(
        Output::GradientAccumulationSteps,
        "micro batches per step = tokens.batch_accumulation_per_replica",
        format!("batch_accumulation_per_replica = {}", c.accum),
    );
    r.set(Output::MaxSteps, Num::Int(c.steps.into()));
    r.explain(
        Output::MaxSteps,
        "optimizer steps = tokens.train_steps (the loop runs steps 1 … train_steps)",
        format!("train_steps = {}", c.steps),
    );
    let gbs = u128::from(c.mbs)
        .checked_mul(c.accum.into())
        .and_then(|x| x.checked_mul(c.dp.into()))
        .and_then(|x| i128::try_from(x).ok());
    let Some(gbs) = gbs else {
        return too_large(r, "micro_batch_size × batch_accumulation_per_replica × dp");
    };
    r.set(Output::GlobalBatchSize, Num::Int(gbs));
    r.explain(
        Output::GlobalBatchSize,
        "global_batch_size = micro_batch_size × batch_accumulation_per_replica × dp",
        format!(
            "global_batch_size = {} × {} × {} = {gbs}",
            c.mbs, c.accum, c.dp
        ),
    );
    let Some(tokens) = gbs.checked_mul(c.seq.into()) else {
        return too_large(r, "global_batch_size × sequence_length");
    };
    r.set(Output::TokensPerStep, Num::Int(tokens));
    r.explain(
        Output::TokensPerStep,
        "global_batch_size_in_tokens = global_batch_size × sequence_length",
        format!("global_batch_size_in_tokens = {gbs} × {} = {tokens}", c.seq),
    );
    let Some(total) = tokens.checked_mul(c.steps.into()) else {
        return too_large(r, "train_steps × global_batch_size_in_tokens");
    };
    r.set(Output::TotalTokens, Num::Int(total));
    r.explain(
        Output::TotalTokens,
        "total_tokens = train_steps × global_batch_size_in_tokens",
        format!("total_tokens = {} × {tokens} = {total}", c.steps),
    );
}

/// Values nanotron's config accepts without a check, and what then happens.
fn tokens_checks(version: Version, c: &Config, r: &mut Report) {
    if c.mbs == 0 {
        r.refuse(
            Field::MicroBatchSize,
            Refusal::new(
                "nanotron's config accepts micro_batch_size 0, but the global batch is 0 and the training \
                 dataloader refuses it",
                "ValueError: batch_size should be a positive integer value, but got batch_size=0",
            )
            .fix("Use at least 1."),
        );
    }
    if c.accum == 0 {
        r.diag(
            Field::BatchAccumulationPerReplica,
            Level::Error,
            "batch_accumulation_per_replica 0: nanotron does not check it, but each step would run no micro \
             batch (global batch 0). Use at least 1.",
        );
    }
    if c.seq == 0 {
        r.diag(
            Field::SequenceLength,
            Level::Error,
            "sequence_length 0: nanotron does not check it, but every sample would hold no token. Use at least 1.",
        );
    }
    if c.steps == 0 {
        r.diag(
            Field::TrainSteps,
            Level::Warning,
            "train_steps 0: nanotron accepts it, and its loop (range(1, train_steps + 1)) runs no step.",
        );
    }
    // parallel/pipeline_parallel/engine.py (OneForwardOneBackwardPipelineEngine.train_batch_iter)
    if c.pp > 1 && c.accum < c.pp - 1 {
        r.diag(
            Field::BatchAccumulationPerReplica,
            Level::Warning,
            format!(
                "With pp_engine: 1f1b, nanotron stops with AssertionError: Number of microbatches ({}) must be at \
                 least PP_SIZE-1={} when using the OneForwardOneBackwardPipelineEngine. The default engine (afab) \
                 accepts it.",
                c.accum,
                c.pp - 1
            ),
        );
    }
    if c.ep > 1 && version == Version::Head {
        r.diag(
            Field::ExpertParallelSize,
            Level::Note,
            "At HEAD (dense models) expert_parallel_size is not part of tp × pp × context_parallel_size × dp; \
             0.4 multiplied it in.",
        );
    }
}

/// The product of `factors`, exactly, in decimal (Python's integers do not overflow).
fn product_text(factors: &[u64]) -> String {
    // little-endian base 1e9 limbs
    let mut limbs: Vec<u64> = vec![1];
    for &f in factors {
        let mut carry: u128 = 0;
        for limb in limbs.iter_mut() {
            let v = u128::from(*limb) * u128::from(f) + carry;
            *limb = (v % 1_000_000_000) as u64;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push((carry % 1_000_000_000) as u64);
            carry /= 1_000_000_000;
        }
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut text = limbs.last().map_or(String::new(), |l| l.to_string());
    for l in limbs.iter().rev().skip(1) {
        text.push_str(&format!("{l:09}"));
    }
    text
}

/// The product of `factors`, when it fits.
fn product(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f))
}

/// The field to blame for a model-parallel product (the first factor above 1).
fn model_field(c: &Par, version: Version) -> Field {
    let candidates: &[(Field, u64)] = match version {
        Version::V04 => &[
            (Field::Tp, c.tp),
            (Field::Pp, c.pp),
            (Field::ExpertParallelSize, c.ep),
        ],
        Version::Head => &[
            (Field::Tp, c.tp),
            (Field::Pp, c.pp),
            (Field::ContextParallelSize, c.cp),
        ],
    };
    candidates
        .iter()
        .find(|(_, v)| *v == 0)
        .or_else(|| candidates.iter().find(|(_, v)| *v > 1))
        .map_or(Field::Tp, |(f, _)| *f)
}

/// The fix when `tp·pp[·x]` = `model` and dp do not fill `ws` GPUs.
fn dp_fix(ws: u64, model: Option<u64>, product: &str) -> String {
    match model {
        Some(m) if m > 0 && ws % m == 0 => format!(
            "The dp that fits: world_size // ({product}) = {ws} // {m} = {}.",
            ws / m
        ),
        Some(m) if m > 0 => format!(
            "No dp fits: {product} = {m} does not divide world_size {ws}. {}",
            cluster::nearest_valid(ws, m, product)
        ),
        _ => format!("{product} must be at least 1."),
    }
}

/// nanotron 0.4, `ParallelContext.__init__`: three checks, in this order.
fn world_checks_04(ws: u64, c: &Par, r: &mut Report) {
    const PRODUCT: &str = "tp × pp × expert_parallel_size";
    let model = product(&[c.tp, c.pp, c.ep]);
    // 1. world_size % data_parallel_size
    if c.dp == 0 {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                "ZeroDivisionError: integer modulo by zero",
            )
            .fix(format!("(world_size % dp). {}", dp_fix(ws, model, PRODUCT))),
        );
        return;
    }
    if ws % c.dp != 0 {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                "AssertionError: The total number of processes must be divisible by the data parallel size.",
            )
            .fix(format!(
                "(world_size {ws} % dp {} = {}.) {}",
                c.dp,
                ws % c.dp,
                dp_fix(ws, model, PRODUCT)
            )),
        );
        return;
    }
    // 2. world_size % (tp * pp * ep)
    let at = model_field(c, Version::V04);
    match model {
        Some(0) => {
            r.refuse(
                at,
                Refusal::new(
                    format!("{} 0: nanotron stops with", at.key()),
                    "ZeroDivisionError: integer modulo by zero",
                )
                .fix(format!("(world_size % ({PRODUCT})). Use at least 1.")),
            );
            return;
        }
        // A product beyond u64 is beyond any world size: world_size % it = world_size ≠ 0.
        Some(m) if ws % m == 0 => {}
        _ => {
            let m = product_text(&[c.tp, c.pp, c.ep]);
            let fix = match model {
                Some(m) => cluster::nearest_valid(ws, m, PRODUCT),
                None => format!("{PRODUCT} must be at most world_size {ws}."),
            };
            r.refuse(
                at,
                Refusal::new(
                    "nanotron stops with",
                    "AssertionError: The total number of processes must be divisible bythe number of GPUs \
                     per model (tensor_parallel_size * pipeline_parallel_size).",
                )
                .fix(format!(
                    "({PRODUCT} = {} × {} × {} = {m} does not divide world_size {ws}; 0.4 counts \
                     expert_parallel_size too.) {fix}",
                    c.tp, c.pp, c.ep
                )),
            );
            return;
        }
    }
    // 3. tp * pp * ep * dp == world_size
    let all = product_text(&[c.tp, c.pp, c.ep, c.dp]);
    if all != ws.to_string() {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                format!(
                    "ValueError: ('The number of process requires to run all replicas ({all})', \
                     'must be equal to the world size ({ws}).')"
                ),
            )
            .fix(format!(
                "({PRODUCT} × dp = {} × {} × {} × {} = {all}.) {}",
                c.tp,
                c.pp,
                c.ep,
                c.dp,
                dp_fix(ws, model, PRODUCT)
            )),
        );
    }
}

/// nanotron HEAD, `ParallelContext.__init__` (dense models): one assertion. Its message labels
/// the factors TP*CP*DP*PP but prints them in the order tp, pp, cp, dp.
fn world_check_head(ws: u64, c: &Par, r: &mut Report) {
    const PRODUCT: &str = "tp × pp × context_parallel_size";
    let all = product_text(&[c.tp, c.pp, c.cp, c.dp]);
    if all == ws.to_string() {
        return;
    }
    let model = product(&[c.tp, c.pp, c.cp]);
    let zero = [
        (Field::Tp, c.tp),
        (Field::Pp, c.pp),
        (Field::ContextParallelSize, c.cp),
        (Field::Dp, c.dp),
    ]
    .into_iter()
    .find(|(_, v)| *v == 0)
    .map(|(f, _)| f);
    // Blame dp when a dp would fit, else the model-parallel product.
    let at = zero.unwrap_or(match model {
        Some(m) if m > 0 && ws % m == 0 => Field::Dp,
        _ => model_field(c, Version::Head),
    });
    r.refuse(
        at,
        Refusal::new(
            "nanotron stops with",
            format!(
                "AssertionError: TP*CP*DP*PP={}*{}*{}*{}={all} != WORLD_SIZE={ws}",
                c.tp, c.pp, c.cp, c.dp
            ),
        )
        .fix(format!(
            "(the values are tp, pp, context_parallel_size, dp). {}",
            dp_fix(ws, model, PRODUCT)
        )),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_print_exactly() {
        assert_eq!(product_text(&[]), "1");
        assert_eq!(product_text(&[2, 3, 0]), "0");
        assert_eq!(
            product_text(&[1_000_000_000, 1_000_000_000]),
            "1000000000000000000"
        );
        assert_eq!(
            product_text(&[u64::MAX, u64::MAX]),
            "340282366920938463426481119284349108225"
        );
        assert_eq!(product_text(&[u64::MAX, 1]), u64::MAX.to_string());
    }
}
