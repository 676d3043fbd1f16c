//! The step-time estimate against published throughput: `tests/fixtures/measured_throughput.txt`
//! holds one record per published run (its source, every setting as a dpcalc link, the measured
//! tokens per second per GPU or TFLOP/s per GPU with the FLOPs convention the source used, or the
//! iteration time). Each record's estimate is `tokens_per_second_per_gpu` of its link (the
//! step-time model's, no MFU given); a TFLOP/s figure is turned into tokens per second by the
//! source's own convention. The calibration records (Narayanan et al. 2021 Table 1, Korthikanti
//! et al. 2022 Table 5: the only ones the two fitted constants saw) are reported apart.
//!
//! The table of `docs/estimates.md` ("Step time against published runs") is this test's table,
//! row for row, with the records not estimated and why. The goal is ±20 % for at least 80 % of
//! the check records with a median error of 12 %; the test is a ratchet on the figures reached so
//! far ([`WITHIN_20`], [`MEDIAN`]), which a change may improve and must not worsen; and every
//! calibration record stays within ±15 %.

use crate::common::report::int;
use dpcalc::calc::{Level, Num, Output, Report};
use dpcalc::query;

const FIXTURE: &str = include_str!("fixtures/measured_throughput.txt");

/// The 16-bit check records within ±20 % so far (the goal: 80 % of them), and their median
/// |error|, percent (the goal: 12). 32 and 7.7 % until Megatron-LM's H100 table was converted to
/// tokens per second with the FLOPs formula of its own release ([`megatron_r080_per_token`]: full
/// attention, where the current release halves it): the measured throughputs fell by 2–12 % (the
/// most at h = 2048), its 1.7B row went from +19.0 to +33.2 %, its 7.1B row from +21.7 to
/// +30.3 % (out of ±20 %), its median from 7.5 to 11.0 % — a measurement corrected, not a model
/// made worse (the estimates are unchanged).
const WITHIN_20: usize = 31;
const MEDIAN: f64 = 8.0;
/// The FP8 check records within ±20 % so far (the goal: 70 % of them), and their median |error|,
/// percent: a ratchet of their own since they were first estimated.
/// 25 until the torchtitan 405B interleaved run's link said its schedule
/// (`pipeline_parallel_schedule=Interleaved1F1B`): estimated as 1F1B it was +7.1 %, with its own
/// schedule +15.9 %, and with torchtitan's sequence parallelism's copies (`sp_copy_bytes`)
/// +23.5 % (inputs corrected and a cost modelled, not a model made worse; the same two changes
/// brought the median from 12.0 to 10.6). 25 and 9.2 % since the NeMo 24.07 links carry the
/// sequence parallelism, TP-communication overlap and distributed optimizer of NeMo's launcher
/// recipes at that release (Llama 2 70B −36.8 % -> −1.1 %; inputs corrected). 29 of 36 and
/// 10.4 % since four more records are estimated (NeMo 24.07's GPT-3 5B/20B/175B rows, linked
/// with the architecture and settings of the launcher's `gpt3/*.yaml` at that tag: +9.7, +11.1,
/// −11.7, −16.6 %): more records, not a model made worse; the 32 earlier ones are unchanged.
/// 31 and 9.2 % since torchtitan's two 405B Table 5 pipeline runs are linked with the 8 micro
/// batches of 4 the code at 9dec370 runs (`pipeline_parallel_microbatches` unset: the PP
/// degree), not 0.3.0's default micro batch of 1 (32 micro batches): 1F1B +44.3 % -> −3.3 %,
/// interleaved +23.5 % -> −1.7 % (inputs corrected, the model unchanged).
const FP8_WITHIN_20: usize = 31;
const FP8_MEDIAN: f64 = 9.2;
/// The H100 BF16 check records (issue 35: at least 30), and the ratchet on all 16-bit check
/// records including those added with `added=issue35-h100-bf16` (the two above stay on the
/// records they were set on). 43 and 8.1 % until the Megatron-LM table's conversion was corrected
/// (see [`WITHIN_20`]).
const H100_BF16_GOAL: usize = 30;
const ALL_WITHIN_20: usize = 42;
const ALL_MEDIAN: f64 = 9.9;

