/*
 * Grouped GEMM (CK Tile's GroupedGemmKernel): a list of products of different M, N, K in one
 * launch, their descriptions in device memory; the tile partitioner walks them on the device
 * (group_walk_kernel.h). Pointer-array batches (ptr_array.c) are the same kernel with the other
 * list kind.
 *
 * Families: the sm90 pipeline (TMA + wgmma, warp-specialized) where it supports the problem's
 * types and orders, with A and B copied by its producer warpgroup through the loader hooks
 * (sm90_grouped_kernel.h): its TMA boxes need tensor maps made on the host from each tensor's
 * address and shape, which a list in device memory does not give the host. Else the sm80
 * pipeline (cp.async + ldmatrix + mma.sync; grouped_kernel.h). Every group's tiles are whole
 * (no split-K, stream-K or clusters).
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

ck_status ck_gemm_grouped_prob(const ck_gemm_problem *problem, const char *fn, ck_gemm_prob *prob)
{
    if (problem->batch != 1 || problem->extra_count != 0)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: batch = %lld, extra_count = %d; a grouped problem has batch 1 and no "
                       "extras (each group is one product).",
                       fn, (long long)problem->batch, problem->extra_count);
    if (problem->scale_a.mode != CK_GEMM_SCALE_TENSOR ||
        problem->scale_b.mode != CK_GEMM_SCALE_TENSOR || problem->b_packed != CK_GEMM_PACKED_NONE)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: scale tensors and packed B are not taken by grouped GEMM yet "
                       "(per-tensor scales are: ck_gemm_args.scale_a / scale_b).",
                       fn);
    ck_gemm_problem t = *problem; /* the template: sizes and leading dimensions 1 */
    t.m = t.n = t.k = 1;
    t.a.ld = t.b.ld = t.c.ld = t.d.ld = 1;
    t.a.batch_stride = t.b.batch_stride = t.c.batch_stride = t.d.batch_stride = 0;
    t.bias_batch_stride = 0;
    ck_status st = ck_gemm_prob_make(&t, prob);
    return st ? ck_fail_context(st, "%s", fn) : CK_SUCCESS;
}

/* The source's test of each group's copy (16-byte pieces or element by element), then the
 * family's pipeline and kernel. */
ck_status ck_gemm_grouped_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                 int ptr_array, char **source)
{
    char entry[1536];
    int n = snprintf(entry, sizeof entry,
                     "#define GEMM_PTR_ARRAY %d\n"
                     "#define GEMM_VEC16(p, ld_bytes) ((((unsigned long long)(p)) | "
                     "(unsigned long long)(ld_bytes)) %% 16ull == 0)\n"
                     "#define GEMM_A_VEC_AT(ka) GEMM_VEC16((ka)->a, (ka)->lda * "
                     "GEMM_ES(GEMM_A_TYPE))\n"
                     "#define GEMM_B_VEC_AT(ka) GEMM_VEC16((ka)->b, (ka)->ldb * "
                     "GEMM_ES(GEMM_B_TYPE))\n",
                     ptr_array);
    if (inst->family == CK_GEMM_FAMILY_SM90) {
        snprintf(entry + n, sizeof entry - (size_t)n,
                 "/* grouped: A and B of each group by the producer warpgroup's copies */\n"
                 "#include \"ops/gemm/sm90_grouped_kernel.h\"\n");
        return ck_gemm_sm90_source_entry(prob, inst, entry, NULL, source);
    }
    snprintf(entry + n, sizeof entry - (size_t)n,
             "#include \"ops/gemm/sm80_pipeline_kernel.h\"\n"
             "#include \"ops/gemm/grouped_kernel.h\"\n"
             "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_gemm_grouped(ck_gemm_kargs ka)\n"
             "{\n    gemm_grouped_main(ka);\n}\n",
             inst->warps_m * inst->warps_n * 32);
    return ck_gemm_sm80_source_entry(prob, inst, entry, source);
}

typedef struct grouped_build {
    const ck_gemm_prob *prob;
    const ck_gemm_instance *inst;
    int ptr_array;
} grouped_build;

static ck_status grouped_source(void *user, char **source)
{
    const grouped_build *b = user;
    return ck_gemm_grouped_source(b->prob, b->inst, b->ptr_array, source);
}

/* The problem the instances are ranked for: the template's types and orders with M, N, K of
 * `problem` (1024 where not given) and leading dimensions of whole 16-byte rows (the copies
 * are the kernel's business, not TMA's). */
