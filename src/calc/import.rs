//! Config import ("paste anything"): a pasted config becomes form inputs, with every key dpcalc
//! does not read listed and ignored. [`detect_format`] says what a text is; [`read`] is what the
//! page's Import button does.
//!
//! - axolotl's config YAML (`yaml-rust2`'s event parser: the keys of
//!   `src/axolotl/utils/schemas/config.py` that dpcalc has as fields);
//! - DeepSpeed's `ds_config.json` (`serde_json`: `train_batch_size`,
//!   `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`,
//!   `tensor_parallel.autotp_size`, `sequence_parallel_size`, …);
//! - a Megatron-LM launch (`shlex`: `--flag value`, `--flag=value`, `store_true` flags, `nargs='*'`
//!   lists such as `--rampup-batch-size`), also as a bash script (Megatron's own examples), read
//!   by [`shell`] for the command it runs: variables, arrays and `$((…))` expanded, a value it
//!   cannot know (`$1`) named once and never taken;
//! - the Hugging Face Trainer's `TrainingArguments`: HfArgumentParser's `--under_score` flags
//!   (`--flag`, `--flag true`, `--no_flag`), its JSON dict, or a `TrainingArguments(...)` call;
//! - torchtitan's job TOML (`basic-toml`, behind a nesting guard): `[table] key` as `table.key`;
//! - nanotron's config YAML: `parallelism.dp`, `tokens.…`, `model.model_config.…`;
//! - the cluster only ([`Scope::Cluster`]): accelerate's config YAML (`num_machines`,
//!   `num_processes`) or a launcher line (`torchrun --nnodes 2 --nproc_per_node 8`, `accelerate
//!   launch`, `deepspeed --num_nodes`); a launcher before a Megatron or HF script fills both;
//! - a model's `config.json` ([`model_config`], [`Scope::Model`]).
//!
//! dpcalc's own export carries what is not a config key in comments, read back here: the
//! launcher line (`# launch: torchrun …`, the cluster) and the training rows (`# num_samples`).
//!
//! Nothing here interprets a value: each is handed to the form as text and the framework module
//! parses it, so a bad value shows its usual message at its field. Hostile input is bounded: the
//! text is capped at [`MAX_INPUT`] bytes; YAML is read as events (iterative, no tree is built and
//! aliases are never expanded, so an alias bomb costs nothing); JSON nesting stops at
//! serde_json's recursion limit (128), TOML nesting at [`MAX_TOML_NESTING`] before the parser
//! sees it; the lists of unknown keys and errors are capped.

use super::field::{CLUSTER, THROUGHPUT};
use super::shell;
use super::spec::{Reads, Release};
use super::{Field, Framework, RawInputs};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

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
    /// per node, world size); the rest is kept.
    Cluster,
}

/// The one sentence for a text that is no config dpcalc reads.
pub const NOT_A_CONFIG: &str = "This does not look like a config: paste an axolotl or nanotron YAML, a DeepSpeed or \
     Hugging Face TrainingArguments JSON, a torchtitan TOML, Megatron-LM or Hugging Face command-line flags, \
     an accelerate config, a torchrun line or a model's config.json.";

