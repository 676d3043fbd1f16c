//! Megatron-LM's part of the model stage: its memory settings as typed (the distributed
//! optimizer, sequence parallelism, recompute, `--make-vocab-size-divisible-by`, the expert TP
//! size), published in the plan, and what it does with the model it builds: the refusals of
//! `TransformerConfig` and `validate_args`, and its own `report_theoretical_memory`.

use crate::calc::model::Model;
use crate::calc::parse::{self, settings, Reader};
use crate::calc::plan::{
    Conventions, Fp8, GlobalBuffer, NamedModel, Overlap, Pipeline, PipelineSplit, Plan, Recompute,
    RecomputeLayers, Schedule, Settings, Sharding,
};
use crate::calc::spec::AsBuilt;
use crate::calc::{flops, memory, num};
use crate::calc::{Diag, Field, Grid, Level, Num, Output, Param, RawInputs, Refusal, Report};

/// Megatron's memory settings as typed.
#[derive(Clone, Copy)]
struct Typed {
    /// `--transformer-impl local`.
    local: bool,
    /// `--fp8-format`.
    fp8: Option<Fp8>,
    distributed_optimizer: bool,
    /// `--num-distributed-optimizer-instances` (default 1).
    instances: u64,
    /// `--defer-embedding-wgrad-compute` with `--wgrad-deferral-limit` as typed (default 0).
    deferred: Option<i64>,
    /// `--overlap-grad-reduce`, `--overlap-param-gather`, `--tp-comm-overlap` (all off by default).
    overlap: Overlap,
    sequence_parallel: bool,
    selective: bool,
    full: bool,
    /// `--recompute-method` is given (full recompute needs it).
    method_ok: bool,
    /// `--recompute-method` as given.
    method: Option<&'static str>,
    divisible: u64,
    expert_tp: Option<u64>,
    /// `--recompute-num-layers` (default 1).
    recompute_layers: u64,
    /// `--hidden-dropout` above 0 (default 0.1): the layers keep dropout masks.
    dropout: bool,
    /// `--num-layers-per-virtual-pipeline-stage` or `--num-virtual-stages-per-pipeline-rank`.
    virtual_stages: Option<VirtualStages>,
    /// `--microbatch-group-size-per-virtual-pipeline-stage` (`None`: the PP size).
    group: Option<u64>,
    /// Flash or fused attention (`--attention-backend auto`, `flash` or `fused` with Transformer
    /// Engine): only the softmax statistics are kept, not the scores.
    flash: bool,
    /// The uneven or accounted pipeline split.
    split: PipelineSplit,
}

/// How interleaving is asked for.
#[derive(Clone, Copy)]
enum VirtualStages {
    LayersPer(u64),
    PerRank(u64),
}

/// The model stage's settings (`Spec::fit.settings`).
pub fn settings(raw: &RawInputs, report: &mut Report) {
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let typed = read(raw, &mut diags);
    let mut s = Settings {
        gpu,
        sharding: Sharding::Replicated {
            words: "replicated optimizer",
        },
        // the FLOPs conventions read the typed value even when another setting is unreadable
        vocab_divisible: parse::count(
            Field::MakeVocabSizeDivisibleBy,
            raw.get(Field::MakeVocabSizeDivisibleBy),
            &mut Vec::new(),
        )
        .given()
        .filter(|&d| d > 0)
        .unwrap_or(128),
        readable: typed.is_some(),
        memory: CONVENTIONS,
        // Megatron-LM overlaps no communication unless told to
        overlap: Overlap::default(),
        ..Settings::default()
    };
    if let Some(t) = &typed {
        if t.distributed_optimizer {
            s.sharding = Sharding::DistributedOptimizer {
                instances: t.instances,
            };
        }
        s.sequence_parallel = t.sequence_parallel;
        s.overlap = t.overlap;
        s.recompute = if t.full {
            Recompute::Full
        } else if t.selective {
            Recompute::Selective
        } else {
            Recompute::None
        };
        s.recompute_method_missing = t.full && !t.method_ok;
        s.recompute_layers = match t.method {
            Some("block") => RecomputeLayers::Block(t.recompute_layers),
            _ => RecomputeLayers::Uniform(t.recompute_layers),
        };
        s.expert_tp = t.expert_tp;
        s.vocab_divisible = t.divisible;
        s.memory.dropout = t.dropout;
        s.flash_attention = t.flash;
        s.pipeline_split = t.split;
        // Transformer Engine's DotProductAttention runs cuDNN's fused attention on Hopper
        s.fused_attention = t.flash && !t.local;
        s.fp8 = t.fp8;
        s.deferred_output_wgrad = t.deferred.and_then(|l| u64::try_from(l).ok());
        s.global_buffer = if t.local {
            GlobalBuffer::Local
        } else {
            GlobalBuffer::TransformerEngine
        };
    }
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
    // the pipeline needs the model's layers, which a first view never resolves
    if let (Some(t), true) = (typed, crate::calc::first_view::FULL) {
        report.plan.pipeline = pipeline(report, t.virtual_stages, t.group, t.split);
        mla_refusal(raw, report);
        instances_divide(report, t.instances);
        deferral_refusals(report, t.deferred);
    }
}

