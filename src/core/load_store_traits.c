/*
 * CK's load_store_traits: the vector dim, vector width and access order (space-filling
 * curve) of a tile window access, from the distribution, the tensor descriptor's vector
 * guarantees and the element type, with NVIDIA's 16 bytes per access as the limit.
 */
#include <string.h>

#include "ck/distribution.h"
#include "ck/tile.h"
#include "core/error.h"
#include "core/load_store_internal.h"

static const char *const FN = "ck_load_store_traits_make";

/* Largest power of two dividing v (v >= 1). */
static long long pow2_part(long long v)
{
    return v & -v;
}

static long long gcd_ll(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Validate desc against the distribution's X dims. */
static ck_status check_desc(const ck_distribution *d, const ck_descriptor *desc)
{
    if (!ck_descriptor_is_concrete(desc))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'desc' has symbolic sizes; bind them first "
                       "(ck_descriptor_bind).",
                       FN);
    int n = ck_descriptor_ndim(desc);
    if (n != d->enc.ndim_x)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'desc' has %d dims but the distribution has %d X dims; "
                       "they must match.",
                       FN, n, d->enc.ndim_x);
    for (int i = 0; i < n; ++i) {
        ck_ival len = ck_descriptor_length(desc, i);
        if (len.v != d->x_lengths[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: dim %d of argument 'desc' has length %lld but X%d of the "
                           "distribution has length %d; a window's lengths must equal the X "
                           "lengths.",
                           FN, i, (long long)len.v, i, d->x_lengths[i]);
    }
    return CK_SUCCESS;
}

ck_status ck_load_store_traits_make(const ck_dist_encoding *enc, const ck_descriptor *desc,
                                    ck_dtype dtype, ck_load_store_traits *out)
{
    return ck_load_store_traits_make_capped(enc, desc, dtype, CK_LOAD_STORE_MAX_VECTOR_BYTES * 8,
                                            out);
}

ck_status ck_load_store_traits_make_capped(const ck_dist_encoding *enc, const ck_descriptor *desc,
                                           ck_dtype dtype, int max_bits, ck_load_store_traits *out)
{
    CK_REQUIRE_NOT_NULL(enc, FN);
    CK_REQUIRE_NOT_NULL(desc, FN);
    CK_REQUIRE_NOT_NULL(out, FN);
    const ck_dtype_info *ti = ck_dtype_get(dtype);
    if (!ti)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'dtype' = %d is not a ck_dtype value (see ck/types.h).", FN,
                       (int)dtype);
    ck_distribution d;
    ck_status st = ck_dist_make(enc, &d);
    if (st)
        return ck_fail_context(st, "%s", FN);
    if ((st = check_desc(&d, desc)))
        return st;

    ck_adaptor *a = NULL;
    if ((st = ck_dist_make_ps_ys_to_xs_adaptor(&d, &a)))
        return ck_fail_context(st, "%s", FN);
    ck_vector_info xs[CK_DIST_MAX_X], top[CK_DIST_MAX_P + CK_DIST_MAX_Y];
    st = ck_descriptor_vector_info(desc, xs);
    if (!st)
        st = ck_adaptor_vector_info(a, xs, top);
    ck_adaptor_destroy(a);
    if (st)
        return ck_fail_context(st, "%s", FN);

    ck_load_store_traits t;
    memset(&t, 0, sizeof t);
    const int ny = d.enc.ndim_y, np = d.enc.ndim_p;
    if (max_bits < ti->storage_bits)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the vector limit of %d bits is narrower than one %s element (%d "
                       "bits).",
                       FN, max_bits, ti->name, ti->storage_bits);
    const long long max_w = max_bits / ti->storage_bits;
    long long best = 1;
    t.vector_dim_y = ny - 1;
    for (int j = 0; j < ny; ++j) {
        const ck_vector_info *v = &top[np + j];
        long long len = d.y_lengths[j];
        t.y_vector_length[j] = v->length == 0 ? len : v->length;
        t.y_vector_stride[j] = v->stride;
        if (t.y_vector_length[j] <= 1 || !v->stride_known || v->stride != 1)
            continue;
        long long w = pow2_part(gcd_ll(len, t.y_vector_length[j]));
        while (w > max_w)
            w /= 2;
        if (w >= best && w > 1) {
            best = w;
            t.vector_dim_y = j;
        }
    }
    t.scalars_per_vector = (int)best;
    t.vector_bits = (int)best * ti->storage_bits;
    t.vector_bytes = (t.vector_bits + 7) / 8;
    if (ny == 0) {
        t.num_accesses = 1;
        t.sfc.num_access = 1;
    } else {
        int order[CK_DIST_MAX_Y], scal[CK_DIST_MAX_Y], n = 0;
        for (int j = 0; j < ny; ++j) {
            if (j != t.vector_dim_y)
                order[n++] = j;
            scal[j] = j == t.vector_dim_y ? (int)best : 1;
        }
        order[n] = t.vector_dim_y;
        if ((st = ck_sfc_init(&t.sfc, ny, d.y_lengths, order, scal, 1)))
            return ck_fail_context(st, "%s", FN);
        t.num_accesses = t.sfc.num_access;
    }
    *out = t;
    return CK_SUCCESS;
}
