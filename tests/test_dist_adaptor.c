/* CK's construction of a distribution as transforms (ps_ys_to_xs adaptor, ys_to_d
 * descriptor), checked on random valid encodings against the direct mixed-radix evaluations
 * ck_dist_calculate_x / ck_dist_ys_to_d, plus the corner cases (unowned R, empty P, no Y). */
#include <stdio.h>
#include <stdlib.h>

#include "ck/tile.h"
#include "dist_random.h"
#include "test.h"

static uint64_t g_seed = 0xad4b7e5d15c0ULL;

/* Compare adaptor and descriptor with the direct evaluations on every (P, Y). Returns the
 * number of mismatches (each one also a failed CHECK). */
static int compare_all(const ck_distribution *d)
{
    ck_adaptor *a = NULL;
    ck_descriptor *yd = NULL;
    int bad = 0;
    CHECK_OK(ck_dist_make_ps_ys_to_xs_adaptor(d, &a));
    CHECK_OK(ck_dist_make_ys_to_d_descriptor(d, &yd));
    if (!a || !yd) {
        ck_adaptor_destroy(a);
        ck_descriptor_destroy(yd);
        return 1;
    }
    const ck_dist_encoding *e = &d->enc;
    CHECK_EQ_INT(ck_adaptor_ntop(a), e->ndim_p + e->ndim_y);
    CHECK_EQ_INT(ck_adaptor_nbottom(a), e->ndim_x);
    for (int p = 0; p < e->ndim_p; ++p)
        CHECK_EQ_INT(ck_adaptor_top_length(a, p).v, d->p_lengths[p]);
    for (int j = 0; j < e->ndim_y; ++j)
        CHECK_EQ_INT(ck_adaptor_top_length(a, e->ndim_p + j).v, d->y_lengths[j]);
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y] = {0}, x[CK_DIST_MAX_X];
    int64_t top[CK_DIST_MAX_P + CK_DIST_MAX_Y], bottom[CK_DIST_MAX_X], off;
    for (long long t = 0; t < d->threads; ++t) {
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            for (int i = 0; i < e->ndim_p; ++i)
                top[i] = p[i];
            for (int j = 0; j < e->ndim_y; ++j)
                top[e->ndim_p + j] = y[j];
            ck_dist_calculate_x(d, p, y, x);
            if (ck_adaptor_calculate_bottom_index(a, top, bottom) != CK_SUCCESS) {
                CHECK(0);
                ++bad;
                continue;
            }
            for (int i = 0; i < e->ndim_x; ++i)
                if (bottom[i] != x[i]) {
                    CHECK_MSG(0, "thread %lld register %lld: adaptor X%d = %lld, direct %d", t, r,
                              i, (long long)bottom[i], x[i]);
                    ++bad;
                }
            long long dd;
            ck_dist_ys_to_d(d, y, &dd);
            int64_t yidx[CK_DIST_MAX_Y] = {0};
            for (int j = 0; j < e->ndim_y; ++j)
                yidx[j] = y[j];
            CHECK_OK(ck_descriptor_calculate_offset(yd, yidx, &off));
            if (off != dd || dd != r) {
                CHECK_MSG(0, "ys_to_d: descriptor %lld, direct %lld, register %lld", (long long)off,
                          dd, r);
                ++bad;
            }
        }
    }
    CHECK_EQ_INT(ck_descriptor_element_space_size(yd).v, d->elements_per_thread);
    ck_adaptor_destroy(a);
    ck_descriptor_destroy(yd);
    return bad;
}

static void test_random(void)
{
    uint64_t s = g_seed;
    int n = 0;
    for (int i = 0; i < 400; ++i) {
        ck_dist_encoding e;
        ck_distribution d;
        dr_encoding(&s, -1, -1, &e);
        if (ck_dist_make(&e, &d) != CK_SUCCESS) {
            CHECK(0);
            continue;
        }
        if (compare_all(&d)) {
            char buf[2048];
            ck_dist_encoding_format(&e, buf, sizeof buf);
            printf("  mismatch for %s\n", buf);
            return;
        }
        ++n;
    }
    CHECK_EQ_INT(n, 400);
}

