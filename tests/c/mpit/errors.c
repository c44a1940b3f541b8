/* Every MPI_T function validates its arguments and returns MPI_T's error classes, never
 * through an errhandler (MPI_ERRORS_ARE_FATAL is left in place): calls before
 * MPI_T_init_thread, bad indices, handles, sessions, names, null pointers, writes of
 * read-only variables, start/stop of continuous ones; initialization is reference counted. */
#include "wtest.h"

int main(int argc, char **argv)
{
    int n = 0, provided;
    MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle ph = MPI_T_PVAR_HANDLE_NULL;

    MPI_Init(&argc, &argv);
    /* Not initialized. */
    CHECK_INT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_INT(MPI_T_init_thread(12345, &provided), MPI_T_ERR_INVALID);
    CHECK_INT(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);

    /* Reference counted: two inits, the first finalize leaves MPI_T usable. */
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    EXPECT_OK(MPI_T_finalize());
    EXPECT_OK(MPI_T_cvar_get_num(&n));

    int ncvar = n, npvar, ncat;
    EXPECT_OK(MPI_T_pvar_get_num(&npvar));
    EXPECT_OK(MPI_T_category_get_num(&ncat));
    CHECK_INT(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_INT(MPI_T_cvar_get_info(ncvar, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
    CHECK_INT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
    CHECK_INT(MPI_T_pvar_get_info(npvar, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
    CHECK_INT(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              MPI_T_ERR_INVALID_INDEX);
    CHECK_INT(MPI_T_event_get_info(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL),
              MPI_T_ERR_INVALID_INDEX);
    MPI_Count ts;
    CHECK_INT(MPI_T_source_get_timestamp(1, &ts), MPI_T_ERR_INVALID_INDEX);
    int idx;
    CHECK_INT(MPI_T_cvar_get_index("WEFT_NO_SUCH", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_INT(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    CHECK_INT(MPI_T_pvar_get_index("weft_msgs_sent_shm", MPI_T_PVAR_CLASS_LEVEL, &idx),
              MPI_T_ERR_INVALID_NAME);
    EXPECT_OK(MPI_T_pvar_get_index("weft_msgs_sent_shm", MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_INT(MPI_T_category_get_index("nope", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_INT(MPI_T_event_get_index("nope", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_INT(MPI_T_category_get_cvars(0, -1, &idx), MPI_T_ERR_INVALID);

    /* Control variable handles. */
    int vcis, bcast, count, v = 2;
    EXPECT_OK(MPI_T_cvar_get_index("WEFT_NUM_VCIS", &vcis));
    EXPECT_OK(MPI_T_cvar_get_index("WEFT_COLL_BCAST", &bcast));
    CHECK_INT(MPI_T_cvar_handle_alloc(vcis, NULL, NULL, &count), MPI_T_ERR_INVALID);
    CHECK_INT(MPI_T_cvar_handle_alloc(bcast, NULL, &ch, &count), MPI_T_ERR_INVALID);
    MPI_Comm bad = (MPI_Comm)(intptr_t)WTEST_GARBAGE;
    CHECK_INT(MPI_T_cvar_handle_alloc(bcast, &bad, &ch, &count), MPI_T_ERR_INVALID_HANDLE);
    EXPECT_OK(MPI_T_cvar_handle_alloc(vcis, NULL, &ch, &count));
    CHECK_INT(MPI_T_cvar_write(ch, &v), MPI_T_ERR_CVAR_SET_NEVER);
    CHECK_INT(MPI_T_cvar_read(ch, NULL), MPI_T_ERR_INVALID);
    MPI_T_cvar_handle stale = ch;
    EXPECT_OK(MPI_T_cvar_handle_free(&ch));
    CHECK_INT(MPI_T_cvar_read(stale, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_INT(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    CHECK_INT(MPI_T_cvar_read((MPI_T_cvar_handle)(intptr_t)WTEST_GARBAGE, &v),
              MPI_T_ERR_INVALID_HANDLE);
    /* A bound variable: only valid values. */
    MPI_Comm world = MPI_COMM_WORLD;
    EXPECT_OK(MPI_T_cvar_handle_alloc(bcast, &world, &ch, &count));
    v = 99;
    CHECK_INT(MPI_T_cvar_write(ch, &v), MPI_T_ERR_INVALID);
    EXPECT_OK(MPI_T_cvar_handle_free(&ch));
    /* Enumerations. */
    MPI_T_enum et;
    EXPECT_OK(MPI_T_cvar_get_info(bcast, NULL, NULL, NULL, NULL, &et, NULL, NULL, NULL, NULL));
    CHECK_INT(MPI_T_enum_get_item(et, 99, &v, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    CHECK_INT(MPI_T_enum_get_info((MPI_T_enum)(intptr_t)WTEST_GARBAGE, &v, NULL, NULL),
              MPI_T_ERR_INVALID_HANDLE);

    /* Sessions and performance variable handles. */
    CHECK_INT(MPI_T_pvar_handle_alloc(s, idx, NULL, &ph, &count), MPI_T_ERR_INVALID_SESSION);
    EXPECT_OK(MPI_T_pvar_session_create(&s));
    int sent, uq;
    EXPECT_OK(MPI_T_pvar_get_index("weft_msgs_sent_shm", MPI_T_PVAR_CLASS_COUNTER, &sent));
    EXPECT_OK(MPI_T_pvar_get_index("weft_unexpected_queue_len", MPI_T_PVAR_CLASS_LEVEL, &uq));
    CHECK_INT(MPI_T_pvar_handle_alloc(s, npvar, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX);
    MPI_T_pvar_handle level;
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, uq, NULL, &level, &count));
    CHECK_INT(MPI_T_pvar_start(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_INT(MPI_T_pvar_stop(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_INT(MPI_T_pvar_reset(s, level), MPI_T_ERR_PVAR_NO_WRITE);
    unsigned long long val = 5;
    CHECK_INT(MPI_T_pvar_write(s, level, &val), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT_OK(MPI_T_pvar_handle_alloc(s, sent, NULL, &ph, &count));
    CHECK_INT(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &val), MPI_T_ERR_INVALID_HANDLE);
    CHECK_INT(MPI_T_pvar_read(s, (MPI_T_pvar_handle)(intptr_t)WTEST_GARBAGE, &val),
              MPI_T_ERR_INVALID_HANDLE);
    /* ALL_HANDLES starts what can be started and skips the continuous ones. */
    EXPECT_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    EXPECT_OK(MPI_T_pvar_write(s, ph, &val));
    EXPECT_OK(MPI_T_pvar_read(s, ph, &val));
    CHECK_INT(val, 5);
    EXPECT_OK(MPI_T_pvar_readreset(s, ph, &val));
    CHECK_INT(val, 5);
    EXPECT_OK(MPI_T_pvar_read(s, ph, &val));
    CHECK_INT(val, 0);
    EXPECT_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    /* A handle of another session. */
    MPI_T_pvar_session s2;
    EXPECT_OK(MPI_T_pvar_session_create(&s2));
    CHECK_INT(MPI_T_pvar_read(s2, ph, &val), MPI_T_ERR_INVALID_HANDLE);
    CHECK_INT(MPI_T_pvar_handle_free(s2, &ph), MPI_T_ERR_INVALID_HANDLE);
    EXPECT_OK(MPI_T_pvar_session_free(&s2));
    CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "session reset");
    MPI_T_pvar_session stale_s = s;
    EXPECT_OK(MPI_T_pvar_session_free(&s));
    CHECK_INT(MPI_T_pvar_read(stale_s, ph, &val), MPI_T_ERR_INVALID_SESSION);
    CHECK_INT(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);

    /* Events: registrations and instances. */
    MPI_T_event_registration reg;
    CHECK_INT(MPI_T_event_handle_alloc(7, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    EXPECT_OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg));
    CHECK_INT(MPI_T_event_register_callback(reg, 77, MPI_INFO_NULL, NULL, NULL),
              MPI_T_ERR_INVALID);
    CHECK_INT(MPI_T_event_read((MPI_T_event_instance)(intptr_t)WTEST_GARBAGE, 0, &val),
              MPI_T_ERR_INVALID_HANDLE);
    MPI_Info used;
    EXPECT_OK(MPI_T_event_handle_get_info(reg, &used));
    int nkeys = -1;
    MPI_Info_get_nkeys(used, &nkeys);
    CHECK_INT(nkeys, 0);
    MPI_Info_free(&used);
    EXPECT_OK(MPI_T_event_handle_free(reg, NULL, NULL));
    CHECK_INT(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_INT(MPI_T_event_set_dropped_handler(reg, NULL), MPI_T_ERR_INVALID_HANDLE);

    EXPECT_OK(MPI_T_finalize());
    CHECK_INT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    /* MPI_T's classes are error classes. */
    int cls = -1;
    EXPECT_OK(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls));
    CHECK_INT(cls, MPI_T_ERR_INVALID_HANDLE);
    CHECK_CONTAINS(wtest_string(MPI_T_ERR_PVAR_NO_STARTSTOP), "MPI_T_ERR_PVAR_NO_STARTSTOP");
    int rc = wtest_finish();
    MPI_Finalize();
    return rc;
}
