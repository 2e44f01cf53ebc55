/* ck_conv_tune and the conv plan's use of the tuning table, on the emulator with tiny shapes
 * (a forward, a backward-weight and two depthwise problems): tuning stores an entry under
 * ("conv", the device, the problem's key) naming the fastest candidate, and the next plan runs
 * that instance; a forged entry naming another candidate is honoured; an entry the plan cannot
 * take (an unknown instance, another route's text) falls back to the policy; a developer
 * switch keeps priority over the table; bad arguments fail with the right status and a
 * sentence; every plan's output matches the direct f64 reference on every element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ck/tune.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x7e57c0a7ull;

enum { MAXC = 64 };

/* the candidates the progress callback saw run, fastest first after sort_seen */
static char g_seen[MAXC][CK_TUNING_INSTANCE_MAX];
static double g_seen_ms[MAXC];
static int g_seen_n, g_progress_calls;

static void progress(void *user, int i, int n, const char *instance, double ms)
{
    (void)user;
    CHECK(i >= 0 && i < n);
    CHECK(instance && instance[0]);
    ++g_progress_calls;
    if (ms > 0 && g_seen_n < MAXC) {
        snprintf(g_seen[g_seen_n], sizeof g_seen[0], "%s", instance);
        g_seen_ms[g_seen_n++] = ms;
    }
}

