/*
 * The direct depthwise convolution kernel (G = C = K; the route and instance: policy.c): the
 * parameter table -- one list printing both the source's #defines and the kernel cache key --,
 * the source around dw_pipeline_kernel.h (forward, backward data) or dw_wgrad_pipeline_kernel.h
 * (backward weight: two kernels of one module), the launches. Forward and backward data: grid
 * (blocks of tr strips of outputs, blocks of tct * vec channels), the block's filter taps in
 * dynamic shared memory as f32. Backward weight: grid (filter rows, channel blocks, lane blocks)
 * writing partials into the plan's buffer, then the fixed-order sum, one thread per weight.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/common/op_params.h"
#include "ops/conv/conv_internal.h"
#include "ops/conv/dw_args_kernel.h"

#define OP "ck_conv"

static int params(const ck_conv_prob *q, const ck_conv_dw *dw, ck_op_param *t)
{
    static const char *names[12][3] = {
        {"DW_SRC0", "DW_SRC1", "DW_SRC2"},    {"DW_DST0", "DW_DST1", "DW_DST2"},
        {"DW_FIL0", "DW_FIL1", "DW_FIL2"},    {"DW_STR0", "DW_STR1", "DW_STR2"},
        {"DW_DIL0", "DW_DIL1", "DW_DIL2"},    {"DW_PL0", "DW_PL1", "DW_PL2"},
        {"DW_WF0", "DW_WF1", "DW_WF2"},       {"DW_F00", "DW_F01", "DW_F02"},
        {"DW_FT0", "DW_FT1", "DW_FT2"},       {"DW_OUTL0", "DW_OUTL1", "DW_OUTL2"},
        {"DW_DSTR0", "DW_DSTR1", "DW_DSTR2"}, {"DW_DOFF0", "DW_DOFF1", "DW_DOFF2"}};
    const int64_t *arr[12] = {dw->src, dw->dst, dw->fil, dw->str,  dw->dil,  dw->pl,
                              q->fil,  dw->f0,  dw->ft,  dw->outl, dw->dstr, dw->doff};
    const ck_conv_problem *p = &q->p;
    int bwd = p->direction == CK_CONV_BWD_DATA, n = 0;
    ck_op_param_add(t, &n, "DW_WGRAD", p->direction == CK_CONV_BWD_WEIGHT);
    /* element types as ck_dtype codes (the device's CK_NC_* are the same values) */
    ck_op_param_add(t, &n, "DW_XT", (int)(bwd ? p->out_dtype : p->in_dtype));
    ck_op_param_add(t, &n, "DW_WT", (int)p->wei_dtype);
    ck_op_param_add(t, &n, "DW_YT", (int)(bwd ? p->in_dtype : p->out_dtype));
    ck_op_param_add(t, &n, "DW_RT", p->residual ? (int)p->residual_dtype : 0);
    ck_op_param_add(t, &n, "DW_BT", p->bias ? (int)p->bias_dtype : 0);
    ck_op_param_add(t, &n, "DW_FLIP", dw->flip);
    ck_op_param_add(t, &n, "DW_BIAS", p->bias != 0);
    ck_op_param_add(t, &n, "DW_RES", p->residual != 0);
    ck_op_param_add(t, &n, "DW_ACT", (int)p->activation);
    ck_op_param_add_ll(t, &n, "DW_N", p->n);
    ck_op_param_add_ll(t, &n, "DW_G", p->g);
    for (int a = 0; a < 12; ++a)
        for (int d = 0; d < 3; ++d)
            ck_op_param_add_ll(t, &n, names[a][d], arr[a][d]);
    ck_op_param_add(t, &n, "DW_VEC", dw->vec);
    ck_op_param_add(t, &n, "DW_TCT", dw->tct);
    ck_op_param_add(t, &n, "DW_TR", dw->tr);
    ck_op_param_add(t, &n, "DW_S", dw->strip);
    ck_op_param_add(t, &n, "DW_THREADS", dw->threads);
    ck_op_param_add(t, &n, "DW_LANE_BLOCKS", dw->lane_blocks);
    ck_op_param_add(t, &n, "DW_MIN_BLOCKS", dw->min_blocks);
    return n;
}

typedef struct dw_build {
    const ck_conv_prob *q;
    const ck_conv_dw *dw;
} dw_build;

