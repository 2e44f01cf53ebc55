/* Tile distribution encodings: worked examples (after ERRATA), malformed encodings, parsing,
 * and properties on random valid encodings checked against independent evaluations. */
#include <stdlib.h>

#include "ck/distribution.h"
#include "dist_random.h"
#include "test.h"

static uint64_t g_seed = 0x5eed1234abcdULL;

static int parse_make(const char *text, ck_distribution *d)
{
    ck_dist_encoding e;
    if (ck_dist_encoding_parse(text, &e) != CK_SUCCESS)
        return -1;
    return ck_dist_make(&e, d) == CK_SUCCESS ? 0 : 1;
}

/* §7.5's example (ERRATA: the valid form): H [[2,2],[2,2]], P [[1],[2]]/[[0],[0]], Y [1,2]/[1,1].
 */
static void test_example_7_5(void)
{
    ck_distribution d;
    CHECK_EQ_INT(parse_make("ck_tile::tile_distribution_encoding<ck_tile::sequence<>,\n"
                            "  ck_tile::tuple<ck_tile::sequence<2, 2>, ck_tile::sequence<2,2>>,\n"
                            "  tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>,\n"
                            "  sequence<1, 2>, sequence<1, 1>>{};",
                            &d),
                 0);
    CHECK_EQ_INT(d.x_lengths[0], 4);
    CHECK_EQ_INT(d.x_lengths[1], 4);
    CHECK_EQ_INT(d.p_lengths[0], 2);
    CHECK_EQ_INT(d.p_lengths[1], 2);
    CHECK_EQ_INT(d.y_lengths[0], 2);
    CHECK_EQ_INT(d.y_lengths[1], 2);
    CHECK_EQ_INT(d.elements_per_thread, 4);
    CHECK_EQ_INT(d.threads, 4);
    CHECK_EQ_INT(d.replication, 1);
    for (int p0 = 0; p0 < 2; ++p0)
        for (int p1 = 0; p1 < 2; ++p1)
            for (int y0 = 0; y0 < 2; ++y0)
                for (int y1 = 0; y1 < 2; ++y1) {
                    int p[2] = {p0, p1}, y[2] = {y0, y1}, x[2];
                    CHECK_OK(ck_dist_calculate_x(&d, p, y, x));
                    CHECK_EQ_INT(x[0], p0 * 2 + y0);
                    CHECK_EQ_INT(x[1], p1 * 2 + y1);
                }
    ck_dist_spans sp;
    CHECK_OK(ck_dist_get_spans(&d, &sp));
    CHECK_EQ_INT(sp.count[0], 1);
    CHECK_EQ_INT(sp.lengths[0][0], 2);
    CHECK_EQ_INT(sp.y_dim[1][0], 1);
}

/* §7.5.8 / 004's GEMM encoding, pasted with comments: X = ((y0*2 + P0 hi)*8 + P1 hi)*4 + y1. */
static void test_gemm_example(void)
{
    ck_distribution d;
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<\n"
                            "    sequence<>,                              // R: no replication\n"
                            "    tuple<sequence<4, 2, 8, 4>,             // H for M dimension\n"
                            "          sequence<4, 2, 8, 4>>,            // H for N dimension\n"
                            "    tuple<sequence<1, 2>, sequence<1, 2>>,  /* P mappings */\n"
                            "    tuple<sequence<1, 1>, sequence<2, 2>>,  // P minor\n"
                            "    sequence<1, 1, 2, 2>,                   // Y major\n"
                            "    sequence<0, 3, 0, 3>                    // Y minor\n"
                            ">",
                            &d),
                 0);
    CHECK_EQ_INT(d.x_lengths[0], 256);
    CHECK_EQ_INT(d.x_lengths[1], 256);
    CHECK_EQ_INT(d.p_lengths[0], 4);
    CHECK_EQ_INT(d.p_lengths[1], 64);
    CHECK_EQ_INT(d.elements_per_thread, 256); /* ERRATA 000:L8602-8614: not 16 */
    CHECK_EQ_INT(d.tile_elements, 65536);     /* ... and not 4096 per block */
    CHECK_EQ_INT(d.threads, 256);
    /* §7.22.2: thread [0,0] of warp [0,0] starts at (0, 0), thread [0,1] at (0, 4). */
    int p01[2] = {0, 1}, o[2];
    CHECK_OK(ck_dist_thread_origin(&d, p01, o));
    CHECK_EQ_INT(o[0], 0);
    CHECK_EQ_INT(o[1], 4);
    long long bad = 0;
    for (int p0 = 0; p0 < 4; ++p0)
        for (int p1 = 0; p1 < 64; ++p1)
            for (int yi = 0; yi < 256; ++yi) {
                int p[2] = {p0, p1}, y[4] = {yi >> 6, (yi >> 4) & 3, (yi >> 2) & 3, yi & 3}, x[2];
                ck_dist_calculate_x(&d, p, y, x);
                int m = ((y[0] * 2 + p0 / 2) * 8 + p1 / 8) * 4 + y[1];
                int n = ((y[2] * 2 + p0 % 2) * 8 + p1 % 8) * 4 + y[3];
                bad += x[0] != m || x[1] != n;
            }
    CHECK_EQ_INT(bad, 0);
}

