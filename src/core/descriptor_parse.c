/*
 * The textual form of descriptors used by `ck desc` (grammar in tile.h and
 * `ck desc --help`):
 *   naive(lengths=[4,8], strides=[8,1]) | pad(dim=1, left=1, right=2) | ...
 * Values are integers, symbols or + - * / % expressions of them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/tile_internal.h"

enum { MAX_ARGS = 8, MAX_LIST = 64 };

typedef struct parser {
    const char *text, *p;
    ck_expr_arena *ctx;
    int depth;
} parser;

typedef struct arg {
    char name[32];
    int is_list;
    int n;
    ck_ival v[MAX_LIST];
    int used;
} arg;

static int col(const parser *ps)
{
    return (int)(ps->p - ps->text) + 1;
}

static ck_status perr(const parser *ps, const char *what)
{
    return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: at column %d (\"%.20s\"): %s", col(ps),
                   ps->p, what);
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ++ps->p;
}

static int accept(parser *ps, char c)
{
    skip(ps);
    if (*ps->p == c) {
        ++ps->p;
        return 1;
    }
    return 0;
}

static int ident(parser *ps, char *buf, size_t size)
{
    skip(ps);
    size_t n = 0;
    if (!(isalpha((unsigned char)*ps->p) || *ps->p == '_'))
        return 0;
    while (isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_')
        ++n;
    if (n >= size)
        return 0;
    memcpy(buf, ps->p, n);
    buf[n] = '\0';
    ps->p += n;
    return 1;
}

static ck_status expr(parser *ps, ck_ival *out);

static ck_status factor(parser *ps, ck_ival *out)
{
    skip(ps);
    if (ps->depth > 64)
        return perr(ps, "expression nested too deeply (at most 64 levels).");
    if (accept(ps, '(')) {
        ++ps->depth;
        ck_status st = expr(ps, out);
        --ps->depth;
        if (st)
            return st;
        return accept(ps, ')') ? CK_SUCCESS : perr(ps, "expected ')'.");
    }
    if (accept(ps, '-')) {
        ck_ival x;
        ++ps->depth;
        ck_status st = factor(ps, &x);
        --ps->depth;
        return st ? st : ck_ival_sub(ck_ival_int(0), x, out);
    }
    if (isdigit((unsigned char)*ps->p)) {
        char *end;
        errno = 0;
        long long v = strtoll(ps->p, &end, 10);
        if (errno)
            return perr(ps, "integer out of the 64-bit range.");
        ps->p = end;
        *out = ck_ival_int(v);
        return CK_SUCCESS;
    }
    char name[CK_TILE_MAX_SYMBOL_NAME + 1];
    if (ident(ps, name, sizeof name)) {
        if (ck_expr_find_symbol(ps->ctx, name, out))
            return CK_SUCCESS;
        if (!ps->ctx)
            return perr(ps, "a symbol needs an expression context (none was given).");
        return ck_expr_symbol(ps->ctx, name, 1, 0x7fffffff, 1, out);
    }
    return perr(ps, "expected an integer, a symbol or '('.");
}

static ck_status term(parser *ps, ck_ival *out)
{
    ck_status st = factor(ps, out);
    while (!st) {
        skip(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%')
            break;
        ++ps->p;
        ck_ival r;
        if ((st = factor(ps, &r)))
            break;
        st = op == '*'   ? ck_ival_mul(*out, r, out)
             : op == '/' ? ck_ival_floordiv(*out, r, out)
                         : ck_ival_mod(*out, r, out);
    }
    return st;
}

static ck_status expr(parser *ps, ck_ival *out)
{
    ck_status st = term(ps, out);
    while (!st) {
        skip(ps);
        char op = *ps->p;
        if (op != '+' && op != '-')
            break;
        ++ps->p;
        ck_ival r;
        if ((st = term(ps, &r)))
            break;
        st = op == '+' ? ck_ival_add(*out, r, out) : ck_ival_sub(*out, r, out);
    }
    return st;
}

/* name(key=value, key=[v, ...], ...) */
static ck_status call(parser *ps, char *name, size_t size, arg *args, int *nargs)
{
    *nargs = 0;
    if (!ident(ps, name, size))
        return perr(ps, "expected a transform name such as naive, pad or merge.");
    if (!accept(ps, '('))
        return perr(ps, "expected '(' after the name.");
    if (accept(ps, ')'))
        return CK_SUCCESS;
    do {
        if (*nargs >= MAX_ARGS)
            return perr(ps, "too many arguments.");
        arg *a = &args[(*nargs)++];
        memset(a, 0, sizeof *a);
        if (!ident(ps, a->name, sizeof a->name))
            return perr(ps, "expected an argument name (key=value).");
        if (!accept(ps, '='))
            return perr(ps, "expected '=' after the argument name.");
        ck_status st;
        if (accept(ps, '[')) {
            a->is_list = 1;
            if (!accept(ps, ']')) {
                do {
                    if (a->n >= MAX_LIST)
                        return perr(ps, "list too long.");
                    if ((st = expr(ps, &a->v[a->n++])))
                        return st;
                } while (accept(ps, ','));
                if (!accept(ps, ']'))
                    return perr(ps, "expected ']' or ',' in the list.");
            }
        } else {
            a->n = 1;
            if ((st = expr(ps, &a->v[0])))
                return st;
        }
    } while (accept(ps, ','));
    if (!accept(ps, ')'))
        return perr(ps, "expected ')' or ',' after an argument.");
    return CK_SUCCESS;
}

