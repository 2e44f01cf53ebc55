/*
 * Transforms: constructors with argument checks, description and binding of
 * symbols. The index formulas are in transform_index.c.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/magic_div.h"
#include "core/tile_internal.h"

static const char *const kind_names[CK_TRANSFORM_KIND_COUNT_] = {
    "pass_through", "pad",       "left_pad", "right_pad", "embed", "merge",  "unmerge", "freeze",
    "insert",       "replicate", "slice",    "modulo",    "xor",   "offset", "indexing"};

const char *ck_transform_kind_name(ck_transform_kind kind)
{
    return (unsigned)kind < CK_TRANSFORM_KIND_COUNT_ ? kind_names[kind] : "unknown";
}

static void ival_str(ck_ival x, char *buf, size_t n)
{
    ck_ival_print(x, buf, n);
}

/* A length: known >= 1, or a symbolic expression whose minimum is >= 1. */
static ck_status require_len(const char *fn, const char *arg, ck_ival x)
{
    int64_t mn, mx;
    ck_ival_range(x, &mn, &mx);
    if (mn >= 1)
        return CK_SUCCESS;
    char b[160];
    ival_str(x, b, sizeof b);
    if (x.e)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' = %s may be %lld; lengths must be >= 1 (declare the "
                       "symbol with a minimum of at least 1).",
                       fn, arg, b, (long long)mn);
    return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: argument '%s' = %s; lengths must be >= 1.", fn,
                   arg, b);
}

static ck_status require_nonneg(const char *fn, const char *arg, ck_ival x)
{
    int64_t mn, mx;
    ck_ival_range(x, &mn, &mx);
    if (mn >= 0)
        return CK_SUCCESS;
    char b[160];
    ival_str(x, b, sizeof b);
    return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: argument '%s' = %s %s; it must be >= 0.", fn,
                   arg, b, x.e ? "may be negative" : "is negative");
}

static ck_status require_out(const char *fn, ck_transform *out)
{
    CK_REQUIRE_NOT_NULL(out, fn);
    memset(out, 0, sizeof *out);
    return CK_SUCCESS;
}

static ck_status require_n(const char *fn, int n, int min)
{
    if (n < min || n > CK_TILE_MAX_TRANSFORM_DIMS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'n' = %d; accepted: %d to %d dimensions.", fn, n, min,
                       CK_TILE_MAX_TRANSFORM_DIMS);
    return CK_SUCCESS;
}

static ck_status sum_check(const char *fn, ck_status st)
{
    if (st)
        return ck_fail_context(st, "%s", fn);
    return CK_SUCCESS;
}

ck_status ck_make_pass_through_transform(ck_ival length, ck_transform *out)
{
    const char *fn = "ck_make_pass_through_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "length", length);
    if (st)
        return st;
    out->kind = CK_TRANSFORM_PASS_THROUGH;
    out->nup = out->nlow = 1;
    out->up_lengths[0] = out->low_lengths[0] = length;
    return CK_SUCCESS;
}

static ck_status make_pad(const char *fn, ck_transform_kind kind, ck_ival low_length, ck_ival left,
                          ck_ival right, ck_transform *out)
{
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "low_length", low_length);
    if (!st)
        st = require_nonneg(fn, "left", left);
    if (!st)
        st = require_nonneg(fn, "right", right);
    if (st)
        return st;
    out->kind = kind;
    out->nup = out->nlow = 1;
    out->low_lengths[0] = low_length;
    out->p0 = left;
    out->p1 = right;
    out->up_lengths[0] = ck_iv_add(ck_iv_add(low_length, left, &st), right, &st);
    return sum_check(fn, st);
}

ck_status ck_make_pad_transform(ck_ival low_length, ck_ival left, ck_ival right, ck_transform *out)
{
    return make_pad("ck_make_pad_transform", CK_TRANSFORM_PAD, low_length, left, right, out);
}

ck_status ck_make_left_pad_transform(ck_ival low_length, ck_ival left, ck_transform *out)
{
    return make_pad("ck_make_left_pad_transform", CK_TRANSFORM_LEFT_PAD, low_length, left,
                    ck_ival_int(0), out);
}

ck_status ck_make_right_pad_transform(ck_ival low_length, ck_ival right, ck_transform *out)
{
    return make_pad("ck_make_right_pad_transform", CK_TRANSFORM_RIGHT_PAD, low_length,
                    ck_ival_int(0), right, out);
}

