/*
 * ck_reduce's tile windows (CK_REDUCE_WINDOW=1, tuning text row,...,1 / col,...,1;
 * src/ops/reduce/window.c). For row instances (a warp of lanes per output with several outputs a
 * block, a block of 128 threads per output; f32 and bf16 16-byte vectors, f32 element accesses)
 * and column instances (f32 and f16, m not a multiple of the vector), the encodings map every
 * (thread, register) to the read loop's element (checked on the host with ck_dist_calculate_x);
 * the generated windows x (whole tiles, no masks) and xe (the edge, masked), run on the device,
 * load every register from the element the descriptor names, zeros past the part's end or
 * column m. The main kernels' sources through windows compile with NVRTC for sm_90a. Then
 * ck_reduce through the windows on odd shapes (every op, split parts, argmax, NaN), every
 * element against the CPU reference; the knob and the kernel key. The strided row's gather
 * window (vb = 0, reduced dimensions merged) against the offsets of the reduced index's digits,
 * and ck_reduce through it on rank 3..6 permuted / padded / broadcast x, bit-identical to the
 * indexed stage.
 */
#include <stdio.h>

#include "kernel_harness.h"
#include "reduce_harness.h"
#include "rt/runtime_internal.h"

static ck_context *ctx;

typedef struct wcase {
    int kind;      /* 0 row, 1 column */
    ck_dtype dt;   /* x's type */
    int vb;        /* vector bytes */
    int a, b, u;   /* row: G, RPB; column: CT, RT; vectors in flight */
    long long len; /* elements (row) or reduced rows (column) of the part */
    long long m;   /* column: columns */
} wcase;

static rd_plan plan_of(const wcase *c)
{
    rd_plan p;
    memset(&p, 0, sizeof p);
    p.kind = p.kernel_kind = c->kind;
    p.ti = p.to = (int)c->dt;
    p.vb = c->vb;
    p.u = c->u;
    p.rd = p.kd = 1;
    if (c->kind == 0)
        p.g = c->a, p.rpb = c->b;
    else
        p.ct = c->a, p.rt = c->b;
    p.window = 1;
    return p;
}

static uint64_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static unsigned pattern(long long i)
{
    return (unsigned)(i * 7 + 3) % 32749u + 1u;
}

/* Window `name`'s shape: vectors a thread, units a vector (elements, or 32-bit words of a row's
 * 16-byte vectors of narrow elements: pack elements a unit). */
typedef struct wshape {
    int vectors, units, pack, edge;
} wshape;

static wshape shape_of(const wcase *c, const char *name)
{
    const int es = rt_size(c->dt), v = c->vb / es;
    wshape w;
    w.edge = name[1] != 0;
    w.vectors = w.edge ? 1 : c->u;
    w.pack = c->kind == 0 && name[1] != 'e' && c->vb == 16 && es < 4 ? 4 / es : 1;
    w.units = c->kind == 0 && name[1] == 'e' ? 1 : v / w.pack;
    return w;
}

/* the tile place (X0, X1) of register d (= u * units + k) of thread t, as the read loop walks
 * them: row (u * G + lane) * units + k; column (u * RT + ty, tx * units + k) */
static void expected_x(const wcase *c, const wshape *w, int t, int d, long long *x0, long long *x1)
{
    const int u = d / w->units, k = d % w->units;
    if (c->kind == 0) {
        *x0 = ((long long)u * c->a + t % c->a) * w->units + k;
        *x1 = 0;
    } else {
        *x0 = (long long)u * c->b + t / c->a;
        *x1 = (long long)(t % c->a) * w->units + k;
    }
}