/// `validate_args` refuses grouped-query attention with multi-latent attention (the same
/// assertion at 0.16.1, 0.19.2 and d98e8a6, megatron/training/arguments.py).
fn mla_refusal(raw: &RawInputs, report: &mut Report) {
    let on = |f: Field| parse::flag(f, raw.get(f), &mut Vec::new()) == Param::Given(true);
    if on(Field::MultiLatentAttention) && on(Field::GroupQueryAttention) {
        report.refuse(
            Field::GroupQueryAttention,
            Refusal::new(
                "Megatron-LM refuses this in validate_args",
                "AssertionError: Group query attention is mutually exclusive with multi latent attention.",
            )
            .fix("Leave out --group-query-attention: multi-latent attention has no key/value heads of its own."),
        );
    }
}

/// Megatron's memory conventions: fp32 `main_grad` buffers for every parameter (with or without
/// the distributed optimizer: `DistributedDataParallel`'s grad buffer, `grad_reduce_in_fp32`
/// off only changes the reduce), and its cross entropy (`vocab_parallel_cross_entropy`), which
/// upcasts the 16-bit logits to fp32 and keeps that fp32 softmax for its backward: 4 bytes per
/// logit saved, the 16-bit logits (2) alive while it runs; its MoE layers dispatch tokens by
/// all-gather (`--moe-token-dispatcher-type`'s default, the only one the estimate counts).
const CONVENTIONS: Conventions = Conventions {
    fp32_grads: true,
    dropout: true,
    logit_transient_bytes: 2,
    moe_allgather: true,
    ..Conventions::DEFAULT
};

/// The pipeline Megatron runs: 1F1B over PP ranks, interleaved over the virtual stages
/// (`virtual_pipeline_model_parallel_size = num_layers ÷ PP ÷ layers per virtual stage`, or the
/// virtual stages per rank as given), in groups of `--microbatch-group-size-per-virtual-pipeline-stage`
/// micro batches (the PP size by default), each virtual stage holding the layers
/// [`megatron_split`] gives it (empty: the even split). `None` without pipeline parallelism or a
/// model.
fn pipeline(
    report: &mut Report,
    virtual_stages: Option<VirtualStages>,
    group: Option<u64>,
    split: PipelineSplit,
) -> Option<Pipeline> {
    let pp = report.grid?.pp;
    if pp < 2 {
        return None;
    }
    let layers = report.plan.settings.model.as_ref()?.model.num_hidden_layers;
    let uneven = split.first.is_some() || split.last.is_some();
    let v = match virtual_stages {
        None => 1,
        Some(VirtualStages::PerRank(v)) => v,
        Some(VirtualStages::LayersPer(_)) if uneven => {
            report.refuse(
                Field::NumLayersPerVirtualPipelineStage,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    "AssertionError: please use --num-virtual-stages-per-pipeline-rank to specify virtual pipeline parallel degree when enable uneven pipeline parallelism",
                )
                .fix("Give --num-virtual-stages-per-pipeline-rank instead."),
            );
            return None;
        }
        Some(VirtualStages::LayersPer(n)) => {
            // the embedding and the loss count as layers when accounted for (validate_args)
            let per_rank = (layers + u64::from(split.embedding) + u64::from(split.loss)) / pp;
            if n == 0 || per_rank % n != 0 {
                report.diag(
                    Field::NumLayersPerVirtualPipelineStage,
                    Level::Warning,
                    format!("the {per_rank} layers of a pipeline stage are not a whole number of virtual stages of {n}: the memory estimate splits the layers as plain 1F1B"),
                );
                1
            } else {
                per_rank / n
            }
        }
    };
    Some(Pipeline {
        schedule: if v > 1 {
            Schedule::Interleaved {
                group: group.unwrap_or(pp),
            }
        } else {
            Schedule::OneFOneB
        },
        virtual_stages: v.max(1),
        layers: if split == PipelineSplit::default() {
            Vec::new()
        } else {
            // refused at the model's build (`builds`) when Megatron refuses it
            megatron_split(layers, pp, v.max(1), split).unwrap_or_default()
        },
    })
}

