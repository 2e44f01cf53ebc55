/*
 * Grouped GEMM (CK Tile's GroupedGemmKernel): a list of products of different M, N, K in one
 * launch, their descriptions in device memory (grouped_kernel.h walks them on the device).
 *
 * Family: the sm80 pipeline (cp.async + ldmatrix + mma.sync) on every device, sm_90a included.
 * The sm90 kernel loads through TMA tensor maps, one per tensor, built by the driver on the
 * host from the tensor's address and shape; a list that a GPU kernel fills has neither on the
 * host, so grouped sm90 would need maps rewritten on the device (tensormap.replace into global
 * memory, fence.proxy.tensormap before use) per group and block, which this does not do yet
 * (docs/ops-gemm.md, "Grouped GEMM").
 *
 * The kernel is specialized for types, orders and the epilogue, never for sizes or alignment:
 * the template problem's leading dimensions are set to 1, so the generated epilogue assumes no
 * pairing of elements, and each group's A and B are copied in 16-byte pieces only where its
 * pointer and leading dimension allow (tested per group in the kernel).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_group_kernel.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm_grouped"

/* The kernel reads ck_gemm_group_desc through ck_gemm_group_kdesc: the same layout. */
#define SAME_FIELD(f)                                                                              \
    _Static_assert(offsetof(ck_gemm_group_desc, f) == offsetof(ck_gemm_group_kdesc, f) &&          \
                       sizeof(((ck_gemm_group_desc *)0)->f) ==                                     \
                           sizeof(((ck_gemm_group_kdesc *)0)->f),                                  \
                   "ck_gemm_group_desc." #f " differs from the kernel's")
SAME_FIELD(m);
SAME_FIELD(n);
SAME_FIELD(k);
SAME_FIELD(a);
SAME_FIELD(b);
SAME_FIELD(c);
SAME_FIELD(d);
SAME_FIELD(bias);
SAME_FIELD(lda);
SAME_FIELD(ldb);
SAME_FIELD(ldc);
SAME_FIELD(ldd);
_Static_assert(sizeof(ck_gemm_group_desc) == sizeof(ck_gemm_group_kdesc),
               "ck_gemm_group_desc differs from the kernel's");

struct ck_gemm_grouped_plan {
    ck_context *ctx;
    ck_gemm_prob prob; /* the kernel's template: leading dimensions 1 */
    ck_gemm_instance inst;
    ck_kernel *kernel;
    unsigned grid, block;
    size_t smem;
};

ck_status ck_gemm_grouped_prob(const ck_gemm_problem *problem, ck_gemm_prob *prob)
{
    if (problem->batch != 1 || problem->extra_count != 0)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP "_plan_create: batch = %lld, extra_count = %d; a grouped problem has "
                          "batch 1 and no extras (each group is one product).",
                       (long long)problem->batch, problem->extra_count);
    ck_gemm_problem t = *problem; /* the template: sizes and leading dimensions 1 */
    t.m = t.n = t.k = 1;
    t.a.ld = t.b.ld = t.c.ld = t.d.ld = 1;
    t.a.batch_stride = t.b.batch_stride = t.c.batch_stride = t.d.batch_stride = 0;
    t.bias_batch_stride = 0;
    return ck_gemm_prob_make(&t, prob);
}

/* The per-group 16-byte copy test of each operand, then the pipeline and the kernel. */
ck_status ck_gemm_grouped_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                 char **source)
{
    char entry[1024];
    snprintf(entry, sizeof entry,
             "#define GEMM_VEC16(p, ld_bytes) ((((unsigned long long)(p)) | "
             "(unsigned long long)(ld_bytes)) %% 16ull == 0)\n"
             "#define GEMM_A_VEC_AT(ka) GEMM_VEC16((ka)->a, (ka)->lda * GEMM_ES(GEMM_A_TYPE))\n"
             "#define GEMM_B_VEC_AT(ka) GEMM_VEC16((ka)->b, (ka)->ldb * GEMM_ES(GEMM_B_TYPE))\n"
             "#include \"ops/gemm/sm80_pipeline_kernel.h\"\n"
             "#include \"ops/gemm/grouped_kernel.h\"\n"
             "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_gemm_grouped(ck_gemm_kargs ka, "
             "const ck_gemm_group_kdesc *groups, int count)\n"
             "{\n    gemm_grouped_main(ka, groups, count);\n}\n",
             inst->warps_m * inst->warps_n * 32);
    return ck_gemm_sm80_source_entry(prob, inst, entry, source);
}

static ck_status grouped_source(void *user, char **source)
{
    const ck_gemm_grouped_plan *g = user;
    return ck_gemm_grouped_source(&g->prob, &g->inst, source);
}

/* The instance: the policy's best sm80 instance for a product of the template's M, N, K (where
 * given; else 1024 each: a typical expert's shape decides the tile). */
