//===- ClusterSpec.cpp - device and network descriptions and presets ------===//
//
// Preset figures: docs/cost-model.md names the source of every number.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/ClusterSpec.h"
#include "lib/CostModel/DescriptionReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace sched;

namespace {
struct ClusterPreset {
  llvm::StringLiteral name;
  ClusterSpec (*make)();
};
} // namespace

static ClusterSpec cluster(llvm::StringRef name, llvm::StringRef device,
                           double bf16, double fp8, double hbm,
                           double hbmBandwidth, int64_t domain,
                           double domainBandwidth, double scaleOut) {
  ClusterSpec spec;
  spec.name = name.str();
  spec.deviceName = device.str();
  spec.peakBf16 = bf16;
  spec.peakFp8 = fp8;
  spec.hbmBytes = hbm;
  spec.hbmBandwidth = hbmBandwidth;
  spec.domainSize = domain;
  spec.domainBandwidth = domainBandwidth;
  spec.scaleOutBandwidth = scaleOut;
  spec.latency = 10e-6;
  spec.efficiency = efficiencyForDevice(device);
  return spec;
}

static ClusterSpec tpu(llvm::StringRef name, llvm::StringRef device,
                       double bf16, double fp8, double hbm, double hbmBandwidth,
                       int64_t pod, double linkOneWay, double dcnPerChip) {
  // Three torus axes, each a bidirectional ring: 2 links per axis.
  ClusterSpec spec = cluster(name, device, bf16, fp8, hbm, hbmBandwidth, pod,
                             3 * 2 * linkOneWay, dcnPerChip);
  spec.topology = Topology::Torus3D;
  return spec;
}

/// A device's memory as the driver reports it (nvidia-smi's memory.total;
/// Google's GiB for TPUs), by its datasheet label in GB: labelledMemory's
/// table (Efficiency.cpp) is the one place those totals are written.
static double memoryOf(llvm::StringRef device, double gigabytes) {
  return labelledMemory(device, gigabytes * 1e9).value_or(gigabytes * 1e9);
}

static const ClusterPreset kClusterPresets[] = {
    {"h100-ib",
     [] {
       return cluster("h100-ib", "H100 SXM", 989e12, 1979e12,
                      memoryOf("H100 SXM", 80), 3.35e12, 8, 450e9, 50e9);
     }},
    {"h800-ib",
     [] {
       return cluster("h800-ib", "H800 SXM", 989e12, 1979e12,
                      memoryOf("H800 SXM", 80), 3.35e12, 8, 200e9, 50e9);
     }},
    {"a100-ib",
     [] {
       return cluster("a100-ib", "A100 SXM 80GB", 312e12, 0,
                      memoryOf("A100 SXM 80GB", 80), 2.039e12, 8, 300e9, 25e9);
     }},
    {"h200-ib",
     [] {
       return cluster("h200-ib", "H200 SXM", 989e12, 1979e12,
                      memoryOf("H200 SXM", 141), 4.8e12, 8, 450e9, 50e9);
     }},
    // Dense NVFP4: 9 PF on the 1,000 W HGX B200, 10 PF on the 1,200 W
    // GB200 (NVIDIA's Blackwell tables: 18 and 20 PF with sparsity).
    {"b200-ib",
     [] {
       ClusterSpec spec =
           cluster("b200-ib", "B200 (HGX)", 2.25e15, 4.5e15,
                   memoryOf("B200 (HGX)", 180), 8e12, 8, 900e9, 50e9);
       spec.peakFp4 = 9e15;
       return spec;
     }},
    {"gb200-nvl72",
     [] {
       ClusterSpec spec =
           cluster("gb200-nvl72", "B200 (GB200 NVL72)", 2.5e15, 5e15,
                   memoryOf("B200 (GB200 NVL72)", 186), 8e12, 72, 900e9, 50e9);
       spec.peakFp4 = 10e15;
       return spec;
     }},
    {"tpu-v4",
     [] {
       return tpu("tpu-v4", "TPU v4", 275e12, 0, memoryOf("TPU v4", 32), 1.2e12,
                  4096, 45e9, 25e9 / 4);
     }},
    {"tpu-v5p",
     [] {
       return tpu("tpu-v5p", "TPU v5p", 459e12, 0, memoryOf("TPU v5p", 95),
                  2.765e12, 8960, 90e9, 25e9 / 4);
     }},
    // Google's TPU7x page: 2307 / 4614 TFLOP/s BF16 / FP8, 192 GiB, 7380
    // GB/s, 9216 chips a pod, ICI 1200 GB/s bidirectional per chip (6
    // links: 100e9 each way), DCN 100 Gb/s per chip.
    {"tpu7x",
     [] {
       return tpu("tpu7x", "TPU7x (Ironwood)", 2307e12, 4614e12,
                  memoryOf("TPU7x (Ironwood)", 192), 7.38e12, 9216, 100e9,
                  100e9 / 8);
     }},
};

