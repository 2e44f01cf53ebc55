/*
 * Reference semantics of mma.sync, ldmatrix and stmatrix (src/device/host/ck_emu_tensor_ref.h),
 * checked against an independent model: fragment layouts are written here from the PTX ISA's
 * per-element formulas ("row = groupID for a_i where i < 2 || 4 <= i < 6 ..."), numbers are
 * decoded here with ldexp from their fields, the product is a long double triple loop.
 */
#include <float.h>
#include <stdlib.h>

#include "device/host/ck_emu_tensor_ref.h"
#include "test.h"

static uint64_t rng = 0x5EED7E4502ull;

static unsigned rnd(unsigned n)
{
    return (unsigned)(ckt_rand64(&rng) % n);
}

/* ---------------------------------------------------------------- independent decoding */

static long double dec(ck_emu_elem f, uint32_t v)
{
    int s, e, m;
    switch (f) {
    case CK_EMU_F16:
        s = (v >> 15) & 1, e = (v >> 10) & 31, m = v & 1023;
        return (s ? -1 : 1) * (e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24));
    case CK_EMU_BF16:
        s = (v >> 15) & 1, e = (v >> 7) & 255, m = v & 127;
        return (s ? -1 : 1) * (e ? ldexpl(128 + m, e - 134) : ldexpl(m, -133));
    case CK_EMU_TF32: /* the low 13 mantissa bits are ignored */
        s = (v >> 31) & 1, e = (v >> 23) & 255, m = (v >> 13) & 1023;
        return (s ? -1 : 1) * (e ? ldexpl(1024 + m, e - 137) : ldexpl(m, -136));
    case CK_EMU_E4M3:
        s = (v >> 7) & 1, e = (v >> 3) & 15, m = v & 7;
        return (s ? -1 : 1) * (e ? ldexpl(8 + m, e - 10) : ldexpl(m, -9));
    case CK_EMU_E5M2:
        s = (v >> 7) & 1, e = (v >> 2) & 31, m = v & 3;
        return (s ? -1 : 1) * (e ? ldexpl(4 + m, e - 17) : ldexpl(m, -16));
    case CK_EMU_S8:
        return (int8_t)v;
    case CK_EMU_U8:
        return (uint8_t)v;
    }
    return 0;
}

/* Random finite bit patterns with moderate exponents (no overflow in the sums). */
static uint32_t gen(ck_emu_elem f)
{
    uint32_t r = (uint32_t)ckt_rand64(&rng);
    switch (f) {
    case CK_EMU_F16:
        return (r & 0x83FFu) | ((10u + rnd(10)) << 10);
    case CK_EMU_BF16:
        return (r & 0x807Fu) | ((120u + rnd(14)) << 7);
    case CK_EMU_TF32:
        return (r & 0x807FFFFFu) | ((120u + rnd(14)) << 23); /* low bits junk */
    case CK_EMU_E4M3: {
        uint32_t b = r & 0xFFu;
        return (b & 0x7Fu) == 0x7Fu ? b ^ 1u : b;
    }
    case CK_EMU_E5M2:
        return (r & 0x83u) | (rnd(28) << 2);
    default:
        return r & 0xFFu;
    }
}

/* ---------------------------------------------------------------- layouts from the PTX ISA */

/* Element i of the A fragment (PTX numbering a0, a1, ...) → (row, col). */
static void a_elem(int k, ck_emu_elem f, unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = lane / 4, t = lane % 4;
    if (k == 32) { /* m16n8k32 8-bit, a0..a15 */
        *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    } else if (f == CK_EMU_TF32) { /* m16n8k8 tf32, a0..a3 */
        *row = (i == 0 || i == 2) ? g : g + 8;
        *col = i < 2 ? t : t + 4;
    } else if (k == 16) { /* m16n8k16 16-bit, a0..a7 */
        *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        *col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    } else { /* m16n8k8 16-bit, a0..a3 */
        *row = i < 2 ? g : g + 8;
        *col = t * 2 + (i & 1);
    }
}

static void b_elem(int k, ck_emu_elem f, unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = lane / 4, t = lane % 4;
    *col = g;
    if (k == 32)
        *row = i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    else if (f == CK_EMU_TF32)
        *row = i == 0 ? t : t + 4;
    else
        *row = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
}

