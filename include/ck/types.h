/*
 * ck/types.h - numeric data types and bit-exact conversions.
 *
 * Every type CK supports (int8, int32, fp4 E2M1, fp6 E2M3/E3M2, fp8 E4M3/E5M2, fp16, bf16,
 * fp32, fp64), the FNUZ fp8 variants of AMD hardware, uint8, and tf32 as a compute mode.
 * A value of a type is handled as its *code*: the bit pattern in the low bits of a
 * uint64_t (fp16: 16 bits, fp8: 8 bits, fp4: 4 bits, int8: two's complement in 8 bits,
 * tf32: the 32-bit fp32 container whose low 13 bits are zero). Arrays use each type's
 * storage: one element per 1/2/4/8 bytes, except fp4 (2 per byte, element 2i in bits 0-3,
 * element 2i+1 in bits 4-7) and fp6 (4 per 3 bytes: the bytes b0,b1,b2 form the 24-bit
 * little-endian word b0 | b1<<8 | b2<<16 and element 4g+j is its bits [6j, 6j+6)).
 * docs/types.md describes every format, rounding and overflow rule.
 *
 * The per-element algorithms live in src/core/numeric_conv.h, which GPU kernels and the
 * CPU emulator compile too, so host and device agree bit for bit.
 */
#ifndef CK_TYPES_H
#define CK_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "ck/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The data types. Values are stable (they index the descriptor table). */
typedef enum ck_dtype {
    CK_DTYPE_F32 = 0,           /* IEEE 754 binary32 */
    CK_DTYPE_F64 = 1,           /* IEEE 754 binary64 */
    CK_DTYPE_F16 = 2,           /* IEEE 754 binary16 */
    CK_DTYPE_BF16 = 3,          /* bfloat16: fp32's exponent, 7 mantissa bits */
    CK_DTYPE_TF32 = 4,          /* TensorFloat-32 compute mode: 1.8.10 in an fp32 container */
    CK_DTYPE_FP8_E4M3 = 5,      /* OCP FP8 E4M3: bias 7, no Inf, NaN S.1111.111, max 448 */
    CK_DTYPE_FP8_E5M2 = 6,      /* OCP FP8 E5M2: bias 15, IEEE-like Inf/NaN, max 57344 */
    CK_DTYPE_FP8_E4M3_FNUZ = 7, /* AMD FNUZ E4M3: bias 8, NaN only 0x80, no -0/Inf, max 240 */
    CK_DTYPE_FP8_E5M2_FNUZ = 8, /* AMD FNUZ E5M2: bias 16, NaN only 0x80, no -0/Inf, max 57344 */
    CK_DTYPE_FP6_E2M3 = 9,      /* OCP MX FP6 E2M3: bias 1, no Inf/NaN, max 7.5 */
    CK_DTYPE_FP6_E3M2 = 10,     /* OCP MX FP6 E3M2: bias 3, no Inf/NaN, max 28 */
    CK_DTYPE_FP4_E2M1 = 11,     /* OCP MX FP4 E2M1: bias 1, no Inf/NaN, max 6 */
    CK_DTYPE_I8 = 12,           /* int8_t */
    CK_DTYPE_U8 = 13,           /* uint8_t */
    CK_DTYPE_I32 = 14,          /* int32_t */
    CK_DTYPE_COUNT = 15         /* number of types; not a type */
} ck_dtype;

/* How a value between two neighbours of the target type is rounded. */
typedef enum ck_round_mode {
    CK_ROUND_NEAREST_EVEN = 0, /* to nearest, ties to the even code (IEEE default) */
    CK_ROUND_TOWARD_ZERO = 1,  /* truncate the magnitude */
    CK_ROUND_NEAREST_AWAY = 2, /* to nearest, ties away from zero */
    CK_ROUND_STOCHASTIC = 3,   /* away from zero iff rand < floor(fraction * 2^32) */
    CK_ROUND_MODE_COUNT = 4
} ck_round_mode;

