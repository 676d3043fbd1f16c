//! torchtitan against its own code: its unit-test vectors
//! (`tests/unit_tests/test_parallel_dims.py`), `ParallelDims._validate` and `build_mesh`
//! (`torchtitan/distributed/parallel_dims.py`) and the trainer's batch and token arithmetic
//! (`torchtitan/trainer.py`) as run. `tests/fixtures/torchtitan.txt` records what torchtitan 0.3.0
//! computed when run; every value and every refusal must match.

use crate::common;
use crate::common::report::{errors, errors_at, raw, report_of};

use dpcalc::calc::{Field, Framework, Level, Output, Report};
use dpcalc::query;

fn run(version: &str, pairs: &[(&str, &str)]) -> Report {
    let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let r = report_of(&format!(
        "framework=torchtitan&version={version}&{}",
        q.join("&")
    ));
    // the same through the module's own entry point
    let raw = query::decode(&format!("framework=torchtitan&{}", q.join("&"))).inputs;
    assert_eq!(Framework::Torchtitan.compute(version, &raw), r);
    r
}

#[test]
fn matches_torchtitan_0_3_0_when_run() {
    common::run(&common::Oracle {
        file: "torchtitan.txt",
        text: include_str!("fixtures/torchtitan.txt"),
        framework: "torchtitan",
        minimums: &[("", 104, 546)],
        stop_marks: &[],
        known: &[],
    });
}

// ---- ParallelDims vectors: torchtitan's tests/unit_tests/test_parallel_dims.py --------------

fn dims(version: &str, t: (i64, i64, i64, i64, i64, i64, i64)) -> Report {
    let (dr, ds, cp, tp, pp, ep, ws) = t;
    let s = |x: i64| x.to_string();
    run(
        version,
        &[
            ("data_parallel_replicate_degree", &s(dr)),
            ("data_parallel_shard_degree", &s(ds)),
            ("context_parallel_degree", &s(cp)),
            ("tensor_parallel_degree", &s(tp)),
            ("pipeline_parallel_degree", &s(pp)),
            ("expert_parallel_degree", &s(ep)),
            ("world_size", &s(ws)),
            ("disable_cuda_graphs", "true"),
            ("seq_len", "2064"),
            ("num_tokens_per_microbatch_per_dp_rank", "16512"),
        ],
    )
}

#[test]
fn parallel_dims_vectors() {
    for ver in ["0.3.0", "head"] {
        let r = dims(ver, (2, 2, 1, 2, 1, 1, 8));
        assert!(errors(&r).is_empty(), "{ver} {:?}", errors(&r));
        assert_eq!(raw(&r, Output::DpWorldSize).as_deref(), Some("4"));
        let r = dims(ver, (2, -1, 1, 2, 1, 1, 8));
        assert_eq!(
            raw(&r, Output::DataParallelShardDegree).as_deref(),
            Some("2")
        );
        let r = dims(ver, (2, 2, 1, 2, 1, 1, 10));
        assert!(errors_at(&r, Field::WorldSize)[0].contains(
            "Invalid parallel dims: dp_replicate(2) * dp_shard(2) * cp(1) * tp(2) * pp(1) != WORLD_SIZE(10)"
        ));
        assert_eq!(raw(&r, Output::DpWorldSize), None);
        let r = dims(ver, (0, -1, 1, 1, 1, 1, 8));
        assert!(errors_at(&r, Field::DataParallelReplicateDegree)[0]
            .contains("Parallelism degree should be >= 1, except for dp_shard"));
        let r = dims(ver, (1, 0, 1, 1, 1, 1, 8));
        assert!(
            errors_at(&r, Field::DataParallelShardDegree)[0].contains("dp_shard must -1 or >=1.")
        );
        let r = dims(ver, (1, 2, 1, 1, 1, 2, 2));
        assert!(errors(&r).is_empty(), "{ver} EP valid: {:?}", errors(&r));
        // (2,2,2,3,2,1,48): dp 4 and a sequence divisor of tp 3 × 2·cp 2 = 12 (2064 = 12 × 172)
        let r = dims(ver, (2, 2, 2, 3, 2, 1, 48));
        assert!(errors(&r).is_empty(), "{ver} {:?}", errors(&r));
        assert_eq!(raw(&r, Output::DpWorldSize).as_deref(), Some("4"));
        // run: tp 3 on 8 fills dp_shard 8 // 3 = 2, then the product assertion
        let r = dims(ver, (1, -1, 1, 3, 1, 1, 8));
        assert!(errors_at(&r, Field::WorldSize)[0].contains("dp_shard(2) * cp(1) * tp(3)"));
    }
    // (2,2,2,3,2,1,48) with tp 4 and cp 2: divisor 16
    let r = run(
        "0.3.0",
        &[
            ("world_size", "16"),
            ("tensor_parallel_degree", "4"),
            ("context_parallel_degree", "2"),
            ("seq_len", "2056"),
        ],
    );
    assert!(errors_at(&r, Field::SeqLen)[0].contains(
        "Training sequence length (2056) must be divisible by 16 for the configured sequence/context parallelism."
    ));
    assert!(errors_at(&r, Field::SeqLen)[0].contains("2048 or 2064"));
}

