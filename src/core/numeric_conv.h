/*
 * numeric_conv.h - per-element conversions between fp32/fp64 and every ck data type.
 *
 * Self-contained: integer and bit operations on fixed-width integers only, no libc
 * calls, no other headers of ck. The same text compiles as C11 (host library, CPU
 * emulator) and as CUDA C++ (nvcc, and NVRTC, which has no <stdint.h>), so a GPU
 * kernel converts bit-exactly like the host. docs/types.md describes the formats.
 *
 * Model. A value is unpacked into (sign, class, mant, exp): for finite values
 * value = (-1)^sign * mant * 2^exp with an integer mant < 2^63. Decoding a format gives
 * that exactly; encoding rounds it once to the target format with
 *   round:    CK_NC_ROUND_NEAREST_EVEN, _TOWARD_ZERO, _NEAREST_AWAY or _STOCHASTIC;
 *   overflow: CK_NC_SATURATE (out-of-range finite values and infinities clamp to
 *             +-max finite) or CK_NC_NONSAT (they become +-Inf where the format has
 *             it, else NaN where it has one, else +-max; toward-zero rounding of a finite
 *             value never overflows, as in IEEE 754);
 *   rnd:      the caller's 32-bit random word for stochastic rounding: the magnitude is
 *             rounded away from zero iff rnd < floor(f * 2^32), f in [0,1) being the
 *             discarded fraction of a unit in the last place.
 * NaN keeps its sign and becomes the format's canonical quiet NaN (FNUZ: the only NaN
 * 0x80); formats without NaN (fp6, fp4) map NaN to +max finite; integers map NaN to 0
 * and always saturate.
 */
#ifndef CK_SRC_CORE_NUMERIC_CONV_H
#define CK_SRC_CORE_NUMERIC_CONV_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CK_NC_FN static inline __host__ __device__
#else
#define CK_NC_FN static inline
#endif

#if defined(__CUDACC_RTC__)
#ifndef CK_FIXED_WIDTH_TYPES_DEFINED
#define CK_FIXED_WIDTH_TYPES_DEFINED 1
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#endif
#else
#include <stdint.h>
#if defined(__cplusplus)
#include <cstring>
#endif
#endif

/* ------------------------------------------------------------------ identifiers */
/* Type codes; equal to the ck_dtype values of include/ck/types.h (checked there). */
#define CK_NC_F32           0
#define CK_NC_F64           1
#define CK_NC_F16           2
#define CK_NC_BF16          3
#define CK_NC_TF32          4
#define CK_NC_FP8_E4M3      5
#define CK_NC_FP8_E5M2      6
#define CK_NC_FP8_E4M3_FNUZ 7
#define CK_NC_FP8_E5M2_FNUZ 8
#define CK_NC_FP6_E2M3      9
#define CK_NC_FP6_E3M2      10
#define CK_NC_FP4_E2M1      11
#define CK_NC_I8            12
#define CK_NC_U8            13
#define CK_NC_I32           14
#define CK_NC_TYPE_COUNT    15

#define CK_NC_ROUND_NEAREST_EVEN 0
#define CK_NC_ROUND_TOWARD_ZERO  1
#define CK_NC_ROUND_NEAREST_AWAY 2
#define CK_NC_ROUND_STOCHASTIC   3

#define CK_NC_SATURATE 0
#define CK_NC_NONSAT   1

/* How a format spells NaN. */
#define CK_NC_NAN_NONE 0 /* no NaN (OCP MX fp6, fp4) */
#define CK_NC_NAN_IEEE 1 /* exponent all ones, mantissa nonzero (fp16, bf16, fp32, e5m2) */
#define CK_NC_NAN_ONES 2 /* only S.1111.111 (OCP e4m3) */
#define CK_NC_NAN_NEGZ 3 /* only 1.0000.000 = 0x80, no -0 (FNUZ) */

