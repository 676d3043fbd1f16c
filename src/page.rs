//! The page's view model: what the first screen shows (the picker, the form, the results, the
//! summary bar and the link's notices), as plain data derived from a [`State`]. Two renderers
//! draw it: the Yew components (`components/`) and the Yew-free first view (`first.rs`, escaped
//! HTML), so the two cannot drift; what a row says is decided here once. Native, like
//! [`crate::state`], so `cargo test` covers it. The fixed markup both draw around it (ids,
//! classes, `aria-*` values, fixed texts) is [`markup`]'s.

#[macro_use]
pub mod markup;

use crate::calc::field::ARCHITECTURE_TITLE;
use crate::calc::fixes::names_key;
use crate::calc::frameworks::THROUGHPUT;
use crate::calc::guide::{self, Missing};
use crate::calc::parse::shorten;
use crate::calc::schedule;
use crate::calc::{view, Diag, Field, Framework, Kind, Level, Output, RawInputs, Report};
use crate::state::{url_with, State};

/// One computed value: `<dd data-output=NAME data-value=RAW data-needs=KEYS>SHOWN</dd>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueRow {
    pub output: &'static str,
    pub label: &'static str,
    /// The framework's own name for it (`<code class="key">`).
    pub config_name: &'static str,
    /// The exact value (`Num::raw`); `None` when it cannot be computed.
    pub raw: Option<String>,
    /// What the row shows: the value, or what it needs.
    pub shown: String,
    /// The keys it needs, space-separated (`data-needs`).
    pub needs: Option<String>,
}

/// One value of `report`, and when it cannot be computed what it needs.
pub fn value_row(
    framework: Framework,
    report: &Report,
    output: Output,
    missing: Option<Missing>,
) -> ValueRow {
    let (label, config_name) = framework.label(output);
    let value = report.value(output);
    ValueRow {
        output: output.name(),
        label,
        config_name,
        raw: value.map(|v| v.raw()),
        shown: match (value, &missing) {
            (Some(v), _) => view::shown_value(output, v),
            (None, Some(m)) => m.text(framework),
            (None, None) => Missing::Unknown.text(framework),
        },
        needs: missing
            .as_ref()
            .map(Missing::keys)
            .filter(|k| !k.is_empty()),
    }
}

/// The memory of each pipeline stage (`memory_by_stage_bytes`: the bytes, comma-separated,
/// first stage first), shown as the first and the last stage and how they differ; `None`
/// without pipeline parallelism or an estimate.
pub fn stage_memory_row(report: &Report) -> Option<ValueRow> {
    by_stage_row(
        &report.memory_by_stage,
        "memory_by_stage_bytes",
        "Memory by pipeline stage",
        report.memory_by_stage_value(),
    )
}

/// What the caching allocator reserves on each pipeline stage
/// (`memory_reserved_by_stage_bytes`), shown as [`stage_memory_row`] shows the allocated bytes.
pub fn stage_reserved_row(report: &Report) -> Option<ValueRow> {
    by_stage_row(
        &report.memory_reserved_by_stage,
        "memory_reserved_by_stage_bytes",
        "Reserved by pipeline stage (estimate)",
        report.memory_reserved_by_stage_value(),
    )
}

fn by_stage_row(
    stages: &[u128],
    output: &'static str,
    label: &'static str,
    raw: Option<String>,
) -> Option<ValueRow> {
    let (&first, &last) = (stages.first()?, stages.last()?);
    if stages.len() < 2 {
        return None;
    }
    let gib = crate::calc::num::gib;
    let diff = if last >= first {
        format!("the last {} more", gib(last - first))
    } else {
        format!("the last {} less", gib(first - last))
    };
    Some(ValueRow {
        output,
        label,
        config_name: output,
        raw,
        shown: format!(
            "first stage {}, last stage {} ({diff}; {} stages)",
            gib(first),
            gib(last),
            stages.len()
        ),
        needs: None,
    })
}

