/*
 * sa_vec.h - the one growable array and the one capped byte buffer of slurm-archive,
 * so that no file writes its own doubling loop.
 *
 * Arrays stay plain C arrays (T *v; size_t n, cap;): sa_vec_grow only makes room.
 * A buffer's cap is fixed when it is made (curl's dynbuf): past it, appending fails
 * with EFBIG and changes nothing; that is how untrusted input is held.
 */
#ifndef SA_VEC_H
#define SA_VEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes room for `more` elements after the first n of *v (each elem bytes; capacity
 * *cap, which starts at `first` and doubles). Returns false (errno ENOMEM, nothing
 * changed) when memory runs out or the size would overflow.
 */
bool sa_vec_grow(void **v, size_t *cap, size_t n, size_t more, size_t elem, size_t first);
#define SA_VEC_GROW(v, cap, n, more, first) sa_vec_grow((void **)&(v), &(cap), (n), (more), sizeof *(v), (first))

typedef struct {
    char *data;   /* NUL-terminated when not NULL */
    size_t len;   /* bytes held */
    size_t alloc; /* bytes allocated */
    size_t cap;   /* most bytes ever held */
} sa_buf_t;

/* An empty buffer that will hold at most cap bytes (nothing allocated yet). */
void sa_buf_init(sa_buf_t *b, size_t cap);
/* Appends n bytes; false with errno EFBIG past the cap, ENOMEM out of memory (nothing appended). */
bool sa_buf_append(sa_buf_t *b, const void *p, size_t n);
/* Forgets the content, keeps the memory and the cap. */
void sa_buf_reset(sa_buf_t *b);
/* Frees the memory; the buffer is empty again (same cap). Accepts NULL. */
void sa_buf_clear(sa_buf_t *b);

#endif
