/*
 * The tuning table steers ck_reduce's policy: an entry stored for a problem (as `ck tune reduce`
 * stores it) is the instance a new context plans, another problem keeps the heuristic's, and
 * every instance the tuner tries (row: lane groups, blocks, splits; column: shapes, splits)
 * computes every output within the reference's bound (tests/reduce_harness.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "reduce_harness.h"

static void test_table_entry_is_used(void)
{
    char path[] = "/tmp/ck-test-reduce-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    int64_t shape[2] = {6, 20000}, yshape[1] = {6};
    ck_tensor x, y;
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, CK_DTYPE_F32, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(4096 + 6 * 20000 * 4), CK_DTYPE_F32, 1, yshape,
                            NULL));
    int axes[1] = {1};
    rd_plan p;
    rd_canon c;
    CHECK_OK(ck_reduce_make_plan(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL, &p, &c));
    char name[64];
    ck_reduce_instance_name(&p, name, sizeof name);
    CHECK(strcmp(name, "row,128,1,3") != 0); /* the entry below differs from the heuristic */
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "reduce");
    ck_op_tuning_device(ctx, e.device, sizeof e.device);
    ck_reduce_problem_key(&p, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "row,128,1,3");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context_destroy(ctx);
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    CHECK_OK(ck_reduce_make_plan(ctx, CK_REDUCE_SUM, &x, axes, 1, &y, NULL, &p, &c));
    ck_reduce_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "row,128,1,3");
    CHECK_OK(ck_reduce_make_plan(ctx, CK_REDUCE_MAX, &x, axes, 1, &y, NULL, &p, &c));
    ck_reduce_instance_name(&p, name, sizeof name);
    CHECK(strcmp(name, "row,128,1,3") != 0); /* another problem: the heuristic's */
    ck_context_destroy(ctx);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

static void test_forced_instances(void)
{
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    int64_t rows[2] = {5, 3000}, cols[2] = {700, 96};
    int a1[1] = {1}, a0[1] = {0};
    struct {
        rt_problem p;
        const char *inst;
    } cs[] = {
        {rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, rows, 1, a1), "row,8,32,0"},
        {rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, rows, 1, a1), "row,64,1,7"},
        {rt_make(CK_DTYPE_F32, CK_DTYPE_I32, CK_REDUCE_ARGMAX, 2, rows, 1, a1), "row,256,1,4"},
        {rt_make(CK_DTYPE_F16, CK_DTYPE_F32, CK_REDUCE_NORM2, 2, rows, 1, a1), "row,32,1,16"},
        {rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_SUM, 2, cols, 1, a0), "col,8,16,0"},
        {rt_make(CK_DTYPE_F32, CK_DTYPE_I32, CK_REDUCE_ARGMIN, 2, cols, 1, a0), "col,16,4,5"},
        {rt_make(CK_DTYPE_BF16, CK_DTYPE_F32, CK_REDUCE_MAX, 2, cols, 1, a0), "col,32,8,1"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i) {
        CHECK_OK(ck_op_force_instance(ctx, "reduce", cs[i].inst));
        long bad = rt_run(ctx, &cs[i].p, 1000 + i, NULL, NULL);
        CHECK_MSG(bad == 0, "instance %s: %ld mismatches", cs[i].inst, bad);
        /* the plan is the forced instance */
        ck_tensor x, y;
        int64_t ys[1] = {cs[i].p.shape[1 - cs[i].p.axes[0]]};
        CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, cs[i].p.xt, 2, cs[i].p.shape, NULL));
        CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(1 << 24), cs[i].p.yt, 1, ys, NULL));
        rd_plan p;
        rd_canon c;
        CHECK_OK(ck_reduce_make_plan(ctx, cs[i].p.op, &x, cs[i].p.axes, 1, &y, NULL, &p, &c));
        char name[64];
        ck_reduce_instance_name(&p, name, sizeof name);
        CHECK_MSG(strncmp(name, cs[i].inst, 4) == 0 &&
                      (cs[i].inst[strlen(cs[i].inst) - 1] == '0' || strcmp(name, cs[i].inst) == 0),
                  "forced %s, planned %s", cs[i].inst, name);
    }
    CHECK_OK(ck_op_force_instance(ctx, "reduce", NULL));
    ck_context_destroy(ctx);
}

int main(void)
{
    RUN_TEST(test_table_entry_is_used);
    RUN_TEST(test_forced_instances);
    return CK_TEST_REPORT();
}
