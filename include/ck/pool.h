/*
 * ck/pool.h - pooling over channels-last tensors (CK's pool2d / pool3d forward, max-pool
 * backward), with torch.nn.functional.max_pool2d / avg_pool2d (and the 3-D forms) semantics.
 *
 * Layouts (packed, channels innermost): x [N, Hi, Wi, C] ("NHWC"; 3-D: [N, Di, Hi, Wi, C],
 * "NDHWC"), y and indices [N, Ho, Wo, C] ([N, Do, Ho, Wo, C]). Per spatial dim (outermost
 * first), with kernel k, stride s, dilation d, padding p (both sides):
 *   out = floor((in + 2 p - d (k - 1) - 1) / s) + 1           (ceil_mode: ceil instead, minus
 *         one when the last window would start past in + p: every window meets the input)
 * Window o covers input positions o s - p + f d (f < k).
 *   max  y = the largest value of the window's input elements (the padding takes no part; a
 *        NaN wins: the last NaN in scan order, as torch); indices (optional, int32 or int64):
 *        the position of that element in its (n, c) plane, flattened over the spatial dims
 *        ((h * Wi + w); 3-D (d * Hi + h) * Wi + w), as torch returns; ties: the first.
 *   avg  y = sum of the window's elements / divisor: divisor_override when > 0; else with
 *        count_include_pad the window's size clipped to in + p (the padding counted), without
 *        it the number of input elements in the window (torch's avg_pool2d; no dilation).
 * Max-pool backward: dx[n, i, c] = sum of dy[n, o, c] over the outputs o whose index is i,
 * gathered per input element in a fixed tap order: deterministic, no atomics.
 * Accumulation is f32; y has x's type (bf16, f16, f32). docs/ops-pool.md describes the kernels.
 */
#ifndef CK_POOL_H
#define CK_POOL_H

#include <stdint.h>

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_pool_mode { CK_POOL_MAX = 0, CK_POOL_AVG = 1 } ck_pool_mode;

typedef enum ck_pool_index {
    CK_POOL_INDEX_NONE = 0, /* max without indices */
    CK_POOL_INDEX_I32 = 1,  /* int32_t indices */
    CK_POOL_INDEX_I64 = 2   /* int64_t indices (torch's) */
} ck_pool_index;

typedef struct ck_pool_problem {
    ck_pool_mode mode;
    int ndim;                 /* spatial dims: 2 or 3 */
    int64_t n, c;             /* batch, channels */
    int64_t in[3];            /* input spatial lengths (D, H, W order; 2-D: H, W) */
    int64_t kernel[3];        /* >= 1 */
    int64_t stride[3];        /* >= 1 (torch's default: the kernel) */
    int64_t dilation[3];      /* >= 1; avg: 1 */
    int64_t pad[3];           /* >= 0, at most half the kernel (kernel / 2), as torch */
    int ceil_mode;            /* 1: ceil in the output length formula */
    int count_include_pad;    /* avg: 1 counts the padding in the divisor (torch's default) */
    int64_t divisor_override; /* avg: > 0 divides by this instead; 0: none */
    ck_dtype dtype;           /* x, y (and dy, dx): f32, f16, bf16 */
    ck_pool_index index;      /* max: indices written (forward) / read (backward) */
} ck_pool_problem;

/* Fill *p: max 2-D, every length 1, kernel/stride/dilation 1, no padding, bf16, no indices. */
void ck_pool_problem_init(ck_pool_problem *p);

/* The output lengths after the checks (CK_ERROR_INVALID_ARGUMENT with a sentence naming the
 * field: counts < 1, kernel/stride/dilation < 1, padding < 0 or more than half the kernel, dilation
 * with avg, an output length < 1; CK_ERROR_UNSUPPORTED: other ndim / dtypes, indices with avg). */
ck_status ck_pool_output_lengths(const ck_pool_problem *p, int64_t out[3]);

/* y (and indices when p->index) = pool(x) on the context's stream. Device pointers of the
 * context's device, aligned to their elements (16-byte aligned ones get the widest accesses),
 * not overlapping. */
ck_status ck_pool_forward(ck_context *ctx, const ck_pool_problem *p, const void *x, void *y,
                          void *indices);

/* Max-pool backward: dx (shaped like x) from dy and the forward's indices (both shaped like y,
 * p->index their type; p->mode CK_POOL_MAX). Every element of dx is written. */
ck_status ck_pool_backward(ck_context *ctx, const ck_pool_problem *p, const void *dy,
                           const void *indices, void *dx);

/* CPU references (host memory): the definitions above by direct loops (f64 sums). */
ck_status ck_pool_forward_reference(const ck_pool_problem *p, const void *x, void *y,
                                    void *indices);
ck_status ck_pool_backward_reference(const ck_pool_problem *p, const void *dy, const void *indices,
                                     void *dx);

#ifdef __cplusplus
}
#endif
#endif /* CK_POOL_H */
