/*
 * The attention decode pipeline (s_q <= 16, FlashDecoding's shape): bandwidth bound, so one
 * block reads each K / V tile once for every query row of a head group (the h_q / h_k query
 * heads sharing a key/value head, times s_q rows: ATTN_TILE_M rows per block). Block
 * (chunk * splits + part, key/value head, batch): the part's key tiles of ATTN_WARPS *
 * ATTN_TILE_N keys stream through a ring of ATTN_DEC_STAGES stages of shared memory (cp.async:
 * the copies of tile kt + stages - 1 are issued while tile kt is computed); warp w takes keys
 * w * ATTN_TILE_N .. of each tile with the sm80 pipeline's stages (S = Q K^T, variants, online
 * softmax, O += P V), so that every warp holds all rows for its keys; at the end the warps'
 * (m, l, O) merge in shared memory, and the block writes O and LSE, or with split-KV its part's
 * normalized O (f32) and LSE to the workspace for the combine kernel
 * (splitkv_combine_kernel.h).
 *
 * Paged K / V with a warp's keys in one page (ATTN_PAGED 1): the page numbers of a tile are read
 * from the block table one tile before its copies are issued, so that the table's latency does
 * not sit between the barrier and the copies.
 *
 * Included after the ATTN_* defines of the parameter table (kernel.c) with ATTN_MI =
 * ATTN_TILE_M / 16 (every warp owns all rows).
 */
#ifndef CK_OPS_ATTN_DECODE_PIPELINE_KERNEL_H
#define CK_OPS_ATTN_DECODE_PIPELINE_KERNEL_H

#define ATTN_MI (ATTN_TILE_M / 16)
#include "ops/attention/fwd_sm80_pipeline_kernel.h"

#ifndef ATTN_DEC_STAGES
#define ATTN_DEC_STAGES 2
#endif
#define DEC_TILE        (ATTN_WARPS * ATTN_TILE_N) /* keys per block tile */
#define DEC_STAGE_BYTES (ATTN_WARPS * ATTN_STAGE)  /* K and V of a block tile */
/* cp.async groups that may stay pending when a tile's K (or V) must have landed: the K and V
 * groups of the stages - 2 tiles after it, and one of the tile stages - 1 ahead */
#define DEC_PENDING (2 * ATTN_DEC_STAGES - 3)

/* Query row r of the block (r0 + r of the group) into line r of the Q tile: head h0 + (r0 + r)
 * / sq, position (r0 + r) % sq; lines at or past nrows - r0 zero. */
CK_DEVICE void dec_load_q(unsigned char *tile, const ck_attn_kargs *ka, const unsigned short *q,
                          long long r0, long long nrows)
{
    int cpl = ATTN_Q_LINE / 16;
    for (int c = (int)ck_thread_linear(); c < ATTN_TILE_M * cpl; c += ATTN_THREADS) {
        int l = c / cpl, by = (c % cpl) * 16;
        long long r = r0 + l;
        int ok = r < nrows;
        const unsigned short *src = q + (ok ? (r / ka->sq) * ka->q_h + (r % ka->sq) * ka->q_s : 0);
        unsigned char *dst = tile + ck_swz_offset(l, by, ATTN_Q_LINE);
#if ATTN_Q_VEC
        ck_cp_async_16_zfill(dst, (const unsigned char *)src + by, ok ? 16u : 0u);
#else
        for (int e = 0; e < 8; ++e)
            ((unsigned short *)dst)[e] = ok ? src[by / 2 + e] : 0;
#endif
    }
}

/* The block table's page of warp w's first key in block tile kt, for w < ATTN_WARPS (0 past the
 * keys; outside the pool: 0, the sequence was refused by attn_paged_bad before). */
CK_DEVICE void dec_pages(int *pg, const ck_attn_kargs *ka, long long kt)
{
#if ATTN_PAGED == 1
    CK_UNROLL for (int w = 0; w < ATTN_WARPS; ++w)
    {
        long long n0 = kt * DEC_TILE + w * ATTN_TILE_N;
        int x = n0 < ka->sk ? ka->table[ka->batch * ka->max_pages + n0 / ka->page] : 0;
        pg[w] = x < 0 || x >= ka->num_pages ? 0 : x;
    }
#else
    (void)pg, (void)ka, (void)kt;
#endif
}

