/*
 * Device helpers shared by the layernorm / RMSNorm kernels (norm_fwd_kernel.h,
 * norm_bwd_kernel.h): vector loads and stores of NORM_VEC elements of f32/f16/bf16/i8/fp8 with
 * the widest aligned access (16-byte ck_ld16/ck_st16 when the vector spans multiples of 16
 * bytes), fast exact conversions, Welford/Chan state combination and group reductions.
 *
 * The including source defines NORM_VEC (elements per vector), NORM_G (threads per row: a power
 * of two <= 32 for the warp/sub-warp instance, or NORM_BLOCK for one block per row) and
 * NORM_BLOCK (threads per block). dtype codes are those of ck_dtype (CK_NC_*).
 */
#ifndef CK_NORM_COMMON_KERNEL_H
#define CK_NORM_COMMON_KERNEL_H
#include "ops/common/fast_conv_kernel.h"

#ifndef NORM_FP8_NAN
#define NORM_FP8_NAN 0x7fu
#endif

#define NORM_ESIZE(t) ((t) == CK_NC_F32 ? 4 : ((t) == CK_NC_F16 || (t) == CK_NC_BF16) ? 2 : 1)

/* bf16 -> f32 is exact by a shift; f16 -> f32 by placing the bits and scaling by 2^112 (exact
 * for normals and subnormals), Inf/NaN patched. */
CK_DEVICE float norm_f16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, em = h & 0x7fffu;
    float f = ck_u32_as_f32(em << 13) * 5.192296858534828e33f; /* 2^112 */
    if (em >= 0x7c00u)
        f = ck_u32_as_f32((em << 13) | 0x7f800000u);
    return ck_u32_as_f32(ck_f32_as_u32(f) | sign);
}

/* f32 -> bf16, round to nearest even, NaN -> quiet NaN 0x7fc0 with its sign (the bits of
 * ck_nc_f32_to_bf16). */
CK_DEVICE uint32_t norm_f32_to_bf16(float f)
{
    return ck_fast_f32_to_bf16(f);
}

/* f32 -> f16, round to nearest even (subnormals through one exact float addition), overflow to
 * infinity, NaN -> quiet NaN 0x7e00 with its sign: the bits of ck_nc_f32_to_f16
 * (tests/test_norm_conv.c compares them for every boundary). */
CK_DEVICE uint32_t norm_f32_to_f16(float f)
{
    return ck_fast_f32_to_f16(f);
}

/* f32 -> fp8 e4m3 (OCP, bias 7, largest finite 448 = 0x7e, NaN 0x7f), round to nearest even,
 * saturating: |x| >= 448 and infinities give +-448, NaN gives 0x7f with its sign (the bits of
 * ck_nc_f32_to_fp8e4m3). Subnormals (below 2^-6, spacing 2^-9) by one exact float addition. */
CK_DEVICE uint32_t norm_f32_to_fp8e4m3(float f)
{
    uint32_t u = ck_f32_as_u32(f);
    uint32_t sign = (u >> 24) & 0x80u;
    u &= 0x7fffffffu;
    uint32_t o;
    if (u > 0x7f800000u) {
        o = NORM_FP8_NAN;
    } else if (u >= 0x43e00000u) { /* >= 448 (Inf included): saturate */
        o = 0x7eu;
    } else if (u < 0x3c800000u) {           /* below 2^-6: subnormal or zero */
        const uint32_t magic = 0x46800000u; /* 2^14: bit 0 of the sum is 2^-9 */
        float s = ck_u32_as_f32(u) + ck_u32_as_f32(magic);
        o = ck_f32_as_u32(s) - magic;
    } else {
        uint32_t odd = (u >> 20) & 1u;
        u += 0xc407ffffu + odd; /* rebias -(127 - 7) << 23, plus rounding */
        o = u >> 20;
    }
    return o | sign;
}

CK_DEVICE float norm_code_to_f32(int t, uint32_t c)
{
    if (t == CK_NC_BF16)
        return ck_u32_as_f32(c << 16);
    if (t == CK_NC_F16)
        return norm_f16_to_f32(c);
    return ck_u32_as_f32(c);
}

