//! The GPUs dpcalc knows: each one's `gpu=` id, name, memory and dense BF16 peak.

/// A GPU dpcalc knows: its `gpu=` id, name, memory (the vendor's figure, GB = 10⁹ bytes) and dense
/// BF16 peak (torchtitan 0.3.0's `get_peak_flops` table).
#[derive(Debug, PartialEq)]
pub struct Gpu {
    pub id: &'static str,
    pub name: &'static str,
    pub memory_gb: u64,
    pub peak_tflops: u64,
}

/// What the step-time estimate reads of a GPU (each figure's source in [`HARDWARE_SOURCES`] and
/// the GPU's own [`Figures::note`]); a table of its own, which only the full app's model stage
/// reads (a first view holds none of it). A figure no source here gives is `None`, and the note
/// says what the estimate takes instead.
#[derive(Debug, PartialEq)]
pub struct Figures {
    /// The best BF16 matmul rate measured, per mille of the peak (MAMF).
    pub mamf_permille: u64,
    /// Where the dense BF16 peak is not known, the range it lies in, TFLOP/s (the [`Gpu`]'s
    /// `peak_tflops` is then the range's midpoint, which the note says).
    pub peak_range_tflops: Option<(u64, u64)>,
    /// Dense FP8 peak, TFLOP/s (`None`: no FP8 tensor cores, or not known; the note says which).
    pub fp8_peak_tflops: Option<u64>,
    /// Memory bandwidth, GB/s (the datasheet's).
    pub memory_gbps: u64,
    /// The share of the memory bandwidth a STREAM-like kernel reaches, per mille (`None`: not
    /// measured here; the estimate then takes [`STREAM_PERMILLE_DEFAULT`], which the note says).
    pub stream_permille: Option<u64>,
    /// Streaming multiprocessors (AMD: compute units); `None`: not known here.
    pub sm_count: Option<u64>,
    /// A GPU's link inside its node, GB/s one direction (NVLink, Infinity Fabric or PCIe).
    pub link_gbps: u64,
    /// A GPU's network to other nodes, GB/s (its NIC's line rate in the vendor's reference system).
    pub nic_gbps: u64,
    /// Causal attention's forward and backward rate at head dimension 128, per mille of the
    /// peak, at sequences of 4,096, 8,192 and 16,384 tokens ([`ATTENTION_SEQS`]; between them
    /// interpolated on log₂ s, beyond them the nearest): FlashAttention-2's (PyTorch SDPA's flash
    /// backend), and the fused kernels of cuDNN (FlashAttention-3's class on Hopper) that
    /// Transformer Engine calls.
    pub fa2_permille: [u64; 3],
    pub fused_attention_permille: [u64; 3],
    /// What of this GPU is not known or taken from another, for the page.
    pub note: &'static str,
}

/// The reachable share of the memory bandwidth where a GPU's own is not measured: H100 SXM's
/// STREAM Triad, 2.97 of 3.35 TB/s (Azure ND H100 v5, samuel-bohman/AI-benchmarking-guide
/// `Azure_Results/ND_H100_v5_results.md`, "HBM Bandwidth"; Copy 2.90, Dot 3.18).
pub const STREAM_PERMILLE_DEFAULT: u64 = 887;

/// The sequence lengths of [`Figures::fa2_permille`]'s points.
pub const ATTENTION_SEQS: [u64; 3] = [4096, 8192, 16384];

impl Figures {
    /// Causal attention's rate at sequence `seq`, per mille of the peak: FlashAttention-2's, or
    /// cuDNN's fused attention (`fused`).
    pub fn attention_permille(&self, fused: bool, seq: u64) -> f64 {
        let pts = if fused {
            self.fused_attention_permille
        } else {
            self.fa2_permille
        };
        let x = (seq.max(1) as f64).log2();
        let xs = ATTENTION_SEQS.map(|s| (s as f64).log2());
        if x <= xs[0] {
            return pts[0] as f64;
        }
        for i in 0..2 {
            if x <= xs[i + 1] {
                let t = (x - xs[i]) / (xs[i + 1] - xs[i]);
                return pts[i] as f64 + t * (pts[i + 1] as f64 - pts[i] as f64);
            }
        }
        pts[2] as f64
    }

