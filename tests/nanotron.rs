//! dpcalc against nanotron's own code: `tests/fixtures/nanotron.txt` records what nanotron 0.4's
//! `ParallelContext` checks, its `Config.global_batch_size` and its dacite config parsing did when
//! run (`nanotron-1`), and what HEAD 2411b02 did when run unmodified from its config parsing
//! through `ParallelContext` (rank reshape included) to the dummy-data check (`nanotronhead-1`);
//! every value and every message must match exactly. Where a required key is missing, the values
//! are what nanotron's own properties compute from the keys given (see the fixture's comments).

use crate::common;
use crate::common::report::{errors_at, messages_at};

use dpcalc::calc::{Field, Level, Num, Output, Report};
use dpcalc::query;

fn report(q: &str) -> Report {
    query::decode(&format!("framework=nanotron&{q}")).report()
}

#[test]
fn matches_nanotron_when_run() {
    // A missing key is a hint (an empty field is never an error); the rest are errors.
    common::run(&common::Oracle {
        file: "nanotron.txt",
        text: include_str!("fixtures/nanotron.txt"),
        framework: "nanotron",
        minimums: &[
            ("", 175, 1225),
            ("0.4", 72, 504),
            ("nanotron-1 0.4", 72, 504),
            ("head", 103, 721),
            ("nanotronhead-1 head", 103, 721),
        ],
        stop_marks: &["nanotron stops with", "dacite.exceptions"],
        known: &[],
    });
}

#[test]
fn default_release_is_0_4() {
    // 0.4 counts expert_parallel_size: 8 GPUs, ep 2, dp 8 -> 16 != 8 (oracle: ValueError)
    let r = report("world_size=8&dp=8&tp=1&pp=1&expert_parallel_size=2&micro_batch_size=1&batch_accumulation_per_replica=1&sequence_length=1&train_steps=1");
    let e = errors_at(&r, Field::Dp);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("replicas (16)"), "{}", e[0]);
    assert!(
        e[0].contains(
            "The dp that fits: world_size // (tp × pp × expert_parallel_size) = 8 // 2 = 4."
        ),
        "{}",
        e[0]
    );
}

#[test]
fn fixes_name_the_dp_that_fits_and_the_nearest_world_sizes() {
    // HEAD's ParallelContext assertion (src/nanotron/parallel/context.py): label order
    // TP*CP*DP*PP, values tp, pp, cp, dp
    let r = report("version=head&world_size=8&dp=4&tp=2&pp=1&context_parallel_size=2&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=10");
    let e = errors_at(&r, Field::Dp);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("TP*CP*DP*PP=2*1*2*4=16 != WORLD_SIZE=8"),
        "{}",
        e[0]
    );
    assert!(e[0].contains("= 8 // 4 = 2."), "{}", e[0]);
    // no dp fits: tp 3 on 8 GPUs -> nearest world sizes 6 or 9, or tp 2 or 4
    let r = report("world_size=8&dp=2&tp=3&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=10");
    let e = errors_at(&r, Field::Tp);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("divisible bythe number of GPUs per model"),
        "{}",
        e[0]
    );
    assert!(e[0].contains("world_size 6 or 9"), "{}", e[0]);
    // the batch still shows (nanotron computes it from the config)
    assert_eq!(r.value(Output::GlobalBatchSize), Some(Num::Int(16)));
}

#[test]
fn huge_products_print_like_python() {
    let max = u64::MAX;
    let r = report(&format!("version=head&world_size=8&dp={max}&tp={max}&pp=1&micro_batch_size=1&batch_accumulation_per_replica=1&sequence_length=1&train_steps=1"));
    let all: Vec<String> = r.diags.iter().map(|d| d.message.clone()).collect();
    assert!(
        all.iter().any(|m| m.contains(&format!(
            "TP*CP*DP*PP={max}*1*1*{max}=340282366920938463426481119284349108225 != WORLD_SIZE=8"
        ))),
        "{all:?}"
    );
}

