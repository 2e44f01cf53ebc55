/*
 * Attention kernel glue (CK's FmhaFwdKernel): THE parameter table (one list of (name, value)
 * makes both the generated #defines and the kernel cache key), the kernel source, plans
 * (create = checks + policy + build through the context's kernel cache; execute = pointer
 * checks + launch) and the one-call form.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tuning.h"
#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/attention/attn_internal.h"
#include "ops/common/op_common.h"
#include "ops/common/op_params.h"

#define OP "ck_attention"

struct ck_attention_plan {
    ck_context *ctx;
    ck_attn_prob prob;
    ck_attn_instance inst;
    ck_kernel *kernel;
    ck_kernel *combine; /* split-KV's combine kernel (decode instances with splits > 1) */
    size_t shared;
    unsigned align_q, align_k, align_v, align_o;
    int tuned;          /* the tuning table chose the instance */
    ck_attn_fp8_ws fp8; /* fp8: V^T (sm90_fp8.c) */
    char name[64];
};

/* 16-byte copies of a tensor: every stride a multiple of 8 elements (16 bytes) (bit 0 of
 * scalar_copy: unaligned Q, K or V). */
static int copy_vec(const ck_attn_prob *prob, const ck_attn_strides *st)
{
    return !(prob->scalar_copy & 1) && st->batch % 8 == 0 && st->seq % 8 == 0 && st->head % 8 == 0;
}

/* O stored two elements at a time: every stride even (bit 1 of scalar_copy: unaligned O). */
static int out_pair(const ck_attn_prob *prob, const ck_attn_strides *st)
{
    return !(prob->scalar_copy & 2) && st->batch % 2 == 0 && st->seq % 2 == 0 && st->head % 2 == 0;
}

/* THE parameter table of the sm80 and decode kernels (one list makes both the #defines and the
 * kernel cache key: ops/common/op_params.h). */
static int params(const ck_attn_prob *prob, const ck_attn_instance *in, ck_op_param *t)
{
    const ck_attention_problem *p = &prob->p;
    int n = 0;
    ck_op_param_add(t, &n, "ATTN_D", p->d);
    ck_op_param_add(t, &n, "ATTN_DV", p->d_v);
    ck_op_param_add(t, &n, "ATTN_BF16", p->dtype == CK_DTYPE_BF16);
    ck_op_param_add(t, &n, "ATTN_TILE_M", in->tile_m);
    ck_op_param_add(t, &n, "ATTN_TILE_N", in->tile_n);
    ck_op_param_add(t, &n, "ATTN_WARPS", in->warps);
    ck_op_param_add(t, &n, "ATTN_Q_VEC", copy_vec(prob, &p->q));
    ck_op_param_add(t, &n, "ATTN_K_VEC", copy_vec(prob, &p->k));
    ck_op_param_add(t, &n, "ATTN_V_VEC", copy_vec(prob, &p->v));
    ck_op_param_add(t, &n, "ATTN_O_PAIR", out_pair(prob, &p->o));
    ck_op_param_add(t, &n, "ATTN_BIAS", ck_attn_bias_code(prob));
    ck_op_param_add(t, &n, "ATTN_ALIBI", p->var.alibi);
    /* paged: 1 when a key tile lies in one page, 2 when rows are addressed one by one */
    ck_op_param_add(t, &n, "ATTN_PAGED",
                    !p->var.page_size               ? 0
                    : p->var.page_size % in->tile_n ? 2
                                                    : 1);
    ck_op_param_add(t, &n, "ATTN_DROPOUT", p->var.dropout_p > 0.0f);
    if (in->decode && in->stages > 2) /* the decode kernel's ring (2 by default) */
        ck_op_param_add(t, &n, "ATTN_DEC_STAGES", in->stages);
    return n;
}

void ck_attn_defines(const ck_attn_prob *prob, const ck_attn_instance *in, ck_sbuf *b)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    char *d = ck_op_params_defines(t, params(prob, in, t));
    if (!d) {
        b->oom = 1;
        return;
    }
    ck_sbuf_printf(b, "%s", d);
    free(d);
}