/* Accumulator element i (c0..c3) → (row, col). */
static void c_elem(unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    *row = i < 2 ? lane / 4 : lane / 4 + 8;
    *col = (lane % 4) * 2 + (i & 1);
}

/* Number of A and B elements per lane and their bit width. */
static void frag_size(int k, ck_emu_elem f, unsigned *na, unsigned *nb, unsigned *bits)
{
    if (f == CK_EMU_TF32)
        *na = 4, *nb = 2, *bits = 32;
    else if (k == 32)
        *na = 16, *nb = 8, *bits = 8;
    else
        *na = k / 2, *nb = k / 4, *bits = 16;
}

static void put(uint32_t *reg, unsigned i, unsigned bits, uint32_t v)
{
    unsigned per = 32 / bits, r = i / per, sh = (i % per) * bits;
    uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
    reg[r] = (reg[r] & ~(mask << sh)) | ((v & mask) << sh);
}

typedef struct problem {
    int k;
    ck_emu_elem fa, fb;
    uint32_t A[16][32], B[32][8]; /* bit patterns */
    uint32_t a[32][4], b[32][2];
} problem;

static void make_problem(problem *p, int k, ck_emu_elem fa, ck_emu_elem fb)
{
    unsigned na, nb, bits;
    p->k = k, p->fa = fa, p->fb = fb;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < k; ++c)
            p->A[r][c] = gen(fa);
    for (int r = 0; r < k; ++r)
        for (int c = 0; c < 8; ++c)
            p->B[r][c] = gen(fb);
    frag_size(k, fa, &na, &nb, &bits);
    memset(p->a, 0xA5, sizeof p->a); /* unused registers hold junk */
    memset(p->b, 0x5A, sizeof p->b);
    for (unsigned lane = 0; lane < 32; ++lane) {
        for (unsigned i = 0; i < na; ++i) {
            unsigned row, col;
            a_elem(k, fa, lane, i, &row, &col);
            put(p->a[lane], i, bits, p->A[row][col]);
        }
        for (unsigned i = 0; i < nb; ++i) {
            unsigned row, col;
            b_elem(k, fb, lane, i, &row, &col);
            put(p->b[lane], i, bits, p->B[row][col]);
        }
    }
}

/* sum over k of A*B for one output, and the sum of magnitudes (for the tolerance) */
static long double dot(const problem *p, unsigned row, unsigned col, long double *mag)
{
    long double s = 0;
    *mag = 0;
    for (int i = 0; i < p->k; ++i) {
        long double t = dec(p->fa, p->A[row][i]) * dec(p->fb, p->B[i][col]);
        s += t;
        *mag += fabsl(t);
    }
    return s;
}

static void check_f32(int k, ck_emu_elem fa, ck_emu_elem fb, ck_emu_mma_shape shape)
{
    static problem p;
    float c[32][4], d[32][4];
    float C[16][8];
    make_problem(&p, k, fa, fb);
    for (int r = 0; r < 16; ++r)
        for (int cc = 0; cc < 8; ++cc)
            C[r][cc] = (float)((int)rnd(2001) - 1000) / 64.0f;
    for (unsigned lane = 0; lane < 32; ++lane)
        for (unsigned i = 0; i < 4; ++i) {
            unsigned row, col;
            c_elem(lane, i, &row, &col);
            c[lane][i] = C[row][col];
        }
    ck_emu_ref_mma_f32(shape, fa, fb, d, (const uint32_t(*)[4])p.a, (const uint32_t(*)[2])p.b,
                       (const float(*)[4])c);
    int bad = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
        for (unsigned i = 0; i < 4; ++i) {
            unsigned row, col;
            long double mag;
            c_elem(lane, i, &row, &col);
            long double want = dot(&p, row, col, &mag) + C[row][col];
            long double tol = (mag + fabsl((long double)C[row][col])) * ldexpl(1, -22);
            if (fabsl(d[lane][i] - want) > tol)
                ++bad;
        }
    CHECK_MSG(bad == 0, "mma f32 k%d fa=%d fb=%d: %d of 128 outputs wrong", k, fa, fb, bad);
}

