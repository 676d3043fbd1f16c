//! The layering ARCHITECTURE.md promises, checked on the source: each module of the core uses only
//! modules of lower layers (so there is no import circle), the frameworks never reach the
//! registry or the machinery, no module of the core or the state imports a web crate, and no
//! code outside the registry names a framework.

use dpcalc::calc::Framework;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The core's modules by layer; a module may use modules of lower layers only.
const LAYERS: &[(&str, u8)] = &[
    ("num", 0),
    ("field", 0),
    ("gpu", 0),
    ("model", 1),
    ("plan", 2),
    ("estimated", 2),
    ("memory", 2),
    ("flops", 2),
    ("lora", 2),
    ("report", 3),
    ("estimate", 3),
    ("parse", 4),
    ("spec", 4),
    ("first_view", 5),
    ("parse/model", 5),
    ("parse/settings", 5),
    ("cluster", 5),
    ("schedule", 6),
    ("fit", 6),
    ("frameworks/*", 6),
    ("frameworks", 7),
    ("layout", 8),
    ("planner", 9),
    ("mesh", 9),
    ("fixes", 9),
    ("compare", 8),
    ("export", 8),
    ("import", 8),
    ("scaling", 10),
    ("view", 11),
    ("card", 12),
    ("guide", 12),
];

/// What `calc/mod.rs` re-exports, by the module that defines it.
const REEXPORTS: &[(&str, &str)] = &[
    ("Field", "field"),
    ("Kind", "field"),
    ("RawInputs", "field"),
    ("Param", "parse"),
    ("Diag", "report"),
    ("Grid", "report"),
    ("Level", "report"),
    ("Output", "report"),
    ("Refusal", "report"),
    ("Report", "report"),
    ("Stage", "report"),
    ("Step", "report"),
    ("Num", "num"),
    ("Spec", "spec"),
    ("Framework", "frameworks"),
    ("Release", "frameworks"),
    ("axolotl", "frameworks"),
    ("hf", "frameworks"),
    ("deepspeed", "frameworks"),
    ("megatron", "frameworks"),
    ("torchtitan", "frameworks"),
    ("nanotron", "frameworks"),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its comments (a doc may name anything).
fn code(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The core modules a file refers to, as `crate::calc::X` or (at the top level) `super::X`.
fn uses(text: &str, top_level: bool) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut prefixes = vec!["crate::calc::"];
    if top_level {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (i, _) in text.match_indices(prefix) {
            let rest = &text[i + prefix.len()..];
            // `crate::calc::{a, b::c}`: every name in the braces
            let names: Vec<&str> = if let Some(inner) = rest.strip_prefix('{') {
                inner[..inner.find('}').unwrap_or(0)]
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or(""))
                    .collect()
            } else {
                vec![rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")]
            };
            for n in names {
                let n = REEXPORTS
                    .iter()
                    .find(|(name, _)| *name == n)
                    .map_or(n, |&(_, m)| m);
                if layer(n).is_some() {
                    found.insert(n.to_string());
                }
            }
        }
    }
    found
}

#[test]
fn the_core_is_layered_without_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/calc");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let module = match rel.as_str() {
            "mod.rs" => continue,
            "frameworks/mod.rs" => "frameworks".to_string(),
            r if r.starts_with("frameworks/") => "frameworks/*".to_string(),
            // a module split into a folder (import/, view/, fit/) is one module of its layer,
            // except a file LAYERS names itself (parse/model.rs reads through the Spec)
            r if layer(r.trim_end_matches(".rs")).is_some() => {
                r.trim_end_matches(".rs").to_string()
            }
            r => r
                .split('/')
                .next()
                .unwrap_or(r)
                .trim_end_matches(".rs")
                .to_string(),
        };
        let own = layer(&module).unwrap_or_else(|| panic!("{rel}: not in LAYERS"));
        let text = code(f);
        // `super::` names a core module in calc's own files and a folder's mod.rs
        let top_level = !rel.contains('/') || rel.ends_with("/mod.rs");
        for used in uses(&text, top_level) {
            if used == module {
                continue;
            }
            let theirs = layer(&used).unwrap();
            if theirs >= own {
                problems.push(format!("{rel} (layer {own}) uses {used} (layer {theirs})"));
            }
        }
        if module == "frameworks/*" {
            // a framework never reaches the registry, another framework or the machinery
            for bad in [
                "crate::calc::Framework",
                "crate::calc::frameworks",
                "super::super",
            ] {
                if text.contains(bad) {
                    problems.push(format!("{rel} refers to {bad}"));
                }
            }
        }
        checked += 1;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 25, "only {checked} files");
}