/* ERRATA's malformed encodings: rejected with a message naming the component. */
static void test_malformed(void)
{
    static const struct {
        const char *text, *names;
    } cases[] = {
        /* 000:L3475-3500 */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4, 2>, sequence<4, 2>>,"
         "tuple<sequence<1>, sequence<1>>, tuple<sequence<0>, sequence<0>>,"
         "sequence<1, 1>, sequence<1, 1>>",
         "rhs[1][0]"},
        /* 000:L3766-3776 */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4, 8>, sequence<4, 8>>,"
         "tuple<sequence<1, 2>, sequence<1, 2>>, tuple<sequence<0, 0>, sequence<1, 0>>,"
         "sequence<1, 1, 2, 2>, sequence<0, 1, 0, 1>>",
         "rhs[2][0]"},
        /* 000:L3916-3925: ys_to_rhs_major holds Y lengths <2,4> */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>, sequence<4, 4>>,"
         "tuple<sequence<1>, sequence<1>>, tuple<sequence<0>, sequence<0>>,"
         "sequence<2, 4>, sequence<1, 1>>",
         "rhs[1][0]"},
        /* 000:L3927-3935: <4,2> */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4, 4>, sequence<2, 2>>,"
         "tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>,"
         "sequence<4, 2>, sequence<1, 1>>",
         "ys_to_rhs_major[0] = 4"},
        /* 000:L8407-8427 (template names replaced by numbers) */
        {"tile_distribution_encoding<Sequence<>, Tuple<Sequence<2, 4>, Sequence<2, 4>>,"
         "Tuple<Sequence<1, 2>, Sequence<>>, Tuple<Sequence<1, 0>, Sequence<>>,"
         "Sequence<1, 1, 2, 2>, Sequence<0, 1, 0, 1>>",
         "rhs[1][1]"},
        /* 000:L8817-8826 */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4, 2>, sequence<4, 2>>,"
         "tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>,"
         "sequence<1, 2>, sequence<0, 0>>",
         "rhs[1][0]"},
        /* R named by a Y dim */
        {"tile_distribution_encoding<sequence<2>, tuple<sequence<4>>, tuple<sequence<1>>,"
         "tuple<sequence<0>>, sequence<0>, sequence<0>>",
         "R component"},
        /* unowned R of length > 1 */
        {"tile_distribution_encoding<sequence<2>, tuple<sequence<4>>, tuple<sequence<1>>,"
         "tuple<sequence<0>>, sequence<>, sequence<>>",
         "rhs[0][0]"},
        /* minor out of range */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4>>, tuple<sequence<1>>,"
         "tuple<sequence<1>>, sequence<>, sequence<>>",
         "ps_to_rhss_minor[0][0] = 1"},
        /* H component never owned */
        {"tile_distribution_encoding<sequence<>, tuple<sequence<4, 2>>, tuple<sequence<1>>,"
         "tuple<sequence<0>>, sequence<>, sequence<>>",
         "owned by no"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        ck_dist_encoding e;
        ck_distribution d;
        CHECK_OK(ck_dist_encoding_parse(cases[i].text, &e));
        CHECK_STATUS(ck_dist_make(&e, &d), CK_ERROR_INVALID_ARGUMENT);
        CHECK_MSG(strstr(ck_last_error(), cases[i].names) != NULL,
                  "case %zu: message \"%s\" does not name \"%s\"", i, ck_last_error(),
                  cases[i].names);
    }
}

