/*
 * Compile sample kernels that use the tensor-core part of the device C dialect
 * (src/device/ck_device_tensor.h) with NVRTC down to cubins (so ptxas checks every inline PTX
 * statement): sm_80 (cp.async, ldmatrix, mma f16/bf16/tf32/int8, mbarrier), sm_89 (fp8 mma),
 * sm_90a (wgmma, TMA, mbarrier transactions, stmatrix, setmaxnreg, fences, elect). NVRTC is
 * loaded with dlopen; without it (or without CK_SOURCE_DIR) the test prints a notice and passes.
 * The kernels include tests/device_stub/ck_device.h, a test-only stand-in for the runtime's
 * prelude.
 */
#include <stdlib.h>

#include "rt/dynlib.h"
#include "test.h"

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *,
                               const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_size_fn)(void *, size_t *);
typedef int (*nvrtc_log_fn)(void *, char *);
typedef int (*nvrtc_destroy_fn)(void **);

static struct {
    void *lib;
    nvrtc_create_fn create;
    nvrtc_compile_fn compile;
    nvrtc_size_fn log_size, cubin_size;
    nvrtc_log_fn log;
    nvrtc_destroy_fn destroy;
} nv;

static const char *k_sm80 =
    "#include \"ck_device.h\"\n"
    "CK_KERNEL void k_sm80(const float *g, float *out, int *iout)\n"
    "{\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, 4096, 128);\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);\n"
    "    unsigned t = ck_thread_linear();\n"
    "    ck_cp_async_4(smem + 4 * t, g + t);\n"
    "    ck_cp_async_8(smem + 512 + 8 * t, g + 2 * t);\n"
    "    ck_cp_async_16(smem + 1024 + 16 * t, g + 4 * t);\n"
    "    ck_cp_async_16_zfill(smem + 2048 + 16 * t, g + 4 * t, t % 17);\n"
    "    ck_cp_async_commit();\n"
    "    ck_cp_async_wait(1);\n"
    "    ck_cp_async_wait(0);\n"
    "    ck_cp_async_wait_all();\n"
    "    if (t == 0) ck_mbar_init(bar, 32);\n"
    "    ck_sync_threads();\n"
    "    ck_mbar_arrive(bar);\n"
    "    ck_mbar_wait_parity(bar, 0);\n"
    "    unsigned a[4], b[2], r1[1], r2[2], hc[2] = {0, 0}, hd[2];\n"
    "    const void *row = smem + 16 * (t % 32);\n"
    "    ck_ldmatrix_x4(a, row);\n"
    "    ck_ldmatrix_x2_trans(b, row);\n"
    "    ck_ldmatrix_x1(r1, row);\n"
    "    ck_ldmatrix_x2(r2, row);\n"
    "    ck_ldmatrix_x1_trans(r1, row);\n"
    "    ck_ldmatrix_x4_trans(a, row);\n"
    "    float c[4] = {0, 0, 0, 0}, d[4];\n"
    "    ck_mma_m16n8k16_f32_f16(d, a, b, c);\n"
    "    ck_mma_m16n8k16_f32_bf16(c, a, b, d);\n"
    "    ck_mma_m16n8k8_f32_f16(d, a, b, c);\n"
    "    ck_mma_m16n8k8_f32_bf16(c, a, b, d);\n"
    "    ck_mma_m16n8k8_f32_tf32(d, a, b, c);\n"
    "    ck_mma_m16n8k16_f16_f16(hd, a, b, hc);\n"
    "    ck_mma_m16n8k8_f16_f16(hc, a, b, hd);\n"
    "    int ic[4] = {0, 0, 0, 0}, id[4];\n"
    "    ck_mma_m16n8k32_s32_s8(id, a, b, ic);\n"
    "    ck_mma_m16n8k32_s32_u8(ic, a, b, id);\n"
    "    ck_mma_m16n8k32_s32_s8_u8(id, a, b, ic);\n"
    "    ck_mma_m16n8k32_s32_u8_s8(ic, a, b, id);\n"
    "    ck_mma_m16n8k32_s32_s8_satfinite(id, a, b, ic);\n"
    "    ck_mma_m16n8k32_s32_u8_satfinite(ic, a, b, id);\n"
    "    for (int i = 0; i < 4; ++i) out[4 * t + i] = d[i] + (float)hc[i / 2];\n"
    "    for (int i = 0; i < 4; ++i) iout[4 * t + i] = ic[i] + (int)r1[0] + (int)r2[1];\n"
    "    if (t == 0) ck_mbar_inval(bar);\n"
    "}\n";

