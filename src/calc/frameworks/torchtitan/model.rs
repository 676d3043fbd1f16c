//! torchtitan's part of the model stage: its settings as typed (`activation_checkpoint.mode`,
//! FSDP2 over the data-parallel shard ranks) and its memory conventions, published in the plan.

use crate::calc::plan::{Pipeline, Schedule};
use crate::calc::spec::AsBuilt;
use crate::calc::{Field, RawInputs};

/// torchtitan's memory conventions: FSDP2's mixed precision (`mixed_precision_param = bfloat16`,
/// `mixed_precision_reduce = float32`) keeps the sharded parameters and their gradients in fp32
/// and gathers 16-bit copies for compute, so the fp32 parameters are the optimizer's master
/// weights. The loss (`loss_fn` in train.py at 9dec370; `cross_entropy_loss` in
/// torchtitan/components/loss.py at HEAD) is `cross_entropy(pred.flatten(0, 1).float(), labels)`:
/// `log_softmax` keeps its fp32 output (4 bytes per logit); the training step deletes the 16-bit
/// logits (`del pred`) before `loss.backward()`, whose first two nodes allocate fp32 tensors of
/// the logits' shape beside that output: `nll_loss`'s input gradient and `log_softmax`'s (8 bytes
/// per logit; the forward's fp32 copy, freed by then, is the smaller 6 of the 16-bit logits and
/// the copy). The 16-bit logits' freed block is smaller than those fp32 requests, so the allocator
/// keeps it reserved (2 bytes per logit). FSDP2 gathers on its own stream. Tensor parallelism is
/// DTensor's (`apply_tp`, `parallelize_llama.py` at 9dec370) with loss parallelism on
/// (`loss_parallel_enabled`: TP > 1 and no `disable_loss_parallel`, whose default is false):
/// the loss's backward (`_nll_loss_and_log_softmax_backward`,
/// torch/distributed/tensor/parallel/loss.py) allocates `zeros_like(x)`, `torch.exp(x)` and
/// their sum, then the product with the output gradient once `exp` is freed: 12 bytes per local
/// logit beside the saved fp32 `log_softmax` output.
///
/// Under pipeline parallelism FSDP2 keeps each stage's parameters gathered and its gradients
/// unsharded (`fsdp_pipeline_keeps`). torchtitan shards every block and the root with
/// `reshard_after_forward=False` when PP is on (`apply_fsdp`,
/// torchtitan/parallelisms/parallelize_llama.py:326-339 at 9dec370; 0.3.0's
/// `get_fsdp_reshard_after_forward_policy`, torchtitan/distributed/fsdp.py:54-75: "default" is
/// `not pp_enabled`, and `[norm, lm_head]` reshard only under "always"), so the 16-bit
/// parameters gathered at a stage's first forward stay until its gradients are reduced.
/// torch.distributed.pipelining runs each backward of an FSDP stage with
/// `set_reshard_after_backward(False)` and `set_requires_gradient_sync(False)`
/// (`_PipelineStageBase.backward_maybe_with_nosync`, torch/distributed/pipelining/stage.py,
/// torch 2.15) and reduces once after the last (`perform_reduce_grad`, the schedules'
/// `REDUCE_GRAD`), so FSDP2 keeps each parameter's unsharded gradient, cast to its reduce
/// dtype after the first backward and accumulated there (`_set_unsharded_grad_dtypes`,
/// torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, torch 2.15;
/// `FSDPParam.to_accumulated_grad_if_needed` in the torch of 9dec370's time,
/// pytorch/pytorch#125191): fp32, torchtitan's `mixed_precision_reduce = float32`.
///
/// Without PP FSDP2 keeps the final norm and the output layer gathered from their forward to
/// their backward (`fsdp_output_kept`): 0.3.0's `apply_fsdp_to_decoder` shards
/// `[norm, lm_head]` (with a tied embedding `[tok_embeddings, norm, lm_head]`) with
/// `reshard_after_forward` only under the "always" policy (distributed/fsdp.py:180-207), so
/// their 16-bit parameters stay beside the loss's logits. (At 9dec370 the root unit, the
/// embedding, the final norm and the output layer, stays gathered, torch's root FSDP state not
/// resharding after forward, and so does the last block, `reshard_after_forward = int(layer_id)
/// < len(model.layers) - 1`, parallelize_llama.py:330-333: its 2024-12 runs keep the embedding
/// and a block more than 0.3.0's rule counts.)
const CONVENTIONS: crate::calc::plan::Conventions = crate::calc::plan::Conventions {
    fp32_grads: true,
    fp32_params: true,
    dropout: false,
    logit_saved_bytes: 4,
    logit_transient_bytes: 8,
    logit_reserved_bytes: 2,
    fsdp_gather_stream: true,
    fsdp_pipeline_keeps: true,
    fsdp_output_kept: true,
    dtensor_tp: true,
    loss_parallel_transient_bytes: 12,
    moe_allgather: false,
};

