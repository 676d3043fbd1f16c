//! The published-formula memory estimate (src/calc/estimate/) against the papers' own numbers:
//! the ZeRO paper's worked example, Korthikanti et al.'s Table 2 rows at GPT-3 175B's shape (per
//! tensor), the pipeline schedules' micro batches in flight, and monotonic properties over the
//! presets, stage by stage.

use dpcalc::calc::estimate::{
    estimate, in_flight, layer_bytes, layer_split, nearest_fit, stages, Change, MemoryParts,
    Params, Partition, Recompute, RecomputeLayers, Setup,
};
use dpcalc::calc::model::{preset, Model, PRESETS};
use dpcalc::calc::plan::{Pipeline, Schedule};
use proptest::prelude::*;

fn llama(id: &str) -> Model {
    preset(id).unwrap()
}

fn states(e: &MemoryParts) -> u128 {
    e.weights + e.gradients + e.optimizer
}

/// Rajbhandari et al. 2019 (arXiv 1910.02054), Figure 1: Ψ = 7.5B, N = 64, K = 12 gives
/// 120 GB, 31.4 GB, 16.6 GB and 1.9 GB per device.
#[test]
fn zero_paper_worked_example() {
    // no layers, a tied embedding of 1000 × 7,499,999 and the final norm's 1000: Ψ = 7.5e9
    let m = Model {
        num_hidden_layers: 0,
        hidden_size: 1000,
        vocab_size: 7_499_999,
        tie_word_embeddings: true,
        ..llama("meta-llama/Llama-3.1-8B")
    };
    let psi: u128 = 7_500_000_000;
    assert_eq!(m.num_parameters(), Some(psi));
    let at = |sharding| {
        let plan = Setup {
            shard: 64,
            sharding,
            ..Setup::default()
        };
        states(&estimate(&m, &plan).unwrap())
    };
    let got = [
        at(Partition::Replicated),
        at(Partition::Zero1),
        at(Partition::Zero2),
        at(Partition::Zero3),
    ];
    assert_eq!(
        got,
        [
            16 * psi,
            4 * psi + 12 * psi / 64,
            2 * psi + 14 * psi / 64,
            16 * psi / 64
        ]
    );
    assert_eq!(
        got,
        [
            120_000_000_000,
            31_406_250_000,
            16_640_625_000,
            1_875_000_000
        ]
    );
    let gb: Vec<f64> = got
        .iter()
        .map(|&b| (b as f64 / 1e8).round() / 10.0)
        .collect();
    assert_eq!(gb, [120.0, 31.4, 16.6, 1.9]);
    // Megatron's distributed optimizer: 6 + 12/N bytes per parameter (fp32 gradients)
    assert_eq!(at(Partition::DistributedOptimizer), 6 * psi + 12 * psi / 64);
}

/// GPT-3 175B's shape as Korthikanti et al. 2022 use it: a = 96, h = 12288, L = 96.
fn gpt3() -> Model {
    Model {
        hidden_size: 12288,
        num_hidden_layers: 96,
        num_attention_heads: 96,
        num_key_value_heads: 96,
        intermediate_size: 4 * 12288,
        vocab_size: 51200,
        ..llama("meta-llama/Llama-3.1-8B")
    }
}

/// The paper's GPT: a GeLU MLP of 4h, multi-head attention, dropout on.
fn paper_plan() -> Setup {
    Setup {
        gated_mlp: false,
        memory: dpcalc::calc::plan::Conventions {
            dropout: true,
            ..dpcalc::calc::plan::Conventions::DEFAULT
        },
        ..Setup::default()
    }
}

