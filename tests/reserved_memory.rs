//! What PyTorch's caching allocator reserves (`estimate/reserved.rs`): its rules from
//! `c10/cuda/CUDACachingAllocator.cpp` on hand-picked sizes, the stage figures against the
//! allocated ones, and `memory_on_device_bytes` = reserved + the CUDA context + NCCL's buffers.

use crate::common::report::{accepted as report, bytes, fsdp_output_kept, fsdp_pipeline_kept};
use dpcalc::calc::estimate::device::{COMMUNICATOR_BYTES, CUDA_CONTEXT_BYTES};
use dpcalc::calc::estimate::reserved::{
    reserve, reserved_stages, stage_tensors, LARGE_BUFFER, MIN_LARGE_ALLOC, ROUND_LARGE,
    SMALL_BUFFER,
};
use dpcalc::calc::estimate::{stages, Params, Partition, Setup};
use dpcalc::calc::model::preset;
use dpcalc::calc::Output;

const MIB: u128 = 1 << 20;

#[test]
fn the_allocators_blocks_and_segments() {
    // a 1-byte tensor takes a 512-byte block of a 2 MiB small segment
    assert_eq!(reserve(&[(1, 1)], false), Some(SMALL_BUFFER));
    // four 512 KiB blocks fill one small segment, a fifth opens another
    assert_eq!(reserve(&[(512 << 10, 4)], false), Some(2 * MIB));
    assert_eq!(reserve(&[(512 << 10, 5)], false), Some(4 * MIB));
    // 1 MiB is still small; one byte more is a 20 MiB large-pool segment
    assert_eq!(reserve(&[(MIB, 1)], false), Some(2 * MIB));
    assert_eq!(reserve(&[(MIB + 1, 1)], false), Some(LARGE_BUFFER));
    // seven 3 MiB blocks (21 MiB) take two 20 MiB segments
    assert_eq!(reserve(&[(3 * MIB, 7)], false), Some(2 * LARGE_BUFFER));
    // from 10 MiB a segment of its own, rounded up to 2 MiB
    assert_eq!(reserve(&[(MIN_LARGE_ALLOC, 1)], false), Some(10 * MIB));
    assert_eq!(reserve(&[(11 * MIB, 3)], false), Some(3 * 12 * MIB));
    assert_eq!(ROUND_LARGE, 2 * MIB);
    // expandable segments: one growing segment per pool, in 20 MiB pages for the large pool
    assert_eq!(reserve(&[(11 * MIB, 3)], true), Some(2 * LARGE_BUFFER));
    assert_eq!(
        reserve(&[(3 * MIB, 7), (1, 1)], true),
        Some(2 * LARGE_BUFFER + SMALL_BUFFER)
    );
    // nothing, nothing reserved; an overflow is no answer, never a panic
    assert_eq!(reserve(&[], false), Some(0));
    assert_eq!(reserve(&[(u128::MAX / 2, 3)], false), None);
}

/// The tensors of a stage add up to its allocated bytes: the reserve only rounds them.
#[test]
fn stage_tensors_add_up_to_the_allocated_estimate() {
    for (id, sharding, tp, pp, keeps) in [
        (
            "meta-llama/Llama-3.1-8B",
            Partition::Replicated,
            1,
            1,
            false,
        ),
        ("meta-llama/Llama-3.1-8B", Partition::Zero2, 2, 1, false),
        (
            "meta-llama/Llama-3.1-8B",
            Partition::DistributedOptimizer,
            2,
            4,
            false,
        ),
        ("Qwen/Qwen3-30B-A3B", Partition::Zero3, 1, 2, false),
        // FSDP2 under PP: its gathered parameters and unsharded gradients a tensor each
        ("meta-llama/Llama-3.1-8B", Partition::Zero3, 2, 2, true),
    ] {
        let m = preset(id).unwrap();
        let plan = Setup {
            tp,
            pp,
            shard: 4,
            sharding,
            micro_batches: 8,
            seq_len: 4096,
            memory: dpcalc::calc::plan::Conventions {
                fp32_grads: keeps,
                fp32_params: keeps,
                fsdp_pipeline_keeps: keeps,
                ..dpcalc::calc::plan::Conventions::DEFAULT
            },
            ..Setup::default()
        };
        let params = Params::of(&m).unwrap();
        let allocated = stages(&m, &params, &plan).unwrap();
        let reserved = reserved_stages(&m, &params, &plan, false).unwrap();
        assert_eq!(reserved.len(), allocated.len());
        for (r, (e, (res, same))) in allocated.iter().zip(&reserved).enumerate() {
            assert_eq!(e, same);
            let t = stage_tensors(&m, &params, &plan, r as u64, e).unwrap();
            let sum: u128 = t.iter().map(|&(b, n)| b * n).sum();
            let total = e.total().unwrap();
            // per-tensor shares round up: at most one byte per tensor over
            let tensors: u128 = t.iter().map(|&(_, n)| n).sum();
            assert!(
                sum >= total && sum <= total + tensors,
                "{id} stage {r}: {sum} vs {total}"
            );
            // the reserve is at least the tensors, and only rounding more: at most a 2 MiB
            // segment per tensor class and a 20 MiB segment per pool
            assert!(*res >= total, "{id} stage {r}");
            assert!(
                *res <= sum + tensors * 2 * MIB + LARGE_BUFFER + SMALL_BUFFER,
                "{id} stage {r}"
            );
        }
    }
}

