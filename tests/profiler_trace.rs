//! A PyTorch profiler trace of one step (`src/calc/import/trace.rs`): its kernel time bucketed
//! on a real trace (`tests/fixtures/logs/`, source in its README), the measured step and the
//! compute factor it sets against the link's estimate, and a malformed or huge paste refused
//! with a message.

use dpcalc::calc::import::{self, bucket, Bucket, Scope, MAX_TRACE};
use dpcalc::calc::{Field, Framework, Output, RawInputs};
use dpcalc::query;

const FIXTURE: &str = "tests/fixtures/logs/hta-sampled-rank0-step551.trace.json";

/// A torchtitan link the step time estimates (Llama 3.1 8B on 8 H100).
const LINK: &str = "?framework=torchtitan&version=0.3.0&nodes=1&gpus_per_node=8&local_batch_size=1&global_batch_size=8&seq_len=4096&model=llama3/8B&gpu=h100-sxm&steps=100";

fn paste(q: &str, text: &str) -> (import::Imported, RawInputs) {
    let l = query::decode(q);
    let mut got = import::read(l.framework, None, text);
    got.settle(&l.inputs);
    let merged = got.merged_into(&l.inputs);
    (got, merged)
}

/// The real trace's step: its kernels bucketed exactly (sums of the `dur` of each bucket's
/// kernels, µs, as a Python pass over the excerpt gives them: 79,053 matmul, 195,327 NCCL,
/// 27,199 other, no attention; 321,519 µs of its 600,030 µs span idle), its `ProfilerStep#551`
/// the wall time, applied as the link's `seconds_per_step` and shown in the summary.
#[test]
fn the_real_trace_is_bucketed_exactly() {
    let text = crate::common::files::read(FIXTURE);
    let (got, merged) = paste(LINK, &text);
    assert_eq!(got.scope, Scope::Measured);
    let t = got.trace.expect("a trace");
    assert_eq!(t.kernels, 577);
    assert_eq!(t.steps, 1);
    assert_eq!(t.matmul, 79_053.0 / 1e6);
    assert_eq!(t.attention, 0.0);
    assert_eq!(t.communication, 195_327.0 / 1e6);
    assert_eq!(t.other, 27_199.0 / 1e6);
    assert_eq!(t.idle, 321_519.0 / 1e6);
    assert_eq!(t.wall, 607_312.0 / 1e6);
    assert_eq!(merged.get(Field::SecondsPerStep), "0.607312");
    let summary = got.summary();
    assert!(
        summary.contains("matrix products 79.1 ms (13 %)")
            && summary.contains("communication 195.3 ms (32 %)")
            && summary.contains("GPU idle 321.5 ms (53 %)"),
        "{summary}"
    );
    // a DLRM step's compute is far from Llama 8B's estimate: no factor, said
    assert!(merged.get(Field::CalibrationComputeFactor).is_empty());
    assert!(
        got.notes.iter().any(|n| n.contains("not this link's step")),
        "{:?}",
        got.notes
    );
}

/// The buckets by kernel name, as cuBLAS, CUTLASS, FlashAttention, cuDNN and NCCL name them.
#[test]
fn kernels_are_bucketed_by_name() {
    for (name, b) in [
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
            Bucket::Matmul,
        ),
        (
            "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn",
            Bucket::Matmul,
        ),
        ("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN", Bucket::Matmul),
        (
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_tn_align4>",
            Bucket::Matmul,
        ),
        (
            "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>",
            Bucket::Attention,
        ),
        (
            "fmha_cutlassF_bf16_aligned_64x128_rf_sm80",
            Bucket::Attention,
        ),
        (
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop",
            Bucket::Attention,
        ),
        (
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
            Bucket::Communication,
        ),
        (
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t",
            Bucket::Communication,
        ),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>",
            Bucket::Other,
        ),
    ] {
        assert_eq!(bucket(name), b, "{name}");
    }
}

/// A trace whose compute kernels take 1.1 × the link's estimated compute sets
/// `calibration_compute_factor=1.1` beside its measured step; two `ProfilerStep`s are averaged.
#[test]
fn a_trace_sets_the_compute_factor_against_the_estimate() {
    let l = query::decode(LINK);
    let base = l.report();
    let compute = base.estimated.step.unwrap().compute;
    // two steps, each: a GEMM of 60 %, flash attention of 30 %, an element-wise 10 % of 1.1 ×
    // the estimate with 0.5 ms between them, an all-reduce beside them; the second step right
    // after the first
    let us = compute * 1.1 * 1e6;
    let mut events = Vec::new();
    for (i, start) in [0.0, us + 1000.0].iter().enumerate() {
        let wall = us + 1000.0;
        events.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{i}","pid":1,"tid":1,"ts":{start},"dur":{wall},"args":{{"External id":1}}}}"#));
        let mut t = *start;
        for (name, share) in [
            ("sm90_xmma_gemm_bf16", 0.6),
            ("flash_fwd_kernel", 0.3),
            ("elementwise_kernel", 0.1),
        ] {
            events.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{t},"dur":{}}}"#,
                us * share
            ));
            t += us * share + 500.0;
        }
        events.push(format!(r#"{{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":9,"ts":{start},"dur":2000}}"#));
    }
    let text = format!(
        r#"{{"schemaVersion":1,"traceEvents":[{}]}}"#,
        events.join(",\n")
    );
    let (got, merged) = paste(LINK, &text);
    let t = got.trace.expect("a trace");
    assert_eq!(t.steps, 2);
    assert!((t.compute() / (compute * 1.1) - 1.0).abs() < 1e-9);
    // the two gaps of 0.5 ms in each step, none between them
    assert!((t.idle - 1.0e-3).abs() < 1e-9, "{}", t.idle);
    assert!((t.wall - (compute * 1.1 + 1.0e-3)).abs() < 1e-9);
    assert_eq!(merged.get(Field::CalibrationComputeFactor), "1.1");
    let rep = query::Link {
        inputs: merged,
        ..l.clone()
    }
    .report();
    let k = rep
        .value(Output::CalibrationComputeFactor)
        .map(|v| v.to_f64());
    assert_eq!(k, Some(1.1));
}

/// Malformed, huge, empty or kernel-less traces: a message, nothing applied, never a panic.
#[test]
fn a_malformed_or_huge_trace_is_a_message() {
    let cases: Vec<(String, &str)> = vec![
        (r#"{"traceEvents": [{"ph":"X","cat":"kernel","name":"gemm","pid":0,"ts":1,"dur":"#.into(), "not well-formed JSON"),
        (r#"{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"ts":1,"dur":2}]}"#.into(), "no GPU kernel"),
        (r#"{"traceEvents": 5}"#.into(), "not well-formed JSON"),
        (r#"{"traceEvents": [1, "x", null]}"#.into(), "not well-formed JSON"),
        (r#"{"traceEvents": [{"ph":"X","cat":"kernel","name":{"a":[[[[]]]]},"pid":"x","ts":1e308,"dur":1e308}]}"#.into(), "no duration"),
        (format!(r#"{{"traceEvents": [{}]}}"#, " ".repeat(MAX_TRACE)), "at most 16 MB"),
    ];
    for (text, says) in cases {
        let got = import::read(Framework::Torchtitan, None, &text);
        assert!(!got.applicable(), "{says}");
        assert!(
            got.errors.iter().any(|e| e.contains(says)),
            "{says}: {:?}",
            got.errors
        );
    }
}
