/*
 * Layernorm / RMSNorm / smooth-quant forward over long rows (device C): the looped pipeline, for
 * hidden sizes beyond what the registers of one block hold (up to 1,048,576; chosen by the
 * policy above 65,536, or forced by a tuning entry "loop,G,C,CACHE[,SMEM]").
 *
 * One row per NORM_CLUSTER blocks of NORM_G threads (a thread-block cluster when > 1; the grid
 * is rows x NORM_CLUSTER, one row per cluster). Block `rank` holds vectors
 * (it * NORM_CLUSTER + rank) * NORM_G + lane, it < NORM_ITERS ("round" it of the thread). Where
 * a round lives:
 *   it < NORM_CACHE                 registers: f32 values, or (NORM_RAW) x's raw 16-bit codes
 *   it < NORM_CACHE + NORM_SMEM     (NORM_RAW only) shared memory: the 16-byte vector as read,
 *                                   copied by cp.async, slot (it - NORM_CACHE) * NORM_G + lane
 *   the rest                        streamed: read again (from L2) in every pass that needs it
 * NORM_RAW ("resident"; 16-bit x in 16-byte vectors, no residual): every load of the registers'
 * and shared memory's rounds is issued at once, and their statistics are the thread's exact
 * two-pass state (no per-vector merge); x is read from DRAM once when nothing is streamed.
 * Stages:
 *   read      a = x (+ residual), residual_out written, the streamed rounds' statistics
 *   stats     the thread's part, then block (Chan's merge / a sum) and cluster (st.async
 *             exchange) reductions
 *   amax      quantized y: the row's max |y| (f32 cached rounds keep y)
 *   write     y (quantized: round(y / scale)) for every vector
 * Constants as norm_fwd_kernel.h documents (NORM_RPB 1, NORM_BLOCK = NORM_G) and NORM_SMEM;
 * branches on them are constant conditions the compiler folds.
 */
#include "ops/norm/norm_fwd_quant_kernel.h"
#include "ops/norm/norm_fwd_stages_kernel.h"

#define NORM_LOOP_SLOTS (NORM_CACHE > 0 ? NORM_CACHE : 1)
#define NORM_LOOP_HELD (NORM_RAW ? NORM_CACHE + NORM_SMEM : 0) /* rounds held as raw codes */

/* The thread's register rounds: f32 values, or (NORM_RAW) x's raw 16-bit codes. */
typedef struct norm_loop_cache {
    float f[NORM_RAW ? 1 : NORM_LOOP_SLOTS][NORM_VEC];
    uint32_t w[NORM_RAW ? NORM_LOOP_SLOTS : 1][NORM_VEC > 1 ? NORM_VEC / 2 : 1];
} norm_loop_cache;

/* vector of the row held by thread `lane` of cluster block `rank` in round `it` */
CK_DEVICE int norm_loop_vidx(int it, int rank, int lane)
{
    return (it * NORM_CLUSTER + rank) * NORM_G + lane;
}

CK_DEVICE int norm_loop_holds(int it, int rank, int lane)
{
    return NORM_EVEN || norm_loop_vidx(it, rank, lane) < NORM_NV;
}

/* x's 16-bit codes (two per word) as f32 */
CK_DEVICE void norm_loop_unpack(const uint32_t *w, float *t)
{
    for (int k = 0; k < NORM_VEC; ++k)
        t[k] = ck_code_to_f32(NORM_XT, (k & 1) ? (ck_opaque_u32(w[k >> 1]) >> 16)
                                               : (ck_opaque_u32(w[k >> 1]) & 0xffffu));
}

/* a of register round it < NORM_CACHE (a constant: unrolled loops only) */
CK_DEVICE void norm_loop_reg(const norm_loop_cache *c, int it, float *t)
{
    if (NORM_RAW)
        norm_loop_unpack(c->w[NORM_RAW ? it : 0], t);
    else
        for (int k = 0; k < NORM_VEC; ++k)
            t[k] = c->f[NORM_RAW ? 0 : it][k];
}

/* a of shared-memory round it (NORM_CACHE <= it < NORM_LOOP_HELD) */
CK_DEVICE void norm_loop_staged(const ck_u32x4 *stage, int it, int lane, float *t)
{
    ck_u32x4 u = ck_ld16(&stage[(it - NORM_CACHE) * NORM_G + lane]);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
    norm_loop_unpack(w, t);
}

