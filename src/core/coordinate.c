/*
 * Adaptor and tensor coordinates: every hidden index cached; moves update
 * only the transforms whose upper index changed.
 */
#include <string.h>

#include "core/error.h"
#include "core/tile_internal.h"

static ck_status require_concrete(const char *fn, const ck_adaptor *a)
{
    if (!a->concrete)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the adaptor has symbolic sizes; bind its symbols "
                       "(ck_adaptor_bind / ck_descriptor_bind) before computing indices.",
                       fn);
    return CK_SUCCESS;
}

ck_status ck_adaptor_coordinate_make(const ck_adaptor *a, const int64_t *top, ck_coordinate *c)
{
    const char *fn = "ck_adaptor_coordinate_make";
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(c, fn);
    if (a->ntop && !top)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: argument 'top' is NULL.", fn);
    ck_status st = require_concrete(fn, a);
    if (st)
        return st;
    c->nhidden = a->nhidden;
    memset(c->hidden, 0, sizeof(int64_t) * (size_t)a->nhidden);
    for (int i = 0; i < a->ntop; ++i)
        c->hidden[a->top[i]] = top[i];
    for (int i = a->ntransforms - 1; i >= 0; --i) {
        const ck_adaptor_entry *e = &a->entries[i];
        int64_t up[CK_TILE_MAX_TRANSFORM_DIMS], low[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int k = 0; k < e->t.nup; ++k)
            up[k] = c->hidden[e->up[k]];
        ck_transform_lower_unchecked(&e->t, up, low);
        for (int k = 0; k < e->t.nlow; ++k)
            c->hidden[e->low[k]] = low[k];
    }
    return CK_SUCCESS;
}

ck_status ck_adaptor_coordinate_move(const ck_adaptor *a, ck_coordinate *c, const int64_t *step,
                                     int64_t *bottom_diff)
{
    const char *fn = "ck_adaptor_coordinate_move";
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(c, fn);
    if (a->ntop && !step)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: argument 'step' is NULL.", fn);
    ck_status st = require_concrete(fn, a);
    if (st)
        return st;
    if (c->nhidden != a->nhidden)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the coordinate has %d hidden dims but the adaptor has %d; make the "
                       "coordinate with this adaptor.",
                       fn, c->nhidden, a->nhidden);
    int64_t diff[CK_TILE_MAX_HIDDEN] = {0};
    for (int i = 0; i < a->ntop; ++i) {
        diff[a->top[i]] = step[i];
        c->hidden[a->top[i]] = ck_wadd(c->hidden[a->top[i]], step[i]);
    }
    for (int i = a->ntransforms - 1; i >= 0; --i) {
        const ck_adaptor_entry *e = &a->entries[i];
        int changed = 0;
        int64_t up_old[CK_TILE_MAX_TRANSFORM_DIMS], up_diff[CK_TILE_MAX_TRANSFORM_DIMS],
            low[CK_TILE_MAX_TRANSFORM_DIMS], low_diff[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int k = 0; k < e->t.nup; ++k) {
            up_diff[k] = diff[e->up[k]];
            up_old[k] = ck_wsub(c->hidden[e->up[k]], up_diff[k]);
            changed |= up_diff[k] != 0;
        }
        if (!changed)
            continue;
        for (int k = 0; k < e->t.nlow; ++k)
            low[k] = c->hidden[e->low[k]];
        ck_transform_update_unchecked(&e->t, up_old, up_diff, low, low_diff);
        for (int k = 0; k < e->t.nlow; ++k) {
            c->hidden[e->low[k]] = low[k];
            diff[e->low[k]] = low_diff[k];
        }
    }
    if (bottom_diff)
        for (int i = 0; i < a->nbottom; ++i)
            bottom_diff[i] = diff[a->bottom[i]];
    return CK_SUCCESS;
}

void ck_adaptor_coordinate_top(const ck_adaptor *a, const ck_coordinate *c, int64_t *top)
{
    if (!a || !c || !top)
        return;
    for (int i = 0; i < a->ntop; ++i)
        top[i] = c->hidden[a->top[i]];
}

void ck_adaptor_coordinate_bottom(const ck_adaptor *a, const ck_coordinate *c, int64_t *bottom)
{
    if (!a || !c || !bottom)
        return;
    for (int i = 0; i < a->nbottom; ++i)
        bottom[i] = c->hidden[a->bottom[i]];
}

int ck_adaptor_coordinate_is_valid(const ck_adaptor *a, const ck_coordinate *c)
{
    if (!a || !c)
        return 0;
    for (int i = 0; i < a->ntransforms; ++i) {
        const ck_adaptor_entry *e = &a->entries[i];
        if (e->t.kind != CK_TRANSFORM_PAD && e->t.kind != CK_TRANSFORM_LEFT_PAD &&
            e->t.kind != CK_TRANSFORM_RIGHT_PAD)
            continue;
        int64_t up[1] = {c->hidden[e->up[0]]};
        if (!ck_transform_is_valid_upper_index(&e->t, up))
            return 0;
    }
    return 1;
}

ck_status ck_coordinate_make(const ck_descriptor *d, const int64_t *idx, ck_coordinate *c)
{
    CK_REQUIRE_NOT_NULL(d, "ck_coordinate_make");
    return ck_adaptor_coordinate_make(d->ad, idx, c);
}

ck_status ck_coordinate_move(const ck_descriptor *d, ck_coordinate *c, const int64_t *step)
{
    CK_REQUIRE_NOT_NULL(d, "ck_coordinate_move");
    return ck_adaptor_coordinate_move(d->ad, c, step, NULL);
}

int ck_coordinate_is_valid(const ck_descriptor *d, const ck_coordinate *c)
{
    if (!d || !c || !d->ad->concrete)
        return 0;
    const ck_adaptor *a = d->ad;
    for (int i = 0; i < a->ntop; ++i) {
        int64_t v = c->hidden[a->top[i]];
        if (v < 0 || v >= a->hidden_len[a->top[i]].v)
            return 0;
    }
    return ck_adaptor_coordinate_is_valid(a, c);
}
