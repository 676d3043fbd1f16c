//! Megatron-LM's uneven and accounted pipeline splits (`--decoder-first-pipeline-num-layers`,
//! `--decoder-last-pipeline-num-layers`, `--account-for-embedding-in-pipeline-split`,
//! `--account-for-loss-in-pipeline-split`): the layers each virtual stage holds are
//! `get_num_layers_to_build`'s (megatron/core/transformer/transformer_block.py at d98e8a6), each
//! stage's memory follows them, and a split Megatron refuses is refused in its words.

use dpcalc::calc::{Field, Report};
use dpcalc::query;

use crate::common::report::first_error;

const BASE: &str = "framework=megatron&version=0.19.2&world_size=8&gpu=h100-sxm&train_iters=100&hidden_size=512&num_attention_heads=8&seq_length=1024&max_position_embeddings=1024&micro_batch_size=4&global_batch_size=32&pipeline_model_parallel_size=4&vocab_size=50257";

fn report(extra: &str) -> Report {
    query::decode(&format!("{BASE}&{extra}")).report()
}

fn layers(r: &Report) -> Vec<u64> {
    r.plan.pipeline.as_ref().expect("a pipeline").layers.clone()
}

#[test]
fn an_uneven_split_puts_the_given_layers_on_the_first_and_last_stage() {
    let even = report("num_layers=12");
    assert!(
        layers(&even).is_empty(),
        "a link without the keys keeps the even split"
    );
    let r = report(
        "num_layers=12&decoder_first_pipeline_num_layers=2&decoder_last_pipeline_num_layers=2",
    );
    assert_eq!(first_error(&r), None);
    assert_eq!(layers(&r), vec![2, 4, 4, 2]);
    // the middle stages hold one layer more than the even split's 3, the last one fewer
    let (e, u) = (&even.memory_by_stage, &r.memory_by_stage);
    assert_eq!((e.len(), u.len()), (4, 4));
    assert!(u[1] > e[1] && u[2] > e[2] && u[3] < e[3], "{e:?} {u:?}");
    // only the first given: the other three split the rest
    let r = report("num_layers=11&decoder_first_pipeline_num_layers=2");
    assert_eq!(layers(&r), vec![2, 3, 3, 3]);
}

#[test]
fn the_embedding_and_the_loss_take_a_layers_place() {
    // 6 layers + embedding + loss over 4 ranks × 2 chunks: the first chunk of rank 0 holds only
    // the embedding, the last chunk of rank 3 only the output layer and the loss
    let r = report("num_layers=6&num_virtual_stages_per_pipeline_rank=2&account_for_embedding_in_pipeline_split=true&account_for_loss_in_pipeline_split=true");
    assert_eq!(first_error(&r), None);
    assert_eq!(layers(&r), vec![0, 1, 1, 1, 1, 1, 1, 0]);
    // without interleaving: 7 + 1 over 4 ranks
    let r = report("num_layers=7&account_for_embedding_in_pipeline_split=true");
    assert_eq!(layers(&r), vec![1, 2, 2, 2]);
    // Megatron's own check counts the embedding: 8 layers + 1 is refused
    let r = report("num_layers=8&account_for_embedding_in_pipeline_split=true");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::NumLayers);
    assert!(says.contains("“AssertionError: Number of layers should be divisible by the pipeline-model-parallel size”"), "{says}");
}

#[test]
fn a_split_megatron_refuses_is_refused_in_its_words() {
    let r = report("num_layers=12&decoder_first_pipeline_num_layers=2");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::NumLayers);
    assert!(says.contains("“ValueError: number of layers at middle stage: 10 must be divisible bythe middle pipeline model parallel size 3”"), "{says}");
    let r = report("num_layers=12&decoder_first_pipeline_num_layers=2&decoder_last_pipeline_num_layers=2&account_for_loss_in_pipeline_split=true");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::AccountForEmbeddingInPipelineSplit);
    assert!(says.contains("cannot beset at the same time"), "{says}");
    let r = report("num_layers=12&decoder_first_pipeline_num_layers=0");
    let (field, says) = first_error(&r).expect("refused");
    assert_eq!(field, Field::DecoderFirstPipelineNumLayers);
    assert!(
        says.contains("“ValueError: num_layers_in_first_pipeline_stage must be larger than 0”"),
        "{says}"
    );
}
