/*
 * Tensor adaptors: transforms over hidden dimension ids, validated once at
 * creation (every id defined once, consumed at most once, lengths agreeing),
 * then used to compute bottom indices and vector guarantees.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "core/tile_internal.h"

static const char *kname(const ck_transform *t)
{
    return ck_transform_kind_name(t->kind);
}

void ck_adaptor_destroy(ck_adaptor *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->ntransforms; ++i)
        if (a->entries[i].t.kind == CK_TRANSFORM_INDEXING)
            free((void *)a->entries[i].t.table);
    free(a->entries);
    free(a);
}

/* Lengths: an exact consumer must match, a "fits" consumer must not exceed. */
static ck_status check_length(const char *fn, const ck_adaptor_entry *e, int ti, int k, int h,
                              ck_ival have)
{
    const ck_transform *t = &e->t;
    ck_ival want = t->low_lengths[k], diff;
    ck_status st = ck_ival_sub(have, want, &diff);
    if (st)
        return ck_fail_context(st, "%s: stage %d, transform %d (%s), lower dim %d (hidden id %d)",
                               fn, e->stage, ti, kname(t), k, h);
    int64_t mn, mx;
    ck_ival_range(diff, &mn, &mx);
    int bad = t->low_fits ? (mx < 0) : (mn > 0 || mx < 0);
    if (!bad)
        return CK_SUCCESS;
    char hb[128], wb[128];
    ck_ival_print(have, hb, sizeof hb);
    ck_ival_print(want, wb, sizeof wb);
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "%s: stage %d, transform %d (%s): lower dim %d consumes hidden dim %d of "
                   "length %s, but the transform %s %s.",
                   fn, e->stage, ti, kname(t), k, h, hb,
                   t->low_fits ? "reaches indices up to length" : "expects a lower length of", wb);
}

ck_status ck_adaptor_create_staged(int ntransforms, const ck_adaptor_entry *entries, int nbottom,
                                   const int *bottom_ids, const ck_ival *bottom_lengths, int ntop,
                                   const int *top_ids, ck_adaptor **out)
{
    const char *fn = "ck_adaptor_create";
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    if (ntransforms < 0 || nbottom < 0 || ntop < 0 || nbottom > CK_TILE_MAX_HIDDEN ||
        ntop > CK_TILE_MAX_HIDDEN)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: ntransforms = %d, nbottom = %d, ntop = %d; accepted: counts >= 0 and "
                       "at most %d bottom/top dims.",
                       fn, ntransforms, nbottom, ntop, CK_TILE_MAX_HIDDEN);
    if ((ntransforms && !entries) || (nbottom && !bottom_ids) || (ntop && !top_ids))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: a transform, bottom-id or top-id array is NULL while its count is "
                       "nonzero.",
                       fn);
    /* defined_by: -2 never, -1 bottom, i transform i */
    int defined_by[CK_TILE_MAX_HIDDEN], consumed_by[CK_TILE_MAX_HIDDEN], is_top[CK_TILE_MAX_HIDDEN];
    for (int h = 0; h < CK_TILE_MAX_HIDDEN; ++h)
        defined_by[h] = -2, consumed_by[h] = -1, is_top[h] = 0;
    int nhidden = 0;
