/* The textual descriptor form of `ck desc`: parsed descriptors equal the ones
 * built through the API; malformed text gives CK_ERROR_PARSE with a position. */
#include <stdlib.h>

#include "ck/tile.h"
#include "test.h"

#define I(x) ck_ival_int(x)

static int next_index(const ck_descriptor *d, int64_t *idx)
{
    for (int i = ck_descriptor_ndim(d) - 1; i >= 0; --i) {
        if (++idx[i] < ck_descriptor_length(d, i).v)
            return 1;
        idx[i] = 0;
    }
    return 0;
}

/* Same dims, lengths, element space, offsets and validity everywhere. */
static void check_same(const ck_descriptor *a, const ck_descriptor *b)
{
    CHECK(a && b);
    if (!a || !b)
        return;
    CHECK_EQ_INT(ck_descriptor_ndim(a), ck_descriptor_ndim(b));
    if (ck_descriptor_ndim(a) != ck_descriptor_ndim(b))
        return;
    CHECK_EQ_INT(ck_descriptor_element_space_size(a).v, ck_descriptor_element_space_size(b).v);
    for (int i = 0; i < ck_descriptor_ndim(a); ++i)
        CHECK_EQ_INT(ck_descriptor_length(a, i).v, ck_descriptor_length(b, i).v);
    int64_t idx[CK_TILE_MAX_HIDDEN] = {0};
    do {
        int64_t oa, ob;
        int va, vb;
        CHECK_OK(ck_descriptor_calculate_offset(a, idx, &oa));
        CHECK_OK(ck_descriptor_calculate_offset(b, idx, &ob));
        CHECK_OK(ck_descriptor_is_valid_index(a, idx, &va));
        CHECK_OK(ck_descriptor_is_valid_index(b, idx, &vb));
        CHECK_EQ_INT(oa, ob);
        CHECK_EQ_INT(va, vb);
    } while (next_index(a, idx));
}

static void test_parse_matches_api(void)
{
    ck_descriptor *p = NULL, *d = NULL, *t = NULL;
    /* the example */
    CHECK_OK(ck_descriptor_parse(
        "naive(lengths=[4,8], strides=[8,1]) | pad(dim=1, left=1, right=2)", NULL, &p));
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(4), I(8)}, (ck_ival[]){I(8), I(1)}, &d));
    ck_transform tr[3];
    CHECK_OK(ck_make_pass_through_transform(I(4), &tr[0]));
    CHECK_OK(ck_make_pad_transform(I(8), I(1), I(2), &tr[1]));
    CHECK_OK(ck_descriptor_transform(d, 2, tr, (int[]){0, 1}, (int[]){0, 1}, &t));
    check_same(p, t);
    int64_t o;
    int v;
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){1, 2}, &o));
    CHECK_EQ_INT(o, 9);
    CHECK_OK(ck_descriptor_is_valid_index(p, (int64_t[]){1, 0}, &v));
    CHECK_EQ_INT(v, 0);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);

    /* the blog's chain: unmerge, then merge */
    CHECK_OK(ck_descriptor_parse("naive(lengths=[256,128], strides=[128,1]) | unmerge(dim=0, "
                                 "lengths=[4,64]) | merge(dims=[1,2])",
                                 NULL, &p));
    CHECK_EQ_INT(ck_descriptor_length(p, 0).v, 4);
    CHECK_EQ_INT(ck_descriptor_length(p, 1).v, 8192);
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){1, 3 * 128 + 2}, &o));
    CHECK_EQ_INT(o, 8578);
    ck_descriptor_destroy(p);

    /* transpose, slice, offset, xor, embed, freeze, insert, replicate, indexing, modulo */
    const char *texts[] = {
        "packed(lengths=[3,4,5]) | transpose(perm=[2,0,1])",
        "packed(lengths=[6,8]) | slice(dim=0, begin=1, end=5) | offset(dim=1, offset=2)",
        "packed(lengths=[4,8]) | xor(dims=[0,1])",
        "packed(lengths=[20]) | embed(dim=0, lengths=[3,4], coefs=[5,1])",
        "aligned(lengths=[3,5], align=4) | freeze(dim=0, value=2) | insert(length=3, at=0)",
        "packed(lengths=[2,3]) | replicate(lengths=[2,2], at=1) | merge_magic(dims=[0,1])",
        "packed(lengths=[5,2]) | indexing(dim=0, table=[4,0,3]) | modulo(dim=1, length=6)",
        ("packed(lengths=[7]) | left_pad(dim=0, left=2) | right_pad(dim=0, right=3) | "
         "pass_through(dim=0)"),
    };
    int64_t lens[][4] = {{5, 3, 4, 0}, {4, 6, 0, 0}, {4, 8, 0, 0}, {3, 4, 0, 0},
                         {3, 5, 0, 0}, {4, 2, 3, 0}, {3, 6, 0, 0}, {12, 0, 0, 0}};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; ++k) {
        CHECK_OK(ck_descriptor_parse(texts[k], NULL, &p));
        if (!p)
            continue;
        for (int i = 0; i < ck_descriptor_ndim(p); ++i)
            CHECK_EQ_INT(ck_descriptor_length(p, i).v, lens[k][i]);
        ck_descriptor_destroy(p);
    }
    /* spot offsets */
    CHECK_OK(ck_descriptor_parse(texts[0], NULL, &p));
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){4, 2, 3}, &o));
    CHECK_EQ_INT(o, 2 * 20 + 3 * 5 + 4);
    ck_descriptor_destroy(p);
    CHECK_OK(ck_descriptor_parse(texts[1], NULL, &p));
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){0, 0}, &o));
    CHECK_EQ_INT(o, 1 * 8 + 2);
    ck_descriptor_destroy(p);
    CHECK_OK(ck_descriptor_parse(texts[2], NULL, &p));
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){3, 5}, &o));
    CHECK_EQ_INT(o, 3 * 8 + (5 ^ 3));
    ck_descriptor_destroy(p);
    CHECK_OK(ck_descriptor_parse(texts[6], NULL, &p));
    CHECK_OK(ck_descriptor_calculate_offset(p, (int64_t[]){2, 5}, &o));
    CHECK_EQ_INT(o, 3 * 2 + 5 % 2);
    ck_descriptor_destroy(p);
}

