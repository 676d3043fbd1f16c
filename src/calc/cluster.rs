//! The cluster every framework starts from: `nodes × gpus_per_node`, or `world_size` as given
//! (what `WORLD_SIZE` holds at launch), and the nearest valid sizes when a layout does not fit.

use super::parse::Reader;
use super::plan::NodeShape;
use super::{Field, Level, Num, Output, Param, Report};

/// dpcalc's cluster default: one node of eight GPUs.
pub const DEFAULT_NODES: u64 = 1;
pub const DEFAULT_GPUS_PER_NODE: u64 = 8;

/// The world size: `world_size` when given (an error when it contradicts a given shape), else
/// `nodes × gpus_per_node`. Sets [`Output::WorldSize`] and explains it.
pub fn world_size(
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    world_size: Param<u64>,
    report: &mut Report,
) -> Option<u64> {
    let (nodes_given, gpus_given) = (nodes.is_given(), gpus_per_node.is_given());
    let world_given = world_size.is_given();
    let typed_nodes = nodes.given().filter(|&n| n > 0);
    let typed_gpus = gpus_per_node.given().filter(|&g| g > 0);
    let product = shape_product(nodes, gpus_per_node, report);
    let world_size = match world_size {
        Param::Given(0) => {
            report.diag(
                Field::WorldSize,
                Level::Error,
                "world_size must be at least 1",
            );
            return None;
        }
        Param::Given(ws) => {
            shape_agrees(ws, nodes_given, gpus_given, product, report);
            report.explain_with(
                Output::WorldSize,
                "world_size (WORLD_SIZE, as given)",
                || format!("world_size = {ws}"),
            );
            ws
        }
        Param::Invalid => return None,
        Param::Absent => {
            let (n, g, p) = product?;
            report.explain_with(
                Output::WorldSize,
                "world_size = nodes × gpus_per_node",
                || format!("world_size = {n} × {g} = {p}"),
            );
            p
        }
    };
    report.set(Output::WorldSize, Num::Int(world_size.into()));
    let shape = node_shape(world_size, typed_nodes, typed_gpus, world_given);
    if shape.assumed {
        report.diag_with(Field::WorldSize, Level::Note, || {
            format!(
                "Node shape assumed: {} {} × {} GPUs (world_size gives none; dpcalc takes nodes \
                 of {DEFAULT_GPUS_PER_NODE} when they divide it, else one node). Give nodes or \
                 gpus_per_node if yours differ: DeepSpeed's ZeRO estimate, the step time and the \
                 GPU map use it.",
                shape.nodes,
                if shape.nodes == 1 { "node" } else { "nodes" },
                shape.gpus_per_node
            )
        });
    }
    report.plan.node_shape = Some(shape);
    Some(world_size)
}

/// `nodes × gpus_per_node` with dpcalc's defaults for a missing side, as `(nodes, gpus, product)`;
/// `None` (an error at the field) when a side is 0 or the product does not fit.
fn shape_product(
    nodes: Param<u64>,
    gpus_per_node: Param<u64>,
    report: &mut Report,
) -> Option<(u64, u64, u64)> {
    let nodes = at_least_one(report, Field::Nodes, nodes.or(DEFAULT_NODES));
    let gpus = at_least_one(
        report,
        Field::GpusPerNode,
        gpus_per_node.or(DEFAULT_GPUS_PER_NODE),
    );
    match (nodes, gpus) {
        (Some(n), Some(g)) => match n.checked_mul(g) {
            Some(p) => Some((n, g, p)),
            None => {
                report.diag(
                    Field::GpusPerNode,
                    Level::Error,
                    format!("nodes × gpus_per_node = {n} × {g} is more GPUs than dpcalc can count (at most {})", u64::MAX),
                );
                None
            }
        },
        _ => None,
    }
}

/// A typed `world_size` against the typed shape: with both sides given they must multiply to
/// it; with one side given, the other is whatever makes it (it must divide). An error at
/// `world_size` otherwise (dpcalc uses the `world_size`).
fn shape_agrees(
    ws: u64,
    nodes_given: bool,
    gpus_given: bool,
    product: Option<(u64, u64, u64)>,
    report: &mut Report,
) {
    match (nodes_given, gpus_given, product) {
        (true, true, Some((n, g, p))) if p != ws => report.diag(
            Field::WorldSize,
            Level::Error,
            format!(
                "world_size {ws} does not match nodes × gpus_per_node = {n} × {g} = {p}. \
                 dpcalc uses world_size {ws}; remove one or make them agree."
            ),
        ),
        (false, true, Some((_, g, _))) if ws % g != 0 => report.diag(
            Field::WorldSize,
            Level::Error,
            format!(
                "world_size {ws} is not a whole number of nodes of gpus_per_node {g} GPUs. \
                 dpcalc uses world_size {ws}; make gpus_per_node divide it, or remove it."
            ),
        ),
        (true, false, Some((n, _, _))) if ws % n != 0 => report.diag(
            Field::WorldSize,
            Level::Error,
            format!(
                "world_size {ws} cannot be split evenly over nodes {n}. \
                 dpcalc uses world_size {ws}; make nodes divide it, or remove it."
            ),
        ),
        _ => {}
    }
}

