//! The memory estimate against published measurements: `tests/fixtures/measured_memory.txt`
//! holds one record per published run (its source, every setting as a dpcalc link, the measured
//! figure and which counter it is). Each record's estimate is the figure the counter measures:
//! Megatron-LM logs `torch.cuda.max_memory_allocated` of the last rank only, so its records are
//! held against the last pipeline stage's `memory_by_stage_bytes` entry (`memory_per_gpu_bytes`
//! without PP); torchtitan's peak-reserved counter (`reserved_bytes.all.peak`, the maximum over
//! ranks) against `memory_reserved_bytes` (the stage that reserves the most). A record must be
//! within ±10 % of its counter, but the known misses (each with what the estimate does not count), which must stay outside; the
//! table of `docs/estimates.md` ("Memory against measured runs") is this test's table, row for row, with the
//! misses and the records not estimated, each with its reason.

use crate::common::report::{fsdp_pipeline_kept, int};
use dpcalc::calc::{Level, Output};
use dpcalc::query;

const FIXTURE: &str = include_str!("fixtures/measured_memory.txt");

/// What a record's counter measures.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Counter {
    /// `torch.cuda.max_memory_allocated` on the last pipeline rank.
    AllocatedLastRank,
    /// `torch.cuda.max_memory_reserved`, the maximum over ranks.
    ReservedMaxRank,
}

impl Counter {
    fn parse(s: &str) -> Counter {
        match s {
            "max_allocated_last_rank" => Counter::AllocatedLastRank,
            "max_reserved_max_rank" => Counter::ReservedMaxRank,
            other => panic!("unknown counter {other}"),
        }
    }

    /// The tolerance, in percent.
    fn tolerance(self) -> f64 {
        10.0
    }

    fn name(self) -> &'static str {
        match self {
            Counter::AllocatedLastRank => "max allocated, last rank",
            Counter::ReservedMaxRank => "max reserved, max over ranks",
        }
    }
}

pub(crate) struct Record {
    pub(crate) id: String,
    source: String,
    counter: Counter,
    measured: u128,
    /// The record's settings as a dpcalc link.
    pub(crate) link: String,
}

/// The Megatron-LM arguments read as they are: each is a key of Megatron's form (`None`: unset).
const MEGATRON_KEYS: &[&str] = &[
    "num_layers",
    "hidden_size",
    "ffn_hidden_size",
    "num_attention_heads",
    "group_query_attention",
    "num_query_groups",
    "kv_channels",
    "seq_length",
    "max_position_embeddings",
    "micro_batch_size",
    "global_batch_size",
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "num_layers_per_virtual_pipeline_stage",
    "num_virtual_stages_per_pipeline_rank",
    "context_parallel_size",
    "sequence_parallel",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
    "num_experts",
    "moe_router_topk",
    "moe_ffn_hidden_size",
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "use_distributed_optimizer",
    "swiglu",
    "normalization",
    "disable_bias_linear",
    "untie_embeddings_and_output_weights",
    "position_embedding_type",
    "vocab_size",
    "make_vocab_size_divisible_by",
    "hidden_dropout",
    "transformer_impl",
    "attention_backend",
    "decoder_first_pipeline_num_layers",
    "decoder_last_pipeline_num_layers",
    "account_for_embedding_in_pipeline_split",
    "account_for_loss_in_pipeline_split",
    "multi_latent_attention",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_head_dim",
    "qk_pos_emb_head_dim",
    "v_head_dim",
    "num_distributed_optimizer_instances",
];