#define CHECK_ID(h, what, ...)                                                                     \
    do {                                                                                           \
        if ((h) < 0 || (h) >= CK_TILE_MAX_HIDDEN)                                                  \
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,                                              \
                           "%s: " what " has hidden id %d; accepted: 0 to %d.", fn, __VA_ARGS__,   \
                           (h), CK_TILE_MAX_HIDDEN - 1);                                           \
        if ((h) + 1 > nhidden)                                                                     \
            nhidden = (h) + 1;                                                                     \
    } while (0)
    for (int i = 0; i < nbottom; ++i) {
        int h = bottom_ids[i];
        CHECK_ID(h, "bottom dim %d", i);
        if (defined_by[h] != -2)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: hidden id %d is listed twice among the bottom dims.", fn, h);
        defined_by[h] = -1;
    }
    for (int i = 0; i < ntransforms; ++i) {
        const ck_adaptor_entry *e = &entries[i];
        const ck_transform *t = &e->t;
        if ((unsigned)t->kind >= CK_TRANSFORM_KIND_COUNT_ || t->nup < 0 || t->nlow < 0 ||
            t->nup > CK_TILE_MAX_TRANSFORM_DIMS || t->nlow > CK_TILE_MAX_TRANSFORM_DIMS)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: stage %d, transform %d is not a valid transform (kind %d, %d "
                           "upper, %d lower dims); build transforms with ck_make_*_transform.",
                           fn, e->stage, i, (int)t->kind, t->nup, t->nlow);
        for (int k = 0; k < t->nlow; ++k) {
            int h = e->low[k];
            CHECK_ID(h, "stage %d, transform %d (%s), lower dim %d", e->stage, i, kname(t), k);
            if (defined_by[h] == -2 || defined_by[h] >= i)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): lower dim %d is hidden id %d, "
                               "which is neither a bottom dim nor an upper dim of an earlier "
                               "transform (transforms are listed bottom-up).",
                               fn, e->stage, i, kname(t), k, h);
            if (consumed_by[h] >= 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): lower dim %d is hidden id %d, "
                               "already consumed by transform %d (%s); each dimension is "
                               "consumed once.",
                               fn, e->stage, i, kname(t), k, h, consumed_by[h],
                               kname(&entries[consumed_by[h]].t));
            consumed_by[h] = i;
        }
        for (int k = 0; k < t->nup; ++k) {
            int h = e->up[k];
            CHECK_ID(h, "stage %d, transform %d (%s), upper dim %d", e->stage, i, kname(t), k);
            if (defined_by[h] != -2)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): upper dim %d is hidden id %d, "
                               "already defined by %s; each hidden id is defined once.",
                               fn, e->stage, i, kname(t), k, h,
                               defined_by[h] == -1 ? "the bottom" : "an earlier transform");
            defined_by[h] = i;
        }
    }
    for (int i = 0; i < ntop; ++i) {
        int h = top_ids[i];
        CHECK_ID(h, "top dim %d", i);
        if (defined_by[h] == -2)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: top dim %d is hidden id %d, which nothing defines.", fn, i, h);
        if (is_top[h])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: hidden id %d is listed twice among the top dims.", fn, h);
        if (consumed_by[h] >= 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: top dim %d is hidden id %d, which transform %d (%s) consumes; "
                           "top dims are never consumed.",
                           fn, i, h, consumed_by[h], kname(&entries[consumed_by[h]].t));
        is_top[h] = 1;
    }