CK_DEVICE uint32_t norm_f32_to_code(int t, float v)
{
    if (t == CK_NC_BF16)
        return norm_f32_to_bf16(v);
    if (t == CK_NC_F16)
        return norm_f32_to_f16(v);
    if (t == CK_NC_FP8_E4M3)
        return norm_f32_to_fp8e4m3(v);
    if (t == CK_NC_I8) {
        /* v is already rounded and within [-127, 127] (or NaN: code 0) */
        float c = v != v ? 0.0f : v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
        return (uint32_t)(int32_t)c & 0xffu;
    }
    return ck_f32_as_u32(v);
}

/* Raw words of n bytes at p (n = NORM_VEC * element size), widest aligned access. */
CK_DEVICE void norm_ld_words(const void *p, int n, uint32_t *w)
{
    if (n % 16 == 0) {
        for (int k = 0; k < n / 16; ++k) {
            ck_u32x4 u = ck_ld16_nc((const char *)p + 16 * k);
            w[4 * k] = u.x;
            w[4 * k + 1] = u.y;
            w[4 * k + 2] = u.z;
            w[4 * k + 3] = u.w;
        }
    } else if (n % 8 == 0) {
        for (int k = 0; k < n / 8; ++k) {
            uint64_t u = ((const uint64_t *)p)[k];
            w[2 * k] = (uint32_t)u;
            w[2 * k + 1] = (uint32_t)(u >> 32);
        }
    } else if (n % 4 == 0) {
        for (int k = 0; k < n / 4; ++k)
            w[k] = ((const uint32_t *)p)[k];
    } else if (n == 2) {
        w[0] = ((const uint16_t *)p)[0];
    } else { /* 1 byte */
        w[0] = ((const uint8_t *)p)[0];
    }
}

