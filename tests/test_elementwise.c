/*
 * ck_copy and ck_cast (src/ops/elementwise) on the context's device (the emulator in CI;
 * CK_DEVICE=cuda on a GPU, where large sizes are added). Every output byte is compared with
 * ck_convert_array on the host (bit for bit) or with the source bytes (copy).
 * Also: the fast bf16/fp16 <-> fp32 conversions of the block library (ck_convert.h, as ew_kernel.h
 * uses them) against ck_convert_* for every 16-bit code and 2^22 fp32 values, and the error cases.
 */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "test.h"

/* ew_kernel.h compiled on the host as plain C (it is written to be). */
#define CK_DEVICE static inline
static inline float ck_u32_as_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t ck_f32_as_u32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float ck_fdiv_fast(float a, float b)
{
    return a / b; /* as the host prelude */
}
#include "../src/ops/elementwise/ew_kernel.h"

static ck_context *ctx;
static ck_device *dev;
static int on_gpu;
static uint64_t rng = 12345;

static void test_fast_conversions(void)
{
    long bad = 0;
    for (uint32_t c = 0; c < 65536; ++c) {
        float ref;
        ck_convert_to_f32(CK_DTYPE_BF16, c, &ref);
        if (ck_f32_as_u32(ck_fast_bf16_to_f32_canon(c)) != ck_f32_as_u32(ref) && bad++ < 5)
            fprintf(stderr, "bf16 0x%04x -> %08x, expected %08x\n", c,
                    ck_f32_as_u32(ck_fast_bf16_to_f32_canon(c)), ck_f32_as_u32(ref));
        ck_convert_to_f32(CK_DTYPE_F16, c, &ref);
        if (ck_f32_as_u32(ck_fast_f16_to_f32_canon(c)) != ck_f32_as_u32(ref) && bad++ < 5)
            fprintf(stderr, "f16 0x%04x -> %08x, expected %08x\n", c,
                    ck_f32_as_u32(ck_fast_f16_to_f32_canon(c)), ck_f32_as_u32(ref));
    }
    /* fp32 -> bf16/f16: every exponent with random mantissas, plus every value near the
     * f16 overflow and subnormal thresholds */
    for (uint32_t k = 0; k < (1u << 22); ++k) {
        uint32_t u;
        if (k < (1u << 21))
            u = (uint32_t)ckt_rand64(&rng);
        else if (k < (1u << 21) + (1u << 20))
            u = 0x38000000u + (k & 0xFFFFFu) * 2u + (k >> 20 & 1u) * 0x80000000u; /* ~2^-15 */
        else
            u = 0x477F0000u + (k & 0xFFFFFu) + (k >> 21 & 1u) * 0x80000000u; /* ~65504 */
        float x = ck_u32_as_f32(u);
        uint64_t rb, rh;
        ck_convert_from_f32(CK_DTYPE_BF16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &rb);
        ck_convert_from_f32(CK_DTYPE_F16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &rh);
        if (ck_fast_f32_to_bf16(x) != rb && bad++ < 5)
            fprintf(stderr, "f32 %08x -> bf16 %04x, expected %04x\n", u, ck_fast_f32_to_bf16(x),
                    (unsigned)rb);
        if (ck_fast_f32_to_f16(x) != rh && bad++ < 5)
            fprintf(stderr, "f32 %08x -> f16 %04x, expected %04x\n", u, ck_fast_f32_to_f16(x),
                    (unsigned)rh);
    }
    CHECK_EQ_INT(bad, 0);
}

/* ---- helpers ---------------------------------------------------------------------------- */
static size_t bytes_of(ck_dtype t, size_t n)
{
    size_t b = 0;
    ck_dtype_storage_size(t, n, &b);
    return b;
}

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    CHECK_OK(ck_malloc(dev, bytes ? bytes : 1, &p));
    return p;
}

