//! Config import: real-world axolotl YAML, DeepSpeed JSON and Megatron-LM command lines fill the
//! form; unknown keys are listed; parse errors say where; hostile texts (huge, deeply nested,
//! alias bombs, control characters) never panic, hang or blow up memory.

use dpcalc::calc::import::{
    detect, detect_format, import, import_as, read, Format, Scope, MAX_INPUT, NOT_A_CONFIG,
};
use dpcalc::calc::{Field, Framework};
use std::time::{Duration, Instant};

// ---- axolotl YAML ------------------------------------------------------------------------

const AXOLOTL_YML: &str = include_str!("fixtures/configs/axolotl.yml");

#[test]
fn axolotl_yaml_fills_its_fields() {
    let got = import(AXOLOTL_YML);
    assert_eq!(got.framework, Framework::Axolotl);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let want: Vec<(Field, String)> = [
        // the model key: an unknown Hub id is a note, not an error
        (Field::BaseModel, "NousResearch/Meta-Llama-3-8B"),
        (Field::ValSetSize, "0.05"),
        (Field::SequenceLen, "4096"),
        (Field::SamplePacking, "true"),
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumEpochs, "1.5"),
        (Field::WarmupRatio, "0.1"),
        (Field::EvalsPerEpoch, "4"),
        // the deprecated alias of context_parallel_size
        (Field::ContextParallelSize, "2"),
        // a quoted number is text; the form's parser reads it (pydantic coerces "2" too)
        (Field::TensorParallelSize, "2"),
        // fsdp_config's `fsdp_` prefix is stripped, as axolotl does (0.21.0: FSDP2 with offload)
        (Field::FsdpOffloadParams, "true"),
    ]
    .iter()
    .map(|(f, v)| (*f, v.to_string()))
    .collect();
    assert_eq!(got.inputs, want);
    // max_steps: null and saves_per_epoch: ~ are unset; nested keys and lists are unknown
    assert_eq!(
        got.unknown,
        [
            "load_in_8bit",
            "datasets",
            "pad_to_sequence_len",
            "special_tokens"
        ]
    );
}

#[test]
fn yaml_anchors_aliases_and_merge_keys() {
    let got = import("micro_batch_size: &m 4\ngradient_accumulation_steps: *m\nbase: &b {x: 1}\n<<: *b\nnum_epochs: *b\n");
    assert_eq!(
        got.inputs,
        [
            (Field::MicroBatchSize, "4".to_string()),
            (Field::GradientAccumulationSteps, "4".to_string()),
        ]
    );
    // an alias of a mapping is never expanded: the key is listed as unknown
    assert_eq!(got.unknown, ["base", "<<", "num_epochs"]);
}

#[test]
fn yaml_duplicate_keys_are_an_error_and_neither_value_is_taken() {
    let got = import("micro_batch_size: 2\nnum_epochs: 1\nmicro_batch_size: 4\n");
    assert_eq!(got.inputs, [(Field::NumEpochs, "1".to_string())]);
    assert_eq!(got.errors.len(), 1);
    assert!(
        got.errors[0]
            .contains("line 3, column 1: micro_batch_size is given again (first line 1, column 1)"),
        "{:?}",
        got.errors
    );
}

#[test]
fn yaml_errors_say_where() {
    let got = import("micro_batch_size: 2\nnum_epochs: [1, 2\n");
    assert_eq!(got.errors.len(), 1);
    assert!(
        got.errors[0].starts_with("YAML error at line "),
        "{:?}",
        got.errors
    );
    let got = import("micro_batch_size: 2\n  bad: indent\n");
    assert!(got.errors[0].contains("line 2"), "{:?}", got.errors);
    let got = import("- a\n- b\n");
    assert!(got.errors[0].contains("is a list"));
    // a text that is no config gets the one sentence
    for text in ["just text", "Hello,\nthis is a letter.\n", "null\n"] {
        let got = import(text);
        assert_eq!(got.errors, [NOT_A_CONFIG], "{text:?}");
        assert!(got.inputs.is_empty());
    }
    // forced as axolotl, the YAML reader says what it is
    let got = import_as(Framework::Axolotl, "just text");
    assert!(got.errors[0].contains("single value"));
    let got = import("micro_batch_size: 2\n---\nmicro_batch_size: 3\n");
    assert!(got.errors[0].contains("second YAML document"));
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
    // empty texts and comments only: nothing read, so the one sentence (and the page keeps
    // its inputs); read in a framework's format they are nothing, and nothing wrong
    for empty in ["", "   \n", "# only a comment\n", "---\n", "null\n"] {
        let got = import(empty);
        assert_eq!(got.errors, [NOT_A_CONFIG], "{empty:?}");
        let got = import_as(Framework::Axolotl, empty);
        assert!(
            got.inputs.is_empty() && got.errors.is_empty(),
            "{empty:?}: {got:?}"
        );
    }
}

// ---- DeepSpeed JSON ----------------------------------------------------------------------

#[test]
fn deepspeed_json_fills_its_fields() {
    let text = r#"{
      "train_batch_size": 256,
      "train_micro_batch_size_per_gpu": 4,
      "gradient_accumulation_steps": 8,
      "sequence_parallel_size": 2,
      "tensor_parallel": {"autotp_size": 2, "tp_overlap_comm": true},
      "zero_optimization": {"stage": 3, "overlap_comm": true},
      "bf16": {"enabled": true},
      "steps_per_print": 10
    }"#;
    let got = import(text);
    assert_eq!(got.framework, Framework::DeepSpeed);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let get = |f| got.get(f);
    assert_eq!(get(Field::TrainBatchSize), Some("256"));
    assert_eq!(get(Field::TrainMicroBatchSizePerGpu), Some("4"));
    assert_eq!(get(Field::GradientAccumulationSteps), Some("8"));
    assert_eq!(get(Field::SequenceParallelSize), Some("2"));
    assert_eq!(get(Field::AutotpSize), Some("2"));
    // a nested key is read by its dotted path (the ZeRO stage)
    assert_eq!(get(Field::ZeroStage), Some("3"));
    let mut unknown = got.unknown.clone();
    unknown.sort();
    assert_eq!(
        unknown,
        [
            "bf16.enabled",
            "steps_per_print",
            "tensor_parallel.tp_overlap_comm",
            "zero_optimization.overlap_comm"
        ]
    );
}

#[test]
fn deepspeed_auto_is_reported_not_taken() {
    let got = import(
        r#"{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4}"#,
    );
    assert_eq!(
        got.inputs,
        [(Field::GradientAccumulationSteps, "4".to_string())]
    );
    assert_eq!(got.errors.len(), 2);
    assert!(got
        .errors
        .iter()
        .all(|e| e.contains("\"auto\"") && e.contains("Hugging Face Trainer")));
}

