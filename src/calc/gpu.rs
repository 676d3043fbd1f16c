//! The GPUs dpcalc knows: each one's `gpu=` id, name, memory and dense BF16 peak.

/// A GPU dpcalc knows: its `gpu=` id, name, memory (the vendor's figure, GB = 10⁹ bytes) and dense
/// BF16 peak (torchtitan 0.3.0's `get_peak_flops` table).
pub struct Gpu {
    pub id: &'static str,
    pub name: &'static str,
    pub memory_gb: u64,
    pub peak_tflops: u64,
}

pub const GPUS: &[Gpu] = &[
    Gpu {
        id: "a100-40gb",
        name: "A100 40GB",
        memory_gb: 40,
        peak_tflops: 312,
    },
    Gpu {
        id: "a100-80gb",
        name: "A100 80GB",
        memory_gb: 80,
        peak_tflops: 312,
    },
    Gpu {
        id: "h100-sxm",
        name: "H100 SXM",
        memory_gb: 80,
        peak_tflops: 989,
    },
    Gpu {
        id: "h100-pcie",
        name: "H100 PCIe",
        memory_gb: 80,
        peak_tflops: 756,
    },
    Gpu {
        id: "h100-nvl",
        name: "H100 NVL",
        memory_gb: 94,
        peak_tflops: 835,
    },
    Gpu {
        id: "h200",
        name: "H200",
        memory_gb: 141,
        peak_tflops: 989,
    },
    Gpu {
        id: "b200",
        name: "B200",
        memory_gb: 180,
        peak_tflops: 2250,
    },
    Gpu {
        id: "gb200",
        name: "GB200",
        memory_gb: 186,
        peak_tflops: 2500,
    },
    Gpu {
        id: "mi300x",
        name: "MI300X",
        memory_gb: 192,
        peak_tflops: 1300,
    },
];

pub fn gpu(id: &str) -> Option<&'static Gpu> {
    GPUS.iter().find(|g| g.id.eq_ignore_ascii_case(id.trim()))
}
