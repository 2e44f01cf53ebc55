/* Numeric types: storage sizes, packed sub-byte storage and array conversions. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck/types.h"
#include "core/error.h"
#include "core/numeric_conv.h"
#include "core/numeric_internal.h"

static ck_status check_dtype(const char *func, const char *arg, ck_dtype dtype)
{
    if (!ck_dtype_get(dtype))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' = %d is not a ck_dtype; accepted: 0 to %d "
                       "(see 'ck types').",
                       func, arg, (int)dtype, CK_DTYPE_COUNT - 1);
    return CK_SUCCESS;
}

static ck_status storage_size(const char *func, const ck_dtype_info *t, size_t n, size_t *bytes)
{
    size_t pe = (size_t)t->pack_elements, pb = (size_t)t->pack_bytes;
    if (n % pe != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %zu elements of %s cannot be stored: %s packs %zu elements into %zu "
                       "byte%s, so the count must be a multiple of %zu.",
                       func, n, t->name, t->name, pe, pb, pb == 1 ? "" : "s", pe);
    if (n / pe > SIZE_MAX / pb)
        return ck_fail(CK_ERROR_OVERFLOW, "%s: %zu elements of %s need more than SIZE_MAX bytes.",
                       func, n, t->name);
    *bytes = n / pe * pb;
    return CK_SUCCESS;
}

ck_status ck_dtype_storage_size(ck_dtype dtype, size_t n, size_t *bytes)
{
    ck_status st = check_dtype("ck_dtype_storage_size", "dtype", dtype);
    if (st != CK_SUCCESS)
        return st;
    CK_REQUIRE_NOT_NULL(bytes, "ck_dtype_storage_size");
    return storage_size("ck_dtype_storage_size", ck_dtype_get(dtype), n, bytes);
}

static int overlaps(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return alen && blen && x < y + blen && y < x + alen;
}

/* Code of element i of an array of type t. */
static uint64_t load_code(const ck_dtype_info *t, const unsigned char *p, size_t i)
{
    if (t->pack_elements == 2)
        return (i & 1u) ? (uint64_t)(p[i >> 1] >> 4) : (uint64_t)(p[i >> 1] & 0xFu);
    if (t->pack_elements == 4) {
        const unsigned char *g = p + i / 4 * 3;
        uint32_t w = (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16;
        return (w >> (6u * (unsigned)(i % 4))) & 0x3Fu;
    }
    switch (t->pack_bytes) {
    case 1:
        return p[i];
    case 2: {
        uint16_t v;
        memcpy(&v, p + 2 * i, sizeof v);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p + 4 * i, sizeof v);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p + 8 * i, sizeof v);
        return v;
    }
    }
}

/* Store a code as element i; packed arrays must have been zeroed first. */
static void store_code(const ck_dtype_info *t, unsigned char *p, size_t i, uint64_t code)
{
    if (t->pack_elements == 2) {
        p[i >> 1] |= (unsigned char)((code & 0xFu) << ((i & 1u) * 4u));
        return;
    }
    if (t->pack_elements == 4) {
        unsigned char *g = p + i / 4 * 3;
        uint32_t w = (uint32_t)(code & 0x3Fu) << (6u * (unsigned)(i % 4));
        g[0] |= (unsigned char)w;
        g[1] |= (unsigned char)(w >> 8);
        g[2] |= (unsigned char)(w >> 16);
        return;
    }
    switch (t->pack_bytes) {
    case 1:
        p[i] = (unsigned char)code;
        break;
    case 2: {
        uint16_t v = (uint16_t)code;
        memcpy(p + 2 * i, &v, sizeof v);
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)code;
        memcpy(p + 4 * i, &v, sizeof v);
        break;
    }
    default:
        memcpy(p + 8 * i, &code, sizeof code);
        break;
    }
}

ck_convert_options ck_convert_options_default(void)
{
    ck_convert_options o;
    memset(&o, 0, sizeof o);
    o.round = CK_ROUND_NEAREST_EVEN;
    o.overflow = CK_OVERFLOW_DEFAULT;
    o.scale = 1.0f;
    o.seed = 0;
    return o;
}

void ck_convert_options_init(ck_convert_options *options)
{
    if (options)
        *options = ck_convert_options_default();
}

