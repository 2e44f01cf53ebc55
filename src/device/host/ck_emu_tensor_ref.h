/*
 * Pure reference semantics of the tensor-core and asynchronous operations of the device C
 * dialect, for the CPU emulator. Every function here works on whole-group data (32 lanes of a
 * warp, or 128 lanes of a warpgroup, lane-major) and on plain memory; none knows about fibers.
 * host/ck_host_tensor.h wraps them per thread through ck_emu_group_collective.
 *
 * Fragment layouts follow the PTX ISA ("Matrix Fragments for mma.m16n8k*", "Matrix Fragments for
 * wgmma.mma_async.m64nNk16", "Warp-level matrix load instruction: ldmatrix", "Shared Memory
 * Matrix Layout", "Tensor copy"). In the comments g = lane / 4 ("groupID") and t = lane % 4
 * ("threadID_in_group"). Element 0 of a packed register is in its low bits.
 *
 * Arithmetic model of the emulator: every product of two inputs is exact in double; the sum of
 * the products of one output element and the accumulator input is formed in double and rounded
 * once to the output type (float, or f16 with round-to-nearest-even). The hardware's internal
 * order and truncation differ by a few ulp of the output; integer mma is exact.
 *
 * Docs: docs/device-tensor.md.
 */
#ifndef CK_DEVICE_HOST_CK_EMU_TENSOR_REF_H
#define CK_DEVICE_HOST_CK_EMU_TENSOR_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ numeric decoding */

/* Input element formats understood by the reference mma functions. */
typedef enum ck_emu_elem {
    CK_EMU_F16 = 0,
    CK_EMU_BF16 = 1,
    CK_EMU_TF32 = 2,
    CK_EMU_E4M3 = 3,
    CK_EMU_E5M2 = 4,
    CK_EMU_S8 = 5,
    CK_EMU_U8 = 6
} ck_emu_elem;

static inline float ck_emu_bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t ck_emu_float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* IEEE binary16 bits → value (exact). */
static inline double ck_emu_f16_to_double(uint16_t h)
{
    unsigned sign = h >> 15, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    uint32_t bits;
    if (e == 0) {
        double v = (double)m / 16777216.0; /* m * 2^-24 */
        return sign ? -v : v;
    }
    if (e == 31)
        bits = (sign << 31) | 0x7F800000u | (m << 13);
    else
        bits = (sign << 31) | ((e - 15 + 127) << 23) | (m << 13);
    return (double)ck_emu_bits_to_float(bits);
}

/* double → binary16 bits, round to nearest even (directly from the double: no double
 * rounding), overflow to infinity. */
static inline uint16_t ck_emu_double_to_f16(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    int e = (int)((u >> 52) & 0x7FFu);
    uint64_t m = u & 0xFFFFFFFFFFFFFull;
    if (e == 0x7FF)
        return (uint16_t)(sign | 0x7C00u | (m ? 0x200u : 0u));
    if (e == 0)
        return sign; /* double subnormals are far below the f16 range */
    int ue = e - 1023;
    if (ue > 15)
        return (uint16_t)(sign | 0x7C00u);
    if (ue < -26)
        return sign;
    /* value = full * 2^(ue-52); unit of the result: 2^(ue-10) normal, 2^-24 subnormal */
    uint64_t full = m | (1ull << 52);
    int unit = ue >= -14 ? ue - 10 : -24;
    int shift = unit - (ue - 52); /* 42 .. 54 */
    uint64_t q = full >> shift, rem = full & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    /* q counts units: for normals q in [1024, 2048] (2048 carries into the exponent) */
    if (ue >= -14)
        return (uint16_t)(sign | (uint16_t)(((uint32_t)(ue + 14) << 10) + (uint32_t)q));
    return (uint16_t)(sign | (uint16_t)q); /* q may reach 1024 = smallest normal: correct */
}

/* Decode one input element of format `fmt` from its bit pattern (low bits of `bits`). */
static inline double ck_emu_decode(ck_emu_elem fmt, uint32_t bits)
{
    switch (fmt) {
    case CK_EMU_F16:
        return ck_emu_f16_to_double((uint16_t)bits);
    case CK_EMU_BF16:
        return (double)ck_emu_bits_to_float((bits & 0xFFFFu) << 16);
    case CK_EMU_TF32:
        return (double)ck_emu_bits_to_float(bits & 0xFFFFE000u);
    case CK_EMU_E4M3: {
        unsigned s = (bits >> 7) & 1u, e = (bits >> 3) & 0xFu, m = bits & 7u;
        double v;
        if (e == 15 && m == 7) {
            uint32_t nan = 0x7FC00000u;
            return (double)ck_emu_bits_to_float(nan);
        }
        if (e == 0)
            v = (double)m / 512.0; /* m * 2^-9 */
        else
            v = (1.0 + m / 8.0) * (double)((e >= 7) ? (1u << (e - 7)) : 1.0 / (1u << (7 - e)));
        return s ? -v : v;
    }
    case CK_EMU_E5M2:
        return ck_emu_f16_to_double((uint16_t)((bits & 0xFFu) << 8));
    case CK_EMU_S8:
        return (double)(int8_t)(uint8_t)bits;
    case CK_EMU_U8:
        return (double)(uint8_t)bits;
    }
    return 0.0;
}

