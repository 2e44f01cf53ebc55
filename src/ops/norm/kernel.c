/*
 * The layernorm / RMSNorm / smooth-quant launches (norm_internal.h): problem (problem.c) ->
 * instance (policy.c) -> kernel (params.c) -> launch with the argument structs the device
 * pipelines read (norm_args_kernel.h). docs/ops-norm.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/norm.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_args_kernel.h"
#include "ops/norm/norm_internal.h"

/* The problem and the forward's instance on ctx (in->grid = 0: nothing to compute); the
 * tuning table's problem key into problem when given. */
static ck_status forward_plan(ck_context *ctx, const ck_norm_forward_desc *d,
                              ck_norm_fwd_problem *p, ck_norm_instance *in, char *problem,
                              size_t problem_size)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_norm_forward");
    memset(in, 0, sizeof *in);
    ck_status st = ck_norm_fwd_problem_of(d, p);
    if (st != CK_SUCCESS || p->rows == 0)
        return st;
    const ck_device_props *props = ck_op_props(ctx);
    char key[128];
    ck_norm_fwd_knobs knobs;
    ck_norm_fwd_problem_key(d, p, key, sizeof key);
    ck_norm_fwd_knobs_for(ctx, ck_norm_table_name(d->kind), key, &knobs);
    knobs.qf32 =
        (p->yt == CK_DTYPE_I8 || p->yt == CK_DTYPE_FP8_E4M3) && !(p->bt >= 0 && p->st >= 0);
    ck_norm_pick_fwd_with(p->n, p->vec, p->rows, p->raw_ok,
                          props->backend == CK_BACKEND_HOST || props->cc_major >= 9, &knobs, in);
    in->window = knobs.window && ck_norm_fwd_window_ok(p, in);
    in->fp8cvt = knobs.quant != CK_NORM_Q_INTCVT &&
                 (props->backend == CK_BACKEND_HOST || props->cc_major > 8 ||
                  (props->cc_major == 8 && props->cc_minor >= 9));
    if (problem)
        snprintf(problem, problem_size, "%s", key);
    return CK_SUCCESS;
}

ck_status ck_norm_forward_plan(ck_context *ctx, const ck_norm_forward_desc *d, ck_norm_instance *in,
                               char *problem, size_t problem_size)
{
    ck_norm_fwd_problem p;
    return forward_plan(ctx, d, &p, in, problem, problem_size);
}

ck_status ck_norm_forward(ck_context *ctx, const ck_norm_forward_desc *d)
{
    ck_norm_fwd_problem p;
    ck_norm_instance in;
    ck_status st = forward_plan(ctx, d, &p, &in, NULL, 0);
    if (st != CK_SUCCESS || p.rows == 0)
        return st;
    ck_kernel *k = NULL;
    if ((st = ck_norm_fwd_kernel(ctx, &p, &in, &k)) != CK_SUCCESS)
        return ck_fail_context(st, "%s", p.op);
    ck_norm_fwd_kargs a;
    memset(&a, 0, sizeof a);
    a.x = d->x->data, a.sx = p.x.stride;
    a.residual = d->residual ? d->residual->data : NULL, a.sr = p.r.stride;
    a.y = d->y->data, a.sy = p.y.stride;
    a.resout = d->residual_out ? d->residual_out->data : NULL, a.so = p.o.stride;
    a.gamma = d->gamma ? d->gamma->data : NULL;
    a.beta = d->beta ? d->beta->data : NULL;
    a.smooth = d->smooth ? d->smooth->data : NULL;
    a.yscale = d->y_scale ? d->y_scale->data : NULL;
    a.mean_out = d->mean ? d->mean->data : NULL;
    a.rstd_out = d->rstd ? d->rstd->data : NULL;
    a.rows = p.rows;
    a.eps = d->epsilon;
    void *args[] = {&a};
    size_t sizes[] = {sizeof a};
    if (in.cluster > 1) {
        ck_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid[0] = in.grid;
        cfg.block[0] = (unsigned)in.block;
        cfg.cluster[0] = (unsigned)in.cluster;
        cfg.dynamic_shared_bytes = ck_norm_fwd_smem_bytes(&in);
        cfg.stream = ck_context_stream(ctx);
        st = ck_launch(k, &cfg, args, sizes, 1);
    } else {
        st = ck_op_launch(ctx, k, in.grid, 1, 1, (unsigned)in.block, ck_norm_fwd_smem_bytes(&in),
                          args, sizes, 1);
    }
    return st == CK_SUCCESS ? st : ck_fail_context(st, "%s", p.op);
}

ck_status ck_layernorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                                 const ck_tensor *beta, float epsilon, ck_tensor *y)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_LAYERNORM;
    d.epsilon = epsilon;
    d.x = x;
    d.gamma = gamma;
    d.beta = beta;
    d.y = y;
    return ck_norm_forward(ctx, &d);
}

ck_status ck_rmsnorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                               float epsilon, ck_tensor *y)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_RMSNORM;
    d.epsilon = epsilon;
    d.x = x;
    d.gamma = gamma;
    d.y = y;
    return ck_norm_forward(ctx, &d);
}

ck_status ck_smoothquant(ck_context *ctx, const ck_tensor *x, const ck_tensor *smooth, ck_tensor *y,
                         ck_tensor *y_scale)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_NONE;
    d.x = x;
    d.smooth = smooth;
    d.y = y;
    d.y_scale = y_scale;
    return ck_norm_forward(ctx, &d);
}

