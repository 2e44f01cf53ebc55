/* The sm80 GEMM kernels compile with NVRTC for sm_80, sm_89 and sm_90a (no GPU needed; ptxas
 * checks every PTX statement): each input type (16-bit, tf32, 3xtf32, fp8 mix, i8), K-major and
 * MN-major operands (ldmatrix, ldmatrix.trans, plain shared loads), 16-byte and element-wise
 * copies, and an epilogue with C, bias, activation and a program. The sm90 family's variants
 * compile for sm_90a: 4 stages with D staged in halves, clusters with multicast (both B
 * layouts), split-K with the generated epilogue; and batched problems of both families; stream-K
 * and the atomic split-K, and the grouped kernels of both families (group lists and pointer
 * arrays); the small-M instances of 64 rows; the small-M mixed-input variant (sm80q).
 * Skipped without NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/gemm/gemm_internal.h"
#include "rt/runtime_internal.h"
#include "test.h"

/* The properties of a device of this target with the H100's multiprocessors and shared memory. */
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

/* 1 (and a line) when NVRTC is missing: the test is skipped. */
static int no_nvrtc(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS)
        return 0;
    printf("NVRTC not available (%s); skipped\n", ck_last_error());
    return 1;
}

/* big: the family's first (largest) instance, else its last (smallest: faster to compile);
 * family 90: the instance `big` of its list. */
static void compile_family(const ck_gemm_family *f, const char *what, const char *arch,
                           const ck_gemm_problem *p, int big)
{
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(p, &prob));
    ck_device_props props = h100_like(arch);
    char reason[512] = "";
    CHECK_MSG(f->supports(&prob, &props, reason, sizeof reason), "%s: %s", what, reason);
    ck_gemm_instance in[24];
    int n = f->instances(&prob, &props, in, 24);
    CHECK(n > 0);
    if (n <= 0)
        return;
    int pick = f == &ck_gemm_family_sm90 ? (big < n ? big : n - 1) : big ? 0 : n - 1;
    char *src = NULL;
    CHECK_OK(f->source(&prob, &in[pick], &src));
    if (!src)
        return;
    void *cubin = NULL;
    size_t size = 0;
    ck_status st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", what, arch, ck_last_error());
    free(cubin);
    free(src);
}

static void compile(const char *what, const char *arch, const ck_gemm_problem *p, int big)
{
    compile_family(&ck_gemm_family_sm80, what, arch, p, big);
}

/* Strided batched problems: the sm80 kernel (batch x tiles along blockIdx.x) and the sm90
 * kernel (units over batch x tiles x splits, 3-D TMA loads and stores). */
static void test_batched(void)
{
    if (no_nvrtc())
        return;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 1000, p.n = 1000, p.k = 1024, p.batch = 8;
    p.a.batch_stride = 0; /* broadcast A */
    p.b.batch_stride = 1024 * 1000;
    p.d.batch_stride = 1000 * 1000;
    p.c.dtype = CK_DTYPE_BF16;
    p.c.batch_stride = 1000 * 1000 + 3;
    p.bias = CK_GEMM_BIAS_ROW;
    p.bias_batch_stride = 1000;
    compile("batched bf16 with C and bias", "sm_80", &p, 0);
    compile_family(&ck_gemm_family_sm90, "sm90 batched, generated epilogue", "sm_90a", &p, 0);
    ck_gemm_problem_init(&p);
    p.m = 256, p.n = 256, p.k = 8192, p.batch = 2; /* few tiles, long K: a split-K instance */
    p.a.batch_stride = 256 * 8192, p.b.batch_stride = 8192 * 256, p.d.batch_stride = 256 * 256;
    p.b.order = CK_GEMM_COL_MAJOR;
    p.d.dtype = CK_DTYPE_F32;
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    ck_device_props props = h100_like("sm_90a");
    ck_gemm_instance in[24];
    int n = ck_gemm_family_sm90.instances(&prob, &props, in, 24), split = -1;
    for (int i = 0; i < n; ++i)
        if (in[i].split_k > 1)
            split = i;
    CHECK_MSG(split >= 0, "no split-K instance for %dx%dx%d x %d", 256, 256, 8192, 2);
    if (split >= 0)
        compile_family(&ck_gemm_family_sm90, "sm90 batched split-K", "sm_90a", &p, split);
    ck_gemm_problem_init(&p); /* the TMA store of D, B broadcast; clusters of 2 */
    p.m = p.n = 512, p.k = 256, p.batch = 3;
    p.a.batch_stride = 512 * 256, p.b.batch_stride = 0, p.d.batch_stride = 512 * 512;
    p.b.order = CK_GEMM_COL_MAJOR;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    n = ck_gemm_family_sm90.instances(&prob, &props, in, 24);
    for (int i = 0; i < n; ++i)
        compile_family(&ck_gemm_family_sm90, "sm90 batched TMA store", "sm_90a", &p, i);
}

