/*
 * Attention tuning (`ck tune attention`, ck_attention_tune in ck/tune.h): the candidate
 * instances of a problem on the context's device, each forced in turn through the common tuner
 * (ops/common/op_tune.h), which times the distinct ones and stores the fastest in the tuning
 * table under op "attention", the device and the problem key below; plans without an explicit
 * instance then take it (ck_attn_tuned, consulted by ck_attn_plan_create_instance).
 *
 * The table's instance text is the plan's name (ck_attn_instance_name), which parses back into
 * the instance: "sm90.d64.dv64.m128n80.w12", "sm80.d64.dv64.m64n32.w4",
 * "decode.d64.dv64.r16n32.w1.k2.s3".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tune.h"
#include "ck/tuning.h"
#include "core/error.h"
#include "ops/attention/attn_internal.h"
#include "ops/common/op_common.h"
#include "ops/common/op_tune.h"

#define OP "ck_attention"

enum { MAX_CANDIDATES = 80, NAME = CK_TUNING_INSTANCE_MAX };

/* 16 and below exact (a decode problem's rows per head group and its kernel depend on each),
 * else the next power of two: lengths in one bucket have the same number of tiles within a
 * factor of two, which is what moves the best tile shape and split count. */
static long long bucket(int64_t s)
{
    if (s <= 16)
        return (long long)s;
    long long b = 32;
    while (b < s)
        b *= 2;
    return b;
}

/* The problem key: every field that changes which instance is fastest or which can run.
 *   dtype, d, d_v            the kernels' tiles, registers and shared memory
 *   g = h_q / h_k            the rows a decode block reads K and V once for
 *   bh = b h_k (bucketed)    the independent units: the grid, waves and split-KV parts
 *   sq, sk (bucketed)        the tiles per head (exact up to 16: decode)
 *   mask, alignment, window  the visible keys per query tile (exact window: models fix it)
 *   varlen, paged, bias, alibi, dropout, softcap
 *                            each changes the kernel (or which kernels can run)
 * Not in it: strides (every kernel takes any), lse and the scale (a few bytes or a multiply). */
void ck_attn_tuning_key(const ck_attn_prob *prob, char *buf, size_t size)
{
    const ck_attention_problem *p = &prob->p;
    static const char *masks[] = {"none", "causal", "window"};
    char mask[64];
    if (p->mask == CK_ATTN_MASK_WINDOW)
        snprintf(mask, sizeof mask, "window%lld,%lld", (long long)p->window_left,
                 (long long)p->window_right);
    else
        snprintf(mask, sizeof mask, "%s", masks[p->mask == CK_ATTN_MASK_CAUSAL]);
    snprintf(buf, size, "%s/d%lld/dv%lld/g%lld/bh%lld/sq%lld/sk%lld/%s%s%s%s%s%s%s%s",
             ck_dtype_name(p->dtype), (long long)p->d, (long long)p->d_v,
             (long long)(p->h_q / (p->h_k ? p->h_k : 1)), bucket(p->b * p->h_k), bucket(p->s_q),
             bucket(p->s_k), mask,
             p->mask != CK_ATTN_MASK_NONE && p->align == CK_ATTN_BOTTOM_RIGHT ? "-br" : "",
             p->varlen ? "/varlen" : "", p->var.page_size ? "/paged" : "",
             ck_attn_bias_code(prob) ? "/bias" : "", p->var.alibi ? "/alibi" : "",
             p->var.dropout_p > 0.0f ? "/dropout" : "", p->softcap > 0.0f ? "/softcap" : "");
}

void ck_attn_instance_name(const ck_attn_prob *prob, const ck_attn_instance *in, char *buf,
                           size_t size)
{
    long long d = (long long)prob->p.d, dv = (long long)prob->p.d_v;
    if (in->decode)
        snprintf(buf, size, "decode.d%lld.dv%lld.r%dn%d.w%d.k%d.s%d", d, dv, in->tile_m, in->tile_n,
                 in->warps, in->stages ? in->stages : 2, in->splits);
    else
        snprintf(buf, size, "%s.d%lld.dv%lld.m%dn%d.w%d", ck_attn_is_sm90(in) ? "sm90" : "sm80", d,
                 dv, in->tile_m, in->tile_n, in->warps);
}

