/* Access-pattern verification: known patterns and a brute-force recount (byte bitmaps) of
 * sectors and bank-conflict ways on random distributions and layouts. */
#include <stdlib.h>

#include "ck/distribution.h"
#include "dist_random.h"
#include "test.h"

/* Recount one report with byte bitmaps (no sorting) and compare every stat. */
static long long brute_check(const ck_distribution *d, const ck_access_layout *lay, int eb,
                             const ck_access_report *rep)
{
    const ck_dist_encoding *e = &d->enc;
    int order[CK_DIST_MAX_Y], sc[CK_DIST_MAX_Y], n = 0;
    for (int j = 0; j < e->ndim_y; ++j)
        if (j != rep->vector_y_dim)
            order[n++] = j;
    if (rep->vector_y_dim >= 0)
        order[n++] = rep->vector_y_dim;
    for (int j = 0; j < e->ndim_y; ++j)
        sc[j] = j == rep->vector_y_dim ? rep->vector_elems : 1;
    ck_sfc sfc;
    memset(&sfc, 0, sizeof sfc);
    sfc.num_access = 1;
    if (e->ndim_y && ck_sfc_init(&sfc, e->ndim_y, d->y_lengths, order, sc, 1))
        return 1000000;
    if (sfc.num_access != rep->accesses_per_thread)
        return 1000000;
    /* Address range of the whole tile. */
    long long maxoff = 0;
    for (int i = 0; i < e->ndim_x; ++i)
        maxoff += (long long)(d->x_lengths[i] - 1) * lay->strides[i];
    long long nbytes = (lay->base_bytes + (maxoff + 1) * eb + 64 + 1023) / 1024 * 1024;
    unsigned char *bytes = malloc((size_t)nbytes);
    long long bad = 0, k = 0;
    const int vb = rep->vector_elems * eb;
    for (long long a = 0; a < sfc.num_access; ++a) {
        int y[CK_DIST_MAX_Y] = {0};
        if (e->ndim_y)
            ck_sfc_get_index(&sfc, a, y);
        for (int w = 0; w < rep->warps; ++w, ++k) {
            memset(bytes, 0, (size_t)nbytes);
            for (int l = 0; l < 32 && (long long)w * 32 + l < d->threads; ++l) {
                int p[CK_DIST_MAX_P], x[CK_DIST_MAX_X];
                ck_dist_partition_index(d, (long long)w * 32 + l, p);
                ck_dist_calculate_x(d, p, y, x);
                long long off = 0;
                for (int i = 0; i < e->ndim_x; ++i)
                    off += x[i] * lay->strides[i];
                long long addr = lay->base_bytes + off * eb;
                bad += rep->vector_elems > 1 && addr % vb != 0; /* vectors must be aligned */
                for (long long b = addr; b < addr + vb; ++b) {  /* swizzle byte by byte */
                    long long ph = b;
                    ck_nv_swizzle_offset(lay->swizzle, b, &ph);
                    bytes[ph] = 1;
                }
            }
            long long marked = 0, sectors = 0, words = 0, per_bank[32] = {0}, ways = 0;
            for (long long s0 = 0; s0 < nbytes; s0 += 32) {
                int any = 0;
                for (long long b = s0; b < s0 + 32 && b < nbytes; ++b) {
                    marked += bytes[b];
                    any |= bytes[b];
                }
                sectors += any;
            }
            for (long long w0 = 0; w0 + 4 <= nbytes; w0 += 4)
                if (bytes[w0] | bytes[w0 + 1] | bytes[w0 + 2] | bytes[w0 + 3]) {
                    ++words;
                    long long c = ++per_bank[(w0 / 4) % 32];
                    ways = c > ways ? c : ways;
                }
            const ck_access_stat *st = &rep->stats[k];
            bad += st->sectors != sectors;
            bad += st->sectors_min != (marked + 31) / 32;
            bad += st->bank_ways != ways;
            bad += st->bank_ways_min != (words + 31) / 32;
            bad += st->warp != w || st->access != a;
        }
    }
    free(bytes);
    return bad;
}

