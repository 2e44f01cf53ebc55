/* Worked examples of the CK Tile chapters 7.3-7.19 and the 002 blog, after
 * ERRATA.md's corrections, checked against formulas written out by hand. */
#include <stdlib.h>

#include "ck/tile.h"
#include "test.h"

#define I(x) ck_ival_int(x)

static int64_t off(const ck_descriptor *d, const int64_t *idx)
{
    int64_t o = -12345;
    CHECK_OK(ck_descriptor_calculate_offset(d, idx, &o));
    return o;
}

static void test_naive_packed_aligned(void)
{
    ck_descriptor *d = NULL;
    /* 7.10.2: 3x4 with row stride 8: offset(1,2) = 10; element space 20 (errata, not 24) */
    ck_ival l34[] = {I(3), I(4)}, s81[] = {I(8), I(1)};
    CHECK_OK(ck_descriptor_make_naive(2, l34, s81, &d));
    CHECK_EQ_INT(off(d, (int64_t[]){1, 2}), 10);
    CHECK_EQ_INT(ck_descriptor_element_space_size(d).v, 20);
    CHECK_EQ_INT(ck_descriptor_length(d, 0).v, 3);
    CHECK_EQ_INT(ck_descriptor_length(d, 1).v, 4);
    ck_descriptor_destroy(d);
    /* packed 3x4: strides [4,1], offset(1,2) = 6, element space 12 */
    CHECK_OK(ck_descriptor_make_packed(2, l34, &d));
    CHECK_EQ_INT(off(d, (int64_t[]){1, 2}), 6);
    CHECK_EQ_INT(ck_descriptor_element_space_size(d).v, 12);
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
            CHECK_EQ_INT(off(d, (int64_t[]){i, j}), i * 4 + j);
    ck_descriptor_destroy(d);
    /* aligned 4x5 to 8: row stride 8, element space 1 + 3*8 + 4 = 29 (errata, not 32) */
    ck_ival l45[] = {I(4), I(5)};
    CHECK_OK(ck_descriptor_make_aligned(2, l45, I(8), &d));
    CHECK_EQ_INT(ck_descriptor_element_space_size(d).v, 29);
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 5; ++j)
            CHECK_EQ_INT(off(d, (int64_t[]){i, j}), i * 8 + j);
    ck_descriptor_destroy(d);
}

static void test_layouts_errata(void)
{
    /* 7.4.5 with the errata: col_major(2,1) = 5; row_major(1,2) = transposed(2,1) = 6 */
    ck_descriptor *row = NULL, *col = NULL, *tr = NULL;
    ck_ival l34[] = {I(3), I(4)}, l43[] = {I(4), I(3)};
    CHECK_OK(ck_descriptor_make_packed(2, l34, &row));
    CHECK_OK(ck_descriptor_make_naive(2, l34, (ck_ival[]){I(1), I(3)}, &col));
    CHECK_OK(ck_descriptor_make_naive(2, l43, (ck_ival[]){I(1), I(4)}, &tr));
    CHECK_EQ_INT(off(col, (int64_t[]){2, 1}), 5);
    CHECK_EQ_INT(off(row, (int64_t[]){1, 2}), 6);
    CHECK_EQ_INT(off(tr, (int64_t[]){2, 1}), 6);
    ck_descriptor_destroy(row);
    ck_descriptor_destroy(col);
    ck_descriptor_destroy(tr);
}

