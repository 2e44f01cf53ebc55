/*
 * Softmax's tile windows (CK_SOFTMAX_WINDOW=1, tuning text regs,...,1; src/ops/softmax/
 * window.c): for register instances of several shapes (warp rows of 4 rows a block, blocks,
 * clusters of 2 and 4 blocks taking turns by rounds, rows that do not fill the last round, row
 * strides past the row, f32 and bf16, element and 16-byte accesses), the x encoding maps
 * register j * VEC + k of thread (row, tid) to the column of smx_vi (checked on the host with
 * ck_dist_calculate_x); the generated x window, run on the device, loads every register from the
 * element the descriptor names (the fill past the row end or the last row) and the y window
 * stores every register of a round there and nowhere else. The generated source compiles with
 * NVRTC for sm_90a. Then ck_softmax through the windows on odd shapes and random data, every
 * element against the CPU reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "ck/ck.h"
#include "ops/softmax/softmax_internal.h"
#include "ops/softmax/softmax_plan.h"
#include "rt/runtime_internal.h"

typedef struct wcase {
    long long n, rows, stride;
    int ti, vec, wide, g, nv, cluster, rpb, raw;
} wcase;

static smx_plan plan_of(const wcase *c)
{
    smx_plan p;
    memset(&p, 0, sizeof p);
    p.ti = p.to = p.tm = c->ti;
    p.n = c->n, p.vec = c->vec, p.wide_x = p.wide_y = c->wide;
    p.g = c->g, p.nv = c->nv, p.cluster = c->cluster, p.rows_per_block = c->rpb, p.raw = c->raw;
    p.window = 1;
    return p;
}

static unsigned pattern(long long i)
{
    return (unsigned)(i * 7 + 3) % 32749u + 1u;
}

static void put(void *m, int ti, long long i, unsigned v)
{
    if (ti == 0)
        ((float *)m)[i] = (float)v;
    else
        ((unsigned short *)m)[i] = (unsigned short)v;
}

static unsigned get(const void *m, int ti, long long i)
{
    return ti == 0 ? (unsigned)((const float *)m)[i] : ((const unsigned short *)m)[i];
}

/* host: every (thread, register) of the x encoding is the pipeline's (row, round, column) */
static void check_encoding(const wcase *c, const smx_plan *p)
{
    ck_op_window w;
    CHECK_OK(ck_smx_window_spec(p, 'x', &w));
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&w.enc, &dist));
    ck_op_window_free(&w);
    long long bad = 0;
    for (int t = 0; t < c->g * c->rpb; ++t)
        for (int j = 0; j < c->nv; ++j)
            for (int k = 0; k < c->vec; ++k) {
                int pi[1] = {t}, y[2] = {j, k}, x[3] = {0, 0, 0};
                CHECK_OK(ck_dist_calculate_x(&dist, pi, y, x));
                /* column of smx_vi: ((j * C + rank) * G + tid) * VEC + k = X1 * C * G * VEC +
                 * origin (rank * G * VEC) + X2 */
                bad += x[0] != t / c->g || x[1] != j || x[2] != (t % c->g) * c->vec + k;
            }
    CHECK_MSG(bad == 0, "n %lld g %d c %d: %lld registers off smx_vi's columns", c->n, c->g,
              c->cluster, bad);
}

