/* The conv plan's tuned instances for backward data (kept apart from test_conv_tune, which
 * times every candidate and is slow): on the emulator, for a stride-1 problem (one implicit
 * GEMM) and a strided one (a GEMM per residue class of the stride), every instance the tuner
 * would time (the GEMM routes' lists for the first class) is accepted by the plan; table
 * entries naming an sm80 and an sm90 instance other than the policy's are honoured (the plan
 * names them) and their plans match the direct f64 reference on every element; entries the
 * plan cannot take (an unknown instance, the plain-GEMM route, a depthwise instance) fall back
 * to the policy, as does an sm90 entry for fp8 backward data (wgmma cannot read its N-major W),
 * whose sm80 entry is honoured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/conv.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"
#include "ops/conv/conv_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0xbdda7a7eull;

static int es_of(ck_dtype t)
{
    return ck_dtype_get(t)->storage_bits / 8;
}

static void *random_of(ck_dtype t, int64_t n)
{
    unsigned char *p = malloc((size_t)n * (size_t)es_of(t));
    for (int64_t i = 0; p && i < n; ++i) {
        double u = (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy(p + i * es_of(t), &code, (size_t)es_of(t));
    }
    return p;
}

/* The problem's tensors X (dX, written), W and Y (dY): host and device copies. */
typedef struct tensors {
    void *h[3], *d[3];
    size_t sz[3];
    int64_t cnt[3];
    ck_dtype ty[3];
    ck_conv_args args, host;
} tensors;

static void tensors_make(const ck_conv_problem *p, tensors *t)
{
    memset(t, 0, sizeof *t);
    CHECK_OK(ck_conv_tensor_elements(p, &t->cnt[0], &t->cnt[1], &t->cnt[2]));
    t->ty[0] = p->in_dtype, t->ty[1] = p->wei_dtype, t->ty[2] = p->out_dtype;
    ck_device *dev = ck_context_device(g_ctx);
    for (int i = 0; i < 3; ++i) {
        t->sz[i] = (size_t)t->cnt[i] * (size_t)es_of(t->ty[i]);
        t->h[i] = random_of(t->ty[i], t->cnt[i]);
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

/* A plan with the policy and the table: its instance text into name; dX (poisoned first)
 * against the reference on every element. */
static void plan_run_check(const char *what, const ck_conv_problem *p, tensors *t, char *name,
                           size_t size)
{
    ck_conv_plan *plan = NULL;
    ck_status st = ck_conv_plan_create(g_ctx, p, &plan);
    CHECK_MSG(st == CK_SUCCESS, "%s: plan: %s", what, ck_last_error());
    if (st)
        return;
    ck_conv_plan_instance(plan, name, size);
    ck_device *dev = ck_context_device(g_ctx);
    CHECK_OK(ck_memset_d8(dev, t->d[0], 0x7b, t->sz[0], ck_context_stream(g_ctx)));
    CHECK_OK(ck_conv_plan_execute(plan, &t->args));
    CHECK_OK(ck_context_synchronize(g_ctx));
    ck_conv_plan_destroy(plan);
    unsigned char *got = malloc(t->sz[0]);
    CHECK_OK(ck_memcpy_d2h(dev, got, t->d[0], t->sz[0], NULL));
    int bad = 0, es = es_of(t->ty[0]);
    double unit = ldexp(1.0, -ck_dtype_get(t->ty[0])->mantissa_bits);
    for (int64_t e = 0; e < t->cnt[0]; ++e) {
        double mag = 0, ref = ck_conv_reference_value(p, &t->host, e, &mag), v = 0;
        uint64_t code = 0;
        memcpy(&code, got + e * es, (size_t)es);
        ck_convert_to_f64(t->ty[0], code, &v);
        double tol = unit * fabs(ref) + 1e-6 + mag * 0x1p-18;
        if (!(fabs(v - ref) <= tol) && bad++ < 3)
            CHECK_MSG(0, "%s (%s): element %lld = %g, reference %g", what, name, (long long)e, v,
                      ref);
    }
    CHECK_MSG(bad == 0, "%s (%s): %d elements wrong", what, name, bad);
    free(got);
}

static void store(const ck_conv_problem *p, const char *instance)
{
    ck_tuning_entry e;
    ck_conv_prob q;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "conv");
    CHECK_OK(ck_conv_prob_make(p, &q));
    ck_conv_tuning_problem_key(&q, e.problem, sizeof e.problem);
    ck_op_tuning_device(g_ctx, e.device, sizeof e.device);
    snprintf(e.instance, sizeof e.instance, "%s", instance);
    e.ms = 1, e.metric = 1;
    CHECK_OK(ck_tuning_store(&e));
    CHECK_OK(ck_op_force_instance(g_ctx, "conv", NULL)); /* re-read the table */
}

/* The route's instance texts for the problem's first class with work (the tuner's candidates
 * of that route), into texts; returns the count. */
static int route_texts(const ck_conv_problem *p, ck_conv_route route, char (*texts)[96], int max)
{
    ck_conv_prob q;
    CHECK_OK(ck_conv_prob_make(p, &q));
    ck_conv_class cls[16];
    int ncls = ck_conv_classes(&q, cls, 16), first = -1;
    for (int i = 0; i < ncls && first < 0; ++i)
        if (ck_conv_class_work(&cls[i]) == CK_CONV_CLASS_COMPUTE)
            first = i;
    CHECK(first >= 0);
    if (first < 0)
        return 0;
    ck_gemm_prob loader, plain;
    CHECK_OK(ck_conv_gemm_probs(&q, &cls[first], &loader, &plain));
    ck_gemm_instance ins[64];
    int n = ck_conv_route_instances(&q, &cls[first], &loader, NULL, ck_op_props(g_ctx), route, ins,
                                    max < 64 ? max : 64);
    for (int i = 0; i < n; ++i)
        ck_conv_gemm_choice_name(route, &ins[i], texts[i], 96);
    return n;
}

/* The policy's plan; every listed candidate accepted; a forged sm80 and sm90 entry honoured
 * (want_sm90: the sm90 route lists instances for the problem); invalid entries -> policy. */
static void bwd_data_case(const char *what, const ck_conv_problem *p, int want_sm90)
{
    tensors t;
    tensors_make(p, &t);
    char policy[CK_TUNING_INSTANCE_MAX] = "", name[CK_TUNING_INSTANCE_MAX] = "", msg[160];
    store(p, "auto");
    plan_run_check(what, p, &t, policy, sizeof policy);
    ck_conv_prob q;
    CHECK_OK(ck_conv_prob_make(p, &q));
    static const ck_conv_route routes[2] = {CK_CONV_ROUTE_SM80, CK_CONV_ROUTE_SM90};
    for (int r = 0; r < 2; ++r) {
        char texts[64][96];
        int n = route_texts(p, routes[r], texts, 64);
        CHECK_MSG(r == 0 ? n >= 2 : (n > 0) == want_sm90, "%s: route %s lists %d instances", what,
                  ck_conv_route_name(routes[r]), n);
        for (int i = 0; i < n; ++i) /* the tuner times only what the plan accepts */
            CHECK_MSG(ck_conv_tuned_ok(&q, ck_op_props(g_ctx), texts[i]), "%s: %s not accepted",
                      what, texts[i]);
        /* the smallest listed instance that is not the policy's: honoured, and correct */
        int pick = -1;
        for (int i = n - 1; i >= 0 && pick < 0; --i)
            if (strcmp(texts[i], policy) != 0)
                pick = i;
        if (pick < 0)
            continue;
        store(p, texts[pick]);
        snprintf(msg, sizeof msg, "%s, entry %s", what, texts[pick]);
        plan_run_check(msg, p, &t, name, sizeof name);
        CHECK_EQ_STR(name, texts[pick]);
        int tuned = 0;
        CHECK_OK(ck_conv_plan_choice(g_ctx, p, name, sizeof name, &tuned));
        CHECK_EQ_INT(tuned, 1);
    }
    /* entries the plan cannot take: the policy decides */
    const char *invalid[] = {"sm80:sm80.999x7x5.s1.w1x1", "gemm:sm80.32x32x32.s4.w2x2",
                             "depthwise:s2", "sm90:sm90.bogus"};
    for (int i = 0; i < 4; ++i) {
        store(p, invalid[i]);
        snprintf(msg, sizeof msg, "%s, invalid entry %s", what, invalid[i]);
        plan_run_check(msg, p, &t, name, sizeof name);
        CHECK_MSG(strcmp(name, policy) == 0, "%s: plan %s, policy %s", msg, name, policy);
        int tuned = 1;
        CHECK_OK(ck_conv_plan_choice(g_ctx, p, name, sizeof name, &tuned));
        CHECK_EQ_INT(tuned, 0);
    }
    tensors_free(&t);
}

static ck_conv_problem tiny(int stride, ck_dtype t)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.direction = CK_CONV_BWD_DATA;
    p.n = 1, p.c = 8, p.k = 16;
    p.in[0] = 7, p.in[1] = 6;
    p.filter[0] = p.filter[1] = 3;
    p.stride[0] = stride; /* stride 2: two residue classes */
    p.pad_left[0] = p.pad_left[1] = p.pad_right[0] = 1;
    p.in_dtype = p.wei_dtype = p.out_dtype = t;
    return p;
}

