//! The registry: every framework dpcalc models, one line each, and the [`Framework`] handle the
//! rest of dpcalc passes around. Everything a framework knows lives in its own folder here
//! (`axolotl/`, `hf/`, …) as a [`Spec`]; [`Framework::spec`] is the only `match` on a framework in
//! dpcalc, and every method below reads the spec.
//!
//! To add a framework: a folder with a `mod.rs` holding its `SPEC` (see [`Spec`]), one line in
//! `frameworks!` below, and its first view (`first-<id>`: a Cargo feature and bin, see
//! `src/first.rs`). Each build holds `first_view::trim` of every `SPEC`: the one place that
//! decides what a first view leaves out.

pub mod axolotl;
pub mod deepspeed;
pub mod hf;
pub mod megatron;
pub mod nanotron;
pub mod torchtitan;

pub use super::field::{CLUSTER, THROUGHPUT};
use super::first_view;
use super::spec::AsBuilt;
pub use super::spec::{Concept, Release, Spec};
use super::{Field, Kind, Output, Param, RawInputs, Report};

macro_rules! frameworks {
    ($($variant:ident => $module:ident, $view:literal;)*) => {
        /// A training framework, `framework=` in a link. The first is the default.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Framework {
            #[default]
            $($variant),*
        }

        impl Framework {
            pub const ALL: &'static [Framework] = &[$(Framework::$variant),*];

            /// Everything dpcalc knows about this framework, as this build holds it (see
            /// `first_view::trim`).
            pub fn spec(self) -> &'static Spec {
                match self { $(Framework::$variant => <$module::This as AsBuilt>::SPEC),* }
            }

            /// Whether this build computes the framework's rules: every build but a first
            /// view's, which holds one framework's (its own, feature `first-<id>`; see
            /// `src/first.rs`).
            pub fn compiled(self) -> bool {
                match self { $(Framework::$variant => first_view::FULL || cfg!(feature = $view)),* }
            }
        }

        /// Each framework's Spec as this build holds it: `first_view::trim` of its `SPEC`,
        /// its rules and words kept in the full app and in the framework's own first view. Free
        /// constants, which the compiler reads by value (an impl's constant naming `SPEC` would
        /// build every function the whole `SPEC` names); the impls follow `impl Framework`, which
        /// keeps its symbols, and with them the first views' bytes, as they were.
        mod built {
            $(pub mod $module {
                use super::super::{first_view, $module, Spec};
                pub const SPEC: Spec = first_view::trim($module::SPEC, cfg!(feature = $view));
            })*
        }

        $(impl AsBuilt for $module::This {
            const SPEC: &'static Spec = &built::$module::SPEC;
        })*
    };
}

frameworks! {
    Axolotl => axolotl, "first-axolotl";
    Hf => hf, "first-hf";
    DeepSpeed => deepspeed, "first-deepspeed";
    Megatron => megatron, "first-megatron";
    Torchtitan => torchtitan, "first-torchtitan";
    Nanotron => nanotron, "first-nanotron";
}