static void test_transform_examples(void)
{
    ck_transform t;
    int64_t low[4], up[4];
    /* 7.9.2 merge(4,5): 13 -> (2,3) */
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(4), I(5)}, &t));
    CHECK_EQ_INT(t.up_lengths[0].v, 20);
    up[0] = 13;
    CHECK_OK(ck_transform_calculate_lower_index(&t, up, low));
    CHECK_EQ_INT(low[0], 2);
    CHECK_EQ_INT(low[1], 3);
    /* 7.9.3 unmerge(3,4,2): (1,3,0) -> 14 */
    CHECK_OK(ck_make_unmerge_transform(3, (ck_ival[]){I(3), I(4), I(2)}, &t));
    CHECK_OK(ck_transform_calculate_lower_index(&t, (int64_t[]){1, 3, 0}, low));
    CHECK_EQ_INT(low[0], 14);
    /* 7.9.4 embed (2,3) coefs (12,1): (1,2) -> 14 */
    CHECK_OK(ck_make_embed_transform(2, (ck_ival[]){I(2), I(3)}, (ck_ival[]){I(12), I(1)}, &t));
    CHECK_OK(ck_transform_calculate_lower_index(&t, (int64_t[]){1, 2}, low));
    CHECK_EQ_INT(low[0], 14);
    /* 7.9.5 replicate (3,4): no lower dims */
    CHECK_OK(ck_make_replicate_transform(2, (ck_ival[]){I(3), I(4)}, &t));
    CHECK_EQ_INT(t.nlow, 0);
    CHECK_EQ_INT(t.nup, 2);
    CHECK_OK(ck_transform_calculate_lower_index(&t, (int64_t[]){1, 2}, low));
    /* 7.9.6 offset(48, 16): lower = upper + 16 */
    CHECK_OK(ck_make_offset_transform(I(48), I(16), &t));
    int64_t cases[] = {5, 0, 10, 20, 47};
    for (int i = 0; i < 5; ++i) {
        CHECK_OK(ck_transform_calculate_lower_index(&t, &cases[i], low));
        CHECK_EQ_INT(low[0], cases[i] + 16);
    }
    /* 7.9.7 pass_through(60): 25 -> 25 */
    CHECK_OK(ck_make_pass_through_transform(I(60), &t));
    up[0] = 25;
    CHECK_OK(ck_transform_calculate_lower_index(&t, up, low));
    CHECK_EQ_INT(low[0], 25);
    /* 7.9.8 pad(3, 1, 1): upper 0..4 -> -1..3, valid only 1..3 */
    CHECK_OK(ck_make_pad_transform(I(3), I(1), I(1), &t));
    CHECK_EQ_INT(t.up_lengths[0].v, 5);
    for (int64_t u = 0; u < 5; ++u) {
        CHECK_OK(ck_transform_calculate_lower_index(&t, &u, low));
        CHECK_EQ_INT(low[0], u - 1);
        CHECK_EQ_INT(ck_transform_is_valid_upper_index(&t, &u), u >= 1 && u <= 3);
    }
}

static void test_transpose_adaptor(void)
{
    /* 7.8.3 with the errata: perm [2,0,1], bottom of top [0,1,2] is [1,2,0] */
    ck_adaptor *a = NULL;
    ck_ival len[] = {I(3), I(3), I(3)};
    CHECK_OK(ck_adaptor_make_transpose(3, len, (int[]){2, 0, 1}, &a));
    int64_t b[3];
    CHECK_OK(ck_adaptor_calculate_bottom_index(a, (int64_t[]){0, 1, 2}, b));
    CHECK_EQ_INT(b[0], 1);
    CHECK_EQ_INT(b[1], 2);
    CHECK_EQ_INT(b[2], 0);
    ck_adaptor_destroy(a);
    /* 7.16.3: 2-D transpose, top [2,3] -> bottom [3,2] */
    CHECK_OK(ck_adaptor_make_transpose(2, (ck_ival[]){I(4), I(4)}, (int[]){1, 0}, &a));
    ck_coordinate c;
    CHECK_OK(ck_adaptor_coordinate_make(a, (int64_t[]){2, 3}, &c));
    ck_adaptor_coordinate_bottom(a, &c, b);
    CHECK_EQ_INT(b[0], 3);
    CHECK_EQ_INT(b[1], 2);
    ck_adaptor_destroy(a);
    /* the descriptor form of 7.8.3: transform_tensor_descriptor with pass-throughs */
    ck_descriptor *d = NULL, *t = NULL;
    ck_ival l[] = {I(2), I(3), I(4)};
    CHECK_OK(ck_descriptor_make_packed(3, l, &d));
    ck_transform pt[3];
    CHECK_OK(ck_make_pass_through_transform(I(4), &pt[0]));
    CHECK_OK(ck_make_pass_through_transform(I(2), &pt[1]));
    CHECK_OK(ck_make_pass_through_transform(I(3), &pt[2]));
    CHECK_OK(ck_descriptor_transform(d, 3, pt, (int[]){2, 0, 1}, (int[]){0, 1, 2}, &t));
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 2; ++j)
            for (int64_t k = 0; k < 3; ++k)
                CHECK_EQ_INT(off(t, (int64_t[]){i, j, k}), j * 12 + k * 4 + i);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);
}

