//! The frameworks dpcalc models, the releases of each whose math differs, and what each one's
//! form shows: its own config keys, grouped, in the order its documentation uses.
//!
//! This is the dispatch table and nothing else: every rule lives in the framework's own module.

use super::{axolotl, deepspeed, hf, megatron, nanotron, torchtitan};
use super::{Field, Output, RawInputs, Report};

/// A release whose batch math differs from its neighbours'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The `version=` value in a link.
    pub id: &'static str,
    /// What the version picker shows.
    pub label: &'static str,
}

macro_rules! frameworks {
    ($($variant:ident => $id:literal, $name:literal, $module:ident;)*) => {
        /// A training framework, `framework=` in a link.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Framework {
            #[default]
            $($variant),*
        }

        impl Framework {
            pub const ALL: &'static [Framework] = &[$(Framework::$variant),*];

            /// The `framework=` value.
            pub const fn id(self) -> &'static str {
                match self { $(Framework::$variant => $id),* }
            }

            /// The name people call it.
            pub const fn name(self) -> &'static str {
                match self { $(Framework::$variant => $name),* }
            }

            /// The releases modelled, newest (the default) first.
            pub fn releases(self) -> &'static [Release] {
                match self { $(Framework::$variant => $module::RELEASES),* }
            }

            /// The form: titled groups of this framework's fields.
            pub fn groups(self) -> &'static [(&'static str, &'static [Field])] {
                match self { $(Framework::$variant => $module::GROUPS),* }
            }

            /// The results this framework's page shows, in order.
            pub fn outputs(self) -> &'static [Output] {
                match self { $(Framework::$variant => $module::OUTPUTS),* }
            }

            /// The inputs an embedded (compact) view always shows.
            pub fn key_fields(self) -> &'static [Field] {
                match self { $(Framework::$variant => $module::KEY_FIELDS),* }
            }

            /// The label and config name the results list shows for `output`.
            pub fn label(self, output: Output) -> (&'static str, &'static str) {
                let own = match self { $(Framework::$variant => $module::output_label(output)),* };
                own.unwrap_or((output.label(), output.name()))
            }

            /// Computes everything by the rules of `release` (an id from [`Framework::releases`]).
            pub fn compute(self, release: &str, raw: &RawInputs) -> Report {
                super::schedule::finish(self, raw, self.compute_rules(release, raw))
            }

            /// The framework's own rules only, without dpcalc's tokens-and-time additions
            /// (what the layout explorer needs for each of its many rows).
            pub fn compute_rules(self, release: &str, raw: &RawInputs) -> Report {
                match self { $(Framework::$variant => $module::compute_release(release, raw)),* }
            }
        }
    };
}

frameworks! {
    Axolotl => "axolotl", "axolotl", axolotl;
    Hf => "hf", "Hugging Face Trainer", hf;
    DeepSpeed => "deepspeed", "DeepSpeed", deepspeed;
    Megatron => "megatron", "Megatron-LM", megatron;
    Torchtitan => "torchtitan", "torchtitan", torchtitan;
    Nanotron => "nanotron", "nanotron", nanotron;
}

impl Framework {
    pub fn from_id(id: &str) -> Option<Framework> {
        Framework::ALL.iter().copied().find(|f| f.id() == id)
    }

    /// The default release: the newest.
    pub fn default_release(self) -> &'static Release {
        &self.releases()[0]
    }

    pub fn release(self, id: &str) -> Option<&'static Release> {
        self.releases().iter().find(|r| r.id == id)
    }

    /// Every field this framework reads, in form order (its groups, then [`THROUGHPUT`]).
    pub fn fields(self) -> impl Iterator<Item = Field> {
        self.groups()
            .iter()
            .chain(std::iter::once(&THROUGHPUT))
            .flat_map(|(_, f)| f.iter().copied())
    }

    /// What kind of text `field` takes here: its own kind, except where this framework reads
    /// the same key differently (the Trainer's `max_steps` is an int whose default is -1).
    pub fn kind(self, field: Field) -> super::Kind {
        match (self, field) {
            (Framework::Hf, Field::MaxSteps) => super::Kind::Int,
            _ => field.kind(),
        }
    }

    /// The form's label, placeholder and help for `field` here: the field's own, except for the
    /// keys several frameworks share but default or read differently.
    pub fn describe(self, field: Field) -> (&'static str, &'static str, &'static str) {
        use Framework as F;
        match (self, field) {
            (F::Hf, Field::WarmupSteps) => (
                "Warmup steps",
                "0",
                "v5: a step count, or below 1 a ratio of max_steps; v4: a whole number of steps.",
            ),
            (F::Hf, Field::WarmupRatio) => (
                "Warmup ratio",
                "0",
                "v4 only (transformers 5 removed it): a fraction of max_steps when warmup_steps is 0.",
            ),
            (F::Hf, Field::MaxSteps) => (
                "Max steps",
                "-1",
                "max_steps; -1 (the default) trains num_train_epochs, a positive value overrides it.",
            ),
            (F::Hf, Field::NumSamples) | (F::DeepSpeed, Field::NumSamples) => (
                "Training rows",
                "required for steps",
                "len(train_dataset): the rows the dataloader reads.",
            ),
            (F::Torchtitan, Field::WarmupSteps) => (
                "Warmup steps",
                "200",
                "lr_scheduler.warmup_steps (clamped to training.steps).",
            ),
            (F::Torchtitan, Field::GlobalBatchSize) => (
                "Global batch size",
                "-1",
                "training.global_batch_size; -1 means local_batch_size × dp (no accumulation).",
            ),
            (F::Megatron, Field::GlobalBatchSize) => (
                "Global batch size",
                "mbs × dp",
                "--global-batch-size: samples per iteration, all GPUs.",
            ),
            (F::Megatron, Field::MicroBatchSize) => (
                "Micro batch size",
                "required",
                "--micro-batch-size: samples per GPU per forward pass.",
            ),
            (F::Megatron, Field::ContextParallelSize) => (
                "Context parallel size",
                "1",
                "--context-parallel-size.",
            ),
            (F::Nanotron, Field::MicroBatchSize) => (
                "Micro batch size",
                "required",
                "tokens.micro_batch_size.",
            ),
            (F::Nanotron, Field::ContextParallelSize) => (
                "Context parallel size",
                "1",
                "parallelism.context_parallel_size (HEAD only; 0.4 has no such key).",
            ),
            (F::DeepSpeed, Field::NumEpochs) => (
                "Epochs",
                "1",
                "Passes over the data in your training loop (whole numbers).",
            ),
            _ => field.describe(),
        }
    }

    pub fn has(self, field: Field) -> bool {
        self.fields().any(|f| f == field)
    }

    /// This framework's field with config key `key`.
    pub fn field(self, key: &str) -> Option<Field> {
        self.fields().find(|f| f.key() == key)
    }
}

