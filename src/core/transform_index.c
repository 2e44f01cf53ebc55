/*
 * Transform index formulas (upper -> lower), incremental updates, padding
 * validity and the vectorization guarantees (safe vector length/stride).
 * Formulas follow ERRATA.md "Transforms, upper -> lower". All arithmetic
 * wraps (no undefined behaviour for any input index).
 */
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/magic_div.h"
#include "core/tile_internal.h"

/* Merge by division: mixed radix, last lower dim fastest. */
static void merge_div(const ck_transform *t, int64_t up, int64_t *low)
{
    int n = t->nlow;
    if (t->use_magic && up >= 0 && up <= CK_MAGIC_MAX_DIVIDEND) {
        uint32_t rem = (uint32_t)up;
        for (int i = 0; i < n - 1; ++i) {
            uint32_t q = ck_magic_div(rem, t->magic_mul[i], t->magic_shift[i]);
            low[i] = q;
            /* scan_i = prod_{j>i} len_j <= 2^31, q*scan_i <= rem */
            uint64_t scan = 1;
            for (int j = i + 1; j < n; ++j)
                scan *= (uint64_t)t->coefs[j].v;
            rem -= (uint32_t)(q * scan);
        }
        low[n - 1] = rem;
        return;
    }
    for (int i = n - 1; i > 0; --i) {
        int64_t len = t->coefs[i].v;
        low[i] = ck_floormod64(up, len);
        up = ck_floordiv64(up, len);
    }
    low[0] = up;
}

void ck_transform_lower_unchecked(const ck_transform *t, const int64_t *up, int64_t *low)
{
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
    case CK_TRANSFORM_RIGHT_PAD:
        low[0] = up[0];
        break;
    case CK_TRANSFORM_PAD:
    case CK_TRANSFORM_LEFT_PAD:
        low[0] = ck_wsub(up[0], t->p0.v);
        break;
    case CK_TRANSFORM_SLICE:
    case CK_TRANSFORM_OFFSET:
        low[0] = ck_wadd(up[0], t->p0.v);
        break;
    case CK_TRANSFORM_EMBED:
    case CK_TRANSFORM_UNMERGE: {
        int64_t s = 0;
        for (int i = 0; i < t->nup; ++i)
            s = ck_wadd(s, ck_wmul(up[i], t->coefs[i].v));
        low[0] = s;
        break;
    }
    case CK_TRANSFORM_MERGE:
        merge_div(t, up[0], low);
        break;
    case CK_TRANSFORM_FREEZE:
        low[0] = t->p0.v;
        break;
    case CK_TRANSFORM_INSERT:
    case CK_TRANSFORM_REPLICATE:
        break;
    case CK_TRANSFORM_MODULO:
        low[0] = ck_floormod64(up[0], t->p0.v);
        break;
    case CK_TRANSFORM_XOR:
        low[0] = up[0];
        low[1] = up[1] ^ ck_floormod64(up[0], t->coefs[1].v);
        break;
    case CK_TRANSFORM_INDEXING: {
        int64_t n = t->up_lengths[0].v;
        /* out-of-range gathers read the clamped entry (never outside the table) */
        int64_t i = up[0] < 0 ? 0 : (up[0] >= n ? n - 1 : up[0]);
        low[0] = t->table[i];
        break;
    }
    default:
        break;
    }
}

/* Checks of the public single-transform entry points: a known kind, dimension
 * counts in range, concrete parameters, and parameters that re-derive the
 * same transform (a hand-made value with, say, a zero merge length is refused
 * instead of dividing by zero). */