static void check_encoding(const wcase *c, const rd_plan *p, const char *name, const wshape *ws)
{
    ck_op_window w;
    CHECK_OK(ck_reduce_window_spec(p, name, &w));
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&w.enc, &dist));
    const int ny = w.enc.ndim_y, nregs = ws->vectors * ws->units;
    ck_op_window_free(&w);
    long long bad = 0;
    for (int t = 0; t < c->a * c->b; ++t)
        for (int d = 0; d < nregs; ++d) {
            int pi[1] = {t}, y[2] = {d / ws->units, d % ws->units}, x[2] = {0, 0};
            if (ny == 1)
                y[0] = d % ws->units;
            CHECK_OK(ck_dist_calculate_x(&dist, pi, y, x));
            long long x0, x1;
            expected_x(c, ws, t, d, &x0, &x1);
            bad += x[0] != x0 || (c->kind == 1 && x[1] != x1);
        }
    CHECK_MSG(bad == 0, "kind %d window %s: %lld registers off the read loop's elements", c->kind,
              name, bad);
}

/* Loads window `name` at origin `at` (elements or rows) with length `bound` (elements or rows;
 * the window's descriptor takes both in its units) and checks every register of every thread
 * against memory (zeros where masked). */
static void load_case(const wcase *c, const char *name, long long at, long long bound)
{
    const int es = rt_size(c->dt);
    const wshape ws = shape_of(c, name);
    const int us = es * ws.pack, nregs = ws.vectors * ws.units, threads = c->a * c->b;
    const rd_plan p = plan_of(c);
    CHECK(ck_reduce_window_words(&p) == (c->kind == 0 && c->vb == 16 && es < 4));
    check_encoding(c, &p, name, &ws);
    ck_sbuf b = {0};
    CHECK_OK(ck_reduce_windows(&p, &b));
    if (!b.s)
        return;
    CHECK_MSG(c->vb != 16 || strstr(b.s, "ck_ld16_nc("), "no 16-byte loads in the windows");
    ck_sbuf_printf(&b,
                   "CK_KERNEL void kload(const void *x, long long at, long long bound, long long m,"
                   " long long sx, rd_win_%s_t *out)\n{\n"
                   "    rd_win_%s_t regs[CK_NREGS_%s];\n"
                   "    ck_win_%s w = rd_win_%s_at%s;\n"
                   "    load_%s(regs, &w);\n"
                   "    for (int i = 0; i < CK_NREGS_%s; ++i)\n"
                   "        out[ck_thread_idx_x() * CK_NREGS_%s + i] = regs[i];\n}\n",
                   name, name, name, name, name,
                   c->kind == 0 ? "(x, at, bound); (void)m; (void)sx" : "(x, at, 0, bound, m, sx)",
                   name, name, name);
    ck_device *dev = ckk_open();
    ck_kernel *kl = ckk_source_kernel(b.s, "kload");
    if (!kl)
        return;
    const int v = c->vb / es;
    const long long sx = c->kind == 0 ? 1 : (c->m + 5 + v - 1) / v * v; /* padded rows */
    const long long m = c->kind == 0 ? 1 : c->m, elems = c->len * sx + 64;
    at /= ws.pack;
    bound /= ws.pack;
    unsigned char *mem = calloc((size_t)elems, (size_t)es);
    unsigned char *out = calloc((size_t)threads * nregs, (size_t)us);
    for (long long i = 0; i < elems; ++i)
        rt_put(mem, es, i, c->dt == CK_DTYPE_F32 ? f32_bits((float)pattern(i)) : pattern(i));
    void *dmem = NULL, *dout = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(elems * es), &dmem));
    CHECK_OK(ck_malloc(dev, (size_t)threads * nregs * us, &dout));
    CHECK_OK(ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL));
    ck_launch_config cfg = {{1, 1, 1}, {(unsigned)threads, 1, 1}, {0, 0, 0}, 0, NULL};
    void *a[6] = {&dmem, &at, &bound, (void *)&m, (void *)&sx, &dout};
    size_t s[6] = {sizeof dmem, 8, 8, 8, 8, sizeof dout};
    CHECK_OK(ck_launch(kl, &cfg, a, s, 6));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, (size_t)threads * nregs * us, NULL));
    long long wrong = 0;
    for (int t = 0; t < threads; ++t)
        for (int d = 0; d < nregs; ++d) {
            long long x0, x1;
            expected_x(c, &ws, t, d, &x0, &x1);
            x0 += at;
            int valid = x0 < bound && x1 < m;
            uint64_t want = valid ? rt_get(mem, us, x0 * sx + x1) : 0;
            wrong += rt_get(out, us, (long long)t * nregs + d) != want;
        }
    CHECK_MSG(wrong == 0, "kind %d window %s at %lld: %lld registers wrong", c->kind, name, at,
              wrong);
    free(mem);
    free(out);
    ck_free(dev, dmem);
    ck_free(dev, dout);
}

