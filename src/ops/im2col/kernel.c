/*
 * ck_im2col's kernel: the parameter table (one list printing both the source's #defines and
 * the kernel cache key), the two generated windows -- a load window over the im2col view that
 * ck_conv's implicit GEMM reads (ck_conv_im2col_make: pad -> embed -> merge; masked, zero, in
 * the padding) and a store window over the group's packed M x K matrix, both with the policy's
 * thread-raked 2-D distribution -- and the launch: grid (M tiles, K tiles, groups).
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
#include "ops/im2col/im2col_internal.h"

#define OP "ck_im2col"

typedef struct im2col_build {
    const ck_im2col_prob *r;
    const ck_im2col_instance *in;
    const ck_op_param *t;
    int nt;
} im2col_build;

/* Everything the source depends on: the whole geometry (the windows are concrete), the type,
 * the instance. */
static int params(const ck_im2col_prob *r, const ck_im2col_instance *in, ck_op_param *t)
{
    const ck_conv_prob *q = &r->q;
    int n = 0;
    static const char *names[6][3] = {{"IM2COL_IN0", "IM2COL_IN1", "IM2COL_IN2"},
                                      {"IM2COL_FIL0", "IM2COL_FIL1", "IM2COL_FIL2"},
                                      {"IM2COL_STR0", "IM2COL_STR1", "IM2COL_STR2"},
                                      {"IM2COL_DIL0", "IM2COL_DIL1", "IM2COL_DIL2"},
                                      {"IM2COL_PL0", "IM2COL_PL1", "IM2COL_PL2"},
                                      {"IM2COL_PR0", "IM2COL_PR1", "IM2COL_PR2"}};
    const int64_t *arr[6] = {q->in, q->fil, q->str, q->dil, q->pl, q->pr};
    ck_op_param_add(t, &n, "IM2COL_ES", r->es);
    ck_op_param_add_ll(t, &n, "IM2COL_N", q->p.n);
    ck_op_param_add_ll(t, &n, "IM2COL_G", q->p.g);
    ck_op_param_add_ll(t, &n, "IM2COL_C", q->p.c);
    for (int a = 0; a < 6; ++a)
        for (int d = 0; d < 3; ++d)
            ck_op_param_add_ll(t, &n, names[a][d], arr[a][d]);
    ck_op_param_add_ll(t, &n, "IM2COL_M", r->m);
    ck_op_param_add_ll(t, &n, "IM2COL_K", r->k);
    ck_op_param_add(t, &n, "IM2COL_VEC", in->vec);
    ck_op_param_add(t, &n, "IM2COL_TM", in->tm);
    ck_op_param_add(t, &n, "IM2COL_TK", in->tk);
    ck_op_param_add(t, &n, "IM2COL_THREADS", in->threads);
    return n;
}

/* The source: defines, the windows over the view and the matrix, the pipeline, the kernel. */
static ck_status build(void *user, char **source)
{
    const im2col_build *b = user;
    const ck_im2col_prob *r = b->r;
    const ck_im2col_instance *in = b->in;
    *source = NULL;
    ck_dist_encoding enc;
    ck_descriptor *view = NULL, *mat = NULL;
    ck_status st =
        ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, in->threads, in->tm, in->tk, in->vec, &enc);
    if (!st)
        st = ck_conv_im2col_make(&r->q, &view);
    ck_ival len[2] = {ck_ival_int(r->m), ck_ival_int(r->k)},
            str[2] = {ck_ival_int(r->k), ck_ival_int(1)};
    if (!st)
        st = ck_descriptor_make_naive(2, len, str, &mat);
    char *defs = ck_op_params_defines(b->t, b->nt);
    if (!st && !defs)
        st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the defines.");
    ck_sbuf user_src = {0};
    if (!st) {
        const char *T = r->es == 4 ? "float" : "unsigned short";
        ck_sbuf_printf(&user_src,
                       "/* ck_im2col: %d-D, n %lld, g %lld, c %lld per group, im2col matrix "
                       "%lld x %lld per group; tile %dx%d, %d threads, %d-element vectors. */\n"
                       "%s#define IM2COL_T %s\n"
                       "#include \"ops/im2col/im2col_pipeline_kernel.h\"\n"
                       "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_im2col_kernel(const %s *x, %s "
                       "*out)\n{\n    im2col_tile(x, out);\n}\n",
                       r->q.p.ndim, (long long)r->q.p.n, (long long)r->q.p.g, (long long)r->q.p.c,
                       (long long)r->m, (long long)r->k, in->tm, in->tk, in->threads, in->vec, defs,
                       T, in->threads, T, T);
        if (user_src.oom)
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the source.");
    }
    if (!st) {
        ck_tile_window_spec w[2];
        memset(w, 0, sizeof w);
        w[0].name = "src";
        w[0].desc = view;
        w[0].ops = CK_WIN_LOAD;
        w[1].name = "dst";
        w[1].desc = mat;
        w[1].ops = CK_WIN_STORE;
        for (int i = 0; i < 2; ++i) {
            w[i].enc = &enc;
            w[i].dtype = r->q.p.in_dtype;
            w[i].origin_align[0] = in->tm;
            w[i].origin_align[1] = in->tk;
            w[i].fill = 0.0; /* the padding reads as zero */
        }
        st = ck_tile_kernel_source(2, w, user_src.s, source);
    }
    free(user_src.s);
    free(defs);
    ck_descriptor_destroy(view);
    ck_descriptor_destroy(mat);
    return st;
}

