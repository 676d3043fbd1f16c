//! Python numbers, as the frameworks compute with them.
//!
//! The frameworks are Python: their counts are unbounded `int`s, their ratios IEEE doubles, and
//! `//`, `math.floor`, `math.ceil`, `int()` and `min()` have exact meanings that a calculator must
//! copy to agree at rounding boundaries. This module owns those meanings and nothing else: it knows
//! no framework. Integers are `i128` with checked arithmetic; a result beyond that range is an
//! error, never a wrapped number.

use std::cmp::Ordering;
use std::fmt;

/// A value as Python holds it: an `int` or a `float`.
///
/// The distinction is visible to users: axolotl logs `158.0` on its packing path and `158` on the
/// plain one, and hands the float to the Trainer as `max_steps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

/// An arithmetic step that Python would refuse or that leaves the range dpcalc represents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumError {
    /// Python raises `ZeroDivisionError` with this text.
    ZeroDivision(&'static str),
    /// A float is infinite or NaN where Python's `int()`/`math.ceil` would raise `OverflowError`/`ValueError`.
    NotFinite,
    /// The exact value is beyond ±2^127; Python would carry on with a big int, dpcalc stops.
    TooLarge,
}

impl fmt::Display for NumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumError::ZeroDivision(msg) => write!(f, "ZeroDivisionError: {msg}"),
            NumError::NotFinite => {
                f.write_str("OverflowError: cannot convert float infinity to integer")
            }
            NumError::TooLarge => f.write_str("the result is too large to represent exactly"),
        }
    }
}

pub type NumResult = Result<Num, NumError>;

/// Largest magnitude of a float that converts to an `i128` exactly (2^127 itself does not fit).
const I128_LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

impl Num {
    /// The value as Python's `float()` would convert it (int → nearest double).
    pub fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }

    /// Python truthiness: `0` and `0.0` are false.
    pub fn truthy(self) -> bool {
        match self {
            Num::Int(i) => i != 0,
            Num::Float(x) => x != 0.0,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Num::Float(_))
    }

    /// The exact value for `data-value`: digits, a leading `-` when negative, and for a float a
    /// `.` with the shortest digits that round-trip (`158.0`, `466.79999999999995`). Never an
    /// exponent and never a thousands separator, so it stays machine-readable.
    pub fn raw(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(x) => float_raw(x),
        }
    }

    /// The value for people: thousands separated by `,`; a float keeps its `.0` so it is not
    /// mistaken for an int.
    pub fn pretty(self) -> String {
        let raw = self.raw();
        let (sign, rest) = match raw.strip_prefix('-') {
            Some(r) => ("-", r),
            None => ("", raw.as_str()),
        };
        let (int_part, frac) = match rest.find('.') {
            Some(p) => rest.split_at(p),
            None => (rest, ""),
        };
        let mut grouped = String::with_capacity(int_part.len() + int_part.len() / 3);
        for (i, c) in int_part.chars().enumerate() {
            if i > 0 && (int_part.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{sign}{grouped}{frac}")
    }
}

/// Shortest round-trip positional digits of a finite float, with `.0` when integral.
pub fn float_raw(x: f64) -> String {
    // Rust's `Display` for f64 is the shortest representation that round-trips, always positional.
    let s = format!("{x}");
    if s.contains('.') || !x.is_finite() {
        s
    } else {
        format!("{s}.0")
    }
}

/// Python's `str(float)`/`repr(float)` for messages quoted from a framework (`4.0`, `0.25`, `1e-05`).
pub fn float_repr(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let exp = x.abs().log10().floor() as i32;
    if (-4..16).contains(&exp) {
        float_raw(x)
    } else {
        // `{:e}` is shortest round-trip too; Python writes the exponent with a sign and two digits.
        let s = format!("{x:e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", e.abs())
    }
}

/// Python's `int(x)` on a float: truncation toward zero.
pub fn int_of(x: f64) -> NumResult {
    float_to_int(x.trunc())
}

/// Python's `math.floor(x)` on a float (an `int`).
pub fn floor(x: f64) -> NumResult {
    float_to_int(x.floor())
}

/// Python's `math.ceil(x)` on a float (an `int`).
pub fn ceil(x: f64) -> NumResult {
    float_to_int(x.ceil())
}

fn float_to_int(integral: f64) -> NumResult {
    if !integral.is_finite() {
        return Err(NumError::NotFinite);
    }
    if integral.abs() >= I128_LIMIT {
        return Err(NumError::TooLarge);
    }
    Ok(Num::Int(integral as i128))
}

/// Python's `float / float` (true division).
pub fn fdiv(a: f64, b: f64) -> Result<f64, NumError> {
    if b == 0.0 {
        return Err(NumError::ZeroDivision("float division by zero"));
    }
    finite(a / b)
}

/// Python's `float // float`, computed the way CPython does (fmod, then a correction), which is
/// not always `floor(a / b)`.
pub fn ffloordiv(vx: f64, wx: f64) -> Result<f64, NumError> {
    if wx == 0.0 {
        return Err(NumError::ZeroDivision("float floor division by zero"));
    }
    let m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 && ((wx < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    let result = if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        0.0f64.copysign(vx / wx)
    };
    finite(result)
}

fn finite(x: f64) -> Result<f64, NumError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(NumError::NotFinite)
    }
}

