#!/usr/bin/env python3
"""The cost of Weft's instrumentation hooks while they are off (issue 21: "tracing compiled in
but off within 2% of the build before").

Runs bench/hooks.c (per-call cost of MPI_Comm_rank, 8-byte latency, 8-byte message rate; 2
ranks) against two libraries, one run of each in turn for --rounds rounds, so that the load of
the machine hits both alike, and prints the median and the best of each measure and the ratios
hooked/stripped (<= 1.02 for time, >= 0.98 for rate is the target). On a loaded machine a run
that lost its core shows up as an outlier; the best run is then the steadier figure.

  --hooked PREFIX    Weft with the hooks compiled in (default: build/)
  --stripped LIB     a directory holding the libmpi_abi.so.1 built without them
  --build-stripped DIR
                     make that library: copies this working tree to DIR, makes the hooks'
                     checks constant false (MPI_T events' `enabled`, WEFT_TRACE's `on`,
                     WEFT_STATS' `timing`, `stats::measured`, which decides at
                     MPI_Init whether the QMPI measuring link is installed: the
                     compiler then removes the hooks) and builds it
                     there (`make install PREFIX=DIR/build`); prints the library's directory

The program is compiled once against the hooked prefix; the stripped run only points
LD_LIBRARY_PATH at the other library (mpicc links with RUNPATH, which it overrides).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (file, text, replacement): the hooks' switches made constant.
STRIP = [
    ("crates/weft-core/src/events.rs", "ENABLED[kind as usize].load(Relaxed)", "false"),
    ("crates/weft-core/src/trace.rs", "    ON.load(Relaxed)\n}", "    false\n}"),
    ("crates/weft-core/src/stats.rs", "    TIMING.load(Relaxed)\n}", "    false\n}"),
    ("crates/weft-core/src/stats.rs", "MEASURED.load(Relaxed) != 0", "false"),
]


def build_stripped(dest):
    src = os.path.join(dest, "src")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    for f in files:
        if not os.path.isfile(os.path.join(ROOT, f)):
            continue
        os.makedirs(os.path.dirname(os.path.join(src, f)) or src, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(src, f))
    for f, old, new in STRIP:
        p = os.path.join(src, f)
        text = open(p).read()
        if text.count(old) != 1:
            sys.exit(f"hooks.py: {f} no longer has exactly one {old!r}: update STRIP")
        open(p, "w").write(text.replace(old, new))
    # Start from this tree's compiled crates, so that only the changed ones are rebuilt.
    built = os.path.join(ROOT, "target", "release")
    if os.path.isdir(built):
        os.makedirs(os.path.join(src, "target"), exist_ok=True)
        subprocess.run(["cp", "-a", built, os.path.join(src, "target")], check=True)
    prefix = os.path.join(dest, "build")
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=src, check=True)
    lib = os.path.join(prefix, "lib")
    return lib


def run_once(prefix, exe, iters, lib=None):
    env = dict(os.environ)
    if lib:
        env["LD_LIBRARY_PATH"] = lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    out = subprocess.run([os.path.join(prefix, "bin", "mpiexec"), "-n", "2", exe, str(iters)],
                         env=env, check=True, capture_output=True, text=True, timeout=300).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines() if line)}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hooked", default=os.path.join(ROOT, "build"))
    ap.add_argument("--stripped")
    ap.add_argument("--build-stripped")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--exe", help="an already compiled hooks.c (else built with mpicc)")
    a = ap.parse_args()
    if a.build_stripped:
        print(build_stripped(a.build_stripped))
        return
    if not a.stripped:
        sys.exit("hooks.py: give --stripped LIB (or make it with --build-stripped DIR)")
    exe = a.exe
    if not exe:
        exe = os.path.join(tempfile.mkdtemp(prefix="weft-hooks-"), "hooks")
        subprocess.run([os.path.join(a.hooked, "bin", "mpicc"), "-O2",
                        os.path.join(ROOT, "bench", "hooks.c"), "-o", exe], check=True)
    samples = {"hooked": [], "stripped": []}
    for r in range(a.rounds):
        # Alternate which goes first, so neither always runs on the warmer machine.
        order = ["hooked", "stripped"] if r % 2 == 0 else ["stripped", "hooked"]
        for which in order:
            lib = a.stripped if which == "stripped" else None
            samples[which].append(run_once(a.hooked, exe, a.iters, lib))
    print(f"{a.rounds} interleaved rounds, 2 ranks, {a.iters} iterations; median, then best")
    print(f"{'measure':<12}{'stripped':>10}{'hooked, off':>13}{'ratio':>7}"
          f"{'best s':>10}{'best h':>10}{'ratio':>7}")
    for m, unit, best in (("call", "ns", min), ("latency", "us", min), ("rate", "msg/s", max)):
        s = statistics.median(x[m] for x in samples["stripped"])
        h = statistics.median(x[m] for x in samples["hooked"])
        bs = best(x[m] for x in samples["stripped"])
        bh = best(x[m] for x in samples["hooked"])
        print(f"{m + ' ' + unit:<12}{s:>10.4g}{h:>13.4g}{h / s:>7.3f}"
              f"{bs:>10.4g}{bh:>10.4g}{bh / bs:>7.3f}")


if __name__ == "__main__":
    main()
