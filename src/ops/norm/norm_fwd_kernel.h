/*
 * Layernorm / RMSNorm / smooth-quant forward over rows of NORM_N elements (device C).
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
 *   NORM_CLUSTER blocks per row (a thread-block cluster; 1: none). Block `rank` holds vectors
 *               (it * NORM_CLUSTER + rank) * NORM_G + lane; the blocks' statistics (and the
 *               row's max |y|) are exchanged with st.async into every block's shared memory,
 *               completing on one mbarrier per exchange, and merged in rank order, so every
 *               block computes the same bits. One row per block (the grid covers the rows).
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
#include "ops/norm/norm_fwd_stages_kernel.h"

#ifndef NORM_CLUSTER
#define NORM_CLUSTER 1
#endif
#if NORM_CLUSTER > 1
#define NORM_RANK ((int)ck_cluster_ctarank())
#else
#define NORM_RANK 0
#endif
/* vector of the row held by thread `lane` in round `it` */
#define NORM_VIDX(it) (((it) * NORM_CLUSTER + NORM_RANK) * NORM_G + lane)

#ifndef NORM_LAG
#define NORM_LAG 2
#endif

/* p + h where the tensor exists (p is NULL otherwise) */
#define NORM_PSHIFT(p, exists, h) ((exists) ? (p) + (h) : (p))

/* Element k of cached vector `it` as f32. */
#if NORM_RAW
#define NORM_CVAL(it, k)                                                                         \
    ck_code_to_f32(NORM_XT, ((k) & 1) ? (ck_opaque_u32(raw[it][(k) >> 1]) >> 16)                \
                                        : (ck_opaque_u32(raw[it][(k) >> 1]) & 0xffffu))
#else
#define NORM_CVAL(it, k) cache[it][k]
#endif

/* The body of kernel ck_norm_fwd (the generated source declares the kernel itself, with these
 * parameters, and calls this). */
CK_DEVICE void ck_norm_fwd_body(
    const void *x, long long sx, const void *residual, long long sr, void *y, long long sy,
    void *resout, long long so, const void *gamma, const void *beta, const void *smooth,
    float *yscale, float *mean_out, float *rstd_out, long long rows, float eps)
{
#if NORM_G > 32
    CK_SHARED_ARRAY(float, red, 2 * 3 * 32);
    CK_SHARED_ARRAY(float, red_q, 2 * 32);
    float *red_s = red, *red_a = red_q;
#else
    float *red_s = 0, *red_a = 0;
#endif
#if NORM_CLUSTER > 1
    CK_SHARED_ARRAY(float, cl_slot, 2 * 4 * NORM_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, cl_bar, 2);
    {
        const unsigned bytes[2] = {(NORM_KIND == 0 ? 12u : 4u) * NORM_CLUSTER, 4u * NORM_CLUSTER};
        ck_cluster_exchange_init(cl_bar, bytes, 2);
    }
#endif
    const char *xc = (const char *)x, *rc = (const char *)residual;
    const char *gc = (const char *)gamma, *bc = (const char *)beta, *scc = (const char *)smooth;
    const int lane = (int)(ck_thread_idx_x() % NORM_G);
    const long long group = (long long)(ck_thread_idx_x() / NORM_G);
    (void)resout;
    (void)so;
    (void)yscale;
    (void)mean_out;
    (void)rstd_out;
    (void)eps;
    /* one iteration unless the rows exceed the grid (more than 2^31 - 1 row groups) */
    for (long long base = (long long)(ck_block_idx_x() / NORM_CLUSTER) * NORM_RPB; base < rows;
         base += (long long)(ck_grid_dim_x() / NORM_CLUSTER) * NORM_RPB) {
        const long long row = base + group;
#if NORM_G == 32
        if (row >= rows)
            return; /* a warp per row: no block barrier */
#endif
        const int valid = row < rows;
#if NORM_RAW
        uint32_t raw[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC / 2];
#else
        float cache[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC];
#endif
        /* pass 1: read the cached part of the row (all loads issued first) */
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            int v = NORM_VIDX(it);
            if (valid && (NORM_EVEN || v < NORM_NV)) {
#if NORM_RAW
                ck_ld_words(xc + (row * sx + (long long)v * NORM_VEC) * 2, NORM_VEC * 2,
                              raw[it]);
#else
                norm_fwd_get(xc, sx, rc, sr, row, v, cache[it]);
#endif
            } else {
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
                {
#if NORM_RAW
                    raw[it][k / 2] = 0u;
#else
                    cache[it][k] = 0.0f;
#endif
                }
            }
        }
#if NORM_OT >= 0
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            int v = NORM_VIDX(it);
            if (valid && (NORM_EVEN || v < NORM_NV))
                norm_store((char *)resout + (row * so + (long long)v * NORM_VEC) *
                                                NORM_ESIZE(NORM_OT),
                           NORM_OT, cache[it]);
        }
