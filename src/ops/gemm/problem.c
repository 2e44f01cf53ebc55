/*
 * The GEMM problem (CK's GemmProblem): argument checks and normalization. Every refusal is a
 * sentence naming the field, its value and what is accepted.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

void ck_gemm_problem_init(ck_gemm_problem *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->a.dtype = p->b.dtype = p->d.dtype = CK_DTYPE_BF16;
    p->c.dtype = CK_DTYPE_COUNT;
    p->a.order = p->b.order = p->c.order = p->d.order = CK_GEMM_ROW_MAJOR;
    p->compute = CK_GEMM_COMPUTE_DEFAULT;
    p->bias = CK_GEMM_BIAS_NONE;
    p->bias_dtype = CK_DTYPE_F32;
    p->activation = CK_GEMM_ACT_NONE;
    p->epilogue = NULL;
    p->batch = 1;
}

void ck_gemm_args_init(ck_gemm_args *args)
{
    if (!args)
        return;
    memset(args, 0, sizeof *args);
    args->alpha = 1.0f;
    args->beta = 0.0f;
    args->scale_a = args->scale_b = args->scale_d = 1.0f;
}

void ck_gemm_options_init(ck_gemm_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->alpha = 1.0f;
    o->scale_a = o->scale_b = o->scale_d = 1.0f;
    o->instance = -1;
}

int ck_gemm_dtype_bytes(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F32:
    case CK_DTYPE_I32:
        return 4;
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return 2;
    case CK_DTYPE_FP8_E4M3:
    case CK_DTYPE_FP8_E5M2:
    case CK_DTYPE_I8:
    case CK_DTYPE_U8: /* packed 4-bit B's storage (quant.c) */
        return 1;
    default:
        return 0;
    }
}

static int is_fp8(ck_dtype t)
{
    return t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2;
}

static const char *order_name(ck_gemm_order o)
{
    return o == CK_GEMM_ROW_MAJOR ? "row-major" : "column-major";
}

/* Resolve and check the leading dimension of a rows x cols matrix. */
static ck_status check_matrix(const char *name, ck_gemm_matrix *mat, int64_t rows, int64_t cols)
{
    if (mat->order != CK_GEMM_ROW_MAJOR && mat->order != CK_GEMM_COL_MAJOR)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": matrix %s has order %d; accepted: CK_GEMM_ROW_MAJOR (0) or "
                          "CK_GEMM_COL_MAJOR (1).",
                       name, (int)mat->order);
    int64_t contig = mat->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = mat->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    if (mat->ld == 0)
        mat->ld = contig;
    if (mat->ld < contig)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": matrix %s (%lld x %lld, %s) has leading dimension %lld, below its "
                          "contiguous extent %lld; accepted: ld >= %lld (or 0 for packed).",
                       name, (long long)rows, (long long)cols, order_name(mat->order),
                       (long long)mat->ld, (long long)contig, (long long)contig);
    int es = ck_gemm_dtype_bytes(mat->dtype);
    /* (lines - 1) * ld + contig elements of es bytes must fit comfortably in int64 */
    if (mat->ld > (INT64_C(1) << 40) || (double)lines * (double)mat->ld * es > 4.0e18)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": matrix %s (%lld x %lld, ld %lld) spans more bytes than a 64-bit "
                          "offset can address.",
                       name, (long long)rows, (long long)cols, (long long)mat->ld);
    return CK_SUCCESS;
}

/* Elements from the first to one past the last element of a rows x cols matrix. */
static double matrix_extent(const ck_gemm_matrix *mat, int64_t rows, int64_t cols)
{
    int64_t contig = mat->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = mat->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    return (double)(lines - 1) * (double)mat->ld + (double)contig;
}

/* The batch stride of a matrix: >= 0, and all batches within 64-bit byte offsets. */
static ck_status check_batch_stride(const char *name, const ck_gemm_matrix *mat, int64_t batch,
                                    int64_t rows, int64_t cols)
{
    if (mat->batch_stride < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": matrix %s has batch stride %lld; accepted: >= 0 elements (0 "
                          "broadcasts one matrix to every batch).",
                       name, (long long)mat->batch_stride);
    double bytes =
        ((double)(batch - 1) * (double)mat->batch_stride + matrix_extent(mat, rows, cols)) *
        ck_gemm_dtype_bytes(mat->dtype);
    if (mat->batch_stride > (INT64_C(1) << 48) || bytes > 4.0e18)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": matrix %s's %lld batches of stride %lld span more bytes than a "
                          "64-bit offset can address.",
                       name, (long long)batch, (long long)mat->batch_stride);
    return CK_SUCCESS;
}

