/* Every standard error class is its own class and has a message; invalid codes are rejected. */
#include "wtest.h"

static const struct {
    int value;
    const char *name;
} classes[] = {
#define C(x) {x, #x}
    C(MPI_SUCCESS), C(MPI_ERR_BUFFER), C(MPI_ERR_COUNT), C(MPI_ERR_TYPE), C(MPI_ERR_TAG),
    C(MPI_ERR_COMM), C(MPI_ERR_RANK), C(MPI_ERR_REQUEST), C(MPI_ERR_ROOT), C(MPI_ERR_GROUP),
    C(MPI_ERR_OP), C(MPI_ERR_TOPOLOGY), C(MPI_ERR_DIMS), C(MPI_ERR_ARG), C(MPI_ERR_UNKNOWN),
    C(MPI_ERR_TRUNCATE), C(MPI_ERR_OTHER), C(MPI_ERR_INTERN), C(MPI_ERR_PENDING),
    C(MPI_ERR_IN_STATUS), C(MPI_ERR_ACCESS), C(MPI_ERR_AMODE), C(MPI_ERR_ASSERT),
    C(MPI_ERR_BAD_FILE), C(MPI_ERR_BASE), C(MPI_ERR_CONVERSION), C(MPI_ERR_DISP),
    C(MPI_ERR_DUP_DATAREP), C(MPI_ERR_FILE_EXISTS), C(MPI_ERR_FILE_IN_USE), C(MPI_ERR_FILE),
    C(MPI_ERR_INFO_KEY), C(MPI_ERR_INFO_NOKEY), C(MPI_ERR_INFO_VALUE), C(MPI_ERR_INFO),
    C(MPI_ERR_IO), C(MPI_ERR_KEYVAL), C(MPI_ERR_LOCKTYPE), C(MPI_ERR_NAME), C(MPI_ERR_NO_MEM),
    C(MPI_ERR_NOT_SAME), C(MPI_ERR_NO_SPACE), C(MPI_ERR_NO_SUCH_FILE), C(MPI_ERR_PORT),
    C(MPI_ERR_QUOTA), C(MPI_ERR_READ_ONLY), C(MPI_ERR_RMA_ATTACH), C(MPI_ERR_RMA_CONFLICT),
    C(MPI_ERR_RMA_RANGE), C(MPI_ERR_RMA_SHARED), C(MPI_ERR_RMA_SYNC), C(MPI_ERR_SERVICE),
    C(MPI_ERR_SIZE), C(MPI_ERR_SPAWN), C(MPI_ERR_UNSUPPORTED_DATAREP),
    C(MPI_ERR_UNSUPPORTED_OPERATION), C(MPI_ERR_WIN), C(MPI_ERR_RMA_FLAVOR),
    C(MPI_ERR_PROC_ABORTED), C(MPI_ERR_VALUE_TOO_LARGE), C(MPI_ERR_SESSION),
    C(MPI_ERR_ERRHANDLER), C(MPI_ERR_ABI),
#undef C
};
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

int main(int argc, char **argv)
{
    static char strings[NCLASSES][MPI_MAX_ERROR_STRING];
    int cls, len;
    char s[MPI_MAX_ERROR_STRING];

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    CHECK_INT(NCLASSES, 63);
    for (int i = 0; i < NCLASSES; i++) {
        CHECK(classes[i].value == i, "%s = %d, expected %d", classes[i].name, classes[i].value, i);
        CHECK(classes[i].value <= MPI_ERR_LASTCODE, "%s above MPI_ERR_LASTCODE", classes[i].name);
        cls = -1;
        EXPECT_OK(MPI_Error_class(classes[i].value, &cls));
        CHECK(cls == classes[i].value, "MPI_Error_class(%s) = %d", classes[i].name, cls);
        len = -1;
        memset(strings[i], 0, MPI_MAX_ERROR_STRING);
        EXPECT_OK(MPI_Error_string(classes[i].value, strings[i], &len));
        CHECK(len > 0 && len == (int)strlen(strings[i]) && len < MPI_MAX_ERROR_STRING,
              "MPI_Error_string(%s): len %d, \"%s\"", classes[i].name, len, strings[i]);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(strings[i], strings[j]) != 0, "%s and %s have the same string \"%s\"",
                  classes[i].name, classes[j].name, strings[i]);
    }
    CHECK(MPI_ERR_LASTCODE >= MPI_ERR_ABI, "MPI_ERR_LASTCODE %d", MPI_ERR_LASTCODE);

    /* Values that are no error code: negative, between the classes and MPI_ERR_LASTCODE,
     * and above it where no user code was added. */
    {
        const int bad[] = {-1, -1000, 63, 1000, MPI_ERR_LASTCODE - 1, MPI_ERR_LASTCODE + 12345,
                           0x7fffffff};
        for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
            cls = -77;
            EXPECT_ERR(MPI_Error_class(bad[i], &cls), MPI_ERR_ARG, "MPI_Error_class", "errorcode");
            CHECK(cls == -77, "MPI_Error_class(%d) wrote %d on failure", bad[i], cls);
            len = -77;
            EXPECT_ERR(MPI_Error_string(bad[i], s, &len), MPI_ERR_ARG, "MPI_Error_string", "errorcode");
            CHECK(len == -77, "MPI_Error_string(%d) wrote resultlen on failure", bad[i]);
        }
    }
    /* NULL outputs. */
    EXPECT_ERR(MPI_Error_class(MPI_ERR_COMM, NULL), MPI_ERR_ARG, "MPI_Error_class", "errorclass");
    EXPECT_ERR(MPI_Error_string(MPI_ERR_COMM, NULL, &len), MPI_ERR_ARG, "MPI_Error_string", "string");
    EXPECT_ERR(MPI_Error_string(MPI_ERR_COMM, s, NULL), MPI_ERR_ARG, "MPI_Error_string", "resultlen");

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
