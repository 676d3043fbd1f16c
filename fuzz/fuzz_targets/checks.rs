//! What the fuzz targets run on every input, one function per door ([`import`], [`shell`],
//! [`cli`]), and the properties they check beyond "no panic" (issue 39): the input computes
//! within [`LIMIT`]; no message holds a control character; no markup from the input reaches a
//! rendered page; a config's every key (JSON, YAML, TOML, accelerate's) is applied or named; the
//! import settled against the page's cluster as the page settles it; the round trip
//! (`tests/common/roundtrip.rs`, the one the test suite runs on the fixtures). The targets
//! (`import.rs`, `shell.rs`, `cli.rs`) only hand their input here, and `tests/fuzz.rs` runs
//! every input the fuzzers found through the same functions.

#![allow(dead_code)] // each target uses its part

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use dpcalc::calc::export::export;
use dpcalc::calc::import::shell as bash;
use dpcalc::calc::import::{import_as, read, Imported, Scope};
use dpcalc::calc::spec::Reads;
use dpcalc::calc::Framework;
use dpcalc::cli::plan::{plan, PlanArgs};
use dpcalc::cli::{check, CheckArgs};
use dpcalc::first::render;
use dpcalc::page::Page;
use dpcalc::query::Link;
use dpcalc::state::{Action, State};

/// The longest one input may take (native, release): the page recomputes on every paste.
pub const LIMIT: Duration = Duration::from_millis(100);

/// Runs `f` and panics when it took longer than [`LIMIT`] (release builds only). The machine is
/// shared and the fuzzer runs under `nice`, so a slow run is timed twice more and the fastest of
/// the three counts: an input is slow when it is slow every time, not when the fuzzer waited.
pub fn in_time<T>(what: &str, mut f: impl FnMut() -> T) -> T {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..3 {
        let start = Instant::now();
        let got = f();
        best = best.min(start.elapsed());
        out = Some(got);
        // timed again only when it is over the limit or the slowest yet ([`slowest`]): a
        // record is the fastest of three runs too, not a moment the fuzzer waited
        if best <= LIMIT && best <= slowest_yet() {
            break;
        }
    }
    slowest(best);
    if !cfg!(debug_assertions) && best > LIMIT {
        panic!("{what} took {best:?}, over {LIMIT:?}");
    }
    out.expect("run once")
}

/// The door and the input being checked (set by each door; read by [`slowest`]).
static INPUT: Mutex<(&str, Vec<u8>)> = Mutex::new(("", Vec::new()));

/// The slowest time [`in_time`] measured in this process.
static SLOWEST: Mutex<Duration> = Mutex::new(Duration::ZERO);

/// The slowest time recorded in this process.
fn slowest_yet() -> Duration {
    SLOWEST.lock().map_or(Duration::MAX, |d| *d)
}

/// Each door says which input it checks, for [`slowest`].
fn checking(door: &'static str, data: &[u8]) {
    if let Ok(mut input) = INPUT.lock() {
        input.0 = door;
        input.1.clear();
        input.1.extend_from_slice(data);
    }
}

/// The fuzz target records its slowest input: when `took` is the longest this process has
/// measured, `fuzz/slowest-<door>.txt` gets the time, the input's length and its first 300
/// bytes (escaped), and `fuzz/slowest-<door>.input` the input itself (written by the fuzz
/// targets only, not by `tests/fuzz.rs`; not checked in).
fn slowest(took: Duration) {
    let root = env!("CARGO_MANIFEST_DIR");
    if !root.ends_with("fuzz") {
        return;
    }
    let Ok(mut max) = SLOWEST.lock() else { return };
    if took <= *max {
        return;
    }
    *max = took;
    let Ok(input) = INPUT.lock() else { return };
    let (door, data) = (input.0, &input.1);
    let prefix = data[..data.len().min(300)].escape_ascii().to_string();
    let text = format!(
        "{door}: the slowest input so far took {took:?} (limit {LIMIT:?}); {} bytes\n{prefix}\n",
        data.len()
    );
    let _ = std::fs::write(format!("{root}/slowest-{door}.txt"), text);
    let _ = std::fs::write(format!("{root}/slowest-{door}.input"), data);
}

