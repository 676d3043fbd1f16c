//! What the page's components show that is derived from the core's data: which form fields are
//! shown and how a flag reads, the worked steps in order, the other axolotl release's comparison,
//! the frameworks a config can be imported as, the GPU map's rank descriptions, groups, counts
//! and sentences, the timeline's legend, the layout explorer's sentences and which unknown link
//! parameters are listed. Plain Rust like the rest of `calc` (no web import); the components call
//! these and render the result, so every rule here is tested natively.
//!
//! [`importable`] and [`legacy`] are single functions on purpose: they say per framework what
//! the per-framework modules will say for themselves, and then become one-line lookups.

use super::fit;
use super::layout::{self, Explorer, Mode, Row};
use super::mesh::{self, Axis, Picture};
use super::parse::{self, Param};
use super::schedule::{human_count, human_duration, Marks, Timeline};
use super::{Diag, Field, Framework, Level, Num, Output, RawInputs, Report, Step};

// ---- the form ---------------------------------------------------------------------------------

/// Whether a flag field's text shows as checked: exactly when the framework reads it as true
/// (`true`, `1`, `yes`, `on`, any case, spaces around), as [`parse::flag`] parses it.
pub fn checked(field: Field, text: &str) -> bool {
    matches!(
        parse::flag(field, text, &mut Vec::new()),
        Param::Given(true)
    )
}

/// Whether the form shows `field`: always in the full page; in the compact (`embed=1`) form only
/// the framework's key fields, plus any field that is given, given twice or has a message.
pub fn shown(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
    field: Field,
    compact: bool,
) -> bool {
    !compact
        || framework.key_fields().contains(&field)
        || !inputs.get(field).is_empty()
        || inputs.conflict(field).is_some()
        || report.diags_for(field).next().is_some()
}

/// Whether any of a field's messages is an error (the form marks the field invalid).
pub fn invalid(diags: &[Diag]) -> bool {
    diags.iter().any(|d| d.level == Level::Error)
}

// ---- link notices -----------------------------------------------------------------------------

/// The unknown parameters the page lists as "ignored, and kept": every one but those with a
/// notice of their own (a newer `v`, an unknown `version=`), which are not listed twice.
pub fn unlisted<'a>(
    unknown: &'a [(String, String)],
    notices: &'a [(String, String)],
) -> impl Iterator<Item = &'a (String, String)> {
    unknown
        .iter()
        .filter(move |(k, _)| !notices.iter().any(|(n, _)| n == k))
}

// ---- "How this is computed" and the legacy comparison ----------------------------------------

/// The worked steps in the order of the outputs they compute.
pub fn steps(report: &Report) -> Vec<&Step> {
    let mut steps: Vec<_> = report.steps.iter().collect();
    steps.sort_by_key(|s| s.output);
    steps
}

pub use super::spec::Legacy;

/// The comparison shown with `framework` at `release`, if the framework has one (its
/// `Spec::legacy`: axolotl's other release). Its values are the report's `Legacy*` outputs.
pub fn legacy(framework: Framework, release: &str) -> Option<Legacy> {
    framework.spec().legacy.map(|of| of(release))
}

// ---- config import ----------------------------------------------------------------------------

/// The frameworks a pasted config can be read as (the import's "Read as" choices), in the order
/// offered: those whose `Spec::import` has a reader.
pub fn importable() -> Vec<Framework> {
    super::import::importable().collect()
}

// ---- the GPU map ------------------------------------------------------------------------------

/// The inputs the GPU map of `framework` depends on (besides the world size): the node shape
/// and the framework's parallel sizes. An edit to anything else leaves the map as it is.
pub fn map_fields(framework: Framework) -> impl Iterator<Item = Field> {
    [Field::Nodes, Field::GpusPerNode]
        .into_iter()
        .chain(layout::dims(framework).iter().map(|&(_, f)| f))
}

/// A rank in words: `GPU 1 of node 0: global rank 1 (dp 0, cp 0, tp 1)`, with `pp` and `sp`
/// where the framework has them and `ep` where the layout has expert parallelism.
pub fn describe_rank(p: &Picture, rank: u64) -> String {
    let c = p.mesh.coords(rank);
    let mut parts = vec![format!("dp {}", c.dp)];
    let order = mesh::order(p.mesh.framework);
    if order.contains(&Axis::Pp) {
        parts.push(format!("pp {}", c.pp));
    }
    parts.push(format!("cp {}", c.cp));
    if p.mesh.size(Axis::Ep) > 1 {
        parts.push(format!("ep {}", c.ep));
    }
    if order.contains(&Axis::Sp) {
        parts.push(format!("sp {}", c.sp));
    }
    parts.push(format!("tp {}", c.tp));
    format!(
        "GPU {} of node {}: global rank {rank} ({})",
        rank % p.gpus_per_node,
        rank / p.gpus_per_node,
        parts.join(", ")
    )
}

/// How many groups along `axis` the whole cluster has (the data-parallel "groups" are the
/// model replicas' ranks at one place: world / size).
pub fn group_count(p: &Picture, axis: Axis) -> u64 {
    p.mesh.world / p.mesh.size(axis)
}

/// A group drawn on the map: its first rank and its members among the drawn cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawnGroup {
    pub first: u64,
    pub members: Vec<u64>,
    /// The members are neighbours (outlined), not strided (joined by arcs).
    pub consecutive: bool,
    /// `tp group of ranks 0, 1`.
    pub label: String,
}

