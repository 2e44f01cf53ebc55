/*
 * fp8 attention's V^T pre-pass (host side: sm90_fp8.c): V [b, s_k, h_k, d_v] (any strides) to
 * V^T [b, h_k, d_v, vt_keys] packed, vt_keys = s_k rounded up to 32, where position a = 16h +
 * 4t + e of every 32 keys holds key 16h + 8(e / 2) + 2t + e % 2 (the order of the P fragment,
 * fwd_sm90_fp8_kernel.h) and the keys past s_k are 0.
 *
 * Block (key tile, head, batch) moves VT_TK keys x d_v bytes: pass 1 reads the tile's V rows
 * with 16-byte loads (all in flight before any store) into shared memory, rows past s_k as 0;
 * pass 2 gives each thread a block of 16 keys x 16 columns: it reads the 16 rows with 16-byte
 * loads in V^T's key order (the permutation is the order of these loads: it costs nothing),
 * transposes the 16 x 16 bytes in registers (byte permutes) and writes 16 V^T lines of 16 keys
 * with 16-byte stores (a warp writes whole 128-byte lines). Positions past vt_keys are not
 * written.
 *
 * Shared memory: row r (a key) of VT_GM 16-byte chunks; chunk c is stored at 16-byte slot q = r
 * VT_GM + c with the three low bits of q XORed with (r / 16) % 8. Pass 1: a quarter-warp stores
 * 8 consecutive q (one 128-byte line of one 16-row group): 8 distinct bank groups. Pass 2: a
 * quarter-warp reads the same row of 8 consecutive 16-key groups (same chunk): the same three low
 * bits, XORed with 8 distinct values. tests/test_attention_fp8_vt.c replays both for every lane.
 *
 * The layout functions below are pure integer C (the test includes this header without VT_DV);
 * the kernel needs the generated defines: VT_DV (d_v: 64, 128 or 256), VT_TK (keys of a tile:
 * 256 at d_v 64, else 128; at least 8 key groups), VT_VEC (1: V's pointer and strides allow
 * 16-byte loads; 0: byte loads).
 */
#ifndef CK_OPS_ATTN_FP8_VT_KERNEL_H
#define CK_OPS_ATTN_FP8_VT_KERNEL_H

#ifndef CK_DEVICE
#define CK_DEVICE static inline
#endif

/* Byte offset in shared memory of chunk c of tile row r (rows of gm 16-byte chunks). */
CK_DEVICE unsigned ck_vt_smem_offset(unsigned r, unsigned c, unsigned gm)
{
    unsigned q = r * gm + c;
    return ((q & ~7u) | ((q ^ (r / 16)) & 7u)) * 16;
}

/* Pass 1: the s-th load (s < 16) of thread t of `threads` (a multiple of gm): tile row *r,
 * chunk *c (16-byte slot s threads + t of the tile). */
CK_DEVICE void ck_vt_pass1(unsigned t, unsigned s, unsigned threads, unsigned gm, unsigned *r,
                           unsigned *c)
{
    *r = s * (threads / gm) + t / gm;
    *c = t % gm;
}

/* Pass 2: thread t's block: 16-key group *kg (keys 16 kg ..) and 16-byte column chunk *cg; the
 * 8 lanes of a quarter-warp take 8 consecutive groups of one chunk. */
CK_DEVICE void ck_vt_pass2(unsigned t, unsigned gm, unsigned *kg, unsigned *cg)
{
    unsigned rest = t / 8;
    *cg = rest % gm;
    *kg = rest / gm * 8 + t % 8;
}

/* The key at position p (0..15) of a 16-key group of V^T (half of a 32-key chunk). */
CK_DEVICE unsigned ck_vt_key(unsigned p)
{
    return 8 * ((p % 4) / 2) + 2 * (p / 4) + p % 2;
}

#ifdef VT_DV
#include "ops/attention/attn_args_kernel.h"

#define VT_GM      (VT_DV / 16) /* 16-byte chunks of a V row */
#define VT_KG      (VT_TK / 16) /* 16-key groups of a tile */
#define VT_THREADS (VT_KG * VT_GM)