static void test_parse_errors(void)
{
    static const char *bad[] = {
        "",
        "tile_distribution_encoding<sequence<>>",
        "tile_distribution_encoding<sequence<>, tuple<sequence<4>>, tuple<sequence<1>>,"
        "tuple<sequence<0>>, sequence<>, sequence<>",
        "tile_distribution_encoding<sequence<x>, tuple<sequence<4>>, tuple<sequence<1>>,"
        "tuple<sequence<0>>, sequence<>, sequence<>>",
        "tile_distribution_encoding<sequence<>, tuple<sequence<4>>, tuple<sequence<1>>,"
        "tuple<sequence<0, 1>>, sequence<>, sequence<>>",
        "tile_distribution_encoding<sequence<>, tuple<sequence<4>>, tuple<sequence<1>>,"
        "tuple<sequence<0>>, sequence<1>, sequence<>>",
        "tile_distribution_encoding<sequence<>, tuple<sequence<4>>, tuple<sequence<1>>,"
        "tuple<sequence<0>>, sequence<>, sequence<>> trailing",
        "tile_distribution_encoding<sequence<1,2,3,4,5,6,7,8,9>, tuple<sequence<4>>, "
        "tuple<sequence<1>>, tuple<sequence<0>>, sequence<>, sequence<>>",
    };
    ck_dist_encoding e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        CHECK_STATUS(ck_dist_encoding_parse(bad[i], &e), CK_ERROR_PARSE);
    CHECK_STATUS(ck_dist_encoding_parse(NULL, &e), CK_ERROR_INVALID_ARGUMENT);
    ck_distribution d;
    memset(&e, 0, sizeof e);
    CHECK_STATUS(ck_dist_make(&e, &d), CK_ERROR_INVALID_ARGUMENT); /* no X dims */
    char small[8];
    CHECK_OK(
        ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<4>>,"
                               "tuple<sequence<1>>, tuple<sequence<0>>, sequence<>, sequence<>>",
                               &e));
    CHECK_STATUS(ck_dist_encoding_format(&e, small, sizeof small), CK_ERROR_OVERFLOW);
    int p[1] = {4}, x[1];
    CHECK_OK(ck_dist_make(&e, &d));
    CHECK_STATUS(ck_dist_calculate_x(&d, p, NULL, x), CK_ERROR_INVALID_ARGUMENT);
}

/* X written differently: place values (suffix products) and P strides, no Horner loops. */
static void reference_x(const ck_dist_encoding *e, const int *p, const int *y, int *x, int *r)
{
    int hidx[CK_DIST_MAX_X][CK_DIST_MAX_H];
    for (int i = 0; i < e->ndim_p; ++i)
        for (int k = 0; k < e->p_size[i]; ++k) {
            long long stride = 1;
            for (int j = k + 1; j < e->p_size[i]; ++j) {
                int mj = e->p_major[i][j], mn = e->p_minor[i][j];
                stride *= mj ? e->h_lengths[mj - 1][mn] : e->r_lengths[mn];
            }
            int mj = e->p_major[i][k], mn = e->p_minor[i][k];
            int len = mj ? e->h_lengths[mj - 1][mn] : e->r_lengths[mn];
            int v = (int)((p[i] / stride) % len);
            if (mj)
                hidx[mj - 1][mn] = v;
            else
                r[mn] = v;
        }
    for (int j = 0; j < e->ndim_y; ++j)
        hidx[e->y_major[j] - 1][e->y_minor[j]] = y[j];
    for (int i = 0; i < e->ndim_x; ++i) {
        long long v = 0;
        for (int k = 0; k < e->ndim_h[i]; ++k) {
            long long place = 1;
            for (int j = k + 1; j < e->ndim_h[i]; ++j)
                place *= e->h_lengths[i][j];
            v += hidx[i][k] * place;
        }
        x[i] = (int)v;
    }
}

static long long linear_x(const ck_distribution *d, const int *x)
{
    long long lin = 0;
    for (int i = 0; i < d->enc.ndim_x; ++i)
        lin = lin * d->x_lengths[i] + x[i];
    return lin;
}

