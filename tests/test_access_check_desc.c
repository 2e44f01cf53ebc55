/* Access verification through a tensor descriptor (ck_access_check_desc): the traits'
 * vectors, padding masked, and a brute-force recount of sectors and bank ways that computes
 * every element's offset through the descriptor on its own (no contiguity assumed). */
#include <stdio.h>
#include <stdlib.h>

#include "ck/tile.h"
#include "dist_random.h"
#include "test.h"

static uint64_t g_seed = 0xacce55de5cULL;

/* Recount every stat of `rep` with byte bitmaps. Returns the number of mismatches. */
static long long brute_check(const ck_distribution *d, const ck_descriptor *desc, int eb,
                             long long base, ck_nv_swizzle swz, const ck_access_report *rep)
{
    const ck_dist_encoding *e = &d->enc;
    const ck_load_store_traits *t = &rep->traits;
    const int v = t->scalars_per_vector, vdim = t->vector_dim_y;
    long long space = ck_descriptor_element_space_size(desc).v;
    long long nbytes = (base + space * eb + 64 + 1023) / 1024 * 1024;
    unsigned char *bytes = malloc((size_t)nbytes);
    long long bad = 0, k = 0, masked = 0, misaligned = 0;
    for (long long a = 0; a < t->num_accesses; ++a) {
        int y[CK_DIST_MAX_Y] = {0};
        if (e->ndim_y)
            ck_sfc_get_index(&t->sfc, a, y);
        for (int w = 0; w < rep->warps; ++w, ++k) {
            memset(bytes, 0, (size_t)nbytes);
            for (int l = 0; l < 32 && (long long)w * 32 + l < d->threads; ++l) {
                int p[CK_DIST_MAX_P], x[CK_DIST_MAX_X];
                ck_dist_partition_index(d, (long long)w * 32 + l, p);
                int nvalid = 0;
                for (int i = 0; i < v; ++i) {
                    int yi[CK_DIST_MAX_Y];
                    memcpy(yi, y, sizeof yi);
                    if (vdim >= 0)
                        yi[vdim] += i;
                    ck_dist_calculate_x(d, p, yi, x);
                    int64_t xi[CK_DIST_MAX_X], off;
                    for (int j = 0; j < e->ndim_x; ++j)
                        xi[j] = x[j];
                    int valid;
                    ck_descriptor_is_valid_index(desc, xi, &valid);
                    if (!valid)
                        continue;
                    ++nvalid;
                    ck_descriptor_calculate_offset(desc, xi, &off);
                    long long addr = base + off * eb;
                    if (i == 0 && addr % ((long long)v * eb))
                        ++misaligned;
                    for (long long b = addr; b < addr + eb; ++b) {
                        long long ph = b;
                        ck_nv_swizzle_offset(swz, b, &ph);
                        bytes[ph] = 1;
                    }
                }
                bad += nvalid != 0 && nvalid != v; /* a vector half in padding */
                masked += nvalid == 0;
            }
            long long marked = 0, sectors = 0, words = 0, per_bank[32] = {0}, ways = 0;
            for (long long s0 = 0; s0 < nbytes; s0 += 32) {
                int any = 0;
                for (long long b = s0; b < s0 + 32; ++b) {
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
    bad += masked != rep->masked_accesses;
    bad += misaligned != rep->misaligned_accesses;
    free(bytes);
    return bad;
}

/* Row-major naive descriptor over the X lengths with row pitch `pitch_extra` elements longer,
 * the last dim optionally right-padded from (X - pad) to X. */
static ck_status make_desc(const ck_distribution *d, int pitch_extra, int pad, ck_descriptor **out)
{
    int n = d->enc.ndim_x;
    ck_ival len[CK_DIST_MAX_X], str[CK_DIST_MAX_X];
    for (int i = 0; i < n; ++i)
        len[i] = ck_ival_int(d->x_lengths[i]);
    if (pad >= d->x_lengths[n - 1])
        pad = 0;
    len[n - 1] = ck_ival_int(d->x_lengths[n - 1] - pad);
    long long acc = 1;
    for (int i = n - 1; i >= 0; --i) {
        str[i] = ck_ival_int(acc);
        acc *= len[i].v + (i == n - 1 ? pitch_extra : 0);
    }
    ck_descriptor *base = NULL;
    ck_status st = ck_descriptor_make_naive(n, len, str, &base);
    if (st || pad == 0) {
        *out = base;
        return st;
    }
    ck_transform t;
    int last = n - 1;
    st = ck_make_right_pad_transform(len[last], ck_ival_int(pad), &t);
    if (!st)
        st = ck_descriptor_transform_one(base, &t, &last, -1, out);
    ck_descriptor_destroy(base);
    return st;
}

static void test_random(void)
{
    static const ck_dtype types[] = {CK_DTYPE_F32, CK_DTYPE_F16, CK_DTYPE_I8, CK_DTYPE_F64};
    uint64_t s = g_seed;
    int n = 0, vec = 0, pads = 0;
    for (int i = 0; i < 300; ++i) {
        ck_dist_encoding e;
        ck_distribution d;
        dr_encoding(&s, -1, -1, &e);
        CHECK_OK(ck_dist_make(&e, &d));
        ck_descriptor *desc = NULL;
        CHECK_OK(make_desc(&d, dr_uniform(&s, 0, 3), dr_uniform(&s, 0, 3), &desc));
        if (!desc)
            continue;
        ck_dtype dt = types[dr_uniform(&s, 0, 3)];
        int eb = ck_dtype_get(dt)->storage_bits / 8;
        long long base = dr_uniform(&s, 0, 3) ? 0 : eb * dr_uniform(&s, 1, 7);
        ck_nv_swizzle swz = (ck_nv_swizzle)dr_uniform(&s, 0, 3);
        ck_access_report rep;
        CHECK_OK(ck_access_check_desc(&d, desc, dt, base, swz, NULL, &rep));
        CHECK(rep.has_traits);
        CHECK(rep.coverage_ok);
        long long bad = brute_check(&d, desc, eb, base, swz, &rep);
        if (bad) {
            char buf[2048];
            ck_dist_encoding_format(&e, buf, sizeof buf);
            CHECK_MSG(0, "case %d: %lld mismatches for %s", i, bad, buf);
        }
        vec += rep.vector_elems > 1;
        pads += rep.masked_accesses > 0;
        ++n;
        ck_access_report_free(&rep);
        ck_descriptor_destroy(desc);
    }
    CHECK_EQ_INT(n, 300);
    CHECK(vec > 40 && pads > 20);
    printf("  %d cases, %d with vectors, %d with masked accesses\n", n, vec, pads);
}

/* CK's thread-raked 64x64 f16 pattern, vector 8: 16-byte vectors, every sector used. With
 * the rows padded from 60 to 64 columns the vectors halve (60 is not a multiple of 8) and
 * the accesses to the 4 padded columns are masked. */
static void test_known(void)
{
    ck_dist_encoding e;
    ck_distribution d;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 256, 64, 64, 8, &e));
    CHECK_OK(ck_dist_make(&e, &d));
    ck_descriptor *desc = NULL;
    ck_access_report rep;
    CHECK_OK(make_desc(&d, 0, 0, &desc));
    CHECK_OK(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 0, CK_NV_SWIZZLE_NONE, NULL, &rep));
    CHECK_EQ_INT(rep.vector_elems, 8);
    CHECK_EQ_INT(rep.vector_bytes, 16);
    CHECK_EQ_INT(rep.sectors_total, rep.sectors_min_total);
    CHECK_EQ_INT(rep.misaligned_accesses, 0);
    CHECK_EQ_INT(rep.masked_accesses, 0);
    CHECK_EQ_INT(brute_check(&d, desc, 2, 0, CK_NV_SWIZZLE_NONE, &rep), 0);
    ck_access_report_free(&rep);
    ck_descriptor_destroy(desc);
    CHECK_OK(make_desc(&d, 0, 4, &desc));
    CHECK_OK(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 0, CK_NV_SWIZZLE_NONE, NULL, &rep));
    CHECK_EQ_INT(rep.vector_elems, 4);
    CHECK_EQ_INT(rep.masked_accesses, 64 * 1); /* 64 rows, one 4-wide access each at 60..63 */
    CHECK_EQ_INT(brute_check(&d, desc, 2, 0, CK_NV_SWIZZLE_NONE, &rep), 0);
    ck_access_report_free(&rep);
    /* A narrower hardware limit (8 bytes) caps the traits too. */
    ck_access_hw hw = ck_access_hw_default();
    hw.max_vector_bytes = 8;
    ck_descriptor_destroy(desc);
    CHECK_OK(make_desc(&d, 0, 0, &desc));
    CHECK_OK(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 2, CK_NV_SWIZZLE_NONE, &hw, &rep));
    CHECK_EQ_INT(rep.traits.scalars_per_vector, 4);
    CHECK_EQ_INT(rep.misaligned_accesses, 256 * 4); /* base 2 bytes: every access misaligned */
    CHECK_EQ_INT(brute_check(&d, desc, 2, 2, CK_NV_SWIZZLE_NONE, &rep), 0);
    ck_access_report_free(&rep);
    /* Bad input. */
    CHECK_STATUS(
        ck_access_check_desc(&d, desc, CK_DTYPE_FP4_E2M1, 0, CK_NV_SWIZZLE_NONE, NULL, &rep),
        CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_access_check_desc(&d, desc, (ck_dtype)-1, 0, CK_NV_SWIZZLE_NONE, NULL, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check_desc(&d, desc, CK_DTYPE_F16, -2, CK_NV_SWIZZLE_NONE, NULL, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 0, (ck_nv_swizzle)9, NULL, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_access_check_desc(&d, NULL, CK_DTYPE_F16, 0, CK_NV_SWIZZLE_NONE, NULL, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    hw.max_vector_bytes = 1;
    CHECK_STATUS(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 0, CK_NV_SWIZZLE_NONE, &hw, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    ck_descriptor_destroy(desc);
    ck_ival l3[2] = {ck_ival_int(64), ck_ival_int(32)};
    CHECK_OK(ck_descriptor_make_packed(2, l3, &desc));
    CHECK_STATUS(ck_access_check_desc(&d, desc, CK_DTYPE_F16, 0, CK_NV_SWIZZLE_NONE, NULL, &rep),
                 CK_ERROR_INVALID_ARGUMENT);
    ck_descriptor_destroy(desc);
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)g_seed);
    RUN_TEST(test_random);
    RUN_TEST(test_known);
    return CK_TEST_REPORT();
}
