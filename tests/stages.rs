//! The seams between a framework's stages: the grid stage publishes the parallel layout the
//! framework resolved (`Report::grid`), and every message carries the stage that produced it.

use dpcalc::calc::{Framework, Level, Num, Output, Stage};
use dpcalc::query;

/// One valid link per framework, with model parallelism on, and what its grid must be:
/// (world, dp, tp, cp, sp, pp, ep).
const CASES: &[(&str, [u64; 7])] = &[
    (
        "world_size=16&tensor_parallel_size=2&context_parallel_size=2&micro_batch_size=1&gradient_accumulation_steps=2",
        [16, 4, 2, 2, 1, 1, 1],
    ),
    (
        "framework=hf&world_size=16&tp_size=2&sp_size=2&num_samples=1000",
        [16, 4, 2, 1, 2, 1, 1],
    ),
    (
        "framework=deepspeed&world_size=16&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=1&autotp_size=2",
        [16, 8, 2, 1, 1, 1, 1],
    ),
    (
        "framework=megatron&world_size=16&tensor_model_parallel_size=2&pipeline_model_parallel_size=2&micro_batch_size=1&global_batch_size=16&train_iters=10&expert_model_parallel_size=2&num_experts=4",
        [16, 4, 2, 1, 1, 2, 2],
    ),
    (
        "framework=torchtitan&world_size=16&tensor_parallel_degree=2&context_parallel_degree=2&data_parallel_shard_degree=-1",
        [16, 4, 2, 2, 1, 1, 1],
    ),
    (
        "framework=nanotron&world_size=16&dp=4&tp=2&pp=2&micro_batch_size=1&batch_accumulation_per_replica=1&sequence_length=128&train_steps=10",
        [16, 4, 2, 1, 1, 2, 1],
    ),
];

#[test]
fn the_grid_stage_publishes_the_resolved_layout() {
    let mut seen = Vec::new();
    for (q, [world, dp, tp, cp, sp, pp, ep]) in CASES {
        let link = query::decode(q);
        let report = link.report();
        assert!(!report.has_errors(), "{q}: {:?}", report.diags);
        let g = report.grid.unwrap_or_else(|| panic!("{q}: no grid"));
        assert_eq!(
            [g.world, g.dp, g.tp, g.cp, g.sp, g.pp, g.ep],
            [*world, *dp, *tp, *cp, *sp, *pp, *ep],
            "{q}"
        );
        // the grid is the same layout the outputs show
        assert_eq!(
            report.value(Output::DpWorldSize),
            Some(Num::Int(g.dp.into())),
            "{q}"
        );
        seen.push(link.framework);
    }
    for fw in Framework::ALL {
        assert!(seen.contains(fw), "{} has no grid case", fw.id());
    }
}

#[test]
fn a_refused_layout_publishes_no_grid() {
    for q in [
        "world_size=6&tensor_parallel_size=4",
        "framework=megatron&world_size=6&tensor_model_parallel_size=4&micro_batch_size=1",
        "framework=torchtitan&world_size=6&tensor_parallel_degree=4&data_parallel_shard_degree=2",
        "framework=nanotron&world_size=6&dp=1&tp=4&pp=1&micro_batch_size=1&batch_accumulation_per_replica=1&sequence_length=128&train_steps=10",
    ] {
        let report = query::decode(q).report();
        assert!(report.has_errors(), "{q}");
        assert_eq!(report.grid, None, "{q}");
    }
}

#[test]
fn messages_carry_their_stage() {
    // a grid refusal is attributed to the grid stage, a batch refusal to the batch stage
    let r = query::decode(
        "framework=megatron&world_size=6&tensor_model_parallel_size=4&micro_batch_size=1",
    )
    .report();
    let e = r.diags.iter().find(|d| d.level == Level::Error).unwrap();
    assert_eq!(e.stage, Stage::Grid);
    let r = query::decode(
        "framework=megatron&world_size=8&micro_batch_size=3&global_batch_size=20&train_iters=10",
    )
    .report();
    let e = r.diags.iter().find(|d| d.level == Level::Error).unwrap();
    assert_eq!(e.stage, Stage::Batch, "{}", e.message);
    // an unreadable input is the inputs stage
    let r = query::decode("framework=hf&per_device_train_batch_size=x").report();
    let e = r.diags.iter().find(|d| d.level == Level::Error).unwrap();
    assert_eq!(e.stage, Stage::Inputs);
    // tokens and time are dpcalc's own, after the framework's stages
    let r = query::decode("world_size=8&tokens_per_second_per_gpu=1000&num_samples=100").report();
    let tokens = r
        .steps
        .iter()
        .find(|s| s.output == Output::TimePerStepSeconds || s.output == Output::TokensPerStep);
    assert!(tokens.is_some_and(|s| s.stage >= Stage::Batch));
}
