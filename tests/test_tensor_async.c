/*
 * Reference semantics of the swizzles, wgmma over shared-memory descriptors, the tensor copy
 * engine (TMA box copies) and the mbarrier state machine (src/device/host/ck_emu_tensor_ref.h),
 * checked against independent models written here: the swizzle as "16-byte chunk XOR row within
 * the pattern", shared-memory operand layouts as the PTX ISA's CuTe-style (shape):(stride)
 * canonical layouts evaluated generically, the product as a long double loop, TMA as a walk over
 * global coordinates, the mbarrier as a struct with named fields (those two in
 * test_tensor_tma.c).
 */
#include <stdlib.h>

#include "device/host/ck_emu_tensor_ref.h"
#include "test.h"

static uint64_t rng = 0xA5C0FFEE11ull;

static unsigned rnd(unsigned n)
{
    return (unsigned)(ckt_rand64(&rng) % n);
}

/* ---------------------------------------------------------------- swizzle */

/* mode 0..3: span S = 16 << mode bytes; the 16-byte chunk within the span is XOR-ed with the
 * index of the 128-byte line within the 8-line pattern, reduced to the span's chunk count. */
static uint32_t model_swizzle(uint32_t addr, unsigned mode)
{
    uint32_t S = 16u << mode, chunks = S / 16u;
    uint32_t chunk = (addr % S) / 16u, key = (addr / 128u) % chunks;
    return addr - chunk * 16u + (chunk ^ key) * 16u;
}

static void test_swizzle(void)
{
    for (unsigned mode = 0; mode < 4; ++mode) {
        enum { R = 1u << 14 };
        static unsigned char seen[R];
        memset(seen, 0, sizeof seen);
        int bad = 0, moved = 0;
        for (uint32_t a = 0; a < R; ++a) {
            uint32_t s = ck_emu_ref_swizzle(a, mode);
            if (s != model_swizzle(a, mode))
                ++bad;
            if (s >= R || seen[s]++)
                ++bad; /* bijection on the range */
            if (s / 128u != a / 128u)
                ++bad; /* stays in its 128-byte line */
            if (s % 16u != a % 16u)
                ++bad; /* 16-byte chunks move whole */
            if (ck_emu_ref_swizzle(s, mode) != a)
                ++bad; /* involution */
            moved += s != a;
        }
        CHECK_MSG(bad == 0, "swizzle mode %u: %d violations", mode, bad);
        CHECK(mode == 0 ? moved == 0 : moved > 0);
    }
    /* 128B: line 1, chunk 0 → chunk 1; line 7, chunk 2 → chunk 5 */
    CHECK_EQ_INT(ck_emu_ref_swizzle(0x080, 3), 0x090);
    CHECK_EQ_INT(ck_emu_ref_swizzle(7 * 128 + 2 * 16 + 5, 3), 7 * 128 + 5 * 16 + 5);
    CHECK_EQ_INT(ck_emu_ref_swizzle(3 * 128, 1), 3 * 128 + 16);
}

/* ---------------------------------------------------------------- wgmma */

/* Evaluate a PTX canonical layout ((s0,s1,s2),(t0,t1)):((a0,a1,a2),(b0,b1)) (element units) at
 * (mn, k), colexicographic within each mode. */
typedef struct canon {
    unsigned s[3], t[2];
    unsigned long a[3], b[2];
} canon;

static unsigned long canon_eval(const canon *c, unsigned mn, unsigned k)
{
    unsigned long off = 0;
    for (int i = 0; i < 3; ++i) {
        off += (mn % c->s[i]) * c->a[i];
        mn /= c->s[i];
    }
    for (int i = 0; i < 2; ++i) {
        off += (k % c->t[i]) * c->b[i];
        k /= c->t[i];
    }
    return off;
}