/* ------------------------------------------------------------------ mma.sync (one warp) */

/* Shapes of mma.sync handled by ck_emu_ref_mma. */
typedef enum ck_emu_mma_shape {
    CK_EMU_M16N8K8 = 0,  /* f16/bf16 (a: 2 regs, b: 1 reg) or tf32 (a: 4 regs, b: 2 regs) */
    CK_EMU_M16N8K16 = 1, /* f16/bf16: a 4 regs, b 2 regs */
    CK_EMU_M16N8K32 = 2  /* s8/u8/e4m3/e5m2: a 4 regs, b 2 regs */
} ck_emu_mma_shape;

/* Where element (register r, sub-element e) of lane `lane` of operand A lives in the 16 x K
 * matrix. 16-bit k16: register r holds row g + 8*(r&1), columns 2t+8*(r>>1) + {0,1}; k8: row
 * g+8r. tf32 k8: register r holds row g + 8*(r&1), column t + 4*(r>>1). 8-bit k32: register r
 * holds row g + 8*(r&1), columns 4t + 16*(r>>1) + {0..3}. */
static inline void ck_emu_mma_a_coord(ck_emu_mma_shape shape, ck_emu_elem fmt, unsigned lane,
                                      unsigned r, unsigned e, unsigned *row, unsigned *col)
{
    unsigned g = lane >> 2, t = lane & 3u;
    if (shape == CK_EMU_M16N8K32) {
        *row = g + 8u * (r & 1u);
        *col = 4u * t + 16u * (r >> 1) + e;
    } else if (fmt == CK_EMU_TF32) {
        *row = g + 8u * (r & 1u);
        *col = t + 4u * (r >> 1);
    } else if (shape == CK_EMU_M16N8K16) {
        *row = g + 8u * (r & 1u);
        *col = 2u * t + 8u * (r >> 1) + e;
    } else {
        *row = g + 8u * r;
        *col = 2u * t + e;
    }
}

/* Where element (register r, sub-element e) of lane `lane` of operand B lives in the K x 8
 * matrix: column g always; 16-bit rows 2t + 8r + {0,1}; tf32 row t + 4r; 8-bit rows
 * 4t + 16r + {0..3}. */
static inline void ck_emu_mma_b_coord(ck_emu_mma_shape shape, ck_emu_elem fmt, unsigned lane,
                                      unsigned r, unsigned e, unsigned *row, unsigned *col)
{
    unsigned g = lane >> 2, t = lane & 3u;
    *col = g;
    if (shape == CK_EMU_M16N8K32)
        *row = 4u * t + 16u * r + e;
    else if (fmt == CK_EMU_TF32)
        *row = t + 4u * r;
    else
        *row = 2u * t + 8u * r + e;
}

/* Register counts and elements per register of the A and B fragments. */
static inline void ck_emu_mma_counts(ck_emu_mma_shape shape, ck_emu_elem fmt, unsigned *k,
                                     unsigned *a_regs, unsigned *b_regs, unsigned *per_reg)
{
    if (shape == CK_EMU_M16N8K32) {
        *k = 32, *a_regs = 4, *b_regs = 2, *per_reg = 4;
    } else if (fmt == CK_EMU_TF32) {
        *k = 8, *a_regs = 4, *b_regs = 2, *per_reg = 1;
    } else if (shape == CK_EMU_M16N8K16) {
        *k = 16, *a_regs = 4, *b_regs = 2, *per_reg = 2;
    } else {
        *k = 8, *a_regs = 2, *b_regs = 1, *per_reg = 2;
    }
}

/* Gather the A (16 x K) and B (K x 8) matrices of one warp's mma fragments, as doubles.
 * a is lane-major with 4 registers per lane, b with 2 (unused registers ignored). */
