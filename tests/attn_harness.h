/*
 * Shared by the attention tests: one case (problem + scale), random Q, K, V in [-1, 1], a run on
 * the context's device and a comparison of every element of O (and LSE) against the f64
 * reference row by row (ck_attn_reference_row) with the tolerances derived from the types;
 * O's padding (the elements between its rows) must keep its sentinel.
 */
#ifndef CK_TESTS_ATTN_HARNESS_H
#define CK_TESTS_ATTN_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/attention/attn_internal.h"
#include "test.h"

typedef struct acase {
    int64_t b, sq, sk, hq, hk, d, dv;
    ck_dtype dt;
    ck_attn_mask mask;
    ck_attn_align align;
    int64_t wl, wr;
    int lse;
    int bhsd; /* 1: [b, h, s, d] strides, else [b, s, h, d] */
    int pad;  /* extra elements after each row (the last dim) */
    float scale;
    int shift; /* > 0: every pointer moved by this many elements (unaligned), run through the
                  one-call ck_attention (element-wise copies and stores) */
    ck_attn_instance inst; /* tile_m 0: the policy's instance */
    float softcap;
    int varlen; /* 1: sequences of lq[b] queries and lk[b] keys packed (sq, sk: the hints) */
    int lq[8], lk[8];
    /* variants */
    int bias;         /* bit x: the bias has the full size along dim x of [b, h, s_q, s_k]
                         (else 1); bit 4: a bias at all */
    ck_dtype bias_dt; /* its type */
    int alibi;        /* 1: random slopes in [0, 0.5] */
    int page;         /* > 0: paged K / V with this page size (pages permuted) */
    int seqlens;      /* paged: lk[b] keys of sequence b (else s_k) */
    int bad_page;     /* paged: the last sequence's first page points past the pool */
    float dropout;    /* dropout probability */
    int dmask;        /* 1: also return the dropout mask and check it */
} acase;

static ck_context *a_ctx;
static uint64_t a_rng = 0x2545f4914f6cdd1dull;

static acase ac_base(int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hk, int64_t d)
{
    acase c;
    memset(&c, 0, sizeof c);
    c.b = b, c.sq = sq, c.sk = sk, c.hq = hq, c.hk = hk, c.d = d, c.dv = d;
    c.dt = CK_DTYPE_BF16;
    return c;
}

/* Strides of [b, s, h, d] (varlen: of [total, h, d], batch stride 0). */
static ck_attn_strides ac_strides(const acase *c, int64_t s, int64_t h, int64_t d)
{
    ck_attn_strides st;
    int64_t row = d + c->pad;
    if (c->bhsd) {
        st.seq = row, st.head = s * row, st.batch = h * s * row;
    } else {
        st.head = row, st.seq = h * row, st.batch = s * h * row;
    }
    if (c->varlen)
        st.batch = 0;
    return st;
}

/* Offsets of the varlen sequences: cu[0] = 0, cu[b + 1] = cu[b] + len[b]; returns the total. */
static int64_t ac_offsets(const acase *c, const int *len, int32_t *cu)
{
    cu[0] = 0;
    for (int64_t b = 0; b < c->b; ++b)
        cu[b + 1] = cu[b] + len[b];
    return cu[c->b];
}

static void ac_problem(const acase *c, ck_attention_problem *p)
{
    ck_attention_problem_init(p);
    p->b = c->b, p->s_q = c->sq, p->s_k = c->sk, p->h_q = c->hq, p->h_k = c->hk;
    p->d = c->d, p->d_v = c->dv, p->dtype = c->dt;
    int64_t rq = c->sq, rk = c->sk;
    if (c->varlen) {
        int32_t cu[9];
        p->varlen = 1;
        rq = p->total_q = ac_offsets(c, c->lq, cu);
        rk = p->total_k = ac_offsets(c, c->lk, cu);
    }
    p->q = ac_strides(c, rq, c->hq, c->d);
    p->k = ac_strides(c, rk, c->hk, c->d);
    p->v = ac_strides(c, rk, c->hk, c->dv);
    p->o = ac_strides(c, rq, c->hq, c->dv);
    p->mask = c->mask, p->align = c->align;
    p->window_left = c->wl, p->window_right = c->wr;
    p->lse = c->lse;
    p->softcap = c->softcap;
    if (c->bias & 16) {
        int64_t full[4] = {c->b, c->hq, c->sq, c->sk};
        p->var.bias.dtype = c->bias_dt;
        for (int x = 0; x < 4; ++x)
            p->var.bias.dims[x] = c->bias >> x & 1 ? full[x] : 1;
    }
    p->var.alibi = c->alibi;
    if (c->page) {
        p->var.page_size = c->page;
        p->var.max_pages = (c->sk + c->page - 1) / c->page + 1;
        p->var.num_pages = c->b * p->var.max_pages + 2;
        p->k = ac_strides(c, c->page, c->hk, c->d);
        p->v = ac_strides(c, c->page, c->hk, c->dv);
    }
    p->var.dropout_p = c->dropout;
}

