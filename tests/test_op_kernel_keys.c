/*
 * The kernel cache key separates every instance the policy can choose, for layernorm/RMSNorm
 * (forward and backward), reduce, permute and elementwise: each op is run over the instances its
 * policy can pick (forced through the tuning mechanism `ck tune` uses, the developer switches, or
 * shapes that select them) and ck_context_kernel_count must grow by one exactly when the op's
 * generated source is new (a key that missed a parameter would reuse a kernel built for another
 * source; a key with a parameter the source ignores would build a copy).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/common/op_common.h"
#include "ops/elementwise/ew_internal.h"
#include "ops/norm/norm_internal.h"
#include "ops/permute/permute_internal.h"
#include "ops/reduce/reduce_internal.h"
#include "test.h"

static ck_context *ctx;
static uint64_t rng = 0x5eed1234u;

/* The sources seen so far (each distinct one must have built exactly its kernels). */
enum { MAX_SOURCES = 256 };
static char *seen[MAX_SOURCES];
static int nseen;

static int is_new(const char *src)
{
    for (int i = 0; i < nseen; ++i)
        if (strcmp(seen[i], src) == 0)
            return 0;
    if (nseen < MAX_SOURCES)
        seen[nseen++] = strdup(src);
    return 1;
}

static void forget_sources(void)
{
    for (int i = 0; i < nseen; ++i)
        free(seen[i]);
    nseen = 0;
}

/* Checks the kernel count after a run whose source is `src` (freed here), which builds
 * `kernels` kernels when new. */
static void expect_count(int before, char *src, int kernels, const char *what)
{
    CHECK_MSG(src != NULL, "%s: no source", what);
    if (!src)
        return;
    int fresh = is_new(src);
    int after = ck_context_kernel_count(ctx);
    CHECK_MSG(after == before + (fresh ? kernels : 0),
              "%s: %s source, kernel count %d -> %d (expected +%d)", what,
              fresh ? "a new" : "a known", before, after, fresh ? kernels : 0);
    free(src);
}

/* Device tensor of random codes (16-bit values within +-4, f32 within +-4). */
static void *random_device(ck_dtype t, size_t count)
{
    size_t e = t == CK_DTYPE_F32 ? 4 : t == CK_DTYPE_I32 ? 4 : 2;
    unsigned char *h = malloc(count * e);
    void *d = NULL;
    if (!h)
        return NULL;
    for (size_t i = 0; i < count; ++i) {
        double v = ((double)(ckt_rand64(&rng) >> 11) / 9007199254740992.0 - 0.5) * 8.0;
        uint64_t c = 0;
        ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c);
        memcpy(h + i * e, &c, e);
    }
    if (ck_malloc(ck_context_device(ctx), count * e, &d) != CK_SUCCESS ||
        ck_memcpy_h2d(ck_context_device(ctx), d, h, count * e, NULL) != CK_SUCCESS)
        d = NULL;
    free(h);
    return d;
}

