/*
 * Layernorm / RMSNorm / smooth-quant forward over rows of NORM_N elements (device C): the row
 * in registers.
 *
 * The generated source (src/ops/norm/params.c) defines, before including this file:
 *   NORM_KIND   0 layernorm, 1 RMSNorm, 2 none (standalone smooth/row-wise quantization)
 *   NORM_N, NORM_VEC (elements per vector access; divides NORM_N), NORM_NV = NORM_N / NORM_VEC
 *   NORM_G      threads per row (1..32 a power of two: several rows per block; else the block)
 *   NORM_BLOCK  threads per block; NORM_RPB = NORM_BLOCK / NORM_G rows per block and step
 *   NORM_ITERS  vectors per thread and row = ceil(NORM_NV / NORM_G)
 *   NORM_CACHE  how many of them stay in registers (the rest is re-read, from L2, when a later
 *               pass needs it)
 *   NORM_RAW    1: the cache holds x's raw 16-bit codes (two per register; 16-bit x read as
 *               16-byte vectors, no residual), converted again in each pass; 0: f32 values
 *   NORM_EVEN   1: NORM_G divides NORM_NV (every thread holds as many values: the Welford
 *               merges need no division)
 *   NORM_XT, NORM_YT, NORM_GT     dtypes of x, y (f32/f16/bf16, or i8/fp8e4m3 quantized), gamma
 *   NORM_BT, NORM_RT, NORM_OT, NORM_ST   beta, residual, residual output, smooth (-1: absent)
 *   NORM_MEAN, NORM_RSTD          1 to write the row's mean / rstd (f32)
 *   NORM_QMAX   largest code of the quantized y (127 or 448); 0: not quantized
 *   NORM_QFAST  1: quantize by the row's reciprocal and packed conversions where the row's
 *               scale allows (norm_fwd_quant_kernel.h); 0: a division per element
 *   NORM_QCVT   1: fp8 codes by the target's conversion instruction (sm_89+); 0: by the
 *               library's integer conversion
 *   NORM_CLUSTER blocks per row (a thread-block cluster; 1: none). Block `rank` holds vectors
 *               (it * NORM_CLUSTER + rank) * NORM_G + lane; the blocks' statistics (and the
 *               row's max |y|) are exchanged with st.async into every block's shared memory,
 *               completing on one mbarrier per exchange, and merged in rank order, so every
 *               block computes the same bits. One row per block (the grid covers the rows).
 * Every branch on them is a constant condition the compiler folds: the generated source picks
 * the variant, the stages below hold no preprocessor conditions.
 *
 * One group of NORM_RPB rows per block (grid = row groups, not persistent: several blocks per
 * SM overlap one's loads with another's reductions and stores). Each row: a = x (+ residual),
 * written to residual_out when asked, held in registers; statistics: layernorm - each thread's
 * count, mean (sum / count) and M2 (squared deviations from that mean: two passes over its
 * registers), merged across threads with Chan's formula in one reduction (one barrier);
 * RMSNorm - the sum of squares;
 * y = (a - mean) * rstd * gamma + beta. Quantized: y *= smooth, scale = max|y| / QMAX (written
 * to yscale), code = round(y / scale).
 */
#include "ops/norm/norm_fwd_quant_kernel.h"
#include "ops/norm/norm_fwd_stages_kernel.h"

/* at most this many vectors' gamma / beta / smooth loads in flight in the write stage */
#define NORM_LAG 2
#define NORM_SLOTS (NORM_CACHE > 0 ? NORM_CACHE : 1)

/* The thread's cached vectors of its row: f32 values, or (NORM_RAW) x's raw 16-bit codes. */
typedef struct norm_row_cache {
    float f[NORM_RAW ? 1 : NORM_SLOTS][NORM_VEC];
    uint32_t w[NORM_RAW ? NORM_SLOTS : 1][NORM_VEC > 1 ? NORM_VEC / 2 : 1];
} norm_row_cache;

/* Where the thread is: its row group's first row, its row and lane; valid 0 past the last
 * row. */
typedef struct norm_pos {
    long long base, row;
    int lane, valid;
} norm_pos;

CK_DEVICE int norm_rank(void)
{
    return NORM_CLUSTER > 1 ? (int)ck_cluster_ctarank() : 0;
}

/* vector of the row held by the thread in round `it` */
CK_DEVICE int norm_vidx(int it, int lane)
{
    return (it * NORM_CLUSTER + norm_rank()) * NORM_G + lane;
}

/* whether vector v is one of a row (the row exists and the vector is in it) */
CK_DEVICE int norm_holds(norm_pos p, int v)
{
    return p.valid && (NORM_EVEN || v < NORM_NV);
}

