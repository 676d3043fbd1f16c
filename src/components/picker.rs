//! The framework and release choice (`framework=`, `version=`).

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::calc::{Framework, Release};
use crate::page::{self, markup};

#[derive(Properties, PartialEq)]
pub struct PickerProps {
    pub framework: Framework,
    pub release: &'static Release,
    pub on_framework: Callback<Framework>,
    pub on_release: Callback<&'static str>,
    pub readonly: bool,
    /// What an old link without `version=` is computed by (`Link::unversioned_note`).
    #[prop_or_default]
    pub note: Option<String>,
}

#[function_component(Picker)]
pub fn picker(props: &PickerProps) -> Html {
    let fw = props.framework;
    let on_framework = {
        let cb = props.on_framework.clone();
        Callback::from(move |e: Event| {
            let el: HtmlSelectElement = e.target_unchecked_into();
            if let Some(f) = Framework::from_id(&el.value()) {
                cb.emit(f);
            }
        })
    };
    let on_release = {
        let cb = props.on_release.clone();
        Callback::from(move |e: Event| {
            let el: HtmlSelectElement = e.target_unchecked_into();
            if let Some(r) = fw.release(&el.value()) {
                cb.emit(r.id);
            }
        })
    };
    let p = page::picker(fw, props.release.id, props.readonly, props.note.clone());
    html! {
        <div class={markup::PICKER}>
            <label for={markup::IN_FRAMEWORK}>
                <span class={markup::LABEL}>{ markup::FRAMEWORK_LABEL }</span>
                <code class={markup::KEY}>{ markup::FRAMEWORK }</code>
            </label>
            <select id={markup::IN_FRAMEWORK} name={markup::FRAMEWORK} onchange={on_framework} disabled={p.readonly}>
                { for p.frameworks.iter().map(|&(id, name, selected)| html! {
                    <option value={id} {selected}>{ name }</option>
                }) }
            </select>
            <label for={markup::IN_VERSION}>
                <span class={markup::LABEL}>{ markup::VERSION_LABEL }</span>
                <code class={markup::KEY}>{ markup::VERSION }</code>
            </label>
            <select id={markup::IN_VERSION} name={markup::VERSION} onchange={on_release} disabled={p.releases_disabled}>
                { for p.releases.iter().map(|&(id, label, selected)| html! {
                    <option value={id} {selected}>{ label }</option>
                }) }
            </select>
            if let Some(note) = p.note {
                <p class={markup::NOTE} data-notice={markup::UNVERSIONED}>{ note }</p>
            }
        </div>
    }
}
