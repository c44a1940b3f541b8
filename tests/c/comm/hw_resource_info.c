/* MPI_Get_hw_resource_info (MPI 5.0) against /sys: the number of hardware threads (pu) is the
 * online CPUs, packages are the distinct physical_package_id values, the node is one
 * mpi_shared_memory; each key is a type MPI_COMM_TYPE_RESOURCE_GUIDED accepts, and a guided
 * split by "pu" puts only processes running on one CPU together. */
#include "wtest.h"

static int count_online(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    int n = 0, a, b;
    char sep;
    if (!f)
        return -1;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
            if (fscanf(f, "%d", &b) != 1)
                break;
            if (fscanf(f, "%c", &sep) != 1)
                sep = 0;
        }
        n += b - a + 1;
        if (sep != ',')
            break;
    }
    fclose(f);
    return n;
}

static int count_packages(int cpus)
{
    int seen[1024] = {0}, n = 0;
    for (int c = 0; c < 4096 && cpus > 0; c++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int id = -1;
        if (fscanf(f, "%d", &id) == 1 && id >= 0 && id < 1024 && !seen[id]) {
            seen[id] = 1;
            n++;
        }
        fclose(f);
        cpus--;
    }
    return n;
}

static int value_of(MPI_Info info, const char *key)
{
    char v[64];
    int len = sizeof v, flag = 0;
    EXPECT_OK(MPI_Info_get_string(info, key, &len, v, &flag));
    return flag ? atoi(v) : -1;
}

int main(int argc, char **argv)
{
    MPI_Info hw;
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    EXPECT_ERR(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG, "MPI_Get_hw_resource_info", "hw_info");
    EXPECT_OK(MPI_Get_hw_resource_info(&hw));
    int cpus = count_online();
    CHECK(cpus > 0, "online CPUs %d", cpus);
    CHECK_INT(value_of(hw, "pu"), cpus);
    CHECK_INT(value_of(hw, "mpi_shared_memory"), 1);
    CHECK_INT(value_of(hw, "package"), count_packages(cpus));
    int cores = value_of(hw, "core");
    CHECK(cores >= 1 && cores <= cpus, "core count %d of %d pu", cores, cpus);

    /* Every key is a type the guided split accepts: a communicator comes back. */
    int nkeys = 0;
    EXPECT_OK(MPI_Info_get_nkeys(hw, &nkeys));
    CHECK(nkeys >= 3, "nkeys %d", nkeys);
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1];
        EXPECT_OK(MPI_Info_get_nthkey(hw, k, key));
        MPI_Info hint;
        MPI_Comm part = MPI_COMM_NULL;
        MPI_Info_create(&hint);
        MPI_Info_set(hint, "mpi_hw_resource_type", key);
        EXPECT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, hint, &part));
        CHECK(part != MPI_COMM_NULL, "a communicator for %s", key);
        if (part != MPI_COMM_NULL) {
            int n = 0, world = 0;
            MPI_Comm_size(part, &n);
            MPI_Comm_size(MPI_COMM_WORLD, &world);
            CHECK(n >= 1 && n <= world, "%s: size %d", key, n);
            if (strcmp(key, "mpi_shared_memory") == 0)
                CHECK_INT(n, world);
            MPI_Comm_free(&part);
        }
        MPI_Info_free(&hint);
    }
    EXPECT_OK(MPI_Info_free(&hw));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