static void test_kernels(void)
{
    if (no_nvrtc())
        return;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 1000;
    p.n = 999;
    p.k = 1024;
    compile("bf16 TN", "sm_80", &p, 1);
    p.a.order = CK_GEMM_COL_MAJOR;
    p.b.order = CK_GEMM_COL_MAJOR;
    p.a.dtype = p.b.dtype = CK_DTYPE_F16;
    p.d.dtype = CK_DTYPE_F16;
    p.c.dtype = CK_DTYPE_F32;
    p.bias = CK_GEMM_BIAS_COL;
    p.bias_dtype = CK_DTYPE_BF16;
    p.activation = CK_GEMM_ACT_GELU_TANH;
    ck_ew_program prog;
    CHECK_OK(ck_ew_parse("silu(x0) * 0.5 + cast(x0, bf16)", &prog));
    p.epilogue = &prog;
    compile("f16 NN epilogue", "sm_90a", &p, 0);
    ck_gemm_problem_init(&p);
    p.m = p.n = p.k = 777;
    p.a.dtype = p.b.dtype = CK_DTYPE_F32;
    p.d.dtype = CK_DTYPE_F32;
    p.b.order = CK_GEMM_ROW_MAJOR;
    compile("tf32 (element-wise copies)", "sm_80", &p, 0);
    p.compute = CK_GEMM_COMPUTE_F32;
    p.a.order = CK_GEMM_COL_MAJOR;
    p.a.ld = 780;
    compile("3xtf32", "sm_90a", &p, 0);
    ck_gemm_problem_init(&p);
    p.m = p.n = p.k = 512;
    p.a.dtype = CK_DTYPE_FP8_E4M3;
    p.b.dtype = CK_DTYPE_FP8_E5M2;
    p.d.dtype = CK_DTYPE_FP8_E4M3;
    p.b.order = CK_GEMM_COL_MAJOR;
    compile("fp8 e4m3 x e5m2", "sm_89", &p, 0);
    p.a.dtype = p.b.dtype = CK_DTYPE_I8;
    p.d.dtype = CK_DTYPE_I32;
    p.c.dtype = CK_DTYPE_I32;
    p.a.order = CK_GEMM_COL_MAJOR;
    p.b.order = CK_GEMM_ROW_MAJOR;
    compile("i8 MN-major", "sm_80", &p, 0);
}

/* The sm90 instance with these tile M, N, stages (0: any), cluster and split (0: none, 1: any
 * > 1). */
static void compile90m(const char *what, const ck_gemm_problem *p, int tile_m, int tile_n,
                       int stages, int cluster, int split)
{
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(p, &prob));
    ck_device_props props = h100_like("sm_90a");
    ck_gemm_instance in[24];
    int n = ck_gemm_family_sm90.instances(&prob, &props, in, 24), pick = -1;
    for (int i = 0; i < n && pick < 0; ++i)
        if (in[i].tile_m == tile_m && in[i].tile_n == tile_n &&
            (!stages || in[i].stages == stages) && in[i].cluster == cluster &&
            (split ? in[i].split_k > 1 : in[i].split_k <= 1))
            pick = i;
    CHECK_MSG(pick >= 0, "%s: no such sm90 instance among %d", what, n);
    if (pick >= 0)
        compile_family(&ck_gemm_family_sm90, what, "sm_90a", p, pick);
}

static void compile90(const char *what, const ck_gemm_problem *p, int tile_n, int stages,
                      int cluster, int split)
{
    compile90m(what, p, 128, tile_n, stages, cluster, split);
}

/* The small-M instances (64 rows, one consumer warpgroup, 8 stages; skinny.c): whole tiles and
 * split-K, the TMA store (D in halves for 64 x 256) and the generated epilogue, tf32 and fp8. */
