/* The attention kernels compile with NVRTC (no GPU needed; ptxas checks every PTX statement):
 * the policy's kernel for sm_90a at every head-dim class -- the sm90 kernel (TMA + wgmma) for
 * d 64 (three consumer warpgroups), 128, 256 (80-row key tiles) and 192 / 128, the sm80 kernel
 * for d 32 and 96 (192-byte lines) and for element-wise copies and single O stores -- bf16 and
 * f16; the sm90 kernel's 64-row key tile at d 128 and its developer switches (the linear and
 * snake orders, two consumers at d 64 and three at d 128, key tiles of 96 at d 128 and 64 at
 * d 256, the register split 40 / 224); and the sm80 kernel for sm_80; the variants (bias,
 * ALiBi, paged, dropout) in the sm80 and decode kernels and split-KV's combine kernel; fp8 e4m3
 * inputs on the sm90 kernel (d 64, 128, 256; 128- and 64-key tiles). Skipped
 * without NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/attention/attn_internal.h"
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

/* force: 0 the policy's instance, 2 the sm90 kernel with 64-row key tiles. */
static void compile_as(const char *arch, int64_t d, int64_t dv, ck_dtype t, int64_t sq, int odd,
                       int force)
{
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 2, p.s_q = sq, p.s_k = 4096, p.h_q = 16, p.h_k = 4, p.d = d, p.d_v = dv, p.dtype = t;
    if (odd) { /* BHSD with rows of d + 3 elements: element-wise copies, single O stores */
        p.q.seq = d + 3, p.q.head = sq * (d + 3), p.q.batch = 16 * sq * (d + 3);
        p.o.seq = dv + 3, p.o.head = sq * (dv + 3), p.o.batch = 16 * sq * (dv + 3);
    }
    p.mask = CK_ATTN_MASK_CAUSAL;
    p.lse = 1;
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_device_props props = h100_like(arch);
    ck_attn_instance in;
    CHECK_OK(ck_attn_policy(&prob, &props, &in));
    if (force == 2)
        in = (ck_attn_instance){128, 64, CK_ATTN_SM90_WARPS, 0, 1, 0};
    char *src = NULL;
    CHECK_OK(ck_attn_source(&prob, &in, &src));
    if (!src)
        return;
    void *cubin = NULL;
    size_t size = 0;
    ck_status st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "d %lld dv %lld %s, instance %dx%dx%d, for %s: %s", (long long)d,
              (long long)dv, ck_dtype_name(t), in.tile_m, in.tile_n, in.warps, arch,
              ck_last_error());
    free(cubin);
    free(src);
}

static void compile(const char *arch, int64_t d, int64_t dv, ck_dtype t, int64_t sq, int odd)
{
    compile_as(arch, d, dv, t, sq, odd, 0);
}

/* The policy's sm_90a kernel with the developer switch name=value (sm90.c). */
static void compile_env(const char *name, const char *value, int64_t d, ck_dtype t)
{
    setenv(name, value, 1);
    compile_as("sm_90a", d, d, t, 4096, 0, 0);
    unsetenv(name);
}

/* The variants (bias, ALiBi, paged, dropout) in the sm80 kernel, the decode kernel (with them,
 * split-KV) and the combine kernel. */
static void compile_variants(const char *arch, int64_t sq, int64_t d, ck_dtype t, int splits)
{
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 4, p.s_q = sq, p.s_k = 4096, p.h_q = 32, p.h_k = 8, p.d = d, p.d_v = d, p.dtype = t;
    p.var.bias.dtype = splits > 1 ? CK_DTYPE_F32 : CK_DTYPE_BF16;
    p.var.bias.dims[0] = 4, p.var.bias.dims[1] = 1, p.var.bias.dims[2] = sq;
    p.var.bias.dims[3] = 4096;
    p.var.alibi = 1;
    p.var.page_size = 64, p.var.num_pages = 1024, p.var.max_pages = 64;
    p.var.dropout_p = 0.1f;
    p.mask = CK_ATTN_MASK_CAUSAL, p.align = CK_ATTN_BOTTOM_RIGHT;
    p.lse = 1;
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_device_props props = h100_like(arch);
    ck_attn_instance in;
    char *src[3] = {NULL, NULL, NULL};
    if (sq > 16) {
        CHECK_OK(ck_attn_policy(&prob, &props, &in));
        CHECK_OK(ck_attn_source(&prob, &in, &src[0]));
    } else {
        CHECK_OK(ck_attn_decode_policy(&prob, &props, splits, &in));
        CHECK_OK(ck_attn_decode_source(&prob, &in, &src[0]));
        CHECK_OK(ck_attn_combine_source(&prob, &src[1]));
    }
    for (int x = 0; x < 2; ++x) {
        if (!src[x])
            continue;
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src[x], arch, NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "variants sq %lld d %lld %s for %s (%s): %s", (long long)sq,
                  (long long)d, ck_dtype_name(t), arch, x ? "combine" : "attention",
                  ck_last_error());
        free(cubin);
        free(src[x]);
    }
}

