//! What `dpcalc check` prints: the page's report as text (the results with what each value
//! still needs, the model panel's groups with their sources, tokens and time, the other
//! release's comparison, every message with its one-click fixes as `--set` flags, the worked
//! rules, the link), or the same as JSON under the output contract's names. Every word and
//! number comes from the core (`page`, `calc::view`, `calc::guide`, `calc::fixes`), as on the
//! page.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::read::{Expectation, Read, Source};
use crate::calc::fixes::{self, Fix};
use crate::calc::{guide, schedule, view, Field, Framework, Level, Num, Output, Report};
use crate::page;
use crate::state::url_with;

/// Everything printed, computed once for both forms.
pub struct Printed<'a> {
    pub read: &'a Read,
    pub link: String,
    /// The fixes for each field with an error (`calc::fixes`, each verified by the framework).
    pub fixes: Vec<(Field, Vec<Fix>)>,
    /// Each expectation with whether it holds.
    pub checked: Vec<(&'a Expectation, bool)>,
}

impl<'a> Printed<'a> {
    pub fn new(read: &'a Read) -> Self {
        let state = &read.state;
        let (fw, release) = (state.link.framework, state.link.release().id);
        let report = &*state.report;
        Printed {
            read,
            link: url_with(&read.base, &state.query),
            fixes: fixes::fixes(fw, release, &state.link.inputs, report),
            checked: read
                .expectations
                .iter()
                .map(|e| (e, e.holds(report.value(e.output))))
                .collect(),
        }
    }

    fn framework(&self) -> Framework {
        self.read.state.link.framework
    }

    fn report(&self) -> &Report {
        &self.read.state.report
    }

    /// The framework accepts the inputs and every expectation holds.
    pub fn passed(&self) -> bool {
        !self.report().has_errors() && self.checked.iter().all(|(_, ok)| *ok)
    }

    /// Why the check fails, a line each, naming the key (for standard error).
    pub fn reasons(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .report()
            .diags
            .iter()
            .filter(|d| d.level == Level::Error)
            .map(|d| format!("error at {}: {}", d.field.key(), d.message))
            .collect();
        for (e, ok) in &self.checked {
            if !ok {
                out.push(format!(
                    "expected {}={}, {}",
                    e.output.name(),
                    e.text,
                    match self.report().value(e.output) {
                        Some(v) => format!("dpcalc computes {}", v.raw()),
                        None => "dpcalc computes no value for it".to_string(),
                    }
                ));
            }
        }
        out
    }

    /// The `--set` flags a fix stands for.
    fn fix_flags(fix: &Fix) -> String {
        fix.set
            .iter()
            .map(|(f, v)| format!("--set {}={}", f.key(), v))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The report as text, as the page shows it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        self.text_heading(&mut line);
        self.text_results(&mut line);
        self.text_model(&mut line);
        self.text_legacy(&mut line);
        self.text_messages(&mut line);
        self.text_steps(&mut line);
        self.text_expectations(&mut line);
        line(String::new());
        line(format!("link: {}", self.link));
        out
    }

    /// The lede, how each input was read, and the link's notices.
    fn text_heading(&self, line: &mut impl FnMut(String)) {
        let fw = self.framework();
        let state = &self.read.state;
        let release = state.link.release().id;
        line(format!("dpcalc: {}", page::lede(fw, release)));
        if let Some(note) = state.link.unversioned_note() {
            line(format!("  {note}"));
        }
        for s in &self.read.sources {
            line(format!("  {} ({}): {}", s.name, s.read_as, s.summary));
            for w in &s.warnings {
                line(format!("    warning: {w}"));
            }
            if !s.ignored.is_empty() {
                line(format!(
                    "    ignored (not batch or step settings dpcalc reads): {}",
                    s.ignored.join(", ")
                ));
            }
        }
        for n in page::notices(&state.link.unknown, &state.link.notices) {
            line(format!("  notice ({}): {}", n.key, n.text));
        }
    }

    /// The framework's results, each with its config name.
    fn text_results(&self, line: &mut impl FnMut(String)) {
        let (fw, report) = (self.framework(), self.report());
        let state = &self.read.state;
        let release = state.link.release().id;
        let inputs = &state.link.inputs;
        line(String::new());
        line(page::results_title(fw, release));
        let rows: Vec<(String, String)> = page::results(fw, inputs, report)
            .into_iter()
            .map(|r| (format!("{} ({})", r.label, r.config_name), r.shown))
            .collect();
        table(line, &rows);
    }

