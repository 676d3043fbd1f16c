//! The framework and release choice (`framework=`, `version=`).

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::calc::{Framework, Release};

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
    let releases = fw.releases();
    html! {
        <div class="picker">
            <label for="in-framework">
                <span class="label">{ "Framework" }</span>
                <code class="key">{ "framework" }</code>
            </label>
            <select id="in-framework" name="framework" onchange={on_framework} disabled={props.readonly}>
                { for Framework::ALL.iter().map(|&f| html! {
                    <option value={f.id()} selected={f == fw}>{ f.name() }</option>
                }) }
            </select>
            <label for="in-version">
                <span class="label">{ "Version" }</span>
                <code class="key">{ "version" }</code>
            </label>
            <select id="in-version" name="version" onchange={on_release} disabled={props.readonly || releases.len() < 2}>
                { for releases.iter().map(|r| html! {
                    <option value={r.id} selected={r.id == props.release.id}>{ r.label }</option>
                }) }
            </select>
            if let Some(note) = &props.note {
                <p class="msg note" data-notice="unversioned">{ note.clone() }</p>
            }
        </div>
    }
}