static void test_random_properties(void)
{
    uint64_t s = g_seed;
    long long bad_x = 0, bad_r = 0, bad_cover = 0, bad_d = 0, bad_sweep = 0, bad_round = 0;
    for (int iter = 0; iter < 400; ++iter) {
        ck_dist_encoding e, e2;
        dr_encoding(&s, -1, -1, &e);
        ck_distribution d;
        if (ck_dist_make(&e, &d) != CK_SUCCESS) {
            CHECK_MSG(0, "random encoding %d rejected: %s", iter, ck_last_error());
            continue;
        }
        char text[2048];
        CHECK_OK(ck_dist_encoding_format(&e, text, sizeof text));
        CHECK_OK(ck_dist_encoding_parse(text, &e2));
        bad_round += memcmp(&e, &e2, sizeof e) != 0;
        long long *count = calloc((size_t)d.tile_elements, sizeof *count);
        int *seen = calloc((size_t)d.elements_per_thread, sizeof *seen);
        long long r_prod = 1;
        for (int i = 0; i < e.ndim_r; ++i)
            r_prod *= e.r_lengths[i];
        for (long long t = 0; t < d.threads; ++t) {
            int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X], xr[CK_DIST_MAX_X];
            int r[CK_DIST_MAX_R] = {0}, rr[CK_DIST_MAX_R] = {0};
            ck_dist_partition_index(&d, t, p);
            long long tid;
            ck_dist_thread_id(&d, p, &tid);
            bad_x += tid != t;
            CHECK_OK(ck_dist_calculate_r(&d, p, r));
            for (long long dd = 0; dd < d.elements_per_thread; ++dd) {
                long long back;
                ck_dist_d_to_ys(&d, dd, y);
                ck_dist_ys_to_d(&d, y, &back);
                bad_d += back != dd;
                long long direct = 0; /* sum of y[j] times the product of later lengths */
                for (int j = 0; j < e.ndim_y; ++j) {
                    long long w = y[j];
                    for (int k = j + 1; k < e.ndim_y; ++k)
                        w *= d.y_lengths[k];
                    direct += w;
                }
                bad_d += direct != dd;
                ck_dist_calculate_x(&d, p, y, x);
                reference_x(&e, p, y, xr, rr);
                for (int i = 0; i < e.ndim_x; ++i)
                    bad_x += x[i] != xr[i];
                ++count[linear_x(&d, x)];
            }
            for (int i = 0; i < e.ndim_r; ++i)
                bad_r += r[i] != rr[i];
            int origin[CK_DIST_MAX_X], y0[CK_DIST_MAX_Y] = {0};
            ck_dist_thread_origin(&d, p, origin);
            ck_dist_calculate_x(&d, p, y0, x);
            for (int i = 0; i < e.ndim_x; ++i)
                bad_x += origin[i] != x[i];
        }
        for (long long i = 0; i < d.tile_elements; ++i)
            bad_cover += count[i] != r_prod;
        /* Sweep: every register exactly once. */
        for (long long i = 0; i < d.elements_per_thread; ++i) {
            int y[CK_DIST_MAX_Y];
            long long dd;
            ck_dist_sweep_index(&d, i, y);
            ck_dist_ys_to_d(&d, y, &dd);
            seen[dd]++;
        }
        for (long long i = 0; i < d.elements_per_thread; ++i)
            bad_sweep += seen[i] != 1;
        free(count);
        free(seen);
    }
    CHECK_EQ_INT(bad_x, 0);
    CHECK_EQ_INT(bad_r, 0);
    CHECK_EQ_INT(bad_cover, 0);
    CHECK_EQ_INT(bad_d, 0);
    CHECK_EQ_INT(bad_sweep, 0);
    CHECK_EQ_INT(bad_round, 0);
}

