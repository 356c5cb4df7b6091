#!/usr/bin/env python3
"""Writes a libFuzzer seed corpus from the test suite's inputs.

mlir: every test/**/*.mlir, split at `// -----` lines, comment lines
dropped. csv: every test/**/*.csv. json: every test/**/*.json and every
`;--- NAME.json` section of a split-file test (plans and descriptions). Each seed is named by its SHA-1, so
duplicates collapse and a rerun rewrites the same files.
"""

import argparse
import hashlib
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["mlir", "csv", "json"],
                        help="which inputs")
    parser.add_argument("tests", type=pathlib.Path, help="the test/ folder")
    parser.add_argument("out", type=pathlib.Path, help="corpus folder to fill")
    args = parser.parse_args()
    if not args.tests.is_dir():
        print(f"seed-corpus.py: error: no folder '{args.tests}'",
              file=sys.stderr)
        return 2
    read = {"mlir": mlir_seeds, "csv": csv_seeds, "json": json_seeds}[args.kind]
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
