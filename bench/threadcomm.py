#!/usr/bin/env python3
"""Thread-communicator benchmark table (issue 17): builds bench/threadcomm.c with Weft's and
MPICH's `mpicc -fopenmp` and bench/pt2pt.c with Weft's, then runs, interleaved, round after
round: Weft's thread ranks, Weft's processes (2 ranks, `-bind-to core`) and MPICH 5.0.2's
thread ranks, and prints the median of each cell over the rounds (and the best, in brackets)
with the ratios issue 17 asks for.

    python3 bench/threadcomm.py [--weft PREFIX] [--mpich VENV] [--rounds N] [--iters N]
                                [--threads N] [--only weft,process,mpich] [--timeout S] [--rt]

--rt runs every job under `chrt -f 1` (SCHED_FIFO; needs root or CAP_SYS_NICE): on a machine
busy with other work the scheduler then does not slice other processes into the spinning
ranks, which otherwise turns sub-microsecond latencies into tens of microseconds of noise.
The kernel's real-time throttling still leaves the other processes 5% of each second, and
the jobs here last seconds.

threadcomm.c pins OpenMP thread t to CPU t % CPUs (THREADCOMM_PIN=0 turns that off), so the
OpenMP comparisons run on the same placement as the thread ranks. A run that does not end
within --timeout seconds keeps the lines it printed (MPICH's `MPI_Reduce` on a thread
communicator hangs here, so its reduce row is asked only with --mpich-reduce).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.path.expanduser("~")


def build(mpicc, src, exe, openmp):
    cmd = [mpicc, "-O2"] + (["-fopenmp"] if openmp else []) + [os.path.join(REPO, "bench", src), "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def run(cmd, timeout, env):
    """The measurements a run printed: {(test, size): [value, ...]} (barrier/reduce: MPI, OpenMP)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        text, note = out.stdout, "" if out.returncode == 0 else f" (exit {out.returncode})"
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        note = f" (timed out after {timeout} s)"
    print(f"# {' '.join(cmd)}{note}", file=sys.stderr)
    res = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] in ("latency", "bw", "stream", "barrier", "reduce"):
            res[(p[0], int(p[1]))] = [float(x) for x in p[2:4]]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", default=os.path.join(REPO, "build"))
    ap.add_argument("--mpich", default=os.path.join(HOME, ".cache", "weft", "mpich"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="weft,process,mpich")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--mpich-reduce", action="store_true", help="also MPICH's reduce row")
    ap.add_argument("--rt", action="store_true", help="run the jobs under chrt -f 1 (SCHED_FIFO)")
    args = ap.parse_args()
    chosen = [m for m in args.only.split(",") if m]
    weft_bin, mpich_bin = os.path.join(args.weft, "bin"), os.path.join(args.mpich, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        exe = lambda n: os.path.join(tmp, n)
        cmds = {}
        if "weft" in chosen:
            build(os.path.join(weft_bin, "mpicc"), "threadcomm.c", exe("tc_weft"), True)
            cmds["weft"] = [os.path.join(weft_bin, "mpiexec"), "-n", "1", exe("tc_weft"),
                            str(args.threads), str(args.iters)]
        if "process" in chosen:
            build(os.path.join(weft_bin, "mpicc"), "pt2pt.c", exe("pt2pt_weft"), False)
            cmds["process"] = [os.path.join(weft_bin, "mpiexec"), "-n", "2", "-bind-to", "core",
                               exe("pt2pt_weft"), str(1 << 20)]
        if "mpich" in chosen:
            build(os.path.join(mpich_bin, "mpicc"), "threadcomm.c", exe("tc_mpich"), True)
            tests = "latency,bw,stream,barrier" + (",reduce" if args.mpich_reduce else "")
            cmds["mpich"] = [os.path.join(mpich_bin, "mpiexec"), "-n", "1", exe("tc_mpich"),
                             str(args.threads), str(args.iters), tests]
        # Weft's programs load the library under --weft (its mpicc may point elsewhere).
        lib = os.path.join(args.weft, "lib")
        weft_env = dict(os.environ, LD_LIBRARY_PATH=lib + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
        envs = {"weft": weft_env, "process": weft_env, "mpich": dict(os.environ)}
        if args.rt:
            cmds = {m: ["chrt", "-f", "1"] + cmd for m, cmd in cmds.items()}
        got = {m: {} for m in cmds}
        for _ in range(args.rounds):
            for m, cmd in cmds.items():
                for k, v in run(cmd, args.timeout, envs[m]).items():
                    got[m].setdefault(k, []).append(v)

    def cell(m, key, i=0, best=min):
        vals = [v[i] for v in got.get(m, {}).get(key, []) if len(v) > i]
        return (statistics.median(vals), best(vals), len(vals)) if vals else None

    def show(c, fmt):
        return f"{fmt.format(c[0])} [{fmt.format(c[1])}] n={c[2]}" if c else "-"

    nt = args.threads
    rows = [
        ("latency 0 B (us, one way)", ("latency", 2), ("latency", 0), "{:.3f}", 0, min),
        ("bandwidth 1 MiB (MB/s)", ("bw", 2), ("bw", 1 << 20), "{:.1f}", 0, max),
        ("stream 4 B (ns per message)", ("stream", 2), None, "{:.1f}", 0, min),
        (f"MPI_Barrier, {nt} threads (us)", ("barrier", nt), None, "{:.3f}", 0, min),
        (f"omp barrier, {nt} threads (us)", ("barrier", nt), None, "{:.3f}", 1, min),
        (f"MPI_Reduce 1 int, {nt} threads (us)", ("reduce", nt), None, "{:.3f}", 0, min),
        (f"omp reduction, {nt} threads (us)", ("reduce", nt), None, "{:.3f}", 1, min),
    ]
    print(f"{'median [best] over rounds':<36}" + "".join(f"{m:>30}" for m in cmds))
    for name, key, pkey, fmt, i, best in rows:
        line = f"{name:<36}"
        for m in cmds:
            k = pkey if m == "process" else key
            line += f"{show(cell(m, k, i, best) if k else None, fmt):>30}"
        print(line)

    def ratio(a, b):
        return f"{a[0] / b[0]:.2f} (best {a[1] / b[1]:.2f})" if a and b and b[0] and b[1] else "-"

    print("ratios (median; best):")
    lat = cell("weft", ("latency", 2))
    print(f"  Weft thread / Weft process latency (<= 0.5): {ratio(lat, cell('process', ('latency', 0)))}")
    print(f"  Weft thread / MPICH thread latency (< 1):    {ratio(lat, cell('mpich', ('latency', 2)))}")
    bw = cell("weft", ("bw", 2), best=max)
    print(f"  Weft thread / Weft process bw 1 MiB (>= 1):  {ratio(bw, cell('process', ('bw', 1 << 20), best=max))}")
    for m in ("weft", "mpich"):
        for test, goal in (("barrier", "<= 0.6"), ("reduce", "<= 1.0")):
            vals = [v[0] / v[1] for v in got.get(m, {}).get((test, nt), []) if len(v) > 1 and v[1]]
            if vals:
                print(f"  {m} {test} / OpenMP's ({goal}): median {statistics.median(vals):.2f}, "
                      f"best {min(vals):.2f}, per round {' '.join(f'{v:.2f}' for v in vals)}")


if __name__ == "__main__":
    main()
