//===- sched-json-plan-fuzzer.cpp - fuzzes the JSON runtime plan importer -===//
//
// Feeds arbitrary bytes to importJsonPlan (lib/Import/JsonPlan.h), the way
// `schedc verify x.json` and `sched-translate --import-json-plan` read a
// plan: the gates (nesting, object count), llvm::json, the plan reader and
// the IR it builds. Malformed input must end in a diagnostic and a null
// module, never in a crash.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzInput.h"
#include "lib/Import/JsonPlan.h"

using namespace sched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzInput input(data, size, "fuzz.json");
  (void)importJsonPlan(input.sourceMgr, &input.context);
  return 0;
}