/// The model stage's settings (`Spec::fit.settings`): `activation_checkpoint.mode`; FSDP2 over the data-parallel shard ranks.
pub fn settings(raw: &RawInputs, report: &mut crate::calc::Report) {
    use crate::calc::parse::settings;
    use crate::calc::plan::{Settings, Sharding};
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    use crate::calc::plan::{FsdpRows, Recompute};
    use crate::calc::{Diag, Level, Param};
    let mut rd = crate::calc::parse::Reader {
        raw,
        diags: &mut diags,
    };
    let recompute = match rd.text(Field::ActivationCheckpointMode) {
        Param::Given(m) if m == "none" => Recompute::None,
        Param::Given(m) if m == "full" => Recompute::Full,
        Param::Given(m) if m == "selective" || m == "memory_budget" => Recompute::Selective,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::ActivationCheckpointMode,
                Level::Error,
                "activation_checkpoint.mode is none, selective, full or memory_budget",
            ));
            Recompute::Selective
        }
        _ => Recompute::Selective,
    };
    // `[compile] enable` (torchtitan 0.2.2 `job_config.py` `Compile.enable`, default false;
    // `components` default ["model", "loss"]): Inductor fuses the element-wise kernels
    let fusion = settings::compiled(Field::CompileEnable, raw, rd.diags);
    let fp8 = converters(&mut rd);
    let schedule = pp_schedule(&mut rd);
    // `parallelism.enable_sequence_parallel` (0.2.2 `Parallelism`, default true; always on in
    // `apply_tp` at 9dec370): the norms run `SequenceParallel()` and each block's input, the
    // residual adds and the final norm's input stay `Shard(1)` over the TP ranks (an invalid
    // value is said by the rules, which read the same field)
    let sp = Field::EnableSequenceParallel;
    let sequence_parallel = !matches!(
        crate::calc::parse::flag(sp, raw.get(sp), &mut Vec::new()),
        Param::Given(false)
    );
    let s = Settings {
        gpu,
        recompute,
        fusion,
        fp8,
        // FSDP2 over the data-parallel shard ranks as the rules resolved them
        sharding: Sharding::Fsdp {
            name: "FSDP2",
            dp_shard: report.count(crate::calc::Output::DataParallelShardDegree),
            reshard_after_forward: true,
            offload: false,
            rows: FsdpRows::KeepReplicas,
        },
        memory: CONVENTIONS,
        sequence_parallel,
        // 0.3.0's `selective` is per-op (`selective_ac_option = "op"`): `_save_list` keeps the
        // attention and every other `mm` (models/llama3/infra/parallelize.py), so half the
        // matrix products' forward runs again
        selective_half_matmuls: true,
        ..Settings::default()
    };
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
    if let Some(schedule) = schedule {
        publish_pipeline(report, schedule);
    }
}