static void test_mma_float_accumulate(void)
{
    for (int rep = 0; rep < 20; ++rep) {
        check_f32(8, CK_EMU_F16, CK_EMU_F16, CK_EMU_M16N8K8);
        check_f32(8, CK_EMU_BF16, CK_EMU_BF16, CK_EMU_M16N8K8);
        check_f32(16, CK_EMU_F16, CK_EMU_F16, CK_EMU_M16N8K16);
        check_f32(16, CK_EMU_BF16, CK_EMU_BF16, CK_EMU_M16N8K16);
        check_f32(8, CK_EMU_TF32, CK_EMU_TF32, CK_EMU_M16N8K8);
        check_f32(32, CK_EMU_E4M3, CK_EMU_E4M3, CK_EMU_M16N8K32);
        check_f32(32, CK_EMU_E5M2, CK_EMU_E5M2, CK_EMU_M16N8K32);
        check_f32(32, CK_EMU_E4M3, CK_EMU_E5M2, CK_EMU_M16N8K32);
    }
}

static void test_mma_f16_accumulate(void)
{
    for (int rep = 0; rep < 20; ++rep)
        for (int k = 8; k <= 16; k += 8) {
            static problem p;
            uint32_t c[32][2], d[32][2];
            uint16_t C[16][8];
            make_problem(&p, k, CK_EMU_F16, CK_EMU_F16);
            for (int r = 0; r < 16; ++r)
                for (int cc = 0; cc < 8; ++cc)
                    C[r][cc] = (uint16_t)gen(CK_EMU_F16);
            /* C/D f16: c0,c1 row g, c2,c3 row g+8; col 2t + (i & 1); two per register */
            for (unsigned lane = 0; lane < 32; ++lane)
                for (unsigned i = 0; i < 4; ++i) {
                    unsigned row = i < 2 ? lane / 4 : lane / 4 + 8, col = (lane % 4) * 2 + (i & 1);
                    put(c[lane], i, 16, C[row][col]);
                }
            ck_emu_ref_mma_f16acc(k == 8 ? CK_EMU_M16N8K8 : CK_EMU_M16N8K16, d,
                                  (const uint32_t(*)[4])p.a, (const uint32_t(*)[2])p.b,
                                  (const uint32_t(*)[2])c);
            int bad = 0;
            for (unsigned lane = 0; lane < 32; ++lane)
                for (unsigned i = 0; i < 4; ++i) {
                    unsigned row = i < 2 ? lane / 4 : lane / 4 + 8, col = (lane % 4) * 2 + (i & 1);
                    long double mag;
                    long double want = dot(&p, row, col, &mag) + dec(CK_EMU_F16, C[row][col]);
                    long double got = dec(CK_EMU_F16, (d[lane][i / 2] >> (16 * (i & 1))) & 0xFFFF);
                    /* one f16 rounding: half an ulp of the result, plus double-sum slack */
                    long double ulp = ldexpl(1, (int)floorl(log2l(fabsl(want) + 1e-30L)) - 10);
                    if (ulp < ldexpl(1, -24))
                        ulp = ldexpl(1, -24);
                    if (fabsl(got - want) > 0.5L * ulp + mag * ldexpl(1, -40))
                        ++bad;
                }
            CHECK_MSG(bad == 0, "mma f16-accumulate k%d: %d of 128 outputs wrong", k, bad);
        }
}

