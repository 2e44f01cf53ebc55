/*
 * The sm_90a attention forward pipeline (FlashAttention-3's structure): warp-specialized TMA +
 * wgmma. A block walks query tiles of ATTN_TILE_M rows (attn90_work: a persistent grid over
 * (query tile, head, batch), or the tiles of one sequence with varlen) with ATTN_CONSUMERS
 * consumer warpgroups (threads 0 .. 128 * ATTN_CONSUMERS - 1, warpgroup w owning query rows
 * 64w .. 64w + 63 of the tile) and one producer warpgroup (the last), whose one thread loads
 * a tile's Q once and then walks the key/value tiles the mask leaves visible, each K tile into
 * a slot of the K ring and each V tile into a slot of the V ring (TMA boxes of 64 columns, the
 * 128-byte swizzle, zero-filled past the tensors). Per key tile a consumer warpgroup computes
 * S = Q K^T with wgmma (both operands in shared memory), releases the K slot, soft-caps and
 * masks S, runs the online softmax on the accumulator fragment in registers, rounds P to the
 * input type in registers (the S fragment's register pairs are the register-A fragment of
 * P V: sm90.c checks this on the encodings) and accumulates O += P V with wgmma (A from
 * registers, V N-major in shared memory), then releases the V slot. At the end O / l is stored
 * through the generated window and LSE = (m + log2 l) ln 2 by each row's leading lane.
 *
 * FlashAttention-3's two overlaps: Q K^T of the next key tile is issued with P V of the current
 * one, before the next softmax (attn90_consumer); and with ATTN_PINGPONG the consumer
 * warpgroups (two or three) take turns at issuing their GEMMs (named barriers), so that one's
 * softmax overlaps the others' GEMMs.
 *
 * With ATTN_FP8 the inputs are e4m3 (fwd_sm90_fp8_kernel.h: its geometry, wgmma, P packing and
 * V^T replace the 16-bit ones; descales per tile; O bf16).
 *
 * Defines from the host (sm90.c's parameter table): ATTN_D, ATTN_DV, ATTN_BF16, ATTN_FP8,
 * ATTN_TILE_M (64 * ATTN_CONSUMERS), ATTN_TILE_N, ATTN_STAGES, ATTN_CONSUMERS, ATTN_PINGPONG,
 * ATTN_ORDER (the persistent walk: 0 linear, 1 snake, 2 lpt; attn90_item), ATTN_VARLEN (the varlen
 * code compiled in), ATTN_REGS_PRODUCER, ATTN_REGS_CONSUMER. Generated from the accumulators'
 * encodings (wgmma m64nN C, stacked over the consumer warpgroups): tile_x_s (the tile position of
 * an S register), attn90_slot_s / attn90_slot_o (the row slot of an S / O register), ATTN90_SLOTS,
 * attn90_slot_reg (an S register of each slot), attn90_row_max / attn90_row_sum (over the lanes
 * sharing a row), ATTN90_ROW_LANES (their lane bits) and the O window (make_win_o, store_o).
 */
#ifndef CK_OPS_ATTN_FWD_SM90_PIPELINE_KERNEL_H
#define CK_OPS_ATTN_FWD_SM90_PIPELINE_KERNEL_H

#include "ck_block.h"
#include "ops/attention/attn_args_kernel.h"

#ifndef ATTN_FP8
#define ATTN_FP8 0
#endif

#define A90_ROW 128 /* one line of a 16-bit tile: 64 elements, the 128-byte swizzle span */
#define A90_OB  (ATTN_DV / 64)    /* O's 64-column boxes (16-bit O) */
#define A90_NS  (ATTN_TILE_N / 2) /* S registers of a thread */
#define A90_NO  (ATTN_DV / 2)     /* O registers of a thread */
#if ATTN_FP8
#include "ops/attention/fwd_sm90_fp8_kernel.h" /* e4m3: geometry, wgmma, P, V^T, descales */
#else
#define A90_KL      A90_ROW         /* bytes of a line of the Q and K boxes */
#define A90_KSW     CK_SWIZZLE_128B /* and their swizzle */
#define A90_QB      (ATTN_D / 64)
#define A90_VB      (ATTN_DV / 64)
#define A90_V_BYTES (A90_VB * ATTN_TILE_N * A90_ROW)
#define A90_KSTEPS  (ATTN_TILE_N / 16)
#endif
#define A90_Q_BYTES  (A90_QB * ATTN_TILE_M * A90_KL)
#define A90_K_BYTES  (A90_QB * ATTN_TILE_N * A90_KL)
#define A90_NEG_INF  (ck_u32_as_f32(0xFF800000u))
#define A90_RELEASES (4 * ATTN_CONSUMERS) /* lane 0 of every consumer warp */
#ifndef ATTN_O_TMA
#define ATTN_O_TMA 0
#endif
#ifndef ATTN_ORDER
#define ATTN_ORDER 0
#endif
#ifndef ATTN_VARLEN
#define ATTN_VARLEN 1
#endif
/* varlen (cu_q given): only compiled in with ATTN_VARLEN (fixed-length kernels go without) */
#define A90_VARLEN(ka) (ATTN_VARLEN && (ka)->cu_q)
#define A90_O_WG_BYTES (ATTN_O_TMA ? A90_OB * 64 * A90_ROW : 0) /* a warpgroup's O staging */
/* named barriers of consumer warpgroup wg: its turn (ping-pong), its varlen V tail, its O store */
#define A90_BAR_TURN(wg) (2 + (wg))
#define A90_BAR_TAIL(wg) (2 + ATTN_CONSUMERS + (wg))
#define A90_BAR_OST(wg)  (2 + 2 * ATTN_CONSUMERS + (wg))
#define A90_O_STAGE_AT   (A90_Q_BYTES + ATTN_STAGES * (A90_K_BYTES + A90_V_BYTES))
#define A90_BARRIERS_AT  (A90_O_STAGE_AT + ATTN_CONSUMERS * A90_O_WG_BYTES)

