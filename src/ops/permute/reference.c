/*
 * The permute CPU reference (permute_internal.h): the one test_permute and `ck prof permute`
 * check ck_permute against. It moves bytes, so the comparison is exact.
 */
#include <string.h>

#include "core/error.h"
#include "ops/permute/permute_internal.h"

ck_status ck_permute_reference(ck_tensor *dst, const ck_tensor *src, const int *perm)
{
    if (!dst || !src || !perm || !dst->data || !src->data)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_permute_reference: an argument is NULL.");
    const int r = src->rank;
    if (r < 0 || r > 8 || dst->rank != r || dst->dtype != src->dtype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_permute_reference: ranks (%d, %d) or types differ, or rank > 8.",
                       dst->rank, src->rank);
    const ck_dtype_info *info = ck_dtype_get(src->dtype);
    if (!info)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_permute_reference: unknown dtype.");
    long long n = 1;
    for (int d = 0; d < r; ++d) {
        if (perm[d] < 0 || perm[d] >= r || dst->shape[d] != src->shape[perm[d]])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_permute_reference: dst dim %d is not src dim perm[%d] = %d.", d, d,
                           perm[d]);
        n *= src->shape[d];
    }
    if (n == 0)
        return CK_SUCCESS;
    const unsigned char *s = src->data;
    unsigned char *t = dst->data;
    long long idx[8] = {0};
    if (info->storage_bits % 8 != 0) {
        /* packed sub-byte elements (packed row-major tensors, the last dim kept): whole rows */
        if (r == 0 || perm[r - 1] != r - 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_permute_reference: %s tensors keep their last dimension.",
                           info->name);
        long long row = dst->shape[r - 1] * info->storage_bits / 8, rows = n / dst->shape[r - 1];
        for (long long q = 0; q < rows; ++q) {
            long long rem = q, si[8] = {0}, srow = 0;
            for (int d = r - 2; d >= 0; --d) {
                idx[d] = rem % dst->shape[d];
                rem /= dst->shape[d];
                si[perm[d]] = idx[d];
            }
            for (int d = 0; d < r - 1; ++d)
                srow = srow * src->shape[d] + si[d];
            memcpy(t + q * row, s + srow * row, (size_t)row);
        }
        return CK_SUCCESS;
    }
    const size_t e = (size_t)info->storage_bits / 8;
    for (long long q = 0; q < n; ++q) {
        long long rem = q, so = 0, dof = 0;
        for (int d = r - 1; d >= 0; --d) {
            idx[d] = rem % dst->shape[d];
            rem /= dst->shape[d];
            dof += idx[d] * dst->strides[d];
            so += idx[d] * src->strides[perm[d]];
        }
        memcpy(t + (size_t)dof * e, s + (size_t)so * e, e);
    }
    return CK_SUCCESS;
}