/// Every group along `axis` with its first rank among the drawn cells, in drawing order; none
/// when the axis has size 1 (nothing to outline).
pub fn drawn_groups(p: &Picture, axis: Axis) -> Vec<DrawnGroup> {
    if p.mesh.size(axis) < 2 {
        return Vec::new();
    }
    let drawn = |r: u64| r / p.gpus_per_node < p.drawn_nodes && r % p.gpus_per_node < p.drawn_gpus;
    let mut out = Vec::new();
    for node in 0..p.drawn_nodes {
        for gpu in 0..p.drawn_gpus {
            let r = node * p.gpus_per_node + gpu;
            if p.mesh.coords(r).get(axis) != 0 {
                continue;
            }
            let members: Vec<u64> = p
                .mesh
                .group(axis, r)
                .into_iter()
                .filter(|&m| drawn(m))
                .collect();
            let consecutive = members.windows(2).all(|w| w[1] == w[0] + 1);
            let label = format!(
                "{} group of ranks {}",
                axis.short(),
                members
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            out.push(DrawnGroup {
                first: r,
                members,
                consecutive,
                label,
            });
        }
    }
    out
}

/// The GPU map's sentences and legend figures for a picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapText {
    /// The cluster, its sizes and the rank order (`.map-order`).
    pub order: String,
    /// Tensor-parallel groups spanning nodes, when some do (a warning).
    pub tp_crossing: Option<String>,
    /// Context-parallel groups spanning nodes, when some do (a note).
    pub cp_crossing: Option<String>,
    /// Expert-parallel groups spanning nodes.
    pub ep_crossing: Option<String>,
    /// Above the drawing limit: what is drawn and every group count.
    pub summary: Option<String>,
    /// Data-parallel replicas.
    pub replicas: u64,
    /// Replicas given a colour swatch in the legend (at most 8).
    pub legend_replicas: u64,
}

/// The most replicas the legend gives a swatch.
pub const LEGEND_REPLICAS: u64 = 8;

/// The sentences the GPU map shows for `p`.
pub fn map_text(p: &Picture) -> MapText {
    let dp = p.mesh.size(Axis::Dp);
    let sizes: Vec<String> = std::iter::once(format!("dp {dp}"))
        .chain(
            p.dims
                .iter()
                .filter(|(a, _, s)| *a != Axis::Ep || *s > 1)
                .map(|(a, f, s)| format!("{} {s} ({})", a.short(), f.key())),
        )
        .collect();
    let counts: Vec<String> = std::iter::once(format!("{dp} data-parallel replicas"))
        .chain(
            [
                (Axis::Tp, "tensor-parallel"),
                (Axis::Cp, "context-parallel"),
                (Axis::Sp, "sequence-parallel"),
                (Axis::Ep, "expert-parallel"),
                (Axis::Pp, "pipeline"),
            ]
            .iter()
            .filter(|(a, _)| p.mesh.size(*a) > 1)
            .map(|&(a, name)| format!("{} {name} groups of {}", group_count(p, a), p.mesh.size(a))),
        )
        .collect();
    MapText {
        order: format!(
            "{} {} × {} GPUs; {}. Rank order: {} (from {}). Global rank = node × {} + local GPU.",
            p.nodes,
            if p.nodes == 1 { "node" } else { "nodes" },
            p.gpus_per_node,
            sizes.join(", "),
            p.order,
            p.source,
            p.gpus_per_node
        ),
        tp_crossing: p.tp_crossing.filter(|&n| n > 0).map(|n| {
            format!(
                "{} of {} tensor-parallel groups span more than one node: their all-reduces go over the inter-node network, a classic slowdown. Keep the tensor-parallel size a divisor of the GPUs per node ({}).",
                n,
                group_count(p, Axis::Tp),
                p.gpus_per_node
            )
        }),
        cp_crossing: p.cp_crossing.filter(|&n| n > 0).map(|n| {
            format!(
                "{} of {} context-parallel groups span more than one node.",
                n,
                group_count(p, Axis::Cp)
            )
        }),
        ep_crossing: p.ep_crossing.filter(|&n| n > 0).map(|n| {
            format!(
                "{} of {} expert-parallel groups span more than one node: their all-to-all goes over the inter-node network.",
                n,
                group_count(p, Axis::Ep)
            )
        }),
        summary: p.summarised.then(|| {
            format!(
                "{} GPUs are too many to draw one by one: node 0 is drawn{}; the other {} nodes ({} GPUs) repeat the pattern. In all: {}.",
                p.mesh.world,
                if p.drawn_gpus < p.gpus_per_node {
                    format!(" (its first {} GPUs)", p.drawn_gpus)
                } else {
                    String::new()
                },
                p.nodes - 1,
                p.mesh.world - p.gpus_per_node,
                counts.join(", ")
            )
        }),
        replicas: dp,
        legend_replicas: dp.min(LEGEND_REPLICAS),
    }
}

// ---- tokens and time --------------------------------------------------------------------------

/// The timeline's words: where the warmup bar ends, the legend (also the figure's caption and
/// label) and the label at the last step.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineText {
    /// Where the warmup bar ends (at most the last step) and whether warmup outlasts the run.
    pub warmup: Option<(u64, bool)>,
    pub legend: Vec<String>,
    /// `step 1000 · 2.5 h` (the time when a throughput is given).
    pub end: String,
}

