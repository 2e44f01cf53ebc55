/*
 * Convolution as implicit GEMM on the GEMM's pipelines (CK's grouped conv kernels): each
 * direction is a strided-batched ck_gemm problem (batch = groups) whose im2col operand is read
 * through a copy window generated from the im2col descriptor (descriptor.c) by
 * ck_tile_copy_generate -- 16-byte cp.async where C keeps runs of 8 (bf16/f16) or 4 (f32)
 * contiguous and aligned, zero-filled in the padding and past the edges. The pipeline takes the
 * window through its operand path: the source defines GEMM_A_LOADER (forward: A = im2col(X)) or
 * GEMM_B_LOADER (backward weight: B = im2col(X), the reduction over N * out), and the rest is
 * the GEMM's, unchanged. The policy (policy.c) picks the route of each implicit GEMM:
 *   sm80  ldmatrix + mma.sync, every view operand through its window (all directions);
 *   sm90  forward on sm_90a: the persistent warp-specialized wgmma pipeline, A's window run by
 *         the producer warpgroup (cp.async into the 128-byte-swizzled tile wgmma reads, an
 *         mbarrier arrival per thread when its copies land), W by TMA, the GEMM's epilogue;
 *   gemm  1x1 stride-1 unpadded forward: X is A itself, the GEMM's own kernel and cache key.
 *
 *   forward          M = N * out, N = K, K = filter * C;  A = im2col(X), B = W (K-major),
 *                    D = Y (row-major, ld G * K), C = residual, bias per column
 *   backward weight  M = K, N = filter * C, K = N * out;  A = dY (M-major, ld G * K),
 *                    B = im2col(X) (N-major), D = dW. One block reduces a whole tile's K range:
 *                    deterministic, no atomics.
 *   backward data    one GEMM per class of input residues mod the stride (descriptor.c):
 *                    M = N * rows, N = C, K = taps * K;  A = dY's view, B = W's view (both
 *                    through loaders), D = dX's rows of the class, stored by a generated
 *                    epilogue over the class's dX view; rows no tap reaches zero-filled first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/conv/conv_internal.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_conv"

/* One implicit GEMM of the plan: forward and backward weight have one; backward data one per
 * class of input residues (cls) that has both rows and taps. */
typedef struct conv_sub {
    ck_gemm_plan g; /* the GEMM's plan record: problem, instance, kernel, launch */
    ck_conv_class cls;
    ck_conv_choice choice; /* the policy's route, instance and reasons */
} conv_sub;

struct ck_conv_plan {
    ck_context *ctx;
    ck_conv_prob q;
    int loaders;   /* bit 0: A through a view's copy window, bit 1: B */
    int zero_fill; /* backward data: some rows of dX receive no tap (zeroed first) */
    int nsub;
    conv_sub *sub;
    int direct;     /* the direct depthwise route (no sub-GEMM) */
    int ndw;        /* its instances: one; backward data: one per residue class with taps */
    ck_conv_dw *dw; /* their geometry, instance, reason and kernels */
    float *dw_ws;   /* backward weight: the partials (device memory, the plan's) */
};

static ck_gemm_matrix mat(ck_dtype t, ck_gemm_order o, int64_t ld, int64_t bs)
{
    ck_gemm_matrix m = {t, o, ld, bs};
    return m;
}

/* The GEMM problem of the direction (one batch per group); plain: the forward 1x1 stride-1
 * unpadded convolution's, whose A is X itself (rows of G * C). */
static ck_status gemm_problem(const ck_conv_prob *q, const ck_conv_class *cls, int plain,
                              ck_gemm_problem *gp)
{
    const ck_conv_problem *p = &q->p;
    const int64_t G = p->g, C = p->c, K = p->k, KC = q->gemm_kf * C;
    ck_gemm_problem_init(gp);
    gp->batch = G;
    gp->compute = p->compute;
    if (p->direction == CK_CONV_FWD) {
        gp->m = q->gemm_m, gp->n = K, gp->k = KC;
        /* read by the loader (ld unused), or X as a matrix */
        gp->a = mat(p->in_dtype, CK_GEMM_ROW_MAJOR, plain ? G * C : KC, C);
        gp->b = mat(p->wei_dtype, CK_GEMM_COL_MAJOR, KC, K * KC);
        gp->d = mat(p->out_dtype, CK_GEMM_ROW_MAJOR, G * K, K);
        if (p->residual)
            gp->c = mat(p->residual_dtype, CK_GEMM_ROW_MAJOR, G * K, K);
        if (p->bias) {
            gp->bias = CK_GEMM_BIAS_COL;
            gp->bias_dtype = p->bias_dtype;
            gp->bias_batch_stride = K;
        }
        gp->activation = p->activation;
        return CK_SUCCESS;
    }
    if (p->direction == CK_CONV_BWD_WEIGHT) {
        gp->m = K, gp->n = KC, gp->k = q->gemm_m;
        gp->a = mat(p->out_dtype, CK_GEMM_COL_MAJOR, G * K, K);
        gp->b = mat(p->in_dtype, CK_GEMM_ROW_MAJOR, KC, C); /* read by the loader */
        gp->d = mat(p->wei_dtype, CK_GEMM_ROW_MAJOR, KC, K * KC);
        return CK_SUCCESS;
    }
    /* backward data, one class: M = N * rows, N = C, K = taps * K; A = dY's view, B = W's view
     * (both read by loaders), D = dX's rows of the class (the class's epilogue) */
    gp->m = q->p.n * cls->rows[0] * cls->rows[1] * cls->rows[2], gp->n = C;
    gp->k = cls->taps[0] * cls->taps[1] * cls->taps[2] * K;
    gp->a = mat(p->out_dtype, CK_GEMM_ROW_MAJOR, gp->k, K);
    gp->b = mat(p->wei_dtype, CK_GEMM_ROW_MAJOR, C, K * KC);
    gp->d = mat(p->in_dtype, CK_GEMM_ROW_MAJOR, G * C, C);
    return CK_SUCCESS;
}

