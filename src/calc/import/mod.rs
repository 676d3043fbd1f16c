//! Config import ("paste anything"): a pasted config becomes form inputs, with every key dpcalc
//! does not read listed and ignored. [`detect_format`] says what a text is; [`read`] is what the
//! page's Import button does; every reader fills one [`Imported`], which
//! [`Imported::merged_into`] applies to the form's inputs.
//!
//! One file per format, each reading the keys the framework's `Spec::import` names (its form's
//! keys, its aliases, its renamed keys):
//! - `detect.rs`: what a text is (which format, which framework's);
//! - `yaml.rs`: flat YAML (axolotl's config: `yaml-rust2`'s event parser, a nested block read as
//!   dotted keys) and nested YAML read as dotted paths (nanotron's `parallelism.dp`, `tokens.…`,
//!   `model.model_config.…`), scalars as PyYAML's `safe_load` reads them;
//! - `json.rs`: a JSON object (DeepSpeed's `ds_config.json`, `serde_json`: `train_batch_size`,
//!   `tensor_parallel.autotp_size`, nested keys by their dotted path, …), and the cluster its
//!   three batch keys fix;
//! - `command_line.rs`: a launch command's `--flags` (Megatron-LM's `--dash-style` flags with
//!   `store_true` flags and `nargs` lists such as `--rampup-batch-size`; HfArgumentParser's
//!   `--under_score` flags, `--flag true`, `--no_flag`), also as a bash script (Megatron's own
//!   examples), read by [`shell`] (bash as bash reads it) for the command it runs: variables, arrays and `$((…))`
//!   expanded, a value it cannot know (`$1`) named once and never taken;
//! - `launcher.rs`: the cluster only ([`Scope::Cluster`]): a launcher line (`torchrun --nnodes 2
//!   --nproc_per_node 8`, `accelerate launch`, `deepspeed --num_nodes`); a launcher before a
//!   Megatron or HF script fills both;
//! - `accelerate.rs`: accelerate's config YAML ([`Scope::Cluster`]): `num_machines`,
//!   `num_processes`, and its `parallelism_config` sizes for a framework that takes them through
//!   accelerate (`Spec::import.accelerate`);
//! - `toml.rs`: TOML tables read as dotted `table.key` paths (torchtitan's job config,
//!   `basic-toml` behind a nesting guard);
//! - `training_arguments.rs`: the Hugging Face Trainer's `TrainingArguments`: its JSON dict, a
//!   `TrainingArguments(...)` call, or its flags (read by `command_line.rs`);
//! - `model_config.rs`: a model's `config.json` ([`model_config`], [`Scope::Model`]);
//! - `trace.rs`: a PyTorch profiler trace of one step (Chrome-trace JSON, [`Scope::Measured`]):
//!   its kernel time by bucket, the measured step and the compute factor;
//! - `leaves.rs`: a nested config's values by their dotted paths (nested YAML, TOML, accelerate's
//!   config), each filled or listed.
//!
//! dpcalc's own export carries what is not a config key in comments, read back here: the
//! launcher line (`# launch: torchrun …`, the cluster) and the training rows (`# num_samples`).
//!
//! Nothing here interprets a value: each is handed to the form as text and the framework module
//! parses it, so a bad value shows its usual message at its field. Hostile input is bounded: the
//! text is capped at [`MAX_INPUT`] bytes; YAML is read as events (iterative, no tree is built and
//! aliases are never expanded, so an alias bomb costs nothing); JSON nesting stops at
//! serde_json's recursion limit (128), TOML nesting at `toml::MAX_TOML_NESTING` before the parser
//! sees it; the lists of unknown keys and errors are capped.

mod accelerate;
mod command_line;
mod detect;
mod json;
mod launcher;
mod leaves;
mod log;
mod model_config;
pub mod shell;
mod toml;
mod trace;
mod training_arguments;
mod words;
mod yaml;

pub use detect::{detect, detect_format, looks_yaml, Format};
pub use log::LogFacts;
pub use model_config::model_config;
pub use trace::{bucket, Bucket, TraceBuckets, MAX_TRACE};

use super::field::{CLUSTER, THROUGHPUT};
use super::num::float_repr;
use super::spec::{Reads, Release};
use super::{parse, Field, Framework, RawInputs};
use launcher::{launcher_flags, split_command};
use words::Unknowns;

