#!/usr/bin/env python3
"""Memory per communicator of Weft, MPICH 5.0.2 and Open MPI 5.0.11 in one run (bench/comm_mem.c).

Usage: python3 bench/comm_mem.py [--ranks 2,8,32] [--runs 3] [--comms 100] [--only weft,mpich,ompi]

Each job duplicates MPI_COMM_WORLD `--comms` times with one 8-byte MPI_Allreduce on each and
reports the growth of every rank's proportional set size (PSS) per communicator; the table
shows the median over runs of the average over ranks (and of the worst rank) in KB, and
Weft's average divided by the smallest of the others'. Launch lines follow bench/README.md
(no binding: these jobs oversubscribe the cores).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("WEFT_CACHE", Path.home() / ".cache" / "weft"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weft", type=Path, default=REPO / "build")
    ap.add_argument("--mpich", type=Path, default=CACHE / "mpich")
    ap.add_argument("--ompi", type=Path, default=CACHE / "ompi")
    ap.add_argument("--ranks", default="2,8,32")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--comms", type=int, default=100)
    ap.add_argument("--only", default="weft,mpich,ompi")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    only = args.only.split(",")
    root = os.geteuid() == 0
    mpis = {
        "weft": (args.weft / "bin" / "mpicc",
                 lambda n, exe: [str(args.weft / "bin" / "mpiexec"), "-n", str(n), exe], {}),
        "mpich": (args.mpich / "bin" / "mpicc",
                  lambda n, exe: [str(args.mpich / "bin" / "mpiexec"), "-n", str(n),
                                  "-bind-to", "none", exe], {}),
        "ompi": (args.ompi / "bin" / "mpicc",
                 lambda n, exe: [str(args.ompi / "bin" / "mpirun"), "-n", str(n), "--oversubscribe",
                                 "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl",
                                 "self,sm", exe],
                 {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if root else {}),
    }
    tmp = Path(tempfile.mkdtemp(prefix="weft-comm-mem-"))
    exes = {}
    for name in only:
        exe = tmp / f"comm_mem_{name}"
        subprocess.run([str(mpis[name][0]), "-O2", str(REPO / "bench" / "comm_mem.c"), "-o", str(exe)],
                       check=True)
        exes[name] = str(exe)
    ranks = [int(x) for x in args.ranks.split(",")]
    avg, worst = {}, {}
    for _ in range(args.runs):
        for n in ranks:
            for name in only:
                _, launch, env = mpis[name]
                out = subprocess.run(launch(n, exes[name]) + [str(args.comms)], capture_output=True,
                                     text=True, timeout=args.timeout, env={**os.environ, **env})
                m = re.search(r"pss_kb_per_comm_per_rank=([\d.]+) max=([\d.]+)", out.stdout)
                if out.returncode != 0 or not m:
                    sys.exit(f"{name} -n {n} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
                avg.setdefault((n, name), []).append(float(m.group(1)))
                worst.setdefault((n, name), []).append(float(m.group(2)))
    print(f"PSS growth per communicator per rank, KB ({args.comms} MPI_Comm_dup + 8-byte "
          f"MPI_Allreduce each; median of {args.runs} runs; average over ranks / worst rank)")
    print(f"{'ranks':>5}" + "".join(f"{m:>16}" for m in only) + (f"{'weft/best':>11}" if "weft" in only and len(only) > 1 else ""))
    for n in ranks:
        med = {m: statistics.median(avg[(n, m)]) for m in only}
        line = f"{n:>5}" + "".join(
            f"{med[m]:>8.2f} / {statistics.median(worst[(n, m)]):>5.2f}" for m in only)
        others = [med[m] for m in only if m != "weft"]
        if "weft" in med and others:
            line += f"{med['weft'] / min(others):>11.2f}"
        print(line)


if __name__ == "__main__":
    main()
