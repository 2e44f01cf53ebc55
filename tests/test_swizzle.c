/* Swizzles: LDS XOR pre-shuffle, Morton codes and tiled Morton layout, NVIDIA 32/64/128-byte
 * modes — bijections, worked examples (after ERRATA), and their bank-conflict purpose. */
#include <stdlib.h>

#include "ck/distribution.h"
#include "test.h"

/* The CK transform chain evaluated step by step: merge^-1 (M -> m0, L; K -> k0, k1),
 * unmerge (L, k0 -> K0L), xor on (m0, K0L), then the naive descriptor's strides. */
static long long lds_chain(const ck_lds_xor *s, int m, int k)
{
    int k0n = s->k_per_block / s->kpack;
    int upper[4] = {m % s->mlds_layer, m / s->mlds_layer, k / s->kpack,
                    k % s->kpack}; /* L, M0, K0, K1 */
    int k0l_up = upper[0] * k0n + upper[2];
    int len1 = k0n * s->mlds_layer;
    int low[3] = {k0l_up ^ (upper[1] % len1), upper[1], upper[3]}; /* K0L, M0, K1 */
    long long strides[3] = {s->kpack, (long long)s->k_per_block * s->mlds_layer, 1};
    return low[0] * strides[0] + low[1] * strides[1] + low[2] * strides[2];
}

static void test_lds_xor(void)
{
    static const ck_lds_xor cases[] = {{64, 64, 8, 1}, {128, 32, 8, 2},  {32, 64, 4, 2},
                                       {16, 16, 4, 4}, {64, 128, 16, 1}, {8, 8, 8, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const ck_lds_xor *s = &cases[c];
        CHECK_OK(ck_lds_xor_check(s));
        long long n = (long long)s->m_per_block * s->k_per_block, bad = 0, bad_inv = 0, bad_ref = 0;
        char *hit = calloc((size_t)n, 1);
        for (int m = 0; m < s->m_per_block; ++m)
            for (int k = 0; k < s->k_per_block; ++k) {
                long long off;
                int mm, kk;
                CHECK_OK(ck_lds_xor_offset(s, m, k, &off));
                bad_ref += off != lds_chain(s, m, k);
                if (off < 0 || off >= n || hit[off]++)
                    ++bad;
                else {
                    ck_lds_xor_inverse(s, off, &mm, &kk);
                    bad_inv += mm != m || kk != k;
                }
                /* MLdsLayer rows m and m+1 of one layer share the physical row m / MLdsLayer. */
                bad += off / ((long long)s->k_per_block * s->mlds_layer) != m / s->mlds_layer;
            }
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(bad_inv, 0);
        CHECK_EQ_INT(bad_ref, 0);
        free(hit);
    }
    /* Purpose: with KPack-wide vectors, 8 consecutive rows reading the same K0 chunk land in
     * 8 different 16-byte chunks of a 128-byte span (fp16, KPack = 8, K = 64). */
    ck_lds_xor s = {64, 64, 8, 1};
    for (int k0 = 0; k0 < 8; ++k0) {
        int used = 0;
        for (int m = 0; m < 8; ++m) {
            long long off;
            ck_lds_xor_offset(&s, m, k0 * 8, &off);
            used |= 1 << (int)((off * 2 / 16) % 8);
        }
        CHECK_EQ_INT(used, 0xff);
    }
    ck_lds_xor bad1 = {64, 48, 8, 1}, bad2 = {63, 64, 8, 2}, bad3 = {64, 60, 8, 1};
    CHECK_STATUS(ck_lds_xor_check(&bad1), CK_ERROR_INVALID_ARGUMENT); /* K0 = 6 */
    CHECK_STATUS(ck_lds_xor_check(&bad2), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_lds_xor_check(&bad3), CK_ERROR_INVALID_ARGUMENT);
    long long off;
    CHECK_STATUS(ck_lds_xor_offset(&s, 64, 0, &off), CK_ERROR_INVALID_ARGUMENT);
}

static void test_morton(void)
{
    /* §7.18.2's 4x4 layout. */
    static const int table[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
            long long c;
            CHECK_OK(ck_morton_encode(2, y, x, &c));
            CHECK_EQ_INT(c, table[y][x]);
        }
    /* Round trip and bit interleave written differently (multiplication by powers of 4). */
    long long bad = 0;
    for (int bits = 0; bits <= 5; ++bits)
        for (int y = 0; y < (1 << bits); ++y)
            for (int x = 0; x < (1 << bits); ++x) {
                long long c, ref = 0, p4 = 1;
                int yy, xx;
                ck_morton_encode(bits, y, x, &c);
                for (int i = 0; i < bits; ++i, p4 *= 4)
                    ref += p4 * (((x >> i) & 1) + 2 * ((y >> i) & 1));
                ck_morton_decode(bits, c, &yy, &xx);
                bad += c != ref || yy != y || xx != x;
            }
    CHECK_EQ_INT(bad, 0);
    /* Tiled layout: bijection, tiles contiguous in row-major tile order. */
    static const int shapes[][3] = {{8, 8, 4}, {16, 8, 2}, {4, 12, 4}, {32, 32, 8}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        int h = shapes[i][0], w = shapes[i][1], t = shapes[i][2];
        char *hit = calloc((size_t)(h * w), 1);
        long long badt = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                long long off;
                int yy, xx;
                CHECK_OK(ck_morton_tiled_offset(h, w, t, y, x, &off));
                if (off < 0 || off >= h * w || hit[off]++)
                    ++badt;
                ck_morton_tiled_inverse(h, w, t, off, &yy, &xx);
                badt += yy != y || xx != x;
                badt += off / (t * t) != (y / t) * (w / t) + x / t;
            }
        CHECK_EQ_INT(badt, 0);
        free(hit);
    }
    /* ERRATA (000:L7023-7070): the document's counting gives 1-way for row-major, 2-way for
     * Morton (tid % 16 repeats each offset twice; the counter counts accesses, not words). */
    int row_banks[32] = {0}, mort_banks[32] = {0}, row_max = 0, mort_max = 0;
    for (int tid = 0; tid < 32; ++tid) {
        int y, x;
        int r = ++row_banks[((tid / 4) * 4 + tid % 4) % 32];
        ck_morton_decode(2, tid % 16, &y, &x);
        int m = ++mort_banks[(y * 4 + x) % 32];
        row_max = r > row_max ? r : row_max;
        mort_max = m > mort_max ? m : mort_max;
    }
    CHECK_EQ_INT(row_max, 1);
    CHECK_EQ_INT(mort_max, 2);
    long long c;
    int y, x;
    CHECK_STATUS(ck_morton_encode(2, 4, 0, &c), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_morton_encode(16, 0, 0, &c), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_morton_decode(2, 16, &y, &x), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_morton_tiled_offset(8, 8, 3, 0, 0, &c), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_morton_tiled_offset(8, 6, 4, 0, 0, &c), CK_ERROR_INVALID_ARGUMENT);
}

