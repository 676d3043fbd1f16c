//! accelerate's config YAML (`accelerate config`, `default_config.yaml`,
//! `accelerate/commands/config/config_args.py`): `num_machines` and `num_processes` give the
//! cluster; its `parallelism_config:` block gives accelerate's `ParallelismConfig` sizes, which
//! fill the fields of a framework that reads them through accelerate (`Spec::import.accelerate`)
//! where that framework's own config leaves them unset. The rest is listed.
//!
//! accelerate 1.12+ (`commands/launch.py::_validate_launch_command`) copies each
//! `parallelism_config_*` key to the launcher's argument of that name when the block is not
//! empty, and `utils/launch.py::prepare_extend_env_parallelism_config` hands the sizes and
//! backends to the run as `PARALLELISM_CONFIG_*`, which `ParallelismConfig.__post_init__`
//! (`parallelism_config.py`) reads for every size the program did not give.

use super::launcher::processes;
use super::leaves::{read_leaves, Leaf};
use super::yaml::yaml_leaves;
use super::Imported;
use crate::calc::Field;

/// The fields filled so far, with where (a key given twice is an error).
type Seen = Vec<(Field, String)>;

/// The block's prefix in the YAML and on each of its keys.
const BLOCK: &str = "parallelism_config.";
const PREFIX: &str = "parallelism_config_";

/// `ParallelismConfig`'s sizes, in `total_size`'s product: each 1 by default.
const SIZES: [&str; 5] = [
    "dp_replicate_size",
    "dp_shard_size",
    "tp_size",
    "cp_size",
    "sp_size",
];

/// The backends `ParallelismConfig.__post_init__` accepts (it raises for any other).
const BACKENDS: [(&str, &str); 2] = [("cp_backend", "torch"), ("sp_backend", "deepspeed")];

/// An accelerate config: the cluster and the `parallelism_config` block.
pub(super) fn config(text: &str, out: &mut Imported) {
    let Some(leaves) = yaml_leaves(text, out, "an accelerate config") else {
        return;
    };
    let (mut machines, mut procs) = (None, None);
    let (mut block, mut rest) = (Vec::new(), Vec::new());
    for leaf in leaves {
        match (leaf.path.as_str(), &leaf.value) {
            ("num_machines", Some(v)) => machines = Some((v.clone(), leaf.at)),
            ("num_processes", Some(v)) => procs = Some((v.clone(), leaf.at)),
            (p, _) if p.starts_with(BLOCK) => block.push(leaf),
            _ => rest.push(leaf),
        }
    }
    read_leaves(out, rest, |_| None);
    let world = procs
        .as_ref()
        .and_then(|(v, _)| v.trim().parse::<u64>().ok());
    let mut seen = Vec::new();
    processes(machines, procs, out, &mut seen);
    parallelism(block, world, out, &mut seen);
}

/// A size as accelerate reads it back from the environment (`int(…)`), if it is one.
fn size(leaf: &Leaf) -> Option<u64> {
    leaf.value.as_deref()?.trim().parse().ok()
}

