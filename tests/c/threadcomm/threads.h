/* Running a function on N threads for the thread-communicator tests: an OpenMP parallel
 * region when built with -fopenmp, else plain pthreads. */
#ifndef THREADS_H
#define THREADS_H

#ifdef _OPENMP
#include <omp.h>
static void run_threads(int n, void (*fn)(void *), void *arg)
{
#pragma omp parallel num_threads(n)
    fn(arg);
}
#else
#include <pthread.h>
struct run_threads_arg {
    void (*fn)(void *);
    void *arg;
};
static void *run_threads_body(void *p)
{
    struct run_threads_arg *a = p;
    a->fn(a->arg);
    return NULL;
}
static void run_threads(int n, void (*fn)(void *), void *arg)
{
    pthread_t t[64];
    struct run_threads_arg a = {fn, arg};
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, run_threads_body, &a);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}
#endif

#endif