#define CK_NC_CLASS_FINITE 0
#define CK_NC_CLASS_INF    1
#define CK_NC_CLASS_NAN    2

/* ------------------------------------------------------------------ bit casts */
/* Device code (NVRTC, or nvcc's device pass) uses the intrinsics; host C++ memcpy; C a union. */
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
#define CK_NC_CUDA 1
#endif
CK_NC_FN uint32_t ck_nc_f32_bits(float x)
{
#if defined(CK_NC_CUDA)
    return __float_as_uint(x);
#elif defined(__cplusplus)
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#else
    union {
        float f;
        uint32_t u;
    } c;
    c.f = x;
    return c.u;
#endif
}

CK_NC_FN float ck_nc_bits_f32(uint32_t u)
{
#if defined(CK_NC_CUDA)
    return __uint_as_float(u);
#elif defined(__cplusplus)
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
#else
    union {
        float f;
        uint32_t u;
    } c;
    c.u = u;
    return c.f;
#endif
}

CK_NC_FN uint64_t ck_nc_f64_bits(double x)
{
#if defined(CK_NC_CUDA)
    return (uint64_t)__double_as_longlong(x);
#elif defined(__cplusplus)
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#else
    union {
        double f;
        uint64_t u;
    } c;
    c.f = x;
    return c.u;
#endif
}

CK_NC_FN double ck_nc_bits_f64(uint64_t u)
{
#if defined(CK_NC_CUDA)
    return __longlong_as_double((long long)u);
#elif defined(__cplusplus)
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
#else
    union {
        double f;
        uint64_t u;
    } c;
    c.u = u;
    return c.f;
#endif
}

/* ------------------------------------------------------------------ formats */
typedef struct ck_nc_format {
    int32_t ebits, mbits, bias; /* exponent bits, mantissa bits, exponent bias */
    int32_t nan_kind;           /* CK_NC_NAN_* */
    int32_t has_inf;            /* exponent all ones, mantissa zero is +-Inf */
} ck_nc_format;

typedef struct ck_nc_unpacked {
    uint32_t sign; /* 1 for negative (also -0, -Inf, negative NaN) */
    uint32_t cls;  /* CK_NC_CLASS_* */
    uint64_t mant; /* finite: magnitude = mant * 2^exp; 0 for zero */
    int32_t exp;
} ck_nc_unpacked;

CK_NC_FN ck_nc_format ck_nc_make_format(int32_t ebits, int32_t mbits, int32_t bias,
                                        int32_t nan_kind, int32_t has_inf)
{
    ck_nc_format f;
    f.ebits = ebits;
    f.mbits = mbits;
    f.bias = bias;
    f.nan_kind = nan_kind;
    f.has_inf = has_inf;
    return f;
}

/* The floating-point layout of a type code (integers give ebits = 0). tf32 is described
 * by its 19-bit code (1.8.10); its storage is the fp32 container, see ck_nc_encode. */
CK_NC_FN ck_nc_format ck_nc_format_of(int32_t type)
{
    switch (type) {
    case CK_NC_F32:
        return ck_nc_make_format(8, 23, 127, CK_NC_NAN_IEEE, 1);
    case CK_NC_F64:
        return ck_nc_make_format(11, 52, 1023, CK_NC_NAN_IEEE, 1);
    case CK_NC_F16:
        return ck_nc_make_format(5, 10, 15, CK_NC_NAN_IEEE, 1);
    case CK_NC_BF16:
        return ck_nc_make_format(8, 7, 127, CK_NC_NAN_IEEE, 1);
    case CK_NC_TF32:
        return ck_nc_make_format(8, 10, 127, CK_NC_NAN_IEEE, 1);
    case CK_NC_FP8_E4M3:
        return ck_nc_make_format(4, 3, 7, CK_NC_NAN_ONES, 0);
    case CK_NC_FP8_E5M2:
        return ck_nc_make_format(5, 2, 15, CK_NC_NAN_IEEE, 1);
    case CK_NC_FP8_E4M3_FNUZ:
        return ck_nc_make_format(4, 3, 8, CK_NC_NAN_NEGZ, 0);
    case CK_NC_FP8_E5M2_FNUZ:
        return ck_nc_make_format(5, 2, 16, CK_NC_NAN_NEGZ, 0);
    case CK_NC_FP6_E2M3:
        return ck_nc_make_format(2, 3, 1, CK_NC_NAN_NONE, 0);
    case CK_NC_FP6_E3M2:
        return ck_nc_make_format(3, 2, 3, CK_NC_NAN_NONE, 0);
    case CK_NC_FP4_E2M1:
        return ck_nc_make_format(2, 1, 1, CK_NC_NAN_NONE, 0);
    default:
        return ck_nc_make_format(0, 0, 0, CK_NC_NAN_NONE, 0);
    }
}

