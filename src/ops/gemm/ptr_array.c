/*
 * Pointer-array batched GEMM (cuBLAS's cublasGemmBatchedEx, CUTLASS's pointer-array batches):
 * `count` products of one shape whose matrices are at addresses read from device arrays of
 * pointers. Built on the grouped kernel (grouped.c): the same partitioner, pipelines and operand
 * paths, with the other list kind (GEMM_PTR_ARRAY, group_walk_kernel.h): every group has the
 * plan's sizes and leading dimensions, so the group of a tile is one division, and group g's
 * matrices are the arrays' g-th pointers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm_ptr_array"

/* The kernel reads ck_gemm_ptr_arrays through ck_gemm_group_karrays: the same layout. */
#define SAME_FIELD(f)                                                                              \
    _Static_assert(offsetof(ck_gemm_ptr_arrays, f) == offsetof(ck_gemm_group_karrays, f) &&        \
                       sizeof(((ck_gemm_ptr_arrays *)0)->f) ==                                     \
                           sizeof(((ck_gemm_group_karrays *)0)->f),                                \
                   "ck_gemm_ptr_arrays." #f " differs from the kernel's")
SAME_FIELD(a);
SAME_FIELD(b);
SAME_FIELD(c);
SAME_FIELD(d);
SAME_FIELD(bias);
_Static_assert(sizeof(ck_gemm_ptr_arrays) == sizeof(ck_gemm_group_karrays),
               "ck_gemm_ptr_arrays differs from the kernel's");

struct ck_gemm_ptr_array_plan {
    ck_gemm_grouped_plan g; /* the grouped kernel (template problem, instance, launch) */
    ck_gemm_prob full;      /* the products' problem: sizes and leading dimensions */
};

ck_status ck_gemm_ptr_array_plan_create(ck_context *ctx, const ck_gemm_problem *problem,
                                        const ck_gemm_plan_options *options,
                                        ck_gemm_ptr_array_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_create: ctx, problem and plan must not be NULL.");
    *plan = NULL;
    if (problem->batch != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_create: batch = %lld; a pointer-array plan takes batch 1 (the "
                          "count of products comes at execution, with their pointers).",
                       (long long)problem->batch);
    ck_gemm_ptr_array_plan *pa = calloc(1, sizeof *pa);
    if (!pa)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP "_plan_create: out of host memory.");
    ck_status st = ck_gemm_prob_make(problem, &pa->full);
    if (st)
        st = ck_fail_context(st, OP "_plan_create");
    else
        st = ck_gemm_grouped_build(ctx, problem, options, 1, OP "_plan_create", &pa->g);
    if (st) {
        free(pa);
        return st;
    }
    *plan = pa;
    return CK_SUCCESS;
}

/* The array that count > 0 products need and `h` lacks (a, b, d; c when use_c; bias when
 * use_bias), with the reason in *why; NULL when none is missing. */
static const char *missing_array(const ck_gemm_ptr_arrays *h, int use_c, int use_bias,
                                 const char **why)
{
    *why = "count > 0 products need it";
    if (!h->a)
        return "a";
    if (!h->b)
        return "b";
    if (!h->d)
        return "d";
    *why = "the problem has C and beta is not 0";
    if (use_c && !h->c)
        return "c";
    *why = "the problem has a bias";
    if (use_bias && !h->bias)
        return "bias";
    return NULL;
}

ck_status ck_gemm_ptr_array_execute(ck_gemm_ptr_array_plan *plan, const ck_gemm_ptr_arrays *arrays,
                                    int count, const ck_gemm_args *args)
{
    if (!plan || !args || !arrays)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_execute: plan, arrays and args must not be NULL.");
    if (count < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_execute: count = %d; accepted: 0 (nothing to run) or more.", count);
    ck_gemm_kargs ka;
    ck_status st = ck_gemm_grouped_scalars(&plan->g, args, OP "_execute", &ka);
    if (st || count == 0)
        return st;
    const ck_gemm_prob *prob = &plan->full;
    const char *why,
        *missing = missing_array(arrays, ka.beta != 0.0f, prob->p.bias != CK_GEMM_BIAS_NONE, &why);
    if (missing)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP "_execute: arrays->%s is NULL; %s.", missing,
                       why);
    const ck_gemm_problem *p = &prob->p;
    const ck_gemm_instance *in = &plan->g.inst;
    ka.m = p->m, ka.n = p->n, ka.k = p->k;
    ka.lda = p->a.ld, ka.ldb = p->b.ld, ka.ldc = p->c.ld, ka.ldd = p->d.ld;
    ka.tiles_m = (int)((p->m + in->tile_m - 1) / in->tile_m);
    ka.tiles_n = (int)((p->n + in->tile_n - 1) / in->tile_n);
    ka.k_tiles = (int)((p->k + in->tile_k - 1) / in->tile_k);
    memcpy(&ka.arrays, arrays, sizeof ka.arrays);
    if (ka.beta == 0.0f)
        ka.arrays.c = NULL; /* C is not read */
    if (p->bias == CK_GEMM_BIAS_NONE)
        ka.arrays.bias = NULL;
    ka.group_count = count;
    return ck_gemm_grouped_launch(&plan->g, &ka);
}

/* A product's matrix in the overlap checks: bytes [lo, hi), product i, name. */
typedef struct pa_span {
    uintptr_t lo, hi;
    int i;
    const char *name;
} pa_span;

static int by_lo(const void *x, const void *y)
{
    const pa_span *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo ? 1 : a->i - b->i;
}

/* The first of the sorted, disjoint spans d[0 .. n-1] ending after `lo` (n if none). */
static int first_ending_after(const pa_span *d, int n, uintptr_t lo)
{
    int a = 0, b = n;
    while (a < b) {
        int m = a + (b - a) / 2;
        if (d[m].hi > lo)
            b = m;
        else
            a = m + 1;
    }
    return a;
}

/* Every D against every other D (sorted: neighbours), then every input against the D spans. */
static ck_status check_overlaps(pa_span *d, int n, const pa_span *in, int nin)
{
    qsort(d, (size_t)n, sizeof *d, by_lo);
    for (int j = 1; j < n; ++j)
        if (d[j].lo < d[j - 1].hi)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP "_check: product %d's D overlaps product %d's D; every product "
                              "writes its own D.",
                           d[j].i, d[j - 1].i);
    for (int j = 0; j < nin; ++j) {
        int k = first_ending_after(d, n, in[j].lo);
        if (k < n && d[k].lo < in[j].hi)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP "_check: product %d's D overlaps product %d's %s; D must not share "
                              "memory with any product's A, B, C or bias (C_i may be exactly "
                              "D_i).",
                           d[k].i, in[j].i, in[j].name);
    }
    return CK_SUCCESS;
}

