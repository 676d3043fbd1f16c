//! The layout explorer: the enumeration against an independent count, the memoised rows
//! against a direct compute of every row, the accumulation that keeps the batch, and the time
//! for 65,536 GPUs (`cargo test --release --test suite -- --nocapture _65536_gpus`).

use crate::common::report::inputs;
use std::time::Instant;

use dpcalc::calc::layout::{self, BatchMatch, Mode, SortKey};
use dpcalc::calc::{Field, Framework, Num, RawInputs};

/// Tuples of `k` positive sizes with a product dividing `n`, by brute force.
fn brute(n: u64, k: usize) -> u64 {
    fn go(rest: u64, k: usize) -> u64 {
        if k == 0 {
            return 1;
        }
        (1..=rest)
            .filter(|d| rest % d == 0)
            .map(|d| go(rest / d, k - 1))
            .sum()
    }
    go(n, k)
}

#[test]
fn counts_of_layouts() {
    for n in 1..=256u64 {
        for k in 1..=3u32 {
            assert_eq!(
                layout::count_layouts(n, k),
                Some(brute(n, k as usize)),
                "{n} {k}"
            );
        }
    }
    // 2^16: C(16+3, 3) = 969 triples, C(18, 2) = 153 pairs
    assert_eq!(layout::count_layouts(65_536, 3), Some(969));
    assert_eq!(layout::count_layouts(65_536, 2), Some(153));
    // the explorer lists exactly these, for axolotl's two dimensions
    for world in [1u64, 2, 6, 8, 12, 24, 512, 720] {
        let ex = layout::explore(
            Framework::Axolotl,
            "0.19.0",
            &inputs(&[(Field::WorldSize, &world.to_string())]),
        );
        assert_eq!(ex.rows.len() as u64, brute(world, 2), "{world}");
        for r in &ex.rows {
            assert_eq!(r.dp * r.sizes.iter().product::<u64>(), world);
        }
    }
    assert_eq!(layout::divisors(12), Some(vec![1, 2, 3, 4, 6, 12]));
    assert_eq!(layout::divisors(0), None);
    assert_eq!(layout::divisors(layout::MAX_WORLD + 1), None);
}

#[test]
fn eight_gpus_keep_the_batch() {
    // 1 node × 8, mbs 2, ga 4: batch 64 (2 × 4 × 8); 10 000 rows: ceil(10000/64) = 157 steps
    let r = inputs(&[
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumSamples, "10000"),
        (Field::TensorParallelSize, "2"),
    ]);
    let ex = layout::explore(Framework::Axolotl, "0.19.0", &r);
    assert_eq!(ex.rows.len(), 10);
    assert_eq!(ex.mode, Mode::SetAccumulation);
    assert_eq!(ex.target, Some(2 * 4 * 4));
    let cur = &ex.rows[ex.current.unwrap()];
    assert_eq!(cur.sizes, vec![2, 1]);
    assert_eq!(
        ex.query(cur),
        "tensor_parallel_size=2&context_parallel_size=1"
    );
    // current tp 2: dp 4, batch 2 × 4 × 4 = 32; every layout can keep 32 with mbs 2
    for row in &ex.rows {
        let ga = 32 / (2 * row.dp);
        assert_eq!(row.ga, Some(ga), "{:?}", row.sizes);
        assert_eq!(row.batch_match, BatchMatch::Exact);
        assert_eq!(row.global_batch_size, Some(Num::Int(32)));
        // ceil(10000 / 32) = 313
        assert_eq!(row.max_steps, Some(Num::Int(313)));
        assert!(row.valid());
    }
    let tp8 = ex.rows.iter().find(|r| r.sizes == vec![8, 1]).unwrap();
    assert_eq!(
        ex.apply_query(tp8),
        "tensor_parallel_size=8&context_parallel_size=1&gradient_accumulation_steps=16"
    );
}

