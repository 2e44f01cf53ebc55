/*
 * The sm_80 attention forward pipeline (FlashAttention-2's algorithm on mma.sync): one block per
 * (tile of ATTN_TILE_M query rows, query head, batch); each warp owns 16 * ATTN_MI rows. The
 * block walks the key/value tiles its mask leaves visible, K and V double-buffered in shared
 * memory by cp.async; per tile S = Q K^T (mma, f32), soft-capped (optional), masked, online softmax
 * on the accumulator fragment (running max m and sum l per row, in the exp2 domain), P rounded to
 * the input type and O += P V (mma); at the end O / l and LSE = (m + log2 l) ln 2.
 *
 * Included after the ATTN_* defines of the parameter table (params in kernel.c). Shared memory:
 * the Q tile, then per stage the K tile and the V tile, each one line per sequence position,
 * swizzled (ck_block_mma.h). Runs unchanged on sm_80 and later and on the emulator.
 */
#ifndef CK_OPS_ATTN_FWD_SM80_PIPELINE_KERNEL_H
#define CK_OPS_ATTN_FWD_SM80_PIPELINE_KERNEL_H

#include "ck_block_mma.h"
#include "ops/attention/attn_args_kernel.h"

#define ATTN_THREADS (ATTN_WARPS * 32)
#ifndef ATTN_MI
#define ATTN_MI (ATTN_TILE_M / ATTN_WARPS / 16) /* 16-row mma tiles per warp */
#endif
#define ATTN_NS      (ATTN_TILE_N / 8) /* n8 tiles of S per row block */
#define ATTN_NO      (ATTN_DV / 8)     /* n8 tiles of O per row block */
#define ATTN_Q_LINE  (ATTN_D * 2)
#define ATTN_V_LINE  (ATTN_DV * 2)
#define ATTN_Q_BYTES (ATTN_TILE_M * ATTN_Q_LINE)
#define ATTN_K_BYTES (ATTN_TILE_N * ATTN_Q_LINE)
#define ATTN_STAGE   (ATTN_K_BYTES + ATTN_TILE_N * ATTN_V_LINE)
#define ATTN_NEG_INF (ck_u32_as_f32(0xFF800000u))

#if ATTN_BF16
#define ATTN_MMA ck_mma_m16n8k16_f32_bf16
#else
#define ATTN_MMA ck_mma_m16n8k16_f32_f16
#endif

/* The per-thread state of the online softmax: for each of its rows (mi, half h: the fragment's
 * rows g and g + 8), the running max m (exp2 domain) and this thread's part of the sum l. */
typedef struct attn_rows {
    float m[ATTN_MI][2], l[ATTN_MI][2];
} attn_rows;

#include "ops/attention/attn_variants_kernel.h"

CK_DEVICE void attn_copy(unsigned char *tile, int line_bytes, int lines, const void *src,
                         long long ld, long long valid, int vec)
{
    if (vec)
        ck_copy_lines_async(tile, line_bytes, lines, (const unsigned char *)src, ld * 2, valid,
                            ATTN_THREADS);
    else
        ck_copy_lines_scalar(tile, line_bytes, lines, (const unsigned char *)src, ld * 2, valid,
                             ATTN_THREADS);
}

/* Issue the copies of key tile kt (which 0) or value tile kt (which 1) into `stage`. */
CK_DEVICE void attn_load(unsigned char *stage, const ck_attn_kargs *ka, const unsigned short *kv,
                         long long kt, int which)
{
    long long n0 = kt * ATTN_TILE_N;
#if ATTN_PAGED /* the tile lies in one page (ATTN_TILE_N divides the page size) */
    kv =
        attn_page_row(ka, kv, which ? ka->v_b : ka->k_b, which ? ka->v_s : ka->k_s, ka->batch, n0) -
        n0 * (which ? ka->v_s : ka->k_s);
#endif
    if (which == 0)
        attn_copy(stage, ATTN_Q_LINE, ATTN_TILE_N, kv + n0 * ka->k_s, ka->k_s, ka->sk - n0,
                  ATTN_K_VEC);
    else
        attn_copy(stage + ATTN_K_BYTES, ATTN_V_LINE, ATTN_TILE_N, kv + n0 * ka->v_s, ka->v_s,
                  ka->sk - n0, ATTN_V_VEC);
}

