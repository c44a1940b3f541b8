/* MPI_X_toint/MPI_X_fromint round-trip predefined and user handles of every kind. */
#include "wtest.h"

static void handler(MPI_Comm *c, int *e, ...) { (void)c; (void)e; }

#define ROUND(kind, TYPE, h)                                                             \
    do {                                                                                 \
        TYPE h_ = (h);                                                                   \
        int i_ = MPI_##kind##_toint(h_);                                                 \
        TYPE back_ = MPI_##kind##_fromint(i_);                                           \
        if (back_ != h_)                                                                 \
            FAIL("MPI_" #kind "_fromint(MPI_" #kind "_toint(%s)) = %p, not %p (int %d)", \
                 #h, (void *)back_, (void *)h_, i_);                                     \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Info info1, info2;
    MPI_Errhandler eh1, eh2;

    EXPECT_OK(MPI_Init(&argc, &argv));
    wtest_world_rank();
    wtest_errors_return();

    ROUND(Comm, MPI_Comm, MPI_COMM_WORLD);
    ROUND(Comm, MPI_Comm, MPI_COMM_SELF);
    ROUND(Comm, MPI_Comm, MPI_COMM_NULL);
    ROUND(Errhandler, MPI_Errhandler, MPI_ERRHANDLER_NULL);
    ROUND(Errhandler, MPI_Errhandler, MPI_ERRORS_ARE_FATAL);
    ROUND(Errhandler, MPI_Errhandler, MPI_ERRORS_RETURN);
    ROUND(Errhandler, MPI_Errhandler, MPI_ERRORS_ABORT);
    ROUND(Info, MPI_Info, MPI_INFO_NULL);
    ROUND(Info, MPI_Info, MPI_INFO_ENV);
    ROUND(Group, MPI_Group, MPI_GROUP_NULL);
    ROUND(Group, MPI_Group, MPI_GROUP_EMPTY);
    ROUND(File, MPI_File, MPI_FILE_NULL);
    ROUND(Win, MPI_Win, MPI_WIN_NULL);
    ROUND(Session, MPI_Session, MPI_SESSION_NULL);
    ROUND(Request, MPI_Request, MPI_REQUEST_NULL);
    ROUND(Message, MPI_Message, MPI_MESSAGE_NULL);
    ROUND(Message, MPI_Message, MPI_MESSAGE_NO_PROC);
    {
        const MPI_Op ops[] = {MPI_OP_NULL, MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD, MPI_BAND, MPI_BOR,
                              MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MINLOC, MPI_MAXLOC,
                              MPI_REPLACE, MPI_NO_OP};
        for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
            ROUND(Op, MPI_Op, ops[i]);
    }
    {
        const MPI_Datatype types[] = {MPI_DATATYPE_NULL, MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_BYTE,
                                      MPI_PACKED, MPI_AINT, MPI_COUNT, MPI_OFFSET, MPI_2INT,
                                      MPI_LONG_DOUBLE_INT, MPI_C_BOOL, MPI_UINT64_T, MPI_COMPLEX32,
                                      MPI_INTEGER, MPI_LONG_LONG_INT};
        for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
            ROUND(Type, MPI_Datatype, types[i]);
    }
    /* Distinct predefined handles give distinct ints. */
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) != MPI_Comm_toint(MPI_COMM_SELF), "WORLD and SELF share an int");
    CHECK(MPI_Type_toint(MPI_INT) != MPI_Type_toint(MPI_DOUBLE), "MPI_INT and MPI_DOUBLE share an int");

    /* User handles. */
    EXPECT_OK(MPI_Info_create(&info1));
    EXPECT_OK(MPI_Info_create(&info2));
    EXPECT_OK(MPI_Info_set(info1, "which", "one"));
    ROUND(Info, MPI_Info, info1);
    ROUND(Info, MPI_Info, info2);
    CHECK(MPI_Info_toint(info1) != MPI_Info_toint(info2), "two infos share an int");
    CHECK(MPI_Info_toint(info1) != MPI_Info_toint(MPI_INFO_NULL), "an info has the int of MPI_INFO_NULL");
    {
        /* The handle from the int is usable. */
        MPI_Info back = MPI_Info_fromint(MPI_Info_toint(info1));
        char v[16];
        int buflen = sizeof v, flag = 0;
        EXPECT_OK(MPI_Info_get_string(back, "which", &buflen, v, &flag));
        CHECK(flag == 1 && !strcmp(v, "one"), "info from int lost its key");
    }
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh1));
    EXPECT_OK(MPI_Comm_create_errhandler(handler, &eh2));
    ROUND(Errhandler, MPI_Errhandler, eh1);
    ROUND(Errhandler, MPI_Errhandler, eh2);
    CHECK(MPI_Errhandler_toint(eh1) != MPI_Errhandler_toint(eh2), "two errhandlers share an int");
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_Errhandler_fromint(MPI_Errhandler_toint(eh1))));
    EXPECT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    EXPECT_OK(MPI_Info_free(&info1));
    EXPECT_OK(MPI_Info_free(&info2));
    EXPECT_OK(MPI_Errhandler_free(&eh1));
    EXPECT_OK(MPI_Errhandler_free(&eh2));
    EXPECT_OK(MPI_Finalize());
    return wtest_finish();
}
