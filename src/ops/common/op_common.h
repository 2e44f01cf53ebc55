/*
 * Internal helpers shared by every operation of src/ops: argument checks, the context's kernel
 * cache, launches on the context's stream, the workspace. Not installed.
 */
#ifndef CK_SRC_OPS_COMMON_OP_COMMON_H
#define CK_SRC_OPS_COMMON_OP_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ck/context.h"
#include "ck/runtime.h"
#include "core/error.h"

/* Check tensor argument `name` of operation `op`: a valid description (as ck_tensor_init
 * accepts), non-NULL data when it has elements, data aligned to the element's storage size,
 * sub-byte types packed and contiguous. The sentence names op, argument and value. */
ck_status ck_op_check_tensor(const char *op, const char *name, const ck_tensor *t);

/* Same rank and lengths, else CK_ERROR_INVALID_ARGUMENT naming both and their shapes. */
ck_status ck_op_check_same_shape(const char *op, const char *name_a, const ck_tensor *a,
                                 const char *name_b, const ck_tensor *b);

/* Output tensor `name` (already checked by ck_op_check_tensor) must not have two elements at
 * one address (a stride 0, or strides whose ranges interleave), else CK_ERROR_INVALID_ARGUMENT
 * with a sentence. */
ck_status ck_op_check_output(const char *op, const char *name, const ck_tensor *t);

/* 1 when the memory ranges of a and b (ck_tensor_extent_bytes from their data) intersect. */
int ck_op_overlap(const ck_tensor *a, const ck_tensor *b);

/* Properties of the context's device (read once). */
const ck_device_props *ck_op_props(const ck_context *ctx);

/* Produces the full kernel source of a cache miss (malloc'd, freed by ck_op_kernel). */
typedef ck_status (*ck_op_build_fn)(void *user, char **source);

/* The kernel `kernel_name` of the module for `key` (a string naming everything the source
 * depends on, e.g. "softmax/bf16/n=8192/v=8"). A hit costs one hash lookup; on a miss
 * build() makes the source, which is compiled (ck_module_load: module cache, CK_DUMP) and
 * remembered under key. */
ck_status ck_op_kernel(ck_context *ctx, const char *key, const char *kernel_name,
                       ck_op_build_fn build, void *user, ck_kernel **kernel);

/* Launch on the context's stream: grid (gx, gy, gz) of `block` threads with `smem` bytes of
 * dynamic shared memory. */
ck_status ck_op_launch(ck_context *ctx, ck_kernel *kernel, unsigned gx, unsigned gy, unsigned gz,
                       unsigned block, size_t smem, void *const *args, const size_t *sizes,
                       int count);

/* Scratch device memory of at least `bytes`, valid until the next call on this context (it is
 * reused: work queued on the context's stream may use it in order). */
ck_status ck_op_workspace(ck_context *ctx, size_t bytes, void **ptr);

/* Device memory of at least `bytes` that is zero when a kernel starts: the kernels that use it
 * (ticket counters: the last block of a group to arrive combines the group's results) leave it
 * zero again. Zeroed once on the context's stream when it is (re)allocated. */
ck_status ck_op_counters(ck_context *ctx, size_t bytes, void **ptr);

/* The tuned instance of (op, problem) on the context's device: the one ck_op_force_instance set
 * for op (*forced = 1), else the tuning table's entry (ck/tuning.h; the table is read once per
 * context, the device key is "<name>/<target>"). Returns 1 with the instance's text in buf, 0
 * when there is none. */
int ck_op_tuned(ck_context *ctx, const char *op, const char *problem, char *buf, size_t size,
                int *forced);

/* Every later call of op on ctx uses `instance` (NULL: none) instead of the table: for
 * `ck tune`, which times the candidates. Also forgets the table read so far, so that entries
 * stored since are seen. */
ck_status ck_op_force_instance(ck_context *ctx, const char *op, const char *instance);

/* The tuning table's device key of the context's device ("NVIDIA H100 80GB HBM3/sm_90a"). */
void ck_op_tuning_device(const ck_context *ctx, char *buf, size_t size);

/* "bf16[4, 5] strides [5, 1]" for messages (static per-thread buffer, one of 4 rotating). */
const char *ck_op_tensor_str(const ck_tensor *t);

#endif
