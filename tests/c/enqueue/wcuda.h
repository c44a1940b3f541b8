/* The few CUDA runtime functions the CUDA enqueue tests and bench/enqueue_cuda.c use, found
 * with dlopen at run time (as Weft itself finds them), so that these programs build without
 * the CUDA toolkit and skip where CUDA is absent. Prototypes are declared by hand after the
 * CUDA runtime API; a cudaStream_t is an opaque pointer.
 *
 * wcuda_load() returns NULL when CUDA is usable, else why not. wcuda_skip(why) is the
 * skip: rank 0 prints "SKIP: why", every rank finalizes MPI and exits with status 77
 * (tests/run.py counts a job that exits 77 under the manifest option `may-skip` as skipped,
 * never as passed). */
#ifndef WCUDA_H
#define WCUDA_H

#include <dlfcn.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *wcuda_stream;
enum { WCUDA_H2D = 1, WCUDA_D2H = 2, WCUDA_D2D = 3 };

static struct {
    int (*GetDeviceCount)(int *);
    int (*StreamCreate)(wcuda_stream *);
    int (*StreamDestroy)(wcuda_stream);
    int (*StreamSynchronize)(wcuda_stream);
    int (*StreamQuery)(wcuda_stream);
    int (*Malloc)(void **, size_t);
    int (*Free)(void *);
    int (*MallocHost)(void **, size_t);
    int (*FreeHost)(void *);
    int (*MemcpyAsync)(void *, const void *, size_t, int, wcuda_stream);
    int (*MemsetAsync)(void *, int, size_t, wcuda_stream);
    int (*Memcpy)(void *, const void *, size_t, int);
    const char *(*GetErrorString)(int);
    int (*LaunchHostFunc)(wcuda_stream, void (*)(void *), void *);
    int (*PointerGetAttributes)(void *, const void *);
} wcuda;

static __attribute__((unused)) const char *wcuda_load(void)
{
    static const char *names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                  "libcudart.so.11.0"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return "libcudart.so is not loadable (no CUDA runtime)";
#define WCUDA_SYM(f)                                                                     \
    do {                                                                                 \
        *(void **)&wcuda.f = dlsym(lib, "cuda" #f);                                      \
        if (!wcuda.f)                                                                    \
            return "the CUDA runtime lacks cuda" #f;                                     \
    } while (0)
    WCUDA_SYM(GetDeviceCount);
    WCUDA_SYM(StreamCreate);
    WCUDA_SYM(StreamDestroy);
    WCUDA_SYM(StreamSynchronize);
    WCUDA_SYM(StreamQuery);
    WCUDA_SYM(Malloc);
    WCUDA_SYM(Free);
    WCUDA_SYM(MallocHost);
    WCUDA_SYM(FreeHost);
    WCUDA_SYM(MemcpyAsync);
    WCUDA_SYM(MemsetAsync);
    WCUDA_SYM(Memcpy);
    WCUDA_SYM(GetErrorString);
    WCUDA_SYM(LaunchHostFunc);
    WCUDA_SYM(PointerGetAttributes);
#undef WCUDA_SYM
    int n = 0;
    if (wcuda.GetDeviceCount(&n) != 0 || n < 1)
        return "the CUDA runtime found no device";
    return NULL;
}

/* The CUDA call must succeed; otherwise say which and abort the job (a broken device is
 * not a test result worth continuing). */
#define CU(call)                                                                         \
    do {                                                                                 \
        int cu_ = (call);                                                                \
        if (cu_ != 0) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed: CUDA error %d (%s)\n", __FILE__, __LINE__,   \
                    #call, cu_, wcuda.GetErrorString(cu_));                              \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                \
        }                                                                                \
    } while (0)

static __attribute__((unused)) void wcuda_skip(int rank, const char *why)
{
    if (rank == 0) {
        printf("SKIP: %s\n", why);
        fflush(stdout);
    }
    MPI_Finalize();
    exit(77);
}

/* An MPIX stream on `cs`: info "type" = "cudaStream_t", "value" = the stream in hex. */
static __attribute__((unused)) int wcuda_mpix_stream(wcuda_stream cs, MPIX_Stream *out)
{
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc == MPI_SUCCESS)
        rc = MPI_Info_set(info, "type", "cudaStream_t");
    if (rc == MPI_SUCCESS)
        rc = MPIX_Info_set_hex(info, "value", &cs, sizeof cs);
    if (rc == MPI_SUCCESS)
        rc = MPIX_Stream_create(info, out);
    MPI_Info_free(&info);
    return rc;
}

#endif
