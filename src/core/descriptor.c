/*
 * Tensor descriptors: an adaptor whose single bottom dim (hidden id 0) is the
 * element offset, plus the element space size.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/tile_internal.h"

enum { MAX_DESC_DIMS = CK_TILE_MAX_TRANSFORM_DIMS };

void ck_descriptor_destroy(ck_descriptor *d)
{
    if (!d)
        return;
    ck_adaptor_destroy(d->ad);
    free(d);
}

/* Wrap an adaptor (taking ownership). */
static ck_status wrap(ck_adaptor *ad, ck_ival es, ck_descriptor **out)
{
    ck_descriptor *d = malloc(sizeof *d);
    if (!d) {
        ck_adaptor_destroy(ad);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_descriptor: out of memory.");
    }
    d->ad = ad;
    d->element_space = es;
    *out = d;
    return CK_SUCCESS;
}

static ck_status check_n(const char *fn, int n, const void *lengths, ck_descriptor **out)
{
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    CK_REQUIRE_NOT_NULL(lengths, fn);
    if (n < 1 || n > MAX_DESC_DIMS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: n = %d; accepted: 1 to %d dimensions.", fn,
                       n, MAX_DESC_DIMS);
    return CK_SUCCESS;
}

/* One-stage descriptor: transform t maps hidden 0 to hidden 1..n. */
static ck_status make_base(const char *fn, const ck_transform *t, ck_ival es, ck_descriptor **out)
{
    int low = 0, up[MAX_DESC_DIMS], bottom = 0;
    for (int i = 0; i < t->nup; ++i)
        up[i] = i + 1;
    ck_adaptor *ad;
    ck_status st = ck_adaptor_create(1, t, &low, up, 1, &bottom, &es, t->nup, up, &ad);
    if (st)
        return ck_fail_context(st, "%s", fn);
    return wrap(ad, es, out);
}

ck_status ck_descriptor_make_naive(int n, const ck_ival *lengths, const ck_ival *strides,
                                   ck_descriptor **out)
{
    const char *fn = "ck_descriptor_make_naive";
    ck_status st = check_n(fn, n, lengths, out);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(strides, fn);
    ck_transform t;
    if ((st = ck_make_embed_transform(n, lengths, strides, &t)))
        return ck_fail_context(st, "%s", fn);
    /* the embed's extent 1 + sum (len-1)*stride is the element space size */
    return make_base(fn, &t, t.low_lengths[0], out);
}

ck_status ck_descriptor_make_packed(int n, const ck_ival *lengths, ck_descriptor **out)
{
    const char *fn = "ck_descriptor_make_packed";
    ck_status st = check_n(fn, n, lengths, out);
    if (st)
        return st;
    ck_transform t;
    if ((st = ck_make_unmerge_transform(n, lengths, &t)))
        return ck_fail_context(st, "%s", fn);
    return make_base(fn, &t, t.low_lengths[0], out);
}

