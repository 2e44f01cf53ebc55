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
 * Branches on the constants are constant conditions the compiler folds (no preprocessor forest).
 */
#include "ops/norm/norm_common_kernel.h"

#define NORM_SUMS (NORM_DGT >= 0 || NORM_DBT >= 0) /* dgamma or dbeta asked */
#define NORM_BSLOTS (NORM_CACHE > 0 ? NORM_CACHE : 1)

/* The thread's cached x and dy of its row. */
typedef struct norm_bwd_cache {
    float cx[NORM_BSLOTS][NORM_VEC], cdy[NORM_BSLOTS][NORM_VEC];
} norm_bwd_cache;

/* The thread's running dgamma / dbeta columns (over its rows). */
typedef struct norm_bwd_acc {
    float accg[NORM_SUMS ? NORM_ITERS : 1][NORM_VEC], accb[NORM_SUMS ? NORM_ITERS : 1][NORM_VEC];
} norm_bwd_acc;

/* stage sums: s1 = sum dy * gamma, s2 = sum dy * gamma * xhat over the thread's part of the
 * row (caching x and dy), dgamma / dbeta columns accumulated */
CK_DEVICE void norm_bwd_sums(const ck_norm_bwd_kargs *a, long long row, int valid, int lane,
                             float mu, float rs, norm_bwd_cache *c, norm_bwd_acc *r, float *s1,
                             float *s2)
{
    *s1 = 0.0f;
    *s2 = 0.0f;
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (valid && v < NORM_NV) {
            float x[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
            long long col = (long long)v * NORM_VEC;
            norm_load((const char *)a->x + (row * a->sx + col) * NORM_ESIZE(NORM_XT), NORM_XT, x);
            norm_load((const char *)a->dy + (row * a->sdy + col) * NORM_ESIZE(NORM_DYT),
                      NORM_DYT, d);
            norm_load((const char *)a->gamma + col * NORM_ESIZE(NORM_GT), NORM_GT, g);
            for (int k = 0; k < NORM_VEC; ++k) {
                float xh = (x[k] - mu) * rs, gd = d[k] * g[k];
                *s1 += gd;
                *s2 = fmaf(gd, xh, *s2);
                if (NORM_SUMS) {
                    r->accg[NORM_SUMS ? it : 0][k] = fmaf(d[k], xh, r->accg[NORM_SUMS ? it : 0][k]);
                    r->accb[NORM_SUMS ? it : 0][k] += d[k];
                }
            }
            if (it < NORM_CACHE)
                for (int k = 0; k < NORM_VEC; ++k) {
                    c->cx[it < NORM_CACHE ? it : 0][k] = x[k];
                    c->cdy[it < NORM_CACHE ? it : 0][k] = d[k];
                }
        }
    }
}

/* stage dx = rstd * (dy * gamma - mean(g) - xhat * mean(g * xhat)) (RMSNorm: no mean(g)) */
CK_DEVICE void norm_bwd_dx(const ck_norm_bwd_kargs *a, long long row, int valid, int lane,
                           float mu, float rs, const norm_bwd_cache *c, float m1, float m2)
{
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (valid && v < NORM_NV) {
            float x[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
            long long col = (long long)v * NORM_VEC;
            if (it < NORM_CACHE) {
                for (int k = 0; k < NORM_VEC; ++k) {
                    x[k] = c->cx[it < NORM_CACHE ? it : 0][k];
                    d[k] = c->cdy[it < NORM_CACHE ? it : 0][k];
                }
            } else {
                norm_load((const char *)a->x + (row * a->sx + col) * NORM_ESIZE(NORM_XT), NORM_XT,
                          x);
                norm_load((const char *)a->dy + (row * a->sdy + col) * NORM_ESIZE(NORM_DYT),
                          NORM_DYT, d);
            }
            norm_load((const char *)a->gamma + col * NORM_ESIZE(NORM_GT), NORM_GT, g);
            for (int k = 0; k < NORM_VEC; ++k) {
                float xh = (x[k] - mu) * rs, gd = d[k] * g[k];
                x[k] = NORM_KIND == 0 ? rs * (gd - m1 - xh * m2) : rs * (gd - xh * m2);
            }
            norm_store((char *)a->dx + (row * a->sdx + col) * NORM_ESIZE(NORM_DXT), NORM_DXT, x);
        }
    }
}

