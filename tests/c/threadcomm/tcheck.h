/* Checks made on the threads of a thread-communicator test: a failed TEXPECT prints itself
 * and counts in errors_in_threads, which the main thread asserts is zero. */
#ifndef TCHECK_H
#define TCHECK_H

#include <stdatomic.h>
#include <stdio.h>

static atomic_int errors_in_threads;

#define TEXPECT(cond)                                                                  \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            atomic_fetch_add(&errors_in_threads, 1);                                   \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);        \
        }                                                                              \
    } while (0)

/* The error class of a return code. */
static inline int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#endif
