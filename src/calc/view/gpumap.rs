//! The GPU map: which inputs it depends on, a rank in words, the groups drawn along an axis
//! and their counts, and the map's sentences (the rank order, groups spanning nodes, the summary
//! above the drawing limit).

use crate::calc::layout;
use crate::calc::mesh::{self, Axis, Picture};
use crate::calc::{Field, Framework};

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
            "{} {} × {} GPUs{}; {}. Rank order: {} (from {}). Global rank = node × {} + local GPU.",
            p.nodes,
            if p.nodes == 1 { "node" } else { "nodes" },
            p.gpus_per_node,
            if p.assumed {
                " (node shape assumed: give nodes or gpus_per_node)"
            } else {
                ""
            },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::view::testing::{fw, raw};
    use crate::calc::RawInputs;

    fn picture(framework: Framework, pairs: &[(Field, &str)]) -> Picture {
        let inputs = raw(pairs);
        let report = framework.compute(framework.default_release().id, &inputs);
        mesh::picture(framework, &report).expect("a picture")
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
        let old = mesh::picture(fw("axolotl"), &report).unwrap();
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
}
