//! The config panel: the frameworks a pasted config can be read as.

use crate::calc::{import, Framework};

/// The frameworks a pasted config can be read as (the import's "Read as" choices), in the order
/// offered: those whose `Spec::import` has a reader.
pub fn importable() -> Vec<Framework> {
    import::importable().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn importable_is_exactly_what_the_importer_reads() {
        let list = importable();
        assert_eq!(list, Framework::ALL);
        for &fw in Framework::ALL {
            let refused = import::import_as(fw, "")
                .errors
                .iter()
                .any(|e| e.contains("cannot be imported"));
            assert_eq!(refused, !list.contains(&fw), "{fw:?}");
        }
    }
}
