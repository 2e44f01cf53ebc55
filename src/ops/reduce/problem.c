/*
 * The reduce problem (reduce_internal.h): the reduction names, the options' defaults, the
 * arguments' checks (each refusal a sentence) and the canonical form the policy reads: kept x
 * reduced dimensions, length-1 dimensions dropped. docs/ops-reduce.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/reduce.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce_internal.h"

#define OP "ck_reduce"

const char *const ck_reduce_op_names[CK_REDUCE_OP_COUNT] = {"sum",   "mean",  "max",    "min",
                                                            "sumsq", "norm2", "argmax", "argmin"};

void ck_reduce_options_init(ck_reduce_options *opt)
{
    if (!opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->pre = CK_REDUCE_PRE_NONE;
    opt->scale = 1.0;
}

const char *ck_reduce_op_name(ck_reduce_op op)
{
    return (unsigned)op < CK_REDUCE_OP_COUNT ? ck_reduce_op_names[op] : NULL;
}

ck_status ck_reduce_op_from_name(const char *name, ck_reduce_op *op)
{
    CK_REQUIRE_NOT_NULL(name, "ck_reduce_op_from_name");
    CK_REQUIRE_NOT_NULL(op, "ck_reduce_op_from_name");
    for (int i = 0; i < CK_REDUCE_OP_COUNT; ++i)
        if (strcmp(name, ck_reduce_op_names[i]) == 0) {
            *op = (ck_reduce_op)i;
            return CK_SUCCESS;
        }
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_reduce_op_from_name: unknown reduction '%s'; the reductions are sum, "
                   "mean, max, min, sumsq, norm2, argmax and argmin.",
                   name);
}

int ck_reduce_is_arg(ck_reduce_op op)
{
    return op == CK_REDUCE_ARGMAX || op == CK_REDUCE_ARGMIN;
}

int ck_reduce_in_size(ck_dtype t)
{
    return t == CK_DTYPE_TF32 ? 0 : ck_dtype_whole_bytes(t); /* tf32 is a compute mode */
}

static int out_ok(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_F64 || t == CK_DTYPE_F16 || t == CK_DTYPE_BF16 ||
           t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2 || t == CK_DTYPE_FP8_E4M3_FNUZ ||
           t == CK_DTYPE_FP8_E5M2_FNUZ;
}

/* Checks shared by ck_reduce and its reference; fills the reduced-axis mask. */
ck_status ck_reduce_check_common(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                                 const ck_reduce_options *opt, int *mask)
{
    if ((unsigned)op >= CK_REDUCE_OP_COUNT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": op %d is not a ck_reduce_op (0 sum ... 7 argmin).", (int)op);
    ck_status st = ck_op_check_tensor(OP, "x", x);
    if (st != CK_SUCCESS)
        return st;
    if (x->rank > CK_REDUCE_MAX_RANK)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": x %s has rank %d; ranks 0 to %d are supported.",
                       ck_op_tensor_str(x), x->rank, CK_REDUCE_MAX_RANK);
    if (!ck_reduce_in_size(x->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": x has type %s; supported: f32, f64, f16, bf16, fp8e4m3, fp8e5m2 (and "
                          "FNUZ), i8, u8, i32.",
                       ck_dtype_name(x->dtype));
    if (naxes > 0 && !axes)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": argument 'axes' is NULL but naxes is %d; pass an array of %d axis "
                          "numbers.",
                       naxes, naxes);
    if (naxes <= 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": the list of reduced axes is empty (naxes %d); list at least one axis "
                          "(to reduce every axis of x %s, list them all).",
                       naxes, ck_op_tensor_str(x));
    if (naxes > x->rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %d reduced axes for x %s of rank %d; each axis may appear once.",
                       naxes, ck_op_tensor_str(x), x->rank);
    for (int d = 0; d < CK_REDUCE_MAX_RANK; ++d)
        mask[d] = 0;
    for (int i = 0; i < naxes; ++i) {
        int a = axes[i];
        if (a < -x->rank || a >= x->rank)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": axis %d (axes[%d]) is out of range for x %s of rank %d (valid: "
                              "%d to %d).",
                           a, i, ck_op_tensor_str(x), x->rank, -x->rank, x->rank - 1);
        if (a < 0)
            a += x->rank;
        if (mask[a])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": axis %d appears more than once in the reduced axes (axes[%d] = "
                              "%d).",
                           a, i, axes[i]);
        mask[a] = 1;
    }
    if (opt->pre != CK_REDUCE_PRE_NONE && opt->pre != CK_REDUCE_PRE_ABS &&
        opt->pre != CK_REDUCE_PRE_SQUARE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": pre-op %d is not a ck_reduce_pre (0 none, 1 abs, 2 square).",
                       (int)opt->pre);
    if (opt->flags & ~(unsigned)CK_REDUCE_FAST)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": options.flags 0x%x has unknown bits; the only flag is CK_REDUCE_FAST "
                          "(0x%x).",
                       opt->flags, (unsigned)CK_REDUCE_FAST);
    if (!isfinite(opt->scale))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": options.scale is %g; a finite number is required.", opt->scale);
    if (ck_reduce_is_arg(op) && (opt->scale != 1.0 || opt->post_sqrt))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s writes indices; it takes no post-op (scale %g, sqrt %d).",
                       ck_reduce_op_names[op], opt->scale, opt->post_sqrt);
    int64_t n = 1, rows = 1;
    for (int d = 0; d < x->rank; ++d) {
        if (mask[d])
            n *= x->shape[d];
        else
            rows *= x->shape[d];
    }
    if (n == 0 && rows > 0 && (op == CK_REDUCE_MAX || op == CK_REDUCE_MIN || ck_reduce_is_arg(op)))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s over zero elements (x %s reduced over axes of length 0) has no "
                          "value; only sum, mean, sumsq and norm2 accept an empty reduction.",
                       ck_reduce_op_names[op], ck_op_tensor_str(x));
    if (ck_reduce_is_arg(op) && n > INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s over %lld elements: indices are written as i32, so at most "
                          "2147483647 elements may be reduced.",
                       ck_reduce_op_names[op], (long long)n);
    return CK_SUCCESS;
}

