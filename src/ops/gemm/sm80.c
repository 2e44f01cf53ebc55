/*
 * Family 80: the portable GEMM kernel (cp.async multistage + ldmatrix + mma.sync), device
 * source sm80_pipeline_kernel.h. Runs on sm_80 and later (fp8 inputs: sm_89 and later) and on
 * the emulator. The accumulator's encoding (the block's warps over the mma C layout) drives the
 * generated epilogue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

static int is_fp8(ck_dtype t)
{
    return t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2;
}

/* The mma.sync instruction of the problem (its C layout is the same for every type). */
static const char *mma_instr(const ck_gemm_prob *prob)
{
    switch (prob->compute_in) {
    case CK_DTYPE_I8:
        return "mma.m16n8k32.s32.s8";
    case CK_DTYPE_TF32:
        return "mma.m16n8k8.f32.tf32";
    case CK_DTYPE_F16:
        return "mma.m16n8k16.f32.f16";
    case CK_DTYPE_BF16:
        return "mma.m16n8k16.f32.bf16";
    case CK_DTYPE_FP8_E5M2:
        return "mma.m16n8k32.f32.e5m2";
    default:
        return "mma.m16n8k32.f32.e4m3";
    }
}

/* The block's accumulator: warps (wm, wn) = (warp / warps_n, warp % warps_n), each holding
 * MI x NI mma C tiles: X0 = [warps_m, MI, <mma rows>], X1 = [warps_n, NI, <mma cols>],
 * P0 = warp (wm, wn), P1 = lane (the mma's), Y = (mi, ni, <mma Ys>): register
 * (mi * NI + ni) * 4 + r, the pipeline's acc array. */
ck_status ck_gemm_sm80_acc_encoding(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    ck_dist_encoding *out)
{
    ck_dist_encoding in;
    ck_status st = ck_mma_encoding(mma_instr(prob), CK_MMA_C, &in);
    if (st)
        return st;
    if (in.ndim_r != 0 || in.ndim_p != 1 || in.ndim_x != 2)
        return ck_fail(CK_ERROR_INTERNAL, OP ": unexpected mma C encoding shape.");
    int outer[2][2] = {{inst->warps_m, inst->tile_m / inst->warps_m / 16},
                       {inst->warps_n, inst->tile_n / inst->warps_n / 8}};
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    e.ndim_x = 2;
    for (int x = 0; x < 2; ++x) {
        e.ndim_h[x] = 2 + in.ndim_h[x];
        e.h_lengths[x][0] = outer[x][0];
        e.h_lengths[x][1] = outer[x][1];
        for (int h = 0; h < in.ndim_h[x]; ++h)
            e.h_lengths[x][2 + h] = in.h_lengths[x][h];
    }
    e.ndim_p = 2;
    e.p_size[0] = 2; /* warp = wm * warps_n + wn */
    e.p_major[0][0] = 1;
    e.p_minor[0][0] = 0;
    e.p_major[0][1] = 2;
    e.p_minor[0][1] = 0;
    e.p_size[1] = in.p_size[0];
    for (int i = 0; i < in.p_size[0]; ++i) {
        e.p_major[1][i] = in.p_major[0][i];
        e.p_minor[1][i] = in.p_minor[0][i] + 2;
    }
    e.ndim_y = 2 + in.ndim_y;
    e.y_major[0] = 1;
    e.y_minor[0] = 1;
    e.y_major[1] = 2;
    e.y_minor[1] = 1;
    for (int i = 0; i < in.ndim_y; ++i) {
        e.y_major[2 + i] = in.y_major[i];
        e.y_minor[2 + i] = in.y_minor[i] + 2;
    }
    ck_distribution d;
    if ((st = ck_dist_make(&e, &d)))
        return ck_fail_context(st, OP ": the sm80 accumulator encoding");
    *out = e;
    return CK_SUCCESS;
}

/* Shared bytes of one stage: each operand tile unpadded (swizzled), its lines of K bytes
 * (K-major) or of the tile's M / N extent (MN-major). */
static int stage_bytes(const ck_gemm_prob *prob, const ck_gemm_instance *in)
{
    int es = ck_gemm_dtype_bytes(prob->p.a.dtype);
    if (prob->p.b_packed) /* two 4-bit values per byte */
        return in->tile_m * in->tile_k * es + in->tile_n * in->tile_k / 2;
    return (in->tile_m + in->tile_n) * in->tile_k * es;
}

