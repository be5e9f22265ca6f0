/*
 * sa_utf8.c - well-formed UTF-8 (see sa_utf8.h).
 */
#include "sa_utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t sa_utf8_seq_len(const unsigned char *s, size_t i, size_t n)
{
    unsigned char c = s[i];
    size_t len;
    uint32_t cp;

    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[i + k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

char *sa_utf8_repair(const unsigned char *s, size_t n, size_t *out_len)
{
    char *out = malloc(3 * n + 1);
    size_t o = 0, i = 0;

    if (!out)
        return NULL;
    while (i < n) {
        size_t len = sa_utf8_seq_len(s, i, n);
        if (len) {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3); /* U+FFFD */
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

bool sa_utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0, len; i < n; i += len) {
        if (!(len = sa_utf8_seq_len(s, i, n)))
            return false;
    }
    return true;
}