/// Settings of a Megatron-LM record the estimate does not model: such a record is listed in the
/// docs/estimates.md as not estimated, with the reason, and left out of the tolerance.
const NOT_MODELLED: &[(&str, &str, &str)] = &[
    (
        "fp8",
        "None",
        "FP8 training (Transformer Engine, `--fp8-recipe tensorwise`, `--fp8-param-gather`): 22-24 % under, and not for FP8: 0.22 and 0.11 GB stay allocated after the step above the model states, where the 16-bit records keep 0.07-0.16 GB uncounted (among it TE's cuBLAS workspace) and the first run 0.10 GB more for `--tp-comm-overlap`'s workspaces; a quarter of these small runs' peak (see above)",
    ),
    ("mtp_num_layers", "", "multi-token prediction layers"),
    (
        "recompute_modules",
        "core_attn",
        "selective recompute of other modules than the core attention (`--recompute-modules`: layernorm, mla_up_proj, mlp, moe_act)",
    ),
    (
        "moe_shared_expert_intermediate_size",
        "None",
        "shared experts (`--moe-shared-expert-intermediate-size`)",
    ),
    (
        "moe_layer_freq",
        "1",
        "dense layers among the MoE layers (`--moe-layer-freq`)",
    ),
    (
        "pipeline_model_parallel_layout",
        "",
        "an explicit pipeline layout",
    ),
    (
        "cross_entropy_loss_fusion",
        "False",
        "the fused cross entropy: its functions run under torch.compile (`jit_fuser`), whose buffers for the in-place steps on the fp32 logits the code does not fix (counted as the unfused path's tensors it is 29 % under)",
    ),
];

/// The records the estimate misses, each with what it does not count: they stay in the table of
/// docs/estimates.md, and the test fails when one of them comes within the tolerance (the list
/// shrinks) or another leaves it.
const KNOWN_MISSES: &[(&str, &str)] = &[
    (
        "megatron:gpt3_mcore_te_tp2_pp2_cp2:dev_dgx_h100",
        "context parallelism with TP and sequence parallelism on the last of two stages: 0.13 GB that no counted tensor explains (the same CP run without PP is within 5 %)",
    ),
    (
        "megatron:gpt3_mcore_tp2_pp2_ep2_etp2_te_4experts2parallel:dev_dgx_h100",
        "MoE under the local implementation on the last of two stages, with the allgather dispatcher's tensors counted under balanced routing: 0.10 GB stays allocated after the step above the model states and Megatron's global memory buffer the estimate counts (491.8 MB measured, 387.5 MB estimated, of it 16.8 MB the buffer: the local attention's input), a tenth of the peak; the peak less what stays after the step, 734.3 MB, is estimated at 707.5 MB (-3.7 %)",
    ),
];

/// The GPU of a record's hardware.
fn gpu(hardware: &str) -> &'static str {
    match hardware {
        "dgx_h100" => "h100-sxm",
        "dgx_a100" => "a100-80gb",
        other => panic!("unknown hardware {other}"),
    }
}

/// A record line's `key=value` fields.
fn key_values(line: &str) -> Vec<(&str, &str)> {
    line.split(' ')
        .map(|kv| {
            kv.split_once('=')
                .unwrap_or_else(|| panic!("{kv}: not key=value"))
        })
        .collect()
}

