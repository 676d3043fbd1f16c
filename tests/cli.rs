//! `dpcalc check`, the built binary: every link of `tests/links.txt` and every fixture record
//! gives exactly the page's values (the same core, read through the page's link decoder), every
//! config fixture gives what the page's Import and report give, and bad inputs give exit 2 with
//! the file (and line) named, or the field's error, never a panic. `dpcalc plan`: the page's
//! planner rows and links for every framework, and `--expect-within-best`.

use crate::common::{self, files};

use std::path::{Path, PathBuf};
use std::process::{Command, Output as Run, Stdio};

use dpcalc::calc::import::{self, Format};
use dpcalc::calc::planner::{self, Planner};
use dpcalc::calc::view::{self, PlanAttr, PlanRowView, PLAN_COLUMNS};
use dpcalc::calc::{card, num, Framework, Num, Output};
use dpcalc::query::Link;
use dpcalc::state::{plan_url, State};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_dpcalc");
const CONFIGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/configs");

fn dpcalc(args: &[&str]) -> Run {
    Command::new(BIN)
        .args(args)
        .env_remove("DPCALC_BASE")
        .stdin(Stdio::null())
        .output()
        .expect("the dpcalc binary runs")
}

fn code(run: &Run) -> i32 {
    // a panic exits 101, a signal has no code: both fail every assertion on the status
    run.status.code().unwrap_or(-1)
}

fn stdout(run: &Run) -> String {
    String::from_utf8(run.stdout.clone()).expect("UTF-8 on stdout")
}

fn stderr(run: &Run) -> String {
    String::from_utf8(run.stderr.clone()).expect("UTF-8 on stderr")
}

fn json(run: &Run) -> Value {
    serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(run), stderr(run)))
}

fn config(name: &str) -> String {
    format!("{CONFIGS}/{name}")
}

/// The `outputs` object of `dpcalc check --json` as written: each name with its JSON token
/// (read from the text, so an integer of any size and a float's exact digits are seen as printed).
fn output_tokens(run: &Run) -> Vec<(String, String)> {
    let text = stdout(run);
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim().starts_with("\"outputs\": {"));
    match lines.next().map(str::trim) {
        Some("\"outputs\": {},") => return Vec::new(),
        Some(_) => {}
        None => panic!("no outputs object in {text}"),
    }
    lines
        .take_while(|l| !l.trim().starts_with('}'))
        .map(|l| {
            let (name, token) = l.trim().split_once(": ").expect("\"name\": value");
            (
                name.trim_matches('"').to_string(),
                token.trim_end_matches(',').to_string(),
            )
        })
        .collect()
}

/// The differences between the printed outputs and a report's values: every output the report
/// has, with its type (an integer as a JSON integer, a float as a JSON float, its point or
/// exponent kept) and its exact value, and nothing else.
fn differences(run: &Run, report: &dpcalc::calc::Report) -> Vec<String> {
    let tokens = output_tokens(run);
    let mut diffs = Vec::new();
    for &o in Output::ALL {
        let want = report.value(o);
        let have = tokens
            .iter()
            .find(|(n, _)| n == o.name())
            .map(|(_, t)| t.as_str());
        let same = match (want, have) {
            (None, None) => true,
            (Some(Num::Int(i)), Some(t)) => t == i.to_string(),
            (Some(Num::Float(x)), Some(t)) => {
                (t.contains('.') || t.contains('e')) && t.parse::<f64>().ok() == Some(x)
            }
            _ => false,
        };
        if !same {
            diffs.push(format!(
                "{}: page {:?}, dpcalc check {have:?}",
                o.name(),
                want.map(Num::raw),
            ));
        }
    }
    // the lists of the contract: each pipeline stage's memory (allocated and reserved),
    // comma-separated
    const LISTS: [&str; 2] = ["memory_by_stage_bytes", "memory_reserved_by_stage_bytes"];
    for (name, stages) in LISTS.into_iter().zip([
        report.memory_by_stage_value(),
        report.memory_reserved_by_stage_value(),
    ]) {
        let have = tokens
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.trim_matches('"').to_string());
        if have != stages {
            diffs.push(format!("{name}: page {stages:?}, dpcalc check {have:?}"));
        }
    }
    if let Some((n, _)) = tokens
        .iter()
        .find(|(n, _)| Output::from_name(n).is_none() && !LISTS.contains(&n.as_str()))
    {
        diffs.push(format!("{n}: not an output name"));
    }
    diffs
}

