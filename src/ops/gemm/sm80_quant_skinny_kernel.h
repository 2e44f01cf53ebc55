/*
 * Mixed-input GEMM for small M (decode: M <= 64 rows of f16 / bf16 activations x packed 4-bit
 * weights B; host side quant_skinny.c). The time is B's bytes over the memory bandwidth, so the
 * kernel is built around reading every byte of B exactly once, straight from global memory into
 * registers with wide loads, many in flight:
 *
 *  - roles swapped: the weights are the mma's A operand (m16: 16 columns of B), the activations
 *    its B operand (n8: 8 rows of A), so M = 1 pads to 8 rows, not 16; D^T = B^T A^T.
 *  - a chunk of K is TILE_K = 8 * VB values: lane (g, t) of a warp loads VB bytes (16, or 8 / 4
 *    for groups of 64 / 32) of columns g and g + 8 of each of its NT column tiles, at byte
 *    VB t of the chunk: a warp's load covers 16 columns x 4 VB contiguous bytes each.
 *  - K is permuted (a sum over K does not care): mma s of a chunk takes word s / 2 of each
 *    lane's load (k 2 VB t + 8 (s / 2) .. + 7 of the chunk), two registers of its four (which
 *    values share a register: qs_reg). The activations are staged by lane: a stage of A in
 *    shared memory holds, per chunk, n8 tile and 16-byte piece q, the 32 lanes' pieces side by
 *    side (lane (g, t): row 8 mt + g, k 2 VB t + 8 q .. + 7): one conflict-free 16-byte read
 *    gives a lane the B fragments of two mma steps (cp.async copies A in, zero-filled past M
 *    and K).
 *  - each chunk lies in one K block (TILE_K divides the block), so the promotion of
 *    sm80_quant_kernel.h (acc += part * sa * sb) runs per chunk; the nibbles become A's type
 *    by the magic-number trick (qs_reg: two values per shift, mask and packed fma).
 *  - the block's WARPS_N warps take NT column tiles each (TILE_N columns); K is split into
 *    ka.k_splits ranges of steps (STAGES chunks) over the grid when the columns alone give too
 *    few blocks, and the splits' partial sums meet in a workspace in a fixed order (the last
 *    block to arrive adds splits 0, 1, ... and runs the epilogue: the same bits on every run).
 *
 * Grid: tiles_n x k_splits blocks (block = split * tiles_n + column tile), WARPS_N warps each.
 * The accumulator (register (nt * MT + mt) * 4 + r) is the transposed mma C fragment: register r
 * of (nt, mt) is D(8 mt + 2t + r % 2, 16 nt + g + 8 (r / 2)) of the warp's columns, the encoding
 * quant_skinny.c gives the generated epilogue.
 */
#ifndef CK_OPS_GEMM_SM80_QUANT_SKINNY_KERNEL_H
#define CK_OPS_GEMM_SM80_QUANT_SKINNY_KERNEL_H

#include "ck_block.h"
#include "ops/gemm/gemm_args_kernel.h"

#if GEMM_COMPUTE_IN == 2
#define QS_MMA ck_mma_m16n8k16_f32_f16
#else
#define QS_MMA ck_mma_m16n8k16_f32_bf16
#endif
#include "ops/gemm/sm80_quant_kernel.h"

#define QS_THREADS (GEMM_WARPS_N * 32)
#define QS_MT      (GEMM_TILE_M / 8)                 /* n8 tiles of activation rows */
#define QS_NT      (GEMM_TILE_N / GEMM_WARPS_N / 16) /* m16 tiles of columns per warp */
#define QS_VB      (GEMM_TILE_K / 8)                 /* bytes a lane loads per column, chunk */
#define QS_WORDS   (QS_VB / 4)
#define QS_PIECES  (QS_VB / 4)                 /* 16-byte pieces of A per lane, row, chunk */
#define QS_STEP    (GEMM_TILE_K * GEMM_STAGES) /* K of one step (a stage of A) */
#define QS_A_STAGE (GEMM_TILE_M * QS_STEP * 2)
#define QS_NREG    (QS_NT * QS_MT * 4)
/* chunks per K block (0: one block, promoted once at the end) */
#define QS_QCHUNKS (GEMM_QK_STEPS * 16 / GEMM_TILE_K)

