#!/usr/bin/env bash
# The CUDA checks of enqueue (issue #19, docs/enqueue.md): on a machine with a GPU and the
# CUDA runtime, runs the CUDA tests of tests/c/enqueue (cuda_*.c; elsewhere they SKIP) and
# bench/enqueue_cuda.c against the Weft installed under PREFIX, each step under its own
# timeout, and prints one line per test and the bench table.
#
#   scripts/cuda-check.sh [PREFIX (build)] [BINDIR]
#
# BINDIR: take the test and bench programs already compiled there (cuda_seed, cuda_coll,
# cuda_errors, enqueue_cuda, enqueue) instead of compiling them with PREFIX/bin/mpicc; for a
# GPU machine without a C compiler. Exit status 1 when a test failed or was skipped (on a
# GPU machine a skip means CUDA was not found: a failure of this check).
set -uo pipefail
cd "$(dirname "$0")/.."
PREFIX=$(realpath "${1:-build}")
BINDIR=${2:-}
export PATH="$PREFIX/bin:$PATH"
failed=0

step() { echo; echo "=== $*"; }

step "machine"
nvidia-smi -L 2>&1 || echo "(no nvidia-smi)"
ldconfig -p 2>/dev/null | grep -E 'libcudart\.so|libcuda\.so' || echo "(no libcudart in ldconfig)"
step "weft-info"
timeout 30 "$PREFIX/bin/weft-info" | grep -iE 'cuda|version' || true
if ! timeout 30 "$PREFIX/bin/weft-info" | grep -qE '^ *cuda +found'; then
    echo "weft-info: CUDA not found"
    failed=1
fi

if [ -z "$BINDIR" ]; then
    BINDIR=$(mktemp -d)
    step "compile into $BINDIR"
    for src in tests/c/enqueue/cuda_seed.c tests/c/enqueue/cuda_coll.c \
        tests/c/enqueue/cuda_errors.c bench/enqueue_cuda.c bench/enqueue.c; do
        name=$(basename "$src" .c)
        "$PREFIX/bin/mpicc" -O2 -Wall -Werror -Itests/c/include -Itests/c/enqueue "$src" \
            -o "$BINDIR/$name" || failed=1
    done
fi

# NAME RANKS PROGRAM: PASS (exit 0 and " No Errors"), SKIP (exit 77) or FAIL.
run_test() {
    local name=$1 ranks=$2 prog=$3 out rc
    local t0=$SECONDS
    out=$(timeout -k 5 90 "$PREFIX/bin/mpiexec" -n "$ranks" "$BINDIR/$prog" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^ No Errors$' <<<"$out"; then
        echo "PASS $name ($((SECONDS - t0))s)"
    elif [ $rc -eq 77 ]; then
        echo "SKIP $name: $(grep -m1 '^SKIP:' <<<"$out")"
        failed=1
    else
        echo "FAIL $name (exit $rc, $((SECONDS - t0))s)"
        failed=1
    fi
    echo "$out" | tail -n 40 | sed 's/^/    /'
}

step "tests"
run_test cuda_seed 2 cuda_seed
run_test cuda_coll_2 2 cuda_coll
run_test cuda_coll_4 4 cuda_coll
run_test cuda_errors 2 cuda_errors

step "bench: mpiexec -n 2 enqueue_cuda"
timeout -k 5 120 "$PREFIX/bin/mpiexec" -n 2 "$BINDIR/enqueue_cuda" || failed=1
step "bench: mpiexec -n 2 enqueue 20000 (host queue, same machine)"
timeout -k 5 120 "$PREFIX/bin/mpiexec" -n 2 "$BINDIR/enqueue" 20000 || failed=1

step "result: $([ $failed -eq 0 ] && echo all passed || echo FAILED)"
exit $failed
