/*
 * Device helpers shared by the layernorm / RMSNorm kernels (norm_fwd_kernel.h,
 * norm_bwd_kernel.h) over the block library (ck_block.h): vectors of NORM_VEC elements of a
 * row, and the reductions over the NORM_G threads of a row.
 *
 * The including source defines NORM_VEC (elements per vector), NORM_G (threads per row: a power
 * of two <= 32 for the warp/sub-warp instance, or NORM_BLOCK for one block per row) and
 * NORM_BLOCK (threads per block); NORM_EVEN 1 when every thread of a row holds as many values.
 * dtype codes are those of ck_dtype (CK_NC_*).
 */
#ifndef CK_NORM_COMMON_KERNEL_H
#define CK_NORM_COMMON_KERNEL_H
#include "ck_block.h"
#include "ops/norm/norm_args_kernel.h"

#ifndef NORM_EVEN
#define NORM_EVEN 0
#endif

#define NORM_ESIZE(t) ck_dtype_size(t)

/* NORM_VEC elements of type t at p (element offset already applied) as f32, and back. */
CK_DEVICE void norm_load(const void *p, int t, float *o)
{
    ck_load_f32v(p, t, NORM_VEC, o);
}

CK_DEVICE void norm_store(void *p, int t, const float *v)
{
    ck_store_f32v(p, t, NORM_VEC, v);
}

/* Over the NORM_G threads of a row (sh: 96 floats of shared memory when NORM_G > 32; every
 * thread receives the same bits). */
CK_DEVICE ck_welford norm_reduce_welford(ck_welford s, float *sh)
{
    return ck_group_welford(s, NORM_G, NORM_EVEN, sh);
}

/* op CK_RED_SUM or CK_RED_NANMAX; sh: 32 floats when NORM_G > 32. */
CK_DEVICE float norm_reduce_f32(float v, int op, float *sh)
{
    return ck_group_reduce_f32(v, op, NORM_G, sh);
}

#endif
