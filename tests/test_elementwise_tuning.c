/*
 * The tuning table steers the elementwise vector instance: an entry stored for a problem (as
 * `ck tune elementwise` stores it) is the instance a new context plans, the developer switch
 * CK_EW_INSTANCE wins over it, another problem keeps the heuristic, and every instance the
 * tuner tries computes relu(x0 * x1 + x2) within a rounding of the double reference.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/elementwise/ew_internal.h"
#include "test.h"

enum { ROWS = 48, COLS = 264, N = ROWS * COLS };

static double bf16_value(uint16_t c)
{
    uint32_t u = (uint32_t)c << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_table_and_instances(void)
{
    char path[] = "/tmp/ck-test-ew-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_EW_INSTANCE");
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    ck_device *dev = ck_context_device(ctx);
    uint64_t rng = 77;
    uint16_t *h[3], *out = malloc(N * 2);
    void *d[4] = {0};
    int64_t shape[2] = {ROWS, COLS};
    ck_tensor in[3], y;
    for (int k = 0; k < 3; ++k) {
        h[k] = malloc(N * 2);
        for (int i = 0; i < N; ++i) {
            double v = ((double)(ckt_rand64(&rng) >> 11) * 0x1p-53 - 0.5) * 6.0;
            uint64_t c = 0;
            ck_convert_from_f64(CK_DTYPE_BF16, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                &c);
            h[k][i] = (uint16_t)c;
        }
        CHECK_OK(ck_malloc(dev, N * 2, &d[k]));
        CHECK_OK(ck_memcpy_h2d(dev, d[k], h[k], N * 2, NULL));
        CHECK_OK(ck_tensor_init(&in[k], d[k], CK_DTYPE_BF16, 2, shape, NULL));
    }
    CHECK_OK(ck_malloc(dev, N * 2, &d[3]));
    CHECK_OK(ck_tensor_init(&y, d[3], CK_DTYPE_BF16, 2, shape, NULL));
    ck_ew_program prog;
    CHECK_OK(ck_ew_parse("relu(x0 * x1 + x2)", &prog));

    /* the heuristic's instance, then a table entry that differs */
    ew_plan_out plan;
    CHECK_OK(ck_ew_plan(ctx, EW_CALL_EXPR, &y, in, 3, NULL, &prog, &plan));
    CHECK(plan.vec == 1);
    CHECK_EQ_STR(plan.instance, "4,256,0,1");
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "elementwise");
    ck_op_tuning_device(ctx, e.device, sizeof e.device);
    snprintf(e.problem, sizeof e.problem, "%s", plan.problem);
    snprintf(e.instance, sizeof e.instance, "2,128,0,0");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context *ctx2 = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx2));
    CHECK_OK(ck_ew_plan(ctx2, EW_CALL_EXPR, &y, in, 3, NULL, &prog, &plan));
    CHECK_EQ_STR(plan.instance, "2,128,0,0");
    setenv("CK_EW_INSTANCE", "8,512,0,1", 1); /* a developer switch wins over the table */
    CHECK_OK(ck_ew_plan(ctx2, EW_CALL_EXPR, &y, in, 3, NULL, &prog, &plan));
    CHECK_EQ_STR(plan.instance, "8,512,0,1");
    unsetenv("CK_EW_INSTANCE");
    /* another problem (two inputs): the heuristic's */
    ck_ew_program prog2;
    CHECK_OK(ck_ew_parse("x0 * x1", &prog2));
    CHECK_OK(ck_ew_plan(ctx2, EW_CALL_EXPR, &y, in, 2, NULL, &prog2, &plan));
    CHECK_EQ_STR(plan.instance, "4,256,0,1");
    ck_context_destroy(ctx2);

    /* every forced instance computes the same function */
    const char *texts[] = {"auto",      "1,128,0,1", "2,1024,0,0",
                           "8,256,0,1", "4,256,8,1", "1,1024,8,0"};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; ++t) {
        CHECK_OK(ck_op_force_instance(ctx, "elementwise", texts[t]));
        CHECK_OK(ck_memset_d8(dev, d[3], 0xff, N * 2, NULL));
        CHECK_OK(ck_elementwise(ctx, &prog, in, 3, &y));
        CHECK_OK(ck_context_synchronize(ctx));
        CHECK_OK(ck_memcpy_d2h(dev, out, d[3], N * 2, NULL));
        int bad = 0;
        for (int i = 0; i < N; ++i) {
            double a = bf16_value(h[0][i]), b = bf16_value(h[1][i]), c = bf16_value(h[2][i]);
            double want = fmax(a * b + c, 0.0), got = bf16_value(out[i]);
            if (!(fabs(got - want) <= 0x1p-8 * fabs(want) + 1e-30) && bad++ < 3)
                fprintf(stderr, "%s: y[%d] = %g, want %g\n", texts[t], i, got, want);
        }
        CHECK_MSG(bad == 0, "instance %s: %d mismatches", texts[t], bad);
    }
    CHECK_OK(ck_op_force_instance(ctx, "elementwise", NULL));
    for (int k = 0; k < 4; ++k)
        ck_free(dev, d[k]);
    for (int k = 0; k < 3; ++k)
        free(h[k]);
    free(out);
    ck_context_destroy(ctx);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

int main(void)
{
    RUN_TEST(test_table_and_instances);
    return CK_TEST_REPORT();
}
