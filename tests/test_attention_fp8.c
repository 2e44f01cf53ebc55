/*
 * fp8 e4m3 attention on the sm90 kernel (src/ops/attention/sm90_fp8.c, fwd_sm90_fp8_kernel.h)
 * on the device CK_DEVICE chooses (the emulator in CI; an sm_90a GPU): random e4m3 Q, K, V with
 * random descales (one per tensor, or per batch and key/value head), O bf16 and LSE checked
 * element by element against two f64 references: the exact softmax (bound: P's rounding to e4m3,
 * 2^-4 relative per term) and one that rounds P as the kernel does (tile by tile, relative to the
 * running max; a tight bound: f32 terms and the roundings that could go either way). The tight
 * bound must also fail against the exact reference on a large enough case (P is really rounded,
 * and the test can tell). Covered: d 64, 128, 256 (key tiles of 128 and 64: both V^T line
 * widths), s_q and s_k not multiples of the tiles (the staging chunk of V^T's last keys), masks
 * and alignments, GQA 1 / 2 / 8, BHSD with padded rows, the soft-cap, rows that see no key, s_k
 * = 0; e4m3 packing against ck_convert; the refusals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/attention/attn_internal.h"
#include "test.h"

static ck_context *f_ctx;
static uint64_t f_rng = 0x9e3779b97f4a7c15ull;

typedef struct fcase {
    int64_t b, sq, sk, hq, hk, d, dv;
    ck_attn_mask mask;
    ck_attn_align align;
    int64_t wl, wr;
    int bhsd, pad, per_head, tile_n;
    float softcap, range; /* Q, K, V values uniform in [-range, range] before rounding */
    double *dist;         /* non-NULL: sum |O - P-rounded reference| and |O - exact reference| */
} fcase;

static fcase f_base(int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hk, int64_t d)
{
    fcase c;
    memset(&c, 0, sizeof c);
    c.b = b, c.sq = sq, c.sk = sk, c.hq = hq, c.hk = hk, c.d = c.dv = d;
    c.range = 3.0f;
    return c;
}

static double f_unif(void)
{
    return (double)(ckt_rand64(&f_rng) >> 11) * (1.0 / 9007199254740992.0);
}

static ck_attn_strides f_strides(const fcase *c, int64_t s, int64_t h, int64_t d)
{
    ck_attn_strides st;
    int64_t row = d + c->pad;
    if (c->bhsd)
        st.seq = row, st.head = s * row, st.batch = h * s * row;
    else
        st.head = row, st.seq = h * row, st.batch = s * h * row;
    return st;
}

static void f_problem(const fcase *c, ck_attention_problem *p)
{
    ck_attention_problem_init(p);
    p->b = c->b, p->s_q = c->sq, p->s_k = c->sk, p->h_q = c->hq, p->h_k = c->hk;
    p->d = c->d, p->d_v = c->dv, p->dtype = CK_DTYPE_FP8_E4M3;
    p->q = f_strides(c, c->sq, c->hq, c->d);
    p->k = f_strides(c, c->sk, c->hk, c->d);
    p->v = f_strides(c, c->sk, c->hk, c->dv);
    p->o = f_strides(c, c->sq, c->hq, c->dv);
    p->mask = c->mask, p->align = c->align, p->window_left = c->wl, p->window_right = c->wr;
    p->lse = 1, p->softcap = c->softcap;
    p->descale = c->per_head ? CK_ATTN_DESCALE_HEAD : CK_ATTN_DESCALE_TENSOR;
}

static void f_fill(unsigned char *x, size_t n, float range)
{
    for (size_t i = 0; i < n; ++i) {
        uint64_t code = 0;
        ck_convert_from_f64(CK_DTYPE_FP8_E4M3, (2 * f_unif() - 1) * range, CK_ROUND_NEAREST_EVEN,
                            CK_OVERFLOW_DEFAULT, 0, &code);
        x[i] = (unsigned char)code;
    }
}

/* The key tile of an sm90 plan's name ("sm90.d128.dv128.m128n128.w12"). */
static int f_tile_n(const char *name)
{
    const char *m = strstr(name, ".m");
    const char *n = m ? strchr(m + 2, 'n') : NULL;
    return n ? atoi(n + 1) : 0;
}

