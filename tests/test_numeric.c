/* Numeric types: descriptor table, names, exhaustive decode/encode over every code of the
 * 4/6/8/16-bit types (and tf32), special values of each format, bad input. */
#include <float.h>

#include "ck/types.h"
#include "numeric_ref.h"
#include "test.h"

static const ck_dtype all_types[] = {CK_DTYPE_F32,
                                     CK_DTYPE_F64,
                                     CK_DTYPE_F16,
                                     CK_DTYPE_BF16,
                                     CK_DTYPE_TF32,
                                     CK_DTYPE_FP8_E4M3,
                                     CK_DTYPE_FP8_E5M2,
                                     CK_DTYPE_FP8_E4M3_FNUZ,
                                     CK_DTYPE_FP8_E5M2_FNUZ,
                                     CK_DTYPE_FP6_E2M3,
                                     CK_DTYPE_FP6_E3M2,
                                     CK_DTYPE_FP4_E2M1,
                                     CK_DTYPE_I8,
                                     CK_DTYPE_U8,
                                     CK_DTYPE_I32};

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static uint64_t enc(ck_dtype t, float x, ck_round_mode r, ck_overflow_mode o)
{
    uint64_t c = 0xDEADBEEFull;
    CHECK_OK(ck_convert_from_f32(t, x, r, o, 0, &c));
    return c;
}

static double dec(ck_dtype t, uint64_t c)
{
    double v = -12345.0;
    CHECK_OK(ck_convert_to_f64(t, c, &v));
    return v;
}