#[test]
fn nearest_accumulation_and_its_miss() {
    // mbs 3, ga 1, tp 2 on 8 GPUs: batch 3 × 1 × 4 = 12. With tp 1 (dp 8) the smallest batch
    // is 3 × 8 × 1 = 24: 12 more. With tp 1 cp 1 on dp 8 nothing better exists.
    let r = inputs(&[
        (Field::MicroBatchSize, "3"),
        (Field::TensorParallelSize, "2"),
    ]);
    let ex = layout::explore(Framework::Axolotl, "0.19.0", &r);
    let row = ex.rows.iter().find(|r| r.sizes == vec![1, 1]).unwrap();
    assert_eq!(row.ga, Some(1));
    assert_eq!(row.batch_match, BatchMatch::Near { miss: 12 });
    assert_eq!(row.global_batch_size, Some(Num::Int(24)));
    // dp 1 (tp 8): 3 × 1 × 4 = 12 exactly
    let row = ex.rows.iter().find(|r| r.sizes == vec![8, 1]).unwrap();
    assert_eq!((row.ga, row.batch_match), (Some(4), BatchMatch::Exact));
    // nearest: target 10, 3 per replica-step: 9 (miss 1) beats 12 (miss 2)
    assert_eq!(layout::accumulation_for(10, 3, 1), Some(3));
    assert_eq!(layout::accumulation_for(11, 3, 1), Some(4));
    // a tie (target 6, 4 per step: 4 or 8) takes the smaller
    assert_eq!(layout::accumulation_for(6, 4, 1), Some(1));
    assert_eq!(layout::accumulation_for(6, 0, 1), None);
    assert_eq!(layout::accumulation_for(6, u64::MAX, 2), None);
}

#[test]
fn a_layout_the_framework_refuses_says_why() {
    // axolotl: cp > 1 with sample packing needs micro_batch_size 1
    let r = inputs(&[
        (Field::MicroBatchSize, "2"),
        (Field::SamplePacking, "true"),
        (Field::NumSamples, "100"),
    ]);
    let ex = layout::explore(Framework::Axolotl, "0.19.0", &r);
    for row in &ex.rows {
        assert_eq!(
            row.valid(),
            row.sizes[1] == 1,
            "{:?} {:?}",
            row.sizes,
            row.problem
        );
    }
    let bad = ex.rows.iter().find(|r| r.sizes == vec![1, 2]).unwrap();
    assert!(bad.problem.as_deref().unwrap().contains("ring-flash-attn"));
}

#[test]
fn sorting() {
    let ex = layout::explore(
        Framework::Axolotl,
        "0.19.0",
        &inputs(&[(Field::NumSamples, "100")]),
    );
    let by_dp = layout::order(&ex, SortKey::Dp, true);
    let dps: Vec<u64> = by_dp.iter().map(|&i| ex.rows[i].dp).collect();
    assert!(dps.windows(2).all(|w| w[0] >= w[1]), "{dps:?}");
    let by_tp = layout::order(&ex, SortKey::Size(0), false);
    assert_eq!(ex.rows[by_tp[0]].sizes[0], 1);
    assert_eq!(ex.rows[*by_tp.last().unwrap()].sizes[0], 8);
}

