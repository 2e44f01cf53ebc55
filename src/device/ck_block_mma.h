/*
 * ck_block_mma.h - block-library stages for mma.sync pipelines over 16-bit operands (f16 / bf16)
 * held in swizzled shared-memory tiles, written over the prelude's names only (GPU and emulator):
 *
 *   swizzle     ck_swz_offset(line, byte, line_bytes): the byte offset of (line, byte) in a tile
 *               of lines of line_bytes (a multiple of 16), its 16-byte chunks XORed with the
 *               line's rank among the lines sharing 128 bytes of banks, so that the 8 lines of
 *               an ldmatrix at one column, and 128 consecutive bytes, fall in distinct banks;
 *               a chunk never leaves its 128-byte group (nor a line's shorter tail group)
 *   copies      ck_copy_lines_async / ck_copy_lines_scalar: `lines` lines of line_bytes from
 *               global memory (ld_bytes apart) into such a tile, lines at or past `valid`
 *               zero-filled; cp.async 16-byte pieces (base and ld 16-byte aligned) or element
 *               by element; every thread of `threads` calls
 *   fragments   (m16n8k16, 16-bit inputs; a k-slice is 16 elements = 32 bytes of a line)
 *               ck_mma_frag_a16(r, tile, line_bytes, m, ks): A of rows m..m+15 (K-major tile)
 *               ck_mma_frag_b16(r, tile, line_bytes, n, ks): B of columns n..n+15 of a tile
 *                   whose lines are the columns (K-major): r[0..1] n..n+7, r[2..3] n+8..n+15
 *               ck_mma_frag_b16_trans(r, tile, line_bytes, ks, n): the same from a tile whose
 *                   lines are k (MN-major), through ldmatrix.trans
 *   packing     ck_pack_f32x2_b16(lo, hi, bf16): two floats rounded (nearest even) to one
 *               register of two f16 or bf16 codes, low first: an mma A operand from an f32
 *               accumulator (the C fragment of n-tiles 2k, 2k+1 is the A fragment of k-slice k)
 */
#ifndef CK_DEVICE_CK_BLOCK_MMA_H
#define CK_DEVICE_CK_BLOCK_MMA_H

#include "ck_device.h"

CK_DEVICE int ck_swz_offset(int line, int byte, int line_bytes)
{
    /* chunks per 128 bytes of banks: 8 in the line's whole 128-byte groups; in a shorter line,
     * or the tail of a line of 192, 320, ... bytes, the 1, 2 or 4 chunks that are there */
    int whole = line_bytes & ~127;
    unsigned per = byte < whole ? 8u : (unsigned)(line_bytes - whole) / 16u;
    return line * line_bytes + (int)((unsigned)byte ^ ((((unsigned)line / (8u / per)) % per) << 4));
}

CK_DEVICE void ck_copy_lines_async(unsigned char *tile, int line_bytes, int lines,
                                   const unsigned char *src, long long ld_bytes, long long valid,
                                   int threads)
{
    int cpl = line_bytes / 16;
    for (int c = (int)ck_thread_linear(); c < lines * cpl; c += threads) {
        int l = c / cpl, b = (c % cpl) * 16;
        int ok = l < valid;
        const unsigned char *g = src + (ok ? l * ld_bytes : 0) + b;
        ck_cp_async_16_zfill(tile + ck_swz_offset(l, b, line_bytes), g, ok ? 16u : 0u);
    }
}

CK_DEVICE void ck_copy_lines_scalar(unsigned char *tile, int line_bytes, int lines,
                                    const unsigned char *src, long long ld_bytes, long long valid,
                                    int threads)
{
    int per = line_bytes / 2;
    for (int c = (int)ck_thread_linear(); c < lines * per; c += threads) {
        int l = c / per, b = (c % per) * 2;
        unsigned short v = l < valid ? *(const unsigned short *)(src + l * ld_bytes + b) : 0;
        *(unsigned short *)(tile + ck_swz_offset(l, b, line_bytes)) = v;
    }
}

CK_DEVICE void ck_mma_frag_a16(unsigned *r, const unsigned char *tile, int line_bytes, int m,
                               int ks)
{
    int lane = (int)ck_lane_id();
    ck_ldmatrix_x4(r,
                   tile + ck_swz_offset(m + (lane & 15), ks * 32 + (lane >> 4) * 16, line_bytes));
}

CK_DEVICE void ck_mma_frag_b16(unsigned *r, const unsigned char *tile, int line_bytes, int n,
                               int ks)
{
    int lane = (int)ck_lane_id();
    ck_ldmatrix_x4(r, tile + ck_swz_offset(n + (lane >> 4) * 8 + (lane & 7),
                                           ks * 32 + ((lane >> 3) & 1) * 16, line_bytes));
}

CK_DEVICE void ck_mma_frag_b16_trans(unsigned *r, const unsigned char *tile, int line_bytes, int ks,
                                     int n)
{
    int lane = (int)ck_lane_id(), i = lane >> 3;
    ck_ldmatrix_x4_trans(r, tile + ck_swz_offset(ks * 16 + (lane & 7) + 8 * (i & 1),
                                                 (n + 8 * (i >> 1)) * 2, line_bytes));
}

/* x >> s rounded to nearest, ties to even (1 <= s <= 31). */
CK_DEVICE unsigned ck_shr_rne_(unsigned x, unsigned s)
{
    unsigned r = x >> s, rem = x & ((1u << s) - 1u), half = 1u << (s - 1u);
    return r + (rem > half || (rem == half && (r & 1u)));
}

/* f32 -> bf16 / f16 codes, nearest even, overflow to infinity, NaN kept quiet: the results of
 * ck_nc_f32_to_bf16 / ck_nc_f32_to_f16 in a few integer operations (the generic conversion is
 * too large to inline for every element of a fragment). */
CK_DEVICE unsigned ck_f32_to_bf16_rne(float x)
{
    unsigned u = ck_f32_as_u32(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (u >> 16) | 0x40u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

CK_DEVICE unsigned ck_f32_to_f16_rne(float x)
{
    unsigned u = ck_f32_as_u32(x), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return sign | 0x7E00u | ((a >> 13) & 0x3FFu);
    if (a >= 0x477FF000u) /* 65520 and above round to infinity */
        return sign | 0x7C00u;
    if (a >= 0x38800000u) /* normal: rebias the exponent (127 -> 15), 23 -> 10 mantissa bits */
        return sign | ck_shr_rne_(a - 0x38000000u, 13);
    if (a <= 0x33000000u) /* at most 2^-25: rounds to zero */
        return sign;
    unsigned e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u; /* subnormal: units of 2^-24 */
    return sign | ck_shr_rne_(m, 126u - e);
}

CK_DEVICE unsigned ck_pack_f32x2_b16(float lo, float hi, int bf16)
{
    unsigned a = bf16 ? ck_f32_to_bf16_rne(lo) : ck_f32_to_f16_rne(lo);
    unsigned b = bf16 ? ck_f32_to_bf16_rne(hi) : ck_f32_to_f16_rne(hi);
    return (a & 0xFFFFu) | (b << 16);
}

#endif /* CK_DEVICE_CK_BLOCK_MMA_H */