char *ck_attn_table_key(const char *op, const ck_op_param *t, int n)
{
    char key[1024];
    return ck_op_params_key(op, t, n, 5 /* "ATTN_" */, key, sizeof key) ? NULL : strdup(key);
}

char *ck_attn_params_key(const char *op, const ck_attn_prob *prob, const ck_attn_instance *in)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    return ck_attn_table_key(op, t, params(prob, in, t));
}

char *ck_attn_key(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    if (ck_attn_is_sm90(in))
        return ck_attn_sm90_key(prob, in);
    return ck_attn_params_key("attention/sm80", prob, in);
}

ck_status ck_attn_source(const ck_attn_prob *prob, const ck_attn_instance *in, char **source)
{
    if (ck_attn_is_sm90(in))
        return ck_attn_sm90_source(prob, in, source);
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* ck_attention forward, sm80 family (cp.async + ldmatrix + mma.sync), "
                   "instance m%dn%d w%d */\n#include \"ck_device.h\"\n",
                   in->tile_m, in->tile_n, in->warps);
    ck_attn_defines(prob, in, &b);
    ck_sbuf_printf(&b,
                   "#include \"ops/attention/fwd_sm80_pipeline_kernel.h\"\n"
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_attn_fwd_sm80(ck_attn_kargs ka)\n"
                   "{\n    attn_fwd_sm80_main(ka);\n}\n",
                   in->warps * 32);
    if (b.oom) {
        free(b.s);
        *source = NULL;
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

typedef struct build_ctx {
    const ck_attention_plan *plan;
} build_ctx;

static ck_status build_source(void *user, char **source)
{
    const build_ctx *b = user;
    return ck_attn_source(&b->plan->prob, &b->plan->inst, source);
}

static ck_status build_decode(void *user, char **source)
{
    const build_ctx *b = user;
    return ck_attn_decode_source(&b->plan->prob, &b->plan->inst, source);
}

static ck_status build_combine(void *user, char **source)
{
    const build_ctx *b = user;
    return ck_attn_combine_source(&b->plan->prob, source);
}

/* The decode instance's plan: the decode kernel, and the combine kernel with split-KV. With the
 * policy's parts (`choose`), they are chosen again from the resident blocks the driver reports
 * for the built kernel (its registers count too); the emulator keeps the policy's estimate. */
static ck_status decode_plan(ck_context *ctx, ck_attention_plan *plan, int choose)
{
    build_ctx b = {plan};
    char *key = ck_attn_decode_key(&plan->prob, &plan->inst);
    if (!key)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel key.");
    ck_status st = ck_op_kernel(ctx, key, "ck_attn_decode", build_decode, &b, &plan->kernel);
    free(key);
    if (!st && choose) {
        ck_launch_config cfg;
        int resident = 0;
        memset(&cfg, 0, sizeof cfg);
        cfg.block[0] = (unsigned)plan->inst.warps * 32;
        cfg.dynamic_shared_bytes = plan->shared;
        int sms = ck_op_props(ctx)->multiprocessors;
        if (ck_kernel_max_active(plan->kernel, &cfg, &resident) != CK_SUCCESS) {
            CK_LOG(CK_LOG_INFO, OP ": no occupancy for the decode kernel (%s); the policy's "
                                   "estimate of resident blocks stays.", ck_last_error());
            ck_clear_error();
            resident = 0;
        }
        if (resident > 0 && sms > 0)
            plan->inst.splits = ck_attn_decode_splits(&plan->prob, &plan->inst, sms,
                                                      (resident + sms - 1) / sms);
    }
    if (st || plan->inst.splits <= 1)
        return st;
    if (!(key = ck_attn_combine_key(&plan->prob)))
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel key.");
    st = ck_op_kernel(ctx, key, "ck_attn_combine", build_combine, &b, &plan->combine);
    free(key);
    return st;
}

/* The plan of the tuned instance (tune.c), when there is one: returns 1 with *st (the plan's
 * status), or 0 to take the policy's. The tuner's forced candidate that the plan refuses fails
 * (logged at info level: the tuner skips it); a table entry that no longer parses or runs falls
 * back to the policy with a warning. */
static int tuned_plan(ck_context *ctx, const ck_attn_prob *prob, ck_attention_plan **out,
                      ck_status *st)
{
    ck_attn_instance t;
    char text[CK_TUNING_INSTANCE_MAX];
    int forced = 0, has = ck_attn_tuned(ctx, prob, &t, text, sizeof text, &forced);
    if (has == 0)
        return 0;
    *st = has > 0 ? ck_attn_plan_create_instance(ctx, prob, &t, out)
                  : ck_fail(CK_ERROR_INVALID_ARGUMENT,
                            OP ": '%s' names no attention instance of this problem (e.g. "
                               "sm80.d%lld.dv%lld.m64n64.w4).",
                            text, (long long)prob->p.d, (long long)prob->p.d_v);
    if (*st == CK_SUCCESS) {
        (*out)->tuned = 1;
        return 1;
    }
    if (forced) {
        CK_LOG(CK_LOG_INFO, OP ": candidate %s skipped: %s", text, ck_last_error());
        return 1;
    }
    CK_LOG(CK_LOG_WARN,
           OP ": the tuning table's instance %s cannot run this problem (%s); the "
              "policy's instance instead.",
           text, ck_last_error());
    ck_clear_error();
    return 0;
}

ck_status ck_attn_plan_create_instance(ck_context *ctx, const ck_attn_prob *prob,
                                       const ck_attn_instance *want, ck_attention_plan **out)
{
    ck_attn_instance in;
    ck_status st;
    if (!want) {
        int tuned = tuned_plan(ctx, prob, out, &st);
        if (tuned)
            return st;
    }
    int decode = want ? want->decode : ck_attn_decode_ok(prob, 0);
    if (decode) {
        if ((st = ck_attn_decode_policy(prob, ck_op_props(ctx), want ? want->splits : 0, &in)) ||
            (want && (want->tile_n || want->stages) &&
             (st = ck_attn_decode_instance(prob, ck_op_props(ctx), want, &in))))
            return st;
    } else if ((st = ck_attn_policy(prob, ck_op_props(ctx), &in))) {
        return st;
    }
    if (want && !decode && ck_attn_is_sm90(want)) {
        char why[256];
        if (!ck_attn_sm90_supports(prob, ck_op_props(ctx), why, sizeof why))
            return ck_fail(CK_ERROR_UNSUPPORTED, OP ": %s", why);
        if (!ck_attn_sm90_shape_ok(prob, want))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": sm90 instance m%dn%d w%d; accepted: m128 w12 or m192 w16 with a "
                              "key tile of 64 to 192 rows in steps of 16 whose S and O "
                              "accumulators and P fit the consumers' registers (tile_n / 2 + "
                              "d_v / 2 + tile_n / 4 at most 192 with w12, 128 with w16; d_v = "
                              "%lld).",
                           want->tile_m, want->tile_n, want->warps, (long long)prob->p.d_v);
        if (ck_attn_sm90_shared_bytes(prob, want) > ck_op_props(ctx)->max_shared_per_block)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": sm90 instance m%dn%d needs %zu bytes of shared memory; the "
                              "device allows %zu per block.",
                           want->tile_m, want->tile_n, ck_attn_sm90_shared_bytes(prob, want),
                           ck_op_props(ctx)->max_shared_per_block);
        in = *want;
    } else if (want && !decode) {
        int w = want->warps;
        if (prob->p.dtype == CK_DTYPE_FP8_E4M3)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": fp8e4m3 inputs run on the sm90 kernel only, not on the sm80 "
                              "instance m%dn%d w%d.",
                           want->tile_m, want->tile_n, w);
        if ((w != 1 && w != 2 && w != 4 && w != 8) || want->tile_m < 16 * w ||
            want->tile_m % (16 * w) || want->tile_m / (16 * w) > 4 || want->tile_n < 16 ||
            want->tile_n > 128 || want->tile_n % 16)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": instance m%dn%d w%d; accepted: 1, 2, 4 or 8 warps of 16, 32, 48 "
                              "or 64 rows each, a key tile of 16 to 128 rows in steps of 16.",
                           want->tile_m, want->tile_n, w);
        if (ck_attn_shared_bytes(prob, want) > ck_op_props(ctx)->max_shared_per_block)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": instance m%dn%d w%d needs %zu bytes of shared memory; the device "
                              "allows %zu per block.",
                           want->tile_m, want->tile_n, w, ck_attn_shared_bytes(prob, want),
                           ck_op_props(ctx)->max_shared_per_block);
        in = *want;
    }
    int sm90 = ck_attn_is_sm90(&in);
    ck_attention_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan.");
    plan->ctx = ctx;
    plan->prob = *prob;
    plan->inst = in;
    plan->shared = decode ? ck_attn_decode_shared_bytes(prob, &in)
                   : sm90 ? ck_attn_sm90_shared_bytes(prob, &in)
                          : ck_attn_shared_bytes(prob, &in);
    const ck_attention_problem *p = &prob->p;
    plan->align_q = copy_vec(prob, &p->q) ? 16 : 2;
    plan->align_k = copy_vec(prob, &p->k) ? 16 : 2;
    plan->align_v = copy_vec(prob, &p->v) ? 16 : 2;
    plan->align_o = out_pair(prob, &p->o) ? 4 : 2;
    if (sm90)
        plan->align_q = plan->align_k = plan->align_v = plan->align_o = 16;
    ck_attn_instance_name(prob, &in, plan->name, sizeof plan->name);
    if (decode) {
        int choose = !(want && want->splits) && !ck_attn_decode_env_splits();
        if ((st = decode_plan(ctx, plan, choose))) {
            free(plan);
            return st;
        }
        ck_attn_instance_name(prob, &plan->inst, plan->name, sizeof plan->name);
        *out = plan;
        return CK_SUCCESS;
    }
    char *key = ck_attn_key(prob, &in);
    if (!key) {
        free(plan);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel key.");
    }
    build_ctx b = {plan};
    st = ck_op_kernel(ctx, key, sm90 ? "ck_attn_fwd_sm90" : "ck_attn_fwd_sm80", build_source, &b,
                      &plan->kernel);
    free(key);
    if (!st && p->dtype == CK_DTYPE_FP8_E4M3)
        st = ck_attn_fp8_workspace(ctx, prob, &plan->fp8);
    if (st) {
        free(plan);
        return st;
    }
    *out = plan;
    return CK_SUCCESS;
}

