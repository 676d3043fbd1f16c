//! Browser tests of the layout explorer, the GPU map and the tokens/time section, each mounted
//! directly (not through the page) in a harness that applies an explorer row to its inputs the
//! way the page does.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use dpcalc::calc::{Field, Framework, RawInputs};
use dpcalc::components::{explored, GpuMap, LayoutExplorer, TokensTime};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

#[derive(Properties, PartialEq)]
struct HarnessProps {
    pairs: Vec<(Field, String)>,
}

#[function_component(Harness)]
fn harness(props: &HarnessProps) -> Html {
    let raw = use_state(|| {
        Rc::new(RawInputs::from_pairs(
            props.pairs.iter().map(|(f, v)| (*f, v.as_str())),
        ))
    });
    let fw = Framework::Axolotl;
    let report = Rc::new(fw.compute("0.19.0", &raw));
    let on_apply = {
        let raw = raw.clone();
        Callback::from(move |a: Vec<(Field, String)>| {
            let mut r = (**raw).clone();
            for (f, v) in a {
                r.set(f, v);
            }
            raw.set(Rc::new(r));
        })
    };
    // the run section computes the explorer in its own task; here, in the render
    let explored = explored(fw, "0.19.0", &raw);
    html! {
        <>
            <LayoutExplorer framework={fw} release="0.19.0" inputs={(*raw).clone()} {explored} {on_apply} />
            <GpuMap framework={fw} inputs={(*raw).clone()} report={report.clone()} />
            <TokensTime framework={fw} inputs={(*raw).clone()} {report} />
        </>
    }
}

struct Mounted {
    root: Element,
    handle: Option<yew::AppHandle<Harness>>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.destroy();
        }
        self.root.remove();
    }
}

async fn mount(pairs: &[(Field, &str)]) -> Mounted {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let props = HarnessProps {
        pairs: pairs.iter().map(|(f, v)| (*f, v.to_string())).collect(),
    };
    let handle = yew::Renderer::<Harness>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    Mounted {
        root,
        handle: Some(handle),
    }
}

impl Mounted {
    fn q(&self, sel: &str) -> Option<Element> {
        self.root.query_selector(sel).unwrap()
    }

    fn count(&self, sel: &str) -> u32 {
        self.root.query_selector_all(sel).unwrap().length()
    }
}

#[wasm_bindgen_test]
async fn map_of_one_node_with_tp_and_cp_groups() {
    let m = mount(&[
        (Field::TensorParallelSize, "2"),
        (Field::ContextParallelSize, "2"),
    ])
    .await;
    assert_eq!(m.count("svg.map .gpu"), 8);
    assert_eq!(m.count("svg.map .tp-group"), 4);
    assert_eq!(m.count("svg.map .cp-group"), 4);
    // accelerate's order (dp, cp, tp), tp fastest: rank 5 = dp 1, cp 0, tp 1
    let g = m.q("[data-rank=\"5\"]").unwrap();
    assert_eq!(g.get_attribute("data-dp").as_deref(), Some("1"));
    assert_eq!(g.get_attribute("data-cp").as_deref(), Some("0"));
    assert_eq!(g.get_attribute("data-tp").as_deref(), Some("1"));
    assert_eq!(g.get_attribute("tabindex").as_deref(), Some("0"));
    assert!(g.query_selector("title").unwrap().is_some());
    assert!(m.q("[data-warning=\"tp-crosses-node\"]").is_none());
    assert!(m.q(".legend").is_some());
}

#[wasm_bindgen_test]
async fn map_flags_tp_across_nodes_and_summarises_large_clusters() {
    let m = mount(&[
        (Field::Nodes, "2"),
        (Field::GpusPerNode, "4"),
        (Field::TensorParallelSize, "8"),
    ])
    .await;
    assert!(m.q("[data-warning=\"tp-crosses-node\"]").is_some());
    assert_eq!(m.count("svg.map .tp-group"), 1);
    drop(m);
    let m = mount(&[(Field::Nodes, "128")]).await;
    assert_eq!(m.count("svg.map .gpu"), 8);
    assert!(m.q("[data-summary]").is_some());
}