/* s = Q K^T for the warp's rows (row0 in the tile) and the key tile in `ks`. */
CK_DEVICE void attn_scores(float (*s)[ATTN_NS][4], const unsigned char *sq, const unsigned char *sk,
                           int row0)
{
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int n = 0; n < ATTN_NS; ++n)
        CK_UNROLL for (int r = 0; r < 4; ++r) s[mi][n][r] = 0.0f;
    CK_UNROLL for (int kk = 0; kk < ATTN_D / 16; ++kk)
    {
        unsigned a[ATTN_MI][4], b[4];
        CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi)
            ck_mma_frag_a16(a[mi], sq, ATTN_Q_LINE, row0 + mi * 16, kk);
        CK_UNROLL for (int n = 0; n < ATTN_NS; n += 2)
        {
            ck_mma_frag_b16(b, sk, ATTN_Q_LINE, n * 8, kk);
            CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi)
            {
                ATTN_MMA(s[mi][n], a[mi], b, s[mi][n]);
                ATTN_MMA(s[mi][n + 1], a[mi], b + 2, s[mi][n + 1]);
            }
        }
    }
}

/* The logit soft-cap: s = cap_out * tanh(s * cap_in) (softcap * tanh(scale s / softcap) once
 * the softmax applies the scale). */
CK_DEVICE void attn_softcap(float (*s)[ATTN_NS][4], float cap_in, float cap_out)
{
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int n = 0; n < ATTN_NS; ++n)
        CK_UNROLL for (int r = 0; r < 4; ++r) s[mi][n][r] = cap_out * tanhf(s[mi][n][r] * cap_in);
}

/* -inf where the mask hides (i, j) or j is past the keys: row i0 + mi * 16 + g (+ 8), column
 * j0 + n * 8 + 2t (+ 1) of the fragment. */
CK_DEVICE void attn_mask(float (*s)[ATTN_NS][4], const ck_attn_kargs *ka, long long i0,
                         long long j0)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int n = 0; n < ATTN_NS; ++n)
        CK_UNROLL for (int r = 0; r < 4; ++r)
    {
        long long i = i0 + mi * 16 + g + 8 * (r >> 1), j = j0 + n * 8 + 2 * t + (r & 1);
        if (j >= ka->sk || j < i + ka->lo || j > i + ka->hi)
            s[mi][n][r] = ATTN_NEG_INF;
    }
}

/* Online softmax of one tile: new row max, rescale of l and O by exp2(m_old - m_new), s
 * replaced by p = exp2(s * scale_log2 - m_new) (0 where masked). A row that has seen only
 * masked keys keeps m = -inf and subtracts 0 instead, so that exp2 gives 0, never NaN. */
CK_DEVICE void attn_softmax(float (*s)[ATTN_NS][4], float (*o)[ATTN_NO][4], attn_rows *st,
                            float scale_log2)
{
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int h = 0; h < 2; ++h)
    {
        float mx = ATTN_NEG_INF;
        CK_UNROLL for (int n = 0; n < ATTN_NS; ++n) mx =
            fmaxf(mx, fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]));
        mx = fmaxf(mx, ck_shfl_xor_f32(mx, 1)); /* the 4 lanes of a quad share the row */
        mx = fmaxf(mx, ck_shfl_xor_f32(mx, 2));
        float m_new = fmaxf(st->m[mi][h], mx * scale_log2);
        float base = m_new == ATTN_NEG_INF ? 0.0f : m_new;
        float alpha = ck_exp2_ftz(st->m[mi][h] - base);
        st->m[mi][h] = m_new;
        float sum = 0.0f;
        CK_UNROLL for (int n = 0; n < ATTN_NS; ++n) CK_UNROLL for (int e = 0; e < 2; ++e)
        {
            float p = ck_exp2_ftz(fmaf(s[mi][n][2 * h + e], scale_log2, -base));
            s[mi][n][2 * h + e] = p;
            sum += p;
        }
        st->l[mi][h] = fmaf(st->l[mi][h], alpha, sum);
        CK_UNROLL for (int n = 0; n < ATTN_NO; ++n)
        {
            o[mi][n][2 * h] *= alpha;
            o[mi][n][2 * h + 1] *= alpha;
        }
    }
}