/* The decode kernel of the shape (b64 h32/8 s_q 1, paged 64, d128) with rings of 3
 * stages (the policy's block) and 4 stages (32 keys per warp over 2 warps): CK_ATTN_DECODE_STAGES
 * (compile_variants compiles 2). */
static void compile_decode_rings(const char *arch)
{
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = 64, p.s_q = 1, p.s_k = 8192, p.h_q = 32, p.h_k = 8, p.d = p.d_v = 128;
    p.var.page_size = 64, p.var.num_pages = 8192, p.var.max_pages = 128;
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_device_props props = h100_like(arch);
    for (int x = 0; x < 2; ++x) {
        ck_attn_instance in, want = {0, x ? 32 : 0, 2, 1, 0, 3 + x};
        CHECK_OK(ck_attn_decode_policy(&prob, &props, 0, &in));
        CHECK_OK(ck_attn_decode_instance(&prob, &props, &want, &in));
        char *src = NULL;
        CHECK_OK(ck_attn_decode_source(&prob, &in, &src));
        if (!src)
            continue;
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "decode r%dn%d w%d, %d stages, for %s: %s", in.tile_m,
                  in.tile_n, in.warps, in.stages, arch, ck_last_error());
        free(cubin);
        free(src);
    }
}

static void test_kernels(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    compile("sm_90a", 128, 128, CK_DTYPE_BF16, 4096, 0);
    compile("sm_90a", 64, 64, CK_DTYPE_F16, 4096, 1);
    compile("sm_90a", 96, 96, CK_DTYPE_BF16, 4096, 0);
    compile("sm_90a", 256, 256, CK_DTYPE_BF16, 4096, 0);
    compile("sm_90a", 192, 128, CK_DTYPE_F16, 4096, 0);
    compile("sm_90a", 32, 32, CK_DTYPE_BF16, 16, 0);
    compile_as("sm_90a", 128, 128, CK_DTYPE_F16, 4096, 0, 2);
    compile("sm_90a", 64, 64, CK_DTYPE_BF16, 4096, 0);
    compile_env("CK_ATTN_SM90_ORDER", "linear", 128, CK_DTYPE_BF16);
    compile_env("CK_ATTN_SM90_ORDER", "snake", 64, CK_DTYPE_F16);
    compile_env("CK_ATTN_SM90_CONSUMERS", "2", 64, CK_DTYPE_BF16);
    compile_env("CK_ATTN_SM90_CONSUMERS", "3", 128, CK_DTYPE_BF16);
    compile_env("CK_ATTN_SM90_TILE_N", "96", 128, CK_DTYPE_BF16);
    compile_env("CK_ATTN_SM90_TILE_N", "64", 256, CK_DTYPE_BF16);
    compile_env("CK_ATTN_SM90_REGS", "40,224", 128, CK_DTYPE_F16);
    compile("sm_80", 128, 128, CK_DTYPE_F16, 4096, 0);
    /* fp8 e4m3: d 128 (128-key tiles), d 64 (three consumers, 64-byte Q / K lines), d 256
     * (64-key tiles: 64-byte V^T lines), the 64-key tile at d 128 */
    compile("sm_90a", 128, 128, CK_DTYPE_FP8_E4M3, 4096, 0);
    compile("sm_90a", 64, 64, CK_DTYPE_FP8_E4M3, 4096, 0);
    compile("sm_90a", 256, 256, CK_DTYPE_FP8_E4M3, 4096, 0);
    compile_as("sm_90a", 128, 128, CK_DTYPE_FP8_E4M3, 4096, 0, 2);
    compile_variants("sm_90a", 4096, 128, CK_DTYPE_BF16, 0);
    compile_variants("sm_90a", 1, 128, CK_DTYPE_BF16, 1);
    compile_variants("sm_90a", 4, 256, CK_DTYPE_F16, 4);
    compile_variants("sm_80", 1, 64, CK_DTYPE_BF16, 8);
    compile_decode_rings("sm_90a");
}

int main(void)
{
    RUN_TEST(test_kernels);
    return CK_TEST_REPORT();
}
