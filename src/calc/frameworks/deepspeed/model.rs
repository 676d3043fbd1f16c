//! DeepSpeed's part of the model stage: its settings as typed (`gradient_checkpointing` and the
//! ZeRO keys), published in the plan.

use crate::calc::spec::AsBuilt;
use crate::calc::RawInputs;

/// The model stage's settings (`Spec::fit.settings`): `gradient_checkpointing` and the ZeRO keys.
pub fn settings(raw: &RawInputs, report: &mut crate::calc::Report) {
    use crate::calc::parse::settings;
    use crate::calc::plan::{Settings, Sharding};
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let recompute = settings::gradient_checkpointing(raw, &mut diags);
    let sharding = match settings::zero(raw, &mut diags) {
        Some(z) => Sharding::Zero(z),
        None => Sharding::Replicated {
            words: "replicated (DDP)",
        },
    };
    let s = Settings {
        gpu,
        recompute,
        sharding,
        // an HF model run eagerly (a ds_config says nothing of torch.compile)
        fusion: crate::calc::plan::Fusion::Eager,
        ..Settings::default()
    };
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
}