static ck_status ranking_prob(const ck_gemm_problem *problem, ck_gemm_prob *out)
{
    ck_gemm_problem h = *problem;
    h.m = problem->m > 0 ? problem->m : 1024;
    h.n = problem->n > 0 ? problem->n : 1024;
    h.k = problem->k > 0 ? problem->k : 1024;
    ck_gemm_matrix *ms[4] = {&h.a, &h.b, &h.c, &h.d};
    int64_t contig[4] = {
        h.a.order == CK_GEMM_ROW_MAJOR ? h.k : h.m, h.b.order == CK_GEMM_ROW_MAJOR ? h.n : h.k,
        h.c.order == CK_GEMM_ROW_MAJOR ? h.n : h.m, h.d.order == CK_GEMM_ROW_MAJOR ? h.n : h.m};
    for (int i = 0; i < 4; ++i) {
        int es = ck_gemm_dtype_bytes(ms[i]->dtype);
        int64_t per = es > 0 ? 16 / es : 1;
        ms[i]->ld = (contig[i] + per - 1) / per * per;
        ms[i]->batch_stride = 0;
    }
    return ck_gemm_prob_make(&h, out);
}

int ck_gemm_grouped_instances(ck_context *ctx, const ck_gemm_problem *problem, const char *fn,
                              ck_gemm_instance *out, int max, char *why90, size_t why90_size)
{
    ck_gemm_prob prob;
    ck_status st = ranking_prob(problem, &prob);
    if (st) {
        ck_fail_context(st, "%s", fn);
        return 0;
    }
    const ck_device_props *props = ck_op_props(ctx);
    char reason[512] = "", r80[256] = "";
    int n = 0;
    enum { MAXI = 64 };
    ck_gemm_instance ins[MAXI];
    double score[MAXI];
    if (ck_gemm_family_sm90.supports(&prob, props, reason, sizeof reason)) {
        int slots = props->multiprocessors > 0 ? props->multiprocessors : 1;
        int k = ck_gemm_family_sm90.instances(&prob, props, ins, MAXI), kept = 0;
        for (int i = 0; i < k; ++i) /* whole tiles of 128 rows, no clusters */
            if (ins[i].cluster <= 1 && ins[i].split_k <= 1 && ins[i].decomp == 0 &&
                ins[i].tile_m == 128) {
                ins[kept] = ins[i];
                score[kept++] = ck_gemm_sm90_score(&prob, &ins[i], slots);
            }
        for (int i = 0; i < kept && n < max; ++i) { /* best first */
            int best = -1;
            for (int j = 0; j < kept; ++j)
                if (score[j] > -1.0 && (best < 0 || score[j] > score[best]))
                    best = j;
            out[n++] = ins[best];
            score[best] = -2.0;
        }
        if (why90 && why90_size)
            why90[0] = 0;
    } else if (why90 && why90_size) {
        snprintf(why90, why90_size, "%s", reason);
    }
    if (ck_gemm_family_sm80.supports(&prob, props, r80, sizeof r80)) {
        int k = ck_gemm_policy_rank(&prob, props, ins, score, MAXI, NULL, 0);
        for (int i = 0; i < k && n < max; ++i)
            if (ins[i].family == CK_GEMM_FAMILY_SM80)
                out[n++] = ins[i];
    }
    if (n == 0)
        ck_fail(CK_ERROR_UNSUPPORTED, "%s: neither family runs the groups (sm90: %s sm80: %s)", fn,
                reason, r80);
    return n;
}

