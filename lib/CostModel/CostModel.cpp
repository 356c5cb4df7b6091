//===- CostModel.cpp - times, sizes and traffic of a training step --------===//
//
// docs/cost-model.md derives every formula here and names its source.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"
#include "lib/CostModel/Flops.h"
#include "lib/CostModel/Memory.h"
#include "lib/CostModel/Roofline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

using namespace sched;

/// Bytes of a BF16 element: weights, activations.
static constexpr double kBf16 = 2;

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
  /// Elements of K and V (what context parallelism passes around).
  double kvElems = 0;
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
    shape.kvElems = shape.qkDims + shape.vDims;
  } else {
    const double hd = static_cast<double>(model.headDim);
    const double kv = static_cast<double>(model.kvHeads) * hd;
    const double q = heads * hd;
    shape.attentionParams = h * q + 2 * h * kv + q * h;
    shape.normParams = h;
    shape.qkDims = q;
    shape.vDims = q;
    shape.kvElems = 2 * kv;
  }

  const double width = mlpMatrices(model);
  if (moeLayer) {
    const MoeSpec &moe = *model.moe;
    const double expert = width * h * static_cast<double>(moe.expertFfnHidden);
    const double experts = static_cast<double>(moe.experts);
    const double topK = static_cast<double>(moe.topK);
    const double shared = static_cast<double>(moe.sharedExperts);
    shape.mlpDenseParams = h * experts + shared * expert;
    shape.normParams += h;
    shape.routedParams = experts * expert;
    shape.routedActiveParams = topK * expert;
  } else {
    const double f = static_cast<double>(model.ffnHidden);
    shape.mlpDenseParams = width * h * f;
    shape.normParams += h;
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

double CostModel::modelFlopsPerToken() const {
  return megatronFlopsPerToken(model, training.seqLen);
}

double CostModel::hardwareFlopsPerToken(const Layout &layout) const {
  const double flops = sched::hardwareFlopsPerToken(
      model, training.seqLen, layout.recompute, training.separateProjections);
  if (!layout.recompute.isBlock())
    return flops;
  // A block recomputes the share of the layers in its blocks.
  double covered = 0;
  for (const StageEstimate &stage : stages(layout))
    covered += static_cast<double>(
        std::min(stage.numLayers, layout.recompute.blockSize()));
  const double model = modelFlopsPerToken();
  return model + (flops - model) * covered /
                     static_cast<double>(this->model.layers);
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
  if (training.precision == Precision::FP4) {
    if (cluster.efficiency.matmulFp4 <= 0)
      return llvm::createStringError(
          "no NVFP4 GEMM efficiency is measured for the " + cluster.deviceName +
          " of cluster '" + cluster.name +
          "'; give efficiency.matmul_fp4 in a cluster file");
    if (model.moe)
      return llvm::createStringError(
          "model '" + model.name +
          "' has experts: NVFP4 grouped expert GEMMs are not measured, so "
          "fp4 is modelled for dense models only");
  }
  if (model.slidingWindow > 0 && training.attention == AttentionKernel::Unfused)
    return llvm::createStringError(
        "model '" + model.name +
        "' attends within a sliding window, which the unfused attention "
        "(whole score matrices) does not model; use --attention flash");
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
  // A windowed layer's ring would pass only the window's keys on: the
  // exchange is not the one CostModel prices for causal attention.
  if (layout.cp > 1 && model.slidingWindow > 0)
    return fail("cp > 1 with sliding-window attention is not modelled");
  if (!model.moe && layout.ep != 1)
    return fail("ep > 1 needs a mixture-of-experts model");
  if (model.moe && model.moe->experts % layout.ep != 0)
    return fail(llvm::formatv("ep={0} does not divide the {1} experts",
                              layout.ep, model.moe->experts)
                    .str());
  if ((layout.dp * layout.cp * layout.tp) % layout.ep != 0)
    return fail("ep must divide dp x cp x tp");
  if (layout.etp > 1) {
    if (!model.moe)
      return fail("etp > 1 needs a mixture-of-experts model");
    if ((layout.dp * layout.cp * layout.tp) % (layout.ep * layout.etp) != 0)
      return fail(llvm::formatv("ep x etp = {0} must divide dp x cp x tp = {1}",
                                layout.ep * layout.etp,
                                layout.dp * layout.cp * layout.tp)
                      .str());
    if (model.moe->expertFfnHidden % layout.etp != 0)
      return fail(llvm::formatv("etp={0} does not divide the experts' FFN "
                                "width {1}",
                                layout.etp, model.moe->expertFfnHidden)
                      .str());
  }
  // Megatron counts the embedding and the loss as a pipeline unit each
  // (account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_
  // split): pp x vpp may reach the layers + 2, the first stage then holding
  // only the embedding and the last only the output layer and loss. Without
  // a split given, that is the split (first=0, and last=0 at layers + 2).
  const int64_t numStages = layout.pp * layout.vpp;
  if (!layout.megatronSplit && numStages > model.layers &&
      numStages <= model.layers + 2) {
    layout.megatronSplit = true;
    layout.firstStageLayers = 0;
    layout.lastStageLayers = numStages == model.layers + 2 ? 0 : -1;
  }
  const int64_t layerlessStages =
      layout.megatronSplit
          ? (layout.firstStageLayers == 0) + (layout.lastStageLayers == 0)
          : 0;
  if (numStages > model.layers + layerlessStages)
    return fail(
        llvm::formatv("{0} stages (pp x vpp) for {1} layers{2}", numStages,
                      model.layers,
                      layerlessStages > 0
                          ? llvm::formatv(" and {0} embedding- or loss-only "
                                          "stage(s) (first=0, last=0)",
                                          layerlessStages)
                                .str()
                          : std::string(" (at most layers + 2 with an "
                                        "embedding-only first and a "
                                        "loss-only last stage)"))
            .str());
  if (layout.zero < 0 || layout.zero > 3)
    return fail("--zero must be 0, 1, 2 or 3");
  if (layout.shardGroup > 0) {
    if (layout.zero < 1)
      return fail("hsdp shards the ZeRO state: it needs --zero 1, 2 or 3");
    if ((layout.dp * layout.cp) % layout.shardGroup != 0)
      return fail(llvm::formatv("hsdp={0} does not divide dp x cp = {1}",
                                layout.shardGroup, layout.dp * layout.cp)
                      .str());
    if (layout.expertDataParallel() % layout.shardReplicas() != 0)
      return fail(llvm::formatv("hsdp={0}: its {1} replicas do not divide "
                                "the {2} expert-data-parallel ranks",
                                layout.shardGroup, layout.shardReplicas(),
                                layout.expertDataParallel())
                      .str());
  }
  if (layout.offloadLayers > 0 && cluster.efficiency.hostBandwidth <= 0)
    return fail("offload needs the device's host link, which cluster '" +
                cluster.name + "' does not give (device.host_bandwidth)");
  if (layout.recompute.hostNames() != 0) {
    if (cluster.efficiency.hostBandwidth <= 0)
      return fail("--recompute " + recomputeName(layout.recompute) +
                  " offloads tensors over the device's host link, which "
                  "cluster '" +
                  cluster.name + "' does not give (device.host_bandwidth)");
    if (layout.offloadLayers > 0)
      return fail("offload=N and a saved-name policy's =offload both move "
                  "activations to host memory: use one");
  }
  if (!modelsRecompute(layout.recompute))
    return fail("--recompute op (torchtitan's per-operator policy) is "
                "modelled for dense layers without MLA; this model has " +
                std::string(model.moe ? "MoE layers" : "MLA") +
                " (use none, full or a module set)");
  if (layout.offloadLayers >= model.layers)
    return fail(llvm::formatv("offload={0} needs fewer than the model's {1} "
                              "layers (the last layer's activations are "
                              "needed at once)",
                              layout.offloadLayers, model.layers)
                    .str());
  if (layout.offloadLayers > 0 && training.offloadAlone &&
      (layout.pp > 1 || layout.recompute != Recompute::None))
    return fail("offload=N runs without pipeline parallelism and without "
                "recomputation under stack '" +
                training.stack +
                "' (Megatron-Core refuses --cpu-offloading with either)");
  if (layout.megatronSplit) {
    const bool first = layout.firstStageLayers >= 0;
    const bool last = layout.lastStageLayers >= 0;
    if ((first || last) && numStages < 2)
      return fail("first and last need at least two stages (pp x vpp)");
    const int64_t middle = numStages - first - last;
    const int64_t rest = model.layers - (first ? layout.firstStageLayers : 0) -
                         (last ? layout.lastStageLayers : 0);
    if (rest < 0)
      return fail(llvm::formatv("first and last take more than the model's "
                                "{0} layers",
                                model.layers)
                      .str());
    if (middle == 0 ? rest != 0 : rest < middle || rest % middle != 0)
      return fail(llvm::formatv("{0} layers do not split evenly into the {1} "
                                "other stages (Megatron's split)",
                                rest, middle)
                      .str());
  }
  const int64_t sequences = training.globalBatchSequences();
  if (layout.microbatchSize < 1 ||
      sequences % (layout.dp * layout.microbatchSize) != 0)
    return fail(llvm::formatv("{0} sequences do not split into dp={1} "
                              "replicas of microbatches of {2}",
                              sequences, layout.dp, layout.microbatchSize)
                    .str());
  layout.microbatches = sequences / (layout.dp * layout.microbatchSize);
  if (layout.offloadLayers > 0) {
    // Each stage keeps its last layer's activations on the device (stages()
    // offloads at most numLayers - 1): more would be ignored, not offloaded.
    // Only a layout that names offload pays for the split here.
    const std::vector<StageEstimate> split = stages(layout);
    const auto fewest = llvm::min_element(
        split, [](const StageEstimate &x, const StageEstimate &y) {
          return x.numLayers < y.numLayers;
        });
    if (fewest != split.end() && fewest->numLayers <= layout.offloadLayers)
      return fail(llvm::formatv("offload={0} needs fewer layers than each "
                                "stage has: stage {1} has {2} (its last "
                                "layer's activations are needed at once)",
                                layout.offloadLayers, fewest - split.begin(),
                                fewest->numLayers)
                      .str());
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

struct CostModel::LayerCost {
  StageTerms forward;
  StageTerms backward;
  /// Backward split: the weight-gradient GEMMs.
  double backwardWeight = 0;
  ExpertOverlapTerms expertOverlap;
  double activationBytes = 0;
  /// Kept in host memory (a saved-name policy's `=offload` tensors).
  double hostBytes = 0;
  double denseParams = 0;
  double expertParams = 0;
};

struct CostModel::LayerCostCache {
  /// tp, cp, ep, etp, microbatch size, recomputation, sequence
  /// parallelism, MoE layer, sliding window.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, Recompute,
                         bool, bool, bool>;
  std::map<Key, LayerCost> costs;
  /// The output layer's terms by (tp, cp, microbatch size, sp).
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>, HeadTerms> heads;
  /// Stage sizes by what bestSplit reads: the layers, the dense ones, a
  /// dense and an MoE layer's forward time, the stages, pp and the last
  /// stage's extra time. Layouts that differ in what leaves the forward
  /// times alone (the recomputation, above all a block's size, or ZeRO)
  /// share one split: keyed by the layout, DeepSeek-V3's search on 2,048
  /// devices balanced its layers once per recomputation of each shape.
  using SplitKey =
      std::tuple<int64_t, int64_t, double, double, int64_t, int64_t, double>;
  std::map<SplitKey, std::vector<int64_t>> splits;
};

CostModel::LayerCostCache &CostModel::caches() const {
  if (!layerCosts)
    layerCosts = std::make_shared<LayerCostCache>();
  return *layerCosts;
}

size_t CostModel::numKeptSplits() const { return caches().splits.size(); }

const CostModel::HeadTerms &
CostModel::cachedHeadTerms(const Layout &layout) const {
  LayerCostCache &cache = caches();
  auto key = std::make_tuple(layout.tp, layout.cp, layout.microbatchSize,
                             layout.sequenceParallel);
  auto it = cache.heads.find(key);
  if (it != cache.heads.end())
    return it->second;
  const LayerOperators ops = headOperators(model, training, layout);
  HeadTerms terms;
  addOperators(terms.forward, ops.forward, layout);
  addOperators(terms.backwardInput, ops.backwardInput, layout);
  addOperators(terms.backwardWeight, ops.backwardWeight, layout);
  return cache.heads.emplace(key, terms).first->second;
}

const CostModel::LayerCost &CostModel::cachedLayerCost(const Layout &layout,
                                                       bool moeLayer,
                                                       bool windowed) const {
  LayerCostCache &cache = caches();
  // A layer of a block recomputation is recomputed whole.
  Layout keyed = layout;
  if (layout.recompute.isBlock())
    keyed.recompute = Recompute::Full;
  const LayerCostCache::Key key{keyed.tp,
                                keyed.cp,
                                keyed.ep,
                                keyed.etp,
                                keyed.microbatchSize,
                                keyed.recompute,
                                keyed.sequenceParallel,
                                moeLayer,
                                windowed};
  auto it = cache.costs.find(key);
  if (it == cache.costs.end())
    it = cache.costs.emplace(key, layerCost(keyed, moeLayer, windowed)).first;
  return it->second;
}

static double sum(const StageTerms &t) {
  return t.matmul + t.attention + t.memoryBound + t.tensorParallel +
         t.contextParallel + t.expertParallel + t.recompute + t.host;
}

/// The kernels' share of `t`, without the communication terms.
static double computeSum(const StageTerms &t) {
  return t.matmul + t.attention + t.memoryBound + t.recompute;
}

void CostModel::addOperators(StageTerms &terms,
                             const std::vector<Operator> &ops,
                             const Layout &layout, uint8_t modules) const {
  // Attention kernels run on one context-parallel chunk at a time.
  const double seq = static_cast<double>(training.seqLen) /
                     static_cast<double>(layout.cp);
  for (const Operator &op : ops) {
    if (modules != 0 && (op.modules & modules) == 0)
      continue;
    const double time = operatorTime(op, cluster, seq);
    if (op.kind == OperatorClass::Attention || op.attentionCore)
      terms.attention += time;
    else if (op.kind == OperatorClass::Gemm)
      terms.matmul += time;
    else
      terms.memoryBound += time;
  }
}

CostModel::LayerCost CostModel::layerCost(const Layout &layout, bool moeLayer,
                                          bool windowed) const {
  const LayerShape shape = layerShape(model, moeLayer);
  const double tokens = static_cast<double>(layout.microbatchSize) *
                        static_cast<double>(training.seqLen);
  const double chunk = tokens / static_cast<double>(layout.cp);
  // Tokens of one microbatch on one device: context parallelism splits
  // the sequence, sequence parallelism the tensor-parallel ranks' copies.
  const double local = chunk / static_cast<double>(layout.tp);
  const Efficiency &eff = cluster.efficiency;
  const double h = static_cast<double>(model.hidden);

  LayerCost cost;
  const LayerOperators ops =
      layerOperators(model, training, layout, moeLayer, windowed);
  addOperators(cost.forward, ops.forward, layout);
  addOperators(cost.backward, ops.backwardInput, layout);
  StageTerms weight;
  addOperators(weight, ops.backwardWeight, layout);
  cost.backwardWeight = sum(weight);

  // The tensors the layer keeps, as Operators lists them (the norms' and
  // linear layers' inputs whole on every tensor-parallel rank without
  // sequence parallelism: Korthikanti et al. 2022, section 4.2.2).
  cost.activationBytes = ops.savedBytes();
  cost.hostBytes = ops.hostBytes();

  // The all-gathers' share of the forward's tensor-parallel time (a
  // per-operator policy runs them again): half, but under NVFP4.
  double gatherShare = 0.5;
  if (layout.tp > 1) {
    const double bytes = kBf16 * chunk * h;
    if (layout.sequenceParallel) {
      // Per block an all-gather before and a reduce-scatter after; the
      // backward mirrors them and gathers the block's input again for the
      // weight gradient (only the sequence shard was kept). Under NVFP4
      // Transformer Engine gathers the quantized copies (the input's and
      // the incoming gradient's: 0.5625 bytes an element,
      // transformer_engine/pytorch/distributed.py _all_gather_nvfp4); the
      // reduce-scatters stay BF16.
      const double scatter = reduceScatterTime(bytes, layout.tp, 1);
      const double gather =
          training.precision == Precision::FP4
              ? reduceScatterTime(elementBytes(Precision::FP4) * chunk * h,
                                  layout.tp, 1)
              : scatter;
      cost.forward.tensorParallel = 2 * gather + 2 * scatter;
      cost.backward.tensorParallel = 4 * gather + 2 * scatter;
      gatherShare = gather / (gather + scatter);
    } else {
      // An all-reduce after each block, forward and backward.
      cost.forward.tensorParallel = 2 * allReduceTime(bytes, layout.tp, 1);
      cost.backward.tensorParallel = cost.forward.tensorParallel;
    }
    if (training.tensorParallelOverlap && eff.tensorParallelOverlap &&
        layout.sequenceParallel) {
      // Userbuffers split each collective into tp chunks pipelined with
      // the GEMM beside it: the first chunk stays exposed, the rest hides
      // under the block's GEMMs, which run slower on the SMs it holds.
      const double share = eff.computeShareBeside(
          eff.tensorParallelMultiprocessors);
      auto overlapped = [&](double comm, double gemms) {
        const double tail = comm * (layout.tp - 1) / layout.tp;
        const double hidden = std::min(tail, gemms);
        return comm - hidden + hidden * (1 / share - 1);
      };
      cost.forward.tensorParallel =
          overlapped(cost.forward.tensorParallel, cost.forward.matmul);
      cost.backward.tensorParallel =
          overlapped(cost.backward.tensorParallel,
                     cost.backward.matmul + weight.matmul);
    }
  }
  if (layout.cp > 1) {
    // Ring attention: K and V of every other chunk pass by each device.
    const double bytes = kBf16 * local * shape.kvElems *
                         static_cast<double>(layout.cp - 1);
    const int64_t stride = layout.tp;
    const double bandwidth =
        membersPerDomain(layout.cp, stride) == layout.cp
            ? domainBandwidth(layout.cp, stride) * eff.domainCollective
            : cluster.scaleOutBandwidth * eff.scaleOutCollective;
    const double comm = bytes / bandwidth;
    cost.forward.contextParallel =
        std::max(0.0, comm - cost.forward.attention);
    cost.backward.contextParallel =
        std::max(0.0, 2 * comm - cost.backward.attention);
  }
  if (moeLayer && layout.ep > 1) {
    // Dispatch (FP8 when the stack quantizes before it, as DeepSeek-V3
    // does; Megatron-Core sends BF16) and combine (BF16) of every local
    // token's top_k copies.
    const double element = training.expertDispatchBytes();
    // The backward sends the combine's gradient out as a dispatch (BF16)
    // and the dispatched copies' gradients back as a combine.
    ExpertOverlapTerms &x = cost.expertOverlap;
    x.dispatchForward =
        expertAllToAllTime(local, element, layout, /*dispatch=*/true);
    x.combineForward =
        expertAllToAllTime(local, kBf16, layout, /*dispatch=*/false);
    x.dispatchBackward =
        expertAllToAllTime(local, kBf16, layout, /*dispatch=*/true);
    x.combineBackward =
        expertAllToAllTime(local, kBf16, layout, /*dispatch=*/false);
    cost.forward.expertParallel = x.dispatchForward + x.combineForward;
    cost.backward.expertParallel = x.dispatchBackward + x.combineBackward;
  }
  if (moeLayer && layout.etp > 1) {
    // Expert tensor parallelism: the etp ranks of an expert slice gather
    // the copies dispatched to any of them (in the dispatch's dtype) and
    // reduce-scatter the experts' output (BF16); the backward the reverse,
    // in BF16. Consecutive ranks, like tp.
    const double copies = local * static_cast<double>(model.moe->topK) *
                          static_cast<double>(model.hidden) *
                          static_cast<double>(layout.etp);
    const double element = training.expertDispatchBytes();
    const double gather = reduceScatterTime(copies * element, layout.etp, 1);
    // The backward moves BF16 copies both ways: a scatter's time each.
    const double scatter = reduceScatterTime(copies * kBf16, layout.etp, 1);
    cost.forward.expertParallel += gather + scatter;
    cost.backward.expertParallel += 2 * scatter;
    cost.expertOverlap.dispatchForward += gather;
    cost.expertOverlap.combineForward += scatter;
    cost.expertOverlap.dispatchBackward += scatter;
    cost.expertOverlap.combineBackward += scatter;
  }

  if (moeLayer) {
    // What the device runs of the block meanwhile: its kernels and its
    // all-to-all.
    StageTerms block, blockInput, blockWeight;
    addOperators(block, ops.forward, layout, Recompute::Moe);
    addOperators(blockInput, ops.backwardInput, layout, Recompute::Moe);
    addOperators(blockWeight, ops.backwardWeight, layout, Recompute::Moe);
    cost.expertOverlap.blockForward = computeSum(block);
    cost.expertOverlap.blockBackwardInput = computeSum(blockInput);
    cost.expertOverlap.blockBackwardWeight = computeSum(blockWeight);
    cost.forward.host = moeHostWait(layout, cost.expertOverlap.blockForward +
                                                cost.forward.expertParallel);
  }

  StageTerms again;
  addOperators(again, ops.recompute, layout);
  cost.backward.recompute = again.matmul + again.attention + again.memoryBound;
  // Recomputing the layer (or the MoE block) sends its tokens to the
  // experts again; the whole layer also repeats its tensor-parallel
  // collectives, and so does a saved-name policy (the norms' outputs are
  // unnamed: their gathers run again).
  if (layout.recompute.isFull() || layout.recompute.isNamed())
    cost.backward.recompute += cost.forward.tensorParallel;
  // The per-operator policy keeps reduce_scatter's output (its save list)
  // and runs the all-gathers again: half the forward's collectives.
  if (layout.recompute.isPerOperator())
    cost.backward.recompute += cost.forward.tensorParallel * gatherShare;
  if (layout.recompute.recomputes(Recompute::Moe)) {
    cost.backward.recompute += cost.forward.expertParallel;
    cost.backward.host += cost.forward.host;
  }

  const double dense =
      shape.attentionParams + shape.mlpDenseParams + shape.normParams;
  cost.denseParams = dense / static_cast<double>(layout.tp);
  cost.expertParams =
      shape.routedParams / static_cast<double>(layout.ep * layout.etp);
  return cost;
}

double sched::moeHostForward(const TrainingSpec &training,
                             double localExperts) {
  const MoeHostTime &host = training.moeHost;
  if (training.cudaGraphs == CudaGraphs::Layer ||
      training.cudaGraphs == CudaGraphs::Step)
    return 0;
  double time = host.perLocalExpert * localExperts;
  if (training.cudaGraphs != CudaGraphs::MoeRouter)
    time += host.router;
  // Only the all-to-all dispatcher's host time is measured; the flex
  // dispatchers' is left out (a lower bound).
  if (training.moeDispatcher == MoeDispatcher::AllToAll)
    time += host.dispatch + host.combine;
  return time;
}

double CostModel::moeHostWait(const Layout &layout, double device) const {
  const double host =
      moeHostForward(training, static_cast<double>(model.moe->experts) /
                                   static_cast<double>(layout.ep));
  return std::max(0.0, host - device);
}

static void add(ExpertOverlapTerms &into, const ExpertOverlapTerms &t,
                double times = 1) {
  into.blockForward += times * t.blockForward;
  into.blockBackwardInput += times * t.blockBackwardInput;
  into.blockBackwardWeight += times * t.blockBackwardWeight;
  into.dispatchForward += times * t.dispatchForward;
  into.combineForward += times * t.combineForward;
  into.dispatchBackward += times * t.dispatchBackward;
  into.combineBackward += times * t.combineBackward;
}

static void add(StageTerms &into, const StageTerms &t, double times = 1) {
  into.matmul += times * t.matmul;
  into.attention += times * t.attention;
  into.memoryBound += times * t.memoryBound;
  into.tensorParallel += times * t.tensorParallel;
  into.contextParallel += times * t.contextParallel;
  into.expertParallel += times * t.expertParallel;
  into.recompute += times * t.recompute;
  into.host += times * t.host;
}

/// Splits `n` layers, the first `dense` of them costing `denseCost` and
/// the rest `moeCost`, into `parts` contiguous non-empty runs, `first` and
/// `last` added to the first and last run, so that the largest run is as
/// small as it can be. Returns the run sizes. The layers come in two runs
/// of equal cost, so packing takes a step per run, not per layer: linear
/// in `parts`, whatever the layer count (10^6-layer models included).
static std::vector<int64_t> balance(int64_t n, int64_t dense,
                                    double denseCost, double moeCost,
                                    int64_t parts, double first, double last) {
  // Greedy packing at capacity `cap`: how many runs it takes (stopping
  // past `parts` when only counting), honouring that the last layer
  // carries `last`.
  auto pack = [&](double cap, std::vector<int64_t> *sizes) {
    int64_t runs = 0;
    int64_t i = 0;
    int64_t count = 0;
    double load = first;
    while (i < n) {
      const double cost = i < dense ? denseCost : moeCost;
      // Plain layers up to the end of this cost's run (the last layer,
      // which carries `last`, is taken on its own).
      const int64_t end = std::min(i < dense ? dense : n, n - 1);
      if (i < end) {
        int64_t fit = end - i;
        if (cost > 0)
          fit = std::min<int64_t>(
              fit, static_cast<int64_t>(std::max(0.0, (cap - load) / cost)));
        if (fit == 0 && count == 0)
          fit = 1;
        if (fit > 0) {
          load += static_cast<double>(fit) * cost;
          count += fit;
          i += fit;
          continue;
        }
      } else if (count == 0 || load + cost + last <= cap) {
        load += cost + last;
        ++count;
        ++i;
        continue;
      }
      if (sizes)
        sizes->push_back(count);
      else if (runs > parts)
        return runs + 1;
      ++runs;
      load = 0;
      count = 0;
    }
    if (sizes)
      sizes->push_back(count);
    return runs + 1;
  };
  double lo = std::max(dense > 0 ? denseCost : 0.0, n > dense ? moeCost : 0.0);
  // The whole model in one run, with room for the rounding of the greedy's
  // sums: at exactly the total, a quotient rounded down could leave the
  // last layer to a run of its own, past `parts` (one stage held 60 of
  // DeepSeek-V3's 61 layers on some clusters and not on others).
  double hi = (first + last + static_cast<double>(dense) * denseCost +
               static_cast<double>(n - dense) * moeCost) *
              (1 + 1e-9);
  for (int iter = 0; iter < 60; ++iter) {
    const double mid = (lo + hi) / 2;
    if (pack(mid, nullptr) <= parts)
      hi = mid;
    else
      lo = mid;
  }
  std::vector<int64_t> sizes;
  pack(hi, &sizes);
  // Never more runs than parts: every layer belongs to a stage.
  while (static_cast<int64_t>(sizes.size()) > parts) {
    sizes[sizes.size() - 2] += sizes.back();
    sizes.pop_back();
  }
  // Fewer runs than parts: split the longest runs (never raises the max).
  while (static_cast<int64_t>(sizes.size()) < parts) {
    auto longest = std::max_element(sizes.begin(), sizes.end());
    const int64_t half = *longest / 2;
    *longest -= half;
    sizes.insert(longest + 1, half);
  }
  return sizes;
}

/// The forward time of each device under `sizes` (a device holds the
/// stages s with s mod pp equal to its rank, interleaved), the output head
/// on the last stage: the most any device carries, and the most any stage
/// does.
static std::pair<double, double>
splitLoad(const std::vector<int64_t> &sizes, int64_t dense, double denseCost,
          double moeCost, int64_t pp, double last) {
  std::vector<double> device(pp, 0);
  double stageMax = 0;
  int64_t layer = 0;
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t end = layer + sizes[s];
    const int64_t denseHere =
        std::max<int64_t>(0, std::min(end, dense) - layer);
    double load = static_cast<double>(denseHere) * denseCost +
                  static_cast<double>(sizes[s] - denseHere) * moeCost;
    if (s + 1 == sizes.size())
      load += last;
    device[s % pp] += load;
    stageMax = std::max(stageMax, load);
    layer = end;
  }
  return {*std::max_element(device.begin(), device.end()), stageMax};
}

/// The default split: the balanced runs of balance(), or, where a device
/// holds several stages (vpp > 1) and carries less that way, one of the
/// splits Megatron's flags can state (even, or `first` / `last` layers on
/// the end stages and the rest even): whichever leaves the busiest device
/// the least forward time, then the busiest stage.
static std::vector<int64_t> bestSplit(int64_t n, int64_t dense,
                                      double denseCost, double moeCost,
                                      int64_t parts, int64_t pp,
                                      double last) {
  std::vector<int64_t> best =
      balance(n, dense, denseCost, moeCost, parts, 0, last);
  if (parts == pp)
    return best;
  std::pair<double, double> bestLoad =
      splitLoad(best, dense, denseCost, moeCost, pp, last);
  // Megatron's end stages hold a few layers more or fewer than the others:
  // up to twice an even share, and never more than 32 (a model of 2^24
  // layers would otherwise try 2^40 pairs).
  const int64_t most = std::min<int64_t>(32, 2 * ((n + parts - 1) / parts));
  for (int64_t first = -1; first <= most; ++first) {
    for (int64_t lastLayers = -1; lastLayers <= most; ++lastLayers) {
      const int64_t middle = parts - (first >= 0) - (lastLayers >= 0);
      const int64_t rest = n - std::max<int64_t>(first, 0) -
                           std::max<int64_t>(lastLayers, 0);
      if (middle <= 0 || rest < 0 || rest % middle != 0)
        continue;
      std::vector<int64_t> sizes(parts, rest / middle);
      if (first >= 0)
        sizes.front() = first;
      if (lastLayers >= 0)
        sizes.back() = lastLayers;
      const std::pair<double, double> load =
          splitLoad(sizes, dense, denseCost, moeCost, pp, last);
      if (load < bestLoad) {
        bestLoad = load;
        best = std::move(sizes);
      }
    }
  }
  return best;
}

std::vector<StageEstimate> CostModel::stages(const Layout &layout) const {
  const int64_t numStages = layout.pp * layout.vpp;
  const LayerCost &dense = cachedLayerCost(layout, false);
  const LayerCost &moe = model.moe ? cachedLayerCost(layout, true) : dense;
  // A block recomputation: `dense` and `moe` are the layers recomputed
  // whole, these the others.
  const bool block = layout.recompute.isBlock();
  Layout plain = layout;
  plain.recompute = Recompute::None;
  const LayerCost *plainDense = block ? &cachedLayerCost(plain, false) : &dense;
  const LayerCost *plainMoe =
      block && model.moe ? &cachedLayerCost(plain, true) : plainDense;
  // What the backward of one recomputed layer makes again and holds until
  // it is done: a layer's tensors without recomputation less those kept.
  double recomputedLayer = 0;
  if (layout.recompute != Recompute::None) {
    const LayerCost &denseAll = cachedLayerCost(plain, false);
    recomputedLayer = denseAll.activationBytes - dense.activationBytes;
    if (model.moe)
      recomputedLayer =
          std::max(recomputedLayer, cachedLayerCost(plain, true).activationBytes -
                                        moe.activationBytes);
    recomputedLayer = std::max(0.0, recomputedLayer);
  }
  // Each kind's cost with the sliding window: [in a recomputed block or
  // not][MoE][windowed]. A model without windows has only the full kind.
  const bool windows = model.slidingWindow > 0;
  const LayerCost *costs[2][2][2];
  costs[0][0][0] = &dense;
  costs[0][1][0] = &moe;
  costs[1][0][0] = plainDense;
  costs[1][1][0] = plainMoe;
  for (int inBlock = 0; inBlock < 2; ++inBlock)
    for (int isMoe = 0; isMoe < 2; ++isMoe)
      costs[inBlock][isMoe][1] =
          !windows ? costs[inBlock][isMoe][0]
                   : &cachedLayerCost(inBlock == 0 || !block ? layout : plain,
                                      isMoe == 1 && model.moe, true);

  const double h = static_cast<double>(model.hidden);
  const double vocab = static_cast<double>(model.vocab);
  const double tokens = static_cast<double>(layout.microbatchSize) *
                        static_cast<double>(training.seqLen);
  const double chunk = tokens / static_cast<double>(layout.cp);
  const double local = chunk / static_cast<double>(layout.tp);
  // The output layer and its loss (and each MTP module's projection and
  // second output layer), as operators; the loss keeps FP32 softmax
  // outputs for its backward, or with a fused cross-entropy the BF16
  // gradient it wrote over the logits.
  const double mtp = static_cast<double>(model.mtpLayers);
  const HeadTerms &head = cachedHeadTerms(layout);
  const StageTerms &headForward = head.forward;
  const StageTerms &headBackward = head.backwardInput;
  const StageTerms &headWeight = head.backwardWeight;
  const double logitBytes = training.fusedCrossEntropy ? kBf16 : 4;
  const double headActivation =
      (1 + mtp) * logitBytes * chunk * vocab / static_cast<double>(layout.tp);
  const double headParams =
      ((model.tiedEmbeddings ? 0 : h * vocab) + h + mtp * 2 * h * h) /
      static_cast<double>(layout.tp);
  const double embeddingParams = vocab * h / static_cast<double>(layout.tp);
  // MTP modules sit outside any recomputed block.
  const LayerCost &mtpLayer = *costs[block][model.isMoeLayer(model.layers - 1)]
                                    [model.isWindowedLayer(model.layers - 1)];

  const int64_t denseLayers =
      model.moe ? std::min(model.moe->denseLayers, model.layers)
                : model.layers;
  // The split depends on the layers' and the head's kernel time only (not
  // on dp, zero, the recomputation, the schedule or the links): the
  // search's layouts share it.
  // With a sliding window, a layer of each kind at the mean of its
  // windowed and full forward (the split balances counts of kinds; the
  // stages below sum each layer as it is).
  const double windowedShare =
      static_cast<double>(model.windowedLayersIn(0, model.layers)) /
      static_cast<double>(model.layers);
  auto meanForward = [&](int isMoe) {
    return (1 - windowedShare) * computeSum(costs[0][isMoe][0]->forward) +
           windowedShare * computeSum(costs[0][isMoe][1]->forward);
  };
  const double denseForward = meanForward(0);
  const double moeForward = meanForward(1);
  const double lastForward =
      computeSum(headForward) + mtp * computeSum(mtpLayer.forward);
  const LayerCostCache::SplitKey splitKey{
      model.layers, denseLayers, denseForward, moeForward,
      numStages,    layout.pp,   lastForward};
  LayerCostCache &cache = caches();
  // A time that is no number would break the map's order: such a split is
  // made each time, not kept.
  const bool keyed = std::isfinite(denseForward) &&
                     std::isfinite(moeForward) && std::isfinite(lastForward);
  auto split = keyed ? cache.splits.find(splitKey) : cache.splits.end();
  std::vector<int64_t> megatron;
  std::vector<int64_t> unkept;
  if (layout.megatronSplit) {
    // Checked by checkLayout: the rest divides evenly.
    const int64_t first = layout.firstStageLayers;
    const int64_t last = layout.lastStageLayers;
    const int64_t middle = numStages - (first >= 0) - (last >= 0);
    const int64_t rest = model.layers - std::max<int64_t>(first, 0) -
                         std::max<int64_t>(last, 0);
    megatron.assign(numStages, middle > 0 ? rest / middle : 0);
    if (first >= 0)
      megatron.front() = first;
    if (last >= 0)
      megatron.back() = last;
  } else if (split == cache.splits.end()) {
    std::vector<int64_t> made =
        bestSplit(model.layers, denseLayers, denseForward, moeForward,
                  numStages, layout.pp, lastForward);
    if (keyed)
      split = cache.splits.emplace(splitKey, std::move(made)).first;
    else
      unkept = std::move(made);
  }
  const std::vector<int64_t> &sizes = layout.megatronSplit ? megatron
                                      : keyed              ? split->second
                                                           : unkept;

  std::vector<StageEstimate> stages(numStages);
  int64_t next = 0;
  for (int64_t s = 0; s < numStages; ++s) {
    StageEstimate &stage = stages[s];
    stage.firstLayer = next;
    stage.numLayers = sizes[s];
    next += sizes[s];
    double weightPart = 0;
    // The stage's layers of each kind (dense ones first, then MoE ones),
    // and under a block recomputation its first N layers recomputed whole,
    // the others not at all.
    const int64_t end = stage.firstLayer + stage.numLayers;
    const int64_t split =
        block ? std::min(end, stage.firstLayer + layout.recompute.blockSize())
              : end;
    // How many layers of [from, to) cost as each of the eight kinds: in
    // the recomputed block or after it, dense or MoE, windowed or not.
    auto kinds = [&](int64_t from, int64_t to) {
      to = std::max(from, to);
      std::array<std::pair<const LayerCost *, int64_t>, 8> counts{};
      size_t next = 0;
      const int64_t parts[2][2] = {{from, std::min(to, split)},
                                   {std::max(from, split), to}};
      for (int inBlock = 0; inBlock < 2; ++inBlock) {
        const auto [begin, end] = parts[inBlock];
        const int64_t byKind[2][2] = {{begin, std::min(end, denseLayers)},
                                      {std::max(begin, denseLayers), end}};
        for (int isMoe = 0; isMoe < 2; ++isMoe) {
          const auto [x, y] = byKind[isMoe];
          const int64_t all = std::max<int64_t>(0, y - x);
          const int64_t windowed = model.windowedLayersIn(x, y);
          counts[next++] = {costs[inBlock][isMoe][0], all - windowed};
          counts[next++] = {costs[inBlock][isMoe][1], windowed};
        }
      }
      return counts;
    };
    for (auto [cost, count] : kinds(stage.firstLayer, end)) {
      if (count == 0)
        continue;
      const double times = static_cast<double>(count);
      add(stage.forwardTerms, cost->forward, times);
      add(stage.backwardTerms, cost->backward, times);
      add(stage.expertOverlap, cost->expertOverlap, times);
      weightPart += times * cost->backwardWeight;
      stage.activationBytes += times * cost->activationBytes;
      stage.denseParameters += times * cost->denseParams;
      stage.expertParameters += times * cost->expertParams;
    }
    // Activation offload: each offloaded layer's tensors wait in host
    // memory. Each copy runs beside the next layer's compute (its forward
    // on the way out, its backward on the way back) and is exposed where
    // longer. offload=N moves all the first N layers keep; a saved-name
    // policy's `=offload` tensors move in every layer. One layer's worth
    // stays staged on the device while it moves, except under Transformer
    // Engine's version 2 offload, which frees an offloaded layer as a kept
    // one starts and reloads it as one ends (Layout.h,
    // offloadSynchronizerV2).
    double stagedLayer = 0;
    auto offloadCopies = [&](int64_t from, int64_t to, bool whole) {
      const double link = cluster.efficiency.hostBandwidth;
      double staged = 0;
      for (auto [cost, count] : kinds(from, to)) {
        const double bytes = whole ? cost->activationBytes : cost->hostBytes;
        if (count == 0 || bytes <= 0)
          continue;
        const double times = static_cast<double>(count);
        const double copy = bytes / link;
        if (whole)
          stage.activationBytes -= times * bytes;
        staged = std::max(staged, bytes);
        stage.forwardTerms.memoryBound +=
            times * std::max(0.0, copy - sum(cost->forward));
        stage.backwardTerms.memoryBound +=
            times * std::max(0.0, copy - sum(cost->backward));
      }
      if (!whole || !training.offloadSynchronizerV2)
        stage.activationBytes += staged;
      if (whole && !training.offloadSynchronizerV2)
        stagedLayer = staged;
    };
    const int64_t offloaded =
        std::min(layout.offloadLayers, std::max<int64_t>(0, stage.numLayers - 1));
    if (offloaded > 0)
      offloadCopies(stage.firstLayer, stage.firstLayer + offloaded, true);
    if (layout.recompute.hostNames() != 0)
      offloadCopies(stage.firstLayer, end, false);
    if (s == 0)
      stage.denseParameters += embeddingParams;
    if (s == numStages - 1) {
      add(stage.forwardTerms, headForward);
      add(stage.backwardTerms, headBackward);
      weightPart += sum(headWeight);
      add(stage.forwardTerms, mtpLayer.forward, mtp);
      add(stage.backwardTerms, mtpLayer.backward, mtp);
      add(stage.expertOverlap, mtpLayer.expertOverlap, mtp);
      weightPart += mtp * mtpLayer.backwardWeight;
      const double headTensors =
          headActivation + mtp * mtpLayer.activationBytes;
      // Transformer Engine's version 1 offload frees its staged layer at the
      // commit of the stage's last forward layer, before the head runs, and
      // reloads it at that layer's backward commit, after the head's
      // backward has freed the logits (cpu_offload.py @v2.7,
      // synchronize_on_group_commit_forward and on_group_commit_backward,
      // layer_window_map[N - 1] is L - 1): the two are never held together.
      stage.activationBytes += headTensors - std::min(stagedLayer, headTensors);
      stage.denseParameters += headParams + mtp * mtpLayer.denseParams;
      stage.expertParameters += mtp * mtpLayer.expertParams;
      stage.headBytes = headTensors;
      stage.headParameters =
          headParams + mtp * (mtpLayer.denseParams + mtpLayer.expertParams);
    }
    stage.stagedBytes = stagedLayer;
    stage.forward = sum(stage.forwardTerms);
    stage.backwardInput = sum(stage.backwardTerms);
    stage.backwardWeight = weightPart;
    // W keeps the inputs of the weight matmuls, about half of what the
    // layer keeps (Qi et al. 2024 count it so).
    stage.weightGradBytes = stage.activationBytes / 2;
    stage.outputBytes = kBf16 * local * h;

    // The backward starts with the stage's last layer: its recomputed
    // tensors come on top of everything the microbatch keeps, unless a
    // block leaves that layer out (its kept tensors are freed before the
    // block's first recomputation, and they are more).
    if (stage.numLayers > 0 && (!block || split == end))
      stage.recomputedBytes = recomputedLayer;
    const LayerCost &big = model.moe ? moe : dense;
    stage.layerParameters = big.denseParams + big.expertParams;
  }
  shard(stages, layout);
  return stages;
}

PrecisionRecipe CostModel::precisionRecipe() const {
  PrecisionRecipe recipe =
      sched::precisionRecipe(training.fp32Weights, training.mainGradientBytes,
                             training.optimizerMomentBytes);
  if (training.bf16GradientReduction)
    recipe = withBf16GradientReduction(recipe);
  if (training.precision != Precision::FP8)
    return recipe;
  // Transformer Engine transposes a tensorwise FP8 weight after its gather
  // unless the GEMMs take non-TN FP8 layouts (compute capability 10.x and
  // 13+: utils.py is_non_tn_fp8_gemm_supported, TE 2.12), i.e. on Hopper.
  return withFp8Params(recipe, training.fp8Params,
                       deviceGeneration(cluster.deviceName) == "hopper");
}

void CostModel::shard(std::vector<StageEstimate> &stages,
                      const Layout &layout) const {
  // ZeRO shards span the shard groups (every data-parallel rank, or an
  // HSDP group).
  const double denseGroup = static_cast<double>(layout.denseShardGroup());
  const double expertGroup = static_cast<double>(layout.expertShardGroup());
  const PrecisionRecipe recipe = precisionRecipe();
  for (StageEstimate &stage : stages) {
    const double params = stage.denseParameters + stage.expertParameters;
    const double sharded = stage.denseParameters / denseGroup +
                           stage.expertParameters / expertGroup;
    const StaticBytes bytes = staticBytes(recipe, layout.zero, params, sharded);
    stage.weightBytes = bytes.weights;
    stage.gradientBytes = bytes.gradients;
    stage.optimizerBytes = bytes.optimizer;
    // FSDP gathers one layer at a time and prefetches the next, and holds
    // a layer's unsharded gradient until it is reduce-scattered.
    const bool fsdp = layout.zero >= 3;
    if (fsdp)
      stage.weightBytes +=
          2 * (recipe.gatheredWeightBytes + recipe.transposeBytes) *
          stage.layerParameters;
    const double unshardedGradient = fsdp ? recipe.reducedGradientBytes : 0;
    // Two moments of the backward peak on the last stage: the head's
    // backward, with its kept tensors (and under FSDP its unsharded
    // gradient), and the last layer's, with that layer's working set (and
    // any staged offloaded layer) after the loss and output layer's
    // backward have freed the logits (Megatron-Core's cross-entropy turns
    // its saved softmax into the gradient in place, Transformer Engine's
    // fused one its saved gradient; MaxText's loss VJP keeps its residuals
    // only until the output layer's transpose, which the layers' backward
    // scan depends on). activationBytes holds the larger of the head's
    // tensors and the staged layer, so the working set is what either
    // moment holds beyond it (docs/cost-model.md, "Activations").
    const double kept = std::max(stage.headBytes, stage.stagedBytes);
    const double lastLayer = stage.stagedBytes + stage.recomputedBytes +
                             unshardedGradient * stage.layerParameters;
    const double head =
        stage.headBytes + unshardedGradient * stage.headParameters;
    stage.workingSetBytes = std::max(lastLayer, head) - kept;
  }
}

DataParallelCost
CostModel::dataParallel(const Layout &layout,
                        llvm::ArrayRef<const StageEstimate *> held,
                        double forwardPerMicrobatch,
                        double backwardPerMicrobatch) const {
  double denseParams = 0, expertParams = 0, shardedParams = 0, layers = 0;
  // Reductions and gathers run within the shard groups; with HSDP each
  // group's shard is then all-reduced across its replicas.
  const int64_t denseGroup = layout.denseShardGroup();
  const int64_t expertGroup = layout.expertShardGroup();
  const int64_t replicas = layout.shardReplicas();
  for (const StageEstimate *stage : held) {
    layers += static_cast<double>(stage->numLayers);
    denseParams += stage->denseParameters;
    expertParams += stage->expertParameters;
    shardedParams += layout.zero >= 1
                         ? stage->denseParameters / denseGroup +
                               stage->expertParameters / expertGroup
                         : stage->denseParameters + stage->expertParameters;
  }
  // Gradients are reduced in their dtype (BF16 where the stack reduces the
  // GEMM's output) and weights gathered in the
  // recipe's bytes (BF16, or the run's FP8 parameters), in buckets of
  // max(40M, 1M x dp) parameters (Megatron-Core's DDP default).
  const PrecisionRecipe recipe = precisionRecipe();
  const double bucket = std::max(
      40e6, 1e6 * static_cast<double>(layout.dp * layout.cp));
  auto pass = [&](double bytesPerParam) {
    return reduceScatterTime(bytesPerParam * denseParams, denseGroup,
                             layout.tp, bytesPerParam * bucket) +
           reduceScatterTime(bytesPerParam * expertParams, expertGroup,
                             layout.ep, bytesPerParam * bucket);
  };
  // A shard's replicas sit a whole shard group apart: a reduce-scatter and
  // an all-gather of the shard among them.
  auto acrossReplicas = [&](double bytesPerParam) {
    if (replicas <= 1)
      return 0.0;
    const double dense = bytesPerParam * denseParams /
                         static_cast<double>(denseGroup);
    const double experts = bytesPerParam * expertParams /
                           static_cast<double>(expertGroup);
    const double message = bytesPerParam * bucket /
                           static_cast<double>(denseGroup);
    return 2 * (reduceScatterTime(dense, replicas, layout.tp * denseGroup,
                                  message) +
                reduceScatterTime(experts, replicas,
                                  layout.ep * expertGroup, message));
  };
  // Within the shard groups, and (HSDP) across the replicas once a step,
  // after the last microbatch's reduction.
  const double reduceInGroup = pass(recipe.reducedGradientBytes);
  const double reduceAcross = acrossReplicas(recipe.reducedGradientBytes);
  const double reduce = reduceInGroup + reduceAcross;
  const double gather = pass(layout.zero >= 3 ? recipe.gatheredWeightBytes
                                              : recipe.updateGatherBytes);
  // Communication that hides under compute holds SMs the compute then
  // lacks (NCCL's channels, one CTA each): the hidden part costs
  // hidden x (1 / share - 1) of compute time.
  const double share = cluster.efficiency.computeShareBeside(
      cluster.efficiency.collectiveMultiprocessors);
  // Megatron-Core's DDP launches a bucket's collective once every
  // gradient in it is ready (param_and_grad_buffer.py: register_grad_ready,
  // start_grad_sync), in the order the backward makes them: the first
  // bucket waits for 1/n of the backward and the last one's reduction
  // comes after it; the gathers mirror that (the first bucket's weights
  // before the forward can start). Of `comm` split over n buckets beside
  // `compute`, max(comm / n, comm - compute (1 - 1/n)) is exposed.
  // FSDP's unit is a layer: the first layer's gather precedes the forward
  // and the last one's reduce-scatter (and, with HSDP, its all-reduce
  // across the replicas) follows the backward.
  const double buckets =
      layout.zero >= 3
          ? std::max(1.0, layers)
          : std::max(1.0, std::floor((denseParams + expertParams) / bucket));
  auto exposedBucketed = [&](double comm, double compute) {
    const double exposed =
        std::max(comm / buckets, comm - compute * (1 - 1 / buckets));
    return exposed + std::max(0.0, comm - exposed) * (1 / share - 1);
  };
  const double m = static_cast<double>(layout.microbatches);
  DataParallelCost cost;
  switch (layout.zero) {
  case 0:
  case 1:
    // ZeRO-0 all-reduces (a reduce-scatter and an all-gather of the
    // gradients); ZeRO-1 reduce-scatters the gradients and all-gathers the
    // updated weights. The reduction hides under the last microbatch's
    // backward (bucketed), the gather under the next step's first forward.
    {
      const double second = layout.zero == 0 ? reduce : gather;
      cost.total = reduce + second;
      cost.exposed = exposedBucketed(reduce, backwardPerMicrobatch) +
                     exposedBucketed(second, forwardPerMicrobatch);
    }
    break;
  case 2:
    // Gradients stay sharded: a reduce-scatter after every microbatch.
    cost.total = m * reduceInGroup + reduceAcross + gather;
    cost.exposed =
        (m - 1) * exposedBucketed(reduceInGroup, backwardPerMicrobatch) +
        exposedBucketed(reduce, backwardPerMicrobatch) +
        exposedBucketed(gather, forwardPerMicrobatch);
    break;
  default:
    // FSDP: gather for the forward and again for the backward, and a
    // reduce-scatter, every microbatch, prefetched under its compute;
    // where the stack synchronizes the device around each gather
    // (TrainingSpec::shardedOverlap), all of it adds to the compute.
    cost.total = m * (2 * gather + reduceInGroup) + reduceAcross;
    cost.exposed =
        !training.shardedOverlap
            ? cost.total
            : m * exposedBucketed(gather, forwardPerMicrobatch) +
                  (m - 1) * exposedBucketed(gather + reduceInGroup,
                                            backwardPerMicrobatch) +
                  exposedBucketed(gather + reduce, backwardPerMicrobatch);
    break;
  }
  cost.optimizer = recipe.optimizerTraffic * shardedParams /
                   (cluster.hbmBandwidth * cluster.efficiency.hbm);
  return cost;
}