/// Korthikanti et al. 2022 (arXiv 2205.05198) Table 2, each row at s = 2048, b = 1, t = 8: one
/// layer's saved tensors, counted tensor by tensor, are the printed formulas; flash attention
/// keeps the fp32 log-sum-exp (4 bytes per head per token) instead of the scores.
#[test]
fn korthikanti_table_2_at_gpt3_175b() {
    let (a, h, s, b, t) = (96u128, 12288u128, 2048u128, 1u128, 8u128);
    let sbh = s * b * h;
    assert_eq!(5 * a * s / h, 80); // the attention-score term, 80 against 34
    let layer = |tp: u64, sequence_parallel, recompute, flash_attention| {
        let plan = Setup {
            tp,
            seq_len: 2048,
            micro_batch: 1,
            sequence_parallel,
            recompute,
            flash_attention,
            ..paper_plan()
        };
        layer_bytes(&gpt3(), 0, &plan, s * b).unwrap()
    };
    use Recompute::*;
    // the printed formulas, multiplied out over h·t so that they stay integers
    let none = sbh * (34 * h + 5 * a * s) / h;
    let tp = sbh * (10 * h * t + 24 * h + 5 * a * s) / (h * t);
    let tp_sp = sbh * (34 * h + 5 * a * s) / (h * t);
    let tp_sel = sbh * (10 * t + 24) / t;
    let tp_sp_sel = 34 * sbh / t;
    let full = 2 * sbh;
    assert_eq!(
        [none, tp, tp_sp, tp_sel, tp_sp_sel, full],
        [
            2_868_903_936,
            578_813_952,
            358_612_992,
            327_155_712,
            106_954_752,
            50_331_648
        ]
    );
    assert_eq!(layer(1, false, None, false).0, none);
    assert_eq!(layer(8, false, None, false).0, tp);
    assert_eq!(layer(8, true, None, false).0, tp_sp);
    assert_eq!(layer(8, false, Selective, false).0, tp_sel);
    assert_eq!(layer(8, true, Selective, false).0, tp_sp_sel);
    // full recompute keeps the layer's input; with SP it is split along s
    assert_eq!(layer(8, false, Full, false).1, full);
    assert_eq!(layer(1, false, Full, false).1, full);
    assert_eq!(layer(8, true, Full, false).1, full / t);
    // flash attention drops the score term like selective recompute, and keeps its statistics
    let lse = |tp: u128| 4 * s * b * a / tp;
    assert_eq!(layer(8, false, None, true).0, tp_sel + lse(8));
    assert_eq!(layer(8, true, None, true).0, tp_sp_sel + lse(8));
    assert_eq!(layer(1, false, None, true).0, 34 * sbh + lse(1));
    // selective recompute saves 1 - 34/114 ≈ 70 % with TP and SP
    assert_eq!(100 * (tp_sp - tp_sp_sel) / tp_sp, 70);
    // a gated MLP of width F keeps gate, up and their product: 6sbF/t against GeLU's 4sbF/t;
    // without dropout no 1-byte masks (2sbh)
    let llama = layer_bytes(
        &gpt3(),
        0,
        &Setup {
            tp: 8,
            flash_attention: true,
            ..Setup::default()
        },
        s * b,
    )
    .unwrap()
    .0;
    assert_eq!(llama, tp_sel - 2 * sbh + 2 * s * b * 4 * h / t + lse(8));
}

/// 1F1B: rank r of p holds min(p − r, m) micro batches of its layers; the first adds the
/// embedding's dropout mask per micro batch, the last the output layer's input, the final norm's
/// and the logits (fp32 kept per micro batch, the 16-bit logits and their fp32 copy once).
#[test]
fn one_f_one_b_stages() {
    let m = gpt3();
    let params = Params::of(&m).unwrap();
    let (s, h, v) = (2048u128, 12288u128, 51200u128);
    let plan = Setup {
        tp: 8,
        pp: 8,
        micro_batches: 6,
        flash_attention: true,
        ..paper_plan()
    };
    let layer = layer_bytes(&m, 0, &plan, s).unwrap().0;
    let all = stages(&m, &params, &plan).unwrap();
    assert_eq!(all.len(), 8);
    // 96 layers over 8 ranks: 12 each; rank 0 and 1 hold 6 (m), rank 3 holds 5
    assert_eq!(all[3].activations, 5 * 12 * layer);
    assert_eq!(all[1].activations, 6 * 12 * layer);
    assert_eq!(all[0].activations, 6 * 12 * layer + 6 * s * h);
    let loss = 4 * s * h + 4 * s * v / 8 + 6 * s * v / 8;
    assert_eq!(all[7].activations, 12 * layer + loss);
    // the embedding on the first rank, the output layer (untied) on the last
    let layers: u128 = (0..12).map(|i| params.layer(&m, i).unwrap().0).sum();
    assert_eq!(all[3].weights, 2 * layers / 8);
    assert_eq!(all[0].weights, 2 * (layers + v * h) / 8);
    assert_eq!(all[7].weights, (2 * (layers + h + v * h)).div_ceil(8));
    // PP = 1 holds everything once; the estimate is the largest rank
    let one = Setup {
        pp: 1,
        ..plan.clone()
    };
    let e = stages(&m, &params, &one).unwrap();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].activations, 96 * layer + s * h + loss);
    assert_eq!(estimate(&m, &plan), Some(all[0]));
}

