//! What a first view leaves out: the one place the build variant is decided.
//!
//! The crate builds the full app and six first views (Cargo feature `first-<id>`, which implies
//! `first`; see `src/first.rs`): a first view holds one framework's rules and the page's first
//! screen, and none of what only the app uses. A [`Spec`] is a static, and every function it
//! points to is linked into every build that holds it, called or not. So each framework's `SPEC`
//! describes the framework whole, and the registry holds `trim` of it: in the full app the
//! Spec itself; in a first view the Spec with the app's parts replaced by `spec.rs`'s stubs
//! (`no_memo`, `no_launcher`, `not_built`, …). `trim` is evaluated at compile time, so the
//! functions it leaves out are referenced by no static and not compiled. For the same reason a
//! framework's `SPEC` is the registry's alone (`pub(super)`: a public constant would have the
//! compiler build every function it names into the library), and the framework's own code reads
//! its Spec as built (`<This as AsBuilt>::SPEC`, see `spec::AsBuilt`).
//!
//! A first view leaves out of every Spec: the comparison with another release; the explorer's
//! dimensions by release, fills, launch refusals, memo and planner choices; the GPU map's source
//! and caveat; the export's launcher, file keys, derived keys and placement; the import's
//! aliases, renamed keys, word counts, cluster and config.json mapping; the compare view's
//! additions; the model stage's own estimators. Of the frameworks whose rules it does not hold
//! (all but its own), also their rules, their words (output labels, field descriptions and
//! kinds) and their model-stage settings.
//!
//! Beyond the Specs, [`FULL`] keeps out of a first view the model stage (`Framework::compute`
//! runs no `fit::run`, which is `pub(crate)` so that nothing else compiles it), Megatron's
//! pipeline (it needs the resolved model), the step time's formatting (`view/results.rs`) and
//! the tokens-and-time outputs the guide names (`guide.rs`): code, not data, which only a switch
//! where it runs leaves out of a build. The three switches below this module's layer read the
//! feature where they act: `field.rs` (which sections of the fields' words each first view
//! holds), `report.rs` (no worked steps recorded, `explain_with` inlined) and
//! `parse/settings.rs` (no model resolved).

use super::spec::{self, Export, Fit, Import, Layout, Mesh, PlannerChoices, Spec, Written};

/// Whether this is the full app's build (not a first view: feature `first` off).
pub const FULL: bool = cfg!(not(feature = "first"));

/// The Spec this build holds of a framework described by `spec`: `spec` itself in the full app;
/// in a first view, `spec` without what only the app uses, and without the framework's rules and
/// words too unless the first view `holds_rules` (it is the framework's own).
pub(crate) const fn trim(spec: Spec, holds_rules: bool) -> Spec {
    if FULL {
        return spec;
    }
    let first = Spec {
        legacy: None,
        layout: Layout {
            dims_at: spec::all_dims,
            fills: spec::no_fills,
            launch_refusal: spec::no_refusal,
            memo: spec::no_memo,
            planner: NO_PLANNER_CHOICES,
            ..spec.layout
        },
        mesh: Mesh {
            source: "",
            caveat: spec::no_caveat,
            ..spec.mesh
        },
        export: Export {
            launcher: spec::no_launcher,
            in_file: spec::no_in_file,
            derive: spec::derive_nothing,
            ..spec.export
        },
        import: match spec.import {
            Some(import) => Some(Import {
                alias: spec::no_alias,
                renamed: spec::no_renamed,
                words: spec::all_words,
                file_cluster: None,
                config_json: &spec::CONFIG_JSON_AS_IS,
                ..import
            }),
            None => None,
        },
        fit: Fit {
            own: spec::no_own,
            ..spec.fit
        },
        written: &WRITTEN,
        compared: &spec::COMPARED_PLAINLY,
        ..spec
    };
    if holds_rules {
        return first;
    }
    Spec {
        output_label: spec::none_output,
        describe: spec::none_describe,
        kind: spec::none_kind,
        compute: spec::not_built,
        fit: Fit {
            settings: spec::no_settings,
            ..first.fit
        },
        ..first
    }
}

/// No planner choices (a first view has no planner).
const NO_PLANNER_CHOICES: PlannerChoices = PlannerChoices {
    recompute: &[],
    sharding: &[],
    virtual_stages: None,
};

/// No placement of any key (a first view has no export).
const WRITTEN: Written = Written {
    place: spec::no_place,
    ..spec::WRITTEN_BY_DOTS
};