/// The memo changes nothing: for many inputs and small worlds, every row equals its direct
/// compute, for every framework.
#[test]
fn memoised_rows_equal_direct_compute() {
    let extras: &[&[(Field, &str)]] = &[
        &[],
        &[
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "3"),
        ],
        &[
            (Field::MicroBatchSize, "3"),
            (Field::NumSamples, "1001"),
            (Field::NumEpochs, "1.5"),
        ],
        &[
            (Field::SamplePacking, "true"),
            (Field::MicroBatchSize, "2"),
            (Field::NumSamples, "10"),
        ],
        &[
            (Field::SamplePacking, "true"),
            (Field::SamplePackingEffEst, "0.9"),
            (Field::TotalNumTokens, "123456789"),
        ],
        &[(Field::BatchSize, "16"), (Field::MicroBatchSize, "4")],
        &[
            (Field::MaxSteps, "7"),
            (Field::NumSamples, "500"),
            (Field::WarmupRatio, "0.1"),
        ],
        &[(Field::NumEpochs, "0")],
        // each framework's own keys (the others ignore them)
        &[
            (Field::ExpertParallelDegree, "2"),
            (Field::SeqLen, "1000"),
            (Field::DisableCudaGraphs, "true"),
            (Field::LocalBatchSize, "3"),
            (Field::GlobalBatchSize, "36"),
        ],
        &[
            (Field::EnableSequenceParallel, "false"),
            (Field::SeqLen, "6"),
            (Field::NumTokensPerMicrobatchPerDpRank, "1000"),
        ],
        // torchtitan: pipelined rows are refused first for CUDA graphs, unless they are off or
        // the current inputs pipeline already (then the divisor's message can come first)
        &[
            (Field::PipelineParallelDegree, "2"),
            (Field::SeqLen, "6"),
            (Field::LocalBatchSize, "2"),
        ],
        &[(Field::DisableCudaGraphs, "false"), (Field::SeqLen, "1000")],
        &[
            (Field::PerDeviceTrainBatchSize, "3"),
            (Field::NumSamples, "1001"),
            (Field::DataloaderDropLast, "true"),
            (Field::WarmupSteps, "0.1"),
            (Field::SaveSteps, "0.25"),
        ],
        &[
            (Field::GlobalBatchSize, "48"),
            (Field::TrainSamples, "1000"),
            (Field::ExpertModelParallelSize, "2"),
            (Field::DecreaseBatchSizeIfNeeded, "true"),
        ],
        &[
            (Field::TrainBatchSize, "48"),
            (Field::NumSamples, "1000"),
            (Field::SequenceLength, "100"),
            (Field::TrainSteps, "5"),
            (Field::ExpertParallelSize, "2"),
        ],
        // axolotl 0.21.0 expert parallelism: the EP checks quote ep, tp, cp and the dp axes
        &[
            (Field::ExpertParallelSize, "2"),
            (Field::DpShardSize, "4"),
            (Field::FsdpStateDictType, "FULL_STATE_DICT"),
            (Field::MicroBatchSize, "2"),
            (Field::NumSamples, "1000"),
        ],
        &[
            (Field::ExpertParallelSize, "4"),
            (Field::DpReplicateSize, "2"),
            (Field::FsdpVersion, "2"),
            (Field::GradientAccumulationSteps, "3"),
        ],
        // Megatron 0.19.2: the weight-shard axis, the CP sequence check, the expert grid
        &[
            (Field::TensorParallelNumWeightShards, "4"),
            (Field::SeqLength, "6"),
            (Field::TrainSamples, "1000"),
        ],
        &[
            (Field::ExpertTensorParallelSize, "1"),
            (Field::ExpertModelParallelSize, "2"),
            (Field::NumExperts, "4"),
            (Field::TrainIters, "10"),
        ],
        // HF 5.17+: batch_rebalance (every rank its own rows; the warning and accelerate's note
        // use the world, tp and cp)
        &[
            (Field::TrainSamplingStrategy, "batch_rebalance"),
            (Field::PerDeviceTrainBatchSize, "2"),
            (Field::GradientAccumulationSteps, "3"),
            (Field::NumSamples, "1001"),
            (Field::DataloaderDropLast, "true"),
        ],
        &[
            (Field::TrainSamplingStrategy, "batch_rebalance"),
            (Field::NumSamples, "20"),
            (Field::MaxSteps, "7"),
        ],
    ];
    let mut rows = 0;
    for &fw in Framework::ALL {
        for world in [1u64, 2, 3, 4, 6, 8, 12, 16, 24, 36, 48] {
            for extra in extras {
                let mut r = inputs(extra);
                r.set(Field::WorldSize, world.to_string());
                for rel in fw.releases().iter().map(|r| r.id) {
                    let memo = layout::explore(fw, rel, &r);
                    let direct = layout::explore_direct(fw, rel, &r);
                    assert_eq!(
                        memo.rows,
                        direct.rows,
                        "{} {rel} {world} {extra:?}",
                        fw.id()
                    );
                    assert_eq!(memo.current, direct.current);
                    rows += memo.rows.len();
                }
            }
        }
    }
    assert!(rows > 1000, "{rows}");
}