/// A message, a listed key or a one-line output: no control character at all (a terminal, the
/// page's `data-*` attribute and a screen reader get it as it is).
pub fn one_line(what: &str, text: &str) {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        panic!(
            "{what} holds the control character U+{:04X}: {text:?}",
            c as u32
        );
    }
}

/// A multi-line output (the command line's text, an exported config): lines and tabs, and no
/// other control character.
pub fn lines(what: &str, text: &str) {
    if let Some(c) = text
        .chars()
        .find(|&c| c.is_control() && c != '\n' && c != '\t')
    {
        panic!(
            "{what} holds the control character U+{:04X}: {text:?}",
            c as u32
        );
    }
}

/// The elements and attributes a first view writes: those of the pages of every link of
/// `tests/links.txt` in every framework, and HTML's switches (learned once).
fn vocabulary() -> &'static (BTreeSet<String>, BTreeSet<String>) {
    static V: OnceLock<(BTreeSet<String>, BTreeSet<String>)> = OnceLock::new();
    V.get_or_init(|| {
        let mut tags = BTreeSet::new();
        let mut attrs: BTreeSet<String> = ["checked", "disabled", "selected", "open", "hidden"]
            .map(String::from)
            .into();
        // built in fuzz/ (the targets) or at the root (tests/fuzz.rs)
        let root = env!("CARGO_MANIFEST_DIR");
        let links = std::fs::read_to_string(format!("{root}/../tests/links.txt"))
            .or_else(|_| std::fs::read_to_string(format!("{root}/tests/links.txt")))
            .expect("tests/links.txt");
        let queries = links
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains("=>"))
            .map(|l| l.split("=>").next().unwrap_or_default().trim().to_string());
        for q in queries.chain(["nodes=0&micro_batch_size=x&colour=1".to_string()]) {
            for &fw in Framework::ALL {
                let mut link = dpcalc::query::decode(&q);
                link.framework = fw;
                let (t, a) = markup_of(&page_of(&State::from_link(link)));
                tags.extend(t);
                attrs.extend(a);
            }
        }
        (tags, attrs)
    })
}

/// Learns what the checks learn once ([`vocabulary`], the cards', the fresh pages), before the
/// first input: libFuzzer's `-timeout` then times the inputs alone.
pub fn warm() {
    vocabulary();
    card_is_clean("", "");
    for &fw in Framework::ALL {
        start_page(fw, true);
    }
}

/// The first view of a state, as a cold visit paints it.
pub fn page_of(state: &State) -> String {
    render(&Page::new(state, "https://docs.example/dpcalc/"))
}

/// The element and attribute names a page writes (a simple tokenizer of the first view's own
/// HTML: tags, then `name="value"` pairs; comments and the doctype skipped).
fn markup_of(html: &str) -> (Vec<String>, Vec<String>) {
    let (mut tags, mut attrs) = (Vec::new(), Vec::new());
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        if rest.starts_with('!') {
            continue;
        }
        let body = rest.trim_start_matches('/');
        let end = body.find('>').unwrap_or(body.len());
        let tag = &body[..end];
        let name_end = tag
            .find(|c: char| c.is_whitespace() || c == '/')
            .unwrap_or(tag.len());
        tags.push(tag[..name_end].to_string());
        // attribute names: the word before each `=` outside quotes
        let mut a = &tag[name_end..];
        loop {
            a = a.trim_start();
            let Some(eq) = a.find('=') else {
                for w in a.split_whitespace() {
                    attrs.push(w.trim_end_matches('/').to_string());
                }
                break;
            };
            for w in a[..eq].split_whitespace() {
                attrs.push(w.to_string());
            }
            let v = &a[eq + 1..];
            a = match v.strip_prefix('"') {
                Some(q) => q.find('"').map_or("", |c| &q[c + 1..]),
                None => v.find(char::is_whitespace).map_or("", |c| &v[c..]),
            };
        }
        rest = &body[end..];
    }
    attrs.retain(|a| !a.is_empty());
    (tags, attrs)
}

