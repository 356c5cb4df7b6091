//===- ErrorBands.cpp - how far to trust a prediction ---------------------===//

#include "lib/Planner/ErrorBands.h"

#include "lib/CostModel/Efficiency.h"

#include "llvm/Support/FormatVariadic.h"

using namespace sched;

/// The class fields, from the one dropped first.
static constexpr int kClassFields = 4;

std::string ErrorClass::key(int level) const {
  const std::string *fields[kClassFields] = {&stack, &kind, &generation,
                                             &context};
  // Level 1 drops the stack, 2 also the context, 3 also the generation,
  // 4 everything: the stack is the least populated field, the kind the
  // most telling.
  static constexpr int kDropOrder[kClassFields] = {0, 3, 2, 1};
  bool dropped[kClassFields] = {false, false, false, false};
  for (int i = 0; i < level && i < kClassFields; ++i)
    dropped[kDropOrder[i]] = true;
  std::string out;
  for (int f = 0; f < kClassFields; ++f) {
    if (f > 0)
      out += '/';
    out += dropped[f] ? std::string("*") : *fields[f];
  }
  return out;
}

llvm::json::Object ErrorClass::toJson() const {
  return llvm::json::Object{{"stack", stack},
                            {"kind", kind},
                            {"generation", generation},
                            {"context", context},
                            {"key", key()}};
}

ErrorClass sched::errorClassOf(const CostModel &model) {
  const TrainingSpec &t = model.getTraining();
  ErrorClass c;
  c.stack = t.stack.empty() ? "none" : t.stack;
  c.kind = model.getModel().moe ? "moe" : "dense";
  c.generation = deviceGeneration(model.getCluster().deviceName).str();
  c.context = t.seqLen <= 8192 ? "8k" : t.seqLen <= 32768 ? "32k" : "long";
  return c;
}

llvm::json::Object ErrorBand::toJson(double stepTime, double tflops) const {
  if (!known)
    return llvm::json::Object{{"known", false}};
  return llvm::json::Object{
      {"known", true},
      {"basis", basis},
      {"runs", runs},
      {"exact_runs", exactRuns},
      {"validated", validated()},
      {"error_low", low},
      {"error_high", high},
      {"step_time_s", llvm::json::Array{stepLow(stepTime), stepHigh(stepTime)}},
      {"tflops_per_device",
       llvm::json::Array{tflops / (1 + high), tflops / (1 + low)}}};
}

/// The largest band table: real ones hold a few dozen classes.
static constexpr size_t kMaxBandTableBytes = size_t(1) << 20;

llvm::Expected<ErrorBandTable> sched::parseErrorBandTable(llvm::StringRef text) {
  if (text.size() > kMaxBandTableBytes)
    return llvm::createStringError("error band table over 1 MiB");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return json.takeError();
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return llvm::createStringError("error band table: expected an object");
  ErrorBandTable table;
  if (std::optional<llvm::StringRef> source = root->getString("source"))
    table.source = source->str();
  const llvm::json::Object *classes = root->getObject("classes");
  if (!classes)
    return llvm::createStringError("error band table: no 'classes' object");
  for (const auto &[key, value] : *classes) {
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<int64_t> runs = entry ? entry->getInteger("runs") : std::nullopt;
    std::optional<double> low = entry ? entry->getNumber("low") : std::nullopt;
    std::optional<double> high = entry ? entry->getNumber("high") : std::nullopt;
    if (!runs || *runs < 1 || !low || !high || *low > *high || *low <= -1)
      return llvm::createStringError(
          "error band table: class '" + key.str() +
          "' needs runs >= 1 and low <= high, low > -1");
  }
  table.classes = *classes;
  if (const llvm::json::Object *cmp = root->getObject("comparison")) {
    for (const auto &[key, value] : *cmp) {
      const llvm::json::Object *entry = value.getAsObject();
      std::optional<int64_t> pairs =
          entry ? entry->getInteger("pairs") : std::nullopt;
      std::optional<double> spread =
          entry ? entry->getNumber("spread") : std::nullopt;
      if (!pairs || *pairs < 1 || !spread || *spread < 0)
        return llvm::createStringError(
            "error band table: comparison '" + key.str() +
            "' needs pairs >= 1 and spread >= 0");
    }
    table.comparison = *cmp;
  }
  return table;
}

/// The entry of the most specific class of `errorClass` in `table` whose
/// `count` field reaches kMinBandRuns (the coarsest one with any count:
/// it is all there is), and its key.
static std::pair<const llvm::json::Object *, std::string>
mostSpecific(const llvm::json::Object &table, const ErrorClass &errorClass,
             llvm::StringRef count) {
  for (int level = 0; level <= kClassFields; ++level) {
    const std::string key = errorClass.key(level);
    const llvm::json::Object *entry = table.getObject(key);
    const int64_t n = entry ? entry->getInteger(count).value_or(0) : 0;
    if (n >= kMinBandRuns || (level == kClassFields && n > 0))
      return {entry, key};
  }
  return {nullptr, ""};
}

ErrorBand ErrorBandTable::bandFor(const ErrorClass &errorClass) const {
  ErrorBand band;
  if (const llvm::json::Object *exact = classes.getObject(errorClass.key(0)))
    band.exactRuns = exact->getInteger("runs").value_or(0);
  auto [entry, key] = mostSpecific(classes, errorClass, "runs");
  if (!entry)
    return band;
  band.known = true;
  band.basis = key;
  band.runs = *entry->getInteger("runs");
  band.low = *entry->getNumber("low");
  band.high = *entry->getNumber("high");
  return band;
}

ComparisonBand
ErrorBandTable::comparisonFor(const ErrorClass &errorClass) const {
  ComparisonBand band;
  auto [entry, key] = mostSpecific(comparison, errorClass, "pairs");
  if (!entry)
    return band;
  band.pairs = *entry->getInteger("pairs");
  band.spread = *entry->getNumber("spread");
  band.basis = key;
  return band;
}

static const ErrorBandTable &compiledTable() {
  static const ErrorBandTable table = [] {
    static constexpr const char kText[] =
#include "ErrorBands.inc"
        ;
    llvm::Expected<ErrorBandTable> parsed = parseErrorBandTable(kText);
    if (!parsed) {
      // The build checks the table (test/planner); an unreadable one
      // claims no band rather than a wrong one.
      llvm::consumeError(parsed.takeError());
      return ErrorBandTable();
    }
    return std::move(*parsed);
  }();
  return table;
}

ErrorBand sched::errorBandFor(const ErrorClass &errorClass) {
  return compiledTable().bandFor(errorClass);
}

ComparisonBand sched::comparisonBandFor(const ErrorClass &errorClass) {
  return compiledTable().comparisonFor(errorClass);
}

std::string sched::errorBandSource() { return compiledTable().source; }
