/* Numeric types: the descriptor table, names, and scalar conversions (numeric_conv.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ck/types.h"
#include "core/error.h"
#include "core/numeric_conv.h"
#include "core/numeric_internal.h"

/* The device header's type codes are the public enum values. */
_Static_assert(CK_NC_F32 == CK_DTYPE_F32 && CK_NC_F64 == CK_DTYPE_F64 &&
                   CK_NC_F16 == CK_DTYPE_F16 && CK_NC_BF16 == CK_DTYPE_BF16 &&
                   CK_NC_TF32 == CK_DTYPE_TF32 && CK_NC_FP8_E4M3 == CK_DTYPE_FP8_E4M3 &&
                   CK_NC_FP8_E5M2 == CK_DTYPE_FP8_E5M2 &&
                   CK_NC_FP8_E4M3_FNUZ == CK_DTYPE_FP8_E4M3_FNUZ &&
                   CK_NC_FP8_E5M2_FNUZ == CK_DTYPE_FP8_E5M2_FNUZ &&
                   CK_NC_FP6_E2M3 == CK_DTYPE_FP6_E2M3 && CK_NC_FP6_E3M2 == CK_DTYPE_FP6_E3M2 &&
                   CK_NC_FP4_E2M1 == CK_DTYPE_FP4_E2M1 && CK_NC_I8 == CK_DTYPE_I8 &&
                   CK_NC_U8 == CK_DTYPE_U8 && CK_NC_I32 == CK_DTYPE_I32 &&
                   CK_NC_TYPE_COUNT == CK_DTYPE_COUNT,
               "numeric_conv.h type codes must equal the ck_dtype values");
_Static_assert(CK_NC_ROUND_NEAREST_EVEN == CK_ROUND_NEAREST_EVEN &&
                   CK_NC_ROUND_TOWARD_ZERO == CK_ROUND_TOWARD_ZERO &&
                   CK_NC_ROUND_NEAREST_AWAY == CK_ROUND_NEAREST_AWAY &&
                   CK_NC_ROUND_STOCHASTIC == CK_ROUND_STOCHASTIC,
               "numeric_conv.h rounding codes must equal the ck_round_mode values");

#define SAT    CK_OVERFLOW_SATURATE
#define NONSAT CK_OVERFLOW_NONSATURATE

