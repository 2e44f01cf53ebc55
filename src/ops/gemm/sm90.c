/*
 * GEMM family 90 (sm_90a): the persistent, warp-specialized TMA + wgmma kernel of
 * sm90_pipeline_kernel.h. This file is its host side: what it supports (and why not), its
 * instances, the kernel source (defines, the generated epilogue, the pipeline), the launch
 * shape (a resident grid from the driver's occupancy), and each launch's tensor maps (cached
 * for the last pointers in the plan's family state).
 *
 * Operands: f16 / bf16 with A and B each K-major or MN-major (wgmma's transpose bits, TMA boxes
 * along the contiguous dimension); f32 as tf32 and fp8 e4m3/e5m2 (any mix) K-major only. TMA
 * needs 16-byte aligned bases and leading dimensions of a multiple of 16 bytes; other problems
 * are refused here with the reason (the sm80 family takes them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

enum {
    SM90_THREADS_PER_WG = 128,
    SM90_ROW_BYTES = 128, /* one tile row: the 128-byte swizzle span */
    SM90_TILE_M = 128,
    SM90_TILE_N = 256,
    SM90_CONSUMERS = 2,
    SM90_GROUP = 8,
    SM90_MAX_SPLIT = 16 /* split-K ranges per tile (the instance id holds 4 bits) */
};

/* ---- what the family runs ------------------------------------------------------------------ */

/* wgmma input code of a dtype (GEMM_IN): 0 f16, 1 bf16, 2 tf32, 3 e4m3, 4 e5m2; -1 none. */
static int in_code(ck_dtype t, const ck_gemm_prob *prob)
{
    switch (t) {
    case CK_DTYPE_F16:
        return 0;
    case CK_DTYPE_BF16:
        return 1;
    case CK_DTYPE_F32:
        return prob->split3 ? -1 : 2;
    case CK_DTYPE_FP8_E4M3:
        return 3;
    case CK_DTYPE_FP8_E5M2:
        return 4;
    default:
        return -1;
    }
}

static int elem_bytes(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : (t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2) ? 1 : 2;
}

static int refuse(char *reason, size_t size, const char *fmt, ...) CK_PRINTF_LIKE(3, 4);
static int refuse(char *reason, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (reason && size)
        vsnprintf(reason, size, fmt, ap);
    va_end(ap);
    return 0;
}

static int sm90_supports(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                         size_t reason_size)
{
    const ck_gemm_problem *p = &prob->p;
    if (!ck_gemm_quant_supported_by(prob, CK_GEMM_FAMILY_SM90, reason, reason_size))
        return 0;
    if (props->backend != CK_BACKEND_HOST && strcmp(props->target, "sm_90a") != 0)
        return refuse(reason, reason_size,
                      "the sm90 family needs an sm_90a device (wgmma, TMA); this one is %s.",
                      props->target);
    int ia = in_code(p->a.dtype, prob), ib = in_code(p->b.dtype, prob);
    if (ia < 0 || ib < 0)
        return refuse(reason, reason_size,
                      "the sm90 family multiplies f16, bf16, f32 (as tf32) or fp8 inputs; A is "
                      "%s (or f32 with the 3xTF32 split, which it does not do).",
                      ck_dtype_name(ia < 0 ? p->a.dtype : p->b.dtype));
    if (ia != ib && !(ia >= 3 && ib >= 3))
        return refuse(reason, reason_size,
                      "the sm90 family needs A and B of one type (fp8 may mix e4m3 and e5m2); B "
                      "is %s.",
                      ck_dtype_name(p->b.dtype));
    if (ia >= 2 && (!prob->a_kmajor || !prob->b_kmajor))
        return refuse(reason, reason_size,
                      "the sm90 family reads %s operands only K-major (wgmma has no transposed "
                      "tf32/fp8 layouts): A must be row-major and B column-major.",
                      ck_dtype_name(p->a.dtype));
    long long eb = elem_bytes(p->a.dtype);
    if ((p->a.ld * eb) % 16 != 0)
        return refuse(reason, reason_size,
                      "the sm90 family loads with TMA, which needs leading dimensions of a "
                      "multiple of 16 bytes; A's is %lld elements of %lld bytes.",
                      (long long)p->a.ld, eb);
    if ((p->b.ld * eb) % 16 != 0)
        return refuse(reason, reason_size,
                      "the sm90 family loads with TMA, which needs leading dimensions of a "
                      "multiple of 16 bytes; B's is %lld elements of %lld bytes.",
                      (long long)p->b.ld, eb);
    if (p->batch > 1) {
        const ck_gemm_matrix *ms[2] = {&p->a, &p->b};
        for (int i = 0; i < 2; ++i)
            if ((ms[i]->batch_stride * eb) % 16 != 0 || ms[i]->batch_stride * eb >= (1LL << 40))
                return refuse(reason, reason_size,
                              "the sm90 family loads batches with 3-D TMA boxes, which need a "
                              "batch stride of a multiple of 16 bytes below 2^40 bytes (or 0); "
                              "%s's is %lld elements of %lld bytes.",
                              i ? "B" : "A", (long long)ms[i]->batch_stride, eb);
    }
    if (prob->scalar_copy)
        return refuse(reason, reason_size,
                      "the sm90 family loads with TMA, which needs 16-byte aligned A and B; "
                      "%s is not.",
                      (prob->scalar_copy & 1) ? "A" : "B");
    long long lim = 2147483647LL - 512;
    if (p->m > lim || p->n > lim || p->k > lim || p->k < 1)
        return refuse(reason, reason_size,
                      "the sm90 family needs 1 <= K and M, N, K below 2^31 (TMA coordinates); "
                      "M, N, K are %lld, %lld, %lld.",
                      (long long)p->m, (long long)p->n, (long long)p->k);
    return 1;
}

