/*
 * Tile window code generation (src/gen/window_gen.c, ck/tile_kernel.h): generated load, store,
 * update, atomic add and move run on the device CK_DEVICE chooses (the emulator in CI) for
 * random distributions over random descriptors -- strided, padded, symbolic sizes and strides,
 * tensors that are not multiples of the window -- and every register and every memory element
 * is checked against a CPU evaluation through the (bound) descriptor and ck_dist_calculate_x.
 * Also: masks absent where nothing needs them, 16-byte vectors where proven aligned, the
 * generated source compiles with NVRTC for sm_90a, and bad input.
 */
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "dist_random.h"
#include "kernel_harness.h"
#include "gen/window_gen.h"
#include "rt/runtime_internal.h"

enum { MAXT = 256 };

typedef struct wcase {
    ck_dist_encoding enc;
    ck_distribution dist;
    ck_expr_arena *ctx;
    ck_descriptor *desc, *bound;
    ck_binding binds[16];
    int nb;
    ck_dtype dtype;
    long long origin[CK_DIST_MAX_X], delta[CK_DIST_MAX_X], align[CK_DIST_MAX_X];
    int nthreads;
    int expect_no_mask, expect_ld16;
} wcase;

static uint64_t seed = 0x5eedf00d1234ull;

static int ebytes(ck_dtype t)
{
    return t == CK_DTYPE_F64 ? 8 : t == CK_DTYPE_F16 ? 2 : t == CK_DTYPE_U8 ? 1 : 4;
}

/* Element value <-> double for the test's types. */
static double get(const void *mem, ck_dtype t, long long i)
{
    switch (t) {
    case CK_DTYPE_F32:
        return ((const float *)mem)[i];
    case CK_DTYPE_F64:
        return ((const double *)mem)[i];
    case CK_DTYPE_I32:
        return ((const int *)mem)[i];
    case CK_DTYPE_F16:
        return ((const unsigned short *)mem)[i];
    default:
        return ((const unsigned char *)mem)[i];
    }
}
static void set(void *mem, ck_dtype t, long long i, double v)
{
    switch (t) {
    case CK_DTYPE_F32:
        ((float *)mem)[i] = (float)v;
        break;
    case CK_DTYPE_F64:
        ((double *)mem)[i] = v;
        break;
    case CK_DTYPE_I32:
        ((int *)mem)[i] = (int)v;
        break;
    case CK_DTYPE_F16:
        ((unsigned short *)mem)[i] = (unsigned short)v;
        break;
    default:
        ((unsigned char *)mem)[i] = (unsigned char)v;
        break;
    }
}
static double pattern(long long off)
{
    return (double)((off * 7 + 3) % 97 + 1);
}
/* The value the store kernel puts in the register of tile element x (as written there). */
static double xvalue(const int *x, int nx)
{
    long long v = 1;
    for (int i = 0; i < nx; ++i)
        v = v * 7 + x[i];
    return (double)(v % 97 + 1);
}

/* Partition index of thread t under the generator's convention; 0 when out of range. */
static int host_p(const ck_distribution *d, int t, int *p)
{
    int np = d->enc.ndim_p;
    if (np == 1)
        p[0] = t;
    else if (np == 2)
        p[0] = t / 32, p[1] = t % 32;
    else
        for (int i = np - 1; i >= 0; --i) {
            p[i] = i ? t % d->p_lengths[i] : t;
            if (i)
                t /= d->p_lengths[i];
        }
    for (int i = 0; i < np; ++i)
        if (p[i] >= d->p_lengths[i])
            return 0;
    return 1;
}

/* Memory element of (thread t, register r), or -1 when masked / thread idle. */
static long long host_offset(const wcase *c, int t, long long r, int *x)
{
    int p[CK_DIST_MAX_P] = {0}, y[CK_DIST_MAX_Y] = {0};
    if (!host_p(&c->dist, t, p))
        return -1;
    ck_dist_d_to_ys(&c->dist, r, y);
    ck_dist_calculate_x(&c->dist, p, y, x);
    int64_t idx[CK_DIST_MAX_X];
    for (int i = 0; i < c->enc.ndim_x; ++i) {
        idx[i] = c->origin[i] + x[i];
        ck_ival len = ck_descriptor_length(c->bound, i);
        if (idx[i] >= len.v)
            return -1;
    }
    int valid = 0;
    int64_t off = 0;
    ck_descriptor_is_valid_index(c->bound, idx, &valid);
    if (!valid)
        return -1;
    ck_descriptor_calculate_offset(c->bound, idx, &off);
    return off;
}