/// Megatron-LM's interleaved schedule: `(p − r − 1)·2 + (v − 1)·group` warm-up forwards, then one
/// more before the first backward, in its table's order (each group of micro batches through every
/// chunk); all `m·v` when the warm-up covers them; GPipe keeps every micro batch.
#[test]
fn interleaved_and_all_forward_in_flight() {
    let inter = |v, group| Pipeline {
        schedule: Schedule::Interleaved { group },
        virtual_stages: v,
        layers: Vec::new(),
    };
    let p = inter(2, 4);
    assert_eq!(in_flight(Some(&p), 4, 8, 0), [7, 4]);
    assert_eq!(in_flight(Some(&p), 4, 8, 3), [4, 1]);
    assert_eq!(in_flight(Some(&p), 4, 4, 0), [4, 4]);
    assert_eq!(
        in_flight(Some(&inter(8, 4)), 4, 4, 3).iter().sum::<u64>(),
        29
    );
    let one = Pipeline {
        schedule: Schedule::OneFOneB,
        virtual_stages: 1,
        layers: Vec::new(),
    };
    assert_eq!(in_flight(Some(&one), 4, 8, 0), [4]);
    assert_eq!(in_flight(None, 4, 2, 0), [2]);
    assert_eq!(in_flight(None, 4, 8, 3), [1]);
    let gpipe = Pipeline {
        schedule: Schedule::AllForwardAllBackward,
        ..one.clone()
    };
    assert_eq!(in_flight(Some(&gpipe), 4, 8, 3), [8]);
    // counts, not a list of passes: a hostile micro-batch count costs nothing
    assert_eq!(in_flight(Some(&gpipe), 4, u64::MAX, 3), [u64::MAX]);
    assert_eq!(in_flight(Some(&p), 4, u64::MAX, 0), [7, 4]);
    assert_eq!(layer_split(4, 1, Some(&inter(5, 1))), None);
    // the split: the pipeline's own when it covers every layer, else even
    assert_eq!(layer_split(10, 4, None), Some(vec![3, 3, 2, 2]));
    let uneven = Pipeline {
        layers: vec![1, 3, 3, 3],
        ..one.clone()
    };
    assert_eq!(layer_split(10, 4, Some(&uneven)), Some(vec![1, 3, 3, 3]));
    assert_eq!(layer_split(12, 4, Some(&uneven)), Some(vec![3, 3, 3, 3]));
}

/// Full recompute keeps a checkpoint per group and recomputes one group whole in backward.
#[test]
fn full_recompute_keeps_inputs_and_one_group() {
    let m = gpt3();
    let params = Params::of(&m).unwrap();
    let s = 2048u128;
    let base = Setup {
        tp: 8,
        pp: 8,
        micro_batches: 1,
        flash_attention: true,
        recompute: Recompute::Full,
        ..paper_plan()
    };
    let (full, input) = layer_bytes(&m, 0, &base, s).unwrap();
    let act = |recompute_layers| {
        stages(
            &m,
            &params,
            &Setup {
                recompute_layers,
                ..base.clone()
            },
        )
        .unwrap()[3]
            .activations
    };
    assert_eq!(act(RecomputeLayers::Every), 12 * input + full);
    assert_eq!(act(RecomputeLayers::Uniform(4)), 3 * input + 4 * full);
    assert_eq!(act(RecomputeLayers::Block(5)), 5 * input + 7 * full + full);
}

