//! The first screen's fixed markup (ids, classes, `aria-*` values, `data-*` names, fixed texts)
//! comes from one place, `page::markup`, for both renderers: the first view (`src/first.rs`) and
//! the Yew components that draw the same parts. Checked on their source (no literal attribute
//! value or text where an entry belongs; every entry used by both) and on what the first view
//! writes for a few links (every class, id, label and `data-*` name it writes is an entry, or an
//! entry and a field's key). The end-to-end test `tests/e2e/first.mjs` compares the two
//! renderers' values and texts in a browser.

use crate::common::files::read;
use std::collections::BTreeSet;
use std::ops::Range;

use dpcalc::calc::Level;
use dpcalc::first::render;
use dpcalc::page::{self, markup, Page};
use dpcalc::state::State;

/// The components that draw what the first view draws (the picker, the form with its groups
/// and rows, the messages and notices, the results, the summary bar and the examples, the page
/// skeleton); the fixes under an error are the app's alone (`components/fixes.rs`).
const COMPONENTS: &[&str] = &[
    "src/app.rs",
    "src/components/picker.rs",
    "src/components/form.rs",
    "src/components/messages.rs",
    "src/components/results.rs",
    "src/components/summary.rs",
];
const FIRST: &str = "src/first.rs";
/// The view model, which writes the rows' classes and the messages' ids for both.
const PAGE: &str = "src/page.rs";

/// Attributes whose values are HTML's own words, not the page's: written as literals.
const HTML_VOCABULARY: &[&str] = &["type", "target", "rel", "autocomplete", "spellcheck"];

/// A string literal of a Rust source: its range in the source (quotes included) and its text
/// as written (escapes kept).
struct Literal {
    at: Range<usize>,
    text: String,
}

/// The source's string literals and, in `masked`, the source with every literal's text and every
/// comment blanked (so a search finds code only).
fn lex(src: &str) -> (Vec<Literal>, String) {
    let b = src.as_bytes();
    let mut masked = b.to_vec();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                masked[i..end].fill(b' ');
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i..].find("*/").map_or(b.len(), |n| i + n + 2);
                masked[i..end].fill(b' ');
                i = end;
            }
            // a char literal ('"', '\'', 'x'); otherwise a lifetime
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let end = src[i + 2..].find('\'').unwrap() + i + 3;
                masked[i..end].fill(b' ');
                i = end;
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                masked[i..i + 3].fill(b' ');
                i += 3;
            }
            b'r' if b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"') => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"')
                    || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                {
                    i += 1;
                    continue;
                }
                let open = i + 1 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = src[open + 1..].find(&close).unwrap() + open + 1;
                out.push(Literal {
                    at: i..end + close.len(),
                    text: src[open + 1..end].to_string(),
                });
                masked[open + 1..end].fill(b' ');
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                out.push(Literal {
                    at: i..j + 1,
                    text: src[i + 1..j].to_string(),
                });
                masked[i + 1..j].fill(b' ');
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    (out, String::from_utf8(masked).unwrap())
}

/// The bodies of the `html! { … }` invocations (in the masked source).
fn html_bodies(masked: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for (at, _) in masked.match_indices("html!") {
        let open = at + masked[at..].find('{').unwrap();
        assert!(
            masked[at + 5..open].trim().is_empty(),
            "html! without braces"
        );
        let mut depth = 0;
        for (k, c) in masked[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                out.push(open..open + k + 1);
                break;
            }
        }
    }
    out
}

fn values() -> BTreeSet<&'static str> {
    markup::ALL.iter().map(|&(_, v)| v).collect()
}

/// The `data-*` names a renderer may write: the entries, and a message's `data-LEVEL`.
fn data_names() -> BTreeSet<String> {
    let levels = [Level::Error, Level::Warning, Level::Note, Level::Hint];
    (markup::ALL.iter())
        .filter(|(n, _)| n.starts_with("DATA_"))
        .map(|&(_, v)| v.to_string())
        .chain(levels.map(|l| format!("data-{}", page::level_name(l))))
        .collect()
}

/// `text` (a literal as written) with its escaped quotes as quotes.
fn unescape_quotes(text: &str) -> String {
    text.replace("\\\"", "\"")
}

