/* The quantized forward's ways to its codes (src/ops/norm/norm_fwd_quant_kernel.h: the
 * default, by the row's reciprocal with an exact-remainder correction and packed conversions;
 * CK_NORM_QUANT=intcvt, the same with the integer fp8 conversion of targets before sm_89;
 * CK_NORM_QUANT=exact, a division per element), each checked bit for bit:
 *  - smooth-quant of f32 rows built so that y / scale hits every i8 rounding tie (k + 1/2) and
 *    every fp8 e4m3 midpoint exactly, one f32 ulp either side of them, saturation, +-0, tiny
 *    values, and the max-abs element exactly (scale = a 16-bit mantissa times 2^e, within and
 *    beyond the fast way's scale range [1e-18, 1e18], subnormal included), against the
 *    quotient rounded in double and the library's own conversion (ck_convert_from_f64), every
 *    element and every scale;
 *  - layernorm / RMSNorm rows of random bf16 (instances: bf16 x as f32 holding y, or with
 *    CK_NORM_QUANT=recompute and exact as raw codes converted again; lane groups; residual and
 *    smooth; the looped pipeline): the codes and scales of the default, of recompute and of
 *    intcvt equal to CK_NORM_QUANT=exact's, every element (the reference comparison: test_norm). */
#include <stdio.h>

#include "norm_test_util.h"

static ck_context *ctx;

/* The expected code of y / scale (f32 division: a double quotient rounded to f32 is the same,
 * 53 >= 2 * 24 + 2). */
static uint64_t want_code(ck_dtype yt, float y, float scale)
{
    float q = scale > 0.0f ? (float)((double)y / (double)scale) : scale == 0.0f ? 0.0f : scale;
    if (yt == CK_DTYPE_I8) {
        double r = isnan(q) ? 0.0 : fmin(fmax(nearbyint((double)q), -127.0), 127.0);
        return (uint64_t)(int64_t)r & 0xffu;
    }
    uint64_t c = 0;
    ck_convert_from_f64(CK_DTYPE_FP8_E4M3, (double)q, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_SATURATE,
                        0, &c);
    return c;
}

/* Element j of a row of scale s: the max-abs element at 0, then ties, their neighbours, random
 * values, zeros and tiny ones. */
static float tie_value(ck_dtype yt, int64_t j, float s, uint64_t *rng)
{
    double qmax = yt == CK_DTYPE_I8 ? 127.0 : 448.0;
    uint64_t u = ckt_rand64(rng);
    double sign = (u & 1) ? -1.0 : 1.0, t;
    if (j == 0)
        return (float)(sign * qmax * s);
    if (yt == CK_DTYPE_I8) {
        t = (double)(u >> 8 & 0xff) - 127.5; /* -127.5 .. 127.5: the ties */
    } else {
        /* the midpoint above an e4m3 value v, |v| < 448 */
        uint64_t c = (u >> 8) % 0x7e;
        double v = nt_value(CK_DTYPE_FP8_E4M3, c), w = nt_value(CK_DTYPE_FP8_E4M3, c + 1);
        t = sign * (v + w) / 2;
    }
    float x = (float)(t * s); /* exact: 24 bits at most */
    switch ((u >> 20) % 8) {
    case 0:
        return nextafterf(x, INFINITY);
    case 1:
        return nextafterf(x, -INFINITY);
    case 2:
        return (float)(((double)(u >> 32) * 0x1p-32 * 2 - 1) * qmax * s);
    case 3:
        return (u >> 24 & 1) ? -0.0f : (float)(s * 0x1p-30 * sign);
    default:
        return x;
    }
}

static const char *const modes[3] = {"fast", "intcvt", "exact"};

