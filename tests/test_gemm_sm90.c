/* GEMM family 90 (TMA + wgmma, warp-specialized, persistent; src/ops/gemm/sm90.c) through the
 * family's own interface, on the device CK_DEVICE chooses (the emulator in CI; an sm_90a GPU):
 * problems of odd and tile-sized M, N, K; bf16 and f16 with A and B each K-major or MN-major;
 * tf32 and fp8 (e4m3, e5m2, mixed) K-major; D f32 / bf16 / f16, with and without beta * C;
 * every element of D against a double-precision reference computed here. Inputs are multiples
 * of 1/8 in [-1, 1] (exact in every input type), so the f32 sums are exact and D is the
 * reference rounded once to D's type. Also: the refusals (MN-major fp8, misaligned leading
 * dimension, misaligned pointer) name the reason.
 * Timing is bench/gemm.py's and bench/gemm_instances.py's (through ck prof gemm). */
#include <math.h>
#include <stdlib.h>

#include "ck/context.h"
#include "core/numeric_conv.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

static ck_context *ctx;
/* The instance the next builds take: tile N (0: the family's first) and K splits (0: its own). */
static int force_tile_n, force_split, force_stages, force_cluster;
/* Tile M of the next builds: 0 the family's 128 rows, 64 its small-M tiles (skinny.c). */
static int force_tile_m;

/* Host code of value v (a multiple of 1/8 in [-1, 1]) in type t, and back. */
static uint64_t encode(ck_dtype t, float v)
{
    return ck_nc_from_f32((int)t, v, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
}

static size_t esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : (t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2) ? 1 : 2;
}

static void put(void *buf, ck_dtype t, size_t i, uint64_t code)
{
    if (esize(t) == 4)
        ((uint32_t *)buf)[i] = (uint32_t)code;
    else if (esize(t) == 2)
        ((uint16_t *)buf)[i] = (uint16_t)code;
    else
        ((uint8_t *)buf)[i] = (uint8_t)code;
}

static double get(const void *buf, ck_dtype t, size_t i)
{
    uint64_t c = esize(t) == 4   ? ((const uint32_t *)buf)[i]
                 : esize(t) == 2 ? ((const uint16_t *)buf)[i]
                                 : ((const uint8_t *)buf)[i];
    return (double)ck_nc_to_f32((int)t, c);
}

/* Offset of element (i, j) of a matrix. */
static size_t at(const ck_gemm_matrix *mt, long long i, long long j)
{
    return (size_t)(mt->order == CK_GEMM_ROW_MAJOR ? i * mt->ld + j : i + j * mt->ld);
}

static long long round_up(long long x, long long a)
{
    return (x + a - 1) / a * a;
}

/* A matrix of rows x cols in `order`, leading dimension padded to 16 bytes (+ extra). */
static ck_gemm_matrix matrix(ck_dtype t, ck_gemm_order order, long long rows, long long cols,
                             long long extra)
{
    ck_gemm_matrix mt = {t, order, 0, 0};
    long long e = 16 / (long long)esize(t);
    mt.ld = round_up(order == CK_GEMM_ROW_MAJOR ? cols : rows, e) + extra;
    return mt;
}

static size_t elements(const ck_gemm_matrix *mt, long long rows, long long cols)
{
    return (size_t)(mt->ld * (mt->order == CK_GEMM_ROW_MAJOR ? rows : cols));
}

static void make_prob(ck_gemm_prob *pr, long long m, long long n, long long k, ck_gemm_matrix a,
                      ck_gemm_matrix b, ck_gemm_matrix c, ck_gemm_matrix d, int has_c)
{
    memset(pr, 0, sizeof *pr);
    pr->p.m = m, pr->p.n = n, pr->p.k = k, pr->p.batch = 1;
    pr->p.a = a, pr->p.b = b, pr->p.c = c, pr->p.d = d;
    if (!has_c)
        pr->p.c.dtype = CK_DTYPE_COUNT;
    pr->has_c = has_c;
    pr->a_kmajor = a.order == CK_GEMM_ROW_MAJOR;
    pr->b_kmajor = b.order == CK_GEMM_COL_MAJOR;
    pr->compute_in = a.dtype == CK_DTYPE_F32 ? CK_DTYPE_TF32 : a.dtype;
}