/* The parameter names of make_win_w, from the generated source. */
static int make_params(const char *src, char names[][64])
{
    const char *s = strstr(src, "make_win_w(");
    int n = 0;
    if (!s)
        return 0;
    const char *end = strchr(s, ')');
    while ((s = strstr(s, "long long ")) != NULL && s < end) {
        s += 10;
        int k = 0;
        while (*s != ',' && *s != ')' && k < 63)
            names[n][k++] = *s++;
        names[n++][k] = '\0';
    }
    return n;
}

static const char *ctype(ck_dtype t)
{
    int b;
    return ck_gen_ctype(t, &b);
}

static char *user_code(const wcase *c, int nparams)
{
    static char buf[8192];
    char call[1024] = "", mv[256] = "";
    int n = 0;
    for (int i = 0; i < nparams; ++i)
        n += snprintf(call + n, sizeof call - (size_t)n, ", prm[%d]", i);
    n = 0;
    for (int i = 0; i < c->enc.ndim_x; ++i)
        n += snprintf(mv + n, sizeof mv - (size_t)n, ", prm[%d]", nparams + i);
    const char *T = ctype(c->dtype);
    int atomic = c->dtype == CK_DTYPE_F32 || c->dtype == CK_DTYPE_I32;
    snprintf(buf, sizeof buf,
             "CK_KERNEL void kload(%s *in, %s *out, long long *xs, const long long *prm)\n"
             "{\n"
             "    %s regs[CK_NREGS_w];\n"
             "    ck_win_w w = make_win_w(in%s);\n"
             "    move_w(&w%s);\n"
             "    load_w(regs, &w);\n"
             "    unsigned t = ck_thread_linear();\n"
             "    for (int d = 0; d < CK_NREGS_w; ++d) {\n"
             "        long long x[%d];\n"
             "        tile_x_w(d, x);\n"
             "        out[t * CK_NREGS_w + d] = regs[d];\n"
             "        for (int i = 0; i < %d; ++i)\n"
             "            xs[(t * CK_NREGS_w + d) * %d + i] = x[i];\n"
             "    }\n"
             "}\n"
             "CK_KERNEL void kstore(%s *mem, const long long *prm, int mode)\n"
             "{\n"
             "    %s regs[CK_NREGS_w];\n"
             "    for (int d = 0; d < CK_NREGS_w; ++d) {\n"
             "        long long x[%d], v = 1;\n"
             "        tile_x_w(d, x);\n"
             "        for (int i = 0; i < %d; ++i)\n"
             "            v = v * 7 + x[i];\n"
             "        regs[d] = (%s)(v %% 97 + 1);\n"
             "    }\n"
             "    ck_win_w w = make_win_w(mem%s);\n"
             "    move_w(&w%s);\n"
             "    if (mode == 0)\n"
             "        store_w(regs, &w);\n"
             "    else if (mode == 1)\n"
             "        update_w(regs, &w);\n"
             "%s"
             "}\n",
             T, T, T, call, mv, c->enc.ndim_x, c->enc.ndim_x, c->enc.ndim_x, T, T, c->enc.ndim_x,
             c->enc.ndim_x, T, call, mv,
             atomic ? "    else\n        atomic_add_w(regs, &w);\n" : "");
    return buf;
}