/* 1 when the batch x lines x contig elements of D (strides batch_stride, ld, 1) are distinct:
 * sorted by stride, each stride passes the farthest element reachable through the smaller
 * ones (disjoint batch ranges, or batches interleaved between the lines). */
static int batches_disjoint(const ck_gemm_matrix *mat, int64_t batch, int64_t rows, int64_t cols)
{
    int64_t contig = mat->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = mat->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    double st[3] = {1.0, (double)mat->ld, (double)mat->batch_stride};
    double ext[3] = {(double)contig, (double)lines, (double)batch};
    for (int i = 1; i < 3; ++i) /* insertion sort by stride (3 dims) */
        for (int j = i; j > 0 && st[j] < st[j - 1]; --j) {
            double t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
            t = ext[j];
            ext[j] = ext[j - 1];
            ext[j - 1] = t;
        }
    double reach = 0; /* farthest offset through the dims sorted so far */
    for (int i = 0; i < 3; ++i) {
        if (ext[i] > 1 && st[i] <= reach)
            return 0;
        reach += st[i] * (ext[i] - 1);
    }
    return 1;
}

static ck_status check_batch(ck_gemm_problem *p, int has_c)
{
    if (p->batch < 1 || p->batch > INT32_MAX)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": batch = %lld; accepted: 1 to %d (ck_gemm_problem_init sets 1).",
                       (long long)p->batch, INT32_MAX);
    if (p->batch == 1) { /* one product: the strides mean nothing (and key nothing) */
        p->a.batch_stride = p->b.batch_stride = p->c.batch_stride = p->d.batch_stride = 0;
        p->bias_batch_stride = 0;
        return CK_SUCCESS;
    }
    /* the partitioners count batch x tiles of at least 16 x 16 with 32 bits */
    if ((double)((p->m + 15) / 16) * (double)((p->n + 15) / 16) * (double)p->batch >
        (double)INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %lld batches of m = %lld by n = %lld make more output tiles than a "
                          "32-bit tile index can count; split the batch.",
                       (long long)p->batch, (long long)p->m, (long long)p->n);
    ck_status st;
    if ((st = check_batch_stride("A", &p->a, p->batch, p->m, p->k)) ||
        (st = check_batch_stride("B", &p->b, p->batch, p->k, p->n)) ||
        (st = check_batch_stride("D", &p->d, p->batch, p->m, p->n)) ||
        (has_c && (st = check_batch_stride("C", &p->c, p->batch, p->m, p->n))))
        return st;
    if (!has_c)
        p->c.batch_stride = 0;
    if (p->d.batch_stride == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": D has batch stride 0 with batch = %lld: every batch would write the "
                          "same matrix; accepted: a stride that keeps D's batches apart (e.g. "
                          "m * n for packed D).",
                       (long long)p->batch);
    if (!batches_disjoint(&p->d, p->batch, p->m, p->n))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": D's batches overlap (batch stride %lld with %lld x %lld, %s, ld "
                          "%lld): batches would write the same elements; accepted: a stride of "
                          "at least %.0f (or batches interleaved between D's lines).",
                       (long long)p->d.batch_stride, (long long)p->m, (long long)p->n,
                       order_name(p->d.order), (long long)p->d.ld,
                       matrix_extent(&p->d, p->m, p->n));
    if (p->bias == CK_GEMM_BIAS_NONE)
        p->bias_batch_stride = 0;
    else if (p->bias_batch_stride < 0 || p->bias_batch_stride > (INT64_C(1) << 48))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": bias batch stride %lld; accepted: 0 (one bias for every batch) up "
                          "to 2^48 elements.",
                       (long long)p->bias_batch_stride);
    return CK_SUCCESS;
}

