/*
 * Quantized GEMMs on the emulator (family 80): block-scaled fp8 (A 1 x 128, B 128 x 128, and
 * other blocks), row-col and mixed scale modes, i8 x i8 with per-row x per-column scales
 * (SmoothQuant), bf16/f16 x packed int4 / uint4 with zero points / fp4 e2m1 with group scales.
 * Odd M, N, K with partial last K blocks, scale matrices in both orders with padded leading
 * dimensions; every element of D against this file's own double-precision reference (which
 * decodes the nibbles and applies the scales itself), D's padding untouched; the refusals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

static ck_context *g_ctx;
static uint64_t g_rng = 0x243f6a8885a308d3ull;

static double urand(void) /* [-1, 1) */
{
    return (double)(ckt_rand64(&g_rng) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1;
}

typedef struct qcase {
    int64_t m, n, k;
    ck_dtype a, b, d; /* b: CK_DTYPE_U8 for packed */
    ck_gemm_order ao, bo;
    ck_gemm_scale sa, sb;
    ck_gemm_packed packed;
    int zeros;
    int pad;           /* extra elements in every ld (scale matrices too) */
    ck_gemm_bias bias; /* f32 */
    ck_gemm_activation act;
    float alpha, scale_a, scale_b;
    const char *want; /* instance name part; NULL: the smallest tile */
    int all_fp4;      /* B's bytes walk every pair of fp4 codes */
    int pick;         /* >= 0: the pick-th candidate (modulo their count) instead of want */
    int sample;       /* > 0: check this many rows (spread over M) instead of all */
} qcase;

static qcase qc(int64_t m, int64_t n, int64_t k, ck_dtype a, ck_dtype b, ck_dtype d)
{
    qcase c;
    memset(&c, 0, sizeof c);
    c.m = m, c.n = n, c.k = k, c.a = a, c.b = b, c.d = d;
    c.ao = CK_GEMM_ROW_MAJOR;
    c.bo = CK_GEMM_COL_MAJOR;
    c.alpha = c.scale_a = c.scale_b = 1;
    return c;
}

static ck_gemm_scale blk(int bmn, int bk, ck_gemm_order o)
{
    ck_gemm_scale s = {CK_GEMM_SCALE_BLOCK, bmn, bk, o, 0};
    return s;
}

static ck_gemm_scale vec(ck_gemm_order o)
{
    ck_gemm_scale s = {CK_GEMM_SCALE_VECTOR, 0, 0, o, 0};
    return s;
}

/* The test's own decoding of 4-bit values. */
static double nibble(ck_gemm_packed f, unsigned q)
{
    static const double e2m1[16] = {0,    0.5,  1,  1.5,  2,  3,  4,  6,
                                    -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
    if (f == CK_GEMM_PACKED_INT4)
        return q < 8 ? (double)q : (double)q - 16;
    if (f == CK_GEMM_PACKED_FP4_E2M1)
        return e2m1[q];
    return (double)q;
}

static double get(const void *p, ck_dtype t, int64_t i)
{
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es, (size_t)es);
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void put(void *p, ck_dtype t, int64_t i, double v)
{
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * es, &code, (size_t)es);
}

/* Rows x cols of a scale matrix (A: M blocks x K blocks; B: K blocks x N blocks). */
static void scale_dims(const ck_gemm_scale *s, int64_t mn, int64_t k, int is_b, int64_t *rows,
                       int64_t *cols)
{
    int64_t bmn = s->mode == CK_GEMM_SCALE_VECTOR ? mn : (mn + s->block_mn - 1) / s->block_mn;
    int64_t bk = s->mode == CK_GEMM_SCALE_VECTOR ? 1 : (k + s->block_k - 1) / s->block_k;
    *rows = is_b ? bk : bmn;
    *cols = is_b ? bmn : bk;
}

static int64_t sidx(const ck_gemm_scale *s, int is_b, int64_t mn, int64_t k)
{
    int64_t bm = s->mode == CK_GEMM_SCALE_VECTOR ? mn : mn / s->block_mn;
    int64_t bk = s->mode == CK_GEMM_SCALE_VECTOR ? 0 : k / s->block_k;
    int64_t r = is_b ? bk : bm, c = is_b ? bm : bk;
    return s->order == CK_GEMM_ROW_MAJOR ? r * s->ld + c : r + c * s->ld;
}

static int pick(const ck_gemm_problem *p, const char *want, int index)
{
    ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
    int n = 0;
    if (ck_gemm_candidates(g_ctx, p, cand, CK_GEMM_MAX_CANDIDATES, &n) != CK_SUCCESS || n < 1) {
        CHECK_MSG(0, "no candidates: %s", ck_last_error());
        return -1;
    }
    if (index >= 0)
        return cand[index % n].id;
    int best = -1;
    for (int i = 0; i < n; ++i) {
        int fp8 = p->a.dtype == CK_DTYPE_FP8_E4M3 || p->a.dtype == CK_DTYPE_FP8_E5M2;
        /* family 81: the small-M mixed-input variant (test_gemm_quant_skinny.c); this file's
         * named cases keep to the tile pipelines (random problems take any candidate) */
        CHECK_MSG(cand[i].family == 80 || (fp8 && !p->b_packed && cand[i].tile_n <= 128) ||
                      (cand[i].family == 81 && p->b_packed && p->m <= 64),
                  "family %d offered %s", cand[i].family, cand[i].name);
        if (cand[i].family == 81)
            continue;
        if ((!want || strstr(cand[i].name, want)) &&
            (best < 0 ||
             (long)cand[i].tile_m * cand[i].tile_n < (long)cand[best].tile_m * cand[best].tile_n))
            best = i;
    }
    CHECK_MSG(best >= 0, "no candidate like '%s'", want ? want : "");
    return best < 0 ? -1 : cand[best].id;
}

/* Run one case; every element of D against the reference. Returns the wrong elements. */
static long run(const qcase *c)
{
    ck_device *dev = ck_context_device(g_ctx);
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = c->m, p.n = c->n, p.k = c->k;
    p.a.dtype = c->a, p.b.dtype = c->b, p.d.dtype = c->d;
    p.a.order = c->ao, p.b.order = c->bo;
    int packed = c->packed != CK_GEMM_PACKED_NONE;
    int64_t bk_contig = packed ? c->k / 2 : c->k; /* B's K extent in storage units */
    p.a.ld = (c->ao == CK_GEMM_ROW_MAJOR ? c->k : c->m) + c->pad;
    p.b.ld = (c->bo == CK_GEMM_ROW_MAJOR ? c->n : bk_contig) + c->pad;
    p.d.ld = c->n + c->pad;
    p.scale_a = c->sa, p.scale_b = c->sb;
    p.b_packed = c->packed;
    p.b_zeros = c->zeros;
    p.bias = c->bias;
    p.activation = c->act;
    int64_t sar = 0, sac = 0, sbr = 0, sbc = 0;
    if (c->sa.mode) {
        scale_dims(&c->sa, c->m, c->k, 0, &sar, &sac);
        p.scale_a.ld = (c->sa.order == CK_GEMM_ROW_MAJOR ? sac : sar) + c->pad;
    }
    if (c->sb.mode) {
        scale_dims(&c->sb, c->n, c->k, 1, &sbr, &sbc);
        p.scale_b.ld = (c->sb.order == CK_GEMM_ROW_MAJOR ? sbc : sbr) + c->pad;
    }
    ck_gemm_plan *plan = NULL;
    int id = pick(&p, c->want, c->sample ? c->pick : -1);
    ck_status st = id < 0 ? CK_ERROR_INTERNAL : ck_gemm_plan_create(g_ctx, &p, id, &plan);
    CHECK_MSG(st == CK_SUCCESS, "plan %lldx%lldx%lld %s x %s: %s", (long long)c->m, (long long)c->n,
              (long long)c->k, ck_dtype_name(c->a), ck_dtype_name(c->b), ck_last_error());
    if (st)
        return 1;
    /* storage */
    int esa = ck_gemm_dtype_bytes(c->a), esd = ck_gemm_dtype_bytes(c->d);
    size_t na = (size_t)((c->ao == CK_GEMM_ROW_MAJOR ? c->m : c->k) * p.a.ld);
    size_t nb = (size_t)((c->bo == CK_GEMM_ROW_MAJOR ? c->k : c->n) * p.b.ld);
    size_t nd = (size_t)(c->m * p.d.ld);
    size_t nsa =
        c->sa.mode ? (size_t)((c->sa.order == CK_GEMM_ROW_MAJOR ? sar : sac) * p.scale_a.ld) : 0;
    size_t nsb =
        c->sb.mode ? (size_t)((c->sb.order == CK_GEMM_ROW_MAJOR ? sbr : sbc) * p.scale_b.ld) : 0;
    size_t nbias = c->bias ? (size_t)(c->bias == CK_GEMM_BIAS_ROW ? c->m : c->n) : 0;
    int esb = packed ? 1 : ck_gemm_dtype_bytes(c->b);
    unsigned char *ha = malloc(na * esa), *hb = malloc(nb * esb), *hd = malloc(nd * esd),
                  *hd0 = malloc(nd * esd), *hz = malloc(nsb + 1);
    float *hsa = malloc((nsa + 1) * 4), *hsb = malloc((nsb + 1) * 4),
          *hbias = malloc((nbias + 1) * 4);
    for (size_t i = 0; i < na; ++i)
        put(ha, c->a, (int64_t)i, c->a == CK_DTYPE_I8 ? floor(urand() * 100) : urand());
    for (size_t i = 0; i < nb; ++i) {
        if (packed)
            hb[i] = c->all_fp4 ? (unsigned char)(i * 37 % 256)
                               : (unsigned char)(ckt_rand64(&g_rng) >> 56);
        else
            put(hb, c->b, (int64_t)i, c->b == CK_DTYPE_I8 ? floor(urand() * 100) : urand());
    }
    for (size_t i = 0; i < nd; ++i)
        put(hd, c->d, (int64_t)i, urand());
    memcpy(hd0, hd, nd * esd);
    for (size_t i = 0; i < nsa; ++i) /* scales of mixed sign and magnitude 2^-3 .. 2^3 */
        hsa[i] =
            (float)(ldexp(1 + urand() * 0.5, (int)(urand() * 3.5)) * (urand() < -0.6 ? -1 : 1));
    for (size_t i = 0; i < nsb; ++i)
        hsb[i] =
            (float)(ldexp(1 + urand() * 0.5, (int)(urand() * 3.5)) * (urand() < -0.6 ? -1 : 1));
    for (size_t i = 0; i < nsb; ++i)
        hz[i] = (unsigned char)(ckt_rand64(&g_rng) >> 60);
    for (size_t i = 0; i < nbias; ++i)
        hbias[i] = (float)urand();
    void *da = NULL, *db = NULL, *dd = NULL, *dsa = NULL, *dsb = NULL, *dz = NULL, *dbias = NULL;
    CHECK_OK(ck_malloc(dev, na * esa, &da));
    CHECK_OK(ck_malloc(dev, nb * esb, &db));
    CHECK_OK(ck_malloc(dev, nd * esd, &dd));
    CHECK_OK(ck_malloc(dev, (nsa + 1) * 4, &dsa));
    CHECK_OK(ck_malloc(dev, (nsb + 1) * 4, &dsb));
    CHECK_OK(ck_malloc(dev, nsb + 1, &dz));
    CHECK_OK(ck_malloc(dev, (nbias + 1) * 4, &dbias));
    CHECK_OK(ck_memcpy_h2d(dev, da, ha, na * esa, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, nb * esb, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dd, hd, nd * esd, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dsa, hsa, (nsa + 1) * 4, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dsb, hsb, (nsb + 1) * 4, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dz, hz, nsb + 1, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, dbias, hbias, (nbias + 1) * 4, NULL));
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = da, args.b = db, args.d = dd;
    args.alpha = c->alpha, args.scale_a = c->scale_a, args.scale_b = c->scale_b;
    args.a_scales = c->sa.mode ? dsa : NULL;
    args.b_scales = c->sb.mode ? dsb : NULL;
    args.b_zeros = c->zeros ? dz : NULL;
    args.bias = c->bias ? dbias : NULL;
    CHECK_OK(ck_gemm_plan_execute(plan, &args));
    CHECK_OK(ck_memcpy_d2h(dev, hd, dd, nd * esd, NULL));
    /* the reference: this file's decoding and scaling, sums in double */
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    p = prob.p; /* VECTOR scales keep the test's indexing (sidx reads mode) */
    long bad = 0;
    double alpha = (double)(float)(c->alpha * c->scale_a * c->scale_b);
    int64_t rows = c->sample > 0 && c->sample < c->m ? c->sample : c->m;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < c->n; ++j) {
            int64_t i = rows == c->m ? r : (r * 7919) % c->m;
            double v = 0, mag = 0;
            for (int64_t k = 0; k < c->k; ++k) {
                double a =
                    get(ha, c->a, c->ao == CK_GEMM_ROW_MAJOR ? i * p.a.ld + k : i + k * p.a.ld);
                double b;
                if (packed) {
                    unsigned byte = hb[j * p.b.ld + k / 2];
                    b = nibble(c->packed, (k & 1) ? byte >> 4 : byte & 15u);
                    if (c->zeros)
                        b -= hz[sidx(&p.scale_b, 1, j, k)];
                } else {
                    b = get(hb, c->b, c->bo == CK_GEMM_ROW_MAJOR ? k * p.b.ld + j : k + j * p.b.ld);
                }
                if (c->sa.mode)
                    a *= hsa[sidx(&p.scale_a, 0, i, k)];
                if (c->sb.mode)
                    b *= hsb[sidx(&p.scale_b, 1, j, k)];
                v += a * b;
                mag += fabs(a * b);
            }
            v *= alpha;
            mag *= fabs(alpha);
            if (c->bias) {
                double bb = hbias[c->bias == CK_GEMM_BIAS_ROW ? i : j];
                v += bb;
                mag += fabs(bb);
            }
            if (c->act == CK_GEMM_ACT_RELU)
                v = v < 0 ? 0 : v;
            double got = get(hd, c->d, i * p.d.ld + j);
            double tol = ck_gemm_tolerance(&prob, mag, v);
            if (!(fabs(got - v) <= tol)) {
                if (++bad <= 3)
                    CHECK_MSG(
                        0,
                        "%lldx%lldx%lld %s x %s -> %s: D(%lld, %lld) = %.9g, want %.9g (tol %.3g)",
                        (long long)c->m, (long long)c->n, (long long)c->k, ck_dtype_name(c->a),
                        packed ? "packed" : ck_dtype_name(c->b), ck_dtype_name(c->d), (long long)i,
                        (long long)j, got, v, tol);
            }
        }
    for (int64_t i = 0; i < c->m; ++i) /* the padding of D's rows untouched */
        for (int64_t j = c->n; j < p.d.ld; ++j)
            if (memcmp(hd + (i * p.d.ld + j) * esd, hd0 + (i * p.d.ld + j) * esd, (size_t)esd) &&
                ++bad <= 3)
                CHECK_MSG(0, "D's padding (%lld, %lld) was written", (long long)i, (long long)j);
    if (bad == 0)
        CHECK(1);
    ck_free(dev, da), ck_free(dev, db), ck_free(dev, dd), ck_free(dev, dsa), ck_free(dev, dsb);
    ck_free(dev, dz), ck_free(dev, dbias);
    free(ha), free(hb), free(hd), free(hd0), free(hz), free(hsa), free(hsb), free(hbias);
    ck_gemm_plan_destroy(plan);
    return bad;
}

