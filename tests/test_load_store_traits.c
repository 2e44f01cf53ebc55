/* Load/store traits: on random distributions over naive, strided and padded descriptors,
 * every access the traits claim is contiguous and uniformly valid for every thread (brute
 * force through the descriptor's offsets), the sfc visits every element once, and no wider
 * width would do (brute force); the reference's examples (corrected per ERRATA); bad input. */
#include <stdio.h>
#include <stdlib.h>

#include "ck/tile.h"
#include "dist_random.h"
#include "test.h"

static uint64_t g_seed = 0x7a17510adULL;

/* Whether w-wide accesses along Y dim j (starts at multiples of w) are contiguous and entirely
 * valid or entirely padding, for every thread and every other Y index. */
static int brute_ok(const ck_distribution *d, const ck_descriptor *desc, int j, int w)
{
    const ck_dist_encoding *e = &d->enc;
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
    int64_t xi[CK_DIST_MAX_X], off, off0 = 0;
    for (long long t = 0; t < d->threads; ++t) {
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            if (y[j] % w)
                continue;
            int valid0 = 0;
            for (int k = 0; k < w; ++k) {
                int yk[CK_DIST_MAX_Y];
                memcpy(yk, y, sizeof yk);
                yk[j] += k;
                ck_dist_calculate_x(d, p, yk, x);
                for (int i = 0; i < e->ndim_x; ++i)
                    xi[i] = x[i];
                int valid;
                ck_descriptor_is_valid_index(desc, xi, &valid);
                ck_descriptor_calculate_offset(desc, xi, &off);
                if (k == 0) {
                    valid0 = valid;
                    off0 = off;
                } else if (valid != valid0 || (valid && off != off0 + k)) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* Check traits t of d over desc for an element of `bits` bits. Returns 0 when all is well. */
static int check_traits(const ck_distribution *d, const ck_descriptor *desc, int bits,
                        const ck_load_store_traits *t, int check_max)
{
    const ck_dist_encoding *e = &d->enc;
    int bad = 0, w = t->scalars_per_vector;
    CHECK(w >= 1 && (w & (w - 1)) == 0);
    CHECK(t->vector_bits == w * bits && t->vector_bits <= 128);
    CHECK_EQ_INT(t->vector_bytes, (w * bits + 7) / 8);
    if (e->ndim_y == 0) {
        CHECK_EQ_INT(t->vector_dim_y, -1);
        CHECK_EQ_INT(t->num_accesses, 1);
        return 0;
    }
    int v = t->vector_dim_y;
    CHECK(v >= 0 && v < e->ndim_y);
    if (v < 0 || v >= e->ndim_y)
        return 1;
    CHECK_EQ_INT(d->y_lengths[v] % w, 0);
    CHECK_EQ_INT(t->num_accesses * w, d->elements_per_thread);
    CHECK_EQ_INT(t->sfc.dim_access_order[e->ndim_y - 1], v);
    /* The sfc's accesses cover every register exactly once. */
    char *seen = calloc((size_t)d->elements_per_thread, 1);
    int y[CK_DIST_MAX_Y];
    for (long long i = 0; i < t->num_accesses && seen; ++i) {
        CHECK_OK(ck_sfc_get_index(&t->sfc, i, y));
        if (y[v] % w) {
            CHECK_MSG(0, "access %lld starts at Y%d = %d, not a multiple of %d", i, v, y[v], w);
            ++bad;
        }
        for (int k = 0; k < w; ++k) {
            long long r;
            y[v] += k;
            ck_dist_ys_to_d(d, y, &r);
            y[v] -= k;
            if (seen[r]++)
                ++bad;
        }
    }
    for (long long r = 0; r < d->elements_per_thread && seen; ++r)
        if (!seen[r])
            ++bad;
    free(seen);
    CHECK_EQ_INT(bad, 0);
    if (w > 1 && !brute_ok(d, desc, v, w)) {
        CHECK_MSG(0, "traits claim %d-wide accesses along Y%d that are not contiguous", w, v);
        ++bad;
    }
    /* Maximal: no Y dim allows twice the width (by brute force) within 16 bytes. */
    if (check_max && 2 * w * bits <= 128)
        for (int j = 0; j < e->ndim_y; ++j)
            if (d->y_lengths[j] % (2 * w) == 0 && brute_ok(d, desc, j, 2 * w)) {
                CHECK_MSG(0, "Y%d allows %d-wide accesses, the traits chose %d along Y%d", j, 2 * w,
                          w, v);
                ++bad;
            }
    return bad;
}

/* Multi-stage descriptors over the X lengths: 4 = one X dim split in two dims of a naive
 * tensor with random strides, merged back; 5 = a packed tensor in another dim order,
 * transposed back. */
static ck_status staged_desc(uint64_t *s, const ck_distribution *d, int kind, ck_descriptor **out)
{
    int n = d->enc.ndim_x;
    ck_ival len[CK_DIST_MAX_X + 1], str[CK_DIST_MAX_X + 1];
    ck_descriptor *base = NULL;
    ck_status st;
    if (kind == 5) {
        int perm[CK_DIST_MAX_X];
        for (int i = 0; i < n; ++i)
            perm[i] = i;
        for (int i = n - 1; i > 0; --i) {
            int j = dr_uniform(s, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        /* Stored dim k holds X dim perm[k]; the transpose's new dim i is old dim inv[i]. */
        int inv[CK_DIST_MAX_X];
        for (int k = 0; k < n; ++k) {
            len[k] = ck_ival_int(d->x_lengths[perm[k]]);
            inv[perm[k]] = k;
        }
        if ((st = ck_descriptor_make_packed(n, len, &base)))
            return st;
        ck_transform t[CK_DIST_MAX_X];
        int low[CK_DIST_MAX_X], up[CK_DIST_MAX_X];
        for (int i = 0; i < n; ++i) {
            ck_make_pass_through_transform(len[inv[i]], &t[i]);
            low[i] = inv[i];
            up[i] = i;
        }
        st = ck_descriptor_transform(base, n, t, low, up, out);
        ck_descriptor_destroy(base);
        return st;
    }
    /* Split X dim k = a * b (a divisor of its length) into dims k, k+1. */
    int k = dr_uniform(s, 0, n - 1), xl = d->x_lengths[k], a = 1;
    for (int c = 1; c <= xl; ++c)
        if (xl % c == 0 && dr_uniform(s, 0, 1))
            a = c;
    int m = 0;
    for (int i = 0; i < n; ++i) {
        if (i == k) {
            len[m++] = ck_ival_int(a);
            len[m++] = ck_ival_int(xl / a);
        } else {
            len[m++] = ck_ival_int(d->x_lengths[i]);
        }
    }
    long long acc = 1;
    int order[CK_DIST_MAX_X + 1];
    for (int i = 0; i < m; ++i)
        order[i] = i;
    if (dr_uniform(s, 0, 1)) { /* sometimes swap the two halves in memory */
        order[k] = k + 1;
        order[k + 1] = k;
    }
    for (int i = m - 1; i >= 0; --i) {
        str[order[i]] = ck_ival_int(acc);
        acc *= len[order[i]].v + dr_uniform(s, 0, 1);
    }
    if ((st = ck_descriptor_make_naive(m, len, str, &base)))
        return st;
    ck_transform t;
    ck_ival ml[2] = {len[k], len[k + 1]};
    int dims[2] = {k, k + 1};
    st = ck_make_merge_transform(2, ml, &t);
    if (!st)
        st = ck_descriptor_transform_one(base, &t, dims, -1, out);
    ck_descriptor_destroy(base);
    return st;
}

/* A random descriptor over the X lengths: 0 packed row-major, 1 strided (random dim order,
 * gaps), 2 padded (pad on one dim of a smaller naive tensor), 3 right_pad, 4 and 5 staged. */
static ck_status random_desc(uint64_t *s, const ck_distribution *d, int kind, ck_descriptor **out)
{
    if (kind >= 4)
        return staged_desc(s, d, kind, out);
    int n = d->enc.ndim_x;
    ck_ival len[CK_DIST_MAX_X], str[CK_DIST_MAX_X];
    int order[CK_DIST_MAX_X];
    for (int i = 0; i < n; ++i) {
        order[i] = i;
        len[i] = ck_ival_int(d->x_lengths[i]);
    }
    if (kind == 0)
        return ck_descriptor_make_packed(n, len, out);
    int k = dr_uniform(s, 0, n - 1), left = 0, right = 0;
    if (kind >= 2 && d->x_lengths[k] >= 2) {
        int pad = dr_uniform(s, 1, d->x_lengths[k] - 1);
        left = kind == 2 ? dr_uniform(s, 0, pad) : 0;
        right = pad - left;
        len[k] = ck_ival_int(d->x_lengths[k] - pad);
    }
    for (int i = n - 1; i > 0; --i) { /* memory order of dims: random permutation */
        int j = dr_uniform(s, 0, i), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    long long acc = dr_uniform(s, 0, 2) ? 1 : 2; /* sometimes no dim is contiguous */
    for (int i = n - 1; i >= 0; --i) {
        str[order[i]] = ck_ival_int(acc);
        acc *= len[order[i]].v + dr_uniform(s, 0, 1) * dr_uniform(s, 0, 3);
    }
    ck_descriptor *base = NULL;
    ck_status st = ck_descriptor_make_naive(n, len, str, &base);
    if (st || (left == 0 && right == 0)) {
        *out = base;
        return st;
    }
    ck_transform t;
    if (kind == 2)
        st = ck_make_pad_transform(len[k], ck_ival_int(left), ck_ival_int(right), &t);
    else
        st = ck_make_right_pad_transform(len[k], ck_ival_int(right), &t);
    if (!st)
        st = ck_descriptor_transform_one(base, &t, &k, -1, out);
    ck_descriptor_destroy(base);
    return st;
}

static void test_random(void)
{
    static const ck_dtype types[] = {CK_DTYPE_F32, CK_DTYPE_F16,      CK_DTYPE_F64,
                                     CK_DTYPE_I8,  CK_DTYPE_FP4_E2M1, CK_DTYPE_FP6_E2M3};
    uint64_t s = g_seed;
    int done = 0, vectors = 0, failed = 0, max_fail = 0;
    for (int i = 0; i < 900 && failed < 3; ++i) {
        ck_dist_encoding e;
        ck_distribution d;
        dr_encoding(&s, -1, -1, &e);
        if (ck_dist_make(&e, &d) != CK_SUCCESS) {
            CHECK(0);
            continue;
        }
        int kind = i % 6;
        ck_descriptor *desc = NULL;
        CHECK_OK(random_desc(&s, &d, kind, &desc));
        if (!desc)
            continue;
        ck_dtype dt = types[dr_uniform(&s, 0, 5)];
        ck_load_store_traits t;
        CHECK_OK(ck_load_store_traits_make(&e, desc, dt, &t));
        int bits = ck_dtype_get(dt)->storage_bits;
        /* Maximality only where the guarantees are exact (naive and padded descriptors). */
        if (check_traits(&d, desc, bits, &t, kind < 4)) {
            char buf[2048], *ds = NULL;
            ck_dist_encoding_format(&e, buf, sizeof buf);
            ck_descriptor_to_string(desc, &ds);
            printf("  case %d (%s, %d bits): %s\n%s\n", i, ck_dtype_name(dt), bits, buf,
                   ds ? ds : "");
            ck_tile_free(ds);
            ++failed;
        }
        vectors += t.scalars_per_vector > 1;
        ++done;
        ck_descriptor_destroy(desc);
    }
    (void)max_fail;
    CHECK_EQ_INT(done, 900);
    CHECK(vectors > 100); /* the test exercises vectors, not only scalars */
    printf("  %d cases, %d with vectors\n", done, vectors);
}

static ck_status traits_of(const char *text, int n, const int *strides, ck_dtype dt,
                           ck_load_store_traits *t)
{
    ck_dist_encoding e;
    ck_distribution d;
    ck_status st = ck_dist_encoding_parse(text, &e);
    if (!st)
        st = ck_dist_make(&e, &d);
    if (st)
        return st;
    ck_ival len[CK_DIST_MAX_X], str[CK_DIST_MAX_X];
    for (int i = 0; i < n; ++i) {
        len[i] = ck_ival_int(d.x_lengths[i]);
        str[i] = ck_ival_int(strides[i]);
    }
    ck_descriptor *desc = NULL;
    st = ck_descriptor_make_naive(n, len, str, &desc);
    if (!st)
        st = ck_load_store_traits_make(&e, desc, dt, t);
    if (!st && check_traits(&d, desc, ck_dtype_get(dt)->storage_bits, t, 1))
        st = CK_ERROR_INTERNAL;
    ck_descriptor_destroy(desc);
    return st;
}

/* §7.12.4/7.12.5's examples with ERRATA's corrections (Y majors are RH majors 1 and 2, one
 * P per X): row-major 4x16 and 6x8, column-major 16x4, fp32 capped at 4 per vector. */
static void test_reference_examples(void)
{
    ck_load_store_traits t;
    const char *row = "tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>, "
                      "sequence<4, 4>>, tuple<sequence<1>, sequence<2>>, "
                      "tuple<sequence<0>, sequence<0>>, sequence<1, 2>, sequence<1, 1>>";
    CHECK_OK(traits_of(row, 2, (const int[]){16, 1}, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.vector_dim_y, 1);
    CHECK_EQ_INT(t.scalars_per_vector, 4);
    CHECK_EQ_INT(t.vector_bytes, 16);
    CHECK_EQ_INT(t.num_accesses, 2);
    /* Column-major memory (X0 contiguous): Y0 (the last H component of X0, length 2). */
    CHECK_OK(traits_of(row, 2, (const int[]){1, 4}, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.vector_dim_y, 0);
    CHECK_EQ_INT(t.scalars_per_vector, 2);
    const char *col = "tile_distribution_encoding<sequence<>, tuple<sequence<4, 4>, "
                      "sequence<2, 2>>, tuple<sequence<1>, sequence<2>>, "
                      "tuple<sequence<0>, sequence<0>>, sequence<1, 2>, sequence<1, 1>>";
    CHECK_OK(traits_of(col, 2, (const int[]){4, 1}, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.vector_dim_y, 1);
    CHECK_EQ_INT(t.scalars_per_vector, 2);
    CHECK_EQ_INT(t.num_accesses, 4);
    const char *six = "tile_distribution_encoding<sequence<>, tuple<sequence<2, 3>, "
                      "sequence<2, 4>>, tuple<sequence<1>, sequence<2>>, "
                      "tuple<sequence<0>, sequence<0>>, sequence<1, 2>, sequence<1, 1>>";
    CHECK_OK(traits_of(six, 2, (const int[]){8, 1}, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.vector_dim_y, 1);
    CHECK_EQ_INT(t.scalars_per_vector, 4);
    CHECK_EQ_INT(t.num_accesses, 3);
    /* Access i: Y = (i, 0) (the vector dim innermost, one access per row). */
    int y[2];
    for (int i = 0; i < 3; ++i) {
        CHECK_OK(ck_sfc_get_index(&t.sfc, i, y));
        CHECK_EQ_INT(y[0], i);
        CHECK_EQ_INT(y[1], 0);
    }
    /* The 16-byte cap: 16 f32 in a row give 4 per vector, f16 8, fp8 16, fp4 32 (16 bytes),
     * fp6 16 (12 bytes; 21 is no power of two), f64 2. */
    const char *wide = "tile_distribution_encoding<sequence<>, tuple<sequence<4>, "
                       "sequence<2, 64>>, tuple<sequence<1, 2>>, tuple<sequence<0, 0>>, "
                       "sequence<2>, sequence<1>>";
    static const struct {
        ck_dtype dt;
        int w, bytes;
    } caps[] = {{CK_DTYPE_F32, 4, 16},       {CK_DTYPE_F16, 8, 16},
                {CK_DTYPE_FP8_E4M3, 16, 16}, {CK_DTYPE_FP4_E2M1, 32, 16},
                {CK_DTYPE_FP6_E2M3, 16, 12}, {CK_DTYPE_F64, 2, 16}};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; ++i) {
        CHECK_OK(traits_of(wide, 2, (const int[]){128, 1}, caps[i].dt, &t));
        CHECK_EQ_INT(t.scalars_per_vector, caps[i].w);
        CHECK_EQ_INT(t.vector_bytes, caps[i].bytes);
        CHECK_EQ_INT(t.num_accesses, 64 / caps[i].w);
    }
    /* A row stride that is not contiguous on X1 (stride 2): scalar along the last Y dim. */
    CHECK_OK(traits_of(row, 2, (const int[]){32, 2}, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.scalars_per_vector, 1);
    CHECK_EQ_INT(t.vector_dim_y, 1);
    CHECK_EQ_INT(t.num_accesses, 8);
}

static void test_bad_input(void)
{
    ck_dist_encoding e;
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<2, 4>>,"
                                    " tuple<sequence<1>>, tuple<sequence<0>>, sequence<1>, "
                                    "sequence<1>>",
                                    &e));
    ck_ival len8 = ck_ival_int(8), len4 = ck_ival_int(4), two[2] = {len8, len8};
    ck_descriptor *d8 = NULL, *d4 = NULL, *d88 = NULL, *sym = NULL, *symb = NULL;
    CHECK_OK(ck_descriptor_make_packed(1, &len8, &d8));
    CHECK_OK(ck_descriptor_make_packed(1, &len4, &d4));
    CHECK_OK(ck_descriptor_make_packed(2, two, &d88));
    ck_expr_arena *ctx = NULL;
    CHECK_OK(ck_expr_arena_create(&ctx));
    ck_ival n;
    CHECK_OK(ck_expr_symbol(ctx, "N", 1, 1 << 20, 1, &n));
    CHECK_OK(ck_descriptor_make_packed(1, &n, &sym));
    ck_load_store_traits t;
    CHECK_OK(ck_load_store_traits_make(&e, d8, CK_DTYPE_F32, &t));
    CHECK_EQ_INT(t.scalars_per_vector, 4);
    CHECK_STATUS(ck_load_store_traits_make(NULL, d8, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_load_store_traits_make(&e, NULL, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_load_store_traits_make(&e, d8, CK_DTYPE_F32, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_load_store_traits_make(&e, d8, (ck_dtype)999, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_load_store_traits_make(&e, d4, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "length 4") != NULL);
    CHECK_STATUS(ck_load_store_traits_make(&e, d88, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "2 dims") != NULL);
    CHECK_STATUS(ck_load_store_traits_make(&e, sym, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "symbolic") != NULL);
    /* Binding the symbol makes it usable. */
    CHECK_OK(ck_descriptor_bind(sym, (const ck_binding[]){{"N", 8}}, 1, &symb));
    CHECK_OK(ck_load_store_traits_make(&e, symb, CK_DTYPE_F16, &t));
    CHECK_EQ_INT(t.scalars_per_vector, 4);
    e.y_minor[0] = 0; /* owned by P0 and Y0 */
    CHECK_STATUS(ck_load_store_traits_make(&e, d8, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "rhs[1][0]") != NULL);
    /* ERRATA 000:L3916: the document's RowMajorDist (P dims duplicated, Y majors <2, 4> are Y
     * lengths) is refused, naming the component. */
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>,"
                                    " sequence<4, 4>>, tuple<sequence<1>, sequence<1>>, "
                                    "tuple<sequence<0>, sequence<0>>, sequence<2, 4>, "
                                    "sequence<1, 1>>",
                                    &e));
    ck_ival l416[2] = {ck_ival_int(4), ck_ival_int(16)};
    ck_descriptor *d416 = NULL;
    CHECK_OK(ck_descriptor_make_packed(2, l416, &d416));
    CHECK_STATUS(ck_load_store_traits_make(&e, d416, CK_DTYPE_F32, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "rhs[1][0] (X0, minor 0) is owned by both") != NULL);
    ck_descriptor_destroy(d416);
    ck_descriptor_destroy(d8);
    ck_descriptor_destroy(d4);
    ck_descriptor_destroy(d88);
    ck_descriptor_destroy(sym);
    ck_descriptor_destroy(symb);
    ck_expr_arena_destroy(ctx);
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)g_seed);
    RUN_TEST(test_random);
    RUN_TEST(test_reference_examples);
    RUN_TEST(test_bad_input);
    return CK_TEST_REPORT();
}