/* Largest finite magnitude code (exponent and mantissa fields, no sign). */
CK_NC_FN uint64_t ck_nc_max_code(ck_nc_format f)
{
    uint64_t emask = ((uint64_t)1 << f.ebits) - 1u, mmask = ((uint64_t)1 << f.mbits) - 1u;
    switch (f.nan_kind) {
    case CK_NC_NAN_IEEE:
        return ((emask - 1u) << f.mbits) | mmask;
    case CK_NC_NAN_ONES:
        return (emask << f.mbits) | (mmask - 1u);
    default:
        return (emask << f.mbits) | mmask;
    }
}

/* The canonical NaN of a format with the given sign (FNUZ: 0x80 whatever the sign). */
CK_NC_FN uint64_t ck_nc_nan_code(ck_nc_format f, uint32_t sign)
{
    uint64_t emask = ((uint64_t)1 << f.ebits) - 1u, mmask = ((uint64_t)1 << f.mbits) - 1u;
    uint64_t s = (uint64_t)sign << (f.ebits + f.mbits);
    switch (f.nan_kind) {
    case CK_NC_NAN_IEEE:
        return s | (emask << f.mbits) | ((uint64_t)1 << (f.mbits - 1));
    case CK_NC_NAN_ONES:
        return s | (emask << f.mbits) | mmask;
    case CK_NC_NAN_NEGZ:
        return (uint64_t)1 << (f.ebits + f.mbits);
    default:
        return ck_nc_max_code(f); /* no NaN: +max */
    }
}

/* ------------------------------------------------------------------ decoding */
/* Unpack a code of floating-point format f (sign in bit ebits+mbits). Exact. */
CK_NC_FN ck_nc_unpacked ck_nc_decode_float(uint64_t code, ck_nc_format f)
{
    ck_nc_unpacked u;
    uint64_t emask = ((uint64_t)1 << f.ebits) - 1u, mmask = ((uint64_t)1 << f.mbits) - 1u;
    uint64_t ef = (code >> f.mbits) & emask, mf = code & mmask;
    u.sign = (uint32_t)((code >> (f.ebits + f.mbits)) & 1u);
    u.cls = CK_NC_CLASS_FINITE;
    u.mant = 0;
    u.exp = 0;
    if (f.nan_kind == CK_NC_NAN_IEEE && ef == emask) {
        u.cls = (mf == 0 && f.has_inf) ? CK_NC_CLASS_INF : CK_NC_CLASS_NAN;
        return u;
    }
    if (f.nan_kind == CK_NC_NAN_ONES && ef == emask && mf == mmask) {
        u.cls = CK_NC_CLASS_NAN;
        return u;
    }
    if (f.nan_kind == CK_NC_NAN_NEGZ && u.sign && ef == 0 && mf == 0) {
        u.cls = CK_NC_CLASS_NAN; /* the only NaN; it has no sign */
        u.sign = 0;
        return u;
    }
    if (ef == 0) {
        u.mant = mf;
        u.exp = 1 - f.bias - f.mbits;
    } else {
        u.mant = mf | ((uint64_t)1 << f.mbits);
        u.exp = (int32_t)ef - f.bias - f.mbits;
    }
    return u;
}

