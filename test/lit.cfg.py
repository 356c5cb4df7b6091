# -*- Python -*-
# lit configuration of the schedc test suite.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "SCHEDC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".csv"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.schedc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.schedc_tools_dir, config.llvm_tools_dir]
tools = ["sched-opt", "sched-translate", "schedc", "SchedUnitTests"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.schedc_tools_dir, append_path=True)

# schedc plan wraps its prose at $COLUMNS (120 without it): the tests read
# each sentence on one line; schedc-plan-width.test checks the wrap at 120.
config.environment["COLUMNS"] = "100000"

# `%exit CMD` runs CMD and prints "exit status: N" after its output.
config.substitutions.append(
    ("%exit", "bash " + os.path.join(config.test_source_root, "exit-status.sh")))

# `%vmem-limit KB CMD...` runs CMD under `ulimit -v KB`, a cap on address
# space that turns a memory blow-up into a failing test. ASan reserves terabytes
# of shadow address space at start, so under sanitizers the cap is left off
# (the test still checks the output; ASan checks the accesses).
if config.schedc_sanitize:
    config.substitutions.append(("%vmem-limit", "bash " + os.path.join(
        config.test_source_root, "vmem-limit.sh") + " none"))
else:
    config.substitutions.append(("%vmem-limit", "bash " + os.path.join(
        config.test_source_root, "vmem-limit.sh")))

# `%cpu-limit SECONDS CMD...` runs CMD under `ulimit -t`: a cap on CPU time,
# not on the clock, so a test that guards a path against super-linear work
# holds however loaded the machine is. Sanitized tools run several times
# slower: their cap is ten times the figure.
config.substitutions.append(("%cpu-limit", "bash " + os.path.join(
    config.test_source_root, "cpu-limit.sh") +
    (" 10" if config.schedc_sanitize else " 1")))

# `%fault-limit RATIO CMD...` fails when CMD takes more minor page faults
# than RATIO times the pages of its peak resident set: memory freed and
# mapped again is faulted in again (test/fault-limit.py). A count, not a
# time; off under sanitizers, whose allocators are their own.
config.substitutions.append(("%fault-limit", "python3 " + os.path.join(
    config.test_source_root, "fault-limit.py") +
    (" none" if config.schedc_sanitize else "")))

# Tools built with sanitizers (make sanitize, docs/fuzzing.md): a report
# aborts, so `not` and `%exit` see a crash rather than an ordinary failure.
# Debian's LLVM is not instrumented; its allocators trip ASan's checks on
# memory that LLVM's headers poisoned, hence allow_user_poisoning=0. Options
# set in the environment come last and win.
if config.schedc_sanitize:
    sanitizer_defaults = {
        "ASAN_OPTIONS": "allow_user_poisoning=0:abort_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:abort_on_error=1",
    }
    for name, defaults in sanitizer_defaults.items():
        given = os.environ.get(name)
        config.environment[name] = defaults + (":" + given if given else "")

# Ways in for other programs (docs/embedding.md): Debian's stock mlir-opt
# with our plugin, the Python module on Debian's python3, and the installed
# package for the downstream example. Under sanitizers they are not built:
# an instrumented shared object cannot load into an uninstrumented mlir-opt
# or python3, and the example would link instrumented archives without the
# runtime; those tests say `UNSUPPORTED: sanitize`.
if config.schedc_sanitize:
    config.available_features.add("sanitize")
config.substitutions.append(
    ("%stock-mlir-opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(
    ("%sched-plugin", os.path.join(config.schedc_obj_root, "lib", "SchedPlugin.so")))
config.substitutions.append(
    ("%schedc-python", "env PYTHONPATH=" + os.path.join(config.schedc_obj_root, "python")
     + " /usr/bin/python3"))
config.substitutions.append(("%schedc-obj-root", config.schedc_obj_root))
# The project's version (CMake's project(VERSION)), which --version prints.
config.substitutions.append(("%schedc-version", config.schedc_version))
config.substitutions.append(("%schedc-src-root", config.schedc_src_root))
# The example's build goes through ccache, as ours does, when there is one.
config.substitutions.append(
    ("%ccache-launcher",
     "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" if shutil.which("ccache") else ""))
for name in ["CCACHE_BASEDIR", "CCACHE_DIR"]:
    if name in os.environ:
        config.environment[name] = os.environ[name]

# The torch.distributed executor (integrations/torch) runs with Debian's
# python3, which sees python3-torch (`make deps` installs it); tests that
# run it say `REQUIRES: torch`. `%run-plan` runs integrations/torch/run_plan.py,
# `%debian-python` that interpreter.
torch_python = "/usr/bin/python3"
try:
    probe = subprocess.run([torch_python, "-c", "import torch.distributed"],
                           capture_output=True, timeout=120)
    if probe.returncode == 0:
        config.available_features.add("torch")
except (OSError, subprocess.TimeoutExpired):
    pass
# PyTorch's own pipelining runtime (torch >= 2.4) runs our CSVs where it is
# installed (`REQUIRES: torch-pipelining`); Debian 12's 1.13 has none.
try:
    probe = subprocess.run(
        [torch_python, "-c",
         "import torch.distributed.pipelining.schedules as s; "
         "s._PipelineScheduleRuntime"], capture_output=True, timeout=120)
    if probe.returncode == 0:
        config.available_features.add("torch-pipelining")
except (OSError, subprocess.TimeoutExpired):
    pass
config.substitutions.append(("%run-csv", torch_python + " " + os.path.join(
    config.schedc_src_root, "integrations", "torch", "run_csv.py")))
config.substitutions.append(("%debian-python", torch_python))
config.substitutions.append(("%schedc-bin", config.schedc_tools_dir))
# A plan that runs may stall for seconds on a loaded machine; run_plan.py's
# 5 s deadlock default would call that a deadlock, so tests get 60 s (only
# a real deadlock waits it out), and tests that expect a deadlock name a
# short --timeout of their own, which comes later and wins (issue 31).
config.substitutions.append(("%run-plan", torch_python + " " + os.path.join(
    config.schedc_src_root, "integrations", "torch", "run_plan.py") +
    " --timeout 60"))

# Plans are checked against docs/runtime-plan.schema.json where Debian's
# python3-jsonschema is installed (`make deps`).
try:
    probe = subprocess.run([torch_python, "-c", "import jsonschema"],
                           capture_output=True, timeout=60)
    if probe.returncode == 0:
        config.available_features.add("jsonschema")
except (OSError, subprocess.TimeoutExpired):
    pass
