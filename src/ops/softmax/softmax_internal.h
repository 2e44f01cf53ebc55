/*
 * Internal helpers of the softmax family (src/ops/softmax): tensor checks shared by softmax and
 * top-k softmax, and the double-precision CPU references used by the tests and `ck prof`.
 */
#ifndef CK_SRC_OPS_SOFTMAX_INTERNAL_H
#define CK_SRC_OPS_SOFTMAX_INTERNAL_H

#include <stdint.h>

#include "ck/softmax.h"

/* The softmax family's index of a ck_dtype (0 f32, 1 f16, 2 bf16), -1 for others. */
int ck_smx_code(ck_dtype dt);

/* The ck_dtype value of index `code` (the type code the device sources use: CK_NC_*). */
int ck_smx_dtype_code(int code);

/* Merge the leading dimensions of t (all but the last) into rows with one row stride; the last
 * dimension must be contiguous. Returns 0 (with a sentence recorded naming op and name) when
 * they do not merge. */
int ck_smx_rows(const char *op, const char *name, const ck_tensor *t, int64_t *rows,
                int64_t *row_stride, ck_status *st);

/* Reference softmax of one row of already transformed values t (scale * x + mask, -inf where
 * masked), in double, with PyTorch's special values: NaN or +inf anywhere -> all NaN; all -inf
 * -> all NaN. */
void ck_softmax_ref_row(const double *t, int64_t n, int log, double *out);

/* Reference top-k of one row of logits: order by logit descending, NaN first, ties by lower
 * index; weights are softmax probabilities (double), renormalized over the k when asked. */
void ck_topk_softmax_ref_row(const double *logits, int64_t n, int k, int renormalize, int32_t *idx,
                             double *w);

/* The kernel source ck_softmax generates for an sm_90 GPU (for the NVRTC compile test): rows of
 * n elements, type codes ti/to/tm, mask bits (1 additive, 2 causal), aligned 16-byte access or
 * not; variant as CK_SOFTMAX_VARIANT (NULL: automatic). *kind: 100 * (0 register, 1 online,
 * 2 staged) + blocks per cluster. */
ck_status ck_smx_source(int64_t rows, int64_t n, int ti, int to, int tm, int maskbits, int logsm,
                        int aligned, const char *variant, char **source, int *kind);

/* The source of ck_topk_softmax's kernel (type codes, experts, k, renormalize). */
ck_status ck_tk_source(int ti, int tw, int experts, int k, int renormalize, char **source);

#endif
