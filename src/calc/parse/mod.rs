//! Parsing what a user typed into a typed value or a message at that field. Strict on purpose:
//! `1.5` in an integer field, `-2`, `1e309` or `8 GPUs` are errors at that field, never guessed.
//!
//! Beside the value parsers: [`model`] (the model a link names) and [`settings`] (the model
//! stage's shared keys), which the frameworks' settings readers call to publish the plan.

use super::field::{Field, RawInputs};
use super::report::{Diag, Level};

pub use super::field::Param;

pub mod model;
pub mod settings;

/// The parallel sizes typed at `fields` (empty = 1, axolotl-style 0 = 1), or `None` when one is
/// unreadable or given twice.
pub fn sizes(fields: impl Iterator<Item = Field>, raw: &RawInputs) -> Option<Vec<u64>> {
    fields
        .map(|f| {
            if raw.conflict(f).is_some() {
                return None;
            }
            match count(f, raw.get(f), &mut Vec::new()) {
                Param::Absent | Param::Given(0) => Some(1),
                Param::Given(v) => Some(v),
                Param::Invalid => None,
            }
        })
        .collect()
}

/// A size as typed, leniently: a positive whole number, else 1 (what a fix is measured from).
pub fn size_or_one(raw: &RawInputs, field: Field) -> u64 {
    raw.get(field)
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(1)
}

/// A number as written (in a value or a message), if it is one.
pub fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok()
}

