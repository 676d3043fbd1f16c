//! The summary card (src/calc/card.rs): well-formed, self-contained SVG for every framework, every
//! text escaped (a link's values are anyone's text), the values the report's, both themes'
//! colours, texts cut to fit, and the download URL and Markdown snippet around it.

use crate::common::report::urlencode;
use dpcalc::calc::card::{self, COLOURS, DATA_URL_PREFIX, FILE_NAME, HEIGHT, WIDTH};
use dpcalc::calc::{Framework, Level, Num, Output, Report};
use dpcalc::query::{self, Link};

// ---- a small XML well-formedness checker (XML 1.0 as the card uses it) -------------------------

#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
}

#[derive(Debug)]
enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self) -> Vec<&Element> {
        let mut out = vec![self];
        for c in &self.children {
            if let Node::Element(e) = c {
                out.extend(e.all());
            }
        }
        out
    }

    fn text(&self) -> String {
        self.children
            .iter()
            .map(|c| match c {
                Node::Text(t) => t.clone(),
                Node::Element(e) => e.text(),
            })
            .collect()
    }

    /// The text of every `<text>` element, in document order.
    fn texts(&self) -> Vec<String> {
        self.all()
            .into_iter()
            .filter(|e| e.name == "text")
            .map(Element::text)
            .collect()
    }
}

fn xml_char_ok(c: char) -> bool {
    matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_alphabetic() || c == '_' || c == ':')
        && cs.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
}

/// Decodes character data: only the five predefined entities and character references; a bare
/// `&` or `<` is an error.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(['&', '<']) {
        out.push_str(&rest[..i]);
        if rest[i..].starts_with('<') {
            return Err(format!("bare < in {s:?}"));
        }
        let end = rest[i..]
            .find(';')
            .ok_or_else(|| format!("unterminated & in {s:?}"))?;
        let entity = &rest[i + 1..i + end];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("bad reference &{e};"))?,
            e if e.starts_with('#') => e[1..]
                .parse::<u32>()
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("bad reference &{e};"))?,
            e => return Err(format!("unknown entity &{e};")),
        };
        out.push(c);
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Parses a document made of elements, attributes in double quotes and character data (no
/// declaration, DOCTYPE, comment or CDATA: the card has none, so any is an error).
fn parse(doc: &str) -> Result<Element, String> {
    if let Some(c) = doc.chars().find(|&c| !xml_char_ok(c)) {
        return Err(format!(
            "character U+{:04X} is not allowed in XML",
            c as u32
        ));
    }
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut rest = doc;
    while !rest.is_empty() {
        let lt = rest.find('<').unwrap_or(rest.len());
        let data = &rest[..lt];
        if !data.is_empty() {
            if data.contains("]]>") {
                return Err("]]> in text".into());
            }
            let text = unescape(data)?;
            match stack.last_mut() {
                Some(e) => e.children.push(Node::Text(text)),
                None if data.trim().is_empty() => {}
                None => return Err(format!("text outside the root: {data:?}")),
            }
        }
        rest = &rest[lt..];
        if rest.is_empty() {
            break;
        }
        let gt = rest.find('>').ok_or("unterminated tag")?;
        // a `>` inside a quoted attribute value would end the tag early: values must escape it
        // (the card's do); the quote count below catches a tag cut in a value
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or("close tag without open")?;
            if open.name != name.trim() {
                return Err(format!("<{}> closed by </{name}>", open.name));
            }
            match stack.last_mut() {
                Some(parent) => parent.children.push(Node::Element(open)),
                None if root.is_none() => root = Some(open),
                None => return Err("two roots".into()),
            }
            continue;
        }
        if tag.starts_with('!') || tag.starts_with('?') {
            return Err(format!("unexpected markup <{tag}>"));
        }
        let (body, empty) = match tag.strip_suffix('/') {
            Some(b) => (b, true),
            None => (tag, false),
        };
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = &body[..name_end];
        if !is_name(name) {
            return Err(format!("bad element name {name:?}"));
        }
        let mut attrs: Vec<(String, String)> = Vec::new();
        let mut a = body[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a
                .find('=')
                .ok_or_else(|| format!("attribute without = in <{tag}>"))?;
            let an = a[..eq].trim();
            if !is_name(an) {
                return Err(format!("bad attribute name {an:?} in <{tag}>"));
            }
            let v = a[eq + 1..].trim_start();
            let v = v
                .strip_prefix('"')
                .ok_or_else(|| format!("unquoted attribute {an} in <{tag}>"))?;
            let close = v
                .find('"')
                .ok_or_else(|| format!("unterminated attribute {an} in <{tag}>"))?;
            let value = unescape(&v[..close])?;
            if attrs.iter().any(|(n, _)| n == an) {
                return Err(format!("attribute {an} twice in <{name}>"));
            }
            attrs.push((an.to_string(), value));
            let after = &v[close + 1..];
            if !after.is_empty() && !after.starts_with(char::is_whitespace) {
                return Err(format!("no space after attribute {an} in <{tag}>"));
            }
            a = after.trim_start();
        }
        let el = Element {
            name: name.to_string(),
            attrs,
            children: Vec::new(),
        };
        if empty {
            match stack.last_mut() {
                Some(parent) => parent.children.push(Node::Element(el)),
                None if root.is_none() => root = Some(el),
                None => return Err("two roots".into()),
            }
        } else {
            if stack.is_empty() && root.is_some() {
                return Err("two roots".into());
            }
            stack.push(el);
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!("<{}> never closed", open.name));
    }
    root.ok_or_else(|| "no root element".into())
}