static void test_fp8_block(void)
{
    /* DeepSeek-V3: A 1 x 128, B 128 x 128; partial last K block (300 = 2 x 128 + 44), two
     * column blocks of B (150 > 128), odd M */
    qcase c = qc(19, 150, 300, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16);
    c.sa = blk(1, 128, CK_GEMM_COL_MAJOR); /* MN-major per K block, as DeepGEMM */
    c.sb = blk(128, 128, CK_GEMM_ROW_MAJOR);
    c.pad = 3;
    run(&c);
    /* the 128-byte k-tile instance (one K block per k-tile), B's scales K-contiguous */
    c = qc(33, 70, 260, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32);
    c.sa = blk(1, 128, CK_GEMM_ROW_MAJOR);
    c.sb = blk(128, 128, CK_GEMM_COL_MAJOR);
    c.want = "x128.s3";
    run(&c);
    /* small blocks: many column blocks and K blocks (32 = one mma step), e5m2 x e4m3, B
     * row-major (the gathering fragment path), blocks of 2 rows of A */
    c = qc(21, 45, 100, CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E4M3, CK_DTYPE_F16);
    c.bo = CK_GEMM_ROW_MAJOR;
    c.sa = blk(2, 32, CK_GEMM_ROW_MAJOR);
    c.sb = blk(16, 32, CK_GEMM_COL_MAJOR);
    c.pad = 1;
    run(&c);
    /* A column-major, per-tensor factors and alpha on top, a bias and relu */
    c = qc(17, 29, 200, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_F32);
    c.ao = CK_GEMM_COL_MAJOR;
    c.sa = blk(1, 64, CK_GEMM_COL_MAJOR);
    c.sb = blk(8, 64, CK_GEMM_ROW_MAJOR);
    c.alpha = 0.75f, c.scale_a = 2.0f, c.scale_b = 0.5f;
    c.bias = CK_GEMM_BIAS_COL;
    c.act = CK_GEMM_ACT_RELU;
    run(&c);
}