/* Sweep order: X0's spans outermost; for §7.5's example it is row-major over (y0, y1). */
static void test_sweep_order(void)
{
    ck_distribution d;
    /* Y0 names X1's component, Y1 names X0's: the sweep runs X0's span (Y1) outermost. */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<2, 3>, "
                            "sequence<2, 4>>, tuple<sequence<1, 2>>, tuple<sequence<0, 0>>, "
                            "sequence<2, 1>, sequence<1, 1>>",
                            &d),
                 0);
    for (int i = 0; i < 12; ++i) {
        int y[2];
        CHECK_OK(ck_dist_sweep_index(&d, i, y));
        CHECK_EQ_INT(y[1], i / 4);
        CHECK_EQ_INT(y[0], i % 4);
    }
    int y[2];
    CHECK_STATUS(ck_dist_sweep_index(&d, 12, y), CK_ERROR_INVALID_ARGUMENT);
    /* Two Y dims of one X named against H order: the span follows Y order (Y0 = H[0][1]
     * outer, Y1 = H[0][0] inner). */
    CHECK_EQ_INT(parse_make("tile_distribution_encoding<sequence<>, tuple<sequence<2, 3>>, "
                            "tuple<>, tuple<>, sequence<1, 1>, sequence<1, 0>>",
                            &d),
                 0);
    ck_dist_spans sp;
    CHECK_OK(ck_dist_get_spans(&d, &sp));
    CHECK_EQ_INT(sp.count[0], 2);
    CHECK_EQ_INT(sp.lengths[0][0], 3);
    CHECK_EQ_INT(sp.lengths[0][1], 2);
    CHECK_EQ_INT(sp.y_dim[0][0], 0);
    for (int i = 0; i < 6; ++i) {
        CHECK_OK(ck_dist_sweep_index(&d, i, y));
        CHECK_EQ_INT(y[0], i / 2);
        CHECK_EQ_INT(y[1], i % 2);
    }
}

