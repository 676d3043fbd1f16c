//! Megatron-LM's own launch scripts, pasted as they are: each goes through the page's
//! Import (`calc::import::read`, then `Imported::merged_into` and `Action::Import`), and the test
//! checks what it fills, what it ignores, and what megatron-core 0.19.2 computes from it. The
//! files, their repository, path and commit, and the hand-checked values with the commands that
//! settled them are in `tests/fixtures/configs/real/README.md` and the `.expect` beside each file
//! (which `tests/real_configs.rs` checks line by line); this file checks the reading itself
//! against what bash passes (`tests/fixtures/shell/`) and what a `.expect` cannot say.

use crate::common::report::{errors, int};
use dpcalc::calc::import::shell;
use dpcalc::calc::import::{self, Imported};
use dpcalc::calc::{Field, Framework, Level, Num, Output};
use dpcalc::state::{Action, State};

const GPT3_175B: &str =
    include_str!("fixtures/configs/real/megatron/train_gpt3_175b_distributed.sh");
const LLAMA3_8B: &str = include_str!("fixtures/configs/real/megatron/train_llama3_8b_h100_fp8.sh");
const MIXTRAL: &str =
    include_str!("fixtures/configs/real/megatron/train_mixtral_8x7b_distributed.sh");
const FSDP: &str = include_str!("fixtures/configs/real/megatron/train_llama3_8b_fsdp_h100_fp8.sh");
const MAMBA: &str = include_str!("fixtures/configs/real/megatron/train_mamba.sh");
/// What bash 5.2 passes to torchrun for each script, one word a line (README.md says how).
const GPT3_175B_BASH: &str = include_str!("fixtures/shell/train_gpt3_175b_distributed.bash-words");
const LLAMA3_8B_BASH: &str = include_str!("fixtures/shell/train_llama3_8b_h100_fp8.bash-words");
const MIXTRAL_BASH: &str = include_str!("fixtures/shell/train_mixtral_8x7b_distributed.bash-words");
const FSDP_BASH: &str = include_str!("fixtures/shell/train_llama3_8b_fsdp_h100_fp8.bash-words");
const MAMBA_BASH: &str = include_str!("fixtures/shell/train_mamba.bash-words");

/// The page's Import on a fresh page (as `tests/real_configs.rs` pastes).
fn paste(text: &str) -> (Imported, State) {
    paste_on("", text)
}

fn pairs(list: &[(Field, &str)]) -> Vec<(Field, String)> {
    list.iter().map(|(f, v)| (*f, v.to_string())).collect()
}

#[test]
fn the_scripts_expand_as_bash_expands_them() {
    // bash ran without arguments in /tmp/expand: an unset `$1` vanishes there (inside a word
    // too) and `$PWD` is that directory; dpcalc keeps both as written (never a value)
    for (script, bash, runner) in [
        (GPT3_175B, GPT3_175B_BASH, 0),
        (LLAMA3_8B, LLAMA3_8B_BASH, 0),
        (MIXTRAL, MIXTRAL_BASH, 0),
        (MAMBA, MAMBA_BASH, 0),
        // bash's first two words are the runner `uv run`: dpcalc's command is what it runs
        (FSDP, FSDP_BASH, 2),
    ] {
        let got = shell::read(script);
        assert_eq!(got.commands, 1);
        assert!(!got.too_large);
        assert_eq!(got.origins.len(), got.command.len());
        let ours: Vec<String> = got
            .command
            .iter()
            .map(|w| {
                let w = w.replace("${PWD}", "/tmp/expand");
                (1..=9).fold(w, |w, n| w.replace(&format!("${n}"), ""))
            })
            .filter(|w| !w.is_empty())
            .collect();
        let theirs: Vec<&str> = bash.lines().skip(runner).collect();
        assert_eq!(ours, theirs);
    }
    let runner: Vec<&str> = FSDP_BASH.lines().take(2).collect();
    assert_eq!(runner, ["uv", "run"]);
}

