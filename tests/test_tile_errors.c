/* Bad input to transforms, adaptors, descriptors and coordinates: a ck_status
 * error with a sentence naming the stage, transform and dimension; never a
 * crash. */
#include <stdlib.h>

#include "ck/tile.h"
#include "test.h"

#define I(x) ck_ival_int(x)

static int mentions(const char *what)
{
    int ok = strstr(ck_last_error(), what) != NULL;
    if (!ok)
        fprintf(stderr, "message lacks \"%s\": %s\n", what, ck_last_error());
    return ok;
}

static void test_transform_arguments(void)
{
    ck_transform t;
    CHECK_STATUS(ck_make_pass_through_transform(I(0), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("length"));
    CHECK_STATUS(ck_make_pass_through_transform(I(-3), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_pass_through_transform(I(4), NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_pad_transform(I(4), I(-1), I(0), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("left"));
    CHECK_STATUS(ck_make_pad_transform(I(4), I(0), I(-2), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("right"));
    CHECK_STATUS(ck_make_embed_transform(2, (ck_ival[]){I(2), I(0)}, (ck_ival[]){I(1), I(1)}, &t),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("lengths[1]"));
    CHECK_STATUS(ck_make_embed_transform(2, (ck_ival[]){I(2), I(3)}, (ck_ival[]){I(1), I(-1)}, &t),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("coefs[1]"));
    CHECK_STATUS(ck_make_embed_transform(0, (ck_ival[]){I(2)}, (ck_ival[]){I(1)}, &t),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_merge_transform(CK_TILE_MAX_TRANSFORM_DIMS + 1, (ck_ival[]){I(2)}, &t),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_merge_transform(2, NULL, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_unmerge_transform(2, (ck_ival[]){I(3), I(0)}, &t),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_merge_transform(2, (ck_ival[]){I(INT64_MAX / 2), I(4)}, &t),
                 CK_ERROR_OVERFLOW);
    CHECK_STATUS(ck_make_merge_magic_transform(2, (ck_ival[]){I(65536), I(65536)}, &t),
                 CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_make_slice_transform(I(8), I(3), I(3), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_slice_transform(I(8), I(2), I(9), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("slice"));
    CHECK_STATUS(ck_make_xor_transform(I(4), I(6), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("power of two"));
    CHECK_STATUS(ck_make_freeze_transform(I(-1), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_offset_transform(I(4), I(-1), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_modulo_transform(I(0), I(4), &t), CK_ERROR_INVALID_ARGUMENT);
    int64_t table[] = {0, 5, 2};
    CHECK_STATUS(ck_make_indexing_transform(3, table, I(4), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("table[1]"));
    CHECK_STATUS(ck_make_indexing_transform(3, NULL, I(4), &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_make_indexing_transform(0, table, I(4), &t), CK_ERROR_INVALID_ARGUMENT);
    /* a symbol that may be 0 is not a length */
    ck_expr_arena *ctx = NULL;
    ck_ival Z;
    CHECK_OK(ck_expr_arena_create(&ctx));
    CHECK_OK(ck_expr_symbol(ctx, "Z", 0, 10, 1, &Z));
    CHECK_STATUS(ck_make_pass_through_transform(Z, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("Z"));
    /* symbolic transforms do not compute indices */
    ck_ival N;
    CHECK_OK(ck_expr_symbol(ctx, "N", 1, 10, 1, &N));
    CHECK_OK(ck_make_pad_transform(N, I(1), I(1), &t));
    int64_t up = 0, low;
    CHECK_STATUS(ck_transform_calculate_lower_index(&t, &up, &low), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_transform_calculate_lower_index(NULL, &up, &low), CK_ERROR_INVALID_ARGUMENT);
    /* hand-made values are refused by the single-transform entry points */
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(3), I(4)}, &t));
    t.coefs[1] = I(0);
    int64_t lows[2];
    up = 5;
    CHECK_STATUS(ck_transform_calculate_lower_index(&t, &up, lows), CK_ERROR_INVALID_ARGUMENT);
    int64_t diff = 1;
    CHECK_STATUS(ck_transform_update_lower_index(&t, &up, &diff, lows, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    t.nup = 100;
    CHECK_STATUS(ck_transform_calculate_lower_index(&t, &up, lows), CK_ERROR_INVALID_ARGUMENT);
    ck_ival iv[2];
    CHECK_STATUS(ck_transform_calculate_lower_expr(&t, iv, iv), CK_ERROR_INVALID_ARGUMENT);
    ck_vector_info vin[2] = {{1, 0, 1}, {1, 0, 1}}, vout[2] = {{7, 7, 7}, {7, 7, 7}};
    ck_transform_upper_vector_info(&t, vin, vout); /* ignored, no write */
    CHECK_EQ_INT(vout[0].length, 7);
    ck_expr_arena_destroy(ctx);
}

static void test_descriptor_errors(void)
{
    ck_descriptor *d = NULL, *o = NULL;
    CHECK_STATUS(ck_descriptor_make_packed(2, (ck_ival[]){I(4), I(0)}, &d),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(d == NULL);
    CHECK_STATUS(ck_descriptor_make_naive(2, (ck_ival[]){I(4), I(4)}, (ck_ival[]){I(-4), I(1)}, &d),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_descriptor_make_naive(0, (ck_ival[]){I(4)}, (ck_ival[]){I(1)}, &d),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_descriptor_make_aligned(2, (ck_ival[]){I(4), I(4)}, I(0), &d),
                 CK_ERROR_INVALID_ARGUMENT);
    /* offsets that would overflow 64 bits */
    int64_t big = (int64_t)1 << 40;
    CHECK_STATUS(
        ck_descriptor_make_naive(2, (ck_ival[]){I(big), I(big)}, (ck_ival[]){I(big), I(1)}, &d),
        CK_ERROR_OVERFLOW);
    CHECK_STATUS(ck_descriptor_make_packed(3, (ck_ival[]){I(big), I(big), I(big)}, &d),
                 CK_ERROR_OVERFLOW);

    CHECK_OK(ck_descriptor_make_packed(2, (ck_ival[]){I(16), I(8)}, &d));
    ck_transform t[3];
    /* lower length differs from the dimension consumed: names stage, transform, dim */
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(3), I(5)}, &t[0]));
    CHECK_OK(ck_make_pass_through_transform(I(8), &t[1]));
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 1}, (int[]){0, 1, 2}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(o == NULL);
    CHECK(mentions("stage 1") && mentions("unmerge") && mentions("length 16") && mentions("15"));
    /* a dimension consumed twice */
    CHECK_OK(ck_make_pass_through_transform(I(16), &t[0]));
    CHECK_OK(ck_make_pass_through_transform(I(16), &t[1]));
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 0}, (int[]){0, 1}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("consumed") && mentions("visible dim 0"));
    /* a dimension never consumed */
    CHECK_STATUS(ck_descriptor_transform(d, 1, t, (int[]){0}, (int[]){0}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("visible dim 1") && mentions("no transform"));
    /* out-of-range dims, upper dims not a permutation */
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 2}, (int[]){0, 1}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_make_pass_through_transform(I(8), &t[1]));
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 1}, (int[]){1, 1}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("permutation"));
    CHECK_STATUS(ck_descriptor_transform(d, 0, t, (int[]){0}, (int[]){0}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_descriptor_transform(NULL, 2, t, (int[]){0, 1}, (int[]){0, 1}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    /* embed reaching past the dimension */
    CHECK_OK(ck_make_embed_transform(2, (ck_ival[]){I(4), I(4)}, (ck_ival[]){I(4), I(2)}, &t[0]));
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 1}, (int[]){0, 1, 2}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("embed"));
    /* a garbage transform value */
    memset(&t[0], 0x7f, sizeof t[0]);
    CHECK_STATUS(ck_descriptor_transform(d, 2, t, (int[]){0, 1}, (int[]){0, 1}, &o),
                 CK_ERROR_INVALID_ARGUMENT);
    /* queries with NULL and bad positions */
    int64_t off;
    CHECK_STATUS(ck_descriptor_calculate_offset(d, NULL, &off), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_descriptor_calculate_offset(d, (int64_t[]){0, 0}, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(ck_descriptor_length(d, 5).v, 0);
    CHECK_EQ_INT(ck_descriptor_ndim(NULL), -1);
    /* out-of-range indices compute without crashing and are invalid */
    int valid = 1;
    CHECK_OK(ck_descriptor_is_valid_index(d, (int64_t[]){INT64_MAX, INT64_MIN}, &valid));
    CHECK_EQ_INT(valid, 0);
    ck_descriptor_destroy(d);
    ck_descriptor_destroy(NULL);
}

static void test_adaptor_errors(void)
{
    ck_adaptor *a = NULL;
    ck_transform pt, um;
    CHECK_OK(ck_make_pass_through_transform(I(4), &pt));
    CHECK_OK(ck_make_unmerge_transform(2, (ck_ival[]){I(2), I(2)}, &um));
    int b0 = 0;
    /* fine: bottom 0 -> pass_through -> 1 */
    CHECK_OK(ck_adaptor_create(1, &pt, (int[]){0}, (int[]){1}, 1, &b0, NULL, 1, (int[]){1}, &a));
    ck_adaptor_destroy(a);
    a = NULL;
    /* a gap in hidden ids */
    CHECK_STATUS(ck_adaptor_create(1, &pt, (int[]){0}, (int[]){2}, 1, &b0, NULL, 1, (int[]){2}, &a),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("hidden id 1"));
    CHECK(a == NULL);
    /* a lower dim nobody defines */
    CHECK_STATUS(ck_adaptor_create(1, &pt, (int[]){3}, (int[]){1}, 1, &b0, NULL, 1, (int[]){1}, &a),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("transform 0") && mentions("pass_through") && mentions("hidden id 3"));
    /* a hidden dim defined twice */
    ck_transform two[2] = {pt, pt};
    CHECK_STATUS(
        ck_adaptor_create(2, two, (int[]){0, 1}, (int[]){1, 1}, 1, &b0, NULL, 1, (int[]){1}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("defined once"));
    /* consumed twice */
    CHECK_STATUS(
        ck_adaptor_create(2, two, (int[]){0, 0}, (int[]){1, 2}, 1, &b0, NULL, 2, (int[]){1, 2}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("already consumed"));
    /* an upper dim neither consumed nor top */
    CHECK_STATUS(
        ck_adaptor_create(1, &um, (int[]){0}, (int[]){1, 2}, 1, &b0, NULL, 1, (int[]){1}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("hidden dim 2") && mentions("unmerge"));
    /* a top dim that is consumed */
    CHECK_STATUS(
        ck_adaptor_create(1, &pt, (int[]){0}, (int[]){1}, 1, &b0, NULL, 2, (int[]){1, 0}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    /* ids out of range, negative */
    CHECK_STATUS(
        ck_adaptor_create(1, &pt, (int[]){0}, (int[]){1000}, 1, &b0, NULL, 1, (int[]){1000}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        ck_adaptor_create(1, &pt, (int[]){-1}, (int[]){1}, 1, &b0, NULL, 1, (int[]){1}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    /* bottom length disagreeing with the consumer */
    ck_ival five = I(5);
    CHECK_STATUS(
        ck_adaptor_create(1, &pt, (int[]){0}, (int[]){1}, 1, &b0, &five, 1, (int[]){1}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("length 5"));
    CHECK_STATUS(
        ck_adaptor_create(1, NULL, (int[]){0}, (int[]){1}, 1, &b0, NULL, 1, (int[]){1}, &a),
        CK_ERROR_INVALID_ARGUMENT);
    /* transpose with a non-permutation, chain with mismatched lengths */
    CHECK_STATUS(ck_adaptor_make_transpose(3, (ck_ival[]){I(2), I(3), I(4)}, (int[]){0, 0, 1}, &a),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("permutation"));
    ck_adaptor *x = NULL, *y = NULL;
    CHECK_OK(ck_adaptor_make_identity(2, (ck_ival[]){I(2), I(3)}, &x));
    CHECK_OK(ck_adaptor_make_identity(2, (ck_ival[]){I(2), I(4)}, &y));
    CHECK_STATUS(ck_adaptor_chain(x, y, &a), CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("length 3") && mentions("length 4"));
    ck_adaptor_destroy(y);
    CHECK_OK(ck_adaptor_make_identity(1, (ck_ival[]){I(2)}, &y));
    CHECK_STATUS(ck_adaptor_chain(x, y, &a), CK_ERROR_INVALID_ARGUMENT);
    /* coordinates from another adaptor */
    ck_coordinate c;
    CHECK_OK(ck_adaptor_coordinate_make(y, (int64_t[]){1}, &c));
    CHECK_STATUS(ck_adaptor_coordinate_move(x, &c, (int64_t[]){1, 1}, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_adaptor_coordinate_move(x, &c, NULL, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_adaptor_calculate_bottom_index(NULL, (int64_t[]){1}, (int64_t[2]){0}),
                 CK_ERROR_INVALID_ARGUMENT);
    ck_adaptor_destroy(x);
    ck_adaptor_destroy(y);
    ck_adaptor_destroy(NULL);
    /* hand-made transform values with nonsense parameters are refused, not divided by */
    ck_transform m;
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(2), I(2)}, &m));
    m.coefs[1] = I(0);
    int bb[2] = {0, 1};
    CHECK_STATUS(ck_adaptor_create(1, &m, bb, (int[]){2}, 2, bb, NULL, 1, (int[]){2}, &a),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(mentions("transform 0") && mentions("merge"));
    CHECK_OK(ck_make_merge_transform(2, (ck_ival[]){I(2), I(2)}, &m));
    m.nup = 3;
    CHECK_STATUS(ck_adaptor_create(1, &m, bb, (int[]){2, 3, 4}, 2, bb, NULL, 1, (int[]){2}, &a),
                 CK_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN_TEST(test_transform_arguments);
    RUN_TEST(test_descriptor_errors);
    RUN_TEST(test_adaptor_errors);
    return CK_TEST_REPORT();
}
