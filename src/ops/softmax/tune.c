/*
 * `ck tune softmax` (softmax_plan.h): the candidate instances of one problem for the common
 * tuner (ops/common/op_tune.h), which times the distinct ones and stores the fastest in the
 * tuning table, where the policy finds it (kernel.c, ck_smx_knobs_for).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_tune.h"
#include "ops/softmax/softmax_plan.h"

enum { MAX_CANDIDATES = 160, NAME = 48 };

/* The candidates' texts: the heuristic ("auto"), register shapes, staged shapes. */
static int candidate_texts(char (*c)[NAME], int max)
{
    int n = 0;
    snprintf(c[n++], NAME, "auto");
    for (int g = 32; g <= 1024; g *= 2)
        for (int cl = 1; cl <= 16; cl *= 2)
            for (int r = 1; r <= (g == 32 ? 4 : 1); r *= 2)
                if (n < max)
                    snprintf(c[n++], NAME, "regs,%d,%d,%d,-1,-1,0", g, cl, r);
    for (int g = 256; g <= 1024; g *= 2)
        for (int cl = 1; cl <= 8; cl *= 2)
            for (int s = 1; s <= 2; ++s)
                if (n < max)
                    snprintf(c[n++], NAME, "staged,%d,%d,%d,0,0", g, cl, s);
    return n;
}

typedef struct smx_tune {
    ck_context *ctx;
    const ck_tensor *x;
    ck_tensor *y;
    const ck_softmax_options *o;
} smx_tune;

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    smx_tune *t = user;
    smx_plan p;
    int64_t rows = 0;
    ck_status st = ck_smx_plan_of(t->ctx, t->x, t->y, t->o, &p, &rows);
    if (st != CK_SUCCESS)
        return st;
    if (p.n == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune softmax: x has no elements.");
    ck_smx_instance_name(&p, name, nsize);
    ck_smx_problem_key(&p, rows, problem, psize);
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    smx_tune *t = user;
    return ck_softmax(t->ctx, t->x, t->y, t->o);
}

ck_status ck_smx_tune(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                      const ck_softmax_options *options, int reps, ck_smx_tune_progress progress,
                      void *user, char *best, size_t best_size, double *best_ms)
{
    char texts[MAX_CANDIDATES][NAME];
    const char *ptr[MAX_CANDIDATES];
    int n = candidate_texts(texts, MAX_CANDIDATES);
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    smx_tune t = {ctx, x, y, options};
    /* x read and y written once */
    ck_op_tuner tuner = {"softmax", ptr,
                         n,         plan,
                         run,       (double)(ck_tensor_extent_bytes(x) + ck_tensor_extent_bytes(y)),
                         &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}
