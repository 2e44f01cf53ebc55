/* The device block library (src/device/ck_block.h) through the runtime, on the device CK_DEVICE
 * chooses (the emulator in CI): typed 16-byte vector loads and stores (f32, raw 16-bit, bf16 <->
 * f32 conversion against the definition), warp and block sums and maxima over blocks of
 * 96 and 256 threads against exact host sums, and a stage ring of full/empty mbarriers: one
 * producer thread fills 3 slots round after round, 4 consumer warps wait, read and release;
 * every round's data checked by each consumer (a wrong phase lets the producer overwrite a slot
 * before it is read, or deadlocks). */
#include <stdlib.h>

#include "kernel_harness.h"

/* bf16 <-> f32 written here from the definition (finite values, nearest even). */
static float bf16_to_f32(unsigned short b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static unsigned short f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static const char *src =
    "#include \"ck_device.h\"\n"
    "#include \"ck_block.h\"\n"
    "CK_KERNEL void vec_copy(const float *xf, float *yf, const unsigned short *xb,\n"
    "                        unsigned short *yb, float *yc, unsigned short *yd)\n"
    "{\n"
    "    unsigned t = ck_thread_linear();\n"
    "    ck_f32x4 f = ck_load_f32x4(xf + 4 * t);\n"
    "    f.v[0] += 1.0f;\n"
    "    ck_store_f32x4(yf + 4 * t, f);\n"
    "    ck_b16x8 b = ck_load_b16x8(xb + 8 * t);\n"
    "    b.v[7] ^= 0x8000u;\n"
    "    ck_store_b16x8(yb + 8 * t, b);\n"
    "    float c[8];\n"
    "    ck_load_bf16x8_as_f32(c, xb + 8 * t);\n"
    "    for (int i = 0; i < 8; ++i) yc[8 * t + i] = c[i];\n"
    "    for (int i = 0; i < 8; ++i) c[i] = yf[4 * t + (i & 3)] * 3.0f;\n"
    "    ck_store_f32_as_bf16x8(yd + 8 * t, c);\n"
    "}\n"
    "CK_KERNEL void reduce(const float *x, float *out)\n"
    "{\n"
    "    CK_SHARED_ARRAY(float, scratch, 33);\n"
    "    unsigned t = ck_thread_linear(), n = ck_block_threads();\n"
    "    float v = x[ck_block_idx_x() * n + t];\n"
    "    float ws = ck_warp_sum_f32(v), wm = ck_warp_max_f32(v);\n"
    "    float bs = ck_block_sum_f32(v, scratch), bm = ck_block_max_f32(v, scratch);\n"
    "    float *o = out + 4 * (ck_block_idx_x() * n + t);\n"
    "    o[0] = ws, o[1] = wm, o[2] = bs, o[3] = bm;\n"
    "}\n"
    "#define STAGES 3\n"
    "#define SLOT 32\n"
    "CK_KERNEL void ring(int rounds, int *out)\n"
    "{\n"
    "    CK_SHARED_ARRAY_ALIGNED(int, slots, STAGES * SLOT, 16);\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bars, 2 * STAGES, 8);\n"
    "    ck_ring r = ck_ring_make(bars, STAGES);\n"
    "    unsigned t = ck_thread_linear(), w = ck_warp_id(), l = ck_lane_id();\n"
    "    if (t == 0)\n"
    "        ck_ring_init(&r, 4);\n"
    "    ck_sync_threads();\n"
    "    ck_ring_pos p = ck_ring_start();\n"
    "    if (w == 4) {\n"
    "        for (int k = 0; k < rounds; ++k, ck_ring_next(&r, &p)) {\n"
    "            if (l == 0) {\n"
    "                ck_ring_acquire(&r, p);\n"
    "                for (int i = 0; i < SLOT; ++i) slots[p.slot * SLOT + i] = 1000 * k + i;\n"
    "                unsigned long long *full = ck_ring_expect(&r, p, 16);\n"
    "                ck_mbar_complete_tx(full, 16);\n"
    "            }\n"
    "        }\n"
    "    } else {\n"
    "        int bad = 0;\n"
    "        for (int k = 0; k < rounds; ++k, ck_ring_next(&r, &p)) {\n"
    "            ck_ring_wait(&r, p);\n"
    "            bad += slots[p.slot * SLOT + l] != 1000 * k + (int)l;\n"
    "            bad = ck_warp_reduce_add_i32(bad);\n"
    "            if (l == 0) ck_ring_release(&r, p);\n"
    "        }\n"
    "        if (l == 0) out[w] = bad;\n"
    "    }\n"
    "}\n";

static ck_kernel *kernel_of(ck_module *m, const char *name)
{
    ck_kernel *k = NULL;
    CHECK_MSG(ck_module_get_kernel(m, name, &k) == CK_SUCCESS, "%s", ck_last_error());
    return k;
}

static void launch(ck_kernel *k, unsigned grid, unsigned block, void **args, size_t *sizes,
                   int n)
{
    ck_launch_config cfg = {{grid, 1, 1}, {block, 1, 1}, {0, 0, 0}, 0, NULL};
    CHECK_MSG(ck_launch(k, &cfg, args, sizes, n) == CK_SUCCESS, "%s", ck_last_error());
    CHECK_OK(ck_device_synchronize(ckk_device));
}

static void test_vectors(ck_module *m)
{
    enum { T = 64 };
    float xf[4 * T], yf[4 * T], yc[8 * T];
    unsigned short xb[8 * T], yb[8 * T], yd[8 * T];
    uint64_t s = 12345;
    for (int i = 0; i < 4 * T; ++i)
        xf[i] = (float)((int)(ckt_rand64(&s) % 2001) - 1000) / 64.0f;
    for (int i = 0; i < 8 * T; ++i)
        xb[i] = (unsigned short)(ckt_rand64(&s) & 0x7F7Fu); /* finite bf16 */
    void *dxf = ckk_upload(xf, sizeof xf), *dyf = ckk_upload(NULL, sizeof yf),
         *dxb = ckk_upload(xb, sizeof xb), *dyb = ckk_upload(NULL, sizeof yb),
         *dyc = ckk_upload(NULL, sizeof yc), *dyd = ckk_upload(NULL, sizeof yd);
    void *args[6] = {&dxf, &dyf, &dxb, &dyb, &dyc, &dyd};
    size_t sizes[6] = {8, 8, 8, 8, 8, 8};
    launch(kernel_of(m, "vec_copy"), 1, T, args, sizes, 6);
    ckk_download(yf, dyf, sizeof yf);
    ckk_download(yb, dyb, sizeof yb);
    ckk_download(yc, dyc, sizeof yc);
    ckk_download(yd, dyd, sizeof yd);
    int bad = 0;
    for (int i = 0; i < 4 * T; ++i)
        bad += yf[i] != xf[i] + (i % 4 == 0 ? 1.0f : 0.0f);
    for (int i = 0; i < 8 * T; ++i) {
        bad += yb[i] != (unsigned short)(xb[i] ^ (i % 8 == 7 ? 0x8000u : 0u));
        bad += bf16_to_f32(xb[i]) != yc[i];
        bad += yd[i] != f32_to_bf16(yf[(i / 8) * 4 + (i % 4)] * 3.0f);
    }
    CHECK_MSG(bad == 0, "vector loads/stores: %d wrong values", bad);
    ck_free(ckk_device, dxf), ck_free(ckk_device, dyf), ck_free(ckk_device, dxb);
    ck_free(ckk_device, dyb), ck_free(ckk_device, dyc), ck_free(ckk_device, dyd);
}

static void test_reductions(ck_module *m, unsigned block)
{
    enum { G = 3 };
    unsigned n = G * block;
    float *x = malloc(sizeof(float) * n), *o = malloc(sizeof(float) * 4 * n);
    uint64_t s = 777 + block;
    for (unsigned i = 0; i < n; ++i) /* integers / 8: every sum is exact in float */
        x[i] = (float)((int)(ckt_rand64(&s) % 4001) - 2000) / 8.0f;
    void *dx = ckk_upload(x, sizeof(float) * n), *dout = ckk_upload(NULL, sizeof(float) * 4 * n);
    void *args[2] = {&dx, &dout};
    size_t sizes[2] = {8, 8};
    launch(kernel_of(m, "reduce"), G, block, args, sizes, 2);
    ckk_download(o, dout, sizeof(float) * 4 * n);
    int bad = 0;
    for (unsigned b = 0; b < G; ++b) {
        double bs = 0, bm = -1e30;
        for (unsigned t = 0; t < block; ++t)
            bs += x[b * block + t], bm = x[b * block + t] > bm ? x[b * block + t] : bm;
        for (unsigned t = 0; t < block; ++t) {
            unsigned w0 = b * block + (t / 32) * 32;
            double ws = 0, wm = -1e30;
            for (unsigned i = w0; i < w0 + 32; ++i)
                ws += x[i], wm = x[i] > wm ? x[i] : wm;
            const float *r = o + 4 * (b * block + t);
            bad += r[0] != (float)ws || r[1] != (float)wm || r[2] != (float)bs || r[3] != (float)bm;
        }
    }
    CHECK_MSG(bad == 0, "warp/block reductions over %u threads: %d threads wrong", block, bad);
    ck_free(ckk_device, dx), ck_free(ckk_device, dout);
    free(x), free(o);
}

static void test_ring(ck_module *m)
{
    int rounds = 11, out[4] = {-1, -1, -1, -1};
    void *dout = ckk_upload(out, sizeof out);
    void *args[2] = {&rounds, &dout};
    size_t sizes[2] = {sizeof rounds, 8};
    launch(kernel_of(m, "ring"), 2, 160, args, sizes, 2);
    ckk_download(out, dout, sizeof out);
    for (int w = 0; w < 4; ++w)
        CHECK_MSG(out[w] == 0, "stage ring: consumer warp %d saw %d wrong slot values", w, out[w]);
    ck_free(ckk_device, dout);
}

int main(void)
{
    if (!ckk_open())
        return 1;
    ck_module *m = NULL;
    CHECK_MSG(ck_module_load(ckk_device, src, NULL, 0, &m) == CK_SUCCESS, "%s", ck_last_error());
    if (m) {
        test_vectors(m);
        test_reductions(m, 96);
        test_reductions(m, 256);
        test_ring(m);
    }
    ckk_close();
    return CK_TEST_REPORT();
}
