/*
 * ck/im2col.h - the im2col matrix of a convolution's input (CK's img2col / image_to_column):
 * the matrix the implicit GEMM of ck_conv reads through its im2col view, written out.
 *
 * For a forward convolution problem (ck/conv.h: its geometry -- n, g, c, spatial lengths,
 * filter, stride, dilation, padding -- and in_dtype; k, the other types and the epilogue are
 * checked as for a plan but not used), ck_im2col writes, for every group g, the matrix
 *   out[g][m][k],  m = (n, o...) < M = N * prod(out),  k = (f..., c) < K = prod(filter) * C/G
 * (row-major over the tuples, as ck_conv_im2col_descriptor's merges) holding
 *   X[n, o * stride + f * dilation - pad_left, g, c]   (zero where that lies in the padding)
 * of the NHWGC input X. out is packed [G, M, K] of in_dtype. docs/ops-conv.md describes it.
 */
#ifndef CK_IM2COL_H
#define CK_IM2COL_H

#include "ck/context.h"
#include "ck/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = im2col(x) on the context's stream (asynchronous on a GPU); x and out are device memory
 * of the context's device, aligned to the element (16-byte aligned pointers get 16-byte
 * accesses, others narrower ones), not overlapping. Errors (a sentence naming
 * the argument): the checks of ck_conv_output_lengths; CK_ERROR_INVALID_ARGUMENT for NULL
 * pointers, a direction other than CK_CONV_FWD, overlapping tensors; CK_ERROR_UNSUPPORTED for
 * layout CK_CONV_LAYOUT_NCHW (permute to NHWGC first: ck_permute), a matrix whose K needs more
 * than 65535 tiles or more than 65535 groups; and those of compiling or launching the kernel. */
ck_status ck_im2col(ck_context *ctx, const ck_conv_problem *problem, const void *x, void *out);

/* Elements of the matrix ck_im2col writes: *m = N * prod(out), *k = prod(filter) * C / G per
 * group (either may be NULL); the problem's checks as ck_im2col. */
ck_status ck_im2col_shape(const ck_conv_problem *problem, int64_t *m, int64_t *k);

/* The CPU reference (host memory): the definition above by direct index arithmetic. */
ck_status ck_im2col_reference(const ck_conv_problem *problem, const void *x, void *out);

#ifdef __cplusplus
}
#endif
#endif /* CK_IM2COL_H */
