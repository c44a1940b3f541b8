/* The shared memory of a group communicator's collectives: the first member sets it up while
 * the members still agree on the context id. A communicator freed before any collective
 * leaves nothing in /dev/shm; one that runs collectives gets correct results from it. */
#include <dirent.h>
#include <unistd.h>
#include "wtest.h"

/* Entries of /dev/shm holding collective areas created by process `pid`. */
static int areas_of(int pid)
{
    char needle[32];
    struct dirent *e;
    int n = 0;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    snprintf(needle, sizeof needle, ".coll.%d.", pid);
    while ((e = readdir(d)))
        n += strstr(e->d_name, needle) != NULL;
    closedir(d);
    return n;
}

int main(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    int i, rank, size, pid = (int)getpid(), root_pid, sum;
    char tag[32];
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    for (i = 0; i < 20; i++) {
        snprintf(tag, sizeof tag, "weft.test.unused.%d", i);
        EXPECT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        EXPECT_OK(MPI_Comm_free(&c));
    }
    EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.used", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    wtest_rank = rank;
    /* Rank 0 created the areas; everyone checks that the unused ones are gone. */
    root_pid = pid;
    EXPECT_OK(MPI_Bcast(&root_pid, 1, MPI_INT, 0, c));
    CHECK(areas_of(root_pid) <= 1, "%d collective areas of rank 0 left in /dev/shm (at most the live one)", areas_of(root_pid));
    for (i = 0; i < 10; i++) {
        int mine = rank + i;
        EXPECT_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK_INT(sum, size * (size - 1) / 2 + size * i);
    }
    EXPECT_OK(MPI_Barrier(c));
    CHECK_INT(areas_of(root_pid), 0);
    EXPECT_OK(MPI_Comm_free(&c));
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    return wtest_finish();
}