pub(crate) struct Record {
    pub(crate) id: String,
    pub(crate) role: String,
    /// The source's repository or paper (the part before `@` or `_Table`).
    pub(crate) source: String,
    pub(crate) gpu: String,
    pub(crate) link: String,
    fields: Vec<(String, String)>,
}

impl Record {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, v)| k == key && v != "-")
            .map(|(_, v)| v.as_str())
    }
}

/// Settings the step time does not model: such a record is listed as not estimated.
pub(crate) fn not_modelled(r: &Record) -> Option<String> {
    if r.link == "none" {
        return Some(
            r.get("not_expressible")
                .unwrap_or("not expressible as a dpcalc link")
                .replace('_', " "),
        );
    }
    let fp8_link = r.link.contains("model.converters=float8") || r.link.contains("fp8_format=");
    if r.get("precision") == Some("fp8") && !fp8_link {
        return Some("FP8 matrix products, not said in the link".into());
    }
    None
}

pub(crate) fn records() -> Vec<Record> {
    FIXTURE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<(String, String)> = line
                .split(' ')
                .map(|kv| {
                    let (k, v) = kv
                        .split_once('=')
                        .unwrap_or_else(|| panic!("{kv}: not key=value"));
                    (k.to_string(), v.to_string())
                })
                .collect();
            let get = |key: &str| {
                fields
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| panic!("{key} missing: {line}"))
            };
            let source = get("source");
            let source = source
                .split(['@', ':'])
                .next()
                .unwrap()
                .split("_Table")
                .next()
                .unwrap()
                .to_string();
            Record {
                id: get("id"),
                role: get("role"),
                source,
                gpu: get("gpu"),
                link: get("link"),
                fields,
            }
        })
        .collect()
}

pub(crate) fn float(r: &Report, o: Output) -> Option<f64> {
    match r.value(o)? {
        Num::Float(x) => Some(x),
        Num::Int(i) => Some(i as f64),
    }
}

/// A link's key as a number.
fn key(link: &str, k: &str) -> Option<f64> {
    link.trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
        .and_then(|v| v.parse().ok())
}

/// The measured tokens per second per GPU: as given; else the TFLOP/s by the source's
/// convention; else from the iteration time.
pub(crate) fn measured(r: &Record, report: &Report) -> Result<f64, String> {
    if let Some(t) = r.get("measured_tokens_per_second_per_gpu") {
        return t.parse().map_err(|_| format!("{t}: not a number"));
    }
    let gpus: f64 = r.get("gpus").and_then(|g| g.parse().ok()).ok_or("gpus")?;
    if let Some(t) = r.get("measured_iter_time_s") {
        let t: f64 = t.parse().map_err(|_| "time")?;
        let gbs = key(&r.link, "global_batch_size").ok_or("global_batch_size")?;
        let seq = key(&r.link, "seq_length").ok_or("seq_length")?;
        return Ok(gbs * seq / t / gpus);
    }
    let tflops: f64 = r
        .get("measured_tflops_per_gpu")
        .ok_or("no measured figure")?
        .parse()
        .map_err(|_| "tflops")?;
    let convention = r.get("flops_convention").unwrap_or("");
    // SC21's Table 2 counts as its Table 1 (eq. 3, with the recompute its runs used)
    let per_token =
        if convention.starts_with("megatron_96") || convention.starts_with("megatron_72/96") {
            // Narayanan et al. 2021 eq. 3 with full recompute: 96·B·s·l·h²(1 + s/6h + V/16lh) per batch
            let (l, h, s, v) = (
                key(&r.link, "num_layers").ok_or("num_layers")?,
                key(&r.link, "hidden_size").ok_or("hidden_size")?,
                key(&r.link, "seq_length").ok_or("seq_length")?,
                key(&r.link, "vocab_size").ok_or("vocab_size")?,
            );
            96.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h))
        } else if convention.starts_with("megatron_r080_num_floating_point_operations") {
            megatron_r080_per_token(&r.link)?
        } else if convention.starts_with("megatron_num_floating_point_operations") {
            float(report, Output::FlopsPerTokenMegatron).ok_or("no Megatron FLOPs per token")?
        } else {
            return Err(format!("convention {convention} not read"));
        };
    Ok(tflops * 1e12 / per_token)
}