#[test]
fn expert_parallel_differs_by_release() {
    // ep 3 on ws 8: HEAD's _validate refuses; 0.3.0 fails in build_mesh (run)
    let head = run(
        "head",
        &[("world_size", "8"), ("expert_parallel_degree", "3")],
    );
    let e = errors_at(&head, Field::ExpertParallelDegree);
    assert!(
        e[0].contains("expert_parallel_degree (3) must divide dp_shard * cp * tp (8)"),
        "{e:?}"
    );
    assert!(e[0].contains("2 or 4"), "{e:?}");
    let rel = run(
        "0.3.0",
        &[
            ("world_size", "8"),
            ("tensor_parallel_degree", "2"),
            ("expert_parallel_degree", "3"),
        ],
    );
    let e = errors_at(&rel, Field::ExpertParallelDegree);
    assert!(e[0].contains(
        "The product of mesh_sizes=(1, 1, 2, 3) is 6, but the original dimension at dim=0 has size 8."
    ), "{e:?}");
    assert!(!e[0].contains("must divide dp_shard * cp * tp ("));
}

#[test]
fn fill_to_zero_is_a_bare_assertion() {
    // ParallelDims._validate, run on 0.3.0: world 4, tp 8
    for ver in ["0.3.0", "head"] {
        let r = run(ver, &[("world_size", "4"), ("tensor_parallel_degree", "8")]);
        let e = errors_at(&r, Field::DataParallelShardDegree);
        assert!(
            e[0].contains("bare AssertionError") && e[0].contains("4 // 8 = 0"),
            "{e:?}"
        );
        assert!(
            e[0].contains("world_size 8"),
            "the fix names a valid world size: {e:?}"
        );
        assert_eq!(raw(&r, Output::DataParallelShardDegree), None);
        // warmup and steps do not depend on the mesh
        assert_eq!(raw(&r, Output::MaxSteps).as_deref(), Some("10000"));
    }
}

// ---- 0.3.0 global batch / GA: trainer.py up to 717e935, run ---------------------------------

