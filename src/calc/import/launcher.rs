//! The cluster shape of a launch: a command split at its script ([`split_command`]), the
//! launcher's flags (`torchrun --nnodes 2 --nproc_per_node 8`, `deepspeed --num_nodes`,
//! `accelerate launch --num_machines`), also for accelerate's config YAML (`num_machines`,
//! `num_processes`, read in `accelerate.rs`). Alone, they fill only the cluster
//! (`Scope::Cluster`).

use super::words::{flags, Unknowns};
use super::Imported;
use crate::calc::Field;

/// A command split at its script.
pub(super) struct Command<'a> {
    /// The launcher and its flags (`torchrun --nnodes 2 …`), before the script.
    pub(super) launcher: &'a [String],
    /// The script (`…/pretrain_gpt.py`, or the module after `-m`), if any.
    pub(super) script: Option<&'a str>,
    /// The script's arguments (every word when there is neither a script nor a launcher).
    pub(super) program: &'a [String],
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
pub(super) fn split_command(words: &[String]) -> Command<'_> {
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
/// accelerate's `--num_machines`, `--num_processes` (all processes: see [`processes`]); its
/// `--config_file` is a warning (the file it names holds the cluster and the parallel sizes).
pub(super) fn launcher_flags(
    words: &[String],
    out: &mut Imported,
    seen: &mut Vec<(Field, String)>,
    unknowns: &mut Unknowns,
) {
    let (mut machines, mut procs) = (None, None);
    let mut counts = Vec::new();
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
            n if accelerate_file_flag(n, flag, &values, out) => continue,
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
        // the word the value is in, for the defaults it came from
        let parts = if flag.contains('=') {
            vec![flag]
        } else {
            values
        };
        match field {
            Some(f) => {
                unknowns.taken(out, f, &shown, &parts);
                out.input(f, value, seen, &shown)
            }
            None => {
                // accelerate's machines give the nodes and (÷) the GPUs per node; its processes
                // the GPUs per node or the world size
                let fields = if name.ends_with("machines") {
                    machines = Some((value, shown.clone()));
                    [Field::Nodes, Field::GpusPerNode]
                } else {
                    procs = Some((value, shown.clone()));
                    [Field::GpusPerNode, Field::WorldSize]
                };
                counts.push((fields, shown, parts));
            }
        }
    }
    processes(machines, procs, out, seen);
    for (fields, shown, parts) in counts {
        for f in fields {
            unknowns.taken(out, f, &shown, &parts);
        }
    }
}

/// accelerate launch's flags for what a config file holds: `--parallelism_config_*` and
/// `--use_parallelism_config`, and `--config_file`; each a warning. Whether `name` (underscores
/// for dashes) is one.
fn accelerate_file_flag(name: &str, flag: &str, values: &[&str], out: &mut Imported) -> bool {
    let shown = format!("--{}", flag.split_once('=').map_or(flag, |(n, _)| n));
    if name.starts_with("parallelism_config_") || name == "use_parallelism_config" {
        // accelerate commands/launch.py: the sizes reach the run only with
        // --use_parallelism_config (which it refuses without --use_fsdp and
        // --fsdp_version 2) or from a config file's non-empty parallelism_config
        out.warning(format!(
            "{shown}: accelerate launch hands its ParallelismConfig arguments to the run only with \
             --use_parallelism_config (FSDP2 only) or from a config file's parallelism_config, and dpcalc does \
             not read them from the launch line: type tp_size, cp_size or sp_size in the form, or import the \
             accelerate config"
        ));
        return true;
    }
    if name != "config_file" {
        return false;
    }
    let file = one_value(flag, values).unwrap_or_default();
    out.warning(format!(
        "{shown} {file}: accelerate launch reads the cluster and the parallelism_config (whose tp_size, \
         cp_size and sp_size divide the data-parallel size and the batch) from that file, which is not in \
         this text: dpcalc applies them when that accelerate config is imported too (on the page, after \
         this text; to dpcalc check, beside it)"
    ));
    true
}

/// accelerate's `num_machines` and `num_processes` (the processes of all machines, one a GPU):
/// the nodes, and GPUs per node = processes ÷ machines when it divides, else the world size.
pub(super) fn processes(
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

/// One value for a launcher flag (`--nnodes 2` or `--nnodes=2`).
fn one_value(flag: &str, values: &[&str]) -> Option<String> {
    match (flag.split_once('='), values) {
        (Some((_, v)), []) => Some(v.to_string()),
        (None, [v]) => Some(v.to_string()),
        _ => None,
    }
}