/// How often a mark falls, for the legend: `epoch boundary every 250 steps (4 in the run)`.
fn every(m: &Option<Marks>, what: &str) -> Option<String> {
    let m = m.as_ref()?;
    let more = if m.complete() {
        String::new()
    } else {
        format!(", the first {} drawn", m.at.len())
    };
    Some(format!(
        "{what} every {} steps ({} in the run{more})",
        m.every, m.count
    ))
}

/// The words of a run's timeline.
pub fn timeline_text(t: &Timeline) -> TimelineText {
    let total = t.total;
    let warmup = t.warmup.map(|w| (w.min(total), w > total));
    let mut legend = vec![format!("{} optimizer steps", human_count(total as f64))];
    if let Some((w, over)) = warmup {
        legend.push(if over {
            format!(
                "warmup {} steps, longer than the run",
                t.warmup.unwrap_or(0)
            )
        } else {
            format!("warmup to step {w}")
        });
    }
    legend.extend(every(&t.epochs, "epoch boundary"));
    legend.extend(every(&t.evals, "evaluation (circle)"));
    legend.extend(every(&t.saves, "save (square)"));
    let end = t
        .seconds
        .map(|s| format!("step {total} · {}", human_duration(s)))
        .unwrap_or_else(|| format!("step {total}"));
    TimelineText {
        warmup,
        legend,
        end,
    }
}

// ---- the layout explorer ----------------------------------------------------------------------

/// The explorer's summary: how many layouts, the global batch it keeps and what a row sets.
pub fn explorer_summary(ex: &Explorer) -> String {
    let target = match (ex.target, ex.micro) {
        (Some(t), Some(m)) => format!(
            "Current global batch {} at {} samples per replica per micro step.",
            Num::Int(t.into()).pretty(),
            m
        ),
        (Some(t), None) => format!("Current global batch {}.", Num::Int(t.into()).pretty()),
        _ => "No current global batch to keep.".to_string(),
    };
    let mode = match ex.mode {
        Mode::SetAccumulation => {
            "Each row sets gradient accumulation to keep the current global batch (exactly, or the nearest it can)."
        }
        Mode::SetGlobal => {
            "Each row sets the global batch to the achievable one nearest the current, and the framework derives its accumulation."
        }
        Mode::SizesOnly => "Each row changes only the parallel sizes.",
    };
    let world = ex.world.map(|w| w.to_string()).unwrap_or_default();
    format!(
        "{} layouts for {world} GPUs. {target} {mode}",
        ex.rows.len()
    )
}

/// When only the first `shown` of `all` rows are drawn, the note that says so.
pub fn explorer_truncated(shown: usize, all: usize) -> Option<String> {
    (all > shown).then(|| {
        format!(
            "The first {shown} of {all} in this order are shown; sort by a column to see others."
        )
    })
}

/// A row's miss in samples, signed: `+1,024 samples`, `-8 samples`, `0 samples`.
pub fn miss(miss: i128) -> String {
    let shown = if miss > 0 {
        format!("+{}", Num::Int(miss).pretty())
    } else {
        Num::Int(miss).pretty()
    };
    format!("{shown} samples")
}

/// The accessible name of a row's Apply button: `Apply tensor_parallel_size=2, context_parallel_size=1`.
pub fn apply_label(ex: &Explorer, row: &Row) -> String {
    format!("Apply {}", ex.query(row).replace('&', ", "))
}

/// Whether a row's estimated memory per GPU fits the GPU's (`None`: either is unknown).
pub fn row_fits(row: &Row, capacity: Option<u128>) -> Option<bool> {
    Some(row.memory_bytes? <= capacity?)
}

/// A row's memory per GPU in GiB (`fit::gib`), or `None` when unknown.
pub fn row_memory(row: &Row) -> Option<String> {
    row.memory_bytes.map(fit::gib)
}

/// A row's fits mark, readable without colour: `fits`, or `over by 3.25 GiB`.
pub fn fit_mark(row: &Row, capacity: Option<u128>) -> Option<String> {
    let (m, c) = (row.memory_bytes?, capacity?);
    Some(if m <= c {
        "fits".to_string()
    } else {
        format!("over by {}", fit::gib(m - c))
    })
}

/// The rows kept by the "only layouts that fit" filter: with it on (and a capacity known),
/// exactly the rows whose memory is known and at most the capacity, in `order`'s order.
pub fn keep_fitting(ex: &Explorer, order: Vec<usize>, only_fit: bool) -> Vec<usize> {
    if !only_fit || ex.capacity.is_none() {
        return order;
    }
    order
        .into_iter()
        .filter(|&i| row_fits(&ex.rows[i], ex.capacity) == Some(true))
        .collect()
}