/// What a pasted config gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// its three batch keys ([`batch_cluster`]). Shown after the summary.
    pub notes: Vec<String>,
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
            let said = if self.malformed {
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
            Scope::Cluster => format!(
                "Read the cluster: {n} setting(s) filled in for {name}; the other inputs are kept.{unread}"
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

    fn unknown(&mut self, key: impl Into<String>) {
        let key: String = key.into();
        let name = key.trim_start_matches('-').replace('-', "_");
        let renamed = self
            .framework
            .spec()
            .import
            .as_ref()
            .and_then(|i| (i.renamed)(&name));
        if let Some(what) = renamed {
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
            self.errors.push(message.into());
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

/// What a pasted text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A config of this framework.
    Config(Framework),
    /// Only a cluster shape: an accelerate config YAML, or a launcher line (`torchrun --nnodes 2
    /// --nproc_per_node 8 train.py`) whose script arguments no framework here reads.
    Cluster,
    /// No config dpcalc reads ([`NOT_A_CONFIG`]).
    Unknown,
}

/// The framework a pasted config is for ([`detect_format`]; a cluster-only text or an
/// unrecognised one gives the registry's first framework).
pub fn detect(text: &str) -> Framework {
    match detect_format(text) {
        Format::Config(f) => f,
        _ => importable().next().unwrap_or_default(),
    }
}

/// DeepSpeed's own top-level keys: a JSON with one of them is a `ds_config.json`.
const DEEPSPEED_KEYS: &[&str] = &[
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "zero_optimization",
    "tensor_parallel",
    "sequence_parallel_size",
    "gradient_clipping",
    "steps_per_print",
    "wall_clock_breakdown",
];

/// Keys only a `TrainingArguments` dict has (`TrainingArguments.to_dict()`).
const TRAINING_ARGUMENTS_KEYS: &[&str] = &[
    "per_device_train_batch_size",
    "num_train_epochs",
    "output_dir",
    "per_device_eval_batch_size",
    "dataloader_drop_last",
    "eval_strategy",
    "evaluation_strategy",
    "save_strategy",
    "logging_steps",
    "lr_scheduler_type",
    "optim",
];

/// accelerate's config YAML (`accelerate config`, `default_config.yaml`).
const ACCELERATE_KEYS: &[&str] = &[
    "num_processes",
    "num_machines",
    "distributed_type",
    "compute_environment",
    "machine_rank",
    "main_process_ip",
    "main_training_function",
];

/// The syntax and framework of a pasted text:
/// - a JSON object: a TrainingArguments dict (one of its own keys and none of DeepSpeed's) is
///   the Hugging Face Trainer's, any other JSON DeepSpeed's;
/// - a `[table]` header line: torchtitan's job TOML;
/// - YAML (the first line is a `key:`): accelerate's config (`num_processes`, `num_machines`, …)
///   is a cluster, nanotron's has a top-level `parallelism:` (or `tokens:` beside its `general:`,
///   `checkpoints:`, `model:` or `data_stages:`), any other is axolotl's;
/// - `--flags`: after a launcher (`torchrun`, `accelerate launch`, `deepspeed`, `python -m
///   torch.distributed.run`), the script's flags decide: HfArgumentParser's `--under_score`
///   names (or the Trainer's keys) for the Hugging Face Trainer, Megatron-LM's `--dash-names`
///   (or `pretrain_*.py`) for Megatron-LM; none of either after a launcher is a cluster.
pub fn detect_format(text: &str) -> Format {
    let text = text.trim_start_matches('\u{feff}');
    if text.len() > MAX_INPUT {
        return Format::Config(importable().next().unwrap_or_default());
    }
    let config = |reads| match reading(reads) {
        Some(f) => Format::Config(f),
        None => Format::Unknown,
    };
    if text.trim_start().starts_with('{') {
        // the keys only one of the two reads decide (both read gradient_accumulation_steps)
        let (hf_fw, ds_fw) = (reading(Reads::TrainingArguments), reading(Reads::Json));
        let reads = |f: Option<Framework>, k: &str| f.is_some_and(|f| config_field(f, k).is_some());
        let hf = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => {
                let is_hf = |k: &str| TRAINING_ARGUMENTS_KEYS.contains(&k) || reads(hf_fw, k);
                let is_ds = |k: &str| DEEPSPEED_KEYS.contains(&k) || reads(ds_fw, k);
                let hf_only = map.keys().filter(|k| is_hf(k) && !is_ds(k)).count();
                let ds_only = map.keys().filter(|k| is_ds(k) && !is_hf(k)).count();
                hf_only > ds_only
            }
            _ => false,
        };
        return config(if hf {
            Reads::TrainingArguments
        } else {
            Reads::Json
        });
    }
    // dpcalc's own export says whose it is on its first line
    let first = text.lines().next().unwrap_or_default();
    if let Some(head) = first
        .strip_prefix("# ")
        .filter(|l| l.contains(" config from dpcalc"))
    {
        if let Some(&f) = importable()
            .collect::<Vec<_>>()
            .iter()
            .find(|f| head.starts_with(&format!("{} ", f.name())))
        {
            return Format::Config(f);
        }
    }
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    if lines.clone().any(toml_header) {
        return config(Reads::Toml);
    }
    if looks_yaml(text) {
        // the top-level keys: lines at column 0
        let top: Vec<&str> = text.lines().filter_map(yaml_key).collect();
        let has = |k: &str| top.contains(&k);
        if ACCELERATE_KEYS.iter().any(|k| has(k)) {
            return Format::Cluster;
        }
        let nanotron = has("parallelism")
            || (has("tokens")
                && ["general", "checkpoints", "model", "data_stages"]
                    .iter()
                    .any(|k| has(k)));
        return config(if nanotron {
            Reads::YamlNested
        } else {
            Reads::Yaml
        });
    }
    let flag = lines.clone().any(|line| {
        line.split_whitespace().any(|w| {
            w.strip_prefix("--")
                .and_then(|r| r.chars().next())
                .is_some_and(|c| c.is_ascii_alphabetic())
        })
    });
    if !flag {
        // TrainingArguments(...) as exported (Python keyword arguments)
        if text.contains("TrainingArguments(") {
            return config(Reads::TrainingArguments);
        }
        // YAML after all: a list, a complex key, a key on a later line
        if text.lines().any(|l| {
            yaml_key(l).is_some() || l.starts_with("- ") || l.starts_with("? ") || l == "-"
        }) {
            return config(Reads::Yaml);
        }
        return Format::Unknown;
    }
    let words = if shell::is_script(text) {
        shell::read(text).command
    } else {
        let mut lexer = shlex::Shlex::new(text);
        let words: Vec<String> = lexer.by_ref().filter(|w| !w.is_empty()).collect();
        if lexer.had_error {
            // the command-line reader says where the quote is open
            return config(Reads::CommandLine);
        }
        words
    };
    let command = split_command(&words);
    let (mut hf, mut megatron) = (0usize, 0usize);
    if command.script.is_some_and(|s| {
        s.rsplit('/')
            .next()
            .is_some_and(|n| n.starts_with("pretrain_"))
    }) {
        megatron += 1;
    }
    let (hf_fw, mg_fw) = (
        reading(Reads::TrainingArguments),
        reading(Reads::CommandLine),
    );
    for (flag, _) in flags(command.program) {
        let name = flag.split_once('=').map_or(flag, |(n, _)| n);
        if name.is_empty() || name.contains('.') {
            continue;
        }
        let key = name.replace('-', "_");
        let known = |f: Option<Framework>| f.is_some_and(|f| config_field(f, &key).is_some());
        if name.contains('_') || known(hf_fw) && !known(mg_fw) {
            hf += 1;
        }
        if name.contains('-') || known(mg_fw) && !known(hf_fw) {
            megatron += 1;
        }
    }
    if hf > megatron {
        config(Reads::TrainingArguments)
    } else if megatron > 0 || command.launcher.is_empty() {
        config(Reads::CommandLine)
    } else {
        Format::Cluster
    }
}

/// Whether the first line that is not a comment is a YAML `key:` or a document start `---`.
fn looks_yaml(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("---") || yaml_key(l).is_some())
}

/// A TOML table header: `[name]`, `[a.b]`, `[[name]]`.
fn toml_header(line: &str) -> bool {
    let inner = line
        .trim_end()
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .map(|l| l.trim_start_matches('[').trim_end_matches(']').trim());
    inner.is_some_and(|n| {
        n.starts_with(|c: char| c.is_ascii_alphabetic())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    })
}

/// The key of a YAML `key:` line at column 0.
fn yaml_key(line: &str) -> Option<&str> {
    let (k, rest) = line.split_once(':')?;
    (!k.is_empty()
        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && (rest.is_empty() || rest.starts_with([' ', '\t'])))
    .then_some(k)
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
    if let Some(m) = model_config(forced.unwrap_or(current), text) {
        return m;
    }
    if let Some(fw) = forced {
        return import_as(fw, text);
    }
    let got = match detect_format(text) {
        Format::Config(fw) => import_as(fw, text),
        Format::Cluster => import_as(current, text),
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
    if text.len() > MAX_INPUT {
        out.error(format!(
            "the text is {} KB; at most {} KB is read (a config is a few KB)",
            text.len() / 1024,
            MAX_INPUT / 1024
        ));
        return out;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    out.release = named_release(framework, text);
    let reads = framework.spec().import.as_ref().map(|i| i.reads);
    if reads.is_some() && detect_format(text) == Format::Cluster {
        out.scope = Scope::Cluster;
        if looks_yaml(text) {
            accelerate(text, &mut out);
        } else {
            cli(text, &mut out);
        }
        return out.finish();
    }
    match reads {
        Some(Reads::Yaml) => yaml(text, &mut out),
        Some(Reads::YamlNested) => yaml_nested(text, &mut out),
        Some(Reads::Json) => {
            json(text, &mut out);
            if out.errors.is_empty() {
                batch_cluster(&mut out);
            }
        }
        Some(Reads::CommandLine) => cli(text, &mut out),
        Some(Reads::Toml) => toml(text, &mut out),
        Some(Reads::TrainingArguments) => training_arguments(text, &mut out),
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

fn at(mark: &Marker) -> String {
    format!("line {}, column {}", mark.line(), mark.col() + 1)
}

// ---- axolotl YAML ------------------------------------------------------------------------

/// Plain scalars YAML reads as null (`null`, `~`, nothing): the key is unset.
fn is_null(value: &str, style: TScalarStyle) -> bool {
    style == TScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// The text of a scalar as the frameworks' YAML loader (PyYAML's `safe_load`, YAML 1.1) reads
/// it: a plain `yes`/`on`/`True` is the boolean `true`, `500_000` and `0x1F` are the ints
/// 500000 and 31, `1_0.5` the float 10.5, while `1e5` (no point) stays the string it is to
/// PyYAML. Quoted scalars are always text.
fn scalar_text(value: String, style: TScalarStyle) -> String {
    if style == TScalarStyle::Plain {
        if let Some(text) = pyyaml_plain(&value) {
            return text;
        }
    }
    value
}

/// PyYAML 6's implicit resolvers for a plain scalar (`yaml/resolver.py`, tried in its order:
/// bool, float, int) and its constructors (`yaml/constructor.py`: underscores dropped, `0b`,
/// `0x` and a leading `0` (octal) as bases, `a:b:c` in base 60): the value as Python prints it,
/// or `None` for a string. A value PyYAML's constructor would fail on is left as written.
fn pyyaml_plain(v: &str) -> Option<String> {
    match v {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some("true".into())
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some("false".into())
        }
        _ => {}
    }
    let digits =
        |t: &str, ok: fn(char) -> bool| !t.is_empty() && t.chars().all(|c| c == '_' || ok(c));
    let dec = |t: &str| digits(t, |c| c.is_ascii_digit());
    let (sign, body) = match v.strip_prefix(['-', '+']) {
        Some(rest) => (&v[..1], rest),
        None => ("", v),
    };
    // base-60 parts after the first: `:` then one or two digits, the first of 0-5
    let sexagesimal = |parts: &[&str]| {
        parts.iter().all(|p| {
            let b = p.as_bytes();
            match b.len() {
                1 => b[0].is_ascii_digit(),
                2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
                _ => false,
            }
        })
    };
    // float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9][0-9_]*(...)? (no sign) |
    // [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
    let exponent_ok = |e: &str| {
        e.is_empty()
            || e.strip_prefix(['e', 'E'])
                .and_then(|r| r.strip_prefix(['-', '+']))
                .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    };
    let float = if matches!(body, ".inf" | ".Inf" | ".INF") {
        Some(if sign == "-" {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })
    } else if sign.is_empty() && matches!(body, ".nan" | ".NaN" | ".NAN") {
        Some(f64::NAN)
    } else if let Some((int_part, rest)) = body.split_once('.') {
        let frac_end = rest.find(['e', 'E']).unwrap_or(rest.len());
        let (frac, exp) = rest.split_at(frac_end);
        let frac_ok = frac.chars().all(|c| c == '_' || c.is_ascii_digit());
        let mut parts = int_part.split(':');
        let head = parts.next().unwrap_or_default();
        let tail: Vec<&str> = parts.collect();
        let head_ok = head.starts_with(|c: char| c.is_ascii_digit()) && dec(head);
        if !tail.is_empty() {
            // base 60: no exponent
            (head_ok && sexagesimal(&tail) && frac_ok && exp.is_empty()).then(|| {
                let whole = tail.iter().fold(
                    head.replace('_', "").parse::<f64>().unwrap_or(0.0),
                    |acc, p| acc * 60.0 + p.parse::<f64>().unwrap_or(0.0),
                );
                let f = format!("0.{}", frac.replace('_', ""))
                    .parse::<f64>()
                    .unwrap_or(0.0);
                let x = whole + f;
                if sign == "-" {
                    -x
                } else {
                    x
                }
            })
        } else if (head_ok
            || (head.is_empty()
                && sign.is_empty()
                && frac.starts_with(|c: char| c.is_ascii_digit())))
            && frac_ok
            && exponent_ok(exp)
        {
            format!(
                "{sign}{}.{}{exp}",
                head.replace('_', ""),
                frac.replace('_', "")
            )
            .trim_end_matches('.')
            .parse::<f64>()
            .ok()
        } else {
            None
        }
    } else {
        None
    };
    if let Some(x) = float {
        // the text as written when it already reads as that float (`1.0e-05`, `0.10`), else
        // the value as Python prints it (`1_0.5` → 10.5, `.inf` → inf, `1:30.5` → 90.5)
        if !v.contains(['_', ':']) && v.parse::<f64>().ok() == Some(x) {
            return Some(v.to_string());
        }
        return Some(super::num::float_repr(x));
    }
    // int: [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ |
    // [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
    let parsed: Option<i128> = if let Some(b) = body.strip_prefix("0b") {
        digits(b, |c| c == '0' || c == '1')
            .then(|| i128::from_str_radix(&b.replace('_', ""), 2).ok())
            .flatten()
    } else if let Some(h) = body.strip_prefix("0x") {
        digits(h, |c| c.is_ascii_hexdigit())
            .then(|| i128::from_str_radix(&h.replace('_', ""), 16).ok())
            .flatten()
    } else if body == "0" {
        Some(0)
    } else if let Some(o) = body.strip_prefix('0') {
        digits(o, |c| ('0'..='7').contains(&c))
            .then(|| {
                let o = o.replace('_', "");
                // `0_` is 0 to PyYAML (int('0', 8)); otherwise base 8
                if o.is_empty() {
                    Some(0)
                } else {
                    i128::from_str_radix(&o, 8).ok()
                }
            })
            .flatten()
    } else if body.starts_with(|c: char| ('1'..='9').contains(&c)) {
        let mut parts = body.split(':');
        let head = parts.next().unwrap_or_default();
        let tail: Vec<&str> = parts.collect();
        if !dec(head) || (!tail.is_empty() && !sexagesimal(&tail)) {
            None
        } else {
            tail.iter()
                .try_fold(head.replace('_', "").parse::<i128>().ok()?, |acc, p| {
                    acc.checked_mul(60)?.checked_add(p.parse::<i128>().ok()?)
                })
        }
    } else {
        None
    };
    parsed.map(|n| {
        if sign == "-" {
            (-n).to_string()
        } else {
            n.to_string()
        }
    })
}

/// A complete value inside the top mapping.
enum Node {
    Scalar(String, TScalarStyle),
    Alias(usize),
    Collection,
}

/// A nested entry: its key, its scalar value (`None` for a collection), where the key is.
type Entry = (String, Option<(String, TScalarStyle)>, Marker);

/// A mapping nested one level inside the top mapping (`fsdp_config:` with its keys): its scalar
/// entries are read as `parent.child` keys (the dotted names of a framework's nested keys).
#[derive(Default)]
struct Nested {
    /// The next scalar at depth 2 is a key.
    expect_key: bool,
    key: Option<(String, Marker)>,
    entries: Vec<Entry>,
}

fn yaml(text: &str, out: &mut Imported) {
    let mut parser = Parser::new_from_str(text);
    // Collections open (the top mapping is depth 1). Inside the top mapping, nodes alternate
    // key, value; a nested value is skipped whole. Scalar anchors are kept so a scalar alias is
    // resolved; an alias of a collection is never expanded.
    let mut depth = 0usize;
    let mut documents = 0usize;
    let mut expect_key = true;
    let mut pending: Option<(String, Marker)> = None;
    let mut nested_at: Option<Marker> = None;
    let mut anchors: Vec<(usize, String, TScalarStyle)> = Vec::new();
    let mut seen = Vec::new();
    // the mapping value of the current top-level key, while it is open
    let mut nested: Option<Nested> = None;
    // the list value of the current top-level key, while it is open: its scalar items (`None`
    // once an item is a collection: such a list is not read)
    let mut list: Option<Option<Vec<String>>> = None;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(e) => e,
            Err(e) => {
                out.malformed(format!("YAML error at {}: {}", at(e.marker()), e.info()));
                return;
            }
        };
        let node = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    out.error(format!(
                        "{}: a second YAML document (---); only the first is read",
                        at(&mark)
                    ));
                    return;
                }
                continue;
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth == 1 && matches!(event, Event::SequenceStart(..)) {
                    out.error(format!(
                        "{}: the YAML is a list; an axolotl config is a mapping of keys",
                        at(&mark)
                    ));
                    return;
                }
                if depth == 2 {
                    nested_at = Some(mark);
                    if matches!(event, Event::MappingStart(..)) && !expect_key {
                        nested = Some(Nested {
                            expect_key: true,
                            ..Nested::default()
                        });
                    }
                    if matches!(event, Event::SequenceStart(..)) && !expect_key {
                        list = Some(Some(Vec::new()));
                    }
                }
                if depth == 3 {
                    if let Some(items) = list.as_mut() {
                        *items = None;
                    }
                    // a collection inside the nested mapping: its child is not read
                    if let Some(n) = nested.as_mut() {
                        if let Some((k, m)) = n.key.take() {
                            n.entries.push((k, None, m));
                            n.expect_key = true;
                        }
                    }
                }
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.saturating_sub(1);
                if depth != 1 {
                    continue;
                }
                Node::Collection
            }
            Event::Scalar(value, style, anchor, _tag) => {
                if anchor != 0 && anchors.len() < 4096 {
                    anchors.push((anchor, value.clone(), style));
                }
                if depth == 0 {
                    if !is_null(&value, style) {
                        out.error(format!(
                            "{}: the YAML is a single value; an axolotl config is a mapping of keys",
                            at(&mark)
                        ));
                        return;
                    }
                    continue;
                }
                if depth > 1 {
                    if depth == 2 {
                        if let Some(n) = nested.as_mut() {
                            n.scalar(value, style, mark);
                        } else if let Some(Some(items)) = list.as_mut() {
                            if items.len() < MAX_LISTED && !is_null(&value, style) {
                                items.push(value);
                            }
                        }
                    }
                    continue;
                }
                Node::Scalar(value, style)
            }
            Event::Alias(id) => {
                if depth == 2 {
                    if let Some(n) = nested.as_mut() {
                        match anchors.iter().find(|(a, _, _)| *a == id) {
                            Some((_, v, st)) => n.scalar(v.clone(), *st, mark),
                            None => n.scalar(String::new(), TScalarStyle::Plain, mark),
                        }
                    } else if let Some(items) = list.as_mut() {
                        // an alias inside a list: the list is not read
                        *items = None;
                    }
                }
                if depth != 1 {
                    continue;
                }
                Node::Alias(id)
            }
        };
        // a node of the top mapping is complete
        let node = match node {
            Node::Alias(id) => match anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, s)) => Node::Scalar(v.clone(), *s),
                None => Node::Alias(id),
            },
            n => n,
        };
        let node_mark = match node {
            Node::Collection => nested_at.take().unwrap_or(mark),
            _ => mark,
        };
        if expect_key {
            expect_key = false;
            pending = match node {
                Node::Scalar(k, _) => Some((k, node_mark)),
                _ => {
                    out.unknown(format!("a key that is not text, at {}", at(&node_mark)));
                    None
                }
            };
        } else {
            expect_key = true;
            let Some((key, kmark)) = pending.take() else {
                continue;
            };
            let items = list.take().flatten();
            match (node, nested.take()) {
                (Node::Scalar(value, style), _) => {
                    yaml_value(out, &mut seen, key, &kmark, value, style)
                }
                // a list of scalars under a key the framework reads as text (axolotl's `plugins`,
                // `fsdp`): its items comma-separated, as the form takes them
                (Node::Collection, None)
                    if items.is_some()
                        && config_field(out.framework, &key)
                            .is_some_and(|f| f.kind() == super::field::Kind::Text) =>
                {
                    let text = items.unwrap_or_default().join(", ");
                    yaml_value(out, &mut seen, key, &kmark, text, TScalarStyle::Plain)
                }
                // a nested mapping with a key the framework reads (`fsdp_config.state_dict_type`):
                // each entry as `key.child`; one with none stays one unknown key
                (Node::Collection, Some(n))
                    if n.entries.iter().any(|(c, _, _)| {
                        config_field(out.framework, &format!("{key}.{c}")).is_some()
                    }) =>
                {
                    for (child, value, m) in n.entries {
                        let dotted = format!("{key}.{child}");
                        match value {
                            Some((v, st)) => yaml_value(out, &mut seen, dotted, &m, v, st),
                            None => out.unknown(dotted),
                        }
                    }
                }
                // a list, or an alias of a collection (`<<: *base`): not read
                _ => out.unknown(key),
            }
        }
    }
}