/* Family 90 (wgmma, a second accumulator per K block, promoted after wgmma.wait_group 0). */
static void test_fp8_sm90(void)
{
    /* DeepSeek-V3 blocks: two tile columns (one B scale per tile), partial last K block (K a
     * multiple of 16: TMA) */
    qcase c = qc(70, 150, 304, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16);
    c.sa = blk(1, 128, CK_GEMM_COL_MAJOR);
    c.sb = blk(128, 128, CK_GEMM_COL_MAJOR);
    c.want = "sm90";
    run(&c);
    /* K blocks of 2 k-tiles, B blocks of 48 columns (scales per column), padded scale lds */
    c = qc(33, 100, 592, CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E4M3, CK_DTYPE_F32);
    c.sa = blk(1, 256, CK_GEMM_ROW_MAJOR);
    c.sb = blk(48, 256, CK_GEMM_ROW_MAJOR);
    c.pad = 16; /* keeps A's and B's ld multiples of 16 bytes (TMA) */
    c.want = "sm90";
    run(&c);
    /* row-col with the TMA store of D (bf16, row-major, alpha only), and per-row A x blocks */
    c = qc(64, 128, 256, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16);
    c.sa = vec(CK_GEMM_ROW_MAJOR);
    c.sb = vec(CK_GEMM_ROW_MAJOR);
    c.alpha = 0.5f;
    c.want = "sm90";
    run(&c);
    c = qc(40, 24, 384, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_F16);
    c.sa = vec(CK_GEMM_COL_MAJOR);
    c.sb = blk(128, 128, CK_GEMM_ROW_MAJOR);
    c.bias = CK_GEMM_BIAS_ROW;
    c.want = "sm90";
    run(&c);
}

