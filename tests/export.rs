//! Config export: every format parses with a real parser (serde_json, yaml-rust2, toml; Python
//! through `python3 -c ast.parse` where the machine has it), holds the given values with the
//! right types, leaves invalid fields out with a note, and round-trips through import for the
//! formats import reads (axolotl YAML, DeepSpeed JSON, Megatron command line).
//!
//! axolotl is exported from its real report; the other frameworks from their RawInputs, so these
//! tests do not depend on the other modules' numbers (the derived values are unit-tested with
//! hand-made reports in src/calc/export.rs).

use dpcalc::calc::export::{export, float_lit, Export};
use dpcalc::calc::import::{import, import_as, NOT_A_CONFIG};
use dpcalc::calc::{Field, Framework, Output, RawInputs};
use yaml_rust2::{Yaml, YamlLoader};

fn ex(fw: Framework, pairs: &[(Field, &str)]) -> (RawInputs, Export) {
    ex_at(fw, fw.default_release().id, pairs)
}

fn ex_at(fw: Framework, release: &str, pairs: &[(Field, &str)]) -> (RawInputs, Export) {
    let raw = RawInputs::from_pairs(pairs.iter().copied());
    let report = fw.compute(release, &raw);
    let e = export(fw, release, &raw, &report);
    (raw, e)
}

fn yaml(text: &str) -> Yaml {
    let docs = YamlLoader::load_from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(docs.len(), 1, "{text}");
    docs[0].clone()
}

/// Every config field of `fw` given, except cluster and throughput.
fn config_pairs<'a>(pairs: &[(Field, &'a str)]) -> Vec<(Field, &'a str)> {
    pairs
        .iter()
        .copied()
        .filter(|(f, _)| {
            !matches!(
                f,
                Field::Nodes
                    | Field::GpusPerNode
                    | Field::WorldSize
                    | Field::TokensPerSecondPerGpu
                    | Field::SecondsPerStep
                    | Field::NumSamples
            )
        })
        .collect()
}

const AXOLOTL: &[(Field, &str)] = &[
    (Field::Nodes, "2"),
    (Field::GpusPerNode, "8"),
    (Field::TensorParallelSize, "2"),
    (Field::ContextParallelSize, "2"),
    (Field::MicroBatchSize, "1"),
    (Field::GradientAccumulationSteps, "4"),
    (Field::NumSamples, "1000"),
    (Field::NumEpochs, "1.5"),
    (Field::MaxSteps, "90"),
    (Field::SequenceLen, "4096"),
    (Field::SamplePacking, "true"),
    (Field::WarmupRatio, "0.05"),
    (Field::ValSetSize, "0.01"),
    (Field::EvalsPerEpoch, "4"),
    (Field::SavesPerEpoch, "2"),
    (Field::TokensPerSecondPerGpu, "3000"),
];

#[test]
fn axolotl_yaml_has_the_keys_typed_and_the_launcher() {
    let (_, e) = ex(Framework::Axolotl, AXOLOTL);
    assert_eq!((e.lang, e.file_name), ("yaml", "config.yml"));
    let y = yaml(&e.text);
    assert_eq!(y["tensor_parallel_size"], Yaml::Integer(2));
    assert_eq!(y["context_parallel_size"], Yaml::Integer(2));
    assert_eq!(y["micro_batch_size"], Yaml::Integer(1));
    assert_eq!(y["gradient_accumulation_steps"], Yaml::Integer(4));
    assert_eq!(y["num_epochs"].as_f64(), Some(1.5));
    assert_eq!(y["max_steps"], Yaml::Integer(90));
    assert_eq!(y["sample_packing"], Yaml::Boolean(true));
    assert_eq!(y["warmup_ratio"].as_f64(), Some(0.05));
    // the cluster and the throughput are not axolotl keys: the cluster is the launcher comment
    assert!(y["nodes"].is_badvalue() && y["tokens_per_second_per_gpu"].is_badvalue());
    assert!(
        e.text.contains(
            "# launch: torchrun --nnodes 2 --nproc-per-node 8 -m axolotl.cli.train config.yml\n"
        ),
        "{}",
        e.text
    );
    // the computed results are repeated as a comment: dp = 16 // 2 // 2 = 4, batch 1 × 4 × 4
    assert!(e.text.contains("batch_size 16"), "{}", e.text);
    assert!(e.notes.iter().any(|n| n.starts_with("dpcalc computed: ")));
}

