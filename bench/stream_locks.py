#!/usr/bin/env python3
"""Lock instructions on the stream path (issue #15): runs `bench/stream.c rate MODE` on 2 ranks
under callgrind (instruction-level counts), finds every lock-prefixed instruction (and `xchg`
with memory, which locks implicitly) in Weft's library with objdump, and prints how often each
function of the library executed one, per message sent, for rank 0 (the sender).

    python3 bench/stream_locks.py [--weft PREFIX] [--mode stream|implicit|single] [--iters N]

Needs valgrind and objdump. Only what runs inside `windows` (the measured loop, warm-up
included) is counted: MPI_Isend, MPI_Waitall, the acknowledgement's MPI_Recv, MPI_Barrier.
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def lock_addresses(lib):
    """Addresses (as objdump prints them) of lock-prefixed or implicitly locked instructions."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)$", line)
        if not m:
            continue
        ins = m.group(2).strip()
        if ins.startswith("lock ") or (ins.startswith("xchg") and "(" in ins):
            found[int(m.group(1), 16)] = ins
    return found


def instruction_costs(path):
    """(object, function, address) -> executed count, from a callgrind file with --dump-instr."""
    costs = collections.Counter()
    names = {"ob": {}, "fn": {}}
    ob = fn = None
    addr = 0
    skip_next = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(c?)(ob|fn|fl|fi|fe)=\((\d+)\)(?: (.*))?$", line)
            if m:
                callee, kind, idx, name = m.groups()
                if kind in names:
                    if name is not None:
                        names[kind][idx] = name
                    if not callee:
                        if kind == "ob":
                            ob = names["ob"].get(idx)
                        elif kind == "fn":
                            fn = names["fn"].get(idx)
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+(\d+)", line)
            if not m:
                continue
            pos, cost = m.group(1), int(m.group(2))
            if pos.startswith("0x"):
                addr = int(pos, 16)
            elif pos != "*":
                addr += int(pos)
            if skip_next:
                skip_next = False
                continue
            costs[(ob, fn, addr)] += cost
    return costs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weft", default=os.path.join(REPO, "build"))
    ap.add_argument("--mode", default="stream")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    lib = os.path.realpath(os.path.join(args.weft, "lib", "libmpi_abi.so"))
    locks = lock_addresses(lib)
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "stream")
        subprocess.run([os.path.join(args.weft, "bin", "mpicc"), "-O2",
                        os.path.join(REPO, "bench", "stream.c"), "-o", exe], check=True)
        wrapper = os.path.join(tmp, "cg.sh")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec valgrind -q --tool=callgrind --dump-instr=yes --toggle-collect=windows "
                    f"--callgrind-out-file={tmp}/cg.$PMI_RANK \"$@\"\n")
        os.chmod(wrapper, 0o755)
        run = subprocess.run([os.path.join(args.weft, "bin", "mpiexec"), "-n", "2", wrapper, exe, "rate",
                              args.mode, str(args.iters)], capture_output=True, text=True, timeout=1200)
        if run.returncode != 0:
            sys.exit(f"run failed:\n{run.stderr[-2000:]}")
        # The program runs the loop 7 times after a warm-up of iters/10 + 1 windows of 64.
        messages = (7 * args.iters + args.iters // 10 + 1) * 64
        costs = instruction_costs(glob.glob(os.path.join(tmp, "cg.0*"))[0])
    per_fn = collections.Counter()
    total = 0
    for (ob, fn, addr), n in costs.items():
        if ob and os.path.realpath(ob) == lib and addr in locks:
            per_fn[fn] += n
            total += n
    print(f"mode {args.mode}: {messages} messages sent by rank 0; lock instructions executed in "
          f"{os.path.basename(lib)}: {total} ({total / messages:.2f} per message)")
    for fn, n in per_fn.most_common(20):
        print(f"  {n:>10}  {n / messages:8.3f}/msg  {fn}")


if __name__ == "__main__":
    main()
