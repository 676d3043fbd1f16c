//! Browser tests: the real page in headless Chromium (wasm-bindgen-test). Each test puts a link
//! in the address bar, mounts the app, and reads the DOM contract (`data-output`, `data-value`,
//! `data-error`, `data-notice`) the way embedders and the end-to-end test do.
#![cfg(target_arch = "wasm32")]

use dpcalc::App;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlInputElement};

wasm_bindgen_test_configure!(run_in_browser);

struct Mounted {
    root: Element,
    handle: Option<yew::AppHandle<App>>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.destroy();
        }
        self.root.remove();
    }
}

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

async fn mount(query: &str) -> Mounted {
    let window = web_sys::window().unwrap();
    let path = window.location().pathname().unwrap();
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    window
        .history()
        .unwrap()
        .replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        .unwrap();
    let root = document().create_element("div").unwrap();
    document().body().unwrap().append_child(&root).unwrap();
    let handle = yew::Renderer::<App>::with_root(root.clone()).render();
    yew::scheduler::flush().await;
    settle().await;
    Mounted {
        root,
        handle: Some(handle),
    }
}

/// Lets the parts the page draws one task later (components/later.rs, run.rs) render.
async fn settle() {
    for _ in 0..4 {
        let wait = js_sys::Promise::new(&mut |resolve, _| {
            web_sys::window()
                .unwrap()
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0)
                .unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(wait).await.unwrap();
        yew::scheduler::flush().await;
    }
}

impl Mounted {
    fn q(&self, selector: &str) -> Option<Element> {
        self.root.query_selector(selector).unwrap()
    }

    fn value(&self, output: &str) -> Option<String> {
        let el = self
            .q(&format!("[data-output=\"{output}\"]"))
            .unwrap_or_else(|| panic!("no {output} element"));
        el.get_attribute("data-value")
    }

    fn input(&self, key: &str) -> HtmlInputElement {
        self.q(&format!("#in-{key}")).unwrap().dyn_into().unwrap()
    }

    async fn type_into(&self, key: &str, text: &str) {
        let input = self.input(key);
        input.set_value(text);
        let init = web_sys::InputEventInit::new();
        init.set_bubbles(true);
        let ev = web_sys::InputEvent::new_with_event_init_dict("input", &init).unwrap();
        input.dispatch_event(&ev).unwrap();
        yew::scheduler::flush().await;
    }
}

/// The newest release of a framework (what a switch of framework writes into the link).
fn newest(id: &str) -> &'static str {
    dpcalc::calc::Framework::from_id(id)
        .unwrap()
        .default_release()
        .id
}

fn search() -> String {
    web_sys::window().unwrap().location().search().unwrap()
}

#[wasm_bindgen_test]
async fn renders_the_values_of_a_link() {
    let page = mount("world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").await;
    assert_eq!(page.value("world_size").as_deref(), Some("4"));
    assert_eq!(page.value("dp_world_size").as_deref(), Some("2"));
    assert_eq!(page.value("global_batch_size").as_deref(), Some("16"));
    assert_eq!(page.value("total_num_steps").as_deref(), Some("63"));
    assert_eq!(
        page.value("legacy_global_batch_size").as_deref(),
        Some("32")
    );
    let share = page.value("share_url").unwrap();
    // a link without version= means the release such links always meant, and now says it
    assert!(share.ends_with("?version=0.19.0&world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000"), "{share}");
}

#[wasm_bindgen_test]
async fn typing_updates_results_and_the_url() {
    let page = mount("nodes=2&micro_batch_size=2&gradient_accumulation_steps=4").await;
    assert_eq!(page.value("total_num_steps"), None); // no num_samples yet
    assert!(page.q("[data-hint=\"num_samples\"]").is_some());
    page.type_into("num_samples", "10000").await;
    assert_eq!(page.value("global_batch_size").as_deref(), Some("128"));
    assert_eq!(page.value("total_num_steps").as_deref(), Some("79"));
    assert!(search().contains("num_samples=10000"), "{}", search());
    page.type_into("tensor_parallel_size", "2").await;
    assert_eq!(page.value("global_batch_size").as_deref(), Some("64"));
    assert_eq!(page.value("total_num_steps").as_deref(), Some("157"));
    assert!(search().contains("tensor_parallel_size=2"));
    // clearing a field drops it from the link and restores the default
    page.type_into("tensor_parallel_size", "").await;
    assert!(!search().contains("tensor_parallel_size"));
    assert_eq!(page.value("global_batch_size").as_deref(), Some("128"));
}

