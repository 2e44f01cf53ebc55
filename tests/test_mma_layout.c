/* Register layouts of mma.sync and wgmma as tile distribution encodings (ck_mma_encoding),
 * checked two ways:
 *  1. against the PTX ISA's per-element fragment formulas (as docs/device-tensor.md restates
 *     them), for every operand, lane, warp and element, wgmma for every N in 8..256: the
 *     encoding's X of (P, Y(d)) is the formula's element d, so ys_to_d is register order;
 *  2. against the prelude on the device CK_DEVICE chooses (the emulator in CI; a GPU through
 *     scripts/gpu-check): operands are packed into registers by the A and B encodings, the
 *     kernels of tests/kernels/mma.cu and wgmma.cu (register-A form, B from a shared-memory tile
 *     laid out by ck_smem_tile_make) multiply them, and the accumulators are read back by the C
 *     encoding: every element must equal the product computed here (small integers: exact).
 * Also the shared-memory tiles (ck_smem_tile_make) element by element against the canonical
 * layout formulas + ck_nv_swizzle_offset, and their bank conflicts under ldmatrix-style row
 * accesses (ck_access_check_desc). */
#include <stdint.h>
#include <string.h>

#include "ck/tile.h"
#include "ck/tile_kernel.h"
#include "core/numeric_conv.h"
#include "kernel_harness.h"

static uint64_t seed = 0x6d6d616c61796f75ull;

static unsigned rnd(unsigned n)
{
    return (unsigned)(ckt_rand64(&seed) % n);
}

/* ------------------------------------------------------------------ 1. ISA formulas */

enum { IN_F16, IN_BF16, IN_TF32, IN_E4M3, IN_E5M2, IN_S8, IN_U8 };

/* Element d of the A fragment (16 x k) of lane (g, t) -> (row, col). */
static void isa_a(int in, int k, int g, int t, int d, int *row, int *col)
{
    if (in == IN_TF32) {
        *row = g + 8 * (d & 1), *col = t + 4 * (d >> 1);
    } else if (in >= IN_E4M3) {
        int r = d / 4, e = d % 4;
        *row = g + 8 * (r & 1), *col = 4 * t + 16 * (r >> 1) + e;
    } else if (k == 16) {
        int r = d / 2, e = d % 2;
        *row = g + 8 * (r & 1), *col = 2 * t + 8 * (r >> 1) + e;
    } else {
        int r = d / 2, e = d % 2;
        *row = g + 8 * r, *col = 2 * t + e;
    }
}

/* Element d of the B fragment (k x 8) -> (k, n). */
static void isa_b(int in, int k, int g, int t, int d, int *row, int *col)
{
    *col = g;
    if (in == IN_TF32)
        *row = t + 4 * d;
    else if (in >= IN_E4M3)
        *row = 4 * t + 16 * (d / 4) + d % 4;
    else if (k == 16)
        *row = 2 * t + 8 * (d / 2) + d % 2;
    else
        *row = 2 * t + d;
}

/* Element d of C/D: mma f32/s32 register d; mma f16 half d%2 of register d/2; wgmma element d
 * of warp w (f16: half d%2 of register d/2 -- the same per-element layout). */
static void isa_c(int wg, int acc16, int w, int g, int t, int d, int *row, int *col)
{
    if (wg) {
        *row = 16 * w + g + 8 * ((d % 4) / 2), *col = 8 * (d / 4) + 2 * t + d % 2;
    } else if (acc16) {
        *row = g + 8 * (d / 2), *col = 2 * t + d % 2;
    } else {
        *row = g + 8 * (d >> 1), *col = 2 * t + (d & 1);
    }
}

typedef struct kind {
    const char *fmt; /* spelling; "%d" for wgmma's N */
    int wg, k, acc16, in;
} kind;

static const kind kinds[] = {
    {"mma.m16n8k8.f32.f16", 0, 8, 0, IN_F16},
    {"mma.m16n8k8.f32.bf16", 0, 8, 0, IN_BF16},
    {"mma.m16n8k16.f32.f16", 0, 16, 0, IN_F16},
    {"mma.m16n8k16.f32.bf16", 0, 16, 0, IN_BF16},
    {"mma.m16n8k8.f16.f16", 0, 8, 1, IN_F16},
    {"mma.m16n8k16.f16.f16", 0, 16, 1, IN_F16},
    {"mma.m16n8k8.f32.tf32", 0, 8, 0, IN_TF32},
    {"mma.m16n8k32.f32.e4m3", 0, 32, 0, IN_E4M3},
    {"mma.m16n8k32.f32.e5m2", 0, 32, 0, IN_E5M2},
    {"mma.m16n8k32.s32.s8", 0, 32, 0, IN_S8},
    {"mma.m16n8k32.s32.u8", 0, 32, 0, IN_U8},
    {"wgmma.m64n%dk16.f32.f16", 1, 16, 0, IN_F16},
    {"wgmma.m64n%dk16.f32.bf16", 1, 16, 0, IN_BF16},
    {"wgmma.m64n%dk16.f16.f16", 1, 16, 1, IN_F16},
    {"wgmma.m64n%dk8.f32.tf32", 1, 8, 0, IN_TF32},
    {"wgmma.m64n%dk32.f32.e4m3", 1, 32, 0, IN_E4M3},
    {"wgmma.m64n%dk32.f32.e5m2", 1, 32, 0, IN_E5M2},
    {"wgmma.m64n%dk32.f16.e4m3", 1, 32, 1, IN_E4M3},
    {"wgmma.m64n%dk32.f16.e5m2", 1, 32, 1, IN_E5M2},
    {"wgmma.m64n%dk32.s32.s8", 1, 32, 0, IN_S8},
    {"wgmma.m64n%dk32.s32.u8", 1, 32, 0, IN_U8},
};
enum { NKINDS = (int)(sizeof kinds / sizeof kinds[0]) };

