/* Helpers for Weft's C conformance tests. Header-only: every test includes it once.
 *
 * A test counts failed checks; wtest_finish() prints " No Errors" on rank 0 when this rank
 * found none and returns the exit status for main (1 when this rank found errors, so the job's
 * exit status — the worst rank's — shows a failure on any rank). Each failed check prints
 * file:line, the expression and the values to stderr. */
#ifndef WTEST_H
#define WTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WTEST_UNUSED __attribute__((unused))

static int wtest_errs = 0;
static int wtest_rank = 0; /* refreshed by wtest_world_rank() while MPI is initialized */

static void wtest_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void wtest_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    wtest_errs++;
    fprintf(stderr, "[rank %d] %s:%d: ", wtest_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

#define FAIL(...) wtest_fail(__FILE__, __LINE__, __VA_ARGS__)

/* CHECK(cond, "fmt", args...): fail with the message when cond is false. */
#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            FAIL("check failed: %s", #cond);                                             \
            fprintf(stderr, "    ");                                                     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

#define CHECK_INT(actual, expected)                                                      \
    do {                                                                                 \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                  \
        if (a_ != e_)                                                                    \
            FAIL("%s = %lld (0x%llx), expected %s = %lld (0x%llx)", #actual, a_,         \
                 (unsigned long long)a_, #expected, e_, (unsigned long long)e_);         \
    } while (0)

#define CHECK_STR(actual, expected)                                                      \
    do {                                                                                 \
        const char *a_ = (actual), *e_ = (expected);                                     \
        if (strcmp(a_, e_) != 0)                                                         \
            FAIL("%s = \"%s\", expected \"%s\"", #actual, a_, e_);                       \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                      \
    do {                                                                                 \
        const char *h_ = (hay), *n_ = (needle);                                          \
        if (!strstr(h_, n_))                                                             \
            FAIL("%s = \"%s\" does not contain \"%s\"", #hay, h_, n_);                   \
    } while (0)

static WTEST_UNUSED const char *wtest_string(int code)
{
    static char buf[MPI_MAX_ERROR_STRING + 1];
    int len = -1;
    buf[0] = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
        snprintf(buf, sizeof buf, "(MPI_Error_string(%d) failed)", code);
    return buf;
}

/* The call must succeed. */
#define EXPECT_OK(call)                                                                  \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS)                                                          \
            FAIL("%s returned %d: %s", #call, rc_, wtest_string(rc_));                   \
    } while (0)

static WTEST_UNUSED void wtest_expect(int rc, int cls, const char *call, const char *clsname,
                         const char *needle1, const char *needle2, const char *file, int line)
{
    int got = -1, len = -1;
    char s[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS) {
        wtest_fail(file, line, "%s succeeded, expected %s", call, clsname);
        return;
    }
    if (MPI_Error_class(rc, &got) != MPI_SUCCESS) {
        wtest_fail(file, line, "%s returned %d, which MPI_Error_class rejects", call, rc);
        return;
    }
    s[0] = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) {
        wtest_fail(file, line, "%s returned %d, which MPI_Error_string rejects", call, rc);
        return;
    }
    if (got != cls)
        wtest_fail(file, line, "%s gave class %d, expected %s (%d); string: %s", call, got,
                   clsname, cls, s);
    if (len != (int)strlen(s))
        wtest_fail(file, line, "%s: MPI_Error_string resultlen %d != strlen %d", call, len,
                   (int)strlen(s));
    if (needle1 && !strstr(s, needle1))
        wtest_fail(file, line, "%s: error string \"%s\" does not name \"%s\"", call, s, needle1);
    if (needle2 && !strstr(s, needle2))
        wtest_fail(file, line, "%s: error string \"%s\" does not name \"%s\"", call, s, needle2);
}

/* The call must fail with error class `cls`. */
#define EXPECT_CLASS(call, cls)                                                          \
    wtest_expect((call), (cls), #call, #cls, NULL, NULL, __FILE__, __LINE__)
/* ... and its error string must contain `func` (and `arg`, when not NULL). */
#define EXPECT_ERR(call, cls, func, arg)                                                 \
    wtest_expect((call), (cls), #call, #cls, (func), (arg), __FILE__, __LINE__)

/* Errors return instead of aborting, on both predefined communicators. */
static WTEST_UNUSED void wtest_errors_return(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static WTEST_UNUSED int wtest_world_rank(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &wtest_rank);
    return wtest_rank;
}

/* Report and give main's exit status. Call it before or after MPI_Finalize. */
static WTEST_UNUSED int wtest_finish(void)
{
    int rank = wtest_world_rank();
    if (wtest_errs) {
        fprintf(stderr, "[rank %d] Found %d errors\n", rank, wtest_errs);
        fflush(stderr);
        return 1;
    }
    if (rank == 0) {
        printf(" No Errors\n");
        fflush(stdout);
    }
    return 0;
}

/* An integer from the environment (the manifest's env=), or `dflt`. */
static WTEST_UNUSED int wtest_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* A handle value that is no handle of any kind. */
#define WTEST_GARBAGE 0x12345678

/* How many collective areas (the node-level shared memory of a communicator's collectives,
 * /dev/shm/weft.*.coll.*) this process has mapped: -1 when /proc/self/maps is unreadable. */
static inline int wtest_coll_areas(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "/dev/shm/weft.") && strstr(line, ".coll."))
            n++;
    fclose(f);
    return n;
}

#ifdef _GNU_SOURCE
#include <sys/uio.h>
#include <unistd.h>

/* Whether this kernel lets rank 1 of MPI_COMM_WORLD read rank 0's memory with
 * process_vm_readv (Weft's single-copy path); collective over MPI_COMM_WORLD. Needs
 * _GNU_SOURCE defined before the first system header. */
static WTEST_UNUSED int wtest_cma_allowed(void)
{
    static unsigned long long probe = 0x1122334455667788ull;
    unsigned long long addr = (unsigned long long)(size_t)&probe, got = 0;
    int pid = getpid(), ok = 1, rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&addr, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        struct iovec local = {&got, sizeof got}, remote = {(void *)(size_t)addr, sizeof got};
        ok = process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof got &&
             got == probe;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
    return ok;
}
#endif

#endif
