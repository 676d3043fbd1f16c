//! nanotron's grid stage: the world-size checks of `ParallelContext.__init__` (0.4's three, HEAD's
//! one assertion and its `_init_parallel_groups` reshape), with the products they print.

use super::*;

/// The product of `factors`, exactly, in decimal (Python's integers do not overflow).
pub(super) fn product_text(factors: &[u64]) -> String {
    // little-endian base 1e9 limbs
    let mut limbs: Vec<u64> = vec![1];
    for &f in factors {
        let mut carry: u128 = 0;
        for limb in limbs.iter_mut() {
            let v = u128::from(*limb) * u128::from(f) + carry;
            *limb = (v % 1_000_000_000) as u64;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push((carry % 1_000_000_000) as u64);
            carry /= 1_000_000_000;
        }
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut text = limbs.last().map_or(String::new(), |l| l.to_string());
    for l in limbs.iter().rev().skip(1) {
        text.push_str(&format!("{l:09}"));
    }
    text
}

/// The product of `factors`, when it fits.
pub(super) fn product(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f))
}

/// The field to blame for a model-parallel product (the first factor above 1).
pub(super) fn model_field(c: &Par, version: Version) -> Field {
    let candidates: &[(Field, u64)] = match version {
        Version::V04 => &[
            (Field::Tp, c.tp),
            (Field::Pp, c.pp),
            (Field::ExpertParallelSize, c.ep),
        ],
        Version::Head => &[
            (Field::Tp, c.tp),
            (Field::Pp, c.pp),
            (Field::ContextParallelSize, c.cp),
        ],
    };
    candidates
        .iter()
        .find(|(_, v)| *v == 0)
        .or_else(|| candidates.iter().find(|(_, v)| *v > 1))
        .map_or(Field::Tp, |(f, _)| *f)
}

/// The fix when `tp·pp[·x]` = `model` and dp do not fill `ws` GPUs.
pub(super) fn dp_fix(ws: u64, model: Option<u64>, product: &str) -> String {
    match model {
        Some(m) if m > 0 && ws % m == 0 => format!(
            "The dp that fits: world_size // ({product}) = {ws} // {m} = {}.",
            ws / m
        ),
        Some(m) if m > 0 => format!(
            "No dp fits: {product} = {m} does not divide world_size {ws}. {}",
            cluster::nearest_valid(ws, m, product)
        ),
        _ => format!("{product} must be at least 1."),
    }
}

/// nanotron 0.4, `ParallelContext.__init__`: three checks, in this order.
pub(super) fn world_checks_04(ws: u64, c: &Par, r: &mut Report) {
    const PRODUCT: &str = "tp × pp × expert_parallel_size";
    let model = product(&[c.tp, c.pp, c.ep]);
    if !dp_divides_world_04(ws, c, model, r) || !model_divides_world_04(ws, c, model, r) {
        return;
    }
    // 3. tp * pp * ep * dp == world_size
    let all = product_text(&[c.tp, c.pp, c.ep, c.dp]);
    if all != ws.to_string() {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                format!(
                    "ValueError: ('The number of process requires to run all replicas ({all})', \
                     'must be equal to the world size ({ws}).')"
                ),
            )
            .fix(format!(
                "({PRODUCT} × dp = {} × {} × {} × {} = {all}.) {}",
                c.tp,
                c.pp,
                c.ep,
                c.dp,
                dp_fix(ws, model, PRODUCT)
            )),
        );
    }
}

/// nanotron 0.4's first check, `world_size % data_parallel_size`: whether it passes.
fn dp_divides_world_04(ws: u64, c: &Par, model: Option<u64>, r: &mut Report) -> bool {
    const PRODUCT: &str = "tp × pp × expert_parallel_size";
    // 1. world_size % data_parallel_size
    if c.dp == 0 {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                "ZeroDivisionError: integer modulo by zero",
            )
            .fix(format!("(world_size % dp). {}", dp_fix(ws, model, PRODUCT))),
        );
        return false;
    }
    if ws % c.dp != 0 {
        r.refuse(
            Field::Dp,
            Refusal::new(
                "nanotron stops with",
                "AssertionError: The total number of processes must be divisible by the data parallel size.",
            )
            .fix(format!(
                "(world_size {ws} % dp {} = {}.) {}",
                c.dp,
                ws % c.dp,
                dp_fix(ws, model, PRODUCT)
            )),
        );
        return false;
    }
    true
}

