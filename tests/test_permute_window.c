/*
 * ck_permute's tile windows (CK_PERMUTE_WINDOW=1, tuning text TN,TM,TPB,1;
 * src/ops/permute/window.c). For tile shapes of 1-, 2-, 4- and 8-byte elements (registers of
 * an element, or of a 4-byte word for the full tiles of 1- and 2-byte elements; edge loads one
 * chunk a call), the encodings map every (thread, register) to pass 1's chunk (ck_perm_pass1)
 * and pass 2's transposed row (ck_perm_pass2) (checked on the host with ck_dist_calculate_x);
 * the generated windows, run on
 * the device, load every register of a full tile (s) and of an edge tile (se, zeros past the
 * edges) from the element the descriptor names, and the stores (d, de) write every register
 * there and nothing else. The tile kernel's sources through windows compile with NVRTC for
 * sm_90a. Then ck_permute through the windows on odd shapes, every byte against the CPU
 * reference; the knob and the kernel key.
 */
#include <stdio.h>

#include "kernel_harness.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"
#include "rt/runtime_internal.h"

typedef struct wcase {
    int e;          /* element bytes: 1, 2, 4 or 8 */
    int gn, gm;     /* tile shape in V x V blocks */
    long long n, m; /* lengths of the destination's / the source's contiguous dimension */
    int novec;      /* rows not 16-byte aligned (the plan's ld_vec = st_vec = 0) */
} wcase;

static ck_perm_plan plan_of(const wcase *c)
{
    ck_perm_plan p;
    memset(&p, 0, sizeof p);
    p.kind = CK_PERM_TILE;
    p.elem_bytes = c->e;
    p.ld_vec = p.st_vec = !c->novec;
    p.gn = c->gn, p.gm = c->gm;
    p.window = 1;
    return p;
}

/* A window's unit: a register holds one element, or (word windows) one 4-byte word; a call
 * holds `chunks` chunks (V; 1 for the windows pass 1 calls chunk by chunk) of u units. */
typedef struct wgeom {
    int ub, u, chunks, epu; /* unit bytes, units a chunk, chunks a call, elements a unit */
} wgeom;

static wgeom geom_of(const wcase *c, const char *name)
{
    const ck_perm_plan p = plan_of(c);
    const int v = 16 / c->e, words = ck_permute_window_words(&p, name);
    wgeom g = {words ? 4 : c->e, words ? 4 : v, ck_permute_window_by_chunk(&p, name) ? 1 : v,
               words ? 4 / c->e : 1};
    return g;
}

/* (row, column in units) of register d of thread t in the call's tile: s rows n, columns m;
 * d rows m, columns n */
static void expected_x(const wcase *c, const wgeom *g, int load, int t, int d, long long *x0,
                       long long *x1)
{
    const int v = 16 / c->e, q = d / g->u, k = d % g->u;
    if (load) {
        int r, ch;
        ck_perm_pass1(t, q, c->gn * c->gm, c->gm, &r, &ch);
        *x0 = r;
        *x1 = (long long)ch * g->u + k;
    } else {
        int nc, mc;
        ck_perm_pass2(t, c->gn, &nc, &mc);
        *x0 = (long long)mc * v + q;
        *x1 = (long long)nc * g->u + k;
    }
}

static void check_encoding(const wcase *c, const char *name)
{
    const ck_perm_plan p = plan_of(c);
    const wgeom g = geom_of(c, name);
    ck_op_window w;
    CHECK_OK(ck_permute_window_spec(&p, name, &w));
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&w.enc, &dist));
    ck_op_window_free(&w);
    const int load = name[0] == 's';
    long long bad = 0;
    for (int t = 0; t < c->gn * c->gm; ++t)
        for (int d = 0; d < g.chunks * g.u; ++d) {
            int pi[1] = {t}, y[2] = {d / g.u, d % g.u}, x[2] = {0, 0};
            CHECK_OK(ck_dist_calculate_x(&dist, pi, y, x));
            long long x0, x1;
            expected_x(c, &g, load, t, d, &x0, &x1);
            bad += x[0] != x0 || x[1] != x1;
        }
    CHECK_MSG(bad == 0, "e %d %dx%d window %s: %lld registers off the pipeline's", c->e, c->gn,
              c->gm, name, bad);
}

