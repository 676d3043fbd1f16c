//! nanotron 0.4 (the PyPI release, the default) and nanotron HEAD `2411b02` (2026-04-07, with
//! context parallelism).
//!
//! Mirrors, in `DistributedTrainer.__init__`'s order of execution:
//! - the config parsing, `src/nanotron/config/config.py::get_config_from_dict` (dacite,
//!   `strict=True`) of `ParallelismArgs` (`config/parallelism_config.py`: `dp`, `pp`, `tp` required,
//!   `expert_parallel_size = 1`; HEAD adds `context_parallel_size = 1`) and `TokensArgs`
//!   (`config/config.py`: `sequence_length`, `train_steps`, `micro_batch_size`,
//!   `batch_accumulation_per_replica`, all required, none checked for positivity). dacite stops at
//!   the first missing key, in section then field order (dp, pp, tp; sequence_length,
//!   train_steps, micro_batch_size, batch_accumulation_per_replica), and only that one is named
//!   with its `MissingValueError`. nanotron then computes nothing; dpcalc still shows each value
//!   whose own factors were typed (what nanotron's properties give on the keys given, as recorded
//!   at HEAD), and the world-size check once the parallelism section is complete;
//! - HEAD's `Config.__post_init__` model checks: `num_attention_heads % tp` (tp 0 stops here with
//!   a ZeroDivisionError), `num_attention_heads >= num_key_value_heads`,
//!   `num_key_value_heads >= tp`, `num_attention_heads % num_key_value_heads` (checked when
//!   `model.model_config.num_attention_heads` is typed; 0.4 has none of them);
//! - `Config.global_batch_size` (`config/config.py`) = `micro_batch_size ×
//!   batch_accumulation_per_replica × dp` (cp is not in it), and the tokens per step the trainer
//!   logs (`trainer.py`: `global_batch_size * sequence_length`; HEAD's
//!   `global_batch_size_in_tokens`);
//! - the world-size checks of `ParallelContext.__init__` (`src/nanotron/parallel/context.py`): in
//!   0.4 three checks in order (dp divides the world, `tp·pp·ep` divides the world, `tp·pp·ep·dp`
//!   equals it); at HEAD one assertion, `tp·pp·cp·dp == WORLD_SIZE` (expert parallelism is not in
//!   it), then `_init_parallel_groups`' `arange(world_size).reshape(ep, pp, dp, cp, tp)`, which
//!   refuses any `expert_parallel_size` other than 1;
//! - HEAD with dummy data (`run_train.py`, `dummy_infinite_data_generator`):
//!   `sequence_length % context_parallel_size == 0`;
//! - the training loop `for step in range(start + 1, train_steps + 1)` (`trainer.py`).
//!
//! Every error text is what Python prints as the last line of the traceback, checked by running
//! nanotron's own code (`tests/fixtures/nanotron.txt`: 0.4 in `nanotron-1`, HEAD 2411b02 in
//! `nanotronhead-1`).

use crate::calc::cluster;
use crate::calc::field::CLUSTER;
use crate::calc::num::Num;
use crate::calc::parse::Reader;
use crate::calc::spec::{self, Release, ReleaseTable};
use crate::calc::{Field, Level, Output, Param, RawInputs, Refusal, Report, Stage};

/// The releases dpcalc models with the rules of each, newest release (the default) first.
const TABLE: ReleaseTable<Version, 2> = [
    (
        Release {
            id: "0.4",
            label: "0.4 (PyPI)",
        },
        Version::V04,
    ),
    (
        Release {
            id: "head",
            label: "HEAD 2411b02, 2026-04-07 (context parallel)",
        },
        Version::Head,
    ),
];

/// The releases dpcalc models, newest release (the default) first (`TABLE`'s).
pub const RELEASES: &[Release] = &spec::releases(&TABLE);

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
    ("Model & memory", &[Field::ModelId, Field::RecomputeLayer]),
    (
        crate::calc::field::ARCHITECTURE_TITLE,
        &[
            Field::ModelType,
            Field::HiddenSize,
            Field::NumHiddenLayers,
            Field::NumAttentionHeads,
            Field::NumKeyValueHeads,
            Field::HeadDim,
            Field::IntermediateSize,
            Field::VocabSize,
            Field::TieWordEmbeddings,
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
    /// The rules of release `id` ([`spec::release_at`]: an id not in [`RELEASES`] gets the
    /// default's).
    pub fn at(id: &str) -> Version {
        spec::release_at(&TABLE, id).1
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
    num_attention_heads: Param<u64>,
    num_key_value_heads: Param<u64>,
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
            num_attention_heads: r.count(Field::NumAttentionHeads),
            num_key_value_heads: r.count(Field::NumKeyValueHeads),
        }
    }
}

