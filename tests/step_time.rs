//! The step-time model (`calc/estimate/time.rs`) against its own formulas: the pipeline's bubble,
//! NCCL's bus-bandwidth convention, overlap, and which link a group's ranks use.

use dpcalc::calc::estimate::time::{step_time, Hardware, Overlap, Placement};
use dpcalc::calc::estimate::{Params, Partition, Setup};
use dpcalc::calc::estimated::StepTime;
use dpcalc::calc::model::{preset, Model};

fn llama() -> Model {
    preset("meta-llama/Llama-3.1-8B").expect("preset")
}

/// A GPU whose links are (nearly) free and without latency: only compute is left.
fn free_network() -> Hardware {
    Hardware {
        peak_flops: 989e12,
        matmul_ceiling: 0.8,
        memory_bytes_per_s: 3.35e12,
        attention_flops_per_s: 330e12,
        fp8_flops_per_s: 0.0,
        intra_bytes_per_s: 1e30,
        inter_bytes_per_s: 1e30,
        intra_latency: 0.0,
        inter_latency: 0.0,
    }
}

fn place(gpus_per_node: u64, tp: u64, cp: u64, dp: u64) -> Placement {
    // Megatron's order: tp fastest, then cp, dp, pp
    Placement {
        gpus_per_node,
        tp_stride: 1,
        cp_stride: tp,
        dp_stride: tp * cp,
        pp_stride: tp * cp * dp,
        ep_stride: tp * cp,
    }
}

fn run(plan: &Setup, dp: u64, hw: &Hardware, place: &Placement, overlap: Overlap) -> StepTime {
    let m = llama();
    step_time(&m, &Params::of(&m).unwrap(), plan, dp, hw, place, overlap).expect("a step time")
}

/// 1F1B's bubble is (p − 1) micro batches of the slowest rank, interleaving divides it by v
/// (Narayanan et al. 2021 §2.2): with free communication the pipeline part is exactly that.
#[test]
fn the_bubble_is_p_minus_1_over_v_micro_batches() {
    let hw = free_network();
    let plan = Setup {
        pp: 4,
        micro_batches: 16,
        seq_len: 4096,
        ..Setup::default()
    };
    let t = run(&plan, 1, &hw, &place(8, 1, 1, 1), Overlap::default());
    // compute = m × per micro batch + the optimizer step (small, no data parallelism)
    let per_mb = t.pp_bubble / 3.0;
    assert!(
        t.compute > 16.0 * per_mb && t.compute < 16.0 * per_mb * 1.05,
        "{t:?}"
    );
    let interleaved = Setup {
        pipeline: Some(dpcalc::calc::plan::Pipeline {
            schedule: dpcalc::calc::plan::Schedule::Interleaved { group: 4 },
            virtual_stages: 2,
            layers: Vec::new(),
        }),
        ..plan.clone()
    };
    let i = run(&interleaved, 1, &hw, &place(8, 1, 1, 1), Overlap::default());
    assert!(
        (i.pp_bubble * 2.0 - t.pp_bubble).abs() < 1e-9 * t.pp_bubble,
        "{i:?} vs {t:?}"
    );
    assert_eq!(t.tp + t.cp + t.ep + t.dp, 0.0);
}

/// DDP's gradient all-reduce moves 2(n − 1)/n of the gradients' bytes at the bus bandwidth
/// (nccl-tests' convention), plus a latency per ring step; exposed without overlap, hidden
/// behind the backward with it.
#[test]
fn the_data_parallel_all_reduce_follows_the_busbw_convention() {
    let m = llama();
    let bw = 100e9;
    let hw = Hardware {
        intra_bytes_per_s: bw,
        ..free_network()
    };
    let plan = Setup {
        seq_len: 4096,
        ..Setup::default()
    };
    let t = run(&plan, 8, &hw, &place(8, 1, 1, 8), Overlap::default());
    let params = m.num_parameters().unwrap() as f64;
    let want = 2.0 * 7.0 / 8.0 * params * 2.0 / bw;
    assert!((t.dp - want).abs() < want * 1e-6, "{} vs {want}", t.dp);
    let overlapped = run(
        &plan,
        8,
        &hw,
        &place(8, 1, 1, 8),
        Overlap {
            grad_reduce: true,
            ..Overlap::default()
        },
    );
    assert!(overlapped.dp < t.dp);
    // hidden communication still takes some of the compute it runs beside
    assert!(overlapped.compute > t.compute);
}

