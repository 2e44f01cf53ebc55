/*
 * `ck tune permute` (permute_internal.h): the tile shapes and grids of one tiled transpose for
 * the common tuner (ops/common/op_tune.h), which times the distinct ones and stores the fastest
 * in the tuning table, where ck_permute_plan_on finds it.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_tune.h"
#include "ops/permute/permute_internal.h"

enum { MAX_CANDIDATES = 40, NAME = 32 };

typedef struct perm_tune {
    ck_context *ctx;
    ck_tensor *dst;
    const ck_tensor *src;
    const int *perm;
} perm_tune;

static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    perm_tune *t = user;
    ck_perm_plan p;
    ck_status st = ck_permute_plan_on(t->ctx, t->dst, t->src, t->perm, &p, problem, psize);
    if (st != CK_SUCCESS)
        return st;
    if (p.kind != CK_PERM_TILE)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "ck tune permute: this permutation is not a tiled transpose (a copy or a "
                       "gather); it has no instances to tune.");
    ck_permute_instance_name(&p, name, nsize);
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    perm_tune *t = user;
    return ck_permute(t->ctx, t->src, t->perm, t->dst);
}

ck_status ck_permute_tune(ck_context *ctx, const ck_tensor *src, const int *perm, ck_tensor *dst,
                          int reps, ck_permute_tune_progress progress, void *user, char *best,
                          size_t best_size, double *best_ms)
{
    ck_perm_plan p;
    ck_status st = ck_permute_plan(dst, src, perm, &p);
    if (st != CK_SUCCESS)
        return st;
    const int v = p.kind == CK_PERM_TILE ? 16 / p.elem_bytes : 1;
    /* "auto", then tiles of 8, 16 or 32 chunk groups per side (ck_permute_choose_tile refuses
     * the shapes ck_perm_shape_ok does not take) on grids of 1, 2 or 4 tiles per block or the
     * automatic grid, then (4- and 8-byte elements) the tiles through tile windows */
    char texts[MAX_CANDIDATES][NAME];
    const char *ptr[MAX_CANDIDATES];
    int n = 0;
    snprintf(texts[n++], NAME, "auto");
    for (int gn = 8; gn <= 32; gn *= 2)
        for (int gm = 8; gm <= 32; gm *= 2)
            for (int tpb = 0; tpb <= 4; tpb = tpb ? 2 * tpb : 1)
                if (n < MAX_CANDIDATES)
                    snprintf(texts[n++], NAME, "%d,%d,%d,0", gn * v, gm * v, tpb);
    /* the tiles on the automatic grid through generated tile windows */
    for (int gn = 8; gn <= 32 && p.kind == CK_PERM_TILE; gn *= 2)
        for (int gm = 8; gm <= 32; gm *= 2)
            if (n < MAX_CANDIDATES)
                snprintf(texts[n++], NAME, "%d,%d,0,1", gn * v, gm * v);
    for (int i = 0; i < n; ++i)
        ptr[i] = texts[i];
    perm_tune t = {ctx, dst, src, perm};
    /* src read and dst written once */
    ck_op_tuner tuner = {
        "permute", ptr, n,
        plan,      run, (double)(ck_tensor_extent_bytes(src) + ck_tensor_extent_bytes(dst)),
        &t};
    return ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
}
