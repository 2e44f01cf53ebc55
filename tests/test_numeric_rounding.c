/* Rounding fp32/fp64 -> every type against the independent reference (numeric_ref.h):
 * every boundary (each halfway point between neighbours and its fp32 neighbours, max,
 * max + half ulp, overflow, smallest subnormal, zeros, NaN, Inf) and 10^6 random fp32 per
 * type, in every rounding mode and both overflow modes. */
#include <float.h>

#include "ck/types.h"
#include "numeric_ref.h"
#include "test.h"

static long n_checked;

static const ck_round_mode det_modes[] = {CK_ROUND_NEAREST_EVEN, CK_ROUND_TOWARD_ZERO,
                                          CK_ROUND_NEAREST_AWAY};

/* Check x in every mode against the reference; rnd_extra is one more stochastic word. */
static int check_value(ref_type *rt, float x, int floor_index, uint32_t rnd_extra, int full)
{
    int bad = 0;
    uint32_t rnds[4] = {rnd_extra, 0u, 0xFFFFFFFFu, 0x80000000u};
    for (int sat = 0; sat < 2; ++sat) {
        ck_overflow_mode om = sat ? CK_OVERFLOW_SATURATE : CK_OVERFLOW_NONSATURATE;
        for (int m = 0; m < (full ? 3 + 4 : 3 + 1); ++m) {
            ck_round_mode mode = m < 3 ? det_modes[m] : CK_ROUND_STOCHASTIC;
            uint32_t rnd = m < 3 ? 0x5A5A5A5Au : rnds[m - 3];
            uint64_t got = ~0ull;
            ck_status st = ck_convert_from_f32(rt->dtype, x, mode, om, rnd, &got);
            uint64_t want = ref_round_at(rt, (long double)x, floor_index, mode, sat, rnd);
            ++n_checked;
            if (st != CK_SUCCESS || got != want) {
                if (bad++ == 0)
                    CHECK_MSG(0, "%s x=%a (%.9g) round %s %s rnd %08x: got 0x%llx want 0x%llx",
                              ck_dtype_name(rt->dtype), (double)x, (double)x,
                              ck_round_mode_name(mode), sat ? "sat" : "nonsat", rnd,
                              (unsigned long long)got, (unsigned long long)want);
            }
        }
    }
    return bad;
}

static int check_both_signs(ref_type *rt, long double v, uint32_t rnd, int full, int nbrs)
{
    float x = (float)v;
    int bad = 0;
    if ((long double)x != v) /* only values exactly representable in fp32 */
        return 0;
    for (int s = 0; s < 2; ++s) {
        float y = s ? -x : x;
        bad += check_value(rt, y, -1, rnd, full);
        if (nbrs) {
            bad += check_value(rt, nextafterf(y, INFINITY), -1, rnd, full);
            bad += check_value(rt, nextafterf(y, -INFINITY), -1, rnd, full);
        }
    }
    return bad;
}

static void test_boundaries(void)
{
    uint64_t st = 0xB0B0CAFEull;
    printf("seed %llu\n", (unsigned long long)st);
    for (int k = 0; k < REF_TYPE_COUNT; ++k) {
        ref_type *rt = &ref_types[k];
        ref_init(rt);
        CHECK(ref_ascending(rt));
        long bad = 0;
        for (int i = 0; i + 1 < rt->n; ++i) {
            long double lo = rt->val[i], hi = rt->val[i + 1];
            uint32_t rnd = (uint32_t)ckt_rand64(&st);
            int full = rt->n < 5000; /* all stochastic words for the small types */
            bad += check_both_signs(rt, (lo + hi) / 2, rnd, full, 1);      /* each halfway point */
            bad += check_both_signs(rt, lo + (hi - lo) / 4, rnd, full, 0); /* 1/4 of an ulp */
            bad += check_both_signs(rt, lo, rnd, full, full);              /* the values */
        }
        long double maxv = rt->val[rt->n - 1];
        long double specials[] = {
            maxv,           (maxv + rt->next) / 2, rt->next,           rt->next * 2,   rt->val[1],
            rt->val[1] / 2, rt->val[1] / 4,        rt->val[1] * 3 / 4, 0.0L,           FLT_MAX,
            FLT_MIN,        FLT_TRUE_MIN,          ldexpl(1, 100),     ldexpl(1, -100)};
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; ++i)
            bad += check_both_signs(rt, specials[i], (uint32_t)ckt_rand64(&st), 1, 1);
        float nonfinite[] = {INFINITY, -INFINITY, NAN, -NAN};
        for (int i = 0; i < 4; ++i)
            bad += check_value(rt, nonfinite[i], -1, 12345u, 1);
        CHECK_MSG(bad == 0, "%s: %ld boundary mismatches", ck_dtype_name(rt->dtype), bad);
    }
}

