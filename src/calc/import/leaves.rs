//! A nested config's values by their dotted paths (nested YAML, TOML, accelerate's config): each
//! path the framework reads fills its field, and a section with no value dpcalc reads is listed
//! once.

use super::Imported;
use crate::calc::{parse, Field};

/// The deepest nesting read; deeper values are listed by their path.
pub(super) const MAX_DEPTH: usize = 8;

/// At most this many values are read from a nested config.
pub(super) const MAX_LEAVES: usize = 20_000;

/// When a reader kept [`MAX_LEAVES`] values, an error says the rest were not read (a value is
/// never dropped silently).
pub(super) fn capped(count: usize, out: &mut Imported) {
    if count >= MAX_LEAVES {
        out.error(
            "the config holds 20,000 values or more; only the first 20,000 are read (a config holds a few hundred)",
        );
    }
}

/// A value of a nested config, by its dotted path.
pub(super) struct Leaf {
    pub(super) path: String,
    /// The value as text; `None` for a list or another value dpcalc never reads.
    pub(super) value: Option<String>,
    /// Where the key is (`line 3, column 1`).
    pub(super) at: String,
}

/// Fills the fields `field` names for each leaf; lists the others. A section with no value
/// dpcalc reads is listed once by its path (`checkpoints`), not key by key.
pub(super) fn read_leaves(
    out: &mut Imported,
    leaves: Vec<Leaf>,
    field: impl Fn(&str) -> Option<Field>,
) {
    let mut seen = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for leaf in leaves {
        match (field(&leaf.path), leaf.value) {
            (Some(f), Some(v)) => {
                known.push(leaf.path);
                out.input(f, v, &mut seen, &leaf.at);
            }
            (Some(_), None) => out.error(format!(
                "{}: {} is not a single value; the field is left empty",
                leaf.at,
                parse::shorten(&leaf.path)
            )),
            (None, _) => unknown.push(leaf.path),
        }
    }
    let mut listed: std::collections::HashSet<String> = std::collections::HashSet::new();
    for path in unknown {
        // a key the framework no longer reads is named by itself, with what happens to it, even
        // in a section dpcalc reads nothing of (torchtitan's `[quantize.linear.float8]`)
        if out.renamed(&path).is_some() {
            out.unknown(path);
            continue;
        }
        // the shortest section of the path that holds no key dpcalc read
        let mut end = 0;
        let section = loop {
            end = match path[end..].find('.') {
                Some(i) => end + i,
                None => break path.as_str(),
            };
            let prefix = &path[..end];
            if !known.iter().any(|k| {
                k.strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'))
            }) {
                break prefix;
            }
            end += 1;
        };
        if listed.insert(section.to_string()) {
            out.unknown(section);
        }
    }
}