/* Canonical layout (elements of es bytes, T = 16/es) of an operand with `rows` M/N rows and
 * 32 bytes of k, in mode `mode` (CK_EMU_SWIZZLE_*), MN- or K-major (16-bit only), with LBO/SBO in
 * bytes. From the PTX table:
 *  K-major none  ((8,m),(T,2k)):((1T,SBO),(1,LBO));   K swizzled ((8,m),(T,2k)):((sT,SBO),(1,T))
 *  MN none      ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)); MN swz ((T,s,m),(8,k)):((1,T,LBO),(sT,SBO))
 * with s = span/16. */
static canon make_canon(unsigned es, unsigned rows, int mn_major, unsigned mode, unsigned lbo,
                        unsigned sbo)
{
    canon c;
    unsigned T = 16 / es, s = 1u << mode, L = lbo / es, Sb = sbo / es;
    if (!mn_major) {
        c.s[0] = 8, c.s[1] = rows / 8, c.s[2] = 1;
        c.a[0] = mode ? s * T : T, c.a[1] = Sb, c.a[2] = 0;
        c.t[0] = T, c.t[1] = 2;
        c.b[0] = 1, c.b[1] = mode ? T : L;
    } else if (mode == 0) {
        c.s[0] = T, c.s[1] = 1, c.s[2] = rows / T;
        c.a[0] = 1, c.a[1] = T, c.a[2] = Sb;
        c.t[0] = 8, c.t[1] = 2;
        c.b[0] = T, c.b[1] = L;
    } else {
        unsigned per = T * s; /* elements per span */
        c.s[0] = T, c.s[1] = s, c.s[2] = rows > per ? rows / per : 1;
        if (rows < per)
            c.s[1] = rows / T;
        c.a[0] = 1, c.a[1] = T, c.a[2] = L;
        c.t[0] = 8, c.t[1] = 2;
        c.b[0] = s * T, c.b[1] = Sb;
    }
    return c;
}

/* Offsets chosen so that the atoms of one operand tile each other densely. Returns bytes used. */
static unsigned pick_offsets(unsigned rows, int mn_major, unsigned mode, unsigned *lbo,
                             unsigned *sbo)
{
    unsigned S = 16u << mode;
    if (!mn_major) {
        if (mode == 0) { /* core matrices 128 B; randomly K-adjacent first or row-groups first */
            if (rnd(2))
                *lbo = 128, *sbo = 256;
            else
                *lbo = 128 * (rows / 8), *sbo = 128;
            return 256 * (rows / 8);
        }
        *lbo = 16, *sbo = 8 * S; /* rows of S bytes, k16 = 32 bytes of each row used */
        return 8 * S * (rows / 8);
    }
    if (mode == 0) {
        if (rnd(2))
            *sbo = 128, *lbo = 128 * (rows / 8);
        else
            *sbo = 256, *lbo = 128;
        return 256 * (rows / 8);
    }
    unsigned per = S / 2; /* elements of MN per span */
    unsigned chunks = rows > per ? rows / per : 1;
    *sbo = 8 * S;     /* next 8 k */
    *lbo = 2 * 8 * S; /* next MN span, after both k groups */
    return 2 * 8 * S * chunks;
}

/* value of an element, decoded with ldexp from its fields */
static long double dec(ck_emu_elem f, uint32_t v)
{
    int sg, e, m;
    switch (f) {
    case CK_EMU_BF16:
        sg = (v >> 15) & 1, e = (v >> 7) & 255, m = v & 127;
        return (sg ? -1 : 1) * (e ? ldexpl(128 + m, e - 134) : ldexpl(m, -133));
    case CK_EMU_F16:
        sg = (v >> 15) & 1, e = (v >> 10) & 31, m = v & 1023;
        return (sg ? -1 : 1) * (e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24));
    case CK_EMU_TF32: /* low 13 bits ignored */
        sg = (v >> 31) & 1, e = (v >> 23) & 255, m = (v >> 13) & 1023;
        return (sg ? -1 : 1) * (e ? ldexpl(1024 + m, e - 137) : ldexpl(m, -136));
    case CK_EMU_E4M3:
        sg = (v >> 7) & 1, e = (v >> 3) & 15, m = v & 7;
        return (sg ? -1 : 1) * (e ? ldexpl(8 + m, e - 10) : ldexpl(m, -9));
    case CK_EMU_E5M2:
        sg = (v >> 7) & 1, e = (v >> 2) & 31, m = v & 3;
        return (sg ? -1 : 1) * (e ? ldexpl(4 + m, e - 17) : ldexpl(m, -16));
    default:
        return 0;
    }
}

