//! DeepSpeed's grid stage: the world size `DeepSpeedConfig` checks the batch against (an mpu's,
//! `world / sequence_parallel_size`, or the whole world), the Ulysses groups and the
//! data-parallel replicas of AutoTP's mesh.

use super::*;

impl Calc<'_> {
    // ---- cluster -------------------------------------------------------------------------

    pub(super) fn cluster(&mut self) -> Option<Cluster> {
        let i = self.inputs;
        let world = i.cluster.world_size(self.report);
        let autotp = match i.autotp_size {
            Param::Invalid => None,
            p => p.given(),
        };
        let (sp, mpu) = (i.sequence_parallel_size, i.mpu_dp);
        if [sp, mpu].contains(&Param::Invalid) || i.autotp_size == Param::Invalid {
            return None;
        }
        if mpu == Param::Given(0) {
            self.report.diag(
                Field::MpuDataParallelWorldSize,
                Level::Error,
                "mpu_data_parallel_world_size must be at least 1 (an mpu's data-parallel group has at least one rank)",
            );
            return None;
        }
        let world = world?;
        // tensor_parallel.autotp_size: 0 (the default) and 1 mean no AutoTP.
        let autotp = autotp.unwrap_or(1).max(1);
        let source = match (mpu.given(), sp.given()) {
            (Some(dp), _) => Source::Mpu(dp),
            (None, Some(s)) => Source::SequenceParallel(s),
            (None, None) => Source::World,
        };
        let check = match source {
            Source::Mpu(dp) => self.mpu_world(world, dp, sp)?,
            Source::SequenceParallel(s) => self.sequence_parallel_world(world, s)?,
            Source::World => {
                self.report.explain(
                    Output::BatchCheckWorldSize,
                    "no mpu and no sequence_parallel_size: world_size = dist.get_world_size() (TP ranks included)",
                    format!("DeepSpeedConfig.world_size = {world}"),
                );
                Num::Int(world.into())
            }
        };
        self.report.set(Output::BatchCheckWorldSize, check);

        let replicas = self.replicas(world, source, autotp);
        if let Some(dp) = replicas {
            self.report.set(Output::DpWorldSize, Num::Int(dp.into()));
            self.report.publish_grid(crate::calc::Grid {
                tp: autotp,
                sp: i.sequence_parallel_size.given().unwrap_or(1),
                dp,
                ..crate::calc::Grid::data_parallel(world)
            });
        }
        Some(Cluster {
            world,
            check,
            source,
            replicas,
            autotp,
        })
    }

    /// With an mpu: the batch check's world size is its data-parallel size.
    fn mpu_world(&mut self, world: u64, dp: u64, sp: Param<u64>) -> Option<Num> {
        if dp > world {
            self.report.diag(
                Field::MpuDataParallelWorldSize,
                Level::Error,
                format!("mpu_data_parallel_world_size {dp} is more than the world_size {world}: no mpu can report that"),
            );
            return None;
        }
        if world % dp != 0 {
            self.report.diag(
                Field::MpuDataParallelWorldSize,
                Level::Warning,
                format!(
                    "mpu_data_parallel_world_size {dp} does not divide world_size {world}: an mpu's data-parallel \
                     groups split the world evenly (Megatron asserts world_size % (tp × pp) == 0)"
                ),
            );
        }
        if sp.is_given() {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Note,
                "With an mpu that has get_data_parallel_world_size, DeepSpeedConfig ignores sequence_parallel_size \
                 for the batch check (runtime/config.py).",
            );
        }
        self.report.explain(
            Output::BatchCheckWorldSize,
            "with an mpu: world_size = mpu.get_data_parallel_world_size()",
            format!("DeepSpeedConfig.world_size = {dp}"),
        );
        Some(Num::Int(dp.into()))
    }

    /// No mpu, `sequence_parallel_size` in the config: `world / sequence_parallel_size`, a float.
    fn sequence_parallel_world(&mut self, world: u64, s: u64) -> Option<Num> {
        if s == 0 {
            self.report.refuse(
                Field::SequenceParallelSize,
                Refusal::new(
                    format!("DeepSpeedConfig stops at world_size = {world} / 0"),
                    "ZeroDivisionError: division by zero",
                )
                .fix(format!(
                    "Leave sequence_parallel_size out, or set a divisor of {world}."
                )),
            );
            return None;
        }
        if world > EXACT_FLOAT {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Error,
                "world_size is too large for dpcalc to reproduce DeepSpeed's float world size exactly",
            );
            return None;
        }
        let w = world as f64 / s as f64;
        self.report.explain(
            Output::BatchCheckWorldSize,
            "no mpu, sequence_parallel_size in the config: world_size = dist.get_world_size() / sequence_parallel_size (a float)",
            format!("DeepSpeedConfig.world_size = {world} / {s} = {}", num::float_repr(w)),
        );
        if world % s != 0 {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Warning,
                format!(
                    "world_size / sequence_parallel_size = {world} / {s} = {} is not a whole number. DeepSpeedConfig \
                     still checks the batch against it and derives float values.",
                    num::float_repr(w)
                ),
            );
        }
        if s > 1 {
            self.ulysses_groups(world, s);
        } else {
            self.report.diag(
                Field::SequenceParallelSize,
                Level::Note,
                format!(
                    "sequence_parallel_size 1 still switches DeepSpeedConfig to the float division: world_size = {}",
                    num::float_repr(w)
                ),
            );
        }
        Some(Num::Float(w))
    }

    /// The refusals of `initialize_sequence_parallel` (`runtime/sequence_parallel/parallel_state_sp.py`),
    /// which HF/accelerate call to build the Ulysses groups.
    pub(super) fn ulysses_groups(&mut self, world: u64, s: u64) {
        let msg = if world < s {
            format!("RuntimeError: world_size ({world}) is less than sequence_parallel_size {s}")
        } else if world % s != 0 {
            format!(
                "RuntimeError: world_size ({world}) is not divisible by sequence_parallel_size {s})"
            )
        } else {
            return;
        };
        let fix = cluster::nearest_valid(world, s, "sequence_parallel_size");
        self.report.refuse(
            Field::SequenceParallelSize,
            Refusal::new(
                "DeepSpeed fails building the Ulysses groups (initialize_sequence_parallel)",
                msg,
            )
            .fix(fix),
        );
    }

    /// The engine's data-parallel size: the ranks that take distinct samples.
    pub(super) fn replicas(&mut self, world: u64, source: Source, autotp: u64) -> Option<u64> {
        match source {
            Source::Mpu(dp) => {
                self.report.explain(
                    Output::DpWorldSize,
                    "with an mpu, the engine and its data loader use mpu.get_data_parallel_world_size()",
                    format!("dp_world_size = {dp}"),
                );
                Some(dp)
            }
            Source::SequenceParallel(s) => {
                if autotp > 1 {
                    self.report.diag(
                        Field::AutotpSize,
                        Level::Hint,
                        "dpcalc does not model AutoTP together with Ulysses sequence parallelism; no data-parallel size is shown",
                    );
                    return None;
                }
                if s == 0 || world % s != 0 {
                    return None;
                }
                let dp = world / s;
                self.report.explain(
                    Output::DpWorldSize,
                    "Ulysses: the ranks of one sequence-parallel group share each sample, so replicas = world_size // sequence_parallel_size",
                    format!("dp_world_size = {world} // {s} = {dp}"),
                );
                Some(dp)
            }
            Source::World if autotp > 1 => {
                if world % autotp != 0 {
                    let fix = cluster::nearest_valid(world, autotp, "autotp_size");
                    self.report.diag(
                        Field::AutotpSize,
                        Level::Error,
                        format!(
                            "autotp_size {autotp} does not divide world_size {world}: the engine builds a \
                             (world_size // autotp_size, autotp_size) = ({}, {autotp}) device mesh \
                             (utils/groups.py::_init_tp_mesh_device), which needs all {world} ranks. {fix}",
                            world / autotp
                        ),
                    );
                    return None;
                }
                let dp = world / autotp;
                self.report.explain(
                    Output::DpWorldSize,
                    "AutoTP: the engine's data-parallel group is world_size // autotp_size (utils/groups.py::_init_tp_mesh_device)",
                    format!("dp_world_size = {world} // {autotp} = {dp}"),
                );
                Some(dp)
            }
            Source::World => {
                self.report.explain(
                    Output::DpWorldSize,
                    "no model parallelism: every rank is a data-parallel replica",
                    format!("dp_world_size = {world}"),
                );
                Some(world)
            }
        }
    }
}