static uint64_t bits_at(long long i)
{
    return (uint64_t)(i * 2654435761u + 12345u) & 0x3fffffffffffull; /* finite as a double */
}

/* Window `name` ("s"/"se" loads, "d"/"de" stores) at the tile (t0, t1) of a [rows, cols]
 * tensor with row stride ld (t0 < 0: the last tile, over the corner): every register against
 * memory; stores: nothing else written. */
static void window_case(const wcase *c, const char *name, long long t0, long long t1)
{
    check_encoding(c, name);
    const ck_perm_plan p = plan_of(c);
    ck_sbuf b = {0};
    CHECK_OK(ck_permute_windows(&p, &b));
    if (!b.s)
        return;
    const wgeom g = geom_of(c, name);
    CHECK_MSG(c->novec || (strstr(b.s, "ck_ld16_nc(") && strstr(b.s, "ck_st16(")),
              "no 16-byte accesses");
    const int load = name[0] == 's', edge = name[1] == 'e', v = 16 / c->e, e = g.ub;
    /* the tensor in the window's units; a chunk-by-chunk window is called at the tile's
     * first chunk (its origin row is the tile's) */
    const long long rows = load ? c->n : c->m, cols = (load ? c->m : c->n) / g.epu;
    const long long tr = (long long)(load ? c->gn : c->gm) * v,
                    tc = (long long)(load ? c->gm : c->gn) * g.u;
    const long long ld = (cols + 2 * g.u - 1) / g.u * g.u + (c->novec ? 1 : 0), elems = rows * ld;
    const long long l0 = edge ? rows : rows / tr * tr, l1 = edge ? cols : cols / tc * tc;
    if (t0 < 0)
        t0 = (rows - 1) / tr, t1 = (cols - 1) / tc;
    ck_sbuf_printf(&b,
                   "CK_KERNEL void k(void *mem, perm_win_%s_t *regs, long long o0, long long o1,"
                   " long long l0, long long l1, long long ld)\n{\n"
                   "    perm_win_%s_t r[CK_NREGS_%s];\n"
                   "    ck_win_%s w = perm_win_%s_at(mem, o0, o1, l0, l1, ld);\n",
                   name, name, name, name, name);
    if (load)
        ck_sbuf_printf(&b,
                       "    load_%s(r, &w);\n    for (int i = 0; i < CK_NREGS_%s; ++i)\n"
                       "        regs[ck_thread_idx_x() * CK_NREGS_%s + i] = r[i];\n}\n",
                       name, name, name);
    else
        ck_sbuf_printf(&b,
                       "    for (int i = 0; i < CK_NREGS_%s; ++i)\n"
                       "        r[i] = regs[ck_thread_idx_x() * CK_NREGS_%s + i];\n"
                       "    store_%s(r, &w);\n}\n",
                       name, name, name);
    ck_device *dev = ckk_open();
    ck_kernel *k = ckk_source_kernel(b.s, "k");
    if (!k)
        return;
    const int threads = c->gn * c->gm, nregs = g.chunks * g.u;
    unsigned char *mem = calloc((size_t)elems, (size_t)e), *want = calloc((size_t)elems, (size_t)e);
    unsigned char *regs = calloc((size_t)threads * nregs, (size_t)e);
    for (long long i = 0; i < elems && load; ++i) {
        uint64_t x = bits_at(i);
        memcpy(mem + i * e, &x, (size_t)e);
    }
    for (int t = 0; t < threads && !load; ++t)
        for (int d = 0; d < nregs; ++d) {
            uint64_t x = bits_at(1000003 + t * nregs + d);
            memcpy(regs + ((size_t)t * nregs + d) * e, &x, (size_t)e);
        }
    memcpy(want, mem, (size_t)(elems * e));
    void *dmem = NULL, *dregs = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(elems * e), &dmem));
    CHECK_OK(ck_malloc(dev, (size_t)threads * nregs * e, &dregs));
    CHECK_OK(ck_memcpy_h2d(dev, dmem, mem, (size_t)(elems * e), NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dregs, regs, (size_t)threads * nregs * e, NULL));
    ck_launch_config cfg = {{1, 1, 1}, {(unsigned)threads, 1, 1}, {0, 0, 0}, 0, NULL};
    long long o0 = t0 * tr, o1 = t1 * tc, a0 = l0, a1 = l1, lds = ld;
    void *a[7] = {&dmem, &dregs, &o0, &o1, &a0, &a1, &lds};
    size_t s[7] = {sizeof dmem, sizeof dregs, 8, 8, 8, 8, 8};
    CHECK_OK(ck_launch(k, &cfg, a, s, 7));
    CHECK_OK(ck_memcpy_d2h(dev, mem, dmem, (size_t)(elems * e), NULL));
    unsigned char *got = malloc((size_t)threads * nregs * e);
    CHECK_OK(ck_memcpy_d2h(dev, got, dregs, (size_t)threads * nregs * e, NULL));
    long long wrong = 0;
    for (int t = 0; t < threads; ++t)
        for (int d = 0; d < nregs; ++d) {
            long long x0, x1;
            expected_x(c, &g, load, t, d, &x0, &x1);
            x0 += o0, x1 += o1;
            const int valid = x0 < rows && x1 < cols;
            const unsigned char *reg = (load ? got : regs) + ((size_t)t * nregs + d) * e;
            if (load) {
                uint64_t w = valid ? bits_at(x0 * ld + x1) : 0, r = 0;
                memcpy(&r, reg, (size_t)e);
                wrong += r != (e == 8 ? w : w & ((UINT64_C(1) << 8 * e) - 1));
            } else if (valid) {
                memcpy(want + (x0 * ld + x1) * e, reg, (size_t)e);
            }
        }
    if (!load)
        wrong += memcmp(mem, want, (size_t)(elems * e)) != 0;
    CHECK_MSG(wrong == 0, "e %d %dx%d window %s tile (%lld, %lld): %lld wrong", c->e, c->gn, c->gm,
              name, t0, t1, wrong);
    free(mem);
    free(want);
    free(regs);
    free(got);
    ck_free(dev, dmem);
    ck_free(dev, dregs);
}

