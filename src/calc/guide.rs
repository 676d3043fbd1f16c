//! What the page says to someone who has not typed everything yet: what a value that cannot be
//! computed still needs, at the value itself ([`needs`]); the compact summary a phone shows at the
//! top ([`summary`]); whether the other release's comparison says anything about the user's own
//! inputs, and why it matters ([`legacy_why`]); and the one-click examples ([`examples`], each
//! framework's `Spec::guide` examples; their links are `query::example_links`).
//!
//! "What a value needs" is a table per output ([`inputs_of`]: the concepts it is computed from,
//! the outputs it is computed from, and the features it exists only with) read through each
//! framework's own keys (`Spec::field_for`, and `Spec::guide` for the keys it has its own way:
//! the rows, the data-parallel size, the settings of evaluations, saves or a batch schedule), and
//! filtered by what the framework's rules said: an input is needed when it is empty and the
//! framework has no value for it when absent (its rules give a hint there, its form says
//! `required` or `unset`, or it has no default sequence length).

use super::first_view::FULL;
use super::report::Level;
use super::spec::{Concept, Guide};
use super::{Field, Framework, Output, RawInputs, Report};

/// One thing an output is computed from: a concept (each framework's own key for it), or the
/// keys a framework names for it in its `Spec::guide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    Concept(Concept),
    /// `Guide::rows`: the training rows given another way.
    Rows,
    /// `Guide::data_parallel`: the data-parallel size as an input.
    DataParallel,
}
use Need::{DataParallel, Rows};

/// The alternatives of one requirement (any one of them given is enough).
type Requirement = &'static [Need];

/// A feature whose settings each framework names in its `Spec::guide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feature {
    Evaluations,
    Saves,
    BatchSchedule,
    /// A price per GPU-hour (dpcalc's own key, in every framework's form).
    Price,
}

/// What an output is computed from: other outputs, and requirements on the inputs.
struct Deps {
    from: &'static [Output],
    requirements: &'static [Requirement],
    /// The feature the value exists only with (off while its settings are absent): each of its
    /// settings a list of alternatives.
    only_with: Option<Feature>,
    /// The feature under which the framework gives no value (its scheduler counts otherwise).
    not_with: Option<Feature>,
}

const NONE: Deps = Deps {
    from: &[],
    requirements: &[],
    only_with: None,
    not_with: None,
};

/// The parallel sizes a framework may require (a data-parallel size, tensor and pipeline).
const PARALLEL: &[Requirement] = &[
    &[DataParallel],
    &[Need::Concept(Concept::Tp)],
    &[Need::Concept(Concept::Pp)],
];
/// The batch: a global batch or a micro batch (DeepSpeed: either), and the accumulation.
const BATCH: &[Requirement] = &[
    &[
        Need::Concept(Concept::Global),
        Need::Concept(Concept::Micro),
    ],
    &[
        Need::Concept(Concept::Accum),
        Need::Concept(Concept::Global),
    ],
];
/// The length of the run: rows of data (or another way to give them), or a step count.
const LENGTH: &[Requirement] = &[&[
    Need::Concept(Concept::Samples),
    Need::Concept(Concept::Steps),
    Rows,
]];

/// The rows of data (or another way to give them).
const ROWS: &[Requirement] = &[&[Need::Concept(Concept::Samples), Rows]];
/// A throughput: measured tokens per second per GPU, or the seconds one step takes.
const THROUGHPUT: &[Requirement] = &[&[
    Need::Concept(Concept::TokensPerSecondPerGpu),
    Need::Concept(Concept::SecondsPerStep),
]];

