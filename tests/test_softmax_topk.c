/*
 * ck_topk_softmax against the double CPU reference (exact indices; weights within half an ulp of
 * the weight type plus 2^-17 relative for the fp32 computation), ties (equal logits: lower index
 * first), NaN/-inf logits; the error cases of ck_softmax and ck_topk_softmax; the softmax
 * family's fast conversions against ck_convert bit for bit (run as a kernel on the device); and
 * an NVRTC sm_90a compile of every kind of generated kernel (skipped without NVRTC).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/softmax/softmax_internal.h"
#include "rt/runtime_internal.h"
#include "test.h"

static ck_context *ctx;
static uint64_t rng = 0x70b4e11ull;

static double urand(void)
{
    return (double)(ckt_rand64(&rng) >> 11) * (1.0 / 9007199254740992.0);
}

static size_t dsize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

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

/* tokens x experts logits with a padded row stride; ties: values drawn from few levels. */
static void run_topk(int64_t tokens, int64_t experts, int k, int renorm, ck_dtype ti, ck_dtype tw,
                     int ties, int special)
{
    ck_device *dev = ck_context_device(ctx);
    int64_t xs = experts + 3;
    size_t xb = (size_t)(tokens * xs) * dsize(ti), ib = (size_t)(tokens * k) * 4,
           wb = (size_t)(tokens * k) * dsize(tw);
    void *hx = calloc(1, xb), *hw = malloc(wb);
    int32_t *hi = malloc(ib), *ri = malloc(sizeof(int32_t) * (size_t)k);
    double *xv = malloc(sizeof(double) * (size_t)experts), *rw = malloc(sizeof(double) * (size_t)k);
    double *all = malloc(sizeof(double) * (size_t)(tokens * experts));
    void *dx = NULL, *di = NULL, *dw = NULL;
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t e = 0; e < experts; ++e) {
            double v = ties ? floor(urand() * 4) : urand() * 12 - 6;
            if (special && t % 3 == 1 && e == experts / 2)
                v = NAN;
            if (special && t % 3 == 2 && e % 2)
                v = -INFINITY;
            all[t * experts + e] = put(hx, t * xs + e, ti, v);
        }
    CHECK_OK(ck_malloc(dev, xb, &dx));
    CHECK_OK(ck_malloc(dev, ib, &di));
    CHECK_OK(ck_malloc(dev, wb, &dw));
    CHECK_OK(ck_memcpy_h2d(dev, dx, hx, xb, NULL));
    int64_t xshape[2] = {tokens, experts}, xstr[2] = {xs, 1}, oshape[2] = {tokens, k};
    ck_tensor x, ti_, tw_;
    CHECK_OK(ck_tensor_init(&x, dx, ti, 2, xshape, xstr));
    CHECK_OK(ck_tensor_init(&ti_, di, CK_DTYPE_I32, 2, oshape, NULL));
    CHECK_OK(ck_tensor_init(&tw_, dw, tw, 2, oshape, NULL));
    ck_status st = ck_topk_softmax(ctx, &x, k, renorm, &ti_, &tw_);
    CHECK_MSG(st == CK_SUCCESS, "topk %lldx%lld k %d: %s", (long long)tokens, (long long)experts, k,
              ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hi, di, ib, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, hw, dw, wb, NULL));
    long bad = 0;
    double hu = tw == CK_DTYPE_BF16 ? 1.0 / 256 : tw == CK_DTYPE_F16 ? 1.0 / 2048 : 0;
    for (int64_t t = 0; t < tokens && st == CK_SUCCESS; ++t) {
        memcpy(xv, all + t * experts, sizeof(double) * (size_t)experts);
        ck_topk_softmax_ref_row(xv, experts, k, renorm, ri, rw);
        for (int i = 0; i < k; ++i) {
            int32_t gi = hi[t * k + i];
            double gw = get(hw, t * k + i, tw);
            int ok = gi == ri[i] &&
                     (isnan(rw[i])
                          ? isnan(gw)
                          : fabs(gw - rw[i]) <= fabs(rw[i]) * (hu + 1.0 / 131072) +
                                                    (tw == CK_DTYPE_F16 ? ldexp(1, -25) : 1e-37));
            if (!ok && bad++ < 5)
                CKT_FAIL_("topk [%lld x %lld] k %d renorm %d token %lld #%d: index %d weight %.9g, "
                          "expected %d %.9g",
                          (long long)tokens, (long long)experts, k, renorm, (long long)t, i, gi, gw,
                          ri[i], rw[i]);
        }
    }
    CHECK(bad == 0);
    ck_free(dev, dx);
    ck_free(dev, di);
    ck_free(dev, dw);
    free(hx);
    free(hw);
    free(hi);
    free(ri);
    free(xv);
    free(rw);
    free(all);
}

