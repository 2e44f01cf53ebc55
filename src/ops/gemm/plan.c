/*
 * GEMM plans (CK's GemmKernel glue): create = support check + instance choice + kernel build
 * (through the context's kernel cache); execute = pointer checks + launch. Also the candidate
 * query and the one-call tensor form.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

enum { MAX_RANKED = 64 };

ck_status ck_gemm_candidates(ck_context *ctx, const ck_gemm_problem *problem,
                             ck_gemm_candidate *out, int max, int *count)
{
    if (!ctx || !problem || !out || !count)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_candidates: ctx, problem, out and count must not be NULL.");
    *count = 0;
    if (max < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_candidates: max = %d; accepted: max >= 1.", max);
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(problem, &prob);
    if (st)
        return st;
    const ck_device_props *props = ck_op_props(ctx);
    ck_gemm_instance ins[MAX_RANKED];
    double score[MAX_RANKED];
    char reason[512];
    int n = ck_gemm_policy_rank(&prob, props, ins, score, MAX_RANKED, reason, sizeof reason);
    if (n == 0)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": no kernel family supports the problem (%s).",
                       reason);
    for (int i = 0; i < n && i < max; ++i)
        ck_gemm_candidate_fill(&prob, &ins[i], props, score[i], &out[i]);
    *count = n < max ? n : max;
    return CK_SUCCESS;
}

typedef struct build_ctx {
    const ck_gemm_plan *plan;
} build_ctx;

static ck_status build_source(void *user, char **source)
{
    const build_ctx *b = user;
    return b->plan->family->source(&b->plan->prob, &b->plan->inst, source);
}

ck_status ck_gemm_plan_create_prob(ck_context *ctx, const ck_gemm_prob *prob, int instance,
                                   ck_gemm_plan **out)
{
    /* the policy's choice: maybe on copies of A / B with 16-byte rows (not packed 4-bit B,
     * whose rows are bytes of two values) */
    if (instance < 0 && !prob->p.b_packed) {
        ck_gemm_plan *repacked = NULL;
        ck_status rst = ck_gemm_repack_try(ctx, prob, &repacked);
        if (rst || repacked) {
            *out = repacked;
            return rst;
        }
    }
    const ck_device_props *props = ck_op_props(ctx);
    ck_gemm_instance ins[MAX_RANKED];
    double score[MAX_RANKED];
    char reason[512];
    int n = ck_gemm_policy_rank(prob, props, ins, score, MAX_RANKED, reason, sizeof reason);
    if (n == 0)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": no kernel family supports the problem (%s).",
                       reason);
    int pick = 0;
    if (instance >= 0) {
        pick = -1;
        for (int i = 0; i < n; ++i)
            if (ck_gemm_instance_id(&ins[i]) == instance)
                pick = i;
        if (pick < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": instance %d is not a candidate for this problem on this device "
                              "(ck_gemm_candidates lists the valid ids).",
                           instance);
    }
    return ck_gemm_plan_build(ctx, prob, &ins[pick], out);
}