#[test]
fn no_web_crate_in_the_core_or_the_state() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![
        src.join("state.rs"),
        src.join("query.rs"),
        src.join("embed.rs"),
    ];
    rust_files(&src.join("calc"), &mut files);
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        for web in ["web_sys", "yew::", "gloo", "wasm_bindgen"] {
            assert!(!text.contains(web), "{} mentions {web}", f.display());
        }
    }
}

#[test]
fn only_the_registry_names_a_framework() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let registry = src.join("calc/frameworks/mod.rs");
    for f in files.iter().filter(|f| **f != registry) {
        let text = fs::read_to_string(f).unwrap();
        for v in [
            "Axolotl",
            "Hf",
            "DeepSpeed",
            "Megatron",
            "Torchtitan",
            "Nanotron",
        ] {
            let needle = format!("Framework::{v}");
            assert!(!text.contains(&needle), "{} names {needle}", f.display());
        }
    }
}

/// The files that may name a framework's own field or convention: its folder, the registry, the
/// field table that defines every key, and the vocabulary that describes the conventions.
fn may_name_framework_parts(rel: &str) -> bool {
    rel.starts_with("calc/frameworks/")
        || matches!(rel, "calc/field.rs" | "calc/spec.rs" | "calc/flops.rs")
}

/// A framework's own fields: the fields only its form has.
fn own_fields() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for &fw in Framework::ALL {
        for f in fw.fields() {
            let others = Framework::ALL
                .iter()
                .filter(|&&o| o != fw)
                .any(|o| o.fields().any(|x| x == f));
            if !others {
                out.push((format!("Field::{f:?}"), fw.id()));
            }
        }
    }
    out
}