/* clang-format off */
static const ck_dtype_info k_types[CK_DTYPE_COUNT] = {
    {CK_DTYPE_F32, "f32", "float32 float fp32", "IEEE 754 binary32",
     32, 32, 1, 4, 1, 1, 0, 0, 8, 23, 127, 1, 1, 1,
     0x1.fffffep127, -0x1.fffffep127, 0x1p-126, 0x1p-149, 0x1p-23,
     0x7F7FFFFFu, 0x7FC00000u, NONSAT},
    {CK_DTYPE_F64, "f64", "float64 double fp64", "IEEE 754 binary64",
     64, 64, 1, 8, 1, 1, 0, 0, 11, 52, 1023, 1, 1, 1,
     0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023, 0x1p-1022, 0x1p-1074, 0x1p-52,
     0x7FEFFFFFFFFFFFFFull, 0x7FF8000000000000ull, NONSAT},
    {CK_DTYPE_F16, "f16", "float16 half fp16", "IEEE 754 binary16",
     16, 16, 1, 2, 1, 1, 0, 0, 5, 10, 15, 1, 1, 1,
     65504.0, -65504.0, 0x1p-14, 0x1p-24, 0x1p-10, 0x7BFFu, 0x7E00u, NONSAT},
    {CK_DTYPE_BF16, "bf16", "bfloat16", "bfloat16 (fp32 exponent, 7 mantissa bits)",
     16, 16, 1, 2, 1, 1, 0, 0, 8, 7, 127, 1, 1, 1,
     0x1.fep127, -0x1.fep127, 0x1p-126, 0x1p-133, 0x1p-7, 0x7F7Fu, 0x7FC0u, NONSAT},
    {CK_DTYPE_TF32, "tf32", "tensorfloat32",
     "TensorFloat-32 compute mode: 1.8.10 in an fp32 container, low 13 bits zero",
     19, 32, 1, 4, 1, 1, 1, 0, 8, 10, 127, 1, 1, 1,
     0x1.ffcp127, -0x1.ffcp127, 0x1p-126, 0x1p-136, 0x1p-10, 0x7F7FE000u, 0x7FC00000u,
     NONSAT},
    {CK_DTYPE_FP8_E4M3, "fp8e4m3", "e4m3 f8 f8e4m3 float8_e4m3fn",
     "OCP FP8 E4M3: no Inf, NaN = S.1111.111",
     8, 8, 1, 1, 1, 1, 0, 0, 4, 3, 7, 0, 1, 1,
     448.0, -448.0, 0x1p-6, 0x1p-9, 0x1p-3, 0x7Eu, 0x7Fu, SAT},
    {CK_DTYPE_FP8_E5M2, "fp8e5m2", "e5m2 bf8 f8e5m2 float8_e5m2",
     "OCP FP8 E5M2: IEEE-like Inf and NaN",
     8, 8, 1, 1, 1, 1, 0, 0, 5, 2, 15, 1, 1, 1,
     57344.0, -57344.0, 0x1p-14, 0x1p-16, 0x1p-2, 0x7Bu, 0x7Eu, SAT},
    {CK_DTYPE_FP8_E4M3_FNUZ, "fp8e4m3fnuz", "e4m3fnuz f8fnuz float8_e4m3fnuz",
     "FNUZ FP8 E4M3 (AMD MI300): bias 8, NaN only 0x80, no Inf, no -0",
     8, 8, 1, 1, 1, 1, 0, 1, 4, 3, 8, 0, 1, 0,
     240.0, -240.0, 0x1p-7, 0x1p-10, 0x1p-3, 0x7Fu, 0x80u, SAT},
    {CK_DTYPE_FP8_E5M2_FNUZ, "fp8e5m2fnuz", "e5m2fnuz bf8fnuz float8_e5m2fnuz",
     "FNUZ FP8 E5M2 (AMD MI300): bias 16, NaN only 0x80, no Inf, no -0",
     8, 8, 1, 1, 1, 1, 0, 1, 5, 2, 16, 0, 1, 0,
     57344.0, -57344.0, 0x1p-15, 0x1p-17, 0x1p-2, 0x7Fu, 0x80u, SAT},
    {CK_DTYPE_FP6_E2M3, "fp6e2m3", "e2m3 f6 float6_e2m3fn",
     "OCP MX FP6 E2M3: no Inf, no NaN",
     6, 6, 4, 3, 1, 1, 0, 0, 2, 3, 1, 0, 0, 1,
     7.5, -7.5, 1.0, 0.125, 0.125, 0x1Fu, 0x1Fu, SAT},
    {CK_DTYPE_FP6_E3M2, "fp6e3m2", "e3m2 bf6 float6_e3m2fn",
     "OCP MX FP6 E3M2: no Inf, no NaN",
     6, 6, 4, 3, 1, 1, 0, 0, 3, 2, 3, 0, 0, 1,
     28.0, -28.0, 0.25, 0.0625, 0.25, 0x1Fu, 0x1Fu, SAT},
    {CK_DTYPE_FP4_E2M1, "fp4e2m1", "e2m1 f4 float4_e2m1fn",
     "OCP MX FP4 E2M1: no Inf, no NaN",
     4, 4, 2, 1, 1, 1, 0, 0, 2, 1, 1, 0, 0, 1,
     6.0, -6.0, 1.0, 0.5, 0.5, 0x7u, 0x7u, SAT},
    {CK_DTYPE_I8, "i8", "int8 s8", "signed 8-bit integer (two's complement)",
     8, 8, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
     127.0, -128.0, 1.0, 1.0, 1.0, 0x7Fu, 0x0u, SAT},
    {CK_DTYPE_U8, "u8", "uint8", "unsigned 8-bit integer",
     8, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
     255.0, 0.0, 1.0, 1.0, 1.0, 0xFFu, 0x0u, SAT},
    {CK_DTYPE_I32, "i32", "int32 s32", "signed 32-bit integer (two's complement)",
     32, 32, 1, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
     2147483647.0, -2147483648.0, 1.0, 1.0, 1.0, 0x7FFFFFFFu, 0x0u, SAT},
};
/* clang-format on */

