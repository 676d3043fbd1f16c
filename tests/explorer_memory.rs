//! The layout explorer as a planner: each row's memory per GPU is the estimate the report makes
//! for the current inputs on the device (`memory_on_device_bytes`), on the row's grid; the GPU's memory says which
//! rows fit; the memory column sorts and the "only layouts that fit" filter keeps exactly the
//! rows that fit.

use dpcalc::calc::layout::{self, Explorer, SortKey};
use dpcalc::calc::{view, Framework, Level, Num, Output, Report};
use dpcalc::query;

/// The explorer and the report of a link (rules of the link's release), with no error in the
/// report.
fn explore(q: &str) -> (Explorer, Report) {
    let link = query::decode(q);
    let report = link.report();
    let errors: Vec<_> = report
        .diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .collect();
    assert!(errors.is_empty(), "{q}: {errors:?}");
    let ex = layout::explore(link.framework, link.release().id, &link.inputs);
    (ex, report)
}

fn memory(q: &str, r: &Report) -> u128 {
    match r.value(Output::MemoryOnDeviceBytes) {
        Some(Num::Int(v)) => v as u128,
        other => panic!("{q}: no memory_on_device_bytes: {other:?} {:?}", r.diags),
    }
}

/// Links with Llama-3.1-8B on H100s, for every framework under its own model key, with the
/// frameworks' sharding settings (ZeRO, FSDP, HSDP, the distributed optimizer) and model
/// parallelism.
const LINKS: &[&str] = &[
    "framework=axolotl&version=0.19.0&base_model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000",
    "framework=axolotl&version=0.19.0&base_model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=1&gradient_accumulation_steps=2&num_samples=10000&tensor_parallel_size=2&zero_optimization.stage=3",
    "framework=axolotl&version=0.21.0&base_model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=1&num_samples=10000&nodes=2&fsdp_config.fsdp_version=2&dp_shard_size=8&gradient_checkpointing=true",
    "framework=hf&model_name_or_path=meta-llama/Llama-3.1-8B&gpu=h100-sxm&per_device_train_batch_size=2&gradient_accumulation_steps=2&num_samples=1000&max_length=2048",
    "framework=hf&model_name_or_path=meta-llama/Llama-3.1-8B&gpu=a100-80gb&per_device_train_batch_size=1&tp_size=2&max_length=4096",
    "framework=deepspeed&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&train_micro_batch_size_per_gpu=1&gradient_accumulation_steps=2&zero_optimization.stage=2&max_length=2048",
    "framework=megatron&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&world_size=16&tensor_model_parallel_size=2&pipeline_model_parallel_size=2&micro_batch_size=1&global_batch_size=16&train_iters=10&seq_length=4096&use_distributed_optimizer=true&sequence_parallel=true",
    "framework=torchtitan&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&world_size=16&tensor_parallel_degree=2&data_parallel_replicate_degree=2&local_batch_size=2",
    "framework=torchtitan&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&local_batch_size=1",
    // a pipeline with FSDP2: the stage's gathered parameters and unsharded gradients counted
    "framework=torchtitan&version=0.3.0&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&world_size=8&local_batch_size=4&seq_len=4096&data_parallel_shard_degree=2&tensor_parallel_degree=2&pipeline_parallel_degree=2&pipeline_parallel_microbatch_size=1&disable_cuda_graphs=true",
    // 1f1b, as nanotron's examples set it: under afab, its default, every micro batch of the step
    // is held, and at the global batch kept a smaller dp means more of them (tests/nanotron.rs)
    "framework=nanotron&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&tp=2&pp=1&dp=4&micro_batch_size=2&batch_accumulation_per_replica=2&sequence_length=2048&train_steps=100&pp_engine=1f1b",
];

#[test]
fn the_current_row_has_the_reports_memory() {
    let mut frameworks = std::collections::HashSet::new();
    for q in LINKS {
        let (ex, report) = explore(q);
        let cur = &ex.rows[ex.current.unwrap_or_else(|| panic!("{q}: no current row"))];
        assert_eq!(cur.memory_bytes, Some(memory(q, &report)), "{q}");
        assert_eq!(
            ex.capacity,
            report.count(Output::GpuUsableMemoryBytes).map(u128::from)
        );
        assert!(ex.capacity.is_some(), "{q}");
        // every layout the framework takes has an estimate
        assert!(
            ex.rows
                .iter()
                .all(|r| !r.valid() || r.memory_bytes.is_some()),
            "{q}"
        );
        frameworks.insert(ex.framework);
    }
    assert_eq!(frameworks.len(), Framework::ALL.len());
}

