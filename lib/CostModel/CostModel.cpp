//===- CostModel.cpp - times, sizes and traffic of a training step --------===//
//
// docs/cost-model.md derives every formula here and names its source.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace sched;

/// Bytes of a BF16 element: weights, activations, gradients.
static constexpr double kBf16 = 2;
/// Optimizer state per parameter under mixed-precision Adam: FP32 master
/// weights, momentum and variance (ZeRO paper, section 3.1: K = 12).
static constexpr double kOptimizerBytes = 12;
/// Bytes the optimizer update reads and writes per parameter: master,
/// momentum and variance read and written (24), the gradient read and the
/// BF16 weight written (4).
static constexpr double kOptimizerTraffic = 28;

llvm::StringRef sched::recomputeName(Recompute recompute) {
  switch (recompute) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

std::optional<Recompute> sched::parseRecompute(llvm::StringRef name) {
  if (name == "none")
    return Recompute::None;
  if (name == "selective")
    return Recompute::Selective;
  if (name == "full")
    return Recompute::Full;
  return std::nullopt;
}

std::string Layout::str() const {
  return llvm::formatv("dp={0},tp={1},pp={2},vpp={3},ep={4},cp={5}", dp, tp,
                       pp, vpp, ep, cp)
      .str();
}

llvm::Expected<Layout> sched::parseLayout(llvm::StringRef text) {
  Layout layout;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return llvm::createStringError(
        "--layout: expected key=value pairs such as dp=64,tp=8,pp=16");
  llvm::SmallVector<llvm::StringRef> seen;
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("dp", &layout.dp)
                         .Case("tp", &layout.tp)
                         .Case("pp", &layout.pp)
                         .Case("vpp", &layout.vpp)
                         .Case("ep", &layout.ep)
                         .Case("cp", &layout.cp)
                         .Default(nullptr);
    if (!field)
      return llvm::createStringError(
          "--layout: unknown key '" + key +
          "' (expected dp, tp, pp, vpp, ep or cp)");
    if (llvm::is_contained(seen, key))
      return llvm::createStringError("--layout: '" + key + "' given twice");
    seen.push_back(key);
    int64_t n = 0;
    if (value.getAsInteger(10, n) || n < 1 || n > (int64_t(1) << 24))
      return llvm::createStringError("--layout: " + key + "='" + value +
                                     "' is not an integer in [1, 2^24]");
    *field = n;
  }
  // Each factor fits, but four of 2^24 wrap past 2^64: multiply while the
  // product stays within the devices --devices takes.
  constexpr int64_t kMaxDevices = int64_t(1) << 24;
  int64_t devices = 1;
  for (int64_t factor : {layout.dp, layout.tp, layout.pp, layout.cp}) {
    if (factor > kMaxDevices / devices)
      return llvm::createStringError(
          "--layout: dp x tp x pp x cp is more than 2^24 devices (" +
          layout.str() + ")");
    devices *= factor;
  }
  return layout;
}

double sched::dataParallelCriticalTokens(double peakFlops, double bandwidth,
                                         double expertRatio,
                                         int64_t expertParallel) {
  return peakFlops / bandwidth * expertRatio /
         static_cast<double>(expertParallel);
}

//===----------------------------------------------------------------------===//
// Model arithmetic
//===----------------------------------------------------------------------===//

namespace {
/// Per-token figures of one layer, before any parallelism.
struct LayerShape {
  /// Parameters of the attention block's projections.
  double attentionParams = 0;
  /// RMSNorm/LayerNorm scales (parameters, but no matmul FLOPs).
  double normParams = 0;
  /// Parameters every token uses in the MLP block (dense MLP, or router
  /// plus shared experts).
  double mlpDenseParams = 0;
  /// Routed experts: all of them, and the top_k a token uses.
  double routedParams = 0;
  double routedActiveParams = 0;
  /// d_qk and d_v summed over heads.
  double qkDims = 0;
  double vDims = 0;
  /// Elements kept for the backward pass, per token: all, and those
  /// selective recomputation drops.
  double activationElems = 0;
  double selectiveDropElems = 0;
  /// Elements of K and V (what context parallelism passes around).
  double kvElems = 0;
  /// Kept elements that are inputs of the experts' linear layers, cached
  /// in FP8 when training in FP8 (DeepSeek-V3 report, section 3.3).
  double fp8CachedElems = 0;
};
} // namespace