static ck_status check_types(const ck_gemm_problem *p)
{
    ck_dtype a = p->a.dtype, b = p->b.dtype, d = p->d.dtype;
    int ok_in = (a == CK_DTYPE_F16 || a == CK_DTYPE_BF16 || a == CK_DTYPE_F32) ? b == a
                : is_fp8(a)                                                    ? is_fp8(b)
                : a == CK_DTYPE_I8                                             ? b == CK_DTYPE_I8
                                                                               : 0;
    if (!ok_in)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": input types A %s x B %s are not supported; accepted: f16 x f16, "
                          "bf16 x bf16, f32 x f32, fp8 (e4m3/e5m2, any mix) or i8 x i8.",
                       ck_dtype_name(a), ck_dtype_name(b));
    int ok_d = d == CK_DTYPE_F32 || d == CK_DTYPE_F16 || d == CK_DTYPE_BF16 || is_fp8(d) ||
               (d == CK_DTYPE_I32 && a == CK_DTYPE_I8);
    if (!ok_d)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": output type D %s is not supported for %s inputs; accepted: f32, f16, "
                          "bf16, fp8 e4m3/e5m2 (with scale_d), and i32 for i8 inputs.",
                       ck_dtype_name(d), ck_dtype_name(a));
    if (p->c.dtype != CK_DTYPE_COUNT && p->c.dtype != d && p->c.dtype != CK_DTYPE_F32)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": C type %s is not supported with D %s; accepted: D's type or f32 (or "
                          "CK_DTYPE_COUNT for no C).",
                       ck_dtype_name(p->c.dtype), ck_dtype_name(d));
    if (p->compute != CK_GEMM_COMPUTE_DEFAULT && a != CK_DTYPE_F32)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": compute %d applies to f32 inputs only; with %s inputs use "
                          "CK_GEMM_COMPUTE_DEFAULT (0).",
                       (int)p->compute, ck_dtype_name(a));
    if ((int)p->compute < 0 || p->compute > CK_GEMM_COMPUTE_F32)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": compute %d is not a ck_gemm_compute value (0 default, 1 tf32, 2 f32).",
                       (int)p->compute);
    if ((int)p->bias < 0 || p->bias > CK_GEMM_BIAS_COL)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": bias %d is not a ck_gemm_bias value (0 none, 1 row, 2 column).",
                       (int)p->bias);
    if (p->bias != CK_GEMM_BIAS_NONE && p->bias_dtype != CK_DTYPE_F32 &&
        p->bias_dtype != CK_DTYPE_F16 && p->bias_dtype != CK_DTYPE_BF16)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": bias type %s is not supported; accepted: f32, f16, bf16.",
                       ck_dtype_name(p->bias_dtype));
    if ((int)p->activation < 0 || p->activation > CK_GEMM_ACT_SIGMOID)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": activation %d is not a ck_gemm_activation value (0 .. 5).",
                       (int)p->activation);
    return CK_SUCCESS;
}

/* Multi-D extras: count, op, broadcast, type, layout, batch stride; normalized (vectors: order
 * row, ld 0; unused slots and, for batch 1, the batch strides zeroed) so keys see only what
 * the kernel uses. */