#[test]
fn global_batch_vectors() {
    for (gbs, local, ws, want_gbs, ga) in [
        ("-1", "8", "4", "32", "1"),
        ("64", "8", "4", "64", "2"),
        ("256", "2", "8", "256", "16"),
    ] {
        let r = run(
            "0.3.0",
            &[
                ("global_batch_size", gbs),
                ("local_batch_size", local),
                ("world_size", ws),
            ],
        );
        assert_eq!(raw(&r, Output::GlobalBatchSize).as_deref(), Some(want_gbs));
        assert_eq!(
            raw(&r, Output::GradientAccumulationSteps).as_deref(),
            Some(ga)
        );
    }
    let r = run(
        "0.3.0",
        &[
            ("global_batch_size", "60"),
            ("local_batch_size", "8"),
            ("world_size", "4"),
        ],
    );
    let e = errors_at(&r, Field::GlobalBatchSize);
    assert!(e[0].contains(
        "global batch size must be multiple of local batch size times data-parallel degree (60 % (8 * 4) != 0)"
    ));
    assert!(e[0].contains("global_batch_size 32 or 64"), "{e:?}");
    assert_eq!(raw(&r, Output::GradientAccumulationSteps), None);
}

#[test]
fn pipeline_microbatches_0_3_0() {
    let pp = |mbs: &str, dcg: &str| {
        run(
            "0.3.0",
            &[
                ("pipeline_parallel_degree", "2"),
                ("pipeline_parallel_microbatch_size", mbs),
                ("disable_cuda_graphs", dcg),
            ],
        )
    };
    assert_eq!(
        raw(&pp("2", "true"), Output::NumPpMicrobatches).as_deref(),
        Some("4")
    );
    let e = errors_at(&pp("3", "true"), Field::PipelineParallelMicrobatchSize);
    assert!(e[0].contains("training.local_batch_size (8) must be evenly divisible by parallelism.pipeline_parallel_microbatch_size (3) when pipeline parallelism is enabled."));
    assert!(
        e[0].contains("pipeline_parallel_microbatch_size 2 or 4, or local_batch_size 6 or 9"),
        "{e:?}"
    );
    let e = errors_at(&pp("1", "false"), Field::DisableCudaGraphs);
    assert!(e[0].contains("CUDA graphs do not support pipeline parallelism yet."));
    // without PP the microbatch size is not checked against the local batch
    let r = run("0.3.0", &[("pipeline_parallel_microbatch_size", "3")]);
    assert!(errors(&r).is_empty());
    assert_eq!(raw(&r, Output::NumPpMicrobatches).as_deref(), Some("1"));
}

// ---- HEAD token counts: trainer.py after "fold batch dim" (#4121), run ------------------------

#[test]
fn token_vectors_head() {
    let r = run("head", &[("world_size", "8")]);
    assert_eq!(
        raw(&r, Output::GradientAccumulationSteps).as_deref(),
        Some("1")
    );
    assert_eq!(raw(&r, Output::TokensPerStep).as_deref(), Some("131072"));
    assert_eq!(
        raw(&r, Output::GlobalBatchSize),
        None,
        "HEAD counts tokens, not samples"
    );
    let r = run(
        "head",
        &[
            ("world_size", "8"),
            ("num_tokens_per_train_step", "1048576"),
        ],
    );
    assert_eq!(
        raw(&r, Output::GradientAccumulationSteps).as_deref(),
        Some("8")
    );
    // PP 4 with 4 microbatches and dp 4 (world 16): one iteration = 16384 × 4 × 4 = 262144
    let r = run(
        "head",
        &[
            ("world_size", "16"),
            ("pipeline_parallel_degree", "4"),
            ("num_pp_microbatches", "4"),
            ("disable_cuda_graphs", "true"),
            ("num_tokens_per_train_step", "1048576"),
        ],
    );
    assert_eq!(raw(&r, Output::NumPpMicrobatches).as_deref(), Some("4"));
    assert_eq!(
        raw(&r, Output::GradientAccumulationSteps).as_deref(),
        Some("4")
    );
    let r = run(
        "head",
        &[
            ("world_size", "8"),
            ("num_tokens_per_train_step", "1000000"),
        ],
    );
    let e = errors_at(&r, Field::NumTokensPerTrainStep);
    assert!(e[0].contains("training.num_tokens_per_train_step (1000000) must be divisible by the number of tokens processed globally in one gradient accumulation iteration (131072)."));
    assert!(e[0].contains("917504 or 1048576"), "{e:?}");
    // the token divisor for SP/CP
    let r = run(
        "head",
        &[("world_size", "6"), ("tensor_parallel_degree", "3")],
    );
    assert!(errors_at(&r, Field::NumTokensPerMicrobatchPerDpRank)[0]
        .contains("The number of tokens per pipeline microbatch (16384) must be divisible by 3"));
    // 0.3.0 fields are ignored at HEAD, with a note
    let r = run("head", &[("local_batch_size", "4")]);
    assert!(r
        .diags_for(Field::LocalBatchSize)
        .any(|d| d.level == Level::Note));
    assert!(errors(&r).is_empty());
    let r = run("head", &[("num_pp_microbatches", "0")]);
    assert!(errors_at(&r, Field::NumPpMicrobatches)[0]
        .contains("parallelism.num_pp_microbatches must be greater than 0."));
    let r = run("head", &[("num_tokens_per_microbatch_per_dp_rank", "0")]);
    assert!(
        errors_at(&r, Field::NumTokensPerMicrobatchPerDpRank)[0].contains("integer modulo by zero")
    );
    let r = run("head", &[("num_tokens_per_train_step", "0")]);
    assert_eq!(
        raw(&r, Output::GradientAccumulationSteps).as_deref(),
        Some("0")
    );
    assert!(r
        .diags_for(Field::NumTokensPerTrainStep)
        .any(|d| d.level == Level::Warning));
}