/* Every window of the read loop over a part of c->len elements (rows), as the stage walks it. */
static void test_windows(void)
{
    static const wcase cases[] = {
        /* kind, type, vector bytes, G|CT, RPB|RT, U, part length, m */
        {0, CK_DTYPE_F32, 16, 8, 4, 4, 302, 0},      /* lanes of a warp, 4 outputs a block */
        {0, CK_DTYPE_BF16, 16, 128, 1, 4, 9003, 0},  /* a block per output, words */
        {0, CK_DTYPE_FP8_E4M3, 16, 4, 8, 4, 333, 0}, /* words of 4 elements */
        {0, CK_DTYPE_F32, 4, 32, 1, 8, 1001, 0},     /* odd row stride: element accesses */
        {1, CK_DTYPE_F32, 16, 8, 8, 4, 77, 29},      /* m not a multiple of the vector */
        {1, CK_DTYPE_F16, 16, 4, 16, 4, 133, 32},    /* m a multiple of the tile */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const wcase *c = &cases[i];
        const int v = c->vb / rt_size(c->dt);
        const long long tile = c->kind == 0 ? (long long)c->u * c->a * v : (long long)c->u * c->b;
        const long long whole = c->len / tile * tile, vend = c->len / v * v;
        if (whole > 0)
            load_case(c, "x", whole - tile, whole);
        if (c->kind == 1) {
            for (long long at = whole; at < c->len; at += c->b)
                load_case(c, "xe", at, c->len);
            continue;
        }
        for (long long at = whole; at < vend; at += (long long)c->a * v)
            load_case(c, "xv", at, vend);
        for (long long at = vend; at < c->len; at += c->a)
            load_case(c, "xe", at, c->len);
    }
}

/* ---- the strided row's window (vb = 0): xe over the merged reduced dimensions ------------- */

/* Window xe of a strided row instance (G lanes, RPB rows a block) over reduced dimensions
 * lens/strides (rank rd), loaded at origins 0, G, ... past n: every register against the
 * element the reduced index names (its digits in lens times the strides, computed here), zeros
 * at n and past. */
