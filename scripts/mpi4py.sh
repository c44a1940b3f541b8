#!/usr/bin/env bash
# mpi4py on Weft: builds mpi4py from its source distribution against Weft's mpicc into a venv
# under the cache (once; ~10 min on 2 cores), then runs mpi4py's own test suite under Weft's
# mpiexec at each process count given.
#
# Usage: scripts/mpi4py.sh [--prefix DIR] [--mpich] [--futures] [--install-only] [NP ...]  (default NP: 1 2)
#   --prefix DIR    Weft's install tree (default build/)
#   --mpich         run the same build on MPICH 5.0.2's standard-ABI library and mpiexec instead
#                   (the cached mpich venv): mpi4py is built against the standard ABI, so one build
#                   runs on either, which is how skip counts are compared
#   --futures       also run mpi4py.futures' own tests (demo/futures/test_futures.py of the
#                   source distribution): at 1 process (the pool spawns its workers) and at 2
#                   under `python -m mpi4py.futures`
#   --install-only  build the venv and fetch the tests, run nothing
# Per NP it prints mpi4py's summary and one line
#   mpi4py np=N: ran R, failures F, errors E, skipped S (T s)
# and exits 1 when a run failed, had failures or errors, or did not finish.
# Environment: WEFT_CACHE (default ~/.cache/weft), MPI4PY_TIMEOUT (seconds per run, default 900),
# MPI4PY_EXCLUDE (extra test-name patterns to exclude, space separated).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${WEFT_CACHE:-$HOME/.cache/weft}"
PREFIX="$PWD/build"
MPI4PY_VERSION=4.1.2
NUMPY_VERSION=2.4.6
VENV="$CACHE/mpi4py"
SRC="$CACHE/mpi4py-src/mpi4py-$MPI4PY_VERSION"
on_mpich=no
install_only=no
futures=no
nps=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="$(cd "$2" && pwd)"; shift 2 ;;
        --mpich) on_mpich=yes; shift ;;
        --install-only) install_only=yes; shift ;;
        --futures) futures=yes; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) nps+=("$1"); shift ;;
    esac
done
[ "${#nps[@]}" -gt 0 ] || nps=(1 2)

# The build: mpi4py compiled by Weft's mpicc (mpi.h is the standard ABI's), with numpy for the
# buffer tests. Rebuilt only when the venv lacks this version.
if ! "$VENV/bin/python" -c "import mpi4py, numpy, sys; sys.exit(mpi4py.__version__ != '$MPI4PY_VERSION')" 2>/dev/null; then
    [ -x "$PREFIX/bin/mpicc" ] || { echo "mpi4py.sh: $PREFIX/bin/mpicc is missing (run make)" >&2; exit 1; }
    echo "mpi4py.sh: building mpi4py $MPI4PY_VERSION against $PREFIX/bin/mpicc into $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "numpy==$NUMPY_VERSION"
    MPICC="$PREFIX/bin/mpicc" "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
        --no-binary mpi4py --no-cache-dir "mpi4py==$MPI4PY_VERSION"
fi
# The tests: mpi4py's test/ directory from the same source distribution.
if [ ! -f "$SRC/test/main.py" ]; then
    mkdir -p "$CACHE/mpi4py-src"
    "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --no-binary mpi4py \
        -d "$CACHE/mpi4py-src" "mpi4py==$MPI4PY_VERSION"
    tar -xzf "$CACHE/mpi4py-src/mpi4py-$MPI4PY_VERSION.tar.gz" -C "$CACHE/mpi4py-src"
fi
[ "$install_only" = yes ] && exit 0

if [ "$on_mpich" = yes ]; then
    libdir="$CACHE/mpich/lib"
    mpiexec=("$CACHE/mpich/bin/mpiexec")
else
    libdir="$PREFIX/lib"
    mpiexec=("$PREFIX/bin/mpiexec")
fi
# Every test module runs (dynamic processes included: test_spawn, test_dynproc and
# test_util_pool, mpi4py.futures' pool); MPI4PY_EXCLUDE leaves some out.
exclude=()
for pat in ${MPI4PY_EXCLUDE:-}; do exclude+=(-e "$pat"); done

status=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for np in "${nps[@]}"; do
    start=$(date +%s)
    set +e
    # LD_LIBRARY_PATH picks the MPI library at run time (it overrides the RUNPATH mpicc wrote).
    (cd "$work" && LD_LIBRARY_PATH="$libdir" timeout -k 10 "${MPI4PY_TIMEOUT:-900}" \
        "${mpiexec[@]}" -n "$np" "$VENV/bin/python" "$SRC/test/main.py" "${exclude[@]}") \
        > "$work/out.$np" 2>&1
    rc=$?
    set -e
    mkdir -p "$CACHE/mpi4py-logs" && cp "$work/out.$np" "$CACHE/mpi4py-logs/np$np.log"
    secs=$(( $(date +%s) - start ))
    # unittest's summary ("Ran N tests", "OK (skipped=S)" / "FAILED (failures=F, errors=E,
    # skipped=S)") from rank 0 and every other rank; the counts reported are rank 0's.
    grep -E "^(Ran [0-9]+ tests|OK|FAILED|\[[0-9]+@)" "$work/out.$np" | head -20 || true
    ran=$(grep -m1 -oE "^Ran [0-9]+" "$work/out.$np" | grep -oE "[0-9]+" || echo 0)
    last=$(grep -m1 -E "^(OK|FAILED)" "$work/out.$np" || echo "no summary")
    num() { echo "$last" | grep -oE "$1=[0-9]+" | grep -oE "[0-9]+" || echo 0; }
    failures=$(num failures); errors=$(num errors); skipped=$(num skipped)
    if [ "$rc" -ne 0 ] || [ "$last" = "no summary" ] || [ "$failures" -ne 0 ] || [ "$errors" -ne 0 ]; then
        status=1
        tail -60 "$work/out.$np"
    fi
    echo "mpi4py np=$np: ran $ran, failures $failures, errors $errors, skipped $skipped (${secs} s, exit $rc)"
done
if [ "$futures" = yes ]; then
    for run in "1" "2 -m mpi4py.futures"; do
        np=${run%% *}
        mod=(); [ "$run" != "$np" ] && mod=(${run#* })
        start=$(date +%s)
        set +e
        (cd "$work" && LD_LIBRARY_PATH="$libdir" timeout -k 10 "${MPI4PY_TIMEOUT:-900}" \
            "${mpiexec[@]}" -n "$np" "$VENV/bin/python" "${mod[@]}" "$SRC/demo/futures/test_futures.py") \
            > "$work/futures.$np" 2>&1
        rc=$?
        set -e
        last=$(grep -m1 -E "^(OK|FAILED)" "$work/futures.$np" || echo "no summary")
        ran=$(grep -m1 -oE "^Ran [0-9]+" "$work/futures.$np" | grep -oE "[0-9]+" || echo 0)
        if [ "$rc" -ne 0 ] || [ "$last" != OK ]; then
            status=1
            tail -40 "$work/futures.$np"
        fi
        echo "mpi4py.futures np=$np${mod:+ (${mod[*]})}: ran $ran, $last ($(( $(date +%s) - start )) s, exit $rc)"
    done
fi
exit "$status"