    /// The model panel's groups and tokens and time, each with its source.
    fn text_model(&self, line: &mut impl FnMut(String)) {
        let (fw, report) = (self.framework(), self.report());
        let groups = view::MODEL_GROUPS.iter().chain([&view::TOKENS_TIME]);
        for g in groups {
            let rows: Vec<(String, String)> = g
                .outputs
                .iter()
                .filter(|o| !fw.outputs().contains(o))
                .filter_map(|&o| {
                    let v = report.value(o)?;
                    let (label, key) = fw.label(o);
                    let shown = if view::TOKENS_TIME.outputs.contains(&o) {
                        let human = schedule::human(o, v);
                        if v.to_f64().abs() >= 1000.0 {
                            format!("{human} ({})", v.pretty())
                        } else {
                            human
                        }
                    } else {
                        view::shown_value(o, v)
                    };
                    Some((format!("{label} ({key})"), shown))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            line(String::new());
            line(g.title.to_string());
            line(format!("  source: {}", g.source));
            table(line, &rows);
        }
    }

    /// The other release's comparison, when the release has one.
    fn text_legacy(&self, line: &mut impl FnMut(String)) {
        let (fw, report) = (self.framework(), self.report());
        let state = &self.read.state;
        let release = state.link.release().id;
        let inputs = &state.link.inputs;
        if let (Some(legacy), Some(why)) = (
            view::legacy(fw, release),
            guide::legacy_why(fw, release, inputs, report),
        ) {
            line(String::new());
            line(legacy.title.to_string());
            line(format!("  {why}"));
            let rows: Vec<(String, String)> =
                [Output::LegacyGlobalBatchSize, Output::LegacyTotalNumSteps]
                    .into_iter()
                    .map(|o| {
                        let r = page::value_row(fw, report, o, None);
                        (format!("{} ({})", r.label, r.config_name), r.shown)
                    })
                    .collect();
            table(line, &rows);
            for n in &report.legacy_notes {
                line(format!("  {n}"));
            }
        }
    }

    /// Every message, errors with their fixes as `--set` flags.
    fn text_messages(&self, line: &mut impl FnMut(String)) {
        let report = self.report();
        let mut diags: Vec<_> = report.diags.iter().collect();
        diags.sort_by_key(|d| d.level);
        if !diags.is_empty() {
            line(String::new());
            line("Messages".into());
        }
        let mut fixed: Vec<Field> = Vec::new();
        for d in diags {
            line(format!(
                "  {} at {}: {}",
                page::level_name(d.level),
                d.field.key(),
                d.message
            ));
            if d.level == Level::Error && !fixed.contains(&d.field) {
                fixed.push(d.field);
                if let Some((_, fixes)) = self.fixes.iter().find(|(f, _)| *f == d.field) {
                    for fix in fixes {
                        line(format!("    fix: {} ({})", fix.label, Self::fix_flags(fix)));
                    }
                }
            }
        }
    }

    /// The worked rules.
    fn text_steps(&self, line: &mut impl FnMut(String)) {
        let report = self.report();
        let steps = view::steps(report);
        if !steps.is_empty() {
            line(String::new());
            line("How this is computed".into());
            for s in steps {
                line(format!("  {}", s.rule));
                line(format!("      {}", s.worked));
            }
        }
    }

    /// Each `--expect` with whether it holds.
    fn text_expectations(&self, line: &mut impl FnMut(String)) {
        let report = self.report();
        if !self.checked.is_empty() {
            line(String::new());
            line("Expectations".into());
            for (e, ok) in &self.checked {
                let got = report
                    .value(e.output)
                    .map_or_else(|| "none".to_string(), Num::raw);
                line(format!(
                    "  {} {}={} (dpcalc: {got})",
                    if *ok { "ok" } else { "FAILED" },
                    e.output.name(),
                    e.text
                ));
            }
        }
    }

    /// The report as JSON: the output contract's names and values (integers as integers,
    /// floats as floats), the messages, the steps and the expectations.
    pub fn json(&self) -> String {
        let (fw, report) = (self.framework(), self.report());
        let state = &self.read.state;
        let inputs = &state.link.inputs;
        let needs: Vec<(&'static str, String)> = fw
            .outputs()
            .iter()
            .filter(|&&o| report.value(o).is_none())
            .filter_map(|&o| guide::needs(fw, inputs, report, o).map(|m| (o.name(), m.text(fw))))
            .collect();
        let messages: Vec<Message> = report
            .diags
            .iter()
            .map(|d| Message {
                level: page::level_name(d.level),
                field: d.field.key(),
                stage: d.stage.name(),
                message: &d.message,
                refusal: d.refusal.as_ref().map(|r| Refusal {
                    by: &r.by,
                    says: &r.says,
                    fix: &r.fix,
                }),
            })
            .collect();
        let fixes: Vec<FieldFixes> = self
            .fixes
            .iter()
            .map(|(f, fixes)| FieldFixes {
                field: f.key(),
                fixes: fixes
                    .iter()
                    .map(|x| JsonFix {
                        label: &x.label,
                        set: Pairs(x.set.iter().map(|(f, v)| (f.key(), v.as_str())).collect()),
                    })
                    .collect(),
            })
            .collect();
        let doc = Json {
            framework: fw.id(),
            version: state.link.release().id,
            accepted: !report.has_errors(),
            passed: self.passed(),
            link: &self.link,
            query: &state.query,
            sources: &self.read.sources,
            outputs: Outputs(report),
            needs: Pairs(needs.iter().map(|(k, v)| (*k, v.as_str())).collect()),
            messages,
            fixes,
            notices: page::notices(&state.link.unknown, &state.link.notices)
                .into_iter()
                .map(|n| (n.key, n.text))
                .collect(),
            steps: view::steps(report)
                .into_iter()
                .map(|s| Step {
                    output: s.output.name(),
                    stage: s.stage.name(),
                    rule: &s.rule,
                    worked: &s.worked,
                })
                .collect(),
            expectations: self
                .checked
                .iter()
                .map(|(e, ok)| JsonExpectation {
                    output: e.output.name(),
                    expected: &e.text,
                    got: report.value(e.output).map(JsonNum),
                    holds: *ok,
                })
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Rows of `label  value`, the values in one column.
fn table(line: &mut impl FnMut(String), rows: &[(String, String)]) {
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .min(64);
    for (label, value) in rows {
        let pad = width.saturating_sub(label.chars().count());
        line(format!("  {label}{}  {value}", " ".repeat(pad)));
    }
}

#[derive(Serialize)]
struct Json<'a> {
    framework: &'static str,
    version: &'static str,
    /// The framework accepts the inputs (no error).
    accepted: bool,
    /// Accepted, and every `--expect` holds: exit status 0.
    passed: bool,
    link: &'a str,
    query: &'a str,
    sources: &'a [Source],
    outputs: Outputs<'a>,
    needs: Pairs<'a>,
    messages: Vec<Message<'a>>,
    fixes: Vec<FieldFixes<'a>>,
    notices: Vec<(String, String)>,
    steps: Vec<Step<'a>>,
    expectations: Vec<JsonExpectation<'a>>,
}

/// A value as the contract gives it: an integer as a JSON integer (any size), a float as a JSON
/// float with the shortest round-trip digits (a float that is not finite as its Python text).
struct JsonNum(Num);

impl Serialize for JsonNum {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Num::Int(i) => match i64::try_from(i) {
                Ok(i) => s.serialize_i64(i),
                Err(_) => s.serialize_i128(i),
            },
            Num::Float(x) if x.is_finite() => s.serialize_f64(x),
            Num::Float(_) => s.serialize_str(&self.0.raw()),
        }
    }
}

/// Every computed output, in the contract's order.
struct Outputs<'a>(&'a Report);

impl Serialize for Outputs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for &o in Output::ALL {
            if let Some(v) = self.0.value(o) {
                m.serialize_entry(o.name(), &JsonNum(v))?;
            }
            // the bytes of each pipeline stage, as `data-value` writes them
            if o == Output::MemoryPerGpuBytes {
                if let Some(stages) = self.0.memory_by_stage_value() {
                    m.serialize_entry("memory_by_stage_bytes", &stages)?;
                }
                if let Some(stages) = self.0.memory_reserved_by_stage_value() {
                    m.serialize_entry("memory_reserved_by_stage_bytes", &stages)?;
                }
            }
        }
        m.end()
    }
}

/// An ordered JSON object.
struct Pairs<'a>(Vec<(&'a str, &'a str)>);

impl Serialize for Pairs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Message<'a> {
    level: &'static str,
    field: &'static str,
    stage: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    refusal: Option<Refusal<'a>>,
}

#[derive(Serialize)]
struct Refusal<'a> {
    by: &'a str,
    says: &'a str,
    fix: &'a str,
}

#[derive(Serialize)]
struct FieldFixes<'a> {
    field: &'static str,
    fixes: Vec<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    label: &'a str,
    set: Pairs<'a>,
}

#[derive(Serialize)]
struct Step<'a> {
    output: &'static str,
    stage: &'static str,
    rule: &'a str,
    worked: &'a str,
}

#[derive(Serialize)]
struct JsonExpectation<'a> {
    output: &'static str,
    expected: &'a str,
    got: Option<JsonNum>,
    holds: bool,
}