/// Each record: its fields by key; `Err(reason)` for a record the estimate does not model.
pub(crate) fn records() -> Vec<Result<Record, (String, String)>> {
    let mut out = Vec::new();
    for line in FIXTURE.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = key_values(line);
        let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let need = |key: &str| get(key).unwrap_or_else(|| panic!("{key} missing: {line}"));
        let id = need("id").to_string();
        match need("framework") {
            "megatron-lm" => {}
            "torchtitan" => {
                out.push(torchtitan(id, need, get));
                continue;
            }
            "torchtune" => {
                out.push(Err((id, torchtune(get).into())));
                continue;
            }
            other => panic!("{id}: unknown framework {other}"),
        }
        // the steady state: a peak that still rises after the first logged steps (Megatron
        // logs every step or every 5th; optimizer states appear at the end of step 1) is not
        // the training step's: a checkpoint save, or MoE routing that grows more unbalanced
        let unsteady = get("steps")
            .and_then(|s| {
                s.split(';')
                    .find_map(|p| p.strip_prefix("value_constant_from_step="))
            })
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 5);
        // every setting of the record the estimate does not model, each named
        let mut why: Vec<&str> = NOT_MODELLED
            .iter()
            .filter(|(k, unset, _)| {
                get(k).is_some_and(|v| v != *unset && !(unset.is_empty() && v == "False"))
            })
            .map(|(_, _, why)| *why)
            .collect();
        if !why.is_empty() {
            if unsteady {
                why.push("and the peak still rises after step 5");
            }
            out.push(Err((id, why.join("; "))));
            continue;
        }
        if get("other_args").is_some_and(|a| a.contains("fsdp")) || id.contains("fsdp") {
            out.push(Err((id, "Megatron-FSDP".into())));
            continue;
        }
        if unsteady {
            out.push(Err((
                id,
                "not a steady state (the peak still rises after step 5: a checkpoint save, or MoE routing growing more unbalanced)".to_string(),
            )));
            continue;
        }
        let mut link = format!(
            "framework=megatron&version=0.19.2&world_size={}&gpu={}&train_iters=100",
            need("gpus"),
            gpu(need("hardware"))
        );
        // `--microbatch-group-size-per-virtual-pipeline-stage 5` among the other arguments
        for a in get("other_args").unwrap_or("none").split(';') {
            if let Some(n) = a.strip_prefix("microbatch-group-size-per-virtual-pipeline-stage:") {
                link.push_str(&format!(
                    "&microbatch_group_size_per_virtual_pipeline_stage={n}"
                ));
            } else if a == "defer-embedding-wgrad-compute" {
                link.push_str("&defer_embedding_wgrad_compute=true");
            } else if let Some(n) = a.strip_prefix("wgrad-deferral-limit:") {
                link.push_str(&format!("&wgrad_deferral_limit={n}"));
            }
        }
        for &k in MEGATRON_KEYS {
            match get(k) {
                None | Some("None") => {}
                Some(v) => {
                    let v = match v {
                        "True" => "true",
                        "False" => "false",
                        v => v,
                    };
                    link.push_str(&format!("&{k}={v}"));
                }
            }
        }
        out.push(Ok(Record {
            id,
            source: need("source").to_string(),
            counter: Counter::parse(need("counter")),
            measured: need("measured_bytes").parse().expect("measured_bytes"),
            link,
        }));
    }
    out
}

/// torch.compile with no checkpointing policy stated or applied: AOT autograd's min-cut
/// partitioner (`min_cut_rematerialization_partition`, torch/_functorch/partitioners.py) decides
/// what each compiled block saves.
const COMPILED_WITHOUT_POLICY: &str = "torch.compile with no stated checkpointing policy (torchtitan's nvfp4.md runs in bf16, MXFP8 and NVFP4, torchtune's compiled layers without checkpointing): the compiler's min-cut partitioner decides what each block saves";

/// Why a torchtune record (pytorch/torchtune at 1814feb17 for the README's optimization flags,
/// bd2a0fc for the rest) is not estimated. No dpcalc framework is torchtune; an axolotl link
/// would stand for its single-device recipes only where the recipe allocates what axolotl's
/// count holds, and none of these runs does:
/// - the README's "Memory and training speed" table names no counter and not the settings in
///   which its rows differ (the same full fine-tune is 18.9 GiB on a 4090 and 37.4 GiB on an
///   A6000); the tutorials and the baseline row train on unpacked alpaca, each batch padded to
///   its longest sample (`padded_collate_sft`), whose length is not stated;
/// - compiled layers without checkpointing (`training.compile_model` per layer):
///   [`COMPILED_WITHOUT_POLICY`];
/// - the rest run what no dpcalc input expresses: activation offloading (`OffloadActivations`,
///   the checkpointed inputs moved to CPU memory on a side stream), the chunked cross entropy
///   compiled (`CEWithChunkedOutputLoss` under `compile_loss`: no full fp32 logits), the
///   optimizer in the backward (`register_optim_in_bwd_hooks`: each gradient freed after its
///   step), and the eager layer's own saved tensors (its `RMSNorm` keeps the fp32 upcast of its
///   input, `rms_norm.py`).
fn torchtune<'a>(get: impl Fn(&str) -> Option<&'a str>) -> &'static str {
    let unstated = get("counter") == Some("peak_unspecified")
        || get("packed") == Some("False")
        || get("seq_length").is_some_and(|v| v.starts_with("variable"));
    if unstated {
        return "torchtune: settings the source does not state (the README's speed table names no counter and not the settings in which its rows differ; unpacked alpaca pads each batch to its longest sample, whose length is not stated)";
    }
    let checkpointed = get("activation_checkpoint").is_some_and(|v| v.starts_with("True"));
    if get("compile") == Some("True") && !checkpointed {
        return COMPILED_WITHOUT_POLICY;
    }
    "torchtune: what no dpcalc input expresses (activation offloading to CPU, the chunked cross entropy compiled, the optimizer in the backward, its eager RMSNorm's fp32 saved input)"
}

