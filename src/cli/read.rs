//! Reading what `dpcalc check` is given into one page state: files (a framework's config, an
//! accelerate config or launcher line, a model's config.json), a link, and the flags that
//! override them. The files are read by the page's own Import (`calc::import`) and the link by
//! the page's own decoder (`query`), so the command computes from exactly what the page would.
//!
//! Everything here either succeeds or returns every reason the input cannot be read (exit 2),
//! each naming the file, the flag or the key; nothing is computed before all of it is read.

use std::io::Read as _;

use crate::calc::import::{self, Format, Imported, Scope, MAX_INPUT};
use crate::calc::{Field, Framework, Num, Output, RawInputs, Release};
use crate::query::{self, Link};
use crate::state::State;

/// What `dpcalc check` was asked, before it is read.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Files, links (`https://…?…` or `?…`) and `-` (standard input), in the order given.
    pub inputs: Vec<String>,
    pub framework: Option<String>,
    pub release: Option<String>,
    pub nodes: Option<String>,
    pub gpus_per_node: Option<String>,
    /// `KEY=VALUE`, a link parameter each.
    pub set: Vec<String>,
    /// `OUTPUT=VALUE`.
    pub expect: Vec<String>,
    /// The page's address, for the link and the card (`--base`).
    pub base: Option<String>,
}

/// How one input was read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Source {
    /// The file name, `-` for standard input, or the link.
    pub name: String,
    /// What it was read as (`an axolotl YAML`, `a link`, `a model's config.json`, …).
    pub read_as: String,
    /// What it filled in, in one sentence (the page's words).
    pub summary: String,
    /// Keys dpcalc does not read (the page lists them and ignores them).
    pub ignored: Vec<String>,
    /// Keys the framework does not read although configs carry them, with what the page uses.
    pub warnings: Vec<String>,
}

/// One `--expect OUTPUT=VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub output: Output,
    /// The text given.
    pub text: String,
    /// `None`: the output is expected to be absent (`none`).
    pub value: Option<Expected>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expected {
    Int(i128),
    Float(f64),
}

impl Expectation {
    /// Whether `got` is the expected value: the same number (an integer equals a float only when
    /// the float is that integer exactly), or absent when `none` was expected.
    pub fn holds(&self, got: Option<Num>) -> bool {
        match (self.value, got) {
            (None, None) => true,
            (Some(Expected::Int(a)), Some(Num::Int(b))) => a == b,
            (Some(Expected::Float(a)), Some(Num::Float(b))) => a == b,
            (Some(Expected::Int(a)), Some(Num::Float(b))) => b.fract() == 0.0 && a as f64 == b,
            (Some(Expected::Float(a)), Some(Num::Int(b))) => a.fract() == 0.0 && a == b as f64,
            _ => false,
        }
    }
}

/// Everything read: the page state to compute, and how it was arrived at.
#[derive(Clone, Debug)]
pub struct Read {
    pub state: State,
    /// The page's address the link is written on (empty: the link is the bare `?query`).
    pub base: String,
    pub sources: Vec<Source>,
    pub expectations: Vec<Expectation>,
}