/// The sentence under the explorer's summary when the rows have a memory estimate:
/// `412 of 969 layouts fit the GPU's 74.5 GiB (published-formula estimate per GPU).`
pub fn explorer_memory_summary(ex: &Explorer) -> Option<String> {
    if !ex.rows.iter().any(|r| r.memory_bytes.is_some()) {
        return None;
    }
    Some(match ex.capacity {
        Some(c) => {
            let n = ex
                .rows
                .iter()
                .filter(|r| row_fits(r, Some(c)) == Some(true))
                .count();
            format!(
                "{n} of {} layouts fit the GPU's {} (memory per GPU by published formulas, an estimate).",
                ex.rows.len(),
                fit::gib(c)
            )
        }
        None => "Memory per GPU by published formulas (an estimate); pick a GPU to see which layouts fit.".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }
    use crate::calc::{import, Output};

    fn raw(pairs: &[(Field, &str)]) -> RawInputs {
        let mut r = RawInputs::default();
        for &(f, v) in pairs {
            r.set(f, v);
        }
        r
    }

    fn picture(framework: Framework, pairs: &[(Field, &str)]) -> Picture {
        let inputs = raw(pairs);
        let report = framework.compute(framework.default_release().id, &inputs);
        mesh::picture(framework, &inputs, &report).expect("a picture")
    }

    #[test]
    fn a_flag_is_checked_exactly_when_the_framework_reads_true() {
        let f = Field::SamplePacking;
        for yes in ["true", "TRUE", " 1 ", "yes", "On"] {
            assert!(checked(f, yes), "{yes:?}");
        }
        for no in ["", "  ", "false", "0", "no", "off", "2", "truthy", "ja"] {
            assert!(!checked(f, no), "{no:?}");
        }
    }

    #[test]
    fn the_compact_form_shows_key_given_and_flagged_fields() {
        let fw = fw("axolotl");
        let empty = RawInputs::default();
        let report = fw.compute("0.19.0", &empty);
        // the full form shows everything
        assert!(shown(fw, &empty, &report, Field::MaxSteps, false));
        // compact: the key fields only
        assert!(shown(fw, &empty, &report, Field::Nodes, true));
        assert!(!fw.key_fields().contains(&Field::MaxSteps));
        assert!(!shown(fw, &empty, &report, Field::MaxSteps, true));
        // a given field is shown
        let given = raw(&[(Field::MaxSteps, "20")]);
        let r = fw.compute("0.19.0", &given);
        assert!(shown(fw, &given, &r, Field::MaxSteps, true));
        // a field given twice is shown, though its text is empty
        let mut twice = RawInputs::default();
        twice.set_conflict(Field::MaxSteps, vec!["10".into(), "20".into()]);
        let r = fw.compute("0.19.0", &twice);
        assert!(shown(fw, &twice, &r, Field::MaxSteps, true));
        // a field with a message is shown
        let bad = raw(&[(Field::MaxSteps, "x")]);
        let r = fw.compute("0.19.0", &bad);
        assert!(r.diags_for(Field::MaxSteps).next().is_some());
        assert!(shown(fw, &empty, &r, Field::MaxSteps, true));
    }

    #[test]
    fn a_field_is_invalid_only_with_an_error() {
        let e = Diag::new(Field::Nodes, Level::Error, "e");
        let w = Diag::new(Field::Nodes, Level::Warning, "w");
        let n = Diag::new(Field::Nodes, Level::Note, "n");
        assert!(!invalid(&[]));
        assert!(!invalid(&[w.clone(), n.clone()]));
        assert!(invalid(&[w, e, n]));
    }

    #[test]
    fn steps_are_in_output_order() {
        let fw = fw("axolotl");
        let inputs = raw(&[
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumSamples, "1000"),
        ]);
        let mut report = fw.compute("0.19.0", &inputs);
        report.steps.reverse();
        let s = steps(&report);
        assert!(s.len() > 2, "{s:?}");
        assert_eq!(s.len(), report.steps.len());
        assert!(s.windows(2).all(|w| w[0].output <= w[1].output));
        assert_eq!(
            s[0].output,
            report.steps.iter().map(|s| s.output).min().unwrap()
        );
    }

    #[test]
    fn the_legacy_comparison_is_the_other_axolotl_release() {
        for r in ["0.19.0", "0.18.0", "not-a-release"] {
            let l = legacy(fw("axolotl"), r).unwrap();
            assert_eq!(l.other, "0.14.0", "{r}");
            assert!(l.title.contains("Before the fix"));
        }
        let l = legacy(fw("axolotl"), "0.14.0").unwrap();
        assert_eq!(l.other, "0.19.0");
        assert!(l.title.contains("After the fix"));
        assert!(l.help.contains("world_size // cp // tp"));
        // every axolotl release has one; no other framework does
        for r in fw("axolotl").releases() {
            assert!(legacy(fw("axolotl"), r.id).is_some());
        }
        for &fw in Framework::ALL.iter().filter(|&&f| f != fw("axolotl")) {
            assert_eq!(legacy(fw, fw.default_release().id), None, "{fw:?}");
        }
        // and the report has its values
        let report = fw("axolotl").compute(
            "0.19.0",
            &raw(&[
                (Field::MicroBatchSize, "1"),
                (Field::GradientAccumulationSteps, "1"),
            ]),
        );
        assert!(report.value(Output::LegacyGlobalBatchSize).is_some());
    }

    #[test]
    fn importable_is_exactly_what_the_importer_reads() {
        let list = importable();
        assert_eq!(list, Framework::ALL);
        for &fw in Framework::ALL {
            let refused = import::import_as(fw, "")
                .errors
                .iter()
                .any(|e| e.contains("cannot be imported"));
            assert_eq!(refused, !list.contains(&fw), "{fw:?}");
        }
    }

    #[test]
    fn the_map_depends_on_the_node_shape_and_the_parallel_sizes() {
        let f: Vec<Field> = map_fields(fw("megatron")).collect();
        assert_eq!(&f[..2], &[Field::Nodes, Field::GpusPerNode]);
        assert!(f.contains(&Field::TensorModelParallelSize));
        assert!(f.contains(&Field::PipelineModelParallelSize));
        assert!(!f.contains(&Field::MicroBatchSize));
        let a: Vec<Field> = map_fields(fw("axolotl")).collect();
        assert!(a.contains(&Field::TensorParallelSize));
        assert!(a.contains(&Field::ContextParallelSize));
        assert!(!a.contains(&Field::TensorModelParallelSize));
    }

    #[test]
    fn a_rank_is_described_in_its_frameworks_mesh() {
        // axolotl, 2 × 4 GPUs, tp 2, cp 2: order dp, cp, tp (tp fastest)
        let p = picture(
            fw("axolotl"),
            &[
                (Field::Nodes, "2"),
                (Field::GpusPerNode, "4"),
                (Field::TensorParallelSize, "2"),
                (Field::ContextParallelSize, "2"),
            ],
        );
        assert_eq!(
            describe_rank(&p, 0),
            "GPU 0 of node 0: global rank 0 (dp 0, cp 0, tp 0)"
        );
        assert_eq!(
            describe_rank(&p, 7),
            "GPU 3 of node 1: global rank 7 (dp 1, cp 1, tp 1)"
        );
        assert_eq!(
            describe_rank(&p, 5),
            "GPU 1 of node 1: global rank 5 (dp 1, cp 0, tp 1)"
        );
        // Megatron has a pipeline coordinate
        let m = picture(
            fw("megatron"),
            &[
                (Field::Nodes, "1"),
                (Field::GpusPerNode, "8"),
                (Field::PipelineModelParallelSize, "2"),
            ],
        );
        assert_eq!(
            describe_rank(&m, 4),
            "GPU 4 of node 0: global rank 4 (dp 0, pp 1, cp 0, tp 0)"
        );
    }

    #[test]
    fn groups_and_their_counts() {
        let p = picture(
            fw("axolotl"),
            &[
                (Field::Nodes, "2"),
                (Field::GpusPerNode, "4"),
                (Field::TensorParallelSize, "2"),
                (Field::ContextParallelSize, "2"),
            ],
        );
        assert_eq!(group_count(&p, Axis::Tp), 4);
        assert_eq!(group_count(&p, Axis::Cp), 4);
        assert_eq!(group_count(&p, Axis::Dp), 4);
        let tp = drawn_groups(&p, Axis::Tp);
        assert_eq!(tp.len(), 4);
        assert_eq!(tp[0].members, vec![0, 1]);
        assert_eq!(tp[3].first, 6);
        assert!(tp.iter().all(|g| g.consecutive));
        assert_eq!(tp[1].label, "tp group of ranks 2, 3");
        // cp is strided across tp
        let cp = drawn_groups(&p, Axis::Cp);
        assert_eq!(
            cp.iter().map(|g| g.first).collect::<Vec<_>>(),
            vec![0, 1, 4, 5]
        );
        assert_eq!(cp[1].members, vec![1, 3]);
        assert!(!cp[1].consecutive);
        assert_eq!(cp[1].label, "cp group of ranks 1, 3");
        // size 1: nothing to outline
        let plain = picture(fw("axolotl"), &[(Field::Nodes, "1")]);
        assert!(drawn_groups(&plain, Axis::Tp).is_empty());
        assert!(drawn_groups(&plain, Axis::Cp).is_empty());
    }

    /// axolotl 0.21.0, world 8, ep 2 with dp_shard 4 (tests/mesh.txt's run): EP groups are
    /// consecutive pairs, the replicas stride 2.
    #[test]
    fn an_expert_parallel_rank() {
        let pairs = [
            (Field::Nodes, "1"),
            (Field::ExpertParallelSize, "2"),
            (Field::DpShardSize, "4"),
            (Field::FsdpStateDictType, "FULL_STATE_DICT"),
        ];
        let p = picture(fw("axolotl"), &pairs);
        assert_eq!(p.mesh.size(Axis::Ep), 2);
        assert_eq!(p.mesh.size(Axis::Dp), 4);
        assert_eq!(
            describe_rank(&p, 5),
            "GPU 5 of node 0: global rank 5 (dp 2, cp 0, ep 1, tp 0)"
        );
        assert_eq!(group_count(&p, Axis::Ep), 4);
        let t = map_text(&p);
        assert!(
            t.order.contains("ep 2 (expert_parallel_size)"),
            "{}",
            t.order
        );
        assert!(t.ep_crossing.is_none());
        // 0.19.0 has no expert parallelism: the same inputs draw 8 replicas
        let inputs = RawInputs::from_pairs(pairs.iter().copied());
        let report = fw("axolotl").compute("0.19.0", &inputs);
        let old = mesh::picture(fw("axolotl"), &inputs, &report).unwrap();
        assert_eq!((old.mesh.size(Axis::Ep), old.mesh.size(Axis::Dp)), (1, 8));
    }

    #[test]
    fn the_map_text() {
        let p = picture(
            fw("axolotl"),
            &[
                (Field::Nodes, "2"),
                (Field::GpusPerNode, "4"),
                (Field::TensorParallelSize, "8"),
            ],
        );
        let t = map_text(&p);
        assert!(
            t.order.starts_with("2 nodes × 4 GPUs; dp 1, tp 8 (tensor_parallel_size), cp 1 (context_parallel_size). Rank order: tp fastest, "),
            "{}",
            t.order
        );
        assert!(
            t.order.ends_with("Global rank = node × 4 + local GPU."),
            "{}",
            t.order
        );
        assert_eq!(
            t.tp_crossing.as_deref(),
            Some("1 of 1 tensor-parallel groups span more than one node: their all-reduces go over the inter-node network, a classic slowdown. Keep the tensor-parallel size a divisor of the GPUs per node (4).")
        );
        assert_eq!(t.cp_crossing, None);
        assert_eq!(t.summary, None);
        assert_eq!((t.replicas, t.legend_replicas), (1, 1));

        let one = map_text(&picture(fw("axolotl"), &[(Field::Nodes, "1")]));
        assert!(
            one.order.starts_with("1 node × 8 GPUs; dp 8,"),
            "{}",
            one.order
        );
        assert_eq!(one.tp_crossing, None);
        assert_eq!((one.replicas, one.legend_replicas), (8, 8));

        // cp across nodes
        let cp = map_text(&picture(
            fw("axolotl"),
            &[
                (Field::Nodes, "2"),
                (Field::GpusPerNode, "2"),
                (Field::ContextParallelSize, "4"),
            ],
        ));
        assert_eq!(
            cp.cp_crossing.as_deref(),
            Some("1 of 1 context-parallel groups span more than one node.")
        );

        // above the drawing limit: a summary with every count
        let big = picture(
            fw("megatron"),
            &[
                (Field::Nodes, "128"),
                (Field::GpusPerNode, "8"),
                (Field::TensorModelParallelSize, "8"),
                (Field::PipelineModelParallelSize, "4"),
            ],
        );
        let t = map_text(&big);
        assert_eq!(
            t.summary.as_deref(),
            Some("1024 GPUs are too many to draw one by one: node 0 is drawn; the other 127 nodes (1016 GPUs) repeat the pattern. In all: 32 data-parallel replicas, 128 tensor-parallel groups of 8, 256 pipeline groups of 4.")
        );
        assert_eq!((t.replicas, t.legend_replicas), (32, LEGEND_REPLICAS));
        assert_eq!(t.tp_crossing, None);
    }

    #[test]
    fn unknown_parameters_with_their_own_notice_are_not_listed_twice() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let unknown = vec![pair("colour", "blue"), pair("v", "9"), pair("version", "x")];
        let notices = vec![pair("v", "newer"), pair("version", "unknown")];
        let listed: Vec<_> = unlisted(&unknown, &notices).collect();
        assert_eq!(listed, vec![&pair("colour", "blue")]);
        assert_eq!(unlisted(&unknown, &[]).count(), 3);
        assert_eq!(unlisted(&[], &notices).count(), 0);
    }

    fn marks(every: f64, count: u64, at: &[f64]) -> Option<Marks> {
        Some(Marks {
            every,
            count,
            at: at.to_vec(),
        })
    }

    #[test]
    fn the_timeline_legend() {
        let t = Timeline {
            total: 1000,
            warmup: Some(100),
            epochs: marks(250.0, 4, &[250.0, 500.0, 750.0, 1000.0]),
            evals: None,
            saves: marks(2.0, 500, &[2.0, 4.0]),
            seconds: Some(9000.0),
        };
        let w = timeline_text(&t);
        assert_eq!(w.warmup, Some((100, false)));
        assert_eq!(
            w.legend,
            vec![
                "1 K optimizer steps",
                "warmup to step 100",
                "epoch boundary every 250 steps (4 in the run)",
                "save (square) every 2 steps (500 in the run, the first 2 drawn)",
            ]
        );
        assert_eq!(w.end, "step 1000 · 2.5 h");
        // warmup longer than the run: the bar stops at the end, the legend says so
        let long = Timeline {
            total: 50,
            warmup: Some(80),
            epochs: None,
            evals: marks(10.0, 5, &[10.0, 20.0, 30.0, 40.0, 50.0]),
            saves: None,
            seconds: None,
        };
        let w = timeline_text(&long);
        assert_eq!(w.warmup, Some((50, true)));
        assert_eq!(
            w.legend,
            vec![
                "50 optimizer steps",
                "warmup 80 steps, longer than the run",
                "evaluation (circle) every 10 steps (5 in the run)",
            ]
        );
        assert_eq!(w.end, "step 50");
    }

    #[test]
    fn the_explorer_sentences() {
        let inputs = raw(&[
            (Field::Nodes, "1"),
            (Field::GpusPerNode, "8"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
        ]);
        let ex = layout::explore(fw("axolotl"), "0.19.0", &inputs);
        assert!(!ex.rows.is_empty());
        assert_eq!(
            explorer_summary(&ex),
            format!(
                "{} layouts for 8 GPUs. Current global batch 64 at 2 samples per replica per micro step. \
                 Each row sets gradient accumulation to keep the current global batch (exactly, or the nearest it can).",
                ex.rows.len()
            )
        );
        let row = &ex.rows[0];
        assert_eq!(
            apply_label(&ex, row),
            format!("Apply {}", ex.query(row).replace('&', ", "))
        );
        assert!(apply_label(&ex, row).contains("tensor_parallel_size="));
        assert!(!apply_label(&ex, row).contains('&'));
        // an unreadable batch: nothing to keep
        let none = layout::explore(
            fw("axolotl"),
            "0.19.0",
            &raw(&[(Field::Nodes, "1"), (Field::MicroBatchSize, "x")]),
        );
        assert!(
            explorer_summary(&none).contains(" GPUs. No current global batch to keep. "),
            "{}",
            explorer_summary(&none)
        );
        assert_eq!(explorer_truncated(1000, 1000), None);
        assert_eq!(
            explorer_truncated(1000, 1200).as_deref(),
            Some("The first 1000 of 1200 in this order are shown; sort by a column to see others.")
        );
    }

    #[test]
    fn the_explorer_memory_marks() {
        let inputs = raw(&[
            (Field::BaseModel, "meta-llama/Llama-3.1-8B"),
            (Field::Gpu, "a100-40gb"),
            (Field::MicroBatchSize, "1"),
        ]);
        let mut ex = layout::explore(fw("axolotl"), "0.19.0", &inputs);
        let cap = ex.capacity.unwrap();
        let row = &mut ex.rows[0];
        row.memory_bytes = Some(cap);
        assert_eq!(fit_mark(row, Some(cap)).as_deref(), Some("fits"));
        assert_eq!(row_fits(row, Some(cap)), Some(true));
        row.memory_bytes = Some(cap + 3 * 1_073_741_824 + 1_073_741_824 / 4);
        assert_eq!(
            fit_mark(row, Some(cap)).as_deref(),
            Some("over by 3.25 GiB")
        );
        assert_eq!(row_fits(row, Some(cap)), Some(false));
        assert_eq!(fit_mark(row, None), None);
        assert_eq!(row_fits(row, None), None);
        row.memory_bytes = None;
        assert_eq!(row_memory(row), None);
        assert_eq!(fit_mark(row, Some(cap)), None);
        // the filter drops a row without an estimate
        let all: Vec<usize> = (0..ex.rows.len()).collect();
        assert!(!keep_fitting(&ex, all, true).contains(&0));
    }

    #[test]
    fn a_miss_is_signed() {
        assert_eq!(miss(0), "0 samples");
        assert_eq!(miss(8), "+8 samples");
        assert_eq!(miss(-8), "-8 samples");
        assert_eq!(miss(1024), format!("+{} samples", Num::Int(1024).pretty()));
    }
}

