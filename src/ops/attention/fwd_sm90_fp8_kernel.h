/*
 * The sm_90a attention pipeline's parts for fp8 e4m3 Q, K and V (ATTN_FP8; included by
 * fwd_sm90_pipeline_kernel.h in place of the 16-bit ones): the geometry of the shared tiles, the
 * e4m3 wgmma (m64nNk32, both operands K-major, 32 bytes a k-step), V^T's tiles, P rounded to e4m3
 * in the order of P V's register-A fragment, and the descales. O is bf16.
 *
 * Q and K: boxes of 128-byte lines (64 at d 64, with the 64-byte swizzle), so S = Q K^T walks the
 * same 32-byte k-steps as with 16-bit inputs. V: 8-bit wgmma reads B only K-major, so the kernel
 * reads V^T ([b, h_k, d_v, keys], written by the plan's pre-pass, sm90_fp8.c) in boxes of
 * min(TILE_N, 128) keys by d_v lines.
 *
 * P stays in registers without shuffles. Thread (g, t) of a warp holds S's keys 8m + 2t + f
 * (m 0..3, f 0..1) of every 32 (rows g and g + 8: registers 16j + 4m + 2 (row half) + f of chunk
 * j), while the 8-bit register-A fragment of m64nNk32 gives it the positions 4t + e and
 * 16 + 4t + e (e 0..3; registers 0 and 2 row g, 1 and 3 row g + 8). Position a = 16h + 4t + e of
 * a 32-key chunk is therefore fed key pi(a) = 16h + 8(e / 2) + 2t + e % 2 (a bit permutation), and
 * V^T holds key pi(a) at position a; P V sums over the keys, so the order does not change it.
 * sm90.c checks the permutation against the encodings of both fragments.
 */
#ifndef CK_OPS_ATTN_FWD_SM90_FP8_KERNEL_H
#define CK_OPS_ATTN_FWD_SM90_FP8_KERNEL_H

#define A90_EB      1                             /* bytes of an input element */
#define A90_KL      (ATTN_D < 128 ? ATTN_D : 128) /* bytes of a line of the Q, K boxes */
#define A90_KSW     (A90_KL == 128 ? CK_SWIZZLE_128B : CK_SWIZZLE_64B)
#define A90_QB      (ATTN_D / A90_KL)                       /* Q and K boxes */
#define A90_VL      (ATTN_TILE_N < 128 ? ATTN_TILE_N : 128) /* keys of a line of the V^T boxes */
#define A90_VSW     (A90_VL == 128 ? CK_SWIZZLE_128B : CK_SWIZZLE_64B)
#define A90_V_BYTES (ATTN_DV * ATTN_TILE_N)
#define A90_KSTEPS  (ATTN_TILE_N / 32) /* P V's k-steps */

#define A90_SS_(N, acc, da, db, sd) CK_WGMMA_SS_F8(N, e4m3, e4m3, acc, da, db, sd, 1, 1)
#define A90_RS_(N, acc, a, db, sd)  CK_WGMMA_RS_F8(N, e4m3, e4m3, acc, a, db, sd, 1, 1)
#define A90_CVT_O                   ck_cvt_bf16x2

/* The tile's descaled factors (attn90_tile_scales). */
#define A90_SCALE_LOG2(ka) ((ka)->t_scale_log2)
#define A90_CAP_IN(ka)     ((ka)->t_cap_in)
#define A90_O_SCALE(ka)    ((ka)->t_o_scale)

/* The V^T tile (keys n0 .. n0 + TILE_N - 1 of head hk) into a ring slot: boxes of A90_VL keys by
 * d_v lines. */
CK_DEVICE void attn90_load_v(unsigned char *sv, const ck_tensor_map *tv, unsigned long long *full,
                             int n0, int hk, int bz)
{
    for (int c = 0; c < ATTN_TILE_N / A90_VL; ++c)
        ck_tma_load_4d(sv + c * ATTN_DV * A90_VL, tv, full, n0 + c * A90_VL, 0, hk, bz);
}

/* V^T's operand of P V's k-step j: keys 32j .. 32j + 31 (32 bytes of each line), K-major, 8-line
 * groups 8 A90_VL bytes apart. */
CK_DEVICE unsigned long long attn90_pv_desc(const unsigned char *sv, int j)
{
    return ck_wgmma_desc(sv + (32 * j / A90_VL) * ATTN_DV * A90_VL + (32 * j) % A90_VL, 16,
                         8 * A90_VL, A90_VSW);
}

/* P rounded to e4m3 (nearest even; P <= 1), four registers of S to one: register r of k-step j
 * holds positions 4t .. 4t + 3 (r even) or 16 + 4t .. (r >= 2) of row g (r even) or g + 8, i.e.
 * S registers 16j + 8(r / 2) + 2(r % 2) + {0, 1, 4, 5}. */
CK_DEVICE void attn90_pack(unsigned (*p)[4], const float *s)
{
    CK_UNROLL for (int j = 0; j < A90_KSTEPS; ++j) CK_UNROLL for (int r = 0; r < 4; ++r)
    {
        const float *x = s + 16 * j + 8 * (r / 2) + 2 * (r % 2);
        p[j][r] = ck_cvt_e4m3x4(x[0], x[1], x[4], x[5]);
    }
}

CK_DEVICE float attn90_descale(const float *d, long long at)
{
    return d ? d[at] : 1.0f;
}

/* The descales of (batch bz, key/value head hk) folded into the tile's factors: the scores'
 * scale (or, with a soft-cap, the cap's inner factor: the cap's output is in the undescaled
 * units already) and O's. */
CK_DEVICE void attn90_tile_scales(ck_attn_kargs *ka, int bz, int hk)
{
    long long at = bz * ka->descale_b + hk * ka->descale_h;
    float qk = attn90_descale(ka->descale_q, at) * attn90_descale(ka->descale_k, at);
    ka->t_scale_log2 = ka->cap_in > 0.0f ? ka->scale_log2 : ka->scale_log2 * qk;
    ka->t_cap_in = ka->cap_in * qk;
    ka->t_o_scale = attn90_descale(ka->descale_v, at);
}

#endif