/// The row of `output` with what it needs when it has no value, or `None` when the page does
/// not show it (`guide::applies`: a feature the link does not use).
pub fn row(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
    output: Output,
) -> Option<ValueRow> {
    guide::applies(framework, inputs, report, output).then(|| {
        value_row(
            framework,
            report,
            output,
            guide::needs_legacy(framework, inputs, report, output),
        )
    })
}

/// The results list: every output the framework shows, in its order, but those of a feature the
/// link does not use.
pub fn results(framework: Framework, inputs: &RawInputs, report: &Report) -> Vec<ValueRow> {
    // (every output of a framework is built on values it gives: only a feature leaves one out)
    (framework.outputs().iter())
        .filter(|&&o| !guide::unused(framework, inputs, report, o))
        .map(|&o| {
            let missing = guide::needs(framework, inputs, report, o);
            value_row(framework, report, o, missing)
        })
        .collect()
}

/// The tokens-and-time panel's rows (`view::TOKENS_TIME`): each value as a person reads it
/// (`schedule::human`) with its exact digits when they differ, or what it needs.
pub fn tokens_time(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
) -> Vec<(ValueRow, Option<String>)> {
    (view::TOKENS_TIME.outputs.iter())
        .filter_map(|&o| {
            let mut row = row(framework, inputs, report, o)?;
            let value = report.value(o);
            if let Some(v) = value {
                row.shown = schedule::human(o, v);
            }
            let exact = value
                .filter(|v| v.to_f64().abs() >= 1000.0)
                .map(|v| format!(" ({})", v.pretty()));
            Some((row, exact))
        })
        .collect()
}

/// The results section's heading.
pub fn results_title(framework: Framework, release: &str) -> String {
    format!("What {} {release} computes", framework.name())
}

/// A message at a field: `<p id class data-ATTR=KEY>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    /// `error`, `warning`, `note` or `hint`: the class after `msg` and the `data-` attribute.
    pub level: &'static str,
    pub text: String,
    /// An error whose text does not name the field's key shows the key in front of it.
    pub show_key: bool,
    /// The field's last error: its fixes follow it.
    pub last_error: bool,
}

/// A message's level as the page names it: the class after `msg` and the `data-` attribute
/// (`error`, `warning`, `note`, `hint`).
pub fn level_name(level: Level) -> &'static str {
    match level {
        Level::Error => markup::LEVEL_ERROR,
        Level::Warning => markup::LEVEL_WARNING,
        Level::Note => markup::LEVEL_NOTE,
        Level::Hint => markup::LEVEL_HINT,
    }
}

/// The id of the n-th message at a field, for `aria-describedby`.
pub fn message_id(field: Field, n: usize) -> String {
    format!(markup!(MSG_ID "{}-{}"), field.key(), n)
}

/// The messages at `field`, in the report's order.
pub fn messages(field: Field, diags: &[Diag]) -> Vec<Message> {
    let last_error = diags.iter().rposition(|d| d.level == Level::Error);
    diags
        .iter()
        .enumerate()
        .map(|(n, d)| Message {
            id: message_id(field, n),
            level: level_name(d.level),
            show_key: d.level == Level::Error && !names_key(field, &d.message),
            text: d.message.clone(),
            last_error: Some(n) == last_error,
        })
        .collect()
}

/// One input of the form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRow {
    pub key: &'static str,
    pub label: &'static str,
    pub placeholder: &'static str,
    pub help: &'static str,
    /// The text as typed.
    pub value: String,
    /// A checkbox (then `checked` says how the framework reads the text).
    pub flag: bool,
    pub checked: bool,
    pub invalid: bool,
    /// `inputmode`: `numeric`, `decimal` or `text`.
    pub mode: &'static str,
    /// The `<datalist>`'s values (its id is `list-KEY`, `markup::LIST_ID`).
    pub list: Option<Vec<&'static str>>,
    pub messages: Vec<Message>,
}