/* ---- layernorm / RMSNorm forward: every instance text `ck tune` tries */
static void test_norm_forward(void)
{
    const int64_t rows = 4, n = 1024;
    int64_t shape[2] = {rows, n}, vshape[1] = {n}, sshape[1] = {rows};
    void *px = random_device(CK_DTYPE_BF16, (size_t)(rows * n));
    void *py = random_device(CK_DTYPE_BF16, (size_t)(rows * n));
    void *pg = random_device(CK_DTYPE_BF16, (size_t)n);
    void *pr = random_device(CK_DTYPE_F32, (size_t)rows);
    CHECK(px && py && pg && pr);
    if (!px || !py || !pg || !pr)
        return;
    ck_tensor x, y, g, rstd;
    CHECK_OK(ck_tensor_init(&x, px, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, py, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&g, pg, CK_DTYPE_BF16, 1, vshape, NULL));
    CHECK_OK(ck_tensor_init(&rstd, pr, CK_DTYPE_F32, 1, sshape, NULL));
    unsetenv("CK_NORM_FWD");
    unsetenv("CK_NORM_CLUSTER");
    int instances = 0;
    for (int kind = 0; kind <= 1; ++kind) {
        const char *op = kind == 0 ? "layernorm" : "rmsnorm";
        char texts[64][32];
        int nt = 0;
        snprintf(texts[nt++], 32, "auto");
        for (int gg = 1; gg <= 1024; gg *= 4)
            for (int raw = 0; raw <= 1; ++raw)
                for (int b = 128; b <= (gg <= 32 ? 256 : 128); b *= 2)
                    snprintf(texts[nt++], 32, "fwd,%d,%d,%d,1", gg, raw, gg > 32 ? gg : b);
        for (int c = 2; c <= 8; c *= 2)
            snprintf(texts[nt++], 32, "fwd,%d,1,%d,%d", 128, 128, c);
        /* layernorm: every text; RMSNorm: "auto" and the cluster shapes; rstd asked or not
         * for "auto" (another parameter of the same instance) */
        for (int i = 0; i < nt; ++i) {
            if (kind == 1 && i != 0 && strncmp(texts[i] + strlen(texts[i]) - 2, ",1", 2) == 0)
                continue;
            for (int with_rstd = 0; with_rstd <= (i == 0); ++with_rstd) {
                ck_norm_forward_desc d;
                memset(&d, 0, sizeof d);
                d.kind = (ck_norm_kind)kind;
                d.epsilon = 1e-5f;
                d.x = &x;
                d.y = &y;
                d.gamma = &g;
                d.rstd = with_rstd ? &rstd : NULL;
                CHECK_OK(ck_op_force_instance(ctx, op, texts[i]));
                ck_norm_instance in;
                char problem[128];
                CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
                if ((int64_t)in.iters * in.vec > 64)
                    continue; /* not worth compiling (ck tune skips it too) */
                ck_norm_fwd_problem p;
                CHECK_OK(ck_norm_fwd_problem_of(&d, &p));
                char *src = ck_norm_fwd_source(p.kind, p.n, &in, p.xt, p.yt, p.gt, p.bt, p.rt, p.ot,
                                               p.st, p.want_mean, p.want_rstd);
                int before = ck_context_kernel_count(ctx);
                ck_status st = ck_norm_forward(ctx, &d);
                CHECK_MSG(st == CK_SUCCESS, "%s %s: %s", op, texts[i], ck_last_error());
                expect_count(before, src, 1, texts[i]);
                instances++;
            }
        }
        CHECK_OK(ck_op_force_instance(ctx, op, NULL));
    }
    printf("  norm forward: %d runs, %d distinct kernels\n", instances, nseen);
    CHECK(nseen >= 10);
    forget_sources();
    ck_device *dev = ck_context_device(ctx);
    ck_free(dev, px), ck_free(dev, py), ck_free(dev, pg), ck_free(dev, pr);
}

/* ---- layernorm / RMSNorm backward: the developer switch's instances (vectors per thread,
 * persistent grid), with and without dgamma (two kernels: the rows and the combine) */