/// A page holds no markup from `input`: every element and attribute it writes is the first
/// view's own, or a name the input does not hold (a page's own name the links did not show).
pub fn no_markup(what: &str, html: &str, input: &str) {
    let (tags, attrs) = vocabulary();
    let (t, a) = markup_of(html);
    let input = input.to_ascii_lowercase();
    let from_input = |n: &String| input.contains(&n.to_ascii_lowercase());
    if let Some(bad) = t.iter().find(|t| !tags.contains(*t) && from_input(t)) {
        panic!("{what}: the page holds an element <{bad}> from the input");
    }
    if let Some(bad) = a.iter().find(|a| !attrs.contains(*a) && from_input(a)) {
        panic!("{what}: the page holds an attribute {bad:?} from the input");
    }
}

/// An import settled against the page's own cluster, as the page's Import button and `dpcalc
/// check` do before applying it (`Imported::settle`: a script's default of an unset variable
/// gives way to the page's value, and a note says so).
pub fn settled(page: &State, mut got: Imported) -> Imported {
    got.settle(&page.link.inputs);
    got
}

/// The page after an import that is applied, as the page's Import button does it (after
/// [`settled`]).
pub fn apply(page: &State, got: &Imported) -> State {
    page.reduce(Action::Import(
        got.framework,
        got.release,
        got.merged_into(&page.link.inputs),
    ))
    .unwrap_or_else(|| page.clone())
}

/// The page of `state` holds no markup from `input` ([`no_markup`]); it is drawn only when a
/// value the page writes could hold some (one of `<>"'&`): otherwise nothing can be.
pub fn page_is_clean(what: &str, state: &State, input: &str) {
    let risky = |v: &str| v.contains(['<', '>', '"', '\'', '&']);
    if state.link.inputs.given().any(|(_, v)| risky(v)) {
        no_markup(what, &page_of(state), input);
    }
}

// the suite's own comparison; `tests/fuzz.rs` loads it a second time through this file (the
// fuzz crate has no `tests/common`)
#[allow(clippy::duplicate_mod)]
#[path = "../../tests/common/roundtrip.rs"]
mod roundtrip;

/// What an import says: no message, listed key or note holds a control character.
pub fn messages(got: &Imported) {
    one_line("the summary", &got.summary());
    for m in got.errors.iter().chain(&got.warnings).chain(&got.notes) {
        one_line("an import message", m);
    }
    for k in &got.unknown {
        one_line("an ignored key", k);
    }
}

/// The round trip from a page's state: its inputs exported in the framework's format (clean
/// text) and imported again give the same values (`tests/common/roundtrip.rs`).
pub fn round_trip(state: &State) {
    let link = &state.link;
    let (fw, rel) = (link.framework, link.release().id);
    let e = export(fw, rel, &link.inputs, &state.report);
    lines("the export", &e.text);
    for n in &e.notes {
        one_line("an export note", n);
    }
    let back = import_as(fw, &e.text);
    roundtrip::check(fw.id(), link, &e.text, &e.notes, &back);
}

thread_local! {
    /// Each framework's fresh page (computed once: the state an import starts from).
    static FRESH: Vec<State> = Framework::ALL
        .iter()
        .map(|&framework| State::from_link(Link { framework, ..Link::default() }))
        .collect();
    /// Each framework's page with a cluster given (3 nodes of 4 GPUs): a script's default of an
    /// unset variable gives way to it (`Imported::settle`, with a note).
    static CLUSTERED: Vec<State> = Framework::ALL
        .iter()
        .map(|&framework| {
            let mut link = dpcalc::query::decode("nodes=3&gpus_per_node=4");
            link.framework = framework;
            State::from_link(link)
        })
        .collect();
}

/// The page an import starts from: `framework`'s first visit, or with a cluster given.
pub fn start_page(framework: Framework, cluster: bool) -> State {
    if !cluster {
        return fresh_page(framework);
    }
    let i = Framework::ALL
        .iter()
        .position(|&f| f == framework)
        .unwrap_or(0);
    CLUSTERED.with(|pages| pages[i].clone())
}

/// The page a first visit to `framework` shows.
pub fn fresh_page(framework: Framework) -> State {
    let i = Framework::ALL
        .iter()
        .position(|&f| f == framework)
        .unwrap_or(0);
    FRESH.with(|pages| pages[i].clone())
}

