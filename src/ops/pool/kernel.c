/*
 * The pooling kernels: the parameter table (one list printing the source's #defines and the
 * kernel cache key), the generated windows over conv's views (pool_internal.h), the launches.
 * Forward: one kernel, grid (row tiles, channel tiles). Max-pool backward: one kernel per class
 * of input residues mod the stride that has rows (conv's backward-data classes); a class that
 * no tap reaches (the kernel shorter than the stride) runs with no tap and stores zeros.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ck/tile_kernel.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/common/op_params.h"
#include "ops/pool/pool_internal.h"

#define OP "ck_pool"

typedef struct pool_build {
    const ck_pool_prob *r;
    const ck_pool_instance *in;
    const ck_conv_class *cls; /* backward: the class; NULL: forward */
    const ck_op_param *t;
    int nt;
} pool_build;

static int params(const ck_pool_prob *r, const ck_pool_instance *in, const ck_conv_class *cls,
                  ck_op_param *t)
{
    static const char *names[6][3] = {
        {"POOL_IN0", "POOL_IN1", "POOL_IN2"},    {"POOL_KER0", "POOL_KER1", "POOL_KER2"},
        {"POOL_STR0", "POOL_STR1", "POOL_STR2"}, {"POOL_DIL0", "POOL_DIL1", "POOL_DIL2"},
        {"POOL_PAD0", "POOL_PAD1", "POOL_PAD2"}, {"POOL_OUT0", "POOL_OUT1", "POOL_OUT2"}};
    static const char *cnames[2][3] = {{"POOL_R0", "POOL_R1", "POOL_R2"},
                                       {"POOL_ROWS0", "POOL_ROWS1", "POOL_ROWS2"}};
    const int64_t *arr[6] = {r->in, r->ker, r->str, r->dil, r->pad, r->out};
    int n = 0;
    ck_op_param_add(t, &n, "POOL_BWD", cls != NULL);
    ck_op_param_add(t, &n, "POOL_TYPE",
                    r->p.dtype == CK_DTYPE_F32   ? 0
                    : r->p.dtype == CK_DTYPE_F16 ? 1
                                                 : 2);
    ck_op_param_add(t, &n, "POOL_MAX", r->p.mode == CK_POOL_MAX);
    ck_op_param_add(t, &n, "POOL_IDX", (int)r->p.index);
    ck_op_param_add(t, &n, "POOL_INCLUDE_PAD", r->p.count_include_pad != 0);
    ck_op_param_add_ll(t, &n, "POOL_DIVISOR", r->p.divisor_override);
    ck_op_param_add_ll(t, &n, "POOL_N", r->p.n);
    ck_op_param_add_ll(t, &n, "POOL_C", r->p.c);
    for (int a = 0; a < 6; ++a)
        for (int d = 0; d < 3; ++d)
            ck_op_param_add_ll(t, &n, names[a][d], arr[a][d]);
    if (cls) {
        for (int d = 0; d < 3; ++d) {
            ck_op_param_add_ll(t, &n, cnames[0][d], cls->r[d]);
            ck_op_param_add_ll(t, &n, cnames[1][d], cls->rows[d]);
        }
        /* a class that no tap reaches (views built with one pretended tap) stores zeros */
        ck_op_param_add_ll(t, &n, "POOL_TAPS",
                           cls->f0[0] < r->ker[0] && cls->f0[1] < r->ker[1] &&
                                   cls->f0[2] < r->ker[2]
                               ? cls->taps[0] * cls->taps[1] * cls->taps[2]
                               : 0);
    } else {
        ck_op_param_add_ll(t, &n, "POOL_TAPS", r->taps);
    }
    ck_op_param_add(t, &n, "POOL_VEC", in->vec);
    ck_op_param_add(t, &n, "POOL_TM", in->tm);
    ck_op_param_add(t, &n, "POOL_TC", in->tc);
    ck_op_param_add(t, &n, "POOL_THREADS", in->threads);
    return n;
}

/* -inf of the element type: a value (f32) or the raw storage's bits (f16, bf16). */
static double neg_inf_fill(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? -1.0 / 0.0 : t == CK_DTYPE_F16 ? (double)0xfc00 : (double)0xff80;
}

