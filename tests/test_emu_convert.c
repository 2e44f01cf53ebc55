/* Conversions of the device prelude (core/numeric_conv.h in kernel code) against the host
 * library, element by element: every code of every type of at most 16 bits (and random tf32 and
 * int32 codes) decoded to f32, and random plus boundary f32 values rounded to every type in every
 * rounding and overflow mode. Runs on the device CK_DEVICE chooses (the emulator in CI); the
 * results are dumped (convert_*) so scripts/gpu-check compares GPU and emulator bit for bit. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck/types.h"
#include "core/numeric_conv.h"
#include "kernel_harness.h"

static uint64_t seed = 0x5eed2026c0de0006ull;

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Width in bits of the codes of each type (0: not a ≤32-bit code type tested here). */
static int code_bits(int t)
{
    switch (t) {
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return 16;
    case CK_DTYPE_FP8_E4M3:
    case CK_DTYPE_FP8_E5M2:
    case CK_DTYPE_FP8_E4M3_FNUZ:
    case CK_DTYPE_FP8_E5M2_FNUZ:
    case CK_DTYPE_I8:
    case CK_DTYPE_U8:
        return 8;
    case CK_DTYPE_FP6_E2M3:
    case CK_DTYPE_FP6_E3M2:
        return 6;
    case CK_DTYPE_FP4_E2M1:
        return 4;
    case CK_DTYPE_F32:
    case CK_DTYPE_TF32:
    case CK_DTYPE_I32:
        return 32;
    default:
        return 0;
    }
}

/* Identical f32 results: same bits (NaN payloads included: the conversion defines them). */
static void test_codes_to_f32(void)
{
    ck_kernel *k = ckk_kernel("convert.cu", "codes_to_f32");
    enum { RANDOM = 4096 };
    size_t total = 0;
    for (int t = 0; t < CK_DTYPE_COUNT; ++t)
        total += code_bits(t) == 0 ? 0 : code_bits(t) == 32 ? RANDOM : (size_t)1 << code_bits(t);
    uint32_t *all = malloc(total * 4);
    size_t at = 0;
    for (int t = 0; t < CK_DTYPE_COUNT; ++t) {
        int bits = code_bits(t);
        if (bits == 0)
            continue;
        uint32_t *codes = malloc(((size_t)1 << (bits == 32 ? 12 : bits)) * 4);
        uint32_t *got = malloc(((size_t)1 << (bits == 32 ? 12 : bits)) * 4);
        int n = bits == 32 ? RANDOM : 1 << bits;
        for (int i = 0; i < n; ++i) {
            uint32_t c = bits == 32 ? (uint32_t)ckt_rand64(&seed) : (uint32_t)i;
            if (t == CK_DTYPE_TF32)
                c &= ~0x1FFFu; /* a tf32 code: the low 13 bits of the container are zero */
            codes[i] = c;
        }
        void *dc = ckk_upload(codes, (size_t)n * 4), *dout = ckk_upload(NULL, (size_t)n * 4);
        int type = t;
        CHECK_OK(ckk_launch(k, 16, 1, 1, 256, 1, 1, 0, 4, CKK_ARG(type), CKK_ARG(dc), CKK_ARG(dout),
                            CKK_ARG(n)));
        ckk_download(got, dout, (size_t)n * 4);
        long bad = 0;
        for (int i = 0; i < n; ++i) {
            float ref = 0;
            CHECK_OK(ck_convert_to_f32((ck_dtype)t, codes[i], &ref));
            if (got[i] != f2u(ref) && bad++ == 0)
                CHECK_MSG(0, "%s code 0x%x: kernel 0x%08x, host library 0x%08x",
                          ck_dtype_name((ck_dtype)t), codes[i], got[i], f2u(ref));
        }
        CHECK_MSG(bad == 0, "%s: %ld of %d codes differ", ck_dtype_name((ck_dtype)t), bad, n);
        memcpy(all + at, got, (size_t)n * 4);
        at += (size_t)n;
        ck_free(ckk_device, dc);
        ck_free(ckk_device, dout);
        free(codes);
        free(got);
    }
    ckk_dump("convert_codes_to_f32", all, total * 4);
    free(all);
}