/// The summary card holds no markup from `input`: every element and attribute is one of the
/// cards of every framework's fresh page (with messages), or a name the input does not hold.
pub fn card_is_clean(svg: &str, input: &str) {
    static V: OnceLock<(BTreeSet<String>, BTreeSet<String>)> = OnceLock::new();
    let (tags, attrs) = V.get_or_init(|| {
        let (mut tags, mut attrs) = (BTreeSet::new(), BTreeSet::new());
        for &fw in Framework::ALL {
            for q in [
                "",
                "nodes=0&micro_batch_size=x&base_model=m",
                "nodes=2&gpus_per_node=8",
            ] {
                let mut link = dpcalc::query::decode(q);
                link.framework = fw;
                let state = State::from_link(link);
                let svg = dpcalc::calc::card::svg(
                    fw,
                    state.link.release().id,
                    &state.link.inputs,
                    &state.report,
                    "https://docs.example/dpcalc/?x=1",
                );
                let (t, a) = markup_of(&svg);
                tags.extend(t);
                attrs.extend(a);
            }
        }
        (tags, attrs)
    });
    let (t, a) = markup_of(svg);
    let input = input.to_ascii_lowercase();
    let from_input = |n: &String| input.contains(&n.to_ascii_lowercase());
    if let Some(bad) = t.iter().find(|t| !tags.contains(*t) && from_input(t)) {
        panic!("the card holds an element <{bad}> from the input");
    }
    if let Some(bad) = a.iter().find(|a| !attrs.contains(*a) && from_input(a)) {
        panic!("the card holds an attribute {bad:?} from the input");
    }
    lines("the card", svg);
}

// ---- the doors ------------------------------------------------------------------------------

/// Any text pasted into the page's Import box, as the page reads it: `calc::import::read` with
/// the current framework and "Read as" picked by the first byte (every format: YAML, JSON, TOML,
/// command lines and bash scripts, TrainingArguments, launcher lines, accelerate configs, a
/// model's config.json). Checked on every input:
/// - the import and the page it leads to compute within 100 ms (`in_time`);
/// - no message, listed key or note holds a control character (`one_line`);
/// - the page after the import holds no markup from the text (`no_markup`);
/// - a config's every key (JSON, YAML, TOML, accelerate's YAML) is applied, listed as not read,
///   or named in an error or warning (never dropped silently: [`every_key_accounted`]);
/// - the import is settled against the page's cluster first (`Imported::settle`, as the page
///   and `dpcalc check` do; not forced, the fifth bit starts from a page with a cluster), so
///   its notes are checked too;
/// - what the import applied, exported in the framework's format and imported again, gives the
///   same values (`tests/common/roundtrip.rs`, the check the test suite runs on its fixtures).
pub fn import(data: &[u8]) {
    checking("import", data);
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // the page's text box holds text: invalid UTF-8 never reaches the import
    let text = String::from_utf8_lossy(rest);
    let all = Framework::ALL;
    let current = all[usize::from(pick & 7) % all.len()];
    let forced = (pick & 8 != 0).then(|| all[usize::from(pick >> 4) % all.len()]);
    // not forced, the fifth bit starts from a page with a cluster given
    let page = start_page(current, forced.is_none() && pick & 0x10 != 0);
    let (got, next) = in_time("import", || {
        let got = settled(&page, read(current, forced, &text));
        let next = got.applicable().then(|| apply(&page, &got));
        (got, next)
    });
    messages(&got);
    every_key_accounted(&text, &got);
    let Some(next) = next else {
        return;
    };
    page_is_clean("the page after the import", &next, &text);
    round_trip(&next);
}

/// The last part of the path [`yaml_paths`] gives a value whose key is not text (a list or a
/// mapping as a key): the import names it "a key that is not text, at …", or names a section
/// above it.
const NOT_TEXT: &str = "\u{0}a key that is not text";