// ---- model, memory and compute -----------------------------------------------------------------

/// A titled group of values and the source every one of them comes from (the model panel's
/// groups and the tokens-and-time section; the command line prints the same titles and sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueGroup {
    pub title: &'static str,
    pub source: &'static str,
    pub outputs: &'static [Output],
}

pub const PARAMETERS: ValueGroup = ValueGroup {
    title: "Parameters",
    source:
        "transformers num_parameters(); with a LoRA adapter, PEFT's count for axolotl's LoraConfig",
    outputs: &[
        Output::NumParameters,
        Output::NumParametersExcludeEmbeddings,
        Output::TrainableParameters,
    ],
};

pub const ZERO_MODEL_STATES: ValueGroup = ValueGroup {
    title: "DeepSpeed ZeRO model states",
    source: "DeepSpeed 0.19.8's own estimator (model states only, no activations)",
    outputs: &[
        Output::ZeroModelStatesGpuBytes,
        Output::ZeroModelStatesCpuBytes,
    ],
};

pub const MEGATRON_MEMORY: ValueGroup = ValueGroup {
    title: "Megatron-LM theoretical memory",
    source: "Megatron-LM 0.19.2 report_theoretical_memory (first pipeline stage; blind to CP, full recompute, MoE/MLA activations)",
    outputs: &[
        Output::WeightAndOptimizerMemoryMb,
        Output::ActivationMemoryMb,
        Output::TotalMemoryMb,
        Output::PaddedVocabSize,
    ],
};