static ck_status pick_instance(ck_context *ctx, const ck_gemm_problem *problem,
                               ck_gemm_instance *out)
{
    ck_gemm_problem h = *problem;
    h.m = problem->m > 0 ? problem->m : 1024;
    h.n = problem->n > 0 ? problem->n : 1024;
    h.k = problem->k > 0 ? problem->k : 1024;
    h.a.ld = h.b.ld = h.c.ld = h.d.ld = 0; /* packed */
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(&h, &prob);
    if (st)
        return st;
    const ck_device_props *props = ck_op_props(ctx);
    char reason[256] = "";
    if (!ck_gemm_family_sm80.supports(&prob, props, reason, sizeof reason))
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": grouped GEMM runs in the sm80 family: %s",
                       reason);
    ck_gemm_instance ins[64];
    double score[64];
    int n = ck_gemm_policy_rank(&prob, props, ins, score, 64, reason, sizeof reason);
    for (int i = 0; i < n; ++i)
        if (ins[i].family == CK_GEMM_FAMILY_SM80) {
            *out = ins[i];
            return CK_SUCCESS;
        }
    return ck_fail(CK_ERROR_UNSUPPORTED, OP ": no sm80 instance for the problem (%s).", reason);
}

ck_status ck_gemm_grouped_plan_create(ck_context *ctx, const ck_gemm_problem *problem,
                                      ck_gemm_grouped_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_create: ctx, problem and plan must not be NULL.");
    *plan = NULL;
    ck_gemm_grouped_plan *g = calloc(1, sizeof *g);
    if (!g)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP "_plan_create: out of host memory.");
    g->ctx = ctx;
    ck_status st = ck_gemm_grouped_prob(problem, &g->prob);
    if (!st)
        st = pick_instance(ctx, problem, &g->inst);
    char *key = NULL;
    if (!st) {
        ck_gemm_param params[CK_GEMM_MAX_PARAMS];
        int np = ck_gemm_params(&g->prob, &g->inst, params, CK_GEMM_MAX_PARAMS);
        char *pk = np < 0 ? NULL : ck_gemm_params_key(params, np);
        ck_sbuf b = {0};
        if (pk)
            ck_sbuf_printf(&b, "grouped/%s", pk);
        free(pk);
        key = b.oom ? NULL : b.s;
        if (b.oom)
            free(b.s);
        if (!key)
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP "_plan_create: out of host memory.");
    }
    if (!st)
        st = ck_op_kernel(ctx, key, "ck_gemm_grouped", grouped_source, g, &g->kernel);
    free(key);
    if (!st) { /* a persistent grid: one wave of resident blocks */
        ck_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        g->block = (unsigned)(g->inst.warps_m * g->inst.warps_n * 32);
        g->smem = (size_t)(g->inst.tile_m + g->inst.tile_n) * (size_t)g->inst.tile_k *
                  (size_t)ck_gemm_dtype_bytes(problem->a.dtype) * (size_t)g->inst.stages;
        cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
        cfg.block[0] = g->block, cfg.block[1] = cfg.block[2] = 1;
        cfg.dynamic_shared_bytes = g->smem;
        int resident = 0;
        st = ck_kernel_max_active(g->kernel, &cfg, &resident);
        if (resident <= 0) /* the emulator: no limit; one block per worker */
            resident = ck_op_props(ctx)->multiprocessors;
        g->grid = (unsigned)(resident > 0 ? resident : 1);
    }
    if (st) {
        free(g);
        return st;
    }
    *plan = g;
    return CK_SUCCESS;
}

static ck_status check_scalars(const char *fn, const ck_gemm_args *args)
{
    if (!(args->scale_d != 0.0f) || !(args->scale_d == args->scale_d))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: scale_d = %g; accepted: a nonzero number.",
                       fn, (double)args->scale_d);
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_execute(ck_gemm_grouped_plan *plan, const ck_gemm_group_desc *groups,
                                  int count, const ck_gemm_args *args)
{
    if (!plan || !args)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP "_execute: plan and args must not be NULL.");
    if (count < 0 || (count > 0 && !groups))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_execute: count = %d, groups = %p; accepted: count >= 0 and a device "
                          "array of count descriptions.",
                       count, (const void *)groups);
    ck_status st = check_scalars(OP "_execute", args);
    if (st || count == 0)
        return st;
    ck_gemm_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.alpha = args->alpha * args->scale_a * args->scale_b;
    ka.beta = plan->prob.has_c ? args->beta : 0.0f;
    ka.inv_scale_d = 1.0f / args->scale_d;
    ka.k_splits = 1;
    ka.batch = 1;
    const ck_gemm_group_kdesc *kd = (const ck_gemm_group_kdesc *)(const void *)groups;
    void *argv[3] = {&ka, &kd, &count};
    size_t sizes[3] = {sizeof ka, sizeof kd, sizeof count};
    return ck_op_launch(plan->ctx, plan->kernel, plan->grid, 1, 1, plan->block, plan->smem, argv,
                        sizes, 3);
}