/// The largest text accepted (a real config is a few KB).
pub const MAX_INPUT: usize = 256 * 1024;

/// At most this many unknown keys or errors are listed; the rest are counted.
const MAX_LISTED: usize = 100;

/// The longest key listed whole (bytes): real config keys, dotted paths included, are far
/// shorter; a longer one is cut with "…" so a hostile text cannot list megabytes.
const MAX_KEY: usize = 256;

/// What an import replaces when applied ([`Imported::merged_into`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// A framework's config: its inputs replace all of them.
    #[default]
    Config,
    /// A model's config.json: the model preset and every architecture key; the rest is kept.
    Model,
    /// An accelerate config or a launcher line without a config: the cluster shape (nodes, GPUs
    /// per node, world size), and the `parallelism_config` sizes an accelerate config gives
    /// where the form leaves them unset; the rest is kept.
    Cluster,
    /// A training log excerpt: the measured speed it prints (`seconds_per_step` or
    /// `tokens_per_second_per_gpu`, the other cleared, and a typed `calibration_compute_factor`
    /// cleared so the measurement calibrates); the rest is kept. Applied only when what the log
    /// says of its layout matches the link's ([`Imported::settle`]).
    Measured,
}

/// The one sentence for a text that is no config dpcalc reads.
pub const NOT_A_CONFIG: &str = "This does not look like a config: paste an axolotl or nanotron YAML, a DeepSpeed or \
     Hugging Face TrainingArguments JSON, a torchtitan TOML, Megatron-LM or Hugging Face command-line flags, \
     an accelerate config, a torchrun line or a model's config.json.";

/// What a pasted config gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Imported {
    /// The framework the text is for (detected, or the one forced).
    pub framework: Framework,
    /// The fields filled, in the order the text gave them, each at most once.
    pub inputs: Vec<(Field, String)>,
    /// Keys (or flags, as written) that dpcalc does not read; they are ignored.
    pub unknown: Vec<String>,
    /// Why something could not be read, with the line and column where the parser knows them.
    pub errors: Vec<String>,
    /// Keys the framework does not read although configs carry them (an older release's name),
    /// each with what happens to it and what the page uses instead (`Spec::import`'s `renamed`).
    pub warnings: Vec<String>,
    /// What the import replaces: every input, or (a model's config.json, an accelerate config,
    /// a bare launcher line) only its own group of fields.
    pub scope: Scope,
    /// The release the text names (dpcalc's own export says it on its first line), if it is
    /// one of the framework's.
    pub release: Option<&'static Release>,
    /// The text is not well-formed (a YAML, JSON or TOML error): nothing of it is applied, as
    /// what was read before the error may not be what the file means.
    pub malformed: bool,
    /// What the import derived beyond the text's keys, or could not: DeepSpeed's cluster from
    /// its three batch keys (`json::file_cluster`). Shown after the summary.
    pub notes: Vec<String>,
    /// Cluster fields a script filled from the default of a variable not set where dpcalc reads
    /// it (`NNODES=${SLURM_NNODES:-1}`), with the variables' names: the page's own cluster wins
    /// over them ([`Imported::settle`]).
    pub defaulted: Vec<(Field, String)>,
    /// A training log's facts ([`Scope::Measured`]), held against the link's layout.
    pub log: Option<LogFacts>,
    /// A profiler trace's kernel time by bucket ([`Scope::Measured`]); its compute factor is
    /// set against the link's estimate in [`Imported::settle`].
    pub trace: Option<TraceBuckets>,
    more_unknown: usize,
    more_errors: usize,
}

impl Imported {
    fn new(framework: Framework) -> Self {
        Imported {
            framework,
            ..Imported::default()
        }
    }

    /// The inputs as the form holds them.
    pub fn raw(&self) -> RawInputs {
        RawInputs::from_pairs(self.inputs.iter().map(|(f, v)| (*f, v.as_str())))
    }

