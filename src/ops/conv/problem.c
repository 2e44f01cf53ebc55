/*
 * The convolution problem (CK's ConvParam): argument checks and the derived lengths. Every
 * refusal is a sentence naming the field, its value and what is accepted.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/conv/conv_internal.h"

#define OP "ck_conv"

void ck_conv_problem_init(ck_conv_problem *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->direction = CK_CONV_FWD;
    p->ndim = 2;
    p->n = p->g = p->c = p->k = 1;
    for (int i = 0; i < CK_CONV_MAX_DIMS; ++i)
        p->in[i] = p->filter[i] = p->stride[i] = p->dilation[i] = 1;
    p->in_dtype = p->wei_dtype = p->out_dtype = CK_DTYPE_BF16;
    p->bias_dtype = p->residual_dtype = CK_DTYPE_F32;
}

void ck_conv_args_init(ck_conv_args *a)
{
    if (!a)
        return;
    memset(a, 0, sizeof *a);
    a->alpha = 1.0f;
    a->scale_x = a->scale_w = a->scale_y = 1.0f;
}

static int float_type(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_F16 || t == CK_DTYPE_BF16;
}

static int fp8_type(ck_dtype t)
{
    return t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2;
}

int ck_conv_8bit(ck_dtype t)
{
    return fp8_type(t) || t == CK_DTYPE_I8;
}

static const char *dir_name(ck_conv_direction d)
{
    return d == CK_CONV_FWD        ? "forward"
           : d == CK_CONV_BWD_DATA ? "backward data"
                                   : "backward weight";
}

/* a * b, refused on overflow past 2^62 */
static int mul_ok(int64_t *acc, int64_t v)
{
    if (v <= 0 || *acc > ((int64_t)1 << 62) / v)
        return 0;
    *acc *= v;
    return 1;
}

/* The tensors a direction reads (forward X, W; backward data dY, W; backward weight X, dY) as
 * the implicit GEMM's A and B, and the one it writes (D). */
ck_dtype ck_conv_read_dtype(const ck_conv_problem *p, int operand)
{
    if (p->direction == CK_CONV_FWD)
        return operand ? p->wei_dtype : p->in_dtype;
    if (p->direction == CK_CONV_BWD_DATA)
        return operand ? p->wei_dtype : p->out_dtype;
    return operand ? p->in_dtype : p->out_dtype;
}

ck_dtype ck_conv_written_dtype(const ck_conv_problem *p)
{
    return p->direction == CK_CONV_FWD        ? p->out_dtype
           : p->direction == CK_CONV_BWD_DATA ? p->in_dtype
                                              : p->wei_dtype;
}

static const char *tensor_name(const ck_conv_problem *p, int which)
{
    /* which: 0, 1 the read tensors (A, B), 2 the written one */
    static const char *const names[3][3] = {{"X (in_dtype)", "W (wei_dtype)", "Y (out_dtype)"},
                                            {"dY (out_dtype)", "W (wei_dtype)", "dX (in_dtype)"},
                                            {"dY (out_dtype)", "X (in_dtype)", "dW (wei_dtype)"}};
    return names[p->direction][which];
}