/* Run one case: generate, compile, load and check; store, update, atomic add and check. */
static void run_case(wcase *c, const char *label)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    ck_tile_window_spec spec = {0};
    spec.name = "w";
    spec.desc = c->desc;
    spec.ctx = c->ctx;
    spec.enc = &c->enc;
    spec.dtype = c->dtype;
    spec.fill = 0;
    for (int i = 0; i < c->enc.ndim_x; ++i)
        spec.origin_align[i] = c->align[i];
    char *wsrc = NULL;
    ck_status st = ck_tile_window_generate(&spec, &wsrc);
    CHECK_MSG(st == CK_SUCCESS, "%s: generate: %s", label, ck_last_error());
    if (st)
        return;
    char pn[40][64];
    int np = make_params(wsrc, pn);
    if (c->expect_no_mask)
        CHECK_MSG(strstr(wsrc, "} else {") == NULL, "%s: masks where none are needed:\n%s", label,
                  wsrc);
    if (c->expect_ld16)
        CHECK_MSG(strstr(wsrc, "ck_ld16(") && strstr(wsrc, "ck_st16("),
                  "%s: no 16-byte vectors:\n%s", label, wsrc);
    long long prm[64];
    for (int i = 0; i < np; ++i) {
        prm[i] = 0;
        if (pn[i][0] == 'o' && pn[i][1] >= '0' && pn[i][1] <= '9')
            prm[i] = c->origin[atoi(pn[i] + 1)] - c->delta[atoi(pn[i] + 1)];
        else {
            int found = 0;
            for (int b = 0; b < c->nb; ++b)
                if (!strcmp(c->binds[b].name, pn[i]))
                    prm[i] = c->binds[b].value, found = 1;
            CHECK_MSG(found, "%s: unknown parameter %s", label, pn[i]);
        }
    }
    for (int i = 0; i < c->enc.ndim_x; ++i)
        prm[np + i] = c->delta[i];
    int major, minor;
    if (c->expect_ld16 && ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        char *full = NULL;
        void *cubin = NULL;
        size_t size = 0;
        CHECK_OK(ck_tile_kernel_source(1, &spec, user_code(c, np), &full));
        ck_status nst =
            full ? ck_nvrtc_compile(full, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
        CHECK_MSG(nst == CK_SUCCESS, "%s: NVRTC: %s", label, ck_last_error());
        free(cubin);
        ck_tile_free(full);
    }
    ck_module *mod = NULL;
    ck_kernel *kl = NULL, *ks = NULL;
    st = ck_tile_kernel_load(dev, 1, &spec, user_code(c, np), &mod);
    CHECK_MSG(st == CK_SUCCESS, "%s: load: %s", label, ck_last_error());
    free(wsrc);
    if (st || ck_module_get_kernel(mod, "kload", &kl) || ck_module_get_kernel(mod, "kstore", &ks))
        return;
    int nx = c->enc.ndim_x, T = c->nthreads, eb = ebytes(c->dtype);
    long long nregs = c->dist.elements_per_thread;
    long long space = ck_descriptor_element_space_size(c->bound).v;
    size_t mbytes = (size_t)space * (size_t)eb + 64, obytes = (size_t)(T * nregs) * (size_t)eb;
    size_t xbytes = (size_t)(T * nregs * nx) * sizeof(long long);
    unsigned char *mem = malloc(mbytes), *out = malloc(obytes), *ref = malloc(mbytes);
    long long *xs = malloc(xbytes);
    void *dmem = NULL, *dout = NULL, *dxs = NULL, *dprm = NULL;
    CHECK(ck_malloc(dev, mbytes, &dmem) == CK_SUCCESS &&
          ck_malloc(dev, obytes, &dout) == CK_SUCCESS &&
          ck_malloc(dev, xbytes, &dxs) == CK_SUCCESS &&
          ck_malloc(dev, sizeof prm, &dprm) == CK_SUCCESS);
    ck_memcpy_h2d(dev, dprm, prm, sizeof prm, NULL);
    for (long long i = 0; i < space; ++i)
        set(mem, c->dtype, i, pattern(i));
    ck_memcpy_h2d(dev, dmem, mem, (size_t)space * (size_t)eb, NULL);
    ck_launch_config cfg = {{1, 1, 1}, {(unsigned)T, 1, 1}, {0, 0, 0}, 0, NULL};
    void *largs[4] = {&dmem, &dout, &dxs, &dprm};
    size_t lsz[4] = {sizeof dmem, sizeof dout, sizeof dxs, sizeof dprm};
    st = ck_launch(kl, &cfg, largs, lsz, 4);
    CHECK_MSG(st == CK_SUCCESS, "%s: launch: %s", label, ck_last_error());
    ck_memcpy_d2h(dev, out, dout, obytes, NULL);
    ck_memcpy_d2h(dev, xs, dxs, xbytes, NULL);
    long long bad = 0;
    for (int t = 0; t < T; ++t)
        for (long long r = 0; r < nregs; ++r) {
            int x[CK_DIST_MAX_X] = {0}, p[CK_DIST_MAX_P];
            long long off = host_offset(c, t, r, x);
            double want = off >= 0 ? pattern(off) : 0, got = get(out, c->dtype, t * nregs + r);
            if (got != want && bad++ < 5)
                CKT_FAIL_("%s: load thread %d register %lld: %g, expected %g", label, t, r, got,
                          want);
            if (host_p(&c->dist, t, p))
                for (int i = 0; i < nx; ++i)
                    if (xs[(t * nregs + r) * nx + i] != x[i] && bad++ < 5)
                        CKT_FAIL_("%s: tile_x thread %d register %lld dim %d", label, t, r, i);
        }
    CHECK_MSG(bad == 0, "%s: %lld load mismatches", label, bad);
    /* store (sentinel 0), update (over the pattern), atomic add (over the pattern) */
    int modes = (c->dtype == CK_DTYPE_F32 || c->dtype == CK_DTYPE_I32) ? 3 : 2;
    if (c->dist.replication > 1)
        modes = modes == 3 ? 3 : 1; /* update races between replicas; atomics do not */
    /* update (a read-modify-write) races where two threads reach the same element: through
     * replication or through a descriptor that maps several tile elements to one offset (the
     * emulator's serialized threads would add every value, the GPU keeps one) */
    int shared_offsets = 0;
    {
        int *owner = malloc(sizeof(int) * (size_t)(space > 0 ? space : 1));
        for (long long i = 0; owner && i < space; ++i)
            owner[i] = -1;
        for (int t = 0; owner && t < T && !shared_offsets; ++t)
            for (long long r = 0; r < nregs; ++r) {
                int x[CK_DIST_MAX_X] = {0};
                long long off = host_offset(c, t, r, x);
                if (off < 0)
                    continue;
                if (owner[off] >= 0 && owner[off] != t)
                    shared_offsets = 1;
                owner[off] = t;
            }
        free(owner);
    }
    for (int mode = 0; mode < modes; ++mode) {
        if (mode == 1 && (c->dist.replication > 1 || shared_offsets))
            continue;
        for (long long i = 0; i < space; ++i) {
            set(mem, c->dtype, i, mode == 0 ? 0 : pattern(i));
            set(ref, c->dtype, i, mode == 0 ? 0 : pattern(i));
        }
        ck_memcpy_h2d(dev, dmem, mem, (size_t)space * (size_t)eb, NULL);
        for (int t = 0; t < T; ++t)
            for (long long r = 0; r < nregs; ++r) {
                int x[CK_DIST_MAX_X] = {0};
                long long off = host_offset(c, t, r, x);
                if (off < 0)
                    continue;
                double v = xvalue(x, nx);
                set(ref, c->dtype, off, mode == 0 ? v : get(ref, c->dtype, off) + v);
            }
        void *sargs[3] = {&dmem, &dprm, &mode};
        size_t ssz[3] = {sizeof dmem, sizeof dprm, sizeof mode};
        st = ck_launch(ks, &cfg, sargs, ssz, 3);
        CHECK_MSG(st == CK_SUCCESS, "%s: store launch: %s", label, ck_last_error());
        ck_memcpy_d2h(dev, mem, dmem, (size_t)space * (size_t)eb, NULL);
        bad = 0;
        for (long long i = 0; i < space; ++i)
            if (get(mem, c->dtype, i) != get(ref, c->dtype, i) && bad++ < 5)
                CKT_FAIL_("%s: mode %d element %lld: %g, expected %g", label, mode, i,
                          get(mem, c->dtype, i), get(ref, c->dtype, i));
        CHECK_MSG(bad == 0, "%s: mode %d: %lld mismatches", label, mode, bad);
    }
    ck_free(dev, dmem);
    ck_free(dev, dout);
    ck_free(dev, dxs);
    ck_free(dev, dprm);
    free(mem);
    free(out);
    free(ref);
    free(xs);
}