static int loaders_of(ck_conv_direction d)
{
    return d == CK_CONV_FWD ? 1 : d == CK_CONV_BWD_WEIGHT ? 2 : 3;
}

/* The view an operand's loader reads: the im2col view of X (forward A, backward-weight B), or
 * backward data's views of dY (A) and W (B). */
static ck_status view_make(const ck_conv_prob *q, const ck_conv_class *c, int operand,
                           ck_descriptor **out)
{
    if (q->p.direction != CK_CONV_BWD_DATA)
        return ck_conv_im2col_make(q, out);
    return operand == 0 ? ck_conv_dy_view_make(q, c, out) : ck_conv_w_view_make(q, c, out);
}

/* The copy window of operand `operand` (0 A, 1 B) for this instance: tile (tile_m, tile_k) of
 * the view into A's K-major lines, or (tile_k, tile_n) into B's N-major lines, both in
 * gemm_swz's layout -- which for lines of 128 bytes is the sm90 tile's 128-byte swizzle (chunk
 * ^ line % 8 in 1024-byte groups), so one descriptor serves both families. *src: the window's
 * device C, named "va" or "vb". */
ck_status ck_conv_window_source(const ck_conv_prob *q, const ck_conv_class *c,
                                const ck_gemm_instance *in, int operand, char **src,
                                ck_tile_copy_info *info)
{
    *src = NULL;
    ck_dtype dt = operand == 0
                      ? (q->p.direction == CK_CONV_BWD_DATA ? q->p.out_dtype : q->p.in_dtype)
                      : (q->p.direction == CK_CONV_BWD_DATA ? q->p.wei_dtype : q->p.in_dtype);
    int es = ck_gemm_dtype_bytes(dt);
    int threads = in->family == CK_GEMM_FAMILY_SM90 ? 128 /* the producer warpgroup */
                                                    : in->warps_m * in->warps_n * 32;
    int rows = operand ? in->tile_k : in->tile_m, cols = operand ? in->tile_n : in->tile_k;
    ck_dist_encoding enc;
    ck_descriptor *view = NULL, *dst = NULL;
    ck_status st =
        ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, threads, rows, cols, 16 / es, &enc);
    if (!st)
        st = view_make(q, c, operand, &view);
    if (!st && in->family == CK_GEMM_FAMILY_SM90 && operand == 1)
        st = ck_conv_smem_boxes(rows, cols / 64, es, &dst); /* N-major: boxes of 64 columns */
    else if (!st)
        st = ck_conv_smem_lines(rows, cols * es, es, &dst);
    if (!st) {
        ck_tile_copy_spec s;
        memset(&s, 0, sizeof s);
        s.name = operand ? "vb" : "va";
        s.enc = &enc;
        s.dtype = dt;
        s.src = view;
        s.src_origin_align[0] = rows;
        s.src_origin_align[1] = cols;
        s.dst = dst;
        s.dst_origin_align[0] = rows;
        s.dst_origin_align[1] = cols;
        st = ck_tile_copy_generate(&s, src, info);
    }
    ck_descriptor_destroy(view);
    ck_descriptor_destroy(dst);
    return st;
}

typedef struct build_ctx {
    const ck_conv_plan *plan;
    const conv_sub *sub;
} build_ctx;

/* Backward data's epilogue: D = alpha * acc cast to dX's type, stored through a window over the
 * class's dX view (the acc encoding, masked at the edges), at the group's base pointer. */
static ck_status dx_epilogue_source(const ck_conv_prob *q, const conv_sub *sub,
                                    const ck_dist_encoding *acc, char **src)
{
    *src = NULL;
    ck_descriptor *view = NULL;
    ck_status st = ck_conv_dx_view_make(q, &sub->cls, &view);
    if (st)
        return st;
    ck_tile_window_spec w;
    memset(&w, 0, sizeof w);
    w.name = "d";
    w.desc = view;
    w.enc = acc;
    w.dtype = q->p.in_dtype;
    w.origin_align[0] = sub->g.inst.tile_m;
    /* the window proves its vectors' alignment from a 16-byte aligned base, but group g's base
     * is g * C elements in: claim the column origin aligned to gcd(tile_n, C) only, so that
     * every vector it proves is also aligned from the group's base */
    long long al = sub->g.inst.tile_n, c = q->p.c;
    while (c) {
        long long t = al % c;
        al = c, c = t;
    }
    w.origin_align[1] = q->p.g > 1 ? al : sub->g.inst.tile_n;
    w.ops = CK_WIN_STORE;
    char *win = NULL;
    st = ck_tile_window_generate(&w, &win);
    ck_descriptor_destroy(view);
    if (st)
        return st;
    int f32 = q->p.in_dtype == CK_DTYPE_F32;
    const char *T = f32 ? "float" : "unsigned short";
    const char *cvt = f32                              ? ""
                      : q->p.in_dtype == CK_DTYPE_BF16 ? "(unsigned short)ck_fast_f32_to_bf16"
                                                       : "(unsigned short)ck_fast_f32_to_f16";
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "#include \"ops/elementwise/ew_kernel.h\"\n%s\n"
                   "CK_DEVICE void gemm_epilogue(const float *acc, const ck_gemm_kargs *ka, "
                   "long long batch, long long m0, long long n0)\n{\n"
                   "    ck_win_d wd = make_win_d((%s *)ka->d + batch * ka->batch_d, m0, n0);\n"
                   "    %s out[CK_NREGS_d];\n"
                   "    CK_UNROLL for (int i = 0; i < CK_NREGS_d; ++i)\n"
                   "        out[i] = %s(ka->alpha * acc[i]);\n"
                   "    store_d(out, &wd);\n}\n",
                   win, T, T, cvt);
    ck_tile_free(win);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the epilogue.");
    }
    *src = b.s;
    return CK_SUCCESS;
}