#[test]
fn zero_values_are_errors_at_their_field() {
    let base = "world_size=8&dp=8&tp=1&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=10";
    for (key, field) in [
        ("micro_batch_size", Field::MicroBatchSize),
        (
            "batch_accumulation_per_replica",
            Field::BatchAccumulationPerReplica,
        ),
        ("sequence_length", Field::SequenceLength),
        ("dp", Field::Dp),
        ("tp", Field::Tp),
        ("pp", Field::Pp),
    ] {
        let q = base.replace(&format!("{key}="), &format!("{key}=0&x_{key}="));
        for v in ["0.4", "head"] {
            let r = report(&format!("version={v}&{q}"));
            assert_eq!(errors_at(&r, field).len(), 1, "{v} {q}: {:?}", r.diags);
        }
    }
    // train_steps 0 runs no step: a warning, and max_steps 0
    let r = report(&base.replace("train_steps=10", "train_steps=0"));
    assert!(!r.has_errors());
    assert_eq!(r.value(Output::MaxSteps), Some(Num::Int(0)));
}

#[test]
fn one_f_one_b_needs_enough_micro_batches() {
    let r = report("world_size=8&dp=2&tp=1&pp=4&micro_batch_size=1&batch_accumulation_per_replica=2&sequence_length=1&train_steps=1");
    let w: Vec<_> = r
        .diags_for(Field::BatchAccumulationPerReplica)
        .filter(|d| d.level == Level::Warning)
        .collect();
    assert_eq!(w.len(), 1);
    assert!(w[0]
        .message
        .contains("Number of microbatches (2) must be at least PP_SIZE-1=3"));
    let r = report("world_size=8&dp=2&tp=1&pp=4&micro_batch_size=1&batch_accumulation_per_replica=3&sequence_length=1&train_steps=1");
    assert_eq!(r.diags_for(Field::BatchAccumulationPerReplica).count(), 0);
}

#[test]
fn world_check_shows_before_the_tokens_are_filled() {
    // oracle: head, ws 6, tp 4, dp 1 -> TP*CP*DP*PP=4*1*1*1=4 != WORLD_SIZE=6
    let r = report("version=head&world_size=6&dp=1&tp=4&pp=1");
    let e = errors_at(&r, Field::Tp);
    assert_eq!(e.len(), 1, "{:?}", r.diags);
    assert!(
        e[0].contains("TP*CP*DP*PP=4*1*1*1=4 != WORLD_SIZE=6"),
        "{}",
        e[0]
    );
    assert_eq!(r.value(Output::GlobalBatchSize), None);
    assert!(r
        .diags_for(Field::TrainSteps)
        .any(|d| d.level == Level::Hint && d.message.contains("\"tokens.train_steps\"")));
}

#[test]
fn missing_keys_leave_what_their_factors_allow_in_every_release() {
    // oracle (HEAD E_no_mbs_no_seq): dacite names sequence_length, not micro_batch_size
    for v in ["0.4", "head"] {
        let r = report(&format!("version={v}&world_size=8&dp=4&tp=2&pp=1&batch_accumulation_per_replica=4&train_steps=1000"));
        let seq = messages_at(&r, Field::SequenceLength, Level::Hint);
        assert_eq!(seq.len(), 1, "{v} {:?}", r.diags);
        assert!(seq[0].contains("dacite.exceptions.MissingValueError: missing value for field \"tokens.sequence_length\""));
        let mbs = messages_at(&r, Field::MicroBatchSize, Level::Hint);
        assert_eq!(mbs.len(), 1, "{v} {:?}", r.diags);
        assert!(mbs[0].contains("\"tokens.micro_batch_size\""), "{}", mbs[0]);
        assert!(!mbs[0].contains("dacite.exceptions"), "{}", mbs[0]);
        assert!(!mbs[0].contains("nanotron stops with"), "{}", mbs[0]);
        assert_eq!(r.value(Output::DpWorldSize), Some(Num::Int(4)));
        assert_eq!(
            r.value(Output::GradientAccumulationSteps),
            Some(Num::Int(4))
        );
        assert_eq!(r.value(Output::MaxSteps), Some(Num::Int(1000)));
        assert_eq!(r.value(Output::GlobalBatchSize), None);
        assert_eq!(r.value(Output::TotalTokens), None);
        // the world check still runs on the parallelism section, and passes
        assert!(!r.has_errors(), "{v} {:?}", r.diags);
        assert!(r.grid.is_some(), "{v}");
    }
    // an unreadable value still shows nothing (dpcalc's own error at that field)
    let r = report("version=head&world_size=8&dp=4&tp=2&pp=1&micro_batch_size=x&batch_accumulation_per_replica=4&train_steps=1000");
    assert_eq!(r.value(Output::DpWorldSize), None);
}