/// Python's `a % b` (the sign of b) and `a // b`, for Megatron's checks on counts that can go
/// below zero.
fn py_divmod(a: i128, b: i128) -> (i128, i128) {
    (
        a.div_euclid(b) - i128::from(b < 0 && a.rem_euclid(b) != 0),
        {
            let r = a.rem_euclid(b);
            if b < 0 && r != 0 {
                r + b
            } else {
                r
            }
        },
    )
}

/// Megatron's transformer layers per pipeline rank for an uneven split (`TransformerConfig`'s
/// "Uneven PP" checks, `get_num_layers_to_build`'s middle ranks), or its words refusing it.
fn uneven_ranks(
    layers: u64,
    pp: u64,
    vp: u64,
    s: PipelineSplit,
) -> Result<Vec<u64>, (Field, String)> {
    let (mut rest, mut left) = (i128::from(layers), i128::from(pp));
    for (n, field, which) in [
        (s.first, Field::DecoderFirstPipelineNumLayers, "first"),
        (s.last, Field::DecoderLastPipelineNumLayers, "last"),
    ] {
        let Some(n) = n else { continue };
        if n == 0 {
            return Err((
                field,
                format!("ValueError: num_layers_in_{which}_pipeline_stage must be larger than 0"),
            ));
        }
        if vp > 1 && n % vp != 0 {
            return Err((field, format!("ValueError: number of layers at {which} stage: {n}must be divisible by virtual pipelineparallel degree {vp}")));
        }
        rest -= i128::from(n);
        left -= 1;
    }
    if (rest != 0) != (left != 0) {
        return Err((Field::NumLayers, format!("ValueError: Mismatch: {rest} middle layers remaining but {left} middle PP stages available.")));
    }
    if left != 0 && py_divmod(rest, left).1 != 0 {
        return Err((Field::NumLayers, format!("ValueError: number of layers at middle stage: {rest} must be divisible bythe middle pipeline model parallel size {left}")));
    }
    let middle = if left > 0 { py_divmod(rest, left).0 } else { 0 };
    if left != 0 && vp > 1 && py_divmod(middle, i128::from(vp)).1 != 0 {
        return Err((Field::NumLayers, format!("ValueError: number of layers on each middle pipeline rank:{middle} must be divisible by virtualpipeline parallel degree {vp}")));
    }
    let middle = u64::try_from(middle).map_err(|_| {
        (
            Field::NumLayers,
            "ValueError: no layers left for the middle stages".to_string(),
        )
    })?;
    let mut ranks = vec![middle; pp as usize];
    if let Some(n) = s.first {
        ranks[0] = n;
    }
    if let Some(n) = s.last {
        ranks[pp as usize - 1] = n;
    }
    Ok(ranks)
}

/// The transformer layers of each virtual stage (entry `c·p + r`) as Megatron-LM builds them
/// with an uneven or accounted split (`get_num_layers_to_build`, megatron/core/transformer/
/// transformer_block.py at d98e8a6): the first and last ranks hold the layers given and the
/// middle ranks split the rest evenly; or the embedding and the loss count as one layer each,
/// the embedding's place taken from the first rank's first chunk and the loss's from the last
/// rank's last chunk. Each rank's layers split evenly over its `vp` chunks. `Err`: Megatron's
/// words refusing it (`TransformerConfig.__post_init__`, `validate_args`), at the key to change.
fn megatron_split(
    layers: u64,
    pp: u64,
    vp: u64,
    s: PipelineSplit,
) -> Result<Vec<u64>, (Field, String)> {
    if pp == 0 || pp > crate::calc::estimate::MAX_LAYERS || vp == 0 {
        return Err((Field::PipelineModelParallelSize, "no pipeline split".into()));
    }
    let ranks = if s.first.is_some() || s.last.is_some() {
        if s.embedding || s.loss {
            return Err((Field::AccountForEmbeddingInPipelineSplit, "ValueError: num_layers_in_first_pipeline_stage and num_layers_in_last_pipeline_stage cannot beset at the same time with account_for_embedding_in_pipeline_splitand account_for_loss_in_pipeline_split".into()));
        }
        uneven_ranks(layers, pp, vp, s)?
    } else {
        let total = layers + u64::from(s.embedding) + u64::from(s.loss);
        if total % pp != 0 {
            return Err((
                Field::NumLayers,
                if vp == 1 {
                    "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size".to_string()
                } else {
                    format!("ValueError: num_layers: {total} after enableaccount_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split must be divisibleby pipeline_model_parallel_size {pp}")
                },
            ));
        }
        let n = total / pp;
        if vp > 1 && n % vp != 0 {
            return Err((Field::NumVirtualStagesPerPipelineRank, format!("ValueError: number of layers on each pipeline rank: {n}(after enable account_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split) must be divisible byvirtual_pipeline_model_parallel_size{vp}")));
        }
        vec![n; pp as usize]
    };
    let p = pp as usize;
    let mut out: Vec<u64> = (0..p * vp as usize).map(|k| ranks[k % p] / vp).collect();
    let not_enough = |which: &str| {
        (
            Field::NumLayers,
            format!("AssertionError: Not enough layers in the {which} virtual pipeline stage"),
        )
    };
    if s.embedding {
        out[0] = out[0].checked_sub(1).ok_or_else(|| not_enough("first"))?;
    }
    if s.loss {
        let last = out.len() - 1;
        out[last] = out[last].checked_sub(1).ok_or_else(|| not_enough("last"))?;
    }
    Ok(out)
}