/* The embed constructors: coefficients >= 0, or (signed) also negative constants. */
static ck_status make_embed(const char *fn, int n, const ck_ival *lengths, const ck_ival *coefs,
                            int signed_coefs, ck_transform *out)
{
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_n(fn, n, 1);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(lengths, fn);
    CK_REQUIRE_NOT_NULL(coefs, fn);
    out->kind = CK_TRANSFORM_EMBED;
    out->nup = n;
    out->nlow = 1;
    out->low_fits = 1;
    ck_ival extent = ck_ival_int(1);
    ck_status acc = CK_SUCCESS;
    for (int i = 0; i < n; ++i) {
        char arg[32];
        snprintf(arg, sizeof arg, "lengths[%d]", i);
        if ((st = require_len(fn, arg, lengths[i])))
            return st;
        snprintf(arg, sizeof arg, "coefs[%d]", i);
        /* signed: a negative coefficient must be a constant (CK's backward-data views, e.g.
         * the output row o = h - t * step): the lower index may then be negative and is made
         * valid by a later offset and pad; the extent counts the positive terms only */
        int negative = signed_coefs && ck_ival_is_const(coefs[i]) && coefs[i].v < 0;
        if (!negative && (st = require_nonneg(fn, arg, coefs[i])))
            return st;
        out->up_lengths[i] = lengths[i];
        out->coefs[i] = coefs[i];
        if (!negative)
            extent = ck_iv_add(
                extent, ck_iv_mul(ck_iv_sub(lengths[i], ck_ival_int(1), &acc), coefs[i], &acc),
                &acc);
    }
    out->low_lengths[0] = extent;
    return sum_check(fn, acc);
}

ck_status ck_make_embed_transform(int n, const ck_ival *lengths, const ck_ival *coefs,
                                  ck_transform *out)
{
    return make_embed("ck_make_embed_transform", n, lengths, coefs, 0, out);
}

ck_status ck_make_embed_signed_transform(int n, const ck_ival *lengths, const ck_ival *coefs,
                                         ck_transform *out)
{
    return make_embed("ck_make_embed_signed_transform", n, lengths, coefs, 1, out);
}

static ck_status make_merge(const char *fn, int n, const ck_ival *lengths, int magic,
                            ck_transform *out)
{
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_n(fn, n, 1);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(lengths, fn);
    out->kind = CK_TRANSFORM_MERGE;
    out->nup = 1;
    out->nlow = n;
    ck_ival prod = ck_ival_int(1);
    ck_status acc = CK_SUCCESS;
    for (int i = 0; i < n; ++i) {
        char arg[32];
        snprintf(arg, sizeof arg, "lengths[%d]", i);
        if ((st = require_len(fn, arg, lengths[i])))
            return st;
        out->low_lengths[i] = out->coefs[i] = lengths[i];
        prod = ck_iv_mul(prod, lengths[i], &acc);
    }
    out->up_lengths[0] = prod;
    if (acc)
        return sum_check(fn, acc);
    if (magic) {
        if (!ck_ival_is_const(prod) || prod.v > (int64_t)CK_MAGIC_MAX_DIVIDEND + 1)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: magic-number division needs known lengths whose product is at "
                           "most 2^31; use ck_make_merge_transform for these lengths.",
                           fn);
        out->use_magic = 1;
        int64_t scan = 1;
        for (int i = n - 1; i >= 0; --i) {
            /* magic of index i divides by prod_{j>i} len_j */
            ck_magic_div_init((uint32_t)scan, &out->magic_mul[i], &out->magic_shift[i]);
            scan *= lengths[i].v;
        }
    }
    return CK_SUCCESS;
}

ck_status ck_make_merge_transform(int n, const ck_ival *lengths, ck_transform *out)
{
    return make_merge("ck_make_merge_transform", n, lengths, 0, out);
}

ck_status ck_make_merge_magic_transform(int n, const ck_ival *lengths, ck_transform *out)
{
    return make_merge("ck_make_merge_magic_transform", n, lengths, 1, out);
}

