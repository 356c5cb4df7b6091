//===- Efficiency.h - what real kernels and links reach on a device -*- C++ -*-===//
//
// The achieved fractions of peak that turn a cluster's datasheet figures
// into times: the best-shape GEMM ceiling per precision, the SM count that
// quantizes GEMM waves, flash attention's forward and backward by sequence
// length, memory-bound kernels' share of HBM bandwidth, the kernel launch
// cost, collectives' asymptotic bus bandwidth and the message size at which
// they reach half of it, and the SMs communication kernels hold while they
// overlap compute. Each default is a kernel- or link-level measurement
// (docs/cost-model.md, "Efficiencies", names the source of every figure);
// a cluster file's `efficiency` object overrides them with the user's own
// measurements (integrations/torch/calibrate.py writes one). None is set
// from an end-to-end training run.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_EFFICIENCY_H
#define LIB_COSTMODEL_EFFICIENCY_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace sched {

/// Flash attention at one sequence length: forward and backward FLOP/s as
/// fractions of the BF16 peak (causal, FLOPs counted on the unmasked half;
/// the backward does 2.5x the forward's FLOPs).
struct AttentionPoint {
  double seqLen = 0;
  double forward = 0;
  double backward = 0;
};

/// Flash attention as an older cuDNN release ran it: the curve stands for
/// every release below `before` that no earlier entry covers.
struct AttentionRelease {
  double before = 0;
  /// The release measured ("cuDNN 9.13.1") and on which device.
  std::string measured;
  std::vector<AttentionPoint> points;
};

/// A GEMM measured on the user's hardware (calibration): its shape, its
/// precision and the fraction of that precision's peak it reached.
struct MeasuredGemm {
  double m = 0, n = 0, k = 0;
  bool fp8 = false;
  double fraction = 0;
};

/// A grouped expert GEMM timed on one core of the device at one shape: the
/// forward `rows x k` by `groups` experts' `k x n` weights (rows split
/// evenly over the groups) and the kernels of its two gradients, in
/// seconds (0: that pass was not timed). The rows are one core's: a device
/// of several cores that each run as their own accelerator (TPU7x's two
/// TensorCores) times each core on its share of the device's rows.
struct MeasuredGroupedGemm {
  double rows = 0, k = 0, n = 0, groups = 0;
  double forward = 0, data = 0, weight = 0;
};

/// A measured expert dispatcher inside one NVLink domain at one group size:
/// its "algorithm bandwidth" (the bytes of the token copies each rank
/// receives, one per token and destination rank, its own included, over
/// the time of one call) as a fraction of the domain link, for an FP8
/// dispatch (bytes of the FP8 elements, scales not counted), a BF16
/// dispatch and a BF16 combine.
struct ExpertExchangePoint {
  double ranks = 0;
  double fp8Dispatch = 0;
  double bf16Dispatch = 0;
  double combine = 0;
};

