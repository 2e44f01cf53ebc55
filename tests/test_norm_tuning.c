/*
 * The tuning table steers the layernorm/RMSNorm forward's policy: an entry stored for the
 * problem (as `ck tune rmsnorm` stores it) is the instance a new context plans, the developer
 * switch CK_NORM_FWD wins over it, and every forced instance computes the same RMSNorm as the
 * heuristic's (ck tune times only instances that run).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"
#include "test.h"

static void test_table_entry_is_used(void)
{
    char path[] = "/tmp/ck-test-norm-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_NORM_FWD");
    unsetenv("CK_NORM_CLUSTER");
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    int64_t shape[2] = {8, 1024}, gshape[1] = {1024};
    ck_tensor x, y, g;
    /* the plan needs only the descriptions (aligned addresses; nothing is launched) */
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)(4096 + 65536), CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&g, (void *)(uintptr_t)(4096 + 131072), CK_DTYPE_BF16, 1, gshape,
                            NULL));
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_RMSNORM;
    d.epsilon = 1e-5f;
    d.x = &x;
    d.y = &y;
    d.gamma = &g;
    ck_norm_instance in;
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, e.problem, sizeof e.problem));
    CHECK(in.g != 64); /* the heuristic's choice differs from the entry below */
    snprintf(e.op, sizeof e.op, "rmsnorm");
    ck_op_tuning_device(ctx, e.device, sizeof e.device);
    snprintf(e.instance, sizeof e.instance, "fwd,64,0,64,1");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context_destroy(ctx);
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    char problem[128];
    CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
    CHECK_EQ_INT(in.g, 64);
    CHECK_EQ_INT(in.raw, 0);
    char name[64];
    ck_norm_fwd_instance_name(&in, name, sizeof name);
    CHECK_EQ_STR(name, "fwd,64,0,64,1");
    setenv("CK_NORM_FWD", "128", 1); /* a developer switch wins over the table */
    CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
    CHECK_EQ_INT(in.g, 128);
    unsetenv("CK_NORM_FWD");
    /* the layernorm of the same shapes is another problem: the heuristic's choice */
    d.kind = CK_NORM_LAYERNORM;
    CHECK_OK(ck_norm_forward_plan(ctx, &d, &in, problem, sizeof problem));
    CHECK(in.g != 64);
    ck_context_destroy(ctx);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

/* The backward: an entry for the problem ("bwd,VPT,PERSISTENT", op layernorm_bwd) is planned
 * by a new context; CK_NORM_INSTANCE wins over it. */
static void test_backward_entry_is_used(void)
{
    char path[] = "/tmp/ck-test-norm-bwd-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_NORM_INSTANCE");
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    int64_t shape[2] = {8, 1024}, gshape[1] = {1024}, sshape[1] = {8};
    ck_tensor x, dy, dx, g, mean, rstd;
    uintptr_t base = 4096;
    CHECK_OK(ck_tensor_init(&x, (void *)base, CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&dy, (void *)(base + 65536), CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&dx, (void *)(base + 131072), CK_DTYPE_BF16, 2, shape, NULL));
    CHECK_OK(ck_tensor_init(&g, (void *)(base + 196608), CK_DTYPE_F32, 1, gshape, NULL));
    CHECK_OK(ck_tensor_init(&mean, (void *)(base + 204800), CK_DTYPE_F32, 1, sshape, NULL));
    CHECK_OK(ck_tensor_init(&rstd, (void *)(base + 208896), CK_DTYPE_F32, 1, sshape, NULL));
    ck_norm_backward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_LAYERNORM;
    d.dy = &dy;
    d.x = &x;
    d.gamma = &g;
    d.mean = &mean;
    d.rstd = &rstd;
    d.dx = &dx;
    ck_norm_instance in;
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    char name[64];
    CHECK_OK(ck_norm_backward_plan(ctx, &d, &in, name, sizeof name, e.problem, sizeof e.problem));
    CHECK_EQ_STR(name, "bwd,1,1");
    snprintf(e.op, sizeof e.op, "layernorm_bwd");
    ck_op_tuning_device(ctx, e.device, sizeof e.device);
    snprintf(e.instance, sizeof e.instance, "bwd,4,0");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context_destroy(ctx);
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    char problem[128];
    CHECK_OK(ck_norm_backward_plan(ctx, &d, &in, name, sizeof name, problem, sizeof problem));
    CHECK_EQ_STR(name, "bwd,4,0");
    CHECK_EQ_INT(in.g, 32); /* 128 vectors, 4 per thread: a warp per row (1 vector: a block) */
    setenv("CK_NORM_INSTANCE", "2,1", 1); /* a developer switch wins over the table */
    CHECK_OK(ck_norm_backward_plan(ctx, &d, &in, name, sizeof name, problem, sizeof problem));
    CHECK_EQ_STR(name, "bwd,2,1");
    unsetenv("CK_NORM_INSTANCE");
    d.kind = CK_NORM_RMSNORM; /* another problem: the heuristic's */
    d.mean = NULL;
    CHECK_OK(ck_norm_backward_plan(ctx, &d, &in, name, sizeof name, problem, sizeof problem));
    CHECK_EQ_STR(name, "bwd,1,1");
    ck_context_destroy(ctx);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

int main(void)
{
    RUN_TEST(test_table_entry_is_used);
    RUN_TEST(test_backward_entry_is_used);
    return CK_TEST_REPORT();
}
