/*
 * The sm_80 GEMM pipeline (family 80): cp.async multistage global -> shared, ldmatrix (or
 * plain shared loads where ldmatrix cannot gather the fragment), mma.sync; the epilogue is
 * generated (gemm_epilogue, epilogue.c). Runs unchanged on sm_80, sm_89, sm_90 and the emulator.
 * Strided batches (GEMM_BATCHED): one block per (batch, tile), the batch the slow index of
 * blockIdx.x; A and B move by their batch strides, the epilogue moves C, D and bias.
 *
 * Included after the GEMM_* defines of the parameter table (params.c) and the generated
 * epilogue. Shared memory per stage and operand: its tile in the global matrix's own order,
 * one line per row (K-major) or per k (MN-major), unpadded, its 16-byte chunks XOR-swizzled
 * within each 128 bytes (gemm_swz) so that the eight rows of an ldmatrix and the eight 16-byte
 * pieces of a cp.async phase fall in distinct banks. Every mma step reads 32 bytes of K per
 * row (16 f16/bf16, 8 tf32, 32 fp8/i8), so one set of fragment helpers serves every type.
 */
#ifndef CK_OPS_GEMM_SM80_PIPELINE_KERNEL_H
#define CK_OPS_GEMM_SM80_PIPELINE_KERNEL_H

#include "ops/gemm/gemm_args_kernel.h"
/* GEMM_ES, gemm_swz, gemm_tile_src, gemm_copy_vec / _scalar */
#include "ops/gemm/gemm_copy_kernel.h"

#define GEMM_A_ES    GEMM_ES(GEMM_A_TYPE)
#define GEMM_B_ES    GEMM_ES(GEMM_B_TYPE)
#define GEMM_THREADS (GEMM_WARPS_M * GEMM_WARPS_N * 32)
#define GEMM_WTM     (GEMM_TILE_M / GEMM_WARPS_M)
#define GEMM_WTN     (GEMM_TILE_N / GEMM_WARPS_N)
#define GEMM_MI      (GEMM_WTM / 16)
#define GEMM_NI      (GEMM_WTN / 8)
#define GEMM_NREG    (GEMM_MI * GEMM_NI * 4)
#define GEMM_KBYTES  (GEMM_TILE_K * GEMM_A_ES) /* bytes of K per stage and row */
#define GEMM_KSLICES (GEMM_KBYTES / 32)

/* Lines of each operand tile in shared memory (K-major: one per row; MN-major: one per k). */
#define GEMM_A_LINES      (GEMM_A_KMAJOR ? GEMM_TILE_M : GEMM_TILE_K)
#define GEMM_A_LINE_BYTES (GEMM_A_KMAJOR ? GEMM_KBYTES : GEMM_TILE_M * GEMM_A_ES)
#ifndef GEMM_QUANT /* quantized operands (quant.c, sm80_quant_kernel.h) */
#define GEMM_QUANT    0
#define GEMM_SCALE_A  0
#define GEMM_SCALE_B  0
#define GEMM_QK_STEPS 0
#define GEMM_B_PACKED 0
#define GEMM_B_ZEROS  0
#endif
#define GEMM_B_KDIV       (GEMM_B_PACKED ? 2 : 1) /* packed B: two values of K per byte */
#define GEMM_B_LINES      (GEMM_B_KMAJOR ? GEMM_TILE_N : GEMM_TILE_K)
#define GEMM_B_LINE_BYTES                                                                          \
    (GEMM_B_KMAJOR ? GEMM_TILE_K * GEMM_B_ES / GEMM_B_KDIV : GEMM_TILE_N * GEMM_B_ES)
#define GEMM_A_STAGE      (GEMM_A_LINES * GEMM_A_LINE_BYTES)
#define GEMM_STAGE_BYTES  (GEMM_A_STAGE + GEMM_B_LINES * GEMM_B_LINE_BYTES)

#if GEMM_COMPUTE_IN == 12 /* i8 */
#define GEMM_ACC_T int
#define GEMM_MMA   ck_mma_m16n8k32_s32_s8
#elif GEMM_COMPUTE_IN == 2
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k16_f32_f16
#elif GEMM_COMPUTE_IN == 3
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k16_f32_bf16
#elif GEMM_COMPUTE_IN == 4
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k8_f32_tf32
#elif GEMM_A_TYPE == 5 && GEMM_B_TYPE == 5
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k32_f32_e4m3
#elif GEMM_A_TYPE == 6 && GEMM_B_TYPE == 6
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k32_f32_e5m2
#elif GEMM_A_TYPE == 5
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k32_f32_e4m3_e5m2
#else
#define GEMM_ACC_T float
#define GEMM_MMA   ck_mma_m16n8k32_f32_e5m2_e4m3
#endif