static void run_case(const wcase *c)
{
    smx_plan p = plan_of(c);
    check_encoding(c, &p);
    ck_sbuf b = {0};
    CHECK_OK(ck_smx_windows(&p, &b));
    if (!b.s)
        return;
    CHECK_MSG(!c->wide || (strstr(b.s, "ck_ld16_nc(") && strstr(b.s, "ck_st16(")),
              "n %lld: no 16-byte accesses in the windows", c->n);
    CHECK_MSG(!strstr(b.s, "element by element"), "n %lld: vectors split at the row end", c->n);
    ck_sbuf_printf(&b,
                   "CK_KERNEL void kload(const void *x, smx_win_x_t *out, long long first,"
                   " long long col0, long long rows, long long xs)\n{\n"
                   "    smx_win_x_t regs[CK_NREGS_x];\n"
                   "    ck_win_x w = smx_win_x_at(x, first, col0, rows, xs);\n"
                   "    load_x(regs, &w);\n"
                   "    for (int i = 0; i < CK_NREGS_x; ++i)\n"
                   "        out[ck_thread_idx_x() * CK_NREGS_x + i] = regs[i];\n}\n"
                   "CK_KERNEL void kstore(void *y, const smx_win_y_t *in, long long first,"
                   " long long round, long long col0, long long rows, long long ys)\n{\n"
                   "    smx_win_y_t regs[CK_NREGS_y];\n"
                   "    for (int i = 0; i < CK_NREGS_y; ++i)\n"
                   "        regs[i] = in[ck_thread_idx_x() * CK_NREGS_y + i];\n"
                   "    ck_win_y w = smx_win_y_at(y, first, round, col0, rows, ys);\n"
                   "    store_y(regs, &w);\n}\n");
    char *src = malloc(b.len + 64);
    snprintf(src, b.len + 64, "#include \"ck_device.h\"\n%s", b.s);
    free(b.s);
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        void *cubin = NULL;
        size_t size = 0;
        CHECK_MSG(ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) == CK_SUCCESS,
                  "NVRTC: %s", ck_last_error());
        free(cubin);
    }
    ck_device *dev = ckk_open();
    ck_module *m = NULL;
    ck_kernel *kl = NULL, *ks = NULL;
    ck_status st = ck_module_load(dev, src, NULL, 0, &m);
    CHECK_MSG(st == CK_SUCCESS, "load: %s", ck_last_error());
    free(src);
    if (st || ck_module_get_kernel(m, "kload", &kl) || ck_module_get_kernel(m, "kstore", &ks))
        return;
    const int es = c->ti == 0 ? 4 : 2, threads = c->g * c->rpb, nregs = c->nv * c->vec;
    const long long elems = c->rows * c->stride, gv = (long long)c->g * c->vec;
    const unsigned fill = c->raw ? 0xff80u : 0u;
    unsigned char *mem = malloc((size_t)(elems * es)), *out = malloc((size_t)threads * nregs * es);
    unsigned char *want = malloc((size_t)(elems * es));
    void *dmem = NULL, *dout = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(elems * es), &dmem));
    CHECK_OK(ck_malloc(dev, (size_t)threads * nregs * es, &dout));
    for (long long i = 0; i < elems; ++i)
        put(mem, c->ti, i, pattern(i));
    CHECK_OK(ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL));
    ck_launch_config cfg = {{1, 1, 1}, {(unsigned)threads, 1, 1}, {0, 0, 0}, 0, NULL};
    long long stride = c->stride, rows = c->rows;
    for (long long first = 0; first < c->rows; first += c->rpb)
        for (long long rank = 0; rank < c->cluster; ++rank) {
            long long col0 = rank * gv, wrong = 0;
            void *a[6] = {&dmem, &dout, &first, &col0, &rows, &stride};
            size_t s[6] = {sizeof dmem, sizeof dout, 8, 8, 8, 8};
            CHECK_OK(ck_launch(kl, &cfg, a, s, 6));
            CHECK_OK(ck_memcpy_d2h(dev, out, dout, (size_t)threads * nregs * es, NULL));
            for (int t = 0; t < threads; ++t)
                for (int r = 0; r < nregs; ++r) {
                    long long row = first + t / c->g,
                              col = (((long long)(r / c->vec) * c->cluster + rank) * c->g +
                                     t % c->g) * c->vec + r % c->vec;
                    unsigned w = row < c->rows && col < c->n ? pattern(row * c->stride + col) : fill;
                    wrong += get(out, c->ti, (long long)t * nregs + r) != w;
                }
            CHECK_MSG(wrong == 0, "load n %lld g %d c %d first %lld rank %lld: %lld wrong", c->n,
                      c->g, c->cluster, first, rank, wrong);
        }
    /* store: every round of every block of every row group; nothing else written */
    for (long long i = 0; i < elems; ++i)
        put(mem, c->ti, i, 0);
    memcpy(want, mem, (size_t)(elems * es));
    CHECK_OK(ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL));
    for (long long first = 0; first < c->rows; first += c->rpb)
        for (long long rank = 0; rank < c->cluster; ++rank)
            for (long long j = 0; j < c->nv; ++j) {
                long long col0 = rank * gv;
                for (int t = 0; t < threads; ++t)
                    for (int k = 0; k < c->vec; ++k) {
                        long long row = first + t / c->g,
                                  col = ((j * c->cluster + rank) * c->g + t % c->g) * c->vec + k;
                        unsigned v = pattern(row * 131 + col * 3 + 7);
                        put(out, c->ti, (long long)t * c->vec + k, v);
                        if (row < c->rows && col < c->n)
                            put(want, c->ti, row * c->stride + col, v);
                    }
                CHECK_OK(ck_memcpy_h2d(dev, dout, out, (size_t)threads * c->vec * es, NULL));
                void *a[7] = {&dmem, &dout, &first, &j, &col0, &rows, &stride};
                size_t s[7] = {sizeof dmem, sizeof dout, 8, 8, 8, 8, 8};
                CHECK_OK(ck_launch(ks, &cfg, a, s, 7));
            }
    CHECK_OK(ck_memcpy_d2h(dev, mem, dmem, (size_t)(elems * es), NULL));
    long long wrong = 0;
    for (long long i = 0; i < elems; ++i)
        wrong += get(mem, c->ti, i) != get(want, c->ti, i);
    CHECK_MSG(wrong == 0, "store n %lld g %d c %d: %lld wrong elements", c->n, c->g, c->cluster,
              wrong);
    free(want);
    free(mem);
    free(out);
    ck_free(dev, dmem);
    ck_free(dev, dout);
}