static void test_fp8_rowcol(void)
{
    /* row-col: one promotion after the main loop */
    qcase c = qc(23, 37, 131, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16);
    c.sa = vec(CK_GEMM_ROW_MAJOR);
    c.sb = vec(CK_GEMM_COL_MAJOR);
    run(&c);
    /* per-row A with block-scaled B; per-tensor A with per-column B */
    c = qc(9, 40, 96, CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E5M2, CK_DTYPE_F32);
    c.sa = vec(CK_GEMM_COL_MAJOR);
    c.sb = blk(32, 64, CK_GEMM_ROW_MAJOR);
    c.pad = 2;
    run(&c);
    c = qc(30, 11, 64, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3);
    c.sb = vec(CK_GEMM_ROW_MAJOR);
    c.scale_a = 0.25f;
    run(&c);
}

static void test_i8_smoothquant(void)
{
    /* i8 x i8 -> i32 exact, then * sa[i] * sb[j] (SmoothQuant), bf16 and f32 D */
    qcase c = qc(25, 33, 160, CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_BF16);
    c.sa = vec(CK_GEMM_ROW_MAJOR);
    c.sb = vec(CK_GEMM_ROW_MAJOR);
    run(&c);
    c = qc(7, 50, 77, CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_F32);
    c.bo = CK_GEMM_ROW_MAJOR;
    c.sa = vec(CK_GEMM_COL_MAJOR);
    c.sb = vec(CK_GEMM_COL_MAJOR);
    c.bias = CK_GEMM_BIAS_ROW;
    c.pad = 5;
    run(&c);
    /* i8 block-scaled (i32 partial sums per 64 of K) */
    c = qc(13, 20, 150, CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_F32);
    c.sa = blk(1, 64, CK_GEMM_ROW_MAJOR);
    c.sb = blk(8, 64, CK_GEMM_ROW_MAJOR);
    run(&c);
}

