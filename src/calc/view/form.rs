//! The form: which fields are shown (all, or the compact form's), how a flag's text reads, when a
//! field is marked invalid, which group starts folded, and what a text field offers to pick from.

use crate::calc::parse::{self, Param};
use crate::calc::spec::Concept;
use crate::calc::{field, model, Diag, Field, Framework, Level, RawInputs, Report};

/// Whether a flag field's text shows as checked: exactly when the framework reads it as true
/// (`true`, `1`, `yes`, `on`, any case, spaces around), as [`parse::flag`] parses it.
pub fn checked(field: Field, text: &str) -> bool {
    matches!(
        parse::flag(field, text, &mut Vec::new()),
        Param::Given(true)
    )
}

/// Whether the form shows `field`: always in the full page; in the compact (`embed=1`) form only
/// the framework's key fields, plus any field that is given, given twice or has a message.
pub fn shown(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
    field: Field,
    compact: bool,
) -> bool {
    !compact
        || framework.key_fields().contains(&field)
        || !inputs.get(field).is_empty()
        || inputs.conflict(field).is_some()
        || report.diags_for(field).next().is_some()
}

/// Whether any of a field's messages is an error (the form marks the field invalid).
pub fn invalid(diags: &[Diag]) -> bool {
    diags.iter().any(|d| d.level == Level::Error)
}

/// What a text field offers to pick from (`<datalist>`): a name and the values.
pub fn suggestions(field: Field) -> Option<(&'static str, Vec<&'static str>)> {
    Some(match (field, field.concept()) {
        (_, Some(Concept::Model)) => ("list-models", model::PRESETS.to_vec()),
        (Field::Gpu, _) => (
            "list-gpus",
            crate::calc::gpu::GPUS.iter().map(|g| g.id).collect(),
        ),
        (Field::ModelType, _) => (
            "list-model-types",
            model::ModelType::ALL.iter().map(|t| t.key()).collect(),
        ),
        (_, Some(Concept::Optimizer)) => (
            "list-optimizers",
            vec![
                "adamw_torch_fused",
                "adamw_torch",
                "adamw_bnb_8bit",
                "paged_adamw_8bit",
                "adafactor",
                "lion_32bit",
                "sgd",
            ],
        ),
        _ => field
            .choices()
            .map(|(name, values)| (name, values.to_vec()))?,
    })
}

/// Whether a form group starts folded: the architecture group, unless something in it is given
/// or has a message.
pub fn folded(title: &str, fields: &[Field], raw: &RawInputs, report: &Report) -> bool {
    title == field::ARCHITECTURE_TITLE
        && fields
            .iter()
            .all(|&f| !raw.is_given(f) && report.diags_for(f).next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::view::testing::{fw, raw};

    #[test]
    fn a_flag_is_checked_exactly_when_the_framework_reads_true() {
        let f = Field::SamplePacking;
        for yes in ["true", "TRUE", " 1 ", "yes", "On"] {
            assert!(checked(f, yes), "{yes:?}");
        }
        for no in ["", "  ", "false", "0", "no", "off", "2", "truthy", "ja"] {
            assert!(!checked(f, no), "{no:?}");
        }
    }

    #[test]
    fn the_compact_form_shows_key_given_and_flagged_fields() {
        let fw = fw("axolotl");
        let empty = RawInputs::default();
        let report = fw.compute("0.19.0", &empty);
        // the full form shows everything
        assert!(shown(fw, &empty, &report, Field::MaxSteps, false));
        // compact: the key fields only
        assert!(shown(fw, &empty, &report, Field::Nodes, true));
        assert!(!fw.key_fields().contains(&Field::MaxSteps));
        assert!(!shown(fw, &empty, &report, Field::MaxSteps, true));
        // a given field is shown
        let given = raw(&[(Field::MaxSteps, "20")]);
        let r = fw.compute("0.19.0", &given);
        assert!(shown(fw, &given, &r, Field::MaxSteps, true));
        // a field given twice is shown, though its text is empty
        let mut twice = RawInputs::default();
        twice.set_conflict(Field::MaxSteps, vec!["10".into(), "20".into()]);
        let r = fw.compute("0.19.0", &twice);
        assert!(shown(fw, &twice, &r, Field::MaxSteps, true));
        // a field with a message is shown
        let bad = raw(&[(Field::MaxSteps, "x")]);
        let r = fw.compute("0.19.0", &bad);
        assert!(r.diags_for(Field::MaxSteps).next().is_some());
        assert!(shown(fw, &empty, &r, Field::MaxSteps, true));
    }

    #[test]
    fn a_field_is_invalid_only_with_an_error() {
        let e = Diag::new(Field::Nodes, Level::Error, "e");
        let w = Diag::new(Field::Nodes, Level::Warning, "w");
        let n = Diag::new(Field::Nodes, Level::Note, "n");
        assert!(!invalid(&[]));
        assert!(!invalid(&[w.clone(), n.clone()]));
        assert!(invalid(&[w, e, n]));
    }
}
