//! Megatron-LM's multi-latent attention under its own arguments (`--multi-latent-attention`,
//! `--q-lora-rank`, `--kv-lora-rank`, `--qk-head-dim`, `--qk-pos-emb-head-dim`,
//! `--v-head-dim`): read from links and command lines, each absent size at `_add_mla_args`'s
//! default (megatron/training/arguments.py at 0.19.2), the model's parameters those of
//! `MLASelfAttention`, and `validate_args`'s refusal of grouped-query attention beside it in
//! its words.

use dpcalc::calc::import;
use dpcalc::calc::{Field, Output, Report};
use dpcalc::query;

use crate::common::report::{first_error, int};

/// The functional test `gpt3_mcore_te_tp2_pp2_mla`'s arguments without its MLA sizes.
const BASE: &str = "framework=megatron&version=0.19.2&world_size=8&gpu=h100-sxm&train_iters=100&num_layers=4&hidden_size=512&num_attention_heads=8&seq_length=1024&max_position_embeddings=1024&micro_batch_size=4&global_batch_size=32&tensor_model_parallel_size=2&pipeline_model_parallel_size=2&sequence_parallel=true&untie_embeddings_and_output_weights=true&vocab_size=50257&attention_backend=unfused";

fn report(extra: &str) -> Report {
    query::decode(&format!("{BASE}&{extra}")).report()
}

fn params(r: &Report) -> i128 {
    int(r, Output::NumParameters).expect("a parameter count")
}

/// Embeddings (50,257 + 1,024 positions) × 512, the output layer 50,257 × 512, the final norm.
const OUTSIDE_LAYERS: i128 = 50_257 * 512 + 1024 * 512 + 50_257 * 512 + 1024;

#[test]
fn the_record_s_sizes_give_mla_self_attention_s_parameters() {
    let r = report(
        "multi_latent_attention=true&q_lora_rank=192&kv_lora_rank=64&qk_head_dim=16&qk_pos_emb_head_dim=8&v_head_dim=16",
    );
    assert_eq!(first_error(&r), None);
    // per layer: norms 2 × 1,024, q_down 98,304, q_up 36,864, kv_down 36,864, kv_up 16,384,
    // linear_proj 66,048, fc1 1,050,624, fc2 1,049,088
    assert_eq!(params(&r), OUTSIDE_LAYERS + 4 * 2_356_224);
    // the sizes without the flag are ignored, as Megatron ignores them
    let plain = report("q_lora_rank=192&kv_lora_rank=64&qk_head_dim=16");
    assert_eq!(params(&plain), params(&report("")));
    assert_ne!(params(&plain), params(&r));
    // the last stage's peak follows the attention (MLA's heads are smaller here)
    let (mla, std) = (r.memory_by_stage.clone(), report("").memory_by_stage);
    assert_eq!((mla.len(), std.len()), (2, 2));
    assert!(mla[1] < std[1], "{mla:?} {std:?}");
}

#[test]
fn absent_sizes_take_megatron_s_defaults() {
    // --q-lora-rank None (a full query projection h × 8·(128 + 64)), --kv-lora-rank 32,
    // --qk-head-dim 128, --qk-pos-emb-head-dim 64, --v-head-dim 128
    let r = report("multi_latent_attention=true");
    assert_eq!(first_error(&r), None);
    let layer = 2 * 1024
        + 512 * 8 * 192
        + 512 * (32 + 64)
        + 32 * 8 * (128 + 128)
        + (8 * 128 * 512 + 512)
        + (512 * 2048 + 2048)
        + (2048 * 512 + 512);
    assert_eq!(params(&r), OUTSIDE_LAYERS + 4 * layer);
    let given = report(
        "multi_latent_attention=true&kv_lora_rank=32&qk_head_dim=128&qk_pos_emb_head_dim=64&v_head_dim=128",
    );
    assert_eq!(params(&given), params(&r));
}

#[test]
fn invalid_values_and_megatron_s_refusal_are_said_at_their_field() {
    let r = report("multi_latent_attention=maybe");
    assert_eq!(
        first_error(&r).map(|e| e.0),
        Some(Field::MultiLatentAttention)
    );
    let r = report("multi_latent_attention=true&qk_head_dim=-3");
    assert_eq!(first_error(&r).map(|e| e.0), Some(Field::QkHeadDim));
    let r = report("multi_latent_attention=true&group_query_attention=true&num_query_groups=2");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::GroupQueryAttention);
    assert!(
        says.contains(
            "AssertionError: Group query attention is mutually exclusive with multi latent attention."
        ),
        "{says}"
    );
    assert!(r.has_errors());
    // grouped-query attention alone is accepted
    let r = report("group_query_attention=true&num_query_groups=2");
    assert_eq!(first_error(&r), None);
}

#[test]
fn a_command_line_gives_the_keys() {
    let cmd = "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 --multi-latent-attention --q-lora-rank 192 --kv-lora-rank 64 --qk-head-dim 16 --qk-pos-emb-head-dim 8 --v-head-dim 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32";
    let imported = import::import(cmd);
    for (f, v) in [
        (Field::MultiLatentAttention, "true"),
        (Field::QLoraRank, "192"),
        (Field::KvLoraRank, "64"),
        (Field::QkHeadDim, "16"),
        (Field::QkPosEmbHeadDim, "8"),
        (Field::VHeadDim, "16"),
    ] {
        assert_eq!(imported.get(f), Some(v), "{}", f.key());
    }
}
