//! The first view (`src/first.rs`) writes `page::Page` as HTML: every result with its exact value,
//! every field with its text and messages, the embedded and read-only layouts, and nothing from a
//! link read as HTML. (That it equals the Yew app's page is the end-to-end test
//! `tests/e2e/first.mjs`, for every link of `tests/links.txt`.)

use dpcalc::calc::card::escape as esc;
use dpcalc::calc::guide;
use dpcalc::calc::{Framework, Level};
use dpcalc::first::render;
use dpcalc::page::Page;
use dpcalc::state::{Action, State};

const BASE: &str = "https://docs.example/dpcalc/";

fn page(q: &str) -> (State, String) {
    let state = State::from_query(q);
    let html = render(&Page::new(&state, BASE));
    (state, html)
}

/// The element `<dd data-output=NAME …>` as written.
fn output<'a>(html: &'a str, name: &str) -> &'a str {
    let at = html
        .find(&format!("data-output=\"{name}\""))
        .unwrap_or_else(|| panic!("no {name}"));
    let end = html[at..].find('>').expect("a closed tag") + at;
    &html[at..end]
}

#[test]
fn every_result_of_every_framework_is_written_with_its_exact_value() {
    let links = [
        "nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000",
        "framework=hf&world_size=8&per_device_train_batch_size=4&gradient_accumulation_steps=3&num_samples=1001",
        "framework=deepspeed&world_size=8&train_batch_size=64&train_micro_batch_size_per_gpu=2",
        "framework=megatron&world_size=2&micro_batch_size=8&global_batch_size=16&train_samples=1000",
        "framework=torchtitan&world_size=4&local_batch_size=8&global_batch_size=64",
        "framework=nanotron&world_size=8&dp=4&tp=2&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=100",
    ];
    for q in links {
        let (state, html) = page(q);
        let fw = state.link.framework;
        for &o in fw.outputs() {
            // the outputs of a feature the link does not use are not written at all
            if !guide::applies(fw, &state.inputs, &state.report, o) {
                assert!(
                    !html.contains(&format!("data-output=\"{}\"", o.name())),
                    "{q}"
                );
                continue;
            }
            let tag = output(&html, o.name());
            match state.report.value(o) {
                Some(v) => assert!(
                    tag.contains(&format!("data-value=\"{}\"", esc(&v.raw()))),
                    "{q}: {tag}"
                ),
                None => assert!(!tag.contains("data-value"), "{q}: {tag}"),
            }
        }
        assert!(
            state
                .report
                .value(dpcalc::calc::Output::GlobalBatchSize)
                .is_some(),
            "{q}"
        );
        for field in fw.fields() {
            if !state.link.inputs.get(field).is_empty() {
                assert!(html.contains(&format!("id=\"in-{}\"", field.key())), "{q}");
            }
        }
    }
}

#[test]
fn messages_are_written_at_their_fields_with_their_level() {
    let q = "world_size=6&tensor_parallel_size=4&micro_batch_size=2&num_samples=abc&foo=1";
    let (state, html) = page(q);
    let errors: Vec<_> = state
        .report
        .diags
        .iter()
        .filter(|d| d.level == Level::Error)
        .collect();
    assert!(errors.len() >= 2);
    for d in errors {
        let key = d.field.key();
        assert!(
            html.contains(&format!("data-error=\"{key}\" role=\"alert\"")),
            "{key}"
        );
        assert!(html.contains(&esc(&d.message)), "{}", d.message);
        assert!(html.contains("field invalid"), "{key}");
    }
    assert!(html.contains("data-notice=\"foo\""));
    assert!(html.contains("class=\"sum-error\""));
}

#[test]
fn nothing_from_a_link_is_read_as_html() {
    let p = "%3Cimg%20src%3Dx%20onerror%3D%22alert(1)%22%3E%22%27";
    let q = format!("num_samples={p}&{p}={p}&theme={p}&micro_batch_size=2");
    let (_, html) = page(&q);
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("onerror=\""), "{html}");
    assert!(html.contains("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&quot;&apos;"));
    assert_eq!(
        esc("<a href=\"x\">&'"),
        "&lt;a href=&quot;x&quot;&gt;&amp;&apos;"
    );
}