static ck_status check_public(const char *fn, const ck_transform *t)
{
    if ((unsigned)t->kind >= CK_TRANSFORM_KIND_COUNT_ || t->nup < 0 || t->nlow < 0 ||
        t->nup > CK_TILE_MAX_TRANSFORM_DIMS || t->nlow > CK_TILE_MAX_TRANSFORM_DIMS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: not a valid transform (kind %d, %d upper, %d lower dims); build "
                       "transforms with ck_make_*_transform.",
                       fn, (int)t->kind, t->nup, t->nlow);
    if (!ck_transform_is_concrete(t))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the %s transform has symbolic parameters; bind the symbols first.", fn,
                       ck_transform_kind_name(t->kind));
    ck_transform fixed;
    ck_status st = ck_transform_bind(t, NULL, 0, &fixed);
    if (st)
        return ck_fail_context(st, "%s: the %s transform is inconsistent", fn,
                               ck_transform_kind_name(t->kind));
    if (fixed.nup != t->nup || fixed.nlow != t->nlow)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the %s transform is inconsistent (%d upper, %d lower dims where its "
                       "parameters give %d and %d).",
                       fn, ck_transform_kind_name(t->kind), t->nup, t->nlow, fixed.nup, fixed.nlow);
    return CK_SUCCESS;
}

ck_status ck_transform_calculate_lower_index(const ck_transform *t, const int64_t *up, int64_t *low)
{
    CK_REQUIRE_NOT_NULL(t, "ck_transform_calculate_lower_index");
    if ((t->nup && !up) || (t->nlow && !low))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_transform_calculate_lower_index: null index array for a %s transform.",
                       ck_transform_kind_name(t->kind));
    ck_status st = check_public("ck_transform_calculate_lower_index", t);
    if (st)
        return st;
    ck_transform_lower_unchecked(t, up, low);
    return CK_SUCCESS;
}

/* Merge step by digit-wise addition with carry (or subtraction with borrow)
 * when both the old and the new upper index are in range. */
static void merge_update(const ck_transform *t, int64_t up_old, int64_t diff, int64_t *low)
{
    int n = t->nlow;
    int64_t total = t->up_lengths[0].v, up_new = ck_wadd(up_old, diff);
    if (up_old < 0 || up_old >= total || up_new < 0 || up_new >= total) {
        merge_div(t, up_new, low);
        return;
    }
    int64_t mag = diff < 0 ? -diff : diff, digit[CK_TILE_MAX_TRANSFORM_DIMS];
    for (int i = n - 1; i >= 0; --i) {
        int64_t len = t->coefs[i].v;
        digit[i] = i ? mag % len : mag;
        mag = i ? mag / len : 0;
    }
    int64_t carry = 0;
    for (int i = n - 1; i >= 0; --i) {
        int64_t len = t->coefs[i].v;
        if (diff >= 0) {
            low[i] += digit[i] + carry;
            carry = (i > 0 && low[i] >= len);
            if (carry)
                low[i] -= len;
        } else {
            low[i] -= digit[i] + carry;
            carry = (i > 0 && low[i] < 0);
            if (carry)
                low[i] += len;
        }
    }
}

void ck_transform_update_unchecked(const ck_transform *t, const int64_t *up_old,
                                   const int64_t *up_diff, int64_t *low, int64_t *low_diff)
{
    int64_t old[CK_TILE_MAX_TRANSFORM_DIMS];
    memcpy(old, low, sizeof(int64_t) * (size_t)t->nlow);
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
    case CK_TRANSFORM_RIGHT_PAD:
    case CK_TRANSFORM_PAD:
    case CK_TRANSFORM_LEFT_PAD:
    case CK_TRANSFORM_SLICE:
    case CK_TRANSFORM_OFFSET:
        low[0] = ck_wadd(low[0], up_diff[0]);
        break;
    case CK_TRANSFORM_EMBED:
    case CK_TRANSFORM_UNMERGE: {
        int64_t s = 0;
        for (int i = 0; i < t->nup; ++i)
            s = ck_wadd(s, ck_wmul(up_diff[i], t->coefs[i].v));
        low[0] = ck_wadd(low[0], s);
        break;
    }
    case CK_TRANSFORM_MERGE:
        merge_update(t, up_old[0], up_diff[0], low);
        break;
    case CK_TRANSFORM_FREEZE:
    case CK_TRANSFORM_INSERT:
    case CK_TRANSFORM_REPLICATE:
        break;
    default: { /* modulo, xor, indexing: recompute from the new upper index */
        int64_t up_new[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int i = 0; i < t->nup; ++i)
            up_new[i] = ck_wadd(up_old[i], up_diff[i]);
        ck_transform_lower_unchecked(t, up_new, low);
    }
    }
    if (low_diff)
        for (int i = 0; i < t->nlow; ++i)
            low_diff[i] = ck_wsub(low[i], old[i]);
}