/* Check one operand's encoding against the formula, every thread and element; returns the
 * number of mismatches. */
static int check_operand(const char *instr, const kind *kd, int n, ck_mma_operand op)
{
    ck_dist_encoding e;
    ck_distribution d;
    if (ck_mma_encoding(instr, op, &e) != CK_SUCCESS || ck_dist_make(&e, &d) != CK_SUCCESS) {
        CHECK_MSG(0, "%s operand %d: %s", instr, (int)op, ck_last_error());
        return 1;
    }
    const int m = kd->wg ? 64 : 16, nn = kd->wg ? n : 8, k = kd->k;
    const int rows = op == CK_MMA_B ? k : m, cols = op == CK_MMA_A ? k : nn;
    int bad = 0;
    bad += d.enc.ndim_x != 2 || d.x_lengths[0] != rows || d.x_lengths[1] != cols;
    bad += d.threads != (kd->wg ? 128 : 32) || d.replication != 1;
    bad += d.enc.ndim_p != (kd->wg ? 2 : 1) || d.p_lengths[d.enc.ndim_p - 1] != 32;
    bad += d.elements_per_thread * d.threads != (long long)rows * cols;
    if (bad) {
        CHECK_MSG(0, "%s operand %d: lengths %dx%d, %lld threads, %lld elements", instr, (int)op,
                  d.x_lengths[0], d.x_lengths[1], d.threads, d.elements_per_thread);
        return bad;
    }
    static unsigned char seen[64 * 256];
    memset(seen, 0, sizeof seen);
    for (long long tid = 0; tid < d.threads; ++tid) {
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        CHECK_OK(ck_dist_partition_index(&d, tid, p));
        const int w = (int)(tid / 32), l = (int)(tid % 32), g = l / 4, t = l % 4;
        for (long long r = 0; r < d.elements_per_thread; ++r) {
            int row, col;
            if (op == CK_MMA_A) {
                isa_a(kd->in, k, g, t, (int)r, &row, &col);
                row += 16 * w;
            } else if (op == CK_MMA_B) {
                isa_b(kd->in, k, g, t, (int)r, &row, &col);
            } else {
                isa_c(kd->wg, kd->acc16, w, g, t, (int)r, &row, &col);
            }
            CHECK_OK(ck_dist_d_to_ys(&d, r, y));
            CHECK_OK(ck_dist_calculate_x(&d, p, y, x));
            if ((x[0] != row || x[1] != col) && bad++ < 3)
                printf("  %s operand %d thread %lld element %lld: X (%d, %d), ISA (%d, %d)\n",
                       instr, (int)op, tid, r, x[0], x[1], row, col);
            seen[x[0] * cols + x[1]]++;
        }
    }
    for (int i = 0; i < rows * cols; ++i)
        bad += seen[i] != 1;
    return bad;
}

static void test_encodings_match_isa(void)
{
    int checked = 0;
    for (int i = 0; i < NKINDS; ++i) {
        const kind *kd = &kinds[i];
        for (int n = 8; n <= (kd->wg ? 256 : 8); n += 8) {
            char instr[64];
            snprintf(instr, sizeof instr, kd->fmt, n);
            for (int op = 0; op < 3; ++op) {
                if (op == CK_MMA_B && kd->wg) { /* B of wgmma lives in shared memory */
                    ck_dist_encoding e;
                    CHECK_STATUS(ck_mma_encoding(instr, CK_MMA_B, &e), CK_ERROR_UNSUPPORTED);
                    continue;
                }
                int bad = check_operand(instr, kd, n, (ck_mma_operand)op);
                CHECK_MSG(bad == 0, "%s operand %c: %d mismatches with the ISA", instr, "ABC"[op],
                          bad);
                ++checked;
            }
        }
    }
    printf("%d operand encodings checked against the ISA formulas\n", checked);
}

