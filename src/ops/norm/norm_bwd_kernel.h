/*
 * Layernorm / RMSNorm backward over rows of NORM_N elements (device C).
 *
 * Constants as norm_fwd_kernel.h (NORM_KIND 0/1, NORM_N, NORM_VEC, NORM_NV, NORM_G, NORM_BLOCK,
 * NORM_RPB, NORM_ITERS, NORM_CACHE), plus NORM_DYT, NORM_XT, NORM_GT, NORM_DXT (dtypes),
 * NORM_DGT, NORM_DBT (dgamma / dbeta dtypes, -1 when not wanted).
 *
 * Per row: xhat = (x - mean) * rstd (RMSNorm: x * rstd), g = dy * gamma,
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))     (RMSNorm: without mean(g)).
 * dgamma = sum over rows of dy * xhat, dbeta = sum of dy: each row group of each block adds
 * its rows (a fixed set: rows group, group + RPB*grid, ...) into registers and writes one
 * partial row to `part` ([P][N] for dgamma, then [P][N] for dbeta, P = grid * RPB); the
 * kernel ck_norm_bwd_combine then sums the P partial rows of each column in order. The result
 * depends only on the grid, never on scheduling: bit-identical from run to run.
 */
#include "ops/norm/norm_common_kernel.h"

CK_DEVICE void ck_norm_bwd_body(const void *dy, long long sdy, const void *x, long long sx,
                                const void *gamma, const float *mean, const float *rstd,
                                void *dx, long long sdx, float *part, long long rows)
{
    CK_SHARED_ARRAY(float, red, 2 * 3 * 32);
    const char *dyc = (const char *)dy, *xc = (const char *)x, *gc = (const char *)gamma;
    int lane = (int)(ck_thread_idx_x() % NORM_G);
    long long group = (long long)(ck_thread_idx_x() / NORM_G);
    int parity = 0;
#if NORM_DGT >= 0 || NORM_DBT >= 0
    float accg[NORM_ITERS][NORM_VEC], accb[NORM_ITERS][NORM_VEC];
    for (int it = 0; it < NORM_ITERS; ++it)
        for (int k = 0; k < NORM_VEC; ++k) {
            accg[it][k] = 0.0f;
            accb[it][k] = 0.0f;
        }
#else
    (void)part;
#endif
    (void)mean;
    for (long long base = (long long)ck_block_idx_x() * NORM_RPB; base < rows;
         base += (long long)ck_grid_dim_x() * NORM_RPB) {
        long long row = base + group;
        int valid = row < rows;
        float mu = 0.0f, rs = 0.0f;
        if (valid) {
#if NORM_KIND == 0
            mu = mean[row];
#endif
            rs = rstd[row];
        }
        float cx[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC];
        float cdy[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC];
        float s1 = 0.0f, s2 = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            if (valid && v < NORM_NV) {
                float a[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
                long long col = (long long)v * NORM_VEC;
                norm_load(xc + (row * sx + col) * NORM_ESIZE(NORM_XT), NORM_XT, a);
                norm_load(dyc + (row * sdy + col) * NORM_ESIZE(NORM_DYT), NORM_DYT, d);
                norm_load(gc + col * NORM_ESIZE(NORM_GT), NORM_GT, g);
                for (int k = 0; k < NORM_VEC; ++k) {
                    float xh = (a[k] - mu) * rs, gd = d[k] * g[k];
                    s1 += gd;
                    s2 = fmaf(gd, xh, s2);
#if NORM_DGT >= 0 || NORM_DBT >= 0
                    accg[it][k] = fmaf(d[k], xh, accg[it][k]);
                    accb[it][k] += d[k];
#endif
                }
                if (it < NORM_CACHE)
                    for (int k = 0; k < NORM_VEC; ++k) {
                        cx[it < NORM_CACHE ? it : 0][k] = a[k];
                        cdy[it < NORM_CACHE ? it : 0][k] = d[k];
                    }
            }
        }
#if NORM_KIND == 0
        s1 = norm_reduce_f32(s1, CK_RED_SUM, red + parity * 96);
        parity ^= 1;
#endif
        s2 = norm_reduce_f32(s2, CK_RED_SUM, red + parity * 96);
        parity ^= 1;
        float m1 = s1 * (1.0f / (float)NORM_N), m2 = s2 * (1.0f / (float)NORM_N);
        (void)m1;
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            if (valid && v < NORM_NV) {
                float a[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
                long long col = (long long)v * NORM_VEC;
                if (it < NORM_CACHE) {
                    for (int k = 0; k < NORM_VEC; ++k) {
                        a[k] = cx[it < NORM_CACHE ? it : 0][k];
                        d[k] = cdy[it < NORM_CACHE ? it : 0][k];
                    }
                } else {
                    norm_load(xc + (row * sx + col) * NORM_ESIZE(NORM_XT), NORM_XT, a);
                    norm_load(dyc + (row * sdy + col) * NORM_ESIZE(NORM_DYT), NORM_DYT, d);
                }
                norm_load(gc + col * NORM_ESIZE(NORM_GT), NORM_GT, g);
                for (int k = 0; k < NORM_VEC; ++k) {
                    float xh = (a[k] - mu) * rs, gd = d[k] * g[k];
#if NORM_KIND == 0
                    a[k] = rs * (gd - m1 - xh * m2);
#else
                    a[k] = rs * (gd - xh * m2);
#endif
                }
                norm_store((char *)dx + (row * sdx + col) * NORM_ESIZE(NORM_DXT), NORM_DXT, a);
            }
        }
    }
#if NORM_DGT >= 0 || NORM_DBT >= 0
    long long p = (long long)ck_block_idx_x() * NORM_RPB + group;
    long long np = (long long)ck_grid_dim_x() * NORM_RPB;
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (v < NORM_NV) {
            long long col = (long long)v * NORM_VEC;
            for (int k = 0; k < NORM_VEC; ++k) {
                part[p * NORM_N + col + k] = accg[it][k];
                part[(np + p) * NORM_N + col + k] = accb[it][k];
            }
        }
    }
#endif
}

/* dgamma[c] = sum_p part[p][c], dbeta[c] = sum_p part[P + p][c], p in increasing order. */
CK_DEVICE void ck_norm_bwd_combine_body(const float *part, long long np, void *dgamma,
                                        void *dbeta)
{
    long long c = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
    if (c >= NORM_N)
        return;
    float sg = 0.0f, sb = 0.0f;
    for (long long p = 0; p < np; ++p) {
        sg += part[p * NORM_N + c];
        sb += part[(np + p) * NORM_N + c];
    }
#if NORM_DGT >= 0
    {
        uint32_t code = ck_f32_to_code(NORM_DGT, sg);
        if (NORM_ESIZE(NORM_DGT) == 4)
            ((uint32_t *)dgamma)[c] = code;
        else
            ((uint16_t *)dgamma)[c] = (uint16_t)code;
    }
#else
    (void)dgamma;
#endif
#if NORM_DBT >= 0
    {
        uint32_t code = ck_f32_to_code(NORM_DBT, sb);
        if (NORM_ESIZE(NORM_DBT) == 4)
            ((uint32_t *)dbeta)[c] = code;
        else
            ((uint16_t *)dbeta)[c] = (uint16_t)code;
    }
#else
    (void)dbeta;
    (void)sb;
#endif
}