/// The text read from a file (or standard input), or why it cannot be read.
fn read_text(name: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    // one byte more than is read, so a larger file is told apart without loading it
    let cap = MAX_INPUT as u64 + 1;
    let result = if name == "-" {
        std::io::stdin().lock().take(cap).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(name).and_then(|f| f.take(cap).read_to_end(&mut bytes))
    };
    let shown = if name == "-" { "standard input" } else { name };
    result.map_err(|e| format!("{shown}: cannot be read: {}", io_reason(&e)))?;
    if bytes.len() > MAX_INPUT {
        let size = std::fs::metadata(name)
            .map(|m| format!("{} bytes", Num::Int(i128::from(m.len())).pretty()))
            .unwrap_or_else(|_| "more than that".into());
        return Err(format!(
            "{shown}: {size}; at most {} KB is read (a config is a few KB)",
            MAX_INPUT / 1024
        ));
    }
    if bytes.contains(&0) {
        return Err(format!(
            "{shown}: a binary file (it holds NUL bytes), not a config"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        format!("{shown}: line {line}: not UTF-8 text (a binary file?), not a config")
    })
}

/// The reason of an I/O error without Rust's `(os error 2)` tail.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Whether an argument is a link rather than a file.
pub fn is_link(arg: &str) -> bool {
    arg.starts_with("https://") || arg.starts_with("http://") || arg.starts_with('?')
}

/// A link split into the page's address and its query (a fragment is dropped).
fn split_link(arg: &str) -> (&str, &str) {
    let arg = arg.split('#').next().unwrap_or_default();
    match arg.find('?') {
        Some(i) => (&arg[..i], &arg[i + 1..]),
        None => (arg, ""),
    }
}

/// A text that is a file's, with what it was detected as.
struct Text {
    name: String,
    text: String,
    /// A model's config.json (then `format` is not used).
    model: bool,
    /// What [`import::detect_format`] sees in it.
    format: Format,
}

fn framework_named(id: &str) -> Result<Framework, String> {
    Framework::from_id(id).ok_or_else(|| {
        let ids: Vec<&str> = Framework::ALL.iter().map(|f| f.id()).collect();
        format!(
            "--framework {id}: not a framework dpcalc models; one of {}",
            ids.join(", ")
        )
    })
}

/// An `--expect OUTPUT=VALUE`, read.
fn expectation(text: &str) -> Result<Expectation, String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "--expect {text}: write OUTPUT=VALUE, e.g. --expect global_batch_size=512"
        ));
    };
    let (name, value) = (name.trim(), value.trim());
    let output = Output::from_name(name).ok_or_else(|| {
        format!(
            "--expect {text}: {name} is not an output name (the output contract's names: world_size, dp_world_size, global_batch_size, max_steps, …; see docs/outputs.md)"
        )
    })?;
    let digits: String = value.chars().filter(|&c| c != ',' && c != '_').collect();
    let parsed = if value == "none" {
        None
    } else if let Ok(i) = digits.parse::<i128>() {
        Some(Expected::Int(i))
    } else if let Some(x) = digits.parse::<f64>().ok().filter(|x| x.is_finite()) {
        Some(Expected::Float(x))
    } else {
        return Err(format!(
            "--expect {text}: {value} is not a number (or none, for a value that must be absent)"
        ));
    };
    Ok(Expectation {
        output,
        text: value.to_string(),
        value: parsed,
    })
}

/// Reads everything the request names into one page state, or gives every reason it cannot.
pub fn read(req: &Request) -> Result<Read, Vec<String>> {
    let mut errors = Vec::new();
    let forced = match req.framework.as_deref().map(framework_named) {
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            errors.push(e);
            None
        }
        None => None,
    };
    let expectations: Vec<Expectation> = req
        .expect
        .iter()
        .filter_map(|e| expectation(e).map_err(|m| errors.push(m)).ok())
        .collect();

    let (link, texts) = inputs(&req.inputs, &mut errors);
    let framework = chosen_framework(forced, &link, &texts, &mut errors);

    let mut sources = Vec::new();
    let mut base = req.base.clone();
    let mut state_link = starting_link(&link, framework, &mut base, &mut sources);
    let named = apply_files(
        &texts,
        framework,
        &mut state_link,
        &mut sources,
        &mut errors,
        &[
            (Field::Nodes, req.nodes.clone()),
            (Field::GpusPerNode, req.gpus_per_node.clone()),
        ],
    );
    apply_flags(req, framework, &mut state_link, &mut errors);
    choose_release(
        req,
        framework,
        named,
        link.is_some(),
        &mut state_link,
        &mut errors,
    );

    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Read {
        state: State::from_link(state_link),
        base: base.unwrap_or_default(),
        sources,
        expectations,
    })
}

/// The link (at most one: its page address and what it says) and the files' texts.
fn inputs(args: &[String], errors: &mut Vec<String>) -> (Option<(String, Link)>, Vec<Text>) {
    let mut link: Option<(String, Link)> = None;
    let mut texts: Vec<Text> = Vec::new();
    for arg in args {
        if is_link(arg) {
            if let Some((first, _)) = &link {
                errors.push(format!(
                    "{arg}: a second link (the first is {first}); give one"
                ));
                continue;
            }
            let (base, q) = split_link(arg);
            link = Some((base.to_string(), query::decode(q)));
            continue;
        }
        match read_text(arg) {
            Ok(text) => {
                let model = import::model_config(Framework::default(), &text).is_some();
                let format = import::detect_format(&text);
                if !model && format == Format::Unknown {
                    errors.push(format!("{arg}: {}", import::NOT_A_CONFIG));
                }
                texts.push(Text {
                    name: arg.clone(),
                    text,
                    model,
                    format,
                });
            }
            Err(e) => errors.push(e),
        }
    }
    (link, texts)
}

