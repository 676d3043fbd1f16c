//! What a GPU holds beside the tensors PyTorch allocates (`max_memory_allocated`): the figure
//! `nvidia-smi` shows is that plus the terms below, each named with its source. An estimate of
//! the runtime's own memory, not a measurement; the constants are the documented defaults, not
//! fitted to any run.
//!
//! - **The CUDA context** ([`CUDA_CONTEXT_BYTES`]): the driver's per-process state and the
//!   kernels it has loaded. Lazy loading loads only those a run calls (NVIDIA CUDA Programming
//!   Guide, "Lazy Loading": a CUDA 11.7+ runtime and an r515+ driver; the CUDA default since
//!   12.2, and PyTorch's since 1.13, which sets `CUDA_MODULE_LOADING=LAZY` when unset:
//!   pytorch/pytorch#86509, 287,047,680 B lazy against 666,632,192 B eager in its test). The
//!   figure is a lazy-loading runtime's: an older runtime loads every module at start (the
//!   transformers guide measured 1,343 MiB on CUDA 11.2, a V100). Reported sizes range from 0.3
//!   to 2 GiB; 0.5 GiB is taken.
//! - **The communicators** ([`COMMUNICATOR_BYTES`] each): NCCL keeps a buffer of
//!   `NCCL_BUFFSIZE` (4 MiB by default, NCCL's environment-variable documentation) per channel
//!   for each of its protocols' connections; with 16 channels (NCCL picks 2 to 32 by topology)
//!   and the Simple and LL128 protocols, 128 MiB per communicator. Each process group of more
//!   than one GPU the layout creates and communicates over is one: data parallel (or the
//!   sharding group), tensor, context and Ulysses, expert and pipeline parallel.
//! - **The allocator's reserve** (reserved but not allocated: fragmentation of the caching
//!   allocator) is not modelled: it depends on the order of allocations, not on the layout.

/// The CUDA context and loaded kernels, per process.
pub const CUDA_CONTEXT_BYTES: u128 = 512 << 20;

/// `NCCL_BUFFSIZE`'s default.
pub const NCCL_BUFFSIZE: u128 = 4 << 20;

/// Channels assumed per communicator.
pub const NCCL_CHANNELS: u128 = 16;

/// One communicator's buffers: a buffer per channel for the Simple and the LL128 protocol.
pub const COMMUNICATOR_BYTES: u128 = NCCL_BUFFSIZE * NCCL_CHANNELS * 2;

/// The process groups of a layout, by their sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    pub dp: u64,
    pub tp: u64,
    pub cp: u64,
    pub sp: u64,
    pub ep: u64,
    pub pp: u64,
}

impl Groups {
    /// The groups of more than one GPU, by name.
    pub fn communicators(&self) -> Vec<&'static str> {
        [
            ("data parallel", self.dp),
            ("tensor parallel", self.tp),
            ("context parallel", self.cp),
            ("Ulysses", self.sp),
            ("expert parallel", self.ep),
            ("pipeline parallel", self.pp),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(name, _)| name)
        .collect()
    }
}

/// The runtime's bytes beside the allocated tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    pub context: u128,
    /// The communicators, by name.
    pub communicators: Vec<&'static str>,
    pub buffers: u128,
}

impl Runtime {
    pub fn of(groups: &Groups) -> Runtime {
        let communicators = groups.communicators();
        Runtime {
            context: CUDA_CONTEXT_BYTES,
            buffers: COMMUNICATOR_BYTES * communicators.len() as u128,
            communicators,
        }
    }

    pub fn total(&self) -> u128 {
        self.context + self.buffers
    }

    /// `allocated` plus the runtime's bytes.
    pub fn on_device(&self, allocated: u128) -> Option<u128> {
        allocated.checked_add(self.total())
    }
}