static arg *find(arg *args, int n, const char *key)
{
    for (int i = 0; i < n; ++i)
        if (strcmp(args[i].name, key) == 0) {
            args[i].used = 1;
            return &args[i];
        }
    return NULL;
}

static ck_status need(const char *call_name, arg *args, int n, const char *key, int list, arg **out)
{
    *out = find(args, n, key);
    if (!*out)
        return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...) needs the argument '%s'.",
                       call_name, key);
    if ((*out)->is_list != list)
        return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...): argument '%s' must be %s.",
                       call_name, key, list ? "a list [a, b, ...]" : "a single value");
    return CK_SUCCESS;
}

static ck_status int_of(const char *call_name, const arg *a, int i, int *out)
{
    ck_ival v = a->v[i];
    if (!ck_ival_is_const(v) || v.v < -1 || v.v > 1000)
        return ck_fail(CK_ERROR_PARSE,
                       "ck_descriptor_parse: %s(...): argument '%s' must hold small known "
                       "integers (dimension numbers).",
                       call_name, a->name);
    *out = (int)v.v;
    return CK_SUCCESS;
}

static ck_status stage(parser *ps, ck_descriptor **d)
{
    char name[32];
    arg args[MAX_ARGS];
    int nargs;
    const char *at_start = ps->p;
    ck_status st = call(ps, name, sizeof name, args, &nargs);
    if (st)
        return st;
    arg *a0, *a1;
    int dims[CK_TILE_MAX_TRANSFORM_DIMS], ndims = 0, at = -1;
    ck_transform t;
    ck_descriptor *cur = *d, *next = NULL;
    int n = ck_descriptor_ndim(cur);
    arg *atarg = find(args, nargs, "at");
    if (atarg && !(st = int_of(name, atarg, 0, &at)) && atarg->is_list)
        st = ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...): 'at' is one position.", name);
    if (st)
        return st;
    arg *dim = find(args, nargs, "dim"), *dl = find(args, nargs, "dims");
    if (dim && !dim->is_list) {
        if ((st = int_of(name, dim, 0, &dims[0])))
            return st;
        ndims = 1;
    } else if (dl && dl->is_list && dl->n <= CK_TILE_MAX_TRANSFORM_DIMS) {
        for (int i = 0; i < dl->n && !st; ++i)
            st = int_of(name, dl, i, &dims[ndims++]);
        if (st)
            return st;
    }
    for (int i = 0; i < ndims; ++i)
        if (dims[i] < 0 || dims[i] >= n)
            return ck_fail(CK_ERROR_PARSE,
                           "ck_descriptor_parse: %s(...) at column %d: dimension %d does not "
                           "exist; the descriptor has dims 0 to %d.",
                           name, (int)(at_start - ps->text) + 1, dims[i], n - 1);
    ck_ival len0 = ndims ? ck_descriptor_length(cur, dims[0]) : ck_ival_int(0);
#define NEED(var, key, list)                                                                       \
    do {                                                                                           \
        if ((st = need(name, args, nargs, key, list, &var)))                                       \
            return st;                                                                             \
    } while (0)