#[test]
fn axolotl_round_trips_through_import_with_the_same_numbers() {
    let (raw, e) = ex(Framework::Axolotl, AXOLOTL);
    let back = import(&e.text);
    assert_eq!(back.framework, Framework::Axolotl);
    assert!(
        back.errors.is_empty() && back.unknown.is_empty(),
        "{back:?}"
    );
    // the config keys, and what dpcalc's comments carry: the launcher line's cluster shape and
    // the training rows
    let mut want = RawInputs::from_pairs(config_pairs(AXOLOTL));
    for f in [Field::Nodes, Field::GpusPerNode, Field::NumSamples] {
        want.set(f, raw.get(f));
    }
    assert_eq!(back.raw(), want);
    // with the cluster put back, axolotl computes the same report
    let mut again = back.raw();
    for f in [Field::Nodes, Field::GpusPerNode, Field::NumSamples] {
        again.set(f, raw.get(f));
    }
    again.set(Field::TokensPerSecondPerGpu, "3000");
    let (a, b) = (
        Framework::Axolotl.compute("0.19.0", &raw),
        Framework::Axolotl.compute("0.19.0", &again),
    );
    assert_eq!(a, b);
    assert!(a.value(Output::MaxSteps).is_some());
}

#[test]
fn invalid_fields_are_left_out_with_a_note() {
    let (_, e) = ex(
        Framework::Axolotl,
        &[
            (Field::MicroBatchSize, "two"),
            (Field::GradientAccumulationSteps, "4"),
            (Field::NumEpochs, "-1"),
        ],
    );
    let y = yaml(&e.text);
    assert!(y["micro_batch_size"].is_badvalue());
    assert!(y["num_epochs"].is_badvalue());
    assert_eq!(y["gradient_accumulation_steps"], Yaml::Integer(4));
    assert!(e
        .text
        .contains("# micro_batch_size left out: micro_batch_size is not a number"));
    assert!(e
        .text
        .contains("# num_epochs left out: num_epochs cannot be negative"));
    // a refused combination (axolotl's own text) leaves the field it is reported at out
    let (_, e) = ex(
        Framework::Axolotl,
        &[
            (Field::GradientAccumulationSteps, "4"),
            (Field::BatchSize, "16"),
        ],
    );
    assert!(!e.text.contains("\nbatch_size:"), "{}", e.text);
    assert!(e
        .text
        .contains("please set only one of gradient_accumulation_steps or batch_size"));
    // a conflicting (repeated) link value is not picked
    let mut raw = RawInputs::default();
    raw.set_conflict(Field::MicroBatchSize, vec!["1".into(), "2".into()]);
    let r = Framework::Axolotl.compute("0.19.0", &raw);
    let e = export(Framework::Axolotl, "0.19.0", &raw, &r);
    assert!(e
        .text
        .contains("# micro_batch_size left out: micro_batch_size is given 2 times"));
    // a bad cluster: no launcher line, and why
    let (_, e) = ex(Framework::Axolotl, &[(Field::Nodes, "0")]);
    assert!(e.text.contains("# no launcher line: "), "{}", e.text);
    assert!(!e.text.contains("torchrun"));
}

const DEEPSPEED: &[(Field, &str)] = &[
    (Field::Nodes, "2"),
    (Field::GpusPerNode, "8"),
    (Field::TrainBatchSize, "256"),
    (Field::TrainMicroBatchSizePerGpu, "4"),
    (Field::GradientAccumulationSteps, "4"),
    (Field::AutotpSize, "2"),
    (Field::SequenceParallelSize, "1"),
];