/* stage read: vector v of the row as a (residual_out written), its statistics added */
CK_DEVICE void norm_loop_read(const ck_norm_fwd_kargs *a, long long row, int v, float *t,
                              ck_welford *w, float *ss)
{
    norm_fwd_get((const char *)a->x, a->sx, (const char *)a->residual, a->sr, row, v, t);
    if (NORM_OT >= 0)
        norm_store((char *)a->resout +
                       (row * a->so + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_OT),
                   NORM_OT, t);
    if (NORM_KIND == 0)
        *w = ck_welford_add(*w, t, NORM_VEC);
    else if (NORM_KIND == 1)
        for (int k = 0; k < NORM_VEC; ++k)
            *ss = fmaf(t[k], t[k], *ss);
}

/* stage read of the held rounds (NORM_RAW): every copy into shared memory and every register
 * load issued before any is used */
CK_DEVICE void norm_loop_issue(const ck_norm_fwd_kargs *a, long long row, int rank, int lane,
                               norm_loop_cache *c, ck_u32x4 *stage)
{
    const char *x = (const char *)a->x + row * a->sx * 2;
    for (int s = 0; s < NORM_SMEM; ++s)
        if (norm_loop_holds(NORM_CACHE + s, rank, lane))
            ck_cp_async_16(&stage[s * NORM_G + lane],
                           x + (long long)norm_loop_vidx(NORM_CACHE + s, rank, lane) * 16);
    ck_cp_async_commit();
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        if (norm_loop_holds(it, rank, lane))
            ck_ld_words(x + (long long)norm_loop_vidx(it, rank, lane) * 16, 16,
                        c->w[NORM_RAW ? it : 0]);
    }
}

/* the thread's part of held round it (NORM_RAW) added: count, sum (layernorm) or sum of squares
 * (RMSNorm) */
CK_DEVICE void norm_loop_sum(const float *t, float *cnt, float *sum, float *ss)
{
    *cnt += (float)NORM_VEC;
    for (int k = 0; k < NORM_VEC; ++k) {
        if (NORM_KIND == 0)
            *sum += t[k];
        else
            *ss = fmaf(t[k], t[k], *ss);
    }
}

CK_DEVICE void norm_loop_dev(const float *t, float mean, float *m2)
{
    for (int k = 0; k < NORM_VEC; ++k) {
        float d = t[k] - mean;
        *m2 = fmaf(d, d, *m2);
    }
}

/* stage stats, the thread's part of the held rounds (NORM_RAW): its exact two-pass Welford
 * state (layernorm) or sum of squares (RMSNorm); the shared-memory rounds in a rolled loop */
CK_DEVICE void norm_loop_held_stats(const norm_loop_cache *c, const ck_u32x4 *stage, int rank,
                                    int lane, ck_welford *w, float *ss)
{
    float sum = 0.0f, cnt = 0.0f, t[NORM_VEC];
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        if (norm_loop_holds(it, rank, lane)) {
            norm_loop_reg(c, it, t);
            norm_loop_sum(t, &cnt, &sum, ss);
        }
    }
    ck_cp_async_wait_all(); /* the thread's own copies: no barrier */
    CK_NO_UNROLL for (int it = NORM_CACHE; it < NORM_LOOP_HELD; ++it)
    {
        if (norm_loop_holds(it, rank, lane)) {
            norm_loop_staged(stage, it, lane, t);
            norm_loop_sum(t, &cnt, &sum, ss);
        }
    }
    if (NORM_KIND != 0)
        return;
    /* a division (not a multiplication): the compiler then keeps the two passes apart */
    w->n = cnt;
    w->mean = cnt > 0.0f ? sum / cnt : 0.0f;
    w->m2 = 0.0f;
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        if (norm_loop_holds(it, rank, lane)) {
            norm_loop_reg(c, it, t);
            norm_loop_dev(t, w->mean, &w->m2);
        }
    }
    CK_NO_UNROLL for (int it = NORM_CACHE; it < NORM_LOOP_HELD; ++it)
    {
        if (norm_loop_holds(it, rank, lane)) {
            norm_loop_staged(stage, it, lane, t);
            norm_loop_dev(t, w->mean, &w->m2);
        }
    }
}