const ck_dtype_info *ck_dtype_get(ck_dtype dtype)
{
    if ((int)dtype < 0 || (int)dtype >= CK_DTYPE_COUNT)
        return NULL;
    return &k_types[dtype];
}

int ck_dtype_whole_bytes(ck_dtype dtype)
{
    const ck_dtype_info *t = ck_dtype_get(dtype);
    return t && t->storage_bits % 8 == 0 ? t->storage_bits / 8 : 0;
}

const char *ck_dtype_name(ck_dtype dtype)
{
    const ck_dtype_info *t = ck_dtype_get(dtype);
    return t ? t->name : "invalid";
}

static int name_equal(const char *a, const char *b, size_t blen)
{
    size_t i = 0;
    for (; i < blen && a[i]; ++i)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return 0;
    return i == blen && a[i] == '\0';
}

/* Does `name` equal one of the space-separated words of `list`? */
static int in_word_list(const char *name, const char *list)
{
    const char *p = list;
    while (*p) {
        while (*p == ' ')
            ++p;
        const char *w = p;
        while (*p && *p != ' ')
            ++p;
        if (p > w && name_equal(name, w, (size_t)(p - w)))
            return 1;
    }
    return 0;
}

ck_status ck_dtype_from_name(const char *name, ck_dtype *dtype)
{
    CK_REQUIRE_NOT_NULL(name, "ck_dtype_from_name");
    CK_REQUIRE_NOT_NULL(dtype, "ck_dtype_from_name");
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        if (in_word_list(name, k_types[i].name) || in_word_list(name, k_types[i].aliases)) {
            *dtype = (ck_dtype)i;
            return CK_SUCCESS;
        }
    }
    char list[512] = "";
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", k_types[i].name);
    }
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_dtype_from_name: unknown data type '%.64s'; accepted: %s (and aliases "
                   "such as half, bfloat16, e4m3, int8; see 'ck types').",
                   name, list);
}

static const char *const k_round_names[CK_ROUND_MODE_COUNT][2] = {
    {"rne", "nearest-even"},
    {"rtz", "toward-zero"},
    {"rna", "nearest-away"},
    {"sr", "stochastic"},
};
static const char *const k_overflow_names[CK_OVERFLOW_MODE_COUNT][2] = {
    {"default", "default"},
    {"sat", "saturate"},
    {"nonsat", "nonsaturate"},
};

const char *ck_round_mode_name(ck_round_mode mode)
{
    return ((int)mode >= 0 && mode < CK_ROUND_MODE_COUNT) ? k_round_names[mode][0] : "invalid";
}

const char *ck_overflow_mode_name(ck_overflow_mode mode)
{
    return ((int)mode >= 0 && mode < CK_OVERFLOW_MODE_COUNT) ? k_overflow_names[mode][0]
                                                             : "invalid";
}

ck_status ck_round_mode_from_name(const char *name, ck_round_mode *mode)
{
    CK_REQUIRE_NOT_NULL(name, "ck_round_mode_from_name");
    CK_REQUIRE_NOT_NULL(mode, "ck_round_mode_from_name");
    for (int i = 0; i < CK_ROUND_MODE_COUNT; ++i)
        if (in_word_list(name, k_round_names[i][0]) || in_word_list(name, k_round_names[i][1])) {
            *mode = (ck_round_mode)i;
            return CK_SUCCESS;
        }
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_round_mode_from_name: unknown rounding mode '%.64s'; accepted: rne "
                   "(nearest-even), rtz (toward-zero), rna (nearest-away), sr (stochastic).",
                   name);
}

ck_status ck_overflow_mode_from_name(const char *name, ck_overflow_mode *mode)
{
    CK_REQUIRE_NOT_NULL(name, "ck_overflow_mode_from_name");
    CK_REQUIRE_NOT_NULL(mode, "ck_overflow_mode_from_name");
    for (int i = 0; i < CK_OVERFLOW_MODE_COUNT; ++i)
        if (in_word_list(name, k_overflow_names[i][0]) ||
            in_word_list(name, k_overflow_names[i][1])) {
            *mode = (ck_overflow_mode)i;
            return CK_SUCCESS;
        }
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_overflow_mode_from_name: unknown overflow mode '%.64s'; accepted: "
                   "default, sat (saturate), nonsat (nonsaturate).",
                   name);
}