#[wasm_bindgen_test]
async fn a_link_with_every_input_round_trips() {
    let every = "nodes=2&gpus_per_node=4&world_size=8&tensor_parallel_size=2&context_parallel_size=2\
        &micro_batch_size=1&gradient_accumulation_steps=8&num_samples=123456&num_epochs=2.5&max_steps=900\
        &sequence_len=4096&sample_packing=true&sample_packing_eff_est=0.93&total_num_tokens=987654321\
        &warmup_steps=10&val_set_size=0.05&evals_per_epoch=3&saves_per_epoch=2";
    // batch_size and warmup_ratio exclude GA and warmup_steps; they round-trip in a second link
    let page = mount(every).await;
    let first: Vec<Option<String>> = outputs().iter().map(|o| page.value(o)).collect();
    assert_eq!(search(), format!("?version=0.19.0&{every}"));
    for key in [
        "nodes",
        "world_size",
        "num_epochs",
        "sample_packing_eff_est",
        "saves_per_epoch",
    ] {
        assert!(
            !page.input(key).value().is_empty() || key == "sample_packing",
            "{key}"
        );
    }
    drop(page);
    let again = mount(&search()[1..]).await;
    let second: Vec<Option<String>> = outputs().iter().map(|o| again.value(o)).collect();
    assert_eq!(first, second);
    assert_eq!(again.value("total_num_steps").as_deref(), Some("900"));
    drop(again);
    let other = "micro_batch_size=2&batch_size=16&num_samples=1000&warmup_ratio=0.1";
    let page = mount(other).await;
    assert_eq!(search(), format!("?version=0.19.0&{other}"));
    assert!(page.q("[data-warning=\"batch_size\"]").is_some());
}

fn outputs() -> [&'static str; 13] {
    [
        "world_size",
        "dp_world_size",
        "gradient_accumulation_steps",
        "global_batch_size",
        "total_num_steps",
        "max_steps",
        "steps_per_epoch",
        "warmup_steps",
        "eval_steps",
        "save_steps",
        "tokens_per_step",
        "legacy_global_batch_size",
        "legacy_total_num_steps",
    ]
}

#[wasm_bindgen_test]
async fn bad_values_are_field_errors_and_the_rest_computes() {
    let page = mount("nodes=two&micro_batch_size=2&micro_batch_size=4&num_samples=1000&gradient_accumulation_steps=1.5&colour=blue").await;
    let err = page.q("[data-error=\"nodes\"]").expect("error at nodes");
    assert_eq!(err.get_attribute("role").as_deref(), Some("alert"));
    assert_eq!(
        page.input("nodes").get_attribute("aria-invalid").as_deref(),
        Some("true")
    );
    let described = page
        .input("nodes")
        .get_attribute("aria-describedby")
        .unwrap();
    assert!(described
        .split(' ')
        .any(|id| Some(id.to_string()) == err.get_attribute("id")));
    // the bad text is kept in the field and in the link
    assert_eq!(page.input("nodes").value(), "two");
    assert!(search().contains("nodes=two"));
    let dup = page
        .q("[data-error=\"micro_batch_size\"]")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(dup.contains('2') && dup.contains('4'), "{dup}");
    assert!(page
        .q("[data-error=\"gradient_accumulation_steps\"]")
        .is_some());
    assert!(page.q("[data-notice=\"colour\"]").is_some());
    assert!(search().contains("colour=blue"));
    // world_size needs nodes: no value; the parallelism group still renders and tokens need the batch
    assert_eq!(page.value("world_size"), None);
    assert_eq!(page.value("global_batch_size"), None);
    // fixing the field clears the error
    page.type_into("nodes", "2").await;
    assert!(page.q("[data-error=\"nodes\"]").is_none());
    assert_eq!(page.value("world_size").as_deref(), Some("16"));
}

#[wasm_bindgen_test]
async fn a_refusal_offers_one_click_fixes() {
    // tensor_parallel_size 4 does not divide 6 GPUs: the error at the field offers the nearest
    // sizes that do, as buttons under it
    let page = mount("world_size=6&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&tensor_parallel_size=4").await;
    let err = page
        .q("[data-error=\"tensor_parallel_size\"]")
        .expect("error at tensor_parallel_size");
    assert_eq!(err.get_attribute("role").as_deref(), Some("alert"));
    let described = page
        .input("tensor_parallel_size")
        .get_attribute("aria-describedby")
        .unwrap();
    assert!(described
        .split(' ')
        .any(|id| Some(id.to_string()) == err.get_attribute("id")));
    let button: web_sys::HtmlElement = page
        .q("button[data-fix=\"tensor_parallel_size\"]")
        .expect("a fix button")
        .dyn_into()
        .unwrap();
    let label = button.text_content().unwrap();
    assert!(label.starts_with("Use tensor_parallel_size = 3"), "{label}");
    // the world_size refusal offers other world sizes
    assert!(page
        .q("button[data-fix=\"world_size\"][data-fix-set=\"world_size=8\"]")
        .is_some());
    button.click();
    yew::scheduler::flush().await;
    settle().await;
    assert!(page.q("[data-error=\"tensor_parallel_size\"]").is_none());
    assert!(page.q("[data-error]").is_none());
    assert!(page.q("button[data-fix]").is_none());
    assert_eq!(page.input("tensor_parallel_size").value(), "3");
    assert!(search().contains("tensor_parallel_size=3"), "{}", search());
    // the fix keeps the global batch of 8 (gradient accumulation 2 with dp 2)
    assert_eq!(page.value("global_batch_size").as_deref(), Some("8"));
}