/* Build the family's kernel for the problem into plan (supports, instances, source, module,
 * prepare). 0 on failure (after a failed check). */
static int build(ck_gemm_plan *plan, const ck_gemm_prob *pr)
{
    const ck_gemm_family *f = &ck_gemm_family_sm90;
    const ck_device_props *props = NULL;
    ck_device_props pp;
    ck_device_get_props(ck_context_device(ctx), &pp);
    props = &pp;
    char reason[512] = "";
    memset(plan, 0, sizeof *plan);
    plan->ctx = ctx, plan->prob = *pr, plan->family = f;
    if (!f->supports(pr, props, reason, sizeof reason)) {
        CHECK_MSG(0, "sm90 refuses: %s", reason);
        return 0;
    }
    ck_gemm_instance ins[24];
    int n = f->instances(pr, props, ins, 24), pick = 0;
    CHECK(n >= 1);
    for (int i = n - 1; i >= 0;
         --i) /* the first with force_tile_n / force_stages, else the first */
        if (ins[i].tile_m == (force_tile_m ? force_tile_m : 128) &&
            (ins[i].tile_n == force_tile_n || (!force_tile_n && force_tile_m)) &&
            ins[i].split_k <= 1 && (!force_stages || ins[i].stages == force_stages) &&
            (ins[i].cluster > 1) == (force_cluster > 1))
            pick = i;
    plan->inst = ins[pick];
    CHECK_MSG(!force_tile_n || plan->inst.tile_n == force_tile_n,
              "no sm90 instance of tile N %d among %d", force_tile_n, n);
    CHECK_MSG(!force_tile_m || plan->inst.tile_m == force_tile_m,
              "no sm90 instance of tile M %d among %d", force_tile_m, n);
    if (force_split > 1)
        plan->inst.split_k = force_split;
    char *src = NULL;
    ck_module *mod = NULL;
    ck_status st = f->source(pr, &plan->inst, &src);
    if (!st)
        st = ck_module_load(ck_context_device(ctx), src, NULL, 0, &mod);
    free(src);
    if (!st)
        st = ck_module_get_kernel(mod, f->kernel_name, &plan->kernel);
    if (!st)
        st = f->prepare(plan);
    CHECK_MSG(st == CK_SUCCESS, "building the sm90 kernel: %s", ck_last_error());
    return st == CK_SUCCESS;
}

static void release(ck_gemm_plan *plan)
{
    if (plan->family_state_free)
        plan->family_state_free(plan->family_state);
}

static void *upload(const void *host, size_t bytes)
{
    void *p = NULL;
    ck_device *dev = ck_context_device(ctx);
    CHECK_OK(ck_malloc(dev, bytes ? bytes : 16, &p));
    if (p && host)
        CHECK_OK(ck_memcpy_h2d(dev, p, host, bytes, NULL));
    return p;
}

