//! The Trainer's checks stage: `TrainingArguments.__post_init__` (warmup, the logging, eval and
//! save intervals) and `train_sampling_strategy` (the sampler `Trainer._get_train_sampler` builds).

use super::*;

impl Calc<'_> {
    // ---- TrainingArguments.__post_init__ ---------------------------------------------------

    pub(super) fn args_checks(&mut self) {
        self.interval_checks();
        self.warmup_checks();
    }

    /// The logging, eval and save intervals: whole above 1, logging non-zero.
    fn interval_checks(&mut self) {
        // logging/eval/save: "must be an integer if bigger than 1"
        for (field, p) in [
            (Field::LoggingSteps, self.inputs.logging_steps),
            (Field::EvalSteps, self.inputs.eval_steps),
            (Field::SaveSteps, self.inputs.save_steps),
        ] {
            if let Param::Given(x) = p {
                if x > 1.0 && x.fract() != 0.0 {
                    let floor = x.floor();
                    self.report.refuse(
                        field,
                        Refusal::new(
                            "TrainingArguments refuses",
                            format!(
                                "--{} must be an integer if bigger than 1: {}",
                                field.key(),
                                float_repr(x)
                            ),
                        )
                        .fix(format!(
                            "Use a whole number ({} or {}) or a ratio below 1.",
                            float_repr(floor),
                            float_repr(floor + 1.0)
                        )),
                    );
                }
            }
        }
        if self.inputs.logging_steps == Param::Given(0.0) {
            self.report.refuse(
                Field::LoggingSteps,
                Refusal::new(
                    "TrainingArguments refuses",
                    "logging strategy IntervalStrategy.STEPS requires non-zero --logging_steps",
                )
                .fix("Use a positive interval (default 500)."),
            );
        }
    }

    /// The warmup: 5.x refuses warmup_ratio; 4.x wants an int warmup_steps and a ratio in [0, 1].
    fn warmup_checks(&mut self) {
        match self.version {
            Version::V5 => {
                if self.inputs.warmup_ratio.is_given() {
                    let shown = self
                        .inputs
                        .warmup_ratio
                        .given()
                        .map_or(String::new(), float_repr);
                    self.report.refuse(
                        Field::WarmupRatio,
                        Refusal::new(
                            format!(
                                "transformers {} has no warmup_ratio, and TrainingArguments refuses it",
                                self.name
                            ),
                            "TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'",
                        )
                        .fix(format!(
                            "Fix: warmup_steps = {shown} (below 1 it is a ratio of max_steps). From the command line \
                             HfArgumentParser stops first: “ValueError: Some specified arguments are not used by the \
                             HfArgumentParser: ['--warmup_ratio', '{shown}']”."
                        )),
                    );
                }
            }
            _ => {
                if let Param::Given(w) = self.inputs.warmup_steps {
                    if w.fract() != 0.0 || w >= 9.2e18 {
                        self.report.refuse(
                            Field::WarmupSteps,
                            Refusal::new(
                                "TrainingArguments refuses",
                                "warmup_steps must be of type int and must be 0 or a positive integer.",
                            )
                            .fix(format!(
                                "({}). For a fraction of the steps use warmup_ratio.",
                                float_repr(w)
                            )),
                        );
                    }
                }
                if let Param::Given(r) = self.inputs.warmup_ratio {
                    if r > 1.0 {
                        self.report.refuse(
                            Field::WarmupRatio,
                            Refusal::new(
                                "TrainingArguments refuses",
                                "warmup_ratio must lie in range [0,1]",
                            )
                            .fix(format!("(got {}).", float_repr(r))),
                        );
                    } else if r > 0.0 && self.inputs.warmup_steps.given().is_some_and(|w| w > 0.0) {
                        self.report.diag(
                            Field::WarmupRatio,
                            Level::Note,
                            "The Trainer logs \u{201c}Both warmup_ratio and warmup_steps given, warmup_steps will override any \
                             effect of warmup_ratio during training\u{201d}.",
                        );
                    }
                }
            }
        }
    }

    // ---- train_sampling_strategy (TrainingArguments, Trainer._get_train_sampler) ------------

    /// The sampler the Trainer builds. transformers 4 has no such key (its `TrainingArguments`
    /// refuses the keyword); in 5.x only the command-line parser checks the `choices`: in Python
    /// (and `parse_dict`/YAML) any other string is kept and samples randomly.
    pub(super) fn sampling_checks(&mut self) -> Sampling {
        let Param::Given(given) = &self.inputs.strategy else {
            return Sampling::Random;
        };
        let given = given.clone();
        if self.version < Version::V5 {
            self.report.refuse(
                Field::TrainSamplingStrategy,
                Refusal::new(
                    format!(
                        "transformers {} has no train_sampling_strategy (transformers 5 replaced group_by_length with it), \
                         and TrainingArguments refuses it",
                        self.name
                    ),
                    "TrainingArguments.__init__() got an unexpected keyword argument 'train_sampling_strategy'",
                )
                .fix("Leave it out: v4 samples randomly (group_by_length=True groups by length; batch_rebalance came in 5.17)."),
            );
            return Sampling::Random;
        }
        let sampling = match given.as_str() {
            "random" => Sampling::Random,
            "sequential" => Sampling::Sequential,
            "group_by_length" => Sampling::GroupByLength,
            "batch_rebalance" => Sampling::BatchRebalance,
            other => {
                self.report.refuse(
                    Field::TrainSamplingStrategy,
                    Refusal::new(
                        "HfArgumentParser (the command line) refuses",
                        format!(
                            "argument --train_sampling_strategy/--train-sampling-strategy: invalid choice: '{}' \
                             (choose from {STRATEGIES})",
                            crate::calc::parse::shorten(other)
                        ),
                    )
                    .fix(
                        "The check is case-sensitive. TrainingArguments(...) in Python (and parse_dict or YAML) keeps any \
                         string unchecked and then samples randomly, as shown. Use random, sequential, group_by_length or \
                         batch_rebalance.",
                    ),
                );
                return Sampling::Random;
            }
        };
        if sampling == Sampling::BatchRebalance && self.name == "5.23" {
            self.report.diag(
                Field::TrainSamplingStrategy,
                Level::Note,
                "batch_rebalance exists since transformers 5.17 (5.17–5.25 compute as shown). 5.14–5.16 have no such value: \
                 TrainingArguments(...) keeps the string unchecked and samples randomly (their command line refuses it), \
                 so for those releases leave it out.",
            );
        }
        sampling
    }
}
