/*
 * Layernorm / RMSNorm / smooth-quant forward over rows of NORM_N elements (device C).
 *
 * The generated source (src/ops/norm/norm.c) defines, before including this file:
 *   NORM_KIND   0 layernorm, 1 RMSNorm, 2 none (standalone smooth/row-wise quantization)
 *   NORM_N, NORM_VEC (elements per vector access; divides NORM_N), NORM_NV = NORM_N / NORM_VEC
 *   NORM_G      threads per row (1..32 a power of two: several rows per block; else the block)
 *   NORM_BLOCK  threads per block; NORM_RPB = NORM_BLOCK / NORM_G rows per block and step
 *   NORM_ITERS  vectors per thread and row = ceil(NORM_NV / NORM_G)
 *   NORM_CACHE  how many of them stay in registers (the rest is re-read, from L2, when a later
 *               pass needs it)
 *   NORM_XT, NORM_YT, NORM_GT     dtypes of x, y (f32/f16/bf16, or i8/fp8e4m3 quantized), gamma
 *   NORM_BT, NORM_RT, NORM_OT, NORM_ST   beta, residual, residual output, smooth (-1: absent)
 *   NORM_MEAN, NORM_RSTD          1 to write the row's mean / rstd (f32)
 *   NORM_QMAX   largest code of the quantized y (127 or 448); 0: not quantized
 *
 * Each row: a = x (+ residual), written to residual_out when asked; Welford statistics
 * (layernorm) or the mean of squares (RMSNorm), combined across threads with Chan's formula;
 * y = (a - mean) * rstd * gamma + beta. Quantized: y *= smooth, scale = max|y| / QMAX (written
 * to yscale), code = round(y / scale).
 */
#include "ops/norm/norm_common_kernel.h"

CK_DEVICE void norm_fwd_get(const char *x, long long sx, const char *r, long long sr, long long row,
                            int v, float *a)
{
    norm_load(x + (row * sx + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_XT), NORM_XT, a);
#if NORM_RT >= 0
    float b[NORM_VEC];
    norm_load(r + (row * sr + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_RT), NORM_RT, b);
    for (int k = 0; k < NORM_VEC; ++k)
        a[k] += b[k];
#else
    (void)r;
    (void)sr;
#endif
}

/* y (before quantization) of vector v from a */
CK_DEVICE void norm_fwd_y(const char *gamma, const char *beta, const char *smooth, int v, float mean,
                          float rstd, float *a)
{
#if NORM_KIND != 2
    float g[NORM_VEC];
    norm_load(gamma + (long long)v * NORM_VEC * NORM_ESIZE(NORM_GT), NORM_GT, g);
#if NORM_BT >= 0
    float b[NORM_VEC];
    norm_load(beta + (long long)v * NORM_VEC * NORM_ESIZE(NORM_BT), NORM_BT, b);
#endif
    for (int k = 0; k < NORM_VEC; ++k) {
#if NORM_KIND == 0
        float t = (a[k] - mean) * rstd * g[k];
#else
        float t = a[k] * rstd * g[k];
#endif
#if NORM_BT >= 0
        t += b[k];
#endif
        a[k] = t;
    }
#else
    (void)gamma;
    (void)mean;
    (void)rstd;
#endif
    (void)beta;
#if NORM_ST >= 0
    float s[NORM_VEC];
    norm_load(smooth + (long long)v * NORM_VEC * NORM_ESIZE(NORM_ST), NORM_ST, s);
    for (int k = 0; k < NORM_VEC; ++k)
        a[k] *= s[k];
#else
    (void)smooth;
#endif
}

/* The body of kernel ck_norm_fwd (the generated source declares the kernel itself, with these
 * parameters, and calls this). */