/// The `parallelism_config` block: the sizes the framework takes through accelerate fill its
/// fields; a size it does not take, a backend accelerate refuses and sizes whose product
/// accelerate refuses are warnings at their keys.
fn parallelism(block: Vec<Leaf>, world: Option<u64>, out: &mut Imported, seen: &mut Seen) {
    let takes = out
        .framework
        .spec()
        .import
        .as_ref()
        .map_or(&[][..], |i| i.accelerate);
    let mut sizes: Vec<(&str, u64)> = Vec::new();
    let mut sp_backend = String::from("deepspeed");
    for leaf in block {
        let key = leaf.path[BLOCK.len()..]
            .strip_prefix(PREFIX)
            .unwrap_or_default();
        let sized = SIZES.iter().find(|s| **s == key).copied();
        if let (Some(s), Some(n)) = (sized, size(&leaf)) {
            sizes.push((s, n));
        }
        if let Some(&(_, field)) = takes.iter().find(|(k, _)| *k == key) {
            match &leaf.value {
                Some(v) => out.input(field, v.clone(), seen, &leaf.at),
                None => out.error(format!(
                    "{}: {} is not a single value; the field is left empty",
                    leaf.at, leaf.path
                )),
            }
        } else if let Some(s) = sized {
            match size(&leaf) {
                // the data-parallel sizes of a framework that takes the block are checked
                // with the others ([`total_size`]); they change nothing else
                Some(n) if n > 1 && (takes.is_empty() || !s.starts_with("dp_")) => {
                    let name = out.framework.name();
                    out.warning(format!(
                        "{}: accelerate's ParallelismConfig gets {s} {n} from this config, but dpcalc does not apply \
                         accelerate's parallelism_config to {name} (the page computes the data-parallel size and the \
                         batch from {name}'s own keys): a run that takes it has another layout, and may have another \
                         batch, than the page shows; set {name}'s own key instead",
                        leaf.path
                    ));
                }
                Some(_) => {}
                None => out.warning(format!(
                    "{}: not a whole number: accelerate reads {s} back with int() and refuses it",
                    leaf.path
                )),
            }
        } else if let Some(&(b, valid)) = BACKENDS.iter().find(|(b, _)| *b == key) {
            let v = leaf.value.clone().unwrap_or_default();
            if v != valid {
                out.warning(format!(
                    "{}: accelerate refuses it (ParallelismConfig.__post_init__): \u{201c}{b} must be one of \
                     ['{valid}'], but got {v}\u{201d}; dpcalc cannot apply it: the page computes as with {valid}",
                    leaf.path
                ));
            }
            if b == "sp_backend" {
                sp_backend = v;
            }
        } else {
            // the launcher's other `parallelism_config_*` arguments (`commands/launch.py`:
            // `cp_comm_strategy`, `sp_seq_length`, `sp_seq_length_is_variable`,
            // `sp_attn_implementation`: how CP communicates, what Ulysses expects of the
            // sequence) change no batch or step: not read, and listed so, as any other key
            out.unknown(leaf.path);
        }
    }
    if !takes.is_empty() {
        total_size(&sizes, world, &sp_backend, out);
    }
}

/// `ParallelismConfig._validate_accelerator`: the five sizes (1 where the block does not give
/// one, as the launcher's defaults are) must multiply to the processes, unless their product is
/// 1 or DeepSpeed runs the sequence parallelism (`sp_backend` deepspeed, `sp_size` > 1), where
/// accelerate skips the check. The page has no field for the data-parallel sizes, so a product
/// accelerate refuses is a warning.
fn total_size(sizes: &[(&str, u64)], world: Option<u64>, sp_backend: &str, out: &mut Imported) {
    let get = |k: &str| sizes.iter().find(|(s, _)| *s == k).map_or(1, |&(_, n)| n);
    let total = SIZES
        .iter()
        .try_fold(1u128, |p, k| p.checked_mul(u128::from(get(k))));
    if total == Some(1) || (get("sp_size") > 1 && sp_backend == "deepspeed") {
        return;
    }
    let total = total.map_or_else(|| "a number beyond 2^128".into(), |t| t.to_string());
    match world {
        Some(w) if total == w.to_string() => {}
        Some(w) => out.warning(format!(
            "parallelism_config: accelerate refuses the launch (ParallelismConfig._validate_accelerator): \
             \u{201c}ParallelismConfig total_size ({total}) does not match num_processes ({w}). Please adjust \
             dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size.\u{201d} The page has no field for the \
             data-parallel sizes and computes dp = world_size // tp // cp // sp"
        )),
        None => out.warning(format!(
            "parallelism_config: the sizes multiply to {total}, which accelerate requires to equal num_processes; \
             this config does not give num_processes, so dpcalc does not check it"
        )),
    }
}