impl Nested {
    fn scalar(&mut self, value: String, style: TScalarStyle, mark: Marker) {
        if self.expect_key {
            self.key = Some((value, mark));
            self.expect_key = false;
        } else if let Some((k, m)) = self.key.take() {
            self.entries.push((k, Some((value, style)), m));
            self.expect_key = true;
        }
    }
}

fn yaml_value(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    key: String,
    kmark: &Marker,
    value: String,
    style: TScalarStyle,
) {
    match config_field(out.framework, &key) {
        None => out.unknown(key),
        Some(_) if is_null(&value, style) => {}
        Some(field) => {
            let text = scalar_text(value, style);
            out.input(field, text, seen, &at(kmark));
        }
    }
}

// ---- DeepSpeed JSON ----------------------------------------------------------------------

fn json(text: &str, out: &mut Imported) {
    let top: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.malformed(format!(
                "JSON error at line {}, column {}: {}",
                e.line(),
                e.column(),
                json_reason(&e)
            ));
            return;
        }
    };
    let serde_json::Value::Object(map) = top else {
        out.error("the JSON is not an object; a DeepSpeed config is { \"key\": value, … }");
        return;
    };
    // serde_json keeps the last of a repeated key; the duplicates check is in `json_duplicates`.
    let mut seen = Vec::new();
    json_duplicates(text, out, "DeepSpeed");
    for (key, value) in &map {
        match key.as_str() {
            "tensor_parallel" => match value {
                serde_json::Value::Object(tp) => {
                    for (k, v) in tp {
                        let name = format!("tensor_parallel.{k}");
                        if k == "autotp_size" {
                            json_value(out, &mut seen, Field::AutotpSize, &name, v);
                        } else {
                            out.unknown(name);
                        }
                    }
                }
                serde_json::Value::Null => {}
                _ => out.error(
                    "tensor_parallel is not an object; DeepSpeed reads tensor_parallel.autotp_size",
                ),
            },
            // autotp_size is only read inside tensor_parallel
            "autotp_size" => out.unknown(key.clone()),
            k => json_entry(out, &mut seen, k.to_string(), value, 0),
        }
    }
}

