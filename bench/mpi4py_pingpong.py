"""mpi4py's 8-byte ping-pong: comm.Send/comm.Recv on numpy buffers between ranks 0 and 1.

Run it with the venv scripts/mpi4py.sh builds (mpi4py built against the standard ABI), on Weft
or, by choosing the library at run time, on MPICH's standard-ABI library:
    build/bin/mpiexec -n 2 ~/.cache/weft/mpi4py/bin/python bench/mpi4py_pingpong.py
    LD_LIBRARY_PATH=~/.cache/weft/mpich/lib ~/.cache/weft/mpich/bin/mpiexec -n 2 \\
        ~/.cache/weft/mpi4py/bin/python bench/mpi4py_pingpong.py
Prints the library and the median of 7 batches of one-way latency in microseconds.
"""
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

ITERS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
buf = np.zeros(1, dtype=np.float64)  # 8 bytes
peer = 1 - rank


def batch(n):
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(n):
        if rank == 0:
            comm.Send([buf, MPI.DOUBLE], dest=peer, tag=1)
            comm.Recv([buf, MPI.DOUBLE], source=peer, tag=1)
        else:
            comm.Recv([buf, MPI.DOUBLE], source=peer, tag=1)
            comm.Send([buf, MPI.DOUBLE], dest=peer, tag=1)
    return (time.perf_counter() - start) / (2 * n) * 1e6


batch(ITERS // 10)  # warm up
lat = [batch(ITERS) for _ in range(7)]
if rank == 0:
    lib = MPI.Get_library_version().splitlines()[0][:60]
    print(f"{lib}: 8-byte ping-pong one-way latency median {statistics.median(lat):.2f} us "
          f"(min {min(lat):.2f}, {ITERS} round trips x 7)")