#[test]
fn deepspeed_json_parses_and_nests_autotp() {
    let (_, e) = ex(Framework::DeepSpeed, DEEPSPEED);
    assert_eq!((e.lang, e.file_name), ("json", "ds_config.json"));
    let j: serde_json::Value = serde_json::from_str(&e.text).expect("valid JSON, no comments");
    assert_eq!(j["train_batch_size"], 256);
    assert_eq!(j["train_micro_batch_size_per_gpu"], 4);
    assert_eq!(j["gradient_accumulation_steps"], 4);
    assert_eq!(j["tensor_parallel"]["autotp_size"], 2);
    assert_eq!(j["sequence_parallel_size"], 1);
    assert_eq!(j.as_object().map(|o| o.len()), Some(5));
    // the launcher is a note (JSON has no comments)
    assert!(e
        .notes
        .iter()
        .any(|n| n
            == "launch: deepspeed --num_nodes 2 --num_gpus 8 train.py --deepspeed ds_config.json"));
}

#[test]
fn deepspeed_round_trips() {
    let (_, e) = ex(Framework::DeepSpeed, DEEPSPEED);
    let back = import(&e.text);
    assert_eq!(back.framework, Framework::DeepSpeed);
    assert!(
        back.errors.is_empty() && back.unknown.is_empty(),
        "{back:?}"
    );
    // the cluster too: 256 = 4 × 4 × 16 fixes 16 GPUs, read back as 2 nodes × 8
    assert_eq!(back.raw(), RawInputs::from_pairs(DEEPSPEED.iter().copied()));
}

const MEGATRON: &[(Field, &str)] = &[
    (Field::Nodes, "4"),
    (Field::GpusPerNode, "8"),
    (Field::TensorModelParallelSize, "2"),
    (Field::PipelineModelParallelSize, "2"),
    (Field::ContextParallelSize, "1"),
    (Field::ExpertModelParallelSize, "1"),
    (Field::MicroBatchSize, "2"),
    (Field::GlobalBatchSize, "256"),
    (Field::RampupBatchSize, "16 16 96"),
    (Field::DecreaseBatchSizeIfNeeded, "true"),
    (Field::TrainSamples, "100000"),
    (Field::SeqLength, "4096"),
    (Field::LrWarmupFraction, "0.01"),
];

#[test]
fn megatron_command_line() {
    let (_, e) = ex(Framework::Megatron, MEGATRON);
    assert_eq!(e.lang, "sh");
    assert!(e.text.contains(
        "torchrun --nnodes 4 --nproc-per-node 8 pretrain_gpt.py \\\n    --tensor-model-parallel-size 2 \\\n"
    ), "{}", e.text);
    assert!(e.text.contains("    --rampup-batch-size 16 16 96 \\\n"));
    assert!(e.text.contains("    --decrease-batch-size-if-needed \\\n"));
    assert!(e.text.contains("    --lr-warmup-fraction 0.01\n"));
    // the shell reads it as one command: every line but the last ends in a continuation
    let body: Vec<&str> = e.text.lines().filter(|l| !l.starts_with('#')).collect();
    let (last, rest) = body.split_last().unwrap();
    assert!(rest.iter().all(|l| l.ends_with(" \\")) && !last.ends_with('\\'));
}

#[test]
fn megatron_round_trips_with_the_cluster() {
    let (_, e) = ex(Framework::Megatron, MEGATRON);
    let back = import(&e.text);
    assert_eq!(back.framework, Framework::Megatron);
    assert!(
        back.errors.is_empty() && back.unknown.is_empty(),
        "{back:?}"
    );
    let want: Vec<(Field, &str)> = MEGATRON
        .iter()
        .copied()
        .filter(|(f, _)| *f != Field::WorldSize)
        .collect();
    assert_eq!(back.raw(), RawInputs::from_pairs(want));
    // a schedule with spaces is one quoted word, and comes back whole (Megatron-LM HEAD only)
    let (_, e) = ex_at(
        Framework::Megatron,
        "head",
        &[
            (Field::StepBatchSizeSchedule, "0:256 200000:512"),
            (Field::MicroBatchSize, "1"),
        ],
    );
    assert!(
        e.text
            .contains("--step-batch-size-schedule '0:256 200000:512'"),
        "{}",
        e.text
    );
    let back = import(&e.text);
    assert_eq!(
        back.get(Field::StepBatchSizeSchedule),
        Some("0:256 200000:512")
    );
}