/// The cluster a `ds_config.json` fixes: DeepSpeed asserts `train_batch_size ==
/// train_micro_batch_size_per_gpu × gradient_accumulation_steps × world_size` when all three are
/// given (`runtime/config.py::_batch_assertion`), with `world_size` the whole world, or
/// `dist.get_world_size() / sequence_parallel_size` when the config has that key (AutoTP's ranks
/// are counted in the world). So the three keys give the world exactly: `train ÷ (micro × GA)`,
/// times `sequence_parallel_size`, filled in as nodes × GPUs per node. Otherwise the file does
/// not say it, and the note says so.
fn batch_cluster(out: &mut Imported) {
    let get = |f: Field| out.get(f).and_then(|v| v.trim().parse::<u64>().ok());
    let (t, m, g) = (
        get(Field::TrainBatchSize),
        get(Field::TrainMicroBatchSizePerGpu),
        get(Field::GradientAccumulationSteps),
    );
    let sp = match out.get(Field::SequenceParallelSize) {
        None => Some(1),
        Some(v) => v.trim().parse::<u64>().ok().filter(|&s| s > 0),
    };
    let per = m
        .zip(g)
        .and_then(|(m, g)| m.checked_mul(g))
        .filter(|&p| p > 0);
    // with an mpu the check counts its data-parallel ranks, which do not give the world
    let mpu = out.get(Field::MpuDataParallelWorldSize).is_some();
    let world = match (t, per, sp) {
        (Some(t), Some(per), Some(sp)) if t > 0 && t % per == 0 && !mpu => {
            (t / per).checked_mul(sp)
        }
        _ => None,
    };
    match (world, t, m, g) {
        (Some(world), Some(t), Some(m), Some(g)) => {
            let w = world / sp.unwrap_or(1);
            let via = if sp.unwrap_or(1) > 1 {
                format!(" × sequence_parallel_size {}", sp.unwrap_or(1))
            } else {
                String::new()
            };
            // as nodes × GPUs per node (dpcalc's 8 per node where it divides), so a launcher's
            // --nodes given after still changes the world as it would
            let gpus = super::cluster::DEFAULT_GPUS_PER_NODE;
            let (nodes, gpus) = if world % gpus == 0 {
                (world / gpus, gpus)
            } else {
                (1, world)
            };
            out.inputs.push((Field::Nodes, nodes.to_string()));
            out.inputs.push((Field::GpusPerNode, gpus.to_string()));
            out.notes.push(format!(
                "The cluster: {world} GPUs ({nodes} node(s) × {gpus}), from DeepSpeed's batch \
                 check train_batch_size = micro × GA × world ({t} = {m} × {g} × {w}){via}."
            ));
        }
        _ => out.notes.push(
            "The cluster is not in this file: only train_batch_size, \
             train_micro_batch_size_per_gpu and gradient_accumulation_steps together (train a \
             multiple of micro × GA, no mpu_data_parallel_world_size) fix it; set nodes and \
             gpus_per_node."
                .into(),
        ),
    }
}

/// One JSON entry under its dotted path: a key the framework reads, or an object whose keys
/// are read as `parent.child` (DeepSpeed's `zero_optimization.offload_optimizer.device`), or an
/// unknown key. Nesting deeper than four levels is not a key dpcalc reads.
fn json_entry(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    path: String,
    value: &serde_json::Value,
    depth: usize,
) {
    match (config_field(out.framework, &path), value) {
        (Some(field), _) => json_value(out, seen, field, &path, value),
        (None, serde_json::Value::Object(map)) if depth < 4 => {
            for (k, v) in map {
                json_entry(out, seen, format!("{path}.{k}"), v, depth + 1);
            }
        }
        _ => out.unknown(path),
    }
}

fn json_reason(e: &serde_json::Error) -> String {
    // serde_json's Display ends with " at line L column C"; the position is given separately
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn json_value(
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    field: Field,
    name: &str,
    value: &serde_json::Value,
) {
    use serde_json::Value;
    match value {
        // DeepSpeed's get_scalar_param returns None for null: the key counts as not given
        Value::Null => {}
        Value::Number(n) => out.input(field, n.to_string(), seen, name),
        // a switch or a text of the form (dataloader_drop_last, zero_optimization.… devices)
        Value::Bool(b) if field.kind() == super::Kind::Flag => {
            out.input(field, b.to_string(), seen, name)
        }
        Value::String(s) if field.kind() == super::Kind::Text => {
            out.input(field, s.clone(), seen, name)
        }
        Value::String(s) if s == "auto" => out.error(format!(
            "{name} is \"auto\": the Hugging Face Trainer fills it in from its TrainingArguments \
             (transformers integrations/deepspeed.py), so this file alone does not say it; \
             the field is left empty (use the Hugging Face Trainer form, or type the number)"
        )),
        Value::String(s) => out.error(format!(
            "{name} is the string \"{}\", not a number; DeepSpeed needs a number, so the field is left empty",
            super::parse::shorten(s)
        )),
        other => out.error(format!(
            "{name} is {}, not a number; the field is left empty",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Array(_) => "a list",
                _ => "an object",
            }
        )),
    }
}

/// Reports a top-level key given twice (serde_json keeps the last silently, as Python's `json`
/// does for DeepSpeed). Reads the text again with serde_json's streaming visitor.
fn json_duplicates(text: &str, out: &mut Imported, who: &str) {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(k);
            }
            Ok(keys)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let Ok(keys) = de.deserialize_map(Keys) else {
        return;
    };
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let mut reported: Vec<&str> = Vec::new();
    for pair in sorted.windows(2) {
        if pair[0] == pair[1] && !reported.contains(&pair[0].as_str()) {
            reported.push(&pair[0]);
            out.error(format!(
                "\"{}\" is given more than once; {who} would keep the last one silently",
                super::parse::shorten(&pair[0])
            ));
        }
    }
}

// ---- command lines (Megatron-LM, HfArgumentParser) and launchers ----------------------------

/// A command split at its script.
struct Command<'a> {
    /// The launcher and its flags (`torchrun --nnodes 2 …`), before the script.
    launcher: &'a [String],
    /// The script (`…/pretrain_gpt.py`, or the module after `-m`), if any.
    script: Option<&'a str>,
    /// The script's arguments (every word when there is neither a script nor a launcher).
    program: &'a [String],
}