#[test]
fn head_refuses_expert_parallelism_at_the_rank_reshape() {
    // oracle C_ws8_dp8_tp1_pp1_ep2: the assertion passes (EP not counted), the reshape fails
    let r = report("version=head&world_size=8&dp=8&tp=1&pp=1&expert_parallel_size=2&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=10");
    let e = errors_at(&r, Field::ExpertParallelSize);
    assert_eq!(e.len(), 1, "{:?}", r.diags);
    assert!(e[0].contains("nanotron stops with"), "{}", e[0]);
    assert!(
        e[0].contains("ValueError: cannot reshape array of size 8 into shape (2,1,8,1,1)"),
        "{}",
        e[0]
    );
    assert_eq!(r.grid, None);
    // the values still show
    assert_eq!(r.value(Output::GlobalBatchSize), Some(Num::Int(64)));
}

#[test]
fn head_checks_tp_against_the_heads() {
    let base = "version=head&world_size=8&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=10&pp=1";
    // oracle F_heads16_kv2_tp4
    let r = report(&format!("{base}&dp=2&tp=4&model.model_config.num_attention_heads=16&model.model_config.num_key_value_heads=2"));
    let e = errors_at(&r, Field::Tp);
    assert_eq!(e.len(), 1, "{:?}", r.diags);
    assert!(e[0].contains("AssertionError: num_key_value_heads (2) must be >= tp (4)"));
    // num_key_value_heads defaults to num_attention_heads (LlamaConfig)
    let r = report(&format!(
        "{base}&dp=2&tp=4&model.model_config.num_attention_heads=8"
    ));
    assert!(!r.has_errors(), "{:?}", r.diags);
    let r = report(&format!(
        "{base}&dp=1&tp=8&model.model_config.num_attention_heads=12"
    ));
    let e = errors_at(&r, Field::Tp);
    assert!(
        e[0].contains("AssertionError: num_attention_heads (12) must be divisible by tp (8)"),
        "{e:?}"
    );
    // 0.4 has no such check
    let r = report(&format!("{base}&dp=2&tp=4&model.model_config.num_attention_heads=16&model.model_config.num_key_value_heads=2").replace("version=head", "version=0.4"));
    assert!(!r.has_errors(), "{:?}", r.diags);
    // without the model keys only tp 0 is certain: one error at tp, with both of HEAD's texts
    let r = report(&format!("{base}&dp=8&tp=0"));
    let e = errors_at(&r, Field::Tp);
    assert_eq!(e.len(), 1, "{:?}", r.diags);
    assert!(e[0].contains("ZeroDivisionError: integer modulo by zero"));
    assert!(e[0].contains("AssertionError: TP*CP*DP*PP=0*1*1*8=0 != WORLD_SIZE=8"));
}

#[test]
fn head_needs_the_sequence_to_split_evenly_over_cp() {
    // oracle B_ws8_cp2_seq2047
    let r = report("version=head&world_size=8&dp=2&tp=2&pp=1&context_parallel_size=2&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2047&train_steps=10");
    let e = errors_at(&r, Field::SequenceLength);
    assert_eq!(e.len(), 1, "{:?}", r.diags);
    assert!(e[0].contains("AssertionError: sequence_length 2047 must be divisible by cp_size 2"));
    assert!(e[0].contains("2046 or 2048"), "{}", e[0]);
    // the layout itself launches
    assert!(r.grid.is_some());
}

// ---- the model stage's keys, each with its memory effect from nanotron's code ----------------
// (huggingface/nanotron@2411b022a75fb7f7561a1bb4166706da5e1b76de; src/calc/frameworks/nanotron/model.rs
// cites each function)

const LLAMA: &str = "model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=1&sequence_length=2048&train_steps=10";

fn bytes(r: &Report, o: Output) -> i128 {
    match r.value(o) {
        Some(Num::Int(v)) => v,
        other => panic!("{}: {other:?} {:?}", o.name(), r.diags),
    }
}

