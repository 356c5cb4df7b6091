//===- schedc.cpp - the schedc command-line interface ---------------------===//
//
// schedc generates, verifies, simulates and plans pipeline schedules. Each
// subcommand lives in its own file; this one parses and dispatches.
//
//===----------------------------------------------------------------------===//

#include "lib/Limits/DiagnosticExcerpt.h"
#include "tools/schedc/Commands.h"
#include "tools/schedc/FlagSuggestion.h"
#include "lib/Version/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace sched;

llvm::cl::OptionCategory sched::schedcOptions("schedc options");

int sched::usageError(const llvm::Twine &message) {
  // One line, whatever a message quotes: a flag's value or a description's
  // string was echoed whole (1 MB lines), and a newline in it split the
  // message.
  llvm::errs() << "schedc: error: " << clipMessage(message.str()) << "\n";
  return ExitUsage;
}

int sched::keepOutput(llvm::ToolOutputFile &file) {
  // A full disk shows when the last bytes leave the buffer.
  const bool standardOutput = file.outputFilename() == "-";
  if (standardOutput)
    file.os().flush();
  else
    file.os().close();
  if (std::error_code error = file.os().error()) {
    file.os().clear_error();
    return usageError("cannot write " +
                      (standardOutput ? "to standard output"
                                      : "'" + file.outputFilename() + "'") +
                      ": " + error.message());
  }
  file.keep();
  return ExitOk;
}

void sched::installDiagnosticPrinter(mlir::MLIRContext &context) {
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    llvm::raw_ostream &os = llvm::errs();
    os << "schedc: ";
    switch (diag.getSeverity()) {
    case mlir::DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case mlir::DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    default:
      os << "note: ";
      break;
    }
    os << diag << "\n";
    for (const mlir::Diagnostic &note : diag.getNotes())
      os << "schedc: note: " << note << "\n";
    return mlir::success();
  });
}

/// LLVM's words for a malformed value, and ours.
static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
    kValueErrors[] = {
        {"' value invalid for long argument!", "' is not a 64-bit integer"},
        {"' value invalid for floating point argument!", "' is not a number"},
        {"' is invalid value for boolean argument! Try 0 or 1",
         "' is not a boolean (true, false, 1 or 0)"},
};

/// Turns llvm::cl's first error line into ours: without the program name,
/// "for the --pp option: 'x' value invalid for long argument!" becomes
/// "--pp: 'x' is not a 64-bit integer".
static std::string rewordParseError(llvm::StringRef line,
                                    llvm::StringRef program) {
  line = line.trim();
  line.consume_front(program);
  line.consume_front(": ");
  std::string message;
  if (line.consume_front("for the ")) {
    auto [flag, what] = line.split(" option: ");
    message = (flag + ": ").str();
    line = what;
  }
  for (const auto &[theirs, ours] : kValueErrors)
    if (line.consume_back(theirs))
      return message + line.str() + ours.str();
  line.consume_back("!");
  return message + line.str();
}

/// Parses the command line. llvm::cl prints some errors (a malformed or
/// missing value) straight to stderr, not to the stream it is given, so
/// stderr goes to a temporary file while it parses. Returns the first error
/// in our words, or nothing when the command line is good.
static std::optional<std::string> parseCommandLine(int argc, char **argv) {
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  std::FILE *capture = std::tmpfile();
  const int savedStderr = capture ? ::dup(STDERR_FILENO) : -1;
  const bool capturing =
      savedStderr >= 0 && ::dup2(::fileno(capture), STDERR_FILENO) >= 0;
  const bool parsed = llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "schedc: generate, verify, simulate and plan pipeline-parallel "
      "training schedules\n\n"
      "  schedc generate --strategy 1f1b --pp 4 --microbatches 8\n"
      "  schedc verify schedule.csv --memory-limit 4\n"
      "  schedc show plan.json -o plan.svg\n"
      "  schedc plan --model deepseek-v3 --cluster h800-ib --devices 2048\n"
      "  schedc synthesize --pp 4 --microbatches 8 --memory-limit 4\n\n"
      "Run 'schedc <subcommand> --help' for the options of each.\n",
      &errorStream);
  std::string printed;
  if (capturing) {
    ::dup2(savedStderr, STDERR_FILENO);
    std::rewind(capture);
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof(buffer), capture))
      printed.append(buffer, n);
  }
  if (savedStderr >= 0)
    ::close(savedStderr);
  if (capture)
    std::fclose(capture);
  if (parsed) {
    llvm::errs() << printed;
    return std::nullopt;
  }
  llvm::StringRef first = llvm::StringRef(printed).trim();
  if (first.empty())
    first = llvm::StringRef(errors).trim();
  if (first.empty())
    return std::string("cannot parse the command line; try 'schedc --help'");
  std::string message = rewordParseError(first.split('\n').first,
                                         llvm::sys::path::filename(argv[0]));
  // An unknown flag: what was meant (FlagSuggestion.h).
  llvm::StringRef unknown(message);
  if (unknown.consume_front("Unknown command line argument '")) {
    llvm::StringRef command =
        argc > 1 && !llvm::StringRef(argv[1]).starts_with("-") ? argv[1] : "";
    return unknownFlagMessage(unknown.split('\'').first, command);
  }
  return message;
}