static uint32_t gen(ck_emu_elem f)
{
    uint32_t r = (uint32_t)ckt_rand64(&rng);
    switch (f) {
    case CK_EMU_BF16:
        return (r & 0x807Fu) | ((122u + rnd(10)) << 7);
    case CK_EMU_F16:
        return (r & 0x83FFu) | ((11u + rnd(8)) << 10);
    case CK_EMU_TF32:
        return (r & 0x807FFFFFu) | ((122u + rnd(10)) << 23);
    case CK_EMU_E4M3:
        return (r & 0xFFu) == 0x7Fu || (r & 0xFFu) == 0xFFu ? (r & 0xFEu) : (r & 0xFFu);
    default:
        return (r & 0x83u) | (rnd(30) << 2); /* e5m2 without inf/nan */
    }
}

static unsigned esize_of(ck_emu_elem f)
{
    return f == CK_EMU_TF32 ? 4 : (f == CK_EMU_E4M3 || f == CK_EMU_E5M2) ? 1 : 2;
}

/* A register element i of lane l (warp-local rows) per the PTX per-element formulas:
 * 16-bit a0..a7 (m16n8k16), tf32 a0..a3 (m16n8k8), 8-bit a0..a15 (m16n8k32) */
static void a_elem(unsigned es, unsigned l, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = l / 4, t = l % 4;
    if (es == 2) {
        *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        *col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    } else if (es == 4) {
        *row = (i == 0 || i == 2) ? g : g + 8;
        *col = i < 2 ? t : t + 4;
    } else {
        *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    }
}