/// nanotron 0.4's second check, `world_size % (tp * pp * ep)`: whether it passes.
fn model_divides_world_04(ws: u64, c: &Par, model: Option<u64>, r: &mut Report) -> bool {
    const PRODUCT: &str = "tp × pp × expert_parallel_size";
    // 2. world_size % (tp * pp * ep)
    let at = model_field(c, Version::V04);
    match model {
        Some(0) => {
            r.refuse(
                at,
                Refusal::new(
                    format!("{} 0: nanotron stops with", at.key()),
                    "ZeroDivisionError: integer modulo by zero",
                )
                .fix(format!("(world_size % ({PRODUCT})). Use at least 1.")),
            );
            return false;
        }
        // A product beyond u64 is beyond any world size: world_size % it = world_size ≠ 0.
        Some(m) if ws % m == 0 => {}
        _ => {
            let m = product_text(&[c.tp, c.pp, c.ep]);
            let fix = match model {
                Some(m) => cluster::nearest_valid(ws, m, PRODUCT),
                None => format!("{PRODUCT} must be at most world_size {ws}."),
            };
            r.refuse(
                at,
                Refusal::new(
                    "nanotron stops with",
                    "AssertionError: The total number of processes must be divisible bythe number of GPUs \
                     per model (tensor_parallel_size * pipeline_parallel_size).",
                )
                .fix(format!(
                    "({PRODUCT} = {} × {} × {} = {m} does not divide world_size {ws}; 0.4 counts \
                     expert_parallel_size too.) {fix}",
                    c.tp, c.pp, c.ep
                )),
            );
            return false;
        }
    }
    true
}

/// HEAD's world-size assertion as Python prints it. Its message labels the factors TP*CP*DP*PP
/// but prints them in the order tp, pp, cp, dp.
pub(super) fn head_assertion(ws: u64, c: &Par) -> String {
    format!(
        "AssertionError: TP*CP*DP*PP={}*{}*{}*{}={} != WORLD_SIZE={ws}",
        c.tp,
        c.pp,
        c.cp,
        c.dp,
        product_text(&[c.tp, c.pp, c.cp, c.dp])
    )
}

/// nanotron HEAD, `ParallelContext.__init__` (`parallel/context.py`): one assertion,
/// `tp·pp·cp·dp == WORLD_SIZE` (expert parallelism is not in it); then `_init_parallel_groups`
/// reshapes `arange(world_size)` to `(ep, pp, dp, cp, tp)`, which fails for any
/// `expert_parallel_size` other than 1. `tp_refused`: tp is 0 and `Config.__post_init__` already
/// stopped on it (that message quotes this assertion too).
pub(super) fn world_check_head(ws: u64, c: &Par, tp_refused: bool, r: &mut Report) {
    const PRODUCT: &str = "tp × pp × context_parallel_size";
    let all = product_text(&[c.tp, c.pp, c.cp, c.dp]);
    if all == ws.to_string() {
        if c.ep != 1 {
            r.refuse(
                Field::ExpertParallelSize,
                Refusal::new(
                    "nanotron stops with",
                    format!(
                        "ValueError: cannot reshape array of size {ws} into shape ({},{},{},{},{})",
                        c.ep, c.pp, c.dp, c.cp, c.tp
                    ),
                )
                .fix(
                    "(ParallelContext._init_parallel_groups: arange(world_size).reshape(ep, pp, dp, cp, tp); \
                     the world-size check leaves expert_parallel_size out, the reshape does not.) At HEAD \
                     expert_parallel_size must be 1.",
                ),
            );
        }
        return;
    }
    if tp_refused {
        return;
    }
    let model = product(&[c.tp, c.pp, c.cp]);
    let zero = [
        (Field::Tp, c.tp),
        (Field::Pp, c.pp),
        (Field::ContextParallelSize, c.cp),
        (Field::Dp, c.dp),
    ]
    .into_iter()
    .find(|(_, v)| *v == 0)
    .map(|(f, _)| f);
    // Blame dp when a dp would fit, else the model-parallel product.
    let at = zero.unwrap_or(match model {
        Some(m) if m > 0 && ws % m == 0 => Field::Dp,
        _ => model_field(c, Version::Head),
    });
    r.refuse(
        at,
        Refusal::new("nanotron stops with", head_assertion(ws, c)).fix(format!(
            "(the values are tp, pp, context_parallel_size, dp). {}",
            dp_fix(ws, model, PRODUCT)
        )),
    );
    if c.ep != 1 {
        r.diag(
            Field::ExpertParallelSize,
            Level::Note,
            format!(
                "At HEAD expert_parallel_size is not part of tp × pp × context_parallel_size × dp, but even \
                 with a dp that fits, the rank reshape (ep, pp, dp, cp, tp) fails unless it is 1 (it is {}).",
                c.ep
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_print_exactly() {
        assert_eq!(product_text(&[]), "1");
        assert_eq!(product_text(&[2, 3, 0]), "0");
        assert_eq!(
            product_text(&[1_000_000_000, 1_000_000_000]),
            "1000000000000000000"
        );
        assert_eq!(
            product_text(&[u64::MAX, u64::MAX]),
            "340282366920938463426481119284349108225"
        );
        assert_eq!(product_text(&[u64::MAX, 1]), u64::MAX.to_string());
    }
}