/* The adaptor is what generation lowers: with the P dims as symbols (thread ids) and Y
 * known, its symbolic bottom index evaluates to ck_dist_calculate_x for every thread. */
static void test_symbolic_p(void)
{
    uint64_t s = g_seed ^ 0x5151;
    int checked = 0;
    for (int i = 0; i < 60; ++i) {
        ck_dist_encoding e;
        ck_distribution d;
        dr_encoding(&s, -1, dr_uniform(&s, 1, 3), &e);
        CHECK_OK(ck_dist_make(&e, &d));
        ck_adaptor *a = NULL;
        ck_expr_arena *ctx = NULL;
        CHECK_OK(ck_dist_make_ps_ys_to_xs_adaptor(&d, &a));
        CHECK_OK(ck_expr_arena_create(&ctx));
        if (!a || !ctx) {
            ck_adaptor_destroy(a);
            ck_expr_arena_destroy(ctx);
            continue;
        }
        ck_ival top[CK_DIST_MAX_P + CK_DIST_MAX_Y], bottom[CK_DIST_MAX_X];
        static const char *const names[] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};
        for (int p = 0; p < e.ndim_p; ++p)
            CHECK_OK(ck_expr_symbol(ctx, names[p], 0, d.p_lengths[p] - 1, 1, &top[p]));
        int y[CK_DIST_MAX_Y], p[CK_DIST_MAX_P], x[CK_DIST_MAX_X];
        long long r = (long long)(ckt_rand64(&s) % (uint64_t)d.elements_per_thread);
        ck_dist_d_to_ys(&d, r, y);
        for (int j = 0; j < e.ndim_y; ++j)
            top[e.ndim_p + j] = ck_ival_int(y[j]);
        int nconds = 0;
        CHECK_OK(ck_adaptor_calculate_bottom_expr(a, top, bottom, NULL, 0, &nconds));
        CHECK_EQ_INT(nconds, 0); /* no padding in a distribution */
        for (long long t = 0; t < d.threads; ++t) {
            ck_binding b[CK_DIST_MAX_P];
            ck_dist_partition_index(&d, t, p);
            for (int k = 0; k < e.ndim_p; ++k)
                b[k].name = names[k], b[k].value = p[k];
            ck_dist_calculate_x(&d, p, y, x);
            for (int k = 0; k < e.ndim_x; ++k) {
                int64_t v = -1;
                CHECK_OK(ck_ival_eval(bottom[k], b, e.ndim_p, &v));
                CHECK_EQ_INT(v, x[k]);
                ++checked;
            }
        }
        ck_adaptor_destroy(a);
        ck_expr_arena_destroy(ctx);
    }
    CHECK(checked > 500);
}

static int parse_make(const char *text, ck_distribution *d)
{
    ck_dist_encoding e;
    if (ck_dist_encoding_parse(text, &e) != CK_SUCCESS)
        return -1;
    return ck_dist_make(&e, d) == CK_SUCCESS ? 0 : 1;
}

/* An unowned length-1 R, an empty P, R owned by P, and no Y at all. */
static void test_corner_cases(void)
{
    ck_distribution d;
    /* CK's 2-D patterns: sequence<1> as R, owned by nobody. */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<1>, tuple<sequence<4, 8>, "
                            "sequence<4, 4>>, tuple<sequence<1>, sequence<1, 2>>, "
                            "tuple<sequence<0>, sequence<1, 0>>, sequence<2>, sequence<1>>",
                            &d),
                 0);
    compare_all(&d);
    /* P1 lists nothing (length 1). */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<4, 2>>, "
                            "tuple<sequence<1>, sequence<>>, tuple<sequence<0>, sequence<>>, "
                            "sequence<1>, sequence<1>>",
                            &d),
                 0);
    CHECK_EQ_INT(d.p_lengths[1], 1);
    compare_all(&d);
    /* Replication: R of 2 merged into P0 with an H component; an unowned R after it. */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<2, 1>, tuple<sequence<2, 4>, "
                            "sequence<8>>, tuple<sequence<0, 1>>, tuple<sequence<0, 0>>, "
                            "sequence<1, 2>, sequence<1, 0>>",
                            &d),
                 0);
    CHECK_EQ_INT(d.replication, 2);
    compare_all(&d);
    /* No Y: every component owned by P; ys_to_d has one register. */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<4>, "
                            "sequence<8>>, tuple<sequence<1, 2>>, tuple<sequence<0, 0>>, "
                            "sequence<>, sequence<>>",
                            &d),
                 0);
    CHECK_EQ_INT(d.enc.ndim_y, 0);
    compare_all(&d);
}

