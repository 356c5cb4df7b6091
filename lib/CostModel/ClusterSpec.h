//===- ClusterSpec.h - device and network descriptions ----------*- C++ -*-===//
//
// A cluster as the cost model sees it (docs/cost-model.md, "Cluster"): one
// kind of device, grouped into high-bandwidth domains (an NVLink node, an
// NVL72 rack, a TPU pod) joined by a scale-out network, plus the achievable
// efficiencies that turn peak figures into times. Read from JSON or taken
// from a built-in preset; every preset figure has its source in
// docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_COSTMODEL_CLUSTERSPEC_H
#define LIB_COSTMODEL_CLUSTERSPEC_H

#include "lib/CostModel/Efficiency.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched {

/// The precision of the transformer GEMMs: BF16, FP8 (Transformer Engine's
/// FP8 recipes, MXFP8), or FP4 (NVFP4: E2M1 elements in blocks of 16 with
/// an E4M3 scale each, Blackwell's tensor cores).
enum class Precision : uint8_t { BF16, FP8, FP4 };

/// Bytes of one GEMM operand element at `precision`: NVFP4 packs two
/// elements a byte and adds a one-byte scale per block of 16.
inline double elementBytes(Precision precision) {
  switch (precision) {
  case Precision::BF16:
    return 2;
  case Precision::FP8:
    return 1;
  case Precision::FP4:
    return 0.5 + 1.0 / 16;
  }
  return 2;
}

/// The range of a cluster's bandwidths (`hbm_bandwidth`, `domain_bandwidth`,
/// `scale_out_bandwidth`, and a sweep's values of the last), bytes/s per
/// device one way: 1 MB/s to 1 PB/s, an order of magnitude or more around
/// any device built. Below it a step's transfer times grow past any
/// training run (1e-3 B/s gave a 360-year step) and then overflow.
inline constexpr double kMinBandwidth = 1e6;
inline constexpr double kMaxBandwidth = 1e15;

/// The largest high-bandwidth domain (`domain_size`, and a sweep's values
/// of it): the most devices --devices takes.
inline constexpr int64_t kMaxDomainSize = int64_t(1) << 24;

/// How the devices of one domain are wired.
enum class Topology : uint8_t {
  /// Any-to-any through switches (NVSwitch): every group gets the full
  /// per-device domain bandwidth.
  Switch,
  /// A 3D torus (TPU): `domain_bandwidth` is the sum over the three axes; a
  /// group that spans fewer axes gets that share of it.
  Torus3D,
};

struct ClusterSpec {
  std::string name;
  std::string deviceName;
  /// Dense peak FLOP/s; fp8 and fp4 0 when the device has none.
  double peakBf16 = 0;
  double peakFp8 = 0;
  double peakFp4 = 0;
  double hbmBytes = 0;
  /// Set when a cluster file's `hbm_bytes` was a datasheet's label read as
  /// decimal bytes (80e9 for an H100's "80 GB") and the device's measured
  /// total replaced it: says so for --explain.
  std::string memoryNote;
  double hbmBandwidth = 0;
  int64_t domainSize = 1;
  /// Devices of each domain the launcher fills with ranks, in rank order
  /// (`placement.devices_per_domain`, at most domainSize): 64 of a 72-device
  /// NVL72 rack, as SLURM's segment placement of 16 of its 18 trays leaves
  /// it. 0 means every device of the domain.
  int64_t devicesPerDomain = 0;
  /// Bytes/s per device, one direction.
  double domainBandwidth = 0;
  double scaleOutBandwidth = 0;
  double latency = 0;
  Topology topology = Topology::Switch;
  /// Measured defaults for the device (Efficiency.h), overridden by the
  /// cluster file's `efficiency` object.
  Efficiency efficiency;

  /// Devices of a domain that hold ranks.
  int64_t placedPerDomain() const {
    return devicesPerDomain > 0 ? devicesPerDomain : domainSize;
  }

  /// Dense peak for `precision` (0 when the device lacks it).
  double peak(Precision precision) const {
    switch (precision) {
    case Precision::BF16:
      return peakBf16;
    case Precision::FP8:
      return peakFp8;
    case Precision::FP4:
      return peakFp4;
    }
    return 0;
  }
};

std::vector<llvm::StringRef> clusterPresetNames();
std::optional<ClusterSpec> clusterPreset(llvm::StringRef name);
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef jsonText);
/// A preset name, or the path of a JSON file.
llvm::Expected<ClusterSpec> loadClusterSpec(llvm::StringRef nameOrPath);

llvm::StringRef precisionName(Precision precision);
std::optional<Precision> parsePrecision(llvm::StringRef name);

} // namespace sched

#endif // LIB_COSTMODEL_CLUSTERSPEC_H