ck_status ck_transform_update_lower_index(const ck_transform *t, const int64_t *up_old,
                                          const int64_t *up_diff, int64_t *low, int64_t *low_diff)
{
    CK_REQUIRE_NOT_NULL(t, "ck_transform_update_lower_index");
    if ((t->nup && (!up_old || !up_diff)) || (t->nlow && !low))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_transform_update_lower_index: null index array for a %s transform.",
                       ck_transform_kind_name(t->kind));
    ck_status st = check_public("ck_transform_update_lower_index", t);
    if (st)
        return st;
    ck_transform_update_unchecked(t, up_old, up_diff, low, low_diff);
    return CK_SUCCESS;
}

int ck_transform_is_valid_upper_index(const ck_transform *t, const int64_t *up)
{
    if (!t || !up)
        return 0;
    switch (t->kind) {
    case CK_TRANSFORM_PAD: {
        int64_t low = ck_wsub(up[0], t->p0.v);
        return low >= 0 && low < t->low_lengths[0].v;
    }
    case CK_TRANSFORM_LEFT_PAD:
        return up[0] >= t->p0.v;
    case CK_TRANSFORM_RIGHT_PAD:
        return up[0] < t->low_lengths[0].v;
    default:
        return 1;
    }
}

/* ------------------------------------------------------------ vector guarantees */

static ck_vector_info vi(int64_t length, int64_t stride, int known)
{
    ck_vector_info r = {length, stride, known};
    return r;
}

/* gcd treating 0 as "divisible by anything" */
static int64_t g(int64_t a, ck_ival x)
{
    return ck_gcd64(a, ck_ival_divisor(x));
}

static void linear_upper(const ck_transform *t, const ck_vector_info *low, ck_vector_info *up)
{
    /* embed / unmerge: n upper dims onto one lower dim with coefficients */
    ck_vector_info l = low[0];
    for (int i = 0; i < t->nup; ++i) {
        ck_ival c = t->coefs[i];
        if (ck_ival_is_const(c) && c.v == 0) {
            up[i] = vi(0, 0, 1);
            continue;
        }
        if (l.length == 0) { /* the lower dim is affine: so is every upper dim */
            int64_t s = 0;
            int known =
                l.stride_known && ck_ival_is_const(c) && !__builtin_mul_overflow(l.stride, c.v, &s);
            up[i] = vi(0, known ? s : 0, known);
            continue;
        }
        if (ck_ival_is_const(c) && c.v == 1) {
            int64_t v = l.length;
            for (int j = 0; j < t->nup; ++j)
                if (j != i && !(ck_ival_is_const(t->up_lengths[j]) && t->up_lengths[j].v == 1))
                    v = g(v, t->coefs[j]);
            up[i] = vi(v, l.stride, l.stride_known);
            continue;
        }
        up[i] = vi(1, 0, 1);
    }
}