static int sm80_supports(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                         size_t size)
{
    int cc = props->cc_major * 10 + props->cc_minor;
    if (props->backend == CK_BACKEND_CUDA && cc < 80) {
        snprintf(reason, size,
                 "the sm80 family needs compute capability 8.0 or later (device "
                 "has %d.%d)",
                 props->cc_major, props->cc_minor);
        return 0;
    }
    if ((is_fp8(prob->p.a.dtype) || is_fp8(prob->p.b.dtype)) && cc < 89) {
        snprintf(reason, size,
                 "fp8 mma.sync needs compute capability 8.9 or later (device has "
                 "%d.%d)",
                 props->cc_major, props->cc_minor);
        return 0;
    }
    return 1;
}

/* (tile_m, tile_n, bytes of K per stage, stages, warps_m, warps_n), largest first: the
 * 8-warp 128x256 / 256x128 tiles with 64x64 per warp for large problems (128 bytes of K: 4
 * k-slices per barrier; 64 bytes and 4 stages where 144 KB of shared memory is not there,
 * e.g. sm_89's 99 KB), then smaller tiles for small or skinny problems. */
static const int shapes[][6] = {
    {128, 256, 128, 3, 2, 4}, {256, 128, 128, 3, 4, 2}, {128, 256, 64, 4, 2, 4},
    {256, 128, 64, 4, 4, 2},  {128, 128, 64, 3, 2, 2},  {128, 64, 64, 4, 2, 2},
    {64, 128, 64, 4, 2, 2},   {64, 64, 64, 4, 2, 2},    {32, 64, 64, 4, 1, 2},
    {32, 32, 64, 4, 2, 2},
};

static int sm80_instances(const ck_gemm_prob *prob, const ck_device_props *props,
                          ck_gemm_instance *out, int max)
{
    int n = 0, es = ck_gemm_dtype_bytes(prob->p.a.dtype);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && n < max; ++i) {
        ck_gemm_instance in;
        memset(&in, 0, sizeof in);
        in.family = CK_GEMM_FAMILY_SM80;
        in.tile_m = shapes[i][0];
        in.tile_n = shapes[i][1];
        in.tile_k = shapes[i][2] / es;
        in.stages = shapes[i][3];
        in.warps_m = shapes[i][4];
        in.warps_n = shapes[i][5];
        in.cluster = 1;
        /* groups of about 2048 rows of A: a wave of tiles then reads A and B evenly */
        in.group = in.tile_m >= 128 ? 2048 / in.tile_m : 16;
        if ((size_t)stage_bytes(prob, &in) * (size_t)in.stages > props->max_shared_per_block)
            continue;
        double tiles = (double)((prob->p.m + in.tile_m - 1) / in.tile_m) *
                       (double)((prob->p.n + in.tile_n - 1) / in.tile_n) * (double)prob->p.batch;
        if (tiles > 2147483647.0)
            continue;
        out[n++] = in;
    }
    return n;
}

ck_status ck_gemm_sm80_source_entry(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    const char *entry, char **source)
{
    *source = NULL;
    ck_dist_encoding acc;
    char *defs = NULL, *epi = NULL;
    ck_status st = ck_gemm_sm80_acc_encoding(prob, inst, &acc);
    if (st || (st = ck_gemm_source_parts(prob, inst, &acc, &defs, &epi)))
        return st;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* ck_gemm, family sm80 (cp.async + ldmatrix + mma.sync), instance %dx%dx%d "
                   "s%d w%dx%d g%d */\n#include \"ck_device.h\"\n%s"
                   "#include \"ops/gemm/gemm_args_kernel.h\"\n%s"
                   "%s",
                   inst->tile_m, inst->tile_n, inst->tile_k, inst->stages, inst->warps_m,
                   inst->warps_n, inst->group, defs, epi, entry);
    free(defs);
    free(epi);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

static ck_status sm80_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst, char **source)
{
    char entry[256];
    snprintf(entry, sizeof entry,
             "#include \"ops/gemm/sm80_pipeline_kernel.h\"\n"
             "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_gemm_sm80(ck_gemm_kargs ka)\n"
             "{\n    gemm_sm80_main(ka);\n}\n",
             inst->warps_m * inst->warps_n * 32);
    return ck_gemm_sm80_source_entry(prob, inst, entry, source);
}

