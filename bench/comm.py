#!/usr/bin/env python3
"""Communicator-creation benchmark: MPI_Comm_dup and MPI_Comm_split on Weft, MPICH 5.0.2 and
Open MPI 5.0.11, in one invocation.

Builds bench/comm.c with each MPI's own mpicc and runs it at each rank count. One job runs
`samples` samples of `batch` back-to-back creations of each kind; a sample's time is the
maximum over ranks, per operation. Jobs of the three MPIs are interleaved (one of each in
turn, `--jobs` rounds) so drift of the machine hits all alike. The table shows the median
over all samples, and Weft's ratio to the faster of the other two (below 1.00: Weft is
faster). See bench/README.md.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = Path.home() / ".cache" / "weft"
OPS = ["dup", "split"]


def ncores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def launchers(args):
    """name -> (mpicc, argv(n, bind, exe, extra), env)."""
    ompi_env = {}
    if os.geteuid() == 0:
        ompi_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

    def hydra(mpiexec):
        return lambda n, bind, exe, extra: [str(mpiexec), "-n", str(n), "-bind-to", bind, str(exe)] + extra

    def ompi(mpirun):
        def argv(n, bind, exe, extra):
            a = [str(mpirun), "-n", str(n)]
            if n > ncores():
                a.append("--oversubscribe")
            return a + ["--bind-to", bind, "--mca", "pml", "ob1", "--mca", "btl", "self,sm", str(exe)] + extra
        return argv

    return {
        "weft": (args.weft / "bin" / "mpicc", hydra(args.weft / "bin" / "mpiexec"), {}),
        "mpich": (args.mpich / "bin" / "mpicc", hydra(args.mpich / "bin" / "mpiexec"), {}),
        "ompi": (args.ompi / "bin" / "mpicc", ompi(args.ompi / "bin" / "mpirun"), ompi_env),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", type=Path, default=REPO / "build", help="Weft install prefix")
    ap.add_argument("--mpich", type=Path, default=CACHE / "mpich", help="MPICH 5.0.2 prefix/venv")
    ap.add_argument("--ompi", type=Path, default=CACHE / "ompi", help="Open MPI 5.0.11 prefix/venv")
    ap.add_argument("--ranks", default="2,4", help="rank counts (default 2,4)")
    ap.add_argument("--jobs", type=int, default=3, help="jobs per MPI and rank count (interleaved)")
    ap.add_argument("--samples", type=int, default=20, help="samples per job")
    ap.add_argument("--batch", type=int, default=100, help="creations per sample")
    ap.add_argument("--bind", choices=["auto", "core", "none"], default="auto",
                    help="CPU binding; auto: core when the ranks fit on the cores, else none")
    ap.add_argument("--only", default="weft,mpich,ompi", help="subset of weft,mpich,ompi")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per job")
    args = ap.parse_args()

    names = [n for n in ["weft", "mpich", "ompi"] if n in args.only.split(",")]
    table = launchers(args)
    work = Path(tempfile.mkdtemp(prefix="weft-bench-comm-"))
    exes = {}
    for name in names:
        mpicc, _, env = table[name]
        exe = work / f"comm-{name}"
        p = subprocess.run([str(mpicc), "-O2", str(HERE / "comm.c"), "-o", str(exe)],
                           capture_output=True, text=True, env=dict(os.environ, **env))
        if p.returncode != 0:
            sys.exit(f"building with {mpicc} failed:\n{p.stdout}{p.stderr}")
        exes[name] = exe

    ranks = [int(x) for x in args.ranks.split(",")]
    samples = {(name, n, op): [] for name in names for n in ranks for op in OPS}
    lines = {}
    for n in ranks:
        bind = args.bind if args.bind != "auto" else ("core" if n <= ncores() else "none")
        for _ in range(args.jobs):
            for name in names:
                _, launch, env = table[name]
                argv = launch(n, bind, exes[name], [str(args.samples), str(args.batch)])
                lines[(name, n)] = " ".join(argv)
                p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=args.timeout, env=dict(os.environ, **env))
                got = [l for l in p.stdout.splitlines() if l.startswith("COMM ")]
                if p.returncode != 0 or len(got) != args.samples:
                    sys.exit(f"{name}: {' '.join(argv)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
                for l in got:
                    f = dict(kv.split("=") for kv in l.split()[1:])
                    for op in OPS:
                        samples[(name, n, op)].append(float(f[op]))

    print(f"# {args.jobs} jobs x {args.samples} samples x {args.batch} creations; median us per operation")
    print(f"# cores: {ncores()}")
    for (name, n), line in sorted(lines.items()):
        print(f"#   {name} n={n}: {line}")
    head = f"{'op':6} {'ranks':>5} " + " ".join(f"{x:>9}" for x in names)
    if "weft" in names and len(names) > 1:
        head += f" {'weft/best':>10}"
    print(head)
    for op in OPS:
        for n in ranks:
            med = {name: statistics.median(samples[(name, n, op)]) for name in names}
            row = f"{op:6} {n:>5} " + " ".join(f"{med[x]:9.2f}" for x in names)
            others = [med[x] for x in names if x != "weft"]
            if "weft" in names and others:
                row += f" {med['weft'] / min(others):10.2f}"
            print(row)


if __name__ == "__main__":
    main()