static void quant_ties(ck_dtype yt, int64_t rows, int64_t n, const char *mode)
{
    uint64_t rng = 77 + (uint64_t)n + (uint64_t)yt;
    nt_buf x, y, ys;
    int ok = nt_alloc(ctx, &x, CK_DTYPE_F32, rows, n, n, 0) &&
             nt_alloc(ctx, &y, yt, rows, n, n, 0) &&
             nt_alloc(ctx, &ys, CK_DTYPE_F32, 1, rows, rows, 1);
    CHECK(ok);
    float *s = malloc(sizeof(float) * (size_t)rows);
    CHECK(s != NULL);
    if (!ok || !s)
        goto done;
    for (int64_t r = 0; r < rows; ++r) {
        /* an odd 16-bit mantissa times 2^e: from below 1e-18 (to subnormal and 0) to beyond 1e18 */
        uint64_t u = ckt_rand64(&rng);
        int e = r % 8 == 0   ? -100 - (int)(u % 40)
                : r % 8 == 1 ? 60 + (int)(u % 40)
                             : -50 + (int)(u % 80);
        s[r] = (float)ldexp((double)((u >> 16 & 0xffff) | 1), e - 16);
        for (int64_t j = 0; j < n; ++j) {
            float v = tie_value(yt, j, s[r], &rng);
            uint32_t bits;
            memcpy(&bits, &v, 4);
            nt_put(x.host, CK_DTYPE_F32, (size_t)(r * n + j), bits);
        }
    }
    nt_upload(ctx, &x);
    setenv("CK_NORM_QUANT", mode, 1);
    CHECK_OK(ck_smoothquant(ctx, &x.ten, NULL, &y.ten, &ys.ten));
    unsetenv("CK_NORM_QUANT");
    CHECK_OK(ck_context_synchronize(ctx));
    nt_download(ctx, &y);
    nt_download(ctx, &ys);
    long bad = 0;
    double qmax = yt == CK_DTYPE_I8 ? 127.0 : 448.0;
    for (int64_t r = 0; r < rows; ++r) {
        float amax = 0.0f, scale, got_s;
        for (int64_t j = 0; j < n; ++j)
            amax = fmaxf(amax, fabsf((float)nt_at(&x, r, j)));
        scale = (float)((double)amax / qmax);
        got_s = (float)nt_at(&ys, 0, r);
        if (memcmp(&got_s, &scale, 4) != 0 && bad++ < 5)
            fprintf(stderr, "%s: y_scale[%lld] = %a, want %a\n", mode, (long long)r, got_s, scale);
        for (int64_t j = 0; j < n; ++j) {
            float xv = (float)nt_at(&x, r, j);
            uint64_t got = nt_get(y.host, yt, (size_t)(r * n + j)), want = want_code(yt, xv, scale);
            if (got != want && bad++ < 5)
                fprintf(stderr, "%s: y[%lld][%lld] = 0x%02llx, want 0x%02llx (x %a, scale %a)\n",
                        mode, (long long)r, (long long)j, (unsigned long long)got,
                        (unsigned long long)want, xv, scale);
        }
    }
    CHECK_MSG(bad == 0, "%ld quantized codes or scales differ (%s, n %lld)", bad, mode,
              (long long)n);
done:
    free(s);
    nt_free(ctx, &x), nt_free(ctx, &y), nt_free(ctx, &ys);
}

static void test_ties(void)
{
    const int64_t ns[] = {1000, 999, 8192}; /* vectors of 4, 1 and 4 f32 (two words of codes) */
    for (int m = 0; m < 3; ++m)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; ++i) {
            if (m != 1) /* intcvt changes fp8 only */
                quant_ties(CK_DTYPE_I8, 40, ns[i], modes[m]);
            quant_ties(CK_DTYPE_FP8_E4M3, 40, ns[i], modes[m]);
        }
}

