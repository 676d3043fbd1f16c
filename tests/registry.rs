//! The list of frameworks lives in one place, the registry (`frameworks!` in
//! `src/calc/frameworks/mod.rs`, read here as `Framework::ALL`); everything else that names the
//! frameworks one by one is checked against it: the first views' Cargo features and bins, their
//! `src/bin/first-<id>.rs`, each framework's first-view feature in the registry, `scripts/first.sh`'s list and
//! `static/boot.js`'s.

use crate::common::files::read;
use dpcalc::calc::Framework;

fn ids() -> Vec<&'static str> {
    Framework::ALL.iter().map(|f| f.id()).collect()
}

#[test]
fn cargo_features_and_bins_are_the_registrys() {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml");
    let features = manifest["features"].as_table().expect("[features]");
    let first: Vec<&str> = features
        .keys()
        .filter_map(|k| k.strip_prefix("first-"))
        .collect();
    let mut want = ids();
    want.sort();
    let mut have = first.clone();
    have.sort();
    assert_eq!(have, want, "Cargo features first-<id>");
    for id in ids() {
        let f = features[&format!("first-{id}")]
            .as_array()
            .expect("a feature list");
        assert_eq!(f.len(), 1, "first-{id}");
        assert_eq!(f[0].as_str(), Some("first"), "first-{id} = [\"first\"]");
    }
    let bins = manifest["bin"].as_array().expect("[[bin]]");
    let mut first_bins: Vec<String> = Vec::new();
    for b in bins {
        let name = b["name"].as_str().expect("a bin name");
        let Some(id) = name.strip_prefix("first-") else {
            continue;
        };
        assert_eq!(
            b["path"].as_str(),
            Some(format!("src/bin/first-{id}.rs").as_str()),
            "{name}'s path"
        );
        let required: Vec<&str> = b["required-features"]
            .as_array()
            .expect("required-features")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(required, [name], "{name}'s required-features");
        first_bins.push(id.to_string());
    }
    first_bins.sort();
    assert_eq!(first_bins, want, "[[bin]] first-<id>");
    // one source file per bin, none left over
    let mut files: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/bin"))
        .expect("src/bin")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            Some(
                name.strip_prefix("first-")?
                    .strip_suffix(".rs")?
                    .to_string(),
            )
        })
        .collect();
    files.sort();
    assert_eq!(files, want, "src/bin/first-<id>.rs");
}

#[test]
fn each_framework_builds_only_under_its_own_first_view() {
    let registry = read("src/calc/frameworks/mod.rs");
    for id in ids() {
        // the registry's line names the framework's folder and its first view's feature
        let line = format!(" => {id}, \"first-{id}\";");
        assert!(registry.contains(&line), "frameworks/mod.rs: {line}");
        // the Spec describes the framework alone: what a first view leaves out of it is
        // decided by `first_view::trim`, not in its folder
        let spec = read(&format!("src/calc/frameworks/{id}/mod.rs"));
        for switch in [
            "feature = \"first",
            "FULL {",
            "spec::FULL",
            "first_view::",
            "spec::app(",
        ] {
            assert!(
                !spec.contains(switch),
                "{id}/mod.rs reads the build variant: {switch}"
            );
        }
    }
}

#[test]
fn the_scripts_list_the_registrys_frameworks_in_its_order() {
    let order = ids().join(" ");
    let first_sh = read("scripts/first.sh");
    assert!(
        first_sh.contains(&format!("FRAMEWORKS=${{FRAMEWORKS:-\"{order}\"}}")),
        "scripts/first.sh's FRAMEWORKS is not \"{order}\""
    );
    let quoted: Vec<String> = ids().iter().map(|id| format!("'{id}'")).collect();
    let boot = read("static/boot.js");
    assert!(
        boot.contains(&format!("const FRAMEWORKS = [{}];", quoted.join(", "))),
        "static/boot.js's FRAMEWORKS is not [{}]",
        quoted.join(", ")
    );
    // the default framework boot.js falls back to is the registry's first
    assert!(
        boot.contains(&format!(": '{}';", ids()[0])),
        "static/boot.js's fallback is not {}",
        ids()[0]
    );
}

/// A first view holds the words (label, placeholder, help) of the field sections its framework's
/// form needs (`Field::describe`); every field a framework shows whose words are not its own
/// (`Spec::describe`) must lie in a section its first view holds, or it would show blank there.
#[test]
fn each_first_view_holds_the_words_of_every_field_it_shows() {
    use dpcalc::calc::field::SECTIONS;
    use dpcalc::calc::Field;
    for &fw in Framework::ALL {
        let view = format!("first-{}", fw.id());
        let mut shown: Vec<Field> = fw.fields().collect();
        for (_, fields) in fw.groups() {
            shown.extend(fields.iter().copied());
        }
        shown.extend(dpcalc::calc::frameworks::THROUGHPUT.1.iter().copied());
        for f in shown {
            // the app's own inputs: no first view shows them (page::groups), and a link that
            // gives one is left to the app (src/first.rs)
            if (fw.spec().describe)(f).is_some() || dpcalc::calc::field::APP_ONLY.contains(&f) {
                continue;
            }
            let held = SECTIONS
                .iter()
                .any(|(views, fields)| fields.contains(&f) && views.contains(&view.as_str()));
            assert!(held, "{view} shows {} but does not hold its words", f.key());
        }
    }
    // every view named is a first view's feature
    let features: Vec<String> = ids().iter().map(|id| format!("first-{id}")).collect();
    for (views, fields) in SECTIONS {
        assert!(!fields.is_empty());
        for v in views.iter() {
            assert!(features.iter().any(|f| f == v), "{v} is no first view");
        }
    }
}