#undef CHECK_ID
    for (int h = 0; h < nhidden; ++h) {
        if (defined_by[h] == -2)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: hidden id %d is never defined; hidden ids must be 0..%d without "
                           "gaps.",
                           fn, h, nhidden - 1);
        if (!is_top[h] && consumed_by[h] < 0) {
            if (defined_by[h] == -1)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: bottom hidden dim %d is consumed by no transform and is not "
                               "a top dim.",
                               fn, h);
            const ck_adaptor_entry *e = &entries[defined_by[h]];
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: stage %d, transform %d (%s): its upper hidden dim %d is consumed "
                           "by no later transform and is not a top dim.",
                           fn, e->stage, defined_by[h], kname(&e->t), h);
        }
    }

    ck_adaptor *a = calloc(1, sizeof *a);
    if (!a)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory.", fn);
    if (ntransforms) {
        a->entries = calloc((size_t)ntransforms, sizeof *a->entries);
        if (!a->entries) {
            free(a);
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory for %d transforms.", fn,
                           ntransforms);
        }
        memcpy(a->entries, entries, sizeof *entries * (size_t)ntransforms);
    }
    a->ntransforms = ntransforms;
    a->nhidden = nhidden;
    a->nbottom = nbottom;
    a->ntop = ntop;
    if (nbottom)
        memcpy(a->bottom, bottom_ids, sizeof(int) * (size_t)nbottom);
    if (ntop)
        memcpy(a->top, top_ids, sizeof(int) * (size_t)ntop);
    /* re-derive every transform from its parameters: a hand-made or corrupted value
     * is refused here instead of dividing by zero later */
    for (int i = 0; i < ntransforms; ++i) {
        ck_transform fixed;
        ck_status vs = ck_transform_bind(&a->entries[i].t, NULL, 0, &fixed);
        if (vs == CK_SUCCESS &&
            (fixed.nup != a->entries[i].t.nup || fixed.nlow != a->entries[i].t.nlow))
            vs = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                         "the transform value is inconsistent (%d upper, %d lower dims where its "
                         "parameters give %d and %d)",
                         a->entries[i].t.nup, a->entries[i].t.nlow, fixed.nup, fixed.nlow);
        if (vs != CK_SUCCESS) {
            int stage = a->entries[i].stage;
            const char *kn = kname(&a->entries[i].t);
            for (int j = 0; j < ntransforms; ++j)
                if (a->entries[j].t.kind == CK_TRANSFORM_INDEXING)
                    a->entries[j].t.table = NULL; /* still borrowed */
            ck_adaptor_destroy(a);
            return ck_fail_context(vs, "%s: stage %d, transform %d (%s)", fn, stage, i, kn);
        }
        a->entries[i].t = fixed;
    }
    /* copy indexing tables first so that destroy can free them on any error */
    for (int i = 0; i < ntransforms; ++i) {
        ck_transform *t = &a->entries[i].t;
        if (t->kind != CK_TRANSFORM_INDEXING)
            continue;
        size_t n = (size_t)t->up_lengths[0].v;
        int64_t *copy = t->table ? malloc(sizeof(int64_t) * n) : NULL;
        if (copy)
            memcpy(copy, t->table, sizeof(int64_t) * n);
        t->table = copy;
        if (!copy) {
            for (int j = i + 1; j < ntransforms; ++j)
                if (a->entries[j].t.kind == CK_TRANSFORM_INDEXING)
                    a->entries[j].t.table = NULL;
            ck_adaptor_destroy(a);
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory copying a gather table.", fn);
        }
    }
    ck_status st = CK_SUCCESS;
    /* lengths of bottom dims */
    for (int i = 0; i < nbottom && !st; ++i) {
        int h = bottom_ids[i];
        if (bottom_lengths) {
            int64_t mn, mx;
            ck_ival_range(bottom_lengths[i], &mn, &mx);
            if (mn < 1)
                st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                             "%s: bottom dim %d has length %lld (at least); lengths must be >= "
                             "1.",
                             fn, i, (long long)mn);
            a->hidden_len[h] = bottom_lengths[i];
        } else if (consumed_by[h] >= 0) {
            const ck_adaptor_entry *e = &a->entries[consumed_by[h]];
            int k = 0;
            while (e->low[k] != h)
                ++k;
            if (e->t.low_fits)
                st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                             "%s: bottom dim %d (hidden id %d) is consumed by transform %d (%s), "
                             "which does not fix its length; pass bottom_lengths.",
                             fn, i, h, consumed_by[h], kname(&e->t));
            a->hidden_len[h] = e->t.low_lengths[k];
        } else {
            st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                         "%s: bottom dim %d (hidden id %d) is not consumed by any transform; "
                         "pass bottom_lengths to give its length.",
                         fn, i, h);
        }
    }
    a->concrete = 1;
    for (int i = 0; i < ntransforms && !st; ++i) {
        const ck_adaptor_entry *e = &a->entries[i];
        for (int k = 0; k < e->t.nlow && !st; ++k)
            st = check_length(fn, e, i, k, e->low[k], a->hidden_len[e->low[k]]);
        for (int k = 0; k < e->t.nup; ++k)
            a->hidden_len[e->up[k]] = e->t.up_lengths[k];
        if (e->stage + 1 > a->nstages)
            a->nstages = e->stage + 1;
        if (!ck_transform_is_concrete(&e->t))
            a->concrete = 0;
    }
    for (int h = 0; h < nhidden; ++h)
        if (!ck_ival_is_const(a->hidden_len[h]))
            a->concrete = 0;
    if (st) {
        ck_adaptor_destroy(a);
        return st;
    }
    *out = a;
    return CK_SUCCESS;
}

