/*
 * The kernel source of a convolution plan's implicit GEMM (kernel.c builds the plan): the
 * operands' copy windows generated from the im2col / class views (descriptor.c), backward
 * data's epilogue window over dX, the header comment naming the convolution and its im2col
 * descriptor, the sm80 / sm90 source around the GEMM's pipeline, and the kernel cache key.
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

/* The C type of operand A's (0) or B's (1) elements as the copy windows take them. */
static const char *operand_ctype(const ck_conv_prob *q, int operand)
{
    ck_dtype t = ck_conv_read_dtype(&q->p, operand);
    return t == CK_DTYPE_I8 ? "signed char" : ck_gemm_storage_type(t);
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
    ck_dtype dt = ck_conv_read_dtype(&q->p, operand);
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

/* Backward data's epilogue: D = alpha * acc cast to dX's type, stored through a window over the
 * class's dX view (the acc encoding, masked at the edges), at the group's base pointer. */
static ck_status dx_epilogue_source(const ck_conv_prob *q, const ck_conv_sub *sub,
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
    /* the GEMM epilogue's arithmetic: i8 accumulates in int, an i32 dX is computed in double
     * (exact integers); alpha (with the input scales) times acc, divided by dX's scale, cast */
    ck_dtype dt = q->p.in_dtype;
    int int_acc = ck_conv_read_dtype(&q->p, 0) == CK_DTYPE_I8, f64 = dt == CK_DTYPE_I32;
    const char *T = ck_gemm_storage_type(dt), *V = f64 ? "double" : "float";
    char cast[160];
    ck_gemm_cast_expr(dt, f64, "v", cast, sizeof cast);
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "#include \"ops/elementwise/ew_kernel.h\"\n%s\n"
                   "CK_DEVICE void gemm_epilogue(const %s *acc, const ck_gemm_kargs *ka, "
                   "long long batch, long long m0, long long n0)\n{\n"
                   "    ck_win_d wd = make_win_d((%s *)ka->d + batch * ka->batch_d, m0, n0);\n"
                   "    %s out[CK_NREGS_d];\n"
                   "    CK_UNROLL for (int i = 0; i < CK_NREGS_d; ++i) {\n"
                   "        %s v = (%s)ka->alpha * (%s)acc[i] * (%s)ka->inv_scale_d;\n"
                   "        out[i] = %s;\n    }\n"
                   "    store_d(out, &wd);\n}\n",
                   win, int_acc ? "int" : "float", T, T, V, V, V, V, cast);
    ck_tile_free(win);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the epilogue.");
    }
    *src = b.s;
    return CK_SUCCESS;
}

const char *ck_conv_dir_tag(ck_conv_direction d)
{
    return d == CK_CONV_FWD ? "fwd" : d == CK_CONV_BWD_DATA ? "bwd_data" : "bwd_weight";
}

/* The generated kernel's header comment: the convolution, the implicit GEMM, the route. */
static void head_comment(ck_sbuf *b, const ck_conv_plan *plan, const ck_conv_sub *sub,
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
        ck_conv_dir_tag(p->direction), p->ndim, (long long)p->n, (long long)p->g, (long long)p->c,
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
static ck_status build_sm90(const ck_conv_plan *plan, const ck_conv_sub *sub, char **source)
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
    const char *ta = operand_ctype(q, 0), *tb = operand_ctype(q, 1);
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
                       ta, ta);
    if (plan->loaders & 2)
        ck_sbuf_printf(&l,
                       "/* B's tile (k0, n0) of group `batch` (N-major boxes of 64 columns) */\n"
                       "CK_DEVICE void conv_load_b(unsigned char *s, const ck_gemm_kargs *ka, "
                       "int batch, long long n0, long long k0)\n{\n"
                       "    ck_copy_vb w = make_copy_vb((%s *)ka->b + (long long)batch * "
                       "ka->batch_b, k0, n0, (%s *)s, 0, 0);\n"
                       "    copy_vb(&w);\n}\n#define GEMM_B_LOADER conv_load_b\n",
                       tb, tb);
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

ck_status ck_conv_build_source(void *user, char **source)
{
    const ck_conv_plan *plan = ((const ck_conv_build *)user)->plan;
    const ck_conv_sub *sub = ((const ck_conv_build *)user)->sub;
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
    const char *ta = operand_ctype(q, 0), *tb = operand_ctype(q, 1);
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
                       ta, ta);
    if (plan->loaders & 2)
        ck_sbuf_printf(&b,
                       "CK_DEVICE void conv_load_b(unsigned char *s, const ck_gemm_kargs *ka, "
                       "long long n0, long long k0)\n{\n"
                       "    ck_copy_vb w = make_copy_vb((%s *)ka->b, k0, n0, (%s *)s, 0, 0);\n"
                       "    copy_vb(&w);\n}\n#define GEMM_B_LOADER conv_load_b\n",
                       tb, tb);
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
char *ck_conv_kernel_key(const ck_conv_plan *plan, const ck_conv_sub *sub)
{
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(&sub->g.prob, &sub->g.inst, params, CK_GEMM_MAX_PARAMS);
    char *gk = np < 0 ? NULL : ck_gemm_params_key(params, np);
    if (!gk || sub->choice.route == CK_CONV_ROUTE_GEMM)
        return gk;
    const ck_conv_prob *q = &plan->q;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "conv/%s/n%lld/g%lld/c%lld/k%lld", ck_conv_dir_tag(q->p.direction),
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