#[test]
fn deepspeed_odd_values() {
    let got = import(
        r#"{"train_batch_size": "32", "gradient_accumulation_steps": null, "train_micro_batch_size_per_gpu": 2.5, "sequence_parallel_size": true}"#,
    );
    // a string is refused; null is unset; 2.5 is handed to the form, whose parser says what is wrong
    assert_eq!(
        got.inputs,
        [(Field::TrainMicroBatchSizePerGpu, "2.5".to_string())]
    );
    assert!(got.errors.iter().any(|e| e.contains("the string \"32\"")));
    assert!(got
        .errors
        .iter()
        .any(|e| e.contains("sequence_parallel_size is a boolean")));
    let got = import(r#"{"train_batch_size": 8, "train_batch_size": 16}"#);
    assert!(
        got.errors
            .iter()
            .any(|e| e.contains("given more than once")),
        "{:?}",
        got.errors
    );
}

#[test]
fn json_errors_say_where() {
    let got = import("{\n  \"train_batch_size\": 8,\n  \"x\": [1,\n}");
    assert_eq!(got.errors.len(), 1);
    assert!(
        got.errors[0].starts_with("JSON error at line 4, column 1: "),
        "{:?}",
        got.errors
    );
    let got = import_as(Framework::DeepSpeed, "[1, 2]");
    assert!(got.errors[0].contains("not an object"));
    // JSON with comments (which DeepSpeed's json.load refuses too)
    let got = import("{ // batch\n \"train_batch_size\": 8 }");
    assert!(got.errors[0].contains("line 1"), "{:?}", got.errors);
}

// ---- Megatron-LM -------------------------------------------------------------------------

const MEGATRON_SH: &str = include_str!("fixtures/configs/megatron.sh");

#[test]
fn megatron_command_line_fills_its_fields() {
    let got = import(MEGATRON_SH);
    assert_eq!(got.framework, Framework::Megatron);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let want: Vec<(Field, String)> = [
        (Field::GpusPerNode, "8"),
        (Field::Nodes, "2"),
        (Field::TensorModelParallelSize, "2"),
        (Field::PipelineModelParallelSize, "4"),
        (Field::NumLayers, "32"),
        (Field::MicroBatchSize, "1"),
        (Field::GlobalBatchSize, "512"),
        (Field::RampupBatchSize, "32 32 1000000"),
        (Field::DecreaseBatchSizeIfNeeded, "true"),
        (Field::TrainSamples, "10000000"),
        (Field::SeqLength, "4096"),
        (Field::LrWarmupFraction, ".01"),
        (Field::StepBatchSizeSchedule, "0:256 1000:512"),
    ]
    .iter()
    .map(|(f, v)| (*f, v.to_string()))
    .collect();
    assert_eq!(got.inputs, want);
    assert_eq!(
        got.unknown,
        [
            "--node_rank",
            "--master_addr",
            "--lr",
            "--bf16",
            "--data-path"
        ]
    );
}

#[test]
fn megatron_edge_cases() {
    // no launcher; shell variables are not guessed
    let got = import("--micro-batch-size $MBS --global-batch-size 64 --train-iters");
    assert_eq!(got.inputs, [(Field::GlobalBatchSize, "64".to_string())]);
    assert!(got
        .errors
        .iter()
        .any(|e| e.contains("--micro-batch-size $MBS: a shell variable")));
    assert!(got
        .errors
        .iter()
        .any(|e| e.contains("--train-iters needs a value")));
    // a repeated flag is an error (argparse would keep the last silently)
    let got = import("--micro-batch-size 1 --micro-batch-size 2");
    assert!(got.inputs.is_empty());
    assert!(got.errors[0].contains("given again"));
    // an unclosed quote
    let got = import("python pretrain_gpt.py \\\n --step-batch-size-schedule \"0:16");
    assert!(got.errors[0].contains("unclosed quote"), "{:?}", got.errors);
    assert!(got.errors[0].contains("line 2"), "{:?}", got.errors);
    // negative values are values, and a store_true flag followed by a word
    let got = import("--global-batch-size -1 --decrease-batch-size-if-needed extra");
    assert_eq!(got.get(Field::GlobalBatchSize), Some("-1"));
    assert_eq!(got.get(Field::DecreaseBatchSizeIfNeeded), Some("true"));
    assert_eq!(got.unknown, ["extra"]);
    // python -m torch.distributed.run as the launcher
    let got = import(
        "python -m torch.distributed.run --nproc-per-node=4 pretrain_gpt.py --micro-batch-size 2",
    );
    assert_eq!(got.get(Field::GpusPerNode), Some("4"));
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
}

#[test]
fn detection() {
    assert_eq!(detect("  {\"train_batch_size\": 1}"), Framework::DeepSpeed);
    assert_eq!(detect("\u{feff}{}"), Framework::DeepSpeed);
    assert_eq!(
        detect("torchrun pretrain_gpt.py --micro-batch-size 1"),
        Framework::Megatron
    );
    assert_eq!(
        detect("micro_batch_size: 1\n# --not-a-flag\n"),
        Framework::Axolotl
    );
    assert_eq!(detect("---\nmicro_batch_size: 1\n"), Framework::Axolotl);
    assert_eq!(detect("run_name: a--b\n"), Framework::Axolotl);
    assert_eq!(
        detect("# cfg\nbase_model: x\nextra_args: --foo 1\n"),
        Framework::Axolotl
    );
    assert_eq!(
        detect("#!/bin/bash\nexport X=1\ntorchrun x.py --micro-batch-size 1"),
        Framework::Megatron
    );
    // forcing a format
    let got = import_as(Framework::Axolotl, "{micro_batch_size: 2}");
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
    let got = import_as(Framework::Nanotron, "parallelism: {dp: 2}");
    assert_eq!(got.get(Field::Dp), Some("2"));
}

// ---- hostile input -----------------------------------------------------------------------

fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{what} took {:?}",
        start.elapsed()
    );
    out
}

#[test]
fn oversized_text_is_refused_at_once() {
    let huge = "micro_batch_size: 1\n".repeat(MAX_INPUT / 10);
    let got = quick("huge", || import(&huge));
    assert!(got.inputs.is_empty());
    assert!(got.errors[0].contains("at most 256 KB"), "{:?}", got.errors);
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let n = MAX_INPUT / 2 - 10;
    for text in [
        format!("a: {}{}", "[".repeat(n), "]".repeat(n)),
        format!("a: {}", "[".repeat(MAX_INPUT - 10)),
        format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        format!("{{\"a\": {}{}}}", "[".repeat(n), "]".repeat(n)),
        "- ".repeat(MAX_INPUT / 2 - 1),
        format!(
            "a:\n{}",
            (1..600)
                .map(|i| format!("{}b:\n", " ".repeat(i)))
                .collect::<String>()
        ),
    ] {
        assert!(text.len() <= MAX_INPUT);
        let got = quick("nesting", || import(&text));
        assert!(got.inputs.is_empty());
    }
    // serde_json stops at its recursion limit with an error that says where
    let got = import(&format!("{{\"a\": {}", "[".repeat(1000)));
    assert!(
        got.errors[0].contains("recursion limit"),
        "{:?}",
        got.errors
    );
}

