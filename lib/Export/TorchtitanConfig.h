//===- TorchtitanConfig.h - a plan as a torchtitan job config ---*- C++ -*-===//
//
// Writes a LaunchPlan as the TOML job config torchtitan's train.py reads
// (--job.config_file): [training] batch and sequence, [parallelism] degrees,
// pipeline schedule and the modules of each stage, [activation_checkpoint].
// A schedule PyTorch names is given by name; one it does not is run from
// the plan's PyTorch CSV (pipeline_parallel_schedule_csv). Refuses what
// torchtitan cannot run: pipeline replicas, expert layouts outside its
// device mesh, recomputation it has no mode for, MTP modules, offload.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_EXPORT_TORCHTITANCONFIG_H
#define LIB_EXPORT_TORCHTITANCONFIG_H

#include "lib/Export/LaunchPlan.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// PyTorch's name for `strategy`'s schedule (torch.distributed.pipelining
/// get_schedule_class), or "" when PyTorch has no class for it.
llvm::StringRef torchScheduleName(llvm::StringRef strategy);

/// Writes `plan` as a torchtitan TOML job config; `csvPath` is where the
/// plan's PyTorch CSV is, for a schedule PyTorch has no class for (empty:
/// none was written). Fails naming what torchtitan cannot state.
llvm::Error writeTorchtitanConfig(llvm::raw_ostream &os, const LaunchPlan &plan,
                                  llvm::StringRef csvPath);

} // namespace sched

#endif // LIB_EXPORT_TORCHTITANCONFIG_H