/* Random fp32: half arbitrary bit patterns, half concentrated on the type's range. */
static float random_f32(uint64_t *st, const ref_type *rt)
{
    uint64_t r = ckt_rand64(st);
    uint32_t bits = (uint32_t)r;
    if ((r >> 32) & 1) {
        int emin = 1 - rt->bias - rt->mbits - 3;
        int emax = (1 << rt->ebits) - rt->bias + 2;
        int e = emin + (int)((r >> 33) % (uint64_t)(emax - emin + 1));
        if (e < -149)
            e = -149;
        float m = 1.0f + (float)(bits & 0x7FFFFF) * 0x1p-23f;
        float x = ldexpf(m, e);
        return (bits >> 31) ? -x : x;
    }
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void test_random_against_reference(void)
{
    const long count = 1000000;
    uint64_t seed = 0x5EED0001ull, st = seed;
    printf("seed %llu, %ld values per type\n", (unsigned long long)seed, count);
    for (int k = 0; k < REF_TYPE_COUNT; ++k) {
        ref_type *rt = &ref_types[k];
        long bad = 0;
        for (long i = 0; i < count; ++i) {
            float x = random_f32(&st, rt);
            long double a = fabsl((long double)x);
            int idx = isfinite(x) && a <= rt->val[rt->n - 1] ? ref_floor_index(rt, a) : -1;
            bad += check_value(rt, x, idx, (uint32_t)ckt_rand64(&st), 0);
            if (bad > 20)
                break;
        }
        CHECK_MSG(bad == 0, "%s: %ld random mismatches", ck_dtype_name(rt->dtype), bad);
    }
}

/* fp64 inputs round once: random doubles against the same reference. */
static void test_random_f64_against_reference(void)
{
    uint64_t seed = 0x5EED0002ull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    for (int k = 0; k < REF_TYPE_COUNT; ++k) {
        ref_type *rt = &ref_types[k];
        long bad = 0;
        for (long i = 0; i < 100000 && bad < 5; ++i) {
            float base = random_f32(&st, rt);
            uint64_t low = ckt_rand64(&st) & 0x1FFFFFFFull; /* extra fp64 mantissa bits */
            double x = isfinite(base) ? base * (1.0 + (double)low * 0x1p-53) : (double)base;
            if (i % 7 == 0 && isfinite(x)) /* exact halfway points of fp64 inputs too */
                x = (double)((rt->val[i % rt->n] + rt->val[i % rt->n + (i % rt->n + 1 < rt->n)]) /
                             2) *
                    (i & 8 ? -1 : 1);
            for (int m = 0; m < 4; ++m) {
                for (int sat = 0; sat < 2; ++sat) {
                    uint32_t rnd = (uint32_t)ckt_rand64(&st);
                    uint64_t got = ~0ull;
                    ck_round_mode mode = (ck_round_mode)m;
                    CHECK_OK(ck_convert_from_f64(
                        rt->dtype, x, mode, sat ? CK_OVERFLOW_SATURATE : CK_OVERFLOW_NONSATURATE,
                        rnd, &got));
                    uint64_t want = ref_round(rt, (long double)x, mode, sat, rnd);
                    ++n_checked;
                    if (got != want && bad++ < 3)
                        CHECK_MSG(0, "%s x=%a mode %d sat %d: got 0x%llx want 0x%llx",
                                  ck_dtype_name(rt->dtype), x, m, sat, (unsigned long long)got,
                                  (unsigned long long)want);
                }
            }
        }
        CHECK_MSG(bad == 0, "%s: %ld fp64 mismatches", ck_dtype_name(rt->dtype), bad);
    }
}

static void test_integers_against_reference(void)
{
    const ck_dtype ints[] = {CK_DTYPE_I8, CK_DTYPE_U8, CK_DTYPE_I32};
    uint64_t seed = 0x5EED0003ull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    for (int k = 0; k < 3; ++k) {
        long bad = 0;
        for (long i = 0; i < 1000000 && bad < 5; ++i) {
            uint64_t r = ckt_rand64(&st);
            float x;
            if (r & 1) { /* near the type's range, with fractions, halves and boundaries */
                double span = ints[k] == CK_DTYPE_I32 ? 0x1p32 : 600.0;
                x = (float)(((double)(r >> 11) * 0x1p-53 - 0.5) * span);
                if (r & 2)
                    x = floorf(x) + 0.5f;
            } else {
                uint32_t b = (uint32_t)(r >> 32);
                memcpy(&x, &b, sizeof x);
            }
            for (int m = 0; m < 4; ++m) {
                uint32_t rnd = (uint32_t)ckt_rand64(&st);
                uint64_t got = ~0ull;
                CHECK_OK(ck_convert_from_f32(ints[k], x, (ck_round_mode)m, CK_OVERFLOW_NONSATURATE,
                                             rnd, &got));
                uint64_t want = ref_round_int(ints[k], (long double)x, (ck_round_mode)m, rnd);
                ++n_checked;
                if (got != want && bad++ < 3)
                    CHECK_MSG(0, "%s x=%a mode %d: got 0x%llx want 0x%llx", ck_dtype_name(ints[k]),
                              (double)x, m, (unsigned long long)got, (unsigned long long)want);
            }
        }
        CHECK_MSG(bad == 0, "%s: %ld mismatches", ck_dtype_name(ints[k]), bad);
    }
}

/* Integer boundaries: every k and k +- 1/2 (and their fp32 neighbours) around the ranges of
 * i8/u8, the extremes of i32, zeros, NaN and Inf, in every mode. */
static void check_int_value(ck_dtype d, float x, long *bad)
{
    uint32_t rnds[3] = {0u, 0xFFFFFFFFu, 0x9E3779B9u};
    for (int m = 0; m < CK_ROUND_MODE_COUNT; ++m)
        for (int r = 0; r < (m == CK_ROUND_STOCHASTIC ? 3 : 1); ++r) {
            uint64_t got = ~0ull;
            ck_status st =
                ck_convert_from_f32(d, x, (ck_round_mode)m, CK_OVERFLOW_DEFAULT, rnds[r], &got);
            uint64_t want = ref_round_int(d, (long double)x, (ck_round_mode)m, rnds[r]);
            ++n_checked;
            if ((st != CK_SUCCESS || got != want) && (*bad)++ < 3)
                CHECK_MSG(0, "%s x=%a mode %d rnd %08x: got 0x%llx want 0x%llx", ck_dtype_name(d),
                          (double)x, m, rnds[r], (unsigned long long)got, (unsigned long long)want);
        }
}

static void test_integer_boundaries(void)
{
    const ck_dtype ints[] = {CK_DTYPE_I8, CK_DTYPE_U8, CK_DTYPE_I32};
    for (int k = 0; k < 3; ++k) {
        long bad = 0;
        for (int v = -300; v <= 300; ++v)
            for (int h = 0; h < 2; ++h) {
                float x = (float)v + (h ? 0.5f : 0.0f);
                check_int_value(ints[k], x, &bad);
                check_int_value(ints[k], nextafterf(x, INFINITY), &bad);
                check_int_value(ints[k], nextafterf(x, -INFINITY), &bad);
            }
        const float extremes[] = {0x1p31f, -0x1p31f,    0x1.fffffep30f, -0x1.fffffep30f,
                                  0x1p24f, 0x1p24f + 2, 0x1p23f + 0.5f, -0x1p23f - 0.5f,
                                  FLT_MAX, -FLT_MAX,    FLT_TRUE_MIN,   -FLT_TRUE_MIN,
                                  0.0f,    -0.0f,       INFINITY,       -INFINITY,
                                  NAN,     -NAN};
        for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; ++i)
            check_int_value(ints[k], extremes[i], &bad);
        CHECK_MSG(bad == 0, "%s: %ld boundary mismatches", ck_dtype_name(ints[k]), bad);
    }
}