ck_status ck_make_unmerge_transform(int n, const ck_ival *lengths, ck_transform *out)
{
    const char *fn = "ck_make_unmerge_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_n(fn, n, 1);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(lengths, fn);
    out->kind = CK_TRANSFORM_UNMERGE;
    out->nup = n;
    out->nlow = 1;
    ck_ival prod = ck_ival_int(1);
    ck_status acc = CK_SUCCESS;
    for (int i = n - 1; i >= 0; --i) {
        char arg[32];
        snprintf(arg, sizeof arg, "lengths[%d]", i);
        if ((st = require_len(fn, arg, lengths[i])))
            return st;
        out->up_lengths[i] = lengths[i];
        out->coefs[i] = prod; /* row-major stride of upper dim i */
        prod = ck_iv_mul(prod, lengths[i], &acc);
    }
    out->low_lengths[0] = prod;
    return sum_check(fn, acc);
}

ck_status ck_make_freeze_transform(ck_ival value, ck_transform *out)
{
    const char *fn = "ck_make_freeze_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_nonneg(fn, "value", value);
    if (st)
        return st;
    out->kind = CK_TRANSFORM_FREEZE;
    out->nup = 0;
    out->nlow = 1;
    out->low_fits = 1;
    out->p0 = value;
    out->low_lengths[0] = ck_iv_add(value, ck_ival_int(1), &st);
    return sum_check(fn, st);
}

ck_status ck_make_insert_transform(ck_ival length, ck_transform *out)
{
    const char *fn = "ck_make_insert_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "length", length);
    if (st)
        return st;
    out->kind = CK_TRANSFORM_INSERT;
    out->nup = 1;
    out->nlow = 0;
    out->up_lengths[0] = length;
    return CK_SUCCESS;
}

ck_status ck_make_replicate_transform(int n, const ck_ival *lengths, ck_transform *out)
{
    const char *fn = "ck_make_replicate_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_n(fn, n, 1);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(lengths, fn);
    out->kind = CK_TRANSFORM_REPLICATE;
    out->nup = n;
    out->nlow = 0;
    for (int i = 0; i < n; ++i) {
        char arg[32];
        snprintf(arg, sizeof arg, "lengths[%d]", i);
        if ((st = require_len(fn, arg, lengths[i])))
            return st;
        out->up_lengths[i] = lengths[i];
    }
    return CK_SUCCESS;
}

ck_status ck_make_slice_transform(ck_ival low_length, ck_ival begin, ck_ival end, ck_transform *out)
{
    const char *fn = "ck_make_slice_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "low_length", low_length);
    if (!st)
        st = require_nonneg(fn, "begin", begin);
    if (st)
        return st;
    ck_ival len = ck_iv_sub(end, begin, &st), room = ck_iv_sub(low_length, end, &st);
    if (st)
        return sum_check(fn, st);
    int64_t lmin, lmax, rmin, rmax;
    ck_ival_range(len, &lmin, &lmax);
    ck_ival_range(room, &rmin, &rmax);
    if (lmin < 1 || rmin < 0) {
        char b0[96], b1[96], b2[96];
        ival_str(low_length, b0, sizeof b0);
        ival_str(begin, b1, sizeof b1);
        ival_str(end, b2, sizeof b2);
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: slice [%s, %s) of a dimension of length %s; accepted: "
                       "0 <= begin < end <= low_length (known for every value of the symbols).",
                       fn, b1, b2, b0);
    }
    out->kind = CK_TRANSFORM_SLICE;
    out->nup = out->nlow = 1;
    out->low_lengths[0] = low_length;
    out->p0 = begin;
    out->p1 = end;
    out->up_lengths[0] = len;
    return CK_SUCCESS;
}

ck_status ck_make_modulo_transform(ck_ival modulus, ck_ival length, ck_transform *out)
{
    const char *fn = "ck_make_modulo_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "modulus", modulus);
    if (!st)
        st = require_len(fn, "length", length);
    if (st)
        return st;
    out->kind = CK_TRANSFORM_MODULO;
    out->nup = out->nlow = 1;
    out->p0 = modulus;
    out->up_lengths[0] = length;
    out->low_lengths[0] = modulus;
    return CK_SUCCESS;
}

ck_status ck_make_xor_transform(ck_ival len0, ck_ival len1, ck_transform *out)
{
    const char *fn = "ck_make_xor_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "len0", len0);
    if (!st)
        st = require_len(fn, "len1", len1);
    if (st)
        return st;
    if (!ck_ival_is_const(len1) || (len1.v & (len1.v - 1)) != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'len1' must be a known power of two so that "
                       "up1 ^ (up0 mod len1) stays below len1%s.",
                       fn, ck_ival_is_const(len1) ? "" : " (it is symbolic)");
    out->kind = CK_TRANSFORM_XOR;
    out->nup = out->nlow = 2;
    out->up_lengths[0] = out->low_lengths[0] = out->coefs[0] = len0;
    out->up_lengths[1] = out->low_lengths[1] = out->coefs[1] = len1;
    return CK_SUCCESS;
}