/// Megatron's GPT as its own arguments: the switches are written as Megatron-LM's flags (a false
/// `store_true` flag is left out: it is the default) and come back the same.
#[test]
fn megatron_gpt_arguments_round_trip() {
    let gpt = [
        (Field::NumLayers, "24"),
        (Field::HiddenSize, "1024"),
        (Field::ModelNumAttentionHeads, "16"),
        (Field::MaxPositionEmbeddings, "1024"),
        (Field::PositionEmbeddingType, "rope"),
        (Field::Normalization, "RMSNorm"),
        (Field::DisableBiasLinear, "true"),
        (Field::Swiglu, "true"),
        (Field::MicroBatchSize, "4"),
    ];
    let (_, e) = ex(Framework::Megatron, &gpt);
    for line in [
        "    --max-position-embeddings 1024",
        "    --position-embedding-type rope",
        "    --normalization RMSNorm",
        "    --disable-bias-linear",
        "    --swiglu",
    ] {
        assert!(
            e.text.lines().any(|l| l.trim_end_matches(" \\") == line),
            "{line} not in {}",
            e.text
        );
    }
    let back = import(&e.text);
    assert!(
        back.errors.is_empty() && back.unknown.is_empty(),
        "{back:?}"
    );
    for (f, v) in gpt {
        assert_eq!(back.get(f), Some(v), "{f:?}");
    }
}

#[test]
fn world_size_goes_into_the_launcher() {
    let (_, e) = ex(
        Framework::Megatron,
        &[
            (Field::WorldSize, "12"),
            (Field::GpusPerNode, "4"),
            (Field::MicroBatchSize, "1"),
        ],
    );
    assert!(
        e.text
            .contains("torchrun --nnodes 3 --nproc-per-node 4 pretrain_gpt.py"),
        "{}",
        e.text
    );
    let (_, e) = ex(Framework::Megatron, &[(Field::WorldSize, "6")]);
    assert!(
        e.text.contains("torchrun --nnodes 1 --nproc-per-node 6 "),
        "{}",
        e.text
    );
}

#[test]
fn torchtitan_toml_parses_with_a_toml_parser() {
    let (_, e) = ex(
        Framework::Torchtitan,
        &[
            (Field::Nodes, "2"),
            (Field::DataParallelReplicateDegree, "2"),
            (Field::DataParallelShardDegree, "-1"),
            (Field::TensorParallelDegree, "2"),
            (Field::PipelineParallelMicrobatchSize, "1"),
            (Field::LocalBatchSize, "8"),
            (Field::GlobalBatchSize, "128"),
            (Field::SeqLen, "8192"),
            (Field::Steps, "1000"),
        ],
    );
    assert_eq!(e.lang, "toml");
    let t: toml::Table = toml::from_str(&e.text).unwrap_or_else(|err| panic!("{err}\n{}", e.text));
    let par = t["parallelism"].as_table().unwrap();
    assert_eq!(par["data_parallel_replicate_degree"].as_integer(), Some(2));
    assert_eq!(par["data_parallel_shard_degree"].as_integer(), Some(-1));
    assert_eq!(par["tensor_parallel_degree"].as_integer(), Some(2));
    assert_eq!(
        par["pipeline_parallel_microbatch_size"].as_integer(),
        Some(1)
    );
    let tr = t["training"].as_table().unwrap();
    assert_eq!(tr["local_batch_size"].as_integer(), Some(8));
    assert_eq!(tr["global_batch_size"].as_integer(), Some(128));
    assert_eq!(tr["seq_len"].as_integer(), Some(8192));
    assert_eq!(tr["steps"].as_integer(), Some(1000));
    assert_eq!(t.len(), 2);
    assert!(e
        .text
        .contains("# launch: torchrun --nnodes 2 --nproc-per-node 8 -m torchtitan.train"));
}

