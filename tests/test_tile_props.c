/* Property tests of transforms, adaptors, descriptors and coordinates on many
 * random transform chains, against an independent reference evaluator and
 * brute force. */
#include <stdlib.h>

#include "ck/tile.h"
#include "core/magic_div.h"
#include "test.h"

#define I(x) ck_ival_int(x)

static uint64_t rng;
static int64_t rnd(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(ckt_rand64(&rng) % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------------------- reference */

/* Lower index written independently of the library (digit extraction by
 * repeated subtraction for merge, Horner form for unmerge). */
static void ref_lower(const ck_transform *t, const int64_t *up, int64_t *low)
{
    switch (t->kind) {
    case CK_TRANSFORM_PASS_THROUGH:
    case CK_TRANSFORM_RIGHT_PAD:
        low[0] = up[0];
        break;
    case CK_TRANSFORM_PAD:
    case CK_TRANSFORM_LEFT_PAD:
        low[0] = up[0] - t->p0.v;
        break;
    case CK_TRANSFORM_SLICE:
    case CK_TRANSFORM_OFFSET:
        low[0] = up[0] + t->p0.v;
        break;
    case CK_TRANSFORM_EMBED:
        low[0] = 0;
        for (int i = t->nup - 1; i >= 0; --i)
            low[0] += up[i] * t->coefs[i].v;
        break;
    case CK_TRANSFORM_UNMERGE:
        low[0] = 0;
        for (int i = 0; i < t->nup; ++i)
            low[0] = low[0] * t->up_lengths[i].v + up[i];
        break;
    case CK_TRANSFORM_MERGE: {
        int64_t u = up[0];
        if (u < 0 || u >= t->up_lengths[0].v) { /* out of range: floor semantics */
            for (int i = t->nlow - 1; i > 0; --i) {
                int64_t l = t->coefs[i].v, m = ((u % l) + l) % l;
                low[i] = m;
                u = (u - m) / l;
            }
            low[0] = u;
            break;
        }
        for (int i = 0; i < t->nlow; ++i) {
            int64_t block = 1;
            for (int j = i + 1; j < t->nlow; ++j)
                block *= t->coefs[j].v;
            low[i] = 0;
            while (u >= block && (i == 0 || low[i] < t->coefs[i].v - 1 || 1)) {
                if (u < block)
                    break;
                u -= block;
                ++low[i];
            }
        }
        break;
    }
    case CK_TRANSFORM_FREEZE:
        low[0] = t->p0.v;
        break;
    case CK_TRANSFORM_MODULO:
        low[0] = ((up[0] % t->p0.v) + t->p0.v) % t->p0.v;
        break;
    case CK_TRANSFORM_XOR:
        low[0] = up[0];
        low[1] = up[1] ^ (((up[0] % t->coefs[1].v) + t->coefs[1].v) % t->coefs[1].v);
        break;
    case CK_TRANSFORM_INDEXING: { /* documented: out-of-range gathers read the clamped entry */
        int64_t n = t->up_lengths[0].v, i = up[0];
        low[0] = t->table[i < 0 ? 0 : i >= n ? n - 1 : i];
        break;
    }
    default:
        break;
    }
}

static int ref_valid(const ck_transform *t, int64_t u)
{
    if (t->kind == CK_TRANSFORM_PAD)
        return u >= t->p0.v && u < t->p0.v + t->low_lengths[0].v;
    if (t->kind == CK_TRANSFORM_LEFT_PAD)
        return u >= t->p0.v;
    if (t->kind == CK_TRANSFORM_RIGHT_PAD)
        return u < t->low_lengths[0].v;
    return 1;
}

/* Reference offset and validity of a visible index, through the public accessors. */
static int64_t ref_offset(const ck_descriptor *d, const int64_t *idx, int *valid)
{
    const ck_adaptor *a = ck_descriptor_adaptor(d);
    int64_t h[CK_TILE_MAX_HIDDEN];
    *valid = 1;
    for (int i = 0; i < ck_adaptor_ntop(a); ++i) {
        h[ck_adaptor_top_id(a, i)] = idx[i];
        if (idx[i] < 0 || idx[i] >= ck_adaptor_top_length(a, i).v)
            *valid = 0;
    }
    for (int i = ck_adaptor_ntransforms(a) - 1; i >= 0; --i) {
        const int *lo, *up;
        const ck_transform *t = ck_adaptor_get_transform(a, i, &lo, &up, NULL);
        int64_t u[CK_TILE_MAX_TRANSFORM_DIMS], l[CK_TILE_MAX_TRANSFORM_DIMS];
        for (int k = 0; k < t->nup; ++k)
            u[k] = h[up[k]];
        if (t->nup == 1 && !ref_valid(t, u[0]))
            *valid = 0;
        ref_lower(t, u, l);
        for (int k = 0; k < t->nlow; ++k)
            h[lo[k]] = l[k];
    }
    return h[0];
}

/* ---------------------------------------------------------------- random chains */

static int64_t total_of(const ck_descriptor *d)
{
    int64_t n = 1;
    for (int i = 0; i < ck_descriptor_ndim(d); ++i)
        n *= ck_descriptor_length(d, i).v;
    return n;
}

static int64_t table_storage[64][64];
static int ntables;

/* Apply one random transform; returns the new descriptor or NULL when the
 * chosen transform does not fit (the caller keeps the old one). */
static ck_descriptor *random_stage(const ck_descriptor *d)
{
    int n = ck_descriptor_ndim(d);
    int dim = (int)rnd(0, n - 1);
    int64_t L = ck_descriptor_length(d, dim).v;
    ck_transform t;
    int lows[2] = {dim, dim + 1};
    int at = -1;
    ck_status st = CK_ERROR_INVALID_ARGUMENT;
    switch (rnd(0, 13)) {
    case 0:
        st = ck_make_pad_transform(I(L), I(rnd(0, 3)), I(rnd(0, 3)), &t);
        break;
    case 1:
        st = ck_make_left_pad_transform(I(L), I(rnd(0, 4)), &t);
        break;
    case 2:
        st = ck_make_right_pad_transform(I(L), I(rnd(0, 4)), &t);
        break;
    case 3: { /* unmerge into a factor pair */
        int64_t f = rnd(1, L);
        if (L % f)
            return NULL;
        st = ck_make_unmerge_transform(2, (ck_ival[]){I(L / f), I(f)}, &t);
        break;
    }
    case 4:
    case 5:
        if (n < 2 || dim == n - 1)
            return NULL;
        st = ck_make_merge_transform(2, (ck_ival[]){I(L), ck_descriptor_length(d, dim + 1)}, &t);
        break;
    case 6: {
        int64_t b = rnd(0, L - 1), e = rnd(b + 1, L);
        st = ck_make_slice_transform(I(L), I(b), I(e), &t);
        break;
    }
    case 7: {
        int64_t o = rnd(0, L - 1);
        st = ck_make_offset_transform(I(L - o), I(o), &t);
        break;
    }
    case 8: {
        int64_t m = rnd(1, L);
        st = ck_make_modulo_transform(I(m), I(m * rnd(1, 3)), &t);
        if (m != L) /* modulo's lower length is its modulus: only when it matches */
            return NULL;
        break;
    }
    case 9: {
        if (n < 2 || dim == n - 1)
            return NULL;
        int64_t L1 = ck_descriptor_length(d, dim + 1).v;
        if (L1 & (L1 - 1))
            return NULL;
        st = ck_make_xor_transform(I(L), I(L1), &t);
        break;
    }
    case 10: { /* embed into two dims fitting within L */
        int64_t a = rnd(1, 3), b = rnd(1, 3), c1 = rnd(0, 2), c0 = rnd(0, 4);
        if ((a - 1) * c0 + (b - 1) * c1 + 1 > L)
            return NULL;
        st = ck_make_embed_transform(2, (ck_ival[]){I(a), I(b)}, (ck_ival[]){I(c0), I(c1)}, &t);
        break;
    }
    case 11:
        if (n < 2)
            return NULL;
        st = ck_make_freeze_transform(I(rnd(0, L - 1)), &t);
        break;
    case 12:
        if (rnd(0, 1)) {
            st = ck_make_insert_transform(I(rnd(1, 3)), &t);
        } else {
            st = ck_make_replicate_transform(1, (ck_ival[]){I(rnd(1, 3))}, &t);
        }
        at = (int)rnd(0, n);
        break;
    case 13: {
        if (ntables >= 64)
            return NULL;
        int64_t cnt = rnd(1, 8);
        for (int64_t i = 0; i < cnt; ++i)
            table_storage[ntables][i] = rnd(0, L - 1);
        st = ck_make_indexing_transform(cnt, table_storage[ntables++], I(L), &t);
        break;
    }
    }
    if (st != CK_SUCCESS)
        return NULL;
    ck_descriptor *out = NULL;
    if (ck_descriptor_transform_one(d, &t, lows, at, &out) != CK_SUCCESS)
        return NULL;
    if (total_of(out) > 1500 || ck_descriptor_ndim(out) > 5) {
        ck_descriptor_destroy(out);
        return NULL;
    }
    return out;
}

static ck_descriptor *random_desc(void)
{
    int n = (int)rnd(1, 3);
    ck_ival len[3], str[3];
    for (int i = 0; i < n; ++i) {
        len[i] = I(rnd(1, 6));
        str[i] = I(rnd(0, 9));
    }
    ck_descriptor *d = NULL;
    int kind = (int)rnd(0, 2);
    ck_status st = kind == 0   ? ck_descriptor_make_packed(n, len, &d)
                   : kind == 1 ? ck_descriptor_make_naive(n, len, str, &d)
                               : ck_descriptor_make_aligned(n, len, I(rnd(1, 8)), &d);
    CHECK_OK(st);
    int stages = (int)rnd(1, 4);
    for (int s = 0; s < stages; ++s) {
        for (int tries = 0; tries < 20; ++tries) {
            ck_descriptor *nd = random_stage(d);
            if (nd) {
                ck_descriptor_destroy(d);
                d = nd;
                break;
            }
        }
    }
    return d;
}

/* Visit every index of d's visible space. */
static int next_index(const ck_descriptor *d, int64_t *idx)
{
    for (int i = ck_descriptor_ndim(d) - 1; i >= 0; --i) {
        if (++idx[i] < ck_descriptor_length(d, i).v)
            return 1;
        idx[i] = 0;
    }
    return 0;
}

static void check_vectors(const ck_descriptor *d)
{
    int n = ck_descriptor_ndim(d);
    ck_vector_info vi[CK_TILE_MAX_HIDDEN];
    CHECK_OK(ck_descriptor_vector_info(d, vi));
    for (int dim = 0; dim < n; ++dim) {
        int64_t V = vi[dim].length, L = ck_descriptor_length(d, dim).v;
        CHECK(V >= 1);
        if (V <= 1)
            continue;
        int64_t idx[CK_TILE_MAX_HIDDEN] = {0};
        do {
            if (idx[dim] % V != 0 || idx[dim] + V > L)
                continue;
            int64_t first = 0;
            int v0 = 0;
            for (int64_t k = 0; k < V; ++k) {
                int64_t j[CK_TILE_MAX_HIDDEN];
                for (int i = 0; i < n; ++i)
                    j[i] = idx[i];
                j[dim] += k;
                int valid;
                int64_t o = ref_offset(d, j, &valid);
                if (k == 0) {
                    first = o;
                    v0 = valid;
                }
                CHECK_MSG(valid == v0, "dim %d vector %lld crosses a padding boundary", dim,
                          (long long)V);
                if (v0 && valid && vi[dim].stride_known)
                    CHECK_MSG(o == first + k * vi[dim].stride,
                              "dim %d vector %lld stride %lld: element %lld at %lld, start %lld",
                              dim, (long long)V, (long long)vi[dim].stride, (long long)k,
                              (long long)o, (long long)first);
            }
        } while (next_index(d, idx));
    }
}

/* The symbolic offset with symbols as the visible index, once bound to each
 * index, equals the concrete offset; its conditions decide validity. */
static int nsymbolic_checked;
static void check_symbolic(const ck_descriptor *d, int exact_ranges)
{
    const ck_adaptor *a = ck_descriptor_adaptor(d);
    int n = ck_descriptor_ndim(d), has_gather = 0;
    for (int i = 0; i < ck_adaptor_ntransforms(a); ++i)
        has_gather |=
            ck_adaptor_get_transform(a, i, NULL, NULL, NULL)->kind == CK_TRANSFORM_INDEXING;
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival top[CK_TILE_MAX_HIDDEN], offset;
    char names[CK_TILE_MAX_HIDDEN][16];
    for (int i = 0; i < n; ++i) {
        int64_t L = ck_descriptor_length(d, i).v;
        snprintf(names[i], sizeof names[i], "i%d", i);
        CHECK_OK(ck_expr_symbol(ctx, names[i], exact_ranges ? 0 : -2, exact_ranges ? L - 1 : L + 1,
                                1, &top[i]));
    }
    ck_index_condition conds[32];
    int nc = 0;
    ck_status st = ck_descriptor_calculate_offset_expr(d, top, &offset, conds, 32, &nc);
    if (st == CK_ERROR_UNSUPPORTED && has_gather) {
        ck_expr_arena_destroy(ctx);
        return;
    }
    CHECK_OK(st);
    if (st) {
        ck_expr_arena_destroy(ctx);
        return;
    }
    int64_t idx[CK_TILE_MAX_HIDDEN] = {0};
    ck_binding b[CK_TILE_MAX_HIDDEN];
    do {
        for (int i = 0; i < n; ++i) {
            b[i].name = names[i];
            b[i].value = idx[i];
        }
        int64_t o = 0, want;
        int valid, sym_valid = 1;
        CHECK_OK(ck_ival_eval(offset, b, n, &o));
        CHECK_OK(ck_descriptor_calculate_offset(d, idx, &want));
        CHECK_OK(ck_descriptor_is_valid_index(d, idx, &valid));
        CHECK_EQ_INT(o, want);
        for (int c = 0; c < nc; ++c) {
            int64_t v, lo, hi;
            CHECK_OK(ck_ival_eval(conds[c].value, b, n, &v));
            CHECK_OK(ck_ival_eval(conds[c].lo, b, n, &lo));
            CHECK_OK(ck_ival_eval(conds[c].hi, b, n, &hi));
            sym_valid &= lo <= v && v < hi;
        }
        CHECK_EQ_INT(sym_valid, valid);
        ++nsymbolic_checked;
    } while (next_index(d, idx));
    ck_expr_arena_destroy(ctx);
}

static void test_random_chains(void)
{
    int nvector_claims = 0;
    for (int iter = 0; iter < 400; ++iter) {
        ck_descriptor *d = random_desc();
        if (!d)
            continue;
        int n = ck_descriptor_ndim(d);
        /* every index: offset and validity match the reference evaluator */
        int64_t idx[CK_TILE_MAX_HIDDEN] = {0};
        int bad = 0;
        do {
            int rv, v;
            int64_t ro = ref_offset(d, idx, &rv), o = -1;
            CHECK_OK(ck_descriptor_calculate_offset(d, idx, &o));
            CHECK_OK(ck_descriptor_is_valid_index(d, idx, &v));
            if (o != ro || v != rv)
                ++bad;
        } while (next_index(d, idx));
        CHECK_EQ_INT(bad, 0);
        if (bad) {
            char *s = NULL;
            if (ck_descriptor_to_string(d, &s) == CK_SUCCESS)
                fprintf(stderr, "%s", s);
            ck_tile_free(s);
        }
        /* moving by random steps equals recomputing */
        ck_coordinate c, fresh;
        int64_t cur[CK_TILE_MAX_HIDDEN], step[CK_TILE_MAX_HIDDEN];
        for (int i = 0; i < n; ++i)
            cur[i] = rnd(0, ck_descriptor_length(d, i).v - 1);
        CHECK_OK(ck_coordinate_make(d, cur, &c));
        for (int s = 0; s < 30; ++s) {
            for (int i = 0; i < n; ++i) {
                int64_t L = ck_descriptor_length(d, i).v;
                int64_t target = rnd(0, 9) == 0 ? rnd(-2, L + 1) : rnd(0, L - 1);
                step[i] = rnd(0, 2) ? target - cur[i] : 0;
                cur[i] += step[i];
            }
            CHECK_OK(ck_coordinate_move(d, &c, step));
            CHECK_OK(ck_coordinate_make(d, cur, &fresh));
            int same = c.nhidden == fresh.nhidden;
            for (int h = 0; same && h < c.nhidden; ++h)
                same = c.hidden[h] == fresh.hidden[h];
            CHECK(same);
            CHECK_EQ_INT(ck_coordinate_is_valid(d, &c), ck_coordinate_is_valid(d, &fresh));
        }
        ck_vector_info vi[CK_TILE_MAX_HIDDEN];
        CHECK_OK(ck_descriptor_vector_info(d, vi));
        for (int i = 0; i < n; ++i)
            nvector_claims += vi[i].length > 1;
        check_vectors(d);
        check_symbolic(d, iter % 2);
        ck_descriptor_destroy(d);
    }
    CHECK(nvector_claims > 100);
    printf("symbolic offsets checked: %d\n", nsymbolic_checked);
    CHECK(nsymbolic_checked > 3000); /* the analysis claims something worth checking */
}

static void test_vector_examples(void)
{
    /* row-major 8x12: dim 1 contiguous over the whole row; dim 0 stride 12 */
    ck_descriptor *d = NULL, *p = NULL;
    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(8), I(12)}, &d));
    ck_vector_info vi[2];
    CHECK_OK(ck_descriptor_vector_info(d, vi));
    CHECK_EQ_INT(vi[1].length, 12);
    CHECK_EQ_INT(vi[1].stride, 1);
    CHECK_EQ_INT(vi[0].stride, 12);
    /* pad the columns by (4, 4): vectors of 4 stay safe, 8 would cross the boundary */
    ck_transform t;
    CHECK_OK(ck_make_pad_transform(I(12), I(4), I(4), &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){1}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[1].length, 4);
    CHECK_EQ_INT(vi[1].stride, 1);
    check_vectors(p);
    ck_descriptor_destroy(p);
    /* merge of the two dims of a packed tensor is contiguous as a whole */
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(8), I(12)}, &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){0, 1}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[0].length, 96);
    CHECK_EQ_INT(vi[0].stride, 1);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
    /* naive with a row stride of 10 and 8 columns: merging breaks after 8 */
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(4), I(8)}, (ck_ival[]){I(10), I(1)}, &d));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(4), I(8)}, &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){0, 1}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[0].length, 8);
    check_vectors(p);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
    /* length-1 lower dims of a merge take no part (a trailing one used to hide the
     * contiguity): merge(16, 1) of (stride 1, anything) is contiguous over 16, and
     * merge(4, 1, 8) of a packed 4 x 1 x 8 over 32 */
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(16), I(1)}, (ck_ival[]){I(1), I(16)}, &d));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(16), I(1)}, &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){0, 1}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[0].length, 16);
    CHECK_EQ_INT(vi[0].stride, 1);
    check_vectors(p);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
    CHECK_OK(ck_descriptor_make_packed(3, (ck_ival[]){I(4), I(1), I(8)}, &d));
    CHECK_OK(ck_make_merge_transform(3, (ck_ival[]){I(4), I(1), I(8)}, &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){0, 1, 2}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[0].length, 32);
    CHECK_EQ_INT(vi[0].stride, 1);
    check_vectors(p);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
    /* all lower dims of length 1: no guarantee to give */
    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(1), I(1)}, &d));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(1), I(1)}, &t));
    CHECK_OK(ck_descriptor_transform_one(d, &t, (int[]){0, 1}, -1, &p));
    CHECK_OK(ck_descriptor_vector_info(p, vi));
    CHECK_EQ_INT(vi[0].length, 1);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
}