static void gather_case(ck_dtype dt, int g, int rpb, int rd, const long long *lens,
                        const long long *strides)
{
    const int es = rt_size(dt), threads = g * rpb;
    rd_plan p;
    memset(&p, 0, sizeof p);
    p.ti = p.to = (int)dt;
    p.g = g, p.rpb = rpb, p.u = 1, p.rd = rd, p.kd = 1, p.window = 1;
    CHECK(ck_reduce_window_ok(&p));
    ck_sbuf b = {0};
    CHECK_OK(ck_reduce_windows(&p, &b));
    if (!b.s)
        return;
    CHECK(strstr(b.s, "merge(") != NULL || rd == 1);
    ck_sbuf_printf(&b, "CK_KERNEL void kgather(const void *x, long long at, const long long *q,"
                       " rd_win_xe_t *out)\n{\n"
                       "    rd_win_xe_t regs[CK_NREGS_xe];\n"
                       "    ck_win_xe w = rd_win_xe_at(x, at, q[0], q[1], q[2], q[3], q[4], q[5],"
                       " q[6], q[7], q[8], q[9], q[10], q[11]);\n"
                       "    load_xe(regs, &w);\n"
                       "    out[ck_thread_idx_x()] = regs[0];\n}\n");
    ck_device *dev = ckk_open();
    ck_kernel *kl = ckk_source_kernel(b.s, "kgather");
    if (!kl)
        return;
    long long q[12], n = 1, elems = 1;
    for (int r = 0; r < 6; ++r) {
        q[r] = r < rd ? lens[r] : 1;
        q[6 + r] = r < rd ? strides[r] : 0;
        n *= q[r];
        elems += (q[r] - 1) * q[6 + r];
    }
    unsigned char *mem = calloc((size_t)elems, (size_t)es), *out = calloc(threads, (size_t)es);
    for (long long i = 0; i < elems; ++i)
        rt_put(mem, es, i, dt == CK_DTYPE_F32 ? f32_bits((float)pattern(i)) : pattern(i));
    void *dmem = NULL, *dout = NULL, *dq = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(elems * es), &dmem));
    CHECK_OK(ck_malloc(dev, (size_t)threads * es, &dout));
    CHECK_OK(ck_malloc(dev, sizeof q, &dq));
    CHECK_OK(ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * es), NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dq, q, sizeof q, NULL));
    long long wrong = 0;
    for (long long at = 0; at < n + g; at += g) {
        ck_launch_config cfg = {{1, 1, 1}, {(unsigned)threads, 1, 1}, {0, 0, 0}, 0, NULL};
        void *a[4] = {&dmem, &at, &dq, &dout};
        size_t s[4] = {sizeof dmem, 8, sizeof dq, sizeof dout};
        CHECK_OK(ck_launch(kl, &cfg, a, s, 4));
        CHECK_OK(ck_memcpy_d2h(dev, out, dout, (size_t)threads * es, NULL));
        for (int t = 0; t < threads; ++t) {
            long long j = at + t % g, off = 0;
            for (int r = rd - 1, k = (int)j; r >= 0; --r) { /* j's digits, innermost last */
                off += (long long)(k % lens[r]) * strides[r];
                k /= (int)lens[r];
            }
            uint64_t want = j < n ? rt_get(mem, es, off) : 0;
            wrong += rt_get(out, es, t) != want;
        }
    }
    CHECK_MSG(wrong == 0, "gather window rank %d: %lld registers wrong", rd, wrong);
    free(mem);
    free(out);
    ck_free(dev, dmem);
    ck_free(dev, dout);
    ck_free(dev, dq);
}

static void test_gather_windows(void)
{
    const long long l3[3] = {3, 5, 7}, s3[3] = {1, 300, 4}, l4[4] = {2, 3, 4, 5},
                    s4[4] = {70, 0, 1, 9}, l6[6] = {2, 3, 2, 3, 2, 5},
                    s6[6] = {1, 500, 7, 2, 90, 31};
    const long long l1[1] = {77}, s1[1] = {5};
    gather_case(CK_DTYPE_F32, 8, 4, 3, l3, s3);   /* lanes of a warp, 4 rows a block */
    gather_case(CK_DTYPE_BF16, 32, 1, 4, l4, s4); /* a broadcast dimension (stride 0) */
    gather_case(CK_DTYPE_FP8_E4M3, 64, 1, 6, l6, s6);
    gather_case(CK_DTYPE_F32, 16, 2, 1, l1, s1); /* one strided dimension */
}

/* ck_reduce over rank 3..6 permuted or padded x, several reduced dimensions (the strided row
 * instance): through the gather window against the reference, and bit-identical to the
 * indexed stage (same elements, same order). */