static void test_spellings_and_errors(void)
{
    const char *names[64];
    int n = ck_mma_spellings(names, 64);
    CHECK_EQ_INT(n, NKINDS);
    for (int i = 0; i < n && i < NKINDS; ++i) {
        char want[64];
        snprintf(want, sizeof want, kinds[i].fmt, 0);
        if (kinds[i].wg) /* "N" in the library's list */
            snprintf(want, sizeof want, "%.*sN%s", (int)(strstr(kinds[i].fmt, "%d") - kinds[i].fmt),
                     kinds[i].fmt, strstr(kinds[i].fmt, "%d") + 2);
        CHECK_EQ_STR(names[i], want);
    }
    ck_dist_encoding e;
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k16.f32", CK_MMA_A, &e), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_mma_encoding("mma.m16n8k16.f32", CK_MMA_C, &e)); /* C needs no input type */
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k16.f32.tf32", CK_MMA_A, &e), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k16.s32.s8", CK_MMA_C, &e), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k8.f16.bf16", CK_MMA_C, &e), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_mma_encoding("wgmma.m64n264k16.f32.bf16", CK_MMA_C, &e), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_mma_encoding("wgmma.m64n20k16.f32.bf16", CK_MMA_C, &e), CK_ERROR_UNSUPPORTED);
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k16.f32.f17", CK_MMA_A, &e), CK_ERROR_PARSE);
    CHECK_STATUS(ck_mma_encoding("mma.m16n8k16.f32.f16", (ck_mma_operand)3, &e),
                 CK_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ 2. the prelude */

static int nc_type(int in)
{
    static const int t[] = {CK_NC_F16,      CK_NC_BF16, CK_NC_TF32, CK_NC_FP8_E4M3,
                            CK_NC_FP8_E5M2, CK_NC_I8,   CK_NC_U8};
    return t[in];
}

static int in_bits(int in)
{
    return in <= IN_BF16 ? 16 : in == IN_TF32 ? 32 : 8;
}

/* A random code of the input type: small integers in [-4, 4] for float types (every partial
 * sum exact), any byte for the integer types. */
static uint32_t code_of(int in)
{
    if (in == IN_S8 || in == IN_U8)
        return rnd(256);
    return (uint32_t)ck_nc_from_f32(nc_type(in), (float)((int)rnd(9) - 4), CK_NC_ROUND_NEAREST_EVEN,
                                    CK_NC_SATURATE, 0);
}

static double value_of(int in, uint32_t code)
{
    if (in == IN_S8)
        return (int8_t)code;
    if (in == IN_U8)
        return (uint8_t)code;
    return ck_nc_to_f64(nc_type(in), code);
}

/* Pack element d's code into the 32-bit registers of a thread (low bits first). */
static void pack(unsigned *regs, int in, long long d, uint32_t code)
{
    int bits = in_bits(in), per = 32 / bits;
    regs[d / per] |= bits == 32 ? code : code << (bits * (d % per));
}

/* Tile element (row, col) of thread tid's element d under encoding e. */
static void elem_x(const ck_distribution *d, long long tid, long long r, int *x)
{
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y];
    ck_dist_partition_index(d, tid, p);
    ck_dist_d_to_ys(d, r, y);
    ck_dist_calculate_x(d, p, y, x);
}

static void make_dist(const char *instr, ck_mma_operand op, ck_distribution *d)
{
    ck_dist_encoding e;
    CHECK_OK(ck_mma_encoding(instr, op, &e));
    CHECK_OK(ck_dist_make(&e, d));
}

/* mma.sync through tests/kernels/mma.cu: A, B, C packed by the encodings, D read by C's. */
static void run_mma(ck_kernel *k, int ki, int variant)
{
    const kind *kd = &kinds[ki];
    const char *instr = kd->fmt;
    ck_distribution da, db, dc;
    make_dist(instr, CK_MMA_A, &da);
    make_dist(instr, CK_MMA_B, &db);
    make_dist(instr, CK_MMA_C, &dc);
    uint32_t A[16][32], B[32][8];
    double C[16][8];
    unsigned fa[32][4], fb[32][2], fc[32][4], fd[32][4];
    memset(fa, 0, sizeof fa), memset(fb, 0, sizeof fb), memset(fc, 0, sizeof fc);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < kd->k; ++c)
            A[r][c] = code_of(kd->in);
    for (int r = 0; r < kd->k; ++r)
        for (int c = 0; c < 8; ++c)
            B[r][c] = code_of(kd->in);
    const int integer = kd->in >= IN_S8;
    for (int t = 0; t < 32; ++t) {
        int x[2];
        for (long long r = 0; r < da.elements_per_thread; ++r)
            elem_x(&da, t, r, x), pack(fa[t], kd->in, r, A[x[0]][x[1]]);
        for (long long r = 0; r < db.elements_per_thread; ++r)
            elem_x(&db, t, r, x), pack(fb[t], kd->in, r, B[x[0]][x[1]]);
        for (long long r = 0; r < dc.elements_per_thread; ++r) {
            elem_x(&dc, t, r, x);
            int v = (int)rnd(201) - 100;
            C[x[0]][x[1]] = v;
            if (kd->acc16)
                fc[t][r / 2] |=
                    (uint32_t)ck_nc_from_f32(CK_NC_F16, (float)v, CK_NC_ROUND_NEAREST_EVEN,
                                             CK_NC_SATURATE, 0)
                    << (16 * (r % 2));
            else
                fc[t][r] = integer ? (uint32_t)v : ck_nc_f32_bits((float)v);
        }
    }
    void *pa = ckk_upload(fa, sizeof fa), *pb = ckk_upload(fb, sizeof fb);
    void *pc = ckk_upload(fc, sizeof fc), *pd = ckk_upload(NULL, sizeof fd);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 5, CKK_ARG(variant), CKK_ARG(pa), CKK_ARG(pb),
                        CKK_ARG(pc), CKK_ARG(pd)));
    ckk_download(fd, pd, sizeof fd);
    int bad = 0;
    for (int t = 0; t < 32; ++t)
        for (long long r = 0; r < dc.elements_per_thread; ++r) {
            int x[2];
            elem_x(&dc, t, r, x);
            double want = C[x[0]][x[1]];
            for (int kk = 0; kk < kd->k; ++kk)
                want += value_of(kd->in, A[x[0]][kk]) * value_of(kd->in, B[kk][x[1]]);
            double got = kd->acc16
                             ? ck_nc_to_f64(CK_NC_F16, (fd[t][r / 2] >> (16 * (r % 2))) & 0xFFFFu)
                         : integer ? (double)(int32_t)fd[t][r]
                                   : (double)ck_nc_bits_f32(fd[t][r]);
            if (got != want && bad++ < 3)
                printf("  %s lane %d element %lld (D[%d][%d]): %g, expected %g\n", instr, t, r,
                       x[0], x[1], got, want);
        }
    CHECK_MSG(bad == 0,
              "%s on the device: %d of 128 accumulators differ from the product of the "
              "operands packed by the encodings",
              instr, bad);
    ck_free(ckk_device, pa), ck_free(ckk_device, pb), ck_free(ckk_device, pc),
        ck_free(ckk_device, pd);
}

