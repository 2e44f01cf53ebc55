/*
 * Layernorm / RMSNorm backward over rows of NORM_N elements (device C).
 *
 * Constants as norm_fwd_kernel.h (NORM_KIND 0/1, NORM_N, NORM_VEC, NORM_NV, NORM_G, NORM_BLOCK,
 * NORM_RPB, NORM_ITERS, NORM_CACHE), plus NORM_DYT, NORM_XT, NORM_GT, NORM_DXT (dtypes),
 * NORM_DGT, NORM_DBT (dgamma / dbeta dtypes, -1 when not wanted), NORM_RING (stages of the
 * shared-memory ring, 0: none) and NORM_CSLICES (slices of the partial rows per combine block).
 *
 * Per row: xhat = (x - mean) * rstd (RMSNorm: x * rstd), g = dy * gamma,
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))     (RMSNorm: without mean(g)).
 * dgamma = sum over rows of dy * xhat, dbeta = sum of dy: each row group of each block adds
 * its rows (a fixed set: rows group, group + RPB*grid, ...) into registers and writes one
 * partial row to `part` ([P][N] for dgamma, then [P][N] for dbeta, P = grid * RPB); the
 * kernel ck_norm_bwd_combine then sums the P partial rows of each column in order. The result
 * depends only on the grid, never on scheduling: bit-identical from run to run.
 * Ring (NORM_RING = S >= 2): x and dy of the block's next S - 1 rows are copied into shared
 * memory by cp.async (each thread copies and later reads only its own vectors, so the ring needs
 * no barrier) while the current row is reduced: S - 1 rows of loads in flight per block instead
 * of none during the row's reductions. Without it the row's vectors are cached in registers
 * (NORM_CACHE of them; the rest re-read).
 * Combine: NORM_CSLICES slices of a block each sum every NORM_CSLICES-th partial row of a column
 * in increasing order, then the slices' sums are added in slice order (a fixed tree).
 * Branches on the constants are constant conditions the compiler folds (no preprocessor forest).
 */
#include "ops/norm/norm_common_kernel.h"

#define NORM_SUMS   (NORM_DGT >= 0 || NORM_DBT >= 0) /* dgamma or dbeta asked */
#define NORM_BSLOTS (NORM_CACHE > 0 ? NORM_CACHE : 1)
#define NORM_XVB    (NORM_VEC * NORM_ESIZE(NORM_XT))  /* bytes of a vector of x */
#define NORM_DVB    (NORM_VEC * NORM_ESIZE(NORM_DYT)) /* and of dy */
/* one stage of the ring: x vectors [ITERS][BLOCK], then dy vectors [ITERS][BLOCK] */
#define NORM_STAGE  (NORM_ITERS * NORM_BLOCK * (NORM_XVB + NORM_DVB))
#define NORM_RSLOTS (NORM_RING > 0 ? NORM_RING : 1)

/* The thread's cached x and dy of its row. */
typedef struct norm_bwd_cache {
    float cx[NORM_BSLOTS][NORM_VEC], cdy[NORM_BSLOTS][NORM_VEC];
} norm_bwd_cache;

/* bytes (a multiple of 4; 2 copied at once) from global g to shared s, asynchronously */
CK_DEVICE void norm_copy_async(unsigned char *s, const char *g, int bytes)
{
    if (bytes % 16 == 0)
        for (int k = 0; k < bytes / 16; ++k)
            ck_cp_async_16(s + 16 * k, g + 16 * k);
    else if (bytes % 8 == 0)
        ck_cp_async_8(s, g);
    else if (bytes % 4 == 0)
        ck_cp_async_4(s, g);
    else
        *(uint16_t *)s = *(const uint16_t *)g;
}

/* stage fetch: the thread's x and dy vectors of `row` into stage st (none past the last row),
 * as one cp.async group */
CK_DEVICE void norm_bwd_fetch(const ck_norm_bwd_kargs *a, unsigned char *st, long long row,
                              int lane)
{
    int tid = (int)ck_thread_idx_x();
    if (row < a->rows)
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = it * NORM_G + lane;
            long long col = (long long)v * NORM_VEC;
            if (v < NORM_NV) {
                int slot = it * NORM_BLOCK + tid;
                norm_copy_async(st + slot * NORM_XVB,
                                (const char *)a->x + (row * a->sx + col) * NORM_ESIZE(NORM_XT),
                                NORM_XVB);
                norm_copy_async(st + NORM_ITERS * NORM_BLOCK * NORM_XVB + slot * NORM_DVB,
                                (const char *)a->dy + (row * a->sdy + col) * NORM_ESIZE(NORM_DYT),
                                NORM_DVB);
            }
        }
    ck_cp_async_commit();
}

