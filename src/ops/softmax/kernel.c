/*
 * ck_softmax's launch (softmax_plan.h): problem (problem.c) -> instance (policy.c, with the
 * tuning table's knobs) -> kernel (params.c) -> launch. The device pipelines are
 * ops/softmax/softmax_kernel.h and softmax_staged_kernel.h; docs/ops-softmax.md describes the
 * instances.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/softmax.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/softmax/softmax_internal.h"
#include "ops/softmax/softmax_plan.h"

#define OP "ck_softmax"

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

void ck_smx_knobs_for(ck_context *ctx, const smx_plan *p, int64_t rows, smx_knobs *k)
{
    char problem[128], inst[128];
    ck_smx_knobs_none(k);
    ck_smx_problem_key(p, rows, problem, sizeof problem);
    int forced = 0;
    if (ck_op_tuned(ctx, "softmax", problem, inst, sizeof inst, &forced) &&
        !ck_smx_knobs_parse(k, inst)) {
        CK_LOG(CK_LOG_WARN, OP ": tuning-table instance '%s' for %s does not parse; ignored.", inst,
               problem);
        ck_smx_knobs_none(k);
    }
    if (!forced)
        ck_smx_knobs_env(k); /* the developer switches win over the table */
}

/* The problem (problem.c) and the policy; then the launch, or (plan != NULL) only the plan
 * (plan->n = 0 when there is nothing to compute). */
static ck_status softmax_run(ck_context *ctx, const ck_tensor *x, const ck_tensor *y,
                             const ck_softmax_options *options, smx_plan *plan, int64_t *plan_rows)
{
    CK_REQUIRE_NOT_NULL(ctx, OP);
    smx_plan p;
    smx_geom g;
    ck_status st = ck_smx_problem_of(x, y, options, &p, &g);
    if (plan)
        memset(plan, 0, sizeof *plan);
    if (st != CK_SUCCESS || g.rows == 0 || p.n == 0)
        return st;
    const int64_t rows = g.rows;
    smx_knobs knobs;
    ck_smx_knobs_for(ctx, &p, rows, &knobs);
    ck_smx_policy(&p, rows, ck_op_props(ctx), &knobs);
    if (plan) {
        *plan = p;
        *plan_rows = rows;
        return CK_SUCCESS;
    }

    char key[512];
    if ((st = ck_smx_plan_key(&p, key, sizeof key)) != CK_SUCCESS)
        return st;
    long long prows = rows, pxs = g.xs, pys = g.ys, pms = g.ms, pmdiv = g.mdiv, pmmod = g.mmod;
    long long pcm = g.cm;
    float scale2 = g.scale2;
    const void *pmask = g.mask;
    const void *px = g.x;
    void *py = g.y;
    if (p.kind == 2) {
        ck_kernel *kern = NULL;
        st = ck_op_kernel(ctx, key, "smx_staged_k", ck_smx_build_source, &p, &kern);
        if (st != CK_SUCCESS)
            return st;
        void *args[7] = {&py, &px, &prows, &pxs, &pys, &pcm, &scale2};
        size_t sizes[7] = {sizeof py, sizeof px, 8, 8, 8, 8, sizeof scale2};
        ck_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid[0] = (unsigned)p.grid_clusters * (unsigned)p.cluster;
        cfg.grid[1] = cfg.grid[2] = 1;
        cfg.block[0] = (unsigned)p.g;
        cfg.block[1] = cfg.block[2] = 1;
        if (p.cluster > 1) {
            cfg.cluster[0] = (unsigned)p.cluster;
            cfg.cluster[1] = cfg.cluster[2] = 1;
        }
        cfg.dynamic_shared_bytes = (size_t)p.smem;
        cfg.stream = ck_context_stream(ctx);
        /* the grid is persistent: no more clusters than the driver says are resident at once
         * (staged_plan's count is an estimate; the emulator answers 0, no limit) */
        int active = 0;
        if ((st = ck_kernel_max_active(kern, &cfg, &active)) != CK_SUCCESS)
            return ck_fail_context(st, OP " (%s)", key);
        if (active > 0 && p.grid_clusters > active)
            cfg.grid[0] = (unsigned)(cdiv(rows, cdiv(rows, active)) * p.cluster);
        st = ck_launch(kern, &cfg, args, sizes, 7);
        return st == CK_SUCCESS ? st : ck_fail_context(st, OP " (%s)", key);
    }
    if (p.kind == 0) {
        ck_kernel *kern = NULL;
        st = ck_op_kernel(ctx, key, "smx_rows_k", ck_smx_build_source, &p, &kern);
        if (st != CK_SUCCESS)
            return st;
        void *args[11] = {&py,  &px,    &pmask, &prows, &pxs,   &pys,
                          &pms, &pmdiv, &pmmod, &pcm,   &scale2};
        size_t sizes[11] = {sizeof py, sizeof px, sizeof pmask, 8, 8, 8, 8, 8, 8, 8, sizeof scale2};
        ck_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        int64_t blocks = cdiv(rows, p.rows_per_block) * p.cluster;
        if (blocks > 0x7fffffffLL)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": x %s has too many rows (%lld) for one launch.",
                           ck_op_tensor_str(x), (long long)rows);
        cfg.grid[0] = (unsigned)blocks;
        cfg.grid[1] = cfg.grid[2] = 1;
        cfg.block[0] = (unsigned)(p.g * p.rows_per_block);
        cfg.block[1] = cfg.block[2] = 1;
        if (p.cluster > 1) {
            cfg.cluster[0] = (unsigned)p.cluster;
            cfg.cluster[1] = cfg.cluster[2] = 1;
        }
        cfg.stream = ck_context_stream(ctx);
        st = ck_launch(kern, &cfg, args, sizes, 11);
        return st == CK_SUCCESS ? st : ck_fail_context(st, OP " (%s)", key);
    }
    int64_t blocks = rows * p.segs;
    if (blocks > 0x7fffffffLL)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": x %s has too many rows (%lld) for one launch.",
                       ck_op_tensor_str(x), (long long)rows);
    ck_kernel *kstats = NULL, *kwrite = NULL;
    st = ck_op_kernel(ctx, key, "smx_stats_k", ck_smx_build_source, &p, &kstats);
    if (st == CK_SUCCESS) {
        char key2[560];
        snprintf(key2, sizeof key2, "%s/write", key);
        st = ck_op_kernel(ctx, key2, "smx_write_k", ck_smx_build_source, &p, &kwrite);
    }
    if (st != CK_SUCCESS)
        return st;
    void *ws = NULL;
    st = ck_op_workspace(ctx, (size_t)blocks * 2 * sizeof(float), &ws);
    if (st != CK_SUCCESS)
        return st;
    void *a1[10] = {&ws, &px, &pmask, &prows, &pxs, &pms, &pmdiv, &pmmod, &pcm, &scale2};
    size_t s1[10] = {sizeof ws, sizeof px, sizeof pmask, 8, 8, 8, 8, 8, 8, sizeof scale2};
    st = ck_op_launch(ctx, kstats, (unsigned)blocks, 1, 1, (unsigned)p.g, 0, a1, s1, 10);
    if (st != CK_SUCCESS)
        return st;
    void *a2[12] = {&py, &ws, &px, &pmask, &prows, &pxs, &pys, &pms, &pmdiv, &pmmod, &pcm, &scale2};
    size_t s2[12] = {sizeof py, sizeof ws, sizeof px, sizeof pmask, 8, 8, 8, 8,
                     8,         8,         8,         sizeof scale2};
    return ck_op_launch(ctx, kwrite, (unsigned)blocks, 1, 1, (unsigned)p.g, 0, a2, s2, 12);
}

