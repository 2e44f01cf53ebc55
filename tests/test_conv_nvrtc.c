/* The convolution kernels (ck/conv.h: the GEMM's sm80 pipeline with the views' generated copy
 * windows) compile with NVRTC for sm_80 and sm_90a (no GPU needed; ptxas checks every PTX
 * statement): forward (bf16 with bias, residual and relu), backward weight and backward
 * data (stride 2: the first residue class), vectorized (C a multiple of 8) and element-wise
 * (C = 3) views; the forward bf16 one with the policy's (largest) instance for both targets (the
 * sm90 route on sm_90a), the others with their smallest for sm_90a; and the sm90 route's
 * kernels (forward f32 and f16 with groups and an epilogue, backward data of stride 1 and 2,
 * backward weight) and a 1x1 plain GEMM with the smallest sm90 tile; the direct depthwise
 * kernels (the policy's route for G = C = K) for sm_90a; the 8-bit kernels (fp8 e4m3 / e5m2,
 * i8: mma.sync of 8-bit types with gathered N-major fragments, fp8 wgmma, the dX view's
 * epilogue with int accumulators and fp8 / i32 stores) for sm_90a, sm_89 and sm_80. Skipped
 * without NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/conv/conv_internal.h"
#include "rt/runtime_internal.h"
#include "test.h"

static ck_device_props h100_like(const char *arch)
{
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.backend = CK_BACKEND_CUDA;
    props.cc_major = arch[3] - '0';
    props.cc_minor = arch[4] - '0';
    props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    snprintf(props.target, sizeof props.target, "%s", arch);
    return props;
}

/* big: the policy's instance for sm_80 and sm_90a; else the smallest tile, sm_90a only (NVRTC
 * takes seconds per large kernel) */
static void compile(const char *what, const ck_conv_problem *p, int big)
{
    const char *arch[2] = {"sm_90a", "sm_80"};
    for (int a = 0; a < (big ? 2 : 1); ++a) {
        ck_device_props props = h100_like(arch[a]);
        char *src = NULL;
        ck_status st = ck_conv_source(p, &props, !big, &src);
        CHECK_MSG(st == CK_SUCCESS, "%s: source: %s", what, ck_last_error());
        if (st)
            continue;
        CHECK_MSG(strstr(src, "GEMM_A_LOADER") || strstr(src, "GEMM_B_LOADER"),
                  "%s: no operand loader in the source", what);
        void *cubin = NULL;
        size_t size = 0;
        st = ck_nvrtc_compile(src, arch[a], NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", what, arch[a], ck_last_error());
        free(cubin);
        free(src);
    }
}

static ck_conv_problem resnet(ck_conv_direction dir, ck_dtype t)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.direction = dir;
    p.n = 32, p.c = p.k = 256;
    p.in[0] = p.in[1] = 56;
    p.filter[0] = p.filter[1] = 3;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 1;
    p.in_dtype = p.wei_dtype = p.out_dtype = t;
    return p;
}

static void test_compile(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    ck_conv_problem p = resnet(CK_CONV_FWD, CK_DTYPE_BF16);
    p.bias = p.residual = 1, p.activation = CK_GEMM_ACT_RELU;
    compile("fwd bf16 3x3 bias residual relu", &p, 1);
    p = resnet(CK_CONV_BWD_WEIGHT, CK_DTYPE_BF16);
    compile("bwd-weight bf16 3x3", &p, 0);
    p = resnet(CK_CONV_BWD_DATA, CK_DTYPE_F16);
    p.stride[0] = p.stride[1] = 2;
    compile("bwd-data f16 3x3 stride 2", &p, 0);
    p = resnet(CK_CONV_FWD, CK_DTYPE_BF16);
    p.c = 3, p.k = 64, p.filter[0] = p.filter[1] = 7, p.stride[0] = p.stride[1] = 2;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 3;
    compile("fwd bf16 7x7 stem c3 (element-wise view)", &p, 0);
}