static void test_windows(void)
{
    static const wcase cases[] = {
        {4, 8, 8, 70, 45, 0},   /* f32 32 x 32 tiles: one full tile each way, edges */
        {8, 16, 8, 67, 35, 0},  /* f64 32 x 16 tiles */
        {2, 8, 16, 70, 260, 0}, /* bf16 64 x 128 tiles: full tiles in words, edges by element */
        {1, 8, 8, 300, 260, 0}, /* i8 128 x 128 tiles: words of 4 */
        {2, 8, 8, 70, 150, 1},  /* bf16, unaligned rows: element registers, loads by chunk */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const wcase *c = &cases[i];
        window_case(c, "s", 0, 0);
        window_case(c, "se", -1, -1);
        window_case(c, "se", 0, 1);
        window_case(c, "d", 0, 0);
        window_case(c, "de", -1, -1);
    }
}

/* ---- ck_permute through the windows, every byte against the reference --------------------- */
static ck_context *ctx;
static uint64_t rng = 0x7e57ab1eu;

static void permute_case(ck_dtype dt, int rank, const long long *shape, const int *perm, int pad)
{
    const int e = (int)(ck_dtype_get(dt)->storage_bits / 8);
    int64_t sst[8], dst_st[8], sh[8], dsh[8];
    long long acc = 1, dacc = 1, sext = 1, dext = 1;
    for (int d = rank - 1; d >= 0; --d) {
        sh[d] = shape[d];
        dsh[d] = shape[perm[d]];
        sst[d] = acc;
        dst_st[d] = dacc;
        acc = acc * sh[d] + (d == rank - 1 ? pad : 0);
        dacc *= dsh[d];
    }
    for (int d = 0; d < rank; ++d) {
        sext += (sh[d] - 1) * sst[d];
        dext += (dsh[d] - 1) * dst_st[d];
    }
    ck_tensor s, t;
    CHECK_OK(ck_tensor_init(&s, (void *)(uintptr_t)4096, dt, rank, sh, sst));
    CHECK_OK(ck_tensor_init(&t, (void *)(uintptr_t)4096, dt, rank, dsh, dst_st));
    ck_device *dev = ck_context_device(ctx);
    unsigned char *hs = malloc((size_t)(sext * e)), *hd = malloc((size_t)(dext * e));
    unsigned char *want = malloc((size_t)(dext * e));
    for (long long i = 0; i < sext * e; ++i)
        hs[i] = (unsigned char)ckt_rand64(&rng);
    void *ds = NULL, *dd = NULL;
    CHECK_OK(ck_malloc(dev, (size_t)(sext * e), &ds));
    CHECK_OK(ck_malloc(dev, (size_t)(dext * e), &dd));
    CHECK_OK(ck_memcpy_h2d(dev, ds, hs, (size_t)(sext * e), NULL));
    s.data = ds;
    t.data = dd;
    ck_perm_plan p;
    CHECK_OK(ck_permute_plan(&t, &s, perm, &p));
    CHECK_MSG(p.kind == CK_PERM_TILE && p.window, "%s: not a tile plan through windows",
              ck_dtype_name(dt));
    CHECK_OK(ck_permute(ctx, &s, perm, &t));
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hd, dd, (size_t)(dext * e), NULL));
    ck_tensor hs_t = s, want_t = t;
    hs_t.data = hs;
    want_t.data = want;
    CHECK_OK(ck_permute_reference(&want_t, &hs_t, perm));
    CHECK_MSG(memcmp(hd, want, (size_t)(dext * e)) == 0,
              "%s rank %d: bytes differ from the "
              "reference",
              ck_dtype_name(dt), rank);
    ck_free(dev, ds);
    ck_free(dev, dd);
    free(hs);
    free(hd);
    free(want);
}

