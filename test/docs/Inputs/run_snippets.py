"""Runs the snippets of a Markdown page as a reader would paste them.

Every ```sh block runs in bash (-e -o pipefail) and every ```python block in
python3, in the working directory, one after the other (later blocks see the
files earlier ones wrote). Every ```cpp or ```cmake block must start with a
"From: PATH" comment and the rest of it must appear verbatim in
SOURCE_ROOT/PATH. Other blocks (console, text, mlir) are shown only. Prints
what it ran; exits 1 at the first snippet that fails, after its output.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FROM = re.compile(r"^(?://|#) From: (\S+)\n")


def blocks(page: str) -> List[Tuple[str, str, int]]:
    """(language, text, line) of each fenced block."""
    return [(m.group(1), m.group(2), page.count("\n", 0, m.start()) + 1)
            for m in FENCE.finditer(page)]


def check_excerpt(text: str, line: int, source_root: Path) -> str:
    source = FROM.match(text)
    if not source:
        return f"line {line}: a cpp/cmake snippet must start with 'From: PATH'"
    path = source_root / source.group(1)
    if not path.is_file():
        return f"line {line}: {source.group(1)} does not exist"
    if text[source.end():] not in path.read_text():
        return f"line {line}: the snippet is not an excerpt of {source.group(1)}"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("page", type=Path, help="the Markdown page")
    parser.add_argument("source_root", type=Path,
                        help="where the paths of From: comments start")
    parser.add_argument("workdir", type=Path, help="where snippets run")
    args = parser.parse_args()
    counts = {"sh": 0, "python": 0, "excerpt": 0}
    for language, text, line in blocks(args.page.read_text()):
        if language in ("cpp", "cmake"):
            problem = check_excerpt(text, line, args.source_root)
            if problem:
                print(f"{args.page.name}:{problem}", file=sys.stderr)
                return 1
            counts["excerpt"] += 1
            continue
        if language == "sh":
            command = ["bash", "-e", "-o", "pipefail", "-c", text]
        elif language == "python":
            command = [sys.executable, "-c", text]
        else:
            continue
        result = subprocess.run(command, cwd=args.workdir, text=True,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        if result.returncode != 0:
            print(result.stdout, file=sys.stderr)
            print(f"{args.page.name}:{line}: the {language} snippet exited "
                  f"with {result.returncode}", file=sys.stderr)
            return 1
        counts[language] += 1
    print(f"ran {counts['sh']} sh and {counts['python']} python snippets; "
          f"checked {counts['excerpt']} excerpts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