ck_status ck_gemm_ptr_array_check(const ck_gemm_ptr_array_plan *plan,
                                  const ck_gemm_ptr_arrays *host_arrays, int count,
                                  const ck_gemm_args *args)
{
    if (!plan || !args || !host_arrays || count < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_check: plan, host_arrays and args must not be NULL, count >= 0 "
                          "(count = %d).",
                       count);
    ck_gemm_kargs ka;
    ck_status st = ck_gemm_grouped_scalars(&plan->g, args, OP "_check", &ka);
    if (st || count == 0)
        return st;
    const ck_gemm_problem *p = &plan->full.p;
    const ck_gemm_ptr_arrays *h = host_arrays;
    int use_c = ka.beta != 0.0f, use_bias = p->bias != CK_GEMM_BIAS_NONE;
    const char *why, *missing = missing_array(h, use_c, use_bias, &why);
    if (missing)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP "_check: host_arrays->%s is NULL; %s.",
                       missing, why);
    pa_span *d = malloc((size_t)count * sizeof *d), *in = malloc((size_t)count * 4 * sizeof *in);
    if (!d || !in) {
        free(d), free(in);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP "_check: out of host memory.");
    }
    int nin = 0;
    for (int i = 0; i < count && !st; ++i) {
        char where[32];
        snprintf(where, sizeof where, "product %d", i);
        uintptr_t lo, hi;
        st = ck_gemm_grouped_check_matrix(OP "_check", where, "D", h->d[i], &p->d, p->d.ld, p->m,
                                          p->n, &d[i].lo, &d[i].hi);
        d[i].i = i, d[i].name = "D";
        if (!st)
            st = ck_gemm_grouped_check_matrix(OP "_check", where, "A", h->a[i], &p->a, p->a.ld,
                                              p->m, p->k, &lo, &hi);
        if (!st)
            in[nin++] = (pa_span){lo, hi, i, "A"};
        if (!st)
            st = ck_gemm_grouped_check_matrix(OP "_check", where, "B", h->b[i], &p->b, p->b.ld,
                                              p->k, p->n, &lo, &hi);
        if (!st)
            in[nin++] = (pa_span){lo, hi, i, "B"};
        if (!st && use_c) {
            st = ck_gemm_grouped_check_matrix(OP "_check", where, "C", h->c[i], &p->c, p->c.ld,
                                              p->m, p->n, &lo, &hi);
            int in_place = h->c[i] == h->d[i] && p->c.dtype == p->d.dtype &&
                           p->c.order == p->d.order && p->c.ld == p->d.ld;
            if (!st && !in_place)
                in[nin++] = (pa_span){lo, hi, i, "C"};
        }
        if (!st && use_bias) {
            if (!h->bias[i]) {
                st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                             OP "_check: product %d: pointer bias is "
                                "NULL.",
                             i);
            } else {
                lo = (uintptr_t)h->bias[i];
                hi = lo + (uintptr_t)((p->bias == CK_GEMM_BIAS_ROW ? p->m : p->n) *
                                      ck_gemm_dtype_bytes(p->bias_dtype));
                in[nin++] = (pa_span){lo, hi, i, "bias"};
            }
        }
    }
    if (!st)
        st = check_overlaps(d, count, in, nin);
    free(d), free(in);
    return st;
}

ck_status ck_gemm_ptr_array_plan_instance(const ck_gemm_ptr_array_plan *plan,
                                          ck_gemm_candidate *out)
{
    if (!plan || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_instance: plan and out must not be NULL.");
    ck_gemm_candidate_fill(&plan->full, &plan->g.inst, ck_op_props(plan->g.ctx), 0, out);
    size_t n = strlen(out->name);
    snprintf(out->name + n, sizeof out->name - n, ".ptr_array");
    return CK_SUCCESS;
}

void ck_gemm_ptr_array_plan_destroy(ck_gemm_ptr_array_plan *plan)
{
    free(plan); /* the kernel belongs to the context's cache */
}