/* Checks of y; builds the canonical form. */
ck_status ck_reduce_analyze(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                            const ck_tensor *y, const ck_reduce_options *opt, rd_canon *c)
{
    int mask[CK_REDUCE_MAX_RANK];
    ck_status st = ck_reduce_check_common(op, x, axes, naxes, opt, mask);
    if (st != CK_SUCCESS)
        return st;
    st = ck_op_check_tensor(OP, "y", y);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(OP, "y", y);
    if (st != CK_SUCCESS)
        return st;
    if (ck_reduce_is_arg(op) ? y->dtype != CK_DTYPE_I32 : !out_ok(y->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       ck_reduce_is_arg(op) ? OP ": y has type %s; %s writes i32 indices."
                                            : OP
                           ": y has type %s; %s writes f32, f64, f16, bf16 or fp8.",
                       ck_dtype_name(y->dtype), ck_reduce_op_names[op]);
    int keep = y->rank == x->rank;
    if (!keep && y->rank != x->rank - naxes)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": y %s has rank %d; reducing %d axes of x %s needs rank %d (axes "
                          "removed) or %d (kept with length 1).",
                       ck_op_tensor_str(y), y->rank, naxes, ck_op_tensor_str(x), x->rank - naxes,
                       x->rank);
    int kd = 0, rd = 0;
    c->rows = 1;
    c->n = 1;
    for (int d = 0, e = 0; d < x->rank; ++d) {
        int64_t want = mask[d] ? 1 : x->shape[d];
        int yd = keep ? d : e;
        if (!mask[d] || keep) {
            if (y->shape[yd] != want)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP ": y %s does not match x %s reduced over the given axes: "
                                  "dimension %d of y has length %lld, expected %lld.",
                               ck_op_tensor_str(y), ck_op_tensor_str(x), yd,
                               (long long)y->shape[yd], (long long)want);
            ++e;
        }
        if (mask[d]) {
            c->n *= x->shape[d];
            if (x->shape[d] != 1) {
                c->rl[rd] = x->shape[d];
                c->rxs[rd++] = x->strides[d];
            }
        } else {
            c->rows *= x->shape[d];
            if (x->shape[d] != 1) {
                if (y->strides[yd] == 0)
                    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                                   OP ": y %s has stride 0 in dimension %d of length %lld: "
                                      "several results would be written to one element.",
                                   ck_op_tensor_str(y), yd, (long long)y->shape[yd]);
                c->kl[kd] = x->shape[d];
                c->kxs[kd] = x->strides[d];
                c->kys[kd++] = y->strides[yd];
            }
        }
    }
    if (c->rows > 0 && c->n > 0 && ck_op_overlap(x, y))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": y %s overlaps x %s; the output must not share memory with the input.",
                       ck_op_tensor_str(y), ck_op_tensor_str(x));
    if (c->n == 0) { /* one empty reduced dimension */
        rd = 1;
        c->rl[0] = 0;
        c->rxs[0] = 1;
    }
    /* kept: the contiguous dimension of x last, then merge neighbours */
    for (int k = 0; k < kd - 1; ++k)
        if (c->kxs[k] == 1) {
            int64_t l = c->kl[k], xs = c->kxs[k], ys = c->kys[k];
            for (int j = k; j < kd - 1; ++j) {
                c->kl[j] = c->kl[j + 1];
                c->kxs[j] = c->kxs[j + 1];
                c->kys[j] = c->kys[j + 1];
            }
            c->kl[kd - 1] = l;
            c->kxs[kd - 1] = xs;
            c->kys[kd - 1] = ys;
            break;
        }
    int m = 0;
    for (int k = 0; k < kd; ++k) {
        if (m > 0 && c->kxs[m - 1] == c->kxs[k] * c->kl[k] &&
            c->kys[m - 1] == c->kys[k] * c->kl[k]) {
            c->kl[m - 1] *= c->kl[k];
            c->kxs[m - 1] = c->kxs[k];
            c->kys[m - 1] = c->kys[k];
        } else {
            c->kl[m] = c->kl[k];
            c->kxs[m] = c->kxs[k];
            c->kys[m++] = c->kys[k];
        }
    }
    c->kd = m;
    /* reduced: order by decreasing stride (value ops; argmax's index needs x's order), merge */
    if (!ck_reduce_is_arg(op))
        for (int i = 1; i < rd; ++i)
            for (int j = i; j > 0 && c->rxs[j - 1] < c->rxs[j]; --j) {
                int64_t l = c->rl[j], s = c->rxs[j];
                c->rl[j] = c->rl[j - 1];
                c->rxs[j] = c->rxs[j - 1];
                c->rl[j - 1] = l;
                c->rxs[j - 1] = s;
            }
    m = 0;
    for (int r = 0; r < rd; ++r) {
        if (m > 0 && c->rxs[m - 1] == c->rxs[r] * c->rl[r]) {
            c->rl[m - 1] *= c->rl[r];
            c->rxs[m - 1] = c->rxs[r];
        } else {
            c->rl[m] = c->rl[r];
            c->rxs[m++] = c->rxs[r];
        }
    }
    if (m == 0) { /* every reduced axis has length 1 */
        c->rl[0] = 1;
        c->rxs[0] = 1;
        m = 1;
    }
    c->rd = m;
    return CK_SUCCESS;
}
