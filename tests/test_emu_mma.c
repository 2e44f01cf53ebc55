/* Warp-level tensor-core operations through the runtime (tests/kernels/mma.cu, ldmatrix.cu,
 * cp_async.cu) on the device CK_DEVICE chooses (the emulator in CI), checked against CPU
 * references written here from the PTX ISA's fragment formulas: full matrices are gathered from
 * the fragments and multiplied in long double. Exact results (integer mma, ldmatrix, stmatrix,
 * cp.async) are dumped for scripts/gpu-check's bit-for-bit GPU = emulator comparison; float mma
 * and wgmma results of random values are checked against the reference within a stated
 * tolerance on each backend and not dumped (tensor cores and the emulator may round sums
 * differently); float mma and wgmma of small integers (every partial sum exact) must equal the
 * reference exactly and are dumped (mma_exact, wgmma_exact). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/numeric_conv.h"
#include "kernel_harness.h"

static uint64_t seed = 0x3a3a5eed00060002ull;

static unsigned rnd(unsigned n)
{
    return (unsigned)(ckt_rand64(&seed) % n);
}

/* ------------------------------------------------------------------ mma.sync */

enum {
    V_F16 = 0,
    V_BF16,
    V_TF32,
    V_E4M3,
    V_E5M2,
    V_E4M3_E5M2,
    V_E5M2_E4M3,
    V_F16_K8,
    V_BF16_K8,
    V_F16ACC,
    V_F16ACC_K8,
    V_S8,
    V_U8,
    V_S8U8,
    V_U8S8,
    V_S8_SAT,
    V_U8_SAT,
    V_COUNT
};

typedef struct mma_shape {
    const char *name;
    int k, bits_a, bits_b; /* element bits of A and B */
    int type_a, type_b;    /* CK_NC_* element types (I8/U8 for integers) */
    int acc;               /* 0 f32, 1 f16, 2 s32 */
    int sat;
} mma_shape;

static const mma_shape shapes[V_COUNT] = {
    {"m16n8k16 f32.f16", 16, 16, 16, CK_NC_F16, CK_NC_F16, 0, 0},
    {"m16n8k16 f32.bf16", 16, 16, 16, CK_NC_BF16, CK_NC_BF16, 0, 0},
    {"m16n8k8 f32.tf32", 8, 32, 32, CK_NC_TF32, CK_NC_TF32, 0, 0},
    {"m16n8k32 f32.e4m3", 32, 8, 8, CK_NC_FP8_E4M3, CK_NC_FP8_E4M3, 0, 0},
    {"m16n8k32 f32.e5m2", 32, 8, 8, CK_NC_FP8_E5M2, CK_NC_FP8_E5M2, 0, 0},
    {"m16n8k32 f32.e4m3.e5m2", 32, 8, 8, CK_NC_FP8_E4M3, CK_NC_FP8_E5M2, 0, 0},
    {"m16n8k32 f32.e5m2.e4m3", 32, 8, 8, CK_NC_FP8_E5M2, CK_NC_FP8_E4M3, 0, 0},
    {"m16n8k8 f32.f16", 8, 16, 16, CK_NC_F16, CK_NC_F16, 0, 0},
    {"m16n8k8 f32.bf16", 8, 16, 16, CK_NC_BF16, CK_NC_BF16, 0, 0},
    {"m16n8k16 f16.f16", 16, 16, 16, CK_NC_F16, CK_NC_F16, 1, 0},
    {"m16n8k8 f16.f16", 8, 16, 16, CK_NC_F16, CK_NC_F16, 1, 0},
    {"m16n8k32 s32.s8", 32, 8, 8, CK_NC_I8, CK_NC_I8, 2, 0},
    {"m16n8k32 s32.u8", 32, 8, 8, CK_NC_U8, CK_NC_U8, 2, 0},
    {"m16n8k32 s32.s8.u8", 32, 8, 8, CK_NC_I8, CK_NC_U8, 2, 0},
    {"m16n8k32 s32.u8.s8", 32, 8, 8, CK_NC_U8, CK_NC_I8, 2, 0},
    {"m16n8k32 s32.s8 satfinite", 32, 8, 8, CK_NC_I8, CK_NC_I8, 2, 1},
    {"m16n8k32 s32.u8 satfinite", 32, 8, 8, CK_NC_U8, CK_NC_U8, 2, 1},
};