/// A torchtitan record as a dpcalc link of torchtitan 0.3.0's keys, or why it is not estimated.
/// Float8 (`float8_linear`, torchao's dynamic tensorwise scaling at the benchmark's torchao
/// eab345c) is linked as `model.converters=float8`, whose saved tensors the estimate counts;
/// a compiled run under a stated checkpointing policy is estimated as the eager count (below).
/// Not estimated: MXFP8 or NVFP4 runs without a stated checkpointing policy (torchtitan's
/// nvfp4.md), runs with FSDP's float8 all-gather, and the pipeline runs ([`PIPELINE_FSDP`]).
/// Tensor parallelism is linked as it ran: DTensor's, with sequence and loss parallelism on
/// (always at 9dec370; 0.3.0's defaults).
fn torchtitan<'a>(
    id: String,
    need: impl Fn(&str) -> &'a str,
    get: impl Fn(&str) -> Option<&'a str>,
) -> Result<Record, (String, String)> {
    let float8 = get("float8_linear").unwrap_or("False");
    // torch.compile under a stated checkpointing policy saves what the policy saves: per-op
    // selective checkpointing's `_custom_policy` tags each op of a block MUST_SAVE or
    // PREFER_RECOMPUTE, and AOT autograd's partitioner saves the MUST_SAVE outputs the backward
    // reads (`should_ban_recomputation`: "marked MUST_SAVE") and never bans a PREFER_RECOMPUTE
    // op from recomputation (`ban_recomputation_if_allowed` returns false on `must_recompute`);
    // full checkpointing tags every op of the block PREFER_RECOMPUTE, so only the block's input
    // is saved (torch/_functorch/partitioners.py at torch 2.15). Without a stated checkpointing
    // mode the compiler's own min-cut decides.
    let compiled = need("compile") == "True";
    let ac = need("activation_checkpoint");
    if compiled && ac != "selective" && ac != "full" {
        return Err((id, COMPILED_WITHOUT_POLICY.into()));
    }
    if float8.contains("fsdp_float8_all_gather") {
        return Err((id, FSDP_FLOAT8.into()));
    }
    if need("pipeline_model_parallel_size") != "1" {
        return Err((id, PIPELINE_FSDP.into()));
    }
    let link = torchtitan_link(&id, &need, &get);
    // torchtitan's `selective` is per-op at the recorded commit and in 0.3.0 alike
    assert_eq!(get("selective_ac_option").unwrap_or("op"), "op", "{id}");
    Ok(Record {
        id,
        source: need("source").to_string(),
        counter: Counter::parse(need("counter")),
        measured: need("measured_bytes").parse().expect("measured_bytes"),
        link,
    })
}

/// Why the H200 runs (torchtitan e7c0cae, 2025-06-13) are not estimated. Their FSDP float8
/// settings are keys of neither release dpcalc models (torchtitan removed the all-gather and its
/// precomputed scales in #3127, `force_recompute_fp8_weight_in_bwd` in #1452; the import names
/// them: `src/calc/frameworks/torchtitan/mod.rs`), and with `training.compile` e7c0cae compiles
/// the loss (`torch.compile(loss_fn)`, torchtitan/components/loss.py:27-29; 9dec370 left it
/// eager, train.py:137-138), whose saved tensors the compiler's min-cut decides: linked without
/// the float8 settings the estimate is 35-37 % over, by less than the eager loss's 14 B per logit
/// it counts ([`h200_runs_are_over_by_less_than_the_eager_loss`]). Which rank's memory the source
/// shows is not stated.
const FSDP_FLOAT8: &str = "torchtitan at e7c0cae (2025-06) with FSDP's float8 all-gather and precomputed scales, which torchtitan removed before 0.3.0 (#3127; `force_recompute_fp8_weight_in_bwd`, removed in #1452, a no-op from torchao's #2356 on, the run's torchao unstated), and its loss compiled with the model (`torch.compile(loss_fn)`, components/loss.py:27-29; eager at 9dec370): the compiler's min-cut decides what the cross entropy saves: linked without these settings the estimate is 35-37 % (18-19 GB) over, less than the 29 GB the eager loss's 14 B per logit take; the counter's rank is not stated";