/* Whether operand A (B) is copied in 16-byte pieces: the parameter table's GEMM_A_VEC, or a
 * test of the pointer and leading dimension of the arguments where a source decides per launch
 * (grouped GEMM: every group its own, grouped_kernel.h). */
#ifndef GEMM_A_VEC_AT
#define GEMM_A_VEC_AT(ka) GEMM_A_VEC
#define GEMM_B_VEC_AT(ka) GEMM_B_VEC
#endif

/* Issue the copies of k-tile kt into stage slot `slot`. The operand path: a source may define
 * GEMM_A_LOADER(s, ka, m0, k0) / GEMM_B_LOADER(s, ka, n0, k0) before including this file to
 * fill an operand's stage itself (in this layout: gemm_swz lines, K-major A / N-major B as the
 * problem's orders say), e.g. convolution's im2col copy window over a transformed descriptor
 * (src/ops/conv); ka->a / ka->b are then the batch's base pointers. */
CK_DEVICE void gemm_load_stage(unsigned char *smem, int slot, const ck_gemm_kargs *ka, long long m0,
                               long long n0, int kt)
{
    unsigned char *sa = smem + slot * GEMM_STAGE_BYTES, *sb = sa + GEMM_A_STAGE;
    long long k0 = (long long)kt * GEMM_TILE_K;
    gemm_tile_src a = {(const unsigned char *)ka->a,
                       ka->lda * GEMM_A_ES,
                       GEMM_A_KMAJOR ? m0 : k0,
                       GEMM_A_KMAJOR ? ka->m : ka->k,
                       (GEMM_A_KMAJOR ? k0 : m0) * GEMM_A_ES,
                       (GEMM_A_KMAJOR ? ka->k : ka->m) * GEMM_A_ES};
    gemm_tile_src b = {(const unsigned char *)ka->b,
                       ka->ldb * GEMM_B_ES,
                       GEMM_B_KMAJOR ? n0 : k0,
                       GEMM_B_KMAJOR ? ka->n : ka->k,
                       (GEMM_B_KMAJOR ? k0 : n0) * GEMM_B_ES / GEMM_B_KDIV,
                       (GEMM_B_KMAJOR ? ka->k : ka->n) * GEMM_B_ES / GEMM_B_KDIV};
#if defined(GEMM_A_LOADER)
    (void)a;
    GEMM_A_LOADER(sa, ka, m0, k0);
#else
    if (GEMM_A_VEC_AT(ka))
        gemm_copy_vec(sa, a, GEMM_A_LINES, GEMM_A_LINE_BYTES, ck_thread_linear(), GEMM_THREADS);
    else
        gemm_copy_scalar(sa, a, GEMM_A_LINES, GEMM_A_LINE_BYTES, GEMM_A_ES, ck_thread_linear(),
                         GEMM_THREADS);
#endif
#if defined(GEMM_B_LOADER)
    (void)b;
    GEMM_B_LOADER(sb, ka, n0, k0);
#else
    if (GEMM_B_VEC_AT(ka))
        gemm_copy_vec(sb, b, GEMM_B_LINES, GEMM_B_LINE_BYTES, ck_thread_linear(), GEMM_THREADS);
    else
        gemm_copy_scalar(sb, b, GEMM_B_LINES, GEMM_B_LINE_BYTES, GEMM_B_ES, ck_thread_linear(),
                         GEMM_THREADS);
#endif
}

/* Four bytes of an MN-major 8-bit tile: k .. k+3 at column byte c, packed low first. */
CK_DEVICE unsigned gemm_gather4(const unsigned char *s, int line_bytes, int k, int c)
{
    return (unsigned)s[gemm_swz(k, c, line_bytes)] |
           ((unsigned)s[gemm_swz(k + 1, c, line_bytes)] << 8) |
           ((unsigned)s[gemm_swz(k + 2, c, line_bytes)] << 16) |
           ((unsigned)s[gemm_swz(k + 3, c, line_bytes)] << 24);
}

