//===- Communication.cpp - collectives on the links they cross ------------===//
//
// docs/cost-model.md, "Collectives on the links they cross": each
// collective is priced inside the high-bandwidth domain and across domains
// at the measured bus-bandwidth fraction of the link, reduced for small
// messages (the size at which the link's collectives reach half their
// large-message bandwidth is a measured figure of Efficiency.h), plus a
// latency per ring step. The expert all-to-all of a group inside one
// NVLink domain runs at a measured dispatcher's fraction where the device
// has one (HybridEP on Blackwell).
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace sched;

/// Bytes of a BF16 element: an expert exchange of narrower elements is an
/// FP8 dispatch.
static constexpr double kBf16Bytes = 2;

/// The largest divisor of `n` that is at most `bound` (1 when none is).
static int64_t largestDivisorAtMost(int64_t n, int64_t bound) {
  if (bound >= n)
    return n;
  if (bound >= 1 && n % bound == 0)
    return bound;
  int64_t best = 1;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0)
      continue;
    if (d <= bound)
      best = std::max(best, d);
    if (n / d <= bound)
      best = std::max(best, n / d);
  }
  return best;
}

int64_t CostModel::membersPerDomain(int64_t size, int64_t stride) const {
  // Launchers place a group on whole domains, the same number of members on
  // each (a group of 128 on NVL72 racks: 64 on each of two, not 72 and 56,
  // nor 1.78 racks): the most members a domain's placed devices hold that
  // divide the group evenly.
  const int64_t room = cluster.placedPerDomain() / std::max<int64_t>(stride, 1);
  return largestDivisorAtMost(size, std::max<int64_t>(room, 1));
}

double CostModel::domainBandwidth(int64_t size, int64_t stride) const {
  if (cluster.topology == Topology::Switch)
    return cluster.domainBandwidth;
  // A cube of side k: a group within k consecutive ranks spans one axis,
  // within k^2 two, beyond that three.
  const double side = std::max(
      2.0, std::round(std::cbrt(static_cast<double>(cluster.domainSize))));
  const double span = static_cast<double>(size * stride);
  const double axes = span <= side ? 1 : span <= side * side ? 2 : 3;
  return cluster.domainBandwidth * axes / 3;
}

double CostModel::reduceScatterTime(double bytes, int64_t size, int64_t stride,
                                    double message) const {
  if (size <= 1 || bytes <= 0)
    return 0;
  if (message <= 0)
    message = bytes;
  const int64_t local = membersPerDomain(size, stride);
  const double domains = static_cast<double>(size) / static_cast<double>(local);
  const Efficiency &eff = cluster.efficiency;
  double time = 0;
  if (local > 1)
    time += (static_cast<double>(local - 1) / local) * bytes /
                (domainBandwidth(local, stride) * eff.domainCollective *
                 messageShare(message, eff.domainHalfBytes)) +
            cluster.latency * static_cast<double>(local - 1);
  // The half points are per-rank buffer sizes, as nccl-tests measured
  // them on both links (KERNELS.md 4a, 4b), not the inter-node shard.
  if (domains > 1)
    time += ((domains - 1) / domains) * (bytes / static_cast<double>(local)) /
                (cluster.scaleOutBandwidth * eff.scaleOutCollective *
                 messageShare(message, eff.scaleOutHalfBytes)) +
            cluster.latency * (domains - 1);
  return time;
}

double CostModel::expertDestinationRanks(int64_t ep) const {
  const MoeSpec &moe = *model.moe;
  // A token's top_k distinct experts, uniform over the E experts, miss a
  // given rank's E/ep when all fall among the others.
  const double experts = static_cast<double>(moe.experts);
  const double others = experts - experts / static_cast<double>(ep);
  double missed = 1;
  for (int64_t i = 0; i < moe.topK; ++i)
    missed *= std::max(0.0, others - static_cast<double>(i)) /
              (experts - static_cast<double>(i));
  return static_cast<double>(ep) * (1 - missed);
}

/// An exchange that moves `inside` bytes over the NVLink domain and
/// `outside` over the NIC at once: the slower of the two.
static double concurrentLinksTime(double inside, double insideRate,
                                  double outside, double outsideRate) {
  double time = 0;
  if (inside > 0)
    time = std::max(time, inside / insideRate);
  if (outside > 0)
    time = std::max(time, outside / outsideRate);
  return time;
}