static void test_table_names_and_lookup(void)
{
    CHECK_EQ_INT(sizeof all_types / sizeof all_types[0], CK_DTYPE_COUNT);
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i)
        CHECK(ck_dtype_get(all_types[i]) && ck_dtype_get(all_types[i])->dtype == all_types[i]);
    const char *cli_names[] = {"f16",     "bf16",    "fp8e4m3", "fp8e5m2",     "fp6e2m3",
                               "fp6e3m2", "fp4e2m1", "i8",      "u8",          "i32",
                               "f32",     "f64",     "tf32",    "fp8e4m3fnuz", "fp8e5m2fnuz"};
    for (size_t i = 0; i < sizeof cli_names / sizeof cli_names[0]; ++i) {
        ck_dtype d = CK_DTYPE_COUNT;
        CHECK_OK(ck_dtype_from_name(cli_names[i], &d));
        CHECK_EQ_STR(ck_dtype_name(d), cli_names[i]);
    }
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        const ck_dtype_info *t = ck_dtype_get((ck_dtype)i);
        CHECK(t != NULL && (int)t->dtype == i);
        ck_dtype d;
        CHECK_OK(ck_dtype_from_name(t->name, &d));
        CHECK_EQ_INT(d, i);
    }
    struct {
        const char *alias;
        ck_dtype d;
    } aliases[] = {{"HALF", CK_DTYPE_F16},      {"bfloat16", CK_DTYPE_BF16},
                   {"E4M3", CK_DTYPE_FP8_E4M3}, {"bf8", CK_DTYPE_FP8_E5M2},
                   {"int8", CK_DTYPE_I8},       {"uint8", CK_DTYPE_U8},
                   {"float", CK_DTYPE_F32},     {"double", CK_DTYPE_F64},
                   {"e2m1", CK_DTYPE_FP4_E2M1}, {"e4m3fnuz", CK_DTYPE_FP8_E4M3_FNUZ},
                   {"int32", CK_DTYPE_I32}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; ++i) {
        ck_dtype d = CK_DTYPE_COUNT;
        CHECK_OK(ck_dtype_from_name(aliases[i].alias, &d));
        CHECK_EQ_INT(d, aliases[i].d);
    }
    ck_dtype d;
    CHECK_STATUS(ck_dtype_from_name("fp8", &d), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_dtype_from_name("f1", &d), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_dtype_from_name("f166", &d), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_dtype_from_name("", &d), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_dtype_from_name("nope", &d), CK_ERROR_NOT_FOUND);
    CHECK(strstr(ck_last_error(), "'nope'") && strstr(ck_last_error(), "fp8e4m3"));
    CHECK_STATUS(ck_dtype_from_name(NULL, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dtype_from_name("f16", NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(ck_dtype_get(CK_DTYPE_COUNT) == NULL);
    CHECK(ck_dtype_get((ck_dtype)-1) == NULL);
    CHECK_EQ_STR(ck_dtype_name((ck_dtype)99), "invalid");

    ck_round_mode r;
    ck_overflow_mode o;
    CHECK_OK(ck_round_mode_from_name("sr", &r));
    CHECK_EQ_INT(r, CK_ROUND_STOCHASTIC);
    CHECK_OK(ck_round_mode_from_name("toward-zero", &r));
    CHECK_EQ_INT(r, CK_ROUND_TOWARD_ZERO);
    CHECK_OK(ck_overflow_mode_from_name("nonsat", &o));
    CHECK_EQ_INT(o, CK_OVERFLOW_NONSATURATE);
    CHECK_STATUS(ck_round_mode_from_name("up", &r), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_overflow_mode_from_name("wrap", &o), CK_ERROR_NOT_FOUND);
    for (int i = 0; i < CK_ROUND_MODE_COUNT; ++i) {
        CHECK_OK(ck_round_mode_from_name(ck_round_mode_name((ck_round_mode)i), &r));
        CHECK_EQ_INT(r, i);
    }
}

/* The table's numbers against values decoded from codes, and against literals. */
static void test_table_values_match_decoding(void)
{
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        const ck_dtype_info *t = ck_dtype_get((ck_dtype)i);
        CHECK_MSG(dec(t->dtype, t->max_code) == t->max_finite, "%s max", t->name);
        if (!t->is_float) {
            CHECK(t->lowest == -t->max_finite - 1 || (t->lowest == 0 && !t->is_signed));
            continue;
        }
        int sh = t->dtype == CK_DTYPE_TF32 ? 13 : 0;
        CHECK(t->lowest == -t->max_finite);
        CHECK_MSG(dec(t->dtype, 1ull << sh) == t->min_subnormal, "%s min subnormal", t->name);
        CHECK_MSG(dec(t->dtype, (1ull << t->mantissa_bits) << sh) == t->min_normal, "%s min normal",
                  t->name);
        uint64_t one = (uint64_t)t->bias << t->mantissa_bits << sh;
        CHECK_MSG(dec(t->dtype, one) == 1.0, "%s one", t->name);
        CHECK_MSG(dec(t->dtype, one + (1ull << sh)) - 1.0 == t->epsilon, "%s epsilon", t->name);
        CHECK_EQ_INT(t->exponent_bits + t->mantissa_bits + 1, t->bits);
        if (t->has_nan)
            CHECK_MSG(isnan(dec(t->dtype, t->nan_code)), "%s nan code", t->name);
        if (t->has_inf)
            CHECK(isinf(dec(t->dtype, ((1ull << t->exponent_bits) - 1) << t->mantissa_bits << sh)));
    }
    /* Literal anchors from the specifications. */
    static const double fp4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (int c = 0; c < 16; ++c)
        CHECK(dec(CK_DTYPE_FP4_E2M1, (uint64_t)c) == (c & 8 ? -fp4[c & 7] : fp4[c]));
    CHECK(dec(CK_DTYPE_FP6_E2M3, 0x1F) == 7.5 && dec(CK_DTYPE_FP6_E2M3, 0x01) == 0.125);
    CHECK(dec(CK_DTYPE_FP6_E3M2, 0x1F) == 28 && dec(CK_DTYPE_FP6_E3M2, 0x01) == 0.0625);
    CHECK(dec(CK_DTYPE_FP6_E3M2, 0x3F) == -28);
    CHECK(dec(CK_DTYPE_FP8_E4M3, 0x7E) == 448 && dec(CK_DTYPE_FP8_E4M3, 0x01) == 1.0 / 512);
    CHECK(isnan(dec(CK_DTYPE_FP8_E4M3, 0x7F)) && isnan(dec(CK_DTYPE_FP8_E4M3, 0xFF)));
    CHECK(dec(CK_DTYPE_FP8_E4M3, 0x78) == 256 && dec(CK_DTYPE_FP8_E4M3, 0x38) == 1);
    CHECK(dec(CK_DTYPE_FP8_E5M2, 0x7B) == 57344 && isinf(dec(CK_DTYPE_FP8_E5M2, 0x7C)));
    CHECK(isnan(dec(CK_DTYPE_FP8_E5M2, 0x7D)) && dec(CK_DTYPE_FP8_E5M2, 0xFC) == -INFINITY);
    CHECK(dec(CK_DTYPE_FP8_E4M3_FNUZ, 0x7F) == 240 && isnan(dec(CK_DTYPE_FP8_E4M3_FNUZ, 0x80)));
    CHECK(dec(CK_DTYPE_FP8_E4M3_FNUZ, 0x40) == 1 && dec(CK_DTYPE_FP8_E4M3_FNUZ, 0xFF) == -240);
    CHECK(dec(CK_DTYPE_FP8_E5M2_FNUZ, 0x7F) == 57344 && dec(CK_DTYPE_FP8_E5M2_FNUZ, 0x40) == 1);
    CHECK(dec(CK_DTYPE_FP8_E5M2_FNUZ, 0x01) == ldexp(1, -17));
    CHECK(dec(CK_DTYPE_F16, 0x3C00) == 1 && dec(CK_DTYPE_F16, 0x7BFF) == 65504);
    CHECK(dec(CK_DTYPE_F16, 0x0001) == ldexp(1, -24) && dec(CK_DTYPE_F16, 0xC000) == -2);
    CHECK(dec(CK_DTYPE_BF16, 0x3F80) == 1 && dec(CK_DTYPE_BF16, 0x4049) == 3.140625);
    CHECK(dec(CK_DTYPE_TF32, 0x3F802000u) == 1 + ldexp(1, -10));
    CHECK(dec(CK_DTYPE_I8, 0x80) == -128 && dec(CK_DTYPE_U8, 0x80) == 128);
    CHECK(dec(CK_DTYPE_I32, 0x80000000u) == -2147483648.0);
}

/* Every code of the small types: the value decoded by ck equals the reference formula,
 * and decode -> encode gives the code back (NaN: the canonical NaN of the same sign). */
static void test_exhaustive_decode_encode(void)
{
    for (int k = 0; k < REF_TYPE_COUNT; ++k) {
        ref_type *rt = &ref_types[k];
        ref_init(rt);
        CHECK_MSG(ref_ascending(rt), "%s values ascend", ck_dtype_name(rt->dtype));
        const ck_dtype_info *t = ck_dtype_get(rt->dtype);
        uint64_t ncodes = 1ull << (t->exponent_bits + t->mantissa_bits + 1);
        long fails = 0;
        int nfinite = 0;
        for (uint64_t c19 = 0; c19 < ncodes; ++c19) {
            uint64_t c = c19 << rt->code_shift;
            int neg = (c & rt->sign_bit) != 0;
            uint64_t mag = c & ~rt->sign_bit;
            double v = dec(rt->dtype, c);
            float f = -1.0f;
            CHECK_OK(ck_convert_to_f32(rt->dtype, c, &f));
            /* expected value, from the reference enumeration */
            int idx = -1;
            for (int lo = 0, hi = rt->n - 1; lo <= hi;) {
                int mid = (lo + hi) / 2;
                if (rt->code[mid] == mag) {
                    idx = mid;
                    break;
                }
                if (rt->code[mid] < mag)
                    lo = mid + 1;
                else
                    hi = mid - 1;
            }
            int is_nan =
                rt->fnuz ? c == 0x80
                         : (idx < 0 &&
                            !(rt->has_inf && (mag >> rt->code_shift) ==
                                                 ((((uint64_t)1 << rt->ebits) - 1) << rt->mbits)));
            int is_inf = !rt->fnuz && idx < 0 && !is_nan;
            int ok;
            if (is_nan)
                ok = isnan(v) && isnan(f) && (rt->fnuz || (signbit(v) != 0) == neg);
            else if (is_inf)
                ok = isinf(v) && isinf(f) && (v < 0) == neg && (double)f == v;
            else {
                long double e = neg ? -rt->val[idx] : rt->val[idx];
                ok = (long double)v == e && (long double)f == e && (signbit(v) != 0) == neg;
                ++nfinite;
            }
            uint64_t want = is_nan ? ref_nan_code(rt, neg) : c;
            for (int r = 0; r < CK_ROUND_MODE_COUNT; ++r)
                for (int o = 0; o < CK_OVERFLOW_MODE_COUNT; ++o) {
                    uint64_t back = 0, back64 = 0;
                    ck_status s1 = ck_convert_from_f32(rt->dtype, f, (ck_round_mode)r,
                                                       (ck_overflow_mode)o, 0x12345678u, &back);
                    ck_status s2 = ck_convert_from_f64(rt->dtype, v, (ck_round_mode)r,
                                                       (ck_overflow_mode)o, 0x9ABCDEF0u, &back64);
                    /* Inf with saturation becomes max: not a round trip. */
                    int sat =
                        o == CK_OVERFLOW_SATURATE ||
                        (o == CK_OVERFLOW_DEFAULT && t->default_overflow == CK_OVERFLOW_SATURATE);
                    uint64_t w =
                        is_inf && sat ? ((neg ? rt->sign_bit : 0) | ref_max_code(rt)) : want;
                    ok = ok && s1 == CK_SUCCESS && s2 == CK_SUCCESS && back == w && back64 == w;
                }
            if (!ok && fails++ < 5)
                CHECK_MSG(0, "%s code 0x%llx: decoded %.17g", t->name, (unsigned long long)c, v);
        }
        CHECK_MSG(fails == 0, "%s: %ld codes failed", t->name, fails);
        CHECK_EQ_INT(nfinite, 2 * rt->n - (rt->fnuz ? 1 : 0));
    }
    /* Integers: every i8/u8 code, and i32 extremes and random codes. */
    for (int c = 0; c < 256; ++c) {
        CHECK_EQ_INT(enc(CK_DTYPE_I8, (float)dec(CK_DTYPE_I8, (uint64_t)c), 0, 0), c);
        CHECK_EQ_INT(dec(CK_DTYPE_I8, (uint64_t)c), (int8_t)c);
        CHECK_EQ_INT(enc(CK_DTYPE_U8, (float)dec(CK_DTYPE_U8, (uint64_t)c), 0, 0), c);
        CHECK_EQ_INT(dec(CK_DTYPE_U8, (uint64_t)c), c);
    }
    uint64_t seed = 0x1234ABCDull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    for (int i = 0; i < 100000; ++i) {
        uint32_t c = (uint32_t)ckt_rand64(&st);
        double v = dec(CK_DTYPE_I32, c);
        CHECK_EQ_INT((long long)v, (int32_t)c);
        uint64_t back = 0;
        CHECK_OK(ck_convert_from_f64(CK_DTYPE_I32, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                     &back));
        CHECK_EQ_INT(back, c);
        float f;
        CHECK_OK(ck_convert_to_f32(CK_DTYPE_I32, c, &f));
        CHECK(f == (float)(int32_t)c); /* the C conversion rounds to nearest even */
    }
}

static void test_special_values(void)
{
    const ck_overflow_mode S = CK_OVERFLOW_SATURATE, N = CK_OVERFLOW_NONSATURATE;
    const ck_round_mode E = CK_ROUND_NEAREST_EVEN, Z = CK_ROUND_TOWARD_ZERO;
    /* OCP E4M3 */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 448, E, N), 0x7E);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 464, E, N), 0x7E); /* tie with 480: even */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 464.0001f, E, N), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 1e9f, E, S), 0x7E);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, -1e9f, E, S), 0xFE);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, INFINITY, E, N), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, -INFINITY, E, S), 0xFE);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, NAN, E, S), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, -NAN, E, S), 0xFF);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 1e9f, Z, N), 0x7E); /* toward zero never overflows */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, -0.0f, E, N), 0x80);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 0x1p-10f, E, N), 0x00); /* tie with 2^-9: even */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, 0x1.8p-10f, E, N), 0x01);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3, -0x1p-140f, E, N), 0x80);
    /* OCP E5M2 */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, 61440, E, N), 0x7C); /* tie to even 2^16: Inf */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, 61439.996f, E, N), 0x7B);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, 61440, E, S), 0x7B);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, -INFINITY, E, N), 0xFC);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, INFINITY, E, S), 0x7B);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2, NAN, E, N), 0x7E);
    /* FNUZ */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, -0.0f, E, N), 0x00);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, -1e-30f, E, N), 0x00);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, -NAN, E, N), 0x80);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, 248, E, N), 0x80); /* tie 240/256: 0x7F is odd */
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, 247.99f, E, N), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, 248, E, S), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E4M3_FNUZ, -INFINITY, E, S), 0xFF);
    CHECK_EQ_INT(enc(CK_DTYPE_FP8_E5M2_FNUZ, INFINITY, E, N), 0x80);
    /* MX fp6/fp4: no Inf or NaN, always saturate */
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, 100, E, N), 0x7);
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, -INFINITY, E, N), 0xF);
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, NAN, E, N), 0x7);
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, 5, E, N), 0x6); /* tie 4/6: even */
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, 0.25f, E, N), 0x0);
    CHECK_EQ_INT(enc(CK_DTYPE_FP4_E2M1, 0.25f, CK_ROUND_NEAREST_AWAY, N), 0x1);
    CHECK_EQ_INT(enc(CK_DTYPE_FP6_E2M3, 7.5f, E, N), 0x1F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP6_E2M3, -8, E, N), 0x3F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP6_E3M2, 30, E, N), 0x1F);
    CHECK_EQ_INT(enc(CK_DTYPE_FP6_E3M2, -0.0f, E, N), 0x20);
    /* IEEE: fp16, bf16, tf32 */
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 65520, E, N), 0x7C00);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 65519.996f, E, N), 0x7BFF);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 65520, Z, N), 0x7BFF);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 1e6f, E, S), 0x7BFF);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 0x1p-25f, E, N), 0x0000);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, 0x1.000002p-25f, E, N), 0x0001);
    CHECK_EQ_INT(enc(CK_DTYPE_F16, -NAN, E, N), 0xFE00);
    CHECK_EQ_INT(enc(CK_DTYPE_BF16, 1.00390625f, E, N), 0x3F80); /* tie: even */
    CHECK_EQ_INT(enc(CK_DTYPE_BF16, 1.01171875f, E, N), 0x3F82);
    CHECK_EQ_INT(enc(CK_DTYPE_BF16, FLT_MAX, E, N), 0x7F80);
    CHECK_EQ_INT(enc(CK_DTYPE_BF16, FLT_MAX, Z, N), 0x7F7F);
    CHECK_EQ_INT(enc(CK_DTYPE_BF16, FLT_TRUE_MIN, E, N), 0x0000);
    CHECK_EQ_INT(enc(CK_DTYPE_TF32, 1.0f + 0x1p-11f, E, N), 0x3F800000u);
    CHECK_EQ_INT(enc(CK_DTYPE_TF32, 1.0f + 0x3p-11f, E, N), 0x3F804000u);
    /* integers: saturate, NaN -> 0 */
    CHECK_EQ_INT(enc(CK_DTYPE_I8, 127.5f, E, N), 0x7F);
    CHECK_EQ_INT(enc(CK_DTYPE_I8, -128.5f, E, N), 0x80);
    CHECK_EQ_INT(enc(CK_DTYPE_I8, -2.5f, E, N), 0xFE);
    CHECK_EQ_INT(enc(CK_DTYPE_I8, -2.5f, CK_ROUND_NEAREST_AWAY, N), 0xFD);
    CHECK_EQ_INT(enc(CK_DTYPE_I8, NAN, E, N), 0);
    CHECK_EQ_INT(enc(CK_DTYPE_U8, -3, E, N), 0);
    CHECK_EQ_INT(enc(CK_DTYPE_U8, INFINITY, E, N), 0xFF);
    CHECK_EQ_INT(enc(CK_DTYPE_I32, 3e9f, E, N), 0x7FFFFFFF);
    CHECK_EQ_INT(enc(CK_DTYPE_I32, -INFINITY, E, N), 0x80000000u);
    CHECK_EQ_INT(enc(CK_DTYPE_I32, 0x1p30f, E, N), 0x40000000u);
    CHECK_EQ_INT(enc(CK_DTYPE_I32, -0x1p31f, E, N), 0x80000000u);
    /* fp32 and fp64 */
    CHECK_EQ_INT(enc(CK_DTYPE_F32, -NAN, E, S), f32_bits(-NAN));
    CHECK(dec(CK_DTYPE_F64, enc(CK_DTYPE_F64, 0x1.234566p-100f, E, N)) == 0x1.234566p-100);
    float f;
    CHECK_OK(ck_convert_to_f32(CK_DTYPE_F64, 0x3FF0000010000000ull, &f)); /* 1+2^-24 tie */
    CHECK(f == 1.0f);
    CHECK_OK(ck_convert_to_f32(CK_DTYPE_F64, 0x3FF0000030000000ull, &f)); /* 1+3*2^-24 */
    CHECK(f == 1.0f + 0x1p-22f);
    CHECK_OK(ck_convert_to_f32(CK_DTYPE_F64, 0x47EFFFFFF0000000ull, &f)); /* FLT_MAX+half ulp */
    CHECK(isinf(f));
    uint64_t c;
    CHECK_OK(ck_convert_from_f64(CK_DTYPE_F32, 0x1.fffffefp127, E, S, 0, &c));
    CHECK_EQ_INT(c, 0x7F7FFFFFu);
    CHECK_OK(ck_convert_from_f64(CK_DTYPE_F16, 1.0 + 0x1p-11 + 0x1p-40, E, N, 0, &c));
    CHECK_EQ_INT(c, 0x3C01); /* rounded once from fp64; via fp32 it would tie to 0x3C00 */
}