ck_status ck_conv_check_types(const ck_conv_problem *p)
{
    ck_dtype a = ck_conv_read_dtype(p, 0), b = ck_conv_read_dtype(p, 1),
             d = ck_conv_written_dtype(p);
    if (!ck_conv_8bit(a) && !ck_conv_8bit(b)) {
        const ck_dtype ty[3] = {p->in_dtype, p->wei_dtype, p->out_dtype};
        const char *tname[3] = {"in_dtype", "wei_dtype", "out_dtype"};
        for (int i = 0; i < 3; ++i)
            if (!float_type(ty[i]))
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               OP ": %s = %s; accepted: f32, f16, bf16, or 8-bit inputs (fp8 "
                                  "e4m3 / e5m2, i8) in the tensors the direction reads.",
                               tname[i], ck_dtype_name(ty[i]));
        return CK_SUCCESS;
    }
    int ok = (fp8_type(a) && fp8_type(b)) || (a == CK_DTYPE_I8 && b == CK_DTYPE_I8);
    if (!ok)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s: %s = %s with %s = %s; 8-bit inputs are both fp8 (e4m3 / e5m2, "
                          "any mix) or both i8 (the tensor cores' 8-bit products).",
                       dir_name(p->direction), tensor_name(p, 0), ck_dtype_name(a),
                       tensor_name(p, 1), ck_dtype_name(b));
    if (!(float_type(d) || fp8_type(d) || (d == CK_DTYPE_I32 && a == CK_DTYPE_I8)))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s: the written tensor %s = %s; accepted with %s inputs: f32, f16, "
                          "bf16, e4m3, e5m2%s.",
                       dir_name(p->direction), tensor_name(p, 2), ck_dtype_name(d),
                       ck_dtype_name(a), a == CK_DTYPE_I8 ? ", i32" : "");
    if (p->compute != CK_GEMM_COMPUTE_DEFAULT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": compute = %d applies to f32 inputs; 8-bit inputs take "
                          "CK_GEMM_COMPUTE_DEFAULT (0).",
                       (int)p->compute);
    return CK_SUCCESS;
}

