//! One node shape per link: `cluster::node_shape` decides it once, the rules publish it in the
//! plan (`plan::NodeShape`), and DeepSpeed's ZeRO estimators, the step time, the GPU map and the
//! explorer's and planner's rows (`fit::LayoutEstimator`) all use that one shape.

use crate::common::files::links;
use crate::common::report::{messages_at, report_of};
use dpcalc::calc::cluster::node_shape;
use dpcalc::calc::fit::LayoutEstimator;
use dpcalc::calc::plan::NodeShape;
use dpcalc::calc::{mesh, Field, Level, Num, Output, Report};
use dpcalc::query;

fn shape(nodes: u64, gpus_per_node: u64, assumed: bool) -> NodeShape {
    NodeShape {
        nodes,
        gpus_per_node,
        assumed,
    }
}

#[test]
fn the_rule_at_its_boundaries() {
    // a typed shape that makes the world is the link's
    assert_eq!(node_shape(16, Some(2), Some(8), true), shape(2, 8, false));
    assert_eq!(node_shape(16, None, Some(4), true), shape(4, 4, false));
    assert_eq!(node_shape(16, Some(4), None, true), shape(4, 4, false));
    // world_size alone: nodes of 8 when 8 divides it, else one node; said to be assumed
    assert_eq!(node_shape(16, None, None, true), shape(2, 8, true));
    assert_eq!(node_shape(8, None, None, true), shape(1, 8, true));
    assert_eq!(node_shape(4, None, None, true), shape(1, 4, true));
    assert_eq!(node_shape(12, None, None, true), shape(1, 12, true));
    assert_eq!(node_shape(1, None, None, true), shape(1, 1, true));
    // a typed side that does not divide the world (an error at world_size): assumed
    assert_eq!(node_shape(12, None, Some(8), true), shape(1, 12, true));
    assert_eq!(node_shape(16, Some(3), None, true), shape(2, 8, true));
    assert_eq!(node_shape(16, Some(4), Some(8), true), shape(2, 8, true));
    // without world_size the world is the typed shape with the form's defaults: not assumed
    assert_eq!(node_shape(8, None, None, false), shape(1, 8, false));
    assert_eq!(node_shape(16, Some(2), None, false), shape(2, 8, false));
    assert_eq!(node_shape(4, None, Some(4), false), shape(1, 4, false));
    // the largest worlds do not overflow
    assert_eq!(
        node_shape(u64::MAX, Some(u64::MAX), Some(2), true),
        shape(1, u64::MAX, true)
    );
}

/// The numbers after `name=` in `text`, e.g. `num_nodes=2`.
fn after(text: &str, name: &str) -> Option<u64> {
    let rest = &text[text.find(name)? + name.len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn worked(r: &Report, o: Output) -> Option<&str> {
    r.steps
        .iter()
        .find(|s| s.output == o)
        .map(|s| s.worked.as_str())
}

/// Every consumer of `r`'s node shape agrees with it; returns how many were checked.
fn consumers_agree(q: &str, r: &Report) -> usize {
    let Some(s) = r.plan.node_shape else {
        return 0;
    };
    let mut checked = 0;
    let world = match r.value(Output::WorldSize) {
        Some(Num::Int(w)) => u64::try_from(w).ok(),
        _ => None,
    };
    assert_eq!(
        Some(s.nodes * s.gpus_per_node),
        world,
        "{q}: the shape makes the world"
    );
    if let Some(w) = worked(r, Output::ZeroModelStatesGpuBytes) {
        assert_eq!(after(w, "num_nodes="), Some(s.nodes), "{q}: ZeRO: {w}");
        assert_eq!(
            after(w, "num_gpus_per_node="),
            Some(s.gpus_per_node),
            "{q}: ZeRO: {w}"
        );
        checked += 1;
    }
    if let Some(w) = worked(r, Output::StepTimeSeconds) {
        let want = format!("({} GPUs per node;", s.gpus_per_node);
        assert!(w.contains(&want), "{q}: step time: {w}");
        checked += 1;
    }
    let link = query::decode(q);
    if let Ok(p) = mesh::picture(link.framework, r) {
        assert_eq!(
            (p.nodes, p.gpus_per_node, p.assumed),
            (s.nodes, s.gpus_per_node, s.assumed),
            "{q}: the GPU map"
        );
        checked += 1;
    }
    // the explorer's and planner's rows: the current layout's row times as the report does
    if let (Some(ctx), Some(g), Some(Num::Float(t))) = (
        LayoutEstimator::new(r, link.framework.spec().mesh.order),
        r.grid,
        r.value(Output::StepTimeSeconds),
    ) {
        if r.plan.accumulation.is_some_and(|a| {
            r.plan.global_batch == Some(a * ctx.micro * g.dp) && r.plan.pipeline.is_none()
        }) {
            let (_, time) = ctx.row(g, ctx.micro, true, u128::MAX);
            let row = time.map(|x| x.total());
            assert_eq!(
                row,
                Some(t),
                "{q}: the explorer's row of the current layout"
            );
            checked += 1;
        }
    }
    let said = messages_at(r, Field::WorldSize, Level::Note)
        .iter()
        .any(|m| m.contains("Node shape assumed"));
    assert_eq!(said, s.assumed, "{q}: the page says when it assumed");
    checked
}

#[test]
fn every_consumer_reads_the_one_shape() {
    let mut queries: Vec<String> = links().into_iter().map(|(_, q)| q).collect();
    for fw in [
        "axolotl",
        "hf",
        "deepspeed",
        "megatron",
        "torchtitan",
        "nanotron",
    ] {
        for cluster in [
            "world_size=16",
            "world_size=12",
            "world_size=4",
            "nodes=4&world_size=16",
            "gpus_per_node=4&world_size=16",
            "nodes=2&gpus_per_node=8",
            "nodes=3",
        ] {
            queries.push(format!(
                "framework={fw}&{cluster}&model=meta-llama%2FLlama-3.1-8B&gpu=h100-sxm\
                 &zero_optimization.stage=3&train_batch_size=32&global_batch_size=32\
                 &micro_batch_size=1&gradient_accumulation_steps=2&seq_length=4096&seq_len=4096\
                 &sequence_len=4096&train_micro_batch_size_per_gpu=1\
                 &per_device_train_batch_size=1"
            ));
        }
    }
    let checked: usize = queries
        .iter()
        .map(|q| consumers_agree(q, &report_of(q)))
        .sum();
    assert!(checked > 80, "only {checked} consumers checked");
}

#[test]
fn world_size_sixteen_is_two_nodes_of_eight_everywhere() {
    let q = "framework=deepspeed&world_size=16&train_batch_size=16&model=meta-llama%2FLlama-3.1-8B\
             &zero_optimization.stage=3&gpu=h100-sxm";
    let r = report_of(q);
    assert_eq!(r.plan.node_shape, Some(shape(2, 8, true)));
    let w = worked(&r, Output::ZeroModelStatesGpuBytes).unwrap_or_default();
    assert!(w.contains("num_gpus_per_node=8, num_nodes=2"), "{w}");
    assert!(consumers_agree(q, &r) >= 2);
    // nodes given beside world_size: a node holds world_size ÷ nodes, for the step time too
    let q =
        "framework=torchtitan&world_size=16&nodes=4&model=meta-llama%2FLlama-3.1-8B&gpu=h100-sxm";
    let r = report_of(q);
    assert_eq!(r.plan.node_shape, Some(shape(4, 4, false)));
    assert!(consumers_agree(q, &r) >= 2);
}
