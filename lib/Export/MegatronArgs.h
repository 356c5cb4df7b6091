//===- MegatronArgs.h - a plan as Megatron-Core's flags ---------*- C++ -*-===//
//
// Writes a LaunchPlan as the command-line flags of Megatron-LM's
// pretrain_gpt.py (Megatron-Core): parallel sizes, batch, the
// --pipeline-model-parallel-layout string (embedding `E`, decoder `t`, MTP
// `m` and loss `L` per stage, stages split by `|`), sharding, recompute and
// overlap. Refuses what Megatron-Core cannot run: schedules it does not
// have, V placement, pipeline replicas, saved-name recompute, offload.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_EXPORT_MEGATRONARGS_H
#define LIB_EXPORT_MEGATRONARGS_H

#include "lib/Export/LaunchPlan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// The --pipeline-model-parallel-layout string of `plan`'s stages, with
/// repeats folded: "Et*16|t*15|t*15|t*15mL".
std::string megatronLayout(const LaunchPlan &plan);

/// Writes `plan` as a bash array of Megatron-Core flags,
/// SCHEDC_MEGATRON_ARGS=( ... ), under a comment naming the plan; or fails
/// naming what Megatron-Core cannot state.
llvm::Error writeMegatronArgs(llvm::raw_ostream &os, const LaunchPlan &plan);

} // namespace sched

#endif // LIB_EXPORT_MEGATRONARGS_H
