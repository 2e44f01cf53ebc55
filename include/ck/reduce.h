/*
 * ck/reduce.h - reductions over any set of axes of a tensor of rank <= 6.
 *
 *   y = post(op over the reduced axes of pre(x)))
 *
 * op: sum, mean, max, min, sum of squares, L2 norm, argmax, argmin (ck_reduce_op).
 * pre (applied to every element first): none, |x|, x^2.
 * post (applied to each result, in this order): multiply by `scale`, then square root.
 *
 * Types. x: f32, f64, f16, bf16, fp8 (e4m3, e5m2 and their FNUZ variants), i8, u8, i32 (not the
 * packed sub-byte types fp6/fp4, nor tf32). Accumulation is fp32, fp64 for f64 and i32 inputs
 * (an i32 is exact in fp64). y of a value op: f32, f64, f16, bf16 or fp8, rounded to nearest even
 * once from the accumulator (f16/bf16 overflow to infinity, fp8 saturates). y of argmax/argmin:
 * i32, the index of the element in the row-major order of the reduced axes (for one reduced
 * axis, the index along it, as PyTorch's argmax(dim)).
 *
 * Shapes. axes lists the reduced axes (0..rank-1, or -rank..-1 counting from the end), each once,
 * at least one (an empty list is refused: to reduce every axis, list them all). y's rank decides
 * how reduced axes appear: rank(x) - naxes removes them, rank(x) keeps them with length 1
 * (PyTorch's keepdim). Both x and y may be strided (strides in elements, not negative); y must not
 * overlap x, and y must not have two elements at one address.
 *
 * Values. NaN propagates as in PyTorch: a sum/mean/norm with a NaN term is NaN, max/min of a row
 * holding a NaN is NaN, argmax/argmin give the index of the first NaN; ties give the first index.
 * Reducing zero elements: sum, sum of squares and L2 norm give 0 (then the post-op), mean gives
 * NaN; max, min, argmax and argmin are refused (CK_ERROR_INVALID_ARGUMENT), as PyTorch errors.
 * A y with no elements makes the call a successful no-op.
 *
 * Determinism. Results depend only on the problem (shapes, strides, dtypes, options) and the
 * device's SM count, never on scheduling: each partial result is combined in a fixed order (split
 * rows and columns write partials to the context's workspace, which a second kernel combines in
 * order); no floating-point atomics are used. CK_REDUCE_FAST allows a non-deterministic order
 * (currently the deterministic kernels are also the fastest, so it changes nothing).
 *
 * Errors (ck_status with a sentence): bad tensors, unsupported dtypes, bad axes, shape mismatch
 * between x and y, arg ops with a post-op or a non-i32 y, more than 2^31 - 1 reduced elements for
 * argmax/argmin, overlap of x and y. docs/ops-reduce.md describes the kernels.
 */
#ifndef CK_REDUCE_H
#define CK_REDUCE_H

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_reduce_op {
    CK_REDUCE_SUM = 0,
    CK_REDUCE_MEAN = 1,
    CK_REDUCE_MAX = 2,
    CK_REDUCE_MIN = 3,
    CK_REDUCE_SUM_SQUARES = 4, /* sum of x^2 (after the pre-op) */
    CK_REDUCE_NORM2 = 5,       /* sqrt(sum of x^2) */
    CK_REDUCE_ARGMAX = 6,
    CK_REDUCE_ARGMIN = 7,
    CK_REDUCE_OP_COUNT = 8
} ck_reduce_op;

typedef enum ck_reduce_pre {
    CK_REDUCE_PRE_NONE = 0,
    CK_REDUCE_PRE_ABS = 1,
    CK_REDUCE_PRE_SQUARE = 2
} ck_reduce_pre;

enum {
    CK_REDUCE_MAX_RANK = 6,
    CK_REDUCE_FAST = 1 /* ck_reduce_options.flags: any combination order is acceptable */
};

typedef struct ck_reduce_options {
    ck_reduce_pre pre; /* element pre-op (default none) */
    double scale;      /* post-op multiplier, finite (default 1; not for argmax/argmin) */
    int post_sqrt;     /* 1: square root of the (scaled) result (not for argmax/argmin) */
    unsigned flags;    /* CK_REDUCE_FAST */
} ck_reduce_options;

/* Defaults: no pre-op, scale 1, no square root, deterministic. */
void ck_reduce_options_init(ck_reduce_options *opt);

/* Names "sum", "mean", "max", "min", "sumsq", "norm2", "argmax", "argmin"; NULL / error when
 * unknown. */
const char *ck_reduce_op_name(ck_reduce_op op);
ck_status ck_reduce_op_from_name(const char *name, ck_reduce_op *op);

/* y = op over axes[0..naxes) of x (opt may be NULL: defaults). Queued on the context's stream. */
ck_status ck_reduce(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                    int naxes, ck_tensor *y, const ck_reduce_options *opt);

#ifdef __cplusplus
}
#endif
#endif