/// Runs the subcommand the command line names.
static int runSubcommand() {
  if (generateCommand)
    return runGenerate();
  if (verifyCommand)
    return runVerify();
  if (simulateCommand)
    return runSimulate();
  if (showCommand)
    return runShow();
  if (planCommand)
    return runPlan();
  if (synthesizeCommand)
    return runSynthesize();
  return usageError("no subcommand given; try 'schedc --help'");
}

/// Keeps freed memory in the process for the next allocation. glibc maps
/// each block over 32 MB (a schedule of a million actions, the simulator's
/// event table) afresh and unmaps it on free, and trims the heap's top
/// whenever 128 KB is free there: the planner, which builds, simulates and
/// frees such schedules one candidate after another, spent a third of its
/// CPU time on the page faults of memory it had just returned (the 2^40-token
/// plan: 437,000 faults and 2.8 s of system time; 104,000 and 0.7 s kept).
/// The peak is the same: what is kept is reused, not added to.
static void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

/// Backs the heap with transparent huge pages where the kernel grants them
/// on request (`madvise` mode, as here): glibc does so only when its
/// `glibc.malloc.hugetlb=1` tunable is set at startup, so schedc sets it and
/// runs itself again, once. The planner builds, simulates and proves
/// schedules of millions of actions, and Z3 grows its term tables to match:
/// with 4 KB pages the first touch of each page was a fault (Llama 3 405B
/// on 256 H100s: 137,000 faults, about a tenth of its CPU time; DeepSeek-V3
/// at 2^40 tokens: 653,000 and a fifth); with 2 MB pages, about 1,000 and
/// 2,500. Nothing it computes changes. Only `schedc plan` does so: running
/// again loads the tool's libraries twice, about 17 ms, which the other
/// subcommands' common small inputs would pay for nothing. A tunable the
/// caller set, a sanitizer build (its own allocator) or a failed exec
/// leaves things as they are.
static void useHugePages(int argc, char **argv) {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) &&                    \
    !defined(__SANITIZE_THREAD__)
  if (argc < 2 || std::strcmp(argv[1], "plan") != 0)
    return;
  constexpr const char *kTunable = "glibc.malloc.hugetlb";
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, kTunable))
    return;
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : "";
  value += std::string(kTunable) + "=1";
  if (setenv("GLIBC_TUNABLES", value.c_str(), /*overwrite=*/1) != 0)
    return;
  // The path, not /proc/self/exe itself: under valgrind that names the
  // tool, while reading the link gives the program.
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length > 0) {
    self[length] = '\0';
    execv(self, argv);
  }
  // Still here: run as is, and keep the environment as it was.
  if (tunables)
    setenv("GLIBC_TUNABLES", tunables, 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argc;
  (void)argv;
#endif
}

int main(int argc, char **argv) {
  useHugePages(argc, argv);
  keepFreedMemory();
  llvm::InitLLVM initLLVM(argc, argv);
  installVersionPrinter("schedc");
  for (llvm::cl::SubCommand *command :
       {&llvm::cl::SubCommand::getTopLevel(), &generateCommand, &verifyCommand,
        &simulateCommand, &showCommand, &planCommand,
        &synthesizeCommand})
    llvm::cl::HideUnrelatedOptions(schedcOptions, *command);
  if (std::optional<std::string> error = parseCommandLine(argc, argv))
    return usageError(*error);
  const int status = runSubcommand();
  // Standard output that could not be written (a full disk, /dev/full)
  // is a usage error, not a verdict; LLVM would otherwise abort at exit.
  llvm::outs().flush();
  if (std::error_code error = llvm::outs().error()) {
    llvm::outs().clear_error();
    return usageError("cannot write to standard output: " + error.message());
  }
  return status;
}
