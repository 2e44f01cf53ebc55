/*
 * ck_conv_tune (ck/tune.h): the candidate instances of one convolution for the common tuner
 * (ops/common/op_tune.h), which forces each in turn, times the distinct ones and stores the
 * fastest in the tuning table under op "conv", the device and ck_conv_tuning_problem_key; the
 * plan (kernel.c's plan_decide) takes that entry when it accepts it (ck_conv_tuned_text).
 *
 * Candidates, as tuned texts (conv_internal.h): the policy's own choice ("auto"); the direct
 * depthwise route where it fits (G = C = K) with strips of 1, 2, 4 and 8 outputs and, backward
 * weight, grids of 1, 4, 16 or 64 lane blocks of partial sums; and every instance the GEMM
 * routes list for the first implicit GEMM (ck_conv_route_instances: the GEMM's own candidates
 * for a plain GEMM, the sm90 family's loader instances, the sm80 instances whose copy windows
 * exist). A candidate the plan does not accept is skipped (logged at info level).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tune.h"
#include "ck/tuning.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_tune.h"
#include "ops/conv/conv_internal.h"

#define FN "ck_conv_tune"

enum { MAX_CANDIDATES = 160, MAX_GEMM = 64 };

int ck_conv_tuned_text(ck_context *ctx, const ck_conv_prob *q, char *buf, size_t size)
{
    static const char *const switches[] = {"CK_CONV_ROUTE", "CK_CONV_DW_STRIP",
                                           "CK_CONV_DW_WGRAD_BLOCKS", "CK_CONV_DW_VEC"};
    char key[CK_TUNING_PROBLEM_MAX];
    int forced = 0;
    ck_conv_tuning_problem_key(q, key, sizeof key);
    if (!ck_op_tuned(ctx, "conv", key, buf, size, &forced) || strcmp(buf, "auto") == 0) {
        buf[0] = 0;
        return forced;
    }
    for (size_t i = 0; i < sizeof switches / sizeof switches[0] && !forced; ++i) {
        const char *v = getenv(switches[i]);
        if (v && *v) {
            CK_LOG(CK_LOG_INFO,
                   "ck_conv: %s=%s is set; the developer switch keeps priority over the tuning "
                   "table's instance '%s'.",
                   switches[i], v, buf);
            buf[0] = 0;
            return 0;
        }
    }
    return forced;
}

typedef struct conv_tune {
    ck_context *ctx;
    const ck_conv_problem *problem;
    const ck_conv_args *args;
    char key[CK_TUNING_PROBLEM_MAX];
    ck_conv_plan *plan; /* built for the instance `planned` */
    char planned[CK_TUNING_INSTANCE_MAX];
} conv_tune;

/* The forced instance's text ("" when none). */
static void forced_text(const conv_tune *t, char *buf, size_t size)
{
    int forced = 0;
    if (!ck_op_tuned(t->ctx, "conv", t->key, buf, size, &forced) || !forced)
        buf[0] = 0;
}

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    conv_tune *t = user;
    char want[CK_TUNING_INSTANCE_MAX];
    int tuned = 0;
    forced_text(t, want, sizeof want);
    snprintf(problem, psize, "%s", t->key);
    ck_status st = ck_conv_plan_choice(t->ctx, t->problem, name, nsize, &tuned);
    if (st)
        return st;
    if (!tuned && strcmp(want, "auto") != 0) {
        CK_LOG(CK_LOG_INFO, FN ": candidate %s: the plan does not accept it; skipped.", want);
        name[0] = 0;
    }
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    conv_tune *t = user;
    char want[CK_TUNING_INSTANCE_MAX];
    forced_text(t, want, sizeof want);
    if (!t->plan || strcmp(want, t->planned) != 0) { /* a new candidate: its plan */
        ck_conv_plan_destroy(t->plan);
        t->plan = NULL;
        ck_status st = ck_conv_plan_create(t->ctx, t->problem, &t->plan);
        if (st)
            return st;
        snprintf(t->planned, sizeof t->planned, "%s", want);
    }
    return ck_conv_plan_execute(t->plan, t->args);
}

/* The first implicit GEMM of the problem (backward data: of the first class with rows and
 * taps; *found 0 when there is none) as GEMM problems (ck_conv_gemm_probs). */
static ck_status first_gemm(const ck_conv_prob *q, ck_conv_class *cls, ck_gemm_prob *loader,
                            ck_gemm_prob *plain, int *found)
{
    memset(cls, 0, sizeof *cls);
    *found = q->p.direction != CK_CONV_BWD_DATA;
    if (!*found) {
        int ncls = ck_conv_classes(q, NULL, 0);
        ck_conv_class *all = calloc((size_t)ncls, sizeof *all);
        if (!all)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, FN ": out of host memory for the classes.");
        ck_conv_classes(q, all, ncls);
        for (int i = 0; i < ncls && !*found; ++i)
            if ((*found = ck_conv_class_work(&all[i]) == CK_CONV_CLASS_COMPUTE))
                *cls = all[i];
        free(all);
    }
    return *found ? ck_conv_gemm_probs(q, cls, loader, plain) : CK_SUCCESS;
}

