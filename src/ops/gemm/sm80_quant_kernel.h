/*
 * The quantized operand paths of the sm_80 GEMM pipeline (GEMM_QUANT; host side quant.c):
 *
 *  - promotion: each K block's products accumulate in the tensor cores' type (`part`, f32 or
 *    i32) and are then added to the f32 accumulator times the block's scales,
 *        acc += part * sa(row, kb) * sb(kb, col),
 *    CK's ABQuantGrouped / DeepSeek-V3's fine-grained fp8 scaling (A 1 x 128, B 128 x 128),
 *    row-col scales (one block of K) and group-wise weight scales alike;
 *  - packed B (GEMM_B_PACKED): two 4-bit values per byte, low nibble = even k, dequantized in
 *    registers to A's type (exactly: int4, uint4 - zero point and e2m1 values all fit f16 and
 *    bf16) on the way from shared memory to the mma; the group scale is the promotion's sb.
 *
 * The scale and dequantization helpers serve the small-M kernel too
 * (sm80_quant_skinny_kernel.h); the promotion and the fragment reader need the tile pipeline's
 * register tiles (GEMM_NREG).
 *
 * The register layout is that of the mma C fragment (m16n8, every type): register r of tile
 * (mi, ni) holds row g + 8 (r / 2), column 2 t + r % 2 (g = lane / 4, t = lane % 4).
 */
#ifndef CK_OPS_GEMM_SM80_QUANT_KERNEL_H
#define CK_OPS_GEMM_SM80_QUANT_KERNEL_H

/* Scale of A's row `row` (M block row / sa_bmn) in K block kb; 1 outside M or per-tensor. */
CK_DEVICE float gemm_scale_a(const ck_gemm_kargs *ka, long long row, int kb)
{
#if GEMM_SCALE_A
    return row < ka->m ? ka->sa[row / ka->sa_bmn * ka->sa_mn + kb * ka->sa_k] : 0.0f;
#else
    (void)ka, (void)row, (void)kb;
    return 1.0f;
#endif
}

CK_DEVICE float gemm_scale_b(const ck_gemm_kargs *ka, long long col, int kb)
{
#if GEMM_SCALE_B
    return col < ka->n ? ka->sb[col / ka->sb_bmn * ka->sb_mn + kb * ka->sb_k] : 0.0f;
#else
    (void)ka, (void)col, (void)kb;
    return 1.0f;
#endif
}

#ifdef GEMM_NREG /* the tile pipeline's (sm80_pipeline_kernel.h) register tiles */
/* acc += part * sa * sb for the warp's tiles (rows from r0, columns from c0) in K block kb,
 * then part = 0. Blocks past K (padding of the last k-tile) hold zeros and are skipped. */
CK_DEVICE void gemm_promote(float *acc, GEMM_ACC_T *part, const ck_gemm_kargs *ka, int kb,
                            long long r0, long long c0, int lane)
{
    int g = lane >> 2, t = lane & 3;
    if (kb < ka->q_kblocks) {
        float sa[GEMM_MI][2], sb[GEMM_NI][2];
        CK_UNROLL for (int mi = 0; mi < GEMM_MI; ++mi) CK_UNROLL for (int h = 0; h < 2; ++h)
            sa[mi][h] = gemm_scale_a(ka, r0 + mi * 16 + g + 8 * h, kb);
        CK_UNROLL for (int ni = 0; ni < GEMM_NI; ++ni) CK_UNROLL for (int h = 0; h < 2; ++h)
            sb[ni][h] = gemm_scale_b(ka, c0 + ni * 8 + 2 * t + h, kb);
        CK_UNROLL for (int mi = 0; mi < GEMM_MI; ++mi)
            CK_UNROLL for (int ni = 0; ni < GEMM_NI; ++ni) CK_UNROLL for (int r = 0; r < 4; ++r)
        {
            int i = (mi * GEMM_NI + ni) * 4 + r;
            acc[i] = fmaf((float)part[i], sa[mi][r >> 1] * sb[ni][r & 1], acc[i]);
        }
    }
    CK_UNROLL for (int i = 0; i < GEMM_NREG; ++i) part[i] = 0;
}
#endif

#if GEMM_B_PACKED
/* One 4-bit value as a float (z: its zero point, uint4 with zero points only). */
CK_DEVICE float gemm_b4_value(unsigned q, int z)
{
#if GEMM_B_PACKED == 1 /* int4: two's complement */
    (void)z;
    return (float)((int)q - (int)((q & 8u) << 1));
#elif GEMM_B_PACKED == 2 /* uint4 - zero point */
    return (float)((int)q - z);
#else                    /* fp4 e2m1 */
    (void)z;
    return ck_nc_fp4e2m1_to_f32((uint8_t)q);
#endif
}

/* The 16-bit code of v in A's type by moving bits: exact for the values of 4-bit formats (0,
 * and normal numbers of at most 4 significant bits: int4 / uint4 - zero point, e2m1). */