    /// What the import did, in one sentence (the page shows it after a successful import).
    pub fn summary(&self) -> String {
        let (n, name) = (self.inputs.len(), self.framework.name());
        if !self.applicable() {
            let said = if self.scope == Scope::Measured {
                "Nothing was applied: the log is not this link's run, or its speed could not be read (see the error); the form and the results are unchanged."
            } else if self.malformed {
                "Nothing was applied: the text is not well-formed (see the error); the form and the results are unchanged."
            } else {
                "Nothing was applied: no setting could be read; the form and the results are unchanged."
            };
            return std::iter::once(said.to_string())
                .chain(self.notes.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ");
        }
        let unread = if self.errors.is_empty() {
            String::new()
        } else {
            format!(
                " {} could not be read and {} left empty (see below); the results are this paste's.",
                self.errors.len(),
                if self.errors.len() == 1 { "is" } else { "are" }
            )
        };
        let said = match self.scope {
            Scope::Config => match self.release {
                Some(r) => format!(
                    "Read as {name} {} (the release the config names): {n} setting(s) filled in.{unread}",
                    r.id
                ),
                None => format!("Read as {name}: {n} setting(s) filled in.{unread}"),
            },
            Scope::Model => format!(
                "Read a model config.json: {n} architecture key(s) filled in for {name}; the other inputs are kept.{unread}"
            ),
            Scope::Cluster if self.inputs.iter().any(|(f, _)| !CLUSTER.contains(f)) => format!(
                "Read the cluster and accelerate's parallelism_config: {n} setting(s) filled in for {name} (a parallel \
                 size the form already holds is kept, as the framework's own setting wins); the other inputs are kept.{unread}"
            ),
            Scope::Cluster => format!(
                "Read the cluster: {n} setting(s) filled in for {name}; the other inputs are kept.{unread}"
            ),
            Scope::Measured if self.trace.is_some() => format!(
                "Read {}; the other inputs are kept. It calibrates the step time (seconds_per_step; calibration_compute_factor from its compute kernels).",
                self.log.as_ref().map_or("", |l| l.read.as_str())
            ),
            Scope::Measured => format!(
                "Read a {name} training log: {}; the other inputs are kept. With the model and the GPU it calibrates the step time (calibration_compute_factor).",
                self.log.as_ref().map_or("", |l| l.read.as_str())
            ),
        };
        std::iter::once(said)
            .chain(self.notes.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The text of `field`, if the config gave it.
    pub fn get(&self, field: Field) -> Option<&str> {
        self.inputs
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }

    /// What happens to `key`, a key the framework no longer reads (`Spec::import`'s `renamed`;
    /// a flag's dashes read as underscores).
    fn renamed(&self, key: &str) -> Option<&'static str> {
        let name = key.trim_start_matches('-').replace('-', "_");
        self.framework
            .spec()
            .import
            .as_ref()
            .and_then(|i| (i.renamed)(&name))
    }

    fn unknown(&mut self, key: impl Into<String>) {
        let key = printable(key.into());
        if let Some(what) = self.renamed(&key) {
            if self.warnings.len() < MAX_LISTED {
                self.warnings.push(format!("{key}: {what}"));
            }
            return;
        }
        if self.unknown.len() < MAX_LISTED {
            // whole, as the config writes it (the page and `data-import-ignored` carry it so);
            // only a key longer than any real one is cut, so a hostile text stays bounded
            self.unknown.push(if key.len() > MAX_KEY {
                let mut end = MAX_KEY;
                while !key.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}\u{2026}", &key[..end])
            } else {
                key
            });
        } else {
            self.more_unknown += 1;
        }
    }

    /// A warning: a setting the framework reads otherwise than the page can apply, at its key.
    fn warning(&mut self, message: impl Into<String>) {
        if self.warnings.len() < MAX_LISTED {
            self.warnings.push(printable(message.into()));
        }
    }

    /// An error that makes the whole text unusable (see [`Imported::malformed`]).
    fn malformed(&mut self, message: impl Into<String>) {
        self.malformed = true;
        self.error(message);
    }

    /// Whether the page applies it: something was read and the text is well-formed. A value
    /// that could not be read (DeepSpeed's `"auto"`, a key given twice) leaves only its field
    /// empty; the rest is applied and the errors say what was not.
    pub fn applicable(&self) -> bool {
        !self.malformed && !self.inputs.is_empty()
    }

    /// Whether the text was taken for a config at all (a text that is none gets only
    /// [`NOT_A_CONFIG`]).
    pub fn is_config(&self) -> bool {
        !(self.inputs.is_empty() && self.errors.len() == 1 && self.errors[0] == NOT_A_CONFIG)
    }

    fn error(&mut self, message: impl Into<String>) {
        if self.errors.len() < MAX_LISTED {
            self.errors.push(printable(message.into()));
        } else {
            self.more_errors += 1;
        }
    }

    /// Records a value; a key given twice is an error and neither value is taken (the framework
    /// would keep the last one silently, and dpcalc never picks one for the user).
    fn input(&mut self, field: Field, value: String, seen: &mut Vec<(Field, String)>, at: &str) {
        if let Some((_, first)) = seen.iter().find(|(f, _)| *f == field) {
            let first = first.clone();
            self.inputs.retain(|(f, _)| *f != field);
            self.error(format!(
                "{}: {} is given again (first {first}); the field is left empty, keep one",
                at,
                field.key()
            ));
            return;
        }
        seen.push((field, at.to_string()));
        self.inputs.push((field, value));
    }

    fn finish(mut self) -> Self {
        if self.more_unknown > 0 {
            let more = std::mem::take(&mut self.more_unknown);
            self.unknown.push(format!("\u{2026} and {more} more"));
        }
        if self.more_errors > 0 {
            let more = std::mem::take(&mut self.more_errors);
            self.errors.push(format!("\u{2026} and {more} more errors"));
        }
        self
    }

    /// Settles the cluster values a script took from the default of an unset variable
    /// ([`Imported::defaulted`]) against the cluster the page already has (`current`): where
    /// the page gives the field, its value is kept (and a note says so); elsewhere the default
    /// stays, as the note [`Imported::notes`] on the default says. The page's Import and
    /// `dpcalc check` call it before [`Imported::merged_into`].
    pub fn settle(&mut self, current: &RawInputs) {
        self.check_log(current);
        self.trace_factor(current);
        for (field, names) in std::mem::take(&mut self.defaulted) {
            let page = current.get(field).trim();
            if page.is_empty() || current.conflict(field).is_some() {
                continue;
            }
            let Some((_, value)) = self.inputs.iter_mut().find(|(f, _)| *f == field) else {
                continue;
            };
            if value.as_str() == page {
                continue;
            }
            self.notes.push(format!(
                "{}: the {} already given is kept rather than {}, the default of {}.",
                field.key(),
                printable(parse::shorten(page)),
                printable(parse::shorten(value)),
                names
            ));
            *value = page.to_string();
        }
    }

    /// A training log whose global batch or last step is not the link's is another run: it is
    /// said, and nothing is applied (a measured speed calibrates only its own layout).
    fn check_log(&mut self, current: &RawInputs) {
        let Some(facts) = self.log.clone() else {
            return;
        };
        let fw = self.framework;
        let report = fw.compute_rules(fw.default_release().id, current);
        let mut differs = Vec::new();
        if let (Some((lo, hi)), Some(link)) = (
            facts.global_batch,
            report.positive(super::Output::GlobalBatchSize),
        ) {
            if !(lo..=hi).contains(&link) {
                let b = if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                };
                differs.push(format!("its global batch is {b}, the link's {link}"));
            }
        }
        if let (Some(step), Some(max)) = (facts.last_step, report.positive(super::Output::MaxSteps))
        {
            if step > max {
                differs.push(format!(
                    "it shows step {step}, beyond the link's {max} steps"
                ));
            }
        }
        if !differs.is_empty() {
            self.inputs.clear();
            self.error(format!(
                "This log is of another run than the link's: {}. A measured speed calibrates only its own layout; give the link that run's settings, then paste the log.",
                differs.join("; ")
            ));
        }
    }