fn read(raw: &RawInputs, diags: &mut Vec<Diag>) -> Option<Typed> {
    let mut rd = Reader { raw, diags };
    let dist = rd.flag(Field::UseDistributedOptimizer).or(false);
    let sp = rd.flag(Field::SequenceParallel).or(false);
    let overlap = Overlap {
        grad_reduce: rd.flag(Field::OverlapGradReduce).or(false)?,
        param_gather: rd.flag(Field::OverlapParamGather).or(false)?,
        tp: rd.flag(Field::TpCommOverlap).or(false)?,
        per_chunk: true,
    };
    let granularity = rd.text(Field::RecomputeGranularity);
    let method = rd.text(Field::RecomputeMethod);
    let divisible = match rd.count(Field::MakeVocabSizeDivisibleBy) {
        Param::Given(0) => {
            rd.diags.push(Diag::new(
                Field::MakeVocabSizeDivisibleBy,
                Level::Error,
                "make_vocab_size_divisible_by must be at least 1",
            ));
            None
        }
        p => p.or(128),
    };
    let (selective, full, method_ok) = recompute_choice(&mut rd, &granularity, &method)?;
    let recompute_layers = match rd.count(Field::RecomputeNumLayers) {
        Param::Given(0) => {
            rd.diags.push(Diag::new(
                Field::RecomputeNumLayers,
                Level::Error,
                "--recompute-num-layers must be at least 1",
            ));
            None
        }
        p => p.or(1),
    };
    let dropout = rd.real(Field::HiddenDropout).or(0.1).map(|d| d > 0.0);
    let (virtual_stages, group) = interleaving(&mut rd)?;
    let split = PipelineSplit {
        first: optional(rd.count(Field::DecoderFirstPipelineNumLayers))?,
        last: optional(rd.count(Field::DecoderLastPipelineNumLayers))?,
        embedding: rd
            .flag(Field::AccountForEmbeddingInPipelineSplit)
            .or(false)?,
        loss: rd.flag(Field::AccountForLossInPipelineSplit).or(false)?,
    };
    let (local, flash) = kernels(&mut rd)?;
    let fp8 = fp8(&mut rd, local)?;
    let expert_tp = parse::count(
        Field::ExpertTensorParallelSize,
        raw.get(Field::ExpertTensorParallelSize),
        &mut Vec::new(),
    )
    .given()
    .filter(|&e| e > 0);
    Some(Typed {
        local,
        fp8,
        overlap,
        expert_tp,
        distributed_optimizer: dist?,
        instances: instances(&mut rd)?,
        deferred: deferred(&mut rd)?,
        sequence_parallel: sp?,
        selective,
        full,
        method_ok,
        method: match &method {
            Param::Given(m) if m == "block" => Some("block"),
            Param::Given(_) => Some("uniform"),
            _ => None,
        },
        divisible: divisible?,
        recompute_layers: recompute_layers?,
        dropout: dropout?,
        virtual_stages,
        group,
        flash,
        split,
    })
}

/// An optional count: `Some(None)` when absent, `None` when unreadable.
fn optional(p: Param<u64>) -> Option<Option<u64>> {
    match p {
        Param::Absent => Some(None),
        Param::Given(v) => Some(Some(v)),
        Param::Invalid => None,
    }
}