/* The A fragment (m16 x 32 bytes of K, the mma's "row" operand) of rows m .. m+15, k-slice ks. */
CK_DEVICE void gemm_frag_a(unsigned *r, const unsigned char *s, int m, int ks, int lane)
{
    int g = lane >> 2, t = lane & 3;
#if GEMM_A_KMAJOR
    ck_ldmatrix_x4(r, s + gemm_swz(m + (lane & 15), ks * 32 + (lane >> 4) * 16, GEMM_A_LINE_BYTES));
#elif GEMM_A_ES == 2
    int i = lane >> 3;
    ck_ldmatrix_x4_trans(r, s + gemm_swz(ks * 16 + (lane & 7) + 8 * (i >> 1), (m + 8 * (i & 1)) * 2,
                                         GEMM_A_LINE_BYTES));
#elif GEMM_A_ES == 4
    for (int q = 0; q < 4; ++q)
        r[q] = *(const unsigned *)(s + gemm_swz(ks * 8 + t + 4 * (q >> 1), (m + g + 8 * (q & 1)) * 4,
                                                GEMM_A_LINE_BYTES));
#else
    for (int q = 0; q < 4; ++q)
        r[q] = gemm_gather4(s, GEMM_A_LINE_BYTES, ks * 32 + 4 * t + 16 * (q >> 1),
                            m + g + 8 * (q & 1));
#endif
}

/* B fragments (32 bytes of K x n8, the "col" operand) of columns n .. n+15: r0, r1 of n .. n+7
 * and r2, r3 of n+8 .. n+15. */
CK_DEVICE void gemm_frag_b(unsigned *r, const unsigned char *s, int n, int ks, int lane)
{
    int g = lane >> 2, t = lane & 3;
#if GEMM_B_KMAJOR
    ck_ldmatrix_x4(r, s + gemm_swz(n + (lane >> 4) * 8 + (lane & 7), ks * 32 + ((lane >> 3) & 1) * 16,
                                   GEMM_B_LINE_BYTES));
#elif GEMM_B_ES == 2
    int i = lane >> 3;
    ck_ldmatrix_x4_trans(r, s + gemm_swz(ks * 16 + (lane & 7) + 8 * (i & 1), (n + 8 * (i >> 1)) * 2,
                                         GEMM_B_LINE_BYTES));
#elif GEMM_B_ES == 4
    for (int q = 0; q < 4; ++q)
        r[q] = *(const unsigned *)(s + gemm_swz(ks * 8 + t + 4 * (q & 1), (n + 8 * (q >> 1) + g) * 4,
                                                GEMM_B_LINE_BYTES));
#else
    for (int q = 0; q < 4; ++q)
        r[q] = gemm_gather4(s, GEMM_B_LINE_BYTES, ks * 32 + 4 * t + 16 * (q & 1),
                            n + 8 * (q >> 1) + g);
#endif
}

/* tf32 of an f32 bit pattern, rounded to nearest (ties away), as cvt.rna.tf32.f32. */
CK_DEVICE unsigned gemm_tf32(unsigned u)
{
    return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & 0xffffe000u;
}

/* acc += A B over one k-slice for the warp's MI x NI mma tiles. */
CK_DEVICE void gemm_mma_slice(GEMM_ACC_T *acc, const unsigned (*a)[4], const unsigned (*b)[2])
{
    CK_UNROLL for (int mi = 0; mi < GEMM_MI; ++mi) CK_UNROLL for (int ni = 0; ni < GEMM_NI; ++ni)
    {
        GEMM_ACC_T *d = acc + (mi * GEMM_NI + ni) * 4;
#if GEMM_SPLIT3
        /* 3xTF32: x = big + small; a b ~ big_a big_b + big_a small_b + small_a big_b */
        unsigned ab[4], as[4], bb[2], bs[2];
        for (int q = 0; q < 4; ++q) {
            ab[q] = gemm_tf32(a[mi][q]);
            as[q] = gemm_tf32(ck_f32_as_u32(ck_u32_as_f32(a[mi][q]) - ck_u32_as_f32(ab[q])));
        }
        for (int q = 0; q < 2; ++q) {
            bb[q] = gemm_tf32(b[ni][q]);
            bs[q] = gemm_tf32(ck_f32_as_u32(ck_u32_as_f32(b[ni][q]) - ck_u32_as_f32(bb[q])));
        }
        GEMM_MMA(d, as, bb, d);
        GEMM_MMA(d, ab, bs, d);
        GEMM_MMA(d, ab, bb, d);
#elif GEMM_COMPUTE_IN == 4
        unsigned at[4], bt[2];
        for (int q = 0; q < 4; ++q)
            at[q] = gemm_tf32(a[mi][q]);
        for (int q = 0; q < 2; ++q)
            bt[q] = gemm_tf32(b[ni][q]);
        GEMM_MMA(d, at, bt, d);
#else
        GEMM_MMA(d, a[mi], b[ni], d);
#endif
    }
}

