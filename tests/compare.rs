//! The compare view: one intent, every framework, by its own rules.

use dpcalc::calc::compare::compare;
use dpcalc::calc::{Framework, Num, Output};
use dpcalc::query;

#[test]
fn one_intent_every_framework() {
    let link = query::decode("world_size=16&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=100000");
    let c = compare(link.framework, &link.inputs, &link.report());
    assert_eq!(c.columns.len(), Framework::ALL.len());
    let row = |o: Output| c.rows.iter().find(|r| r.output == o).unwrap();
    let at = |o: Output, fw: Framework| {
        let i = Framework::ALL.iter().position(|&f| f == fw).unwrap();
        row(o).cells[i].value.map(Num::raw)
    };
    // tp 2 of 16 GPUs is 8 replicas everywhere, and the same 64-sample batch
    for &fw in Framework::ALL {
        assert_eq!(at(Output::DpWorldSize, fw).as_deref(), Some("8"), "{fw:?}");
        assert_eq!(
            at(Output::GlobalBatchSize, fw).as_deref(),
            Some("64"),
            "{fw:?}"
        );
    }
    assert!(!row(Output::DpWorldSize).differs && !row(Output::GlobalBatchSize).differs);
    // steps: axolotl and HF round 1562.5 up; DeepSpeed's micro-step counter and Megatron's
    // train_samples // global_batch_size round it down
    assert_eq!(
        at(Output::MaxSteps, Framework::Axolotl).as_deref(),
        Some("1563")
    );
    assert_eq!(at(Output::MaxSteps, Framework::Hf).as_deref(), Some("1563"));
    assert_eq!(
        at(Output::MaxSteps, Framework::DeepSpeed).as_deref(),
        Some("1562")
    );
    assert_eq!(
        at(Output::MaxSteps, Framework::Megatron).as_deref(),
        Some("1562")
    );
    assert!(row(Output::MaxSteps).differs);
    // every computed cell says which rule made it
    for r in &c.rows {
        for cell in &r.cells {
            assert!(!cell.reason.is_empty(), "{:?} {:?}", r.output, cell);
        }
    }
    // HF gets axolotl's one epoch, not its own default of three
    let hf = &c.columns[1];
    assert_eq!(hf.framework, Framework::Hf);
    assert_eq!(hf.inputs.get(dpcalc::calc::Field::NumTrainEpochs), "1");
}