#if ATTN_FP8
#elif ATTN_BF16
#define A90_SS_(N, acc, da, db, sd) CK_WGMMA_SS(N, bf16, acc, da, db, sd, 1, 1, 0, 0)
#define A90_RS_(N, acc, a, db, sd)  CK_WGMMA_RS(N, bf16, acc, a, db, sd, 1, 1, 1)
#define A90_CVT_X2                  ck_cvt_bf16x2
#define A90_CVT_O                   ck_cvt_bf16x2
#else
#define A90_SS_(N, acc, da, db, sd) CK_WGMMA_SS(N, f16, acc, da, db, sd, 1, 1, 0, 0)
#define A90_RS_(N, acc, a, db, sd)  CK_WGMMA_RS(N, f16, acc, a, db, sd, 1, 1, 1)
#define A90_CVT_X2                  ck_cvt_f16x2
#define A90_CVT_O                   ck_cvt_f16x2
#endif
#define A90_SS(N, acc, da, db, sd) A90_SS_(N, acc, da, db, sd) /* N expanded to its literal */
#define A90_RS(N, acc, a, db, sd)  A90_RS_(N, acc, a, db, sd)

#if !ATTN_FP8
#define A90_EB                         2                  /* bytes of an input element */
#define A90_SCALE_LOG2(ka)             ((ka)->scale_log2) /* the scores' scale (exp2 domain) */
#define A90_CAP_IN(ka)                 ((ka)->cap_in)
#define A90_O_SCALE(ka)                1.0f
#define attn90_tile_scales(ka, bz, hk) ((void)0)

/* The V tile (keys n0 .. n0 + TILE_N - 1 of head hk) into a ring slot: 64-column boxes of TILE_N
 * lines. */
CK_DEVICE void attn90_load_v(unsigned char *sv, const ck_tensor_map *tv, unsigned long long *full,
                             int n0, int hk, int bz)
{
    for (int c = 0; c < A90_VB; ++c)
        ck_tma_load_4d(sv + c * ATTN_TILE_N * A90_ROW, tv, full, 64 * c, n0, hk, bz);
}

/* V's operand of P V's k-step j: lines 16j .. 16j + 15, N-major (64-column boxes TILE_N lines
 * apart, 8-line groups 1024 apart). */
CK_DEVICE unsigned long long attn90_pv_desc(const unsigned char *sv, int j)
{
    return ck_wgmma_desc(sv + j * 16 * A90_ROW, ATTN_TILE_N * A90_ROW, 1024, CK_SWIZZLE_128B);
}
#endif

/* The block's barriers: the Q tile landed / its readers are done; the K ring; the V ring. */
typedef struct attn90_bars {
    unsigned long long *q_full, *q_empty;
    ck_ring k, v;
} attn90_bars;

/* One query tile of the block: rows i0 .. i0 + TILE_M - 1 of its sequence, which starts at row
 * q0 of Q and row k0 of K and V (TMA coordinates; varlen: the packed rows, batch bz 0), key
 * tiles [begin, end) visible to it, and the parity of its Q tile's phase (tiles with keys count:
 * neither side touches Q for the others). */
typedef struct attn90_tile {
    long long i0, begin, end;
    int q0, k0, h, hk, bz;
    unsigned q_phase;
} attn90_tile;

/* Producer (one thread): the Q tile (once its previous readers released it), then K and V of
 * the tile's key tiles; pos walks both rings across the block's tiles. */