/* element k of cached vector `it` as f32 */
CK_DEVICE float norm_cached(const norm_row_cache *c, int it, int k)
{
    if (NORM_RAW) {
        const uint32_t *w = c->w[NORM_RAW ? it : 0];
        return ck_code_to_f32(NORM_XT, (k & 1) ? (ck_opaque_u32(w[k >> 1]) >> 16)
                                               : (ck_opaque_u32(w[k >> 1]) & 0xffffu));
    }
    return c->f[NORM_RAW ? 0 : it][k];
}

/* p + h where the tensor exists (p is NULL otherwise) */
CK_DEVICE const char *norm_shift(const void *p, int exists, long long h)
{
    return exists ? (const char *)p + h : (const char *)p;
}

/* stage read: the cached rounds of the row (all loads issued first, zeros past its end) and
 * their residual_out */
CK_DEVICE void norm_read_cached(const ck_norm_fwd_kargs *a, norm_pos p, norm_row_cache *c)
{
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        int v = norm_vidx(it, p.lane);
        if (norm_holds(p, v)) {
            if (NORM_RAW)
                ck_ld_words((const char *)a->x + (p.row * a->sx + (long long)v * NORM_VEC) * 2,
                            NORM_VEC * 2, c->w[NORM_RAW ? it : 0]);
            else
                norm_fwd_get((const char *)a->x, a->sx, (const char *)a->residual, a->sr, p.row,
                             v, c->f[NORM_RAW ? 0 : it]);
        } else {
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
            {
                if (NORM_RAW)
                    c->w[NORM_RAW ? it : 0][k / 2] = 0u;
                else
                    c->f[NORM_RAW ? 0 : it][k] = 0.0f;
            }
        }
    }
    if (NORM_OT >= 0) { /* never with NORM_RAW */
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            int v = norm_vidx(it, p.lane);
            if (norm_holds(p, v))
                norm_store((char *)a->resout +
                               (p.row * a->so + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_OT),
                           NORM_OT, c->f[NORM_RAW ? 0 : it]);
        }
    }
}

/* stage read as the instance takes it (the generated source defines it: norm_read_cached, or
 * norm_read_window over generated tile windows) */
CK_DEVICE void norm_read(const ck_norm_fwd_kargs *a, norm_pos p, norm_row_cache *c);

/* The thread's statistics of its part of the row: layernorm (count, mean, M2), RMSNorm the
 * sum of squares. */
typedef struct norm_part {
    ck_welford w;
    float ss;
} norm_part;

/* stage stats of the cached rounds (vectors past the row end hold zeros) */
CK_DEVICE norm_part norm_stats_cached(const norm_row_cache *c, norm_pos p)
{
    norm_part s;
    s.ss = 0.0f;
    s.w.n = s.w.mean = s.w.m2 = 0.0f;
    if (NORM_KIND == 0) {
        int nvalid = NORM_CACHE;
        if (!NORM_EVEN) {
            nvalid = 0;
            CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it) nvalid +=
                norm_vidx(it, p.lane) < NORM_NV;
        }
        float cnt = p.valid ? (float)(nvalid * NORM_VEC) : 0.0f;
        float sum = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) sum += norm_cached(c, it, k);
        }
        s.w.n = cnt;
        /* a division even where the count is a constant: with a multiplication the GPU
         * compiler interleaves the two passes and keeps every converted value live (twice the
         * registers); one division per row and thread costs nothing */
        s.w.mean = cnt > 0.0f ? sum / cnt : 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            if (NORM_EVEN || norm_vidx(it, p.lane) < NORM_NV) {
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
                {
                    float d = norm_cached(c, it, k) - s.w.mean;
                    s.w.m2 = fmaf(d, d, s.w.m2);
                }
            }
        }
        if (!p.valid)
            s.w.m2 = 0.0f;
    } else if (NORM_KIND == 1) {
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
            {
                float v = norm_cached(c, it, k);
                s.ss = fmaf(v, v, s.ss);
            }
        }
    }
    return s;
}

/* stage stats of the uncached rest: read per vector (residual_out written), each with its own
 * two-pass state merged by Chan */