static void test_reshape_examples(void)
{
    /* 7.10.4: [2,6] -> [2,2,3] (pass_through + unmerge) */
    ck_descriptor *d = NULL, *t = NULL;
    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(2), I(6)}, &d));
    ck_transform tr[2];
    CHECK_OK(ck_make_pass_through_transform(I(2), &tr[0]));
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(2), I(3)}, &tr[1]));
    CHECK_OK(ck_descriptor_transform(d, 2, tr, (int[]){0, 1}, (int[]){0, 1, 2}, &t));
    CHECK_EQ_INT(ck_descriptor_ndim(t), 3);
    CHECK_EQ_INT(ck_adaptor_nstages(ck_descriptor_adaptor(t)), 2);
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
            for (int64_t k = 0; k < 3; ++k)
                CHECK_EQ_INT(off(t, (int64_t[]){i, j, k}), i * 6 + j * 3 + k);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);

    /* 7.10.5: 5-D block [64,4,2,64,4] -> [64, 8, 256] with two merges */
    ck_ival l5[] = {I(64), I(4), I(2), I(64), I(4)};
    CHECK_OK(ck_descriptor_make_packed(5, l5, &d));
    ck_transform m[3];
    CHECK_OK(ck_make_pass_through_transform(I(64), &m[0]));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(4), I(2)}, &m[1]));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(64), I(4)}, &m[2]));
    CHECK_OK(ck_descriptor_transform(d, 3, m, (int[]){0, 1, 2, 3, 4}, (int[]){0, 1, 2}, &t));
    CHECK_EQ_INT(ck_descriptor_length(t, 0).v, 64);
    CHECK_EQ_INT(ck_descriptor_length(t, 1).v, 8);
    CHECK_EQ_INT(ck_descriptor_length(t, 2).v, 256);
    for (int64_t a = 0; a < 64; a += 7)
        for (int64_t b = 0; b < 8; ++b)
            for (int64_t c = 0; c < 256; c += 5)
                CHECK_EQ_INT(off(t, (int64_t[]){a, b, c}),
                             (((a * 4 + b / 2) * 2 + b % 2) * 64 + c / 4) * 4 + c % 4);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);

    /* 7.8.5: merge then unmerge (2,3) is the identity */
    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(2), I(3)}, &d));
    ck_descriptor *m1 = NULL, *m2 = NULL;
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(2), I(3)}, &tr[0]));
    CHECK_OK(ck_descriptor_transform(d, 1, tr, (int[]){0, 1}, (int[]){0}, &m1));
    CHECK_EQ_INT(off(m1, (int64_t[]){5}), 5); /* row 1, col 2 */
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(2), I(3)}, &tr[0]));
    CHECK_OK(ck_descriptor_transform(m1, 1, tr, (int[]){0}, (int[]){0, 1}, &m2));
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
            CHECK_EQ_INT(off(m2, (int64_t[]){i, j}), i * 3 + j);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(m1);
    ck_descriptor_destroy(m2);

    /* 7.8.6: transposed (3,4) strides (1,3), padded 3 -> 5 on dim 0:
     * padded (1,2) -> unpadded (0,2) -> offset 0*1 + 2*3 = 6 */
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(3), I(4)}, (ck_ival[]){I(1), I(3)}, &d));
    CHECK_OK(ck_make_pad_transform(I(3), I(1), I(1), &tr[0]));
    CHECK_OK(ck_make_pad_transform(I(4), I(0), I(0), &tr[1]));
    CHECK_OK(ck_descriptor_transform(d, 2, tr, (int[]){0, 1}, (int[]){0, 1}, &t));
    CHECK_EQ_INT(ck_descriptor_length(t, 0).v, 5);
    CHECK_EQ_INT(off(t, (int64_t[]){1, 2}), 6);
    int valid = -1;
    CHECK_OK(ck_descriptor_is_valid_index(t, (int64_t[]){0, 2}, &valid));
    CHECK_EQ_INT(valid, 0);
    CHECK_OK(ck_descriptor_is_valid_index(t, (int64_t[]){3, 3}, &valid));
    CHECK_EQ_INT(valid, 1);
    CHECK_OK(ck_descriptor_is_valid_index(t, (int64_t[]){4, 0}, &valid));
    CHECK_EQ_INT(valid, 0);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);
}