static void test_mixed_int4(void)
{
    /* bf16 x int4 (signed), group 32 along K per column; odd M and N; ld of 16 bytes x k */
    qcase c = qc(5, 41, 96, CK_DTYPE_BF16, CK_DTYPE_U8, CK_DTYPE_BF16);
    c.packed = CK_GEMM_PACKED_INT4;
    c.sb = blk(1, 32, CK_GEMM_ROW_MAJOR);
    run(&c);
    /* f16 x uint4 with zero points, group 64, scales K-contiguous, padded (odd) ld: the
     * element-wise copy path */
    c = qc(11, 19, 128, CK_DTYPE_F16, CK_DTYPE_U8, CK_DTYPE_F32);
    c.packed = CK_GEMM_PACKED_UINT4;
    c.zeros = 1;
    c.sb = blk(1, 64, CK_GEMM_COL_MAJOR);
    c.pad = 3;
    run(&c);
    /* the large-tile instance (32-byte lines of packed B), uint4 zero points per column
     * (VECTOR scales), per-row A scales */
    c = qc(3, 40, 192, CK_DTYPE_BF16, CK_DTYPE_U8, CK_DTYPE_BF16);
    c.packed = CK_GEMM_PACKED_UINT4;
    c.zeros = 1;
    c.sa = vec(CK_GEMM_ROW_MAJOR);
    c.sb = vec(CK_GEMM_ROW_MAJOR);
    c.want = "x64.s3";
    run(&c);
    /* int4 with groups of 2 columns x 16 of K */
    c = qc(8, 12, 48, CK_DTYPE_F16, CK_DTYPE_U8, CK_DTYPE_F16);
    c.packed = CK_GEMM_PACKED_INT4;
    c.sb = blk(2, 16, CK_GEMM_ROW_MAJOR);
    run(&c);
}