/// CP and Ulysses divide the sequence; under Ulysses the scores still span the whole sequence.
#[test]
fn context_and_ulysses_divide_the_sequence() {
    let m = gpt3();
    let params = Params::of(&m).unwrap();
    // the first of two ranks, two micro batches in flight of 48 layers
    let act = |cp, sp, flash_attention| {
        let plan = Setup {
            cp,
            sp,
            pp: 2,
            micro_batches: 2,
            flash_attention,
            ..paper_plan()
        };
        stages(&m, &params, &plan).unwrap()[0].activations
    };
    assert_eq!(act(2, 1, true), act(1, 1, true) / 2);
    assert_eq!(act(1, 2, true), act(1, 1, true) / 2);
    assert_eq!(act(1, 4, true), act(2, 2, true));
    // eager keeps softmax, mask and dropout output (5 bytes per score) instead of flash's
    // 4-byte log-sum-exp per head and token
    let scores = |cp, sp| act(cp, sp, false) - act(cp, sp, true);
    assert_eq!(scores(1, 1), 96 * (5 * 96 * 2048 * 2048 - 4 * 96 * 2048));
    assert_eq!(scores(1, 2), scores(1, 1) / 2);
    assert_eq!(scores(2, 1), 96 * (5 * 96 * 1024 * 1024 - 4 * 96 * 1024));
}

#[test]
fn lora_qlora_and_offload() {
    let m = llama("meta-llama/Llama-3.1-8B");
    let psi = m.num_parameters().unwrap();
    let qlora = Setup {
        weight_bits: 4,
        trainable: Some(20_000_000),
        ..Setup::default()
    };
    let e = estimate(&m, &qlora).unwrap();
    // the linear layers in NF4 (4 bits, a uint8 absmax per 64 weights, an fp32 absmax per 256
    // of those: bitsandbytes' double quantization); the embedding, the untied output layer and
    // the norms in bf16; the adapters in bf16
    let plain = 2 * 128_256 * 4096 + 4096 + 32 * 2 * 4096;
    assert_eq!(plain, 1_050_939_392u128);
    let linear = psi - plain;
    assert_eq!(
        e.weights,
        linear / 2 + linear / 64 + 4 * (linear / 64 / 256) + 2 * plain + 40_000_000
    );
    assert_eq!(e.weights, 5_742_295_552);
    assert_eq!(e.gradients, 40_000_000);
    assert_eq!(e.optimizer, 240_000_000);

    let z3 = Setup {
        shard: 8,
        sharding: Partition::Zero3,
        offload_optimizer: true,
        offload_param: true,
        ..Setup::default()
    };
    let e = estimate(&m, &z3).unwrap();
    assert_eq!((e.weights, e.gradients, e.optimizer), (0, 0, 0));
    assert!(e.activations > 0);
    // parameter offload is ZeRO-3's only
    let z2 = Setup {
        sharding: Partition::Zero2,
        ..z3
    };
    let e = estimate(&m, &z2).unwrap();
    assert_eq!((e.weights, e.gradients, e.optimizer), (2 * psi, 0, 0));
}

#[test]
fn routed_experts_are_split_over_ep() {
    let m = llama("mistralai/Mixtral-8x7B-v0.1");
    let psi = m.num_parameters().unwrap();
    let routed = m.routed_expert_params().unwrap();
    assert!(routed > 0);
    let plan = Setup {
        ep: 8,
        shard: 8,
        sharding: Partition::Zero1,
        ..Setup::default()
    };
    let e = estimate(&m, &plan).unwrap();
    assert_eq!(e.weights, 2 * (psi - routed + routed / 8));
    // the experts' states are sharded over 8/8 = 1 GPU, the rest over 8
    assert_eq!(e.optimizer, 12 * (psi - routed) / 8 + 12 * routed / 8);
}