ck_status ck_gemm_plan_build(ck_context *ctx, const ck_gemm_prob *prob,
                             const ck_gemm_instance *inst, ck_gemm_plan **out)
{
    ck_gemm_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    plan->ctx = ctx;
    plan->prob = *prob;
    plan->inst = *inst;
    plan->family = ck_gemm_family_of(plan->inst.family);
    plan->prob.tf32_truncate = plan->inst.family == CK_GEMM_FAMILY_SM90;
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(&plan->prob, &plan->inst, params, CK_GEMM_MAX_PARAMS);
    char *key = np < 0 ? NULL : ck_gemm_params_key(params, np);
    ck_status st;
    if (!plan->family || !key) {
        st = ck_fail(CK_ERROR_INTERNAL, OP ": no family or key for the chosen instance.");
    } else {
        build_ctx b = {plan};
        st = ck_op_kernel(ctx, key, plan->family->kernel_name, build_source, &b, &plan->kernel);
        if (!st)
            st = plan->family->prepare(plan);
    }
    free(key);
    if (st) {
        ck_gemm_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return CK_SUCCESS;
}

ck_status ck_gemm_plan_create(ck_context *ctx, const ck_gemm_problem *problem, int instance,
                              ck_gemm_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_create: ctx, problem and plan must not be NULL.");
    *plan = NULL;
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(problem, &prob);
    if (st)
        return st;
    return ck_gemm_plan_create_prob(ctx, &prob, instance, plan);
}

ck_status ck_gemm_plan_instance(const ck_gemm_plan *plan, ck_gemm_candidate *out)
{
    if (!plan || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_instance: plan and out must not be NULL.");
    ck_gemm_candidate_fill(&plan->prob, &plan->inst, ck_op_props(plan->ctx), 0, out);
    return CK_SUCCESS;
}

void ck_gemm_plan_destroy(ck_gemm_plan *plan)
{
    if (!plan)
        return;
    if (plan->family_state && plan->family_state_free)
        plan->family_state_free(plan->family_state);
    ck_gemm_repack_free(plan->repack);
    free(plan); /* the kernel belongs to the context's cache */
}

/* Byte range [lo, hi) a rows x cols matrix spans, in all `batch` batches. */
static void span(const void *p, const ck_gemm_matrix *m, int64_t batch, int64_t rows, int64_t cols,
                 uintptr_t *lo, uintptr_t *hi)
{
    int64_t contig = m->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = m->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    *lo = (uintptr_t)p;
    *hi = *lo + (uintptr_t)(((batch - 1) * m->batch_stride + (lines - 1) * m->ld + contig) *
                            ck_gemm_dtype_bytes(m->dtype));
}

static int overlaps(uintptr_t alo, uintptr_t ahi, uintptr_t blo, uintptr_t bhi)
{
    return alo < bhi && blo < ahi;
}

static ck_status check_ptr(const char *name, const void *p, unsigned align)
{
    if (!p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_gemm_plan_execute: pointer %s is NULL.",
                       name);
    if (align > 1 && (uintptr_t)p % align)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: pointer %s = %p is not %u-byte aligned, which this "
                       "plan's kernel needs (its leading dimension allows vector access; "
                       "ck_gemm() picks an element-wise path for such pointers).",
                       name, p, align);
    return CK_SUCCESS;
}

ck_status ck_gemm_plan_execute(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    if (!plan || !args)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: plan and args must not be NULL.");
    const ck_gemm_prob *user = ck_gemm_repack_user(plan); /* what the arguments follow */
    const ck_gemm_problem *p = &user->p;
    ck_status st;
    /* an operand the plan copies first needs only its elements aligned */
    unsigned align_a = plan->repack ? (unsigned)ck_gemm_dtype_bytes(p->a.dtype) : plan->align_a;
    unsigned align_b = plan->repack ? (unsigned)ck_gemm_dtype_bytes(p->b.dtype) : plan->align_b;
    if ((st = check_ptr("A", args->a, align_a)) || (st = check_ptr("B", args->b, align_b)) ||
        (st = check_ptr("D", args->d, plan->align_d)))
        return st;
    int use_c = user->has_c && args->beta != 0.0f;
    if (use_c && (st = check_ptr("C", args->c, plan->align_c)))
        return st;
    if (p->bias != CK_GEMM_BIAS_NONE &&
        (st = check_ptr("bias", args->bias, (unsigned)ck_gemm_dtype_bytes(p->bias_dtype))))
        return st;
    if (!(args->scale_d != 0.0f) || !(args->scale_d == args->scale_d))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: scale_d = %g; accepted: a nonzero number.",
                       (double)args->scale_d);
    uintptr_t dlo, dhi, lo, hi;
    span(args->d, &p->d, p->batch, p->m, p->n, &dlo, &dhi);
    span(args->a, &p->a, p->batch, p->m, p->k, &lo, &hi);
    if (overlaps(dlo, dhi, lo, hi))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: D overlaps A; D must not share memory with A, B "
                       "or bias.");
    /* packed B: a column of K / 2 bytes */
    span(args->b, &p->b, p->batch, p->b_packed ? p->k / 2 : p->k, p->n, &lo, &hi);
    if (overlaps(dlo, dhi, lo, hi))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: D overlaps B; D must not share memory with A, B "
                       "or bias.");
    if (p->bias != CK_GEMM_BIAS_NONE) {
        lo = (uintptr_t)args->bias;
        hi = lo + (uintptr_t)(((p->batch - 1) * p->bias_batch_stride +
                               (p->bias == CK_GEMM_BIAS_ROW ? p->m : p->n)) *
                              ck_gemm_dtype_bytes(p->bias_dtype));
        if (overlaps(dlo, dhi, lo, hi))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: D overlaps bias; D must not share memory with "
                           "A, B or bias.");
    }
    if (use_c && args->c != args->d) {
        span(args->c, &p->c, p->batch, p->m, p->n, &lo, &hi);
        if (overlaps(dlo, dhi, lo, hi))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: C overlaps D without being exactly D; C must "
                           "be D itself (same pointer, type, order and ld) or disjoint from it.");
    }
    for (int x = 0; x < p->extra_count; ++x) {
        const ck_gemm_extra *e = &p->extras[x];
        char name[32];
        snprintf(name, sizeof name, "extra %d", x);
        int es = ck_gemm_dtype_bytes(e->dtype);
        ck_gemm_matrix mt = {e->dtype, e->order, e->ld, e->batch_stride};
        /* the generated windows may pair two consecutive elements of a full extra when its ld
         * and batch stride allow it (as for C); vectors are read element by element */
        int pair = e->broadcast == CK_GEMM_EXTRA_FULL && ck_gemm_matrix_div(&mt) >= 2;
        if ((st = check_ptr(name, args->extra[x], (unsigned)(pair ? 2 * es : es))))
            return st;
        if (e->broadcast == CK_GEMM_EXTRA_FULL) {
            span(args->extra[x], &mt, p->batch, p->m, p->n, &lo, &hi);
        } else {
            lo = (uintptr_t)args->extra[x];
            hi = lo + (uintptr_t)(((p->batch - 1) * e->batch_stride +
                                   (e->broadcast == CK_GEMM_EXTRA_ROW ? p->m : p->n)) *
                                  es);
        }
        if (overlaps(dlo, dhi, lo, hi))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: %s (%p) overlaps D (%p); an extra tensor must "
                           "not share memory with D, not even be D itself (copy it first).",
                           name, args->extra[x], args->d);
    }
    if (use_c && args->c == args->d &&
        (p->c.dtype != p->d.dtype || p->c.order != p->d.order || p->c.ld != p->d.ld ||
         p->c.batch_stride != p->d.batch_stride))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_gemm_plan_execute: C aliases D but differs in type (%s vs %s), order, "
                       "ld (%lld vs %lld) or batch stride (%lld vs %lld); in-place C must match D "
                       "exactly.",
                       ck_dtype_name(p->c.dtype), ck_dtype_name(p->d.dtype), (long long)p->c.ld,
                       (long long)p->d.ld, (long long)p->c.batch_stride,
                       (long long)p->d.batch_stride);
    if ((st = ck_gemm_quant_check_args(plan, args)))
        return st;
    return plan->repack ? ck_gemm_repack_launch(plan, args) : plan->family->launch(plan, args);
}