/// The group every framework's form ends with: measured speed, for the time estimates.
pub const THROUGHPUT: (&str, &[Field]) = (
    "Throughput (optional)",
    &[Field::TokensPerSecondPerGpu, Field::SecondsPerStep],
);

/// The cluster group every framework's form starts with.
pub const CLUSTER: &[Field] = &[Field::Nodes, Field::GpusPerNode, Field::WorldSize];

/// What a field means across frameworks, so a switch of framework (and the compare view) can
/// carry a value to the other framework's key for the same thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Concept {
    Nodes,
    GpusPerNode,
    WorldSize,
    /// Tensor parallel size (shares the data).
    Tp,
    /// Context parallel size (shares the data).
    Cp,
    /// Sequence parallel size, Ulysses-style (shares the data).
    Sp,
    /// Pipeline parallel size.
    Pp,
    /// Expert parallel size (folded into the data-parallel ranks).
    Ep,
    /// Samples per GPU per forward pass.
    Micro,
    /// Micro batches per optimizer step.
    Accum,
    /// Samples per optimizer step, all GPUs.
    Global,
    /// Rows in the training set.
    Samples,
    /// Passes over the data.
    Epochs,
    /// Optimizer steps of the run, when set directly.
    Steps,
    /// Tokens per sample.
    SeqLen,
    /// Warmup, in optimizer steps.
    WarmupSteps,
    TokensPerSecondPerGpu,
    SecondsPerStep,
}

impl Field {
    /// What this field means in any framework, if it has an equivalent elsewhere.
    pub const fn concept(self) -> Option<Concept> {
        use Concept as C;
        Some(match self {
            Field::Nodes => C::Nodes,
            Field::GpusPerNode => C::GpusPerNode,
            Field::WorldSize => C::WorldSize,
            Field::TensorParallelSize
            | Field::TpSize
            | Field::AutotpSize
            | Field::TensorModelParallelSize
            | Field::TensorParallelDegree
            | Field::Tp => C::Tp,
            Field::ContextParallelSize | Field::CpSize | Field::ContextParallelDegree => C::Cp,
            Field::SpSize | Field::SequenceParallelSize => C::Sp,
            Field::PipelineModelParallelSize | Field::PipelineParallelDegree | Field::Pp => C::Pp,
            Field::ExpertModelParallelSize
            | Field::ExpertParallelDegree
            | Field::ExpertParallelSize => C::Ep,
            Field::MicroBatchSize
            | Field::PerDeviceTrainBatchSize
            | Field::TrainMicroBatchSizePerGpu
            | Field::LocalBatchSize => C::Micro,
            Field::GradientAccumulationSteps | Field::BatchAccumulationPerReplica => C::Accum,
            Field::TrainBatchSize | Field::GlobalBatchSize => C::Global,
            Field::NumSamples => C::Samples,
            Field::NumEpochs | Field::NumTrainEpochs => C::Epochs,
            Field::MaxSteps | Field::TrainIters | Field::Steps | Field::TrainSteps => C::Steps,
            Field::SequenceLen
            | Field::MaxLength
            | Field::SeqLength
            | Field::SeqLen
            | Field::SequenceLength => C::SeqLen,
            Field::WarmupSteps | Field::LrWarmupIters => C::WarmupSteps,
            Field::TokensPerSecondPerGpu => C::TokensPerSecondPerGpu,
            Field::SecondsPerStep => C::SecondsPerStep,
            _ => return None,
        })
    }
}

impl Framework {
    /// This framework's field for `concept`, if it has one.
    pub fn field_for(self, concept: Concept) -> Option<Field> {
        self.fields().find(|f| f.concept() == Some(concept))
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn carry_maps_by_concept_and_invents_nothing() {
        let raw = RawInputs::from_pairs([
            (Field::Nodes, "2"),
            (Field::TensorParallelSize, "4"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "8"),
            (Field::SamplePacking, "true"),
        ]);
        let m = carry(Framework::Axolotl, &raw, Framework::Megatron);
        assert_eq!(m.get(Field::Nodes), "2");
        assert_eq!(m.get(Field::TensorModelParallelSize), "4");
        assert_eq!(m.get(Field::MicroBatchSize), "2");
        assert_eq!(m.get(Field::SamplePacking), "");
        let back = carry(Framework::Megatron, &m, Framework::Axolotl);
        assert_eq!(back.get(Field::TensorParallelSize), "4");
        assert_eq!(back.get(Field::GradientAccumulationSteps), "");
    }
}