/* One problem: random inputs, run, compare every element of D. */
static void run_case(long long m, long long n, long long k, ck_dtype ta, ck_gemm_order oa,
                     ck_dtype tb, ck_gemm_order ob, ck_dtype td, int has_c, uint64_t seed)
{
    ck_gemm_matrix a = matrix(ta, oa, m, k, 0), b = matrix(tb, ob, k, n, 0);
    ck_gemm_matrix d = matrix(td, CK_GEMM_ROW_MAJOR, m, n, n % 8 == 0 ? 8 : 3);
    ck_gemm_matrix c = matrix(td, CK_GEMM_COL_MAJOR, m, n, 8);
    ck_gemm_prob pr;
    make_prob(&pr, m, n, k, a, b, c, d, has_c);
    ck_gemm_plan plan;
    char what[160];
    if (!build(&plan, &pr)) {
        fprintf(stderr, "  (%lldx%lldx%lld)\n", m, n, k);
        return;
    }
    snprintf(what, sizeof what, "%lldx%lldx%lld %s(%c) x %s(%c) -> %s%s m%d n%d k%d s%d c%d", m, n,
             k, ck_dtype_name(ta), oa == CK_GEMM_ROW_MAJOR ? 'K' : 'M', ck_dtype_name(tb),
             ob == CK_GEMM_COL_MAJOR ? 'K' : 'N', ck_dtype_name(td), has_c ? " + C" : "",
             plan.inst.tile_m, plan.inst.tile_n, plan.inst.split_k, plan.inst.stages,
             plan.inst.cluster);
    if (0) {
        fprintf(stderr, "  (%s)\n", what);
        return;
    }
    size_t na = elements(&a, m, k), nb = elements(&b, k, n), nd = elements(&d, m, n),
           nc = elements(&c, m, n);
    unsigned char *ha = calloc(na, esize(ta)), *hb = calloc(nb, esize(tb));
    unsigned char *hd = calloc(nd, esize(td)), *hc = calloc(nc, esize(td));
    for (long long i = 0; i < m; ++i)
        for (long long j = 0; j < k; ++j)
            put(ha, ta, at(&a, i, j), encode(ta, (float)((int)(ckt_rand64(&seed) % 17) - 8) / 8));
    for (long long i = 0; i < k; ++i)
        for (long long j = 0; j < n; ++j)
            put(hb, tb, at(&b, i, j), encode(tb, (float)((int)(ckt_rand64(&seed) % 17) - 8) / 8));
    for (size_t i = 0; i < nc; ++i)
        put(hc, td, i, encode(td, (float)((int)(ckt_rand64(&seed) % 17) - 8) / 8));
    memset(hd, 0x7F, nd * esize(td)); /* NaN-ish bits: unwritten elements show */
    void *da = upload(ha, na * esize(ta)), *db = upload(hb, nb * esize(tb));
    void *dd = upload(hd, nd * esize(td)), *dc = upload(hc, nc * esize(td));
    ck_gemm_args args;
    memset(&args, 0, sizeof args);
    args.scale_a = args.scale_b = args.scale_d = 1.0f;
    args.a = da, args.b = db, args.d = dd, args.c = has_c ? dc : NULL;
    args.alpha = 0.5f, args.beta = has_c ? -2.0f : 0.0f;
    ck_status st = plan.family->launch(&plan, &args);
    if (!st)
        st = ck_context_synchronize(ctx);
    if (!st && plan.inst.split_k > 1) { /* again on a fresh D: the counters reset themselves */
        st = ck_memcpy_h2d(ck_context_device(ctx), dd, hd, nd * esize(td), NULL);
        if (!st)
            st = plan.family->launch(&plan, &args);
        if (!st)
            st = ck_context_synchronize(ctx);
    }
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    if (!st)
        CHECK_OK(ck_memcpy_d2h(ck_context_device(ctx), hd, dd, nd * esize(td), NULL));
    long long bad = 0;
    for (long long i = 0; i < m && !st; ++i)
        for (long long j = 0; j < n; ++j) {
            double ref = 0;
            for (long long q = 0; q < k; ++q)
                ref += get(ha, ta, at(&a, i, q)) * get(hb, tb, at(&b, q, j));
            ref *= 0.5;
            if (has_c)
                ref += -2.0 * get(hc, td, at(&c, i, j));
            double want = get((const void *)&(uint64_t){encode(td, (float)ref)}, td, 0);
            double got = get(hd, td, at(&d, i, j));
            if (got != want && bad++ < 5)
                fprintf(stderr, "  %s: D[%lld][%lld] = %g, expected %g\n", what, i, j, got, want);
        }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements wrong", what, bad, m * n);
    printf("  %-50s %s\n", what, bad || st ? "FAILED" : "ok");
    ck_device *dev = ck_context_device(ctx);
    ck_free(dev, da), ck_free(dev, db), ck_free(dev, dd), ck_free(dev, dc);
    free(ha), free(hb), free(hd), free(hc);
    release(&plan);
}

static void test_bf16_f16_layouts(void)
{
    const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;
    run_case(128, 256, 64, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_F32, 0, 1);
    run_case(1, 1, 1, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 2);
    run_case(200, 300, 133, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 1, 3);
    run_case(130, 257, 70, CK_DTYPE_BF16, C, CK_DTYPE_BF16, R, CK_DTYPE_F32, 0, 4);
    run_case(67, 129, 200, CK_DTYPE_F16, C, CK_DTYPE_F16, C, CK_DTYPE_F16, 1, 5);
    run_case(257, 64, 17, CK_DTYPE_F16, R, CK_DTYPE_F16, R, CK_DTYPE_F32, 0, 6);
    /* D 16-bit, rows of a multiple of 16 bytes, no C: stored by TMA from shared memory */
    run_case(128, 256, 64, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 10);
    run_case(200, 264, 133, CK_DTYPE_F16, R, CK_DTYPE_F16, C, CK_DTYPE_F16, 0, 11);
    run_case(300, 520, 64, CK_DTYPE_BF16, C, CK_DTYPE_BF16, R, CK_DTYPE_BF16, 0, 12);
}

