/*
 * ck_softmax against a double-precision CPU reference (every element): odd and long rows
 * (1 ... 300,000: warp, block, cluster, staged and online instances; staged variants), row strides, scale, additive masks
 * (broadcast forms), causal masks, log-softmax, f32/f16/bf16 in and out, NaN/Inf, in place, and
 * the errors. Runs on the device CK_DEVICE chooses (the emulator in CI).
 *
 * Tolerance of each element, relative to |reference| (softmax values in [0, 1]; log-softmax
 * values): half an ulp of the output type (its rounding) plus 2^-15 for the fp32 computation
 * (inputs are at most ~30 in magnitude in the log2 domain: the exponent's argument carries an
 * absolute error of a few 2^-24 * 30 ~ 2^-19, exp2f 2 ulp, sums of up to 300,000 terms in fp32
 * ~ 2^-18 relative), plus an absolute 2^-15 for log-softmax (error of the subtracted log-sum)
 * and, for f16 output, half its smallest subnormal (2^-25: small probabilities are subnormal).
 * NaN must be NaN, infinities equal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/softmax/softmax_internal.h"
#include "test.h"

static ck_context *ctx;
static uint64_t rng = 0x5eed50f7a7a1ull;

static double urand(void)
{
    return (double)(ckt_rand64(&rng) >> 11) * (1.0 / 9007199254740992.0);
}

static size_t dsize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

/* Store v (rounded to t) at element i of the host buffer; returns the stored value. */
static double put(void *buf, int64_t i, ck_dtype t, double v)
{
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    if (t == CK_DTYPE_F32) {
        uint32_t c = (uint32_t)code;
        memcpy((char *)buf + 4 * i, &c, 4);
    } else {
        uint16_t c = (uint16_t)code;
        memcpy((char *)buf + 2 * i, &c, 2);
    }
    double back = 0;
    ck_convert_to_f64(t, code, &back);
    return back;
}

