//! Files of the repository, read by their path from its root (`CARGO_MANIFEST_DIR`), whatever
//! directory the tests run in.

use std::path::{Path, PathBuf};

/// The path of `rel` (`"src/page.rs"`, `"tests/links.txt"`) in the repository.
pub fn path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The text of the repository's file `rel`; panics naming it when it cannot be read.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `tests/fixtures/NAME`, a JSON fixture (`model_*.json`), parsed.
pub fn fixture_json(name: &str) -> serde_json::Value {
    let rel = format!("tests/fixtures/{name}");
    serde_json::from_str(&read(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The links of `tests/links.txt` as `(line, query)`: every line that is not a comment and has a
/// `=>`, the query being what stands before it, trimmed (it may start with `?`, or be empty).
pub fn links() -> Vec<(usize, String)> {
    read("tests/links.txt")
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && l.contains("=>"))
        .map(|(i, l)| {
            (
                i + 1,
                l.split("=>").next().unwrap_or_default().trim().to_string(),
            )
        })
        .collect()
}