fn states(q: &str) -> (i128, i128, i128) {
    let r = report(&format!("{LLAMA}&{q}"));
    assert!(
        r.diags.iter().all(|d| d.level != Level::Error),
        "{q}: {:?}",
        r.diags
    );
    (
        bytes(&r, Output::WeightsBytes),
        bytes(&r, Output::GradientsBytes),
        bytes(&r, Output::OptimizerBytes),
    )
}

/// helpers.py `init_optimizer_and_grad_accumulator` and optim/gradient_accumulator.py
/// `FP32GradientAccumulator`: fp32 accumulation keeps an fp32 gradient buffer for every
/// parameter (ZeRO-1 or not) and fp32 master weights with fp32 AdamW states (sharded by
/// ZeRO-1); without it AdamW runs on the bf16 parameters (bf16 states, no master, bf16
/// gradients). Any zero_stage above 0 is the same ZeroDistributedOptimizer.
#[test]
fn zero_stage_and_fp32_accumulation_follow_nanotrons_optimizer() {
    let psi = bytes(&report(LLAMA_DP4), Output::NumParameters);
    let g = |q: &str| {
        states(&format!(
            "world_size=4&dp=4&tp=1&pp=1&batch_accumulation_per_replica=1&{q}"
        ))
    };
    assert_eq!(
        g("zero_stage=0&accumulate_grad_in_fp32=true"),
        (2 * psi, 4 * psi, 12 * psi)
    );
    assert_eq!(
        g("zero_stage=1&accumulate_grad_in_fp32=true"),
        (2 * psi, 4 * psi, 3 * psi)
    );
    assert_eq!(
        g("zero_stage=0&accumulate_grad_in_fp32=false"),
        (2 * psi, 2 * psi, 4 * psi)
    );
    assert_eq!(
        g("zero_stage=1&accumulate_grad_in_fp32=false"),
        (2 * psi, 2 * psi, psi)
    );
    // absent (both are required in nanotron's config): dpcalc's count from before
    assert_eq!(g(""), (2 * psi, 2 * psi, 12 * psi));
    // a stage above 1 is ZeRO-1, said at the key
    assert_eq!(
        g("zero_stage=3&accumulate_grad_in_fp32=true"),
        g("zero_stage=1&accumulate_grad_in_fp32=true")
    );
    let r = report(&format!("{LLAMA_DP4}&zero_stage=3"));
    assert!(messages_at(&r, Field::NanotronZeroStage, Level::Warning)
        .iter()
        .any(|m| m.contains("ZeRO-1 only")));
    assert!(!errors_at(
        &report(&format!("{LLAMA_DP4}&accumulate_grad_in_fp32=maybe")),
        Field::AccumulateGradInFp32
    )
    .is_empty());
}

const LLAMA_DP4: &str = "world_size=4&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=1&sequence_length=2048&train_steps=10&dp=4&tp=1&pp=1&batch_accumulation_per_replica=1";

/// `tp_mode: REDUCE_SCATTER` is sequence parallelism (the column linears save their TP-sharded
/// input); `tp_linear_async_communication` saves the same tensors (`_ColumnLinearAsyncCommunication`
/// saves `(tensor, weight)` as the synchronous path does).
#[test]
fn tp_mode_shards_the_activations_and_async_communication_does_not_change_them() {
    let act = |q: &str| {
        bytes(
            &report(&format!(
                "{LLAMA}&dp=2&tp=4&pp=1&batch_accumulation_per_replica=1&{q}"
            )),
            Output::ActivationBytes,
        )
    };
    let all_reduce = act("tp_mode=ALL_REDUCE");
    assert_eq!(act(""), all_reduce);
    let reduce_scatter = act("tp_mode=reduce_scatter");
    assert!(reduce_scatter < all_reduce, "{reduce_scatter} {all_reduce}");
    // what sequence parallelism shards: the two norms' inputs and outputs (8 bytes per token
    // and hidden unit in each of the 32 layers) and the output layer's fp32 input (4), 3/4 of
    // them gone at tp 4 (2,048 tokens, 4,096 wide)
    assert_eq!(
        all_reduce - reduce_scatter,
        (32 * 8 + 4) * 2048 * 4096 * 3 / 4
    );
    for mode in ["ALL_REDUCE", "REDUCE_SCATTER"] {
        assert_eq!(
            act(&format!(
                "tp_mode={mode}&tp_linear_async_communication=true"
            )),
            act(&format!(
                "tp_mode={mode}&tp_linear_async_communication=false"
            )),
        );
    }
    let r = report(&format!("{LLAMA_DP4}&tp_mode=SEQUENCE"));
    assert!(errors_at(&r, Field::TpMode)
        .iter()
        .any(|m| m.contains("KeyError: 'SEQUENCE'")));
}

