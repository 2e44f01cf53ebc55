/*
 * ck_reduce's launch (reduce_internal.h): problem (problem.c) -> instance (policy.c) -> kernels
 * (params.c) -> the launch of the main kernel and, for split instances, of the combine kernel;
 * the geometry rd_geom is the argument struct shared with the device (reduce_geom_kernel.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/reduce.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce_internal.h"

#define OP "ck_reduce"

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

ck_status ck_reduce_make_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                              int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                              rd_plan *p, rd_canon *c)
{
    if (!ctx)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": ctx is NULL.");
    if (!x || !y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": %s is NULL.", !x ? "x" : "y");
    ck_reduce_options defaults;
    ck_reduce_options_init(&defaults);
    if (!opt)
        opt = &defaults;
    ck_status st = ck_reduce_analyze(op, x, axes, naxes, y, opt, c);
    if (st != CK_SUCCESS)
        return st;
    memset(p, 0, sizeof *p);
    p->ti = (int)x->dtype;
    p->to = (int)y->dtype;
    p->acc64 = x->dtype == CK_DTYPE_F64 || x->dtype == CK_DTYPE_I32;
    p->op = (int)op;
    p->pre = (int)opt->pre;
    p->scale = opt->scale != 1.0;
    p->sqrt_ = opt->post_sqrt != 0;
    p->kd = c->kd;
    p->rd = c->rd;
    rd_geom *g = &p->geom;
    for (int k = 0; k < c->kd; ++k) {
        g->kl[k] = c->kl[k];
        g->kxs[k] = c->kxs[k];
        g->kys[k] = c->kys[k];
    }
    for (int r = 0; r < c->rd; ++r) {
        g->rl[r] = c->rl[r];
        g->rxs[r] = c->rxs[r];
    }
    g->rows = c->rows;
    g->n = c->n;
    g->scale = opt->scale;
    ck_reduce_choose(p, c, x, ck_op_props(ctx));
    /* the tuning table's instance for the problem (`ck tune reduce`), or the one it forces */
    char problem[256], text[64];
    int forced = 0;
    rd_knobs k = {-1, 0, 0, 0, -1};
    ck_reduce_problem_key(p, problem, sizeof problem);
    if (ck_op_tuned(ctx, "reduce", problem, text, sizeof text, &forced) &&
        !ck_reduce_knobs_parse(text, &k))
        CK_LOG(CK_LOG_WARN, OP ": tuning-table instance '%s' for %s does not parse; ignored.", text,
               problem);
    ck_reduce_apply_knobs(p, c, x, &k);
    if (!forced)
        ck_reduce_knobs_env(&k);
    /* x through generated tile windows: opt-in until timed on the GPU (docs/ops-reduce.md) */
    p->window = k.window == 1 && ck_reduce_window_ok(p);
    p->arg_scan = ck_reduce_is_arg(op) && p->kind == 0 && p->vb > 0 && !p->window &&
                  !ck_reduce_prev_env();
    p->last_fold = p->kind == 0 && g->parts > 1 && p->rpb == 1 && !ck_reduce_prev_env();
    return CK_SUCCESS;
}

ck_status ck_reduce_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                         ck_reduce_plan_info *info)
{
    rd_plan p;
    rd_canon c;
    ck_status st = ck_reduce_make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    if (info) {
        memset(info, 0, sizeof *info);
        info->kind = p.kind;
        info->vb = p.vb;
        info->g = p.g;
        info->rpb = p.rpb;
        info->ct = p.ct;
        info->rt = p.rt;
        info->kd = p.kd;
        info->rd = p.rd;
        info->parts = p.geom.parts;
        info->rows = p.geom.rows;
        info->n = p.geom.n;
        info->fold = p.last_fold;
    }
    return CK_SUCCESS;
}

void ck_reduce_combine_plan(rd_plan *q)
{
    q->kernel_kind = 2;
    q->window = 0;
    q->arg_scan = 0;
    q->last_fold = 0;
    q->ti = 0;
    q->pre = 0;
    q->vb = q->g = q->rpb = q->u = q->ct = q->rt = q->rd = 0;
}

