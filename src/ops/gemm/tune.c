/*
 * ck_gemm_tune: time every candidate instance of one problem on the context's device and store
 * the fastest in the tuning table (ck/tuning.h), where the policy finds it (policy.c).
 */
#include <stdio.h>
#include <string.h>

#include "ck/tuning.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

typedef struct tune_job {
    ck_gemm_plan *plan;
    const ck_gemm_args *args;
} tune_job;

static ck_status run_once(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    tune_job *j = user;
    return ck_gemm_plan_execute(j->plan, j->args);
}

/* Median time of `reps` runs of candidate id (after 2 warm-up runs, which also build it). */
static ck_status time_candidate(ck_context *ctx, const ck_gemm_problem *problem,
                                const ck_gemm_args *args, int id, int reps, double *ms)
{
    ck_gemm_plan *plan = NULL;
    ck_status st = ck_gemm_plan_create(ctx, problem, id, &plan);
    if (st)
        return st;
    tune_job job = {plan, args};
    ck_timing_options o = {2, reps, 0, 1};
    ck_timing_result r;
    st = ck_time_runs(ck_context_device(ctx), ck_context_stream(ctx), &o, run_once, &job, &r);
    if (st == CK_SUCCESS)
        *ms = r.median_ms;
    ck_gemm_plan_destroy(plan);
    return st;
}

ck_status ck_gemm_tune(ck_context *ctx, const ck_gemm_problem *problem, const ck_gemm_args *args,
                       int reps, ck_gemm_tune_progress progress, void *user,
                       ck_gemm_candidate *best, double *best_ms)
{
    static const char *fn = "ck_gemm_tune";
    CK_REQUIRE_NOT_NULL(ctx, fn);
    CK_REQUIRE_NOT_NULL(problem, fn);
    CK_REQUIRE_NOT_NULL(args, fn);
    if (reps < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: reps = %d; accepted: reps >= 1.", fn, reps);
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(problem, &prob);
    if (st)
        return st;
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    if ((st = ck_gemm_candidates(ctx, problem, cand, CK_GEMM_MAX_CANDIDATES, &n)))
        return st;
    int win = -1;
    double win_ms = 0;
    char last_error[512] = "";
    for (int i = 0; i < n; ++i) {
        double ms = -1;
        st = time_candidate(ctx, problem, args, cand[i].id, reps, &ms);
        if (st) {
            snprintf(last_error, sizeof last_error, "%s", ck_last_error());
            CK_LOG(CK_LOG_WARN, "%s: candidate %s could not run: %s", fn, cand[i].name, last_error);
            ms = -1;
        } else if (win < 0 || ms < win_ms) {
            win = i;
            win_ms = ms;
        }
        if (progress)
            progress(user, i, n, &cand[i], ms);
    }
    if (win < 0)
        return ck_fail(CK_ERROR_LAUNCH, "%s: none of the %d candidates could run (the last: %s).",
                       fn, n, last_error);
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "gemm");
    ck_gemm_tuning_device_key(ck_op_props(ctx), e.device, sizeof e.device);
    ck_gemm_tuning_problem_key(&prob, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "%s", cand[win].name);
    e.ms = win_ms;
    e.metric = 2.0 * (double)problem->m * problem->n * problem->k / (win_ms * 1e9);
    if ((st = ck_tuning_store(&e)))
        return ck_fail_context(st, "%s: storing the winner", fn);
    if (best) {
        *best = cand[win];
        best->tuned = 1;
    }
    if (best_ms)
        *best_ms = win_ms;
    return CK_SUCCESS;
}
