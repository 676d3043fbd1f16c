//! The first view: the page's first screen written as escaped HTML from [`crate::page::Page`],
//! without Yew, so a cold visit paints its result from a small module while the full app loads
//! behind it (`static/boot.js` swaps the app in when it has rendered). It writes the same DOM
//! contract as the components (`data-output`/`data-value`, `data-error`/`data-warning`/…, the
//! `in-KEY` ids, the classes), for the full, embedded and read-only layouts. Native and tested
//! by `cargo test`; the wasm exports (feature `first`, one build per framework whose rules alone
//! are compiled in) are at the end.
//!
//! Every text and attribute value goes through `calc::card::escape` (the summary card's, for XML
//! and HTML alike): nothing from a link is read as HTML.

use std::fmt::Write;

use crate::calc::card::escape as esc;
use crate::page::{FieldRow, Group, Page, Picker, Summary, ValueRow};

/// The first screen of `page`: the `<main>` element the app's would be.
pub fn render(page: &Page) -> String {
    let mut h = String::with_capacity(16 * 1024);
    let notices = notices(page);
    if page.embed {
        h.push_str("<main class=\"page embed\"><h1 class=\"sr-only\">dpcalc: batch size and optimizer steps</h1>");
        h.push_str(&notices);
        h.push_str("<div class=\"layout\"><div class=\"main\">");
        picker(&mut h, &page.picker);
        form(&mut h, page);
        h.push_str("</div><div class=\"side\">");
        results(&mut h, page);
        let full = esc(&page.full_url);
        let _ = write!(
            h,
            "<p class=\"full-link\"><a href=\"{full}\" target=\"_blank\" rel=\"noopener\" data-output=\"full_url\" data-value=\"{full}\">Open full calculator \u{2197}</a></p><span hidden=\"\" data-output=\"share_url\" data-value=\"{}\"></span></div></div></main>",
            esc(&page.share_url)
        );
        return h;
    }
    let _ = write!(
        h,
        "<main class=\"page\"><header class=\"top\"><h1>dpcalc</h1><p class=\"lede\">What batch size and how many optimizer steps your distributed <strong>{}</strong> run gets: computed in your browser, exactly as the framework does it.</p>",
        esc(&page.lede)
    );
    h.push_str("<nav class=\"examples\" aria-label=\"Examples\"><span class=\"examples-label\">Try:</span>");
    for (label, href) in &page.examples {
        let _ = write!(
            h,
            "<a data-example=\"\" href=\"{}\">{}</a>",
            esc(href),
            esc(label)
        );
    }
    h.push_str("</nav></header>");
    summary(&mut h, &page.summary);
    h.push_str(&notices);
    h.push_str("<div class=\"layout\"><div class=\"main\">");
    picker(&mut h, &page.picker);
    form(&mut h, page);
    h.push_str("</div><div class=\"side\">");
    results(&mut h, page);
    h.push_str("</div></div></main>");
    h
}

fn notices(page: &Page) -> String {
    if page.notices.is_empty() {
        return String::new();
    }
    let mut h = String::from("<section class=\"notices\" aria-label=\"Link notices\">");
    for n in &page.notices {
        let _ = write!(
            h,
            "<p class=\"msg notice\" data-notice=\"{}\">{}</p>",
            esc(&n.key),
            esc(&n.text)
        );
    }
    h.push_str("</section>");
    h
}

fn summary(h: &mut String, s: &Summary) {
    h.push_str(
        "<section class=\"summary-bar\" data-summary-bar=\"\" aria-label=\"Key results\"><dl>",
    );
    for r in &s.rows {
        let _ = write!(
            h,
            "<div class=\"sum{}\"><dt>{}</dt><dd data-summary=\"{}\"{}>{}</dd></div>",
            if r.raw.is_some() { "" } else { " missing" },
            esc(r.label),
            r.output,
            attr("data-value", r.raw.as_deref()),
            esc(&r.shown)
        );
    }
    h.push_str("</dl>");
    if let Some((key, lead, message)) = &s.error {
        let _ = write!(
            h,
            "<p class=\"sum-error\" data-summary=\"error\"><a href=\"#in-{key}\">{}</a><span>{}</span></p>",
            esc(lead),
            esc(message)
        );
    }
    h.push_str("<a class=\"sum-more\" href=\"#results\">All results</a></section>");
}

/// ` NAME="VALUE"` when there is a value.
fn attr(name: &str, value: Option<&str>) -> String {
    value.map_or(String::new(), |v| format!(" {name}=\"{}\"", esc(v)))
}