static void test_sm90_skinny(void)
{
    if (no_nvrtc())
        return;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 16, p.n = 4096, p.k = 4096; /* bf16, A row-major, B column-major, D bf16 */
    p.b.order = CK_GEMM_COL_MAJOR;
    compile90m("64x128 8 stages split-K, TMA store", &p, 64, 128, 8, 1, 1);
    compile90m("64x256 D in halves", &p, 64, 256, 0, 1, 0);
    p.m = 1, p.n = 14336;
    compile90m("64x128 8 stages, M 1", &p, 64, 128, 8, 1, 0);
    ck_gemm_problem_init(&p);
    p.m = 100, p.n = 1000, p.k = 4096;
    p.a.order = CK_GEMM_COL_MAJOR; /* A M-major (rows of 16-byte multiples), B N-major */
    p.a.ld = 104;
    p.d.dtype = CK_DTYPE_F32;
    p.c.dtype = CK_DTYPE_F32;
    p.bias = CK_GEMM_BIAS_COL;
    p.activation = CK_GEMM_ACT_SILU;
    compile90m("64x64 split-K, generated epilogue with C, MN-major", &p, 64, 64, 0, 1, 1);
    ck_gemm_problem_init(&p);
    p.m = 8, p.n = 4096, p.k = 4096;
    p.a.dtype = p.b.dtype = CK_DTYPE_F32;
    p.d.dtype = CK_DTYPE_F32;
    p.b.order = CK_GEMM_COL_MAJOR;
    compile90m("64x128 tf32", &p, 64, 128, 0, 1, 1);
    p.a.dtype = CK_DTYPE_FP8_E4M3, p.b.dtype = CK_DTYPE_FP8_E5M2, p.d.dtype = CK_DTYPE_BF16;
    compile90m("64x128 fp8", &p, 64, 128, 0, 1, 0);
}

static void test_sm90_variants(void)
{
    if (no_nvrtc())
        return;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 4096, p.n = 4096, p.k = 4096; /* bf16, A row-major, B column-major, D bf16 */
    compile90("128x256 4 stages, D in halves", &p, 256, 4, 1, 0);
    compile90("128x256 cluster of 2", &p, 256, 3, 2, 0);
    compile90("128x64", &p, 64, 0, 1, 0);
    p.b.order = CK_GEMM_ROW_MAJOR;
    compile90("128x128 cluster of 2, B N-major", &p, 128, 0, 2, 0);
    ck_gemm_problem_init(&p);
    p.m = 256, p.n = 1024, p.k = 65536;
    p.d.dtype = CK_DTYPE_F32;
    p.c.dtype = CK_DTYPE_F32;
    compile90("128x128 split-K, generated epilogue with C", &p, 128, 0, 1, 1);
    ck_gemm_problem_init(&p);
    p.m = 4096, p.n = 11008, p.k = 4096; /* the TMA store with the epilogue on the way */
    p.b.order = CK_GEMM_COL_MAJOR;
    p.bias = CK_GEMM_BIAS_COL;
    p.bias_dtype = CK_DTYPE_BF16;
    p.activation = CK_GEMM_ACT_SILU;
    compile90("128x256 4 stages, TMA store with bias and silu", &p, 256, 4, 1, 0);
    p.bias = CK_GEMM_BIAS_ROW;
    p.bias_dtype = CK_DTYPE_F32;
    p.activation = CK_GEMM_ACT_GELU_ERF;
    compile90("128x128, TMA store with a row bias and gelu", &p, 128, 0, 1, 0);
}

/* Quantized problems (quant.c, sm80_quant_kernel.h, sm90_quant_kernel.h): block-scaled fp8 on
 * both families, packed uint4 with zero points and fp4 B (the smallest sm80 instances: the
 * operand paths are the same in every tile; i8 row-col shares the fp8 promotion). */