/// engine.py: `afab` (the default) registers every micro batch's loss before any backward, so
/// all `batch_accumulation_per_replica` micro batches are held, also at pp 1; `1f1b` holds at
/// most pp − rank and asserts at least pp − 1 micro batches.
#[test]
fn pp_engine_decides_the_micro_batches_in_flight() {
    let act = |q: &str| {
        bytes(
            &report(&format!("{LLAMA}&dp=8&tp=1&pp=1&{q}")),
            Output::ActivationBytes,
        )
    };
    let one = act("batch_accumulation_per_replica=1&pp_engine=afab");
    assert_eq!(act("batch_accumulation_per_replica=1&pp_engine=1f1b"), one);
    assert_eq!(act("batch_accumulation_per_replica=4&pp_engine=1f1b"), one);
    let four = act("batch_accumulation_per_replica=4&pp_engine=afab");
    assert_eq!(act("batch_accumulation_per_replica=4"), four);
    // the output layer's transient logits are counted once; everything else four times
    assert!(four > 3 * one && four < 4 * one, "{one} {four}");
    // pp 4, 1f1b, 2 micro batches: fewer than pp − 1
    let r = report(&format!(
        "{LLAMA}&dp=2&tp=1&pp=4&batch_accumulation_per_replica=2&pp_engine=1f1b"
    ));
    assert!(errors_at(&r, Field::PpEngine)
        .iter()
        .any(|m| m.contains("must be at least PP_SIZE-1=3")));
    let r = report(&format!("{LLAMA_DP4}&pp_engine=AFAB"));
    assert!(errors_at(&r, Field::PpEngine)
        .iter()
        .any(|m| m.contains("['afab', '1f1b'] and not AFAB")));
}

/// The keys are read from a pasted config under their sections and written back there.
#[test]
fn the_memory_keys_import_and_export_in_their_sections() {
    use dpcalc::calc::{export::export, import::import, Framework};
    let yaml = "parallelism:\n  dp: 2\n  tp: 2\n  pp: 1\n  pp_engine: 1f1b\n  tp_mode: REDUCE_SCATTER\n  tp_linear_async_communication: true\noptimizer:\n  zero_stage: 1\n  accumulate_grad_in_fp32: true\n  learning_rate_scheduler:\n    lr_warmup_steps: 5\ntokens:\n  micro_batch_size: 1\n  batch_accumulation_per_replica: 2\n  sequence_length: 2048\n  train_steps: 10\n";
    let got = import(yaml);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    for (f, v) in [
        (Field::PpEngine, "1f1b"),
        (Field::TpMode, "REDUCE_SCATTER"),
        (Field::TpLinearAsyncCommunication, "true"),
        (Field::NanotronZeroStage, "1"),
        (Field::AccumulateGradInFp32, "true"),
    ] {
        assert_eq!(got.get(f), Some(v), "{f:?}");
    }
    let raw = got.raw();
    let fw = Framework::from_id("nanotron").unwrap();
    let rel = fw.default_release().id;
    let e = export(fw, rel, &raw, &fw.compute(rel, &raw));
    assert_eq!(e.text.matches("\noptimizer:\n").count(), 1, "{}", e.text);
    assert!(e.text.contains("optimizer:\n  zero_stage: 1\n  accumulate_grad_in_fp32: true\n  learning_rate_scheduler:\n    lr_warmup_steps: 5\n"), "{}", e.text);
    let back = import(&e.text);
    for f in [
        Field::PpEngine,
        Field::TpMode,
        Field::NanotronZeroStage,
        Field::AccumulateGradInFp32,
        Field::LrSchedulerWarmupSteps,
    ] {
        assert_eq!(back.get(f), got.get(f), "{f:?}: {}", e.text);
    }
}
