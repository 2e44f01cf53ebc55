/* Growable text buffer for the code generators (src/gen). */
#ifndef CK_SRC_GEN_SBUF_H
#define CK_SRC_GEN_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct ck_sbuf {
    char *s;
    size_t len, cap;
    int oom; /* an allocation failed; the text is incomplete */
} ck_sbuf;

static inline void ck_sbuf_printf(ck_sbuf *b, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);
static inline void ck_sbuf_printf(ck_sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

#endif