/* o[j] = byte j of w0 .. w3 (byte i from w_i): a 4 x 4 byte transpose. */
CK_DEVICE void vt_transpose4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t *o)
{
    uint32_t a0 = ck_byte_perm(w0, w1, 0x5140u), a1 = ck_byte_perm(w0, w1, 0x7362u);
    uint32_t b0 = ck_byte_perm(w2, w3, 0x5140u), b1 = ck_byte_perm(w2, w3, 0x7362u);
    o[0] = ck_byte_perm(a0, b0, 0x5410u);
    o[1] = ck_byte_perm(a0, b0, 0x7632u);
    o[2] = ck_byte_perm(a1, b1, 0x5410u);
    o[3] = ck_byte_perm(a1, b1, 0x7632u);
}

/* 16 bytes at row (0 when !ok): one 16-byte load, or 16 byte loads (VT_VEC 0). */
CK_DEVICE ck_u32x4 vt_load16(const unsigned char *row, int ok)
{
    ck_u32x4 x;
    x.x = x.y = x.z = x.w = 0;
    if (!ok)
        return x;
    if (VT_VEC)
        return ck_ld16_nc(row);
    uint32_t w[4] = {0, 0, 0, 0};
    CK_UNROLL for (int i = 0; i < 16; ++i) w[i / 4] |= (uint32_t)row[i] << (8 * (i % 4));
    x.x = w[0], x.y = w[1], x.z = w[2], x.w = w[3];
    return x;
}

CK_DEVICE void attn_fp8_vt_main(ck_attn_vt_args a)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, sh, (VT_TK * VT_DV), 16);
    const unsigned t = ck_thread_idx_x();
    const long long n0 = (long long)ck_block_idx_x() * VT_TK, h = ck_block_idx_y(),
                    b = ck_block_idx_z();

    /* pass 1: global -> registers (every load in flight) -> shared; thread t reads chunk c of
     * rows r0, r0 + VT_KG, ... (ck_vt_pass1) */
    unsigned r0, c;
    ck_vt_pass1(t, 0, VT_THREADS, VT_GM, &r0, &c);
    long long left = a.sk - n0 - r0; /* rows of this thread's column that hold keys */
    const int rows = left < 0 ? 0 : left > VT_TK ? VT_TK : (int)left;
    const unsigned char *src = (const unsigned char *)a.v + b * a.v_b + h * a.v_h + 16 * c;
    if (rows > 0)
        src += (n0 + r0) * a.v_s;
    const long long step = VT_KG * a.v_s;
    ck_u32x4 in[16];
    CK_UNROLL for (int s = 0; s < 16; ++s)
    {
        in[s] = vt_load16(src, s * VT_KG < rows);
        src += s * VT_KG < rows ? step : 0;
    }
    CK_UNROLL for (int s = 0; s < 16; ++s)
    {
        unsigned r;
        ck_vt_pass1(t, s, VT_THREADS, VT_GM, &r, &c);
        ck_st16(sh + ck_vt_smem_offset(r, c, VT_GM), in[s]);
    }
    ck_sync_threads();

    /* pass 2: 16 rows in V^T's key order -> 16 x 16 byte transpose -> 16 V^T lines */
    unsigned kg, cg;
    ck_vt_pass2(t, VT_GM, &kg, &cg);
    if (n0 + 16 * kg >= a.vt_keys)
        return;
    CK_UNROLL for (int p = 0; p < 16; ++p) in[p] =
        ck_ld16(sh + ck_vt_smem_offset(16 * kg + ck_vt_key(p), cg, VT_GM));
    unsigned char *dst =
        (unsigned char *)a.vt + ((b * a.hk + h) * VT_DV + 16 * cg) * a.vt_keys + n0 + 16 * kg;
    CK_UNROLL for (int jw = 0; jw < 4; ++jw)
    { /* columns 16 cg + 4 jw .. + 3: word jw of each row */
        uint32_t o[4][4];
        CK_UNROLL for (int pw = 0; pw < 4; ++pw)
        {
            uint32_t w[4], x[4];
            CK_UNROLL for (int i = 0; i < 4; ++i)
            {
                ck_u32x4 r = in[4 * pw + i];
                w[i] = jw == 0 ? r.x : jw == 1 ? r.y : jw == 2 ? r.z : r.w;
            }
            vt_transpose4(w[0], w[1], w[2], w[3], x);
            CK_UNROLL for (int j = 0; j < 4; ++j) o[j][pw] = x[j];
        }
        CK_UNROLL for (int j = 0; j < 4; ++j)
        {
            ck_u32x4 s;
            s.x = o[j][0], s.y = o[j][1], s.z = o[j][2], s.w = o[j][3];
            ck_st16(dst, s);
            dst += a.vt_keys;
        }
    }
}

#endif /* VT_DV */
#endif