/* o += P V: the C fragments of n-tiles 2k, 2k + 1 of P are the A fragment of k-slice k. */
CK_DEVICE void attn_pv(float (*o)[ATTN_NO][4], const float (*p)[ATTN_NS][4],
                       const unsigned char *sv)
{
    CK_UNROLL for (int kk = 0; kk < ATTN_TILE_N / 16; ++kk)
    {
        unsigned a[ATTN_MI][4], b[4];
        CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi)
        {
            a[mi][0] = ck_pack_f32x2_b16(p[mi][2 * kk][0], p[mi][2 * kk][1], ATTN_BF16);
            a[mi][1] = ck_pack_f32x2_b16(p[mi][2 * kk][2], p[mi][2 * kk][3], ATTN_BF16);
            a[mi][2] = ck_pack_f32x2_b16(p[mi][2 * kk + 1][0], p[mi][2 * kk + 1][1], ATTN_BF16);
            a[mi][3] = ck_pack_f32x2_b16(p[mi][2 * kk + 1][2], p[mi][2 * kk + 1][3], ATTN_BF16);
        }
        CK_UNROLL for (int n = 0; n < ATTN_NO; n += 2)
        {
            ck_mma_frag_b16_trans(b, sv, ATTN_V_LINE, kk, n * 8);
            CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi)
            {
                ATTN_MMA(o[mi][n], a[mi], b, o[mi][n]);
                ATTN_MMA(o[mi][n + 1], a[mi], b + 2, o[mi][n + 1]);
            }
        }
    }
}

/* O = o / l (0 for rows that saw no key) stored for rows below sq; LSE by the quad's lane 0. */
CK_DEVICE void attn_epilogue(float (*o)[ATTN_NO][4], attn_rows *st, const ck_attn_kargs *ka,
                             unsigned short *out, float *lse, long long i0)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int h = 0; h < 2; ++h)
    {
        float l = st->l[mi][h];
        l += ck_shfl_xor_f32(l, 1);
        l += ck_shfl_xor_f32(l, 2);
        float inv = l > 0.0f ? 1.0f / l : 0.0f;
        long long i = i0 + mi * 16 + g + 8 * h;
        if (i >= ka->sq)
            continue;
        unsigned short *row = out + i * ka->o_s;
        CK_UNROLL for (int n = 0; n < ATTN_NO; ++n)
        {
            unsigned w =
                ck_pack_f32x2_b16(o[mi][n][2 * h] * inv, o[mi][n][2 * h + 1] * inv, ATTN_BF16);
#if ATTN_O_PAIR
            *(unsigned *)(row + n * 8 + 2 * t) = w;
#else
            row[n * 8 + 2 * t] = (unsigned short)(w & 0xFFFFu);
            row[n * 8 + 2 * t + 1] = (unsigned short)(w >> 16);
#endif
        }
        if (lse && t == 0)
            lse[i] = l > 0.0f ? (st->m[mi][h] + log2f(l)) * 0.69314718055994531f : ATTN_NEG_INF;
    }
}

/* The key tiles [*begin, *end) holding a key visible to some query row of [i0, i0 + TILE_M). */
CK_DEVICE void attn_tile_range(const ck_attn_kargs *ka, long long i0, long long *begin,
                               long long *end)
{
    long long last = (i0 + ATTN_TILE_M < ka->sq ? i0 + ATTN_TILE_M : ka->sq) - 1;
    long long jlo = i0 + ka->lo < 0 ? 0 : i0 + ka->lo;
    long long jhi = last + ka->hi < ka->sk - 1 ? last + ka->hi : ka->sk - 1;
    *begin = jlo / ATTN_TILE_N;
    *end = jhi < jlo ? *begin : jhi / ATTN_TILE_N + 1;
}

