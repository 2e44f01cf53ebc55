/*
 * `ck prof attention`: one fused attention forward through a plan, checked against the f64 CPU
 * reference (every row, or 64 sampled rows for big problems: O and LSE), timed; prints time and
 * TFLOP/s (2 s_q s_k (d + d_v) per head = 4 s_q s_k d when d_v = d; halved for causal masks as
 * FlashAttention counts; a window counts its visible pairs) and GB/s (the bytes of Q, K, V and O
 * once: the measure of the bandwidth-bound decode shapes). The variants: a bias, ALiBi, paged
 * K / V (pages in a random order), split-KV (the decode kernel), dropout.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tune.h"
#include "ck/tuning.h"
#include "cli.h"
#include "ops/attention/attn_internal.h"
#include "prof.h"

static const char attention_help[] =
    "Usage: ck prof attention --sq S --sk S [OPTIONS]\n"
    "\n"
    "O = softmax(scale Q K^T + mask) V (fused, FlashAttention-2 style) through an attention\n"
    "plan; prints time, TFLOP/s and the check against the f64 CPU reference.\n"
    "  --b N              batch (default 1)\n"
    "  --h N              query heads (default 1)\n"
    "  --hk N             key/value heads (default --h; a divisor of it: GQA, 1: MQA)\n"
    "  --sq N --sk N      query and key sequence lengths\n"
    "  --d N --dv N       head dims of Q/K and V/O: 32 64 96 128 192 256 (default 128; dv = d)\n"
    "  --dtype T          bf16, f16 or e4m3 (fp8 Q, K, V with descales 0.5, 0.5, 1 and bf16\n"
    "                     O: the sm90 kernel; default bf16)\n"
    "  --mask M           none, causal (top-left), causal-br (bottom-right), window:L,R\n"
    "                     (top-left; -1 unbounded) or window-br:L,R (default none)\n"
    "  --layout L         bshd or bhsd (default bshd)\n"
    "  --scale X          softmax scale (default 1/sqrt(d))\n"
    "  --lse              also write the log-sum-exp (f32 [b, h, sq])\n"
    "  --softcap X        soft-cap the scores: X tanh(S / X)\n"
    "  --instance MxNxW   the block shape instead of the policy's: M query rows, N key rows\n"
    "                     per tile, W warps (e.g. 128x64x4: the sm80 kernel; 128x128x12:\n"
    "                     the sm90 kernel, two consumer warpgroups and a producer;\n"
    "                     192x128x16: three consumer warpgroups). The sm90 policy's\n"
    "                     switches: CK_ATTN_SM90_ORDER=linear|snake|lpt,\n"
    "                     CK_ATTN_SM90_CONSUMERS=2|3, CK_ATTN_SM90_TILE_N=64..192\n"
    "                     (docs/ops-attention.md)\n"
    "  --bias DIMS[:T]    an additive bias, full along the dims named by the letters of DIMS\n"
    "                     (b, h, q, k; others broadcast, e.g. hqk or qk), of type T (f32,\n"
    "                     bf16 or f16; default the inputs')\n"
    "  --alibi            ALiBi with the standard slopes 2^(-8 (h + 1) / H)\n"
    "  --paged PAGE       K and V in a paged cache of PAGE-row pages in a random order\n"
    "  --splitkv N        the decode kernel (s_q <= 16) with the keys split into N parts;\n"
    "                     with --instance RxNxW: R query rows per block, N keys per warp\n"
    "  --dropout P        dropout with probability P (seed 1, offset 0)\n"
    "  --tune             first time every candidate instance of the problem and store the\n"
    "                     fastest in the tuning table (as `ck tune attention`); plans of the\n"
    "                     same problem on this device take it from then on\n";

typedef struct a_job {
    ck_context *ctx;
    ck_attention_plan *plan;
    ck_attention_args args;
} a_job;

static ck_status run_attention(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    a_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    return ck_attention_plan_execute(j->plan, &j->args);
}

static ck_attn_strides layout(int bhsd, int64_t s, int64_t h, int64_t d)
{
    ck_attn_strides st;
    if (bhsd)
        st.seq = d, st.head = s * d, st.batch = h * s * d;
    else
        st.head = d, st.seq = h * d, st.batch = s * h * d;
    return st;
}

static int parse_mask(const char *v, ck_attention_problem *p)
{
    long long l = 0, r = 0;
    char tail = 0;
    if (!strcmp(v, "none"))
        p->mask = CK_ATTN_MASK_NONE;
    else if (!strcmp(v, "causal"))
        p->mask = CK_ATTN_MASK_CAUSAL, p->align = CK_ATTN_TOP_LEFT;
    else if (!strcmp(v, "causal-br"))
        p->mask = CK_ATTN_MASK_CAUSAL, p->align = CK_ATTN_BOTTOM_RIGHT;
    else if (sscanf(v, "window:%lld,%lld%c", &l, &r, &tail) == 2)
        p->mask = CK_ATTN_MASK_WINDOW, p->align = CK_ATTN_TOP_LEFT;
    else if (sscanf(v, "window-br:%lld,%lld%c", &l, &r, &tail) == 2)
        p->mask = CK_ATTN_MASK_WINDOW, p->align = CK_ATTN_BOTTOM_RIGHT;
    else
        return 0;
    p->window_left = l, p->window_right = r;
    return 1;
}

/* Query-key pairs the mask leaves visible, per head (causal: half, as FlashAttention counts). */
static double visible_pairs(const ck_attn_prob *prob)
{
    const ck_attention_problem *p = &prob->p;
    if (p->mask == CK_ATTN_MASK_NONE)
        return (double)p->s_q * (double)p->s_k;
    if (p->mask == CK_ATTN_MASK_CAUSAL)
        return 0.5 * (double)p->s_q * (double)p->s_k;
    double n = 0;
    for (int64_t i = 0; i < p->s_q; ++i) {
        int64_t lo = i + prob->lo < 0 ? 0 : i + prob->lo;
        int64_t hi = i + prob->hi > p->s_k - 1 ? p->s_k - 1 : i + prob->hi;
        n += hi >= lo ? (double)(hi - lo + 1) : 0;
    }
    return n;
}