/* ---- the one-call form ----------------------------------------------------------------- */

static ck_status tensor_matrix(const char *name, const ck_tensor *t, int64_t rows, int64_t cols,
                               ck_gemm_matrix *m)
{
    ck_status st = ck_op_check_tensor(OP, name, t);
    if (st)
        return st;
    if (t->rank != 2 || t->shape[0] != rows || t->shape[1] != cols)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": tensor %s is %s; expected shape [%lld, %lld].", name,
                       ck_op_tensor_str(t), (long long)rows, (long long)cols);
    m->dtype = t->dtype;
    if (t->strides[1] == 1 && (rows == 1 || t->strides[0] >= cols)) {
        m->order = CK_GEMM_ROW_MAJOR;
        m->ld = rows == 1 ? (t->strides[0] > cols ? t->strides[0] : cols) : t->strides[0];
    } else if (t->strides[0] == 1 && (cols == 1 || t->strides[1] >= rows)) {
        m->order = CK_GEMM_COL_MAJOR;
        m->ld = cols == 1 ? (t->strides[1] > rows ? t->strides[1] : rows) : t->strides[1];
    } else {
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": tensor %s is %s; accepted: row-major (strides [ld >= cols, 1]) or "
                          "column-major (strides [1, ld >= rows]).",
                       name, ck_op_tensor_str(t));
    }
    return CK_SUCCESS;
}

/* The matrix view of a rank-2 or rank-3 operand and its batch stride: a rank-3 tensor of
 * `batch` matrices, or of one (leading extent 1) or a rank-2 tensor, broadcast (stride 0). */
static ck_status batched_matrix(const char *name, const ck_tensor *t, int64_t batch, int64_t rows,
                                int64_t cols, ck_gemm_matrix *m)
{
    ck_status st = ck_op_check_tensor(OP, name, t);
    if (st)
        return st;
    if (t->rank != 3) {
        if ((st = tensor_matrix(name, t, rows, cols, m)))
            return st;
        m->batch_stride = 0;
        return CK_SUCCESS;
    }
    if (t->shape[0] != batch && t->shape[0] != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": tensor %s is %s; expected %lld (or 1, broadcast) matrices of [%lld, "
                          "%lld].",
                       name, ck_op_tensor_str(t), (long long)batch, (long long)rows,
                       (long long)cols);
    ck_tensor v = *t;
    v.rank = 2;
    v.shape[0] = t->shape[1], v.shape[1] = t->shape[2];
    v.strides[0] = t->strides[1], v.strides[1] = t->strides[2];
    if ((st = tensor_matrix(name, &v, rows, cols, m)))
        return st;
    m->batch_stride = t->shape[0] == 1 ? 0 : t->strides[0];
    return CK_SUCCESS;
}