CK_DEVICE void attn90_producer(const ck_tensor_map *tq, const ck_tensor_map *tk,
                               const ck_tensor_map *tv, const attn90_bars *bars,
                               unsigned char *smem, const attn90_tile *t, ck_ring_pos *pos)
{
    unsigned char *sq = smem, *sk = sq + A90_Q_BYTES, *sv = sk + ATTN_STAGES * A90_K_BYTES;
    ck_mbar_wait_parity(bars->q_empty, t->q_phase ^ 1u);
    ck_mbar_arrive_expect_tx(bars->q_full, A90_Q_BYTES);
    for (int c = 0; c < A90_QB; ++c)
        ck_tma_load_4d(sq + c * ATTN_TILE_M * A90_KL, tq, bars->q_full, A90_KL / A90_EB * c,
                       t->q0 + (int)t->i0, t->h, t->bz);
    for (long long kt = t->begin; kt < t->end; ++kt, ck_ring_next(&bars->k, pos)) {
        int n0 = t->k0 + (int)(kt * ATTN_TILE_N);
        ck_ring_acquire(&bars->k, *pos);
        unsigned long long *full = ck_ring_expect(&bars->k, *pos, A90_K_BYTES);
        for (int c = 0; c < A90_QB; ++c)
            ck_tma_load_4d(sk + pos->slot * A90_K_BYTES + c * ATTN_TILE_N * A90_KL, tk, full,
                           A90_KL / A90_EB * c, n0, t->hk, t->bz);
        ck_ring_acquire(&bars->v, *pos);
        full = ck_ring_expect(&bars->v, *pos, A90_V_BYTES);
        attn90_load_v(sv + pos->slot * A90_V_BYTES, tv, full, n0, t->hk, t->bz);
    }
}

/* Issue s = Q K^T of the warpgroup's 64 rows (sq: their first line) and the K tile sk: per
 * 64-column block of d, four k-steps of 32 bytes (K-major, 128-byte swizzle, 8-line groups 1024
 * apart). One wgmma group; s is not to be read before it completes. */
CK_DEVICE void attn90_scores_issue(float *s, const unsigned char *sq, const unsigned char *sk)
{
    sq += ck_opaque_u32(0u); /* Q's descriptors are made here, not held across the loop */
    ck_wgmma_fence();
    CK_UNROLL for (int c = 0; c < A90_QB; ++c) CK_UNROLL for (int k = 0; k < A90_KL / 32; ++k)
    {
        unsigned long long dq =
            ck_wgmma_desc(sq + c * ATTN_TILE_M * A90_KL + 32 * k, 16, 8 * A90_KL, A90_KSW);
        unsigned long long dk =
            ck_wgmma_desc(sk + c * ATTN_TILE_N * A90_KL + 32 * k, 16, 8 * A90_KL, A90_KSW);
        A90_SS(ATTN_TILE_N, s, dq, dk, (int)(c + k > 0));
    }
    ck_wgmma_commit_group();
}

/* Issue o += P V: k-step j takes registers 8j .. 8j + 7 of P (pairs packed: the register-A
 * fragment of keys 16j .. 16j + 15) and the V lines 16j .. 16j + 15 (N-major: 64-column blocks
 * TILE_N lines apart, 8-line groups 1024 apart). One wgmma group; neither o nor p is to be
 * touched before it completes. */
CK_DEVICE void attn90_pv_issue(float *o, const unsigned (*p)[4], const unsigned char *sv)
{
    ck_wgmma_fence();
    CK_UNROLL for (int j = 0; j < A90_KSTEPS; ++j)
    {
        A90_RS(ATTN_DV, o, p[j], attn90_pv_desc(sv, j), 1);
    }
    ck_wgmma_commit_group();
}

/* After the wgmma groups up to `pending` have completed: their accumulators (and, for P V, the
 * P registers it read) are the program's again. */
CK_DEVICE void attn90_wait_s(float *s, int pending)
{
    ck_wgmma_wait_group(pending);
    ck_wgmma_fence_operand(s, A90_NS);
}

CK_DEVICE void attn90_wait_o(float *o, unsigned (*p)[4])
{
    ck_wgmma_wait_group(0);
    ck_wgmma_fence_operand(o, A90_NO);
    CK_UNROLL for (int j = 0; j < A90_KSTEPS; ++j) CK_UNROLL for (int r = 0; r < 4; ++r)
    {
        float x = ck_u32_as_f32(p[j][r]); /* p stays live (unreused) until here */
        ck_wgmma_fence_operand(&x, 1);
        p[j][r] = ck_f32_as_u32(x);
    }
}

/* The logit soft-cap: s = cap_out * tanh(s * cap_in). */
CK_DEVICE void attn90_softcap(float *s, float cap_in, float cap_out)
{
    CK_UNROLL for (int d = 0; d < A90_NS; ++d) s[d] = cap_out * tanhf(s[d] * cap_in);
}

/* v clamped to [-4096, 4096] (beyond the range of a tile's column c and c - r). */
CK_DEVICE int attn90_clamp(long long v)
{
    return v < -4096 ? -4096 : v > 4096 ? 4096 : (int)v;
}

/* -inf where the mask hides (i, j) or j is past the keys; (i0, j0): the block tile's origin.
 * Key j0 + c of row i0 + r is hidden when c >= sk - j0, c - r < lo - (j0 - i0) or c - r >
 * hi - (j0 - i0): those bounds once per tile, each register's test in 32 bits. */