ck_status ck_gemm_grouped_build(ck_context *ctx, const ck_gemm_problem *problem,
                                const ck_gemm_plan_options *options, int ptr_array, const char *fn,
                                ck_gemm_grouped_plan *g)
{
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->ptr_array = ptr_array;
    ck_gemm_plan_options def;
    ck_gemm_plan_options_init(&def);
    if (!options)
        options = &def;
    if (options->decomp != CK_GEMM_DECOMP_AUTO && options->decomp != CK_GEMM_DECOMP_TILES)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: decomp = %d; grouped GEMM runs whole tiles (CK_GEMM_DECOMP_AUTO or "
                       "_TILES).",
                       fn, (int)options->decomp);
    ck_status st = ck_gemm_grouped_prob(problem, fn, &g->prob);
    if (st)
        return st;
    ck_gemm_instance ins[64];
    char why90[512] = "";
    int n = ck_gemm_grouped_instances(ctx, problem, fn, ins, 64, why90, sizeof why90);
    if (n == 0)
        return ck_last_status();
    int pick = 0;
    if (options->instance >= 0) {
        pick = -1;
        for (int i = 0; i < n && pick < 0; ++i)
            if (ck_gemm_instance_id(&ins[i]) == options->instance)
                pick = i;
        if (pick < 0)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: instance %d is not a grouped candidate for the problem "
                           "(ck_gemm_grouped_candidates lists them: whole tiles of the sm90 "
                           "family without clusters, or the sm80 family's)%s%s.",
                           fn, options->instance, why90[0] ? "; sm90: " : "", why90);
    } else if (why90[0]) {
        CK_LOG(CK_LOG_INFO, "%s: the groups run on the sm80 family: %s", fn, why90);
    }
    g->inst = ins[pick];
    g->prob.tf32_truncate = g->inst.family == CK_GEMM_FAMILY_SM90;
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(&g->prob, &g->inst, params, CK_GEMM_MAX_PARAMS);
    char *pk = np < 0 ? NULL : ck_gemm_params_key(params, np);
    ck_sbuf b = {0};
    if (pk)
        ck_sbuf_printf(&b, "grouped/%s/sm%d/%s", ptr_array ? "ptr_array" : "list", g->inst.family,
                       pk);
    free(pk);
    if (!pk || b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of host memory.", fn);
    }
    grouped_build build = {&g->prob, &g->inst, ptr_array};
    int sm90 = g->inst.family == CK_GEMM_FAMILY_SM90;
    st = ck_op_kernel(ctx, b.s, sm90 ? "gemm_sm90" : "ck_gemm_grouped", grouped_source, &build,
                      &g->kernel);
    free(b.s);
    if (st)
        return st;
    /* a persistent grid: one wave of resident blocks */
    ck_launch_config *cfg = &g->launch;
    cfg->grid[0] = cfg->grid[1] = cfg->grid[2] = 1;
    cfg->block[1] = cfg->block[2] = 1;
    if (sm90) {
        ck_gemm_sm90_launch_shape(&g->prob, &g->inst, &cfg->block[0], &cfg->dynamic_shared_bytes);
    } else {
        cfg->block[0] = (unsigned)(g->inst.warps_m * g->inst.warps_n * 32);
        cfg->dynamic_shared_bytes =
            (size_t)(g->inst.tile_m + g->inst.tile_n) * (size_t)g->inst.tile_k *
            (size_t)ck_gemm_dtype_bytes(problem->a.dtype) * (size_t)g->inst.stages;
    }
    int resident = 0;
    st = ck_kernel_max_active(g->kernel, cfg, &resident);
    if (resident <= 0) /* the emulator: no limit; one block per worker */
        resident = ck_op_props(ctx)->multiprocessors;
    cfg->grid[0] = (unsigned)(resident > 0 ? resident : 1);
    return st;
}

ck_status ck_gemm_grouped_scalars(const ck_gemm_grouped_plan *g, const ck_gemm_args *args,
                                  const char *fn, ck_gemm_kargs *ka)
{
    if (!(args->scale_d != 0.0f) || !(args->scale_d == args->scale_d))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: scale_d = %g; accepted: a nonzero number.",
                       fn, (double)args->scale_d);
    memset(ka, 0, sizeof *ka);
    ka->alpha = args->alpha * args->scale_a * args->scale_b;
    ka->beta = g->prob.has_c ? args->beta : 0.0f;
    ka->inv_scale_d = 1.0f / args->scale_d;
    ka->k_splits = 1;
    ka->batch = 1;
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_launch(const ck_gemm_grouped_plan *g, ck_gemm_kargs *ka)
{
    ck_launch_config cfg = g->launch;
    cfg.stream = ck_context_stream(g->ctx);
    if (g->inst.family == CK_GEMM_FAMILY_SM90) { /* no tensor maps: the loaders copy A and B */
        static const ck_tensor_map none;
        const void *maps[3] = {&none, &none, &none};
        void *argv[4] = {ka, (void *)maps[0], (void *)maps[1], (void *)maps[2]};
        size_t sizes[4] = {sizeof *ka, sizeof none, sizeof none, sizeof none};
        return ck_launch(g->kernel, &cfg, argv, sizes, 4);
    }
    void *argv[1] = {ka};
    size_t sizes[1] = {sizeof *ka};
    return ck_launch(g->kernel, &cfg, argv, sizes, 1);
}