/// A config read as a framework's config (JSON, TrainingArguments' JSON, flat or nested YAML,
/// TOML) or as accelerate's config YAML: every key with a value is applied, listed as not read,
/// or named in an error or a warning. A key's value is at its dotted path (as the import names
/// nested keys: `fsdp_config.state_dict_type`, `parallelism.dp`, `[training] steps` is
/// `training.steps`); a path is accounted for when it, or a section above it, is named. The
/// paths come from the text by another reading than the import's (`serde_json`, the `toml`
/// crate, `yaml-rust2`'s events walked here), so a key the import skips shows.
fn every_key_accounted(text: &str, got: &Imported) {
    let Some(import) = got.framework.spec().import.as_ref() else {
        return;
    };
    if got.malformed
        || !got.is_config()
        || got
            .unknown
            .iter()
            .chain(&got.errors)
            .any(|m| m.starts_with('\u{2026}'))
    {
        return;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let accelerate = got.scope == Scope::Cluster && dpcalc::calc::import::looks_yaml(text);
    let paths = match (got.scope, import.reads) {
        _ if accelerate => yaml_paths(text),
        (Scope::Config, Reads::Json | Reads::TrainingArguments) => json_paths(text),
        (Scope::Config, Reads::Yaml | Reads::YamlNested) => yaml_paths(text),
        (Scope::Config, Reads::Toml) => toml_paths(text),
        _ => None,
    };
    for path in paths.unwrap_or_default() {
        // a key that is not text: its section (`None` at the top; an empty key is a section)
        let not_text = path.strip_suffix(NOT_TEXT).map(|p| p.strip_suffix('.'));
        // a control character is listed as U+FFFD
        let path: String = not_text
            .flatten()
            .unwrap_or(&path)
            .chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect();
        let named = if let Some(section) = not_text {
            got.unknown
                .iter()
                .any(|k| k.starts_with("a key that is not text"))
                || (section.is_some() && path_or_section_named(&path, got))
        } else {
            (accelerate && accelerate_reads(&path, got))
                || joined(&path, got)
                || path_or_section_named(&path, got)
        };
        assert!(
            named,
            "{path} is neither applied nor named: inputs {:?}, unknown {:?}, errors {:?}, warnings {:?}",
            got.inputs, got.unknown, got.errors, got.warnings
        );
    }
}

/// Whether `path`, or a section above it, is applied (the field it names has a value, or is
/// left empty by an error that names the field: a key given twice), listed as not read, or
/// named in an error or a warning.
fn path_or_section_named(path: &str, got: &Imported) -> bool {
    let import = got.framework.spec().import.as_ref().expect("importable");
    let messages = || got.errors.iter().chain(&got.warnings);
    let mut at = path;
    loop {
        let field = got.framework.field(at).or_else(|| (import.alias)(at));
        // a message quotes a long key by its first 40 characters
        let short: String = at.chars().take(40).collect();
        let named = got.unknown.iter().any(|k| {
            k == at || (k.ends_with('\u{2026}') && at.starts_with(k.trim_end_matches('\u{2026}')))
        }) || messages()
            .any(|m| m.contains(at) || m.contains(&format!("{short}\u{2026}")))
            || field.is_some_and(|f| {
                got.get(f).is_some()
                    || got
                        .errors
                        .iter()
                        .any(|m| m.contains("given again") && m.contains(f.key()))
            });
        match at.rfind('.') {
            _ if named => return true,
            Some(i) => at = &at[..i],
            None => return false,
        }
    }
}

/// A framework's joined key (`Import::joined`: torchtitan's `model.flavor`, read into
/// `model.name`'s value) whose first key was applied.
fn joined(path: &str, got: &Imported) -> bool {
    let import = got.framework.spec().import.as_ref().expect("importable");
    import.joined.iter().any(|(first, second)| {
        *second == path
            && got
                .framework
                .field(first)
                .or_else(|| (import.alias)(first))
                .is_some_and(|f| got.get(f).is_some())
    })
}

/// accelerate's config: `num_machines` and `num_processes` fill the cluster (nodes, GPUs per
/// node, or the world size as written); `parallelism_config`'s sizes and backends are read
/// against what the page computes (`calc/import/accelerate.rs`: a size or backend that differs
/// is a warning, one that agrees is the page's own layout).
fn accelerate_reads(path: &str, got: &Imported) -> bool {
    use dpcalc::calc::Field;
    match path {
        "num_machines" | "num_processes" => [Field::Nodes, Field::GpusPerNode, Field::WorldSize]
            .iter()
            .any(|&f| got.get(f).is_some()),
        _ => path
            .strip_prefix("parallelism_config.parallelism_config_")
            .is_some_and(|k| {
                [
                    "dp_replicate_size",
                    "dp_shard_size",
                    "tp_size",
                    "cp_size",
                    "sp_size",
                    "cp_backend",
                    "sp_backend",
                ]
                .contains(&k)
            }),
    }
}

/// The dotted paths of a JSON object's leaves with a value (null is "not given"); `None` when
/// the text is no JSON object.
fn json_paths(text: &str) -> Option<Vec<String>> {
    let top @ serde_json::Value::Object(_) =
        serde_json::from_str::<serde_json::Value>(text).ok()?
    else {
        return None;
    };
    let mut paths = Vec::new();
    leaves(&top, None, &mut paths);
    Some(paths)
}

/// The dotted paths of a JSON value's leaves with a value (null is "not given").
fn leaves(v: &serde_json::Value, path: Option<String>, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Null => {}
        // an empty section gives no value; an empty key is a key (`"": {"stage": 1}` is `.stage`)
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let p = match &path {
                    None => k.clone(),
                    Some(path) => format!("{path}.{k}"),
                };
                leaves(v, Some(p), out);
            }
        }
        _ => out.extend(path),
    }
}