/* Issue the copies of K (which 0) or V (which 1) of block tile kt: warp w's ATTN_TILE_N keys
 * into its part of the stage (paged: from page pg[w] when ATTN_TILE_N divides the page size,
 * else row by row). */
CK_DEVICE void dec_load(unsigned char *stage, const ck_attn_kargs *ka, const unsigned short *kv,
                        long long kt, int which, const int *pg)
{
    (void)pg;
    CK_UNROLL for (int w = 0; w < ATTN_WARPS; ++w)
    {
        long long n0 = kt * DEC_TILE + w * ATTN_TILE_N;
        long long ld = which ? ka->v_s : ka->k_s;
        const unsigned short *src = kv + n0 * ld;
        unsigned char *dst = stage + w * ATTN_STAGE + (which ? ATTN_K_BYTES : 0);
#if ATTN_PAGED == 2 /* the warp's keys may straddle pages: each row from its page */
        attn_copy_rows_paged(dst, which ? ATTN_V_LINE : ATTN_Q_LINE, ATTN_TILE_N, ka, kv,
                             which ? ka->v_b : ka->k_b, ld, n0, ka->sk - n0,
                             which ? ATTN_V_VEC : ATTN_K_VEC, ATTN_THREADS);
        continue;
#elif ATTN_PAGED
        src = kv + pg[w] * (which ? ka->v_b : ka->k_b) + (n0 % ka->page) * ld;
#endif
        attn_copy(dst, which ? ATTN_V_LINE : ATTN_Q_LINE, ATTN_TILE_N, src, ld, ka->sk - n0,
                  which ? ATTN_V_VEC : ATTN_K_VEC);
    }
}

/* Merge the warps' (m, l, o) into warp 0's, one warp at a time through `buf` (rows of m, l,
 * then ATTN_DV floats): deterministic. l is the full row sum (quad-reduced) on entry. */
CK_DEVICE void dec_merge(float (*o)[ATTN_NO][4], attn_rows *st, float *buf)
{
    int warp = (int)ck_warp_id(), lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    float *ml = buf, *ob = buf + 2 * ATTN_TILE_M;
    for (int w = 1; w < ATTN_WARPS; ++w) {
        ck_sync_threads();
        if (warp == w)
            CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int h = 0; h < 2; ++h)
            {
                int r = mi * 16 + g + 8 * h;
                if (t == 0)
                    ml[2 * r] = st->m[mi][h], ml[2 * r + 1] = st->l[mi][h];
                CK_UNROLL for (int n = 0; n < ATTN_NO; ++n) CK_UNROLL for (int e = 0; e < 2; ++e)
                    ob[r * ATTN_DV + n * 8 + 2 * t + e] = o[mi][n][2 * h + e];
            }
        ck_sync_threads();
        if (warp == 0)
            CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int h = 0; h < 2; ++h)
            {
                int r = mi * 16 + g + 8 * h;
                float mw = ml[2 * r], lw = ml[2 * r + 1], m0 = st->m[mi][h];
                float mn = fmaxf(m0, mw), base = mn == ATTN_NEG_INF ? 0.0f : mn;
                float a0 = ck_exp2_ftz(m0 - base), aw = ck_exp2_ftz(mw - base);
                st->m[mi][h] = mn;
                st->l[mi][h] = fmaf(st->l[mi][h], a0, lw * aw);
                CK_UNROLL for (int n = 0; n < ATTN_NO; ++n) CK_UNROLL for (int e = 0; e < 2; ++e)
                    o[mi][n][2 * h + e] =
                        fmaf(o[mi][n][2 * h + e], a0, ob[r * ATTN_DV + n * 8 + 2 * t + e] * aw);
            }
    }
}

/* Warp 0: O = o / l and LSE of rows r0 .. (below nrows) to O / LSE, or to part `part`'s rows
 * of the workspace (split-KV; nb batches). */