/* No rows: the column sums dgamma / dbeta are zero. */
static ck_status zero_sums(ck_context *ctx, const ck_norm_backward_desc *d, int64_t n)
{
    ck_tensor *sums[2] = {d->dgamma, d->dbeta};
    for (int i = 0; i < 2; ++i) {
        if (!sums[i])
            continue;
        ck_status st = ck_memset_d8(ck_context_device(ctx), sums[i]->data, 0,
                                    (size_t)n * (sums[i]->dtype == CK_DTYPE_F32 ? 4 : 2),
                                    ck_context_stream(ctx));
        if (st != CK_SUCCESS)
            return st;
    }
    return CK_SUCCESS;
}

/* The problem and the backward's instance on ctx (in->grid = 0: no rows). */
static ck_status backward_plan(ck_context *ctx, const ck_norm_backward_desc *d,
                               ck_norm_bwd_problem *p, ck_norm_instance *in, char *name,
                               size_t name_size, char *problem, size_t problem_size)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_norm_backward");
    CK_REQUIRE_NOT_NULL(d, "ck_norm_backward");
    memset(in, 0, sizeof *in);
    ck_status st = ck_norm_bwd_problem_of(d, p);
    if (st != CK_SUCCESS || p->rows == 0)
        return st;
    char key[128];
    int vpt, persistent;
    ck_norm_bwd_problem_key(p, key, sizeof key);
    ck_norm_bwd_knobs_for(ctx, ck_norm_bwd_table_name(p->kind), key, &vpt, &persistent);
    if (vpt < 1)
        vpt = ck_norm_bwd_default_vpt(p->n, p->vec);
    int pair = (ck_dtype_get((ck_dtype)p->xt)->storage_bits +
                ck_dtype_get((ck_dtype)p->dyt)->storage_bits) /
               8;
    ck_norm_pick_bwd_with(p->n, p->vec, p->rows, ck_op_props(ctx), p->want_part, pair, vpt,
                          persistent, in);
    if (name)
        ck_norm_bwd_instance_name(vpt, persistent, name, name_size);
    if (problem)
        snprintf(problem, problem_size, "%s", key);
    return CK_SUCCESS;
}

ck_status ck_norm_backward_plan(ck_context *ctx, const ck_norm_backward_desc *d,
                                ck_norm_instance *in, char *name, size_t name_size, char *problem,
                                size_t problem_size)
{
    ck_norm_bwd_problem p;
    return backward_plan(ctx, d, &p, in, name, name_size, problem, problem_size);
}

ck_status ck_norm_backward(ck_context *ctx, const ck_norm_backward_desc *d)
{
    ck_norm_bwd_problem p;
    ck_norm_instance in;
    ck_status st = backward_plan(ctx, d, &p, &in, NULL, 0, NULL, 0);
    if (st != CK_SUCCESS)
        return st;
    if (p.rows == 0)
        return zero_sums(ctx, d, p.n);
    ck_kernel *k = NULL, *kc = NULL;
    if ((st = ck_norm_bwd_kernel(ctx, &p, &in, "ck_norm_bwd", &k)) != CK_SUCCESS ||
        (p.want_part &&
         (st = ck_norm_bwd_kernel(ctx, &p, &in, "ck_norm_bwd_combine", &kc)) != CK_SUCCESS))
        return ck_fail_context(st, "%s", p.op);
    ck_norm_bwd_kargs a;
    memset(&a, 0, sizeof a);
    long long np = (long long)in.grid * (in.block / in.g);
    if (p.want_part) {
        void *ws = NULL;
        if ((st = ck_op_workspace(ctx, (size_t)np * (size_t)p.n * 2 * sizeof(float), &ws)) !=
            CK_SUCCESS)
            return ck_fail_context(st, "%s", p.op);
        a.part = ws;
    }
    a.dy = d->dy->data, a.sdy = p.dy.stride;
    a.x = d->x->data, a.sx = p.x.stride;
    a.gamma = d->gamma->data;
    a.mean = d->mean ? d->mean->data : NULL;
    a.rstd = d->rstd->data;
    a.dx = d->dx->data, a.sdx = p.dx.stride;
    a.rows = p.rows;
    void *args[] = {&a};
    size_t sizes[] = {sizeof a};
    st = ck_op_launch(ctx, k, in.grid, 1, 1, (unsigned)in.block, ck_norm_bwd_ring_bytes(&p, &in),
                      args, sizes, 1);
    if (st != CK_SUCCESS || !p.want_part)
        return st == CK_SUCCESS ? st : ck_fail_context(st, "%s", p.op);
    ck_norm_combine_kargs c = {a.part, np, d->dgamma ? d->dgamma->data : NULL,
                               d->dbeta ? d->dbeta->data : NULL};
    void *cargs[] = {&c};
    size_t csizes[] = {sizeof c};
    unsigned cb = ck_norm_bwd_combine_block(&in), cols = in.cslices > 1 ? 32u : cb;
    st = ck_op_launch(ctx, kc, (unsigned)((p.n + cols - 1) / cols), 1, 1, cb, 0, cargs, csizes, 1);
    return st == CK_SUCCESS ? st : ck_fail_context(st, "%s", p.op);
}
