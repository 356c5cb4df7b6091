//===- MemoryBudgetOption.cpp - the memory-budget pass option -------------===//

#include "lib/Limits/MemoryBudgetOption.h"

using namespace sched;

llvm::Expected<int64_t>
sched::memoryBudgetBytes(const MemoryBudgetOption &option) {
  llvm::Expected<int64_t> bytes = parseMemorySize(option.str());
  if (bytes)
    return bytes;
  return llvm::createStringError("memory-budget: " +
                                 llvm::toString(bytes.takeError()));
}

void llvm::cl::parser<MemoryBudgetOption>::printOptionDiff(
    const Option &option, const MemoryBudgetOption &value,
    const OptVal &defaultValue, size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value.str();
  if (defaultValue.hasValue())
    outs().indent(2) << " (default: " << defaultValue.getValue().str() << ")";
  outs() << "\n";
}

void llvm::cl::parser<MemoryBudgetOption>::anchor() {}