static void test_merge_unmerge_identity(void)
{
    for (int iter = 0; iter < 200; ++iter) {
        int n = (int)rnd(1, 4);
        ck_ival len[4];
        int64_t total = 1;
        for (int i = 0; i < n; ++i) {
            len[i] = I(rnd(1, 7));
            total *= len[i].v;
        }
        ck_transform um, m;
        CHECK_OK(ck_make_unmerge_transform(n, len, &um));
        CHECK_OK(rnd(0, 1) ? ck_make_merge_transform(n, len, &m)
                           : ck_make_merge_magic_transform(n, len, &m));
        int lo[4] = {0, 1, 2, 3}, up[4] = {0, 1, 2, 3};
        ck_adaptor *a_um = NULL, *a_m = NULL, *ab = NULL, *ba = NULL;
        /* unmerge: 1 bottom -> n top; merge: n bottom -> 1 top */
        CHECK_OK(ck_adaptor_make_single_stage(1, &um.low_lengths[0], 1, &um, lo, up, &a_um));
        CHECK_OK(ck_adaptor_make_single_stage(n, len, 1, &m, lo, up, &a_m));
        /* merge over unmerge: 1 -> 1 identity; unmerge over merge: n -> n identity */
        CHECK_OK(ck_adaptor_chain(a_um, a_m, &ab));
        CHECK_OK(ck_adaptor_chain(a_m, a_um, &ba));
        for (int64_t x = 0; x < total; ++x) {
            int64_t b[4], top[4];
            CHECK_OK(ck_adaptor_calculate_bottom_index(ab, &x, b));
            CHECK_EQ_INT(b[0], x);
            int64_t r = x;
            for (int i = n - 1; i >= 0; --i) {
                top[i] = r % len[i].v;
                r /= len[i].v;
            }
            CHECK_OK(ck_adaptor_calculate_bottom_index(ba, top, b));
            for (int i = 0; i < n; ++i)
                CHECK_EQ_INT(b[i], top[i]);
        }
        ck_adaptor_destroy(a_um);
        ck_adaptor_destroy(a_m);
        ck_adaptor_destroy(ab);
        ck_adaptor_destroy(ba);
    }
}