/* Embed: X_e(P, (Yo, Yi)) = X_outer(Po, Yo) * len(inner X) + X_inner(Pi, Yi). */
static void test_embed(void)
{
    uint64_t s = g_seed ^ 0x77;
    long long bad = 0;
    for (int iter = 0; iter < 60; ++iter) {
        ck_dist_encoding o, in, em;
        int nx = dr_uniform(&s, 1, 2), np = dr_uniform(&s, 0, 2);
        dr_encoding(&s, nx, np, &o);
        dr_encoding(&s, nx, np, &in);
        ck_distribution dout, din, dem;
        ck_dist_make(&o, &dout);
        ck_dist_make(&in, &din);
        if (dout.tile_elements * din.tile_elements > 20000 ||
            o.ndim_h[0] + in.ndim_h[0] > CK_DIST_MAX_H || o.ndim_y + in.ndim_y > CK_DIST_MAX_Y)
            continue;
        if (ck_dist_embed(&o, &in, &em) != CK_SUCCESS) {
            CHECK_MSG(0, "embed failed: %s", ck_last_error());
            continue;
        }
        CHECK_OK(ck_dist_make(&em, &dem));
        for (long long t = 0; t < dem.threads; ++t) {
            int p[CK_DIST_MAX_P], po[CK_DIST_MAX_P], pi[CK_DIST_MAX_P];
            ck_dist_partition_index(&dem, t, p);
            for (int i = 0; i < np; ++i) {
                po[i] = p[i] / din.p_lengths[i];
                pi[i] = p[i] % din.p_lengths[i];
            }
            for (long long r = 0; r < dem.elements_per_thread; ++r) {
                int y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X], xo[CK_DIST_MAX_X], xi[CK_DIST_MAX_X];
                ck_dist_d_to_ys(&dem, r, y);
                ck_dist_calculate_x(&dem, p, y, x);
                ck_dist_calculate_x(&dout, po, y, xo);
                ck_dist_calculate_x(&din, pi, y + o.ndim_y, xi);
                for (int i = 0; i < nx; ++i)
                    bad += x[i] != xo[i] * din.x_lengths[i] + xi[i];
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    ck_dist_encoding a, b, c;
    dr_encoding(&s, 1, 1, &a);
    dr_encoding(&s, 2, 1, &b);
    CHECK_STATUS(ck_dist_embed(&a, &b, &c), CK_ERROR_INVALID_ARGUMENT);
}

/* Reduce: kept X dims of the reduced distribution equal the original's, for any value of the
 * dropped Y dims; P-owned components of reduced dims became R. */
static void test_reduce(void)
{
    uint64_t s = g_seed ^ 0x99;
    long long bad = 0;
    for (int iter = 0; iter < 100; ++iter) {
        ck_dist_encoding e, red;
        dr_encoding(&s, dr_uniform(&s, 2, 3), -1, &e);
        int reduce[CK_DIST_MAX_X] = {0};
        reduce[dr_uniform(&s, 0, e.ndim_x - 1)] = 1;
        ck_distribution d, dr;
        CHECK_OK(ck_dist_make(&e, &d));
        if (ck_dist_reduce(&e, reduce, &red) != CK_SUCCESS) {
            CHECK_MSG(0, "reduce failed: %s", ck_last_error());
            continue;
        }
        CHECK_OK(ck_dist_make(&red, &dr));
        CHECK_EQ_INT(dr.threads, d.threads);
        for (long long t = 0; t < d.threads; ++t) {
            int p[CK_DIST_MAX_P];
            ck_dist_partition_index(&d, t, p);
            for (long long r = 0; r < d.elements_per_thread; ++r) {
                int y[CK_DIST_MAX_Y], yr[CK_DIST_MAX_Y], x[CK_DIST_MAX_X], xr[CK_DIST_MAX_X];
                ck_dist_d_to_ys(&d, r, y);
                int n = 0;
                for (int j = 0; j < e.ndim_y; ++j)
                    if (!reduce[e.y_major[j] - 1])
                        yr[n++] = y[j];
                ck_dist_calculate_x(&d, p, y, x);
                ck_dist_calculate_x(&dr, p, yr, xr);
                for (int i = 0, k = 0; i < e.ndim_x; ++i)
                    if (!reduce[i])
                        bad += x[i] != xr[k++];
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    ck_dist_encoding e, out;
    dr_encoding(&s, 1, -1, &e);
    int all[1] = {1};
    CHECK_STATUS(ck_dist_reduce(&e, all, &out), CK_ERROR_INVALID_ARGUMENT);
}

/* CK's 2-D patterns against their row/col formulas. */
static void test_patterns(void)
{
    static const int shapes[][4] = {
        {256, 64, 64, 8}, {128, 32, 32, 4}, {64, 16, 16, 2}, {256, 128, 32, 1}};
    for (int pat = 0; pat < 3; ++pat)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
            int bs = shapes[si][0], rows = shapes[si][1], cols = shapes[si][2], v = shapes[si][3];
            ck_dist_encoding e;
            ck_distribution d;
            CHECK_OK(ck_dist_make_2d_pattern((ck_dist_pattern)pat, bs, rows, cols, v, &e));
            CHECK_OK(ck_dist_make(&e, &d));
            CHECK_EQ_INT(d.x_lengths[0], rows);
            CHECK_EQ_INT(d.x_lengths[1], cols);
            CHECK_EQ_INT(d.threads, bs);
            int x0 = cols / v, ly = 32 / x0, nw = bs / 32, rep = rows / (ly * nw);
            long long bad = 0;
            for (int t = 0; t < bs; ++t)
                for (int a = 0; a < rep; ++a)
                    for (int b = 0; b < v; ++b) {
                        int p[2] = {t / 32, t % 32}, y[2] = {a, b}, x[2];
                        ck_dist_calculate_x(&d, p, y, x);
                        int w = t / 32, l = t % 32, row;
                        if (pat == 0)
                            row = w * ly * rep + (l / x0) * rep + a;
                        else if (pat == 1)
                            row = w * rep * ly + a * ly + l / x0;
                        else
                            row = a * nw * ly + w * ly + l / x0;
                        bad += x[0] != row || x[1] != (l % x0) * v + b;
                    }
            CHECK_EQ_INT(bad, 0);
        }
    ck_dist_encoding e;
    CHECK_STATUS(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 100, 64, 64, 8, &e),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 256, 64, 60, 8, &e),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dist_make_2d_pattern(CK_DIST_WARP_RAKED, 256, 60, 64, 8, &e),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_dist_make_2d_pattern(CK_DIST_WARP_RAKED, 256, 64, 512, 8, &e),
                 CK_ERROR_INVALID_ARGUMENT);
}

/* Slice: X_sliced(P, Y) = X(P, Y + origin) - begin, on a thread-raked tile. */
static void test_slice(void)
{
    ck_dist_encoding e, sl;
    ck_distribution d, ds;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_BLOCK_RAKED, 64, 32, 32, 4, &e)); /* H0 = 4,2,4 */
    CHECK_OK(ck_dist_make(&e, &d));
    static const int ranges[][4] = {
        {0, 32, 0, 32}, {8, 16, 0, 32}, {16, 32, 0, 32}, {8, 24, 0, 32}, {24, 32, 0, 32}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; ++i) {
        int b[2] = {ranges[i][0], ranges[i][2]}, en[2] = {ranges[i][1], ranges[i][3]}, org[2];
        CHECK_OK(ck_dist_slice(&e, b, en, &sl, org));
        CHECK_OK(ck_dist_make(&sl, &ds));
        CHECK_EQ_INT(ds.x_lengths[0], en[0] - b[0]);
        CHECK_EQ_INT(ds.x_lengths[1], en[1] - b[1]);
        long long bad = 0;
        for (long long t = 0; t < ds.threads; ++t)
            for (long long r = 0; r < ds.elements_per_thread; ++r) {
                int p[2], y[2], yo[2], x[2], xs[2];
                ck_dist_partition_index(&ds, t, p);
                ck_dist_d_to_ys(&ds, r, y);
                yo[0] = y[0] + org[0];
                yo[1] = y[1] + org[1];
                ck_dist_calculate_x(&d, p, yo, x);
                ck_dist_calculate_x(&ds, p, y, xs);
                bad += xs[0] != x[0] - b[0] || xs[1] != x[1] - b[1];
            }
        CHECK_EQ_INT(bad, 0);
    }
    /* Cutting a P-owned component, or a range that is not a box, is refused. */
    int b1[2] = {0, 0}, e1[2] = {4, 32};
    CHECK_STATUS(ck_dist_slice(&e, b1, e1, &sl, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "P0") != NULL);
    int b3[2] = {0, 0}, e3[2] = {32, 16};
    CHECK_STATUS(ck_dist_slice(&e, b3, e3, &sl, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "P1") != NULL);
    int b2[2] = {3, 0}, e2[2] = {6, 32};
    CHECK_STATUS(ck_dist_slice(&e, b2, e2, &sl, NULL), CK_ERROR_INVALID_ARGUMENT);
}