/* Tiles of 128 x 128 (and 128 x 64) and K split into ranges whose partial sums meet in the
 * workspace: odd sizes, K tiles not a multiple of the splits, a split per K tile, both D paths, and
 * a second launch of the same plan (the arrival counters reset themselves). */
static void test_tile_n_and_split_k(void)
{
    const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;
    force_tile_n = 128;
    run_case(130, 257, 70, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_F32, 0, 21);
    run_case(67, 136, 200, CK_DTYPE_F16, C, CK_DTYPE_F16, R, CK_DTYPE_F16, 0, 22);
    force_split = 3;
    run_case(129, 200, 333, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 1, 23);
    run_case(64, 264, 320, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 24);
    force_tile_n = 256, force_split = 2;
    run_case(100, 300, 129, CK_DTYPE_F16, R, CK_DTYPE_F16, R, CK_DTYPE_F32, 0, 25);
    force_split = 5; /* 5 K tiles: one each */
    run_case(33, 40, 320, CK_DTYPE_FP8_E4M3, R, CK_DTYPE_FP8_E4M3, C, CK_DTYPE_BF16, 1, 26);
    force_split = 4; /* more splits than K tiles: clamped to 2 */
    run_case(70, 70, 50, CK_DTYPE_F32, R, CK_DTYPE_F32, C, CK_DTYPE_F32, 0, 27);
    /* 128 x 256 with 4 stages: D staged for the TMA store in two halves of 128 columns */
    force_split = 0, force_stages = 4;
    run_case(200, 264, 333, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 28);
    run_case(300, 520, 64, CK_DTYPE_F16, C, CK_DTYPE_F16, R, CK_DTYPE_F16, 0, 29);
    /* 128 x 64: one 64 x 64 box of D per consumer; K- and MN-major; split */
    force_tile_n = 64, force_stages = 0;
    run_case(130, 136, 70, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 41);
    run_case(67, 100, 129, CK_DTYPE_F16, C, CK_DTYPE_F16, R, CK_DTYPE_F32, 1, 42);
    run_case(100, 70, 45, CK_DTYPE_F32, R, CK_DTYPE_F32, C, CK_DTYPE_F32, 0, 43);
    force_split = 3;
    run_case(129, 72, 333, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 44);
    force_tile_n = 0, force_split = 0, force_stages = 0;
}

/* Small M (skinny.c): tiles of 64 rows, one consumer warpgroup, 8 stages. M = 1 and odd M,
 * two tile rows, each tile width (64 x 256 stores D in halves), K split 2-5 ways and K tiles
 * not a multiple of the splits, the TMA store and the generated epilogue (f32 D, C), MN-major
 * operands, tf32 and fp8. */
static void test_skinny(void)
{
    const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;
    force_tile_m = 64, force_tile_n = 128;
    run_case(1, 200, 333, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 51);
    force_split = 4;
    run_case(16, 136, 640, CK_DTYPE_F16, R, CK_DTYPE_F16, C, CK_DTYPE_F16, 1, 52);
    run_case(5, 264, 448, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 53);
    force_split = 0, force_tile_n = 256;
    run_case(64, 264, 200, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 54);
    force_stages = 5; /* D staged in halves */
    run_case(48, 520, 136, CK_DTYPE_F16, R, CK_DTYPE_F16, R, CK_DTYPE_F16, 0, 58);
    force_stages = 0, force_tile_n = 64, force_split = 3;
    run_case(100, 72, 129, CK_DTYPE_BF16, C, CK_DTYPE_BF16, R, CK_DTYPE_F32, 0, 55);
    force_split = 5;
    run_case(33, 40, 320, CK_DTYPE_FP8_E4M3, R, CK_DTYPE_FP8_E5M2, C, CK_DTYPE_BF16, 0, 56);
    force_split = 2;
    run_case(7, 70, 90, CK_DTYPE_F32, R, CK_DTYPE_F32, C, CK_DTYPE_F32, 1, 57);
    force_tile_m = 0, force_tile_n = 0, force_split = 0;
}