static void test_pad_validity(void)
{
    for (int iter = 0; iter < 100; ++iter) {
        int64_t L = rnd(1, 9), l = rnd(0, 4), r = rnd(0, 4), s = rnd(1, 5);
        ck_descriptor *base = NULL, *d = NULL;
        CHECK_OK(ck_descriptor_make_naive(1, (ck_ival[]){I(L)}, (ck_ival[]){I(s)}, &base));
        ck_transform t;
        int kind = (int)rnd(0, 2);
        if (kind == 0)
            CHECK_OK(ck_make_pad_transform(I(L), I(l), I(r), &t));
        else if (kind == 1)
            CHECK_OK(ck_make_left_pad_transform(I(L), I(l), &t));
        else
            CHECK_OK(ck_make_right_pad_transform(I(L), I(r), &t));
        CHECK_OK(ck_descriptor_transform_one(base, &t, (int[]){0}, -1, &d));
        int64_t left = kind == 2 ? 0 : l, right = kind == 1 ? 0 : r;
        CHECK_EQ_INT(ck_descriptor_length(d, 0).v, L + left + right);
        for (int64_t u = -2; u < L + left + right + 2; ++u) {
            int valid;
            int64_t o;
            CHECK_OK(ck_descriptor_is_valid_index(d, &u, &valid));
            CHECK_OK(ck_descriptor_calculate_offset(d, &u, &o));
            int in_range = u >= 0 && u < L + left + right;
            CHECK_EQ_INT(valid, in_range && u >= left && u - left < L);
            CHECK_EQ_INT(o, (u - left) * s);
        }
        ck_descriptor_destroy(base);
        ck_descriptor_destroy(d);
    }
}