/* Element e of lane l's A fragment (16 x k, row-major) -> (row, col): the ISA's formulas. */
static void a_pos(int k, int bits, int l, int e, int *row, int *col)
{
    int g = l / 4, t = l % 4;
    if (bits == 32) { /* tf32 m16n8k8: a0..a3 */
        *row = g + 8 * (e % 2), *col = t + 4 * (e / 2);
    } else if (bits == 16 && k == 16) { /* a0..a7 */
        *row = g + 8 * ((e / 2) % 2), *col = 2 * t + (e % 2) + 8 * (e / 4);
    } else if (bits == 16) { /* k8: a0..a3 */
        *row = g + 8 * (e / 2), *col = 2 * t + (e % 2);
    } else { /* 8-bit k32: a0..a15 */
        *row = g + 8 * ((e / 4) % 2), *col = 4 * t + (e % 4) + 16 * (e / 8);
    }
}

/* Element e of lane l's B fragment (k x 8) -> (k row, n col). */
static void b_pos(int k, int bits, int l, int e, int *row, int *col)
{
    int g = l / 4, t = l % 4;
    *col = g;
    if (bits == 32)
        *row = t + 4 * e;
    else if (bits == 16 && k == 16)
        *row = 2 * t + (e % 2) + 8 * (e / 2);
    else if (bits == 16)
        *row = 2 * t + e;
    else
        *row = 4 * t + (e % 4) + 16 * (e / 4);
}

/* C/D element i of lane l -> (row, col) */
static void c_pos(int l, int i, int *row, int *col)
{
    *row = l / 4 + 8 * (i / 2), *col = 2 * (l % 4) + (i % 2);
}

static uint32_t gen_elem(int type)
{
    uint32_t r = (uint32_t)ckt_rand64(&seed);
    switch (type) {
    case CK_NC_F16:
        return (r & 0x83FFu) | ((11u + rnd(8)) << 10);
    case CK_NC_BF16:
        return (r & 0x807Fu) | ((123u + rnd(8)) << 7);
    case CK_NC_TF32:
        return (r & 0x807FFFFFu) | ((123u + rnd(8)) << 23); /* low 13 bits: junk */
    case CK_NC_FP8_E4M3:
        return (r & 0x87u) | ((4u + rnd(8)) << 3);
    case CK_NC_FP8_E5M2:
        return (r & 0x83u) | ((11u + rnd(10)) << 2);
    default:
        return r & 0xFFu;
    }
}

static long double val(int type, uint32_t code)
{
    if (type == CK_NC_I8)
        return (int8_t)code;
    if (type == CK_NC_U8)
        return (uint8_t)code;
    return (long double)ck_nc_to_f64(type, type == CK_NC_TF32 ? code & ~0x1FFFu : code);
}

/* A small integer in [-4, 4] as a code of `type`: every partial sum of such products is exact
 * in any accumulator, so the result is exact on every backend. */
static uint32_t small_int(int type)
{
    return (uint32_t)ck_nc_from_f32(type, (float)((int)rnd(9) - 4), CK_NC_ROUND_NEAREST_EVEN,
                                    CK_NC_SATURATE, 0);
}