/// The framework: forced, else the config's (at most one config), else the link's.
fn chosen_framework(
    forced: Option<Framework>,
    link: &Option<(String, Link)>,
    texts: &[Text],
    errors: &mut Vec<String>,
) -> Framework {
    let configs: Vec<&Text> = texts
        .iter()
        .filter(|t| !t.model && matches!(t.format, Format::Config(_)))
        .collect();
    if configs.len() > 1 {
        let names: Vec<&str> = configs.iter().map(|t| t.name.as_str()).collect();
        errors.push(format!(
            "{}: more than one framework config; give one (with an accelerate config or a launcher line for the cluster, and a model's config.json)",
            names.join(", ")
        ));
    }

    forced
        .or_else(|| {
            configs.first().and_then(|t| match t.format {
                Format::Config(f) => Some(f),
                _ => None,
            })
        })
        .or_else(|| link.as_ref().map(|(_, l)| l.framework))
        .unwrap_or_default()
}

/// The link the files and flags apply to: the one given (its address the base unless `--base`
/// says), carried to `framework` if it is another's, or an empty one.
fn starting_link(
    link: &Option<(String, Link)>,
    framework: Framework,
    base: &mut Option<String>,
    sources: &mut Vec<Source>,
) -> Link {
    match link {
        Some((b, l)) => {
            if base.is_none() && !b.is_empty() {
                *base = Some(b.clone());
            }
            let mut l = l.clone();
            if l.framework != framework {
                // --framework (or a config) of another framework over a link: its values
                // carried by meaning and the newest release, as the page's framework switch does
                l.inputs = crate::calc::frameworks::carry(l.framework, &l.inputs, framework);
                l.framework = framework;
                l.release = Some(framework.default_release());
            }
            sources.push(Source {
                name: "link".into(),
                read_as: format!("a {} link", framework.name()),
                summary: format!("{} setting(s).", l.inputs.given().count()),
                ignored: Vec::new(),
                warnings: Vec::new(),
            });
            l
        }
        None => Link {
            framework,
            ..Link::default()
        },
    }
}

/// Applies the files to the link, in the page's order of application: the config replaces the
/// inputs (keeping the cluster it does not give, as the page's Import does), then the cluster,
/// then the model. Gives the release a config names (dpcalc's own export says it).
fn apply_files(
    texts: &[Text],
    framework: Framework,
    state_link: &mut Link,
    sources: &mut Vec<Source>,
    errors: &mut Vec<String>,
    cluster_flags: &[(Field, Option<String>)],
) -> Option<&'static Release> {
    let mut order: Vec<&Text> = texts.iter().collect();
    order.sort_by_key(|t| match (t.model, t.format) {
        (false, Format::Config(_)) => 0,
        (false, _) => 1,
        (true, _) => 2,
    });
    // the release a config names (dpcalc's own export says it)
    let mut named = None;
    for t in order {
        let mut imported: Imported = if t.model {
            match import::model_config(framework, &t.text) {
                Some(m) => m,
                None => continue,
            }
        } else {
            match t.format {
                Format::Unknown => continue,
                _ => import::import_as(framework, &t.text),
            }
        };
        let read_as = match (t.model, t.format) {
            (true, _) => "a model's config.json".to_string(),
            (false, Format::Log(_)) => "a training log (the measured speed)".into(),
            (false, Format::Cluster) => {
                "the cluster (an accelerate config or a launcher line)".into()
            }
            (false, _) => import::format_name(framework).unwrap_or_else(|| framework.name().into()),
        };
        if let Format::Config(detected) = t.format {
            if !t.model && detected != framework {
                sources.push(Source {
                    name: t.name.clone(),
                    read_as: read_as.clone(),
                    summary: format!(
                        "Detected as {}; read as {} (--framework).",
                        import::format_name(detected).unwrap_or_else(|| detected.name().into()),
                        read_as
                    ),
                    ignored: Vec::new(),
                    warnings: Vec::new(),
                });
            }
        }
        let shown = if t.name == "-" {
            "standard input"
        } else {
            &t.name
        };
        if imported.scope == Scope::Config {
            named = imported.release;
        }
        // (settling holds a training log against the link's layout, which may refuse it)
        settle(&mut imported, &state_link.inputs, cluster_flags);
        for e in &imported.errors {
            errors.push(format!("{shown}: {e}"));
        }
        let mut next = imported.merged_into(&state_link.inputs);
        if imported.scope == Scope::Config {
            crate::state::keep_cluster(&state_link.inputs, &mut next);
        }
        state_link.inputs = next;
        sources.push(Source {
            name: t.name.clone(),
            read_as,
            summary: imported.summary(),
            ignored: imported.unknown.clone(),
            warnings: imported.warnings.clone(),
        });
    }
    named
}