static void gather_reduce(ck_dtype xt, ck_dtype yt, ck_reduce_op op, int rank, const int64_t *shape,
                          int naxes, const int *axes, int mode, uint64_t seed)
{
    rt_problem p = rt_make(xt, yt, op, rank, shape, naxes, axes);
    p.mode = mode;
    ck_tensor x, y;
    int64_t st[6], ysh[6], yr = 0;
    uint64_t s = seed;
    rt_strides(rank, shape, mode, &s, st);
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, xt, rank, shape, st));
    for (int d = 0; d < rank; ++d) {
        int red = 0;
        for (int k = 0; k < naxes; ++k)
            red |= axes[k] == d;
        if (!red)
            ysh[yr++] = shape[d];
    }
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1ull << 40), yt, (int)yr, ysh, NULL));
    ck_reduce_plan_info info;
    CHECK_OK(ck_reduce_plan(ctx, op, &x, axes, naxes, &y, NULL, &info));
    CHECK_MSG(info.kind == 0 && info.vb == 0, "rank %d: not a strided row (%d %d %d)", rank,
              info.kind, info.vb, info.rd);
    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    setenv("CK_REDUCE_WINDOW", "1", 1);
    char *src = NULL;
    CHECK_OK(ck_reduce_source(ctx, op, &x, axes, naxes, &y, NULL, 0, &src));
    CHECK_MSG(src && strstr(src, "rd_row_read_gather(s, x,"), "rank %d: not the gather stage",
              rank);
    int major, minor;
    if (src && ck_nvrtc_version(&major, &minor) == CK_SUCCESS) { /* compiles for sm_90a */
        void *cubin = NULL;
        size_t size = 0;
        CHECK_MSG(ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) == CK_SUCCESS,
                  "NVRTC: %s", ck_last_error());
        free(cubin);
    }
    free(src);
    CHECK_EQ_INT(rt_run(ctx, &p, seed, &a, &na), 0);
    unsetenv("CK_REDUCE_WINDOW");
    CHECK_EQ_INT(rt_run(ctx, &p, seed, &b, &nb), 0);
    CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0,
              "rank %d %s: windows and indexing differ", rank, ck_reduce_op_name(op));
    free(a);
    free(b);
}

static void test_gather_reduce(void)
{
    const ck_dtype F = CK_DTYPE_F32, B = CK_DTYPE_BF16, H = CK_DTYPE_F16, I = CK_DTYPE_I32;
    int64_t a3[3] = {7, 5, 61}, a4[4] = {3, 4, 5, 33}, a5[5] = {2, 3, 4, 5, 7},
            a6[6] = {2, 3, 2, 5, 3, 7}, big[3] = {40, 2, 997};
    int x02[2] = {0, 2}, x13[2] = {1, 3}, x024[3] = {0, 2, 4}, x135[3] = {1, 3, 5}, x20[2] = {2, 0};
    gather_reduce(F, F, CK_REDUCE_SUM, 3, a3, 2, x02, RT_PERMUTED, 31);
    gather_reduce(B, I, CK_REDUCE_ARGMAX, 4, a4, 2, x13, RT_PERMUTED, 32);
    gather_reduce(H, F, CK_REDUCE_NORM2, 5, a5, 3, x024, RT_PADDED, 33);
    gather_reduce(F, I, CK_REDUCE_ARGMIN, 6, a6, 3, x135, RT_PERMUTED, 34);
    gather_reduce(B, B, CK_REDUCE_MAX, 6, a6, 3, x024, RT_BROADCAST, 35);
    gather_reduce(F, F, CK_REDUCE_MEAN, 3, big, 2, x20, RT_PERMUTED, 36); /* long rows */
    int64_t b6[6] = {3, 2, 5, 2, 3, 4};
    int x5[5] = {0, 1, 2, 3, 5};
    for (uint64_t seed = 40; seed < 46; ++seed) /* 1 to 5 strided dimensions */
        gather_reduce(seed & 1 ? F : B, seed & 2 ? I : F,
                      seed & 2 ? CK_REDUCE_ARGMAX : CK_REDUCE_SUM, 6, b6, 5, x5, RT_PERMUTED, seed);
}