ck_status ck_make_offset_transform(ck_ival length, ck_ival offset, ck_transform *out)
{
    const char *fn = "ck_make_offset_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "length", length);
    if (!st)
        st = require_nonneg(fn, "offset", offset);
    if (st)
        return st;
    out->kind = CK_TRANSFORM_OFFSET;
    out->nup = out->nlow = 1;
    out->low_fits = 1;
    out->up_lengths[0] = length;
    out->p0 = offset;
    out->low_lengths[0] = ck_iv_add(length, offset, &st);
    return sum_check(fn, st);
}

ck_status ck_make_indexing_transform(int64_t n, const int64_t *table, ck_ival low_length,
                                     ck_transform *out)
{
    const char *fn = "ck_make_indexing_transform";
    ck_status st = require_out(fn, out);
    if (!st)
        st = require_len(fn, "low_length", low_length);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(table, fn);
    if (n < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'n' = %lld; the table needs at least 1 entry.", fn,
                       (long long)n);
    int64_t mn, mx;
    ck_ival_range(low_length, &mn, &mx);
    for (int64_t i = 0; i < n; ++i) {
        if (table[i] < 0 || table[i] >= mx)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: table[%lld] = %lld is outside the lower dimension [0, %lld).", fn,
                           (long long)i, (long long)table[i], (long long)mx);
    }
    out->kind = CK_TRANSFORM_INDEXING;
    out->nup = out->nlow = 1;
    out->up_lengths[0] = ck_ival_int(n);
    out->low_lengths[0] = low_length;
    out->table = table;
    return CK_SUCCESS;
}

int ck_transform_is_concrete(const ck_transform *t)
{
    for (int i = 0; i < CK_TILE_MAX_TRANSFORM_DIMS; ++i)
        if (t->up_lengths[i].e || t->low_lengths[i].e || t->coefs[i].e)
            return 0;
    return !t->p0.e && !t->p1.e;
}

ck_status ck_transform_bind(const ck_transform *t, const ck_binding *b, int nb, ck_transform *out)
{
    ck_ival len[CK_TILE_MAX_TRANSFORM_DIMS], coef[CK_TILE_MAX_TRANSFORM_DIMS], low0, p0, p1;
    ck_status st = CK_SUCCESS;
    for (int i = 0; i < CK_TILE_MAX_TRANSFORM_DIMS && !st; ++i) {
        st = ck_ival_substitute(t->up_lengths[i], b, nb, &len[i]);
        if (!st)
            st = ck_ival_substitute(t->coefs[i], b, nb, &coef[i]);
    }
    if (!st)
        st = ck_ival_substitute(t->low_lengths[0], b, nb, &low0);
    if (!st)
        st = ck_ival_substitute(t->p0, b, nb, &p0);
    if (!st)
        st = ck_ival_substitute(t->p1, b, nb, &p1);
    if (st)
        return st;
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
        return ck_make_pass_through_transform(len[0], out);
    case CK_TRANSFORM_PAD:
        return ck_make_pad_transform(low0, p0, p1, out);
    case CK_TRANSFORM_LEFT_PAD:
        return ck_make_left_pad_transform(low0, p0, out);
    case CK_TRANSFORM_RIGHT_PAD:
        return ck_make_right_pad_transform(low0, p1, out);
    case CK_TRANSFORM_EMBED:
        return ck_make_embed_signed_transform(t->nup, len, coef, out);
    case CK_TRANSFORM_MERGE:
        return t->use_magic ? ck_make_merge_magic_transform(t->nlow, coef, out)
                            : ck_make_merge_transform(t->nlow, coef, out);
    case CK_TRANSFORM_UNMERGE:
        return ck_make_unmerge_transform(t->nup, len, out);
    case CK_TRANSFORM_FREEZE:
        return ck_make_freeze_transform(p0, out);
    case CK_TRANSFORM_INSERT:
        return ck_make_insert_transform(len[0], out);
    case CK_TRANSFORM_REPLICATE:
        return ck_make_replicate_transform(t->nup, len, out);
    case CK_TRANSFORM_SLICE:
        return ck_make_slice_transform(low0, p0, p1, out);
    case CK_TRANSFORM_MODULO:
        return ck_make_modulo_transform(p0, len[0], out);
    case CK_TRANSFORM_XOR:
        return ck_make_xor_transform(len[0], len[1], out);
    case CK_TRANSFORM_OFFSET:
        return ck_make_offset_transform(len[0], p0, out);
    case CK_TRANSFORM_INDEXING:
        return ck_make_indexing_transform(len[0].v, t->table, low0, out);
    default:
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_transform_bind: unknown transform kind %d.",
                       (int)t->kind);
    }
}

