/*
 * Internal structures of adaptors and descriptors (src/core/adaptor.c,
 * descriptor.c, coordinate.c, descriptor_print.c, descriptor_parse.c) and
 * wrapping integer helpers used by the transform formulas.
 */
#ifndef CK_SRC_CORE_TILE_INTERNAL_H
#define CK_SRC_CORE_TILE_INTERNAL_H

#include <stdint.h>

#include "ck/tile.h"

/* Two's-complement wrapping arithmetic: index formulas never invoke undefined
 * behaviour, whatever index a caller passes. */
static inline int64_t ck_wadd(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t ck_wsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t ck_wmul(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* One transform of an adaptor with its hidden ids and the stage that added it. */
typedef struct ck_adaptor_entry {
    ck_transform t;
    int low[CK_TILE_MAX_TRANSFORM_DIMS];
    int up[CK_TILE_MAX_TRANSFORM_DIMS];
    int stage;
} ck_adaptor_entry;

struct ck_adaptor {
    int ntransforms;
    ck_adaptor_entry *entries;
    int nhidden;
    ck_ival hidden_len[CK_TILE_MAX_HIDDEN];
    int nbottom, ntop;
    int bottom[CK_TILE_MAX_HIDDEN];
    int top[CK_TILE_MAX_HIDDEN];
    int nstages;
    int concrete;
};

struct ck_descriptor {
    ck_adaptor *ad;
    ck_ival element_space;
};

/* Index formulas without argument checks (t concrete and valid; arrays of
 * the right sizes): the fast path of coordinates. */
void ck_transform_lower_unchecked(const ck_transform *t, const int64_t *up, int64_t *low);
void ck_transform_update_unchecked(const ck_transform *t, const int64_t *up_old,
                                   const int64_t *up_diff, int64_t *low, int64_t *low_diff);

/* Whether every parameter of t is a known integer. */
int ck_transform_is_concrete(const ck_transform *t);
/* Substitute bindings into every parameter of t (re-running the constructor
 * checks). The table pointer is kept. */
ck_status ck_transform_bind(const ck_transform *t, const ck_binding *b, int nb, ck_transform *out);
/* One line describing t, e.g. "pad(low=8, left=1, right=2)". */
size_t ck_transform_describe(const ck_transform *t, char *buf, size_t size);

/* Adaptor from already validated pieces: stage numbers of entries are kept. */
ck_status ck_adaptor_create_staged(int ntransforms, const ck_adaptor_entry *entries, int nbottom,
                                   const int *bottom_ids, const ck_ival *bottom_lengths, int ntop,
                                   const int *top_ids, ck_adaptor **out);

#endif
