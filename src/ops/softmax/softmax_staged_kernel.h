/*
 * Softmax of long rows staged in shared memory (device C): the "staged" instance of ck_softmax.
 * Included by a source that src/ops/softmax/params.c generates after the constants of
 * softmax_kernel.h (SMX_TI, SMX_TO, SMX_MASK (bit 1 only: causal), SMX_LOG, SMX_N, SMX_VEC,
 * SMX_WIDE_Y) and:
 *
 *   SMX_G        threads per block
 *   SMX_CLUSTER  blocks per row (a thread-block cluster when > 1)
 *   SMX_PV       vectors (SMX_VEC elements) of a row held by one block (the last block's part
 *                may be shorter)
 *   SMX_V        vectors per thread (SMX_PV <= SMX_V * SMX_G)
 *   SMX_XU       16-byte units of x per vector (SMX_VEC * size of x / 16: 1 or 2)
 *   SMX_STAGES   2: each block keeps two row parts in dynamic shared memory and copies the next
 *                row's part (cp.async, 16 bytes) while it reduces and writes the current one;
 *                1: one part, copied at the start of each row
 *
 * The grid is persistent: cluster k (blocks k * SMX_CLUSTER ...) handles rows k, k + K, ...
 * (K = clusters in the grid). Per row, block b of the cluster holds vectors
 * [b * SMX_PV, (b + 1) * SMX_PV) of the row; thread t copies and later reads exactly the vectors
 * t, t + SMX_G, ... of that part (its own cp.async: no barrier guards the data). Each thread
 * computes (m, l) of its elements (max pass, then sum pass, over shared memory), the block
 * combines the pairs (warp shuffles, one barrier), the cluster exchanges the blocks' pairs
 * through distributed shared memory (one cluster barrier per row; the slots alternate between
 * two copies so that the next row needs no second barrier), and the write pass recomputes
 * exp2(u - m - log2 l) from shared memory. Traffic: x read once, y written once.
 *
 * Dynamic shared memory: SMX_STAGES * SMX_XU * SMX_V * SMX_G * 16 bytes; unit c of local vector
 * i lies at byte (c * SMX_V * SMX_G + i) * 16 of its stage (consecutive threads, consecutive
 * 16-byte words: no bank conflicts).
 */
#ifndef CK_OPS_SOFTMAX_STAGED_KERNEL_H
#define CK_OPS_SOFTMAX_STAGED_KERNEL_H

#include "ops/softmax/softmax_kernel.h" /* smx_diag, SMX_NVEC */

#define SMX_STRIDE (SMX_V * SMX_G)              /* 16-byte units between the unit planes */
#define SMX_STAGE  (SMX_XU * SMX_V * SMX_G * 16) /* bytes of one stage */

/* Is local vector j of this thread inside the row (and inside this block's part)? */
CK_DEVICE int smx_st_valid(int j, unsigned tid, unsigned rank)
{
    long long li = (long long)j * SMX_G + tid;
    if (SMX_PV % SMX_G != 0 && li >= SMX_PV)
        return 0;
    if (SMX_PV * SMX_CLUSTER != SMX_NVEC && (long long)rank * SMX_PV + li >= SMX_NVEC)
        return 0;
    return 1;
}

/* Copy this thread's vectors of row `row` (this block's part) into stage `st`. */
CK_DEVICE void smx_st_issue(char *st, const void *x, long long row, long long xs, unsigned tid,
                            unsigned rank)
{
    const char *xr = (const char *)x + row * xs * ck_dtype_size(SMX_TI);
    CK_UNROLL for (int j = 0; j < SMX_V; ++j)
    {
        if (smx_st_valid(j, tid, rank)) {
            long long li = (long long)j * SMX_G + tid;
            long long vi = (long long)rank * SMX_PV + li;
            CK_UNROLL for (int c = 0; c < SMX_XU; ++c)
                ck_cp_async_16(st + (c * SMX_STRIDE + li) * 16, xr + vi * (SMX_XU * 16) + c * 16);
        }
    }
}

/* The values x of local vector j (SMX_VEC floats, not yet scaled) from stage `st`. bf16: the
 * low half shifted up, the high half masked (no other conversion work). */
CK_DEVICE void smx_st_load(const char *st, int j, unsigned tid, float *u)
{
    long long li = (long long)j * SMX_G + tid;
    CK_UNROLL for (int c = 0; c < SMX_XU; ++c)
    {
        ck_u32x4 r = *(const ck_u32x4 *)(const void *)(st + (c * SMX_STRIDE + li) * 16);
        uint32_t w[4] = {r.x, r.y, r.z, r.w};
        CK_UNROLL for (int k = 0; k < 4; ++k)
        {
            if (SMX_TI == CK_NC_F32) {
                u[c * 4 + k] = ck_u32_as_f32(w[k]);
            } else if (SMX_TI == CK_NC_BF16) {
                u[c * 8 + 2 * k] = ck_u32_as_f32(w[k] << 16);
                u[c * 8 + 2 * k + 1] = ck_u32_as_f32(w[k] & 0xffff0000u);
            } else {
                u[c * 8 + 2 * k] = ck_fast_f16_to_f32(w[k] & 0xffffu);
                u[c * 8 + 2 * k + 1] = ck_fast_f16_to_f32(w[k] >> 16);
            }
        }
    }
}

/* Elements k > smx_st_lim(...) of local vector j are hidden by the causal mask (the result is
 * clamped to -1 .. SMX_VEC: an int comparison per element). */
