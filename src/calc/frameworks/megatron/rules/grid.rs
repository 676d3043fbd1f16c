//! Megatron-LM's grid stage: `validate_args`' layout checks (`total_model_size` and its
//! divisibility, the GTP weight shards, CP against the sequence, experts against EP) and
//! `initialize_model_parallel`'s expert grid.

use super::*;

impl Calc<'_> {
    /// A model-parallel size: absent is 1; 0 makes Megatron divide by zero.
    pub(super) fn parallel(&mut self, field: Field, p: Param<u64>) -> Option<u64> {
        match p {
            Param::Given(0) => {
                self.report.refuse(
                    field,
                    Refusal::new(
                        "Megatron's validate_args stops with",
                        "ZeroDivisionError: integer modulo by zero",
                    )
                    .fix(format!("{} must be at least 1.", field.key())),
                );
                None
            }
            p => p.or(1),
        }
    }

    pub(super) fn grid(&mut self) -> Option<DataParallel> {
        let i = self.inputs.clone();
        let new = self.version == Version::Core0192;
        if !new {
            self.unmodelled_keys();
        }
        let ws = i.cluster.world_size(self.report);
        let tp = self.parallel(Field::TensorModelParallelSize, i.tp);
        let pp = self.parallel(Field::PipelineModelParallelSize, i.pp);
        let cp = self.parallel(Field::ContextParallelSize, i.cp);
        let ep = self.parallel(Field::ExpertModelParallelSize, i.ep);
        // validate_args: expert_tensor_parallel_size defaults to tensor_model_parallel_size
        let etp = if new {
            self.expert_tp(i.etp)
        } else {
            Some(None)
        };
        let (ws, tp, pp, cp) = (ws?, tp?, pp?, cp?);
        let (ws, tp, pp, cp) = (ws as u128, tp as u128, pp as u128, cp as u128);
        let gtp = if new { self.weight_shards(tp)? } else { 1 };
        let Some(total) = tp
            .checked_mul(pp)
            .and_then(|x| x.checked_mul(cp))
            .and_then(|x| x.checked_mul(gtp))
        else {
            self.report.diag(
                Field::TensorModelParallelSize,
                Level::Error,
                "tensor × pipeline × context parallel size is too large to count",
            );
            return None;
        };
        if ws % total != 0 {
            self.not_divisible(ws, (tp, pp, cp, gtp), total);
            return None;
        }
        let dp = ws / total;
        self.dp_outputs(ws, (tp, pp, cp, gtp), dp);
        if new {
            self.cp_sequence(cp);
            self.positions_cover_the_sequence();
        }
        let expert_ok = self.num_experts(ep);
        if let (Some(ep), Some(etp), true) = (ep, etp, expert_ok) {
            self.expert_grid(ws, etp.unwrap_or(tp), pp, ep as u128, dp);
        }
        self.report.publish_grid(crate::calc::Grid {
            world: ws as u64,
            dp: dp as u64,
            tp: tp as u64,
            cp: cp as u64,
            sp: 1,
            pp: pp as u64,
            ep: ep.unwrap_or(1),
        });
        Some(DataParallel { dp, gtp })
    }

    /// validate_args (0.19.2): `expert_tensor_parallel_size`, at least 1 when given (`None`
    /// inside: it defaults to tensor parallel; `None`: unusable).
    fn expert_tp(&mut self, etp: Param<u64>) -> Option<Option<u128>> {
        match etp {
            Param::Given(0) => {
                self.report.refuse(
                    Field::ExpertTensorParallelSize,
                    Refusal::new(
                        "parallel_state.initialize_model_parallel stops with",
                        "ZeroDivisionError: integer modulo by zero",
                    )
                    .fix("expert_tensor_parallel_size must be at least 1 (or unset: it is then tensor parallel)."),
                );
                None
            }
            Param::Given(e) => Some(Some(e as u128)),
            Param::Absent => Some(None),
            Param::Invalid => None,
        }
    }

    /// validate_args' `world size is not divisible by total_model_size`, with the fix.
    fn not_divisible(
        &mut self,
        ws: u128,
        (tp, pp, cp, gtp): (u128, u128, u128, u128),
        total: u128,
    ) {
        let (gtp_name, gtp_worked) = if gtp > 1 {
            (" × gtp_weight_remat_size", format!(" × {gtp}"))
        } else {
            ("", String::new())
        };
        let fix = if total <= u64::MAX as u128 {
            cluster::nearest_valid(
                ws as u64,
                total as u64,
                if gtp > 1 {
                    "tensor_model_parallel_size × pipeline_model_parallel_size × context_parallel_size \
                     × gtp_weight_remat_size"
                } else {
                    "tensor_model_parallel_size × pipeline_model_parallel_size × context_parallel_size"
                },
            )
        } else {
            String::new()
        };
        self.report.refuse(
            Field::WorldSize,
            Refusal::new(
                "Megatron-LM refuses this layout in validate_args (arguments.py), before anything else runs",
                format!(
                    "AssertionError: world size ({ws}) is not divisible by total_model_size \
                     (total_model_size={total})"
                ),
            )
            .fix(format!(
                ", where total_model_size = tensor × pipeline × context parallel{gtp_name} = {tp} × {pp} × {cp}{gtp_worked}. \
                 (megatron-core alone, in parallel_state.initialize_model_parallel, raises \
                 \u{201c}RuntimeError: world_size ({ws}) is not divisible by {total}\u{201d}.) {fix}"
            )),
        );
    }

    /// `data_parallel_size`, set and explained (with GTP's note).
    fn dp_outputs(&mut self, ws: u128, (tp, pp, cp, gtp): (u128, u128, u128, u128), dp: u128) {
        let (gtp_name, gtp_worked) = if gtp > 1 {
            (" × gtp_weight_remat_size", format!(" × {gtp}"))
        } else {
            ("", String::new())
        };
        self.report.set(Output::DpWorldSize, Num::Int(dp as i128));
        self.report.explain_with(
            Output::DpWorldSize,
            format!("data_parallel_size = world_size // (tensor × pipeline × context parallel size{gtp_name}); EP is not in it"),
            || format!("data_parallel_size = {ws} // ({tp} × {pp} × {cp}{gtp_worked}) = {dp}"),
        );
        if gtp > 1 {
            self.report.diag(
                Field::TensorParallelNumWeightShards,
                Level::Note,
                format!(
                    "gtp_weight_remat_size = tensor_parallel_num_weight_shards // tensor_model_parallel_size = {gtp}: \
                     it counts in the model size, so data_parallel_size ({dp}) is the replicate degree, and the \
                     microbatch calculator is built with data_parallel_size × {gtp} = {} (global_vars.py).",
                    dp * gtp
                ),
            );
        }
    }

    /// The keys dpcalc reads for 0.19.2 only: a note when another release is chosen.
    pub(super) fn unmodelled_keys(&mut self) {
        for f in [
            Field::ExpertTensorParallelSize,
            Field::TensorParallelNumWeightShards,
            Field::EvalGlobalBatchSize,
            Field::EvalMicroBatchSize,
        ] {
            let given = match f {
                Field::ExpertTensorParallelSize => self.inputs.etp.is_given(),
                Field::TensorParallelNumWeightShards => self.inputs.weight_shards.is_given(),
                Field::EvalGlobalBatchSize => self.inputs.eval_global_batch_size.is_given(),
                _ => self.inputs.eval_micro_batch_size.is_given(),
            };
            if given {
                self.report.diag(
                    f,
                    Level::Note,
                    format!(
                        "dpcalc reads {} for Megatron 0.19.2 only; with this release it is ignored.",
                        f.key()
                    ),
                );
            }
        }
    }

    /// 0.19.2's `resolve_tensor_parallel_weight_shards` (model_parallel_config.py, called by
    /// validate_args): `gtp_weight_remat_size = shards // TP` (1 when unset).
    pub(super) fn weight_shards(&mut self, tp: u128) -> Option<u128> {
        let s = match self.inputs.weight_shards {
            Param::Absent => return Some(1),
            Param::Invalid => return None,
            Param::Given(s) => s as u128,
        };
        let f = Field::TensorParallelNumWeightShards;
        let by = "Megatron-LM's validate_args refuses it (resolve_tensor_parallel_weight_shards)";
        if s < tp {
            self.report.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "ValueError: tensor_parallel_num_weight_shards ({s}) must be >= \
                         tensor_model_parallel_size ({tp})."
                    ),
                )
                .fix(format!(
                    "Use a multiple of {tp}, or leave it unset (it is then {tp})."
                )),
            );
            return None;
        }
        if s % tp != 0 {
            self.report.refuse(
                f,
                Refusal::new(
                    by,
                    format!(
                        "ValueError: tensor_parallel_num_weight_shards ({s}) must be divisible by \
                         tensor_model_parallel_size ({tp})."
                    ),
                )
                .fix(format!("Nearest valid: {}.", nearest_multiples(s, tp))),
            );
            return None;
        }
        Some(s / tp)
    }

    /// 0.19.2's validate_args: with context parallelism the sequence splits into 2 × CP chunks.
    pub(super) fn cp_sequence(&mut self, cp: u128) {
        let Param::Given(seq) = self.inputs.seq_length else {
            return;
        };
        let seq = seq as u128;
        if cp > 1 && seq % (2 * cp) != 0 {
            self.report.refuse(
                Field::ContextParallelSize,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    "AssertionError: seq-length should be a multiple of 2 * context-parallel-size if \
                     context-parallel-size > 1.",
                )
                .fix(format!(
                    "seq_length {seq} is not a multiple of 2 × {cp} = {}; nearest: {}.",
                    2 * cp,
                    nearest_multiples(seq, 2 * cp)
                )),
            );
        }
    }

    /// 0.19.2's validate_args: the position embeddings cover the sequence (checked when both are
    /// given; Megatron also requires `--max-position-embeddings`, which the model stage says).
    fn positions_cover_the_sequence(&mut self) {
        let (Param::Given(max), Param::Given(seq)) =
            (self.inputs.max_position_embeddings, self.inputs.seq_length)
        else {
            return;
        };
        if max < seq {
            self.report.refuse(
                Field::MaxPositionEmbeddings,
                Refusal::new(
                    "Megatron-LM refuses this in validate_args",
                    format!(
                        "AssertionError: max_position_embeddings ({max}) must be greater than or \
                         equal to seq_length ({seq})."
                    ),
                )
                .fix(format!(
                    "Use at least {seq} (learned position embeddings then have that many rows)."
                )),
            );
        }
    }

    /// validate_args' expert parallelism check, the same at every release (arguments.py: 0.16.1
    /// line 1026, 0.19.2 line 1601, HEAD line 1656): EP > 1 needs `--num-experts`, a multiple of
    /// EP (`--num-experts 0` counts as unset). The count is the typed one, else the named
    /// preset's (`Inputs::num_experts`). Whether parallel_state is reached.
    pub(super) fn num_experts(&mut self, ep: Option<u64>) -> bool {
        let Some(ep) = ep.filter(|&e| e > 1) else {
            return true;
        };
        let by = "Megatron-LM refuses this in validate_args";
        match (self.inputs.num_experts, self.inputs.experts_of) {
            (Param::Absent | Param::Given(0), _) => {
                self.report.refuse(
                    Field::NumExperts,
                    Refusal::new(
                        by,
                        "AssertionError: num_experts must be non None to use expert model parallelism",
                    )
                    .fix(format!(
                        "Give num_experts (a multiple of expert_model_parallel_size {ep}), or set \
                         expert_model_parallel_size to 1."
                    )),
                );
                false
            }
            (Param::Given(n), from) if n % ep != 0 => {
                let refusal = Refusal::new(
                    by,
                    "AssertionError: Number of experts should be a multiple of expert model parallel_size.",
                );
                match from {
                    // the preset's experts: the layout is what the user typed
                    Some(id) => self.report.refuse(
                        Field::ExpertModelParallelSize,
                        refusal.fix(format!(
                            "{id} has {n} experts (--num-experts {n}), which expert_model_parallel_size \
                             {ep} does not divide; {}.",
                            nearest_divisors(n, ep)
                        )),
                    ),
                    None => self.report.refuse(
                        Field::NumExperts,
                        refusal.fix(format!(
                            "num_experts {n} is not a multiple of expert_model_parallel_size {ep}; nearest: {}.",
                            nearest_multiples(n as u128, ep as u128)
                        )),
                    ),
                }
                false
            }
            (Param::Invalid, _) => false,
            _ => true,
        }
    }

    /// parallel_state: the expert grid `expert_tensor × expert_model × pipeline` must divide too.
    pub(super) fn expert_grid(&mut self, ws: u128, tp: u128, pp: u128, ep: u128, dp: u128) {
        let Some(grid) = tp.checked_mul(ep).and_then(|x| x.checked_mul(pp)) else {
            self.report.diag(
                Field::ExpertModelParallelSize,
                Level::Error,
                "tensor × expert × pipeline parallel size is too large to count",
            );
            return;
        };
        if ws % grid != 0 {
            let fix = if grid <= u64::MAX as u128 {
                cluster::nearest_valid(
                    ws as u64,
                    grid as u64,
                    "tensor_model_parallel_size × expert_model_parallel_size × pipeline_model_parallel_size",
                )
            } else {
                String::new()
            };
            self.report.refuse(
                Field::ExpertModelParallelSize,
                Refusal::new(
                    "parallel_state.initialize_model_parallel refuses the expert grid",
                    format!(
                        "RuntimeError: world_size ({ws}) is not divisible by \
                         expert_tensor_model_pipeline_parallel size ({grid})"
                    ),
                )
                .fix(format!(
                    "(expert tensor parallel, which defaults to tensor parallel, × expert × pipeline = \
                     {tp} × {ep} × {pp}). {fix}"
                )),
            );
            return;
        }
        let edp = ws / grid;
        self.report
            .set(Output::ExpertDataParallelSize, Num::Int(edp as i128));
        self.report.explain_with(
            Output::ExpertDataParallelSize,
            "expert_data_parallel_size = world_size // (expert tensor × expert model × pipeline parallel size)",
            || format!("expert_data_parallel_size = {ws} // ({tp} × {ep} × {pp}) = {edp}"),
        );
        if ep > 1 {
            self.report.diag(
                Field::ExpertModelParallelSize,
                Level::Note,
                format!(
                    "Expert parallelism does not change the data-parallel size ({dp}) or the batch math; \
                     the experts' own data-parallel groups have {edp} ranks."
                ),
            );
        }
    }
}

/// The expert-parallel sizes above 1 nearest `ep` that divide `n` experts, worded for a fix.
fn nearest_divisors(n: u64, ep: u64) -> String {
    // a divisor is at most n (a preset's count, a few hundred); a bounded search either way
    const STEPS: usize = 4096;
    let below = (2..=ep.min(n)).rev().take(STEPS).find(|d| n % d == 0);
    let above = (ep.saturating_add(1)..=n).take(STEPS).find(|d| n % d == 0);
    match (below, above) {
        (Some(b), Some(a)) => format!("nearest: {b} or {a}"),
        (Some(d), None) | (None, Some(d)) => format!("nearest: {d}"),
        (None, None) => "expert parallelism needs more than one expert".to_string(),
    }
}