pub const MEMORY_ESTIMATE: ValueGroup = ValueGroup {
    title: "Estimated memory per GPU",
    source: "Published formulas, not a measurement: ZeRO (Rajbhandari et al. 2019) for weights, gradients and optimizer states as this framework shards them; Korthikanti et al. 2022, Table 2 for activations. CUDA context, fragmentation and communication buffers are not counted.",
    outputs: &[
        Output::MemoryPerGpuBytes,
        Output::WeightsBytes,
        Output::GradientsBytes,
        Output::OptimizerBytes,
        Output::ActivationBytes,
        Output::GpuMemoryBytes,
    ],
};

pub const FLOPS: ValueGroup = ValueGroup {
    title: "FLOPs per token",
    source: "each framework's own counter; they differ in how they count attention, experts and the vocabulary",
    outputs: &[
        Output::FlopsPerToken,
        Output::FlopsPerTokenHf,
        Output::FlopsPerTokenMegatron,
        Output::FlopsPerTokenTorchtitan,
        Output::FlopsPerTokenNanotron,
        Output::PeakTflops,
        Output::TokensPerSecondPerGpu,
    ],
};

/// The model panel's groups, in page order.
pub const MODEL_GROUPS: [ValueGroup; 5] = [
    PARAMETERS,
    ZERO_MODEL_STATES,
    MEGATRON_MEMORY,
    MEMORY_ESTIMATE,
    FLOPS,
];