/* NORM_VEC elements of type t from shared memory (the ring) as f32 */
CK_DEVICE void norm_load_shared(const unsigned char *p, int t, float *o)
{
    const int e = ck_dtype_size(t);
    uint32_t w[NORM_VEC * 4 / 4];
    if (NORM_VEC * e % 16 == 0)
        for (int k = 0; k < NORM_VEC * e / 16; ++k) {
            ck_u32x4 u = ((const ck_u32x4 *)p)[k];
            w[4 * k] = u.x, w[4 * k + 1] = u.y, w[4 * k + 2] = u.z, w[4 * k + 3] = u.w;
        }
    else if (NORM_VEC * e % 4 == 0)
        for (int k = 0; k < NORM_VEC * e / 4; ++k)
            w[k] = ((const uint32_t *)p)[k];
    else
        w[0] = *(const uint16_t *)p;
    for (int k = 0; k < NORM_VEC; ++k)
        o[k] = ck_code_to_f32(t, ck_word_code(w, e, k));
}

/* The thread's vector `it` (column vector v) of x and dy: from the ring's stage st, the
 * register cache c, or global memory. */
CK_DEVICE void norm_bwd_xdy(const ck_norm_bwd_kargs *a, const unsigned char *st,
                            const norm_bwd_cache *c, long long row, int it, int v, float *x,
                            float *d)
{
    long long col = (long long)v * NORM_VEC;
    if (NORM_RING) {
        int slot = it * NORM_BLOCK + (int)ck_thread_idx_x();
        norm_load_shared(st + slot * NORM_XVB, NORM_XT, x);
        norm_load_shared(st + NORM_ITERS * NORM_BLOCK * NORM_XVB + slot * NORM_DVB, NORM_DYT, d);
    } else if (it < NORM_CACHE) {
        for (int k = 0; k < NORM_VEC; ++k) {
            x[k] = c->cx[it < NORM_CACHE ? it : 0][k];
            d[k] = c->cdy[it < NORM_CACHE ? it : 0][k];
        }
    } else {
        norm_load((const char *)a->x + (row * a->sx + col) * NORM_ESIZE(NORM_XT), NORM_XT, x);
        norm_load((const char *)a->dy + (row * a->sdy + col) * NORM_ESIZE(NORM_DYT), NORM_DYT, d);
    }
}

/* The thread's running dgamma / dbeta columns (over its rows). */
typedef struct norm_bwd_acc {
    float accg[NORM_SUMS ? NORM_ITERS : 1][NORM_VEC], accb[NORM_SUMS ? NORM_ITERS : 1][NORM_VEC];
} norm_bwd_acc;

/* stage sums: s1 = sum dy * gamma, s2 = sum dy * gamma * xhat over the thread's part of the
 * row (caching x and dy unless the ring holds them), dgamma / dbeta columns accumulated */
CK_DEVICE void norm_bwd_sums(const ck_norm_bwd_kargs *a, const unsigned char *st, long long row,
                             int valid, int lane, float mu, float rs, norm_bwd_cache *c,
                             norm_bwd_acc *r, float *s1, float *s2)
{
    *s1 = 0.0f;
    *s2 = 0.0f;
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (valid && v < NORM_NV) {
            float x[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
            long long col = (long long)v * NORM_VEC;
            /* from the ring, or global memory (index past the register cache it fills) */
            norm_bwd_xdy(a, st, c, row, NORM_RING ? it : NORM_ITERS, v, x, d);
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
            if (!NORM_RING && it < NORM_CACHE)
                for (int k = 0; k < NORM_VEC; ++k) {
                    c->cx[it < NORM_CACHE ? it : 0][k] = x[k];
                    c->cdy[it < NORM_CACHE ? it : 0][k] = d[k];
                }
        }
    }
}