/* Copy step `step`'s activations (rows 0 .. TILE_M - 1, K from step * QS_STEP) into a stage in
 * the fragment order above: 16-byte pieces, consecutive threads along a row of A. */
CK_DEVICE void qs_stage_a(unsigned char *s, const ck_gemm_kargs *ka, long long step)
{
    const unsigned char *a = (const unsigned char *)ka->a;
    long long k0 = step * QS_STEP;
    for (int p = ck_thread_linear(); p < GEMM_TILE_M * (QS_STEP / 8); p += QS_THREADS) {
        int r = p / (QS_STEP / 8), kr = p % (QS_STEP / 8) * 8; /* row, k within the step */
        int u = kr / GEMM_TILE_K, w = kr % GEMM_TILE_K;        /* chunk, k within it */
        int t = w / (2 * QS_VB), q = w % (2 * QS_VB) / 8, mt = r / 8, g = r % 8;
        long long left = (ka->k - k0 - kr) * 2;
        unsigned bytes = r >= ka->m || left <= 0 ? 0u : left < 16 ? (unsigned)left : 16u;
        const unsigned char *src = bytes ? a + (r * ka->lda + k0 + kr) * 2 : a;
        ck_cp_async_16_zfill(s + (((u * QS_MT + mt) * QS_PIECES + q) * 32 + g * 4 + t) * 16, src,
                             bytes);
    }
}

/* A lane's QS_VB bytes of column `col` at byte `kb` of its K line (zero past N or K / 2). */
CK_DEVICE void qs_load_b(unsigned *w, const ck_gemm_kargs *ka, long long col, long long kb)
{
    const unsigned char *b = (const unsigned char *)ka->b + col * ka->ldb + kb;
    long long left = ka->k / 2 - kb;
    if (col < ka->n && left >= QS_VB) {
        ck_ld_words(b, QS_VB, w);
    } else { /* the last, partial piece of the line (w indexed by constants: registers) */
        CK_UNROLL for (int i = 0; i < QS_WORDS; ++i)
        {
            w[i] = 0;
            CK_UNROLL for (int j = 0; j < 4; ++j) if (col < ka->n && 4 * i + j < left) w[i] |=
                (unsigned)b[4 * i + j] << (8 * j);
        }
    }
#if GEMM_B_PACKED == 1 /* int4: flip the sign bits (q + 8, see gemm_b4_bias) */
    CK_UNROLL for (int i = 0; i < QS_WORDS; ++i) w[i] ^= 0x88888888u;
#endif
}

/* The pair constant (zero point) of column col in K block kb. */
CK_DEVICE unsigned qs_bias(const ck_gemm_kargs *ka, long long col, int kb)
{
    int z = 0;
#if GEMM_B_ZEROS
    if (col < ka->n)
        z = ka->zb[col / ka->sb_bmn * ka->sb_mn + kb * ka->sb_k];
#else
    (void)ka, (void)col, (void)kb;
#endif
    return gemm_b4_bias(z);
}

/* Which values of a lane's word share a register (both are sums over K in some order):
 *  - nibble pairs (QS_NIBBLE_PAIRS): register i of word v holds nibbles i and i + 4 (k_w + i,
 *    k_w + i + 4 with k_w = 2 VB t + 8 v): one shift and one mask per register; the activation
 *    pieces are regrouped to match on their way to the mma (a byte permute per register);
 *  - byte pairs: register i holds byte i's two nibbles (k_w + 2i, + 1): three more logic
 *    operations per register, the activation pieces used as loaded.
 * Regrouping the activations costs per row tile what nibble pairs save per column tile: nibble
 * pairs where the column tiles outweigh, MT < 4 NT (byte pairs: M > 56 with two column tiles a
 * warp, M > 24 with one). */
