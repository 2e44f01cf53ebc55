/*
 * ck_vector.h - the block library's element and vector access by dtype (part of ck_block.h):
 * n elements of a tensor of any float type the memory-bound operations read or write, as f32
 * values, with the widest aligned access. Type codes are the ck_dtype values (CK_NC_F32,
 * CK_NC_F16, ...: the prelude's numeric_conv.h) and are compile-time constants at every call, so
 * the type switches fold away.
 *
 *   ck_dtype_size(t)                  bytes of one element (1, 2, 4 or 8)
 *   ck_code_to_f32(t, c)              an element's code as f32 (exact; NaN keeps its payload)
 *   ck_f32_to_code(t, v)              f32 to an element's code: nearest even; f16/bf16 overflow
 *                                     to infinity, fp8 e4m3 saturates; i8 expects a value
 *                                     already rounded (clamped to +-127, NaN gives 0)
 *   ck_ld_words / ck_st_words         the raw 32-bit words of n bytes: 16-byte (read-only path
 *                                     for loads), 8-, 4-, 2- or 1-byte accesses, the widest n
 *                                     allows (the address must be aligned to it)
 *   ck_load_f32v / ck_store_f32v      n elements of type t through ck_ld_words / ck_st_words
 *   ck_load_f32v_elems / ck_store_f32v_elems   the same by element accesses (any alignment)
 */
#ifndef CK_DEVICE_CK_VECTOR_H
#define CK_DEVICE_CK_VECTOR_H

#include "ck_device.h"
#include "ck_convert.h"

CK_DEVICE int ck_dtype_size(int t)
{
    return t == CK_NC_F64                        ? 8
           : (t == CK_NC_F32 || t == CK_NC_I32)  ? 4
           : (t == CK_NC_F16 || t == CK_NC_BF16) ? 2
                                                 : 1;
}

CK_DEVICE float ck_code_to_f32(int t, uint32_t c)
{
    if (t == CK_NC_BF16)
        return ck_fast_bf16_to_f32(c);
    if (t == CK_NC_F16)
        return ck_fast_f16_to_f32(c);
    if (t == CK_NC_FP8_E4M3)
        return ck_fast_fp8e4m3_to_f32(c);
    if (t == CK_NC_FP8_E5M2)
        return ck_fast_fp8e5m2_to_f32(c);
    if (t == CK_NC_I8)
        return (float)(int8_t)(uint8_t)c;
    if (t == CK_NC_U8)
        return (float)(uint8_t)c;
    return ck_u32_as_f32(c);
}

CK_DEVICE uint32_t ck_f32_to_code(int t, float v)
{
    if (t == CK_NC_BF16)
        return ck_fast_f32_to_bf16(v);
    if (t == CK_NC_F16)
        return ck_fast_f32_to_f16(v);
    if (t == CK_NC_FP8_E4M3)
        return ck_fast_f32_to_fp8e4m3(v);
    if (t == CK_NC_I8) {
        /* v is already rounded and within [-127, 127] (or NaN: code 0) */
        float c = v != v ? 0.0f : v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
        return (uint32_t)(int32_t)c & 0xffu;
    }
    return ck_f32_as_u32(v);
}

/* The words of n bytes at p, by the widest access n allows. */
CK_DEVICE void ck_ld_words(const void *p, int n, uint32_t *w)
{
    if (n % 16 == 0) {
        CK_UNROLL for (int k = 0; k < n / 16; ++k)
        {
            ck_u32x4 u = ck_ld16_nc((const char *)p + 16 * k);
            w[4 * k] = u.x;
            w[4 * k + 1] = u.y;
            w[4 * k + 2] = u.z;
            w[4 * k + 3] = u.w;
        }
    } else if (n % 8 == 0) {
        CK_UNROLL for (int k = 0; k < n / 8; ++k)
        {
            uint64_t u = ((const uint64_t *)p)[k];
            w[2 * k] = (uint32_t)u;
            w[2 * k + 1] = (uint32_t)(u >> 32);
        }
    } else if (n % 4 == 0) {
        CK_UNROLL for (int k = 0; k < n / 4; ++k) w[k] = ((const uint32_t *)p)[k];
    } else if (n == 2) {
        w[0] = ((const uint16_t *)p)[0];
    } else { /* 1 byte */
        w[0] = ((const uint8_t *)p)[0];
    }
}