CK_DEVICE void dec_store(float (*o)[ATTN_NO][4], const attn_rows *st, const ck_attn_kargs *ka,
                         long long b, long long h0, long long r0, long long nrows, int part,
                         long long nb)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int hh = 0; hh < 2; ++hh)
    {
        long long r = r0 + mi * 16 + g + 8 * hh;
        if (r >= nrows)
            continue;
        long long h = h0 + r / ka->sq, i = r % ka->sq, row = (b * ka->hq + h) * ka->sq + i;
        float l = st->l[mi][hh], inv = l > 0.0f ? 1.0f / l : 0.0f;
        float lse = l > 0.0f ? (st->m[mi][hh] + log2f(l)) * 0.69314718055994531f : ATTN_NEG_INF;
        if (ka->splits > 1) {
            row += (long long)part * nb * ka->hq * ka->sq;
            CK_UNROLL for (int n = 0; n < ATTN_NO; ++n) CK_UNROLL for (int e = 0; e < 2; ++e)
                ka->ws_o[row * ATTN_DV + n * 8 + 2 * t + e] = o[mi][n][2 * hh + e] * inv;
            if (t == 0)
                ka->ws_lse[row] = lse;
            continue;
        }
        unsigned short *out = (unsigned short *)ka->o + b * ka->o_b + h * ka->o_h + i * ka->o_s;
        CK_UNROLL for (int n = 0; n < ATTN_NO; ++n)
        {
            unsigned w =
                ck_pack_f32x2_b16(o[mi][n][2 * hh] * inv, o[mi][n][2 * hh + 1] * inv, ATTN_BF16);
            out[n * 8 + 2 * t] = (unsigned short)(w & 0xFFFFu);
            out[n * 8 + 2 * t + 1] = (unsigned short)(w >> 16);
        }
        if (ka->lse && t == 0)
            ka->lse[row] = lse;
    }
}

/* A sequence with a page outside the pool: NaN for O and LSE of the block's rows (part 0). */
CK_DEVICE void dec_poison(const ck_attn_kargs *ka, long long b, long long h0, long long r0,
                          long long nrows)
{
    for (long long x = ck_thread_linear(); x < ATTN_TILE_M * ATTN_DV; x += ATTN_THREADS) {
        long long r = r0 + x / ATTN_DV, c = x % ATTN_DV;
        if (r >= nrows)
            continue;
        long long h = h0 + r / ka->sq, i = r % ka->sq;
        ((unsigned short *)ka->o)[b * ka->o_b + h * ka->o_h + i * ka->o_s + c] = 0x7FC0u;
        if (ka->lse && c == 0)
            ka->lse[(b * ka->hq + h) * ka->sq + i] = ck_u32_as_f32(0x7FC00000u);
    }
}