/// Launcher programs: a line of only their flags is a cluster shape.
const LAUNCHERS: &[&str] = &[
    "torchrun",
    "accelerate",
    "deepspeed",
    "torch.distributed.run",
    "torch.distributed.launch",
];

/// Splits a command at its script: the first word ending in `.py`, or the module of a `-m`
/// other than torch's own launcher (`python -m torch.distributed.run`).
fn split_command(words: &[String]) -> Command<'_> {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if w.ends_with(".py") {
            return Command {
                launcher: &words[..i],
                script: Some(w),
                program: &words[i + 1..],
            };
        }
        if w == "-m" {
            match words.get(i + 1) {
                Some(m) if !m.starts_with("torch.distributed.") => {
                    return Command {
                        launcher: &words[..i],
                        script: Some(m),
                        program: &words[i + 2..],
                    }
                }
                _ => i += 1,
            }
        }
        i += 1;
    }
    let launcher = words
        .iter()
        .any(|w| LAUNCHERS.contains(&w.rsplit('/').next().unwrap_or(w)));
    if launcher {
        Command {
            launcher: words,
            script: None,
            program: &words[..0],
        }
    } else {
        Command {
            launcher: &words[..0],
            script: None,
            program: words,
        }
    }
}

/// The launchers' flags for the cluster shape: torchrun's `--nnodes`, `--nproc-per-node`
/// (`torch/distributed/run.py`, either spelling), DeepSpeed's `--num_nodes`, `--num_gpus`, and
/// accelerate's `--num_machines`, `--num_processes` (all processes: see [`processes`]).
fn launcher_flags(
    words: &[String],
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    unknowns: &mut Unknowns,
) {
    let (mut machines, mut procs) = (None, None);
    for (flag, values) in flags(words) {
        if flag.is_empty() {
            continue; // torchrun, python -m torch.distributed.run, accelerate launch, …
        }
        let name = flag.split_once('=').map_or(flag, |(n, _)| n);
        let shown = format!("--{name}");
        let field = match name.replace('-', "_").as_str() {
            "nnodes" | "num_nodes" => Some(Field::Nodes),
            "nproc_per_node" | "num_gpus" => Some(Field::GpusPerNode),
            "num_machines" | "num_processes" => None,
            _ => {
                out.unknown(shown);
                continue;
            }
        };
        let Some(value) = one_value(flag, &values) else {
            out.error(format!("{shown} needs one value"));
            continue;
        };
        if unknowns.unknown(out, &shown, &value) {
            continue;
        }
        match field {
            Some(f) => out.input(f, value, seen, &shown),
            None if name.ends_with("machines") => machines = Some((value, shown)),
            None => procs = Some((value, shown)),
        }
    }
    processes(machines, procs, out, seen);
}

/// accelerate's `num_machines` and `num_processes` (the processes of all machines, one a GPU):
/// the nodes, and GPUs per node = processes ÷ machines when it divides, else the world size.
fn processes(
    machines: Option<(String, String)>,
    procs: Option<(String, String)>,
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
) {
    let count = |v: &Option<(String, String)>| {
        v.as_ref()
            .and_then(|(t, _)| t.trim().parse::<u64>().ok())
            .filter(|&n| n > 0)
    };
    match (count(&machines), count(&procs)) {
        (Some(m), Some(p)) if p % m == 0 => {
            let at = machines.as_ref().map_or("", |(_, a)| a.as_str());
            out.input(Field::Nodes, m.to_string(), seen, at);
            let at = procs.as_ref().map_or("", |(_, a)| a.as_str());
            out.input(Field::GpusPerNode, (p / m).to_string(), seen, at);
        }
        (None, Some(p)) if machines.is_none() => {
            // one machine
            let at = procs.as_ref().map_or("", |(_, a)| a.as_str());
            out.input(Field::Nodes, "1".into(), seen, at);
            out.input(Field::GpusPerNode, p.to_string(), seen, at);
        }
        _ => {
            // as written: the form says what is wrong at its field
            if let Some((m, at)) = machines {
                out.input(Field::Nodes, m, seen, &at);
            }
            if let Some((p, at)) = procs {
                out.input(Field::WorldSize, p, seen, &at);
            }
        }
    }
}

/// HfArgumentParser's booleans (`transformers/hf_argparser.py`, `string_to_bool`).
fn hf_bool(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "true" | "t" | "y" | "1" => Some("true"),
        "no" | "false" | "f" | "n" | "0" => Some("false"),
        _ => None,
    }
}

/// Values a command line cannot know (`$VAR`, `$(…)`, a backquote): never a field's value. In
/// a script each unknown is named once, with every flag it leaves empty; in a bare command
/// line each flag says so.
#[derive(Default)]
struct Unknowns {
    script: bool,
    /// Each unknown as written (`$1`, `${PWD}`), with the flags it leaves empty.
    seen: Vec<(String, Vec<String>)>,
}

impl Unknowns {
    /// Whether `value` holds something unknown (then it is recorded, or said at once).
    fn unknown(&mut self, out: &mut Imported, shown: &str, value: &str) -> bool {
        if !value.contains(['$', '`']) {
            return false;
        }
        if !self.script {
            out.error(format!(
                "{shown} {value}: a shell variable or substitution; dpcalc cannot know its value, so the field is left empty"
            ));
            return true;
        }
        for name in unknown_parts(value) {
            match self.seen.iter_mut().find(|(n, _)| *n == name) {
                Some((_, flags)) if !flags.iter().any(|f| f == shown) => {
                    flags.push(shown.to_string())
                }
                Some(_) => {}
                None => self.seen.push((name, vec![shown.to_string()])),
            }
        }
        true
    }

    fn report(self, out: &mut Imported) {
        for (name, flags) in self.seen {
            let (list, verb) = match flags.as_slice() {
                [one] => (one.clone(), "is"),
                [init @ .., last] => (format!("{} and {last}", init.join(", ")), "are"),
                [] => continue,
            };
            out.error(format!(
                "{} is not set in the script (a script argument or an environment variable); dpcalc cannot \
                 know its value, so {list} {verb} left empty",
                super::parse::shorten(&name)
            ));
        }
    }
}

/// The unknown parts of an expanded word, as written: `$1`, `${PWD}`, `$(date)`, `` `cmd` ``.
fn unknown_parts(value: &str) -> Vec<String> {
    let c: Vec<char> = value.chars().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let end = match (c[i], c.get(i + 1)) {
            ('`', _) => c[i + 1..]
                .iter()
                .position(|&x| x == '`')
                .map_or(c.len(), |p| i + p + 2),
            ('$', Some(&open @ ('{' | '('))) => {
                let close = if open == '{' { '}' } else { ')' };
                let mut level = 0usize;
                let mut j = i + 1;
                let mut end = c.len();
                while j < c.len() {
                    if c[j] == open {
                        level += 1;
                    } else if c[j] == close {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            end = j + 1;
                            break;
                        }
                    }
                    j += 1;
                }
                end
            }
            ('$', Some(x)) if x.is_ascii_digit() || "@*#?$!-".contains(*x) => i + 2,
            ('$', _) => {
                let mut j = i + 1;
                while c
                    .get(j)
                    .is_some_and(|x| x.is_ascii_alphanumeric() || *x == '_')
                {
                    j += 1;
                }
                j
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let part: String = c[i..end.min(c.len())].iter().collect();
        // `$((2*$3))`: the unknown inside
        let inner = part
            .strip_prefix("$((")
            .filter(|p| p.contains('$'))
            .map(unknown_parts);
        for part in inner.unwrap_or_else(|| vec![part]) {
            if part.len() > 1 && !parts.contains(&part) {
                parts.push(part);
            }
        }
        i = end.max(i + 1);
    }
    if parts.is_empty() {
        parts.push(value.to_string());
    }
    parts
}

