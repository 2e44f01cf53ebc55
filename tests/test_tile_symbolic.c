/* Symbolic sizes: expression folding and canonicalisation checked against
 * direct evaluation of random expression trees; descriptors over symbols
 * evaluate, once bound, to the offsets of descriptors built from numbers. */
#include <stdlib.h>

#include "ck/tile.h"
#include "test.h"

#define I(x) ck_ival_int(x)

static uint64_t rng;
static int64_t rnd(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(ckt_rand64(&rng) % (uint64_t)(hi - lo + 1));
}

static int64_t ref_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static void test_expr_basics(void)
{
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival M, K, x, y;
    CHECK_OK(ck_expr_symbol(ctx, "M", 1, 4096, 4, &M));
    CHECK_OK(ck_expr_symbol(ctx, "K", 1, 100, 1, &K));
    char buf[256];
    /* (M + 3) + 4 -> M + 7 */
    CHECK_OK(ck_ival_add(M, I(3), &x));
    CHECK_OK(ck_ival_add(x, I(4), &y));
    ck_ival_print(y, buf, sizeof buf);
    CHECK_EQ_STR(buf, "M + 7");
    /* M - 2 prints as a subtraction */
    CHECK_OK(ck_ival_sub(M, I(2), &x));
    ck_ival_print(x, buf, sizeof buf);
    CHECK_EQ_STR(buf, "M - 2");
    /* M * 1 -> M, M * 0 -> 0, M - M -> 0 */
    CHECK_OK(ck_ival_mul(M, I(1), &x));
    CHECK(ck_ival_equal(x, M));
    CHECK_OK(ck_ival_mul(I(0), M, &x));
    CHECK(ck_ival_is_const(x) && x.v == 0);
    CHECK_OK(ck_ival_sub(M, M, &x));
    CHECK(ck_ival_is_const(x) && x.v == 0);
    /* (M * 8) / 4 -> M * 2 ; (M / 4) * 4 -> M since M is a multiple of 4 */
    CHECK_OK(ck_ival_mul(M, I(8), &x));
    CHECK_OK(ck_ival_floordiv(x, I(4), &y));
    ck_ival_print(y, buf, sizeof buf);
    CHECK_EQ_STR(buf, "M * 2");
    CHECK_OK(ck_ival_floordiv(M, I(4), &x));
    CHECK_EQ_INT(ck_ival_divisor(x), 1);
    CHECK_OK(ck_ival_mul(x, I(4), &y));
    CHECK(ck_ival_equal(y, M));
    /* (K / 4) * 4 stays (K is not known divisible) */
    CHECK_OK(ck_ival_floordiv(K, I(4), &x));
    CHECK_OK(ck_ival_mul(x, I(4), &y));
    CHECK(!ck_ival_equal(y, K));
    ck_ival_print(y, buf, sizeof buf);
    CHECK_EQ_STR(buf, "(K / 4) * 4");
    /* M mod 4 -> 0; K mod 128 -> K (range) ; min/max decided by ranges */
    CHECK_OK(ck_ival_mod(M, I(4), &x));
    CHECK(ck_ival_is_const(x) && x.v == 0);
    CHECK_OK(ck_ival_mod(K, I(128), &x));
    CHECK(ck_ival_equal(x, K));
    CHECK_OK(ck_ival_min(K, I(200), &x));
    CHECK(ck_ival_equal(x, K));
    CHECK_OK(ck_ival_max(K, I(0), &x));
    CHECK(ck_ival_equal(x, K));
    CHECK_OK(ck_ival_min(K, I(50), &x));
    ck_ival_print(x, buf, sizeof buf);
    CHECK_EQ_STR(buf, "CK_MIN(K, 50)");
    /* floor semantics and C printing of possibly negative divisions */
    CHECK_OK(ck_ival_sub(K, I(10), &x));
    CHECK_OK(ck_ival_floordiv(x, I(4), &y));
    ck_ival_print(y, buf, sizeof buf);
    CHECK_EQ_STR(buf, "CK_FLOORDIV(K - 10, 4)");
    int64_t v;
    ck_binding b[] = {{"K", 3}, {"M", 8}};
    CHECK_OK(ck_ival_eval(y, b, 2, &v));
    CHECK_EQ_INT(v, -2);
    CHECK_OK(ck_ival_mod(x, I(4), &y));
    CHECK_OK(ck_ival_eval(y, b, 2, &v));
    CHECK_EQ_INT(v, 1);
    /* round-up padding ((K + 7) / 8) * 8 - K is known non-negative and exact */
    CHECK_OK(ck_ival_add(K, I(7), &x));
    CHECK_OK(ck_ival_floordiv(x, I(8), &y));
    CHECK_OK(ck_ival_mul(y, I(8), &y));
    CHECK_OK(ck_ival_sub(y, K, &x));
    int64_t mn, mx;
    ck_ival_range(x, &mn, &mx);
    CHECK(mn >= 0 && mx <= 7);
    for (int64_t k = 1; k <= 100; ++k) {
        ck_binding kb[] = {{"K", k}};
        int64_t r;
        CHECK_OK(ck_ival_eval(x, kb, 1, &r));
        CHECK_EQ_INT(r, (k + 7) / 8 * 8 - k);
    }
    /* constant folding with overflow */
    CHECK_STATUS(ck_ival_mul(I(INT64_MAX), I(2), &x), CK_ERROR_OVERFLOW);
    CHECK_STATUS(ck_ival_add(I(INT64_MAX), I(1), &x), CK_ERROR_OVERFLOW);
    CHECK_STATUS(ck_ival_floordiv(M, I(0), &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_ival_mod(M, I(0), &x), CK_ERROR_INVALID_ARGUMENT);
    /* evaluation errors */
    CHECK_STATUS(ck_ival_eval(M, NULL, 0, &v), CK_ERROR_NOT_FOUND);
    ck_binding bad[] = {{"M", 6}}; /* not a multiple of 4 */
    CHECK_STATUS(ck_ival_eval(M, bad, 1, &v), CK_ERROR_INVALID_ARGUMENT);
    ck_binding big[] = {{"M", 8192}}; /* above the range */
    CHECK_STATUS(ck_ival_eval(M, big, 1, &v), CK_ERROR_INVALID_ARGUMENT);
    /* symbols: redeclaration, names */
    CHECK_OK(ck_expr_symbol(ctx, "M", 1, 4096, 4, &x));
    CHECK(x.e == M.e);
    CHECK_STATUS(ck_expr_symbol(ctx, "M", 1, 4096, 8, &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_expr_symbol(ctx, "9lives", 1, 2, 1, &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_expr_symbol(ctx, "a b", 1, 2, 1, &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_expr_symbol(ctx, "Z", 5, 2, 1, &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_expr_symbol(ctx, "Z", 1, 2, 0, &x), CK_ERROR_INVALID_ARGUMENT);
    /* expressions from two contexts do not mix */
    ck_expr_arena *other = NULL;
    CHECK_OK(ck_expr_arena_create(&other));
    ck_ival N;
    CHECK_OK(ck_expr_symbol(other, "N", 1, 10, 1, &N));
    CHECK_STATUS(ck_ival_add(M, N, &x), CK_ERROR_INVALID_ARGUMENT);
    ck_expr_arena_destroy(other);
    ck_expr_arena_destroy(ctx);
}

/* A random expression tree evaluated twice: through the builders (with all
 * their folding) and directly on integers. */
typedef struct rnode {
    ck_ival iv;
    int64_t val[8]; /* value under each of the 8 bindings */
} rnode;

static void test_expr_random(void)
{
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    const char *names[3] = {"A", "B", "C"};
    int64_t divs[3] = {1, 4, 6};
    ck_ival sym[3];
    for (int i = 0; i < 3; ++i)
        CHECK_OK(ck_expr_symbol(ctx, names[i], 1, 60, divs[i], &sym[i]));
    ck_binding bind[8][3];
    for (int k = 0; k < 8; ++k)
        for (int i = 0; i < 3; ++i) {
            bind[k][i].name = names[i];
            bind[k][i].value = divs[i] * rnd(1, 60 / divs[i]);
        }
    int checked = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        rnode pool[12];
        int n = 0;
        for (; n < 4; ++n) { /* leaves: symbols and constants */
            if (rnd(0, 2)) {
                int s = (int)rnd(0, 2);
                pool[n].iv = sym[s];
                for (int k = 0; k < 8; ++k)
                    pool[n].val[k] = bind[k][s].value;
            } else {
                int64_t c = rnd(-5, 12);
                pool[n].iv = I(c);
                for (int k = 0; k < 8; ++k)
                    pool[n].val[k] = c;
            }
        }
        for (; n < 12; ++n) {
            rnode *a = &pool[rnd(0, n - 1)], *b = &pool[rnd(0, n - 1)], *r = &pool[n];
            int op = (int)rnd(0, 7);
            int ok = 1;
            for (int k = 0; k < 8 && ok; ++k)
                if ((op == 3 || op == 4) && b->val[k] == 0)
                    ok = 0;
            if ((op == 3 || op == 4) && !ok) {
                op = 0;
            }
            ck_status st;
            switch (op) {
            case 0:
                st = ck_ival_add(a->iv, b->iv, &r->iv);
                break;
            case 1:
                st = ck_ival_sub(a->iv, b->iv, &r->iv);
                break;
            case 2:
                st = ck_ival_mul(a->iv, b->iv, &r->iv);
                break;
            case 3:
                st = ck_ival_floordiv(a->iv, b->iv, &r->iv);
                break;
            case 4:
                st = ck_ival_mod(a->iv, b->iv, &r->iv);
                break;
            case 5:
                st = ck_ival_xor(a->iv, b->iv, &r->iv);
                break;
            case 6:
                st = ck_ival_min(a->iv, b->iv, &r->iv);
                break;
            default:
                st = ck_ival_max(a->iv, b->iv, &r->iv);
                break;
            }
            CHECK_OK(st);
            for (int k = 0; k < 8; ++k) {
                int64_t x = a->val[k], y = b->val[k];
                switch (op) {
                case 0:
                    r->val[k] = x + y;
                    break;
                case 1:
                    r->val[k] = x - y;
                    break;
                case 2:
                    r->val[k] = x * y;
                    break;
                case 3:
                    r->val[k] = ref_floordiv(x, y);
                    break;
                case 4:
                    r->val[k] = x - ref_floordiv(x, y) * y;
                    break;
                case 5:
                    r->val[k] = x ^ y;
                    break;
                case 6:
                    r->val[k] = x < y ? x : y;
                    break;
                default:
                    r->val[k] = x > y ? x : y;
                    break;
                }
            }
        }
        for (int j = 4; j < 12; ++j)
            for (int k = 0; k < 8; ++k) {
                int64_t v = 0, mn, mx;
                CHECK_OK(ck_ival_eval(pool[j].iv, bind[k], 3, &v));
                CHECK_EQ_INT(v, pool[j].val[k]);
                ck_ival_range(pool[j].iv, &mn, &mx);
                CHECK(v >= mn && v <= mx);
                int64_t dv = ck_ival_divisor(pool[j].iv);
                CHECK(dv == 0 ? v == 0 : v % dv == 0);
                ++checked;
            }
    }
    CHECK(checked > 100000);
    ck_expr_arena_destroy(ctx);
}

/* The same construction from ck_ivals: symbols or numbers. */
static ck_descriptor *build(ck_ival M, ck_ival K, ck_ival lda, ck_ival P)
{
    ck_descriptor *d = NULL, *n = NULL;
    ck_transform t;
    ck_ival Mq, Kp, one = I(1);
    if (ck_descriptor_make_naive(2, (ck_ival[]){M, K}, (ck_ival[]){lda, one}, &d))
        return NULL;
    /* pad the columns: [M, K + 1 + P] */
    if (ck_make_pad_transform(K, one, P, &t) ||
        ck_descriptor_transform_one(d, &t, (int[]){1}, -1, &n))
        goto fail;
    ck_descriptor_destroy(d);
    d = n;
    /* split the rows: [M/4, 4, K + 1 + P] */
    if (ck_ival_floordiv(M, I(4), &Mq) || ck_make_unmerge_transform(2, (ck_ival[]){Mq, I(4)}, &t) ||
        ck_descriptor_transform_one(d, &t, (int[]){0}, -1, &n))
        goto fail;
    ck_descriptor_destroy(d);
    d = n;
    /* merge the 4 with the padded columns: [M/4, 4 * (K + 1 + P)] */
    Kp = ck_descriptor_length(d, 2);
    if (ck_make_merge_transform(2, (ck_ival[]){I(4), Kp}, &t) ||
        ck_descriptor_transform_one(d, &t, (int[]){1, 2}, -1, &n))
        goto fail;
    ck_descriptor_destroy(d);
    d = n;
    /* a slice of the rows: [1, M/4) -- and a transposed order */
    if (ck_make_slice_transform(Mq, one, Mq, &t) ||
        ck_descriptor_transform_one(d, &t, (int[]){0}, 1, &n))
        goto fail;
    ck_descriptor_destroy(d);
    return n;
fail:
    ck_descriptor_destroy(d);
    return NULL;
}

static int next_index(const ck_descriptor *d, int64_t *idx)
{
    for (int i = ck_descriptor_ndim(d) - 1; i >= 0; --i) {
        if (++idx[i] < ck_descriptor_length(d, i).v)
            return 1;
        idx[i] = 0;
    }
    return 0;
}

/* Vector claims made on the symbolic descriptor hold, by brute force, on a
 * bound one: aligned runs uniformly valid, offsets in steps of the stride. */
static int check_claims(const ck_descriptor *d, const ck_vector_info *vi)
{
    int n = ck_descriptor_ndim(d), claims = 0;
    for (int dim = 0; dim < n; ++dim) {
        int64_t L = ck_descriptor_length(d, dim).v, V = vi[dim].length ? vi[dim].length : L;
        if (V <= 1)
            continue;
        ++claims;
        int64_t idx[CK_TILE_MAX_HIDDEN] = {0};
        do {
            if (idx[dim] % V || idx[dim] + V > L)
                continue;
            int64_t first = 0, j[CK_TILE_MAX_HIDDEN];
            int v0 = 0;
            for (int64_t k = 0; k < V; ++k) {
                memcpy(j, idx, sizeof(int64_t) * (size_t)n);
                j[dim] += k;
                int64_t o;
                int v;
                CHECK_OK(ck_descriptor_calculate_offset(d, j, &o));
                CHECK_OK(ck_descriptor_is_valid_index(d, j, &v));
                if (k == 0)
                    first = o, v0 = v;
                CHECK_EQ_INT(v, v0);
                if (v && vi[dim].stride_known)
                    CHECK_EQ_INT(o, first + k * vi[dim].stride);
            }
        } while (next_index(d, idx));
    }
    return claims;
}

static void test_symbolic_vectors(void)
{
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival v;
    CHECK_OK(ck_expr_symbol(ctx, "M", 4, 24, 4, &v));
    CHECK_OK(ck_expr_symbol(ctx, "N", 8, 32, 8, &v));
    CHECK_OK(ck_expr_symbol(ctx, "K", 1, 12, 1, &v));
    CHECK_OK(ck_expr_symbol(ctx, "ld", 32, 40, 8, &v));
    const char *texts[] = {
        "naive(lengths=[M, N], strides=[ld, 1]) | pad(dim=1, left=4, right=4)",
        "packed(lengths=[M, N]) | merge(dims=[0, 1])",
        "naive(lengths=[M, N], strides=[ld, 1]) | unmerge(dim=1, lengths=[N/8, 8])",
        "packed(lengths=[M, K]) | right_pad(dim=1, right=(K+3)/4*4-K)",
        "naive(lengths=[M, N], strides=[1, ld]) | transpose(perm=[1, 0]) | merge(dims=[0, 1])",
        "packed(lengths=[K, N]) | slice(dim=1, begin=4, end=N) | pad(dim=0, left=1, right=1)",
    };
    int claims = 0;
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; ++k) {
        ck_descriptor *d = NULL;
        CHECK_OK(ck_descriptor_parse(texts[k], ctx, &d));
        if (!d)
            continue;
        ck_vector_info vi[CK_TILE_MAX_HIDDEN];
        CHECK_OK(ck_descriptor_vector_info(d, vi));
        for (int iter = 0; iter < 6; ++iter) {
            ck_binding b[] = {{"M", 4 * rnd(1, 6)},
                              {"N", 8 * rnd(2, 4)},
                              {"K", rnd(1, 12)},
                              {"ld", 8 * rnd(4, 5)}};
            ck_descriptor *bd = NULL;
            CHECK_OK(ck_descriptor_bind(d, b, 4, &bd));
            if (bd)
                claims += check_claims(bd, vi);
            ck_descriptor_destroy(bd);
        }
        ck_descriptor_destroy(d);
    }
    CHECK(claims >= 30);
    ck_expr_arena_destroy(ctx);
}

static void test_symbolic_descriptors(void)
{
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival M, K, lda, P;
    CHECK_OK(ck_expr_symbol(ctx, "M", 8, 64, 4, &M));
    CHECK_OK(ck_expr_symbol(ctx, "K", 1, 20, 1, &K));
    CHECK_OK(ck_expr_symbol(ctx, "lda", 1, 40, 1, &lda));
    CHECK_OK(ck_expr_symbol(ctx, "P", 0, 3, 1, &P));
    ck_descriptor *sd = build(M, K, lda, P);
    CHECK(sd != NULL);
    if (!sd) {
        fprintf(stderr, "%s\n", ck_last_error());
        ck_expr_arena_destroy(ctx);
        return;
    }
    CHECK(!ck_descriptor_is_concrete(sd));
    char *text = NULL;
    CHECK_OK(ck_descriptor_to_string(sd, &text));
    CHECK(text && strstr(text, "lda") && strstr(text, "M / 4"));
    ck_tile_free(text);
    int64_t o;
    CHECK_STATUS(ck_descriptor_calculate_offset(sd, (int64_t[]){0, 0}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    for (int iter = 0; iter < 60; ++iter) {
        int64_t m = 4 * rnd(2, 16), k = rnd(1, 20), l = rnd(k, 40), p = rnd(0, 3);
        ck_binding b[] = {{"M", m}, {"K", k}, {"lda", l}, {"P", p}};
        ck_descriptor *bd = NULL, *nd = build(I(m), I(k), I(l), I(p));
        CHECK_OK(ck_descriptor_bind(sd, b, 4, &bd));
        CHECK(nd != NULL && bd != NULL);
        if (!nd || !bd) {
            ck_descriptor_destroy(bd);
            ck_descriptor_destroy(nd);
            continue;
        }
        CHECK(ck_descriptor_is_concrete(bd));
        CHECK_EQ_INT(ck_descriptor_ndim(bd), 2);
        CHECK_EQ_INT(ck_descriptor_element_space_size(bd).v,
                     ck_descriptor_element_space_size(nd).v);
        CHECK_EQ_INT(ck_descriptor_element_space_size(nd).v, (m - 1) * l + k);
        int64_t L0 = ck_descriptor_length(nd, 0).v, L1 = ck_descriptor_length(nd, 1).v;
        CHECK_EQ_INT(ck_descriptor_length(bd, 0).v, L0);
        CHECK_EQ_INT(ck_descriptor_length(bd, 1).v, L1);
        CHECK_EQ_INT(L0, 4 * (k + 1 + p));
        CHECK_EQ_INT(L1, m / 4 - 1);
        for (int64_t i = 0; i < L0; ++i)
            for (int64_t j = 0; j < L1; ++j) {
                int64_t idx[2] = {i, j}, ob, on;
                int vb, vn;
                CHECK_OK(ck_descriptor_calculate_offset(bd, idx, &ob));
                CHECK_OK(ck_descriptor_calculate_offset(nd, idx, &on));
                CHECK_OK(ck_descriptor_is_valid_index(bd, idx, &vb));
                CHECK_OK(ck_descriptor_is_valid_index(nd, idx, &vn));
                CHECK_EQ_INT(ob, on);
                CHECK_EQ_INT(vb, vn);
                /* and the direct formula: row 4*(j+1) + i / (k+1+p), column i % (k+1+p) - 1 */
                int64_t row = 4 * (j + 1) + i / (k + 1 + p), col = i % (k + 1 + p) - 1;
                CHECK_EQ_INT(vn, col >= 0 && col < k);
                CHECK_EQ_INT(on, row * l + col);
            }
        ck_descriptor_destroy(bd);
        ck_descriptor_destroy(nd);
    }
    /* the offset as an expression of symbolic indices (what generated code computes) */
    ck_ival row, colv, offs;
    CHECK_OK(ck_expr_symbol(ctx, "row", 0, 1000, 1, &row));
    CHECK_OK(ck_expr_symbol(ctx, "col", 0, 1000, 1, &colv));
    ck_descriptor *nv = NULL;
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){M, K}, (ck_ival[]){lda, I(1)}, &nv));
    int nc = -1;
    CHECK_OK(ck_descriptor_calculate_offset_expr(nv, (ck_ival[]){row, colv}, &offs, NULL, 0, &nc));
    CHECK_EQ_INT(nc, 0);
    char buf[256];
    ck_ival_print(offs, buf, sizeof buf);
    CHECK_EQ_STR(buf, "row * lda + col");
    ck_descriptor_destroy(nv);
    /* alignment of a vector start: divisor of the offset with the column a multiple of 4 */
    ck_ival r4, c4;
    CHECK_OK(ck_expr_symbol(ctx, "r4", 0, 3, 1, &r4));
    CHECK_OK(ck_expr_symbol(ctx, "c4", 0, 7, 4, &c4));
    const int64_t row_strides[] = {8, 12, 7, 6};
    const int64_t aligned_to[] = {4, 4, 1, 2};
    for (int k = 0; k < 4; ++k) {
        ck_descriptor *al = NULL;
        CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(4), I(8)},
                                          (ck_ival[]){I(row_strides[k]), I(1)}, &al));
        CHECK_OK(ck_descriptor_calculate_offset_expr(al, (ck_ival[]){r4, c4}, &offs, NULL, 0, &nc));
        CHECK_EQ_INT(ck_ival_divisor(offs), aligned_to[k]);
        ck_descriptor_destroy(al);
    }
    /* a pad gives a condition; a merge gives floor division and modulo */
    ck_descriptor *pm = NULL;
    CHECK_OK(ck_descriptor_parse("packed(lengths=[4, K]) | pad(dim=1, left=1, right=0) | "
                                 "merge(dims=[0, 1])",
                                 ctx, &pm));
    ck_index_condition cond[2];
    CHECK_OK(ck_descriptor_calculate_offset_expr(pm, &row, &offs, cond, 2, &nc));
    CHECK_EQ_INT(nc, 1);
    ck_ival_print(offs, buf, sizeof buf);
    CHECK_EQ_STR(buf, "(row / (K + 1)) * K + row % (K + 1) - 1");
    ck_ival_print(cond[0].value, buf, sizeof buf);
    CHECK_EQ_STR(buf, "row % (K + 1)");
    CHECK_EQ_INT(cond[0].lo.v, 1);
    ck_ival_print(cond[0].hi, buf, sizeof buf);
    CHECK_EQ_STR(buf, "K + 1");
    CHECK_STATUS(ck_descriptor_calculate_offset_expr(pm, &row, &offs, cond, 0, &nc),
                 CK_ERROR_INVALID_ARGUMENT);
    ck_descriptor_destroy(pm);
    /* binding errors: a missing symbol, a value outside the declared facts */
    ck_descriptor *bd = NULL;
    ck_binding partial[] = {{"M", 8}, {"K", 3}};
    /* a partial binding specialises: the rest stays symbolic */
    CHECK_OK(ck_descriptor_bind(sd, partial, 2, &bd));
    CHECK(bd && !ck_descriptor_is_concrete(bd));
    ck_descriptor_destroy(bd);
    bd = NULL;
    ck_binding wrong[] = {{"M", 10}, {"K", 3}, {"lda", 3}, {"P", 0}};
    CHECK_STATUS(ck_descriptor_bind(sd, wrong, 4, &bd), CK_ERROR_INVALID_ARGUMENT);
    ck_descriptor_destroy(sd);
    ck_expr_arena_destroy(ctx);
}

int main(void)
{
    rng = 0x51b01ULL;
    const char *env = getenv("CK_TEST_SEED");
    if (env)
        rng = strtoull(env, NULL, 0);
    printf("seed 0x%llx (set CK_TEST_SEED to reproduce)\n", (unsigned long long)rng);
    RUN_TEST(test_expr_basics);
    RUN_TEST(test_expr_random);
    RUN_TEST(test_symbolic_descriptors);
    RUN_TEST(test_symbolic_vectors);
    return CK_TEST_REPORT();
}
