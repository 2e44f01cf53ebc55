/* layernorm2d / rmsnorm2d / smooth-quant forward against a double-precision CPU reference:
 * odd hidden sizes (1, 3, 17, 1023, 4097, 65536), padded row strides, f32/f16/bf16, residual
 * add with residual output, mean/rstd outputs, int8/fp8 row quantization with smoothing,
 * NaN/Inf rows. Every output element is compared. */
#include <stdio.h>

#include "norm_fwd_check.h"

static ck_context *ctx;

static void run_case(const fcase *c)
{
    nt_check_forward(ctx, c);
}

static const ck_dtype F32 = CK_DTYPE_F32, F16 = CK_DTYPE_F16, BF16 = CK_DTYPE_BF16;

static void test_layernorm_sizes(void)
{
    const fcase cs[] = {
        {CK_NORM_LAYERNORM, 5, 1, 0, F32, F32, F32, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 7, 3, 2, BF16, BF16, F32, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 9, 17, 5, F16, F16, F16, 1, 1, 1, 0, 1, 0},
        {CK_NORM_LAYERNORM, 5, 1023, 1, BF16, F32, BF16, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 33, 256, 8, BF16, BF16, F32, 1, 1, 1, 0, 1, 0},
        {CK_NORM_LAYERNORM, 3, 4097, 0, F32, BF16, F32, 0, 1, 1, 0, 1, 0},
        {CK_NORM_LAYERNORM, 3, 8192, 8, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 2, 65536, 0, BF16, BF16, F32, 1, 1, 1, 0, 1, 0},
        /* instances: a warp per row with a partial last vector round (1000), a 1024-thread
         * block with f16 output (16384), the raw 16-bit cache with unequal thread shares
         * (40000: 1024 threads x 5 vectors) */
        {CK_NORM_LAYERNORM, 5, 1000, 0, BF16, BF16, F32, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 3, 16384, 8, BF16, F16, BF16, 1, 0, 0, 0, 1, 0},
        {CK_NORM_LAYERNORM, 3, 40000, 0, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i]);
}

static void test_rmsnorm_sizes(void)
{
    const fcase cs[] = {
        {CK_NORM_RMSNORM, 4, 1, 0, BF16, BF16, F32, 0, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 6, 3, 1, F32, F16, F32, 0, 1, 1, 0, 0, 0},
        {CK_NORM_RMSNORM, 9, 17, 0, BF16, BF16, BF16, 0, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 5, 1023, 0, F16, F16, F32, 0, 1, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 3, 4097, 3, BF16, BF16, F32, 0, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 2, 65536, 8, F32, F32, F32, 0, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 2, 32768, 0, F16, F16, F32, 0, 0, 0, 0, 1, 0}, /* raw cache, 512 */
        /* on clusters with CK_NORM_CLUSTER (16-bit rows over 32768): unequal shares; NaN/Inf */
        {CK_NORM_RMSNORM, 3, 50000, 0, BF16, BF16, F32, 0, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 2, 65536, 0, F16, F32, F16, 0, 0, 0, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i]);
}

static void test_quant(void)
{
    const fcase cs[] = {
        {CK_NORM_RMSNORM, 6, 1024, 0, BF16, CK_DTYPE_I8, BF16, 0, 1, 1, 1, 0, 0},
        {CK_NORM_RMSNORM, 5, 17, 3, F16, CK_DTYPE_FP8_E4M3, F32, 0, 1, 0, 0, 0, 0},
        {CK_NORM_LAYERNORM, 3, 4097, 0, BF16, CK_DTYPE_I8, F32, 1, 0, 0, 1, 1, 0},
        {CK_NORM_LAYERNORM, 2, 65536, 0, BF16, CK_DTYPE_FP8_E4M3, BF16, 1, 0, 0, 1, 0, 0},
        {CK_NORM_NONE, 7, 3000, 8, BF16, CK_DTYPE_I8, F32, 0, 0, 0, 1, 0, 0},
        {CK_NORM_NONE, 4, 33, 0, F32, CK_DTYPE_FP8_E4M3, F32, 0, 1, 0, 0, 0, 0},
        /* on clusters with CK_NORM_CLUSTER: the row's max |y| exchanged (after statistics or
         * alone) */
        {CK_NORM_RMSNORM, 3, 40008, 0, BF16, CK_DTYPE_I8, BF16, 0, 0, 0, 1, 1, 0},
        {CK_NORM_NONE, 3, 65536, 0, F16, CK_DTYPE_I8, F32, 0, 0, 0, 1, 0, 0},
        {CK_NORM_LAYERNORM, 2, 36000, 0, BF16, CK_DTYPE_I8, BF16, 1, 0, 0, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i]);
}

static void test_nan_inf(void)
{
    const fcase cs[] = {
        {CK_NORM_LAYERNORM, 4, 40, 0, BF16, BF16, F32, 1, 0, 0, 0, 1, 1},
        {CK_NORM_RMSNORM, 4, 2048, 0, F32, F32, F32, 0, 0, 0, 0, 1, 1},
        {CK_NORM_RMSNORM, 3, 64, 0, BF16, CK_DTYPE_I8, F32, 0, 0, 0, 0, 0, 1},
        {CK_NORM_LAYERNORM, 3, 64, 0, BF16, CK_DTYPE_FP8_E4M3, F32, 1, 0, 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i]);
}

static void test_large_gpu(void)
{
    if (ck_context_backend(ctx) != CK_BACKEND_CUDA)
        return;
    const fcase cs[] = {
        {CK_NORM_LAYERNORM, 2048, 8192, 0, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0},
        {CK_NORM_RMSNORM, 2048, 8192, 0, BF16, BF16, BF16, 0, 1, 1, 0, 1, 0},
        {CK_NORM_RMSNORM, 512, 65536, 0, BF16, CK_DTYPE_I8, BF16, 0, 1, 1, 1, 0, 0},
        {CK_NORM_LAYERNORM, 100000, 96, 0, F16, F16, F32, 1, 0, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        run_case(&cs[i]);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_layernorm_sizes);
    RUN_TEST(test_rmsnorm_sizes);
    RUN_TEST(test_quant);
    RUN_TEST(test_nan_inf);
    RUN_TEST(test_large_gpu);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
