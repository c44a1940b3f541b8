/* Seed 000's generalized-request example with the CUDA work replaced by an asynchronous CPU
 * task: a POSIX AIO read (aio_read) wrapped in an MPIX_Grequest_start request whose poll_fn
 * checks aio_error and calls MPI_Grequest_complete once the read is done. MPI_Wait drives
 * poll_fn, so the request completes inside MPI_Wait with no helper thread of ours.
 *
 *   mpicc examples/grequest_aio.c -o grequest_aio -lrt && mpiexec -n 1 ./grequest_aio
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N (1 << 20)

struct grequest_state {
    struct aiocb cb;
    MPI_Request request;
    int polls;
};

static int query_fn(void *extra_state, MPI_Status *status)
{
    struct grequest_state *p = extra_state;
    MPI_Status_set_elements(status, MPI_BYTE, (int)aio_return(&p->cb));
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_fn(void *extra_state) { (void)extra_state; return MPI_SUCCESS; }
static int cancel_fn(void *extra_state, int complete)
{
    (void)extra_state; (void)complete;
    return MPI_SUCCESS;
}

static int poll_fn(void *extra_state, MPI_Status *status)
{
    struct grequest_state *p = extra_state;
    (void)status;
    p->polls++;
    if (aio_error(&p->cb) != EINPROGRESS)
        MPI_Grequest_complete(p->request);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    char path[] = "/tmp/weft_grequest_aioXXXXXX";
    int fd, i, count = -1, errs = 0;
    char *data = malloc(N), *in = malloc(N);
    struct grequest_state state;
    MPI_Status status;

    MPI_Init(&argc, &argv);
    for (i = 0; i < N; i++)
        data[i] = (char)(i * 7 + 3);
    fd = mkstemp(path);
    if (fd < 0 || write(fd, data, N) != N) {
        perror("grequest_aio: temporary file");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unlink(path);

    memset(&state, 0, sizeof state);
    state.cb.aio_fildes = fd;
    state.cb.aio_buf = in;
    state.cb.aio_nbytes = N;
    state.cb.aio_offset = 0;
    state.cb.aio_sigevent.sigev_notify = SIGEV_NONE;
    MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, NULL, &state, &state.request);
    if (aio_read(&state.cb) != 0) {
        perror("aio_read");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Wait(&state.request, &status);

    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count != N)
        errs++, fprintf(stderr, "read %d bytes, expected %d\n", count, N);
    if (memcmp(in, data, N) != 0)
        errs++, fprintf(stderr, "the data read differs from the data written\n");
    if (state.polls < 1)
        errs++, fprintf(stderr, "poll_fn was never called\n");
    close(fd);
    free(data);
    free(in);
    printf("read %d bytes asynchronously; poll_fn called %d times inside MPI_Wait\n", count,
           state.polls);
    MPI_Finalize();
    if (errs == 0)
        printf(" No Errors\n");
    return errs != 0;
}
