//! nanotron's checks stage: `get_config_from_dict` (dacite, `strict=True`: the first key the
//! release lacks or the first missing required key) and HEAD's `Config.__post_init__` model checks.

use super::*;

/// The required keys in the order dacite meets them: `Config`'s sections (parallelism before
/// tokens), then each dataclass's field order (`ParallelismArgs`: dp, pp, tp; `TokensArgs`:
/// sequence_length, train_steps, micro_batch_size, batch_accumulation_per_replica). The same in
/// 0.4 and at HEAD.
const REQUIRED: &[(Field, &str)] = &[
    (Field::Dp, "parallelism"),
    (Field::Pp, "parallelism"),
    (Field::Tp, "parallelism"),
    (Field::SequenceLength, "tokens"),
    (Field::TrainSteps, "tokens"),
    (Field::MicroBatchSize, "tokens"),
    (Field::BatchAccumulationPerReplica, "tokens"),
];

/// `get_config_from_dict`: dacite with `strict=True`. nanotron stops at the first problem it
/// meets (a key the release does not have, checked per section before its fields, or the first
/// missing required key) and computes nothing; dpcalc names that one as nanotron does and still
/// shows what nanotron's own properties (`Config.global_batch_size`, ...) compute from the keys
/// that were typed.
pub(super) fn parse_config(version: Version, i: &Inputs, r: &mut Report) -> Parsed {
    let unexpected_cp = version == Version::V04 && matches!(i.cp, Param::Given(_));
    if unexpected_cp {
        r.refuse(
            Field::ContextParallelSize,
            Refusal::new(
                "nanotron 0.4 reads its config with dacite and stops with",
                "dacite.exceptions.UnexpectedDataError: can not match \"context_parallel_size\" to any \
                 data class field",
            )
            .fix("0.4 has no context parallelism: remove the key, or choose the HEAD release."),
        );
    }
    let named = missing_required(i, unexpected_cp, r);
    let invalid = [
        i.dp,
        i.tp,
        i.pp,
        i.cp,
        i.ep,
        i.micro_batch_size,
        i.batch_accumulation_per_replica,
        i.sequence_length,
        i.train_steps,
    ]
    .contains(&Param::Invalid);
    let cp = if version == Version::V04 {
        Some(1)
    } else {
        i.cp.or(1)
    };
    let par = (|| {
        Some(Par {
            dp: i.dp.given()?,
            tp: i.tp.given()?,
            pp: i.pp.given()?,
            cp: cp?,
            ep: i.ep.or(1)?,
        })
    })()
    .filter(|_| !unexpected_cp);
    let given = (!invalid && !unexpected_cp).then(|| Given {
        dp: i.dp.given(),
        pp: i.pp.given(),
        mbs: i.micro_batch_size.given(),
        accum: i.batch_accumulation_per_replica.given(),
        seq: i.sequence_length.given(),
        steps: i.train_steps.given(),
    });
    Parsed {
        par,
        given,
        complete: !invalid && !named,
    }
}

/// The required keys that are absent, each a hint (`named`: a key already named by dacite's
/// error); whether any was named.
fn missing_required(i: &Inputs, named: bool, r: &mut Report) -> bool {
    let param = |f: Field| match f {
        Field::Dp => i.dp,
        Field::Pp => i.pp,
        Field::Tp => i.tp,
        Field::SequenceLength => i.sequence_length,
        Field::TrainSteps => i.train_steps,
        Field::MicroBatchSize => i.micro_batch_size,
        _ => i.batch_accumulation_per_replica,
    };
    // dacite names only the first missing key; the others are hints without nanotron's words
    let mut named = named;
    for &(field, section) in REQUIRED {
        if param(field) != Param::Absent {
            continue;
        }
        let key = format!("\"{section}.{}\"", field.key());
        let message = if named {
            format!(
                "Required: {key} is missing too (nanotron's dacite error names only the first missing key)."
            )
        } else {
            format!(
                "Required: nanotron stops with dacite.exceptions.MissingValueError: missing value for field {key}"
            )
        };
        r.diag(field, Level::Hint, message);
        named = true;
    }
    named
}

/// HEAD's `Config.__post_init__` model checks (`config/config.py`), which run before
/// `ParallelContext`: `num_attention_heads % tp` (so tp 0 stops here with a ZeroDivisionError),
/// then the heads against the key/value heads and tp. The model keys are optional in dpcalc:
/// without `num_attention_heads` only the tp 0 case is certain. `num_key_value_heads` defaults to
/// `num_attention_heads` (`LlamaConfig.__post_init__`). `then` is the world-size assertion that
/// would follow, for a tp of 0.
pub(super) fn model_checks(
    tp: u64,
    heads: Param<u64>,
    kv: Param<u64>,
    then: Option<String>,
    r: &mut Report,
) {
    const BY: &str = "nanotron stops with";
    if tp == 0 {
        tp_zero(then, r);
        return;
    }
    let Param::Given(h) = heads else {
        return;
    };
    let kv = match kv {
        Param::Given(v) => v,
        Param::Absent => h,
        Param::Invalid => return,
    };
    let divisors = || {
        let fits: Vec<String> = (1..=h.min(64))
            .filter(|d| h % d == 0 && *d <= kv)
            .map(|d| d.to_string())
            .collect();
        format!("tp values that fit: {}.", fits.join(", "))
    };
    if h % tp != 0 {
        r.refuse(
            Field::Tp,
            Refusal::new(
                BY,
                format!("AssertionError: num_attention_heads ({h}) must be divisible by tp ({tp})"),
            )
            .fix(format!("(Config.__post_init__.) {}", divisors())),
        );
    } else if h < kv {
        r.refuse(
            Field::NumKeyValueHeads,
            Refusal::new(
                BY,
                format!(
                    "AssertionError: num_attention_heads ({h}) must be >= num_key_value_heads ({kv})"
                ),
            )
            .fix("(Config.__post_init__.) Use at most num_attention_heads key/value heads."),
        );
    } else if kv < tp {
        r.refuse(
            Field::Tp,
            Refusal::new(
                BY,
                format!("AssertionError: num_key_value_heads ({kv}) must be >= tp ({tp})"),
            )
            .fix(format!(
                "(Config.__post_init__: each TP rank needs a key/value head.) {}",
                divisors()
            )),
        );
    } else if h % kv != 0 {
        r.refuse(
            Field::NumKeyValueHeads,
            Refusal::new(
                BY,
                format!(
                    "AssertionError: num_attention_heads ({h}) must be divisible by num_key_value_heads ({kv})"
                ),
            )
            .fix("(Config.__post_init__.) Use a divisor of num_attention_heads."),
        );
    }
}

/// HEAD's `num_attention_heads % tp` with tp 0, before the world-size assertion `then`.
fn tp_zero(then: Option<String>, r: &mut Report) {
    const BY: &str = "nanotron stops with";
    let after = then.map_or(String::new(), |t| {
        format!("; after it, ParallelContext would stop with \u{201c}{t}\u{201d}")
    });
    r.refuse(
        Field::Tp,
        Refusal::new(BY, "ZeroDivisionError: integer modulo by zero").fix(format!(
            "(Config.__post_init__: num_attention_heads % tp, before the world-size check{after}.) \
             Use at least 1."
        )),
    );
}