ck_status ck_attention_plan_create(ck_context *ctx, const ck_attention_problem *problem,
                                   ck_attention_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_create: ctx, problem and plan must not be NULL.");
    *plan = NULL;
    ck_attn_prob prob;
    ck_status st = ck_attn_prob_make(problem, &prob);
    if (st)
        return st;
    return ck_attn_plan_create_instance(ctx, &prob, NULL, plan);
}

const char *ck_attention_plan_name(const ck_attention_plan *plan)
{
    return plan ? plan->name : "";
}

int ck_attention_plan_tuned(const ck_attention_plan *plan)
{
    return plan ? plan->tuned : 0;
}

void ck_attention_plan_destroy(ck_attention_plan *plan)
{
    if (plan)
        ck_attn_fp8_workspace_free(plan->ctx, &plan->fp8);
    free(plan); /* the kernel belongs to the context's cache */
}

static ck_status check_ptr(const char *name, const void *ptr, unsigned align)
{
    if (!ptr)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_attention_plan_execute: pointer %s is NULL.",
                       name);
    if ((uintptr_t)ptr % align)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_execute: pointer %s = %p is not %u-byte aligned, which "
                       "this plan's kernel needs (its strides allow %s); ck_attention() picks "
                       "element-wise copies for such pointers.",
                       name, ptr, align, align == 16 ? "16-byte copies" : "paired stores");
    return CK_SUCCESS;
}

