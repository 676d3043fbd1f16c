//! The summary card: a picture of one configuration for documentation that cannot hold an
//! iframe (GitHub and GitLab READMEs and wikis strip them). An SVG file made here, in the page,
//! with no server: the framework and release, the key inputs as given, the key results (world
//! size, data-parallel size, global batch, optimizer steps, and the memory per GPU when a model
//! is given), the first error if any, and the link in text. A team commits the file and links it
//! to the calculator with [`markdown`].
//!
//! The SVG is self-contained so it survives a strict CSP and GitHub's sanitiser: no script, no
//! `foreignObject`, no external reference or font (system font stacks only), a fixed size, and
//! every text XML-escaped (a link's values are anyone's text). It reads in light and dark themes:
//! each element carries its light colour as a presentation attribute and a class, and the file's
//! own `<style>` switches the classes under `@media (prefers-color-scheme: dark)`. The page's
//! preview ([`preview`]) leaves the `<style>` out (the page's CSP allows no inline style) and
//! styles the same classes from its stylesheet.

use super::view;
use super::{Field, Framework, Level, Output, RawInputs, Report};

/// The file name the page offers and the Markdown snippet refers to.
pub const FILE_NAME: &str = "dpcalc-card.svg";

/// The prefix of the download link's `data:` URL.
pub const DATA_URL_PREFIX: &str = "data:image/svg+xml;charset=utf-8,";

/// The card's size in pixels (fixed: the picture looks the same wherever it is shown).
pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 380;

const SANS: &str =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const MONO: &str = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace";

/// The colour roles: (class, light, dark). A role fills text and shapes; `ln` strokes lines.
pub const COLOURS: &[(&str, &str, &str)] = &[
    ("c-bg", "#ffffff", "#0d1117"),
    ("c-fg", "#1f2328", "#e6edf3"),
    ("c-mu", "#59636e", "#9198a1"),
    ("c-ac", "#0969da", "#4493f8"),
    ("c-er", "#cf222e", "#ff7b72"),
    ("c-ok", "#1a7f37", "#3fb950"),
    ("c-ln", "#d1d9e0", "#3d444d"),
];

fn light(class: &str) -> &'static str {
    COLOURS
        .iter()
        .find(|(c, ..)| *c == class)
        .map_or("#000000", |&(_, l, _)| l)
}

/// The results the card shows, in order.
pub const RESULTS: &[Output] = &[
    Output::WorldSize,
    Output::DpWorldSize,
    Output::GlobalBatchSize,
    Output::MaxSteps,
];

/// What the card says, before it is drawn (each text already cut to fit its place).
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    /// `axolotl 0.21.0`.
    pub title: String,
    /// The key inputs: (config key, value, given). An input not given shows what the framework
    /// assumes (`1 (default)`) or what its absence means (`required for steps`).
    pub inputs: Vec<(String, String, bool)>,
    /// The key results: (label, value); `None` when the report has no value.
    pub results: Vec<(String, Option<String>)>,
    /// The memory per GPU (`12.3 GiB of 80 GiB · fits`) and whether it fits, when a model is
    /// given.
    pub memory: Option<(String, Option<bool>)>,
    /// The first error: `at <key>: <message>`, on at most two lines.
    pub error: Vec<String>,
    /// The link, on at most two lines.
    pub link: Vec<String>,
    /// One line for the picture's title and the Markdown alt text.
    pub headline: String,
}

/// A character's width in columns of a monospace font: 2 for East Asian wide characters and
/// emoji, 1 otherwise.
fn columns(c: char) -> usize {
    let u = c as u32;
    let wide = matches!(u,
        0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x1F300..=0x1FAFF | 0x20000..=0x3FFFD);
    if wide {
        2
    } else {
        1
    }
}

/// Text as one clean line: characters XML 1.0 cannot hold become U+FFFD, any run of white space
/// one space, and the ends are trimmed.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        let allowed = !matches!(c as u32, 0..=0x1F | 0x7F..=0x9F | 0xFFFE | 0xFFFF);
        out.push(if allowed { c } else { '\u{FFFD}' });
    }
    out
}

/// `text` cut to at most `max` columns, ending in `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    let total: usize = text.chars().map(columns).sum();
    if total <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = columns(c);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// `text` on at most `lines` lines of at most `max` columns, broken at spaces where possible