/* D is stored through shared memory and TMA: 16-bit, row-major, rows (and batches) of a
 * multiple of 16 bytes (a TMA store writes whole 16-byte chunks of a row, so N must not end
 * inside one); alpha, bias, activation and scale_d are applied on the way (sm90_value); C,
 * extras and programs go through the generated epilogue. ck_gemm_matrix_div covers ld and the
 * batch stride: the key has it. */
static int tma_store(const ck_gemm_prob *prob)
{
    const ck_gemm_problem *p = &prob->p;
    return (p->d.dtype == CK_DTYPE_BF16 || p->d.dtype == CK_DTYPE_F16) &&
           p->d.order == CK_GEMM_ROW_MAJOR && p->n % 8 == 0 && ck_gemm_matrix_div(&p->d) >= 8 &&
           p->d.batch_stride * 2 < (1LL << 40) && !prob->has_c && !prob->has_epi &&
           p->extra_count == 0; /* bias and activation: sm90_value in the pipeline */
}

/* Output tiles of tile_m x tile_n over all batches. */
static double tiles_of(const ck_gemm_problem *p, int tile_m, int tile_n)
{
    return (double)((p->m + tile_m - 1) / tile_m) * (double)((p->n + tile_n - 1) / tile_n) *
           (double)p->batch;
}

/* The cost of one K step of a 128 x tile_n tile, in K steps of 128 x 256, fitted to the H100
 * runs in bench/RESULTS.md (GEMM, third and fourth sessions): 128 x 128 a little under
 * 128 x 256 per flop; 128 x 64 far under (its step is bound by the ring's latency, not its
 * flops: at 1024^3 twice the tiles ran no faster than 128 x 128). */
static double step_cost_of(int tile_n)
{
    return tile_n >= 256 ? 1.0 : tile_n >= 128 ? 0.5 / 0.97 : 0.6;
}

/* Estimated efficiency (0..1] of a tile_m x tile_n tile with K split `split` ways on `slots`
 * resident blocks: work units (tiles x splits) in waves, each unit its K steps plus a fixed
 * cost (prologue and epilogue, and for a split the partial sums written and read back), the
 * padding of the edge tiles, and a 128 x 128 tile's slightly lower rate per flop than
 * 128 x 256's. The constants come from the H100 runs of bench/gemm_instances.py recorded in
 * bench/RESULTS.md (GEMM, third session): the wave count decides more than the tile. */
static double sm90_estimate(const ck_gemm_prob *prob, int tile_m, int tile_n, int tile_k, int split,
                            int slots)
{
    const ck_gemm_problem *p = &prob->p;
    double tiles = tiles_of(p, tile_m, tile_n);
    double k_tiles = (double)((p->k + tile_k - 1) / tile_k);
    double units = tiles * split, waves = units / (slots > 0 ? slots : 1);
    double steps = (double)((long long)k_tiles + split - 1) / split; /* K steps of a unit */
    /* a 64-row tile's step (one consumer warpgroup) is bound by the ring's latency, like
     * 128 x 64's (not measured yet: bench/RESULTS.md will say) */
    double step_cost = tile_m >= SM90_TILE_M ? step_cost_of(tile_n) : step_cost_of(64);
    /* a split's partial sums (written, then read back by the last split) cost about 10 K steps
     * of 128 x 256 per unit (from the split and unsplit 1024^3 runs in bench/RESULTS.md); the
     * prologue and epilogue 3; both scale with the tile's area */
    double area = (double)tile_n / 256.0 * tile_m / SM90_TILE_M;
    double fixed = 3.0 * area + (split > 1 ? 10.0 * area : 0);
    double busy = ceil(waves) * steps * step_cost;
    double ideal = (double)p->batch * (double)p->m * (double)p->n * (double)p->k /
                   ((double)(slots > 0 ? slots : 1) * 128.0 * 256.0 * tile_k);
    if (ck_gemm_skinny(prob)) { /* small M: streaming B from memory is the floor (skinny.c) */
        double mem_ideal, mem = ck_gemm_skinny_memory_time(prob, tile_m, tile_n, tile_k, split,
                                                           slots, &mem_ideal);
        busy = busy > mem ? busy : mem;
        ideal = ideal > mem_ideal ? ideal : mem_ideal;
    }
    double time = busy + ceil(waves) * fixed;
    /* 128 x 256 with the generated epilogue (not the TMA store) and a 16-bit D: 128
     * accumulators and the packing registers exceed ptxas's 168 (launch bounds of 384
     * threads): it spills. With an f32 D it does not (tf32 4096^3, bench/RESULTS.md). 64 x 256
     * (one consumer of 232 registers) spills with either D (ptxas -v: 216 bytes with f32) */
    if (tile_n >= 256 && !tma_store(prob) && (tile_m < SM90_TILE_M || elem_bytes(p->d.dtype) < 4))
        time *= 1.25;
    /* every tile's right half past N (N <= tile_n / 2): the half-width tile has the same tiles
     * and useful work without the padded half's wgmma and B loads (the N = 64 implicit GEMMs
     * of bench/RESULTS.md, eighth session, run S, ran that much slower on 128 x 128). */
    if (tile_n > 64 && p->n <= tile_n / 2)
        time *= 1.5;
    return ideal / time;
}