/* fp64 -> fp32 and fp32 -> fp64 against the C compiler's IEEE conversions. */
static void test_f64_f32_ieee(void)
{
    uint64_t seed = 0x5EED0004ull, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    long bad = 0;
    for (long i = 0; i < 1000000 && bad < 5; ++i) {
        uint64_t b = ckt_rand64(&st);
        if (i & 1) /* exponents near fp32's range */
            b = (b & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1023 - 160 + (b >> 52) % 300) << 52);
        if (i % 3 == 0) /* exact ties and their neighbours for fp32's 24 bits */
            b = (b & ~0x1FFFFFFFull) | (0x10000000ull + (uint64_t)(i % 5) - 2u);
        double d;
        memcpy(&d, &b, sizeof d);
        float f = -1;
        CHECK_OK(ck_convert_to_f32(CK_DTYPE_F64, b, &f));
        float want = (float)d;
        uint32_t fb, wb;
        memcpy(&fb, &f, 4);
        memcpy(&wb, &want, 4);
        ++n_checked;
        if (!(fb == wb || (isnan(f) && isnan(want))) && bad++ < 3)
            CHECK_MSG(0, "f64 %a -> f32: got %a want %a", d, (double)f, (double)want);
        uint64_t c = 0;
        CHECK_OK(ck_convert_from_f32(CK_DTYPE_F64, want, 0, 0, 0, &c));
        double back;
        memcpy(&back, &c, 8);
        if (!(back == (double)want || isnan(want)) && bad++ < 3)
            CHECK_MSG(0, "f32 %a -> f64: got %a", (double)want, back);
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    RUN_TEST(test_boundaries);
    RUN_TEST(test_random_against_reference);
    RUN_TEST(test_random_f64_against_reference);
    RUN_TEST(test_integers_against_reference);
    RUN_TEST(test_integer_boundaries);
    RUN_TEST(test_f64_f32_ieee);
    printf("%ld conversions compared with the reference\n", n_checked);
    for (int k = 0; k < REF_TYPE_COUNT; ++k)
        ref_free(&ref_types[k]);
    return CK_TEST_REPORT();
}