static const char *dir_tag(ck_conv_direction d)
{
    return d == CK_CONV_FWD ? "fwd" : d == CK_CONV_BWD_DATA ? "bwd_data" : "bwd_weight";
}

/* The generated kernel's header comment: the convolution, the implicit GEMM, the route. */
static void head_comment(ck_sbuf *b, const ck_conv_plan *plan, const conv_sub *sub,
                         const ck_tile_copy_info *info, int o0)
{
    const ck_conv_prob *q = &plan->q;
    const ck_conv_problem *p = &q->p;
    const ck_gemm_prob *prob = &sub->g.prob;
    const ck_gemm_instance *inst = &sub->g.inst;
    int loaders = plan->loaders;
    ck_sbuf_printf(
        b,
        "/* ck_conv %s, %d-D: n %lld, g %lld, c %lld -> k %lld, in %lldx%lldx%lld, "
        "filter %lldx%lldx%lld, out %lldx%lldx%lld, stride %lldx%lldx%lld, dilation "
        "%lldx%lldx%lld, pad %lld/%lld %lld/%lld %lld/%lld.\n"
        " * Implicit GEMM (batch = groups) %lld x %lld x %lld on the GEMM's %s "
        "pipeline, instance %dx%dx%d s%d w%dx%d; operand%s %s read through the "
        "copy window(s) below over the view descriptor(s) (%d-byte %s).\n * Policy: %s. */\n",
        dir_tag(p->direction), p->ndim, (long long)p->n, (long long)p->g, (long long)p->c,
        (long long)p->k, (long long)q->in[0], (long long)q->in[1], (long long)q->in[2],
        (long long)q->fil[0], (long long)q->fil[1], (long long)q->fil[2], (long long)q->out[0],
        (long long)q->out[1], (long long)q->out[2], (long long)q->str[0], (long long)q->str[1],
        (long long)q->str[2], (long long)q->dil[0], (long long)q->dil[1], (long long)q->dil[2],
        (long long)q->pl[0], (long long)q->pr[0], (long long)q->pl[1], (long long)q->pr[1],
        (long long)q->pl[2], (long long)q->pr[2], (long long)prob->p.m, (long long)prob->p.n,
        (long long)prob->p.k, ck_conv_route_name(sub->choice.route), inst->tile_m, inst->tile_n,
        inst->tile_k, inst->stages, inst->warps_m, inst->warps_n, loaders == 3 ? "s" : "",
        loaders == 3 ? "A and B are"
        : o0         ? "B is"
                     : "A is",
        info[o0].vector_bytes, info[o0].async ? "cp.async" : "plain loads", sub->choice.why);
}

static const char *floordiv_defs =
    "#ifndef CK_FLOORDIV\n"
    "#define CK_FLOORDIV(a, b) ((a) / (b) - (((a) % (b) != 0) && (((a) < 0) != ((b) < 0))))\n"
    "#define CK_FLOORMOD(a, b) ((a) - CK_FLOORDIV(a, b) * (b))\n#endif\n"
    "#ifndef CK_MIN\n#define CK_MIN(a, b) ((a) < (b) ? (a) : (b))\n#endif\n"
    "#ifndef CK_MAX\n#define CK_MAX(a, b) ((a) > (b) ? (a) : (b))\n#endif\n";

/* The sm90 route: the GEMM's sm90 source with the view operands' loaders -- their copy windows,
 * run by the producer warpgroup (the windows' thread ids are the warpgroup's own: the generated
 * code's ck_warp_id / ck_thread_linear are taken modulo the warpgroup while it is defined). */
