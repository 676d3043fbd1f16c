//! The Trainer's grid stage: accelerate's `ParallelismConfig` (sizes, CP and SP, the total
//! against the processes) and the data-parallel size.

use super::*;

impl Calc<'_> {
    // ---- ParallelismConfig (accelerate) and the data-parallel size --------------------------

    pub(super) fn size(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        let v = p.or(1)?;
        if v == 0 {
            self.report.refuse(
                field,
                Refusal::new(
                    "accelerate refuses",
                    format!("{} must be at least 1, but got 0", field.key()),
                )
                .fix("Use 1 for none."),
            );
            return None;
        }
        Some(v)
    }

    pub(super) fn dims(&mut self, ws: u64) -> Option<Dims> {
        let (tp, cp, sp) = self.sizes()?;
        let model = u128::from(tp) * u128::from(cp) * u128::from(sp);
        if u128::from(ws) % model != 0 {
            let floored = self.not_a_multiple(ws, (tp, cp, sp), model);
            if floored == 0 {
                return None;
            }
        }
        let dp = (u128::from(ws) / model) as u64;
        Some(self.publish_dims(ws, (tp, cp, sp), dp))
    }

    /// tp, cp and sp as accelerate's `ParallelismConfig` checks them (4.52 and older pass none:
    /// cp and sp are 1), CP and SP exclusive.
    fn sizes(&mut self) -> Option<(u64, u64, u64)> {
        let tp = self.size(Field::TpSize, self.inputs.tp);
        let (cp, sp) = if self.version.has_pc() {
            (
                self.size(Field::CpSize, self.inputs.cp),
                self.size(Field::SpSize, self.inputs.sp),
            )
        } else {
            for f in [Field::CpSize, Field::SpSize] {
                let p = if f == Field::CpSize {
                    self.inputs.cp
                } else {
                    self.inputs.sp
                };
                if p.given().is_some_and(|x| x != 1) {
                    self.report.diag(
                        f,
                        Level::Note,
                        format!(
                            "transformers {} passes no ParallelismConfig to accelerate: {} is not read (treated as 1)",
                            self.name,
                            f.key()
                        ),
                    );
                }
            }
            (Some(1), Some(1))
        };
        let (tp, cp, sp) = (tp?, cp?, sp?);
        if cp > 1 && sp > 1 {
            self.report.refuse(
                Field::CpSize,
                Refusal::new(
                    "accelerate refuses",
                    format!(
                        "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive. \
                         Got cp_size={cp} and sp_size={sp}. Please set either cp_size=1 or sp_size=1."
                    ),
                ),
            );
            return None;
        }
        Some((tp, cp, sp))
    }

    /// A world size that is not a multiple of the model-parallel product: torch's mesh, DeepSpeed's
    /// groups or accelerate refuse it. Returns `world_size // product` (0: nothing runs).
    fn not_a_multiple(&mut self, ws: u64, (tp, cp, sp): (u64, u64, u64), model: u128) -> u128 {
        let (model_name, model_desc) = match (cp > 1, sp > 1) {
            (true, _) => ("tp_size × cp_size", format!("{tp} × {cp}")),
            (_, true) => ("tp_size × sp_size", format!("{tp} × {sp}")),
            _ => ("tp_size", tp.to_string()),
        };
        let fix = match u64::try_from(model) {
            Ok(m) => cluster::nearest_valid(ws, m, model_name),
            Err(_) => "Use smaller parallel sizes.".to_string(),
        };
        let floored = u128::from(ws) / model;
        // The Trainer's own functions still run on the floored sizes (what it would log);
        // dpcalc shows those values beside the refusal, as for axolotl.
        let shown = if floored == 0 {
            String::new()
        } else {
            format!(
                " The values shown are what the Trainer's step functions compute with dp = {ws} // {model} = {floored}; no run starts."
            )
        };
        if !self.version.has_pc() {
            self.report.diag(
                Field::WorldSize,
                Level::Error,
                format!(
                    "world_size {ws} is not a multiple of tp_size {tp}: torch cannot build the (dp, tp) device mesh for \
                     the model's tp_plan. {fix}{shown}"
                ),
            );
        } else if sp > 1 {
            self.report.diag(
                Field::WorldSize,
                Level::Error,
                format!(
                    "world_size {ws} is not a multiple of {model_name} = {model_desc}: accelerate skips its size check for \
                     DeepSpeed sequence parallelism, but DeepSpeed cannot split {ws} ranks into sequence-parallel groups of \
                     that size. {fix}{shown}"
                ),
            );
        } else {
            let total = floored.max(1) * model;
            self.report.refuse(
                Field::WorldSize,
                Refusal::new(
                    "accelerate refuses",
                    format!(
                        "ParallelismConfig total_size ({total}) does not match num_processes ({ws}). \
                         Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size."
                    ),
                )
                .fix(format!(
                    "world_size must be a multiple of {model_name} = {model_desc}. {fix}{shown}"
                )),
            );
        }
        floored
    }

    /// The data-parallel size, set, explained and published in the grid.
    fn publish_dims(&mut self, ws: u64, (tp, cp, sp): (u64, u64, u64), dp: u64) -> Dims {
        self.report.set(Output::DpWorldSize, Num::Int(dp.into()));
        self.report.explain_with(
            Output::DpWorldSize,
            if self.sampling == Sampling::BatchRebalance {
                "dp = world_size // tp_size // cp_size // sp_size (the Trainer's dp_world_size; batch_rebalance still \
                 gives every rank its own rows)"
            } else {
                "dp = world_size // tp_size // cp_size // sp_size (TP, CP and SP ranks share a batch)"
            },
            || format!("dp = {ws} // {tp} // {cp} // {sp} = {dp}"),
);
        self.report.publish_grid(crate::calc::Grid {
            tp,
            cp,
            sp,
            dp,
            ..crate::calc::Grid::data_parallel(ws)
        });
        Dims { ws, tp, cp, sp, dp }
    }
}
