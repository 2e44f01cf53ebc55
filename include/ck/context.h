/*
 * ck/context.h - the client API's context and tensor descriptions.
 *
 * A context holds what every operation needs: a device (GPU or the CPU emulator), the stream
 * operations are queued on, the kernels already built for it (so a repeated call does no
 * generation, hashing or compilation) and a workspace for operations that need scratch memory.
 *
 * A tensor description (ck_tensor) names device memory of the context's device: pointer, element
 * type, shape and strides in elements. Descriptions are plain values owned by the caller; ck
 * never frees or keeps the memory. Operations (ck/elementwise.h, ck/permute.h, ck/reduce.h,
 * ck/softmax.h, ck/norm.h) check every description they receive and refuse, with a sentence
 * naming the argument, what they do not support.
 *
 * A context is used by one thread at a time.
 */
#ifndef CK_CONTEXT_H
#define CK_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ck/runtime.h"
#include "ck/status.h"
#include "ck/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_context ck_context;

/* Open device `ordinal` of `backend` (CK_BACKEND_AUTO: $CK_DEVICE, else a GPU when usable, else
 * the emulator) and make a context owning it. Errors as ck_device_open. */
ck_status ck_context_create(ck_backend backend, int ordinal, ck_context **ctx);

/* A context over a device the caller opened and keeps ownership of (it must outlive the
 * context). */
ck_status ck_context_create_for_device(ck_device *device, ck_context **ctx);

/* Free the context, its kernels and workspace (and its device if it owns it). NULL is a no-op. */
void ck_context_destroy(ck_context *ctx);

ck_device *ck_context_device(const ck_context *ctx);

/* CK_BACKEND_CUDA or CK_BACKEND_HOST. */
ck_backend ck_context_backend(const ck_context *ctx);

/* Queue later operations on `stream` (NULL: the default stream). Operations are asynchronous
 * on the GPU; ck_context_synchronize waits for them. */
void ck_context_set_stream(ck_context *ctx, ck_stream *stream);
ck_stream *ck_context_stream(const ck_context *ctx);
ck_status ck_context_synchronize(ck_context *ctx);

/* Number of distinct kernels the context has built (for tests and `ck prof`). */
int ck_context_kernel_count(const ck_context *ctx);

enum { CK_TENSOR_MAX_RANK = 8 };

/* A tensor in device memory. Element (i0, ..., i{rank-1}) is at
 * data + sum(i_k * strides[k]) elements. Rank 0 is a scalar (one element). Strides may be zero
 * (broadcast inputs) but not negative. Sub-byte types (fp4, fp6) are supported only packed and
 * contiguous (their strides are those of a packed row-major tensor). */
typedef struct ck_tensor {
    void *data;
    ck_dtype dtype;
    int rank;
    int64_t shape[CK_TENSOR_MAX_RANK];
    int64_t strides[CK_TENSOR_MAX_RANK]; /* in elements */
} ck_tensor;

/* Fill *t. strides NULL means packed row-major (the last dimension contiguous). Errors
 * (CK_ERROR_INVALID_ARGUMENT, naming the field): rank outside 0..8, negative lengths or
 * strides, invalid dtype, element count or extent (in elements or in bytes) overflowing int64
 * (CK_ERROR_OVERFLOW). data may be NULL only
 * for a tensor with no elements. */
ck_status ck_tensor_init(ck_tensor *t, void *data, ck_dtype dtype, int rank,
                         const int64_t *shape, const int64_t *strides);

/* Elements of t (product of the shape; 1 for rank 0; 0 when t is NULL or its rank is outside
 * 0..CK_TENSOR_MAX_RANK). */
int64_t ck_tensor_numel(const ck_tensor *t);

/* 1 when t's strides are those of a packed row-major tensor (dimensions of length 1 ignored);
 * 0 when t is NULL or its rank is outside 0..CK_TENSOR_MAX_RANK. */
int ck_tensor_is_contiguous(const ck_tensor *t);

/* Bytes of the smallest memory range holding every element of t (0 when it has none). */
int64_t ck_tensor_extent_bytes(const ck_tensor *t);

/* Write a one-line description such as "bf16[16384, 8192] strides [8192, 1]" into buf. */
void ck_tensor_describe(const ck_tensor *t, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* CK_CONTEXT_H */