ck_status ck_im2col(ck_context *ctx, const ck_conv_problem *problem, const void *x, void *out)
{
    CK_REQUIRE_NOT_NULL(ctx, OP);
    ck_im2col_prob r;
    ck_status st = ck_im2col_prob_make(problem, &r);
    if (st)
        return st;
    if (!x || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": x and out must not be NULL.");
    if ((uintptr_t)x % (uintptr_t)r.es || (uintptr_t)out % (uintptr_t)r.es)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": x (%p) and out (%p) must be aligned to the element (%d bytes).", x,
                       out, r.es);
    uintptr_t x0 = (uintptr_t)x, x1 = x0 + (uintptr_t)r.q.x_elems * (uintptr_t)r.es;
    uintptr_t o0 = (uintptr_t)out, o1 = o0 + (uintptr_t)(r.q.p.g * r.m * r.k) * (uintptr_t)r.es;
    if (x0 < o1 && o0 < x1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": out overlaps x; give a separate buffer.");
    ck_im2col_instance in;
    uintptr_t bits = (uintptr_t)x | (uintptr_t)out | 16;
    ck_im2col_policy(&r, (int)(bits & (~bits + 1)), &in);
    long long tiles_m = (r.m + in.tm - 1) / in.tm, tiles_k = (r.k + in.tk - 1) / in.tk;
    if (tiles_k > 65535 || r.q.p.g > 65535)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": K = %lld (%lld tiles of %d) and g = %lld: the launch takes at most "
                          "65535 tiles of K and 65535 groups.",
                       (long long)r.k, tiles_k, in.tk, (long long)r.q.p.g);
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(&r, &in, t);
    char key[1024];
    if (ck_op_params_key("im2col", t, nt, 7, key, sizeof key))
        return ck_fail(CK_ERROR_INTERNAL, OP ": the kernel key does not fit.");
    im2col_build b = {&r, &in, t, nt};
    ck_kernel *k = NULL;
    st = ck_op_kernel(ctx, key, "ck_im2col_kernel", build, &b, &k);
    if (st)
        return st;
    void *xp = (void *)(uintptr_t)x, *op = out;
    void *args[2] = {&xp, &op};
    size_t sizes[2] = {sizeof xp, sizeof op};
    return ck_op_launch(ctx, k, (unsigned)tiles_m, (unsigned)tiles_k, (unsigned)r.q.p.g,
                        (unsigned)in.threads, 0, args, sizes, 2);
}

ck_status ck_im2col_source(const ck_conv_problem *problem, char **source)
{
    if (!source)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_im2col_source: source must not be NULL.");
    *source = NULL;
    ck_im2col_prob r;
    ck_status st = ck_im2col_prob_make(problem, &r);
    if (st)
        return st;
    ck_im2col_instance in;
    ck_im2col_policy(&r, 16, &in);
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(&r, &in, t);
    im2col_build b = {&r, &in, t, nt};
    return build(&b, source);
}