static void test_quant(void)
{
    if (no_nvrtc())
        return;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 4096, p.n = 7168, p.k = 16384; /* DeepSeek-V3: A 1 x 128, B 128 x 128 */
    p.a.dtype = p.b.dtype = CK_DTYPE_FP8_E4M3;
    p.b.order = CK_GEMM_COL_MAJOR;
    p.scale_a.mode = p.scale_b.mode = CK_GEMM_SCALE_BLOCK;
    p.scale_a.block_mn = 1, p.scale_a.block_k = 128, p.scale_a.order = CK_GEMM_COL_MAJOR;
    p.scale_b.block_mn = 128, p.scale_b.block_k = 128;
    compile_family(&ck_gemm_family_sm90, "sm90 fp8 block-scaled 1x128 / 128x128", "sm_90a", &p, 0);
    compile("fp8 block-scaled 1x128 / 128x128", "sm_89", &p, 0);
    ck_gemm_problem_init(&p);
    p.m = 16, p.n = 4096, p.k = 4096; /* weight-only 4-bit, groups of 128 */
    p.a.dtype = CK_DTYPE_F16, p.d.dtype = CK_DTYPE_F16;
    p.b.dtype = CK_DTYPE_U8;
    p.b.order = CK_GEMM_COL_MAJOR;
    p.b_packed = CK_GEMM_PACKED_UINT4, p.b_zeros = 1;
    p.scale_b.mode = CK_GEMM_SCALE_BLOCK;
    p.scale_b.block_mn = 1, p.scale_b.block_k = 128;
    compile("f16 x uint4 with zero points", "sm_90a", &p, 0);
    p.a.dtype = CK_DTYPE_BF16, p.d.dtype = CK_DTYPE_BF16;
    p.b_packed = CK_GEMM_PACKED_FP4_E2M1, p.b_zeros = 0;
    compile("bf16 x fp4 e2m1", "sm_80", &p, 0);
    /* the small-M variant (quant_skinny.c): int4 at M = 16 (first and last instance, split-K),
     * uint4 with zero points at M = 64 (f16, groups of 64: 8-byte loads), fp4 at M = 1 */
    p.m = 16, p.k = 14336;
    p.b_packed = CK_GEMM_PACKED_INT4;
    compile_family(&ck_gemm_family_sm80q, "small-M bf16 x int4", "sm_90a", &p, 1);
    compile_family(&ck_gemm_family_sm80q, "small-M bf16 x int4 (256 columns a block)", "sm_80", &p,
                   0);
    p.m = 64, p.a.dtype = CK_DTYPE_F16, p.d.dtype = CK_DTYPE_F16;
    p.b_packed = CK_GEMM_PACKED_UINT4, p.b_zeros = 1;
    p.scale_b.block_k = 64;
    compile_family(&ck_gemm_family_sm80q, "small-M f16 x uint4, zero points", "sm_90a", &p, 1);
    p.m = 1, p.a.dtype = CK_DTYPE_BF16, p.d.dtype = CK_DTYPE_BF16;
    p.b_packed = CK_GEMM_PACKED_FP4_E2M1, p.b_zeros = 0;
    p.scale_b.block_k = 128;
    compile_family(&ck_gemm_family_sm80q, "small-M bf16 x fp4", "sm_80", &p, 1);
}

/* Compile the source of instance `in` of family f for arch (grouped: 1 the grouped kernel of a
 * group list, 2 of a pointer-array batch). */
static void compile_inst(const char *what, const char *arch, const ck_gemm_family *f,
                         const ck_gemm_prob *prob, const ck_gemm_instance *in, int grouped)
{
    char *src = NULL;
    CHECK_OK(grouped ? ck_gemm_grouped_source(prob, in, grouped == 2, &src)
                     : f->source(prob, in, &src));
    if (!src)
        return;
    void *cubin = NULL;
    size_t size = 0;
    ck_status st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", what, arch, ck_last_error());
    free(cubin);
    free(src);
}

/* Stream-K and the atomic split-K in the sm90 kernel (generated epilogue with C and bias, the
 * TMA store of D, batches), and the grouped kernel (sm80 pipeline, per-group copy test) for
 * sm_80 and sm_90a. */