impl Framework {
    /// The `framework=` value.
    pub fn id(self) -> &'static str {
        self.spec().id
    }

    /// The name people call it.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn from_id(id: &str) -> Option<Framework> {
        Framework::ALL.iter().copied().find(|f| f.id() == id)
    }

    /// The releases modelled, newest (the default) first.
    pub fn releases(self) -> &'static [Release] {
        self.spec().releases
    }

    /// The default release: the newest.
    pub fn default_release(self) -> &'static Release {
        &self.releases()[0]
    }

    pub fn release(self, id: &str) -> Option<&'static Release> {
        self.releases().iter().find(|r| r.id == id)
    }

    /// The form: titled groups of this framework's fields.
    pub fn groups(self) -> &'static [(&'static str, &'static [Field])] {
        self.spec().groups
    }

    /// The results this framework's page shows, in order.
    pub fn outputs(self) -> &'static [Output] {
        self.spec().outputs
    }

    /// The inputs an embedded (compact) view always shows.
    pub fn key_fields(self) -> &'static [Field] {
        self.spec().key_fields
    }

    /// The label and config name the results list shows for `output`.
    pub fn label(self, output: Output) -> (&'static str, &'static str) {
        (self.spec().output_label)(output).unwrap_or((output.label(), output.name()))
    }

    /// Computes everything by the rules of `release` (an id from [`Framework::releases`]), then
    /// the model, memory and compute stage (`fit/mod.rs`) and dpcalc's tokens-and-time additions.
    pub fn compute(self, release: &str, raw: &RawInputs) -> Report {
        let mut report = self.compute_plan(release, raw);
        // a first view resolves no model (it leaves a link that names one to the full app) and
        // shows none of this stage's values: left out of its build
        let estimated = if first_view::FULL {
            let second = self.second_run(release, raw, &report);
            super::fit::run(self.spec(), &mut report, second.as_ref())
        } else {
            None
        };
        super::schedule::finish(report, estimated)
    }

    /// The second measured run of a link (`second_run_nodes` with its speed): the link's inputs
    /// on that many nodes of the link's GPUs per node, its speed as that run's own
    /// `tokens_per_second_per_gpu` or `seconds_per_step`, resolved by the framework's rules (its
    /// batch, its layout) as the plan the model stage calibrates the communication with. `None`
    /// without a second node count or a node shape.
    fn second_run(self, release: &str, raw: &RawInputs, report: &Report) -> Option<Report> {
        let nodes = report.plan.settings.second_run_nodes.given()?;
        let shape = report.plan.node_shape?;
        let mut second = raw.clone();
        second.set(Field::Nodes, nodes.to_string());
        second.set(Field::GpusPerNode, shape.gpus_per_node.to_string());
        second.set(Field::WorldSize, "");
        for (own, of_second) in [
            (
                Field::TokensPerSecondPerGpu,
                Field::SecondRunTokensPerSecondPerGpu,
            ),
            (Field::SecondsPerStep, Field::SecondRunSecondsPerStep),
        ] {
            second.set(own, raw.get(of_second));
            second.set(of_second, "");
        }
        second.set(Field::SecondRunNodes, "");
        Some(self.compute_plan(release, &second))
    }

    /// The framework's rules and its model-stage settings: the resolved plan, without the
    /// model stage's values (what the planner needs of each choice's settings).
    pub fn compute_plan(self, release: &str, raw: &RawInputs) -> Report {
        let mut report = self.compute_rules(release, raw);
        report.enter(super::Stage::Model);
        // the framework's model-stage settings complete the plan its rules published
        (self.spec().fit.settings)(raw, &mut report);
        report
    }

    /// The framework's own rules only, without dpcalc's tokens-and-time additions
    /// (what the layout explorer needs for each of its many rows).
    pub fn compute_rules(self, release: &str, raw: &RawInputs) -> Report {
        (self.spec().compute)(release, raw)
    }

    /// Every field this framework reads, in form order (its groups, then [`THROUGHPUT`]).
    pub fn fields(self) -> impl Iterator<Item = Field> {
        self.spec().fields()
    }

    /// What kind of text `field` takes here: its own kind, except where this framework reads
    /// the same key differently (the Trainer's `max_steps` is an int whose default is -1).
    pub fn kind(self, field: Field) -> Kind {
        (self.spec().kind)(field).unwrap_or_else(|| field.kind())
    }

    /// The form's label, placeholder and help for `field` here: the field's own, except for the
    /// keys several frameworks share but default or read differently.
    pub fn describe(self, field: Field) -> (&'static str, &'static str, &'static str) {
        (self.spec().describe)(field).unwrap_or_else(|| field.describe())
    }

    pub fn has(self, field: Field) -> bool {
        self.fields().any(|f| f == field)
    }

    /// This framework's field with config key `key`.
    pub fn field(self, key: &str) -> Option<Field> {
        self.fields().find(|f| f.key() == key)
    }

    /// This framework's field for `concept`, if it has one.
    pub fn field_for(self, concept: Concept) -> Option<Field> {
        self.spec().field_for(concept)
    }
}

