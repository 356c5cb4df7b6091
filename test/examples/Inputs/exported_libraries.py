"""Checks that an installed schedc package exports every library it installs
headers for: each add_*library(Sched...) under lib/, passes/ and dialects/
is an imported Schedc:: target of SchedcTargets.cmake.

usage: exported_libraries.py SOURCE_ROOT PREFIX
"""
import pathlib
import re
import sys

source, prefix = map(pathlib.Path, sys.argv[1:3])
declared = set()
for root in ("lib", "passes", "dialects"):
    for cmake in (source / root).rglob("CMakeLists.txt"):
        declared |= set(re.findall(
            r"add_(?:llvm|mlir|mlir_dialect)_library\((Sched\w+)",
            cmake.read_text()))
targets = (prefix / "lib/cmake/schedc/SchedcTargets.cmake").read_text()
exported = set(re.findall(r"add_library\(Schedc::(\w+)", targets))
missing = sorted(declared - exported)
if missing:
    sys.exit("not exported: " + ", ".join(missing))
print(f"every library exported ({len(declared)})")
