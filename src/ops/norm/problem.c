/*
 * The layernorm / RMSNorm / smooth-quant problems (norm_internal.h): the arguments' checks, each
 * refusal a sentence naming the argument, and the problem structs the policy and the parameter
 * tables read. docs/ops-norm.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/norm.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"

static const char *kind_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm2d"
           : kind == CK_NORM_RMSNORM ? "rmsnorm2d"
                                     : "smoothquant";
}

/* The tuning table's op names: those of `ck tune`. */
const char *ck_norm_table_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm"
           : kind == CK_NORM_RMSNORM ? "rmsnorm"
                                     : "smoothquant";
}

static int esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : (t == CK_DTYPE_F16 || t == CK_DTYPE_BF16) ? 2 : 1;
}

static int is_float_io(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_F16 || t == CK_DTYPE_BF16;
}

ck_status ck_norm_view_rows(const char *op, const char *name, const ck_tensor *t, ck_norm_rows *r)
{
    ck_status st = ck_op_check_tensor(op, name, t);
    if (st != CK_SUCCESS)
        return st;
    if (t->rank < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' (%s) has rank 0; a tensor of rank >= 1 (rows x hidden) is "
                       "required.",
                       op, name, ck_op_tensor_str(t));
    int k = t->rank - 1;
    r->n = t->shape[k];
    if (r->n > 1 && t->strides[k] != 1)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: tensor '%s' (%s) has stride %lld in its last dimension; the hidden "
                       "dimension must be contiguous (stride 1).",
                       op, name, ck_op_tensor_str(t), (long long)t->strides[k]);
    r->rows = 1;
    r->stride = r->n;
    int first = 1;
    for (int i = k - 1; i >= 0; --i) {
        if (t->shape[i] == 1)
            continue;
        if (first) {
            r->stride = t->strides[i];
            first = 0;
        } else if (t->strides[i] != t->strides[i + 1] * t->shape[i + 1]) {
            /* dimension i+1 may have been skipped when of length 1: find the next used one */
            int j = i + 1;
            while (t->shape[j] == 1)
                ++j;
            if (t->strides[i] != t->strides[j] * t->shape[j])
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: tensor '%s' (%s): its leading dimensions do not collapse into "
                               "one row stride; make them contiguous.",
                               op, name, ck_op_tensor_str(t));
        }
        r->rows *= t->shape[i];
    }
    if (r->rows > 1 && r->stride < r->n)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: tensor '%s' (%s) has row stride %lld below the hidden size %lld; rows "
                       "must not overlap.",
                       op, name, ck_op_tensor_str(t), (long long)r->stride, (long long)r->n);
    return CK_SUCCESS;
}

/* A vector of `n` elements (gamma, beta, smooth, mean, rstd, y_scale): any rank, contiguous. */
ck_status ck_norm_check_vector(const char *op, const char *name, const ck_tensor *t, int64_t n,
                               int f32_only)
{
    ck_status st = ck_op_check_tensor(op, name, t);
    if (st != CK_SUCCESS)
        return st;
    if (ck_tensor_numel(t) != n || !ck_tensor_is_contiguous(t))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' is %s; a contiguous vector of %lld elements is required.",
                       op, name, ck_op_tensor_str(t), (long long)n);
    if (f32_only ? t->dtype != CK_DTYPE_F32 : !is_float_io(t->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; %s is supported.", op,
                       name, ck_dtype_name(t->dtype), f32_only ? "f32" : "f32, f16 or bf16");
    return CK_SUCCESS;
}

int ck_norm_row_check(const char *op, const char *name, const ck_tensor *t, const ck_norm_rows *x,
                      ck_norm_rows *r, ck_status *st)
{
    *st = ck_norm_view_rows(op, name, t, r);
    if (*st != CK_SUCCESS)
        return 0;
    if (r->n != x->n || r->rows != x->rows) {
        *st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                      "%s: tensor '%s' (%s) is %lld rows of %lld; x is %lld rows of %lld, the "
                      "shapes must match.",
                      op, name, ck_op_tensor_str(t), (long long)r->rows, (long long)r->n,
                      (long long)x->rows, (long long)x->n);
        return 0;
    }
    return 1;
}

/* Largest vector width (power of two, at most 16 bytes of x's type) that divides n and keeps
 * every access aligned: for each tensor its pointer and (row tensors) row stride in bytes must
 * be multiples of min(16, vec * element size). */