CK_DEVICE void attn90_mask(float *s, const ck_attn_kargs *ka, long long i0, long long j0)
{
    int cend = attn90_clamp(ka->sk - j0), dlo = attn90_clamp(ka->lo - (j0 - i0));
    int dhi = attn90_clamp(ka->hi - (j0 - i0));
    CK_UNROLL for (int d = 0; d < A90_NS; ++d)
    {
        long long x[2];
        tile_x_s(d, x);
        int r = (int)x[0], c = (int)x[1];
        if (c >= cend || c - r < dlo || c - r > dhi)
            s[d] = A90_NEG_INF;
    }
}

/* Online softmax of one tile, per row slot: the new max (over the lanes sharing the row), l
 * rescaled by alpha = exp2(m_old - m_new) (O is rescaled by attn90_rescale once the P V in
 * flight has completed), s replaced by p = exp2(s * scale_log2 - m_new). A row that has seen
 * only masked keys keeps m = -inf and subtracts 0, so that exp2 gives 0, never NaN. */
CK_DEVICE void attn90_softmax(float *s, float *m, float *l, float *alpha, float scale_log2)
{
    float mx[ATTN90_SLOTS], base[ATTN90_SLOTS], sum[ATTN90_SLOTS];
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r) mx[r] = A90_NEG_INF, sum[r] = 0.0f;
    CK_UNROLL for (int d = 0; d < A90_NS; ++d) mx[attn90_slot_s(d)] =
        fmaxf(mx[attn90_slot_s(d)], s[d]);
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r)
    {
        float m_new = fmaxf(m[r], attn90_row_max(mx[r]) * scale_log2);
        base[r] = m_new == A90_NEG_INF ? 0.0f : m_new;
        alpha[r] = ck_exp2_ftz(m[r] - base[r]);
        m[r] = m_new;
    }
    CK_UNROLL for (int d = 0; d < A90_NS; ++d)
    {
        int r = attn90_slot_s(d);
        s[d] = ck_exp2_ftz(fmaf(s[d], scale_log2, -base[r]));
        sum[r] += s[d];
    }
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r) l[r] = fmaf(l[r], alpha[r], sum[r]);
}

CK_DEVICE void attn90_rescale(float *o, const float *alpha)
{
    CK_UNROLL for (int d = 0; d < A90_NO; ++d) o[d] *= alpha[attn90_slot_o(d)];
}

#if !ATTN_FP8
/* P rounded to the input type (nearest even; one cvt per two elements), two registers to one:
 * the A fragments of P V's k-steps. */
CK_DEVICE void attn90_pack(unsigned (*p)[4], const float *s)
{
    CK_UNROLL for (int j = 0; j < A90_KSTEPS; ++j) CK_UNROLL for (int r = 0; r < 4; ++r) p[j][r] =
        A90_CVT_X2(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
}
#endif

#if ATTN_O_TMA
/* O's rows of warpgroup wg through shared memory: each register pair (two columns of one row)
 * into the warpgroup's staging boxes (64 columns of 64 lines, the 128-byte swizzle), then one
 * thread stores the boxes with TMA (rows past s_q are clipped), once the previous tile's store
 * has read them. */
CK_DEVICE void attn90_store_o_tma(const unsigned *ow, const attn90_tile *t, unsigned wg,
                                  unsigned char *ost, const ck_tensor_map *to)
{
    int leader = ck_warpgroup_thread() == 0;
    if (leader)
        ck_tma_store_wait_read(0);
    ck_named_barrier_sync(A90_BAR_OST(wg), CK_WARPGROUP_THREADS);
    CK_UNROLL for (int d = 0; d < A90_NO; d += 2)
    {
        long long x[2];
        tile_x_o(d, x);
        int r = (int)x[0] - 64 * (int)wg, c = (int)x[1];
        *(unsigned *)(ost + (c / 64) * 64 * A90_ROW + r * A90_ROW +
                      ((((c % 64) / 8) ^ (r % 8)) << 4) + (c % 8) * 2) = ow[d / 2];
    }
    ck_fence_proxy_async(); /* the copy engine reads what the threads wrote */
    ck_named_barrier_sync(A90_BAR_OST(wg), CK_WARPGROUP_THREADS);
    if (leader) {
        for (int c = 0; c < A90_OB; ++c)
            ck_tma_store_4d(to, ost + c * 64 * A90_ROW, 64 * c, (int)t->i0 + 64 * (int)wg, t->h,
                            t->bz);
        ck_tma_store_commit();
    }
}
#endif

/* The tile's sequence in O (its first row, head h) and in LSE (NULL: none): made here, at the
 * end of a tile, rather than held in registers across its key tiles. */
CK_DEVICE void attn90_outputs(const ck_attn_kargs *ka, const attn90_tile *t, unsigned short **out,
                              float **lse)
{
    if (A90_VARLEN(ka)) {
        *out = (unsigned short *)ka->o + t->q0 * ka->o_s + t->h * ka->o_h;
        *lse = ka->lse ? ka->lse + t->h * ka->total_q + t->q0 : 0;
    } else {
        *out = (unsigned short *)ka->o + t->bz * ka->o_b + t->h * ka->o_h;
        *lse = ka->lse ? ka->lse + ((long long)t->bz * ka->hq + t->h) * ka->sq : 0;
    }
}

/* O = o / l (0 for rows that saw no key), rounded, stored through shared memory and TMA
 * (ATTN_O_TMA) or the generated window (rows below sq); LSE by the leading lane of each row. */
CK_DEVICE void attn90_epilogue(float *o, const float *m, float *l, const ck_attn_kargs *ka,
                               const attn90_tile *t, unsigned wg, unsigned char *ost,
                               const ck_tensor_map *to)
{
    long long i0 = t->i0;
    unsigned short *out;
    float *lse;
    attn90_outputs(ka, t, &out, &lse);
    float inv[ATTN90_SLOTS];
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r)
    {
        l[r] = attn90_row_sum(l[r]);
        inv[r] = l[r] > 0.0f ? A90_O_SCALE(ka) / l[r] : 0.0f;
    }
    unsigned ow[A90_NO / 2];
    CK_UNROLL for (int d = 0; d < A90_NO; d += 2) ow[d / 2] =
        A90_CVT_O(o[d] * inv[attn90_slot_o(d)], o[d + 1] * inv[attn90_slot_o(d + 1)]);
#if ATTN_O_TMA
    (void)out;
    attn90_store_o_tma(ow, t, wg, ost, to);
#else
    (void)ost, (void)to, (void)wg;
    unsigned short ob[A90_NO];
    CK_UNROLL for (int d = 0; d < A90_NO; d += 2)
    {
        ob[d] = (unsigned short)(ow[d / 2] & 0xffffu);
        ob[d + 1] = (unsigned short)(ow[d / 2] >> 16);
    }
    ck_win_o w = make_win_o(out, i0, 0, ka->o_s, ka->sq);
    store_o(ob, &w);
#endif
    if (!lse || (ck_lane_id() & ATTN90_ROW_LANES) != 0)
        return;
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r)
    {
        long long x[2];
        tile_x_s(attn90_slot_reg(r), x);
        if (i0 + x[0] < ka->sq)
            lse[i0 + x[0]] =
                l[r] > 0.0f ? (m[r] + log2f(l[r])) * 0.69314718055994531f : A90_NEG_INF;
    }
}