static void test_norm_backward(void)
{
    const int64_t rows = 8, n = 512;
    int64_t shape[2] = {rows, n}, vshape[1] = {n}, sshape[1] = {rows};
    void *pdy = random_device(CK_DTYPE_F16, (size_t)(rows * n));
    void *px = random_device(CK_DTYPE_F16, (size_t)(rows * n));
    void *pdx = random_device(CK_DTYPE_F16, (size_t)(rows * n));
    void *pg = random_device(CK_DTYPE_F32, (size_t)n);
    void *pdg = random_device(CK_DTYPE_F32, (size_t)n);
    void *pm = random_device(CK_DTYPE_F32, (size_t)rows);
    void *pr = random_device(CK_DTYPE_F32, (size_t)rows);
    CHECK(pdy && px && pdx && pg && pdg && pm && pr);
    if (!pdy || !px || !pdx || !pg || !pdg || !pm || !pr)
        return;
    ck_tensor dy, x, dx, g, dg, mean, rstd;
    CHECK_OK(ck_tensor_init(&dy, pdy, CK_DTYPE_F16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&x, px, CK_DTYPE_F16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&dx, pdx, CK_DTYPE_F16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&g, pg, CK_DTYPE_F32, 1, vshape, NULL));
    CHECK_OK(ck_tensor_init(&dg, pdg, CK_DTYPE_F32, 1, vshape, NULL));
    CHECK_OK(ck_tensor_init(&mean, pm, CK_DTYPE_F32, 1, sshape, NULL));
    CHECK_OK(ck_tensor_init(&rstd, pr, CK_DTYPE_F32, 1, sshape, NULL));
    int runs = 0;
    for (int vpt = 1; vpt <= 4; vpt *= 4)
        for (int persistent = 0; persistent <= 1; ++persistent)
            for (int kind = 0; kind <= 0; ++kind) /* layernorm (RMSNorm: the same key) */
                for (int want = 0; want <= 1; ++want) {
                    char env[32];
                    snprintf(env, sizeof env, "%d,%d", vpt, persistent);
                    setenv("CK_NORM_INSTANCE", env, 1);
                    ck_norm_backward_desc d;
                    memset(&d, 0, sizeof d);
                    d.kind = (ck_norm_kind)kind;
                    d.dy = &dy;
                    d.x = &x;
                    d.gamma = &g;
                    d.mean = kind == 0 ? &mean : NULL;
                    d.rstd = &rstd;
                    d.dx = &dx;
                    d.dgamma = want ? &dg : NULL;
                    ck_norm_bwd_problem p;
                    CHECK_OK(ck_norm_bwd_problem_of(&d, &p));
                    ck_norm_instance in;
                    ck_norm_pick_bwd(p.n, p.vec, p.rows, ck_op_props(ctx), p.want_part,
                                     (ck_dtype_get((ck_dtype)p.xt)->storage_bits +
                                      ck_dtype_get((ck_dtype)p.dyt)->storage_bits) /
                                         8,
                                     &in);
                    char *src = ck_norm_bwd_source(p.kind, p.n, &in, p.dyt, p.xt, p.gt, p.dxt,
                                                   p.dgt, p.dbt);
                    int before = ck_context_kernel_count(ctx);
                    ck_status st = ck_norm_backward(ctx, &d);
                    CHECK_MSG(st == CK_SUCCESS, "backward %s: %s", env, ck_last_error());
                    expect_count(before, src, want ? 2 : 1, env);
                    runs++;
                }
    unsetenv("CK_NORM_INSTANCE");
    printf("  norm backward: %d runs, %d distinct sources\n", runs, nseen);
    CHECK(nseen >= 4);
    forget_sources();
    ck_device *dev = ck_context_device(ctx);
    ck_free(dev, pdy), ck_free(dev, px), ck_free(dev, pdx), ck_free(dev, pg);
    ck_free(dev, pdg), ck_free(dev, pm), ck_free(dev, pr);
}

/* ---- reduce: the row instance (16-, 8-, 4-byte vectors and strided rows, a warp or a block per
 * row, split over parts with the combine folded into the last block or (CK_REDUCE_PREV=1, and
 * split instances of several rows a block) a combine kernel) and the column instance, per op */
