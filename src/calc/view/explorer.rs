//! The layout explorer: its summary, the truncation note, a row's miss, its Apply button's name,
//! and the memory marks (whether a row fits the GPU, the "only layouts that fit" filter).

use crate::calc::layout::{Explorer, Mode, Row};
use crate::calc::Num;

/// The explorer's summary: how many layouts, the global batch it keeps and what a row sets.
pub fn explorer_summary(ex: &Explorer) -> String {
    let target = match (ex.target, ex.micro) {
        (Some(t), Some(m)) => format!(
            "Current global batch {} at {} samples per replica per micro step.",
            Num::Int(t.into()).pretty(),
            m
        ),
        (Some(t), None) => format!("Current global batch {}.", Num::Int(t.into()).pretty()),
        _ => "No current global batch to keep.".to_string(),
    };
    let mode = match ex.mode {
        Mode::SetAccumulation => {
            "Each row sets gradient accumulation to keep the current global batch (exactly, or the nearest it can)."
        }
        Mode::SetGlobal => {
            "Each row sets the global batch to the achievable one nearest the current, and the framework derives its accumulation."
        }
        Mode::SizesOnly => "Each row changes only the parallel sizes.",
    };
    let world = ex.world.map(|w| w.to_string()).unwrap_or_default();
    format!(
        "{} layouts for {world} GPUs. {target} {mode}",
        ex.rows.len()
    )
}

/// When only the first `shown` of `all` rows are drawn, the note that says so.
pub fn explorer_truncated(shown: usize, all: usize) -> Option<String> {
    (all > shown).then(|| {
        format!(
            "The first {shown} of {all} in this order are shown, and the current layout; sort by a column to see others, or show all."
        )
    })
}

/// The button that draws every row of a cut table.
pub fn show_all_label(all: usize) -> String {
    format!("Show all {all} layouts")
}

/// The rows drawn, as indices in `order`: the first `limit`, then the current layout's row when
/// the order puts it later (the layout the inputs have is always on the page). A long table is
/// cut: 65,536 GPUs have 969 layouts of three dimensions, about 18,000 elements to lay out on
/// every edit.
pub fn shown_rows(order: &[usize], current: Option<usize>, limit: usize) -> Vec<usize> {
    let mut shown: Vec<usize> = order.iter().copied().take(limit).collect();
    if let Some(c) = current.filter(|c| order.contains(c) && !shown.contains(c)) {
        shown.push(c);
    }
    shown
}

/// A row's miss in samples, signed: `+1,024 samples`, `-8 samples`, `0 samples`.
pub fn miss(miss: i128) -> String {
    let shown = if miss > 0 {
        format!("+{}", Num::Int(miss).pretty())
    } else {
        Num::Int(miss).pretty()
    };
    format!("{shown} samples")
}

/// The accessible name of a row's Apply button: `Apply tensor_parallel_size=2, context_parallel_size=1`.
pub fn apply_label(ex: &Explorer, row: &Row) -> String {
    format!("Apply {}", ex.query(row).replace('&', ", "))
}

/// Whether a row's estimated memory per GPU fits the GPU's (`None`: either is unknown).
pub fn row_fits(row: &Row, capacity: Option<u128>) -> Option<bool> {
    Some(row.memory_bytes? <= capacity?)
}

/// A row's memory per GPU in GiB (`crate::calc::num::gib`), or `None` when unknown.
pub fn row_memory(row: &Row) -> Option<String> {
    row.memory_bytes.map(crate::calc::num::gib)
}

/// A row's fits mark, readable without colour: `fits`, or `over by 3.25 GiB`.
pub fn fit_mark(row: &Row, capacity: Option<u128>) -> Option<String> {
    let (m, c) = (row.memory_bytes?, capacity?);
    Some(if m <= c {
        "fits".to_string()
    } else {
        format!("over by {}", crate::calc::num::gib(m - c))
    })
}

/// The rows kept by the "only layouts that fit" filter: with it on (and a capacity known),
/// exactly the rows whose memory is known and at most the capacity, in `order`'s order.
pub fn keep_fitting(ex: &Explorer, order: Vec<usize>, only_fit: bool) -> Vec<usize> {
    if !only_fit || ex.capacity.is_none() {
        return order;
    }
    order
        .into_iter()
        .filter(|&i| row_fits(&ex.rows[i], ex.capacity) == Some(true))
        .collect()
}