static void test_known_patterns(void)
{
    ck_dist_encoding e;
    ck_distribution d;
    ck_access_report rep;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 256, 64, 64, 8, &e));
    CHECK_OK(ck_dist_make(&e, &d));
    ck_access_layout rowmajor = {2, {64, 1}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &rowmajor, 2, NULL, &rep));
    CHECK_EQ_INT(rep.coverage_ok, 1);
    CHECK_EQ_INT(rep.vector_elems, 8);
    CHECK_EQ_INT(rep.vector_bytes, 16);
    CHECK_EQ_INT(rep.vector_y_dim, 1);
    CHECK_EQ_INT(rep.warps, 8);
    CHECK_EQ_INT(rep.accesses_per_thread, 2);
    CHECK_EQ_INT(rep.sectors_total, rep.sectors_min_total); /* 4 full rows of 128 bytes */
    CHECK_EQ_INT(rep.stats[0].sectors, 16);
    CHECK_EQ_INT(rep.stats[0].bank_ways, 4);
    CHECK_EQ_INT(rep.bank_ways_total, rep.bank_ways_min_total);
    CHECK_EQ_INT(brute_check(&d, &rowmajor, 2, &rep), 0);
    ck_access_report_free(&rep);
    /* Column-major storage: X0 is now contiguous; the thread's 2 repeats (Y0) vectorize. */
    ck_access_layout colmajor = {2, {1, 64}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &colmajor, 2, NULL, &rep));
    CHECK_EQ_INT(rep.vector_y_dim, 0);
    CHECK_EQ_INT(rep.vector_elems, 2);
    CHECK(rep.sectors_total > rep.sectors_min_total);
    CHECK(rep.bank_ways_max > 1);
    CHECK_EQ_INT(brute_check(&d, &colmajor, 2, &rep), 0);
    ck_access_report_free(&rep);
    /* A base 2 bytes off alignment forbids 16-byte vectors (fp16): scalar accesses. */
    ck_access_layout shifted = {2, {64, 1}, 2, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &shifted, 2, NULL, &rep));
    CHECK_EQ_INT(rep.vector_elems, 1);
    CHECK_EQ_INT(rep.accesses_per_thread, 16);
    CHECK_EQ_INT(brute_check(&d, &shifted, 2, &rep), 0);
    ck_access_report_free(&rep);
    /* Padded rows (stride 72 halves = 144 bytes): same sectors per row, 16-byte aligned. */
    ck_access_layout padded = {2, {72, 1}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &padded, 2, NULL, &rep));
    CHECK_EQ_INT(rep.vector_elems, 8);
    CHECK_EQ_INT(brute_check(&d, &padded, 2, &rep), 0);
    ck_access_report_free(&rep);
}

/* Column reads of a 128-byte-row fp16 tile: 32 lanes x 16 bytes in one bank group (32-way);
 * the 128B swizzle spreads each 8 rows over the 8 chunks (4 wavefronts, the minimum). */
static void test_swizzled_columns(void)
{
    ck_dist_encoding e;
    ck_distribution d;
    ck_access_report rep;
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<32>, "
                                    "sequence<8, 8>>, tuple<sequence<1>>, tuple<sequence<0>>, "
                                    "sequence<2, 2>, sequence<0, 1>>",
                                    &e));
    CHECK_OK(ck_dist_make(&e, &d));
    ck_access_layout plain = {2, {64, 1}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &plain, 2, NULL, &rep));
    CHECK_EQ_INT(rep.vector_bytes, 16);
    CHECK_EQ_INT(rep.accesses_per_thread, 8);
    CHECK_EQ_INT(rep.bank_ways_max, 32);
    CHECK_EQ_INT(rep.stats[0].bank_ways_min, 4);
    CHECK_EQ_INT(brute_check(&d, &plain, 2, &rep), 0);
    ck_access_report_free(&rep);
    ck_access_layout swz = {2, {64, 1}, 0, CK_NV_SWIZZLE_128B};
    CHECK_OK(ck_access_check(&d, &swz, 2, NULL, &rep));
    CHECK_EQ_INT(rep.bank_ways_max, 4);
    CHECK_EQ_INT(rep.bank_ways_total, rep.bank_ways_min_total);
    CHECK_EQ_INT(rep.stats[0].sectors, 32); /* one half-used sector per lane: rows 128 B apart */
    CHECK_EQ_INT(rep.stats[0].sectors_min, 16);
    CHECK_EQ_INT(brute_check(&d, &swz, 2, &rep), 0);
    ck_access_report_free(&rep);
    ck_access_layout swz64 = {2, {64, 1}, 0, CK_NV_SWIZZLE_64B};
    CHECK_OK(ck_access_check(&d, &swz64, 2, NULL, &rep));
    CHECK_EQ_INT(rep.bank_ways_max, 8); /* only 4 chunks are permuted: 32 lanes / 4 */
    CHECK_EQ_INT(brute_check(&d, &swz64, 2, &rep), 0);
    ck_access_report_free(&rep);
    ck_access_layout bad = {2, {64, 1}, 0, (ck_nv_swizzle)7};
    CHECK_STATUS(ck_access_check(&d, &bad, 2, NULL, &rep), CK_ERROR_INVALID_ARGUMENT);
}

