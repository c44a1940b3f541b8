// A C++ program built with mpicxx: mpi.h works from C++ and links.
#include <mpi.h>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string version(lib, len);
    std::cout << "C++ hello from rank " << rank << " of " << size << " (" << version.substr(0, 4) << ")"
              << std::endl;
    MPI_Finalize();
    return version.rfind("Weft", 0) == 0 ? 0 : 1;
}
