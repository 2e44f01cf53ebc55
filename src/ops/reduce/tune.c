/*
 * `ck tune reduce` (reduce_internal.h): the instances of one reduction for the common tuner
 * (ops/common/op_tune.h), which times the distinct ones and stores the fastest in the tuning
 * table, where the policy finds it (kernel.c, ck_reduce_apply_knobs).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/common/op_tune.h"
#include "ops/reduce/reduce_internal.h"

enum { MAX_CANDIDATES = 48, NAME = 40 };

typedef struct rd_tune {
    ck_context *ctx;
    ck_reduce_op op;
    const ck_tensor *x;
    const int *axes;
    int naxes;
    ck_tensor *y;
    const ck_reduce_options *opt;
} rd_tune;

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    rd_tune *t = user;
    rd_plan p;
    rd_canon c;
    ck_status st =
        ck_reduce_make_plan(t->ctx, t->op, t->x, t->axes, t->naxes, t->y, t->opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    if (c.rows == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune: y has no elements; nothing to tune.");
    ck_reduce_instance_name(&p, name, nsize);
    ck_reduce_problem_key(&p, problem, psize);
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    rd_tune *t = user;
    return ck_reduce(t->ctx, t->op, t->x, t->axes, t->naxes, t->y, t->opt);
}

ck_status ck_reduce_tune(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, ck_tensor *y, const ck_reduce_options *opt, int reps,
                         ck_reduce_tune_progress progress, void *user, char *best, size_t best_size,
                         double *best_ms)
{
    rd_plan p;
    rd_canon c;
    ck_status st = ck_reduce_make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    /* "auto" and "window" (the heuristic's instance through generated tile windows); row: lane
     * groups of 4 to 32 threads in 256-thread blocks, blocks of 64 to 1024 threads unsplit,
     * split as the heuristic does or into 4 to 256 parts; column: 8 to 32 column threads times
     * 4 to 32 reduced threads, unsplit, the heuristic's or 16 parts */
    char texts[MAX_CANDIDATES][NAME];
    const char *ptr[MAX_CANDIDATES];
    int n = 0;
    snprintf(texts[n++], NAME, "auto");
    snprintf(texts[n++], NAME, "window");
    if (p.kind == 0) {
        for (int g = 4; g <= 32; g *= 2)
            snprintf(texts[n++], NAME, "row,%d,%d,0", g, 256 / g);
        for (int g = 64; g <= 1024; g *= 2)
            for (int parts = 1; parts <= 256; parts *= 4)
                snprintf(texts[n++], NAME, "row,%d,1,%d", g, parts);
        for (int g = 64; g <= 1024; g *= 2)
            snprintf(texts[n++], NAME, "row,%d,1,0", g);
    } else {
        for (int ct = 8; ct <= 32; ct *= 2)
            for (int rt = 4; rt <= 32; rt *= 2)
                for (int parts = 0; parts <= 16; parts = parts ? parts * 16 : 1)
                    if (n < MAX_CANDIDATES)
                        snprintf(texts[n++], NAME, "col,%d,%d,%d", ct, rt, parts);
    }
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    rd_tune t = {ctx, op, x, axes, naxes, y, opt};
    /* x read and y written once */
    ck_op_tuner tuner = {"reduce", ptr,
                         n,        plan,
                         run,      (double)(ck_tensor_extent_bytes(x) + ck_tensor_extent_bytes(y)),
                         &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}
