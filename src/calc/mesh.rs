//! Which GPU does what: a framework's rank order, each global rank's coordinates in the
//! (pp, dp, cp, sp, tp) mesh, the groups along each dimension, and the picture of a cluster.
//!
//! Every framework here lays the ranks out as a row-major mesh (the last dimension varies
//! fastest), in its own dimension order (slowest first):
//!
//! - axolotl and the HF Trainer: accelerate 1.13 `ParallelismConfig._get_mesh`
//!   (`accelerate/parallelism_config.py`), `mesh_order = ["dp_replicate", "dp_shard", "cp", "sp",
//!   "tp"]`, passed to `torch.distributed.init_device_mesh` (row-major over `arange(world)`):
//!   tp fastest, then sp, then cp, then dp (axolotl gives it `tp_size`, `cp_size`, `dp_shard_size`,
//!   `utils/distributed.py::_get_parallel_config_kwargs`). With DeepSpeed Ulysses
//!   (`sp_backend="deepspeed"`, `sp_size > 1`) accelerate builds no mesh and DeepSpeed's
//!   `(data_parallel, sequence_parallel)` mesh applies: the same order. axolotl 0.21.0 with
//!   `expert_parallel_size > 1` patches `_get_mesh` (`monkeypatch/accelerate/parallelism_config.py`,
//!   `MESH_ORDER = ("dp_replicate", "dp_shard", "cp", "ep", "sp", "tp")`): ep between cp and tp,
//!   so an EP group is a run of consecutive ranks when tp is 1 (axolotl refuses tp with ep).
//!   Run, not read: tests/mesh.txt's `ep=` lines are the groups axolotl 0.21.0's patched
//!   `_get_mesh` built on accelerate 1.15.
//! - DeepSpeed 0.19.8: AutoTP `utils/groups.py::_init_tp_mesh_device`,
//!   `initialize_mesh_device((data_parallel_size, tensor_model_parallel_size))`; Ulysses
//!   `deepspeed/__init__.py::initialize`, `initialize_mesh_device((data_parallel_size,
//!   sequence_parallel_size))`. Each is its own two-dimensional mesh; with both above 1 dpcalc
//!   draws (dp, sp, tp) and says that DeepSpeed builds the two meshes separately.
//! - Megatron-core 0.16.1: `parallel_state.initialize_model_parallel(order="tp-cp-ep-dp-pp")`
//!   and `RankGenerator` (the first name in the order varies fastest): tp fastest, then cp, then
//!   dp, then pp.
//! - torchtitan 0.3.0: `distributed/parallel_dims.py::ParallelDims`, mesh
//!   `("pp", "dp_replicate", "dp_shard", "cp", "tp")`: tp fastest, then cp, dp, pp.
//! - nanotron 0.4: `parallel/context.py::ParallelContext._init_parallel_groups`,
//!   `np.arange(world).reshape((expert_parallel_size, pipeline_parallel_size, data_parallel_size,
//!   tensor_parallel_size))`: tp fastest, then dp, then pp.
//!
//! The picture puts global rank `node × gpus_per_node + local_rank` at node `node`, GPU
//! `local_rank` (torchrun's default rank assignment: ranks fill a node before the next).

use super::frameworks::Framework;
use super::layout::{self, Dim};
use super::{Field, Grid, Num, Output, Report};

pub use super::spec::Axis;

impl Axis {
    pub const fn short(self) -> &'static str {
        match self {
            Axis::Pp => "pp",
            Axis::Dp => "dp",
            Axis::Cp => "cp",
            Axis::Sp => "sp",
            Axis::Ep => "ep",
            Axis::Tp => "tp",
        }
    }

    const fn index(self) -> usize {
        match self {
            Axis::Pp => 0,
            Axis::Dp => 1,
            Axis::Cp => 2,
            Axis::Sp => 3,
            Axis::Tp => 4,
            Axis::Ep => 5,
        }
    }

    /// Every axis, in [`Axis::index`] order.
    pub const ALL: [Axis; 6] = [Axis::Pp, Axis::Dp, Axis::Cp, Axis::Sp, Axis::Tp, Axis::Ep];

    fn of(dim: Dim) -> Axis {
        match dim {
            Dim::Tp => Axis::Tp,
            Dim::Cp => Axis::Cp,
            Dim::Sp => Axis::Sp,
            Dim::Pp => Axis::Pp,
            Dim::Ep => Axis::Ep,
        }
    }
}

/// The framework's mesh order, slowest dimension first (the last varies fastest).
pub fn order(framework: Framework) -> &'static [Axis] {
    framework.spec().mesh.order
}

/// Where the order comes from, for the picture's caption.
pub fn source(framework: Framework) -> &'static str {
    framework.spec().mesh.source
}

/// The order in words: "tp fastest, then cp, then dp".
pub fn describe(framework: Framework) -> String {
    let mut names: Vec<&str> = order(framework).iter().rev().map(|a| a.short()).collect();
    let first = names.remove(0);
    let mut s = format!("{first} fastest");
    for n in names {
        s.push_str(", then ");
        s.push_str(n);
    }
    s
}