#[test]
fn an_alias_bomb_is_not_expanded() {
    // "billion laughs": each level refers to the one before nine times
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
    let mut prev = "a";
    for n in names {
        text.push_str(&format!(
            "{n}: &{n} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
        prev = n;
    }
    text.push_str("micro_batch_size: *i\nnum_epochs: 2\n");
    let got = quick("billion laughs", || import(&text));
    assert_eq!(got.inputs, [(Field::NumEpochs, "2".to_string())]);
    assert!(got.unknown.contains(&"micro_batch_size".to_string()));
    // the same shape, packed to the size limit with aliases
    let many = format!("a: &a x\nb: [{}]\n", vec!["*a"; MAX_INPUT / 4].join(","));
    assert!(many.len() <= MAX_INPUT);
    quick("many aliases", || import(&many));
}

#[test]
fn control_characters_and_odd_text_never_panic() {
    let texts = [
        "micro_batch_size: \u{0}\n".to_string(),
        "micro_batch_size: 1\u{7}\n".to_string(),
        "\u{1b}[31mmicro_batch_size: 1".to_string(),
        "micro_batch_size:\t2".to_string(),
        "\r\nmicro_batch_size: 2\r\n".to_string(),
        "--micro-batch-size \u{0}".to_string(),
        "--".to_string(),
        "-- --".to_string(),
        "--=".to_string(),
        "{\"\u{0}\": 1}".to_string(),
        "\"\\".to_string(),
        "? [a]\n: 1\nmicro_batch_size: 3\n".to_string(),
        "!!binary aGk=: 1".to_string(),
        "%YAML 1.2\n---\nmicro_batch_size: 1\n".to_string(),
        "micro_batch_size: |\n  8\n".to_string(),
        "\u{feff}micro_batch_size: 5".to_string(),
    ];
    for t in &texts {
        for &fw in Framework::ALL {
            let _ = import_as(fw, t);
        }
        let _ = import(t);
    }
    // a complex key is skipped without shifting the keys after it
    assert_eq!(import(&texts[11]).get(Field::MicroBatchSize), Some("3"));
    assert_eq!(import(&texts[4]).get(Field::MicroBatchSize), Some("2"));
    assert_eq!(import(&texts[15]).get(Field::MicroBatchSize), Some("5"));
}

#[test]
fn the_lists_are_capped() {
    let text: String = (0..5000).map(|i| format!("key_{i}: 1\n")).collect();
    let got = import(&text);
    assert_eq!(got.unknown.len(), 101);
    assert_eq!(got.unknown[100], "\u{2026} and 4900 more");
    let text: String = (0..5000).map(|_| "--micro-batch-size $X ").collect();
    let got = import(&text);
    assert_eq!(got.errors.len(), 101);
}

#[cfg(not(target_arch = "wasm32"))]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn import_never_panics(text in "\\PC{0,200}") {
            for &fw in Framework::ALL {
                let got = import_as(fw, &text);
                prop_assert!(got.unknown.len() <= 101 && got.errors.len() <= 101);
            }
        }

        #[test]
        fn toml_and_flag_like_text_never_panics(text in "(\\[[a-z_.]{0,9}\\]|[a-z_]{1,8}|[=.\"'{},#-]|--|\n| |[0-9]){0,120}") {
            for &fw in Framework::ALL {
                let got = read(fw, None, &text);
                prop_assert!(got.unknown.len() <= 101 && got.errors.len() <= 101);
            }
        }

        #[test]
        fn yaml_like_text_never_panics(text in "([a-z_]{1,8}|[:&*!|>{}\\[\\],#'\" -]|\n|[0-9]){0,120}") {
            let _ = import(&text);
            let _ = import_as(Framework::Megatron, &text);
            let _ = import_as(Framework::Nanotron, &text);
            let _ = read(Framework::Hf, None, &text);
        }
    }
}

#[test]
fn yaml_lists_of_scalars_fill_text_keys() {
    // axolotl's `plugins` and `fsdp` are lists; a Text field takes their items comma-separated
    let i =
        import("plugins:\n  - a.B\n  - c.D\nfsdp: [full_shard, auto_wrap]\nmicro_batch_size: 2\n");
    assert!(i.errors.is_empty(), "{:?}", i.errors);
    assert_eq!(i.get(Field::Plugins), Some("a.B, c.D"));
    assert_eq!(i.get(Field::Fsdp), Some("full_shard, auto_wrap"));
    // a list of mappings, a list under a number key, an empty list, a list with a null item:
    // not read, and listed so (found by the import fuzz target: `plugins: [~]` was dropped)
    let i = import(
        "datasets:\n  - path: x\nmicro_batch_size: [1, 2]\nfsdp: []\nplugins:\n  - \n  - a.B\n",
    );
    assert_eq!(i.get(Field::MicroBatchSize), None);
    assert_eq!(i.get(Field::Fsdp), None);
    assert_eq!(i.get(Field::Plugins), None);
    assert_eq!(
        i.unknown,
        ["datasets", "micro_batch_size", "fsdp", "plugins"]
    );
}

#[test]
fn axolotl_nested_keys_are_read_as_dotted_fields() {
    // axolotl 0.21.0's expert parallelism needs FSDP2 and fsdp_config.state_dict_type: pasted as
    // YAML they are one nested block, read as the dotted keys of the form
    let y = "expert_parallel_size: 2\ndp_shard_size: 4\nfsdp_version: 2\nfsdp_config:\n  state_dict_type: FULL_STATE_DICT\n  \
             offload_params: false\n  mixed: [1, 2]\nattn_implementation: sdpa\nspecial_tokens:\n  pad_token: x\n";
    let i = import(y);
    assert!(i.errors.is_empty(), "{:?}", i.errors);
    assert_eq!(i.get(Field::ExpertParallelSize), Some("2"));
    assert_eq!(i.get(Field::FsdpVersion), Some("2"));
    assert_eq!(i.get(Field::FsdpStateDictType), Some("FULL_STATE_DICT"));
    assert_eq!(i.get(Field::AttnImplementation), Some("sdpa"));
    assert_eq!(i.get(Field::FsdpOffloadParams), Some("false"));
    // the block's other entries are listed by their dotted names; a block with no key dpcalc
    // reads stays one unknown key
    assert_eq!(
        i.unknown,
        vec![
            "fsdp_config.mixed".to_string(),
            "special_tokens".to_string()
        ]
    );
    // what export writes, import reads back
    let raw = i.raw();
    let fw = Framework::from_id("axolotl").unwrap();
    let rel = fw.default_release().id;
    let report = fw.compute(rel, &raw);
    let e = dpcalc::calc::export::export(fw, rel, &raw, &report);
    let back = import(&e.text);
    for f in [
        Field::ExpertParallelSize,
        Field::FsdpVersion,
        Field::FsdpStateDictType,
        Field::AttnImplementation,
    ] {
        assert_eq!(back.get(f), i.get(f), "{f:?} in\n{}", e.text);
    }
}