    /// A profiler trace's compute factor: its compute kernels' time (matrix products, attention,
    /// other) over the link's own uncalibrated estimate of the step's compute, as a typed
    /// `calibration_compute_factor` beside the trace's measured step (whose own fit the page then
    /// shows as a hint when it differs: the exposed communication and the idle time). Without
    /// the model or the GPU only the measured step is applied, and a note says so.
    fn trace_factor(&mut self, current: &RawInputs) {
        let Some(t) = self.trace else {
            return;
        };
        let fw = self.framework;
        let mut plain = current.clone();
        for f in MEASURED {
            plain.set(f, "");
        }
        let report = fw.compute(fw.default_release().id, &plain);
        let Some(compute) = report
            .estimated
            .step
            .map(|s| s.compute)
            .filter(|c| *c > 0.0)
        else {
            self.notes.push("The trace's compute factor needs the link's step-time estimate (a model, the GPU, a sequence length): only its measured step (seconds_per_step) is applied.".into());
            return;
        };
        let k = t.compute() / compute;
        let (lo, hi) = super::plan::CALIBRATION_BOUNDS;
        if (lo..=hi).contains(&k) {
            let k = (k * 1000.0).round() / 1000.0;
            self.inputs
                .push((Field::CalibrationComputeFactor, super::num::float_repr(k)));
        } else {
            self.notes.push(format!(
                "The trace's compute kernels take {:.1} ms, {k:.2} × the link's estimate of {:.1} ms: beyond {lo}–{hi}, the trace is not this link's step (another model, layout or GPU); only its measured step is applied.",
                t.compute() * 1e3,
                compute * 1e3
            ));
        }
    }