/// Llama-3.1-70B, 8 GPUs, ZeRO-3, sequence 2048, micro batch 1, flash attention, no recompute.
#[test]
fn llama_70b_on_8_gpus_zero3() {
    let m = llama("meta-llama/Llama-3.1-70B");
    let psi = m.num_parameters().unwrap();
    assert_eq!(psi, 70_553_706_496);
    let plan = Setup {
        shard: 8,
        sharding: Partition::Zero3,
        flash_attention: true,
        ..Setup::default()
    };
    let e = estimate(&m, &plan).unwrap();
    println!("Llama-3.1-70B ZeRO-3 ×8: {e:?}, total {:?}", e.total());
    assert_eq!(e.weights, 2 * psi / 8);
    assert_eq!(e.weights, 17_638_426_624);
    assert_eq!(e.gradients, e.weights);
    assert_eq!(e.optimizer, 12 * psi / 8);
    // 80 layers (norms 8sh, Q/K/V/O 2s(2·64 + 2·8)·128, log-sum-exp 4s·64, gate, up and
    // product 6s·28672), the output layer's and the final norm's input 4sh, the logits kept
    // in fp32 (4 sv) and, while the loss runs, the 16-bit logits and their fp32 copy (6 sv)
    let (s, h, v) = (2048u128, 8192u128, 128256u128);
    let layer = s * (8 * h + 2 * (64 + 8 + 8 + 64) * 128 + 4 * 64 + 6 * 28672);
    assert_eq!(layer_bytes(&m, 0, &plan, s).unwrap().0, layer);
    assert_eq!(e.activations, 80 * layer + 4 * s * h + 10 * s * v);
    assert_eq!(e.activations, 47_698_673_664);
    assert_eq!(e.total(), Some(188_806_086_656));
    // the model states alone (141 GB) exceed an 80 GB GPU: no single change fits
    assert_eq!(nearest_fit(&m, &plan, 80_000_000_000), None);
    // in 150 GB: selective recompute changes nothing under flash attention; full recompute
    // keeps each layer's input and recomputes one layer at a time, and fits
    let full = 141_107_412_992 + 80 * 2 * s * h + layer + 4 * s * h + 10 * s * v;
    assert_eq!(full, 147_048_120_320);
    assert_eq!(
        nearest_fit(&m, &plan, 150_000_000_000),
        Some((Change::Recompute(Recompute::Full), full))
    );
}

#[test]
fn nearest_fit_order_and_none() {
    let m = llama("meta-llama/Llama-3.1-8B");
    let plan = Setup {
        shard: 8,
        sharding: Partition::Zero1,
        micro_batch: 8,
        seq_len: 4096,
        ..Setup::default()
    };
    let total = |p: &Setup| estimate(&m, p).unwrap().total().unwrap();
    let now = total(&plan);
    // already fits: nothing to change
    assert_eq!(nearest_fit(&m, &plan, now), None);
    // nothing fits in 1 byte
    assert_eq!(nearest_fit(&m, &plan, 1), None);
    // just below ZeRO-3's total: ZeRO-3 fits first
    let z3 = total(&Change::Zero3.apply(&plan).unwrap());
    assert!(z3 < now);
    assert_eq!(nearest_fit(&m, &plan, z3), Some((Change::Zero3, z3)));
    // ZeRO-3 already: selective recompute comes next
    let plan3 = Change::Zero3.apply(&plan).unwrap();
    let sel = total(
        &Change::Recompute(Recompute::Selective)
            .apply(&plan3)
            .unwrap(),
    );
    assert_eq!(
        nearest_fit(&m, &plan3, sel),
        Some((Change::Recompute(Recompute::Selective), sel))
    );
    // a capacity only a smaller micro batch meets, after full recompute is not enough
    let plan_full = Change::Recompute(Recompute::Full).apply(&plan3).unwrap();
    let mb2 = total(&Change::MicroBatch(2).apply(&plan_full).unwrap());
    assert_eq!(
        nearest_fit(&m, &plan_full, mb2),
        Some((Change::MicroBatch(2), mb2))
    );
    // more TP at the same GPU count takes GPUs from the sharding group
    let tp = Change::MoreTp(4).apply(&plan).unwrap();
    assert_eq!((tp.tp, tp.shard), (4, 2));
    assert_eq!(
        Change::MoreTp(8).apply(&tp),
        Some(Setup {
            tp: 8,
            shard: 1,
            ..tp.clone()
        })
    );
    assert_eq!(Change::MoreTp(2).apply(&tp), None);
    assert_eq!(Change::MoreTp(6).apply(&tp), None);
}