#[wasm_bindgen_test]
async fn an_error_that_does_not_name_its_field_shows_the_key() {
    // torchtitan's product message names dp_shard, not the key
    let page = mount("framework=torchtitan&world_size=10&data_parallel_replicate_degree=2&data_parallel_shard_degree=2&tensor_parallel_degree=2").await;
    let err = page
        .q("[data-error=\"data_parallel_shard_degree\"]")
        .expect("error at data_parallel_shard_degree");
    let key = err
        .query_selector("code.key")
        .unwrap()
        .expect("the key in front");
    assert_eq!(key.text_content().unwrap(), "data_parallel_shard_degree");
    // a message that names its key has no prefix
    let ws = page
        .q("[data-error=\"world_size\"]")
        .expect("error at world_size");
    assert!(ws.query_selector("code.key").unwrap().is_none());
}

#[wasm_bindgen_test]
async fn hostile_values_are_text() {
    let page = mount("nodes=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&%3Cscript%3E=1").await;
    assert!(page.q("img").is_none());
    assert!(page.q("script").is_none());
    assert!(page
        .q("[data-error=\"nodes\"]")
        .unwrap()
        .text_content()
        .unwrap()
        .contains("<img"));
    assert_eq!(page.value("dp_world_size"), None);
    assert_eq!(page.value("tokens_per_step"), None);
}

#[wasm_bindgen_test]
async fn embed_readonly_and_theme() {
    let page = mount("nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000&embed=1&readonly=1&theme=dark").await;
    assert!(page.q("header.top").is_none(), "embed=1 has no page chrome");
    assert!(page.q(".legacy").is_none() && page.q(".explain").is_none());
    assert!(page.input("nodes").read_only());
    assert!(
        page.q("#in-sequence_len").is_none(),
        "only key inputs (and given ones) in embed"
    );
    assert_eq!(page.value("max_steps").as_deref(), Some("1954"));
    let root = document().document_element().unwrap();
    assert_eq!(root.get_attribute("data-theme").as_deref(), Some("dark"));
    let full = page.value("full_url").unwrap();
    assert!(full.ends_with("?version=0.19.0&nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000&theme=dark"), "{full}");
    let share = page.value("share_url").unwrap();
    assert!(share.ends_with("&embed=1&readonly=1&theme=dark"), "{share}");
    // a field with a message is shown even when it is not a key input
    drop(page);
    let page = mount("embed=1&sequence_len=0").await;
    assert!(page.q("[data-error=\"sequence_len\"]").is_some());
    drop(page);
    let page = mount("theme=light").await;
    assert_eq!(
        document()
            .document_element()
            .unwrap()
            .get_attribute("data-theme")
            .as_deref(),
        Some("light")
    );
    assert!(!page.input("nodes").read_only());
    assert!(page.q("header.top").is_some());
}

#[wasm_bindgen_test]
async fn embed_button_shows_snippets_for_the_state() {
    let page = mount("nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000").await;
    assert!(page.q("[data-snippet]").is_none());
    let button: web_sys::HtmlElement = page
        .root
        .query_selector_all(".share button")
        .unwrap()
        .item(1)
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(button.text_content().as_deref(), Some("Embed"));
    button.click();
    yew::scheduler::flush().await;
    let text = |id: &str| -> String {
        let area: web_sys::HtmlTextAreaElement =
            page.q(&format!("#{id}")).unwrap().dyn_into().unwrap();
        area.value()
    };
    assert_eq!(
        text("snippet-text"),
        "16×8 GPUs, TP 8 → dp 16, global batch 256, 1,954 steps"
    );
    let iframe = text("snippet-iframe");
    assert!(
        iframe.starts_with("<iframe class=\"dpcalc\" src=\"http"),
        "{iframe}"
    );
    assert!(
        iframe.contains("num_samples=500000&amp;embed=1\""),
        "{iframe}"
    );
    assert!(
        iframe.contains("allow=\"clipboard-write\"")
            && iframe.contains("title=\"dpcalc: 16×8 GPUs")
    );
    let md = text("snippet-markdown");
    assert!(
        md.starts_with("[dpcalc: 16×8 GPUs, TP 8 → dp 16, global batch 256, 1,954 steps](http"),
        "{md}"
    );
    assert!(!md.contains("embed=1"));
    // the snippets follow the state
    page.type_into("tensor_parallel_size", "4").await;
    assert_eq!(
        text("snippet-text"),
        "16×8 GPUs, TP 4 → dp 32, global batch 512, 977 steps"
    );
}

