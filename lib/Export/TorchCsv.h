//===- TorchCsv.h - export PyTorch pipelining CSV schedules -----*- C++ -*-===//
//
// Writes a schedule in the CSV that torch.distributed.pipelining reads
// with _load_csv and writes with _dump_csv: a row per rank, a cell per
// action, cells comma-separated.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_EXPORT_TORCHCSV_H
#define LIB_EXPORT_TORCHCSV_H

#include "lib/Schedule/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace sched {

/// Which actions the CSV carries.
enum class TorchCsvContent : uint8_t {
  /// F, B, I, W, overlaps and UNSHARD/RESHARD/REDUCE_GRAD; transfers of the
  /// schedule are left out.
  Compute,
  /// The same plus a SEND_F/RECV_F/SEND_B/RECV_B cell per transfer. Members
  /// of a p2p group become cells of their own: PyTorch's runtime issues
  /// each cell alone, and its sends do not block.
  ComputeAndComms,
};

/// The cell text of one action: `{stage}{F|B|I|W}{mb}`,
/// `{stage}{SEND_F|RECV_F|SEND_B|RECV_B}{mb}` or
/// `{stage}{UNSHARD|RESHARD|REDUCE_GRAD}`; empty for an action the format
/// cannot say (collectives, the optimizer step).
std::string torchCsvCell(const Action &action);

/// Writes `schedule` as CSV: row k is the rank with id k (an empty row for
/// an id with no program). Fails when an action has no CSV spelling, an
/// overlap is not one F with one B or I, or rank ids are negative or too
/// sparse to be rows.
llvm::Error writeTorchCsv(llvm::raw_ostream &os, const Schedule &schedule,
                          TorchCsvContent content);

} // namespace sched

#endif // LIB_EXPORT_TORCHCSV_H
