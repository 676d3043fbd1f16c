//! Regression tests for inputs at the edges, for every field: each either computes or is an
//! error at that field, never a panic or a silently wrong number.

use crate::common::report::report_of;
use dpcalc::calc::{axolotl, Field, Framework, Kind, Level};
use dpcalc::query;

fn errors_at(q: &str, field: Field) -> usize {
    let report = report_of(q);
    report
        .diags_for(field)
        .filter(|d| d.level == Level::Error)
        .count()
}

#[test]
fn every_field_rejects_what_is_not_its_kind() {
    let long = "9".repeat(100 * 1024);
    for &fw in Framework::ALL {
        for f in fw.fields() {
            rejects(fw, f, &long);
        }
    }
}

fn rejects(fw: Framework, f: Field, long: &str) {
    let long = long.to_string();
    let p = format!("framework={}&", fw.id());
    {
        let k = f.key();
        let rejected: Vec<String> = match fw.kind(f) {
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
            Kind::Int => vec![
                "1.5".into(),
                "NaN".into(),
                "1e309".into(),
                "9223372036854775808".into(),
                long.clone(),
                "%ff".into(),
                "-".into(),
            ],
            Kind::Text => vec![],
        };
        for bad in rejected {
            let q = format!("{p}{k}={bad}");
            assert_eq!(errors_at(&q, f), 1, "{q:.60}");
        }
        // repeated keys are an error at the field, with both values
        let q = format!("{p}{k}=1&{k}=2");
        let report = report_of(&q);
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
        assert_eq!(errors_at(&format!("{p}{k}="), f), 0, "{p}{k}=");
    }
}

#[test]
fn counts_accept_their_extremes_without_wrapping() {
    let max = u64::MAX.to_string();
    for &fw in Framework::ALL {
        for f in fw
            .fields()
            .filter(|f| matches!(f.kind(), Kind::Count | Kind::Int))
        {
            for v in [
                "0",
                "1",
                "-1",
                max.as_str(),
                "9223372036854775807",
                "-9223372036854775808",
            ] {
                // computes (possibly with an error explaining what the framework does), never panics
                let _ = report_of(&format!("framework={}&{}={v}", fw.id(), f.key()));
            }
        }
        // all counts at u64::MAX at once
        let q: Vec<String> = fw
            .fields()
            .filter(|&f| fw.kind(f) == Kind::Count)
            .map(|f| format!("{}={max}", f.key()))
            .collect();
        let _ = report_of(&format!("framework={}&{}", fw.id(), q.join("&")));
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