/// Python's `a * b` on two numbers: int × int stays exact, anything with a float is a float.
pub fn mul(a: Num, b: Num) -> NumResult {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.checked_mul(y).map(Num::Int).ok_or(NumError::TooLarge),
        _ => finite(a.to_f64() * b.to_f64()).map(Num::Float),
    }
}

/// Python's `a - b` (used for `... - 1`).
pub fn sub(a: Num, b: Num) -> NumResult {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.checked_sub(y).map(Num::Int).ok_or(NumError::TooLarge),
        _ => finite(a.to_f64() - b.to_f64()).map(Num::Float),
    }
}

/// Python's `int // int` (floor division).
pub fn ifloordiv(a: i128, b: i128) -> NumResult {
    if b == 0 {
        return Err(NumError::ZeroDivision("integer division or modulo by zero"));
    }
    let q = a.checked_div(b).ok_or(NumError::TooLarge)?;
    let adjust = a % b != 0 && ((a < 0) != (b < 0));
    Ok(Num::Int(if adjust { q - 1 } else { q }))
}

/// Python's exact comparison of two numbers (an int and a float compare by value, not by
/// converting the int to a float).
pub fn cmp(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).reverse(),
    }
}

fn cmp_int_float(i: i128, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f >= I128_LIMIT {
        return Ordering::Less;
    }
    if f < -I128_LIMIT {
        return Ordering::Greater;
    }
    let fl = f.floor();
    match i.cmp(&(fl as i128)) {
        Ordering::Equal if f > fl => Ordering::Less,
        other => other,
    }
}

/// Python's `min(a, b)`: the first argument unless the second is strictly smaller.
pub fn min(a: Num, b: Num) -> Num {
    if cmp(b, a) == Ordering::Less {
        b
    } else {
        a
    }
}

/// Python's `int / int` (true division): the exact quotient rounded once to the nearest double,
/// ties to even, as CPython does for any size of int (`a as f64 / b as f64` rounds twice once an
/// operand is beyond 2^53). `Err` for a zero divisor, or when the scaled operands leave `i128`.
pub fn itruediv(a: i128, b: i128) -> Result<f64, NumError> {
    if b == 0 {
        return Err(NumError::ZeroDivision("division by zero"));
    }
    const EXACT: u128 = 1 << 53;
    let negative = (a < 0) != (b < 0);
    let (n, d) = (a.unsigned_abs(), b.unsigned_abs());
    let magnitude = if n == 0 {
        0.0
    } else if n <= EXACT && d <= EXACT {
        // both operands are doubles exactly, so IEEE division rounds once
        n as f64 / d as f64
    } else {
        // q = n / (d · 2^shift) with 55 or 56 significant bits; a non-zero remainder is folded
        // into the last bit (sticky), so the one rounding of `q as f64` is the correct one
        let bits = |x: u128| 128 - x.leading_zeros() as i32;
        let shift = bits(n) - bits(d) - 55;
        let (num, den) = if shift >= 0 {
            (n, d.checked_shl(shift as u32).ok_or(NumError::TooLarge)?)
        } else {
            let s = (-shift) as u32;
            if bits(n) + s as i32 > 127 {
                return Err(NumError::TooLarge);
            }
            (n << s, d)
        };
        let (q, r) = (num / den, num % den);
        let q = q | u128::from(r != 0);
        (q as f64) * 2f64.powi(shift)
    };
    finite(if negative { -magnitude } else { magnitude })
}

