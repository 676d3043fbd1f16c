//! Ready-to-paste snippets for documentation: an iframe, a Markdown link, and a one-line summary
//! ("16×8 GPUs, TP 8 → dp 16, global batch 256, 1,954 steps"). Plain text work on a computed
//! report; no arithmetic happens here and nothing here touches the browser.

use crate::calc::frameworks::Concept;
use crate::calc::{Field, Framework, Output, RawInputs, Report};

/// The snippets for one state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippets {
    pub iframe: String,
    pub markdown: String,
    pub text: String,
}

/// The one-line summary of a configuration and what it computes (prefixed by the framework's
/// name unless it is axolotl, the default).
pub fn summary(framework: Framework, inputs: &RawInputs, report: &Report) -> String {
    let given = |f: Field| Some(inputs.get(f).trim()).filter(|t| !t.is_empty());
    let value = |o: Output| report.value(o).map(|v| v.pretty());
    let cluster = match (
        given(Field::WorldSize),
        given(Field::Nodes),
        given(Field::GpusPerNode),
    ) {
        (None, n, g) => format!("{}×{} GPUs", n.unwrap_or("1"), g.unwrap_or("8")),
        (Some(_), ..) => format!(
            "{} GPUs",
            value(Output::WorldSize).unwrap_or_else(|| "?".into())
        ),
    };
    let mut parallel: Vec<String> = Vec::new();
    for (c, tag) in [
        (Concept::Tp, "TP"),
        (Concept::Cp, "CP"),
        (Concept::Sp, "SP"),
        (Concept::Pp, "PP"),
    ] {
        if let Some(t) = framework.field_for(c).and_then(given).filter(|t| *t != "1") {
            parallel.push(format!("{tag} {t}"));
        }
    }
    // the default framework's summary (the original one) does not name it
    let mut head = if framework == Framework::default() {
        cluster
    } else {
        format!("{}: {cluster}", framework.name())
    };
    if !parallel.is_empty() {
        head = format!("{head}, {}", parallel.join(", "));
    }
    let tail = crate::calc::card::results_tail(report);
    format!("{head} → {}", tail.join(", "))
}

/// Escapes text for an HTML attribute value in double quotes.
fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Escapes the characters that end a Markdown link text.
fn md_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

/// The snippets for a state: `embed_url` goes into the iframe, `full_url` into the Markdown link.
pub fn snippets(
    framework: Framework,
    embed_url: &str,
    full_url: &str,
    inputs: &RawInputs,
    report: &Report,
) -> Snippets {
    let text = summary(framework, inputs, report);
    let iframe = format!(
        "<iframe class=\"dpcalc\" src=\"{}\" title=\"dpcalc: {}\" width=\"100%\" height=\"480\" style=\"border:0\" allow=\"clipboard-write\" loading=\"lazy\"></iframe>",
        attr(embed_url),
        attr(&text)
    );
    let markdown = format!(
        "[dpcalc: {}]({})",
        md_text(&text),
        full_url.replace(' ', "%20").replace(')', "%29")
    );
    Snippets {
        iframe,
        markdown,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(id: &str) -> Framework {
        Framework::from_id(id).expect("a registered framework")
    }
    use crate::calc::axolotl;

    fn raw(pairs: &[(Field, &str)]) -> RawInputs {
        RawInputs::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn summary_reads_like_the_docs_example() {
        let inputs = raw(&[
            (Field::Nodes, "16"),
            (Field::TensorParallelSize, "8"),
            (Field::MicroBatchSize, "2"),
            (Field::GradientAccumulationSteps, "8"),
            (Field::NumSamples, "500000"),
        ]);
        let report = axolotl::compute(&inputs);
        assert_eq!(
            summary(fw("axolotl"), &inputs, &report),
            "16×8 GPUs, TP 8 → dp 16, global batch 256, 1,954 steps"
        );
    }

    #[test]
    fn snippets_escape() {
        let inputs = raw(&[(Field::Nodes, "2")]);
        let report = axolotl::compute(&inputs);
        let s = snippets(
            fw("axolotl"),
            "https://x/?nodes=2&embed=1",
            "https://x/?nodes=2",
            &inputs,
            &report,
        );
        assert!(
            s.iframe.contains("src=\"https://x/?nodes=2&amp;embed=1\""),
            "{}",
            s.iframe
        );
        assert!(
            s.iframe.contains("allow=\"clipboard-write\"")
                && s.iframe.contains("title=\"dpcalc: 2×8 GPUs")
        );
        assert_eq!(
            s.markdown,
            "[dpcalc: 2×8 GPUs → dp 16, global batch 16](https://x/?nodes=2)"
        );
        let bad = raw(&[(Field::Nodes, "[x]")]);
        let s = snippets(fw("axolotl"), "u", "v", &bad, &axolotl::compute(&bad));
        assert!(
            s.markdown.starts_with("[dpcalc: \\[x\\]×8 GPUs"),
            "{}",
            s.markdown
        );
    }
}