/// A group that leaves the node runs at its members' NICs: TP across two nodes is slower than
/// inside one, and the more of the group's members share a node, the more NICs it uses.
#[test]
fn a_group_across_nodes_runs_at_the_nics() {
    let hw = Hardware {
        intra_bytes_per_s: 370e9,
        inter_bytes_per_s: 47.5e9,
        ..free_network()
    };
    let plan = Setup {
        tp: 8,
        seq_len: 4096,
        ..Setup::default()
    };
    let inside = run(&plan, 1, &hw, &place(8, 8, 1, 1), Overlap::default());
    let across = run(&plan, 1, &hw, &place(4, 8, 1, 1), Overlap::default());
    assert!(
        across.tp > inside.tp * 1.5,
        "{} vs {}",
        across.tp,
        inside.tp
    );
    // the data-parallel all-reduce of 16 replicas over 2 nodes: 8 members per node use 8 NICs,
    // 1 per node (TP 8 inside) only one each
    let dense = Setup {
        seq_len: 4096,
        ..Setup::default()
    };
    let wide = run(&dense, 16, &hw, &place(8, 1, 1, 16), Overlap::default());
    let narrow = run(&plan, 16, &hw, &place(8, 8, 1, 16), Overlap::default());
    // per byte: the narrow group's gradients are 8× fewer (TP 8) but its bandwidth 8× lower too
    assert!(
        narrow.dp > wide.dp / 8.0 * 4.0,
        "{} vs {}",
        narrow.dp,
        wide.dp
    );
}

/// ZeRO-3 gathers the parameters every micro batch: more accumulation, more communication;
/// its prefetch hides what the compute covers.
#[test]
fn zero3_gathers_every_micro_batch() {
    let hw = Hardware {
        intra_bytes_per_s: 370e9,
        inter_bytes_per_s: 47.5e9,
        ..free_network()
    };
    let one = Setup {
        sharding: Partition::Zero3,
        shard: 64,
        seq_len: 4096,
        micro_batches: 1,
        ..Setup::default()
    };
    let four = Setup {
        micro_batches: 4,
        ..one.clone()
    };
    let p = place(8, 1, 1, 64);
    let a = run(&one, 64, &hw, &p, Overlap::default());
    let b = run(&four, 64, &hw, &p, Overlap::default());
    assert!(
        (b.dp - 4.0 * a.dp).abs() < 1e-9 * b.dp,
        "{} vs {}",
        b.dp,
        a.dp
    );
    let hidden = run(
        &four,
        64,
        &hw,
        &p,
        Overlap {
            param_gather: true,
            grad_reduce: true,
            tp: false,
            per_chunk: false,
        },
    );
    assert!(hidden.dp < b.dp);
}

/// Full recompute runs the forward again: a third more compute than none, selective in between.
#[test]
fn recompute_costs_compute() {
    use dpcalc::calc::estimate::Recompute;
    let hw = free_network();
    let base = Setup {
        seq_len: 4096,
        ..Setup::default()
    };
    let p = place(8, 1, 1, 1);
    let none = run(&base, 1, &hw, &p, Overlap::default());
    let sel = run(
        &Setup {
            recompute: Recompute::Selective,
            ..base.clone()
        },
        1,
        &hw,
        &p,
        Overlap::default(),
    );
    let full = run(
        &Setup {
            recompute: Recompute::Full,
            ..base.clone()
        },
        1,
        &hw,
        &p,
        Overlap::default(),
    );
    assert!(none.compute < sel.compute && sel.compute < full.compute);
    let ratio = full.compute / none.compute;
    assert!(ratio > 1.25 && ratio < 1.34, "{ratio}");
}

