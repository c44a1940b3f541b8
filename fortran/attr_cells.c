/* Attribute values set from Fortran (MPI 5.0 §19.3.7). C stores an attribute as a pointer;
 * Fortran sets an INTEGER(KIND=MPI_ADDRESS_KIND) (or, MPI_ATTR_PUT, an INTEGER) value, which a
 * C MPI_Comm_get_attr must read through the pointer it gets. So a value set from Fortran lives
 * in a cell allocated here, and the attribute is the cell's address: C reads the value through
 * it, and a Fortran get recognises the cell (the registry below) and answers its value, while a
 * pointer set from C reads in Fortran as its address. The keyvals created from Fortran free a
 * cell when their delete callback runs (callbacks.c); a cell set on a keyval created in C lives
 * until the program ends (nothing tells the Fortran library that C deleted it).
 * The registry is a hash of live cells under one mutex (attribute calls are not a hot path). */
#define WEFT_FORTRAN_INTERNAL 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "weft_fortran.h"

struct cell {
    MPI_Aint value; /* first: the attribute's address is the value's */
    struct cell *next;
};

#define BUCKETS 256
static struct cell *buckets[BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct cell **bucket(const void *p) { return &buckets[((uintptr_t)p >> 4) % BUCKETS]; }

void *weft_f_attr_cell(MPI_Aint value)
{
    struct cell *c = malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    c->value = value;
    pthread_mutex_lock(&lock);
    struct cell **b = bucket(c);
    c->next = *b;
    *b = c;
    pthread_mutex_unlock(&lock);
    return c;
}

int weft_f_attr_cell_value(const void *p, MPI_Aint *value)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (struct cell *c = *bucket(p); c != NULL; c = c->next)
        if (c == p) {
            *value = c->value;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

void weft_f_attr_cell_free(const void *p)
{
    struct cell *gone = NULL;
    pthread_mutex_lock(&lock);
    for (struct cell **c = bucket(p); *c != NULL; c = &(*c)->next)
        if (*c == p) {
            gone = *c;
            *c = gone->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    free(gone);
}

MPI_Aint weft_f_attr_value(const void *p)
{
    MPI_Aint v;
    return weft_f_attr_cell_value(p, &v) ? v : (MPI_Aint)p;
}
