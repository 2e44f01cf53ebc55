/*
 * The layernorm / RMSNorm forward's tile windows (CK_NORM_WINDOW=1; src/ops/norm/window.c):
 * for instances of several shapes (row groups of 1 and 4 rows, rows past the last group's end,
 * row lengths that do not fill the last round, padded row strides, f32 and bf16), the
 * encoding maps register it * VEC + k of thread (row, lane) to column (it * G + lane) * VEC + k
 * (the register pipeline's vector order, checked on the host with ck_dist_calculate_x); the
 * generated x window, run on the device, loads every register from the element the
 * descriptor names (zeros past the last row or the row end) and the ro window stores every
 * register there and nowhere else. The generated source compiles with NVRTC for sm_90a.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "ops/norm/norm_internal.h"
#include "rt/runtime_internal.h"

typedef struct wcase {
    int64_t n, rows, stride; /* row length, rows, row stride (elements) */
    ck_dtype dt;
    int vec, g, block;
} wcase;

static ck_norm_instance instance_of(const wcase *c)
{
    ck_norm_instance in;
    memset(&in, 0, sizeof in);
    in.vec = c->vec, in.g = c->g, in.block = c->block, in.cluster = 1;
    in.iters = (int)((c->n / c->vec + c->g - 1) / c->g);
    in.cache = in.iters;
    in.window = 1;
    return in;
}

/* Element value pattern: distinct, exact in f32 and as 15-bit codes. */
static unsigned pattern(long long i)
{
    return (unsigned)(i * 7 + 3) % 32749u + 1u;
}

static void put(void *mem, ck_dtype dt, long long i, unsigned v)
{
    if (dt == CK_DTYPE_F32)
        ((float *)mem)[i] = (float)v;
    else
        ((unsigned short *)mem)[i] = (unsigned short)v;
}

static unsigned get(const void *mem, ck_dtype dt, long long i)
{
    return dt == CK_DTYPE_F32 ? (unsigned)((const float *)mem)[i] : ((const unsigned short *)mem)[i];
}