/// The sentence under the explorer's summary when the rows have a memory estimate:
/// `412 of 969 layouts fit the GPU's 74.5 GiB (published-formula estimate per GPU).`
pub fn explorer_memory_summary(ex: &Explorer) -> Option<String> {
    if !ex.rows.iter().any(|r| r.memory_bytes.is_some()) {
        return None;
    }
    Some(match ex.capacity {
        Some(c) => {
            let n = ex
                .rows
                .iter()
                .filter(|r| row_fits(r, Some(c)) == Some(true))
                .count();
            format!(
                "{n} of {} layouts fit the GPU's {} (memory per GPU by published formulas, an estimate).",
                ex.rows.len(),
                crate::calc::num::gib(c)
            )
        }
        None => "Memory per GPU by published formulas (an estimate); pick a GPU to see which layouts fit.".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::view::testing::{fw, raw};
    use crate::calc::{layout, Field};

    #[test]
    fn the_explorer_sentences() {
        let inputs = raw(&[
            (Field::Nodes, "1"),
            (Field::GpusPerNode, "8"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "4"),
        ]);
        let ex = layout::explore(fw("axolotl"), "0.19.0", &inputs);
        assert!(!ex.rows.is_empty());
        assert_eq!(
            explorer_summary(&ex),
            format!(
                "{} layouts for 8 GPUs. Current global batch 64 at 2 samples per replica per micro step. \
                 Each row sets gradient accumulation to keep the current global batch (exactly, or the nearest it can).",
                ex.rows.len()
            )
        );
        let row = &ex.rows[0];
        assert_eq!(
            apply_label(&ex, row),
            format!("Apply {}", ex.query(row).replace('&', ", "))
        );
        assert!(apply_label(&ex, row).contains("tensor_parallel_size="));
        assert!(!apply_label(&ex, row).contains('&'));
        // an unreadable batch: nothing to keep
        let none = layout::explore(
            fw("axolotl"),
            "0.19.0",
            &raw(&[(Field::Nodes, "1"), (Field::MicroBatchSize, "x")]),
        );
        assert!(
            explorer_summary(&none).contains(" GPUs. No current global batch to keep. "),
            "{}",
            explorer_summary(&none)
        );
        assert_eq!(explorer_truncated(1000, 1000), None);
        assert_eq!(
            explorer_truncated(1000, 1200).as_deref(),
            Some("The first 1000 of 1200 in this order are shown, and the current layout; sort by a column to see others, or show all.")
        );
        // the first rows, and the current one after them when the order puts it later
        let order = [4, 3, 2, 1, 0];
        assert_eq!(shown_rows(&order, Some(0), 2), vec![4, 3, 0]);
        assert_eq!(shown_rows(&order, Some(3), 2), vec![4, 3]);
        assert_eq!(shown_rows(&order, None, 9), vec![4, 3, 2, 1, 0]);
        // a current row the filter hid stays hidden
        assert_eq!(shown_rows(&[4, 3, 2], Some(0), 2), vec![4, 3]);
    }

    #[test]
    fn the_explorer_memory_marks() {
        let inputs = raw(&[
            (Field::BaseModel, "meta-llama/Llama-3.1-8B"),
            (Field::Gpu, "a100-40gb"),
            (Field::MicroBatchSize, "1"),
        ]);
        let mut ex = layout::explore(fw("axolotl"), "0.19.0", &inputs);
        let cap = ex.capacity.unwrap();
        let row = &mut ex.rows[0];
        row.memory_bytes = Some(cap);
        assert_eq!(fit_mark(row, Some(cap)).as_deref(), Some("fits"));
        assert_eq!(row_fits(row, Some(cap)), Some(true));
        row.memory_bytes = Some(cap + 3 * 1_073_741_824 + 1_073_741_824 / 4);
        assert_eq!(
            fit_mark(row, Some(cap)).as_deref(),
            Some("over by 3.25 GiB")
        );
        assert_eq!(row_fits(row, Some(cap)), Some(false));
        assert_eq!(fit_mark(row, None), None);
        assert_eq!(row_fits(row, None), None);
        row.memory_bytes = None;
        assert_eq!(row_memory(row), None);
        assert_eq!(fit_mark(row, Some(cap)), None);
        // the filter drops a row without an estimate
        let all: Vec<usize> = (0..ex.rows.len()).collect();
        assert!(!keep_fitting(&ex, all, true).contains(&0));
    }

    #[test]
    fn a_miss_is_signed() {
        assert_eq!(miss(0), "0 samples");
        assert_eq!(miss(8), "+8 samples");
        assert_eq!(miss(-8), "-8 samples");
        assert_eq!(miss(1024), format!("+{} samples", Num::Int(1024).pretty()));
    }
}