fn picker(h: &mut String, p: &Picker) {
    let disabled = |d: bool| if d { " disabled=\"\"" } else { "" };
    let _ = write!(
        h,
        "<div class=\"picker\"><label for=\"in-framework\"><span class=\"label\">Framework</span><code class=\"key\">framework</code></label><select id=\"in-framework\" name=\"framework\"{}>",
        disabled(p.readonly)
    );
    options(h, &p.frameworks);
    let _ = write!(
        h,
        "</select><label for=\"in-version\"><span class=\"label\">Version</span><code class=\"key\">version</code></label><select id=\"in-version\" name=\"version\"{}>",
        disabled(p.releases_disabled)
    );
    options(h, &p.releases);
    h.push_str("</select>");
    if let Some(note) = &p.note {
        let _ = write!(
            h,
            "<p class=\"msg note\" data-notice=\"unversioned\">{}</p>",
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
    h.push_str("<form class=\"inputs\" aria-label=\"Run configuration\">");
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
                "<details class=\"group architecture\"{}><summary>{}</summary>",
                if open { " open=\"\"" } else { "" },
                esc(g.title)
            );
        }
        None => {
            let _ = write!(
                h,
                "<fieldset class=\"group\"><legend>{}</legend>",
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
        "<div class=\"{}\"><label for=\"in-{key}\"><span class=\"label\">{}</span><code class=\"key\">{key}</code></label>",
        r.class(),
        esc(r.label)
    );
    let described = esc(&r.described_by());
    if r.flag {
        let _ = write!(
            h,
            "<input type=\"checkbox\" id=\"in-{key}\" name=\"{key}\"{}{} aria-invalid=\"{}\" aria-describedby=\"{described}\">",
            if r.checked { " checked=\"\"" } else { "" },
            if readonly { " disabled=\"\"" } else { "" },
            r.invalid
        );
    } else {
        let list = r.list.as_ref().map(|_| format!("list-{key}"));
        let _ = write!(
            h,
            "<input type=\"text\" id=\"in-{key}\" name=\"{key}\" value=\"{}\" placeholder=\"{}\" inputmode=\"{}\"{} autocomplete=\"off\" spellcheck=\"false\"{} aria-invalid=\"{}\" aria-describedby=\"{described}\">",
            esc(&r.value),
            esc(r.placeholder),
            r.mode,
            if readonly { " readonly=\"\"" } else { "" },
            attr("list", list.as_deref()),
            r.invalid
        );
        if let (Some(list), Some((_, values))) = (list, &r.list) {
            let _ = write!(h, "<datalist id=\"{list}\">");
            for v in values {
                let _ = write!(h, "<option value=\"{}\"></option>", esc(v));
            }
            h.push_str("</datalist>");
        }
    }
    let _ = write!(h, "<p id=\"help-{key}\" class=\"help\">{}</p>", esc(r.help));
    for m in &r.messages {
        let level = m.level;
        let role = if level == "error" {
            " role=\"alert\""
        } else {
            ""
        };
        let _ = write!(
            h,
            "<p id=\"{}\" class=\"msg {level}\" data-{level}=\"{key}\"{role}>",
            esc(&m.id)
        );
        if m.show_key {
            let _ = write!(h, "<code class=\"key\">{key}</code>: ");
        }
        let _ = write!(h, "{}</p>", esc(&m.text));
    }
    h.push_str("</div>");
}

fn results(h: &mut String, page: &Page) {
    let _ = write!(
        h,
        "<section class=\"results\" id=\"results\" aria-label=\"Results\" aria-live=\"polite\"><h2>{}</h2><dl>",
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
        "<div class=\"value{}\"><dt>{}<code class=\"key\">{}</code></dt><dd data-output=\"{}\"{}{}>{}</dd></div>",
        if r.raw.is_some() { "" } else { " missing" },
        esc(r.label),
        esc(r.config_name),
        r.output,
        attr("data-value", r.raw.as_deref()),
        attr("data-needs", r.needs.as_deref()),
        esc(&r.shown)
    );
}

/// The wasm exports `static/boot.js` calls (one module per framework, `first-<id>.js`).
#[cfg(all(target_arch = "wasm32", feature = "first"))]
mod exports {
    use wasm_bindgen::prelude::*;

    use crate::calc::Field;
    use crate::page::Page;
    use crate::state::{Action, State};

    // A free-list allocator: a first view lives a few seconds and makes a few renders, so
    // dlmalloc's speed is not worth its size. The wasm module has one thread.
    #[global_allocator]
    static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
        // SAFETY: wasm32-unknown-unknown without atomics runs this module on one thread.
        unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

    /// The first screen of the page at `base` (its URL without the query) for `search`, with
    /// the architecture group `opened` by the user; empty when a link that arrives naming a
    /// model (its counts, memory and FLOPs are the full app's) was not `edited` here. A model
    /// typed into the first view keeps it: everything but the model stage is computed until the
    /// app takes over.
    #[wasm_bindgen]
    pub fn render(search: &str, base: &str, opened: bool, edited: bool) -> String {
        let state = State::from_query(search);
        let fw = state.link.framework;
        if !fw.compiled()
            || (!edited && crate::calc::fit::names_model(fw.spec(), &state.link.inputs))
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
            "framework" => crate::calc::Framework::from_id(value).map(Action::Framework),
            "version" => fw.release(value).map(|r| Action::Release(r.id)),
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