/* The same estimate for stream-K (sm90_stream_k_kernel.h): every block an even share of all
 * tiles' K steps, so no partial wave; a block's share touches about share / k_tiles + 1 tiles
 * (each the fixed cost), and the tiles cut between blocks cost a fix-up (a split's partial sums
 * written and read back, as above) in at most two segments per block. */
static double sm90_estimate_stream_k(const ck_gemm_prob *prob, int tile_m, int tile_n, int tile_k,
                                     int slots)
{
    const ck_gemm_problem *p = &prob->p;
    double tiles = tiles_of(p, tile_m, tile_n), s = slots > 0 ? slots : 1;
    double k_tiles = (double)((p->k + tile_k - 1) / tile_k);
    double share = ceil(tiles * k_tiles / s);
    double step_cost = step_cost_of(tile_n);
    double segs = ceil(share / k_tiles) + 1;
    double fixup = fmod(tiles * k_tiles, s) == 0 && fmod(tiles, s) == 0 ? 0 : 2;
    double time = share * step_cost + segs * 3.0 * (double)tile_n / 256.0 +
                  fixup * 10.0 * (double)tile_n / 256.0;
    if (tile_n >= 256 && !tma_store(prob))
        time *= 1.25;
    double ideal = (double)p->batch * (double)p->m * (double)p->n * (double)p->k /
                   (s * 128.0 * 256.0 * tile_k);
    return ideal / time;
}

/* Parts in which a consumer stages its 64 x TILE_N of D for the TMA store: 2 for 128 x 256 with
 * 4 or more stages (half the staging tile leaves room for the 4th stage), else 1. A function
 * of the parameter table's fields, so the kernel key covers it. */
static int c_parts(const ck_gemm_instance *in)
{
    return in->tile_n >= 256 && in->stages >= 4 ? 2 : 1;
}

static size_t c_bytes(const ck_gemm_prob *prob, const ck_gemm_instance *in)
{
    return tma_store(prob) ? (size_t)in->warps_m * 64 * (size_t)in->tile_n * 2 / c_parts(in) : 0;
}

static size_t shared_bytes(const ck_gemm_prob *prob, const ck_gemm_instance *inst)
{
    return 1024 + (size_t)inst->stages * (size_t)(inst->tile_m + inst->tile_n) * SM90_ROW_BYTES +
           c_bytes(prob, inst) + 16 * (size_t)inst->stages +
           16 /* the ring; split-K's arrival flags */;
}

void ck_gemm_sm90_launch_shape(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                               unsigned *threads, size_t *shared)
{
    *threads = SM90_THREADS_PER_WG * (unsigned)(inst->warps_m + 1);
    *shared = shared_bytes(prob, inst);
}

/* The most stages (from `from` down to 2) whose shared memory fits in smem; 1 if none. */
static int stages_that_fit(const ck_gemm_prob *prob, ck_gemm_instance in, int from, size_t smem)
{
    for (in.stages = from; in.stages >= 2; --in.stages)
        if (shared_bytes(prob, &in) <= smem)
            break;
    return in.stages;
}

/* Append `in` with clusters of 2 along M (B shared by multicast) when it has 2 tile rows. */
static void add_cluster(const ck_gemm_prob *prob, ck_gemm_instance in, ck_gemm_instance *out,
                        int *n, int max)
{
    if ((prob->p.m + in.tile_m - 1) / in.tile_m >= 2 && *n < max) {
        in.cluster = 2;
        out[(*n)++] = in;
    }
}