int ck_conv_tuned_ok(const ck_conv_prob *q, const ck_device_props *props, const char *text)
{
    int strip, blocks, vec;
    if (strncmp(text, "depthwise:", 10) == 0)
        return ck_conv_dw_fits(q) &&
               ck_conv_dw_parse(text, q->p.direction == CK_CONV_BWD_WEIGHT, &strip, &blocks, &vec);
    ck_conv_class cls;
    ck_gemm_prob loader, plain;
    ck_conv_choice choice;
    int found = 0;
    if (first_gemm(q, &cls, &loader, &plain, &found) != CK_SUCCESS) {
        ck_clear_error();
        return 0;
    }
    return found && ck_conv_policy_tuned(q, &cls, &loader, ck_conv_is_plain_gemm(q) ? &plain : NULL,
                                         props, text, &choice);
}

/* The candidate texts of the problem (see the head comment) into texts[0..max-1]. */
static ck_status candidates(ck_context *ctx, const ck_conv_prob *q,
                            char (*texts)[CK_CONV_TUNED_MAX], int max, int *count)
{
    int n = 0, wgrad = q->p.direction == CK_CONV_BWD_WEIGHT;
    snprintf(texts[n++], CK_CONV_TUNED_MAX, "auto");
    /* the policy's vector, and the widest where it is wider (with the policy's strip of 4
     * only: the vector trades registers for occupancy whatever the strip) */
    int wide = 0;
    if (ck_conv_dw_fits(q) && ck_conv_dw_widest_vec(q) > ck_conv_dw_policy_vec(q))
        wide = ck_conv_dw_widest_vec(q);
    for (int s = 1; s <= 8 && ck_conv_dw_fits(q); s *= 2)
        for (int b = 1; b <= (wgrad ? 64 : 1); b *= 4)
            for (int k = 0; k < (wide && s == 4 ? 2 : 1) && n < max; ++k) {
                int v = k ? wide : 0;
                char vs[16] = "";
                if (v)
                    snprintf(vs, sizeof vs, ".v%d", v);
                if (wgrad)
                    snprintf(texts[n++], CK_CONV_TUNED_MAX, "depthwise:s%d.b%d%s", s, b, vs);
                else
                    snprintf(texts[n++], CK_CONV_TUNED_MAX, "depthwise:s%d%s", s, vs);
            }
    ck_conv_class cls;
    ck_gemm_prob loader, plain;
    int found = 0;
    ck_status st = first_gemm(q, &cls, &loader, &plain, &found);
    if (st || !found) { /* !found: every row of dX is zero, nothing but the policy's plan */
        *count = n;
        return st;
    }
    static const ck_conv_route routes[] = {CK_CONV_ROUTE_GEMM, CK_CONV_ROUTE_SM90,
                                           CK_CONV_ROUTE_SM80};
    ck_gemm_instance ins[MAX_GEMM];
    for (size_t r = 0; r < sizeof routes / sizeof routes[0]; ++r) {
        int k = ck_conv_route_instances(q, &cls, &loader, ck_conv_is_plain_gemm(q) ? &plain : NULL,
                                        ck_op_props(ctx), routes[r], ins, MAX_GEMM);
        for (int i = 0; i < k && n < max; ++i)
            ck_conv_gemm_choice_name(routes[r], &ins[i], texts[n++], CK_CONV_TUNED_MAX);
    }
    *count = n;
    return CK_SUCCESS;
}

ck_status ck_conv_tune(ck_context *ctx, const ck_conv_problem *problem, const ck_conv_args *args,
                       int reps, ck_tune_progress progress, void *user, char *best,
                       size_t best_size, double *best_ms)
{
    CK_REQUIRE_NOT_NULL(ctx, FN);
    CK_REQUIRE_NOT_NULL(problem, FN);
    CK_REQUIRE_NOT_NULL(args, FN);
    if (reps < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, FN ": reps = %d; accepted: reps >= 1.", reps);
    conv_tune t;
    memset(&t, 0, sizeof t);
    t.ctx = ctx, t.problem = problem, t.args = args;
    ck_conv_prob q;
    ck_status st = ck_conv_prob_make(problem, &q);
    if (st)
        return st;
    ck_conv_tuning_problem_key(&q, t.key, sizeof t.key);
    char(*texts)[CK_CONV_TUNED_MAX] = calloc(MAX_CANDIDATES, sizeof *texts);
    const char **ptr = calloc(MAX_CANDIDATES, sizeof *ptr);
    int n = 0;
    if (!texts || !ptr)
        st = ck_fail(CK_ERROR_OUT_OF_MEMORY, FN ": out of host memory for the candidates.");
    if (!st)
        st = candidates(ctx, &q, texts, MAX_CANDIDATES, &n);
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    if (!st) {
        /* each tensor read or written once: the metric stored is GB/s, as ck prof conv's */
        double bytes = (double)q.x_elems * ck_gemm_dtype_bytes(problem->in_dtype) +
                       (double)q.w_elems * ck_gemm_dtype_bytes(problem->wei_dtype) +
                       (double)q.y_elems * ck_gemm_dtype_bytes(problem->out_dtype);
        ck_op_tuner tuner = {"conv", ptr, n, plan, run, bytes, &t};
        st = ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
    }
    ck_conv_plan_destroy(t.plan);
    free(texts);
    free(ptr);
    return st;
}