static inline void ck_emu_mma_gather(ck_emu_mma_shape shape, ck_emu_elem fa, ck_emu_elem fb,
                                     const uint32_t a[32][4], const uint32_t b[32][2],
                                     double A[16][32], double B[32][8])
{
    unsigned k, na, nb, per;
    ck_emu_mma_counts(shape, fa, &k, &na, &nb, &per);
    unsigned bits = 32u / per;
    uint32_t mask = per == 1 ? 0xFFFFFFFFu : ((1u << bits) - 1u);
    for (unsigned lane = 0; lane < 32; ++lane) {
        for (unsigned r = 0; r < na; ++r)
            for (unsigned e = 0; e < per; ++e) {
                unsigned row, col;
                ck_emu_mma_a_coord(shape, fa, lane, r, e, &row, &col);
                A[row][col] = ck_emu_decode(fa, (a[lane][r] >> (e * bits)) & mask);
            }
        for (unsigned r = 0; r < nb; ++r)
            for (unsigned e = 0; e < per; ++e) {
                unsigned row, col;
                ck_emu_mma_b_coord(shape, fb, lane, r, e, &row, &col);
                B[row][col] = ck_emu_decode(fb, (b[lane][r] >> (e * bits)) & mask);
            }
    }
}

/* Float-accumulator mma.sync: D = A*B + C for one warp. shape/fa/fb select the instruction:
 *   m16n8k8  f16|bf16 (a 2 regs, b 1)  | m16n8k8 tf32 (a 4, b 2)
 *   m16n8k16 f16|bf16 (a 4, b 2)       | m16n8k32 e4m3|e5m2 (a 4, b 2; fa, fb may differ)
 * C/D register r of lane L is element (g + 8*(r>>1), 2t + (r&1)). d may alias c. */
static inline void ck_emu_ref_mma_f32(ck_emu_mma_shape shape, ck_emu_elem fa, ck_emu_elem fb,
                                      float d[32][4], const uint32_t a[32][4],
                                      const uint32_t b[32][2], const float c[32][4])
{
    double A[16][32], B[32][8];
    unsigned k, na, nb, per;
    ck_emu_mma_counts(shape, fa, &k, &na, &nb, &per);
    ck_emu_mma_gather(shape, fa, fb, a, b, A, B);
    for (unsigned lane = 0; lane < 32; ++lane) {
        float out[4];
        for (unsigned r = 0; r < 4; ++r) {
            unsigned row = (lane >> 2) + 8u * (r >> 1), col = 2u * (lane & 3u) + (r & 1u);
            double s = (double)c[lane][r];
            for (unsigned i = 0; i < k; ++i)
                s += A[row][i] * B[i][col];
            out[r] = (float)s;
        }
        memcpy(d[lane], out, sizeof out);
    }
}

/* f16-accumulator mma.sync (m16n8k8 / m16n8k16 with f16 inputs): C and D are two f16x2
 * registers per lane; register r holds row g + 8r, columns 2t + {0,1}. d may alias c. */
static inline void ck_emu_ref_mma_f16acc(ck_emu_mma_shape shape, uint32_t d[32][2],
                                         const uint32_t a[32][4], const uint32_t b[32][2],
                                         const uint32_t c[32][2])
{
    double A[16][32], B[32][8];
    unsigned k, na, nb, per;
    ck_emu_mma_counts(shape, CK_EMU_F16, &k, &na, &nb, &per);
    ck_emu_mma_gather(shape, CK_EMU_F16, CK_EMU_F16, a, b, A, B);
    for (unsigned lane = 0; lane < 32; ++lane) {
        uint32_t out[2];
        for (unsigned r = 0; r < 2; ++r) {
            uint32_t packed = 0;
            for (unsigned h = 0; h < 2; ++h) {
                unsigned row = (lane >> 2) + 8u * r, col = 2u * (lane & 3u) + h;
                double s = ck_emu_f16_to_double((uint16_t)(c[lane][r] >> (16 * h)));
                for (unsigned i = 0; i < k; ++i)
                    s += A[row][i] * B[i][col];
                packed |= (uint32_t)ck_emu_double_to_f16(s) << (16 * h);
            }
            out[r] = packed;
        }
        memcpy(d[lane], out, sizeof out);
    }
}

/* Integer mma.sync m16n8k32 (s8/u8 x s8/u8 → s32). Without satfinite the 32-bit result wraps;
 * with satfinite it is clamped to [INT32_MIN, INT32_MAX]. Layout of C/D as ck_emu_ref_mma_f32.
 * d may alias c. */