/* Whether key tile kt needs the mask for some row of [i0, i0 + TILE_M). */
CK_DEVICE int attn90_tile_partial(const ck_attn_kargs *ka, long long i0, long long kt)
{
    long long j0 = kt * ATTN_TILE_N, j1 = j0 + ATTN_TILE_N - 1, i1 = i0 + ATTN_TILE_M - 1;
    return j1 >= ka->sk || j0 < i1 + ka->lo || j1 > i0 + ka->hi;
}

/* Varlen: the lines of V tile vt past the sequence's keys hold the next sequence's values (TMA
 * zero-fills only past the tensor); they meet P = 0, but 0 * inf would still be NaN, so each
 * consumer warpgroup clears them before its P V (both write the same zeros; each orders its own
 * writes before its wgmma reads with the async-proxy fence and a barrier of its threads). */
CK_DEVICE void attn90_varlen_tail(const ck_attn_kargs *ka, unsigned char *v, long long vt,
                                  unsigned wg)
{
#if ATTN_FP8 /* no varlen (sm90.c) */
    (void)ka, (void)v, (void)vt, (void)wg;
#else
    long long from = ka->sk - vt * ATTN_TILE_N;
    if (!A90_VARLEN(ka) || from >= ATTN_TILE_N)
        return;
    int rows = ATTN_TILE_N - (int)from;
    ck_u32x4 zero;
    zero.x = zero.y = zero.z = zero.w = 0u;
    for (int i = (int)ck_warpgroup_thread(); i < rows * A90_VB * 8; i += CK_WARPGROUP_THREADS) {
        int c = i / (rows * 8), r = (int)from + (i / 8) % rows; /* box, line; 16-byte chunk i % 8 */
        ck_st16(v + c * ATTN_TILE_N * A90_ROW + r * A90_ROW + (i % 8) * 16, zero);
    }
    ck_fence_proxy_async();
    ck_named_barrier_sync(A90_BAR_TAIL(wg), CK_WARPGROUP_THREADS);
#endif
}

/* The ping-pong of the consumer warpgroups (ATTN_PINGPONG; round robin among three): a
 * warpgroup issues its GEMMs in its turn, which starts when the one before passes it (named
 * barrier A90_BAR_TURN(wg): the two warpgroups' threads), so that one's softmax runs while the
 * others' GEMMs use the tensor cores. The last warpgroup passes first (warpgroup 0 starts) and
 * skips its last pass, so that every pass is waited for; a warpgroup cannot pass twice before
 * the next has waited (its next pass waits for the whole round). */
#if ATTN_PINGPONG && ATTN_CONSUMERS >= 2
#define A90_TURN_WAIT(wg) ck_named_barrier_sync(A90_BAR_TURN(wg), 2 * CK_WARPGROUP_THREADS)
#define A90_TURN_PASS(wg)                                                                          \
    ck_named_barrier_arrive(A90_BAR_TURN(((wg) + 1) % ATTN_CONSUMERS), 2 * CK_WARPGROUP_THREADS)
