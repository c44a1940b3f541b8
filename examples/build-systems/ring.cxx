// The ring of ring.c, from C++ (the C API: MPI has no C++ bindings since MPI-3).
#include <mpi.h>
#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(size);
    int mine = rank + 1;
    MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int sum = 0;
    for (int v : all)
        sum += v;
    if (rank == 0)
        std::printf("ring (C++): sum %d, expected %d\n", sum, size * (size + 1) / 2);
    if (sum != size * (size + 1) / 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    return 0;
}