/// The memoised explore builds each row's inputs in place and puts the fields it set back
/// afterwards, so a field given twice in the link (a conflict, which a row's own value settles)
/// must come back as a conflict for the next row: every field a row sets, given twice, changes
/// nothing against the direct compute.
#[test]
fn memoised_rows_equal_direct_compute_with_repeated_keys() {
    use dpcalc::calc::spec::Concept;
    let mut checked = 0;
    for &fw in Framework::ALL {
        let concept = |c: Concept| fw.field_for(c);
        let mut fields: Vec<Field> = layout::dims(fw).iter().map(|&(_, f)| f).collect();
        fields.extend(
            [Concept::Accum, Concept::Global]
                .into_iter()
                .filter_map(concept),
        );
        // what the layouts fill in (nanotron's dp, torchtitan's shard degree, axolotl's EP axes)
        fields.extend([
            Field::Dp,
            Field::DataParallelShardDegree,
            Field::DpShardSize,
            Field::FsdpStateDictType,
        ]);
        for &conflicted in &fields {
            for with_batch in [false, true] {
                let mut r = inputs(&[(Field::WorldSize, "48")]);
                if with_batch {
                    for (c, v) in [
                        (Concept::Micro, "2"),
                        (Concept::Accum, "3"),
                        (Concept::Samples, "1000"),
                    ] {
                        if let Some(f) = concept(c) {
                            r.set(f, v);
                        }
                    }
                }
                r.set_conflict(conflicted, vec!["2".into(), "4".into()]);
                for rel in fw.releases().iter().map(|r| r.id) {
                    let memo = layout::explore(fw, rel, &r);
                    let direct = layout::explore_direct(fw, rel, &r);
                    assert_eq!(memo.rows, direct.rows, "{} {rel} {conflicted:?}", fw.id());
                    assert_eq!(memo.current, direct.current);
                    checked += memo.rows.len();
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// Links that time the explorer for 65,536 GPUs (`make bench`'s kind, a few of each framework),
/// and the same with a model, a GPU and a sequence length, so that every row also has its memory
/// (Megatron's with a global batch its layouts accept: the first link's is refused, and a
/// refused layout has no grid to estimate on).
const BENCH_LINKS: &[&str] = &[
    "world_size=65536&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=100000",
    "framework=megatron&world_size=65536&micro_batch_size=2&global_batch_size=65536&train_samples=100000",
    "framework=hf&world_size=65536&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=100000",
    "framework=torchtitan&world_size=65536&local_batch_size=2&global_batch_size=131072&steps=1000",
    "framework=deepspeed&world_size=65536&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=4&num_samples=100000",
    "framework=deepspeed&world_size=65536&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=4&num_samples=10000000",
    "framework=nanotron&world_size=65536&dp=65536&tp=1&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&train_steps=1000",
    "framework=nanotron&world_size=65536&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=1000",
    "world_size=65536&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=100000&base_model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&sequence_len=2048",
    "framework=megatron&world_size=65536&micro_batch_size=2&global_batch_size=131072&train_samples=100000&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&seq_length=2048",
    "framework=hf&world_size=65536&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=100000&model_name_or_path=meta-llama/Llama-3.1-8B&gpu=h100-sxm&max_length=2048",
    "framework=torchtitan&world_size=65536&local_batch_size=2&global_batch_size=131072&steps=1000&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&seq_len=2048",
    "framework=deepspeed&world_size=65536&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=4&num_samples=100000&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&max_length=2048&zero_optimization.stage=2",
    "framework=nanotron&world_size=65536&dp=65536&tp=1&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&train_steps=1000&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&sequence_length=2048",
];

/// The memo changes nothing at 65,536 GPUs either: for the benchmark's link of every framework,
/// with and without a model, at every release, each row (memory included) equals its direct
/// compute.
#[test]
fn memoised_rows_equal_direct_compute_for_65536_gpus() {
    let mut frameworks = std::collections::BTreeSet::new();
    for q in BENCH_LINKS {
        let link = dpcalc::query::decode(q);
        assert!(link.unknown.is_empty(), "{q}: {:?}", link.unknown);
        frameworks.insert(link.framework.id());
        for rel in link.framework.releases().iter().map(|r| r.id) {
            let memo = layout::explore(link.framework, rel, &link.inputs);
            let direct = layout::explore_direct(link.framework, rel, &link.inputs);
            assert_eq!(memo.rows.len(), direct.rows.len(), "{q} {rel}");
            for (m, d) in memo.rows.iter().zip(&direct.rows) {
                assert_eq!(m, d, "{q} {rel}");
            }
            assert_eq!(memo.current, direct.current, "{q} {rel}");
            assert_eq!(memo.world, Some(65_536));
            assert!(memo.computes <= direct.computes);
            // a link with a model has every row's memory at its own release
            if q.contains("&gpu=") && rel == link.release().id {
                assert!(memo.rows.iter().all(|r| r.memory_bytes.is_some()), "{q}");
            }
        }
    }
    assert_eq!(frameworks.len(), Framework::ALL.len());
}

/// The explorer for 65,536 GPUs: the row counts and how few framework computations memoisation
/// leaves. Times are printed for information only (`cargo test --release --test suite --
/// --nocapture _65536_gpus`); the speed target is measured by `make bench`, not asserted here.
#[test]
fn explore_for_65536_gpus() {
    let r = inputs(&[(Field::WorldSize, "65536"), (Field::NumSamples, "1000000")]);
    let ex = layout::explore(Framework::Axolotl, "0.19.0", &r);
    assert_eq!(ex.rows.len(), 153);
    assert!(ex.computes <= 17 * 4, "{}", ex.computes);
    // HF 5.x: the 680 rows with CP and SP both above 1 are refused for (cp, sp) alone, one
    // compute for each of their 120 pairs; the other 289 rows key on tp and sp with dp
    let hf = layout::explore(Framework::Hf, Framework::Hf.default_release().id, &r);
    assert_eq!(hf.rows.len(), 969);
    let refused = hf.rows.iter().filter(|r| r.sizes[1] > 1 && r.sizes[2] > 1);
    assert_eq!(refused.count(), 680);
    assert!(hf.computes <= 120 + 289, "{}", hf.computes);
    // torchtitan (the bench's link): the 816 pipelined rows are refused first for CUDA graphs,
    // so only the unpipelined ones that fail the sequence divisor key on their tp and cp
    let tt = inputs(&[
        (Field::WorldSize, "65536"),
        (Field::LocalBatchSize, "2"),
        (Field::GlobalBatchSize, "131072"),
        (Field::Steps, "1000"),
    ]);
    let rel = Framework::Torchtitan.default_release().id;
    let memo = layout::explore(Framework::Torchtitan, rel, &tt);
    let pipelined = memo.rows.iter().filter(|r| r.sizes[2] > 1);
    assert!(pipelined.clone().all(|r| r
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("CUDA graphs"))));
    assert_eq!(pipelined.count(), 816);
    assert!(memo.computes <= 177, "{}", memo.computes);
    assert_eq!(
        memo.rows,
        layout::explore_direct(Framework::Torchtitan, rel, &tt).rows
    );
    for &fw in Framework::ALL {
        let t = Instant::now();
        let n = layout::bench(fw, 65_536);
        let took = t.elapsed();
        // (the bench names no model: axolotl 0.21.0's expert parallelism is left out)
        let dense = layout::dims(fw)
            .iter()
            .filter(|(d, _)| *d != layout::Dim::Ep)
            .count();
        let want = match dense {
            2 => 153,
            3 => 969,
            d => panic!("{d} dimensions"),
        };
        assert_eq!(n, want, "{fw:?}");
        println!(
            "explore {:>10}, 65,536 GPUs: {n} rows in {:.3} ms",
            fw.id(),
            took.as_secs_f64() * 1e3
        );
    }
}

/// Three dimensions (HF, Megatron, torchtitan): 969 layouts for 65,536 GPUs, each dividing it,
/// none twice; enumerated fast.
#[test]
fn three_dimensions_for_65536_gpus() {
    let t = Instant::now();
    let (all, cut) = layout::enumerate(65_536, 3).unwrap();
    let took = t.elapsed();
    assert!(!cut);
    assert_eq!(all.len(), 969);
    let mut seen = std::collections::HashSet::new();
    for s in &all {
        assert_eq!(65_536 % s.iter().product::<u64>(), 0);
        assert!(seen.insert(s.clone()));
    }
    println!("enumerate 969 triples: {:.3} ms", took.as_secs_f64() * 1e3);
    for n in [1u64, 12, 720, 5040] {
        for k in 1..=3 {
            let (rows, _) = layout::enumerate(n, k).unwrap();
            assert_eq!(
                rows.len() as u64,
                layout::count_layouts(n, k as u32).unwrap()
            );
        }
    }
    // a world with very many layouts is cut at MAX_ROWS, and says so
    let (rows, cut) = layout::enumerate(8_648_640, 3).unwrap();
    assert!(cut && rows.len() == layout::MAX_ROWS);
    assert_eq!(layout::enumerate(layout::MAX_WORLD + 1, 2), None);
}

/// accelerate refuses cp and sp together (its `__post_init__`, run in the oracle script).
#[test]
fn hf_refuses_cp_with_sp() {
    assert!(layout::launch_refusal(Framework::Hf, &[1, 2, 2]).is_some());
    assert!(layout::launch_refusal(Framework::Hf, &[4, 2, 1]).is_none());
    assert!(layout::launch_refusal(Framework::Axolotl, &[2, 2]).is_none());
    let ex = layout::explore(
        Framework::Hf,
        Framework::Hf.default_release().id,
        &inputs(&[]),
    );
    if ex.world.is_none() {
        return; // the hf module is a placeholder in this branch: no world size yet
    }
    assert_eq!(ex.rows.len(), 20); // C(3+3,3) = 20 for 8 = 2^3
    for row in &ex.rows {
        let both = row.sizes[1] > 1 && row.sizes[2] > 1;
        assert_eq!(row.valid(), !both, "{:?}", row.sizes);
    }
}

/// axolotl 0.21.0 explores expert parallelism (`expert_parallel_size`, with `dp_shard_size` and
/// the FSDP2 state dict filled so each EP row is a layout axolotl accepts); 0.19.0 does not.
#[test]
fn axolotl_explores_expert_parallelism_from_0_21_0() {
    use dpcalc::calc::layout::Dim;
    let fw = Framework::Axolotl;
    let raw = RawInputs::from_pairs([
        (Field::WorldSize, "8"),
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumSamples, "10000"),
        (Field::BaseModel, "mistralai/Mixtral-8x7B-v0.1"),
    ]);
    let new = layout::explore(fw, "0.21.0", &raw);
    assert!(!new.no_ep);
    assert_eq!(
        new.dims.iter().map(|d| d.0).collect::<Vec<_>>(),
        vec![Dim::Tp, Dim::Cp, Dim::Ep]
    );
    // ep 2 (tp 1, cp 1): dp_shard 4, accepted, the batch unchanged (ep does not divide it)
    let row = new.rows.iter().find(|r| r.sizes == [1, 1, 2]).unwrap();
    assert!(row.valid(), "{:?}", row.problem);
    assert_eq!(row.dp, 4);
    assert_eq!(row.batch_match, layout::BatchMatch::Exact);
    assert_eq!(row.ga, Some(4));
    let q = new.apply_query(row);
    assert!(q.contains("expert_parallel_size=2"), "{q}");
    assert!(q.contains("dp_shard_size=4"), "{q}");
    assert!(
        q.contains("fsdp_config.state_dict_type=FULL_STATE_DICT"),
        "{q}"
    );
    // ep 2 × cp 2, ep 8: accepted; tp 2 with ep 2: axolotl refuses
    for sizes in [[1, 2, 2], [1, 1, 8], [1, 4, 2]] {
        let r = new.rows.iter().find(|r| r.sizes == sizes).unwrap();
        assert!(r.valid(), "{sizes:?}: {:?}", r.problem);
    }
    let r = new.rows.iter().find(|r| r.sizes == [2, 1, 2]).unwrap();
    assert!(r
        .problem
        .as_deref()
        .unwrap()
        .contains("cannot be combined with expert_parallel_size"));
    // rows without ep set nothing more
    let plain = new.rows.iter().find(|r| r.sizes == [2, 1, 1]).unwrap();
    assert!(!new.apply_query(plain).contains("dp_shard_size"));
    // 0.19.0 (and 0.20.0): tp and cp only
    for rel in ["0.19.0", "0.20.0"] {
        let old = layout::explore(fw, rel, &raw);
        assert_eq!(old.dims.len(), 2, "{rel}");
        assert!(old.rows.iter().all(|r| r.sizes.len() == 2));
    }
}

/// A dense model (or none) gets no expert-parallel rows and no ep column; a model with
/// experts, a typed expert count, or a link that sets expert_parallel_size gets them.
#[test]
fn expert_parallelism_only_for_a_model_with_experts_or_when_the_link_sets_it() {
    use dpcalc::calc::layout::Dim;
    let fw = Framework::Axolotl;
    let with = |extra: &[(Field, &'static str)]| {
        let mut pairs = vec![
            (Field::WorldSize, "8"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumSamples, "10000"),
        ];
        pairs.extend_from_slice(extra);
        layout::explore(fw, "0.21.0", &RawInputs::from_pairs(pairs))
    };
    let ep = |ex: &layout::Explorer| ex.dims.iter().position(|d| d.0 == Dim::Ep).unwrap();
    let ep_rows = |ex: &layout::Explorer| ex.rows.iter().filter(|r| r.sizes[ep(ex)] > 1).count();
    for dense in [
        with(&[
            (Field::BaseModel, "meta-llama/Llama-3.1-8B"),
            (Field::Gpu, "h100-sxm"),
        ]),
        with(&[]),
        with(&[(Field::ExpertParallelSize, "1")]),
    ] {
        assert!(dense.no_ep);
        assert_eq!(ep_rows(&dense), 0);
        assert_eq!(dense.rows.len(), 10); // tp × cp over 8 GPUs
        assert!(dense.shown_dims().all(|(_, d, _)| d != Dim::Ep));
        assert!(dense.rows.iter().all(|r| r.valid()), "{:?}", dense.rows);
    }
    for moe in [
        with(&[(Field::BaseModel, "mistralai/Mixtral-8x7B-v0.1")]),
        with(&[(Field::BaseModel, "Qwen/Qwen3-30B-A3B")]),
        with(&[
            (Field::ExpertParallelSize, "2"),
            (Field::DpShardSize, "4"),
            (Field::FsdpVersion, "2"),
        ]),
    ] {
        assert!(!moe.no_ep);
        assert!(ep_rows(&moe) > 0);
        assert_eq!(moe.rows.len(), 20);
        assert_eq!(moe.shown_dims().count(), 3);
    }
}