/* One variant; exact: small integers (result dumped), else random values (tolerance). */
static void test_mma_variant(ck_kernel *k, int v, int exact, int *exact_dumped, uint32_t *exact_out)
{
    const mma_shape *s = &shapes[v];
    uint32_t A[16][32], B[32][8]; /* element codes */
    long double C[16][8];
    unsigned fa[32][4], fb[32][2], fc[32][4], fd[32][4];
    memset(fa, 0, sizeof fa), memset(fb, 0, sizeof fb), memset(fc, 0, sizeof fc);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < s->k; ++c)
            A[r][c] = exact && s->acc != 2 ? small_int(s->type_a) : gen_elem(s->type_a);
    for (int r = 0; r < s->k; ++r)
        for (int c = 0; c < 8; ++c)
            B[r][c] = exact && s->acc != 2 ? small_int(s->type_b) : gen_elem(s->type_b);
    int na = 16 * s->k / 32, nb = 8 * s->k / 32; /* elements per lane */
    for (int l = 0; l < 32; ++l) {
        for (int e = 0; e < na; ++e) {
            int r, c, per = 32 / s->bits_a;
            a_pos(s->k, s->bits_a, l, e, &r, &c);
            fa[l][e / per] |= A[r][c] << (s->bits_a * (e % per));
        }
        for (int e = 0; e < nb; ++e) {
            int r, c, per = 32 / s->bits_b;
            b_pos(s->k, s->bits_b, l, e, &r, &c);
            fb[l][e / per] |= B[r][c] << (s->bits_b * (e % per));
        }
        for (int i = 0; i < 4; ++i) {
            int r, c;
            c_pos(l, i, &r, &c);
            if (s->acc == 0) {
                float f =
                    exact ? (float)((int)rnd(201) - 100) : (float)((int)rnd(2001) - 1000) / 64.0f;
                fc[l][i] = ck_nc_f32_bits(f);
                C[r][c] = f;
            } else if (s->acc == 1) {
                uint32_t h = exact ? small_int(CK_NC_F16) : gen_elem(CK_NC_F16);
                fc[l][i / 2] |= h << (16 * (i % 2));
                C[r][c] = val(CK_NC_F16, h);
            } else {
                int32_t x = s->sat && l % 2 ? (l % 4 == 1 ? 2147480000 - (int32_t)rnd(100)
                                                          : -2147480000 + (int32_t)rnd(100))
                                            : (int32_t)rnd(2000001) - 1000000;
                fc[l][i] = (uint32_t)x;
                C[r][c] = x;
            }
        }
    }
    void *da = ckk_upload(fa, sizeof fa), *db = ckk_upload(fb, sizeof fb);
    void *dc = ckk_upload(fc, sizeof fc), *dd = ckk_upload(NULL, sizeof fd);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 5, CKK_ARG(v), CKK_ARG(da), CKK_ARG(db),
                        CKK_ARG(dc), CKK_ARG(dd)));
    ckk_download(fd, dd, sizeof fd);
    /* tolerance relative to sum |products| + |c|: f32 accumulation of 16/19-bit products
     * 2^-16, of fp8 products 2^-8 (Hopper's fp8 accumulation keeps about 14 bits; a wrong
     * fragment layout is off by the order of the sum itself), f16 accumulator 2^-8 */
    long double tol = exact            ? 0
                      : s->acc == 1    ? ldexpl(1, -8)
                      : s->bits_a == 8 ? ldexpl(1, -8)
                                       : ldexpl(1, -16);
    int bad = 0;
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) {
            int r, c;
            c_pos(l, i, &r, &c);
            long double sum = C[r][c], mag = fabsl(C[r][c]);
            for (int kk = 0; kk < s->k; ++kk) {
                long double p = val(s->type_a, A[r][kk]) * val(s->type_b, B[kk][c]);
                sum += p, mag += fabsl(p);
            }
            if (s->acc == 2) {
                long double ref = sum;
                if (s->sat)
                    ref = ref > 2147483647.0L    ? 2147483647.0L
                          : ref < -2147483648.0L ? -2147483648.0L
                                                 : ref;
                else /* wraps modulo 2^32 */
                    ref = (long double)(int32_t)(uint32_t)(int64_t)ref;
                if ((long double)(int32_t)fd[l][i] != ref && bad++ < 3)
                    printf("  %s lane %d d[%d]: %d, expected %.0Lf\n", s->name, l, i, (int)fd[l][i],
                           ref);
            } else {
                float got = s->acc == 1
                                ? (float)val(CK_NC_F16, (fd[l][i / 2] >> (16 * (i % 2))) & 0xFFFFu)
                                : ck_nc_bits_f32(fd[l][i]);
                if (!(fabsl((long double)got - sum) <= tol * mag) && bad++ < 3)
                    printf("  %s lane %d d[%d] (row %d col %d): %.9g, expected %.9Lg\n", s->name, l,
                           i, r, c, got, sum);
            }
        }
    CHECK_MSG(bad == 0, "mma %s%s: %d of 128 results wrong", s->name,
              exact ? " (small integers)" : "", bad);
    if (exact) {
        memcpy(exact_out + (size_t)*exact_dumped * 128, fd, sizeof fd);
        ++*exact_dumped;
    }
    ck_free(ckk_device, da), ck_free(ckk_device, db), ck_free(ckk_device, dc),
        ck_free(ckk_device, dd);
}

