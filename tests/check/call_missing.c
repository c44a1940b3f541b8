/* Calls every function named on stdin (weft-info --missing) through dlsym with zero arguments
 * and checks that it returns MPI_ERR_UNSUPPORTED_OPERATION with a string naming it. A missing
 * function's entry point only reports itself, so zero arguments are safe; a zero handle is no
 * valid object, so the error goes to MPI_COMM_SELF's errhandler (MPI_ERRORS_RETURN here). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

typedef int (*any_fn)(long, long, long, long, long, long, long, long, long, long, long, long);

int main(int argc, char **argv)
{
    char name[256];
    int errs = 0, count = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    while (fgets(name, sizeof name, stdin)) {
        name[strcspn(name, "\r\n \t")] = 0;
        if (!name[0])
            continue;
        for (int pmpi = 0; pmpi < 2; pmpi++) {
            char sym[260];
            snprintf(sym, sizeof sym, "%s%s", pmpi ? "P" : "", name);
            void *f = dlsym(RTLD_DEFAULT, sym);
            if (!f) {
                fprintf(stderr, "%s: does not resolve\n", sym);
                errs++;
                continue;
            }
            int rc = ((any_fn)f)(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
            int cls = -1, len = 0;
            char s[MPI_MAX_ERROR_STRING] = "";
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, s, &len);
            if (cls != MPI_ERR_UNSUPPORTED_OPERATION || !strstr(s, name)) {
                fprintf(stderr, "%s: returned %d (class %d): %s\n", sym, rc, cls, s);
                errs++;
            }
            count++;
        }
    }
    MPI_Finalize();
    printf("%d calls\n", count);
    if (errs == 0)
        printf(" No Errors\n");
    else
        fprintf(stderr, "Found %d errors\n", errs);
    return errs != 0;
}