static void test_decompositions_and_groups(void)
{
    if (no_nvrtc())
        return;
    ck_device_props props = h100_like("sm_90a");
    static const int decomp[] = {CK_GEMM_DECOMP_STREAM_K, CK_GEMM_DECOMP_SPLIT_K_ATOMIC};
    for (int v = 0; v < 4; ++v) {
        ck_gemm_problem p;
        ck_gemm_problem_init(&p);
        p.m = 256, p.n = 1024, p.k = 8192;
        p.b.order = CK_GEMM_COL_MAJOR;
        if (v % 2 == 0) { /* the generated epilogue, with C and bias */
            p.d.dtype = p.c.dtype = CK_DTYPE_F32;
            p.bias = CK_GEMM_BIAS_ROW;
        }
        if (v == 2) { /* batched */
            p.batch = 3;
            p.a.batch_stride = 256 * 8192, p.b.batch_stride = 0, p.d.batch_stride = 256 * 1024;
            p.c.batch_stride = 256 * 1024;
        }
        ck_gemm_prob prob;
        CHECK_OK(ck_gemm_prob_make(&p, &prob));
        ck_gemm_instance in[16];
        int n = ck_gemm_family_sm90.instances(&prob, &props, in, 16), pick = -1;
        for (int i = 0; i < n && pick < 0; ++i)
            if (in[i].tile_n == 128 && in[i].cluster == 1 && in[i].split_k <= 1 && !in[i].decomp)
                pick = i;
        CHECK(pick >= 0);
        if (pick < 0)
            continue;
        for (int d = 0; d < 2; ++d) {
            ck_gemm_instance x = in[pick];
            x.decomp = decomp[d];
            x.split_k = decomp[d] == CK_GEMM_DECOMP_SPLIT_K_ATOMIC ? 4 : 1;
            char what[64];
            snprintf(what, sizeof what, "sm90 %s, variant %d", d ? "atomic split-K" : "stream-K",
                     v);
            compile_inst(what, "sm_90a", &ck_gemm_family_sm90, &prob, &x, 0);
        }
    }
    static const ck_dtype types[] = {CK_DTYPE_BF16, CK_DTYPE_F32, CK_DTYPE_I8};
    for (int t = 0; t < 3; ++t) {
        ck_gemm_problem p;
        ck_gemm_problem_init(&p);
        p.m = p.n = p.k = 1024;
        p.a.dtype = p.b.dtype = types[t];
        p.d.dtype = types[t] == CK_DTYPE_I8 ? CK_DTYPE_I32 : types[t];
        p.b.order = t == 1 ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
        if (t == 0) {
            p.c.dtype = CK_DTYPE_F32;
            p.bias = CK_GEMM_BIAS_COL;
            p.activation = CK_GEMM_ACT_SILU;
        }
        ck_gemm_prob sized, tmpl;
        CHECK_OK(ck_gemm_prob_make(&p, &sized));
        CHECK_OK(ck_gemm_grouped_prob(&p, "test", &tmpl));
        ck_device_props p80 = h100_like("sm_80");
        ck_gemm_instance in[16];
        int n = ck_gemm_family_sm80.instances(&sized, &p80, in, 16);
        CHECK(n > 0);
        for (int a = 0; a < 2 && n > 0; ++a) {
            char what[64];
            snprintf(what, sizeof what, "grouped %s", ck_dtype_name(types[t]));
            compile_inst(what, a ? "sm_90a" : "sm_80", &ck_gemm_family_sm80, &tmpl,
                         &in[a ? 0 : n - 1], a ? 1 : 2);
        }
    }
}

/* The grouped sm90 kernel (the producer warpgroup's copies through the loader hooks, the walk
 * over the group list or the pointer arrays) for sm_90a: bf16 K-major with C, bias and an
 * activation (list), f16 MN-major A and B (pointer arrays), tf32 (list), e4m3 (pointer arrays). */
static void test_grouped_sm90(void)
{
    if (no_nvrtc())
        return;
    ck_device_props props = h100_like("sm_90a");
    static const ck_dtype types[] = {CK_DTYPE_BF16, CK_DTYPE_F16, CK_DTYPE_F32,
                                     CK_DTYPE_FP8_E4M3};
    for (int t = 0; t < 4; ++t) {
        ck_gemm_problem p;
        ck_gemm_problem_init(&p);
        p.m = p.n = p.k = 1024;
        p.a.dtype = p.b.dtype = types[t];
        p.d.dtype = t == 3 ? CK_DTYPE_BF16 : types[t];
        p.a.order = t == 1 ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
        p.b.order = t == 1 ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
        if (t == 0) {
            p.c.dtype = CK_DTYPE_F32;
            p.bias = CK_GEMM_BIAS_COL;
            p.activation = CK_GEMM_ACT_SILU;
        }
        ck_gemm_prob sized, tmpl;
        CHECK_OK(ck_gemm_prob_make(&p, &sized));
        CHECK_OK(ck_gemm_grouped_prob(&p, "test", &tmpl));
        tmpl.tf32_truncate = 1;
        ck_gemm_instance in[24];
        int n = ck_gemm_family_sm90.instances(&sized, &props, in, 24), pick = -1;
        for (int i = 0; i < n && pick < 0; ++i)
            if (in[i].cluster <= 1 && in[i].split_k <= 1 && !in[i].decomp && in[i].tile_m == 128)
                pick = i;
        CHECK(pick >= 0);
        if (pick < 0)
            continue;
        char what[64];
        snprintf(what, sizeof what, "grouped sm90 %s (%s)", ck_dtype_name(types[t]),
                 t % 2 ? "pointer arrays" : "list");
        compile_inst(what, "sm_90a", &ck_gemm_family_sm90, &tmpl, &in[pick], 1 + t % 2);
    }
}

int main(void)
{
    RUN_TEST(test_kernels);
    RUN_TEST(test_sm90_variants);
    RUN_TEST(test_sm90_skinny);
    RUN_TEST(test_batched);
    RUN_TEST(test_decompositions_and_groups);
    RUN_TEST(test_grouped_sm90);
    RUN_TEST(test_quant);
    return CK_TEST_REPORT();
}
