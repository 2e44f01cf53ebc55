/*
 * `ck tune layernorm|rmsnorm` (norm_internal.h): the forward's candidate instances of one
 * problem for the common tuner (ops/common/op_tune.h), which times the distinct ones and stores
 * the fastest in the tuning table, where the policy finds it (policy.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_tune.h"
#include "ops/norm/norm_internal.h"

enum { MAX_CANDIDATES = 64, NAME = 64 }; /* room for four ints in any format */

/* "auto", every block shape with and without the raw cache (lane groups in blocks of 128 or
 * 256 threads), the cluster shapes, the looped pipeline's shapes (512 or 1024 threads, 1 to 8
 * blocks per row, the policy's cache; streamed and resident). */
static int candidate_texts(char (*c)[NAME], int max)
{
    int n = 0;
    snprintf(c[n++], NAME, "auto");
    for (int g = 1; g <= 1024; g *= 2)
        for (int raw = 0; raw <= 1; ++raw)
            for (int b = 128; b <= (g <= 32 ? 256 : 128); b *= 2)
                if (n < max)
                    snprintf(c[n++], NAME, "fwd,%d,%d,%d,1", g, raw, g > 32 ? g : b);
    for (int cl = 2; cl <= 8; cl *= 2)
        for (int g = 128; g <= 512; g *= 2)
            if (n < max)
                snprintf(c[n++], NAME, "fwd,%d,1,%d,%d", g, g, cl);
    for (int g = 512; g <= 1024; g *= 2)
        for (int cl = 1; cl <= 8; cl *= 2)
            if (n < max)
                snprintf(c[n++], NAME, "loop,%d,%d,-1", g, cl);
    for (int g = 512; g <= 1024; g *= 2) /* resident (16-bit x; others plan the streamed one) */
        for (int cl = 1; cl <= 8; cl *= 2)
            if (n < max)
                snprintf(c[n++], NAME, "loop,%d,%d,-1,-1", g, cl);
    return n;
}

typedef struct norm_tune {
    ck_context *ctx;
    const ck_norm_forward_desc *d;
} norm_tune;

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    norm_tune *t = user;
    ck_norm_instance in;
    ck_status st = ck_norm_forward_plan(t->ctx, t->d, &in, problem, psize);
    if (st != CK_SUCCESS)
        return st;
    if (in.grid == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune: x has no rows; nothing to tune.");
    ck_norm_fwd_instance_name(&in, name, nsize);
    if (!in.looped && (int64_t)in.iters * in.vec > 128)
        name[0] = '\0'; /* more than 128 values per thread: not worth compiling */
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    norm_tune *t = user;
    return ck_norm_forward(t->ctx, t->d);
}

ck_status ck_norm_tune(ck_context *ctx, const ck_norm_forward_desc *d, int reps,
                       ck_norm_tune_progress progress, void *user, char *best, size_t best_size,
                       double *best_ms)
{
    if (!ctx || !d || !d->x || !d->y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune: the context, x and y are required.");
    char texts[MAX_CANDIDATES][NAME];
    const char *ptr[MAX_CANDIDATES];
    int n = candidate_texts(texts, MAX_CANDIDATES);
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    norm_tune t = {ctx, d};
    const char *op = d->kind == CK_NORM_LAYERNORM ? "layernorm"
                     : d->kind == CK_NORM_RMSNORM ? "rmsnorm"
                                                  : "smoothquant";
    /* x read and y written once (the parameters and the other tensors are not counted) */
    ck_op_tuner tuner = {op,  ptr,
                         n,   plan,
                         run, (double)(ck_tensor_extent_bytes(d->x) + ck_tensor_extent_bytes(d->y)),
                         &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}

/* ---- the backward: vectors per thread 1, 2, 4, 8 on a persistent grid or one group of rows
 * per block */

typedef struct bwd_tune {
    ck_context *ctx;
    const ck_norm_backward_desc *d;
} bwd_tune;

static ck_status bwd_plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    bwd_tune *t = user;
    ck_norm_instance in;
    ck_status st = ck_norm_backward_plan(t->ctx, t->d, &in, name, nsize, problem, psize);
    if (st != CK_SUCCESS)
        return st;
    if (in.grid == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck tune: x has no rows; nothing to tune.");
    return CK_SUCCESS;
}

static ck_status bwd_run(void *user)
{
    bwd_tune *t = user;
    return ck_norm_backward(t->ctx, t->d);
}

ck_status ck_norm_bwd_tune(ck_context *ctx, const ck_norm_backward_desc *d, int reps,
                           ck_norm_tune_progress progress, void *user, char *best, size_t best_size,
                           double *best_ms)
{
    if (!ctx || !d || !d->x || !d->dy || !d->dx ||
        (d->kind != CK_NORM_LAYERNORM && d->kind != CK_NORM_RMSNORM))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck tune: the context, a layernorm or RMSNorm kind, dy, x and dx are "
                       "required.");
    char texts[9][NAME];
    const char *ptr[9];
    int n = 0;
    snprintf(texts[n++], NAME, "auto");
    for (int vpt = 1; vpt <= 8; vpt *= 2)
        for (int persistent = 1; persistent >= 0; --persistent)
            snprintf(texts[n++], NAME, "bwd,%d,%d", vpt, persistent);
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    bwd_tune t = {ctx, d};
    /* dy and x read, dx written once (the parameters and the partial sums not counted) */
    double bytes = (double)(ck_tensor_extent_bytes(d->dy) + ck_tensor_extent_bytes(d->x) +
                            ck_tensor_extent_bytes(d->dx));
    ck_op_tuner tuner = {ck_norm_bwd_table_name(d->kind), ptr, n, bwd_plan, bwd_run, bytes, &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}
