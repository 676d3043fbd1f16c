//! Rank coordinates and groups against each framework's own code: `tests/mesh.txt` was produced
//! by a script outside the repository (not kept) that calls accelerate 1.13's
//! `ParallelismConfig._get_mesh` (reshaped row-major as `init_device_mesh` does), Megatron-core
//! 0.16.1's `RankGenerator(order="tp-cp-ep-dp-pp")`, nanotron 0.4's reshape/transposes of
//! `ParallelContext._init_parallel_groups`, and torchtitan 0.3.0's `ParallelDims` mesh order.
//! Lines with an `ep=N` token after the sizes come from a second such script (the file's `#`
//! line above them): axolotl 0.21.0's `_get_parallel_config_kwargs` → accelerate
//! 1.15 `ParallelismConfig` under axolotl's `patch_parallelism_config` → `_get_mesh` → groups of
//! `torch.arange(world).view(shape)`; there `dp` = world / (tp·cp·ep), the dp_replicate ×
//! dp_shard axes. Lines starting with `#` are comments.

use crate::common::report::inputs;
use dpcalc::calc::mesh::{self, Axis, Mesh};
use dpcalc::calc::{Field, Framework};

fn axis(name: &str) -> Axis {
    match name {
        "dp" => Axis::Dp,
        "cp" => Axis::Cp,
        "sp" => Axis::Sp,
        "tp" => Axis::Tp,
        "pp" => Axis::Pp,
        "ep" => Axis::Ep,
        other => panic!("axis {other}"),
    }
}

fn sorted(mut g: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    for x in &mut g {
        x.sort_unstable();
    }
    g.sort();
    g
}

