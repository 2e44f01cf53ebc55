/* The fast conversions the norm kernels use (src/device/ck_convert.h: ck_fast_f16_to_f32,
 * ck_fast_f32_to_bf16, ck_fast_f32_to_f16, ck_fast_f32_to_fp8e4m3) against the library's exact integer
 * conversions (ck_convert_*), bit for bit: every 16-bit code (f16 -> f32; as the high half of
 * an f32 also every bf16 rounding class), and f32 inputs around every f16 and fp8 e4m3 rounding
 * boundary (the exact half-way point, one below, one above, and a random low part, for every
 * f32 exponent/mantissa prefix), NaN payloads, infinities, the saturation threshold. Runs as a
 * kernel (emulator, or the GPU with CK_DEVICE=cuda). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "rt/runtime_internal.h"
#include "test.h"

static ck_context *ctx;
static uint64_t rng = 0x6e6f726d636f6e76ull;

static const char *conv_src =
    "#include \"ck_device.h\"\n"
    "#include \"ck_block.h\"\n"
    "CK_KERNEL void conv(uint32_t *out, const uint32_t *in, long long n)\n"
    "{\n"
    "    long long step = (long long)ck_grid_dim_x() * ck_block_dim_x();\n"
    "    for (long long i = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();\n"
    "         i < n; i += step) {\n"
    "        uint32_t v = in[i];\n"
    "        float f = ck_u32_as_f32(v);\n"
    "        out[4 * i] = ck_f32_as_u32(ck_fast_f16_to_f32(v & 0xffffu));\n"
    "        out[4 * i + 1] = ck_fast_f32_to_bf16(f);\n"
    "        out[4 * i + 2] = ck_fast_f32_to_f16(f);\n"
    "        out[4 * i + 3] = ck_fast_f32_to_fp8e4m3(f);\n"
    "    }\n"
    "}\n";

static void test_conversions(void)
{
    ck_device *dev = ck_context_device(ctx);
    /* 65536 codes; f16 boundaries: 2^19 prefixes (bits 31..13) x 1 probe (cycling through
     * half-way, below, above, random); bf16: the codes' high halves; fp8: 2^12 prefixes (bits
     * 31..20) x 16 probes */
    const long long n16 = 65536, nf16 = 1LL << 19, nfp8 = 4096LL * 16, nsp = 64;
    const long long n = 2 * n16 + nf16 + nfp8 + nsp;
    uint32_t *in = malloc(sizeof(uint32_t) * (size_t)n), *out = malloc(16 * (size_t)n);
    CHECK(in && out);
    if (!in || !out)
        return;
    long long i = 0;
    for (long long c = 0; c < n16; ++c)
        in[i++] = (uint32_t)c; /* all 16-bit codes */
    for (long long c = 0; c < n16; ++c) { /* bf16: every high half, around its boundary */
        uint32_t r = (uint32_t)ckt_rand64(&rng);
        uint32_t low[4] = {0x8000u, 0x7fffu, 0x8001u, r & 0xffffu};
        in[i++] = ((uint32_t)c << 16) | low[(c ^ (c >> 5)) & 3];
    }
    for (long long p = 0; p < nf16; ++p) {
        uint32_t r = (uint32_t)ckt_rand64(&rng);
        uint32_t low[4] = {0x1000u, 0xfffu, 0x1001u, r & 0x1fffu};
        in[i++] = ((uint32_t)p << 13) | low[(p ^ (p >> 7)) & 3];
    }
    for (long long p = 0; p < 4096; ++p)
        for (int q = 0; q < 16; ++q) {
            uint32_t r = (uint32_t)ckt_rand64(&rng);
            uint32_t lows[8] = {0x80000u, 0x7ffffu, 0x80001u, 0u, 0xfffffu, 1u, 0x40000u, 0xc0000u};
            uint32_t low = q < 8 ? lows[q] : r & 0xfffffu;
            in[i++] = ((uint32_t)p << 20) | low;
        }
    /* specials: around 448 / 464 (the saturation point), infinities, NaN payloads, 2^-6, 2^-9 */
    const float sp[] = {448.0f, 464.0f, 480.0f, 447.99997f, 464.00003f, 463.99997f, 1e30f, 65504.0f,
                        65520.0f, 65519.996f, 0x1p-6f, 0x1.fp-7f, 0x1p-9f, 0x1p-10f, 0x1.0001p-10f,
                        0x1.8p-9f, 0x1p-24f, 0x1p-25f, 0x1.0001p-25f, 0x1p-149f, 0.0f, 3.0f};
    size_t nsp_f = sizeof sp / sizeof sp[0];
    for (long long k = 0; k < nsp; ++k) {
        uint32_t u;
        if ((size_t)k < 2 * nsp_f) {
            float f = sp[k / 2];
            memcpy(&u, &f, 4);
            u |= (uint32_t)(k & 1) << 31;
        } else {
            static const uint32_t bits[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                                            0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fe12345u};
            u = bits[(k - 2 * (long long)nsp_f) % 8];
        }
        in[i++] = u;
    }
    CHECK(i == n);
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    void *din = NULL, *dout = NULL;
    CHECK_OK(ck_module_load(dev, conv_src, NULL, 0, &mod));
    CHECK_OK(ck_module_get_kernel(mod, "conv", &k));
    CHECK_OK(ck_malloc(dev, 4 * (size_t)n, &din));
    CHECK_OK(ck_malloc(dev, 16 * (size_t)n, &dout));
    CHECK_OK(ck_memcpy_h2d(dev, din, in, 4 * (size_t)n, NULL));
    ck_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid[0] = 64;
    cfg.block[0] = 128;
    long long pn = n;
    void *args[3] = {&dout, &din, &pn};
    size_t sizes[3] = {sizeof dout, sizeof din, sizeof pn};
    CHECK_OK(ck_launch(k, &cfg, args, sizes, 3));
    CHECK_OK(ck_device_synchronize(dev));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, 16 * (size_t)n, NULL));
    long bad = 0;
    for (long long j = 0; j < n; ++j) {
        float f16v = 0, x;
        uint64_t cbf = 0, c16 = 0, c8 = 0;
        ck_convert_to_f32(CK_DTYPE_F16, in[j] & 0xffffu, &f16v);
        memcpy(&x, &in[j], 4);
        ck_convert_from_f32(CK_DTYPE_BF16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &cbf);
        ck_convert_from_f32(CK_DTYPE_F16, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c16);
        ck_convert_from_f32(CK_DTYPE_FP8_E4M3, x, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_SATURATE, 0,
                            &c8);
        float g16;
        memcpy(&g16, &out[4 * j], 4);
        /* f16 -> f32: NaN payloads are placed in the high mantissa bits by both; compare bits
         * except that any NaN matches any NaN of the same sign */
        int ok16 = isnan(f16v) ? isnan(g16) && signbit(g16) == signbit(f16v)
                               : memcmp(&g16, &f16v, 4) == 0;
        int ok = ok16 && out[4 * j + 1] == cbf && out[4 * j + 2] == c16 && out[4 * j + 3] == c8;
        if (!ok && bad++ < 8)
            CKT_FAIL_("input 0x%08x: f16->f32 %a (want %a), f32->bf16 0x%04x (want 0x%04x), "
                      "f32->f16 0x%04x (want 0x%04x), f32->fp8e4m3 0x%02x (want 0x%02x)",
                      in[j], g16, f16v, out[4 * j + 1], (unsigned)cbf, out[4 * j + 2],
                      (unsigned)c16, out[4 * j + 3], (unsigned)c8);
    }
    CHECK(bad == 0);
    ck_free(dev, din);
    ck_free(dev, dout);
    free(in);
    free(out);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    if (!ctx)
        return 1;
    RUN_TEST(test_conversions);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
