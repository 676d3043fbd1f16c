//! The page's state and its reducer, in plain Rust (no web import, so `cargo test` covers it).
//!
//! The state is the link (what the URL says), the report the core computed from it once, and the
//! canonical query the page writes back to the address bar. Every change a component asks for is
//! an [`Action`]; [`State::reduce`] gives the next state, or `None` when nothing changed (then
//! nothing is recomputed or rendered). [`Urls`] are the links the page offers for a state, given
//! the page's own address. `app.rs` only wires Yew to this module (and writes [`State::query`]
//! with `history.replaceState`).

use std::rc::Rc;

use crate::calc::{frameworks, Field, Framework, RawInputs, Release, Report};
use crate::query::{self, Link, View};

/// The whole state: the link and the report computed from it.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub link: Link,
    /// `link.inputs`, shared with the components that only read them.
    pub inputs: Rc<RawInputs>,
    /// The link's canonical query (without `?`): what the address bar shows.
    pub query: String,
    pub report: Rc<Report>,
}

/// What a component asks the state to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// One field typed (or a checkbox toggled).
    Set(Field, String),
    /// Several fields at once (an explorer row: its sizes and the accumulation that keeps the batch).
    SetMany(Vec<(Field, String)>),
    /// Another framework: the values carry across by meaning, the release is its newest.
    Framework(Framework),
    /// Another release of the current framework (a `version=` id).
    Release(&'static str),
    /// A pasted config: its framework and inputs replace the current ones (the view stays).
    /// The release stays the one the page shows for the same framework, unless the paste names
    /// one (dpcalc's own export does); another framework starts at its newest.
    Import(Framework, Option<&'static Release>, RawInputs),
    /// The link read again (a query string, with or without `?`): what the first view shows
    /// when the app takes over from it.
    Load(String),
}

impl State {
    /// The state a page loaded with this query string (with or without `?`) starts in.
    pub fn from_query(q: &str) -> Self {
        Self::from_link(query::decode(q))
    }

    /// The state of a link: its report computed once, its canonical query.
    pub fn from_link(link: Link) -> Self {
        let report = Rc::new(link.report());
        let query = query::encode(&link);
        State {
            inputs: Rc::new(link.inputs.clone()),
            link,
            query,
            report,
        }
    }

    /// The link with the release it is computed by written in: an edit keeps the release the
    /// page shows (a fresh page's newest, or the one an old link without `version=` meant).
    fn pinned(&self) -> Link {
        let mut link = self.link.clone();
        link.release = Some(self.link.release());
        link
    }

    /// The state after `action`, or `None` when the action changes nothing (no recomputation,
    /// no render).
    pub fn reduce(&self, action: Action) -> Option<State> {
        match action {
            Action::Set(field, value) => {
                if self.link.inputs.get(field) == value
                    && self.link.inputs.conflict(field).is_none()
                {
                    return None;
                }
                let mut link = self.pinned();
                link.inputs.set(field, value);
                Some(State::from_link(link))
            }
            Action::SetMany(pairs) => {
                let mut link = self.pinned();
                for (field, value) in pairs {
                    link.inputs.set(field, value);
                }
                if link.inputs == self.link.inputs {
                    return None;
                }
                Some(State::from_link(link))
            }
            Action::Framework(fw) => {
                if fw == self.link.framework {
                    return None;
                }
                let mut link = self.link.clone();
                link.inputs = frameworks::carry(link.framework, &link.inputs, fw);
                link.framework = fw;
                // a switch is a new choice: the newest release, written into the link
                link.release = Some(fw.default_release());
                Some(State::from_link(reread(link, &["framework", "version"])))
            }
            Action::Import(fw, named, mut inputs) => {
                keep_cluster(&self.link.inputs, &mut inputs);
                let release = named.unwrap_or_else(|| {
                    if fw == self.link.framework {
                        self.link.release()
                    } else {
                        fw.default_release()
                    }
                });
                let link = Link {
                    framework: fw,
                    release: Some(release),
                    inputs,
                    view: self.link.view,
                    ..Link::default()
                };
                Some(State::from_link(link))
            }
            Action::Release(id) => {
                let mut link = self.link.clone();
                // an id the framework does not have: its newest
                link.release = Some(
                    link.framework
                        .release(id)
                        .unwrap_or_else(|| link.framework.default_release()),
                );
                Some(State::from_link(reread(link, &["version"])))
            }
            Action::Load(q) => {
                let next = State::from_query(&q);
                (next != *self).then_some(next)
            }
        }
    }

    /// The address the page shows for this state, on the page at `base` (its URL without query
    /// and fragment).
    pub fn url(&self, base: &str) -> String {
        url_with(base, &self.query)
    }

    /// The links the page offers for this state, on the page at `base`.
    pub fn urls(&self, base: &str) -> Urls {
        Urls::new(base, &self.link)
    }
}

/// The link as a fresh load of its own canonical query would read it, after a choice in the page
/// replaced `chosen` (a kept unknown `framework=`/`version=` is dropped, not re-read). A kept
/// parameter the new framework knows becomes its input (unless the switch already carried one
/// there), and the notices are those of the new framework.
fn reread(mut link: Link, chosen: &[&str]) -> Link {
    let fw = link.framework;
    link.unknown.retain(|(k, _)| {
        !chosen.contains(&k.as_str()) && fw.field(k).is_none_or(|f| !link.inputs.is_given(f))
    });
    query::decode(&query::encode(&link))
}

/// A config file rarely says the cluster shape: an import keeps each cluster field of `current`
/// that the imported `inputs` leave empty.
pub fn keep_cluster(current: &RawInputs, inputs: &mut RawInputs) {
    for &f in frameworks::CLUSTER {
        if !inputs.is_given(f) && current.is_given(f) {
            inputs.set(f, current.get(f));
        }
    }
}

/// The page at `base` with a query string (already encoded, without `?`).
pub fn url_with(base: &str, q: &str) -> String {
    if q.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{q}")
    }
}