static void test_mma_on_device(void)
{
    /* kinds[0..10] -> tests/kernels/mma.cu variants */
    static const int variant[11] = {7, 8, 0, 1, 10, 9, 2, 3, 4, 11, 12};
    ck_kernel *k = ckk_kernel("mma.cu", "mma_all");
    if (!k)
        return;
    for (int i = 0; i < 11; ++i)
        for (int rep = 0; rep < 2; ++rep)
            run_mma(k, i, variant[i]);
}

/* wgmma, register-A form (tests/kernels/wgmma.cu wgmma_rs): A packed by the RS encoding, B a
 * K-major (K x N) shared-memory tile laid out by ck_smem_tile_make (swizzle `swz`), D read by
 * the C encoding. variant as in wgmma.cu: 0..2 bf16 N = 64/128/256, 3..5 f16, 6/7 tf32
 * N = 64/128, 8 e4m3 N = 64. */
static void run_wgmma(ck_kernel *k, int variant, int swz)
{
    static const int in_of[9] = {IN_BF16, IN_BF16, IN_BF16, IN_F16, IN_F16,
                                 IN_F16,  IN_TF32, IN_TF32, IN_E4M3};
    const int in = in_of[variant];
    const int n = variant <= 5 ? 64 << (variant % 3) : variant == 7 ? 128 : 64;
    const int eb = in_bits(in) / 8, kstep = 32 / eb; /* elements of K per instruction */
    const int kbytes = swz ? 16 << swz : 64, kel = kbytes / eb, ksteps = kbytes / 32;
    char instr[64];
    snprintf(instr, sizeof instr, "wgmma.m64n%dk%d.f32.%s", n, kstep,
             in == IN_BF16   ? "bf16"
             : in == IN_F16  ? "f16"
             : in == IN_TF32 ? "tf32"
                             : "e4m3");
    ck_distribution da, dc;
    make_dist(instr, CK_MMA_A, &da);
    make_dist(instr, CK_MMA_C, &dc);
    ck_smem_tile tile = {kel, n, eb, (ck_nv_swizzle)swz, 0, 0, 0, 0, 0, 0};
    ck_descriptor *desc = NULL;
    CHECK_OK(ck_smem_tile_make(&tile, &desc));
    long long lbo = 0, sbo = 0;
    CHECK_OK(ck_smem_tile_wgmma_offsets(&tile, 0, &lbo, &sbo));
    static uint32_t A[64][128], B[128][256];
    static unsigned char img[32768];
    static unsigned afrag[4 * 128 * 4];
    static float out[128 * 128];
    memset(img, 0, sizeof img), memset(afrag, 0, sizeof afrag);
    CHECK(tile.bytes <= (long long)sizeof img);
    for (int m = 0; m < 64; ++m)
        for (int kk = 0; kk < kel; ++kk)
            A[m][kk] = code_of(in);
    for (int kk = 0; kk < kel; ++kk)
        for (int c = 0; c < n; ++c) {
            int64_t idx[2] = {kk, c}, off = 0;
            B[kk][c] = code_of(in);
            CHECK_OK(ck_descriptor_calculate_offset(desc, idx, &off));
            for (int b = 0; b < eb; ++b)
                img[off * eb + b] = (unsigned char)(B[kk][c] >> (8 * b));
        }
    for (int ks = 0; ks < ksteps; ++ks)
        for (int t = 0; t < 128; ++t)
            for (long long r = 0; r < da.elements_per_thread; ++r) {
                int x[2];
                elem_x(&da, t, r, x);
                pack(&afrag[(ks * 128 + t) * 4], in, r, A[x[0]][ks * kstep + x[1]]);
            }
    int bbytes = (int)((tile.bytes + 3) / 4 * 4), ilbo = (int)lbo, isbo = (int)sbo;
    int kadv = swz ? 32 : 2 * ilbo; /* 32 bytes of K: within the span, or two core matrices */
    void *pa = ckk_upload(afrag, sizeof afrag), *pb = ckk_upload(img, sizeof img);
    void *po = ckk_upload(NULL, (size_t)128 * n / 2 * 4);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 10, CKK_ARG(variant), CKK_ARG(swz), CKK_ARG(ilbo),
                        CKK_ARG(isbo), CKK_ARG(kadv), CKK_ARG(ksteps), CKK_ARG(pa), CKK_ARG(pb),
                        CKK_ARG(bbytes), CKK_ARG(po)));
    ckk_download(out, po, (size_t)128 * n / 2 * 4);
    int bad = 0;
    for (int t = 0; t < 128; ++t)
        for (long long r = 0; r < dc.elements_per_thread; ++r) {
            int x[2];
            elem_x(&dc, t, r, x);
            double want = 0;
            for (int kk = 0; kk < kel; ++kk)
                want += value_of(in, A[x[0]][kk]) * value_of(in, B[kk][x[1]]);
            if (out[t * (n / 2) + r] != want && bad++ < 3)
                printf("  %s swizzle %d: thread %d element %lld (D[%d][%d]) = %g, expected %g\n",
                       instr, swz, t, r, x[0], x[1], out[t * (n / 2) + r], want);
        }
    CHECK_MSG(bad == 0, "%s (register A, B tile swizzle %d) on the device: %d of %d wrong", instr,
              swz, bad, 64 * n);
    ck_descriptor_destroy(desc);
    ck_free(ckk_device, pa), ck_free(ckk_device, pb), ck_free(ckk_device, po);
}