/// Every GPU dpcalc knows has the figures the step time reads.
#[test]
fn every_gpu_has_its_figures() {
    for g in dpcalc::calc::gpu::GPUS {
        let f = dpcalc::calc::gpu::figures(g).unwrap_or_else(|| panic!("{}", g.id));
        assert!(
            f.mamf_permille > 0
                && f.mamf_permille < 1000
                && f.memory_gbps > 0
                && f.link_gbps > 0
                && f.nic_gbps > 0
        );
        for i in 0..3 {
            assert!(f.fa2_permille[i] > 0 && f.fused_attention_permille[i] >= f.fa2_permille[i]);
        }
        // a peak not known is a range holding the figure taken, and the note says so
        if let Some((lo, hi)) = f.peak_range_tflops {
            assert!(lo < g.peak_tflops && g.peak_tflops < hi, "{}", g.id);
            assert!(f.note.contains("not known"), "{}", g.id);
        }
        // FP8 doubles the dense BF16 peak where it is known; where it is not, the note says why
        match f.fp8_peak_tflops {
            Some(p) => assert!(p >= 2 * g.peak_tflops - 2, "{}: {p}", g.id),
            None => assert!(
                f.note.contains("No FP8")
                    || f.note.contains("FP8 peak") && f.note.contains("not known"),
                "{}",
                g.id
            ),
        }
        let stream = f.stream_fraction();
        assert!(stream > 0.5 && stream <= 1.0, "{}", g.id);
        if f.stream_permille.is_none() {
            assert!(f.note.contains("no STREAM measurement"), "{}", g.id);
        }
        if f.sm_count.is_none() {
            assert!(f.note.contains("SM count"), "{}", g.id);
        }
    }
}

/// Meta's 500 W HBM2e H100 (torchtitan's published H100 runs) is a GPU of its own: 96 GB, its
/// peak between the NVL's and the SXM's, 2.4 TB/s; the same link is slower on it than on an H100
/// SXM, and its step time says what of it is not known.
#[test]
fn the_500w_hbm2e_h100_is_its_own_gpu() {
    let g = dpcalc::calc::gpu::gpu("h100-96gb-500w").expect("known");
    let sxm = dpcalc::calc::gpu::gpu("h100-sxm").unwrap();
    let f = dpcalc::calc::gpu::figures(g).unwrap();
    assert_eq!((g.memory_gb, f.memory_gbps), (96, 2400));
    assert_eq!(f.peak_range_tflops, Some((835, 989)));
    assert!(g.peak_tflops < sxm.peak_tflops);
    let link = |gpu: &str| {
        format!("?framework=torchtitan&version=0.3.0&nodes=1&gpus_per_node=8&data_parallel_shard_degree=8&local_batch_size=2&global_batch_size=16&seq_len=8192&model=llama3/8B&gpu={gpu}")
    };
    let step = |gpu: &str| {
        let r = dpcalc::query::decode(&link(gpu)).report();
        match r.value(dpcalc::calc::Output::StepTimeSeconds) {
            Some(dpcalc::calc::Num::Float(x)) => (x, r),
            other => panic!("{gpu}: {other:?}"),
        }
    };
    let (slow, r) = step("h100-96gb-500w");
    let (fast, _) = step("h100-sxm");
    assert!(slow > fast * 1.05, "{slow} vs {fast}");
    let worked = r
        .steps
        .iter()
        .find(|s| s.output == dpcalc::calc::Output::StepTimeSeconds)
        .expect("a worked step");
    assert!(
        worked.worked.contains("the midpoint 912 is taken"),
        "{}",
        worked.worked
    );
}