static inline void ck_emu_ref_mma_s32(ck_emu_elem fa, ck_emu_elem fb, int satfinite,
                                      int32_t d[32][4], const uint32_t a[32][4],
                                      const uint32_t b[32][2], const int32_t c[32][4])
{
    double A[16][32], B[32][8];
    ck_emu_mma_gather(CK_EMU_M16N8K32, fa, fb, a, b, A, B);
    for (unsigned lane = 0; lane < 32; ++lane) {
        int32_t out[4];
        for (unsigned r = 0; r < 4; ++r) {
            unsigned row = (lane >> 2) + 8u * (r >> 1), col = 2u * (lane & 3u) + (r & 1u);
            int64_t s = c[lane][r];
            for (unsigned i = 0; i < 32; ++i)
                s += (int64_t)A[row][i] * (int64_t)B[i][col];
            if (satfinite)
                out[r] = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
            else
                out[r] = (int32_t)(uint32_t)(uint64_t)s;
        }
        memcpy(d[lane], out, sizeof out);
    }
}

/* ------------------------------------------------------------------ ldmatrix / stmatrix */

/* ldmatrix.sync.aligned.m8n8.x{num}{.trans}.b16: num (1, 2 or 4) 8x8 matrices of 16-bit
 * elements. Row r of matrix i is 16 contiguous bytes at rows[8*i + r] (the address given by lane
 * 8i + r). Lane L receives in register i the elements (L/4, 2(L%4)) and (L/4, 2(L%4)+1) of
 * matrix i, or with .trans the elements (2(L%4), L/4) and (2(L%4)+1, L/4). */