/// A planner row's link: the page for `link` with the plan's assignments, opened on the results
/// rather than the planner (the link alone, nothing computed: the planner computed each plan's
/// report as this link's). The page's plan table and `dpcalc plan` write the same.
pub fn plan_url(base: &str, link: &Link, assignments: &[(Field, String)]) -> String {
    let mut link = link.clone();
    for (f, v) in assignments {
        link.inputs.set(*f, v);
    }
    link.view.plan = false;
    link.view.scale = false;
    url_of(base, &link)
}

/// A scaling row's link: the page for `link` at that row's size (its inputs) with the size's best
/// plan applied, opened on the results; `None` without a plan.
pub fn scale_url(base: &str, link: &Link, row: &crate::calc::scaling::ScaleRow) -> Option<String> {
    let mut link = link.clone();
    link.inputs = row.plan_inputs()?;
    link.view.plan = false;
    link.view.scale = false;
    Some(url_of(base, &link))
}

fn url_of(base: &str, link: &Link) -> String {
    url_with(base, &query::encode(link))
}

/// The links the page offers for the current state.
#[derive(Clone, Debug, PartialEq)]
pub struct Urls {
    /// Reproduces this view: `embed`, `theme` and `readonly` as given.
    pub share: String,
    /// The full calculator in a new tab: same inputs and theme, without embed and readonly.
    pub full: String,
    /// What an iframe should load: this view with `embed=1`.
    pub embed: String,
}

