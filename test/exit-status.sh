#!/usr/bin/env bash
# Runs a command and prints its exit status last, so lit tests can check
# the exact status with FileCheck: `%exit schedc ... 2>&1 | FileCheck`.
"$@"
echo "exit status: $?"