CK_DEVICE void attn_decode_main(ck_attn_kargs ka)
{
    long long hk = ck_block_idx_y(), b = ck_block_idx_z(), h0 = hk * ka.group;
    int part = (int)(ck_block_idx_x() % ka.splits);
    long long r0 = (long long)(ck_block_idx_x() / ka.splits) * ATTN_TILE_M;
    long long nrows = (long long)ka.group * ka.sq;
    const unsigned short *q = (const unsigned short *)ka.q + b * ka.q_b + h0 * ka.q_h;
    const unsigned short *k = (const unsigned short *)ka.k + b * ka.k_b + hk * ka.k_h;
    const unsigned short *v = (const unsigned short *)ka.v + b * ka.v_b + hk * ka.v_h;
    ka.batch = (int)b;
#if ATTN_PAGED
    k = (const unsigned short *)ka.k + hk * ka.k_h;
    v = (const unsigned short *)ka.v + hk * ka.v_h;
    if (attn_paged_bad(&ka, b, &ka.sk)) {
        if (part == 0)
            dec_poison(&ka, b, h0, r0, nrows);
        return; /* the combine kernel skips such rows (their LSE is NaN) */
    }
#endif
    long long off = ka.bottom_right ? ka.sk - ka.sq : 0;
    ka.lo = ka.left < 0 ? -(1LL << 62) : off - ka.left;
    ka.hi = ka.right < 0 ? (1LL << 62) : off + ka.right;
    /* the block tiles holding a visible key of some row, then this part's share of them */
    long long jlo = ka.lo < 0 ? 0 : ka.lo, jhi = ka.sq - 1 + ka.hi;
    jhi = jhi < ka.sk - 1 ? jhi : ka.sk - 1;
    long long t0 = jlo / DEC_TILE, t1 = jhi < jlo ? t0 : jhi / DEC_TILE + 1;
    long long per = (t1 - t0 + ka.splits - 1) / ka.splits;
    long long begin = t0 + part * per, end = begin + per < t1 ? begin + per : t1;
    end = end > begin ? end : begin;

    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    unsigned char *sq = smem, *stages = smem + ATTN_Q_BYTES;
    int warp = (int)ck_warp_id();
    float s[ATTN_MI][ATTN_NS][4], o[ATTN_MI][ATTN_NO][4];
    attn_rows st;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int x = 0; x < 2; ++x)
    {
        st.m[mi][x] = ATTN_NEG_INF;
        st.l[mi][x] = 0.0f;
        CK_UNROLL for (int n = 0; n < ATTN_NO; ++n) o[mi][n][2 * x] = o[mi][n][2 * x + 1] = 0.0f;
    }
    /* the sm80 pipeline's schedule over a ring of ATTN_DEC_STAGES: K and V of a tile are
     * separate cp.async groups (empty ones past the part keep the count) */
    int pg[ATTN_WARPS] = {0};
    dec_load_q(sq, &ka, q, r0, nrows);
    for (int x = 0; x < ATTN_DEC_STAGES - 1; ++x) {
        unsigned char *stage = stages + x * DEC_STAGE_BYTES;
        dec_pages(pg, &ka, begin + x);
        if (begin + x < end)
            dec_load(stage, &ka, k, begin + x, 0, pg);
        ck_cp_async_commit();
        if (begin + x < end)
            dec_load(stage, &ka, v, begin + x, 1, pg);
        ck_cp_async_commit();
    }
    dec_pages(pg, &ka, begin + ATTN_DEC_STAGES - 1);
    for (long long kt = begin; kt < end; ++kt) {
        long long ahead = kt + ATTN_DEC_STAGES - 1;
        unsigned char *cur = stages + (int)((kt - begin) % ATTN_DEC_STAGES) * DEC_STAGE_BYTES;
        unsigned char *nxt = stages + (int)((ahead - begin) % ATTN_DEC_STAGES) * DEC_STAGE_BYTES;
        long long j0 = kt * DEC_TILE + warp * ATTN_TILE_N;
        ck_cp_async_wait(DEC_PENDING); /* K of tile kt has landed */
        ck_sync_threads(); /* ... for every thread; every warp is done with tile kt - 1 */
        if (ahead < end)
            dec_load(nxt, &ka, k, ahead, 0, pg);
        ck_cp_async_commit();
        attn_scores(s, sq, cur + warp * ATTN_STAGE, 0);
        if (ka.cap_in > 0.0f)
            attn_softcap(s, ka.cap_in, ka.cap_out);
#if ATTN_BIAS || ATTN_ALIBI
        attn_add_bias(s, &ka, b, h0, r0, ka.sq, nrows, j0);
#endif
        attn_mask_rows(s, &ka, r0, ka.sq, j0);
        attn_softmax(s, o, &st, ka.scale_log2);
#if ATTN_DROPOUT
        attn_dropout(s, &ka, b, h0, r0, ka.sq, nrows, j0);
#endif
        ck_cp_async_wait(DEC_PENDING); /* V of tile kt has landed */
        ck_sync_threads();
        if (ahead < end)
            dec_load(nxt, &ka, v, ahead, 1, pg);
        ck_cp_async_commit();
        dec_pages(pg, &ka, ahead + 1); /* read now, used by the next iteration's copies */
        attn_pv(o, (const float(*)[ATTN_NS][4])s, cur + warp * ATTN_STAGE + ATTN_K_BYTES);
    }
    ck_cp_async_wait_all();
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int x = 0; x < 2; ++x)
    {
        st.l[mi][x] += ck_shfl_xor_f32(st.l[mi][x], 1);
        st.l[mi][x] += ck_shfl_xor_f32(st.l[mi][x], 2);
    }
    dec_merge(o, &st, (float *)stages);
    if (warp == 0)
        dec_store(o, &st, &ka, b, h0, r0, nrows, part, (long long)ck_grid_dim_z());
}

#endif