/// Bytes in GiB, three significant digits (the page's memory figures).
pub fn gib(bytes: u128) -> String {
    let g = bytes as f64 / 1_073_741_824.0;
    if g >= 100.0 {
        format!("{g:.0} GiB")
    } else if g >= 10.0 {
        format!("{g:.1} GiB")
    } else {
        format!("{g:.2} GiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_keeps_float_marker_and_shortest_digits() {
        assert_eq!(Num::Float(158.0).raw(), "158.0");
        assert_eq!(Num::Float(389.0 * 1.2).raw(), "466.79999999999995");
        assert_eq!(Num::Float(-1.0).raw(), "-1.0");
        assert_eq!(Num::Float(1e20).raw(), "100000000000000000000.0");
        assert_eq!(Num::Int(-3).raw(), "-3");
    }

    #[test]
    fn pretty_groups_thousands() {
        assert_eq!(Num::Int(1_234_567).pretty(), "1,234,567");
        assert_eq!(Num::Int(999).pretty(), "999");
        assert_eq!(Num::Float(-12345.5).pretty(), "-12,345.5");
        assert_eq!(Num::Int(-1000).pretty(), "-1,000");
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(float_repr(4.0), "4.0");
        assert_eq!(float_repr(0.25), "0.25");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1234567890123456.0), "1234567890123456.0");
        assert_eq!(float_repr(1.0 / 3.0), "0.3333333333333333");
    }

    #[test]
    fn floordiv_follows_cpython_not_floor_of_quotient() {
        // 1 // 0.1 is 9.0 in Python, although 1 / 0.1 == 10.0.
        assert_eq!(ffloordiv(1.0, 0.1), Ok(9.0));
        assert_eq!((1.0f64 / 0.1).floor(), 10.0);
        assert_eq!(ffloordiv(5088.4, 32.0), Ok(159.0));
        assert_eq!(ffloordiv(-1.0, 3.0), Ok(-1.0));
        assert!(ffloordiv(1.0, 0.0).is_err());
    }

    #[test]
    fn rounding_helpers() {
        assert_eq!(int_of(-0.5), Ok(Num::Int(0)));
        assert_eq!(int_of(12.999), Ok(Num::Int(12)));
        assert_eq!(ceil(94.5), Ok(Num::Int(95)));
        assert_eq!(ceil(94.0), Ok(Num::Int(94)));
        assert_eq!(floor(-0.5), Ok(Num::Int(-1)));
        assert_eq!(ceil(f64::INFINITY), Err(NumError::NotFinite));
        assert_eq!(ceil(1e300), Err(NumError::TooLarge));
    }

    #[test]
    fn min_returns_first_on_tie_and_compares_exactly() {
        assert_eq!(min(Num::Float(100.0), Num::Int(100)), Num::Float(100.0));
        assert_eq!(min(Num::Int(100), Num::Float(100.0)), Num::Int(100));
        assert_eq!(min(Num::Float(158.0), Num::Int(100)), Num::Int(100));
        // 2^53 + 1 is not equal to the float 2^53.
        let big = (1i128 << 53) + 1;
        assert_eq!(
            cmp(Num::Int(big), Num::Float((1u64 << 53) as f64)),
            Ordering::Greater
        );
    }

    #[test]
    fn checked_int_arithmetic() {
        assert_eq!(
            mul(Num::Int(i128::MAX), Num::Int(2)),
            Err(NumError::TooLarge)
        );
        assert_eq!(mul(Num::Int(158), Num::Float(1.0)), Ok(Num::Float(158.0)));
        assert_eq!(sub(Num::Int(0), Num::Int(1)), Ok(Num::Int(-1)));
        assert_eq!(ifloordiv(7, 2), Ok(Num::Int(3)));
        assert_eq!(ifloordiv(-7, 2), Ok(Num::Int(-4)));
        assert!(ifloordiv(7, 0).is_err());
    }
}