/* ------------------------------------------------------------------ encoding */
/* Number of significant bits of x (0 for 0). */
CK_NC_FN int32_t ck_nc_bit_length(uint64_t x)
{
    int32_t n = 0;
    if (x >> 32) {
        n += 32;
        x >>= 32;
    }
    if (x >> 16) {
        n += 16;
        x >>= 16;
    }
    if (x >> 8) {
        n += 8;
        x >>= 8;
    }
    if (x >> 4) {
        n += 4;
        x >>= 4;
    }
    if (x >> 2) {
        n += 2;
        x >>= 2;
    }
    if (x >> 1) {
        n += 1;
        x >>= 1;
    }
    return n + (int32_t)x;
}

/* Round mant * 2^-shift (shift >= 1, mant < 2^63) to an integer by `round`; rnd as above. */
CK_NC_FN uint64_t ck_nc_round_shift(uint64_t mant, int32_t shift, int32_t round, uint32_t rnd)
{
    uint64_t q, rem, half;
    int32_t up;
    if (shift >= 64) {
        q = 0;
        rem = mant;
        half = 0; /* unused: rem < 2^63 <= half */
    } else {
        q = mant >> shift;
        rem = mant & (((uint64_t)1 << shift) - 1u);
        half = (uint64_t)1 << (shift - 1);
    }
    if (rem == 0)
        return q;
    switch (round) {
    case CK_NC_ROUND_TOWARD_ZERO:
        up = 0;
        break;
    case CK_NC_ROUND_NEAREST_AWAY:
        up = shift < 64 && rem >= half;
        break;
    case CK_NC_ROUND_STOCHASTIC: {
        /* d = floor(rem * 2^32 / 2^shift): the top 32 bits of the discarded fraction. */
        uint64_t d;
        if (shift <= 32)
            d = rem << (32 - shift);
        else if (shift - 32 < 64)
            d = rem >> (shift - 32);
        else
            d = 0;
        up = (uint64_t)rnd < d;
        break;
    }
    default:
        up = shift < 64 && (rem > half || (rem == half && (q & 1u)));
        break;
    }
    return q + (uint64_t)up;
}

/* Round and pack an unpacked value into floating-point format f. */
CK_NC_FN uint64_t ck_nc_encode_float(ck_nc_unpacked u, ck_nc_format f, int32_t round,
                                     int32_t overflow, uint32_t rnd)
{
    int32_t sbit = f.ebits + f.mbits;
    uint64_t sign = (uint64_t)u.sign << sbit;
    uint64_t maxc = ck_nc_max_code(f);
    uint64_t inf_code = (((uint64_t)1 << f.ebits) - 1u) << f.mbits;
    int32_t emin = 1 - f.bias; /* exponent of the smallest normal binade */
    if (u.cls == CK_NC_CLASS_NAN)
        return ck_nc_nan_code(f, u.sign);
    if (u.cls == CK_NC_CLASS_INF) {
        if (overflow == CK_NC_SATURATE || f.nan_kind == CK_NC_NAN_NONE)
            return sign | maxc;
        return f.has_inf ? (sign | inf_code) : ck_nc_nan_code(f, u.sign);
    }
    if (u.mant == 0)
        return f.nan_kind == CK_NC_NAN_NEGZ ? 0u : sign;
    {
        int32_t top = ck_nc_bit_length(u.mant) - 1 + u.exp; /* floor(log2 |value|) */
        int32_t eq = top > emin ? top : emin;               /* binade of the quantum */
        int32_t shift = (eq - f.mbits) - u.exp;             /* bits to discard */
        uint64_t r, mag;
        if (eq - emin >= ((int32_t)1 << f.ebits)) { /* beyond the exponent field */
            mag = maxc + 1u;
        } else {
            r = shift <= 0 ? (u.mant << -shift) : ck_nc_round_shift(u.mant, shift, round, rnd);
            /* r counts quanta of 2^(eq - mbits); the hidden bit carries into the exponent. */
            mag = ((uint64_t)(eq - emin) << f.mbits) + r;
        }
        if (mag > maxc) {
            if (overflow == CK_NC_SATURATE || round == CK_NC_ROUND_TOWARD_ZERO ||
                f.nan_kind == CK_NC_NAN_NONE)
                return sign | maxc;
            return f.has_inf ? (sign | inf_code) : ck_nc_nan_code(f, u.sign);
        }
        if (mag == 0 && f.nan_kind == CK_NC_NAN_NEGZ)
            return 0u;
        return sign | mag;
    }
}