#[test]
fn no_model_no_memory() {
    let (ex, _) = explore("framework=axolotl&gpu=h100-sxm&micro_batch_size=2");
    assert!(ex.rows.iter().all(|r| r.memory_bytes.is_none()));
    // what the H100 gives PyTorch (gpu_usable_memory_bytes), not its nominal 80 × 10⁹ B
    assert_eq!(ex.capacity, Some(85_045_477_376));
    assert_eq!(view::explorer_memory_summary(&ex), None);
    // the filter keeps every row when there is nothing to filter on
    let (ex, _) = explore("framework=axolotl&base_model=meta-llama/Llama-3.1-8B");
    assert!(ex.rows.iter().all(|r| r.memory_bytes.is_some()));
    assert_eq!(ex.capacity, None);
    let all: Vec<usize> = (0..ex.rows.len()).collect();
    assert_eq!(view::keep_fitting(&ex, all.clone(), true), all);
    assert!(view::explorer_memory_summary(&ex)
        .unwrap()
        .contains("pick a GPU"));
}

/// A larger tensor-parallel size (the world kept: the data-parallel size shrinks) never raises
/// the memory of a layout the framework takes.
#[test]
fn more_tensor_parallel_never_raises_memory() {
    for q in LINKS {
        let (ex, _) = explore(q);
        let Some(tp) = ex.dims.iter().position(|&(d, _)| d == layout::Dim::Tp) else {
            continue;
        };
        let mut pairs = 0;
        for a in &ex.rows {
            for b in &ex.rows {
                let same_others = a
                    .sizes
                    .iter()
                    .zip(&b.sizes)
                    .enumerate()
                    .all(|(i, (x, y))| i == tp || x == y);
                if same_others && b.sizes[tp] > a.sizes[tp] && a.valid() && b.valid() {
                    let (Some(ma), Some(mb)) = (a.memory_bytes, b.memory_bytes) else {
                        panic!("{q}: {:?} {:?}", a, b)
                    };
                    assert!(mb <= ma, "{q}: {:?} {ma} → {:?} {mb}", a.sizes, b.sizes);
                    pairs += 1;
                }
            }
        }
        assert!(pairs > 0, "{q}");
    }
}

#[test]
fn the_fits_filter_keeps_exactly_the_rows_that_fit() {
    // 8 × A100 40GB, Llama-3.1-8B replicated: TP 1 does not fit, TP 8 does
    let (ex, _) = explore(
        "framework=axolotl&version=0.19.0&base_model=meta-llama/Llama-3.1-8B&gpu=a100-40gb&micro_batch_size=1&num_samples=1000",
    );
    let cap = ex.capacity.unwrap();
    assert_eq!(cap, 42_298_834_944);
    let all: Vec<usize> = (0..ex.rows.len()).collect();
    let kept = view::keep_fitting(&ex, all.clone(), true);
    let want: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| ex.rows[i].memory_bytes.unwrap() <= cap)
        .collect();
    assert_eq!(kept, want);
    assert!(!kept.is_empty() && kept.len() < all.len(), "{kept:?}");
    assert_eq!(view::keep_fitting(&ex, all.clone(), false), all);
    // the marks: fits / over by X GiB, and data-fits' value
    for r in &ex.rows {
        let m = r.memory_bytes.unwrap();
        let mark = view::fit_mark(r, ex.capacity).unwrap();
        if m <= cap {
            assert_eq!(mark, "fits");
            assert_eq!(view::row_fits(r, ex.capacity), Some(true));
        } else {
            assert_eq!(mark, format!("over by {}", dpcalc::calc::num::gib(m - cap)));
            assert_eq!(view::row_fits(r, ex.capacity), Some(false));
        }
        assert_eq!(view::row_memory(r), Some(dpcalc::calc::num::gib(m)));
    }
    let summary = view::explorer_memory_summary(&ex).unwrap();
    assert!(
        summary.starts_with(&format!(
            "{} of {} layouts fit the GPU's 39.4 GiB",
            kept.len(),
            all.len()
        )),
        "{summary}"
    );
    // the filter keeps the sort order
    let sorted = layout::order(&ex, SortKey::Memory, true);
    let kept = view::keep_fitting(&ex, sorted.clone(), true);
    let want: Vec<usize> = sorted
        .into_iter()
        .filter(|&i| ex.rows[i].memory_bytes.unwrap() <= cap)
        .collect();
    assert_eq!(kept, want);
}

#[test]
fn sort_by_memory() {
    let (ex, _) = explore(LINKS[6]);
    let asc = layout::order(&ex, SortKey::Memory, false);
    let mem = |i: usize| ex.rows[i].memory_bytes.unwrap();
    assert!(asc.windows(2).all(|w| mem(w[0]) <= mem(w[1])));
    let desc = layout::order(&ex, SortKey::Memory, true);
    assert!(desc.windows(2).all(|w| mem(w[0]) >= mem(w[1])));
    assert_eq!(asc.len(), ex.rows.len());
    // rows without a value go last
    let mut ex = ex;
    ex.rows[0].memory_bytes = None;
    let asc = layout::order(&ex, SortKey::Memory, false);
    assert_eq!(*asc.last().unwrap(), 0);
    let desc = layout::order(&ex, SortKey::Memory, true);
    assert_eq!(*desc.last().unwrap(), 0);
}