#define NEED_DIMS(k)                                                                               \
    do {                                                                                           \
        if (ndims != (k))                                                                          \
            return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...) needs %s.", name,         \
                           (k) == 1 ? "dim=D" : "dims=[D0, D1, ...]");                             \
    } while (0)
    if (strcmp(name, "transpose") == 0) {
        NEED(a0, "perm", 1);
        if (a0->n != n)
            return ck_fail(CK_ERROR_PARSE,
                           "ck_descriptor_parse: transpose(perm=...) needs %d entries.", n);
        ck_transform pt[CK_TILE_MAX_HIDDEN];
        int lo[CK_TILE_MAX_HIDDEN], up[CK_TILE_MAX_HIDDEN];
        for (int i = 0; i < n && !st; ++i) {
            st = int_of(name, a0, i, &lo[i]);
            if (!st && (lo[i] < 0 || lo[i] >= n))
                st = ck_fail(CK_ERROR_PARSE, "transpose: perm[%d] = %d is not a dim.", i, lo[i]);
            for (int k = 0; k < i && !st; ++k)
                if (lo[k] == lo[i])
                    st = ck_fail(CK_ERROR_PARSE,
                                 "transpose: perm[%d] and perm[%d] are both "
                                 "%d; perm must list each of the %d dims exactly once.",
                                 k, i, lo[i], n);
            if (!st)
                st = ck_make_pass_through_transform(ck_descriptor_length(cur, lo[i]), &pt[i]);
            up[i] = i;
        }
        if (!st)
            st = ck_descriptor_transform(cur, n, pt, lo, up, &next);
    } else {
        if (strcmp(name, "pass_through") == 0) {
            NEED_DIMS(1);
            st = ck_make_pass_through_transform(len0, &t);
        } else if (strcmp(name, "pad") == 0) {
            NEED_DIMS(1);
            NEED(a0, "left", 0);
            NEED(a1, "right", 0);
            st = ck_make_pad_transform(len0, a0->v[0], a1->v[0], &t);
        } else if (strcmp(name, "left_pad") == 0) {
            NEED_DIMS(1);
            NEED(a0, "left", 0);
            st = ck_make_left_pad_transform(len0, a0->v[0], &t);
        } else if (strcmp(name, "right_pad") == 0) {
            NEED_DIMS(1);
            NEED(a0, "right", 0);
            st = ck_make_right_pad_transform(len0, a0->v[0], &t);
        } else if (strcmp(name, "unmerge") == 0) {
            NEED_DIMS(1);
            NEED(a0, "lengths", 1);
            st = ck_make_unmerge_transform(a0->n, a0->v, &t);
        } else if (strcmp(name, "merge") == 0 || strcmp(name, "merge_magic") == 0) {
            if (ndims < 1)
                NEED_DIMS(2);
            ck_ival l[CK_TILE_MAX_TRANSFORM_DIMS];
            for (int i = 0; i < ndims; ++i)
                l[i] = ck_descriptor_length(cur, dims[i]);
            st = name[5] ? ck_make_merge_magic_transform(ndims, l, &t)
                         : ck_make_merge_transform(ndims, l, &t);
        } else if (strcmp(name, "embed") == 0) {
            NEED_DIMS(1);
            NEED(a0, "lengths", 1);
            NEED(a1, "coefs", 1);
            if (a0->n != a1->n)
                return ck_fail(CK_ERROR_PARSE,
                               "ck_descriptor_parse: embed: %d lengths but %d coefs.", a0->n,
                               a1->n);
            st = ck_make_embed_transform(a0->n, a0->v, a1->v, &t);
        } else if (strcmp(name, "slice") == 0) {
            NEED_DIMS(1);
            NEED(a0, "begin", 0);
            NEED(a1, "end", 0);
            st = ck_make_slice_transform(len0, a0->v[0], a1->v[0], &t);
        } else if (strcmp(name, "offset") == 0) {
            NEED_DIMS(1);
            NEED(a0, "offset", 0);
            a1 = find(args, nargs, "length");
            ck_ival len;
            if (a1)
                len = a1->v[0];
            else
                st = ck_ival_sub(len0, a0->v[0], &len);
            if (!st)
                st = ck_make_offset_transform(len, a0->v[0], &t);
        } else if (strcmp(name, "modulo") == 0) {
            NEED_DIMS(1);
            NEED(a0, "length", 0);
            st = ck_make_modulo_transform(len0, a0->v[0], &t);
        } else if (strcmp(name, "xor") == 0) {
            NEED_DIMS(2);
            st = ck_make_xor_transform(len0, ck_descriptor_length(cur, dims[1]), &t);
        } else if (strcmp(name, "freeze") == 0) {
            NEED_DIMS(1);
            NEED(a0, "value", 0);
            st = ck_make_freeze_transform(a0->v[0], &t);
        } else if (strcmp(name, "insert") == 0) {
            NEED(a0, "length", 0);
            st = ck_make_insert_transform(a0->v[0], &t);
        } else if (strcmp(name, "replicate") == 0) {
            NEED(a0, "lengths", 1);
            st = ck_make_replicate_transform(a0->n, a0->v, &t);
        } else if (strcmp(name, "indexing") == 0) {
            NEED_DIMS(1);
            NEED(a0, "table", 1);
            int64_t table[MAX_LIST];
            for (int i = 0; i < a0->n; ++i) {
                if (!ck_ival_is_const(a0->v[i]))
                    return ck_fail(CK_ERROR_PARSE,
                                   "ck_descriptor_parse: indexing: table entries must be known "
                                   "integers.");
                table[i] = a0->v[i].v;
            }
            st = ck_make_indexing_transform(a0->n, table, len0, &t);
            if (!st) /* the table is copied into the adaptor before this frame ends */
                st = ck_descriptor_transform_one(cur, &t, dims, at, &next);
            if (st)
                return ck_fail_context(st, "ck_descriptor_parse: %s(...) at column %d", name,
                                       (int)(at_start - ps->text) + 1);
            goto done;
        } else {
            return ck_fail(CK_ERROR_PARSE,
                           "ck_descriptor_parse: unknown transform '%s' at column %d; see "
                           "'ck desc --help' for the accepted ones.",
                           name, (int)(at_start - ps->text) + 1);
        }
        if (!st && t.nlow != ndims)
            st = ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...) consumes %d dims, got %d.",
                         name, t.nlow, ndims);
        if (!st)
            st = ck_descriptor_transform_one(cur, &t, dims, at, &next);
    }
    if (st)
        return ck_fail_context(st, "ck_descriptor_parse: %s(...) at column %d", name,
                               (int)(at_start - ps->text) + 1);
