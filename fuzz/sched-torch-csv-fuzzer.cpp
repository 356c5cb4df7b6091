//===- sched-torch-csv-fuzzer.cpp - fuzzes the PyTorch CSV importer -------===//
//
// Feeds arbitrary bytes to importTorchCsv, the way `schedc verify x.csv`
// reads a file: the flavour follows torchCsvHasComms. Malformed input must
// end in a diagnostic and a null module, never in a crash.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzInput.h"
#include "lib/Import/TorchCsv.h"

using namespace sched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzInput input(data, size, "fuzz.csv");
  TorchCsvOptions options;
  const bool comms = torchCsvHasComms(
      input.sourceMgr.getMemoryBuffer(input.sourceMgr.getMainFileID())
          ->getBuffer());
  options.flavour =
      comms ? TorchCsvFlavour::ComputeAndComms : TorchCsvFlavour::Compute;
  (void)importTorchCsv(input.sourceMgr, &input.context, options);
  return 0;
}