static void test_mixed_fp4(void)
{
    /* every pair of e2m1 codes appears in B's bytes (i * 37 mod 256 over 16 x 64 bytes) */
    qcase c = qc(6, 16, 128, CK_DTYPE_BF16, CK_DTYPE_U8, CK_DTYPE_F32);
    c.packed = CK_GEMM_PACKED_FP4_E2M1;
    c.sb = blk(1, 32, CK_GEMM_ROW_MAJOR);
    c.all_fp4 = 1;
    run(&c);
    c = qc(9, 23, 64, CK_DTYPE_F16, CK_DTYPE_U8, CK_DTYPE_F16);
    c.packed = CK_GEMM_PACKED_FP4_E2M1;
    c.sb = blk(1, 16, CK_GEMM_COL_MAJOR);
    c.pad = 2;
    run(&c);
}

/* The packing order exactly: B(k, 0) = k - 8 as int4 (low nibble even k), unit scales, A = one
 * row of ones in column k0: D(0, 0) must be k0 - 8. B's line padded to 16 bytes, so that both
 * the policy's choice (the small-M variant, sm80q) and the tile pipeline read it. */
static void packing_order(ck_gemm_plan *plan)
{
    ck_device *dev = ck_context_device(g_ctx);
    unsigned char hb[16] = {0};
    for (int k = 0; k < 16; k += 2) /* q = k (two's complement of k - 16 for k >= 8) */
        hb[k / 2] = (unsigned char)((k & 15) | (((k + 1) & 15) << 4));
    float one = 1.0f;
    void *da = NULL, *db = NULL, *dd = NULL, *ds = NULL;
    CHECK_OK(ck_malloc(dev, 32, &da));
    CHECK_OK(ck_malloc(dev, 16, &db));
    CHECK_OK(ck_malloc(dev, 4, &dd));
    CHECK_OK(ck_malloc(dev, 4, &ds));
    CHECK_OK(ck_memcpy_h2d(dev, db, hb, 16, NULL));
    CHECK_OK(ck_memcpy_h2d(dev, ds, &one, 4, NULL));
    ck_gemm_candidate ci;
    CHECK_OK(ck_gemm_plan_instance(plan, &ci));
    for (int k0 = 0; k0 < 16; ++k0) {
        uint16_t ha[16] = {0};
        ha[k0] = 0x3f80; /* bf16 1.0 */
        CHECK_OK(ck_memcpy_h2d(dev, da, ha, 32, NULL));
        ck_gemm_args args;
        ck_gemm_args_init(&args);
        args.a = da, args.b = db, args.d = dd, args.b_scales = ds;
        CHECK_OK(ck_gemm_plan_execute(plan, &args));
        float got = 0;
        CHECK_OK(ck_memcpy_d2h(dev, &got, dd, 4, NULL));
        CHECK_MSG(got == (float)(k0 < 8 ? k0 : k0 - 16), "%s: B(%d, 0) read as %g", ci.name, k0,
                  (double)got);
    }
    ck_free(dev, da), ck_free(dev, db), ck_free(dev, dd), ck_free(dev, ds);
}

static void test_packing_order(void)
{
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 1, p.n = 1, p.k = 16;
    p.a.dtype = CK_DTYPE_BF16;
    p.b.dtype = CK_DTYPE_U8;
    p.b.order = CK_GEMM_COL_MAJOR;
    p.b.ld = 16;
    p.d.dtype = CK_DTYPE_F32;
    p.b_packed = CK_GEMM_PACKED_INT4;
    p.scale_b = vec(CK_GEMM_ROW_MAJOR);
    for (int pass = 0; pass < 2; ++pass) {
        ck_gemm_plan *plan = NULL;
        CHECK_OK(ck_gemm_plan_create(g_ctx, &p, pass ? pick(&p, NULL, -1) : -1, &plan));
        if (plan)
            packing_order(plan);
        ck_gemm_plan_destroy(plan);
    }
}

/* Random problems: sizes and configurations (kind, blocks, orders, D type) from a pool, so that
 * a GPU run of a thousand problems builds a bounded number of kernels (K a multiple of 32 and
 * N of 8: the leading dimensions' divisors vary little; the candidate by index of the pool).
 *   CK_GEMM_QUANT_RANDOM_N    problems (default 4 on the emulator, 1000 on a GPU)
 *   CK_GEMM_QUANT_RANDOM_MAX  largest M, N, K (default 64 on the emulator, 512 on a GPU: the
 *                             host fills and checks each problem)
 *   CK_GEMM_QUANT_RANDOM_SEED seed of the sizes and values (default 1) */