CK_DEVICE void ck_st_words(void *p, int n, const uint32_t *w)
{
    if (n % 16 == 0) {
        CK_UNROLL for (int k = 0; k < n / 16; ++k)
        {
            ck_u32x4 u;
            u.x = w[4 * k];
            u.y = w[4 * k + 1];
            u.z = w[4 * k + 2];
            u.w = w[4 * k + 3];
            ck_st16((char *)p + 16 * k, u);
        }
    } else if (n % 8 == 0) {
        CK_UNROLL for (int k = 0; k < n / 8; ++k)((uint64_t *)p)[k] =
            (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
    } else if (n % 4 == 0) {
        CK_UNROLL for (int k = 0; k < n / 4; ++k)((uint32_t *)p)[k] = w[k];
    } else if (n == 2) {
        ((uint16_t *)p)[0] = (uint16_t)w[0];
    } else {
        ((uint8_t *)p)[0] = (uint8_t)w[0];
    }
}

/* Element k of n packed codes of e bytes each (e = 1, 2 or 4) in words w. */
CK_DEVICE uint32_t ck_word_code(const uint32_t *w, int e, int k)
{
    if (e == 4)
        return w[k];
    if (e == 2)
        return (w[k / 2] >> (16 * (k % 2))) & 0xffffu;
    return (w[k / 4] >> (8 * (k % 4))) & 0xffu;
}

/* n elements of type t at p (32-bit elements or narrower; the address aligned to the access
 * ck_ld_words makes of n * size bytes) as f32. */
CK_DEVICE void ck_load_f32v(const void *p, int t, int n, float *o)
{
    const int e = ck_dtype_size(t);
    uint32_t w[16];
    ck_ld_words(p, n * e, w);
    CK_UNROLL for (int k = 0; k < n; ++k) o[k] = ck_code_to_f32(t, ck_word_code(w, e, k));
}

CK_DEVICE void ck_store_f32v(void *p, int t, int n, const float *v)
{
    const int e = ck_dtype_size(t);
    uint32_t w[16];
    CK_UNROLL for (int k = 0; k < 16; ++k) w[k] = 0;
    CK_UNROLL for (int k = 0; k < n; ++k)
    {
        uint32_t c = ck_f32_to_code(t, v[k]);
        if (e == 4)
            w[k] = c;
        else if (e == 2)
            w[k / 2] |= c << (16 * (k % 2));
        else
            w[k / 4] |= c << (8 * (k % 4));
    }
    ck_st_words(p, n * e, w);
}

/* Element i of p (type t) as f32, and the reverse. */
CK_DEVICE float ck_load_f32(const void *p, long long i, int t)
{
    const int e = ck_dtype_size(t);
    uint32_t c = e == 4   ? ((const uint32_t *)p)[i]
                 : e == 2 ? ((const uint16_t *)p)[i]
                          : ((const uint8_t *)p)[i];
    return ck_code_to_f32(t, c);
}

CK_DEVICE void ck_store_f32(void *p, long long i, int t, float v)
{
    const int e = ck_dtype_size(t);
    uint32_t c = ck_f32_to_code(t, v);
    if (e == 4)
        ((uint32_t *)p)[i] = c;
    else if (e == 2)
        ((uint16_t *)p)[i] = (uint16_t)c;
    else
        ((uint8_t *)p)[i] = (uint8_t)c;
}

CK_DEVICE void ck_load_f32v_elems(const void *p, int t, int n, float *o)
{
    CK_UNROLL for (int k = 0; k < n; ++k) o[k] = ck_load_f32(p, k, t);
}

CK_DEVICE void ck_store_f32v_elems(void *p, int t, int n, const float *v)
{
    CK_UNROLL for (int k = 0; k < n; ++k) ck_store_f32(p, k, t, v[k]);
}

#endif /* CK_DEVICE_CK_VECTOR_H */