/// LoRA: the frozen weights take no weight gradient (the linear layers' backward is one product,
/// not two) and only the adapters' gradients are reduced.
#[test]
fn lora_skips_the_frozen_weights_gradients() {
    let hw = Hardware {
        intra_bytes_per_s: 100e9,
        ..free_network()
    };
    let full = Setup {
        seq_len: 4096,
        ..Setup::default()
    };
    let lora = Setup {
        trainable: Some(20_000_000),
        ..full.clone()
    };
    let p = place(8, 1, 1, 8);
    let a = run(&full, 8, &hw, &p, Overlap::default());
    let b = run(&lora, 8, &hw, &p, Overlap::default());
    let ratio = b.compute / a.compute;
    assert!(ratio > 0.66 && ratio < 0.8, "{ratio}");
    assert!(b.dp < a.dp / 100.0, "{} vs {}", b.dp, a.dp);
}

/// The memory-bound kernels' bytes follow the framework's fusion level (`per_token_bytes`,
/// `LOSS_BYTES_PER_LOGIT`): for Llama 3.1 8B (h 4096, 32 query and 8 key heads of 128, SwiGLU
/// 14,336, RMSNorm, rotary, vocabulary 128,256) a layer's forward moves per token, eager:
/// 2·36·h + 20·(q + kv) + 4·q + 2·6·h + 10·F = 606,208 bytes; compiled: 2·8·h + 4·(q + kv) +
/// 4·q + 6·F = 188,416; fused: 2·4·h + 2·6·h + 6·F = 167,936; the backward twice that; the loss
/// 40, 6 and 56 bytes per logit. Everything else being equal, the compute differs by exactly
/// those bytes at the memory bandwidth.
#[test]
fn the_memory_bound_bytes_follow_the_fusion_level() {
    use dpcalc::calc::plan::Fusion;
    let hw = free_network();
    let at = |fusion: Fusion| {
        let plan = Setup {
            fusion,
            memory: dpcalc::calc::plan::Conventions {
                dropout: false,
                ..dpcalc::calc::plan::Conventions::DEFAULT
            },
            flash_attention: true,
            ..Setup::default()
        };
        run(&plan, 1, &hw, &place(8, 1, 1, 1), Overlap::default()).compute
    };
    let (eager, compiled, fused) = (at(Fusion::Eager), at(Fusion::Compiled), at(Fusion::Fused));
    let (tokens, layers, vocab) = (2048.0, 32.0, 128_256.0);
    let expect = |layer: f64, loss: f64| {
        (3.0 * layers * tokens * layer + loss * vocab * tokens) / hw.memory_bytes_per_s
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1e-12);
    assert!(
        close(eager - fused, expect(606_208.0 - 167_936.0, 40.0 - 56.0)),
        "{eager} {fused}"
    );
    assert!(
        close(compiled - fused, expect(188_416.0 - 167_936.0, 6.0 - 56.0)),
        "{compiled} {fused}"
    );
    assert!(eager > compiled);
}

/// torchtitan's `compile.enable` is read (a flag: another value is an error at its field) and the
/// step time follows it: the compiled run is faster, by its memory-bound kernels only.
#[test]
fn torchtitan_compile_enable_fuses_the_memory_bound_kernels() {
    use dpcalc::calc::{Field, Level, Num, Output};
    let link = "?framework=torchtitan&version=0.3.0&nodes=1&gpus_per_node=8&data_parallel_shard_degree=8&local_batch_size=2&global_batch_size=16&seq_len=8192&model=llama3/8B&gpu=h100-sxm";
    let value = |q: &str, o: Output| match dpcalc::query::decode(q).report().value(o) {
        Some(Num::Float(x)) => x,
        other => panic!("{q}: {other:?}"),
    };
    let eager = value(link, Output::StepComputeSeconds);
    let unset = value(
        &format!("{link}&compile.enable=false"),
        Output::StepComputeSeconds,
    );
    let compiled = value(
        &format!("{link}&compile.enable=true"),
        Output::StepComputeSeconds,
    );
    assert_eq!(eager, unset);
    assert!(
        compiled < eager * 0.92 && compiled > eager * 0.7,
        "{compiled} vs {eager}"
    );
    // the communication is the network model's either way
    assert_eq!(
        value(link, Output::StepDpCommSeconds),
        value(
            &format!("{link}&compile.enable=true"),
            Output::StepDpCommSeconds
        )
    );
    let bad = dpcalc::query::decode(&format!("{link}&compile.enable=maybe")).report();
    assert!(bad
        .diags_for(Field::CompileEnable)
        .any(|d| d.level == Level::Error));
}