/* The ranked candidates of a bf16 problem (A row-major, B column-major, D bf16) on an H100's
 * 132 multiprocessors; returns how many. */
static int rank_h100(long long m, long long n, long long k, ck_gemm_instance *ins, int max)
{
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.backend = CK_BACKEND_CUDA;
    snprintf(props.target, sizeof props.target, "sm_90a");
    props.cc_major = 9;
    props.multiprocessors = 132;
    props.max_shared_per_block = 227 * 1024;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = m, p.n = n, p.k = k;
    p.b.order = CK_GEMM_COL_MAJOR;
    ck_gemm_prob prob;
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    double score[64];
    char reason[256];
    return ck_gemm_policy_rank(&prob, &props, ins, score, max < 64 ? max : 64, reason,
                               sizeof reason);
}

/* The policy's small-M choice on an H100: a 64-row tile first for the decode shapes M = 1, 16,
 * 64 (B streamed from memory: the estimate's floor, skinny.c), none offered above M = 128;
 * CK_GEMM_SKINNY=0 leaves them out and CK_GEMM_SKINNY_STAGES sets their ring. No kernels. */
static void test_skinny_policy(void)
{
    static const long long nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
    ck_gemm_instance ins[64];
    char name[96] = "";
    for (int mi = 0; mi < 3; ++mi)
        for (int s = 0; s < 3; ++s) {
            long long m = mi == 0 ? 1 : mi == 1 ? 16 : 64;
            int n = rank_h100(m, nk[s][0], nk[s][1], ins, 64);
            CHECK(n > 0);
            if (n > 0)
                ck_gemm_instance_name(&ins[0], name, sizeof name);
            CHECK_MSG(n > 0 && ins[0].family == CK_GEMM_FAMILY_SM90 && ins[0].tile_m == 64 &&
                          ins[0].stages == 8,
                      "%lldx%lldx%lld: first is %s", m, nk[s][0], nk[s][1], name);
        }
    const long long big[][3] = {{512, 4096, 4096}, {4096, 4096, 4096}, {129, 4096, 4096}};
    for (int s = 0; s < 3; ++s) {
        int n = rank_h100(big[s][0], big[s][1], big[s][2], ins, 64), small = 0;
        for (int i = 0; i < n; ++i)
            small += ins[i].tile_m < 128 && ins[i].family == CK_GEMM_FAMILY_SM90;
        CHECK_MSG(n > 0 && small == 0, "%lldx%lldx%lld: %d small-M candidates of %d", big[s][0],
                  big[s][1], big[s][2], small, n);
    }
    setenv("CK_GEMM_SKINNY_STAGES", "4", 1);
    int n = rank_h100(16, 4096, 4096, ins, 64), four = 0, more = 0;
    for (int i = 0; i < n; ++i) /* 64 x 256 also offers 3 stages (D staged whole) */
        if (ins[i].tile_m == 64)
            four += ins[i].stages == 4, more += ins[i].stages > 4;
    CHECK_MSG(four > 0 && more == 0, "CK_GEMM_SKINNY_STAGES=4: %d with 4 stages, %d with more",
              four, more);
    int small;
    unsetenv("CK_GEMM_SKINNY_STAGES");
    setenv("CK_GEMM_SKINNY", "0", 1);
    n = rank_h100(16, 4096, 4096, ins, 64), small = 0;
    for (int i = 0; i < n; ++i)
        small += ins[i].tile_m < 128 && ins[i].family == CK_GEMM_FAMILY_SM90;
    CHECK_MSG(n > 0 && small == 0, "CK_GEMM_SKINNY=0: %d small-M candidates", small);
    unsetenv("CK_GEMM_SKINNY");
}

/* N = 64 (a ResNet stage's implicit GEMM: 401408 x 64 x 576 / 1728): the policy's first sm90
 * tile is 128 x 64, not a 128 x 128 whose right half is padding on every tile (1.41x / 1.67x
 * slower on the H200: bench/RESULTS.md, eighth session, run S); N = 100 does not take 256-wide
 * tiles; a short K (1x1 convolutions with C = 64 or 128) ranks the sm90 family first (sm80 ran
 * those at 0.26-0.38x cuDNN, run W). No kernels. */
