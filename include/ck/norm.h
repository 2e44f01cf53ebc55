/*
 * ck/norm.h - layernorm2d and rmsnorm2d, forward and backward, with fused residual add and
 * fused per-row dynamic quantization (CK's add_rmsnorm2d_rdquant), and standalone smooth /
 * row-wise quantization (CK's smoothquant). docs/ops-norm.md describes algorithms, instances and
 * limits.
 *
 * Shapes: x is [rows, N] - any rank >= 1 viewed as rows x last dimension (the leading
 * dimensions must collapse into one row stride; the last dimension is contiguous; the row
 * stride may exceed N). Every row tensor (x, residual, y, residual_out, dy, dx) has x's shape
 * and its own row stride. gamma, beta, smooth are [N] contiguous vectors; mean, rstd, y_scale
 * are f32 vectors of `rows` elements (contiguous, any rank whose element count is rows).
 * Types: x, residual, residual_out, y, dy, dx: f32, f16 or bf16 (each may differ); gamma,
 * beta, smooth: f32, f16 or bf16. Statistics are computed in f32. Hidden sizes 1 to
 * CK_NORM_MAX_N forward, 1 to CK_NORM_BWD_MAX_N backward; zero rows is a no-op. Outputs must not overlap inputs or each other.
 */
#ifndef CK_NORM_H
#define CK_NORM_H

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_NORM_MAX_N = 1048576, CK_NORM_BWD_MAX_N = 65536 };

typedef enum ck_norm_kind {
    CK_NORM_LAYERNORM = 0, /* y = (a - mean) / sqrt(var + eps) * gamma + beta (biased var) */
    CK_NORM_RMSNORM = 1,   /* y = a / sqrt(mean(a^2) + eps) * gamma */
    CK_NORM_NONE = 2       /* y = a (only with quantization: standalone smooth-quant) */
} ck_norm_kind;

/* Forward. a = x (+ residual). Optional pointers may be NULL.
 *   gamma            required for LAYERNORM/RMSNORM, NULL for NONE
 *   beta             LAYERNORM only, optional (NULL: no bias)
 *   residual         optional; residual_out (optional, needs residual) receives a = x + residual
 *   y                required: f32/f16/bf16, or i8 / fp8e4m3 for quantized output; then
 *                    y_scale (f32 [rows]) is required and receives scale = max|y'| / qmax
 *                    (qmax 127 or 448), y = round(y' / scale) with y' = y_norm * smooth
 *   smooth           optional (quantized output only): per-column factor before quantization
 *   mean, rstd       optional f32 [rows] outputs (mean: LAYERNORM only) for the backward pass */
typedef struct ck_norm_forward_desc {
    ck_norm_kind kind;
    float epsilon;
    const ck_tensor *x;
    const ck_tensor *gamma;
    const ck_tensor *beta;
    const ck_tensor *residual;
    const ck_tensor *smooth;
    ck_tensor *y;
    ck_tensor *y_scale;
    ck_tensor *residual_out;
    ck_tensor *mean;
    ck_tensor *rstd;
} ck_norm_forward_desc;

ck_status ck_norm_forward(ck_context *ctx, const ck_norm_forward_desc *desc);

/* Backward from the forward's saved statistics (mean for LAYERNORM, rstd for both).
 * x is the forward's normalized input (x + residual when the residual was fused: dx is then
 * the gradient of both). dx required; dgamma, dbeta (LAYERNORM) optional, gamma's shape, any
 * of f32/f16/bf16. dgamma/dbeta are deterministic: per-block partial sums in the context's
 * workspace, combined in a fixed order (bit-identical from run to run on one device). */
typedef struct ck_norm_backward_desc {
    ck_norm_kind kind;
    const ck_tensor *dy;
    const ck_tensor *x;
    const ck_tensor *gamma;
    const ck_tensor *mean;
    const ck_tensor *rstd;
    ck_tensor *dx;
    ck_tensor *dgamma;
    ck_tensor *dbeta;
} ck_norm_backward_desc;

ck_status ck_norm_backward(ck_context *ctx, const ck_norm_backward_desc *desc);

/* Shorthands for the plain cases. beta may be NULL. */
ck_status ck_layernorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                                 const ck_tensor *beta, float epsilon, ck_tensor *y);
ck_status ck_rmsnorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                               float epsilon, ck_tensor *y);
/* Row-wise dynamic quantization of x (times smooth when not NULL) into y (i8 or fp8e4m3) with
 * y_scale[rows]. */
ck_status ck_smoothquant(ck_context *ctx, const ck_tensor *x, const ck_tensor *smooth,
                         ck_tensor *y, ck_tensor *y_scale);

#ifdef __cplusplus
}
#endif
#endif