/* stage stats: the row's mean and rstd from every thread's part (the cluster's when > 1) */
CK_DEVICE void norm_loop_stats(ck_welford w, float ss, float eps, float *red, float *slot,
                               unsigned long long *bar, float *mean, float *rstd)
{
    *mean = 0.0f;
    *rstd = 1.0f;
    if (NORM_KIND == 0) {
        w = ck_group_welford(w, NORM_G, NORM_EVEN, red);
        if (NORM_CLUSTER > 1)
            w = ck_cluster_welford(w, slot, bar, ck_thread_idx_x(), NORM_CLUSTER);
        *mean = w.mean;
        *rstd = 1.0f / sqrtf(w.m2 * (1.0f / (float)NORM_N) + eps);
    } else if (NORM_KIND == 1) {
        ss = ck_group_reduce_f32(ss, CK_RED_SUM, NORM_G, red);
        if (NORM_CLUSTER > 1)
            ss = ck_cluster_reduce_f32(ss, CK_RED_SUM, slot, bar, ck_thread_idx_x(), NORM_CLUSTER);
        *rstd = 1.0f / sqrtf(ss * (1.0f / (float)NORM_N) + eps);
    }
}

/* y of vector v from its a (t), before quantization */
CK_DEVICE void norm_loop_y(const ck_norm_fwd_kargs *a, int v, float mean, float rstd, float *t)
{
    norm_fwd_y((const char *)a->gamma, (const char *)a->beta, (const char *)a->smooth, v, mean,
               rstd, t);
}

/* stage write: y (quantized with scale when NORM_QMAX > 0) of vector v stored */
CK_DEVICE void norm_loop_write(const ck_norm_fwd_kargs *a, long long row, int v, norm_quant q,
                               float *t)
{
    char *y = (char *)a->y + (row * a->sy + (long long)v * NORM_VEC) * NORM_ESIZE(NORM_YT);
    if (NORM_QMAX == 0)
        norm_store(y, NORM_YT, t);
    else if (NORM_QFAST && q.fast)
        norm_quant_store(y, q, 1, t);
    else
        norm_quant_store(y, q, 0, t);
}

/* a of round it >= NORM_CACHE: shared memory or global memory */
CK_DEVICE void norm_loop_get(const ck_norm_fwd_kargs *a, long long row, const ck_u32x4 *stage,
                             int it, int rank, int lane, float *t)
{
    if (it < NORM_LOOP_HELD)
        norm_loop_staged(stage, it, lane, t);
    else
        norm_fwd_get((const char *)a->x, a->sx, (const char *)a->residual, a->sr, row,
                     norm_loop_vidx(it, rank, lane), t);
}

/* stage amax: the block's max |y| (the f32 cache keeps y for the write stage) */
CK_DEVICE float norm_loop_amax(const ck_norm_fwd_kargs *a, long long row, norm_loop_cache *c,
                               const ck_u32x4 *stage, int rank, int lane, float mean, float rstd)
{
    float amax = 0.0f, t[NORM_VEC];
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        if (norm_loop_holds(it, rank, lane)) {
            float *y = NORM_RAW ? t : c->f[NORM_RAW ? 0 : it];
            if (NORM_RAW)
                norm_loop_reg(c, it, y);
            norm_loop_y(a, norm_loop_vidx(it, rank, lane), mean, rstd, y);
            for (int k = 0; k < NORM_VEC; ++k)
                amax = ck_amax_f32(amax, y[k]);
        }
    }
    for (int it = NORM_CACHE; it < NORM_ITERS; ++it)
        if (norm_loop_holds(it, rank, lane)) {
            norm_loop_get(a, row, stage, it, rank, lane, t);
            norm_loop_y(a, norm_loop_vidx(it, rank, lane), mean, rstd, t);
            for (int k = 0; k < NORM_VEC; ++k)
                amax = ck_amax_f32(amax, t[k]);
        }
    return amax;
}