/* ---- ck_reduce through the windows ------------------------------------------------------- */
static void reduce_case(ck_dtype xt, ck_dtype yt, ck_reduce_op op, int rank, const int64_t *shape,
                        int naxes, const int *axes, int mode, int special, uint64_t seed)
{
    rt_problem p = rt_make(xt, yt, op, rank, shape, naxes, axes);
    p.mode = mode;
    p.special = special;
    /* the source ck_reduce builds reads through the windows */
    ck_tensor x, y;
    int64_t st[6], ysh[6], yr = 0;
    uint64_t s = seed;
    rt_strides(rank, shape, mode, &s, st);
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, xt, rank, shape, st));
    for (int d = 0, k = 0; d < rank; ++d) {
        int red = 0;
        for (k = 0; k < naxes; ++k)
            red |= axes[k] == d;
        if (!red)
            ysh[yr++] = shape[d];
    }
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1ull << 40), yt, (int)yr, ysh, NULL));
    char *src = NULL;
    CHECK_OK(ck_reduce_source(ctx, op, &x, axes, naxes, &y, NULL, 0, &src));
    CHECK_MSG(src && (strstr(src, "_read_window(s, x,") || strstr(src, "_read_gather(s, x,")),
              "%s %s: not read through the windows", ck_reduce_op_name(op), ck_dtype_name(xt));
    free(src);
    CHECK_EQ_INT(rt_run(ctx, &p, seed, NULL, NULL), 0);
}

static void test_reduce_windowed(void)
{
    const ck_dtype F = CK_DTYPE_F32, B = CK_DTYPE_BF16, H = CK_DTYPE_F16, I = CK_DTYPE_I32;
    setenv("CK_REDUCE_WINDOW", "1", 1);
    int ax0 = 0, ax1 = 1, ax2 = 2;
    int64_t r1[2] = {5, 1023}, r2[2] = {2, 100003}, r3[3] = {3, 7, 333}, r4[2] = {9, 17};
    reduce_case(F, F, CK_REDUCE_SUM, 2, r1, 1, &ax1, RT_PACKED, 0, 1);    /* odd n, f32 */
    reduce_case(B, I, CK_REDUCE_ARGMAX, 2, r1, 1, &ax1, RT_PACKED, 3, 2); /* element, NaN */
    reduce_case(H, F, CK_REDUCE_NORM2, 2, r4, 1, &ax1, RT_PACKED, 0, 3);  /* short rows */
    reduce_case(F, F, CK_REDUCE_SUM, 2, r2, 1, &ax1, RT_PACKED, 0, 4);    /* split parts */
    reduce_case(F, I, CK_REDUCE_ARGMIN, 2, r2, 1, &ax1, RT_PACKED, 0, 5);
    reduce_case(B, B, CK_REDUCE_MAX, 3, r3, 1, &ax2, RT_PADDED, 0, 6); /* kept dims */
    int64_t c1[2] = {301, 77}, c2[3] = {3, 129, 203}, c3[2] = {1000, 320};
    for (int op = 1; op < 8; op += 2) /* columns: mean, min, norm2, argmin */
        reduce_case(F, op >= 6 ? I : F, (ck_reduce_op)op, 2, c1, 1, &ax0, RT_PACKED, 0,
                    10 + (uint64_t)op);
    reduce_case(H, H, CK_REDUCE_MAX, 3, c2, 1, &ax1, RT_PACKED, 0, 20); /* m odd, kept outer */
    reduce_case(B, F, CK_REDUCE_SUM, 2, c3, 1, &ax0, RT_PACKED, 0, 21); /* split columns */
    reduce_case(B, I, CK_REDUCE_ARGMAX, 2, c3, 1, &ax0, RT_PACKED, 5, 22);
    unsetenv("CK_REDUCE_WINDOW");
}

