//! Links that must keep decoding the same way forever (`tests/links.txt`).

use dpcalc::calc::{Field, Framework};
use dpcalc::query::{self, Theme};

#[test]
fn every_fixture_link_decodes_as_recorded() {
    let text = include_str!("links.txt");
    let mut checked = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with('#') && !l.trim().is_empty())
    {
        let (q, want) = line
            .split_once("=>")
            .unwrap_or_else(|| panic!("line {}: no =>", n + 1));
        let link = query::decode(q.trim());
        let mut got: Vec<String> = Vec::new();
        if link.framework != Framework::default() {
            got.push(format!("framework:{}", link.framework.id()));
        }
        if let Some(r) = link.release {
            got.push(format!("version:{}", r.id));
        }
        for &f in Field::ALL {
            if let Some(values) = link.inputs.conflict(f) {
                got.push(format!("conflict:{}={}", f.key(), values.join("|")));
            } else if !link.inputs.get(f).is_empty() {
                got.push(format!("{}={}", f.key(), link.inputs.get(f)));
            }
        }
        for (k, v) in &link.unknown {
            got.push(format!(
                "unknown:{}={}",
                k.replace(' ', "_"),
                v.replace(' ', "_")
            ));
        }
        let mut view = Vec::new();
        if link.view.embed {
            view.push("embed".to_string());
        }
        if link.view.readonly {
            view.push("readonly".to_string());
        }
        if link.view.theme != Theme::Auto {
            view.push(format!("theme={}", link.view.theme.name()));
        }
        if link.view.plan {
            view.push("plan".to_string());
        }
        if !view.is_empty() {
            got.push(format!("view:{}", view.join(",")));
        }
        let want: Vec<String> = match want.trim() {
            "-" => Vec::new(),
            w => w.split_whitespace().map(str::to_string).collect(),
        };
        assert_eq!(got, want, "line {}: {}", n + 1, q.trim());
        // and the canonical re-encoding (defaults left out) means the same thing
        let again = query::decode(&query::encode(&link));
        assert_eq!(again.framework, link.framework, "line {} re-encoded", n + 1);
        assert_eq!(again.report(), link.report(), "line {} re-encoded", n + 1);
        assert_eq!(
            (again.view, &again.unknown),
            (link.view, &link.unknown),
            "line {} re-encoded",
            n + 1
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} fixture links");
}