static void test_stride1(void)
{
    ck_conv_problem p = tiny(1, CK_DTYPE_BF16);
    bwd_data_case("bwd-data stride 1", &p, 1);
}

static void test_strided(void)
{
    ck_conv_problem p = tiny(2, CK_DTYPE_BF16);
    bwd_data_case("bwd-data stride (2, 1) (2 residue classes)", &p, 1);
}

static void test_fp8(void)
{
    ck_conv_problem p = tiny(1, CK_DTYPE_FP8_E4M3);
    p.c = 16;
    p.in_dtype = CK_DTYPE_F32; /* dX */
    bwd_data_case("bwd-data e4m3 -> f32", &p, 0);
    /* an sm90 entry for the same GEMM shape in bf16 is refused for fp8: the policy's sm80 */
    ck_conv_problem pb = p;
    pb.in_dtype = pb.wei_dtype = pb.out_dtype = CK_DTYPE_BF16;
    char texts[64][96];
    int n = route_texts(&pb, CK_CONV_ROUTE_SM90, texts, 64);
    CHECK(n > 0);
    ck_conv_prob q;
    CHECK_OK(ck_conv_prob_make(&p, &q));
    if (n > 0)
        CHECK_MSG(!ck_conv_tuned_ok(&q, ck_op_props(g_ctx), texts[0]),
                  "fp8 backward data accepted %s", texts[0]);
}

int main(void)
{
    char path[] = "/tmp/ck-conv-tune-bwd-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    unsetenv("CK_CONV_ROUTE");
    if (ck_context_create(CK_BACKEND_HOST, 0, &g_ctx) != CK_SUCCESS) {
        printf("no emulator: %s\n", ck_last_error());
        unlink(path);
        return 1;
    }
    RUN_TEST(test_stride1);
    RUN_TEST(test_strided);
    RUN_TEST(test_fp8);
    ck_context_destroy(g_ctx);
    unlink(path);
    return CK_TEST_REPORT();
}