namespace {
/// A cluster file measured on a real machine (integrations/torch/
/// calibrate.py), compiled in from lib/CostModel/presets/NAME.json.
struct MeasuredPreset {
  llvm::StringLiteral name;
  llvm::StringLiteral json;
};
} // namespace

static const MeasuredPreset kMeasuredPresets[] = {
#include "MeasuredPresets.inc"
};

std::vector<llvm::StringRef> sched::clusterPresetNames() {
  std::vector<llvm::StringRef> names;
  for (const ClusterPreset &preset : kClusterPresets)
    names.push_back(preset.name);
  for (const MeasuredPreset &preset : kMeasuredPresets)
    names.push_back(preset.name);
  return names;
}

std::optional<ClusterSpec> sched::clusterPreset(llvm::StringRef name) {
  for (const ClusterPreset &preset : kClusterPresets)
    if (preset.name == name)
      return preset.make();
  for (const MeasuredPreset &preset : kMeasuredPresets) {
    if (preset.name != name)
      continue;
    // Every measured preset parses (CostModelPresets.EveryNameLoads);
    // one that did not would read as an unknown name, never half-read.
    llvm::Expected<ClusterSpec> spec = parseClusterSpec(preset.json);
    if (!spec) {
      llvm::consumeError(spec.takeError());
      return std::nullopt;
    }
    return *spec;
  }
  return std::nullopt;
}

llvm::StringRef sched::precisionName(Precision precision) {
  switch (precision) {
  case Precision::BF16:
    return "bf16";
  case Precision::FP8:
    return "fp8";
  case Precision::FP4:
    return "fp4";
  }
  return "bf16";
}

std::optional<Precision> sched::parsePrecision(llvm::StringRef name) {
  if (name == "bf16")
    return Precision::BF16;
  if (name == "fp8")
    return Precision::FP8;
  if (name == "fp4")
    return Precision::FP4;
  return std::nullopt;
}

// The ranges of the cluster's figures (docs/limits.md): an order of
// magnitude or more around any device built, and within them every time
// and size the cost model derives stays finite and exact enough.
/// 1 GFLOP/s to 1 EFLOP/s per device (a B200 has 2.25e15).
static constexpr NumberRange kPeakFlopsRange{1e9, 1e18};
/// 1 MiB to 1 PiB (memory limits are 64-bit integers in the IR).
static constexpr NumberRange kHbmBytesRange{1 << 20, 1125899906842624.0};
/// 1 MB/s to 1 PB/s per device.
static constexpr NumberRange kBandwidthRange{kMinBandwidth, kMaxBandwidth};
/// 0 (none), or 1 ps to 1 s per message.
static constexpr NumberRange kLatencyRange{1e-12, 1, /*allowZero=*/true};
/// 0 (no small-message loss), or 1 byte to 1 TB.
static constexpr NumberRange kHalfBytesRange{1, 1e12, /*allowZero=*/true};
/// 0 (none) to 1 PiB, and below the device's memory (checked apart).
static constexpr NumberRange kReservedMemoryRange{1, 1125899906842624.0,
                                                  /*allowZero=*/true};