/* §7.5's example: the transforms are unmerge, unmerge, merge, merge (no R), listed bottom up. */
static void test_structure(void)
{
    ck_distribution d;
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>, "
                            "sequence<2, 2>>, tuple<sequence<1>, sequence<2>>, "
                            "tuple<sequence<0>, sequence<0>>, sequence<1, 2>, sequence<1, 1>>",
                            &d),
                 0);
    ck_adaptor *a = NULL;
    CHECK_OK(ck_dist_make_ps_ys_to_xs_adaptor(&d, &a));
    if (!a)
        return;
    static const ck_transform_kind want[] = {CK_TRANSFORM_UNMERGE, CK_TRANSFORM_UNMERGE,
                                             CK_TRANSFORM_MERGE, CK_TRANSFORM_MERGE};
    CHECK_EQ_INT(ck_adaptor_ntransforms(a), 4);
    for (int i = 0; i < 4 && i < ck_adaptor_ntransforms(a); ++i)
        CHECK_EQ_INT(ck_adaptor_get_transform(a, i, NULL, NULL, NULL)->kind, want[i]);
    /* Thread (P0, P1) = (1, 0), Y = (1, 1): X = (2*1 + 1, 2*0 + 1) = (3, 1). */
    int64_t bottom[2];
    CHECK_OK(ck_adaptor_calculate_bottom_index(a, (const int64_t[]){1, 0, 1, 1}, bottom));
    CHECK_EQ_INT(bottom[0], 3);
    CHECK_EQ_INT(bottom[1], 1);
    /* Moving along Y1 by +1 from Y = (1, 0) moves X1 by +1 (coordinate update path). */
    ck_coordinate c;
    int64_t diff[2];
    CHECK_OK(ck_adaptor_coordinate_make(a, (const int64_t[]){1, 1, 1, 0}, &c));
    CHECK_OK(ck_adaptor_coordinate_move(a, &c, (const int64_t[]){0, 0, 0, 1}, diff));
    CHECK_EQ_INT(diff[0], 0);
    CHECK_EQ_INT(diff[1], 1);
    ck_adaptor_coordinate_bottom(a, &c, bottom);
    CHECK_EQ_INT(bottom[0], 3);
    CHECK_EQ_INT(bottom[1], 3);
    ck_adaptor_destroy(a);
}

static void test_bad_input(void)
{
    ck_adaptor *a = (ck_adaptor *)&g_seed;
    ck_descriptor *yd = (ck_descriptor *)&g_seed;
    CHECK_STATUS(ck_dist_make_ps_ys_to_xs_adaptor(NULL, &a), CK_ERROR_INVALID_ARGUMENT);
    CHECK(a == NULL);
    CHECK_STATUS(ck_dist_make_ys_to_d_descriptor(NULL, &yd), CK_ERROR_INVALID_ARGUMENT);
    CHECK(yd == NULL);
    ck_distribution d;
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>>, "
                            "tuple<sequence<1>>, tuple<sequence<0>>, sequence<1>, sequence<1>>",
                            &d),
                 0);
    CHECK_STATUS(ck_dist_make_ps_ys_to_xs_adaptor(&d, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* A hand-corrupted distribution is refused, naming the component. */
    d.enc.y_minor[0] = 0;
    CHECK_STATUS(ck_dist_make_ps_ys_to_xs_adaptor(&d, &a), CK_ERROR_INVALID_ARGUMENT);
    CHECK(a == NULL);
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)g_seed);
    RUN_TEST(test_random);
    RUN_TEST(test_symbolic_p);
    RUN_TEST(test_corner_cases);
    RUN_TEST(test_structure);
    RUN_TEST(test_bad_input);
    return CK_TEST_REPORT();
}