static const char *k_sm89 = "#include \"ck_device.h\"\n"
                            "CK_KERNEL void k_sm89(const unsigned *g, float *out)\n"
                            "{\n"
                            "    unsigned t = ck_thread_linear();\n"
                            "    unsigned a[4] = {g[t], g[t + 32], g[t + 64], g[t + 96]}, b[2] = "
                            "{g[t + 128], g[t + 160]};\n"
                            "    float c[4] = {0, 0, 0, 0}, d[4];\n"
                            "    ck_mma_m16n8k32_f32_e4m3(d, a, b, c);\n"
                            "    ck_mma_m16n8k32_f32_e5m2(c, a, b, d);\n"
                            "    ck_mma_m16n8k32_f32_e4m3_e5m2(d, a, b, c);\n"
                            "    ck_mma_m16n8k32_f32_e5m2_e4m3(c, a, b, d);\n"
                            "    for (int i = 0; i < 4; ++i) out[4 * t + i] = c[i];\n"
                            "}\n";

static const char *k_sm90a =
    "#include \"ck_device.h\"\n"
    "CK_KERNEL void k_sm90a(CK_GRID_CONSTANT const ck_tensor_map map_a,\n"
    "                  CK_GRID_CONSTANT const ck_tensor_map map_o, float *out)\n"
    "{\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, 65536, 1024);\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);\n"
    "    unsigned t = ck_thread_linear();\n"
    "    if (t == 0) {\n"
    "        ck_tma_prefetch_map(&map_a);\n"
    "        ck_mbar_init(bar, 1);\n"
    "        ck_mbar_fence_init();\n"
    "    }\n"
    "    ck_sync_threads();\n"
    "    if (ck_elect_one() && t < 32) {\n"
    "        ck_mbar_arrive_expect_tx(bar, 5 * 8192);\n"
    "        ck_tma_load_1d(smem, &map_a, bar, 0);\n"
    "        ck_tma_load_2d(smem + 8192, &map_a, bar, 0, 64);\n"
    "        ck_tma_load_3d(smem + 16384, &map_a, bar, 0, 1, 2);\n"
    "        ck_tma_load_4d(smem + 24576, &map_a, bar, 0, 1, 2, 3);\n"
    "        ck_tma_load_5d(smem + 32768, &map_a, bar, 0, 1, 2, 3, 4);\n"
    "        ck_tma_load_2d_multicast(smem + 40960, &map_a, bar, 0, 64, (unsigned short)3);\n"
    "        ck_tma_load_1d_multicast(smem + 40960, &map_a, bar, 0, (unsigned short)1);\n"
    "        ck_tma_load_3d_multicast(smem + 40960, &map_a, bar, 0, 1, 2, (unsigned short)1);\n"
    "        ck_tma_load_4d_multicast(smem + 40960, &map_a, bar, 0, 1, 2, 3, (unsigned short)1);\n"
    "        ck_tma_load_5d_multicast(smem + 40960, &map_a, bar, 0, 1, 2, 3, 4, (unsigned "
    "short)1);\n"
    "        ck_mbar_expect_tx(bar, 16);\n"
    "        ck_mbar_complete_tx(bar, 16);\n"
    "    }\n"
    "    ck_mbar_wait_parity(bar, 0);\n"
    "    if (t < 128) {\n"
    "        CK_SETMAXNREG_INC(240);\n"
    "        float d[128];\n"
    "        for (int i = 0; i < 128; ++i) d[i] = 0.0f;\n"
    "        unsigned long long da = ck_wgmma_desc(smem, 16, 1024, CK_SWIZZLE_128B);\n"
    "        unsigned long long db = ck_wgmma_desc(smem + 16384, 16, 1024, CK_SWIZZLE_128B);\n"
    "        unsigned long long dm = ck_wgmma_desc(smem + 16384, 2048, 1024, CK_SWIZZLE_64B);\n"
    "        unsigned a[4] = {t, t + 1, t + 2, t + 3};\n"
    "        ck_wgmma_fence_operand(d, 128);\n"
    "        ck_wgmma_fence();\n"
    "        CK_WGMMA_SS(64, bf16, d, da, db, 0, 1, 1, 0, 0);\n"
    "        CK_WGMMA_SS(128, f16, d, da, db, 1, 1, 1, 0, 1);\n"
    "        CK_WGMMA_SS(256, bf16, d, da, dm, 1, 1, -1, 1, 1);\n"
    "        CK_WGMMA_SS(8, f16, d, da, db, 1, 1, 1, 0, 0);\n"
    "        CK_WGMMA_SS(96, bf16, d, da, db, 1, 1, 1, 0, 0);\n"
    "        CK_WGMMA_RS(64, f16, d, a, db, 1, 1, 1, 0);\n"
    "        CK_WGMMA_RS(128, bf16, d, a, db, 1, -1, 1, 1);\n"
    "        CK_WGMMA_RS(256, bf16, d, a, db, 1, 1, 1, 0);\n"
    "        CK_WGMMA_SS_TF32(64, d, da, db, 1, 1, 1);\n"
    "        CK_WGMMA_RS_TF32(256, d, a, db, 1, 1, -1);\n"
    "        CK_WGMMA_SS_F8(128, e4m3, e4m3, d, da, db, 1, 1, 1);\n"
    "        CK_WGMMA_SS_F8(256, e5m2, e4m3, d, da, db, 1, -1, 1);\n"
    "        CK_WGMMA_RS_F8(64, e4m3, e5m2, d, a, db, 0, 1, 1);\n"
    "        CK_WGMMA_RS_F8(8, e5m2, e5m2, d, a, db, 1, 1, 1);\n"
    "        ck_wgmma_commit_group();\n"
    "        ck_wgmma_wait_group(0);\n"
    "        ck_wgmma_fence_operand(d, 128);\n"
    "        float s = 0.0f;\n"
    "        for (int i = 0; i < 128; ++i) s += d[i];\n"
    "        out[t] = s;\n"
    "    } else {\n"
    "        CK_SETMAXNREG_DEC(40);\n"
    "    }\n"
    "    unsigned r[4] = {t, t, t, t};\n"
    "    ck_stmatrix_x4(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_stmatrix_x2_trans(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_stmatrix_x1(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_stmatrix_x1_trans(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_stmatrix_x2(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_stmatrix_x4_trans(smem + 49152 + 16 * (t % 32), r);\n"
    "    ck_fence_proxy_async();\n"
    "    ck_sync_threads();\n"
    "    if (t == 0) {\n"
    "        ck_tma_store_1d(&map_o, smem + 49152, 0);\n"
    "        ck_tma_store_2d(&map_o, smem + 49152, 0, 1);\n"
    "        ck_tma_store_3d(&map_o, smem + 49152, 0, 1, 2);\n"
    "        ck_tma_store_4d(&map_o, smem + 49152, 0, 1, 2, 3);\n"
    "        ck_tma_store_5d(&map_o, smem + 49152, 0, 1, 2, 3, 4);\n"
    "        ck_tma_store_commit();\n"
    "        ck_tma_store_wait_read(0);\n"
    "        ck_tma_store_wait(0);\n"
    "        ck_mbar_inval(bar);\n"
    "    }\n"
    "}\n";

