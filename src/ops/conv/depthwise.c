/*
 * The direct depthwise convolution kernel (G = C = K; the route and instance: policy.c): the
 * parameter table -- one list printing both the source's #defines and the kernel cache key --,
 * the source around dw_pipeline_kernel.h, the launch. Grid: (blocks of tr strips of outputs,
 * blocks of tct * vec channels); dynamic shared memory: the block's filter taps as f32.
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
    static const char *names[6][3] = {
        {"DW_SRC0", "DW_SRC1", "DW_SRC2"}, {"DW_DST0", "DW_DST1", "DW_DST2"},
        {"DW_FIL0", "DW_FIL1", "DW_FIL2"}, {"DW_STR0", "DW_STR1", "DW_STR2"},
        {"DW_DIL0", "DW_DIL1", "DW_DIL2"}, {"DW_PL0", "DW_PL1", "DW_PL2"}};
    const int64_t *arr[6] = {dw->src, dw->dst, q->fil, dw->str, q->dil, dw->pl};
    const ck_conv_problem *p = &q->p;
    int bwd = p->direction == CK_CONV_BWD_DATA, n = 0;
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
    for (int a = 0; a < 6; ++a)
        for (int d = 0; d < 3; ++d)
            ck_op_param_add_ll(t, &n, names[a][d], arr[a][d]);
    ck_op_param_add(t, &n, "DW_VEC", dw->vec);
    ck_op_param_add(t, &n, "DW_TCT", dw->tct);
    ck_op_param_add(t, &n, "DW_TR", dw->tr);
    ck_op_param_add(t, &n, "DW_S", dw->strip);
    ck_op_param_add(t, &n, "DW_THREADS", dw->threads);
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
    ck_sbuf s = {0};
    ck_sbuf_printf(
        &s,
        "/* ck_conv %s depthwise, %d-D: n %lld, g = c = k = %lld, in %lldx%lldx%lld, "
        "filter %lldx%lldx%lld, out %lldx%lldx%lld, stride %lldx%lldx%lld, dilation "
        "%lldx%lldx%lld, pad %lld/%lld %lld/%lld %lld/%lld; %s -> %s.\n"
        " * Direct kernel (src/ops/conv/dw_pipeline_kernel.h), no GEMM.\n"
        " * Policy: %s. */\n"
        "#include \"ck_device.h\"\n%s#include \"ops/conv/dw_pipeline_kernel.h\"\n"
        "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_conv_dw(ck_conv_dw_kargs ka)\n"
        "{\n    dw_tile(&ka);\n}\n",
        p->direction == CK_CONV_FWD ? "fwd" : "bwd_data", p->ndim, (long long)p->n, (long long)p->g,
        (long long)q->in[0], (long long)q->in[1], (long long)q->in[2], (long long)q->fil[0],
        (long long)q->fil[1], (long long)q->fil[2], (long long)q->out[0], (long long)q->out[1],
        (long long)q->out[2], (long long)q->str[0], (long long)q->str[1], (long long)q->str[2],
        (long long)q->dil[0], (long long)q->dil[1], (long long)q->dil[2], (long long)q->pl[0],
        (long long)q->pr[0], (long long)q->pl[1], (long long)q->pr[1], (long long)q->pl[2],
        (long long)q->pr[2], ck_dtype_name(p->in_dtype), ck_dtype_name(p->out_dtype), dw->why, defs,
        dw->threads);
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

ck_status ck_conv_dw_kernel(ck_context *ctx, const ck_conv_prob *q, const ck_conv_dw *dw,
                            ck_kernel **kernel)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    int nt = params(q, dw, t);
    char key[1536];
    if (ck_op_params_key("conv_dw", t, nt, 3, key, sizeof key))
        return ck_fail(CK_ERROR_INTERNAL, OP ": the depthwise kernel key does not fit.");
    dw_build b = {q, dw};
    return ck_op_kernel(ctx, key, "ck_conv_dw", build, &b, kernel);
}

ck_status ck_conv_dw_launch(ck_context *ctx, const ck_conv_prob *q, const ck_conv_dw *dw,
                            ck_kernel *kernel, const ck_conv_args *a)
{
    int bwd = q->p.direction == CK_CONV_BWD_DATA;
    ck_conv_dw_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.x = bwd ? a->y : a->x; /* gathered: X or dY */
    ka.w = a->w;
    ka.y = bwd ? a->x : a->y; /* written: Y or dX */
    ka.bias = a->bias;
    ka.residual = a->residual;
    ka.alpha = a->alpha;
    void *args[1] = {&ka};
    size_t sizes[1] = {sizeof ka};
    return ck_op_launch(ctx, kernel, dw->grid_x, dw->grid_y, 1, (unsigned)dw->threads, dw->smem,
                        args, sizes, 1);
}