#define QS_NIBBLE_PAIRS (QS_MT < 4 * QS_NT)

/* Register i (0 .. 3) of word w: two values of A's type, minus the pair constant z. */
CK_DEVICE unsigned qs_reg(unsigned w, int i, unsigned z)
{
#if QS_NIBBLE_PAIRS
    unsigned p = w >> (4 * i); /* nibbles i and i + 4 at bits 0 and 16 */
#if GEMM_B_PACKED == 3
    (void)z;
    return gemm_b4_code(gemm_b4_value(p & 15u, 0)) |
           (gemm_b4_code(gemm_b4_value((p >> 16) & 15u, 0)) << 16);
#else
    return GEMM_B4_FMA((p & 0x000f000fu) | GEMM_B4_MAGIC, GEMM_B4_ONE, z);
#endif
#else
    unsigned b = w >> (8 * i);
#if GEMM_B_PACKED == 3
    (void)z;
    return gemm_b4_pair(b & 0xffu, 0);
#else
    return gemm_b4_u2(b, z);
#endif
#endif
}

/* The mma A fragment (16 columns x 16 logical k) of mma step s from the words of columns g
 * (c0) and g + 8 (c8): a0 / a2 column g, a1 / a3 column g + 8; registers 2 (s % 2) and
 * 2 (s % 2) + 1 of word s / 2. */
CK_DEVICE void qs_frag_w(unsigned *r, const unsigned *c0, const unsigned *c8, int s, unsigned z0,
                         unsigned z8)
{
    CK_UNROLL for (int h = 0; h < 2; ++h)
    {
        r[2 * h] = qs_reg(c0[s / 2], 2 * (s % 2) + h, z0);
        r[2 * h + 1] = qs_reg(c8[s / 2], 2 * (s % 2) + h, z8);
    }
}

/* The mma B fragment of step 2q + h from the activation piece x (k_w .. k_w + 7 of the lane's
 * row, two per word): the values the weight registers of qs_reg pair. */
CK_DEVICE void qs_frag_x(unsigned *b, ck_u32x4 x, int h)
{
#if QS_NIBBLE_PAIRS /* (k_w + 2h, + 2h + 4), (k_w + 2h + 1, + 2h + 5) */
    unsigned lo = h ? x.y : x.x, hi = h ? x.w : x.z;
    b[0] = (lo & 0xffffu) | (hi << 16);
    b[1] = (lo >> 16) | (hi & 0xffff0000u);
#else /* (k_w + 4h, + 1), (k_w + 4h + 2, + 3) */
    b[0] = h ? x.z : x.x;
    b[1] = h ? x.w : x.y;
#endif
}

/* acc (+)= part * sa(row) * sb(col) for K block kb; then part = 0. Register r of (nt, mt):
 * row 8 mt + 2t + r % 2, column c0 + 16 nt + g + 8 (r / 2). */
CK_DEVICE void qs_promote(float *acc, float *part, const ck_gemm_kargs *ka, int kb, long long c0,
                          int lane)
{
    int g = lane >> 2, t = lane & 3;
    float sa[QS_MT][2], sb[QS_NT][2];
    CK_UNROLL for (int mt = 0; mt < QS_MT; ++mt) CK_UNROLL for (int h = 0; h < 2; ++h) sa[mt][h] =
        gemm_scale_a(ka, mt * 8 + 2 * t + h, kb);
    CK_UNROLL for (int nt = 0; nt < QS_NT; ++nt) CK_UNROLL for (int h = 0; h < 2; ++h) sb[nt][h] =
        gemm_scale_b(ka, c0 + nt * 16 + g + 8 * h, kb);
    CK_UNROLL for (int nt = 0; nt < QS_NT; ++nt) CK_UNROLL for (int mt = 0; mt < QS_MT; ++mt)
        CK_UNROLL for (int r = 0; r < 4; ++r)
    {
        int i = (nt * QS_MT + mt) * 4 + r;
        acc[i] = fmaf(part[i], sa[mt][r & 1] * sb[nt][r >> 1], acc[i]);
        part[i] = 0;
    }
}