// ---- Hugging Face TrainingArguments ------------------------------------------------------

#[test]
fn hf_flags_after_a_launcher_fill_the_trainer_and_the_cluster() {
    let line = "torchrun --nnodes=2 --nproc_per_node 8 train.py \\\n  --output_dir out --per_device_train_batch_size 4 \
                --gradient_accumulation_steps=2 --num_train_epochs 3 --dataloader_drop_last \
                --max_steps -1 --bf16 --learning_rate 2e-5 --gradient_checkpointing false";
    assert_eq!(detect(line), Framework::Hf);
    let got = import(line);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.framework, Framework::Hf);
    assert_eq!(got.scope, Scope::Config);
    assert_eq!(got.get(Field::Nodes), Some("2"));
    assert_eq!(got.get(Field::GpusPerNode), Some("8"));
    assert_eq!(got.get(Field::PerDeviceTrainBatchSize), Some("4"));
    assert_eq!(got.get(Field::GradientAccumulationSteps), Some("2"));
    assert_eq!(got.get(Field::NumTrainEpochs), Some("3"));
    assert_eq!(got.get(Field::DataloaderDropLast), Some("true"));
    assert_eq!(got.get(Field::MaxSteps), Some("-1"));
    assert_eq!(got.get(Field::GradientCheckpointing), Some("false"));
    assert_eq!(got.unknown, ["--output_dir", "--bf16", "--learning_rate"]);
    // `--flag True`, `--no_flag`, accelerate launch's processes
    let got = import(
        "accelerate launch --num_machines 2 --num_processes 16 train.py --per_device_train_batch_size 1 \
         --dataloader_drop_last True --no_gradient_checkpointing",
    );
    assert_eq!(got.get(Field::DataloaderDropLast), Some("true"));
    assert_eq!(got.get(Field::GradientCheckpointing), Some("false"));
    assert_eq!(got.get(Field::Nodes), Some("2"));
    assert_eq!(got.get(Field::GpusPerNode), Some("8"));
    // Megatron's dash-style flags stay Megatron's
    assert_eq!(
        detect("torchrun --nnodes 2 train.py --micro-batch-size 2 --global-batch-size 64"),
        Framework::Megatron
    );
}

#[test]
fn hf_json_and_python_fill_the_trainer() {
    let j = r#"{"output_dir": "out", "per_device_train_batch_size": 8, "gradient_accumulation_steps": 4,
               "num_train_epochs": 3.0, "max_steps": -1, "warmup_ratio": 0.1, "logging_steps": 10,
               "dataloader_drop_last": false, "report_to": ["wandb"], "deepspeed": null, "seed": 42}"#;
    assert_eq!(detect(j), Framework::Hf);
    let got = import(j);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::PerDeviceTrainBatchSize), Some("8"));
    assert_eq!(got.get(Field::NumTrainEpochs), Some("3.0"));
    assert_eq!(got.get(Field::MaxSteps), Some("-1"));
    assert_eq!(got.get(Field::DataloaderDropLast), Some("false"));
    assert_eq!(got.unknown, ["output_dir", "report_to", "seed"]);
    // a DeepSpeed config with gradient_accumulation_steps stays DeepSpeed's
    assert_eq!(
        detect(r#"{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 2}"#),
        Framework::DeepSpeed
    );
    let py = "args = TrainingArguments(output_dir=\"o\", per_device_train_batch_size=2,\n    \
              dataloader_drop_last=True,  # a comment, with a comma\n    \
              parallelism_config=ParallelismConfig(tp_size=2, cp_size=1),\n    report_to=os.environ['X'],\n)\n";
    let got = import(py);
    assert_eq!(got.framework, Framework::Hf);
    assert_eq!(got.get(Field::PerDeviceTrainBatchSize), Some("2"));
    assert_eq!(got.get(Field::DataloaderDropLast), Some("true"));
    assert_eq!(got.get(Field::TpSize), Some("2"));
    assert_eq!(got.get(Field::CpSize), Some("1"));
    assert_eq!(got.unknown, ["output_dir", "report_to"]);
}

// ---- torchtitan TOML ---------------------------------------------------------------------

const TORCHTITAN_TOML: &str = include_str!("fixtures/configs/torchtitan.toml");

#[test]
fn torchtitan_toml_fills_its_fields() {
    assert_eq!(detect(TORCHTITAN_TOML), Framework::Torchtitan);
    let got = import(TORCHTITAN_TOML);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::LocalBatchSize), Some("1"));
    assert_eq!(got.get(Field::SeqLen), Some("8192"));
    assert_eq!(got.get(Field::Steps), Some("1000"));
    assert_eq!(got.get(Field::WarmupSteps), Some("200"));
    assert_eq!(got.get(Field::DataParallelShardDegree), Some("-1"));
    assert_eq!(got.get(Field::TensorParallelDegree), Some("2"));
    assert_eq!(got.get(Field::ActivationCheckpointMode), Some("selective"));
    // whole tables dpcalc does not read are listed once; a table it reads lists its other keys
    assert_eq!(got.unknown, ["job", "training.dataset"]);
    // `[model] name = "llama3"`, `flavor = "8B"`: one model, torchtitan's flavor table's preset
    assert_eq!(got.get(Field::ModelId), Some("llama3/8B"));
    assert_eq!(
        dpcalc::calc::model::preset_id("llama3/8B"),
        Some("meta-llama/Llama-3.1-8B")
    );
    // a flavor without a name stays unknown; a name without a flavor is the name
    let got = import("[model]\nflavor = \"8B\"\n[training]\nsteps = 1\n");
    assert_eq!(got.get(Field::ModelId), None);
    assert_eq!(got.unknown, ["model"]);
    let got = import("[model]\nname = \"llama3\"\n[training]\nsteps = 1\n");
    assert_eq!(got.get(Field::ModelId), Some("llama3"));
    let got = import("[training]\nsteps = \n");
    assert!(
        got.errors[0].starts_with("TOML error at line 2"),
        "{:?}",
        got.errors
    );
    let got = import("[training]\nsteps = 1\nsteps = 2\n");
    assert!(!got.errors.is_empty());
    // the pipeline schedule is read from [parallelism], as torchtitan's job config has it
    let got = import(
        "[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"\n",
    );
    assert!(got.errors.is_empty() && got.unknown.is_empty(), "{got:?}");
    assert_eq!(
        got.get(Field::PipelineParallelSchedule),
        Some("Interleaved1F1B")
    );
}