/// A rank's place in the mesh (a dimension the framework lacks is 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Coords {
    pub pp: u64,
    pub dp: u64,
    pub cp: u64,
    pub sp: u64,
    pub tp: u64,
    pub ep: u64,
}

impl Coords {
    pub fn get(&self, axis: Axis) -> u64 {
        match axis {
            Axis::Pp => self.pp,
            Axis::Dp => self.dp,
            Axis::Cp => self.cp,
            Axis::Sp => self.sp,
            Axis::Tp => self.tp,
            Axis::Ep => self.ep,
        }
    }

    fn set(&mut self, axis: Axis, v: u64) {
        match axis {
            Axis::Pp => self.pp = v,
            Axis::Dp => self.dp = v,
            Axis::Cp => self.cp = v,
            Axis::Sp => self.sp = v,
            Axis::Tp => self.tp = v,
            Axis::Ep => self.ep = v,
        }
    }
}

/// One layout's mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub framework: Framework,
    /// Size per [`Axis`] (indexed pp, dp, cp, sp, tp, ep); 1 for dimensions the framework lacks.
    sizes: [u64; 6],
    pub world: u64,
}

impl Mesh {
    /// The mesh of `sizes` (`(axis, size)`; missing axes are 1) for `framework`; `None` unless
    /// the sizes are at least 1 and multiply to a count that fits.
    pub fn new(framework: Framework, sizes: &[(Axis, u64)]) -> Option<Mesh> {
        let mut s = [1u64; 6];
        for &(a, v) in sizes {
            if v == 0 {
                return None;
            }
            s[a.index()] = v;
        }
        for a in Axis::ALL {
            if s[a.index()] > 1 && !order(framework).contains(&a) {
                return None;
            }
        }
        let world = s.iter().try_fold(1u64, |p, &v| p.checked_mul(v))?;
        Some(Mesh {
            framework,
            sizes: s,
            world,
        })
    }

    pub fn size(&self, axis: Axis) -> u64 {
        self.sizes[axis.index()]
    }

    /// The coordinates of global rank `rank` (< world).
    pub fn coords(&self, rank: u64) -> Coords {
        let mut c = Coords::default();
        let mut r = rank;
        for &a in order(self.framework).iter().rev() {
            let n = self.size(a);
            c.set(a, r % n);
            r /= n;
        }
        c
    }

    /// The global rank at `c`.
    pub fn rank(&self, c: Coords) -> u64 {
        order(self.framework)
            .iter()
            .fold(0u64, |r, &a| r * self.size(a) + c.get(a))
    }

    /// The ranks that differ from `rank` only along `axis` (its group), in coordinate order.
    pub fn group(&self, axis: Axis, rank: u64) -> Vec<u64> {
        let mut c = self.coords(rank);
        (0..self.size(axis))
            .map(|v| {
                c.set(axis, v);
                self.rank(c)
            })
            .collect()
    }

    /// Every group along `axis`, ordered by their smallest rank.
    pub fn groups(&self, axis: Axis) -> Vec<Vec<u64>> {
        (0..self.world)
            .filter(|&r| self.coords(r).get(axis) == 0)
            .map(|r| self.group(axis, r))
            .collect()
    }

    /// How many groups along `axis` span more than one node of `gpus_per_node` GPUs (which
    /// divides the world). Ranks grow with every coordinate, so a group spans its first and
    /// last member's nodes. The pattern repeats every `lcm(block, gpus_per_node)` ranks, where
    /// `block` is the product of the sizes from `axis` to the fastest dimension, so only one
    /// period is walked; `None` when that period is over [`MAX_WALK`] ranks.
    pub fn crossing(&self, axis: Axis, gpus_per_node: u64) -> Option<u64> {
        if self.size(axis) == 1 || gpus_per_node == 0 || gpus_per_node >= self.world {
            return Some(0);
        }
        let o = order(self.framework);
        let at = o.iter().position(|&a| a == axis)?;
        let block = o[at..]
            .iter()
            .try_fold(1u64, |p, &a| p.checked_mul(self.size(a)))?;
        let period = lcm(block, gpus_per_node)?.min(self.world);
        if period > MAX_WALK {
            return None;
        }
        let in_period = (0..period)
            .filter(|&r| self.coords(r).get(axis) == 0)
            .filter(|&r| {
                let mut c = self.coords(r);
                c.set(axis, self.size(axis) - 1);
                r / gpus_per_node != self.rank(c) / gpus_per_node
            })
            .count() as u64;
        in_period.checked_mul(self.world / period)
    }
}

/// The most ranks [`Mesh::crossing`] walks.
pub const MAX_WALK: u64 = 1 << 22;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

/// The largest cluster pictured (as the explorer's).
pub const MAX_WORLD: u64 = layout::MAX_WORLD;