#[test]
fn nanotron_yaml_sections() {
    let (_, e) = ex(
        Framework::Nanotron,
        &[
            (Field::Dp, "2"),
            (Field::Tp, "4"),
            (Field::Pp, "1"),
            (Field::ExpertParallelSize, "1"),
            (Field::MicroBatchSize, "2"),
            (Field::BatchAccumulationPerReplica, "8"),
            (Field::SequenceLength, "2048"),
            (Field::TrainSteps, "5000"),
        ],
    );
    let y = yaml(&e.text);
    assert_eq!(y["parallelism"]["dp"], Yaml::Integer(2));
    assert_eq!(y["parallelism"]["tp"], Yaml::Integer(4));
    assert_eq!(y["parallelism"]["expert_parallel_size"], Yaml::Integer(1));
    assert_eq!(y["tokens"]["micro_batch_size"], Yaml::Integer(2));
    assert_eq!(
        y["tokens"]["batch_accumulation_per_replica"],
        Yaml::Integer(8)
    );
    assert_eq!(y["tokens"]["sequence_length"], Yaml::Integer(2048));
    assert_eq!(y["tokens"]["train_steps"], Yaml::Integer(5000));
}

const HF: &[(Field, &str)] = &[
    (Field::PerDeviceTrainBatchSize, "8"),
    (Field::GradientAccumulationSteps, "2"),
    (Field::NumTrainEpochs, "3"),
    (Field::MaxSteps, "500"),
    (Field::DataloaderDropLast, "true"),
    (Field::TrainSamplingStrategy, "batch_rebalance"),
    (Field::WarmupSteps, "0.1"),
    (Field::SaveSteps, "0.25"),
    (Field::TpSize, "2"),
    (Field::CpSize, "2"),
    (Field::MaxLength, "2048"),
    (Field::NumSamples, "10000"),
];

#[test]
fn hf_training_arguments() {
    let (_, e) = ex(Framework::Hf, HF);
    assert_eq!(e.lang, "python");
    for line in [
        "args = TrainingArguments(\n",
        "    per_device_train_batch_size=8,\n",
        "    gradient_accumulation_steps=2,\n",
        "    num_train_epochs=3,\n",
        "    max_steps=500,\n",
        "    dataloader_drop_last=True,\n",
        "    train_sampling_strategy=\"batch_rebalance\",\n",
        "    warmup_steps=0.1,\n",
        "    save_steps=0.25,\n",
        "    # parallelism_config=ParallelismConfig(tp_size=2, cp_size=2),",
        "    # max_length=2048 goes in trl.SFTConfig",
        "# num_samples 10000: training rows, dpcalc's input (not a config key)\n",
    ] {
        assert!(e.text.contains(line), "{line}\n{}", e.text);
    }
    // Python itself, when the machine has it, parses the fragment
    if let Ok(out) = std::process::Command::new("python3")
        .args(["-c", "import ast,sys; ast.parse(sys.stdin.read())"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(e.text.as_bytes())?;
            child.wait_with_output()
        })
    {
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            e.text
        );
    }
    // transformers 4 has no train_sampling_strategy: left out, with the reason
    let (_, e) = ex_at(Framework::Hf, "4.57", HF);
    assert!(!e.text.contains("train_sampling_strategy="), "{}", e.text);
    assert!(
        e.notes
            .iter()
            .any(|n| n.starts_with("train_sampling_strategy left out")
                && n.contains("unexpected keyword argument 'train_sampling_strategy'")),
        "{:?}",
        e.notes
    );
}