#[wasm_bindgen_test]
async fn embed_offers_a_summary_card_to_download() {
    let page = mount("nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000").await;
    assert!(
        page.q("[data-card]").is_none(),
        "the card comes with the Embed dialog"
    );
    let button: web_sys::HtmlElement = page
        .root
        .query_selector_all(".share button")
        .unwrap()
        .item(1)
        .unwrap()
        .dyn_into()
        .unwrap();
    button.click();
    yew::scheduler::flush().await;
    let section = page.q("[data-card]").expect("the summary card section");
    assert!(section
        .text_content()
        .unwrap()
        .contains("Summary card (SVG)"));
    let link = page
        .q("[data-card] a[data-card-download][download=\"dpcalc-card.svg\"]")
        .expect("the download link");
    let href = link.get_attribute("href").unwrap();
    let prefix = "data:image/svg+xml;charset=utf-8,";
    assert!(href.starts_with(prefix), "{href}");
    let svg: String = js_sys::decode_uri_component(&href[prefix.len()..])
        .unwrap()
        .into();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.ends_with("</svg>"));
    let global = page.value("global_batch_size").unwrap();
    assert_eq!(global, "256");
    assert!(svg.contains(&format!(">{global}</text>")), "{svg}");
    assert!(svg.contains(">1,954</text>") && svg.contains("prefers-color-scheme: dark"));
    // the preview shows the same picture inline, in the SVG namespace, without its style element
    let preview = page
        .q("[data-card] .card-preview svg")
        .expect("the preview");
    assert!(preview.query_selector("style").unwrap().is_none());
    assert!(preview.text_content().unwrap().contains("256"));
    assert_eq!(
        preview.namespace_uri().as_deref(),
        Some("http://www.w3.org/2000/svg")
    );
    // the Markdown links the committed picture to these inputs
    let md: web_sys::HtmlTextAreaElement = page
        .q("[data-card] [data-card-markdown]")
        .unwrap()
        .dyn_into()
        .unwrap();
    let share = page.value("share_url").unwrap();
    assert_eq!(
        md.value(),
        format!("[![dpcalc: axolotl 0.19.0 → 128 GPUs, dp 16, global batch 256, 1,954 steps](dpcalc-card.svg)]({share})")
    );
    // the card follows the state
    page.type_into("tensor_parallel_size", "4").await;
    let href = page
        .q("a[data-card-download]")
        .unwrap()
        .get_attribute("href")
        .unwrap();
    let svg: String = js_sys::decode_uri_component(&href[prefix.len()..])
        .unwrap()
        .into();
    assert!(svg.contains(">512</text>"), "{svg}");
}

#[wasm_bindgen_test]
async fn a_crash_keeps_the_link_and_offers_a_reset() {
    let _page = mount("nodes=2&x=%3Cb%3Ehi%3C%2Fb%3E").await;
    let before = web_sys::window().unwrap().location().href().unwrap();
    dpcalc::app::show_crash();
    let notice = document()
        .query_selector("[data-crash]")
        .unwrap()
        .expect("crash notice");
    assert_eq!(notice.get_attribute("role").as_deref(), Some("alert"));
    let kept: HtmlInputElement = notice
        .query_selector("input")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(kept.value(), before);
    let reset = notice
        .query_selector("a")
        .unwrap()
        .unwrap()
        .get_attribute("href")
        .unwrap();
    assert!(!reset.contains('?'), "{reset}");
    assert!(
        notice.query_selector("b").unwrap().is_none(),
        "link text is never parsed as HTML"
    );
    notice.remove();
}

impl Mounted {
    async fn choose(&self, id: &str, value: &str) {
        let select: web_sys::HtmlSelectElement =
            self.q(&format!("#{id}")).unwrap().dyn_into().unwrap();
        select.set_value(value);
        let init = web_sys::EventInit::new();
        init.set_bubbles(true);
        let ev = web_sys::Event::new_with_event_init_dict("change", &init).unwrap();
        select.dispatch_event(&ev).unwrap();
        yew::scheduler::flush().await;
    }
}

#[wasm_bindgen_test]
async fn switching_framework_carries_the_values_and_the_link() {
    let page = mount("nodes=2&tensor_parallel_size=4&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").await;
    page.choose("in-framework", "megatron").await;
    assert!(
        search().starts_with(&format!(
            "?framework=megatron&version={}&nodes=2&",
            newest("megatron")
        )),
        "{}",
        search()
    );
    assert_eq!(page.input("tensor_model_parallel_size").value(), "4");
    assert_eq!(page.input("micro_batch_size").value(), "2");
    assert!(page.q("#in-tensor_parallel_size").is_none());
    assert_eq!(page.value("dp_world_size").as_deref(), Some("4"));
    assert!(page.q("[data-output=\"num_microbatches\"]").is_some());
    // and back: the keys axolotl has come back under its names
    page.choose("in-framework", "axolotl").await;
    assert_eq!(page.input("tensor_parallel_size").value(), "4");
    assert!(!search().contains("framework="), "{}", search());
}

#[wasm_bindgen_test]
async fn the_version_choice_is_in_the_link() {
    let page = mount("framework=hf&world_size=4&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=1001").await;
    let newest = page.value("max_steps");
    assert!(newest.is_some());
    page.choose("in-version", "4.51").await;
    assert!(search().contains("version=4.51"), "{}", search());
    let select: web_sys::HtmlSelectElement = page.q("#in-version").unwrap().dyn_into().unwrap();
    assert_eq!(select.value(), "4.51");
}