static void test_blog_002(void)
{
    /* (256,128) strides (128,1); unmerge dim 0 into (4,64): offset(1,3,2) = 8578,
     * hidden index 8578, 67, 2, 1, 3, 2 */
    ck_descriptor *d = NULL, *t = NULL, *t2 = NULL;
    CHECK_OK(
        ck_descriptor_make_naive(2, (ck_ival[]){I(256), I(128)}, (ck_ival[]){I(128), I(1)}, &d));
    ck_transform tr[2];
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(4), I(64)}, &tr[0]));
    int64_t low;
    CHECK_OK(ck_transform_calculate_lower_index(&tr[0], (int64_t[]){1, 3}, &low));
    CHECK_EQ_INT(low, 67);
    CHECK_OK(ck_make_pass_through_transform(I(128), &tr[1]));
    CHECK_OK(ck_descriptor_transform(d, 2, tr, (int[]){0, 1}, (int[]){0, 1, 2}, &t));
    CHECK_EQ_INT(ck_descriptor_length(t, 0).v, 4);
    CHECK_EQ_INT(ck_descriptor_length(t, 1).v, 64);
    CHECK_EQ_INT(ck_descriptor_length(t, 2).v, 128);
    CHECK_EQ_INT(off(t, (int64_t[]){1, 3, 2}), 8578);
    ck_coordinate c;
    CHECK_OK(ck_coordinate_make(t, (int64_t[]){1, 3, 2}, &c));
    int64_t want[] = {8578, 67, 2, 1, 3, 2};
    CHECK_EQ_INT(c.nhidden, 6);
    for (int i = 0; i < 6; ++i)
        CHECK_EQ_INT(c.hidden[i], want[i]);
    /* then merge (64,128): lengths (4, 8192) */
    CHECK_OK(ck_make_pass_through_transform(I(4), &tr[0]));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(64), I(128)}, &tr[1]));
    CHECK_OK(ck_descriptor_transform(t, 2, tr, (int[]){0, 1, 2}, (int[]){0, 1}, &t2));
    CHECK_EQ_INT(ck_descriptor_length(t2, 0).v, 4);
    CHECK_EQ_INT(ck_descriptor_length(t2, 1).v, 8192);
    CHECK_EQ_INT(off(t2, (int64_t[]){3, 8191}), 3 * 64 * 128 + 8191);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(t);
    ck_descriptor_destroy(t2);

    /* the blog's 4x4 in-register transpose: a packed 4x4 and its transposed view;
     * the swaps are (4,1), (8,2), (9,6), (12,3), (13,7), (14,11) (errata: not (9,5)) */
    ck_descriptor *p = NULL, *pt = NULL;
    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(4), I(4)}, &p));
    CHECK_OK(ck_make_pass_through_transform(I(4), &tr[0]));
    CHECK_OK(ck_make_pass_through_transform(I(4), &tr[1]));
    CHECK_OK(ck_descriptor_transform(p, 2, tr, (int[]){1, 0}, (int[]){0, 1}, &pt));
    int64_t swaps[6][2] = {{4, 1}, {8, 2}, {9, 6}, {12, 3}, {13, 7}, {14, 11}};
    int n = 0;
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < i; ++j) {
            int64_t a = off(p, (int64_t[]){i, j}), b = off(pt, (int64_t[]){i, j});
            CHECK(n < 6 && swaps[n][0] == a && swaps[n][1] == b);
            ++n;
        }
    CHECK_EQ_INT(n, 6);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(pt);
}

