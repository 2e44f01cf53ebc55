/* ck_im2col's problem: the convolution's checks (ck_conv_prob_make) and its own. */
#include "core/error.h"
#include "ops/im2col/im2col_internal.h"

#define OP "ck_im2col"

ck_status ck_im2col_prob_make(const ck_conv_problem *p, ck_im2col_prob *r)
{
    CK_REQUIRE_NOT_NULL(p, OP);
    ck_status st = ck_conv_prob_make(p, &r->q);
    if (st)
        return st;
    if (p->direction != CK_CONV_FWD)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": direction = %d; the im2col matrix is the forward problem's (set "
                          "direction = CK_CONV_FWD).",
                       (int)p->direction);
    if (p->layout != CK_CONV_LAYOUT_NHWGC)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": layout = %d; the input is read as NHWGC (CK_CONV_LAYOUT_NHWGC): "
                          "permute an NCHW input first (ck_permute).",
                       (int)p->layout);
    if (p->in_dtype != CK_DTYPE_F32 && p->in_dtype != CK_DTYPE_F16 && p->in_dtype != CK_DTYPE_BF16)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP
                       ": in_dtype = %s; the im2col kernel copies f32, f16 and bf16 inputs (8-bit "
                       "convolutions read their im2col view in place).",
                       ck_dtype_name(p->in_dtype));
    r->m = r->q.gemm_m;
    r->k = r->q.gemm_kf * r->q.p.c;
    r->es = p->in_dtype == CK_DTYPE_F32 ? 4 : 2;
    return CK_SUCCESS;
}

ck_status ck_im2col_shape(const ck_conv_problem *problem, int64_t *m, int64_t *k)
{
    ck_im2col_prob r;
    ck_status st = ck_im2col_prob_make(problem, &r);
    if (st)
        return st;
    if (m)
        *m = r.m;
    if (k)
        *k = r.k;
    return CK_SUCCESS;
}