#[test]
fn zero_sizes_and_overflow_give_none() {
    let m = llama("meta-llama/Llama-3.1-8B");
    for p in [
        Setup {
            tp: 0,
            ..Setup::default()
        },
        Setup {
            pp: 0,
            ..Setup::default()
        },
        Setup {
            cp: 0,
            ..Setup::default()
        },
        Setup {
            sp: 0,
            ..Setup::default()
        },
        Setup {
            ep: 0,
            ..Setup::default()
        },
        Setup {
            shard: 0,
            ..Setup::default()
        },
        Setup {
            seq_len: u64::MAX,
            micro_batch: u64::MAX,
            ..Setup::default()
        },
        Setup {
            optimizer_bytes_per_param: u64::MAX,
            ..Setup::default()
        },
    ] {
        assert_eq!(estimate(&m, &p), None, "{p:?}");
    }
    let huge = Model {
        hidden_size: u64::MAX,
        vocab_size: u64::MAX,
        ..m
    };
    assert_eq!(estimate(&huge, &Setup::default()), None);
}

fn setup() -> impl Strategy<Value = Setup> {
    let pow2 = |max: u32| (0..=max).prop_map(|e| 1u64 << e);
    let recompute = prop_oneof![
        Just(Recompute::None),
        Just(Recompute::Selective),
        Just(Recompute::Full)
    ];
    let sharding = prop_oneof![
        Just(Partition::Replicated),
        Just(Partition::Zero1),
        Just(Partition::Zero2),
        Just(Partition::Zero3),
        Just(Partition::DistributedOptimizer)
    ];
    (
        (
            pow2(3),
            pow2(2),
            pow2(1),
            pow2(1),
            pow2(3),
            1u64..=64,
            sharding,
        ),
        (
            any::<bool>(),
            any::<bool>(),
            1u64..=16,
            1u64..=32768,
            recompute,
        ),
        (
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(16u64), Just(4)],
        ),
        (
            proptest::option::of(1u128..2_000_000_000),
            prop_oneof![Just(12u64), Just(6), Just(16)],
        ),
    )
        .prop_map(
            |(
                (tp, pp, cp, sp, ep, shard, sharding),
                (oo, op, mb, seq, rc),
                (fa, sq, bits),
                (tr, k),
            )| Setup {
                tp,
                pp,
                cp,
                sp,
                ep,
                shard,
                sharding,
                offload_optimizer: oo,
                offload_param: op,
                micro_batch: mb,
                seq_len: seq,
                recompute: rc,
                flash_attention: fa,
                sequence_parallel: sq,
                weight_bits: bits,
                trainable: tr,
                optimizer_bytes_per_param: k,
                ..Setup::default()
            },
        )
}

/// Every pipeline stage's estimate.
struct Staged(Vec<MemoryParts>);

