#!/usr/bin/env python3
"""Datatype benchmarks in one run: bench/pack.c (MPI_Pack of a 3-D array face, a 2-level
strided vector, against a hand-written C loop) and bench/type_iov.c (MPIX_Type_iov segment 0
vs 999999 of a 1e6-block indexed type) for Weft, MPICH 5.0.2 and Open MPI 5.0.11 (which has
no MPIX_Type_iov). Each program is built with that MPI's own mpicc and run on one rank.

    python3 bench/pack.py [--weft PREFIX] [--mpich VENV] [--ompi VENV] [--n 64,128,256] [--runs 5]
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
    return {
        "weft": (os.path.join(a.weft, "bin"), ["mpiexec", "-n", "1"], {}),
        "mpich": (os.path.join(a.mpich, "bin"), ["mpiexec", "-n", "1"], {}),
        "ompi": (os.path.join(a.ompi, "bin"), ["mpirun", "-n", "1"], OMPI_ENV),
    }


def build(bindir, src, exe):
    r = subprocess.run([os.path.join(bindir, "mpicc"), "-O2", os.path.join(REPO, "bench", src),
                        "-o", exe], capture_output=True, text=True)
    return r.returncode == 0


def run(bindir, launch, env, exe, args):
    e = dict(os.environ)
    e.update(env)
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    cmd = [os.path.join(bindir, launch[0])] + launch[1:] + [exe] + args
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return out.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weft", default=os.path.join(REPO, "build"))
    p.add_argument("--mpich", default=os.path.join(HOME, ".cache/weft/mpich"))
    p.add_argument("--ompi", default=os.path.join(HOME, ".cache/weft/ompi"))
    p.add_argument("--n", default="64,128,256")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    sizes = [int(x) for x in a.n.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for name, (bindir, launch, env) in mpis(a).items():
            for prog in ("pack", "type_iov"):
                exe = os.path.join(tmp, f"{prog}_{name}")
                if build(bindir, prog + ".c", exe):
                    exes[(name, prog)] = exe
        names = [n for n in mpis(a) if (n, "pack") in exes]
        # pack: runs interleaved across MPIs; each run reports medians of 41 packs.
        pack = {(n, s): ([], []) for n in names for s in sizes}
        for _ in range(a.runs):
            for s in sizes:
                for n in names:
                    bindir, launch, env = mpis(a)[n]
                    f = run(bindir, launch, env, exes[(n, "pack")], [str(s)]).split()
                    pack[(n, s)][0].append(float(f[3]))
                    pack[(n, s)][1].append(float(f[4]))
        print("MPI_Pack of a 3-D array face ((N+2)^3 doubles, plane interior: N x N doubles at "
              "strides N+2 and (N+2)^2), median ns per pack")
        print(f"{'N':>5} {'bytes':>9} {'C loop':>10} " + " ".join(f"{n:>10}" for n in names)
              + f" {'weft/loop':>10} {'weft/best':>10}")
        for s in sizes:
            loop = statistics.median(pack[("weft", s)][1])
            vals = {n: statistics.median(pack[(n, s)][0]) for n in names}
            best = min(v for n, v in vals.items() if n != "weft")
            print(f"{s:>5} {8 * s * s:>9} {loop:>10.0f} " + " ".join(f"{vals[n]:>10.0f}" for n in names)
                  + f" {vals['weft'] / loop:>10.2f} {vals['weft'] / best:>10.2f}")
        print()
        print("MPIX_Type_iov: one segment of a 1e6-block indexed type, median ns per call")
        print(f"{'MPI':>6} {'k=0':>10} {'k=500000':>10} {'k=999999':>10} {'ratio':>8}")
        for n in mpis(a):
            if (n, "type_iov") not in exes:
                print(f"{n:>6} {'(no MPIX_Type_iov)':>32}")
                continue
            bindir, launch, env = mpis(a)[n]
            vals = {}
            for _ in range(a.runs):
                for line in run(bindir, launch, env, exes[(n, "type_iov")], []).splitlines():
                    f = line.split()
                    if f and f[0] == "iov":
                        vals.setdefault(int(f[1]), []).append(float(f[2]))
            m = {k: statistics.median(v) for k, v in vals.items()}
            ks = sorted(m)
            print(f"{n:>6} " + " ".join(f"{m[k]:>10.1f}" for k in ks) + f" {m[ks[-1]] / m[ks[0]]:>8.2f}")


if __name__ == "__main__":
    main()