/* Bytes of an element of Q, K, V (fp8: 1; O is bf16 then) . */
static int in_bytes(ck_dtype t)
{
    return t == CK_DTYPE_FP8_E4M3 ? 1 : 2;
}

/* n codes of type t (2 bytes, or 1 for fp8) of uniform values in [-1, 1]. */
static void fill(void *x, size_t n, ck_dtype t, unsigned *state)
{
    int es = in_bytes(t);
    if (n > (1u << 20)) { /* big (decode's K / V pools): draws from 4096 exact conversions */
        uint16_t table[4096];
        fill(table, 4096, t == CK_DTYPE_FP8_E4M3 ? CK_DTYPE_BF16 : t, state);
        if (es == 1)
            for (int i = 0; i < 4096; ++i) {
                double v = 0;
                uint64_t code = 0;
                ck_convert_to_f64(CK_DTYPE_BF16, table[i], &v);
                ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
                table[i] = (uint16_t)code;
            }
        unsigned s = *state ? *state : 1u;
        for (size_t i = 0; i < n; ++i) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            if (es == 1)
                ((uint8_t *)x)[i] = (uint8_t)table[s >> 20];
            else
                ((uint16_t *)x)[i] = table[s >> 20];
        }
        *state = s;
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        float u;
        prof_fill_uniform(&u, 1, -1, 1, state);
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        if (es == 1)
            ((uint8_t *)x)[i] = (uint8_t)code;
        else
            ((uint16_t *)x)[i] = (uint16_t)code;
    }
}

static int run_prof(const char *sub, const prof_common *c, const ck_attention_problem *p,
                    float scale, const ck_attn_instance *inst, int tune);

/* --bias DIMS[:T] */
static int parse_bias(const char *v, ck_attention_problem *p)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    ck_attn_bias *b = &p->var.bias;
    b->dtype = p->dtype;
    if (colon && (ck_dtype_from_name(colon + 1, &b->dtype) != CK_SUCCESS))
        return 0;
    for (int x = 0; x < 4; ++x)
        b->dims[x] = 1;
    for (size_t i = 0; i < n; ++i) {
        const char *at = strchr("bhqk", v[i]);
        if (!at || !v[i])
            return 0;
        b->dims[at - "bhqk"] = -1; /* the full size, once the sizes are known */
    }
    return 1;
}

