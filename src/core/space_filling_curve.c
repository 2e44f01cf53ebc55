/*
 * CK's space-filling curve: accesses of scalars_per_access elements over a tensor, dims
 * visited in dim_access_order (first slowest), snake (boustrophedon) order by default.
 *
 * Access i is decomposed row-major over the access lengths in access order; with snake on,
 * dim k of that order runs backwards when the linear index of the dims before it is odd.
 */
#include <string.h>

#include "ck/distribution.h"
#include "core/error.h"

ck_status ck_sfc_init(ck_sfc *sfc, int ndim, const int *lengths, const int *dim_access_order,
                      const int *scalars_per_access, int snake)
{
    static const char *fn = "ck_sfc_init";
    CK_REQUIRE_NOT_NULL(sfc, fn);
    if (ndim < 1 || ndim > CK_SFC_MAX_DIMS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: ndim = %d; accepted: 1 to %d.", fn, ndim,
                       CK_SFC_MAX_DIMS);
    CK_REQUIRE_NOT_NULL(lengths, fn);
    CK_REQUIRE_NOT_NULL(dim_access_order, fn);
    CK_REQUIRE_NOT_NULL(scalars_per_access, fn);
    ck_sfc s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.snake = snake != 0;
    s.num_access = 1;
    int seen[CK_SFC_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; ++d) {
        int o = dim_access_order[d];
        if (o < 0 || o >= ndim || seen[o])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: dim_access_order[%d] = %d; the order must be a permutation of 0 "
                           "to %d.",
                           fn, d, o, ndim - 1);
        seen[o] = 1;
        if (lengths[d] < 1 || lengths[d] > (1 << 24))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: lengths[%d] = %d; accepted: 1 to %d.",
                           fn, d, lengths[d], 1 << 24);
        if (scalars_per_access[d] < 1 || lengths[d] % scalars_per_access[d] != 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: scalars_per_access[%d] = %d must be >= 1 and divide lengths[%d] "
                           "= %d exactly (CK does not round up).",
                           fn, d, scalars_per_access[d], d, lengths[d]);
        s.lengths[d] = lengths[d];
        s.dim_access_order[d] = o;
        s.scalars_per_access[d] = scalars_per_access[d];
        s.access_lengths[d] = lengths[d] / scalars_per_access[d];
        s.num_access *= s.access_lengths[d];
        if (s.num_access > (1LL << 40))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: more than 2^40 accesses; the curve is too large.", fn);
    }
    *sfc = s;
    return CK_SUCCESS;
}

ck_status ck_sfc_get_index(const ck_sfc *sfc, long long i, int *idx)
{
    static const char *fn = "ck_sfc_get_index";
    CK_REQUIRE_NOT_NULL(sfc, fn);
    CK_REQUIRE_NOT_NULL(idx, fn);
    if (i < 0 || i >= sfc->num_access)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: access %lld is out of range [0, %lld).", fn,
                       i, sfc->num_access);
    const int n = sfc->ndim;
    int ordered[CK_SFC_MAX_DIMS], olen[CK_SFC_MAX_DIMS];
    for (int k = 0; k < n; ++k)
        olen[k] = sfc->access_lengths[sfc->dim_access_order[k]];
    long long rest = i;
    for (int k = n - 1; k >= 0; --k) {
        ordered[k] = (int)(rest % olen[k]);
        rest /= olen[k];
    }
    if (sfc->snake) {
        /* Parity of the row-major index of the dims before k decides the direction of k. */
        long long prefix = 0;
        int flip[CK_SFC_MAX_DIMS];
        for (int k = 0; k < n; ++k) {
            flip[k] = (int)(prefix & 1);
            prefix = prefix * olen[k] + ordered[k];
        }
        for (int k = 0; k < n; ++k)
            if (flip[k])
                ordered[k] = olen[k] - 1 - ordered[k];
    }
    for (int k = 0; k < n; ++k) {
        int d = sfc->dim_access_order[k];
        idx[d] = ordered[k] * sfc->scalars_per_access[d];
    }
    return CK_SUCCESS;
}

ck_status ck_sfc_step_between(const ck_sfc *sfc, long long from, long long to, int *step)
{
    static const char *fn = "ck_sfc_step_between";
    CK_REQUIRE_NOT_NULL(sfc, fn);
    CK_REQUIRE_NOT_NULL(step, fn);
    int a[CK_SFC_MAX_DIMS], b[CK_SFC_MAX_DIMS];
    ck_status st = ck_sfc_get_index(sfc, from, a);
    if (st)
        return ck_fail_context(st, "%s", fn);
    st = ck_sfc_get_index(sfc, to, b);
    if (st)
        return ck_fail_context(st, "%s", fn);
    for (int d = 0; d < sfc->ndim; ++d)
        step[d] = b[d] - a[d];
    return CK_SUCCESS;
}

ck_status ck_sfc_forward_step(const ck_sfc *sfc, long long i, int *step)
{
    static const char *fn = "ck_sfc_forward_step";
    CK_REQUIRE_NOT_NULL(sfc, fn);
    if (i < 0 || i + 1 >= sfc->num_access)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: access %lld has no successor; accepted: 0 to %lld.", fn, i,
                       sfc->num_access - 2);
    return ck_sfc_step_between(sfc, i, i + 1, step);
}

ck_status ck_sfc_backward_step(const ck_sfc *sfc, long long i, int *step)
{
    static const char *fn = "ck_sfc_backward_step";
    CK_REQUIRE_NOT_NULL(sfc, fn);
    if (i < 1 || i >= sfc->num_access)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: access %lld has no predecessor; accepted: 1 to %lld.", fn, i,
                       sfc->num_access - 1);
    return ck_sfc_step_between(sfc, i, i - 1, step);
}