int ck_attn_instance_parse(const ck_attn_prob *prob, const char *text, ck_attn_instance *in)
{
    ck_attn_instance x;
    memset(&x, 0, sizeof x);
    long long d = -1, dv = -1;
    int used = -1;
    char kind[8] = "";
    if (sscanf(text, "decode.d%lld.dv%lld.r%dn%d.w%d.k%d.s%d%n", &d, &dv, &x.tile_m, &x.tile_n,
               &x.warps, &x.stages, &x.splits, &used) == 7 &&
        text[used] == '\0') {
        x.decode = 1;
    } else if (sscanf(text, "%4[sm089].d%lld.dv%lld.m%dn%d.w%d%n", kind, &d, &dv, &x.tile_m,
                      &x.tile_n, &x.warps, &used) == 6 &&
               text[used] == '\0') {
        x.splits = 1;
        /* the kernel is named by the warps: the prefix must agree */
        if (strcmp(kind, ck_attn_is_sm90(&x) ? "sm90" : "sm80") != 0)
            return 0;
    } else {
        return 0;
    }
    if (d != prob->p.d || dv != prob->p.d_v || x.tile_m <= 0 || x.tile_n <= 0 || x.warps <= 0 ||
        (x.decode && x.splits <= 0))
        return 0;
    *in = x;
    return 1;
}

int ck_attn_tuned(ck_context *ctx, const ck_attn_prob *prob, ck_attn_instance *in, char *text,
                  size_t text_size, int *forced)
{
    char key[CK_TUNING_PROBLEM_MAX];
    ck_attn_tuning_key(prob, key, sizeof key);
    if (!ck_op_tuned(ctx, "attention", key, text, text_size, forced) || !strcmp(text, "auto"))
        return 0;
    return ck_attn_instance_parse(prob, text, in) ? 1 : -1;
}

/* The smallest of the ascending tiles t[0 .. n) that covers s rows (the largest if none does):
 * a larger tile than that only adds padding rows, so it is not a candidate. */
static int cover(const int *t, int n, int64_t s)
{
    for (int i = 0; i < n; ++i)
        if (t[i] >= s)
            return t[i];
    return t[n - 1];
}

typedef struct cand_list {
    char text[MAX_CANDIDATES][NAME];
    int n;
} cand_list;

static void add(cand_list *c, const ck_attn_prob *prob, const ck_attn_instance *in)
{
    if (c->n < MAX_CANDIDATES)
        ck_attn_instance_name(prob, in, c->text[c->n++], NAME);
}

/* The candidates of the three kernels (the plan refuses those the device or the problem cannot
 * take: the tuner skips them):
 *   sm90    128 query rows (two consumer warpgroups) or 192 (three) x key tiles 64 .. 192 in
 *           steps of 16 whose accumulators fit the registers (ck_attn_sm90_shape_ok)
 *   sm80    64 x 4 warps, 128 x 4 or 8 warps, key tiles 32, 64, 128
 *   decode  (s_q <= 16) 16, 32 or 64 keys per warp x 1, 2 or 4 warps x 1, 2, 3, 4 or 6 parts,
 *           the policy's rows and ring depth; parts only while each keeps a key tile
 * Tiles longer than the smallest that covers the sequence are left out (padding only). */
static void candidates(ck_context *ctx, const ck_attn_prob *prob, cand_list *c)
{
    const ck_attention_problem *p = &prob->p;
    snprintf(c->text[c->n++], NAME, "auto");
    static const int sm90_m[] = {128, 192}, sm80_m[] = {64, 128}, sm80_n[] = {32, 64, 128};
    int sm90_n[9];
    for (int i = 0; i < 9; ++i)
        sm90_n[i] = 64 + 16 * i;
    int m90 = cover(sm90_m, 2, p->s_q), n90 = cover(sm90_n, 9, p->s_k);
    for (int m = 128; m <= m90; m += 64)
        for (int n = 64; n <= n90; n += 16) {
            ck_attn_instance in = {m, n, m == 128 ? CK_ATTN_SM90_WARPS : CK_ATTN_SM90_WARPS3,
                                   0, 1, 0};
            if (ck_attn_sm90_shape_ok(prob, &in))
                add(c, prob, &in);
        }
    int m80 = cover(sm80_m, 2, p->s_q), n80 = cover(sm80_n, 3, p->s_k);
    for (int m = 64; m <= m80; m *= 2)
        for (int w = 4; w <= m / 16 && w <= 8; w *= 2)
            for (int n = 32; n <= n80; n *= 2) {
                ck_attn_instance in = {m, n, w, 0, 1, 0};
                add(c, prob, &in);
            }
    ck_attn_instance base;
    if (!ck_attn_decode_ok(prob, 0) ||
        ck_attn_decode_policy(prob, ck_op_props(ctx), 1, &base) != CK_SUCCESS) {
        ck_clear_error();
        return;
    }
    static const int keys[] = {16, 32, 64, 128, 256};
    static const int parts[] = {1, 2, 3, 4, 6};
    int kcover = cover(keys, 5, p->s_k);
    for (int n = 16; n <= 64; n *= 2)
        for (int w = 1; w <= 4 && n * w <= kcover; w *= 2)
            for (int i = 0; i < 5; ++i) {
                int64_t tiles = (p->s_k + n * w - 1) / (n * w);
                if (parts[i] > 1 && parts[i] > tiles)
                    break;
                ck_attn_instance in = base;
                in.tile_n = n, in.warps = w, in.splits = parts[i];
                add(c, prob, &in);
            }
}