static void test_mma(void)
{
    ck_kernel *k = ckk_kernel("mma.cu", "mma_all");
    uint32_t exact[V_COUNT * 128];
    int dumped = 0;
    for (int v = 0; v < V_COUNT; ++v) {
        if (shapes[v].acc != 2) /* random values, within tolerance */
            test_mma_variant(k, v, 0, &dumped, exact);
        test_mma_variant(k, v, 1, &dumped, exact); /* exact: integer types, or small integers */
    }
    CHECK_EQ_INT(dumped, V_COUNT);
    ckk_dump("mma_exact", exact, sizeof exact);
}

/* ------------------------------------------------------------------ ldmatrix / stmatrix */

/* b16 element (r, c) of matrix j: at byte rows[8j + r] + 2c of the buffer */
static uint16_t elem16(const unsigned char *buf, const unsigned *rows, int j, int r, int c)
{
    uint16_t v;
    memcpy(&v, buf + rows[8 * j + r] + 2 * c, 2);
    return v;
}

static void test_ldmatrix_stmatrix(void)
{
    ck_kernel *k = ckk_kernel("ldmatrix.cu", "ldst");
    static unsigned src[1024], regs[6 * 32 * 4], rows[32], ld[6 * 32 * 4], st[6 * 1024];
    for (int i = 0; i < 1024; ++i)
        src[i] = (uint32_t)ckt_rand64(&seed);
    for (int i = 0; i < 6 * 32 * 4; ++i)
        regs[i] = (uint32_t)ckt_rand64(&seed);
    unsigned slots[256];
    for (unsigned i = 0; i < 256; ++i)
        slots[i] = i;
    for (unsigned i = 255; i > 0; --i) { /* distinct random 16-byte slots */
        unsigned j = rnd(i + 1), tmp = slots[i];
        slots[i] = slots[j], slots[j] = tmp;
    }
    for (int l = 0; l < 32; ++l)
        rows[l] = slots[l] * 16;
    void *dsrc = ckk_upload(src, sizeof src), *dregs = ckk_upload(regs, sizeof regs);
    void *drows = ckk_upload(rows, sizeof rows), *dld = ckk_upload(NULL, sizeof ld);
    void *dst = ckk_upload(NULL, sizeof st);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 5, CKK_ARG(dsrc), CKK_ARG(dregs), CKK_ARG(drows),
                        CKK_ARG(dld), CKK_ARG(dst)));
    ckk_download(ld, dld, sizeof ld);
    ckk_download(st, dst, sizeof st);
    const unsigned char *buf = (const unsigned char *)src;
    int bad = 0;
    for (int v = 0; v < 6; ++v) {
        int count = 1 << (v % 3), trans = v >= 3;
        /* ldmatrix */
        for (int l = 0; l < 32; ++l)
            for (int j = 0; j < 4; ++j) {
                unsigned want = 0;
                if (j < count) {
                    int r = l / 4, c = 2 * (l % 4);
                    uint16_t lo = trans ? elem16(buf, rows, j, c, r) : elem16(buf, rows, j, r, c);
                    uint16_t hi =
                        trans ? elem16(buf, rows, j, c + 1, r) : elem16(buf, rows, j, r, c + 1);
                    want = lo | (unsigned)hi << 16;
                }
                if (ld[(v * 32 + l) * 4 + j] != want && bad++ < 3)
                    printf("  ldmatrix variant %d lane %d r[%d]: 0x%08x, expected 0x%08x\n", v, l,
                           j, ld[(v * 32 + l) * 4 + j], want);
            }
        /* stmatrix: build the expected buffer */
        static unsigned char want[4096];
        memset(want, 0xEE, sizeof want);
        for (int l = 0; l < 32; ++l)
            for (int j = 0; j < count; ++j) {
                unsigned reg = regs[(v * 32 + l) * 4 + j];
                int r = l / 4, c = 2 * (l % 4);
                uint16_t lo = (uint16_t)reg, hi = (uint16_t)(reg >> 16);
                if (!trans) {
                    memcpy(want + rows[8 * j + r] + 2 * c, &lo, 2);
                    memcpy(want + rows[8 * j + r] + 2 * c + 2, &hi, 2);
                } else {
                    memcpy(want + rows[8 * j + c] + 2 * r, &lo, 2);
                    memcpy(want + rows[8 * j + c + 1] + 2 * r, &hi, 2);
                }
            }
        if (memcmp(want, st + v * 1024, 4096) != 0 && bad++ < 3)
            printf("  stmatrix variant %d: buffer differs\n", v);
    }
    CHECK_MSG(bad == 0, "ldmatrix/stmatrix: %d wrong", bad);
    ckk_dump("ldmatrix", ld, sizeof ld);
    ckk_dump("stmatrix", st, sizeof st);
    ck_free(ckk_device, dsrc), ck_free(ckk_device, dregs), ck_free(ckk_device, drows);
    ck_free(ckk_device, dld), ck_free(ckk_device, dst);
}

