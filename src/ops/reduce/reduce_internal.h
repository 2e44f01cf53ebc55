/* Internal declarations of src/ops/reduce (not installed). */
#ifndef CK_SRC_OPS_REDUCE_INTERNAL_H
#define CK_SRC_OPS_REDUCE_INTERNAL_H

#include <stdint.h>

#include "ck/reduce.h"

/* The instance ck_reduce would run (for tests, `ck prof` and docs): kind 0 row (vb > 0:
 * contiguous with vb-byte vectors, 0: strided), 1 column; threads per output group (row),
 * column threads x reduced threads (column), parts > 1: split with a second combine kernel. */
typedef struct ck_reduce_plan_info {
    int kind, vb, g, rpb, ct, rt, kd, rd;
    long long parts, rows, n;
} ck_reduce_plan_info;

/* The checks and instance choice of ck_reduce without running it. */
ck_status ck_reduce_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                         ck_reduce_plan_info *info);

/* The generated source ck_reduce would compile for this problem: which 0 the main kernel
 * (rd_row_k or rd_col_k), 1 the combine kernel of split instances (CK_ERROR_NOT_FOUND when the
 * instance does not split). *source is malloc'd (caller frees). For NVRTC compile tests. */
ck_status ck_reduce_source(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                           int naxes, const ck_tensor *y, const ck_reduce_options *opt, int which,
                           char **source);

/* CPU reference in double precision. x->data is a host copy laid out as x's description says.
 * For each output, in the row-major order of the kept axes of x: val (after post-ops; the
 * value op's result), idx (argmax/argmin: flat index of the reduced axes in x's axis order) and
 * mag (sum of |term| after the pre-op and squaring, passed through the same post-ops, for error
 * bounds; |value| for max/min). Arrays hold ck_tensor_numel(x) / n entries. Checks as
 * ck_reduce except y (no y here). */
ck_status ck_reduce_reference(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                              const ck_reduce_options *opt, double *val, int64_t *idx,
                              double *mag);

#endif
