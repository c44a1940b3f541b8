/* Creating communicators from a group until no context id is left: the creation itself
 * returns (the agreement runs afterwards), the first use of the communicator reports the
 * failed agreement with MPI_ERR_OTHER, the failed communicator can still be freed, and
 * once others are freed creation works again. */
#include "wtest.h"

#define MAX 9000

static MPI_Comm comms[MAX];

int main(void)
{
    MPI_Session s;
    MPI_Group g;
    char tag[64];
    int i, n = 0, rank = -1, failed_at = -1;
    EXPECT_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    EXPECT_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    for (i = 0; i < MAX; i++) {
        snprintf(tag, sizeof tag, "weft.test.exhausted.%d", i);
        EXPECT_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comms[i]));
        n = i + 1;
        int rc = MPI_Comm_rank(comms[i], &rank);
        if (rc != MPI_SUCCESS) {
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK_INT(cls, MPI_ERR_OTHER);
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            CHECK_CONTAINS(msg, "no context id is free");
            failed_at = i;
            break;
        }
    }
    CHECK(failed_at > 1000, "ids ran out after %d communicators", failed_at);
    for (i = 0; i < n; i++)
        EXPECT_OK(MPI_Comm_free(&comms[i]));
    /* Everything given back: a new one works. */
    MPI_Comm again;
    EXPECT_OK(MPI_Comm_create_from_group(g, "weft.test.exhausted.again", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &again));
    int size = -1, v = 7;
    EXPECT_OK(MPI_Comm_size(again, &size));
    EXPECT_OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, again));
    CHECK_INT(v, 7 * size);
    EXPECT_OK(MPI_Comm_free(&again));
    EXPECT_OK(MPI_Group_free(&g));
    EXPECT_OK(MPI_Session_finalize(&s));
    return wtest_finish();
}