#[test]
fn floats_parse_back_to_the_same_double_in_every_format() {
    for x in [
        0.1,
        1.5,
        1e-5,
        3.0,
        2.5e-7,
        0.30000000000000004,
        123456789.125,
        1e300,
    ] {
        let lit = float_lit(x);
        // YAML 1.2 (yaml-rust2), TOML, JSON and Rust all read it back exactly
        assert_eq!(yaml(&format!("v: {lit}"))["v"].as_f64(), Some(x), "{lit}");
        let t: toml::Table = toml::from_str(&format!("v = {lit}")).unwrap();
        assert_eq!(t["v"].as_float(), Some(x), "{lit}");
        let j: serde_json::Value = serde_json::from_str(&lit).unwrap();
        assert_eq!(j.as_f64(), Some(x), "{lit}");
        // PyYAML (YAML 1.1) needs a point and a signed exponent, or it reads a string
        assert!(lit.contains('.'));
        if let Some(i) = lit.find('e') {
            assert!(matches!(&lit[i + 1..i + 2], "+" | "-"), "{lit}");
        }
    }
    // a float field's value in the exported YAML is that literal
    let (_, e) = ex(Framework::Axolotl, &[(Field::WarmupRatio, "0.00001")]);
    assert!(e.text.contains("\nwarmup_ratio: 1.0e-05\n"), "{}", e.text);
    assert_eq!(import(&e.text).get(Field::WarmupRatio), Some("1.0e-05"));
}

#[test]
fn every_framework_exports_parseable_text_for_hostile_field_values() {
    // every field of every framework gets a nasty value: nothing panics, formats stay valid
    let nasty = [
        "\"quoted\"\n# x",
        "1e309",
        "-0",
        "18446744073709551616",
        "\u{7}",
        "true",
    ];
    for &fw in Framework::ALL {
        for bad in nasty {
            let pairs: Vec<(Field, &str)> = Field::ALL.iter().map(|&f| (f, bad)).collect();
            let (_, e) = ex(fw, &pairs);
            match e.lang {
                "yaml" => drop(YamlLoader::load_from_str(&e.text).unwrap()),
                "json" => drop(serde_json::from_str::<serde_json::Value>(&e.text).unwrap()),
                "toml" => drop(toml::from_str::<toml::Table>(&e.text).unwrap()),
                _ => {}
            }
            // no comment line is broken by a newline in a message
            assert!(
                e.text.lines().all(|l| !l.starts_with("\"quoted")),
                "{}",
                e.text
            );
        }
    }
}

#[test]
fn forced_import_of_an_export() {
    let (_, e) = ex(Framework::Axolotl, &[(Field::MicroBatchSize, "2")]);
    let back = import_as(Framework::Axolotl, &e.text);
    assert_eq!(back.get(Field::MicroBatchSize), Some("2"));
    // read as another framework's format: that format's error, nothing filled
    let other = import_as(Framework::Torchtitan, &e.text);
    assert!(
        other.errors[0].starts_with("TOML error at line "),
        "{other:?}"
    );
    assert!(other.inputs.is_empty());
}

/// Format fidelity, for any values of the right kinds: export (with no report, so nothing is
/// left out or derived) → import gives back every value, as the same number.
#[cfg(not(target_arch = "wasm32"))]
mod round_trip_properties {
    use super::*;
    use dpcalc::calc::{Kind, Report};
    use proptest::prelude::*;

    const FIELDS: &[(Framework, &[Field])] = &[
        (
            Framework::Axolotl,
            &[
                Field::TensorParallelSize,
                Field::ContextParallelSize,
                Field::MicroBatchSize,
                Field::GradientAccumulationSteps,
                Field::BatchSize,
                Field::NumEpochs,
                Field::MaxSteps,
                Field::SequenceLen,
                Field::SamplePacking,
                Field::SamplePackingEffEst,
                Field::TotalNumTokens,
                Field::WarmupSteps,
                Field::WarmupRatio,
                Field::ValSetSize,
                Field::EvalsPerEpoch,
                Field::SavesPerEpoch,
            ],
        ),
        (
            Framework::DeepSpeed,
            &[
                Field::TrainBatchSize,
                Field::TrainMicroBatchSizePerGpu,
                Field::GradientAccumulationSteps,
                Field::AutotpSize,
                Field::SequenceParallelSize,
            ],
        ),
        (
            Framework::Megatron,
            &[
                Field::TensorModelParallelSize,
                Field::PipelineModelParallelSize,
                Field::ContextParallelSize,
                Field::ExpertModelParallelSize,
                Field::MicroBatchSize,
                Field::GlobalBatchSize,
                Field::RampupBatchSize,
                Field::StepBatchSizeSchedule,
                Field::DecreaseBatchSizeIfNeeded,
                Field::TrainIters,
                Field::TrainSamples,
                Field::SeqLength,
                Field::LrDecayIters,
                Field::LrDecaySamples,
                Field::LrWarmupIters,
                Field::LrWarmupFraction,
                Field::LrWarmupSamples,
            ],
        ),
    ];