ck_status ck_descriptor_make_aligned(int n, const ck_ival *lengths, ck_ival align,
                                     ck_descriptor **out)
{
    const char *fn = "ck_descriptor_make_aligned";
    ck_status st = check_n(fn, n, lengths, out);
    if (st)
        return st;
    int64_t mn, mx;
    ck_ival_range(align, &mn, &mx);
    if (mn < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'align' may be %lld; it must be >= 1.", fn, (long long)mn);
    ck_ival strides[MAX_DESC_DIMS];
    strides[n - 1] = ck_ival_int(1);
    for (int i = n - 2; i >= 0; --i) {
        if (i == n - 2) { /* ceil(len_{n-1} / align) * align */
            ck_ival up = ck_iv_add(lengths[n - 1], ck_iv_sub(align, ck_ival_int(1), &st), &st);
            strides[i] = ck_iv_mul(ck_iv_div(up, align, &st), align, &st);
        } else {
            strides[i] = ck_iv_mul(strides[i + 1], lengths[i + 1], &st);
        }
    }
    if (st)
        return ck_fail_context(st, "%s", fn);
    return ck_descriptor_make_naive(n, lengths, strides, out);
}

ck_status ck_descriptor_transform(const ck_descriptor *d, int ntransforms,
                                  const ck_transform *transforms, const int *lower_dims,
                                  const int *upper_dims, ck_descriptor **out)
{
    const char *fn = "ck_descriptor_transform";
    CK_REQUIRE_NOT_NULL(d, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    ck_adaptor *ad;
    ck_status st =
        ck_adaptor_transform(d->ad, ntransforms, transforms, lower_dims, upper_dims, &ad);
    if (st)
        return ck_fail_context(st, "%s", fn);
    return wrap(ad, d->element_space, out);
}

ck_status ck_descriptor_copy(const ck_descriptor *d, ck_descriptor **out)
{
    CK_REQUIRE_NOT_NULL(d, "ck_descriptor_copy");
    CK_REQUIRE_NOT_NULL(out, "ck_descriptor_copy");
    ck_adaptor *ad;
    ck_status st = ck_adaptor_copy(d->ad, &ad);
    if (st)
        return st;
    return wrap(ad, d->element_space, out);
}

int ck_descriptor_ndim(const ck_descriptor *d)
{
    return d ? d->ad->ntop : -1;
}
ck_ival ck_descriptor_length(const ck_descriptor *d, int i)
{
    return d ? ck_adaptor_top_length(d->ad, i) : ck_ival_int(0);
}
ck_ival ck_descriptor_element_space_size(const ck_descriptor *d)
{
    return d ? d->element_space : ck_ival_int(0);
}
const ck_adaptor *ck_descriptor_adaptor(const ck_descriptor *d)
{
    return d ? d->ad : NULL;
}
int ck_descriptor_is_concrete(const ck_descriptor *d)
{
    return d && d->ad->concrete;
}

ck_status ck_descriptor_calculate_offset(const ck_descriptor *d, const int64_t *idx,
                                         int64_t *offset)
{
    const char *fn = "ck_descriptor_calculate_offset";
    CK_REQUIRE_NOT_NULL(d, fn);
    CK_REQUIRE_NOT_NULL(offset, fn);
    ck_coordinate c;
    ck_status st = ck_adaptor_coordinate_make(d->ad, idx, &c);
    if (st)
        return ck_fail_context(st, "%s", fn);
    *offset = c.hidden[0];
    return CK_SUCCESS;
}

ck_status ck_descriptor_is_valid_index(const ck_descriptor *d, const int64_t *idx, int *valid)
{
    const char *fn = "ck_descriptor_is_valid_index";
    CK_REQUIRE_NOT_NULL(d, fn);
    CK_REQUIRE_NOT_NULL(valid, fn);
    ck_coordinate c;
    ck_status st = ck_adaptor_coordinate_make(d->ad, idx, &c);
    if (st)
        return ck_fail_context(st, "%s", fn);
    *valid = ck_coordinate_is_valid(d, &c);
    return CK_SUCCESS;
}

ck_status ck_descriptor_bind(const ck_descriptor *d, const ck_binding *bindings, int nbindings,
                             ck_descriptor **out)
{
    const char *fn = "ck_descriptor_bind";
    CK_REQUIRE_NOT_NULL(d, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    ck_ival es;
    ck_status st = ck_ival_substitute(d->element_space, bindings, nbindings, &es);
    if (st)
        return ck_fail_context(st, "%s: element space size", fn);
    ck_adaptor *ad;
    if ((st = ck_adaptor_bind(d->ad, bindings, nbindings, &ad)))
        return ck_fail_context(st, "%s", fn);
    return wrap(ad, es, out);
}

ck_status ck_descriptor_vector_info(const ck_descriptor *d, ck_vector_info *top)
{
    CK_REQUIRE_NOT_NULL(d, "ck_descriptor_vector_info");
    ck_vector_info bottom = {0, 1, 1};
    ck_status st = ck_adaptor_vector_info(d->ad, &bottom, top);
    if (st)
        return st;
    for (int i = 0; i < d->ad->ntop; ++i) {
        ck_ival len = ck_adaptor_top_length(d->ad, i);
        if (top[i].length == 0 && ck_ival_is_const(len))
            top[i].length = len.v;
    }
    return CK_SUCCESS;
}

ck_status ck_descriptor_transform_one(const ck_descriptor *d, const ck_transform *t,
                                      const int *lower_dims, int at, ck_descriptor **out)
{
    const char *fn = "ck_descriptor_transform_one";
    CK_REQUIRE_NOT_NULL(d, fn);
    CK_REQUIRE_NOT_NULL(t, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    int n = d->ad->ntop;
    if (t->nlow < 0 || t->nlow > n || t->nup < 0 || t->nup > CK_TILE_MAX_TRANSFORM_DIMS ||
        (t->nlow && !lower_dims))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the %s transform consumes %d dims but the descriptor has %d visible "
                       "dims (or 'lower_dims' is NULL).",
                       fn, ck_transform_kind_name(t->kind), t->nlow, n);
    int used[CK_TILE_MAX_HIDDEN] = {0};
    int first = n;
    for (int k = 0; k < t->nlow; ++k) {
        int dim = lower_dims[k];
        if (dim < 0 || dim >= n || used[dim])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: lower_dims[%d] = %d; accepted: distinct visible dims 0 to %d.", fn,
                           k, dim, n - 1);
        used[dim] = 1;
        if (dim < first)
            first = dim;
    }
    int nkept = n - t->nlow;
    if (at == -1) {
        at = 0;
        for (int i = 0; i < first; ++i)
            at += !used[i];
    }
    if (at < 0 || at > nkept)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'at' = %d; accepted: -1 or 0 to %d.", fn, at, nkept);
    ck_transform tr[CK_TILE_MAX_HIDDEN + 1];
    int low[CK_TILE_MAX_HIDDEN + CK_TILE_MAX_TRANSFORM_DIMS];
    int up[CK_TILE_MAX_HIDDEN + CK_TILE_MAX_TRANSFORM_DIMS];
    int ntr = 0, nl = 0, nu = 0, kept = 0;
    tr[ntr++] = *t;
    for (int k = 0; k < t->nlow; ++k)
        low[nl++] = lower_dims[k];
    for (int k = 0; k < t->nup; ++k)
        up[nu++] = at + k;
    for (int i = 0; i < n; ++i) {
        if (used[i])
            continue;
        ck_status st = ck_make_pass_through_transform(ck_adaptor_top_length(d->ad, i), &tr[ntr]);
        if (st)
            return ck_fail_context(st, "%s", fn);
        ++ntr;
        low[nl++] = i;
        up[nu++] = kept < at ? kept : kept + t->nup;
        ++kept;
    }
    return ck_descriptor_transform(d, ntr, tr, low, up, out);
}
