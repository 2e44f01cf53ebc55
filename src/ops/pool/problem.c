/*
 * The pooling problem: torch's argument checks and output lengths, and the depthwise
 * convolution (conv's problem) whose descriptors the kernels read. Every refusal is a sentence
 * naming the field, its value and what is accepted.
 */
#include <string.h>

#include "core/error.h"
#include "ops/pool/pool_internal.h"

#define OP "ck_pool"

void ck_pool_problem_init(ck_pool_problem *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->mode = CK_POOL_MAX;
    p->ndim = 2;
    p->n = p->c = 1;
    for (int i = 0; i < 3; ++i)
        p->in[i] = p->kernel[i] = p->stride[i] = p->dilation[i] = 1;
    p->count_include_pad = 1;
    p->dtype = CK_DTYPE_BF16;
}

static const char *axis(int ndim, int d)
{
    return ndim == 2 ? (d ? "W" : "H") : (d == 0 ? "D" : d == 1 ? "H" : "W");
}

/* torch's pooling_output_shape */
static int64_t out_len(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, int ceil_mode)
{
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        --o;
    return o;
}

ck_status ck_pool_prob_make(const ck_pool_problem *p, int backward, ck_pool_prob *r)
{
    CK_REQUIRE_NOT_NULL(p, OP);
    memset(r, 0, sizeof *r);
    r->p = *p;
    if (p->mode != CK_POOL_MAX && p->mode != CK_POOL_AVG)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": mode = %d; accepted: CK_POOL_MAX, CK_POOL_AVG.", (int)p->mode);
    if (p->ndim != 2 && p->ndim != 3)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": ndim = %d spatial dims; accepted: 2 or 3.",
                       p->ndim);
    if (p->n < 1 || p->c < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": n = %lld and c = %lld; both must be >= 1.",
                       (long long)p->n, (long long)p->c);
    if (p->dtype != CK_DTYPE_F32 && p->dtype != CK_DTYPE_F16 && p->dtype != CK_DTYPE_BF16)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": dtype = %s; accepted: f32, f16, bf16.",
                       ck_dtype_name(p->dtype));
    if (p->index < CK_POOL_INDEX_NONE || p->index > CK_POOL_INDEX_I64)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": index = %d; accepted: CK_POOL_INDEX_NONE, _I32, _I64.", (int)p->index);
    if (p->mode == CK_POOL_AVG && p->index != CK_POOL_INDEX_NONE)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": indices are the max pool's; average pooling takes index = "
                          "CK_POOL_INDEX_NONE.");
    if (p->divisor_override < 0 || (p->divisor_override && p->mode != CK_POOL_AVG))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": divisor_override = %lld; accepted: 0, or > 0 with CK_POOL_AVG.",
                       (long long)p->divisor_override);
    if (backward && (p->mode != CK_POOL_MAX || p->index == CK_POOL_INDEX_NONE))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP "_backward: the backward is max pooling's through its indices: mode "
                          "CK_POOL_MAX with index CK_POOL_INDEX_I32 or _I64.");
    int off = 3 - p->ndim;
    for (int d = 0; d < 3; ++d) {
        r->in[d] = r->ker[d] = r->str[d] = r->dil[d] = r->out[d] = 1;
        r->pad[d] = 0;
    }
    int64_t m = p->n, taps = 1;
    for (int d = 0; d < p->ndim; ++d) {
        const char *a = axis(p->ndim, d);
        if (p->in[d] < 1 || p->kernel[d] < 1 || p->stride[d] < 1 || p->dilation[d] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dim %d (%s): input %lld, kernel %lld, stride %lld, dilation "
                              "%lld; each must be >= 1.",
                           d, a, (long long)p->in[d], (long long)p->kernel[d],
                           (long long)p->stride[d], (long long)p->dilation[d]);
        if (p->mode == CK_POOL_AVG && p->dilation[d] != 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dilation[%d] (%s) = %lld; average pooling has no dilation "
                              "(as torch's avg_pool): 1.",
                           d, a, (long long)p->dilation[d]);
        if (p->pad[d] < 0 || p->pad[d] > p->kernel[d] / 2)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": pad[%d] (%s) = %lld; the padding must be between 0 and half "
                              "the kernel, %lld (as torch).",
                           d, a, (long long)p->pad[d], (long long)(p->kernel[d] / 2));
        int64_t o =
            out_len(p->in[d], p->kernel[d], p->pad[d], p->stride[d], p->dilation[d], p->ceil_mode);
        if (o < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dim %d (%s): input %lld with kernel %lld, dilation %lld, "
                              "padding %lld and stride %lld gives output length %lld; it must "
                              "be >= 1.",
                           d, a, (long long)p->in[d], (long long)p->kernel[d],
                           (long long)p->dilation[d], (long long)p->pad[d], (long long)p->stride[d],
                           (long long)o);
        r->in[off + d] = p->in[d];
        r->ker[off + d] = p->kernel[d];
        r->str[off + d] = p->stride[d];
        r->dil[off + d] = p->dilation[d];
        r->pad[off + d] = p->pad[d];
        r->out[off + d] = o;
        m *= o;
        taps *= p->kernel[d];
    }
    r->m = m;
    r->taps = taps;
    r->es = p->dtype == CK_DTYPE_F32 ? 4 : 2;
    r->is = p->index == CK_POOL_INDEX_I32 ? 4 : p->index == CK_POOL_INDEX_I64 ? 8 : 0;
    /* the depthwise convolution with these windows: pad_right makes conv's (floor) output
     * length torch's (ceil_mode included); it stays below the extent since every window meets
     * the input */
    ck_conv_problem cp;
    ck_conv_problem_init(&cp);
    cp.ndim = p->ndim;
    cp.n = p->n;
    cp.c = cp.k = p->c;
    cp.in_dtype = cp.wei_dtype = cp.out_dtype = p->dtype;
    for (int d = 0; d < p->ndim; ++d) {
        int64_t ext = p->dilation[d] * (p->kernel[d] - 1) + 1, o = r->out[off + d];
        int64_t pr = (o - 1) * p->stride[d] + ext - p->in[d] - p->pad[d];
        cp.in[d] = p->in[d];
        cp.filter[d] = p->kernel[d];
        cp.stride[d] = p->stride[d];
        cp.dilation[d] = p->dilation[d];
        cp.pad_left[d] = p->pad[d];
        cp.pad_right[d] = pr > 0 ? pr : 0;
        cp.out[d] = o;
    }
    ck_status st = ck_conv_prob_make(&cp, &r->q);
    if (st)
        return ck_fail_context(st, OP ": the windows' convolution geometry");
    if (m > INT32_MAX || r->q.x_elems > INT32_MAX * 64LL)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the problem is too large (N * out = %lld "
                          "rows; at most 2^31).",
                       (long long)m);
    return CK_SUCCESS;
}

ck_status ck_pool_output_lengths(const ck_pool_problem *p, int64_t out[3])
{
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, 0, &r);
    if (st)
        return st;
    for (int d = 0; d < 3; ++d)
        out[d] = d < p->ndim ? r.out[3 - p->ndim + d] : 0;
    return CK_SUCCESS;
}
