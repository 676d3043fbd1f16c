//! A PyTorch profiler trace (Kineto's Chrome-trace JSON, `torch.profiler.profile(...)
//! .export_chrome_trace`, `tensorboard_trace_handler`) of one training step, pasted or dropped
//! on the page: its GPU kernels' time bucketed by name, the step's wall time, and from them the
//! measured step (`seconds_per_step`) and, against the link's own estimate, the compute factor
//! (`calibration_compute_factor`, settled in [`super::Imported::settle`]).
//!
//! Read as Kineto writes it (`libkineto/src/output_json.cpp`, `ChromeTraceLogger`): a top-level
//! object whose `traceEvents` array holds complete events (`"ph": "X"`) with `ts` and `dur` in
//! µs; GPU kernels have `cat` `kernel` (`gpu_op` in older releases) and `pid` the device; the
//! step is the CPU annotation `ProfilerStep#N` (`user_annotation`, `cpu_op` in older ones).
//! A bare array of events is read too. The text is read as a stream: each event's other fields
//! (`args`, shapes, stacks) are skipped, never held, so a trace of several MB costs little.
//!
//! - **Buckets** (by the kernel's name, first match): matrix products
//!   (`gemm|cutlass|nvjet|xmma|sm90_xmma|ampere_…gemm`), attention (`flash|fmha|cudnn…attn|mha|
//!   sdpa`), communication (`nccl`), other (the memory-bound and the optimizer's kernels), and
//!   idle: the gaps on the device between its first kernel's start and its last kernel's end
//!   that no kernel covers. Kernels on several streams overlap (NCCL beside compute), so the
//!   buckets may add up to more than the span.
//! - **One device**: a rank's trace has one; with several, the one with the most kernel time.
//! - **The step**: with `N` `ProfilerStep#` annotations, their mean duration and every bucket ÷
//!   `N`; without one, the device's span (first kernel to last).

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The largest trace read, bytes: a one-step trace without Python stacks or shapes is a few MB
/// to tens of MB. Reading runs at about 2 ms per MB natively (release) and a few times that in
/// the browser, so 16 MB keeps a paste within the page's 100 ms budget; a larger trace gets the
/// message saying how to export one step.
pub const MAX_TRACE: usize = 16 * 1024 * 1024;

/// At most this many kernels are read (a step of a large model launches some 10⁵).
const MAX_KERNELS: usize = 2_000_000;

/// What a trace says of its step, seconds per step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceBuckets {
    pub matmul: f64,
    pub attention: f64,
    pub communication: f64,
    pub other: f64,
    pub idle: f64,
    /// The step's wall time.
    pub wall: f64,
    /// The kernels read (all steps) and the `ProfilerStep#` annotations (0: none).
    pub kernels: usize,
    pub steps: usize,
}

impl TraceBuckets {
    /// The kernel time of the compute (matrix products, attention, other): what the estimate's
    /// compute is compared with.
    pub fn compute(&self) -> f64 {
        self.matmul + self.attention + self.other
    }

    /// The buckets in one sentence, in ms and as shares of the wall time (the page's summary).
    pub fn sentence(&self) -> String {
        let ms = |s: f64| format!("{:.1} ms", s * 1e3);
        let part = |name: &str, s: f64| {
            format!(
                "{name} {} ({:.0} %)",
                ms(s),
                100.0 * s / self.wall.max(f64::MIN_POSITIVE)
            )
        };
        let step = match self.steps {
            0 => "the span of its kernels".to_string(),
            1 => "ProfilerStep".to_string(),
            n => format!("the mean of {n} ProfilerSteps"),
        };
        format!(
            "a PyTorch profiler trace, {} kernels: step {} ({step}); kernel time {}, {}, {}, {}; GPU idle {}",
            self.kernels,
            ms(self.wall),
            part("matrix products", self.matmul),
            part("attention", self.attention),
            part("communication", self.communication),
            part("other", self.other),
            part("", self.idle).trim_start()
        )
    }
}

/// Whether `text` is a Chrome-trace JSON (an object with `traceEvents`, or an array of events
/// with `ph`).
pub fn looks(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    (t.starts_with('{') && t.contains("\"traceEvents\""))
        || (t.starts_with('[') && t.contains("\"ph\"") && t.contains("\"dur\""))
}

/// Which bucket a kernel's name falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    Matmul,
    Attention,
    Communication,
    Other,
}

/// The bucket of kernel `name` (case-insensitive; communication first, as an NCCL kernel's name
/// may hold anything).
pub fn bucket(name: &str) -> Bucket {
    let n = name.to_ascii_lowercase();
    let has = |w: &str| n.contains(w);
    if has("nccl") {
        Bucket::Communication
    } else if has("flash")
        || has("fmha")
        || has("sdpa")
        || (has("cudnn") && (has("attn") || has("mha")))
    {
        Bucket::Attention
    } else if has("gemm") || has("cutlass") || has("nvjet") || has("xmma") {
        // `sm90_xmma…` and `ampere_…gemm` are matched by `xmma` and `gemm`
        Bucket::Matmul
    } else {
        Bucket::Other
    }
}

/// One GPU kernel: device, start and end, µs.
#[derive(Clone, Copy, Debug)]
struct Kernel {
    device: i64,
    start: f64,
    end: f64,
    bucket: Bucket,
}

/// What the stream collects.
#[derive(Default)]
struct Acc {
    kernels: Vec<Kernel>,
    steps: Vec<f64>,
    too_many: bool,
}