#else
#define A90_TURN_WAIT(wg) ((void)0)
#define A90_TURN_PASS(wg) ((void)0)
#endif

/* S of key tile kt, once its wgmma completed: soft-cap, mask, online softmax (alpha: O's
 * rescale, applied later). */
CK_DEVICE void attn90_scores_post(float *s, float *m, float *l, float *alpha,
                                  const ck_attn_kargs *ka, long long i0, long long kt)
{
    if (ka->cap_in > 0.0f)
        attn90_softcap(s, A90_CAP_IN(ka), ka->cap_out);
    if (attn90_tile_partial(ka, i0, kt))
        attn90_mask(s, ka, i0, kt * ATTN_TILE_N);
    attn90_softmax(s, m, l, alpha, A90_SCALE_LOG2(ka));
}

/* A consumer warpgroup wg: rows 64 wg .. 64 wg + 63 of the tile at i0. Per step, Q K^T of key
 * tile kt and P V of tile kt - 1 are issued together, and the softmax of kt runs while P V of
 * kt - 1 is still on the tensor cores (FlashAttention-3's intra-warpgroup overlap); O takes the
 * rescale of kt's softmax just before P V of kt is issued. */
CK_DEVICE void attn90_consumer(const ck_attn_kargs *ka, const attn90_bars *bars,
                               unsigned char *smem, unsigned wg, const attn90_tile *t,
                               ck_ring_pos *kpos, ck_ring_pos *vpos, const ck_tensor_map *to)
{
    int i0 = (int)t->i0, begin = (int)t->begin, end = (int)t->end; /* below 2^31 (sm90.c) */
    const unsigned char *sq = smem + wg * 64 * A90_KL, *sk = smem + A90_Q_BYTES;
    unsigned char *sv = smem + A90_Q_BYTES + ATTN_STAGES * A90_K_BYTES;
    float s[A90_NS], o[A90_NO], m[ATTN90_SLOTS], l[ATTN90_SLOTS], alpha[ATTN90_SLOTS];
    unsigned p[A90_KSTEPS][4];
    CK_UNROLL for (int d = 0; d < A90_NO; ++d) o[d] = 0.0f;
    CK_UNROLL for (int r = 0; r < ATTN90_SLOTS; ++r) m[r] = A90_NEG_INF, l[r] = 0.0f;
    if (begin < end) {
        int lane0 = ck_lane_id() == 0;
        ck_ring_pos kp = *kpos, vp = *vpos;
        if (wg == ATTN_CONSUMERS - 1)
            A90_TURN_PASS(wg);
        ck_mbar_wait_parity(bars->q_full, t->q_phase);
        ck_ring_wait(&bars->k, kp);
        A90_TURN_WAIT(wg);
        attn90_scores_issue(s, sq, sk + kp.slot * A90_K_BYTES);
        A90_TURN_PASS(wg);
        attn90_wait_s(s, 0);
        if (lane0)
            ck_ring_release(&bars->k, kp);
        ck_ring_next(&bars->k, &kp);
        attn90_scores_post(s, m, l, alpha, ka, i0, begin);
        attn90_pack(p, s);
        for (int kt = begin + 1; kt < end; ++kt) {
            ck_ring_wait(&bars->k, kp);
            A90_TURN_WAIT(wg);
            attn90_scores_issue(s, sq, sk + kp.slot * A90_K_BYTES);
            attn90_rescale(o, alpha);
            ck_ring_wait(&bars->v, vp);
            attn90_varlen_tail(ka, sv + vp.slot * A90_V_BYTES, kt - 1, wg);
            attn90_pv_issue(o, (const unsigned(*)[4])p, sv + vp.slot * A90_V_BYTES);
            A90_TURN_PASS(wg);
            attn90_wait_s(s, 1); /* Q K^T of kt (P V of kt - 1 may be in flight) */
            if (lane0)
                ck_ring_release(&bars->k, kp);
            ck_ring_next(&bars->k, &kp);
            attn90_scores_post(s, m, l, alpha, ka, i0, kt);
            attn90_wait_o(o, p);
            if (lane0)
                ck_ring_release(&bars->v, vp);
            ck_ring_next(&bars->v, &vp);
            attn90_pack(p, s);
        }
        if (lane0) /* every Q K^T of the tile has completed */
            ck_mbar_arrive(bars->q_empty);
        A90_TURN_WAIT(wg);
        attn90_rescale(o, alpha);
        ck_ring_wait(&bars->v, vp);
        attn90_varlen_tail(ka, sv + vp.slot * A90_V_BYTES, end - 1, wg);
        attn90_pv_issue(o, (const unsigned(*)[4])p, sv + vp.slot * A90_V_BYTES);
        if (wg != ATTN_CONSUMERS - 1)
            A90_TURN_PASS(wg);
        attn90_wait_o(o, p);
        if (lane0)
            ck_ring_release(&bars->v, vp);
        ck_ring_next(&bars->v, &vp);
        *kpos = kp, *vpos = vp;
    }
    attn90_epilogue(o, m, l, ka, t, wg, smem + A90_O_STAGE_AT + wg * A90_O_WG_BYTES, to);
}

