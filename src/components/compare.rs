//! The compare view: every framework side by side for the same cluster and batch intent
//! (`calc::compare`). Computed only while open, so it costs nothing when nobody looks.

use std::rc::Rc;

use yew::prelude::*;

use crate::calc::compare::{self, Comparison};
use crate::calc::{Framework, RawInputs, Report};
use crate::query::{self, Link};

#[derive(Properties, PartialEq)]
pub struct CompareProps {
    pub framework: Framework,
    pub inputs: RawInputs,
    pub report: Rc<Report>,
}

#[function_component(Compare)]
pub fn compare_view(props: &CompareProps) -> Html {
    let open = use_state(|| false);
    let ontoggle = {
        let open = open.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlDetailsElement = e.target_unchecked_into();
            open.set(el.open());
        })
    };
    let table = (*open).then(|| {
        let c = compare::compare(props.framework, &props.inputs, &props.report);
        table(&c, props.framework)
    });
    html! {
        <details class="compare" {ontoggle} open={*open}>
            <summary>{ "Compare frameworks" }</summary>
            <p class="help">
                { "The same cluster and batch, carried to each framework's own keys and computed by its newest release. \
                   Where a framework cannot say it the same way, it gets this page's result (the global batch, the step \
                   count). Rows that differ are marked ≠; each value shows the rule behind it." }
            </p>
            { for table }
        </details>
    }
}

fn table(c: &Comparison, selected: Framework) -> Html {
    html! {
        <div class="compare-scroll">
            <table class="compare-table">
                <thead>
                    <tr>
                        <th scope="col">{ "Value" }</th>
                        { for c.columns.iter().map(|col| {
                            let href = format!("?{}", query::encode(&Link {
                                framework: col.framework,
                                inputs: col.inputs.clone(),
                                ..Link::default()
                            }));
                            let class = classes!((col.framework == selected).then_some("selected"));
                            html! {
                                <th scope="col" {class}>
                                    <a {href}>{ col.framework.name() }</a>
                                    <span class="release">{ col.release.id }</span>
                                </th>
                            }
                        }) }
                    </tr>
                </thead>
                <tbody>
                    { for c.rows.iter().map(|row| {
                        let class = classes!(row.differs.then_some("differs"));
                        html! {
                            <tr {class} data-compare-row={row.output.name()}>
                                <th scope="row">
                                    { row.output.label() }
                                    if row.differs { <span class="differs-mark" title="The frameworks disagree">{ " ≠" }</span> }
                                </th>
                                { for row.cells.iter().zip(&c.columns).map(|(cell, col)| html! {
                                    <td data-compare={col.framework.id()} data-value={cell.value.map(|v| AttrValue::from(v.raw()))}>
                                        <span class="v">{ cell.value.map_or_else(|| "—".to_string(), |v| v.pretty()) }</span>
                                        <span class="why">{ cell.reason.clone() }</span>
                                    </td>
                                }) }
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}