int prof_attention(int argc, char **argv)
{
    const char *sub = "prof attention";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("%s%s", attention_help, prof_common_help);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    ck_attention_problem p;
    ck_attention_problem_init(&p);
    p.b = p.h_q = 1, p.d = 128;
    long long hk = 0, dv = 0;
    int bhsd = 0;
    double scale = 0;
    ck_attn_instance inst = {0};
    int tune = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--tune")) {
            tune = 1;
            continue;
        }
        if (!strcmp(a, "--lse")) {
            p.lse = 1;
            continue;
        }
        if (!strcmp(a, "--alibi")) {
            p.var.alibi = 1;
            continue;
        }
        static const char *const valued[] = {
            "--b",       "--h",     "--hk",    "--sq",      "--sk",     "--d",
            "--dv",      "--dtype", "--mask",  "--layout",  "--scale",  "--instance",
            "--softcap", "--bias",  "--paged", "--splitkv", "--dropout"};
        int known = 0;
        for (size_t o = 0; o < sizeof valued / sizeof valued[0]; ++o)
            known |= !strcmp(a, valued[o]);
        if (!known)
            return prof_unknown_argument(sub, a);
        if (i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--dtype")) {
            if (!strcmp(v, "e4m3"))
                p.dtype = CK_DTYPE_FP8_E4M3;
            else if (ck_dtype_from_name(v, &p.dtype) != CK_SUCCESS)
                return cli_usage_error(sub, "--dtype %s: unknown type.", v);
        } else if (!strcmp(a, "--mask")) {
            if (!parse_mask(v, &p))
                return cli_usage_error(sub,
                                       "--mask %s: expected none, causal, causal-br, window:L,R "
                                       "or window-br:L,R.",
                                       v);
        } else if (!strcmp(a, "--layout")) {
            if (strcmp(v, "bshd") && strcmp(v, "bhsd"))
                return cli_usage_error(sub, "--layout %s: expected bshd or bhsd.", v);
            bhsd = !strcmp(v, "bhsd");
        } else if (!strcmp(a, "--instance")) {
            long long t[3];
            if (prof_parse_list(v, t, 3, 1, 1024) != 3)
                return cli_usage_error(sub, "--instance %s: expected MxNxW, e.g. 128x64x4.", v);
            inst.tile_m = (int)t[0], inst.tile_n = (int)t[1], inst.warps = (int)t[2];
        } else if (!strcmp(a, "--bias")) {
            if (!parse_bias(v, &p))
                return cli_usage_error(sub,
                                       "--bias %s: expected the full dims among b, h, q, k and "
                                       "optionally :f32, :bf16 or :f16 (e.g. hqk:f32).",
                                       v);
        } else if (!strcmp(a, "--paged")) {
            long long x;
            if (prof_parse_list(v, &x, 1, 1, 1 << 20) != 1)
                return cli_usage_error(sub, "--paged %s: expected a page size (rows).", v);
            p.var.page_size = x;
        } else if (!strcmp(a, "--splitkv")) {
            long long x;
            if (prof_parse_list(v, &x, 1, 1, 64) != 1)
                return cli_usage_error(sub, "--splitkv %s: expected 1 to 64 parts.", v);
            inst.decode = 1, inst.splits = (int)x;
        } else if (!strcmp(a, "--dropout")) {
            double x = 0;
            if ((rc = prof_parse_double(sub, a, v, &x)) != CK_EXIT_OK)
                return rc;
            p.var.dropout_p = (float)x;
        } else if (!strcmp(a, "--softcap")) {
            double x = 0;
            if ((rc = prof_parse_double(sub, a, v, &x)) != CK_EXIT_OK)
                return rc;
            p.softcap = (float)x;
        } else if (!strcmp(a, "--scale")) {
            if ((rc = prof_parse_double(sub, a, v, &scale)) != CK_EXIT_OK)
                return rc;
        } else {
            long long x;
            if (prof_parse_list(v, &x, 1, !strcmp(a, "--sk") ? 0 : 1, 1LL << 31) != 1)
                return cli_usage_error(sub, "%s %s: expected a whole number from %d to 2^31.", a, v,
                                       !strcmp(a, "--sk") ? 0 : 1);
            if (!strcmp(a, "--b"))
                p.b = x;
            else if (!strcmp(a, "--h"))
                p.h_q = x;
            else if (!strcmp(a, "--hk"))
                hk = x;
            else if (!strcmp(a, "--sq"))
                p.s_q = x;
            else if (!strcmp(a, "--sk"))
                p.s_k = x;
            else if (!strcmp(a, "--d"))
                p.d = x;
            else
                dv = x;
        }
    }
    if (p.s_q == 0)
        return cli_usage_error(sub, "--sq and --sk are required.");
    p.h_k = hk ? hk : p.h_q;
    p.d_v = dv ? dv : p.d;
    p.q = layout(bhsd, p.s_q, p.h_q, p.d);
    p.k = layout(bhsd, p.s_k, p.h_k, p.d);
    p.v = layout(bhsd, p.s_k, p.h_k, p.d_v);
    p.o = layout(bhsd, p.s_q, p.h_q, p.d_v);
    int64_t full[4] = {p.b, p.h_q, p.s_q, p.s_k};
    for (int x = 0; x < 4; ++x)
        if (p.var.bias.dims[x] == -1)
            p.var.bias.dims[x] = full[x];
    if (p.var.page_size) { /* pools of exactly the pages needed, [pages, page, h, d] */
        p.var.max_pages = (p.s_k + p.var.page_size - 1) / p.var.page_size;
        p.var.max_pages += !p.var.max_pages;
        p.var.num_pages = p.b * p.var.max_pages;
        p.k = layout(bhsd, p.var.page_size, p.h_k, p.d);
        p.v = layout(bhsd, p.var.page_size, p.h_k, p.d_v);
    }
    if ((double)p.b * p.h_q * p.s_q * (p.d > p.d_v ? p.d : p.d_v) > (double)PROF_MAX_ELEMENTS ||
        (double)p.b * p.h_k * p.s_k * (p.d > p.d_v ? p.d : p.d_v) > (double)PROF_MAX_ELEMENTS)
        return cli_usage_error(sub, "the tensors would exceed 2^40 elements.");
    if (tune && (inst.tile_m || inst.decode))
        return cli_usage_error(sub, "--tune times every instance; it takes no --instance or "
                                    "--splitkv.");
    return run_prof(sub, &c, &p, (float)scale, inst.tile_m || inst.decode ? &inst : NULL, tune);
}