/// The attention kernel's rate follows the sequence between the measured points (cudnn-frontend's
/// 4k, 8k and 16k on H100: FlashAttention-2 264, 290, 311 TFLOP/s, cuDNN 468, 490, 520),
/// interpolated on log₂ s and held beyond them.
#[test]
fn the_attention_rate_follows_the_sequence() {
    let g = dpcalc::calc::gpu::gpu("h100-sxm").unwrap();
    let f = dpcalc::calc::gpu::figures(g).unwrap();
    let tf =
        |fused: bool, seq: u64| f.attention_permille(fused, seq) * g.peak_tflops as f64 / 1000.0;
    assert!((tf(false, 8192) - 290.0).abs() < 1.0, "{}", tf(false, 8192));
    assert!((tf(true, 16384) - 520.0).abs() < 1.0, "{}", tf(true, 16384));
    assert_eq!(tf(false, 1024), tf(false, 4096));
    assert_eq!(tf(true, 131_072), tf(true, 16384));
    let mid = f.attention_permille(false, 5793);
    assert!(
        mid > 267.0 && mid < 293.0 && (mid - 280.0).abs() < 0.5,
        "{mid}"
    );
    // an A100 has one rate
    let a = dpcalc::calc::gpu::figures(dpcalc::calc::gpu::gpu("a100-80gb").unwrap()).unwrap();
    assert_eq!(
        a.attention_permille(false, 2048),
        a.attention_permille(false, 32768)
    );
}

/// An eager layer takes at least its kernels' launches (`EAGER_KERNELS_PER_LAYER` = 33 forward,
/// twice that backward, 11 µs each): at 16 tokens Llama 3.1 8B's 32 eager layers are
/// launch-bound (a faster GPU changes nothing), a fused framework's are not.
#[test]
fn an_eager_layer_takes_at_least_its_launches() {
    use dpcalc::calc::plan::Fusion;
    let at = |fusion: Fusion, ceiling: f64| {
        let hw = Hardware {
            matmul_ceiling: ceiling,
            ..free_network()
        };
        let plan = Setup {
            fusion,
            seq_len: 16,
            flash_attention: true,
            ..Setup::default()
        };
        // the optimizer step (at the memory bandwidth) is the same either way
        run(&plan, 1, &hw, &place(8, 1, 1, 1), Overlap::default()).compute
    };
    let floor = 32.0 * 33.0 * 3.0 * 11e-6;
    let optimizer = {
        let m = llama();
        Params::of(&m).unwrap().total as f64 * 30.0 / free_network().memory_bytes_per_s
    };
    let eager = at(Fusion::Eager, 0.8);
    assert!(
        (eager - optimizer - floor).abs() < 1e-3 * floor,
        "{eager} {optimizer} {floor}"
    );
    assert_eq!(eager, at(Fusion::Eager, 0.4));
    assert!(at(Fusion::Fused, 0.4) > at(Fusion::Fused, 0.8));
    assert!(at(Fusion::Fused, 0.8) - optimizer < floor / 2.0);
}