static void test_narrow_n_policy(void)
{
    static const long long mnk[][3] = {{401408, 64, 576}, {401408, 64, 1728}, {8192, 100, 4096},
                                       {401408, 64, 64},  {401408, 256, 64},  {100352, 512, 128}};
    static const int widest[] = {64, 64, 128};
    ck_gemm_instance ins[64];
    char name[96] = "";
    for (int s = 0; s < 6; ++s) {
        int n = rank_h100(mnk[s][0], mnk[s][1], mnk[s][2], ins, 64), first = -1;
        for (int i = 0; i < n && first < 0; ++i)
            if (ins[i].family == CK_GEMM_FAMILY_SM90)
                first = i;
        /* short K (a 1x1 convolution's C = 64 or 128): sm90 first, not sm80 */
        CHECK_MSG(s < 3 || (n > 0 && ins[0].family == CK_GEMM_FAMILY_SM90),
                  "%lldx%lldx%lld: the first candidate is family %d", mnk[s][0], mnk[s][1],
                  mnk[s][2], n > 0 ? ins[0].family : -1);
        if (first >= 0)
            ck_gemm_instance_name(&ins[first], name, sizeof name);
        CHECK_MSG(s >= 3 || (first >= 0 && ins[first].tile_n == widest[s]),
                  "%lldx%lldx%lld: first sm90 is %s", mnk[s][0], mnk[s][1], mnk[s][2], name);
    }
}

/* Clusters of 2 blocks along M sharing B's tile by TMA multicast: an odd number of tile rows
 * (the last cluster's second block computes nothing), B K- and N-major, both tile widths, the
 * TMA store and the generated epilogue, fp8. */
static void test_clusters(void)
{
    const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;
    force_cluster = 2, force_tile_n = 256;
    run_case(300, 264, 200, CK_DTYPE_BF16, R, CK_DTYPE_BF16, C, CK_DTYPE_BF16, 0, 31);
    run_case(257, 300, 70, CK_DTYPE_F16, C, CK_DTYPE_F16, R, CK_DTYPE_F32, 1, 32);
    force_tile_n = 128;
    run_case(200, 136, 333, CK_DTYPE_BF16, R, CK_DTYPE_BF16, R, CK_DTYPE_BF16, 0, 33);
    run_case(390, 100, 130, CK_DTYPE_FP8_E4M3, R, CK_DTYPE_FP8_E5M2, C, CK_DTYPE_F32, 0, 34);
    force_cluster = 0, force_tile_n = 0;
}

static void test_tf32_fp8(void)
{
    const ck_gemm_order R = CK_GEMM_ROW_MAJOR, C = CK_GEMM_COL_MAJOR;
    run_case(100, 270, 45, CK_DTYPE_F32, R, CK_DTYPE_F32, C, CK_DTYPE_F32, 1, 7);
    run_case(140, 200, 300, CK_DTYPE_FP8_E4M3, R, CK_DTYPE_FP8_E4M3, C, CK_DTYPE_BF16, 0, 8);
    run_case(64, 100, 129, CK_DTYPE_FP8_E5M2, R, CK_DTYPE_FP8_E4M3, C, CK_DTYPE_F32, 0, 9);
}

/* wgmma reads f32 operands as tf32 by dropping the low 13 bits (on the GPU and the emulator),
 * and the plan tells the reference so: with every input 1 + 8191 * 2^-23 (rounded to nearest,
 * 1 + 2^-10; truncated, 1), D = K exactly, and the op's reference agrees within its tolerance. */