// ---- nanotron YAML -----------------------------------------------------------------------

const NANOTRON_YAML: &str = include_str!("fixtures/configs/nanotron.yaml");

#[test]
fn nanotron_yaml_fills_its_fields() {
    assert_eq!(detect(NANOTRON_YAML), Framework::Nanotron);
    let got = import(NANOTRON_YAML);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::Dp), Some("2"));
    assert_eq!(got.get(Field::Tp), Some("2"));
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
    assert_eq!(got.get(Field::BatchAccumulationPerReplica), Some("4"));
    assert_eq!(got.get(Field::SequenceLength), Some("2048"));
    assert_eq!(got.get(Field::TrainSteps), Some("100"));
    assert_eq!(got.get(Field::NumAttentionHeads), Some("32"));
    assert_eq!(got.get(Field::NumKeyValueHeads), Some("8"));
    assert_eq!(got.get(Field::HiddenSize), Some("4096"));
    assert_eq!(got.get(Field::RecomputeLayer), Some("false"));
    assert_eq!(
        got.unknown,
        ["general", "checkpoints", "model.init_method", "data_stages"]
    );
    // axolotl's YAML with a `tokens:` list stays axolotl's
    assert_eq!(
        detect("base_model: x\ntokens:\n  - <a>\nmicro_batch_size: 1\n"),
        Framework::Axolotl
    );
}

// ---- the cluster: accelerate config, torchrun line ---------------------------------------

#[test]
fn accelerate_config_and_launcher_lines_fill_the_cluster_only() {
    let acc = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmachine_rank: 0\n\
               mixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\nfsdp_config:\n  fsdp_version: 2\n";
    assert_eq!(detect_format(acc), Format::Cluster);
    let got = read(Framework::Megatron, None, acc);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.framework, Framework::Megatron);
    assert_eq!(got.scope, Scope::Cluster);
    assert_eq!(got.get(Field::Nodes), Some("2"));
    assert_eq!(got.get(Field::GpusPerNode), Some("8"));
    assert!(got.unknown.contains(&"fsdp_config".to_string()));
    assert!(got.unknown.contains(&"distributed_type".to_string()));
    // it keeps the other inputs and replaces the whole cluster
    let current = dpcalc::calc::RawInputs::from_pairs([
        (Field::WorldSize, "4"),
        (Field::MicroBatchSize, "3"),
    ]);
    let merged = got.merged_into(&current);
    assert_eq!(merged.get(Field::MicroBatchSize), "3");
    assert_eq!(merged.get(Field::WorldSize), "");
    assert_eq!(merged.get(Field::Nodes), "2");
    // processes that do not divide over the machines: as written, the world size
    let got = read(
        Framework::Axolotl,
        None,
        "num_machines: 3\nnum_processes: 16\n",
    );
    assert_eq!(got.get(Field::WorldSize), Some("16"));
    assert_eq!(got.get(Field::Nodes), Some("3"));
    for line in [
        "torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "torchrun --nnodes=2 --nproc-per-node=8",
        "python -m torch.distributed.run --nnodes 2 --nproc-per-node 8 train.py --deepspeed ds.json",
        "deepspeed --num_nodes 2 --num_gpus 8 train.py",
    ] {
        assert_eq!(detect_format(line), Format::Cluster, "{line}");
        let got = read(Framework::Torchtitan, None, line);
        assert!(got.errors.is_empty(), "{line}: {:?}", got.errors);
        assert_eq!(got.scope, Scope::Cluster, "{line}");
        assert_eq!(got.framework, Framework::Torchtitan);
        assert_eq!(got.get(Field::Nodes), Some("2"), "{line}");
        assert_eq!(got.get(Field::GpusPerNode), Some("8"), "{line}");
    }
    // a Megatron line keeps its cluster and its flags
    let got = import("torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2");
    assert_eq!(got.framework, Framework::Megatron);
    assert_eq!(got.get(Field::Nodes), Some("2"));
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
}

#[test]
fn accelerate_parallelism_config_fills_what_the_framework_takes_and_warns_at_the_rest() {
    // the HF Trainer takes tp, cp and sp through accelerate's environment
    let acc = "num_machines: 1\nnum_processes: 8\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n  \
               parallelism_config_tp_size: 2\n  parallelism_config_cp_size: 2\n  parallelism_config_cp_comm_strategy: alltoall\n";
    let got = read(Framework::Hf, None, acc);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::TpSize), Some("2"));
    assert_eq!(got.get(Field::CpSize), Some("2"));
    // 1 × 2 × 2 × 2 × 1 = 8 processes: consistent, nothing to say; the sizes are read, the CP
    // strategy (no batch, no step) is listed as not read, never dropped silently
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    let listed: Vec<&String> = (got.unknown.iter())
        .filter(|k| k.contains("parallelism"))
        .collect();
    assert_eq!(
        listed,
        ["parallelism_config.parallelism_config_cp_comm_strategy"],
        "{:?}",
        got.unknown
    );
    assert!(
        got.summary().contains("parallelism_config"),
        "{}",
        got.summary()
    );
    // the form's own sp_size and tp_size win; the cluster is replaced
    let current =
        dpcalc::calc::RawInputs::from_pairs([(Field::TpSize, "4"), (Field::WorldSize, "16")]);
    let merged = got.merged_into(&current);
    assert_eq!(merged.get(Field::TpSize), "4");
    assert_eq!(merged.get(Field::CpSize), "2");
    assert_eq!(merged.get(Field::WorldSize), "");
    assert_eq!(merged.get(Field::GpusPerNode), "8");

    // data-parallel sizes accelerate refuses (total 2 × 2 × 2 = 8 on 4 processes), a backend
    // it refuses, an unknown key of the block
    let bad =
        "num_processes: 4\nparallelism_config:\n  parallelism_config_dp_replicate_size: 2\n  \
               parallelism_config_dp_shard_size: 2\n  parallelism_config_tp_size: 2\n  \
               parallelism_config_cp_backend: ring\n  parallelism_config_pp_size: 2\n";
    let got = read(Framework::Hf, None, bad);
    let said = got.warnings.join("\n");
    assert!(
        said.contains("parallelism_config: accelerate refuses the launch"),
        "{said}"
    );
    assert!(
        said.contains("total_size (8) does not match num_processes (4)"),
        "{said}"
    );
    assert!(
        said.contains("parallelism_config.parallelism_config_cp_backend: accelerate refuses it"),
        "{said}"
    );
    assert!(said.contains("but got ring"), "{said}");
    assert!(got
        .unknown
        .contains(&"parallelism_config.parallelism_config_pp_size".to_string()));
    // an sp_backend accelerate refuses is a warning; DeepSpeed SP skips the total check
    let sp = "num_processes: 4\nparallelism_config:\n  parallelism_config_sp_size: 4\n  \
              parallelism_config_dp_shard_size: 2\n  parallelism_config_sp_backend: megatron\n";
    let got = read(Framework::Hf, None, sp);
    assert_eq!(got.get(Field::SpSize), Some("4"));
    let said = got.warnings.join("\n");
    assert!(
        said.contains("sp_backend must be one of ['deepspeed'], but got megatron"),
        "{said}"
    );
    // no processes given: the product is not checked, and that is said
    let got = read(
        Framework::Hf,
        None,
        "distributed_type: FSDP\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n  parallelism_config_tp_size: 2\n",
    );
    assert!(
        got.warnings
            .iter()
            .any(|w| w.contains("does not give num_processes")),
        "{:?}",
        got.warnings
    );

    // on the launch line: named in a warning, never only ignored; the config it names too
    let got = read(
        Framework::Hf,
        None,
        "accelerate launch --config_file fsdp.yaml --parallelism_config_sp_size 2 train.py --per_device_train_batch_size 2",
    );
    assert_eq!(got.get(Field::PerDeviceTrainBatchSize), Some("2"));
    assert!(
        got.warnings
            .iter()
            .any(|w| w.starts_with("--parallelism_config_sp_size: ")),
        "{:?}",
        got.warnings
    );
    assert!(
        got.warnings
            .iter()
            .any(|w| w.starts_with("--config_file fsdp.yaml: ")),
        "{:?}",
        got.warnings
    );
    assert!(
        !got.unknown
            .iter()
            .any(|k| k.contains("parallelism") || k.contains("config_file")),
        "{:?}",
        got.unknown
    );

    // a framework that does not take it through accelerate: every size above 1 is a warning at
    // its key, never only an ignored key, and no field is filled
    for fw in [Framework::Axolotl, Framework::Megatron, Framework::Nanotron] {
        let got = read(fw, None, acc);
        assert_eq!(got.get(Field::TpSize), None);
        for key in ["dp_shard_size", "tp_size", "cp_size"] {
            let at = format!("parallelism_config.parallelism_config_{key}: ");
            assert!(
                got.warnings.iter().any(|w| w.starts_with(&at)),
                "{fw:?} {key}: {:?}",
                got.warnings
            );
            assert!(
                !got.unknown.iter().any(|k| k.contains(key)),
                "{fw:?}: {:?}",
                got.unknown
            );
        }
    }
}