/* Run one case: every O and LSE element against both references; returns the wrong ones. */
static long f_run(const fcase *c)
{
    ck_device *dev = ck_context_device(f_ctx);
    ck_attention_problem p;
    f_problem(c, &p);
    ck_attn_prob prob;
    ck_attention_plan *plan = NULL;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attn_instance want = {128, c->tile_n, CK_ATTN_SM90_WARPS, 0, 1, 0};
    ck_status st = ck_attn_plan_create_instance(f_ctx, &prob, c->tile_n ? &want : NULL, &plan);
    CHECK_MSG(st == CK_SUCCESS, "plan: %s", ck_last_error());
    if (st)
        return 1;
    const char *name = ck_attention_plan_name(plan);
    CHECK_MSG(strncmp(name, "sm90.", 5) == 0, "plan %s", name);
    const ck_attention_problem *q = &prob.p;
    size_t nq = (size_t)ck_attn_span(&q->q, q->b, q->s_q, q->h_q, q->d);
    size_t nk = (size_t)ck_attn_span(&q->k, q->b, q->s_k, q->h_k, q->d);
    size_t nv = (size_t)ck_attn_span(&q->v, q->b, q->s_k, q->h_k, q->d_v);
    size_t no = (size_t)ck_attn_span(&q->o, q->b, q->s_q, q->h_q, q->d_v);
    size_t nl = (size_t)(q->b * q->h_q * q->s_q), nd = c->per_head ? (size_t)(q->b * q->h_k) : 1;
    nk += !nk, nv += !nv;
    unsigned char *hq = malloc(nq), *hk = malloc(nk), *hv = malloc(nv);
    uint16_t *ho = malloc(no * 2);
    float *hl = malloc(nl * 4), *hd = malloc(3 * nd * 4);
    double *ref = malloc((size_t)q->d_v * sizeof *ref), *exact = malloc((size_t)q->d_v * 8);
    f_fill(hq, nq, c->range), f_fill(hk, nk, c->range), f_fill(hv, nv, c->range);
    for (size_t i = 0; i < 3 * nd; ++i)
        hd[i] = (float)(0.05 + 0.45 * f_unif());
    for (size_t i = 0; i < no; ++i)
        ho[i] = 0x7fc1; /* a NaN sentinel: O's padding must keep it */
    void *dq = NULL, *dk = NULL, *dv = NULL, *dO = NULL, *dl = NULL, *dd = NULL;
    CHECK_OK(ck_malloc(dev, nq, &dq));
    CHECK_OK(ck_malloc(dev, nk, &dk));
    CHECK_OK(ck_malloc(dev, nv, &dv));
    CHECK_OK(ck_malloc(dev, no * 2, &dO));
    CHECK_OK(ck_malloc(dev, nl * 4 + 4, &dl));
    CHECK_OK(ck_malloc(dev, 3 * nd * 4, &dd));
    CHECK_OK(ck_memcpy_h2d(dev, dq, hq, nq, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dk, hk, nk, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dv, hv, nv, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dO, ho, no * 2, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dd, hd, 3 * nd * 4, NULL));
    ck_attention_args a;
    ck_attention_args_init(&a);
    a.q = dq, a.k = dk, a.v = dv, a.o = dO, a.lse = dl;
    a.descale_q = (const float *)dd, a.descale_k = a.descale_q + nd, a.descale_v = a.descale_k + nd;
    st = ck_attention_plan_execute(plan, &a);
    CHECK_MSG(st == CK_SUCCESS, "execute: %s", ck_last_error());
    CHECK_OK(ck_context_synchronize(f_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, ho, dO, no * 2, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, hl, dl, nl * 4, NULL));
    ck_attn_ref_in rin;
    ck_attn_ref_fp8 fx, fq;
    memset(&rin, 0, sizeof rin);
    rin.q = hq, rin.k = hk, rin.v = hv, rin.scale = ck_attn_scale(&prob, 0.0f);
    rin.descale_q = hd, rin.descale_k = hd + nd, rin.descale_v = hd + 2 * nd;
    long bad = 0;
    unsigned char *written = calloc(no, 1);
    for (int64_t b = 0; b < q->b; ++b)
        for (int64_t h = 0; h < q->h_q; ++h)
            for (int64_t i = 0; i < q->s_q; ++i) {
                double lse, lse_q, mag, smag, mag_q, smag_q;
                rin.p_tile = 0, rin.fp8_out = &fx;
                ck_attn_reference_row_in(&prob, &rin, b, h, i, exact, &lse, &mag, &smag);
                rin.p_tile = f_tile_n(name), rin.fp8_out = &fq;
                ck_attn_reference_row_in(&prob, &rin, b, h, i, ref, &lse_q, &mag_q, &smag_q);
                int64_t base = ck_attn_offset(&q->o, b, i, h);
                for (int64_t x = 0; x < q->d_v; ++x) {
                    double got = 0;
                    ck_convert_to_f64(CK_DTYPE_BF16, ho[base + x], &got);
                    written[base + x] = 1;
                    double tx =
                        ck_attn_tolerance_o_fp8(&prob, mag, smag, fx.vsum, fx.amb, exact[x], 0);
                    double tq =
                        ck_attn_tolerance_o_fp8(&prob, mag_q, smag_q, fq.vsum, fq.amb, ref[x], 1);
                    if (!(fabs(got - exact[x]) <= tx) && bad++ < 5)
                        CHECK_MSG(0, "%s: O[b%lld h%lld i%lld c%lld] = %.8g, exact %.8g (tol %.3g)",
                                  name, (long long)b, (long long)h, (long long)i, (long long)x, got,
                                  exact[x], tx);
                    if (!(fabs(got - ref[x]) <= tq) && bad++ < 5)
                        CHECK_MSG(0,
                                  "%s: O[b%lld h%lld i%lld c%lld] = %.8g, P-rounded reference "
                                  "%.8g (tight tol %.3g)",
                                  name, (long long)b, (long long)h, (long long)i, (long long)x, got,
                                  ref[x], tq);
                    if (c->dist)
                        c->dist[0] += fabs(got - ref[x]), c->dist[1] += fabs(got - exact[x]);
                }
                double gl = hl[(b * q->h_q + h) * q->s_q + i];
                int ok = isinf(lse) ? gl == lse
                                    : fabs(gl - lse) <= ck_attn_tolerance_lse(&prob, smag, lse);
                if (!ok && bad++ < 5)
                    CHECK_MSG(0, "%s: LSE[b%lld h%lld i%lld] = %.8g, reference %.8g", name,
                              (long long)b, (long long)h, (long long)i, gl, lse);
            }
    for (size_t i = 0; i < no; ++i)
        if (!written[i] && ho[i] != 0x7fc1 && bad++ < 5)
            CHECK_MSG(0, "O padding element %zu overwritten", i);
    if (!bad)
        CHECK(1);
    else
        fprintf(stderr,
                "  case b%lld sq%lld sk%lld hq%lld hk%lld d%lld mask %d align %d: %ld wrong\n",
                (long long)c->b, (long long)c->sq, (long long)c->sk, (long long)c->hq,
                (long long)c->hk, (long long)c->d, (int)c->mask, (int)c->align, bad);
    free(written);
    ck_free(dev, dq), ck_free(dev, dk), ck_free(dev, dv), ck_free(dev, dO), ck_free(dev, dl);
    ck_free(dev, dd);
    free(hq), free(hk), free(hv), free(ho), free(hl), free(hd), free(ref), free(exact);
    ck_attention_plan_destroy(plan);
    return bad;
}