static void check_wgmma(unsigned n, ck_emu_elem fa, ck_emu_elem fb, int a_regs, unsigned mode_a,
                        unsigned mode_b, int tnsp_a, int tnsp_b, int scale_d, int neg_a, int neg_b,
                        unsigned kslice)
{
    enum { SMEM = 64 * 1024 };
    static uint8_t smem[SMEM];
    static uint32_t A[64][32], B[256][32];
    static float d[128 * 128], d0[128 * 128];
    static uint32_t ar[128][4];
    unsigned es = esize_of(fa), K = 32 / es, lbo_a, sbo_a, lbo_b, sbo_b;
    for (unsigned i = 0; i < SMEM; ++i)
        smem[i] = (uint8_t)ckt_rand64(&rng); /* junk around */
    for (unsigned m = 0; m < 64; ++m)
        for (unsigned k = 0; k < K; ++k)
            A[m][k] = gen(fa);
    for (unsigned c = 0; c < n; ++c)
        for (unsigned k = 0; k < K; ++k)
            B[c][k] = gen(fb);
    /* A at 0 (1024-aligned), B at 32 KiB; with kslice, the descriptor start moves by 32 bytes
     * inside a K-major swizzled row, as kernels do to step through a wider K tile */
    uint32_t base_a = 0, base_b = 32768;
    pick_offsets(64, tnsp_a, mode_a, &lbo_a, &sbo_a);
    pick_offsets(n, tnsp_b, mode_b, &lbo_b, &sbo_b);
    /* slice j of a wider K-major swizzled tile starts 32*j bytes into each S-byte row */
    uint32_t sh_a = (!tnsp_a && mode_a > 1) ? 32u * (kslice % (1u << (mode_a - 1))) : 0;
    uint32_t sh_b = (!tnsp_b && mode_b > 1) ? 32u * (kslice % (1u << (mode_b - 1))) : 0;
    canon ca = make_canon(es, 64, tnsp_a, mode_a, lbo_a, sbo_a);
    canon cb = make_canon(es, n, tnsp_b, mode_b, lbo_b, sbo_b);
    if (!a_regs)
        for (unsigned m = 0; m < 64; ++m)
            for (unsigned k = 0; k < K; ++k) {
                uint32_t addr =
                    model_swizzle(base_a + sh_a + es * (uint32_t)canon_eval(&ca, m, k), mode_a);
                memcpy(smem + addr, &A[m][k], es); /* little endian: low bytes */
            }
    for (unsigned c = 0; c < n; ++c)
        for (unsigned k = 0; k < K; ++k) {
            uint32_t addr =
                model_swizzle(base_b + sh_b + es * (uint32_t)canon_eval(&cb, c, k), mode_b);
            memcpy(smem + addr, &B[c][k], es);
        }
    /* A registers: warp w holds rows 16w..16w+15 as the mma.sync A fragment of the type */
    memset(ar, 0, sizeof ar);
    for (unsigned lane = 0; lane < 128; ++lane) {
        unsigned w = lane / 32, per = 4 / es == 0 ? 1 : 4 / es, bits = 8 * es;
        for (unsigned i = 0; i < 4 * per; ++i) {
            unsigned row, col;
            a_elem(es, lane % 32, i, &row, &col);
            uint32_t v = A[16 * w + row][col] & (bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1u);
            ar[lane][i / per] |= v << ((i % per) * bits);
        }
    }
    for (unsigned i = 0; i < 128 * n / 2; ++i)
        d0[i] = d[i] = (float)((int)rnd(201) - 100) / 8.0f;
    ck_emu_wgmma_args p;
    memset(&p, 0, sizeof p);
    p.n = n, p.fa = fa, p.fb = fb, p.a_in_regs = a_regs;
    p.desc_a = ck_emu_wgmma_desc_make(base_a + sh_a, lbo_a, sbo_a, mode_a);
    p.desc_b = ck_emu_wgmma_desc_make(base_b + sh_b, lbo_b, sbo_b, mode_b);
    p.scale_d = scale_d, p.neg_a = neg_a, p.neg_b = neg_b, p.tnsp_a = tnsp_a, p.tnsp_b = tnsp_b;
    int rc = ck_emu_ref_wgmma_f32(&p, d, (const uint32_t(*)[4])ar, smem, SMEM);
    CHECK_EQ_INT(rc, 0);
    int bad = 0;
    for (unsigned lane = 0; lane < 128; ++lane) {
        unsigned w = lane / 32, l = lane % 32, g = l / 4, t = l % 4;
        for (unsigned i = 0; i < n / 2; ++i) {
            /* d_i: row 16w + g (+8 for i%4 in {2,3}), col 8*(i/4) + 2t + (i&1) */
            unsigned row = 16 * w + g + ((i % 4) >= 2 ? 8 : 0), col = (i / 4) * 8 + t * 2 + (i & 1);
            long double sum = scale_d ? (long double)d0[lane * (n / 2) + i] : 0, mag = fabsl(sum);
            for (unsigned k = 0; k < K; ++k) {
                long double pr = dec(fa, A[row][k]) * dec(fb, B[col][k]);
                if (neg_a != neg_b)
                    pr = -pr;
                sum += pr;
                mag += fabsl(pr);
            }
            if (fabsl(d[lane * (n / 2) + i] - sum) > mag * ldexpl(1, -22))
                ++bad;
        }
    }
    CHECK_MSG(bad == 0,
              "wgmma n%u fa%d fb%d regsA%d swz %u/%u tnsp %d/%d scale%d neg %d/%d k%u: %d wrong", n,
              fa, fb, a_regs, mode_a, mode_b, tnsp_a, tnsp_b, scale_d, neg_a, neg_b, kslice, bad);
}