ck_status ck_gemm_grouped_candidates(ck_context *ctx, const ck_gemm_problem *problem,
                                     ck_gemm_candidate *out, int max, int *count)
{
    if (!ctx || !problem || !out || !count || max < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_candidates: ctx, problem, out and count must not be NULL and max "
                          ">= 1 (max = %d).",
                       max);
    *count = 0;
    ck_gemm_prob tmpl, rank;
    ck_status st = ck_gemm_grouped_prob(problem, OP "_candidates", &tmpl);
    if (st || (st = ranking_prob(problem, &rank)))
        return st;
    ck_gemm_instance ins[64];
    int n = ck_gemm_grouped_instances(ctx, problem, OP "_candidates", ins, 64, NULL, 0);
    if (n == 0)
        return ck_last_status();
    for (int i = 0; i < n && i < max; ++i) {
        ck_gemm_candidate_fill(&rank, &ins[i], ck_op_props(ctx), (double)(n - i), &out[i]);
        *count = i + 1;
    }
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_plan_create_opt(ck_context *ctx, const ck_gemm_problem *problem,
                                          const ck_gemm_plan_options *options,
                                          ck_gemm_grouped_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP "_plan_create: ctx, problem and plan must not be NULL.");
    *plan = NULL;
    ck_gemm_grouped_plan *g = calloc(1, sizeof *g);
    if (!g)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP "_plan_create: out of host memory.");
    ck_status st = ck_gemm_grouped_build(ctx, problem, options, 0, OP "_plan_create", g);
    if (st) {
        free(g);
        return st;
    }
    *plan = g;
    return CK_SUCCESS;
}

ck_status ck_gemm_grouped_plan_create(ck_context *ctx, const ck_gemm_problem *problem,
                                      ck_gemm_grouped_plan **plan)
{
    return ck_gemm_grouped_plan_create_opt(ctx, problem, NULL, plan);
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
    ck_gemm_kargs ka;
    ck_status st = ck_gemm_grouped_scalars(plan, args, OP "_execute", &ka);
    if (st || count == 0)
        return st;
    ka.groups = (const ck_gemm_group_kdesc *)(const void *)groups;
    ka.group_count = count;
    return ck_gemm_grouped_launch(plan, &ka);
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

/* The matrix `name` (rows x cols) of `where` (e.g. "group 3") in the plan's type and order:
 * non-NULL, its leading dimension covering its contiguous extent; *lo, *hi its byte range. */
ck_status ck_gemm_grouped_check_matrix(const char *fn, const char *where, const char *name,
                                       const void *p, const ck_gemm_matrix *m, int64_t ld,
                                       int64_t rows, int64_t cols, uintptr_t *lo, uintptr_t *hi)
{
    int64_t contig = m->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    if (!p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s: pointer %s is NULL (the product has %lld x %lld elements of it).",
                       fn, where, name, (long long)rows, (long long)cols);
    int es = ck_gemm_dtype_bytes(m->dtype);
    if ((uintptr_t)p % (uintptr_t)es)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s: pointer %s = %p is not aligned to its %d-byte elements.", fn, where,
                       name, p, es);
    if (ld < (contig > 1 ? contig : 1) || ld > (INT64_C(1) << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s: ld%s = %lld; accepted: %lld (the %s's %s) .. 2^40.", fn, where,
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
    ck_gemm_kargs ka;
    ck_status st = ck_gemm_grouped_scalars(plan, args, OP "_check", &ka);
    if (st)
        return st;
    const ck_gemm_problem *p = &plan->prob.p;
    int use_c = plan->prob.has_c && args->beta != 0.0f;
    for (int i = 0; i < count; ++i) {
        const ck_gemm_group_desc *g = &groups[i];
        char where[32];
        snprintf(where, sizeof where, "group %d", i);
        if (g->m < 0 || g->n < 0 || g->k < 0 || g->m > (INT64_C(1) << 31) ||
            g->n > (INT64_C(1) << 31) || g->k > (INT64_C(1) << 31))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP "_check: group %d is %lld x %lld x %lld; accepted: M, N, K in 0 .. "
                              "2^31.",
                           i, (long long)g->m, (long long)g->n, (long long)g->k);
        if (g->m == 0 || g->n == 0)
            continue; /* nothing read or written */
        uintptr_t dlo, dhi, lo, hi;
        if ((st = ck_gemm_grouped_check_matrix(OP "_check", where, "D", g->d, &p->d, g->ldd, g->m,
                                               g->n, &dlo, &dhi)))
            return st;
        if (g->k > 0) {
            if ((st = ck_gemm_grouped_check_matrix(OP "_check", where, "A", g->a, &p->a, g->lda,
                                                   g->m, g->k, &lo, &hi)))
                return st;
            if (lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: D overlaps A; D must not share memory with "
                                  "A, B or bias.",
                               i);
            if ((st = ck_gemm_grouped_check_matrix(OP "_check", where, "B", g->b, &p->b, g->ldb,
                                                   g->k, g->n, &lo, &hi)))
                return st;
            if (lo < dhi && dlo < hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP "_check: group %d: D overlaps B; D must not share memory with "
                                  "A, B or bias.",
                               i);
        }
        if (use_c) {
            if ((st = ck_gemm_grouped_check_matrix(OP "_check", where, "C", g->c, &p->c, g->ldc,
                                                   g->m, g->n, &lo, &hi)))
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
