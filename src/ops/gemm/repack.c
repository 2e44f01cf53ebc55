/*
 * Operand repacking: a problem whose A or B rows (or batches) are not multiples of 16 bytes
 * cannot use the sm90 family (TMA's global strides must be), and the sm80 family copies it
 * element by element, several times slower (bench/RESULTS.md). Copying such an
 * operand into a workspace with its leading dimension (and batch stride) rounded up to 16
 * bytes, then running a plan of the padded problem on the copy (sm90's TMA, or sm80's vector
 * copies), costs one pass over the operand. The plan does it when the policy scores the padded
 * problem's best instance at least REPACK_GAIN times the original's; the padding columns are
 * never written (TMA zero-fills reads past K; the sm80 windows mask them).
 * The plan's prob is the padded problem (what the kernel runs); the user's problem is kept in
 * the repack state, and ck_gemm_plan_execute checks the user's arguments against it.
 */
#include <stdlib.h>
#include <string.h>

#include "ck/elementwise.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define REPACK_GAIN 1.5

struct ck_gemm_repack {
    ck_gemm_prob user; /* the problem as the caller describes its operands */
    int a, b;          /* which operands are copied */
    void *ws_a, *ws_b; /* their padded copies (device memory of the plan) */
    ck_device *dev;
};

/* The padded form of operand m (rows x cols): ld and batch stride rounded up to 16 bytes.
 * Returns 1 when m needed it. */
static int pad(const ck_gemm_matrix *m, int64_t rows, int64_t cols, ck_gemm_matrix *out)
{
    int es = ck_gemm_dtype_bytes(m->dtype);
    int64_t per = 16 / es, contig = m->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = m->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    *out = *m;
    if ((m->ld * es) % 16 == 0 && (m->batch_stride * es) % 16 == 0)
        return 0;
    out->ld = (contig + per - 1) / per * per;
    out->batch_stride = m->batch_stride ? lines * out->ld : 0;
    return 1;
}

static size_t bytes_of(const ck_gemm_matrix *m, int64_t rows, int64_t cols, int64_t batch)
{
    int64_t lines = m->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    return (size_t)((m->batch_stride ? batch : 1) * lines * m->ld) *
           (size_t)ck_gemm_dtype_bytes(m->dtype);
}

static double best_score(const ck_gemm_prob *prob, const ck_device_props *props, int *family)
{
    ck_gemm_instance ins[64];
    double score[64];
    int n = ck_gemm_policy_rank(prob, props, ins, score, 64, NULL, 0);
    *family = n > 0 ? ins[0].family : 0;
    return n > 0 ? score[0] : 0.0;
}

void ck_gemm_repack_free(ck_gemm_repack *r)
{
    if (!r)
        return;
    if (r->ws_a)
        ck_free(r->dev, r->ws_a);
    if (r->ws_b)
        ck_free(r->dev, r->ws_b);
    free(r);
}

ck_status ck_gemm_repack_try(ck_context *ctx, const ck_gemm_prob *prob, ck_gemm_plan **out)
{
    *out = NULL;
    const ck_gemm_problem *p = &prob->p;
    ck_gemm_problem q = *p;
    q.epilogue = prob->has_epi ? &prob->epi : NULL; /* (prob->p's is NULL: it refers to epi) */
    int ra = pad(&p->a, p->m, p->k, &q.a), rb = pad(&p->b, p->k, p->n, &q.b);
    if (!ra && !rb)
        return CK_SUCCESS;
    q.epilogue = prob->has_epi ? &prob->epi : NULL; /* (prob->p refers to prob->epi) */
    ck_gemm_prob padded;
    if (ck_gemm_prob_make(&q, &padded) != CK_SUCCESS) {
        ck_clear_error();
        return CK_SUCCESS;
    }
    /* the copies are aligned; an operand not copied keeps its element-wise loads */
    padded.scalar_copy = prob->scalar_copy & ~((ra ? 1 : 0) | (rb ? 2 : 0));
    const ck_device_props *props = ck_op_props(ctx);
    int fam_user, fam_padded; /* (the families: for a debugger) */
    double s_user = best_score(prob, props, &fam_user);
    double s_padded = best_score(&padded, props, &fam_padded);
    (void)fam_user, (void)fam_padded;
    if (s_padded < REPACK_GAIN * s_user)
        return CK_SUCCESS; /* not worth a copy: the caller plans the problem as it is */
    ck_gemm_repack *r = calloc(1, sizeof *r);
    if (!r)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_gemm: out of host memory for the plan.");
    r->user = *prob;
    r->a = ra, r->b = rb;
    r->dev = ck_context_device(ctx);
    ck_status st = CK_SUCCESS;
    if (ra)
        st = ck_malloc(r->dev, bytes_of(&q.a, p->m, p->k, p->batch), &r->ws_a);
    if (!st && rb)
        st = ck_malloc(r->dev, bytes_of(&q.b, p->k, p->n, p->batch), &r->ws_b);
    ck_gemm_plan *plan = NULL;
    if (!st)
        st = ck_gemm_plan_create_prob(ctx, &padded, -1, &plan);
    if (st) {
        ck_gemm_repack_free(r);
        return st;
    }
    plan->repack = r;
    *out = plan;
    return CK_SUCCESS;
}

const ck_gemm_prob *ck_gemm_repack_user(const ck_gemm_plan *plan)
{
    return plan->repack ? &plan->repack->user : &plan->prob;
}

/* The ck_tensor of operand m (rows x cols, `batch` matrices) at ptr. */
static void view(ck_tensor *t, const void *ptr, const ck_gemm_matrix *m, int64_t rows, int64_t cols,
                 int64_t batch)
{
    int64_t shape[3] = {batch, rows, cols};
    int64_t strides[3] = {m->batch_stride, m->order == CK_GEMM_ROW_MAJOR ? m->ld : 1,
                          m->order == CK_GEMM_ROW_MAJOR ? 1 : m->ld};
    int b = m->batch_stride && batch > 1;
    memset(t, 0, sizeof *t);
    t->data = (void *)ptr;
    t->dtype = m->dtype;
    t->rank = b ? 3 : 2;
    for (int i = 0; i < t->rank; ++i)
        t->shape[i] = shape[i + !b], t->strides[i] = strides[i + !b];
}

ck_status ck_gemm_repack_launch(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    const ck_gemm_repack *r = plan->repack;
    const ck_gemm_problem *u = &r->user.p, *q = &plan->prob.p;
    ck_gemm_args a2 = *args;
    ck_tensor src, dst;
    ck_status st;
    if (r->a) {
        view(&src, args->a, &u->a, u->m, u->k, u->batch);
        view(&dst, r->ws_a, &q->a, q->m, q->k, q->batch);
        if ((st = ck_copy(plan->ctx, &src, &dst)))
            return ck_fail_context(st, "ck_gemm_plan_execute: repacking A");
        a2.a = r->ws_a;
    }
    if (r->b) {
        view(&src, args->b, &u->b, u->k, u->n, u->batch);
        view(&dst, r->ws_b, &q->b, q->k, q->n, q->batch);
        if ((st = ck_copy(plan->ctx, &src, &dst)))
            return ck_fail_context(st, "ck_gemm_plan_execute: repacking B");
        a2.b = r->ws_b;
    }
    return plan->family->launch(plan, &a2);
}