ck_status ck_numeric_check_modes(const char *func, ck_dtype dtype, ck_round_mode round,
                                 ck_overflow_mode overflow, int *nc_overflow)
{
    const ck_dtype_info *t = ck_dtype_get(dtype);
    if (!t)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: data type %d is not a ck_dtype; accepted: 0 to %d (see 'ck types').",
                       func, (int)dtype, CK_DTYPE_COUNT - 1);
    if ((int)round < 0 || round >= CK_ROUND_MODE_COUNT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: rounding mode %d is not a ck_round_mode; accepted: "
                       "CK_ROUND_NEAREST_EVEN, _TOWARD_ZERO, _NEAREST_AWAY, _STOCHASTIC.",
                       func, (int)round);
    if ((int)overflow < 0 || overflow >= CK_OVERFLOW_MODE_COUNT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: overflow mode %d is not a ck_overflow_mode; accepted: "
                       "CK_OVERFLOW_DEFAULT, CK_OVERFLOW_SATURATE, CK_OVERFLOW_NONSATURATE.",
                       func, (int)overflow);
    if (overflow == CK_OVERFLOW_DEFAULT)
        overflow = t->default_overflow;
    if (nc_overflow)
        *nc_overflow = overflow == CK_OVERFLOW_SATURATE ? CK_NC_SATURATE : CK_NC_NONSAT;
    return CK_SUCCESS;
}

ck_status ck_convert_from_f32(ck_dtype dtype, float x, ck_round_mode round,
                              ck_overflow_mode overflow, uint32_t rand, uint64_t *code)
{
    int ovf;
    ck_status st = ck_numeric_check_modes("ck_convert_from_f32", dtype, round, overflow, &ovf);
    if (st != CK_SUCCESS)
        return st;
    CK_REQUIRE_NOT_NULL(code, "ck_convert_from_f32");
    *code = ck_nc_from_f32((int32_t)dtype, x, (int32_t)round, ovf, rand);
    return CK_SUCCESS;
}

ck_status ck_convert_from_f64(ck_dtype dtype, double x, ck_round_mode round,
                              ck_overflow_mode overflow, uint32_t rand, uint64_t *code)
{
    int ovf;
    ck_status st = ck_numeric_check_modes("ck_convert_from_f64", dtype, round, overflow, &ovf);
    if (st != CK_SUCCESS)
        return st;
    CK_REQUIRE_NOT_NULL(code, "ck_convert_from_f64");
    *code = ck_nc_from_f64((int32_t)dtype, x, (int32_t)round, ovf, rand);
    return CK_SUCCESS;
}

ck_status ck_numeric_check_code(const char *func, ck_dtype dtype, uint64_t code)
{
    const ck_dtype_info *t = ck_dtype_get(dtype);
    if (!t)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: data type %d is not a ck_dtype; accepted: 0 to %d (see 'ck types').",
                       func, (int)dtype, CK_DTYPE_COUNT - 1);
    if (t->storage_bits < 64 && (code >> t->storage_bits) != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: code 0x%llx does not fit %s, whose codes have %d bits (at most "
                       "0x%llx).",
                       func, (unsigned long long)code, t->name, t->storage_bits,
                       (unsigned long long)((1ull << t->storage_bits) - 1u));
    return CK_SUCCESS;
}

ck_status ck_convert_to_f32(ck_dtype dtype, uint64_t code, float *value)
{
    ck_status st = ck_numeric_check_code("ck_convert_to_f32", dtype, code);
    if (st != CK_SUCCESS)
        return st;
    CK_REQUIRE_NOT_NULL(value, "ck_convert_to_f32");
    *value = ck_nc_to_f32((int32_t)dtype, code);
    return CK_SUCCESS;
}

ck_status ck_convert_to_f64(ck_dtype dtype, uint64_t code, double *value)
{
    ck_status st = ck_numeric_check_code("ck_convert_to_f64", dtype, code);
    if (st != CK_SUCCESS)
        return st;
    CK_REQUIRE_NOT_NULL(value, "ck_convert_to_f64");
    *value = ck_nc_to_f64((int32_t)dtype, code);
    return CK_SUCCESS;
}