/* Whether key tile kt needs the mask for some row of [i0, i0 + TILE_M). */
CK_DEVICE int attn_tile_partial(const ck_attn_kargs *ka, long long i0, long long kt)
{
    long long j0 = kt * ATTN_TILE_N, j1 = j0 + ATTN_TILE_N - 1, i1 = i0 + ATTN_TILE_M - 1;
    return j1 >= ka->sk || j0 < i1 + ka->lo || j1 > i0 + ka->hi;
}

/* One query tile (rows i0 .. i0 + TILE_M - 1 of the sequence at q / k / v / out / lse). */
CK_DEVICE void attn_fwd_tile(const ck_attn_kargs *kp, const unsigned short *q,
                             const unsigned short *k, const unsigned short *v, unsigned short *out,
                             float *lse, long long i0)
{
    ck_attn_kargs ka = *kp;
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    unsigned char *sq = smem, *stages = smem + ATTN_Q_BYTES;
    int row0 = (int)ck_warp_id() * ATTN_MI * 16;
    float s[ATTN_MI][ATTN_NS][4], o[ATTN_MI][ATTN_NO][4];
    attn_rows st;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int x = 0; x < 2; ++x)
    {
        st.m[mi][x] = ATTN_NEG_INF;
        st.l[mi][x] = 0.0f;
        CK_UNROLL for (int n = 0; n < ATTN_NO; ++n) o[mi][n][2 * x] = o[mi][n][2 * x + 1] = 0.0f;
    }
    long long begin, end;
    attn_tile_range(&ka, i0, &begin, &end);

    /* K and V of a tile are separate cp.async groups: S = Q K^T of tile kt starts when its K
     * has landed, while V of kt and K of kt + 1 are still in flight. Groups in flight at each
     * wait(1): the one waited for and the one issued after it. */
    attn_copy(sq, ATTN_Q_LINE, ATTN_TILE_M, q + i0 * ka.q_s, ka.q_s, ka.sq - i0, ATTN_Q_VEC);
    if (begin < end)
        attn_load(stages, &ka, k, begin, 0);
    ck_cp_async_commit(); /* Q, K of tile begin */
    if (begin < end)
        attn_load(stages, &ka, v, begin, 1);
    ck_cp_async_commit(); /* V of tile begin */
    for (long long kt = begin; kt < end; ++kt) {
        unsigned char *cur = stages + ((kt - begin) & 1) * ATTN_STAGE;
        unsigned char *nxt = stages + ((kt + 1 - begin) & 1) * ATTN_STAGE;
        ck_cp_async_wait(1); /* K of tile kt has landed (V of kt may be in flight) */
        ck_sync_threads();   /* ... for every thread; every warp is done with tile kt - 1 */
        if (kt + 1 < end)
            attn_load(nxt, &ka, k, kt + 1, 0);
        ck_cp_async_commit();
        attn_scores(s, sq, cur, row0);
        if (ka.cap_in > 0.0f)
            attn_softcap(s, ka.cap_in, ka.cap_out);
#if ATTN_BIAS || ATTN_ALIBI
        attn_add_bias(s, &ka, ka.batch, ka.head, i0 + row0, 1LL << 40, ka.sq, kt * ATTN_TILE_N);
#endif
        if (attn_tile_partial(&ka, i0, kt))
            attn_mask(s, &ka, i0 + row0, kt * ATTN_TILE_N);
        attn_softmax(s, o, &st, ka.scale_log2);
#if ATTN_DROPOUT
        attn_dropout(s, &ka, ka.batch, ka.head, i0 + row0, 1LL << 40, ka.sq, kt * ATTN_TILE_N);
#endif
        ck_cp_async_wait(1); /* V of tile kt has landed (K of kt + 1 may be in flight) */
        ck_sync_threads();
        if (kt + 1 < end)
            attn_load(nxt, &ka, v, kt + 1, 1);
        ck_cp_async_commit();
        attn_pv(o, (const float(*)[ATTN_NS][4])s, cur + ATTN_K_BYTES);
    }
    ck_cp_async_wait_all();
    attn_epilogue(o, &st, &ka, out, lse, i0 + row0);
}

