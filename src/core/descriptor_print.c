/*
 * Readable dumps of adaptors and descriptors: stages, transforms, hidden ids
 * and lengths (used by error messages and `ck desc`).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/tile_internal.h"

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);
static void sb_put(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            va_end(ap2);
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

static void sb_ival(sbuf *b, ck_ival x)
{
    char tmp[512];
    ck_ival_print(x, tmp, sizeof tmp);
    sb_put(b, "%s", tmp);
}

static void sb_ids(sbuf *b, const int *ids, int n)
{
    sb_put(b, "[");
    for (int i = 0; i < n; ++i)
        sb_put(b, "%sh%d", i ? ", " : "", ids[i]);
    sb_put(b, "]");
}

static void dump_adaptor(sbuf *b, const ck_adaptor *a)
{
    sb_put(b, "adaptor: %d bottom, %d top, %d hidden dims; %d transforms in %d stages%s\n",
           a->nbottom, a->ntop, a->nhidden, a->ntransforms, a->nstages,
           a->concrete ? "" : " (symbolic)");
    sb_put(b, "  bottom ");
    sb_ids(b, a->bottom, a->nbottom);
    sb_put(b, " lengths [");
    for (int i = 0; i < a->nbottom; ++i) {
        sb_put(b, "%s", i ? ", " : "");
        sb_ival(b, a->hidden_len[a->bottom[i]]);
    }
    sb_put(b, "]\n");
    int stage = -1;
    for (int i = 0; i < a->ntransforms; ++i) {
        const ck_adaptor_entry *e = &a->entries[i];
        if (e->stage != stage) {
            stage = e->stage;
            sb_put(b, "  stage %d:\n", stage);
        }
        char desc[1024];
        ck_transform_describe(&e->t, desc, sizeof desc);
        sb_put(b, "    transform %d: %s  lower ", i, desc);
        sb_ids(b, e->low, e->t.nlow);
        sb_put(b, " -> upper ");
        sb_ids(b, e->up, e->t.nup);
        sb_put(b, "\n");
    }
    sb_put(b, "  top ");
    sb_ids(b, a->top, a->ntop);
    sb_put(b, " lengths [");
    for (int i = 0; i < a->ntop; ++i) {
        sb_put(b, "%s", i ? ", " : "");
        sb_ival(b, a->hidden_len[a->top[i]]);
    }
    sb_put(b, "]\n  hidden lengths:");
    for (int h = 0; h < a->nhidden; ++h) {
        sb_put(b, " h%d=", h);
        sb_ival(b, a->hidden_len[h]);
    }
    sb_put(b, "\n");
}

static ck_status finish(sbuf *b, char **out, const char *fn)
{
    if (b->oom || !b->s) {
        free(b->s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory building the text.", fn);
    }
    *out = b->s;
    return CK_SUCCESS;
}

ck_status ck_adaptor_to_string(const ck_adaptor *a, char **out)
{
    CK_REQUIRE_NOT_NULL(a, "ck_adaptor_to_string");
    CK_REQUIRE_NOT_NULL(out, "ck_adaptor_to_string");
    sbuf b = {0};
    dump_adaptor(&b, a);
    return finish(&b, out, "ck_adaptor_to_string");
}

ck_status ck_descriptor_to_string(const ck_descriptor *d, char **out)
{
    CK_REQUIRE_NOT_NULL(d, "ck_descriptor_to_string");
    CK_REQUIRE_NOT_NULL(out, "ck_descriptor_to_string");
    sbuf b = {0};
    sb_put(&b, "descriptor: %d dims [", d->ad->ntop);
    for (int i = 0; i < d->ad->ntop; ++i) {
        sb_put(&b, "%s", i ? ", " : "");
        sb_ival(&b, d->ad->hidden_len[d->ad->top[i]]);
    }
    sb_put(&b, "], element space size ");
    sb_ival(&b, d->element_space);
    sb_put(&b, "\n");
    dump_adaptor(&b, d->ad);
    return finish(&b, out, "ck_descriptor_to_string");
}