/* Mutated texts never crash the parser (run under ASan in CI); what parses either validates
 * or is refused with a sentence. */
static void test_parse_fuzz(void)
{
    static const char base[] =
        "ck_tile::tile_distribution_encoding<sequence<2>, tuple<sequence<4, 2, 8, 4>, "
        "sequence<4, 2, 8, 4>>, tuple<sequence<0, 1, 2>, sequence<1, 2>>, "
        "tuple<sequence<0, 1, 1>, sequence<2, 2>>, sequence<1, 1, 2, 2>, "
        "sequence<0, 3, 0, 3>>{}; // comment";
    static const char alphabet[] = "<>,{};/ *-0123456789sequencetuple:";
    uint64_t s = g_seed ^ 0xF022;
    long long parsed = 0, valid = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        char text[sizeof base + 8];
        memcpy(text, base, sizeof base);
        size_t len = sizeof base - 1;
        int edits = dr_uniform(&s, 1, 3);
        for (int k = 0; k < edits; ++k) {
            size_t at = (size_t)dr_uniform(&s, 0, (int)len - 1);
            int op = dr_uniform(&s, 0, 2);
            if (op == 0) { /* delete */
                memmove(text + at, text + at + 1, len - at);
                --len;
            } else if (op == 1) { /* replace */
                text[at] = alphabet[dr_uniform(&s, 0, (int)sizeof alphabet - 2)];
            } else { /* truncate */
                text[at] = 0;
                len = at;
            }
            if (len < 2)
                break;
        }
        ck_dist_encoding e;
        ck_distribution d;
        ck_status st = ck_dist_encoding_parse(text, &e);
        CHECK(st == CK_SUCCESS || (st == CK_ERROR_PARSE && strlen(ck_last_error()) > 20));
        if (st != CK_SUCCESS)
            continue;
        ++parsed;
        st = ck_dist_make(&e, &d);
        CHECK(st == CK_SUCCESS || strlen(ck_last_error()) > 20);
        valid += st == CK_SUCCESS;
    }
    CHECK(parsed > 0);
    printf("fuzz: %lld of 3000 mutated texts parsed, %lld valid\n", parsed, valid);
}

int main(void)
{
    printf("seed %llu\n", (unsigned long long)g_seed);
    RUN_TEST(test_example_7_5);
    RUN_TEST(test_gemm_example);
    RUN_TEST(test_malformed);
    RUN_TEST(test_parse_errors);
    RUN_TEST(test_random_properties);
    RUN_TEST(test_sweep_order);
    RUN_TEST(test_embed);
    RUN_TEST(test_reduce);
    RUN_TEST(test_patterns);
    RUN_TEST(test_slice);
    RUN_TEST(test_parse_fuzz);
    return CK_TEST_REPORT();
}
