//! Regression tests for inputs at the edges, for every field: each either computes or is an
//! error at that field, never a panic or a silently wrong number.
#![cfg(not(target_arch = "wasm32"))]

use dpcalc::calc::{axolotl, Field, Kind, Level};
use dpcalc::query;

fn errors_at(q: &str, field: Field) -> usize {
    let report = axolotl::compute(&query::decode(q).inputs);
    report
        .diags_for(field)
        .filter(|d| d.level == Level::Error)
        .count()
}

#[test]
fn every_field_rejects_what_is_not_its_kind() {
    let long = "9".repeat(100 * 1024);
    for &f in Field::ALL {
        let k = f.key();
        let rejected: Vec<String> = match f.kind() {
            Kind::Count => vec![
                "-1".into(),
                "1e309".into(),
                "NaN".into(),
                "1.5".into(),
                "18446744073709551616".into(),
                long.clone(),
                "%ff%fe".into(),
                "8%20GPUs".into(),
            ],
            Kind::Real => vec![
                "-1".into(),
                "1e309".into(),
                "NaN".into(),
                "inf".into(),
                long.clone(),
                "%ff".into(),
                "1,5".into(),
            ],
            Kind::Flag => vec!["maybe".into(), "%ff".into(), long.clone()],
        };
        for bad in rejected {
            let q = format!("{k}={bad}");
            assert_eq!(errors_at(&q, f), 1, "{k}={}", &bad[..bad.len().min(30)]);
        }
        // repeated keys are an error at the field, with both values
        let q = format!("{k}=1&{k}=2");
        let report = axolotl::compute(&query::decode(&q).inputs);
        let msg: Vec<_> = report
            .diags_for(f)
            .filter(|d| d.level == Level::Error)
            .collect();
        assert_eq!(msg.len(), 1, "{q}");
        assert!(
            msg[0]
                .message
                .contains("\u{201c}1\u{201d}, \u{201c}2\u{201d}"),
            "{}",
            msg[0].message
        );
        // an empty value is absent, not an error
        assert_eq!(errors_at(&format!("{k}="), f), 0, "{k}=");
    }
}

#[test]
fn counts_accept_their_extremes_without_wrapping() {
    let max = u64::MAX.to_string();
    for &f in Field::ALL.iter().filter(|f| f.kind() == Kind::Count) {
        for v in ["0", "1", max.as_str()] {
            // computes (possibly with an error explaining what axolotl does), never panics
            let _ = axolotl::compute(&query::decode(&format!("{}={v}", f.key())).inputs);
        }
    }
    // all counts at u64::MAX at once
    let q: Vec<String> = Field::ALL
        .iter()
        .filter(|f| f.kind() == Kind::Count)
        .map(|f| format!("{}={max}", f.key()))
        .collect();
    let report = axolotl::compute(&query::decode(&q.join("&")).inputs);
    assert!(report.has_errors());
}