    /// The dense FP8 peak the estimate takes, TFLOP/s: the known one; for a GPU whose BF16 peak
    /// is itself a range (the 96 GB 500 W H100) twice the BF16 figure taken, the ratio of every
    /// Hopper part (the note says so); `None` without FP8.
    pub fn fp8_peak(&self, gpu: &Gpu) -> Option<u64> {
        self.fp8_peak_tflops
            .or(self.peak_range_tflops.map(|_| 2 * gpu.peak_tflops))
    }

    /// The share of the memory bandwidth the memory-bound kernels reach, as a fraction.
    pub fn stream_fraction(&self) -> f64 {
        self.stream_permille.unwrap_or(STREAM_PERMILLE_DEFAULT) as f64 / 1000.0
    }
}

/// Where the [`Figures`] come from.
pub const HARDWARE_SOURCES: &str = "MAMF: stas00/ml-engineering compute/accelerator \"Maximum Achievable Matmul FLOPS\" (A100 SXM 85.9 %, A100 PCIe 82.2 %, H100 SXM 80.1 % — also taken for H100 PCIe/NVL and the 96 GB 500 W H100 —, H200 80.3 %, B200 77.6 % — also GB200 —, MI300X 60.1 %); dense BF16 and FP8 peaks, memory bandwidth, SM counts and links: the vendors' datasheets and whitepapers (A100: 312 TFLOP/s, no FP8, 108 SMs; H100 SXM: 989 / 1,979, 132 SMs; H100 PCIe: 756 / 1,513, 114 SMs; H100 NVL: 835 / 1,671; H200: 989 / 1,979; B200: 2,250 / 4,500; GB200: 2,500 / 5,000; MI300X: 1,307 / 2,615, 304 CUs; NVLink 3: 300 GB/s per direction, NVLink 4: 450, NVLink 5: 900, PCIe 5 x16: 64, MI300X Infinity Fabric 7 × 64); the 96 GB HBM2e H100 at 500 W (Meta's Grand Teton): pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (\"96GB HBM2e with 2.4 TB/sec\", \"the default 500W power limit\", 400 Gb/s RDMA per GPU; footnote 2: \"the actual peak TFLOPs number is between SXM and NVL, and we don't know its exact value\"); reachable memory bandwidth: H100 SXM's STREAM Triad 2.97 of 3.35 TB/s (samuel-bohman/AI-benchmarking-guide Azure_Results/ND_H100_v5_results.md), taken for the GPUs not measured; NICs: the reference systems (DGX A100: one 200 Gb/s HDR port per GPU, Narayanan et al. 2021 §5; DGX H100/H200/B200 and GB200 NVL72: one 400 Gb/s ConnectX-7 per GPU; MI300X platforms: 400 Gb/s per GPU); attention: on A100 FlashAttention-2's forward and backward at head dimension 128, causal, long sequences, about 190 TFLOP/s (Dao 2023, Figure 6); on Hopper the forward and backward of causal attention at head dimension 128 measured by NVIDIA/cudnn-frontend benchmark/benchmark_results.csv (clocks locked at 1,980 MHz, 700 W; benchmark/README.md): PyTorch SDPA's flash backend (FlashAttention-2) 264, 290 and 311 TFLOP/s at 4k, 8k and 16k tokens, cuDNN's SDPA 468, 490 and 520, as fractions of 989; H200, B200, GB200, the 96 GB 500 W H100 and MI300X take H100's fractions (not measured)";

