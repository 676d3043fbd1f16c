//! The estimate's input, built from the resolved plan: [`setup`] turns the settings the rules
//! published, a grid and a micro batch into what `estimate/` computes memory and time of. The
//! report's own estimate (`memory.rs`, `time.rs`) and every explorer and planner row
//! (`layouts.rs`) build it here, the same way.

use std::borrow::Cow;

use crate::calc::estimate;
use crate::calc::estimate::device::Groups;
use crate::calc::plan::{Pipeline, Settings, Sharding};
use crate::calc::{Grid, Output, Report};

/// LoRA's trainable parameters as the report counted them: `Some(None)` for a full fine-tune,
/// `None` when LoRA is set but its count is not known (no estimate then).
pub(super) fn trainable_of(report: &Report) -> Option<Option<u128>> {
    match &report.plan.settings.lora {
        None => Some(None),
        Some(_) => report
            .count(Output::TrainableParameters)
            .map(|n| Some(u128::from(n))),
    }
}

/// The data-parallel shard size of the current inputs (`None`: all of dp).
pub(super) fn current_shard(s: &Settings) -> Option<u64> {
    match s.sharding {
        Sharding::Fsdp { dp_shard, .. } => dp_shard,
        _ => None,
    }
}

/// The process groups of grid `g` whose model states are sharded over `shard` GPUs (the data
/// parallel communicator is the sharding group's when it is larger: dp × cp for Megatron's
/// distributed optimizer and FSDP over dp_shard × cp).
pub(super) fn groups(g: Grid, shard: u64) -> Groups {
    Groups {
        dp: g.dp.max(shard),
        tp: g.tp,
        cp: g.cp,
        sp: g.sp,
        ep: g.ep,
        pp: g.pp,
    }
}

/// What the estimate reads beside the settings: the pipeline the rules published, the micro
/// batches per step and whether the MLP is gated.
pub(super) struct Shape<'a> {
    pub pipeline: Option<&'a Pipeline>,
    pub micro_batches: u64,
    pub gated: bool,
}

/// The one place the estimate's input ([`estimate::Setup`]) is built: the settings `s` on grid `g` with `micro`
/// samples per GPU per micro step and the data-parallel shard size `dp_shard` (`None`: all of
/// dp). Returns the plan and how the model states are sharded, in words.
pub(super) fn setup(
    s: &Settings,
    shape: &Shape,
    trainable: Option<u128>,
    seq: u64,
    g: Grid,
    micro: u64,
    dp_shard: Option<u64>,
) -> (estimate::Setup, Cow<'static, str>) {
    let Sharded {
        sharding,
        shard,
        offload_optimizer,
        offload_param,
        how,
    } = sharded(s, g, dp_shard);
    let plan = estimate::Setup {
        tp: g.tp,
        pp: g.pp,
        cp: g.cp,
        sp: g.sp,
        ep: g.ep,
        etp: s.expert_tp.unwrap_or(0),
        shard: shard.max(1),
        sharding,
        offload_optimizer,
        offload_param,
        micro_batch: micro,
        seq_len: seq,
        recompute: s.recompute,
        flash_attention: s.flash_attention,
        fusion: s.fusion,
        fp8: s.fp8,
        sequence_parallel: s.sequence_parallel && g.tp > 1,
        weight_bits: if s.lora.as_ref().is_some_and(|l| l.qlora) {
            4
        } else {
            16
        },
        trainable,
        optimizer_bytes_per_param: s.optimizer_bytes_per_param,
        optimizer_8bit: s.optimizer_8bit,
        // the framework's pipeline holds for its own PP size; another layout's splits evenly
        pipeline: shape
            .pipeline
            .filter(|p| {
                p.layers.len() as u64 == g.pp.saturating_mul(p.virtual_stages.max(1))
                    || p.layers.is_empty()
            })
            .cloned(),
        micro_batches: shape.micro_batches,
        recompute_layers: s.recompute_layers,
        gated_mlp: shape.gated,
        selective_half_matmuls: s.selective_half_matmuls,
        deferred_output_wgrad: s.deferred_output_wgrad,
        global_buffer: s.global_buffer,
        ..estimate::Setup::default()
    }
    .with(s.memory);
    (plan, how)
}

/// How the framework's sharding partitions the model states on grid `g`: the estimate's
/// partition, over how many GPUs, what it offloads, and in words.
struct Sharded {
    sharding: estimate::Partition,
    shard: u64,
    offload_optimizer: bool,
    offload_param: bool,
    how: Cow<'static, str>,
}

fn sharded(s: &Settings, g: Grid, dp_shard: Option<u64>) -> Sharded {
    let (sharding, shard, offload_optimizer, offload_param, how) = match s.sharding {
        Sharding::Zero(z) => (
            [
                estimate::Partition::Replicated,
                estimate::Partition::Zero1,
                estimate::Partition::Zero2,
                estimate::Partition::Zero3,
            ][z.stage.min(3) as usize],
            g.dp,
            z.offload_optimizer,
            z.offload_param,
            Cow::Borrowed("ZeRO over the data-parallel ranks"),
        ),
        // accelerate 1.15.0's mesh as axolotl 0.21.0 builds it (run), and torchtitan's FSDP2:
        // FSDP shards over the flattened `dp_shard_cp` dimension, dp_shard × cp (replicated
        // over dp_replicate)
        Sharding::Fsdp {
            name,
            reshard_after_forward,
            offload,
            ..
        } => (
            if reshard_after_forward {
                estimate::Partition::Zero3
            } else {
                estimate::Partition::Zero2
            },
            dp_shard.unwrap_or(g.dp).saturating_mul(g.cp),
            offload,
            offload,
            if offload {
                Cow::Owned(format!("{name} over dp_shard × cp, offloaded to the CPU"))
            } else {
                Cow::Owned(format!("{name} over dp_shard × cp"))
            },
        ),
        Sharding::DistributedOptimizer { instances: 1 } => (
            estimate::Partition::DistributedOptimizer,
            g.dp.saturating_mul(g.cp),
            false,
            false,
            Cow::Borrowed("distributed optimizer over dp × cp"),
        ),
        // (dp × cp not a multiple of the instances is refused: the model stage's `builds`)
        Sharding::DistributedOptimizer { instances } => (
            estimate::Partition::DistributedOptimizer,
            g.dp.saturating_mul(g.cp) / instances.max(1),
            false,
            false,
            Cow::Borrowed("distributed optimizer over dp × cp ÷ its instances"),
        ),
        Sharding::Replicated { words } => (
            estimate::Partition::Replicated,
            g.dp,
            false,
            false,
            Cow::Borrowed(words),
        ),
    };
    Sharded {
        sharding,
        shard,
        offload_optimizer,
        offload_param,
        how,
    }
}
