/* Graph and distributed-graph topologies: a ring. */
#include "wtest.h"
/* MPI_UNWEIGHTED is a small constant pointer that GCC sees as a zero-size array. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int main(int argc, char **argv)
{
    int rank, size, i, n, st, nn, ne, w;
    MPI_Comm g, dg, adj;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* graph: node i connects to i-1 and i+1 (a ring; size 1: a self loop twice) */
    {
        int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * 2 * size), nb[2];
        for (i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + size - 1) % size;
            edges[2 * i + 1] = (i + 1) % size;
        }
        EXPECT_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
        EXPECT_OK(MPI_Topo_test(g, &st));
        CHECK_INT(st, MPI_GRAPH);
        EXPECT_OK(MPI_Graphdims_get(g, &nn, &ne));
        CHECK_INT(nn, size);
        CHECK_INT(ne, 2 * size);
        EXPECT_OK(MPI_Graph_neighbors_count(g, rank, &n));
        CHECK_INT(n, 2);
        EXPECT_OK(MPI_Graph_neighbors(g, rank, 2, nb));
        CHECK_INT(nb[0], (rank + size - 1) % size);
        CHECK_INT(nb[1], (rank + 1) % size);
        {
            int *gi = malloc(sizeof(int) * size), *ge = malloc(sizeof(int) * 2 * size);
            EXPECT_OK(MPI_Graph_get(g, size, 2 * size, gi, ge));
            CHECK(memcmp(gi, index, sizeof(int) * size) == 0 && memcmp(ge, edges, sizeof(int) * 2 * size) == 0,
                  "graph_get returns the description");
            free(gi);
            free(ge);
        }
        EXPECT_OK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &n));
        CHECK_INT(n, rank);
        EXPECT_ERR(MPI_Graph_neighbors_count(g, size, &n), MPI_ERR_RANK, "MPI_Graph_neighbors_count", "rank");
        edges[0] = size;
        adj = MPI_COMM_WORLD;
        EXPECT_ERR(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &adj), MPI_ERR_ARG,
                   "MPI_Graph_create", "edges[0]");
        CHECK(adj == MPI_COMM_NULL, "a failed MPI_Graph_create left its output handle set");
        EXPECT_OK(MPI_Comm_free(&g));
        free(index);
        free(edges);
    }

    /* distributed graph, adjacent form: in from rank-1 (weight rank), out to rank+1 */
    {
        int src = (rank + size - 1) % size, dst = (rank + 1) % size, sw = src, dw = rank;
        int ind, outd, s[1], swo[1], d[1], dwo[1];
        EXPECT_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 0, &adj));
        EXPECT_OK(MPI_Topo_test(adj, &st));
        CHECK_INT(st, MPI_DIST_GRAPH);
        EXPECT_OK(MPI_Dist_graph_neighbors_count(adj, &ind, &outd, &w));
        CHECK(ind == 1 && outd == 1 && w == 1, "counts %d %d %d", ind, outd, w);
        EXPECT_OK(MPI_Dist_graph_neighbors(adj, 1, s, swo, 1, d, dwo));
        CHECK(s[0] == src && swo[0] == src && d[0] == dst && dwo[0] == rank, "adjacent neighbours");
        EXPECT_OK(MPI_Comm_free(&adj));
    }
    /* general form: rank 0 specifies every edge i -> i+1 (unweighted); the others none */
    {
        int *srcs = malloc(sizeof(int) * size), *deg = malloc(sizeof(int) * size), *dsts = malloc(sizeof(int) * size);
        int ind, outd, s[2], d[2];
        for (i = 0; i < size; i++) {
            srcs[i] = i;
            deg[i] = 1;
            dsts[i] = (i + 1) % size;
        }
        EXPECT_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? size : 0, srcs, deg, dsts, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &dg));
        EXPECT_OK(MPI_Dist_graph_neighbors_count(dg, &ind, &outd, &w));
        CHECK(ind == 1 && outd == 1 && w == 0, "counts %d %d %d", ind, outd, w);
        EXPECT_OK(MPI_Dist_graph_neighbors(dg, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED));
        CHECK_INT(s[0], (rank + size - 1) % size);
        CHECK_INT(d[0], (rank + 1) % size);
        EXPECT_OK(MPI_Comm_free(&dg));
        dsts[0] = size;
        if (rank == 0)
            EXPECT_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                       MPI_ERR_RANK, "MPI_Dist_graph_create", "destinations[0]");
        free(srcs);
        free(deg);
        free(dsts);
    }
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