/// The dotted paths of a TOML document's values (`[a.b] c = 1` is `a.b.c`; an array is one
/// value), read by the `toml` crate; `None` when it is not TOML.
fn toml_paths(text: &str) -> Option<Vec<String>> {
    fn walk(table: &toml::Table, path: &str, out: &mut Vec<String>) {
        for (k, v) in table {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            match v {
                toml::Value::Table(t) => walk(t, &p, out),
                _ => out.push(p),
            }
        }
    }
    let table: toml::Table = toml::from_str(text).ok()?;
    let mut out = Vec::new();
    walk(&table, "", &mut out);
    Some(out)
}

/// The dotted paths of a YAML mapping's values, as PyYAML loads it: a scalar (a plain `~`,
/// `null` or nothing is "not given"), a list, an alias of a collection; a scalar alias is its
/// anchor's value; a key that is not text is [`NOT_TEXT`]. `None` when the text is no YAML
/// mapping, or more than one document.
fn yaml_paths(text: &str) -> Option<Vec<String>> {
    use yaml_rust2::parser::{Event, Parser};
    use yaml_rust2::scanner::TScalarStyle;
    /// A node: a scalar (its text, and whether it is null), a collection, an alias of one.
    enum Node {
        Value(String, bool),
        Map,
        List,
        Alias,
    }
    /// A mapping being read (its path, the key waiting for its value: `Some(None)` for a key
    /// that is not text), or a collection whose inside is not read.
    enum Frame {
        /// (`None`: the top; an empty key is a key: `"": {b: 1}` is `.b`)
        Map(Option<String>, Option<Option<String>>),
        Skip,
    }
    let mut parser = Parser::new_from_str(text);
    let (mut frames, mut out, mut docs) = (Vec::<Frame>::new(), Vec::new(), 0);
    let mut anchors: Vec<(usize, String, bool)> = Vec::new();
    let null = |v: &str, st: TScalarStyle| {
        st == TScalarStyle::Plain && matches!(v, "" | "~" | "null" | "Null" | "NULL")
    };
    loop {
        let node = match parser.next_token().ok()?.0 {
            Event::StreamEnd => break,
            Event::DocumentStart => {
                docs += 1;
                if docs > 1 {
                    return None;
                }
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                continue;
            }
            Event::Scalar(v, st, anchor, _) => {
                let is_null = null(&v, st);
                if anchor != 0 {
                    anchors.push((anchor, v.clone(), is_null));
                }
                Node::Value(v, is_null)
            }
            Event::MappingStart(..) => Node::Map,
            Event::SequenceStart(..) => Node::List,
            Event::Alias(id) => match anchors.iter().rev().find(|(a, _, _)| *a == id) {
                Some((_, v, is_null)) => Node::Value(v.clone(), *is_null),
                None => Node::Alias,
            },
            _ => continue,
        };
        let Some(top) = frames.last_mut() else {
            // the document's root: a mapping, or nothing
            match node {
                Node::Map => frames.push(Frame::Map(None, None)),
                Node::Value(_, true) => {}
                _ => return None,
            }
            continue;
        };
        let Frame::Map(path, key) = top else {
            if matches!(node, Node::Map | Node::List) {
                frames.push(Frame::Skip);
            }
            continue;
        };
        let Some(k) = key.take() else {
            // a key
            // a scalar key as written (`~:` is the key None to PyYAML; the import names it `~`)
            let collection = matches!(node, Node::Map | Node::List);
            *key = Some(match node {
                Node::Value(k, _) => Some(k),
                _ => None,
            });
            if collection {
                frames.push(Frame::Skip);
            }
            continue;
        };
        let k = k.unwrap_or_else(|| NOT_TEXT.to_string());
        let p = match path {
            None => k,
            Some(path) => format!("{path}.{k}"),
        };
        let not_text = p.ends_with(NOT_TEXT);
        match node {
            Node::Value(_, true) => {
                if not_text {
                    out.push(p);
                }
            }
            Node::Value(_, false) | Node::Alias => out.push(p),
            Node::List => {
                out.push(p);
                frames.push(Frame::Skip);
            }
            Node::Map if not_text => {
                out.push(p);
                frames.push(Frame::Skip);
            }
            Node::Map => frames.push(Frame::Map(Some(p), None)),
        }
    }
    Some(out)
}