static void test_topk(void)
{
    run_topk(37, 8, 2, 1, CK_DTYPE_F32, CK_DTYPE_F32, 0, 0);
    run_topk(33, 64, 6, 0, CK_DTYPE_BF16, CK_DTYPE_F32, 0, 0);
    run_topk(20, 256, 8, 1, CK_DTYPE_F16, CK_DTYPE_F32, 0, 0);
    run_topk(9, 60, 40, 0, CK_DTYPE_BF16, CK_DTYPE_BF16, 0, 0); /* k > 32 */
    run_topk(17, 128, 8, 1, CK_DTYPE_BF16, CK_DTYPE_F32, 1, 0); /* ties */
    run_topk(5, 1, 1, 0, CK_DTYPE_F32, CK_DTYPE_F16, 1, 0);
    run_topk(12, 100, 5, 0, CK_DTYPE_F32, CK_DTYPE_F32, 0, 1); /* NaN, -inf */
    run_topk(12, 100, 5, 1, CK_DTYPE_F32, CK_DTYPE_F32, 0, 1);
    run_topk(3, 1500, 4, 1, CK_DTYPE_BF16, CK_DTYPE_F32, 0, 0); /* 47 experts per lane */
}

static void test_errors(void)
{
    ck_device *dev = ck_context_device(ctx);
    void *d = NULL;
    CHECK_OK(ck_malloc(dev, 1 << 16, &d));
    int64_t s2[2] = {4, 8}, s3[2] = {4, 9}, sk[2] = {4, 2};
    ck_tensor x, y, bad, i8t, mask, idx, w;
    CHECK_OK(ck_tensor_init(&x, d, CK_DTYPE_F32, 2, s2, NULL));
    CHECK_OK(ck_tensor_init(&y, (char *)d + 4096, CK_DTYPE_BF16, 2, s2, NULL));
    CHECK_OK(ck_tensor_init(&bad, (char *)d + 8192, CK_DTYPE_F32, 2, s3, NULL));
    CHECK_OK(ck_tensor_init(&i8t, (char *)d + 8192, CK_DTYPE_I8, 2, s2, NULL));
    CHECK_STATUS(ck_softmax(NULL, &x, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_softmax(ctx, NULL, &y, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_softmax(ctx, &x, &bad, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_softmax(ctx, &i8t, &y, NULL), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "i8") != NULL);
    ck_tensor ov = y;
    ov.data = (char *)d + 16; /* overlaps x, not in place */
    CHECK_STATUS(ck_softmax(ctx, &x, &ov, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_tensor tr = x; /* transposed: last dimension not contiguous */
    tr.strides[0] = 1;
    tr.strides[1] = 8;
    tr.shape[0] = 8;
    tr.shape[1] = 4;
    ck_tensor ytr = tr;
    ytr.data = (char *)d + 4096;
    CHECK_STATUS(ck_softmax(ctx, &tr, &ytr, NULL), CK_ERROR_UNSUPPORTED);
    ck_softmax_options o;
    ck_softmax_options_init(&o);
    CHECK_OK(ck_tensor_init(&mask, (char *)d + 12288, CK_DTYPE_F32, 2, s3, NULL));
    o.mask = &mask;
    CHECK_STATUS(ck_softmax(ctx, &x, &y, &o), CK_ERROR_INVALID_ARGUMENT);
    o.mask = NULL;
    o.log = 2;
    CHECK_STATUS(ck_softmax(ctx, &x, &y, &o), CK_ERROR_INVALID_ARGUMENT);
    int64_t s0[2] = {0, 8};
    ck_tensor e0, e1;
    CHECK_OK(ck_tensor_init(&e0, NULL, CK_DTYPE_F32, 2, s0, NULL));
    CHECK_OK(ck_tensor_init(&e1, NULL, CK_DTYPE_F32, 2, s0, NULL));
    CHECK_OK(ck_softmax(ctx, &e0, &e1, NULL)); /* no elements: no-op */
    ck_tensor sc;
    CHECK_OK(ck_tensor_init(&sc, d, CK_DTYPE_F32, 0, NULL, NULL));
    CHECK_STATUS(ck_softmax(ctx, &sc, &sc, NULL), CK_ERROR_INVALID_ARGUMENT);

    CHECK_OK(ck_tensor_init(&idx, (char *)d + 16384, CK_DTYPE_I32, 2, sk, NULL));
    CHECK_OK(ck_tensor_init(&w, (char *)d + 20480, CK_DTYPE_F32, 2, sk, NULL));
    CHECK_OK(ck_topk_softmax(ctx, &x, 2, 1, &idx, &w));
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 0, 1, &idx, &w), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 9, 1, &idx, &w), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 3, 1, &idx, &w), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 2, 1, &w, &w), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 2, 1, &idx, &idx), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_topk_softmax(ctx, &i8t, 2, 1, &idx, &w), CK_ERROR_UNSUPPORTED);
    ck_tensor wov = w;
    wov.data = (char *)d + 16384 + 8;
    wov.dtype = CK_DTYPE_F32;
    CHECK_STATUS(ck_topk_softmax(ctx, &x, 2, 1, &idx, &wov), CK_ERROR_INVALID_ARGUMENT);
    int64_t big[2] = {1, 5000};
    ck_tensor xb;
    CHECK_OK(ck_tensor_init(&xb, d, CK_DTYPE_F32, 2, big, NULL));
    CHECK_STATUS(ck_topk_softmax(ctx, &xb, 2, 1, &idx, &w), CK_ERROR_UNSUPPORTED);
    CHECK_OK(ck_context_synchronize(ctx));
    ck_free(dev, d);
}