/* The family's score of an instance: the estimate, then what the H100 measured of its variants
 * (bench/RESULTS.md, GEMM, third and fourth sessions): 128 x 256 with 4 stages and D staged in
 * halves was faster than 3 stages up to a few waves of tiles and slightly slower beyond, so it
 * goes first up to 8 waves; clusters of 2 with multicast of B measured within 1% of the same
 * tile without (faster only for 128 x 128 at 8192^3), so they rank just behind it, for
 * `ck tune gemm` to try. */
double ck_gemm_sm90_score(const ck_gemm_prob *prob, const ck_gemm_instance *in, int slots)
{
    int split = in->split_k > 1 ? in->split_k : 1;
    double e = in->decomp == CK_GEMM_DECOMP_STREAM_K
                   ? sm90_estimate_stream_k(prob, in->tile_m, in->tile_n, in->tile_k, slots)
                   : sm90_estimate(prob, in->tile_m, in->tile_n, in->tile_k, split, slots);
    if (in->decomp == CK_GEMM_DECOMP_SPLIT_K_ATOMIC)
        e *= 0.98; /* offered only when asked for (not deterministic); ranked below its twin */
    /* stream-K as built measured at about half its model (bench/RESULTS.md, fourth session),
     * so it stays a candidate for `ck tune gemm` and --stream-k, not the policy's default */
    if (in->decomp == CK_GEMM_DECOMP_STREAM_K)
        e *= 0.5;
    double tiles = tiles_of(&prob->p, in->tile_m, in->tile_n);
    if (c_parts(in) == 2 && tma_store(prob))
        e *= tiles <= 8.0 * (slots > 0 ? slots : 1) ? 1.01 : 0.99;
    if (in->cluster > 1)
        e *= 0.995;
    return e;
}

/* The tiles the family offers: 128 rows (two consumer warpgroups) of 256, 128 or 64
 * columns; for small M (skinny.c, unless CK_GEMM_SKINNY=0) also 64 rows (one consumer
 * warpgroup, a deeper ring for the bytes of B in flight). Not with scale tensors or packed B
 * (quant.c's promotion is tested with 128 rows only). */
static int tiles_offered(const ck_gemm_prob *prob, int (*tiles)[2])
{
    static const int base[][2] = {
        {SM90_TILE_M, SM90_TILE_N}, {SM90_TILE_M, SM90_TILE_N / 2}, {SM90_TILE_M, SM90_TILE_N / 4}};
    int n = 0;
    for (int i = 0; i < 3; ++i)
        tiles[n][0] = base[i][0], tiles[n][1] = base[i][1], ++n;
    if (ck_gemm_skinny(prob) && !prob->quant)
        for (int i = 0; i < 3; ++i)
            tiles[n][0] = CK_GEMM_SKINNY_TILE_M, tiles[n][1] = base[i][1], ++n;
    return n;
}

/* Append the split of K that the estimate ranks best for `in` when it beats none by 2% (few
 * tiles, long K); for 64-row tiles also the split that gives the grid about one unit per
 * block, when it differs (for `ck tune gemm` and bench/gemm_instances.py to compare). */
static void add_splits(const ck_gemm_prob *prob, ck_gemm_instance in, int slots,
                       ck_gemm_instance *out, int *n, int max, double *best_eff)
{
    long long k_tiles = (prob->p.k + in.tile_k - 1) / in.tile_k;
    int best = 1;
    *best_eff = sm90_estimate(prob, in.tile_m, in.tile_n, in.tile_k, 1, slots);
    for (int s = 2; s <= SM90_MAX_SPLIT && s <= k_tiles / 2; ++s) {
        double e = sm90_estimate(prob, in.tile_m, in.tile_n, in.tile_k, s, slots);
        if (e > *best_eff * 1.02)
            best = s, *best_eff = e;
    }
    if (best > 1 && *n < max) {
        in.split_k = best;
        out[(*n)++] = in;
    }
    if (in.tile_m >= SM90_TILE_M)
        return;
    double tiles = tiles_of(&prob->p, in.tile_m, in.tile_n);
    long long fill = (long long)floor(slots / tiles);
    if (fill > SM90_MAX_SPLIT)
        fill = SM90_MAX_SPLIT;
    if (fill > k_tiles / 2)
        fill = k_tiles / 2;
    if (fill >= 2 && fill != best && *n < max) {
        in.split_k = (int)fill;
        out[(*n)++] = in;
    }
}