static void *random_bf16(int64_t n)
{
    uint16_t *p = malloc((size_t)n * 2);
    for (int64_t i = 0; p && i < n; ++i) {
        double u = (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        uint64_t code = 0;
        ck_convert_from_f64(CK_DTYPE_BF16, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        p[i] = (uint16_t)code;
    }
    return p;
}

/* The problem's tensors: host copies h (random) and device copies d; args point at d. */
typedef struct tensors {
    void *h[3], *d[3];
    size_t sz[3];
    int64_t cnt[3];
    ck_conv_args args, host;
} tensors;

static void tensors_make(const ck_conv_problem *p, tensors *t)
{
    memset(t, 0, sizeof *t);
    CHECK_OK(ck_conv_tensor_elements(p, &t->cnt[0], &t->cnt[1], &t->cnt[2]));
    ck_device *dev = ck_context_device(g_ctx);
    for (int i = 0; i < 3; ++i) {
        t->sz[i] = (size_t)t->cnt[i] * 2;
        t->h[i] = random_bf16(t->cnt[i]);
        CHECK_OK(ck_malloc(dev, t->sz[i], &t->d[i]));
        CHECK_OK(ck_memcpy_h2d(dev, t->d[i], t->h[i], t->sz[i], NULL));
    }
    ck_conv_args_init(&t->args);
    t->args.x = t->d[0], t->args.w = t->d[1], t->args.y = t->d[2];
    t->host = t->args;
    t->host.x = t->h[0], t->host.w = t->h[1], t->host.y = t->h[2];
}

static void tensors_free(tensors *t)
{
    for (int i = 0; i < 3; ++i) {
        free(t->h[i]);
        if (t->d[i])
            ck_free(ck_context_device(g_ctx), t->d[i]);
    }
}

/* A plan with the policy (and the table): its instance text into name; runs it and compares
 * every element of the written tensor with the reference. */
static void plan_run_check(const char *what, const ck_conv_problem *p, tensors *t, char *name,
                           size_t size)
{
    ck_conv_plan *plan = NULL;
    ck_status st = ck_conv_plan_create(g_ctx, p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    ck_conv_plan_instance(plan, name, size);
    CHECK_OK(ck_conv_plan_execute(plan, &t->args));
    CHECK_OK(ck_context_synchronize(g_ctx));
    ck_conv_plan_destroy(plan);
    int oi = p->direction == CK_CONV_FWD ? 2 : p->direction == CK_CONV_BWD_DATA ? 0 : 1;
    uint16_t *got = malloc(t->sz[oi]);
    CHECK_OK(ck_memcpy_d2h(ck_context_device(g_ctx), got, t->d[oi], t->sz[oi], NULL));
    int bad = 0;
    for (int64_t e = 0; e < t->cnt[oi]; ++e) {
        double mag = 0, ref = ck_conv_reference_value(p, &t->host, e, &mag), v = 0;
        ck_convert_to_f64(CK_DTYPE_BF16, got[e], &v);
        double tol = 2 * 0x1p-8 * fabs(ref) + 1e-6 + mag * 0x1p-18;
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s (%s): element %lld = %g, reference %g", what, name, (long long)e, v,
                      ref);
    }
    free(got);
}

/* The table's key of the problem on the test's context. */
static void keys(const ck_conv_problem *p, char *dev, size_t dsize, char *key, size_t ksize)
{
    ck_conv_prob q;
    CHECK_OK(ck_conv_prob_make(p, &q));
    ck_conv_tuning_problem_key(&q, key, ksize);
    ck_op_tuning_device(g_ctx, dev, dsize);
}

static void store(const ck_conv_problem *p, const char *instance)
{
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "conv");
    keys(p, e.device, sizeof e.device, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "%s", instance);
    e.ms = 1, e.metric = 1;
    CHECK_OK(ck_tuning_store(&e));
    CHECK_OK(ck_op_force_instance(g_ctx, "conv", NULL)); /* re-read the table */
}

/* Tune, then: the entry, the next plan's instance, a forged entry naming the second fastest
 * candidate, an invalid entry and another route's text (policy), each run checked. */
static void tune_case(const char *what, const ck_conv_problem *p, const char *foreign)
{
    tensors t;
    tensors_make(p, &t);
    char policy[CK_TUNING_INSTANCE_MAX] = "", best[CK_TUNING_INSTANCE_MAX] = "",
         name[CK_TUNING_INSTANCE_MAX] = "";
    plan_run_check(what, p, &t, policy, sizeof policy); /* the policy's, before tuning */
    g_seen_n = g_progress_calls = 0;
    double ms = 0;
    ck_status st = ck_conv_tune(g_ctx, p, &t.args, 1, progress, NULL, best, sizeof best, &ms);
    CHECK_MSG(st == CK_SUCCESS, "%s: tune: %s", what, ck_last_error());
    CHECK_MSG(g_seen_n >= 2, "%s: %d candidates ran (%d progress calls)", what, g_seen_n,
              g_progress_calls);
    CHECK(ms > 0);
    char dev[CK_TUNING_DEVICE_MAX], key[CK_TUNING_PROBLEM_MAX];
    keys(p, dev, sizeof dev, key, sizeof key);
    ck_tuning_entry e;
    int found = 0;
    CHECK_OK(ck_tuning_lookup("conv", dev, key, &e, &found));
    CHECK_MSG(found, "%s: no entry for %s", what, key);
    if (found)
        CHECK_EQ_STR(e.instance, best);
    plan_run_check(what, p, &t, name, sizeof name);
    CHECK_EQ_STR(name, best);

    /* a forged entry: the slowest candidate that ran */
    int slow = 0;
    for (int i = 1; i < g_seen_n; ++i)
        if (g_seen_ms[i] > g_seen_ms[slow] && strcmp(g_seen[i], best) != 0)
            slow = i;
    char forged[CK_TUNING_INSTANCE_MAX];
    snprintf(forged, sizeof forged, "%s", g_seen[slow]);
    CHECK_MSG(strcmp(forged, best) != 0, "%s: no second candidate", what);
    store(p, forged);
    plan_run_check(what, p, &t, name, sizeof name);
    CHECK_EQ_STR(name, forged);

    /* entries the plan cannot take: the policy decides, no failure */
    const char *invalid[] = {"sm80:sm80.999x7x5.s1.w1x1", foreign, "depthwise:s0"};
    for (int i = 0; i < 3; ++i) {
        store(p, invalid[i]);
        plan_run_check(what, p, &t, name, sizeof name);
        CHECK_MSG(strcmp(name, policy) == 0, "%s: entry '%s': plan %s, policy %s", what, invalid[i],
                  name, policy);
        int tuned = 1;
        CHECK_OK(ck_conv_plan_choice(g_ctx, p, name, sizeof name, &tuned));
        CHECK_EQ_INT(tuned, 0);
    }
    tensors_free(&t);
}

static ck_conv_problem tiny(ck_conv_direction dir, int g, int c, int k)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.direction = dir;
    p.n = 1, p.g = g, p.c = c, p.k = k;
    p.in[0] = p.in[1] = 7;
    p.filter[0] = p.filter[1] = 3;
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = p.pad_right[1] = 1;
    return p;
}

static void test_forward(void)
{
    ck_conv_problem p = tiny(CK_CONV_FWD, 1, 8, 8);
    tune_case("forward", &p, "depthwise:s2");
}