/* Byte range [lo, hi) of a rows x cols matrix of type t, order o, leading dimension ld. */
static void span(const void *p, ck_dtype t, ck_gemm_order o, int64_t ld, int64_t rows, int64_t cols,
                 uintptr_t *lo, uintptr_t *hi)
{
    int64_t lines = o == CK_GEMM_ROW_MAJOR ? rows : cols,
            contig = o == CK_GEMM_ROW_MAJOR ? cols : rows;
    *lo = (uintptr_t)p;
    *hi = *lo + (uintptr_t)(((lines - 1) * ld + contig) * ck_gemm_dtype_bytes(t));
}

/* Group i's matrix `name` (rows x cols) in the plan's type and order: non-NULL, its leading
 * dimension covering its contiguous extent; *lo, *hi its byte range. */
static ck_status check_matrix(int i, const char *name, const void *p, const ck_gemm_matrix *m,
                              int64_t ld, int64_t rows, int64_t cols, uintptr_t *lo, uintptr_t *hi)
{
    int64_t contig = m->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    if (!p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_check: group %d: pointer %s is NULL (the group has %lld x %lld "
                          "elements of it).",
                       i, name, (long long)rows, (long long)cols);
    int es = ck_gemm_dtype_bytes(m->dtype);
    if ((uintptr_t)p % (uintptr_t)es)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_check: group %d: pointer %s = %p is not aligned to its %d-byte "
                          "elements.",
                       i, name, p, es);
    if (ld < (contig > 1 ? contig : 1) || ld > (INT64_C(1) << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_check: group %d: ld%s = %lld; accepted: %lld (the %s's %s) .. 2^40.", i,
                       name, (long long)ld, (long long)(contig > 1 ? contig : 1),
                       m->order == CK_GEMM_ROW_MAJOR ? "row-major matrix" : "column-major matrix",
                       m->order == CK_GEMM_ROW_MAJOR ? "columns" : "rows");
    span(p, m->dtype, m->order, ld, rows, cols, lo, hi);
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_check(const ck_gemm_grouped_plan *plan, const ck_gemm_group_desc *groups,
                                int count, const ck_gemm_args *args)
{
    if (!plan || !args || count < 0 || (count > 0 && !groups))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_check: plan, args and (for count > 0) groups must not be NULL, "
                          "count >= 0 (count = %d).",
                       count);
    ck_status st = check_scalars(OP "_check", args);
    if (st)
        return st;
    const ck_gemm_problem *p = &plan->prob.p;
    int use_c = plan->prob.has_c && args->beta != 0.0f;
    for (int i = 0; i < count; ++i) {
        const ck_gemm_group_desc *g = &groups[i];
        if (g->m < 0 || g->n < 0 || g->k < 0 || g->m > (INT64_C(1) << 31) ||
            g->n > (INT64_C(1) << 31) || g->k > (INT64_C(1) << 31))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP "_check: group %d is %lld x %lld x %lld; accepted: M, N, K in 0 .. "
                              "2^31.",
                           i, (long long)g->m, (long long)g->n, (long long)g->k);
        if (g->m == 0 || g->n == 0)
            continue; /* nothing read or written */
        uintptr_t dlo, dhi, lo, hi;
        if ((st = check_matrix(i, "D", g->d, &p->d, g->ldd, g->m, g->n, &dlo, &dhi)))
            return st;
        if (g->k > 0) {
            if ((st = check_matrix(i, "A", g->a, &p->a, g->lda, g->m, g->k, &lo, &hi)))
                return st;
            if (lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: D overlaps A; D must not share memory with "
                                  "A, B or bias.",
                               i);
            if ((st = check_matrix(i, "B", g->b, &p->b, g->ldb, g->k, g->n, &lo, &hi)))
                return st;
            if (lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: D overlaps B; D must not share memory with "
                                  "A, B or bias.",
                               i);
        }
        if (use_c) {
            if ((st = check_matrix(i, "C", g->c, &p->c, g->ldc, g->m, g->n, &lo, &hi)))
                return st;
            int same = g->c == g->d && p->c.dtype == p->d.dtype && p->c.order == p->d.order &&
                       g->ldc == g->ldd;
            if (!same && lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: C overlaps D without being exactly D (same "
                                  "pointer, type, order and ld).",
                               i);
        }
        if (p->bias != CK_GEMM_BIAS_NONE) {
            if (!g->bias)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: pointer bias is NULL.", i);
            lo = (uintptr_t)g->bias;
            hi = lo + (uintptr_t)((p->bias == CK_GEMM_BIAS_ROW ? g->m : g->n) *
                                  ck_gemm_dtype_bytes(p->bias_dtype));
            if (lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP "_check: group %d: D overlaps bias.",
                               i);
        }
    }
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_plan_instance(const ck_gemm_grouped_plan *plan, ck_gemm_candidate *out)
{
    if (!plan || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_instance: plan and out must not be NULL.");
    ck_gemm_candidate_fill(&plan->prob, &plan->inst, ck_op_props(plan->ctx), 0, out);
    snprintf(out->name + strlen(out->name), sizeof out->name - strlen(out->name), ".grouped");
    return CK_SUCCESS;
}

void ck_gemm_grouped_plan_destroy(ck_gemm_grouped_plan *plan)
{
    free(plan); /* the kernel belongs to the context's cache */
}