ck_status ck_adaptor_create(int ntransforms, const ck_transform *transforms, const int *lower_ids,
                            const int *upper_ids, int nbottom, const int *bottom_ids,
                            const ck_ival *bottom_lengths, int ntop, const int *top_ids,
                            ck_adaptor **out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_adaptor_create");
    *out = NULL;
    if (ntransforms < 0 || ntransforms > 4 * CK_TILE_MAX_HIDDEN)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_adaptor_create: ntransforms = %d; accepted: 0 to %d.", ntransforms,
                       4 * CK_TILE_MAX_HIDDEN);
    if (ntransforms && (!transforms || !lower_ids || !upper_ids))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_adaptor_create: 'transforms', 'lower_ids' or 'upper_ids' is NULL with "
                       "%d transforms.",
                       ntransforms);
    ck_adaptor_entry *e = ntransforms ? calloc((size_t)ntransforms, sizeof *e) : NULL;
    if (ntransforms && !e)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_adaptor_create: out of memory.");
    int lo = 0, up = 0;
    for (int i = 0; i < ntransforms; ++i) {
        e[i].t = transforms[i];
        if (transforms[i].nlow < 0 || transforms[i].nlow > CK_TILE_MAX_TRANSFORM_DIMS ||
            transforms[i].nup < 0 || transforms[i].nup > CK_TILE_MAX_TRANSFORM_DIMS) {
            free(e);
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_adaptor_create: transform %d is not a valid transform; build "
                           "transforms with ck_make_*_transform.",
                           i);
        }
        for (int k = 0; k < transforms[i].nlow; ++k)
            e[i].low[k] = lower_ids[lo++];
        for (int k = 0; k < transforms[i].nup; ++k)
            e[i].up[k] = upper_ids[up++];
    }
    ck_status st = ck_adaptor_create_staged(ntransforms, e, nbottom, bottom_ids, bottom_lengths,
                                            ntop, top_ids, out);
    free(e);
    return st;
}

ck_status ck_adaptor_copy(const ck_adaptor *a, ck_adaptor **out)
{
    CK_REQUIRE_NOT_NULL(a, "ck_adaptor_copy");
    ck_ival bl[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < a->nbottom; ++i)
        bl[i] = a->hidden_len[a->bottom[i]];
    return ck_adaptor_create_staged(a->ntransforms, a->entries, a->nbottom, a->bottom, bl, a->ntop,
                                    a->top, out);
}

/* New top dims from positions: checks that lower_dims consume every current
 * top dim exactly once and upper_dims are a permutation; fills entries. */
static ck_status append_stage(const char *fn, const ck_adaptor *a, int ntransforms,
                              const ck_transform *transforms, const int *lower_dims,
                              const int *upper_dims, ck_adaptor **out)
{
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    if (ntransforms < 1 || !transforms || !lower_dims || !upper_dims)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: a stage needs at least one transform and non-NULL 'transforms', "
                       "'lower_dims', 'upper_dims' (ntransforms = %d).",
                       fn, ntransforms);
    int consumer[CK_TILE_MAX_HIDDEN], producer[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < CK_TILE_MAX_HIDDEN; ++i)
        consumer[i] = producer[i] = -1;
    int nup = 0, lo = 0, stage = a->nstages;
    for (int i = 0; i < ntransforms; ++i) {
        const ck_transform *t = &transforms[i];
        if ((unsigned)t->kind >= CK_TRANSFORM_KIND_COUNT_ || t->nlow < 0 || t->nup < 0 ||
            t->nlow > CK_TILE_MAX_TRANSFORM_DIMS || t->nup > CK_TILE_MAX_TRANSFORM_DIMS)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: stage %d, transform %d is not a valid transform; build "
                           "transforms with ck_make_*_transform.",
                           fn, stage, i);
        for (int k = 0; k < t->nlow; ++k, ++lo) {
            int d = lower_dims[lo];
            if (d < 0 || d >= a->ntop)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): lower dim %d is visible dim %d; "
                               "accepted: 0 to %d.",
                               fn, stage, i, kname(t), k, d, a->ntop - 1);
            if (consumer[d] >= 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): visible dim %d is already "
                               "consumed by transform %d; each dimension is consumed once.",
                               fn, stage, i, kname(t), d, consumer[d]);
            consumer[d] = i;
        }
        nup += t->nup;
    }
    for (int d = 0; d < a->ntop; ++d)
        if (consumer[d] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: stage %d: visible dim %d is consumed by no transform; every "
                           "visible dim must be consumed (keep it with a pass_through).",
                           fn, stage, d);
    if (a->nhidden + nup > CK_TILE_MAX_HIDDEN)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: stage %d would need %d hidden dims; at most %d are supported.", fn,
                       stage, a->nhidden + nup, CK_TILE_MAX_HIDDEN);
    int upos = 0;
    for (int i = 0; i < ntransforms; ++i)
        for (int k = 0; k < transforms[i].nup; ++k, ++upos) {
            int d = upper_dims[upos];
            if (d < 0 || d >= nup || producer[d] >= 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: stage %d, transform %d (%s): upper dim %d is new visible dim "
                               "%d; the upper dims of a stage must be a permutation of 0..%d.",
                               fn, stage, i, kname(&transforms[i]), k, d, nup - 1);
            producer[d] = i;
        }
    ck_adaptor_entry *e = calloc((size_t)(a->ntransforms + ntransforms), sizeof *e);
    if (!e)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory.", fn);
    if (a->ntransforms)
        memcpy(e, a->entries, sizeof *e * (size_t)a->ntransforms);
    lo = upos = 0;
    for (int i = 0; i < ntransforms; ++i) {
        ck_adaptor_entry *x = &e[a->ntransforms + i];
        x->t = transforms[i];
        x->stage = stage;
        for (int k = 0; k < transforms[i].nlow; ++k)
            x->low[k] = a->top[lower_dims[lo++]];
        for (int k = 0; k < transforms[i].nup; ++k)
            x->up[k] = a->nhidden + upper_dims[upos++];
    }
    int top[CK_TILE_MAX_HIDDEN];
    for (int d = 0; d < nup; ++d)
        top[d] = a->nhidden + d;
    ck_ival bl[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < a->nbottom; ++i)
        bl[i] = a->hidden_len[a->bottom[i]];
    ck_status st = ck_adaptor_create_staged(a->ntransforms + ntransforms, e, a->nbottom, a->bottom,
                                            bl, nup, top, out);
    free(e);
    if (st) {
        char *dump = NULL;
        if (ck_get_log_level() >= CK_LOG_DEBUG && ck_adaptor_to_string(a, &dump) == CK_SUCCESS)
            CK_LOG(CK_LOG_DEBUG, "%s: the adaptor being extended:\n%s", fn, dump);
        ck_tile_free(dump);
        char lens[256];
        size_t used = 0;
        lens[0] = '\0';
        for (int i = 0; i < a->ntop && used < sizeof lens; ++i) {
            char one[96];
            ck_ival_print(a->hidden_len[a->top[i]], one, sizeof one);
            used += (size_t)snprintf(lens + used, sizeof lens - used, "%s%s", i ? ", " : "", one);
        }
        return ck_fail_context(st, "%s (visible dims of lengths [%s])", fn, lens);
    }
    return CK_SUCCESS;
}