#[test]
fn the_checker_refuses_what_is_not_well_formed() {
    for bad in [
        "<svg><text>a < b</text></svg>",
        "<svg><text>a & b</text></svg>",
        "<svg><text>a</svg>",
        "<svg a=\"1\" a=\"2\"/>",
        "<svg a=\"x\"y=\"1\"/>",
        "<svg a='1'/>",
        "<svg>\u{1}</svg>",
        "<svg/><svg/>",
        "<svg><!-- x --></svg>",
        "<svg><text>&nbsp;</text></svg>",
        "<svg><text>]]></text></svg>",
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?}");
    }
    let ok = parse("<svg a=\"&lt;&amp;&quot;\"><text>x &#38; &#x3C;y</text></svg>").unwrap();
    assert_eq!(ok.attr("a"), Some("<&\""));
    assert_eq!(ok.texts(), ["x & <y"]);
}

// ---- the card ------------------------------------------------------------------------------------

const URL: &str = "https://dpcalc.example/?framework=axolotl&version=0.21.0&nodes=16";

fn link(q: &str) -> (Link, Report) {
    let link = query::decode(q);
    let report = link.report();
    (link, report)
}

fn card_of(q: &str, url: &str) -> (String, Element, Link, Report) {
    let (l, report) = link(q);
    let svg = card::svg(l.framework, l.release().id, &l.inputs, &report, url);
    let root = parse(&svg).unwrap_or_else(|e| panic!("{q}: {e}\n{svg}"));
    (svg, root, l, report)
}