ck_status ck_gemm(ck_context *ctx, const ck_tensor *a, const ck_tensor *b, const ck_tensor *c,
                  const ck_tensor *d, const ck_gemm_options *options)
{
    if (!ctx || !a || !b || !d)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": ctx, a, b and d must not be NULL.");
    ck_gemm_options def;
    if (!options) {
        ck_gemm_options_init(&def);
        options = &def;
    }
    int batched = d->rank == 3;
    if ((a->rank != 2 && (!batched || a->rank != 3)) ||
        (b->rank != 2 && (!batched || b->rank != 3)) || (d->rank != 2 && !batched))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": a, b and d must be rank-2 tensors, or d rank 3 [batch, M, N] with a "
                          "and b of rank 3 or 2 (broadcast) (a %s, b %s, d %s).",
                       ck_op_tensor_str(a), ck_op_tensor_str(b), ck_op_tensor_str(d));
    int ra = a->rank - 2, rb = b->rank - 2; /* index of the matrix dims */
    int64_t batch = batched ? d->shape[0] : 1;
    int64_t m = a->shape[ra], k = a->shape[ra + 1], n = b->shape[rb + 1];
    if (b->shape[rb] != k)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": a %s and b %s do not chain: a's columns must equal b's rows.",
                       ck_op_tensor_str(a), ck_op_tensor_str(b));
    if (m == 0 || n == 0 || batch == 0)
        return CK_SUCCESS;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = m;
    p.n = n;
    p.k = k;
    p.batch = batch;
    ck_status st;
    if ((st = batched_matrix("a", a, batch, m, k, &p.a)) ||
        (st = batched_matrix("b", b, batch, k, n, &p.b)) ||
        (st = batched_matrix("d", d, batch, m, n, &p.d)) ||
        (c && (st = batched_matrix("c", c, batch, m, n, &p.c))))
        return st;
    p.compute = options->compute;
    p.bias = options->bias ? options->bias_mode : CK_GEMM_BIAS_NONE;
    if (options->bias) {
        const ck_tensor *bt = options->bias;
        int64_t want = options->bias_mode == CK_GEMM_BIAS_ROW ? m : n;
        if ((st = ck_op_check_tensor(OP, "bias", bt)))
            return st;
        int rv = bt->rank - 1; /* the vector's dim: rank 1, or rank 2 [batch or 1, len] */
        if (options->bias_mode == CK_GEMM_BIAS_NONE || (bt->rank != 1 && bt->rank != 2) ||
            (bt->rank == 2 && bt->shape[0] != batch && bt->shape[0] != 1) ||
            bt->shape[rv] != want || (want > 1 && bt->strides[rv] != 1))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": bias %s with bias_mode %d; expected a contiguous vector of %lld "
                              "(M for CK_GEMM_BIAS_ROW, N for CK_GEMM_BIAS_COL), or [%lld, %lld] "
                              "for one per batch.",
                           ck_op_tensor_str(bt), (int)options->bias_mode, (long long)want,
                           (long long)batch, (long long)want);
        p.bias_dtype = bt->dtype;
        p.bias_batch_stride = bt->rank == 2 && bt->shape[0] > 1 ? bt->strides[0] : 0;
    }
    p.activation = options->activation;
    p.epilogue = options->epilogue;
    if (k == 0)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": k = 0 is not supported; accepted: k >= 1.");
    ck_gemm_prob prob;
    if ((st = ck_gemm_prob_make(&p, &prob)))
        return st;
    if ((uintptr_t)a->data % 16)
        prob.scalar_copy |= 1;
    if ((uintptr_t)b->data % 16)
        prob.scalar_copy |= 2;
    ck_gemm_plan *plan = NULL;
    if ((st = ck_gemm_plan_create_prob(ctx, &prob, options->instance, &plan)))
        return st;
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = a->data;
    args.b = b->data;
    args.c = c ? c->data : NULL;
    args.d = d->data;
    args.bias = options->bias ? options->bias->data : NULL;
    args.alpha = options->alpha;
    args.beta = c ? options->beta : 0.0f;
    args.scale_a = options->scale_a;
    args.scale_b = options->scale_b;
    args.scale_d = options->scale_d;
    st = ck_gemm_plan_execute(plan, &args);
    ck_gemm_plan_destroy(plan);
    return st;
}
