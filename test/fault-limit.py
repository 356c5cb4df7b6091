#!/usr/bin/env python3
"""`fault-limit.py RATIO CMD...` runs CMD, then fails when it took more
minor page faults than RATIO times the pages of its peak resident set.

A process that reuses the memory it frees faults each page in about once
(a ratio near 1); one that hands big blocks back to the kernel and maps
them again faults them in on every reuse. `schedc plan` at 2^40 tokens
took 434,000 faults for a 462 MB peak (3.8x, a third of its CPU time in
the kernel) before tools/schedc/schedc.cpp kept freed memory (issue 31).
The count is the process's own, whatever else runs on the machine.
`fault-limit.py none RATIO CMD...` only runs CMD: sanitizers allocate
with allocators of their own (lit.cfg.py picks this form for them).
"""

import os
import resource
import subprocess
import sys


def main(argv):
    check = argv[0] != "none"
    if not check:
        argv = argv[1:]
    ratio = float(argv[0])
    status = subprocess.call(argv[1:])
    if not check or status != 0:
        return status
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    peak_pages = usage.ru_maxrss // page_kb
    if usage.ru_minflt > ratio * peak_pages:
        print(f"fault-limit.py: {argv[1]} took {usage.ru_minflt} minor page "
              f"faults for a peak of {peak_pages} pages, more than "
              f"{ratio:g} times the peak", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