#[test]
fn on_the_device_is_reserved_plus_context_plus_communicators() {
    // 8 GPUs: TP 2 × PP 2 × DP 2, three process groups of more than one GPU
    let q = "?framework=megatron&version=0.19.2&world_size=8&model=meta-llama/Llama-3.1-8B&tensor_model_parallel_size=2&pipeline_model_parallel_size=2&seq_length=4096&micro_batch_size=1&global_batch_size=64&gpu=h100-sxm&use_distributed_optimizer=true";
    let r = report(q);
    let allocated = bytes(&r, Output::MemoryPerGpuBytes);
    let reserved = bytes(&r, Output::MemoryReservedBytes);
    let device = bytes(&r, Output::MemoryOnDeviceBytes);
    assert!(reserved >= allocated, "{reserved} < {allocated}");
    assert_eq!(
        device,
        reserved + CUDA_CONTEXT_BYTES + 3 * COMMUNICATOR_BYTES
    );
    // each stage reserves at least what it allocates; the largest is the output
    assert_eq!(r.memory_reserved_by_stage.len(), 2);
    for (res, all) in r.memory_reserved_by_stage.iter().zip(&r.memory_by_stage) {
        assert!(res >= all, "{res} < {all}");
    }
    assert_eq!(r.memory_reserved_by_stage.iter().max(), Some(&reserved));
    assert_eq!(
        r.memory_reserved_by_stage_value()
            .unwrap()
            .split(',')
            .count(),
        2
    );
    // labelled as an estimate in its worked step
    let step = r
        .steps
        .iter()
        .find(|s| s.output == Output::MemoryReservedBytes)
        .unwrap();
    assert!(
        step.rule.contains("An estimate, not a measurement"),
        "{}",
        step.rule
    );
    assert!(step.rule.contains("CUDACachingAllocator"), "{}", step.rule);
    // and "fits" is judged on it
    assert_eq!(r.estimated.memory_on_device, Some(device));
}

/// Sharded states are the framework's flat buffers (one allocation each), unsharded ones a
/// tensor per parameter tensor (the optimizer's 3 per parameter with fp32 master weights).
#[test]
fn sharded_states_are_flat_buffers() {
    let m = preset("meta-llama/Llama-3.2-1B").unwrap();
    let params = Params::of(&m).unwrap();
    let count = |sharding| {
        let plan = Setup {
            shard: 2,
            sharding,
            seq_len: 512,
            ..Setup::default()
        };
        let e = stages(&m, &params, &plan).unwrap().remove(0);
        let t = stage_tensors(&m, &params, &plan, 0, &e).unwrap();
        t.iter()
            .filter(|&&(b, _)| b > 0)
            .map(|&(_, n)| n)
            .sum::<u128>()
    };
    let (replicated, zero1, zero2, zero3) = (
        count(Partition::Replicated),
        count(Partition::Zero1),
        count(Partition::Zero2),
        count(Partition::Zero3),
    );
    // the weights' tensors of 16 layers (2 norms, 3 MLP, 4 attention), the embedding, the final
    // norm: 146; ZeRO-1 folds the optimizer's 3 × 146 into one buffer, ZeRO-2 the gradients'
    // 146 too, ZeRO-3 the weights' as well
    let per_param = 16 * 9 + 2;
    assert_eq!(replicated - zero1, 3 * per_param - 1);
    assert_eq!(zero1 - zero2, per_param - 1);
    assert_eq!(zero2 - zero3, per_param - 1);
}

