#!/usr/bin/env python3
"""Collective latency of Weft, MPICH 5.0.2 and Open MPI 5.0.11 in one run (bench/coll.c).

Usage: python3 bench/coll.py [--ranks 2,4] [--rounds 5] [--seconds 0.05] [--only weft,mpich,ompi]
                             [--measures all|bcast,scan,...] [--sizes 8,4096,65536,1048576]

Each round runs every MPI once per rank count (interleaved, so drift in the machine's state
hits all alike); the table shows each measure's median over rounds and Weft's ratio to the
faster of the other two (below 1.00: Weft is faster). Launch lines follow bench/README.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("WEFT_CACHE", Path.home() / ".cache" / "weft"))


def ncores():
    return len(os.sched_getaffinity(0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weft", type=Path, default=REPO / "build")
    ap.add_argument("--mpich", type=Path, default=CACHE / "mpich")
    ap.add_argument("--ompi", type=Path, default=CACHE / "ompi")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", default="0.05", help="time per timed batch")
    ap.add_argument("--only", default="weft,mpich,ompi")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--measures", default="all",
                    help="comma-separated measures of coll.c (barrier, bcast, bcast_rot, ...)")
    ap.add_argument("--sizes", default="8,4096,65536,1048576", help="bytes, comma-separated")
    args = ap.parse_args()
    only = args.only.split(",")
    root = os.geteuid() == 0

    def bind(n):
        return "core" if n <= ncores() else "none"

    mpis = {
        "weft": (args.weft / "bin" / "mpicc",
                 lambda n, exe: [str(args.weft / "bin" / "mpiexec"), "-n", str(n), "-bind-to", bind(n), exe], {}),
        "mpich": (args.mpich / "bin" / "mpicc",
                  lambda n, exe: [str(args.mpich / "bin" / "mpiexec"), "-n", str(n), "-bind-to", bind(n), exe], {}),
        "ompi": (args.ompi / "bin" / "mpicc",
                 lambda n, exe: [str(args.ompi / "bin" / "mpirun"), "-n", str(n)]
                 + (["--oversubscribe"] if n > ncores() else [])
                 + ["--bind-to", bind(n), "--mca", "pml", "ob1", "--mca", "btl", "self,sm", exe],
                 {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if root else {}),
    }
    tmp = Path(tempfile.mkdtemp(prefix="weft-coll-bench-"))
    exes = {}
    for name in only:
        cc, _, _ = mpis[name]
        exe = tmp / f"coll_{name}"
        subprocess.run([str(cc), "-O2", str(REPO / "bench" / "coll.c"), "-o", str(exe)], check=True)
        exes[name] = str(exe)
    ranks = [int(x) for x in args.ranks.split(",")]
    samples = {}
    for rnd in range(args.rounds):
        for n in ranks:
            for name in only:
                _, launch, env = mpis[name]
                argv = launch(n, exes[name]) + [args.seconds, args.measures, args.sizes]
                out = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout,
                                     env={**os.environ, **env})
                if out.returncode != 0:
                    sys.exit(f"{name} -n {n} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
                for line in out.stdout.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[1].isdigit():
                        key = (n, parts[0], int(parts[1]))
                        samples.setdefault(key, {}).setdefault(name, []).append(float(parts[2]))
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr)

    def size(b):
        if b == 0:
            return ""
        if b >= 1 << 20 and b % (1 << 20) == 0:
            return f"{b >> 20} MiB"
        if b >= 1024 and b % 1024 == 0:
            return f"{b >> 10} KiB"
        return f"{b} B"

    order = ["barrier", "bcast", "bcast_rot", "reduce", "reduce_rot", "allreduce", "gather",
             "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall", "alltoallv",
             "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
             "neighbor_allgather", "neighbor_alltoall"]

    print(f"median latency in microseconds over {args.rounds} rounds "
          f"(each the best of 7 batches of ~{args.seconds} s)")
    head = f"{'ranks':>5} {'measure':<28}" + "".join(f"{m:>10}" for m in only)
    if "weft" in only and len(only) > 1:
        head += f"{'weft/best':>11}"
    print(head)
    for key in sorted(samples, key=lambda k: (k[0], order.index(k[1]), k[2])):
        n, meas, b = key
        med = {m: statistics.median(v) for m, v in samples[key].items()}
        line = f"{n:>5} {(meas + ' ' + size(b)).strip():<28}" + "".join(f"{med.get(m, float('nan')):>10.2f}" for m in only)
        others = [med[m] for m in only if m != "weft" and m in med]
        if "weft" in med and others:
            line += f"{med['weft'] / min(others):>11.2f}"
        print(line)
    for n in ranks:
        for name in only:
            print(f"  {name} -n {n}: {' '.join(mpis[name][1](n, 'coll'))}")


if __name__ == "__main__":
    main()