static void fill_random(void *p, size_t bytes)
{
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; ++i)
        b[i] = (unsigned char)ckt_rand64(&rng);
}

/* Contiguous cast of n elements src_t -> dst_t with options o; checked byte for byte against
 * ck_convert_array of the same source bytes. */
static int cast_contig(ck_dtype dst_t, ck_dtype src_t, size_t n, const ck_convert_options *o,
                       int offset_elems)
{
    size_t sb = bytes_of(src_t, n + (size_t)offset_elems), db = bytes_of(dst_t, n);
    unsigned char *hs = malloc(sb), *hd = malloc(db + 1), *ref = malloc(db + 1);
    fill_random(hs, sb);
    if (src_t == CK_DTYPE_TF32)
        for (size_t i = 0; i < sb; i += 4)
            hs[i] &= 0xff; /* any container bits */
    void *ds = dalloc(sb), *dd = dalloc(db);
    CHECK_OK(ck_memcpy_h2d(dev, ds, hs, sb, NULL));
    CHECK_OK(ck_memset_d8(dev, dd, 0xAB, db, NULL));
    size_t off_bytes = bytes_of(src_t, (size_t)offset_elems);
    int64_t shape[1] = {(int64_t)n};
    ck_tensor td, ts;
    CHECK_OK(ck_tensor_init(&td, dd, dst_t, 1, shape, NULL));
    CHECK_OK(ck_tensor_init(&ts, (char *)ds + off_bytes, src_t, 1, shape, NULL));
    CHECK_OK(ck_convert_array(dst_t, ref, src_t, hs + off_bytes, n, o));
    ck_status st = ck_cast(ctx, &ts, &td, o);
    CHECK_MSG(st == CK_SUCCESS, "cast %s -> %s n=%zu: %s", ck_dtype_name(src_t),
              ck_dtype_name(dst_t), n, ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hd, dd, db, NULL));
    size_t first = db;
    for (size_t i = 0; i < db; ++i)
        if (hd[i] != ref[i]) {
            first = i;
            break;
        }
    CHECK_MSG(first == db,
              "cast %s -> %s n=%zu (round %d, ovf %d, scale %g): byte %zu is 0x%02x, "
              "expected 0x%02x",
              ck_dtype_name(src_t), ck_dtype_name(dst_t), n, o ? (int)o->round : 0,
              o ? (int)o->overflow : 0, o ? (double)o->scale : 1.0, first,
              first < db ? hd[first] : 0, first < db ? ref[first] : 0);
    ck_free(dev, ds);
    ck_free(dev, dd);
    free(hs);
    free(hd);
    free(ref);
    return first == db;
}

static void test_cast_all_pairs(void)
{
    int failed = 0;
    for (int s = 0; s < CK_DTYPE_COUNT; ++s)
        for (int d = 0; d < CK_DTYPE_COUNT; ++d) {
            int sub = ck_dtype_get((ck_dtype)s)->pack_elements > 1 ||
                      ck_dtype_get((ck_dtype)d)->pack_elements > 1;
            size_t n = sub ? 44 : 37;
            failed += !cast_contig((ck_dtype)d, (ck_dtype)s, n, NULL, 0);
        }
    CHECK_EQ_INT(failed, 0);
    printf("  225 pairs, %d kernels built so far\n", ck_context_kernel_count(ctx));
}

static void test_cast_modes(void)
{
    ck_convert_options o = ck_convert_options_default();
    const ck_dtype targets[] = {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_BF16,
                                CK_DTYPE_F16,      CK_DTYPE_I8,       CK_DTYPE_FP4_E2M1};
    for (int r = 0; r < CK_ROUND_MODE_COUNT; ++r)
        for (int v = 0; v < CK_OVERFLOW_MODE_COUNT; ++v)
            for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
                o.round = (ck_round_mode)r;
                o.overflow = (ck_overflow_mode)v;
                o.scale = r == 1 ? 0.0625f : r == 2 ? 3.0f : 1.0f;
                o.seed = 99u + (uint64_t)r;
                cast_contig(targets[t], CK_DTYPE_F32, 36, &o, 0);
                cast_contig(targets[t], CK_DTYPE_F64, 36, &o, 0);
            }
}

