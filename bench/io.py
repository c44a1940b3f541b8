#!/usr/bin/env python3
"""MPI-IO benchmarks in one run (bench/io.c) for Weft, MPICH 5.0.2 (ROMIO) and Open MPI
5.0.11 (OMPIO), each program built with that MPI's own mpicc, runs interleaved:

- coll: collective write and read of a 3-D block-distributed array of doubles (4 ranks,
  each rank's block noncontiguous in the file), MiB/s; Weft's ratio to the better of the two.
- indep: one rank, contiguous MPI_File_write_at/read_at in 4 MiB calls against pwrite/pread
  of the same file ("dd-like"), MiB/s and MPI/POSIX ratio (the target: within 10%).
- overlap: one rank, MPI_File_iread_at of the whole file while computing for --compute-ms,
  then MPI_Wait: total / max(compute, blocking read) (the target: at most 1.1).

    python3 bench/io.py [--weft PREFIX] [--mpich VENV] [--ompi VENV] [--dir DIR]
                        [--mib 256] [--compute-ms 100] [--ranks 4] [--grid 2x2x1] [--runs 5]
                        [--only coll,indep,overlap]

Files go to --dir (default $TMPDIR or /tmp), the same for all three MPIs; the page cache is
warm after the first access. Run it on an otherwise idle machine.
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


def mpis(a, n):
    bind = ["-bind-to", "core" if n <= (os.cpu_count() or 1) else "none"]
    obind = ["--bind-to", bind[1]] + (["--oversubscribe"] if bind[1] == "none" else [])
    return {
        "weft": (os.path.join(a.weft, "bin"), ["mpiexec", "-n", str(n)], {}),
        "mpich": (os.path.join(a.mpich, "bin"), ["mpiexec", "-n", str(n)] + bind, {}),
        "ompi": (os.path.join(a.ompi, "bin"), ["mpirun", "-n", str(n)] + obind, OMPI_ENV),
    }


def build(bindir, exe):
    r = subprocess.run([os.path.join(bindir, "mpicc"), "-O2", os.path.join(REPO, "bench", "io.c"),
                        "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"# {bindir}/mpicc failed: {r.stderr[-500:]}", file=sys.stderr)
    return r.returncode == 0


def run(bindir, launch, env, exe, args):
    e = dict(os.environ)
    e.update(env)
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    cmd = [os.path.join(bindir, launch[0])] + launch[1:] + [exe] + args
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    vals = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 2:
            try:
                vals.setdefault(f[0], []).append(float(f[1]))
            except ValueError:
                pass
    return vals


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weft", default=os.path.join(REPO, "build"))
    p.add_argument("--mpich", default=os.path.join(HOME, ".cache/weft/mpich"))
    p.add_argument("--ompi", default=os.path.join(HOME, ".cache/weft/ompi"))
    p.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--compute-ms", type=int, default=100)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--grid", default=None, help="process grid of the collective, e.g. 1x2x2 "
                   "(splitting the fastest dimensions makes the pieces small); default 2x2x1")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="coll,indep,overlap")
    a = p.parse_args()
    only = a.only.split(",")
    mib = a.mib
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for name, (bindir, _, _) in mpis(a, 1).items():
            exe = os.path.join(tmp, f"io_{name}")
            if build(bindir, exe):
                exes[name] = exe
        names = list(exes)
        res = {n: {} for n in names}
        for _ in range(a.runs):
            for n in names:
                if "coll" in only:
                    bindir, launch, env = mpis(a, a.ranks)[n]
                    args = ["coll", a.dir, str(mib), "1"] + ([a.grid] if a.grid else [])
                    for k, v in run(bindir, launch, env, exes[n], args).items():
                        res[n].setdefault(k, []).extend(v)
                bindir, launch, env = mpis(a, 1)[n]
                if "indep" in only:
                    for k, v in run(bindir, launch, env, exes[n], ["indep", a.dir, str(mib), "1"]).items():
                        res[n].setdefault(k, []).extend(v)
                if "overlap" in only:
                    args = ["overlap", a.dir, str(mib), str(a.compute_ms), "1"]
                    for k, v in run(bindir, launch, env, exes[n], args).items():
                        res[n].setdefault(k, []).extend(v)
        med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in res.items()}
        rate = lambda n, k: mib / med[n][k] if med[n].get(k) else float("nan")
        if "coll" in only:
            print(f"Collective access of a 3-D block-distributed array, {a.ranks} ranks, grid "
                  f"{a.grid or 'auto'}, ~{mib} MiB (MiB/s, median of runs)")
            print(f"{'':>12} " + " ".join(f"{n:>10}" for n in names) + f" {'weft/best':>10}")
            for k in ("coll_write", "coll_read"):
                vals = {n: rate(n, k) for n in names}
                others = [v for n, v in vals.items() if n != "weft"]
                ratio = vals.get("weft", float("nan")) / max(others) if others else float("nan")
                print(f"{k:>12} " + " ".join(f"{vals[n]:>10.0f}" for n in names) + f" {ratio:>10.2f}")
            print()
        if "indep" in only:
            print(f"Independent contiguous access, 1 rank, {mib} MiB in 4 MiB calls (MiB/s)")
            print(f"{'':>8} {'':>12} {'MPI':>10} {'POSIX':>10} {'MPI/POSIX':>10}")
            for n in names:
                for k in ("write", "read"):
                    m, px = rate(n, "mpi_" + k), rate(n, "posix_" + k)
                    print(f"{n:>8} {k:>12} {m:>10.0f} {px:>10.0f} {m / px:>10.2f}")
            print()
        if "overlap" in only:
            print(f"Nonblocking read of {mib} MiB overlapping {a.compute_ms} ms of computation (ms)")
            print(f"{'':>8} {'read':>10} {'compute':>10} {'overlap':>10} {'/max':>8}")
            for n in names:
                io, c, o = (med[n].get(k, float("nan")) * 1000 for k in ("io", "compute", "overlap"))
                print(f"{n:>8} {io:>10.1f} {c:>10.1f} {o:>10.1f} {o / max(io, c):>8.2f}")


if __name__ == "__main__":
    main()
