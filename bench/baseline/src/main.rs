//! One component printing a number, in the element the benchmark waits for.
use yew::prelude::*;

#[function_component(Baseline)]
fn baseline() -> Html {
    let n: u64 = 8 * 4;
    html! { <p data-output="global_batch_size" data-value={n.to_string()}>{ n }</p> }
}

fn main() {
    yew::Renderer::<Baseline>::new().render();
}