#[wasm_bindgen_test]
async fn clicking_an_explorer_row_applies_it() {
    let m = mount(&[
        (Field::MicroBatchSize, "2"),
        (Field::GradientAccumulationSteps, "4"),
        (Field::NumSamples, "1000"),
    ])
    .await;
    assert_eq!(m.count("tr[data-layout]"), 10);
    let current = m.q("tr[aria-current=\"true\"]").unwrap();
    assert_eq!(
        current.get_attribute("data-layout").as_deref(),
        Some("tensor_parallel_size=1&context_parallel_size=1")
    );
    let row: HtmlElement = m
        .q("tr[data-layout=\"tensor_parallel_size=4&context_parallel_size=2\"]")
        .unwrap()
        .dyn_into()
        .unwrap();
    row.click();
    yew::scheduler::flush().await;
    let current = m.q("tr[aria-current=\"true\"]").unwrap();
    assert_eq!(
        current.get_attribute("data-layout").as_deref(),
        Some("tensor_parallel_size=4&context_parallel_size=2")
    );
    // the batch is kept: dp 1, GA 4 × 8 = 32, batch 64; the map follows
    assert_eq!(m.count("svg.map .tp-group"), 2);
    assert_eq!(m.count("svg.map .cp-group"), 4);
    let ga = current
        .query_selector("td:nth-child(4) [data-value]")
        .unwrap()
        .unwrap();
    assert_eq!(ga.get_attribute("data-value").as_deref(), Some("32"));
    // sorting by dp descending puts dp 8 first
    let sort: HtmlElement = m.q("th:nth-child(3) button").unwrap().dyn_into().unwrap();
    sort.click();
    yew::scheduler::flush().await;
    sort.click();
    yew::scheduler::flush().await;
    let first = m.q("tbody tr").unwrap();
    assert_eq!(
        first.get_attribute("data-layout").as_deref(),
        Some("tensor_parallel_size=1&context_parallel_size=1")
    );
}

/// With a model and a GPU every row carries its estimated memory per GPU and whether it fits;
/// the "only layouts that fit" checkbox hides the rows that do not.
#[wasm_bindgen_test]
async fn explorer_rows_carry_memory_and_the_fits_filter_hides_the_rest() {
    let m = mount(&[
        (Field::BaseModel, "meta-llama/Llama-3.1-8B"),
        (Field::Gpu, "a100-40gb"),
        (Field::MicroBatchSize, "1"),
        (Field::NumSamples, "1000"),
    ])
    .await;
    assert_eq!(m.count("tr[data-layout]"), 10);
    assert_eq!(m.count("tr[data-layout][data-memory-bytes]"), 10);
    assert_eq!(m.count("tr[data-layout][data-fits]"), 10);
    // Llama-3.1-8B replicated on one 40 GB GPU's worth of memory: tp 1 does not fit
    let over = m
        .q("tr[data-layout=\"tensor_parallel_size=1&context_parallel_size=1\"]")
        .unwrap();
    assert_eq!(over.get_attribute("data-fits").as_deref(), Some("false"));
    let bytes: u128 = over
        .get_attribute("data-memory-bytes")
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes > 40_000_000_000, "{bytes}");
    assert!(over.text_content().unwrap().contains("over by "));
    let fitting = m.count("tr[data-layout][data-fits=\"true\"]");
    assert!(fitting > 0 && fitting < 10, "{fitting}");
    let fits = m.q("tr[data-fits=\"true\"]").unwrap();
    assert!(fits.text_content().unwrap().contains("fits"));
    // the filter
    let filter: HtmlElement = m.q("input#explorer-fits").unwrap().dyn_into().unwrap();
    filter.click();
    yew::scheduler::flush().await;
    assert_eq!(m.count("tr[data-layout]"), fitting);
    assert_eq!(m.count("tr[data-layout][data-fits=\"false\"]"), 0);
    assert!(m
        .q("tr[data-layout=\"tensor_parallel_size=1&context_parallel_size=1\"]")
        .is_none());
    filter.click();
    yew::scheduler::flush().await;
    assert_eq!(m.count("tr[data-layout]"), 10);
    drop(m);
    // without a GPU: memory, but no fits mark and no filter
    let m = mount(&[(Field::BaseModel, "meta-llama/Llama-3.1-8B")]).await;
    assert_eq!(m.count("tr[data-layout][data-memory-bytes]"), 10);
    assert_eq!(m.count("tr[data-fits]"), 0);
    assert!(m.q("input#explorer-fits").is_none());
}