CK_DEVICE int smx_st_lim(int j, unsigned tid, unsigned rank, long long diag)
{
#if SMX_MASK & 2
    long long d = diag - ((long long)rank * SMX_PV + (long long)j * SMX_G + tid) * SMX_VEC;
    return d < -1 ? -1 : d > SMX_VEC ? SMX_VEC : (int)d;
#else
    (void)j;
    (void)tid;
    (void)rank;
    (void)diag;
    return SMX_VEC;
#endif
}

CK_DEVICE void smx_staged(void *y, const void *x, long long rows, long long xs, long long ys,
                          long long cm, float scale2)
{
    CK_SHARED_ARRAY(float, smx_sred, 2 * 2 * (SMX_G / 32)); /* [parity][warp][m, l] */
#if SMX_CLUSTER > 1
    CK_SHARED_ARRAY(float, smx_scl, 4); /* [parity][m, l] of this block, read by the cluster */
    const unsigned rank = ck_cluster_ctarank();
#else
    const unsigned rank = 0;
#endif
    const unsigned tid = ck_thread_idx_x();
    const unsigned lane = ck_lane_id();
    const long long step = (long long)(ck_grid_dim_x() / SMX_CLUSTER);
    char *smem = (char *)ck_dynamic_shared();
    long long row = (long long)(ck_block_idx_x() / SMX_CLUSTER);
    int par = 0;
#if SMX_STAGES == 2
    if (row < rows)
        smx_st_issue(smem, x, row, xs, tid, rank);
    ck_cp_async_commit();
#endif
    for (; row < rows; row += step, par ^= 1) {
#if SMX_STAGES == 2
        const char *st = smem + par * SMX_STAGE;
        if (row + step < rows)
            smx_st_issue(smem + (par ^ 1) * SMX_STAGE, x, row + step, xs, tid, rank);
        ck_cp_async_commit();
        ck_cp_async_wait(1); /* this row's copies (issued one row earlier) are done */
#else
        const char *st = smem;
        smx_st_issue(smem, x, row, xs, tid, rank);
        ck_cp_async_commit();
        ck_cp_async_wait(0);
#endif
        const long long diag = smx_diag(row, cm);
        /* this thread's (m, l) */
        float m = ck_neg_inf_f32();
        CK_UNROLL for (int j = 0; j < SMX_V; ++j)
        {
            if (smx_st_valid(j, tid, rank)) {
                float u[SMX_VEC];
                smx_st_load(st, j, tid, u);
                const int lim = smx_st_lim(j, tid, rank, diag);
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
                {
                    float t = u[k] * scale2;
                    m = fmaxf(m, k > lim ? ck_neg_inf_f32() : t);
                }
            }
        }
        const float mt = ck_ml_offset(m);
        float l = 0.0f;
        /* not unrolled fully (opaque trip count): a fully unrolled sum pass of 8 vectors needed
         * more registers than 2 blocks per SM leave; loaded again (opaque index) so that the
         * max pass's values are not kept live */
        const int nv = (int)ck_opaque_u32(SMX_V);
        for (int j = 0; j < nv; ++j) {
            if (smx_st_valid(j, tid, rank)) {
                float u[SMX_VEC];
                smx_st_load(st, j, ck_opaque_u32(tid), u);
                const int lim = smx_st_lim(j, tid, rank, diag);
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
                {
                    float t = fmaf(u[k], scale2, -mt);
                    l += exp2f(k > lim ? ck_neg_inf_f32() : t);
                }
            }
        }
        /* the block's pair (one barrier; the buffers alternate between rows) */
        ck_group_ml(&m, &l, SMX_G, smx_sred + par * 2 * (SMX_G / 32));
#if SMX_CLUSTER > 1
        /* the cluster's pair: each block publishes its pair, one cluster barrier, lane r of every
         * warp reads block r's */
        if (tid == 0) {
            smx_scl[2 * par] = m;
            smx_scl[2 * par + 1] = l;
        }
        ck_cluster_sync();
        if (lane < SMX_CLUSTER) {
            const float *q = (const float *)ck_cluster_map_shared(smx_scl, lane);
            m = q[2 * par];
            l = q[2 * par + 1];
        } else {
            m = ck_neg_inf_f32();
            l = 0.0f;
        }
        ck_lanes_ml(&m, &l, 32);
#endif
        /* y = exp2(u - (mx + log2 l)): the division folded into the exponent (one FMA and one
         * exp2 per element; log2f adds ~2^-20 relative). l = 0 (all -inf) gives -inf - -inf =
         * NaN, as 0/0; NaN in l gives NaN. */
        const float c = ck_ml_offset(m) + log2f(l);
        const long long yoff = row * ys;
        CK_UNROLL for (int j = 0; j < SMX_V; ++j)
        {
            if (smx_st_valid(j, tid, rank)) {
                float u[SMX_VEC];
                smx_st_load(st, j, tid, u);
                const int lim = smx_st_lim(j, tid, rank, diag);
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
                {
                    float t = fmaf(u[k], scale2, -c);
                    if (k > lim)
                        t = ck_neg_inf_f32();
#if SMX_LOG
                    u[k] = t * SMX_LN2;
#else
                    u[k] = exp2f(t);
#endif
                }
                long long vi = (long long)rank * SMX_PV + (long long)j * SMX_G + tid;
                smx_stv(y, yoff + vi * SMX_VEC, SMX_TO, SMX_VEC, SMX_WIDE_Y, u);
            }
        }
    }
#if SMX_CLUSTER > 1
    ck_cluster_sync(); /* no block leaves while another may still read its smx_scl */
#endif
}

#endif