static void test_reduce(void)
{
    struct {
        int rank;
        int64_t shape[3];
        int axis;
        ck_dtype t;
    } cases[] = {
        {2, {64, 256, 1}, 1, CK_DTYPE_BF16},  /* rows, 16-byte vectors */
        {2, {3, 100002, 1}, 1, CK_DTYPE_F32}, /* few long rows: split parts + combine */
        {2, {256, 64, 1}, 0, CK_DTYPE_F32},   /* column instance */
        {3, {4, 30, 6}, 1, CK_DTYPE_F16},     /* strided rows */
        {2, {16, 6, 1}, 1, CK_DTYPE_F16},     /* 4-byte vectors */
    };
    ck_reduce_op ops[] = {CK_REDUCE_SUM, CK_REDUCE_ARGMAX};
    int runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        int64_t count = 1, yshape[3];
        int yr = 0;
        for (int d = 0; d < cases[c].rank; ++d) {
            count *= cases[c].shape[d];
            if (d != cases[c].axis)
                yshape[yr++] = cases[c].shape[d];
        }
        void *px = random_device(cases[c].t, (size_t)count);
        void *py = random_device(CK_DTYPE_F32, (size_t)(count / cases[c].shape[cases[c].axis]));
        CHECK(px && py);
        if (!px || !py)
            return;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
            ck_tensor x, y;
            ck_dtype yt = ops[o] == CK_REDUCE_ARGMAX ? CK_DTYPE_I32 : CK_DTYPE_F32;
            CHECK_OK(ck_tensor_init(&x, px, cases[c].t, cases[c].rank, cases[c].shape, NULL));
            CHECK_OK(ck_tensor_init(&y, py, yt, yr, yshape, NULL));
            int axes[1] = {cases[c].axis};
            ck_reduce_plan_info info;
            CHECK_OK(ck_reduce_plan(ctx, ops[o], &x, axes, 1, &y, NULL, &info));
            char *src = NULL, *combine = NULL;
            CHECK_OK(ck_reduce_source(ctx, ops[o], &x, axes, 1, &y, NULL, 0, &src));
            if (info.parts > 1 && !info.fold) /* a combine kernel */
                CHECK_OK(ck_reduce_source(ctx, ops[o], &x, axes, 1, &y, NULL, 1, &combine));
            int before = ck_context_kernel_count(ctx);
            ck_status st = ck_reduce(ctx, ops[o], &x, axes, 1, &y, NULL);
            CHECK_MSG(st == CK_SUCCESS, "reduce case %zu op %zu: %s", c, o, ck_last_error());
            if (combine) { /* two sources: count them one after the other */
                int fresh = is_new(combine);
                free(combine);
                before += fresh;
            }
            char what[64];
            snprintf(what, sizeof what, "reduce case %zu op %s", c, ck_reduce_op_name(ops[o]));
            expect_count(before, src, 1, what);
            runs++;
        }
        ck_free(ck_context_device(ctx), px);
        ck_free(ck_context_device(ctx), py);
    }
    /* instances a tuning entry can force (the split is an argument, the shape a parameter) */
    {
        int64_t shape[2] = {64, 4096}, yshape[1] = {64};
        void *px = random_device(CK_DTYPE_BF16, 64 * 4096), *py = random_device(CK_DTYPE_F32, 64);
        CHECK(px && py);
        const char *texts[] = {"row,8,32,0", "row,64,1,4", "row,64,1,1", "row,256,1,1"};
        for (size_t i = 0; px && py && i < sizeof texts / sizeof texts[0]; ++i) {
            ck_tensor x, y;
            CHECK_OK(ck_tensor_init(&x, px, CK_DTYPE_BF16, 2, shape, NULL));
            CHECK_OK(ck_tensor_init(&y, py, CK_DTYPE_F32, 1, yshape, NULL));
            int axes[1] = {1};
            CHECK_OK(ck_op_force_instance(ctx, "reduce", texts[i]));
            ck_reduce_plan_info info;
            CHECK_OK(ck_reduce_plan(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL, &info));
            char *src = NULL, *combine = NULL;
            CHECK_OK(ck_reduce_source(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL, 0, &src));
            if (info.parts > 1 && !info.fold) /* a combine kernel */
                CHECK_OK(ck_reduce_source(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL, 1, &combine));
            int before = ck_context_kernel_count(ctx);
            CHECK_OK(ck_reduce(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL));
            if (combine) {
                before += is_new(combine);
                free(combine);
            }
            expect_count(before, src, 1, texts[i]);
            runs++;
        }
        CHECK_OK(ck_op_force_instance(ctx, "reduce", NULL));
        ck_free(ck_context_device(ctx), px);
        ck_free(ck_context_device(ctx), py);
    }
    printf("  reduce: %d runs, %d distinct sources\n", runs, nseen);
    CHECK(nseen >= 10);
    forget_sources();
}