/// Any text as a bash launch script (Megatron-LM's examples: variables, arrays, `${1:-d}`,
/// `$((…))`, `if`), read by the bash reader (`calc::import::shell`) and then by the import of the
/// framework the first byte picks, as the page's Import reads a pasted script. Checked on every
/// input:
/// - reading it and computing the page it leads to take under 100 ms (`in_time`);
/// - the reader stays within its bounds: at most `MAX_WORDS` words, each at most `MAX_LEN`
///   bytes, or it says the script grew too large;
/// - the import is settled against the page's cluster first (`Imported::settle`, as the page
///   does; the first byte's last bit starts from a page with a cluster): a script's default of an
///   unset variable gives way, with a note;
/// - no import message or note holds a control character, the page holds no markup from the text;
/// - the round trip of what was applied (`tests/common/roundtrip.rs`).
pub fn shell(data: &[u8]) {
    checking("shell", data);
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    // Megatron-LM (its scripts), or another framework whose import reads a launcher line
    let all = Framework::ALL;
    let fw = match pick & 1 {
        0 => Framework::from_id("megatron").expect("megatron"),
        _ => all[usize::from(pick >> 1 & 0x3f) % all.len()],
    };
    // the last bit starts from a page with a cluster given (the script's defaults give way)
    let page = start_page(fw, pick & 0x80 != 0);
    let (script, got, next) = in_time("the script", || {
        let script = bash::read(&text);
        let got = settled(&page, import_as(fw, &text));
        let next = got.applicable().then(|| apply(&page, &got));
        (script, got, next)
    });
    if !script.too_large {
        assert!(
            script.command.len() <= bash::MAX_WORDS,
            "{} words",
            script.command.len()
        );
        for w in &script.command {
            assert!(w.len() <= bash::MAX_LEN, "a word of {} bytes", w.len());
        }
    }
    messages(&got);
    let Some(next) = next else {
        return;
    };
    page_is_clean("the page after the import", &next, &text);
    round_trip(&next);
}