CK_DEVICE void ck_norm_fwd_body(
    const void *x, long long sx, const void *residual, long long sr, void *y, long long sy,
    void *resout, long long so, const void *gamma, const void *beta, const void *smooth,
    float *yscale, float *mean_out, float *rstd_out, long long rows, float eps)
{
    CK_SHARED_ARRAY(float, red, 2 * 3 * 32);
    const char *xc = (const char *)x, *rc = (const char *)residual;
    const char *gc = (const char *)gamma, *bc = (const char *)beta, *scc = (const char *)smooth;
    int lane = (int)(ck_thread_idx_x() % NORM_G);
    long long group = (long long)(ck_thread_idx_x() / NORM_G);
    int parity = 0;
    (void)resout;
    (void)so;
    (void)yscale;
    (void)mean_out;
    (void)rstd_out;
    (void)eps;
    for (long long base = (long long)ck_block_idx_x() * NORM_RPB; base < rows;
         base += (long long)ck_grid_dim_x() * NORM_RPB) {
        long long row = base + group;
        int valid = row < rows;
        float cache[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC];
        /* pass 1: read, residual output, statistics */
#if NORM_KIND == 0
        norm_welford st = {0.0f, 0.0f, 0.0f};
#else
        float ss = 0.0f;
#endif
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            if (valid && v < NORM_NV) {
                float a[NORM_VEC];
                norm_fwd_get(xc, sx, rc, sr, row, v, a);
#if NORM_OT >= 0
                norm_store((char *)resout + (row * so + (long long)v * NORM_VEC) *
                                                NORM_ESIZE(NORM_OT),
                           NORM_OT, a);
#endif
                if (it < NORM_CACHE)
                    for (int k = 0; k < NORM_VEC; ++k)
                        cache[it < NORM_CACHE ? it : 0][k] = a[k];
#if NORM_KIND == 0
                st = norm_welford_add_vec(st, a);
#elif NORM_KIND == 1
                for (int k = 0; k < NORM_VEC; ++k)
                    ss = fmaf(a[k], a[k], ss);
#endif
            }
        }
        float mean = 0.0f, rstd = 1.0f;
#if NORM_KIND == 0
        st = norm_reduce_welford(st, red + parity * 96);
        parity ^= 1;
        mean = st.mean;
        rstd = 1.0f / sqrtf(st.m2 * (1.0f / (float)NORM_N) + eps);
#elif NORM_KIND == 1
        ss = norm_reduce_f32(ss, 0, red + parity * 96);
        parity ^= 1;
        rstd = 1.0f / sqrtf(ss * (1.0f / (float)NORM_N) + eps);
#endif
        if (valid && lane == 0) {
#if NORM_MEAN
            mean_out[row] = mean;
#endif
#if NORM_RSTD
            rstd_out[row] = rstd;
#endif
        }
#if NORM_QMAX > 0
        /* pass 2: the row's largest |y| */
        float amax = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            if (valid && v < NORM_NV) {
                float a[NORM_VEC];
                if (it < NORM_CACHE)
                    for (int k = 0; k < NORM_VEC; ++k)
                        a[k] = cache[it < NORM_CACHE ? it : 0][k];
                else
                    norm_fwd_get(xc, sx, rc, sr, row, v, a);
                norm_fwd_y(gc, bc, scc, v, mean, rstd, a);
                for (int k = 0; k < NORM_VEC; ++k)
                    amax = norm_nanmax(amax, fabsf(a[k]));
            }
        }
        amax = norm_reduce_f32(amax, 1, red + parity * 96);
        parity ^= 1;
        float scale = amax / (float)NORM_QMAX;
        if (valid && lane == 0)
            yscale[row] = scale;
#endif
        /* final pass: y */
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            if (valid && v < NORM_NV) {
                float a[NORM_VEC];
                if (it < NORM_CACHE)
                    for (int k = 0; k < NORM_VEC; ++k)
                        a[k] = cache[it < NORM_CACHE ? it : 0][k];
                else
                    norm_fwd_get(xc, sx, rc, sr, row, v, a);
                norm_fwd_y(gc, bc, scc, v, mean, rstd, a);
#if NORM_QMAX > 0
                for (int k = 0; k < NORM_VEC; ++k) {
                    float q = scale > 0.0f ? a[k] / scale : (scale == 0.0f ? 0.0f : scale);
#if NORM_YT == CK_NC_I8
                    q = rintf(q);
#endif
                    a[k] = q;
                }
#endif
                norm_store((char *)y + (row * sy + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_YT),
                           NORM_YT, a);
            }
        }
    }
}