ck_status ck_conv_prob_make(const ck_conv_problem *p, ck_conv_prob *q)
{
    if (!p || !q)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": problem must not be NULL.");
    memset(q, 0, sizeof *q);
    q->p = *p;
    if (p->direction < CK_CONV_FWD || p->direction > CK_CONV_BWD_WEIGHT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": direction = %d; accepted: CK_CONV_FWD, CK_CONV_BWD_DATA, "
                          "CK_CONV_BWD_WEIGHT.",
                       (int)p->direction);
    if (p->layout != CK_CONV_LAYOUT_NHWGC && p->layout != CK_CONV_LAYOUT_NCHW)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": layout = %d; accepted: CK_CONV_LAYOUT_NHWGC (0), CK_CONV_LAYOUT_NCHW "
                          "(1).",
                       (int)p->layout);
    if (p->ndim < 1 || p->ndim > 3)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": ndim = %d spatial dims; accepted: 1, 2 or 3.", p->ndim);
    const int64_t *cnt[4] = {&p->n, &p->g, &p->c, &p->k};
    const char *cname[4] = {"n (batch)", "g (groups)", "c (input channels)", "k (output channels)"};
    for (int i = 0; i < 4; ++i)
        if (*cnt[i] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": %s = %lld; accepted: >= 1.", cname[i],
                           (long long)*cnt[i]);
    if (p->c % p->g || p->k % p->g)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": channels c = %lld and k = %lld must both be divisible by the groups "
                          "g = %lld.",
                       (long long)p->c, (long long)p->k, (long long)p->g);
    q->p.c = p->c / p->g; /* from here on: per group */
    q->p.k = p->k / p->g;
    int off = 3 - p->ndim;
    for (int d = 0; d < 3; ++d) {
        q->in[d] = q->fil[d] = q->out[d] = q->str[d] = q->dil[d] = 1;
        q->pl[d] = q->pr[d] = 0;
    }
    for (int d = 0; d < p->ndim; ++d) {
        const char *axis = p->ndim == 1   ? "W"
                           : p->ndim == 2 ? (d ? "W" : "H")
                                          : (d == 0   ? "D"
                                             : d == 1 ? "H"
                                                      : "W");
        if (p->in[d] < 1 || p->filter[d] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": spatial dim %d (%s): input %lld, filter %lld; both must be >= 1.",
                           d, axis, (long long)p->in[d], (long long)p->filter[d]);
        if (p->stride[d] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": stride[%d] (%s) = %lld; a stride must be >= 1.", d, axis,
                           (long long)p->stride[d]);
        if (p->dilation[d] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dilation[%d] (%s) = %lld; a dilation must be >= 1.", d, axis,
                           (long long)p->dilation[d]);
        if (p->pad_left[d] < 0 || p->pad_right[d] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": padding of dim %d (%s) = (%lld, %lld); paddings must be >= 0.", d,
                           axis, (long long)p->pad_left[d], (long long)p->pad_right[d]);
        int64_t extent = p->dilation[d] * (p->filter[d] - 1) + 1;
        if (p->pad_left[d] >= extent || p->pad_right[d] >= extent)
            return ck_fail(
                CK_ERROR_INVALID_ARGUMENT,
                OP ": padding of dim %d (%s) = (%lld, %lld) reaches the dilated filter's "
                   "extent %lld: whole windows would lie in the padding; accepted: "
                   "each padding < dilation * (filter - 1) + 1.",
                d, axis, (long long)p->pad_left[d], (long long)p->pad_right[d], (long long)extent);
        int64_t span = p->in[d] + p->pad_left[d] + p->pad_right[d] - extent;
        if (span < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dim %d (%s): the dilated filter (extent %lld) is longer than the "
                              "padded input (%lld).",
                           d, axis, (long long)extent,
                           (long long)(p->in[d] + p->pad_left[d] + p->pad_right[d]));
        int64_t o = span / p->stride[d] + 1;
        if (p->out[d] != 0 && p->out[d] != o)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": out[%d] (%s) = %lld does not match (in + pad_left + pad_right - "
                              "dilation * (filter - 1) - 1) / stride + 1 = (%lld + %lld + %lld - "
                              "%lld - 1) / %lld + 1 = %lld.",
                           d, axis, (long long)p->out[d], (long long)p->in[d],
                           (long long)p->pad_left[d], (long long)p->pad_right[d],
                           (long long)(extent - 1), (long long)p->stride[d], (long long)o);
        q->in[off + d] = p->in[d];
        q->fil[off + d] = p->filter[d];
        q->out[off + d] = o;
        q->str[off + d] = p->stride[d];
        q->dil[off + d] = p->dilation[d];
        q->pl[off + d] = p->pad_left[d];
        q->pr[off + d] = p->pad_right[d];
        q->p.out[d] = o;
    }
    ck_status st = ck_conv_check_types(p);
    if (st)
        return st;
    if (ck_conv_8bit(ck_conv_read_dtype(p, 0)))
        ; /* 8-bit inputs: checked */
    else if (p->wei_dtype != p->in_dtype)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": wei_dtype (%s) differs from in_dtype (%s); the tensor cores take one "
                          "input type.",
                       ck_dtype_name(p->wei_dtype), ck_dtype_name(p->in_dtype));
    if (p->direction != CK_CONV_FWD) {
        if (p->out_dtype != p->in_dtype && !ck_conv_8bit(ck_conv_read_dtype(p, 0)))
            return ck_fail(
                CK_ERROR_UNSUPPORTED, OP ": %s: out_dtype (dY, %s) must be in_dtype (%s).",
                dir_name(p->direction), ck_dtype_name(p->out_dtype), ck_dtype_name(p->in_dtype));
        if (p->bias || p->residual || p->activation != CK_GEMM_ACT_NONE)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": %s: bias, residual and activation are forward epilogues.",
                           dir_name(p->direction));
    }
    if (p->bias && !float_type(p->bias_dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": bias_dtype = %s; accepted: f32, f16, bf16.",
                       ck_dtype_name(p->bias_dtype));
    if (p->residual && !float_type(p->residual_dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": residual_dtype = %s; accepted: f32, f16, bf16.",
                       ck_dtype_name(p->residual_dtype));
    if (p->activation < CK_GEMM_ACT_NONE || p->activation > CK_GEMM_ACT_SIGMOID)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": activation = %d is not a ck_gemm_activation.", (int)p->activation);
    int64_t m = p->n, kf = 1, x = p->n * p->c, w = p->k * q->p.c, y = p->n * p->k;
    int ok = 1;
    for (int d = 0; d < 3; ++d)
        ok = ok && mul_ok(&m, q->out[d]) && mul_ok(&kf, q->fil[d]) && mul_ok(&x, q->in[d]) &&
             mul_ok(&w, q->fil[d]) && mul_ok(&y, q->out[d]);
    if (!ok || m > INT32_MAX || kf * q->p.c > INT32_MAX || p->k > INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the problem is too large (GEMM dims or tensors beyond 2^31 / 2^62 "
                          "elements).");
    q->gemm_m = m;
    q->gemm_kf = kf;
    q->x_elems = x;
    q->w_elems = w;
    q->y_elems = y;
    return CK_SUCCESS;
}

ck_status ck_conv_output_lengths(const ck_conv_problem *p, int64_t out[CK_CONV_MAX_DIMS])
{
    ck_conv_prob q;
    ck_status st = ck_conv_prob_make(p, &q);
    if (st)
        return st;
    for (int d = 0; d < CK_CONV_MAX_DIMS; ++d)
        out[d] = d < p->ndim ? q.p.out[d] : 0;
    return CK_SUCCESS;
}

ck_status ck_conv_tensor_elements(const ck_conv_problem *p, int64_t *x, int64_t *w, int64_t *y)
{
    ck_conv_prob q;
    ck_status st = ck_conv_prob_make(p, &q);
    if (st)
        return st;
    if (x)
        *x = q.x_elems;
    if (w)
        *w = q.w_elems;
    if (y)
        *y = q.y_elems;
    return CK_SUCCESS;
}

/* "AxB" of the problem's ndim spatial values (the 3-D padded array's last ndim). */
static int dims_key(char *buf, size_t size, const char *name, const int64_t *v, int ndim)
{
    int len = snprintf(buf, size, ",%s=", name);
    for (int d = 3 - ndim; d < 3 && len > 0 && (size_t)len < size; ++d)
        len += snprintf(buf + len, size - (size_t)len, d > 3 - ndim ? "x%lld" : "%lld",
                        (long long)v[d]);
    return len;
}

/* Everything that can change the best instance: the direction, the spatial dims, n, g, c and
 * k (per group), the input, filter and output lengths, stride, dilation, both paddings, the
 * three tensor types and the compute mode (3xTF32), the forward epilogue (bias and residual
 * with their types, activation) and the layout (NCHW adds the permutes around the kernels). */
void ck_conv_tuning_problem_key(const ck_conv_prob *q, char *buf, size_t size)
{
    const ck_conv_problem *p = &q->p;
    static const char *const dirs[] = {"fwd", "bwd-data", "bwd-weight"};
    int len = snprintf(buf, size, "%s,%dd,n=%lld,g=%lld,c=%lld,k=%lld", dirs[p->direction], p->ndim,
                       (long long)p->n, (long long)p->g, (long long)p->c, (long long)p->k);
    const struct {
        const char *name;
        const int64_t *v;
    } dims[] = {{"in", q->in},   {"fil", q->fil}, {"out", q->out}, {"str", q->str},
                {"dil", q->dil}, {"pl", q->pl},   {"pr", q->pr}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0] && len > 0 && (size_t)len < size; ++i)
        len += dims_key(buf + len, size - (size_t)len, dims[i].name, dims[i].v, p->ndim);
    if (len > 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ",%s/%s/%s,compute=%d,bias=%s,res=%s,act=%d,%s",
                 ck_dtype_name(p->in_dtype), ck_dtype_name(p->wei_dtype),
                 ck_dtype_name(p->out_dtype), (int)p->compute,
                 p->bias ? ck_dtype_name(p->bias_dtype) : "-",
                 p->residual ? ck_dtype_name(p->residual_dtype) : "-", (int)p->activation,
                 p->layout == CK_CONV_LAYOUT_NCHW ? "nchw" : "nhwgc");
}