/* Fast pairs on odd sizes (vector path with a tail), a misaligned start (strided path) and
 * large exotic pairs (specialized kernels). */
static void test_cast_sizes(void)
{
    const size_t sizes[] = {1, 3, 17, 1023, 4097};
    const ck_dtype fast[] = {CK_DTYPE_F32, CK_DTYPE_BF16, CK_DTYPE_F16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                cast_contig(fast[b], fast[a], sizes[i], NULL, 0);
    cast_contig(CK_DTYPE_BF16, CK_DTYPE_F32, 1001, NULL, 1); /* 4-byte aligned source */
    ck_convert_options o = ck_convert_options_default();
    size_t big = 65536 + 5;
    o.round = CK_ROUND_STOCHASTIC;
    o.seed = 7;
    cast_contig(CK_DTYPE_FP8_E4M3, CK_DTYPE_F32, big, &o, 0);
    o = ck_convert_options_default();
    o.scale = 0.5f;
    cast_contig(CK_DTYPE_FP8_E5M2, CK_DTYPE_BF16, big, &o, 0);
    cast_contig(CK_DTYPE_BF16, CK_DTYPE_F64, big, NULL, 0);
    cast_contig(CK_DTYPE_F32, CK_DTYPE_I32, big, NULL, 0);
    if (on_gpu) {
        cast_contig(CK_DTYPE_BF16, CK_DTYPE_F32, (size_t)16384 * 8192, NULL, 0);
        cast_contig(CK_DTYPE_F32, CK_DTYPE_BF16, (size_t)16384 * 8192, NULL, 0);
        cast_contig(CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16, (size_t)16384 * 8192 + 3, NULL, 0);
    }
}

/* Strided copy/cast: dst[i][j] = src[j][i] of a (cols x rows) buffer with row padding, and a
 * broadcast source (stride 0), on shapes with length-1 dimensions. */
static void strided_case(ck_dtype dt, ck_dtype st, int64_t rows, int64_t cols, int bcast)
{
    int64_t ld = rows + 3; /* source is cols x ld, transposed view */
    size_t es = bytes_of(st, 1), ed = bytes_of(dt, 1);
    size_t sn = (size_t)(cols * ld), dn = (size_t)(rows * cols);
    unsigned char *hs = malloc(sn * es), *hd = malloc(dn * ed), *one = malloc(ed);
    fill_random(hs, sn * es);
    void *ds = dalloc(sn * es), *dd = dalloc(dn * ed);
    CHECK_OK(ck_memcpy_h2d(dev, ds, hs, sn * es, NULL));
    int64_t shape[4] = {1, rows, 1, cols};
    int64_t sstr[4] = {0, bcast ? 0 : 1, 5, ld};
    ck_tensor td, ts;
    CHECK_OK(ck_tensor_init(&td, dd, dt, 4, shape, NULL));
    CHECK_OK(ck_tensor_init(&ts, ds, st, 4, shape, sstr));
    if (dt == st)
        CHECK_OK(ck_copy(ctx, &ts, &td));
    else
        CHECK_OK(ck_cast(ctx, &ts, &td, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, hd, dd, dn * ed, NULL));
    long bad = 0;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            size_t si = (size_t)((bcast ? 0 : i) + j * ld);
            ck_convert_array(dt, one, st, hs + si * es, 1, NULL);
            if (memcmp(one, hd + (size_t)(i * cols + j) * ed, ed) != 0)
                ++bad;
        }
    CHECK_MSG(bad == 0, "strided %s -> %s %lldx%lld bcast %d: %ld wrong", ck_dtype_name(st),
              ck_dtype_name(dt), (long long)rows, (long long)cols, bcast, bad);
    ck_free(dev, ds);
    ck_free(dev, dd);
    free(hs);
    free(hd);
    free(one);
}

