//! nanotron's part of the model stage: its settings as typed (`recompute_layer`; model states
//! replicated), published in the plan.

use crate::calc::spec::AsBuilt;
use crate::calc::{Field, RawInputs};

/// The model stage's settings (`Spec::fit.settings`): `recompute_layer`; model states replicated (ZeRO stage 0).
pub fn settings(raw: &RawInputs, report: &mut crate::calc::Report) {
    use crate::calc::parse::settings;
    use crate::calc::plan::{Settings, Sharding};
    let mut diags = Vec::new();
    let gpu = settings::gpu(raw, &mut diags);
    let mut rd = crate::calc::parse::Reader {
        raw,
        diags: &mut diags,
    };
    let recompute = if rd.flag(Field::RecomputeLayer).or(false) == Some(true) {
        crate::calc::plan::Recompute::Full
    } else {
        crate::calc::plan::Recompute::None
    };
    let s = Settings {
        gpu,
        recompute,
        sharding: Sharding::Replicated {
            words: "replicated (ZeRO stage 0)",
        },
        ..Settings::default()
    };
    settings::publish(<super::This as AsBuilt>::SPEC, raw, report, s, diags);
}