static void test_windows(void)
{
    static const wcase cases[] = {
        /* n, rows, stride, type, vec, wide, g, nv, cluster, rows a block, raw */
        {1000, 7, 1004, 0, 4, 1, 32, 8, 1, 4, 0}, /* warp rows, last group partly past the end */
        {3000, 3, 3008, 2, 8, 1, 64, 3, 2, 1, 1}, /* bf16 raw, cluster of 2, padded last round */
        {999, 2, 1001, 0, 1, 0, 64, 4, 4, 1, 0},  /* odd n: element accesses, cluster of 4 */
        {2048, 2, 2048, 2, 8, 1, 128, 2, 1, 1, 0}, /* every round full: no mask */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(&cases[i]);
}

/* ---- ck_softmax through the windows, every element against the reference ------------------ */
static uint64_t rng = 0x51a7e5eedull;

static int last_span; /* the plan of the last softmax_case read rows over aligned spans */

/* ck_softmax on rows x n of x (row stride n + pad) into y (row stride n + pad + ypad); y's
 * columns past n must stay untouched. */
static void softmax_case_y(ck_context *ctx, long long rows, long long n, long long pad,
                           long long ypad, ck_dtype ti, ck_dtype to, int logsm, int causal,
                           int mask, double scale)
{
    const long long xs = n + pad, ys = xs + ypad, ysz = rows * ys;
    const size_t ei = ti == CK_DTYPE_F32 ? 4 : 2, eo = to == CK_DTYPE_F32 ? 4 : 2;
    ck_device *dev = ck_context_device(ctx);
    unsigned char *hx = calloc((size_t)(rows * xs), ei), *hy = malloc((size_t)ysz * eo);
    float *hm = calloc((size_t)n, 4);
    double *t = malloc(sizeof(double) * (size_t)n), *ref = malloc(sizeof(double) * (size_t)n);
    double *xv = malloc(sizeof(double) * (size_t)(rows * n));
    for (long long r = 0; r < rows; ++r)
        for (long long j = 0; j < n; ++j) {
            double v = (double)(ckt_rand64(&rng) >> 11) * (16.0 / 9007199254740992.0) - 8.0;
            uint64_t code = 0;
            ck_convert_from_f64(ti, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
            memcpy(hx + (size_t)(r * xs + j) * ei, &code, ei); /* little-endian */
            ck_convert_to_f64(ti, code, &xv[r * n + j]);
        }
    for (long long j = 0; j < n; ++j)
        hm[j] = (float)((double)(ckt_rand64(&rng) >> 11) * (4.0 / 9007199254740992.0) - 2.0);
    void *dx = NULL, *dy = NULL, *dm = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(rows * xs) * ei, &dx));
    CHECK_OK(ck_malloc(dev, (size_t)ysz * eo, &dy));
    memset(hy, 0x5a, (size_t)ysz * eo); /* y's sentinel: columns past n keep it */
    CHECK_OK(ck_memcpy_h2d(dev, dy, hy, (size_t)ysz * eo, NULL));
    CHECK_OK(ck_malloc(dev, (size_t)n * 4, &dm));
    CHECK_OK(ck_memcpy_h2d(dev, dx, hx, (size_t)(rows * xs) * ei, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dm, hm, (size_t)n * 4, NULL));
    int64_t shape[2] = {rows, n}, strides[2] = {xs, 1}, ystrides[2] = {ys, 1}, mshape[1] = {n};
    ck_tensor x, y, mk;
    CHECK_OK(ck_tensor_init(&x, dx, ti, 2, shape, strides));
    CHECK_OK(ck_tensor_init(&y, dy, to, 2, shape, ystrides));
    CHECK_OK(ck_tensor_init(&mk, dm, CK_DTYPE_F32, 1, mshape, NULL));
    ck_softmax_options o;
    ck_softmax_options_init(&o);
    o.log = logsm, o.causal = causal, o.scale = (float)scale;
    if (mask)
        o.mask = &mk;
    CHECK_MSG(ck_softmax(ctx, &x, &y, &o) == CK_SUCCESS, "%s", ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hy, dy, (size_t)ysz * eo, NULL));
    smx_plan plan;
    int64_t prows = 0;
    CHECK_OK(ck_smx_plan_of(ctx, &x, &y, &o, &plan, &prows));
    last_span = plan.span;
    long long bad = 0, outside = 0;
    for (long long r = 0; r < rows; ++r)
        for (long long j = n; j < ys; ++j)
            for (size_t b = 0; b < eo; ++b)
                outside += hy[(size_t)(r * ys + j) * eo + b] != 0x5a;
    CHECK_MSG(outside == 0, "[%lldx%lld] %lld bytes of y written past the rows", rows, n, outside);
    const double hu = to == CK_DTYPE_BF16 ? 1.0 / 256 : to == CK_DTYPE_F16 ? 1.0 / 2048 : 0x1p-24;
    for (long long r = 0; r < rows; ++r) {
        for (long long j = 0; j < n; ++j) {
            t[j] = (double)(float)scale * xv[r * n + j] + (mask ? hm[j] : 0.0);
            if (causal && j > r + (n - rows))
                t[j] = -INFINITY;
        }
        ck_softmax_ref_row(t, n, logsm, ref);
        for (long long j = 0; j < n; ++j) {
            uint64_t code = 0;
            double got = 0;
            memcpy(&code, hy + (size_t)(r * ys + j) * eo, eo);
            ck_convert_to_f64(to, code, &got);
            double tol = fabs(ref[j]) * (hu + 0x1p-15) + (logsm ? 0x1p-15 : 1e-37) +
                         (to == CK_DTYPE_F16 ? 0x1p-25 : 0.0); /* f16 subnormals */
            int ok = isnan(ref[j])   ? isnan(got)
                     : isinf(ref[j]) ? got == ref[j]
                                     : fabs(got - ref[j]) <= tol;
            if (!ok && bad++ < 3)
                CKT_FAIL_("[%lldx%lld log %d causal %d mask %d scale %g] y[%lld][%lld] = %.9g, "
                          "expected %.9g", rows, n, logsm, causal, mask, scale, r, j, got, ref[j]);
        }
    }
    CHECK(bad == 0);
    ck_free(dev, dx);
    ck_free(dev, dy);
    ck_free(dev, dm);
    free(hx);
    free(hy);
    free(hm);
    free(t);
    free(ref);
    free(xv);
}