static size_t list_str(char *buf, size_t size, const ck_ival *v, int n)
{
    size_t len = 0;
    char tmp[200];
    len += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n; ++i) {
        ival_str(v[i], tmp, sizeof tmp);
        len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s",
                                i ? ", " : "", tmp);
    }
    len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "]");
    return len;
}

size_t ck_transform_describe(const ck_transform *t, char *buf, size_t size)
{
    char a[512], b[512], c[512];
    const char *name = ck_transform_kind_name(t->kind);
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
    case CK_TRANSFORM_INSERT:
        ival_str(t->up_lengths[0], a, sizeof a);
        return (size_t)snprintf(buf, size, "%s(%s)", name, a);
    case CK_TRANSFORM_PAD:
    case CK_TRANSFORM_LEFT_PAD:
    case CK_TRANSFORM_RIGHT_PAD:
    case CK_TRANSFORM_SLICE:
        ival_str(t->low_lengths[0], a, sizeof a);
        ival_str(t->p0, b, sizeof b);
        ival_str(t->p1, c, sizeof c);
        if (t->kind == CK_TRANSFORM_PAD)
            return (size_t)snprintf(buf, size, "pad(low=%s, left=%s, right=%s)", a, b, c);
        if (t->kind == CK_TRANSFORM_LEFT_PAD)
            return (size_t)snprintf(buf, size, "left_pad(low=%s, left=%s)", a, b);
        if (t->kind == CK_TRANSFORM_RIGHT_PAD)
            return (size_t)snprintf(buf, size, "right_pad(low=%s, right=%s)", a, c);
        return (size_t)snprintf(buf, size, "slice(low=%s, begin=%s, end=%s)", a, b, c);
    case CK_TRANSFORM_EMBED:
        list_str(a, sizeof a, t->up_lengths, t->nup);
        list_str(b, sizeof b, t->coefs, t->nup);
        return (size_t)snprintf(buf, size, "embed(lengths=%s, coefs=%s)", a, b);
    case CK_TRANSFORM_MERGE:
        list_str(a, sizeof a, t->coefs, t->nlow);
        return (size_t)snprintf(buf, size, "%s(%s)", t->use_magic ? "merge_magic" : "merge", a);
    case CK_TRANSFORM_UNMERGE:
    case CK_TRANSFORM_REPLICATE:
        list_str(a, sizeof a, t->up_lengths, t->nup);
        return (size_t)snprintf(buf, size, "%s(%s)", name, a);
    case CK_TRANSFORM_FREEZE:
        ival_str(t->p0, a, sizeof a);
        return (size_t)snprintf(buf, size, "freeze(%s)", a);
    case CK_TRANSFORM_MODULO:
        ival_str(t->p0, a, sizeof a);
        ival_str(t->up_lengths[0], b, sizeof b);
        return (size_t)snprintf(buf, size, "modulo(mod=%s, length=%s)", a, b);
    case CK_TRANSFORM_XOR:
        list_str(a, sizeof a, t->up_lengths, 2);
        return (size_t)snprintf(buf, size, "xor(%s)", a);
    case CK_TRANSFORM_OFFSET:
        ival_str(t->up_lengths[0], a, sizeof a);
        ival_str(t->p0, b, sizeof b);
        return (size_t)snprintf(buf, size, "offset(length=%s, offset=%s)", a, b);
    case CK_TRANSFORM_INDEXING: {
        ival_str(t->low_lengths[0], a, sizeof a);
        size_t len = (size_t)snprintf(buf, size, "indexing(n=%lld, low=%s, table=[",
                                      (long long)t->up_lengths[0].v, a);
        for (int64_t i = 0; i < t->up_lengths[0].v && i < 8; ++i)
            len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
                                    "%s%lld", i ? ", " : "", (long long)t->table[i]);
        len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s])",
                                t->up_lengths[0].v > 8 ? ", ..." : "");
        return len;
    }
    default:
        return (size_t)snprintf(buf, size, "unknown(%d)", (int)t->kind);
    }
}