// ---- warmup, steps and boundaries -----------------------------------------------------------

#[test]
fn warmup_is_clamped_to_steps() {
    for (steps, warmup, want) in [
        ("100", "", "100"),
        ("200", "200", "200"),
        ("201", "", "200"),
        ("1", "5", "1"),
        ("0", "", "0"),
    ] {
        let r = run("0.3.0", &[("steps", steps), ("warmup_steps", warmup)]);
        assert_eq!(
            raw(&r, Output::WarmupSteps).as_deref(),
            Some(want),
            "steps {steps} warmup {warmup}"
        );
        assert_eq!(raw(&r, Output::MaxSteps).as_deref(), Some(steps));
    }
    let r = run("0.3.0", &[("steps", "100")]);
    assert!(r
        .diags_for(Field::WarmupSteps)
        .any(|d| d.level == Level::Warning
            && d.message.contains(
                "Warmup steps (200) exceed total steps (100). Adjusting warmup steps to 100."
            )));
    let r = run("0.3.0", &[("warmup_steps", "2.5")]);
    assert_eq!(errors_at(&r, Field::WarmupSteps).len(), 1);
    assert_eq!(raw(&r, Output::WarmupSteps), None);
}

#[test]
fn huge_values_do_not_wrap() {
    let max = u64::MAX.to_string();
    let r = run(
        "0.3.0",
        &[
            ("world_size", &max),
            ("tensor_parallel_degree", &max),
            ("data_parallel_shard_degree", "1"),
            ("enable_sequence_parallel", "false"),
        ],
    );
    assert!(errors(&r).is_empty(), "{:?}", errors(&r));
    assert_eq!(raw(&r, Output::DpWorldSize).as_deref(), Some("1"));
    let r = run(
        "0.3.0",
        &[
            ("world_size", &max),
            ("local_batch_size", &max),
            ("seq_len", &max),
        ],
    );
    // (2^64 - 1)^2 does not fit dpcalc's i128: an error, never a wrapped number
    assert_eq!(raw(&r, Output::GlobalBatchSize), None);
    assert!(!errors_at(&r, Field::LocalBatchSize).is_empty());
    let r = run(
        "0.3.0",
        &[
            ("world_size", "2"),
            ("local_batch_size", &max),
            ("seq_len", &max),
        ],
    );
    assert_eq!(
        raw(&r, Output::GlobalBatchSize).as_deref(),
        Some("36893488147419103230")
    );
    assert!(errors_at(&r, Field::SeqLen)
        .iter()
        .any(|e| e.contains("too large")));
    let r = run(
        "0.3.0",
        &[
            ("tensor_parallel_degree", &max),
            ("pipeline_parallel_degree", &max),
            ("context_parallel_degree", &max),
        ],
    );
    assert!(r.has_errors());
}

