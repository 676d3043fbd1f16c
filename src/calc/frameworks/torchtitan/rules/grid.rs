//! torchtitan's grid stage: `ParallelDims._validate` (degrees, the `-1` fill, the product), expert
//! parallelism (HEAD's check, 0.3.0's `build_mesh`) and the sequence divisor for SP and CP.

use super::*;
use std::fmt::Write as _;

/// The product `data_parallel_shard_degree = -1` fills the world around.
const OTHERS_NAME: &str = "data_parallel_replicate_degree × context_parallel_degree × tensor_parallel_degree × pipeline_parallel_degree";

impl Calc<'_> {
    // ---- ParallelDims._validate --------------------------------------------------------------

    pub(super) fn degree(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p.or(1)? {
            0 => {
                self.report.refuse(
                    field,
                    Refusal::new(
                        format!("{} 0: torchtitan stops with AssertionError", field.key()),
                        "Parallelism degree should be >= 1, except for dp_shard",
                    )
                    .fix("1 means disabled."),
                );
                None
            }
            d => Some(d),
        }
    }

    pub(super) fn parallel_dims(&mut self, ws: u64) -> Option<Dims> {
        let (dp_replicate, cp, tp, pp, shard) = self.degrees()?;
        let others = [dp_replicate, cp, tp, pp]
            .iter()
            .try_fold(1u128, |acc, &d| acc.checked_mul(d.into()));
        let others_name = OTHERS_NAME;
        let Some(others) = others.filter(|&o| o <= u128::from(u64::MAX)) else {
            self.report.diag(
                Field::WorldSize,
                Level::Error,
                format!("{others_name} is larger than any world size; torchtitan stops with AssertionError: Invalid parallel dims"),
            );
            return None;
        };
        let dp_shard = self.dp_shard(ws, [dp_replicate, cp, tp, pp], shard, others)?;
        let product = others.checked_mul(dp_shard.into());
        if product != Some(ws.into()) {
            self.product_mismatch(
                ws,
                [dp_replicate, dp_shard, cp, tp, pp],
                shard,
                others,
                product,
            );
            return None;
        }
        self.report
            .set(Output::DataParallelShardDegree, Num::Int(dp_shard.into()));
        let d = Dims {
            dp_replicate,
            dp_shard,
            tp,
            cp,
            pp,
        };
        self.publish_dims(ws, d);
        Some(d)
    }

    /// The degrees as `ParallelDims._validate` checks them: each at least 1, dp_shard -1 or at
    /// least 1. `(dp_replicate, cp, tp, pp, dp_shard)`.
    fn degrees(&mut self) -> Option<(u64, u64, u64, u64, i64)> {
        let dp_replicate =
            self.degree(Field::DataParallelReplicateDegree, self.inputs.dp_replicate);
        let cp = self.degree(Field::ContextParallelDegree, self.inputs.cp);
        let tp = self.degree(Field::TensorParallelDegree, self.inputs.tp);
        let pp = self.degree(Field::PipelineParallelDegree, self.inputs.pp);
        let ep = self.degree(Field::ExpertParallelDegree, self.inputs.ep);
        let shard = match self.inputs.dp_shard.or(-1) {
            Some(s) if s == -1 || s >= 1 => Some(s),
            Some(s) => {
                self.report.refuse(
                    Field::DataParallelShardDegree,
                    Refusal::new(
                        format!(
                            "data_parallel_shard_degree {s}: torchtitan stops with AssertionError"
                        ),
                        "dp_shard must -1 or >=1.",
                    )
                    .fix("Use -1 to fill the rest of the world."),
                );
                None
            }
            None => None,
        };
        let (Some(dp_replicate), Some(cp), Some(tp), Some(pp), Some(_), Some(shard)) =
            (dp_replicate, cp, tp, pp, ep, shard)
        else {
            return None;
        };
        Some((dp_replicate, cp, tp, pp, shard))
    }

    /// dp_shard as given, or the -1 fill `world_size // (dp_replicate × cp × tp × pp)` (`others`),
    /// which must be at least 1.
    fn dp_shard(
        &mut self,
        ws: u64,
        [dp_replicate, cp, tp, pp]: [u64; 4],
        shard: i64,
        others: u128,
    ) -> Option<u64> {
        let others_name = OTHERS_NAME;
        Some(if shard < 0 {
            // parallel_dims.py: dp_shard = world_size // (dp_replicate * cp * tp * pp)  (floor)
            let fill = u128::from(ws) / others;
            self.report.explain_with(
                Output::DataParallelShardDegree,
                "data_parallel_shard_degree -1 = world_size // (dp_replicate × cp × tp × pp)",
                || format!("dp_shard = {ws} // ({dp_replicate} × {cp} × {tp} × {pp}) = {ws} // {others} = {fill}"),
);
            if fill == 0 {
                let fix = cluster::nearest_valid(ws, others as u64, others_name);
                self.report.refuse(
                    Field::DataParallelShardDegree,
                    Refusal::new(
                        "torchtitan stops with a bare AssertionError (no message) in ParallelDims._validate",
                        "assert dp_shard >= 1",
                    )
                    .fix(format!(
                        "The -1 fill is world_size // ({dp_replicate} × {cp} × {tp} × {pp}) = {ws} // {others} = 0. {fix}"
                    )),
                );
                return None;
            }
            fill as u64
        } else {
            self.report.explain_with(
                Output::DataParallelShardDegree,
                "data_parallel_shard_degree (as given)",
                || format!("dp_shard = {shard}"),
            );
            shard as u64
        })
    }

    /// `dp_replicate × dp_shard × cp × tp × pp` is not the world size: torchtitan's assertion.
    fn product_mismatch(
        &mut self,
        ws: u64,
        [dp_replicate, dp_shard, cp, tp, pp]: [u64; 5],
        shard: i64,
        others: u128,
        product: Option<u128>,
    ) {
        let others_name = OTHERS_NAME;
        let shown = product.map_or("more than 2^128".to_string(), |p| p.to_string());
        let text = format!(
            "Invalid parallel dims: dp_replicate({dp_replicate}) * dp_shard({dp_shard}) * cp({cp}) * tp({tp}) * pp({pp}) != WORLD_SIZE({ws})"
        );
        let fix = if shard < 0 {
            format!(
                "With dp_shard -1 the world size must be a multiple of {others_name} = {others}. {}",
                cluster::nearest_valid(ws, others as u64, others_name)
            )
        } else if u128::from(ws) % others == 0 {
            format!(
                "Nearest valid: world_size {shown}, or data_parallel_shard_degree {} (or -1) on {ws} GPUs.",
                u128::from(ws) / others
            )
        } else {
            format!(
                "Nearest valid: world_size {shown}; {ws} GPUs are not a multiple of {others_name} = {others}. {}",
                cluster::nearest_valid(ws, others as u64, others_name)
            )
        };
        self.report.refuse(
            Field::WorldSize,
            Refusal::new("torchtitan stops with AssertionError", text)
                .fix(format!("(the product is {shown}). {fix}")),
        );
        self.report.diag(
            Field::DataParallelShardDegree,
            Level::Error,
            format!("dp_replicate × dp_shard × cp × tp × pp = {shown} must equal world_size {ws} (see world_size)"),
        );
    }

    /// The batch mesh's degree (dp_replicate × dp_shard), set, explained and published in the grid.
    fn publish_dims(&mut self, ws: u64, d: Dims) {
        let Dims {
            dp_replicate,
            dp_shard,
            tp,
            cp,
            pp,
        } = d;
        let deg = d.batch_degree();
        if let Some(n) = int(deg) {
            self.report.set(Output::DpWorldSize, n);
        }
        if let Ok(dp) = u64::try_from(deg) {
            self.report.publish_grid(crate::calc::Grid {
                world: ws,
                dp,
                tp,
                cp,
                sp: 1,
                pp,
                ep: self.inputs.ep.given().unwrap_or(1),
            });
        }
        self.report.explain_with(
            Output::DpWorldSize,
            "data-parallel (batch mesh) degree = dp_replicate × dp_shard; cp, tp and pp ranks share a batch",
            || format!("dp = {dp_replicate} × {dp_shard} = {deg}"),
);
    }

    /// EP borrows ranks from dp_shard × cp × tp. HEAD checks it in `_validate`; 0.3.0 fails when
    /// `build_mesh` unflattens the sparse mesh `(pp, dp_replicate, efsdp, ep)`.
    pub(super) fn expert_parallel(&mut self, d: Dims) {
        let Some(ep) = self.inputs.ep.or(1) else {
            return;
        };
        if ep <= 1 {
            return;
        }
        let region = u128::from(d.dp_shard) * u128::from(d.cp) * u128::from(d.tp);
        if region % u128::from(ep) == 0 {
            return;
        }
        let fix = format!(
            "Nearest valid: expert_parallel_degree {} (a divisor of dp_shard × cp × tp = {region}).",
            join(&divisors_around(region, ep.into()))
        );
        let refusal = match self.version {
            Version::Tokens => Refusal::new(
                "torchtitan refuses",
                format!("expert_parallel_degree ({ep}) must divide dp_shard * cp * tp ({region})"),
            )
            .fix(fix),
            Version::Batch => {
                let efsdp = region / u128::from(ep);
                let sizes = (d.pp, d.dp_replicate, efsdp, ep);
                let prod = u128::from(d.pp)
                    .checked_mul(d.dp_replicate.into())
                    .and_then(|x| x.checked_mul(efsdp))
                    .and_then(|x| x.checked_mul(ep.into()));
                let ws = u128::from(d.pp) * d.batch_degree() * u128::from(d.cp) * u128::from(d.tp);
                Refusal::new(
                    "torchtitan 0.3.0 does not check this in ParallelDims; building the expert mesh fails \
                     with ValueError",
                    format!(
                        "The product of mesh_sizes=({}, {}, {}, {}) is {}, but the original dimension at \
                         dim=0 has size {ws}. These must be equal for unflatten to work correctly.",
                        sizes.0,
                        sizes.1,
                        sizes.2,
                        sizes.3,
                        prod.map_or("too large".to_string(), |p| p.to_string())
                    ),
                )
                .fix(format!(
                    "The expert degree must divide dp_shard × cp × tp = {region}. {fix}"
                ))
            }
        };
        self.report.refuse(Field::ExpertParallelDegree, refusal);
    }

    /// `seq_len_divisor = (tp if enable_sequence_parallel else 1) * (2 * cp if cp > 1 else 1)`.
    pub(super) fn sequence_divisor(&mut self, d: Dims) {
        let Some(sp) = self.inputs.sequence_parallel.or(true) else {
            return;
        };
        let divisor = seq_divisor(sp, d.tp, d.cp);
        let (field, n) = match self.version {
            Version::Batch => (Field::SeqLen, self.inputs.seq_len.or(DEFAULT_SEQ_LEN)),
            Version::Tokens => (
                Field::NumTokensPerMicrobatchPerDpRank,
                self.inputs
                    .tokens_per_microbatch
                    .or(DEFAULT_TOKENS_PER_MICROBATCH),
            ),
        };
        let Some(n) = n else { return };
        if u128::from(n) % divisor == 0 {
            return;
        }
        let text = match self.version {
            Version::Batch => format!(
                "Training sequence length ({n}) must be divisible by {divisor} for the configured sequence/context parallelism."
            ),
            Version::Tokens => format!(
                "The number of tokens per pipeline microbatch ({n}) must be divisible by {divisor} for the configured \
                 sequence/context parallelism."
            ),
        };
        // one string for dpcalc's part (the explorer makes one for each layout refused here)
        let mut fix = String::with_capacity(160);
        if sp && d.tp > 1 {
            let _ = write!(
                fix,
                "The divisor is tensor_parallel_degree {} (sequence parallel on)",
                d.tp
            );
        } else {
            fix.push_str("The divisor is");
        }
        if d.cp > 1 {
            let _ = write!(fix, " × 2 × context_parallel_degree {}", d.cp);
        }
        let _ = write!(fix, " = {divisor}. Nearest valid: {}", field.key());
        // `multiples_around` without its vector: the multiple below (when above 0) and above
        let below = u128::from(n) / divisor * divisor;
        match (below > 0, below.checked_add(divisor)) {
            (true, Some(above)) => write!(fix, " {below} or {above}."),
            (true, None) => write!(fix, " {below}."),
            (false, above) => write!(fix, " {}.", above.unwrap_or(divisor)),
        }
        .ok();
        self.report
            .refuse(field, Refusal::new("torchtitan refuses", text).fix(fix));
    }
}
