/*
 * Random GEMM problems against an independent reference: tests/kernels/gemm_ref.cu (one thread
 * per output element, double arithmetic, run on the same device) and an epilogue evaluated here
 * in double. Every output element is checked with a tolerance derived here from K, the types and
 * sum |a b| (not the op's own tolerance function).
 *
 *   CK_GEMM_RANDOM_N    problems (default 20 on the emulator, 2000 on a GPU)
 *   CK_GEMM_RANDOM_MAX  largest M, N, K (default 72 on the emulator, 4096 on a GPU)
 *   CK_GEMM_RANDOM_SEED seed (default 1; printed)
 *   CK_GEMM_RANDOM_CONFIGS configurations (types, orders, epilogue) the problems cycle through
 *                       (default: one per problem on the emulator, 48 on a GPU)
 *
 * Problems the op refuses are counted (each refusal must carry a sentence); a refusal of a
 * problem every family should take (16-bit inputs, 16-byte aligned lds) fails the test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ck/ck.h"
#include "ck/gemm.h"
#include "core/numeric_conv.h"
#include "gemm_act_ref.h"
#include "kernel_harness.h"

static uint64_t rng, crng; /* sizes and values / the problem's configuration */
static uint64_t seed_;
static int pool_;

static long long rnd(long long lo, long long hi) /* inclusive */
{
    return lo + (long long)(ckt_rand64(&rng) % (uint64_t)(hi - lo + 1));
}

/* The configuration (types, orders, epilogue) comes from its own generator, seeded by the
 * problem's index modulo the pool size, so that a GPU run of thousands of problems compiles a
 * bounded number of kernels. */
static long long crnd(long long lo, long long hi)
{
    return lo + (long long)(ckt_rand64(&crng) % (uint64_t)(hi - lo + 1));
}

static double unit(void)
{
    return (double)(ckt_rand64(&rng) >> 11) * 0x1p-53;
}

static long long log_size(long long max)
{
    double l = unit() * log((double)max);
    long long v = (long long)exp(l);
    return v < 1 ? 1 : v > max ? max : v;
}

static int esize(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F32:
    case CK_DTYPE_I32:
        return 4;
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return 2;
    default:
        return 1;
    }
}

/* Mantissa bits of an output type (for its rounding error). */
static int mant_bits(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F32:
        return 23;
    case CK_DTYPE_F16:
        return 10;
    case CK_DTYPE_BF16:
        return 7;
    case CK_DTYPE_FP8_E4M3:
        return 3;
    case CK_DTYPE_FP8_E5M2:
        return 2;
    default:
        return 60;
    }
}

/* Spacing of the output type's subnormals (its absolute rounding error is half of it). */
static double tiny_step(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F16:
        return 0x1p-24;
    case CK_DTYPE_FP8_E4M3:
        return 0x1p-9;
    case CK_DTYPE_FP8_E5M2:
        return 0x1p-16;
    default:
        return 0;
    }
}

static double decode(ck_dtype t, const unsigned char *p, long long i)
{
    switch (t) {
    case CK_DTYPE_F32:
        return ((const float *)p)[i];
    case CK_DTYPE_I32:
        return ((const int32_t *)p)[i];
    case CK_DTYPE_I8:
        return ((const int8_t *)p)[i];
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return ck_nc_to_f64((int)t, ((const uint16_t *)p)[i]);
    default:
        return ck_nc_to_f64((int)t, p[i]);
    }
}

