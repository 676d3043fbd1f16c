//! LoRA trainable parameters against PEFT 0.21.2's `get_nb_trainable_parameters()` for the
//! LoraConfig axolotl 0.21.0 builds (tests/fixtures/model_peft.json; its `_source` gives the
//! functions and the commands, see also tests/fixtures/README.md).

use crate::common::files::fixture_json;
use dpcalc::calc::lora::{lora_trainable_parameters, LoraError, LoraTarget};
use dpcalc::calc::model::{preset, Model};
use serde_json::Value;
use std::collections::BTreeSet;

/// The record's model, its inputs and what dpcalc computes for them with rank `r`.
fn run(rec: &Value, r: u64) -> Result<u128, LoraError> {
    let m = Model::from_config(&rec["config"]).unwrap();
    if rec.get("variation").is_none() {
        let name = rec["model"].as_str().unwrap();
        assert_eq!(
            preset(name).as_ref(),
            Some(&m),
            "{name}: preset ≠ its config"
        );
    }
    let i = &rec["inputs"];
    let modules: Vec<&str> = i["lora_target_modules"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default();
    let linear = i["lora_target_linear"].as_bool().unwrap_or(false);
    lora_trainable_parameters(
        &m,
        r,
        LoraTarget {
            linear,
            modules: &modules,
        },
    )
}

fn rank(rec: &Value) -> u64 {
    rec["inputs"]["lora_r"].as_u64().unwrap()
}

/// Python's message without its exception type; a set's repr compared as a set (hash order).
fn same_error(got: &LoraError, want: &str) -> bool {
    let want = want.split_once(": ").unwrap().1;
    let got = got.to_string();
    let set = |s: &str| -> Option<(String, BTreeSet<String>)> {
        let (a, rest) = s.split_once('{')?;
        let (inner, b) = rest.split_once('}')?;
        Some((
            a.to_string() + b,
            inner.split(", ").map(String::from).collect(),
        ))
    };
    got == want || (got.contains('{') && set(&got) == set(want))
}

fn check(recs: &[Value]) -> (usize, usize) {
    let (mut ok, mut err) = (0, 0);
    for rec in recs {
        let got = run(rec, rank(rec));
        let o = &rec["outputs"];
        match o["trainable_parameters"].as_u64() {
            Some(n) => {
                assert_eq!(got, Ok(u128::from(n)), "{rec}");
                ok += 1;
            }
            None => {
                let want = o["error"].as_str().unwrap();
                let e = got.expect_err(&rec.to_string());
                assert!(same_error(&e, want), "{e} ≠ {want}");
                err += 1;
            }
        }
    }
    (ok, err)
}

#[test]
fn lora_target_linear_equals_peft_on_every_record() {
    let f = fixture_json("model_peft.json");
    let recs = f["records"].as_array().unwrap();
    assert_eq!(check(recs), (27, 0));
}

#[test]
fn module_lists_experts_routers_and_refusals_equal_peft() {
    let f = fixture_json("model_peft.json");
    let recs = f["more"].as_array().unwrap();
    assert_eq!(check(recs), (32, 12));
}

#[test]
fn a_wrong_rank_gives_another_count() {
    let f = fixture_json("model_peft.json");
    for key in ["records", "more"] {
        for rec in f[key].as_array().unwrap() {
            if let Some(n) = rec["outputs"]["trainable_parameters"].as_u64() {
                let r = rank(rec);
                assert_ne!(run(rec, r + 1), Ok(u128::from(n)), "{rec}");
                // linear in r: each adapter is r·(in + out), the fused gate_up_proj 2r·E·(in + out)
                assert_eq!(run(rec, 2 * r), Ok(2 * u128::from(n)), "{rec}");
            }
        }
    }
}

#[test]
fn lora_counts_and_peft_refusals() {
    let m = preset("deepseek-ai/DeepSeek-V3").unwrap();
    let all = LoraTarget {
        linear: true,
        modules: &[],
    };
    assert_eq!(lora_trainable_parameters(&m, 8, all), Ok(3_819_182_592));
    let l8 = preset("meta-llama/Llama-3.1-8B").unwrap();
    assert_eq!(lora_trainable_parameters(&l8, 16, all), Ok(41_943_040));
    let none = LoraTarget {
        linear: false,
        modules: &[],
    };
    assert_eq!(
        lora_trainable_parameters(&l8, 16, none).unwrap_err().to_string(),
        "No `target_modules` passed but also no `target_parameters` found. Please check the values for these arguments."
    );
    let path = LoraTarget {
        linear: false,
        modules: &["self_attn.q_proj"],
    };
    assert_eq!(
        lora_trainable_parameters(&l8, 16, path),
        Err(LoraError::Path("self_attn.q_proj".into()))
    );
}

#[test]
fn overflow_is_an_error_not_a_panic() {
    let mut m = preset("Qwen/Qwen3-30B-A3B").unwrap();
    m.hidden_size = u64::MAX;
    m.num_experts = u64::MAX;
    m.moe_intermediate_size = u64::MAX;
    for modules in [
        &["q_proj"][..],
        &["gate_proj", "up_proj"],
        &["gate"],
        &["down_proj"],
    ] {
        let t = LoraTarget {
            linear: true,
            modules,
        };
        assert_eq!(
            lora_trainable_parameters(&m, u64::MAX, t),
            Err(LoraError::Overflow)
        );
    }
}

/// PEFT 0.21.2's `get_nb_trainable_parameters()` for the LoraConfig axolotl 0.21.0 builds
/// (`_build_peft_lora_config` with `lora_target_linear: true`, transformers 5.20.1, meta device):
/// `PYTHONDONTWRITEBYTECODE=1 ../venv/bin/python peft_count.py configs3.json
/// microsoft/Phi-3-mini-4k-instruct deepseek-ai/DeepSeek-V2-Lite google/gemma-3-1b-pt`
/// (scripts/oracles/presets/) printed these (Phi-3's fused qkv_proj and gate_up_proj are single
/// nn.Linear modules).
#[test]
fn more_model_types_through_peft() {
    use dpcalc::calc::lora::{lora_trainable_parameters, LoraTarget};
    use dpcalc::calc::model::preset;
    for (name, r, want) in [
        ("microsoft/Phi-3-mini-4k-instruct", 8, 12_582_912u128),
        ("microsoft/Phi-3-mini-4k-instruct", 16, 25_165_824),
        ("deepseek-ai/DeepSeek-V2-Lite", 8, 179_058_176),
        ("deepseek-ai/DeepSeek-V2-Lite", 16, 358_116_352),
        ("google/gemma-3-1b-pt", 8, 6_522_880),
        ("google/gemma-3-1b-pt", 16, 13_045_760),
    ] {
        let m = preset(name).unwrap();
        let t = LoraTarget {
            linear: true,
            modules: &[],
        };
        assert_eq!(
            lora_trainable_parameters(&m, r, t),
            Ok(want),
            "{name} r={r}"
        );
    }
}