/// `text.trim()`, at once for the usual value: empty, or starting and ending with a visible ASCII
/// character. Unicode-aware trimming showed in the explorer's profile, whose every row reads its
/// inputs again; a first view, which computes one row, keeps `str::trim` alone (smaller).
fn trimmed(text: &str) -> &str {
    if cfg!(feature = "first") {
        return text.trim();
    }
    match text.as_bytes() {
        [] => text,
        [a, .., b] | [a @ b] if a.is_ascii_graphic() && b.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Largest accepted text, so a 100 KB URL value costs nothing to reject.
const MAX_LEN: usize = 64;

/// Parses a whole number field.
pub fn count(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<u64> {
    let text = trimmed(raw);
    if text.is_empty() {
        return Param::Absent;
    }
    let msg = if text.len() > MAX_LEN {
        "is far too long to be a number".to_string()
    } else if text.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<u64>() {
            Ok(v) => return Param::Given(v),
            Err(_) => format!("is too large (at most {})", u64::MAX),
        }
    } else if text.starts_with('-') && text[1..].parse::<f64>().is_ok() {
        "cannot be negative".to_string()
    } else if text.parse::<f64>().is_ok_and(f64::is_finite) {
        "must be a whole number".to_string()
    } else {
        "is not a number".to_string()
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Parses a decimal field (`num_epochs`, ratios, estimates).
pub fn real(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<f64> {
    let text = trimmed(raw);
    if text.is_empty() {
        return Param::Absent;
    }
    // Rust accepts "inf", "NaN" and "infinity"; only digits, a point, a sign and an exponent are numbers here.
    let plain = text.len() <= MAX_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    let msg = match text.parse::<f64>() {
        Ok(v) if plain && v.is_finite() && v >= 0.0 => return Param::Given(v),
        Ok(v) if plain && v.is_finite() => "cannot be negative",
        Ok(_) if plain => "is too large",
        _ if text.len() > MAX_LEN => "is far too long to be a number",
        _ => "is not a number",
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Parses a boolean field the way pydantic reads YAML/URL booleans.
pub fn flag(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<bool> {
    let text = trimmed(raw);
    if text.is_empty() {
        return Param::Absent;
    }
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Param::Given(true),
        "false" | "0" | "no" | "off" => Param::Given(false),
        _ => {
            diags.push(Diag::new(
                field,
                Level::Error,
                format!(
                    "{} must be true or false: \u{201c}{}\u{201d}",
                    field.key(),
                    shorten(text)
                ),
            ));
            Param::Invalid
        }
    }
}

/// Parses a whole number that may be negative (torchtitan's `-1` "fill in" values).
pub fn int(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<i64> {
    let text = trimmed(raw);
    if text.is_empty() {
        return Param::Absent;
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let msg = if text.len() > MAX_LEN {
        "is far too long to be a number"
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<i64>() {
            Ok(v) => return Param::Given(v),
            Err(_) => "is too large",
        }
    } else if text.parse::<f64>().is_ok_and(f64::is_finite) {
        "must be a whole number"
    } else {
        "is not a number"
    };
    diags.push(Diag::new(
        field,
        Level::Error,
        format!("{} {msg}: \u{201c}{}\u{201d}", field.key(), shorten(text)),
    ));
    Param::Invalid
}

/// Whether a first view's build reads `field` as absent: an input only the full app reads
/// ([`crate::calc::field::APP_ONLY`]; a link that gives one opens the app). With the field known
/// where it is read, the build then holds neither its parsing nor what follows from its value.
#[inline(always)]
fn app_only(field: Field) -> bool {
    cfg!(feature = "first") && crate::calc::field::is_app_only(field)
}

/// Reads the fields of one set of inputs, turning a field given several times (a hand-edited
/// link) into an error that shows every value, so no framework module picks one silently.
pub struct Reader<'a> {
    pub raw: &'a RawInputs,
    pub diags: &'a mut Vec<Diag>,
}

impl Reader<'_> {
    fn conflict<T>(&mut self, field: Field) -> Option<Param<T>> {
        let values = self.raw.conflict(field)?;
        let shown: Vec<String> = values
            .iter()
            .map(|v| format!("\u{201c}{}\u{201d}", shorten(v)))
            .collect();
        self.diags.push(Diag::new(
            field,
            Level::Error,
            format!(
                "{} is given {} times in the link ({}); keep one",
                field.key(),
                values.len(),
                shown.join(", ")
            ),
        ));
        Some(Param::Invalid)
    }

    // Each read is a thin wrapper, inlined in a first view's build where its field is known, so
    // an input only the app reads ([`app_only`]) is settled as absent there at compile time;
    // the reading itself is one function per kind, called as before ([`Reader::read`]).

    #[cfg_attr(feature = "first", inline(always))]
    pub fn count(&mut self, field: Field) -> Param<u64> {
        self.gated(field, count)
    }

    #[cfg_attr(feature = "first", inline(always))]
    pub fn real(&mut self, field: Field) -> Param<f64> {
        self.gated(field, real)
    }

    #[cfg_attr(feature = "first", inline(always))]
    pub fn flag(&mut self, field: Field) -> Param<bool> {
        self.gated(field, flag)
    }

    #[cfg_attr(feature = "first", inline(always))]
    pub fn int(&mut self, field: Field) -> Param<i64> {
        self.gated(field, int)
    }

    /// Free text, trimmed; its syntax is the caller's to check.
    #[cfg_attr(feature = "first", inline(always))]
    pub fn text(&mut self, field: Field) -> Param<String> {
        self.gated(field, text)
    }

    #[cfg_attr(feature = "first", inline(always))]
    fn gated<T>(
        &mut self,
        field: Field,
        parse: fn(Field, &str, &mut Vec<Diag>) -> Param<T>,
    ) -> Param<T> {
        if app_only(field) {
            return Param::Absent;
        }
        self.read(field, parse)
    }

    /// A field's value by `parse`, or the error of a field given several times.
    #[cfg_attr(feature = "first", inline(never))]
    fn read<T>(
        &mut self,
        field: Field,
        parse: fn(Field, &str, &mut Vec<Diag>) -> Param<T>,
    ) -> Param<T> {
        self.conflict(field)
            .unwrap_or_else(|| parse(field, self.raw.get(field), self.diags))
    }
}

/// Free text, trimmed, with no error of its own (its syntax is the caller's to check).
fn text(_: Field, raw: &str, _: &mut Vec<Diag>) -> Param<String> {
    match trimmed(raw) {
        "" => Param::Absent,
        t => Param::Given(t.to_string()),
    }
}

/// Keeps a quoted bad value readable in a message.
pub(crate) fn shorten(text: &str) -> String {
    const SHOW: usize = 40;
    // a control character (NUL, ESC, a line break) is shown as U+FFFD: a message is one line,
    // on the page and on a terminal (`dpcalc check`)
    let shown = text
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c });
    if text.chars().count() <= SHOW {
        shown.collect()
    } else {
        let head: String = shown.take(SHOW).collect();
        format!("{head}\u{2026}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(raw: &str) -> (Param<u64>, Vec<Diag>) {
        let mut d = Vec::new();
        (count(Field::Nodes, raw, &mut d), d)
    }

    fn r(raw: &str) -> (Param<f64>, Vec<Diag>) {
        let mut d = Vec::new();
        (real(Field::NumEpochs, raw, &mut d), d)
    }

    #[test]
    fn trimmed_is_trim() {
        for t in [
            "",
            " ",
            "8",
            " 8",
            "8 ",
            "\t8\n",
            "88",
            "a b",
            "\u{3000}8\u{3000}",
            "é",
            "8\u{a0}",
            "\u{85}x",
        ] {
            assert_eq!(trimmed(t), t.trim(), "{t:?}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(c("").0, Param::Absent);
        assert_eq!(c(" 8 ").0, Param::Given(8));
        assert_eq!(c("18446744073709551615").0, Param::Given(u64::MAX));
        for (bad, says) in [
            ("18446744073709551616", "too large"),
            ("-1", "negative"),
            ("1.5", "whole number"),
            ("1e3", "whole number"),
            ("eight", "not a number"),
            ("NaN", "not a number"),
            ("0x10", "not a number"),
        ] {
            let (p, d) = c(bad);
            assert_eq!(p, Param::Invalid, "{bad}");
            assert!(d[0].message.contains(says), "{bad}: {}", d[0].message);
            assert_eq!(d[0].field, Field::Nodes);
        }
        let long = "9".repeat(100_000);
        let (p, d) = c(&long);
        assert_eq!(p, Param::Invalid);
        assert!(d[0].message.len() < 200);
    }

    #[test]
    fn reals() {
        assert_eq!(r("1.5").0, Param::Given(1.5));
        assert_eq!(r("2").0, Param::Given(2.0));
        assert_eq!(r("1e-3").0, Param::Given(0.001));
        for bad in ["1e309", "inf", "NaN", "-0.5", "1,5", "infinity"] {
            assert_eq!(r(bad).0, Param::Invalid, "{bad}");
        }
    }

    #[test]
    fn flags() {
        let mut d = Vec::new();
        assert_eq!(
            flag(Field::SamplePacking, "True", &mut d),
            Param::Given(true)
        );
        assert_eq!(flag(Field::SamplePacking, "0", &mut d), Param::Given(false));
        assert_eq!(flag(Field::SamplePacking, "maybe", &mut d), Param::Invalid);
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn keys_round_trip() {
        for &f in Field::ALL {
            assert_eq!(Field::from_key(f.key()), Some(f));
            assert_eq!(Field::ALL[f.index()], f);
        }
        assert_eq!(Field::from_key("nope"), None);
    }
}