static void test_wgmma_on_device(void)
{
    ck_kernel *k = ckk_kernel("wgmma.cu", "wgmma_rs");
    if (!k)
        return;
    run_wgmma(k, 0, 3); /* bf16 N64, 128B */
    run_wgmma(k, 4, 2); /* f16 N128, 64B */
    run_wgmma(k, 2, 1); /* bf16 N256, 32B */
    run_wgmma(k, 3, 0); /* f16 N64, interleaved */
    run_wgmma(k, 6, 3); /* tf32 N64 */
    run_wgmma(k, 8, 0); /* e4m3 N64 */
}

/* ------------------------------------------------------------------ shared-memory tiles */

/* The canonical byte offset, written from docs/device-tensor.md's description: strided index
 * s, contiguous byte cb, group / span strides, then the address swizzle. */
static long long canonical(int swz, long long s, long long cb, long long group, long long span)
{
    long long raw, S = 16LL << swz, out = 0;
    if (swz == 0)
        raw = (s % 8) * 16 + (s / 8) * group + cb % 16 + (cb / 16) * span;
    else
        raw = (s % 8) * S + (s / 8) * group + cb % S + (cb / S) * span;
    ck_nv_swizzle_offset((ck_nv_swizzle)swz, raw, &out);
    return out;
}

/* The wgmma table (docs/device-tensor.md) with the tile's LBO/SBO, for operand element
 * (mn, k) at byte kb = k * eb / mb = mn * eb; swizzled K-major within one span only. */