#if GEMM_QUANT
#include "ops/gemm/sm80_quant_kernel.h"
#endif

/* The warp's fragments of k-slice ks of the stage at sa (k-tile origin k0 of the block's tile
 * at column n0: packed B's zero points): A of its MI row blocks, B of its NI column blocks. */
CK_DEVICE void gemm_frags(unsigned (*a)[4], unsigned (*b)[2], const unsigned char *sa, int ks,
                          int wm, int wn, int lane, const ck_gemm_kargs *ka, long long n0,
                          long long k0)
{
    const unsigned char *sb = sa + GEMM_A_STAGE;
    unsigned r[4];
    CK_UNROLL for (int mi = 0; mi < GEMM_MI; ++mi)
        gemm_frag_a(a[mi], sa, wm * GEMM_WTM + mi * 16, ks, lane);
    CK_UNROLL for (int np = 0; np < GEMM_NI / 2; ++np)
    {
#if GEMM_B_PACKED
        gemm_frag_b4(r, sb, wn * GEMM_WTN + np * 16, ks, lane, ka, n0, k0);
#else
        (void)ka, (void)n0, (void)k0;
        gemm_frag_b(r, sb, wn * GEMM_WTN + np * 16, ks, lane);
#endif
        b[2 * np][0] = r[0];
        b[2 * np][1] = r[1];
        b[2 * np + 1][0] = r[2];
        b[2 * np + 1][1] = r[3];
    }
}

/* Output tile t: tiles run batch after batch (the grid is batch x tiles along x); within a
 * batch, groups of GEMM_GROUP tile rows walked along M, then the next column of the group, so
 * that the blocks resident together share B's columns and A's band in L2. */
CK_DEVICE void gemm_tile_at(const ck_gemm_kargs *ka, long long t, long long *batch, long long *m0,
                            long long *n0)
{
    long long per = (long long)ka->tiles_m * ka->tiles_n;
    long long width = (long long)GEMM_GROUP * ka->tiles_n;
    *batch = t / per;
    t %= per;
    long long first = t / width * GEMM_GROUP, r = t % width;
    long long rows = ka->tiles_m - first < GEMM_GROUP ? ka->tiles_m - first : GEMM_GROUP;
    *m0 = (first + r % rows) * GEMM_TILE_M;
    *n0 = r / rows * GEMM_TILE_N;
}

/* Fragments read one k-slice ahead (double-buffered in registers) where both operands come
 * through ldmatrix; the gathering paths (MN-major tf32 and 8-bit) read each slice just before
 * its mma, as a second set of their fragments would not fit in registers. */
#define GEMM_PREFETCH                                                                              \
    ((GEMM_A_KMAJOR || GEMM_A_ES == 2) && (GEMM_B_KMAJOR || GEMM_B_ES == 2))

/* One output tile at (m0, n0) of batch `batch` (ka's A and B already that batch's; the
 * epilogue moves C, D and bias). Fragments of k-slice ks + 1 are read from shared memory while
 * the mma of ks run; one block barrier per k-tile, before its last slice, both makes k-tile
 * kt + 1 visible and frees the slot of kt - 1 for the copies issued at the next k-tile's first
 * slice. */