ck_status ck_adaptor_transform(const ck_adaptor *a, int ntransforms, const ck_transform *transforms,
                               const int *lower_dims, const int *upper_dims, ck_adaptor **out)
{
    return append_stage("ck_adaptor_transform", a, ntransforms, transforms, lower_dims, upper_dims,
                        out);
}

ck_status ck_adaptor_make_single_stage(int nbottom, const ck_ival *bottom_lengths, int ntransforms,
                                       const ck_transform *transforms, const int *lower_dims,
                                       const int *upper_dims, ck_adaptor **out)
{
    const char *fn = "ck_adaptor_make_single_stage";
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    if (nbottom < 1 || nbottom > CK_TILE_MAX_HIDDEN || !bottom_lengths)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: nbottom = %d with bottom_lengths %s; accepted: 1 to %d bottom dims "
                       "with their lengths.",
                       fn, nbottom, bottom_lengths ? "given" : "NULL", CK_TILE_MAX_HIDDEN);
    int ids[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < nbottom; ++i)
        ids[i] = i;
    ck_adaptor *base;
    ck_status st =
        ck_adaptor_create_staged(0, NULL, nbottom, ids, bottom_lengths, nbottom, ids, &base);
    if (st)
        return ck_fail_context(st, "%s", fn);
    st = append_stage(fn, base, ntransforms, transforms, lower_dims, upper_dims, out);
    ck_adaptor_destroy(base);
    return st;
}

ck_status ck_adaptor_make_identity(int n, const ck_ival *lengths, ck_adaptor **out)
{
    int perm[CK_TILE_MAX_HIDDEN];
    if (n < 1 || n > CK_TILE_MAX_HIDDEN / 2)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_adaptor_make_identity: n = %d; accepted: 1 to %d.", n,
                       CK_TILE_MAX_HIDDEN / 2);
    for (int i = 0; i < n; ++i)
        perm[i] = i;
    return ck_adaptor_make_transpose(n, lengths, perm, out);
}