static void ac_fill(uint16_t *x, size_t n, ck_dtype t)
{
    for (size_t i = 0; i < n; ++i) {
        double u = (double)(ckt_rand64(&a_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
        uint64_t code = 0;
        ck_convert_from_f64(t, u, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        x[i] = (uint16_t)code;
    }
}

static const uint16_t AC_SENTINEL = 0x7fc1; /* a NaN in bf16 and f16 */

/* Run one case; returns the number of wrong elements (each CHECKed). */
static long ac_run(const acase *c)
{
    ck_device *dev = ck_context_device(a_ctx);
    ck_attention_problem p;
    ac_problem(c, &p);
    ck_attn_prob prob;
    ck_status st = ck_attn_prob_make(&p, &prob);
    CHECK_MSG(st == CK_SUCCESS, "problem: %s", ck_last_error());
    if (st)
        return 1;
    ck_attention_plan *plan = NULL;
    st = c->inst.tile_m || c->inst.decode
             ? ck_attn_plan_create_instance(a_ctx, &prob, &c->inst, &plan)
             : ck_attention_plan_create(a_ctx, &p, &plan); /* shift: for its name */
    CHECK_MSG(st == CK_SUCCESS, "plan: %s", ck_last_error());
    if (st)
        return 1;
    const ck_attention_problem *q = &prob.p;
    int64_t nb = q->varlen ? 1 : q->b, rq = q->varlen ? q->total_q : q->s_q;
    int64_t rk = q->varlen ? q->total_k : q->s_k;
    int64_t nbk = q->var.page_size ? q->var.num_pages : nb; /* paged: the pools */
    if (q->var.page_size)
        rk = q->var.page_size;
    int32_t cuq[9] = {0}, cuk[9] = {0};
    void *dcu = NULL;
    if (q->varlen) {
        ac_offsets(c, c->lq, cuq);
        ac_offsets(c, c->lk, cuk);
    }
    size_t nq = (size_t)ck_attn_span(&q->q, nb, rq, q->h_q, q->d);
    size_t nk = (size_t)ck_attn_span(&q->k, nbk, rk, q->h_k, q->d);
    size_t nv = (size_t)ck_attn_span(&q->v, nbk, rk, q->h_k, q->d_v);
    size_t no = (size_t)ck_attn_span(&q->o, nb, rq, q->h_q, q->d_v);
    size_t nl = (size_t)(nb * q->h_q * rq);
    no += !no;            /* total_q = 0 */
    nk += !nk, nv += !nv; /* s_k = 0: a valid pointer all the same */
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nv * 2), *ho = malloc(no * 2);
    float *hl = malloc((nl + 1) * 4);
    double *ref = malloc((size_t)q->d_v * sizeof *ref);
    ac_fill(hq, nq, q->dtype);
    ac_fill(hk, nk, q->dtype);
    ac_fill(hv, nv, q->dtype);
    for (size_t i = 0; i < no; ++i)
        ho[i] = AC_SENTINEL;
    void *dq = NULL, *dk = NULL, *dv = NULL, *dO = NULL, *dl = NULL;
    size_t sh = (size_t)c->shift * 2;
    CHECK_OK(ck_malloc(dev, nq * 2 + sh, &dq));
    CHECK_OK(ck_malloc(dev, nk * 2 + sh, &dk));
    CHECK_OK(ck_malloc(dev, nv * 2 + sh, &dv));
    CHECK_OK(ck_malloc(dev, no * 2 + sh, &dO));
    CHECK_OK(ck_malloc(dev, (nl + 1) * 4, &dl));
    char *pq = (char *)dq + sh, *pk = (char *)dk + sh, *pv = (char *)dv + sh, *po = (char *)dO + sh;
    CHECK_OK(ck_memcpy_h2d(dev, pq, hq, nq * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, pk, hk, nk * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, pv, hv, nv * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, po, ho, no * 2, NULL));
    ck_attention_args args;
    ck_attention_args_init(&args);
    args.q = pq, args.k = pk, args.v = pv, args.o = po, args.lse = dl;
    args.scale = c->scale;
    if (q->varlen) {
        CHECK_OK(ck_malloc(dev, sizeof cuq + sizeof cuk, &dcu));
        CHECK_OK(ck_memcpy_h2d(dev, dcu, cuq, sizeof cuq, NULL));
        CHECK_OK(ck_memcpy_h2d(dev, (char *)dcu + sizeof cuq, cuk, sizeof cuk, NULL));
        args.cu_seqlens_q = dcu;
        args.cu_seqlens_k = (const int32_t *)((char *)dcu + sizeof cuq);
    }
    if (c->shift) /* the plan's 16-byte copies refuse these pointers; the one-call form not */
        CHECK_STATUS(ck_attention_plan_execute(plan, &args), CK_ERROR_INVALID_ARGUMENT);
    ck_attn_ref_in rin;
    memset(&rin, 0, sizeof rin);
    void *dvar = NULL; /* bias, slopes, table, seqlens, dropout mask */
    uint8_t *hmask = NULL;
    size_t nmask = (size_t)(q->b * q->h_q * q->s_q * q->s_k);
    void *hbias = NULL;
    float *hslopes = NULL;
    int32_t *htable = NULL, *hseq = NULL;
    {
        const ck_attn_variants *var = &q->var;
        size_t nbias = 0, es = var->bias.dtype == CK_DTYPE_F32 ? 4 : 2;
        if (ck_attn_bias_code(&prob))
            nbias = (size_t)(var->bias.dims[0] * var->bias.dims[1] * var->bias.dims[2] *
                             var->bias.dims[3]);
        size_t ntab = (size_t)(q->b * var->max_pages);
        size_t o_bias = 0, o_sl = (nbias * es + 15) / 16 * 16;
        size_t o_tab = o_sl + (size_t)q->h_q * 4 + 16, o_seq = o_tab + ntab * 4 + 16;
        size_t o_mask = o_seq + (size_t)q->b * 4 + 16, total = o_mask + nmask + 16;
        CHECK_OK(ck_malloc(dev, total, &dvar));
        char *base = dvar;
        hbias = malloc(nbias * es + 1);
        if (var->bias.dtype == CK_DTYPE_F32)
            for (size_t x = 0; x < nbias; ++x)
                ((float *)hbias)[x] =
                    (float)((double)(ckt_rand64(&a_rng) >> 11) * (4.0 / 9007199254740992.0) - 2);
        else
            ac_fill(hbias, nbias, var->bias.dtype);
        hslopes = malloc((size_t)q->h_q * 4);
        for (int64_t h = 0; h < q->h_q; ++h)
            hslopes[h] = (float)((double)(ckt_rand64(&a_rng) >> 40) / (double)(1 << 24) * 0.5);
        htable = malloc(ntab * 4 + 4), hseq = malloc((size_t)q->b * 4 + 4);
        if (var->page_size) {
            int32_t *perm = malloc((size_t)var->num_pages * 4);
            for (int64_t x = 0; x < var->num_pages; ++x)
                perm[x] = (int32_t)x;
            for (int64_t x = var->num_pages - 1; x > 0; --x) {
                int64_t y = (int64_t)(ckt_rand64(&a_rng) % (uint64_t)(x + 1));
                int32_t t = perm[x];
                perm[x] = perm[y], perm[y] = t;
            }
            for (size_t x = 0; x < ntab; ++x)
                htable[x] = perm[x];
            free(perm);
            if (c->bad_page)
                htable[(q->b - 1) * var->max_pages] = (int32_t)var->num_pages + 3;
            for (int64_t b = 0; b < q->b; ++b)
                hseq[b] = c->seqlens ? c->lk[b] : (int32_t)q->s_k;
        }
        CHECK_OK(ck_memcpy_h2d(dev, base + o_bias, hbias, nbias * es, NULL));
        CHECK_OK(ck_memcpy_h2d(dev, base + o_sl, hslopes, (size_t)q->h_q * 4, NULL));
        CHECK_OK(ck_memcpy_h2d(dev, base + o_tab, htable, ntab * 4, NULL));
        CHECK_OK(ck_memcpy_h2d(dev, base + o_seq, hseq, (size_t)q->b * 4, NULL));
        args.bias = nbias ? base + o_bias : NULL;
        args.alibi_slopes = var->alibi ? (const float *)(base + o_sl) : NULL;
        args.block_table = var->page_size ? (const int32_t *)(base + o_tab) : NULL;
        args.seqlens_k = c->seqlens ? (const int32_t *)(base + o_seq) : NULL;
        args.dropout_seed = 0x9e3779b97f4a7c15ull ^ ckt_rand64(&a_rng);
        args.dropout_offset = ckt_rand64(&a_rng) >> 20;
        args.dropout_mask = c->dmask ? (uint8_t *)(base + o_mask) : NULL;
        if (c->dmask)
            hmask = malloc(nmask + 1);
        rin.bias = hbias, rin.alibi = hslopes;
        rin.block_table = htable, rin.seqlens_k = c->seqlens ? hseq : NULL;
        rin.seed = args.dropout_seed, rin.offset = args.dropout_offset;
    }
    st = c->shift ? ck_attention(a_ctx, &p, &args) : ck_attention_plan_execute(plan, &args);
    CHECK_MSG(st == CK_SUCCESS, "execute: %s", ck_last_error());
    CHECK_OK(ck_context_synchronize(a_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, ho, po, no * 2, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, hl, dl, (nl + 1) * 4, NULL));
    double scale = ck_attn_scale(&prob, c->scale);
    rin.q = hq, rin.k = hk, rin.v = hv, rin.cu_q = cuq, rin.cu_k = cuk, rin.scale = scale;
    long bad = 0;
    if (hmask) { /* every element: 1 where visible and kept */
        CHECK_OK(ck_memcpy_d2h(dev, hmask, args.dropout_mask, nmask, NULL));
        for (int64_t b = 0; b < q->b; ++b) {
            int64_t sk = q->var.page_size && c->seqlens ? c->lk[b] : q->s_k, lo, hi;
            ck_attn_band(&prob, q->s_q, sk, &lo, &hi);
            for (int64_t h = 0; h < q->h_q; ++h)
                for (int64_t i = 0; i < q->s_q; ++i)
                    for (int64_t j = 0; j < q->s_k; ++j) {
                        int want = j < sk && j >= i + lo && j <= i + hi &&
                                   ck_attn_dropout_keep(&prob, rin.seed, rin.offset, b, h, i, j);
                        uint8_t got = hmask[((b * q->h_q + h) * q->s_q + i) * q->s_k + j];
                        if (got != want && bad++ < 5)
                            CHECK_MSG(0, "dropout mask [b%lld h%lld i%lld j%lld] = %d, want %d",
                                      (long long)b, (long long)h, (long long)i, (long long)j, got,
                                      want);
                    }
        }
    }
    unsigned char *written = calloc(no, 1);
    for (int64_t b = 0; b < q->b; ++b)
        for (int64_t h = 0; h < q->h_q; ++h) {
            int64_t len, first;
            ck_attn_seq(&prob, cuq, q->total_q, q->s_q, b, &len, &first);
            for (int64_t i = 0; i < len; ++i) {
                double lse, mag, smag;
                ck_attn_reference_row_in(&prob, &rin, b, h, i, ref, &lse, &mag, &smag);
                int64_t base = ck_attn_offset(&q->o, b, first + i, h);
                for (int64_t x = 0; x < q->d_v; ++x) {
                    double got = 0;
                    ck_convert_to_f64(q->dtype, ho[base + x], &got);
                    written[base + x] = 1;
                    double tol = ck_attn_tolerance_o(&prob, mag, smag, ref[x]);
                    if (isnan(ref[x]) ? !isnan(got) : !(fabs(got - ref[x]) <= tol)) {
                        if (bad++ < 5)
                            CHECK_MSG(0,
                                      "%s: O[b%lld h%lld i%lld c%lld] = %.8g, reference %.8g "
                                      "(tol %.3g)",
                                      ck_attention_plan_name(plan), (long long)b, (long long)h,
                                      (long long)i, (long long)x, got, ref[x], tol);
                    }
                }
                if (q->lse) {
                    double got =
                        hl[q->varlen ? h * q->total_q + first + i : (b * q->h_q + h) * q->s_q + i];
                    int ok = isnan(lse) ? isnan(got)
                             : isinf(lse)
                                 ? got == lse
                                 : fabs(got - lse) <= ck_attn_tolerance_lse(&prob, smag, lse);
                    if (!ok && bad++ < 5)
                        CHECK_MSG(0, "%s: LSE[b%lld h%lld i%lld] = %.8g, reference %.8g",
                                  ck_attention_plan_name(plan), (long long)b, (long long)h,
                                  (long long)i, got, lse);
                }
            }
        }
    for (size_t i = 0; i < no; ++i)
        if (!written[i] && ho[i] != AC_SENTINEL && bad++ < 5)
            CHECK_MSG(0, "O padding element %zu overwritten", i);
    if (!bad)
        CHECK(1);
    else
        fprintf(stderr,
                "  case b%lld sq%lld sk%lld hq%lld hk%lld d%lld dv%lld %s mask %d align %d "
                "w(%lld,%lld) lse %d bhsd %d pad %d: %ld wrong\n",
                (long long)c->b, (long long)c->sq, (long long)c->sk, (long long)c->hq,
                (long long)c->hk, (long long)c->d, (long long)c->dv, ck_dtype_name(c->dt),
                (int)c->mask, (int)c->align, (long long)c->wl, (long long)c->wr, c->lse, c->bhsd,
                c->pad, bad);
    free(written);
    ck_free(dev, dvar);
    free(hbias), free(hslopes), free(htable), free(hseq), free(hmask);
    ck_free(dev, dq);
    ck_free(dev, dk);
    ck_free(dev, dv);
    ck_free(dev, dO);
    ck_free(dev, dl);
    ck_free(dev, dcu);
    free(hq), free(hk), free(hv), free(ho), free(hl), free(ref);
    ck_attention_plan_destroy(plan);
    return bad;
}

#endif