/* What happens to values beyond the largest finite value (and to infinities). */
typedef enum ck_overflow_mode {
    CK_OVERFLOW_DEFAULT = 0,     /* the type's default: saturate for fp8/fp6/fp4 (OCP
                                    "satfinite"), non-saturating (IEEE) for the others */
    CK_OVERFLOW_SATURATE = 1,    /* clamp to +-max finite; +-Inf too; NaN stays NaN */
    CK_OVERFLOW_NONSATURATE = 2, /* +-Inf where the type has it, else NaN where it has one,
                                    else +-max (fp6, fp4). Toward-zero rounding of a finite
                                    value gives +-max, as in IEEE 754. */
    CK_OVERFLOW_MODE_COUNT = 3
} ck_overflow_mode;

/* Everything known about a type. Integer types: exponent/mantissa fields are 0,
 * min_normal = min_subnormal = epsilon = 1. */
typedef struct ck_dtype_info {
    ck_dtype dtype;
    const char *name;        /* short name accepted on the command line, e.g. "fp8e4m3" */
    const char *aliases;     /* other accepted names, space separated (may be "") */
    const char *description; /* one line */
    int bits;                /* bits of information per element (tf32: 19) */
    int storage_bits;        /* bits per element in arrays (tf32: 32; fp6: 6; fp4: 4) */
    int pack_elements;       /* elements per pack: fp4 2, fp6 4, others 1 */
    int pack_bytes;          /* bytes per pack: fp4 1, fp6 3, others storage_bits / 8 */
    int is_signed;           /* can represent negative values */
    int is_float;            /* floating point (not an integer type) */
    int is_compute_only;     /* tf32: a tensor-core compute mode stored as fp32 */
    int is_fnuz;             /* AMD FNUZ encoding: NaN is only 0x80, no -0 */
    int exponent_bits, mantissa_bits, bias;
    int has_inf, has_nan, has_negative_zero;
    double max_finite;    /* largest finite value */
    double lowest;        /* most negative finite value */
    double min_normal;    /* smallest positive normal value */
    double min_subnormal; /* smallest positive value */
    double epsilon;       /* distance from 1 to the next larger value */
    uint64_t max_code;    /* code of max_finite */
    uint64_t nan_code;    /* canonical (positive) NaN code; for types without NaN the code
                             NaN converts to (fp6/fp4: +max; integers: 0) */
    ck_overflow_mode default_overflow; /* what CK_OVERFLOW_DEFAULT means for this type */
} ck_dtype_info;

/* Descriptor of `dtype`; NULL when dtype is not a ck_dtype value. Static storage. */
const ck_dtype_info *ck_dtype_get(ck_dtype dtype);

/* Bytes of one element of `dtype` in arrays where that is a whole number (tf32: 4); 0 for the
 * sub-byte types fp6 / fp4 and for values outside the enum. */
int ck_dtype_whole_bytes(ck_dtype dtype);

/* Short name of `dtype` ("f16", "fp8e4m3", ...); "invalid" for values outside the enum. */
const char *ck_dtype_name(ck_dtype dtype);

/* Look a type up by short name or alias, ignoring case ("f16", "half", "fp8e4m3", "e4m3",
 * "int8", ...). Unknown names: CK_ERROR_NOT_FOUND with a sentence listing the accepted
 * names; null arguments: CK_ERROR_INVALID_ARGUMENT. */
ck_status ck_dtype_from_name(const char *name, ck_dtype *dtype);

/* Names of rounding and overflow modes: "rne", "rtz", "rna", "sr"; "default", "sat",
 * "nonsat". */
const char *ck_round_mode_name(ck_round_mode mode);
const char *ck_overflow_mode_name(ck_overflow_mode mode);

/* Parse those names (also "nearest-even", "toward-zero", "nearest-away", "stochastic",
 * "saturate", "nonsaturate"). Unknown: CK_ERROR_NOT_FOUND listing the accepted names. */
ck_status ck_round_mode_from_name(const char *name, ck_round_mode *mode);
ck_status ck_overflow_mode_from_name(const char *name, ck_overflow_mode *mode);