CK_DEVICE void norm_stats_rest(const ck_norm_fwd_kargs *a, norm_pos p, norm_part *s)
{
    CK_UNROLL for (int it = NORM_CACHE; it < NORM_ITERS; ++it)
    {
        int v = norm_vidx(it, p.lane);
        if (p.valid && v < NORM_NV) {
            float t[NORM_VEC];
            norm_fwd_get((const char *)a->x, a->sx, (const char *)a->residual, a->sr, p.row, v, t);
            if (NORM_OT >= 0)
                norm_store((char *)a->resout +
                               (p.row * a->so + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_OT),
                           NORM_OT, t);
            if (NORM_KIND == 0)
                s->w = ck_welford_add(s->w, t, NORM_VEC);
            else if (NORM_KIND == 1)
                for (int k = 0; k < NORM_VEC; ++k)
                    s->ss = fmaf(t[k], t[k], s->ss);
        }
    }
}

/* stage reduce: the row's mean and rstd from every thread's part (block, then cluster) */
CK_DEVICE void norm_row_stats(norm_part s, float eps, float *red, float *slot,
                              unsigned long long *bar, float *mean, float *rstd)
{
    *mean = 0.0f;
    *rstd = 1.0f;
    if (NORM_KIND == 0) {
        s.w = norm_reduce_welford(s.w, red);
        if (NORM_CLUSTER > 1) {
            ck_cluster_wait();
            s.w = ck_cluster_welford(s.w, slot, bar, ck_thread_idx_x(), NORM_CLUSTER);
        }
        *mean = s.w.mean;
        *rstd = 1.0f / sqrtf(s.w.m2 * (1.0f / (float)NORM_N) + eps);
    } else if (NORM_KIND == 1) {
        s.ss = norm_reduce_f32(s.ss, CK_RED_SUM, red);
        if (NORM_CLUSTER > 1) {
            ck_cluster_wait();
            s.ss = ck_cluster_reduce_f32(s.ss, CK_RED_SUM, slot, bar, ck_thread_idx_x(),
                                         NORM_CLUSTER);
        }
        *rstd = 1.0f / sqrtf(s.ss * (1.0f / (float)NORM_N) + eps);
    }
}

/* vector v (round `it`) of the row as a: from the cache or read again */
CK_DEVICE void norm_row_vector(const ck_norm_fwd_kargs *a, norm_pos p, const norm_row_cache *c,
                               int it, int v, float *t)
{
    if (it < NORM_CACHE) {
        CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) t[k] =
            norm_cached(c, it < NORM_CACHE ? it : 0, k);
    } else {
        norm_fwd_get((const char *)a->x, a->sx, (const char *)a->residual, a->sr, p.row, v, t);
    }
}

/* stage amax (quantized y): the row's scale = max |y| / NORM_QMAX; f32 caches keep y */
CK_DEVICE float norm_row_scale(const ck_norm_fwd_kargs *a, norm_pos p, norm_row_cache *c,
                               const char *gamma, const char *beta, const char *smooth,
                               float mean, float rstd, float *red, float *slot,
                               unsigned long long *bar)
{
    float amax = 0.0f;
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = norm_vidx(it, p.lane);
        if (norm_holds(p, v)) {
            float t[NORM_VEC];
            norm_row_vector(a, p, c, it, v, t);
            norm_fwd_y(gamma, beta, smooth, v, mean, rstd, t);
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) amax = ck_amax_f32(amax, t[k]);
            if (!NORM_RAW && it < NORM_CACHE) {
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
                    c->f[it < NORM_CACHE && !NORM_RAW ? it : 0][k] = t[k];
            }
        }
    }
    amax = norm_reduce_f32(amax, CK_RED_NANMAX, red);
    if (NORM_CLUSTER > 1) {
        if (NORM_KIND == 2)
            ck_cluster_wait();
        amax = ck_cluster_reduce_f32(amax, CK_RED_NANMAX, slot, bar, ck_thread_idx_x(),
                                     NORM_CLUSTER);
    }
    return amax / (float)(NORM_QMAX > 0 ? NORM_QMAX : 1);
}

/* stage write: y (quantized: round(y / scale), the way the constant `fast` names). The
 * gamma/beta/smooth addresses of vector `it` depend (invisibly) on the result of vector
 * it - NORM_LAG, so at most NORM_LAG vectors' parameters are in flight: the compiler would
 * otherwise load all of them at once and run out of registers. */