static int sm90_instances(const ck_gemm_prob *prob, const ck_device_props *props,
                          ck_gemm_instance *out, int max)
{
    int tiles[6][2];
    int n = 0, eb = elem_bytes(prob->p.a.dtype), nt = tiles_offered(prob, tiles);
    size_t smem = props->max_shared_per_block ? props->max_shared_per_block : 227 * 1024;
    int slots = props->multiprocessors > 0 ? props->multiprocessors : 1;
    for (int t = 0; t < nt; ++t) {
        ck_gemm_instance in;
        memset(&in, 0, sizeof in);
        int skinny = tiles[t][0] < SM90_TILE_M;
        in.family = CK_GEMM_FAMILY_SM90;
        in.tile_m = tiles[t][0], in.tile_n = tiles[t][1];
        in.tile_k = SM90_ROW_BYTES / eb;
        in.warps_m = skinny ? 1 : SM90_CONSUMERS, in.warps_n = 1;
        in.cluster = 1, in.raster = 0, in.group = SM90_GROUP, in.persistent = 1;
        in.split_k = 1;
        /* the most stages the shared memory holds, from 6 (64 rows: 8, or the switch's) */
        in.stages = stages_that_fit(
            prob, in, skinny ? ck_gemm_skinny_stages(CK_GEMM_SKINNY_MAX_STAGES) : 6, smem);
        if (in.stages < 2)
            continue;
        if (c_parts(&in) == 2 && tma_store(prob) && n < max) {
            /* also the whole staging tile with one stage fewer (the score orders the two) */
            ck_gemm_instance full = in;
            full.stages = stages_that_fit(prob, in, in.stages - 1, smem);
            if (full.stages >= 2 && c_parts(&full) == 1) {
                out[n++] = full;
                if (!skinny)
                    add_cluster(prob, full, out, &n, max);
            }
        }
        if (n < max)
            out[n++] = in;
        if (skinny) { /* no clusters or stream-K with 64 rows (not built for them yet) */
            double eff;
            if (in.tile_n < 256)
                add_splits(prob, in, slots, out, &n, max, &eff);
            continue;
        }
        add_cluster(prob, in, out, &n, max); /* ranked by the score, for `ck tune gemm` */
        /* the best split of K for this tile, when it beats none (few tiles, long K); 128 x 128
         * only: 128 x 256's accumulators leave no registers for the reduction (it spills) */
        if (in.tile_n >= 256)
            continue;
        double best_eff;
        add_splits(prob, in, slots, out, &n, max, &best_eff);
        /* stream-K, when it beats both (few tiles for the grid, or long K) */
        double sk = sm90_estimate_stream_k(prob, in.tile_m, in.tile_n, in.tile_k, slots);
        if (sk > best_eff * 1.02 && n < max) {
            in.decomp = CK_GEMM_DECOMP_STREAM_K;
            out[n++] = in;
        }
    }
    return ck_gemm_quant_filter(prob, out, n);
}

/* ---- the kernel source ----------------------------------------------------------------------
 * gemm_epilogue (epilogue.c) is generated from the accumulator's encoding: wgmma m64n256 C of
 * two warpgroups stacked along M (P0 = warp of the block, P1 = lane). */

/* The wgmma.m64nNk16.f32 accumulator of `wgs` warpgroups stacked along M. */
static void acc_encoding(int n, int wgs, ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    /* X0 = [wgs, 4 (warp), 2 ((i%4)/2), 8 (g)], X1 = [n/8 (i/4), 4 (t), 2 (i%2)] */
    e->ndim_h[0] = 4, e->h_lengths[0][0] = wgs, e->h_lengths[0][1] = 4;
    e->h_lengths[0][2] = 2, e->h_lengths[0][3] = 8;
    e->ndim_h[1] = 3, e->h_lengths[1][0] = n / 8, e->h_lengths[1][1] = 4, e->h_lengths[1][2] = 2;
    e->ndim_p = 2;
    e->p_size[0] = 2; /* P0 = warp of the block = (warpgroup, warp) */
    e->p_major[0][0] = 1, e->p_minor[0][0] = 0, e->p_major[0][1] = 1, e->p_minor[0][1] = 1;
    e->p_size[1] = 2; /* P1 = lane = (g, t) */
    e->p_major[1][0] = 1, e->p_minor[1][0] = 3, e->p_major[1][1] = 2, e->p_minor[1][1] = 1;
    e->ndim_y = 3; /* register i = (i/4, (i%4)/2, i%2) */
    e->y_major[0] = 2, e->y_minor[0] = 0;
    e->y_major[1] = 1, e->y_minor[1] = 2;
    e->y_major[2] = 2, e->y_minor[2] = 2;
}

void ck_gemm_sm90_acc_encoding(const ck_gemm_instance *inst, ck_dist_encoding *out)
{
    acc_encoding(inst->tile_n, inst->warps_m, out);
}

static ck_status sm90_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst, char **source)
{
    return ck_gemm_sm90_source_entry(prob, inst, NULL, NULL, source);
}