int ck_norm_pick_vec(int64_t n, int x_esize, int count, const ck_tensor *const *ts,
                     const int64_t *strides)
{
    int vec = 16 / x_esize;
    for (; vec > 1; vec /= 2) {
        if (n % vec)
            continue;
        int ok = 1;
        for (int i = 0; i < count && ok; ++i) {
            if (!ts[i])
                continue;
            int64_t a = (int64_t)vec * esize(ts[i]->dtype);
            a = a > 16 ? 16 : a;
            if ((uintptr_t)ts[i]->data % (uintptr_t)a || (strides[i] * esize(ts[i]->dtype)) % a)
                ok = 0;
        }
        if (ok)
            break;
    }
    return vec;
}

static ck_status check_disjoint(const char *op, int count, const char *const *names,
                                const ck_tensor *const *ts, int first_output)
{
    for (int i = first_output; i < count; ++i) {
        if (!ts[i])
            continue;
        for (int j = 0; j < count; ++j) {
            if (j == i || !ts[j] || (j > i && j >= first_output))
                continue;
            if (ck_op_overlap(ts[i], ts[j]))
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: output '%s' overlaps '%s' in memory; outputs must not alias "
                               "inputs or other outputs.",
                               op, names[i], names[j]);
        }
    }
    return CK_SUCCESS;
}

