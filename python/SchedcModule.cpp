//===- SchedcModule.cpp - the _schedc Python extension --------------------===//
//
// Binds lib/Api to Python: schedules, reports, violations and metrics as
// objects, failures as ValueError. schedc/__init__.py turns Python inputs
// (CSV text, pipeline_order dicts) into these calls.
//
//===----------------------------------------------------------------------===//

#include "lib/Api/Api.h"
#include "lib/Generate/Strategy.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

namespace py = pybind11;
using namespace sched;

/// The value of `expected`, or a ValueError with its message.
template <typename T> static T orThrow(llvm::Expected<T> expected) {
  if (!expected)
    throw py::value_error(llvm::toString(expected.takeError()));
  return std::move(*expected);
}

static std::string reprFinding(const api::Finding &f) {
  std::ostringstream os;
  os << "Violation(kind='" << f.kind << "', rank=" << f.rank
     << ", position=" << f.position << ", step=" << f.step << ", message='"
     << f.message << "')";
  return os.str();
}

PYBIND11_MODULE(_schedc, m) {
  m.doc() = "schedc: generate, verify and simulate pipeline schedules";

  py::class_<api::ScheduleSource>(m, "Schedule",
                                  "A pipeline schedule: ranks of actions")
      .def_property_readonly(
          "num_stages",
          [](const api::ScheduleSource &s) { return s.schedule.numStages; })
      .def_property_readonly("num_microbatches",
                             [](const api::ScheduleSource &s) {
                               return s.schedule.numMicrobatches;
                             })
      .def_property_readonly(
          "num_ranks",
          [](const api::ScheduleSource &s) { return s.schedule.ranks.size(); })
      .def_readonly("name", &api::ScheduleSource::name)
      .def(
          "to_csv",
          [](const api::ScheduleSource &s, bool comms) {
            return orThrow(api::toTorchCsv(s, comms));
          },
          py::arg("comms") = true,
          "The PyTorch pipelining CSV (with SEND/RECV cells when comms)")
      .def(
          "_pipeline_order",
          [](const api::ScheduleSource &s, bool comms) {
            return orThrow(api::toPipelineOrder(s, comms));
          },
          py::arg("comms") = true)
      .def("__repr__", [](const api::ScheduleSource &s) {
        std::ostringstream os;
        os << "Schedule(name='" << s.name
           << "', ranks=" << s.schedule.ranks.size()
           << ", stages=" << s.schedule.numStages
           << ", microbatches=" << s.schedule.numMicrobatches << ")";
        return os.str();
      });

  py::class_<api::Finding>(m, "Violation",
                           "A violation of the verifier's contract")
      .def_readonly("kind", &api::Finding::kind)
      .def_readonly("rank", &api::Finding::rank)
      .def_readonly("position", &api::Finding::position)
      .def_readonly("step", &api::Finding::step)
      .def_readonly("action", &api::Finding::action)
      .def_readonly("message", &api::Finding::message)
      .def_readonly("notes", &api::Finding::notes)
      .def("__repr__", &reprFinding);

  py::class_<api::Metrics>(m, "Metrics", "What the list simulation measured")
      .def_readonly("makespan", &api::Metrics::makespan)
      .def_readonly("bubble_ratio", &api::Metrics::bubbleRatio)
      .def_readonly("peak_activations", &api::Metrics::peakActivations)
      .def("__repr__", [](const api::Metrics &metrics) {
        std::ostringstream os;
        os << "Metrics(makespan=" << metrics.makespan << ")";
        return os.str();
      });

  py::class_<api::Report>(m, "Report", "The verdict on a schedule")
      .def_readonly("verdict", &api::Report::verdict)
      .def_property_readonly("ok", &api::Report::verified)
      .def_readonly("violations", &api::Report::violations)
      .def_readonly("unknown_reason", &api::Report::unknownReason)
      .def_readonly("peak_memory", &api::Report::peakMemory)
      .def_readonly("memory_unit", &api::Report::memoryUnit)
      .def_readonly("metrics", &api::Report::metrics)
      .def_readonly("simulation_error", &api::Report::simulationError)
      .def("__bool__", &api::Report::verified)
      .def("__repr__", [](const api::Report &report) {
        return "Report(verdict='" + report.verdict +
               "', violations=" + std::to_string(report.violations.size()) +
               ")";
      });

  py::class_<api::PlannedCandidate>(m, "Candidate",
                                    "A layout and schedule the planner rated")
      .def_readonly("dp", &api::PlannedCandidate::dp)
      .def_readonly("tp", &api::PlannedCandidate::tp)
      .def_readonly("pp", &api::PlannedCandidate::pp)
      .def_readonly("vpp", &api::PlannedCandidate::vpp)
      .def_readonly("ep", &api::PlannedCandidate::ep)
      .def_readonly("cp", &api::PlannedCandidate::cp)
      .def_readonly("zero", &api::PlannedCandidate::zero)
      .def_readonly("recompute", &api::PlannedCandidate::recompute)
      .def_readonly("microbatch_size", &api::PlannedCandidate::microbatchSize)
      .def_readonly("microbatches", &api::PlannedCandidate::microbatches)
      .def_readonly("strategy", &api::PlannedCandidate::strategy)
      .def_readonly("verdict", &api::PlannedCandidate::verdict)
      .def_readonly("step_time", &api::PlannedCandidate::stepTime)
      .def_readonly("mfu", &api::PlannedCandidate::mfu)
      .def_readonly("bubble_ratio", &api::PlannedCandidate::bubbleRatio)
      .def_readonly("tokens_per_second_per_device",
                    &api::PlannedCandidate::tokensPerSecondPerDevice)
      .def_readonly("peak_memory", &api::PlannedCandidate::peakMemory)
      .def_readonly("memory_limit", &api::PlannedCandidate::memoryLimit)
      .def("__repr__", [](const api::PlannedCandidate &c) {
        std::ostringstream os;
        os << "Candidate(dp=" << c.dp << ", tp=" << c.tp << ", pp=" << c.pp
           << ", vpp=" << c.vpp << ", ep=" << c.ep << ", cp=" << c.cp
           << ", zero=" << c.zero << ", recompute='" << c.recompute
           << "', microbatch_size=" << c.microbatchSize << ", strategy='"
           << c.strategy << "', step_time=" << c.stepTime << ")";
        return os.str();
      });

  py::class_<api::PlanReport>(m, "Plan", "What the planner found")
      .def_readonly("ranked", &api::PlanReport::ranked)
      .def_readonly("recommended_index", &api::PlanReport::recommended)
      .def_property_readonly(
          "recommended",
          [](const api::PlanReport &r) -> std::optional<api::PlannedCandidate> {
            if (r.recommended < 0 ||
                static_cast<size_t>(r.recommended) >= r.ranked.size())
              return std::nullopt;
            return r.ranked[r.recommended];
          })
      .def_readonly("reason", &api::PlanReport::reason)
      .def_readonly("best_without_pp", &api::PlanReport::bestWithoutPipeline)
      .def_readonly("best_with_pp", &api::PlanReport::bestWithPipeline)
      .def_readonly("considered", &api::PlanReport::considered)
      .def_readonly("written", &api::PlanReport::written)
      .def_readonly("refused", &api::PlanReport::refused);

  m.def(
      "_plan",
      [](const std::string &model, const std::string &cluster, int64_t devices,
         std::optional<int64_t> globalBatchTokens,
         std::optional<int64_t> globalBatch, std::optional<int64_t> seqLen,
         const std::string &precision, const std::string &strategy, int top,
         const std::string &layout, std::optional<int> zero,
         const std::string &recompute, std::optional<int64_t> microbatchSize,
         const std::string &stack, const std::string &writePlan,
         const std::string &emit) {
        api::PlanRequest request;
        request.model = model;
        request.cluster = cluster;
        request.devices = devices;
        request.globalBatchTokens = globalBatchTokens;
        request.globalBatch = globalBatch;
        request.seqLen = seqLen;
        request.precision = precision;
        request.strategy = strategy;
        request.top = top;
        request.layout = layout;
        request.zero = zero;
        request.recompute = recompute;
        request.microbatchSize = microbatchSize;
        request.stack = stack;
        request.writePlan = writePlan;
        request.emit = emit;
        py::gil_scoped_release release;
        return orThrow(api::plan(request));
      },
      py::arg("model"), py::arg("cluster"), py::arg("devices"),
      py::arg("global_batch_tokens"), py::arg("global_batch"),
      py::arg("seq_len"), py::arg("precision"), py::arg("strategy"),
      py::arg("top"), py::arg("layout"), py::arg("zero"),
      py::arg("recompute"), py::arg("microbatch_size"), py::arg("stack"),
      py::arg("write_plan"), py::arg("emit"));

  m.def("strategies", [] {
    std::vector<std::string> names;
    const std::string all = strategyNames();
    llvm::StringRef rest = all;
    while (!rest.empty()) {
      auto [name, next] = rest.split(',');
      names.push_back(name.trim().str());
      rest = next;
    }
    return names;
  });

  m.def(
      "_generate",
      [](const std::string &strategy, int64_t pp, int64_t microbatches,
         int64_t vpp, const std::string &cost, bool transfers) {
        api::PipelineRequest request;
        request.strategy = strategy;
        request.pp = pp;
        request.microbatches = microbatches;
        request.vpp = vpp;
        request.cost = cost;
        request.transfers = transfers;
        py::gil_scoped_release release;
        return orThrow(api::generate(request));
      },
      py::arg("strategy"), py::arg("pp"), py::arg("microbatches"),
      py::arg("vpp"), py::arg("cost"), py::arg("transfers"));

  m.def(
      "_read_csv",
      [](const std::string &text, std::optional<int64_t> stages,
         std::optional<int64_t> microbatches) {
        return orThrow(api::readTorchCsvText(text, stages, microbatches));
      },
      py::arg("text"), py::arg("stages"), py::arg("microbatches"));

  m.def(
      "_read_plan",
      [](const std::string &text) {
        return orThrow(api::readJsonPlanText(text));
      },
      py::arg("text"));

  m.def(
      "_read_pipeline_order",
      [](const std::vector<std::vector<std::string>> &order,
         std::optional<int64_t> stages, std::optional<int64_t> microbatches) {
        return orThrow(api::readPipelineOrder(order, stages, microbatches));
      },
      py::arg("order"), py::arg("stages"), py::arg("microbatches"));

  m.def(
      "_check",
      [](const api::ScheduleSource &source, const std::string &p2p,
         std::optional<double> memoryLimit, const std::string &memoryLimitText,
         double timeout, const std::string &cost) {
        api::CheckOptions options;
        options.p2p = p2p;
        options.memoryLimit = memoryLimit;
        options.memoryLimitText = memoryLimitText;
        options.timeoutSeconds = timeout;
        options.cost = cost;
        py::gil_scoped_release release;
        return orThrow(api::check(source, options));
      },
      py::arg("source"), py::arg("p2p"), py::arg("memory_limit"),
      py::arg("memory_limit_text"), py::arg("timeout"), py::arg("cost"));

  m.def(
      "_simulate",
      [](const api::ScheduleSource &source, const std::string &cost) {
        py::gil_scoped_release release;
        return orThrow(api::simulate(source, cost));
      },
      py::arg("source"), py::arg("cost"));
}
