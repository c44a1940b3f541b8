#!/usr/bin/env python3
"""Sessions benchmark (seed 003's measurements) on Weft, MPICH 5.0.2 and Open MPI 5.0.11 in
one invocation: the time to a world-sized communicator through MPI_Init and through the
session path, MPI_Comm_dup per call and 8-byte latency on the resulting communicator.

Builds bench/session.c with each MPI's mpicc, runs `--jobs` jobs per (MPI, path, ranks),
interleaved (the two paths in alternating order), and prints medians. Ratios: Weft's session path against Weft's MPI_Init path
and against MPICH's session path; dup and latency on a session communicator against the same
on MPI_COMM_WORLD (Weft). See bench/README.md.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from comm import CACHE, REPO, launchers, ncores  # noqa: E402  (shared launch recipes)

HERE = Path(__file__).resolve().parent


def run(table, name, exe, n, mode, timeout):
    _, argv, env = table[name]
    bind = "core" if n <= ncores() else "none"
    p = subprocess.run(argv(n, bind, exe, [mode]), capture_output=True, text=True, timeout=timeout,
                       env={**__import__("os").environ, **env})
    if p.returncode != 0:
        raise RuntimeError(f"{name} {mode} -n {n} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return {k: float(v) for k, v in (line.split() for line in p.stdout.splitlines() if line.strip())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", type=Path, default=REPO / "build")
    ap.add_argument("--mpich", type=Path, default=CACHE / "mpich")
    ap.add_argument("--ompi", type=Path, default=CACHE / "ompi")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--jobs", type=int, default=7)
    ap.add_argument("--only", default="weft,mpich,ompi")
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    names = [n for n in ["weft", "mpich", "ompi"] if n in args.only.split(",")]
    table = launchers(args)
    work = Path(tempfile.mkdtemp(prefix="weft-bench-session-"))
    exes = {}
    for name in names:
        exe = work / f"session-{name}"
        subprocess.run([str(table[name][0]), "-O2", "-o", str(exe), str(HERE / "session.c")], check=True)
        exes[name] = exe
    results = {}
    for n in [int(r) for r in args.ranks.split(",")]:
        for job in range(args.jobs):
            for name in names:
                # Alternate which path runs first, so that neither always follows another
                # MPI's job (whose processes may still be exiting).
                for mode in ["init", "session"][:: 1 if job % 2 == 0 else -1]:
                    try:
                        r = run(table, name, exes[name], n, mode, args.timeout)
                    except Exception as e:  # a reference MPI failing its session path is a result too
                        print(f"# {e}".replace("\n", "\n# "), file=sys.stderr)
                        continue
                    for k, v in r.items():
                        results.setdefault((n, name, mode, k), []).append(v)

    def med(*key):
        v = results.get(key)
        return statistics.median(v) if v else float("nan")

    print(f"{'ranks':>5} {'measure':<12} " + " ".join(f"{n + ' ' + m:>15}" for n in names for m in ["init", "session"]))
    for n in [int(r) for r in args.ranks.split(",")]:
        for k, unit in [("path_us", "us"), ("dup_us", "us"), ("latency_us", "us")]:
            cells = " ".join(f"{med(n, name, m, k):15.3f}" for name in names for m in ["init", "session"])
            print(f"{n:>5} {k:<12} {cells}")
        w_init, w_sess = med(n, "weft", "init", "path_us"), med(n, "weft", "session", "path_us")
        m_sess = med(n, "mpich", "session", "path_us")
        print(f"      weft session path / weft MPI_Init path: {w_sess / w_init:.2f}")
        print(f"      weft session path / MPICH session path: {w_sess / m_sess:.2f}")
        for k in ["dup_us", "latency_us"]:
            print(f"      weft {k} session / world: {med(n, 'weft', 'session', k) / med(n, 'weft', 'init', k):.2f}")


if __name__ == "__main__":
    main()