/// The tables a calibration measured (integrations/torch/calibrate.py):
/// GEMMs by shape and precision, flash attention by sequence length, and
/// the profile's name. Each entry's errors name it
/// ("efficiency.gemms[2].fraction: ...").
static void readMeasuredTables(DescriptionReader &e, Efficiency &out) {
  constexpr size_t kMaxEntries = 4096;
  constexpr int64_t kMaxDim = int64_t(1) << 24;
  if (e.has("profile"))
    out.profile = e.string("profile");
  if (e.has("stack")) {
    // calibrate.py's record of the software it measured under: strings
    // only, kept as "NAME: key value, ..." in key order.
    if (const llvm::json::Object *stack = e.nested("stack")) {
      std::vector<std::string> keys;
      for (const auto &entry : *stack)
        keys.push_back(entry.first.str());
      llvm::sort(keys);
      std::string name;
      std::vector<std::string> fields;
      for (const std::string &key : keys) {
        std::optional<llvm::StringRef> text = stack->getString(key);
        if (!text || text->size() > 256) {
          e.fail("stack." + key, "expected a string of at most 256 characters");
          break;
        }
        if (key == "name")
          name = text->str();
        else
          fields.push_back(key + " " + text->str());
      }
      const std::string joined = llvm::join(fields, ", ");
      out.measuredStack = name.empty() ? joined : name + ": " + joined;
    }
  }

  if (const llvm::json::Array *gemms = e.array("gemms", kMaxEntries)) {
    out.gemms.clear();
    for (size_t i = 0; i < gemms->size() && e.ok(); ++i) {
      const std::string where = "gemms[" + std::to_string(i) + "]";
      const llvm::json::Object *entry = (*gemms)[i].getAsObject();
      if (!entry) {
        e.fail(where, "expected an object {m, n, k, dtype, fraction}");
        break;
      }
      DescriptionReader g(*entry, e.path(where) + ".");
      MeasuredGemm gemm;
      gemm.m = static_cast<double>(g.integer("m", 1, std::nullopt, kMaxDim));
      gemm.n = static_cast<double>(g.integer("n", 1, std::nullopt, kMaxDim));
      gemm.k = static_cast<double>(g.integer("k", 1, std::nullopt, kMaxDim));
      const std::string dtype = g.string("dtype", std::string("bf16"));
      if (g.ok() && dtype != "bf16" && dtype != "fp8")
        g.fail("dtype", "expected \"bf16\" or \"fp8\", got \"" + dtype + "\"");
      gemm.fp8 = dtype == "fp8";
      gemm.fraction = g.fraction("fraction", 1);
      e.adopt(g);
      out.gemms.push_back(gemm);
    }
  }
  if (const llvm::json::Array *points =
          e.array("attention_table", kMaxEntries)) {
    std::vector<AttentionPoint> table;
    for (size_t i = 0; i < points->size() && e.ok(); ++i) {
      const std::string where = "attention_table[" + std::to_string(i) + "]";
      const llvm::json::Object *entry = (*points)[i].getAsObject();
      if (!entry) {
        e.fail(where, "expected an object {seq_len, forward, backward}");
        break;
      }
      DescriptionReader a(*entry, e.path(where) + ".");
      AttentionPoint point;
      point.seqLen =
          static_cast<double>(a.integer("seq_len", 1, std::nullopt, kMaxDim));
      point.forward = a.fraction("forward", 1);
      point.backward = a.fraction("backward", 1);
      e.adopt(a);
      table.push_back(point);
    }
    if (e.ok() && table.empty())
      e.fail("attention_table", "empty");
    llvm::sort(table, [](const AttentionPoint &x, const AttentionPoint &y) {
      return x.seqLen < y.seqLen;
    });
    out.attention = table;
    out.latentAttention.clear();
    out.olderAttention.clear();
  }
}