/// `parallelism.pipeline_parallel_schedule` (0.3.0, default "1F1B"; torch's
/// `get_schedule_class` compares it lowercased): the bubble follows the schedule's stages per
/// rank (1F1B and GPipe (p − 1) micro batches, Interleaved1F1B and LoopedBFS over two stages
/// per rank (p − 1)/2, the zero-bubble schedules none), and the memory its micro batches in
/// flight (GPipe and LoopedBFS all of them); an unknown name is refused at the field.
#[test]
fn the_pipeline_schedule_sets_the_bubble_and_the_micro_batches_in_flight() {
    use crate::measured_throughput::float;
    let base = [
        ("nodes", "8"),
        ("gpus_per_node", "8"),
        ("data_parallel_shard_degree", "2"),
        ("tensor_parallel_degree", "4"),
        ("pipeline_parallel_degree", "8"),
        ("disable_cuda_graphs", "true"),
        ("local_batch_size", "16"),
        ("global_batch_size", "32"),
        ("seq_len", "4096"),
        ("model", "llama3/70B"),
        ("activation_checkpoint.mode", "full"),
        ("gpu", "h100-sxm"),
    ];
    let with = |schedule: Option<&str>| {
        let mut pairs = base.to_vec();
        if let Some(s) = schedule {
            pairs.push(("pipeline_parallel_schedule", s));
        }
        let r = run("0.3.0", &pairs);
        assert!(errors(&r).is_empty(), "{schedule:?}: {:?}", errors(&r));
        let step = float(&r, Output::StepTimeSeconds).expect("a step time");
        let bytes = float(&r, Output::MemoryPerGpuBytes).expect("a memory estimate");
        (step, bytes)
    };
    let default = with(None);
    let one = with(Some("1F1B"));
    assert_eq!(default, one, "1F1B is the default");
    // any case, as torch reads it
    assert_eq!(with(Some("1f1b")), one);
    let gpipe = with(Some("GPipe"));
    let interleaved = with(Some("Interleaved1F1B"));
    let bfs = with(Some("LoopedBFS"));
    let zbv = with(Some("ZBVZeroBubble"));
    // the bubble: GPipe's is 1F1B's; two stages per rank halve it; zero bubble has none
    assert!((gpipe.0 - one.0).abs() < 1e-9 * one.0, "{gpipe:?} {one:?}");
    assert!(
        interleaved.0 < one.0 && zbv.0 < interleaved.0,
        "{one:?} {interleaved:?} {zbv:?}"
    );
    assert!(
        (bfs.0 - interleaved.0).abs() < 1e-9 * one.0,
        "{bfs:?} {interleaved:?}"
    );
    // m = 16 micro batches of one sequence, p = 8: 1F1B's bubble is 7 of them, interleaved's
    // 3.5 (interleaved − zero bubble, both two stages per rank with the same sends), so 1F1B −
    // zero bubble is twice that, less the second stage's extra point-to-point sends
    let ratio = (one.0 - zbv.0) / (interleaved.0 - zbv.0);
    assert!((1.8..=2.0).contains(&ratio), "{ratio}");
    // the memory: GPipe and LoopedBFS keep every micro batch, 1F1B at most p on the first rank
    assert!(gpipe.1 > one.1 && bfs.1 > interleaved.1 && interleaved.1 > one.1);
    let r = run(
        "0.3.0",
        &[base.as_slice(), &[("pipeline_parallel_schedule", "1F2B")]].concat(),
    );
    assert!(
        errors_at(&r, Field::PipelineParallelSchedule)
            .iter()
            .any(|e| e.contains("Unknown pipeline schedule")),
        "{:?}",
        errors(&r)
    );
}