/// Nothing a sanitiser strips or a strict CSP blocks, a fixed size, and every text within the
/// card's width (columns of a 0.6 em monospace at the text's size, from its x).
fn check_self_contained(root: &Element, what: &str) {
    assert_eq!(root.name, "svg", "{what}");
    assert_eq!(root.attr("xmlns"), Some("http://www.w3.org/2000/svg"));
    assert_eq!(root.attr("width"), Some(WIDTH.to_string().as_str()));
    assert_eq!(root.attr("height"), Some(HEIGHT.to_string().as_str()));
    assert_eq!(
        root.attr("viewBox"),
        Some(format!("0 0 {WIDTH} {HEIGHT}").as_str())
    );
    let allowed = ["svg", "title", "style", "g", "rect", "line", "text"];
    for e in root.all() {
        assert!(allowed.contains(&e.name.as_str()), "{what}: <{}>", e.name);
        for (n, v) in &e.attrs {
            assert!(
                !n.contains("href") && !n.starts_with("on") && n != "style",
                "{what}: attribute {n}"
            );
            if n != "xmlns" {
                assert!(!v.contains("url("), "{what}: {n}={v}");
                assert!(!v.contains("://"), "{what}: {n}={v}");
            }
        }
    }
    let style: String = root
        .all()
        .iter()
        .filter(|e| e.name == "style")
        .map(|e| e.text())
        .collect();
    assert!(
        !style.contains("@import") && !style.contains("url(") && !style.contains("@font-face"),
        "{what}: {style}"
    );
    // every text fits between its x and the card's right edge
    for g in root.all().iter().filter(|e| e.name == "g") {
        let size: f64 = g.attr("font-size").map_or(16.0, |s| s.parse().unwrap());
        for t in g.children.iter().filter_map(|c| match c {
            Node::Element(e) if e.name == "text" => Some(e),
            _ => None,
        }) {
            let x: f64 = t.attr("x").unwrap().parse().unwrap();
            let width = t.text().chars().count() as f64 * 0.6 * size;
            let room = match t.attr("text-anchor") {
                Some("end") => x - 10.0,
                _ => WIDTH as f64 - 10.0 - x,
            };
            assert!(
                width <= room,
                "{what}: {:?} ({width}px) overflows ({room}px)",
                t.text()
            );
        }
    }
}

#[test]
fn every_framework_gives_a_well_formed_self_contained_card() {
    let mut n = 0;
    for &fw in Framework::ALL {
        for q in [
            format!("framework={}", fw.id()),
            format!("framework={}&nodes=4&gpus_per_node=8", fw.id()),
            format!(
                "framework={}&nodes=3&gpus_per_node=7&micro_batch_size=0",
                fw.id()
            ),
        ] {
            for r in fw.releases() {
                let q = format!("{q}&version={}", r.id);
                let (svg, root, _, _) = card_of(&q, URL);
                check_self_contained(&root, &q);
                // the file's own style and nothing the page would need to fetch
                assert!(svg.contains("<style>"), "{q}");
                assert!(root
                    .texts()
                    .iter()
                    .any(|t| t == &format!("{} {}", fw.name(), r.id)));
                n += 1;
            }
        }
    }
    assert!(n >= 18, "{n}");
}

fn pretty(report: &Report, o: Output) -> String {
    report.value(o).expect("a value").pretty()
}

#[test]
fn the_results_are_the_reports() {
    let q = "nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000&version=0.21.0";
    let (_, root, l, report) = card_of(q, URL);
    let texts = root.texts();
    for o in card::RESULTS {
        let v = pretty(&report, *o);
        assert!(texts.contains(&v), "{o:?} = {v} not in {texts:?}");
        let label = l.framework.label(*o).0;
        let i = texts.iter().position(|t| t == label).expect(label);
        assert_eq!(texts[i + 1], v, "{label}'s value follows it");
    }
    assert_eq!(pretty(&report, Output::GlobalBatchSize), "256");
    assert_eq!(pretty(&report, Output::MaxSteps), "1,954");
    // the key inputs with their given values, and what an absent one means
    let at = |key: &str| texts[texts.iter().position(|t| t == key).expect(key) + 1].clone();
    assert_eq!(at("nodes"), "16");
    assert_eq!(at("tensor_parallel_size"), "8");
    assert_eq!(at("num_samples"), "500000");
    assert_eq!(at("gpus_per_node"), "8 (default)");
    // the title names framework, release and results; no error line
    let title = root
        .all()
        .into_iter()
        .find(|e| e.name == "title")
        .unwrap()
        .text();
    assert_eq!(
        title,
        "dpcalc: axolotl 0.21.0 → 128 GPUs, dp 16, global batch 256, 1,954 steps"
    );
    assert!(!texts.iter().any(|t| t.starts_with("Error")));
    // the link in text
    assert!(texts.contains(&URL.to_string()), "{texts:?}");
}