static void test_permute_windowed(void)
{
    setenv("CK_PERMUTE_WINDOW", "1", 1);
    const long long a[2] = {1001, 999}, b[3] = {3, 130, 67}, c[2] = {64, 96};
    const int t2[2] = {1, 0}, t3[3] = {0, 2, 1};
    permute_case(CK_DTYPE_F32, 2, a, t2, 0); /* odd: edge tiles, element accesses */
    permute_case(CK_DTYPE_F64, 3, b, t3, 0); /* batch, edges */
    permute_case(CK_DTYPE_I32, 2, c, t2, 4); /* full tiles only, padded source rows */
    permute_case(CK_DTYPE_F32, 2, c, t2, 3); /* rows not 16-byte aligned: element loads */
    permute_case(CK_DTYPE_BF16, 2, a, t2, 0); /* 2-byte: words on full tiles, edges */
    permute_case(CK_DTYPE_BF16, 3, b, t3, 0);
    permute_case(CK_DTYPE_F16, 2, c, t2, 8);  /* full tiles only, padded rows */
    permute_case(CK_DTYPE_BF16, 2, c, t2, 3); /* unaligned rows: element registers by chunk */
    permute_case(CK_DTYPE_I8, 2, a, t2, 0);   /* 1-byte: words of 4 */
    permute_case(CK_DTYPE_U8, 3, b, t3, 5);
    unsetenv("CK_PERMUTE_WINDOW");
}

