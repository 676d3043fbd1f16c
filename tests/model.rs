//! Parameter counts, DeepSpeed ZeRO model states and FLOPs per token against the values the
//! frameworks' own code returned (tests/fixtures/model_*.json; each file's `_source` gives the
//! function and the command that recorded it, see also tests/fixtures/README.md).

use crate::common::files::fixture_json;
use dpcalc::calc::flops;
use dpcalc::calc::memory::{zero2_model_states, zero3_model_states, ADDITIONAL_BUFFER_FACTOR};
use dpcalc::calc::model::{preset, preset_id, Model, ALIASES, PRESETS};
use serde_json::Value;

fn int(v: &Value, key: &str) -> u128 {
    u128::from(
        v[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: not an int in {v}")),
    )
}

fn counts(m: &Model) -> [Option<u128>; 3] {
    [
        m.num_parameters(),
        m.num_parameters_exclude_embeddings(),
        m.largest_layer_params(),
    ]
}

fn expected(rec: &Value) -> [Option<u128>; 3] {
    let o = &rec["outputs"];
    [
        Some(int(o, "num_parameters")),
        Some(int(o, "num_parameters_exclude_embeddings")),
        Some(int(o, "largest_layer_params")),
    ]
}

#[test]
fn every_preset_equals_transformers_num_parameters() {
    let f = fixture_json("model_presets.json");
    let presets = f["presets"].as_array().unwrap();
    assert_eq!(presets.len(), 35);
    for rec in presets {
        let name = rec["name"].as_str().unwrap();
        let from_config = Model::from_config(&rec["config"]).unwrap();
        let built = preset(name).unwrap_or_else(|| panic!("no preset {name}"));
        assert_eq!(built, from_config, "{name}: preset ≠ its config.json");
        assert_eq!(counts(&built), expected(rec), "{name}");
    }
    let names: Vec<&str> = presets
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PRESETS);
}

#[test]
fn preset_counts_are_the_hubs() {
    for (id, n) in [
        ("meta-llama/Llama-3.1-8B", 8_030_261_248u128),
        ("Qwen/Qwen3-30B-A3B", 30_532_122_624),
        ("mistralai/Mixtral-8x7B-v0.1", 46_702_792_704),
        ("google/gemma-2-9b", 9_241_705_984),
        ("deepseek-ai/DeepSeek-V3", 671_026_404_352),
        // the presets of axolotl's example configs, as they name them
        ("NousResearch/Llama-2-7b-hf", 6_738_415_616),
        ("meta-llama/Llama-2-70b-hf", 68_976_648_192),
        ("meta-llama/Llama-3.2-3B", 3_212_749_824),
        ("mistralai/Mistral-7B-v0.3", 7_248_023_552),
        ("Qwen/Qwen3-4B", 4_022_468_096),
        ("google/gemma-2-2b", 2_614_341_888),
        ("Qwen/Qwen3-0.6B", 596_049_920),
        ("Qwen/Qwen3-14B", 14_768_307_200),
        ("google/gemma-2-27b", 27_227_128_320),
        ("microsoft/Phi-3-mini-4k-instruct", 3_821_079_552),
        ("microsoft/Phi-3-medium-4k-instruct", 13_960_238_080),
        ("google/gemma-3-1b-it", 999_885_952),
        ("deepseek-ai/DeepSeek-V2-Lite", 15_706_484_224),
        ("mistral-community/Mixtral-8x22B-v0.1", 140_620_634_112),
        ("Qwen/Qwen2.5-14B", 14_770_033_664),
        ("Qwen/Qwen2.5-32B", 32_763_876_352),
        ("meta-llama/Llama-3.3-70B-Instruct", 70_553_706_496),
        ("google/gemma-3-270m-it", 268_098_176),
    ] {
        assert_eq!(preset(id).unwrap().num_parameters(), Some(n), "{id}");
    }
    assert_eq!(preset("nope/none"), None);
}