/// No stage of `a` holds more than the same stage of `b`, part by part.
fn le(a: &Staged, b: &Staged) -> bool {
    a.0.len() == b.0.len()
        && a.0.iter().zip(&b.0).all(|(a, b)| {
            a.weights <= b.weights
                && a.gradients <= b.gradients
                && a.optimizer <= b.optimizer
                && a.activations <= b.activations
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Stage by stage (the largest stage may change with the plan).
    #[test]
    fn nothing_that_should_lower_memory_raises_it(i in 0..PRESETS.len(), p in setup()) {
        let m = preset(PRESETS[i]).unwrap();
        let params = Params::of(&m).unwrap();
        let e = |p: &Setup| Staged(stages(&m, &params, p).unwrap());
        let base = e(&p);
        prop_assert!(base.0.iter().all(|s| s.total().is_some()));
        prop_assert_eq!(base.0.len() as u64, p.pp);
        if p.tp <= 4 {
            let more_tp = e(&Setup { tp: 2 * p.tp, ..p.clone() });
            prop_assert!(le(&more_tp, &base));
        }
        use Partition::*;
        let stages: Vec<Staged> = [Replicated, Zero1, Zero2, Zero3]
            .iter()
            .map(|&sharding| e(&Setup { sharding, ..p.clone() }))
            .collect();
        for w in stages.windows(2) {
            prop_assert!(le(&w[1], &w[0]));
        }
        let rc: Vec<Staged> = [Recompute::None, Recompute::Selective, Recompute::Full]
            .iter()
            .map(|&recompute| e(&Setup { recompute, ..p.clone() }))
            .collect();
        // either recompute holds no more than none (full recompute's one recomputed layer can
        // exceed what selective keeps when a stage has a single layer)
        prop_assert!(le(&rc[1], &rc[0]));
        prop_assert!(le(&rc[2], &rc[0]));
        // flash keeps a 4-byte log-sum-exp per head and token, eager at least 2 bytes per score:
        // less from two tokens on
        if p.seq_len >= 2 * p.cp * p.sp {
            let flash = |flash_attention| e(&Setup { flash_attention, ..p.clone() });
            prop_assert!(le(&flash(true), &flash(false)));
        }
        let sq = |sequence_parallel| e(&Setup { sequence_parallel, ..p.clone() });
        prop_assert!(le(&sq(true), &sq(false)));
        if p.micro_batch > 1 {
            let half = e(&Setup { micro_batch: p.micro_batch / 2, ..p.clone() });
            prop_assert!(le(&half, &base));
        }
        for (oo, op) in [(false, false), (true, false), (false, true), (true, true)] {
            let on = e(&Setup { offload_optimizer: oo, offload_param: op, ..p.clone() });
            let off = e(&Setup { offload_optimizer: false, offload_param: false, ..p.clone() });
            prop_assert!(le(&on, &off));
        }
    }

    #[test]
    fn nearest_fit_fits(i in 0..PRESETS.len(), p in setup(), cap in 1u128..2_000_000_000_000) {
        let m = preset(PRESETS[i]).unwrap();
        let now = estimate(&m, &p).unwrap().total().unwrap();
        match nearest_fit(&m, &p, cap) {
            Some((c, total)) => {
                prop_assert!(now > cap);
                prop_assert!(total <= cap);
                let q = c.apply(&p).unwrap();
                prop_assert_eq!(estimate(&m, &q).unwrap().total(), Some(total));
            }
            None => {
                if now > cap {
                    // no single change fits: in particular not ZeRO-3 with full recompute alone
                    for c in [Change::Zero3, Change::Recompute(Recompute::Full), Change::MicroBatch(1)] {
                        if let Some(q) = c.apply(&p) {
                            let t = estimate(&m, &q).unwrap().total().unwrap();
                            prop_assert!(t > cap || q == p);
                        }
                    }
                }
            }
        }
    }
}

/// Hostile sizes cost nothing and never allocate what they name: more pipeline stages than the
/// estimate splits into give no estimate; alike layers count by their number, however many;
/// layers of two kinds beyond the bound the estimate walks give none.
#[test]
fn absurd_pipelines_and_layer_counts_cost_nothing() {
    use dpcalc::calc::estimate::MAX_LAYERS;
    let m = llama("meta-llama/Llama-3.1-8B");
    let p = Setup {
        pp: 1 << 40,
        ..Setup::default()
    };
    assert!(estimate(&m, &p).is_none());
    // alike layers: the weights grow with the layers exactly
    let deep = |n: u64| Model {
        num_hidden_layers: n,
        ..m.clone()
    };
    let weights = |n: u64| estimate(&deep(n), &Setup::default()).unwrap().weights;
    let per_layer = weights(2) - weights(1);
    assert_eq!(weights(1 << 40) - weights(1), per_layer * ((1 << 40) - 1));
    // layers of two kinds are walked up to the bound, and have no estimate beyond it
    let two_kinds = |n: u64| Model {
        num_hidden_layers: n,
        first_k_dense_replace: 1,
        ..llama("deepseek-ai/DeepSeek-V2-Lite")
    };
    assert!(Params::of(&two_kinds(MAX_LAYERS)).is_some());
    assert!(Params::of(&two_kinds(MAX_LAYERS + 1)).is_none());
    assert!(estimate(&two_kinds(1 << 40), &Setup::default()).is_none());
}

/// The largest stage from the candidate ranks (first, second, last when the layers are alike and
/// split evenly) is the largest of all the ranks, for every schedule and recompute.
#[test]
fn the_largest_stage_from_three_ranks_is_the_largest_of_all() {
    use dpcalc::calc::estimate::{estimate_with, largest, stages, Params, Recompute, Setup};
    use dpcalc::calc::plan::{Pipeline, Schedule};
    let mut checked = 0;
    for id in [
        "meta-llama/Llama-3.1-8B",
        "Qwen/Qwen3-30B-A3B",
        "deepseek-ai/DeepSeek-V2-Lite",
        "google/gemma-2-9b",
    ] {
        let m = dpcalc::calc::model::preset(id).unwrap();
        let params = Params::of(&m).unwrap();
        for pp in [2, 4, 5, 7, 8] {
            for (schedule, v) in [
                (Schedule::OneFOneB, 1),
                (Schedule::Interleaved { group: 0 }, 2),
                (Schedule::AllForwardAllBackward, 1),
            ] {
                for micro_batches in [1, 3, 8, 64] {
                    for recompute in [Recompute::None, Recompute::Selective, Recompute::Full] {
                        let plan = Setup {
                            pp,
                            micro_batches,
                            recompute,
                            pipeline: Some(Pipeline {
                                schedule,
                                virtual_stages: v,
                                layers: Vec::new(),
                            }),
                            ..Setup::default()
                        };
                        let Some(all) = stages(&m, &params, &plan) else {
                            continue;
                        };
                        let (i, _) = largest(&all).unwrap();
                        assert_eq!(
                            estimate_with(&m, &params, &plan),
                            Some(all[i]),
                            "{id} pp {pp} v {v} m {micro_batches} {recompute:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// torchtitan's per-op selective checkpointing (`_save_list`, every odd `mm` kept) on a Llama
/// block: one more layer adds its input, `wq`'s, `wv`'s and the attention's outputs, the fp32
/// log-sum-exp, `w1`'s and `w2`'s outputs; `w2`'s is the partial sum before TP's reduction, the
/// whole hidden state on each TP rank. Megatron-style selective (no per-op policy) keeps more.
#[test]
fn per_op_selective_checkpointing_keeps_what_torchtitan_saves() {
    let m = llama("meta-llama/Llama-3.1-8B");
    let (h, f, a, kv_d) = (4096u128, 14336u128, 32u128, 1024u128);
    for tp in [1u64, 2] {
        let plan = Setup {
            tp,
            micro_batch: 2,
            seq_len: 8192,
            recompute: Recompute::Selective,
            flash_attention: true,
            selective_half_matmuls: true,
            ..Setup::default()
        };
        let acts = |layers: u64, plan: &Setup| {
            let m = Model {
                num_hidden_layers: layers,
                ..m.clone()
            };
            estimate(&m, plan).unwrap().activations
        };
        let per_layer = acts(3, &plan) - acts(2, &plan);
        let (t, tokens) = (u128::from(tp), 2 * 8192u128);
        let kept = tokens * (2 * h + (2 * h + 2 * kv_d + 2 * h + 4 * a + 2 * f) / t + 2 * h);
        assert_eq!(per_layer, kept, "TP {tp}");
        let megatron = Setup {
            selective_half_matmuls: false,
            ..plan.clone()
        };
        assert!(acts(3, &megatron) - acts(2, &megatron) > per_layer);
    }
}