static void test_wgmma_layouts(void)
{
    static const unsigned ns[] = {8, 64, 128, 256};
    for (unsigned mode = 0; mode < 4; ++mode)
        for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
                for (unsigned ni = 0; ni < 4; ++ni)
                    check_wgmma(ns[ni], ni & 1 ? CK_EMU_BF16 : CK_EMU_F16,
                                ni & 1 ? CK_EMU_BF16 : CK_EMU_F16, 0, mode, mode, ta, tb, 1, 0, 0,
                                0);
    /* mixed modes, register A, scale-d 0, negation, k-slices inside a swizzled row */
    for (int rep = 0; rep < 32; ++rep) {
        unsigned mb = rnd(4), n = 8u * (1 + rnd(32));
        int tb = (int)rnd(2);
        /* an MN-major swizzled B is made of whole atoms of (span / 2) columns */
        unsigned atom = (tb && mb) ? 8u << mb : 8u;
        n = (n + atom - 1) / atom * atom;
        if (n > 256)
            n = 256;
        ck_emu_elem f = rnd(2) ? CK_EMU_BF16 : CK_EMU_F16;
        check_wgmma(n, f, f, (int)rnd(2), rnd(4), mb, (int)rnd(2), tb, (int)rnd(2), (int)rnd(2),
                    (int)rnd(2), rnd(4));
    }
    /* tf32 (k8) and fp8 (k32, formats may differ): K-major only, every swizzle mode */
    static const ck_emu_elem f8[2] = {CK_EMU_E4M3, CK_EMU_E5M2};
    for (int rep = 0; rep < 24; ++rep) {
        unsigned n = 8u * (1 + rnd(32));
        int tf = rep % 3 == 0;
        ck_emu_elem fa = tf ? CK_EMU_TF32 : f8[rnd(2)], fb = tf ? CK_EMU_TF32 : f8[rnd(2)];
        check_wgmma(n, fa, fb, (int)rnd(2), rnd(4), rnd(4), 0, 0, (int)rnd(2), (int)rnd(2),
                    (int)rnd(2), rnd(4));
    }
}

static void test_wgmma_bad_input(void)
{
    static uint8_t smem[4096];
    static float d[128 * 4];
    ck_emu_wgmma_args p;
    memset(&p, 0, sizeof p);
    p.n = 8, p.fa = p.fb = CK_EMU_BF16;
    p.desc_a = ck_emu_wgmma_desc_make(0, 128, 256, 0);
    p.desc_b = ck_emu_wgmma_desc_make(4000, 128, 256, 0); /* runs past the 4 KiB */
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), -1);
    p.desc_b = ck_emu_wgmma_desc_make(2048, 128, 256, 0);
    p.fa = CK_EMU_E4M3; /* fp8 with a 16-bit B */
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), -1);
    p.fa = p.fb = CK_EMU_S8; /* integer: not an f32 wgmma */
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), -1);
    p.fa = p.fb = CK_EMU_TF32, p.tnsp_b = 1; /* transposed layouts are 16-bit only */
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), -1);
    p.fa = p.fb = CK_EMU_F16, p.tnsp_b = 0;
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), 0);
    p.fa = p.fb = CK_EMU_BF16;
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), 0);
    p.n = 12; /* not a multiple of 8 */
    CHECK_EQ_INT(ck_emu_ref_wgmma_f32(&p, d, NULL, smem, sizeof smem), -1);
    /* descriptor fields round-trip */
    uint64_t desc = ck_emu_wgmma_desc_make(0x12340, 0x1230, 0x4560, CK_EMU_SWIZZLE_64B);
    CHECK_EQ_INT(ck_emu_wgmma_desc_start(desc), 0x12340);
    CHECK_EQ_INT(ck_emu_wgmma_desc_lbo(desc), 0x1230);
    CHECK_EQ_INT(ck_emu_wgmma_desc_sbo(desc), 0x4560);
    CHECK_EQ_INT(ck_emu_wgmma_desc_swizzle(desc), CK_EMU_SWIZZLE_64B);
    CHECK_EQ_INT(desc >> 62, 2); /* PTX encoding: 1 = 128B, 2 = 64B, 3 = 32B */
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)rng);
    RUN_TEST(test_swizzle);
    RUN_TEST(test_wgmma_layouts);
    RUN_TEST(test_wgmma_bad_input);
    return CK_TEST_REPORT();
}