static void case_free(wcase *c)
{
    ck_descriptor_destroy(c->desc);
    ck_descriptor_destroy(c->bound);
    ck_expr_arena_destroy(c->ctx);
    memset(c, 0, sizeof *c);
}

static int threads_for(const ck_distribution *d)
{
    int np = d->enc.ndim_p;
    long long t = np == 2 ? 32LL * d->p_lengths[0] : d->threads;
    t += 5; /* a few idle threads beyond the distribution */
    return (int)(t > MAXT ? MAXT : t);
}

/* kind 0: strided; 1: strided + pad on one dim; 2: symbolic lengths and strides;
 * 3: aligned origin on a multiple-of-window tensor (no masks). */
static int make_case(wcase *c, int kind)
{
    memset(c, 0, sizeof *c);
    for (;;) {
        dr_encoding(&seed, dr_uniform(&seed, 1, 3), dr_uniform(&seed, 0, 3), &c->enc);
        if (ck_dist_make(&c->enc, &c->dist) == CK_SUCCESS && c->dist.elements_per_thread <= 64 &&
            (c->enc.ndim_p != 2 || (c->dist.p_lengths[0] <= 6 && c->dist.p_lengths[1] <= 32)))
            break;
    }
    static const ck_dtype types[] = {CK_DTYPE_F32, CK_DTYPE_F16, CK_DTYPE_I32, CK_DTYPE_F64,
                                     CK_DTYPE_U8};
    c->dtype = types[dr_uniform(&seed, 0, 4)];
    c->nthreads = threads_for(&c->dist);
    int nx = c->enc.ndim_x;
    long long lens[CK_DIST_MAX_X], strides[CK_DIST_MAX_X];
    for (int i = 0; i < nx; ++i) {
        int w = c->dist.x_lengths[i];
        lens[i] =
            kind == 3 ? (long long)w * dr_uniform(&seed, 1, 3) : dr_uniform(&seed, 1, 2 * w + 3);
        c->align[i] = kind == 3 ? w : 1;
    }
    long long s = dr_uniform(&seed, 1, 2);
    for (int i = nx - 1; i >= 0; --i) {
        strides[i] = s;
        s = s * lens[i] + dr_uniform(&seed, 0, 3);
    }
    ck_ival L[CK_DIST_MAX_X], S[CK_DIST_MAX_X];
    if (ck_expr_arena_create(&c->ctx))
        return 0;
    for (int i = 0; i < nx; ++i) {
        L[i] = ck_ival_int(lens[i]);
        S[i] = ck_ival_int(strides[i]);
        if (kind == 2) {
            char ln[16], sn[16];
            snprintf(ln, sizeof ln, "L%d", i);
            snprintf(sn, sizeof sn, "S%d", i);
            if (ck_expr_symbol(c->ctx, ln, 1, 100000, 1, &L[i]))
                return 0;
            c->binds[c->nb].name = i == 0 ? "L0" : i == 1 ? "L1" : "L2";
            c->binds[c->nb++].value = lens[i];
            if (i < nx - 1 || strides[i] != 1) {
                if (ck_expr_symbol(c->ctx, sn, 1, 10000000, 1, &S[i]))
                    return 0;
                c->binds[c->nb].name = i == 0 ? "S0" : i == 1 ? "S1" : "S2";
                c->binds[c->nb++].value = strides[i];
            }
        }
    }
    if (ck_descriptor_make_naive(nx, L, S, &c->desc))
        return 0;
    if (kind == 1) {
        int d = dr_uniform(&seed, 0, nx - 1);
        ck_transform pad;
        ck_descriptor *p = NULL;
        long long left = dr_uniform(&seed, 0, 2), right = dr_uniform(&seed, 0, 2);
        if (ck_make_pad_transform(L[d], ck_ival_int(left), ck_ival_int(right), &pad) ||
            ck_descriptor_transform_one(c->desc, &pad, &d, -1, &p))
            return 0;
        ck_descriptor_destroy(c->desc);
        c->desc = p;
    }
    if (ck_descriptor_bind(c->desc, c->binds, c->nb, &c->bound))
        return 0;
    for (int i = 0; i < nx; ++i) {
        long long len = ck_descriptor_length(c->bound, i).v;
        if (kind == 3) {
            long long w = c->dist.x_lengths[i];
            c->origin[i] = w * dr_uniform(&seed, 0, (int)(len / w) - 1);
            c->delta[i] = w * dr_uniform(&seed, 0, (int)(c->origin[i] / w));
        } else {
            /* past the end only where the dim is masked (w > 1 here: lengths are not known
             * multiples with an aligned origin); an unmasked window must lie inside */
            int masked = c->dist.x_lengths[i] > 1;
            c->origin[i] = dr_uniform(&seed, 0, (int)len - 1 + (masked ? 3 : 0));
            c->delta[i] = dr_uniform(&seed, 0, (int)c->origin[i]);
        }
    }
    c->expect_no_mask = kind == 3;
    return 1;
}

