/*
 * The tuning table steers the transpose's tile shape: an entry stored for the problem (as
 * `ck tune permute` stores it) is the tile a new context plans; CK_PERMUTE_INSTANCE wins over it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/permute/permute_internal.h"
#include "test.h"

static void test_table_entry_is_used(void)
{
    char path[] = "/tmp/ck-test-permute-tuning-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_PERMUTE_INSTANCE");
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    int64_t ss[2] = {256, 512}, ds[2] = {512, 256};
    const int perm[2] = {1, 0};
    ck_tensor src, dst;
    /* the plan needs only the descriptions (aligned addresses; nothing is launched) */
    CHECK_OK(ck_tensor_init(&src, (void *)(uintptr_t)4096, CK_DTYPE_BF16, 2, ss, NULL));
    CHECK_OK(ck_tensor_init(&dst, (void *)(uintptr_t)(4096 + 262144), CK_DTYPE_BF16, 2, ds, NULL));
    ck_perm_plan p;
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    CHECK_OK(ck_permute_plan_on(ctx, &dst, &src, perm, &p, e.problem, sizeof e.problem));
    CHECK_EQ_INT(p.kind, CK_PERM_TILE);
    char name[64];
    ck_permute_instance_name(&p, name, sizeof name);
    CHECK(strcmp(name, "64,256,1,1") != 0); /* the heuristic's differs from the entry below */
    snprintf(e.op, sizeof e.op, "permute");
    ck_op_tuning_device(ctx, e.device, sizeof e.device);
    snprintf(e.instance, sizeof e.instance, "64,256,1");
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    ck_context_destroy(ctx);
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    CHECK_OK(ck_permute_plan_on(ctx, &dst, &src, perm, &p, NULL, 0));
    ck_permute_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "64,256,1,1"); /* three fields: bf16's default, the windows */
    setenv("CK_PERMUTE_INSTANCE", "128,128,2", 1); /* a developer switch wins over the table */
    CHECK_OK(ck_permute_plan_on(ctx, &dst, &src, perm, &p, NULL, 0));
    ck_permute_instance_name(&p, name, sizeof name);
    CHECK_EQ_STR(name, "128,128,2,1");
    unsetenv("CK_PERMUTE_INSTANCE");
    ck_context_destroy(ctx);
    unsetenv("CK_TUNING_FILE");
    unlink(path);
}

int main(void)
{
    RUN_TEST(test_table_entry_is_used);
    return CK_TEST_REPORT();
}