/* Offset of sequence b's first row and its length: clamped [cu[b], cu[b + 1]) of [0, total]. */
CK_DEVICE void attn90_seq(const int *cu, long long total, long long b, long long *first,
                          long long *len)
{
    long long a = cu[b], e = cu[b + 1];
    a = a < 0 ? 0 : a > total ? total : a;
    e = e < 0 ? 0 : e > total ? total : e;
    *first = a, *len = e > a ? e - a : 0;
}

/* The key tiles [*begin, *end) holding a key visible to some row of [i0, i0 + TILE_M). */
CK_DEVICE void attn90_key_range(const ck_attn_kargs *ka, long long i0, long long *begin,
                                long long *end)
{
    long long last = (i0 + ATTN_TILE_M < ka->sq ? i0 + ATTN_TILE_M : ka->sq) - 1;
    long long jlo = i0 + ka->lo < 0 ? 0 : i0 + ka->lo;
    long long jhi = last + ka->hi < ka->sk - 1 ? last + ka->hi : ka->sk - 1;
    *begin = jlo / ATTN_TILE_N;
    *end = jhi < jlo ? *begin : jhi / ATTN_TILE_N + 1;
}

/* Fixed lengths: the query tile of work item w (-1 past the last item), its query head and batch.
 * linear and snake: the query tiles of a (head, batch) pair fastest, last first (the blocks at
 * work at once share few heads' K and V, which stay in L2; a causal row block's work grows with
 * its index). lpt: sections of ka->sect pairs (K and V of a section fit the L2), in a section
 * the query tiles last first and the pairs fastest, so that a block freeing up takes the longest
 * tile left and the blocks at work share one section's K and V. */
CK_DEVICE long long attn90_item(const ck_attn_kargs *ka, long long w, int *h, int *bz)
{
    /* in 32 bits (sm90.c refuses 2^31 items or more): a division by a run-time 64-bit value is a
     * call, whose saved registers the consumers' accumulators cannot spare */
    unsigned tiles = (unsigned)((ka->sq + ATTN_TILE_M - 1) / ATTN_TILE_M), hq = (unsigned)ka->hq;
    unsigned pairs = hq * (unsigned)ka->batches, x, r, u = (unsigned)w;
    if (w >= (long long)tiles * pairs)
        return -1;
#if ATTN_ORDER == 2
    unsigned sect = (unsigned)ka->sect, first = u / (sect * tiles) * sect, loc = u - first * tiles;
    unsigned in = pairs - first < sect ? pairs - first : sect;
    x = tiles - 1 - loc / in;
    r = first + loc % in;
#else
    r = u / tiles;
    x = tiles - 1 - u % tiles;
#endif
    *h = (int)(r % hq), *bz = (int)(r / hq);
    return x;
}

/* The block's n-th work item under the static orders: blockIdx.x + n gridDim.x, every other
 * round reversed with snake (a block that took a long tile takes a short one next); varlen: its
 * n-th query tile. */
CK_DEVICE long long attn90_static_item(const ck_attn_kargs *ka, long long n)
{
    long long g = ck_grid_dim_x(), b = ck_block_idx_x();
    if (A90_VARLEN(ka))
        return n;
    return n * g + (ATTN_ORDER == 1 && (n & 1) ? g - 1 - b : b);
}

/* The query tile of work item w (varlen: the block's w-th) in t, the band of its sequence in
 * ka; 0 past the block's last tile.
 * Fixed lengths (a persistent grid): attn90_item. Varlen (grid (query tiles of the longest
 * sequence hint, h_q, b)): the query tiles q - 1 - blockIdx.x - w gridDim.x of sequence b's q,
 * the sequence's rows of the packed tensors (whose maps have one batch), LSE [h_q, total_q]. */
CK_DEVICE int attn90_work(ck_attn_kargs *ka, long long w, attn90_tile *t)
{
    long long x;
    if (A90_VARLEN(ka)) {
        long long q0, k0;
        t->h = (int)ck_block_idx_y(), t->bz = 0;
        attn90_seq(ka->cu_q, ka->total_q, ck_block_idx_z(), &q0, &ka->sq);
        attn90_seq(ka->cu_k, ka->total_k, ck_block_idx_z(), &k0, &ka->sk);
        t->q0 = (int)q0, t->k0 = (int)k0;
        x = (ka->sq + ATTN_TILE_M - 1) / ATTN_TILE_M - 1 - ck_block_idx_x() - w * ck_grid_dim_x();
    } else {
        if ((x = attn90_item(ka, w, &t->h, &t->bz)) < 0)
            return 0;
        t->q0 = t->k0 = 0;
    }
    if (x < 0)
        return 0;
    t->hk = t->h / ka->group;
    t->i0 = x * ATTN_TILE_M;
    long long off = ka->bottom_right ? ka->sk - ka->sq : 0;
    ka->lo = ka->left < 0 ? -(1LL << 62) : off - ka->left;
    ka->hi = ka->right < 0 ? (1LL << 62) : off + ka->right;
    attn90_key_range(ka, t->i0, &t->begin, &t->end);
    attn90_tile_scales(ka, t->bz, t->hk);
    return 1;
}

