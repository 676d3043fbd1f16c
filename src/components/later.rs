//! Draws its children one task after the page first renders, so the first task holds only what
//! the user came for (the form and the results); afterwards they render with the page.

use gloo::timers::callback::Timeout;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LaterProps {
    pub children: Html,
}

#[function_component(Later)]
pub fn later(props: &LaterProps) -> Html {
    let ready = use_state(|| false);
    {
        let ready = ready.clone();
        use_effect_with((), move |_| {
            let timer = Timeout::new(0, move || ready.set(true));
            move || drop(timer)
        });
    }
    if *ready {
        props.children.clone()
    } else {
        html! {}
    }
}