CK_DEVICE void gemm_sm80_tile(ck_gemm_kargs ka, unsigned char *smem, long long batch, long long m0,
                              long long n0)
{
    int tid = ck_thread_linear(), warp = tid / 32, lane = tid % 32;
    int wm = warp / GEMM_WARPS_N, wn = warp % GEMM_WARPS_N;
#if GEMM_QUANT /* each K block's sums in part, promoted into the f32 acc with its scales */
    float acc[GEMM_NREG];
    GEMM_ACC_T part[GEMM_NREG];
    CK_UNROLL for (int i = 0; i < GEMM_NREG; ++i) acc[i] = 0, part[i] = 0;
    long long r0 = m0 + wm * GEMM_WTM, c0 = n0 + wn * GEMM_WTN;
#define GEMM_SUM part
#else
    GEMM_ACC_T acc[GEMM_NREG];
    CK_UNROLL for (int i = 0; i < GEMM_NREG; ++i) acc[i] = 0;
#define GEMM_SUM acc
#endif
    unsigned a[2][GEMM_MI][4], b[2][GEMM_NI][2];

    /* prologue: the first STAGES - 1 k-tiles in flight, k-slice 0's fragments */
    for (int s = 0; s < GEMM_STAGES - 1; ++s) {
        if (s < ka.k_tiles)
            gemm_load_stage(smem, s, &ka, m0, n0, s);
        ck_cp_async_commit();
    }
    ck_cp_async_wait(GEMM_STAGES - 2);
    ck_sync_threads();
    if (GEMM_PREFETCH)
        gemm_frags(a[0], b[0], smem, 0, wm, wn, lane, &ka, n0, 0);
    int cur = 0, next = 1, write = GEMM_STAGES - 1; /* slots of k-tiles kt, kt + 1, kt + 2 */
    for (int kt = 0; kt < ka.k_tiles; ++kt) {
        CK_UNROLL for (int ks = 0; ks < GEMM_KSLICES; ++ks)
        {
            int f = GEMM_PREFETCH ? ks % 2 : 0; /* the buffer of slice ks */
            if (ks == GEMM_KSLICES - 1) {       /* k-tile kt + 1 landed; kt - 1's slot is free */
                ck_cp_async_wait(GEMM_STAGES - 2);
                ck_sync_threads();
            }
            long long k0 = (long long)kt * GEMM_TILE_K;
            if (!GEMM_PREFETCH)
                gemm_frags(a[f], b[f], smem + cur * GEMM_STAGE_BYTES, ks, wm, wn, lane, &ka, n0,
                           k0);
            else if (ks < GEMM_KSLICES - 1)
                gemm_frags(a[1 - f], b[1 - f], smem + cur * GEMM_STAGE_BYTES, ks + 1, wm, wn, lane,
                           &ka, n0, k0);
            else if (kt + 1 < ka.k_tiles)
                gemm_frags(a[1 - f], b[1 - f], smem + next * GEMM_STAGE_BYTES, 0, wm, wn, lane, &ka,
                           n0, k0 + GEMM_TILE_K);
            if (ks == 0) { /* refill kt - 1's slot with k-tile kt + STAGES - 1 */
                if (kt + GEMM_STAGES - 1 < ka.k_tiles)
                    gemm_load_stage(smem, write, &ka, m0, n0, kt + GEMM_STAGES - 1);
                ck_cp_async_commit();
            }
            gemm_mma_slice(GEMM_SUM, (const unsigned(*)[4])a[f], (const unsigned(*)[2])b[f]);
#if GEMM_QUANT && GEMM_QK_STEPS /* K block kb ends with this slice: promote it */
            int steps = kt * GEMM_KSLICES + ks + 1;
            if (steps % GEMM_QK_STEPS == 0)
                gemm_promote(acc, part, &ka, steps / GEMM_QK_STEPS - 1, r0, c0, lane);
#endif
        }
        cur = next;
        next = next == GEMM_STAGES - 1 ? 0 : next + 1;
        write = write == GEMM_STAGES - 1 ? 0 : write + 1;
    }
#if GEMM_QUANT /* the last (or only) K block, unless it ended with the last slice */
    int total = ka.k_tiles * GEMM_KSLICES;
    if (GEMM_QK_STEPS == 0 || total % (GEMM_QK_STEPS ? GEMM_QK_STEPS : 1) != 0)
        gemm_promote(acc, part, &ka,
                     GEMM_QK_STEPS ? total / (GEMM_QK_STEPS ? GEMM_QK_STEPS : 1) : 0, r0, c0, lane);
#endif
    gemm_epilogue(acc, &ka, batch, m0, n0);
}

/* The kernel's body (the generated source declares the kernel ck_gemm_sm80 calling it): one
 * block per output tile. */
CK_DEVICE void gemm_sm80_main(ck_gemm_kargs ka)
{
    long long batch, m0, n0;
    gemm_tile_at(&ka, ck_block_idx_x(), &batch, &m0, &n0);
#if GEMM_BATCHED /* this batch's A and B (the epilogue moves C, D and bias itself) */
    ka.a = (const unsigned char *)ka.a + batch * ka.batch_a * GEMM_A_ES;
    ka.b = (const unsigned char *)ka.b + batch * ka.batch_b * GEMM_B_ES;
#endif
    gemm_sm80_tile(ka, (unsigned char *)ck_dynamic_shared(), batch, m0, n0);
}

#endif