/// FP8 (`Setup::fp8`): the layers' linear products at the FP8 rate and the casts' bytes
/// (`FP8_CAST_BYTES`, 7 per value tensorwise, 5 delayed) of each linear layer's input and output
/// gradient and of the weights once per micro batch. For Llama 3.1 8B per token and layer the
/// casts are the inputs 2·h + q + F = 26,624 values and the output gradients q + 2·kv + h + 2·F +
/// h = 43,008, and each layer's 218,112,000 weights: at an FP8 rate equal to the 16-bit one the
/// step differs by exactly those bytes; at twice the rate the products take less time.
#[test]
fn fp8_runs_the_linear_layers_at_its_rate_and_pays_the_casts() {
    use dpcalc::calc::plan::Fp8;
    let base = free_network();
    let same_rate = Hardware {
        fp8_flops_per_s: base.peak_flops * base.matmul_ceiling,
        ..base
    };
    let at = |hw: &Hardware, fp8: Option<Fp8>| {
        let plan = Setup {
            fp8,
            flash_attention: true,
            ..Setup::default()
        };
        run(&plan, 1, hw, &place(8, 1, 1, 1), Overlap::default()).compute
    };
    let bf16 = at(&same_rate, None);
    let (tokens, layers) = (2048.0, 32.0);
    let values = (26_624.0 + 43_008.0) * tokens * layers + 218_112_000.0 * layers;
    for (recipe, per_value) in [(Fp8::Tensorwise, 7.0), (Fp8::Delayed, 5.0)] {
        let fp8 = at(&same_rate, Some(recipe));
        let expect = per_value * values / base.memory_bytes_per_s;
        assert!(
            ((fp8 - bf16) - expect).abs() < 1e-9 * expect,
            "{recipe:?}: {fp8} - {bf16} vs {expect}"
        );
    }
    let twice = Hardware {
        fp8_flops_per_s: 2.0 * base.peak_flops * base.matmul_ceiling,
        ..base
    };
    let fast = at(&twice, Some(Fp8::Delayed));
    // the output layer, the attention, the memory-bound kernels and the optimizer stay as they were
    assert!(fast < bf16 * 0.85, "{fast} vs {bf16}");
    // no FP8 on the GPU: the products stay at the 16-bit rate
    assert_eq!(
        at(&base, Some(Fp8::Delayed)),
        at(&same_rate, Some(Fp8::Delayed))
    );
}

/// The frameworks' FP8 switches are read: torchtitan's `model.converters` (float8, or its 0.2.2
/// name quantize.linear.float8; another converter is said not to be modelled) and Megatron-LM's
/// `--fp8-format` (e4m3 or hybrid, which needs Transformer Engine); each makes the step faster.
#[test]
fn the_fp8_switches_are_read() {
    use dpcalc::calc::{Field, Level, Num, Output};
    let step = |q: &str| match dpcalc::query::decode(q)
        .report()
        .value(Output::StepTimeSeconds)
    {
        Some(Num::Float(x)) => x,
        other => panic!("{q}: {other:?}"),
    };
    let tt = "?framework=torchtitan&version=0.3.0&nodes=1&gpus_per_node=8&data_parallel_shard_degree=8&local_batch_size=2&global_batch_size=16&seq_len=8192&model=llama3/8B&compile.enable=true&gpu=h100-sxm";
    let plain = step(tt);
    for name in ["float8", "quantize.linear.float8", "[\"float8\"]"] {
        let t = step(&format!("{tt}&model.converters={name}"));
        assert!(
            t < plain * 0.95 && t > plain * 0.6,
            "{name}: {t} vs {plain}"
        );
    }
    let other = dpcalc::query::decode(&format!("{tt}&model.converters=float8,mx")).report();
    assert!(other
        .diags_for(Field::ModelConverters)
        .any(|d| d.level == Level::Warning && d.message.contains("mx")));
    let mlm = "?framework=megatron&version=0.19.2&world_size=8&tensor_model_parallel_size=1&pipeline_model_parallel_size=1&micro_batch_size=1&global_batch_size=128&seq_length=4096&model=meta-llama/Llama-2-7b-hf&gpu=h100-sxm&train_iters=100";
    let plain = step(mlm);
    for f in ["e4m3", "hybrid"] {
        let t = step(&format!("{mlm}&fp8_format={f}"));
        assert!(t < plain * 0.9 && t > plain * 0.5, "{f}: {t} vs {plain}");
    }
    for bad in [
        "fp8_format=e5m2",
        "fp8_format=hybrid&transformer_impl=local",
    ] {
        let r = dpcalc::query::decode(&format!("{mlm}&{bad}")).report();
        assert!(
            r.diags_for(Field::Fp8Format)
                .any(|d| d.level == Level::Error),
            "{bad}"
        );
    }
}

