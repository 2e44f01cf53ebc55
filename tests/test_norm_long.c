/*
 * Layernorm / RMSNorm / smooth-quant forward on the looped pipeline (norm_fwd_looped_kernel.h,
 * rows longer than 65,536): forced at small sizes by the instance ck tune would store
 * ("loop,G,C,CACHE": threads, blocks per row on a cluster, vectors cached per thread), so that
 * the streamed part, the cluster exchange, uneven lanes and every fused option run; then the
 * policy's own choice at 100,003 and 1,048,576; the limits (1,048,577 forward, 65,537
 * backward refused). Every output element against the double-precision reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "norm_fwd_check.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"
#include "rt/runtime_internal.h"

static ck_context *ctx;
static const ck_dtype F32 = CK_DTYPE_F32, F16 = CK_DTYPE_F16, BF16 = CK_DTYPE_BF16;

static const char *table_op(ck_norm_kind k)
{
    return k == CK_NORM_LAYERNORM ? "layernorm" : k == CK_NORM_RMSNORM ? "rmsnorm" : "smoothquant";
}

/* The plan of case c with the instance `text` forced is looped with these parameters. */
static void check_plan(const fcase *c, const char *text)
{
    nt_buf x, y, g;
    CHECK(nt_alloc(ctx, &x, c->xt, c->rows, c->n, c->n + c->pad, 0));
    CHECK(nt_alloc(ctx, &y, c->yt, c->rows, c->n, c->n + c->pad, 0));
    CHECK(nt_alloc(ctx, &g, c->gt, 1, c->n, c->n, 1));
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = c->kind;
    d.x = &x.ten;
    d.y = &y.ten;
    d.gamma = c->kind == CK_NORM_NONE ? NULL : &g.ten;
    nt_buf ys;
    memset(&ys, 0, sizeof ys);
    if (c->yt == CK_DTYPE_I8 || c->yt == CK_DTYPE_FP8_E4M3) {
        CHECK(nt_alloc(ctx, &ys, F32, 1, c->rows, c->rows, 1));
        d.y_scale = &ys.ten;
    }
    ck_norm_instance in;
    char problem[128], name[64];
    CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
    ck_norm_fwd_instance_name(&in, name, sizeof name);
    CHECK_MSG(in.looped && strcmp(name, text) == 0, "forced '%s', planned '%s'", text, name);
    CHECK_MSG(in.iters > in.cache, "'%s' on n %lld: nothing streamed (iters %d, cache %d)", text,
              (long long)c->n, in.iters, in.cache);
    nt_free(ctx, &x);
    nt_free(ctx, &y);
    nt_free(ctx, &g);
    nt_free(ctx, &ys);
}