CK_DEVICE void ck_norm_fwd_looped(ck_norm_fwd_kargs a)
{
    CK_SHARED_ARRAY(float, red, 3 * 32);
    CK_SHARED_ARRAY(float, red_q, 32);
    CK_SHARED_ARRAY(float, cl_slot, 2 * 4 * NORM_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, cl_bar, 2);
    ck_u32x4 *stage = (ck_u32x4 *)ck_dynamic_shared(); /* NORM_SMEM x NORM_G vectors */
    if (NORM_CLUSTER > 1) {
        const unsigned bytes[2] = {(NORM_KIND == 0 ? 12u : 4u) * NORM_CLUSTER, 4u * NORM_CLUSTER};
        ck_cluster_exchange_init(cl_bar, bytes, 2);
    }
    const int lane = (int)ck_thread_idx_x();
    const int rank = NORM_CLUSTER > 1 ? (int)ck_cluster_ctarank() : 0;
    /* one row per cluster (several per block only without clusters, past 2^31 - 1 rows) */
    for (long long row = (long long)(ck_block_idx_x() / NORM_CLUSTER); row < a.rows;
         row += (long long)(ck_grid_dim_x() / NORM_CLUSTER)) {
        norm_loop_cache c;
        ck_welford w = {0.0f, 0.0f, 0.0f}, ws = {0.0f, 0.0f, 0.0f};
        float ss = 0.0f;
        if (NORM_RAW)
            norm_loop_issue(&a, row, rank, lane, &c, stage);
        else
            CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
            {
                if (norm_loop_holds(it, rank, lane))
                    norm_loop_read(&a, row, norm_loop_vidx(it, rank, lane), c.f[NORM_RAW ? 0 : it],
                                   &ws, &ss);
            }
        for (int it = NORM_CACHE + (NORM_RAW ? NORM_SMEM : 0); it < NORM_ITERS; ++it) {
            float t[NORM_VEC];
            if (norm_loop_holds(it, rank, lane))
                norm_loop_read(&a, row, norm_loop_vidx(it, rank, lane), t, &ws, &ss);
        }
        if (NORM_RAW) { /* the held rounds' state first, the streamed rounds' merged after */
            norm_loop_held_stats(&c, stage, rank, lane, &w, &ss);
            if (NORM_LOOP_HELD < NORM_ITERS)
                w = ck_welford_merge(w, ws);
        } else {
            w = ws;
        }
        if (NORM_CLUSTER > 1)
            ck_cluster_wait(); /* every block's barriers are set up before the exchanges */
        float mean, rstd;
        norm_loop_stats(w, ss, a.eps, red, cl_slot, &cl_bar[0], &mean, &rstd);
        if (lane == 0 && rank == 0) {
            if (NORM_MEAN)
                a.mean_out[row] = mean;
            if (NORM_RSTD)
                a.rstd_out[row] = rstd;
        }
        norm_quant q = norm_quant_of(1.0f);
        if (NORM_QMAX > 0) {
            float amax = norm_loop_amax(&a, row, &c, stage, rank, lane, mean, rstd);
            amax = ck_group_reduce_f32(amax, CK_RED_NANMAX, NORM_G, red_q);
            if (NORM_CLUSTER > 1)
                amax = ck_cluster_reduce_f32(amax, CK_RED_NANMAX, cl_slot + 4 * NORM_CLUSTER,
                                             &cl_bar[1], ck_thread_idx_x(), NORM_CLUSTER);
            q = norm_quant_of(amax / (float)(NORM_QMAX > 0 ? NORM_QMAX : 1));
            if (lane == 0 && rank == 0)
                a.yscale[row] = q.scale;
        }
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            int v = norm_loop_vidx(it, rank, lane);
            if (norm_loop_holds(it, rank, lane)) {
                float t[NORM_VEC];
                float *y = NORM_RAW ? t : c.f[NORM_RAW ? 0 : it];
                if (NORM_RAW)
                    norm_loop_reg(&c, it, y);
                if (NORM_RAW || NORM_QMAX == 0)
                    norm_loop_y(&a, v, mean, rstd, y); /* f32 cache, quantized: y is cached */
                norm_loop_write(&a, row, v, q, y);
            }
        }
        for (int it = NORM_CACHE; it < NORM_ITERS; ++it) {
            int v = norm_loop_vidx(it, rank, lane);
            if (norm_loop_holds(it, rank, lane)) {
                float t[NORM_VEC];
                norm_loop_get(&a, row, stage, it, rank, lane, t);
                norm_loop_y(&a, v, mean, rstd, t);
                norm_loop_write(&a, row, v, q, t);
            }
        }
        ck_sync_threads(); /* the reduction buffers are reused by the next row */
    }
}