#[wasm_bindgen_test]
async fn an_old_link_keeps_its_release_and_says_so() {
    // links without version= were made when 0.19.0 was axolotl's default: they keep it
    let page =
        mount("world_size=8&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000")
            .await;
    let select: web_sys::HtmlSelectElement = page.q("#in-version").unwrap().dyn_into().unwrap();
    assert_eq!(select.value(), "0.19.0");
    let note = page
        .q("[data-notice=\"unversioned\"]")
        .expect("the picker says so");
    assert!(note.text_content().unwrap().contains(newest("axolotl")));
    // an edit writes the release into the link, and the note goes
    page.type_into("num_samples", "2000").await;
    assert!(search().starts_with("?version=0.19.0&"), "{}", search());
    assert!(page.q("[data-notice=\"unversioned\"]").is_none());
    // a fresh page is the newest
    drop(page);
    let fresh = mount("").await;
    let select: web_sys::HtmlSelectElement = fresh.q("#in-version").unwrap().dyn_into().unwrap();
    assert_eq!(select.value(), newest("axolotl"));
    assert!(fresh.q("[data-notice=\"unversioned\"]").is_none());
}

#[wasm_bindgen_test]
async fn compare_shows_every_framework_and_marks_differences() {
    let page = mount("world_size=8&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").await;
    assert!(
        page.q(".compare-table").is_none(),
        "computed only when open"
    );
    let details: web_sys::HtmlDetailsElement =
        page.q("details.compare").unwrap().dyn_into().unwrap();
    details.set_open(true);
    let ev = web_sys::Event::new("toggle").unwrap();
    details.dispatch_event(&ev).unwrap();
    yew::scheduler::flush().await;
    let cells = page
        .root
        .query_selector_all("[data-compare-row=\"dp_world_size\"] td")
        .unwrap();
    assert_eq!(cells.length(), 6);
    let axolotl = page
        .q("[data-compare-row=\"global_batch_size\"] td[data-compare=\"axolotl\"]")
        .unwrap();
    assert_eq!(axolotl.get_attribute("data-value").as_deref(), Some("32"));
    // DeepSpeed counts every rank (no mpu), so its dp differs from axolotl's 4
    let ds = page
        .q("[data-compare-row=\"dp_world_size\"] td[data-compare=\"deepspeed\"]")
        .unwrap();
    assert!(ds.get_attribute("data-value").is_some());
}

impl Mounted {
    /// Clicks the Import button and lets the page render.
    async fn click_import(&self) {
        let button: web_sys::HtmlElement =
            self.q(".import-row button").unwrap().dyn_into().unwrap();
        button.click();
        yew::scheduler::flush().await;
    }

    async fn paste(&self, text: &str) {
        let area: web_sys::HtmlTextAreaElement =
            self.q("#import-text").unwrap().dyn_into().unwrap();
        area.set_value(text);
        let init = web_sys::InputEventInit::new();
        init.set_bubbles(true);
        let ev = web_sys::InputEvent::new_with_event_init_dict("input", &init).unwrap();
        area.dispatch_event(&ev).unwrap();
        yew::scheduler::flush().await;
    }
}