static void test_forced_small(void)
{
    struct {
        const char *inst;
        fcase c;
    } cs[] = {
        /* clusters of 2 blocks of 32, one vector cached: uneven lanes (1000 / 8 = 125 vectors) */
        {"loop,32,2,1", {CK_NORM_LAYERNORM, 5, 1000, 0, BF16, BF16, BF16, 1, 1, 1, 0, 1, 0}},
        {"loop,64,4,0", {CK_NORM_RMSNORM, 3, 4096, 8, F32, F32, F32, 0, 0, 0, 0, 1, 0}},
        {"loop,32,1,2", {CK_NORM_LAYERNORM, 4, 777, 0, F16, F16, F32, 1, 0, 0, 0, 1, 0}},
        {"loop,32,8,1", {CK_NORM_RMSNORM, 3, 3000, 0, BF16, CK_DTYPE_I8, BF16, 0, 1, 1, 1, 0, 0}},
        {"loop,64,2,1", {CK_NORM_NONE, 2, 2048, 0, F16, CK_DTYPE_FP8_E4M3, F32, 0, 0, 0, 1, 0, 0}},
        {"loop,32,4,1",
         {CK_NORM_LAYERNORM, 3, 2500, 0, BF16, CK_DTYPE_FP8_E4M3, BF16, 1, 0, 0, 1, 1, 0}},
        /* even split (every lane as many vectors) */
        {"loop,32,2,2", {CK_NORM_LAYERNORM, 3, 2048, 0, F32, F32, F32, 1, 0, 0, 0, 1, 0}},
        /* NaN / Inf rows (RMSNorm: the rows' mean is not an output) */
        {"loop,32,2,1", {CK_NORM_RMSNORM, 3, 2048, 0, F32, F32, F32, 0, 0, 0, 0, 1, 1}},
        /* resident ("loop,G,C,CACHE,SMEM": 16-bit x as raw codes, CACHE vectors in registers,
         * SMEM in shared memory, the rest streamed): registers + shared + streamed, uneven
         * lanes (257 vectors) */
        {"loop,32,2,1,2", {CK_NORM_LAYERNORM, 3, 2056, 0, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0}},
        {"loop,32,4,1,3", {CK_NORM_RMSNORM, 3, 4096, 0, F16, F16, F32, 0, 0, 0, 0, 1, 0}},
        /* no register rounds; quantized with smooth; uneven (375 vectors on 256 lanes) */
        {"loop,32,8,0,2", {CK_NORM_LAYERNORM, 3, 3000, 0, BF16, CK_DTYPE_I8, BF16, 1, 0, 0, 1, 1, 0}},
        {"loop,64,2,1,1", {CK_NORM_NONE, 2, 2048, 0, F16, CK_DTYPE_FP8_E4M3, F32, 0, 0, 0, 1, 0, 0}},
        /* NaN / Inf rows through registers, shared memory and the streamed round */
        {"loop,32,2,2,1", {CK_NORM_RMSNORM, 3, 2048, 0, BF16, BF16, BF16, 0, 0, 0, 0, 1, 1}},
        {"loop,32,2,2,1", {CK_NORM_LAYERNORM, 3, 2048, 0, BF16, BF16, BF16, 1, 0, 0, 0, 0, 1}},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        const char *op = table_op(cs[i].c.kind);
        CHECK_OK(ck_op_force_instance(ctx, op, cs[i].inst));
        check_plan(&cs[i].c, cs[i].inst);
        nt_check_forward(ctx, &cs[i].c);
        CHECK_OK(ck_op_force_instance(ctx, op, NULL));
    }
}

/* The policy's looped instances (clusters of 8 blocks of 1024 threads where clusters exist):
 * streamed (f32, residual, odd N) and resident (16-bit x in 16-byte vectors, no residual: the
 * whole row on chip), each checked to be the instance it is meant to be. */
static void test_policy_long(void)
{
    const struct {
        fcase c;
        int resident;
    } cs[] = {
        {{CK_NORM_RMSNORM, 2, 100003, 0, F32, F32, F32, 0, 1, 1, 0, 1, 0}, 0},
        {{CK_NORM_RMSNORM, 1, 65537, 0, BF16, BF16, BF16, 0, 0, 0, 0, 1, 0}, 0},
        {{CK_NORM_LAYERNORM, 2, 65544, 0, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0}, 1},
        {{CK_NORM_RMSNORM, 1, 1048576, 0, BF16, BF16, BF16, 0, 0, 0, 0, 1, 0}, 1},
        {{CK_NORM_LAYERNORM, 1, 1048576, 0, BF16, BF16, BF16, 1, 0, 0, 0, 1, 0}, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        const fcase *c = &cs[i].c;
        nt_buf x, y, g;
        CHECK(nt_alloc(ctx, &x, c->xt, c->rows, c->n, c->n + c->pad, 0));
        CHECK(nt_alloc(ctx, &y, c->yt, c->rows, c->n, c->n + c->pad, 0));
        CHECK(nt_alloc(ctx, &g, c->gt, 1, c->n, c->n, 1));
        ck_norm_forward_desc d;
        memset(&d, 0, sizeof d);
        d.kind = c->kind;
        d.x = &x.ten;
        d.y = &y.ten;
        d.gamma = &g.ten;
        d.residual = c->residual ? &x.ten : NULL; /* the plan only */
        ck_norm_instance in;
        char problem[128];
        CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
        CHECK_MSG(in.looped && in.raw == cs[i].resident &&
                      (!cs[i].resident || in.cache + in.smem == in.iters),
                  "case %zu: looped %d raw %d cache %d smem %d iters %d", i, in.looped, in.raw,
                  in.cache, in.smem, in.iters);
        nt_free(ctx, &x);
        nt_free(ctx, &y);
        nt_free(ctx, &g);
        nt_check_forward(ctx, c);
    }
}

static void test_limits(void)
{
    nt_buf x, g, dy, gb, r;
    CHECK(nt_alloc(ctx, &x, BF16, 1, CK_NORM_MAX_N + 1, CK_NORM_MAX_N + 1, 0));
    CHECK(nt_alloc(ctx, &g, BF16, 1, CK_NORM_MAX_N + 1, CK_NORM_MAX_N + 1, 1));
    CHECK(nt_alloc(ctx, &dy, BF16, 1, CK_NORM_MAX_N + 1, CK_NORM_MAX_N + 1, 0));
    CHECK_STATUS(ck_rmsnorm2d_forward(ctx, &x.ten, &g.ten, 1e-5f, &dy.ten), CK_ERROR_UNSUPPORTED);
    nt_free(ctx, &x);
    nt_free(ctx, &g);
    nt_free(ctx, &dy);
    const int64_t n = CK_NORM_BWD_MAX_N + 1;
    CHECK(nt_alloc(ctx, &x, BF16, 1, n, n, 0));
    CHECK(nt_alloc(ctx, &dy, BF16, 1, n, n, 0));
    CHECK(nt_alloc(ctx, &gb, BF16, 1, n, n, 0)); /* dx */
    CHECK(nt_alloc(ctx, &g, F32, 1, n, n, 1));
    CHECK(nt_alloc(ctx, &r, F32, 1, 1, 1, 1));
    ck_norm_backward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_RMSNORM;
    d.dy = &dy.ten;
    d.x = &x.ten;
    d.gamma = &g.ten;
    d.rstd = &r.ten;
    d.dx = &gb.ten;
    CHECK_STATUS(ck_norm_backward(ctx, &d), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "65536") != NULL);
    nt_free(ctx, &x);
    nt_free(ctx, &dy);
    nt_free(ctx, &gb);
    nt_free(ctx, &g);
    nt_free(ctx, &r);
}