/* Round an unpacked value to an integer of `bits` bits (signed or not), saturating;
 * NaN gives 0. Returns the two's-complement code in the low `bits` bits. */
CK_NC_FN uint64_t ck_nc_encode_int(ck_nc_unpacked u, int32_t bits, int32_t is_signed, int32_t round,
                                   uint32_t rnd)
{
    uint64_t limit_pos =
        is_signed ? (((uint64_t)1 << (bits - 1)) - 1u) : (((uint64_t)1 << bits) - 1u);
    uint64_t limit_neg = is_signed ? ((uint64_t)1 << (bits - 1)) : 0u; /* magnitude */
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1u);
    uint64_t mag;
    if (u.cls == CK_NC_CLASS_NAN)
        return 0;
    if (u.cls == CK_NC_CLASS_INF) {
        mag = ~(uint64_t)0;
    } else if (u.mant == 0) {
        mag = 0;
    } else if (u.exp >= 0) {
        mag = (u.exp >= 64 || ck_nc_bit_length(u.mant) + u.exp > 63) ? ~(uint64_t)0
                                                                     : (u.mant << u.exp);
    } else {
        mag = ck_nc_round_shift(u.mant, -u.exp, round, rnd);
    }
    if (u.sign) {
        if (mag > limit_neg)
            mag = limit_neg;
        return (~mag + 1u) & mask;
    }
    return (mag > limit_pos ? limit_pos : mag) & mask;
}

/* Unpack an integer code (two's complement in the low `bits` bits). */
CK_NC_FN ck_nc_unpacked ck_nc_decode_int(uint64_t code, int32_t bits, int32_t is_signed)
{
    ck_nc_unpacked u;
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1u);
    code &= mask;
    u.cls = CK_NC_CLASS_FINITE;
    u.exp = 0;
    u.sign = 0;
    if (is_signed && ((code >> (bits - 1)) & 1u)) {
        u.sign = 1;
        code = (~code + 1u) & mask;
    }
    u.mant = code;
    return u;
}

/* ------------------------------------------------------------------ by type code */
/* Unpack the storage code of `type` (tf32: the fp32 container, low 13 bits ignored). */
CK_NC_FN ck_nc_unpacked ck_nc_decode(int32_t type, uint64_t code)
{
    switch (type) {
    case CK_NC_I8:
        return ck_nc_decode_int(code, 8, 1);
    case CK_NC_U8:
        return ck_nc_decode_int(code, 8, 0);
    case CK_NC_I32:
        return ck_nc_decode_int(code, 32, 1);
    case CK_NC_TF32:
        return ck_nc_decode_float((code >> 13) & 0x7FFFFu, ck_nc_format_of(type));
    default:
        return ck_nc_decode_float(code, ck_nc_format_of(type));
    }
}

/* Round an unpacked value to the storage code of `type`. */
CK_NC_FN uint64_t ck_nc_encode(int32_t type, ck_nc_unpacked u, int32_t round, int32_t overflow,
                               uint32_t rnd)
{
    switch (type) {
    case CK_NC_I8:
        return ck_nc_encode_int(u, 8, 1, round, rnd);
    case CK_NC_U8:
        return ck_nc_encode_int(u, 8, 0, round, rnd);
    case CK_NC_I32:
        return ck_nc_encode_int(u, 32, 1, round, rnd);
    case CK_NC_TF32:
        return ck_nc_encode_float(u, ck_nc_format_of(type), round, overflow, rnd) << 13;
    default:
        return ck_nc_encode_float(u, ck_nc_format_of(type), round, overflow, rnd);
    }
}

