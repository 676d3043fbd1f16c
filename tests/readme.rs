//! The docs stay true: every framework, release and URL parameter the code knows is documented
//! in `docs/url-format.md`, and every output name in `docs/outputs.md`.

use crate::common::files::read;
use dpcalc::calc::{Framework, Output};

#[test]
fn the_docs_document_every_framework_key_and_output() {
    let url_format = read("docs/url-format.md");
    let outputs = read("docs/outputs.md");
    let mut missing = Vec::new();
    for &fw in Framework::ALL {
        if !url_format.contains(&format!("`{}`", fw.id())) {
            missing.push(format!("docs/url-format.md: framework {}", fw.id()));
        }
        for r in fw.releases() {
            if !url_format.contains(&format!("`{}`", r.id)) {
                missing.push(format!("docs/url-format.md: {} release {}", fw.id(), r.id));
            }
        }
        for f in fw.fields() {
            if !url_format.contains(&format!("`{}`", f.key())) {
                missing.push(format!("docs/url-format.md: {} key {}", fw.id(), f.key()));
            }
        }
    }
    for &o in Output::ALL {
        if !outputs.contains(&format!("`{}`", o.name())) {
            missing.push(format!("docs/outputs.md: output {}", o.name()));
        }
    }
    assert!(missing.is_empty(), "not documented: {missing:#?}");
}