static inline void ck_emu_ref_ldmatrix(unsigned num, int trans, uint32_t out[32][4],
                                       const void *const rows[32])
{
    for (unsigned i = 0; i < num; ++i) {
        uint16_t m[8][8];
        for (unsigned r = 0; r < 8; ++r)
            memcpy(m[r], rows[8 * i + r], 16);
        for (unsigned lane = 0; lane < 32; ++lane) {
            unsigned a = lane >> 2, b = 2u * (lane & 3u);
            uint16_t lo = trans ? m[b][a] : m[a][b], hi = trans ? m[b + 1][a] : m[a][b + 1];
            out[lane][i] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
    }
}

/* stmatrix.sync.aligned.m8n8.x{num}{.trans}.b16: the exact inverse of ck_emu_ref_ldmatrix with
 * the same addresses and fragments (sm_90). */
static inline void ck_emu_ref_stmatrix(unsigned num, int trans, void *const rows[32],
                                       const uint32_t in[32][4])
{
    for (unsigned i = 0; i < num; ++i) {
        uint16_t m[8][8];
        for (unsigned lane = 0; lane < 32; ++lane) {
            unsigned a = lane >> 2, b = 2u * (lane & 3u);
            uint16_t lo = (uint16_t)in[lane][i], hi = (uint16_t)(in[lane][i] >> 16);
            if (trans)
                m[b][a] = lo, m[b + 1][a] = hi;
            else
                m[a][b] = lo, m[a][b + 1] = hi;
        }
        for (unsigned r = 0; r < 8; ++r)
            memcpy(rows[8 * i + r], m[r], 16);
    }
}

/* ------------------------------------------------------------------ swizzles */

/* Swizzle modes, numbered as CUtensorMapSwizzle (NONE, 32B, 64B, 128B). */
enum {
    CK_EMU_SWIZZLE_NONE = 0,
    CK_EMU_SWIZZLE_32B = 1,
    CK_EMU_SWIZZLE_64B = 2,
    CK_EMU_SWIZZLE_128B = 3
};

/* Shared-memory address swizzle of the tensor copy engine and of wgmma: with B = mode (0..3),
 * the B address bits starting at bit 4 (the 16-byte chunk within the 16*2^B-byte row) are
 * XOR-ed with the B bits starting at bit 7 (the 128-byte row index within the 8-row pattern),
 * i.e. CuTe's Swizzle<B,4,3>. An involution on addresses, hence a bijection. */
static inline uint32_t ck_emu_ref_swizzle(uint32_t addr, unsigned mode)
{
    uint32_t mask = ((1u << mode) - 1u) << 4;
    return addr ^ ((addr >> 3) & mask);
}

/* Span in bytes of one swizzled row for a mode (16 for NONE: a core-matrix row). */
static inline uint32_t ck_emu_swizzle_span(unsigned mode)
{
    return 16u << mode;
}

/* ------------------------------------------------------------------ wgmma (one warpgroup) */

/* Fields of a wgmma shared-memory matrix descriptor. Bits 0-13 start address >> 4, 16-29
 * leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 49-51 base offset,
 * 62-63 layout: 0 none (interleave), 1 128B, 2 64B, 3 32B swizzle. */
static inline uint32_t ck_emu_wgmma_desc_start(uint64_t d)
{
    return (uint32_t)(d & 0x3FFFu) << 4;
}
static inline uint32_t ck_emu_wgmma_desc_lbo(uint64_t d)
{
    return (uint32_t)((d >> 16) & 0x3FFFu) << 4;
}
static inline uint32_t ck_emu_wgmma_desc_sbo(uint64_t d)
{
    return (uint32_t)((d >> 32) & 0x3FFFu) << 4;
}
/* Swizzle mode of the descriptor in CK_EMU_SWIZZLE_* numbering. */
static inline unsigned ck_emu_wgmma_desc_swizzle(uint64_t d)
{
    static const unsigned map[4] = {CK_EMU_SWIZZLE_NONE, CK_EMU_SWIZZLE_128B, CK_EMU_SWIZZLE_64B,
                                    CK_EMU_SWIZZLE_32B};
    return map[(d >> 62) & 3u];
}

/* Build a descriptor (base offset 0) from a shared-memory byte address, LBO, SBO (bytes) and a
 * CK_EMU_SWIZZLE_* mode. */
static inline uint64_t ck_emu_wgmma_desc_make(uint32_t addr, uint32_t lbo, uint32_t sbo,
                                              unsigned swizzle)
{
    static const unsigned enc[4] = {0, 3, 2, 1};
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | ((uint64_t)enc[swizzle & 3u] << 62);
}

/* Shared-memory byte address (after swizzle) of element (mn, k) of a wgmma operand — mn is the
 * row of A (M) or the column of B (N) — for an element of `esize` bytes. mn_major = 0 is the
 * K-major layout (imm-trans 0), 1 the MN-major layout (imm-trans 1). With S the swizzle span:
 *   K-major,  none:     (mn%8)*16 + (mn/8)*SBO + (kb%16) + (kb/16)*LBO        kb = k*esize
 *   K-major,  swizzled: (mn%8)*S  + (mn/8)*SBO + kb
 *   MN-major, none:     (mb%16)   + (mb/16)*SBO + (k%8)*16 + (k/8)*LBO       mb = mn*esize
 *   MN-major, swizzled: (mb%S)    + (mb/S)*LBO  + (k%8)*S  + (k/8)*SBO
 * (the PTX ISA's canonical layouts), then the mode's address swizzle. */
static inline uint32_t ck_emu_ref_wgmma_addr(uint64_t desc, int mn_major, unsigned esize,
                                             unsigned mn, unsigned k)
{
    uint32_t start = ck_emu_wgmma_desc_start(desc), lbo = ck_emu_wgmma_desc_lbo(desc);
    uint32_t sbo = ck_emu_wgmma_desc_sbo(desc);
    unsigned mode = ck_emu_wgmma_desc_swizzle(desc);
    uint32_t S = ck_emu_swizzle_span(mode), off;
    if (!mn_major) {
        uint32_t kb = k * esize;
        if (mode == CK_EMU_SWIZZLE_NONE)
            off = (mn % 8u) * 16u + (mn / 8u) * sbo + (kb % 16u) + (kb / 16u) * lbo;
        else
            off = (mn % 8u) * S + (mn / 8u) * sbo + kb;
    } else {
        uint32_t mb = mn * esize;
        if (mode == CK_EMU_SWIZZLE_NONE)
            off = (mb % 16u) + (mb / 16u) * sbo + (k % 8u) * 16u + (k / 8u) * lbo;
        else
            off = (mb % S) + (mb / S) * lbo + (k % 8u) * S + (k / 8u) * sbo;
    }
    return ck_emu_ref_swizzle(start + off, mode);
}

/* Arguments of one dense wgmma.mma_async.m64nNk{8,16,32}.f32 with A and B types fa, fb:
 * f16/f16 or bf16/bf16 (k16), tf32/tf32 (k8), e4m3|e5m2 / e4m3|e5m2 (k32). K is always 32 bytes
 * of each row. The MN-major (transposed) layouts exist for the 16-bit types only. */
typedef struct ck_emu_wgmma_args {
    unsigned n;         /* N: multiple of 8, 8..256 */
    ck_emu_elem fa, fb; /* element formats of A and B */
    int a_in_regs;      /* 1: A from a_regs (4 regs per lane), 0: A from desc_a */
    uint64_t desc_a;    /* shared-memory descriptor of A (64 x K) when !a_in_regs */
    uint64_t desc_b;    /* shared-memory descriptor of B (K x N, stored N rows by K) */
    int scale_d;        /* 0: D = A*B, 1: D = A*B + D */
    int neg_a, neg_b;   /* imm-scale-a/b = -1 */
    int tnsp_a, tnsp_b; /* 1: MN-major layout in shared memory (16-bit types only) */
} ck_emu_wgmma_args;

/* Element size in bytes of a wgmma input format (0 when wgmma has no such dense f32 form). */
static inline unsigned ck_emu_wgmma_esize(ck_emu_elem f)
{
    switch (f) {
    case CK_EMU_F16:
    case CK_EMU_BF16:
        return 2;
    case CK_EMU_TF32:
        return 4;
    case CK_EMU_E4M3:
    case CK_EMU_E5M2:
        return 1;
    default:
        return 0;
    }
}

/* Read one operand element from shared memory; -1 when outside. */
static inline int ck_emu_wgmma_read_(const uint8_t *smem, size_t smem_bytes, uint32_t addr,
                                     unsigned esize, uint32_t *bits)
{
    if ((size_t)addr + esize > smem_bytes)
        return -1;
    *bits = 0;
    for (unsigned b = 0; b < esize; ++b)
        *bits |= (uint32_t)smem[addr + b] << (8u * b);
    return 0;
}

/* wgmma.mma_async.m64nNk{K}.f32: d is 128 lanes x n/2 floats, lane-major; a_regs is 128 x 4 (or
 * NULL). Lane L of warp w = L/32 (l = L%32, g = l/4, t = l%4) holds D element
 * (16w + g + 8*((i%4)/2), 8*(i/4) + 2t + (i%2)) in d[L][i]; A registers are the mma.sync A
 * fragment of the same element type (m16n8k16 16-bit, m16n8k8 tf32, m16n8k32 8-bit) for rows
 * 16w..16w+15. smem/smem_bytes is the block's shared memory (addresses are offsets in it).
 * Returns 0, or -1 (d unchanged) for an unsupported combination or an operand address outside
 * shared memory. */
static inline int ck_emu_ref_wgmma_f32(const ck_emu_wgmma_args *p, float *d,
                                       const uint32_t (*a_regs)[4], const uint8_t *smem,
                                       size_t smem_bytes)
{
    enum { M = 64 };
    unsigned n = p->n, half = p->n / 2, es = ck_emu_wgmma_esize(p->fa);
    int wide = es == 2, ok = es != 0 && ck_emu_wgmma_esize(p->fb) == es;
    if (ok && es != 1)
        ok = p->fa == p->fb; /* only fp8 mixes two formats */
    if (ok && !wide)
        ok = !p->tnsp_a && !p->tnsp_b;
    if (!ok || n == 0 || n > 256 || n % 8u)
        return -1;
    unsigned K = 32u / es;
    ck_emu_mma_shape shape = es == 2 ? CK_EMU_M16N8K16 : es == 4 ? CK_EMU_M16N8K8 : CK_EMU_M16N8K32;
    /* decoded operands are exact in float; heap keeps emulator fiber stacks small */
    float *A = (float *)malloc(sizeof(float) * (M + 256) * K), *B;
    if (A == NULL)
        return -1;
    B = A + M * K;
    if (p->a_in_regs) {
        unsigned k16, na, nb, per;
        ck_emu_mma_counts(shape, p->fa, &k16, &na, &nb, &per);
        uint32_t mask = per == 1 ? 0xFFFFFFFFu : ((1u << (32u / per)) - 1u);
        for (unsigned lane = 0; lane < 128; ++lane)
            for (unsigned r = 0; r < na; ++r)
                for (unsigned e = 0; e < per; ++e) {
                    unsigned row, col;
                    ck_emu_mma_a_coord(shape, p->fa, lane % 32u, r, e, &row, &col);
                    uint32_t bits = (a_regs[lane][r] >> (e * (32u / per))) & mask;
                    A[(16u * (lane / 32u) + row) * K + col] =
                        (float)(ck_emu_decode(p->fa, bits) * (p->neg_a ? -1.0 : 1.0));
                }
    } else {
        for (unsigned m = 0; m < M; ++m)
            for (unsigned k = 0; k < K; ++k) {
                uint32_t bits;
                uint32_t addr = ck_emu_ref_wgmma_addr(p->desc_a, p->tnsp_a, es, m, k);
                if (ck_emu_wgmma_read_(smem, smem_bytes, addr, es, &bits)) {
                    free(A);
                    return -1;
                }
                A[m * K + k] = (float)(ck_emu_decode(p->fa, bits) * (p->neg_a ? -1.0 : 1.0));
            }
    }
    for (unsigned nn = 0; nn < n; ++nn)
        for (unsigned k = 0; k < K; ++k) {
            uint32_t bits;
            uint32_t addr = ck_emu_ref_wgmma_addr(p->desc_b, p->tnsp_b, es, nn, k);
            if (ck_emu_wgmma_read_(smem, smem_bytes, addr, es, &bits)) {
                free(A);
                return -1;
            }
            B[nn * K + k] = (float)(ck_emu_decode(p->fb, bits) * (p->neg_b ? -1.0 : 1.0));
        }
    for (unsigned lane = 0; lane < 128; ++lane) {
        unsigned w = lane / 32u, l = lane % 32u, g = l / 4u, t = l % 4u;
        for (unsigned i = 0; i < half; ++i) {
            unsigned row = 16u * w + g + 8u * ((i % 4u) / 2u),
                     col = 8u * (i / 4u) + 2u * t + i % 2u;
            double s = p->scale_d ? (double)d[lane * half + i] : 0.0;
            for (unsigned k = 0; k < K; ++k)
                s += (double)A[row * K + k] * B[col * K + k];
            d[lane * half + i] = (float)s;
        }
    }
    free(A);
    return 0;
}

/* ------------------------------------------------------------------ mbarrier */

/* Emulated mbarrier state, kept in the 8 bytes of the barrier object:
 *   bits  0..20 pending arrivals of the current phase
 *   bits 21..41 expected arrivals (the init count)
 *   bits 42..62 transaction count, 21-bit two's complement (expect_tx adds, complete_tx subtracts)
 *   bit  63     parity of the current phase
 * A phase completes when pending arrivals and transaction count are both zero: the parity flips,
 * pending is reset to expected and the transaction count to zero. */
#define CK_EMU_MBAR_MAX_COUNT ((1u << 20) - 1u)

static inline uint64_t ck_emu_ref_mbar_init(unsigned count)
{
    return (uint64_t)(count & 0x1FFFFFu) | ((uint64_t)(count & 0x1FFFFFu) << 21);
}
static inline unsigned ck_emu_mbar_pending(uint64_t s)
{
    return (unsigned)(s & 0x1FFFFFu);
}
static inline unsigned ck_emu_mbar_expected(uint64_t s)
{
    return (unsigned)((s >> 21) & 0x1FFFFFu);
}
static inline int32_t ck_emu_mbar_tx(uint64_t s)
{
    uint32_t v = (uint32_t)((s >> 42) & 0x1FFFFFu);
    return (v & 0x100000u) ? (int32_t)v - (int32_t)0x200000 : (int32_t)v;
}
static inline unsigned ck_emu_mbar_phase(uint64_t s)
{
    return (unsigned)(s >> 63);
}

/* One update: add tx_delta to the transaction count (expect_tx > 0, complete_tx < 0), then
 * perform `arrivals` arrive-on operations, then complete the phase if both counts are zero.
 * Returns the new state. Arriving more often than pending is undefined on the GPU; here the
 * pending count saturates at zero. */
static inline uint64_t ck_emu_ref_mbar_update(uint64_t s, unsigned arrivals, int32_t tx_delta)
{
    unsigned pending = ck_emu_mbar_pending(s), expected = ck_emu_mbar_expected(s);
    int32_t tx = ck_emu_mbar_tx(s) + tx_delta;
    unsigned phase = ck_emu_mbar_phase(s);
    pending = arrivals >= pending ? 0u : pending - arrivals;
    if (pending == 0 && tx == 0) {
        phase ^= 1u;
        pending = expected;
    }
    return (uint64_t)pending | ((uint64_t)expected << 21) |
           ((uint64_t)((uint32_t)tx & 0x1FFFFFu) << 42) | ((uint64_t)phase << 63);
}

/* try_wait.parity / test_wait.parity: true when the phase with parity `parity` has completed,
 * i.e. the current phase has the other parity. */
static inline int ck_emu_ref_mbar_test_parity(uint64_t s, unsigned parity)
{
    return ck_emu_mbar_phase(s) != (parity & 1u);
}

/* ------------------------------------------------------------------ tensor maps and TMA */

#define CK_EMU_TMAP_MAGIC 0x434B544Du /* "CKTM" */

/* The emulator's description of a tiled tensor map, stored in the first bytes of the 128-byte
 * ck_tensor_map (see ck_device_tensor.h). Filled by ck_tensor_map_encode_emu (src/device/
 * tensor_map_host.c), which validates every field as cuTensorMapEncodeTiled does. */
typedef struct ck_emu_tmap_desc {
    uint32_t magic;     /* CK_EMU_TMAP_MAGIC */
    uint8_t elem_bytes; /* 1, 2, 4 or 8 */
    uint8_t rank;       /* 1..5 */
    uint8_t swizzle;    /* CK_EMU_SWIZZLE_* */
    uint8_t reserved;
    uint64_t global_address; /* 16-byte aligned */
    uint32_t dims[5];        /* elements per dimension, dims[0] innermost */
    uint64_t strides[5];     /* bytes; strides[0] = elem_bytes, strides[i] for i >= 1 given */
    uint16_t box[5];         /* box size in elements traversed, 1..256 */
    uint8_t elem_strides[5]; /* traversal step, 1..8 (elem_strides[0] is treated as 1) */
} ck_emu_tmap_desc;

/* Elements of the box in shared memory along dimension i: ceil(box[i] / elem_strides[i]). */
static inline uint32_t ck_emu_tmap_box_count(const ck_emu_tmap_desc *d, unsigned i)
{
    uint32_t es = i == 0 ? 1u : d->elem_strides[i];
    return i < d->rank ? (d->box[i] + es - 1u) / es : 1u;
}

/* Bytes one box occupies in shared memory (the complete_tx count of a load). */
static inline uint32_t ck_emu_tmap_box_bytes(const ck_emu_tmap_desc *d)
{
    uint64_t n = d->elem_bytes; /* at most 8 * 256^5 = 2^43: no overflow */
    for (unsigned i = 0; i < d->rank; ++i)
        n *= ck_emu_tmap_box_count(d, i);
    return n > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)n;
}