static ck_status build(void *user, char **source)
{
    const pool_build *b = user;
    const ck_pool_prob *r = b->r;
    const ck_pool_instance *in = b->in;
    const ck_dtype dt = r->p.dtype;
    const ck_dtype it = r->is == 8 ? CK_DTYPE_F64 : CK_DTYPE_I32; /* int64 moved as doubles */
    *source = NULL;
    ck_dist_encoding enc;
    ck_descriptor *view = NULL, *mat = NULL;
    ck_status st =
        ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, in->threads, in->tm, in->tc, in->vec, &enc);
    if (!st)
        st =
            b->cls ? ck_conv_dy_view_make(&r->q, b->cls, &view) : ck_conv_im2col_make(&r->q, &view);
    if (!st && b->cls) {
        st = ck_conv_dx_view_make(&r->q, b->cls, &mat);
    } else if (!st) {
        ck_ival len[2] = {ck_ival_int(r->m), ck_ival_int(r->p.c)};
        ck_ival str[2] = {ck_ival_int(r->p.c), ck_ival_int(1)};
        st = ck_descriptor_make_naive(2, len, str, &mat);
    }
    char *defs = ck_op_params_defines(b->t, b->nt);
    if (!st && !defs)
        st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the defines.");
    ck_sbuf u = {0};
    const char *T = r->es == 4 ? "float" : "unsigned short", *IT = r->is == 8 ? "double" : "int";
    if (!st) {
        ck_sbuf_printf(&u,
                       "/* ck_pool %s %s, %d-D: n %lld, c %lld; tile %dx%d, %d threads, "
                       "%d-element vectors%s. */\n%s#define POOL_T %s\n#define POOL_IT %s\n"
                       "#define POOL_FILL %s\n",
                       b->cls                     ? "max backward"
                       : r->p.mode == CK_POOL_MAX ? "max"
                                                  : "avg",
                       ck_dtype_name(dt), r->p.ndim, (long long)r->p.n, (long long)r->p.c, in->tm,
                       in->tc, in->threads, in->vec, b->cls ? ", one residue class" : "", defs, T,
                       IT,
                       dt == CK_DTYPE_F32   ? "ck_neg_inf_f32()"
                       : dt == CK_DTYPE_F16 ? "0xfc00u"
                                            : "0xff80u");
        if (b->cls)
            ck_sbuf_printf(&u,
                           "#include \"ops/pool/bwd_pipeline_kernel.h\"\n"
                           "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_pool_bwd(const %s *dy, const "
                           "void *ind, %s *dx)\n{\n    pool_bwd_tile(dy, ind, dx);\n}\n",
                           in->threads, T, T);
        else
            ck_sbuf_printf(&u,
                           "#include \"ops/pool/fwd_pipeline_kernel.h\"\n"
                           "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_pool_fwd(const %s *x, %s *y, "
                           "void *ind)\n{\n    pool_fwd_tile(x, y, ind);\n}\n",
                           in->threads, T, T);
        if (u.oom)
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the source.");
    }
    if (!st) {
        ck_tile_window_spec w[3];
        memset(w, 0, sizeof w);
        int nw = 0;
        /* the view's loads: padding / missing outputs read the fill */
        w[nw].name = b->cls ? "dy" : "x";
        w[nw].desc = view;
        w[nw].dtype = dt;
        w[nw].fill = b->cls || r->p.mode == CK_POOL_AVG ? 0.0 : neg_inf_fill(dt);
        w[nw++].ops = CK_WIN_LOAD;
        if (r->is) { /* indices: stored (forward, over the output) or loaded (backward) */
            w[nw].name = "i";
            w[nw].desc = b->cls ? view : mat;
            w[nw].dtype = it;
            w[nw].fill = -1.0;
            w[nw++].ops = b->cls ? CK_WIN_LOAD : CK_WIN_STORE;
        }
        w[nw].name = b->cls ? "dx" : "y";
        w[nw].desc = mat;
        w[nw].dtype = dt;
        w[nw++].ops = CK_WIN_STORE;
        for (int i = 0; i < nw; ++i) {
            w[i].enc = &enc;
            w[i].origin_align[0] = in->tm;
            w[i].origin_align[1] = in->tc;
        }
        st = ck_tile_kernel_source(nw, w, u.s, source);
    }
    free(u.s);
    free(defs);
    ck_descriptor_destroy(view);
    ck_descriptor_destroy(mat);
    return st;
}