fn cli(text: &str, out: &mut Imported) {
    let mut unknowns = Unknowns {
        script: shell::is_script(text),
        ..Unknowns::default()
    };
    let words: Vec<String> = if unknowns.script {
        // a script: the command it runs, expanded as bash would
        let script = shell::read(text);
        if script.too_large {
            out.error(
                "the script's variables grow past what dpcalc reads (an array or a value too large); \
                 what did not fit is left out",
            );
        }
        if script.command.is_empty() {
            out.error(
                "this script runs no training command (torchrun, python … .py, deepspeed, accelerate) \
                 that dpcalc can follow; nothing is read",
            );
            return;
        }
        script
            .command
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect()
    } else {
        let mut lexer = shlex::Shlex::new(text);
        // shlex yields an empty word for a `\` line continuation after a space; an empty word
        // is never a value dpcalc could use, so empty words are dropped
        let words: Vec<String> = lexer.by_ref().filter(|w| !w.is_empty()).collect();
        if lexer.had_error {
            out.error(format!(
                "the command line has an unclosed quote or a trailing backslash (line {})",
                lexer.line_no
            ));
            return;
        }
        words
    };
    let command = split_command(&words);
    let mut seen = Vec::new();
    launcher_flags(command.launcher, out, &mut seen, &mut unknowns);
    // HfArgumentParser's flags, or Megatron-LM's (`megatron/training/arguments.py`)
    let import = out.framework.spec().import.as_ref();
    let reads = import.map(|i| i.reads);
    let words = import.map_or(super::spec::all_words as fn(Field) -> Option<usize>, |i| {
        i.words
    });
    let hf = reads == Some(Reads::TrainingArguments);
    let mut leading = true;
    for (flag, values) in flags(command.program) {
        if flag.is_empty() {
            // words before the first flag: positional arguments the script does not take
            if leading {
                for v in values {
                    out.unknown(v.to_string());
                }
            }
            continue;
        }
        leading = false;
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (flag, None),
        };
        let key = name.replace('-', "_");
        let shown = format!("--{name}");
        if out.scope == Scope::Cluster {
            out.unknown(shown);
            continue;
        }
        // HfArgumentParser's `--no_<flag>` for a boolean that defaults to True
        let negated = key
            .strip_prefix("no_")
            .filter(|_| hf && inline.is_none())
            .and_then(|k| config_field(out.framework, k))
            .filter(|f| f.kind() == super::Kind::Flag);
        if let Some(field) = negated {
            for v in values {
                out.unknown(v.to_string());
            }
            out.input(field, "false".into(), &mut seen, &shown);
            continue;
        }
        let Some(field) = config_field(out.framework, &key) else {
            out.unknown(shown);
            continue;
        };
        let value = match (inline, field.kind()) {
            (Some(v), super::Kind::Flag) if hf && values.is_empty() => {
                hf_bool(v).map_or_else(|| v.to_string(), str::to_string)
            }
            (Some(v), _) if values.is_empty() => v.to_string(),
            (Some(_), _) => {
                out.error(format!(
                    "{shown}= is followed by more words ({}); the field is left empty",
                    values.join(" ")
                ));
                continue;
            }
            // HfArgumentParser: `--flag` alone is True, `--flag false` says it
            (None, super::Kind::Flag)
                if hf && values.len() == 1 && hf_bool(values[0]).is_some() =>
            {
                hf_bool(values[0]).unwrap_or("true").to_string()
            }
            // a store_true flag takes no value; words after it are positional
            (None, super::Kind::Flag) => {
                for v in values {
                    out.unknown(v.to_string());
                }
                "true".to_string()
            }
            (None, _) if values.is_empty() => {
                out.error(format!("{shown} needs a value"));
                continue;
            }
            (None, _) => match words(field) {
                // argparse takes its words, does not know the rest and stops: the run never
                // starts, so nothing is taken (a value split by an unquoted `${ARGS[@]}`)
                Some(n) if values.len() > n => {
                    out.error(format!(
                        "{shown} takes {n} word(s) but is followed by {} ({}); argparse stops: \
                         \u{201c}unrecognized arguments: {}\u{201d}. The field is left empty; \
                         quote the value where it is expanded",
                        values.len(),
                        super::parse::shorten(&values.join(" ")),
                        super::parse::shorten(&values[n..].join(" "))
                    ));
                    continue;
                }
                _ => values.join(" "),
            },
        };
        if unknowns.unknown(out, &shown, &value) {
            continue;
        }
        out.input(field, value, &mut seen, &shown);
    }
    unknowns.report(out);
}

/// One value for a launcher flag (`--nnodes 2` or `--nnodes=2`).
fn one_value(flag: &str, values: &[&str]) -> Option<String> {
    match (flag.split_once('='), values) {
        (Some((_, v)), []) => Some(v.to_string()),
        (None, [v]) => Some(v.to_string()),
        _ => None,
    }
}

/// Groups words into `(flag without "--", following words)`; words before the first flag come
/// with an empty flag. A word is a flag when it starts with `--` and is longer than that, so
/// negative numbers (`-1`) are values.
fn flags(words: &[String]) -> Vec<(&str, Vec<&str>)> {
    let mut groups: Vec<(&str, Vec<&str>)> = vec![("", Vec::new())];
    for w in words {
        match w.strip_prefix("--").filter(|r| !r.is_empty()) {
            Some(flag) => groups.push((flag, Vec::new())),
            None => {
                if let Some(last) = groups.last_mut() {
                    last.1.push(w);
                }
            }
        }
    }
    if groups[0].1.is_empty() {
        groups.remove(0);
    }
    groups
}

// ---- nested configs read as dotted paths (nanotron YAML, accelerate YAML, torchtitan TOML) --

/// The deepest nesting read; deeper values are listed by their path.
const MAX_DEPTH: usize = 8;

/// At most this many values are read from a nested config.
const MAX_LEAVES: usize = 20_000;

/// A value of a nested config, by its dotted path.
struct Leaf {
    path: String,
    /// The value as text; `None` for a list or another value dpcalc never reads.
    value: Option<String>,
    /// Where the key is (`line 3, column 1`).
    at: String,
}

/// Fills the fields `field` names for each leaf; lists the others. A section with no value
/// dpcalc reads is listed once by its path (`checkpoints`), not key by key.
fn read_leaves(out: &mut Imported, leaves: Vec<Leaf>, field: impl Fn(&str) -> Option<Field>) {
    let mut seen = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for leaf in leaves {
        match (field(&leaf.path), leaf.value) {
            (Some(f), Some(v)) => {
                known.push(leaf.path);
                out.input(f, v, &mut seen, &leaf.at);
            }
            (Some(_), None) => out.error(format!(
                "{}: {} is not a single value; the field is left empty",
                leaf.at,
                super::parse::shorten(&leaf.path)
            )),
            (None, _) => unknown.push(leaf.path),
        }
    }
    let mut listed: Vec<String> = Vec::new();
    for path in unknown {
        // the shortest section of the path that holds no key dpcalc read
        let mut end = 0;
        let section = loop {
            end = match path[end..].find('.') {
                Some(i) => end + i,
                None => break path.as_str(),
            };
            let prefix = &path[..end];
            if !known.iter().any(|k| {
                k.strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'))
            }) {
                break prefix;
            }
            end += 1;
        };
        if !listed.iter().any(|l| l == section) {
            listed.push(section.to_string());
            out.unknown(section);
        }
    }
}

