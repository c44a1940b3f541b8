#!/usr/bin/env python3
"""RMA benchmarks in one run (bench/rma.c) for Weft, MPICH 5.0.2 and Open MPI 5.0.11, each
program built with that MPI's own mpicc, 2 ranks bound to cores (each MPI alike), runs
interleaved. Rows (bench/rma.c's doc): 8-byte put+flush, get, accumulate, fetch_and_op and
compare_and_swap latency (us), put bandwidth at 4 MiB (MiB/s) and a passive-target get loop
while the target sleeps 2 s outside MPI (ms), on allocated, created and dynamic windows; the
last column is Weft's ratio to the best of the other two (below 1 is better for times, above
1 for bandwidth).

    python3 bench/rma.py [--weft PREFIX] [--mpich VENV] [--ompi VENV] [--iters 20000]
                         [--runs 3] [--no-passive]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.path.expanduser("~")
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,sm"}


def mpis(a):
    # Every MPI gets the same binding. Weft's mpiexec binds nothing by default, and an unbound
    # pair can share one CPU (the scheduler packs runnable tasks, and the target waits in
    # MPI_Barrier by yielding): the origin's rows then measure time slices, not the operations.
    bind = ["-bind-to", "core" if 2 <= (os.cpu_count() or 1) else "none"]
    obind = ["--bind-to", bind[1]] + (["--oversubscribe"] if bind[1] == "none" else [])
    return {
        "weft": (os.path.join(a.weft, "bin"), ["mpiexec", "-n", "2"] + bind, {}),
        "mpich": (os.path.join(a.mpich, "bin"), ["mpiexec", "-n", "2"] + bind, {}),
        "ompi": (os.path.join(a.ompi, "bin"), ["mpirun", "-n", "2"] + obind, OMPI_ENV),
    }


def build(bindir, exe):
    r = subprocess.run([os.path.join(bindir, "mpicc"), "-O2", os.path.join(REPO, "bench", "rma.c"),
                        "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"# {bindir}/mpicc failed: {r.stderr[-500:]}", file=sys.stderr)
    return r.returncode == 0


def run(bindir, launch, env, exe, args):
    e = dict(os.environ)
    e.update(env)
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    cmd = [os.path.join(bindir, launch[0])] + launch[1:] + [exe] + args
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        print(f"# {' '.join(cmd)} failed ({out.returncode}): {out.stderr[-800:]}", file=sys.stderr)
        return {}
    vals = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 2:
            try:
                vals[f[0]] = float(f[1])
            except ValueError:
                pass
    return vals


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weft", default=os.path.join(REPO, "build"))
    p.add_argument("--mpich", default=os.path.join(HOME, ".cache/weft/mpich"))
    p.add_argument("--ompi", default=os.path.join(HOME, ".cache/weft/ompi"))
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-passive", action="store_true")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for name, (bindir, _, _) in mpis(a).items():
            exe = os.path.join(tmp, f"rma_{name}")
            if build(bindir, exe):
                exes[name] = exe
        names = list(exes)
        res = {n: {} for n in names}
        for run_no in range(a.runs):
            for n in names:
                bindir, launch, env = mpis(a)[n]
                passive = "0" if a.no_passive or run_no > 0 else "1"
                for k, v in run(bindir, launch, env, exes[n], [str(a.iters), passive]).items():
                    res[n].setdefault(k, []).append(v)
        keys = [k for k in res.get("weft", {})] or sorted({k for r in res.values() for k in r})
        print(f"RMA, 2 ranks on one node (median of {a.runs} runs; us, MiB/s for putbw, ms for passive)")
        print(f"{'':>18} " + " ".join(f"{n:>10}" for n in names) + f" {'weft/best':>10}")
        for k in keys:
            vals = {n: statistics.median(res[n][k]) if res[n].get(k) else float("nan") for n in names}
            others = [v for n, v in vals.items() if n != "weft" and v == v]
            if not others:
                ratio = float("nan")
            elif k.startswith("putbw"):
                ratio = vals.get("weft", float("nan")) / max(others)
            else:
                ratio = vals.get("weft", float("nan")) / min(others)
            print(f"{k:>18} " + " ".join(f"{vals[n]:>10.3f}" for n in names) + f" {ratio:>10.2f}")


if __name__ == "__main__":
    main()