static void test_random_windows(void)
{
    static const char *names[] = {"strided", "padded", "symbolic", "aligned"};
    for (int kind = 0; kind < 4; ++kind)
        for (int i = 0; i < 10; ++i) {
            wcase c;
            char label[64];
            snprintf(label, sizeof label, "%s case %d", names[kind], i);
            if (!make_case(&c, kind)) {
                CHECK_MSG(0, "%s: could not build: %s", label, ck_last_error());
                case_free(&c);
                continue;
            }
            run_case(&c, label);
            case_free(&c);
        }
}

/* CK's 2-D pattern with 16-byte vectors (f32 x 4, f16 x 8), aligned: ck_ld16/ck_st16 used;
 * also with a symbolic row stride that is a multiple of the vector. */
static void test_vector_windows(void)
{
    for (int v = 0; v < 4; ++v) {
        wcase c;
        memset(&c, 0, sizeof c);
        c.dtype = v % 2 ? CK_DTYPE_F16 : CK_DTYPE_F32;
        int vec = c.dtype == CK_DTYPE_F16 ? 8 : 4, rows = 16, cols = 8 * vec;
        CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 64, rows, cols, vec, &c.enc));
        CHECK_OK(ck_dist_make(&c.enc, &c.dist));
        c.nthreads = 64;
        CHECK_OK(ck_expr_arena_create(&c.ctx));
        ck_ival L[2] = {ck_ival_int(3 * rows), ck_ival_int(2 * cols)};
        ck_ival S[2] = {ck_ival_int(2 * cols + vec), ck_ival_int(1)};
        if (v >= 2) {
            CHECK_OK(ck_expr_symbol(c.ctx, "ld", vec, 1 << 20, vec, &S[0]));
            c.binds[c.nb].name = "ld";
            c.binds[c.nb++].value = 2 * cols + 3 * vec;
        }
        CHECK_OK(ck_descriptor_make_naive(2, L, S, &c.desc));
        CHECK_OK(ck_descriptor_bind(c.desc, c.binds, c.nb, &c.bound));
        c.align[0] = rows;
        c.align[1] = cols;
        c.origin[0] = rows;
        c.origin[1] = cols;
        c.delta[0] = rows;
        c.expect_no_mask = 1;
        c.expect_ld16 = 1;
        run_case(&c, v >= 2 ? "vector, symbolic stride" : "vector");
        case_free(&c);
    }
}