    /// The inputs after an import: a config replaces them; a model config replaces only the
    /// model (its preset key and every architecture key), a cluster import only the cluster
    /// shape, and both keep the rest.
    /// A cluster value from the default of an unset variable ([`Imported::defaulted`]) gives way
    /// to the page's own.
    pub fn merged_into(&self, current: &RawInputs) -> RawInputs {
        let spec = self.framework.spec();
        let mut raw = current.clone();
        let page_wins = |mut raw: RawInputs| {
            for (f, _) in &self.defaulted {
                if current.is_given(*f) && current.conflict(*f).is_none() {
                    raw.set(*f, current.get(*f).trim());
                }
            }
            raw
        };
        match self.scope {
            Scope::Config => return page_wins(self.raw()),
            Scope::Cluster => {
                for &f in CLUSTER {
                    raw.set(f, "");
                }
                for (f, v) in &self.inputs {
                    // accelerate's parallelism_config sizes fill only what the framework's own
                    // config leaves unset: ParallelismConfig reads the environment for a size
                    // the program did not give
                    if CLUSTER.contains(f) || current.get(*f).trim().is_empty() {
                        raw.set(*f, v.as_str());
                    }
                }
                return page_wins(raw);
            }
            Scope::Measured => {
                for f in MEASURED {
                    raw.set(f, "");
                }
                for (f, v) in &self.inputs {
                    raw.set(*f, v.as_str());
                }
                return raw;
            }
            Scope::Model => {}
        }
        raw.set(spec.fit.model_key, "");
        for f in self.framework.fields() {
            let key = f
                .key()
                .strip_prefix("model.model_config.")
                .unwrap_or(f.key());
            if super::parse::model::is_architecture_key(key) {
                raw.set(f, "");
            }
        }
        for (f, v) in &self.inputs {
            raw.set(*f, v.as_str());
        }
        raw
    }
}

/// What a measured import replaces: the measured speed of the link's layout and the typed
/// factors (so that the measurement calibrates).
const MEASURED: [Field; 4] = [
    Field::SecondsPerStep,
    Field::TokensPerSecondPerGpu,
    Field::CalibrationComputeFactor,
    Field::CalibrationCommFactor,
];

/// A key or message quoting the text, with each control character (NUL, ESC, a line break
/// inside a quoted key) as U+FFFD: it is shown on one line, on a terminal too (`dpcalc check`).
fn printable(text: String) -> String {
    if text.contains(char::is_control) {
        text.chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect()
    } else {
        text
    }
}

/// The frameworks whose configs can be pasted, in registry order.
pub fn importable() -> impl Iterator<Item = Framework> {
    Framework::ALL
        .iter()
        .copied()
        .filter(|f| f.spec().import.is_some())
}

/// The framework whose configs are read in `reads` (the first in the registry).
fn reading(reads: Reads) -> Option<Framework> {
    importable().find(|f| f.spec().import.as_ref().map(|i| i.reads) == Some(reads))
}

