/* 100 session init/finalize cycles, each building a communicator and using it: resident
 * memory, open file descriptors and /dev/shm entries stay constant, and finalizing the last
 * session releases the shared memory (no weft segment stays mapped) that the next session
 * maps again. */
#include "wtest.h"
#include <dirent.h>

static long resident_kb(void)
{
    long kb = -1;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static int count_dir(const char *path, const char *prefix)
{
    int n = 0;
    struct dirent *e;
    DIR *d = opendir(path);
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && !strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Shared-memory segments of Weft mapped into this process. */
static int weft_mappings(void)
{
    int n = 0;
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "/dev/shm/weft.") != NULL;
    if (f)
        fclose(f);
    return n;
}

static int mapped_while_open, mapped_after;

static void cycle(int *errs)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    int rank, size, sum = 0, one = 1;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, "weft.test.cycles", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    if (sum != size)
        (*errs)++;
    if (size > 1 && weft_mappings() > 0)
        mapped_while_open++;
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    mapped_after += weft_mappings();
}

int main(void)
{
    int errs = 0, i, fds0, fds1, shm0, shm1;
    long rss0, rss1;
    for (i = 0; i < 10; i++) /* warm up: first-use allocations settle */
        cycle(&errs);
    rss0 = resident_kb();
    fds0 = count_dir("/proc/self/fd", "");
    shm0 = count_dir("/dev/shm", "weft.");
    for (i = 0; i < 100; i++)
        cycle(&errs);
    rss1 = resident_kb();
    fds1 = count_dir("/proc/self/fd", "");
    shm1 = count_dir("/dev/shm", "weft.");
    CHECK(errs == 0, "%d cycles computed a wrong sum", errs);
    CHECK_INT(mapped_after, 0);
    {
        int size;
        MPI_Session s;
        MPI_Group g;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Group_size(g, &size);
        MPI_Group_free(&g);
        MPI_Session_finalize(&s);
        if (size > 1)
            CHECK_INT(mapped_while_open, 110);
    }
    CHECK(fds1 == fds0, "open descriptors went from %d to %d", fds0, fds1);
    CHECK(shm1 <= shm0, "/dev/shm weft entries went from %d to %d", shm0, shm1);
    CHECK(rss1 - rss0 < 2048, "resident memory grew by %ld kB over 100 cycles", rss1 - rss0);
    return wtest_finish();
}