/* The lpt order's work ring (two slots of item numbers, a full and an empty barrier each): the
 * producer thread posts the item it took from the counter, every consumer thread takes it. */
CK_DEVICE void attn90_post(const ck_ring *wr, ck_ring_pos *wp, long long *slots, long long w)
{
    ck_ring_acquire(wr, *wp);
    slots[wp->slot] = w;
    ck_mbar_arrive(&wr->full[wp->slot]);
    ck_ring_next(wr, wp);
}

CK_DEVICE long long attn90_take(const ck_ring *wr, ck_ring_pos *wp, long long *slots)
{
    ck_ring_wait(wr, *wp);
    long long w = *(volatile long long *)&slots[wp->slot];
    ck_ring_release(wr, *wp);
    ck_ring_next(wr, wp);
    return w;
}

/* The kernel's body: barriers, then the producer's and the consumers' walks over the block's
 * query tiles (the same walk: attn90_static_item, or with ATTN_ORDER 2 the items the producer
 * thread takes from the counter ka->sched (blockIdx.x first, then gridDim.x + the counter's old
 * value) and passes on through the work ring). */
CK_DEVICE void attn_fwd_sm90_main(ck_attn_kargs *ka, const ck_tensor_map *tq,
                                  const ck_tensor_map *tk, const ck_tensor_map *tv,
                                  const ck_tensor_map *to)
{
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    smem += (1024u - (ck_smem_addr(smem) & 1023u)) & 1023u; /* the 128-byte swizzle's pattern */
    unsigned long long *bar = (unsigned long long *)(smem + A90_BARRIERS_AT);
    attn90_bars bars;
    bars.q_full = bar, bars.q_empty = bar + 1;
    bars.k = ck_ring_make(bar + 2, ATTN_STAGES);
    bars.v = ck_ring_make(bar + 2 + 2 * ATTN_STAGES, ATTN_STAGES);
    ck_ring wr = ck_ring_make(bar + 2 + 4 * ATTN_STAGES, 2);
    long long *wslots = (long long *)(bar + 6 + 4 * ATTN_STAGES);
    unsigned wg = ck_warpgroup_id();
    if (ck_thread_linear() == 0) {
        ck_tma_prefetch_map(tq);
        ck_tma_prefetch_map(tk);
        ck_tma_prefetch_map(tv);
        if (ATTN_O_TMA)
            ck_tma_prefetch_map(to);
        ck_mbar_init(bars.q_full, 1);
        ck_mbar_init(bars.q_empty, A90_RELEASES);
        ck_ring_init(&bars.k, A90_RELEASES);
        ck_ring_init(&bars.v, A90_RELEASES);
        if (ATTN_ORDER == 2)
            ck_ring_init(&wr, CK_WARPGROUP_THREADS * ATTN_CONSUMERS);
    }
    ck_sync_threads();
    ck_ring_pos kpos = ck_ring_start(), vpos = kpos, wpos = kpos;
    unsigned loads = 0; /* Q tiles loaded so far (tiles without visible keys load none) */
    attn90_tile t;
    if (wg == ATTN_CONSUMERS) {
        CK_REGS_PRODUCER(ATTN_REGS_PRODUCER);
        if (ck_warpgroup_thread() != 0)
            return;
        long long w = ck_block_idx_x();
        for (long long n = 0;; ++n) {
            if (ATTN_ORDER == 2)
                attn90_post(&wr, &wpos, wslots, w);
            else
                w = attn90_static_item(ka, n);
            if (!attn90_work(ka, w, &t))
                break;
            if (ATTN_ORDER == 2) /* the next item, taken while this one loads (no counter: a
                                    kernel built under another switch; blockIdx.x + n gridDim.x) */
                w = ck_grid_dim_x() + (ka->sched ? ck_atomic_add_i32(ka->sched, 1) : w);
            t.q_phase = loads & 1u;
            if (t.begin < t.end) {
                attn90_producer(tq, tk, tv, &bars, smem, &t, &kpos);
                ++loads;
            }
        }
    } else {
        CK_REGS_CONSUMER(ATTN_REGS_CONSUMER);
        for (long long n = 0;; ++n) {
            long long w =
                ATTN_ORDER == 2 ? attn90_take(&wr, &wpos, wslots) : attn90_static_item(ka, n);
            if (!attn90_work(ka, w, &t))
                break;
            t.q_phase = loads & 1u;
            loads += t.begin < t.end;
            attn90_consumer(ka, &bars, smem, wg, &t, &kpos, &vpos, to);
        }
        if (ATTN_O_TMA && ck_warpgroup_thread() == 0)
            ck_tma_store_wait(0); /* the last O stores have read their staging */
    }
}

#endif
