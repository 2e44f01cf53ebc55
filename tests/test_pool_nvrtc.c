/* The memory-bound companions of convolution compile with NVRTC for sm_90a and sm_80 (no GPU
 * needed; ptxas checks every PTX statement): pooling forward (max with int32 / int64 indices,
 * average), max-pool backward (a residue class of a strided pool; int64 indices) and ck_im2col,
 * over the three types, vectorized (C a multiple of 8) and element-wise (C = 3). Skipped without
 * NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/im2col/im2col_internal.h"
#include "ops/pool/pool_internal.h"
#include "rt/runtime_internal.h"
#include "test.h"

static void compile(const char *what, char *src)
{
    const char *arch[2] = {"sm_90a", "sm_80"};
    for (int a = 0; a < 2 && src; ++a) {
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, arch[a], NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", what, arch[a], ck_last_error());
        free(cubin);
    }
    ck_tile_free(src);
}

static void pool(const char *what, ck_pool_mode mode, ck_pool_index idx, ck_dtype t, int c,
                 int backward)
{
    ck_pool_problem p;
    ck_pool_problem_init(&p);
    p.mode = mode, p.index = idx, p.dtype = t;
    p.n = 32, p.c = c, p.in[0] = p.in[1] = 112;
    p.kernel[0] = p.kernel[1] = 3, p.stride[0] = p.stride[1] = 2, p.pad[0] = p.pad[1] = 1;
    char *src = NULL;
    ck_status st = ck_pool_source(&p, backward, &src);
    CHECK_MSG(st == CK_SUCCESS, "%s: source: %s", what, ck_last_error());
    compile(what, src);
}

static void test_compile(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    pool("max bf16 i64", CK_POOL_MAX, CK_POOL_INDEX_I64, CK_DTYPE_BF16, 64, 0);
    pool("max f32 i32 c3", CK_POOL_MAX, CK_POOL_INDEX_I32, CK_DTYPE_F32, 3, 0);
    pool("avg f16", CK_POOL_AVG, CK_POOL_INDEX_NONE, CK_DTYPE_F16, 64, 0);
    pool("max backward bf16 i64", CK_POOL_MAX, CK_POOL_INDEX_I64, CK_DTYPE_BF16, 64, 1);
    pool("max backward f32 i32 c3", CK_POOL_MAX, CK_POOL_INDEX_I32, CK_DTYPE_F32, 3, 1);
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.n = 32, p.c = p.k = 64;
    p.in[0] = p.in[1] = 56, p.filter[0] = p.filter[1] = 3;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 1;
    char *src = NULL;
    CHECK_OK(ck_im2col_source(&p, &src));
    compile("im2col bf16 3x3 c64", src);
    p.c = p.k = 3, p.in_dtype = p.wei_dtype = p.out_dtype = CK_DTYPE_F16;
    CHECK_OK(ck_im2col_source(&p, &src));
    compile("im2col f16 3x3 c3", src);
}

int main(void)
{
    RUN_TEST(test_compile);
    return CK_TEST_REPORT();
}