/// Why the 2024-12 benchmark's 405B pipeline runs are not estimated. Their pipeline is stated by
/// the code at 9dec370 (the fixture's comments cite it): 8 micro batches (the PP degree), the
/// stages of `generate_split_points`, the schedule the doc names; linked so ([`torchtitan_link`]),
/// the estimate holds each stage's micro batches in flight by the schedule (1F1B: min(p − r, m);
/// torch's `ScheduleInterleaved1F1B`: (v − 1)·8 + 2·(p − 1 − r) warm-up passes, all 16 of rank
/// 0) and counts what FSDP2 keeps under PP: each stage's parameters gathered in bf16 from forward
/// to backward (`reshard_after_forward=False`) and its unsharded gradients accumulated in fp32
/// over the micro batches (no gradient sync but after the last backward), 6 B per parameter of
/// the stage over TP, 39.9 GB on the first ([`pipeline_runs_count_what_fsdp_keeps`]). The six
/// runs are then one figure, 69.2 GiB, 4.8–18.5 % under runs that differ by 12.2 GiB: three
/// within ±10 % by a figure that does not tell them apart are not estimated.
const PIPELINE_FSDP: &str = "torchtitan's pipeline with FSDP (the 2024-12 benchmark's 405B runs; micro batches, split and stages per rank stated by the code at 9dec370): with what FSDP2 keeps under PP counted (the stage's parameters gathered in bf16 from forward to backward, `reshard_after_forward=False` under PP, and its unsharded gradients accumulated in fp32 over the micro batches, no gradient sync but after the last backward: 13.3 + 26.6 GB on the first stage) all six are estimated at 69.2 GiB, 4.8-18.5 % under their 72.7-84.9 GiB: the estimate does not tell 1F1B (82.5 GiB) from interleaved 1F1B (72.7), nor the CP runs apart (75.3 to 84.9 GiB as CP rises from 1 to 8, the tokens per GPU the same), so the three within ±10 % are not taken as estimated; float8 gathers (llama3_405b.toml sets `enable_fsdp_float8_all_gather`, no 0.3.0 key; the doc does not say the runs used that file) would take 6.4 GB less (1 B per linear weight)";

/// A torchtitan record's settings as a link of torchtitan 0.3.0's keys. A pipeline's micro
/// batches (`pipeline_microbatches`, the PP degree at 9dec370 when unset) are 0.3.0's
/// `pipeline_parallel_microbatch_size` = local batch ÷ micro batches; 0.3.0 refuses PP without
/// `disable_cuda_graphs`.
fn torchtitan_link<'a>(
    id: &str,
    need: &impl Fn(&str) -> &'a str,
    get: &impl Fn(&str) -> Option<&'a str>,
) -> String {
    let float8 = get("float8_linear").unwrap_or("False");
    let compiled = need("compile") == "True";
    let model = match need("model") {
        "Llama-3.1-8B" => "meta-llama/Llama-3.1-8B",
        "Llama-3.1-70B" => "meta-llama/Llama-3.1-70B",
        "Llama-3.1-405B" => "meta-llama/Llama-3.1-405B",
        other => panic!("{id}: no preset for {other}"),
    };
    let link = format!(
        "framework=torchtitan&version=0.3.0&model={model}&gpu={}&world_size={}&local_batch_size={}&seq_len={}&data_parallel_shard_degree={}&data_parallel_replicate_degree={}&tensor_parallel_degree={}&pipeline_parallel_degree={}&context_parallel_degree={}&activation_checkpoint.mode={}",
        // the benchmark's Grand Teton H100s: 96 GB HBM2e at 500 W
        match need("hardware") {
            "H100_SXM_96GB_HBM2e_500W" => "h100-96gb-500w",
            "H200" => "h200",
            other => panic!("{id}: unknown hardware {other}"),
        },
        need("gpus"),
        need("micro_batch_size"),
        need("seq_length"),
        need("data_parallel_shard_degree"),
        need("data_parallel_replicate_degree"),
        need("tensor_model_parallel_size"),
        need("pipeline_model_parallel_size"),
        need("context_parallel_size"),
        need("activation_checkpoint"),
    ) + if compiled { "&compile.enable=true" } else { "" }
        + if float8.starts_with("True") { "&model.converters=float8" } else { "" };
    if need("pipeline_model_parallel_size") == "1" {
        return link;
    }
    let m: u64 = need("pipeline_microbatches")
        .parse()
        .expect("micro batches");
    let local: u64 = need("micro_batch_size").parse().expect("local batch");
    let schedule = match need("pipeline_schedule") {
        "1F1B" => "1F1B",
        "Interleaved_1F1B" => "Interleaved1F1B",
        other => panic!("{id}: schedule {other}"),
    };
    format!(
        "{link}&pipeline_parallel_microbatch_size={}&pipeline_parallel_schedule={schedule}&disable_cuda_graphs=true",
        local / m
    )
}