/// The width of one expert's (or the dense MLP's) matrices per hidden
/// unit: 3 for gated, 2 for plain.
static double mlpMatrices(const ModelSpec &model) {
  return model.mlp == MlpKind::Gated ? 3 : 2;
}

static LayerShape layerShape(const ModelSpec &model, bool moeLayer) {
  const double h = static_cast<double>(model.hidden);
  const double heads = static_cast<double>(model.heads);
  LayerShape shape;
  if (model.mla) {
    const MlaSpec &mla = *model.mla;
    const double qk = static_cast<double>(mla.qkNopeHeadDim + mla.qkRopeHeadDim);
    const double v = static_cast<double>(mla.vHeadDim);
    const double qLora = static_cast<double>(mla.qLoraRank);
    const double kvLora = static_cast<double>(mla.kvLoraRank);
    const double rope = static_cast<double>(mla.qkRopeHeadDim);
    const double query =
        qLora > 0 ? h * qLora + qLora * heads * qk : h * heads * qk;
    const double keyValue =
        h * (kvLora + rope) + kvLora * heads * (mla.qkNopeHeadDim + v);
    shape.attentionParams = query + keyValue + heads * v * h;
    shape.normParams = h + (qLora > 0 ? qLora : 0) + kvLora;
    shape.qkDims = heads * qk;
    shape.vDims = heads * v;
    // Norm input, then the latents and their norms, Q, K, V, the output.
    shape.activationElems = h + (qLora > 0 ? 2 * qLora : 0) +
                            (kvLora + rope) + kvLora + 2 * shape.qkDims +
                            2 * shape.vDims;
    shape.kvElems = shape.qkDims + shape.vDims;
  } else {
    const double hd = static_cast<double>(model.headDim);
    const double kv = static_cast<double>(model.kvHeads) * hd;
    const double q = heads * hd;
    shape.attentionParams = h * q + 2 * h * kv + q * h;
    shape.normParams = h;
    shape.qkDims = q;
    shape.vDims = q;
    shape.activationElems = h + h + q + 2 * kv + q;
    shape.kvElems = 2 * kv;
  }
  // Selective recomputation redoes the attention core: its output goes.
  shape.selectiveDropElems = shape.vDims;

  const double width = mlpMatrices(model);
  if (moeLayer) {
    const MoeSpec &moe = *model.moe;
    const double expert = width * h * static_cast<double>(moe.expertFfnHidden);
    const double eff = static_cast<double>(moe.expertFfnHidden);
    const double experts = static_cast<double>(moe.experts);
    const double topK = static_cast<double>(moe.topK);
    const double shared = static_cast<double>(moe.sharedExperts);
    shape.mlpDenseParams = h * experts + shared * expert;
    shape.normParams += h;
    shape.routedParams = experts * expert;
    shape.routedActiveParams = topK * expert;
    // Norm input, FP32 router logits (2 BF16 units each), per routed copy
    // its input, the expert's intermediates and its output; shared experts'
    // intermediates.
    shape.activationElems += h + 2 * experts +
                             topK * (h + width * eff + h) +
                             shared * width * eff;
    shape.selectiveDropElems += (topK + shared) * eff;
    shape.fp8CachedElems = topK * (h + eff) + shared * eff;
  } else {
    const double f = static_cast<double>(model.ffnHidden);
    shape.mlpDenseParams = width * h * f;
    shape.normParams += h;
    shape.activationElems += h + width * f;
    shape.selectiveDropElems += f;
  }
  return shape;
}