static void test_parse_symbols(void)
{
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival M;
    CHECK_OK(ck_expr_symbol(ctx, "M", 4, 4096, 4, &M));
    ck_descriptor *p = NULL, *b = NULL, *n = NULL;
    CHECK_OK(ck_descriptor_parse(
        "naive(lengths=[M, K], strides=[lda, 1]) | "
        "unmerge(dim=0, lengths=[M/4, 4]) | pad(dim=2, left=0, right=(K+7)/8*8-K)",
        ctx, &p));
    CHECK(p && !ck_descriptor_is_concrete(p));
    ck_binding bd[] = {{"M", 32}, {"K", 13}, {"lda", 16}};
    CHECK_OK(ck_descriptor_bind(p, bd, 3, &b));
    CHECK_OK(ck_descriptor_parse("naive(lengths=[32, 13], strides=[16, 1]) | "
                                 "unmerge(dim=0, lengths=[8, 4]) | pad(dim=2, left=0, right=3)",
                                 NULL, &n));
    check_same(b, n);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(b);
    ck_descriptor_destroy(n);
    /* symbols without a context are refused */
    CHECK_STATUS(ck_descriptor_parse("packed(lengths=[N])", NULL, &p), CK_ERROR_PARSE);
    ck_expr_arena_destroy(ctx);
}

static void test_parse_errors(void)
{
    ck_descriptor *p = NULL;
    const char *bad[] = {
        "",
        "naive(lengths=[4,8])",
        "naive(lengths=[4,8], strides=[8])",
        "packed(lengths=[4,8]) | pad(dim=5, left=1, right=1)",
        "packed(lengths=[4,8]) | pad(dim=1, left=1)",
        "packed(lengths=[4,8]) | bogus(dim=1)",
        "packed(lengths=[4,8]) | pad(dim=1, left=1, right=1, extra=2)",
        "packed(lengths=[4,8]) pad(dim=1, left=1, right=1)",
        "packed(lengths=[4,8]) | unmerge(dim=0, lengths=[3,2])",
        "packed(lengths=[4,8]) | merge(dims=[0,0])",
        "packed(lengths=[4,8) ",
        "packed(lengths=[4,0])",
        "packed(lengths=[99999999999999999999])",
        "cube(lengths=[4])",
        "packed(lengths=[4,8]) | transpose(perm=[0])",
        "packed(lengths=[4,6]) | xor(dims=[0,1])",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        ck_status st = ck_descriptor_parse(bad[k], NULL, &p);
        CHECK_MSG(st != CK_SUCCESS && p == NULL, "'%s' was accepted", bad[k]);
        CHECK_MSG(strlen(ck_last_error()) > 20, "'%s': short message %s", bad[k], ck_last_error());
    }
    CHECK_STATUS(ck_descriptor_parse("packed(lengths=[4,8]) | ", NULL, &p), CK_ERROR_PARSE);
    CHECK(strstr(ck_last_error(), "column") != NULL);
    CHECK_STATUS(
        ck_descriptor_parse("packed(lengths=[4,8]) | unmerge(dim=0, lengths=[3,2])", NULL, &p),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "unmerge") && strstr(ck_last_error(), "stage 1"));
    CHECK_STATUS(ck_descriptor_parse(NULL, NULL, &p), CK_ERROR_INVALID_ARGUMENT);
    /* deep nesting is refused, not a stack overflow */
    char deep[3000] = "packed(lengths=[";
    size_t len = strlen(deep);
    for (int i = 0; i < 1000; ++i)
        deep[len++] = '(';
    deep[len++] = '1';
    for (int i = 0; i < 1000; ++i)
        deep[len++] = ')';
    memcpy(deep + len, "])", 3);
    CHECK_STATUS(ck_descriptor_parse(deep, NULL, &p), CK_ERROR_PARSE);
    CHECK(strstr(ck_last_error(), "nested") != NULL);
}

int main(void)
{
    RUN_TEST(test_parse_matches_api);
    RUN_TEST(test_parse_symbols);
    RUN_TEST(test_parse_errors);
    return CK_TEST_REPORT();
}