static ck_status check_extras(ck_gemm_problem *p)
{
    if (p->extra_count < 0 || p->extra_count > CK_GEMM_MAX_EXTRAS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": extra_count = %d; accepted: 0 to %d extra tensors (multi-D).",
                       p->extra_count, CK_GEMM_MAX_EXTRAS);
    for (int x = p->extra_count; x < CK_GEMM_MAX_EXTRAS; ++x)
        memset(&p->extras[x], 0, sizeof p->extras[x]);
    for (int x = 0; x < p->extra_count; ++x) {
        ck_gemm_extra *e = &p->extras[x];
        char name[32];
        snprintf(name, sizeof name, "extra %d", x);
        if (e->op != CK_GEMM_EXTRA_ADD && e->op != CK_GEMM_EXTRA_MUL)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": %s has op %d; accepted: CK_GEMM_EXTRA_ADD (1) or "
                              "CK_GEMM_EXTRA_MUL (2) (extra_count = %d counts only used extras).",
                           name, (int)e->op, p->extra_count);
        if (e->broadcast != CK_GEMM_EXTRA_ROW && e->broadcast != CK_GEMM_EXTRA_COL &&
            e->broadcast != CK_GEMM_EXTRA_FULL)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": %s has broadcast %d; accepted: CK_GEMM_EXTRA_ROW (1, M values), "
                              "CK_GEMM_EXTRA_COL (2, N values) or CK_GEMM_EXTRA_FULL (3, M x N).",
                           name, (int)e->broadcast);
        if (e->dtype != CK_DTYPE_F32 && e->dtype != CK_DTYPE_F16 && e->dtype != CK_DTYPE_BF16)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": %s has type %s; accepted: f32, f16, bf16.", name,
                           ck_dtype_name(e->dtype));
        if (p->batch <= 1)
            e->batch_stride = 0;
        if (e->batch_stride < 0 || e->batch_stride > (INT64_C(1) << 48))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": %s has batch stride %lld; accepted: 0 (one tensor for every "
                              "batch) up to 2^48 elements.",
                           name, (long long)e->batch_stride);
        if (e->broadcast != CK_GEMM_EXTRA_FULL) {
            e->order = CK_GEMM_ROW_MAJOR;
            e->ld = 0;
            continue;
        }
        ck_gemm_matrix mt = {e->dtype, e->order, e->ld, e->batch_stride};
        ck_status st = check_matrix(name, &mt, p->m, p->n);
        if (!st && p->batch > 1)
            st = check_batch_stride(name, &mt, p->batch, p->m, p->n);
        if (st)
            return st;
        e->ld = mt.ld;
    }
    return CK_SUCCESS;
}

ck_status ck_gemm_prob_make(const ck_gemm_problem *problem, ck_gemm_prob *prob)
{
    if (!problem || !prob)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": problem and prob must not be NULL.");
    memset(prob, 0, sizeof *prob);
    ck_gemm_problem p = *problem;
    if (p.m < 1 || p.n < 1 || p.k < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": sizes m = %lld, n = %lld, k = %lld; accepted: each >= 1.",
                       (long long)p.m, (long long)p.n, (long long)p.k);
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": sizes m = %lld, n = %lld, k = %lld overflow the kernels' 32-bit tile "
                          "and element indices; accepted: each <= %d.",
                       (long long)p.m, (long long)p.n, (long long)p.k, INT32_MAX);
    /* tiles are at least 16 x 16: their count must index with 32 bits */
    if ((double)((p.m + 15) / 16) * (double)((p.n + 15) / 16) > (double)INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": m = %lld by n = %lld makes more output tiles than a 32-bit tile "
                          "index can count; split the problem.",
                       (long long)p.m, (long long)p.n);
    ck_gemm_problem tp = p; /* packed B is checked as the A type it is dequantized to */
    if (p.b_packed)
        tp.b.dtype = p.a.dtype;
    ck_status st = check_types(&tp);
    if (st || (st = ck_gemm_quant_check_packed(&p)))
        return st;
    int has_c = p.c.dtype != CK_DTYPE_COUNT;
    if ((st = check_matrix("A", &p.a, p.m, p.k)) ||
        (st = check_matrix("B", &p.b, p.b_packed ? p.k / 2 : p.k, p.n)) ||
        (st = check_matrix("D", &p.d, p.m, p.n)) ||
        (has_c && (st = check_matrix("C", &p.c, p.m, p.n))))
        return st;
    if (!has_c)
        p.c.ld = 0;
    if ((st = check_batch(&p, has_c)) || (st = check_extras(&p)))
        return st;
    if (p.epilogue) {
        if ((st = ck_ew_check(p.epilogue, 1)))
            return ck_fail_context(st, OP ": the epilogue program (one input, x0 = the value)");
        prob->epi = *p.epilogue;
        prob->has_epi = 1;
    }
    p.epilogue = NULL; /* the plan refers to prob->epi */
    prob->p = p;
    prob->has_c = has_c;
    prob->a_kmajor = p.a.order == CK_GEMM_ROW_MAJOR;
    prob->b_kmajor = p.b.order == CK_GEMM_COL_MAJOR;
    prob->compute_in = p.a.dtype == CK_DTYPE_F32 ? CK_DTYPE_TF32 : p.a.dtype;
    prob->split3 = p.a.dtype == CK_DTYPE_F32 && p.compute == CK_GEMM_COMPUTE_F32;
    return ck_gemm_quant_check(prob);
}