/* cp.async.bulk.tensor tile mode, one box: `store` = 0 copies global → shared (out-of-bounds
 * elements read as zero), 1 copies shared → global (out-of-bounds elements are not written, except that
 * dimension 0 is bounded by the row's byte length rounded up to 16: the H100 writes whole
 * 16-byte chunks, so a store fills the padding after the last element of a row with box data).
 * The box starts at signed element coordinates coords[0..rank-1]; element j (j_i per dimension,
 * j_0 fastest) is global element coords[i] + j_i*elem_strides[i] and sits in shared memory at
 * address swizzle(smem_addr + linear(j)*elem_bytes), dense row-major box. smem is the block's
 * shared memory base; smem_addr an offset in it. Returns the box bytes, or 0 when the box falls
 * outside shared memory (nothing copied). */
static inline uint32_t ck_emu_ref_tma_copy(const ck_emu_tmap_desc *d, const int32_t coords[5],
                                           uint8_t *smem, size_t smem_bytes, uint32_t smem_addr,
                                           int store)
{
    uint32_t n[5], total, eb = d->elem_bytes;
    uint64_t total64 = 1;
    for (unsigned i = 0; i < 5; ++i) {
        n[i] = ck_emu_tmap_box_count(d, i);
        total64 *= n[i]; /* at most 256^5: no overflow in 64 bits */
    }
    /* the swizzle only permutes address bits 4..6: addresses stay in their 128-byte block */
    uint64_t span_end = (uint64_t)smem_addr + total64 * eb;
    if (d->swizzle)
        span_end = (span_end + 127u) & ~(uint64_t)127u;
    if (span_end > smem_bytes)
        return 0;
    total = (uint32_t)total64;
    uint8_t *g = (uint8_t *)(uintptr_t)d->global_address;
    uint32_t lin = 0;
    for (uint32_t j4 = 0; j4 < n[4]; ++j4)
        for (uint32_t j3 = 0; j3 < n[3]; ++j3)
            for (uint32_t j2 = 0; j2 < n[2]; ++j2)
                for (uint32_t j1 = 0; j1 < n[1]; ++j1)
                    for (uint32_t j0 = 0; j0 < n[0]; ++j0, ++lin) {
                        uint32_t j[5] = {j0, j1, j2, j3, j4};
                        int inb = 1;
                        uint64_t goff = 0;
                        for (unsigned i = 0; i < d->rank; ++i) {
                            int64_t c = (int64_t)coords[i] +
                                        (int64_t)j[i] * (i == 0 ? 1 : d->elem_strides[i]);
                            /* stores write every 16-byte chunk of a row that holds an
                             * element of the tensor: dimension 0 ends at the row's length
                             * rounded up to 16 bytes (measured on the H100, 2026-11-24) */
                            int64_t end = (int64_t)d->dims[i];
                            if (store && i == 0)
                                end = ((int64_t)d->dims[0] * eb + 15) / 16 * 16 / eb;
                            if (c < 0 || c >= end)
                                inb = 0;
                            else
                                goff += (uint64_t)c * d->strides[i];
                        }
                        uint8_t *s = smem + ck_emu_ref_swizzle(smem_addr + lin * eb, d->swizzle);
                        if (store) {
                            if (inb)
                                memcpy(g + goff, s, eb);
                        } else if (inb) {
                            memcpy(s, g + goff, eb);
                        } else {
                            memset(s, 0, eb);
                        }
                    }
    return total * eb;
}

#endif