static ck_status build(void *user, char **source)
{
    const dw_build *b = user;
    const ck_conv_prob *q = b->q;
    const ck_conv_dw *dw = b->dw;
    *source = NULL;
    ck_op_param t[CK_OP_MAX_PARAMS];
    char *defs = ck_op_params_defines(t, params(q, dw, t));
    if (!defs)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the defines.");
    const ck_conv_problem *p = &q->p;
    int wgrad = p->direction == CK_CONV_BWD_WEIGHT;
    const char *pipe = wgrad ? "dw_wgrad_pipeline_kernel.h" : "dw_pipeline_kernel.h";
    char cls[96] = ""; /* backward data: the residue class of dX's rows */
    if (p->direction == CK_CONV_BWD_DATA)
        snprintf(cls, sizeof cls, "; dX's rows of residues (%lld, %lld, %lld) of the stride",
                 (long long)dw->doff[0], (long long)dw->doff[1], (long long)dw->doff[2]);
    ck_sbuf s = {0};
    ck_sbuf_printf(
        &s,
        "/* ck_conv %s depthwise, %d-D: n %lld, g = c = k = %lld, in %lldx%lldx%lld, "
        "filter %lldx%lldx%lld, out %lldx%lldx%lld, stride %lldx%lldx%lld, dilation "
        "%lldx%lldx%lld, pad %lld/%lld %lld/%lld %lld/%lld; %s -> %s.\n"
        " * Direct kernel (src/ops/conv/%s), no GEMM%s.\n * Policy: %s. */\n"
        "#include \"ck_device.h\"\n%s#include \"ops/conv/%s\"\n",
        p->direction == CK_CONV_FWD ? "fwd"
        : wgrad                     ? "bwd_weight"
                                    : "bwd_data",
        p->ndim, (long long)p->n, (long long)p->g, (long long)q->in[0], (long long)q->in[1],
        (long long)q->in[2], (long long)q->fil[0], (long long)q->fil[1], (long long)q->fil[2],
        (long long)q->out[0], (long long)q->out[1], (long long)q->out[2], (long long)q->str[0],
        (long long)q->str[1], (long long)q->str[2], (long long)q->dil[0], (long long)q->dil[1],
        (long long)q->dil[2], (long long)q->pl[0], (long long)q->pr[0], (long long)q->pl[1],
        (long long)q->pr[1], (long long)q->pl[2], (long long)q->pr[2], ck_dtype_name(p->in_dtype),
        ck_dtype_name(p->out_dtype), pipe, cls, dw->why, defs, pipe);
    char bounds[32]; /* threads, and blocks per SM where asked */
    if (dw->min_blocks)
        snprintf(bounds, sizeof bounds, "%d, %d", dw->threads, dw->min_blocks);
    else
        snprintf(bounds, sizeof bounds, "%d", dw->threads);
    if (wgrad)
        ck_sbuf_printf(&s,
                       "CK_KERNEL void CK_LAUNCH_BOUNDS(%s) ck_conv_dw_partial(ck_conv_dw_kargs "
                       "ka)\n{\n    dw_wgrad_partial(&ka, ka.ws);\n}\n"
                       "CK_KERNEL void CK_LAUNCH_BOUNDS(256) ck_conv_dw_sum(ck_conv_dw_kargs ka)\n"
                       "{\n    dw_wgrad_sum(&ka, ka.ws);\n}\n",
                       bounds);
    else
        ck_sbuf_printf(&s,
                       "CK_KERNEL void CK_LAUNCH_BOUNDS(%s) ck_conv_dw(ck_conv_dw_kargs ka)\n"
                       "{\n    dw_tile(&ka);\n}\n",
                       bounds);
    free(defs);
    if (s.oom) {
        free(s.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = s.s;
    return CK_SUCCESS;
}

ck_status ck_conv_dw_source(const ck_conv_prob *q, const ck_conv_dw *dw, char **source)
{
    dw_build b = {q, dw};
    return build(&b, source);
}

ck_status ck_conv_dw_kernels(ck_context *ctx, const ck_conv_prob *q, ck_conv_dw *dw)
{
    ck_kernel **kernel = dw->kernel;
    kernel[0] = kernel[1] = NULL;
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(q, dw, t);
    char key[1536];
    if (ck_op_params_key("conv_dw", t, nt, 3, key, sizeof key))
        return ck_fail(CK_ERROR_INTERNAL, OP ": the depthwise kernel key does not fit.");
    dw_build b = {q, dw};
    if (q->p.direction != CK_CONV_BWD_WEIGHT)
        return ck_op_kernel(ctx, key, "ck_conv_dw", build, &b, &kernel[0]);
    /* one source, two entries: the second lookup finds the module in the disk cache */
    size_t n = strlen(key);
    if (n + 9 > sizeof key)
        return ck_fail(CK_ERROR_INTERNAL, OP ": the depthwise kernel key does not fit.");
    memcpy(key + n, "/partial", 9);
    ck_status st = ck_op_kernel(ctx, key, "ck_conv_dw_partial", build, &b, &kernel[0]);
    memcpy(key + n, "/sum", 5);
    if (!st)
        st = ck_op_kernel(ctx, key, "ck_conv_dw_sum", build, &b, &kernel[1]);
    return st;
}

ck_status ck_conv_dw_launch(ck_context *ctx, const ck_conv_prob *q, const ck_conv_dw *dw, float *ws,
                            const ck_conv_args *a)
{
    ck_kernel *const *kernel = dw->kernel;
    int bwd = q->p.direction == CK_CONV_BWD_DATA;
    ck_conv_dw_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.x = bwd ? a->y : a->x; /* gathered: X (forward, backward weight) or dY */
    ka.w = a->w;
    ka.y = bwd ? a->x : a->y; /* written: Y or dX; backward weight reads dY */
    ka.bias = a->bias;
    ka.residual = a->residual;
    ka.alpha = a->alpha;
    ka.ws = ws;
    void *args[1] = {&ka};
    size_t sizes[1] = {sizeof ka};
    ck_status st = ck_op_launch(ctx, kernel[0], dw->grid_x, dw->grid_y, dw->grid_z,
                                (unsigned)dw->threads, dw->smem, args, sizes, 1);
    if (!st && kernel[1])
        st = ck_op_launch(ctx, kernel[1], dw->sum_blocks, 1, 1, 256, 0, args, sizes, 1);
    return st;
}