static void run_case(const wcase *c)
{
    ck_norm_instance in = instance_of(c);
    const int rpb = c->block / c->g, nregs = in.iters * c->vec;
    /* host: the encoding's X of every (thread, register) is the pipeline's (row, column) */
    ck_dist_encoding enc;
    ck_tile_window_spec w;
    CHECK_OK(ck_norm_window_spec(c->n, &in, "x", c->dt, "SX", &enc, &w));
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&enc, &dist));
    ck_norm_window_spec_free(&w);
    long long bad = 0;
    for (int t = 0; t < c->block; ++t)
        for (int it = 0; it < in.iters; ++it)
            for (int k = 0; k < c->vec; ++k) {
                int p[1] = {t}, y[2] = {it, k}, x[2] = {0, 0};
                CHECK_OK(ck_dist_calculate_x(&dist, p, y, x));
                bad += x[0] != t / c->g || x[1] != (it * c->g + t % c->g) * c->vec + k;
            }
    CHECK_MSG(bad == 0, "n %lld g %d block %d: %lld registers off the pipeline's columns",
              (long long)c->n, c->g, c->block, bad);
    /* device: the generated windows as the forward's source holds them */
    ck_norm_fwd_problem p;
    memset(&p, 0, sizeof p);
    p.n = c->n, p.xt = c->dt, p.rt = -1, p.ot = c->dt;
    char *win = ck_norm_fwd_window_source(&p, &in);
    CHECK_MSG(win != NULL, "window source: %s", ck_last_error());
    if (!win)
        return;
    CHECK_MSG(strstr(win, "ck_ld16_nc(") && strstr(win, "ck_st16("),
              "n %lld: no 16-byte accesses in the windows", (long long)c->n);
    size_t len = strlen(win) + 4096;
    char *src = malloc(len);
    snprintf(src, len,
             "#include \"ck_device.h\"\n%s"
             "CK_KERNEL void kload(const void *x, norm_win_x_t *out, long long base, long long sx,"
             " long long rows)\n{\n"
             "    norm_win_x_t regs[CK_NREGS_x];\n"
             "    ck_win_x w = norm_win_x_at(x, base, sx, rows);\n"
             "    load_x(regs, &w);\n"
             "    for (int i = 0; i < CK_NREGS_x; ++i)\n"
             "        out[ck_thread_idx_x() * CK_NREGS_x + i] = regs[i];\n}\n"
             "CK_KERNEL void kstore(void *y, const norm_win_ro_t *in, long long base, long long sy,"
             " long long rows)\n{\n"
             "    norm_win_ro_t regs[CK_NREGS_ro];\n"
             "    for (int i = 0; i < CK_NREGS_ro; ++i)\n"
             "        regs[i] = in[ck_thread_idx_x() * CK_NREGS_ro + i];\n"
             "    ck_win_ro w = norm_win_ro_at(y, base, sy, rows);\n"
             "    store_ro(regs, &w);\n}\n",
             win);
    free(win);
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "NVRTC: %s", ck_last_error());
        free(cubin);
    }
    ck_device *dev = ckk_open();
    ck_module *m = NULL;
    ck_kernel *kl = NULL, *ks = NULL;
    ck_status st = dev ? ck_module_load(dev, src, NULL, 0, &m) : CK_ERROR_INTERNAL;
    CHECK_MSG(st == CK_SUCCESS, "load: %s", ck_last_error());
    free(src);
    if (st || ck_module_get_kernel(m, "kload", &kl) || ck_module_get_kernel(m, "kstore", &ks))
        return;
    const int es = c->dt == CK_DTYPE_F32 ? 4 : 2;
    const long long elems = c->rows * c->stride, regs_all = (long long)c->block * nregs;
    unsigned char *mem = malloc((size_t)(elems * es)), *out = malloc((size_t)(regs_all * es));
    void *dmem = NULL, *dout = NULL;
    CHECK(mem && out && ck_malloc(dev, (size_t)(elems * es), &dmem) == CK_SUCCESS &&
          ck_malloc(dev, (size_t)(regs_all * es), &dout) == CK_SUCCESS);
    for (long long i = 0; i < elems; ++i)
        put(mem, c->dt, i, pattern(i));
    ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL);
    ck_launch_config cfg = {{1, 1, 1}, {(unsigned)c->block, 1, 1}, {0, 0, 0}, 0, NULL};
    long long stride = c->stride, rows = c->rows;
    for (long long base = 0; base < c->rows; base += rpb) {
        /* load: register (it, k) of thread t is element (base + t / G, column) or 0 */
        void *la[5] = {&dmem, &dout, &base, &stride, &rows};
        size_t ls[5] = {sizeof dmem, sizeof dout, 8, 8, 8};
        CHECK_OK(ck_launch(kl, &cfg, la, ls, 5));
        ck_memcpy_d2h(dev, out, dout, (size_t)(regs_all * es), NULL);
        long long wrong = 0;
        for (int t = 0; t < c->block; ++t)
            for (int r = 0; r < nregs; ++r) {
                long long row = base + t / c->g,
                          col = ((long long)(r / c->vec) * c->g + t % c->g) * c->vec + r % c->vec;
                unsigned want = row < c->rows && col < c->n ? pattern(row * c->stride + col) : 0;
                wrong += get(out, c->dt, (long long)t * nregs + r) != want;
            }
        CHECK_MSG(wrong == 0, "load n %lld rows %lld g %d block %d base %lld: %lld wrong registers",
                  (long long)c->n, (long long)c->rows, c->g, c->block, base, wrong);
    }
    /* store: every register where it belongs, the padding and nothing else written */
    unsigned char *want = malloc((size_t)(elems * es));
    for (long long i = 0; i < elems; ++i)
        put(mem, c->dt, i, 0);
    memcpy(want, mem, (size_t)(elems * es));
    ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL);
    for (long long base = 0; base < c->rows; base += rpb) {
        for (int t = 0; t < c->block; ++t)
            for (int r = 0; r < nregs; ++r) {
                long long row = base + t / c->g,
                          col = ((long long)(r / c->vec) * c->g + t % c->g) * c->vec + r % c->vec;
                unsigned v = pattern(base * 131 + (long long)t * nregs + r);
                put(out, c->dt, (long long)t * nregs + r, v);
                if (row < c->rows && col < c->n)
                    put(want, c->dt, row * c->stride + col, v);
            }
        ck_memcpy_h2d(dev, dout, out, (size_t)(regs_all * es), NULL);
        void *sa[5] = {&dmem, &dout, &base, &stride, &rows};
        size_t ss[5] = {sizeof dmem, sizeof dout, 8, 8, 8};
        CHECK_OK(ck_launch(ks, &cfg, sa, ss, 5));
    }
    ck_memcpy_d2h(dev, mem, dmem, (size_t)(elems * es), NULL);
    long long wrong = 0;
    for (long long i = 0; i < elems; ++i)
        wrong += get(mem, c->dt, i) != get(want, c->dt, i);
    CHECK_MSG(wrong == 0, "store n %lld rows %lld g %d block %d: %lld wrong elements",
              (long long)c->n, (long long)c->rows, c->g, c->block, wrong);
    free(want);
    free(mem);
    free(out);
    ck_free(dev, dmem);
    ck_free(dev, dout);
}