#[test]
fn every_format_survives_odd_input() {
    let texts = [
        "[training]\nsteps = 1\n[training]\n",
        "[parallelism]\ntensor_parallel_degree = { a = 1 }\n",
        "[a]\nb = 1979-05-27T07:32:00Z\n",
        "parallelism:\n  dp: [1, 2]\n  tp: *x\n",
        "parallelism: &a\n  dp: 1\ntokens: *a\n",
        "num_processes: 0\nnum_machines: 0\n",
        "num_processes: -1\n",
        "torchrun --nnodes",
        "torchrun --nnodes 1:2 --nproc_per_node gpu",
        "TrainingArguments(",
        "TrainingArguments(per_device_train_batch_size=\"\\",
        "TrainingArguments(a=(((((, b='x",
        "{\"per_device_train_batch_size\": {\"a\": 1}, \"output_dir\": []}",
        "accelerate launch",
    ];
    for t in texts {
        for &fw in Framework::ALL {
            let got = import_as(fw, t);
            assert!(got.unknown.len() <= 101 && got.errors.len() <= 101);
            let _ = read(fw, None, t);
        }
    }
    // a deeply nested TOML or YAML is refused or cut, never a stack overflow
    let deep = format!("a = {}1{}", "[".repeat(5000), "]".repeat(5000));
    let _ = quick("deep TOML", || import(&format!("[t]\n{deep}")));
    let deep = format!(
        "parallelism:\n{}",
        (1..200)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect::<String>()
    );
    let _ = quick("deep YAML", || import(&deep));
}

#[test]
fn nesting_hidden_in_strings_is_still_refused() {
    // closing brackets inside strings (all four TOML string forms) do not hide the nesting
    for s in ["\"]\"", "'}'", "\"\"\"]\"]\"\"\"", "'''x']'''", "\"\\\"]\""] {
        let deep: String = (0..3000).map(|_| format!("[{s}, ")).collect();
        let got = quick("hidden TOML nesting", || {
            import(&format!("[t]\na = {deep}"))
        });
        assert!(
            got.errors[0].contains("nested more than"),
            "{s}: {:?}",
            got.errors
        );
    }
    // tables nest through dotted names too
    let dotted = vec!["a"; 20_000].join(".");
    for text in [format!("[{dotted}]\nx = 1\n"), format!("{dotted} = 1\n")] {
        let got = quick("dotted TOML nesting", || {
            import_as(Framework::Torchtitan, &text)
        });
        assert!(
            got.errors[0].contains("nested more than"),
            "{:?}",
            got.errors
        );
    }
    // a float, a dotted key of two tables and a dot in a string are fine
    let got =
        import("[lr_scheduler]\nwarmup_steps = 10\nmin_lr_factor = 0.1\n[job]\nx.y = \"a.b.c\"\n");
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::WarmupSteps), Some("10"));
}

#[test]
fn ignored_keys_are_listed_whole() {
    let got = import(
        r#"{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"offload_optimizer": {"device": "cpu", "pin_memory": true}}}"#,
    );
    assert!(
        got.unknown
            .contains(&"zero_optimization.offload_optimizer.pin_memory".to_string()),
        "{:?}",
        got.unknown
    );
    assert!(got.unknown.iter().all(|k| !k.contains('\u{2026}')));
    // a key longer than any real one is cut, so a hostile text stays bounded
    let long = format!("{{\"train_batch_size\": 8, \"{}\": 1}}", "k".repeat(5000));
    let got = import(&long);
    assert_eq!(got.unknown.len(), 1);
    assert!(got.unknown[0].ends_with('\u{2026}') && got.unknown[0].len() < 300);
}

#[test]
fn what_could_be_read_is_applied_and_what_could_not_is_named() {
    // one "auto" field: the other values apply, the error names the one left empty
    let got = import(
        r#"{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}"#,
    );
    assert_eq!(got.errors.len(), 1, "{:?}", got.errors);
    assert!(got.applicable());
    assert_eq!(got.get(Field::TrainMicroBatchSizePerGpu), Some("4"));
    assert_eq!(got.get(Field::TrainBatchSize), None);
    assert!(
        got.summary().contains("1 could not be read"),
        "{}",
        got.summary()
    );
    // a text that is not well-formed applies nothing, though keys before the error were read
    let got = import("micro_batch_size: 2\ngradient_accumulation_steps: [4\n");
    assert!(got.malformed, "{:?}", got);
    assert!(!got.applicable());
    assert!(
        got.summary().starts_with("Nothing was applied"),
        "{}",
        got.summary()
    );
    for bad in ["{\"train_batch_size\": ", "[training]\nsteps = \n"] {
        let got = import(bad);
        assert!(got.malformed && !got.applicable(), "{bad}: {got:?}");
    }
    // no config at all: only the one sentence
    let got = import("hello, this is not a config");
    assert!(!got.is_config() && !got.applicable());
}