static void test_magic_division(void)
{
    uint32_t mul, shift;
    /* every divisor up to 3000 with boundary and random dividends */
    for (uint32_t dv = 1; dv <= 3000; ++dv) {
        ck_magic_div_init(dv, &mul, &shift);
        uint32_t ns[] = {0,
                         1,
                         dv - 1,
                         dv,
                         dv + 1,
                         2 * dv - 1,
                         2 * dv,
                         0x7fffffffu,
                         0x7ffffffeu,
                         (0x7fffffffu / dv) * dv,
                         (0x7fffffffu / dv) * dv - 1};
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k)
            CHECK_EQ_INT(ck_magic_div(ns[k], mul, shift), ns[k] / dv);
        for (int k = 0; k < 40; ++k) {
            uint32_t n = (uint32_t)rnd(0, 0x7fffffff);
            CHECK_EQ_INT(ck_magic_div(n, mul, shift), n / dv);
        }
    }
    /* large divisors near powers of two, up to 2^31 */
    for (int p = 12; p <= 31; ++p) {
        for (int64_t delta = -3; delta <= 3; ++delta) {
            int64_t dv = ((int64_t)1 << p) + delta;
            if (dv < 1 || dv > ((int64_t)1 << 31))
                continue;
            ck_magic_div_init((uint32_t)dv, &mul, &shift);
            for (int k = 0; k < 200; ++k) {
                uint32_t n =
                    k < 3 ? (uint32_t)(k == 0 ? 0x7fffffff : dv - k) : (uint32_t)rnd(0, 0x7fffffff);
                if (n > 0x7fffffffu)
                    continue;
                CHECK_EQ_INT(ck_magic_div(n, mul, shift), (uint64_t)n / (uint64_t)dv);
            }
        }
    }
    /* merge: the magic form equals the division form for every index in range */
    for (int iter = 0; iter < 100; ++iter) {
        int n = (int)rnd(1, 4);
        ck_ival len[4];
        int64_t total = 1;
        for (int i = 0; i < n; ++i) {
            len[i] = I(rnd(1, 13));
            total *= len[i].v;
        }
        ck_transform a, b;
        CHECK_OK(ck_make_merge_transform(n, len, &a));
        CHECK_OK(ck_make_merge_magic_transform(n, len, &b));
        for (int64_t u = 0; u < total; ++u) {
            int64_t la[4], lb[4];
            CHECK_OK(ck_transform_calculate_lower_index(&a, &u, la));
            CHECK_OK(ck_transform_calculate_lower_index(&b, &u, lb));
            for (int i = 0; i < n; ++i)
                CHECK_EQ_INT(la[i], lb[i]);
        }
    }
    /* a big merge: (46341, 46340) ~ 2^31 */
    ck_transform a, b;
    ck_ival big[] = {I(46341), I(46340)};
    CHECK_OK(ck_make_merge_transform(2, big, &a));
    CHECK_OK(ck_make_merge_magic_transform(2, big, &b));
    for (int k = 0; k < 20000; ++k) {
        int64_t u = k < 2 ? (k == 0 ? 0 : 46341LL * 46340 - 1) : rnd(0, 46341LL * 46340 - 1);
        int64_t la[2], lb[2];
        CHECK_OK(ck_transform_calculate_lower_index(&a, &u, la));
        CHECK_OK(ck_transform_calculate_lower_index(&b, &u, lb));
        CHECK(la[0] == lb[0] && la[1] == lb[1]);
    }
}

int main(void)
{
    rng = 0x5eed1234abcdULL;
    const char *env = getenv("CK_TEST_SEED");
    if (env)
        rng = strtoull(env, NULL, 0);
    printf("seed 0x%llx (set CK_TEST_SEED to reproduce)\n", (unsigned long long)rng);
    RUN_TEST(test_vector_examples);
    RUN_TEST(test_random_chains);
    RUN_TEST(test_merge_unmerge_identity);
    RUN_TEST(test_pad_validity);
    RUN_TEST(test_magic_division);
    return CK_TEST_REPORT();
}