/* Offset of sequence b's first row and its length: clamped [cu[b], cu[b + 1]) of [0, total]. */
CK_DEVICE void attn_seq(const int *cu, long long total, long long b, long long *first,
                        long long *len)
{
    long long a = cu[b], e = cu[b + 1];
    a = a < 0 ? 0 : a > total ? total : a;
    e = e < 0 ? 0 : e > total ? total : e;
    *first = a, *len = e > a ? e - a : 0;
}

/* Block (x, h, b): sequence b's query tiles x, x + gridDim.x, ... of query head h (one tile
 * with fixed lengths: the grid covers s_q). The band of visible keys is the sequence's. */
CK_DEVICE void attn_fwd_sm80_main(ck_attn_kargs ka)
{
    long long h = ck_block_idx_y(), b = ck_block_idx_z(), hk = h / ka.group;
    const unsigned short *q = (const unsigned short *)ka.q + b * ka.q_b + h * ka.q_h;
    const unsigned short *k = (const unsigned short *)ka.k + b * ka.k_b + hk * ka.k_h;
    const unsigned short *v = (const unsigned short *)ka.v + b * ka.v_b + hk * ka.v_h;
    unsigned short *out = (unsigned short *)ka.o + b * ka.o_b + h * ka.o_h;
    float *lse = ka.lse ? ka.lse + (b * ka.hq + h) * ka.sq : 0;
    if (ka.cu_q) { /* varlen: the sequence's rows of the packed tensors; LSE [h_q, total_q] */
        long long q0, k0;
        attn_seq(ka.cu_q, ka.total_q, b, &q0, &ka.sq);
        attn_seq(ka.cu_k, ka.total_k, b, &k0, &ka.sk);
        q += q0 * ka.q_s, out += q0 * ka.o_s;
        k += k0 * ka.k_s, v += k0 * ka.v_s;
        lse = ka.lse ? ka.lse + h * ka.total_q + q0 : 0;
    }
    ka.batch = (int)b, ka.head = (int)h;
#if ATTN_PAGED /* the pools have no batch stride: pages come from the block table */
    k = (const unsigned short *)ka.k + hk * ka.k_h;
    v = (const unsigned short *)ka.v + hk * ka.v_h;
    if (attn_paged_bad(&ka, b, &ka.sk)) { /* a page outside the pool: O and LSE NaN */
        for (long long i = ck_thread_linear(); i < ka.sq * ATTN_DV; i += ck_block_threads())
            if (i / ATTN_DV / ATTN_TILE_M % ck_grid_dim_x() == ck_block_idx_x()) {
                out[i / ATTN_DV * ka.o_s + i % ATTN_DV] = 0x7FC0u;
                if (lse && i % ATTN_DV == 0)
                    lse[i / ATTN_DV] = ck_u32_as_f32(0x7FC00000u);
            }
        return;
    }
#endif
    long long off = ka.bottom_right ? ka.sk - ka.sq : 0;
    ka.lo = ka.left < 0 ? -(1LL << 62) : off - ka.left;
    ka.hi = ka.right < 0 ? (1LL << 62) : off + ka.right;
    for (long long i0 = (long long)ck_block_idx_x() * ATTN_TILE_M; i0 < ka.sq;
         i0 += (long long)ck_grid_dim_x() * ATTN_TILE_M) {
        if (i0 >= ATTN_TILE_M * (long long)ck_grid_dim_x())
            ck_sync_threads(); /* the previous tile's last reads of shared memory are done */
        attn_fwd_tile(&ka, q, k, v, out, lse, i0);
    }
}

#endif
