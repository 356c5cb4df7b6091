#!/usr/bin/env bash
# `vmem-limit.sh KB CMD...` runs CMD under `ulimit -v KB`, so a memory
# blow-up fails the test instead of swapping the machine.
# `vmem-limit.sh none KB CMD...` runs CMD without the cap: tools built with
# AddressSanitizer reserve terabytes of shadow address space and cannot start
# under one (lit.cfg.py picks this form for sanitized builds).
if [ "$1" = none ]; then
  shift 2
else
  ulimit -v "$1" || exit 2
  shift
fi
exec "$@"