static void merge_upper(const ck_transform *t, const ck_vector_info *low_all, ck_vector_info *up)
{
    /* Lower dims of known length 1 always get index 0: the merge is the same mixed radix over
     * the other dims (without this, a trailing length-1 dim, which has no guarantee of its
     * own, would hide the contiguity of the dims before it). */
    ck_vector_info low[CK_TILE_MAX_TRANSFORM_DIMS];
    ck_ival lens[CK_TILE_MAX_TRANSFORM_DIMS];
    int n = 0;
    for (int i = 0; i < t->nlow; ++i)
        if (!(ck_ival_is_const(t->coefs[i]) && t->coefs[i].v == 1)) {
            low[n] = low_all[i];
            lens[n++] = t->coefs[i];
        }
    if (n == 0) { /* upper length 1 */
        up[0] = vi(1, 0, 1);
        return;
    }
    ck_vector_info last = low[n - 1];
    ck_ival len_last = lens[n - 1];
    if (last.length != 0) {
        up[0] = vi(g(last.length, len_last), last.stride, last.stride_known);
        return;
    }
    /* longest suffix k..n-1 of affine lower dims forming one affine block */
    int k = n - 1;
    int64_t block = 1;
    while (k > 0) {
        ck_vector_info lo = low[k - 1], hi = low[k];
        ck_ival len = lens[k];
        int64_t expect;
        if (lo.length != 0 || !lo.stride_known || !hi.stride_known || !ck_ival_is_const(len) ||
            __builtin_mul_overflow(len.v, hi.stride, &expect) || expect != lo.stride)
            break;
        --k;
    }
    if (k == 0) {
        up[0] = vi(0, last.stride, last.stride_known);
        return;
    }
    /* lengths k+1..n-1 are known; a symbolic length k contributes its divisor */
    for (int j = k; j < n; ++j) {
        ck_ival len = lens[j];
        int64_t v = ck_ival_is_const(len) ? len.v : ck_ival_divisor(len);
        if (__builtin_mul_overflow(block, v, &block)) {
            block = ck_ival_is_const(len_last) ? len_last.v : ck_ival_divisor(len_last);
            break;
        }
    }
    up[0] = vi(block < 1 ? 1 : block, last.stride, last.stride_known);
}

void ck_transform_upper_vector_info(const ck_transform *t, const ck_vector_info *low,
                                    ck_vector_info *up)
{
    if (!t || !up || (t->nlow && !low) || (unsigned)t->kind >= CK_TRANSFORM_KIND_COUNT_ ||
        t->nup < 0 || t->nlow < 0 || t->nup > CK_TILE_MAX_TRANSFORM_DIMS ||
        t->nlow > CK_TILE_MAX_TRANSFORM_DIMS)
        return;
    ck_vector_info l = t->nlow ? low[0] : vi(0, 0, 1);
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
        up[0] = l;
        break;
    case CK_TRANSFORM_PAD:
        up[0] = vi(g(g(l.length, t->p0), t->low_lengths[0]), l.stride, l.stride_known);
        break;
    case CK_TRANSFORM_LEFT_PAD:
        up[0] = vi(g(l.length, t->p0), l.stride, l.stride_known);
        break;
    case CK_TRANSFORM_RIGHT_PAD:
        up[0] = vi(g(l.length, t->low_lengths[0]), l.stride, l.stride_known);
        break;
    case CK_TRANSFORM_SLICE:
    case CK_TRANSFORM_OFFSET:
        up[0] = vi(l.length == 0 ? 0 : g(l.length, t->p0), l.stride, l.stride_known);
        break;
    case CK_TRANSFORM_MODULO:
        up[0] = vi(g(l.length, t->p0), l.stride, l.stride_known);
        break;
    case CK_TRANSFORM_EMBED:
    case CK_TRANSFORM_UNMERGE:
        linear_upper(t, low, up);
        break;
    case CK_TRANSFORM_MERGE:
        merge_upper(t, low, up);
        break;
    case CK_TRANSFORM_INSERT:
    case CK_TRANSFORM_REPLICATE:
        for (int i = 0; i < t->nup; ++i)
            up[i] = vi(0, 0, 1);
        break;
    case CK_TRANSFORM_FREEZE:
        break;
    default: /* xor, indexing */
        for (int i = 0; i < t->nup; ++i)
            up[i] = vi(1, 0, 1);
        break;
    }
    for (int i = 0; i < t->nup; ++i)
        if (up[i].length == 1) /* no guarantee: the stride means nothing */
            up[i] = vi(1, 0, 1);
}