/// The estimate a record's counter measures, or why there is none.
fn estimate(rec: &Record) -> Result<u128, String> {
    let link = query::decode(&rec.link);
    if !link.unknown.is_empty() {
        return Err(format!("unknown keys {:?}", link.unknown));
    }
    let r = link.report();
    if let Some(e) = r.diags.iter().find(|d| d.level == Level::Error) {
        return Err(format!("{}: {}", e.field.key(), e.message));
    }
    let per_gpu = int(&r, Output::MemoryPerGpuBytes)
        .and_then(|v| u128::try_from(v).ok())
        .ok_or("no estimate")?;
    Ok(match rec.counter {
        Counter::AllocatedLastRank => r.memory_by_stage.last().copied().unwrap_or(per_gpu),
        Counter::ReservedMaxRank => int(&r, Output::MemoryReservedBytes)
            .and_then(|v| u128::try_from(v).ok())
            .ok_or("no reserved estimate")?,
    })
}

fn error_pct(estimated: u128, measured: u128) -> f64 {
    (estimated as f64 - measured as f64) * 100.0 / measured as f64
}

/// The table of docs/estimates.md: one row per record.
fn table(rows: &[(Record, u128)]) -> String {
    let mut t = String::from(
        "| record | counter | measured | estimated | error |\n|---|---|---|---|---|\n",
    );
    for (rec, est) in rows {
        t.push_str(&format!(
            "| `{}` | {} | {:.2} GB | {:.2} GB | {:+.1} % |\n",
            rec.id,
            rec.counter.name(),
            rec.measured as f64 / 1e9,
            *est as f64 / 1e9,
            error_pct(*est, rec.measured)
        ));
    }
    t
}

/// One line per source (the part of the id before the first colon): the median |error| and the
/// share within the tolerance.
fn medians(rows: &[(Record, u128)]) -> String {
    let mut sources: Vec<&str> = rows
        .iter()
        .map(|(r, _)| r.id.split(':').next().unwrap())
        .collect();
    sources.dedup();
    let mut t = String::new();
    for s in sources {
        let mut errors: Vec<(f64, f64)> = rows
            .iter()
            .filter(|(r, _)| r.id.split(':').next() == Some(s))
            .map(|(r, e)| (error_pct(*e, r.measured).abs(), r.counter.tolerance()))
            .collect();
        errors.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = errors.len();
        let median = if n % 2 == 1 {
            errors[n / 2].0
        } else {
            (errors[n / 2 - 1].0 + errors[n / 2].0) / 2.0
        };
        let within = errors.iter().filter(|(e, tol)| e <= tol).count();
        t.push_str(&format!(
            "{s}: median |error| {median:.1} % over {n} estimated records, {within} within ±10 %\n"
        ));
    }
    t
}