/* 1 when NVRTC is usable; prints why not otherwise */
static int load_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", NULL};
    static const char *const dirs[] = {"/usr/local/cuda/lib64", NULL};
    char found[512];
    if (ck_dynlib_open("NVRTC", "CK_NVRTC_LIBRARY", names, dirs, &nv.lib, found, sizeof found) !=
        CK_SUCCESS) {
        printf("NOTICE: NVRTC not available (%s); skipping the NVRTC compile test.\n",
               ck_last_error());
        return 0;
    }
    if (ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcCreateProgram", &nv.create) ||
        ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcCompileProgram", &nv.compile) ||
        ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcGetProgramLogSize", &nv.log_size) ||
        ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcGetProgramLog", &nv.log) ||
        ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcGetCUBINSize", &nv.cubin_size) ||
        ck_dynlib_symbol(nv.lib, "NVRTC", "nvrtcDestroyProgram", &nv.destroy)) {
        printf("NOTICE: NVRTC lacks a needed symbol (%s); skipping.\n", ck_last_error());
        ck_dynlib_close(nv.lib);
        nv.lib = NULL;
        return 0;
    }
    printf("NVRTC: %s\n", found);
    return 1;
}

/* compile `src` for `arch`; returns the cubin size (0 on failure, log printed) */
static size_t compile(const char *name, const char *src, const char *arch, const char *root,
                      int quiet)
{
    char opt_arch[64], inc_dev[1200], inc_stub[1200], inc_src[1200];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    snprintf(inc_dev, sizeof inc_dev, "-I%s/src/device", root);
    /* the runtime's prelude in src/device wins over the test stand-in when present */
    snprintf(inc_stub, sizeof inc_stub, "-I%s/tests/device_stub", root);
    /* src: the prelude includes "core/numeric_conv.h" */
    snprintf(inc_src, sizeof inc_src, "-I%s/src", root);
    const char *opts[] = {opt_arch, inc_dev, inc_stub, inc_src, "-std=c++17"};
    void *prog = NULL;
    size_t cubin = 0, log_size = 0;
    if (nv.create(&prog, src, name, 0, NULL, NULL) != 0)
        return 0;
    int rc = nv.compile(prog, 5, opts);
    if (nv.log_size(prog, &log_size) == 0 && log_size > 1) {
        char *log = (char *)malloc(log_size);
        if (log && nv.log(prog, log) == 0 && !quiet && (rc != 0 || strstr(log, "warning")))
            fprintf(stderr, "%s (%s):\n%s\n", name, arch, log);
        free(log);
    }
    if (rc == 0 && nv.cubin_size(prog, &cubin) != 0)
        cubin = 0;
    nv.destroy(&prog);
    return rc == 0 ? cubin : 0;
}

