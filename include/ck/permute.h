/*
 * ck/permute.h - permute (transpose) the dimensions of a tensor.
 *
 * ck_permute writes dst[i_0, ..., i_{r-1}] = src[j] where j[perm[d]] = i_d, i.e.
 * dst.shape[d] == src.shape[perm[d]] (numpy.transpose / torch.permute semantics): NCHW -> NHWC
 * is perm {0, 2, 3, 1}; a 2-D transpose is {1, 0}. docs/ops-permute.md describes the kernels.
 */
#ifndef CK_PERMUTE_H
#define CK_PERMUTE_H

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src permuted by `perm` (rank entries, a permutation of 0..rank-1), on the context's
 * stream (asynchronous on a GPU). Ranks 0..8, any dtype of 1, 2, 4 or 8 bytes; src may have any
 * strides (zero included), dst any strides without zeros on dimensions longer than 1. Sub-byte
 * types (fp4, fp6; packed and contiguous) only when perm keeps the last dimension last and its
 * length is a whole number of bytes. dst and src must have the same dtype and must not overlap.
 * Tensors with no elements: nothing to do, CK_SUCCESS.
 * Errors (with a sentence naming the argument): CK_ERROR_INVALID_ARGUMENT (NULL, rank or dtype
 * mismatch, perm not a permutation, dst.shape[d] != src.shape[perm[d]], overlap, zero dst
 * stride), CK_ERROR_UNSUPPORTED (sub-byte type with a moving last dimension), the tensor checks
 * of ck_op_check_tensor, and those of compiling or launching the kernel. */
ck_status ck_permute(ck_context *ctx, const ck_tensor *src, const int *perm, ck_tensor *dst);

#ifdef __cplusplus
}
#endif
#endif