/// `--recompute-granularity` and `--recompute-method` checked: `(selective, full, a method given)`.
fn recompute_choice(
    rd: &mut Reader,
    granularity: &Param<String>,
    method: &Param<String>,
) -> Option<(bool, bool, bool)> {
    let (selective, full) = match granularity {
        Param::Given(g) if g == "selective" => (true, false),
        Param::Given(g) if g == "full" => (false, true),
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::RecomputeGranularity,
                Level::Error,
                "--recompute-granularity is full or selective",
            ));
            return None;
        }
        Param::Invalid => return None,
        Param::Absent => (false, false),
    };
    let method_ok = match method {
        Param::Given(x) if x == "uniform" || x == "block" => true,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::RecomputeMethod,
                Level::Error,
                "--recompute-method is uniform or block",
            ));
            return None;
        }
        _ => false,
    };
    Some((selective, full, method_ok))
}

/// `--num-distributed-optimizer-instances` (default 1), an input of the app alone
/// ([`crate::calc::field::APP_ONLY`]: a first view reads 1).
fn instances(rd: &mut Reader) -> Option<u64> {
    if !crate::calc::first_view::FULL {
        return Some(1);
    }
    match rd.count(Field::NumDistributedOptimizerInstances) {
        Param::Given(0) => {
            rd.diags.push(Diag::new(
                Field::NumDistributedOptimizerInstances,
                Level::Error,
                "--num-distributed-optimizer-instances must be at least 1",
            ));
            None
        }
        p => p.or(1),
    }
}

/// `--defer-embedding-wgrad-compute` (off by default) and its `--wgrad-deferral-limit`
/// (default 0: every micro batch), inputs of the app alone (a first view reads them off).
fn deferred(rd: &mut Reader) -> Option<Option<i64>> {
    if !crate::calc::first_view::FULL {
        return Some(None);
    }
    let on = rd.flag(Field::DeferEmbeddingWgradCompute).or(false)?;
    let limit = rd.int(Field::WgradDeferralLimit).or(0)?;
    Some(on.then_some(limit))
}

/// `TransformerConfig`'s refusals of deferred embedding weight gradients
/// (`ModelParallelConfig.__post_init__`, megatron/core/model_parallel_config.py at 0.16.1 and
/// 0.19.2). Not checked: it also needs `--gradient-accumulation-fusion` (on by default), which
/// is no dpcalc key.
fn deferral_refusals(report: &mut Report, deferred: Option<i64>) {
    let Some(limit) = deferred else { return };
    let (field, says) = if report.grid.is_some_and(|g| g.pp == 1) {
        (
            Field::DeferEmbeddingWgradCompute,
            "ValueError: Cannot defer embedding wgrad compute when pipeline model parallel is not used",
        )
    } else if limit < 0 {
        (
            Field::WgradDeferralLimit,
            "ValueError: Wgrad deferral limit should be greater than or equal to 0 when it is enabled!",
        )
    } else {
        return;
    };
    report.refuse(
        field,
        Refusal::new(
            "Megatron-LM refuses this when it builds the model (TransformerConfig)",
            says,
        )
        .fix("Defer the weight gradients only with pipeline parallelism, with a limit of 0 (every micro batch) or more."),
    );
}

/// The interleaved schedule: the virtual stages (by layers per stage or stages per rank) and the
/// microbatch group size.
fn interleaving(rd: &mut Reader) -> Option<(Option<VirtualStages>, Option<u64>)> {
    let virtual_stages = match (
        rd.count(Field::NumLayersPerVirtualPipelineStage),
        rd.count(Field::NumVirtualStagesPerPipelineRank),
    ) {
        (Param::Invalid, _) | (_, Param::Invalid) => return None,
        (Param::Given(_), Param::Given(_)) => {
            rd.diags.push(Diag::new(
                Field::NumVirtualStagesPerPipelineRank,
                Level::Error,
                "give --num-layers-per-virtual-pipeline-stage or --num-virtual-stages-per-pipeline-rank, not both",
            ));
            return None;
        }
        (Param::Given(0), _) | (_, Param::Given(0)) => {
            rd.diags.push(Diag::new(
                Field::NumLayersPerVirtualPipelineStage,
                Level::Error,
                "interleaving needs at least 1 layer per virtual stage and 1 virtual stage per rank",
            ));
            return None;
        }
        (Param::Given(n), _) => Some(VirtualStages::LayersPer(n)),
        (_, Param::Given(v)) => Some(VirtualStages::PerRank(v)),
        _ => None,
    };
    let group = match rd.count(Field::MicrobatchGroupSizePerVirtualPipelineStage) {
        Param::Given(0) => {
            rd.diags.push(Diag::new(
                Field::MicrobatchGroupSizePerVirtualPipelineStage,
                Level::Error,
                "--microbatch-group-size-per-virtual-pipeline-stage must be at least 1",
            ));
            return None;
        }
        Param::Invalid => return None,
        p => p.given(),
    };
    Some((virtual_stages, group))
}