static long long wgmma_table(int swz, int k_major, long long mn, long long k, int eb, long long lbo,
                             long long sbo)
{
    long long S = 16LL << swz, kb = k * eb, mb = mn * eb, raw, out = 0;
    if (k_major)
        raw = swz ? (mn % 8) * S + (mn / 8) * sbo + kb
                  : (mn % 8) * 16 + (mn / 8) * sbo + kb % 16 + (kb / 16) * lbo;
    else
        raw = swz ? mb % S + (mb / S) * lbo + (k % 8) * S + (k / 8) * sbo
                  : mb % 16 + (mb / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo;
    ck_nv_swizzle_offset((ck_nv_swizzle)swz, raw, &out);
    return out;
}

static void test_smem_tiles_match_formulas(void)
{
    int tiles = 0;
    static unsigned char used[1 << 20];
    for (int swz = 0; swz < 4; ++swz)
        for (int ebi = 0; ebi < 4; ++ebi)
            for (int cd = 0; cd < 2; ++cd)
                for (int shape = 0; shape < 3; ++shape)
                    for (int custom = 0; custom < 2; ++custom) {
                        const int eb = 1 << ebi, S = swz ? 16 << swz : 16;
                        const int clen = S / eb * (1 + shape), slen = 8 * (1 + 3 * shape);
                        const long long pat = swz ? 128LL << swz : 16;
                        ck_smem_tile t = {cd ? slen : clen,
                                          cd ? clen : slen,
                                          eb,
                                          (ck_nv_swizzle)swz,
                                          cd,
                                          0,
                                          0,
                                          0,
                                          0,
                                          0};
                        if (custom) { /* gaps: groups and spans apart by extra patterns */
                            long long gb = swz ? 8LL * S : (long long)clen * eb / 16 * 128;
                            t.group_stride_bytes = gb + pat;
                            t.span_stride_bytes = (swz ? slen / 8 * gb : 128) * 2 + 3 * pat;
                            if (!swz) /* core matrices: spans after all groups */
                                t.span_stride_bytes = (slen / 8) * (gb + pat) + pat;
                        }
                        ck_descriptor *d = NULL;
                        CHECK_OK(ck_smem_tile_make(&t, &d));
                        if (!d)
                            continue;
                        const long long G = t.group_stride_bytes, P = t.span_stride_bytes;
                        if (t.bytes > (long long)sizeof used) {
                            CHECK_MSG(0, "tile of %lld bytes", t.bytes);
                            ck_descriptor_destroy(d);
                            continue;
                        }
                        memset(used, 0, sizeof used);
                        int bad = 0;
                        for (int s = 0; s < slen; ++s)
                            for (int c = 0; c < clen; ++c) {
                                int64_t idx[2], off = 0;
                                idx[cd ? 0 : 1] = s, idx[cd ? 1 : 0] = c;
                                CHECK_OK(ck_descriptor_calculate_offset(d, idx, &off));
                                long long want = canonical(swz, s, (long long)c * eb, G, P);
                                bad += off * eb != want;
                                if (off * eb >= 0 && off * eb < t.bytes)
                                    bad += used[off * eb]++ != 0;
                                else
                                    ++bad;
                            }
                        CHECK_MSG(bad == 0,
                                  "smem tile swizzle %d, %d-byte elements, %dx%d contiguous dim "
                                  "%d%s: %d offsets differ from the canonical formula",
                                  swz, eb, t.rows, t.cols, cd, custom ? " (strides)" : "", bad);
                        /* the wgmma table, as either operand major-ness */
                        for (int kdim = 0; kdim < 2; ++kdim) {
                            long long lbo = 0, sbo = 0;
                            CHECK_OK(ck_smem_tile_wgmma_offsets(&t, kdim, &lbo, &sbo));
                            int k_major = kdim == cd, tb = 0;
                            for (int r = 0; r < t.rows; ++r)
                                for (int c = 0; c < t.cols; ++c) {
                                    long long k = kdim ? c : r, mn = kdim ? r : c;
                                    if (k_major && swz && k * eb >= S)
                                        continue; /* one span: LBO unused */
                                    int64_t idx[2] = {r, c}, off = 0;
                                    ck_descriptor_calculate_offset(d, idx, &off);
                                    tb +=
                                        off * eb != wgmma_table(swz, k_major, mn, k, eb, lbo, sbo);
                                }
                            CHECK_MSG(tb == 0,
                                      "smem tile swizzle %d eb %d contiguous %d as %s-major: %d "
                                      "offsets differ from the wgmma table (LBO %lld, SBO %lld)",
                                      swz, eb, cd, k_major ? "K" : "MN", tb, lbo, sbo);
                        }
                        CHECK_EQ_INT((int)t.align_bytes, (int)(pat < 16 ? 16 : pat));
                        ck_descriptor_destroy(d);
                        ++tiles;
                    }
    printf("%d shared-memory tiles checked element by element\n", tiles);
    ck_smem_tile bad = {64, 60, 2, CK_NV_SWIZZLE_128B, 1, 0, 0, 0, 0, 0};
    ck_descriptor *d = NULL;
    CHECK_STATUS(ck_smem_tile_make(&bad, &d), CK_ERROR_INVALID_ARGUMENT); /* 120-byte rows */
    bad.cols = 64, bad.rows = 12;
    CHECK_STATUS(ck_smem_tile_make(&bad, &d), CK_ERROR_INVALID_ARGUMENT); /* 12 rows */
    bad.rows = 64, bad.group_stride_bytes = 512, bad.span_stride_bytes = 1024;
    CHECK_STATUS(ck_smem_tile_make(&bad, &d), CK_ERROR_INVALID_ARGUMENT); /* off pattern */
    bad.group_stride_bytes = 0, bad.span_stride_bytes = 0, bad.elem_bytes = 3;
    CHECK_STATUS(ck_smem_tile_make(&bad, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK(d == NULL);
}

/* Bank conflicts of ldmatrix-style row accesses (each lane one 16-byte row of an 8x8 matrix of
 * 16-bit elements) of tiles with 128-byte rows: one matrix (8 lanes, rows 0..7, one chunk per
 * access) and four (32 lanes, ldmatrix.x4's lanes 8i + j: rows 8(i&1) + j, chunk 2a + (i>>1)). */
static void bank_case(const char *what, const char *enc_text, int rows, ck_nv_swizzle swz,
                      int plain, long long want_ways, long long want_min)
{
    ck_dist_encoding e;
    ck_distribution dist;
    CHECK_OK(ck_dist_encoding_parse(enc_text, &e));
    CHECK_OK(ck_dist_make(&e, &dist));
    ck_descriptor *d = NULL;
    if (plain) {
        ck_ival len[2] = {ck_ival_int(rows), ck_ival_int(64)},
                str[2] = {ck_ival_int(64), ck_ival_int(1)};
        CHECK_OK(ck_descriptor_make_naive(2, len, str, &d));
    } else {
        ck_smem_tile t = {rows, 64, 2, swz, 1, 0, 0, 0, 0, 0};
        if (swz == CK_NV_SWIZZLE_NONE || swz == CK_NV_SWIZZLE_32B || swz == CK_NV_SWIZZLE_64B)
            t.cols = 64; /* several spans / core matrices per row */
        CHECK_OK(ck_smem_tile_make(&t, &d));
    }
    ck_access_report rep;
    CHECK_OK(ck_access_check_desc(&dist, d, CK_DTYPE_BF16, 0, CK_NV_SWIZZLE_NONE, NULL, &rep));
    CHECK_EQ_INT(rep.vector_bytes, 16);
    CHECK(rep.coverage_ok);
    CHECK_MSG(rep.bank_ways_max == want_ways && rep.stats[0].bank_ways_min == want_min,
              "%s: %lld-way (minimum %lld), expected %lld-way (minimum %lld)", what,
              rep.bank_ways_max, rep.stats[0].bank_ways_min, want_ways, want_min);
    printf("  %-44s %lld-way, minimum %lld\n", what, rep.bank_ways_max, rep.stats[0].bank_ways_min);
    ck_access_report_free(&rep);
    ck_descriptor_destroy(d);
}

static void test_smem_tile_bank_conflicts(void)
{
    /* one 8x8 matrix per access: lane j = row j, Y0 = chunk, Y1 = element */
    const char *x1 = "tile_distribution_encoding<sequence<>, tuple<sequence<8>, sequence<8, 8>>,"
                     " tuple<sequence<1>>, tuple<sequence<0>>, sequence<2, 2>, sequence<0, 1>>";
    /* ldmatrix.x4: lane = (i>>1, i&1, j) */
    const char *x4 = "tile_distribution_encoding<sequence<>, tuple<sequence<2, 8>, "
                     "sequence<4, 2, 8>>, tuple<sequence<2, 1, 1>>, tuple<sequence<1, 0, 1>>, "
                     "sequence<2, 2>, sequence<0, 2>>";
    bank_case("x1, plain 128-byte rows", x1, 8, CK_NV_SWIZZLE_NONE, 1, 8, 1);
    bank_case("x1, 128B swizzle", x1, 8, CK_NV_SWIZZLE_128B, 0, 1, 1);
    bank_case("x1, 64B swizzle", x1, 8, CK_NV_SWIZZLE_64B, 0, 1, 1);
    bank_case("x1, 32B swizzle", x1, 8, CK_NV_SWIZZLE_32B, 0, 1, 1);
    bank_case("x1, core matrices (no swizzle)", x1, 8, CK_NV_SWIZZLE_NONE, 0, 1, 1);
    bank_case("x4, plain 128-byte rows", x4, 16, CK_NV_SWIZZLE_NONE, 1, 16, 4);
    bank_case("x4, 128B swizzle", x4, 16, CK_NV_SWIZZLE_128B, 0, 4, 4);
}

/* ------------------------------------------------------------------ windows: ldmatrix */

static const char *ld_kernel =
    "CK_KERNEL void ldk(const unsigned short *img, int n, long long o0, long long o1,\n"
    "                   unsigned short *out)\n"
    "{\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned short, sm, 8192, 1024);\n"
    "    for (int i = (int)ck_thread_linear(); i < n; i += (int)ck_block_threads())\n"
    "        sm[i] = img[i];\n"
    "    ck_sync_threads();\n"
    "    ck_win_f w = make_win_f(sm, o0, o1);\n"
    "    unsigned short regs[CK_NREGS_f];\n"
    "    load_f(regs, &w);\n"
    "    for (int i = 0; i < CK_NREGS_f; ++i)\n"
    "        out[ck_thread_linear() * CK_NREGS_f + i] = regs[i];\n"
    "}\n";

/* A window with the encoding of `instr` operand `op` over a shared-memory tile; the generated
 * load must use `want` ("ck_ldmatrix_x4(", ... or NULL: no ldmatrix) and give every thread the
 * elements the encoding names, on the device. */
static void ld_case_enc(const char *instr, ck_mma_operand op, ck_dist_encoding e, ck_smem_tile tile,
                        long long o0, long long o1, const char *want, int row_stride)
{
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&e, &dist));
    ck_descriptor *desc = NULL;
    if (row_stride) { /* a plain row-major tile with padded rows instead */
        ck_ival len[2] = {ck_ival_int(tile.rows), ck_ival_int(tile.cols)},
                str[2] = {ck_ival_int(row_stride), ck_ival_int(1)};
        CHECK_OK(ck_descriptor_make_naive(2, len, str, &desc));
        tile.bytes = 2LL * tile.rows * row_stride;
    } else {
        CHECK_OK(ck_smem_tile_make(&tile, &desc));
    }
    if (!desc)
        return;
    ck_tile_window_spec w = {"f", desc, NULL, &e, CK_DTYPE_BF16, {0}, 0, CK_WIN_LOAD, 0};
    w.origin_align[0] = dist.x_lengths[0], w.origin_align[1] = dist.x_lengths[1];
    char *text = NULL;
    CHECK_OK(ck_tile_window_generate(&w, &text));
    int has = text && strstr(text, "ck_ldmatrix") != NULL;
    if (want)
        CHECK_MSG(text && strstr(text, want),
                  "%s operand %c over a %dx%d tile (swizzle %d): the "
                  "generated load does not call %s",
                  instr, "ABC"[op], tile.rows, tile.cols, (int)tile.swizzle, want);
    else
        CHECK_MSG(!has, "%s operand %c: ldmatrix where it cannot apply", instr, "ABC"[op]);
    ck_tile_free(text);
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    ck_status st = ck_tile_kernel_load(ckk_device, 1, &w, ld_kernel, &mod);
    CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    if (st || ck_module_get_kernel(mod, "ldk", &k) != CK_SUCCESS) {
        ck_descriptor_destroy(desc);
        return;
    }
    /* the image: element (r, c) holds r * 256 + c at its descriptor offset */
    static unsigned short img[8192], out[128 * 64];
    memset(img, 0, sizeof img);
    for (int r = 0; r < tile.rows; ++r)
        for (int c = 0; c < tile.cols; ++c) {
            int64_t idx[2] = {r, c}, off = 0;
            ck_descriptor_calculate_offset(desc, idx, &off);
            img[off] = (unsigned short)(r * 256 + c);
        }
    int n = (int)(tile.bytes / 2);
    void *pi = ckk_upload(img, sizeof img), *po = ckk_upload(NULL, sizeof out);
    CHECK_OK(ckk_launch(k, 1, 1, 1, (int)dist.threads, 1, 1, 0, 5, CKK_ARG(pi), CKK_ARG(n),
                        CKK_ARG(o0), CKK_ARG(o1), CKK_ARG(po)));
    ckk_download(out, po, sizeof out);
    int bad = 0;
    for (long long t = 0; t < dist.threads; ++t)
        for (long long r = 0; r < dist.elements_per_thread; ++r) {
            int x[2];
            elem_x(&dist, t, r, x);
            unsigned want_v = (unsigned)((o0 + x[0]) * 256 + o1 + x[1]);
            if (out[t * dist.elements_per_thread + r] != want_v && bad++ < 3)
                printf("  %s %c thread %lld register %lld: 0x%04x, expected 0x%04x\n", instr,
                       "ABC"[op], t, r, out[t * dist.elements_per_thread + r], want_v);
        }
    CHECK_MSG(bad == 0,
              "%s operand %c window over a swizzle-%d tile at (%lld, %lld): %d registers "
              "wrong",
              instr, "ABC"[op], (int)tile.swizzle, o0, o1, bad);
    ck_free(ckk_device, pi), ck_free(ckk_device, po);
    ck_descriptor_destroy(desc);
}

static void ld_case(const char *instr, ck_mma_operand op, ck_smem_tile tile, long long o0,
                    long long o1, const char *want, int row_stride)
{
    ck_dist_encoding e;
    CHECK_OK(ck_mma_encoding(instr, op, &e));
    ld_case_enc(instr, op, e, tile, o0, o1, want, row_stride);
}

/* The operand `op` of `instr` as a block-level encoding of 2 x 2 warps (P0 = warp, P1 = lane),
 * `outer` giving the warps' and repeats' components (CK's BlockGemm decomposition). */
static void ld_case_block(const char *instr, ck_mma_operand op, const char *outer,
                          ck_smem_tile tile, long long o0, long long o1, const char *want)
{
    ck_dist_encoding o, in, e;
    CHECK_OK(ck_dist_encoding_parse(outer, &o));
    CHECK_OK(ck_mma_encoding(instr, op, &in));
    in.ndim_p = 2; /* the lane becomes P1; P0 (the warp) has no component in the fragment */
    in.p_size[1] = in.p_size[0];
    memcpy(in.p_major[1], in.p_major[0], sizeof in.p_major[0]);
    memcpy(in.p_minor[1], in.p_minor[0], sizeof in.p_minor[0]);
    in.p_size[0] = 0;
    CHECK_OK(ck_dist_embed(&o, &in, &e));
    ld_case_enc(instr, op, e, tile, o0, o1, want, 0);
}

static void test_window_ldmatrix(void)
{
    const ck_smem_tile a128 = {16, 64, 2, CK_NV_SWIZZLE_128B, 1, 0, 0, 0, 0, 0};
    /* A (M x K, K contiguous): ldmatrix.x4, every k-slice of a 128B-swizzled tile */
    for (int k0 = 0; k0 < 64; k0 += 16)
        ld_case("mma.m16n8k16.f32.bf16", CK_MMA_A, a128, 0, k0, "ck_ldmatrix_x4(", 0);
    /* B (K x N) with N contiguous (MN-major): ldmatrix.x2.trans */
    const ck_smem_tile bmn = {32, 64, 2, CK_NV_SWIZZLE_64B, 1, 0, 0, 0, 0, 0};
    ld_case("mma.m16n8k16.f32.bf16", CK_MMA_B, bmn, 16, 40, "ck_ldmatrix_x2_trans(", 0);
    /* B with K contiguous (K-major, column-major K x N): ldmatrix.x2 */
    const ck_smem_tile bk = {64, 16, 2, CK_NV_SWIZZLE_128B, 0, 0, 0, 0, 0, 0};
    ld_case("mma.m16n8k16.f32.bf16", CK_MMA_B, bk, 32, 8, "ck_ldmatrix_x2(", 0);
    /* k8 fragments from interleaved core matrices (no swizzle): x2 and x1 */
    const ck_smem_tile none = {32, 32, 2, CK_NV_SWIZZLE_NONE, 1, 0, 0, 0, 0, 0};
    ld_case("mma.m16n8k8.f32.bf16", CK_MMA_A, none, 16, 8, "ck_ldmatrix_x2(", 0);
    ld_case("mma.m16n8k8.f32.bf16", CK_MMA_B, none, 8, 24, "ck_ldmatrix_x1_trans(", 0);
    /* wgmma's register A (64 x 16, four warps) from a 32B-swizzled tile */
    const ck_smem_tile wa = {64, 32, 2, CK_NV_SWIZZLE_32B, 1, 0, 0, 0, 0, 0};
    ld_case("wgmma.m64n64k16.f32.bf16", CK_MMA_A, wa, 0, 16, "ck_ldmatrix_x4(", 0);
    /* the m16n8 accumulator's pairs are 8x8 matrices too: .trans from a column-major tile */
    const ck_smem_tile cm = {16, 16, 2, CK_NV_SWIZZLE_NONE, 0, 0, 0, 0, 0, 0};
    ld_case("mma.m16n8k8.f32.bf16", CK_MMA_C, cm, 0, 8, "ck_ldmatrix_x2_trans(", 0);
    /* rows of 20 elements: the 8-element runs are not 16-byte aligned: the general path */
    const ck_smem_tile pad = {16, 16, 2, CK_NV_SWIZZLE_NONE, 1, 0, 0, 0, 0, 0};
    ld_case("mma.m16n8k16.f32.bf16", CK_MMA_A, pad, 0, 0, NULL, 20);
    /* Block-level fragments of 2 x 2 warps (wm, wn) = (warp / 2, warp % 2), 2 repeats each: A
     * (64 x 16) is the same for both wn, B (16 x 64) for both wm (replicated over warps, an R
     * component of P0): ldmatrix still applies, each warp addressing its own rows. */
    const ck_smem_tile ba = {64, 32, 2, CK_NV_SWIZZLE_64B, 1, 0, 0, 0, 0, 0};
    ld_case_block("mma.m16n8k16.f32.bf16", CK_MMA_A,
                  "tile_distribution_encoding<sequence<2>, tuple<sequence<2, 2>, sequence<1>>, "
                  "tuple<sequence<1, 0>, sequence<>>, tuple<sequence<0, 0>, sequence<>>, "
                  "sequence<1, 2>, sequence<1, 0>>",
                  ba, 0, 16, "ck_ldmatrix_x4(");
    const ck_smem_tile bb = {32, 64, 2, CK_NV_SWIZZLE_128B, 1, 0, 0, 0, 0, 0};
    ld_case_block("mma.m16n8k16.f32.bf16", CK_MMA_B,
                  "tile_distribution_encoding<sequence<2>, tuple<sequence<1>, sequence<2, 2>>, "
                  "tuple<sequence<0, 2>, sequence<>>, tuple<sequence<0, 0>, sequence<>>, "
                  "sequence<1, 2>, sequence<0, 1>>",
                  bb, 16, 32, "ck_ldmatrix_x4_trans(");
}

int main(void)
{
    RUN_TEST(test_encodings_match_isa);
    RUN_TEST(test_spellings_and_errors);
    RUN_TEST(test_smem_tiles_match_formulas);
    RUN_TEST(test_smem_tile_bank_conflicts);
    if (!ckk_open())
        return 1;
    RUN_TEST(test_mma_on_device);
    RUN_TEST(test_wgmma_on_device);
    RUN_TEST(test_window_ldmatrix);
    ckk_close();
    return CK_TEST_REPORT();
}