ck_status ck_norm_fwd_problem_of(const ck_norm_forward_desc *d, ck_norm_fwd_problem *p)
{
    CK_REQUIRE_NOT_NULL(d, "ck_norm_forward");
    if (d->kind != CK_NORM_LAYERNORM && d->kind != CK_NORM_RMSNORM && d->kind != CK_NORM_NONE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_norm_forward: kind %d is not CK_NORM_LAYERNORM, CK_NORM_RMSNORM or "
                       "CK_NORM_NONE.",
                       (int)d->kind);
    const char *op = kind_name(d->kind);
    if (!d->x || !d->y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: tensors 'x' and 'y' are required.", op);
    ck_status st;
    ck_norm_rows xr;
    if ((st = ck_norm_view_rows(op, "x", d->x, &xr)) != CK_SUCCESS)
        return st;
    if (!is_float_io(d->x->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: x has dtype %s; f32, f16 or bf16 is supported.",
                       op, ck_dtype_name(d->x->dtype));
    if (xr.n > CK_NORM_MAX_N)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: hidden size %lld (x is %s) exceeds the supported maximum %d.", op,
                       (long long)xr.n, ck_op_tensor_str(d->x), (int)CK_NORM_MAX_N);
    if (xr.n == 0 && xr.rows > 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: x (%s) has an empty hidden dimension; normalizing zero elements is "
                       "undefined.",
                       op, ck_op_tensor_str(d->x));
    ck_norm_rows yr, rr = xr, orr = xr;
    if (!ck_norm_row_check(op, "y", d->y, &xr, &yr, &st))
        return st;
    int quant = d->y->dtype == CK_DTYPE_I8 || d->y->dtype == CK_DTYPE_FP8_E4M3;
    if (!quant && !is_float_io(d->y->dtype))
        return ck_fail(
            CK_ERROR_UNSUPPORTED,
            "%s: y has dtype %s; f32, f16, bf16 (or i8, fp8e4m3 quantized) is supported.", op,
            ck_dtype_name(d->y->dtype));
    if (d->kind == CK_NORM_NONE && !quant)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "smoothquant: y has dtype %s; the quantized types i8 and fp8e4m3 are "
                       "supported.",
                       ck_dtype_name(d->y->dtype));
    if (d->residual && !ck_norm_row_check(op, "residual", d->residual, &xr, &rr, &st))
        return st;
    if (d->residual && !is_float_io(d->residual->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: residual has dtype %s; f32, f16 or bf16.", op,
                       ck_dtype_name(d->residual->dtype));
    if (d->residual_out) {
        if (!d->residual)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: residual_out is given without residual; it receives x + "
                           "residual.",
                           op);
        if (!ck_norm_row_check(op, "residual_out", d->residual_out, &xr, &orr, &st))
            return st;
        if (!is_float_io(d->residual_out->dtype))
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: residual_out has dtype %s; f32, f16 or bf16 is supported.", op,
                           ck_dtype_name(d->residual_out->dtype));
    }
    if (d->kind == CK_NORM_NONE) {
        if (d->gamma || d->beta || d->mean || d->rstd)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "smoothquant: gamma, beta, mean and rstd must be NULL (no "
                           "normalization).");
    } else {
        if (!d->gamma)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: gamma is required.", op);
        if ((st = ck_norm_check_vector(op, "gamma", d->gamma, xr.n, 0)) != CK_SUCCESS)
            return st;
    }
    if (d->beta && d->kind != CK_NORM_LAYERNORM)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: beta is only for layernorm; pass NULL.", op);
    if (d->beta && (st = ck_norm_check_vector(op, "beta", d->beta, xr.n, 0)) != CK_SUCCESS)
        return st;
    if (d->smooth && !quant)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: smooth is given but y (%s) is not quantized; smooth scales y before "
                       "quantization to i8 or fp8e4m3.",
                       op, ck_op_tensor_str(d->y));
    if (d->smooth && (st = ck_norm_check_vector(op, "smooth", d->smooth, xr.n, 0)) != CK_SUCCESS)
        return st;
    if (quant && !d->y_scale)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: y is quantized (%s) and needs y_scale (f32, one per row).", op,
                       ck_dtype_name(d->y->dtype));
    if (!quant && d->y_scale)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: y_scale is given but y (%s) is not quantized.", op,
                       ck_op_tensor_str(d->y));
    if (d->y_scale &&
        (st = ck_norm_check_vector(op, "y_scale", d->y_scale, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (d->mean && d->kind != CK_NORM_LAYERNORM)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: mean is only for layernorm; pass NULL.", op);
    if (d->mean && (st = ck_norm_check_vector(op, "mean", d->mean, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (d->rstd && (st = ck_norm_check_vector(op, "rstd", d->rstd, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (!(d->epsilon >= 0.0f) || d->epsilon > 1e30f)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: epsilon %g is not a finite value >= 0.", op,
                       (double)d->epsilon);
    const char *names[] = {"x", "residual", "gamma",        "beta", "smooth",
                           "y", "y_scale",  "residual_out", "mean", "rstd"};
    const ck_tensor *all[] = {d->x, d->residual, d->gamma,        d->beta, d->smooth,
                              d->y, d->y_scale,  d->residual_out, d->mean, d->rstd};
    if ((st = check_disjoint(op, 10, names, all, 5)) != CK_SUCCESS)
        return st;
    memset(p, 0, sizeof *p);
    p->kind = d->kind;
    p->op = op;
    p->n = xr.n;
    p->rows = xr.rows;
    p->x = xr;
    p->y = yr;
    p->r = rr;
    p->o = orr;
    p->xt = d->x->dtype;
    p->yt = d->y->dtype;
    p->gt = d->gamma ? (int)d->gamma->dtype : -1;
    p->bt = d->beta ? (int)d->beta->dtype : -1;
    p->rt = d->residual ? (int)d->residual->dtype : -1;
    p->ot = d->residual_out ? (int)d->residual_out->dtype : -1;
    p->st = d->smooth ? (int)d->smooth->dtype : -1;
    p->want_mean = d->mean != NULL;
    p->want_rstd = d->rstd != NULL;
    if (xr.rows == 0)
        return CK_SUCCESS;

    const ck_tensor *vt[] = {d->x,     d->residual, d->y,     d->residual_out,
                             d->gamma, d->beta,     d->smooth};
    int64_t vs[] = {xr.stride, rr.stride, yr.stride, orr.stride, 0, 0, 0};
    p->vec = ck_norm_pick_vec(xr.n, esize(d->x->dtype), 7, vt, vs);
    int raw_ok = (d->x->dtype == CK_DTYPE_BF16 || d->x->dtype == CK_DTYPE_F16) && p->vec == 8 &&
                 !d->residual;
    p->raw_ok = raw_ok && d->x->dtype == CK_DTYPE_BF16 ? 2 : raw_ok;
    return CK_SUCCESS;
}

/* The tuning table's problem key: op, types, hidden size, rows, vector width, the optional
 * tensors present (residual, residual_out, beta, smooth, mean, rstd as bits). */
void ck_norm_fwd_problem_key(const ck_norm_forward_desc *d, const ck_norm_fwd_problem *p, char *buf,
                             size_t size)
{
    int extras = (d->residual ? 1 : 0) | (d->residual_out ? 2 : 0) | (d->beta ? 4 : 0) |
                 (d->smooth ? 8 : 0) | (d->mean ? 16 : 0) | (d->rstd ? 32 : 0);
    snprintf(buf, size, "%s>%s/n=%lld/rows=%lld/vec=%d/t=%d", ck_dtype_name(d->x->dtype),
             ck_dtype_name(d->y->dtype), (long long)p->n, (long long)p->rows, p->vec, extras);
}

ck_status ck_norm_bwd_problem_of(const ck_norm_backward_desc *d, ck_norm_bwd_problem *p)
{
    if (d->kind != CK_NORM_LAYERNORM && d->kind != CK_NORM_RMSNORM)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_norm_backward: kind %d is not CK_NORM_LAYERNORM or CK_NORM_RMSNORM.",
                       (int)d->kind);
    const char *op = d->kind == CK_NORM_LAYERNORM ? "layernorm2d backward" : "rmsnorm2d backward";
    if (!d->dy || !d->x || !d->gamma || !d->rstd || !d->dx)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensors 'dy', 'x', 'gamma', 'rstd' and 'dx' are required.", op);
    if (d->kind == CK_NORM_LAYERNORM && !d->mean)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: 'mean' (the forward's saved mean) is required.", op);
    if (d->kind == CK_NORM_RMSNORM && (d->mean || d->dbeta))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: 'mean' and 'dbeta' are only for layernorm; pass NULL.", op);
    ck_status st;
    ck_norm_rows xr, dyr, dxr;
    if ((st = ck_norm_view_rows(op, "x", d->x, &xr)) != CK_SUCCESS)
        return st;
    if (xr.n > CK_NORM_BWD_MAX_N)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: hidden size %lld (x is %s) exceeds the supported maximum %d of the "
                       "backward.",
                       op, (long long)xr.n, ck_op_tensor_str(d->x), (int)CK_NORM_BWD_MAX_N);
    if (xr.n == 0 && xr.rows > 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: x (%s) has an empty hidden dimension.", op,
                       ck_op_tensor_str(d->x));
    if (!ck_norm_row_check(op, "dy", d->dy, &xr, &dyr, &st) ||
        !ck_norm_row_check(op, "dx", d->dx, &xr, &dxr, &st))
        return st;
    const ck_tensor *rowt[] = {d->x, d->dy, d->dx};
    const char *rown[] = {"x", "dy", "dx"};
    for (int i = 0; i < 3; ++i)
        if (!is_float_io(rowt[i]->dtype))
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: %s has dtype %s; f32, f16 or bf16 is supported.", op, rown[i],
                           ck_dtype_name(rowt[i]->dtype));
    if ((st = ck_norm_check_vector(op, "gamma", d->gamma, xr.n, 0)) != CK_SUCCESS ||
        (st = ck_norm_check_vector(op, "rstd", d->rstd, xr.rows, 1)) != CK_SUCCESS ||
        (d->mean && (st = ck_norm_check_vector(op, "mean", d->mean, xr.rows, 1)) != CK_SUCCESS) ||
        (d->dgamma &&
         (st = ck_norm_check_vector(op, "dgamma", d->dgamma, xr.n, 0)) != CK_SUCCESS) ||
        (d->dbeta && (st = ck_norm_check_vector(op, "dbeta", d->dbeta, xr.n, 0)) != CK_SUCCESS))
        return st;
    const ck_tensor *all[] = {d->dy, d->x, d->gamma, d->mean, d->rstd, d->dx, d->dgamma, d->dbeta};
    const char *names[] = {"dy", "x", "gamma", "mean", "rstd", "dx", "dgamma", "dbeta"};
    for (int i = 5; i < 8; ++i)
        for (int j = 0; j < 8 && all[i]; ++j)
            if (j != i && all[j] && !(j > i) && ck_op_overlap(all[i], all[j]))
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: output '%s' overlaps '%s' in memory; outputs must not alias "
                               "inputs or other outputs.",
                               op, names[i], names[j]);
    memset(p, 0, sizeof *p);
    p->kind = d->kind;
    p->op = op;
    p->n = xr.n;
    p->rows = xr.rows;
    p->x = xr;
    p->dy = dyr;
    p->dx = dxr;
    p->dyt = d->dy->dtype;
    p->xt = d->x->dtype;
    p->gt = d->gamma->dtype;
    p->dxt = d->dx->dtype;
    p->dgt = d->dgamma ? (int)d->dgamma->dtype : -1;
    p->dbt = d->dbeta ? (int)d->dbeta->dtype : -1;
    p->want_part = d->dgamma || d->dbeta;
    if (xr.rows == 0)
        return CK_SUCCESS;
    const ck_tensor *vt[] = {d->x, d->dy, d->dx, d->gamma};
    int64_t vs[] = {xr.stride, dyr.stride, dxr.stride, 0};
    p->vec = ck_norm_pick_vec(xr.n, esize(d->x->dtype), 4, vt, vs);
    return CK_SUCCESS;
}

const char *ck_norm_bwd_table_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm_bwd" : "rmsnorm_bwd";
}

void ck_norm_bwd_problem_key(const ck_norm_bwd_problem *p, char *buf, size_t size)
{
    snprintf(buf, size, "%s,%s>%s/n=%lld/rows=%lld/vec=%d/t=%d", ck_dtype_name((ck_dtype)p->dyt),
             ck_dtype_name((ck_dtype)p->xt), ck_dtype_name((ck_dtype)p->dxt), (long long)p->n,
             (long long)p->rows, p->vec, (p->dgt >= 0 ? 1 : 0) | (p->dbt >= 0 ? 2 : 0));
}