impl Urls {
    /// The links for `link` on the page at `base` (its URL without query and fragment).
    pub fn new(base: &str, link: &Link) -> Urls {
        let view = link.view;
        Urls {
            share: url_of(base, link),
            full: url_of(
                base,
                &link.with_view(View {
                    theme: view.theme,
                    ..View::default()
                }),
            ),
            embed: url_of(
                base,
                &link.with_view(View {
                    embed: true,
                    ..view
                }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }
    use crate::calc::{Level, Num, Output};
    use crate::query::Theme;

    const BASE: &str = "https://example.test/dpcalc/";

    fn state(q: &str) -> State {
        State::from_query(q)
    }

    fn next(s: &State, action: Action) -> State {
        s.reduce(action).expect("the action changes the state")
    }

    fn value(s: &State, o: Output) -> Option<Num> {
        s.report.value(o)
    }

    /// The invariants every state keeps: the shared inputs are the link's, the query is the
    /// link's canonical encoding, and the report is the link's, computed by its release.
    fn consistent(s: &State) {
        assert_eq!(*s.inputs, s.link.inputs);
        assert_eq!(s.query, query::encode(&s.link));
        assert_eq!(*s.report, s.link.report());
    }

    #[test]
    fn a_query_is_read_computed_and_written_canonically() {
        let s = state(
            "?gradient_accumulation_steps=4&nodes=1&micro_batch_size=2&tensor_parallel_size=1",
        );
        consistent(&s);
        // defaults left out, form order
        assert_eq!(
            s.query,
            "version=0.19.0&micro_batch_size=2&gradient_accumulation_steps=4"
        );
        assert_eq!(value(&s, Output::GlobalBatchSize), Some(Num::Int(64)));
        assert_eq!(s.url(BASE), format!("{BASE}?{}", s.query));
        assert_eq!(state("").url(BASE), BASE);
    }

    #[test]
    fn set_recomputes_and_writes_the_query() {
        let s = state("nodes=2&micro_batch_size=2&gradient_accumulation_steps=4");
        assert_eq!(value(&s, Output::DpWorldSize), Some(Num::Int(16)));
        let t = next(&s, Action::Set(Field::TensorParallelSize, "2".into()));
        consistent(&t);
        assert_eq!(t.link.inputs.get(Field::TensorParallelSize), "2");
        assert_eq!(value(&t, Output::DpWorldSize), Some(Num::Int(8)));
        assert_eq!(value(&t, Output::GlobalBatchSize), Some(Num::Int(64)));
        assert_eq!(
            t.query,
            "version=0.19.0&nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4"
        );
        // back to the default: the key leaves the link
        let u = next(&t, Action::Set(Field::TensorParallelSize, "1".into()));
        assert_eq!(u.query, s.query);
        assert_eq!(u.report, s.report);
    }

    #[test]
    fn set_to_the_same_value_changes_nothing() {
        let s = state("micro_batch_size=2");
        assert_eq!(
            s.reduce(Action::Set(Field::MicroBatchSize, "2".into())),
            None
        );
        assert_eq!(
            s.reduce(Action::Set(Field::NumSamples, String::new())),
            None
        );
        // the same digits with a space are another text: kept as typed
        let t = next(&s, Action::Set(Field::MicroBatchSize, "2 ".into()));
        assert_eq!(t.link.inputs.get(Field::MicroBatchSize), "2 ");
    }

    #[test]
    fn set_settles_a_parameter_given_twice() {
        let s = state("micro_batch_size=2&micro_batch_size=3");
        assert_eq!(
            s.link.inputs.conflict(Field::MicroBatchSize),
            Some(&["2".to_string(), "3".to_string()][..])
        );
        assert!(s
            .report
            .diags_for(Field::MicroBatchSize)
            .any(|d| d.level == Level::Error));
        // the field shows empty, yet typing nothing into it still settles the conflict
        assert_eq!(s.link.inputs.get(Field::MicroBatchSize), "");
        let t = next(&s, Action::Set(Field::MicroBatchSize, String::new()));
        assert_eq!(t.link.inputs.conflict(Field::MicroBatchSize), None);
        assert_eq!(t.query, "version=0.19.0");
        let u = next(&s, Action::Set(Field::MicroBatchSize, "3".into()));
        assert_eq!(u.query, "version=0.19.0&micro_batch_size=3");
        assert!(u
            .report
            .diags_for(Field::MicroBatchSize)
            .all(|d| d.level != Level::Error));
    }

    #[test]
    fn a_bad_value_is_kept_as_text_with_an_error_at_its_field() {
        let s = state("micro_batch_size=2&gradient_accumulation_steps=4");
        let t = next(&s, Action::Set(Field::Nodes, "two".into()));
        consistent(&t);
        assert_eq!(t.link.inputs.get(Field::Nodes), "two");
        assert_eq!(
            t.query,
            "version=0.19.0&nodes=two&micro_batch_size=2&gradient_accumulation_steps=4"
        );
        let errors: Vec<_> = t
            .report
            .diags
            .iter()
            .filter(|d| d.level == Level::Error)
            .collect();
        assert!(!errors.is_empty());
        assert!(errors.iter().all(|d| d.field == Field::Nodes), "{errors:?}");
        assert_eq!(value(&t, Output::WorldSize), None);
        // the other inputs still stand
        assert_eq!(t.link.inputs.get(Field::MicroBatchSize), "2");
    }

    #[test]
    fn the_view_and_unknown_parameters_survive_an_edit() {
        let s = state("colour=blue&embed=1&readonly=1&theme=dark&micro_batch_size=2");
        let t = next(&s, Action::Set(Field::NumSamples, "1000".into()));
        assert_eq!(t.link.view, s.link.view);
        assert_eq!(t.link.view.theme, Theme::Dark);
        assert_eq!(
            t.query,
            "version=0.19.0&micro_batch_size=2&num_samples=1000&embed=1&readonly=1&theme=dark&colour=blue"
        );
        assert_eq!(t.link.unknown, vec![("colour".into(), "blue".into())]);
    }

    #[test]
    fn set_many_applies_every_pair_at_once() {
        let s = state("nodes=2&micro_batch_size=2&gradient_accumulation_steps=4");
        let row = vec![
            (Field::TensorParallelSize, "2".to_string()),
            (Field::GradientAccumulationSteps, "8".to_string()),
        ];
        let t = next(&s, Action::SetMany(row.clone()));
        consistent(&t);
        assert_eq!(
            t.query,
            "version=0.19.0&nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=8"
        );
        // the row keeps the global batch: 2 × 8 × 8 = 2 × 4 × 16
        assert_eq!(
            value(&t, Output::GlobalBatchSize),
            value(&s, Output::GlobalBatchSize)
        );
        assert_eq!(value(&t, Output::DpWorldSize), Some(Num::Int(8)));
        // applying the current row again, or nothing, changes nothing
        assert_eq!(t.reduce(Action::SetMany(row)), None);
        assert_eq!(t.reduce(Action::SetMany(Vec::new())), None);
    }

    #[test]
    fn set_many_settles_conflicts_too() {
        let s = state("tensor_parallel_size=2&tensor_parallel_size=4");
        let t = next(
            &s,
            Action::SetMany(vec![(Field::TensorParallelSize, String::new())]),
        );
        assert_eq!(t.link.inputs.conflict(Field::TensorParallelSize), None);
        // nothing is left but the release the link was computed by
        assert_eq!(t.query, "version=0.19.0");
    }

    #[test]
    fn a_framework_switch_carries_the_values_by_meaning() {
        let s = state("nodes=2&tensor_parallel_size=4&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000");
        let m = next(&s, Action::Framework(fw("megatron")));
        consistent(&m);
        assert_eq!(m.link.framework, fw("megatron"));
        assert_eq!(m.link.release, Some(fw("megatron").default_release()));
        assert!(
            m.query.starts_with(&format!(
                "framework=megatron&version={}&nodes=2&",
                fw("megatron").default_release().id
            )),
            "{}",
            m.query
        );
        assert_eq!(m.link.inputs.get(Field::TensorModelParallelSize), "4");
        assert_eq!(m.link.inputs.get(Field::MicroBatchSize), "2");
        assert_eq!(m.link.inputs.get(Field::TensorParallelSize), "");
        assert_eq!(value(&m, Output::DpWorldSize), Some(Num::Int(4)));
        assert!(value(&m, Output::NumMicrobatches).is_some());
        // and back: axolotl's keys come back under its names
        let a = next(&m, Action::Framework(fw("axolotl")));
        assert_eq!(a.link.inputs.get(Field::TensorParallelSize), "4");
        assert!(!a.query.contains("framework="), "{}", a.query);
        assert_eq!(value(&a, Output::DpWorldSize), Some(Num::Int(4)));
        // the same framework again changes nothing
        assert_eq!(a.reduce(Action::Framework(fw("axolotl"))), None);
    }

    #[test]
    fn a_framework_switch_takes_the_newest_release() {
        let s = state("framework=hf&version=4.51&world_size=4");
        assert_eq!(s.link.release().id, "4.51");
        let d = next(&s, Action::Framework(fw("deepspeed")));
        assert_eq!(d.link.release, Some(fw("deepspeed").default_release()));
        assert_eq!(d.link.release().id, fw("deepspeed").default_release().id);
        assert!(
            d.query
                .contains(&format!("version={}", fw("deepspeed").default_release().id)),
            "{}",
            d.query
        );
        let h = next(&d, Action::Framework(fw("hf")));
        assert_eq!(h.link.release().id, fw("hf").default_release().id);
    }

    #[test]
    fn a_framework_switch_drops_stale_notices_and_reads_kept_keys() {
        let s = state("framework=megatron&tensor_parallel_size=4&version=9&colour=blue");
        let noticed: Vec<&str> = s.link.notices.iter().map(|(k, _)| k.as_str()).collect();
        assert!(noticed.contains(&"tensor_parallel_size"), "{noticed:?}");
        assert!(noticed.contains(&"version"), "{noticed:?}");
        let a = next(&s, Action::Framework(fw("axolotl")));
        assert!(
            a.link.notices.is_empty(),
            "stale notices: {:?}",
            a.link.notices
        );
        assert_eq!(a.link.inputs.get(Field::TensorParallelSize), "4");
        assert_eq!(a.link.unknown, vec![("colour".into(), "blue".into())]);
        assert_eq!(
            a.query,
            format!(
                "version={}&tensor_parallel_size=4&colour=blue",
                fw("axolotl").default_release().id
            )
        );
    }

    #[test]
    fn a_value_the_switch_carried_wins_over_a_kept_key() {
        // tensor_model_parallel_size=8 is kept (not an axolotl key); the switch carries
        // tensor_parallel_size=2 there, and the kept 8 is dropped rather than given twice
        let s = state("tensor_parallel_size=2&tensor_model_parallel_size=8");
        assert_eq!(s.link.unknown.len(), 1);
        let m = next(&s, Action::Framework(fw("megatron")));
        assert_eq!(m.link.inputs.get(Field::TensorModelParallelSize), "2");
        assert_eq!(m.link.inputs.conflict(Field::TensorModelParallelSize), None);
        assert!(m.link.unknown.is_empty(), "{:?}", m.link.unknown);
        assert_eq!(
            m.query,
            format!(
                "framework=megatron&version={}&tensor_model_parallel_size=2",
                fw("megatron").default_release().id
            )
        );
    }

    #[test]
    fn a_release_change_is_in_the_link_and_the_report() {
        let q = "framework=hf&world_size=4&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=1001";
        let s = state(q);
        let old = next(&s, Action::Release("4.51"));
        consistent(&old);
        assert_eq!(old.link.release().id, "4.51");
        assert!(old.query.contains("version=4.51"), "{}", old.query);
        assert_eq!(*old.report, fw("hf").compute("4.51", &s.link.inputs));
        assert_eq!(old.link.inputs, s.link.inputs);
        // back to the newest: written into the link
        let newest = fw("hf").default_release().id;
        let new = next(&old, Action::Release(newest));
        assert!(
            new.query.contains(&format!("version={newest}")),
            "{}",
            new.query
        );
        assert_eq!(*new.report, fw("hf").compute(newest, &s.link.inputs));
        // an id the framework does not have: its newest
        let bogus = next(&old, Action::Release("0.0"));
        assert_eq!(bogus.link.release, Some(fw("hf").default_release()));
        assert_eq!(bogus.query, new.query);
    }

    #[test]
    fn a_release_choice_drops_the_kept_unknown_version() {
        let s = state("framework=hf&version=9&world_size=4");
        assert!(s.link.notices.iter().any(|(k, _)| k == "version"));
        assert!(s.link.unknown.iter().any(|(k, _)| k == "version"));
        let t = next(&s, Action::Release("4.51"));
        assert!(t.link.notices.is_empty(), "{:?}", t.link.notices);
        assert!(t.link.unknown.is_empty(), "{:?}", t.link.unknown);
        assert_eq!(t.query, "framework=hf&version=4.51&world_size=4");
    }

    #[test]
    fn an_import_replaces_framework_and_inputs_and_keeps_cluster_and_view() {
        let s = state("nodes=2&micro_batch_size=8&theme=dark&colour=blue&version=0.14.0");
        let mut raw = RawInputs::default();
        raw.set(Field::TrainMicroBatchSizePerGpu, "4");
        raw.set(Field::GradientAccumulationSteps, "2");
        let t = next(&s, Action::Import(fw("deepspeed"), None, raw));
        consistent(&t);
        assert_eq!(t.link.framework, fw("deepspeed"));
        assert_eq!(t.link.release, Some(fw("deepspeed").default_release()));
        // the cluster shape is kept, axolotl's micro_batch_size is not
        assert_eq!(t.link.inputs.get(Field::Nodes), "2");
        assert_eq!(t.link.inputs.get(Field::MicroBatchSize), "");
        assert_eq!(t.link.inputs.get(Field::TrainMicroBatchSizePerGpu), "4");
        assert_eq!(t.link.view.theme, Theme::Dark);
        // a new config: the old link's unknown parameters and notices go
        assert!(t.link.unknown.is_empty());
        assert!(t.link.notices.is_empty());
        assert!(
            t.query
                .starts_with("framework=deepspeed&version=0.19.8&nodes=2&"),
            "{}",
            t.query
        );
        assert!(
            t.query.contains("train_micro_batch_size_per_gpu=4"),
            "{}",
            t.query
        );
        assert!(t.query.ends_with("&theme=dark"), "{}", t.query);
        assert_eq!(value(&t, Output::TrainBatchSize), Some(Num::Int(128)));
    }

    #[test]
    fn an_import_keeps_the_release_the_page_shows_unless_the_paste_names_one() {
        // a 4.51 page stays 4.51 (where --warmup_ratio is accepted), not the newest
        let s = state("framework=hf&version=4.51&per_device_train_batch_size=2");
        let mut raw = RawInputs::default();
        raw.set(Field::PerDeviceTrainBatchSize, "4");
        raw.set(Field::WarmupRatio, "0.1");
        let t = next(&s, Action::Import(fw("hf"), None, raw.clone()));
        consistent(&t);
        assert_eq!(t.link.release, fw("hf").release("4.51"));
        assert!(!t.report.has_errors(), "{:?}", t.report.diags);
        // an old link without version= keeps what it meant
        let old = state("framework=megatron&nodes=2");
        let u = next(
            &old,
            Action::Import(fw("megatron"), None, RawInputs::default()),
        );
        assert_eq!(u.link.release().id, old.link.release().id);
        // a release the paste names wins
        let v = next(&s, Action::Import(fw("hf"), fw("hf").release("4.57"), raw));
        assert_eq!(v.link.release, fw("hf").release("4.57"));
        // another framework starts at its newest
        let w = next(
            &s,
            Action::Import(fw("deepspeed"), None, RawInputs::default()),
        );
        assert_eq!(w.link.release, Some(fw("deepspeed").default_release()));
    }

    #[test]
    fn an_import_that_gives_the_cluster_keeps_its_own() {
        let s = state("nodes=2&gpus_per_node=4");
        let mut raw = RawInputs::default();
        raw.set(Field::Nodes, "4");
        raw.set(Field::MicroBatchSize, "1");
        let t = next(&s, Action::Import(fw("axolotl"), None, raw));
        assert_eq!(t.link.inputs.get(Field::Nodes), "4");
        // what it does not say is kept
        assert_eq!(t.link.inputs.get(Field::GpusPerNode), "4");
        assert_eq!(value(&t, Output::WorldSize), Some(Num::Int(16)));
        // a blank import value does not count as given
        let mut blank = RawInputs::default();
        blank.set(Field::Nodes, "  ");
        let u = next(&s, Action::Import(fw("axolotl"), None, blank));
        assert_eq!(u.link.inputs.get(Field::Nodes), "2");
    }

    #[test]
    fn the_urls_the_page_offers() {
        let s = state("micro_batch_size=2&readonly=1&theme=dark");
        let u = s.urls(BASE);
        assert_eq!(
            u.share,
            format!("{BASE}?version=0.19.0&micro_batch_size=2&readonly=1&theme=dark")
        );
        assert_eq!(
            u.full,
            format!("{BASE}?version=0.19.0&micro_batch_size=2&theme=dark")
        );
        assert_eq!(
            u.embed,
            format!("{BASE}?version=0.19.0&micro_batch_size=2&embed=1&readonly=1&theme=dark")
        );
        assert_eq!(u.share, s.url(BASE));
        let empty = state("").urls(BASE);
        assert_eq!(empty.share, BASE);
        assert_eq!(empty.full, BASE);
        assert_eq!(empty.embed, format!("{BASE}?embed=1"));
        assert_eq!(url_with(BASE, ""), BASE);
        assert_eq!(url_with(BASE, "a=1"), format!("{BASE}?a=1"));
    }
}