static void test_tf32_truncation(void)
{
    long long m = 64, n = 64, k = 64;
    ck_gemm_matrix a = matrix(CK_DTYPE_F32, CK_GEMM_ROW_MAJOR, m, k, 0);
    ck_gemm_matrix b = matrix(CK_DTYPE_F32, CK_GEMM_COL_MAJOR, k, n, 0);
    ck_gemm_matrix d = matrix(CK_DTYPE_F32, CK_GEMM_ROW_MAJOR, m, n, 0);
    ck_gemm_prob pr;
    make_prob(&pr, m, n, k, a, b, d, d, 0);
    ck_gemm_plan plan;
    if (!build(&plan, &pr))
        return;
    size_t na = elements(&a, m, k), nb = elements(&b, k, n), nd = elements(&d, m, n);
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hd = calloc(nd, 4);
    float x = 1.0f + 8191.0f * 0x1p-23f;
    for (size_t i = 0; i < na; ++i)
        ha[i] = x;
    for (size_t i = 0; i < nb; ++i)
        hb[i] = x;
    void *da = upload(ha, na * 4), *db = upload(hb, nb * 4), *dd = upload(hd, nd * 4);
    ck_gemm_args args;
    memset(&args, 0, sizeof args);
    args.scale_a = args.scale_b = args.scale_d = 1.0f, args.alpha = 1.0f;
    args.a = da, args.b = db, args.d = dd;
    ck_status st = plan.family->launch(&plan, &args);
    if (!st)
        st = ck_context_synchronize(ctx);
    if (!st)
        st = ck_memcpy_d2h(ck_context_device(ctx), hd, dd, nd * 4, NULL);
    CHECK_OK(st);
    ck_gemm_args h = args;
    h.a = ha, h.b = hb;
    ck_gemm_prob ref = pr;
    ref.tf32_truncate = 1; /* what ck_gemm_plan_create sets for this family */
    long long bad = 0;
    for (long long i = 0; i < m && !st; ++i)
        for (long long j = 0; j < n; ++j) {
            double mag = 0, r = ck_gemm_reference_value(&ref, &h, i, j, &mag);
            double got = hd[at(&d, i, j)];
            bad += got != (double)k || fabs(got - r) > ck_gemm_tolerance(&ref, mag, r);
        }
    CHECK_MSG(bad == 0, "tf32 truncation: %lld of %lld elements differ from K = %lld (D[0] = %.9g)",
              bad, m * n, k, (double)hd[0]);
    ck_device *dev = ck_context_device(ctx);
    ck_free(dev, da), ck_free(dev, db), ck_free(dev, dd);
    free(ha), free(hb), free(hd);
    release(&plan);
}

static void test_refusals(void)
{
    ck_device_props pp;
    ck_device_get_props(ck_context_device(ctx), &pp);
    char reason[512];
    ck_gemm_prob pr;
    ck_gemm_matrix a8 = {CK_DTYPE_FP8_E4M3, CK_GEMM_COL_MAJOR, 64, 0},
                   b8 = {CK_DTYPE_FP8_E4M3, CK_GEMM_COL_MAJOR, 64, 0};
    ck_gemm_matrix d = {CK_DTYPE_F32, CK_GEMM_ROW_MAJOR, 64, 0};
    make_prob(&pr, 64, 64, 64, a8, b8, d, d, 0);
    CHECK(!ck_gemm_family_sm90.supports(&pr, &pp, reason, sizeof reason));
    CHECK_MSG(strstr(reason, "K-major") != NULL, "fp8 MN-major refusal: '%s'", reason);
    ck_gemm_matrix a = {CK_DTYPE_BF16, CK_GEMM_ROW_MAJOR, 100, 0},
                   b = {CK_DTYPE_BF16, CK_GEMM_COL_MAJOR, 64, 0};
    make_prob(&pr, 64, 64, 64, a, b, d, d, 0);
    CHECK(!ck_gemm_family_sm90.supports(&pr, &pp, reason, sizeof reason));
    CHECK_MSG(strstr(reason, "A's is 100 elements") != NULL, "misaligned lda refusal: '%s'",
              reason);
    a.ld = 64;
    make_prob(&pr, 64, 64, 64, a, b, d, d, 0);
    pr.scalar_copy = 2; /* B's pointer not 16-byte aligned */
    CHECK(!ck_gemm_family_sm90.supports(&pr, &pp, reason, sizeof reason));
    CHECK_MSG(strstr(reason, "16-byte aligned") != NULL, "misaligned B refusal: '%s'", reason);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        fprintf(stderr, "no device: %s\n", ck_last_error());
        return 1;
    }
    ck_device_props pp;
    ck_device_get_props(ck_context_device(ctx), &pp);
    printf("device: %s (%s)\n", pp.name, pp.target);
    RUN_TEST(test_refusals);
    RUN_TEST(test_bf16_f16_layouts);
    RUN_TEST(test_tf32_fp8);
    RUN_TEST(test_tile_n_and_split_k);
    RUN_TEST(test_tf32_truncation);
    RUN_TEST(test_clusters);
    RUN_TEST(test_skinny);
    RUN_TEST(test_skinny_policy);
    RUN_TEST(test_narrow_n_policy);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