/* One step: STAGES chunks of the weights w (loaded by the caller) against the stage of A at s;
 * chunks at or past k_end (the split's end, at most K) are skipped. K blocks end at chunk
 * boundaries: each is promoted where it ends or the split's range does (with QS_QCHUNKS; a
 * block cut by a split boundary is promoted in two parts, each split scaling its own). */
CK_DEVICE void qs_step(float *acc, float *part, unsigned (*w)[QS_NT][2][QS_WORDS],
                       const unsigned char *s, const ck_gemm_kargs *ka, long long step,
                       long long k_end, long long c0, int lane)
{
    int g = lane >> 2;
    CK_UNROLL for (int u = 0; u < GEMM_STAGES; ++u)
    {
        long long k0 = step * QS_STEP + u * GEMM_TILE_K;
        if (k0 >= k_end)
            break;
        int kb = QS_QCHUNKS ? (int)(k0 / ka->q_bk) : 0;
        unsigned z[QS_NT][2];
        CK_UNROLL for (int nt = 0; nt < QS_NT; ++nt) CK_UNROLL for (int h = 0; h < 2; ++h)
            z[nt][h] = qs_bias(ka, c0 + nt * 16 + g + 8 * h, kb);
        CK_UNROLL for (int q = 0; q < QS_PIECES; ++q)
        {
            ck_u32x4 x[QS_MT];
            CK_UNROLL for (int mt = 0; mt < QS_MT; ++mt) x[mt] =
                ck_ld16(s + (((u * QS_MT + mt) * QS_PIECES + q) * 32 + lane) * 16);
            CK_UNROLL for (int h = 0; h < 2; ++h)
            {
                CK_UNROLL for (int nt = 0; nt < QS_NT; ++nt)
                {
                    unsigned a[4];
                    qs_frag_w(a, w[u][nt][0], w[u][nt][1], 2 * q + h, z[nt][0], z[nt][1]);
                    CK_UNROLL for (int mt = 0; mt < QS_MT; ++mt)
                    {
                        unsigned b[2];
                        qs_frag_x(b, x[mt], h);
                        float *d = part + (nt * QS_MT + mt) * 4;
                        QS_MMA(d, a, b, d);
                    }
                }
            }
        }
#if QS_QCHUNKS
        if ((k0 + GEMM_TILE_K) % ka->q_bk == 0 || k0 + GEMM_TILE_K >= k_end)
            qs_promote(acc, part, ka, kb, c0, lane);
#else
        (void)acc, (void)c0;
#endif
    }
}

#if GEMM_SPLIT_K
/* Splits whose partial sums the last block loads together: about 64 registers' worth. */
#define QS_RED (QS_NREG >= 64 ? 1 : 64 / QS_NREG > 8 ? 8 : 64 / QS_NREG)

/* The splits of a column tile meet: each block writes its sums to its slot and counts itself
 * in; the last to arrive adds the slots of splits 0, 1, ... in that order (its own read back
 * like the others: the same bits whoever arrives last) and returns 1. */