CK_DEVICE void norm_st_words(void *p, int n, const uint32_t *w)
{
    if (n % 16 == 0) {
        for (int k = 0; k < n / 16; ++k) {
            ck_u32x4 u;
            u.x = w[4 * k];
            u.y = w[4 * k + 1];
            u.z = w[4 * k + 2];
            u.w = w[4 * k + 3];
            ck_st16((char *)p + 16 * k, u);
        }
    } else if (n % 8 == 0) {
        for (int k = 0; k < n / 8; ++k)
            ((uint64_t *)p)[k] = (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
    } else if (n % 4 == 0) {
        for (int k = 0; k < n / 4; ++k)
            ((uint32_t *)p)[k] = w[k];
    } else if (n == 2) {
        ((uint16_t *)p)[0] = (uint16_t)w[0];
    } else {
        ((uint8_t *)p)[0] = (uint8_t)w[0];
    }
}

/* NORM_VEC elements of type t at p (element offset already applied) as f32. */
CK_DEVICE void norm_load(const void *p, int t, float *o)
{
    uint32_t w[NORM_VEC];
    int e = NORM_ESIZE(t);
    norm_ld_words(p, NORM_VEC * e, w);
    if (e == 4) {
        for (int k = 0; k < NORM_VEC; ++k)
            o[k] = ck_u32_as_f32(w[k]);
    } else {
        for (int k = 0; k < NORM_VEC; ++k)
            o[k] = norm_code_to_f32(t, (w[k / 2] >> (16 * (k % 2))) & 0xffffu);
    }
}

CK_DEVICE void norm_store(void *p, int t, const float *v)
{
    uint32_t w[NORM_VEC];
    int e = NORM_ESIZE(t);
    for (int k = 0; k < NORM_VEC; ++k)
        w[k] = 0;
    for (int k = 0; k < NORM_VEC; ++k) {
        uint32_t c = norm_f32_to_code(t, v[k]);
        if (e == 4)
            w[k] = c;
        else if (e == 2)
            w[k / 2] |= c << (16 * (k % 2));
        else
            w[k / 4] |= c << (8 * (k % 4));
    }
    norm_st_words(p, NORM_VEC * e, w);
}

/* Welford / Chan state of a set of values: count, mean, sum of squared deviations. */
typedef struct norm_welford {
    float n, mean, m2;
} norm_welford;

/* Combine a (the lower-numbered part) with b; symmetric use keeps every lane bit-identical. */
CK_DEVICE norm_welford norm_welford_combine(norm_welford a, norm_welford b)
{
    norm_welford r;
    r.n = a.n + b.n;
    if (r.n == 0.0f)
        return a;
    float delta = b.mean - a.mean, fb = b.n / r.n;
    r.mean = a.mean + delta * fb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * fb;
    return r;
}

/* Add NORM_VEC values: their own mean and deviations (two-pass on registers), then Chan. */
CK_DEVICE norm_welford norm_welford_add_vec(norm_welford s, const float *a)
{
    float sum = 0.0f;
    for (int k = 0; k < NORM_VEC; ++k)
        sum += a[k];
    norm_welford v;
    v.n = (float)NORM_VEC;
    v.mean = sum * (1.0f / (float)NORM_VEC);
    v.m2 = 0.0f;
    for (int k = 0; k < NORM_VEC; ++k) {
        float d = a[k] - v.mean;
        v.m2 = fmaf(d, d, v.m2);
    }
    return norm_welford_combine(s, v);
}

/* max of |values| that propagates NaN */
CK_DEVICE float norm_nanmax(float a, float b)
{
    return (a != a || a > b) ? a : b;
}

/* Welford combine of two parts of equal count (every thread of the row holds as many values:
 * NORM_EVEN): the same bits as norm_welford_combine (b.n / r.n is exactly 0.5), no division. */
CK_DEVICE norm_welford norm_welford_combine_even(norm_welford a, norm_welford b)
{
    norm_welford r;
    float delta = b.mean - a.mean;
    r.n = a.n + b.n;
    r.mean = a.mean + delta * 0.5f;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * 0.5f;
    return r;
}

#ifndef NORM_EVEN
#define NORM_EVEN 0
#endif

/* Xor butterfly of Welford states over the lanes m < `width` of each aligned lane group; the
 * lower lane's state is always the first operand, so every lane gets the same bits. */
CK_DEVICE norm_welford norm_butterfly_welford(norm_welford s, unsigned width)
{
    unsigned lane = ck_lane_id();
    for (unsigned m = 1; m < width; m *= 2) {
        norm_welford o;
        o.n = ck_shfl_xor_f32(s.n, m);
        o.mean = ck_shfl_xor_f32(s.mean, m);
        o.m2 = ck_shfl_xor_f32(s.m2, m);
        norm_welford lo = (lane & m) ? o : s, hi = (lane & m) ? s : o;
        s = NORM_EVEN ? norm_welford_combine_even(lo, hi) : norm_welford_combine(lo, hi);
    }
    return s;
}

/* Reductions over the NORM_G threads of a row. In the block instance (NORM_G == NORM_BLOCK >
 * 32) warps exchange partial results through `sh` (3 * 32 floats), one barrier per reduction:
 * lane l of every warp reads warp (l mod W)'s result (W = NORM_G / 32 warps) and a butterfly
 * over W lanes finishes. The caller alternates two such buffers when a block reduces again
 * (a buffer is rewritten only after the next barrier, when every thread has read it). Every
 * thread receives the same bits. */
CK_DEVICE norm_welford norm_reduce_welford(norm_welford s, float *sh)
{
    s = norm_butterfly_welford(s, NORM_G < 32 ? NORM_G : 32);
#if NORM_G > 32
    unsigned lane = ck_lane_id(), warp = ck_warp_id();
    if (lane == 0) {
        sh[3 * warp] = s.n;
        sh[3 * warp + 1] = s.mean;
        sh[3 * warp + 2] = s.m2;
    }
    ck_sync_threads();
    unsigned w = lane % (NORM_G / 32);
    s.n = sh[3 * w];
    s.mean = sh[3 * w + 1];
    s.m2 = sh[3 * w + 2];
    s = norm_butterfly_welford(s, NORM_G / 32);
#else
    (void)sh;
#endif
    return s;
}

/* op 0: sum, 1: NaN-propagating max */
CK_DEVICE float norm_butterfly_f32(float v, int op, unsigned width)
{
    for (unsigned m = 1; m < width; m *= 2) {
        float o = ck_shfl_xor_f32(v, m);
        /* both orders give the same bits: + is commutative, nanmax picks by value (NaN
         * payloads aside) */
        v = op == 0 ? v + o : norm_nanmax(v, o);
    }
    return v;
}

CK_DEVICE float norm_reduce_f32(float v, int op, float *sh)
{
    v = norm_butterfly_f32(v, op, NORM_G < 32 ? NORM_G : 32);
#if NORM_G > 32
    if (ck_lane_id() == 0)
        sh[ck_warp_id()] = v;
    ck_sync_threads();
    v = norm_butterfly_f32(sh[ck_lane_id() % (NORM_G / 32)], op, NORM_G / 32);
#else
    (void)sh;
#endif
    return v;
}

#endif