#[test]
fn an_export_names_its_release_and_the_import_reads_it() {
    let got = import_as(
        Framework::Hf,
        "# Hugging Face Trainer 4.51 config from dpcalc (the fields given, and values the framework derives)\n--per_device_train_batch_size 2\n",
    );
    assert_eq!(got.release.map(|r| r.id), Some("4.51"));
    assert!(
        got.summary()
            .contains("4.51 (the release the config names)"),
        "{}",
        got.summary()
    );
    // another framework's header, or a release it does not have, names nothing
    let got = import_as(
        Framework::Hf,
        "# axolotl 0.19.0 config from dpcalc\n--per_device_train_batch_size 2\n",
    );
    assert_eq!(got.release, None);
    let got = import_as(
        Framework::Hf,
        "# Hugging Face Trainer 9.9 config from dpcalc\n--per_device_train_batch_size 2\n",
    );
    assert_eq!(got.release, None);
}

/// A plain YAML scalar as PyYAML 6.0.3's `safe_load` (YAML 1.1, what axolotl, nanotron and
/// accelerate load configs with) reads it, and the text the form then gets: recorded with
/// `python3 -c 'import yaml; print(repr(yaml.safe_load("k: " + CASE)["k"]))'` (PyYAML 6.0.3).
const PYYAML: &[(&str, &str)] = &[
    ("500_000", "int 500000"),
    ("1e5", "str '1e5'"),
    ("1.0e+5", "float 100000.0"),
    ("1.5e3", "str '1.5e3'"),
    ("0x1F", "int 31"),
    ("0x_1f", "int 31"),
    ("0o17", "str '0o17'"),
    ("017", "int 15"),
    ("0b101", "int 5"),
    ("1_0.5", "float 10.5"),
    ("+12", "int 12"),
    ("-3", "int -3"),
    ("1:30", "int 90"),
    ("1:30.5", "float 90.5"),
    (".5", "float 0.5"),
    ("1.", "float 1.0"),
    (".inf", "float inf"),
    ("-.Inf", "float -inf"),
    ("yes", "bool True"),
    ("No", "bool False"),
    ("ON", "bool True"),
    ("off", "bool False"),
    ("y", "str 'y'"),
    ("n", "str 'n'"),
    ("True", "bool True"),
    ("4096", "int 4096"),
    ("0", "int 0"),
    ("00", "int 0"),
    ("08", "str '08'"),
    ("1_000_000", "int 1000000"),
    ("3.0", "float 3.0"),
    ("2e-5", "str '2e-5'"),
    ("1.e-5", "float 1e-05"),
    ("1_", "int 1"),
    ("_1", "str '_1'"),
    ("0.1", "float 0.1"),
    ("1__0", "int 10"),
    ("+0x10", "int 16"),
    ("-0b11", "int -3"),
    ("0_7", "int 7"),
    ("190:20:30", "int 685230"),
    ("1e+5", "str '1e+5'"),
    ("12e03", "str '12e03'"),
    ("-.5", "str '-.5'"),
];

#[test]
fn yaml_numbers_and_booleans_are_read_as_pyyaml_reads_them() {
    for &(case, python) in PYYAML {
        let (kind, repr) = python.split_once(' ').expect("TYPE REPR");
        let want = match kind {
            "bool" => (if repr == "True" { "true" } else { "false" }).to_string(),
            "str" => repr.trim_matches('\'').to_string(),
            _ => repr.to_string(),
        };
        // a float may keep its own spelling where it reads as the same double
        let same = |got: Option<&str>| match (kind, got) {
            ("float", Some(g)) => {
                g == want
                    || (g.parse::<f64>().is_ok() && g.parse::<f64>().ok() == want.parse().ok())
            }
            (_, g) => g == Some(want.as_str()),
        };
        // axolotl's YAML and nanotron's nested YAML
        let got = import(&format!("micro_batch_size: 1\nsequence_len: {case}\n"));
        let text = got.get(Field::SequenceLen);
        assert!(same(text), "axolotl {case}: {text:?}, PyYAML {python}");
        let got = import_as(
            Framework::Nanotron,
            &format!("parallelism:\n  dp: 2\ntokens:\n  sequence_length: {case}\n"),
        );
        let text = got.get(Field::SequenceLength);
        assert!(same(text), "nanotron {case}: {text:?}, PyYAML {python}");
        // quoted, it is the text as written
        let got = import(&format!("micro_batch_size: 1\nsequence_len: '{case}'\n"));
        assert_eq!(got.get(Field::SequenceLen), Some(case), "quoted {case}");
    }
    // the issue's case: 500_000 computes as 500000 tokens per sample
    let got = import("sequence_len: 500_000\nmicro_batch_size: 1\n");
    assert_eq!(got.get(Field::SequenceLen), Some("500000"));
}

#[test]
fn keys_the_framework_no_longer_reads_are_named_with_what_the_page_uses() {
    // axolotl's old example key: pydantic drops it, the run has no TP
    let got = import("base_model: x\nmicro_batch_size: 1\ntensor_parallel: 'auto'\n");
    assert_eq!(got.framework, Framework::Axolotl);
    assert!(!got.unknown.contains(&"tensor_parallel".to_string()));
    assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
    assert!(got.warnings[0].starts_with("tensor_parallel: axolotl reads tensor_parallel_size"));
    // torchtitan's key before local_batch_size
    let got = import("[training]\nbatch_size = 1\nsteps = 10\n");
    assert_eq!(got.framework, Framework::Torchtitan);
    assert!(
        got.warnings[0].contains("local_batch_size's default, 8 per GPU"),
        "{:?}",
        got.warnings
    );
    assert!(!got.unknown.contains(&"training.batch_size".to_string()));
    // torchao's FSDP float8 settings, which torchtitan removed before 0.3.0: each named, none
    // left unknown, and no input taken from them
    let got = import(
        "[training]\nlocal_batch_size = 2\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n\
         precompute_float8_dynamic_scale_for_fsdp = true\nforce_recompute_fp8_weight_in_bwd = true\n",
    );
    assert_eq!(got.framework, Framework::Torchtitan);
    assert_eq!(got.warnings.len(), 3, "{:?}", got.warnings);
    assert!(got.warnings[0].starts_with(
        "quantize.linear.float8.enable_fsdp_float8_all_gather: torchtitan's releases dpcalc models have no FSDP float8 all-gather"
    ));
    assert!(
        got.warnings[2].contains("pytorch/ao#2356"),
        "{:?}",
        got.warnings
    );
    assert!(got.unknown.is_empty(), "{:?}", got.unknown);
    // HF's renamed argument, as a flag and in JSON
    for text in [
        "torchrun train.py --per_device_train_batch_size 2 --evaluation_strategy steps",
        r#"{"per_device_train_batch_size": 2, "evaluation_strategy": "steps", "output_dir": "o"}"#,
    ] {
        let got = import(text);
        assert_eq!(got.framework, Framework::Hf, "{text}");
        assert!(
            got.warnings.iter().any(
                |w| w.contains("Some specified arguments are not used by the HfArgumentParser")
            ),
            "{text}: {:?}",
            got.warnings
        );
    }
}