int main(void)
{
    const char *root = getenv("CK_SOURCE_DIR");
    if (!root || !*root) {
        printf("NOTICE: CK_SOURCE_DIR is not set; skipping the NVRTC compile test.\n");
        return CK_TEST_REPORT();
    }
    if (!load_nvrtc())
        return CK_TEST_REPORT();
    size_t n80 = compile("k_sm80.cu", k_sm80, "sm_80", root, 0);
    CHECK_MSG(n80 > 0, "sm_80 sample kernel (cp.async, ldmatrix, mma, mbarrier) failed to compile");
    printf("sm_80  cubin %zu bytes\n", n80);
    size_t n89 = compile("k_sm89.cu", k_sm89, "sm_89", root, 0);
    CHECK_MSG(n89 > 0, "sm_89 sample kernel (fp8 mma) failed to compile");
    printf("sm_89  cubin %zu bytes\n", n89);
    size_t n90 = compile("k_sm90a.cu", k_sm90a, "sm_90a", root, 0);
    CHECK_MSG(n90 > 0,
              "sm_90a sample kernel (wgmma, TMA, mbarrier tx, stmatrix) failed to compile");
    printf("sm_90a cubin %zu bytes\n", n90);
    /* the sm_80 kernel also builds for sm_90a (try_wait path of ck_mbar_wait_parity) */
    CHECK(compile("k_sm80_on_90.cu", k_sm80, "sm_90a", root, 0) > 0);
    /* a kernel using an sm_90 operation must be refused for sm_80: the test can fail */
    CHECK(compile("k_sm90a_on_80.cu", k_sm90a, "sm_80", root, 1) == 0);
    /* NVRTC stays loaded: unloading it makes LeakSanitizer report the C++ runtime's pool that
     * libnvrtc's dependencies allocate at load time */
    return CK_TEST_REPORT();
}