    /// A value's meaning: numbers compare as numbers, flags as booleans (a Megatron store_true
    /// flag that is false is simply absent), text as words.
    fn meaning(fw: Framework, f: Field, text: &str) -> Option<String> {
        let t = text.trim();
        if t.is_empty() {
            return None;
        }
        Some(match f.kind() {
            Kind::Real => format!("{:?}", t.parse::<f64>().unwrap()),
            Kind::Flag if fw == Framework::Megatron && t == "false" => return None,
            Kind::Text => t.split_whitespace().collect::<Vec<_>>().join(" "),
            _ => t.to_string(),
        })
    }

    fn value(kind: Kind) -> BoxedStrategy<String> {
        match kind {
            Kind::Count => any::<u64>().prop_map(|v| v.to_string()).boxed(),
            Kind::Int => any::<i64>().prop_map(|v| v.to_string()).boxed(),
            Kind::Flag => prop_oneof![Just("true".to_string()), Just("false".to_string())].boxed(),
            Kind::Real => prop_oneof![
                (0.0f64..1e6).prop_map(|x| x.to_string()),
                (0u32..1000).prop_map(|x| x.to_string()),
                (1e-300f64..1e300).prop_map(|x| format!("{x:e}")),
            ]
            .boxed(),
            Kind::Text => proptest::collection::vec("[0-9:KM]{1,6}", 1..4)
                .prop_map(|w| w.join(" "))
                .boxed(),
        }
    }

    fn inputs() -> impl Strategy<Value = (Framework, Vec<(Field, Option<String>)>)> {
        (0..FIELDS.len()).prop_flat_map(|i| {
            let (fw, fields) = FIELDS[i];
            let each: Vec<_> = fields
                .iter()
                .map(|&f| proptest::option::of(value(f.kind())).prop_map(move |v| (f, v)))
                .collect();
            (Just(fw), each)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn export_then_import_keeps_every_value((fw, pairs) in inputs()) {
            let mut raw = RawInputs::default();
            for (f, v) in &pairs {
                if let Some(v) = v {
                    raw.set(*f, v.as_str());
                }
            }
            let e = export(fw, fw.default_release().id, &raw, &Report::default());
            let back = import(&e.text);
            if e.text.trim() == "{}" {
                // DeepSpeed's JSON with no key: no config (the page keeps its inputs)
                prop_assert_eq!(back.errors, [NOT_A_CONFIG]);
                return Ok(());
            }
            prop_assert_eq!(back.framework, fw);
            prop_assert!(back.errors.is_empty() && back.unknown.is_empty(), "{:?}\n{}", back, e.text);
            for (f, _) in &pairs {
                let want = meaning(fw, *f, raw.get(*f));
                let got = back.get(*f).and_then(|t| meaning(fw, *f, t));
                prop_assert_eq!(&got, &want, "{}\n{}", f.key(), e.text);
            }
        }
    }
}

#[test]
fn nanotron_yaml_nests_the_model_keys() {
    let (_, e) = ex(
        Framework::Nanotron,
        &[
            (Field::Dp, "2"),
            (Field::Tp, "4"),
            (Field::Pp, "1"),
            (Field::NumAttentionHeads, "16"),
            (Field::NumKeyValueHeads, "4"),
        ],
    );
    let y = yaml(&e.text);
    assert_eq!(y["parallelism"]["tp"], Yaml::Integer(4));
    assert_eq!(
        y["model"]["model_config"]["num_attention_heads"],
        Yaml::Integer(16)
    );
    assert_eq!(
        y["model"]["model_config"]["num_key_value_heads"],
        Yaml::Integer(4)
    );
}