ParameterCounts CostModel::parameters() const {
  ParameterCounts counts;
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    LayerShape shape = layerShape(model, model.isMoeLayer(layer));
    const double dense =
        shape.attentionParams + shape.mlpDenseParams + shape.normParams;
    counts.total += dense + shape.routedParams;
    counts.active += dense + shape.routedActiveParams;
  }
  const double h = static_cast<double>(model.hidden);
  const double table = static_cast<double>(model.vocab) * h;
  counts.embedding = table;
  const double head = (model.tiedEmbeddings ? 0 : table) + h;
  counts.total += table + head;
  counts.active += table + head;
  return counts;
}

/// Parameters of one multi-token-prediction module (DeepSeek-V3 section
/// 2.2): a layer like the last one, a 2h x h projection and two norms; it
/// shares the embedding and the output head.
static LayerShape mtpShape(const ModelSpec &model) {
  return layerShape(model, model.isMoeLayer(model.layers - 1));
}

double CostModel::modelFlopsPerToken() const {
  const double h = static_cast<double>(model.hidden);
  // Matmul parameters a token passes through: the output head (tied or
  // not, it is a matmul), then every layer's.
  double active = h * static_cast<double>(model.vocab);
  double attentionDims = 0;
  for (int64_t layer = 0; layer < model.layers; ++layer) {
    LayerShape shape = layerShape(model, model.isMoeLayer(layer));
    active += shape.attentionParams + shape.mlpDenseParams +
              shape.routedActiveParams;
    attentionDims += shape.qkDims + shape.vDims;
  }
  if (model.mtpLayers > 0) {
    LayerShape mtp = mtpShape(model);
    const double perModule = mtp.attentionParams + mtp.mlpDenseParams +
                             mtp.routedActiveParams + 2 * h * h +
                             h * static_cast<double>(model.vocab);
    active += static_cast<double>(model.mtpLayers) * perModule;
    attentionDims += static_cast<double>(model.mtpLayers) *
                     (mtp.qkDims + mtp.vDims);
  }
  return 6 * active +
         6 * attentionDims * static_cast<double>(training.seqLen);
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

llvm::Error CostModel::checkTraining() const {
  if (training.devices < 1)
    return llvm::createStringError("--devices must be at least 1");
  if (training.seqLen < 1)
    return llvm::createStringError("--seq-len must be at least 1");
  if (training.globalBatchTokens < training.seqLen)
    return llvm::createStringError(llvm::formatv(
        "the global batch ({0} tokens) is shorter than one sequence ({1})",
        training.globalBatchTokens, training.seqLen));
  if (training.globalBatchTokens % training.seqLen != 0)
    return llvm::createStringError(llvm::formatv(
        "the global batch ({0} tokens) is not a whole number of {1}-token "
        "sequences",
        training.globalBatchTokens, training.seqLen));
  if (cluster.peak(training.precision) <= 0)
    return llvm::createStringError(
        "the " + cluster.deviceName + " of cluster '" + cluster.name +
        "' has no " + precisionName(training.precision) + " peak");
  return llvm::Error::success();
}

llvm::Error CostModel::checkLayout(Layout &layout) const {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("layout " + layout.str() + ": " + why);
  };
  if (layout.devices() != training.devices)
    return fail(llvm::formatv("dp x tp x pp x cp = {0}, but --devices is {1}",
                              layout.devices(), training.devices)
                    .str());
  if (model.heads % layout.tp != 0)
    return fail(llvm::formatv("tp={0} does not divide the {1} heads",
                              layout.tp, model.heads)
                    .str());
  if (training.seqLen % (2 * layout.cp) != 0 && layout.cp > 1)
    return fail(llvm::formatv("cp={0} needs the sequence ({1}) to split into "
                              "2 x cp chunks",
                              layout.cp, training.seqLen)
                    .str());
  if (!model.moe && layout.ep != 1)
    return fail("ep > 1 needs a mixture-of-experts model");
  if (model.moe && model.moe->experts % layout.ep != 0)
    return fail(llvm::formatv("ep={0} does not divide the {1} experts",
                              layout.ep, model.moe->experts)
                    .str());
  if ((layout.dp * layout.cp * layout.tp) % layout.ep != 0)
    return fail("ep must divide dp x cp x tp");
  if (layout.pp * layout.vpp > model.layers)
    return fail(llvm::formatv("{0} stages (pp x vpp) for {1} layers",
                              layout.pp * layout.vpp, model.layers)
                    .str());
  if (layout.zero < 0 || layout.zero > 3)
    return fail("--zero must be 0, 1, 2 or 3");
  const int64_t sequences = training.globalBatchSequences();
  if (layout.microbatchSize < 1 ||
      sequences % (layout.dp * layout.microbatchSize) != 0)
    return fail(llvm::formatv("{0} sequences do not split into dp={1} "
                              "replicas of microbatches of {2}",
                              sequences, layout.dp, layout.microbatchSize)
                    .str());
  layout.microbatches = sequences / (layout.dp * layout.microbatchSize);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

int64_t CostModel::membersPerDomain(int64_t size, int64_t stride) const {
  if (stride >= cluster.domainSize)
    return 1;
  return std::clamp<int64_t>(cluster.domainSize / stride, 1, size);
}

double CostModel::domainBandwidth(int64_t size, int64_t stride) const {
  if (cluster.topology == Topology::Switch)
    return cluster.domainBandwidth;
  // A cube of side k: a group within k consecutive ranks spans one axis,
  // within k^2 two, beyond that three.
  const double side = std::max(2.0, std::round(std::cbrt(
                                        static_cast<double>(cluster.domainSize))));
  const double span = static_cast<double>(size * stride);
  const double axes = span <= side ? 1 : span <= side * side ? 2 : 3;
  return cluster.domainBandwidth * axes / 3;
}

double CostModel::reduceScatterTime(double bytes, int64_t size,
                                    int64_t stride) const {
  if (size <= 1 || bytes <= 0)
    return 0;
  const int64_t local = membersPerDomain(size, stride);
  // Domains the group spans; fractional when the domain size does not
  // divide the group (128 ranks over NVL72 racks span 1.78 of them).
  const double domains = static_cast<double>(size) / static_cast<double>(local);
  const Efficiency &eff = cluster.efficiency;
  double time = 0;
  if (local > 1)
    time += (static_cast<double>(local - 1) / local) * bytes /
                (domainBandwidth(local, stride) * eff.domainCollective) +
            cluster.latency * static_cast<double>(local - 1);
  if (domains > 1)
    time += ((domains - 1) / domains) * (bytes / static_cast<double>(local)) /
                (cluster.scaleOutBandwidth * eff.scaleOutCollective) +
            cluster.latency * std::ceil(domains - 1);
  return time;
}

double CostModel::expertAllToAllTime(double tokens, double elementBytes,
                                     const Layout &layout) const {
  const MoeSpec &moe = *model.moe;
  const int64_t ep = layout.ep;
  const int64_t local = membersPerDomain(ep, 1);
  const double domains = static_cast<double>(ep) / static_cast<double>(local);
  const double h = static_cast<double>(model.hidden);
  const double topK = static_cast<double>(moe.topK);
  const double eff = cluster.efficiency.allToAll;
  // Inside the domain: the copies bound for the other local members.
  const double inside = tokens * topK * h * elementBytes *
                        static_cast<double>(local - 1) /
                        static_cast<double>(ep);
  // Across domains each token crosses once per remote domain holding one
  // of its experts (DeepEP forwards inside the domain): the expected number
  // of distinct domains among top_k uniform choices, at most node_limit
  // (DeepSeek-V3's node-limited routing), of which (D-1)/D are remote.
  double reached = domains * (1 - std::pow(1 - 1 / domains, topK));
  if (moe.nodeLimit > 0)
    reached = std::min(reached, static_cast<double>(moe.nodeLimit));
  const double outside =
      domains > 1 ? tokens * h * elementBytes * reached * (domains - 1) / domains
                  : 0;
  double time = 0;
  if (inside > 0)
    time = std::max(time, inside / (domainBandwidth(local, 1) * eff));
  if (outside > 0)
    time = std::max(time, outside / (cluster.scaleOutBandwidth * eff));
  return time + cluster.latency;
}

double CostModel::p2pTime(const Layout &layout, double bytes) const {
  if (layout.pp <= 1)
    return 0;
  const int64_t stride = layout.tp * layout.cp * layout.dp;
  const bool inside = stride < cluster.domainSize;
  const double bandwidth =
      inside ? domainBandwidth(2, stride) * cluster.efficiency.domainCollective
             : cluster.scaleOutBandwidth * cluster.efficiency.scaleOutCollective;
  return bytes / bandwidth + cluster.latency;
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

struct CostModel::LayerCost {
  StageTerms forward;
  StageTerms backward;
  /// Backward split: the weight-gradient part of the matmuls.
  double backwardWeight = 0;
  double activationBytes = 0;
  double denseParams = 0;
  double expertParams = 0;
};

CostModel::LayerCost CostModel::layerCost(const Layout &layout,
                                          bool moeLayer) const {
  const LayerShape shape = layerShape(model, moeLayer);
  const double tokens = static_cast<double>(layout.microbatchSize) *
                        static_cast<double>(training.seqLen);
  // Tokens of one microbatch on one device: context parallelism splits
  // the sequence, sequence parallelism the tensor-parallel ranks' copies.
  const double local = tokens / static_cast<double>(layout.cp * layout.tp);
  const double peak = cluster.peak(training.precision);
  const Efficiency &eff = cluster.efficiency;
  const double h = static_cast<double>(model.hidden);

  LayerCost cost;
  const double matmulFlops =
      2 * local *
      (shape.attentionParams + shape.mlpDenseParams + shape.routedActiveParams);
  cost.forward.matmul = matmulFlops / (peak * eff.matmul);
  // Causal attention: each query attends to (seq + 1) / 2 keys on average.
  const double attentionFlops = 2 * local * (shape.qkDims + shape.vDims) *
                                (static_cast<double>(training.seqLen) + 1) / 2;
  cost.forward.attention = attentionFlops / (cluster.peakBf16 * eff.attention);

  double keptElems = shape.activationElems;
  double fp8Elems =
      training.precision == Precision::FP8 ? shape.fp8CachedElems : 0;
  if (layout.recompute == Recompute::Selective) {
    keptElems -= shape.selectiveDropElems;
    // The activation function's outputs go; the dispatched inputs stay.
    if (fp8Elems > 0)
      fp8Elems -= static_cast<double>(model.moe->topK +
                                      model.moe->sharedExperts) *
                  static_cast<double>(model.moe->expertFfnHidden);
  }
  if (layout.recompute == Recompute::Full) {
    keptElems = h;
    fp8Elems = 0;
  }
  cost.activationBytes = local * (kBf16 * (keptElems - fp8Elems) + fp8Elems);
  // Norms, activation functions, residuals, dropout-free softmax: each
  // element of the full set written once and read once, through HBM.
  cost.forward.memoryBound =
      2 * kBf16 * local * shape.activationElems / cluster.hbmBandwidth;

  if (layout.tp > 1) {
    // Sequence parallelism: an all-gather before and a reduce-scatter after
    // each of the two blocks, of the block's full-sequence activation.
    const double bytes =
        kBf16 * tokens / static_cast<double>(layout.cp) * h;
    cost.forward.tensorParallel = 4 * reduceScatterTime(bytes, layout.tp, 1);
  }
  if (layout.cp > 1) {
    // Ring attention: K and V of every other chunk pass by each device.
    const double bytes = kBf16 * local * shape.kvElems *
                         static_cast<double>(layout.cp - 1);
    const int64_t stride = layout.tp;
    const double bandwidth =
        layout.tp * layout.cp <= cluster.domainSize
            ? domainBandwidth(layout.cp, stride) * eff.domainCollective
            : cluster.scaleOutBandwidth * eff.scaleOutCollective;
    const double comm = bytes / bandwidth;
    cost.forward.contextParallel =
        std::max(0.0, comm - cost.forward.attention);
    cost.backward.contextParallel =
        std::max(0.0, 2 * comm - 2 * cost.forward.attention);
  }
  if (moeLayer && layout.ep > 1) {
    // Dispatch (FP8 when training in FP8, as DeepSeek-V3 does) and combine
    // (BF16) of every local token's top_k copies.
    const double element =
        training.precision == Precision::FP8 ? 1 : kBf16;
    cost.forward.expertParallel = expertAllToAllTime(local, element, layout) +
                                  expertAllToAllTime(local, kBf16, layout);
    cost.backward.expertParallel = 2 * expertAllToAllTime(local, kBf16, layout);
  }

  // Backward: the input gradient repeats each matmul once (I), the weight
  // gradient once more (W); flash attention's backward is about twice its
  // forward and has no weights; memory-bound work doubles.
  cost.backward.matmul = cost.forward.matmul;
  cost.backwardWeight = cost.forward.matmul;
  cost.backward.attention = 2 * cost.forward.attention;
  cost.backward.memoryBound = 2 * cost.forward.memoryBound;
  cost.backward.tensorParallel = cost.forward.tensorParallel;
  if (layout.recompute == Recompute::Selective)
    cost.backward.recompute = cost.forward.attention;
  if (layout.recompute == Recompute::Full)
    cost.backward.recompute = cost.forward.matmul + cost.forward.attention +
                              cost.forward.memoryBound +
                              cost.forward.tensorParallel +
                              cost.forward.expertParallel;

  const double dense =
      shape.attentionParams + shape.mlpDenseParams + shape.normParams;
  cost.denseParams = dense / static_cast<double>(layout.tp);
  cost.expertParams = shape.routedParams / static_cast<double>(layout.ep);
  return cost;
}

static double sum(const StageTerms &t) {
  return t.matmul + t.attention + t.memoryBound + t.tensorParallel +
         t.contextParallel + t.expertParallel + t.recompute;
}

static void add(StageTerms &into, const StageTerms &t, double times = 1) {
  into.matmul += times * t.matmul;
  into.attention += times * t.attention;
  into.memoryBound += times * t.memoryBound;
  into.tensorParallel += times * t.tensorParallel;
  into.contextParallel += times * t.contextParallel;
  into.expertParallel += times * t.expertParallel;
  into.recompute += times * t.recompute;
}

/// Splits `costs` (one per layer, in order) into `parts` contiguous
/// non-empty runs, `first` and `last` added to the first and last run, so
/// that the largest run is as small as it can be. Returns the run sizes.
static std::vector<int64_t> balance(const std::vector<double> &costs,
                                    int64_t parts, double first, double last) {
  const int64_t n = static_cast<int64_t>(costs.size());
  // Greedy packing at capacity `cap`: how many runs it takes, honouring
  // that the last run carries `last`.
  auto pack = [&](double cap, std::vector<int64_t> *sizes) {
    int64_t runs = 0;
    int64_t i = 0;
    double load = first;
    int64_t count = 0;
    while (i < n) {
      const double extra = costs[i] + (i == n - 1 ? last : 0);
      if (count > 0 && load + extra > cap) {
        if (sizes)
          sizes->push_back(count);
        ++runs;
        load = 0;
        count = 0;
        continue;
      }
      load += extra;
      ++count;
      ++i;
    }
    if (sizes)
      sizes->push_back(count);
    return runs + 1;
  };
  double lo = 0, hi = first + last;
  for (double c : costs) {
    lo = std::max(lo, c);
    hi += c;
  }
  for (int iter = 0; iter < 60; ++iter) {
    const double mid = (lo + hi) / 2;
    if (pack(mid, nullptr) <= parts)
      hi = mid;
    else
      lo = mid;
  }
  std::vector<int64_t> sizes;
  pack(hi, &sizes);
  // Fewer runs than parts: split the longest runs (never raises the max).
  while (static_cast<int64_t>(sizes.size()) < parts) {
    auto longest = std::max_element(sizes.begin(), sizes.end());
    const int64_t half = *longest / 2;
    *longest -= half;
    sizes.insert(longest + 1, half);
  }
  return sizes;
}

std::vector<StageEstimate> CostModel::stages(const Layout &layout) const {
  const int64_t numStages = layout.pp * layout.vpp;
  const LayerCost dense = layerCost(layout, false);
  const LayerCost moe = model.moe ? layerCost(layout, true) : dense;
  auto costOf = [&](int64_t layer) -> const LayerCost & {
    return model.isMoeLayer(layer) ? moe : dense;
  };

  const double h = static_cast<double>(model.hidden);
  const double vocab = static_cast<double>(model.vocab);
  const double tokens = static_cast<double>(layout.microbatchSize) *
                        static_cast<double>(training.seqLen);
  const double local = tokens / static_cast<double>(layout.cp * layout.tp);
  const double peak = cluster.peak(training.precision);
  const Efficiency &eff = cluster.efficiency;
  // The output head: a vocab-parallel matmul and FP32 logits kept for the
  // loss's backward. Each MTP module adds a layer, a 2h x h projection and
  // another pass through the head.
  const double mtp = static_cast<double>(model.mtpLayers);
  const double headMatmul =
      (1 + mtp) * 2 * local * (h * vocab) + mtp * 2 * local * (2 * h * h);
  StageTerms headForward;
  headForward.matmul = headMatmul / (peak * eff.matmul);
  headForward.memoryBound =
      (1 + mtp) * 2 * 4 * local * vocab / cluster.hbmBandwidth;
  const double headActivation = (1 + mtp) * 4 * local * vocab;
  const double headParams =
      ((model.tiedEmbeddings ? 0 : h * vocab) + h + mtp * 2 * h * h) /
      static_cast<double>(layout.tp);
  const double embeddingParams = vocab * h / static_cast<double>(layout.tp);
  const LayerCost &mtpLayer = costOf(model.layers - 1);

  std::vector<double> layerForward;
  layerForward.reserve(model.layers);
  for (int64_t layer = 0; layer < model.layers; ++layer)
    layerForward.push_back(sum(costOf(layer).forward));
  const std::vector<int64_t> sizes =
      balance(layerForward, numStages, 0,
              sum(headForward) + mtp * sum(mtpLayer.forward));

  const int64_t denseGroup = layout.dp * layout.cp;
  const int64_t expertGroup = layout.expertDataParallel();
  std::vector<StageEstimate> stages(numStages);
  int64_t next = 0;
  for (int64_t s = 0; s < numStages; ++s) {
    StageEstimate &stage = stages[s];
    stage.firstLayer = next;
    stage.numLayers = sizes[s];
    next += sizes[s];
    double weightPart = 0;
    for (int64_t layer = stage.firstLayer;
         layer < stage.firstLayer + stage.numLayers; ++layer) {
      const LayerCost &cost = costOf(layer);
      add(stage.forwardTerms, cost.forward);
      add(stage.backwardTerms, cost.backward);
      weightPart += cost.backwardWeight;
      stage.activationBytes += cost.activationBytes;
      stage.denseParameters += cost.denseParams;
      stage.expertParameters += cost.expertParams;
    }
    if (s == 0)
      stage.denseParameters += embeddingParams;
    if (s == numStages - 1) {
      add(stage.forwardTerms, headForward);
      StageTerms headBackward = headForward;
      headBackward.memoryBound *= 2;
      add(stage.backwardTerms, headBackward);
      weightPart += headForward.matmul;
      add(stage.forwardTerms, mtpLayer.forward, mtp);
      add(stage.backwardTerms, mtpLayer.backward, mtp);
      weightPart += mtp * mtpLayer.backwardWeight;
      stage.activationBytes += headActivation + mtp * mtpLayer.activationBytes;
      stage.denseParameters += headParams + mtp * mtpLayer.denseParams;
      stage.expertParameters += mtp * mtpLayer.expertParams;
    }
    stage.forward = sum(stage.forwardTerms);
    stage.backwardInput = sum(stage.backwardTerms);
    stage.backwardWeight = weightPart;
    // W keeps the inputs of the weight matmuls, about half of what the
    // layer keeps (Qi et al. 2024 count it so).
    stage.weightGradBytes = stage.activationBytes / 2;
    stage.outputBytes = kBf16 * local * h;

    const double params = stage.denseParameters + stage.expertParameters;
    const double sharded = stage.denseParameters / denseGroup +
                           stage.expertParameters / expertGroup;
    stage.weightBytes = kBf16 * (layout.zero >= 3 ? sharded : params);
    if (layout.zero >= 3) {
      // FSDP gathers one layer at a time and prefetches the next.
      const LayerCost &big = model.moe ? moe : dense;
      stage.weightBytes +=
          2 * kBf16 * (big.denseParams + big.expertParams);
    }
    stage.gradientBytes = kBf16 * (layout.zero >= 2 ? sharded : params);
    stage.optimizerBytes =
        kOptimizerBytes * (layout.zero >= 1 ? sharded : params);
  }
  return stages;
}

DataParallelCost
CostModel::dataParallel(const Layout &layout,
                        const std::vector<const StageEstimate *> &held,
                        double forwardPerMicrobatch,
                        double backwardPerMicrobatch) const {
  double denseBytes = 0, expertBytes = 0, shardedParams = 0;
  const int64_t denseGroup = layout.dp * layout.cp;
  const int64_t expertGroup = layout.expertDataParallel();
  for (const StageEstimate *stage : held) {
    denseBytes += kBf16 * stage->denseParameters;
    expertBytes += kBf16 * stage->expertParameters;
    shardedParams += layout.zero >= 1
                         ? stage->denseParameters / denseGroup +
                               stage->expertParameters / expertGroup
                         : stage->denseParameters + stage->expertParameters;
  }
  // One reduce-scatter (or all-gather) of every gradient (or weight).
  const double half = reduceScatterTime(denseBytes, denseGroup, layout.tp) +
                      reduceScatterTime(expertBytes, expertGroup, layout.ep);
  const double m = static_cast<double>(layout.microbatches);
  DataParallelCost cost;
  switch (layout.zero) {
  case 0:
  case 1:
    // ZeRO-0 all-reduces; ZeRO-1 reduce-scatters the gradients and
    // all-gathers the updated weights: the same bytes. The reduction hides
    // under the last microbatch's backward (bucketed), the gather under
    // the next step's first forward.
    cost.total = 2 * half;
    cost.exposed = std::max(0.0, half - backwardPerMicrobatch) +
                   std::max(0.0, half - forwardPerMicrobatch);
    break;
  case 2:
    // Gradients stay sharded: a reduce-scatter after every microbatch.
    cost.total = (m + 1) * half;
    cost.exposed = m * std::max(0.0, half - backwardPerMicrobatch) +
                   std::max(0.0, half - forwardPerMicrobatch);
    break;
  default:
    // FSDP: gather for the forward and again for the backward, and a
    // reduce-scatter, every microbatch, prefetched under its compute.
    cost.total = 3 * m * half;
    cost.exposed = m * (std::max(0.0, half - forwardPerMicrobatch) +
                        std::max(0.0, 2 * half - backwardPerMicrobatch));
    break;
  }
  cost.optimizer = kOptimizerTraffic * shardedParams / cluster.hbmBandwidth;
  return cost;
}