#[test]
fn the_first_error_is_on_the_card() {
    let q = "nodes=3&gpus_per_node=7&tensor_parallel_size=2&version=0.21.0";
    let (_, root, _, report) = card_of(q, URL);
    let first = report
        .diags
        .iter()
        .find(|d| d.level == Level::Error)
        .expect("an error");
    let texts = root.texts();
    let shown = texts
        .iter()
        .find(|t| t.starts_with("Error at "))
        .expect("an error line");
    assert!(
        shown.starts_with(&format!("Error at {}: ", first.field.key())),
        "{shown}"
    );
    let words: Vec<&str> = first.message.split_whitespace().take(4).collect();
    assert!(
        shown.contains(&words.join(" ")),
        "{shown} / {}",
        first.message
    );
    assert!(root
        .all()
        .iter()
        .any(|e| e.name == "title" && e.text().ends_with("with errors")));
}

#[test]
fn a_model_adds_its_memory_per_gpu_and_whether_it_fits() {
    for (q, fits) in [
        (
            "version=0.21.0&base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&micro_batch_size=1",
            false,
        ),
        (
            "version=0.21.0&base_model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&nodes=4&zero_optimization.stage=3&micro_batch_size=1",
            true,
        ),
    ] {
        let (_, root, _, report) = card_of(q, URL);
        check_self_contained(&root, q);
        let bytes = |o| match report.value(o) {
            Some(Num::Int(v)) => v as u128,
            other => panic!("{q}: {o:?} {other:?}"),
        };
        let total = bytes(Output::MemoryOnDeviceBytes);
        let cap = bytes(Output::GpuUsableMemoryBytes);
        assert_eq!(total <= cap, fits, "{q}: the case fits as expected");
        let texts = root.texts();
        let i = texts
            .iter()
            .position(|t| t == "Estimated memory per GPU")
            .unwrap_or_else(|| panic!("{q}: {texts:?}"));
        let mark = if fits { "fits" } else { "does not fit" };
        assert_eq!(
            texts[i + 1],
            format!("{} of {} · {mark}", dpcalc::calc::num::gib(total), dpcalc::calc::num::gib(cap)),
            "{q}"
        );
        // the model and the GPU are among the inputs
        assert!(texts.contains(&"meta-llama/Llama-3.1-70B".to_string()), "{texts:?}");
        assert!(texts.contains(&"h100-sxm".to_string()), "{texts:?}");
    }
    // no model, no memory line
    let (_, root, _, _) = card_of("version=0.21.0&nodes=2", URL);
    assert!(!root.texts().iter().any(|t| t.contains("memory")));
}

#[test]
fn hostile_values_are_escaped_text() {
    let hostile = "<script>alert(\"x\")</script>&amp;'\u{1}]]>";
    let q = format!(
        "version=0.21.0&nodes={}&base_model={}&num_samples=1",
        urlencode(hostile),
        urlencode("\"/><image href=\"https://evil/x.png\"/><text>")
    );
    let url = format!("https://x/?a=<b>&c=\"d\"&e='f'{}\u{7}", "z".repeat(10));
    let (svg, root, _, _) = card_of(&q, &url);
    check_self_contained(&root, &q);
    assert!(!svg.contains("<script"), "{svg}");
    assert!(!svg.contains("<image"), "{svg}");
    let texts = root.texts();
    // the hostile text comes back as text (the control character replaced)
    let shown = "<script>alert(\"x\")</script>&amp;'\u{FFFD}]]>";
    assert!(
        texts.iter().any(|t| t.starts_with(&shown[..20])),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("\"/><image")),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"https://x/?a=<b>&c=\"d\"&e='f'zzzzzzzzzz\u{FFFD}".to_string()),
        "{texts:?}"
    );
    // the preview too
    let (l, report) = link(&q);
    let preview = card::preview(l.framework, l.release().id, &l.inputs, &report, &url);
    let p = parse(&preview).unwrap();
    assert_eq!(p.texts(), texts);
}

