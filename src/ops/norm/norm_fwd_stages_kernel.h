/*
 * Stages shared by the layernorm / RMSNorm / smooth-quant forward pipelines
 * (norm_fwd_kernel.h: the row in registers; norm_fwd_looped_kernel.h: long rows, streamed):
 * one vector of a row read as x (+ residual), and its y before quantization. The constants are
 * those norm_fwd_kernel.h documents; branches on them are constant conditions.
 */
#ifndef CK_NORM_FWD_STAGES_KERNEL_H
#define CK_NORM_FWD_STAGES_KERNEL_H
#include "ops/norm/norm_common_kernel.h"

/* a = x (+ residual) of vector v of the row */
CK_DEVICE void norm_fwd_get(const char *x, long long sx, const char *r, long long sr, long long row,
                            int v, float *a)
{
    norm_load(x + (row * sx + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_XT), NORM_XT, a);
    if (NORM_RT >= 0) {
        float b[NORM_VEC];
        norm_load(r + (row * sr + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_RT), NORM_RT, b);
        for (int k = 0; k < NORM_VEC; ++k)
            a[k] += b[k];
    }
}

/* y (before quantization) of vector v from a: normalized (layernorm, RMSNorm), times gamma,
 * plus beta, times smooth (where they exist) */
CK_DEVICE void norm_fwd_y(const char *gamma, const char *beta, const char *smooth, int v,
                          float mean, float rstd, float *a)
{
    if (NORM_KIND != 2) {
        float g[NORM_VEC], b[NORM_VEC];
        norm_load(gamma + (long long)v * NORM_VEC * NORM_ESIZE(NORM_GT), NORM_GT, g);
        if (NORM_BT >= 0)
            norm_load(beta + (long long)v * NORM_VEC * NORM_ESIZE(NORM_BT), NORM_BT, b);
        for (int k = 0; k < NORM_VEC; ++k) {
            float t = NORM_KIND == 0 ? (a[k] - mean) * rstd * g[k] : a[k] * rstd * g[k];
            if (NORM_BT >= 0)
                t += b[k];
            a[k] = t;
        }
    }
    if (NORM_ST >= 0) {
        float s[NORM_VEC];
        norm_load(smooth + (long long)v * NORM_VEC * NORM_ESIZE(NORM_ST), NORM_ST, s);
        for (int k = 0; k < NORM_VEC; ++k)
            a[k] *= s[k];
    }
}

#endif