/* stage dx = rstd * (dy * gamma - mean(g) - xhat * mean(g * xhat)) (RMSNorm: no mean(g)) */
CK_DEVICE void norm_bwd_dx(const ck_norm_bwd_kargs *a, const unsigned char *st, long long row,
                           int valid, int lane, float mu, float rs, const norm_bwd_cache *c,
                           float m1, float m2)
{
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = it * NORM_G + lane;
        if (valid && v < NORM_NV) {
            float x[NORM_VEC], d[NORM_VEC], g[NORM_VEC];
            long long col = (long long)v * NORM_VEC;
            norm_bwd_xdy(a, st, c, row, it, v, x, d);
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
    unsigned char *ring = NORM_RING ? (unsigned char *)ck_dynamic_shared() : NULL;
    int lane = (int)(ck_thread_idx_x() % NORM_G);
    long long group = (long long)(ck_thread_idx_x() / NORM_G);
    long long first = (long long)ck_block_idx_x() * NORM_RPB,
              step = (long long)ck_grid_dim_x() * NORM_RPB;
    int parity = 0;
    norm_bwd_acc r;
    if (NORM_SUMS)
        for (int it = 0; it < NORM_ITERS; ++it)
            for (int k = 0; k < NORM_VEC; ++k) {
                r.accg[NORM_SUMS ? it : 0][k] = 0.0f;
                r.accb[NORM_SUMS ? it : 0][k] = 0.0f;
            }
    for (int s = 0; s + 1 < NORM_RING; ++s) /* the ring's first S - 1 rows */
        norm_bwd_fetch(&a, ring + s * NORM_STAGE, first + s * step + group, lane);
    int cur = 0; /* the ring's stage of the current row */
    for (long long base = first; base < a.rows; base += step) {
        long long row = base + group;
        int valid = row < a.rows;
        unsigned char *st = NULL;
        if (NORM_RING) { /* row + S - 1 steps into the stage the previous row left; wait for row */
            int prev = cur == 0 ? NORM_RSLOTS - 1 : cur - 1;
            norm_bwd_fetch(&a, ring + prev * NORM_STAGE, row + (NORM_RING - 1) * step, lane);
            ck_cp_async_wait(NORM_RING - 1);
            st = ring + cur * NORM_STAGE;
            cur = cur + 1 == NORM_RSLOTS ? 0 : cur + 1;
        }
        float mu = 0.0f, rs = 0.0f;
        if (valid) {
            if (NORM_KIND == 0)
                mu = a.mean[row];
            rs = a.rstd[row];
        }
        norm_bwd_cache c;
        float s1, s2;
        norm_bwd_sums(&a, st, row, valid, lane, mu, rs, &c, &r, &s1, &s2);
        if (NORM_KIND == 0) /* both sums in one exchange */
            ck_group_sum2_f32(&s1, &s2, NORM_G, red + parity * 96);
        else
            s2 = norm_reduce_f32(s2, CK_RED_SUM, red + parity * 96);
        parity ^= 1;
        norm_bwd_dx(&a, st, row, valid, lane, mu, rs, &c, s1 * (1.0f / (float)NORM_N),
                    s2 * (1.0f / (float)NORM_N));
    }
    if (NORM_RING)
        ck_cp_async_wait_all();
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

/* dgamma[c] = sum_p part[p][c], dbeta[c] = sum_p part[P + p][c]: slice j of NORM_CSLICES
 * sums p = j, j + CSLICES, ... in increasing order, then the slices' sums in slice order. A
 * block is CCOLS columns (256 with one slice, else 32) times NORM_CSLICES slices. */
#define NORM_CCOLS (NORM_CSLICES > 1 ? 32 : 256)
CK_DEVICE void ck_norm_bwd_combine_body(ck_norm_combine_kargs a)
{
    CK_SHARED_ARRAY(float, sh, NORM_CSLICES > 1 ? 2 * 32 * NORM_CSLICES : 1);
    int lane = (int)(ck_thread_idx_x() % NORM_CCOLS), j = (int)(ck_thread_idx_x() / NORM_CCOLS);
    long long c = (long long)ck_block_idx_x() * NORM_CCOLS + lane;
    float sg = 0.0f, sb = 0.0f;
    long long p = j;
    if (c < NORM_N) {
        const float *pg = a.part + c, *pb = a.part + a.np * NORM_N + c;
        for (; p + 3 * NORM_CSLICES < a.np; p += 4 * NORM_CSLICES) { /* 8 loads in flight */
            float g[4], b[4];
            for (int u = 0; u < 4; ++u) {
                g[u] = pg[(p + u * NORM_CSLICES) * NORM_N];
                b[u] = pb[(p + u * NORM_CSLICES) * NORM_N];
            }
            for (int u = 0; u < 4; ++u) {
                sg += g[u];
                sb += b[u];
            }
        }
        for (; p < a.np; p += NORM_CSLICES) {
            sg += pg[p * NORM_N];
            sb += pb[p * NORM_N];
        }
    }
    if (NORM_CSLICES > 1) {
        sh[j * NORM_CCOLS + lane] = sg;
        sh[(NORM_CSLICES + j) * NORM_CCOLS + lane] = sb;
        ck_sync_threads();
        if (j != 0)
            return;
        sg = sh[lane];
        sb = sh[NORM_CSLICES * NORM_CCOLS + lane];
        for (int k = 1; k < NORM_CSLICES; ++k) {
            sg += sh[k * NORM_CCOLS + lane];
            sb += sh[(NORM_CSLICES + k) * NORM_CCOLS + lane];
        }
    }
    if (c >= NORM_N)
        return;
    if (NORM_DGT >= 0)
        norm_bwd_put(a.dgamma, NORM_DGT, c, sg);
    if (NORM_DBT >= 0)
        norm_bwd_put(a.dbeta, NORM_DBT, c, sb);
}
