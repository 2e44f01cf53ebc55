/*
 * ck/softmax.h - softmax, log-softmax and top-k softmax (MoE gating).
 *
 * ck_softmax computes, along the last axis of x (viewed as rows of N elements),
 *
 *     t = scale * x + mask                (mask: optional additive tensor, broadcast to x)
 *     t = -inf where the causal mask hides an element
 *     y = softmax(t) = exp(t - max t) / sum exp(t - max t)     or, with log, log-softmax(t)
 *
 * in fp32 whatever the element types (x, y and the mask are each f32, f16 or bf16; y may differ
 * from x). The causal mask views x as [..., M, N] (M = x's second-to-last length, 1 for rank 1)
 * and hides element (i, j) when j > i + (N - M): the diagonal is aligned to the bottom-right
 * corner, as for attention with a key/value cache of N - M earlier positions.
 *
 * Special values follow PyTorch: a row holding NaN or +inf gives NaN everywhere (log-softmax
 * too); -inf entries get probability 0 (log-softmax -inf); a row in which every element is -inf
 * or masked (possible with M > N under the causal mask) gives NaN everywhere.
 *
 * docs/ops-softmax.md describes the algorithm, the instances and their memory traffic.
 */
#ifndef CK_SOFTMAX_H
#define CK_SOFTMAX_H

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_softmax_options {
    int log;               /* 1: log-softmax */
    float scale;           /* applied to x before the mask (finite); options_init sets 1 */
    const ck_tensor *mask; /* NULL, or an additive mask (f32/f16/bf16) broadcastable to x: its
                              last length is N; its other lengths, aligned to x's from the
                              right, are 1 or x's (e.g. [N], [rows, N], [M, N] for x [B, M, N],
                              [B, 1, N]); the dims it does not broadcast must be one run of x's
                              leading dims with strides that merge */
    int causal;            /* 1: the causal mask described above (combines with mask) */
} ck_softmax_options;

/* log 0, scale 1, no mask, not causal. */
void ck_softmax_options_init(ck_softmax_options *options);

/* y = softmax (or log-softmax) of x along its last axis; options NULL: plain softmax. x and y
 * have the same shape, rank >= 1, the last dimension contiguous (stride 1) and the other
 * dimensions with strides that merge into one row stride (e.g. a row stride > N). y must not
 * overlap x unless it is x itself with the same strides (in place). Queued on the context's
 * stream. Errors (CK_ERROR_INVALID_ARGUMENT or CK_ERROR_UNSUPPORTED, with a sentence naming the
 * argument): bad descriptions, types other than f32/f16/bf16, shapes that differ, masks that do
 * not broadcast, a zero-length last axis with rows (there is nothing to normalize), N above
 * 2^31. A tensor with no elements is a no-op. */
ck_status ck_softmax(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                     const ck_softmax_options *options);

/* MoE gating (CK's topk_softmax): for each token (row of logits [tokens, experts], f32/f16/
 * bf16, last dimension contiguous), p = softmax over the experts, then the k largest: indices
 * [tokens, k] (i32) in descending order and weights [tokens, k] (f32, f16 or bf16) = their p,
 * or with renormalize p_i / (sum of the k selected p). Order: larger logit first; equal logits:
 * lower expert index first; NaN logits rank above everything (their weights are NaN, like the
 * rest of that token's). 1 <= k <= experts <= 4096. */
ck_status ck_topk_softmax(ck_context *ctx, const ck_tensor *logits, int k, int renormalize,
                          ck_tensor *indices, ck_tensor *weights);

#ifdef __cplusplus
}
#endif
#endif /* CK_SOFTMAX_H */