CK_NC_FN ck_nc_unpacked ck_nc_unpack_f32(float x)
{
    return ck_nc_decode_float(ck_nc_f32_bits(x), ck_nc_format_of(CK_NC_F32));
}

CK_NC_FN ck_nc_unpacked ck_nc_unpack_f64(double x)
{
    return ck_nc_decode_float(ck_nc_f64_bits(x), ck_nc_format_of(CK_NC_F64));
}

/* fp32 -> storage code of `type`. fp32 -> fp32 is the identity (NaN payloads kept). */
CK_NC_FN uint64_t ck_nc_from_f32(int32_t type, float x, int32_t round, int32_t overflow,
                                 uint32_t rnd)
{
    if (type == CK_NC_F32)
        return ck_nc_f32_bits(x);
    return ck_nc_encode(type, ck_nc_unpack_f32(x), round, overflow, rnd);
}

/* fp64 -> storage code of `type`, rounded once. */
CK_NC_FN uint64_t ck_nc_from_f64(int32_t type, double x, int32_t round, int32_t overflow,
                                 uint32_t rnd)
{
    if (type == CK_NC_F64)
        return ck_nc_f64_bits(x);
    return ck_nc_encode(type, ck_nc_unpack_f64(x), round, overflow, rnd);
}

/* Storage code of `type` -> fp32: exact for every type but fp64 and int32, which round to
 * nearest even (IEEE 754, non-saturating: fp64 beyond the fp32 range gives +-Inf). */
CK_NC_FN float ck_nc_to_f32(int32_t type, uint64_t code)
{
    if (type == CK_NC_F32)
        return ck_nc_bits_f32((uint32_t)code);
    return ck_nc_bits_f32((uint32_t)ck_nc_encode_float(ck_nc_decode(type, code),
                                                       ck_nc_format_of(CK_NC_F32),
                                                       CK_NC_ROUND_NEAREST_EVEN, CK_NC_NONSAT, 0));
}

/* Storage code of `type` -> fp64: exact for every type. */
CK_NC_FN double ck_nc_to_f64(int32_t type, uint64_t code)
{
    if (type == CK_NC_F64)
        return ck_nc_bits_f64(code);
    return ck_nc_bits_f64(ck_nc_encode_float(ck_nc_decode(type, code), ck_nc_format_of(CK_NC_F64),
                                             CK_NC_ROUND_NEAREST_EVEN, CK_NC_NONSAT, 0));
}

/* Multiply an unpacked value by the fp32 scale s (finite, nonzero): the product is exact
 * when it has at most 62 significant bits, else kept to 62 bits plus a sticky bit (enough
 * for correct nearest and toward-zero rounding into any type). */
CK_NC_FN ck_nc_unpacked ck_nc_scale(ck_nc_unpacked u, float s)
{
    ck_nc_unpacked v = ck_nc_unpack_f32(s);
    uint64_t a = u.mant, b = v.mant, lo, hi, top, low32, mant, sticky;
    int32_t sh;
    u.sign ^= v.sign;
    if (u.cls != CK_NC_CLASS_FINITE || a == 0)
        return u;
    lo = (a & 0xFFFFFFFFu) * b; /* b < 2^24 */
    hi = (a >> 32) * b;
    top = hi + (lo >> 32); /* product = top * 2^32 + low32 */
    low32 = lo & 0xFFFFFFFFu;
    sh = ck_nc_bit_length(top) - 30; /* bits to drop to keep 62 */
    if (sh <= 0) {
        mant = (top << 32) | low32;
        sh = 0;
    } else if (sh <= 32) {
        sticky = (low32 & (((uint64_t)1 << sh) - 1u)) != 0;
        mant = (top << (32 - sh)) | (low32 >> sh) | sticky;
    } else {
        sticky = ((top & (((uint64_t)1 << (sh - 32)) - 1u)) | low32) != 0;
        mant = (top >> (sh - 32)) | sticky;
    }
    u.mant = mant;
    u.exp = u.exp + v.exp + sh;
    return u;
}