static void test_strided(void)
{
    strided_case(CK_DTYPE_F32, CK_DTYPE_F32, 17, 33, 0);
    strided_case(CK_DTYPE_BF16, CK_DTYPE_BF16, 1, 129, 0);
    strided_case(CK_DTYPE_BF16, CK_DTYPE_F32, 31, 7, 0);
    strided_case(CK_DTYPE_F16, CK_DTYPE_BF16, 5, 300, 1);
    strided_case(CK_DTYPE_F64, CK_DTYPE_I8, 3, 3, 0);           /* small exotic: run-time typed */
    strided_case(CK_DTYPE_FP8_E4M3, CK_DTYPE_F32, 300, 300, 0); /* large exotic: generated */
    if (on_gpu)
        strided_case(CK_DTYPE_BF16, CK_DTYPE_BF16, 8192, 4096, 0);
}

/* Copies of every storage size on odd sizes; fp4/fp6 contiguous; rank 0; in place. */
static void test_copy(void)
{
    const ck_dtype types[] = {CK_DTYPE_U8,  CK_DTYPE_BF16,     CK_DTYPE_F32,
                              CK_DTYPE_F64, CK_DTYPE_FP4_E2M1, CK_DTYPE_FP6_E3M2};
    const size_t sizes[] = {4, 12, 1024, 4100};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            cast_contig(types[t], types[t],
                        sizes[s] + (ck_dtype_get(types[t])->pack_elements > 1 ? 0 : 1), NULL, 0);
    cast_contig(CK_DTYPE_F32, CK_DTYPE_F32, 999, NULL, 3); /* not 16-byte aligned */
    if (on_gpu)
        cast_contig(CK_DTYPE_BF16, CK_DTYPE_BF16, (size_t)16384 * 8192, NULL, 0);
    /* rank 0 */
    float v = 2.5f, out = 0;
    void *a = dalloc(4), *b = dalloc(4);
    CHECK_OK(ck_memcpy_h2d(dev, a, &v, 4, NULL));
    ck_tensor ta, tb;
    CHECK_OK(ck_tensor_init(&ta, a, CK_DTYPE_F32, 0, NULL, NULL));
    CHECK_OK(ck_tensor_init(&tb, b, CK_DTYPE_F32, 0, NULL, NULL));
    CHECK_OK(ck_copy(ctx, &ta, &tb));
    CHECK_OK(ck_memcpy_d2h(dev, &out, b, 4, NULL));
    CHECK(out == 2.5f);
    /* in place: a copy onto itself is a no-op; bf16 -> f16 in place converts */
    CHECK_OK(ck_copy(ctx, &ta, &ta));
    ck_free(dev, a);
    ck_free(dev, b);
    size_t n = 1000;
    uint16_t *h = malloc(2 * n), *r = malloc(2 * n), *g = malloc(2 * n);
    for (size_t i = 0; i < n; ++i)
        h[i] = (uint16_t)(0x3000u + (unsigned)(ckt_rand64(&rng) % 0x1800u));
    void *d = dalloc(2 * n);
    CHECK_OK(ck_memcpy_h2d(dev, d, h, 2 * n, NULL));
    int64_t shape[1] = {(int64_t)n};
    ck_tensor t16, tb16;
    CHECK_OK(ck_tensor_init(&t16, d, CK_DTYPE_F16, 1, shape, NULL));
    CHECK_OK(ck_tensor_init(&tb16, d, CK_DTYPE_BF16, 1, shape, NULL));
    CHECK_OK(ck_cast(ctx, &tb16, &t16, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, g, d, 2 * n, NULL));
    CHECK_OK(ck_convert_array(CK_DTYPE_F16, r, CK_DTYPE_BF16, h, n, NULL));
    CHECK(memcmp(g, r, 2 * n) == 0);
    ck_free(dev, d);
    free(h);
    free(r);
    free(g);
}