static void test_coordinate_examples(void)
{
    /* 7.16.2: 4x3 strides (3,1) at (2,1): offset 7; the walk of 7.16.4 */
    ck_descriptor *d = NULL;
    CHECK_OK(ck_descriptor_make_naive(2, (ck_ival[]){I(4), I(3)}, (ck_ival[]){I(3), I(1)}, &d));
    ck_coordinate c;
    CHECK_OK(ck_coordinate_make(d, (int64_t[]){2, 1}, &c));
    CHECK_EQ_INT(ck_coordinate_offset(&c), 7);
    CHECK(ck_coordinate_is_valid(d, &c));
    CHECK_OK(ck_coordinate_move(d, &c, (int64_t[]){0, 1}));
    CHECK_EQ_INT(ck_coordinate_offset(&c), 8);
    CHECK_OK(ck_coordinate_move(d, &c, (int64_t[]){0, 1}));
    CHECK(!ck_coordinate_is_valid(d, &c)); /* column 3 of 3 */
    CHECK_OK(ck_coordinate_move(d, &c, (int64_t[]){1, -3}));
    CHECK_EQ_INT(ck_coordinate_offset(&c), 9);
    CHECK(ck_coordinate_is_valid(d, &c));
    ck_descriptor_destroy(d);
}

static void test_distribution_style_adaptor(void)
{
    /* The construction documented at the top of ck/tile.h: X0 = 8 split (2,4),
     * X1 = 6 split (3,2), R = 2 replicated, P0 = merge(R, H00); top (P0, H01, H10, H11). */
    ck_transform t[4];
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(2), I(4)}, &t[0]));
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(3), I(2)}, &t[1]));
    CHECK_OK(ck_make_replicate_transform(1, (ck_ival[]){I(2)}, &t[2]));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(2), I(2)}, &t[3]));
    int lower[] = {0, 1, 6, 2}; /* unmerge X0 | unmerge X1 | (none) | merge(R, H00) */
    int upper[] = {2, 3, 4, 5, 6, 7};
    int bottom[] = {0, 1}, top[] = {7, 3, 4, 5};
    ck_adaptor *a = NULL;
    CHECK_OK(ck_adaptor_create(4, t, lower, upper, 2, bottom, NULL, 4, top, &a));
    CHECK_EQ_INT(ck_adaptor_nhidden(a), 8);
    CHECK_EQ_INT(ck_adaptor_top_length(a, 0).v, 4);
    CHECK_EQ_INT(ck_adaptor_hidden_length(a, 0).v, 8);
    CHECK_EQ_INT(ck_adaptor_hidden_length(a, 1).v, 6);
    ck_coordinate c;
    int64_t prev[4] = {0, 0, 0, 0};
    CHECK_OK(ck_adaptor_coordinate_make(a, prev, &c));
    for (int64_t p = 0; p < 4; ++p)
        for (int64_t y0 = 0; y0 < 4; ++y0)
            for (int64_t y1 = 0; y1 < 3; ++y1)
                for (int64_t y2 = 0; y2 < 2; ++y2) {
                    int64_t tp[4] = {p, y0, y1, y2}, b[2], step[4], bd[2];
                    CHECK_OK(ck_adaptor_calculate_bottom_index(a, tp, b));
                    CHECK_EQ_INT(b[0], (p % 2) * 4 + y0); /* R = p / 2 is broadcast */
                    CHECK_EQ_INT(b[1], y1 * 2 + y2);
                    int64_t before[2];
                    ck_adaptor_coordinate_bottom(a, &c, before);
                    for (int i = 0; i < 4; ++i)
                        step[i] = tp[i] - prev[i], prev[i] = tp[i];
                    CHECK_OK(ck_adaptor_coordinate_move(a, &c, step, bd));
                    ck_adaptor_coordinate_bottom(a, &c, b);
                    CHECK_EQ_INT(b[0], (p % 2) * 4 + y0);
                    CHECK_EQ_INT(bd[0], b[0] - before[0]);
                    CHECK_EQ_INT(bd[1], b[1] - before[1]);
                }
    char *s = NULL;
    CHECK_OK(ck_adaptor_to_string(a, &s));
    CHECK(s && strstr(s, "replicate([2])") &&
          strstr(s, "merge([2, 2])  lower [h6, h2] -> upper [h7]"));
    ck_tile_free(s);
    ck_adaptor_destroy(a);
}

int main(void)
{
    RUN_TEST(test_naive_packed_aligned);
    RUN_TEST(test_layouts_errata);
    RUN_TEST(test_transform_examples);
    RUN_TEST(test_transpose_adaptor);
    RUN_TEST(test_reshape_examples);
    RUN_TEST(test_blog_002);
    RUN_TEST(test_coordinate_examples);
    RUN_TEST(test_distribution_style_adaptor);
    return CK_TEST_REPORT();
}