/* Round the fp32 value x to `dtype` and write its code to *code. `rand` is the random word
 * of CK_ROUND_STOCHASTIC (ignored otherwise). Integer types saturate whatever the overflow
 * mode and take NaN to 0. fp32 -> fp32 is the identity. Invalid dtype/mode or null code:
 * CK_ERROR_INVALID_ARGUMENT. */
ck_status ck_convert_from_f32(ck_dtype dtype, float x, ck_round_mode round,
                              ck_overflow_mode overflow, uint32_t rand, uint64_t *code);

/* The same from an fp64 value, rounded once (no intermediate fp32). */
ck_status ck_convert_from_f64(ck_dtype dtype, double x, ck_round_mode round,
                              ck_overflow_mode overflow, uint32_t rand, uint64_t *code);

/* The value of a code as fp32: exact for every type except fp64 and int32 (rounded to
 * nearest even; fp64 beyond fp32's range gives +-Inf). Codes with bits above the type's
 * width: CK_ERROR_INVALID_ARGUMENT (tf32: the container's low 13 bits are ignored, as
 * tensor cores do). */
ck_status ck_convert_to_f32(ck_dtype dtype, uint64_t code, float *value);

/* The value of a code as fp64 (exact for every type). Errors as ck_convert_to_f32. */
ck_status ck_convert_to_f64(ck_dtype dtype, uint64_t code, double *value);

/* Options of array conversions. */
typedef struct ck_convert_options {
    ck_round_mode round;       /* default CK_ROUND_NEAREST_EVEN */
    ck_overflow_mode overflow; /* default CK_OVERFLOW_DEFAULT */
    float scale;               /* each value is multiplied by scale before rounding
                                  (quantization: 1/s; dequantization: s); default 1;
                                  must be finite and nonzero */
    uint64_t seed;             /* stochastic rounding: element i uses the random word
                                  ck_nc_rand_word(seed, i) of src/core/numeric_conv.h */
} ck_convert_options;

/* Defaults: nearest even, the type's overflow default, scale 1, seed 0 - set in place, the
 * idiom of every options struct (ck_softmax_options_init, ck_reduce_options_init, ...); NULL is
 * ignored. ck_convert_options_default returns the same value (kept for existing callers). */
void ck_convert_options_init(ck_convert_options *options);
ck_convert_options ck_convert_options_default(void);

/* Bytes that n elements of `dtype` occupy. For fp4 n must be even and for fp6 a multiple
 * of 4 (CK_ERROR_INVALID_ARGUMENT otherwise, also for overflow of size_t). */
ck_status ck_dtype_storage_size(ck_dtype dtype, size_t n, size_t *bytes);

/* Convert n elements: dst[i] = round(src[i] * scale) in dst_type, both in their storage
 * layout (see the top of this file). The product is exact and rounded once, except for
 * fp64 sources scaled into an fp64 destination under stochastic rounding (62 bits kept).
 * With scale 1 and equal types the data is copied unchanged. The buffers must not overlap
 * unless dst == src with equal storage sizes of non-packed types (in place). n = 0 does
 * nothing (pointers may then be NULL). opt may be NULL (defaults). Errors
 * (CK_ERROR_INVALID_ARGUMENT): invalid types or options, null buffers, counts not allowed
 * by packing, overlap. */
ck_status ck_convert_array(ck_dtype dst_type, void *dst, ck_dtype src_type, const void *src,
                           size_t n, const ck_convert_options *opt);

/* Pack n codes of a sub-byte type (fp4e2m1, fp6e2m3, fp6e3m2), one per byte in `codes`,
 * into `packed` (ck_dtype_storage_size bytes). Errors (CK_ERROR_INVALID_ARGUMENT): other
 * types, n not a multiple of the pack, a code wider than the type (naming its index),
 * null or overlapping buffers. */
ck_status ck_pack(ck_dtype dtype, const uint8_t *codes, size_t n, void *packed);

/* The inverse of ck_pack: n codes, one per byte, from packed storage. */
ck_status ck_unpack(ck_dtype dtype, const void *packed, size_t n, uint8_t *codes);

#ifdef __cplusplus
}
#endif
#endif /* CK_TYPES_H */