static void test_bad_input(void)
{
    uint64_t c;
    float f;
    double d;
    CHECK_STATUS(ck_convert_from_f32((ck_dtype)99, 1, 0, 0, 0, &c), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "99") != NULL);
    CHECK_STATUS(ck_convert_from_f32(CK_DTYPE_F16, 1, (ck_round_mode)7, 0, 0, &c),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_from_f32(CK_DTYPE_F16, 1, 0, (ck_overflow_mode)-1, 0, &c),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_from_f32(CK_DTYPE_F16, 1, 0, 0, 0, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_from_f64(CK_DTYPE_F16, 1, 0, 0, 0, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_to_f32(CK_DTYPE_FP4_E2M1, 0x10, &f), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "0x10") && strstr(ck_last_error(), "fp4e2m1"));
    CHECK_STATUS(ck_convert_to_f32(CK_DTYPE_FP6_E2M3, 0x40, &f), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_to_f64(CK_DTYPE_F16, 0x10000, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_to_f64(CK_DTYPE_I8, 0x100, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_to_f32(CK_DTYPE_F16, 0, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_to_f64(CK_DTYPE_COUNT, 0, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_convert_to_f32(CK_DTYPE_TF32, 0x3F801FFFu, &f)); /* low bits ignored */
    CHECK(f == 1.0f);
    CHECK_OK(ck_convert_to_f64(CK_DTYPE_F64, 0x7FF0000000000001ull, &d));
    CHECK(isnan(d));
}

int main(void)
{
    RUN_TEST(test_table_names_and_lookup);
    RUN_TEST(test_table_values_match_decoding);
    RUN_TEST(test_exhaustive_decode_encode);
    RUN_TEST(test_special_values);
    RUN_TEST(test_bad_input);
    for (int k = 0; k < REF_TYPE_COUNT; ++k)
        ref_free(&ref_types[k]);
    return CK_TEST_REPORT();
}
