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