/// Clusters above this many GPUs are summarised: one node drawn, the rest as counts.
pub const DRAW_LIMIT: u64 = 512;

/// The most GPUs drawn of the one node a summary shows.
pub const NODE_DRAW_LIMIT: u64 = 512;

/// The picture of the cluster for the current inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Picture {
    pub mesh: Mesh,
    pub nodes: u64,
    pub gpus_per_node: u64,
    /// The node shape is dpcalc's assumption, not the link's (`NodeShape::assumed`).
    pub assumed: bool,
    /// Nodes drawn cell by cell (all, or 1 in a summary).
    pub drawn_nodes: u64,
    /// GPUs drawn per drawn node.
    pub drawn_gpus: u64,
    pub summarised: bool,
    /// Tensor-parallel groups spanning more than one node (`None`: too many to count).
    pub tp_crossing: Option<u64>,
    pub cp_crossing: Option<u64>,
    /// Expert-parallel groups spanning more than one node.
    pub ep_crossing: Option<u64>,
    /// The framework's model-parallel dims with their sizes (for the legend).
    pub dims: Vec<(Axis, Field, u64)>,
    /// The rank order in words and its source.
    pub order: String,
    pub source: &'static str,
    /// A caveat about the order (DeepSpeed with both AutoTP and Ulysses).
    pub caveat: Option<&'static str>,
}

/// The picture for the current inputs, or why there is none.
pub fn picture(framework: Framework, report: &Report) -> Result<Picture, String> {
    let world = match report.value(Output::WorldSize) {
        Some(Num::Int(w)) if w > 0 => u64::try_from(w).map_err(|_| "too many GPUs".to_string())?,
        _ => return Err("The GPU map needs a valid world size.".into()),
    };
    if world > MAX_WORLD {
        return Err(format!(
            "{world} GPUs: the GPU map covers clusters of up to {MAX_WORLD} GPUs."
        ));
    }
    // the one node shape the rules published
    let shape = report
        .plan
        .node_shape
        .ok_or_else(|| "The GPU map needs a valid world size.".to_string())?;
    let (nodes, gpn) = (shape.nodes, shape.gpus_per_node);
    // the layout the framework resolved (a size it does not read is 1 in its grid)
    let grid = report.grid.ok_or_else(|| {
        "No layout to draw: the framework does not accept these parallel sizes (see its message)."
            .to_string()
    })?;
    let table = layout::dims(framework);
    let sizes: Vec<u64> = table.iter().map(|&(d, _)| grid_size(grid, d)).collect();
    let product = sizes
        .iter()
        .try_fold(1u64, |p, &v| p.checked_mul(v))
        .ok_or_else(|| "The parallel sizes are too large.".to_string())?;
    if world % product != 0 {
        let names: Vec<&str> = table.iter().map(|(_, f)| f.key()).collect();
        return Err(format!(
            "{} = {product} does not divide world_size {world}: no layout to draw.",
            names.join(" × ")
        ));
    }
    let mut axes: Vec<(Axis, u64)> = vec![(Axis::Dp, world / product)];
    let mut dims = Vec::new();
    for (&(d, f), &s) in table.iter().zip(&sizes) {
        axes.push((Axis::of(d), s));
        dims.push((Axis::of(d), f, s));
    }
    let mesh = Mesh::new(framework, &axes).ok_or_else(|| "No mesh for these sizes.".to_string())?;
    let summarised = world > DRAW_LIMIT;
    let caveat = (framework.spec().mesh.caveat)(mesh.size(Axis::Tp), mesh.size(Axis::Sp));
    Ok(Picture {
        tp_crossing: mesh.crossing(Axis::Tp, gpn),
        cp_crossing: mesh.crossing(Axis::Cp, gpn),
        ep_crossing: mesh.crossing(Axis::Ep, gpn),
        nodes,
        gpus_per_node: gpn,
        assumed: shape.assumed,
        drawn_nodes: if summarised { 1 } else { nodes },
        drawn_gpus: if summarised {
            gpn.min(NODE_DRAW_LIMIT)
        } else {
            gpn
        },
        summarised,
        dims,
        order: describe(framework),
        source: source(framework),
        caveat,
        mesh,
    })
}

/// A dimension's size in the framework's resolved grid.
fn grid_size(g: Grid, d: Dim) -> u64 {
    match d {
        Dim::Tp => g.tp,
        Dim::Cp => g.cp,
        Dim::Sp => g.sp,
        Dim::Pp => g.pp,
        Dim::Ep => g.ep,
    }
}

/// The ranks of one group cut into runs of consecutive ranks on one node, as
/// `(node, first local GPU, last local GPU)`, for outlining.
pub fn segments(ranks: &[u64], gpus_per_node: u64) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for &r in ranks {
        let (node, gpu) = (r / gpus_per_node, r % gpus_per_node);
        match out.last_mut() {
            Some(last) if last.0 == node && last.2 + 1 == gpu => last.2 = gpu,
            _ => out.push((node, gpu, gpu)),
        }
    }
    out
}
