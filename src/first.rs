//! The first view: the page's first screen written as escaped HTML from [`crate::page::Page`],
//! without Yew, so a cold visit paints its result from a small module while the full app loads
//! behind it (`static/boot.js` swaps the app in when it has rendered). It writes the same DOM
//! contract as the components (`data-output`/`data-value`, `data-error`/`data-warning`/…, the
//! `in-KEY` ids, the classes), for the full, embedded and read-only layouts, its fixed markup
//! from `page::markup`'s entries (`markup!`, literals at no size). Native and tested
//! by `cargo test`; the wasm exports (feature `first`, one build per framework whose rules alone
//! are compiled in) are at the end.
//!
//! Every text and attribute value goes through `calc::card::escape` (the summary card's, for XML
//! and HTML alike): nothing from a link is read as HTML.

use std::fmt::Write;

use crate::calc::card::escape as esc;
use crate::page::{markup, FieldRow, Group, Page, Picker, Summary, ValueRow};

/// The first screen of `page`: the `<main>` element the app's would be.
pub fn render(page: &Page) -> String {
    let mut h = String::with_capacity(16 * 1024);
    let notices = notices(page);
    if page.embed {
        h.push_str(markup!("<main class=\"" PAGE_EMBED "\"><h1 class=\"" SR_ONLY "\">" EMBED_HEADING "</h1>"));
        h.push_str(&notices);
        h.push_str(markup!("<div class=\"" LAYOUT "\"><div class=\"" MAIN "\">"));
        picker(&mut h, &page.picker);
        form(&mut h, page);
        h.push_str(markup!("</div><div class=\"" SIDE "\">"));
        results(&mut h, page);
        let full = esc(&page.full_url);
        let _ = write!(
            h,
            markup!("<p class=\"" FULL_LINK "\"><a href=\"{full}\" target=\"_blank\" rel=\"noopener\" " DATA_OUTPUT "=\"" FULL_URL "\" " DATA_VALUE "=\"{full}\">" FULL_LINK_TEXT "</a></p><span hidden=\"\" " DATA_OUTPUT "=\"" SHARE_URL "\" " DATA_VALUE "=\"{}\"></span></div></div></main>"),
            esc(&page.share_url),
            full = full
        );
        return h;
    }
    let _ = write!(
        h,
        markup!("<main class=\"" PAGE "\"><header class=\"" TOP "\"><h1>" HEADING "</h1><p class=\"" LEDE "\">" LEDE_BEFORE "<strong>{}</strong>" LEDE_AFTER "</p>"),
        esc(&page.lede)
    );
    h.push_str(markup!("<nav class=\"" EXAMPLES "\" aria-label=\"" EXAMPLES_ARIA "\"><span class=\"" EXAMPLES_LEAD_CLASS "\">" EXAMPLES_LEAD "</span>"));
    for (label, href) in &page.examples {
        let _ = write!(
            h,
            markup!("<a " DATA_EXAMPLE "=\"\" href=\"{}\">{}</a>"),
            esc(href),
            esc(label)
        );
    }
    h.push_str("</nav></header>");
    summary(&mut h, &page.summary);
    h.push_str(&notices);
    h.push_str(markup!("<div class=\"" LAYOUT "\"><div class=\"" MAIN "\">"));
    picker(&mut h, &page.picker);
    form(&mut h, page);
    h.push_str(markup!("</div><div class=\"" SIDE "\">"));
    results(&mut h, page);
    h.push_str("</div></div></main>");
    h
}

fn notices(page: &Page) -> String {
    if page.notices.is_empty() {
        return String::new();
    }
    let mut h =
        String::from(markup!("<section class=\"" NOTICES "\" aria-label=\"" NOTICES_ARIA "\">"));
    for n in &page.notices {
        let _ = write!(
            h,
            markup!("<p class=\"" NOTICE "\" " DATA_NOTICE "=\"{}\">{}</p>"),
            esc(&n.key),
            esc(&n.text)
        );
    }
    h.push_str("</section>");
    h
}

fn summary(h: &mut String, s: &Summary) {
    h.push_str(
        markup!("<section class=\"" SUMMARY_BAR "\" " DATA_SUMMARY_BAR "=\"\" aria-label=\"" SUMMARY_ARIA "\"><dl>"),
    );
    for r in &s.rows {
        let _ = write!(
            h,
            markup!("<div class=\"" SUM "{}\"><dt>{}</dt><dd " DATA_SUMMARY "=\"{}\"{}>{}</dd></div>"),
            if r.raw.is_some() {
                ""
            } else {
                markup!(" " MISSING)
            },
            esc(r.label),
            r.output,
            attr(markup::DATA_VALUE, r.raw.as_deref()),
            esc(&r.shown)
        );
    }
    h.push_str("</dl>");
    if let Some((key, lead, message)) = &s.error {
        let _ = write!(
            h,
            markup!("<p class=\"" SUM_ERROR "\" " DATA_SUMMARY "=\"" SUMMARY_ERROR "\"><a href=\"" IN_HREF "{key}\">{}</a><span>{}</span></p>"),
            esc(lead),
            esc(message),
            key = key
        );
    }
    h.push_str(markup!("<a class=\"" SUM_MORE "\" href=\"" RESULTS_HREF "\">" ALL_RESULTS "</a></section>"));
}

