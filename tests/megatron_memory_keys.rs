//! Megatron-LM's memory keys beside the model: several distributed-optimizer instances
//! (`--num-distributed-optimizer-instances`: the optimizer over dp × cp ÷ instances,
//! `initialize_model_parallel` in megatron/core/parallel_state.py at 0.19.2) and the deferred
//! embedding weight gradients (`--defer-embedding-wgrad-compute`, `--wgrad-deferral-limit`:
//! megatron/core/tensor_parallel/layers.py at cb12e3d), each refused in Megatron's words where
//! Megatron refuses it.

use dpcalc::calc::{Field, Output, Report};
use dpcalc::query;

use crate::common::report::{first_error, int};

/// The functional tests' 512-wide GPT (12 layers) on 8 GPUs at TP 2.
const BASE: &str = "framework=megatron&version=0.19.2&world_size=8&gpu=a100-80gb&train_iters=100&num_layers=12&hidden_size=512&num_attention_heads=8&seq_length=1024&max_position_embeddings=1024&micro_batch_size=4&global_batch_size=32&tensor_model_parallel_size=2&vocab_size=50257";

fn report(extra: &str) -> Report {
    query::decode(&format!("{BASE}&{extra}")).report()
}

fn optimizer(r: &Report) -> i128 {
    int(r, Output::OptimizerBytes).expect("optimizer bytes")
}

#[test]
fn instances_shard_the_optimizer_over_their_share_of_dp() {
    // DP 4: one instance shards over 4 ranks, two over 2 each
    let one = report("use_distributed_optimizer=true");
    let two = report("use_distributed_optimizer=true&num_distributed_optimizer_instances=2");
    let four = report("use_distributed_optimizer=true&num_distributed_optimizer_instances=4");
    assert_eq!(first_error(&two), None);
    assert_eq!(optimizer(&two), 2 * optimizer(&one));
    assert_eq!(optimizer(&four), 4 * optimizer(&one));
    // the explicit default is the default
    let given = report("use_distributed_optimizer=true&num_distributed_optimizer_instances=1");
    assert_eq!(optimizer(&given), optimizer(&one));
    // without the distributed optimizer nothing is sharded
    let plain = report("num_distributed_optimizer_instances=2");
    assert_eq!(optimizer(&plain), optimizer(&report("")));
}

#[test]
fn instances_that_do_not_divide_dp_are_refused_in_megatron_s_words() {
    let r = report("use_distributed_optimizer=true&num_distributed_optimizer_instances=3");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::NumDistributedOptimizerInstances);
    assert!(
        says.contains(
            "AssertionError: Data parallel size should be divisible by partial DistOpt shard factor"
        ),
        "{says}"
    );
    let r = report("num_distributed_optimizer_instances=0");
    assert_eq!(
        first_error(&r).map(|e| e.0),
        Some(Field::NumDistributedOptimizerInstances)
    );
}

#[test]
fn the_deferred_weight_gradients_are_held_on_the_last_stage() {
    let pp = "pipeline_model_parallel_size=2";
    let plain = report(pp);
    let deferred = report(&format!(
        "{pp}&defer_embedding_wgrad_compute=true&wgrad_deferral_limit=2"
    ));
    assert_eq!(first_error(&deferred), None);
    let (p, d) = (&plain.memory_by_stage, &deferred.memory_by_stage);
    assert_eq!((p.len(), d.len()), (2, 2));
    // the first stage is unchanged; the last keeps 2 × (input 4096·512·2 + logits' gradient
    // 4096·(50,257 ÷ 2)·2) bytes (the estimate's logits are over the model's vocabulary): DP 2
    // runs 4 micro batches of 4
    let pair = 4096 * 512 * 2 + 4096 * 50_257 / 2 * 2;
    assert_eq!(pair, 210_046_976);
    assert_eq!(d[0], p[0]);
    assert_eq!(d[1] - p[1], 2 * pair);
    // limit 0: every micro batch before the last one's peak
    let all = report(&format!("{pp}&defer_embedding_wgrad_compute=true"));
    assert_eq!(all.memory_by_stage[1] - p[1], 3 * pair);
    // a negative limit with deferral off is not read
    let off = report(&format!("{pp}&wgrad_deferral_limit=-1"));
    assert_eq!(first_error(&off), None);
    assert_eq!(off.memory_by_stage, plain.memory_by_stage);
}

#[test]
fn megatron_refuses_deferral_without_a_pipeline_or_with_a_negative_limit() {
    let r = report("defer_embedding_wgrad_compute=true");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::DeferEmbeddingWgradCompute);
    assert!(
        says.contains("ValueError: Cannot defer embedding wgrad compute when pipeline model parallel is not used"),
        "{says}"
    );
    let r = report(
        "pipeline_model_parallel_size=2&defer_embedding_wgrad_compute=true&wgrad_deferral_limit=-1",
    );
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::WgradDeferralLimit);
    assert!(
        says.contains(
            "ValueError: Wgrad deferral limit should be greater than or equal to 0 when it is enabled!"
        ),
        "{says}"
    );
    let r = report("defer_embedding_wgrad_compute=maybe");
    assert_eq!(
        first_error(&r).map(|e| e.0),
        Some(Field::DeferEmbeddingWgradCompute)
    );
}