CK_DEVICE void norm_row_write(const ck_norm_fwd_kargs *a, norm_pos p, const norm_row_cache *c,
                              const char *gamma, const char *beta, const char *smooth,
                              float mean, float rstd, norm_quant q, int fast)
{
    uint32_t dep[NORM_ITERS];
    CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
    {
        int v = norm_vidx(it, p.lane);
        dep[it] = 0u;
        if (norm_holds(p, v)) {
            long long h = 0;
            if (it >= NORM_LAG) {
                uint32_t d = dep[it >= NORM_LAG ? it - NORM_LAG : 0];
                h = (long long)(int32_t)(ck_opaque_u32(d) - d);
            }
            float t[NORM_VEC];
            norm_row_vector(a, p, c, it, v, t);
            /* quantized f32 caches hold y already */
            if (it >= NORM_CACHE || NORM_QMAX == 0 || NORM_RAW)
                norm_fwd_y(norm_shift(gamma, NORM_KIND != 2, h), norm_shift(beta, NORM_BT >= 0, h),
                           norm_shift(smooth, NORM_ST >= 0, h), v, mean, rstd, t);
            dep[it] = ck_f32_as_u32(t[0]);
            char *y = (char *)a->y + (p.row * a->sy + (long long)v * NORM_VEC) *
                                         NORM_ESIZE(NORM_YT);
            if (NORM_QMAX > 0)
                norm_quant_store(y, q, fast, t);
            else
                norm_store(y, NORM_YT, t);
        }
    }
}

/* The body of kernel ck_norm_fwd (declared by the generated source). */
CK_DEVICE void ck_norm_fwd_body(ck_norm_fwd_kargs a)
{
    /* block reductions (two sets, alternating between row groups) and cluster exchanges */
    CK_SHARED_ARRAY(float, red, 2 * 3 * 32);
    CK_SHARED_ARRAY(float, red_q, 2 * 32);
    CK_SHARED_ARRAY(float, cl_slot, 2 * 4 * NORM_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, cl_bar, 2);
    float *red_s = NORM_G > 32 ? red : 0, *red_a = NORM_G > 32 ? red_q : 0;
    if (NORM_CLUSTER > 1) {
        const unsigned bytes[2] = {(NORM_KIND == 0 ? 12u : 4u) * NORM_CLUSTER, 4u * NORM_CLUSTER};
        ck_cluster_exchange_init(cl_bar, bytes, 2);
    }
    norm_pos p;
    p.lane = (int)(ck_thread_idx_x() % NORM_G);
    const long long group = (long long)(ck_thread_idx_x() / NORM_G);
    /* one iteration unless the rows exceed the grid (more than 2^31 - 1 row groups) */
    for (long long base = (long long)(ck_block_idx_x() / NORM_CLUSTER) * NORM_RPB; base < a.rows;
         base += (long long)(ck_grid_dim_x() / NORM_CLUSTER) * NORM_RPB) {
        p.base = base;
        p.row = base + group;
        if (NORM_G == 32 && p.row >= a.rows)
            return; /* a warp per row: no block barrier */
        p.valid = p.row < a.rows;
        norm_row_cache c;
        norm_read(&a, p, &c);
        norm_part s = norm_stats_cached(&c, p);
        norm_stats_rest(&a, p, &s);
        float mean, rstd;
        norm_row_stats(s, a.eps, red_s, cl_slot, &cl_bar[0], &mean, &rstd);
        /* gamma / beta / smooth are loaded after the reduction, where they are used: an
         * address the compiler cannot see through keeps it from hoisting those loads above
         * the barrier (their registers would double the thread's footprint) */
        long long hide = (long long)ck_opaque_u32(0u);
        const char *gamma = norm_shift(a.gamma, NORM_KIND != 2, hide);
        const char *beta = norm_shift(a.beta, NORM_BT >= 0, hide);
        const char *smooth = norm_shift(a.smooth, NORM_ST >= 0, hide);
        if (p.valid && p.lane == 0 && norm_rank() == 0) {
            if (NORM_MEAN)
                a.mean_out[p.row] = mean;
            if (NORM_RSTD)
                a.rstd_out[p.row] = rstd;
        }
        float scale = 1.0f;
        if (NORM_QMAX > 0) {
            scale = norm_row_scale(&a, p, &c, gamma, beta, smooth, mean, rstd, red_a,
                                   cl_slot + 4 * NORM_CLUSTER, &cl_bar[1]);
            if (p.valid && p.lane == 0 && norm_rank() == 0)
                a.yscale[p.row] = scale;
        }
        norm_quant q = norm_quant_of(scale);
        if (NORM_QFAST && q.fast) /* the row's choice (uniform): two copies of the stage */
            norm_row_write(&a, p, &c, gamma, beta, smooth, mean, rstd, q, 1);
        else
            norm_row_write(&a, p, &c, gamma, beta, smooth, mean, rstd, q, 0);
        if (NORM_G > 32) { /* the next row group (rare) reuses the buffers: swap them */
            red_s = red_s == red ? red + 96 : red;
            red_a = red_a == red_q ? red_q + 32 : red_q;
        }
    }
}