#[test]
fn groups_match_the_frameworks_code() {
    let text = include_str!("mesh.txt");
    let mut checked = 0;
    let mut ep_lines = 0;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let mut f: Vec<&str> = line.split(' ').collect();
        let fw = Framework::from_id(f[0]).unwrap();
        let n: Vec<u64> = f[1..6].iter().map(|x| x.parse().unwrap()).collect();
        let (world, tp, cp, sp, pp) = (n[0], n[1], n[2], n[3], n[4]);
        let ep = match f[6].strip_prefix("ep=") {
            Some(e) => {
                f.remove(6);
                ep_lines += 1;
                e.parse().unwrap()
            }
            None => 1,
        };
        let dp = world / (tp * cp * sp * pp * ep);
        let m = Mesh::new(
            fw,
            &[
                (Axis::Dp, dp),
                (Axis::Tp, tp),
                (Axis::Cp, cp),
                (Axis::Sp, sp),
                (Axis::Pp, pp),
                (Axis::Ep, ep),
            ],
        )
        .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(m.world, world);
        let want: Vec<Vec<u64>> = f[7]
            .split(';')
            .map(|g| g.split(',').map(|r| r.parse().unwrap()).collect())
            .collect();
        let a = axis(f[6]);
        assert_eq!(sorted(m.groups(a)), sorted(want.clone()), "{line}");
        // coordinates round-trip, and a group's members agree on every other coordinate
        for g in &want {
            for &r in g {
                assert_eq!(m.rank(m.coords(r)), r);
                assert_eq!(
                    sorted(vec![m.group(a, r)]),
                    sorted(vec![g.clone()]),
                    "{line}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked > 350, "{checked}");
    assert!(ep_lines >= 32, "{ep_lines}");
}

/// Megatron's `initialize_model_parallel` docstring: 16 GPUs, tp 2, pp 4.
#[test]
fn megatron_docstring_example() {
    let m = Mesh::new(
        Framework::Megatron,
        &[(Axis::Tp, 2), (Axis::Pp, 4), (Axis::Dp, 2)],
    )
    .unwrap();
    assert_eq!(
        m.groups(Axis::Tp),
        (0..8).map(|i| vec![2 * i, 2 * i + 1]).collect::<Vec<_>>()
    );
    assert_eq!(
        m.groups(Axis::Pp),
        vec![
            vec![0, 4, 8, 12],
            vec![1, 5, 9, 13],
            vec![2, 6, 10, 14],
            vec![3, 7, 11, 15]
        ]
    );
    assert_eq!(
        m.groups(Axis::Dp),
        vec![
            vec![0, 2],
            vec![1, 3],
            vec![4, 6],
            vec![5, 7],
            vec![8, 10],
            vec![9, 11],
            vec![12, 14],
            vec![13, 15]
        ]
    );
}

/// DeepSpeed's `initialize_mesh_device((data_parallel_size, tensor_model_parallel_size))`:
/// row-major, so a TP group is consecutive ranks, a DP group strided by tp.
#[test]
fn deepspeed_autotp_mesh() {
    let m = Mesh::new(Framework::DeepSpeed, &[(Axis::Tp, 4), (Axis::Dp, 2)]).unwrap();
    assert_eq!(m.groups(Axis::Tp), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    assert_eq!(m.groups(Axis::Dp)[0], vec![0, 4]);
    let c = m.coords(6);
    assert_eq!((c.dp, c.tp), (1, 2));
    // a dimension the framework does not have is refused
    assert!(Mesh::new(Framework::Axolotl, &[(Axis::Pp, 2)]).is_none());
    assert!(Mesh::new(Framework::Axolotl, &[(Axis::Tp, 0)]).is_none());
}

#[test]
fn tp_across_nodes_is_flagged() {
    let fw = Framework::Axolotl;
    // 2 nodes × 4 GPUs, tp 8: the one TP group spans both nodes
    let r = inputs(&[
        (Field::Nodes, "2"),
        (Field::GpusPerNode, "4"),
        (Field::TensorParallelSize, "8"),
    ]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert_eq!(p.tp_crossing, Some(1));
    // tp 4 fits a node
    let r = inputs(&[
        (Field::Nodes, "2"),
        (Field::GpusPerNode, "4"),
        (Field::TensorParallelSize, "4"),
    ]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert_eq!(p.tp_crossing, Some(0));
    assert!(!p.summarised);
    // 3 GPUs per node, tp 2: groups [2,3] and... straddle (6 GPUs: [0,1] [2,3] [4,5]; node 0 = 0..3)
    let r = inputs(&[
        (Field::Nodes, "2"),
        (Field::GpusPerNode, "3"),
        (Field::TensorParallelSize, "2"),
    ]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert_eq!(p.tp_crossing, Some(1));
    // cp 2 × tp 4 on 8-GPU nodes: the cp groups (stride 4) stay in the node
    let r = inputs(&[
        (Field::Nodes, "2"),
        (Field::TensorParallelSize, "4"),
        (Field::ContextParallelSize, "2"),
    ]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert_eq!((p.tp_crossing, p.cp_crossing), (Some(0), Some(0)));
    assert_eq!(p.mesh.size(Axis::Dp), 2);
}

#[test]
fn large_clusters_are_summarised() {
    let fw = Framework::Axolotl;
    // 64 × 8 = 512 GPUs: drawn in full (the limit is "more than 512")
    let r = inputs(&[(Field::Nodes, "64"), (Field::TensorParallelSize, "8")]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert!(!p.summarised);
    assert_eq!((p.drawn_nodes, p.drawn_gpus), (64, 8));
    assert_eq!(p.mesh.size(Axis::Dp), 64);
    let r = inputs(&[(Field::Nodes, "65"), (Field::TensorParallelSize, "8")]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert!(p.summarised);
    assert_eq!((p.drawn_nodes, p.drawn_gpus), (1, 8));
    assert_eq!((p.nodes, p.gpus_per_node), (65, 8));
    assert_eq!(p.mesh.size(Axis::Dp), 65);
    // one node of 4096 GPUs: at most 512 of its GPUs are drawn
    let r = inputs(&[(Field::GpusPerNode, "4096")]);
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert!(p.summarised);
    assert_eq!((p.drawn_nodes, p.drawn_gpus), (1, 512));
    // tp that does not divide: no picture, a reason (the framework's own is at the field)
    let r = inputs(&[(Field::TensorParallelSize, "3")]);
    let report = fw.compute("0.19.0", &r);
    let e = mesh::picture(fw, &report).unwrap_err();
    assert!(e.contains("does not accept these parallel sizes"), "{e}");
    assert!(report.error_at(Field::TensorParallelSize).is_some());
}

#[test]
fn segments_split_at_nodes_and_gaps() {
    assert_eq!(mesh::segments(&[0, 1, 2, 3], 8), vec![(0, 0, 3)]);
    assert_eq!(mesh::segments(&[6, 7, 8, 9], 8), vec![(0, 6, 7), (1, 0, 1)]);
    assert_eq!(mesh::segments(&[0, 2], 8), vec![(0, 0, 0), (0, 2, 2)]);
    assert_eq!(
        mesh::describe(Framework::Megatron),
        "tp fastest, then cp, then dp, then pp"
    );
    assert_eq!(
        mesh::describe(Framework::Axolotl),
        "tp fastest, then ep, then cp, then dp"
    );
}

/// The node-crossing count walks one period of the pattern, not the cluster: checked against a
/// walk of every group, and fast for the largest cluster.
#[test]
fn crossing_counts_by_period() {
    for (tp, cp, gpn, world) in [
        (2u64, 1u64, 3u64, 12u64),
        (4, 2, 6, 48),
        (8, 1, 4, 64),
        (3, 2, 4, 48),
        (2, 3, 8, 48),
    ] {
        let m = Mesh::new(
            Framework::Megatron,
            &[
                (Axis::Tp, tp),
                (Axis::Cp, cp),
                (Axis::Dp, world / (tp * cp)),
            ],
        )
        .unwrap();
        for axis in [Axis::Tp, Axis::Cp] {
            let walked = m
                .groups(axis)
                .iter()
                .filter(|g| g.iter().map(|r| r / gpn).min() != g.iter().map(|r| r / gpn).max())
                .count() as u64;
            assert_eq!(
                m.crossing(axis, gpn),
                Some(walked),
                "{tp} {cp} {gpn} {world} {axis:?}"
            );
        }
    }
    let fw = Framework::Axolotl;
    let r = inputs(&[
        (Field::WorldSize, "16777216"),
        (Field::TensorParallelSize, "16"),
    ]);
    let t = std::time::Instant::now();
    let p = mesh::picture(fw, &fw.compute("0.19.0", &r)).unwrap();
    assert!(t.elapsed().as_secs_f64() < 1.0);
    // 2^24 GPUs, 8 per node, tp 16: every TP group spans two nodes
    assert_eq!(p.tp_crossing, Some(1 << 20));
    let r = inputs(&[(Field::WorldSize, "16777217")]);
    assert!(mesh::picture(fw, &fw.compute("0.19.0", &r)).is_err());
}