/* The looped pipeline's sources compile with NVRTC for sm_90a and sm_80 (the default 1M-element
 * instances on clusters and without, quantized with a residual, f32 uneven). */
static void test_nvrtc(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    struct {
        int kind;
        int64_t n;
        int vec, cluster, xt, yt, gt, bt, rt, ot, st, raw_ok;
    } cs[] = {
        {0, 1048576, 8, 8, BF16, BF16, BF16, BF16, -1, -1, -1, 0},
        {1, 1048576, 8, 1, BF16, BF16, BF16, -1, -1, -1, -1, 0},
        {1, 524288, 8, 8, BF16, CK_DTYPE_I8, BF16, -1, BF16, BF16, F32, 0},
        {2, 200000, 8, 8, F16, CK_DTYPE_FP8_E4M3, -1, -1, -1, -1, F32, 0},
        {0, 100003, 1, 8, F32, F32, F32, F32, -1, -1, -1, 0},
        /* resident: registers + shared memory (1M: 4 + 12 vectors), quantized, 16-bit x */
        {0, 1048576, 8, 8, BF16, BF16, BF16, BF16, -1, -1, -1, 2},
        {1, 262144, 8, 8, F16, CK_DTYPE_I8, BF16, -1, -1, -1, F32, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        ck_norm_fwd_knobs k;
        ck_norm_fwd_knobs_none(&k);
        ck_norm_instance in;
        ck_norm_pick_fwd_with(cs[i].n, cs[i].vec, 4096, cs[i].raw_ok, cs[i].cluster > 1, &k, &in);
        CHECK_MSG(in.looped && in.cluster == cs[i].cluster, "case %zu: looped %d cluster %d", i,
                  in.looped, in.cluster);
        char *src = ck_norm_fwd_source(cs[i].kind, cs[i].n, &in, cs[i].xt, cs[i].yt, cs[i].gt,
                                       cs[i].bt, cs[i].rt, cs[i].ot, cs[i].st, cs[i].kind == 0, 1);
        CHECK(src != NULL);
        const char *arch = cs[i].cluster > 1 ? "sm_90a" : "sm_80";
        void *cubin = NULL;
        size_t size = 0;
        ck_status st = ck_nvrtc_compile(src, arch, NULL, 0, &cubin, &size);
        CHECK_MSG(st == CK_SUCCESS, "looped %zu (%s): %s", i, arch, ck_last_error());
        free(cubin);
        free(src);
    }
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_forced_small);
    RUN_TEST(test_policy_long);
    RUN_TEST(test_limits);
    RUN_TEST(test_nvrtc);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