typedef struct range {
    uintptr_t lo, hi;
    const char *name;
} range;

static range span(const char *name, const void *ptr, const ck_attn_strides *st, int64_t b,
                  int64_t s, int64_t h, int64_t d, int es)
{
    range r = {(uintptr_t)ptr, (uintptr_t)ptr + (uintptr_t)(ck_attn_span(st, b, s, h, d) * es),
               name};
    return r;
}

/* fp8: the descales (4-byte aligned, or NULL for 1) and V^T, written into the plan's workspace
 * first (the kernel reads V through it). */
static ck_status fp8_args(ck_attention_plan *plan, const ck_attention_args *args, ck_attn_kargs *ka)
{
    const ck_attention_problem *p = &plan->prob.p;
    const float *d[3] = {args->descale_q, args->descale_k, args->descale_v};
    static const char *const names[3] = {"descale_q", "descale_k", "descale_v"};
    ck_status st;
    for (int i = 0; i < 3; ++i)
        if (d[i] && (st = check_ptr(names[i], d[i], 4)))
            return st;
    ka->descale_q = d[0], ka->descale_k = d[1], ka->descale_v = d[2];
    if (p->descale == CK_ATTN_DESCALE_HEAD)
        ka->descale_b = p->h_k, ka->descale_h = 1;
    ka->vt_keys = ck_attn_fp8_vt_keys(&plan->prob);
    ka->v = plan->fp8.vt;
    if (p->s_k == 0)
        return CK_SUCCESS;
    return ck_attn_fp8_transpose_v(plan->ctx, &plan->prob, &plan->fp8, args->v);
}