#[test]
fn gpt3_175b_script_pasted_as_it_is() {
    let (got, state) = paste(GPT3_175B);
    assert_eq!(got.framework, Framework::Megatron);
    assert_eq!(
        got.summary(),
        "Read as Megatron-LM: 15 setting(s) filled in. 1 could not be read and is left empty \
         (see below); the results are this paste's."
    );
    // torchrun's flags from DISTRIBUTED_ARGS with GPUS_PER_NODE=8, NUM_NODES=1; the training
    // flags from the arrays
    assert_eq!(
        got.inputs,
        pairs(&[
            (Field::GpusPerNode, "8"),
            (Field::Nodes, "1"),
            (Field::NumLayers, "96"),
            (Field::HiddenSize, "12288"),
            (Field::ModelNumAttentionHeads, "96"),
            (Field::SeqLength, "2048"),
            (Field::MaxPositionEmbeddings, "2048"),
            (Field::AttentionBackend, "auto"),
            (Field::MicroBatchSize, "1"),
            (Field::GlobalBatchSize, "1536"),
            (Field::TrainIters, "500000"),
            (Field::LrWarmupFraction, ".001"),
            (Field::LrDecayIters, "430000"),
            (Field::TensorModelParallelSize, "8"),
            (Field::PipelineModelParallelSize, "16"),
        ])
    );
    for read in [
        "--micro-batch-size",
        "--global-batch-size",
        "--train-iters",
        "--lr-decay-iters",
    ] {
        assert!(!got.unknown.iter().any(|u| u == read), "{read}");
    }
    assert!(got.unknown.iter().any(|u| u == "--save"));
    // `--save $CHECKPOINT_PATH` (= $1) is an ignored flag: no message for it
    assert_eq!(got.errors.len(), 1, "{:?}", got.errors);
    // the array quotes the schedule, but `${TRAINING_ARGS[@]}` unquoted splits it: Megatron's
    // argparse stops (oracle case script_train_gpt3_175b_distributed_args); nothing is taken
    assert!(got.errors[0].contains(
        "--step-batch-size-schedule takes 1 word(s) but is followed by 6 (0:16 2.4B:320 4.8B:624"
    ));
    assert!(got.errors[0].contains(
        "argparse stops: \u{201c}unrecognized arguments: 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B"
    ));
    assert_eq!(got.get(Field::StepBatchSizeSchedule), None);
    // on the script's own 1 × 8 GPUs: validate_args refuses TP 8 × PP 16 (oracle case
    // script_gpt3_schedule_quoted)
    assert_eq!(int(&state.report, Output::WorldSize), Some(8));
    assert!(errors(&state.report).iter().any(|e| e
        .contains("AssertionError: world size (8) is not divisible by total_model_size (total_model_size=128)")));
    // on 16 × 8 GPUs (megatron19-27's case gpt3_175b_128gpus): the warmup is 0.001 ×
    // lr_decay_iters × global batch = 0.001 × 430,000 × 1,536 = 660,480.0 samples (not 0.001 ×
    // 500,000 × 1,536 = 768,000), reached after ceil(660,480 / 1,536) = 430 steps
    let state = state
        .reduce(Action::Set(Field::Nodes, "16".into()))
        .unwrap();
    assert!(
        errors(&state.report).is_empty(),
        "{:?}",
        errors(&state.report)
    );
    assert_eq!(int(&state.report, Output::WorldSize), Some(128));
    assert_eq!(int(&state.report, Output::DpWorldSize), Some(1));
    assert_eq!(int(&state.report, Output::NumMicrobatches), Some(1536));
    assert_eq!(int(&state.report, Output::TrainIters), Some(500_000));
    assert_eq!(
        state.report.value(Output::LrWarmupSteps),
        Some(Num::Float(660_480.0))
    );
    assert_eq!(int(&state.report, Output::WarmupSteps), Some(430));
    // the model: Megatron's GPT from its arguments (GeLU, biases, LayerNorm, learned positions,
    // tied); its vocabulary is in the --vocab-file, which dpcalc does not read
    assert_eq!(int(&state.report, Output::NumParameters), None);
    assert!(state
        .report
        .diags_for(Field::VocabSize)
        .any(|d| d.level == Level::Hint));
    // with GPT-2's 50,257 tokens: megatron-core 0.19.2's GPTModel and report_theoretical_memory
    // (tests/fixtures/model_megatron.json, gpt3_175b_script_128gpus)
    let with_vocab = state
        .clone()
        .reduce(Action::Set(Field::VocabSize, "50257".into()))
        .unwrap();
    assert_eq!(
        int(&with_vocab.report, Output::NumParameters),
        Some(174_604_259_328)
    );
    assert_eq!(
        with_vocab.report.value(Output::TotalMemoryMb),
        Some(Num::Float(56_536.151_367_187_5))
    );
    // the schedule as one word: with --global-batch-size, refused (oracle case
    // script_gpt3_schedule_quoted_128gpus)
    let state = state
        .reduce(Action::Set(
            Field::StepBatchSizeSchedule,
            "0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536".into(),
        ))
        .unwrap();
    let errs = errors(&state.report);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains(
        "ValueError: Cannot specify both --step-batch-size-schedule and --global-batch-size"
    ));
}

