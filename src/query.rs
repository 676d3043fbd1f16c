//! The link format: the query string is the state.
//!
//! This is the only module that knows URL parameter names. `framework=` picks the framework
//! (absent: axolotl) and `version=` its release (absent: the newest modelled); every other
//! parameter is one of that framework's config keys ([`Field`]), e.g.
//! `?framework=megatron&nodes=2&tensor_model_parallel_size=2`. Another framework's key is kept
//! with a notice, never read. Decoding never loses what the
//! user wrote: a bad value is kept as text (the core reports it at its field), a parameter given
//! twice keeps every value (an error at that field), and an unknown parameter is kept and carried
//! into every re-shared link, so a link made by a newer dpcalc survives an edit by an older one.
//! Parsing and escaping are serde_urlencoded's (form_urlencoded), not hand-written.
//!
//! The schema is versioned: `v` absent means 1, and links leave `v` out while it is 1. A renamed
//! parameter keeps its old name as an alias forever (each framework's `Spec::link_aliases`);
//! `tests/links.txt` holds links
//! in every accepted form with what they must decode to.

use crate::calc::{Field, Framework, RawInputs, Release};

/// The schema version this build writes and reads.
pub const VERSION: u32 = 1;

/// How the page is shown; not an input of the calculation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// The view parameters: `embed=1`, `theme=light|dark|auto`, `readonly=1`, `view=plan` (the page
/// opens on the planner) or `view=scale` (on the scaling view; one `view` at a time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub embed: bool,
    pub readonly: bool,
    pub theme: Theme,
    pub plan: bool,
    pub scale: bool,
}

/// A decoded link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// `framework=`; absent means axolotl.
    pub framework: Framework,
    /// `version=`; absent means the framework's newest modelled release.
    pub release: Option<&'static Release>,
    pub inputs: RawInputs,
    pub view: View,
    /// Parameters dpcalc does not know, in their original order, with their values. They are
    /// carried into every re-shared link unchanged.
    pub unknown: Vec<(String, String)>,
    /// Things about the link itself worth telling the user (a newer schema version, a view
    /// parameter with a value dpcalc does not read), as `(parameter, message)`.
    pub notices: Vec<(String, String)>,
}

fn flag_value(v: &str) -> Option<bool> {
    match v {
        "1" | "true" => Some(true),
        "0" | "false" | "" => Some(false),
        _ => None,
    }
}