/// The inputs for `to` that mean what `raw` meant for `from`: a field both frameworks have is
/// copied, and a field of `to` takes the value of `from`'s field for the same [`Concept`].
/// Nothing is invented: a value with no equivalent is left out, and the new framework's own
/// defaults apply.
pub fn carry(from: Framework, raw: &RawInputs, to: Framework) -> RawInputs {
    let mut out = RawInputs::default();
    for field in to.fields() {
        let source = if from.has(field) {
            Some(field)
        } else {
            field.concept().and_then(|c| from.field_for(c))
        };
        if let Some(source) = source {
            let text = raw.get(source);
            // A parallel size of 1 is every framework's "none", except that nanotron 0.4 has no
            // context_parallel_size key at all: such a 1 carries nothing.
            let none = text.trim() == "1"
                && matches!(
                    field.concept(),
                    Some(Concept::Tp | Concept::Cp | Concept::Sp | Concept::Pp | Concept::Ep)
                );
            if !text.trim().is_empty() && !none {
                out.set(field, text);
            }
        }
    }
    // the one switch two frameworks state the other way round
    let (tie, untie) = (
        Field::TieWordEmbeddings,
        Field::UntieEmbeddingsAndOutputWeights,
    );
    for (a, b) in [(tie, untie), (untie, tie)] {
        if from.has(a) && to.has(b) && !from.has(b) {
            if let Param::Given(v) = super::parse::flag(a, raw.get(a), &mut Vec::new()) {
                out.set(b, (!v).to_string());
            }
        }
    }
    // Megatron's grouped-query switch follows from the key/value heads carried
    if to.has(Field::GroupQueryAttention) && !from.has(Field::GroupQueryAttention) {
        if let Some(kv) = from.field_for(Concept::KvHeads) {
            if raw.is_given(kv) {
                out.set(Field::GroupQueryAttention, "true");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }

    #[test]
    fn ids_and_fields_are_unique_per_framework() {
        for &fw in Framework::ALL {
            assert_eq!(Framework::from_id(fw.id()), Some(fw));
            let keys: Vec<&str> = fw.fields().map(Field::key).collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                keys.len(),
                "{}: a field listed twice",
                fw.id()
            );
            assert!(!fw.releases().is_empty());
            for c in [Concept::Nodes, Concept::GpusPerNode, Concept::WorldSize] {
                assert!(fw.field_for(c).is_some(), "{} lacks {c:?}", fw.id());
            }
        }
        // every field belongs to some framework's form
        for &f in Field::ALL {
            assert!(
                Framework::ALL.iter().any(|fw| fw.has(f)),
                "{} is in no form",
                f.key()
            );
        }
    }

    /// One fallback for all: a release id a framework does not have gets its default release's
    /// rules, dimensions, comparison and memo key (`spec::release_at`).
    #[test]
    fn an_unknown_release_is_the_default() {
        let raw = RawInputs::from_pairs([
            (Field::WorldSize, "8"),
            (Field::MicroBatchSize, "2"),
            (Field::NumSamples, "1000"),
            // axolotl 0.19.0 refuses it (flash_attention_2 only), its default does not
            (Field::ContextParallelSize, "2"),
            (Field::AttnImplementation, "sdpa"),
            // Megatron 0.19.2 reads the sizes one by one with it (its memo key)
            (Field::SeqLength, "128"),
        ]);
        for &fw in Framework::ALL {
            let (spec, default) = (fw.spec(), fw.default_release().id);
            for unknown in ["", "0.0.0", "HEAD"] {
                assert_eq!(
                    fw.compute_rules(unknown, &raw),
                    fw.compute_rules(default, &raw),
                    "{} {unknown:?}",
                    fw.id()
                );
                assert_eq!(
                    (spec.layout.dims_at)(unknown),
                    (spec.layout.dims_at)(default)
                );
                assert_eq!(
                    spec.legacy.map(|of| of(unknown)),
                    spec.legacy.map(|of| of(default))
                );
                let (a, b) = (
                    (spec.layout.memo)(unknown, &raw),
                    (spec.layout.memo)(default, &raw),
                );
                for sizes in [[1, 1, 1], [2, 1, 4], [4, 2, 1]] {
                    assert_eq!(a(&sizes), b(&sizes), "{} {unknown:?}", fw.id());
                }
            }
        }
    }

    #[test]
    fn carry_maps_by_concept_and_invents_nothing() {
        let raw = RawInputs::from_pairs([
            (Field::Nodes, "2"),
            (Field::TensorParallelSize, "4"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "8"),
            (Field::SamplePacking, "true"),
        ]);
        let m = carry(fw("axolotl"), &raw, fw("megatron"));
        assert_eq!(m.get(Field::Nodes), "2");
        assert_eq!(m.get(Field::TensorModelParallelSize), "4");
        assert_eq!(m.get(Field::MicroBatchSize), "2");
        assert_eq!(m.get(Field::SamplePacking), "");
        let back = carry(fw("megatron"), &m, fw("axolotl"));
        assert_eq!(back.get(Field::TensorParallelSize), "4");
        assert_eq!(back.get(Field::GradientAccumulationSteps), "");
    }
}