#[test]
fn every_record_is_within_its_tolerance() {
    let all = records();
    let mut failed = Vec::new();
    let mut rows: Vec<(Record, u128)> = Vec::new();
    for r in all.iter().filter_map(|r| r.as_ref().ok()) {
        match estimate(r) {
            Ok(e) => rows.push((
                Record {
                    id: r.id.clone(),
                    source: r.source.clone(),
                    counter: r.counter,
                    measured: r.measured,
                    link: r.link.clone(),
                },
                e,
            )),
            Err(why) => failed.push(format!("{}: {why}", r.id)),
        }
    }
    // the ratchets: estimated records never fewer (30 before torchtitan's compiled runs under
    // per-op selective checkpointing, 32 with them, 36 with its Float8 runs and compiled full
    // checkpointing, 38 with its TP runs, 40 with Megatron's distributed-optimizer instances and
    // deferred embedding weight gradients), records left out never more (71 before, 69, 63,
    // 61, 59)
    assert!(rows.len() >= 40, "{} records", rows.len());
    let left_out = all.iter().filter(|r| r.is_err()).count();
    assert!(left_out <= 59, "{left_out} records not estimated");
    let sources: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|(r, _)| r.source.split(['@', ':']).next().unwrap())
        .collect();
    let outside = |r: &Record, e: u128| error_pct(e, r.measured).abs() > r.counter.tolerance();
    let known = |r: &Record| KNOWN_MISSES.iter().any(|(id, _)| *id == r.id);
    let misses: Vec<String> = rows
        .iter()
        .filter(|(r, e)| outside(r, *e) != known(r))
        .map(|(r, e)| format!("{}: {:+.1} %", r.id, error_pct(*e, r.measured)))
        .collect();
    let mut t = table(&rows);
    t.push('\n');
    t.push_str(&medians(&rows));
    t.push('\n');
    for (id, why) in KNOWN_MISSES {
        t.push_str(&format!("- missed: `{id}`: {why}\n"));
    }
    // the records left out, one line per reason
    t.push_str(&crate::common::report::left_out(
        (all.iter().filter_map(|r| r.as_ref().err())).map(|(id, why)| (id.as_str(), why.as_str())),
    ));
    println!("{t}");
    println!("sources: {sources:?}");
    assert!(failed.is_empty(), "no estimate: {failed:#?}\n{t}");
    assert!(
        misses.is_empty(),
        "outside the tolerance and not a known miss, or a known miss now within it: {misses:#?}\n{t}"
    );
    let doc = crate::common::files::read("docs/estimates.md");
    assert!(
        doc.contains(&t),
        "docs/estimates.md's table differs from the test's; it should read:\n{t}"
    );
}

/// The error is computed, not assumed: a record whose measured figure were 40 % higher would
/// leave either tolerance.
#[test]
fn a_wrong_measurement_fails() {
    let rec = records()
        .into_iter()
        .find_map(Result::ok)
        .expect("a record");
    let est = estimate(&rec).expect("an estimate");
    assert!(error_pct(est, rec.measured).abs() <= rec.counter.tolerance());
    let off = rec.measured * 7 / 5;
    assert!(error_pct(est, off).abs() > rec.counter.tolerance());
}