/* ---- permute: every tile shape and grid `ck tune permute` tries, and the gather copies */
static void test_permute(void)
{
    int64_t sshape[2] = {96, 160}, dshape[2] = {160, 96};
    void *ps = random_device(CK_DTYPE_BF16, 96 * 160);
    void *pd = random_device(CK_DTYPE_BF16, 96 * 160);
    CHECK(ps && pd);
    if (!ps || !pd)
        return;
    ck_tensor s, t;
    CHECK_OK(ck_tensor_init(&s, ps, CK_DTYPE_BF16, 2, sshape, NULL));
    CHECK_OK(ck_tensor_init(&t, pd, CK_DTYPE_BF16, 2, dshape, NULL));
    int perm[2] = {1, 0};
    unsetenv("CK_PERMUTE_INSTANCE");
    int runs = 0;
    char text[32];
    for (int gn = 0; gn <= 32; gn = gn ? 2 * gn : 8)
        for (int gm = 8; gm <= 32; gm *= 2)
            for (int tpb = 0; tpb <= 2; ++tpb) {
                if (gn == 0)
                    snprintf(text, sizeof text, "auto");
                else
                    snprintf(text, sizeof text, "%d,%d,%d", gn * 8, gm * 8, tpb);
                CHECK_OK(ck_op_force_instance(ctx, "permute", text));
                ck_perm_plan p;
                CHECK_OK(ck_permute_plan_on(ctx, &t, &s, perm, &p, NULL, 0));
                char *src = NULL;
                const char *name;
                CHECK_OK(ck_permute_source(&p, &src, &name));
                int before = ck_context_kernel_count(ctx);
                ck_status st = ck_permute(ctx, &s, perm, &t);
                CHECK_MSG(st == CK_SUCCESS, "permute %s: %s", text, ck_last_error());
                expect_count(before, src, 1, text);
                runs++;
            }
    CHECK_OK(ck_op_force_instance(ctx, "permute", NULL));
    /* gathers: element and 16-byte vector copies of a rank-3 permutation */
    int64_t s3[3] = {4, 6, 16}, d3[3] = {6, 4, 16};
    int perm3[3] = {1, 0, 2};
    for (int vec = 0; vec <= 1; ++vec) {
        int64_t s3b[3] = {4, 6, vec ? 16 : 3}, d3b[3] = {6, 4, vec ? 16 : 3};
        CHECK_OK(ck_tensor_init(&s, ps, CK_DTYPE_BF16, 3, vec ? s3 : s3b, NULL));
        CHECK_OK(ck_tensor_init(&t, pd, CK_DTYPE_BF16, 3, vec ? d3 : d3b, NULL));
        ck_perm_plan p;
        CHECK_OK(ck_permute_plan_on(ctx, &t, &s, perm3, &p, NULL, 0));
        CHECK(p.kind == CK_PERM_GATHER);
        char *src = NULL;
        const char *name;
        CHECK_OK(ck_permute_source(&p, &src, &name));
        int before = ck_context_kernel_count(ctx);
        CHECK_OK(ck_permute(ctx, &s, perm3, &t));
        expect_count(before, src, 1, vec ? "gather vec" : "gather");
        runs++;
    }
    printf("  permute: %d runs, %d distinct sources\n", runs, nseen);
    CHECK(nseen >= 8); /* 6 bf16 tile shapes (tiles per block is an argument), 2 gathers */
    forget_sources();
    ck_free(ck_context_device(ctx), ps);
    ck_free(ck_context_device(ctx), pd);
}

/* ---- elementwise: the vector instances `ck tune elementwise` tries; the source depends on the
 * packs per thread, the block and the stores (the grid's waves are an argument) */
static void test_elementwise(void)
{
    int64_t shape[2] = {16, 512};
    void *pa = random_device(CK_DTYPE_BF16, 16 * 512), *pb = random_device(CK_DTYPE_BF16, 16 * 512);
    void *py = random_device(CK_DTYPE_BF16, 16 * 512);
    CHECK(pa && pb && py);
    if (!pa || !pb || !py)
        return;
    ck_tensor in[2], y;
    CHECK_OK(ck_tensor_init(&in[0], pa, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&in[1], pb, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, py, CK_DTYPE_BF16, 2, shape, NULL));
    ck_ew_program prog;
    CHECK_OK(ck_ew_parse("silu(x0) * x1", &prog));
    unsetenv("CK_EW_INSTANCE");
    int runs = 0;
    char text[32];
    for (int cs = 1; cs <= 1; ++cs) /* streaming stores (plain ones: test_elementwise_tuning) */
        for (int u = 1; u <= 8; u *= 8)
            for (int b = 128; b <= 1024; b *= 4)
                for (int w = 0; w <= 8; w += 8) {
                    snprintf(text, sizeof text, "%d,%d,%d,%d", u, b, w, cs);
                    CHECK_OK(ck_op_force_instance(ctx, "elementwise", text));
                    ew_plan_out plan;
                    CHECK_OK(ck_ew_plan(ctx, EW_CALL_EXPR, &y, in, 2, NULL, &prog, &plan));
                    CHECK_EQ_STR(plan.instance, text);
                    char shape_of[32]; /* what the source depends on */
                    snprintf(shape_of, sizeof shape_of, "%d,%d,%d", u, b, cs);
                    int before = ck_context_kernel_count(ctx);
                    CHECK_OK(ck_elementwise(ctx, &prog, in, 2, &y));
                    expect_count(before, strdup(shape_of), 1, text);
                    runs++;
                }
    CHECK_OK(ck_op_force_instance(ctx, "elementwise", NULL));
    printf("  elementwise: %d runs, %d distinct sources\n", runs, nseen);
    CHECK_EQ_INT(nseen, 4);
    forget_sources();
    ck_free(ck_context_device(ctx), pa);
    ck_free(ck_context_device(ctx), pb);
    ck_free(ck_context_device(ctx), py);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    RUN_TEST(test_norm_forward);
    RUN_TEST(test_norm_backward);
    RUN_TEST(test_reduce);
    RUN_TEST(test_permute);
    RUN_TEST(test_elementwise);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