/// Megatron-LM's `num_floating_point_operations(args, batch_size)` ÷ tokens as it stood when the
/// README's H100 table was made (NVIDIA/Megatron-LM@f2e5db402c `megatron/training/training.py`
/// l.73-108, the commit that added the table; the same at tag core_r0.8.0):
/// 12·s·l·h²·((1 + g/a + s/h)·(q/h) + (F/h)·(3/2 with SwiGLU) + V/(2·l·h)) per sequence, with the
/// **full** s/h attention term. Megatron halved it for the causal mask only in March 2025
/// (8873b55d6a, "Only half of the attention matrix is non-zero"), which the current release's
/// `flops_per_token_megatron` follows; a throughput logged by the older formula converted with the
/// newer one overstates the tokens per second by up to 12 % (h = 2048, s = 4096). For the links
/// this is read from: no GQA, no SwiGLU and kv_channels = h/a (Megatron's defaults, which the
/// links keep), F the link's `ffn_hidden_size` or 4h, V padded to 128 × TP (`--make-vocab-size-
/// divisible-by` 128).
fn megatron_r080_per_token(link: &str) -> Result<f64, String> {
    for unmodelled in [
        "swiglu",
        "num_query_groups",
        "group_query_attention",
        "kv_channels",
    ] {
        if link.contains(&format!("{unmodelled}=")) {
            return Err(format!(
                "{unmodelled}: not read by the r0.8 FLOPs reading here"
            ));
        }
    }
    let k = |name: &str| key(link, name).ok_or(format!("{name} missing"));
    let (l, h, s, v) = (
        k("num_layers")?,
        k("hidden_size")?,
        k("seq_length")?,
        k("vocab_size")?,
    );
    let tp = key(link, "tensor_model_parallel_size").unwrap_or(1.0);
    let f = key(link, "ffn_hidden_size").unwrap_or(4.0 * h);
    let multiple = 128.0 * tp;
    let v = (v / multiple).ceil() * multiple;
    Ok(12.0 * l * h * h * ((2.0 + s / h) + f / h + v / (2.0 * l * h)))
}

struct Row {
    /// FP8 matrix products (the record's precision).
    fp8: bool,
    /// Added after the first ratchets were set (`added=` in the fixture).
    added: bool,
    id: String,
    role: String,
    source: String,
    gpu: String,
    measured: f64,
    estimated: f64,
}

impl Row {
    fn error(&self) -> f64 {
        (self.estimated - self.measured) * 100.0 / self.measured
    }
}

