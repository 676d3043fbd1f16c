//! The command line, `dpcalc check` and `dpcalc plan`: the page's core run natively on configs
//! in files, links and flags, for CI before a run and for docs at build time. Native only
//! (`main.rs` calls it outside wasm), so nothing of it enters the wasm builds.
//!
//! [`read`] turns the arguments into the page's state through the page's own Import and link
//! decoder; [`print`] renders the report the core computed from it. Exit status: 0 when the
//! framework accepts the config and every `--expect` holds, 1 when the framework refuses it or
//! an expectation fails (the reasons on standard error, each naming its key), 2 when the input
//! cannot be read (nothing computed is printed then). Argument parsing is clap's.
//!
//! [`plan`] prints the page's planner rows for the same state (`dpcalc plan`), with its statuses.

pub mod plan;
pub mod print;
pub mod read;
pub mod scale;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::calc::card;

/// Exactly what global batch size and how many optimizer steps a distributed training run gets,
/// for the framework and release you use.
#[derive(Parser, Debug)]
#[command(name = "dpcalc", version, propagate_version = false)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute what the framework does with a config: its values with their rules, warnings,
    /// refusals with their fixes, and the estimates with their sources.
    ///
    /// Reads any format the page's Import reads (axolotl and nanotron YAML, DeepSpeed JSON, HF
    /// TrainingArguments as flags, JSON or a Python call, torchtitan TOML, a Megatron command
    /// line), an accelerate config or a launcher line for the cluster, a model's config.json,
    /// or a link. Exit status: 0 accepted (and every --expect holds), 1 refused or an --expect
    /// failed, 2 the input cannot be read.
    #[command(disable_version_flag = true)]
    Check(CheckArgs),
    /// Rank the plans for a config, as the page's planner does (`view=plan`): every layout,
    /// micro batch, recompute and sharding the framework accepts that fits the GPU, fastest
    /// estimated step first, each with its link.
    ///
    /// Reads its inputs as `check` does. Exit status: 0 accepted (and --expect-within-best
    /// holds), 1 refused or the input's layout is not within the percentage of the best plan,
    /// 2 the input cannot be read.
    #[command(disable_version_flag = true)]
    Plan(plan::PlanArgs),
}

/// What `check` and `plan` read, and how (the page's Import and link decoder).
#[derive(Args, Debug, Default, Clone)]
pub struct InputArgs {
    /// Config files, a link (https://…?framework=… or ?…), or - for standard input; a config
    /// plus an accelerate config and a config.json are read together.
    #[arg(value_name = "FILE|LINK")]
    pub inputs: Vec<String>,
    /// The framework (axolotl, hf, deepspeed, megatron, torchtitan, nanotron); by default the
    /// one the config is detected as ("Read as" on the page).
    #[arg(long, value_name = "ID")]
    pub framework: Option<String>,
    /// The framework's release (a `version=` id); by default the link's, else the newest.
    #[arg(long = "version", value_name = "RELEASE")]
    pub release: Option<String>,
    /// Nodes in the cluster.
    #[arg(long, value_name = "N")]
    pub nodes: Option<String>,
    /// GPUs per node.
    #[arg(long = "gpus-per-node", value_name = "N")]
    pub gpus_per_node: Option<String>,
    /// Any key of the framework, as in a link (repeatable): --set micro_batch_size=2.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl InputArgs {
    /// The request `read::read` takes, with the expectations and the page's address.
    fn request(&self, expect: Vec<String>, base: Option<String>) -> read::Request {
        let InputArgs {
            inputs,
            framework,
            release,
            nodes,
            gpus_per_node,
            set,
        } = self.clone();
        read::Request {
            inputs,
            framework,
            release,
            nodes,
            gpus_per_node,
            set,
            expect,
            base,
        }
    }
}

#[derive(Args, Debug, Default)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Fail (exit 1) unless an output has this value (repeatable): --expect max_steps=1000;
    /// `none` expects no value.
    #[arg(long = "expect", value_name = "OUTPUT=VALUE")]
    pub expect: Vec<String>,
    /// Print JSON: the output contract's names and values, messages, fixes, rules.
    #[arg(long)]
    pub json: bool,
    /// Print only the shareable link.
    #[arg(long, conflicts_with = "json")]
    pub link: bool,
    /// Write the summary card (SVG) to this file.
    #[arg(long, value_name = "FILE.svg")]
    pub card: Option<PathBuf>,
    /// The page's address for the link and the card (by default a link's own, else none: the
    /// link is printed as its query).
    #[arg(long, value_name = "URL", env = "DPCALC_BASE")]
    pub base: Option<String>,
}

impl CheckArgs {
    fn request(&self) -> read::Request {
        self.input.request(self.expect.clone(), self.base.clone())
    }
}

/// Exit status: accepted, and every expectation holds.
pub const PASSED: u8 = 0;
/// The framework refuses the inputs, or an expectation fails.
pub const FAILED: u8 = 1;
/// The input cannot be read.
pub const UNREADABLE: u8 = 2;

/// `dpcalc check`: prints to `out`, the reasons for a status other than 0 to `err`.
pub fn check(args: &CheckArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let read = match read::read(&args.request()) {
        Ok(r) => r,
        Err(reasons) => {
            for r in reasons {
                let _ = writeln!(err, "dpcalc: {}", printable(&r, false));
            }
            return UNREADABLE;
        }
    };
    let printed = print::Printed::new(&read);
    if let Some(path) = &args.card {
        let state = &read.state;
        let svg = card::svg(
            state.link.framework,
            state.link.release().id,
            &state.link.inputs,
            &state.report,
            &printed.link,
        );
        if let Err(e) = std::fs::write(path, svg) {
            let said = format!("{}: cannot be written: {e}", path.display());
            let _ = writeln!(err, "dpcalc: {}", printable(&said, false));
            return UNREADABLE;
        }
    }
    let text = if args.json {
        json_escaped(&printed.json())
    } else if args.link {
        format!("{}\n", printable(&printed.link, false))
    } else {
        printable(&printed.text(), true)
    };
    let _ = out.write_all(text.as_bytes());
    if printed.passed() {
        PASSED
    } else {
        for r in printed.reasons() {
            let _ = writeln!(err, "dpcalc: {}", printable(&r, false));
        }
        FAILED
    }
}

/// Text for a terminal or a CI log: a control character the input carried (ESC, NUL, a line
/// break in a flag's value) as U+FFFD, so nothing given can move the cursor or forge a line;
/// `lines` keeps the text's own line breaks and tabs.
pub(super) fn printable(text: &str, lines: bool) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' if lines => c,
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// JSON with every control character but its line breaks as a `\u` escape: serde_json leaves
/// DEL and the C1 controls (U+009B is a terminal's CSI) raw in strings; escaped, the document
/// holds the same values. (Outside strings JSON has only ASCII punctuation and spaces.)
pub(super) fn json_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The binary's entry point.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Check(args) => check(args, &mut std::io::stdout().lock(), &mut std::io::stderr()),
        Command::Plan(args) => {
            plan::plan(args, &mut std::io::stdout().lock(), &mut std::io::stderr())
        }
    };
    ExitCode::from(code)
}