/* ------------------------------------------------------------------ cp.async */

static void test_cp_async(void)
{
    ck_kernel *k = ckk_kernel("cp_async.cu", "cp_async_groups");
    static unsigned char g[8192], out[8192], want[8192];
    unsigned zb[128], ok[128];
    for (int i = 0; i < 8192; ++i)
        g[i] = (unsigned char)(ckt_rand64(&seed) | 1u); /* never zero: zero fill is visible */
    for (int t = 0; t < 128; ++t)
        zb[t] = t < 17 ? (unsigned)t : rnd(17); /* 0..16 source bytes */
    void *dg = ckk_upload(g, sizeof g), *dz = ckk_upload(zb, sizeof zb);
    void *dout = ckk_upload(NULL, sizeof out), *dok = ckk_upload(NULL, sizeof ok);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 4, CKK_ARG(dg), CKK_ARG(dz), CKK_ARG(dout),
                        CKK_ARG(dok)));
    ckk_download(out, dout, sizeof out);
    ckk_download(ok, dok, sizeof ok);
    memset(want, 0xCD, sizeof want);
    for (int t = 0; t < 128; ++t) {
        memcpy(want + 16 * (127 - t), g + 16 * t, 16);
        memcpy(want + 2048 + 8 * t, g + 2048 + 8 * ((37 * t) % 128), 8);
        memcpy(want + 3072 + 4 * t, g + 3072 + 4 * ((5 * t) % 128), 4);
        memset(want + 4096 + 16 * t, 0, 16);
        memcpy(want + 4096 + 16 * t, g + 4096 + 16 * t, zb[t]);
        CHECK_MSG(ok[t] == 1, "thread %d did not see its copies after ck_cp_async_wait(1)", t);
    }
    int first = -1;
    for (int i = 0; i < 8192 && first < 0; ++i)
        if (out[i] != want[i])
            first = i;
    CHECK_MSG(first < 0, "cp.async: shared byte %d is 0x%02x, expected 0x%02x", first,
              first >= 0 ? out[first] : 0, first >= 0 ? want[first] : 0);
    ckk_dump("cp_async", out, sizeof out);
    ck_free(ckk_device, dg), ck_free(ckk_device, dz), ck_free(ckk_device, dout),
        ck_free(ckk_device, dok);
}

/* ------------------------------------------------------------------ wgmma */

typedef struct wg_variant {
    const char *name;
    int n, type_a, type_b, eb; /* eb: element bytes */
} wg_variant;

static const wg_variant wgv[10] = {
    {"bf16 N64", 64, CK_NC_BF16, CK_NC_BF16, 2},
    {"bf16 N128", 128, CK_NC_BF16, CK_NC_BF16, 2},
    {"bf16 N256", 256, CK_NC_BF16, CK_NC_BF16, 2},
    {"f16 N64", 64, CK_NC_F16, CK_NC_F16, 2},
    {"f16 N128", 128, CK_NC_F16, CK_NC_F16, 2},
    {"f16 N256", 256, CK_NC_F16, CK_NC_F16, 2},
    {"tf32 N64", 64, CK_NC_TF32, CK_NC_TF32, 4},
    {"tf32 N128", 128, CK_NC_TF32, CK_NC_TF32, 4},
    {"e4m3 x e4m3 N64", 64, CK_NC_FP8_E4M3, CK_NC_FP8_E4M3, 1},
    {"e5m2 x e4m3 N128", 128, CK_NC_FP8_E5M2, CK_NC_FP8_E4M3, 1},
};