/* ck_cvt_e4m3x4 (two cvt.rn.satfinite.e4m3x2 on the GPU, an integer model in the emulator)
 * against ck_convert: P's range [0, 1], subnormals, halfway cases, saturation. */
static void test_pack_e4m3(void)
{
    static const char *src =
        "#include \"ck_device.h\"\n"
        "CK_KERNEL void cvt(const float *x, unsigned *r, int n)\n"
        "{\n"
        "    for (int i = (int)ck_thread_linear(); 4 * i < n; i += (int)ck_block_threads())\n"
        "        r[i] = ck_cvt_e4m3x4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);\n"
        "}\n";
    enum { N = 1 << 14 };
    ck_device *dev = ck_context_device(f_ctx);
    float *x = malloc(N * 4);
    uint32_t *r = malloc(N);
    for (int i = 0; i < N; ++i) {
        double u = f_unif();
        x[i] = i % 4 == 0   ? (float)u
               : i % 4 == 1 ? (float)(u / 64)                      /* subnormal range */
               : i % 4 == 2 ? (float)((floor(u * 64) + 0.5) / 512) /* halfway subnormals */
                            : (float)((u - 0.5) * 1000);           /* signs, saturation */
    }
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    void *dx = NULL, *dr = NULL;
    CHECK_OK(ck_module_load(dev, src, NULL, 0, &m));
    CHECK_OK(ck_module_get_kernel(m, "cvt", &k));
    CHECK_OK(ck_malloc(dev, N * 4, &dx));
    CHECK_OK(ck_malloc(dev, N, &dr));
    CHECK_OK(ck_memcpy_h2d(dev, dx, x, N * 4, NULL));
    int n = N;
    void *args[3] = {&dx, &dr, &n};
    size_t sizes[3] = {sizeof dx, sizeof dr, sizeof n};
    ck_launch_config cfg = {{1, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, NULL};
    if (k)
        CHECK_OK(ck_launch(k, &cfg, args, sizes, 3));
    CHECK_OK(ck_context_synchronize(f_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, r, dr, N, NULL));
    long bad = 0;
    for (int i = 0; i < N; ++i) {
        uint64_t want = 0;
        ck_convert_from_f64(CK_DTYPE_FP8_E4M3, (double)x[i], CK_ROUND_NEAREST_EVEN,
                            CK_OVERFLOW_SATURATE, 0, &want);
        uint32_t got = (r[i / 4] >> (8 * (i % 4))) & 0xffu;
        if (got != want && bad++ < 5)
            CHECK_MSG(0, "%.9g: e4m3 0x%02x, want 0x%02x", (double)x[i], got, (unsigned)want);
    }
    CHECK(bad == 0);
    ck_free(dev, dx), ck_free(dev, dr);
    free(x), free(r);
}

/* d 128 with tails (s_k % 32 = 8), tensor descales; and O must be far closer to the reference
 * that rounds P than to the exact one (P is rounded to e4m3 as claimed, and the test sees it). */
static void test_basic(void)
{
    double dist[2] = {0, 0};
    fcase c = f_base(1, 130, 200, 2, 1, 128);
    c.dist = dist;
    f_run(&c);
    printf("  sum |O - P-rounded ref| %.4g, sum |O - exact ref| %.4g\n", dist[0], dist[1]);
    CHECK_MSG(dist[0] < 0.25 * dist[1], "O is not closer to the P-rounded reference");
}

/* Masks and alignments, GQA 2 and 8, d 64 and 256 (key tile 64: 64-key V^T lines), per-head
 * descales, BHSD with padded rows. */
static void test_shapes(void)
{
    fcase c = f_base(2, 77, 150, 4, 2, 64); /* causal bottom-right, GQA 2 */
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT, c.per_head = 1;
    f_run(&c);
    c = f_base(1, 40, 70, 2, 2, 256); /* window top-left, d 256 (key tile 64) */
    c.mask = CK_ATTN_MASK_WINDOW, c.wl = 20, c.wr = 3;
    f_run(&c);
    c = f_base(1, 33, 64, 8, 1, 128); /* GQA 8, s_k a multiple of 32, BHSD padded */
    c.bhsd = 1, c.pad = 16, c.per_head = 1;
    f_run(&c);
    c = f_base(1, 65, 161, 2, 1, 128); /* the 64-row key tile at d 128, causal top-left */
    c.tile_n = 64, c.mask = CK_ATTN_MASK_CAUSAL;
    f_run(&c);
    c = f_base(1, 31, 97, 2, 1, 64); /* the soft-cap with a large range (peaked scores) */
    c.softcap = 5.0f, c.range = 12.0f;
    f_run(&c);
}

/* Rows that see no key (s_q > s_k bottom-right causal: O = 0, LSE = -inf) and s_k = 0. */
static void test_no_keys(void)
{
    fcase c = f_base(1, 50, 20, 2, 1, 64);
    c.mask = CK_ATTN_MASK_CAUSAL, c.align = CK_ATTN_BOTTOM_RIGHT;
    f_run(&c);
    c = f_base(1, 20, 0, 2, 1, 128);
    f_run(&c);
}

static void refused(const ck_attention_problem *p, ck_status want, const char *words)
{
    ck_attention_plan *plan = NULL;
    CHECK_MSG(ck_attention_plan_create(f_ctx, p, &plan) == want, "%s: %s", words, ck_last_error());
    CHECK(plan == NULL);
    CHECK_MSG(strstr(ck_last_error(), words) != NULL, "%s", ck_last_error());
}

static void test_refusals(void)
{
    fcase c = f_base(1, 64, 64, 2, 1, 128);
    ck_attention_problem p;
    f_problem(&c, &p);
    p.d = p.d_v = 192;
    memset(&p.q, 0, sizeof p.q), memset(&p.k, 0, sizeof p.k); /* packed */
    memset(&p.v, 0, sizeof p.v), memset(&p.o, 0, sizeof p.o);
    refused(&p, CK_ERROR_UNSUPPORTED, "fp8e4m3 takes head dims 64, 128 or 256");
    f_problem(&c, &p);
    p.var.alibi = 1;
    refused(&p, CK_ERROR_UNSUPPORTED, "does not take ALiBi");
    f_problem(&c, &p);
    p.var.dropout_p = 0.1f;
    refused(&p, CK_ERROR_UNSUPPORTED, "does not take dropout");
    f_problem(&c, &p);
    p.var.page_size = 16, p.var.num_pages = 8, p.var.max_pages = 4;
    refused(&p, CK_ERROR_UNSUPPORTED, "does not take paged K / V");
    f_problem(&c, &p);
    p.var.bias.dtype = CK_DTYPE_F32, p.var.bias.dims[0] = p.var.bias.dims[1] = 1;
    p.var.bias.dims[2] = 64, p.var.bias.dims[3] = 64;
    refused(&p, CK_ERROR_UNSUPPORTED, "does not take a bias");
    f_problem(&c, &p);
    p.dtype = CK_DTYPE_BF16, p.descale = CK_ATTN_DESCALE_HEAD;
    refused(&p, CK_ERROR_INVALID_ARGUMENT, "descales are for fp8e4m3");
    f_problem(&c, &p);
    p.descale = (ck_attn_descale)7;
    refused(&p, CK_ERROR_INVALID_ARGUMENT, "descale = 7");
    f_problem(&c, &p);
    p.q.head = 132, p.q.seq = 264, p.q.batch = 264 * 64; /* 132 bytes: no multiple of 16 */
    refused(&p, CK_ERROR_UNSUPPORTED, "multiple of 16 elements");
    /* the sm80 kernel, the decode kernel and split-KV asked for */
    f_problem(&c, &p);
    ck_attn_prob prob;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    ck_attention_plan *plan = NULL;
    ck_attn_instance sm80 = {64, 64, 4, 0, 1, 0}, dec = {0, 0, 0, 1, 2, 0};
    CHECK_STATUS(ck_attn_plan_create_instance(f_ctx, &prob, &sm80, &plan), CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "sm90 kernel only") != NULL, "%s", ck_last_error());
    p.s_q = 4;
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    CHECK_STATUS(ck_attn_plan_create_instance(f_ctx, &prob, &dec, &plan), CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "not fp8e4m3") != NULL, "%s", ck_last_error());
    CHECK(plan == NULL);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &f_ctx));
    if (!f_ctx)
        return 1;
    ck_device_props props;
    ck_device_get_props(ck_context_device(f_ctx), &props);
    if (props.backend == CK_BACKEND_CUDA && strcmp(props.target, "sm_90a") != 0) {
        printf("device %s is not sm_90a; skipped\n", props.target);
        ck_context_destroy(f_ctx);
        return 0;
    }
    printf("seed 0x%016llx\n", (unsigned long long)f_rng);
    RUN_TEST(test_pack_e4m3);
    RUN_TEST(test_basic);
    RUN_TEST(test_shapes);
    RUN_TEST(test_no_keys);
    RUN_TEST(test_refusals);
    ck_context_destroy(f_ctx);
    return CK_TEST_REPORT();
}