/// ` NAME="VALUE"` when there is a value.
fn attr(name: &str, value: Option<&str>) -> String {
    value.map_or(String::new(), |v| format!(" {name}=\"{}\"", esc(v)))
}

fn picker(h: &mut String, p: &Picker) {
    let disabled = |d: bool| if d { " disabled=\"\"" } else { "" };
    let _ = write!(
        h,
        markup!("<div class=\"" PICKER "\"><label for=\"" IN_FRAMEWORK "\"><span class=\"" LABEL "\">" FRAMEWORK_LABEL "</span><code class=\"" KEY "\">" FRAMEWORK "</code></label><select id=\"" IN_FRAMEWORK "\" name=\"" FRAMEWORK "\"{}>"),
        disabled(p.readonly)
    );
    options(h, &p.frameworks);
    let _ = write!(
        h,
        markup!("</select><label for=\"" IN_VERSION "\"><span class=\"" LABEL "\">" VERSION_LABEL "</span><code class=\"" KEY "\">" VERSION "</code></label><select id=\"" IN_VERSION "\" name=\"" VERSION "\"{}>"),
        disabled(p.releases_disabled)
    );
    options(h, &p.releases);
    h.push_str("</select>");
    if let Some(note) = &p.note {
        let _ = write!(
            h,
            markup!("<p class=\"" NOTE "\" " DATA_NOTICE "=\"" UNVERSIONED "\">{}</p>"),
            esc(note)
        );
    }
    h.push_str("</div>");
}

/// A select's options: `(value, text, selected)`.
fn options(h: &mut String, items: &[(&str, &str, bool)]) {
    for (value, text, selected) in items {
        let _ = write!(
            h,
            "<option value=\"{}\"{}>{}</option>",
            esc(value),
            if *selected { " selected=\"\"" } else { "" },
            esc(text)
        );
    }
}

fn form(h: &mut String, page: &Page) {
    h.push_str(markup!("<form class=\"" INPUTS "\" aria-label=\"" INPUTS_ARIA "\">"));
    for (group, rows) in &page.groups {
        group_html(h, group, rows, page.readonly);
    }
    h.push_str("</form>");
}

fn group_html(h: &mut String, g: &Group, rows: &[FieldRow], readonly: bool) {
    match g.fold {
        Some(open) => {
            let _ = write!(
                h,
                markup!("<details class=\"" GROUP_FOLD "\"{}><summary>{}</summary>"),
                if open { " open=\"\"" } else { "" },
                esc(g.title)
            );
        }
        None => {
            let _ = write!(
                h,
                markup!("<fieldset class=\"" GROUP "\"><legend>{}</legend>"),
                esc(g.title)
            );
        }
    }
    for row in rows {
        field(h, row, readonly);
    }
    h.push_str(if g.fold.is_some() {
        "</details>"
    } else {
        "</fieldset>"
    });
}

fn field(h: &mut String, r: &FieldRow, readonly: bool) {
    let key = r.key;
    let _ = write!(
        h,
        markup!("<div class=\"{}\"><label for=\"" IN "{key}\"><span class=\"" LABEL "\">{}</span><code class=\"" KEY "\">{key}</code></label>"),
        r.class(),
        esc(r.label),
        key = key
    );
    let described = esc(&r.described_by());
    if r.flag {
        let _ = write!(
            h,
            markup!("<input type=\"checkbox\" id=\"" IN "{key}\" name=\"{key}\"{}{} aria-invalid=\"{}\" aria-describedby=\"{described}\">"),
            if r.checked { " checked=\"\"" } else { "" },
            if readonly { " disabled=\"\"" } else { "" },
            r.invalid,
            key = key,
            described = described
        );
    } else {
        let list = r.list.as_ref().map(|_| format!(markup!(LIST_ID "{}"), key));
        let _ = write!(
            h,
            markup!("<input type=\"text\" id=\"" IN "{key}\" name=\"{key}\" value=\"{}\" placeholder=\"{}\" inputmode=\"{}\"{} autocomplete=\"off\" spellcheck=\"false\"{} aria-invalid=\"{}\" aria-describedby=\"{described}\">"),
            esc(&r.value),
            esc(r.placeholder),
            r.mode,
            if readonly { " readonly=\"\"" } else { "" },
            attr("list", list.as_deref()),
            r.invalid,
            key = key,
            described = described
        );
        if let (Some(list), Some(values)) = (list, &r.list) {
            let _ = write!(h, "<datalist id=\"{list}\">");
            for v in values {
                let _ = write!(h, "<option value=\"{}\"></option>", esc(v));
            }
            h.push_str("</datalist>");
        }
    }
    let _ = write!(
        h,
        markup!("<p id=\"" HELP_ID "{key}\" class=\"" HELP "\">{}</p>"),
        esc(r.help),
        key = key
    );
    for m in &r.messages {
        let level = m.level;
        let role = if level == markup::LEVEL_ERROR {
            markup!(" role=\"" ALERT "\"")
        } else {
            ""
        };
        let _ = write!(
            h,
            markup!("<p id=\"{}\" class=\"" MSG " {level}\" data-{level}=\"{key}\"{role}>"),
            esc(&m.id),
            level = level,
            key = key,
            role = role
        );
        if m.show_key {
            let _ = write!(
                h,
                markup!("<code class=\"" KEY "\">{key}</code>" KEY_SEP),
                key = key
            );
        }
        let _ = write!(h, "{}</p>", esc(&m.text));
    }
    h.push_str("</div>");
}