/// `--fp8-format` (e4m3 or hybrid; Transformer Engine's delayed scaling, Megatron-LM's default
/// `--fp8-recipe delayed`), which needs Transformer Engine.
fn fp8(rd: &mut Reader, local: bool) -> Option<Option<Fp8>> {
    match rd.text(Field::Fp8Format) {
        Param::Given(f) if f == "e4m3" || f == "hybrid" => {
            if local {
                rd.diags.push(Diag::new(
                    Field::Fp8Format,
                    Level::Error,
                    "--fp8-format needs --transformer-impl transformer_engine",
                ));
                return None;
            }
            Some(Some(Fp8::Delayed))
        }
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::Fp8Format,
                Level::Error,
                "--fp8-format is e4m3 or hybrid",
            ));
            None
        }
        Param::Invalid => None,
        Param::Absent => Some(None),
    }
}

/// `--transformer-impl` and `--attention-backend`: `(local, flash attention)`.
fn kernels(rd: &mut Reader) -> Option<(bool, bool)> {
    let local = match rd.text(Field::TransformerImpl) {
        Param::Given(i) if i == "local" => true,
        Param::Given(i) if i == "transformer_engine" => false,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::TransformerImpl,
                Level::Error,
                "--transformer-impl is transformer_engine or local",
            ));
            return None;
        }
        Param::Invalid => return None,
        Param::Absent => false,
    };
    let flash = match rd.text(Field::AttentionBackend) {
        Param::Given(b) if b == "unfused" || b == "local" => false,
        Param::Given(b) if b == "auto" || b == "flash" || b == "fused" => !local,
        Param::Given(_) => {
            rd.diags.push(Diag::new(
                Field::AttentionBackend,
                Level::Error,
                "--attention-backend is auto, flash, fused, unfused or local",
            ));
            return None;
        }
        Param::Invalid => return None,
        Param::Absent => !local,
    };
    Some((local, flash))
}

/// Megatron-LM's own `report_theoretical_memory`, and the refusals of building its model.
pub fn own(named: &NamedModel, report: &mut Report) {
    let s = &report.plan.settings;
    if !s.readable {
        return;
    }
    let (m, seq, grid) = (&named.model, report.plan.seq_len, report.grid);
    let (method_missing, dist, sp, selective, divisible, expert_tp) = (
        s.recompute_method_missing,
        matches!(s.sharding, Sharding::DistributedOptimizer { .. }),
        s.sequence_parallel,
        s.recompute == Recompute::Selective,
        s.vocab_divisible,
        s.expert_tp,
    );
    let Some(grid) = builds(report, m, method_missing, grid) else {
        return;
    };

    if sp && grid.tp == 1 {
        report.diag(
            Field::SequenceParallel,
            Level::Note,
            "Megatron turns it off: “Disabling sequence parallelism because tensor model parallelism is disabled” (validate_args)",
        );
    }
    let (Some(seq), Some(mbs), Some(nmb)) =
        (seq, report.plan.micro_batch, report.plan.accumulation)
    else {
        return;
    };
    let Some(vocab64) = padded_vocab(report, m, divisible, grid) else {
        return;
    };
    if m.is_mla() {
        report.diag(
            Field::ModelId,
            Level::Note,
            "Megatron's theoretical memory is not computed for multi-latent attention here: no recorded run covers it",
        );
        return;
    }
    let Some(args) = megatron_args(
        m,
        &report.plan,
        grid,
        vocab64,
        (seq, mbs, nmb),
        (dist, sp, selective, expert_tp),
    ) else {
        return;
    };
    let Some(mem) = memory::megatron_theoretical_memory(&args) else {
        return;
    };
    theoretical_memory_outputs(report, &mem);
}