/// The tokens-and-time section: dpcalc's own arithmetic over the framework's numbers
/// (`calc::schedule`); the time needs a throughput or the model stage's estimate.
pub const TOKENS_TIME: ValueGroup = ValueGroup {
    title: "Tokens and time",
    source: "dpcalc's arithmetic over the framework's numbers; time from the throughput given, or from the model stage's estimate",
    outputs: &[
        Output::TokensPerStep,
        Output::TokensPerEpoch,
        Output::TotalTokens,
        Output::TimePerStepSeconds,
        Output::TotalTimeSeconds,
        Output::GpuHours,
    ],
};

/// One part of the memory bar.
#[derive(Clone, Debug, PartialEq)]
pub struct BarPart {
    pub output: Output,
    pub label: &'static str,
    pub bytes: u128,
    /// Left edge and width, in percent of the bar (the larger of the total and the GPU).
    pub x: f64,
    pub width: f64,
    /// `12.3 GiB (45 %)` of the total.
    pub text: String,
}

/// The stacked bar of the estimated memory per GPU against the GPU's memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryBar {
    pub parts: Vec<BarPart>,
    pub total: u128,
    pub total_text: String,
    /// Where the GPU's memory ends, in percent of the bar, and its size.
    pub capacity: Option<(f64, String)>,
    /// Whether the total fits the GPU (`None` without a GPU).
    pub fits: Option<bool>,
}