typedef struct attn_tune {
    ck_context *ctx;
    const ck_attention_problem *problem;
    const ck_attention_args *args;
    ck_attn_prob prob;
} attn_tune;

/* The plan the forced candidate makes: its name, or "" when the plan refuses it (logged). */
static ck_status plan(void *user, char *name, size_t nsize, char *problem, size_t psize)
{
    attn_tune *t = user;
    ck_attention_plan *pl = NULL;
    ck_attn_tuning_key(&t->prob, problem, psize);
    if (ck_attn_plan_create_instance(t->ctx, &t->prob, NULL, &pl) != CK_SUCCESS) {
        ck_clear_error(); /* logged by the plan at info level */
        name[0] = '\0';
        return CK_SUCCESS;
    }
    snprintf(name, nsize, "%s", ck_attention_plan_name(pl));
    ck_attention_plan_destroy(pl);
    return CK_SUCCESS;
}

static ck_status run(void *user)
{
    attn_tune *t = user;
    return ck_attention(t->ctx, t->problem, t->args);
}

ck_status ck_attention_tune(ck_context *ctx, const ck_attention_problem *problem,
                            const ck_attention_args *args, int reps, ck_tune_progress progress,
                            void *user, char *best, size_t best_size, double *best_ms)
{
    static const char *fn = "ck_attention_tune";
    CK_REQUIRE_NOT_NULL(ctx, fn);
    CK_REQUIRE_NOT_NULL(problem, fn);
    CK_REQUIRE_NOT_NULL(args, fn);
    if (reps < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: reps = %d; accepted: reps >= 1.", fn, reps);
    attn_tune t;
    memset(&t, 0, sizeof t);
    t.ctx = ctx, t.problem = problem, t.args = args;
    ck_status st = ck_attn_prob_make(problem, &t.prob);
    if (st != CK_SUCCESS)
        return st;
    /* the policy's plan first: a problem no kernel takes fails here with its own sentence */
    ck_attention_plan *pl = NULL;
    if ((st = ck_op_force_instance(ctx, "attention", "auto")) == CK_SUCCESS)
        st = ck_attn_plan_create_instance(ctx, &t.prob, NULL, &pl);
    ck_attention_plan_destroy(pl);
    if (st != CK_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", ck_last_error());
        ck_op_force_instance(ctx, "attention", NULL);
        return ck_fail(st, "%s", why);
    }
    cand_list *cl = calloc(1, sizeof *cl); /* 7.5 KiB of names: not on the stack */
    if (!cl)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of host memory.", fn);
    candidates(ctx, &t.prob, cl);
    const char *texts[MAX_CANDIDATES];
    for (int i = 0; i < cl->n; ++i)
        texts[i] = cl->text[i];
    const ck_attention_problem *p = &t.prob.p;
    /* Q, K, V and O once (the decode shapes are bandwidth bound): the metric is GB/s */
    double bytes = 2.0 * (double)p->b *
                   ((double)p->h_k * (double)p->s_k * (double)(p->d + p->d_v) +
                    (double)p->h_q * (double)p->s_q * (double)(p->d + p->d_v));
    ck_op_tuner tuner = {"attention", texts, cl->n, plan, run, bytes, &t};
    st = ck_op_tune(ctx, &tuner, reps, progress, user, best, best_size, best_ms);
    free(cl);
    return st;
}