/// The refusals of building Megatron's model (TransformerConfig, validate_args): the grid when it
/// builds.
fn builds(
    report: &mut Report,
    m: &Model,
    method_missing: bool,
    grid: Option<Grid>,
) -> Option<Grid> {
    if method_missing {
        report.refuse(
            Field::RecomputeMethod,
            Refusal::new(
                "Megatron-LM refuses this when it builds the model (TransformerConfig)",
                "ValueError: Using recompute_granularity: full so recompute_method must be \"block\" or \"uniform\"",
            )
            .fix("Add --recompute-method uniform (or block)."),
        );
        return None;
    }
    let grid = grid?;
    if m.num_attention_heads % grid.tp != 0 {
        report.refuse(
            Field::ModelNumAttentionHeads,
            Refusal::new(
                "Megatron-LM refuses this when it builds the model (TransformerConfig)",
                format!(
                    "ValueError: num_attention_heads ({}) must be a multiple of tensor_model_parallel_size ({}).",
                    m.num_attention_heads, grid.tp
                ),
            )
            .fix("Pick a tensor parallel size that divides the heads."),
        );
        return None;
    }
    let split = report.plan.settings.pipeline_split;
    if split == PipelineSplit::default() {
        if m.num_hidden_layers % grid.pp != 0 {
            report.refuse(
                Field::NumLayers,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size",
                )
                .fix("Pick a pipeline parallel size that divides the layers."),
            );
            return None;
        }
    } else {
        let vp = report
            .plan
            .pipeline
            .as_ref()
            .map_or(1, |p| p.virtual_stages);
        if let Err((field, says)) = megatron_split(m.num_hidden_layers, grid.pp, vp, split) {
            report.refuse(
                field,
                Refusal::new(
                    "Megatron-LM refuses this when it builds the model (TransformerConfig, validate_args)",
                    says,
                )
                .fix("Give a split whose stages hold whole layers: the middle stages the same number, each rank's layers a multiple of its virtual stages."),
            );
            return None;
        }
    }
    Some(grid)
}

/// The distributed optimizer's instances must divide the data-parallel ranks (dp × cp, and
/// the expert data-parallel ranks): else Megatron's refusal (`initialize_model_parallel`,
/// megatron/core/parallel_state.py at 0.19.2 and d98e8a6).
fn instances_divide(report: &mut Report, instances: u64) {
    let Some(grid) = report.grid else { return };
    let dense = grid.dp.saturating_mul(grid.cp);
    // the expert data-parallel size: the dense ranks of a stage over EP × ETP
    let etp = report.plan.settings.expert_tp.unwrap_or(grid.tp).max(1);
    let experts = (grid.tp.saturating_mul(dense)) / grid.ep.max(1).saturating_mul(etp);
    let says = if dense % instances != 0 {
        "AssertionError: Data parallel size should be divisible by partial DistOpt shard factor"
    } else if grid.ep > 1 && experts % instances != 0 {
        "AssertionError: Expert data parallel size should be divisible by partial DistOpt shard factor"
    } else {
        return;
    };
    report.refuse(
        Field::NumDistributedOptimizerInstances,
        Refusal::new(
            "Megatron-LM refuses this when it builds its process groups (initialize_model_parallel)",
            says,
        )
        .fix("Pick a number of instances that divides the data-parallel size × CP."),
    );
}

/// `_vocab_size_with_padding`: the padded vocabulary, set and explained.
fn padded_vocab(report: &mut Report, m: &Model, divisible: u64, grid: Grid) -> Option<u64> {
    let vocab = flops::megatron_padded_vocab_size(m.vocab_size, divisible, grid.tp)?;
    let vocab64 = u64::try_from(vocab).ok()?;
    report.set(Output::PaddedVocabSize, Num::Int(vocab as i128));
    report.explain_with(
        Output::PaddedVocabSize,
        "padded_vocab_size = vocab_size rounded up to a multiple of make_vocab_size_divisible_by × TP (Megatron's _vocab_size_with_padding)",
        || format!("padded_vocab_size = ceil({} / ({divisible} × {})) × {} = {vocab}", m.vocab_size, grid.tp, divisible * grid.tp),
    );
    Some(vocab64)
}

/// `report_theoretical_memory`'s arguments for this model, layout and batch.
fn megatron_args(
    m: &Model,
    plan: &Plan,
    grid: Grid,
    vocab64: u64,
    (seq, mbs, nmb): (u64, u64, u64),
    (dist, sp, selective, expert_tp): (bool, bool, bool, Option<u64>),
) -> Option<memory::MegatronArgs> {
    let moe = m.is_moe();
    let moe_layer_count = m.model_type.is_deepseek().then(|| m.num_moe_layers());
    let kv_channels = m.resolved_head_dim()?;
    Some(memory::MegatronArgs {
        num_layers: m.num_hidden_layers,
        hidden_size: m.hidden_size,
        ffn_hidden_size: m.intermediate_size,
        num_attention_heads: m.num_attention_heads,
        num_query_groups: (m.num_key_value_heads != m.num_attention_heads)
            .then_some(m.num_key_value_heads),
        kv_channels,
        swiglu: m.gated_mlp,
        rms_norm: !m.layer_norm,
        add_bias_linear: m.linear_bias,
        untie_embeddings_and_output_weights: !m.tie_word_embeddings,
        multi_latent_attention: false,
        num_experts: m.megatron_num_experts(),
        moe_ffn_hidden_size: if moe {
            m.expert_intermediate_size()
        } else {
            m.intermediate_size
        },
        moe_shared_expert_intermediate_size: (moe && m.n_shared_experts > 0).then(|| {
            m.n_shared_experts
                .saturating_mul(m.expert_intermediate_size())
        }),
        moe_layer_count,
        padded_vocab_size: vocab64,
        tensor_model_parallel_size: grid.tp,
        pipeline_model_parallel_size: grid.pp,
        // Megatron sets it only when interleaving is asked for
        virtual_pipeline_model_parallel_size: plan
            .pipeline
            .as_ref()
            .filter(|p| p.virtual_stages > 1)
            .map(|p| p.virtual_stages),
        expert_model_parallel_size: grid.ep,
        // --expert-tensor-parallel-size (TP unless given; the rules check it)
        expert_tensor_parallel_size: expert_tp.unwrap_or(grid.tp),
        world_size: grid.world,
        data_parallel_size: grid.dp,
        use_distributed_optimizer: dist,
        seq_length: seq,
        micro_batch_size: mbs,
        sequence_parallel: sp && grid.tp > 1,
        recompute_selective: selective,
        num_microbatches: nmb,
    })
}

