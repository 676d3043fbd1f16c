//! The Hugging Face Trainer's part of the model stage: its settings as typed (`gradient_checkpointing`,
//! `optim`, DeepSpeed's ZeRO keys), published in the plan.

use crate::calc::spec::AsBuilt;
use crate::calc::{Field, RawInputs};

/// The model stage's settings (`Spec::fit.settings`): `gradient_checkpointing`, `optim`, DeepSpeed's ZeRO keys.
pub fn settings(raw: &RawInputs, report: &mut crate::calc::Report) {
    use crate::calc::parse::settings;
    use crate::calc::plan::{Settings, Sharding};
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let recompute = settings::gradient_checkpointing(raw, &mut diags);
    let optimizer_bytes_per_param = settings::optimizer(Field::Optim, raw, &mut diags);
    let sharding = match settings::zero(raw, &mut diags) {
        Some(z) => Sharding::Zero(z),
        None => Sharding::Replicated {
            words: "replicated (DDP)",
        },
    };
    let s = Settings {
        gpu,
        recompute,
        optimizer_bytes_per_param,
        optimizer_8bit: settings::optimizer_8bit(Field::Optim, raw),
        sharding,
        // `TrainingArguments.torch_compile` (default false) wraps the model in `torch.compile`
        fusion: settings::compiled(Field::TorchCompile, raw, &mut diags),
        ..Settings::default()
    };
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
}