/* The generated source compiles with NVRTC for sm_90a (skipped without NVRTC). */
static void test_nvrtc(void)
{
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available; skipped\n");
        return;
    }
    for (int kind = 0; kind < 4; ++kind) {
        wcase c;
        if (!make_case(&c, kind)) {
            case_free(&c);
            continue;
        }
        ck_tile_window_spec spec = {0};
        spec.name = "w";
        spec.desc = c.desc;
        spec.ctx = c.ctx;
        spec.enc = &c.enc;
        spec.dtype = c.dtype;
        for (int i = 0; i < c.enc.ndim_x; ++i)
            spec.origin_align[i] = c.align[i];
        char *src = NULL, *wsrc = NULL;
        CHECK_OK(ck_tile_window_generate(&spec, &wsrc));
        char pn[40][64];
        int np = wsrc ? make_params(wsrc, pn) : 0;
        free(wsrc);
        CHECK_OK(ck_tile_kernel_source(1, &spec, user_code(&c, np), &src));
        void *cubin = NULL;
        size_t size = 0;
        ck_status st =
            src ? ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
        CHECK_MSG(st == CK_SUCCESS, "NVRTC: %s", ck_last_error());
        free(cubin);
        free(src);
        case_free(&c);
    }
}

static void test_bad_input(void)
{
    ck_descriptor *d = NULL;
    ck_ival L[2] = {ck_ival_int(8), ck_ival_int(8)};
    CHECK_OK(ck_descriptor_make_packed(2, L, &d));
    ck_dist_encoding enc;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 32, 8, 8, 2, &enc));
    ck_tile_window_spec s = {0};
    s.name = "a";
    s.desc = d;
    s.enc = &enc;
    s.dtype = CK_DTYPE_F32;
    char *src = NULL;
    CHECK_STATUS(ck_tile_window_generate(NULL, &src), CK_ERROR_INVALID_ARGUMENT);
    s.name = "1bad";
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "identifier") != NULL);
    s.name = "a";
    s.dtype = CK_DTYPE_FP4_E2M1;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    s.dtype = CK_DTYPE_F16;
    s.ops = CK_WIN_ATOMIC_ADD;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "atomic") != NULL);
    s.ops = 0;
    s.dtype = CK_DTYPE_F32;
    ck_descriptor *d1 = NULL;
    CHECK_OK(ck_descriptor_make_packed(1, L, &d1));
    s.desc = d1;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "dims") != NULL);
    /* a 64-lane P1 */
    ck_dist_encoding wide;
    CHECK_OK(
        ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<1>, "
                               "sequence<64>>, tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, "
                               "sequence<0>>, sequence<>, sequence<>>",
                               &wide));
    ck_descriptor *d64 = NULL;
    ck_ival L64[2] = {ck_ival_int(1), ck_ival_int(64)};
    CHECK_OK(ck_descriptor_make_packed(2, L64, &d64));
    s.desc = d64;
    s.enc = &wide;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "32 lanes") != NULL);
    ck_descriptor_destroy(d64);
    s.enc = &enc;
    s.desc = d;
    s.origin_align[0] = -2;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    s.origin_align[0] = 0;
    ck_tile_window_spec two[2] = {s, s};
    CHECK_STATUS(ck_tile_kernel_source(2, two, "", &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tile_kernel_source(1, &s, NULL, &src), CK_ERROR_INVALID_ARGUMENT);
    /* symbolic descriptor without ctx */
    ck_expr_arena *ctx = NULL;
    ck_ival M;
    ck_descriptor *ds = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    CHECK_OK(ck_expr_symbol(ctx, "M", 1, 1000, 1, &M));
    ck_ival LS[2] = {M, ck_ival_int(8)};
    CHECK_OK(ck_descriptor_make_packed(2, LS, &ds));
    s.desc = ds;
    CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "ctx") != NULL);
    s.ctx = ctx;
    /* a symbol named like the generated code's own names */
    {
        ck_ival W;
        ck_descriptor *dw = NULL;
        CHECK_OK(ck_expr_symbol(ctx, "regs", 1, 1000, 1, &W));
        ck_ival LW[2] = {W, ck_ival_int(8)};
        CHECK_OK(ck_descriptor_make_packed(2, LW, &dw));
        s.desc = dw;
        CHECK_STATUS(ck_tile_window_generate(&s, &src), CK_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(ck_last_error(), "clashes") != NULL);
        ck_descriptor_destroy(dw);
        s.desc = ds;
    }
    CHECK_OK(ck_tile_window_generate(&s, &src));
    /* deterministic */
    char *src2 = NULL;
    CHECK_OK(ck_tile_window_generate(&s, &src2));
    CHECK(src && src2 && strcmp(src, src2) == 0);
    CHECK(src && strstr(src, "tile_distribution_encoding<") != NULL);
    ck_tile_free(src);
    ck_tile_free(src2);
    ck_descriptor_destroy(ds);
    ck_expr_arena_destroy(ctx);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(d1);
}

int main(void)
{
    printf("seed %llu\n", (unsigned long long)seed);
    RUN_TEST(test_bad_input);
    if (ckk_open()) {
        RUN_TEST(test_random_windows);
        RUN_TEST(test_vector_windows);
    }
    RUN_TEST(test_nvrtc);
    ckk_close();
    return CK_TEST_REPORT();
}
