/*
 * sa_vec.c - the growable array and the capped byte buffer (see sa_vec.h).
 */
#include "sa_vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool sa_vec_grow(void **v, size_t *cap, size_t n, size_t more, size_t elem, size_t first)
{
    size_t want, ncap;
    void *nv;

    if (more > SIZE_MAX - n) {
        errno = ENOMEM;
        return false;
    }
    want = n + more;
    if (want <= *cap)
        return true;
    ncap = *cap ? *cap : (first ? first : 1);
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2) {
            ncap = want;
            break;
        }
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem) {
        errno = ENOMEM;
        return false;
    }
    nv = realloc(*v, ncap * elem);
    if (!nv) {
        errno = ENOMEM;
        return false;
    }
    *v = nv;
    *cap = ncap;
    return true;
}

void sa_buf_init(sa_buf_t *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
}

bool sa_buf_append(sa_buf_t *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        errno = EFBIG;
        return false;
    }
    if (!sa_vec_grow((void **)&b->data, &b->alloc, b->len, n + 1, 1, 256))
        return false;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

void sa_buf_reset(sa_buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void sa_buf_clear(sa_buf_t *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->alloc = 0;
}
