//! The inputs: one [`Field`] per config key, and the parsing of what a user typed into a typed
//! value or a message at that field.
//!
//! Field keys are axolotl's own config keys (plus the cluster shape, which axolotl reads from the
//! environment), so a value can be copied straight from a YAML file. Parsing is strict on purpose:
//! `1.5` in an integer field, `-2`, `1e309` or `8 GPUs` are errors at that field, never guessed.

use super::{Diag, Level};

/// What kind of value a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative whole number (a count); at most `u64::MAX`.
    Count,
    /// A finite, non-negative decimal number.
    Real,
    /// `true` or `false`.
    Flag,
}

macro_rules! fields {
    ($($variant:ident => $key:literal, $kind:ident;)*) => {
        /// One input of the calculator, named by its config key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Field { $($variant),* }

        impl Field {
            /// Every field, in form order.
            pub const ALL: &'static [Field] = &[$(Field::$variant),*];

            /// The config key: the URL parameter, the form's name, the YAML key.
            pub const fn key(self) -> &'static str {
                match self { $(Field::$variant => $key),* }
            }

            pub const fn kind(self) -> Kind {
                match self { $(Field::$variant => Kind::$kind),* }
            }
        }
    };
}

fields! {
    Nodes => "nodes", Count;
    GpusPerNode => "gpus_per_node", Count;
    WorldSize => "world_size", Count;
    TensorParallelSize => "tensor_parallel_size", Count;
    ContextParallelSize => "context_parallel_size", Count;
    MicroBatchSize => "micro_batch_size", Count;
    GradientAccumulationSteps => "gradient_accumulation_steps", Count;
    BatchSize => "batch_size", Count;
    NumSamples => "num_samples", Count;
    NumEpochs => "num_epochs", Real;
    MaxSteps => "max_steps", Count;
    SequenceLen => "sequence_len", Count;
    SamplePacking => "sample_packing", Flag;
    SamplePackingEffEst => "sample_packing_eff_est", Real;
    TotalNumTokens => "total_num_tokens", Count;
    WarmupSteps => "warmup_steps", Count;
    WarmupRatio => "warmup_ratio", Real;
    ValSetSize => "val_set_size", Real;
    EvalsPerEpoch => "evals_per_epoch", Count;
    SavesPerEpoch => "saves_per_epoch", Count;
}

impl Field {
    pub const COUNT: usize = Field::ALL.len();

    /// The field whose config key is `key`.
    pub fn from_key(key: &str) -> Option<Field> {
        Field::ALL.iter().copied().find(|f| f.key() == key)
    }

    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A parsed input: absent (the default applies), a value, or invalid (its error is already
/// reported at the field, and everything that needs it shows no value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<T> {
    Absent,
    Given(T),
    Invalid,
}

impl<T: Copy> Param<T> {
    /// The value, the default when absent, or `None` when invalid.
    pub fn or(self, default: T) -> Option<T> {
        match self {
            Param::Absent => Some(default),
            Param::Given(v) => Some(v),
            Param::Invalid => None,
        }
    }

    pub fn given(self) -> Option<T> {
        match self {
            Param::Given(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_given(self) -> bool {
        matches!(self, Param::Given(_))
    }
}

/// Largest accepted text, so a 100 KB URL value costs nothing to reject.
const MAX_LEN: usize = 64;

/// Parses a whole number field.
pub fn count(field: Field, raw: &str, diags: &mut Vec<Diag>) -> Param<u64> {
    let text = raw.trim();
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
    let text = raw.trim();
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
    let text = raw.trim();
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

/// Keeps a quoted bad value readable in a message.
pub(crate) fn shorten(text: &str) -> String {
    const SHOW: usize = 40;
    if text.chars().count() <= SHOW {
        text.to_string()
    } else {
        let head: String = text.chars().take(SHOW).collect();
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
