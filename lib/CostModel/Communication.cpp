//===- Communication.cpp - collectives on the links they cross ------------===//
//
// docs/cost-model.md, "Collectives on the links they cross": each
// collective is priced inside the high-bandwidth domain and across domains
// at the measured bus-bandwidth fraction of the link, reduced for small
// messages (the size at which the link's collectives reach half their
// large-message bandwidth is a measured figure of Efficiency.h), plus a
// latency per ring step.
//
//===----------------------------------------------------------------------===//

#include "lib/CostModel/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace sched;

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
  const double side = std::max(
      2.0, std::round(std::cbrt(static_cast<double>(cluster.domainSize))));
  const double span = static_cast<double>(size * stride);
  const double axes = span <= side ? 1 : span <= side * side ? 2 : 3;
  return cluster.domainBandwidth * axes / 3;
}

double CostModel::reduceScatterTime(double bytes, int64_t size,
                                    int64_t stride, double message) const {
  if (size <= 1 || bytes <= 0)
    return 0;
  if (message <= 0)
    message = bytes;
  const int64_t local = membersPerDomain(size, stride);
  // Domains the group spans; fractional when the domain size does not
  // divide the group (128 ranks over NVL72 racks span 1.78 of them).
  const double domains =
      static_cast<double>(size) / static_cast<double>(local);
  const Efficiency &eff = cluster.efficiency;
  double time = 0;
  if (local > 1)
    time += (static_cast<double>(local - 1) / local) * bytes /
                (domainBandwidth(local, stride) * eff.domainCollective *
                 messageShare(message, eff.domainHalfBytes)) +
            cluster.latency * static_cast<double>(local - 1);
  if (domains > 1)
    time += ((domains - 1) / domains) * (bytes / static_cast<double>(local)) /
                (cluster.scaleOutBandwidth * eff.scaleOutCollective *
                 messageShare(message / static_cast<double>(local),
                              eff.scaleOutHalfBytes)) +
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
      domains > 1
          ? tokens * h * elementBytes * reached * (domains - 1) / domains
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
  const Efficiency &eff = cluster.efficiency;
  const double bandwidth =
      inside ? domainBandwidth(2, stride) * eff.domainCollective *
                   messageShare(bytes, eff.domainHalfBytes)
             : cluster.scaleOutBandwidth * eff.scaleOutCollective *
                   messageShare(bytes, eff.scaleOutHalfBytes);
  return bytes / bandwidth + cluster.latency;
}
