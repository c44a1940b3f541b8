#!/usr/bin/env bash
# mpi4py's 8-byte ping-pong (bench/mpi4py_pingpong.py) on Weft, MPICH 5.0.2 and Open MPI 5.0.11
# in one run: ROUNDS rounds, each running the three one after the other (so load on the machine
# falls on all three alike), then per MPI the median of its per-round medians and Weft's ratio to
# the better of the other two (below 1: Weft is faster).
#
# Usage: bench/mpi4py_pingpong.sh [--prefix DIR] [ITERS [ROUNDS]]   (defaults 20000 3)
# Needs the mpi4py venv scripts/mpi4py.sh builds (built against the standard ABI: it runs on
# Weft and on MPICH's standard-ABI library) and builds, once, mpi4py from the same source
# distribution against Open MPI's mpicc into CACHE/mpi4py-ompi (Open MPI has its own ABI).
# Launch lines as bench/README.md's: two ranks, Open MPI with --mca pml ob1 --mca btl self,sm.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${WEFT_CACHE:-$HOME/.cache/weft}"
PREFIX="$PWD/build"
if [ "${1:-}" = --prefix ]; then PREFIX="$(cd "$2" && pwd)"; shift 2; fi
ITERS="${1:-20000}"
ROUNDS="${2:-3}"
ABI_PY="$CACHE/mpi4py/bin/python"
OMPI_VENV="$CACHE/mpi4py-ompi"
SDIST="$CACHE/mpi4py-src/mpi4py-4.1.2.tar.gz"
[ -x "$ABI_PY" ] || scripts/mpi4py.sh --prefix "$PREFIX" --install-only
if ! "$OMPI_VENV/bin/python" -c "import mpi4py, numpy" 2>/dev/null; then
    echo "mpi4py_pingpong.sh: building mpi4py against $CACHE/ompi/bin/mpicc into $OMPI_VENV"
    rm -rf "$OMPI_VENV"
    python3 -m venv "$OMPI_VENV"
    "$OMPI_VENV/bin/python" -m pip install -q --disable-pip-version-check numpy==2.4.6
    MPICC="$CACHE/ompi/bin/mpicc" "$OMPI_VENV/bin/python" -m pip install -q --disable-pip-version-check \
        --no-binary mpi4py --no-cache-dir "$SDIST"
fi
bind=core
[ "$(nproc)" -ge 2 ] || bind=none
run_one() {
    case "$1" in
        weft) LD_LIBRARY_PATH="$PREFIX/lib" "$PREFIX/bin/mpiexec" -n 2 -bind-to "$bind" \
                  "$ABI_PY" bench/mpi4py_pingpong.py "$ITERS" ;;
        mpich) LD_LIBRARY_PATH="$CACHE/mpich/lib" "$CACHE/mpich/bin/mpiexec" -n 2 -bind-to "$bind" \
                  "$ABI_PY" bench/mpi4py_pingpong.py "$ITERS" ;;
        ompi) OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$CACHE/ompi/bin/mpirun" -n 2 \
                  --bind-to "$bind" --mca pml ob1 --mca btl self,sm \
                  "$OMPI_VENV/bin/python" bench/mpi4py_pingpong.py "$ITERS" ;;
    esac
}
declare -A results
for round in $(seq "$ROUNDS"); do
    for mpi in weft mpich ompi; do
        line="$(run_one "$mpi" | grep 'ping-pong')"
        echo "round $round $mpi: $line"
        results[$mpi]+="$(sed -E 's/.*median ([0-9.]+) us.*/\1/' <<<"$line") "
    done
done
python3 - "${results[weft]}" "${results[mpich]}" "${results[ompi]}" <<'PY'
import statistics, sys
med = {n: statistics.median(float(x) for x in v.split()) for n, v in zip(("weft", "mpich", "ompi"), sys.argv[1:])}
best = min(med["mpich"], med["ompi"])
print("median of round medians, one-way us: " + ", ".join(f"{n} {v:.2f}" for n, v in med.items()))
print(f"weft / mpich {med['weft'] / med['mpich']:.2f}, weft / ompi {med['weft'] / med['ompi']:.2f}, "
      f"weft / better {med['weft'] / best:.2f}")
PY
