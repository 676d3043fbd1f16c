//! The model, memory and compute stage as the page runs it: links with a model, a GPU and the
//! frameworks' memory settings, against the values the frameworks' own code returned
//! (tests/fixtures/model_*.json, see tests/fixtures/README.md for the commands).

use crate::common::files::fixture_json;
use crate::common::report::accepted as report;
use dpcalc::calc::{Level, Num, Output, Report};
use dpcalc::query;
use serde_json::Value;

fn int(r: &Report, o: Output) -> i128 {
    match r.value(o) {
        Some(Num::Int(v)) => v,
        other => panic!("{}: {other:?}", o.name()),
    }
}

fn float(r: &Report, o: Output) -> f64 {
    match r.value(o) {
        Some(Num::Float(v)) => v,
        other => panic!("{}: {other:?}", o.name()),
    }
}

/// Every DeepSpeed estimator record, through an axolotl, HF and DeepSpeed link.
#[test]
fn zero_model_states_through_the_page_equal_deepspeed() {
    let z = fixture_json("model_zero.json");
    let mut n = 0;
    for rec in z["records"].as_array().unwrap() {
        let model = rec["model"].as_str().unwrap();
        let dev = |k: &str| {
            if rec[k].as_bool() == Some(true) {
                "cpu"
            } else {
                "none"
            }
        };
        let mut q = format!(
            "nodes={}&gpus_per_node={}&zero_optimization.stage={}&zero_optimization.offload_optimizer.device={}",
            rec["num_nodes"], rec["num_gpus_per_node"], rec["stage"], dev("cpu_offload")
        );
        if rec["stage"] == 3 {
            q += &format!(
                "&zero_optimization.offload_param.device={}&zero_init={}",
                dev("cpu_offload_params"),
                rec["zero_init"]
            );
        }
        for (fw, key) in [
            ("axolotl", "base_model"),
            ("hf", "model_name_or_path"),
            ("deepspeed", "model"),
        ] {
            let link = format!("framework={fw}&{key}={model}&{q}&micro_batch_size=1&gradient_accumulation_steps=1&train_micro_batch_size_per_gpu=1");
            let r = query::decode(&link).report();
            let o = &rec["outputs"];
            assert_eq!(
                r.value(Output::ZeroModelStatesGpuBytes),
                Some(Num::Int(o["gpu_mem"].as_i64().unwrap().into())),
                "{link}"
            );
            assert_eq!(
                r.value(Output::ZeroModelStatesCpuBytes),
                Some(Num::Int(o["cpu_mem"].as_i64().unwrap().into())),
                "{link}"
            );
            n += 1;
        }
    }
    assert!(n >= 700, "{n}");
}

/// The issue's example and the newcomer's case: Llama-3.1-70B, 8 × H100, axolotl with ZeRO-3.
#[test]
fn llama_70b_on_8_h100_with_axolotl_zero3() {
    let r = report(
        "framework=axolotl&version=0.21.0&base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&mfu=0.4&zero_optimization.stage=3&micro_batch_size=1&gradient_accumulation_steps=4&num_samples=10000&sequence_len=4096",
    );
    assert_eq!(int(&r, Output::NumParameters), 70_553_706_496);
    let ne = int(&r, Output::NumParametersExcludeEmbeddings);
    assert_eq!(ne, 70_553_706_496 - 128_256 * 8192);
    assert_eq!(int(&r, Output::FlopsPerToken), 6 * ne);
    assert_eq!(int(&r, Output::FlopsPerTokenHf), 6 * ne);
    assert_eq!(int(&r, Output::PeakTflops), 989);
    assert_eq!(int(&r, Output::GpuMemoryBytes), 80_000_000_000);
    let tps = float(&r, Output::TokensPerSecondPerGpu);
    assert_eq!(tps, 0.4 * 989.0 * 1e12 / (6 * ne) as f64);
    // the estimate feeds the time: tokens per step ÷ (tps × world)
    let step = float(&r, Output::TimePerStepSeconds);
    let tokens = int(&r, Output::TokensPerStep) as f64;
    assert_eq!(step, tokens / (tps * 8.0));
    assert!(r.value(Output::TotalTimeSeconds).is_some());
    assert!(r.value(Output::ZeroModelStatesGpuBytes).is_some());
    // a measured throughput wins over the estimate
    let m = report("base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&mfu=0.4&tokens_per_second_per_gpu=1000&micro_batch_size=1&num_samples=100");
    let step = float(&m, Output::TimePerStepSeconds);
    assert_eq!(step, int(&m, Output::TokensPerStep) as f64 / (1000.0 * 8.0));
}