/* One forward of random bf16 rows; y's codes and the scales into yc (rows * n + rows bytes). */
static void forward_codes(ck_norm_kind kind, ck_dtype yt, int64_t rows, int64_t n, int res,
                          int smooth, const char *mode, unsigned char *yc)
{
    uint64_t rng = 99 + (uint64_t)n;
    nt_buf x, r, o, g, b, s, y, ys;
    memset(&r, 0, sizeof r), memset(&o, 0, sizeof o), memset(&s, 0, sizeof s);
    memset(&b, 0, sizeof b);
    double *v = malloc(sizeof(double) * (size_t)(rows * n));
    int ok = v && nt_alloc(ctx, &x, CK_DTYPE_BF16, rows, n, n, 0) &&
             nt_alloc(ctx, &y, yt, rows, n, n, 0) &&
             nt_alloc(ctx, &ys, CK_DTYPE_F32, 1, rows, rows, 1) &&
             nt_alloc(ctx, &g, CK_DTYPE_BF16, 1, n, n, 1) &&
             (kind != CK_NORM_LAYERNORM || nt_alloc(ctx, &b, CK_DTYPE_BF16, 1, n, n, 1)) &&
             (!res || (nt_alloc(ctx, &r, CK_DTYPE_BF16, rows, n, n, 0) &&
                       nt_alloc(ctx, &o, CK_DTYPE_BF16, rows, n, n, 0))) &&
             (!smooth || nt_alloc(ctx, &s, CK_DTYPE_F32, 1, n, n, 1));
    CHECK(ok);
    if (ok) {
        nt_fill(&x, v, -3.0, 5.0, &rng);
        nt_fill(&g, v, 0.5, 1.5, &rng);
        nt_upload(ctx, &x), nt_upload(ctx, &g);
        if (b.dev)
            nt_fill(&b, v, -0.5, 0.5, &rng), nt_upload(ctx, &b);
        if (res)
            nt_fill(&r, v, -1.0, 1.0, &rng), nt_upload(ctx, &r);
        if (smooth)
            nt_fill(&s, v, 0.25, 2.0, &rng), nt_upload(ctx, &s);
        ck_norm_forward_desc d;
        memset(&d, 0, sizeof d);
        d.kind = kind;
        d.epsilon = 1e-5f;
        d.x = &x.ten, d.y = &y.ten, d.gamma = &g.ten, d.y_scale = &ys.ten;
        d.beta = b.dev ? &b.ten : NULL;
        d.residual = res ? &r.ten : NULL;
        d.residual_out = res ? &o.ten : NULL;
        d.smooth = smooth ? &s.ten : NULL;
        setenv("CK_NORM_QUANT", mode, 1);
        CHECK_OK(ck_norm_forward(ctx, &d));
        unsetenv("CK_NORM_QUANT");
        CHECK_OK(ck_context_synchronize(ctx));
        nt_download(ctx, &y), nt_download(ctx, &ys);
        memcpy(yc, y.host, (size_t)(rows * n));
        memcpy(yc + rows * n, ys.host, (size_t)rows * 4);
    }
    free(v);
    nt_free(ctx, &x), nt_free(ctx, &y), nt_free(ctx, &ys), nt_free(ctx, &g);
    nt_free(ctx, &b), nt_free(ctx, &r), nt_free(ctx, &o), nt_free(ctx, &s);
}

static void test_same_bits(void)
{
    const struct {
        ck_norm_kind kind;
        ck_dtype yt;
        int64_t rows, n;
        int res, smooth;
    } cs[] = {
        {CK_NORM_LAYERNORM, CK_DTYPE_FP8_E4M3, 24, 8192, 0, 0}, /* 256 threads, f32 or raw */
        {CK_NORM_LAYERNORM, CK_DTYPE_I8, 24, 8192, 0, 0},
        {CK_NORM_RMSNORM, CK_DTYPE_I8, 24, 8192, 1, 1},        /* f32 cache of y */
        {CK_NORM_LAYERNORM, CK_DTYPE_FP8_E4M3, 40, 256, 0, 1}, /* lane groups */
        {CK_NORM_RMSNORM, CK_DTYPE_FP8_E4M3, 2, 70000, 1, 0},  /* the looped pipeline */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        size_t bytes = (size_t)(cs[i].rows * cs[i].n + cs[i].rows * 4);
        unsigned char *a = malloc(bytes), *e = malloc(bytes);
        CHECK(a && e);
        if (a && e) {
            forward_codes(cs[i].kind, cs[i].yt, cs[i].rows, cs[i].n, cs[i].res, cs[i].smooth,
                          "exact", e);
            const char *ways[3] = {"fast", "recompute", "intcvt"};
            for (int w = 0; w < 3; ++w) {
                forward_codes(cs[i].kind, cs[i].yt, cs[i].rows, cs[i].n, cs[i].res, cs[i].smooth,
                              ways[w], a);
                size_t diff = 0;
                for (size_t k = 0; k < bytes; ++k)
                    diff += a[k] != e[k];
                CHECK_MSG(diff == 0, "case %zu, %s: %zu bytes of codes / scales differ", i, ways[w],
                          diff);
            }
        }
        free(a), free(e);
    }
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_ties);
    RUN_TEST(test_same_bits);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
