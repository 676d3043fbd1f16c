//! megatron: not modelled yet (placeholder so the dispatch table compiles).

use super::framework::{Release, CLUSTER};
use super::{Field, Level, Output, RawInputs, Report};

pub const RELEASES: &[Release] = &[Release {
    id: "newest",
    label: "newest",
}];

pub const GROUPS: &[(&str, &[Field])] = &[("Cluster", CLUSTER)];

pub const OUTPUTS: &[Output] = &[Output::WorldSize];

pub const KEY_FIELDS: &[Field] = CLUSTER;

pub fn compute_release(_release: &str, _raw: &RawInputs) -> Report {
    let mut r = Report::default();
    r.diag(Field::Nodes, Level::Hint, "megatron is not modelled yet");
    r
}

/// This framework's own label and config name for a result, where it differs from the default.
pub fn output_label(_output: Output) -> Option<(&'static str, &'static str)> {
    None
}