/// What a pasted config of `framework` is called ("an axolotl YAML").
pub fn format_name(framework: Framework) -> Option<String> {
    let noun = match framework.spec().import.as_ref()?.reads {
        Reads::Yaml | Reads::YamlNested => "YAML",
        Reads::Json => "JSON",
        Reads::CommandLine => "command line",
        Reads::Toml => "TOML",
        Reads::TrainingArguments => "TrainingArguments (flags, JSON or Python)",
    };
    let name = framework.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    Some(format!("{article} {name} {noun}"))
}

/// Reads a pasted text, detecting its format with [`detect_format`]: a cluster-only text fills
/// the cluster of the registry's first framework; a text that is no config gets
/// [`NOT_A_CONFIG`].
pub fn import(text: &str) -> Imported {
    read(importable().next().unwrap_or_default(), None, text)
}

/// What the page's Import button does, with the `current` framework and the one `forced` by
/// "Read as" (if any): a model's config.json fills the model of that framework; an accelerate
/// config or a bare launcher line fills its cluster; any other config is read in the forced
/// framework's format, or in the detected one's.
pub fn read(current: Framework, forced: Option<Framework>, text: &str) -> Imported {
    if let Some(refused) = binary(forced.unwrap_or(current), text) {
        return refused;
    }
    if let Some(m) = model_config(forced.unwrap_or(current), text) {
        return m;
    }
    // a profiler trace, like a training log, is the current link's run
    if trace::looks(text) {
        return import_as(current, text);
    }
    // a training log is the current link's run, whatever "Read as" says
    if let Format::Log(_) = detect_format(text) {
        return import_as(current, text);
    }
    if let Some(fw) = forced {
        return import_as(fw, text);
    }
    let got = match detect_format(text) {
        Format::Config(fw) => import_as(fw, text),
        Format::Cluster | Format::Log(_) => import_as(current, text),
        Format::Unknown => Imported::new(current),
    };
    // nothing read, nothing listed, nothing wrong: not a config (and the form is kept)
    if got.inputs.is_empty() && got.unknown.is_empty() && got.errors.is_empty() {
        let mut out = Imported::new(current);
        out.error(NOT_A_CONFIG);
        return out;
    }
    got
}

/// Reads a pasted config in `framework`'s format (its `Spec::import`); an accelerate config or a
/// launcher line without a config fills `framework`'s cluster ([`Scope::Cluster`]). A framework
/// whose configs are not read gives an error saying which formats are.
pub fn import_as(framework: Framework, text: &str) -> Imported {
    let mut out = Imported::new(framework);
    if trace::looks(text) && binary(framework, text).is_none() {
        return import_trace(out, text);
    }
    if text.len() > MAX_INPUT {
        out.error(format!(
            "the text is {} KB; at most {} KB is read (a config is a few KB)",
            text.len() / 1024,
            MAX_INPUT / 1024
        ));
        return out;
    }
    if let Some(refused) = binary(framework, text) {
        return refused;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    out.release = named_release(framework, text);
    let reads = framework.spec().import.as_ref().map(|i| i.reads);
    if let Some(kind) = log::kind(text) {
        out.scope = Scope::Measured;
        if framework.spec().import.as_ref().and_then(|i| i.log) == Some(kind) {
            log::read(kind, text, &mut out);
        } else {
            let whose: Vec<&str> = importable()
                .filter(|f| f.spec().import.as_ref().and_then(|i| i.log) == Some(kind))
                .map(|f| f.name())
                .collect();
            out.error(format!(
                "This is a training log of {}; the link is {}'s. A measured speed calibrates only the run it comes from.",
                whose.join(" or "),
                framework.name()
            ));
        }
        return out.finish();
    }
    if reads.is_some() && detect_format(text) == Format::Cluster {
        out.scope = Scope::Cluster;
        if detect::looks_yaml(text) {
            accelerate::config(text, &mut out);
        } else {
            command_line::read(text, &mut out);
        }
        return out.finish();
    }
    match reads {
        Some(Reads::Yaml) => yaml::read(text, &mut out),
        Some(Reads::YamlNested) => yaml::read_nested(text, &mut out),
        Some(Reads::Json) => {
            json::read(text, &mut out);
            if out.errors.is_empty() {
                json::file_cluster(&mut out);
            }
        }
        Some(Reads::CommandLine) => command_line::read(text, &mut out),
        Some(Reads::Toml) => toml::read(text, &mut out),
        Some(Reads::TrainingArguments) => training_arguments::read(text, &mut out),
        None => {
            let names: Vec<String> = importable().filter_map(format_name).collect();
            let list = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                Some((last, _)) => last.clone(),
                None => String::new(),
            };
            out.error(format!(
                "{} configs cannot be imported; paste {list}",
                framework.name()
            ))
        }
    }
    if out.errors.is_empty() && !matches!(reads, Some(Reads::Json) | None) {
        dpcalc_comments(text, &mut out);
    }
    out.finish()
}

