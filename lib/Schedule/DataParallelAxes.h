//===- DataParallelAxes.h - the mesh axes of data parallelism ---*- C++ -*-===//
//
// A plan runs once per data-parallel replica. The mesh names how: one axis
// `dp` (every replica alike), or hybrid sharding (HSDP) as `dp_replicate` x
// `dp_shard`, outermost first, replica d in shard group d div S at position
// d mod S (S the dp_shard size). Groups named after these axes span the
// replicas along them; every other group stays within one replica
// (docs/runtime-plan.md, "Data parallelism"). Header only: the dialect's
// verifier uses it too.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_SCHEDULE_DATAPARALLELAXES_H
#define LIB_SCHEDULE_DATAPARALLELAXES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace sched {

inline constexpr llvm::StringLiteral kDataParallelAxis = "dp";
inline constexpr llvm::StringLiteral kShardAxis = "dp_shard";
inline constexpr llvm::StringLiteral kReplicateAxis = "dp_replicate";

/// Which replicas a group of that name joins.
enum class ReplicaSpan : uint8_t {
  /// Its own replica only.
  None,
  /// Every replica (`dp`).
  All,
  /// The replicas of its shard group (`dp_shard`).
  Shard,
  /// Its position in every shard group (`dp_replicate`).
  Replicate,
};

inline ReplicaSpan replicaSpanOf(llvm::StringRef group) {
  if (group == kDataParallelAxis)
    return ReplicaSpan::All;
  if (group == kShardAxis)
    return ReplicaSpan::Shard;
  if (group == kReplicateAxis)
    return ReplicaSpan::Replicate;
  return ReplicaSpan::None;
}

/// How many replicas a group spanning `span` joins: every one for dp, the
/// S of a shard group for dp_shard, the dataParallel / S shard groups for
/// dp_replicate (S = `shardGroupSize`, 0 without hybrid sharding), 1 for
/// every other group. A sum along an axis of 1 changes nothing.
inline int64_t replicasAlong(ReplicaSpan span, int64_t dataParallel,
                             int64_t shardGroupSize) {
  switch (span) {
  case ReplicaSpan::All:
    return dataParallel;
  case ReplicaSpan::Shard:
    return shardGroupSize > 0 ? shardGroupSize : 1;
  case ReplicaSpan::Replicate:
    return shardGroupSize > 0 ? dataParallel / shardGroupSize : 1;
  case ReplicaSpan::None:
    break;
  }
  return 1;
}

/// Why mesh `axes` (name, size) do not describe data parallelism
/// consistently, or "": dp_shard and dp_replicate come together, in that
/// order, and never beside dp.
inline std::string
dataParallelAxesError(llvm::ArrayRef<std::pair<llvm::StringRef, int64_t>> axes) {
  int dp = -1, shard = -1, replicate = -1;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].first == kDataParallelAxis)
      dp = static_cast<int>(i);
    else if (axes[i].first == kShardAxis)
      shard = static_cast<int>(i);
    else if (axes[i].first == kReplicateAxis)
      replicate = static_cast<int>(i);
  }
  if ((shard < 0) != (replicate < 0))
    return "has axis '" +
           std::string(shard < 0 ? kReplicateAxis : kShardAxis) +
           "' without '" +
           std::string(shard < 0 ? kShardAxis : kReplicateAxis) +
           "': hybrid sharding needs both";
  if (shard >= 0 && dp >= 0)
    return "has axes 'dp' and 'dp_shard' x 'dp_replicate': data parallelism "
           "is one or the other";
  if (shard >= 0 && replicate > shard)
    return "names 'dp_shard' before 'dp_replicate': the replicas of one "
           "shard group are consecutive, so 'dp_replicate' is outer";
  return "";
}

} // namespace sched

#endif // LIB_SCHEDULE_DATAPARALLELAXES_H