#[test]
fn a_binary_paste_is_refused_with_the_problem_named() {
    // a NUL: yaml-rust2 would take it for the end of the text and drop the rest unsaid
    let text = "micro_batch_size: 2\nfsdp:\n  -\0full_shard\ngradient_accumulation_steps: 4\n";
    for got in [
        import(text),
        read(Framework::Hf, Some(Framework::Axolotl), text),
        import_as(Framework::Nanotron, text),
        import_as(Framework::DeepSpeed, "{\"train_batch_size\": 8}\0"),
    ] {
        assert!(got.malformed, "{got:?}");
        assert!(got.inputs.is_empty(), "{got:?}");
        assert_eq!(
            got.errors,
            [got.errors[0].clone()],
            "one error: {:?}",
            got.errors
        );
        assert!(
            got.errors[0].contains("a NUL character: this is a binary file, not a config"),
            "{:?}",
            got.errors
        );
        assert!(got.summary().starts_with("Nothing was applied"));
    }
    assert!(import(text).errors[0].starts_with("line 3:"));
}

#[test]
fn a_yaml_with_a_character_pyyaml_refuses_is_refused_as_pyyaml_does() {
    // PyYAML 6.0.4's Reader.check_printable: safe_load('a: 1\n  b: \x15\n') raises
    // "unacceptable character #x0015: special characters are not allowed" (position 10)
    for (fw, text, at) in [
        (
            Framework::Axolotl,
            "micro_batch_size: 2\nseed: \u{15}\n",
            "line 2, column 7",
        ),
        (
            Framework::Nanotron,
            "parallelism:\n  dp: 2\u{7f}\n",
            "line 2, column 8",
        ),
        (
            Framework::Hf,
            "num_processes: 8\nx: \u{9b}\n",
            "line 2, column 4",
        ),
    ] {
        let got = import_as(fw, text);
        assert!(got.malformed, "{fw:?}: {got:?}");
        assert!(got.inputs.is_empty());
        let e = &got.errors[0];
        assert!(
            e.contains(&format!("YAML error at {at}: unacceptable character #x")),
            "{e}"
        );
        assert!(e.contains("special characters are not allowed"), "{e}");
    }
    // what PyYAML accepts stays read: a tab inside a value, NEL, non-ASCII, a BOM
    let got = import_as(
        Framework::Axolotl,
        "\u{feff}micro_batch_size: 2\nbase_model: \"a\tb\u{85}é\"\n",
    );
    assert!(!got.malformed, "{:?}", got.errors);
    assert_eq!(got.get(Field::MicroBatchSize), Some("2"));
}

#[test]
fn a_nested_yaml_key_that_is_not_text_is_named() {
    // a list as a key: PyYAML refuses it (unhashable); dpcalc reads the rest and names it
    let text = "parallelism:\n  ? [a, b]\n  : 2\n  dp: 2\n";
    let got = import_as(Framework::Nanotron, text);
    assert_eq!(got.get(Field::Dp), Some("2"), "{got:?}");
    assert!(
        got.unknown
            .iter()
            .any(|k| k == "a key that is not text, at line 2, column 5"),
        "{:?}",
        got.unknown
    );
    // in axolotl's flat reader a list as a key inside a nested block took the next value for a
    // key, and each key after it for a value: the block's keys were read off by one
    let got = import_as(
        Framework::Axolotl,
        "fsdp_config:\n  ? [a]\n  : 1\n  state_dict_type: FULL_STATE_DICT\n  offload_params: false\n",
    );
    assert_eq!(got.get(Field::FsdpStateDictType), Some("FULL_STATE_DICT"));
    assert_eq!(got.get(Field::FsdpOffloadParams), Some("false"));
    assert_eq!(got.unknown, ["a key that is not text, at line 2, column 5"]);
    // an alias of a collection as a key, in accelerate's config
    let got = read(
        Framework::Hf,
        None,
        "num_processes: 8\nx: &l [1]\n? *l\n: 3\n",
    );
    assert!(
        got.unknown
            .iter()
            .any(|k| k.starts_with("a key that is not text, at line 3")),
        "{:?}",
        got.unknown
    );
}

#[test]
fn values_beyond_the_reading_limit_are_named_not_dropped() {
    let mut text = String::from("parallelism:\n  dp: 2\n");
    for i in 0..20_001 {
        text.push_str(&format!("k{i}: 1\n"));
    }
    assert!(text.len() < MAX_INPUT);
    let got = quick("20,001 keys", || import_as(Framework::Nanotron, &text));
    assert_eq!(got.get(Field::Dp), Some("2"));
    assert!(
        got.errors
            .iter()
            .any(|e| e.contains("20,000 values or more; only the first 20,000 are read")),
        "{:?}",
        got.errors
    );
    let toml: String = (0..20_001).map(|i| format!("k{i} = 1\n")).collect();
    let got = quick("20,001 TOML keys", || {
        import_as(Framework::Torchtitan, &toml)
    });
    assert!(
        got.errors
            .iter()
            .any(|e| e.contains("20,000 values or more")),
        "{:?}",
        got.errors
    );
}

#[test]
fn an_empty_key_is_a_key_not_the_top() {
    // `"": {micro_batch_size: 2}` is the path `.micro_batch_size`, which nanotron does not read
    // (found by the import fuzz target: it was read as the top's `micro_batch_size`)
    let got = import_as(
        Framework::Nanotron,
        "parallelism:\n  dp: 2\n\"\":\n  tokens:\n    micro_batch_size: 2\n",
    );
    assert_eq!(got.get(Field::Dp), Some("2"));
    assert_eq!(got.get(Field::MicroBatchSize), None, "{got:?}");
    assert_eq!(got.unknown, [""]);
    let got = import_as(
        Framework::Torchtitan,
        "[training]\nsteps = 10\n[\"\".training]\nlocal_batch_size = 8\n",
    );
    assert_eq!(got.get(Field::LocalBatchSize), None, "{got:?}");
    assert_eq!(got.unknown, [""]);
}