/// A profiler trace ([`Scope::Measured`]): its step as `seconds_per_step`, its buckets for the
/// summary; the compute factor follows in [`Imported::settle`].
fn import_trace(mut out: Imported, text: &str) -> Imported {
    out.scope = Scope::Measured;
    match trace::read(text) {
        Ok(t) => {
            out.inputs.push((Field::SecondsPerStep, float_repr(t.wall)));
            out.log = Some(LogFacts {
                read: t.sentence(),
                ..LogFacts::default()
            });
            out.trace = Some(t);
        }
        Err(why) => out.malformed(why),
    }
    out.finish()
}

/// A text with a NUL character is a binary file's (no config format allows one: YAML, JSON and
/// TOML refuse it, bash drops it): refused whole, with the problem named, rather than read up to
/// the NUL (`yaml-rust2` takes a NUL for the end of the text). `dpcalc check` refuses such a file
/// before reading it (`cli/read.rs`).
fn binary(framework: Framework, text: &str) -> Option<Imported> {
    let at = text.find('\0')?;
    let line = text[..at].matches('\n').count() + 1;
    let mut out = Imported::new(framework);
    out.malformed(format!(
        "line {line}: a NUL character: this is a binary file, not a config (paste the config's text)"
    ));
    Some(out)
}

/// The field a config key of `framework` fills: a key of its form that a config file can hold
/// (the cluster shape and the measured throughput are dpcalc's own inputs, not config keys), or
/// a key its `Spec::import.alias` reads.
fn config_field(framework: Framework, key: &str) -> Option<Field> {
    framework
        .field(key)
        .or_else(|| (framework.spec().import.as_ref()?.alias)(key))
        .filter(|f| !CLUSTER.contains(f) && !THROUGHPUT.1.contains(f))
}

/// The release dpcalc's own export names on its first line (`# axolotl 0.19.0 config from
/// dpcalc …`), when it is one of `framework`'s.
fn named_release(framework: Framework, text: &str) -> Option<&'static Release> {
    let first = text.lines().next()?.trim_start().strip_prefix('#')?.trim();
    let rest = first.strip_prefix(framework.name())?.strip_prefix(' ')?;
    let (id, _) = rest.split_once(" config from dpcalc")?;
    framework.release(id.trim())
}

/// dpcalc's own comments in an exported config, which carry what is not a config key: the
/// launcher line (`# launch: torchrun --nnodes 2 --nproc-per-node 8 …`, the cluster shape) and
/// the training rows (`# num_samples 1000: training rows, …`). A value the config itself gave
/// is not replaced.
fn dpcalc_comments(text: &str, out: &mut Imported) {
    let mut seen: Vec<(Field, String)> = Vec::new();
    for line in text.lines() {
        let Some(note) = line.trim_start().strip_prefix('#').map(str::trim) else {
            continue;
        };
        if let Some(command) = note.strip_prefix("launch: ") {
            if CLUSTER.iter().any(|f| out.get(*f).is_some()) {
                continue;
            }
            let words = shlex::split(command).unwrap_or_default();
            let cmd = split_command(&words);
            let mut shape = Imported::new(out.framework);
            let mut unknowns = Unknowns::default();
            launcher_flags(cmd.launcher, &mut shape, &mut seen, &mut unknowns);
            unknowns.report(&mut shape);
            if shape.errors.is_empty() {
                out.inputs.extend(shape.inputs);
            }
        } else if let Some(rest) = note.strip_prefix("num_samples ") {
            let n = rest.split(':').next().unwrap_or_default().trim();
            if rest.contains(": training rows")
                && out.framework.has(Field::NumSamples)
                && out.get(Field::NumSamples).is_none()
                && !n.is_empty()
            {
                out.inputs.push((Field::NumSamples, n.to_string()));
            }
        }
    }
}