#[test]
fn llama3_8b_script_pasted_as_it_is() {
    let (got, state) = paste(LLAMA3_8B);
    assert_eq!(got.framework, Framework::Megatron);
    // MICRO_BATCH_SIZE=1, GLOBAL_BATCH_SIZE=128, TP_SIZE=1, … assigned in the paste
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    for (f, v) in [
        (Field::GpusPerNode, "8"),
        (Field::Nodes, "1"),
        (Field::NumLayers, "32"),
        (Field::SeqLength, "8192"),
        (Field::MicroBatchSize, "1"),
        (Field::GlobalBatchSize, "128"),
        (Field::TrainSamples, "1953125000"),
        (Field::LrDecaySamples, "1949218748"),
        (Field::LrWarmupSamples, "3906252"),
        (Field::TensorModelParallelSize, "1"),
        (Field::ContextParallelSize, "1"),
    ] {
        assert_eq!(got.get(f), Some(v), "{f:?}");
    }
    // PP_SIZE is set but its flag is commented out
    assert_eq!(got.get(Field::PipelineModelParallelSize), None);
    assert!(
        errors(&state.report).is_empty(),
        "{:?}",
        errors(&state.report)
    );
    // megatron-core 0.19.2 on the expanded command (oracle case script_train_llama3_8b_h100_fp8):
    // dp = 8 // (1 × 1 × 1) = 8; 128 / (1 × 8) = 16 microbatches; train_iters = 1953125000 // 128
    // = 15258789; warmup 3906252 samples, ceil(3906252 / 128) = 30518 steps
    assert_eq!(int(&state.report, Output::DpWorldSize), Some(8));
    assert_eq!(int(&state.report, Output::GlobalBatchSize), Some(128));
    assert_eq!(int(&state.report, Output::NumMicrobatches), Some(16));
    assert_eq!(int(&state.report, Output::TrainIters), Some(15_258_789));
    assert_eq!(int(&state.report, Output::LrWarmupSteps), Some(3_906_252));
    assert_eq!(int(&state.report, Output::WarmupSteps), Some(30_518));
}

/// The page's Import on the page of `query` (as `tests/common` pastes): its cluster wins over a
/// script's default of an unset variable.
fn paste_on(query: &str, text: &str) -> (Imported, State) {
    let page = State::from_query(query);
    let mut got = import::read(page.link.framework, None, text);
    got.settle(&page.link.inputs);
    assert!(got.applicable(), "{:?}", got.errors);
    let inputs = got.merged_into(&page.link.inputs);
    let state = page
        .clone()
        .reduce(Action::Import(got.framework, got.release, inputs))
        .unwrap_or(page);
    (got, state)
}

#[test]
fn mixtral_script_keeps_the_cluster_given_over_its_slurm_default() {
    // NNODES=${SLURM_NNODES:-"1"}: bash takes 1 where SLURM_NNODES is not set; dpcalc says so once
    let default =
        "$SLURM_NNODES is an environment variable not set where dpcalc reads the script: \
                   its default 1 (through NNODES) gives --nnodes.";
    let (got, state) = paste(MIXTRAL);
    assert_eq!(got.notes, [default]);
    assert_eq!(got.get(Field::Nodes), Some("1"));
    assert_eq!(state.link.inputs.get(Field::Nodes), "1");
    assert_eq!(int(&state.report, Output::WorldSize), Some(8));
    // a 4-node page keeps its 4 nodes, and says which value came from the default
    let (got, state) = paste_on("framework=megatron&nodes=4&gpus_per_node=8", MIXTRAL);
    assert_eq!(
        got.notes,
        [
            default,
            "nodes: the 4 already given is kept rather than 1, the default of SLURM_NNODES."
        ]
    );
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(state.link.inputs.get(Field::Nodes), "4");
    assert!(
        errors(&state.report).is_empty(),
        "{:?}",
        errors(&state.report)
    );
    // megatron-core 0.19.2 on 4 × 8 GPUs: dp = 32 // (TP 1 × PP 4) = 8, 256 // (1 × 8) = 32
    // microbatches; the expert grid 1 × 8 × 4 = 32 divides 32
    assert_eq!(int(&state.report, Output::WorldSize), Some(32));
    assert_eq!(int(&state.report, Output::DpWorldSize), Some(8));
    assert_eq!(int(&state.report, Output::NumMicrobatches), Some(32));
    // the script's own GPUS_PER_NODE=8 is no default: it is the script's
    assert_eq!(got.get(Field::GpusPerNode), Some("8"));
    // a page whose nodes equal the default: nothing to keep, the default alone is named
    let (got, _) = paste_on("framework=megatron&nodes=1", MIXTRAL);
    assert_eq!(got.notes, [default]);
}

