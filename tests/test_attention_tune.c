/* ck_attention_tune and the attention policy's use of the tuning table, on the emulator with a
 * tiny problem: tuning stores an entry under this device and the problem key, and plans then
 * take its instance (by name, marked tuned) and still match the f64 reference on every element;
 * a forged entry naming another valid instance is honoured; an entry naming an instance the
 * plan refuses, or no instance at all, falls back to the policy's; bad arguments are refused
 * with a sentence. CK_TUNING_FILE is a temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn_harness.h"
#include "ck/tune.h"
#include "ck/tuning.h"
#include "ops/common/op_common.h"

static int progress_calls, progress_ran;

static void progress(void *user, int i, int n, const char *instance, double ms)
{
    (void)user;
    CHECK(i >= 0 && i < n);
    CHECK(instance && instance[0]);
    progress_calls++;
    progress_ran += ms > 0;
}

/* The name of the plan the policy (and the table) gives the case; *tuned its marker. */
static void plan_name(const acase *c, char *name, size_t size, int *tuned)
{
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_attention_plan *plan = NULL;
    name[0] = '\0';
    *tuned = -1;
    CHECK_OK(ck_attention_plan_create(a_ctx, &p, &plan));
    if (plan) {
        snprintf(name, size, "%s", ck_attention_plan_name(plan));
        *tuned = ck_attention_plan_tuned(plan);
    }
    ck_attention_plan_destroy(plan);
}

/* Store an entry for the case's problem naming `instance`; the context reads the table again. */
static void forge(const acase *c, const char *instance)
{
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "attention");
    ck_op_tuning_device(a_ctx, e.device, sizeof e.device);
    ck_attn_tuning_key(&prob, e.problem, sizeof e.problem);
    snprintf(e.instance, sizeof e.instance, "%s", instance);
    e.ms = 1, e.metric = 1;
    CHECK_OK(ck_tuning_store(&e));
    CHECK_OK(ck_op_force_instance(a_ctx, "attention", NULL)); /* forget the table read so far */
}

/* Tune the case (reps 1) on buffers of its size; every candidate reported must have run. */
static void tune_case(const acase *c, char *best, size_t best_size)
{
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_device *dev = ck_context_device(a_ctx);
    size_t nq = (size_t)ck_attn_span(&p.q, p.b, p.s_q, p.h_q, p.d) * 2;
    size_t nk = (size_t)ck_attn_span(&p.k, p.b, p.s_k, p.h_k, p.d) * 2;
    size_t nv = (size_t)ck_attn_span(&p.v, p.b, p.s_k, p.h_k, p.d_v) * 2;
    size_t no = (size_t)ck_attn_span(&p.o, p.b, p.s_q, p.h_q, p.d_v) * 2;
    void *q = NULL, *k = NULL, *v = NULL, *o = NULL;
    CHECK_OK(ck_malloc(dev, nq, &q));
    CHECK_OK(ck_malloc(dev, nk, &k));
    CHECK_OK(ck_malloc(dev, nv, &v));
    CHECK_OK(ck_malloc(dev, no, &o));
    CHECK_OK(ck_memset_d8(dev, q, 0x3c, nq, NULL)); /* bf16 0x3c3c ~ 0.0115 */
    CHECK_OK(ck_memset_d8(dev, k, 0x3c, nk, NULL));
    CHECK_OK(ck_memset_d8(dev, v, 0x3c, nv, NULL));
    ck_attention_args args;
    ck_attention_args_init(&args);
    args.q = q, args.k = k, args.v = v, args.o = o;
    double ms = 0;
    progress_calls = progress_ran = 0;
    CHECK_OK(ck_attention_tune(a_ctx, &p, &args, 1, progress, NULL, best, best_size, &ms));
    CHECK_EQ_INT(progress_ran, progress_calls);
    CHECK(ms > 0);
    printf("  %d candidates timed; the fastest %s (%.3f ms)\n", progress_calls, best, ms);
    ck_free(dev, q);
    ck_free(dev, k);
    ck_free(dev, v);
    ck_free(dev, o);
}