llvm::Expected<ClusterSpec> sched::parseClusterSpec(llvm::StringRef jsonText) {
  llvm::Expected<llvm::json::Value> json = parseDescriptionJson(jsonText);
  if (!json)
    return json.takeError();
  DescriptionReader in(*json->getAsObject());
  ClusterSpec spec;
  spec.name = in.string("name", std::string("cluster"));
  const llvm::json::Object *device = in.nested("device");
  if (!device && in.ok())
    in.fail("device", "missing");
  if (device) {
    DescriptionReader d(*device, "device.");
    spec.deviceName = d.string("name", std::string("device"));
    const llvm::json::Object *peak = d.nested("peak_flops");
    if (!peak && d.ok())
      d.fail("peak_flops", "missing");
    if (peak) {
      DescriptionReader p(*peak, "device.peak_flops.");
      spec.peakBf16 = p.number("bf16", std::nullopt, kPeakFlopsRange);
      spec.peakFp8 = p.number(
          "fp8", 0.0,
          {kPeakFlopsRange.min, kPeakFlopsRange.max, /*allowZero=*/true});
      spec.peakFp4 = p.number(
          "fp4", 0.0,
          {kPeakFlopsRange.min, kPeakFlopsRange.max, /*allowZero=*/true});
      d.adopt(p);
    }
    spec.hbmBytes = d.number("hbm_bytes", std::nullopt, kHbmBytesRange);
    // A datasheet's "80 GB" is no count of bytes: the device's measured
    // total stands for it.
    if (std::optional<double> total =
            labelledMemory(spec.deviceName, spec.hbmBytes)) {
      const int64_t label = std::llround(spec.hbmBytes / 1e9);
      spec.memoryNote =
          llvm::formatv("hbm_bytes {0}e9 is the datasheet's \"{0} GB\" "
                        "label: {1:f1} GB as the device reports it",
                        label, *total / 1e9)
              .str();
      spec.hbmBytes = *total;
    }
    spec.hbmBandwidth =
        d.number("hbm_bandwidth", std::nullopt, kBandwidthRange);
    spec.efficiency = efficiencyForDevice(spec.deviceName);
    // The host link (datasheet), for activation offload; 0: none known.
    spec.efficiency.hostBandwidth =
        d.number("host_bandwidth", spec.efficiency.hostBandwidth,
                 {kBandwidthRange.min, kBandwidthRange.max,
                  /*allowZero=*/true});
    in.adopt(d);
  }
  spec.domainSize =
      in.integer("domain_size", 1, std::nullopt, kMaxDomainSize);
  spec.domainBandwidth =
      in.number("domain_bandwidth", std::nullopt, kBandwidthRange);
  spec.scaleOutBandwidth =
      in.number("scale_out_bandwidth", std::nullopt, kBandwidthRange);
  if (const llvm::json::Object *placement = in.nested("placement")) {
    DescriptionReader p(*placement, "placement.");
    spec.devicesPerDomain =
        p.integer("devices_per_domain", 1, spec.domainSize, spec.domainSize);
    in.adopt(p);
  }
  spec.latency = in.number("latency_s", 10e-6, kLatencyRange);
  std::string topology = in.string("topology", std::string("switch"));
  if (topology == "switch")
    spec.topology = Topology::Switch;
  else if (topology == "torus3d")
    spec.topology = Topology::Torus3D;
  else
    in.fail("topology",
            "expected \"switch\" or \"torus3d\", got \"" + topology + "\"");
  bool reserveGiven = false;
  if (const llvm::json::Object *eff = in.nested("efficiency")) {
    DescriptionReader e(*eff, "efficiency.");
    Efficiency &out = spec.efficiency;
    out.matmul = e.fraction("matmul", out.matmul);
    out.matmulFp8 = e.fraction("matmul_fp8", out.matmulFp8);
    if (e.has("matmul_fp4"))
      out.matmulFp4 = e.fraction("matmul_fp4", out.matmulFp4);
    out.groupedMatmulFp8 =
        e.fraction("grouped_matmul_fp8", out.groupedMatmulFp8);
    out.groupedMatmulFp8Weight =
        e.fraction("grouped_matmul_fp8_weight", out.groupedMatmulFp8Weight);
    if (e.has("grouped_matmul")) {
      // The user's BF16 grouped figure replaces the profile's per-shape
      // timings too.
      out.groupedMatmul = e.fraction("grouped_matmul", out.groupedMatmul);
      out.groupedGemms.clear();
    }
    if (e.has("attention")) {
      // One measured fraction for every sequence length, forward and
      // backward alike.
      const double flat = e.fraction("attention", 1);
      out.attention = {{1, flat, flat}};
      out.latentAttention.clear();
      out.olderAttention.clear();
    }
    out.hbm = e.fraction("hbm", out.hbm);
    out.domainHalfBytes =
        e.number("domain_half_bytes", out.domainHalfBytes, kHalfBytesRange);
    out.scaleOutHalfBytes = e.number("scale_out_half_bytes",
                                     out.scaleOutHalfBytes, kHalfBytesRange);
    readMeasuredTables(e, out);
    out.domainCollective =
        e.fraction("domain_collective", out.domainCollective);
    out.scaleOutCollective =
        e.fraction("scale_out_collective", out.scaleOutCollective);
    if (e.has("all_to_all")) {
      // The user's own dispatcher figure replaces the measured one's table.
      out.allToAll = e.fraction("all_to_all", out.allToAll);
      out.expertExchange.clear();
    }
    out.usableMemory = e.fraction("usable_memory", out.usableMemory);
    out.usableMemoryExpandable =
        e.fraction("usable_memory_expandable", out.usableMemoryExpandable);
    if (e.has("reserved_memory")) {
      reserveGiven = true;
      out.reservedMemory =
          e.number("reserved_memory", out.reservedMemory, kReservedMemoryRange);
      if (e.ok() && out.reservedMemory >= spec.hbmBytes)
        e.fail("reserved_memory",
               llvm::formatv("{0:f3} GB leave nothing of device.hbm_bytes "
                             "({1:f3} GB)",
                             out.reservedMemory / 1e9, spec.hbmBytes / 1e9)
                   .str());
    }
    in.adopt(e);
  }
  // The device profile's reserve (CUDA context and libraries, Efficiency.h)
  // applies when the file gives none: a device no bigger than it has
  // nothing left for training ("0.0 GB usable").
  if (in.ok() && !reserveGiven &&
      spec.efficiency.reservedMemory >= spec.hbmBytes)
    in.fail("device.hbm_bytes",
            llvm::formatv("{0:f3} GB is not more than the {1:f3} GB the "
                          "device's runtime and libraries take (its "
                          "profile's reserve; efficiency.reserved_memory "
                          "sets another)",
                          spec.hbmBytes / 1e9,
                          spec.efficiency.reservedMemory / 1e9)
                .str());
  if (llvm::Error error = in.takeError())
    return std::move(error);
  return spec;
}

llvm::Expected<ClusterSpec> sched::loadClusterSpec(llvm::StringRef nameOrPath) {
  if (std::optional<ClusterSpec> preset = clusterPreset(nameOrPath))
    return *preset;
  if (!nameOrPath.ends_with(".json")) {
    std::string names;
    for (llvm::StringRef name : clusterPresetNames())
      names += (names.empty() ? "" : ", ") + name.str();
    return llvm::createStringError("unknown cluster '" + nameOrPath +
                                   "' (presets: " + names +
                                   "; or a .json file)");
  }
  llvm::Expected<std::string> text = readDescriptionFile(nameOrPath);
  if (!text)
    return text.takeError();
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(*text);
  if (!spec)
    return llvm::createStringError(nameOrPath + ": " +
                                   llvm::toString(spec.takeError()));
  return spec;
}