ck_status ck_reduce_source(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                           int naxes, const ck_tensor *y, const ck_reduce_options *opt, int which,
                           char **source)
{
    CK_REQUIRE_NOT_NULL(source, "ck_reduce_source");
    *source = NULL;
    rd_plan p;
    rd_canon c;
    ck_status st = ck_reduce_make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    p.kernel_kind = p.kind;
    if (which) {
        if (p.geom.parts <= 1)
            return ck_fail(CK_ERROR_NOT_FOUND,
                           "ck_reduce_source: this instance does not split; it has no combine "
                           "kernel.");
        ck_reduce_combine_plan(&p);
    }
    return ck_reduce_build_source(&p, source);
}

ck_status ck_reduce(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                    int naxes, ck_tensor *y, const ck_reduce_options *opt)
{
    rd_plan p;
    rd_canon c;
    ck_status st = ck_reduce_make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS || c.rows == 0)
        return st;
    rd_geom *g = &p.geom;
    int64_t blocks =
        p.kind == 0 ? cdiv(g->rows, p.rpb) * g->parts : g->col_blocks * g->outer * g->parts;
    if (blocks > 0x7fffffffLL)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": x %s needs %lld blocks, more than a launch can have (2^31 - 1).",
                       ck_op_tensor_str(x), (long long)blocks);
    void *ws = NULL, *cnt = NULL;
    if (g->parts > 1) {
        size_t per = (p.acc64 ? 8u : 4u) + (ck_reduce_is_arg(op) ? 8u : 0u);
        st = ck_op_workspace(ctx, (size_t)g->parts * (size_t)g->rows * per, &ws);
        if (st == CK_SUCCESS && p.last_fold) /* one ticket counter per output */
            st = ck_op_counters(ctx, (size_t)g->rows * sizeof(unsigned), &cnt);
        if (st != CK_SUCCESS)
            return st;
    }
    char key[256];
    ck_kernel *kernel = NULL;
    p.kernel_kind = p.kind;
    if ((st = ck_reduce_plan_key(&p, key, sizeof key)) != CK_SUCCESS)
        return st;
    st = ck_op_kernel(ctx, key, p.kind == 0 ? "rd_row_k" : "rd_col_k", ck_reduce_build_source, &p,
                      &kernel);
    if (st != CK_SUCCESS)
        return st;
    void *yd = y->data, *xd = x->data;
    /* rd_row_k (y, x, ws, cnt, g), rd_col_k (y, x, ws, g) */
    void *args[5] = {&yd, &xd, &ws, &cnt, g};
    size_t sizes[5] = {sizeof yd, sizeof xd, sizeof ws, sizeof cnt, sizeof *g};
    if (p.kind == 1) {
        args[3] = g;
        sizes[3] = sizeof *g;
    }
    unsigned block = p.kind == 0 ? (unsigned)(p.g * p.rpb) : (unsigned)(p.ct * p.rt);
    st = ck_op_launch(ctx, kernel, (unsigned)blocks, 1, 1, block, p.smem, args, sizes,
                      p.kind == 0 ? 5 : 4);
    if (st != CK_SUCCESS || g->parts == 1 || p.last_fold)
        return st;
    /* second pass: the parts of each output, in order */
    rd_plan q = p;
    ck_reduce_combine_plan(&q);
    if ((st = ck_reduce_plan_key(&q, key, sizeof key)) != CK_SUCCESS)
        return st;
    st = ck_op_kernel(ctx, key, "rd_combine_k", ck_reduce_build_source, &q, &kernel);
    if (st != CK_SUCCESS)
        return st;
    void *cargs[3] = {&yd, &ws, g};
    size_t csizes[3] = {sizeof yd, sizeof ws, sizeof *g};
    return ck_op_launch(ctx, kernel, (unsigned)cdiv(g->rows, 256), 1, 1, 256, 0, cargs, csizes, 3);
}