static void test_errors(void)
{
    void *a = dalloc(4096), *b = dalloc(4096);
    int64_t s4[1] = {4}, s5[1] = {5}, s0[1] = {0};
    ck_tensor t4, t5, t4b, tbf, tmis, tz, tzd;
    CHECK_OK(ck_tensor_init(&t4, a, CK_DTYPE_F32, 1, s4, NULL));
    CHECK_OK(ck_tensor_init(&t5, b, CK_DTYPE_F32, 1, s5, NULL));
    CHECK_OK(ck_tensor_init(&tbf, b, CK_DTYPE_BF16, 1, s4, NULL));
    CHECK_OK(ck_tensor_init(&t4b, (char *)a + 4, CK_DTYPE_F32, 1, s4, NULL));
    CHECK_STATUS(ck_copy(ctx, &t4, &t5), CK_ERROR_INVALID_ARGUMENT); /* shapes */
    CHECK(strstr(ck_last_error(), "same shape") != NULL);
    CHECK_STATUS(ck_copy(ctx, &t4, &tbf), CK_ERROR_INVALID_ARGUMENT); /* dtypes */
    CHECK_STATUS(ck_copy(ctx, &t4, &t4b), CK_ERROR_INVALID_ARGUMENT); /* partial overlap */
    CHECK(strstr(ck_last_error(), "overlaps") != NULL);
    tmis = t4;
    tmis.data = (char *)b + 2; /* not aligned to 4 bytes */
    CHECK_STATUS(ck_cast(ctx, &t4, &tmis, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "aligned") != NULL);
    ck_convert_options o = ck_convert_options_default();
    o.scale = 0.0f;
    CHECK_STATUS(ck_cast(ctx, &t4, &tbf, &o), CK_ERROR_INVALID_ARGUMENT);
    o = ck_convert_options_default();
    o.round = (ck_round_mode)9;
    CHECK_STATUS(ck_cast(ctx, &t4, &tbf, &o), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_cast(ctx, &t4, NULL, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_cast(NULL, &t4, &tbf, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* fp4 must be contiguous */
    ck_tensor f4 = t4;
    f4.dtype = CK_DTYPE_FP4_E2M1;
    f4.strides[0] = 2;
    CHECK_STATUS(ck_cast(ctx, &t4, &f4, NULL), CK_ERROR_UNSUPPORTED);
    /* bf16 -> f32 in place: storage sizes differ */
    ck_tensor tbf_a = tbf;
    tbf_a.data = a;
    CHECK_STATUS(ck_cast(ctx, &tbf_a, &t4, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* zero-size: a no-op, NULL data allowed */
    CHECK_OK(ck_tensor_init(&tz, NULL, CK_DTYPE_F32, 1, s0, NULL));
    CHECK_OK(ck_tensor_init(&tzd, NULL, CK_DTYPE_BF16, 1, s0, NULL));
    int before = ck_context_kernel_count(ctx);
    CHECK_OK(ck_cast(ctx, &tz, &tzd, NULL));
    CHECK_OK(ck_copy(ctx, &tz, &tz));
    CHECK_EQ_INT(ck_context_kernel_count(ctx), before);
    ck_free(dev, a);
    ck_free(dev, b);
}

int main(void)
{
    RUN_TEST(test_fast_conversions);
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    dev = ck_context_device(ctx);
    on_gpu = ck_context_backend(ctx) == CK_BACKEND_CUDA;
    RUN_TEST(test_cast_all_pairs);
    RUN_TEST(test_cast_modes);
    RUN_TEST(test_cast_sizes);
    RUN_TEST(test_strided);
    RUN_TEST(test_copy);
    RUN_TEST(test_errors);
    printf("%d kernels built\n", ck_context_kernel_count(ctx));
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