fn results(h: &mut String, page: &Page) {
    let _ = write!(
        h,
        markup!("<section class=\"" RESULTS "\" id=\"" RESULTS "\" aria-label=\"" RESULTS_ARIA "\" aria-live=\"" POLITE "\"><h2>{}</h2><dl>"),
        esc(&page.results_title)
    );
    for r in &page.results {
        value(h, r);
    }
    h.push_str("</dl></section>");
}

fn value(h: &mut String, r: &ValueRow) {
    let _ = write!(
        h,
        markup!("<div class=\"" VALUE "{}\"><dt>{}<code class=\"" KEY "\">{}</code></dt><dd " DATA_OUTPUT "=\"{}\"{}{}>{}</dd></div>"),
        if r.raw.is_some() {
            ""
        } else {
            markup!(" " MISSING)
        },
        esc(r.label),
        esc(r.config_name),
        r.output,
        attr(markup::DATA_VALUE, r.raw.as_deref()),
        attr(markup::DATA_NEEDS, r.needs.as_deref()),
        esc(&r.shown)
    );
}

/// The wasm exports `static/boot.js` calls (one module per framework, `first-<id>.js`).
#[cfg(all(target_arch = "wasm32", feature = "first"))]
mod exports {
    use wasm_bindgen::prelude::*;

    use crate::calc::Field;
    use crate::page::{markup, Page};
    use crate::state::{Action, State};

    // A free-list allocator: a first view lives a few seconds and makes a few renders, so
    // dlmalloc's speed is not worth its size. The wasm module has one thread.
    #[global_allocator]
    static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
        // SAFETY: wasm32-unknown-unknown without atomics runs this module on one thread.
        unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

    /// The first screen of the page at `base` (its URL without the query) for `search`, with
    /// the architecture group `opened` by the user; empty when a link that arrives naming a
    /// model (its counts, memory and FLOPs are the full app's) was not `edited` here, or gives
    /// one of the app's own inputs (`field::APP_ONLY`: calibration, cost, the scaling view). A
    /// model typed into the first view keeps it: everything but the model stage is computed
    /// until the app takes over.
    #[wasm_bindgen]
    pub fn render(search: &str, base: &str, opened: bool, edited: bool) -> String {
        let state = State::from_query(search);
        let fw = state.link.framework;
        let inputs = &state.link.inputs;
        if !fw.compiled()
            || (!edited && crate::calc::parse::model::names_model(fw.spec(), inputs))
            || crate::calc::field::APP_ONLY
                .iter()
                .any(|&f| inputs.is_given(f) || inputs.conflict(f).is_some())
        {
            return String::new();
        }
        super::render(&Page::opened(&state, base, opened))
    }

    /// The framework the link is computed by (`framework=`, as the app decodes it).
    #[wasm_bindgen]
    pub fn framework(search: &str) -> String {
        crate::query::decode(search).framework.id().to_string()
    }

    /// The link's theme (`light`, `dark` or `auto`), for `<html data-theme>` as the app sets it.
    #[wasm_bindgen]
    pub fn theme(search: &str) -> String {
        crate::query::decode(search).view.theme.name().to_string()
    }

    /// Whether this module holds the rules of `framework` (an id).
    #[wasm_bindgen]
    pub fn computes(framework: &str) -> bool {
        crate::calc::Framework::from_id(framework).is_some_and(|f| f.compiled())
    }

    /// The canonical query after the form's control `name` took `value` (a field key, or
    /// `framework` / `version`); the query unchanged when nothing changes.
    #[wasm_bindgen]
    pub fn edit(search: &str, name: &str, value: &str) -> String {
        let state = State::from_query(search);
        let fw = state.link.framework;
        let action = match name {
            markup::FRAMEWORK => crate::calc::Framework::from_id(value).map(Action::Framework),
            markup::VERSION => fw.release(value).map(|r| Action::Release(r.id)),
            key => fw
                .field(key)
                .map(|f: Field| Action::Set(f, value.to_string())),
        };
        match action.and_then(|a| state.reduce(a)) {
            Some(next) => next.query,
            None => state.query,
        }
    }
}