static void test_tune_then_plans_take_the_winner(void)
{
    acase c = ac_base(1, 64, 64, 2, 2, 64);
    char policy[96], name[96], best[96] = "";
    int tuned = 0;
    plan_name(&c, policy, sizeof policy, &tuned);
    CHECK_EQ_INT(tuned, 0);

    ck_attention_problem p;
    ac_problem(&c, &p);
    tune_case(&c, best, sizeof best);
    /* the policy's sm90 tile and two sm80 tiles (larger tiles only pad these 64 rows) */
    CHECK(progress_calls >= 3);

    /* the table holds it under this device and problem */
    ck_tuning_entry *all = NULL;
    int n = 0, found = 0;
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    char key[CK_TUNING_PROBLEM_MAX], dev_key[CK_TUNING_DEVICE_MAX];
    ck_attn_tuning_key(&prob, key, sizeof key);
    ck_op_tuning_device(a_ctx, dev_key, sizeof dev_key);
    CHECK_OK(ck_tuning_list(&all, &n));
    for (int i = 0; i < n; ++i)
        if (!strcmp(all[i].op, "attention") && !strcmp(all[i].problem, key) &&
            !strcmp(all[i].device, dev_key)) {
            found++;
            CHECK_EQ_STR(all[i].instance, best);
        }
    free(all);
    CHECK_EQ_INT(found, 1);

    /* plans take it, and it computes attention */
    plan_name(&c, name, sizeof name, &tuned);
    CHECK_EQ_STR(name, best);
    CHECK_EQ_INT(tuned, 1);
    CHECK_EQ_INT(ac_run(&c), 0);

    /* a forged entry naming another valid instance is honoured */
    const char *other = strcmp(best, "sm80.d64.dv64.m64n32.w4") ? "sm80.d64.dv64.m64n32.w4"
                                                                : "sm80.d64.dv64.m64n64.w4";
    forge(&c, other);
    plan_name(&c, name, sizeof name, &tuned);
    CHECK_EQ_STR(name, other);
    CHECK_EQ_INT(tuned, 1);
    CHECK_EQ_INT(ac_run(&c), 0);

    /* one the plan refuses (48 rows on 4 warps), or no instance: the policy's, no failure */
    const char *bad[] = {"sm80.d64.dv64.m48n64.w4", "sm90.d64.dv64.m128n64.w4",
                         "sm80.d128.dv128.m64n64.w4", "no-such-instance"};
    for (int i = 0; i < 4; ++i) {
        forge(&c, bad[i]);
        plan_name(&c, name, sizeof name, &tuned);
        CHECK_MSG(!strcmp(name, policy), "entry %s: plan %s, policy %s", bad[i], name, policy);
        CHECK_EQ_INT(tuned, 0);
    }
    CHECK_EQ_INT(ac_run(&c), 0);

    /* bad arguments (refused before any pointer is read) */
    ck_attention_args args;
    ck_attention_args_init(&args);
    CHECK_STATUS(ck_attention_tune(NULL, &p, &args, 1, NULL, NULL, NULL, 0, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "ctx") != NULL);
    CHECK_STATUS(ck_attention_tune(a_ctx, NULL, &args, 1, NULL, NULL, NULL, 0, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "problem") != NULL);
    CHECK_STATUS(ck_attention_tune(a_ctx, &p, NULL, 1, NULL, NULL, NULL, 0, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_attention_tune(a_ctx, &p, &args, 0, NULL, NULL, NULL, 0, NULL),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "reps = 0") != NULL);
    p.d = 48; /* no kernel has it: the problem's own sentence */
    CHECK_STATUS(ck_attention_tune(a_ctx, &p, &args, 1, NULL, NULL, NULL, 0, NULL),
                 CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "48") != NULL);
}

/* A decode problem (s_q <= 16): the decode kernel's keys per warp, warps and parts are among
 * the candidates, and the winner is the plans' instance and computes attention. */
static void test_tune_decode(void)
{
    acase c = ac_base(1, 4, 64, 2, 2, 64);
    char best[96] = "", name[96];
    int tuned = 0;
    tune_case(&c, best, sizeof best);
    CHECK(progress_calls >= 10); /* 3 prefill + the decode shapes and their parts */
    plan_name(&c, name, sizeof name, &tuned);
    CHECK_EQ_STR(name, best);
    CHECK_EQ_INT(tuned, 1);
    CHECK_EQ_INT(ac_run(&c), 0);
}

/* Names parse back into the instance they name; other head dims and malformed names do not. */
static void test_instance_names_round_trip(void)
{
    acase c = ac_base(1, 4, 64, 2, 2, 64);
    ck_attention_problem p;
    ac_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attn_instance in[3] = {
        {128, 80, CK_ATTN_SM90_WARPS, 0, 1, 0}, {64, 32, 4, 0, 1, 0}, {16, 32, 2, 1, 3, 2}};
    for (int i = 0; i < 3; ++i) {
        char name[96];
        ck_attn_instance back;
        ck_attn_instance_name(&prob, &in[i], name, sizeof name);
        CHECK(ck_attn_instance_parse(&prob, name, &back));
        CHECK_MSG(!memcmp(&back, &in[i], sizeof back), "%s does not round-trip", name);
    }
    ck_attn_instance x;
    CHECK(!ck_attn_instance_parse(&prob, "sm80.d128.dv128.m64n32.w4", &x));
    CHECK(!ck_attn_instance_parse(&prob, "sm90.d64.dv64.m64n32.w4", &x)); /* sm80 warps */
    CHECK(!ck_attn_instance_parse(&prob, "sm80.d64.dv64.m64n32.w4x", &x));
    CHECK(!ck_attn_instance_parse(&prob, "decode.d64.dv64.r16n32.w2.k2", &x));
}

int main(void)
{
    char path[] = "/tmp/ck-attention-tune-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    setenv("CK_TUNING_FILE", path, 1);
    if (ck_context_create(CK_BACKEND_HOST, 0, &a_ctx) != CK_SUCCESS) {
        printf("no emulator: %s\n", ck_last_error());
        unlink(path);
        return 1;
    }
    test_instance_names_round_trip();
    printf("%-50s %s\n", "test_instance_names_round_trip", ckt_fail_ ? "FAILED" : "ok");
    test_tune_then_plans_take_the_winner();
    printf("%-50s %s\n", "test_tune_then_plans_take_the_winner", ckt_fail_ ? "FAILED" : "ok");
    test_tune_decode();
    printf("%-50s %s\n", "test_tune_decode", ckt_fail_ ? "FAILED" : "ok");
    ck_context_destroy(a_ctx);
    unlink(path);
    return CK_TEST_REPORT();
}