/* The fast conversions of softmax_common_kernel.h against ck_convert: every f16/bf16 code to
 * f32, and f32 values around every f16/bf16 rounding boundary (plus specials) back. */
static const char *conv_src =
    "#include \"ops/softmax/softmax_common_kernel.h\"\n"
    "CK_KERNEL void conv(uint32_t *out, const uint32_t *in, long long n)\n"
    "{\n"
    "    long long i = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();\n"
    "    if (i >= n) return;\n"
    "    uint32_t v = in[i];\n"
    "    out[4 * i] = ck_f32_as_u32(ck_fast_f16_to_f32(v & 0xffffu));\n"
    "    out[4 * i + 1] = ck_f32_as_u32(ck_fast_bf16_to_f32(v & 0xffffu));\n"
    "    out[4 * i + 2] = ck_fast_f32_to_f16(ck_u32_as_f32(v));\n"
    "    out[4 * i + 3] = ck_fast_f32_to_bf16(ck_u32_as_f32(v));\n"
    "}\n";

static void test_conversions(void)
{
    ck_device *dev = ck_context_device(ctx);
    const long long n = 65536 * 3;
    uint32_t *in = malloc(sizeof(uint32_t) * (size_t)n), *out = malloc(16 * (size_t)n);
    for (long long i = 0; i < n; ++i) {
        uint32_t r = (uint32_t)ckt_rand64(&rng);
        if (i < 65536)
            in[i] = (uint32_t)i; /* all 16-bit codes (also small f32 subnormals) */
        else if (i < 131072)
            in[i] = ((uint32_t)(i - 65536) << 13) +
                    ((r & 3) ? (r & 1 ? 0x1000u : 0xfffu) : r & 0x1fffu);
        else
            in[i] = ((uint32_t)(i - 131072) << 16) +
                    ((r & 3) ? (r & 1 ? 0x8000u : 0x7fffu) : r & 0xffffu);
    }
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    void *din = NULL, *dout = NULL;
    CHECK_OK(ck_module_load(dev, conv_src, NULL, 0, &mod));
    CHECK_OK(ck_module_get_kernel(mod, "conv", &k));
    CHECK_OK(ck_malloc(dev, 4 * (size_t)n, &din));
    CHECK_OK(ck_malloc(dev, 16 * (size_t)n, &dout));
    CHECK_OK(ck_memcpy_h2d(dev, din, in, 4 * (size_t)n, NULL));
    ck_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid[0] = (unsigned)((n + 255) / 256);
    cfg.block[0] = 256;
    long long pn = n;
    void *args[3] = {&dout, &din, &pn};
    size_t sizes[3] = {sizeof dout, sizeof din, sizeof pn};
    CHECK_OK(ck_launch(k, &cfg, args, sizes, 3));
    CHECK_OK(ck_device_synchronize(dev));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, 16 * (size_t)n, NULL));
    long bad = 0;
    for (long long i = 0; i < n; ++i) {
        float f16v = 0, bfv = 0, x;
        uint64_t c16 = 0, cbf = 0;
        ck_convert_to_f32(CK_DTYPE_F16, in[i] & 0xffffu, &f16v);
        ck_convert_to_f32(CK_DTYPE_BF16, in[i] & 0xffffu, &bfv);
        memcpy(&x, &in[i], 4);
        ck_convert_from_f32(CK_DTYPE_F16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c16);
        ck_convert_from_f32(CK_DTYPE_BF16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &cbf);
        float g16, gbf;
        memcpy(&g16, &out[4 * i], 4);
        memcpy(&gbf, &out[4 * i + 1], 4);
        int ok = (isnan(f16v) ? isnan(g16) : memcmp(&g16, &f16v, 4) == 0) &&
                 (isnan(bfv) ? isnan(gbf) : memcmp(&gbf, &bfv, 4) == 0) && out[4 * i + 2] == c16 &&
                 out[4 * i + 3] == cbf;
        if (!ok && bad++ < 5)
            CKT_FAIL_("conversion of 0x%08x: f16->f32 %a (want %a), bf16->f32 %a (want %a), "
                      "f32->f16 0x%04x (want 0x%04x), f32->bf16 0x%04x (want 0x%04x)",
                      in[i], g16, f16v, gbf, bfv, out[4 * i + 2], (unsigned)c16, out[4 * i + 3],
                      (unsigned)cbf);
    }
    CHECK(bad == 0);
    ck_free(dev, din);
    ck_free(dev, dout);
    free(in);
    free(out);
}