static void encode(ck_dtype t, unsigned char *p, long long i, double v)
{
    switch (t) {
    case CK_DTYPE_F32:
        ((float *)p)[i] = (float)v;
        break;
    case CK_DTYPE_I32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case CK_DTYPE_I8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        ((uint16_t *)p)[i] =
            (uint16_t)ck_nc_from_f64((int)t, v, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
        break;
    default:
        p[i] =
            (unsigned char)ck_nc_from_f64((int)t, v, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
    }
}

/* Bytes of a matrix of r x c in `order` with leading dimension ld. */
static size_t mat_bytes(const ck_gemm_matrix *mt, long long r, long long c)
{
    long long outer = mt->order == CK_GEMM_ROW_MAJOR ? r : c;
    return (size_t)(outer * mt->ld) * (size_t)esize(mt->dtype) + 16;
}

static long long at(const ck_gemm_matrix *mt, long long i, long long j)
{
    return mt->order == CK_GEMM_ROW_MAJOR ? i * mt->ld + j : i + j * mt->ld;
}

typedef struct combo {
    ck_dtype a, b, d;
    ck_gemm_compute compute;
} combo;

static const combo combos[] = {
    {CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_BF16, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_BF16, CK_DTYPE_BF16, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_F16, CK_DTYPE_F16, CK_DTYPE_F16, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_F16, CK_DTYPE_F16, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, CK_GEMM_COMPUTE_TF32},
    {CK_DTYPE_F32, CK_DTYPE_F32, CK_DTYPE_F32, CK_GEMM_COMPUTE_F32},
    {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E4M3, CK_DTYPE_BF16, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_FP8_E4M3, CK_DTYPE_FP8_E5M2, CK_DTYPE_F32, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E5M2, CK_DTYPE_FP8_E4M3, CK_GEMM_COMPUTE_DEFAULT},
    {CK_DTYPE_I8, CK_DTYPE_I8, CK_DTYPE_I32, CK_GEMM_COMPUTE_DEFAULT},
};

/* Relative accumulation error bound per unit of sum |a b| for the compute type. */
static double acc_unit(const combo *c, long long k)
{
    double sq = sqrt((double)k);
    if (c->a == CK_DTYPE_I8)
        return 0;
    if (c->a == CK_DTYPE_F32 && c->compute == CK_GEMM_COMPUTE_F32)
        return 0x1p-19 + 16 * sq * 0x1p-24;
    if (c->a == CK_DTYPE_F32)
        return 0x1p-9 + 16 * sq * 0x1p-24;
    if (c->a == CK_DTYPE_FP8_E4M3 || c->a == CK_DTYPE_FP8_E5M2)
        return 16 * sq * 0x1p-13; /* Hopper's fp8 accumulation keeps fewer bits */
    return 16 * sq * 0x1p-24 + 0x1p-22;
}

static ck_kernel *refk;
static ck_context *ctx;
static int refused, hard_refusals, ran;

static void one_problem(int index, long long maxdim, int verbose)
{
    crng = seed_ * 1000003u + (uint64_t)(index % pool_);
    const combo *cb = &combos[crnd(0, (long long)(sizeof combos / sizeof combos[0]) - 1)];
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = log_size(maxdim), p.n = log_size(maxdim), p.k = log_size(maxdim);
    /* keep the reference's work bounded */
    while ((double)p.m * p.n * p.k > (ckk_is_host() ? 3e5 : 4e9)) {
        if (p.k > 1)
            p.k = (p.k + 1) / 2;
        else
            p.m = (p.m + 1) / 2;
    }
    int pad16 = crnd(0, 3) != 0; /* mostly 16-byte aligned leading dimensions */
    ck_gemm_matrix *mats[4] = {&p.a, &p.b, &p.c, &p.d};
    ck_dtype types[4] = {cb->a, cb->b, cb->d, cb->d};
    long long rows[4] = {p.m, p.k, p.m, p.m}, cols[4] = {p.k, p.n, p.n, p.n};
    for (int i = 0; i < 4; ++i) {
        mats[i]->dtype = types[i];
        mats[i]->order = crnd(0, 1) ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
        long long inner = mats[i]->order == CK_GEMM_ROW_MAJOR ? cols[i] : rows[i];
        long long ld = pad16 ? (inner + 15) / 16 * 16 : inner + rnd(0, 2);
        mats[i]->ld = ld;
    }
    p.compute = cb->compute;
    int int_out = cb->d == CK_DTYPE_I32;
    int fp8_out = cb->d == CK_DTYPE_FP8_E4M3 || cb->d == CK_DTYPE_FP8_E5M2;
    int use_c = !int_out && crnd(0, 2) == 0;
    int alias = use_c && crnd(0, 1);
    if (!use_c)
        p.c.dtype = CK_DTYPE_COUNT;
    if (alias)
        p.c = p.d;
    if (!int_out && crnd(0, 2) == 0) {
        p.bias = crnd(0, 1) ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        p.bias_dtype = crnd(0, 1) ? CK_DTYPE_F32 : CK_DTYPE_BF16;
    }
    if (!int_out)
        p.activation = (ck_gemm_activation)crnd(0, 5);
    ck_gemm_args args;
    ck_gemm_args_init(&args);
    if (!int_out) {
        args.alpha = (float)(0.5 + unit());
        args.beta = use_c ? (float)(unit() - 0.5) : 0.0f;
    }
    if (fp8_out)
        args.scale_d = 2.0f;
    if (cb->a == CK_DTYPE_FP8_E4M3 || cb->a == CK_DTYPE_FP8_E5M2)
        args.scale_a = 0.5f, args.scale_b = 1.5f;

    ck_gemm_plan *plan = NULL;
    ck_status st = ck_gemm_plan_create(ctx, &p, -1, &plan);
    if (st != CK_SUCCESS) {
        ++refused;
        CHECK_MSG(strlen(ck_last_error()) > 20, "refusal without a sentence");
        int should_run = pad16 && (cb->a == CK_DTYPE_BF16 || cb->a == CK_DTYPE_F16);
        if (should_run) {
            ++hard_refusals;
            CHECK_MSG(0, "problem %d (%lldx%lldx%lld %s) refused: %s", index, (long long)p.m,
                      (long long)p.n, (long long)p.k, ck_dtype_name(cb->a), ck_last_error());
        } else if (verbose) {
            printf("  refused %d: %s\n", index, ck_last_error());
        }
        return;
    }
    ++ran;
    size_t ab = mat_bytes(&p.a, p.m, p.k), bb = mat_bytes(&p.b, p.k, p.n);
    size_t db = mat_bytes(&p.d, p.m, p.n), cbytes = use_c && !alias ? mat_bytes(&p.c, p.m, p.n) : 0;
    long long nbias = p.bias == CK_GEMM_BIAS_ROW ? p.m : p.n;
    size_t biasb = p.bias ? (size_t)nbias * esize(p.bias_dtype) + 16 : 0;
    unsigned char *ha = calloc(1, ab), *hb = calloc(1, bb), *hc = calloc(1, db + cbytes),
                  *hd = calloc(1, db), *hbias = calloc(1, biasb + 1);
    double *ref = calloc((size_t)(p.m * p.n), sizeof *ref),
           *absd = calloc((size_t)(p.m * p.n), sizeof *absd);
    void *da = NULL, *db_ = NULL, *dc = NULL, *dd = NULL, *dbias = NULL, *dref = NULL, *dabs = NULL;
    if (!ha || !hb || !hc || !hd || !hbias || !ref || !absd) {
        CHECK_MSG(0, "out of host memory");
        goto done;
    }
    for (long long i = 0; i < p.m; ++i)
        for (long long q = 0; q < p.k; ++q)
            encode(p.a.dtype, ha, at(&p.a, i, q),
                   cb->a == CK_DTYPE_I8 ? (double)rnd(-8, 8) : 2 * unit() - 1);
    for (long long q = 0; q < p.k; ++q)
        for (long long j = 0; j < p.n; ++j)
            encode(p.b.dtype, hb, at(&p.b, q, j),
                   cb->a == CK_DTYPE_I8 ? (double)rnd(-8, 8) : 2 * unit() - 1);
    /* D starts with random values: C when aliased, else garbage that must be overwritten */
    for (long long i = 0; i < p.m; ++i)
        for (long long j = 0; j < p.n; ++j) {
            encode(p.d.dtype, hd, at(&p.d, i, j),
                   int_out ? (double)rnd(-100, 100) : 2 * unit() - 1);
            if (use_c && !alias)
                encode(p.c.dtype, hc, at(&p.c, i, j), 2 * unit() - 1);
        }
    for (long long i = 0; i < (p.bias ? nbias : 0); ++i)
        encode(p.bias_dtype, hbias, i, 2 * unit() - 1);
    da = ckk_upload(ha, ab), db_ = ckk_upload(hb, bb), dd = ckk_upload(hd, db);
    if (use_c && !alias)
        dc = ckk_upload(hc, cbytes);
    if (p.bias)
        dbias = ckk_upload(hbias, biasb);
    dref = ckk_upload(NULL, (size_t)(p.m * p.n) * sizeof(double));
    dabs = ckk_upload(NULL, (size_t)(p.m * p.n) * sizeof(double));
    args.a = da, args.b = db_, args.d = dd, args.c = alias ? dd : dc, args.bias = dbias;
    CHECK_MSG(ck_gemm_plan_execute(plan, &args) == CK_SUCCESS, "execute %d: %s", index,
              ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    {
        long long sa0 = p.a.order == CK_GEMM_ROW_MAJOR ? p.a.ld : 1,
                  sa1 = p.a.order == CK_GEMM_ROW_MAJOR ? 1 : p.a.ld;
        long long sb0 = p.b.order == CK_GEMM_ROW_MAJOR ? p.b.ld : 1,
                  sb1 = p.b.order == CK_GEMM_ROW_MAJOR ? 1 : p.b.ld;
        int ta = (int)p.a.dtype, tb = (int)p.b.dtype;
        long long total = p.m * p.n;
        unsigned blocks = (unsigned)((total + 127) / 128);
        CHECK_OK(ckk_launch(refk, blocks, 1, 1, 128, 1, 1, 0, 13, &da, sizeof da, &ta, sizeof ta,
                            &sa0, sizeof sa0, &sa1, sizeof sa1, &db_, sizeof db_, &tb, sizeof tb,
                            &sb0, sizeof sb0, &sb1, sizeof sb1, &p.m, sizeof p.m, &p.n, sizeof p.n,
                            &p.k, sizeof p.k, &dref, sizeof dref, &dabs, sizeof dabs));
    }
    ckk_download(ref, dref, (size_t)(p.m * p.n) * sizeof(double));
    ckk_download(absd, dabs, (size_t)(p.m * p.n) * sizeof(double));
    unsigned char *out = malloc(db);
    if (!out)
        goto done;
    ckk_download(out, dd, db);
    {
        double s = (double)args.alpha * args.scale_a * args.scale_b;
        double u_out = ldexp(1.0, -mant_bits(p.d.dtype) - 1);
        long long bad = 0;
        for (long long i = 0; i < p.m; ++i)
            for (long long j = 0; j < p.n; ++j) {
                double cval = use_c ? decode(p.c.dtype, alias ? hd : hc, at(&p.c, i, j)) : 0;
                double x = s * ref[i * p.n + j] + args.beta * cval;
                if (p.bias)
                    x += decode(p.bias_dtype, hbias, p.bias == CK_GEMM_BIAS_ROW ? i : j);
                double want = gemm_ref_act(p.activation, x) / args.scale_d;
                double got = decode(p.d.dtype, out, at(&p.d, i, j));
                double tol = 1.2 * fabs(s) * absd[i * p.n + j] * acc_unit(cb, p.k) / args.scale_d +
                             fabs(want) * u_out * 2 + tiny_step(p.d.dtype) +
                             (p.d.dtype == CK_DTYPE_I32 ? 0 : 1e-6);
                if (p.d.dtype == CK_DTYPE_FP8_E4M3 && fabs(want) > 448)
                    want = want > 0 ? 448 : -448; /* saturating cast */
                if (!(fabs(got - want) <= tol)) {
                    if (bad++ < 3)
                        CHECK_MSG(0,
                                  "problem %d %lldx%lldx%lld %s.%s->%s a%c b%c d%c c=%d alias=%d "
                                  "bias=%d act=%d: "
                                  "D(%lld,%lld) = %.9g, expected %.9g (tol %.3g)",
                                  index, (long long)p.m, (long long)p.n, (long long)p.k,
                                  ck_dtype_name(p.a.dtype), ck_dtype_name(p.b.dtype),
                                  ck_dtype_name(p.d.dtype), p.a.order ? 'C' : 'R',
                                  p.b.order ? 'C' : 'R', p.d.order ? 'C' : 'R', use_c, alias,
                                  (int)p.bias, (int)p.activation, i, j, got, want, tol);
                } else {
                    ++ckt_pass_;
                }
            }
        if (bad)
            printf("  problem %d: %lld of %lld elements wrong\n", index, bad,
                   (long long)(p.m * p.n));
    }
    free(out);
done:
    ck_free(ckk_device, da), ck_free(ckk_device, db_), ck_free(ckk_device, dc),
        ck_free(ckk_device, dd);
    ck_free(ckk_device, dbias), ck_free(ckk_device, dref), ck_free(ckk_device, dabs);
    free(ha), free(hb), free(hc), free(hd), free(hbias), free(ref), free(absd);
    ck_gemm_plan_destroy(plan);
}

int main(void)
{
    const char *e;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen, also into a file */
    uint64_t seed = (e = getenv("CK_GEMM_RANDOM_SEED")) ? strtoull(e, NULL, 10) : 1;
    rng = seed;
    if (!ckk_open())
        return 1;
    int host = ckk_is_host();
    int n = (e = getenv("CK_GEMM_RANDOM_N")) ? atoi(e) : host ? 20 : 2000;
    long long maxdim = (e = getenv("CK_GEMM_RANDOM_MAX")) ? atoll(e) : host ? 72 : 4096;
    int verbose = getenv("CK_GEMM_RANDOM_VERBOSE") != NULL;
    seed_ = seed;
    pool_ = (e = getenv("CK_GEMM_RANDOM_CONFIGS")) ? atoi(e) : host ? n : 48;
    if (pool_ < 1)
        pool_ = 1;
    printf("seed %llu, %d problems, sizes up to %lld, %d configurations\n",
           (unsigned long long)seed, n, maxdim, pool_);
    if (ck_context_create_for_device(ckk_device, &ctx) != CK_SUCCESS) {
        printf("no context: %s\n", ck_last_error());
        return 1;
    }
    refk = ckk_kernel("gemm_ref.cu", "gemm_ref");
    for (int i = 0; i < n && refk; ++i) {
        one_problem(i, maxdim, verbose);
        if (!host && i % 100 == 99)
            printf("  %d problems, %d ran, %d refused\n", i + 1, ran, refused);
    }
    printf("%d problems: %d ran, %d refused (%d that should have run)\n", n, ran, refused,
           hard_refusals);
    ck_context_destroy(ctx);
    ckk_close();
    return CK_TEST_REPORT();
}
