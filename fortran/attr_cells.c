/* Attribute values set from Fortran (MPI 5.0 §19.3.7). C stores an attribute as a pointer;
 * Fortran sets an INTEGER(KIND=MPI_ADDRESS_KIND) (or, MPI_ATTR_PUT, an INTEGER) value, which a
 * C MPI_Comm_get_attr must read through the pointer it gets. So a value set from Fortran lives
 * in a cell allocated here, and the attribute is the cell's address: C reads the value through
 * it, and a Fortran get recognises the cell (the registry below) and answers its value, while a
 * pointer set from C reads in Fortran as its address.
 *
 * A cell lives as long as some object holds it. The C library tells us (MPIX_Attr_value_hooks,
 * registered with the first cell) each time it stores a value on an object and each time a
 * stored value leaves one, after its delete callback ran, whoever created the keyval: a cell
 * counts those holders and is freed when the last one lets go. A copy callback that passes the
 * pointer on (C's MPI_COMM_DUP_FN) makes two holders of one cell. A new cell has no holder
 * until the library stores it; one it refused is dropped by weft_f_attr_cell_free.
 * The registry is a hash of live cells under one mutex (attribute calls are not a hot path). */
#define WEFT_FORTRAN_INTERNAL 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "weft_fortran.h"

struct cell {
    MPI_Aint value; /* first: the attribute's address is the value's */
    long holders;
    struct cell *next;
};

#define BUCKETS 256
static struct cell *buckets[BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static struct cell **bucket(const void *p) { return &buckets[((uintptr_t)p >> 4) % BUCKETS]; }

/* The link that points at cell p, or NULL when p is not a cell. Called with the lock held. */
static struct cell **find(const void *p)
{
    for (struct cell **c = bucket(p); *c != NULL; c = &(*c)->next)
        if (*c == p)
            return c;
    return NULL;
}

/* Adds `change` to cell p's holders, and unlinks and frees it when none is left. */
static void drop(const void *p, long change)
{
    struct cell *gone = NULL;
    pthread_mutex_lock(&lock);
    struct cell **c = find(p);
    if (c != NULL) {
        (*c)->holders += change;
        if ((*c)->holders <= 0) {
            gone = *c;
            *c = gone->next;
        }
    }
    pthread_mutex_unlock(&lock);
    free(gone);
}

static void retain(void *p)
{
    pthread_mutex_lock(&lock);
    struct cell **c = find(p);
    if (c != NULL)
        (*c)->holders++;
    pthread_mutex_unlock(&lock);
}

static void release(void *p) { drop(p, -1); }

static void register_hooks(void) { MPIX_Attr_value_hooks(retain, release); }

void *weft_f_attr_cell(MPI_Aint value)
{
    pthread_once(&hooks_once, register_hooks);
    struct cell *c = malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    c->value = value;
    c->holders = 0;
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
    struct cell **c = find(p);
    if (c != NULL) {
        *value = (*c)->value;
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void weft_f_attr_cell_free(const void *p) { drop(p, 0); }

MPI_Aint weft_f_attr_value(const void *p)
{
    MPI_Aint v;
    return weft_f_attr_cell_value(p, &v) ? v : (MPI_Aint)p;
}
