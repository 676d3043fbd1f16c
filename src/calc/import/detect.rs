//! What a pasted text is ([`Format`]): a config of which framework (by the syntax its
//! `Spec::import` reads, and the keys only one of them has), only a cluster shape (accelerate's
//! config, a bare launcher line), or no config dpcalc reads.

use super::launcher::split_command;
use super::shell;
use super::words::flags;
use super::{config_field, importable, reading, MAX_INPUT};
use crate::calc::spec::{Reads, TrainingLog};
use crate::calc::Framework;

/// What a pasted text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A config of this framework.
    Config(Framework),
    /// Only a cluster shape: an accelerate config YAML, or a launcher line (`torchrun --nnodes 2
    /// --nproc_per_node 8 train.py`) whose script arguments no framework here reads.
    Cluster,
    /// An excerpt of a training log (its measured speed, `import/log.rs`).
    Log(TrainingLog),
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
    if let Some(kind) = super::log::kind(text) {
        return Format::Log(kind);
    }
    if text.trim_start().starts_with('{') {
        return json_format(text);
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
        return yaml_format(text);
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
    command_format(text)
}

/// A format dpcalc reads, or unknown when no framework in this build reads it.
fn config(reads: Reads) -> Format {
    match reading(reads) {
        Some(f) => Format::Config(f),
        None => Format::Unknown,
    }
}

/// A JSON object: TrainingArguments' or DeepSpeed's, by the keys only one of them reads.
fn json_format(text: &str) -> Format {
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
    config(if hf {
        Reads::TrainingArguments
    } else {
        Reads::Json
    })
}

/// YAML: accelerate's config (a cluster), nanotron's, or axolotl's.
fn yaml_format(text: &str) -> Format {
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
    config(if nanotron {
        Reads::YamlNested
    } else {
        Reads::Yaml
    })
}

/// A command line or script: the script's flags decide between the Hugging Face Trainer and
/// Megatron-LM; a launcher alone is a cluster.
fn command_format(text: &str) -> Format {
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
pub fn looks_yaml(text: &str) -> bool {
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