CK_DEVICE int qs_split_reduce(float *acc, const ck_gemm_kargs *ka, int tile, int split)
{
    CK_SHARED_ARRAY(unsigned, qs_last, 1);
    int tid = ck_thread_linear(), splits = ka->k_splits;
    if (splits < 2) /* the plan clamped the split to the steps of K */
        return 1;
    size_t part = (size_t)QS_THREADS * QS_NREG;
    float *base = ka->ws + (size_t)tile * splits * part + tid;
    CK_UNROLL for (int i = 0; i < QS_NREG; ++i)
        base[(size_t)split * part + (size_t)i * QS_THREADS] = acc[i];
    ck_fence_device(); /* the partials are visible before the count says so */
    ck_sync_threads();
    if (tid == 0) {
        qs_last[0] = ck_atomic_add_u32(&ka->ws_flags[tile], 1u) == (unsigned)splits - 1;
        if (qs_last[0])
            ck_atomic_exch_u32(&ka->ws_flags[tile], 0u); /* ready for the next launch */
    }
    ck_sync_threads();
    if (!qs_last[0])
        return 0;
    ck_fence_device(); /* the other splits' partials, after their counts */
    CK_UNROLL for (int i = 0; i < QS_NREG; ++i) acc[i] = base[(size_t)i * QS_THREADS];
    /* QS_RED splits' loads in flight at once (one L2 round trip each batch), added in order */
    for (int s = 1; s < splits; s += QS_RED) {
        float v[QS_RED][QS_NREG];
        CK_UNROLL for (int j = 0; j < QS_RED; ++j) CK_UNROLL for (int i = 0; i < QS_NREG; ++i)
            v[j][i] = s + j < splits ? base[(size_t)(s + j) * part + (size_t)i * QS_THREADS] : 0.0f;
        CK_UNROLL for (int j = 0; j < QS_RED; ++j) if (s + j < splits)
            CK_UNROLL for (int i = 0; i < QS_NREG; ++i) acc[i] += v[j][i];
    }
    return 1;
}
#endif

/* The kernel's body: column tile and K range of this block, then per step: the weights' loads
 * issued, the step's A waited for (one barrier, which also frees the other stage), the next
 * step's A issued, the step's mma; promotion, the splits' reduction and the epilogue. */
CK_DEVICE void gemm_quant_skinny_main(ck_gemm_kargs ka)
{
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    int tid = ck_thread_linear(), warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
    int tile = (int)(ck_block_idx_x() % (unsigned)ka.tiles_n);
    int split = (int)(ck_block_idx_x() / (unsigned)ka.tiles_n);
    long long steps = (ka.k + QS_STEP - 1) / QS_STEP;
    long long s0 = steps * split / ka.k_splits, s1 = steps * (split + 1) / ka.k_splits;
    long long n0 = (long long)tile * GEMM_TILE_N, c0 = n0 + warp * QS_NT * 16;
    long long k_end = s1 * QS_STEP < ka.k ? s1 * QS_STEP : ka.k;
    float acc[QS_NREG];
#if QS_QCHUNKS
    float part[QS_NREG];
#else
    float *part = acc; /* one K block: promoted once, at the end */
#endif
    CK_UNROLL for (int i = 0; i < QS_NREG; ++i) acc[i] = 0, part[i] = 0;
    if (s0 < s1)
        qs_stage_a(smem, &ka, s0);
    ck_cp_async_commit();
    for (long long st = s0; st < s1; ++st) {
        unsigned w[GEMM_STAGES][QS_NT][2][QS_WORDS];
        CK_UNROLL for (int u = 0; u < GEMM_STAGES; ++u)
        {
            long long kb = (st * QS_STEP + u * GEMM_TILE_K) / 2 + QS_VB * t;
            CK_UNROLL for (int nt = 0; nt < QS_NT; ++nt) CK_UNROLL for (int h = 0; h < 2; ++h)
                qs_load_b(w[u][nt][h], &ka, c0 + nt * 16 + g + 8 * h, kb);
        }
        ck_cp_async_wait(0);
        ck_sync_threads();
        if (st + 1 < s1)
            qs_stage_a(smem + ((st - s0 + 1) % 2) * QS_A_STAGE, &ka, st + 1);
        ck_cp_async_commit();
        qs_step(acc, part, w, smem + ((st - s0) % 2) * QS_A_STAGE, &ka, st, k_end, c0, lane);
    }
#if !QS_QCHUNKS
    {
        float zero[QS_NREG];
        CK_UNROLL for (int i = 0; i < QS_NREG; ++i) zero[i] = acc[i], acc[i] = 0;
        qs_promote(acc, zero, &ka, 0, c0, lane);
    }
#endif
#if GEMM_SPLIT_K
    if (!qs_split_reduce(acc, &ka, tile, split))
        return;
#endif
    gemm_epilogue(acc, &ka, 0, 0, n0);
}

#endif
