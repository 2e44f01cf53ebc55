/* The tuner of the operations without plans (op_tune.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tuning.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_tune.h"

enum { NAME = 128 };

static ck_status run_once(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    const ck_op_tuner *t = user;
    return t->run(t->user);
}

/* The distinct instances of the candidates (an invalid shape falls back to the heuristic's
 * choice: a duplicate) into names (malloc'd, *count of them), and the problem key. */
static ck_status distinct_instances(ck_context *ctx, const ck_op_tuner *t, char **names, int *count,
                                    char *problem, size_t psize)
{
    *count = 0;
    char *all = calloc((size_t)(t->count > 0 ? t->count : 1), NAME);
    if (!all)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck tune %s: out of host memory.", t->op);
    ck_status st = CK_SUCCESS;
    for (int i = 0; i < t->count && st == CK_SUCCESS; ++i) {
        char name[NAME];
        st = ck_op_force_instance(ctx, t->op, t->texts[i]);
        if (st == CK_SUCCESS)
            st = t->plan(t->user, name, sizeof name, problem, psize);
        if (st != CK_SUCCESS)
            break;
        int seen = name[0] == '\0'; /* the op's plan refused the candidate */
        for (int j = 0; j < *count && !seen; ++j)
            seen = strcmp(all + (size_t)j * NAME, name) == 0;
        if (!seen)
            snprintf(all + (size_t)(*count)++ * NAME, NAME, "%s", name);
    }
    if (st != CK_SUCCESS) {
        free(all);
        *count = 0;
        return st;
    }
    *names = all;
    return CK_SUCCESS;
}

ck_status ck_op_tune(ck_context *ctx, const ck_op_tuner *t, int reps, ck_op_tune_progress progress,
                     void *user, char *best, size_t best_size, double *best_ms)
{
    if (reps < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune %s: reps = %d; accepted: reps >= 1.",
                       t->op, reps);
    char *names = NULL, problem[sizeof(((ck_tuning_entry *)0)->problem)] = "";
    int n = 0;
    ck_status st = distinct_instances(ctx, t, &names, &n, problem, sizeof problem);
    int win = -1;
    double win_ms = 0;
    char last_error[512] = "";
    for (int i = 0; i < n && st == CK_SUCCESS; ++i) {
        const char *name = names + (size_t)i * NAME;
        double ms = -1;
        ck_timing_options to = {2, reps, 0, 1};
        ck_timing_result r;
        ck_status rs = ck_op_force_instance(ctx, t->op, name);
        if (rs == CK_SUCCESS)
            rs = ck_time_runs(ck_context_device(ctx), ck_context_stream(ctx), &to, run_once,
                              (void *)t, &r);
        if (rs != CK_SUCCESS) {
            snprintf(last_error, sizeof last_error, "%s", ck_last_error());
            CK_LOG(CK_LOG_WARN, "ck tune %s: candidate %s could not run: %s", t->op, name,
                   last_error);
        } else {
            ms = r.median_ms;
            if (win < 0 || ms < win_ms) {
                win = i;
                win_ms = ms;
            }
        }
        if (progress)
            progress(user, i, n, name, ms);
    }
    /* clearing also drops the table read so far: the next call reads the new entry */
    ck_status cs = ck_op_force_instance(ctx, t->op, NULL);
    if (st == CK_SUCCESS)
        st = cs;
    if (st == CK_SUCCESS && win < 0)
        st = ck_fail(CK_ERROR_LAUNCH,
                     "ck tune %s: none of the %d candidates could run (the last: %s).", t->op, n,
                     last_error);
    if (st == CK_SUCCESS) {
        ck_tuning_entry e;
        memset(&e, 0, sizeof e);
        snprintf(e.op, sizeof e.op, "%s", t->op);
        ck_op_tuning_device(ctx, e.device, sizeof e.device);
        snprintf(e.problem, sizeof e.problem, "%s", problem);
        snprintf(e.instance, sizeof e.instance, "%s", names + (size_t)win * NAME);
        e.ms = win_ms;
        e.metric = t->bytes / (win_ms * 1e6);
        if ((st = ck_tuning_store(&e)) != CK_SUCCESS)
            st = ck_fail_context(st, "ck tune %s: storing the winner", t->op);
        if (st == CK_SUCCESS && best)
            snprintf(best, best_size, "%s", e.instance);
        if (st == CK_SUCCESS && best_ms)
            *best_ms = win_ms;
    }
    free(names);
    return st;
}