impl FieldRow {
    /// `aria-describedby`: the help, then each message.
    pub fn described_by(&self) -> String {
        std::iter::once(format!(markup!(HELP_ID "{}"), self.key))
            .chain(self.messages.iter().map(|m| m.id.clone()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The row's classes.
    pub fn class(&self) -> &'static str {
        match (self.flag, self.invalid) {
            (false, false) => markup::FIELD,
            (true, false) => markup::FIELD_FLAG,
            (false, true) => markup::FIELD_INVALID,
            (true, true) => markup::FIELD_FLAG_INVALID,
        }
    }
}

/// The row of `field` with its text `value` and its messages.
pub fn field_row(framework: Framework, field: Field, value: &str, diags: &[Diag]) -> FieldRow {
    let (label, placeholder, help) = framework.describe(field);
    let flag = field.kind() == Kind::Flag;
    FieldRow {
        key: field.key(),
        label,
        placeholder,
        help,
        value: value.to_string(),
        flag,
        checked: flag && view::checked(field, value),
        invalid: view::invalid(diags),
        mode: match framework.kind(field) {
            Kind::Count => "numeric",
            Kind::Text => "text",
            _ => "decimal",
        },
        list: (view::suggestions(field).filter(|_| !flag)).map(|(_, values)| values),
        messages: messages(field, diags),
    }
}

/// A group of the form: a fieldset, or the foldable architecture group (`<details>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub title: &'static str,
    /// `Some(open)` for the foldable group; its rows are built only while it is open.
    pub fold: Option<bool>,
    pub fields: Vec<Field>,
}

/// The form's groups and the fields each shows. `opened`: the user opened the foldable group.
pub fn groups(
    framework: Framework,
    inputs: &RawInputs,
    report: &Report,
    compact: bool,
    opened: bool,
) -> Vec<Group> {
    framework
        .groups()
        .iter()
        .chain(std::iter::once(&THROUGHPUT))
        .map(|&(title, fields)| {
            let fold = (title == ARCHITECTURE_TITLE)
                .then(|| opened || !view::folded(title, fields, inputs, report));
            Group {
                title,
                fold,
                fields: if fold == Some(false) {
                    Vec::new()
                } else {
                    fields
                        .iter()
                        .copied()
                        // a first view has none of the app's own inputs (`field::APP_ONLY`)
                        .filter(|f| {
                            crate::calc::first_view::FULL || !crate::calc::field::is_app_only(*f)
                        })
                        .filter(|&f| view::shown(framework, inputs, report, f, compact))
                        .collect()
                },
            }
        })
        .collect()
}

/// A notice about the link itself: `<p class="msg notice" data-notice=KEY>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub key: String,
    pub text: String,
}

/// The link's notices, then its unknown parameters (ignored, and kept in the shared link).
pub fn notices(unknown: &[(String, String)], link: &[(String, String)]) -> Vec<Notice> {
    link.iter()
        .map(|(k, text)| Notice {
            key: k.clone(),
            text: text.clone(),
        })
        .chain(view::unlisted(unknown, link).map(|(k, v)| Notice {
            key: k.clone(),
            text: format!(
                "Unknown parameter \u{201c}{k}\u{201d}{} is ignored, and kept in the link you share.",
                if v.is_empty() {
                    String::new()
                } else {
                    format!(" (value \u{201c}{}\u{201d})", shorten(v))
                }
            ),
        }))
        .collect()
}

/// The summary bar's values: `(output, label, shown, raw value when computed)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRow {
    pub output: &'static str,
    pub label: &'static str,
    pub shown: String,
    pub raw: Option<String>,
}

/// The compact summary a small screen keeps at the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub rows: Vec<SummaryRow>,
    /// The first error: the field's key, the link's text and the message.
    pub error: Option<(&'static str, String, String)>,
}