/// Runs `dpcalc check --json ?QUERY` for each query (on two threads) and compares it with the
/// page's state for the same query.
fn same_as_the_page(queries: &[(String, String)]) {
    let failures: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = queries
            .chunks(queries.len().div_ceil(2).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let mut fails = Vec::new();
                    for (at, q) in chunk {
                        let arg = format!("?{q}");
                        let run = dpcalc(&["check", "--json", &arg]);
                        let page = State::from_query(q);
                        let errors = page.report.has_errors();
                        let want_code = if errors { 1 } else { 0 };
                        if code(&run) != want_code {
                            fails.push(format!(
                                "{at}: exit {} (want {want_code}); stderr: {}",
                                code(&run),
                                stderr(&run)
                            ));
                            continue;
                        }
                        let got = json(&run);
                        for d in differences(&run, &page.report) {
                            fails.push(format!("{at}: {d}"));
                        }
                        if got["accepted"] != Value::Bool(!errors) {
                            fails.push(format!("{at}: accepted {}", got["accepted"]));
                        }
                        if got["query"] != Value::String(page.query.clone()) {
                            fails.push(format!(
                                "{at}: link {} (the page writes {})",
                                got["query"], page.query
                            ));
                        }
                        let errs = got["messages"]
                            .as_array()
                            .map(|m| m.iter().filter(|m| m["level"] == "error").count());
                        let page_errs = page
                            .report
                            .diags
                            .iter()
                            .filter(|d| d.level == dpcalc::calc::Level::Error)
                            .count();
                        if errs != Some(page_errs) {
                            fails.push(format!("{at}: {errs:?} errors, the page {page_errs}"));
                        }
                    }
                    fails
                })
            })
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("a worker"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_link_of_links_txt_gives_the_pages_values() {
    let queries: Vec<(String, String)> = files::links()
        .into_iter()
        .map(|(line, q)| {
            (
                format!("links.txt:{line}"),
                q.trim_start_matches('?').to_string(),
            )
        })
        .collect();
    assert!(queries.len() >= 40, "{} links", queries.len());
    same_as_the_page(&queries);
}

#[test]
fn every_fixture_record_gives_the_pages_values() {
    let mut queries = Vec::new();
    for (file, text) in common::FIXTURES {
        let (_, records) = common::parse(text);
        assert!(!records.is_empty(), "{file}");
        queries.extend(
            records
                .into_iter()
                .map(|r| (format!("{file}.txt:{}", r.line), r.link)),
        );
    }
    assert!(queries.len() >= 2000, "{} records", queries.len());
    same_as_the_page(&queries);
}

/// What the page shows after pasting `files` in order into a fresh page of `framework`: a
/// config through Import (the newest release), then each cluster or model file over it.
fn pasted(framework: Framework, files: &[&str]) -> State {
    let mut state = State::from_link(Link {
        framework,
        release: Some(framework.default_release()),
        ..Link::default()
    });
    for f in files {
        let text = std::fs::read_to_string(config(f)).expect("a fixture");
        let (next, got) = common::paste(state, &text);
        assert!(got.errors.is_empty(), "{f}: {:?}", got.errors);
        state = next;
    }
    state
}

#[test]
fn every_config_fixture_gives_what_the_page_computes_from_the_same_paste() {
    // the files of configs/ and those of configs/real/*/ (as `real/FRAMEWORK/NAME`)
    let list = |dir: &str| -> Vec<String> {
        std::fs::read_dir(config(dir))
            .map(|d| {
                d.map(|e| e.expect("an entry").path())
                    .filter(|p| p.is_file())
                    .filter_map(|p| {
                        let name = p.file_name()?.to_string_lossy().into_owned();
                        let keep = name != "README.md" && !name.ends_with(".expect");
                        keep.then(|| format!("{dir}{name}"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut files = list("");
    for sub in [
        "axolotl",
        "deepspeed",
        "hf",
        "torchtitan",
        "nanotron",
        "accelerate",
        "megatron",
    ] {
        files.extend(list(&format!("real/{sub}/")));
    }
    files.sort();
    assert!(files.len() >= 22, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(config(f)).expect("a fixture");
        if !import::read(Framework::default(), None, &text)
            .errors
            .is_empty()
        {
            // a value the file does not give (DeepSpeed's "auto"): the page applies the rest,
            // the command refuses to check a half-read config
            let run = dpcalc(&["check", "--json", &config(f)]);
            assert_eq!(code(&run), 2, "{f}");
            assert!(run.stdout.is_empty(), "{f}");
            continue;
        }
        let run = dpcalc(&["check", "--json", &config(f)]);
        let got = json(&run);
        let model = import::model_config(Framework::default(), &text).is_some();
        let framework = match import::detect_format(&text) {
            Format::Config(fw) if !model => fw,
            _ => Framework::default(),
        };
        let page = pasted(framework, &[f.as_str()]);
        assert_eq!(got["framework"], framework.id(), "{f}");
        assert_eq!(got["version"], framework.default_release().id, "{f}");
        let diffs = differences(&run, &page.report);
        assert!(diffs.is_empty(), "{f}: {diffs:?}");
        assert_eq!(got["query"], Value::String(page.query.clone()), "{f}");
        let want_code = if page.report.has_errors() { 1 } else { 0 };
        assert_eq!(code(&run), want_code, "{f}: {}", stderr(&run));
        // the format is named, as Import names it
        let source = &got["sources"][0];
        assert_eq!(source["name"], config(f), "{f}");
        assert!(
            !source["read_as"].as_str().unwrap_or_default().is_empty(),
            "{f}"
        );
    }
}

#[test]
fn a_config_a_cluster_and_a_model_are_read_together_in_any_order() {
    let page = pasted(
        Framework::Axolotl,
        &["axolotl.yml", "accelerate.yaml", "llama-3.1-8b.config.json"],
    );
    for order in [
        ["axolotl.yml", "accelerate.yaml", "llama-3.1-8b.config.json"],
        ["llama-3.1-8b.config.json", "accelerate.yaml", "axolotl.yml"],
    ] {
        let paths: Vec<String> = order.iter().map(|f| config(f)).collect();
        let mut args = vec!["check", "--json"];
        args.extend(paths.iter().map(String::as_str));
        let run = dpcalc(&args);
        let got = json(&run);
        let diffs = differences(&run, &page.report);
        assert!(diffs.is_empty(), "{order:?}: {diffs:?}");
        assert_eq!(got["query"], Value::String(page.query.clone()));
    }
    // hand-checked: accelerate's 2 machines × 16 processes = 2 × 8 GPUs; the YAML's
    // tensor_parallel_size 2 and (deprecated) sequence_parallel_degree 2:
    // dp = 16 // 2 // 2 = 4, batch = 2 × 4 × 4 = 32; Llama 3.1 8B has 8,030,261,248 parameters
    let v = json(&dpcalc(&[
        "check",
        "--json",
        &config("axolotl.yml"),
        &config("accelerate.yaml"),
        &config("llama-3.1-8b.config.json"),
    ]));
    assert_eq!(v["outputs"]["world_size"], 16);
    assert_eq!(v["outputs"]["dp_world_size"], 4);
    assert_eq!(v["outputs"]["global_batch_size"], 32);
    assert_eq!(v["outputs"]["num_parameters"], 8_030_261_248_u64);
}

#[test]
fn a_launch_line_and_the_accelerate_config_it_names_give_the_sequence_parallel_batch() {
    // TRL's ALST/Ulysses example: the launch line and its --config_file, passed together in
    // either order; the page imports the line, then the accelerate config. Hand-checked
    // (transformers 5.25): dp = 4 // 1 // 1 // sp 2 = 2, batch = 8 × 1 × 2 = 16.
    let files = [
        "real/hf/trl-alst-ulysses-4gpu.sh",
        "real/accelerate/alst_ulysses_4gpu.yaml",
    ];
    let page = pasted(Framework::Hf, &files);
    assert_eq!(
        page.report.value(Output::DpWorldSize).map(|v| v.raw()),
        Some("2".into())
    );
    for order in [files, [files[1], files[0]]] {
        let paths: Vec<String> = order.iter().map(|f| config(f)).collect();
        let mut args = vec!["check", "--json", "--expect", "dp_world_size=2"];
        args.extend(["--expect", "global_batch_size=16"]);
        args.extend(paths.iter().map(String::as_str));
        let run = dpcalc(&args);
        assert_eq!(code(&run), 0, "{order:?}: {}", stderr(&run));
        let got = json(&run);
        let diffs = differences(&run, &page.report);
        assert!(diffs.is_empty(), "{order:?}: {diffs:?}");
        assert_eq!(got["query"], Value::String(page.query.clone()));
        let warnings = got["sources"].to_string();
        assert!(
            warnings.contains("--max_seq_length: TRL 0.20 removed"),
            "{warnings}"
        );
        assert!(
            !warnings.contains("parallelism_config_sp_size"),
            "{warnings}"
        );
    }
    // an axolotl config beside it: dpcalc applies none of the block, and says so at its key
    let run = dpcalc(&[
        "check",
        "--json",
        &config("axolotl.yml"),
        &config("real/accelerate/alst_ulysses_4gpu.yaml"),
    ]);
    let got = json(&run);
    let warnings = got["sources"].to_string();
    assert!(
        warnings.contains("parallelism_config.parallelism_config_sp_size: accelerate's ParallelismConfig gets sp_size 2"),
        "{warnings}"
    );
}

#[test]
fn an_older_axolotl_release_refuses_parallel_sizes_larger_than_the_world() {
    // axolotl's HSDP + TP example (16 ranks) on one node of 8: 0.18.0 refuses it as 0.21.0 does
    let example = config("real/axolotl/llama-3_1-8b-hsdp-tp.yaml");
    for version in ["0.18.0", "0.14.0"] {
        let run = dpcalc(&["check", "--version", version, &example]);
        assert_eq!(code(&run), 1, "{version}: {}", stdout(&run));
        assert!(
            stdout(&run)
                .contains("ParallelismConfig total_size (16) does not match num_processes (8)"),
            "{version}: {}",
            stdout(&run)
        );
        let run = dpcalc(&["check", "--version", version, "--nodes", "2", &example]);
        assert_eq!(code(&run), 0, "{version}: {}", stdout(&run));
    }
}

#[test]
fn expectations_pass_and_fail_with_the_exit_status() {
    let cfg = config("deepspeed.json");
    // DeepSpeed: 256 = 4 × 8 × dp, so the batch check holds on 8 GPUs (dp 8)
    let ok = dpcalc(&[
        "check",
        &cfg,
        "--expect",
        "train_batch_size=256",
        "--expect",
        "gradient_accumulation_steps=8",
        "--expect",
        "dp_world_size=8",
    ]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
    assert!(stdout(&ok).contains("ok train_batch_size=256"));
    let off = dpcalc(&["check", &cfg, "--expect", "train_batch_size=512"]);
    assert_eq!(code(&off), 1);
    assert!(
        stderr(&off).contains("expected train_batch_size=512, dpcalc computes 256"),
        "{}",
        stderr(&off)
    );
    // the framework refuses: 16 GPUs break DeepSpeed's batch assertion; the refusal is verbatim
    let refused = dpcalc(&["check", &cfg, "--nodes", "2"]);
    assert_eq!(code(&refused), 1);
    assert!(
        stderr(&refused).contains("Check batch related parameters"),
        "{}",
        stderr(&refused)
    );
    // its fixes are offered as flags
    assert!(stdout(&refused).contains("fix: "), "{}", stdout(&refused));
    assert!(stdout(&refused).contains("--set "), "{}", stdout(&refused));
    // an absent value is expected with `none`
    let none = dpcalc(&["check", &cfg, "--expect", "num_parameters=none"]);
    assert_eq!(code(&none), 0, "{}", stderr(&none));
    // an unknown output name cannot be read
    let bad = dpcalc(&["check", &cfg, "--expect", "steps=3"]);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("steps is not an output name"));
    assert!(bad.stdout.is_empty());
}

#[test]
fn flags_override_the_file_and_name_what_they_cannot_read() {
    let cfg = config("axolotl.yml");
    let v = json(&dpcalc(&[
        "check",
        "--json",
        &cfg,
        "--nodes",
        "2",
        "--gpus-per-node",
        "4",
        "--set",
        "micro_batch_size=1",
        "--version",
        "0.19.0",
    ]));
    assert_eq!(v["version"], "0.19.0");
    assert_eq!(v["outputs"]["world_size"], 8);
    // 8 // 2 // 2 = 2 replicas × 1 × 4 (with sample packing and CP, 0.19.0 wants 1)
    assert_eq!(v["outputs"]["global_batch_size"], 8);
    assert_eq!(v["accepted"], true);
    // --framework over a link of another framework switches as the page does: values carried
    // by meaning, the newest release (not what a link without version= would mean)
    let v = json(&dpcalc(&[
        "check",
        "--json",
        "?micro_batch_size=2&tensor_parallel_size=2",
        "--framework",
        "megatron",
    ]));
    assert_eq!(v["framework"], "megatron");
    assert_eq!(v["version"], Framework::Megatron.default_release().id);
    let q = v["query"].as_str().unwrap_or_default();
    assert!(q.contains("tensor_model_parallel_size=2"), "{q}");
    // an alias is read as the link reads it
    let v = json(&dpcalc(&[
        "check",
        "--json",
        "--set",
        "sequence_parallel_degree=4",
    ]));
    assert!(v["query"]
        .as_str()
        .unwrap_or_default()
        .contains("context_parallel_size=4"));
    // the same key twice with two values: the field's error, as in a link
    let twice = dpcalc(&[
        "check",
        "--set",
        "micro_batch_size=2",
        "--set",
        "micro_batch_size=4",
    ]);
    assert_eq!(code(&twice), 1);
    assert!(
        stderr(&twice).contains("error at micro_batch_size"),
        "{}",
        stderr(&twice)
    );
    for (args, says) in [
        (
            vec!["--set", "micro_batchsize=2"],
            "micro_batchsize is not a key axolotl reads",
        ),
        (vec!["--set", "micro_batch_size"], "write KEY=VALUE"),
        (
            vec!["--framework", "jax"],
            "--framework jax: not a framework",
        ),
        (
            vec!["--version", "9.9"],
            "--version 9.9: not one of the axolotl releases",
        ),
        (vec!["--set", "version=0.19.0"], "use --version"),
    ] {
        let mut all = vec!["check"];
        all.extend(args.iter());
        let run = dpcalc(&all);
        assert_eq!(code(&run), 2, "{args:?}");
        assert!(stderr(&run).contains(says), "{args:?}: {}", stderr(&run));
        assert!(run.stdout.is_empty(), "{args:?}: nothing half-computed");
    }
}

#[test]
fn a_link_gives_the_page_its_link_and_the_card_the_page_draws() {
    let url = "https://docs.example/dpcalc/?framework=megatron&version=0.19.2&nodes=4&tensor_model_parallel_size=2&micro_batch_size=2&global_batch_size=256&train_samples=1000000#results";
    let run = dpcalc(&["check", "--link", url]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let q = url
        .split('?')
        .nth(1)
        .unwrap_or_default()
        .split('#')
        .next()
        .unwrap_or_default();
    let page = State::from_query(q);
    assert_eq!(
        stdout(&run).trim(),
        page.url("https://docs.example/dpcalc/")
    );
    // --base writes the link on another address; the card is the page's card
    let dir = scratch("card");
    let svg = dir.join("dpcalc-card.svg");
    let svg_arg = svg.to_string_lossy().into_owned();
    let run = dpcalc(&[
        "check",
        &format!("?{q}"),
        "--base",
        "https://wiki.example/tools/dpcalc/",
        "--card",
        &svg_arg,
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let link = page.url("https://wiki.example/tools/dpcalc/");
    assert!(stdout(&run).contains(&format!("link: {link}")));
    let want = card::svg(
        page.link.framework,
        page.link.release().id,
        &page.link.inputs,
        &page.report,
        &link,
    );
    assert_eq!(std::fs::read_to_string(&svg).expect("the card"), want);
    // the text names the values with their rules and the estimates with their sources
    let text = dpcalc(&[
        "check",
        &format!("?{q}&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&seq_length=4096"),
    ]);
    let out = stdout(&text);
    for part in [
        "What Megatron-LM 0.19.2 computes",
        "How this is computed",
        "data_parallel_size = world_size // (tensor × pipeline × context parallel size)",
        "Published formulas, not a measurement",
        "Megatron-LM 0.19.2 report_theoretical_memory",
    ] {
        assert!(out.contains(part), "{part:?} missing:\n{out}");
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dpcalc-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("a scratch file");
    p.to_string_lossy().into_owned()
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file_and_the_line() {
    let dir = scratch("bad");
    let missing = dir.join("missing.yml").to_string_lossy().into_owned();
    let binary = write(&dir, "model.bin", &[0x7f, b'E', b'L', b'F', 0, 0, 1, 2]);
    let latin1 = write(&dir, "latin1.yml", b"micro_batch_size: 2\n# caf\xe9\n");
    let huge = write(&dir, "huge.yml", &vec![b'#'; 10_000_000]);
    let yaml = write(&dir, "bad.yml", b"micro_batch_size: 2\n  - x: [\n");
    let json_ = write(&dir, "bad.json", b"{\"train_batch_size\": 8,\n \"x\": }\n");
    let toml = write(&dir, "bad.toml", b"[training]\nsteps = \n");
    let twice = write(
        &dir,
        "twice.yml",
        b"micro_batch_size: 2\nmicro_batch_size: 4\n",
    );
    let prose = write(&dir, "notes.txt", b"Just some notes about the run.\n");
    let (axolotl, deepspeed) = (config("axolotl.yml"), config("deepspeed.json"));
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec![&missing],
            vec!["missing.yml: cannot be read: No such file or directory"],
        ),
        (vec![&binary], vec!["model.bin: a binary file"]),
        (vec![&latin1], vec!["latin1.yml: line 2: not UTF-8"]),
        (
            vec![&huge],
            vec!["huge.yml: 10,000,000 bytes; at most 256 KB is read"],
        ),
        (vec![&yaml], vec!["bad.yml: ", "line 2"]),
        (vec![&json_], vec!["bad.json: ", "line 2"]),
        (vec![&toml], vec!["bad.toml: ", "line 2"]),
        (
            vec![&twice],
            vec!["twice.yml: ", "micro_batch_size is given again"],
        ),
        (
            vec![&prose],
            vec!["notes.txt: This does not look like a config"],
        ),
        (
            vec![&axolotl, &deepspeed],
            vec!["more than one framework config"],
        ),
        (vec!["?nodes=2", "?nodes=3"], vec!["a second link"]),
    ];
    for (args, says) in cases {
        for json_flag in [false, true] {
            let mut all = vec!["check"];
            if json_flag {
                all.push("--json");
            }
            all.extend(args.iter());
            let run = dpcalc(&all);
            assert_eq!(code(&run), 2, "{args:?}: {}", stderr(&run));
            let err = stderr(&run);
            for s in &says {
                assert!(err.contains(s), "{args:?}: {s:?} not in {err}");
            }
            assert!(run.stdout.is_empty(), "{args:?}: nothing half-computed");
        }
    }
    // a link's unknown parameter is the page's notice, not a failure (old and newer links keep
    // working); its values are the page's
    let run = dpcalc(&["check", "?colour=blue&nodes=2"]);
    assert_eq!(code(&run), 0);
    assert!(stdout(&run).contains("notice (colour)"), "{}", stdout(&run));
    // standard input is read as a file
    let mut child = Command::new(BIN)
        .args(["check", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dpcalc runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(include_bytes!("fixtures/configs/torchtitan.toml"))
            .expect("written");
    }
    let run = child.wait_with_output().expect("dpcalc ends");
    assert_eq!(json(&run)["framework"], "torchtitan");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn clap_reads_the_command_line() {
    let help = dpcalc(&["check", "--help"]);
    assert_eq!(code(&help), 0);
    for flag in [
        "--framework",
        "--version",
        "--nodes",
        "--gpus-per-node",
        "--set",
        "--expect",
        "--json",
        "--link",
        "--card",
        "--base",
    ] {
        assert!(stdout(&help).contains(flag), "{flag}");
    }
    // a flag clap does not know is a usage error: exit 2
    assert_eq!(code(&dpcalc(&["check", "--frobnicate"])), 2);
    assert_eq!(code(&dpcalc(&["frobnicate"])), 2);
    assert_eq!(code(&dpcalc(&[])), 2);
}

#[test]
fn json_integers_are_integers_and_floats_floats() {
    let run = dpcalc(&[
        "check",
        "--json",
        "?framework=hf&version=4.51&per_device_train_batch_size=4&num_samples=1000&num_train_epochs=1.5&warmup_ratio=0.1&max_length=2048&tokens_per_second_per_gpu=3000",
    ]);
    let v = json(&run);
    let q = v["query"].as_str().unwrap_or_default().to_string();
    let page = State::from_query(&q);
    assert!(differences(&run, &page.report).is_empty());
    let floats: Vec<&str> = Output::ALL
        .iter()
        .filter(|&&o| matches!(page.report.value(o), Some(Num::Float(_))))
        .map(|o| o.name())
        .collect();
    assert!(floats.contains(&"time_per_step_seconds"), "{floats:?}");
    // a float keeps its point even when it is whole, as the contract's data-value does
    let tokens = output_tokens(&run);
    for name in &floats {
        let (_, t) = tokens.iter().find(|(n, _)| n == name).expect("printed");
        assert!(t.contains('.') || t.contains('e'), "{name}: {t}");
    }
    // an integer beyond 64 bits stays an integer (nanotron's int arithmetic is unbounded)
    let q = "framework=nanotron&version=0.4&world_size=1099511627776&dp=1099511627776&tp=1&pp=1&micro_batch_size=1048576&batch_accumulation_per_replica=1024";
    let big = dpcalc(&["check", "--json", &format!("?{q}")]);
    let page = State::from_query(q);
    assert_eq!(
        page.report.value(Output::GlobalBatchSize),
        Some(Num::Int(1_180_591_620_717_411_303_424))
    );
    assert!(differences(&big, &page.report).is_empty());
}

// `dpcalc plan`: the page's planner rows (`calc::view::plan_rows`) with the page's links.

/// The page's address the plan tests write their links on.
const PLAN_BASE: &str = "https://x.test/dpcalc/";

/// A link the planner finds plans for, in each framework: the benchmark's inputs (64 H100s,
/// Llama 3.1 8B, 4,096 tokens a sample, a global batch of 128).
fn plan_link(fw: Framework) -> String {
    let link = Link {
        framework: fw,
        release: Some(fw.default_release()),
        inputs: planner::bench_inputs(fw, 64),
        ..Link::default()
    };
    format!("?{}", dpcalc::query::encode(&link))
}

/// What the page's planner shows for a query: its state, the planner, the view model's rows and
/// each row's link (`state::plan_url`, as the page's plan table writes it).
fn page_plan(q: &str) -> (State, Planner, Vec<PlanRowView>, Vec<String>) {
    let state = State::from_query(q);
    let planner = planner::rank(state.link.framework, state.link.release().id, &state.inputs);
    let rows = view::plan_rows(&planner);
    let links = (planner.rows.iter())
        .map(|p| plan_url(PLAN_BASE, &state.link, &p.assignments))
        .collect();
    (state, planner, rows, links)
}

/// The `rows` of `dpcalc plan --json` as written: each row's fields with their JSON tokens (read
/// from the text, so a float's digits are seen as printed, not as a JSON parser rounds them).
fn row_tokens(run: &Run) -> Vec<Vec<(String, String)>> {
    let text = stdout(run);
    let mut rows: Vec<Vec<(String, String)>> = Vec::new();
    for l in text
        .lines()
        .skip_while(|l| !l.starts_with("  \"rows\": ["))
        .skip(1)
    {
        if l.starts_with("  ]") {
            break;
        }
        match l.trim().trim_end_matches(',') {
            "{" => rows.push(Vec::new()),
            "}" => {}
            field => {
                let (k, v) = field.split_once(": ").expect("a field");
                if let Some(row) = rows.last_mut() {
                    row.push((k.trim_matches('"').to_string(), v.to_string()));
                }
            }
        }
    }
    rows
}

/// A JSON token is an attribute's typed value: an integer's digits, a float's exact value, the
/// word as a string, `null` for none.
fn same_attr(token: &str, want: PlanAttr) -> bool {
    match want {
        PlanAttr::Int(i) => token == i.to_string(),
        PlanAttr::Float(x) => token
            .parse::<f64>()
            .is_ok_and(|g| g.to_bits() == x.to_bits()),
        PlanAttr::Text(t) => token == format!("\"{t}\""),
        PlanAttr::Absent => token == "null",
    }
}

/// For every framework, `plan --json` has the page's rows field for field (every `data-plan-row`
/// attribute, `_` for `-`, and the link), the planner's counts and the input's own step time;
/// each row's link computes the row's step time.
#[test]
fn plan_json_rows_are_the_pages_rows_for_every_framework() {
    for &fw in Framework::ALL {
        let q = plan_link(fw);
        let run = dpcalc(&["plan", &q, "--json", "--base", PLAN_BASE]);
        assert_eq!(code(&run), 0, "{fw:?}: {}", stderr(&run));
        let v = json(&run);
        let (state, planner, rows, links) = page_plan(&q);
        assert!(!rows.is_empty(), "{fw:?}: {:?}", planner.note);
        assert_eq!(v["framework"], fw.id());
        assert_eq!(v["version"], state.link.release().id);
        assert_eq!(v["link"], state.url(PLAN_BASE));
        assert_eq!(v["considered"], planner.considered);
        assert_eq!(v["fitting"], planner.fitting);
        assert!(v["note"].is_null());
        let step = state.report.value(Output::StepTimeSeconds).map(Num::to_f64);
        assert_eq!(v["current"]["step_time_seconds"].as_f64(), step, "{fw:?}");
        let got = v["rows"].as_array().expect("rows");
        let tokens = row_tokens(&run);
        assert_eq!(got.len(), rows.len(), "{fw:?}");
        assert_eq!(tokens.len(), rows.len(), "{fw:?}");
        for (((row, link), g), fields) in rows.iter().zip(&links).zip(got).zip(&tokens) {
            // every attribute in the contract's order, `_` for `-`, then the link
            let keys: Vec<String> = (row.attributes().iter())
                .map(|(name, _)| name.trim_start_matches("data-").replace('-', "_"))
                .chain(["link".to_string()])
                .collect();
            let printed: Vec<String> = fields.iter().map(|(k, _)| k.clone()).collect();
            assert_eq!(printed, keys, "{fw:?}: a row's fields");
            for ((name, attr), (key, token)) in row.attributes().into_iter().zip(fields) {
                assert!(
                    same_attr(token, attr),
                    "{fw:?} row {}: {key} {token} vs {name}={attr}",
                    row.rank
                );
            }
            assert_eq!(g["link"], link.as_str(), "{fw:?} row {}", row.rank);
            // the link is the page with the plan: it computes the row's step time
            let again = State::from_query(link.split_once('?').map_or("", |(_, q)| q));
            assert!(!again.report.has_errors(), "{link}");
            assert_eq!(
                again.report.value(Output::StepTimeSeconds),
                Some(Num::Float(row.step_seconds)),
                "{link}"
            );
        }
    }
}

/// Every attribute the view model gives a row is in the DOM contract (docs/outputs.md).
#[test]
fn plan_row_attributes_are_the_contracts() {
    let contract = include_str!("../docs/outputs.md").replace('\n', " ");
    let (_, _, rows, _) = page_plan(&plan_link(Framework::Megatron));
    let row = rows.first().expect("a row");
    for (name, _) in row.attributes() {
        assert!(contract.contains(&format!("`{name}`")), "{name}");
    }
}

/// For every framework, the text is the page's table: the headings, each row's cells in order
/// and its link on the row's line.
#[test]
fn plan_text_shows_the_pages_cells_and_each_rows_link() {
    for &fw in Framework::ALL {
        let q = plan_link(fw);
        let run = dpcalc(&["plan", &q, "--base", PLAN_BASE]);
        assert_eq!(code(&run), 0, "{fw:?}: {}", stderr(&run));
        let out = stdout(&run);
        let (state, planner, rows, links) = page_plan(&q);
        let summary = view::plan_summary(&planner).expect("a summary");
        assert!(out.contains(&summary), "{fw:?}:\n{out}");
        let heading = out
            .lines()
            .find(|l| l.trim_start().starts_with("# "))
            .expect("the headings");
        let words: Vec<&str> = heading.split_whitespace().collect();
        let columns: Vec<&str> = PLAN_COLUMNS
            .iter()
            .flat_map(|c| c.split_whitespace())
            .chain(["Link"])
            .collect();
        assert_eq!(words, columns, "{fw:?}");
        for (row, link) in rows.iter().zip(&links) {
            let line = out
                .lines()
                .find(|l| l.ends_with(&format!(" {link}")))
                .unwrap_or_else(|| panic!("{fw:?}: no line ends with {link}:\n{out}"));
            // the cells in order, then the link
            let mut rest = line;
            for cell in row.cells() {
                let at = rest
                    .find(&cell)
                    .unwrap_or_else(|| panic!("{fw:?}: {cell:?} not in order in {line:?}"));
                rest = &rest[at + cell.len()..];
            }
            assert_eq!(rest.trim(), link.as_str());
        }
        assert!(out.contains(&format!("link: {}", state.url(PLAN_BASE))));
    }
    // no rows: the planner's note
    let q = "?framework=megatron&version=0.19.2&world_size=64&model=meta-llama/Llama-3.1-8B&global_batch_size=256&seq_length=4096&train_iters=100";
    let run = dpcalc(&["plan", q]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    assert!(stdout(&run).contains("The planner needs the GPU."));
    assert_eq!(
        json(&dpcalc(&["plan", q, "--json"]))["note"],
        "The planner needs the GPU."
    );
}

/// `--expect-within-best`: a layout with tensor parallelism across nodes is far slower than the
/// best plan (exit 1, both times and the best plan's link named); a large percentage lets it
/// pass; the best plan's own link is within 0 %; without a step time it fails with the reason.
#[test]
fn plan_expect_within_best_passes_and_fails_where_it_should() {
    let base = "?framework=megatron&version=0.19.2&world_size=64&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=256&seq_length=4096&micro_batch_size=1&train_iters=100";
    let slow = format!("{base}&tensor_model_parallel_size=16");
    let (state, _, rows, links) = page_plan(&slow);
    let step = match state.report.value(Output::StepTimeSeconds) {
        Some(Num::Float(x)) => x,
        other => panic!("{other:?}"),
    };
    assert!(
        step > rows[0].step_seconds * 2.0,
        "TP 16 is not slow: {step}"
    );
    for pct in ["0", "0%", "10%", "10"] {
        let run = dpcalc(&[
            "plan",
            &slow,
            "--expect-within-best",
            pct,
            "--base",
            PLAN_BASE,
        ]);
        assert_eq!(code(&run), 1, "{pct}: {}", stderr(&run));
        let err = stderr(&run);
        for part in [
            "--expect-within-best",
            &num::float_repr(step),
            &num::float_repr(rows[0].step_seconds),
            &links[0],
        ] {
            assert!(err.contains(part), "{pct}: {part:?} missing: {err}");
        }
        assert!(stdout(&run).contains("FAILED"));
    }
    let run = dpcalc(&["plan", &slow, "--expect-within-best", "1000%", "--json"]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let v = json(&run);
    assert_eq!(v["passed"], true);
    assert_eq!(v["expect_within_best"]["holds"], true);
    let run = dpcalc(&["plan", &slow, "--expect-within-best", "10%", "--json"]);
    assert_eq!(code(&run), 1);
    assert_eq!(json(&run)["expect_within_best"]["holds"], false);
    // the best plan's own link is the best: within 0 %
    let best = links[0]
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .expect("a query");
    let run = dpcalc(&["plan", &best, "--expect-within-best", "0%"]);
    assert_eq!(code(&run), 0, "{best}: {}", stderr(&run));
    assert!(stdout(&run).contains("ok: within 0% of the best plan"));
    // without a GPU there is no step time to compare: exit 1, saying so (and 0 without the flag)
    let no_gpu = base.replace("&gpu=h100-sxm", "");
    let run = dpcalc(&["plan", &no_gpu, "--expect-within-best", "10%"]);
    assert_eq!(code(&run), 1);
    assert!(
        stderr(&run).contains("no estimated step time"),
        "{}",
        stderr(&run)
    );
    assert_eq!(code(&dpcalc(&["plan", &no_gpu])), 0);
    // a percentage that is none: a usage error (exit 2)
    for bad in ["ten", "-5%", ""] {
        assert_eq!(
            code(&dpcalc(&["plan", &slow, "--expect-within-best", bad])),
            2,
            "{bad:?}"
        );
    }
}

/// `plan` reads its inputs as `check` does (the same link from the same files and flags),
/// exits 1 with `check`'s reasons when the framework refuses them and 2 when a file cannot be
/// read, naming it, with nothing on standard output.
#[test]
fn plan_reads_as_check_and_exits_as_check() {
    let args = [
        config("axolotl.yml"),
        config("llama-3.1-8b.config.json"),
        "--set".into(),
        "gpu=h100-sxm".into(),
        "--json".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let check = json(&dpcalc(&[&["check"], &args[..]].concat()));
    let run = dpcalc(&[&["plan"], &args[..]].concat());
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let plan = json(&run);
    assert_eq!(plan["link"], check["link"]);
    let (_, _, rows, _) = page_plan(check["link"].as_str().unwrap_or_default());
    assert_eq!(plan["rows"].as_array().map(Vec::len), Some(rows.len()));
    assert!(!rows.is_empty());
    // refused: check's reasons, exit 1
    let refused = "?framework=megatron&version=0.19.2&world_size=64&tensor_model_parallel_size=3&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=256&seq_length=4096&train_iters=100";
    let run = dpcalc(&["plan", refused]);
    let check = dpcalc(&["check", refused]);
    assert_eq!(code(&run), 1);
    assert_eq!(code(&check), 1);
    assert_eq!(stderr(&run), stderr(&check));
    assert!(
        stderr(&run).contains("error at world_size"),
        "{}",
        stderr(&run)
    );
    // DPCALC_BASE is --base, for every row's link as for check's; a row's link opens on the
    // results, not on the planner a `view=plan` link opens on
    let q = format!("{}&view=plan", plan_link(Framework::Torchtitan));
    let run = Command::new(BIN)
        .args(["plan", &q, "--json"])
        .env("DPCALC_BASE", PLAN_BASE)
        .stdin(Stdio::null())
        .output()
        .expect("dpcalc runs");
    let v = json(&run);
    let (_, _, _, links) = page_plan(&q);
    let printed: Vec<&str> = (v["rows"].as_array().expect("rows").iter())
        .filter_map(|r| r["link"].as_str())
        .collect();
    assert_eq!(printed, links);
    assert!(links.iter().all(|l| l.starts_with(PLAN_BASE)));
    assert!(v["link"].as_str().is_some_and(|l| l.contains("view=plan")));
    assert!(!links.iter().any(|l| l.contains("view=plan")));
    // clap reads its flags
    let help = dpcalc(&["plan", "--help"]);
    assert_eq!(code(&help), 0);
    for flag in [
        "--framework",
        "--version",
        "--nodes",
        "--gpus-per-node",
        "--set",
        "--expect-within-best",
        "--json",
        "--base",
    ] {
        assert!(stdout(&help).contains(flag), "{flag}");
    }
    // unreadable: exit 2, the file named, nothing printed
    let dir = scratch("plan");
    let missing = dir.join("missing.yml").to_string_lossy().into_owned();
    let binary = write(&dir, "weights.bin", b"\x00\x01\x02");
    for file in [&missing, &binary] {
        let run = dpcalc(&["plan", file]);
        assert_eq!(code(&run), 2, "{file}");
        assert!(stderr(&run).contains(file.as_str()), "{}", stderr(&run));
        assert!(run.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `dpcalc plan --scale --json`: the page's scaling rows field for field (every `data-scale-row`
/// attribute, `_` for `-`, `meets_deadline` as a boolean), each size's plan link as the page
/// writes it, and the cheapest size within the deadline; the text form prints the same cells.
#[test]
fn plan_scale_prints_the_scaling_views_rows() {
    use dpcalc::calc::scaling;
    use dpcalc::state::scale_url;
    let q = "?framework=megatron&version=0.19.2&nodes=4&gpus_per_node=8&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=256&seq_length=4096&micro_batch_size=1&train_iters=1000&gpu_hour_price=3&deadline_hours=2";
    let state = State::from_query(q);
    let scale = scaling::scale(state.link.framework, state.link.release().id, &state.inputs);
    let rows = view::scale_rows(&scale);
    assert_eq!(rows.len(), 3);
    let run = dpcalc(&["plan", "--scale", q, "--json", "--base", PLAN_BASE]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let v = json(&run);
    assert_eq!(v["global_batch_size"], 256);
    assert_eq!(v["deadline_hours"], 2.0);
    let cheapest = scale.cheapest.map(|i| scale.rows[i].nodes);
    assert!(cheapest.is_some());
    assert_eq!(v["cheapest_nodes"].as_u64(), cheapest);
    let got = v["rows"].as_array().expect("rows");
    let tokens = row_tokens(&run);
    assert_eq!(got.len(), rows.len());
    for (((row, r), g), fields) in rows.iter().zip(&scale.rows).zip(got).zip(&tokens) {
        let attrs = row.attributes();
        let names: Vec<&str> = attrs.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "data-nodes",
                "data-gpus",
                "data-step-seconds",
                "data-tokens-per-second-per-gpu",
                "data-mfu",
                "data-total-hours",
                "data-cost",
                "data-meets-deadline"
            ]
        );
        for ((name, attr), (key, token)) in attrs.into_iter().zip(fields) {
            assert_eq!(key, &name.trim_start_matches("data-").replace('-', "_"));
            match attr {
                PlanAttr::Text(t) => assert_eq!(token, t, "{name}"),
                _ => assert!(same_attr(token, attr), "{key} {token} vs {attr}"),
            }
        }
        let link = scale_url(PLAN_BASE, &state.link, r).expect("a plan");
        assert_eq!(g["link"], link.as_str());
        assert_eq!(g["plan"], row.layout.as_str());
    }
    let text = dpcalc(&["plan", "--scale", q, "--base", PLAN_BASE]);
    assert_eq!(code(&text), 0);
    let out = stdout(&text);
    for c in view::SCALE_COLUMNS {
        assert!(out.contains(c), "{c}");
    }
    for row in &rows {
        for c in row.cells() {
            assert!(out.contains(&c), "{c} not in:\n{out}");
        }
    }
    assert!(out.contains("meets it · cheapest"));
}

/// With `gpu_hour_price`, `plan --json`'s rows carry `total_cost`, which each row's link shows
/// (`gpu_hours × gpu_hour_price`); without it, none does.
#[test]
fn plan_rows_carry_total_cost_when_priced() {
    let q = format!("{}&gpu_hour_price=2", plan_link(Framework::Megatron));
    let run = dpcalc(&["plan", &q, "--json", "--base", PLAN_BASE]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let v = json(&run);
    let rows = v["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    // the printed digits, exactly (a JSON parser may round the last one)
    for (g, fields) in rows.iter().zip(row_tokens(&run)) {
        let link = g["link"].as_str().expect("a link");
        let again = State::from_query(link.split_once('?').map_or("", |(_, q)| q));
        let hours = again
            .report
            .value(Output::GpuHours)
            .map(Num::to_f64)
            .expect("hours");
        let cost = again.report.value(Output::TotalCost).map(Num::to_f64);
        assert_eq!(cost, Some(hours * 2.0), "{link}");
        let token = (fields.iter())
            .find(|(k, _)| k == "total_cost")
            .map(|(_, t)| t.as_str());
        assert!(
            token.is_some_and(|t| same_attr(t, PlanAttr::Float(hours * 2.0))),
            "{link}: {token:?}"
        );
    }
    let plain = json(&dpcalc(&[
        "plan",
        &plan_link(Framework::Megatron),
        "--json",
    ]));
    assert!(plain["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|g| g.get("total_cost").is_none()));
}

#[test]
fn a_script_default_of_an_unset_variable_gives_way_to_the_nodes_given() {
    // Megatron-LM's Mixtral script: NNODES=${SLURM_NNODES:-"1"}
    let script = config("real/megatron/train_mixtral_8x7b_distributed.sh");
    let default =
        "$SLURM_NNODES is an environment variable not set where dpcalc reads the script: \
                   its default 1 (through NNODES) gives --nnodes.";
    // alone: 1 node of 8 GPUs, which the expert grid (1 × 8 × 4 = 32) refuses; the default is named
    let run = dpcalc(&["check", "--json", &script]);
    assert_eq!(code(&run), 1, "{}", stderr(&run));
    let got = json(&run);
    let summary = got["sources"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(default), "{summary}");
    assert_eq!(got["outputs"]["world_size"], 8);
    // with --nodes 4 (as a 4-node page): the 4 nodes are kept, and the note says so
    let run = dpcalc(&["check", "--json", "--nodes", "4", &script]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let got = json(&run);
    let summary = got["sources"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(default), "{summary}");
    assert!(
        summary.contains(
            "nodes: the 4 already given is kept rather than 1, the default of SLURM_NNODES."
        ),
        "{summary}"
    );
    // megatron-core 0.19.2 on 4 × 8: dp = 32 // (1 × 4) = 8, 256 // (1 × 8) = 32 microbatches
    assert_eq!(got["outputs"]["world_size"], 32);
    assert_eq!(got["outputs"]["dp_world_size"], 8);
    assert_eq!(got["outputs"]["num_microbatches"], 32);
}

#[test]
fn plan_prints_no_control_character_the_input_carried() {
    // the link's address (its base) carries ESC and a C1 CSI: `dpcalc check` printed them as
    // U+FFFD, `dpcalc plan` printed them raw (found by the cli fuzz target)
    let link = "https://x.example/\u{1b}[31m\u{9b}2J/?micro_batch_size=2&nodes=2";
    for extra in [&[][..], &["--json"], &["--scale"], &["--scale", "--json"]] {
        let mut args = vec!["plan", link];
        args.extend_from_slice(extra);
        let run = dpcalc(&args);
        assert!(code(&run) <= 1, "{extra:?}: {}", stderr(&run));
        let (out, err) = (stdout(&run), stderr(&run));
        for text in [&out, &err] {
            assert!(
                !text.contains(['\u{1b}', '\u{9b}']),
                "{extra:?} printed a control character: {text:?}"
            );
        }
        if extra.contains(&"--json") {
            let v: Value = serde_json::from_str(&out).expect("--json prints JSON");
            // the link is the same value, its control characters escaped
            assert!(v.to_string().contains("\\u001b[31m"), "{v}");
        } else {
            assert!(out.contains("x.example/\u{FFFD}[31m\u{FFFD}2J/"), "{out}");
        }
    }
}