#[wasm_bindgen_test]
async fn tokens_and_timeline() {
    let m = mount(&[
        (Field::NumSamples, "1000"),
        (Field::NumEpochs, "3"),
        (Field::SequenceLen, "4096"),
        (Field::SecondsPerStep, "2"),
    ])
    .await;
    // batch 8, 125 steps per epoch, 375 steps: 8 × 4096 × 125 tokens per epoch
    let e = m.q("[data-output=\"tokens_per_epoch\"]").unwrap();
    assert_eq!(e.get_attribute("data-value").as_deref(), Some("4096000"));
    assert!(e.text_content().unwrap().contains("4.1 M"));
    let t = m.q("[data-output=\"total_time_seconds\"]").unwrap();
    assert_eq!(t.get_attribute("data-value").as_deref(), Some("750.0"));
    assert_eq!(m.count("[data-mark=\"epoch\"]"), 3);
    assert_eq!(m.count("[data-mark=\"warmup\"]"), 1);
}

/// On the bare inputs the tokens-and-time values and the explorer's cells say what
/// they need, never a bare dash.
#[wasm_bindgen_test]
async fn missing_values_say_what_they_need() {
    let m = mount(&[]).await;
    let t = m.q("[data-output=\"total_time_seconds\"]").unwrap();
    assert_eq!(t.get_attribute("data-value"), None);
    assert_eq!(
        t.get_attribute("data-needs").as_deref(),
        Some("tokens_per_second_per_gpu seconds_per_step num_samples")
    );
    assert!(t.text_content().unwrap().starts_with("needs "));
    let e = m.q("[data-output=\"tokens_per_epoch\"]").unwrap();
    assert_eq!(e.text_content().unwrap(), "needs Training rows");
    assert!(m.count(".layouts td .missing") > 0);
    let list = m.root.query_selector_all(".layouts td").unwrap();
    for i in 0..list.length() {
        let text = list.item(i).unwrap().text_content().unwrap();
        assert_ne!(text.trim(), "\u{2014}");
    }
}

/// A long table is cut to its first rows plus the current layout's, with a note and a button
/// that draws them all (65,536 GPUs: axolotl has 153 layouts of tensor and context sizes).
#[wasm_bindgen_test]
async fn a_long_explorer_is_cut_and_shows_all_on_demand() {
    let m = mount(&[
        (Field::WorldSize, "65536"),
        (Field::TensorParallelSize, "32768"),
        (Field::NumSamples, "100000"),
    ])
    .await;
    let shown = dpcalc::components::EXPLORER_ROWS as u32;
    // the first rows, then the current layout (late in the order) after them
    assert_eq!(m.count("tr[data-layout]"), shown + 1);
    let current = m
        .q("tr[aria-current=\"true\"]")
        .expect("the current row is drawn");
    assert_eq!(
        current.get_attribute("data-layout").as_deref(),
        Some("tensor_parallel_size=32768&context_parallel_size=1")
    );
    let note = m.q(".explorer-cut").unwrap().text_content().unwrap();
    assert!(note.contains(&format!("first {shown} of 153")), "{note}");
    let button: HtmlElement = m.q("button[data-show-all]").unwrap().dyn_into().unwrap();
    assert_eq!(
        button.text_content().as_deref(),
        Some("Show all 153 layouts")
    );
    button.click();
    yew::scheduler::flush().await;
    assert_eq!(m.count("tr[data-layout]"), 153);
    assert!(m.q(".explorer-cut").is_none());
}