/* Byte offset of byte kb of row mn in a K-major operand tile (the ISA's canonical layouts:
 * no swizzle = 8-row x 16-byte core matrices, LBO apart along K and SBO apart along M/N;
 * swizzled = rows of S bytes, 8-row groups SBO apart, then the 16-byte chunk index XOR-ed with
 * the row within the 8-row pattern (address bits 4.. ^= bits 7..)). */
static unsigned tile_off(int swz, int mn, int kb, unsigned lbo, unsigned sbo)
{
    if (swz == 0)
        return (unsigned)(mn % 8) * 16u + (unsigned)(mn / 8) * sbo + (unsigned)kb % 16u +
               (unsigned)(kb / 16) * lbo;
    unsigned span = 16u << swz,
             off = (unsigned)(mn % 8) * span + (unsigned)(mn / 8) * sbo + (unsigned)kb;
    unsigned chunk = (off >> 4) & ((1u << swz) - 1u), line = (off >> 7) & ((1u << swz) - 1u);
    return (off & ~(((1u << swz) - 1u) << 4)) | ((chunk ^ line) << 4);
}

/* Small integers (exactly summed by any accumulator): mode 1; random moderate values: mode 0. */
static uint32_t wg_elem(int type, int exact)
{
    if (!exact)
        return gen_elem(type);
    int v = (int)rnd(9) - 4; /* tf32: clean low bits (random mode has junk there) */
    return (uint32_t)ck_nc_from_f32(type, (float)v, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
}

/* One wgmma configuration: rs 0/1, variant, swizzle 0..3, values exact (1) or random (0).
 * Returns the number of floats written to *dump (exact mode), else 0. */
static size_t run_wgmma(ck_kernel *k, int rs, int v, int swz, int exact, float *dump)
{
    const wg_variant *w = &wgv[v];
    int n = w->n, eb = w->eb;
    int kbytes = swz == 0 ? 64 : 16 << swz; /* bytes of K per row */
    int ksteps = kbytes / 32, kel = kbytes / eb, kstep_el = 32 / eb;
    unsigned lbo = swz == 0 ? 128u : 16u,
             sbo = swz == 0 ? (unsigned)kbytes / 16u * 128u : 8u * (16u << swz);
    int kadv = swz == 0 ? 2 * (int)lbo : 32;
    int a_bytes = 64 * kbytes, b_bytes = n * kbytes;
    static uint32_t A[64][128], B[256][128];
    static unsigned char ia[8192], ib[32768];
    static unsigned afrag[4 * 128 * 4];
    static float out[128 * 128];
    memset(ia, 0, sizeof ia), memset(ib, 0, sizeof ib), memset(afrag, 0, sizeof afrag);
    for (int m = 0; m < 64; ++m)
        for (int kk = 0; kk < kel; ++kk) {
            A[m][kk] = wg_elem(w->type_a, exact);
            for (int b = 0; b < eb; ++b)
                ia[tile_off(swz, m, kk * eb + b, lbo, sbo)] = (unsigned char)(A[m][kk] >> (8 * b));
        }
    for (int c = 0; c < n; ++c)
        for (int kk = 0; kk < kel; ++kk) {
            B[c][kk] = wg_elem(w->type_b, exact);
            for (int b = 0; b < eb; ++b)
                ib[tile_off(swz, c, kk * eb + b, lbo, sbo)] = (unsigned char)(B[c][kk] >> (8 * b));
        }
    /* register A: the mma.sync A fragment of the warp's 16 rows, per k-step */
    int mk = eb == 2 ? 16 : eb == 4 ? 8 : 32, bits = 8 * eb, per = 4 / eb;
    for (int ks = 0; ks < ksteps; ++ks)
        for (int t = 0; t < 128; ++t)
            for (int e = 0; e < 16 * mk / 32; ++e) {
                int r, c;
                a_pos(mk, bits, t % 32, e, &r, &c);
                uint32_t code = A[16 * (t / 32) + r][ks * kstep_el + c];
                afrag[(ks * 128 + t) * 4 + e / per] |=
                    (bits == 32 ? code : code << (bits * (e % per)));
            }
    void *dA =
        ckk_upload(rs ? (const void *)afrag : (const void *)ia, rs ? sizeof afrag : sizeof ia);
    void *dB = ckk_upload(ib, sizeof ib), *dout = ckk_upload(NULL, (size_t)128 * n / 2 * 4);
    int ilbo = (int)lbo, isbo = (int)sbo;
    ck_status st =
        rs ? ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 10, CKK_ARG(v), CKK_ARG(swz), CKK_ARG(ilbo),
                        CKK_ARG(isbo), CKK_ARG(kadv), CKK_ARG(ksteps), CKK_ARG(dA), CKK_ARG(dB),
                        CKK_ARG(b_bytes), CKK_ARG(dout))
           : ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 11, CKK_ARG(v), CKK_ARG(swz), CKK_ARG(ilbo),
                        CKK_ARG(isbo), CKK_ARG(kadv), CKK_ARG(ksteps), CKK_ARG(dA),
                        CKK_ARG(a_bytes), CKK_ARG(dB), CKK_ARG(b_bytes), CKK_ARG(dout));
    CHECK_MSG(st == CK_SUCCESS, "wgmma launch: %s", ck_last_error());
    ckk_download(out, dout, (size_t)128 * n / 2 * 4);
    long double tol = exact ? 0 : eb == 1 ? ldexpl(1, -8) : ldexpl(1, -16); /* as for mma.sync */
    static long double VA[64][128], VB[256][128];
    for (int m = 0; m < 64; ++m)
        for (int kk = 0; kk < kel; ++kk)
            VA[m][kk] = val(w->type_a, A[m][kk]);
    for (int c = 0; c < n; ++c)
        for (int kk = 0; kk < kel; ++kk)
            VB[c][kk] = val(w->type_b, B[c][kk]);
    int bad = 0;
    for (int t = 0; t < 128; ++t)
        for (int i = 0; i < n / 2; ++i) {
            int wq = t / 32, l = t % 32;
            int row = 16 * wq + l / 4 + 8 * ((i % 4) / 2),
                col = 8 * (i / 4) + 2 * (l % 4) + (i % 2);
            long double sum = 0, mag = 0;
            for (int kk = 0; kk < kel; ++kk) {
                long double p = VA[row][kk] * VB[col][kk];
                sum += p, mag += fabsl(p);
            }
            float got = out[t * (n / 2) + i];
            if (!(fabsl((long double)got - sum) <= tol * mag) && bad++ < 3)
                printf("  wgmma %s %s swizzle %d%s: D[%d][%d] = %.9g, expected %.9Lg\n",
                       rs ? "RS" : "SS", w->name, swz, exact ? " (exact)" : "", row, col, got, sum);
        }
    CHECK_MSG(bad == 0, "wgmma %s %s swizzle %d%s: %d of %d wrong", rs ? "RS" : "SS", w->name, swz,
              exact ? " (exact values)" : "", bad, 64 * n);
    ck_free(ckk_device, dA), ck_free(ckk_device, dB), ck_free(ckk_device, dout);
    if (!exact)
        return 0;
    memcpy(dump, out, (size_t)128 * n / 2 * 4);
    return (size_t)128 * n / 2;
}