ck_status ck_gemm_sm90_source_entry(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    const char *loaders, const char *epilogue, char **source)
{
    const ck_gemm_problem *p = &prob->p;
    char *epi = NULL, *defs = NULL;
    *source = NULL;
    ck_dist_encoding enc;
    acc_encoding(inst->tile_n, inst->warps_m, &enc);
    ck_status st = CK_SUCCESS;
    if (epilogue) { /* the caller's gemm_epilogue (then no TMA store) */
        epi = malloc(strlen(epilogue) + 1);
        if (epi)
            memcpy(epi, epilogue, strlen(epilogue) + 1);
        else
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, "gemm sm90: out of memory for the epilogue.");
    } else {
        st = ck_gemm_epilogue_source(prob, &enc, inst->tile_m, inst->tile_n, &epi);
    }
    if (st)
        return st;
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(prob, inst, params, CK_GEMM_MAX_PARAMS);
    defs = np < 0 ? NULL : ck_gemm_params_defines(params, np);
    size_t cap = strlen(epi) + (defs ? strlen(defs) : 0) + (loaders ? strlen(loaders) : 0) + 4096;
    /* the register split of setmaxnreg (at most 64K per block): a producer warpgroup that
     * copies an operand with cp.async computes addresses and needs more than a TMA thread's 40 */
    int regs_producer = loaders ? 56 : 40, regs_consumer = loaders ? 224 : 232;
    char *s = defs ? malloc(cap) : NULL;
    if (!s) {
        free(epi), free(defs);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "gemm sm90: out of memory for the kernel source.");
    }
    /* the parameter table's defines, then what this family derives from them */
    snprintf(
        s, cap,
        "/* ck gemm, family sm90 (TMA + wgmma, warp-specialized, persistent): %s x %s -> "
        "%s, A %s, B %s, tile %dx%dx%d, %d stages, %d consumer warpgroups, groups of %d%s */\n"
        "%s#define GEMM_CONSUMERS GEMM_WARPS_M\n#define GEMM_IN %d\n#define GEMM_IN_B %d\n"
        "#define GEMM_REGS_PRODUCER %d\n#define GEMM_REGS_CONSUMER %d\n"
        "#define GEMM_TMA_STORE %d\n#define GEMM_D_F16 %d\n#define GEMM_C_PARTS %d\n"
        "#include \"ck_device.h\"\n#include \"ops/gemm/gemm_args_kernel.h\"\n\n"
        "%s\n%s#include \"ops/gemm/sm90_pipeline_kernel.h\"\n\n"
        "CK_KERNEL void CK_LAUNCH_BOUNDS(%d, 1) gemm_sm90(ck_gemm_kargs ka,\n"
        "    CK_GRID_CONSTANT const ck_tensor_map ta, CK_GRID_CONSTANT const ck_tensor_map tb,\n"
        "    CK_GRID_CONSTANT const ck_tensor_map td)\n"
        "{\n    sm90_gemm(&ka, &ta, &tb, &td);\n}\n",
        ck_dtype_name(p->a.dtype), ck_dtype_name(p->b.dtype), ck_dtype_name(p->d.dtype),
        prob->a_kmajor ? "K-major" : "M-major", prob->b_kmajor ? "K-major" : "N-major",
        inst->tile_m, inst->tile_n, inst->tile_k, inst->stages, inst->warps_m, inst->group,
        inst->decomp == CK_GEMM_DECOMP_STREAM_K ? ", stream-K"
        : inst->split_k > 1                     ? ", K split (count at launch)"
                                                : "",
        defs, in_code(p->a.dtype, prob), in_code(p->b.dtype, prob), regs_producer, regs_consumer,
        epilogue ? 0 : tma_store(prob), p->d.dtype == CK_DTYPE_F16, c_parts(inst), epi,
        loaders ? loaders : "", SM90_THREADS_PER_WG * (inst->warps_m + 1));
    free(epi), free(defs);
    *source = s;
    return CK_SUCCESS;
}

/* ---- launch -------------------------------------------------------------------------------- */

/* The family's plan state: the tensor maps of the last A, B and D pointers; split-K's
 * workspace (partial sums and arrival counters, device memory of the plan). */
typedef struct sm90_state {
    ck_tensor_map ta, tb, td;
    ck_tensor_map none; /* zeros: the argument of an operand that comes through a loader */
    const void *a, *b, *d;
    ck_device *dev;
    void *ws;
    size_t ws_flags_offset;
    int splits; /* K ranges per tile at launch (the instance's, at most the K tiles) */
} sm90_state;

static void state_free(void *p)
{
    sm90_state *s = p;
    if (s && s->ws)
        ck_free(s->dev, s->ws);
    free(s);
}

/* The workspace of a split-K or stream-K plan (none otherwise): partial sums of every
 * (tile, split); with atomics one sum per tile; stream-K two slots per block of the grid. Then
 * a counter per tile part, zeroed (the sums too with atomics: the last split leaves 0). */
