/*
 * Device helpers of the softmax family's kernels (softmax_kernel.h, softmax_staged_kernel.h,
 * topk_softmax_kernel.h) over the block library (ck_block.h): the element and vector access of
 * a row, choosing between 16-byte vectors and element accesses. Type codes are ck_dtype values
 * (CK_NC_F32, CK_NC_F16, CK_NC_BF16).
 */
#ifndef CK_OPS_SOFTMAX_COMMON_KERNEL_H
#define CK_OPS_SOFTMAX_COMMON_KERNEL_H

#include "ck_block.h"

#define SMX_LOG2E 1.4426950408889634f
#define SMX_LN2   0.6931471805599453f

/* n elements from element i of p (type t) into v as f32. wide: n * size is a multiple of 16
 * and every such access is 16-byte aligned (16-byte loads, read-only path), else element
 * accesses. */
CK_DEVICE void smx_ldv(const void *p, long long i, int t, int n, int wide, float *v)
{
    const char *b = (const char *)p + i * ck_dtype_size(t);
    if (wide)
        ck_load_f32v(b, t, n, v);
    else
        ck_load_f32v_elems(b, t, n, v);
}

CK_DEVICE void smx_stv(void *p, long long i, int t, int n, int wide, const float *v)
{
    char *b = (char *)p + i * ck_dtype_size(t);
    if (wide)
        ck_store_f32v(b, t, n, v);
    else
        ck_store_f32v_elems(b, t, n, v);
}

#endif