/// The table: what each output is computed from.
fn inputs_of(output: Output) -> Deps {
    use Output as O;
    match output {
        O::DpWorldSize
        | O::ExpertDataParallelSize
        | O::DataParallelShardDegree
        | O::BatchCheckWorldSize => Deps {
            requirements: PARALLEL,
            ..NONE
        },
        O::GradientAccumulationSteps
        | O::GlobalBatchSize
        | O::TrainBatchSize
        | O::TrainMicroBatchSizePerGpu
        | O::TotalTrainBatchSize
        | O::RunningGlobalBatchSize
        | O::NumMicrobatches
        | O::NumPpMicrobatches
        | O::LegacyGlobalBatchSize => Deps {
            from: &[O::DpWorldSize],
            requirements: BATCH,
            ..NONE
        },
        O::TokensPerStep => Deps {
            from: &[O::GlobalBatchSize],
            requirements: &[&[Need::Concept(Concept::SeqLen)]],
            ..NONE
        },
        // an epoch, and axolotl's logged total, are counted from the rows alone
        O::TotalNumSteps | O::StepsPerEpoch | O::MicroBatchesPerEpoch | O::LegacyTotalNumSteps => {
            Deps {
                from: &[O::GlobalBatchSize],
                requirements: ROWS,
                ..NONE
            }
        }
        O::MaxSteps | O::TrainIters | O::LrWarmupSteps | O::LoggingSteps => Deps {
            from: &[O::GlobalBatchSize],
            requirements: LENGTH,
            ..NONE
        },
        // axolotl's builder takes the warmup ratio of its logged total; a scheduler may count
        // the warmup in samples while the batch ramps up
        O::WarmupSteps => Deps {
            from: &[O::GlobalBatchSize, O::TotalNumSteps],
            requirements: LENGTH,
            not_with: Some(Feature::BatchSchedule),
            ..NONE
        },
        O::TotalTokens => Deps {
            from: &[O::TokensPerStep, O::MaxSteps],
            ..NONE
        },
        O::TokensPerEpoch if FULL => Deps {
            from: &[O::TokensPerStep, O::StepsPerEpoch],
            ..NONE
        },
        // the tokens-and-time panel's (the full app's, `first_view::FULL`); a measured throughput
        // (the model stage's MFU estimate says so at its own fields)
        O::TimePerStepSeconds if FULL => Deps {
            from: &[O::TokensPerStep],
            requirements: THROUGHPUT,
            ..NONE
        },
        O::TotalTimeSeconds if FULL => Deps {
            from: &[O::TimePerStepSeconds, O::MaxSteps],
            ..NONE
        },
        O::GpuHours if FULL => Deps {
            from: &[O::TotalTimeSeconds],
            ..NONE
        },
        O::TotalCost if FULL => Deps {
            from: &[O::GpuHours],
            only_with: Some(Feature::Price),
            ..NONE
        },
        O::EvalSteps => Deps {
            from: &[O::MaxSteps],
            only_with: Some(Feature::Evaluations),
            ..NONE
        },
        O::SaveSteps => Deps {
            from: &[O::MaxSteps],
            only_with: Some(Feature::Saves),
            ..NONE
        },
        O::InitialGlobalBatchSize
        | O::InitialNumMicrobatches
        | O::RampupSamplesPerIncrement
        | O::FullBatchIteration => Deps {
            from: &[O::GlobalBatchSize],
            only_with: Some(Feature::BatchSchedule),
            ..NONE
        },
        _ => NONE,
    }
}

/// Whether the framework reads nothing for `field` while it is absent: its rules give a hint
/// there, its form says it is required or unset, or it is a sequence length without a default.
fn no_default(framework: Framework, report: &Report, field: Field) -> bool {
    let placeholder = framework.describe(field).1;
    report.diags_for(field).any(|d| d.level == Level::Hint)
        || matches!(
            placeholder,
            "required" | "required for steps" | "unset" | "derived"
        )
        || (field.concept() == Some(Concept::SeqLen)
            && framework.spec().default_sequence_len.is_none())
}

/// Nothing given for `field`, or its default as the form shows it (HF's `max_steps=-1`).
fn empty(framework: Framework, raw: &RawInputs, field: Field) -> bool {
    let text = raw.get(field).trim();
    (text.is_empty() || text == framework.describe(field).1) && raw.conflict(field).is_none()
}