/// `dpcalc check` and `dpcalc plan` as library calls (`dpcalc::cli::check`, `dpcalc::cli::plan::plan`):
/// their files, links and flags built from the input. The first byte says which command (its
/// bits 5-6: `check`, `plan`, `plan --scale`, `plan --expect-within-best`), which outputs
/// (`--json`, `--link`, `--card`) and how many files; the rest is split at NUL bytes: the files'
/// texts (written to a scratch directory), then one argument per part, its first character
/// naming it (`f` --framework, `v` --version, `n` --nodes, `g` --gpus-per-node, `s` --set, `e`
/// --expect, or plan's percentage, `b` --base, `l` a link). Checked on every input:
/// - the command takes under 100 ms (`in_time`);
/// - the exit status is 0, 1 or 2, and with 2 nothing is printed on standard output;
/// - standard output and error are UTF-8 with no control character but line ends; `--json`
///   prints one JSON document;
/// - the summary card holds only the card's own elements and attributes.
pub fn cli(data: &[u8]) {
    checking("cli", data);
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.split(|&b| b == 0);
    let mut args = CheckArgs {
        json: pick & 1 != 0,
        link: pick & 3 == 2,
        ..CheckArgs::default()
    };
    let dir = scratch();
    for name in ["a", "b"].iter().take(usize::from(pick >> 3 & 3).min(2)) {
        let path = dir.join(name);
        std::fs::write(&path, parts.next().unwrap_or_default()).expect("a scratch file");
        args.input.inputs.push(path.to_string_lossy().into_owned());
    }
    let card = dir.join("card.svg");
    let _ = std::fs::remove_file(&card);
    if pick & 4 != 0 {
        args.card = Some(card.clone());
    }
    for part in parts {
        let part = String::from_utf8_lossy(part);
        let mut chars = part.chars();
        let (Some(which), value) = (chars.next(), chars.as_str().to_string()) else {
            continue;
        };
        match which {
            'f' => args.input.framework = Some(value),
            'v' => args.input.release = Some(value),
            'n' => args.input.nodes = Some(value),
            'g' => args.input.gpus_per_node = Some(value),
            's' => args.input.set.push(value),
            'e' => args.expect.push(value),
            'b' => args.base = Some(value),
            // a link (never `-`: standard input is the fuzzer's)
            'l' if value.starts_with("http") => args.input.inputs.push(value),
            'l' => args.input.inputs.push(format!("?{value}")),
            _ => {}
        }
    }
    let command = pick >> 5 & 3;
    if command != 0 {
        // `plan` prints no card and no link
        args.card = None;
    }
    let (code, out, err) = in_time("dpcalc check or plan", || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = match command {
            0 => check(&args, &mut out, &mut err),
            _ => plan(&plan_args(&args, command), &mut out, &mut err),
        };
        (code, out, err)
    });
    assert!(code <= 2, "exit status {code}");
    let out = String::from_utf8(out).expect("standard output is UTF-8");
    let err = String::from_utf8(err).expect("standard error is UTF-8");
    lines("standard output", &out);
    lines("standard error", &err);
    if code == 2 {
        assert!(out.is_empty(), "unreadable, yet printed: {out}");
    } else if args.json {
        serde_json::from_str::<serde_json::Value>(&out).expect("--json prints JSON");
    }
    if code != 2 && args.card.is_some() {
        let svg = std::fs::read_to_string(&card).expect("the card is written");
        card_is_clean(&svg, &String::from_utf8_lossy(data));
    }
}

/// `dpcalc plan`'s arguments from `check`'s: `command` 2 is `--scale`, 3 `--expect-within-best`
/// (the first `--expect` as a percentage, else 10).
fn plan_args(args: &CheckArgs, command: u8) -> PlanArgs {
    let within = (command == 3).then(|| {
        args.expect
            .first()
            .and_then(|e| e.trim().trim_end_matches('%').parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x >= 0.0)
            .unwrap_or(10.0)
    });
    PlanArgs {
        input: args.input.clone(),
        expect_within_best: within,
        json: args.json,
        scale: command == 2,
        base: args.base.clone(),
    }
}

/// This thread's scratch directory for the files and the card (`tests/fuzz.rs` runs the doors
/// on several threads of one process: each writes and removes its own card).
fn scratch() -> PathBuf {
    thread_local! {
        static DIR: PathBuf = {
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("dpcalc-fuzz-cli-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a scratch directory");
            dir
        };
    }
    DIR.with(PathBuf::clone)
}

/// Any bytes as a query string: decoding and computing take under 100 ms; the canonical link
/// the page writes computes the same report; the snippets never panic.
pub fn query(data: &[u8]) {
    checking("query", data);
    let text = String::from_utf8_lossy(data);
    let (link, report) = in_time("the link", || {
        let link = dpcalc::query::decode(&text);
        let report = link.report();
        (link, report)
    });
    let again = dpcalc::query::decode(&dpcalc::query::encode(&link));
    assert_eq!(again.framework, link.framework);
    assert_eq!(again.report(), report);
    let _ = dpcalc::embed::snippets(link.framework, "u", "v", &link.inputs, &report);
}
