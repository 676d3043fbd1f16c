//! Every field of every framework at every release: a bad value, and a key given twice, is
//! exactly one error at that field (never none, never two: the framework rules and the model
//! stage read some keys both), and nothing panics.

use crate::common::report::urlencode;
use dpcalc::calc::{Framework, Kind, Level};
use dpcalc::query;
#[test]
fn every_field_of_every_framework() {
    let mut bad_cases = Vec::new();
    for &fw in Framework::ALL {
        for r in fw.releases() {
            for f in fw.fields() {
                let k = f.key();
                let bad: &[&str] = match fw.kind(f) {
                    Kind::Count => &["-1", "1.5", "NaN", "18446744073709551616"],
                    Kind::Real => &["-1", "NaN", "inf", "1e309"],
                    Kind::Flag => &["maybe"],
                    Kind::Int => &["1.5", "NaN", "9223372036854775808"],
                    Kind::Text => &["<script>", "\u{0}", "zzzz"],
                };
                for b in bad {
                    let q = format!(
                        "framework={}&version={}&{k}={}",
                        fw.id(),
                        r.id,
                        urlencode(b)
                    );
                    let rep = query::decode(&q).report();
                    let n = rep.diags_for(f).filter(|d| d.level == Level::Error).count();
                    if fw.kind(f) != Kind::Text && n != 1 {
                        bad_cases.push(format!("{q}: {n} errors"));
                    }
                }
                let q = format!("framework={}&version={}&{k}=1&{k}=2", fw.id(), r.id);
                let rep = query::decode(&q).report();
                let n = rep.diags_for(f).filter(|d| d.level == Level::Error).count();
                if n != 1 {
                    bad_cases.push(format!("{q}: {n} errors"));
                }
            }
        }
    }
    assert!(
        bad_cases.is_empty(),
        "{}\n{}",
        bad_cases.len(),
        bad_cases
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
