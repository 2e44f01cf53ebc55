/*
 * Swizzles as index functions (bijections): CK's LDS XOR pre-shuffle (KPack, MLdsLayer),
 * Morton (Z-order) codes and the tiled Morton layout, and NVIDIA's 32/64/128-byte
 * shared-memory swizzle modes (wgmma descriptors, TMA tensor maps).
 */
#include "ck/distribution.h"
#include "core/error.h"

static int is_pow2(long long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

ck_status ck_lds_xor_check(const ck_lds_xor *s)
{
    static const char *fn = "ck_lds_xor_check";
    CK_REQUIRE_NOT_NULL(s, fn);
    if (s->m_per_block < 1 || s->k_per_block < 1 || s->kpack < 1 || s->mlds_layer < 1 ||
        s->m_per_block > (1 << 16) || s->k_per_block > (1 << 16))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: m_per_block = %d, k_per_block = %d, kpack = %d, mlds_layer = %d; all "
                       "must be >= 1 and the tile sides at most 65536.",
                       fn, s->m_per_block, s->k_per_block, s->kpack, s->mlds_layer);
    if (s->k_per_block % s->kpack)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: k_per_block = %d must be a multiple of kpack = %d.", fn, s->k_per_block,
                       s->kpack);
    if (s->m_per_block % s->mlds_layer)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: m_per_block = %d must be a multiple of mlds_layer = %d.", fn,
                       s->m_per_block, s->mlds_layer);
    long long w = (long long)(s->k_per_block / s->kpack) * s->mlds_layer;
    if (!is_pow2(w))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: (k_per_block / kpack) * mlds_layer = %lld must be a power of two for "
                       "the XOR to stay a permutation.",
                       fn, w);
    return CK_SUCCESS;
}

ck_status ck_lds_xor_offset(const ck_lds_xor *s, int m, int k, long long *offset)
{
    static const char *fn = "ck_lds_xor_offset";
    ck_status st = ck_lds_xor_check(s);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(offset, fn);
    if (m < 0 || m >= s->m_per_block || k < 0 || k >= s->k_per_block)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: (m, k) = (%d, %d) is outside the %d x %d tile.", fn, m, k,
                       s->m_per_block, s->k_per_block);
    const int k0n = s->k_per_block / s->kpack, width = k0n * s->mlds_layer;
    const int m0 = m / s->mlds_layer, l = m % s->mlds_layer;
    const int k0 = k / s->kpack, k1 = k % s->kpack;
    const int k0l = (l * k0n + k0) ^ (m0 % width);
    *offset = (long long)m0 * s->k_per_block * s->mlds_layer + (long long)k0l * s->kpack + k1;
    return CK_SUCCESS;
}

ck_status ck_lds_xor_inverse(const ck_lds_xor *s, long long offset, int *m, int *k)
{
    static const char *fn = "ck_lds_xor_inverse";
    ck_status st = ck_lds_xor_check(s);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(m, fn);
    CK_REQUIRE_NOT_NULL(k, fn);
    if (offset < 0 || offset >= (long long)s->m_per_block * s->k_per_block)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: offset %lld is outside [0, %lld).", fn,
                       offset, (long long)s->m_per_block * s->k_per_block);
    const long long row = (long long)s->k_per_block * s->mlds_layer;
    const int k0n = s->k_per_block / s->kpack, width = k0n * s->mlds_layer;
    const int m0 = (int)(offset / row);
    const int rem = (int)(offset % row);
    const int k0l = (rem / s->kpack) ^ (m0 % width), k1 = rem % s->kpack;
    *m = m0 * s->mlds_layer + k0l / k0n;
    *k = (k0l % k0n) * s->kpack + k1;
    return CK_SUCCESS;
}

ck_status ck_morton_encode(int bits, int y, int x, long long *code)
{
    static const char *fn = "ck_morton_encode";
    CK_REQUIRE_NOT_NULL(code, fn);
    if (bits < 0 || bits > 15)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: bits = %d; accepted: 0 to 15.", fn, bits);
    if (y < 0 || x < 0 || y >= (1 << bits) || x >= (1 << bits))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: (y, x) = (%d, %d) must be in [0, %d) with %d bits.", fn, y, x,
                       1 << bits, bits);
    long long c = 0;
    for (int i = bits - 1; i >= 0; --i) /* most significant pair first: y_i then x_i */
        c = (c << 2) | ((long long)((y >> i) & 1) << 1) | ((x >> i) & 1);
    *code = c;
    return CK_SUCCESS;
}