static ck_status build_sm90(const ck_conv_plan *plan, const conv_sub *sub, char **source)
{
    const ck_conv_prob *q = &plan->q;
    char *win[2] = {NULL, NULL}, *body = NULL;
    ck_tile_copy_info info[2];
    memset(info, 0, sizeof info);
    ck_status st = CK_SUCCESS;
    for (int o = 0; o < 2 && !st; ++o)
        if (plan->loaders >> o & 1)
            st = ck_conv_window_source(q, &sub->cls, &sub->g.inst, o, &win[o], &info[o]);
    if (st) {
        ck_tile_free(win[0]);
        ck_tile_free(win[1]);
        return st;
    }
    const char *ctype = ck_gemm_dtype_bytes(q->p.in_dtype) == 4 ? "float" : "unsigned short";
    ck_sbuf l = {0};
    ck_sbuf_printf(&l,
                   "%s#define ck_warp_id() (ck_warp_id() %% 4u)\n"
                   "#define ck_thread_linear() (ck_thread_linear() %% 128u)\n%s%s"
                   "#undef ck_warp_id\n#undef ck_thread_linear\n",
                   floordiv_defs, win[0] ? win[0] : "", win[1] ? win[1] : "");
    if (plan->loaders & 1)
        ck_sbuf_printf(&l,
                       "/* A's tile (m0, k0) of group `batch`: its copy window from the group's "
                       "base */\n"
                       "CK_DEVICE void conv_load_a(unsigned char *s, const ck_gemm_kargs *ka, "
                       "int batch, long long m0, long long k0)\n{\n"
                       "    ck_copy_va w = make_copy_va((%s *)ka->a + (long long)batch * "
                       "ka->batch_a, m0, k0, (%s *)s, 0, 0);\n"
                       "    copy_va(&w);\n}\n#define GEMM_A_LOADER conv_load_a\n",
                       ctype, ctype);
    if (plan->loaders & 2)
        ck_sbuf_printf(&l,
                       "/* B's tile (k0, n0) of group `batch` (N-major boxes of 64 columns) */\n"
                       "CK_DEVICE void conv_load_b(unsigned char *s, const ck_gemm_kargs *ka, "
                       "int batch, long long n0, long long k0)\n{\n"
                       "    ck_copy_vb w = make_copy_vb((%s *)ka->b + (long long)batch * "
                       "ka->batch_b, k0, n0, (%s *)s, 0, 0);\n"
                       "    copy_vb(&w);\n}\n#define GEMM_B_LOADER conv_load_b\n",
                       ctype, ctype);
    ck_tile_free(win[0]);
    ck_tile_free(win[1]);
    if (l.oom) {
        free(l.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the loader.");
    }
    /* strided backward data: the class's rows of dX through a window over its dX view, from
     * the wgmma accumulator's encoding (stride 1: dX's rows are the GEMM's, the GEMM's own) */
    char *epi = NULL;
    if (ck_conv_bwd_data_strided(q)) {
        ck_dist_encoding acc;
        ck_gemm_sm90_acc_encoding(&sub->g.inst, &acc);
        st = dx_epilogue_source(q, sub, &acc, &epi);
    }
    if (!st)
        st = ck_gemm_sm90_source_entry(&sub->g.prob, &sub->g.inst, l.s, epi, &body);
    free(l.s);
    free(epi);
    if (st)
        return st;
    ck_sbuf b = {0};
    head_comment(&b, plan, sub, info, plan->loaders & 1 ? 0 : 1);
    ck_sbuf_printf(&b, "%s", body);
    free(body);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

static ck_status build_source(void *user, char **source)
{
    const ck_conv_plan *plan = ((const build_ctx *)user)->plan;
    const conv_sub *sub = ((const build_ctx *)user)->sub;
    const ck_gemm_prob *prob = &sub->g.prob;
    const ck_gemm_instance *inst = &sub->g.inst;
    const ck_conv_prob *q = &plan->q;
    *source = NULL;
    if (sub->choice.route == CK_CONV_ROUTE_GEMM) /* the GEMM's own source (and cache key) */
        return sub->g.family->source(prob, inst, source);
    if (sub->choice.route == CK_CONV_ROUTE_SM90)
        return build_sm90(plan, sub, source);
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(prob, inst, params, CK_GEMM_MAX_PARAMS);
    if (np < 0)
        return ck_fail(CK_ERROR_INTERNAL, OP ": parameter table overflow.");
    ck_dist_encoding acc;
    ck_status st = ck_gemm_sm80_acc_encoding(prob, inst, &acc);
    if (st)
        return st;
    char *defs = ck_gemm_params_defines(params, np), *epi = NULL, *win[2] = {NULL, NULL};
    ck_tile_copy_info info[2];
    memset(info, 0, sizeof info);
    if (!defs)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the defines.");
    st = q->p.direction == CK_CONV_BWD_DATA
             ? dx_epilogue_source(q, sub, &acc, &epi)
             : ck_gemm_epilogue_source(prob, &acc, inst->tile_m, inst->tile_n, &epi);
    for (int o = 0; o < 2 && !st; ++o)
        if (plan->loaders >> o & 1)
            st = ck_conv_window_source(q, &sub->cls, inst, o, &win[o], &info[o]);
    if (st) {
        free(defs);
        free(epi);
        ck_tile_free(win[0]);
        ck_tile_free(win[1]);
        return st;
    }
    const char *ctype = ck_gemm_dtype_bytes(q->p.in_dtype) == 4 ? "float" : "unsigned short";
    int o0 = plan->loaders & 1 ? 0 : 1;
    ck_sbuf b = {0};
    head_comment(&b, plan, sub, info, o0);
    ck_sbuf_printf(&b,
                   "#include \"ck_device.h\"\n%s%s#include \"ops/gemm/gemm_args_kernel.h\"\n%s%s%s",
                   floordiv_defs, defs, epi, win[0] ? win[0] : "", win[1] ? win[1] : "");
    /* the operand path: the tile of k-tile origin k0 (and m0 or n0) of this group's view */
    if (plan->loaders & 1)
        ck_sbuf_printf(&b,
                       "CK_DEVICE void conv_load_a(unsigned char *s, const ck_gemm_kargs *ka, "
                       "long long m0, long long k0)\n{\n"
                       "    ck_copy_va w = make_copy_va((%s *)ka->a, m0, k0, (%s *)s, 0, 0);\n"
                       "    copy_va(&w);\n}\n#define GEMM_A_LOADER conv_load_a\n",
                       ctype, ctype);
    if (plan->loaders & 2)
        ck_sbuf_printf(&b,
                       "CK_DEVICE void conv_load_b(unsigned char *s, const ck_gemm_kargs *ka, "
                       "long long n0, long long k0)\n{\n"
                       "    ck_copy_vb w = make_copy_vb((%s *)ka->b, k0, n0, (%s *)s, 0, 0);\n"
                       "    copy_vb(&w);\n}\n#define GEMM_B_LOADER conv_load_b\n",
                       ctype, ctype);
    ck_sbuf_printf(&b,
                   "#include \"ops/gemm/sm80_pipeline_kernel.h\"\n"
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_conv_sm80(ck_gemm_kargs ka)\n"
                   "{\n    gemm_sm80_main(ka);\n}\n",
                   inst->warps_m * inst->warps_n * 32);
    free(defs);
    free(epi);
    ck_tile_free(win[0]);
    ck_tile_free(win[1]);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

/* The GEMM route: the GEMM's own key (its kernel is the GEMM's); the others
 * "conv/<dir>/<every derived length>/<route>/<the GEMM's parameter key>" */
static char *kernel_key(const ck_conv_plan *plan, const conv_sub *sub)
{
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(&sub->g.prob, &sub->g.inst, params, CK_GEMM_MAX_PARAMS);
    char *gk = np < 0 ? NULL : ck_gemm_params_key(params, np);
    if (!gk || sub->choice.route == CK_CONV_ROUTE_GEMM)
        return gk;
    const ck_conv_prob *q = &plan->q;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "conv/%s/n%lld/g%lld/c%lld/k%lld", dir_tag(q->p.direction),
                   (long long)q->p.n, (long long)q->p.g, (long long)q->p.c, (long long)q->p.k);
    for (int d = 0; d < 3; ++d)
        ck_sbuf_printf(&b, "/%lld.%lld.%lld.%lld.%lld.%lld.%lld", (long long)q->in[d],
                       (long long)q->fil[d], (long long)q->out[d], (long long)q->str[d],
                       (long long)q->dil[d], (long long)q->pl[d], (long long)q->pr[d]);
    if (q->p.direction == CK_CONV_BWD_DATA)
        ck_sbuf_printf(&b, "/class%lld.%lld.%lld", (long long)sub->cls.r[0],
                       (long long)sub->cls.r[1], (long long)sub->cls.r[2]);
    ck_sbuf_printf(&b, "/%s/%s", ck_conv_route_name(sub->choice.route), gk);
    free(gk);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

ck_status ck_conv_plan_create(ck_context *ctx, const ck_conv_problem *problem, ck_conv_plan **out)
{
    return ck_conv_plan_create_ex(ctx, problem, CK_CONV_PICK_POLICY, out);
}

int ck_conv_windows_exist(const ck_conv_prob *q, const ck_conv_class *c, const ck_gemm_instance *in)
{
    int loaders = loaders_of(q->p.direction), ok = 1;
    for (int o = 0; o < 2 && ok; ++o) {
        char *w = NULL;
        ck_tile_copy_info info;
        if (loaders >> o & 1) {
            ok = ck_conv_window_source(q, c, in, o, &w, &info) == CK_SUCCESS;
            if (!ok)
                ck_clear_error();
        }
        ck_tile_free(w);
    }
    return ok;
}

ck_status ck_conv_gemm_probs(const ck_conv_prob *q, const ck_conv_class *cls, ck_gemm_prob *loader,
                             ck_gemm_prob *plain)
{
    ck_gemm_problem gp;
    ck_status st = gemm_problem(q, cls, 0, &gp);
    if (!st)
        st = ck_gemm_prob_make(&gp, loader);
    if (!st && ck_conv_is_plain_gemm(q) && !(st = gemm_problem(q, cls, 1, &gp)))
        st = ck_gemm_prob_make(&gp, plain);
    return st ? ck_fail_context(st, OP ": the implicit GEMM") : CK_SUCCESS;
}

/* The GEMM of one sub-plan, its route and instance (the policy's). */
static ck_status sub_decide(const ck_conv_plan *plan, conv_sub *sub, const ck_device_props *props,
                            int pick, const char *no_dw, const char *tuned, int forced)
{
    ck_gemm_prob loader, plain;
    int is_plain = ck_conv_is_plain_gemm(&plan->q);
    ck_status st = ck_conv_gemm_probs(&plan->q, &sub->cls, &loader, &plain);
    if (st)
        return st;
    if (tuned && ck_conv_policy_tuned(&plan->q, &sub->cls, &loader, is_plain ? &plain : NULL, props,
                                      tuned, &sub->choice))
        no_dw = "";
    else {
        if (tuned)
            CK_LOG(forced ? CK_LOG_INFO : CK_LOG_WARN,
                   OP ": the tuned instance '%s' cannot run this problem; the policy decides.",
                   tuned);
        st = ck_conv_policy_choose(&plan->q, &sub->cls, &loader, is_plain ? &plain : NULL, props,
                                   pick, &sub->choice);
        if (st)
            return st;
    }
    if (no_dw[0]) { /* a depthwise problem the direct route refused: say why */
        size_t n = strlen(sub->choice.why);
        snprintf(sub->choice.why + n, sizeof sub->choice.why - n, "; %s", no_dw);
    }
    sub->g.prob = sub->choice.route == CK_CONV_ROUTE_GEMM ? plain : loader;
    sub->g.inst = sub->choice.inst;
    sub->g.family = ck_gemm_family_of(sub->choice.inst.family);
    sub->g.prob.tf32_truncate = sub->choice.inst.family == CK_GEMM_FAMILY_SM90;
    sub->g.a_loader = sub->choice.route == CK_CONV_ROUTE_SM90 && (plan->loaders & 1);
    sub->g.b_loader = sub->choice.route == CK_CONV_ROUTE_SM90 && (plan->loaders & 2);
    CK_LOG(CK_LOG_INFO, OP ": %s", sub->choice.why);
    return CK_SUCCESS;
}

/* The direct depthwise route's instances: one; backward data one per residue class of the
 * stride with rows and taps (conv's classes), rows that no tap reaches zeroed first. */
static ck_status dw_decide(ck_conv_plan *plan, const char *tuned)
{
    const ck_conv_prob *q = &plan->q;
    int ncls = 1;
    ck_conv_class *cls = NULL;
    if (q->p.direction == CK_CONV_BWD_DATA) {
        ncls = ck_conv_classes(q, NULL, 0);
        cls = calloc((size_t)ncls, sizeof *cls);
        if (!cls)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the classes.");
        ck_conv_classes(q, cls, ncls);
    }
    plan->dw = calloc((size_t)ncls, sizeof *plan->dw);
    if (!plan->dw) {
        free(cls);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    }
    plan->direct = 1;
    ck_status st = CK_SUCCESS;
    for (int i = 0; i < ncls && !st; ++i) {
        if (cls) {
            int work = ck_conv_class_work(&cls[i]);
            if (work == CK_CONV_CLASS_ZERO)
                plan->zero_fill = 1; /* rows that no tap reaches: zero */
            if (work != CK_CONV_CLASS_COMPUTE)
                continue;
        }
        st = ck_conv_dw_policy(q, cls ? &cls[i] : NULL, tuned, &plan->dw[plan->ndw]);
        if (!st && plan->ndw++ == 0)
            CK_LOG(CK_LOG_INFO, OP ": %s", plan->dw[0].why);
    }
    free(cls);
    return st;
}

/* Everything a plan decides before its kernels exist: the checked problem, its sub-GEMMs (one;
 * backward data: one per class with rows and taps) and their routes and instances. */
static ck_status plan_decide(ck_conv_plan *plan, const ck_conv_problem *problem,
                             const ck_device_props *props, int pick)
{
    ck_status st = ck_conv_prob_make(problem, &plan->q);
    if (st)
        return st;
    /* the instance forced by ck tune or the tuning table's, when the plan accepts it */
    char tuned[CK_CONV_TUNED_MAX] = "";
    int forced = 0; /* ck tune's candidate: a refusal is no surprise */
    if (pick == CK_CONV_PICK_POLICY && plan->ctx)
        forced = ck_conv_tuned_text(plan->ctx, &plan->q, tuned, sizeof tuned);
    if (tuned[0] && !ck_conv_tuned_ok(&plan->q, props, tuned)) {
        CK_LOG(forced ? CK_LOG_INFO : CK_LOG_WARN,
               OP ": the tuned instance '%s' cannot run this problem; the policy decides.", tuned);
        tuned[0] = 0;
    }
    if (strncmp(tuned, "depthwise:", 10) == 0)
        return dw_decide(plan, tuned);
    /* depthwise (G = C = K): the direct route where it takes the problem (the policy's choice;
     * the tests' picks of GEMM routes keep the implicit GEMM) */
    char no_dw[384] = "";
    int dw_shaped = plan->q.p.c == 1 && plan->q.p.g > 1; /* depthwise or a channel multiplier */
    if (pick == CK_CONV_PICK_POLICY && !tuned[0] &&
        !ck_conv_dw_refuses(&plan->q, no_dw, sizeof no_dw))
        return dw_decide(plan, NULL);
    if (!dw_shaped || pick != CK_CONV_PICK_POLICY)
        no_dw[0] = 0;
    plan->loaders = loaders_of(problem->direction);
    int ncls = 1;
    ck_conv_class *cls = NULL;
    if (problem->direction == CK_CONV_BWD_DATA) {
        ncls = ck_conv_classes(&plan->q, NULL, 0);
        cls = calloc((size_t)ncls, sizeof *cls);
        if (!cls)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the classes.");
        ck_conv_classes(&plan->q, cls, ncls);
    }
    plan->sub = calloc((size_t)ncls, sizeof *plan->sub);
    if (!plan->sub) {
        free(cls);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    }
    for (int i = 0; i < ncls && !st; ++i) {
        if (cls) {
            int work = ck_conv_class_work(&cls[i]);
            if (work == CK_CONV_CLASS_ZERO)
                plan->zero_fill = 1; /* rows that no tap reaches: zero */
            if (work != CK_CONV_CLASS_COMPUTE)
                continue;
            plan->sub[plan->nsub].cls = cls[i];
        }
        st = sub_decide(plan, &plan->sub[plan->nsub], props, pick, no_dw, tuned[0] ? tuned : NULL,
                        forced);
        plan->nsub++;
    }
    free(cls);
    return st;
}

static void plan_free(ck_conv_plan *plan)
{
    if (plan) {
        for (int i = 0; i < plan->nsub; ++i)
            if (plan->sub[i].g.family_state_free)
                plan->sub[i].g.family_state_free(plan->sub[i].g.family_state);
        free(plan->sub);
        if (plan->dw_ws)
            ck_free(ck_context_device(plan->ctx), plan->dw_ws);
        free(plan->dw);
    }
    free(plan);
}

ck_status ck_conv_source(const ck_conv_problem *problem, const ck_device_props *props, int pick,
                         char **source)
{
    if (!problem || !props || !source)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_conv_source: NULL argument.");
    *source = NULL;
    ck_conv_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_conv_source: out of host memory.");
    ck_status st = plan_decide(plan, problem, props, pick);
    if (!st && plan->direct) {
        st = plan->ndw > 0 ? ck_conv_dw_source(&plan->q, &plan->dw[0], source)
                           : ck_fail(CK_ERROR_INVALID_ARGUMENT,
                                     "ck_conv_source: every row of dX is zero; no kernel.");
        plan_free(plan);
        return st;
    }
    if (!st && plan->nsub < 1)
        st = ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_conv_source: the problem has no GEMM.");
    if (!st) {
        build_ctx b = {plan, &plan->sub[0]};
        st = build_source(&b, source);
    }
    plan_free(plan);
    return st;
}

ck_status ck_conv_plan_choice(ck_context *ctx, const ck_conv_problem *problem, char *name,
                              size_t size, int *tuned)
{
    ck_conv_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    plan->ctx = ctx;
    ck_status st = plan_decide(plan, problem, ck_op_props(ctx), CK_CONV_PICK_POLICY);
    if (!st)
        ck_conv_plan_instance(plan, name, size);
    *tuned = !st && (plan->direct ? plan->ndw > 0 && plan->dw[0].tuned
                                  : plan->nsub > 0 && plan->sub[0].choice.tuned);
    plan_free(plan);
    return st;
}

void ck_conv_plan_instance(const ck_conv_plan *plan, char *name, size_t size)
{
    name[0] = 0;
    if (plan->direct && plan->ndw > 0)
        ck_conv_dw_name(&plan->q, &plan->dw[0], name, size);
    else if (!plan->direct && plan->nsub > 0)
        ck_conv_gemm_choice_name(plan->sub[0].choice.route, &plan->sub[0].choice.inst, name, size);
}

ck_conv_route ck_conv_plan_route(const ck_conv_plan *plan)
{
    if (plan && plan->direct)
        return CK_CONV_ROUTE_DEPTHWISE;
    return plan && plan->nsub > 0 ? plan->sub[0].choice.route : CK_CONV_ROUTE_SM80;
}

ck_status ck_conv_plan_create_ex(ck_context *ctx, const ck_conv_problem *problem, int pick,
                                 ck_conv_plan **out)
{
    if (!ctx || !problem || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_create: ctx, problem and plan must not be NULL.");
    *out = NULL;
    ck_conv_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    plan->ctx = ctx;
    ck_status st = plan_decide(plan, problem, ck_op_props(ctx), pick);
    for (int i = 0; i < plan->ndw && !st; ++i)
        st = ck_conv_dw_kernels(ctx, &plan->q, &plan->dw[i]);
    if (!st && plan->ndw > 0 && plan->dw[0].ws_bytes) {
        void *ws = NULL;
        st = ck_malloc(ck_context_device(ctx), plan->dw[0].ws_bytes, &ws);
        plan->dw_ws = ws;
    }
    for (int i = 0; i < plan->nsub && !st; ++i) {
        conv_sub *sub = &plan->sub[i];
        sub->g.ctx = ctx;
        char *key = kernel_key(plan, sub);
        if (!key) {
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel key.");
            break;
        }
        build_ctx b = {plan, sub};
        const char *name =
            sub->choice.route == CK_CONV_ROUTE_SM80 ? "ck_conv_sm80" : sub->g.family->kernel_name;
        st = ck_op_kernel(ctx, key, name, build_source, &b, &sub->g.kernel);
        free(key);
        if (!st)
            st = sub->g.family->prepare(&sub->g);
    }
    if (st) {
        plan_free(plan);
        return st;
    }
    *out = plan;
    return CK_SUCCESS;
}

static ck_status check_ptr(const char *name, const void *p, size_t align)
{
    if (!p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_conv_plan_execute: %s must not be NULL.",
                       name);
    if ((uintptr_t)p % align)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_execute: %s (%p) is not aligned to %zu bytes.", name, p,
                       align);
    return CK_SUCCESS;
}

const ck_conv_prob *ck_conv_plan_prob(const ck_conv_plan *plan)
{
    return &plan->q;
}

ck_context *ck_conv_plan_context(const ck_conv_plan *plan)
{
    return plan->ctx;
}

/* [a0, a0 + na) and [b0, b0 + nb) intersect */
static int overlaps(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + nb && b0 < a0 + na;
}

/* The direct depthwise route: 16-byte vectors of channels in X, Y (dY, dX) and the residual
 * (every vector lies at a multiple of its width from the base), elements in W and the bias;
 * the written tensor apart from the ones read. */
static ck_status execute_direct(ck_conv_plan *plan, const ck_conv_args *a)
{
    const ck_conv_problem *p = &plan->q.p;
    ck_status st = check_ptr("x", a->x, 16);
    if (!st)
        st = check_ptr("y", a->y, 16);
    if (!st)
        st = check_ptr("w", a->w, (size_t)ck_gemm_dtype_bytes(p->wei_dtype));
    if (!st && p->bias)
        st = check_ptr("bias", a->bias, (size_t)ck_gemm_dtype_bytes(p->bias_dtype));
    if (!st && p->residual)
        st = check_ptr("residual", a->residual, 16);
    if (st)
        return st;
    size_t ex = (size_t)plan->q.x_elems * (size_t)ck_gemm_dtype_bytes(p->in_dtype),
           ey = (size_t)plan->q.y_elems * (size_t)ck_gemm_dtype_bytes(p->out_dtype),
           ew = (size_t)plan->q.w_elems * (size_t)ck_gemm_dtype_bytes(p->wei_dtype);
    if (p->direction == CK_CONV_BWD_WEIGHT
            ? overlaps(a->w, ew, a->x, ex) || overlaps(a->w, ew, a->y, ey)
            : overlaps(a->x, ex, a->y, ey))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_execute: the written tensor (%s) overlaps one the depthwise "
                       "kernel reads; give separate tensors.",
                       p->direction == CK_CONV_FWD        ? "y"
                       : p->direction == CK_CONV_BWD_DATA ? "x"
                                                          : "w");
    if (p->residual &&
        overlaps(a->residual,
                 (size_t)plan->q.y_elems * (size_t)ck_gemm_dtype_bytes(p->residual_dtype), a->y,
                 ey))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_execute: residual overlaps y; give a separate tensor.");
    if (plan->zero_fill && (st = ck_memset_d8(ck_context_device(plan->ctx), a->x, 0, ex,
                                              ck_context_stream(plan->ctx))))
        return st;
    for (int i = 0; i < plan->ndw && !st; ++i)
        st = ck_conv_dw_launch(plan->ctx, &plan->q, &plan->dw[i], plan->dw_ws, a);
    return st;
}

ck_status ck_conv_execute_ck_layout(ck_conv_plan *plan, const ck_conv_args *a)
{
    if (!plan || !a)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_execute: plan and args must not be NULL.");
    const ck_conv_problem *p = &plan->q.p;
    if (plan->direct)
        return execute_direct(plan, a);
    /* the views' copy windows read 16-byte pieces where they proved them aligned from the
     * base; the GEMM's own operands need the instance's alignment (the first GEMM's: the
     * classes of backward data read and write only through views) */
    const ck_gemm_plan *g0 = plan->nsub > 0 ? &plan->sub[0].g : NULL;
    unsigned al_a = g0 ? g0->align_a : 16, al_b = g0 ? g0->align_b : 16,
             al_c = g0 ? g0->align_c : 16, al_d = g0 ? g0->align_d : 16;
    int fwd = p->direction == CK_CONV_FWD, bwd = p->direction == CK_CONV_BWD_DATA;
    ck_status st = check_ptr("x", a->x, 16);
    if (!st)
        st = check_ptr("w", a->w, fwd ? al_b : bwd ? 16 : al_d);
    if (!st)
        st = check_ptr("y", a->y, fwd ? al_d : bwd ? 16 : al_a);
    if (!st && p->bias)
        st = check_ptr("bias", a->bias, (size_t)ck_gemm_dtype_bytes(p->bias_dtype));
    if (!st && p->residual)
        st = check_ptr("residual", a->residual, al_c);
    if (st)
        return st;
    if (p->residual) { /* the epilogue reads C where it writes D: no partial overlap */
        uintptr_t r0 = (uintptr_t)a->residual, y0 = (uintptr_t)a->y;
        uintptr_t r1 =
            r0 + (uintptr_t)plan->q.y_elems * (uintptr_t)ck_gemm_dtype_bytes(p->residual_dtype);
        uintptr_t y1 =
            y0 + (uintptr_t)plan->q.y_elems * (uintptr_t)ck_gemm_dtype_bytes(p->out_dtype);
        if (r0 < y1 && y0 < r1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_conv_plan_execute: residual overlaps y; give a separate tensor.");
    }
    if (plan->zero_fill &&
        (st = ck_memset_d8(ck_context_device(plan->ctx), a->x, 0,
                           (size_t)plan->q.x_elems * (size_t)ck_gemm_dtype_bytes(p->in_dtype),
                           ck_context_stream(plan->ctx))))
        return st;
    ck_gemm_args ga;
    ck_gemm_args_init(&ga);
    ga.alpha = a->alpha;
    if (p->direction == CK_CONV_FWD) {
        ga.a = a->x, ga.b = a->w, ga.d = a->y, ga.bias = a->bias, ga.c = a->residual;
        ga.beta = p->residual ? 1.0f : 0.0f;
    } else if (p->direction == CK_CONV_BWD_WEIGHT) {
        ga.a = a->y, ga.b = a->x, ga.d = a->w;
    } else {
        ga.a = a->y, ga.b = a->w, ga.d = a->x;
    }
    for (int i = 0; i < plan->nsub && !st; ++i)
        st = plan->sub[i].g.family->launch(&plan->sub[i].g, &ga);
    return st;
}

ck_status ck_conv_plan_describe(const ck_conv_plan *plan, char *buf, size_t size)
{
    if (!plan || !buf || !size)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_conv_plan_describe: NULL argument.");
    if (plan->direct) {
        if (plan->ndw < 1) {
            snprintf(buf, size, "%s: direct depthwise, every row of dX is zero",
                     dir_tag(plan->q.p.direction));
            return CK_SUCCESS;
        }
        const ck_conv_dw *dw = &plan->dw[0];
        int n = snprintf(buf, size,
                         "%s: direct depthwise, route depthwise, %lld channels, vec %d x %d "
                         "threads, %d strips of %d outputs per block",
                         dir_tag(plan->q.p.direction), (long long)plan->q.p.g, dw->vec, dw->tct,
                         dw->tr, dw->strip);
        if (plan->ndw > 1 && n > 0 && (size_t)n < size)
            snprintf(buf + n, size - (size_t)n, " (the first of %d residue classes)", plan->ndw);
        return CK_SUCCESS;
    }
    if (plan->nsub < 1) {
        snprintf(buf, size, "%s: no GEMM (every row of dX is zero)", dir_tag(plan->q.p.direction));
        return CK_SUCCESS;
    }
    const ck_gemm_plan *g = &plan->sub[0].g;
    const ck_gemm_instance *in = &g->inst;
    int n = snprintf(buf, size,
                     "%s: implicit GEMM %lld x %lld x %lld x %lld groups, route %s, "
                     "sm%d %dx%dx%d s%d w%dx%d",
                     dir_tag(plan->q.p.direction), (long long)g->prob.p.m, (long long)g->prob.p.n,
                     (long long)g->prob.p.k, (long long)g->prob.p.batch,
                     ck_conv_route_name(plan->sub[0].choice.route), in->family, in->tile_m,
                     in->tile_n, in->tile_k, in->stages, in->warps_m, in->warps_n);
    if (plan->nsub > 1 && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (the first of %d residue classes)", plan->nsub);
    return CK_SUCCESS;
}

void ck_conv_plan_destroy(ck_conv_plan *plan)
{
    plan_free(plan); /* the kernels belong to the context's cache */
}
