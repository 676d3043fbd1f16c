//! The README stays true: every framework, release, URL parameter and output name the code
//! knows is documented in it.

use crate::common::files::read;
use dpcalc::calc::{Framework, Output};

#[test]
fn readme_documents_every_framework_key_and_output() {
    let readme = read("README.md");
    let mut missing = Vec::new();
    for &fw in Framework::ALL {
        if !readme.contains(&format!("`{}`", fw.id())) {
            missing.push(format!("framework {}", fw.id()));
        }
        for r in fw.releases() {
            if !readme.contains(&format!("`{}`", r.id)) {
                missing.push(format!("{} release {}", fw.id(), r.id));
            }
        }
        for f in fw.fields() {
            if !readme.contains(&format!("`{}`", f.key())) {
                missing.push(format!("{} key {}", fw.id(), f.key()));
            }
        }
    }
    for &o in Output::ALL {
        if !readme.contains(&format!("`{}`", o.name())) {
            missing.push(format!("output {}", o.name()));
        }
    }
    assert!(
        missing.is_empty(),
        "README.md does not mention: {missing:#?}"
    );
}