/* Build (or find) and launch the kernel of the forward (cls NULL) or of a backward class. */
static ck_status run(ck_context *ctx, const ck_pool_prob *r, const ck_conv_class *cls,
                     const void *a0, const void *a1, void *a2)
{
    ck_pool_instance in;
    uintptr_t bits = (uintptr_t)a0 | (uintptr_t)a1 | (uintptr_t)a2 | 16; /* a1 or a2 may be 0 */
    ck_pool_policy(r, (int)(bits & (~bits + 1)), &in);
    int64_t rows = cls ? r->p.n * cls->rows[0] * cls->rows[1] * cls->rows[2] : r->m;
    long long tiles_m = (rows + in.tm - 1) / in.tm, tiles_c = r->p.c / in.tc;
    if (tiles_c > 65535)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": c = %lld needs %lld tiles of %d channels; the launch takes at most "
                          "65535.",
                       (long long)r->p.c, tiles_c, in.tc);
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(r, &in, cls, t);
    char key[1536];
    if (ck_op_params_key("pool", t, nt, 5, key, sizeof key))
        return ck_fail(CK_ERROR_INTERNAL, OP ": the kernel key does not fit.");
    pool_build b = {r, &in, cls, t, nt};
    ck_kernel *k = NULL;
    ck_status st = ck_op_kernel(ctx, key, cls ? "ck_pool_bwd" : "ck_pool_fwd", build, &b, &k);
    if (st)
        return st;
    void *p0 = (void *)(uintptr_t)a0, *p1 = (void *)(uintptr_t)a1, *p2 = a2;
    void *args[3] = {&p0, &p1, &p2};
    size_t sizes[3] = {sizeof p0, sizeof p1, sizeof p2};
    return ck_op_launch(ctx, k, (unsigned)tiles_m, (unsigned)tiles_c, 1, (unsigned)in.threads, 0,
                        args, sizes, 3);
}

static int overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a && b && a0 < b0 + nb && b0 < a0 + na;
}

static ck_status check_ptr(const char *fn, const char *name, const void *p, int bytes)
{
    if (!p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: %s must not be NULL.", fn, name);
    if ((uintptr_t)p % (uintptr_t)bytes)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s (%p) is not aligned to its element (%d bytes).", fn, name, p, bytes);
    return CK_SUCCESS;
}

ck_status ck_pool_forward(ck_context *ctx, const ck_pool_problem *p, const void *x, void *y,
                          void *indices)
{
    const char *fn = "ck_pool_forward";
    CK_REQUIRE_NOT_NULL(ctx, fn);
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, 0, &r);
    if (!st)
        st = check_ptr(fn, "x", x, r.es);
    if (!st)
        st = check_ptr(fn, "y", y, r.es);
    if (!st && r.is)
        st = check_ptr(fn, "indices", indices, r.is);
    if (st)
        return st;
    size_t bx = (size_t)r.q.x_elems * r.es, by = (size_t)(r.m * r.p.c) * r.es,
           bi = (size_t)(r.m * r.p.c) * r.is;
    if (overlap(x, bx, y, by) ||
        (r.is && (overlap(x, bx, indices, bi) || overlap(y, by, indices, bi))))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: x, y and indices must not overlap.", fn);
    return run(ctx, &r, NULL, x, y, r.is ? indices : NULL);
}

ck_status ck_pool_backward(ck_context *ctx, const ck_pool_problem *p, const void *dy,
                           const void *indices, void *dx)
{
    const char *fn = "ck_pool_backward";
    CK_REQUIRE_NOT_NULL(ctx, fn);
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, 1, &r);
    if (!st)
        st = check_ptr(fn, "dy", dy, r.es);
    if (!st)
        st = check_ptr(fn, "indices", indices, r.is);
    if (!st)
        st = check_ptr(fn, "dx", dx, r.es);
    if (st)
        return st;
    size_t bx = (size_t)r.q.x_elems * r.es, by = (size_t)(r.m * r.p.c) * r.es,
           bi = (size_t)(r.m * r.p.c) * r.is;
    if (overlap(dx, bx, dy, by) || overlap(dx, bx, indices, bi))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: dx must not overlap dy or indices.", fn);
    int ncls = ck_conv_classes(&r.q, NULL, 0);
    ck_conv_class *cls = calloc((size_t)ncls, sizeof *cls);
    if (!cls)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the classes.", fn);
    ck_conv_classes(&r.q, cls, ncls);
    for (int i = 0; i < ncls && !st; ++i) {
        int rows = 1;
        for (int d = 0; d < 3; ++d) {
            rows &= cls[i].rows[d] > 0;
            if (cls[i].taps[d] < 1) /* no tap reaches these rows: its kernel stores zeros */
                cls[i].taps[d] = 1, cls[i].f0[d] = r.ker[d];
        }
        if (rows)
            st = run(ctx, &r, &cls[i], dy, indices, dx);
    }
    free(cls);
    return st;
}

ck_status ck_pool_source(const ck_pool_problem *p, int backward, char **source)
{
    if (!source)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_pool_source: source must not be NULL.");
    *source = NULL;
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, backward, &r);
    if (st)
        return st;
    ck_pool_instance in;
    ck_pool_policy(&r, 16, &in);
    ck_conv_class cls;
    if (backward) { /* the first class (residue 0 in every dim) */
        ck_conv_classes(&r.q, &cls, 1);
        for (int d = 0; d < 3; ++d)
            if (cls.taps[d] < 1)
                cls.taps[d] = 1, cls.f0[d] = r.ker[d];
    }
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(&r, &in, backward ? &cls : NULL, t);
    pool_build b = {&r, &in, backward ? &cls : NULL, t, nt};
    return build(&b, source);
}
