//! The published-formula memory estimate (src/calc/estimate.rs) against the papers' own numbers:
//! the ZeRO paper's worked example, Korthikanti et al.'s Table 2 rows at GPT-3 175B's shape, and
//! monotonic properties over the presets.
#![cfg(not(target_arch = "wasm32"))]

use dpcalc::calc::estimate::{estimate, nearest_fit, Change, Estimate, Plan, Recompute, Sharding};
use dpcalc::calc::model::{preset, Model, PRESETS};
use proptest::prelude::*;

fn llama(id: &str) -> Model {
    preset(id).unwrap()
}

fn states(e: &Estimate) -> u128 {
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
        let plan = Plan {
            shard: 64,
            sharding,
            ..Plan::default()
        };
        states(&estimate(&m, &plan).unwrap())
    };
    let got = [
        at(Sharding::Replicated),
        at(Sharding::Zero1),
        at(Sharding::Zero2),
        at(Sharding::Zero3),
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
    assert_eq!(at(Sharding::DistributedOptimizer), 6 * psi + 12 * psi / 64);
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

/// Korthikanti et al. 2022 (arXiv 2205.05198) Table 2, each row at s = 2048, b = 1, t = 8: the
/// estimate with PP > 1 (no output layer on the first stage) is L × the row's formula.
#[test]
fn korthikanti_table_2_at_gpt3_175b() {
    let (a, h, s, b, t, l) = (96u128, 12288u128, 2048u128, 1u128, 8u128, 96u128);
    let sbh = s * b * h;
    assert_eq!(5 * a * s / h, 80); // the attention-score term, 80 against 34
    let row = |tp: u64, sequence_parallel, recompute, flash_attention| {
        let plan = Plan {
            tp,
            pp: 8,
            seq_len: 2048,
            micro_batch: 1,
            sequence_parallel,
            recompute,
            flash_attention,
            ..Plan::default()
        };
        let act = estimate(&gpt3(), &plan).unwrap().activations;
        assert_eq!(act % l, 0);
        act / l
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
    assert_eq!(row(1, false, None, false), none);
    assert_eq!(row(8, false, None, false), tp);
    assert_eq!(row(8, true, None, false), tp_sp);
    assert_eq!(row(8, false, Selective, false), tp_sel);
    assert_eq!(row(8, true, Selective, false), tp_sp_sel);
    assert_eq!(row(8, false, Full, false), full);
    assert_eq!(row(1, false, Full, false), full);
    // with SP the stored layer input is split along s
    assert_eq!(row(8, true, Full, false), full / t);
    // flash attention drops the score term like selective recompute
    assert_eq!(row(8, false, None, true), tp_sel);
    assert_eq!(row(8, true, None, true), tp_sp_sel);
    // selective recompute saves 1 - 34/114 ≈ 70 % with TP and SP
    assert_eq!(100 * (tp_sp - tp_sp_sel) / tp_sp, 70);

    // PP = 1: the output layer and cross-entropy, 4sbh/t·(1 + v/h), on top of the L layers
    let output = |tp: u64| {
        let plan = |pp| Plan {
            tp,
            pp,
            ..Plan::default()
        };
        let e = |pp| estimate(&gpt3(), &plan(pp)).unwrap().activations;
        e(1) - e(2)
    };
    let v = 51200u128;
    assert_eq!(output(8), 4 * sbh * (h + v) / (h * t));
    assert_eq!(output(8), 65_011_712);
    assert_eq!(output(1), 4 * s * b * (h + v));
}

/// CP and Ulysses divide the sequence; under Ulysses the scores still span the whole sequence.
#[test]
fn context_and_ulysses_divide_the_sequence() {
    let m = gpt3();
    let act = |cp, sp, flash_attention| {
        let plan = Plan {
            cp,
            sp,
            pp: 2,
            flash_attention,
            ..Plan::default()
        };
        estimate(&m, &plan).unwrap().activations
    };
    assert_eq!(act(2, 1, true), act(1, 1, true) / 2);
    assert_eq!(act(1, 2, true), act(1, 1, true) / 2);
    assert_eq!(act(1, 4, true), act(2, 2, true));
    let scores = |cp, sp| act(cp, sp, false) - act(cp, sp, true);
    assert_eq!(scores(1, 1), 96 * 5 * 96 * 2048 * 2048);
    assert_eq!(scores(1, 2), scores(1, 1) / 2);
    assert_eq!(scores(2, 1), scores(1, 1) / 4);
}

#[test]
fn lora_qlora_and_offload() {
    let m = llama("meta-llama/Llama-3.1-8B");
    let psi = m.num_parameters().unwrap();
    let qlora = Plan {
        weight_bits: 4,
        trainable: Some(20_000_000),
        ..Plan::default()
    };
    let e = estimate(&m, &qlora).unwrap();
    assert_eq!(e.weights, psi / 2 + 40_000_000);
    assert_eq!(e.gradients, 40_000_000);
    assert_eq!(e.optimizer, 240_000_000);

    let z3 = Plan {
        shard: 8,
        sharding: Sharding::Zero3,
        offload_optimizer: true,
        offload_param: true,
        ..Plan::default()
    };
    let e = estimate(&m, &z3).unwrap();
    assert_eq!((e.weights, e.gradients, e.optimizer), (0, 0, 0));
    assert!(e.activations > 0);
    // parameter offload is ZeRO-3's only
    let z2 = Plan {
        sharding: Sharding::Zero2,
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
    let plan = Plan {
        ep: 8,
        shard: 8,
        sharding: Sharding::Zero1,
        ..Plan::default()
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
    let plan = Plan {
        shard: 8,
        sharding: Sharding::Zero3,
        flash_attention: true,
        ..Plan::default()
    };
    let e = estimate(&m, &plan).unwrap();
    println!("Llama-3.1-70B ZeRO-3 ×8: {e:?}, total {:?}", e.total());
    assert_eq!(e.weights, 2 * psi / 8);
    assert_eq!(e.weights, 17_638_426_624);
    assert_eq!(e.gradients, e.weights);
    assert_eq!(e.optimizer, 12 * psi / 8);
    // 80 layers × 34sbh, plus the output layer 4sb(h + v)
    let (s, h, v) = (2048u128, 8192u128, 128256u128);
    assert_eq!(e.activations, 80 * 34 * s * h + 4 * s * (h + v));
    assert_eq!(e.activations, 46_751_809_536);
    assert_eq!(e.total(), Some(187_859_222_528));
    // the model states alone (141 GB) exceed an 80 GB GPU: no single change fits
    assert_eq!(nearest_fit(&m, &plan, 80_000_000_000), None);
    // in 150 GB: selective recompute changes nothing under flash attention, full recompute fits
    let full = 141_107_412_992 + 80 * 2 * s * h + 4 * s * (h + v);
    assert_eq!(full, 144_909_549_568);
    assert_eq!(
        nearest_fit(&m, &plan, 150_000_000_000),
        Some((Change::Recompute(Recompute::Full), full))
    );
}

#[test]
fn nearest_fit_order_and_none() {
    let m = llama("meta-llama/Llama-3.1-8B");
    let plan = Plan {
        shard: 8,
        sharding: Sharding::Zero1,
        micro_batch: 8,
        seq_len: 4096,
        ..Plan::default()
    };
    let total = |p: &Plan| estimate(&m, p).unwrap().total().unwrap();
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
        Some(Plan {
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
        Plan {
            tp: 0,
            ..Plan::default()
        },
        Plan {
            pp: 0,
            ..Plan::default()
        },
        Plan {
            cp: 0,
            ..Plan::default()
        },
        Plan {
            sp: 0,
            ..Plan::default()
        },
        Plan {
            ep: 0,
            ..Plan::default()
        },
        Plan {
            shard: 0,
            ..Plan::default()
        },
        Plan {
            seq_len: u64::MAX,
            micro_batch: u64::MAX,
            ..Plan::default()
        },
        Plan {
            optimizer_bytes_per_param: u64::MAX,
            ..Plan::default()
        },
    ] {
        assert_eq!(estimate(&m, &p), None, "{p:?}");
    }
    let huge = Model {
        hidden_size: u64::MAX,
        vocab_size: u64::MAX,
        ..m
    };
    assert_eq!(estimate(&huge, &Plan::default()), None);
}

fn plan() -> impl Strategy<Value = Plan> {
    let pow2 = |max: u32| (0..=max).prop_map(|e| 1u64 << e);
    let recompute = prop_oneof![
        Just(Recompute::None),
        Just(Recompute::Selective),
        Just(Recompute::Full)
    ];
    let sharding = prop_oneof![
        Just(Sharding::Replicated),
        Just(Sharding::Zero1),
        Just(Sharding::Zero2),
        Just(Sharding::Zero3),
        Just(Sharding::DistributedOptimizer)
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
            )| Plan {
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
            },
        )
}

/// `a` never holds more than `b`, part by part.
fn le(a: &Estimate, b: &Estimate) -> bool {
    a.weights <= b.weights
        && a.gradients <= b.gradients
        && a.optimizer <= b.optimizer
        && a.activations <= b.activations
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn nothing_that_should_lower_memory_raises_it(i in 0..PRESETS.len(), p in plan()) {
        let m = preset(PRESETS[i]).unwrap();
        let e = |p: &Plan| estimate(&m, p).unwrap();
        let base = e(&p);
        prop_assert!(base.total().is_some());
        if p.tp <= 4 {
            let more_tp = e(&Plan { tp: 2 * p.tp, ..p.clone() });
            prop_assert!(le(&more_tp, &base));
        }
        use Sharding::*;
        let stages: Vec<Estimate> = [Replicated, Zero1, Zero2, Zero3]
            .iter()
            .map(|&sharding| e(&Plan { sharding, ..p.clone() }))
            .collect();
        for w in stages.windows(2) {
            prop_assert!(le(&w[1], &w[0]));
        }
        let rc: Vec<Estimate> = [Recompute::None, Recompute::Selective, Recompute::Full]
            .iter()
            .map(|&recompute| e(&Plan { recompute, ..p.clone() }))
            .collect();
        for w in rc.windows(2) {
            prop_assert!(le(&w[1], &w[0]));
        }
        let flash = |flash_attention| e(&Plan { flash_attention, ..p.clone() });
        prop_assert!(le(&flash(true), &flash(false)));
        let sq = |sequence_parallel| e(&Plan { sequence_parallel, ..p.clone() });
        prop_assert!(le(&sq(true), &sq(false)));
        if p.micro_batch > 1 {
            let half = e(&Plan { micro_batch: p.micro_batch / 2, ..p.clone() });
            prop_assert!(le(&half, &base));
        }
        for (oo, op) in [(false, false), (true, false), (false, true), (true, true)] {
            let on = e(&Plan { offload_optimizer: oo, offload_param: op, ..p.clone() });
            let off = e(&Plan { offload_optimizer: false, offload_param: false, ..p.clone() });
            prop_assert!(le(&on, &off));
        }
    }

    #[test]
    fn nearest_fit_fits(i in 0..PRESETS.len(), p in plan(), cap in 1u128..2_000_000_000_000) {
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