static void test_nv_swizzle(void)
{
    for (int mode = 0; mode <= 3; ++mode) {
        long long period = mode ? 128LL << mode : 16; /* 256, 512, 1024 bytes */
        long long bad = 0;
        char *hit = calloc(4096, 1);
        for (long long a = 0; a < 4096; ++a) {
            long long s, back;
            CHECK_OK(ck_nv_swizzle_offset((ck_nv_swizzle)mode, a, &s));
            ck_nv_swizzle_offset((ck_nv_swizzle)mode, s, &back);
            bad += back != a;                /* involution */
            bad += s / period != a / period; /* stays within its repeating block */
            bad += s % 16 != a % 16;         /* 16-byte chunks move whole */
            if (s < 0 || s >= 4096 || hit[s]++)
                ++bad;
            /* Definition written with rows and chunks: span = 16 << mode bytes, the chunk
             * within the span is XORed with (128-byte row index) mod (span / 16). */
            if (mode) {
                long long span = 16LL << mode, chunks = span / 16;
                long long row = a / 128, chunk = (a % span) / 16;
                long long want = a - chunk * 16 + ((chunk ^ (row % chunks)) * 16);
                bad += s != want;
            } else {
                bad += s != a;
            }
        }
        CHECK_EQ_INT(bad, 0);
        free(hit);
    }
    /* 128B mode: 8 rows of 128 bytes reading logical chunk c hit 8 distinct chunks (all 32
     * banks once): conflict-free 16-byte loads by 8 lanes. */
    for (int c = 0; c < 8; ++c) {
        int used = 0;
        for (int r = 0; r < 8; ++r) {
            long long s;
            ck_nv_swizzle_offset(CK_NV_SWIZZLE_128B, r * 128 + c * 16, &s);
            used |= 1 << (int)((s % 128) / 16);
        }
        CHECK_EQ_INT(used, 0xff);
    }
    long long s;
    CHECK_STATUS(ck_nv_swizzle_offset((ck_nv_swizzle)4, 0, &s), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_nv_swizzle_offset(CK_NV_SWIZZLE_64B, -1, &s), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_nv_swizzle_offset(CK_NV_SWIZZLE_64B, 0, NULL), CK_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN_TEST(test_lds_xor);
    RUN_TEST(test_morton);
    RUN_TEST(test_nv_swizzle);
    return CK_TEST_REPORT();
}
