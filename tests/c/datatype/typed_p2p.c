/* Point-to-point with derived datatypes on either side (matching signatures, different
 * layouts), eager and rendezvous sizes, partial final elements, Get_elements after
 * truncation, a type freed while its send is pending, bad types in communication. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "wtest.h"

static int rank, size, peer, src;

/* Send `sendcount` of `st` from sbuf to peer and receive `recvcount` of `rt` into rbuf. */
static void exchange(void *sbuf, int sendcount, MPI_Datatype st, void *rbuf, int recvcount,
                     MPI_Datatype rt, MPI_Status *status, int expect_class)
{
    MPI_Request r;
    EXPECT_OK(MPI_Irecv(rbuf, recvcount, rt, src, 5, MPI_COMM_WORLD, &r));
    EXPECT_OK(MPI_Send(sbuf, sendcount, st, peer, 5, MPI_COMM_WORLD));
    int rc = MPI_Wait(&r, status);
    if (expect_class == MPI_SUCCESS) {
        CHECK(rc == MPI_SUCCESS, "wait failed: %d", rc);
    } else {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK_INT(cls, expect_class);
    }
}

static void columns(int n)
{
    /* Column 2 of an n x 4 matrix, sent as a vector, received contiguous; then back. */
    int *m = malloc(sizeof(int) * 4 * n), *flat = malloc(sizeof(int) * n), *m2 = calloc(4 * n, sizeof(int));
    for (int i = 0; i < 4 * n; i++)
        m[i] = i * 3 + rank;
    MPI_Datatype col;
    EXPECT_OK(MPI_Type_vector(n, 1, 4, MPI_INT, &col));
    EXPECT_OK(MPI_Type_commit(&col));
    MPI_Status s;
    exchange(m + 2, 1, col, flat, n, MPI_INT, &s, MPI_SUCCESS);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += flat[i] != (4 * i + 2) * 3 + src;
    CHECK(bad == 0, "vector -> contiguous (n=%d): %d wrong", n, bad);
    int count = -1;
    MPI_Get_count(&s, MPI_INT, &count);
    CHECK_INT(count, n);
    exchange(flat, n, MPI_INT, m2 + 1, 1, col, &s, MPI_SUCCESS);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += m2[4 * i + 1] != (4 * i + 2) * 3 + rank || m2[4 * i] != 0 || m2[4 * i + 2] != 0;
    CHECK(bad == 0, "contiguous -> vector (n=%d): %d wrong", n, bad);
    MPI_Get_count(&s, col, &count);
    CHECK_INT(count, 1);
    /* Freed while pending: the send still completes with the right data. */
    MPI_Request r[2];
    memset(flat, 0, sizeof(int) * n);
    EXPECT_OK(MPI_Irecv(flat, n, MPI_INT, src, 6, MPI_COMM_WORLD, &r[0]));
    EXPECT_OK(MPI_Isend(m + 2, 1, col, peer, 6, MPI_COMM_WORLD, &r[1]));
    EXPECT_OK(MPI_Type_free(&col));
    EXPECT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += flat[i] != (4 * i + 2) * 3 + src;
    CHECK(bad == 0, "type freed while pending (n=%d): %d wrong", n, bad);
    free(m);
    free(flat);
    free(m2);
}

struct rec {
    short s;
    double d;
    char c;
};

static void structs(int n)
{
    struct rec *a = malloc(sizeof(struct rec) * n), *b = calloc(n, sizeof(struct rec));
    for (int i = 0; i < n; i++) {
        a[i].s = (short)(i + rank);
        a[i].d = i * 0.5 + rank;
        a[i].c = (char)(i % 100);
    }
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct rec, s), offsetof(struct rec, d), offsetof(struct rec, c)};
    MPI_Datatype ts[3] = {MPI_SHORT, MPI_DOUBLE, MPI_CHAR}, t;
    EXPECT_OK(MPI_Type_create_struct(3, bl, d, ts, &t));
    EXPECT_OK(MPI_Type_commit(&t));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(ext, sizeof(struct rec));
    MPI_Status s;
    exchange(a, n, t, b, n, t, &s, MPI_SUCCESS);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i].s != (short)(i + src) || b[i].d != i * 0.5 + src || b[i].c != (char)(i % 100);
    CHECK(bad == 0, "struct array (n=%d): %d wrong", n, bad);
    int el = -1;
    MPI_Get_elements(&s, t, &el);
    CHECK_INT(el, 3 * n);
    MPI_Type_free(&t);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank + 1) % size;
    src = (rank + size - 1) % size;

    columns(5);
    columns(200000);
    structs(3);
    structs(60000);

    /* Partial final element: 7 ints into pairs of ints. */
    MPI_Datatype two;
    EXPECT_OK(MPI_Type_contiguous(2, MPI_INT, &two));
    EXPECT_OK(MPI_Type_commit(&two));
    int out[20], in[20];
    for (int i = 0; i < 20; i++)
        out[i] = i;
    MPI_Status s;
    exchange(out, 7, MPI_INT, in, 10, two, &s, MPI_SUCCESS);
    int count = 0, el = 0;
    MPI_Get_count(&s, two, &count);
    CHECK_INT(count, MPI_UNDEFINED);
    MPI_Get_elements(&s, two, &el);
    CHECK_INT(el, 7);
    CHECK_INT(in[6], 6);
    /* Truncation: 10 ints into 2 triples; Get_elements says what arrived. */
    MPI_Datatype three;
    EXPECT_OK(MPI_Type_contiguous(3, MPI_INT, &three));
    EXPECT_OK(MPI_Type_commit(&three));
    memset(in, 0, sizeof in);
    exchange(out, 10, MPI_INT, in, 2, three, &s, MPI_ERR_TRUNCATE);
    MPI_Get_elements(&s, three, &el);
    CHECK_INT(el, 6);
    CHECK_INT(in[5], 5);
    CHECK_INT(in[6], 0);
    MPI_Count elc = 0;
    MPI_Get_elements_c(&s, MPI_INT, &elc);
    CHECK_INT(elc, 6);

    /* Bad types in communication. */
    MPI_Datatype unc, stale;
    EXPECT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &unc));
    EXPECT_ERR(MPI_Send(out, 1, unc, peer, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", "not committed");
    stale = two;
    MPI_Type_free(&two);
    EXPECT_ERR(MPI_Send(out, 1, stale, peer, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", "freed");
    EXPECT_ERR(MPI_Send(out, -1, three, peer, 1, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "count");
    MPI_Datatype huge;
    EXPECT_OK(MPI_Type_contiguous(1 << 30, three, &huge));
    EXPECT_OK(MPI_Type_commit(&huge));
    EXPECT_ERR(MPI_Send(out, 1 << 30, huge, peer, 1, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "overflow");
    MPI_Type_free(&huge);
    MPI_Type_free(&unc);
    MPI_Type_free(&three);

    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