/// A YAML mapping's values by their dotted paths (scalar anchors resolved, collection aliases
/// never expanded, lists not read). `None` after an error (recorded in `out`).
fn yaml_leaves(text: &str, out: &mut Imported, what: &str) -> Option<Vec<Leaf>> {
    enum Frame {
        /// A mapping at `path`; the pending key (`None` until one is read, `Some(None)` for a key
        /// that is not text).
        Map {
            path: String,
            key: Option<Option<(String, Marker)>>,
        },
        /// A list, a too-deep mapping, or a collection used as a key: not read.
        Skip,
    }
    let join = |path: &str, key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    let mut parser = Parser::new_from_str(text);
    let mut frames: Vec<Frame> = Vec::new();
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut anchors: Vec<(usize, String, TScalarStyle)> = Vec::new();
    let mut documents = 0usize;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(e) => e,
            Err(e) => {
                out.malformed(format!("YAML error at {}: {}", at(e.marker()), e.info()));
                return None;
            }
        };
        // a scalar (resolved), or the start of a collection (true: a mapping)
        let node: Result<(String, TScalarStyle), bool> = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    out.error(format!(
                        "{}: a second YAML document (---); only the first is read",
                        at(&mark)
                    ));
                    return None;
                }
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                continue;
            }
            Event::MappingStart(..) => Err(true),
            Event::SequenceStart(..) => Err(false),
            Event::Scalar(value, style, anchor, _) => {
                if anchor != 0 && anchors.len() < 4096 {
                    anchors.push((anchor, value.clone(), style));
                }
                Ok((value, style))
            }
            Event::Alias(id) => match anchors.iter().find(|(a, _, _)| *a == id) {
                Some((_, v, st)) => Ok((v.clone(), *st)),
                // an alias of a collection: not expanded (read as a list would be)
                None => {
                    if let Some(Frame::Map { path, key }) = frames.last_mut() {
                        match key.take() {
                            None => *key = Some(None),
                            Some(Some((k, m))) => leaves.push(Leaf {
                                path: join(path, &k),
                                value: None,
                                at: at(&m),
                            }),
                            Some(None) => {}
                        }
                    }
                    continue;
                }
            },
        };
        let depth = frames.len();
        let Some(top) = frames.last_mut() else {
            // the document's root
            match node {
                Err(true) => frames.push(Frame::Map {
                    path: String::new(),
                    key: None,
                }),
                Err(false) => {
                    out.error(format!(
                        "{}: the YAML is a list; {what} is a mapping of keys",
                        at(&mark)
                    ));
                    return None;
                }
                Ok((v, st)) if is_null(&v, st) => {}
                Ok(_) => {
                    out.error(format!(
                        "{}: the YAML is a single value; {what} is a mapping of keys",
                        at(&mark)
                    ));
                    return None;
                }
            }
            continue;
        };
        let Frame::Map { path, key } = top else {
            if node.is_err() {
                frames.push(Frame::Skip);
            }
            continue;
        };
        match (key.take(), node) {
            // a key
            (None, Ok((k, _))) => *key = Some(Some((k, mark))),
            (None, Err(_)) => {
                *key = Some(None);
                frames.push(Frame::Skip);
            }
            // a value
            (Some(k), node) => {
                let entry = k.map(|(k, m)| (join(path, &k), at(&m)));
                match (entry, node) {
                    (Some((p, a)), Ok((v, st))) => {
                        if !is_null(&v, st) && leaves.len() < MAX_LEAVES {
                            leaves.push(Leaf {
                                path: p,
                                value: Some(scalar_text(v, st)),
                                at: a,
                            });
                        }
                    }
                    (Some((p, _)), Err(true)) if depth < MAX_DEPTH => {
                        frames.push(Frame::Map { path: p, key: None })
                    }
                    (Some((p, a)), Err(_)) => {
                        if leaves.len() < MAX_LEAVES {
                            leaves.push(Leaf {
                                path: p,
                                value: None,
                                at: a,
                            });
                        }
                        frames.push(Frame::Skip);
                    }
                    (None, Err(_)) => frames.push(Frame::Skip),
                    (None, Ok(_)) => {}
                }
            }
        }
    }
    Some(leaves)
}

/// nanotron's config YAML (`src/nanotron/config/config.py`): `parallelism.dp`, `tokens.…`,
/// `model.model_config.…`, through the Spec's alias.
fn yaml_nested(text: &str, out: &mut Imported) {
    let what = format!("a {} config", out.framework.name());
    let Some(leaves) = yaml_leaves(text, out, &what) else {
        return;
    };
    let framework = out.framework;
    read_leaves(out, leaves, |path| config_field(framework, path));
}

/// accelerate's config YAML (`accelerate/commands/config/config_args.py`): `num_machines` and
/// `num_processes` give the cluster; the rest is listed.
fn accelerate(text: &str, out: &mut Imported) {
    let Some(leaves) = yaml_leaves(text, out, "an accelerate config") else {
        return;
    };
    let (mut machines, mut procs) = (None, None);
    let mut rest = Vec::new();
    for leaf in leaves {
        match (leaf.path.as_str(), &leaf.value) {
            ("num_machines", Some(v)) => machines = Some((v.clone(), leaf.at)),
            ("num_processes", Some(v)) => procs = Some((v.clone(), leaf.at)),
            _ => rest.push(leaf),
        }
    }
    read_leaves(out, rest, |_| None);
    let mut seen = Vec::new();
    processes(machines, procs, out, &mut seen);
}

/// The deepest nesting of arrays and inline tables read (basic-toml recurses without a limit).
const MAX_TOML_NESTING: usize = 32;

/// The line where `[`/`{` nesting outside strings and comments, or a dotted key or table name,
/// first goes deeper than [`MAX_TOML_NESTING`], if it does: a guard before the parser (TOML's four string forms and its
/// comments are skipped as the TOML spec lexes them), not a parser.
fn toml_too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut line) = (0usize, 0usize, 1usize);
    // the dotted segments of the line's key or table header (`a.b.c`): tables nest too
    let (mut dots, mut in_value) = (0usize, false);
    // the end of a string opened at `i` by `delim` (escapes only in basic strings)
    let skip = |mut i: usize, delim: &[u8], line: &mut usize| {
        let escapes = delim[0] == b'"';
        while i < b.len() {
            if b[i] == b'\n' {
                *line += 1;
            }
            if escapes && b[i] == b'\\' {
                i += 2;
                continue;
            }
            if b[i..].starts_with(delim) {
                return i + delim.len();
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
                (dots, in_value) = (0, false);
            }
            b'=' => {
                in_value = true;
                i += 1;
            }
            b'.' if !in_value => {
                dots += 1;
                if dots > MAX_TOML_NESTING {
                    return Some(line);
                }
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let triple = [q, q, q];
                i = if b[i..].starts_with(&triple) {
                    skip(i + 3, &triple, &mut line)
                } else {
                    skip(i + 1, &triple[..1], &mut line)
                };
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_TOML_NESTING {
                    return Some(line);
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// torchtitan's job TOML (`torchtitan/config/job_config.py`), parsed by `basic-toml` (into a
/// JSON value): each `[table] key` is read as `table.key` through the Spec's alias, in the
/// text's order.
fn toml(text: &str, out: &mut Imported) {
    use serde_json::Value;
    if let Some(line) = toml_too_deep(text) {
        out.malformed(format!(
            "TOML error at line {line}: arrays, inline tables or dotted keys nested more than {MAX_TOML_NESTING} deep; a job config has none"
        ));
        return;
    }
    let top: Value = match basic_toml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            // basic-toml's message ends with " at line L column C"
            let e = e.to_string();
            out.malformed(match e.rfind(" at line ") {
                Some(i) => format!("TOML error at {}: {}", &e[i + 4..], &e[..i]),
                None => format!("TOML error: {e}"),
            });
            return;
        }
    };
    // where each dotted key is: its table header and its `key =` line (the parser keeps none)
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut table = String::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[') {
            table = h
                .trim_matches(|c| c == '[' || c == ']' || c == ' ')
                .to_string();
        } else if let Some((k, _)) = l.split_once('=') {
            let k = k.trim().trim_matches('"');
            let path = if table.is_empty() {
                k.to_string()
            } else {
                format!("{table}.{k}")
            };
            if lines.len() < MAX_LEAVES {
                lines.push((path, n + 1));
            }
        }
    }
    let line_of = |p: &str| lines.iter().find(|(k, _)| k == p).map(|(_, n)| *n);
    let mut leaves: Vec<(usize, Leaf)> = Vec::new();
    let mut stack: Vec<(String, &Value, usize)> = vec![(String::new(), &top, 0)];
    while let Some((path, v, depth)) = stack.pop() {
        let Value::Object(map) = v else { continue };
        for (k, v) in map {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            let value = match v {
                Value::Object(_) if depth < MAX_DEPTH => {
                    stack.push((p, v, depth + 1));
                    continue;
                }
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            let line = line_of(&p).unwrap_or(usize::MAX);
            if leaves.len() < MAX_LEAVES {
                leaves.push((
                    line,
                    Leaf {
                        at: format!("line {line}"),
                        path: p,
                        value,
                    },
                ));
            }
        }
    }
    leaves.sort_by_key(|(line, _)| *line);
    let framework = out.framework;
    let mut leaves: Vec<Leaf> = leaves.into_iter().map(|(_, l)| l).collect();
    join_leaves(framework, &mut leaves);
    read_leaves(out, leaves, |path| config_field(framework, path));
}

/// The framework's joined keys (`Import::joined`): the second's value appended to the first's
/// as `first/second`, the second then read; without the first, the second stays unknown.
fn join_leaves(framework: Framework, leaves: &mut Vec<Leaf>) {
    let Some(import) = framework.spec().import.as_ref() else {
        return;
    };
    for (first, second) in import.joined {
        let Some(j) = leaves.iter().position(|l| l.path == *second) else {
            continue;
        };
        let Some(i) = leaves.iter().position(|l| l.path == *first) else {
            continue;
        };
        let tail = leaves[j].value.clone();
        if let (Some(v), Some(t)) = (leaves[i].value.as_mut(), tail) {
            v.push('/');
            v.push_str(&t);
            leaves.remove(j);
        }
    }
}

// ---- the Hugging Face Trainer's TrainingArguments ------------------------------------------

/// TrainingArguments as a JSON dict, HfArgumentParser's flags (after a launcher and the
/// script, or alone), or a `TrainingArguments(...)` call (as dpcalc exports it).
fn training_arguments(text: &str, out: &mut Imported) {
    let t = text.trim_start();
    if t.starts_with('{') {
        training_arguments_json(text, out);
    } else if text.contains("TrainingArguments(")
        || !text
            .split_whitespace()
            .any(|w| w.starts_with("--") && w.len() > 2)
    {
        python_call(text, out);
    } else {
        cli(text, out);
    }
}

fn training_arguments_json(text: &str, out: &mut Imported) {
    let map = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            out.malformed("the JSON is not an object; TrainingArguments is { \"key\": value, … }");
            return;
        }
        Err(e) => {
            out.malformed(format!(
                "JSON error at line {}, column {}: {}",
                e.line(),
                e.column(),
                json_reason(&e)
            ));
            return;
        }
    };
    json_duplicates(text, out, "the Trainer");
    let mut seen = Vec::new();
    for (key, value) in &map {
        use serde_json::Value;
        let text = match value {
            Value::Null => continue,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::String(s) => s.clone(),
            Value::Array(_) | Value::Object(_) => {
                out.unknown(key.clone());
                continue;
            }
        };
        match config_field(out.framework, key) {
            Some(f) => out.input(f, text, &mut seen, key),
            None => out.unknown(key.clone()),
        }
    }
}