/* The full sources through windows compile for sm_90a (row and column, 16-byte and element). */
static void test_nvrtc(void)
{
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS)
        return;
    setenv("CK_REDUCE_WINDOW", "1", 1);
    int ax0 = 0, ax1 = 1;
    int64_t rs[2] = {64, 4096}, cs[2] = {512, 96}, os[2] = {5, 1001};
    const int64_t *shapes[3] = {rs, cs, os};
    const int axes[3] = {1, 0, 1};
    for (int i = 0; i < 3; ++i) {
        ck_tensor x, y;
        int64_t ysh[1] = {shapes[i][1 - axes[i]]};
        CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, CK_DTYPE_BF16, 2, shapes[i], NULL));
        CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1ull << 40), CK_DTYPE_I32, 1, ysh, NULL));
        char *src = NULL;
        CHECK_OK(ck_reduce_source(ctx, CK_REDUCE_ARGMAX, &x, axes[i] ? &ax1 : &ax0, 1, &y, NULL, 0,
                                  &src));
        if (!src)
            continue;
        CHECK(strstr(src, "_read_window(s, x,") != NULL);
        void *cubin = NULL;
        size_t size = 0;
        CHECK_MSG(ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) == CK_SUCCESS,
                  "NVRTC: %s", ck_last_error());
        free(cubin);
        free(src);
    }
    unsetenv("CK_REDUCE_WINDOW");
}

/* The tuning text's window field steers the policy, and the kernel key separates the paths. */
static void test_window_knob(void)
{
    rd_knobs k;
    CHECK(ck_reduce_knobs_parse("row,32,8,0,1", &k) && k.kind == 0 && k.window == 1);
    CHECK(ck_reduce_knobs_parse("col,32,8,0", &k) && k.kind == 1 && k.window == -1);
    CHECK(ck_reduce_knobs_parse("window", &k) && k.kind == -1 && k.window == 1);
    CHECK(!ck_reduce_knobs_parse("row,32,8,0,2", &k));
    wcase c = {0, CK_DTYPE_F32, 16, 32, 8, 4, 0, 0};
    rd_plan p = plan_of(&c);
    p.geom.parts = 1;
    char a[512], b[512], name[64];
    CHECK_OK(ck_reduce_plan_key(&p, a, sizeof a));
    ck_reduce_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "row,32,8,1,1");
    p.window = 0;
    CHECK_OK(ck_reduce_plan_key(&p, b, sizeof b));
    CHECK(strcmp(a, b) != 0);
    ck_reduce_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "row,32,8,1");
    /* one problem, both paths: two kernels in the context's cache */
    ck_context *c2 = NULL;
    CHECK_OK(ck_context_create_for_device(ckk_open(), &c2));
    if (!c2)
        return;
    int64_t shape[2] = {3, 100};
    int ax = 1;
    rt_problem pr = rt_make(CK_DTYPE_F32, CK_DTYPE_F32, CK_REDUCE_SUM, 2, shape, 1, &ax);
    CHECK_EQ_INT(rt_run(c2, &pr, 1, NULL, NULL), 0);
    setenv("CK_REDUCE_WINDOW", "1", 1);
    CHECK_EQ_INT(rt_run(c2, &pr, 1, NULL, NULL), 0);
    unsetenv("CK_REDUCE_WINDOW");
    CHECK_EQ_INT(ck_context_kernel_count(c2), 2);
    ck_context_destroy(c2);
}

int main(void)
{
    if (ckk_open()) {
        CHECK_OK(ck_context_create_for_device(ckk_open(), &ctx));
        RUN_TEST(test_window_knob);
        RUN_TEST(test_windows);
        RUN_TEST(test_nvrtc);
        RUN_TEST(test_reduce_windowed);
        RUN_TEST(test_gather_windows);
        RUN_TEST(test_gather_reduce);
        ck_context_destroy(ctx);
    }
    ckk_close();
    return CK_TEST_REPORT();
}