/// Megatron's theoretical memory set and explained.
fn theoretical_memory_outputs(report: &mut Report, mem: &memory::MegatronMemory) {
    report.set(
        Output::WeightAndOptimizerMemoryMb,
        Num::Float(mem.weight_and_optimizer_memory_mb),
    );
    report.set(
        Output::ActivationMemoryMb,
        Num::Float(mem.activation_memory_mb),
    );
    report.set(Output::TotalMemoryMb, Num::Float(mem.total_memory_mb));
    report.explain_with(
        Output::TotalMemoryMb,
        "Megatron-LM 0.19.2 report_theoretical_memory: weights and optimizer of the first stage + activations (MB = bytes / 2^20); it does not see CP, full recompute, or MoE/MLA activations",
        || format!(
            "{} MB + {} MB = {} MB ({} branch)",
            num::float_repr(mem.weight_and_optimizer_memory_mb),
            num::float_repr(mem.activation_memory_mb),
            num::float_repr(mem.total_memory_mb),
            if mem.uses_sp_branch { "sequence parallel + selective recompute" } else { "without sequence parallel" }
        ),
    );
}

/// A model's config.json under Megatron's arguments (`Import::config_json`): the sizes under
/// Megatron's names, `tie_word_embeddings` as `--untie-embeddings-and-output-weights` (its
/// negation), `--group-query-attention` when the key/value heads are fewer than the heads, and
/// the layout every config.json family dpcalc counts has (`--swiglu`, `--normalization RMSNorm`,
/// `--disable-bias-linear`, `--position-embedding-type rope`), which Megatron's defaults differ
/// from, with `--qk-layernorm` for the families that norm queries and keys (Qwen3, Gemma 3).
pub const CONFIG_JSON: crate::calc::spec::ConfigJson = crate::calc::spec::ConfigJson {
    key: config_key,
    derived: config_derived,
    consumed: &["tie_word_embeddings"],
};

fn config_key(key: &str) -> Option<&'static str> {
    Some(match key {
        "num_hidden_layers" => "num_layers",
        "intermediate_size" => "ffn_hidden_size",
        "num_key_value_heads" => "num_query_groups",
        "head_dim" => "kv_channels",
        "num_experts_per_tok" => "moe_router_topk",
        "moe_intermediate_size" => "moe_ffn_hidden_size",
        _ => return None,
    })
}

fn config_derived(get: &crate::calc::spec::ConfigValue<'_>) -> Vec<crate::calc::spec::Derived> {
    let mut out = Vec::new();
    if let Some(tie @ ("true" | "false")) = get("tie_word_embeddings").as_deref() {
        out.push((
            Field::UntieEmbeddingsAndOutputWeights,
            (tie == "false").to_string(),
            "tie_word_embeddings",
        ));
    }
    for (f, v) in [
        (Field::Swiglu, "true"),
        (Field::Normalization, "RMSNorm"),
        (Field::DisableBiasLinear, "true"),
        (Field::PositionEmbeddingType, "rope"),
    ] {
        out.push((f, v.to_string(), "model_type"));
    }
    let family = get("model_type").and_then(|t| crate::calc::model::ModelType::from_key(&t));
    if family.is_some_and(|t| t.has_qk_norm()) {
        out.push((Field::QkLayernorm, "true".to_string(), "model_type"));
    }
    let count = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
    if let (Some(h), Some(k)) = (count("num_attention_heads"), count("num_key_value_heads")) {
        out.push((
            Field::GroupQueryAttention,
            (k != h).to_string(),
            "num_key_value_heads",
        ));
    }
    out
}