ck_status ck_convert_array(ck_dtype dst_type, void *dst, ck_dtype src_type, const void *src,
                           size_t n, const ck_convert_options *opt)
{
    static const char func[] = "ck_convert_array";
    ck_convert_options o = opt ? *opt : ck_convert_options_default();
    size_t dbytes = 0, sbytes = 0;
    int ovf;
    ck_status st = check_dtype(func, "dst_type", dst_type);
    if (st == CK_SUCCESS)
        st = check_dtype(func, "src_type", src_type);
    if (st == CK_SUCCESS)
        st = ck_numeric_check_modes(func, dst_type, o.round, o.overflow, &ovf);
    if (st != CK_SUCCESS)
        return st;
    if (!isfinite(o.scale) || o.scale == 0.0f)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: option 'scale' = %g is not allowed; the scale must be finite and "
                       "nonzero (1 for a plain conversion).",
                       func, (double)o.scale);
    const ck_dtype_info *dt = ck_dtype_get(dst_type), *srt = ck_dtype_get(src_type);
    st = storage_size(func, srt, n, &sbytes);
    if (st == CK_SUCCESS)
        st = storage_size(func, dt, n, &dbytes);
    if (st != CK_SUCCESS)
        return st;
    if (n == 0)
        return CK_SUCCESS;
    CK_REQUIRE_NOT_NULL(dst, func);
    CK_REQUIRE_NOT_NULL(src, func);
    if (overlaps(dst, dbytes, src, sbytes) &&
        !(dst == src && dbytes == sbytes && dt->pack_elements == 1 && srt->pack_elements == 1))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the destination (%zu bytes of %s) overlaps the source (%zu bytes of "
                       "%s); buffers must be disjoint, or identical for an in-place conversion "
                       "between non-packed types of the same size.",
                       func, dbytes, dt->name, sbytes, srt->name);
    if (dst_type == src_type && o.scale == 1.0f) {
        if (dst != src)
            memcpy(dst, src, dbytes);
        return CK_SUCCESS;
    }
    if (dt->pack_elements > 1)
        memset(dst, 0, dbytes);
    const unsigned char *s = (const unsigned char *)src;
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = 0; i < n; ++i) {
        ck_nc_unpacked u = ck_nc_decode((int32_t)src_type, load_code(srt, s, i));
        if (o.scale != 1.0f)
            u = ck_nc_scale(u, o.scale);
        uint32_t rnd = o.round == CK_ROUND_STOCHASTIC ? ck_nc_rand_word(o.seed, i) : 0u;
        store_code(dt, d, i, ck_nc_encode((int32_t)dst_type, u, (int32_t)o.round, ovf, rnd));
    }
    return CK_SUCCESS;
}

static ck_status check_packed(const char *func, ck_dtype dtype, const void *a, const void *b,
                              size_t n, size_t *bytes)
{
    ck_status st = check_dtype(func, "dtype", dtype);
    if (st != CK_SUCCESS)
        return st;
    const ck_dtype_info *t = ck_dtype_get(dtype);
    if (t->pack_elements == 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s is not a sub-byte type; accepted: fp4e2m1, fp6e2m3, fp6e3m2.", func,
                       t->name);
    st = storage_size(func, t, n, bytes);
    if (st != CK_SUCCESS || n == 0)
        return st;
    if (!a || !b)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: a buffer argument is NULL (codes %p, packed %p); valid pointers "
                       "are required when n > 0.",
                       func, a, b);
    if (overlaps(a, n, b, *bytes))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the code array (%zu bytes) and the packed array (%zu bytes) "
                       "overlap; they must be disjoint.",
                       func, n, *bytes);
    return CK_SUCCESS;
}

ck_status ck_pack(ck_dtype dtype, const uint8_t *codes, size_t n, void *packed)
{
    size_t bytes = 0;
    ck_status st = check_packed("ck_pack", dtype, codes, packed, n, &bytes);
    if (st != CK_SUCCESS || n == 0)
        return st;
    const ck_dtype_info *t = ck_dtype_get(dtype);
    for (size_t i = 0; i < n; ++i)
        if (codes[i] >> t->storage_bits)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_pack: codes[%zu] = 0x%02x does not fit %s, whose codes have %d "
                           "bits (at most 0x%02x).",
                           i, codes[i], t->name, t->storage_bits, (1u << t->storage_bits) - 1u);
    memset(packed, 0, bytes);
    for (size_t i = 0; i < n; ++i)
        store_code(t, (unsigned char *)packed, i, codes[i]);
    return CK_SUCCESS;
}

ck_status ck_unpack(ck_dtype dtype, const void *packed, size_t n, uint8_t *codes)
{
    size_t bytes = 0;
    ck_status st = check_packed("ck_unpack", dtype, codes, packed, n, &bytes);
    if (st != CK_SUCCESS || n == 0)
        return st;
    const ck_dtype_info *t = ck_dtype_get(dtype);
    for (size_t i = 0; i < n; ++i)
        codes[i] = (uint8_t)load_code(t, (const unsigned char *)packed, i);
    return CK_SUCCESS;
}