/// Splits Python arguments at the commas outside quotes and parentheses; a `#` outside quotes
/// ends the text.
fn python_args(text: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut quote, mut escaped, mut start) = (0usize, None::<char>, false, 0usize);
    for (i, c) in text.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    args.push(text[start..i].trim());
                    start = i + 1;
                }
                '#' => {
                    args.push(text[start..i].trim());
                    start = text.len();
                    break;
                }
                _ => {}
            },
        }
    }
    if start < text.len() {
        args.push(text[start..].trim());
    }
    args.retain(|a| !a.is_empty());
    args
}

/// A Python literal as form text (`True` → `true`, a quoted string unquoted); `Err` for an
/// expression; `Ok(None)` for `None`.
fn python_literal(v: &str) -> Result<Option<String>, ()> {
    match v {
        "True" => return Ok(Some("true".into())),
        "False" => return Ok(Some("false".into())),
        "None" => return Ok(None),
        _ => {}
    }
    if v.starts_with('"') {
        return serde_json::from_str::<String>(v).map(Some).map_err(|_| ());
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        if !inner.contains(['\'', '\\']) {
            return Ok(Some(inner.to_string()));
        }
        return Err(());
    }
    let number = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'));
    if number {
        Ok(Some(v.replace('_', "")))
    } else {
        Err(())
    }
}

/// `TrainingArguments(key=value, …)` in Python, one argument a line or several; accelerate's
/// `ParallelismConfig(tp_size=…)` inside it; dpcalc's commented `# max_length=…` (TRL's) and
/// `# parallelism_config=…` lines.
fn python_call(text: &str, out: &mut Imported) {
    let mut seen = Vec::new();
    let mut read_any = false;
    for (n, line) in text.lines().enumerate() {
        let mut l = line.trim();
        if let Some(c) = l.strip_prefix('#') {
            let c = c.trim();
            if c.starts_with("max_length=") || c.starts_with("parallelism_config=") {
                l = c;
            } else {
                continue;
            }
        }
        if l.starts_with("from ") || l.starts_with("import ") {
            continue;
        }
        if let Some(i) = l.find("TrainingArguments(") {
            l = &l[i + "TrainingArguments(".len()..];
        }
        let at = format!("line {}", n + 1);
        let mut args = python_args(l);
        // the call's closing parenthesis
        if let Some(last) = args.last_mut() {
            if last.matches(')').count() > last.matches('(').count() {
                *last = last.strip_suffix(')').unwrap_or(last).trim_end();
            }
        }
        let mut queue: Vec<&str> = args.into_iter().rev().collect();
        while let Some(arg) = queue.pop() {
            if arg.is_empty() {
                continue;
            }
            let Some((key, value)) = arg.split_once('=') else {
                out.unknown(arg.to_string());
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            if key.is_empty()
                || !key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
            {
                out.unknown(arg.to_string());
                continue;
            }
            read_any = true;
            if let Some(inner) = value
                .strip_prefix("ParallelismConfig(")
                .and_then(|v| v.strip_suffix(')'))
            {
                queue.extend(python_args(inner).into_iter().rev());
                continue;
            }
            let Some(field) = config_field(out.framework, key) else {
                out.unknown(key.to_string());
                continue;
            };
            match python_literal(value) {
                Ok(Some(v)) => out.input(field, v, &mut seen, &at),
                Ok(None) => {}
                Err(()) => out.error(format!(
                    "{at}: {key}={} is not a literal; the field is left empty",
                    super::parse::shorten(value)
                )),
            }
        }
    }
    if !read_any && out.errors.is_empty() && !text.contains("TrainingArguments(") {
        out.error(NOT_A_CONFIG);
    }
}

// ---- a model's config.json ----------------------------------------------------------------

/// config.json keys with another name under Megatron (`--num-layers`, …), or one of the MoE
/// spellings (`num_local_experts` in Mixtral, `n_routed_experts` in DeepSeek-V3).
fn model_key(framework: Framework, key: &str) -> &str {
    let megatron = framework.has(Field::NumLayers);
    match key {
        "num_local_experts" | "n_routed_experts" => "num_experts",
        "num_hidden_layers" if megatron => "num_layers",
        "intermediate_size" if megatron => "ffn_hidden_size",
        "num_key_value_heads" if megatron => "num_query_groups",
        "head_dim" if megatron => "kv_channels",
        "num_experts_per_tok" if megatron => "moe_router_topk",
        "moe_intermediate_size" if megatron => "moe_ffn_hidden_size",
        k => k,
    }
}

/// A pasted model `config.json` (a JSON object with `model_type`): its architecture keys as the
/// current framework's fields (Megatron's own names under Megatron), the rest listed as ignored.
/// `None` when the text is not one. [`Imported::merged_into`] applies it over the other inputs.
pub fn model_config(framework: Framework, text: &str) -> Option<Imported> {
    if text.len() > MAX_INPUT {
        return None;
    }
    let top: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let map = top.as_object()?;
    map.get("model_type")?.as_str()?;
    let mut out = Imported::new(framework);
    out.scope = Scope::Model;
    let mut seen = Vec::new();
    let spec = framework.spec();
    for (key, value) in map {
        let name = model_key(framework, key);
        let field = match name {
            "tie_word_embeddings" if framework.has(Field::UntieEmbeddingsAndOutputWeights) => {
                if let Some(b) = value.as_bool() {
                    out.input(
                        Field::UntieEmbeddingsAndOutputWeights,
                        (!b).to_string(),
                        &mut seen,
                        key,
                    );
                }
                continue;
            }
            _ if super::fit::is_architecture_key(name) => super::fit::field_of(spec, name),
            _ => None,
        };
        match (field, value) {
            (Some(_), serde_json::Value::Null) => {}
            (Some(f), serde_json::Value::String(s)) => out.input(f, s.clone(), &mut seen, key),
            (Some(f), serde_json::Value::Bool(b)) => out.input(f, b.to_string(), &mut seen, key),
            (Some(f), serde_json::Value::Number(n)) => out.input(f, n.to_string(), &mut seen, key),
            _ => out.unknown(key.clone()),
        }
    }
    if framework.has(Field::GroupQueryAttention) {
        let heads = map
            .get("num_attention_heads")
            .and_then(serde_json::Value::as_u64);
        let kv = map
            .get("num_key_value_heads")
            .and_then(serde_json::Value::as_u64);
        if let (Some(h), Some(k)) = (heads, kv) {
            out.input(
                Field::GroupQueryAttention,
                (k != h).to_string(),
                &mut seen,
                "num_key_value_heads",
            );
        }
    }
    Some(out.finish())
}

impl Imported {
    /// The inputs after an import: a config replaces them; a model config replaces only the
    /// model (its preset key and every architecture key), a cluster import only the cluster
    /// shape, and both keep the rest.
    pub fn merged_into(&self, current: &RawInputs) -> RawInputs {
        let spec = self.framework.spec();
        let mut raw = current.clone();
        match self.scope {
            Scope::Config => return self.raw(),
            Scope::Cluster => {
                for &f in CLUSTER {
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
            if super::fit::is_architecture_key(key) {
                raw.set(f, "");
            }
        }
        for (f, v) in &self.inputs {
            raw.set(*f, v.as_str());
        }
        raw
    }
}