static int run_prof(const char *sub, const prof_common *c, const ck_attention_problem *p,
                    float scale, const ck_attn_instance *inst, int tune)
{
    ck_context *ctx = NULL;
    if (ck_context_create(c->backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device_props props;
    ck_device_get_props(ck_context_device(ctx), &props);
    int result = CK_EXIT_FAILURE;
    ck_attn_prob prob;
    ck_attention_plan *plan = NULL;
    enum { NBUF = 9 }; /* q, k, v, o, lse, bias, ALiBi slopes, block table, fp8 descales */
    void *h[NBUF] = {0}, *d[NBUF] = {0};
    double *ref = NULL;
    if (ck_attn_prob_make(p, &prob) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    const ck_attention_problem *q = &prob.p;
    const ck_attn_variants *var = &q->var;
    int64_t nbk = var->page_size ? var->num_pages : q->b,
            rk = var->page_size ? var->page_size : q->s_k;
    int bias_code = ck_attn_bias_code(&prob);
    size_t nbias = bias_code ? (size_t)(var->bias.dims[0] * var->bias.dims[1] * var->bias.dims[2] *
                                        var->bias.dims[3])
                             : 0;
    size_t es = (size_t)in_bytes(q->dtype);
    size_t sz[NBUF] = {(size_t)ck_attn_span(&q->q, q->b, q->s_q, q->h_q, q->d) * es,
                       (size_t)ck_attn_span(&q->k, nbk, rk, q->h_k, q->d) * es + 16,
                       (size_t)ck_attn_span(&q->v, nbk, rk, q->h_k, q->d_v) * es + 16,
                       (size_t)ck_attn_span(&q->o, q->b, q->s_q, q->h_q, q->d_v) * 2,
                       (size_t)(q->b * q->h_q * q->s_q) * 4,
                       nbias * (bias_code == 1 ? 4 : 2) + 4,
                       (size_t)q->h_q * 4,
                       (size_t)(q->b * var->max_pages) * 4 + 4,
                       3 * 4};
    ck_device *dev = ck_context_device(ctx);
    unsigned state = c->seed;
    for (int i = 0; i < NBUF; ++i) {
        h[i] = malloc(sz[i]);
        if (!h[i]) {
            fprintf(stderr, "ck %s: out of host memory for %zu bytes.\n", sub, sz[i]);
            goto done;
        }
        if (i < 3)
            fill(h[i], sz[i] / es, q->dtype, &state);
        if (i == 8) /* fp8's descales of Q, K, V */
            ((float *)h[i])[0] = ((float *)h[i])[1] = 0.5f, ((float *)h[i])[2] = 1.0f;
        if (i == 5 && bias_code == 1)
            prof_fill_uniform(h[i], nbias, -1, 1, &state);
        else if (i == 5)
            fill(h[i], nbias, var->bias.dtype, &state);
        for (int64_t x = 0; i == 6 && x < q->h_q; ++x) /* ALiBi's geometric slopes */
            ((float *)h[i])[x] = (float)pow(2.0, -8.0 * (double)(x + 1) / (double)q->h_q);
        if (i == 7) { /* the pages in a random order */
            int32_t *t = h[i];
            int64_t n = q->b * var->max_pages;
            for (int64_t x = 0; x < n; ++x)
                t[x] = (int32_t)x;
            for (int64_t x = n - 1; x > 0; --x) {
                float u;
                prof_fill_uniform(&u, 1, 0, 1, &state);
                int64_t y = (int64_t)(u * (float)(x + 1));
                y = y > x ? x : y;
                int32_t tmp = t[x];
                t[x] = t[y], t[y] = tmp;
            }
        }
        if (ck_malloc(dev, sz[i], &d[i]) != CK_SUCCESS ||
            (i != 3 && i != 4 && ck_memcpy_h2d(dev, d[i], h[i], sz[i], NULL) != CK_SUCCESS)) {
            result = cli_library_error(sub);
            goto done;
        }
    }
    a_job job = {ctx, plan, {0}};
    ck_attention_args_init(&job.args);
    job.args.q = d[0], job.args.k = d[1], job.args.v = d[2], job.args.o = d[3];
    job.args.lse = d[4], job.args.scale = scale;
    job.args.bias = bias_code ? d[5] : NULL;
    job.args.alibi_slopes = var->alibi ? d[6] : NULL;
    job.args.block_table = var->page_size ? d[7] : NULL;
    job.args.dropout_seed = 1, job.args.dropout_offset = 0;
    if (es == 1)
        job.args.descale_q = d[8], job.args.descale_k = (const float *)d[8] + 1,
        job.args.descale_v = (const float *)d[8] + 2;
    if (tune) {
        char best[CK_TUNING_INSTANCE_MAX];
        double best_ms = 0;
        if (ck_attention_tune(ctx, p, &job.args, prof_tune_reps(ctx, c), prof_tune_progress,
                              (void *)c, best, sizeof best, &best_ms) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        if (!c->json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    /* after tuning: the policy's plan then takes the table's instance */
    if (ck_attn_plan_create_instance(ctx, &prob, inst, &plan) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    job.plan = plan;
    ck_attn_ref_in rin;
    memset(&rin, 0, sizeof rin);
    rin.q = h[0], rin.k = h[1], rin.v = h[2];
    rin.bias = bias_code ? h[5] : NULL, rin.alibi = h[6], rin.block_table = h[7];
    rin.seed = 1, rin.offset = 0;
    ck_attn_ref_fp8 fx = {0, 0};
    if (es == 1)
        rin.descale_q = h[8], rin.descale_k = (const float *)h[8] + 1,
        rin.descale_v = (const float *)h[8] + 2, rin.fp8_out = &fx;
    if (run_attention(&job, ck_context_stream(ctx), 0) != CK_SUCCESS ||
        ck_context_synchronize(ctx) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, h[3], d[3], sz[3], NULL) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, h[4], d[4], sz[4], NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    /* the check: every row, or 64 rows sampled over (batch, head, row) for big problems */
    int ok = 1;
    double max_err = 0, sc = ck_attn_scale(&prob, scale);
    long long rows = 0, total = q->b * q->h_q * q->s_q;
    int sampled = (double)total * (double)q->s_k * (double)(q->d + q->d_v) > 1e9 && total > 64;
    if (!(ref = malloc((size_t)q->d_v * sizeof *ref))) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    for (long long r = 0; c->check && r < (sampled ? 64 : total); ++r, ++rows) {
        long long x = sampled ? (long long)((unsigned long long)r * 2654435761ull % total) : r;
        long long i = x % q->s_q, hh = x / q->s_q % q->h_q, b = x / q->s_q / q->h_q;
        double lse, mag, smag;
        rin.scale = sc;
        ck_attn_reference_row_in(&prob, &rin, b, hh, i, ref, &lse, &mag, &smag);
        const uint16_t *o = (const uint16_t *)h[3] + ck_attn_offset(&q->o, b, i, hh);
        for (long long e = 0; e < q->d_v; ++e) {
            double got = 0;
            ck_convert_to_f64(es == 1 ? CK_DTYPE_BF16 : q->dtype, o[e], &got);
            double err = fabs(got - ref[e]);
            double tol = es == 1
                             ? ck_attn_tolerance_o_fp8(&prob, mag, smag, fx.vsum, fx.amb, ref[e], 0)
                             : ck_attn_tolerance_o(&prob, mag, smag, ref[e]);
            if (!(err <= tol))
                ok = 0;
            if (err > max_err)
                max_err = err;
        }
        if (q->lse) {
            double got = ((const float *)h[4])[x];
            if (isinf(lse) ? got != lse
                           : !(fabs(got - lse) <= ck_attn_tolerance_lse(&prob, smag, lse)))
                ok = 0;
        }
    }
    double ms = 0;
    if (prof_time(ctx, c, run_attention, &job, &ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    double flops =
        2.0 * (double)q->b * (double)q->h_q * visible_pairs(&prob) * (double)(q->d + q->d_v);
    double tflops = flops / (ms * 1e-3) / 1e12;
    double bytes = (double)q->b *
                       ((double)q->h_k * (double)q->s_k * (double)(q->d + q->d_v) +
                        (double)q->h_q * (double)q->s_q * (double)q->d) *
                       (double)es +
                   2.0 * (double)q->b * (double)q->h_q * (double)q->s_q * (double)q->d_v;
    double gbps = bytes / (ms * 1e-3) / 1e9;
    static const char *masks[] = {"none", "causal", "window"};
    char check[128];
    if (!c->check)
        snprintf(check, sizeof check, "not checked");
    else
        snprintf(check, sizeof check, "%s (max error %.3g, %s%lld rows)", ok ? "ok" : "FAILED",
                 max_err, sampled ? "sampled " : "", rows);
    if (c->json)
        printf("{\"op\": \"attention\", \"b\": %lld, \"h\": %lld, \"hk\": %lld, \"sq\": %lld, "
               "\"sk\": %lld, \"d\": %lld, \"dv\": %lld, \"dtype\": \"%s\", \"mask\": \"%s\", "
               "\"align\": \"%s\", \"instance\": \"%s\", \"device\": \"%s\", \"ms\": %.6f, "
               "\"tflops\": %.3f, \"gbps\": %.2f, \"ok\": %s}\n",
               (long long)q->b, (long long)q->h_q, (long long)q->h_k, (long long)q->s_q,
               (long long)q->s_k, (long long)q->d, (long long)q->d_v, ck_dtype_name(q->dtype),
               masks[q->mask], q->align ? "bottom-right" : "top-left", ck_attention_plan_name(plan),
               props.name, ms, tflops, gbps, ok ? "true" : "false");
    else
        printf("attention b%lld h%lld/%lld sq%lld sk%lld d%lld dv%lld %s mask %s (%s) on %s\n"
               "  instance %s\n  time %.4f ms, %.2f TFLOP/s, %.1f GB/s\n  check %s\n",
               (long long)q->b, (long long)q->h_q, (long long)q->h_k, (long long)q->s_q,
               (long long)q->s_k, (long long)q->d, (long long)q->d_v, ck_dtype_name(q->dtype),
               masks[q->mask], q->align ? "bottom-right" : "top-left", props.name,
               ck_attention_plan_name(plan), ms, tflops, gbps, check);
    result = ok ? CK_EXIT_OK : CK_EXIT_FAILURE;
done:
    for (int i = 0; i < NBUF; ++i) {
        free(h[i]);
        ck_free(ck_context_device(ctx), d[i]);
    }
    free(ref);
    ck_attention_plan_destroy(plan);
    ck_context_destroy(ctx);
    return result;
}