/* Random values and the boundaries of every type: each representable value, its f32 neighbours,
 * and the midpoints to the next code (ties), plus zeros, infinities, NaNs, f32 extremes. */
static uint32_t *make_values(int *count)
{
    size_t cap = 40000, n = 0;
    uint32_t *v = malloc(cap * 4);
    static const float specials[] = {0.0f,     -0.0f,   INFINITY, -INFINITY, FLT_MAX,
                                     -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f,    -1e-45f,
                                     0.5f,     1.0f,    -1.0f};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; ++i)
        v[n++] = f2u(specials[i]);
    v[n++] = 0x7FC00000u; /* quiet NaN */
    v[n++] = 0xFFC00001u; /* negative NaN with payload */
    v[n++] = 0x7F800001u; /* signalling NaN */
    v[n++] = 0x7FFFFFFFu;
    v[n++] = 0x00000001u; /* smallest subnormal */
    v[n++] = 0x807FFFFFu; /* largest negative subnormal */
    for (int t = CK_DTYPE_F16; t <= CK_DTYPE_U8; ++t) {
        if (t == CK_DTYPE_TF32)
            continue;
        int bits = code_bits(t);
        int step = bits == 16 ? 97 : 1; /* every code of small types, a spread of 16-bit ones */
        for (int c = 0; c < 1 << bits; c += step) {
            float a, b;
            if (ck_convert_to_f32((ck_dtype)t, (uint64_t)c, &a) != CK_SUCCESS || isnan(a))
                continue;
            v[n++] = f2u(a);
            v[n++] = f2u(nextafterf(a, INFINITY));
            v[n++] = f2u(nextafterf(a, -INFINITY));
            /* the next code up in magnitude (same sign), when it is finite: the tie between */
            if (c + 1 < 1 << bits &&
                ck_convert_to_f32((ck_dtype)t, (uint64_t)c + 1, &b) == CK_SUCCESS && isfinite(b) &&
                isfinite(a) && (t >= CK_DTYPE_I8 || (signbit(a) == signbit(b)))) {
                float mid = (float)(((double)a + (double)b) / 2);
                v[n++] = f2u(mid);
            }
        }
    }
    while (n < cap - 4096 && n % 4096 != 0)
        v[n++] = (uint32_t)ckt_rand64(&seed);
    for (int i = 0; i < 4096; ++i) { /* random bits, and random values of moderate magnitude */
        uint32_t r = (uint32_t)ckt_rand64(&seed);
        v[n++] = i % 2 ? r : (r & 0x807FFFFFu) | (uint32_t)(112 + (r >> 8) % 40) << 23;
    }
    *count = (int)n;
    return v;
}