/// Computes everything by the rules of `release` (an id of [`RELEASES`]; an unknown id gets the
/// default's, [`Version::at`]).
pub fn compute_release(release: &str, raw: &RawInputs) -> Report {
    let mut report = Report::default();
    let i = Inputs::parse(raw, &mut report);
    let version = Version::at(release);
    report.plan.seq_len = i.sequence_length.positive_or(None);
    report.enter(Stage::Grid);
    let ws = cluster::world_size(i.nodes, i.gpus_per_node, i.world_size, &mut report);
    report.enter(Stage::Checks);
    let parsed = parse_config(version, &i, &mut report);
    // HEAD's Config.__post_init__ runs once the whole config parses
    let post_init = version == Version::Head && parsed.complete;
    let tp_refused = post_init && i.tp == Param::Given(0);
    if let (true, Some(p)) = (post_init, parsed.par) {
        let then = ws.map(|ws| head_assertion(ws, &p));
        model_checks(
            p.tp,
            i.num_attention_heads,
            i.num_key_value_heads,
            then,
            &mut report,
        );
    }
    report.enter(Stage::Batch);
    if let Some(g) = &parsed.given {
        batch(g, &mut report);
        tokens_checks(g, &mut report);
    }
    // nanotron parses the whole config first; the world check is shown as soon as the
    // parallelism section is complete, so a layout that cannot launch is visible early.
    report.enter(Stage::Grid);
    if let (Some(p), Some(ws)) = (parsed.par, ws) {
        let errors = report.diags.len();
        match version {
            Version::V04 => world_checks_04(ws, &p, &mut report),
            Version::Head => world_check_head(ws, &p, tp_refused, &mut report),
        }
        let launched = report.diags[errors..]
            .iter()
            .all(|d| d.level != Level::Error);
        if launched {
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
        // after ParallelContext, the dummy data generator (HEAD)
        if let (true, Version::Head, Param::Given(seq)) = (launched, version, i.sequence_length) {
            report.enter(Stage::Batch);
            sequence_check(seq, p.cp, &mut report);
        }
    }
    report
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

/// The keys that were typed and read, for the values nanotron's own properties compute from
/// them (`None`: absent). When the whole config parses, every one is given.
#[derive(Clone, Copy, Debug)]
struct Given {
    dp: Option<u64>,
    pp: Option<u64>,
    mbs: Option<u64>,
    accum: Option<u64>,
    seq: Option<u64>,
    steps: Option<u64>,
}

/// What `get_config_from_dict` made of the inputs.
#[derive(Clone, Copy, Debug)]
struct Parsed {
    /// The `parallelism` section, when it parses on its own (ParallelContext can then run).
    par: Option<Par>,
    /// The values typed, unless a value is unreadable or a key is one the release lacks (then
    /// dpcalc shows no value at all).
    given: Option<Given>,
    /// The whole config parses: `Config.__post_init__` runs.
    complete: bool,
}

/// The required keys in the order dacite meets them: `Config`'s sections (parallelism before
/// tokens), then each dataclass's field order (`ParallelismArgs`: dp, pp, tp; `TokensArgs`:
/// sequence_length, train_steps, micro_batch_size, batch_accumulation_per_replica). The same in
/// 0.4 and at HEAD.
const REQUIRED: &[(Field, &str)] = &[
    (Field::Dp, "parallelism"),
    (Field::Pp, "parallelism"),
    (Field::Tp, "parallelism"),
    (Field::SequenceLength, "tokens"),
    (Field::TrainSteps, "tokens"),
    (Field::MicroBatchSize, "tokens"),
    (Field::BatchAccumulationPerReplica, "tokens"),
];

/// `get_config_from_dict`: dacite with `strict=True`. nanotron stops at the first problem it
/// meets (a key the release does not have, checked per section before its fields, or the first
/// missing required key) and computes nothing; dpcalc names that one as nanotron does and still
/// shows what nanotron's own properties (`Config.global_batch_size`, ...) compute from the keys
/// that were typed.
fn parse_config(version: Version, i: &Inputs, r: &mut Report) -> Parsed {
    let param = |f: Field| match f {
        Field::Dp => i.dp,
        Field::Pp => i.pp,
        Field::Tp => i.tp,
        Field::SequenceLength => i.sequence_length,
        Field::TrainSteps => i.train_steps,
        Field::MicroBatchSize => i.micro_batch_size,
        _ => i.batch_accumulation_per_replica,
    };
    let unexpected_cp = version == Version::V04 && matches!(i.cp, Param::Given(_));
    if unexpected_cp {
        r.refuse(
            Field::ContextParallelSize,
            Refusal::new(
                "nanotron 0.4 reads its config with dacite and stops with",
                "dacite.exceptions.UnexpectedDataError: can not match \"context_parallel_size\" to any \
                 data class field",
            )
            .fix("0.4 has no context parallelism: remove the key, or choose the HEAD release."),
        );
    }
    // dacite names only the first missing key; the others are hints without nanotron's words
    let mut named = unexpected_cp;
    for &(field, section) in REQUIRED {
        if param(field) != Param::Absent {
            continue;
        }
        let key = format!("\"{section}.{}\"", field.key());
        let message = if named {
            format!(
                "Required: {key} is missing too (nanotron's dacite error names only the first missing key)."
            )
        } else {
            format!(
                "Required: nanotron stops with dacite.exceptions.MissingValueError: missing value for field {key}"
            )
        };
        r.diag(field, Level::Hint, message);
        named = true;
    }
    let invalid = [
        i.dp,
        i.tp,
        i.pp,
        i.cp,
        i.ep,
        i.micro_batch_size,
        i.batch_accumulation_per_replica,
        i.sequence_length,
        i.train_steps,
    ]
    .contains(&Param::Invalid);
    let cp = if version == Version::V04 {
        Some(1)
    } else {
        i.cp.or(1)
    };
    let par = (|| {
        Some(Par {
            dp: i.dp.given()?,
            tp: i.tp.given()?,
            pp: i.pp.given()?,
            cp: cp?,
            ep: i.ep.or(1)?,
        })
    })()
    .filter(|_| !unexpected_cp);
    let given = (!invalid && !unexpected_cp).then(|| Given {
        dp: i.dp.given(),
        pp: i.pp.given(),
        mbs: i.micro_batch_size.given(),
        accum: i.batch_accumulation_per_replica.given(),
        seq: i.sequence_length.given(),
        steps: i.train_steps.given(),
    });
    Parsed {
        par,
        given,
        complete: !invalid && !named,
    }
}

/// A product too large for dpcalc to count (Python's integers are unbounded).
fn too_large(r: &mut Report, what: &str) {
    r.diag(
        Field::MicroBatchSize,
        Level::Error,
        format!("{what} is too large for dpcalc to count exactly"),
    );
}

/// `Config.global_batch_size`, the tokens per step and the run's length: each value as soon as
/// its own factors are typed (nanotron's properties on the keys given), none otherwise.
fn batch(c: &Given, r: &mut Report) {
    if let Some(dp) = c.dp {
        r.set(Output::DpWorldSize, Num::Int(dp.into()));
        r.explain(
            Output::DpWorldSize,
            "dp_world_size = parallelism.dp (nanotron takes it as given)",
            format!("dp_world_size = {dp}"),
        );
    }
    if let Some(accum) = c.accum {
        r.set(Output::GradientAccumulationSteps, Num::Int(accum.into()));
        r.explain(
            Output::GradientAccumulationSteps,
            "micro batches per step = tokens.batch_accumulation_per_replica",
            format!("batch_accumulation_per_replica = {accum}"),
        );
    }
    if let Some(steps) = c.steps {
        r.set(Output::MaxSteps, Num::Int(steps.into()));
        r.explain(
            Output::MaxSteps,
            "optimizer steps = tokens.train_steps (the loop runs steps 1 … train_steps)",
            format!("train_steps = {steps}"),
        );
    }
    let (Some(mbs), Some(accum), Some(dp)) = (c.mbs, c.accum, c.dp) else {
        return;
    };
    let gbs = u128::from(mbs)
        .checked_mul(accum.into())
        .and_then(|x| x.checked_mul(dp.into()))
        .and_then(|x| i128::try_from(x).ok());
    let Some(gbs) = gbs else {
        return too_large(r, "micro_batch_size × batch_accumulation_per_replica × dp");
    };
    r.plan
        .publish_batch(mbs.into(), accum.into(), gbs.unsigned_abs());
    r.set(Output::GlobalBatchSize, Num::Int(gbs));
    r.explain(
        Output::GlobalBatchSize,
        "global_batch_size = micro_batch_size × batch_accumulation_per_replica × dp",
        format!("global_batch_size = {mbs} × {accum} × {dp} = {gbs}"),
    );
    let Some(seq) = c.seq else {
        return;
    };
    let Some(tokens) = gbs.checked_mul(seq.into()) else {
        return too_large(r, "global_batch_size × sequence_length");
    };
    r.set(Output::TokensPerStep, Num::Int(tokens));
    r.explain(
        Output::TokensPerStep,
        "global_batch_size_in_tokens = global_batch_size × sequence_length",
        format!("global_batch_size_in_tokens = {gbs} × {seq} = {tokens}"),
    );
    let Some(steps) = c.steps else {
        return;
    };
    let Some(total) = tokens.checked_mul(steps.into()) else {
        return too_large(r, "train_steps × global_batch_size_in_tokens");
    };
    r.set(Output::TotalTokens, Num::Int(total));
    r.explain(
        Output::TotalTokens,
        "total_tokens = train_steps × global_batch_size_in_tokens",
        format!("total_tokens = {steps} × {tokens} = {total}"),
    );
}

/// HEAD's `Config.__post_init__` model checks (`config/config.py`), which run before
/// `ParallelContext`: `num_attention_heads % tp` (so tp 0 stops here with a ZeroDivisionError),
/// then the heads against the key/value heads and tp. The model keys are optional in dpcalc:
/// without `num_attention_heads` only the tp 0 case is certain. `num_key_value_heads` defaults to
/// `num_attention_heads` (`LlamaConfig.__post_init__`). `then` is the world-size assertion that
/// would follow, for a tp of 0.
fn model_checks(tp: u64, heads: Param<u64>, kv: Param<u64>, then: Option<String>, r: &mut Report) {
    const BY: &str = "nanotron stops with";
    if tp == 0 {
        let after = then.map_or(String::new(), |t| {
            format!("; after it, ParallelContext would stop with \u{201c}{t}\u{201d}")
        });
        r.refuse(
            Field::Tp,
            Refusal::new(BY, "ZeroDivisionError: integer modulo by zero").fix(format!(
                "(Config.__post_init__: num_attention_heads % tp, before the world-size check{after}.) \
                 Use at least 1."
            )),
        );
        return;
    }
    let Param::Given(h) = heads else {
        return;
    };
    let kv = match kv {
        Param::Given(v) => v,
        Param::Absent => h,
        Param::Invalid => return,
    };
    let divisors = || {
        let fits: Vec<String> = (1..=h.min(64))
            .filter(|d| h % d == 0 && *d <= kv)
            .map(|d| d.to_string())
            .collect();
        format!("tp values that fit: {}.", fits.join(", "))
    };
    if h % tp != 0 {
        r.refuse(
            Field::Tp,
            Refusal::new(
                BY,
                format!("AssertionError: num_attention_heads ({h}) must be divisible by tp ({tp})"),
            )
            .fix(format!("(Config.__post_init__.) {}", divisors())),
        );
    } else if h < kv {
        r.refuse(
            Field::NumKeyValueHeads,
            Refusal::new(
                BY,
                format!(
                    "AssertionError: num_attention_heads ({h}) must be >= num_key_value_heads ({kv})"
                ),
            )
            .fix("(Config.__post_init__.) Use at most num_attention_heads key/value heads."),
        );
    } else if kv < tp {
        r.refuse(
            Field::Tp,
            Refusal::new(
                BY,
                format!("AssertionError: num_key_value_heads ({kv}) must be >= tp ({tp})"),
            )
            .fix(format!(
                "(Config.__post_init__: each TP rank needs a key/value head.) {}",
                divisors()
            )),
        );
    } else if h % kv != 0 {
        r.refuse(
            Field::NumKeyValueHeads,
            Refusal::new(
                BY,
                format!(
                    "AssertionError: num_attention_heads ({h}) must be divisible by num_key_value_heads ({kv})"
                ),
            )
            .fix("(Config.__post_init__.) Use a divisor of num_attention_heads."),
        );
    }
}

/// Values nanotron's config accepts without a check, and what then happens.
fn tokens_checks(c: &Given, r: &mut Report) {
    if c.mbs == Some(0) {
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
    if c.accum == Some(0) {
        r.diag(
            Field::BatchAccumulationPerReplica,
            Level::Error,
            "batch_accumulation_per_replica 0: nanotron does not check it, but each step would run no micro \
             batch (global batch 0). Use at least 1.",
        );
    }
    if c.seq == Some(0) {
        r.diag(
            Field::SequenceLength,
            Level::Error,
            "sequence_length 0: nanotron does not check it, but every sample would hold no token. Use at least 1.",
        );
    }
    if c.steps == Some(0) {
        r.diag(
            Field::TrainSteps,
            Level::Warning,
            "train_steps 0: nanotron accepts it, and its loop (range(1, train_steps + 1)) runs no step.",
        );
    }
    // parallel/pipeline_parallel/engine.py (OneForwardOneBackwardPipelineEngine.train_batch_iter)
    if let (Some(pp), Some(accum)) = (c.pp, c.accum) {
        if pp > 1 && accum < pp - 1 {
            r.diag(
                Field::BatchAccumulationPerReplica,
                Level::Warning,
                format!(
                    "With pp_engine: 1f1b, nanotron stops with AssertionError: Number of microbatches ({accum}) must \
                     be at least PP_SIZE-1={} when using the OneForwardOneBackwardPipelineEngine. The default engine \
                     (afab) accepts it.",
                    pp - 1
                ),
            );
        }
    }
}

/// HEAD, `run_train.py` with dummy data (`data.dataset: null`): `dummy_infinite_data_generator`
/// (`data/dataloader.py`) asserts that every context-parallel rank gets an equal slice of the
/// sequence. It runs once `ParallelContext` is built.
fn sequence_check(seq: u64, cp: u64, r: &mut Report) {
    if cp == 0 || seq % cp == 0 {
        return;
    }
    let down = seq - seq % cp;
    let up = down + cp;
    r.refuse(
        Field::SequenceLength,
        Refusal::new(
            "nanotron stops with",
            format!("AssertionError: sequence_length {seq} must be divisible by cp_size {cp}"),
        )
        .fix(format!(
            "(run_train.py with dummy data: dummy_infinite_data_generator; with a dataset, the \
             collator (clm_collator.py) refuses the uneven slices.) Use a multiple of \
             context_parallel_size {cp}: {}.",
            if down > 0 {
                format!("{down} or {up}")
            } else {
                up.to_string()
            }
        )),
    );
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

/// HEAD's world-size assertion as Python prints it. Its message labels the factors TP*CP*DP*PP
/// but prints them in the order tp, pp, cp, dp.
fn head_assertion(ws: u64, c: &Par) -> String {
    format!(
        "AssertionError: TP*CP*DP*PP={}*{}*{}*{}={} != WORLD_SIZE={ws}",
        c.tp,
        c.pp,
        c.cp,
        c.dp,
        product_text(&[c.tp, c.pp, c.cp, c.dp])
    )
}

/// nanotron HEAD, `ParallelContext.__init__` (`parallel/context.py`): one assertion,
/// `tp·pp·cp·dp == WORLD_SIZE` (expert parallelism is not in it); then `_init_parallel_groups`
/// reshapes `arange(world_size)` to `(ep, pp, dp, cp, tp)`, which fails for any
/// `expert_parallel_size` other than 1. `tp_refused`: tp is 0 and `Config.__post_init__` already
/// stopped on it (that message quotes this assertion too).
fn world_check_head(ws: u64, c: &Par, tp_refused: bool, r: &mut Report) {
    const PRODUCT: &str = "tp × pp × context_parallel_size";
    let all = product_text(&[c.tp, c.pp, c.cp, c.dp]);
    if all == ws.to_string() {
        if c.ep != 1 {
            r.refuse(
                Field::ExpertParallelSize,
                Refusal::new(
                    "nanotron stops with",
                    format!(
                        "ValueError: cannot reshape array of size {ws} into shape ({},{},{},{},{})",
                        c.ep, c.pp, c.dp, c.cp, c.tp
                    ),
                )
                .fix(
                    "(ParallelContext._init_parallel_groups: arange(world_size).reshape(ep, pp, dp, cp, tp); \
                     the world-size check leaves expert_parallel_size out, the reshape does not.) At HEAD \
                     expert_parallel_size must be 1.",
                ),
            );
        }
        return;
    }
    if tp_refused {
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
        Refusal::new("nanotron stops with", head_assertion(ws, c)).fix(format!(
            "(the values are tp, pp, context_parallel_size, dp). {}",
            dp_fix(ws, model, PRODUCT)
        )),
    );
    if c.ep != 1 {
        r.diag(
            Field::ExpertParallelSize,
            Level::Note,
            format!(
                "At HEAD expert_parallel_size is not part of tp × pp × context_parallel_size × dp, but even \
                 with a dp that fits, the rank reshape (ep, pp, dp, cp, tp) fails unless it is 1 (it is {}).",
                c.ep
            ),
        );
    }
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