CK_DEVICE unsigned gemm_b4_code(float v)
{
    unsigned u = ck_f32_as_u32(v);
#if GEMM_COMPUTE_IN == 3 /* bf16: f32's upper half */
    return u >> 16;
#else /* f16: rebias the exponent (127 -> 15), keep the top mantissa bits */
    unsigned mag = u & 0x7fffffffu;
    return ((u >> 16) & 0x8000u) | (mag ? (mag - 0x38000000u) >> 13 : 0u);
#endif
}

/* Integer formats by moving bits (Kim et al.'s and FasterTransformer's magic number): an
 * unsigned nibble u placed in the low mantissa bits of 2^7 (bf16: 0x4300 is 128, its step 1)
 * or 2^10 (f16: 0x6400 is 1024) reads as 2^7 + u (2^10 + u); one packed fma then subtracts
 * 2^7 + z for both halves at once (z: the zero point; 8 for int4, whose sign bit is flipped
 * first: q + 8 = q ^ 8 on four bits). Every step is exact for zero points 0 .. 15. */
#if GEMM_COMPUTE_IN == 3 /* bf16 */
#define GEMM_B4_MAGIC 0x43004300u
#define GEMM_B4_ONE   0x3f803f80u
#define GEMM_B4_NEG   0xc300u /* -(2^7 + z) is 0xc300 | z */
#define GEMM_B4_FMA   ck_fma_bf16x2
#else /* f16 */
#define GEMM_B4_MAGIC 0x64006400u
#define GEMM_B4_ONE   0x3c003c00u
#define GEMM_B4_NEG   0xe400u /* -(2^10 + z) is 0xe400 | z */
#define GEMM_B4_FMA   ck_fma_f16x2
#endif

/* The pair constant -(2^7 + z) (f16: 2^10) of unsigned nibbles with zero point z (int4: 8). */
CK_DEVICE unsigned gemm_b4_bias(int z)
{
    unsigned h = GEMM_B4_NEG | (unsigned)(GEMM_B_PACKED == 1 ? 8 : z);
    return h | (h << 16);
}

/* The register of the byte in bits 0..7 of v (bits above ignored) holding two unsigned nibbles
 * (int4: already sign-flipped), low nibble -> low half, minus the pair constant `bias`. */
CK_DEVICE unsigned gemm_b4_u2(unsigned v, unsigned bias)
{
    unsigned r = (v & 0xfu) | ((v << 12) & 0xf0000u) | GEMM_B4_MAGIC;
    return GEMM_B4_FMA(r, GEMM_B4_ONE, bias);
}

/* A byte's two values (low nibble: the even k) as two A-type halves of one register. */
CK_DEVICE unsigned gemm_b4_pair(unsigned byte, int z)
{
#if GEMM_B_PACKED == 3 /* fp4: value by value */
    return gemm_b4_code(gemm_b4_value(byte & 15u, z)) |
           (gemm_b4_code(gemm_b4_value(byte >> 4, z)) << 16);
#else
    return gemm_b4_u2(GEMM_B_PACKED == 1 ? byte ^ 0x88u : byte, gemm_b4_bias(z));
#endif
}

#ifdef GEMM_NREG
/* B fragments of columns n .. n+15 (as gemm_frag_b: r0, r1 of n .. n+7, r2, r3 of n+8 ..
 * n+15) of k-slice ks from packed B (a line of GEMM_TILE_K / 2 bytes per column): the mma's
 * b0 = B(2t, 2t+1; g) is byte 8 ks + t of column g, b1 = B(2t+8, 2t+9; g) byte 8 ks + t + 4.
 * Zero points for the block's global column n0 + n (+ 8) + g and the slice's K group. */
CK_DEVICE void gemm_frag_b4(unsigned *r, const unsigned char *s, int n, int ks, int lane,
                            const ck_gemm_kargs *ka, long long n0, long long k0)
{
    int g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int h = 0; h < 2; ++h)
    {
        int line = n + 8 * h + g, z = 0;
#if GEMM_B_ZEROS
        long long col = n0 + line;
        int kb = (int)((k0 + ks * 16) / ka->q_bk);
        if (col < ka->n && kb < ka->q_kblocks)
            z = ka->zb[col / ka->sb_bmn * ka->sb_mn + kb * ka->sb_k];
#else
        (void)ka, (void)n0, (void)k0;
#endif
        r[2 * h] = gemm_b4_pair(s[gemm_swz(line, ks * 8 + t, GEMM_TILE_K / 2)], z);
        r[2 * h + 1] = gemm_b4_pair(s[gemm_swz(line, ks * 8 + t + 4, GEMM_TILE_K / 2)], z);
    }
}
#endif /* GEMM_NREG */
#endif /* GEMM_B_PACKED */

#endif