ck_status ck_softmax(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                     const ck_softmax_options *options)
{
    return softmax_run(ctx, x, y, options, NULL, NULL);
}

ck_status ck_smx_plan_of(ck_context *ctx, const ck_tensor *x, const ck_tensor *y,
                         const ck_softmax_options *options, smx_plan *plan, int64_t *rows)
{
    return softmax_run(ctx, x, y, options, plan, rows);
}

ck_status ck_smx_source(int64_t rows, int64_t n, int ti, int to, int tm, int maskbits, int logsm,
                        int aligned, const char *variant, char **source, int *kind)
{
    smx_plan p;
    memset(&p, 0, sizeof p);
    p.ti = ti;
    p.to = to;
    p.tm = tm;
    p.maskbits = maskbits;
    p.logsm = logsm;
    p.n = n;
    ck_smx_problem_vec(&p);
    p.wide_x = aligned && (p.vec * ck_smx_size_of(ti)) % 16 == 0;
    p.wide_y = aligned && (p.vec * ck_smx_size_of(to)) % 16 == 0;
    p.wide_m = aligned && (maskbits & 1) && (p.vec * ck_smx_size_of(tm)) % 16 == 0;
    if (aligned) /* contiguous rows of aligned tensors, a mask of [rows, n] */
        ck_smx_problem_span(&p, NULL, NULL, NULL, rows, n, n, n, 1, rows);
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.backend = CK_BACKEND_CUDA;
    props.cc_major = 9;
    props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    props.shared_per_sm = 228 * 1024;
    props.max_threads_per_sm = 2048;
    props.regs_per_sm = 65536;
    smx_knobs knobs;
    ck_smx_knobs_none(&knobs);
    if (variant)
        (void)ck_smx_knobs_parse(&knobs, variant);
    ck_smx_policy(&p, rows, &props, &knobs);
    *kind = p.kind * 100 + p.cluster;
    return ck_smx_build_source(&p, source);
}
