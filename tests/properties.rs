//! Properties of the core that must hold for any input, not just the listed vectors.

use dpcalc::calc::{axolotl, Field, Framework, Num, Output, RawInputs};
use dpcalc::query;
use proptest::prelude::*;

fn value(raw: &RawInputs, o: Output) -> Option<Num> {
    axolotl::compute(raw).value(o)
}

/// Any text a hand-edited or crafted link could carry, biased towards the edges.
fn hostile_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(u64::MAX.to_string()),
        Just("18446744073709551616".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e309".to_string()),
        Just("NaN".to_string()),
        Just("%ff%fe".to_string()),
        Just("<script>alert(1)</script>".to_string()),
        proptest::sample::select(Framework::ALL.to_vec()).prop_map(|f| f.id().to_string()),
        proptest::sample::select(vec![
            "0.19.0", "0.14.0", "5.23", "4.51", "head", "0.16.1", "0.4", "9"
        ])
        .prop_map(str::to_string),
        (0u64..100_000).prop_map(|n| n.to_string()),
        (0.0f64..1e6).prop_map(|x| x.to_string()),
        any::<String>(),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(Field::ALL.to_vec()).prop_map(|f| f.key().to_string()),
        1 => Just("v".to_string()),
        2 => Just("framework".to_string()),
        1 => Just("version".to_string()),
        1 => Just("embed".to_string()),
        1 => "[a-z_]{1,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Decoding any query never panics and yields values or field errors; the canonical link
    /// it re-encodes to means the same thing.
    #[test]
    fn any_query_decodes_and_round_trips(pairs in proptest::collection::vec((key(), hostile_value()), 0..12)) {
        let q = serde_urlencoded::to_string(&pairs).unwrap();
        let link = query::decode(&q);
        let report = link.report();
        let again = query::decode(&query::encode(&link));
        prop_assert_eq!(again.framework, link.framework);
        prop_assert_eq!(again.release(), link.release());
        prop_assert_eq!(again.report(), report);
        prop_assert_eq!(again.unknown, link.unknown);
        prop_assert_eq!(again.view, link.view);
    }

    /// The explorer, the GPU map, compare, export and the snippets never panic on any link either.
    #[test]
    fn every_view_survives_any_query(pairs in proptest::collection::vec((key(), hostile_value()), 0..10)) {
        use dpcalc::calc::{compare, export, layout, mesh};
        let q = serde_urlencoded::to_string(&pairs).unwrap();
        let link = query::decode(&q);
        let (fw, rel) = (link.framework, link.release().id);
        let report = link.report();
        let _ = layout::explore(fw, rel, &link.inputs);
        let _ = mesh::picture(fw, &report);
        let _ = compare::compare(fw, &link.inputs, &report);
        let e = export::export(fw, rel, &link.inputs, &report);
        let _ = dpcalc::calc::import::import(&e.text);
        let _ = dpcalc::embed::snippets(fw, "u", "v", &link.inputs, &report);
    }

    /// Raw bytes, percent-escapes included, never panic.
    #[test]
    fn any_string_decodes(s in any::<String>()) {
        let link = query::decode(&s);
        let _ = link.report();
        let _ = query::encode(&link);
    }

    /// For valid inputs on the plain path: the batch is micro × GA × dp, the ceil covers the
    /// data, and one step more would be too many.
    #[test]
    fn batch_and_steps_invariants(
        replicas in 2u64..512, tp_exp in 0u32..4, cp_exp in 0u32..3,
        mbs in 1u64..64, ga in 1u64..64, n in 0u64..10_000_000, epochs in 0.05f64..20.0,
    ) {
        let (tp, cp) = (1u64 << tp_exp, 1u64 << cp_exp);
        let ws = replicas * tp * cp;
        let raw = RawInputs::from_pairs([
            (Field::WorldSize, ws.to_string().as_str()),
            (Field::TensorParallelSize, tp.to_string().as_str()),
            (Field::ContextParallelSize, cp.to_string().as_str()),
            (Field::MicroBatchSize, mbs.to_string().as_str()),
            (Field::GradientAccumulationSteps, ga.to_string().as_str()),
            (Field::NumSamples, n.to_string().as_str()),
            (Field::NumEpochs, epochs.to_string().as_str()),
        ]);
        let report = axolotl::compute(&raw);
        prop_assert!(!report.has_errors(), "{:?}", report.diags);
        let dp = ws / tp / cp;
        prop_assert_eq!(report.value(Output::DpWorldSize), Some(Num::Int(dp.into())));
        let b = mbs * ga * dp;
        prop_assert_eq!(report.value(Output::GlobalBatchSize), Some(Num::Int(b.into())));
        let Some(Num::Int(steps)) = report.value(Output::TotalNumSteps) else { panic!("no steps") };
        let need = n as f64 * epochs;
        prop_assert!(steps as f64 * b as f64 >= need);
        prop_assert!(((steps - 1) as f64) * (b as f64) < need || steps == 0);
        // the URL of a valid state decodes to the same inputs
        let link = query::Link { inputs: raw.clone(), ..Default::default() };
        let back = query::decode(&query::encode(&link));
        prop_assert_eq!(axolotl::compute(&back.inputs), report);
    }

    /// More GPUs never give more steps at a fixed per-GPU batch.
    #[test]
    fn more_gpus_never_more_steps(nodes in 1u64..32, more in 1u64..8, mbs in 1u64..16, ga in 1u64..16, n in 1u64..1_000_000) {
        let steps = |nodes: u64| {
            let raw = RawInputs::from_pairs([
                (Field::Nodes, nodes.to_string().as_str()),
                (Field::MicroBatchSize, mbs.to_string().as_str()),
                (Field::GradientAccumulationSteps, ga.to_string().as_str()),
                (Field::NumSamples, n.to_string().as_str()),
            ]);
            value(&raw, Output::TotalNumSteps).map(Num::to_f64).unwrap()
        };
        prop_assert!(steps(nodes + more) <= steps(nodes));
    }
}