/// (anywhere in a word longer than a line, as in a URL); the last line ends in `…` when cut.
pub fn wrap(text: &str, max: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest: &str = text.trim();
    while !rest.is_empty() && out.len() < lines {
        if out.len() + 1 == lines {
            out.push(truncate(rest, max));
            break;
        }
        // the longest prefix that fits
        let mut end = 0;
        let mut used = 0;
        for (i, c) in rest.char_indices() {
            used += columns(c);
            if used > max {
                break;
            }
            end = i + c.len_utf8();
        }
        if end == 0 {
            // a single character wider than the line
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        if end < rest.len() {
            // break at the last space inside the prefix, when the prefix has one
            if let Some(space) = rest[..end].rfind(' ').filter(|&s| s > 0) {
                end = space;
            }
        }
        out.push(rest[..end].trim_end().to_string());
        rest = rest[end..].trim_start();
    }
    out
}

/// Escapes text for XML character data and attribute values in double quotes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

// Columns each text may take (monospace at 0.6 em; sans measured as generously).
const KEY_COLUMNS: usize = 24;
const INPUT_COLUMNS: usize = 38;
const TITLE_COLUMNS: usize = 34;
const LABEL_COLUMNS: usize = 42;
const VALUE_COLUMNS: usize = 30;
const ERROR_COLUMNS: usize = 84;
const LINK_COLUMNS: usize = 90;
const MEMORY_COLUMNS: usize = 36;
const MAX_INPUTS: usize = 11;

/// What the card for a state says: `framework` at `release` (an id of its releases), the inputs
/// as given, the report computed from them, and the link that reproduces them.
pub fn card(
    framework: Framework,
    release: &str,
    inputs: &RawInputs,
    report: &Report,
    url: &str,
) -> Card {
    let title = truncate(
        &clean(&format!("{} {}", framework.name(), release)),
        TITLE_COLUMNS,
    );
    let inputs_shown = card_inputs(framework, inputs);
    let results: Vec<(String, Option<String>)> = RESULTS
        .iter()
        .map(|&o| {
            (
                truncate(&clean(framework.label(o).0), LABEL_COLUMNS),
                report
                    .value(o)
                    .map(|v| truncate(&v.pretty(), VALUE_COLUMNS)),
            )
        })
        .collect();
    let memory = view::memory_bar(report).map(|bar| {
        let text = match &bar.capacity {
            Some((_, cap)) => format!("{} of {cap}", bar.total_text),
            None => bar.total_text.clone(),
        };
        let mark = match bar.fits {
            Some(true) => " · fits",
            Some(false) => " · does not fit",
            None => "",
        };
        (truncate(&format!("{text}{mark}"), MEMORY_COLUMNS), bar.fits)
    });
    let error = report
        .diags
        .iter()
        .find(|d| d.level == Level::Error)
        .map(|d| {
            wrap(
                &clean(&format!("Error at {}: {}", d.field.key(), d.message)),
                ERROR_COLUMNS,
                2,
            )
        })
        .unwrap_or_default();
    let link = wrap(&clean(url).replace(' ', "%20"), LINK_COLUMNS, 2);
    Card {
        headline: headline(framework, release, report),
        title,
        inputs: inputs_shown,
        results,
        memory,
        error,
        link,
    }
}

/// The key inputs as the card shows them: (config key, value, given), with the model and the GPU
/// when given; an input not given shows what the framework assumes.
fn card_inputs(framework: Framework, inputs: &RawInputs) -> Vec<(String, String, bool)> {
    let mut fields: Vec<Field> = framework.key_fields().to_vec();
    // the model and the GPU, when given, belong to the configuration too
    for f in [framework.spec().fit.model_key, Field::Gpu] {
        if !fields.contains(&f) && inputs.is_given(f) {
            fields.push(f);
        }
    }
    let shown = fields.len().min(MAX_INPUTS);
    fields[..shown]
        .iter()
        .map(|&f| {
            let key = truncate(f.key(), KEY_COLUMNS);
            let room = INPUT_COLUMNS.saturating_sub(key.chars().count() + 1).max(4);
            let given = clean(inputs.get(f));
            if inputs.conflict(f).is_some() {
                (key, truncate("given twice", room), true)
            } else if given.is_empty() {
                // what the empty field means: a value (`1 (default)`) or a phrase (`unset`)
                let assumed = clean(framework.describe(f).1);
                let value = !assumed.is_empty()
                    && (assumed.parse::<f64>().is_ok()
                        || matches!(assumed.as_str(), "true" | "false"));
                let text = if value {
                    format!("{assumed} (default)")
                } else {
                    assumed
                };
                (key, truncate(&text, room), false)
            } else {
                (key, truncate(&given, room), true)
            }
        })
        .collect()
}

/// The results a one-line summary names: `dp 16`, `global batch 256`, `1,954 steps`, and
/// `with errors` (the Embed dialog's summary and the card's headline).
pub fn results_tail(report: &Report) -> Vec<String> {
    let value = |o: Output| report.value(o).map(|v| v.pretty());
    let mut tail: Vec<String> = Vec::new();
    if let Some(dp) = value(Output::DpWorldSize) {
        tail.push(format!("dp {dp}"));
    }
    if let Some(b) = value(Output::GlobalBatchSize) {
        tail.push(format!("global batch {b}"));
    }
    if let Some(s) = value(Output::MaxSteps) {
        tail.push(format!("{s} steps"));
    }
    if report.has_errors() {
        tail.push("with errors".into());
    }
    tail
}

/// One line: `dpcalc: axolotl 0.21.0 → dp 16, global batch 256, 1,954 steps`.
pub fn headline(framework: Framework, release: &str, report: &Report) -> String {
    let mut tail: Vec<String> = Vec::new();
    if let Some(w) = report.value(Output::WorldSize) {
        tail.push(format!("{} GPUs", w.pretty()));
    }
    tail.extend(results_tail(report));
    let head = clean(&format!("dpcalc: {} {}", framework.name(), release));
    if tail.is_empty() {
        head
    } else {
        format!("{head} → {}", tail.join(", "))
    }
}

/// A `<text>` element of colour role `class` at (x, y).
fn text(out: &mut String, x: u32, y: u32, class: &str, attrs: &str, content: &str) {
    out.push_str(&format!(
        "<text x=\"{x}\" y=\"{y}\" class=\"{class}\" fill=\"{}\"{attrs}>{}</text>",
        light(class),
        escape(content)
    ));
}

/// The card as SVG markup; `with_style` adds the file's own `<style>` (the dark theme).
fn draw(card: &Card, with_style: bool) -> String {
    let mut s = String::with_capacity(6000);
    draw_frame(&mut s, card, with_style);
    draw_heading(&mut s, card);
    draw_inputs(&mut s, card);
    draw_results(&mut s, card);
    draw_footer(&mut s, card);
    s
}

/// A rule across the card at `y`.
fn line(s: &mut String, y: u32) {
    let w = WIDTH;
    s.push_str(&format!(
        "<line x1=\"20\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" class=\"c-ln\" stroke=\"{}\"/>",
        w - 20,
        light("c-ln")
    ))
}

/// The SVG element, its title, the style (`with_style`) and the card's background and border.
fn draw_frame(s: &mut String, card: &Card, with_style: bool) {
    let (w, h) = (WIDTH, HEIGHT);
    s.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" class=\"dpcalc-card\">"
    ));
    s.push_str(&format!("<title>{}</title>", escape(&card.headline)));
    if with_style {
        s.push_str("<style>");
        for (class, light, _) in COLOURS {
            let prop = if *class == "c-ln" { "stroke" } else { "fill" };
            s.push_str(&format!(".{class}{{{prop}:{light}}}"));
        }
        s.push_str("@media (prefers-color-scheme: dark){");
        for (class, _, dark) in COLOURS {
            let prop = if *class == "c-ln" { "stroke" } else { "fill" };
            s.push_str(&format!(".{class}{{{prop}:{dark}}}"));
        }
        s.push_str("}</style>");
    }
    s.push_str(&format!(
        "<rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"{}\" rx=\"8\" class=\"c-bg\" fill=\"{}\"/>",
        w - 1,
        h - 1,
        light("c-bg")
    ));
    s.push_str(&format!(
        "<rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"{}\" rx=\"8\" fill=\"none\" class=\"c-ln\" stroke=\"{}\"/>",
        w - 1,
        h - 1,
        light("c-ln")
    ));
}

