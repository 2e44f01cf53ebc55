/*
 * The permute problem (permute_internal.h): the arguments' checks, the problem collapsed
 * (length-1 dimensions dropped, dimensions that stay adjacent and in order merged) and its kind:
 * the shared-memory tile transpose or the gather copy, with the 16-byte accesses the pointers
 * and strides allow. docs/ops-permute.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ops/common/op_common.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"

#define OP "ck_permute"

/* Smallest extent (elements) of the two tile dimensions for the tile kernel; thinner problems
 * use the gather copy. */
enum { TILE_MIN_LEN = 4 };

static int aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

ck_status ck_permute_plan(const ck_tensor *dst, const ck_tensor *src, const int *perm,
                          ck_perm_plan *plan)
{
    CK_REQUIRE_NOT_NULL(dst, OP);
    CK_REQUIRE_NOT_NULL(src, OP);
    CK_REQUIRE_NOT_NULL(plan, OP);
    memset(plan, 0, sizeof *plan);
    ck_status st = ck_op_check_tensor(OP, "src", src);
    if (st == CK_SUCCESS)
        st = ck_op_check_tensor(OP, "dst", dst);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(OP, "dst", dst);
    if (st != CK_SUCCESS)
        return st;
    const int r = src->rank;
    if (dst->rank != r)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst %s has rank %d but src %s has rank %d; they must be equal.",
                       ck_op_tensor_str(dst), dst->rank, ck_op_tensor_str(src), r);
    if (dst->dtype != src->dtype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst has dtype %s but src has %s; permute does not convert (use "
                          "ck_cast first).",
                       ck_dtype_name(dst->dtype), ck_dtype_name(src->dtype));
    if (r > 0 && !perm)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": argument 'perm' is NULL for rank %d.", r);
    int seen[CK_TENSOR_MAX_RANK] = {0};
    for (int d = 0; d < r; ++d) {
        if (perm[d] < 0 || perm[d] >= r || seen[perm[d]])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": perm[%d] = %d; perm must list each of 0..%d exactly once.", d,
                           perm[d], r - 1);
        seen[perm[d]] = 1;
    }
    for (int d = 0; d < r; ++d)
        if (dst->shape[d] != src->shape[perm[d]])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dst.shape[%d] = %lld but src.shape[perm[%d] = %d] = %lld; dst "
                              "%s must have the shape of src %s permuted.",
                           d, (long long)dst->shape[d], d, perm[d], (long long)src->shape[perm[d]],
                           ck_op_tensor_str(dst), ck_op_tensor_str(src));
    if (ck_tensor_numel(src) == 0) {
        plan->kind = CK_PERM_NOTHING;
        return CK_SUCCESS;
    }
    for (int d = 0; d < r; ++d)
        if (dst->shape[d] > 1 && dst->strides[d] == 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dst %s has stride 0 in dimension %d of length %lld; an output "
                              "element would be written more than once.",
                           ck_op_tensor_str(dst), d, (long long)dst->shape[d]);
    if (ck_op_overlap(dst, src))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst %s at %p overlaps src %s at %p; permute cannot work in place.",
                       ck_op_tensor_str(dst), dst->data, ck_op_tensor_str(src), src->data);

    const ck_dtype_info *info = ck_dtype_get(src->dtype);
    long long len[CK_TENSOR_MAX_RANK], ss[CK_TENSOR_MAX_RANK], ds[CK_TENSOR_MAX_RANK];
    for (int d = 0; d < r; ++d) {
        len[d] = dst->shape[d];
        ss[d] = src->strides[perm[d]];
        ds[d] = dst->strides[d];
    }
    int e = info->storage_bits / 8;
    if (info->pack_elements > 1) {
        /* Packed and contiguous (checked): bytes are permuted when the last dimension stays. */
        if (r > 0 && perm[r - 1] != r - 1)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": %s elements are %d bits; a permutation of a sub-byte type must "
                              "keep the last dimension last (perm[%d] = %d).",
                           info->name, info->storage_bits, r - 1, perm[r - 1]);
        long long inner = r > 0 ? len[r - 1] : 1;
        if (inner % info->pack_elements)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": the last dimension of %s %s has %lld elements; a sub-byte "
                              "permute needs whole packs of %d (%d bytes).",
                           info->name, ck_op_tensor_str(src), inner, info->pack_elements,
                           info->pack_bytes);
        long long inner_bytes = inner / info->pack_elements * info->pack_bytes;
        /* row-major strides in bytes of both, in the destination's order */
        long long sstr[CK_TENSOR_MAX_RANK], acc = inner_bytes;
        for (int d = r - 2; d >= 0; --d) {
            sstr[d] = acc;
            acc *= src->shape[d];
        }
        acc = inner_bytes;
        for (int d = r - 2; d >= 0; --d) {
            ds[d] = acc;
            acc *= len[d];
            ss[d] = sstr[perm[d]];
        }
        if (r > 0) {
            len[r - 1] = inner_bytes;
            ss[r - 1] = ds[r - 1] = 1;
        }
        e = 1;
    }
    plan->elem_bytes = e;
    plan->dst = dst->data;
    plan->src = src->data;

    /* drop length-1 dimensions, merge neighbours that stay adjacent and in order in both */
    int n = 0;
    for (int d = 0; d < r; ++d) {
        if (len[d] == 1)
            continue;
        if (n > 0 && plan->ss[n - 1] == ss[d] * len[d] && plan->ds[n - 1] == ds[d] * len[d]) {
            plan->len[n - 1] *= len[d];
            plan->ss[n - 1] = ss[d];
            plan->ds[n - 1] = ds[d];
            continue;
        }
        plan->len[n] = len[d];
        plan->ss[n] = ss[d];
        plan->ds[n] = ds[d];
        n++;
    }
    if (n == 0) {
        plan->len[0] = 1;
        plan->ss[0] = plan->ds[0] = 1;
        n = 1;
    }
    plan->rank = n;

    const int v = 16 / e;
    const int last = n - 1;
    int m = -1;
    if (plan->ds[last] == 1 && plan->ss[last] != 1)
        for (int d = 0; d < last; ++d)
            if (plan->ss[d] == 1)
                m = d;
    if (m >= 0 && plan->len[m] >= TILE_MIN_LEN && plan->len[last] >= TILE_MIN_LEN) {
        plan->kind = CK_PERM_TILE;
        plan->dim_m = m;
        int ld = aligned16(src->data) && (plan->ss[last] * e) % 16 == 0;
        int stv = aligned16(dst->data) && (plan->ds[m] * e) % 16 == 0;
        for (int d = 0; d < last; ++d)
            if (d != m) {
                ld = ld && (plan->ss[d] * e) % 16 == 0;
                stv = stv && (plan->ds[d] * e) % 16 == 0;
            }
        plan->ld_vec = ld;
        plan->st_vec = stv;
        ck_permute_default_tile(plan);
        return CK_SUCCESS;
    }
    plan->kind = CK_PERM_GATHER;
    int vec = v > 1 && plan->ss[last] == 1 && plan->ds[last] == 1 && plan->len[last] % v == 0 &&
              aligned16(src->data) && aligned16(dst->data);
    for (int d = 0; d < last && vec; ++d)
        vec = (plan->ss[d] * e) % 16 == 0 && (plan->ds[d] * e) % 16 == 0;
    plan->vec = vec ? v : 1;
    return CK_SUCCESS;
}