static ck_status alloc_ws(const ck_gemm_plan *plan, sm90_state *s)
{
    const ck_gemm_instance *in = &plan->inst;
    const ck_gemm_problem *p = &plan->prob.p;
    long long tiles =
        ((p->m + in->tile_m - 1) / in->tile_m) * ((p->n + in->tile_n - 1) / in->tile_n) * p->batch;
    int stream_k = in->decomp == CK_GEMM_DECOMP_STREAM_K;
    int atomic = in->decomp == CK_GEMM_DECOMP_SPLIT_K_ATOMIC;
    if (s->splits < 2 && !stream_k)
        return CK_SUCCESS;
    long long slots = atomic ? tiles : stream_k ? 2LL * plan->launch.grid[0] : tiles * s->splits;
    size_t part = (size_t)in->tile_m * (size_t)in->tile_n * sizeof(float);
    s->ws_flags_offset = (size_t)slots * part;
    size_t bytes = s->ws_flags_offset + (size_t)tiles * (size_t)in->warps_m * sizeof(unsigned);
    size_t zero_from = atomic ? 0 : s->ws_flags_offset;
    ck_status st = ck_malloc(s->dev, bytes, &s->ws);
    if (!st)
        st = ck_memset_d8(s->dev, (char *)s->ws + zero_from, 0, bytes - zero_from, NULL);
    return st;
}

static ck_status sm90_prepare(ck_gemm_plan *plan)
{
    const ck_gemm_instance *in = &plan->inst;
    const ck_gemm_problem *p = &plan->prob.p;
    ck_launch_config *cfg = &plan->launch;
    memset(cfg, 0, sizeof *cfg);
    cfg->block[0] = SM90_THREADS_PER_WG * (unsigned)(in->warps_m + 1);
    cfg->block[1] = cfg->block[2] = 1;
    cfg->grid[1] = cfg->grid[2] = 1;
    cfg->dynamic_shared_bytes = shared_bytes(&plan->prob, in);
    long long tiles = ((p->m + in->tile_m - 1) / in->tile_m) *
                      ((p->n + in->tile_n - 1) / in->tile_n) * p->batch; /* of every batch */
    long long k_tiles = (p->k + in->tile_k - 1) / in->tile_k;
    int splits = in->split_k > 1 ? in->split_k : 1;
    if (splits > k_tiles)
        splits = (int)k_tiles;
    int cl = in->cluster > 1 ? in->cluster : 1;
    int stream_k = in->decomp == CK_GEMM_DECOMP_STREAM_K;
    /* work units: (tile, K range); with clusters, cluster tiles of `cl` tile rows; stream-K:
     * K steps (the grid is at most these, so every block's share holds one) */
    long long units = cl > 1
                          ? (p->m + (long long)in->tile_m * cl - 1) / ((long long)in->tile_m * cl) *
                                ((p->n + in->tile_n - 1) / in->tile_n) * p->batch
                      : stream_k ? tiles * k_tiles
                                 : tiles * splits;
    if (cl > 1)
        cfg->cluster[0] = (unsigned)cl, cfg->cluster[1] = cfg->cluster[2] = 1;
    int resident = 0; /* resident blocks, or clusters for a cluster launch */
    ck_status st = ck_kernel_max_active(plan->kernel, cfg, &resident);
    if (st)
        return st;
    if (resident <= 0) /* the emulator: no limit; one block (cluster) per worker */
        resident = ck_op_props(plan->ctx)->multiprocessors;
    cfg->grid[0] = (unsigned)((units < resident ? units : resident) * cl);
    if (cfg->grid[0] < (unsigned)cl)
        cfg->grid[0] = (unsigned)cl;
    plan->align_a = plan->align_b = 16;
    plan->align_c = plan->align_d = 16;

    sm90_state *s = NULL;
    if (posix_memalign((void **)&s, 64, sizeof *s) != 0)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "gemm sm90: out of memory for the plan state.");
    memset(s, 0, sizeof *s);
    plan->family_state = s;
    plan->family_state_free = state_free;
    s->dev = ck_context_device(plan->ctx);
    s->splits = splits;
    return alloc_ws(plan, s);
}

ck_status ck_gemm_sm90_set_grid(ck_gemm_plan *plan, int blocks)
{
    const ck_gemm_problem *p = &plan->prob.p;
    const ck_gemm_instance *in = &plan->inst;
    if (in->family != CK_GEMM_FAMILY_SM90 || in->decomp != CK_GEMM_DECOMP_STREAM_K || blocks < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "gemm sm90: the grid is set only for stream-K plans, to 1 block or more.");
    long long iters = ((p->m + in->tile_m - 1) / in->tile_m) *
                      ((p->n + in->tile_n - 1) / in->tile_n) * p->batch *
                      ((p->k + in->tile_k - 1) / in->tile_k);
    plan->launch.grid[0] = (unsigned)(blocks < iters ? blocks : iters);
    sm90_state *s = plan->family_state;
    ck_free(s->dev, s->ws);
    s->ws = NULL;
    return alloc_ws(plan, s);
}

/* The batch dimension of a batched problem's map: `batch` matrices `stride` elements apart, or
 * one (broadcast, stride 0: the kernel reads batch 0; TMA wants a nonzero stride). */