/// The memory bar (the page's and the card's): the four parts of the allocated tensors, the
/// allocator's rounding, then the CUDA context and NCCL buffers, adding up to the device figure
/// (the page test `the_model_panel_answers_will_it_fit` counts the same six parts).
#[test]
fn the_memory_bar_shows_the_reserve_and_the_runtime() {
    let q = "?version=0.21.0&base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&mfu=0.4&zero_optimization.stage=3&micro_batch_size=1&num_samples=1000&sequence_len=4096";
    let r = report(q);
    let bar = dpcalc::calc::view::memory_bar(&r).unwrap();
    let labels: Vec<_> = bar.parts.iter().map(|p| p.output).collect();
    assert_eq!(
        labels,
        [
            Output::WeightsBytes,
            Output::GradientsBytes,
            Output::OptimizerBytes,
            Output::ActivationBytes,
            Output::MemoryReservedBytes,
            Output::MemoryOnDeviceBytes,
        ]
    );
    let sum: u128 = bar.parts.iter().map(|p| p.bytes).sum();
    assert_eq!(sum, bytes(&r, Output::MemoryOnDeviceBytes));
    assert_eq!(
        bar.parts[4].bytes,
        bytes(&r, Output::MemoryReservedBytes) - bytes(&r, Output::MemoryPerGpuBytes)
    );
    assert_eq!(bar.fits, Some(false));
}

/// A torchtitan pipeline with FSDP2 over 2 GPUs (Llama 3.1 8B, TP 2, PP 2, 8 GPUs) counts what
/// FSDP2 keeps under PP in the largest stage's weights and gradients, named in its worked step:
/// beside the fp32 shards (4 B per parameter of the stage over TP × the sharding group), 2 B per
/// parameter over TP gathered and 4 B of unsharded fp32 gradients; the reserved figure and the
/// device's follow, and the same link without PP names instead the final norm and the output
/// layer FSDP2 keeps gathered there.
#[test]
fn a_torchtitan_pipeline_counts_what_fsdp_keeps() {
    let q = "?framework=torchtitan&version=0.3.0&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&world_size=8&local_batch_size=4&seq_len=4096&data_parallel_shard_degree=2&tensor_parallel_degree=2&pipeline_parallel_degree=2&pipeline_parallel_microbatch_size=1&disable_cuda_graphs=true";
    let r = report(q);
    let (k, g, f) = fsdp_pipeline_kept(&r).expect("the worked step");
    let flat = q
        .replace("pipeline_parallel_degree=2", "pipeline_parallel_degree=1")
        .replace("world_size=8", "world_size=4");
    let flat = report(&flat);
    assert!(fsdp_pipeline_kept(&flat).is_none());
    // without PP FSDP2 keeps the final norm (whole) and the output layer (over TP 2) gathered in
    // 16 bits, and the pipeline names that step not
    assert_eq!(
        fsdp_output_kept(&flat),
        Some((4096 * 2, 128_256 * 4096 / 2 * 2))
    );
    assert_eq!(fsdp_output_kept(&r), None);
    // Llama 3.1 8B: 16 layers a stage of 218,112,000 parameters (h 4096, 8 KV heads of 128,
    // SwiGLU 14336, two norms), the 128,256 × 4096 embedding on the first, the final norm and
    // the untied output layer on the last
    let layer: u128 = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096;
    assert_eq!(layer, 218_112_000);
    let vocab: u128 = 128_256 * 4096;
    let stage = if k == 1 {
        16 * layer + vocab
    } else {
        16 * layer + 4096 + vocab
    };
    let on_gpu = stage.div_ceil(2);
    assert_eq!((g, f), (2 * on_gpu, 4 * on_gpu));
    // the largest stage's weights and gradients: the fp32 shards over the 2 FSDP ranks and
    // what FSDP2 keeps
    let shard = (4 * on_gpu).div_ceil(2);
    assert_eq!(bytes(&r, Output::WeightsBytes), shard + g);
    assert_eq!(bytes(&r, Output::GradientsBytes), shard + f);
    let allocated = bytes(&r, Output::MemoryPerGpuBytes);
    assert_eq!(r.memory_by_stage.iter().max(), Some(&allocated));
    assert_eq!(r.memory_by_stage[k as usize - 1], allocated);
    let reserved = bytes(&r, Output::MemoryReservedBytes);
    assert!(reserved >= allocated);
    assert!(bytes(&r, Output::MemoryOnDeviceBytes) > reserved);
    assert_eq!(
        r.estimated.memory_on_device,
        Some(bytes(&r, Output::MemoryOnDeviceBytes))
    );
}
