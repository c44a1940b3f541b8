/* MPI_Get_processor_name is this host's name. */
#include "wtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    char host[1024] = {0};
    int len = -1;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    memset(name, 'x', sizeof name);
    EXPECT_OK(MPI_Get_processor_name(name, &len));
    CHECK_INT(gethostname(host, sizeof host - 1), 0);
    CHECK_STR(name, host);
    CHECK_INT(len, strlen(name));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "resultlen %d", len);
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