static void test_backward_weight(void)
{
    ck_conv_problem p = tiny(CK_CONV_BWD_WEIGHT, 1, 8, 8);
    tune_case("backward weight", &p, "gemm:sm80.32x32x32.s4.w2x2");
}

static void test_depthwise(void)
{
    ck_conv_problem p = tiny(CK_CONV_FWD, 8, 8, 8);
    tune_case("depthwise forward", &p, "depthwise:s2.b4"); /* forward takes no lane blocks */
    /* the winner is among the direct route's strips or the GEMM routes; a strip is honoured */
    tensors t;
    tensors_make(&p, &t);
    char name[CK_TUNING_INSTANCE_MAX];
    store(&p, "depthwise:s1");
    plan_run_check("depthwise strip 1", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s1");
    /* a developer switch keeps priority over the table (as the norms' do) */
    setenv("CK_CONV_DW_STRIP", "2", 1);
    plan_run_check("depthwise CK_CONV_DW_STRIP=2", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s2");
    unsetenv("CK_CONV_DW_STRIP");
    /* a narrower vector than the widest (8 bf16 channels): 4 per thread, from the table, or 2
     * from CK_CONV_DW_VEC (over the table); a vector wider than the widest is refused, so the
     * policy decides */
    store(&p, "depthwise:s1.v4");
    plan_run_check("depthwise vector 4", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s1.v4");
    setenv("CK_CONV_DW_VEC", "2", 1);
    plan_run_check("depthwise CK_CONV_DW_VEC=2", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s4.v2");
    unsetenv("CK_CONV_DW_VEC");
    store(&p, "depthwise:s1.v3");
    plan_run_check("depthwise vector 3 (invalid)", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s4");
    tensors_free(&t);
}

static void test_depthwise_backward_weight(void)
{
    ck_conv_problem p = tiny(CK_CONV_BWD_WEIGHT, 8, 8, 8);
    tune_case("depthwise backward weight", &p, "depthwise:s2"); /* needs its lane blocks */
    tensors t;
    tensors_make(&p, &t);
    char name[CK_TUNING_INSTANCE_MAX];
    store(&p, "depthwise:s2.b1.v2");
    plan_run_check("depthwise backward weight vector 2", &p, &t, name, sizeof name);
    CHECK_EQ_STR(name, "depthwise:s2.b1.v2");
    tensors_free(&t);
}

static void test_bad_arguments(void)
{
    ck_conv_problem p = tiny(CK_CONV_FWD, 1, 8, 8);
    ck_conv_args a;
    ck_conv_args_init(&a);
    char best[64];
    CHECK_STATUS(ck_conv_tune(NULL, &p, &a, 1, NULL, NULL, best, sizeof best, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_conv_tune(g_ctx, NULL, &a, 1, NULL, NULL, best, sizeof best, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_conv_tune(g_ctx, &p, NULL, 1, NULL, NULL, best, sizeof best, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_conv_tune(g_ctx, &p, &a, 0, NULL, NULL, best, sizeof best, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(ck_last_error(), "reps = 0") != NULL, "message: %s", ck_last_error());
    p.c = 6, p.g = 4; /* channels not divisible by the groups */
    CHECK_STATUS(ck_conv_tune(g_ctx, &p, &a, 1, NULL, NULL, best, sizeof best, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    const char *msg = ck_last_error();
    CHECK_MSG(msg[0] && msg[strlen(msg) - 1] == '.', "not a sentence: %s", msg);
}

int main(void)
{
    char path[] = "/tmp/ck-conv-tune-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_CONV_ROUTE");
    unsetenv("CK_CONV_DW_STRIP");
    unsetenv("CK_CONV_DW_WGRAD_BLOCKS");
    if (ck_context_create(CK_BACKEND_HOST, 0, &g_ctx) != CK_SUCCESS) {
        printf("no emulator: %s\n", ck_last_error());
        unlink(path);
        return 1;
    }
    RUN_TEST(test_bad_arguments);
    RUN_TEST(test_forward);
    RUN_TEST(test_backward_weight);
    RUN_TEST(test_depthwise);
    RUN_TEST(test_depthwise_backward_weight);
    ck_context_destroy(g_ctx);
    unlink(path);
    return CK_TEST_REPORT();
}