ck_status ck_attention_plan_execute(ck_attention_plan *plan, const ck_attention_args *args)
{
    if (!plan || !args)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_execute: plan and args must not be NULL.");
    const ck_attention_problem *p = &plan->prob.p;
    /* rows of Q / O and of K / V in the span of a batch: varlen packs every sequence into one */
    int64_t nb = p->varlen ? 1 : p->b, rq = p->varlen ? p->total_q : p->s_q;
    int64_t rk = p->varlen ? p->total_k : p->s_k;
    int64_t nbk = p->var.page_size ? p->var.num_pages : nb; /* paged: the pools */
    if (p->var.page_size)
        rk = p->var.page_size;
    if (p->b == 0 || rq == 0)
        return CK_SUCCESS;
    ck_status st;
    if (p->varlen && ((st = check_ptr("cu_seqlens_q", args->cu_seqlens_q, 4)) ||
                      (st = check_ptr("cu_seqlens_k", args->cu_seqlens_k, 4))))
        return st;
    if ((st = check_ptr("q", args->q, plan->align_q)) ||
        (rk > 0 && (st = check_ptr("k", args->k, plan->align_k))) ||
        (rk > 0 && (st = check_ptr("v", args->v, plan->align_v))) ||
        (st = check_ptr("o", args->o, plan->align_o)) ||
        (p->lse && (st = check_ptr("lse", args->lse, 4))))
        return st;
    if (!(args->scale >= 0.0f) || !isfinite(args->scale))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_execute: scale = %g; accepted: a positive finite "
                       "number, or 0 for 1 / sqrt(d).",
                       (double)args->scale);
    int es = p->dtype == CK_DTYPE_FP8_E4M3 ? 1 : 2; /* input element bytes (O: 2) */
    range in[3] = {span("q", args->q, &p->q, nb, rq, p->h_q, p->d, es),
                   span("k", args->k, &p->k, nbk, rk, p->h_k, p->d, es),
                   span("v", args->v, &p->v, nbk, rk, p->h_k, p->d_v, es)};
    range out[2] = {
        span("o", args->o, &p->o, nb, rq, p->h_q, p->d_v, 2),
        {(uintptr_t)args->lse, (uintptr_t)args->lse + (uintptr_t)(nb * p->h_q * rq * 4), "lse"}};
    for (int x = 0; x < 1 + p->lse; ++x) {
        for (int i = 0; i < 3 + x; ++i) {
            range r = i < 3 ? in[i] : out[0];
            if (r.lo < r.hi && r.lo < out[x].hi && out[x].lo < r.hi)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_attention_plan_execute: %s overlaps %s; the outputs (o, lse) "
                               "must not share memory with the inputs or each other.",
                               out[x].name, r.name);
        }
    }
    {
        const void *ptr[5] = {args->q, args->k, args->v, args->o, p->lse ? args->lse : NULL};
        size_t bytes[5];
        const char *names[5] = {"q", "k", "v", "o", "lse"};
        for (int i = 0; i < 5; ++i)
            bytes[i] = i < 3 ? in[i].hi - in[i].lo : out[i - 3].hi - out[i - 3].lo;
        if ((st = ck_attn_variants_disjoint(&plan->prob, args, ptr, bytes, names, 5, 2)))
            return st;
    }
    double scale = ck_attn_scale(&plan->prob, args->scale);
    ck_attn_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.q = args->q, ka.k = args->k, ka.v = args->v, ka.o = args->o;
    ka.lse = p->lse ? args->lse : NULL;
    ka.sq = p->s_q, ka.sk = p->s_k;
    ka.hq = (int)p->h_q, ka.group = (int)(p->h_q / p->h_k);
    ka.batches = p->b;
    ka.q_b = p->q.batch, ka.q_s = p->q.seq, ka.q_h = p->q.head;
    ka.k_b = p->k.batch, ka.k_s = p->k.seq, ka.k_h = p->k.head;
    ka.v_b = p->v.batch, ka.v_s = p->v.seq, ka.v_h = p->v.head;
    ka.o_b = p->o.batch, ka.o_s = p->o.seq, ka.o_h = p->o.head;
    ka.left = plan->prob.left, ka.right = plan->prob.right;
    ka.bottom_right = p->align == CK_ATTN_BOTTOM_RIGHT;
    if (p->varlen) {
        ka.cu_q = args->cu_seqlens_q, ka.cu_k = args->cu_seqlens_k;
        ka.total_q = p->total_q, ka.total_k = p->total_k;
    }
    ka.scale_log2 = (float)(scale * 1.4426950408889634);
    if (p->softcap > 0.0f) {
        ka.cap_in = (float)(scale / p->softcap);
        ka.cap_out = (float)(p->softcap / scale);
    }
    ka.inv_scale = (float)(1.0 / scale);
    if ((st = ck_attn_variants_args(&plan->prob, args, &ka)))
        return st;
    if (ka.dmask && (st = ck_memset_d8(ck_context_device(plan->ctx), ka.dmask, 0,
                                       (size_t)(p->b * p->h_q * p->s_q * p->s_k),
                                       ck_context_stream(plan->ctx))))
        return st;
    if (plan->inst.decode)
        return ck_attn_decode_launch(plan->ctx, &plan->prob, &plan->inst, plan->kernel,
                                     plan->combine, &ka, plan->shared);
    if (es == 1 && (st = fp8_args(plan, args, &ka)))
        return st;
    if (ck_attn_is_sm90(&plan->inst))
        return ck_attn_sm90_launch(plan->ctx, plan->kernel, &plan->prob, &plan->inst, &ka);
    void *argv[1] = {&ka};
    size_t sizes[1] = {sizeof ka};
    /* blocks along the rows (each walks every tile_m-th query tile of its sequence) */
    unsigned tiles = (unsigned)((p->s_q + plan->inst.tile_m - 1) / plan->inst.tile_m);
    tiles = tiles ? tiles : 1;
    return ck_op_launch(plan->ctx, plan->kernel, tiles, (unsigned)p->h_q, (unsigned)p->b,
                        (unsigned)plan->inst.warps * 32, plan->shared, argv, sizes, 1);
}

ck_status ck_attention(ck_context *ctx, const ck_attention_problem *problem,
                       const ck_attention_args *args)
{
    if (!ctx || !problem || !args)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": ctx, problem and args must not be NULL.");
    ck_attn_prob prob;
    ck_status st = ck_attn_prob_make(problem, &prob);
    if (st)
        return st;
    if ((uintptr_t)args->q % 16 || (uintptr_t)args->k % 16 || (uintptr_t)args->v % 16)
        prob.scalar_copy |= 1;
    if ((uintptr_t)args->o % 4)
        prob.scalar_copy |= 2;
    ck_attention_plan *plan = NULL;
    if ((st = ck_attn_plan_create_instance(ctx, &prob, NULL, &plan)))
        return st;
    st = ck_attention_plan_execute(plan, args);
    ck_attention_plan_destroy(plan);
    return st;
}
