/* Packed sub-byte storage, array conversions with scale (quantization/dequantization),
 * stochastic rounding statistics, and bad input of the array functions. */
#include <stdlib.h>

#include "ck/types.h"
#include "core/numeric_conv.h"
#include "numeric_ref.h"
#include "test.h"

/* Reference bit order: element i occupies bits [w*i, w*i + w) of the little-endian bit
 * stream (bit b of the stream is bit b%8 of byte b/8), written one bit at a time. */
static void bitstream_put(uint8_t *bytes, size_t i, int w, unsigned code)
{
    for (int b = 0; b < w; ++b) {
        size_t pos = i * (size_t)w + (size_t)b;
        if ((code >> b) & 1u)
            bytes[pos / 8] |= (uint8_t)(1u << (pos % 8));
    }
}

static void test_pack_unpack(void)
{
    const ck_dtype packed_types[] = {CK_DTYPE_FP4_E2M1, CK_DTYPE_FP6_E2M3, CK_DTYPE_FP6_E3M2};
    uint64_t seed = 0xFACEull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    for (int k = 0; k < 3; ++k) {
        const ck_dtype_info *t = ck_dtype_get(packed_types[k]);
        int w = t->storage_bits;
        size_t n = 4 * 257;
        uint8_t codes[4 * 257], back[4 * 257], packed[800], want[800];
        size_t bytes = 0;
        CHECK_OK(ck_dtype_storage_size(t->dtype, n, &bytes));
        CHECK_EQ_INT(bytes, n * (size_t)w / 8);
        memset(want, 0, sizeof want);
        for (size_t i = 0; i < n; ++i) {
            codes[i] = (uint8_t)(ckt_rand64(&st) & ((1u << w) - 1u));
            bitstream_put(want, i, w, codes[i]);
        }
        memset(packed, 0xAB, sizeof packed);
        CHECK_OK(ck_pack(t->dtype, codes, n, packed));
        CHECK(memcmp(packed, want, bytes) == 0);
        CHECK_EQ_INT(packed[bytes], 0xAB); /* nothing written past the end */
        CHECK_OK(ck_unpack(t->dtype, packed, n, back));
        CHECK(memcmp(back, codes, n) == 0);
    }
    /* Documented examples: fp4 {1, 2} -> 0x21; fp6 {1, 2, 3, 4} -> 0x81 0x30 0x10. */
    uint8_t c4[2] = {1, 2}, c6[4] = {1, 2, 3, 4}, p[3];
    CHECK_OK(ck_pack(CK_DTYPE_FP4_E2M1, c4, 2, p));
    CHECK_EQ_INT(p[0], 0x21);
    CHECK_OK(ck_pack(CK_DTYPE_FP6_E2M3, c6, 4, p));
    CHECK(p[0] == 0x81 && p[1] == 0x30 && p[2] == 0x10);

    /* Bad input. */
    uint8_t big[4] = {0, 16, 0, 0};
    CHECK_STATUS(ck_pack(CK_DTYPE_FP4_E2M1, big, 2, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "codes[1]") != NULL);
    uint8_t big6[4] = {0, 0, 0, 64};
    CHECK_STATUS(ck_pack(CK_DTYPE_FP6_E3M2, big6, 4, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pack(CK_DTYPE_FP4_E2M1, c4, 3, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "multiple of 2") != NULL);
    CHECK_STATUS(ck_pack(CK_DTYPE_FP6_E2M3, c6, 6, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_unpack(CK_DTYPE_FP6_E2M3, p, 5, c6), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pack(CK_DTYPE_FP8_E4M3, c4, 2, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "sub-byte") != NULL);
    CHECK_STATUS(ck_pack(CK_DTYPE_FP4_E2M1, NULL, 2, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_unpack(CK_DTYPE_FP4_E2M1, NULL, 2, c4), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_pack((ck_dtype)77, c4, 2, p), CK_ERROR_INVALID_ARGUMENT);
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 0};
    CHECK_STATUS(ck_pack(CK_DTYPE_FP4_E2M1, buf, 4, buf + 1), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlap") != NULL);
    CHECK_OK(ck_pack(CK_DTYPE_FP4_E2M1, NULL, 0, NULL)); /* nothing to do */
    size_t bytes;
    CHECK_STATUS(ck_dtype_storage_size(CK_DTYPE_FP4_E2M1, 7, &bytes), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dtype_storage_size(CK_DTYPE_F16, 1, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dtype_storage_size(CK_DTYPE_F64, SIZE_MAX, &bytes), CK_ERROR_OVERFLOW);
    CHECK_OK(ck_dtype_storage_size(CK_DTYPE_FP6_E3M2, 8, &bytes));
    CHECK_EQ_INT(bytes, 6);
}

/* Load element i of an array of type d as a code (unpacked by the reference bit order). */
static uint64_t element_code(ck_dtype d, const void *p, size_t i)
{
    const ck_dtype_info *t = ck_dtype_get(d);
    const uint8_t *b = (const uint8_t *)p;
    if (t->pack_elements > 1) {
        unsigned c = 0;
        for (int k = 0; k < t->storage_bits; ++k) {
            size_t pos = i * (size_t)t->storage_bits + (size_t)k;
            c |= (unsigned)((b[pos / 8] >> (pos % 8)) & 1u) << k;
        }
        return c;
    }
    uint64_t c = 0;
    memcpy(&c, b + i * (size_t)(t->storage_bits / 8), (size_t)(t->storage_bits / 8));
    return c; /* little-endian host */
}

/* Quantize fp32 with a scale into every type, compare each element with the scalar API
 * (same random word) and with the reference applied to the exact product x * scale. */
static void test_convert_array_quantize(void)
{
    enum { N = 4096 };
    uint64_t seed = 0xA11AAull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    float *src = malloc(N * sizeof *src);
    void *dst = malloc(N * 8);
    float *back = malloc(N * sizeof *back);
    for (int i = 0; i < N; ++i)
        src[i] = (float)(((double)(ckt_rand64(&st) >> 11) * 0x1p-53 - 0.5) * 64.0);
    src[0] = NAN;
    src[1] = -INFINITY;
    src[2] = -0.0f;
    src[3] = 1e30f;
    for (int d = 0; d < CK_DTYPE_COUNT; ++d) {
        ref_type *rt = ref_find((ck_dtype)d);
        if (rt)
            ref_init(rt);
        for (int m = 0; m < CK_ROUND_MODE_COUNT; ++m) {
            ck_convert_options o = ck_convert_options_default();
            o.round = (ck_round_mode)m;
            o.overflow = m & 1 ? CK_OVERFLOW_NONSATURATE : CK_OVERFLOW_DEFAULT;
            o.scale = 0.37109375f * (float)(m + 1); /* not a power of two */
            o.seed = 99 + (uint64_t)m;
            CHECK_OK(ck_convert_array((ck_dtype)d, dst, CK_DTYPE_F32, src, N, &o));
            long bad = 0;
            for (int i = 0; i < N; ++i) {
                uint64_t got = element_code((ck_dtype)d, dst, (size_t)i), want = 0;
                uint32_t rnd = m == CK_ROUND_STOCHASTIC ? ck_nc_rand_word(o.seed, (uint64_t)i) : 0;
                long double prod = (long double)src[i] * (long double)o.scale; /* exact */
                if (rt) {
                    const ck_dtype_info *t = ck_dtype_get((ck_dtype)d);
                    int sat = o.overflow == CK_OVERFLOW_SATURATE ||
                              (o.overflow == CK_OVERFLOW_DEFAULT &&
                               t->default_overflow == CK_OVERFLOW_SATURATE);
                    want = ref_round(rt, prod, (ck_round_mode)m, sat, rnd);
                } else if (d == CK_DTYPE_I8 || d == CK_DTYPE_U8 || d == CK_DTYPE_I32) {
                    want = ref_round_int((ck_dtype)d, prod, (ck_round_mode)m, rnd);
                } else { /* f32 / f64 destinations: the product rounded once */
                    CHECK_OK(ck_convert_from_f64((ck_dtype)d, (double)prod, (ck_round_mode)m,
                                                 o.overflow, rnd, &want));
                }
                if (got != want && bad++ < 3)
                    CHECK_MSG(0, "%s mode %d element %d (%a * %a): got 0x%llx want 0x%llx",
                              ck_dtype_name((ck_dtype)d), m, i, (double)src[i], (double)o.scale,
                              (unsigned long long)got, (unsigned long long)want);
            }
            CHECK_MSG(bad == 0, "%s mode %d: %ld mismatches", ck_dtype_name((ck_dtype)d), m, bad);
            /* Dequantize: decode * (1/scale) into fp32, against the exact product. */
            ck_convert_options dq = ck_convert_options_default();
            dq.scale = 1.0f / o.scale;
            CHECK_OK(ck_convert_array(CK_DTYPE_F32, back, (ck_dtype)d, dst, N, &dq));
            for (int i = 0; i < N; ++i) {
                double v;
                CHECK_OK(
                    ck_convert_to_f64((ck_dtype)d, element_code((ck_dtype)d, dst, (size_t)i), &v));
                float want = (float)((long double)v * (long double)dq.scale);
                if (!(back[i] == want || (isnan(back[i]) && isnan(want))) && bad++ < 3)
                    CHECK_MSG(0, "dequantize %s element %d: got %a want %a",
                              ck_dtype_name((ck_dtype)d), i, (double)back[i], (double)want);
            }
            CHECK_EQ_INT(bad, 0);
        }
    }
    free(src);
    free(dst);
    free(back);
}

/* fp64 sources whose product with the scale has more than 64 bits (sticky path). */
static void test_convert_array_wide_products(void)
{
    enum { N = 20000 };
    uint64_t seed = 0xD0D0ull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    double *src = malloc(N * sizeof *src);
    uint16_t *dst = malloc(N * sizeof *dst);
    for (int i = 0; i < N; ++i)
        src[i] = ((double)(ckt_rand64(&st) >> 11) * 0x1p-53 - 0.5) * 1000.0;
    ck_convert_options o = ck_convert_options_default();
    o.scale = 0x1.234567p-3f;
    ref_type *rt = ref_find(CK_DTYPE_F16);
    ref_init(rt);
    CHECK_OK(ck_convert_array(CK_DTYPE_F16, dst, CK_DTYPE_F64, src, N, &o));
    long bad = 0;
    for (int i = 0; i < N; ++i) {
        /* the 77-bit product rounded to 64 bits is still far from any fp16 tie */
        uint64_t want = ref_round(rt, (long double)src[i] * o.scale, CK_ROUND_NEAREST_EVEN, 0, 0);
        if (dst[i] != want && bad++ < 3)
            CHECK_MSG(0, "f64 %a * scale -> f16: got 0x%x want 0x%llx", src[i], dst[i],
                      (unsigned long long)want);
    }
    CHECK_EQ_INT(bad, 0);
    free(src);
    free(dst);
}

/* The mean of many stochastic roundings of x converges to x (unbiased). */
static void test_stochastic_rounding_is_unbiased(void)
{
    enum { N = 20000 };
    const ck_dtype types[] = {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_FP4_E2M1,
                              CK_DTYPE_FP6_E3M2, CK_DTYPE_BF16,     CK_DTYPE_F16,
                              CK_DTYPE_I8};
    const float xs[] = {0.3f, 1.1f, -2.7f, 0.01f, 3.14159f, -0.0007f, 5.5f, 100.3f};
    float *src = malloc(N * sizeof *src);
    uint64_t *dst = malloc(N * 8);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
        for (size_t j = 0; j < sizeof xs / sizeof xs[0]; ++j) {
            float x = xs[j];
            if (fabs(x) > ck_dtype_get(types[k])->max_finite)
                continue;
            for (int i = 0; i < N; ++i)
                src[i] = x;
            ck_convert_options o = ck_convert_options_default();
            o.round = CK_ROUND_STOCHASTIC;
            o.seed = 1000 + j;
            CHECK_OK(ck_convert_array(types[k], dst, CK_DTYPE_F32, src, N, &o));
            /* neighbours of x */
            uint64_t clo, chi;
            double lo, hi;
            CHECK_OK(ck_convert_from_f32(types[k], x, CK_ROUND_TOWARD_ZERO, CK_OVERFLOW_SATURATE, 0,
                                         &clo));
            CHECK_OK(ck_convert_from_f32(types[k], x, CK_ROUND_STOCHASTIC, CK_OVERFLOW_SATURATE, 0,
                                         &chi)); /* rnd 0: away */
            CHECK_OK(ck_convert_to_f64(types[k], clo, &lo));
            CHECK_OK(ck_convert_to_f64(types[k], chi, &hi));
            double sum = 0.0;
            int others = 0;
            for (int i = 0; i < N; ++i) {
                double v;
                CHECK_OK(ck_convert_to_f64(types[k], element_code(types[k], dst, (size_t)i), &v));
                others += v != lo && v != hi;
                sum += v;
            }
            double mean = sum / N, q = fabs(hi - lo);
            /* each draw has variance p(1-p)q^2 <= q^2/4: 6 sigma of the mean */
            double bound = 6.0 * q / (2.0 * sqrt((double)N)) + q * 0x1p-31;
            CHECK_EQ_INT(others, 0);
            CHECK_MSG(fabs(mean - (double)x) <= bound,
                      "%s x=%g: mean %.9g, error %.3g > bound %.3g (ulp %g)",
                      ck_dtype_name(types[k]), (double)x, mean, mean - x, bound, q);
            if (hi != lo) /* both neighbours occur */
                CHECK(fabs(mean - lo) > 0 && fabs(mean - hi) > 0);
        }
    }
    free(src);
    free(dst);
}

static void test_convert_array_bad_input_and_in_place(void)
{
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t b[8];
    ck_convert_options o = ck_convert_options_default();
    CHECK_STATUS(ck_convert_array((ck_dtype)50, b, CK_DTYPE_F32, f, 8, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "dst_type") != NULL);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_F16, b, (ck_dtype)-3, f, 4, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_FP4_E2M1, b, CK_DTYPE_F32, f, 7, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_F32, f, CK_DTYPE_FP6_E2M3, b, 6, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, NULL, CK_DTYPE_F32, f, 8, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, b, CK_DTYPE_F32, NULL, 8, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_convert_array(CK_DTYPE_I8, NULL, CK_DTYPE_F32, NULL, 0, NULL));
    o.scale = 0.0f;
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, b, CK_DTYPE_F32, f, 8, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "scale") != NULL);
    o.scale = NAN;
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, b, CK_DTYPE_F32, f, 8, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    o = ck_convert_options_default();
    o.round = (ck_round_mode)9;
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, b, CK_DTYPE_F32, f, 8, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    o = ck_convert_options_default();
    o.overflow = (ck_overflow_mode)9;
    CHECK_STATUS(ck_convert_array(CK_DTYPE_I8, b, CK_DTYPE_F32, f, 8, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    /* overlap: f16 into the middle of its own fp32 source */
    CHECK_STATUS(ck_convert_array(CK_DTYPE_F16, (char *)f + 2, CK_DTYPE_F32, f, 4, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlaps") != NULL);
    CHECK_STATUS(ck_convert_array(CK_DTYPE_F16, f, CK_DTYPE_F32, f, 4, NULL),
                 CK_ERROR_INVALID_ARGUMENT); /* same start, different sizes */
    /* in place between types of the same size: fp32 -> int32 and back */
    CHECK_OK(ck_convert_array(CK_DTYPE_I32, f, CK_DTYPE_F32, f, 8, NULL));
    int32_t iv[8];
    memcpy(iv, f, sizeof iv);
    for (int i = 0; i < 8; ++i)
        CHECK_EQ_INT(iv[i], i + 1);
    CHECK_OK(ck_convert_array(CK_DTYPE_F32, f, CK_DTYPE_I32, f, 8, NULL));
    for (int i = 0; i < 8; ++i)
        CHECK(f[i] == (float)(i + 1));
    /* same type, scale 1: an exact copy, NaN payload included */
    uint32_t nanbits = 0x7FA12345u, out = 0;
    CHECK_OK(ck_convert_array(CK_DTYPE_F32, &out, CK_DTYPE_F32, &nanbits, 1, NULL));
    CHECK_EQ_INT(out, nanbits);
}

int main(void)
{
    RUN_TEST(test_pack_unpack);
    RUN_TEST(test_convert_array_quantize);
    RUN_TEST(test_convert_array_wide_products);
    RUN_TEST(test_stochastic_rounding_is_unbiased);
    RUN_TEST(test_convert_array_bad_input_and_in_place);
    for (int k = 0; k < REF_TYPE_COUNT; ++k)
        ref_free(&ref_types[k]);
    return CK_TEST_REPORT();
}