static void test_nvrtc(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    /* rows, n, ti, to, tm, mask bits, log, aligned: warp, block, cluster 2/4/8, online, staged
     * 1/2/4/8 (automatic), then staged variants (CK_SOFTMAX_VARIANT) */
    const long long cases[][8] = {
        {64, 1000, 2, 2, 0, 0, 0, 1},    {4096, 4096, 1, 0, 2, 1, 1, 1},
        {1, 8192, 0, 2, 0, 2, 0, 0},     {16, 32768, 2, 2, 0, 3, 0, 1},
        {16, 65536, 2, 1, 0, 0, 1, 1},   {16, 131072, 0, 0, 0, 0, 0, 1},
        {4, 262144, 2, 2, 2, 1, 0, 1},   {4, 1000001, 2, 0, 0, 2, 1, 0},
        {2, 1 << 20, 2, 2, 0, 0, 0, 1},  {9, 17, 1, 1, 1, 1, 1, 0},
        {16, 65536, 0, 0, 0, 0, 0, 1},   {16, 65536, 0, 0, 2, 1, 0, 1},
        {4, 131072, 2, 2, 0, 1, 0, 1},   {8, 40000, 2, 2, 0, 2, 0, 1},
        {8, 262144, 2, 2, 0, 0, 0, 1},   {8, 32768, 0, 2, 0, 0, 1, 1},
        {8, 300000, 1, 0, 0, 2, 1, 1},   {16384, 32768, 2, 2, 0, 0, 0, 1},
        {8192, 65536, 2, 2, 0, 0, 0, 1}, {4096, 131072, 2, 2, 0, 0, 0, 1},
        {2048, 262144, 2, 2, 0, 0, 0, 1}, {2048, 262144, 2, 2, 0, 0, 0, 1},
        {4096, 131072, 2, 2, 0, 0, 0, 1}, {8192, 65536, 2, 2, 0, 0, 0, 1},
        {16384, 32768, 2, 2, 0, 0, 0, 1},
        /* rows not 16-byte aligned, over aligned spans: raw cluster of 16, f32 cluster of 8,
         * block rows with mask, causal and log */
        {300, 212993, 2, 2, 0, 0, 0, 1}, {300, 212993, 0, 0, 0, 0, 0, 1},
        {64, 1023, 1, 0, 0, 3, 1, 1},
    };
    const char *variants[] = {
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, "staged,512,1,2,0", NULL, NULL, NULL, "staged,1024,8,2,0",
        "staged,256,8,1,3", "staged,1024,4,2,0", "staged,256,2,2,0", NULL, NULL, NULL,
    };
    int kinds_seen = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const long long *c = cases[i];
        char *src = NULL;
        int kind = 0;
        CHECK_OK(ck_smx_source(c[0], c[1], (int)c[2], (int)c[3], (int)c[4], (int)c[5], (int)c[6],
                               (int)c[7], variants[i], &src, &kind));
        kinds_seen |= 1 << (kind / 100 * 4 + (kind % 100 == 8   ? 3
                                              : kind % 100 == 4 ? 2
                                              : kind % 100 == 2 ? 1
                                                                : 0));
        void *cubin = NULL;
        size_t size = 0;
        ck_status st =
            src ? ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
        CHECK_MSG(st == CK_SUCCESS, "softmax case %zu: %s", i, ck_last_error());
        free(cubin);
        free(src);
    }
    CHECK_MSG(kinds_seen == (1 | 2 | 4 | 8 | 16 | 256 | 512 | 1024 | 2048), "kinds %#x",
              kinds_seen);
    const int tk[][5] = {{2, 0, 256, 8, 1}, {1, 2, 64, 40, 0}, {0, 1, 4096, 4, 1}};
    for (int i = 0; i < 3; ++i) {
        char *src = NULL;
        CHECK_OK(ck_tk_source(tk[i][0], tk[i][1], tk[i][2], tk[i][3], tk[i][4], &src));
        void *cubin = NULL;
        size_t size = 0;
        ck_status st =
            src ? ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
        CHECK_MSG(st == CK_SUCCESS, "topk case %d: %s", i, ck_last_error());
        free(cubin);
        free(src);
    }
    void *cubin = NULL;
    size_t size = 0;
    CHECK_OK(ck_nvrtc_compile(conv_src, "sm_90a", NULL, 0, &cubin, &size));
    free(cubin);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    if (!ctx)
        return 1;
    RUN_TEST(test_topk);
    RUN_TEST(test_errors);
    RUN_TEST(test_conversions);
    RUN_TEST(test_nvrtc);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