/// Megatron's theoretical memory through a Megatron link with its own arguments, for every
/// recorded run a link can state (no virtual pipeline, no explicit recompute layer count); every
/// run gives `--position-embedding-type rope`.
#[test]
fn megatron_theoretical_memory_through_the_page() {
    let m = fixture_json("model_megatron.json");
    let mut n = 0;
    for rec in m["records"].as_array().unwrap() {
        let a = rec["inputs"].as_object().unwrap();
        // (the runs with a `command` are Megatron's GPT, checked below)
        if rec.get("command").is_some()
            || a.contains_key("num_layers_per_virtual_pipeline_stage")
            || a.contains_key("recompute_num_layers")
        {
            continue;
        }
        let mut q = String::from(
            "framework=megatron&version=0.19.2&train_iters=10&position_embedding_type=rope",
        );
        for (k, v) in a {
            let key = match k.as_str() {
                "WORLD_SIZE" => "world_size",
                // the NullTokenizer adds one token: the run's vocabulary is one more
                "vocab_size" => {
                    q += &format!("&vocab_size={}", v.as_u64().unwrap() + 1);
                    continue;
                }
                k => k,
            };
            let v = match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            q += &format!("&{key}={v}");
        }
        if !a.contains_key("untie_embeddings_and_output_weights") {
            q += "&untie_embeddings_and_output_weights=false";
        }
        if !a.contains_key("swiglu") {
            continue;
        }
        if !a.contains_key("group_query_attention") {
            q += "&group_query_attention=false";
        }
        let r = query::decode(&q).report();
        let o = &rec["outputs"];
        let want = |k: &str| o[k].as_str().unwrap().parse::<f64>().unwrap();
        assert_eq!(
            r.value(Output::TotalMemoryMb),
            Some(Num::Float(want("total_memory"))),
            "{} {q}: {:?}",
            rec["name"],
            r.diags
        );
        assert_eq!(
            r.value(Output::WeightAndOptimizerMemoryMb),
            Some(Num::Float(want("weight_and_optimizer_memory"))),
            "{}",
            rec["name"]
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} Megatron runs checked");
}

/// Megatron's own GPT (its arguments, each absent one at Megatron's default: a GeLU MLP,
/// linear biases, LayerNorm, learned positions, tied embeddings) through a link: its parameters
/// as megatron-core 0.19.2's `GPTModel` counts them (per layer, embeddings, output layer, final
/// norm), `report_theoretical_memory`, the padded vocabulary and `num_floating_point_operations`
/// per token, to the bit; and Megatron's refusals at the key they concern. Every record of
/// tests/fixtures/model_megatron.json with its `command`.
#[test]
fn megatron_gpt_through_the_page_equals_megatrons_own_model() {
    let m = fixture_json("model_megatron.json");
    let (mut accepted, mut refused) = (0, 0);
    for rec in m["records"].as_array().unwrap() {
        if rec.get("command").is_none() {
            continue;
        }
        let name = rec["name"].as_str().unwrap();
        let a = rec["inputs"].as_object().unwrap();
        let mut q = String::from("framework=megatron&version=0.19.2&train_iters=10");
        for (k, v) in a {
            let v = match (k.as_str(), v) {
                ("no_rope_fusion", _) => continue,
                // the NullTokenizer adds one token: the run's vocabulary is one more
                ("vocab_size", v) => (v.as_u64().unwrap() + 1).to_string(),
                (_, Value::String(s)) => s.clone(),
                (_, v) => v.to_string(),
            };
            let k = if k == "WORLD_SIZE" { "world_size" } else { k };
            q += &format!("&{k}={v}");
        }
        let r = query::decode(&q).report();
        if let Some(err) = rec.get("error").and_then(Value::as_str) {
            // Megatron's words after the exception's name
            let says = err.split_once(": ").map_or(err, |(_, s)| s);
            assert!(
                r.diags
                    .iter()
                    .any(|d| d.level == Level::Error && d.message.contains(says)),
                "{name}: {says} not in {:?}",
                r.diags
            );
            refused += 1;
            continue;
        }
        let o = &rec["outputs"];
        let f = |k: &str| o[k].as_str().unwrap().parse::<f64>().unwrap();
        let n = |k: &str| o[k].as_u64().map(u128::from).unwrap();
        assert_eq!(
            r.value(Output::NumParameters),
            Some(Num::Int(n("num_parameters") as i128)),
            "{name} {q}: {:?}",
            r.diags
        );
        for (out, want) in [
            (
                Output::WeightAndOptimizerMemoryMb,
                f("weight_and_optimizer_memory"),
            ),
            (Output::ActivationMemoryMb, f("activation_memory")),
            (Output::TotalMemoryMb, f("total_memory")),
            (Output::FlopsPerTokenMegatron, f("flops_per_token")),
        ] {
            assert_eq!(r.value(out), Some(Num::Float(want)), "{name} {out:?}");
        }
        assert_eq!(
            r.value(Output::PaddedVocabSize),
            Some(Num::Int(i128::from(
                rec["derived"]["padded_vocab_size"].as_i64().unwrap()
            ))),
            "{name}"
        );
        // the model's own parts, as GPTModel holds them at TP = PP = 1
        let model = &r.plan.settings.model.as_ref().unwrap().model;
        for (i, want) in o["layer_params"].as_array().unwrap().iter().enumerate() {
            let (all, _) = model.layer_params(i as u64).unwrap();
            assert_eq!(Some(all), want.as_u64().map(u128::from), "{name} layer {i}");
        }
        assert_eq!(
            model.embedding_params(),
            Some(n("embedding_params")),
            "{name}"
        );
        let output = if model.tie_word_embeddings {
            0
        } else {
            model.output_layer_params().unwrap()
        };
        assert_eq!(output, n("output_layer_params"), "{name}");
        assert_eq!(
            model.final_norm_params(),
            Some(n("final_layernorm_params")),
            "{name}"
        );
        // the published estimate counts the same model
        assert!(r.value(Output::MemoryPerGpuBytes).is_some(), "{name}");
        accepted += 1;
    }
    assert_eq!((accepted, refused), (19, 4));
}

/// A GPT typed from Megatron's arguments without `--max-position-embeddings` (which Megatron
/// requires, and whose rows its default learned position embeddings have) is not counted; the
/// field says why. With rotary embeddings it needs none.
#[test]
fn megatron_gpt_needs_max_position_embeddings_for_learned_positions() {
    let q = "framework=megatron&version=0.19.2&world_size=8&num_layers=24&hidden_size=1024&num_attention_heads=16&vocab_size=50257&seq_length=1024&micro_batch_size=4&global_batch_size=256&train_iters=10";
    let r = report(q);
    assert!(r.value(Output::NumParameters).is_none());
    assert!(r
        .diags_for(dpcalc::calc::Field::MaxPositionEmbeddings)
        .any(|d| d.level == Level::Hint && d.message.contains("max_position_embeddings")));
    let r = report(&format!("{q}&position_embedding_type=rope"));
    // the rope record of tests/fixtures/model_megatron.json (gpt_345m_rope_dp8)
    assert_eq!(int(&r, Output::NumParameters), 353_774_592);
    let r = query::decode(&format!("{q}&position_embedding_type=alibi")).report();
    assert!(r
        .error_at(dpcalc::calc::Field::PositionEmbeddingType)
        .is_some());
}

#[test]
fn megatron_refuses_heads_not_a_multiple_of_tp() {
    let r = query::decode("framework=megatron&model=meta-llama/Llama-3.1-8B&world_size=6&tensor_model_parallel_size=3&micro_batch_size=1&global_batch_size=2&train_iters=1&seq_length=2048").report();
    let e = r
        .error_at(dpcalc::calc::Field::ModelNumAttentionHeads)
        .expect("a refusal");
    assert!(
        e.contains("ValueError: num_attention_heads (32) must be a multiple of tensor_model_parallel_size (3)."),
        "{e}"
    );
}

/// DeepSeek-V3's preset with config.json keys overridden in the link counts what transformers
/// counts for its config.json with the same overrides (every DeepSeek-V3 variation of
/// tests/fixtures/model_presets.json a link can state: `q_lora_rank: null` has no link form),
/// under each framework's model key.
#[test]
fn deepseek_v3_overrides_through_a_link_equal_transformers() {
    let f = fixture_json("model_presets.json");
    let mut n = 0;
    for rec in f["variations"].as_array().unwrap() {
        if rec["base"] != "deepseek-ai/DeepSeek-V3" {
            continue;
        }
        let overrides = rec["overrides"].as_object().unwrap();
        if overrides.values().any(Value::is_null) {
            continue;
        }
        let mut keys = String::new();
        for (k, v) in overrides {
            let k = if k == "n_routed_experts" {
                "num_experts"
            } else {
                k
            };
            keys += &format!("&{k}={v}");
        }
        for prefix in [
            "framework=axolotl&base_model=",
            "framework=deepspeed&train_micro_batch_size_per_gpu=1&model=",
            "framework=torchtitan&model=",
        ] {
            let q = format!("{prefix}deepseek-ai/DeepSeek-V3{keys}");
            let r = query::decode(&q).report();
            let o = &rec["outputs"];
            for (out, key) in [
                (Output::NumParameters, "num_parameters"),
                (
                    Output::NumParametersExcludeEmbeddings,
                    "num_parameters_exclude_embeddings",
                ),
            ] {
                assert_eq!(
                    r.value(out),
                    o[key].as_i64().map(|v| Num::Int(i128::from(v))),
                    "{q}: {:?}",
                    r.diags
                );
            }
        }
        n += 1;
    }
    assert_eq!(n, 15);
}

/// A model typed from scratch, an unknown preset and an unknown GPU: messages at their fields.
#[test]
fn typed_models_and_bad_names() {
    let r = report("framework=hf&hidden_size=4096&num_hidden_layers=32&num_attention_heads=32&num_key_value_heads=8&intermediate_size=14336&vocab_size=128256&per_device_train_batch_size=1");
    assert_eq!(int(&r, Output::NumParameters), 8_030_261_248);
    let r = query::decode("framework=hf&hidden_size=4096").report();
    assert!(r.value(Output::NumParameters).is_none());
    assert!(r
        .diags_for(dpcalc::calc::Field::VocabSize)
        .any(|d| d.level == Level::Hint));
    let r = query::decode("base_model=nobody/nothing&gpu=tpu").report();
    assert!(r
        .diags_for(dpcalc::calc::Field::BaseModel)
        .any(|d| d.level == Level::Note && d.message.contains("no preset")));
    assert!(r.error_at(dpcalc::calc::Field::Gpu).is_some());
    // the batch is still computed
    assert!(r.value(Output::GlobalBatchSize).is_some());
    let r = query::decode(
        "model_name_or_path=meta-llama/Llama-3.1-8B&num_key_value_heads=5&framework=hf",
    )
    .report();
    assert!(r
        .error_at(dpcalc::calc::Field::ModelNumKeyValueHeads)
        .is_some());
}

/// LoRA through an axolotl link: PEFT's count for every recorded run a link can state, and its
/// refusals at the key they concern.
#[test]
fn lora_through_an_axolotl_link_equals_peft() {
    let p = fixture_json("model_peft.json");
    let mut counted = 0;
    let mut refused = 0;
    for rec in p["records"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p["more"].as_array().unwrap())
    {
        let model = rec["model"].as_str().unwrap();
        let preset = dpcalc::calc::model::preset(model).unwrap();
        // only the presets as published (variations change the config)
        let cfg = &rec["config"];
        if cfg["hidden_size"].as_u64() != Some(preset.hidden_size)
            || cfg["num_hidden_layers"].as_u64() != Some(preset.num_hidden_layers)
            || cfg.get("mlp_only_layers").is_some()
            || cfg.get("decoder_sparse_step").is_some()
            || cfg.get("n_shared_experts").is_some()
            || cfg.get("q_lora_rank").is_some()
        {
            continue;
        }
        let i = &rec["inputs"];
        let mut q = format!("base_model={model}&adapter=lora&lora_r={}", i["lora_r"]);
        if let Some(l) = i.get("lora_target_linear") {
            q += &format!("&lora_target_linear={l}");
        }
        if let Some(m) = i.get("lora_target_modules").and_then(Value::as_array) {
            let names: Vec<&str> = m.iter().map(|x| x.as_str().unwrap()).collect();
            q += &format!("&lora_target_modules={}", names.join(","));
        }
        let r = query::decode(&q).report();
        match (
            rec["outputs"].get("trainable_parameters"),
            rec["outputs"].get("error"),
        ) {
            (Some(n), _) => {
                assert_eq!(
                    r.value(Output::TrainableParameters),
                    Some(Num::Int(n.as_i64().unwrap().into())),
                    "{q}: {:?}",
                    r.diags
                );
                counted += 1;
            }
            (None, Some(e)) => {
                let e = e.as_str().unwrap();
                let said = r
                    .diags
                    .iter()
                    .find(|d| d.refusal.is_some())
                    .unwrap_or_else(|| panic!("{q}: no refusal"));
                let says = &said.refusal.as_ref().unwrap().says;
                // Python prints a set in hash order: compare up to the set
                let head = |t: &str| t.split('{').next().unwrap().to_string();
                assert_eq!(head(says), head(e), "{q}");
                assert!(r.value(Output::TrainableParameters).is_none(), "{q}");
                refused += 1;
            }
            _ => panic!("{q}: no outcome"),
        }
    }
    assert!(
        counted >= 30 && refused >= 8,
        "{counted} counted, {refused} refused"
    );
}

/// Pasting a model's config.json fills the architecture of the current framework (Megatron's
/// own names under Megatron) and keeps the other inputs; the count then equals transformers'.
#[test]
fn a_pasted_config_json_fills_the_architecture() {
    use dpcalc::calc::import::model_config;
    use dpcalc::calc::{Field, Framework, RawInputs};
    let p = fixture_json("model_presets.json");
    let mut n = 0;
    for rec in p["presets"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p["variations"].as_array().unwrap())
    {
        let cfg = rec["config"].to_string();
        let want = rec["outputs"]["num_parameters"].as_i64().unwrap();
        // unmodelled layout keys (mlp_only_layers, decoder_sparse_step) are listed, not read
        let layout_keys = rec["config"].get("mlp_only_layers").is_some()
            || rec["config"].get("decoder_sparse_step").is_some();
        for &fw in Framework::ALL {
            let Some(imported) = model_config(fw, &cfg) else {
                panic!("{}: not read as a model config", rec["name"]);
            };
            assert!(imported.errors.is_empty(), "{:?}", imported.errors);
            let mut current = RawInputs::default();
            current.set(Field::Nodes, "2");
            current.set(fw.spec().fit.model_key, "Qwen/Qwen3-8B");
            let raw = imported.merged_into(&current);
            assert_eq!(raw.get(Field::Nodes), "2", "other inputs are kept");
            assert_eq!(
                raw.get(fw.spec().fit.model_key),
                "",
                "the preset is replaced"
            );
            let r = fw.compute(fw.default_release().id, &raw);
            // Megatron and nanotron hold fewer families (no model_type, q/k norms, biases)
            let exact = !layout_keys
                && (fw.has(Field::ModelType) || rec["config"]["model_type"] == "llama")
                && fw.has(Field::AttentionBias);
            if exact {
                assert_eq!(
                    r.value(Output::NumParameters),
                    Some(Num::Int(want.into())),
                    "{} {}: {:?}",
                    fw.id(),
                    rec["name"],
                    r.diags
                );
                n += 1;
            }
        }
    }
    assert!(n >= 100, "{n}");
    // not a model config
    assert!(model_config(Framework::Axolotl, "{\"train_batch_size\": 8}").is_none());
    assert!(model_config(Framework::Axolotl, "base_model: x").is_none());
}

/// Switching framework carries the model and each architecture key to the other framework's
/// name for it (Megatron's `num_layers`, `num_query_groups`, the inverted tie switch).
#[test]
fn switching_framework_carries_the_model() {
    use dpcalc::calc::frameworks::carry;
    use dpcalc::calc::{Field, Framework, RawInputs};
    let raw = RawInputs::from_pairs([
        (Field::BaseModel, "Qwen/Qwen3-8B"),
        (Field::NumHiddenLayers, "40"),
        (Field::ModelNumKeyValueHeads, "4"),
        (Field::TieWordEmbeddings, "true"),
        (Field::HeadDim, "128"),
        (Field::Optimizer, "adamw_bnb_8bit"),
        (Field::Gpu, "h200"),
    ]);
    let m = carry(Framework::Axolotl, &raw, Framework::Megatron);
    assert_eq!(m.get(Field::ModelId), "Qwen/Qwen3-8B");
    assert_eq!(m.get(Field::NumLayers), "40");
    assert_eq!(m.get(Field::NumQueryGroups), "4");
    assert_eq!(m.get(Field::GroupQueryAttention), "true");
    assert_eq!(m.get(Field::KvChannels), "128");
    assert_eq!(m.get(Field::UntieEmbeddingsAndOutputWeights), "false");
    assert_eq!(m.get(Field::Gpu), "h200");
    let h = carry(Framework::Megatron, &m, Framework::Hf);
    assert_eq!(h.get(Field::ModelNameOrPath), "Qwen/Qwen3-8B");
    assert_eq!(h.get(Field::NumHiddenLayers), "40");
    assert_eq!(h.get(Field::ModelNumKeyValueHeads), "4");
    assert_eq!(h.get(Field::TieWordEmbeddings), "true");
    let h2 = carry(Framework::Axolotl, &raw, Framework::Hf);
    assert_eq!(h2.get(Field::Optim), "adamw_bnb_8bit");
    // the same model gives the same count on both sides
    let a = Framework::Axolotl.compute("0.21.0", &raw);
    let n = carry(Framework::Axolotl, &raw, Framework::Nanotron);
    let b = Framework::Nanotron.compute("0.4", &n);
    assert_eq!(n.get(Field::NumKeyValueHeads), "4");
    assert!(a.value(Output::NumParameters).is_some());
    assert_eq!(
        a.value(Output::NumParameters),
        Framework::Hf
            .compute("5.25", &h2)
            .value(Output::NumParameters)
    );
    assert_eq!(
        a.value(Output::NumParameters),
        b.value(Output::NumParameters)
    );
}

/// The model stage's inputs go into an exported config only where they are keys of that file:
/// a Hub id, config.json's architecture or DeepSpeed's keys are named in a note instead.
#[test]
fn exports_write_only_keys_of_their_file() {
    use dpcalc::calc::export::export;
    let cases = [
        ("framework=hf&version=5.25&model_name_or_path=meta-llama/Llama-3.1-8B&zero_optimization.stage=3&gradient_checkpointing=true&hidden_size=4096", &["zero_optimization", "model_name_or_path=", "hidden_size="][..], &["gradient_checkpointing=True"][..]),
        ("framework=axolotl&version=0.21.0&base_model=meta-llama/Llama-3.1-8B&zero_optimization.stage=3&adapter=lora", &["zero_optimization", "hidden_size"][..], &["base_model: \"meta-llama/Llama-3.1-8B\"", "adapter: \"lora\""][..]),
        ("framework=deepspeed&version=0.19.8&model=meta-llama/Llama-3.1-8B&zero_optimization.stage=3&train_batch_size=8", &["\"model\"", "meta-llama"][..], &["\"stage\": 3"][..]),
        ("framework=megatron&version=0.19.2&model=meta-llama/Llama-3.1-8B&num_layers=40&micro_batch_size=1", &["--model "][..], &["--num-layers 40"][..]),
    ];
    for (q, absent, present) in cases {
        let link = query::decode(q);
        let r = link.report();
        let e = export(link.framework, link.release().id, &link.inputs, &r);
        let body: String = e
            .text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        for a in absent {
            assert!(!body.contains(a), "{q}: {a} written\n{}", e.text);
        }
        for p in present {
            assert!(e.text.contains(p), "{q}: {p} missing\n{}", e.text);
        }
        assert!(
            e.notes.iter().any(|n| n.contains("not a key of")),
            "{q}: {:?}",
            e.notes
        );
    }
}

/// A real DeepSpeed config nests its ZeRO keys; import reads them, export writes them nested.
#[test]
fn deepspeed_zero_keys_nest_in_json() {
    use dpcalc::calc::import::import;
    use dpcalc::calc::Field;
    let got = import(
        r#"{"train_batch_size": 16, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "overlap_comm": true}}"#,
    );
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    assert_eq!(got.get(Field::ZeroStage), Some("3"));
    assert_eq!(got.get(Field::OffloadOptimizerDevice), Some("cpu"));
    assert_eq!(got.unknown, ["zero_optimization.overlap_comm"]);
}

/// axolotl shards with FSDP when an fsdp_config block is given (its `is_fsdp`), not for a
/// top-level fsdp_version alone: the memory estimate follows the same rule.
#[test]
fn axolotl_fsdp_is_an_fsdp_config_block() {
    let base =
        "version=0.21.0&base_model=meta-llama/Llama-3.1-8B&micro_batch_size=1&num_samples=100";
    let bytes = |q: &str| {
        int(
            &query::decode(&format!("{base}&{q}")).report(),
            Output::MemoryPerGpuBytes,
        )
    };
    let replicated = bytes("gradient_checkpointing=false");
    assert_eq!(bytes("fsdp_version=2"), replicated);
    let sharded = bytes("fsdp_version=2&fsdp_config.reshard_after_forward=true");
    assert!(sharded < replicated, "{sharded} vs {replicated}");
    assert_eq!(
        bytes("fsdp_config.state_dict_type=FULL_STATE_DICT"),
        sharded
    );
}

/// axolotl's most common FSDP form as pasted (FSDP1's top-level list, `fsdp_`-prefixed
/// `fsdp_config` keys), as axolotl 0.21.0 handles it. Each refusal below is the text axolotl
/// 0.21.0's `validate_config` raised (CPU, WORLD_SIZE=8, transformers 5.20.1, accelerate 1.15.0):
/// `WORLD_SIZE=8 PYTHONDONTWRITEBYTECODE=1 ../venv/bin/python probe.py common_fsdp.yml`
/// (scripts/oracles/axolotl-fsdp/) (then `no_list.yml`, `no_list_no_strategy.yml`,
/// `offload_only.yml`, the same config without the list, without `fsdp_sharding_strategy`, and with
/// `fsdp_offload_params: true` alone: both read as `fsdp_version: 2`, `offload_params: True`).
const FSDP1_YAML: &str = "base_model: NousResearch/Meta-Llama-3.1-8B
sequence_len: 4096
micro_batch_size: 1
gradient_accumulation_steps: 4
num_epochs: 1
optimizer: adamw_torch_fused
gradient_checkpointing: true
fsdp:
  - full_shard
  - auto_wrap
fsdp_config:
  fsdp_limit_all_gathers: true
  fsdp_sync_module_states: true
  fsdp_offload_params: true
  fsdp_use_orig_params: false
  fsdp_cpu_ram_efficient_loading: true
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  fsdp_state_dict_type: FULL_STATE_DICT
  fsdp_sharding_strategy: FULL_SHARD
";

fn pasted(yaml: &str) -> Report {
    use dpcalc::calc::import::import;
    let got = import(yaml);
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let mut q = String::from("framework=axolotl&version=0.21.0&gpu=h100-sxm&num_samples=1000");
    for (f, v) in &got.inputs {
        q.push_str(&format!("&{}={}", f.key(), v.replace(' ', "")));
    }
    query::decode(&q).report()
}

fn error_at(r: &Report, field: &str) -> String {
    r.diags
        .iter()
        .find(|d| d.level == Level::Error && d.field.key() == field)
        .map(|d| d.message.clone())
        .unwrap_or_else(|| panic!("no error at {field}: {:?}", r.diags))
}

#[test]
fn axolotl_fsdp1_form_is_imported_and_refused_as_axolotl_0_21_0_does() {
    use dpcalc::calc::import::import;
    use dpcalc::calc::Field;
    let got = import(FSDP1_YAML);
    assert_eq!(got.get(Field::Fsdp), Some("full_shard, auto_wrap"));
    assert_eq!(got.get(Field::FsdpOffloadParams), Some("true"));
    assert_eq!(got.get(Field::FsdpStateDictType), Some("FULL_STATE_DICT"));
    assert_eq!(got.get(Field::FsdpShardingStrategy), Some("FULL_SHARD"));
    assert!(got
        .unknown
        .contains(&"fsdp_config.fsdp_limit_all_gathers".to_string()));
    // the list is refused first
    let r = pasted(FSDP1_YAML);
    assert!(error_at(&r, "fsdp").contains(
        "The top-level `fsdp` list is no longer supported, it configured FSDP1 sharding strategies. Use \
         `fsdp_config` instead, see docs/multi-gpu.qmd#sec-migrate-fsdp1-fsdp2 for the migration guide."
    ));
    assert_eq!(r.value(Output::MemoryPerGpuBytes), None);
    // without it, the FSDP1-only sharding strategy
    let no_list = FSDP1_YAML.replace("fsdp:\n  - full_shard\n  - auto_wrap\n", "");
    let r = pasted(&no_list);
    assert!(error_at(&r, "fsdp_config.sharding_strategy").contains(
        "fsdp_config.sharding_strategy is an FSDP1-only option and FSDP1 has been removed from Axolotl. Use \
         `reshard_after_forward` instead."
    ));
    // an empty list is no list (Python's truthiness)
    assert!(!query::decode("framework=axolotl&version=0.21.0&fsdp=[]")
        .report()
        .diags
        .iter()
        .any(|d| d.level == Level::Error));
}

#[test]
fn axolotl_fsdp_offload_params_shards_and_offloads() {
    let fsdp2 = FSDP1_YAML
        .replace("fsdp:\n  - full_shard\n  - auto_wrap\n", "")
        .replace("  fsdp_sharding_strategy: FULL_SHARD\n", "");
    let r = pasted(&fsdp2);
    assert!(
        !r.diags.iter().any(|d| d.level == Level::Error),
        "{:?}",
        r.diags
    );
    // FSDP2 with CPUOffloadPolicy: no model state stays on the GPU
    assert_eq!(int(&r, Output::WeightsBytes), 0);
    assert_eq!(int(&r, Output::GradientsBytes), 0);
    assert_eq!(int(&r, Output::OptimizerBytes), 0);
    let offloaded = int(&r, Output::MemoryPerGpuBytes);
    assert_eq!(offloaded, int(&r, Output::ActivationBytes));
    // the same block without the offload shards over the 8 GPUs; no block replicates 12Ψ
    let sharded = pasted(&fsdp2.replace("fsdp_offload_params: true", "fsdp_offload_params: false"));
    let psi = 8_030_261_248i128;
    assert_eq!(int(&sharded, Output::OptimizerBytes), 12 * psi / 8);
    let base = "framework=axolotl&version=0.21.0&gpu=h100-sxm&num_samples=1000&base_model=meta-llama/Llama-3.1-8B&sequence_len=4096&gradient_checkpointing=true";
    let replicated = report(base);
    assert_eq!(int(&replicated, Output::OptimizerBytes), 12 * psi);
    assert!(offloaded < int(&sharded, Output::MemoryPerGpuBytes));
}

/// accelerate 1.15.0's mesh as axolotl 0.21.0 builds it: FSDP shards over the flattened
/// `dp_shard_cp` dimension (scripts/oracles/accelerate-mesh/). `PYTHONDONTWRITEBYTECODE=1
/// ../venv/bin/python mesh.py 8 1 2 - -` (world 8, cp 2: kwargs {'cp_size': 2, 'dp_shard_size': 4},
/// fsdp_dim_names ['dp_shard_cp'], size 8); `mesh.py 8 1 2 2 -` (dp_shard_size 2: kwargs add
/// dp_replicate_size 2, fsdp_dim_names ['dp_replicate', 'dp_shard_cp'], shard dim size 4);
/// `mesh.py 8 2 2 - -` (tp 2, cp 2: dp_shard 2, shard dim size 4).
#[test]
fn axolotl_fsdp_shards_over_dp_shard_times_cp() {
    let base = "framework=axolotl&version=0.21.0&gpu=h100-sxm&num_samples=1000&base_model=meta-llama/Llama-3.1-8B&sequence_len=4096&fsdp_config.fsdp_version=2";
    let psi = 8_030_261_248i128;
    let opt = |q: &str| int(&report(&format!("{base}&{q}")), Output::OptimizerBytes);
    // world 8: cp 1 → dp_shard 8; cp 2 → dp_shard 4 × cp 2; cp 4 → 2 × 4: always 8
    assert_eq!(opt("context_parallel_size=1"), 12 * psi / 8);
    assert_eq!(opt("context_parallel_size=2"), 12 * psi / 8);
    assert_eq!(opt("context_parallel_size=4"), 12 * psi / 8);
    // dp_shard_size 2 with cp 2: shard 4, replicated over dp_replicate 2
    assert_eq!(opt("context_parallel_size=2&dp_shard_size=2"), 12 * psi / 4);
    // tp 2 and cp 2: dp_shard 2 × cp 2 of the half-model each TP rank holds
    assert_eq!(
        opt("context_parallel_size=2&tensor_parallel_size=2"),
        12 * (psi / 2) / 4
    );
}

#[test]
fn axolotl_fsdp1_keys_under_older_releases_are_a_note() {
    // only 0.21.0 was run on them: older releases say so instead of refusing or guessing
    for v in ["0.20.0", "0.19.0"] {
        let r = query::decode(&format!(
            "framework=axolotl&version={v}&fsdp=full_shard,auto_wrap&micro_batch_size=1"
        ))
        .report();
        assert!(!r.diags.iter().any(|d| d.level == Level::Error), "{v}");
        assert!(
            r.diags.iter().any(|d| d.level == Level::Note
                && d.field.key() == "fsdp"
                && d.message.contains("dpcalc has run only axolotl 0.21.0")),
            "{v}: {:?}",
            r.diags
        );
    }
}

/// The same architecture under each framework's own keys (config.json's
/// under axolotl, Megatron's arguments, nanotron's `model.model_config`, torchtitan's flavor)
/// gets the same count, transformers' 8,030,261,248 for Llama 3.1 8B.
#[test]
fn the_same_architecture_under_every_frameworks_keys() {
    let n = |q: &str| int(&report(q), Output::NumParameters);
    let want = 8_030_261_248;
    assert_eq!(
        n("framework=axolotl&model_type=llama&hidden_size=4096&num_hidden_layers=32&num_attention_heads=32&num_key_value_heads=8&intermediate_size=14336&vocab_size=128256&tie_word_embeddings=false"),
        want
    );
    assert_eq!(
        n("framework=megatron&num_layers=32&hidden_size=4096&ffn_hidden_size=14336&num_attention_heads=32&group_query_attention=true&num_query_groups=8&vocab_size=128256&swiglu=true&untie_embeddings_and_output_weights=true&normalization=RMSNorm&disable_bias_linear=true&position_embedding_type=rope&micro_batch_size=1&global_batch_size=8&train_iters=1"),
        want
    );
    use dpcalc::calc::import::import_as;
    use dpcalc::calc::Framework;
    let got = import_as(
        Framework::Nanotron,
        "parallelism:\n  dp: 8\n  tp: 1\n  pp: 1\nmodel:\n  model_config:\n    hidden_size: 4096\n    num_hidden_layers: 32\n    \
         num_attention_heads: 32\n    num_key_value_heads: 8\n    intermediate_size: 14336\n    vocab_size: 128256\n    \
         tie_word_embeddings: false\ntokens:\n  micro_batch_size: 1\n  batch_accumulation_per_replica: 1\n  sequence_length: 2048\n  train_steps: 1\n",
    );
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let mut q = String::from("framework=nanotron");
    for (f, v) in &got.inputs {
        q.push_str(&format!("&{}={}", f.key(), v));
    }
    assert_eq!(n(&q), want);
    assert_eq!(
        n("framework=torchtitan&model=llama3/8B&world_size=8&local_batch_size=1"),
        want
    );
}

/// Under pipeline parallelism the memory is per stage: one entry per stage, the largest is
/// `memory_per_gpu_bytes`; the first stage holds the most micro batches in flight under 1F1B;
/// interleaving (Megatron's virtual stages) holds more; hidden dropout's masks and recompute's
/// group size are read; Megatron's own estimator sees the virtual stages too.
#[test]
fn memory_by_pipeline_stage() {
    let base = "framework=megatron&world_size=32&tensor_model_parallel_size=2&pipeline_model_parallel_size=4&micro_batch_size=1&global_batch_size=128&model=meta-llama/Llama-3.1-8B&swiglu=true&seq_length=4096&gpu=h100-sxm&use_distributed_optimizer=true&recompute_granularity=selective&sequence_parallel=true";
    let plain = report(base);
    let stages = &plain.memory_by_stage;
    assert_eq!(stages.len(), 4);
    assert_eq!(
        int(&plain, Output::MemoryPerGpuBytes) as u128,
        *stages.iter().max().unwrap()
    );
    // rank 0 holds 4 micro batches, rank 3 one (plus the loss): the first stage is the largest
    assert!(stages[0] > stages[1] && stages[1] > stages[2], "{stages:?}");
    let inter = report(&format!("{base}&num_layers_per_virtual_pipeline_stage=2"));
    assert_eq!(inter.memory_by_stage.len(), 4);
    assert!(inter.memory_by_stage[0] > stages[0]);
    // Megatron's report_theoretical_memory applies its interleaving penalty
    assert!(float(&inter, Output::ActivationMemoryMb) > float(&plain, Output::ActivationMemoryMb));
    let same = report(&format!("{base}&num_virtual_stages_per_pipeline_rank=4"));
    assert_eq!(same.memory_by_stage, inter.memory_by_stage);
    // not a whole number of virtual stages: said at the field, plain 1F1B estimated
    let odd = query::decode(&format!("{base}&num_layers_per_virtual_pipeline_stage=3")).report();
    assert!(odd
        .diags
        .iter()
        .any(|d| d.field == dpcalc::calc::Field::NumLayersPerVirtualPipelineStage));
    assert_eq!(&odd.memory_by_stage, stages);
    // zero layers per virtual stage is refused at its field
    let zero = query::decode(&format!("{base}&num_layers_per_virtual_pipeline_stage=0")).report();
    assert!(zero.diags.iter().any(|d| d.field
        == dpcalc::calc::Field::NumLayersPerVirtualPipelineStage
        && d.level == Level::Error));
    // no dropout: no masks
    let dry = report(&format!("{base}&hidden_dropout=0"));
    assert!(dry.memory_by_stage[0] < stages[0]);
    // full recompute: uniform groups of n layers keep a checkpoint per group and recompute one
    // group; block recomputes only the first n layers of each stage and keeps the rest whole
    let full = |method: &str, n: u32| {
        report(&format!(
            "{}&recompute_granularity=full&recompute_method={method}&recompute_num_layers={n}",
            base.replace("&recompute_granularity=selective", "")
        ))
        .memory_by_stage[0]
    };
    assert!(full("block", 2) > full("uniform", 1));
    assert!(full("block", 8) == full("uniform", 1));
    assert_ne!(full("uniform", 2), full("uniform", 1));
    // one stage: no list
    let one = report(&base.replace(
        "pipeline_model_parallel_size=4",
        "pipeline_model_parallel_size=1",
    ));
    assert!(one.memory_by_stage.is_empty());
}

/// axolotl's `bf16`: `true` or `auto` loads the model in bf16 (`resolve_dtype`), so a full
/// fine-tune without DeepSpeed or FSDP runs torch's AdamW on bf16 parameters, whose `m` and `v`
/// are `zeros_like(p)`: 4 bytes per parameter and no fp32 master, against 12 without the key.
/// LoRA's adapters (fp32 in PEFT) and DeepSpeed's bf16 optimizer keep their 12; `false` counts
/// fp32 weights and gradients; `full`, which axolotl's schema refuses, is an error at the key.
#[test]
fn axolotl_bf16_puts_a_full_fine_tunes_optimizer_states_in_bf16() {
    let base = "framework=axolotl&base_model=meta-llama/Llama-3.2-3B&micro_batch_size=4&sequence_len=768&num_samples=1000&nodes=1&gpus_per_node=1";
    let params = int(&report(base), Output::NumParameters);
    let (w, g, o) = (
        |r: &Report| int(r, Output::WeightsBytes),
        |r: &Report| int(r, Output::GradientsBytes),
        |r: &Report| int(r, Output::OptimizerBytes),
    );
    let mixed = report(base);
    assert_eq!(o(&mixed), 12 * params);
    for v in ["true", "auto", "True"] {
        let r = report(&format!("{base}&bf16={v}"));
        assert_eq!(
            (w(&r), g(&r), o(&r)),
            (2 * params, 2 * params, 4 * params),
            "{v}"
        );
    }
    // an 8-bit AdamW keeps its 1-byte states (2 bytes per parameter) and bitsandbytes' two fp32
    // absmax per 256 parameters; with mixed precision the fp32 master too
    let r = report(&format!("{base}&bf16=true&optimizer=adamw_bnb_8bit"));
    assert_eq!(o(&r), 2 * params + (params + 31) / 32);
    let r = report(&format!("{base}&optimizer=paged_adamw_8bit"));
    assert_eq!(o(&r), 6 * params + (params + 31) / 32);
    // fp32: the weights are the optimizer's own, m and v fp32
    let r = query::decode(&format!("{base}&bf16=false")).report();
    assert_eq!((w(&r), g(&r), o(&r)), (4 * params, 4 * params, 8 * params));
    assert!(r
        .diags
        .iter()
        .any(|d| d.field.key() == "bf16" && d.level == Level::Note));
    // DeepSpeed's bf16 optimizer keeps fp32 master weights; LoRA's adapters are fp32
    let ds = report(&format!("{base}&bf16=true&zero_optimization.stage=1"));
    assert_eq!(
        o(&ds),
        o(&report(&format!("{base}&zero_optimization.stage=1")))
    );
    let lora = "&adapter=lora&lora_r=16&lora_target_linear=true";
    assert_eq!(
        o(&report(&format!("{base}{lora}&bf16=true"))),
        o(&report(&format!("{base}{lora}")))
    );
    // read from a pasted config, written back by the export
    let r = pasted("base_model: meta-llama/Llama-3.2-3B\nbf16: auto\nmicro_batch_size: 4\n");
    assert_eq!(o(&r), 4 * params);
    let link = query::decode(&format!("{base}&bf16=true"));
    let rel = link.framework.default_release().id;
    let x = dpcalc::calc::export::export(link.framework, rel, &link.inputs, &link.report());
    assert!(x.text.contains("bf16: true"), "{}", x.text);
    for bad in ["full", "bf16", "2"] {
        let r = query::decode(&format!("{base}&bf16={bad}")).report();
        let e = error_at(&r, "bf16");
        assert!(e.contains("true, false or auto"), "{bad}: {e}");
        assert!(r.value(Output::OptimizerBytes).is_none() || o(&r) == 12 * params);
    }
}