static void test_f32_to_codes(void)
{
    ck_kernel *k = ckk_kernel("convert.cu", "f32_to_codes");
    int n = 0;
    uint32_t *xs = make_values(&n);
    int combos[3 * 15 * 4 * 2], nc = 0;
    for (int t = 0; t < CK_DTYPE_COUNT; ++t) {
        if (code_bits(t) == 0)
            continue;
        for (int r = 0; r < 4; ++r)
            for (int o = 0; o < 2; ++o) {
                combos[3 * nc] = t;
                combos[3 * nc + 1] = r;
                combos[3 * nc + 2] = o;
                nc++;
            }
    }
    unsigned long long sd = 0x0123456789abcdefull;
    size_t total = (size_t)n * (size_t)nc;
    uint32_t *got = malloc(total * 4);
    void *dx = ckk_upload(xs, (size_t)n * 4),
         *dcombo = ckk_upload(combos, sizeof(int) * 3 * (size_t)nc);
    void *dout = ckk_upload(NULL, total * 4);
    CHECK_OK(ckk_launch(k, 8, 14, 1, 256, 1, 1, 0, 6, CKK_ARG(dx), CKK_ARG(n), CKK_ARG(dcombo),
                        CKK_ARG(nc), CKK_ARG(sd), CKK_ARG(dout)));
    ckk_download(got, dout, total * 4);
    for (int c = 0; c < nc; ++c) {
        ck_dtype t = (ck_dtype)combos[3 * c];
        ck_round_mode r = (ck_round_mode)combos[3 * c + 1];
        /* CK_NC_SATURATE = 0 / CK_NC_NONSAT = 1 are the library's SATURATE / NONSATURATE */
        ck_overflow_mode o =
            combos[3 * c + 2] == CK_NC_SATURATE ? CK_OVERFLOW_SATURATE : CK_OVERFLOW_NONSATURATE;
        long bad = 0;
        for (int i = 0; i < n; ++i) {
            uint64_t ref = 0;
            CHECK_OK(
                ck_convert_from_f32(t, u2f(xs[i]), r, o, ck_nc_rand_word(sd, (uint64_t)i), &ref));
            uint32_t g = got[(size_t)c * (size_t)n + (size_t)i];
            if (g != (uint32_t)ref && bad++ == 0)
                CHECK_MSG(0, "%s %s %s of f32 0x%08x: kernel 0x%x, host library 0x%llx",
                          ck_dtype_name(t), ck_round_mode_name(r), ck_overflow_mode_name(o), xs[i],
                          g, (unsigned long long)ref);
        }
        CHECK_MSG(bad == 0, "%s %s %s: %ld of %d values differ", ck_dtype_name(t),
                  ck_round_mode_name(r), ck_overflow_mode_name(o), bad, n);
    }
    printf("%d values x %d type/rounding/overflow combinations checked\n", n, nc);
    ckk_dump("convert_f32_to_codes", got, total * 4);
    ck_free(ckk_device, dx);
    ck_free(ckk_device, dcombo);
    ck_free(ckk_device, dout);

    /* the fixed-type shorthands */
    k = ckk_kernel("convert.cu", "shorthands");
    uint32_t *sh = malloc((size_t)n * 32);
    dx = ckk_upload(xs, (size_t)n * 4);
    dout = ckk_upload(NULL, (size_t)n * 32);
    CHECK_OK(ckk_launch(k, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, 3, CKK_ARG(dx),
                        CKK_ARG(n), CKK_ARG(dout)));
    ckk_download(sh, dout, (size_t)n * 32);
    static const ck_dtype types[7] = {CK_DTYPE_F16,      CK_DTYPE_BF16,     CK_DTYPE_FP8_E4M3,
                                      CK_DTYPE_FP8_E5M2, CK_DTYPE_FP6_E2M3, CK_DTYPE_FP6_E3M2,
                                      CK_DTYPE_FP4_E2M1};
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < 7; ++j) {
            uint64_t ref = 0;
            CHECK_OK(ck_convert_from_f32(types[j], u2f(xs[i]), CK_ROUND_NEAREST_EVEN,
                                         CK_OVERFLOW_DEFAULT, 0, &ref));
            if (sh[8 * i + j] != (uint32_t)ref && bad++ == 0)
                CHECK_MSG(0, "shorthand to %s of 0x%08x: 0x%x, host library 0x%llx",
                          ck_dtype_name(types[j]), xs[i], sh[8 * i + j], (unsigned long long)ref);
        }
        float back = 0;
        CHECK_OK(ck_convert_to_f32(CK_DTYPE_FP8_E4M3, sh[8 * i + 2], &back));
        bad += sh[8 * i + 7] != f2u(back);
    }
    CHECK_MSG(bad == 0, "%ld shorthand results differ from the host library", bad);
    ckk_dump("convert_shorthands", sh, (size_t)n * 32);
    ck_free(ckk_device, dx);
    ck_free(ckk_device, dout);
    free(sh);
    free(got);
    free(xs);
}

int main(void)
{
    if (!ckk_open())
        return 1;
    RUN_TEST(test_codes_to_f32);
    RUN_TEST(test_f32_to_codes);
    ckk_close();
    return CK_TEST_REPORT();
}
