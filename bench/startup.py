#!/usr/bin/env python3
"""Startup benchmark: Weft against MPICH 5.0.2 and Open MPI 5.0.11, in one invocation.

Builds bench/init_time.c with each MPI's own mpicc, then launches it repeatedly at each
rank count and measures
  launch    launcher start to launcher exit (wall clock, as seen from this script)
  init+fin  MPI_Init time + MPI_Finalize time inside the program, max over ranks
and, to explain the launch figure, where the wall time goes:
  spawn     launcher start to the last rank entering main()
  init      MPI_Init, max over ranks
  fin       MPI_Finalize, max over ranks
  exit      last rank leaving MPI_Finalize to launcher exit
Runs are interleaved (one run of each MPI in turn) so that drift of the machine affects all
alike; the table shows medians, and Weft's ratio to the faster of the other two (below 1.00
means Weft is faster). See bench/README.md.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = Path.home() / ".cache" / "weft"

METRICS = [
    # key, label, shown in the main table
    ("launch", "launch (ms)", True),
    ("initfin", "init+fin (ms)", True),
    ("spawn", "  spawn", False),
    ("init", "  init", False),
    ("fin", "  fin", False),
    ("exit", "  exit", False),
]


def ncores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class Mpi:
    """One MPI: how to compile the probe and how to launch it fairly."""

    def __init__(self, name, mpicc, launch, env=None):
        self.name = name
        self.mpicc = mpicc
        self.launch = launch  # (nranks, bind, exe) -> argv
        self.env = env or {}
        self.exe = None


def hydra_argv(mpiexec):
    def argv(n, bind, exe):
        return [str(mpiexec), "-n", str(n), "-bind-to", bind, str(exe)]

    return argv


def weft_argv(mpiexec):
    def argv(n, bind, exe):
        return [str(mpiexec), "-n", str(n), "-bind-to", bind, str(exe)]

    return argv


def ompi_argv(mpirun):
    def argv(n, bind, exe):
        a = [str(mpirun), "-n", str(n)]
        if n > ncores():
            a.append("--oversubscribe")
        a += ["--bind-to", bind, "--mca", "pml", "ob1", "--mca", "btl", "self,sm", str(exe)]
        return a

    return argv


def run_once(mpi, n, bind, timeout):
    argv = mpi.launch(n, bind, mpi.exe)
    env = dict(os.environ, **mpi.env)
    t0 = time.monotonic_ns()
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=timeout, text=True)
    t1 = time.monotonic_ns()
    ranks = {}
    for line in p.stdout.splitlines():
        if not line.startswith("STARTUP "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        ranks[int(f["rank"])] = {k: int(v) for k, v in f.items()}
    problems = []
    if p.returncode != 0:
        problems.append(f"exit code {p.returncode}")
    if sorted(ranks) != list(range(n)) or any(r["size"] != n for r in ranks.values()):
        problems.append(f"expected ranks 0..{n - 1} of a world of {n}, got {sorted(ranks)}")
    if problems:
        raise RuntimeError(f"{mpi.name}: {' '.join(argv)}: {'; '.join(problems)}\n"
                           f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    r = ranks.values()
    ms = 1e-6
    return {
        "launch": (t1 - t0) * ms,
        "initfin": max((x["init_end"] - x["init"]) + (x["fin_end"] - x["fin"]) for x in r) * ms,
        "spawn": (max(x["main"] for x in r) - t0) * ms,
        "init": max(x["init_end"] - x["init"] for x in r) * ms,
        "fin": max(x["fin_end"] - x["fin"] for x in r) * ms,
        "exit": (t1 - max(x["fin_end"] for x in r)) * ms,
    }


def build(mpi, workdir, source):
    exe = workdir / f"init_time-{mpi.name.replace(' ', '_').replace('(', '').replace(')', '')}"
    cmd = [str(mpi.mpicc), "-O2", str(source), "-o", str(exe)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **mpi.env))
    if p.returncode != 0:
        sys.exit(f"building with {mpi.mpicc} failed:\n{p.stdout}{p.stderr}")
    mpi.exe = exe


def weft_launcher_works(mpiexec, exe):
    try:
        p = subprocess.run([str(mpiexec), "-n", "2", str(exe)], capture_output=True,
                           text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and p.stdout.count("STARTUP ") == 2


def fmt(x):
    return f"{x:8.1f}" if x is not None else "       -"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", type=Path, default=REPO / "build",
                    help="Weft install prefix (bin/mpicc, bin/mpiexec); default: build/ in the repo")
    ap.add_argument("--mpich", type=Path, default=CACHE / "mpich",
                    help="MPICH 5.0.2 venv/prefix (bin/mpicc, bin/mpiexec); default: %(default)s")
    ap.add_argument("--ompi", type=Path, default=CACHE / "ompi",
                    help="Open MPI 5.0.11 venv/prefix (bin/mpicc, bin/mpirun); default: %(default)s")
    ap.add_argument("--ranks", default="2,4", help="rank counts, comma-separated (default 2,4)")
    ap.add_argument("--runs", type=int, default=15, help="timed runs per MPI and rank count")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs before them")
    ap.add_argument("--bind", choices=["auto", "core", "none"], default="auto",
                    help="CPU binding for every launcher; auto: core when the ranks fit on the "
                         "cores, else none (default)")
    ap.add_argument("--weft-launcher", choices=["auto", "weft", "hydra"], default="auto",
                    help="launch Weft with its own mpiexec or MPICH's Hydra; auto: Weft's if it "
                         "works, else Hydra")
    ap.add_argument("--weft-hydra", action="store_true",
                    help="also time Weft's library under Hydra (an extra column, not in ratios)")
    ap.add_argument("--only", default="weft,mpich,ompi",
                    help="subset of weft,mpich,ompi to run")
    ap.add_argument("--no-ucx-hooks", action="store_true",
                    help="set UCX_MEM_EVENTS=no for MPICH and Open MPI: both wheels link UCX, "
                         "whose libucm patches code before main (about 40 ms per process here)")
    ap.add_argument("--details", action="store_true",
                    help="also show where the launch time goes (spawn/init/fin/exit)")
    ap.add_argument("--json", type=Path, help="write all samples here")
    ap.add_argument("--workdir", type=Path, help="where to build the probes (default: a temp dir)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per launch")
    args = ap.parse_args()

    only = set(args.only.split(","))
    ranks = [int(x) for x in args.ranks.split(",")]
    source = HERE / "init_time.c"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="weft-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)

    ompi_env = {}
    if os.geteuid() == 0:
        ompi_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

    ref_env = {"UCX_MEM_EVENTS": "no"} if args.no_ucx_hooks else {}
    ompi_env.update(ref_env)
    mpis = []
    notes = []
    if ref_env:
        notes.append("mpich, ompi: UCX_MEM_EVENTS=no (--no-ucx-hooks)")
    if "weft" in only:
        weft = Mpi("weft", args.weft / "bin" / "mpicc", None)
        build(weft, workdir, source)
        use = args.weft_launcher
        if use == "auto":
            use = "weft" if weft_launcher_works(args.weft / "bin" / "mpiexec", weft.exe) else "hydra"
        if use == "weft":
            weft.launch = weft_argv(args.weft / "bin" / "mpiexec")
            notes.append(f"weft: launched by {args.weft / 'bin' / 'mpiexec'}")
        else:
            weft.launch = hydra_argv(args.mpich / "bin" / "mpiexec")
            weft.name = "weft (hydra)"
            notes.append(f"weft: Weft's mpiexec unavailable; launched by Hydra "
                         f"({args.mpich / 'bin' / 'mpiexec'})")
        mpis.append(weft)
        if args.weft_hydra and use == "weft":
            wh = Mpi("weft (hydra)", weft.mpicc, hydra_argv(args.mpich / "bin" / "mpiexec"))
            wh.exe = weft.exe
            mpis.append(wh)
    if "mpich" in only:
        m = Mpi("mpich", args.mpich / "bin" / "mpicc", hydra_argv(args.mpich / "bin" / "mpiexec"),
                dict(ref_env))
        build(m, workdir, source)
        mpis.append(m)
    if "ompi" in only:
        o = Mpi("ompi", args.ompi / "bin" / "mpicc", ompi_argv(args.ompi / "bin" / "mpirun"),
                ompi_env)
        build(o, workdir, source)
        mpis.append(o)

    def bind_for(n):
        return args.bind if args.bind != "auto" else ("core" if n <= ncores() else "none")

    samples = {}  # (mpi, n) -> list of dicts
    for n in ranks:
        bind = bind_for(n)
        for _ in range(args.warmup):
            for mpi in mpis:
                run_once(mpi, n, bind, args.timeout)
        for _ in range(args.runs):
            for mpi in mpis:
                samples.setdefault((mpi.name, n), []).append(run_once(mpi, n, bind, args.timeout))
        notes.append(f"{n} ranks: binding {bind}")

    med = {k: {m: statistics.median(s[m] for s in v) for m, _, _ in METRICS}
           for k, v in samples.items()}

    names = [m.name for m in mpis]
    primary = names[0] if names and names[0].startswith("weft") else None
    others = [x for x in ("mpich", "ompi") if x in names]
    head = f"{'ranks':>5} {'measure':<14}" + "".join(f"{x:>14}" for x in names)
    if primary and others:
        head += f"{'weft/best':>11}"
    print(f"Startup, median of {args.runs} runs after {args.warmup} warm-ups "
          f"(ms; {ncores()} cores; {time.strftime('%Y-%m-%d %H:%M')})")
    print(head)
    print("-" * len(head))
    for n in ranks:
        for key, label, main_row in METRICS:
            if not main_row and not args.details:
                continue
            row = f"{n:>5} {label:<14}" + "".join(f"{fmt(med[(x, n)][key]):>14}" for x in names)
            if primary and others and main_row:
                best = min(med[(x, n)][key] for x in others)
                row += f"{med[(primary, n)][key] / best:>11.2f}"
            print(row)
    for line in notes:
        print(f"  {line}")
    for mpi in mpis:
        print(f"  {mpi.name}: {' '.join(mpi.launch(ranks[-1], bind_for(ranks[-1]), mpi.exe))}")

    if args.json:
        args.json.write_text(json.dumps({
            "runs": args.runs, "warmup": args.warmup, "cores": ncores(),
            "samples": {f"{k[0]}/{k[1]}": v for k, v in samples.items()},
            "median": {f"{k[0]}/{k[1]}": v for k, v in med.items()},
        }, indent=1))
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