/// Decodes a query string, with or without its leading `?`. Never fails: undecodable escapes
/// become U+FFFD, as form_urlencoded does.
pub fn decode(query: &str) -> Link {
    let query = query.strip_prefix('?').unwrap_or(query);
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
    let mut link = Link::default();
    // The framework decides what every other key means, wherever it stands in the query.
    let mut frameworks = pairs.iter().filter(|(k, _)| k == "framework");
    if let Some((_, id)) = frameworks.next() {
        match Framework::from_id(id) {
            Some(f) if frameworks.next().is_none() => link.framework = f,
            _ => link.notices.push((
                "framework".into(),
                format!(
                    "framework={} is not a framework dpcalc knows ({}); axolotl is shown.",
                    crate::calc::parse::shorten(id),
                    Framework::ALL
                        .iter()
                        .map(|f| f.id())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
    let framework = link.framework;
    let frameworks_ok = !link.notices.iter().any(|(k, _)| k == "framework");
    let mut seen: Vec<(Field, Vec<String>)> = Vec::new();
    for (key, value) in pairs {
        if key == "framework" {
            // read above when it is the only one and known; otherwise kept for a newer dpcalc
            if !(frameworks_ok && value == framework.id()) {
                link.unknown.push((key, value));
            }
            continue;
        }
        let field = framework.field(&key).or_else(|| {
            framework
                .spec()
                .link_aliases
                .iter()
                .find(|(a, _)| *a == key)
                .map(|&(_, f)| f)
        });
        match field {
            Some(field) => match seen.iter_mut().find(|(f, _)| *f == field) {
                Some((_, values)) => values.push(value),
                None => seen.push((field, vec![value])),
            },
            None => {
                if !link.read_view(&key, &value) {
                    if Field::ALL.iter().any(|f| f.key() == key) {
                        link.notices.push((
                            key.clone(),
                            format!(
                                "{key} is not a {} setting; it is ignored (and kept in the link).",
                                framework.name()
                            ),
                        ));
                    }
                    link.unknown.push((key, value));
                }
            }
        }
    }
    for (field, mut values) in seen {
        // An empty repeat (`a=1&a=`) adds nothing a user could mean.
        values.retain(|v| !v.is_empty());
        match values.len() {
            0 => {}
            1 => link.inputs.set(field, values.pop().unwrap_or_default()),
            _ => link.inputs.set_conflict(field, values),
        }
    }
    link
}

impl Link {
    /// Reads a view or schema parameter; false when `key` is not one.
    fn read_view(&mut self, key: &str, value: &str) -> bool {
        let ok = match key {
            "embed" => flag_value(value).map(|b| self.view.embed = b).is_some(),
            "readonly" => flag_value(value).map(|b| self.view.readonly = b).is_some(),
            "view" => match value {
                "plan" => {
                    (self.view.plan, self.view.scale) = (true, false);
                    true
                }
                "scale" => {
                    (self.view.plan, self.view.scale) = (false, true);
                    true
                }
                _ => false,
            },
            "theme" => match value {
                "auto" => Some(Theme::Auto),
                "light" => Some(Theme::Light),
                "dark" => Some(Theme::Dark),
                _ => None,
            }
            .map(|t| self.view.theme = t)
            .is_some(),
            "version" => {
                let releases = self.framework.releases();
                match self.framework.release(value) {
                    Some(r) => {
                        self.release = Some(r);
                        return true;
                    }
                    None => {
                        let known: Vec<&str> = releases.iter().map(|r| r.id).collect();
                        let shown = self
                            .framework
                            .release(self.framework.spec().unversioned)
                            .unwrap_or(&releases[0]);
                        self.notices.push((
                            key.into(),
                            format!(
                                "version={} is not a {} release dpcalc models ({}); {} is shown.",
                                crate::calc::parse::shorten(value),
                                self.framework.name(),
                                known.join(", "),
                                shown.id
                            ),
                        ));
                        self.unknown.push((key.into(), value.into()));
                        return true;
                    }
                }
            }
            "v" => {
                if value.parse::<u32>().is_ok_and(|v| v > VERSION) {
                    self.notices.push((
                        key.into(),
                        format!("This link was made by a newer dpcalc (schema v{value}); it is read as v{VERSION}, and parameters this version does not know are kept."),
                    ));
                    // kept so the newer version reads it back the same way
                    self.unknown.push((key.into(), value.into()));
                    return true;
                }
                value.parse::<u32>().is_ok()
            }
            _ => return false,
        };
        if !ok {
            self.notices.push((
                key.into(),
                format!("{key}={value} is not a value dpcalc reads; it is ignored."),
            ));
        }
        true
    }

    /// Computes the report this link describes.
    pub fn report(&self) -> crate::calc::Report {
        self.framework.compute(self.release().id, &self.inputs)
    }

    /// The release whose rules apply: the link's `version=`; without one, the release such
    /// links have always meant (`Spec::unversioned`: links carry their version since
    /// 2026-12-03, so a link without one was made before, when that was the default), except
    /// for a link that states nothing (a fresh page), which gets the newest.
    pub fn release(&self) -> &'static Release {
        self.release.unwrap_or_else(|| {
            if self.states_something() {
                self.framework
                    .release(self.framework.spec().unversioned)
                    .unwrap_or_else(|| self.framework.default_release())
            } else {
                self.framework.default_release()
            }
        })
    }

    /// Whether the link says anything about a run: a framework, an input, or a parameter dpcalc
    /// does not know (view parameters alone do not).
    pub fn states_something(&self) -> bool {
        self.framework != Framework::default()
            || self.inputs.given().next().is_some()
            || Field::ALL
                .iter()
                .any(|&f| self.inputs.conflict(f).is_some())
            || !self.unknown.is_empty()
    }

    /// What the version picker says when a link without `version=` is computed by an older
    /// release than the newest.
    pub fn unversioned_note(&self) -> Option<String> {
        let (used, newest) = (self.release(), self.framework.default_release());
        (self.release.is_none() && used.id != newest.id).then(|| {
            format!(
                "This link has no version=: it is computed by {} {}, what links without a version have \
                 always meant. The newest release dpcalc models is {}.",
                self.framework.name(),
                used.label,
                newest.label
            )
        })
    }

    /// The same link with other view parameters.
    pub fn with_view(&self, view: View) -> Link {
        Link {
            view,
            ..self.clone()
        }
    }
}

/// Whether a given text is the value dpcalc assumes when the parameter is absent, so the link
/// can leave it out: `nodes`/`gpus_per_node` at their defaults without a `world_size` (they are
/// checked against it when present), and what the framework's `Spec::link_default` names (only
/// fields whose presence means nothing by itself: axolotl's validators count
/// `micro_batch_size`, `gradient_accumulation_steps` and `batch_size` when they are present).
fn is_default(framework: Framework, inputs: &RawInputs, field: Field, text: &str) -> bool {
    let text = text.trim();
    match field {
        Field::Nodes => text == "1" && inputs.get(Field::WorldSize).is_empty(),
        Field::GpusPerNode => text == "8" && inputs.get(Field::WorldSize).is_empty(),
        _ => (framework.spec().link_default)(field, text),
    }
}

/// The canonical query string (without `?`): known fields in form order, defaults left out,
/// then unknown parameters as they came.
pub fn encode(link: &Link) -> String {
    let inputs = &link.inputs;
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let framework = link.framework;
    if framework != Framework::default() {
        pairs.push(("framework", framework.id()));
    }
    // Every link that states something carries its release, so a later default never changes
    // what it computes (a fresh page states nothing and needs none).
    // (An unreadable version= is kept among the unknown parameters instead, as it came.)
    if link.release.is_some()
        || (link.states_something() && !link.unknown.iter().any(|(k, _)| k == "version"))
    {
        pairs.push(("version", link.release().id));
    }
    for field in framework.fields() {
        if let Some(values) = inputs.conflict(field) {
            pairs.extend(values.iter().map(|v| (field.key(), v.as_str())));
            continue;
        }
        let text = inputs.get(field);
        if !text.trim().is_empty() && !is_default(framework, inputs, field, text) {
            pairs.push((field.key(), text));
        }
    }
    let view = link.view;
    if view.embed {
        pairs.push(("embed", "1"));
    }
    if view.readonly {
        pairs.push(("readonly", "1"));
    }
    if view.theme != Theme::Auto {
        pairs.push(("theme", view.theme.name()));
    }
    if view.scale {
        pairs.push(("view", "scale"));
    } else if view.plan {
        pairs.push(("view", "plan"));
    }
    pairs.extend(link.unknown.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    serde_urlencoded::to_string(&pairs).unwrap_or_default()
}

/// The one-click examples (`calc::guide::examples`) as `(label, query)`: each a complete link
/// with its `version=`, written by [`encode`] so it reads back as the same configuration.
pub fn example_links() -> Vec<(&'static str, String)> {
    crate::calc::guide::examples()
        .into_iter()
        .map(|ex| {
            let link = Link {
                framework: ex.framework,
                release: ex.framework.release(ex.release),
                inputs: ex.inputs,
                ..Link::default()
            };
            (ex.label, encode(&link))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }

    #[test]
    fn decodes_known_unknown_and_repeated() {
        let link = decode("?nodes=2&foo=bar&micro_batch_size=2&micro_batch_size=4&num_epochs=1.5");
        assert_eq!(link.inputs.get(Field::Nodes), "2");
        assert_eq!(link.inputs.get(Field::NumEpochs), "1.5");
        assert_eq!(link.inputs.get(Field::MicroBatchSize), "");
        assert_eq!(
            link.inputs.conflict(Field::MicroBatchSize),
            Some(&["2".to_string(), "4".to_string()][..])
        );
        assert_eq!(link.unknown, vec![("foo".to_string(), "bar".to_string())]);
    }

    #[test]
    fn encodes_canonically_and_round_trips() {
        let link = decode("foo=bar&tensor_parallel_size=1&nodes=2&micro_batch_size=2&micro_batch_size=4&num_samples=x%20y");
        let q = encode(&link);
        assert_eq!(
            q,
            "version=0.19.0&nodes=2&micro_batch_size=2&micro_batch_size=4&num_samples=x+y&foo=bar"
        );
        assert_eq!(decode(&q), decode(&encode(&decode(&q))));
    }

    #[test]
    fn keeps_nodes_when_world_size_is_given() {
        let link = decode("version=0.19.0&nodes=1&world_size=4");
        assert_eq!(encode(&link), "version=0.19.0&nodes=1&world_size=4");
        // the defaults are left out, the release the link meant is not
        assert_eq!(encode(&decode("nodes=1&gpus_per_node=8")), "version=0.19.0");
    }

    #[test]
    fn view_parameters_and_version() {
        let link = decode("nodes=2&embed=1&theme=dark&readonly=1&v=1");
        assert_eq!(
            link.view,
            View {
                embed: true,
                readonly: true,
                theme: Theme::Dark,
                plan: false,
                scale: false,
            }
        );
        assert!(link.notices.is_empty() && link.unknown.is_empty());
        assert_eq!(
            encode(&link),
            "version=0.19.0&nodes=2&embed=1&readonly=1&theme=dark"
        );
        // the planner view: read, written back, and any other view is a notice
        let plan = decode("nodes=2&view=plan");
        assert!(plan.view.plan && plan.notices.is_empty());
        assert_eq!(encode(&plan), "version=0.19.0&nodes=2&view=plan");
        // the scaling view likewise; the last `view` wins
        let scale = decode("nodes=2&view=scale");
        assert!(scale.view.scale && !scale.view.plan && scale.notices.is_empty());
        assert_eq!(encode(&scale), "version=0.19.0&nodes=2&view=scale");
        let both = decode("nodes=2&view=plan&view=scale");
        assert!(both.view.scale && !both.view.plan);
        let other = decode("nodes=2&view=table");
        assert!(!other.view.plan && other.notices.len() == 1);
        assert_eq!(
            encode(&link.with_view(View {
                theme: Theme::Dark,
                ..View::default()
            })),
            "version=0.19.0&nodes=2&theme=dark"
        );
        let newer = decode("v=2&nodes=2&future_knob=7");
        assert_eq!(newer.notices.len(), 1);
        assert_eq!(encode(&newer), "version=0.19.0&nodes=2&v=2&future_knob=7");
        let bad = decode("theme=purple&embed=yes");
        assert_eq!(bad.notices.len(), 2);
        assert_eq!(bad.view, View::default());
    }

    #[test]
    fn aliases_read_as_their_field() {
        let link = decode("sequence_parallel_degree=4");
        assert_eq!(link.inputs.get(Field::ContextParallelSize), "4");
        assert_eq!(encode(&link), "version=0.19.0&context_parallel_size=4");
        let both = decode("sequence_parallel_degree=4&context_parallel_size=2");
        assert!(both.inputs.conflict(Field::ContextParallelSize).is_some());
    }

    #[test]
    fn framework_and_version() {
        let link = decode(
            "micro_batch_size=2&framework=megatron&version=head&tensor_model_parallel_size=2",
        );
        assert_eq!(link.framework, fw("megatron"));
        assert_eq!(link.release().id, "head");
        assert_eq!(link.inputs.get(Field::MicroBatchSize), "2");
        assert!(link.notices.is_empty(), "{:?}", link.notices);
        assert_eq!(
            encode(&link),
            "framework=megatron&version=head&tensor_model_parallel_size=2&micro_batch_size=2"
        );
        // every link that states something carries its release; without version= it means
        // the release links without one have always meant, and is written out
        let newest = fw("megatron").default_release().id;
        assert_eq!(
            encode(&decode(&format!("framework=megatron&version={newest}"))),
            format!("framework=megatron&version={newest}")
        );
        let old = decode("framework=megatron&micro_batch_size=2");
        assert_eq!(old.release().id, fw("megatron").spec().unversioned);
        assert_eq!(
            encode(&old),
            format!(
                "framework=megatron&version={}&micro_batch_size=2",
                fw("megatron").spec().unversioned
            )
        );
        // a fresh page (nothing stated, view parameters at most) gets the newest, and no version
        assert_eq!(
            decode("theme=dark").release().id,
            Framework::default().default_release().id
        );
        assert_eq!(encode(&decode("theme=dark")), "theme=dark");
        assert_eq!(encode(&decode("")), "");
        // another framework's key is kept, with a notice, and never read as this one's
        let foreign = decode("framework=megatron&tensor_parallel_size=4");
        assert_eq!(foreign.inputs.get(Field::TensorParallelSize), "");
        assert_eq!(foreign.notices.len(), 1);
        assert_eq!(
            encode(&foreign),
            "framework=megatron&version=0.16.1&tensor_parallel_size=4"
        );
        // an alias belongs to its framework
        assert_eq!(
            decode("framework=megatron&sequence_parallel_degree=2")
                .inputs
                .get(Field::ContextParallelSize),
            ""
        );
    }

    #[test]
    fn an_old_link_without_version_keeps_its_release_and_says_so() {
        for &f in Framework::ALL {
            let spec = f.spec();
            let old = decode(&format!("framework={}&world_size=8", f.id()));
            assert_eq!(old.release().id, spec.unversioned, "{}", f.id());
            assert_eq!(
                old.unversioned_note().is_some(),
                spec.unversioned != f.default_release().id,
                "{}",
                f.id()
            );
            // the same link with its version written: no note, the same release
            let carried = decode(&encode(&old));
            assert_eq!(carried.release().id, spec.unversioned);
            assert_eq!(carried.unversioned_note(), None);
            assert_eq!(carried.report(), old.report());
        }
        // a default that moved: axolotl's links without version= mean 0.19.0
        let note = decode("world_size=8").unversioned_note().unwrap();
        assert!(note.contains("0.19.0") && note.contains(fw("axolotl").default_release().label));
        assert_eq!(decode("").unversioned_note(), None);
    }

    #[test]
    fn unknown_framework_or_version_is_a_notice_and_kept() {
        let link = decode("framework=jax&nodes=2");
        assert_eq!(link.framework, fw("axolotl"));
        assert_eq!(link.notices[0].0, "framework");
        assert_eq!(encode(&link), "version=0.19.0&nodes=2&framework=jax");
        let twice = decode("framework=hf&framework=megatron");
        assert_eq!(twice.framework, fw("axolotl"));
        assert_eq!(twice.unknown.len(), 2);
        let v = decode("framework=hf&version=9.9");
        assert_eq!(v.framework, fw("hf"));
        // an unknown version is shown as what links without one mean (the notice says which)
        assert_eq!(v.release().id, fw("hf").spec().unversioned);
        assert_eq!(v.notices[0].0, "version");
        assert_eq!(encode(&v), "framework=hf&version=9.9");
    }

    #[test]
    fn hostile_input_never_panics() {
        for q in [
            "%",
            "%zz=1",
            "a=%ff%fe",
            "=&=&&",
            "nodes=%E2%80%AE",
            "nodes=1;nodes=2",
            "\u{0}",
        ] {
            let link = decode(q);
            let _ = encode(&link);
        }
        let long = format!("nodes={}", "9".repeat(100_000));
        assert_eq!(decode(&long).inputs.get(Field::Nodes).len(), 100_000);
    }
}