#[test]
fn a_frameworks_own_fields_and_convention_stay_in_its_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("calc"), &mut files);
    let own = own_fields();
    assert!(own.len() > 100, "only {} own fields", own.len());
    let mut problems = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if may_name_framework_parts(&rel) {
            continue;
        }
        // a module's unit tests may use any framework as an example
        let text = code(f);
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        // a whole word: `Field::Tp` is not `Field::TpSize`
        let names = |needle: &str| {
            text.match_indices(needle).any(|(i, _)| {
                !text[i + needle.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };
        for (field, fw) in &own {
            if names(field) {
                problems.push(format!("{rel} names {field}, {fw}'s own field"));
            }
        }
        if names("FlopsConvention::") {
            problems.push(format!("{rel} names a FLOPs convention"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The longest a function may be: about a screen.
const MAX_FN_LINES: usize = 80;

/// The functions allowed to be longer than [`MAX_FN_LINES`] (paths relative to `src/`), with why:
/// rule tables, one arm per case with nothing to name. A new entry needs such a reason; an entry whose
/// function is gone or short enough fails too, so the list only shrinks.
const LONG_FNS: &[(&str, &str, &str)] = &[
    (
        "calc/guide.rs",
        "inputs_of",
        "a table: what each output is computed from, one arm per output",
    ),
    (
        "calc/model.rs",
        "preset",
        "a table: the Hub presets, one arm each",
    ),
];

/// The functions of a file longer than [`MAX_FN_LINES`]: name, first line, length (from `fn` to
/// the closing brace at its indentation).
fn long_fns(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let mut rest = line.trim_start();
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(sig) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = sig
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // the signature runs to its `{` (a `;` first: a declaration without a body)
        let Some(open) = (i..lines.len()).find(|&j| {
            let l = lines[j].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{}}}", &line[..indent]);
        if let Some(end) = (open + 1..lines.len()).find(|&j| lines[j] == close) {
            let n = end - i + 1;
            if n > MAX_FN_LINES {
                out.push((name, i + 1, n));
            }
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_a_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut problems = Vec::new();
    let mut allowed = BTreeSet::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(f).unwrap();
        for (name, line, n) in long_fns(&text) {
            match LONG_FNS
                .iter()
                .find(|(p, fun, _)| *p == rel && *fun == name)
            {
                Some(entry) => {
                    allowed.insert(*entry);
                }
                None => problems.push(format!(
                    "src/{rel}:{line} {name} is {n} lines (at most {MAX_FN_LINES}): split it into named phases"
                )),
            }
        }
    }
    for entry in LONG_FNS.iter().filter(|e| !allowed.contains(*e)) {
        problems.push(format!(
            "LONG_FNS lists {} {}, which is gone or no longer than {MAX_FN_LINES} lines: remove the entry",
            entry.0, entry.1
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The sibling files a file of a folder names (`super::NAME`, `crate::calc::FOLDER::NAME`,
/// `use super::{a, b::c}`), among `siblings` (the folder's other files and subfolders).
fn sibling_uses(text: &str, folder: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let own = format!("crate::calc::{}::", folder.replace('/', "::"));
    for prefix in ["super::", own.as_str()] {
        for (i, _) in text.match_indices(prefix) {
            // `super::super::` leaves the folder
            let rest = &text[i + prefix.len()..];
            if prefix == "super::" && text[..i].ends_with("super::") {
                continue;
            }
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(inner) => inner[..inner.find('}').unwrap_or(0)]
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or(""))
                    .collect(),
                None => vec![rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")],
            };
            found.extend(
                names
                    .into_iter()
                    .filter(|n| siblings.contains(*n))
                    .map(str::to_string),
            );
        }
    }
    found
}

/// The circles among the files of each folder of `root` (a folder's `mod.rs` declares its files
/// and is left out: a file may use what its folder's root defines).
fn circles_in_folders(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        let mut siblings = BTreeSet::new();
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                dirs.push(p.clone());
                siblings.insert(stem);
            } else if p.extension().is_some_and(|x| x == "rs") && stem != "mod" {
                siblings.insert(stem.clone());
                files.push((stem, p));
            }
        }
        let folder = dir
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let edges: Vec<(String, BTreeSet<String>)> = files
            .iter()
            .map(|(stem, p)| {
                let text = code(p);
                let text = text.split("#[cfg(test)]").next().unwrap_or_default();
                let mut used = sibling_uses(text, &folder, &siblings);
                used.remove(stem);
                (stem.clone(), used)
            })
            .collect();
        // a path from each file back to itself, depth first
        for (start, _) in &edges {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((at, path)) = stack.pop() {
                let Some((_, next)) = edges.iter().find(|(s, _)| *s == at) else {
                    continue;
                };
                for n in next {
                    if n == start {
                        let circle = format!("{folder}: {} → {start}", path.join(" → "));
                        if path.iter().min() == Some(start) {
                            problems.push(circle);
                        }
                    } else if seen.insert(n.clone()) {
                        let mut p = path.clone();
                        p.push(n.clone());
                        stack.push((n.clone(), p));
                    }
                }
            }
        }
    }
    problems.sort();
    problems
}

#[test]
fn no_circle_between_the_files_of_a_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/calc");
    let problems = circles_in_folders(&root);
    assert!(problems.is_empty(), "circles:\n{}", problems.join("\n"));
}

#[test]
fn the_circle_check_finds_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("dpcalc-circle-{}", std::process::id()));
    let folder = dir.join("fit");
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join("mod.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    fs::write(folder.join("a.rs"), "use super::b::f;\n").unwrap();
    fs::write(folder.join("b.rs"), "use super::{c::g, Thing};\n").unwrap();
    fs::write(folder.join("c.rs"), "fn h() { crate::calc::fit::a::k() }\n").unwrap();
    let found = circles_in_folders(&dir);
    fs::write(folder.join("c.rs"), "fn h() {}\n").unwrap();
    let none = circles_in_folders(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found, vec!["fit: a → b → c → a".to_string()]);
    assert!(none.is_empty(), "{none:?}");
}

/// ARCHITECTURE.md's table of layers is `LAYERS`, module for module.
#[test]
fn the_architecture_documents_the_layers_as_they_are() {
    let doc = crate::common::files::read("ARCHITECTURE.md");
    let mut documented: Vec<(String, u8)> = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, n, modules, _] = cells.as_slice() else {
            continue;
        };
        let Ok(n) = n.parse::<u8>() else { continue };
        for m in modules.split('`').skip(1).step_by(2) {
            let m = if m == "frameworks" {
                m
            } else {
                m.trim_end_matches(".rs")
            };
            documented.push((m.to_string(), n));
        }
        if modules.contains("each framework's folder") {
            documented.push(("frameworks/*".to_string(), n));
        }
    }
    let mut want: Vec<(String, u8)> = LAYERS.iter().map(|&(m, l)| (m.to_string(), l)).collect();
    documented.sort();
    want.sort();
    assert_eq!(
        documented, want,
        "ARCHITECTURE.md's layers differ from LAYERS"
    );
}

/// Every framework folder has one shape: `mod.rs`, `model.rs` and `rules/mod.rs`, and its other
/// rule files are named after the stages they compute.
#[test]
fn every_framework_folder_has_the_same_shape() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/calc/frameworks");
    let stages = [
        "mod.rs",
        "checks.rs",
        "grid.rs",
        "batch.rs",
        "steps.rs",
        "schedule.rs",
    ];
    let mut problems = Vec::new();
    let mut folders = 0;
    for e in fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        folders += 1;
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut top: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        top.sort();
        if top != ["mod.rs", "model.rs", "rules"] {
            problems.push(format!("{name}: {top:?}, not mod.rs, model.rs, rules/"));
            continue;
        }
        for e in fs::read_dir(dir.join("rules")).unwrap() {
            let f = e.unwrap().file_name().to_string_lossy().to_string();
            if !stages.contains(&f.as_str()) {
                problems.push(format!("{name}/rules/{f}: not one of {stages:?}"));
            }
        }
    }
    assert_eq!(folders, Framework::ALL.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
