/* The per-communicator algorithm counters of the collectives (MPI_T performance variables
 * `weft_coll_<collective>_<algorithm>`), read through one pvar session. A test creates the
 * session (`MPI_T_pvar_session_create(&s)`) before its first `counter`. */
#ifndef WEFT_TEST_COLL_COUNTERS_H
#define WEFT_TEST_COLL_COUNTERS_H
#include "wtest.h"

static MPI_T_pvar_session s;

/* A started handle of counter `name` bound to `comm`. */
static MPI_T_pvar_handle counter(const char *name, MPI_Comm *comm)
{
    int i = -1, count;
    MPI_T_pvar_handle h;
    EXPECT_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, i, comm, &h, &count));
    EXPECT_OK(MPI_T_pvar_start(s, h));
    return h;
}

static unsigned long long value(MPI_T_pvar_handle h)
{
    unsigned long long v = 999;
    EXPECT_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}
#endif