static long long env_ll(const char *name, long long def)
{
    const char *v = getenv(name);
    return v && *v ? atoll(v) : def;
}

static void test_random(void)
{
    ck_device_props props;
    ck_device_get_props(ck_context_device(g_ctx), &props);
    int gpu = props.backend == CK_BACKEND_CUDA;
    long long count = env_ll("CK_GEMM_QUANT_RANDOM_N", gpu ? 1000 : 4);
    long long maxs = env_ll("CK_GEMM_QUANT_RANDOM_MAX", gpu ? 512 : 64);
    g_rng = 0x9e3779b97f4a7c15ull * (uint64_t)env_ll("CK_GEMM_QUANT_RANDOM_SEED", 1);
    long wrong = 0, ran = 0;
    for (long long t = 0; t < count; ++t) {
        uint64_t cr = 0x51ed270b27ull + (uint64_t)(t % 24) * 0x2545f4914f6cdd1dull;
        int kind = (int)(ckt_rand64(&cr) % 7), o1 = (int)(ckt_rand64(&cr) % 2),
            o2 = (int)(ckt_rand64(&cr) % 2), bsel = (int)(ckt_rand64(&cr) % 3);
        static const ck_dtype dts[3] = {CK_DTYPE_F32, CK_DTYPE_BF16, CK_DTYPE_F16};
        ck_dtype dt = dts[ckt_rand64(&cr) % 3];
        int pk = (int)(ckt_rand64(&cr) % 8);
        int64_t m = 1 + (int64_t)(ckt_rand64(&g_rng) % (uint64_t)maxs);
        int64_t n =
            8 * (1 + (int64_t)(ckt_rand64(&g_rng) % (uint64_t)(maxs / 8 > 0 ? maxs / 8 : 1)));
        int64_t k =
            32 * (1 + (int64_t)(ckt_rand64(&g_rng) % (uint64_t)(maxs / 32 > 0 ? maxs / 32 : 1)));
        int bk = 32 << bsel; /* 32, 64, 128 */
        ck_gemm_order so1 = o1 ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
        ck_gemm_order so2 = o2 ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
        qcase c;
        switch (kind) {
        case 0: /* fp8 block-scaled */
        case 1:
            c = qc(m, n, k, kind ? CK_DTYPE_FP8_E5M2 : CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, dt);
            c.sa = blk(1, bk, so1);
            c.sb = blk(bk, bk, so2);
            break;
        case 2: /* fp8 row-col */
            c = qc(m, n, k, CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, dt);
            c.sa = vec(so1), c.sb = vec(so2);
            break;
        case 3: /* SmoothQuant (sums of |i8 i8| up to 10^4 K: beyond f16's range) */
            c = qc(m, n, k, CK_DTYPE_I8, CK_DTYPE_I8, dt == CK_DTYPE_F16 ? CK_DTYPE_BF16 : dt);
            c.sa = vec(so1), c.sb = vec(so2);
            break;
        default: /* packed B: int4, uint4 with zero points, fp4; groups dividing K */
            c = qc(m, n, k, dt == CK_DTYPE_F16 ? CK_DTYPE_F16 : CK_DTYPE_BF16, CK_DTYPE_U8, dt);
            c.packed = kind == 4   ? CK_GEMM_PACKED_INT4
                       : kind == 5 ? CK_GEMM_PACKED_UINT4
                                   : CK_GEMM_PACKED_FP4_E2M1;
            c.zeros = kind == 5;
            c.sb = blk(1, k % bk == 0 ? bk : 32, so2);
            break;
        }
        c.sample = 16;
        c.pick = pk;
        wrong += run(&c) != 0;
        ++ran;
    }
    printf("%ld quantized problems: %ld wrong\n", ran, wrong);
}

