//! What the fuzz targets run on every input, one function per door ([`import`], [`shell`],
//! [`cli`]), and the properties they check beyond "no panic" (issue 39): the input computes
//! within [`LIMIT`]; no message holds a control character; no markup from the input reaches a
//! rendered page; a JSON config's every key is applied or named; the round trip
//! (`tests/common/roundtrip.rs`, the one the test suite runs on the fixtures). The targets
//! (`import.rs`, `shell.rs`, `cli.rs`) only hand their input here, and `tests/fuzz.rs` runs
//! every input the fuzzers found through the same functions.

#![allow(dead_code)] // each target uses its part

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dpcalc::calc::export::export;
use dpcalc::calc::import::shell as bash;
use dpcalc::calc::import::{import_as, read, Imported, Scope};
use dpcalc::calc::spec::Reads;
use dpcalc::calc::Framework;
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
        if best <= LIMIT {
            break;
        }
    }
    if !cfg!(debug_assertions) && best > LIMIT {
        panic!("{what} took {best:?}, over {LIMIT:?}");
    }
    out.expect("run once")
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

/// The page after an import that is applied, as the page's Import button does it.
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
/// - a JSON object's every key is applied, listed as not read, or named in an error or warning
///   (never dropped silently);
/// - what the import applied, exported in the framework's format and imported again, gives the
///   same values (`tests/common/roundtrip.rs`, the check the test suite runs on its fixtures).
pub fn import(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // the page's text box holds text: invalid UTF-8 never reaches the import
    let text = String::from_utf8_lossy(rest);
    let all = Framework::ALL;
    let current = all[usize::from(pick & 7) % all.len()];
    let forced = (pick & 8 != 0).then(|| all[usize::from(pick >> 4) % all.len()]);
    let page = fresh_page(current);
    let (got, next) = in_time("import", || {
        let got = read(current, forced, &text);
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

/// A JSON object read as a framework's JSON config: every key with a value is applied, listed as
/// not read, or named in an error or a warning. A key's value is at its dotted path; a path is
/// accounted for when it, or a section above it, is named.
fn every_key_accounted(text: &str, got: &Imported) {
    let reads = got.framework.spec().import.as_ref().map(|i| i.reads);
    if got.malformed
        || !got.is_config()
        || got.scope != Scope::Config
        || !matches!(reads, Some(Reads::Json | Reads::TrainingArguments))
        || got
            .unknown
            .iter()
            .chain(&got.errors)
            .any(|m| m.starts_with('\u{2026}'))
    {
        return;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Ok(serde_json::Value::Object(top)) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    let mut paths = Vec::new();
    leaves(&serde_json::Value::Object(top), None, &mut paths);
    let import = got.framework.spec().import.as_ref().expect("importable");
    for path in paths {
        // a control character is listed as U+FFFD
        let path: String = path
            .chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect();
        let mut named = false;
        let mut at = path.as_str();
        loop {
            let field = got.framework.field(at).or_else(|| (import.alias)(at));
            named |= got.unknown.iter().any(|k| {
                k == at
                    || (k.ends_with('\u{2026}') && at.starts_with(k.trim_end_matches('\u{2026}')))
            }) || got
                .errors
                .iter()
                .chain(&got.warnings)
                .any(|m| m.contains(at))
                || field.is_some_and(|f| got.get(f).is_some());
            match at.rfind('.') {
                Some(i) if !named => at = &at[..i],
                _ => break,
            }
        }
        assert!(
            named,
            "{path} is neither applied nor named: inputs {:?}, unknown {:?}, errors {:?}, warnings {:?}",
            got.inputs, got.unknown, got.errors, got.warnings
        );
    }
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

/// Any text as a bash launch script (Megatron-LM's examples: variables, arrays, `${1:-d}`,
/// `$((…))`, `if`), read by the bash reader (`calc::import::shell`) and then by the import of the
/// framework the first byte picks, as the page's Import reads a pasted script. Checked on every
/// input:
/// - reading it and computing the page it leads to take under 100 ms (`in_time`);
/// - the reader stays within its bounds: at most `MAX_WORDS` words, each at most `MAX_LEN`
///   bytes, or it says the script grew too large;
/// - no import message holds a control character, the page holds no markup from the text;
/// - the round trip of what was applied (`tests/common/roundtrip.rs`).
pub fn shell(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    // Megatron-LM (its scripts), or another framework whose import reads a launcher line
    let all = Framework::ALL;
    let fw = match pick & 1 {
        0 => Framework::from_id("megatron").expect("megatron"),
        _ => all[usize::from(pick >> 1) % all.len()],
    };
    let page = fresh_page(fw);
    let (script, got, next) = in_time("the script", || {
        let script = bash::read(&text);
        let got = import_as(fw, &text);
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

/// `dpcalc check` as a library call (`dpcalc::cli::check`): its files, links and flags built from
/// the input. The first byte says which outputs (`--json`, `--link`, `--card`) and how many files;
/// the rest is split at NUL bytes: the files' texts (written to a scratch directory), then one
/// argument per part, its first character naming it (`f` --framework, `v` --version, `n`
/// --nodes, `g` --gpus-per-node, `s` --set, `e` --expect, `b` --base, `l` a link). Checked on
/// every input:
/// - the check takes under 100 ms (`in_time`);
/// - the exit status is 0, 1 or 2, and with 2 nothing is printed on standard output;
/// - standard output and error are UTF-8 with no control character but line ends; `--json`
///   prints one JSON document;
/// - the summary card holds only the card's own elements and attributes.
pub fn cli(data: &[u8]) {
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
    let (code, out, err) = in_time("dpcalc check", || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = check(&args, &mut out, &mut err);
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

/// This process's scratch directory for the files and the card.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("dpcalc-fuzz-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    })
}

/// Any bytes as a query string: decoding and computing take under 100 ms; the canonical link
/// the page writes computes the same report; the snippets never panic.
pub fn query(data: &[u8]) {
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