struct Efficiency {
  /// Which measured profile the defaults come from ("Hopper (H100, H800,
  /// H200)", or "calibrated: ..." when a cluster file says so).
  std::string profile = "generic";
  /// The software a calibration measured under (calibrate.py's `stack`
  /// object, its fields joined); empty for the built-in profiles.
  std::string measuredStack;
  /// Best-shape dense GEMM ceiling, of the BF16 and FP8 peaks.
  double matmul = 0.8;
  double matmulFp8 = 0.7;
  /// NVFP4 GEMMs at a transformer layer's shapes, of the FP4 peak; 0 where
  /// none was measured (fp4 is then refused: no figure is guessed).
  double matmulFp4 = 0;
  /// Grouped expert GEMMs at FP8 (one kernel over E/ep experts' rows), of
  /// the FP8 peak: forward and data gradient, and the weight gradient
  /// (k-grouped). 0: no grouped measurement, the dense ceiling applies.
  double groupedMatmulFp8 = 0;
  double groupedMatmulFp8Weight = 0;
  /// Grouped expert GEMMs at BF16, of the BF16 peak (every pass). 0: no
  /// grouped measurement, the dense ceiling applies.
  double groupedMatmul = 0;
  /// Streaming multiprocessors (TPU: 1, no wave quantization).
  int multiprocessors = 132;
  /// Output tiles of the GEMM kernels (rows x columns).
  int tileRows = 128;
  int tileColumns = 256;
  /// GEMMs measured on the user's machine: a GEMM of the same shape and
  /// precision runs at its measured fraction instead of the roofline's.
  std::vector<MeasuredGemm> gemms;
  /// BF16 grouped expert GEMMs timed at their shapes (the profile's
  /// kernel, docs/cost-model.md "Efficiencies"): a grouped GEMM of one of
  /// these shapes takes the timed pass instead of `groupedMatmul`.
  std::vector<MeasuredGroupedGemm> groupedGemms;
  /// Cores of one device that each run as their own accelerator and split
  /// its rows (TPU7x: two TensorCores, two JAX devices); 1 elsewhere.
  double coresPerDevice = 1;
  /// Flash attention by sequence length, for standard heads (d = 128) and
  /// for multi-head latent attention (d_qk 192, d_v 128); interpolated in
  /// log(seq), clamped at the ends.
  std::vector<AttentionPoint> attention;
  std::vector<AttentionPoint> latentAttention;
  /// The standard-head curve older cuDNN releases reached on this device
  /// (ascending `before`; a release at or past the last `before` runs
  /// `attention`). Empty where no older release was measured, and once a
  /// cluster file sets its own attention figures.
  std::vector<AttentionRelease> olderAttention;
  /// Memory-bound kernels (norms, activations, casts, permutes), of HBM
  /// bandwidth.
  double hbm = 0.8;
  /// Host time to launch one kernel: a stream of kernels shorter than this
  /// waits for the host.
  double kernelLaunch = 3e-6;
  /// Ring reduce-scatter / all-gather bus bandwidth for large messages, of
  /// domain_bandwidth and of scale_out_bandwidth.
  double domainCollective = 0.8;
  double scaleOutCollective = 0.73;
  /// Message size (bytes) at which a collective reaches half of its large-
  /// message bus bandwidth, inside a domain and across domains.
  double domainHalfBytes = 20e6;
  double scaleOutHalfBytes = 80e6;
  /// Expert dispatch / combine (DeepEP-style), of the bandwidth it uses.
  double allToAll = 0.8;
  /// The dispatcher measured by group size when the whole expert-parallel
  /// group sits in one NVLink domain (HybridEP on Blackwell), interpolated
  /// linearly in the ranks and held at the ends; empty: `allToAll` on the
  /// copy count of Communication.cpp applies.
  std::vector<ExpertExchangePoint> expertExchange;
  /// SMs a communication kernel holds while it overlaps compute: the
  /// expert all-to-all (DeepEP) and NCCL's collectives.
  int allToAllMultiprocessors = 20;
  int collectiveMultiprocessors = 16;
  /// SMs Transformer Engine's userbuffers kernels hold while they overlap
  /// tensor-parallel collectives with GEMMs (bulk and pipelined overlap).
  int tensorParallelMultiprocessors = 16;
  /// Whether the device's stack pipelines tensor-parallel collectives with
  /// GEMMs as Transformer Engine does (GPUs); XLA's collective matmuls on
  /// TPUs are not modelled.
  bool tensorParallelOverlap = true;
  /// Bytes of device memory gone before training allocates anything: the
  /// driver's reservation, the CUDA context, cuBLAS and attention kernels'
  /// workspaces (measured on an H100: docs/cost-model.md, "Usable memory").
  double reservedMemory = 0;
  /// Of the memory left, the share the allocator's peak reservation leaves
  /// to tensors: PyTorch's caching allocator by default, and with
  /// expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
  /// `--allocator expandable`). On devices without a measurement, an
  /// engineering margin stated as such.
  double usableMemory = 0.9;
  double usableMemoryExpandable = 0.9;
  /// Whether the shares above are a measured PyTorch caching allocator's
  /// (GPUs) or XLA's compile-time HBM budget (TPUs: XLA places buffers
  /// when it compiles the step).
  bool measuredAllocator = true;
  /// Bytes/s one way between a device and its host's memory (datasheets:
  /// PCIe or NVLink-C2C), what activation offload moves over; 0 when no
  /// figure is known (offload is then refused).
  double hostBandwidth = 0;

  /// Runs `attention` as cuDNN `release` (major + minor / 100, 9.11 for
  /// 9.11; 0: the newest measured) did, from `olderAttention`; the profile
  /// names the release.
  void useCudnnRelease(double release);
  /// Flash attention's forward or backward fraction at `seqLen`.
  double attentionAt(double seqLen, bool latent, bool backward) const;
  /// The measured dispatcher's fraction of the domain link (see
  /// ExpertExchangePoint) for a group of `ranks`: a dispatch (FP8 or BF16
  /// elements) or a combine. Needs a non-empty `expertExchange`.
  double expertExchangeAt(double ranks, bool dispatch, bool fp8) const;
  /// The share of compute throughput left while a communication kernel
  /// holding `sms` multiprocessors runs beside it.
  double computeShareBeside(int sms) const;
};

/// A device's memory as the driver reports it (nvidia-smi's memory.total;
/// the GiB Google states for TPUs) when `hbmBytes` is its datasheet label
/// read as decimal bytes: 80e9 for an H100's "80 GB" is 81,559 MiB
/// (85.52e9 B). None when `hbmBytes` is no label of that device's.
std::optional<double> labelledMemory(llvm::StringRef deviceName,
                                     double hbmBytes);

/// The measured defaults for a device, chosen by its name (case and
/// punctuation ignored): A100; H100/H800/H200/GH200; B200 (HGX); GB200 (a
/// B200 in an NVL72 rack); B300/GB300; TPU v4, v5p, v5e, v6e, 7x
/// (Ironwood); anything else gets the generic profile, which says so.
Efficiency efficiencyForDevice(llvm::StringRef deviceName);

/// The device's generation, by the same name rules: "ampere" (A100),
/// "hopper", "blackwell" (B200, GB200, B300, GB300), "tpu", or "other".
/// The planner's error bands are kept per generation (ErrorBands.h).
llvm::StringRef deviceGeneration(llvm::StringRef deviceName);

} // namespace sched

#endif // LIB_COSTMODEL_EFFICIENCY_H
