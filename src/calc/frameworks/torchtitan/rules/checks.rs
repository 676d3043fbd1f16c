//! torchtitan's checks stage: `Trainer.Config.__post_init__` (the pipeline microbatch size, CUDA
//! graphs against pipeline parallelism, HEAD's `num_pp_microbatches`).

use super::*;

impl Calc<'_> {
    // ---- Trainer.Config.__post_init__ ------------------------------------------------------

    pub(super) fn config_checks(&mut self) {
        let pp = self.inputs.pp.given().filter(|&p| p > 1);
        if pp.is_some() && self.inputs.disable_cuda_graphs == Param::Absent
            || pp.is_some() && self.inputs.disable_cuda_graphs == Param::Given(false)
        {
            self.report.refuse(
                Field::DisableCudaGraphs,
                Refusal::new(
                    "torchtitan refuses",
                    "CUDA graphs do not support pipeline parallelism yet. Set --training.disable_cuda_graphs.",
                )
                .fix("Fix: disable_cuda_graphs = true (training.disable_cuda_graphs)."),
            );
        }
        match self.version {
            Version::Batch => {
                let Some(mbs) = self.inputs.pp_microbatch_size.or(1) else {
                    return;
                };
                if mbs == 0 {
                    self.report.refuse(
                        Field::PipelineParallelMicrobatchSize,
                        Refusal::new(
                            "torchtitan refuses",
                            "parallelism.pipeline_parallel_microbatch_size must be greater than 0.",
                        ),
                    );
                    return;
                }
                let (Some(_), Some(lbs)) = (
                    pp,
                    self.inputs.local_batch_size.or(DEFAULT_LOCAL_BATCH_SIZE),
                ) else {
                    return;
                };
                if lbs % mbs != 0 {
                    let fix_mbs = divisors_around(lbs.into(), mbs.into());
                    let fix_lbs = multiples_around(lbs.into(), mbs.into());
                    self.report.refuse(
                        Field::PipelineParallelMicrobatchSize,
                        Refusal::new(
                            "torchtitan refuses",
                            format!(
                                "training.local_batch_size ({lbs}) must be evenly divisible by \
                                 parallelism.pipeline_parallel_microbatch_size ({mbs}) when pipeline \
                                 parallelism is enabled."
                            ),
                        )
                        .fix(format!(
                            "Nearest valid: pipeline_parallel_microbatch_size {}, or local_batch_size {}.",
                            join(&fix_mbs),
                            join(&fix_lbs)
                        )),
                    );
                }
            }
            Version::Tokens => {
                if self.inputs.num_pp_microbatches == Param::Given(0) {
                    self.report.refuse(
                        Field::NumPpMicrobatches,
                        Refusal::new(
                            "torchtitan refuses",
                            "parallelism.num_pp_microbatches must be greater than 0.",
                        ),
                    );
                }
            }
        }
    }
}