static void batch_dim(ck_tensor_map_desc *d, long long batch, long long stride)
{
    d->rank = 3;
    d->dims[2] = (uint64_t)(stride ? batch : 1);
    d->strides[1] = stride ? (uint64_t)stride * d->elem_bytes : d->strides[0];
    d->box[2] = 1;
    d->elem_strides[2] = 1;
}

/* The map of an operand: `kmajor` rows of `mn` elements ... K contiguous: dims (K, MN), one
 * box of TILE_K x rows; else dims (MN, K), boxes of 64 x TILE_K; batched: (.., .., batch). */
static ck_status operand_map(ck_device *dev, const void *ptr, const ck_gemm_matrix *mat,
                             long long batch, int kmajor, long long mn, long long k, int rows,
                             int tile_k, ck_tensor_map *map)
{
    ck_tensor_map_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = (unsigned)elem_bytes(mat->dtype);
    d.rank = 2;
    d.global_address = ptr;
    d.dims[0] = (uint64_t)(kmajor ? k : mn);
    d.dims[1] = (uint64_t)(kmajor ? mn : k);
    d.strides[0] = (uint64_t)mat->ld * d.elem_bytes;
    d.box[0] = kmajor ? (uint32_t)tile_k : SM90_ROW_BYTES / d.elem_bytes;
    d.box[1] = kmajor ? (uint32_t)rows : (uint32_t)tile_k;
    d.elem_strides[0] = d.elem_strides[1] = 1;
    d.swizzle = 3; /* 128-byte */
    if (batch > 1)
        batch_dim(&d, batch, mat->batch_stride);
    return ck_tensor_map_create(dev, &d, map);
}

static ck_status sm90_launch(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    const ck_gemm_prob *prob = &plan->prob;
    const ck_gemm_problem *p = &prob->p;
    const ck_gemm_instance *in = &plan->inst;
    ck_device *dev = ck_context_device(plan->ctx);
    sm90_state *s = plan->family_state;
    ck_status st = CK_SUCCESS;
    if (plan->a_loader) { /* A comes through the source's loader: no map (B's stands in) */
        s->a = NULL;
    } else if (s->a != args->a) {
        s->a = NULL;
        st = operand_map(dev, args->a, &p->a, p->batch, prob->a_kmajor, p->m, p->k, in->tile_m,
                         in->tile_k, &s->ta);
        if (st)
            return st;
        s->a = args->a;
    }
    if (plan->b_loader) {
        s->b = NULL;
    } else if (s->b != args->b) {
        s->b = NULL;
        st = operand_map(dev, args->b, &p->b, p->batch, prob->b_kmajor, p->n, p->k,
                         in->tile_n / (in->cluster > 1 ? in->cluster : 1), in->tile_k, &s->tb);
        if (st)
            return st;
        s->b = args->b;
    }
    if (s->d != args->d) { /* D (row-major): dims (N, M), boxes of 64 x 64; else unused */
        s->d = NULL;
        if (tma_store(prob)) {
            ck_tensor_map_desc d;
            memset(&d, 0, sizeof d);
            d.elem_bytes = 2, d.rank = 2, d.global_address = args->d;
            d.dims[0] = (uint64_t)p->n, d.dims[1] = (uint64_t)p->m;
            d.strides[0] = (uint64_t)p->d.ld * 2;
            d.box[0] = 64, d.box[1] = 64;
            d.elem_strides[0] = d.elem_strides[1] = 1;
            d.swizzle = 3;
            if (p->batch > 1)
                batch_dim(&d, p->batch, p->d.batch_stride);
            st = ck_tensor_map_create(dev, &d, &s->td);
            if (st)
                return st;
        } else {
            s->td = plan->a_loader ? (plan->b_loader ? s->none : s->tb) : s->ta;
        }
        s->d = args->d;
    }
    ck_gemm_kargs ka;
    ck_gemm_fill_kargs(plan, args, &ka);
    ka.k_splits = s->splits;
    ka.ws = s->ws;
    ka.ws_flags = s->ws ? (unsigned *)((char *)s->ws + s->ws_flags_offset) : NULL;
    ck_launch_config cfg = plan->launch;
    cfg.stream = ck_context_stream(plan->ctx);
    void *kargs[4] = {&ka, plan->a_loader ? &s->none : &s->ta, plan->b_loader ? &s->none : &s->tb,
                      &s->td};
    size_t sizes[4] = {sizeof ka, sizeof s->ta, sizeof s->tb, sizeof s->td};
    return ck_launch(plan->kernel, &cfg, kargs, sizes, 4);
}

const ck_gemm_family ck_gemm_family_sm90 = {CK_GEMM_FAMILY_SM90, "sm90",      sm90_supports,
                                            sm90_instances,      sm90_source, "gemm_sm90",
                                            sm90_prepare,        sm90_launch};