static void test_wgmma(void)
{
    ck_kernel *kss = ckk_kernel("wgmma.cu", "wgmma_ss"), *krs = ckk_kernel("wgmma.cu", "wgmma_rs");
    size_t cap = 1u << 22, used = 0;
    float *dump = malloc(cap * sizeof(float));
    int configs = 0;
    for (int rs = 0; rs < 2; ++rs)
        for (int v = 0; v < 10; ++v)
            for (int swz = 0; swz < 4; ++swz) {
                /* 16-bit types: every swizzle and N; tf32 and fp8: none and 128B */
                if (v >= 6 && swz != 0 && swz != 3)
                    continue;
                for (int exact = 0; exact < 2; ++exact) {
                    size_t got = run_wgmma(rs ? krs : kss, rs, v, swz, exact, dump + used);
                    used += got;
                    CHECK(used + 128 * 128 <= cap);
                    ++configs;
                }
            }
    printf("%d wgmma configurations (SS and RS, 10 type/N variants, swizzles)\n", configs);
    ckk_dump("wgmma_exact", dump, used * sizeof(float));
    free(dump);
}

int main(void)
{
    if (!ckk_open())
        return 1;
    RUN_TEST(test_mma);
    RUN_TEST(test_ldmatrix_stmatrix);
    RUN_TEST(test_cp_async);
    RUN_TEST(test_wgmma);
    ckk_close();
    return CK_TEST_REPORT();
}