static void test_windows(void)
{
    static const wcase cases[] = {
        {1000, 7, 1008, CK_DTYPE_F32, 4, 32, 128},   /* 4 rows a block, partial last group */
        {1024, 3, 1024, CK_DTYPE_F32, 4, 64, 64},    /* one row a block: no row mask */
        {96, 5, 104, CK_DTYPE_F32, 4, 8, 32},        /* short rows, lane groups of 8 */
        {1000, 6, 1016, CK_DTYPE_BF16, 8, 32, 128},  /* bf16, N not filling the last round */
        {4096, 2, 4096, CK_DTYPE_BF16, 8, 128, 128}, /* bf16, every round full */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(&cases[i]);
}

/* The policy's condition: not for looped, cluster, partly cached or narrow-vector instances. */
static void test_window_ok(void)
{
    ck_norm_fwd_problem p;
    memset(&p, 0, sizeof p);
    p.n = 4096, p.xt = CK_DTYPE_BF16, p.rt = -1, p.ot = -1;
    wcase c = {4096, 8, 4096, CK_DTYPE_BF16, 8, 128, 128};
    ck_norm_instance in = instance_of(&c);
    CHECK(ck_norm_fwd_window_ok(&p, &in));
    in.raw = 1;
    CHECK(ck_norm_fwd_window_ok(&p, &in)); /* the raw cache packs the window's codes */
    in.raw = 0;
    in.cluster = 2;
    CHECK(!ck_norm_fwd_window_ok(&p, &in));
    in.cluster = 1;
    in.cache = in.iters - 1;
    CHECK(!ck_norm_fwd_window_ok(&p, &in));
    in.cache = in.iters;
    in.looped = 1;
    CHECK(!ck_norm_fwd_window_ok(&p, &in));
    in.looped = 0;
    in.vec = 4; /* 8-byte vectors */
    CHECK(!ck_norm_fwd_window_ok(&p, &in));
    in.vec = 8;
    p.rt = CK_DTYPE_F32; /* a residual of 32-byte vectors */
    CHECK(!ck_norm_fwd_window_ok(&p, &in));
}

int main(void)
{
    RUN_TEST(test_window_ok);
    if (ckk_open())
        RUN_TEST(test_windows);
    ckk_close();
    return CK_TEST_REPORT();
}