/* The sm90 route's kernels (forward: the im2col loader run by the producer warpgroup, the
 * cp.async mbarrier arrivals, wgmma) with the smallest sm90 tile, and the plain-GEMM route of a
 * 1x1 forward, for sm_90a. */
static void compile90(const char *what, const ck_conv_problem *p, int loader)
{
    ck_device_props props = h100_like("sm_90a");
    char *src = NULL;
    ck_status st = ck_conv_source(p, &props, CK_CONV_PICK_SM90_SMALLEST, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: source: %s", what, ck_last_error());
    if (st)
        return;
    CHECK_MSG(strstr(src, "gemm_sm90(") != NULL, "%s: not the sm90 family's kernel", what);
    CHECK_MSG((strstr(src, "GEMM_A_LOADER") != NULL) == loader, "%s: A loader %s expected", what,
              loader ? "" : "not");
    void *cubin = NULL;
    size_t size = 0;
    st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s for sm_90a: %s", what, ck_last_error());
    free(cubin);
    free(src);
}

static void test_compile_sm90(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    ck_conv_problem p = resnet(CK_CONV_FWD, CK_DTYPE_F32);
    compile90("fwd f32 (tf32) 3x3", &p, 1);
    p = resnet(CK_CONV_FWD, CK_DTYPE_F16);
    p.g = 2, p.stride[0] = p.stride[1] = 2, p.dilation[1] = 2, p.bias = 1;
    p.activation = CK_GEMM_ACT_SILU;
    compile90("fwd f16 g2 stride 2 dilation (1,2) bias silu", &p, 1);
    p = resnet(CK_CONV_FWD, CK_DTYPE_BF16);
    p.filter[0] = p.filter[1] = 1;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 0;
    compile90("fwd bf16 1x1 (a plain GEMM)", &p, 0);
    p = resnet(CK_CONV_BWD_DATA, CK_DTYPE_BF16);
    compile90("bwd-data bf16 3x3 stride 1 (A and B loaders)", &p, 1);
    p.stride[0] = p.stride[1] = 2;
    compile90("bwd-data bf16 3x3 stride 2 (the dX view's epilogue)", &p, 1);
    p = resnet(CK_CONV_BWD_WEIGHT, CK_DTYPE_F16);
    compile90("bwd-weight f16 3x3 (B loader)", &p, 0);
}

/* The direct depthwise route (dw_pipeline_kernel.h) with the policy's instance, for sm_90a. */
static void compile_dw(const char *what, const ck_conv_problem *p)
{
    ck_device_props props = h100_like("sm_90a");
    char *src = NULL;
    ck_status st = ck_conv_source(p, &props, CK_CONV_PICK_POLICY, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: source: %s", what, ck_last_error());
    if (st)
        return;
    CHECK_MSG(strstr(src, "dw_tile(") || strstr(src, "dw_wgrad_partial("),
              "%s: not the depthwise kernel", what);
    void *cubin = NULL;
    size_t size = 0;
    st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s for sm_90a: %s", what, ck_last_error());
    free(cubin);
    free(src);
}

static void test_compile_depthwise(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    ck_conv_problem p = resnet(CK_CONV_FWD, CK_DTYPE_BF16);
    p.g = p.k;
    p.bias = p.residual = 1, p.activation = CK_GEMM_ACT_RELU;
    compile_dw("depthwise fwd bf16 3x3 g256 bias residual relu", &p);
    p = resnet(CK_CONV_FWD, CK_DTYPE_F16);
    p.g = p.c = p.k = 32, p.filter[0] = p.filter[1] = 7, p.stride[0] = p.stride[1] = 2;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 3;
    compile_dw("depthwise fwd f16 7x7 stride 2 g32", &p);
    p = resnet(CK_CONV_BWD_DATA, CK_DTYPE_F32);
    p.g = p.k, p.dilation[1] = 2, p.pad_left[1] = p.pad_right[1] = 2;
    compile_dw("depthwise bwd-data f32 3x3 dilation (1,2)", &p);
    p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_BF16, p.stride[0] = p.stride[1] = 2;
    compile_dw("depthwise bwd-data bf16 3x3 stride 2 (a residue class)", &p);
    p = resnet(CK_CONV_BWD_WEIGHT, CK_DTYPE_BF16);
    p.g = p.k, p.stride[0] = p.stride[1] = 2;
    compile_dw("depthwise bwd-weight bf16 3x3 stride 2", &p);
}

/* One 8-bit kernel: the implicit GEMM of `pick` for `arch`, its route checked. */
static void compile8(const char *what, const ck_conv_problem *p, const char *arch, int pick,
                     const char *route)
{
    ck_device_props props = h100_like(arch);
    char *src = NULL;
    ck_status st = ck_conv_source(p, &props, pick, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: source: %s", what, ck_last_error());
    if (st)
        return;
    CHECK_MSG(strstr(src, route) != NULL, "%s: not the %s route", what, route);
    void *cubin = NULL;
    size_t size = 0;
    st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", what, arch, ck_last_error());
    free(cubin);
    free(src);
}

static void test_compile_8bit(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    ck_conv_problem p = resnet(CK_CONV_FWD, CK_DTYPE_FP8_E4M3);
    p.out_dtype = CK_DTYPE_BF16, p.bias = 1, p.activation = CK_GEMM_ACT_RELU;
    compile8("fwd e4m3 3x3 -> bf16 bias relu (policy)", &p, "sm_90a", CK_CONV_PICK_POLICY,
             "GEMM's sm90");
    compile8("fwd e4m3 3x3 -> bf16 bias relu (sm_89)", &p, "sm_89", CK_CONV_PICK_SM80_SMALLEST,
             "GEMM's sm80");
    p = resnet(CK_CONV_FWD, CK_DTYPE_FP8_E5M2);
    p.wei_dtype = CK_DTYPE_FP8_E4M3, p.g = 2, p.stride[0] = p.stride[1] = 2;
    compile8("fwd e5m2 x e4m3 g2 stride 2 -> e5m2", &p, "sm_90a", CK_CONV_PICK_SM90_SMALLEST,
             "GEMM's sm90");
    p = resnet(CK_CONV_FWD, CK_DTYPE_I8);
    p.out_dtype = CK_DTYPE_I32;
    compile8("fwd i8 3x3 -> i32 (policy)", &p, "sm_80", CK_CONV_PICK_POLICY, "GEMM's sm80");
    p = resnet(CK_CONV_BWD_DATA, CK_DTYPE_FP8_E5M2);
    p.in_dtype = CK_DTYPE_BF16, p.stride[0] = p.stride[1] = 2;
    compile8("bwd-data e5m2 3x3 stride 2 -> bf16", &p, "sm_90a", CK_CONV_PICK_SM80_SMALLEST,
             "GEMM's sm80");
    p = resnet(CK_CONV_BWD_DATA, CK_DTYPE_I8);
    p.in_dtype = CK_DTYPE_I32, p.stride[0] = p.stride[1] = 2;
    compile8("bwd-data i8 3x3 stride 2 -> i32", &p, "sm_80", CK_CONV_PICK_SM80_SMALLEST,
             "GEMM's sm80");
    p = resnet(CK_CONV_BWD_WEIGHT, CK_DTYPE_FP8_E4M3);
    p.wei_dtype = CK_DTYPE_FP8_E4M3;
    compile8("bwd-weight e4m3 3x3 -> e4m3", &p, "sm_90a", CK_CONV_PICK_POLICY, "GEMM's sm80");
    p = resnet(CK_CONV_BWD_WEIGHT, CK_DTYPE_I8);
    p.wei_dtype = CK_DTYPE_F32;
    compile8("bwd-weight i8 3x3 -> f32", &p, "sm_80", CK_CONV_PICK_SM80_SMALLEST, "GEMM's sm80");
}

int main(void)
{
    RUN_TEST(test_compile);
    RUN_TEST(test_compile_sm90);
    RUN_TEST(test_compile_depthwise);
    RUN_TEST(test_compile_8bit);
    return CK_TEST_REPORT();
}
