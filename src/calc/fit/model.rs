//! The model's parameter counts (transformers' `num_parameters()`, or Megatron's `GPTModel`'s for
//! its own arguments) and its FLOPs per token in the four conventions, the framework's own first.

use crate::calc::num::float_repr as fmt_f;
use crate::calc::plan::NamedModel;
use crate::calc::spec::Spec;
use crate::calc::{flops, Level, Num, Output, Report};

/// The parameter counts, with and without the embeddings, and the trainable parameters of a
/// full fine-tune; `None` when a count does not fit an output.
pub(super) fn counts(
    report: &mut Report,
    named: &NamedModel,
) -> Option<(Option<u128>, Option<u128>)> {
    let m = &named.model;
    // num_parameters_exclude_embeddings() is num_parameters() less the embeddings: counted once
    // here (each count walks every layer)
    let n = m.num_parameters();
    let counts = (n, n.and_then(|n| n.checked_sub(m.embedding_params()?)));
    if let (Some(n), Some(ne)) = counts {
        report.set_int(Output::NumParameters, n)?;
        report.set_int(Output::NumParametersExcludeEmbeddings, ne)?;
        if m.megatron_layout() {
            report.explain(
                Output::NumParameters,
                "num_parameters = the parameters of Megatron-LM's GPTModel for these arguments at TP = PP = 1, the vocabulary as given (Megatron's embedding holds the padded one), tied weights once",
                format!(
                    "num_parameters = {n} ({} layers × {} hidden, {} MLP of {}, {}, {}, {} learned positions)",
                    m.num_hidden_layers,
                    m.hidden_size,
                    if m.gated_mlp { "SwiGLU" } else { "GeLU" },
                    m.intermediate_size,
                    if m.layer_norm { "LayerNorm" } else { "RMSNorm" },
                    if m.linear_bias { "linear biases" } else { "no linear biases" },
                    m.position_embeddings,
                ),
            );
        } else {
            report.explain(
                Output::NumParameters,
                "num_parameters = transformers PreTrainedModel.num_parameters() for the architecture (tied weights once)",
                format!("num_parameters = {n} ({}: {} layers × {} hidden)", m.model_type.key(), m.num_hidden_layers, m.hidden_size),
            );
        }
    }
    if let (Some(n), None) = (counts.0, &report.plan.settings.lora) {
        report.set_int(Output::TrainableParameters, n);
    }
    Some(counts)
}

/// The four FLOPs conventions; returns the framework's own per-token figure and its name.
pub(super) fn flops_stage(
    spec: &'static Spec,
    report: &mut Report,
    named: &NamedModel,
) -> Option<(f64, &'static str)> {
    let m = &named.model;
    let seq = report.plan.seq_len?;
    let tp = report.grid.map_or(1, |g| g.tp);
    let divisible = report.plan.settings.vocab_divisible;
    let hf = flops::hf(m).and_then(|v| i128::try_from(v).ok());
    let meg = flops::megatron(m, seq, divisible, tp);
    let tt = flops::torchtitan(m, seq).and_then(|v| i128::try_from(v).ok());
    let nt = flops::nanotron(m, seq);
    if let Some(v) = hf {
        report.set(Output::FlopsPerTokenHf, Num::Int(v));
    }
    if let Some(v) = meg {
        report.set(Output::FlopsPerTokenMegatron, Num::Float(v));
    }
    if let Some(v) = tt {
        report.set(Output::FlopsPerTokenTorchtitan, Num::Int(v));
    }
    if let Some(v) = nt {
        report.set(Output::FlopsPerTokenNanotron, Num::Float(v));
    }
    let convention = spec.fit.flops;
    let own = convention.pick(
        hf.map(Num::Int),
        meg.map(Num::Float),
        tt.map(Num::Int),
        nt.map(Num::Float),
    );
    let (name, rule) = (convention.counter(), convention.rule());
    let Some(own) = own else {
        report.diag(
            spec.fit.model_key,
            Level::Note,
            format!("{name}'s FLOPs counter has no model of this family; the other conventions are listed"),
        );
        return None;
    };
    report.set(Output::FlopsPerToken, own);
    report.explain(
        Output::FlopsPerToken,
        format!("flops_per_token = {rule}"),
        format!(
            "at {seq} tokens per sequence: HF {} · Megatron {} · torchtitan {} · nanotron {} (HF counts no attention and every expert; Megatron halves attention for causality and adds the padded vocabulary; torchtitan counts the active experts and full attention; nanotron leaves out the norms)",
            hf.map_or("—".into(), |v| v.to_string()),
            meg.map_or("—".into(), fmt_f),
            tt.map_or("—".into(), |v| v.to_string()),
            nt.map_or("—".into(), fmt_f),
        ),
    );
    Some((own.to_f64(), name))
}