/// `parallelism.pipeline_parallel_schedule` as torch's `get_schedule_class` reads it (0.3.0
/// `config/configs.py`, default "1F1B"; the name compared lowercased,
/// torch/distributed/pipelining/schedules.py): the schedule and its stages per rank, 1 for a
/// `PipelineScheduleSingle`, else 2 (`_get_pipeline_metadata` in
/// torchtitan/distributed/pipeline_parallel.py without `pipeline_parallel_layers_per_stage`;
/// the same two at the 2024-12 benchmarks' 9dec370, `generate_split_points`). `None` when
/// refused. torchtitan's own split (`_generate_llm_fqn_per_model_part`: the embedding and the
/// output layer each weigh one layer) is not modelled: the layers split evenly.
fn pp_schedule(rd: &mut crate::calc::parse::Reader) -> Option<(Schedule, u64)> {
    use crate::calc::{Diag, Level, Param};
    let name = match rd.text(Field::PipelineParallelSchedule) {
        Param::Given(t) => t,
        Param::Absent => return Some((Schedule::OneFOneB, 1)),
        Param::Invalid => return None,
    };
    let stages = match name.to_ascii_lowercase().as_str() {
        "1f1b" => (Schedule::OneFOneB, 1),
        "gpipe" => (Schedule::AllForwardAllBackward, 1),
        // torch's ScheduleInterleaved1F1B: rounds of pp micro batches through each chunk
        "interleaved1f1b" => (Schedule::Interleaved { group: 0 }, 2),
        "loopedbfs" => (Schedule::AllForwardAllBackward, 2),
        "interleavedzerobubble" | "zbvzerobubble" | "dualpipev" => (Schedule::ZeroBubble, 2),
        _ => {
            rd.diags.push(Diag::new(
                Field::PipelineParallelSchedule,
                Level::Error,
                format!(
                    "ValueError: Unknown pipeline schedule: {} (torch's get_schedule_class: 1F1B, GPipe, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV)",
                    crate::calc::parse::shorten(&name)
                ),
            ));
            return None;
        }
    };
    if stages.0 == Schedule::ZeroBubble {
        rd.diags.push(Diag::new(
            Field::PipelineParallelSchedule,
            Level::Warning,
            format!(
                "{name}: the step time counts no bubble (the schedule's design, not checked against torch's implementation), and the memory the micro batches of interleaved 1F1B{}",
                if schedule_is_v(&name) {
                    "; the V placement (the output layer on the first rank) is not modelled"
                } else {
                    ""
                }
            ),
        ));
    }
    Some(stages)
}

/// ZB-V and DualPipe-V place a rank's two stages as a V (stages r and 2p − 1 − r).
fn schedule_is_v(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "zbvzerobubble" | "dualpipev"
    )
}

/// The schedule in the plan, for a pipeline of more than one rank (with one, torchtitan builds
/// no schedule).
fn publish_pipeline(report: &mut crate::calc::Report, (schedule, stages): (Schedule, u64)) {
    let Some(grid) = report.grid else {
        return;
    };
    if grid.pp < 2 {
        return;
    }
    report.plan.pipeline = Some(Pipeline {
        schedule: match schedule {
            Schedule::Interleaved { .. } => Schedule::Interleaved { group: grid.pp },
            s => s,
        },
        virtual_stages: stages,
        layers: Vec::new(),
    });
}

/// `model.converters` (0.2.2 `Model.converters`): the float8 converter (registered as
/// "quantize.linear.float8"; "float8" before) swaps the linear layers for torchao's
/// `Float8Linear`, dynamic tensorwise scaling unless a recipe says otherwise; another converter
/// is said not to be modelled.
fn converters(rd: &mut crate::calc::parse::Reader) -> Option<crate::calc::plan::Fp8> {
    use crate::calc::{Diag, Level, Param};
    let float8 = |n: &str| matches!(n, "float8" | "quantize.linear.float8");
    let Param::Given(c) = rd.text(Field::ModelConverters) else {
        return None;
    };
    let names: Vec<&str> = c
        .trim_matches(|ch| ch == '[' || ch == ']')
        .split(',')
        .map(|n| n.trim().trim_matches('"'))
        .filter(|n| !n.is_empty())
        .collect();
    if let Some(n) = names.iter().find(|n| !float8(n)) {
        rd.diags.push(Diag::new(
            Field::ModelConverters,
            Level::Warning,
            format!("the converter {n} is not modelled: the step time leaves it out"),
        ));
    }
    names
        .iter()
        .any(|n| float8(n))
        .then_some(crate::calc::plan::Fp8::Tensorwise)
}
