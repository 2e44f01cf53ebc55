/*
 * Symbolic index computation: the lower index of every transform and the
 * bottom index of an adaptor as expressions of a symbolic top index (thread
 * ids, loop counters, sizes), with the padding conditions of validity. This is
 * what generated device code evaluates.
 */
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/tile_internal.h"

ck_status ck_transform_calculate_lower_expr(const ck_transform *t, const ck_ival *up, ck_ival *low)
{
    const char *fn = "ck_transform_calculate_lower_expr";
    CK_REQUIRE_NOT_NULL(t, fn);
    if ((unsigned)t->kind >= CK_TRANSFORM_KIND_COUNT_ || t->nup < 0 || t->nlow < 0 ||
        t->nup > CK_TILE_MAX_TRANSFORM_DIMS || t->nlow > CK_TILE_MAX_TRANSFORM_DIMS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: not a valid transform (kind %d, %d upper, %d lower dims).", fn,
                       (int)t->kind, t->nup, t->nlow);
    if ((t->nup && !up) || (t->nlow && !low))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: null index array for a %s transform.", fn,
                       ck_transform_kind_name(t->kind));
    ck_status st = CK_SUCCESS;
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
    case CK_TRANSFORM_RIGHT_PAD:
        low[0] = up[0];
        break;
    case CK_TRANSFORM_PAD:
    case CK_TRANSFORM_LEFT_PAD:
        low[0] = ck_iv_sub(up[0], t->p0, &st);
        break;
    case CK_TRANSFORM_SLICE:
    case CK_TRANSFORM_OFFSET:
        low[0] = ck_iv_add(up[0], t->p0, &st);
        break;
    case CK_TRANSFORM_EMBED:
    case CK_TRANSFORM_UNMERGE: {
        ck_ival s = ck_ival_int(0);
        for (int i = 0; i < t->nup; ++i)
            s = ck_iv_add(s, ck_iv_mul(up[i], t->coefs[i], &st), &st);
        low[0] = s;
        break;
    }
    case CK_TRANSFORM_MERGE: {
        ck_ival u = up[0];
        for (int i = t->nlow - 1; i > 0; --i) {
            low[i] = ck_iv_mod(u, t->coefs[i], &st);
            u = ck_iv_div(u, t->coefs[i], &st);
        }
        low[0] = u;
        break;
    }
    case CK_TRANSFORM_FREEZE:
        low[0] = t->p0;
        break;
    case CK_TRANSFORM_INSERT:
    case CK_TRANSFORM_REPLICATE:
        break;
    case CK_TRANSFORM_MODULO:
        low[0] = ck_iv_mod(up[0], t->p0, &st);
        break;
    case CK_TRANSFORM_XOR:
        low[0] = up[0];
        if (!st) {
            ck_ival m = ck_iv_mod(up[0], t->coefs[1], &st);
            if (!st)
                st = ck_ival_xor(up[1], m, &low[1]);
        }
        break;
    case CK_TRANSFORM_INDEXING: {
        if (!ck_ival_is_const(up[0]) || !ck_ival_is_const(t->up_lengths[0]))
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: an indexing (gather) transform reads a run-time table; its lower "
                           "index has no expression unless the upper index is known.",
                           fn);
        int64_t n = t->up_lengths[0].v, i = up[0].v;
        low[0] = ck_ival_int(t->table[i < 0 ? 0 : (i >= n ? n - 1 : i)]);
        break;
    }
    default:
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: unknown transform kind %d.", fn,
                       (int)t->kind);
    }
    if (st)
        return ck_fail_context(st, "%s: %s", fn, ck_transform_kind_name(t->kind));
    return CK_SUCCESS;
}

/* Condition lo <= v < hi unless the known range of v proves it. */
static ck_status add_condition(ck_ival v, ck_ival lo, ck_ival hi, int stage, int ti,
                               ck_index_condition *conds, int max, int *n)
{
    int64_t vmin, vmax, lmin, lmax, hmin, hmax;
    ck_ival_range(v, &vmin, &vmax);
    ck_ival_range(lo, &lmin, &lmax);
    ck_ival_range(hi, &hmin, &hmax);
    if (vmin >= lmax && (hmin == INT64_MAX || vmax < hmin))
        return CK_SUCCESS;
    if (*n < max) {
        conds[*n].value = v;
        conds[*n].lo = lo;
        conds[*n].hi = hi;
        conds[*n].stage = stage;
        conds[*n].transform = ti;
    }
    ++*n;
    return CK_SUCCESS;
}

ck_status ck_adaptor_calculate_bottom_expr(const ck_adaptor *a, const ck_ival *top, ck_ival *bottom,
                                           ck_index_condition *conds, int max_conds, int *nconds)
{
    const char *fn = "ck_adaptor_calculate_bottom_expr";
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(bottom, fn);
    CK_REQUIRE_NOT_NULL(nconds, fn);
    if ((a->ntop && !top) || (max_conds > 0 && !conds) || max_conds < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: 'top' or 'conds' is NULL (max_conds = %d).",
                       fn, max_conds);
    ck_ival h[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < CK_TILE_MAX_HIDDEN; ++i)
        h[i] = ck_ival_int(0);
    for (int i = 0; i < a->ntop; ++i)
        h[a->top[i]] = top[i];
    *nconds = 0;
    for (int i = a->ntransforms - 1; i >= 0; --i) {
        const ck_adaptor_entry *e = &a->entries[i];
        const ck_transform *t = &e->t;
        ck_ival up[CK_TILE_MAX_TRANSFORM_DIMS], low[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int k = 0; k < t->nup; ++k)
            up[k] = h[e->up[k]];
        ck_status st = ck_transform_calculate_lower_expr(t, up, low);
        if (!st) {
            ck_ival lo = ck_ival_int(INT64_MIN), hi = ck_ival_int(INT64_MAX);
            if (t->kind == CK_TRANSFORM_PAD) {
                lo = t->p0;
                hi = ck_iv_add(t->p0, t->low_lengths[0], &st);
            } else if (t->kind == CK_TRANSFORM_LEFT_PAD) {
                lo = t->p0;
            } else if (t->kind == CK_TRANSFORM_RIGHT_PAD) {
                hi = t->low_lengths[0];
            }
            if (!st && (t->kind == CK_TRANSFORM_PAD || t->kind == CK_TRANSFORM_LEFT_PAD ||
                        t->kind == CK_TRANSFORM_RIGHT_PAD))
                st = add_condition(up[0], lo, hi, e->stage, i, conds, max_conds, nconds);
        }
        if (st)
            return ck_fail_context(st, "%s: stage %d, transform %d (%s)", fn, e->stage, i,
                                   ck_transform_kind_name(t->kind));
        for (int k = 0; k < t->nlow; ++k)
            h[e->low[k]] = low[k];
    }
    for (int i = 0; i < a->nbottom; ++i)
        bottom[i] = h[a->bottom[i]];
    if (*nconds > max_conds)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %d validity conditions, but room for %d; call again with a larger "
                       "array.",
                       fn, *nconds, max_conds);
    return CK_SUCCESS;
}

ck_status ck_descriptor_calculate_offset_expr(const ck_descriptor *d, const ck_ival *idx,
                                              ck_ival *offset, ck_index_condition *conds,
                                              int max_conds, int *nconds)
{
    CK_REQUIRE_NOT_NULL(d, "ck_descriptor_calculate_offset_expr");
    return ck_adaptor_calculate_bottom_expr(d->ad, idx, offset, conds, max_conds, nconds);
}