/// The framework's fields for one requirement, in the table's order, without repeats.
fn fields_of(framework: Framework, req: Requirement) -> Vec<Field> {
    let guide: &'static Guide = framework.spec().guide;
    let mut out: Vec<Field> = Vec::new();
    for need in req {
        let own = match *need {
            Need::Concept(c) => {
                if let Some(f) = framework.field_for(c).filter(|f| !out.contains(f)) {
                    out.push(f);
                }
                continue;
            }
            Rows => guide.rows,
            DataParallel => guide.data_parallel,
        };
        for &f in own {
            if framework.has(f) && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The settings of `feature` in `framework` (`Spec::guide`), each a list of alternatives.
fn settings(framework: Framework, feature: Option<Feature>) -> &'static [&'static [Field]] {
    let guide: &'static Guide = framework.spec().guide;
    match feature {
        None => &[],
        Some(Feature::Evaluations) => guide.evaluations,
        Some(Feature::Saves) => guide.saves,
        Some(Feature::BatchSchedule) => std::slice::from_ref(&guide.batch_schedule),
        Some(Feature::Price) => &[&[Field::GpuHourPrice]],
    }
}

/// What a value that cannot be computed still needs: its inputs (each a list of alternatives,
/// the framework's own fields), or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Inputs to give: each inner list is one requirement's alternatives (any one is enough).
    Needs(Vec<Vec<Field>>),
    /// Everything it needs is given, but an error stops the computation.
    Blocked,
    /// Everything it needs is given, and the framework's note or warning at this field says why
    /// the value does not exist (a setting it ignores, an evaluation without an eval split), or
    /// the value does not exist with this setting (the warmup in steps during a ramp-up).
    Explained(Field),
    /// A batch in samples where the release counts its batch in tokens only (torchtitan HEAD):
    /// the tokens per step are the batch.
    InTokens,
    /// The other release's number, which that release refuses (its notes say why).
    Refused,
    /// Not computed, and dpcalc cannot say why.
    Unknown,
}

impl Missing {
    /// The fields named, for `data-needs` (their config keys, space-separated). A value a
    /// given setting explains needs nothing: that setting is given (a ramp-up 0.19.2 ignores
    /// is not a `rampup_batch_size` still needed).
    pub fn keys(&self) -> String {
        match self {
            Missing::Needs(reqs) => reqs
                .iter()
                .flatten()
                .map(|f| f.key())
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        }
    }

    /// What the page shows in place of the value: `needs Training rows`, `needs Train batch
    /// size or Micro batch per GPU`, `needs Data parallel size, Tensor parallel size and …`.
    pub fn text(&self, framework: Framework) -> String {
        match self {
            Missing::Needs(reqs) => {
                let parts: Vec<String> = reqs
                    .iter()
                    .map(|alts| {
                        alts.iter()
                            .map(|&f| framework.describe(f).0)
                            .collect::<Vec<_>>()
                            .join(" or ")
                    })
                    .collect();
                format!("needs {}", and_list(&parts))
            }
            Missing::Blocked => "not computed: see the error".into(),
            Missing::Explained(f) => format!("none: see {}", framework.describe(*f).0),
            Missing::InTokens => "none: this release counts the batch in tokens".into(),
            Missing::Refused => "none: that release refuses these inputs (see its note)".into(),
            // never a bare dash (tests/guide.rs finds no link that gets here)
            Missing::Unknown => "not computed for these inputs".into(),
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Whether `framework` ever gives `output`: its results, or the tokens and time after them
/// (the full app's: a first view shows the results alone).
fn gives(framework: Framework, output: Output) -> bool {
    framework.outputs().contains(&output)
        || (FULL && super::view::TOKENS_TIME.outputs.contains(&output))
}

/// The requirements of `output` still open, with those of the outputs it comes from (each once).
fn open(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    output: Output,
    depth: u8,
    out: &mut Vec<Vec<Field>>,
) {
    if report.value(output).is_some() || depth > 4 {
        return;
    }
    let deps = inputs_of(output);
    for &from in deps.from.iter().filter(|&&o| gives(framework, o)) {
        open(framework, raw, report, from, depth + 1, out);
    }
    for req in deps.requirements {
        let alts = fields_of(framework, req);
        let unmet = !alts.is_empty()
            && alts.iter().all(|&f| empty(framework, raw, f))
            && alts.iter().any(|&f| no_default(framework, report, f));
        if unmet {
            // name the alternatives the framework asked for (its hint), else all of them
            let hinted: Vec<Field> = alts
                .iter()
                .copied()
                .filter(|&f| report.diags_for(f).any(|d| d.level == Level::Hint))
                .collect();
            let named = if hinted.is_empty() { alts } else { hinted };
            if !out.contains(&named) {
                out.push(named);
            }
        }
    }
    for alts in settings(framework, deps.only_with) {
        let named: Vec<Field> = alts.iter().copied().filter(|&f| framework.has(f)).collect();
        if !named.is_empty()
            && named.iter().all(|&f| empty(framework, raw, f))
            && !out.contains(&named)
        {
            out.push(named);
        }
    }
}

/// The first given input `output` depends on (its own, or of the outputs it comes from) that
/// has a warning or a note: the framework's words there say why the value is not computed.
fn explained(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    output: Output,
    depth: u8,
) -> Option<Field> {
    if report.value(output).is_some() || depth > 4 {
        return None;
    }
    let deps = inputs_of(output);
    let off = (settings(framework, deps.not_with).iter())
        .flat_map(|alts| alts.iter())
        .find(|&&f| framework.has(f) && !empty(framework, raw, f));
    if let Some(&f) = off {
        return Some(f);
    }
    let own = deps
        .requirements
        .iter()
        .flat_map(|req| fields_of(framework, req))
        .chain(
            settings(framework, deps.only_with)
                .iter()
                .flat_map(|alts| alts.iter().copied()),
        )
        .filter(|&f| framework.has(f) && !empty(framework, raw, f))
        .find(|&f| {
            report
                .diags_for(f)
                .any(|d| matches!(d.level, Level::Warning | Level::Note))
        });
    own.or_else(|| {
        deps.from
            .iter()
            .find_map(|&o| explained(framework, raw, report, o, depth + 1))
    })
}

/// What `output` still needs, or `None` when it has a value.
pub fn needs(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    output: Output,
) -> Option<Missing> {
    if report.value(output).is_some() {
        return None;
    }
    let mut reqs = Vec::new();
    open(framework, raw, report, output, 0, &mut reqs);
    Some(if !reqs.is_empty() {
        Missing::Needs(reqs)
    } else if report.has_errors() {
        Missing::Blocked
    } else if let Some(f) = explained(framework, raw, report, output, 0) {
        Missing::Explained(f)
    } else if output == Output::GlobalBatchSize && report.value(Output::TokensPerStep).is_some() {
        Missing::InTokens
    } else {
        Missing::Unknown
    })
}

/// [`needs`], and for the other release's numbers (`legacy_*`, the full app's comparison box)
/// that release's refusal when its notes give one.
pub fn needs_legacy(
    framework: Framework,
    raw: &RawInputs,
    report: &Report,
    output: Output,
) -> Option<Missing> {
    let legacy = matches!(
        output,
        Output::LegacyGlobalBatchSize | Output::LegacyTotalNumSteps
    );
    needs(framework, raw, report, output).map(|m| match m {
        Missing::Unknown if legacy && !report.legacy_notes.is_empty() => Missing::Refused,
        m => m,
    })
}

/// Whether `output` belongs to a feature the link does not use: it has no value, and every
/// setting it exists only with (a ramp-up or step schedule, evaluations, saves) is empty. The
/// results list leaves it out, in both renderers (`page::results`, the first view alike).
pub fn unused(framework: Framework, raw: &RawInputs, report: &Report, output: Output) -> bool {
    let mut has_setting = false;
    for alts in settings(framework, inputs_of(output).only_with) {
        for &f in *alts {
            if framework.has(f) {
                if !empty(framework, raw, f) {
                    return false;
                }
                has_setting = true;
            }
        }
    }
    has_setting && report.value(output).is_none()
}

/// Whether the page shows `output` at all: not [`unused`], and without a value not built on a
/// value this framework never gives (tokens per epoch without an epoch).
pub fn applies(framework: Framework, raw: &RawInputs, report: &Report, output: Output) -> bool {
    // (axolotl's logged total is a source of the warmup only where a framework logs one)
    let never = || {
        (inputs_of(output).from.iter()).any(|&o| o != Output::TotalNumSteps && !gives(framework, o))
    };
    !unused(framework, raw, report, output) && (report.value(output).is_some() || !never())
}

/// What an explorer cell without a value says (never a bare dash): `refused` on a layout the
/// framework refuses (the row says why), else what the current inputs still need for that value
/// (`needs Training rows`, the same words as the results), else that this layout has none.
pub fn explorer_cell(
    ex: &super::layout::Explorer,
    raw: &RawInputs,
    row: &super::layout::Row,
    output: Output,
) -> String {
    if row.problem.is_some() {
        return "refused".into();
    }
    match needs(ex.framework, raw, &ex.base, output) {
        Some(m) if m != Missing::Unknown => m.text(ex.framework),
        _ => "none for this layout".into(),
    }
}

// ---- the compact summary -----------------------------------------------------------------------

/// One value of the summary: the output, a short label, and what it shows (the value, or what
/// it needs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryItem {
    pub output: Output,
    pub label: &'static str,
    pub shown: String,
    pub computed: bool,
}

/// The key results in a few words, for the top of a small screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub items: Vec<SummaryItem>,
    /// The first error: its field and message, and how many errors there are.
    pub error: Option<(Field, String, usize)>,
}

/// The outputs the summary shows, with their short labels.
pub const SUMMARY: &[(Output, &str)] = &[
    (Output::DpWorldSize, "dp"),
    (Output::GlobalBatchSize, "global batch"),
    (Output::MaxSteps, "steps"),
];

/// The summary of a report: dp, global batch and steps (those the framework shows), and the
/// first error.
pub fn summary(framework: Framework, raw: &RawInputs, report: &Report) -> Summary {
    let items = SUMMARY
        .iter()
        .filter(|(o, _)| framework.outputs().contains(o))
        .map(|&(output, label)| {
            let value = report.value(output);
            SummaryItem {
                output,
                label,
                shown: match value {
                    Some(v) => super::view::shown_value(output, v),
                    None => needs(framework, raw, report, output)
                        .map(|m| m.text(framework))
                        .unwrap_or_default(),
                },
                computed: value.is_some(),
            }
        })
        .collect();
    let errors: Vec<_> = report
        .diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .collect();
    Summary {
        items,
        error: errors
            .first()
            .map(|d| (d.field, d.message.clone(), errors.len())),
    }
}

// ---- the other release's comparison ----------------------------------------------------------

/// Why the other release's comparison matters for these inputs, or `None` when it says nothing
/// about them (then the page leaves it out): it gives a different global batch or step count, or
/// it refuses a config the user typed (not the bare address's).
pub fn legacy_why(
    framework: Framework,
    release: &str,
    raw: &RawInputs,
    report: &Report,
) -> Option<String> {
    let legacy = super::view::legacy(framework, release)?;
    let name = framework.name();
    let other = legacy.other;
    let differs = |a: Output, b: Output| matches!((report.value(a), report.value(b)), (Some(x), Some(y)) if x.raw() != y.raw());
    let batch = differs(Output::GlobalBatchSize, Output::LegacyGlobalBatchSize);
    let steps = differs(Output::TotalNumSteps, Output::LegacyTotalNumSteps);
    let what = match (batch, steps) {
        (true, true) => Some("a different global batch and step count"),
        (true, false) => Some("a different global batch"),
        (false, true) => Some("a different step count"),
        _ => None,
    };
    if let Some(what) = what {
        return Some(format!(
            "{name} {other} gives {what} for these inputs than {release}: the same config trains \
             differently there, so check which release a run used before comparing its numbers."
        ));
    }
    let refused = report.value(Output::LegacyGlobalBatchSize).is_none()
        && report.value(Output::GlobalBatchSize).is_some()
        && !report.legacy_notes.is_empty();
    let typed = raw.given().next().is_some();
    (refused && typed).then(|| {
        format!(
            "{name} {other} refuses this config: a config that runs on {release} will not start \
             there, so pin the release you launch with."
        )
    })
}

// ---- one-click examples ------------------------------------------------------------------------

/// A complete example configuration, one click from the top of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    pub label: &'static str,
    pub framework: Framework,
    /// Its release (`version=`), so the link keeps its meaning.
    pub release: &'static str,
    pub inputs: RawInputs,
}

/// The examples the page offers near the top, each framework's `Spec::guide` examples taken in
/// turn (every framework's first, then every framework's second, …, in registry order), each at
/// a release the framework has.
pub fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for turn in 0.. {
        let mut more = false;
        for &framework in Framework::ALL {
            let Some(example) = framework.spec().guide.examples.get(turn) else {
                continue;
            };
            more = true;
            if framework.release(example.release).is_some() {
                out.push(Example {
                    label: example.label,
                    framework,
                    release: example.release,
                    inputs: RawInputs::from_pairs(example.inputs.iter().copied()),
                });
            }
        }
        if !more {
            break;
        }
    }
    out
}