done:
    for (int i = 0; i < nargs; ++i)
        if (!args[i].used && strcmp(args[i].name, "dim") && strcmp(args[i].name, "dims")) {
            ck_descriptor_destroy(next);
            return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...) has no argument '%s'.",
                           name, args[i].name);
        }
    ck_descriptor_destroy(cur);
    *d = next;
    return CK_SUCCESS;
#undef NEED
#undef NEED_DIMS
}

static ck_status base(parser *ps, ck_descriptor **out)
{
    char name[32];
    arg args[MAX_ARGS];
    int nargs;
    ck_status st = call(ps, name, sizeof name, args, &nargs);
    if (st)
        return st;
    arg *l, *s;
    if (strcmp(name, "naive") != 0 && strcmp(name, "packed") != 0 && strcmp(name, "aligned") != 0)
        return ck_fail(CK_ERROR_PARSE,
                       "ck_descriptor_parse: a descriptor starts with naive(...), packed(...) or "
                       "aligned(...), not '%s'.",
                       name);
    if ((st = need(name, args, nargs, "lengths", 1, &l)))
        return st;
    if (strcmp(name, "naive") == 0) {
        if ((st = need(name, args, nargs, "strides", 1, &s)))
            return st;
        if (s->n != l->n)
            return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: naive: %d lengths but %d strides.",
                           l->n, s->n);
        st = ck_descriptor_make_naive(l->n, l->v, s->v, out);
    } else if (strcmp(name, "packed") == 0) {
        st = ck_descriptor_make_packed(l->n, l->v, out);
    } else if (strcmp(name, "aligned") == 0) {
        if ((st = need(name, args, nargs, "align", 0, &s)))
            return st;
        st = ck_descriptor_make_aligned(l->n, l->v, s->v[0], out);
    } else {
        return ck_fail(CK_ERROR_PARSE,
                       "ck_descriptor_parse: a descriptor starts with naive(...), packed(...) or "
                       "aligned(...), not '%s'.",
                       name);
    }
    if (st)
        return ck_fail_context(st, "ck_descriptor_parse: %s(...)", name);
    for (int i = 0; i < nargs; ++i)
        if (!args[i].used) {
            ck_descriptor_destroy(*out);
            *out = NULL;
            return ck_fail(CK_ERROR_PARSE, "ck_descriptor_parse: %s(...) has no argument '%s'.",
                           name, args[i].name);
        }
    return CK_SUCCESS;
}

ck_status ck_descriptor_parse(const char *text, ck_expr_arena *ctx, ck_descriptor **out)
{
    CK_REQUIRE_NOT_NULL(text, "ck_descriptor_parse");
    CK_REQUIRE_NOT_NULL(out, "ck_descriptor_parse");
    *out = NULL;
    parser ps = {text, text, ctx, 0};
    ck_descriptor *d = NULL;
    ck_status st = base(&ps, &d);
    while (!st && accept(&ps, '|'))
        st = stage(&ps, &d);
    skip(&ps);
    if (!st && *ps.p)
        st = perr(&ps, "expected '|' and a transform, or the end of the text.");
    if (st) {
        ck_descriptor_destroy(d);
        return st;
    }
    *out = d;
    return CK_SUCCESS;
}
