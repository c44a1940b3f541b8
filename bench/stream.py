#!/usr/bin/env python3
"""MPIX stream benchmark (issue #15): builds bench/stream.c with Weft's and MPICH 5.0.2's mpicc
and runs, on 2 ranks bound to cores:

- message rate (8-byte messages, window 64) on an MPI_Comm_dup under MPI_THREAD_SINGLE
  ("single"), on an MPI_Comm_dup under MPI_THREAD_MULTIPLE ("implicit") and on a stream
  communicator under MPI_THREAD_MULTIPLE ("stream"), for both MPIs; MPICH gets
  MPIR_CVAR_CH4_RESERVE_VCIS=1, without which it has no streams;
- Weft's progress-thread overlap (a 4 MiB MPI_Isend posted before 10 ms of computation) and
  the CPU an idle progress thread uses.

    python3 bench/stream.py [--weft PREFIX] [--mpich VENV] [--runs N] [--iters N]

Runs of the MPIs are interleaved; each cell keeps the best of --runs (default 3).
"""
import argparse
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.path.expanduser("~")
MODES = ["single", "implicit", "stream"]


def build(bindir, exe):
    subprocess.run([os.path.join(bindir, "mpicc"), "-O2", os.path.join(REPO, "bench", "stream.c"),
                    "-o", exe], check=True)


def run(bindir, exe, args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    cmd = [os.path.join(bindir, "mpiexec"), "-n", "2", "-bind-to", "core", exe] + args
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    res = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            res[(parts[0], parts[1])] = float(parts[2])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", default=os.path.join(REPO, "build"))
    ap.add_argument("--mpich", default=os.path.join(HOME, ".cache", "weft", "mpich"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=2000)
    args = ap.parse_args()
    mpis = {"weft": (os.path.join(args.weft, "bin"), {}),
            "mpich": (os.path.join(args.mpich, "bin"), {"MPIR_CVAR_CH4_RESERVE_VCIS": "1"})}
    rates = {m: {} for m in mpis}
    extra = {}
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for m, (bindir, _) in mpis.items():
            exes[m] = os.path.join(tmp, "stream_" + m)
            build(bindir, exes[m])
        for _ in range(args.runs):
            for mode in MODES:
                for m, (bindir, env) in mpis.items():
                    r = run(bindir, exes[m], ["rate", mode, str(args.iters)], env)
                    v = r[("rate", mode)]
                    rates[m][mode] = max(v, rates[m].get(mode, 0))
        weft_bin = mpis["weft"][0]
        extra.update(run(weft_bin, exes["weft"], ["overlap"]))
        extra.update(run(weft_bin, exes["weft"], ["idle", "2"]))
    print(f"{'rate (msg/s)':<14}{'weft':>12}{'mpich':>12}{'weft/mpich':>12}")
    for mode in MODES:
        w, p = rates["weft"][mode], rates["mpich"][mode]
        print(f"{mode:<14}{w:>12.0f}{p:>12.0f}{w / p:>12.2f}")
    w = rates["weft"]
    print(f"weft stream/implicit {w['stream'] / w['implicit']:.2f} (goal >= 1.20), "
          f"stream/single {w['stream'] / w['single']:.2f} (goal >= 0.95)")
    c, x = extra[("overlap", "compute")], extra[("overlap", "transfer")]
    ideal = max(c, x)
    print(f"overlap (us): compute {c:.0f}, transfer {x:.0f}, "
          f"send+compute without thread {extra[('overlap', 'without')]:.0f}, "
          f"with progress thread {extra[('overlap', 'with')]:.0f} "
          f"= {extra[('overlap', 'with')] / ideal:.2f}x max(compute, transfer) (goal <= 1.10)")
    print(f"idle progress thread: {extra[('idle', 'cpu')]:.2f}% of a core (goal < 2)")


if __name__ == "__main__":
    main()