/* The tile sources through windows compile for sm_90a. */
static void test_nvrtc(void)
{
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS)
        return;
    const wcase cases[5] = {{4, 16, 16, 0, 0, 0}, {8, 16, 8, 0, 0, 0}, {4, 8, 32, 0, 0, 0},
                            {2, 16, 8, 0, 0, 0}, {1, 8, 8, 0, 0, 0}};
    for (int i = 0; i < 5; ++i) {
        ck_perm_plan p = plan_of(&cases[i]);
        p.ld_vec = i != 2;
        char *src = NULL;
        const char *name = NULL;
        CHECK_OK(ck_permute_source(&p, &src, &name));
        if (!src)
            continue;
        CHECK(strstr(src, "perm_read_window(in, sb,") != NULL);
        void *cubin = NULL;
        size_t size = 0;
        CHECK_MSG(ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) == CK_SUCCESS,
                  "NVRTC: %s", ck_last_error());
        free(cubin);
        free(src);
    }
}

/* The tuning text's window field steers the plan, and the kernel key separates the paths. */
static void test_window_knob(void)
{
    wcase c = {4, 16, 16, 0, 0, 0};
    ck_perm_plan p = plan_of(&c);
    p.len[0] = p.len[1] = 256;
    p.rank = 2;
    ck_permute_choose_tile(&p, "64,64,0,1");
    CHECK(p.window == 1 && p.gn == 16 && p.gm == 16);
    char name[64];
    ck_permute_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "64,64,0,1");
    ck_permute_choose_tile(&p, "64,64,0,0");
    CHECK(p.window == 0);
    ck_permute_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "64,64,0,0");
    ck_permute_choose_tile(&p, "64,64,0"); /* three fields: the default, windows from 2 bytes */
    CHECK(p.window == 1);
    ck_permute_choose_tile(&p, "64,64,0,2"); /* invalid: the defaults */
    CHECK(p.window == 1);
    p.elem_bytes = 1; /* 1-byte elements: indexed by default, windows when asked */
    ck_permute_choose_tile(&p, "128,128,0");
    CHECK(p.window == 0);
    ck_permute_choose_tile(&p, "128,128,0,1");
    CHECK(p.window == 1);
    p.elem_bytes = 2; /* 16-bit elements too (words on full tiles) */
    ck_permute_choose_tile(&p, "128,128,0,1");
    CHECK(p.window == 1);
    /* one problem, both paths: two kernels in the context's cache */
    ck_context *c2 = NULL;
    CHECK_OK(ck_context_create_for_device(ckk_open(), &c2));
    if (!c2)
        return;
    ck_context *saved = ctx;
    ctx = c2;
    const long long sh[2] = {40, 72};
    const int t2[2] = {1, 0};
    setenv("CK_PERMUTE_WINDOW", "0", 1);
    int before = ck_context_kernel_count(c2);
    ck_tensor s, t;
    int64_t ssh[2] = {40, 72}, dsh[2] = {72, 40};
    CHECK_OK(ck_tensor_init(&s, (void *)(uintptr_t)4096, CK_DTYPE_F32, 2, ssh, NULL));
    CHECK_OK(ck_tensor_init(&t, (void *)(uintptr_t)(1ull << 40), CK_DTYPE_F32, 2, dsh, NULL));
    ck_perm_plan q;
    CHECK_OK(ck_permute_plan(&t, &s, t2, &q));
    CHECK(q.window == 0);
    setenv("CK_PERMUTE_WINDOW", "1", 1);
    CHECK_OK(ck_permute_plan(&t, &s, t2, &q));
    CHECK(q.window == 1);
    permute_case(CK_DTYPE_F32, 2, sh, t2, 0);
    unsetenv("CK_PERMUTE_WINDOW");
    ck_kernel *k = NULL;
    q.window = 0;
    CHECK_OK(ck_permute_kernel(c2, &q, &k));
    CHECK_EQ_INT(ck_context_kernel_count(c2) - before, 2);
    ctx = saved;
    ck_context_destroy(c2);
}

int main(void)
{
    if (ckk_open()) {
        CHECK_OK(ck_context_create_for_device(ckk_open(), &ctx));
        RUN_TEST(test_window_knob);
        RUN_TEST(test_windows);
        RUN_TEST(test_nvrtc);
        RUN_TEST(test_permute_windowed);
        ck_context_destroy(ctx);
    }
    ckk_close();
    return CK_TEST_REPORT();
}
