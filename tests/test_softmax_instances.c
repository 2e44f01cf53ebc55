/*
 * The softmax kernel cache key separates every instance the policy can choose: for one problem
 * (bf16 rows of 4096), each instance forced through the developer switches (register shapes of
 * a warp, a block or a cluster per row, the raw 16-bit cache or not, one or two reductions,
 * the launch bounds' blocks per SM, staged shapes) builds a kernel of its own
 * (ck_context_kernel_count grows by one), the same instance again builds none, and every
 * instance computes a softmax (each row sums to 1). And the tuning table steers the policy: an
 * entry stored for the problem (as `ck tune softmax` stores it) is the instance a new context
 * plans, the developer switches win over it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <stdint.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/softmax/softmax_plan.h"
#include "test.h"

static ck_context *ctx;

/* The developer switches the policy reads (docs/ops-softmax.md). */
typedef struct forced {
    const char *variant, *instance, *raw, *red, *minb;
} forced;

static void set(const char *name, const char *v)
{
    if (v)
        setenv(name, v, 1);
    else
        unsetenv(name);
}

static void force(const forced *f)
{
    set("CK_SOFTMAX_VARIANT", f->variant);
    set("CK_SOFTMAX_INSTANCE", f->instance);
    set("CK_SOFTMAX_RAW", f->raw);
    set("CK_SOFTMAX_RED", f->red);
    set("CK_SOFTMAX_MINB", f->minb);
}

static void test_instances_have_own_kernels(void)
{
    const int64_t rows = 4, n = 4096;
    ck_device *dev = ck_context_device(ctx);
    size_t bytes = (size_t)(rows * n) * 2;
    uint16_t *h = malloc(bytes);
    for (int64_t i = 0; i < rows * n; ++i)
        h[i] = (uint16_t)(0x3f80u + (uint16_t)(i % 97)); /* bf16 values in [1, 2) */
    void *dx = NULL, *dy = NULL;
    CHECK_OK(ck_malloc(dev, bytes, &dx));
    CHECK_OK(ck_malloc(dev, bytes, &dy));
    CHECK_OK(ck_memcpy_h2d(dev, dx, h, bytes, NULL));
    int64_t shape[2] = {rows, n};
    ck_tensor x, y;
    CHECK_OK(ck_tensor_init(&x, dx, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, dy, CK_DTYPE_BF16, 2, shape, NULL));
    static const forced cases[] = {
        {NULL, NULL, NULL, NULL, NULL},         /* the default (256 threads, f32 cache) */
        {"regs", "32,1,2", NULL, NULL, NULL},   /* a warp per row, two rows per block */
        {"regs", "32,1,4", NULL, NULL, NULL},   /* four rows per block */
        {"regs", "64,1,1", NULL, NULL, NULL},   /* a block per row */
        {"regs", "128,1,1", NULL, NULL, NULL},  /* (raw 16-bit cache: more than 16 values) */
        {"regs", "128,1,1", "0", NULL, NULL},   /* f32 cache */
        {"regs", "256,1,1", "1", NULL, NULL},   /* raw forced */
        {"regs", "128,1,1", "1", "pair", NULL}, /* one reduction of (m, l) pairs */
        {"regs", "128,1,1", "1", NULL, "3"},    /* launch bounds: 3 blocks per SM */
        {"regs", "64,2,1", NULL, NULL, NULL},   /* clusters of 2 */
        {"regs", "64,4,1", NULL, NULL, NULL},   /* clusters of 4 */
        {"regs", "64,4,1", NULL, "pair", NULL},
        {"staged,256,1,1,0", NULL, NULL, NULL, NULL},
        {"staged,256,1,2,0", NULL, NULL, NULL, NULL},
        {"staged,128,2,2,0", NULL, NULL, NULL, NULL},
        {"staged,128,2,2,2", NULL, NULL, NULL, NULL},
    };
    const int count = (int)(sizeof cases / sizeof cases[0]);
    uint16_t *out = malloc(bytes);
    for (int i = 0; i < count; ++i) {
        force(&cases[i]);
        int before = ck_context_kernel_count(ctx);
        CHECK_OK(ck_softmax(ctx, &x, &y, NULL));
        int built = ck_context_kernel_count(ctx) - before;
        CHECK_MSG(built == 1, "case %d (%s / %s / raw %s / red %s / minb %s) built %d kernels", i,
                  cases[i].variant ? cases[i].variant : "-",
                  cases[i].instance ? cases[i].instance : "-", cases[i].raw ? cases[i].raw : "-",
                  cases[i].red ? cases[i].red : "-", cases[i].minb ? cases[i].minb : "-", built);
        before = ck_context_kernel_count(ctx);
        CHECK_OK(ck_softmax(ctx, &x, &y, NULL));
        CHECK_EQ_INT(ck_context_kernel_count(ctx) - before, 0);
        CHECK_OK(ck_context_synchronize(ctx));
        CHECK_OK(ck_memcpy_d2h(dev, out, dy, bytes, NULL));
        for (int64_t r = 0; r < rows; ++r) {
            double s = 0;
            for (int64_t j = 0; j < n; ++j) {
                float f;
                uint32_t u = (uint32_t)out[r * n + j] << 16;
                memcpy(&f, &u, 4);
                s += f;
            }
            CHECK_MSG(fabs(s - 1.0) < 0.02, "case %d row %lld sums to %g", i, (long long)r, s);
        }
    }
    force(&(forced){NULL, NULL, NULL, NULL, NULL});
    free(out);
    free(h);
    ck_free(dev, dx);
    ck_free(dev, dy);
}

static void test_tuning_table_entry_is_used(void)
{
    char path[] = "/tmp/ck-test-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    force(&(forced){NULL, NULL, NULL, NULL, NULL});
    ck_context *c2 = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &c2));
    int64_t shape[2] = {8, 2048};
    ck_tensor x, y;
    /* the plan needs only the description (16-byte aligned addresses, nothing is launched) */
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(4096 + 65536), CK_DTYPE_BF16, 2, shape, NULL));
    smx_plan p;
    int64_t rows = 0;
    CHECK_OK(ck_smx_plan_of(c2, &x, &y, NULL, &p, &rows));
    CHECK(p.g != 64); /* the heuristic's choice differs from the entry below */
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "softmax");
    ck_op_tuning_device(c2, e.device, sizeof e.device);
    ck_smx_problem_key(&p, rows, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "regs,64,1,1,-1,-1,0");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context_destroy(c2);
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &c2));
    CHECK_OK(ck_smx_plan_of(c2, &x, &y, NULL, &p, &rows));
    CHECK_EQ_INT(p.g, 64);
    CHECK_EQ_INT(p.kind, 0);
    setenv("CK_SOFTMAX_INSTANCE", "128,1,1", 1); /* a developer switch wins over the table */
    CHECK_OK(ck_smx_plan_of(c2, &x, &y, NULL, &p, &rows));
    CHECK_EQ_INT(p.g, 128);
    unsetenv("CK_SOFTMAX_INSTANCE");
    ck_context_destroy(c2);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    if (!ctx)
        return 1;
    RUN_TEST(test_instances_have_own_kernels);
    RUN_TEST(test_tuning_table_entry_is_used);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