/* stage partial sums: this row group's dgamma / dbeta columns as partial row p of part */
CK_DEVICE void norm_bwd_write_part(float *part, const norm_bwd_acc *r, int lane)
{
    long long p = (long long)ck_block_idx_x() * NORM_RPB + (long long)(ck_thread_idx_x() / NORM_G);
    long long np = (long long)ck_grid_dim_x() * NORM_RPB;
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (v < NORM_NV) {
            long long col = (long long)v * NORM_VEC;
            for (int k = 0; k < NORM_VEC; ++k) {
                part[p * NORM_N + col + k] = r->accg[NORM_SUMS ? it : 0][k];
                part[(np + p) * NORM_N + col + k] = r->accb[NORM_SUMS ? it : 0][k];
            }
        }
    }
}

CK_DEVICE void ck_norm_bwd_body(ck_norm_bwd_kargs a)
{
    CK_SHARED_ARRAY(float, red, 2 * 3 * 32);
    int lane = (int)(ck_thread_idx_x() % NORM_G);
    long long group = (long long)(ck_thread_idx_x() / NORM_G);
    int parity = 0;
    norm_bwd_acc r;
    if (NORM_SUMS)
        for (int it = 0; it < NORM_ITERS; ++it)
            for (int k = 0; k < NORM_VEC; ++k) {
                r.accg[NORM_SUMS ? it : 0][k] = 0.0f;
                r.accb[NORM_SUMS ? it : 0][k] = 0.0f;
            }
    for (long long base = (long long)ck_block_idx_x() * NORM_RPB; base < a.rows;
         base += (long long)ck_grid_dim_x() * NORM_RPB) {
        long long row = base + group;
        int valid = row < a.rows;
        float mu = 0.0f, rs = 0.0f;
        if (valid) {
            if (NORM_KIND == 0)
                mu = a.mean[row];
            rs = a.rstd[row];
        }
        norm_bwd_cache c;
        float s1, s2;
        norm_bwd_sums(&a, row, valid, lane, mu, rs, &c, &r, &s1, &s2);
        if (NORM_KIND == 0) {
            s1 = norm_reduce_f32(s1, CK_RED_SUM, red + parity * 96);
            parity ^= 1;
        }
        s2 = norm_reduce_f32(s2, CK_RED_SUM, red + parity * 96);
        parity ^= 1;
        norm_bwd_dx(&a, row, valid, lane, mu, rs, &c, s1 * (1.0f / (float)NORM_N),
                    s2 * (1.0f / (float)NORM_N));
    }
    if (NORM_SUMS)
        norm_bwd_write_part(a.part, &r, lane);
}

/* element c of a dgamma / dbeta vector of type t (f32 or 16-bit) */
CK_DEVICE void norm_bwd_put(void *p, int t, long long c, float v)
{
    uint32_t code = ck_f32_to_code(t, v);
    if (ck_dtype_size(t) == 4)
        ((uint32_t *)p)[c] = code;
    else
        ((uint16_t *)p)[c] = (uint16_t)code;
}

/* dgamma[c] = sum_p part[p][c], dbeta[c] = sum_p part[P + p][c], p in increasing order. */
CK_DEVICE void ck_norm_bwd_combine_body(ck_norm_combine_kargs a)
{
    long long c = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
    if (c >= NORM_N)
        return;
    float sg = 0.0f, sb = 0.0f;
    for (long long p = 0; p < a.np; ++p) {
        sg += a.part[p * NORM_N + c];
        sb += a.part[(a.np + p) * NORM_N + c];
    }
    if (NORM_DGT >= 0)
        norm_bwd_put(a.dgamma, NORM_DGT, c, sg);
    if (NORM_DBT >= 0)
        norm_bwd_put(a.dbeta, NORM_DBT, c, sb);
}
