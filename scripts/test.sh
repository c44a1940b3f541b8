#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests, the C conformance tests, the ABI and
# generator checks. Builds first. The last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prepare.sh
make -s PYTHON="$CACHE/gen/bin/python" >/dev/null
exec "$CACHE/gen/bin/python" tests/run.py --prefix "$PWD/build" --cache "$CACHE" "$@"