fn bytes_of(report: &Report, output: Output) -> Option<u128> {
    match report.value(output)? {
        Num::Int(v) => u128::try_from(v).ok(),
        Num::Float(_) => None,
    }
}

/// The bar, when the report has the estimate.
pub fn memory_bar(report: &Report) -> Option<MemoryBar> {
    let total = bytes_of(report, Output::MemoryPerGpuBytes)?;
    let capacity = bytes_of(report, Output::GpuMemoryBytes);
    let scale = capacity.map_or(total, |c| c.max(total)).max(1) as f64;
    let pct = |b: u128| b as f64 * 100.0 / scale;
    let mut x = 0.0;
    let mut parts = Vec::new();
    for (output, label) in [
        (Output::WeightsBytes, "Weights"),
        (Output::GradientsBytes, "Gradients"),
        (Output::OptimizerBytes, "Optimizer states"),
        (Output::ActivationBytes, "Activations"),
    ] {
        let bytes = bytes_of(report, output)?;
        let width = pct(bytes);
        let share = if total == 0 {
            0.0
        } else {
            bytes as f64 * 100.0 / total as f64
        };
        parts.push(BarPart {
            output,
            label,
            bytes,
            x,
            width,
            text: format!("{} ({share:.0} %)", super::fit::gib(bytes)),
        });
        x += width;
    }
    Some(MemoryBar {
        parts,
        total,
        total_text: super::fit::gib(total),
        capacity: capacity.map(|c| (pct(c), super::fit::gib(c))),
        fits: capacity.map(|c| total <= c),
    })
}

/// The memory warning the model stage gave (at the GPU field), for the memory panel.
pub fn memory_warning(report: &Report) -> Option<&str> {
    report
        .diags
        .iter()
        .find(|d| d.field == Field::Gpu && d.level == Level::Warning)
        .map(|d| d.message.as_str())
}

/// Whether the page has anything to show in the model panel.
pub fn has_model(report: &Report) -> bool {
    report.value(Output::NumParameters).is_some()
        || report.value(Output::TotalMemoryMb).is_some()
        || report.value(Output::FlopsPerToken).is_some()
}

/// What a text field offers to pick from (`<datalist>`): a name and the values.
pub fn suggestions(field: Field) -> Option<(&'static str, Vec<&'static str>)> {
    Some(match field {
        Field::BaseModel | Field::ModelNameOrPath | Field::ModelId => {
            ("list-models", super::model::PRESETS.to_vec())
        }
        Field::Gpu => ("list-gpus", super::fit::GPUS.iter().map(|g| g.id).collect()),
        Field::ModelType => (
            "list-model-types",
            super::model::ModelType::ALL
                .iter()
                .map(|t| t.key())
                .collect(),
        ),
        Field::Adapter => ("list-adapters", vec!["lora", "qlora"]),
        Field::OffloadOptimizerDevice | Field::OffloadParamDevice => {
            ("list-devices", vec!["none", "cpu", "nvme"])
        }
        Field::RecomputeGranularity => ("list-granularity", vec!["selective", "full"]),
        Field::RecomputeMethod => ("list-recompute-method", vec!["uniform", "block"]),
        Field::ActivationCheckpointMode => (
            "list-ac-mode",
            vec!["none", "selective", "full", "memory_budget"],
        ),
        Field::Optimizer | Field::Optim => (
            "list-optimizers",
            vec![
                "adamw_torch_fused",
                "adamw_torch",
                "adamw_bnb_8bit",
                "paged_adamw_8bit",
                "adafactor",
                "lion_32bit",
                "sgd",
            ],
        ),
        _ => return None,
    })
}

/// Whether a form group starts folded: the architecture group, unless something in it is given
/// or has a message.
pub fn folded(title: &str, fields: &[Field], raw: &RawInputs, report: &Report) -> bool {
    title == super::field::ARCHITECTURE_TITLE
        && fields
            .iter()
            .all(|&f| raw.get(f).trim().is_empty() && report.diags_for(f).next().is_none())
}

/// How the results list shows a value: the exact number, with bytes also in GiB.
pub fn shown_value(output: Output, v: Num) -> String {
    match v {
        Num::Int(b) if output.name().ends_with("_bytes") && b > 0 => {
            format!("{} ({})", super::fit::gib(b as u128), v.pretty())
        }
        _ => v.pretty(),
    }
}
