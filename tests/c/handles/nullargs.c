/* NULL output (and input) pointers give MPI_ERR_ARG with the argument named, for every
 * implemented function; invalid values give their classes. */
#include "wtest.h"

static void handler(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }

int main(int argc, char **argv)
{
    int v = -7, len = -7, flag = -7;
    char buf[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Info info;
    MPI_Errhandler eh;
    void *attr;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    EXPECT_ERR(MPI_Initialized(NULL), MPI_ERR_ARG, "MPI_Initialized", "flag");
    EXPECT_ERR(MPI_Finalized(NULL), MPI_ERR_ARG, "MPI_Finalized", "flag");
    EXPECT_ERR(MPI_Query_thread(NULL), MPI_ERR_ARG, "MPI_Query_thread", "provided");
    EXPECT_ERR(MPI_Is_thread_main(NULL), MPI_ERR_ARG, "MPI_Is_thread_main", "flag");
    EXPECT_ERR(MPI_Get_version(NULL, &v), MPI_ERR_ARG, "MPI_Get_version", "version");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Get_version(&v, NULL), MPI_ERR_ARG, "MPI_Get_version", "subversion");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Abi_get_version(NULL, &v), MPI_ERR_ARG, "MPI_Abi_get_version", "abi_major");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Abi_get_version(&v, NULL), MPI_ERR_ARG, "MPI_Abi_get_version", "abi_minor");
    CHECK_INT(v, -7);
    EXPECT_ERR(MPI_Abi_get_info(NULL), MPI_ERR_ARG, "MPI_Abi_get_info", "info");
    EXPECT_ERR(MPI_Get_library_version(NULL, &len), MPI_ERR_ARG, "MPI_Get_library_version", "version");
    EXPECT_ERR(MPI_Get_library_version(buf, NULL), MPI_ERR_ARG, "MPI_Get_library_version", "resultlen");
    EXPECT_ERR(MPI_Get_processor_name(NULL, &len), MPI_ERR_ARG, "MPI_Get_processor_name", "name");
    EXPECT_ERR(MPI_Get_processor_name(buf, NULL), MPI_ERR_ARG, "MPI_Get_processor_name", "resultlen");
    CHECK_INT(len, -7);
    {
        /* MPI_Init_thread again, with a NULL provided: an error either way, never a crash. */
        int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, NULL);
        CHECK(rc != MPI_SUCCESS, "MPI_Init_thread(provided=NULL) succeeded");
        if (rc != MPI_SUCCESS)
            CHECK_CONTAINS(wtest_string(rc), "MPI_Init_thread");
    }

    EXPECT_ERR(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_size", "size");
    EXPECT_ERR(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_rank", "rank");
    EXPECT_ERR(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name");
    EXPECT_ERR(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &len), MPI_ERR_ARG, "MPI_Comm_get_name", "comm_name");
    EXPECT_ERR(MPI_Comm_get_name(MPI_COMM_WORLD, buf, NULL), MPI_ERR_ARG, "MPI_Comm_get_name", "resultlen");
    CHECK_INT(len, -7);
    EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag), MPI_ERR_ARG, "MPI_Comm_get_attr", "attribute_val");
    EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, NULL), MPI_ERR_ARG, "MPI_Comm_get_attr", "flag");
    CHECK_INT(flag, -7);
    EXPECT_ERR(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler");
    EXPECT_ERR(MPI_Errhandler_free(NULL), MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler");
    EXPECT_ERR(MPI_Comm_create_errhandler(handler, NULL), MPI_ERR_ARG, "MPI_Comm_create_errhandler", "errhandler");
    EXPECT_ERR(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG, "MPI_Comm_create_errhandler", NULL);

    EXPECT_ERR(MPI_Error_class(MPI_ERR_ARG, NULL), MPI_ERR_ARG, "MPI_Error_class", "errorclass");
    EXPECT_ERR(MPI_Error_string(MPI_ERR_ARG, NULL, &len), MPI_ERR_ARG, "MPI_Error_string", "string");
    EXPECT_ERR(MPI_Error_string(MPI_ERR_ARG, buf, NULL), MPI_ERR_ARG, "MPI_Error_string", "resultlen");
    EXPECT_ERR(MPI_Add_error_class(NULL), MPI_ERR_ARG, "MPI_Add_error_class", "errorclass");
    EXPECT_ERR(MPI_Add_error_code(MPI_ERR_ARG, NULL), MPI_ERR_ARG, "MPI_Add_error_code", "errorcode");

    EXPECT_ERR(MPI_Info_create(NULL), MPI_ERR_ARG, "MPI_Info_create", "info");
    EXPECT_ERR(MPI_Info_free(NULL), MPI_ERR_ARG, "MPI_Info_free", "info");
    EXPECT_OK(MPI_Info_create(&info));
    EXPECT_OK(MPI_Info_set(info, "key", "value"));
    EXPECT_ERR(MPI_Info_set(info, NULL, "v"), MPI_ERR_ARG, "MPI_Info_set", "key");
    EXPECT_ERR(MPI_Info_set(info, "k", NULL), MPI_ERR_ARG, "MPI_Info_set", "value");
    {
        int buflen = 100;
        flag = -7;
        EXPECT_ERR(MPI_Info_get_string(info, NULL, &buflen, buf, &flag), MPI_ERR_ARG, "MPI_Info_get_string", "key");
        EXPECT_ERR(MPI_Info_get_string(info, "key", NULL, buf, &flag), MPI_ERR_ARG, "MPI_Info_get_string", "buflen");
        EXPECT_ERR(MPI_Info_get_string(info, "key", &buflen, buf, NULL), MPI_ERR_ARG, "MPI_Info_get_string", "flag");
        EXPECT_ERR(MPI_Info_get_string(info, "key", &buflen, NULL, &flag), MPI_ERR_ARG, "MPI_Info_get_string", "value");
        CHECK_INT(flag, -7);
        CHECK_INT(buflen, 100);
    }
    EXPECT_ERR(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys");
    EXPECT_ERR(MPI_Info_get_nthkey(info, 0, NULL), MPI_ERR_ARG, "MPI_Info_get_nthkey", "key");
    EXPECT_OK(MPI_Info_free(&info));

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
