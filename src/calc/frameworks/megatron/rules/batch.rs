//! Megatron-LM's batch stage: the micro batch, the global batch and its default, the
//! num-microbatches calculator (constant, ramp-up, step schedule, `decrease_batch_size_if_needed`),
//! the eval batch check, and the batch outputs with the plan they publish.

use super::*;

impl Calc<'_> {
    pub(super) fn micro_batch(&mut self) -> Option<u64> {
        match self.inputs.micro_batch_size {
            Param::Given(0) => {
                self.report.refuse(
                    Field::MicroBatchSize,
                    Refusal::new(
                        "Megatron's validate_args stops with a bare AssertionError at",
                        "assert args.micro_batch_size > 0",
                    )
                    .fix("micro_batch_size must be at least 1."),
                );
                None
            }
            Param::Absent => {
                self.report.diag(
                    Field::MicroBatchSize,
                    Level::Hint,
                    "Megatron-LM requires --micro-batch-size (validate_args asserts it is set); \
                     the values shown assume 1.",
                );
                Some(1)
            }
            p => p.or(1),
        }
    }

    pub(super) fn calculator(&mut self, g: DataParallel, mbs: u64) -> Option<Calculator> {
        let i = self.inputs.clone();
        let mbs = mbs as u128;
        let dp = g.dp;
        let m = mbs.checked_mul(dp)?;
        let decrease = i.decrease_batch_size_if_needed.or(false)?;

        let (ramp, schedule) = self.release_switches();
        if ramp == Param::Invalid || schedule == Param::Invalid {
            return None;
        }

        // validate_args: the global batch.
        let gbs_given = self.gbs_given()?;

        if let Param::Given(text) = &schedule {
            return self.schedule_calculator(text, gbs_given, (mbs, dp, m, decrease));
        }

        let gbs = match gbs_given {
            Some(v) => v,
            None => {
                let v = m;
                self.report.explain_with(
                    Output::GlobalBatchSize,
                    "global_batch_size defaults to micro_batch_size × data_parallel_size (one microbatch)",
                    || format!("global_batch_size = {mbs} × {dp} = {v}"),
                );
                v
            }
        };

        if let Param::Given(text) = &ramp {
            let text = text.clone();
            let sched = self.parse_ramp(&text, gbs, m)?;
            return Some(Calculator {
                sched,
                mbs,
                dp,
                dp_rep: dp,
                m,
                decrease,
                gbs_arg: Some(gbs),
            });
        }

        // ConstantNumMicroBatchesCalculator.
        if !self.constant(gbs, mbs, dp, m, decrease) {
            return None;
        }
        Some(Calculator {
            sched: Sched::Constant { gbs },
            mbs,
            dp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: Some(gbs),
        })
    }

    /// The release's own switches: HEAD ignores the ramp-up (a warning), 0.16.1 has no schedule
    /// (an error); `(ramp, schedule)` as the release reads them.
    fn release_switches(&mut self) -> (Param<String>, Param<String>) {
        let i = self.inputs.clone();
        let head = self.version == Version::Head;
        let mut ramp = i.rampup_batch_size.clone();
        let mut schedule = i.step_batch_size_schedule.clone();
        if head && matches!(ramp, Param::Given(_)) {
            self.report.diag(
                Field::RampupBatchSize,
                Level::Warning,
                "Megatron-LM HEAD ignores it and only warns: \u{201c}rampup_batch_size is deprecated and will be \
                 removed in a future release. Use step_batch_size_schedule instead.\u{201d} The run uses the step \
                 schedule if one is given, else a constant global batch; for a ramp, write it as a step_batch_size_schedule.",
            );
            ramp = Param::Absent;
        }
        if !head && matches!(schedule, Param::Given(_)) {
            self.report.diag(
                Field::StepBatchSizeSchedule,
                Level::Error,
                "megatron-core 0.16.1 has no step batch-size schedule (it came with Megatron-LM #4411, when \
                 --rampup-batch-size was deprecated): its Megatron-LM does not accept \
                 --step-batch-size-schedule. Choose version head, or use rampup_batch_size.",
            );
            schedule = Param::Absent;
        }
        (ramp, schedule)
    }

    /// HEAD's `StepBatchsizeNumMicroBatchesCalculator`: refused beside a global batch or
    /// `decrease_batch_size_if_needed`, then the schedule parsed.
    fn schedule_calculator(
        &mut self,
        text: &str,
        gbs_given: Option<u128>,
        (mbs, dp, m, decrease): (u128, u128, u128, bool),
    ) -> Option<Calculator> {
        if gbs_given.is_some() {
            self.report.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "Megatron-LM refuses it together with a schedule",
                    "ValueError: Cannot specify both --step-batch-size-schedule and --global-batch-size",
                )
                .fix(
                    "Remove global_batch_size: the schedule's last batch size is the global batch.",
                ),
            );
            return None;
        }
        if decrease {
            self.report.refuse(
                Field::DecreaseBatchSizeIfNeeded,
                Refusal::new(
                    "Megatron-LM refuses it together with a schedule",
                    "ValueError: Cannot specify both --step-batch-size-schedule and \
                     --decrease-batch-size-if-needed",
                )
                .fix(
                    "Make every batch size in the schedule a multiple of micro_batch_size × \
                     data_parallel_size instead.",
                ),
            );
            return None;
        }
        let levels = self.parse_schedule(text)?;
        Some(Calculator {
            sched: Sched::Step { levels },
            mbs,
            dp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: None,
        })
    }

    /// 0.19.2: validate_args' batch checks (the eval batch first), then the calculator
    /// `global_vars.set_global_variables` builds (no ramp-up: it is parsed and never passed on).
    pub(super) fn calculator_0192(&mut self, g: DataParallel, mbs: u64) -> Option<Calculator> {
        let i = self.inputs.clone();
        let mbs = mbs as u128;
        let (dp, gtp) = (g.dp, g.gtp);
        let cdp = dp.checked_mul(gtp)?;
        let m = mbs.checked_mul(cdp)?;
        let decrease = i.decrease_batch_size_if_needed.or(false)?;
        let ramp_ok = self.ramp_ignored();
        let schedule = i.step_batch_size_schedule.clone();
        if schedule == Param::Invalid || !ramp_ok {
            return None;
        }
        let gbs_given = self.gbs_given()?;
        if matches!(schedule, Param::Given(_)) && gbs_given.is_some() {
            self.report.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "Megatron-LM's validate_args refuses it together with a schedule (even at its default value)",
                    "ValueError: Cannot specify both --step-batch-size-schedule and --global-batch-size",
                )
                .fix("Remove global_batch_size: the schedule gives the batch at every step."),
            );
            return None;
        }
        let gbs = match gbs_given {
            Some(v) => v,
            None => {
                let v = mbs.checked_mul(dp)?;
                let rule = if matches!(schedule, Param::Given(_)) {
                    "global_batch_size defaults to micro_batch_size × data_parallel_size, also with a schedule \
                     (then it is not a batch the run trains: it is the default eval batch and the unit of \
                     iteration-based warmup and decay)"
                } else {
                    "global_batch_size defaults to micro_batch_size × data_parallel_size (one microbatch)"
                };
                self.report.explain_with(Output::GlobalBatchSize, rule, || {
                    format!("global_batch_size = {mbs} × {dp} = {v}")
                });
                v
            }
        };
        if !self.eval_batch(gbs, mbs, dp, decrease) {
            return None;
        }
        if let Param::Given(text) = &schedule {
            return self.schedule_calculator_0192(text, gbs, (mbs, dp, cdp, m, decrease));
        }
        if !self.constant(gbs, mbs, cdp, m, decrease) {
            return None;
        }
        Some(Calculator {
            sched: Sched::Constant { gbs },
            mbs,
            dp: cdp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: Some(gbs),
        })
    }

    /// 0.19.2's schedule: refused beside `decrease_batch_size_if_needed`, `seq_length` required
    /// (the thresholds are tokens), then parsed.
    fn schedule_calculator_0192(
        &mut self,
        text: &str,
        gbs: u128,
        (mbs, dp, cdp, m, decrease): (u128, u128, u128, u128, bool),
    ) -> Option<Calculator> {
        if decrease {
            self.report.refuse(
                Field::DecreaseBatchSizeIfNeeded,
                Refusal::new(
                    "megatron-core's _build_num_microbatches_calculator refuses it together with a schedule",
                    "ValueError: Cannot specify both --step-batch-size-schedule and \
                     --decrease-batch-size-if-needed",
                )
                .fix(
                    "Make every batch size in the schedule a multiple of micro_batch_size × \
                     data_parallel_size instead.",
                ),
            );
            return None;
        }
        if !self.inputs.seq_length.is_given() {
            if self.inputs.seq_length == Param::Absent {
                self.report.refuse(
                    Field::SeqLength,
                    Refusal::new(
                        "Megatron-LM's validate_args stops with a bare AssertionError at",
                        "assert args.encoder_seq_length is not None",
                    )
                    .fix("Give seq_length: Megatron-LM requires it, and the schedule's thresholds are \
                          tokens (threshold // seq_length samples)."),
                );
            }
            return None;
        }
        let levels = self.parse_schedule(text)?;
        Some(Calculator {
            sched: Sched::Step { levels },
            mbs,
            dp: cdp,
            dp_rep: dp,
            m,
            decrease,
            gbs_arg: Some(gbs),
        })
    }

    /// validate_args: `--global-batch-size`, when given, must be positive.
    pub(super) fn gbs_given(&mut self) -> Option<Option<u128>> {
        match self.inputs.global_batch_size {
            Param::Given(v) if v <= 0 => {
                self.report.refuse(
                    Field::GlobalBatchSize,
                    Refusal::new(
                        "Megatron's validate_args stops with a bare AssertionError at",
                        "assert args.global_batch_size > 0",
                    )
                    .fix(format!("(got {v}). global_batch_size must be positive.")),
                );
                None
            }
            Param::Given(v) => Some(Some(v as u128)),
            Param::Absent => Some(None),
            Param::Invalid => None,
        }
    }

    /// 0.19.2: `--rampup-batch-size` is still an argparse flag (`nargs=3, type=int`), and
    /// nothing reads it. Whether argparse accepts it.
    pub(super) fn ramp_ignored(&mut self) -> bool {
        let Param::Given(text) = self.inputs.rampup_batch_size.clone() else {
            return self.inputs.rampup_batch_size != Param::Invalid;
        };
        let f = Field::RampupBatchSize;
        let body = text.trim().trim_start_matches('[').trim_end_matches(']');
        let tokens: Vec<&str> = body
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .collect();
        let by = "Megatron-LM's argument parser stops (it still reads three whole numbers)";
        if tokens.len() < 3 {
            self.report.refuse(
                f,
                Refusal::new(by, "argument --rampup-batch-size: expected 3 arguments").fix(
                    "Megatron-LM 0.19.2 ignores the ramp-up anyway: remove rampup_batch_size, or use \
                     step_batch_size_schedule.",
                ),
            );
            return false;
        }
        if tokens.len() > 3 {
            self.report.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "unrecognized arguments: {}",
                        crate::calc::parse::shorten(&tokens[3..].join(" "))
                    ),
                )
                .fix("Give three numbers, or remove rampup_batch_size (0.19.2 ignores it)."),
            );
            return false;
        }
        if let Some(t) = tokens.iter().find(|t| python_int(t).is_none()) {
            self.report.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "argument --rampup-batch-size: invalid int value: '{}'",
                        crate::calc::parse::shorten(t)
                    ),
                )
                .fix("Give three whole numbers, or remove rampup_batch_size (0.19.2 ignores it)."),
            );
            return false;
        }
        // measured (command megatron19-27, cases gpt3_175b_128gpus_rampup, rampup_samples): the
        // calculator is ConstantNumMicroBatchesCalculator and nothing is printed
        let then = if matches!(self.inputs.step_batch_size_schedule, Param::Given(_)) {
            "the step schedule sets the batch"
        } else {
            "there is no ramp-up: every step trains the full global_batch_size from the first \
             sample (ConstantNumMicroBatchesCalculator), and train_iters and the warmup count that batch"
        };
        self.report.diag(
            f,
            Level::Warning,
            format!(
                "Megatron-LM 0.19.2 parses --rampup-batch-size and ignores it, without a message \
                 (global_vars.set_global_variables no longer passes it to the calculator). Instead, {then}. \
                 For a ramp, write it as a step_batch_size_schedule (or choose release 0.16.1)."
            ),
        );
        true
    }

    /// 0.19.2's validate_args: `eval_global_batch_size % (eval_micro_batch_size ×
    /// data_parallel_size) == 0`, defaults the training batch's; before the calculator.
    pub(super) fn eval_batch(&mut self, gbs: u128, mbs: u128, dp: u128, decrease: bool) -> bool {
        let i = self.inputs.clone();
        let eg = match i.eval_global_batch_size {
            Param::Given(v) => v as i128,
            Param::Absent => gbs as i128,
            Param::Invalid => return false,
        };
        let em = match i.eval_micro_batch_size {
            Param::Given(v) => v as i128,
            Param::Absent => mbs as i128,
            Param::Invalid => return false,
        };
        let Some(div) = em.checked_mul(dp as i128) else {
            return false;
        };
        let by = "Megatron-LM refuses this in validate_args, before the microbatch calculator";
        if div == 0 {
            self.report.refuse(
                Field::EvalMicroBatchSize,
                Refusal::new(by, "ZeroDivisionError: integer modulo by zero")
                    .fix("eval_micro_batch_size must not be 0 (unset, it is micro_batch_size)."),
            );
            return false;
        }
        if eg % div == 0 {
            return true;
        }
        let field = if i.eval_global_batch_size.is_given() {
            Field::EvalGlobalBatchSize
        } else if i.eval_micro_batch_size.is_given() {
            Field::EvalMicroBatchSize
        } else {
            Field::GlobalBatchSize
        };
        let d = div.unsigned_abs();
        let near = nearest_multiples(eg.unsigned_abs(), d);
        let fix = if i.eval_global_batch_size.is_given() {
            format!(
                "Nearest valid eval_global_batch_size: {near} (multiples of {em} × {dp} = {d})."
            )
        } else if decrease {
            format!(
                "eval_global_batch_size defaults to global_batch_size {eg}, and this check runs before \
                 decrease_batch_size_if_needed can round the training batch: give eval_global_batch_size \
                 (a multiple of {em} × {dp} = {d}, e.g. {}), or a global batch of {near}.",
                (eg.unsigned_abs() / d * d).max(d)
            )
        } else {
            format!(
                "eval_global_batch_size defaults to global_batch_size ({eg}) and eval_micro_batch_size to \
                 micro_batch_size, so the global batch must be a multiple of {em} × {dp} = {d}: nearest {near}."
            )
        };
        self.report.refuse(
            field,
            Refusal::new(
                by,
                format!(
                    "AssertionError: eval_global_batch_size ({eg}) must be divisible by eval_micro_batch_size \
                     ({em}) * data_parallel_size ({dp})"
                ),
            )
            .fix(fix),
        );
        false
    }

    /// `ConstantNumMicroBatchesCalculator.__init__` (with `decrease_batch_size_if_needed`):
    /// whether megatron-core accepts the global batch.
    pub(super) fn constant(
        &mut self,
        gbs: u128,
        mbs: u128,
        dp: u128,
        m: u128,
        decrease: bool,
    ) -> bool {
        if decrease {
            let running = gbs / m * m;
            if running / m < 1 {
                self.report.refuse(
                    Field::GlobalBatchSize,
                    Refusal::new(
                        "megatron-core refuses it",
                        "AssertionError: number of microbatches should be at least 1, got 0.",
                    )
                    .fix(format!(
                        "decrease_batch_size_if_needed rounds global_batch_size {gbs} down to a multiple of \
                         micro_batch_size × data_parallel_size = {mbs} × {dp} = {m}, which is 0. \
                         Use a global batch of at least {m}."
                    )),
                );
                return false;
            }
            if running != gbs {
                self.report.diag(
                    Field::DecreaseBatchSizeIfNeeded,
                    Level::Warning,
                    format!(
                        "Megatron decreases the batch: each step trains {running} samples, not global_batch_size \
                         {gbs} (rounded down to a multiple of micro_batch_size × data_parallel_size = {m})."
                    ),
                );
            }
        } else if gbs % m != 0 {
            self.report.refuse(
                Field::GlobalBatchSize,
                Refusal::new(
                    "megatron-core refuses it",
                    format!(
                        "AssertionError: global batch size ({gbs}) is not divisible by micro batch size \
                         ({mbs}) times data parallel size ({dp})"
                    ),
                )
                .fix(format!(
                    "Nearest valid global_batch_size: {} (multiples of {mbs} × {dp} = {m}); or set \
                     decrease_batch_size_if_needed to train {} per step.",
                    nearest_multiples(gbs, m),
                    gbs / m * m
                )),
            );
            return false;
        }
        true
    }

    /// `_build_num_microbatches_calculator` and `RampupBatchsizeNumMicroBatchesCalculator.__init__`
    /// (0.16.1), in their order of assertions.
    pub(super) fn parse_ramp(&mut self, text: &str, gbs: u128, m: u128) -> Option<Sched> {
        let f = Field::RampupBatchSize;
        let refuse = refuse_ramp;
        let [start, inc, samples] = self.ramp_values(text, m)?;
        let (start, inc, samples) = (start as u128, inc as u128, samples as u128);
        let num_inc = self.ramp_increments(start, inc, gbs)?;
        if samples >= EXACT_FLOAT || num_inc >= EXACT_FLOAT {
            self.report.diag(
                f,
                Level::Error,
                "dpcalc follows ramp-ups of fewer than 2^53 samples only (beyond that Python's float steps are \
                 not reproduced exactly)",
            );
            return None;
        }
        let per = samples as f64 / num_inc as f64;
        if per == 0.0 {
            refuse(
                self.report,
                "ZeroDivisionError: float division by zero".into(),
                "With 0 ramp-up samples, rampup_samples_per_increment is 0.0 and the first update divides by it. \
                 Give at least 1 ramp-up sample, or remove rampup_batch_size.",
            );
            return None;
        }
        self.report
            .set(Output::RampupSamplesPerIncrement, Num::Float(per));
        self.report.explain_with(
            Output::RampupSamplesPerIncrement,
            "rampup_samples_per_increment = ramp-up samples / ((global_batch_size − start) // increment)",
            || format!(
                "rampup_samples_per_increment = {samples} / (({gbs} − {start}) // {inc}) = {samples} / {num_inc} = {}",
                num::float_repr(per)
            ),
        );
        Some(Sched::Ramp {
            start,
            inc,
            samples,
            per,
            gbs,
        })
    }

    /// The three values of `--rampup-batch-size` read as Python's `int()` reads them, and the
    /// signs `_build_num_microbatches_calculator` asserts.
    fn ramp_values(&mut self, text: &str, m: u128) -> Option<[i128; 3]> {
        let f = Field::RampupBatchSize;
        let refuse = refuse_ramp;
        let body = text.trim().trim_start_matches('[').trim_end_matches(']');
        let tokens: Vec<&str> = body
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.len() != 3 {
            refuse(
                self.report,
                "AssertionError: expected the following format: --rampup-batch-size <start batch size> \
                 <batch size incerement> <ramp-up samples>"
                    .into(),
                &format!(
                    "Give three whole numbers, e.g. \u{201c}{} {} 100000\u{201d} (got {}).",
                    m,
                    m,
                    tokens.len()
                ),
            );
            return None;
        }
        let mut v = [0i128; 3];
        for (k, t) in tokens.iter().enumerate() {
            match python_int(t) {
                Some(x) => v[k] = x,
                None => {
                    self.report.refuse(
                        f,
                        Refusal::new(
                            "Megatron reads each value with int() and stops with",
                            "ValueError: invalid literal for int() with base 10",
                        )
                        .fix(format!(
                            "rampup_batch_size: \u{201c}{}\u{201d} is not a whole number.",
                            crate::calc::parse::shorten(t)
                        )),
                    );
                    return None;
                }
            }
        }
        let [start, inc, samples] = v;
        if start <= 0 {
            refuse(
                self.report,
                format!("AssertionError: start batch size should be positive, got {start}."),
                &format!("Start at a multiple of micro_batch_size × data_parallel_size = {m}."),
            );
            return None;
        }
        if inc <= 0 {
            refuse(
                self.report,
                format!("AssertionError: batch size increment should be positive, got {inc}."),
                &format!("Use an increment that is a multiple of {m}."),
            );
            return None;
        }
        if samples < 0 {
            refuse(
                self.report,
                format!("AssertionError: ramp-up samples should be non-negative, got {samples}."),
                "Give the number of samples over which the batch grows.",
            );
            return None;
        }
        Some(v)
    }

    /// `RampupBatchsizeNumMicroBatchesCalculator.__init__`: the start within the global batch, the
    /// increment dividing the difference; the number of increments.
    fn ramp_increments(&mut self, start: u128, inc: u128, gbs: u128) -> Option<u128> {
        let refuse = refuse_ramp;
        if start > gbs {
            refuse(
                self.report,
                format!(
                    "AssertionError: expected global batch size to be greater than or equal to start batch size, \
                     got {gbs} and {start}"
                ),
                &format!("The start batch must be at most global_batch_size {gbs}."),
            );
            return None;
        }
        let diff = gbs - start;
        if diff % inc != 0 {
            let below = start + diff / inc * inc;
            let above = below + inc;
            refuse(
                self.report,
                format!(
                    "AssertionError: expected global batch size interval ({diff}) to be divisible by global batch \
                     size increment ({inc})"
                ),
                &format!(
                    "Nearest valid global_batch_size for this ramp: {}{above}; or an increment that divides {diff}.",
                    if below > start {
                        format!("{below} or ")
                    } else {
                        String::new()
                    }
                ),
            );
            return None;
        }
        let num_inc = diff / inc;
        if num_inc == 0 {
            refuse(
                self.report,
                "ZeroDivisionError: division by zero".into(),
                &format!(
                    "The ramp starts at the global batch ({gbs}), so it has no increments \
                     (rampup_samples_per_increment = samples / 0). Remove rampup_batch_size, or start below {gbs}."
                ),
            );
            return None;
        }
        Some(num_inc)
    }

    /// HEAD's `_parse_schedule` and `_validate_schedule`.
    pub(super) fn parse_schedule(&mut self, text: &str) -> Option<Vec<(u128, u128)>> {
        let f = Field::StepBatchSizeSchedule;
        let seq = match self.inputs.seq_length {
            Param::Given(0) => {
                self.report.refuse(
                    Field::SeqLength,
                    Refusal::new(
                        "Megatron converts the schedule's token thresholds with threshold // seq_length \
                         and stops with",
                        "ZeroDivisionError: integer division or modulo by zero",
                    )
                    .fix("seq_length must be at least 1."),
                );
                return None;
            }
            Param::Given(s) => Some(s as i128),
            Param::Absent => None,
            Param::Invalid => return None,
        };
        let mut levels = self.schedule_levels(text, seq)?;
        levels.sort_by_key(|l| l.0);
        if !self.schedule_valid(&levels, seq) {
            return None;
        }
        let unit = if seq.is_some() {
            "tokens // seq_length"
        } else {
            "samples"
        };
        self.report.diag(
            f,
            Level::Note,
            format!(
                "Thresholds are read as {unit}; only the batch size in use is checked against micro_batch_size × \
                 data_parallel_size (each iteration, by the training loop)."
            ),
        );
        Some(
            levels
                .into_iter()
                .map(|(t, b)| (t as u128, b as u128))
                .collect(),
        )
    }

    /// `_parse_schedule`: each `THRESHOLD:BATCH_SIZE` entry, thresholds in tokens `// seq_length`
    /// when it is given.
    fn schedule_levels(&mut self, text: &str, seq: Option<i128>) -> Option<Vec<(i128, i128)>> {
        let f = Field::StepBatchSizeSchedule;
        let refuse = refuse_schedule;
        let mut levels: Vec<(i128, i128)> = Vec::new();
        let replaced = text.replace(',', " ");
        for entry in replaced.split_whitespace() {
            let Some((t, b)) = entry.split_once(':') else {
                refuse(
                    self.report,
                    format!(
                        "ValueError: Invalid schedule entry \"{}\". Expected format: \"THRESHOLD:BATCH_SIZE\"",
                        crate::calc::parse::shorten(entry)
                    ),
                    "Write each step as THRESHOLD:BATCH_SIZE, e.g. \u{201c}0:256 100B:512\u{201d}.",
                );
                return None;
            };
            let mut parsed = [0i128; 2];
            for (k, part) in [t, b].iter().enumerate() {
                match schedule_number(part) {
                    Ok(x) => parsed[k] = x,
                    Err(NumParse::Bad(msg)) => {
                        refuse(
                            self.report,
                            msg,
                            "Numbers may have a K, M, B or T suffix (10^3 … 10^12).",
                        );
                        return None;
                    }
                    Err(NumParse::TooLarge) => {
                        self.report.diag(
                            f,
                            Level::Error,
                            format!(
                                "step_batch_size_schedule: \u{201c}{}\u{201d} is too large to count",
                                crate::calc::parse::shorten(part)
                            ),
                        );
                        return None;
                    }
                }
            }
            let [mut threshold, batch] = parsed;
            if let Some(s) = seq {
                // Python's floor division (a negative threshold rounds down).
                threshold = threshold.div_euclid(s);
            }
            levels.push((threshold, batch));
        }
        Some(levels)
    }

    /// `_validate_schedule` on the sorted levels: whether it passes.
    fn schedule_valid(&mut self, levels: &[(i128, i128)], seq: Option<i128>) -> bool {
        let refuse = refuse_schedule;
        if levels.is_empty() {
            refuse(
                self.report,
                "AssertionError: schedule must have at least one entry".into(),
                "Give at least \u{201c}0:BATCH_SIZE\u{201d}.",
            );
            return false;
        }
        if levels[0].0 != 0 {
            refuse(
                self.report,
                format!(
                    "AssertionError: first schedule entry must have threshold 0, got {}",
                    levels[0].0
                ),
                "Start the schedule with \u{201c}0:BATCH_SIZE\u{201d}.",
            );
            return false;
        }
        for w in levels.windows(2) {
            if w[1].0 <= w[0].0 {
                let unit = if seq.is_some() {
                    " (in samples: token thresholds are divided by seq_length)"
                } else {
                    ""
                };
                refuse(
                    self.report,
                    format!(
                        "AssertionError: schedule thresholds must be strictly increasing, got {} before {}",
                        w[0].0, w[1].0
                    ),
                    &format!("Make every threshold larger than the previous one{unit}."),
                );
                return false;
            }
        }
        if let Some(&(_, b)) = levels.iter().find(|l| l.1 <= 0) {
            refuse(
                self.report,
                format!("AssertionError: batch size must be positive, got {b}"),
                "Every batch size must be at least 1.",
            );
            return false;
        }
        true
    }

    pub(super) fn batch_outputs(&mut self, p: &Calculator) {
        let fin = p.sched.final_gbs();
        let running = p.running(fin);
        let new = self.version == Version::Core0192;
        self.global_batch_output(p, fin, new);
        self.running_outputs(p, fin, running);
        if !p.sched.varying() {
            return;
        }
        self.varying_outputs(p, fin, new);
    }

    /// `global_batch_size` as Megatron's args hold it (at HEAD a schedule leaves it unset: the last
    /// size), explained by its calculator.
    fn global_batch_output(&mut self, p: &Calculator, fin: u128, new: bool) {
        // args.global_batch_size: at HEAD a schedule leaves it unset (dpcalc shows the last size)
        let shown = p.gbs_arg.unwrap_or(fin);
        self.report
            .set(Output::GlobalBatchSize, Num::Int(shown as i128));
        match &p.sched {
            Sched::Constant { .. } => {
                if p.gbs_arg.is_some() && self.inputs.global_batch_size.is_given() {
                    self.report.explain_with(
                        Output::GlobalBatchSize,
                        "global_batch_size (as given)",
                        || format!("global_batch_size = {fin}"),
                    );
                }
            }
            Sched::Ramp { start, inc, .. } => self.report.explain_with(
                Output::GlobalBatchSize,
                "the ramp-up grows the batch from its start to global_batch_size",
                || format!("global batch: {start} + k × {inc} … {fin}"),
            ),
            Sched::Step { levels } => self.report.explain_with(
                if new {
                    Output::RunningGlobalBatchSize
                } else {
                    Output::GlobalBatchSize
                },
                if new {
                    "with a schedule, the batch each step trains follows it; at the full batch it is the last size"
                } else {
                    "with a schedule, the global batch is its last batch size"
                },
                || format!(
                    "global batch: {}",
                    levels
                        .iter()
                        .map(|l| l.1.to_string())
                        .collect::<Vec<_>>()
                        .join(" → ")
                ),
            ),
        }
    }

    /// The running batch (after `decrease_batch_size_if_needed`), the microbatches and the
    /// accumulation, published in the plan.
    fn running_outputs(&mut self, p: &Calculator, fin: u128, running: u128) {
        let (mbs, dp, m) = (p.mbs, p.dp, p.m);
        self.report
            .set(Output::RunningGlobalBatchSize, Num::Int(running as i128));
        if p.decrease {
            self.report.explain_with(
                Output::RunningGlobalBatchSize,
                "decrease_batch_size_if_needed: running batch = (global // (micro_batch_size × data_parallel_size)) × (micro_batch_size × data_parallel_size)",
                || format!("running = ({fin} // {m}) × {m} = {running}"),
            );
        } else {
            self.report.explain_with(
                Output::RunningGlobalBatchSize,
                "the running batch is the global batch (no decrease_batch_size_if_needed)",
                || format!("running = {running}"),
            );
        }
        let nm = running / m;
        self.report.plan.publish_batch(mbs, nm, running);
        self.report
            .set(Output::NumMicrobatches, Num::Int(nm as i128));
        self.report.explain_with(
            Output::NumMicrobatches,
            "num_microbatches = running global batch // (micro_batch_size × data_parallel_size)",
            || format!("num_microbatches = {running} // ({mbs} × {dp}) = {nm}"),
        );
        self.report
            .set(Output::GradientAccumulationSteps, Num::Int(nm as i128));
    }

    /// A ramp-up or a schedule: the first batch and microbatches, and the iteration the batch is
    /// full from.
    fn varying_outputs(&mut self, p: &Calculator, fin: u128, new: bool) {
        let m = p.m;
        let b0 = p.sched.current(0);
        let r0 = p.running(b0);
        self.report
            .set(Output::InitialGlobalBatchSize, Num::Int(b0 as i128));
        self.report.explain_with(
            Output::InitialGlobalBatchSize,
            "the global batch after update(0 consumed samples)",
            || format!("initial global batch = {b0}"),
        );
        self.report
            .set(Output::InitialNumMicrobatches, Num::Int((r0 / m) as i128));
        self.report.explain_with(
            Output::InitialNumMicrobatches,
            "num_microbatches at the first step = running batch // (micro_batch_size × data_parallel_size)",
            || format!("initial num_microbatches = {r0} // {m} = {}", r0 / m),
        );
        if r0 / m == 0 && !new {
            let why = if p.decrease {
                "megatron-core accepts this with no error (decrease_batch_size_if_needed rounds it to 0), so the \
                 first steps train no microbatch"
            } else {
                "megatron-core builds it (the first update skips the consistency check), but the training loop's \
                 check at the first iteration fails (see below)"
            };
            let field = match p.sched {
                Sched::Step { .. } => Field::StepBatchSizeSchedule,
                _ => Field::RampupBatchSize,
            };
            self.report.diag(
                field,
                Level::Warning,
                format!(
                    "The first global batch {b0} is smaller than micro_batch_size × data_parallel_size = {m}: \
                     num_microbatches is 0. {why}."
                ),
            );
        }
        // The first iteration (1-based) whose batch is the full batch.
        let mut first = None;
        let res = walk(&p.sched, None, None, |_, cur, done| {
            if cur == fin {
                first = Some(done + 1);
                false
            } else {
                true
            }
        });
        match (res, first) {
            (Ok(_), Some(k)) => {
                self.report
                    .set(Output::FullBatchIteration, Num::Int(k as i128));
                self.report.explain_with(
                    Output::FullBatchIteration,
                    "iterations run with consumed_samples += current global batch until the batch is the full one",
                    || format!("the batch is {fin} from iteration {k} on"),
                );
            }
            _ => self.too_long(p),
        }
    }

    pub(super) fn too_long(&mut self, p: &Calculator) {
        let field = match p.sched {
            Sched::Step { .. } => Field::StepBatchSizeSchedule,
            _ => Field::RampupBatchSize,
        };
        self.report.diag(
            field,
            Level::Warning,
            format!(
                "This batch-size ramp has more than {MAX_SEGMENTS} distinct steps; dpcalc does not follow it to \
                 the end, so the values that need it are not shown."
            ),
        );
    }
}

/// A refusal of megatron-core's ramp-up parsing, at `rampup_batch_size`.
fn refuse_ramp(r: &mut Report, what: String, fix: &str) {
    r.refuse(
        Field::RampupBatchSize,
        Refusal::new("megatron-core refuses this ramp-up", what).fix(fix),
    );
}

/// A refusal of Megatron-LM's schedule parsing, at `step_batch_size_schedule`.
fn refuse_schedule(r: &mut Report, what: String, fix: &str) {
    r.refuse(
        Field::StepBatchSizeSchedule,
        Refusal::new("Megatron-LM refuses this schedule", what).fix(fix),
    );
}