pub fn summary(framework: Framework, inputs: &RawInputs, report: &Report) -> Summary {
    let s = guide::summary(framework, inputs, report);
    Summary {
        rows: s
            .items
            .iter()
            .map(|i| SummaryRow {
                output: i.output.name(),
                label: i.label,
                shown: i.shown.clone(),
                raw: i
                    .computed
                    .then(|| report.value(i.output).map(|v| v.raw()).unwrap_or_default()),
            })
            .collect(),
        error: s.error.map(|(field, message, count)| {
            let key = field.key();
            let lead = if count > 1 {
                format!("{count} errors; first at {key}: ")
            } else {
                format!("Error at {key}: ")
            };
            (key, lead, message)
        }),
    }
}

/// The framework and release choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picker {
    /// `(id, name, selected)` for every framework.
    pub frameworks: Vec<(&'static str, &'static str, bool)>,
    /// `(id, label, selected)` for every release of the selected framework.
    pub releases: Vec<(&'static str, &'static str, bool)>,
    /// The release select is disabled: one release only, or read-only.
    pub releases_disabled: bool,
    pub readonly: bool,
    /// What an old link without `version=` is computed by.
    pub note: Option<String>,
}

pub fn picker(framework: Framework, release: &str, readonly: bool, note: Option<String>) -> Picker {
    let releases = framework.releases();
    Picker {
        frameworks: Framework::ALL
            .iter()
            .map(|&f| (f.id(), f.name(), f == framework))
            .collect(),
        releases: releases
            .iter()
            .map(|r| (r.id, r.label, r.id == release))
            .collect(),
        releases_disabled: readonly || releases.len() < 2,
        readonly,
        note,
    }
}

/// The one-click examples near the top: each label and its complete link on the page at `base`.
pub fn examples(base: &str) -> Vec<(&'static str, String)> {
    crate::query::example_links()
        .into_iter()
        .map(|(label, q)| (label, url_with(base, &q)))
        .collect()
}

/// The lede's framework and release: `axolotl 0.21.0`.
pub fn lede(framework: Framework, release: &str) -> String {
    format!("{} {release}", framework.name())
}

/// Everything the first screen shows, for the page at `base` (its URL without the query).
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub embed: bool,
    pub readonly: bool,
    pub lede: String,
    pub examples: Vec<(&'static str, String)>,
    pub summary: Summary,
    pub notices: Vec<Notice>,
    pub picker: Picker,
    /// The groups, each with its rows.
    pub groups: Vec<(Group, Vec<FieldRow>)>,
    pub results_title: String,
    pub results: Vec<ValueRow>,
    /// The full calculator and the share link (the embedded view's link and hidden output).
    pub full_url: String,
    pub share_url: String,
}

impl Page {
    pub fn new(state: &State, base: &str) -> Page {
        Page::opened(state, base, false)
    }

    /// The page with the foldable architecture group `opened` by the user (its rows built).
    pub fn opened(state: &State, base: &str, opened: bool) -> Page {
        let link = &state.link;
        let (fw, view) = (link.framework, link.view);
        let release = link.release().id;
        let report = &*state.report;
        let urls = state.urls(base);
        let groups = groups(fw, &link.inputs, report, view.embed, opened)
            .into_iter()
            .map(|g| {
                let rows = g
                    .fields
                    .iter()
                    .map(|&f| {
                        let diags: Vec<Diag> = report.diags_for(f).cloned().collect();
                        field_row(fw, f, link.inputs.get(f), &diags)
                    })
                    .collect();
                (g, rows)
            })
            .collect();
        Page {
            embed: view.embed,
            readonly: view.readonly,
            lede: lede(fw, release),
            examples: examples(base),
            summary: summary(fw, &state.inputs, report),
            notices: notices(&link.unknown, &link.notices),
            picker: picker(fw, release, view.readonly, link.unversioned_note()),
            groups,
            results_title: results_title(fw, release),
            results: results(fw, &state.inputs, report),
            full_url: urls.full,
            share_url: urls.share,
        }
    }
}