static void test_coverage_report(void)
{
    ck_dist_encoding e;
    ck_distribution d;
    ck_access_report rep;
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<2>, tuple<sequence<4, 2>>,"
                                    "tuple<sequence<0, 1>>, tuple<sequence<0, 0>>, sequence<1>,"
                                    "sequence<1>>",
                                    &e));
    CHECK_OK(ck_dist_make(&e, &d));
    CHECK_EQ_INT(d.replication, 2);
    ck_access_layout lay = {1, {1}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_OK(ck_access_check(&d, &lay, 4, NULL, &rep));
    CHECK_EQ_INT(rep.coverage_ok, 1);
    CHECK_EQ_INT(rep.expected_holders, 2);
    /* Replicated lanes read the same bytes: minimum counts distinct bytes only. */
    CHECK_EQ_INT(rep.stats[0].sectors_min, 1);
    ck_access_report_free(&rep);
    /* A corrupted distribution (claims no replication): the first element is named. */
    d.replication = 1;
    CHECK_OK(ck_access_check(&d, &lay, 4, NULL, &rep));
    CHECK_EQ_INT(rep.coverage_ok, 0);
    CHECK_EQ_INT(rep.first_bad_x[0], 0);
    CHECK_EQ_INT(rep.first_bad_holders, 2);
    ck_access_report_free(&rep);
}

static void test_random_brute_force(void)
{
    uint64_t seed = 0xACCE55ULL, s = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    long long bad = 0;
    static const int ebs[] = {1, 2, 4, 8};
    for (int iter = 0; iter < 150; ++iter) {
        ck_dist_encoding e;
        dr_encoding(&s, dr_uniform(&s, 1, 3), dr_uniform(&s, 1, 2), &e);
        ck_distribution d;
        ck_dist_make(&e, &d);
        ck_access_layout lay;
        memset(&lay, 0, sizeof lay);
        lay.ndim = e.ndim_x;
        long long stride = dr_uniform(&s, 1, 2);
        for (int i = e.ndim_x - 1; i >= 0; --i) { /* row-major with random padding */
            lay.strides[i] = stride;
            stride *= d.x_lengths[i] + dr_uniform(&s, 0, 3);
        }
        if (dr_uniform(&s, 0, 3) == 0) /* sometimes a permuted layout */
            lay.strides[0] = 1;
        lay.base_bytes = 16 * dr_uniform(&s, 0, 3) + (dr_uniform(&s, 0, 3) == 0 ? 4 : 0);
        int eb = ebs[dr_uniform(&s, 0, 3)];
        lay.swizzle = (ck_nv_swizzle)dr_uniform(&s, 0, 3);
        ck_access_report rep;
        if (ck_access_check(&d, &lay, eb, NULL, &rep) != CK_SUCCESS) {
            CHECK_MSG(0, "iteration %d: %s", iter, ck_last_error());
            continue;
        }
        CHECK_EQ_INT(rep.coverage_ok, 1);
        bad += brute_check(&d, &lay, eb, &rep);
        ck_access_report_free(&rep);
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_bad_input(void)
{
    ck_dist_encoding e;
    ck_distribution d;
    ck_access_report rep;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_WARP_RAKED, 64, 16, 16, 4, &e));
    CHECK_OK(ck_dist_make(&e, &d));
    ck_access_layout lay1 = {1, {1}, 0, CK_NV_SWIZZLE_NONE},
                     neg = {2, {-16, 1}, 0, CK_NV_SWIZZLE_NONE},
                     ok = {2, {16, 1}, 0, CK_NV_SWIZZLE_NONE};
    CHECK_STATUS(ck_access_check(&d, &lay1, 4, NULL, &rep), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check(&d, &neg, 4, NULL, &rep), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check(&d, &ok, 0, NULL, &rep), CK_ERROR_INVALID_ARGUMENT);
    ck_access_hw hw = ck_access_hw_default();
    hw.num_banks = 0;
    CHECK_STATUS(ck_access_check(&d, &ok, 4, &hw, &rep), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check(NULL, &ok, 4, NULL, &rep), CK_ERROR_INVALID_ARGUMENT);
    ck_access_report_free(NULL);
}

int main(void)
{
    RUN_TEST(test_known_patterns);
    RUN_TEST(test_swizzled_columns);
    RUN_TEST(test_coverage_report);
    RUN_TEST(test_random_brute_force);
    RUN_TEST(test_bad_input);
    return CK_TEST_REPORT();
}