#[test]
fn long_values_are_cut_with_an_ellipsis() {
    let long = "9".repeat(200);
    let q = format!(
        "version=0.21.0&num_samples={long}&base_model={}",
        "m".repeat(300)
    );
    let url = format!("https://x/?{}", "a".repeat(500));
    let (_, root, _, _) = card_of(&q, &url);
    check_self_contained(&root, "long");
    let texts = root.texts();
    let samples = &texts[texts.iter().position(|t| t == "num_samples").unwrap() + 1];
    assert!(
        samples.ends_with('…') && samples.starts_with("999"),
        "{samples}"
    );
    // the link takes two lines, the second cut
    let lines: Vec<&String> = texts
        .iter()
        .filter(|t| t.starts_with("https://x/") || t.starts_with("aaa"))
        .collect();
    assert_eq!(lines.len(), 2, "{texts:?}");
    assert!(lines[1].ends_with('…'), "{lines:?}");
    // wide characters count double
    assert_eq!(card::truncate("漢字漢字漢字", 7), "漢字漢…");
    assert_eq!(card::truncate("abc", 3), "abc");
    assert_eq!(card::wrap("one two three", 8, 2), ["one two", "three"]);
    assert_eq!(
        card::wrap("one two three four", 8, 2),
        ["one two", "three f…"]
    );
}

#[test]
fn both_themes_have_their_colours() {
    let (svg, root, l, report) = card_of("version=0.21.0&nodes=2", URL);
    let style = root
        .all()
        .into_iter()
        .find(|e| e.name == "style")
        .expect("a style")
        .text();
    let (light, dark) = style
        .split_once("@media (prefers-color-scheme: dark)")
        .expect("a dark theme");
    for (class, l_colour, d_colour) in COLOURS {
        assert!(
            light.contains(&format!(".{class}{{")) && light.contains(l_colour),
            "{class}"
        );
        assert!(
            dark.contains(&format!(".{class}{{")) && dark.contains(d_colour),
            "{class}"
        );
        assert_ne!(l_colour, d_colour);
    }
    // every coloured element has its class and the light colour as a fallback attribute
    for e in root.all() {
        if let Some(class) = e.attr("class").filter(|c| c.starts_with("c-")) {
            let (_, colour, _) = COLOURS.iter().find(|(c, ..)| *c == class).unwrap();
            assert!(
                e.attr("fill") == Some(colour) || e.attr("stroke") == Some(colour),
                "<{}> {class}",
                e.name
            );
        }
    }
    // the page's preview: the same picture without its style
    let preview = card::preview(l.framework, l.release().id, &l.inputs, &report, URL);
    assert!(!preview.contains("<style"));
    assert_eq!(parse(&preview).unwrap().texts(), root.texts());
    assert!(svg.len() > preview.len());
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn the_download_url_and_the_markdown() {
    let q = "nodes=16&tensor_parallel_size=8&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=500000&version=0.21.0";
    let (svg, _, l, report) = card_of(q, URL);
    let href = card::data_url(&svg);
    let body = href.strip_prefix(DATA_URL_PREFIX).expect("the prefix");
    assert!(
        body.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~!*():;,/=@%".contains(&b)),
        "{body}"
    );
    assert!(!body.contains('#') && !body.contains(' ') && !body.contains('"'));
    assert_eq!(percent_decode(body), svg);
    let md = card::markdown(l.framework, l.release().id, &report, URL);
    assert_eq!(
        md,
        format!("[![dpcalc: axolotl 0.21.0 → 128 GPUs, dp 16, global batch 256, 1,954 steps]({FILE_NAME})]({URL})")
    );
    // a hostile link cannot end the link or the alt text early
    let md = card::markdown(l.framework, "[x]", &report, "https://x/?a=(b) c");
    assert!(md.starts_with("[![dpcalc: axolotl \\[x\\] → "), "{md}");
    assert!(md.ends_with("](https://x/?a=%28b%29%20c)"), "{md}");
}