static double get(const void *buf, int64_t i, ck_dtype t)
{
    uint64_t code = 0;
    if (t == CK_DTYPE_F32) {
        uint32_t c;
        memcpy(&c, (const char *)buf + 4 * i, 4);
        code = c;
    } else {
        uint16_t c;
        memcpy(&c, (const char *)buf + 2 * i, 2);
        code = c;
    }
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static double half_ulp(ck_dtype t)
{
    return t == CK_DTYPE_BF16 ? 1.0 / 256 : t == CK_DTYPE_F16 ? 1.0 / 2048 : 1.0 / 16777216;
}

enum { MASK_NONE, MASK_ROW, MASK_FULL, MASK_BATCH }; /* [N], [rows, N], [B, 1, N] */
enum { SPECIAL_NONE, SPECIAL_INF };

typedef struct tcase {
    int64_t b, m, n; /* x is [b, m, n] */
    int64_t pad;     /* row stride = n + pad */
    ck_dtype ti, to, tm;
    int logsm, mask, causal, special, inplace;
    double scale;
} tcase;

static void run(tcase c)
{
    int64_t rows = c.b * c.m, xs = c.n + c.pad;
    size_t xbytes = (size_t)(rows * xs) * dsize(c.ti), ybytes = (size_t)(rows * xs) * dsize(c.to);
    int64_t mrows = c.mask == MASK_ROW     ? 1
                    : c.mask == MASK_FULL  ? rows
                    : c.mask == MASK_BATCH ? c.b
                                           : 0;
    size_t mbytes = (size_t)(mrows * c.n) * dsize(c.tm);
    void *hx = calloc(1, xbytes), *hy = malloc(ybytes), *hm = calloc(1, mbytes + 2);
    double *xv = malloc(sizeof(double) * (size_t)(rows * c.n));
    double *mv = malloc(sizeof(double) * (size_t)(mrows * c.n + 1));
    double *t = malloc(sizeof(double) * (size_t)c.n), *ref = malloc(sizeof(double) * (size_t)c.n);
    if (!hx || !hy || !hm || !xv || !mv || !t || !ref) {
        CHECK(0);
        goto out;
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < c.n; ++j) {
            double v = urand() * 16 - 8;
            if (c.special == SPECIAL_INF) {
                int kind = (int)(r % 5);
                if (kind == 1 && j == c.n / 2)
                    v = NAN;
                if (kind == 2 && j == c.n / 3)
                    v = INFINITY;
                if (kind == 3 && j % 3 == 0)
                    v = -INFINITY;
                if (kind == 4)
                    v = -INFINITY;
            }
            xv[r * c.n + j] = put(hx, r * xs + j, c.ti, v);
        }
    for (int64_t i = 0; i < mrows * c.n; ++i)
        mv[i] = put(hm, i, c.tm, urand() < 0.1 ? -INFINITY : urand() * 8 - 4);
    void *dx = NULL, *dy = NULL, *dm = NULL;
    CHECK_OK(ck_malloc(ck_context_device(ctx), xbytes, &dx));
    CHECK_OK(ck_malloc(ck_context_device(ctx), ybytes, &dy));
    CHECK_OK(ck_malloc(ck_context_device(ctx), mbytes + 2, &dm));
    CHECK_OK(ck_memcpy_h2d(ck_context_device(ctx), dx, hx, xbytes, NULL));
    CHECK_OK(ck_memset_d8(ck_context_device(ctx), dy, 0xff, ybytes, NULL));
    CHECK_OK(ck_memcpy_h2d(ck_context_device(ctx), dm, hm, mbytes + 2, NULL));
    int64_t shape[3] = {c.b, c.m, c.n}, strides[3] = {c.m * xs, xs, 1};
    ck_tensor x, y, mk;
    CHECK_OK(ck_tensor_init(&x, dx, c.ti, 3, shape, strides));
    CHECK_OK(ck_tensor_init(&y, c.inplace ? dx : dy, c.to, 3, shape, strides));
    ck_softmax_options o;
    ck_softmax_options_init(&o);
    o.log = c.logsm;
    o.scale = (float)c.scale;
    o.causal = c.causal;
    if (c.mask == MASK_ROW) {
        int64_t ms[1] = {c.n};
        CHECK_OK(ck_tensor_init(&mk, dm, c.tm, 1, ms, NULL));
        o.mask = &mk;
    } else if (c.mask == MASK_FULL) {
        int64_t ms[3] = {c.b, c.m, c.n};
        CHECK_OK(ck_tensor_init(&mk, dm, c.tm, 3, ms, NULL));
        o.mask = &mk;
    } else if (c.mask == MASK_BATCH) {
        int64_t ms[3] = {c.b, 1, c.n};
        CHECK_OK(ck_tensor_init(&mk, dm, c.tm, 3, ms, NULL));
        o.mask = &mk;
    }
    ck_status st = ck_softmax(ctx, &x, &y, &o);
    CHECK_MSG(st == CK_SUCCESS, "ck_softmax %lldx%lldx%lld: %s", (long long)c.b, (long long)c.m,
              (long long)c.n, ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(ck_context_device(ctx), hy, c.inplace ? dx : dy, ybytes, NULL));
    long bad = 0;
    double worst = 0;
    double fl = (float)c.scale;
    for (int64_t r = 0; r < rows && st == CK_SUCCESS; ++r) {
        int64_t mrow = c.mask == MASK_ROW ? 0 : c.mask == MASK_FULL ? r : r / c.m;
        for (int64_t j = 0; j < c.n; ++j) {
            double v = fl * xv[r * c.n + j];
            if (c.mask != MASK_NONE)
                v += mv[mrow * c.n + j];
            if (c.causal && j > (r % c.m) + (c.n - c.m))
                v = -INFINITY;
            t[j] = v;
        }
        ck_softmax_ref_row(t, c.n, c.logsm, ref);
        for (int64_t j = 0; j < c.n; ++j) {
            double got = get(hy, r * xs + j, c.to), want = ref[j];
            int ok;
            if (isnan(want) || isinf(want))
                ok = isnan(want) ? isnan(got) : got == want;
            else {
                double tol = fabs(want) * (half_ulp(c.to) + 1.0 / 32768) +
                             (c.logsm ? 1.0 / 32768 : 1e-37) +
                             (c.to == CK_DTYPE_F16 ? ldexp(1.0, -25) : 0.0);
                ok = fabs(got - want) <= tol;
                if (fabs(got - want) / (fabs(want) + 1e-30) > worst)
                    worst = fabs(got - want) / (fabs(want) + 1e-30);
            }
            if (!ok && bad++ < 5)
                CKT_FAIL_("[%lldx%lldx%lld %s->%s log %d mask %d causal %d] y[%lld][%lld] = %.9g, "
                          "expected %.9g",
                          (long long)c.b, (long long)c.m, (long long)c.n, ck_dtype_name(c.ti),
                          ck_dtype_name(c.to), c.logsm, c.mask, c.causal, (long long)r,
                          (long long)j, got, want);
        }
    }
    CHECK(bad == 0);
    ck_free(ck_context_device(ctx), dx);
    ck_free(ck_context_device(ctx), dy);
    ck_free(ck_context_device(ctx), dm);
out:
    free(hx);
    free(hy);
    free(hm);
    free(xv);
    free(mv);
    free(t);
    free(ref);
}

static tcase base(int64_t b, int64_t m, int64_t n, ck_dtype ti, ck_dtype to)
{
    tcase c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.m = m;
    c.n = n;
    c.ti = ti;
    c.to = to;
    c.tm = CK_DTYPE_F32;
    c.scale = 1.0;
    return c;
}

static void test_lengths(void)
{
    const ck_dtype B = CK_DTYPE_BF16, H = CK_DTYPE_F16, F = CK_DTYPE_F32;
    int64_t ns[] = {1, 3, 17, 1023, 1024, 4097, 8192};
    ck_dtype tis[] = {B, H, F, B, F, H, B}, tos[] = {B, F, H, F, F, B, B};
    for (int i = 0; i < 7; ++i) {
        tcase c = base(1, ns[i] <= 1024 ? 9 : 3, ns[i], tis[i], tos[i]);
        run(c);
        c.logsm = 1;
        c.pad = 8;
        run(c);
    }
    run(base(1, 1, 32768, B, B));       /* block of 1024, 32 per thread */
    run(base(1, 2, 65536, B, F));       /* cluster of 4 x 256 */
    run(base(1, 1, 65537, F, B));       /* odd: elements, cluster of 4 */
    run(base(1, 1, 262144, B, B));      /* cluster of 16 */
    run(base(1, 1, 300000, B, B));      /* online, 16-byte vectors */
    tcase c = base(1, 2, 270001, H, F); /* online, elements, log, mask */
    c.logsm = 1;
    c.mask = MASK_ROW;
    run(c);
}

static void test_masks(void)
{
    const ck_dtype B = CK_DTYPE_BF16, F = CK_DTYPE_F32;
    tcase c = base(2, 5, 40, B, B);
    c.scale = 0.125;
    c.mask = MASK_FULL;
    c.tm = B;
    run(c);
    c.mask = MASK_BATCH;
    c.tm = F;
    c.causal = 1;
    run(c);
    c = base(2, 5, 41, B, B); /* odd rows: the full mask's rows share x's heads (16-byte) */
    c.mask = MASK_FULL;
    c.scale = -0.5;
    run(c);
    c = base(3, 7, 7, F, F); /* square causal */
    c.causal = 1;
    run(c);
    c = base(2, 6, 4, F, B); /* M > N: the first two rows of each batch are fully masked: NaN */
    c.causal = 1;
    c.logsm = 1;
    run(c);
    c = base(1, 4, 3000, B, B); /* causal with a cache of 2996 positions, block instance */
    c.causal = 1;
    c.mask = MASK_ROW;
    c.scale = -2.0;
    run(c);
}

static void test_special(void)
{
    int64_t ns[] = {7, 1000, 5000, 70000};
    for (int i = 0; i < 4; ++i)
        for (int lg = 0; lg < 2; ++lg) {
            tcase c = base(1, 5, ns[i], CK_DTYPE_BF16, CK_DTYPE_F32);
            c.special = SPECIAL_INF;
            c.logsm = lg;
            run(c);
        }
    tcase c = base(1, 3, 2048, CK_DTYPE_F16, CK_DTYPE_F16);
    c.inplace = 1;
    run(c);
}

/* The staged instance's variants (CK_SOFTMAX_VARIANT): threads, blocks per row, one or two
 * stages, grids of several clusters with rows left over (persistent loop), parts that do not
 * divide, f32 x (two 16-byte units per vector), causal, log, row strides, in place. */
static void test_staged(void)
{
    const ck_dtype B = CK_DTYPE_BF16, H = CK_DTYPE_F16, F = CK_DTYPE_F32;
    struct {
        const char *variant;
        tcase c;
    } v[6];
    v[0].variant = "staged,256,2,1,0";
    v[0].c = base(1, 3, 32768, B, B);
    v[0].c.causal = 1;
    v[0].c.logsm = 1;
    v[0].c.inplace = 1;
    v[1].variant = "staged,1024,4,2,0";
    v[1].c = base(1, 5, 40008, H, F); /* 5001 vectors: the last part is shorter */
    v[2].variant = "staged,512,2,2,0";
    v[2].c = base(1, 4, 20000, F, B);
    v[2].c.pad = 4; /* y rows not 16-byte aligned: element stores */
    v[2].c.scale = 0.5;
    v[3].variant = "staged,512,1,2,4"; /* 5 clusters for 9 rows */
    v[3].c = base(1, 9, 34000, B, H);
    v[3].c.causal = 1;
    v[4].variant = "staged,256,2,2,8"; /* 6 clusters of 2 */
    v[4].c = base(2, 3, 16384, B, B);
    v[4].c.logsm = 1;
    v[5].variant = "staged,128,8,2,0";
    v[5].c = base(1, 3, 8200, F, F);
    for (int i = 0; i < 6; ++i) {
        setenv("CK_SOFTMAX_VARIANT", v[i].variant, 1);
        run(v[i].c);
    }
    unsetenv("CK_SOFTMAX_VARIANT");
}

/* Register instances over clusters (CK_SOFTMAX_INSTANCE=G,C,1), several rows, both reduction
 * forms: each block pushes its partial results into every block of its cluster. */
static void test_clusters(void)
{
    const ck_dtype B = CK_DTYPE_BF16, H = CK_DTYPE_F16, F = CK_DTYPE_F32;
    struct {
        const char *inst, *red;
        tcase c;
    } v[6];
    v[0].inst = ""; /* the default: 8 x 128 threads, 128 values each */
    v[0].red = "two";
    v[0].c = base(1, 3, 131072, B, B);
    v[1].inst = "512,4,1";
    v[1].red = "pair";
    v[1].c = base(1, 3, 131072, H, F);
    v[1].c.logsm = 1;
    v[2].inst = "1024,2,1";
    v[2].red = "two";
    v[2].c = base(2, 3, 65536, B, B); /* causal */
    v[2].c.causal = 1;
    v[2].c.scale = 0.5;
    v[3].inst = "256,8,1";
    v[3].red = "pair";
    v[3].c = base(1, 4, 20000, B, B); /* the last round of vectors is partial */
    v[3].c.inplace = 1;
    v[4].inst = "256,16,1";
    v[4].red = "two";
    v[4].c = base(1, 2, 262144, B, F);
    v[4].c.pad = 16;
    v[5].inst = "1024,2,1";
    v[5].red = "pair";
    v[5].c = base(1, 3, 30000, F, F); /* f32 x: the f32 register instance */
    for (int i = 0; i < 6; ++i) {
        if (v[i].inst[0])
            setenv("CK_SOFTMAX_INSTANCE", v[i].inst, 1);
        else
            unsetenv("CK_SOFTMAX_INSTANCE");
        setenv("CK_SOFTMAX_RED", v[i].red, 1);
        run(v[i].c);
    }
    unsetenv("CK_SOFTMAX_INSTANCE");
    unsetenv("CK_SOFTMAX_RED");
}

/* On a GPU: the benchmark's sizes too (every element still checked). */
static void test_gpu_large(void)
{
    if (ck_context_backend(ctx) != CK_BACKEND_CUDA) {
        printf("not on a GPU: large sizes skipped\n");
        return;
    }
    /* several waves of every instance; the full benchmark sizes are checked by `ck prof` */
    run(base(1, 2048, 8192, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 80, 262144, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 4, 1 << 20, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 1000, 32768, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 300, 65536, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 150, 131072, CK_DTYPE_F16, CK_DTYPE_F32));
    run(base(1, 30, 300000, CK_DTYPE_BF16, CK_DTYPE_BF16));
    run(base(1, 100, 65536, CK_DTYPE_F32, CK_DTYPE_F32));
    tcase c = base(8, 512, 2048, CK_DTYPE_BF16, CK_DTYPE_F32);
    c.causal = 1;
    c.mask = MASK_BATCH;
    c.logsm = 1;
    run(c);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    if (!ctx)
        return 1;
    RUN_TEST(test_lengths);
    RUN_TEST(test_masks);
    RUN_TEST(test_special);
    RUN_TEST(test_staged);
    RUN_TEST(test_clusters);
    RUN_TEST(test_gpu_large);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
