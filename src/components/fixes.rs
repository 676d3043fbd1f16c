//! The one-click fixes under a field's last error (`calc::fixes`): the app's alone, the first
//! view has none.

use yew::prelude::*;

use crate::calc::fixes::Fix;
use crate::calc::Field;

/// `div.fixes` with a `button[data-fix=KEY]` per fix, `data-fix-set` the query fragment it sets;
/// nothing when there is none.
pub fn fixes(key: &'static str, fixes: &[Fix], on_fix: &Callback<Vec<(Field, String)>>) -> Html {
    html! {
        if !fixes.is_empty() {
            <div class="fixes" role="group" aria-label={format!("Fixes for {key}")}>
                { for fixes.iter().map(|fix| {
                    let set = fix.set.clone();
                    let cb = on_fix.clone();
                    let query = fix.set.iter().map(|(f, v)| format!("{}={v}", f.key())).collect::<Vec<_>>().join("&");
                    html! {
                        <button type="button" class="fix" data-fix={key} data-fix-set={query}
                            onclick={Callback::from(move |_: MouseEvent| cb.emit(set.clone()))}>
                            { fix.label.clone() }
                        </button>
                    }
                }) }
            </div>
        }
    }
}