/// The HF Trainer's `torch_compile` (default false) is read like torchtitan's `compile.enable`:
/// the compiled model's memory-bound kernels are fused, so its step is shorter; another value is
/// an error at the field.
#[test]
fn hf_torch_compile_fuses_the_memory_bound_kernels() {
    use dpcalc::calc::{Field, Level, Num, Output};
    let link = "?framework=hf&world_size=16&model_name_or_path=meta-llama/Llama-3.1-8B&gpu=h100-sxm&per_device_train_batch_size=1&gradient_accumulation_steps=4&max_length=4096&num_samples=100000";
    let compute = |q: &str| match dpcalc::query::decode(q)
        .report()
        .value(Output::StepComputeSeconds)
    {
        Some(Num::Float(x)) => x,
        other => panic!("{q}: {other:?}"),
    };
    let eager = compute(link);
    assert_eq!(eager, compute(&format!("{link}&torch_compile=false")));
    let compiled = compute(&format!("{link}&torch_compile=true"));
    assert!(compiled < eager * 0.95, "{compiled} vs {eager}");
    let bad = dpcalc::query::decode(&format!("{link}&torch_compile=yes please")).report();
    assert!(bad
        .diags_for(Field::TorchCompile)
        .any(|d| d.level == Level::Error));
}

/// Megatron-LM's interleaved schedule syncs each model chunk on its own
/// ([`Overlap::per_chunk`]): a chunk's gradients reduce beside the backward of the chunks after
/// it, so with a slow network less is exposed than behind the last micro batch's backward
/// alone; but the first rank's first chunk reduces after the step's last backward and gathers
/// before its first forward, so with a fast one that chunk is exposed where a single window
/// would hide everything.
#[test]
fn interleaving_syncs_each_chunk_on_its_own() {
    let plan = Setup {
        pp: 4,
        micro_batches: 8,
        seq_len: 4096,
        sharding: Partition::DistributedOptimizer,
        shard: 8,
        pipeline: Some(dpcalc::calc::plan::Pipeline {
            schedule: dpcalc::calc::plan::Schedule::Interleaved { group: 4 },
            virtual_stages: 2,
            layers: Vec::new(),
        }),
        ..Setup::default()
    };
    let overlap = Overlap {
        grad_reduce: true,
        param_gather: true,
        tp: false,
        per_chunk: false,
    };
    let chunked = Overlap {
        per_chunk: true,
        ..overlap
    };
    let at = |bw: f64, o: Overlap| {
        let hw = Hardware {
            intra_bytes_per_s: bw,
            ..free_network()
        };
        run(&plan, 8, &hw, &place(8, 1, 1, 8), o)
    };
    // fast: one window hides it all, the first chunk of the first rank stays exposed
    let (one, each, none) = (
        at(400e9, overlap),
        at(400e9, chunked),
        at(400e9, Overlap::default()),
    );
    assert_eq!(one.dp, 0.0, "{one:?}");
    assert!(each.dp > 0.0 && each.dp < none.dp, "{each:?} vs {none:?}");
    // hidden communication is charged its SM share either way: less hidden, less charged
    assert!(each.compute < one.compute, "{each:?} vs {one:?}");
    // slow: the chunks reduce beside the backward of those after them
    let (one, each) = (at(1e9, overlap), at(1e9, chunked));
    assert!(each.dp < one.dp, "{each:?} vs {one:?}");
    // not overlapped: the same either way
    let off = Overlap {
        per_chunk: true,
        ..Overlap::default()
    };
    let (a, b) = (at(5e9, Overlap::default()), at(5e9, off));
    assert!((a.dp - b.dp).abs() < 1e-9 * a.dp, "{a:?} vs {b:?}");
}