/* ------------------------------------------------------------------ named helpers */
/* Defaults most kernels want: round to nearest even; fp8/fp6/fp4 saturate (OCP "satfinite"),
 * fp16/bf16 follow IEEE (non-saturating). */
CK_NC_FN uint16_t ck_nc_f32_to_f16(float x)
{
    return (uint16_t)ck_nc_from_f32(CK_NC_F16, x, 0, CK_NC_NONSAT, 0);
}
CK_NC_FN uint16_t ck_nc_f32_to_bf16(float x)
{
    return (uint16_t)ck_nc_from_f32(CK_NC_BF16, x, 0, CK_NC_NONSAT, 0);
}
CK_NC_FN uint8_t ck_nc_f32_to_fp8e4m3(float x)
{
    return (uint8_t)ck_nc_from_f32(CK_NC_FP8_E4M3, x, 0, CK_NC_SATURATE, 0);
}
CK_NC_FN uint8_t ck_nc_f32_to_fp8e5m2(float x)
{
    return (uint8_t)ck_nc_from_f32(CK_NC_FP8_E5M2, x, 0, CK_NC_SATURATE, 0);
}
CK_NC_FN uint8_t ck_nc_f32_to_fp6e2m3(float x)
{
    return (uint8_t)ck_nc_from_f32(CK_NC_FP6_E2M3, x, 0, CK_NC_SATURATE, 0);
}
CK_NC_FN uint8_t ck_nc_f32_to_fp6e3m2(float x)
{
    return (uint8_t)ck_nc_from_f32(CK_NC_FP6_E3M2, x, 0, CK_NC_SATURATE, 0);
}
CK_NC_FN uint8_t ck_nc_f32_to_fp4e2m1(float x)
{
    return (uint8_t)ck_nc_from_f32(CK_NC_FP4_E2M1, x, 0, CK_NC_SATURATE, 0);
}
CK_NC_FN float ck_nc_f16_to_f32(uint16_t c)
{
    return ck_nc_to_f32(CK_NC_F16, c);
}
CK_NC_FN float ck_nc_bf16_to_f32(uint16_t c)
{
    return ck_nc_to_f32(CK_NC_BF16, c);
}
CK_NC_FN float ck_nc_fp8e4m3_to_f32(uint8_t c)
{
    return ck_nc_to_f32(CK_NC_FP8_E4M3, c);
}
CK_NC_FN float ck_nc_fp8e5m2_to_f32(uint8_t c)
{
    return ck_nc_to_f32(CK_NC_FP8_E5M2, c);
}
CK_NC_FN float ck_nc_fp6e2m3_to_f32(uint8_t c)
{
    return ck_nc_to_f32(CK_NC_FP6_E2M3, c);
}
CK_NC_FN float ck_nc_fp6e3m2_to_f32(uint8_t c)
{
    return ck_nc_to_f32(CK_NC_FP6_E3M2, c);
}
CK_NC_FN float ck_nc_fp4e2m1_to_f32(uint8_t c)
{
    return ck_nc_to_f32(CK_NC_FP4_E2M1, c);
}

/* The random word ck_convert_array uses for element `index` of a stochastic conversion
 * seeded with `seed` (splitmix64 finalizer of seed + (index+1) * golden ratio). */
CK_NC_FN uint32_t ck_nc_rand_word(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + (index + 1u) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint32_t)(z >> 32);
}

#endif /* CK_SRC_CORE_NUMERIC_CONV_H */