static void test_mma_integer(void)
{
    static const ck_emu_elem fmts[2] = {CK_EMU_S8, CK_EMU_U8};
    for (int rep = 0; rep < 10; ++rep)
        for (int ia = 0; ia < 2; ++ia)
            for (int ib = 0; ib < 2; ++ib)
                for (int sat = 0; sat < 2; ++sat) {
                    static problem p;
                    int32_t c[32][4], d[32][4];
                    int64_t C[16][8];
                    make_problem(&p, 32, fmts[ia], fmts[ib]);
                    for (int r = 0; r < 16; ++r)
                        for (int cc = 0; cc < 8; ++cc) {
                            /* some accumulators near the limits so wrap/saturation matters */
                            int64_t big = (cc & 1) ? INT32_MAX - 3000 : INT32_MIN + 3000;
                            C[r][cc] = (r & 1) ? big : (int64_t)(int32_t)ckt_rand64(&rng) / 4;
                        }
                    for (unsigned lane = 0; lane < 32; ++lane)
                        for (unsigned i = 0; i < 4; ++i) {
                            unsigned row, col;
                            c_elem(lane, i, &row, &col);
                            c[lane][i] = (int32_t)C[row][col];
                        }
                    ck_emu_ref_mma_s32(fmts[ia], fmts[ib], sat, d, (const uint32_t(*)[4])p.a,
                                       (const uint32_t(*)[2])p.b, (const int32_t(*)[4])c);
                    int bad = 0;
                    for (unsigned lane = 0; lane < 32; ++lane)
                        for (unsigned i = 0; i < 4; ++i) {
                            unsigned row, col;
                            long double mag;
                            c_elem(lane, i, &row, &col);
                            int64_t want = (int64_t)dot(&p, row, col, &mag) + C[row][col];
                            if (sat)
                                want = want > INT32_MAX   ? INT32_MAX
                                       : want < INT32_MIN ? INT32_MIN
                                                          : want;
                            else
                                want = (int64_t)(int32_t)(uint32_t)((uint64_t)want & 0xFFFFFFFFu);
                            if (d[lane][i] != want)
                                ++bad;
                        }
                    CHECK_MSG(bad == 0, "mma s32 %d/%d sat=%d: %d of 128 outputs wrong", ia, ib,
                              sat, bad);
                }
}

/* every finite f16 survives decode → encode; midpoints between neighbours round to even */
static void test_f16_rounding(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        if ((h & 0x7C00u) == 0x7C00u)
            continue;
        if (ck_emu_double_to_f16((double)dec(CK_EMU_F16, h)) != h && (h & 0x7FFFu))
            ++bad;
        uint32_t n = h + 1; /* next larger magnitude, same sign */
        if ((n & 0x7FFFu) == 0 || (h & 0x7FFFu) == 0x7BFFu)
            continue;
        long double mid = (dec(CK_EMU_F16, h) + dec(CK_EMU_F16, n)) / 2;
        uint32_t even = (h & 1u) ? n : h;
        if (ck_emu_double_to_f16((double)mid) != even)
            ++bad;
    }
    CHECK_MSG(bad == 0, "f16 rounding: %d mismatches", bad);
    CHECK_EQ_INT(ck_emu_double_to_f16(65520.0), 0x7C00); /* rounds up past the largest finite */
    CHECK_EQ_INT(ck_emu_double_to_f16(65519.0), 0x7BFF);
    CHECK_EQ_INT(ck_emu_double_to_f16(-1e-10), 0x8000);
}

/* ---------------------------------------------------------------- ldmatrix / stmatrix */

/* ldmatrix.x4 of a row-major 16x16 tile (matrices: rows 0-7/8-15 x cols 0-7/8-15 in the order
 * of the mma A registers) must produce exactly the m16n8k16 A fragment; ldmatrix.x2.trans of a
 * row-major 16(k) x 8(n) tile must produce the B fragment. Rows live at scattered addresses. */
