/* ck_gemm_tune and the policy: the tuned instance is stored under this device and problem, then
 * listed first and chosen by plans; an entry naming another candidate moves that one first; an
 * entry naming an instance that is no candidate is ignored. Emulator, small shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/gemm.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

static int progress_calls;

static void progress(void *user, int index, int count, const ck_gemm_candidate *c, double ms)
{
    (void)user;
    (void)c;
    CHECK(index >= 0 && index < count);
    CHECK(ms > 0);
    ++progress_calls;
}

static void test_tune_then_plan_uses_the_winner(ck_context *ctx)
{
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 40, p.n = 24, p.k = 32;
    p.b.order = CK_GEMM_COL_MAJOR;
    size_t ab = (size_t)(p.m * p.k) * 2, bb = (size_t)(p.k * p.n) * 2, db = (size_t)(p.m * p.n) * 2;
    ck_device *dev = ck_context_device(ctx);
    void *a = NULL, *b = NULL, *d = NULL;
    CHECK_OK(ck_malloc(dev, ab, &a));
    CHECK_OK(ck_malloc(dev, bb, &b));
    CHECK_OK(ck_malloc(dev, db, &d));
    CHECK_OK(ck_memset_d8(dev, a, 0x3c, ab, NULL)); /* bf16 0x3c3c ~ 0.0115 */
    CHECK_OK(ck_memset_d8(dev, b, 0x3c, bb, NULL));
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = a, args.b = b, args.d = d;
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES], best;
    int n = 0;
    CHECK_OK(ck_gemm_candidates(ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(n >= 3);
    for (int i = 0; i < n; ++i)
        CHECK(!cand[i].tuned);
    double ms = 0;
    CHECK_OK(ck_gemm_tune(ctx, &p, &args, 1, progress, NULL, &best, &ms));
    CHECK_EQ_INT(progress_calls, n);
    CHECK(ms > 0);
    CHECK_OK(ck_gemm_candidates(ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK(cand[0].tuned);
    CHECK_EQ_STR(cand[0].name, best.name);
    ck_gemm_plan *plan = NULL;
    ck_gemm_candidate chosen;
    CHECK_OK(ck_gemm_plan_create(ctx, &p, -1, &plan));
    CHECK_OK(ck_gemm_plan_instance(plan, &chosen));
    CHECK_EQ_STR(chosen.name, best.name);
    ck_gemm_plan_destroy(plan);

    /* an entry naming the last candidate moves it first */
    const char *last = cand[n - 1].name;
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "gemm");
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    ck_gemm_tuning_device_key(ck_op_props(ctx), e.device, sizeof e.device);
    ck_gemm_tuning_problem_key(&prob, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "%s", last);
    e.ms = 1;
    CHECK_OK(ck_tuning_store(&e));
    char want[96];
    snprintf(want, sizeof want, "%s", last);
    CHECK_OK(ck_gemm_candidates(ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    CHECK_EQ_STR(cand[0].name, want);
    CHECK(cand[0].tuned);

    /* a stale entry (no such candidate) is ignored: the heuristic decides */
    snprintf(e.instance, sizeof e.instance, "sm99.no-such-instance");
    CHECK_OK(ck_tuning_store(&e));
    CHECK_OK(ck_gemm_candidates(ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &n));
    for (int i = 0; i < n; ++i)
        CHECK(!cand[i].tuned);

    /* bad arguments */
    CHECK_STATUS(ck_gemm_tune(ctx, &p, &args, 0, NULL, NULL, NULL, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_gemm_tune(ctx, NULL, &args, 1, NULL, NULL, NULL, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    p.k = 0;
    CHECK(ck_gemm_tune(ctx, &p, &args, 1, NULL, NULL, NULL, NULL) != CK_SUCCESS);
    ck_free(dev, a);
    ck_free(dev, b);
    ck_free(dev, d);
}

int main(void)
{
    char path[] = "/tmp/ck-gemm-tune-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    ck_context *ctx = NULL;
    if (ck_context_create(CK_BACKEND_HOST, 0, &ctx) != CK_SUCCESS) {
        printf("no emulator: %s\n", ck_last_error());
        unlink(path);
        return 1;
    }
    test_tune_then_plan_uses_the_winner(ctx);
    printf("%-50s %s\n", "test_tune_then_plan_uses_the_winner", ckt_fail_ ? "FAILED" : "ok");
    ck_context_destroy(ctx);
    unlink(path);
    return CK_TEST_REPORT();
}