#endif
        /* statistics of the cached part (vectors past the row end hold zeros) */
#if NORM_KIND == 0
        float cnt;
        if (NORM_EVEN)
            cnt = valid ? (float)(NORM_CACHE * NORM_VEC) : 0.0f;
        else {
            int nvalid = 0;
            CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it) nvalid += NORM_VIDX(it) < NORM_NV;
            cnt = valid ? (float)(nvalid * NORM_VEC) : 0.0f;
        }
        float sum = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) sum += NORM_CVAL(it, k);
        }
        ck_welford st;
        st.n = cnt;
        /* a division even where the count is a constant: with a multiplication the GPU
         * compiler interleaves the two passes and keeps every converted value live (twice the
         * registers); one division per row and thread costs nothing */
        st.mean = cnt > 0.0f ? sum / cnt : 0.0f;
        st.m2 = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            if (NORM_EVEN || NORM_VIDX(it) < NORM_NV) {
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
                {
                    float d = NORM_CVAL(it, k) - st.mean;
                    st.m2 = fmaf(d, d, st.m2);
                }
            }
        }
        if (!valid)
            st.m2 = 0.0f;
#elif NORM_KIND == 1
        float ss = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
            {
                float c = NORM_CVAL(it, k);
                ss = fmaf(c, c, ss);
            }
        }
#endif
        /* the uncached rest of the row: per vector (its own two-pass state, merged by Chan) */
        CK_UNROLL for (int it = NORM_CACHE; it < NORM_ITERS; ++it)
        {
            int v = NORM_VIDX(it);
            if (valid && v < NORM_NV) {
                float a[NORM_VEC];
                norm_fwd_get(xc, sx, rc, sr, row, v, a);
#if NORM_OT >= 0
                norm_store((char *)resout + (row * so + (long long)v * NORM_VEC) *
                                                NORM_ESIZE(NORM_OT),
                           NORM_OT, a);
#endif
#if NORM_KIND == 0
                st = ck_welford_add(st, a, NORM_VEC);
#elif NORM_KIND == 1
                for (int k = 0; k < NORM_VEC; ++k)
                    ss = fmaf(a[k], a[k], ss);
#endif
            }
        }
        float mean = 0.0f, rstd = 1.0f;
#if NORM_KIND == 0
        st = norm_reduce_welford(st, red_s);
#if NORM_CLUSTER > 1
        ck_cluster_wait();
        st = ck_cluster_welford(st, cl_slot, &cl_bar[0], ck_thread_idx_x(), NORM_CLUSTER);
#endif
        mean = st.mean;
        rstd = 1.0f / sqrtf(st.m2 * (1.0f / (float)NORM_N) + eps);
#elif NORM_KIND == 1
        ss = norm_reduce_f32(ss, CK_RED_SUM, red_s);
#if NORM_CLUSTER > 1
        ck_cluster_wait();
        ss = ck_cluster_reduce_f32(ss, CK_RED_SUM, cl_slot, &cl_bar[0], ck_thread_idx_x(),
                                   NORM_CLUSTER);
#endif
        rstd = 1.0f / sqrtf(ss * (1.0f / (float)NORM_N) + eps);