ck_status ck_adaptor_make_transpose(int n, const ck_ival *lengths, const int *perm,
                                    ck_adaptor **out)
{
    const char *fn = "ck_adaptor_make_transpose";
    CK_REQUIRE_NOT_NULL(lengths, fn);
    CK_REQUIRE_NOT_NULL(perm, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    if (n < 1 || n > CK_TILE_MAX_HIDDEN / 2)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: n = %d; accepted: 1 to %d.", fn, n,
                       CK_TILE_MAX_HIDDEN / 2);
    ck_transform t[CK_TILE_MAX_HIDDEN / 2];
    int seen[CK_TILE_MAX_HIDDEN / 2] = {0}, up[CK_TILE_MAX_HIDDEN / 2];
    for (int i = 0; i < n; ++i) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]++)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: perm[%d] = %d; perm must be a permutation of 0..%d.", fn, i,
                           perm[i], n - 1);
        ck_status st = ck_make_pass_through_transform(lengths[perm[i]], &t[i]);
        if (st)
            return ck_fail_context(st, "%s: dim %d", fn, perm[i]);
        up[i] = i;
    }
    return ck_adaptor_make_single_stage(n, lengths, n, t, perm, up, out);
}

ck_status ck_adaptor_chain(const ck_adaptor *lower, const ck_adaptor *upper, ck_adaptor **out)
{
    const char *fn = "ck_adaptor_chain";
    CK_REQUIRE_NOT_NULL(lower, fn);
    CK_REQUIRE_NOT_NULL(upper, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    if (lower->ntop != upper->nbottom)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the lower adaptor has %d top dims but the upper one has %d bottom "
                       "dims; they must match.",
                       fn, lower->ntop, upper->nbottom);
    int map[CK_TILE_MAX_HIDDEN];
    for (int h = 0; h < upper->nhidden; ++h)
        map[h] = -1;
    for (int i = 0; i < upper->nbottom; ++i) {
        ck_ival a = lower->hidden_len[lower->top[i]], b = upper->hidden_len[upper->bottom[i]];
        if (!ck_ival_equal(a, b)) {
            char ab[128], bb[128];
            ck_ival_print(a, ab, sizeof ab);
            ck_ival_print(b, bb, sizeof bb);
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: top dim %d of the lower adaptor has length %s but bottom dim %d "
                           "of the upper adaptor has length %s.",
                           fn, i, ab, i, bb);
        }
        map[upper->bottom[i]] = lower->top[i];
    }
    int next = lower->nhidden;
    for (int h = 0; h < upper->nhidden; ++h)
        if (map[h] < 0)
            map[h] = next++;
    if (next > CK_TILE_MAX_HIDDEN)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the chained adaptor needs %d hidden dims; at most %d are supported.",
                       fn, next, CK_TILE_MAX_HIDDEN);
    int n = lower->ntransforms + upper->ntransforms;
    ck_adaptor_entry *e = n ? calloc((size_t)n, sizeof *e) : NULL;
    if (n && !e)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory.", fn);
    if (lower->ntransforms)
        memcpy(e, lower->entries, sizeof *e * (size_t)lower->ntransforms);
    for (int i = 0; i < upper->ntransforms; ++i) {
        ck_adaptor_entry *x = &e[lower->ntransforms + i];
        *x = upper->entries[i];
        x->stage += lower->nstages;
        for (int k = 0; k < x->t.nlow; ++k)
            x->low[k] = map[x->low[k]];
        for (int k = 0; k < x->t.nup; ++k)
            x->up[k] = map[x->up[k]];
    }
    int top[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < upper->ntop; ++i)
        top[i] = map[upper->top[i]];
    ck_ival bl[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < lower->nbottom; ++i)
        bl[i] = lower->hidden_len[lower->bottom[i]];
    ck_status st =
        ck_adaptor_create_staged(n, e, lower->nbottom, lower->bottom, bl, upper->ntop, top, out);
    free(e);
    return st ? ck_fail_context(st, "%s", fn) : CK_SUCCESS;
}

/* ------------------------------------------------------------ queries */

