/*
 * Layernorm / RMSNorm / smooth-quant forward over long rows (device C): the looped pipeline, for
 * hidden sizes beyond what the registers of one block hold (up to 1,048,576; chosen by the
 * policy above 65,536, or forced by a tuning entry "loop,G,C,CACHE").
 *
 * One row per NORM_CLUSTER blocks of NORM_G threads (a thread-block cluster when > 1; the grid
 * is rows x NORM_CLUSTER, one row per cluster). Block `rank` holds vectors
 * (it * NORM_CLUSTER + rank) * NORM_G + lane, it < NORM_ITERS; the first NORM_CACHE of them stay
 * in registers (f32), the rest are streamed: read again (from L2 - a cluster's row is in flight
 * on few SMs, so the rows in flight fit it) in every pass that needs them. Stages:
 *   read      a = x (+ residual), residual_out written, the thread's statistics
 *   stats     block (Chan's merge / a sum) then cluster (st.async exchange) reductions
 *   amax      quantized y: the row's max |y| (cached vectors keep y)
 *   write     y (quantized: round(y / scale)) for every vector
 * Constants as norm_fwd_kernel.h documents (NORM_RAW 0, NORM_RPB 1, NORM_BLOCK = NORM_G);
 * branches on them are constant conditions the compiler folds.
 */
#include "ops/norm/norm_fwd_quant_kernel.h"
#include "ops/norm/norm_fwd_stages_kernel.h"

/* vector of the row held by thread `lane` of cluster block `rank` in round `it` */
CK_DEVICE int norm_loop_vidx(int it, int rank, int lane)
{
    return (it * NORM_CLUSTER + rank) * NORM_G + lane;
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

CK_DEVICE void ck_norm_fwd_looped(ck_norm_fwd_kargs a)
{
    CK_SHARED_ARRAY(float, red, 3 * 32);
    CK_SHARED_ARRAY(float, red_q, 32);
    CK_SHARED_ARRAY(float, cl_slot, 2 * 4 * NORM_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, cl_bar, 2);
    if (NORM_CLUSTER > 1) {
        const unsigned bytes[2] = {(NORM_KIND == 0 ? 12u : 4u) * NORM_CLUSTER, 4u * NORM_CLUSTER};
        ck_cluster_exchange_init(cl_bar, bytes, 2);
    }
    const int lane = (int)ck_thread_idx_x();
    const int rank = NORM_CLUSTER > 1 ? (int)ck_cluster_ctarank() : 0;
    /* one row per cluster (several per block only without clusters, past 2^31 - 1 rows) */
    for (long long row = (long long)(ck_block_idx_x() / NORM_CLUSTER); row < a.rows;
         row += (long long)(ck_grid_dim_x() / NORM_CLUSTER)) {
        float cache[NORM_CACHE > 0 ? NORM_CACHE : 1][NORM_VEC];
        ck_welford w = {0.0f, 0.0f, 0.0f};
        float ss = 0.0f;
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            int v = norm_loop_vidx(it, rank, lane);
            if (NORM_EVEN || v < NORM_NV)
                norm_loop_read(&a, row, v, cache[it], &w, &ss);
        }
        for (int it = NORM_CACHE; it < NORM_ITERS; ++it) {
            int v = norm_loop_vidx(it, rank, lane);
            float t[NORM_VEC];
            if (NORM_EVEN || v < NORM_NV)
                norm_loop_read(&a, row, v, t, &w, &ss);
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
            float amax = 0.0f;
            CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
            {
                int v = norm_loop_vidx(it, rank, lane);
                if (NORM_EVEN || v < NORM_NV) {
                    norm_loop_y(&a, v, mean, rstd, cache[it]);
                    for (int k = 0; k < NORM_VEC; ++k)
                        amax = ck_amax_f32(amax, cache[it][k]);
                }
            }
            for (int it = NORM_CACHE; it < NORM_ITERS; ++it) {
                int v = norm_loop_vidx(it, rank, lane);
                if (NORM_EVEN || v < NORM_NV) {
                    float t[NORM_VEC];
                    norm_fwd_get((const char *)a.x, a.sx, (const char *)a.residual, a.sr, row, v,
                                 t);
                    norm_loop_y(&a, v, mean, rstd, t);
                    for (int k = 0; k < NORM_VEC; ++k)
                        amax = ck_amax_f32(amax, t[k]);
                }
            }
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
            if (NORM_EVEN || v < NORM_NV) {
                if (NORM_QMAX == 0)
                    norm_loop_y(&a, v, mean, rstd, cache[it]); /* quantized: y is cached */
                norm_loop_write(&a, row, v, q, cache[it]);
            }
        }
        for (int it = NORM_CACHE; it < NORM_ITERS; ++it) {
            int v = norm_loop_vidx(it, rank, lane);
            if (NORM_EVEN || v < NORM_NV) {
                float t[NORM_VEC];
                norm_fwd_get((const char *)a.x, a.sx, (const char *)a.residual, a.sr, row, v, t);
                norm_loop_y(&a, v, mean, rstd, t);
                norm_loop_write(&a, row, v, q, t);
            }
        }
        ck_sync_threads(); /* the reduction buffers are reused by the next row */
    }
}
