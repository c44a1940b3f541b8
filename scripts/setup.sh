#!/usr/bin/env bash
# Set up a fresh machine for Weft: system packages, the Python environments the build and the
# comparisons use (all under ~/.cache/weft, never in the repo), then build Weft and run the
# hello example on 4 ranks. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prepare.sh

make -s PYTHON="$CACHE/gen/bin/python"
build/bin/mpicc -o build/hello examples/hello.c
build/bin/mpiexec -n 4 build/hello