static void softmax_case(ck_context *ctx, long long rows, long long n, long long pad, ck_dtype ti,
                         ck_dtype to, int logsm, int causal, int mask, double scale)
{
    softmax_case_y(ctx, rows, n, pad, 0, ti, to, logsm, causal, mask, scale);
}

static void test_softmax_windowed(void)
{
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create_for_device(ckk_open(), &ctx));
    if (!ctx)
        return;
    const ck_dtype B = CK_DTYPE_BF16, F = CK_DTYPE_F32, H = CK_DTYPE_F16;
    setenv("CK_SOFTMAX_WINDOW", "1", 1);
    softmax_case(ctx, 7, 1000, 4, B, B, 0, 0, 0, 1.0);   /* warp rows, 4 a block */
    softmax_case(ctx, 5, 333, 3, F, H, 1, 1, 1, 0.5);    /* odd n, mask, causal, log */
    softmax_case(ctx, 3, 4000, 8, H, F, 0, 1, 1, -0.75); /* block rows, negative scale */
    setenv("CK_SOFTMAX_INSTANCE", "64,2,1", 1);          /* clusters: raw bf16, f32 */
    softmax_case(ctx, 3, 3000, 8, B, B, 0, 1, 0, 1.0);
    softmax_case(ctx, 2, 1001, 0, F, F, 1, 0, 0, 2.0);
    setenv("CK_SOFTMAX_INSTANCE", "64,4,1", 1);
    softmax_case(ctx, 2, 3000, 0, B, F, 0, 0, 0, -1.5); /* raw, padded rounds, negative scale */
    unsetenv("CK_SOFTMAX_INSTANCE");
    unsetenv("CK_SOFTMAX_WINDOW");
    ck_context_destroy(ctx);
}