#endif
        /* gamma / beta / smooth are loaded after the reduction, where they are used: an
         * address the compiler cannot see through keeps it from hoisting those loads above
         * the barrier (their registers would double the thread's footprint) */
        {
            long long hide = (long long)ck_opaque_u32(0u);
            gc = NORM_PSHIFT(gc, NORM_KIND != 2, hide);
            bc = NORM_PSHIFT(bc, NORM_BT >= 0, hide);
            scc = NORM_PSHIFT(scc, NORM_ST >= 0, hide);
        }
        if (valid && lane == 0 && NORM_RANK == 0) {
#if NORM_MEAN
            mean_out[row] = mean;
#endif
#if NORM_RSTD
            rstd_out[row] = rstd;
#endif
        }
#if NORM_QMAX > 0
        /* pass 2: the row's largest |y| (f32 cache: y replaces a) */
        float amax = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = NORM_VIDX(it);
            if (valid && (NORM_EVEN || v < NORM_NV)) {
                float a[NORM_VEC];
                if (it < NORM_CACHE) {
                    CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) a[k] =
                        NORM_CVAL(it < NORM_CACHE ? it : 0, k);
                } else {
                    norm_fwd_get(xc, sx, rc, sr, row, v, a);
                }
                norm_fwd_y(gc, bc, scc, v, mean, rstd, a);
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) amax = ck_nanmax_f32(amax, fabsf(a[k]));
#if !NORM_RAW
                if (it < NORM_CACHE) {
                    CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) cache[it < NORM_CACHE ? it : 0][k] =
                        a[k];
                }
#endif
            }
        }
        amax = norm_reduce_f32(amax, CK_RED_NANMAX, red_a);
#if NORM_CLUSTER > 1
#if NORM_KIND == 2
        ck_cluster_wait();
#endif
        amax = ck_cluster_reduce_f32(amax, CK_RED_NANMAX, cl_slot + 4 * NORM_CLUSTER, &cl_bar[1],
                                     ck_thread_idx_x(), NORM_CLUSTER);
#endif
        float scale = amax / (float)NORM_QMAX;
        if (valid && lane == 0 && NORM_RANK == 0)
            yscale[row] = scale;
#endif
        /* final pass: y. The gamma/beta/smooth addresses of vector `it` depend (invisibly) on
         * the result of vector it - NORM_LAG, so at most NORM_LAG vectors' parameters are in
         * flight: the compiler would otherwise load all of them at once and run out of
         * registers. */
        uint32_t dep[NORM_ITERS];
        CK_UNROLL for (int it = 0; it < NORM_ITERS; ++it)
        {
            int v = NORM_VIDX(it);
            dep[it] = 0u;
            if (valid && (NORM_EVEN || v < NORM_NV)) {
                long long h = 0;
                if (it >= NORM_LAG) {
                    uint32_t d = dep[it >= NORM_LAG ? it - NORM_LAG : 0];
                    h = (long long)(int32_t)(ck_opaque_u32(d) - d);
                }
                float a[NORM_VEC];
                if (it < NORM_CACHE) {
                    CK_UNROLL for (int k = 0; k < NORM_VEC; ++k) a[k] =
                        NORM_CVAL(it < NORM_CACHE ? it : 0, k);
#if NORM_QMAX == 0 || NORM_RAW
                    norm_fwd_y(NORM_PSHIFT(gc, NORM_KIND != 2, h), NORM_PSHIFT(bc, NORM_BT >= 0, h),
                               NORM_PSHIFT(scc, NORM_ST >= 0, h), v, mean, rstd, a);
#endif
                } else {
                    norm_fwd_get(xc, sx, rc, sr, row, v, a);
                    norm_fwd_y(NORM_PSHIFT(gc, NORM_KIND != 2, h), NORM_PSHIFT(bc, NORM_BT >= 0, h),
                               NORM_PSHIFT(scc, NORM_ST >= 0, h), v, mean, rstd, a);
                }
                dep[it] = ck_f32_as_u32(a[0]);
#if NORM_QMAX > 0
                CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
                {
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
#if NORM_G > 32
        /* the next row group (rare) reuses the buffers: swap them */
        {
            float *t = red_s;
            red_s = red_s == red ? red + 96 : red;
            red_a = red_a == red_q ? red_q + 32 : red_q;
            (void)t;
        }
#endif
    }
}