/// The cluster given (the link, an earlier file, `--nodes`, `--gpus-per-node`) wins over a
/// script's default of an unset variable ([`Imported::settle`]).
fn settle(imported: &mut Imported, inputs: &RawInputs, cluster_flags: &[(Field, Option<String>)]) {
    let mut given = inputs.clone();
    for (f, v) in cluster_flags {
        if let Some(v) = v {
            given.set(*f, v.as_str());
        }
    }
    imported.settle(&given);
}

/// Applies the flags (`--nodes`, `--gpus-per-node`, `--set`) over the files: a field given two
/// different values is a conflict, as on the page.
fn apply_flags(
    req: &Request,
    framework: Framework,
    state_link: &mut Link,
    errors: &mut Vec<String>,
) {
    let mut set: Vec<(Field, Vec<String>)> = Vec::new();
    let mut put = |field: Field, value: String| match set.iter_mut().find(|(f, _)| *f == field) {
        Some((_, values)) => {
            if !values.contains(&value) {
                values.push(value)
            }
        }
        None => set.push((field, vec![value])),
    };
    for (field, value) in [
        (Field::Nodes, &req.nodes),
        (Field::GpusPerNode, &req.gpus_per_node),
    ] {
        if let Some(v) = value {
            put(field, v.clone());
        }
    }
    for pair in &req.set {
        let Some((key, value)) = pair.split_once('=') else {
            errors.push(format!(
                "--set {pair}: write KEY=VALUE with one of {}'s keys, e.g. --set micro_batch_size=2",
                framework.name()
            ));
            continue;
        };
        let key = key.trim();
        if matches!(key, "framework" | "version") {
            errors.push(format!("--set {pair}: use --{key} for the {key}"));
            continue;
        }
        // read as the page reads a link parameter (aliases included)
        let probe = query::decode(
            &serde_urlencoded::to_string([("framework", framework.id()), (key, "x")])
                .unwrap_or_default(),
        );
        let field = probe.inputs.given().next().map(|(f, _)| f);
        match field {
            Some(field) if probe.unknown.is_empty() => put(field, value.to_string()),
            _ => errors.push(format!(
                "--set {pair}: {key} is not a key {} reads (its keys are listed in docs/url-format.md)",
                framework.name()
            )),
        }
    }
    for (field, mut values) in set {
        if values.len() == 1 {
            state_link
                .inputs
                .set(field, values.pop().unwrap_or_default());
        } else {
            state_link.inputs.set_conflict(field, values);
        }
    }
}

/// The release: --version, else the one the config names, else the link's, else the newest.
fn choose_release(
    req: &Request,
    framework: Framework,
    named: Option<&'static Release>,
    has_link: bool,
    state_link: &mut Link,
    errors: &mut Vec<String>,
) {
    match &req.release {
        Some(id) => match framework.release(id) {
            Some(r) => state_link.release = Some(r),
            None => {
                let ids: Vec<&str> = framework.releases().iter().map(|r| r.id).collect();
                errors.push(format!(
                    "--version {id}: not one of the {} releases dpcalc models ({})",
                    framework.name(),
                    ids.join(", ")
                ));
            }
        },
        None => match named {
            Some(r) => state_link.release = Some(r),
            None if !has_link => state_link.release = Some(framework.default_release()),
            None => {}
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(text: &str) -> Expectation {
        expectation(text).expect("an expectation")
    }

    #[test]
    fn expectations_compare_numbers_as_the_contract_writes_them() {
        assert!(expect("max_steps=1,000").holds(Some(Num::Int(1000))));
        assert!(!expect("max_steps=1000").holds(Some(Num::Int(1001))));
        assert!(expect("gpu_hours=12").holds(Some(Num::Float(12.0))));
        assert!(!expect("gpu_hours=12").holds(Some(Num::Float(12.5))));
        assert!(expect("gpu_hours=12.5").holds(Some(Num::Float(12.5))));
        assert!(!expect("max_steps=12.5").holds(Some(Num::Int(12))));
        assert!(expect("max_steps=none").holds(None));
        assert!(!expect("max_steps=none").holds(Some(Num::Int(0))));
        assert!(!expect("max_steps=3").holds(None));
        assert!(expectation("steps=3").is_err());
        assert!(expectation("max_steps=three").is_err());
        assert!(expectation("max_steps").is_err());
    }

    #[test]
    fn links_are_told_from_files_and_split_at_the_query() {
        assert!(is_link("https://x.test/dpcalc/?framework=hf"));
        assert!(is_link("?nodes=2"));
        assert!(!is_link("configs/a.yml"));
        assert_eq!(
            split_link("https://x.test/d/?nodes=2#top"),
            ("https://x.test/d/", "nodes=2")
        );
        assert_eq!(split_link("?nodes=2"), ("", "nodes=2"));
    }
}
