#!/usr/bin/env python3
"""Writes a libFuzzer seed corpus from the test suite's inputs.

mlir: every test/**/*.mlir, split at `// -----` lines, comment lines
dropped. csv: every test/**/*.csv. json: every test/**/*.json and every
`;--- NAME.json` section of a split-file test (plans and descriptions).
options: every pass option string of a RUN line (`--sched-x=a=1 b=2`,
`sched-x{a=1 b=2}`), after a byte naming the pass in the order of
sched-pass-options-fuzzer.cpp's list. efficiency: the `efficiency` object of
every json seed that has one. Each seed is named by its SHA-1, so
duplicates collapse and a rerun rewrites the same files.
"""

import argparse
import hashlib
import json
import pathlib
import re
import sys
from typing import Iterator


def mlir_seeds(tests: pathlib.Path) -> Iterator[str]:
    for path in sorted(tests.rglob("*.mlir")):
        text = path.read_text()
        for chunk in re.split(r"^// -----.*$", text, flags=re.MULTILINE):
            code = [line for line in chunk.splitlines()
                    if not line.lstrip().startswith("//")]
            yield "\n".join(code).strip() + "\n"


def csv_seeds(tests: pathlib.Path) -> Iterator[str]:
    for path in sorted(tests.rglob("*.csv")):
        yield path.read_text()


def json_seeds(tests: pathlib.Path) -> Iterator[str]:
    for path in sorted(tests.rglob("*.json")):
        yield path.read_text()
    for path in sorted(tests.rglob("*.test")):
        sections = re.split(r"^;--- (\S+)$", path.read_text(),
                            flags=re.MULTILINE)
        for name, body in zip(sections[1::2], sections[2::2]):
            if name.endswith(".json"):
                yield body


# The passes of sched-pass-options-fuzzer.cpp, in its order.
FUZZED_PASSES = [
    "sched-lower-gpipe", "sched-lower-1f1b", "sched-lower-interleaved-1f1b",
    "sched-lower-looped-bfs", "sched-lower-zb-h1", "sched-lower-zb-h2",
    "sched-lower-interleaved-zb", "sched-lower-zb-v", "sched-lower-v-half",
    "sched-lower-v-min", "sched-lower-dualpipe-v", "sched-lower-dualpipe",
    "sched-lower-no-pp", "sched-lower-combined-1f1b", "sched-synthesize",
    "sched-legalize-aux-loss", "sched-generate-verify", "sched-verify",
    "sched-insert-p2p", "sched-assign-buffers", "sched-insert-collectives",
    "sched-simulate",
]


def options_seeds(tests: pathlib.Path) -> Iterator[str]:
    flag = re.compile(r"--(sched-[a-z0-9-]+)=(?:'([^']*)'|\"([^\"]*)\"|(\S+))")
    nested = re.compile(r"(sched-[a-z0-9-]+)\{([^{}]*)\}")
    for path in sorted(tests.rglob("*")):
        if path.suffix not in (".mlir", ".test"):
            continue
        for line in path.read_text(errors="replace").splitlines():
            if "RUN:" not in line:
                continue
            found = [(m.group(1), next(g for g in m.groups()[1:] if g is not None))
                     for m in flag.finditer(line)]
            found += [(m.group(1), m.group(2)) for m in nested.finditer(line)]
            for name, options in found:
                if name in FUZZED_PASSES:
                    yield chr(FUZZED_PASSES.index(name)) + options


def efficiency_seeds(tests: pathlib.Path) -> Iterator[str]:
    for text in json_seeds(tests):
        try:
            document = json.loads(text)
        except ValueError:
            continue
        if isinstance(document, dict) and "efficiency" in document:
            yield json.dumps(document["efficiency"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["mlir", "csv", "json", "options",
                                         "efficiency"],
                        help="which inputs")
    parser.add_argument("tests", type=pathlib.Path, help="the test/ folder")
    parser.add_argument("out", type=pathlib.Path, help="corpus folder to fill")
    args = parser.parse_args()
    if not args.tests.is_dir():
        print(f"seed-corpus.py: error: no folder '{args.tests}'",
              file=sys.stderr)
        return 2
    read = {"mlir": mlir_seeds, "csv": csv_seeds, "json": json_seeds,
            "options": options_seeds,
            "efficiency": efficiency_seeds}[args.kind]
    seeds = read(args.tests)
    args.out.mkdir(parents=True, exist_ok=True)
    names = set()
    for seed in seeds:
        if not seed.strip():
            continue
        name = hashlib.sha1(seed.encode()).hexdigest()
        (args.out / name).write_text(seed)
        names.add(name)
    print(f"{len(names)} {args.kind} seeds in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