/// Each GPU's [`Figures`], by its `gpu=` id.
pub const FIGURES: &[(&str, Figures)] = &[
    (
        "a100-40gb",
        Figures {
            mamf_permille: 859,
            peak_range_tflops: None,
            fp8_peak_tflops: None,
            memory_gbps: 1555,
            stream_permille: None,
            sm_count: Some(108),
            link_gbps: 300,
            nic_gbps: 25,
            fa2_permille: [600, 600, 600],
            fused_attention_permille: [600, 600, 600],
            note: "No FP8 tensor cores; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "a100-80gb",
        Figures {
            mamf_permille: 859,
            peak_range_tflops: None,
            fp8_peak_tflops: None,
            memory_gbps: 2039,
            stream_permille: None,
            sm_count: Some(108),
            link_gbps: 300,
            nic_gbps: 25,
            fa2_permille: [600, 600, 600],
            fused_attention_permille: [600, 600, 600],
            note: "No FP8 tensor cores; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "h100-sxm",
        Figures {
            mamf_permille: 801,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(1979),
            memory_gbps: 3350,
            stream_permille: Some(887),
            sm_count: Some(132),
            link_gbps: 450,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "Reachable memory bandwidth measured (STREAM Triad 2.97 of 3.35 TB/s); the sustained clock under load is not published.",
        },
    ),
    (
        "h100-96gb-500w",
        Figures {
            mamf_permille: 801,
            peak_range_tflops: Some((835, 989)),
            fp8_peak_tflops: None,
            memory_gbps: 2400,
            stream_permille: None,
            sm_count: None,
            link_gbps: 450,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "Meta's Grand Teton H100 (96 GB HBM2e, 2.4 TB/s, 500 W limit): its dense BF16 peak is not known (torchtitan: between the NVL's 835 and the SXM's 989 TFLOP/s), the midpoint 912 is taken; its FP8 peak (twice the BF16 figure taken, as on every Hopper part) and SM count are not known; its MAMF is H100 SXM's (not measured at 500 W), its NVLink H100 SXM's; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "h100-pcie",
        Figures {
            mamf_permille: 801,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(1513),
            memory_gbps: 2000,
            stream_permille: None,
            sm_count: Some(114),
            link_gbps: 64,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "MAMF and attention rates H100 SXM's; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "h100-nvl",
        Figures {
            mamf_permille: 801,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(1671),
            memory_gbps: 3900,
            stream_permille: None,
            sm_count: Some(132),
            link_gbps: 64,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "MAMF and attention rates H100 SXM's; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "h200",
        Figures {
            mamf_permille: 803,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(1979),
            memory_gbps: 4800,
            stream_permille: None,
            sm_count: Some(132),
            link_gbps: 450,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "Attention rates H100's; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "b200",
        Figures {
            mamf_permille: 776,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(4500),
            memory_gbps: 8000,
            stream_permille: None,
            sm_count: None,
            link_gbps: 900,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "SM count not known here; attention rates H100's fractions; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "gb200",
        Figures {
            mamf_permille: 776,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(5000),
            memory_gbps: 8000,
            stream_permille: None,
            sm_count: None,
            link_gbps: 900,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [473, 495, 526],
            note: "SM count not known here; MAMF B200's; attention rates H100's fractions; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
    (
        "mi300x",
        Figures {
            mamf_permille: 601,
            peak_range_tflops: None,
            fp8_peak_tflops: Some(2615),
            memory_gbps: 5300,
            stream_permille: None,
            sm_count: Some(304),
            link_gbps: 448,
            nic_gbps: 50,
            fa2_permille: [267, 293, 314],
            fused_attention_permille: [267, 293, 314],
            note: "304 compute units; attention rates H100's FlashAttention-2 fraction; no STREAM measurement: H100 SXM's 88.7 % of the bandwidth is taken.",
        },
    ),
];

/// A GPU's [`Figures`].
pub fn figures(gpu: &Gpu) -> Option<&'static Figures> {
    FIGURES.iter().find(|(id, _)| *id == gpu.id).map(|(_, f)| f)
}

/// What the driver gives PyTorch of a GPU: `torch.cuda.get_device_properties(i).total_memory`
/// (CUDA's `cudaDeviceProp::totalGlobalMem`, the "total capacity" of PyTorch's out-of-memory
/// message), bytes, with where the figure was published. It is less than what `nvidia-smi`
/// shows as the total (the driver keeps about 0.5 GiB: 81,559 MiB against 81,106 MiB on an
/// H100 SXM) and it differs by a few MiB between driver releases; a table of its own, which only
/// the full app's model stage reads (a first view holds none of it).
#[derive(Debug, PartialEq)]
pub struct Usable {
    pub bytes: u128,
    pub source: &'static str,
}

/// Each GPU's [`Usable`] memory, by its `gpu=` id; a GPU missing here has no published figure
/// dpcalc found (its nominal memory is taken, and the page says so).
pub const USABLE: &[(&str, Usable)] = &[
    (
        "a100-40gb",
        Usable {
            bytes: 42_298_834_944,
            source: "CUDA deviceQuery on an A100-SXM4-40GB, driver 12.2: \"40339 MBytes (42298834944 bytes)\" (bottlerocket-os/bottlerocket#3873); PyTorch's OOM messages on A100 40GB print 39.39–39.49 GiB",
        },
    ),
    (
        "a100-80gb",
        Usable {
            bytes: 81_049 << 20,
            source: "mixbench on an A100 80GB PCIe, driver 12.3: \"Total global mem: 81049 MB\" (ekondis/mixbench#47; the SXM4 80GB's HBM2e is the same size, its OOM messages print 79.15 GiB = 81,049 MiB)",
        },
    ),
    (
        "h100-sxm",
        Usable {
            bytes: 85_045_477_376,
            source: "CUDA deviceQuery on an H100 80GB HBM3, driver 12.7: \"81106 MBytes (85045477376 bytes)\" (thamada/nvidia-smi nvsim/H100SXMx8_deviceQuery.py); torch prints total_memory=81082MB–81090MB (torch 2.0.1–2.7) and OOM messages 79.18–79.19 GiB; nvidia-smi's total is 81559MiB (NVIDIA/nccl#1264)",
        },
    ),
    (
        "h100-pcie",
        Usable {
            bytes: 81_008 << 20,
            source: "torch.cuda.get_device_properties on an H100 PCIe: \"total_memory=81008MB\" (a published printout)",
        },
    ),
    (
        "h100-nvl",
        Usable {
            bytes: 99_456_909_312,
            source: "torch.cuda.get_device_properties of an H100 NVL as a published test stubs it: total_memory=99456909312 (a weak source: the DRM total on that GPU is 99961274368 B, fastfetch-cli/fastfetch#1658, about the driver's 0.5 GiB more)",
        },
    ),
    (
        "h200",
        Usable {
            bytes: 143_156 << 20,
            source: "torch.cuda.get_device_properties on an H200: \"total_memory=143156MB\" (a published printout); OOM messages print 139.80 GiB; nvidia-smi's total is 143771MiB (NVIDIA/cuda-samples#311)",
        },
    ),
    (
        "b200",
        Usable {
            bytes: 182_631 << 20,
            source: "torch.cuda.get_device_properties on a B200: \"total_memory=182631MB\" (a published printout; 182642MB in another); cudaGetDeviceProperties prints 178.35 GiB (pytorch/ao#4002)",
        },
    ),
    (
        "mi300x",
        Usable {
            bytes: 196_592 << 20,
            source: "torch.cuda.get_device_properties on an AMD Instinct MI300X (ROCm): \"total_memory=196592MB\" (a published printout; 192 GiB of HBM3, more than the 192 GB nominal)",
        },
    ),
];

/// A GPU's [`Usable`] memory, when a figure was found.
pub fn usable(gpu: &Gpu) -> Option<&'static Usable> {
    USABLE.iter().find(|(id, _)| *id == gpu.id).map(|(_, u)| u)
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
    // Meta's Grand Teton H100 (the GPUs of torchtitan's published H100 runs): 96 GB HBM2e at a
    // 500 W limit; its peak is between the NVL's and the SXM's (torchtitan's footnote), the
    // midpoint taken (see its `Figures::peak_range_tflops`)
    Gpu {
        id: "h100-96gb-500w",
        name: "H100 96GB HBM2e 500 W",
        memory_gb: 96,
        peak_tflops: 912,
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