double CostModel::expertAllToAllTime(double tokens, double elementBytes,
                                     const Layout &layout,
                                     bool dispatch) const {
  const int64_t ep = layout.ep;
  // Expert-parallel peers sit etp ranks apart (the experts' grid).
  const int64_t local = membersPerDomain(ep, layout.etp);
  const Efficiency &eff = cluster.efficiency;
  if (training.moeDispatcher == MoeDispatcher::AllToAll && ep > 1) {
    // Megatron-Core's MoEAlltoAllTokenDispatcher permutes every token's
    // top_k copies and exchanges them with one all_to_all_single
    // (megatron/core/transformer/moe/token_dispatcher.py): each copy goes
    // to its expert's rank, (local - 1) / ep of them inside the NVLink
    // domain and (ep - local) / ep over the NIC, both at once. NCCL runs
    // it as grouped send/recv; no all-to-all curve is in KERNELS.md, so it
    // takes NCCL's measured collective fractions on each link.
    const double copies = tokens * static_cast<double>(model.moe->topK) *
                          static_cast<double>(model.hidden) * elementBytes;
    const double ranks = static_cast<double>(ep);
    const double inside = copies * static_cast<double>(local - 1) / ranks;
    const double outside = copies * static_cast<double>(ep - local) / ranks;
    return concurrentLinksTime(
               inside,
               domainBandwidth(local, layout.etp) * eff.domainCollective,
               outside, cluster.scaleOutBandwidth * eff.scaleOutCollective) +
           cluster.latency;
  }
  if (!eff.expertExchange.empty() && local == ep && ep > 1) {
    // A measured dispatcher for groups inside one NVLink domain (HybridEP
    // on Blackwell): it sends each token once to every rank holding one of
    // its experts, and its measured fraction counts those rows, its own
    // included.
    const double rows = tokens * expertDestinationRanks(ep);
    const double fraction = eff.expertExchangeAt(
        static_cast<double>(ep), dispatch, elementBytes < kBf16Bytes);
    return rows * static_cast<double>(model.hidden) * elementBytes /
               (domainBandwidth(ep, layout.etp) * fraction) +
           cluster.latency;
  }
  // The dispatcher forwards over NVLink inside groups of `peers` ranks and
  // sends between groups over the NIC; any group that divides ep and fits
  // in a domain will do (DeepEP's internode kernels use NVLink groups of 8
  // whatever the domain), and the faster is taken. The candidates grow with
  // the domain, so a bigger domain is never slower.
  double best = std::numeric_limits<double>::infinity();
  for (int64_t peers = 1; peers <= local; ++peers)
    if (ep % peers == 0)
      best = std::min(
          best, expertAllToAllTime(tokens, elementBytes, ep, peers, local));
  return best;
}

double CostModel::expertAllToAllTime(double tokens, double elementBytes,
                                     int64_t ep, int64_t peers,
                                     int64_t local) const {
  const MoeSpec &moe = *model.moe;
  const double groups = static_cast<double>(ep) / static_cast<double>(peers);
  const double h = static_cast<double>(model.hidden);
  const double eff = cluster.efficiency.allToAll;
  // The dispatcher sends a token once to each rank that holds one of its
  // experts, not once per expert (DeepEP's get_dispatch_layout gives
  // is_token_in_rank, [tokens, ranks], and num_tokens_per_rank; the rank
  // expands the row to its experts after the exchange). Over NVLink: each
  // destination rank at another position of its NVLink group, reached
  // either directly (same group) or forwarded by the rank of the sender's
  // position that received it over the NIC (DeepEP: RDMA to the same local
  // rank of the remote node, then NVLink).
  const double inside = tokens * expertDestinationRanks(ep) * h * elementBytes *
                        static_cast<double>(peers - 1) /
                        static_cast<double>(peers);
  // Over the NIC each token crosses once per remote group holding one of
  // its experts: the distinct groups among top_k distinct uniform experts
  // (the same count over `groups` parts), of which (G-1)/G are remote.
  // Node-limited routing (DeepSeek-V3) sends a token to at most node_limit
  // domains, each of local/peers groups. NVLink and the NIC run at once.
  double reached = expertDestinationRanks(ep / peers);
  if (moe.nodeLimit > 0)
    reached = std::min(reached, static_cast<double>(moe.nodeLimit) *
                                    static_cast<double>(local) /
                                    static_cast<double>(peers));
  const double outside =
      groups > 1 ? tokens * h * elementBytes * reached * (groups - 1) / groups
                 : 0;
  return concurrentLinksTime(inside, domainBandwidth(peers, 1) * eff, outside,
                             cluster.scaleOutBandwidth * eff) +
         cluster.latency;
}

double CostModel::p2pLinkTime(bool inside, int64_t stride, double bytes) const {
  const Efficiency &eff = cluster.efficiency;
  const double bandwidth =
      inside ? domainBandwidth(2, stride) * eff.domainCollective *
                   messageShare(bytes, eff.domainHalfBytes)
             : cluster.scaleOutBandwidth * eff.scaleOutCollective *
                   messageShare(bytes, eff.scaleOutHalfBytes);
  return bytes / bandwidth + cluster.latency;
}

double CostModel::p2pTime(const Layout &layout, double bytes) const {
  if (layout.pp <= 1)
    return 0;
  const int64_t stride = layout.tp * layout.cp * layout.dp;
  return p2pLinkTime(membersPerDomain(layout.pp, stride) > 1, stride, bytes);
}

std::vector<double> CostModel::p2pBoundaryTimes(const Layout &layout,
                                                double bytes) const {
  if (layout.pp <= 1)
    return {};
  // Megatron-Core orders ranks tp, cp, ep, dp, pp (pp outermost), so stage
  // p holds ranks from p x stride; the launcher places the group evenly,
  // `held` consecutive stages on each domain (membersPerDomain). Boundary
  // p -> p + 1 (and the last stage's back to the first, which interleaved
  // schedules use) crosses domains where the two stages sit on different
  // ones.
  const int64_t stride = layout.tp * layout.cp * layout.dp;
  const int64_t held = membersPerDomain(layout.pp, stride);
  const double inside = p2pLinkTime(true, stride, bytes);
  const double outside = p2pLinkTime(false, stride, bytes);
  std::vector<double> times(static_cast<size_t>(layout.pp));
  for (int64_t p = 0; p < layout.pp; ++p)
    times[static_cast<size_t>(p)] =
        p / held == ((p + 1) % layout.pp) / held ? inside : outside;
  return times;
}
