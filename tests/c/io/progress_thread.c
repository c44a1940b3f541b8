/* Nonblocking reads completed by another thread's progress: the main thread starts an
 * MPI_File_iread_at and only looks at MPIX_Request_is_complete (which makes no progress)
 * while a thread of the program calls MPIX_Stream_progress(MPIX_STREAM_NULL), as a progress
 * thread does; the request completes without the main thread entering MPI_Wait or MPI_Test,
 * and the data is right. Run with each engine. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wtest.h"

#define LEN (1 << 20)

static atomic_int stop;

static void *progress(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        MPIX_Stream_progress(MPIX_STREAM_NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    char path[200];
    char *buf = malloc(LEN), *back = malloc(LEN);
    MPI_File fh;
    MPI_Request req;
    MPI_Status st;
    pthread_t t;
    EXPECT_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK_INT(provided, MPI_THREAD_MULTIPLE);
    wtest_world_rank();
    snprintf(path, sizeof path, "/tmp/weft_io_progress.%d", (int)getpid());
    for (int i = 0; i < LEN; i++)
        buf[i] = (char)(i * 7);
    EXPECT_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    EXPECT_OK(MPI_File_write_at(fh, 0, buf, LEN, MPI_BYTE, &st));
    pthread_create(&t, NULL, progress, NULL);
    for (int round = 0; round < 3; round++) {
        memset(back, 0, LEN);
        EXPECT_OK(MPI_File_iread_at(fh, 0, back, LEN, MPI_BYTE, &req));
        long spins = 0;
        while (!MPIX_Request_is_complete(req) && spins < 2000000000L)
            spins++;
        CHECK(MPIX_Request_is_complete(req), "round %d: not completed by the progress thread", round);
        EXPECT_OK(MPI_Wait(&req, &st));
        CHECK(memcmp(buf, back, LEN) == 0, "round %d: data differs", round);
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    EXPECT_OK(MPI_File_close(&fh));
    free(buf);
    free(back);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