static void test_refusals(void)
{
    ck_gemm_problem base, p;
    ck_gemm_problem_init(&base);
    base.m = 16, base.n = 16, base.k = 128;
    base.a.dtype = base.b.dtype = CK_DTYPE_FP8_E4M3;
    base.b.order = CK_GEMM_COL_MAJOR;
    base.scale_a = blk(1, 128, CK_GEMM_ROW_MAJOR);
    base.scale_b = blk(128, 128, CK_GEMM_ROW_MAJOR);
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&base, &prob));
    CHECK(prob.quant == 1 && prob.q_block_k == 128);
    p = base, p.scale_b.block_k = 64; /* different K blocks */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = base, p.scale_a.block_k = 48; /* not a multiple of fp8's 32 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = base, p.scale_a.mode = (ck_gemm_scale_mode)7;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = base, p.scale_a.ld = 0, p.scale_a.order = CK_GEMM_COL_MAJOR, p.scale_a.ld = 5; /* < 16 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = base, p.d.dtype = CK_DTYPE_I32, p.a.dtype = p.b.dtype = CK_DTYPE_I8;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = base, p.a.dtype = p.b.dtype = CK_DTYPE_F32, p.d.dtype = CK_DTYPE_F32;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = base, p.batch = 2, p.a.batch_stride = 0, p.b.batch_stride = 0, p.d.batch_stride = 256;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    /* packed B */
    ck_gemm_problem q = base;
    q.a.dtype = CK_DTYPE_BF16, q.b.dtype = CK_DTYPE_U8;
    q.scale_a.mode = CK_GEMM_SCALE_TENSOR;
    q.scale_b = blk(1, 32, CK_GEMM_ROW_MAJOR);
    q.b_packed = CK_GEMM_PACKED_UINT4;
    q.b_zeros = 1;
    CHECK_OK(ck_gemm_prob_make(&q, &prob));
    CHECK(prob.p.b.ld == 64); /* packed: K / 2 bytes */
    p = q, p.k = 127;         /* odd K */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = q, p.k = 112; /* groups of 32 do not tile 112 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = q, p.b.order = CK_GEMM_ROW_MAJOR;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = q, p.b.dtype = CK_DTYPE_BF16;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = q, p.a.dtype = CK_DTYPE_FP8_E4M3;
    CHECK(ck_gemm_prob_make(&p, &prob) != CK_SUCCESS);
    p = q, p.b_packed = CK_GEMM_PACKED_INT4; /* zero points with signed int4 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = q, p.scale_b.mode = CK_GEMM_SCALE_TENSOR; /* zero points need a scale layout */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = q, p.b_packed = (ck_gemm_packed)9;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = q, p.b.ld = 60; /* below K / 2 bytes */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    /* family 90 says why it does not take them */
    ck_gemm_prob_make(&q, &prob);
    ck_device_props props;
    ck_device_get_props(ck_context_device(g_ctx), &props);
    char reason[256] = "";
    CHECK(!ck_gemm_family_sm90.supports(&prob, &props, reason, sizeof reason));
    CHECK(strstr(reason, "sm90") != NULL);
    /* split-K and stream-K share K out inside K blocks: refused for quantized problems */
    ck_gemm_plan *plan = NULL;
    ck_gemm_plan_options opt;
    ck_gemm_plan_options_init(&opt);
    opt.decomp = CK_GEMM_DECOMP_STREAM_K;
    CHECK_STATUS(ck_gemm_plan_create_opt(g_ctx, &base, &opt, &plan), CK_ERROR_UNSUPPORTED);
    ck_gemm_plan_destroy(plan);
    plan = NULL;
    /* execution: NULL scale or zero-point pointers, scales over D */
    CHECK_OK(ck_gemm_plan_create(g_ctx, &q, -1, &plan));
    if (!plan)
        return;
    ck_device *dev = ck_context_device(g_ctx);
    void *buf = NULL;
    CHECK_OK(ck_malloc(dev, 65536, &buf));
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    args.a = buf, args.b = (char *)buf + 8192, args.d = (char *)buf + 16384;
    args.b_scales = (const float *)((char *)buf + 32768);
    CHECK_STATUS(ck_gemm_plan_execute(plan, &args), CK_ERROR_INVALID_ARGUMENT); /* no zeros */
    args.b_zeros = (const unsigned char *)buf + 40960;
    args.b_scales = (const float *)((char *)buf + 16384 + 64); /* inside D */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &args), CK_ERROR_INVALID_ARGUMENT);
    args.b_scales = (const float *)((char *)buf + 32770); /* misaligned */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &args), CK_ERROR_INVALID_ARGUMENT);
    /* D right after packed B's 16 x 64 bytes: no overlap (B spans K / 2 bytes a column) */
    args.b_scales = (const float *)((char *)buf + 32768);
    args.d = (char *)buf + 8192 + 16 * 64;
    CHECK_OK(ck_gemm_plan_execute(plan, &args));
    ck_free(dev, buf);
    ck_gemm_plan_destroy(plan);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &g_ctx));
    if (!g_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)g_rng);
    RUN_TEST(test_refusals);
    RUN_TEST(test_packing_order);
    RUN_TEST(test_fp8_block);
    RUN_TEST(test_fp8_rowcol);
    RUN_TEST(test_fp8_sm90);
    RUN_TEST(test_i8_smoothquant);
    RUN_TEST(test_mixed_int4);
    RUN_TEST(test_mixed_fp4);
    RUN_TEST(test_random);
    ck_context_destroy(g_ctx);
    return CK_TEST_REPORT();
}