/// What a literal of the first view writes that should be an entry: an attribute value (`NAME="`
/// not followed by `"`, a format argument or the literal's end) or a text (`>` not followed by
/// `<`, an argument or the end).
fn first_view_literal(text: &str) -> Option<String> {
    let t = unescape_quotes(text);
    for (at, _) in t.match_indices("=\"") {
        let name_start = t[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '{' || c == '}'))
            .map_or(0, |n| n + 1);
        let name = &t[name_start..at];
        let rest = &t[at + 2..];
        if !(rest.is_empty() || rest.starts_with(['"', '{']) || HTML_VOCABULARY.contains(&name)) {
            return Some(format!("the value of {name}= in \"{text}\""));
        }
    }
    for (at, _) in t.match_indices('>') {
        let rest = &t[at + 1..];
        if !(rest.is_empty() || rest.starts_with(['<', '{'])) {
            return Some(format!("a text in \"{text}\""));
        }
    }
    let values = values();
    let trimmed = t.trim();
    (!trimmed.is_empty() && values.contains(trimmed))
        .then(|| format!("\"{text}\", an entry's value"))
}

#[test]
fn the_first_view_writes_its_fixed_markup_from_the_entries() {
    let (literals, _) = lex(&read(FIRST));
    let problems: Vec<String> = (literals.iter())
        .filter_map(|l| first_view_literal(&l.text))
        .collect();
    assert!(literals.len() > 50, "{} literals", literals.len());
    assert!(
        problems.is_empty(),
        "{FIRST} writes as a literal what page::markup holds (use markup!(NAME)):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_components_write_their_fixed_markup_from_the_entries() {
    let values = values();
    let data = data_names();
    let prefixes = [
        markup::IN,
        markup::IN_HREF,
        markup::HELP_ID,
        markup::LIST_ID,
        markup::MSG_ID,
    ];
    let mut problems = Vec::new();
    let mut in_html = 0;
    for file in COMPONENTS {
        let src = read(file);
        let (literals, masked) = lex(&src);
        let bodies = html_bodies(&masked);
        assert!(!bodies.is_empty(), "{file}: no html!");
        for l in &literals {
            let t = unescape_quotes(&l.text);
            // in the markup: only HTML's own words and empty values
            if bodies.iter().any(|b| b.contains(&l.at.start)) {
                in_html += 1;
                let before = masked[..l.at.start].trim_end();
                let attr = before.strip_suffix('=').map(|b| {
                    let from = b.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
                    &b[from.map_or(0, |n| n + 1)..]
                });
                if !(t.is_empty() || attr.is_some_and(|a| HTML_VOCABULARY.contains(&a))) {
                    problems.push(format!("{file}: \"{}\" in html!", l.text));
                }
            }
            // anywhere: no entry's value, and no field id built from a literal prefix
            if values.contains(t.trim()) && !t.trim().is_empty() {
                problems.push(format!("{file}: \"{}\", an entry's value", l.text));
            }
            if let Some(p) = prefixes.iter().find(|p| t.starts_with(&format!("{p}{{"))) {
                problems.push(format!("{file}: \"{}\" (use markup::id({p:?}, …))", l.text));
            }
        }
        // the data-* names, which Yew writes as attribute names
        for b in &bodies {
            let body = &masked[b.clone()];
            for (at, _) in body.match_indices("data-") {
                let name: String = body[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !data.contains(&name) {
                    problems.push(format!("{file}: {name}, not a markup::DATA_* name"));
                }
            }
        }
    }
    assert!(in_html > 0);
    assert!(
        problems.is_empty(),
        "the components write as literals what page::markup holds (use markup::NAME):\n{}",
        problems.join("\n")
    );
}

/// Each entry is written by both renderers (the first view with `markup!(NAME)`, the
/// components with `markup::NAME` or, for a `data-*` name, as the attribute's name), or by the
/// view model for both.
#[test]
fn every_entry_is_used_by_both_renderers() {
    let words = |path: &str| -> BTreeSet<String> {
        let (_, masked) = lex(&read(path));
        masked
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .map(String::from)
            .collect()
    };
    let (first, model) = (words(FIRST), words(PAGE));
    let components: BTreeSet<String> = COMPONENTS.iter().flat_map(|f| words(f)).collect();
    let mut problems = Vec::new();
    for &(name, value) in markup::ALL {
        let by = |w: &BTreeSet<String>| w.contains(name) || model.contains(name);
        if !by(&first) {
            problems.push(format!("{name}: not written by {FIRST}"));
        }
        if !(by(&components) || name.starts_with("DATA_") && components.contains(value)) {
            problems.push(format!("{name}: not written by the components"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // the entries that are others' composites
    assert_eq!(
        markup::IN_FRAMEWORK,
        format!("{}{}", markup::IN, markup::FRAMEWORK)
    );
    assert_eq!(
        markup::IN_VERSION,
        format!("{}{}", markup::IN, markup::VERSION)
    );
    assert_eq!(markup::IN_HREF, format!("#{}", markup::IN));
    assert_eq!(markup::RESULTS_HREF, format!("#{}", markup::RESULTS));
    let names: BTreeSet<_> = markup::ALL.iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), markup::ALL.len(), "an entry twice");
}

/// One element's attributes as the first view writes them: `(tag, [(name, value)])`.
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for part in html.split('<').skip(1) {
        let Some(end) = part.find('>') else { continue };
        let inside = &part[..end];
        if inside.starts_with('/') {
            continue;
        }
        let tag = inside.split(' ').next().unwrap().to_string();
        let mut attrs = Vec::new();
        let mut rest = &inside[tag.len()..];
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq].trim().to_string();
            let close = rest[eq + 2..].find('"').unwrap() + eq + 2;
            attrs.push((name, rest[eq + 2..close].to_string()));
            rest = &rest[close + 1..];
        }
        out.push((tag, attrs));
    }
    out
}

/// Every class, id, label target, `aria-*` value, `role`, in-page link and `data-*` name the
/// first view writes is an entry (or an id prefix and a field's key); every entry is written
/// for one of these links.
#[test]
fn the_first_view_writes_the_entries_and_nothing_else() {
    let links = [
        "nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000",
        // errors, warnings, a note, an unknown parameter, a link without version=
        "world_size=6&tensor_parallel_size=4&micro_batch_size=2&batch_size=16&num_samples=abc&foo=1",
        "framework=megatron&world_size=8&tensor_model_parallel_size=3&micro_batch_size=2&global_batch_size=7",
        "framework=hf&world_size=8&per_device_train_batch_size=0&max_steps=x&gradient_checkpointing=maybe",
        "framework=deepspeed&world_size=8&train_batch_size=60&train_micro_batch_size_per_gpu=4",
        "sample_packing=Yes&micro_batch_size=1&gpu=H100-80GB&mfu=0.4",
        "nodes=2&micro_batch_size=2&num_samples=1000&embed=1&readonly=1&zz=1",
    ];
    let values = values();
    let data = data_names();
    let levels = [Level::Error, Level::Warning, Level::Note, Level::Hint].map(page::level_name);
    let classes: BTreeSet<String> = (values.iter().map(|v| v.to_string()))
        .chain([markup::VALUE, markup::SUM].map(|c| format!("{c} {}", markup::MISSING)))
        .chain(levels.map(|l| format!("{} {l}", markup::MSG)))
        .collect();
    let mut written = BTreeSet::new();
    let mut problems = BTreeSet::new();
    for q in links {
        let state = State::from_query(q);
        let keys: BTreeSet<&str> = state.link.framework.fields().map(|f| f.key()).collect();
        let html = render(&Page::opened(&state, "https://docs.example/dpcalc/", true));
        // an entry, or a prefix entry and a field's key (`msg-KEY-n` for a message)
        let field_id = |v: &str| {
            [
                markup::IN,
                markup::HELP_ID,
                markup::LIST_ID,
                markup::IN_HREF,
            ]
            .iter()
            .any(|p| v.strip_prefix(p).is_some_and(|k| keys.contains(k)))
                || v.strip_prefix(markup::MSG_ID)
                    .and_then(|r| r.rsplit_once('-'))
                    .is_some_and(|(k, n)| keys.contains(k) && n.parse::<usize>().is_ok())
        };
        for (tag, attrs) in tags(&html) {
            for (name, v) in attrs {
                let ok = match name.as_str() {
                    "class" => classes.contains(&v),
                    "id" | "for" | "list" => values.contains(v.as_str()) || field_id(&v),
                    "aria-describedby" => v.split(' ').all(field_id),
                    "aria-label" | "aria-live" | "role" => values.contains(v.as_str()),
                    "href" if v.starts_with('#') => values.contains(v.as_str()) || field_id(&v),
                    "name" if tag == "select" => values.contains(v.as_str()),
                    "name" => keys.contains(v.as_str()),
                    n if n.starts_with("data-") => data.contains(n),
                    _ => continue,
                };
                if !ok {
                    problems.insert(format!("{q}: <{tag} {name}=\"{v}\">, not an entry"));
                }
            }
        }
        for (name, value) in markup::ALL {
            let escaped = dpcalc::calc::card::escape(value);
            if html.contains(&*escaped) {
                written.insert(*name);
            }
        }
    }
    let unwritten: Vec<_> = (markup::ALL.iter())
        .map(|(n, _)| n)
        .filter(|n| !written.contains(*n))
        .collect();
    let problems: Vec<_> = problems.into_iter().collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        unwritten.is_empty(),
        "never written by the first view: {unwritten:?}"
    );
}