async fn open_details(page: &Mounted, selector: &str) {
    let details: web_sys::HtmlDetailsElement = page.q(selector).unwrap().dyn_into().unwrap();
    details.set_open(true);
    details
        .dispatch_event(&web_sys::Event::new("toggle").unwrap())
        .unwrap();
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn export_gives_the_framework_config_for_the_state() {
    let page = mount("nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").await;
    assert!(page.q("[data-export]").is_none(), "computed only when open");
    open_details(&page, "details.config").await;
    let text = page
        .q("[data-export=\"yaml\"]")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(text.contains("tensor_parallel_size: 2"), "{text}");
    assert!(text.contains("micro_batch_size: 2"), "{text}");
    page.choose("in-framework", "megatron").await;
    let text = page
        .q("[data-export=\"sh\"]")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(text.contains("--tensor-model-parallel-size 2"), "{text}");
    assert!(text.contains("--micro-batch-size 2"), "{text}");
}

#[wasm_bindgen_test]
async fn import_fills_the_form_and_lists_what_it_ignored() {
    let page = mount("nodes=2").await;
    open_details(&page, "details.config").await;
    page.paste(r#"{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 3, "overlap_comm": true}}"#).await;
    page.click_import().await;
    assert!(
        search().starts_with(&format!(
            "?framework=deepspeed&version={}&nodes=2&",
            newest("deepspeed")
        )),
        "{}",
        search()
    );
    assert_eq!(page.input("train_micro_batch_size_per_gpu").value(), "4");
    assert_eq!(page.input("gradient_accumulation_steps").value(), "2");
    let ignored = page
        .q("[data-import-ignored]")
        .unwrap()
        .get_attribute("data-import-ignored")
        .unwrap();
    // the ZeRO stage is read (the model stage's input); what dpcalc does not read is listed
    let stage: HtmlInputElement = document()
        .get_element_by_id("in-zero_optimization.stage")
        .expect("the ZeRO stage field")
        .dyn_into()
        .unwrap();
    assert_eq!(stage.value(), "3");
    assert!(
        ignored.contains("zero_optimization.overlap_comm"),
        "{ignored}"
    );
    // a broken paste is an error and changes nothing
    page.paste("{\"train_batch_size\": ").await;
    page.click_import().await;
    assert!(page.q("[data-import-error]").is_some());
    assert!(
        search().contains("train_micro_batch_size_per_gpu=4"),
        "{}",
        search()
    );
}

#[wasm_bindgen_test]
async fn an_import_applies_what_it_read_and_keeps_the_release() {
    let page = mount("framework=hf&version=4.51&per_device_train_batch_size=2").await;
    open_details(&page, "details.config").await;
    // 4.51 accepts warmup_ratio: the page stays at 4.51 rather than the newest, which refuses it
    page.paste(r#"{"per_device_train_batch_size": 4, "warmup_ratio": 0.1, "output_dir": "o"}"#)
        .await;
    page.click_import().await;
    assert!(
        search().starts_with("?framework=hf&version=4.51&"),
        "{}",
        search()
    );
    assert_eq!(page.input("per_device_train_batch_size").value(), "4");
    assert!(
        page.q("[data-error]").is_none(),
        "4.51 accepts warmup_ratio"
    );
    // one "auto" value: the rest applies, the error names the one left empty
    page.paste(r#"{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}"#)
        .await;
    page.click_import().await;
    assert!(
        search().starts_with("?framework=deepspeed&"),
        "{}",
        search()
    );
    assert_eq!(page.input("train_micro_batch_size_per_gpu").value(), "4");
    assert!(page.q("[data-import-error]").is_some());
    let summary = page
        .q("[data-import-applied]")
        .expect("the import's summary");
    assert_eq!(
        summary.get_attribute("data-import-applied").as_deref(),
        Some("true")
    );
    assert!(
        summary
            .text_content()
            .unwrap_or_default()
            .contains("1 could not be read"),
        "{:?}",
        summary.text_content()
    );
    // a malformed text applies nothing, and says so
    page.paste("micro_batch_size: 2\ngradient_accumulation_steps: [4\n")
        .await;
    page.click_import().await;
    let summary = page
        .q("[data-import-applied]")
        .expect("the import's summary");
    assert_eq!(
        summary.get_attribute("data-import-applied").as_deref(),
        Some("false")
    );
    assert!(
        search().starts_with("?framework=deepspeed&"),
        "{}",
        search()
    );
}

#[wasm_bindgen_test]
async fn a_kept_key_becomes_an_input_when_its_framework_is_chosen() {
    let page = mount("framework=megatron&tensor_parallel_size=4&version=9").await;
    assert!(page.q("[data-notice=\"tensor_parallel_size\"]").is_some());
    assert!(page.q("[data-notice=\"version\"]").is_some());
    page.choose("in-framework", "axolotl").await;
    assert_eq!(page.input("tensor_parallel_size").value(), "4");
    assert!(page.q("[data-notice]").is_none(), "stale notices");
    // the unknown version= is gone; the switch wrote the newest release
    assert_eq!(
        search(),
        format!("?version={}&tensor_parallel_size=4", newest("axolotl"))
    );
}

/// A newcomer's case: Llama-3.1-70B, 8 × H100, axolotl with ZeRO-3. The page shows
/// the parameters, DeepSpeed's model states, the estimated memory per GPU with its parts and what
/// the runtime adds on the device against the GPU, the warning that it does not fit, the FLOPs by convention and, with an MFU, the time.
#[wasm_bindgen_test]
async fn the_model_panel_answers_will_it_fit() {
    let page = mount("version=0.21.0&base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&mfu=0.4&zero_optimization.stage=3&micro_batch_size=1&num_samples=1000&sequence_len=4096").await;
    assert_eq!(page.value("num_parameters").as_deref(), Some("70553706496"));
    assert!(page.value("zero_model_states_gpu_bytes").is_some());
    assert_eq!(
        page.value("gpu_memory_bytes").as_deref(),
        Some("80000000000")
    );
    let total: u128 = page.value("memory_per_gpu_bytes").unwrap().parse().unwrap();
    let parts: u128 = [
        "weights_bytes",
        "gradients_bytes",
        "optimizer_bytes",
        "activation_bytes",
    ]
    .iter()
    .map(|o| page.value(o).unwrap().parse::<u128>().unwrap())
    .sum();
    assert_eq!(total, parts);
    // on the device: the tensors, the allocator's rounding (reserved, not allocated: the fifth
    // part) and the CUDA context and the communicators' buffers (the sixth; the same bar natively:
    // tests/reserved_memory.rs)
    let device: u128 = page
        .value("memory_on_device_bytes")
        .unwrap()
        .parse()
        .unwrap();
    assert!(device > total);
    assert_eq!(
        page.root
            .query_selector_all(".membar rect.part")
            .unwrap()
            .length(),
        6
    );
    let warning = page
        .q("[data-warning=\"memory\"]")
        .expect("a memory warning");
    assert!(warning.text_content().unwrap().contains("does not fit"));
    for o in [
        "flops_per_token",
        "flops_per_token_hf",
        "flops_per_token_megatron",
        "flops_per_token_torchtitan",
        "flops_per_token_nanotron",
        "peak_tflops",
        "tokens_per_second_per_gpu",
        "time_per_step_seconds",
    ] {
        assert!(page.value(o).is_some(), "{o}");
    }
    // the architecture group stays folded until something in it is used
    let arch = page
        .q("details.architecture")
        .expect("the architecture group");
    assert!(!arch.has_attribute("open"));
    // folded, its fields are not built; opened, they are
    assert!(page.q("#in-hidden_size").is_none());
    arch.set_attribute("open", "").unwrap();
    settle().await;
    assert!(
        page.q("#in-hidden_size").is_some(),
        "the opened group shows its fields"
    );
    // a model that fits says so instead
    drop(page);
    let page = mount("version=0.21.0&base_model=meta-llama/Llama-3.2-1B&gpu=h100-sxm&micro_batch_size=1&num_samples=100").await;
    assert!(page.q("[data-warning=\"memory\"]").is_none());
    assert!(page.q(".fit [data-fits=\"true\"]").is_some());
    // no model: a hint instead of numbers
    drop(page);
    let page = mount("micro_batch_size=1").await;
    assert!(page.q("[data-hint=\"model\"]").is_some());
}

/// The first visit: a value that cannot be computed says what it needs (data-needs, the
/// framework's label), the summary follows the results, the other release's box waits for the
/// user's own inputs, and the examples are complete links.
#[wasm_bindgen_test]
async fn the_first_visit_says_what_the_rest_needs() {
    let page = mount("").await;
    let steps = page.q("[data-output=\"total_num_steps\"]").unwrap();
    assert_eq!(steps.get_attribute("data-value"), None);
    assert_eq!(
        steps.get_attribute("data-needs").as_deref(),
        Some("num_samples")
    );
    assert_eq!(steps.text_content().as_deref(), Some("needs Training rows"));
    assert!(
        page.q(".legacy").is_none(),
        "no other-release box on the bare page"
    );
    let bar = page.q("[data-summary-bar]").expect("the summary");
    assert!(bar.query_selector("[data-output]").unwrap().is_none());
    let gb = page.q("[data-summary=\"global_batch_size\"]").unwrap();
    assert_eq!(gb.get_attribute("data-value").as_deref(), Some("8"));
    let max = page.q("[data-summary=\"max_steps\"]").unwrap();
    assert_eq!(max.text_content().as_deref(), Some("needs Training rows"));
    let examples = page.root.query_selector_all("a[data-example]").unwrap();
    assert!(examples.length() >= 3);
    for i in 0..examples.length() {
        let href = examples
            .item(i)
            .unwrap()
            .dyn_into::<Element>()
            .unwrap()
            .get_attribute("href")
            .unwrap();
        assert!(href.contains("?") && href.contains("version="), "{href}");
    }
    // typing the rows computes the steps, in the results and the summary
    page.type_into("num_samples", "1000").await;
    assert_eq!(page.value("total_num_steps").as_deref(), Some("125"));
    let max = page.q("[data-summary=\"max_steps\"]").unwrap();
    assert_eq!(max.get_attribute("data-value").as_deref(), Some("125"));
    // an error shows in the summary with a link to its field
    page.type_into("nodes", "two").await;
    let err = page
        .q("[data-summary=\"error\"] a")
        .expect("the error in the summary");
    assert_eq!(err.get_attribute("href").as_deref(), Some("#in-nodes"));
}

#[wasm_bindgen_test]
async fn the_other_release_box_says_why_it_matters() {
    let page = mount("version=0.19.0&world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000").await;
    let why = page
        .q(".legacy [data-legacy-why]")
        .expect("the box, with its reason");
    assert!(why.text_content().unwrap().contains("global batch"));
    assert_eq!(
        page.value("legacy_global_batch_size").as_deref(),
        Some("32")
    );
}

#[wasm_bindgen_test]
async fn a_pasted_torchtitan_toml_switches_the_framework() {
    let page = mount("micro_batch_size=2").await;
    open_details(&page, "details.config").await;
    page.paste(
        "[job]\ndump_folder = \"./outputs\"\n\n[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 2\n\n\
         [training]\nlocal_batch_size = 4\nseq_len = 4096\nsteps = 500\n",
    )
    .await;
    page.click_import().await;
    assert!(page.q("[data-import-error]").is_none());
    assert!(
        page.q("[data-import-framework=\"torchtitan\"]").is_some(),
        "the import's framework"
    );
    assert!(
        search().starts_with("?framework=torchtitan&"),
        "{}",
        search()
    );
    assert_eq!(page.input("tensor_parallel_degree").value(), "2");
    // 8 GPUs, tp 2: dp 4 × local batch 4 = 16; the job table is listed as ignored
    assert_eq!(page.value("global_batch_size").as_deref(), Some("16"));
    assert_eq!(page.value("max_steps").as_deref(), Some("500"));
    let ignored = page
        .q("[data-import-ignored]")
        .unwrap()
        .get_attribute("data-import-ignored")
        .unwrap();
    assert_eq!(ignored, "job");
    // a text that is no config: one sentence, nothing changes
    page.paste("hello, this is not a config").await;
    page.click_import().await;
    let error = page
        .q("[data-import-error]")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(
        error.starts_with("This does not look like a config"),
        "{error}"
    );
    assert!(
        search().contains("tensor_parallel_degree=2"),
        "{}",
        search()
    );
}

/// The planner's table renders the view model's rows (`calc::view::plan_rows`, which `dpcalc plan`
/// prints): each row's `data-plan-row` attributes and cells are the view model's, in rank order,
/// and its link is `state::plan_url`'s for the page's link.
#[wasm_bindgen_test]
async fn the_planner_renders_the_view_models_rows() {
    use dpcalc::calc::{planner, view};
    let q = "framework=megatron&version=0.19.2&world_size=8&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=16&seq_length=4096&micro_batch_size=1&train_iters=100&view=plan";
    let page = mount(q).await;
    for _ in 0..20_000 {
        if page.q("[data-plan][data-compute-ms]").is_some() {
            break;
        }
        settle().await;
    }
    assert!(
        page.q("[data-plan][data-compute-ms]").is_some(),
        "the ranking never ended"
    );
    let state = dpcalc::state::State::from_query(q);
    let ranked = planner::rank(state.link.framework, state.link.release().id, &state.inputs);
    let rows = view::plan_rows(&ranked);
    assert!(!rows.is_empty(), "{:?}", ranked.note);
    let trs = page.root.query_selector_all("[data-plan-row]").unwrap();
    assert_eq!(trs.length() as usize, rows.len());
    let base = dpcalc::web::base_url();
    for (i, (row, plan)) in rows.iter().zip(&ranked.rows).enumerate() {
        let tr: Element = trs.item(i as u32).unwrap().dyn_into().unwrap();
        for (name, attr) in row.attributes() {
            assert_eq!(
                tr.get_attribute(name),
                Some(attr.to_string()),
                "row {i}: {name}"
            );
        }
        let tds = tr.query_selector_all("td").unwrap();
        for (j, cell) in row.cells().iter().enumerate() {
            let td = tds.item(j as u32).unwrap();
            assert_eq!(
                td.text_content().as_deref(),
                Some(cell.as_str()),
                "row {i} cell {j}"
            );
        }
        let href = tr
            .query_selector("a[href]")
            .unwrap()
            .and_then(|a| a.get_attribute("href"));
        assert_eq!(
            href,
            Some(dpcalc::state::plan_url(
                &base,
                &state.link,
                &plan.assignments
            )),
            "row {i}"
        );
    }
}

/// A file chosen in `input#import-file` or dropped on the text area is read in the browser and
/// imported at once, the text area left as it was.
#[wasm_bindgen_test]
async fn a_chosen_or_dropped_file_is_imported() {
    let page = mount("nodes=2").await;
    open_details(&page, "details.config").await;
    let file = |text: &str, name: &str| {
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
        web_sys::File::new_with_str_sequence(&parts, name).unwrap()
    };
    // chosen
    let transfer = web_sys::DataTransfer::new().unwrap();
    transfer
        .items()
        .add_with_file(&file(
            r#"{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}"#,
            "ds_config.json",
        ))
        .unwrap();
    let input: HtmlInputElement = page.q("#import-file").unwrap().dyn_into().unwrap();
    input.set_files(transfer.files().as_ref());
    input
        .dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    for _ in 0..50 {
        if search().contains("train_micro_batch_size_per_gpu=4") {
            break;
        }
        settle().await;
    }
    assert_eq!(page.input("train_micro_batch_size_per_gpu").value(), "4");
    assert!(
        search().starts_with("?framework=deepspeed&"),
        "{}",
        search()
    );
    let area: web_sys::HtmlTextAreaElement = page.q("#import-text").unwrap().dyn_into().unwrap();
    assert_eq!(area.value(), "");
    // dropped on the text area
    let transfer = web_sys::DataTransfer::new().unwrap();
    transfer
        .items()
        .add_with_file(&file(
            "micro_batch_size: 3\ngradient_accumulation_steps: 5\n",
            "train.yml",
        ))
        .unwrap();
    let init = web_sys::DragEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_data_transfer(Some(&transfer));
    let drop = web_sys::DragEvent::new_with_event_init_dict("drop", &init).unwrap();
    area.dispatch_event(&drop).unwrap();
    assert!(
        drop.default_prevented(),
        "the browser does not open the file"
    );
    for _ in 0..50 {
        if search().contains("micro_batch_size=3") {
            break;
        }
        settle().await;
    }
    // axolotl's YAML: the default framework, which the link does not name
    assert!(!search().contains("framework="), "{}", search());
    assert!(
        search().contains("&micro_batch_size=3&gradient_accumulation_steps=5"),
        "{}",
        search()
    );
}