/// The heading: dpcalc, the framework and release, what the card is about.
fn draw_heading(s: &mut String, card: &Card) {
    let w = WIDTH;
    // the heading
    s.push_str(&format!("<g font-family=\"{SANS}\">"));
    text(
        s,
        20,
        32,
        "c-ac",
        " font-size=\"19\" font-weight=\"700\"",
        "dpcalc",
    );
    text(
        s,
        92,
        32,
        "c-fg",
        " font-size=\"16\" font-weight=\"600\"",
        &card.title,
    );
    text(
        s,
        w - 20,
        32,
        "c-mu",
        " font-size=\"12\" text-anchor=\"end\"",
        "batch size and steps",
    );
    s.push_str("</g>");
    line(s, 46);
}

/// The key inputs, in the left column.
fn draw_inputs(s: &mut String, card: &Card) {
    // the inputs
    s.push_str(&format!(
        "<g font-family=\"{SANS}\" font-size=\"11\" font-weight=\"700\" letter-spacing=\"0.5\">"
    ));
    text(s, 20, 68, "c-mu", "", "INPUTS");
    text(s, 340, 68, "c-mu", "", "RESULTS");
    s.push_str("</g>");
    s.push_str(&format!("<g font-family=\"{MONO}\" font-size=\"12\">"));
    for (i, (key, value, given)) in card.inputs.iter().enumerate() {
        let y = 90 + 17 * i as u32;
        text(s, 20, y, "c-mu", "", key);
        let class = if *given { "c-fg" } else { "c-mu" };
        text(s, 310, y, class, " text-anchor=\"end\"", value);
    }
    s.push_str("</g>");
    s.push_str(&format!(
        "<line x1=\"325\" y1=\"60\" x2=\"325\" y2=\"262\" class=\"c-ln\" stroke=\"{}\"/>",
        light("c-ln")
    ));
}

