//! What the page's components show that is derived from the core's data, one file per panel (as
//! `src/components/` has them). Plain Rust like the rest of `calc` (no web import); the components
//! and the command line call these and render the result, so every rule here is tested natively.
//!
//! - `form.rs`: which form fields are shown (the compact form's), how a flag reads, when a field
//!   is invalid, which group starts folded, what a text field offers to pick from;
//! - `messages.rs`: which unknown link parameters are listed;
//! - `results.rs`: how the results list shows a value, the worked steps in order ("How this is
//!   computed"), the other release's comparison (the framework's `Spec::legacy`);
//! - `config.rs`: the frameworks a config can be imported as;
//! - `gpumap.rs`: the GPU map's rank descriptions, groups, counts and sentences;
//! - `timeline.rs`: the tokens-and-time section's values and the timeline's legend;
//! - `explorer.rs`: the layout explorer's sentences and memory marks;
//! - `memory.rs`: the model panel's groups with their sources, and the memory bar;
//! - `plan.rs`: the planner's rows as the page shows them (cells, `data-plan-row` attributes,
//!   the step's stacked bar);
//! - `scale.rs`: the scaling view's rows (cells, `data-scale-row` attributes) and its chart.
//!
//! Everything is re-exported here (`calc::view::shown_value`): a caller does not name the files.

mod config;
mod explorer;
mod form;
mod gpumap;
mod memory;
mod messages;
mod plan;
mod results;
mod scale;
mod timeline;

pub use config::importable;
pub use explorer::{
    apply_label, explorer_memory_summary, explorer_summary, explorer_truncated, fit_mark,
    keep_fitting, miss, row_fits, row_memory, show_all_label, shown_rows,
};
pub use form::{checked, folded, invalid, shown, suggestions};
pub use gpumap::{
    describe_rank, drawn_groups, group_count, map_fields, map_text, DrawnGroup, MapText,
    LEGEND_REPLICAS,
};
pub use memory::{
    has_model, memory_bar, memory_warning, BarPart, MemoryBar, FLOPS, MEGATRON_MEMORY,
    MEMORY_ESTIMATE, MODEL_GROUPS, PARAMETERS, STEP_TIME, ZERO_MODEL_STATES,
};
pub use messages::unlisted;
pub use plan::{
    plan_interim, plan_rows, plan_summary, PlanAttr, PlanRowView, PLAN_COLUMNS, STEP_PARTS,
};
pub use results::{legacy, shown_value, steps, Legacy};
pub use scale::{
    scale_chart, scale_interim, scale_rows, scale_summary, ChartPoint, ChartSeries, ScaleChart,
    ScaleRowView, CHART_HEIGHT, CHART_PLOT, CHART_WIDTH, SCALE_COLUMNS,
};
pub use timeline::{timeline_text, TimelineText, TOKENS_TIME};

use super::Output;

/// A titled group of values and the source every one of them comes from (the model panel's
/// groups and the tokens-and-time section; the command line prints the same titles and sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueGroup {
    pub title: &'static str,
    pub source: &'static str,
    pub outputs: &'static [Output],
}

/// What the panels' tests share.
#[cfg(test)]
mod testing {
    use crate::calc::{Field, Framework, RawInputs};

    pub fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }

    pub fn raw(pairs: &[(Field, &str)]) -> RawInputs {
        let mut r = RawInputs::default();
        for &(f, v) in pairs {
            r.set(f, v);
        }
        r
    }
}