fn estimate(r: &Record) -> Result<Row, String> {
    let link = query::decode(&r.link);
    if !link.unknown.is_empty() {
        return Err(format!("unknown keys {:?}", link.unknown));
    }
    let report = link.report();
    if let Some(e) = report.diags.iter().find(|d| d.level == Level::Error) {
        return Err(format!("{}: {}", e.field.key(), e.message));
    }
    if int(&report, Output::WorldSize).is_none() {
        return Err("no world size".into());
    }
    let estimated = float(&report, Output::TokensPerSecondPerGpu).ok_or("no estimate")?;
    Ok(Row {
        fp8: r.get("precision") == Some("fp8"),
        added: r.get("added").is_some(),
        id: r.id.clone(),
        role: r.role.clone(),
        source: r.source.clone(),
        gpu: r.gpu.clone(),
        measured: measured(r, &report)?,
        estimated,
    })
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The check records of one precision (FP8 or not): how many, how many within ±20 %, the median
/// |error|.
fn summary(check: &[&Row], fp8: bool) -> (usize, usize, f64) {
    let these: Vec<&&Row> = check.iter().filter(|r| r.fp8 == fp8).collect();
    let within = these.iter().filter(|r| r.error().abs() <= 20.0).count();
    let med = median(these.iter().map(|r| r.error().abs()).collect());
    (these.len(), within, med)
}

/// The tables of docs/estimates.md: per role and source, each record, then the median and worst error.
fn tables(rows: &[Row], left_out: &[(String, String)]) -> String {
    let mut t = String::new();
    for role in ["check", "calibration"] {
        let mut sources: Vec<&str> = rows
            .iter()
            .filter(|r| r.role == role)
            .map(|r| r.source.as_str())
            .collect();
        sources.dedup();
        for source in sources {
            let these: Vec<&Row> = rows
                .iter()
                .filter(|r| r.role == role && r.source == source)
                .collect();
            t.push_str(&format!(
                "{} records, `{source}`:\n\n| record | GPU | measured tokens/s/GPU | estimated | error |\n|---|---|---|---|---|\n",
                if role == "check" { "Check" } else { "Calibration" }
            ));
            for r in &these {
                t.push_str(&format!(
                    "| `{}` | {} | {:.0} | {:.0} | {:+.1} % |\n",
                    r.id,
                    r.gpu,
                    r.measured,
                    r.estimated,
                    r.error()
                ));
            }
            let abs: Vec<f64> = these.iter().map(|r| r.error().abs()).collect();
            t.push_str(&format!(
                "\n{} records: median |error| {:.1} %, worst {:.1} %.\n\n",
                these.len(),
                median(abs.clone()),
                abs.iter().copied().fold(0.0, f64::max)
            ));
        }
    }
    let check: Vec<&Row> = rows.iter().filter(|r| r.role == "check").collect();
    let within = check.iter().filter(|r| r.error().abs() <= 20.0).count();
    t.push_str(&format!(
        "All check records: {} of {} within ±20 % ({:.0} %), median |error| {:.1} %.\n\n",
        within,
        check.len(),
        within as f64 * 100.0 / check.len().max(1) as f64,
        median(check.iter().map(|r| r.error().abs()).collect())
    ));
    for (fp8, what) in [(false, "16-bit"), (true, "FP8")] {
        let (n, within, med) = summary(&check, fp8);
        t.push_str(&format!(
            "{what} check records: {within} of {n} within ±20 % ({:.0} %), median |error| {med:.1} %.\n\n",
            within as f64 * 100.0 / n.max(1) as f64
        ));
    }
    let h100: Vec<&Row> = check
        .iter()
        .copied()
        .filter(|r| !r.fp8 && r.gpu.starts_with("h100"))
        .collect();
    let (_, within, med) = summary(&h100, false);
    t.push_str(&format!(
        "H100 16-bit check records: {within} of {} within ±20 %, median |error| {med:.1} %.\n\n",
        h100.len()
    ));
    t.push_str(&crate::common::report::left_out(
        left_out.iter().map(|(id, why)| (id.as_str(), why.as_str())),
    ));
    t
}

#[test]
fn estimates_hold_against_published_runs() {
    let mut rows = Vec::new();
    let mut left_out = Vec::new();
    let mut failed = Vec::new();
    for r in records() {
        if let Some(why) = not_modelled(&r) {
            left_out.push((r.id.clone(), why));
            continue;
        }
        match estimate(&r) {
            Ok(row) => rows.push(row),
            Err(why) => failed.push(format!("{}: {why}", r.id)),
        }
    }
    let t = tables(&rows, &left_out);
    println!("{t}");
    assert!(failed.is_empty(), "no estimate: {failed:#?}\n{t}");
    let check: Vec<&Row> = rows.iter().filter(|r| r.role == "check").collect();
    let sources: std::collections::BTreeSet<&str> =
        check.iter().map(|r| r.source.as_str()).collect();
    let gpus: std::collections::BTreeSet<&str> = check.iter().map(|r| r.gpu.as_str()).collect();
    // issue 35: at least 60 check records from at least five sources
    assert!(check.len() >= 60, "{} check records", check.len());
    assert!(sources.len() >= 5, "sources {sources:?}");
    assert!(
        gpus.contains("a100-80gb") && gpus.contains("h100-sxm"),
        "{gpus:?}"
    );
    let earlier: Vec<&Row> = check.iter().copied().filter(|r| !r.added).collect();
    let (n, within, med) = summary(&earlier, false);
    assert!(
        within >= WITHIN_20 && med <= MEDIAN + 0.05,
        "worse than the ratchet ({WITHIN_20} within ±20 %, median {MEDIAN} %): {within} of {n} earlier 16-bit records within ±20 %, median {med:.1} %\n{t}"
    );
    let (n, within, med) = summary(&check, false);
    assert!(
        within >= ALL_WITHIN_20 && med <= ALL_MEDIAN + 0.05,
        "worse than the ratchet ({ALL_WITHIN_20} within ±20 %, median {ALL_MEDIAN} %): {within} of {n} 16-bit records within ±20 %, median {med:.1} %\n{t}"
    );
    let h100_bf16 = check
        .iter()
        .filter(|r| !r.fp8 && r.gpu.starts_with("h100"))
        .count();
    assert!(
        h100_bf16 >= H100_BF16_GOAL,
        "{h100_bf16} H100 BF16 check records"
    );
    let (n8, within8, med8) = summary(&check, true);
    assert!(
        n8 >= 32 && within8 >= FP8_WITHIN_20 && med8 <= FP8_MEDIAN + 0.05,
        "worse than the FP8 ratchet ({FP8_WITHIN_20} within ±20 %, median {FP8_MEDIAN} %): {within8} of {n8} within ±20 %, median {med8:.1} %\n{t}"
    );
    let off: Vec<String> = rows
        .iter()
        .filter(|r| r.role == "calibration" && r.error().abs() > 15.0)
        .map(|r| format!("{}: {:+.1} %", r.id, r.error()))
        .collect();
    assert!(off.is_empty(), "calibration records off: {off:?}");
    let doc = crate::common::files::read("docs/estimates.md");
    assert!(
        doc.contains(&t),
        "docs/estimates.md's table differs from the test's; it should read:\n{t}"
    );
}

/// The error is computed, not assumed: the estimate moves with the hardware it is given.
#[test]
fn the_estimate_follows_the_bandwidth() {
    let r = records()
        .into_iter()
        .find(|r| r.id == "mlm-r080-h100-gpt-70b")
        .expect("the record");
    let fast = estimate(&r).expect("an estimate");
    let slow = estimate(&Record {
        link: format!("{}&inter_node_gbps=5", r.link),
        ..r
    })
    .expect("an estimate");
    assert!(
        slow.estimated < fast.estimated * 0.95,
        "{} vs {}",
        slow.estimated,
        fast.estimated
    );
}

/// Megatron-LM's H100 table (its README's "Training Speed and Scalability", r0.8), record by
/// record: the settings the links resolve to, the estimate's step by part (each the exposed time)
/// and the measured step (the tokens of a step ÷ the GPUs ÷ the measured tokens per second per
/// GPU). docs/estimates.md ("Megatron-LM's H100 table by part") is this test's table.
#[test]
fn the_megatron_table_by_part() {
    use Output::*;
    let mut t = String::from(
        "| record | TP | PP | DP | micro batches | compute | TP exposed | DP exposed | bubble and sends | estimated step | measured step | measured ÷ estimated |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let these: Vec<Record> = records()
        .into_iter()
        .filter(|r| r.id.starts_with("mlm-r080-"))
        .collect();
    assert_eq!(these.len(), 9, "the table's nine rows");
    for r in &these {
        let report = query::decode(&r.link).report();
        let part = |o: Output| float(&report, o).unwrap_or_else(|| panic!("{}: no {o:?}", r.id));
        let parts = [
            StepComputeSeconds,
            StepTpCommSeconds,
            StepCpCommSeconds,
            StepEpCommSeconds,
            StepPpBubbleSeconds,
            StepDpCommSeconds,
        ]
        .map(part);
        let step = part(StepTimeSeconds);
        assert!(
            (parts.iter().sum::<f64>() - step).abs() <= 1e-9 * step,
            "{}: the parts {parts:?} do not add up to the step {step}",
            r.id
        );
        let n = |o: Output| int(&report, o).unwrap_or_else(|| panic!("{}: no {o:?}", r.id));
        let size = |k: &str| key(&r.link, k).unwrap_or(1.0);
        let (gpus, tp, pp) = (
            n(WorldSize),
            size("tensor_model_parallel_size"),
            size("pipeline_model_parallel_size"),
        );
        let tokens = n(TokensPerStep) as f64;
        let per_gpu = measured(r, &report).unwrap_or_else(|e| panic!("{}: {e}", r.id));
        let measured_step = tokens / gpus as f64 / per_gpu;
        assert!(measured_step > 0.0 && measured_step.is_finite(), "{}", r.id);
        t.push_str(&format!(
            "| `{}` | {tp} | {pp} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {step:.3} | {measured_step:.3} | {:.2} |\n",
            r.id,
            n(DpWorldSize),
            n(GradientAccumulationSteps),
            parts[0],
            parts[1],
            parts[5],
            parts[4],
            measured_step / step
        ));
    }
    println!("{t}");
    let doc = crate::common::files::read("docs/estimates.md");
    assert!(
        doc.contains(&t),
        "docs/estimates.md's by-part table of Megatron-LM's H100 rows differs from the test's; it should read:\n{t}"
    );
}
