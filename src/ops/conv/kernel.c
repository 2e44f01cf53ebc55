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
static ck_status sub_decide(const ck_conv_plan *plan, ck_conv_sub *sub,
                            const ck_device_props *props, int pick, const char *no_dw,
                            const char *tuned, int forced)
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
        ck_conv_build b = {plan, &plan->sub[0]};
        st = ck_conv_build_source(&b, source);
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
        ck_conv_sub *sub = &plan->sub[i];
        sub->g.ctx = ctx;
        char *key = ck_conv_kernel_key(plan, sub);
        if (!key) {
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel key.");
            break;
        }
        ck_conv_build b = {plan, sub};
        const char *name =
            sub->choice.route == CK_CONV_ROUTE_SM80 ? "ck_conv_sm80" : sub->g.family->kernel_name;
        st = ck_op_kernel(ctx, key, name, ck_conv_build_source, &b, &sub->g.kernel);
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

ck_status ck_conv_check_scales(const ck_conv_problem *p, const ck_conv_args *a)
{
    const float sc[3] = {a->scale_x, a->scale_w, a->scale_y};
    static const char *const names[3] = {"scale_x", "scale_w", "scale_y"};
    int q8 = ck_conv_8bit(ck_conv_read_dtype(p, 0));
    for (int i = 0; i < 3; ++i) {
        if (!(sc[i] == sc[i]) || sc[i] == 0.0f || sc[i] - sc[i] != 0.0f)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_conv_plan_execute: %s = %g; accepted: a finite nonzero number.",
                           names[i], (double)sc[i]);
        if (sc[i] != 1.0f && !q8)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_conv_plan_execute: %s = %g; the per-tensor scales apply to "
                           "problems with 8-bit inputs (fp8, i8), this one reads %s: give 1.",
                           names[i], (double)sc[i], ck_dtype_name(ck_conv_read_dtype(p, 0)));
    }
    return CK_SUCCESS;
}

ck_status ck_conv_execute_ck_layout(ck_conv_plan *plan, const ck_conv_args *a)
{
    if (!plan || !a)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_plan_execute: plan and args must not be NULL.");
    const ck_conv_problem *p = &plan->q.p;
    ck_status sst = ck_conv_check_scales(p, a);
    if (sst)
        return sst;
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
        ga.scale_a = a->scale_x, ga.scale_b = a->scale_w, ga.scale_d = a->scale_y;
        ga.beta = p->residual ? 1.0f : 0.0f;
    } else if (p->direction == CK_CONV_BWD_WEIGHT) {
        ga.a = a->y, ga.b = a->x, ga.d = a->w;
        ga.scale_a = a->scale_y, ga.scale_b = a->scale_x, ga.scale_d = a->scale_w;
    } else {
        ga.a = a->y, ga.b = a->w, ga.d = a->x;
        ga.scale_a = a->scale_y, ga.scale_b = a->scale_w, ga.scale_d = a->scale_x;
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
                     ck_conv_dir_tag(plan->q.p.direction));
            return CK_SUCCESS;
        }
        const ck_conv_dw *dw = &plan->dw[0];
        int n = snprintf(buf, size,
                         "%s: direct depthwise, route depthwise, %lld channels, vec %d x %d "
                         "threads, %d strips of %d outputs per block",
                         ck_conv_dir_tag(plan->q.p.direction), (long long)plan->q.p.g, dw->vec,
                         dw->tct, dw->tr, dw->strip);
        if (plan->ndw > 1 && n > 0 && (size_t)n < size)
            snprintf(buf + n, size - (size_t)n, " (the first of %d residue classes)", plan->ndw);
        return CK_SUCCESS;
    }
    if (plan->nsub < 1) {
        snprintf(buf, size, "%s: no GEMM (every row of dX is zero)",
                 ck_conv_dir_tag(plan->q.p.direction));
        return CK_SUCCESS;
    }
    const ck_gemm_plan *g = &plan->sub[0].g;
    const ck_gemm_instance *in = &g->inst;
    int n = snprintf(buf, size,
                     "%s: implicit GEMM %lld x %lld x %lld x %lld groups, route %s, "
                     "sm%d %dx%dx%d s%d w%dx%d",
                     ck_conv_dir_tag(plan->q.p.direction), (long long)g->prob.p.m,
                     (long long)g->prob.p.n, (long long)g->prob.p.k, (long long)g->prob.p.batch,
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