static void test_ldmatrix_matches_mma_fragments(void)
{
    for (int rep = 0; rep < 50; ++rep) {
        uint16_t pool[64][8]; /* 64 candidate rows of 16 bytes */
        unsigned perm[64];
        for (int i = 0; i < 64; ++i) {
            perm[i] = (unsigned)i;
            for (int j = 0; j < 8; ++j)
                pool[i][j] = (uint16_t)ckt_rand64(&rng);
        }
        for (int i = 63; i > 0; --i) {
            unsigned j = rnd((unsigned)i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        /* tile element (r, c) of the 16x16 A tile lives in pool[perm[r*2 + c/8]][c%8] */
        const void *rows[32];
        for (unsigned lane = 0; lane < 32; ++lane) {
            unsigned mat = lane / 8, r = lane % 8;
            unsigned tr = r + 8 * (mat & 1), tc8 = mat >> 1; /* matrix order: a0..a3 regs */
            rows[lane] = pool[perm[tr * 2 + tc8]];
        }
        uint32_t out[32][4];
        ck_emu_ref_ldmatrix(4, 0, out, rows);
        int bad = 0;
        for (unsigned lane = 0; lane < 32; ++lane)
            for (unsigned i = 0; i < 8; ++i) {
                unsigned row, col;
                a_elem(16, CK_EMU_F16, lane, i, &row, &col);
                uint16_t want = pool[perm[row * 2 + col / 8]][col % 8];
                if ((uint16_t)(out[lane][i / 2] >> (16 * (i & 1))) != want)
                    ++bad;
            }
        CHECK_MSG(bad == 0, "ldmatrix.x4 vs mma A fragment: %d wrong", bad);

        /* B tile 16(k) x 8(n) row-major: row k at pool[perm[k]]; matrices k0-7, k8-15 */
        for (unsigned lane = 0; lane < 16; ++lane)
            rows[lane] = pool[perm[lane]];
        for (unsigned lane = 16; lane < 32; ++lane)
            rows[lane] = NULL; /* unused for .x2 */
        memset(out, 0, sizeof out);
        ck_emu_ref_ldmatrix(2, 1, out, rows);
        bad = 0;
        for (unsigned lane = 0; lane < 32; ++lane)
            for (unsigned i = 0; i < 4; ++i) {
                unsigned row, col;
                b_elem(16, CK_EMU_F16, lane, i, &row, &col);
                uint16_t want = pool[perm[row]][col];
                if ((uint16_t)(out[lane][i / 2] >> (16 * (i & 1))) != want)
                    ++bad;
            }
        CHECK_MSG(bad == 0, "ldmatrix.x2.trans vs mma B fragment: %d wrong", bad);
    }
}

/* x1/x2/x4 with and without .trans: each register element against the documented formula,
 * and stmatrix writes back exactly what ldmatrix read (registers beyond num untouched). */
static void test_ldmatrix_stmatrix_roundtrip(void)
{
    for (unsigned num = 1; num <= 4; num *= 2)
        for (int trans = 0; trans < 2; ++trans) {
            uint16_t mem[32][8], back[32][8];
            const void *rows[32];
            void *wrows[32];
            for (int i = 0; i < 32; ++i) {
                for (int j = 0; j < 8; ++j)
                    mem[i][j] = (uint16_t)ckt_rand64(&rng);
                rows[i] = mem[(i * 7 + 3) % 32]; /* a permutation of rows */
                wrows[i] = back[(i * 7 + 3) % 32];
            }
            memset(back, 0, sizeof back);
            uint32_t out[32][4];
            memset(out, 0xEE, sizeof out);
            ck_emu_ref_ldmatrix(num, trans, out, rows);
            int bad = 0;
            for (unsigned lane = 0; lane < 32; ++lane)
                for (unsigned i = 0; i < 4; ++i)
                    for (unsigned h = 0; h < 2; ++h) {
                        uint16_t got = (uint16_t)(out[lane][i] >> (16 * h));
                        if (i >= num) {
                            if (got != 0xEEEE)
                                ++bad;
                            continue;
                        }
                        /* matrix i element (x, y) is at ((const uint16_t *)rows[8i + x])[y] */
                        unsigned x = trans ? (lane % 4) * 2 + h : lane / 4;
                        unsigned y = trans ? lane / 4 : (lane % 4) * 2 + h;
                        if (got != ((const uint16_t *)rows[8 * i + x])[y])
                            ++bad;
                    }
            CHECK_MSG(bad == 0, "ldmatrix x%u trans=%d: %d wrong", num, trans, bad);
            ck_emu_ref_stmatrix(num, trans, wrows, (const uint32_t(*)[4])out);
            bad = 0;
            for (unsigned i = 0; i < 8 * num; ++i) {
                unsigned r = (i * 7 + 3) % 32;
                if (memcmp(back[r], mem[r], 16) != 0)
                    ++bad;
            }
            for (unsigned i = 8 * num; i < 32; ++i) {
                unsigned r = (i * 7 + 3) % 32;
                static const uint16_t zero[8];
                if (memcmp(back[r], zero, 16) != 0)
                    ++bad;
            }
            CHECK_MSG(bad == 0, "stmatrix x%u trans=%d: %d rows wrong", num, trans, bad);
        }
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)rng);
    RUN_TEST(test_f16_rounding);
    RUN_TEST(test_mma_float_accumulate);
    RUN_TEST(test_mma_f16_accumulate);
    RUN_TEST(test_mma_integer);
    RUN_TEST(test_ldmatrix_matches_mma_fragments);
    RUN_TEST(test_ldmatrix_stmatrix_roundtrip);
    return CK_TEST_REPORT();
}