/// Reads a trace: its buckets, or why it cannot be read.
pub fn read(text: &str) -> Result<TraceBuckets, String> {
    if text.len() > MAX_TRACE {
        return Err(format!(
            "the trace is {} MB; at most {} MB is read: export one step (torch.profiler.schedule(wait=…, warmup=…, active=1)) without with_stack or record_shapes",
            text.len() / (1024 * 1024),
            MAX_TRACE / (1024 * 1024)
        ));
    }
    let text = text.trim_start_matches('\u{feff}');
    let mut acc = Acc::default();
    let mut de = serde_json::Deserializer::from_str(text);
    Top(&mut acc)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| format!("the trace is not well-formed JSON: {e}"))?;
    if acc.too_many {
        return Err(format!(
            "the trace holds more than {MAX_KERNELS} kernels: export one step"
        ));
    }
    buckets(&acc)
}

/// The buckets of the busiest device's kernels, per step.
fn buckets(acc: &Acc) -> Result<TraceBuckets, String> {
    let mut devices: Vec<(i64, f64)> = Vec::new();
    for k in &acc.kernels {
        match devices.iter_mut().find(|(d, _)| *d == k.device) {
            Some((_, t)) => *t += k.end - k.start,
            None => devices.push((k.device, k.end - k.start)),
        }
    }
    let Some(&(device, _)) = devices.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Err("the trace holds no GPU kernel (events with \"cat\": \"kernel\" and \"ph\": \"X\"): profile with ProfilerActivity.CUDA".into());
    };
    let mut ks: Vec<Kernel> = acc
        .kernels
        .iter()
        .copied()
        .filter(|k| k.device == device)
        .collect();
    ks.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut out = TraceBuckets {
        kernels: ks.len(),
        steps: acc.steps.len(),
        ..TraceBuckets::default()
    };
    // the union of the kernels' intervals: what is not in it, between the first and the last, is idle
    let (first, mut reach, mut covered) = (ks[0].start, ks[0].start, 0.0);
    for k in &ks {
        let d = k.end - k.start;
        match k.bucket {
            Bucket::Matmul => out.matmul += d,
            Bucket::Attention => out.attention += d,
            Bucket::Communication => out.communication += d,
            Bucket::Other => out.other += d,
        }
        if k.end > reach {
            covered += k.end - k.start.max(reach);
            reach = k.end;
        }
    }
    let span = reach - first;
    out.idle = span - covered;
    let n = acc.steps.len().max(1) as f64;
    out.wall = if acc.steps.is_empty() {
        span
    } else {
        acc.steps.iter().sum::<f64>() / n
    };
    for x in [
        &mut out.matmul,
        &mut out.attention,
        &mut out.communication,
        &mut out.other,
        &mut out.idle,
    ] {
        *x /= n * 1e6;
    }
    out.wall /= 1e6;
    if !(out.wall.is_finite() && out.wall > 0.0) {
        return Err("the trace's step has no duration".into());
    }
    Ok(out)
}

/// The top level: an object (its `traceEvents`) or a bare array of events.
struct Top<'a>(&'a mut Acc);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace object with traceEvents, or an array of events")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events(&mut *self.0))?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if found {
            Ok(())
        } else {
            Err(de::Error::custom("no traceEvents"))
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events(self.0).visit_seq(seq)
    }
}

/// The events array.
struct Events<'a>(&'a mut Acc);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(e) = seq.next_element::<Event>()? {
            e.collect(self.0);
        }
        Ok(())
    }
}

/// The fields of one event dpcalc reads.
#[derive(Default)]
struct Event {
    name: String,
    cat: String,
    ph: String,
    ts: Option<f64>,
    dur: Option<f64>,
    pid: i64,
}

impl Event {
    fn collect(self, acc: &mut Acc) {
        let (Some(ts), Some(dur)) = (self.ts, self.dur) else {
            return;
        };
        if self.ph != "X" || !(ts.is_finite() && dur.is_finite() && dur >= 0.0) {
            return;
        }
        match self.cat.as_str() {
            "kernel" | "gpu_op" => {
                if acc.kernels.len() >= MAX_KERNELS {
                    acc.too_many = true;
                    return;
                }
                acc.kernels.push(Kernel {
                    device: self.pid,
                    start: ts,
                    end: ts + dur,
                    bucket: bucket(&self.name),
                });
            }
            "user_annotation" | "cpu_op" if self.name.starts_with("ProfilerStep#") => {
                acc.steps.push(dur)
            }
            _ => {}
        }
    }
}

impl<'de> de::Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        d.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event (an object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut e = Event::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "name" => e.name = text(map.next_value::<serde_json::Value>()?),
                "cat" => e.cat = text(map.next_value::<serde_json::Value>()?),
                "ph" => e.ph = text(map.next_value::<serde_json::Value>()?),
                "ts" => e.ts = map.next_value::<serde_json::Value>()?.as_f64(),
                "dur" => e.dur = map.next_value::<serde_json::Value>()?.as_f64(),
                // a device's events have its index; the CPU's a process id, "Spans" a string
                "pid" => {
                    e.pid = map
                        .next_value::<serde_json::Value>()?
                        .as_i64()
                        .unwrap_or(-1)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(e)
    }
}

/// A string value's text (anything else: empty).
fn text(v: serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s,
        _ => String::new(),
    }
}