int ck_adaptor_ntop(const ck_adaptor *a)
{
    return a ? a->ntop : -1;
}
int ck_adaptor_nbottom(const ck_adaptor *a)
{
    return a ? a->nbottom : -1;
}
int ck_adaptor_nhidden(const ck_adaptor *a)
{
    return a ? a->nhidden : -1;
}
int ck_adaptor_ntransforms(const ck_adaptor *a)
{
    return a ? a->ntransforms : -1;
}
int ck_adaptor_nstages(const ck_adaptor *a)
{
    return a ? a->nstages : -1;
}
int ck_adaptor_is_concrete(const ck_adaptor *a)
{
    return a ? a->concrete : 0;
}
int ck_adaptor_top_id(const ck_adaptor *a, int i)
{
    return a && i >= 0 && i < a->ntop ? a->top[i] : -1;
}
int ck_adaptor_bottom_id(const ck_adaptor *a, int i)
{
    return a && i >= 0 && i < a->nbottom ? a->bottom[i] : -1;
}
ck_ival ck_adaptor_hidden_length(const ck_adaptor *a, int h)
{
    return a && h >= 0 && h < a->nhidden ? a->hidden_len[h] : ck_ival_int(0);
}
ck_ival ck_adaptor_top_length(const ck_adaptor *a, int i)
{
    return ck_adaptor_hidden_length(a, ck_adaptor_top_id(a, i));
}
const ck_transform *ck_adaptor_get_transform(const ck_adaptor *a, int i, const int **lower_ids,
                                             const int **upper_ids, int *stage)
{
    if (!a || i < 0 || i >= a->ntransforms)
        return NULL;
    if (lower_ids)
        *lower_ids = a->entries[i].low;
    if (upper_ids)
        *upper_ids = a->entries[i].up;
    if (stage)
        *stage = a->entries[i].stage;
    return &a->entries[i].t;
}

/* ------------------------------------------------------------ computation */

ck_status ck_adaptor_calculate_bottom_index(const ck_adaptor *a, const int64_t *top,
                                            int64_t *bottom)
{
    const char *fn = "ck_adaptor_calculate_bottom_index";
    CK_REQUIRE_NOT_NULL(a, fn);
    ck_coordinate c;
    ck_status st = ck_adaptor_coordinate_make(a, top, &c);
    if (st)
        return st;
    CK_REQUIRE_NOT_NULL(bottom, fn);
    ck_adaptor_coordinate_bottom(a, &c, bottom);
    return CK_SUCCESS;
}

ck_status ck_adaptor_bind(const ck_adaptor *a, const ck_binding *bindings, int nbindings,
                          ck_adaptor **out)
{
    const char *fn = "ck_adaptor_bind";
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    ck_adaptor_entry *e = a->ntransforms ? calloc((size_t)a->ntransforms, sizeof *e) : NULL;
    if (a->ntransforms && !e)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of memory.", fn);
    ck_status st = CK_SUCCESS;
    for (int i = 0; i < a->ntransforms && !st; ++i) {
        e[i] = a->entries[i];
        st = ck_transform_bind(&a->entries[i].t, bindings, nbindings, &e[i].t);
        if (st)
            st = ck_fail_context(st, "%s: stage %d, transform %d (%s)", fn, a->entries[i].stage, i,
                                 kname(&a->entries[i].t));
    }
    ck_ival bl[CK_TILE_MAX_HIDDEN];
    for (int i = 0; i < a->nbottom && !st; ++i)
        st = ck_ival_substitute(a->hidden_len[a->bottom[i]], bindings, nbindings, &bl[i]);
    if (!st)
        st = ck_adaptor_create_staged(a->ntransforms, e, a->nbottom, a->bottom, bl, a->ntop, a->top,
                                      out);
    free(e);
    return st;
}

ck_status ck_adaptor_vector_info(const ck_adaptor *a, const ck_vector_info *bottom,
                                 ck_vector_info *top)
{
    const char *fn = "ck_adaptor_vector_info";
    CK_REQUIRE_NOT_NULL(a, fn);
    CK_REQUIRE_NOT_NULL(top, fn);
    if (a->nbottom && !bottom)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: argument 'bottom' is NULL.", fn);
    ck_vector_info h[CK_TILE_MAX_HIDDEN];
    memset(h, 0, sizeof h);
    for (int i = 0; i < a->nbottom; ++i)
        h[a->bottom[i]] = bottom[i];
    for (int i = 0; i < a->ntransforms; ++i) {
        const ck_adaptor_entry *e = &a->entries[i];
        ck_vector_info lo[CK_TILE_MAX_TRANSFORM_DIMS], up[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int k = 0; k < e->t.nlow; ++k)
            lo[k] = h[e->low[k]];
        ck_transform_upper_vector_info(&e->t, lo, up);
        for (int k = 0; k < e->t.nup; ++k)
            h[e->up[k]] = up[k];
    }
    for (int i = 0; i < a->ntop; ++i)
        top[i] = h[a->top[i]];
    return CK_SUCCESS;
}
