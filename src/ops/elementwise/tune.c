/*
 * `ck tune copy|cast|elementwise` (ew_internal.h): the vector instances of one call for the
 * common tuner (ops/common/op_tune.h), which times the distinct ones and stores the fastest in
 * the tuning table under op "elementwise", where the policy finds it (ck_ew_instance_for).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_tune.h"
#include "ops/elementwise/ew_internal.h"

enum { MAX_CANDIDATES = 48, NAME = 32 };

typedef struct ew_tune {
    ck_context *ctx;
    int call;
    ck_tensor *dst;
    const ck_tensor *inputs;
    int count;
    const ck_convert_options *opt;
    const ck_ew_program *prog;
} ew_tune;

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    ew_tune *t = user;
    ew_plan_out out;
    ck_status st = ck_ew_plan(t->ctx, t->call, t->dst, t->inputs, t->count, t->opt, t->prog, &out);
    if (st != CK_SUCCESS)
        return st;
    if (!out.vec)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "ck tune: this call does not take the vector layout (strided, sub-byte "
                       "or run-time typed, or empty); it has no instances to tune.");
    snprintf(name, nsize, "%s", out.instance);
    snprintf(problem, psize, "%s", out.problem);
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    ew_tune *t = user;
    if (t->call == EW_CALL_EXPR)
        return ck_elementwise(t->ctx, t->prog, t->inputs, t->count, t->dst);
    if (t->call == EW_CALL_COPY)
        return ck_copy(t->ctx, t->inputs, t->dst);
    return ck_cast(t->ctx, t->inputs, t->dst, t->opt);
}

ck_status ck_ew_tune(ck_context *ctx, int call, ck_tensor *dst, const ck_tensor *inputs,
                     int input_count, const ck_convert_options *opt, const ck_ew_program *prog,
                     int reps, ck_ew_tune_progress progress, void *user, char *best,
                     size_t best_size, double *best_ms)
{
    if (!ctx || !dst || !inputs || input_count < 1 || input_count > CK_EW_MAX_INPUTS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck tune: the context, the destination and 1 to %d inputs are required.",
                       CK_EW_MAX_INPUTS);
    /* "auto", then 1 to 8 packs per thread in blocks of 128 to 1024 threads, one pass, with
     * streaming and plain stores; and grid-stride grids of 8 waves for the defaults' shapes */
    char texts[MAX_CANDIDATES][NAME];
    const char *ptr[MAX_CANDIDATES];
    int n = 0;
    snprintf(texts[n++], NAME, "auto");
    for (int cs = 1; cs >= 0; --cs)
        for (int u = 1; u <= 8; u *= 2)
            for (int b = 128; b <= 1024; b *= 2)
                snprintf(texts[n++], NAME, "%d,%d,0,%d", u, b, cs);
    snprintf(texts[n++], NAME, "4,256,8,1");
    snprintf(texts[n++], NAME, "1,1024,8,1");
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    ew_tune t = {ctx, call, dst, inputs, input_count, opt, prog};
    double bytes = (double)ck_tensor_extent_bytes(dst);
    for (int k = 0; k < input_count; ++k)
        bytes += (double)ck_tensor_extent_bytes(&inputs[k]);
    ck_op_tuner tuner = {"elementwise", ptr, n, plan, run, bytes, &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}