/// [`PIPELINE_FSDP`] holds: the 405B pipeline runs, linked as the code at 9dec370 states them,
/// count what FSDP2 keeps under PP, named in the worked step: 2 B gathered and 4 B of fp32
/// gradients per parameter of the stage over TP (an even split of L layers over p·v virtual
/// stages, rank r holding stages r + c·p; each layer's q, k, v, o, gated MLP and two norms; the
/// embedding on the first rank, the final norm and the untied output layer on the last); the
/// six estimates are one figure while the measured runs differ by more than the tolerance, and
/// not all of them are within it.
#[test]
fn pipeline_runs_count_what_fsdp_keeps() {
    let mut seen = Vec::new();
    for line in FIXTURE.lines().filter(|l| l.starts_with("id=torchtitan")) {
        let fields = key_values(line);
        let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let need = |key: &str| get(key).unwrap_or_else(|| panic!("{key} missing: {line}"));
        let n = |key: &str| -> u128 { need(key).parse().expect(key) };
        if need("pipeline_model_parallel_size") == "1" {
            continue;
        }
        let id = need("id");
        assert!(
            torchtitan(id.to_string(), need, get).is_err_and(|(_, why)| why == PIPELINE_FSDP),
            "{id}"
        );
        let link = torchtitan_link(id, &need, &get);
        let rec = Record {
            id: id.to_string(),
            source: need("source").to_string(),
            counter: Counter::parse(need("counter")),
            measured: n("measured_bytes"),
            link: link.clone(),
        };
        let est = estimate(&rec).unwrap_or_else(|e| panic!("{id}: {e}"));
        let r = query::decode(&link).report();
        let (k, g, f) = fsdp_pipeline_kept(&r).unwrap_or_else(|| panic!("{id}: no step"));
        let (h, ffn, vocab) = (n("hidden_size"), n("ffn_hidden_size"), n("vocab_size"));
        let kv = h / n("num_attention_heads") * n("num_query_groups");
        let layer = 2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h;
        let (l, p) = (n("num_layers"), n("pipeline_model_parallel_size"));
        let v = if need("pipeline_schedule") == "1F1B" {
            1
        } else {
            2
        };
        let rank = k - 1;
        let layers: u128 = (0..v)
            .map(|c| l / (p * v) + u128::from(c * p + rank < l % (p * v)))
            .sum();
        let mut stage = layers * layer;
        if rank == 0 {
            stage += vocab * h;
        }
        if rank == p - 1 {
            stage += h + vocab * h;
        }
        let on_gpu = stage.div_ceil(n("tensor_model_parallel_size"));
        assert_eq!((g, f), (2 * on_gpu, 4 * on_gpu), "{id}");
        println!(
            "{id}: estimated {:.1} GiB ({:.1} GB gathered, {:.1} GB fp32 gradients on stage {k}), measured {:.1} GiB: {:+.1} %",
            est as f64 / (1u64 << 30) as f64,
            g as f64 / 1e9,
            f as f64 / 1e9,
            rec.measured as f64 / (1u64 << 30) as f64,
            error_pct(est, rec.measured)
        );
        seen.push((est, rec.measured, rec.counter.tolerance()));
    }
    assert_eq!(seen.len(), 6);
    let tolerance = seen[0].2;
    // one figure for all six
    assert!(seen.iter().all(|&(e, _, _)| e == seen[0].0));
    // the measured runs differ by more than the tolerance
    let (lo, hi) = seen.iter().fold((u128::MAX, 0), |(lo, hi), &(_, m, _)| {
        (lo.min(m), hi.max(m))
    });
    assert!(
        (hi - lo) as f64 * 100.0 > tolerance * lo as f64,
        "{lo} {hi}"
    );
    // and not all are within it
    assert!(seen.iter().any(|&(e, m, tol)| error_pct(e, m).abs() > tol));
}

/// [`FSDP_FLOAT8`] holds: the H200 runs linked without the float8 settings no 0.3.0 key has are
/// more than the tolerance over, by less than the bytes the eager loss's count takes (saved,
/// transient and kept reserved: 14 per logit) that e7c0cae's compiled loss does not hold as such.
#[test]
fn h200_runs_are_over_by_less_than_the_eager_loss() {
    let mut seen = 0;
    for line in FIXTURE
        .lines()
        .filter(|l| l.starts_with("id=torchtitan:llama3_8b_h200"))
    {
        let fields = key_values(line);
        let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let need = |key: &str| get(key).unwrap_or_else(|| panic!("{key} missing: {line}"));
        let n = |key: &str| -> u128 { need(key).parse().expect(key) };
        let id = need("id");
        assert!(
            torchtitan(id.to_string(), need, get).is_err_and(|(_, why)| why == FSDP_FLOAT8),
            "{id}"
        );
        let link = torchtitan_link(id, &need, &get);
        let measured = n("measured_bytes");
        let rec = Record {
            id: id.to_string(),
            source: String::new(),
            counter: Counter::ReservedMaxRank,
            measured,
            link,
        };
        let est = estimate(&rec).unwrap_or_else(|e| panic!("{id}: {e}"));
        let logits = n("micro_batch_size") * n("seq_length") * n("vocab_size");
        println!("{id}: {:+.1} %", error_pct(est, measured));
        assert!(error_pct(est, measured) > rec.counter.tolerance(), "{id}");
        assert!(est - measured < 14 * logits, "{id}");
        seen += 1;
    }
    assert_eq!(seen, 2);
}