#[test]
fn fsdp_script_runs_behind_uv_run_and_an_empty_profiler_array() {
    let got = shell::read(FSDP);
    assert_eq!(&got.command[..3], ["python", "-m", "torch.distributed.run"]);
    // USE_UV, NSYS_PROFILE, USE_MEGATRON_FSDP, … take their defaults; none gives a value dpcalc
    // fills, so no note names them
    assert!(got
        .defaults
        .iter()
        .any(|d| d.name == "USE_UV" && d.value == "1"));
    let (imported, _) = paste(FSDP);
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    // the arrays reassigned and appended inside `if`: --use-distributed-optimizer comes from
    // `TRAINING_ARGS+=("${DDP_ARGS[@]}")`, --use-megatron-fsdp from the reassignment
    for flag in ["--use-megatron-fsdp", "--ckpt-format", "--fp8-format"] {
        assert!(got.command.iter().any(|w| w == flag), "{flag}");
    }
    assert_eq!(imported.get(Field::UseDistributedOptimizer), Some("true"));
    // the mock-data branch (`${2:-"MOCK"}`): --vocab-size 128256
    assert_eq!(imported.get(Field::VocabSize), Some("128256"));
}

#[test]
fn mamba_script_runs_the_case_arm_of_the_value_it_sets() {
    let (got, _) = paste(MAMBA);
    // MODEL_SCALE="800M": TENSOR_MODEL_PARALLEL_SIZE=1 and GLOBAL_BATCH_SIZE=32, not the 8B
    // arm's 4 and 8
    assert_eq!(got.get(Field::TensorModelParallelSize), Some("1"));
    assert_eq!(got.get(Field::GlobalBatchSize), Some("32"));
    assert!(got.errors.is_empty(), "{:?}", got.errors);
}

#[test]
fn an_unknown_value_is_named_once_and_never_taken() {
    let script = "MBS=$1\nGBS=${2:-64}\nNODES=$((2*$3))\nARGS=(--micro-batch-size $MBS --global-batch-size $GBS)\n\
                  torchrun --nnodes $NODES --nproc-per-node 8 pretrain_gpt.py ${ARGS[@]} --train-iters $1 --save $1\n";
    let got = import::read(Framework::Megatron, None, script);
    assert_eq!(
        got.inputs,
        pairs(&[(Field::GpusPerNode, "8"), (Field::GlobalBatchSize, "64")])
    );
    assert_eq!(
        got.errors,
        [
            "$3 is not set in the script (a script argument or an environment variable); dpcalc cannot \
             know its value, so --nnodes is left empty",
            "$1 is not set in the script (a script argument or an environment variable); dpcalc cannot \
             know its value, so --micro-batch-size and --train-iters are left empty",
        ]
    );
    // a script with no training command reads nothing
    let got = import::read(
        Framework::Megatron,
        None,
        "A=1\necho $A --micro-batch-size 2\n",
    );
    assert!(got.inputs.is_empty());
    assert!(
        got.errors[0].contains("runs no training command"),
        "{:?}",
        got.errors
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Script-like text (assignments, arrays, expansions, quotes, conditions) never panics,
        /// and an unknown never becomes a value.
        #[test]
        fn script_like_text_never_panics(text in "A=\\(\n(\\$\\{?[A-Z1@#]{0,3}(\\[@\\])?(:-)?\\}?|\\$\\(\\(|\\)\\)|[A-Z]{1,3}\\+?=\\(?|[()\\[\\]{}\"'`\\\\;|&!*/+-]|if |then|else|fi|--[a-z-]{1,12}|torchrun|t\\.py|\n| |[0-9]){0,120}") {
            let got = import::read(Framework::Megatron, None, &text);
            prop_assert!(got.unknown.len() <= 101 && got.errors.len() <= 101);
            prop_assert!(got.inputs.iter().all(|(_, v)| !v.contains('$')));
            let s = shell::read(&text);
            prop_assert!(s.command.len() <= shell::MAX_WORDS);
        }
    }
}