static ck_status sm80_prepare(ck_gemm_plan *plan)
{
    const ck_gemm_instance *in = &plan->inst;
    const ck_gemm_prob *prob = &plan->prob;
    long long tm = (prob->p.m + in->tile_m - 1) / in->tile_m;
    long long tn = (prob->p.n + in->tile_n - 1) / in->tile_n;
    memset(&plan->launch, 0, sizeof plan->launch);
    plan->launch.grid[0] = (unsigned)(tm * tn * prob->p.batch); /* batch x tiles, one axis */
    plan->launch.grid[1] = plan->launch.grid[2] = 1;
    plan->launch.block[0] = (unsigned)(in->warps_m * in->warps_n * 32);
    plan->launch.block[1] = plan->launch.block[2] = 1;
    plan->launch.dynamic_shared_bytes = (size_t)stage_bytes(prob, in) * (size_t)in->stages;
    plan->align_a = ck_gemm_copy_vec(prob, 0) ? 16 : (unsigned)ck_gemm_dtype_bytes(prob->p.a.dtype);
    plan->align_b = ck_gemm_copy_vec(prob, 1) ? 16 : (unsigned)ck_gemm_dtype_bytes(prob->p.b.dtype);
    /* the generated windows may pair two consecutive elements when ld allows it */
    int dd = ck_gemm_matrix_div(&prob->p.d) >= 2 ? 2 : 1;
    plan->align_d = (unsigned)(dd * ck_gemm_dtype_bytes(prob->p.d.dtype));
    int cd = prob->has_c && ck_gemm_matrix_div(&prob->p.c) >= 2 ? 2 : 1;
    plan->align_c = prob->has_c ? (unsigned)(cd * ck_gemm_dtype_bytes(prob->p.c.dtype)) : 1;
    return CK_SUCCESS;
}

void ck_gemm_fill_kargs(const ck_gemm_plan *plan, const ck_gemm_args *args, ck_gemm_kargs *ka)
{
    const ck_gemm_problem *p = &plan->prob.p;
    memset(ka, 0, sizeof *ka);
    ka->a = args->a;
    ka->b = args->b;
    ka->c = plan->prob.has_c ? args->c : NULL;
    ka->d = args->d;
    ka->bias = args->bias;
    ka->m = p->m;
    ka->n = p->n;
    ka->k = p->k;
    ka->lda = p->a.ld;
    ka->ldb = p->b.ld;
    ka->ldc = plan->prob.has_c ? p->c.ld : 0;
    ka->ldd = p->d.ld;
    ka->alpha = args->alpha * args->scale_a * args->scale_b;
    ka->beta = plan->prob.has_c ? args->beta : 0.0f;
    ka->inv_scale_d = 1.0f / args->scale_d;
    ka->tiles_m = (int)((p->m + plan->inst.tile_m - 1) / plan->inst.tile_m);
    ka->tiles_n = (int)((p->n + plan->inst.tile_n - 1) / plan->inst.tile_n);
    ka->k_tiles = (int)((p->k + plan->inst.tile_k - 1) / plan->inst.tile_k);
    ka->k_splits = 1;
    ka->batch = (int)p->batch;
    ka->batch_a = p->a.batch_stride;
    ka->batch_b = p->b.batch_stride;
    ka->batch_c = plan->prob.has_c ? p->c.batch_stride : 0;
    ka->batch_d = p->d.batch_stride;
    ka->batch_bias = p->bias_batch_stride;
    for (int x = 0; x < p->extra_count; ++x) {
        ka->extra[x] = args->extra[x];
        ka->ld_extra[x] = p->extras[x].ld;
        ka->batch_extra[x] = p->extras[x].batch_stride;
    }
    ck_gemm_quant_kargs(plan, args, ka);
}

static ck_status sm80_launch(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    ck_gemm_kargs ka;
    ck_gemm_fill_kargs(plan, args, &ka);
    void *argv[1] = {&ka};
    size_t sizes[1] = {sizeof ka};
    return ck_op_launch(plan->ctx, plan->kernel, plan->launch.grid[0], 1, 1, plan->launch.block[0],
                        plan->launch.dynamic_shared_bytes, argv, sizes, 1);
}

const ck_gemm_family ck_gemm_family_sm80 = {
    CK_GEMM_FAMILY_SM80, "sm80",         sm80_supports, sm80_instances,
    sm80_source,         "ck_gemm_sm80", sm80_prepare,  sm80_launch,
};