/// The one rule for the node shape of `world` GPUs (see [`NodeShape`]): the typed sides that
/// make `world`; else nodes of 8 GPUs when 8 divides `world`, else one node. Without a typed
/// `world_size` (`world_given` false) the world is the typed shape with the form's defaults for
/// a missing side (one node, 8 GPUs), which the form shows: not an assumption. With a typed
/// `world_size` and no typed side that makes it, the shape is assumed.
pub fn node_shape(
    world: u64,
    nodes: Option<u64>,
    gpus_per_node: Option<u64>,
    world_given: bool,
) -> NodeShape {
    let exact = |n: u64, g: u64, assumed: bool| NodeShape {
        nodes: n,
        gpus_per_node: g,
        assumed,
    };
    match (nodes, gpus_per_node) {
        (Some(n), Some(g)) if n.checked_mul(g) == Some(world) => exact(n, g, false),
        (None, Some(g)) if world % g == 0 => exact(world / g, g, false),
        (Some(n), None) if world % n == 0 => exact(n, world / n, false),
        _ if world % DEFAULT_GPUS_PER_NODE == 0 => exact(
            world / DEFAULT_GPUS_PER_NODE,
            DEFAULT_GPUS_PER_NODE,
            world_given,
        ),
        _ => exact(1, world, world_given),
    }
}

/// A cluster count that must be at least 1.
fn at_least_one(report: &mut Report, field: Field, value: Option<u64>) -> Option<u64> {
    match value {
        Some(0) => {
            report.diag(
                field,
                Level::Error,
                format!("{} must be at least 1", field.key()),
            );
            None
        }
        v => v,
    }
}

/// The fix for a model-parallel product `model` that does not divide `ws`: the nearest world
/// sizes it divides, and the nearest divisors of `ws` (`product` names the product, e.g.
/// `tensor_parallel_size × context_parallel_size`).
pub fn nearest_valid(ws: u64, model: u64, product: &str) -> String {
    let below = ws / model * model;
    let above = (ws / model)
        .checked_add(1)
        .and_then(|k| k.checked_mul(model));
    let mut sizes: Vec<String> = Vec::new();
    if below >= model {
        sizes.push(below.to_string());
    }
    if let Some(a) = above {
        sizes.push(a.to_string());
    }
    // Scan a bounded distance for divisors of ws around model, so a huge ws costs nothing.
    const SCAN: u64 = 100_000;
    let lower = (1..model.min(ws.saturating_add(1)))
        .rev()
        .take(SCAN as usize)
        .find(|d| ws % d == 0);
    let upper = model
        .checked_add(1)
        .and_then(|from| (from..=ws.min(model.saturating_add(SCAN))).find(|d| ws % d == 0));
    let products: Vec<String> = lower
        .into_iter()
        .chain(upper)
        .map(|d| d.to_string())
        .collect();
    let mut fix = if sizes.is_empty() {
        "Nearest valid:".to_string()
    } else {
        format!("Nearest valid: world_size {}", sizes.join(" or "))
    };
    if !products.is_empty() {
        fix.push_str(&format!(
            ", or keep {ws} GPUs with {product} = {}",
            products.join(" or ")
        ));
    }
    fix.push('.');
    fix
}

/// The cluster inputs every framework reads first, typed: `nodes`, `gpus_per_node` and
/// `world_size` (absent fields take dpcalc's cluster default when used).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterInputs {
    pub nodes: Param<u64>,
    pub gpus_per_node: Param<u64>,
    pub world_size: Param<u64>,
}

impl ClusterInputs {
    /// Reads the three fields; unreadable ones become [`Param::Invalid`] with an error at the
    /// field.
    pub fn read(r: &mut Reader) -> ClusterInputs {
        ClusterInputs {
            nodes: r.count(Field::Nodes),
            gpus_per_node: r.count(Field::GpusPerNode),
            world_size: r.count(Field::WorldSize),
        }
    }

    /// The world size these inputs give, checked ([`world_size`]): sets [`Output::WorldSize`] and
    /// explains it.
    pub fn world_size(self, report: &mut Report) -> Option<u64> {
        world_size(self.nodes, self.gpus_per_node, self.world_size, report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "tensor_parallel_size × context_parallel_size";

    #[test]
    fn nearest_valid_sizes() {
        assert_eq!(
            nearest_valid(6, 4, P),
            "Nearest valid: world_size 4 or 8, or keep 6 GPUs with tensor_parallel_size × context_parallel_size = 3 or 6."
        );
        assert_eq!(nearest_valid(2, 4, P), "Nearest valid: world_size 4, or keep 2 GPUs with tensor_parallel_size × context_parallel_size = 2.");
        // a huge world size: the divisor scan is bounded
        let big = nearest_valid(u64::MAX, 7, P);
        assert!(big.starts_with("Nearest valid: world_size"), "{big}");
        // found by proptest: tp × cp = u64::MAX overflowed `model + 1`
        assert_eq!(
            nearest_valid(3, u64::MAX, P),
            "Nearest valid: world_size 18446744073709551615, or keep 3 GPUs with tensor_parallel_size × context_parallel_size = 3."
        );
    }
}