/* Rows whose 16-byte vectors are not aligned (odd N and row strides: every row has its own
 * head before its first 16-byte boundary) through windows over their aligned spans, in every
 * register instance family: warp rows, block rows, clusters of the f32 and the raw 16-bit
 * instances; f16, bf16, f32 in and out, log, scale, causal, masks whose rows are congruent with
 * x's (16-byte accesses) or not (the [N] mask: element accesses), y of another row stride (element
 * accesses); every element against the reference, y's gaps untouched. By default only rows of
 * more than 8192 elements take spans; CK_SOFTMAX_SPAN=1 at any length, =0 keeps element
 * accesses. */
static void test_softmax_spans(void)
{
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create_for_device(ckk_open(), &ctx));
    if (!ctx)
        return;
    const ck_dtype B = CK_DTYPE_BF16, F = CK_DTYPE_F32, H = CK_DTYPE_F16;
    /* the default: spans for rows longer than 8192 elements only */
    softmax_case(ctx, 2, 9001, 0, B, B, 0, 0, 0, 1.0);
    CHECK(last_span == 1);
    softmax_case(ctx, 6, 1023, 0, B, B, 0, 0, 0, 1.0);
    CHECK(last_span == 0);
    setenv("CK_SOFTMAX_SPAN", "1", 1); /* spans at any length, every instance family */
    softmax_case(ctx, 9, 201, 0, B, B, 0, 0, 0, 1.0); /* warp rows, 4 a block */
    CHECK(last_span == 1);
    softmax_case(ctx, 6, 1023, 0, B, F, 1, 0, 0, 0.5); /* block rows (1023 of GPT-like shapes) */
    CHECK(last_span == 1);
    softmax_case(ctx, 5, 4099, 0, H, H, 0, 1, 1, -0.75); /* [N] mask by elements, causal */
    CHECK(last_span == 1);
    softmax_case_y(ctx, 4, 2005, 2, 1, F, B, 0, 0, 0, 1.25); /* y by elements */
    CHECK(last_span == 1);
    setenv("CK_SOFTMAX_INSTANCE", "64,4,1", 1); /* clusters: raw bf16 (causal), f32 (mask) */
    softmax_case(ctx, 3, 3001, 0, B, B, 0, 1, 0, -1.5);
    CHECK(last_span == 1);
    softmax_case(ctx, 3, 1001, 0, F, F, 1, 0, 1, 2.0);
    CHECK(last_span == 1);
    setenv("CK_SOFTMAX_SPAN", "0", 1); /* the element accesses, reachable */
    softmax_case(ctx, 3, 3001, 0, B, B, 0, 1, 0, -1.5);
    CHECK(last_span == 0);
    unsetenv("CK_SOFTMAX_SPAN");
    unsetenv("CK_SOFTMAX_INSTANCE");
    ck_context_destroy(ctx);
}

/* The tuning text's window field steers the policy, and the kernel key separates the paths. */
static void test_window_knob(void)
{
    smx_knobs k;
    ck_smx_knobs_none(&k);
    CHECK(ck_smx_knobs_parse(&k, "regs,256,1,1,0,0,0,1") && k.window == 1);
    ck_smx_knobs_none(&k);
    CHECK(ck_smx_knobs_parse(&k, "regs,256,1,1,0,0,0") && k.window == -1);
    CHECK(!ck_smx_knobs_parse(&k, "regs,256,1,1,0,0,0,2"));
    wcase c = {2048, 2, 2048, 2, 8, 1, 128, 2, 1, 1, 0};
    smx_plan p = plan_of(&c);
    char a[512], b[512], name[64];
    CHECK_OK(ck_smx_plan_key(&p, a, sizeof a));
    ck_smx_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "regs,128,1,1,0,0,0,1");
    p.window = 0;
    CHECK_OK(ck_smx_plan_key(&p, b, sizeof b));
    CHECK(strcmp(a, b) != 0);
    ck_smx_instance_name(&p, name, sizeof name); /* the field is always named: windows are the */
    CHECK_EQ_STR(name, "regs,128,1,1,0,0,0,0");   /* default, so a text without it means 1 */
}

int main(void)
{
    RUN_TEST(test_window_knob);
    if (ckk_open()) {
        RUN_TEST(test_windows);
        RUN_TEST(test_softmax_windowed);
        RUN_TEST(test_softmax_spans);
    }
    ckk_close();
    return CK_TEST_REPORT();
}
