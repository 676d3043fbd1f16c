//! `dpcalc plan --scale`: the scaling view for a config or a link, as the page's scaling view
//! (`view=scale`) shows it: the rows of `calc::view::scale_rows` (cells, `data-scale-row`
//! attributes) with each size's plan link as the page writes it (`state::scale_url`), as a table
//! or as JSON. The exit statuses are `dpcalc plan`'s: 1 when the framework refuses the inputs
//! (the reasons on standard error), 0 otherwise. Nothing of a row is computed here.

use std::io::Write;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::plan::{aligned, Attr};
use super::print::Printed;
use super::read::Read;
use super::{json_escaped, printable, FAILED, PASSED};
use crate::calc::scaling::{self, Scale};
use crate::calc::view::{self, PlanAttr, ScaleRowView, SCALE_COLUMNS};
use crate::page;
use crate::state::{scale_url, url_with};

/// Prints the scaling view of what was read to `out`; a refusal's reasons to `err`.
pub fn scale(read: &Read, json: bool, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let scaled = Scaled::new(read);
    // as `dpcalc check` prints: no control character the input carried reaches the terminal
    let text = if json {
        json_escaped(&scaled.json())
    } else {
        printable(&scaled.text(), true)
    };
    let _ = out.write_all(text.as_bytes());
    if !read.state.report.has_errors() {
        return PASSED;
    }
    for r in Printed::new(read).reasons() {
        let _ = writeln!(err, "dpcalc: {}", printable(&r, false));
    }
    FAILED
}

/// Everything `dpcalc plan --scale` prints, computed once for both forms.
pub struct Scaled<'a> {
    pub read: &'a Read,
    pub link: String,
    pub scale: Scale,
    pub rows: Vec<ScaleRowView>,
    /// Each size's plan link, as the page writes it (`None`: no plan at that size).
    pub links: Vec<Option<String>>,
}

impl<'a> Scaled<'a> {
    pub fn new(read: &'a Read) -> Self {
        let link = &read.state.link;
        let scale = scaling::scale(link.framework, link.release().id, &link.inputs);
        let rows = view::scale_rows(&scale);
        let links = (scale.rows.iter())
            .map(|r| scale_url(&read.base, link, r))
            .collect();
        Scaled {
            read,
            link: url_with(&read.base, &read.state.query),
            scale,
            rows,
            links,
        }
    }

    /// The rows as a table, each with its plan's link.
    pub fn text(&self) -> String {
        let state = &self.read.state;
        let mut out = format!(
            "dpcalc plan --scale: {}\n",
            page::lede(state.link.framework, state.link.release().id)
        );
        for s in &self.read.sources {
            out.push_str(&format!("  {} ({}): {}\n", s.name, s.read_as, s.summary));
        }
        out.push('\n');
        if let Some(note) = &self.scale.note {
            out.push_str(&format!("{note}\n"));
        }
        if let Some(summary) = view::scale_summary(&self.scale) {
            out.push_str(&format!("{summary}\n"));
        }
        if !self.rows.is_empty() {
            out.push('\n');
            let mut cells: Vec<Vec<String>> = vec![SCALE_COLUMNS
                .iter()
                .map(|c| c.to_string())
                .chain(["Link".to_string()])
                .collect()];
            for (row, link) in self.rows.iter().zip(&self.links) {
                let link = link.clone().unwrap_or_else(|| "no plan".into());
                cells.push(row.cells().into_iter().chain([link]).collect());
            }
            for l in aligned(&cells, &|i| i == 2 || i == 8) {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out.push_str(&format!("\nlink: {}\n", self.link));
        out
    }

    /// The rows as JSON: every `data-scale-row` attribute by its name with `_` for `-`, the plan
    /// in words, the note of a size without a plan, and the plan's link.
    pub fn json(&self) -> String {
        let state = &self.read.state;
        let doc = Json {
            framework: state.link.framework.id(),
            version: state.link.release().id,
            accepted: !state.report.has_errors(),
            link: &self.link,
            global_batch_size: self.scale.global_batch,
            deadline_hours: self.scale.deadline_hours,
            cheapest_nodes: self.scale.cheapest.map(|i| self.scale.rows[i].nodes),
            rows: (self.rows.iter().zip(&self.scale.rows).zip(&self.links))
                .map(|((row, r), link)| JsonRow {
                    row,
                    note: r.note.as_deref(),
                    link: link.as_deref(),
                })
                .collect(),
            note: self.scale.note.as_deref(),
        };
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }
}

#[derive(Serialize)]
struct Json<'a> {
    framework: &'static str,
    version: &'static str,
    accepted: bool,
    link: &'a str,
    global_batch_size: Option<u64>,
    deadline_hours: Option<f64>,
    /// The cheapest size (nodes) whose run ends within the deadline.
    cheapest_nodes: Option<u64>,
    rows: Vec<JsonRow<'a>>,
    note: Option<&'a str>,
}

/// A size: its attributes in the contract's order, its plan in words, then its link.
struct JsonRow<'a> {
    row: &'a ScaleRowView,
    note: Option<&'a str>,
    link: Option<&'a str>,
}

impl Serialize for JsonRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (name, value) in self.row.attributes() {
            let key = name.trim_start_matches("data-").replace('-', "_");
            // `data-meets-deadline`'s word as JSON's boolean
            match value {
                PlanAttr::Text(t @ ("true" | "false")) => {
                    m.serialize_entry(&key, &(t == "true"))?
                }
                _ => m.serialize_entry(&key, &Attr(value))?,
            }
        }
        if self.row.has_plan {
            m.serialize_entry("plan", &self.row.layout)?;
        }
        if let Some(note) = self.note {
            m.serialize_entry("note", note)?;
        }
        m.serialize_entry("link", &self.link)?;
        m.end()
    }
}
