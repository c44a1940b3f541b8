/* After a normal MPI_Finalize rank 1 returns 5 from main: the job's status is the worst, 5. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    return rank == 1 ? 5 : 0;
}