ck_status ck_morton_decode(int bits, long long code, int *y, int *x)
{
    static const char *fn = "ck_morton_decode";
    CK_REQUIRE_NOT_NULL(y, fn);
    CK_REQUIRE_NOT_NULL(x, fn);
    if (bits < 0 || bits > 15)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: bits = %d; accepted: 0 to 15.", fn, bits);
    if (code < 0 || code >= (1LL << (2 * bits)))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: code %lld must be in [0, %lld).", fn, code,
                       1LL << (2 * bits));
    int yy = 0, xx = 0;
    for (int i = 0; i < bits; ++i) {
        xx |= (int)((code >> (2 * i)) & 1) << i;
        yy |= (int)((code >> (2 * i + 1)) & 1) << i;
    }
    *y = yy;
    *x = xx;
    return CK_SUCCESS;
}

static ck_status check_tiled(int h, int w, int tile, int *bits, const char *fn)
{
    if (!is_pow2(tile) || tile > (1 << 15) || h < 1 || w < 1 || h % tile || w % tile ||
        (long long)h * w > (1LL << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tile = %d must be a power of two dividing h = %d and w = %d.", fn, tile,
                       h, w);
    int b = 0;
    while ((1 << b) < tile)
        ++b;
    *bits = b;
    return CK_SUCCESS;
}

ck_status ck_morton_tiled_offset(int h, int w, int tile, int y, int x, long long *offset)
{
    static const char *fn = "ck_morton_tiled_offset";
    CK_REQUIRE_NOT_NULL(offset, fn);
    int bits = 0;
    ck_status st = check_tiled(h, w, tile, &bits, fn);
    if (st)
        return st;
    if (y < 0 || y >= h || x < 0 || x >= w)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: (y, x) = (%d, %d) is outside %d x %d.", fn,
                       y, x, h, w);
    long long code;
    ck_morton_encode(bits, y % tile, x % tile, &code);
    *offset = ((long long)(y / tile) * (w / tile) + x / tile) * tile * tile + code;
    return CK_SUCCESS;
}

ck_status ck_morton_tiled_inverse(int h, int w, int tile, long long offset, int *y, int *x)
{
    static const char *fn = "ck_morton_tiled_inverse";
    CK_REQUIRE_NOT_NULL(y, fn);
    CK_REQUIRE_NOT_NULL(x, fn);
    int bits = 0;
    ck_status st = check_tiled(h, w, tile, &bits, fn);
    if (st)
        return st;
    if (offset < 0 || offset >= (long long)h * w)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: offset %lld is outside [0, %lld).", fn,
                       offset, (long long)h * w);
    const long long tt = (long long)tile * tile;
    long long t = offset / tt;
    int yi, xi;
    ck_morton_decode(bits, offset % tt, &yi, &xi);
    *y = (int)(t / (w / tile)) * tile + yi;
    *x = (int)(t % (w / tile)) * tile + xi;
    return CK_SUCCESS;
}

ck_status ck_nv_swizzle_offset(ck_nv_swizzle mode, long long byte_offset, long long *swizzled)
{
    static const char *fn = "ck_nv_swizzle_offset";
    CK_REQUIRE_NOT_NULL(swizzled, fn);
    if ((int)mode < 0 || (int)mode > 3)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: mode = %d; accepted: none (0), 32B (1), 64B (2), 128B (3).", fn,
                       (int)mode);
    if (byte_offset < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: byte_offset = %lld must be >= 0.", fn,
                       byte_offset);
    const int b = (int)mode; /* bits of the 16-byte chunk index swizzled */
    const long long mask = (1LL << b) - 1;
    const long long row = (byte_offset >> 7) & mask; /* 128-byte row index, low b bits */
    *swizzled = byte_offset ^ (row << 4);
    return CK_SUCCESS;
}