/// The results, a label and its value below, and the memory per GPU, in the right column.
fn draw_results(s: &mut String, card: &Card) {
    // the results: a label, its value below
    let mut y = 90;
    for (label, value) in &card.results {
        s.push_str(&format!("<g font-family=\"{SANS}\" font-size=\"11\">"));
        text(s, 340, y, "c-mu", "", label);
        s.push_str("</g>");
        let (class, shown) = match value {
            Some(v) => ("c-fg", v.as_str()),
            None => ("c-mu", "not computed"),
        };
        s.push_str(&format!(
            "<g font-family=\"{MONO}\" font-size=\"16\" font-weight=\"700\">"
        ));
        text(s, 340, y + 19, class, "", shown);
        s.push_str("</g>");
        y += 40;
    }
    if let Some((mem, fits)) = &card.memory {
        s.push_str(&format!("<g font-family=\"{SANS}\" font-size=\"11\">"));
        text(s, 340, y, "c-mu", "", "Estimated memory per GPU");
        s.push_str("</g>");
        s.push_str(&format!(
            "<g font-family=\"{MONO}\" font-size=\"13\" font-weight=\"700\">"
        ));
        let class = match fits {
            Some(true) => "c-ok",
            Some(false) => "c-er",
            None => "c-fg",
        };
        text(s, 340, y + 18, class, "", mem);
        s.push_str("</g>");
    }
}

/// The first error, then the link.
fn draw_footer(s: &mut String, card: &Card) {
    line(s, 276);
    // the first error, then the link
    s.push_str(&format!("<g font-family=\"{SANS}\" font-size=\"12\">"));
    for (i, l) in card.error.iter().enumerate() {
        text(s, 20, 296 + 16 * i as u32, "c-er", "", l);
    }
    s.push_str("</g>");
    s.push_str(&format!("<g font-family=\"{MONO}\" font-size=\"11\">"));
    for (i, l) in card.link.iter().enumerate() {
        text(s, 20, 344 + 15 * i as u32, "c-ac", "", l);
    }
    s.push_str("</g></svg>");
}

/// The card as a self-contained SVG file, readable in light and dark themes.
pub fn svg(
    framework: Framework,
    release: &str,
    inputs: &RawInputs,
    report: &Report,
    url: &str,
) -> String {
    draw(&card(framework, release, inputs, report, url), true)
}

/// The same picture for the page's inline preview: without its `<style>` (the page's stylesheet
/// colours the same classes, and its CSP allows no inline style).
pub fn preview(
    framework: Framework,
    release: &str,
    inputs: &RawInputs,
    report: &Report,
    url: &str,
) -> String {
    draw(&card(framework, release, inputs, report, url), false)
}

/// The `data:` URL of an SVG file (percent-encoded UTF-8), for the page's download link.
pub fn data_url(svg: &str) -> String {
    let mut out = String::with_capacity(DATA_URL_PREFIX.len() + svg.len() * 2);
    out.push_str(DATA_URL_PREFIX);
    for b in svg.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'!'
            | b'*'
            | b'('
            | b')'
            | b':'
            | b';'
            | b','
            | b'/'
            | b'='
            | b'@' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The Markdown that shows the committed card and links it to the calculator:
/// `[![dpcalc: …](dpcalc-card.svg)](URL)`.
pub fn markdown(framework: Framework, release: &str, report: &Report, url: &str) -> String {
    let alt = headline(framework, release, report)
        .replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]");
    let url = clean(url)
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29");
    format!("[![{alt}]({FILE_NAME})]({url})")
}