#[test]
fn the_embedded_and_read_only_layouts() {
    let (state, html) = page("nodes=2&micro_batch_size=2&num_samples=1000&embed=1&readonly=1");
    assert!(html.starts_with("<main class=\"page embed\">"));
    assert!(!html.contains("<header"));
    let urls = state.urls(BASE);
    assert!(html.contains(&format!(
        "data-output=\"full_url\" data-value=\"{}\"",
        esc(&urls.full)
    )));
    assert!(html.contains(&format!(
        "data-output=\"share_url\" data-value=\"{}\"",
        esc(&urls.share)
    )));
    assert!(html.contains("id=\"in-nodes\" name=\"nodes\" value=\"2\""));
    assert!(html.contains(" readonly=\"\""));
    assert!(html.contains("<select id=\"in-framework\" name=\"framework\" disabled=\"\">"));
    // the compact form: the key fields and what is given, not every field
    let (_, full) = page("nodes=2&micro_batch_size=2&num_samples=1000");
    assert!(full.matches("class=\"field").count() > html.matches("class=\"field").count());
    assert!(!full.contains(" readonly=\"\""));
    assert!(full.contains("<header class=\"top\">"));
}

#[test]
fn a_flag_is_checked_as_the_framework_reads_it() {
    let (_, html) = page("sample_packing=Yes&micro_batch_size=1");
    let at = html.find("id=\"in-sample_packing\"").expect("the flag");
    let tag = &html[html[..at].rfind('<').unwrap()..at + html[at..].find('>').unwrap()];
    assert!(
        tag.contains("type=\"checkbox\"") && tag.contains("checked"),
        "{tag}"
    );
}

#[test]
fn the_app_reads_the_link_again_when_the_first_view_hands_over() {
    let state = State::from_query("nodes=2&micro_batch_size=2");
    // the link unchanged: nothing to do (an old link keeps its meaning and its note)
    assert_eq!(
        state.reduce(Action::Load("?nodes=2&micro_batch_size=2".into())),
        None
    );
    assert!(state.link.unversioned_note().is_some());
    // typed in the first view meanwhile: the app takes that link
    let typed = state
        .reduce(Action::Set(dpcalc::calc::Field::MicroBatchSize, "4".into()))
        .expect("a change");
    let next = state
        .reduce(Action::Load(typed.query.clone()))
        .expect("a change");
    assert_eq!(next, typed);
    assert_eq!(next.link.framework, Framework::default());
}

#[test]
fn a_link_that_names_no_model_gets_nothing_from_the_model_resolution() {
    use dpcalc::calc::{Field, Report};
    // the first views stop the model stage before `resolve` exactly when `names_model` is false:
    // then `resolve` must find nothing and say nothing, whatever else the link gives
    let values = [
        "",
        "1",
        "2",
        "0",
        "-1",
        "8",
        "4096",
        "1.5",
        "true",
        "abc",
        "meta-llama/Llama-3.1-8B",
        "llama",
    ];
    let mut named = 0;
    for &fw in Framework::ALL {
        for field in fw.fields().chain([Field::WorldSize, Field::Nodes]) {
            for v in values {
                for twice in [false, true] {
                    let mut q = format!("framework={}&{}={}", fw.id(), field.key(), v);
                    if twice {
                        q.push_str(&format!("&{}=3", field.key()));
                    }
                    let raw = dpcalc::query::decode(&q).inputs;
                    let mut report = Report::default();
                    let resolved =
                        dpcalc::calc::parse::model::resolve(fw.spec(), &raw, &mut report).is_some();
                    if dpcalc::calc::parse::model::names_model(fw.spec(), &raw) {
                        named += 1;
                    } else {
                        assert!(!resolved, "{q}: a model without a model key");
                        assert_eq!(report, Report::default(), "{q}: resolve spoke");
                    }
                }
            }
        }
    }
    assert!(named > 0);
    // and a model key does name one
    let raw = dpcalc::query::decode("base_model=meta-llama/Llama-3.1-8B").inputs;
    assert!(dpcalc::calc::parse::model::names_model(
        Framework::default().spec(),
        &raw
    ));
}

/// The folded architecture group, opened by the user in the first view, is drawn with
/// its fields (`static/boot.js` renders again with `opened`); folded, it holds none.
#[test]
fn the_architecture_group_opens_with_its_fields() {
    let state = State::from_query("nodes=2&micro_batch_size=2");
    let folded = render(&Page::new(&state, BASE));
    let opened = render(&Page::opened(&state, BASE, true));
    let group = |html: &str| -> String {
        let at = html
            .find("<details class=\"group architecture\"")
            .expect("the architecture group");
        let end = html[at..].find("</details>").unwrap() + at;
        html[at..end].to_string()
    };
    assert!(!group(&folded).contains("<input"), "{}", group(&folded));
    assert!(group(&opened).contains(" open=\"\""));
    assert!(
        group(&opened).contains("id=\"in-hidden_size\""),
        "{}",
        group(&opened)
    );
    // the rest of the page is the same
    assert_eq!(
        folded.replace(&group(&folded), ""),
        opened.replace(&group(&opened), "")
    );
}