#[test]
fn names_configs_use_are_their_presets() {
    // renamed and mirrored Hub ids, torchtitan's name/flavor: the same model, the same counts
    for (alias, id) in [
        ("NousResearch/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("meta-llama/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("unsloth/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("NousResearch/Llama-3.2-1B", "meta-llama/Llama-3.2-1B"),
        ("NousResearch/Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"),
        ("llama3/3B", "meta-llama/Llama-3.2-3B"),
        ("llama3/8B", "meta-llama/Llama-3.1-8B"),
        ("llama3/70B", "meta-llama/Llama-3.1-70B"),
        ("llama3/405B", "meta-llama/Llama-3.1-405B"),
    ] {
        assert_eq!(preset_id(alias), Some(id), "{alias}");
        assert_eq!(preset(alias), preset(id), "{alias}");
    }
    assert_eq!(
        preset("NousResearch/Meta-Llama-3.1-8B")
            .unwrap()
            .num_parameters(),
        Some(8_030_261_248)
    );
    // torchtitan 0.3.0's own flavor table, each flavor built on the meta device and counted:
    // `PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=tt:tt2 ../venv/bin/python tt_flavors.py`
    // (scripts/oracles/presets/)
    // (torch 2.15.0; `model_registry(flavor).model.build()` under `torch.device("meta")`,
    // `sum(p.numel() for p in model.parameters())`) printed these
    for (flavor, n) in [
        ("llama3/1B", 1_235_814_400u128),
        ("llama3/3B", 3_212_749_824),
        ("llama3/8B", 8_030_261_248),
        ("llama3/70B", 70_553_706_496),
        ("llama3/405B", 405_853_388_800),
    ] {
        assert_eq!(
            preset(flavor).unwrap().num_parameters(),
            Some(n),
            "{flavor}"
        );
    }
    // every alias names a preset, and none is itself a preset id
    for (alias, id) in ALIASES {
        assert!(PRESETS.contains(id), "{alias} → {id}");
        assert!(!PRESETS.contains(alias), "{alias}");
    }
    assert_eq!(preset_id("llama3/7B"), None);
    assert_eq!(preset_id("NousResearch/Meta-Llama-3.1-9B"), None);
}

#[test]
fn every_variation_equals_transformers_num_parameters() {
    let f = fixture_json("model_presets.json");
    let variations = f["variations"].as_array().unwrap();
    assert_eq!(variations.len(), 37);
    for rec in variations {
        let what = format!("{} {}", rec["base"], rec["overrides"]);
        let m = Model::from_config(&rec["config"]).unwrap_or_else(|| panic!("{what}"));
        assert_eq!(counts(&m), expected(rec), "{what}");
    }
}

#[test]
fn overflow_is_none_not_a_panic() {
    let mut m = preset("deepseek-ai/DeepSeek-V3").unwrap();
    m.hidden_size = u64::MAX;
    m.moe_intermediate_size = u64::MAX;
    assert_eq!(m.num_parameters(), None);
    assert_eq!(m.largest_layer_params(), None);
    assert_eq!(flops::hf(&m), None);
    assert_eq!(flops::torchtitan(&m, 8192), None);
    assert_eq!(flops::megatron(&m, 8192, 128, 1), None);
    let mut d = preset("meta-llama/Llama-3.1-8B").unwrap();
    d.num_attention_heads = 0;
    assert_eq!(d.num_parameters(), None);
    assert_eq!(flops::nanotron(&d, 8192), None);
    assert_eq!(zero2_model_states(1, 0, 1, false, 1.5), None);
    assert_eq!(zero3_model_states(1, 1, 8, 0, true, true, true, 1.5), None);
}

#[test]
fn every_zero_record_equals_deepspeed() {
    let f = fixture_json("model_zero.json");
    let recs = f["records"].as_array().unwrap();
    assert_eq!(recs.len(), 240);
    for r in recs {
        let model = r["model"].as_str().unwrap();
        let m = preset(model).unwrap();
        // the inputs are the preset's own counts
        assert_eq!(m.num_parameters(), Some(int(r, "total_params")), "{model}");
        assert_eq!(
            m.largest_layer_params(),
            Some(int(r, "largest_layer_params")),
            "{model}"
        );
        let abf = r["additional_buffer_factor"].as_f64().unwrap();
        assert_eq!(abf, ADDITIONAL_BUFFER_FACTOR);
        let gpn = r["num_gpus_per_node"].as_u64().unwrap();
        let nodes = r["num_nodes"].as_u64().unwrap();
        let off = r["cpu_offload"].as_bool().unwrap();
        let total = int(r, "total_params");
        let o = &r["outputs"];
        let got = match r["stage"].as_u64().unwrap() {
            2 => zero2_model_states(total, gpn, nodes, off, abf).unwrap(),
            3 => {
                let got = zero3_model_states(
                    total,
                    int(r, "largest_layer_params"),
                    gpn,
                    nodes,
                    off,
                    r["cpu_offload_params"].as_bool().unwrap(),
                    r["zero_init"].as_bool().unwrap(),
                    abf,
                )
                .unwrap();
                assert_eq!(
                    got.largest_layer_memory,
                    Some(int(o, "largest_layer_memory")),
                    "{r}"
                );
                got
            }
            s => panic!("stage {s}"),
        };
        assert_eq!(got.cpu_mem, int(o, "cpu_mem"), "cpu {r}");
        assert_eq!(got.gpu_mem, int(o, "gpu_mem"), "gpu {r}");
    }
}

#[test]
fn zero_estimators_on_llama_3_1_8b() {
    let m = preset("meta-llama/Llama-3.1-8B").unwrap();
    let (n, l) = (
        m.num_parameters().unwrap(),
        m.largest_layer_params().unwrap(),
    );
    let z3 = zero3_model_states(n, l, 8, 1, false, false, true, 1.5).unwrap();
    assert_eq!(z3.gpu_mem, 20_169_434_112);
    let z2 = zero2_model_states(n, 8, 1, false, 1.5).unwrap();
    assert_eq!(z2.gpu_mem, 34_128_610_304);
}

/// The Python float to the bit (the brief allows 1e-9 relative; none is needed).
fn bit_equal(a: f64, b: f64) -> bool {
    a == b
}

#[test]
fn every_flops_record_equals_the_frameworks() {
    let f = fixture_json("model_flops.json");
    let recs = f["records"].as_array().unwrap();
    assert_eq!(recs.len(), 39);
    let (mut hf, mut mega, mut tt, mut nt) = (0, 0, 0, 0);
    for r in recs {
        let model = r["model"].as_str().unwrap();
        let m = preset(model).unwrap();
        let seq = r["seq_len"].as_u64().unwrap();
        assert_eq!(r["batch_size"], 1);
        let what = format!("{model} seq {seq}");
        // HF: an int-valued float in the record; dpcalc's is the exact int
        let want = r["flops_per_token_hf"].as_f64().unwrap();
        assert_eq!(flops::hf(&m).unwrap() as f64, want, "hf {what}");
        hf += 1;
        if let Some(want) = r["flops_per_token_megatron"].as_f64() {
            let vocab = flops::megatron_padded_vocab_size(m.vocab_size, 128, 1).unwrap();
            assert_eq!(
                Some(vocab),
                r["megatron_padded_vocab_size"].as_u64().map(u128::from)
            );
            let total = flops::megatron_num_floating_point_operations(&m, seq, 1, vocab).unwrap();
            let want_total = r["megatron_num_floating_point_operations"]
                .as_f64()
                .unwrap();
            assert!(
                bit_equal(total, want_total),
                "megatron total {what}: {total} vs {want_total}"
            );
            let got = flops::megatron(&m, seq, 128, 1).unwrap();
            assert!(bit_equal(got, want), "megatron {what}: {got} vs {want}");
            mega += 1;
        }
        match r["flops_per_token_torchtitan"].as_u64() {
            Some(want) => {
                assert_eq!(
                    flops::torchtitan(&m, seq),
                    Some(u128::from(want)),
                    "tt {what}"
                );
                assert_eq!(
                    m.num_parameters(),
                    Some(int(r, "torchtitan_nparams")),
                    "tt nparams {what}"
                );
                tt += 1;
            }
            None => assert_eq!(flops::torchtitan(&m, seq), None, "tt {what}"),
        }
        match r["flops_per_token_nanotron"].as_f64() {
            Some(want) => {
                assert_eq!(flops::nanotron(&m, seq), Some(want), "nanotron {what}");
                nt += 1;
            }
            None => assert_eq!(flops::nanotron(&m, seq), None, "nanotron {what}"),
        }
    }
    assert_eq!((hf, mega, tt, nt), (39, 39, 27, 27));
}

#[test]
fn four_flops_conventions_on_llama_3_1_8b() {
    let m = preset("meta-llama/Llama-3.1-8B").unwrap();
    assert_eq!(flops::hf(&m), Some(45_029_548_032));
    assert_eq!(flops::megatron(&m, 8192, 128, 1), Some(51_470_401_536.0));
    assert_eq!(flops::torchtitan(&m, 8192), Some(57_914_449_920));
    assert_eq!(flops::nanotron(&m, 8192), Some(57_912_852_480.0));
    // Megatron pads 128,256 to 129,024 at TP 8 (`_vocab_size_with_padding`; its runs'
    // padded_vocab_size in tests/fixtures/model_megatron.json)
    assert_eq!(
        flops::megatron_padded_vocab_size(128_256, 128, 8),
        Some(129_024)
    );
    assert_eq!(
        flops::megatron_padded_vocab_size(128_256, 128, 4),
        Some(128_512)
    );
    assert_eq!(
        flops::megatron_padded_vocab_size(128_256, 256, 2),
        Some(128_512)
    );
}

#[test]
fn int_true_division_rounds_once_as_python() {
    use dpcalc::calc::num::itruediv;
    // values printed by CPython 3 (`a / b`, then `int(a / b)`)
    for (a, b, want) in [
        (
            1_152_921_504_606_846_977i128,
            3i128,
            384_307_168_202_282_304i128,
        ),
        (7_305_360_998_400_000, 7, 1_043_622_999_771_428),
        (
            1_000_000_000_000_000_000_000_000_000_007,
            1_000_000_009,
            999_999_991_000_000_102_400,
        ),
        (18_446_744_073_709_551_615, 2049, 9_002_803_354_665_472),
        (9_007_199_254_740_993, 1, 9_007_199_254_740_992),
        (-2_305_843_009_213_693_955, 5, -461_168_601_842_738_816),
    ] {
        assert_eq!(itruediv(a, b).unwrap() as i128, want, "{a} / {b}");
    }
    assert!(itruediv(1, 0).is_err());
}

/// More GPUs, a higher ZeRO stage or an offload never raises DeepSpeed's GPU bytes (ZeRO-3 ≤
/// ZeRO-2 needs the largest layer below half the parameters: DeepSpeed's `4·largest` is above
/// ZeRO-2's `2Ψ` otherwise, as for gemma-3-270m, whose embedding is 63 % of it).
#[test]
fn more_gpus_higher_stage_or_offload_never_raise_gpu_bytes() {
    for id in PRESETS {
        let m = preset(id).unwrap();
        let (n, l) = (
            m.num_parameters().unwrap(),
            m.largest_layer_params().unwrap(),
        );
        let z2 = |gpn, nodes, off| zero2_model_states(n, gpn, nodes, off, 1.5).unwrap().gpu_mem;
        let z3 = |gpn, nodes, off, offp, zi| {
            zero3_model_states(n, l, gpn, nodes, off, offp, zi, 1.5)
                .unwrap()
                .gpu_mem
        };
        let mut previous: Option<[u128; 5]> = None;
        for nodes in 1..=64u64 {
            let gpn = 8;
            let now = [
                z2(gpn, nodes, false),
                z2(gpn, nodes, true),
                z3(gpn, nodes, false, false, true),
                z3(gpn, nodes, true, false, true),
                z3(gpn, nodes, true, true, false),
            ];
            if l.saturating_mul(2) < n {
                assert!(
                    now[2] <= now[0],
                    "{id}: ZeRO-3 above ZeRO-2 at {nodes} nodes"
                );
            } else {
                assert_eq!(id, "google/gemma-3-270m");
                assert!(now[2] > now[0], "{id}");
            }
            assert!(
                now[1] <= now[0] && now[3] <= now[2] && now[4] <= now[3],
                "{id}: offload"
            );
            if let Some(p) = previous {
                assert!(
                    now.iter().zip(p).all(|(a, b)| *a <= b),
                    "{id}: {nodes} nodes"
                );
            }
            previous = Some(now);
        }
        for nodes in [1u64, 2, 16] {
            let mut last = u128::MAX;
            for gpn in 1..=16u64 {
                let g = z3(gpn, nodes, false, false, true);
                assert!(g <= last, "{id}: {gpn} GPUs per node");
                last = g;
            }
        }
    }
}

#[test]
fn every_accepted_megatron_run_equals_report_theoretical_memory() {
    use dpcalc::calc::memory::{megatron_theoretical_memory, MegatronArgs};
    let f = fixture_json("model_megatron.json");
    // the accepted runs (a refused one has its `error`)
    let recs: Vec<&Value> = f["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("error").is_none())
        .collect();
    assert_eq!(recs.len(), 51);
    for r in recs {
        let name = r["name"].as_str().unwrap();
        let (a, d, o) = (&r["inputs"], &r["derived"], &r["outputs"]);
        let u =
            |v: &Value, k: &str, default: u64| v.get(k).and_then(Value::as_u64).unwrap_or(default);
        let flag = |k: &str| a.get(k).and_then(Value::as_bool).unwrap_or(false);
        let (layers, tp, pp) = (
            u(a, "num_layers", 0),
            u(a, "tensor_model_parallel_size", 1),
            u(a, "pipeline_model_parallel_size", 1),
        );
        // Megatron pads the NullTokenizer's vocabulary (+1 EOD) as dpcalc does
        let vocab = flops::megatron_padded_vocab_size(
            u(a, "vocab_size", 0) + 1,
            u(a, "make_vocab_size_divisible_by", 128),
            tp,
        )
        .unwrap();
        assert_eq!(
            Some(vocab),
            d["padded_vocab_size"].as_u64().map(u128::from),
            "{name}"
        );
        // validate_args' FFN size when the run leaves it out
        let ffn = u(d, "ffn_hidden_size", u(a, "ffn_hidden_size", 0));
        let args = MegatronArgs {
            num_layers: layers,
            hidden_size: u(a, "hidden_size", 0),
            ffn_hidden_size: ffn,
            num_attention_heads: u(a, "num_attention_heads", 0),
            num_query_groups: flag("group_query_attention").then(|| u(a, "num_query_groups", 1)),
            kv_channels: u(d, "kv_channels", 0),
            swiglu: flag("swiglu"),
            rms_norm: a["normalization"] == "RMSNorm",
            add_bias_linear: !flag("disable_bias_linear"),
            untie_embeddings_and_output_weights: flag("untie_embeddings_and_output_weights"),
            multi_latent_attention: false,
            num_experts: a.get("num_experts").and_then(Value::as_u64),
            moe_ffn_hidden_size: u(a, "moe_ffn_hidden_size", ffn),
            moe_shared_expert_intermediate_size: None,
            moe_layer_count: None,
            padded_vocab_size: vocab as u64,
            tensor_model_parallel_size: tp,
            pipeline_model_parallel_size: pp,
            virtual_pipeline_model_parallel_size: a
                .get("num_layers_per_virtual_pipeline_stage")
                .and_then(Value::as_u64)
                .map(|per| layers / pp / per),
            expert_model_parallel_size: u(a, "expert_model_parallel_size", 1),
            expert_tensor_parallel_size: u(a, "expert_tensor_parallel_size", tp),
            world_size: u(a, "WORLD_SIZE", 0),
            data_parallel_size: u(d, "data_parallel_size", 0),
            use_distributed_optimizer: d["use_distributed_optimizer"].as_bool().unwrap(),
            seq_length: u(d, "seq_length", 0),
            micro_batch_size: u(a, "micro_batch_size", 0),
            sequence_parallel: d["sequence_parallel"].as_bool().unwrap(),
            recompute_selective: d["recompute_granularity"] == "selective",
            num_microbatches: u(d, "num_microbatches", 0),
        };
        let got = megatron_theoretical_memory(&args).unwrap_or_else(|| panic!("{name}"));
        let f = |k: &str| o[k].as_str().unwrap().parse::<f64>().unwrap();
        for (what, g, w) in [
            (
                "w+o bytes",
                got.weight_and_optimizer_bytes,
                f("weight_and_optimizer_bytes"),
            ),
            (
                "act sp",
                got.activation_bytes_with_sp,
                f("activation_bytes_compute_activation_memory"),
            ),
            (
                "act no sp",
                got.activation_bytes_without_sp,
                f("activation_bytes_compute_activation_memory_without_sp"),
            ),
            (
                "w+o MB",
                got.weight_and_optimizer_memory_mb,
                f("weight_and_optimizer_memory"),
            ),
            ("act MB", got.activation_memory_mb, f("activation_memory")),
            ("total MB", got.total_memory_mb, f("total_memory")),
        ] {
            assert!(bit_equal(g, w), "{name} {what}: {g} vs {w}");
        }
        assert_eq!(
            got.uses_sp_branch,
            o["activation_branch"] == "compute_activation_memory",
            "{name}"
        );
    }
}

/// The layer pattern counted without walking the layers (a typed layer count can be 10¹⁸): for
/// every range of every family's pattern, the MoE layers counted equal those walked one by one,
/// and the parameter count by layer kind equals the sum over the layers.
#[test]
fn moe_layers_counted_from_the_pattern_equal_those_walked() {
    let qwen = preset("Qwen/Qwen3-30B-A3B").unwrap();
    let deepseek = preset("deepseek-ai/DeepSeek-V2-Lite").unwrap();
    let mut models = vec![
        preset("meta-llama/Llama-3.1-8B").unwrap(),
        preset("mistralai/Mixtral-8x7B-v0.1").unwrap(),
        Model {
            first_k_dense_replace: 3,
            num_hidden_layers: 23,
            ..deepseek
        },
    ];
    for step in 1..=4 {
        models.push(Model {
            decoder_sparse_step: step,
            mlp_only_layers: vec![0, 3, 3, 7, 11, 40],
            num_hidden_layers: 21,
            ..qwen.clone()
        });
    }
    let mut moe_seen = 0;
    for m in &models {
        let n = m.num_hidden_layers;
        for a in 0..=n {
            for b in a..=n {
                let walked = (a..b).filter(|&i| m.is_moe_layer(i)).count() as u64;
                assert_eq!(m.moe_layers_in(a..b), walked, "{:?} {a}..{b}", m.model_type);
                let blocks = (a..b).filter(|&i| m.moe_block(i)).count() as u64;
                assert_eq!(m.moe_blocks_in(a..b), blocks, "{:?} {a}..{b}", m.model_type);
            }
        }
        moe_seen += m.num_moe_layers();
        let by_layer = (0..n).try_fold(0u128, |t, i| t.checked_add(m.layer_params(i)?.0));
        let others = m.num_parameters().unwrap() - by_layer.unwrap();
        let empty = Model {
            num_hidden_layers: 0,
            ..m.clone()
        };
        assert_eq!(
            others,
            empty.num_parameters().unwrap(),
            "{:?}",
            m.model_type
        );
    }
    assert!(moe_seen > 0);
}
