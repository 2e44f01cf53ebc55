/*
 * The sm_90a GEMM pipeline (family 90): persistent, warp-specialized TMA + wgmma.
 *
 * A block is GEMM_CONSUMERS consumer warpgroups (threads 0 .. 128 * GEMM_CONSUMERS - 1, so the
 * generated epilogue's windows map P from the thread id) and one producer warpgroup (the last).
 * The producer's one thread walks the block's tiles and their K steps, and for each fills a slot
 * of the stage ring with two TMA boxes (A: TILE_M x TILE_K, B: TILE_N x TILE_K, 128-byte
 * swizzle, zero-filled outside the matrices); consumer warpgroup w multiplies rows
 * 64w .. 64w + 63 of the slot's A by its whole B with wgmma (m64nTILE_N, K-steps of 32 bytes) into
 * registers, releases the slot, and after the last K step stores its part of the tile through
 * gemm_epilogue (generated from the accumulator's encoding). Tiles are handed out round-robin
 * over a resident grid, in groups of GEMM_GROUP tile rows (grouped raster: neighbouring blocks
 * share A and B tiles in L2). With GEMM_CLUSTER = 2, the two blocks of a cluster take the two
 * tile rows of one tile column: each loads its A and half of the common B tile, multicast into
 * both blocks, and releases each slot in both. With GEMM_SPLIT_K, a work unit is one of
 * ka->k_splits ranges of a tile's K steps, and the splits' partial sums meet in a workspace
 * (sm90_split_reduce: a fixed-order sum, or f32 atomics with GEMM_DECOMP 3). With GEMM_DECOMP 4
 * (stream-K, sm90_stream_k_kernel.h) a block's work is an even share of all tiles' K steps,
 * cut at tile boundaries, and tiles shared by blocks are summed in a fixed order. Strided batches
 * (GEMM_BATCHED): the units run over batch x tiles (x splits), the tensor maps are 3-D with the
 * batch outermost, and the epilogue writes the unit's batch of D.
 *
 * The operand path (as the sm80 pipeline's): a source may define
 * GEMM_A_LOADER(s, ka, batch, m0, k0) and / or GEMM_B_LOADER(s, ka, batch, n0, k0) before
 * including this file; that operand's tile of a stage is then written by all 128 threads of
 * the producer warpgroup with cp.async in the layout TMA would give it (K-major: rows of 128
 * bytes; MN-major: boxes of 64 elements of M or N by TILE_K rows; 16-byte chunks XOR-swizzled
 * by row % 8, 1024-byte aligned), e.g. convolution's im2col copy window (src/ops/conv). Each
 * producer thread then arrives on the stage's full barrier when its copies land
 * (ck_cp_async_mbar_arrive_noinc; the barrier expects 1 + 128 arrivals and the TMA boxes'
 * bytes), and the consumers order those generic-proxy writes before their wgmma reads (async
 * proxy) with a proxy fence. ka->a / ka->b are the bases of batch 0. No clusters with loaders.
 * A loader source may also define GEMM_LOADER_ARRIVE(full, ka), the thread's arrival.
 *
 * Grouped GEMM (GEMM_GROUPED, grouped.c): the source includes sm90_grouped_kernel.h, whose
 * loaders copy each group's A and B; producer and consumers walk the tiles of the group list
 * in device memory (group_walk_kernel.h) instead of the units of one problem, each tile with
 * its group's arguments; a group of K 0 takes no slot (its product is 0).
 *
 * Defines from the host (sm90.c): GEMM_TILE_M, GEMM_TILE_N, GEMM_TILE_K (elements per 128-byte
 * row), GEMM_STAGES, GEMM_CONSUMERS, GEMM_GROUP, GEMM_IN (0 f16, 1 bf16, 2 tf32, 3 e4m3,
 * 4 e5m2; GEMM_IN_B likewise for B), GEMM_A_KMAJOR, GEMM_B_KMAJOR (1: K contiguous; 0: M or N
 * contiguous, 16-bit inputs only), GEMM_REGS_PRODUCER, GEMM_REGS_CONSUMER; and gemm_epilogue.
 */
#include "ck_block.h"
#include "ops/common/fast_conv_kernel.h"
#include "ops/gemm/gemm_args_kernel.h"

#define SM90_ROW_BYTES 128 /* one row of a tile: the 128-byte swizzle span */
#define SM90_A_BYTES   (GEMM_TILE_M * SM90_ROW_BYTES)
#define SM90_B_BYTES   (GEMM_TILE_N * SM90_ROW_BYTES)
#define SM90_STAGE     (SM90_A_BYTES + SM90_B_BYTES)
#if defined(GEMM_A_LOADER) || defined(GEMM_B_LOADER) /* the producer warpgroup's cp.async */
#define SM90_LOADER_FILLS CK_WARPGROUP_THREADS
#else
#define SM90_LOADER_FILLS 0
#endif
#ifdef GEMM_A_LOADER /* the bytes that come by TMA */
#define SM90_TMA_A 0
#else
#define SM90_TMA_A SM90_A_BYTES
#endif
#ifdef GEMM_B_LOADER
#define SM90_TMA_B 0
#else
#define SM90_TMA_B SM90_B_BYTES
#endif
#define SM90_TMA_BYTES (SM90_TMA_A + SM90_TMA_B)
#ifndef GEMM_LOADER_ARRIVE /* a loader thread's arrival on the stage's full barrier */
#define GEMM_LOADER_ARRIVE(full, ka) ck_cp_async_mbar_arrive_noinc(full)
#endif
#ifndef GEMM_GROUPED
#define GEMM_GROUPED 0
#endif
#if SM90_LOADER_FILLS && GEMM_CLUSTER > 1
#error "operand loaders and clusters are not combined"
#endif
#define SM90_BOX_MN    64 /* MN-major boxes: 64 elements (128 bytes) along M or N */
#define SM90_BOX_BYTES (SM90_BOX_MN * SM90_ROW_BYTES)
#define SM90_WG_N      GEMM_TILE_N
#define SM90_ACC       (SM90_WG_N / 2)
#ifndef GEMM_C_PARTS
#define GEMM_C_PARTS 1
#endif
#define SM90_C_COLS  (SM90_WG_N / GEMM_C_PARTS) /* columns of D staged at a time */
#define SM90_C_BYTES (64 * SM90_C_COLS * 2)     /* one consumer's 64 x C_COLS 16-bit part of D */
#define SM90_C_SMEM  (GEMM_TMA_STORE ? GEMM_CONSUMERS * SM90_C_BYTES : 0)

/* One K step (32 bytes of K) of a consumer warpgroup: acc (+)= A(64 x k) B(k x TILE_N). */
#define SM90_SS(N, T, acc, da, db, sd)                                                             \
    CK_WGMMA_SS(N, T, acc, da, db, sd, 1, 1, 1 - GEMM_A_KMAJOR, 1 - GEMM_B_KMAJOR)
#define SM90_TF32(N, acc, da, db, sd)       CK_WGMMA_SS_TF32(N, acc, da, db, sd, 1, 1)
#define SM90_F8(N, TA, TB, acc, da, db, sd) CK_WGMMA_SS_F8(N, TA, TB, acc, da, db, sd, 1, 1)
#ifndef GEMM_QUANT
#define GEMM_QUANT 0
#endif
#if GEMM_QUANT /* block-scaled fp8: K blocks in `part`, promoted into acc (sm90_quant_kernel.h) */
#include "ops/gemm/sm90_quant_kernel.h"
#endif

#if GEMM_IN == 0
#define SM90_MMA(acc, da, db, sd) SM90_SS(GEMM_TILE_N, f16, acc, da, db, sd)
#elif GEMM_IN == 1
#define SM90_MMA(acc, da, db, sd) SM90_SS(GEMM_TILE_N, bf16, acc, da, db, sd)
#elif GEMM_IN == 2
#define SM90_MMA(acc, da, db, sd) SM90_TF32(GEMM_TILE_N, acc, da, db, sd)
#elif GEMM_IN == 3 && GEMM_IN_B == 3
#define SM90_MMA(acc, da, db, sd) SM90_F8(GEMM_TILE_N, e4m3, e4m3, acc, da, db, sd)
#elif GEMM_IN == 3 && GEMM_IN_B == 4
#define SM90_MMA(acc, da, db, sd) SM90_F8(GEMM_TILE_N, e4m3, e5m2, acc, da, db, sd)
#elif GEMM_IN == 4 && GEMM_IN_B == 3
#define SM90_MMA(acc, da, db, sd) SM90_F8(GEMM_TILE_N, e5m2, e4m3, acc, da, db, sd)
#else
#define SM90_MMA(acc, da, db, sd) SM90_F8(GEMM_TILE_N, e5m2, e5m2, acc, da, db, sd)
#endif

/* Tiles of one batch's output (cluster tiles with clusters: GEMM_CLUSTER tile rows). */
CK_DEVICE int sm90_tiles(const ck_gemm_kargs *ka)
{
    return (ka->tiles_m + GEMM_CLUSTER - 1) / GEMM_CLUSTER * ka->tiles_n;
}

#ifndef GEMM_DECOMP
#define GEMM_DECOMP 0
#endif
#define GEMM_STREAM_K     (GEMM_DECOMP == 4) /* CK_GEMM_DECOMP_STREAM_K */
#define GEMM_SPLIT_ATOMIC (GEMM_DECOMP == 3) /* CK_GEMM_DECOMP_SPLIT_K_ATOMIC */

#if GEMM_STREAM_K
/* stream-K's walk and fix-up: sm90_first, sm90_end, sm90_next, sm90_unit, sm90_stream_fixup */
#include "ops/gemm/sm90_stream_k_kernel.h"
#else
/* Work unit u of the persistent grid, units ordered (batch, tile, split): returns the tile of
 * batch *batch, and K tiles [*k0, *k1) of split u % splits (without split-K, the whole K). */
CK_DEVICE int sm90_unit(const ck_gemm_kargs *ka, long long u, int *batch, int *k0, int *k1)
{
#if GEMM_SPLIT_K
    int s = (int)(u % ka->k_splits);
    *k0 = (int)((long long)ka->k_tiles * s / ka->k_splits);
    *k1 = (int)((long long)ka->k_tiles * (s + 1) / ka->k_splits);
    u /= ka->k_splits;
#else
    *k0 = 0, *k1 = ka->k_tiles;
#endif
#if GEMM_BATCHED
    *batch = (int)(u / sm90_tiles(ka));
    return (int)(u % sm90_tiles(ka));
#else
    *batch = 0;
    return (int)u;
#endif
}

CK_DEVICE int sm90_units(const ck_gemm_kargs *ka)
{
#if GEMM_SPLIT_K
    return sm90_tiles(ka) * ka->batch * ka->k_splits;
#else
    return sm90_tiles(ka) * ka->batch;
#endif
}

/* The persistent grid's walk: its blocks (clusters) take units first, first + step, ... up to
 * the end. */
CK_DEVICE long long sm90_first(const ck_gemm_kargs *ka)
{
    (void)ka;
    return (long long)ck_block_idx_x() / GEMM_CLUSTER;
}

CK_DEVICE long long sm90_end(const ck_gemm_kargs *ka)
{
    return sm90_units(ka);
}

CK_DEVICE long long sm90_next(const ck_gemm_kargs *ka, long long u)
{
    (void)ka;
    return u + (long long)ck_grid_dim_x() / GEMM_CLUSTER;
}
#endif

/* TMA boxes: batched problems have 3-D maps (the batch the outer dimension, its stride the
 * batch stride; a broadcast operand's map has one batch, read at 0). */
#if GEMM_BATCHED
#define SM90_TMA_LOAD(s, map, bar, x, y, z) ck_tma_load_3d(s, map, bar, x, y, z)
#define SM90_TMA_LOAD_MC(s, map, bar, x, y, z, mc)                                                 \
    ck_tma_load_3d_multicast(s, map, bar, x, y, z, mc)
#define SM90_TMA_STORE(map, s, x, y, z) ck_tma_store_3d(map, s, x, y, z)
#else
#define SM90_TMA_LOAD(s, map, bar, x, y, z)        ck_tma_load_2d(s, map, bar, x, y)
#define SM90_TMA_LOAD_MC(s, map, bar, x, y, z, mc) ck_tma_load_2d_multicast(s, map, bar, x, y, mc)
#define SM90_TMA_STORE(map, s, x, y, z)            ck_tma_store_2d(map, s, x, y)
#endif

#if (GEMM_SPLIT_K || GEMM_STREAM_K) && GEMM_CLUSTER > 1
#error "split-K / stream-K and clusters are not combined"
#endif
#if GEMM_GROUPED &&                                                                                \
    (GEMM_SPLIT_K || GEMM_STREAM_K || GEMM_BATCHED || GEMM_CLUSTER > 1 || GEMM_QUANT)
#error "grouped GEMM takes whole tiles of one product per group: no split, batch, cluster, scales"
#endif

/* Tile t of the grouped raster: GEMM_GROUP tile rows at a time, down the rows first. With
 * clusters, t counts cluster tiles (GEMM_CLUSTER tile rows of one tile column; the blocks of
 * the cluster share its B tile) and the block takes the row of its rank. */
CK_DEVICE void sm90_tile(const ck_gemm_kargs *ka, int t, int *tm, int *tn)
{
    int tiles_m = (ka->tiles_m + GEMM_CLUSTER - 1) / GEMM_CLUSTER;
    int per_group = GEMM_GROUP * ka->tiles_n, first = (t / per_group) * GEMM_GROUP;
    int rows = tiles_m - first < GEMM_GROUP ? tiles_m - first : GEMM_GROUP;
    *tm = first + (t % per_group) % rows;
    *tn = (t % per_group) / rows;
#if GEMM_CLUSTER > 1
    *tm = *tm * GEMM_CLUSTER + (int)ck_cluster_ctarank();
#endif
}

/* The operand tile `rows` x TILE_K at (mn0, k0) of batch bz of a matrix whose map is `map`:
 * one box when K is contiguous, else boxes of 64 rows (M or N contiguous). */
CK_DEVICE void sm90_load(unsigned char *smem, const ck_tensor_map *map, unsigned long long *bar,
                         int kmajor, int rows, int mn0, int k0, int bz)
{
    (void)bz;
    if (kmajor) {
        SM90_TMA_LOAD(smem, map, bar, k0, mn0, bz);
    } else {
        for (int j = 0; j < rows / SM90_BOX_MN; ++j)
            SM90_TMA_LOAD(smem + j * SM90_BOX_BYTES, map, bar, mn0 + j * SM90_BOX_MN, k0, bz);
    }
}

/* B's tile (TILE_N x TILE_K at (n0, k0)) into every block of the cluster: this block loads
 * its 1 / GEMM_CLUSTER of the rows and multicasts them (one box of TILE_N / GEMM_CLUSTER rows
 * when K is contiguous; else its share of the 64-row boxes). */
CK_DEVICE void sm90_load_b_shared(unsigned char *smem, const ck_tensor_map *map,
                                  unsigned long long *bar, int n0, int k0, int bz)
{
    (void)bz;
#if GEMM_CLUSTER > 1
    const int part = GEMM_TILE_N / GEMM_CLUSTER;
    const unsigned short all = (unsigned short)((1u << GEMM_CLUSTER) - 1u);
    int r = (int)ck_cluster_ctarank();
    if (GEMM_B_KMAJOR) {
        SM90_TMA_LOAD_MC(smem + r * part * SM90_ROW_BYTES, map, bar, k0, n0 + r * part, bz, all);
    } else {
        for (int j = r * part / SM90_BOX_MN; j < (r + 1) * part / SM90_BOX_MN; ++j)
            SM90_TMA_LOAD_MC(smem + j * SM90_BOX_BYTES, map, bar, n0 + j * SM90_BOX_MN, k0, bz,
                             all);
    }
#else
    sm90_load(smem, map, bar, GEMM_B_KMAJOR, GEMM_TILE_N, n0, k0, bz);
#endif
}

/* Descriptor of K step s of 64 rows starting at `tile` (K-major: 32 bytes further along each
 * row; MN-major: 16 rows of k further, 64-element boxes SM90_BOX_BYTES apart). */
CK_DEVICE unsigned long long sm90_desc(const unsigned char *tile, int kmajor, int s)
{
    if (kmajor)
        return ck_wgmma_desc(tile + 32 * s, 16, 1024, CK_SWIZZLE_128B);
    return ck_wgmma_desc(tile + 16 * SM90_ROW_BYTES * s, SM90_BOX_BYTES, 1024, CK_SWIZZLE_128B);
}

#if GEMM_D_F16
#define SM90_CVT(x) ck_fast_f32_to_f16(x)
#else
#define SM90_CVT(x) ck_fast_f32_to_bf16(x)
#endif

/* The epilogue of the TMA-store path, one element: alpha, the bias of its row or column, the
 * activation, 1 / scale_d, in the generic epilogue's order (epilogue.c), in f32. Problems with
 * C, extras or an elementwise program take the generic epilogue (sm90.c's tma_store). */
#if GEMM_BIAS
CK_DEVICE float sm90_bias(const ck_gemm_kargs *ka, int batch, long long row, long long col)
{
    long long i = GEMM_BIAS == 1 ? row : col;
    if (i >= (GEMM_BIAS == 1 ? ka->m : ka->n))
        return 0.0f; /* outside D: the TMA store clips the element */
    i += (long long)batch * ka->batch_bias;
#if GEMM_BIAS_TYPE == 0
    return ((const float *)ka->bias)[i];
#elif GEMM_BIAS_TYPE == 3
    return ck_fast_bf16_to_f32_canon(((const unsigned short *)ka->bias)[i]);
#else
    return ck_fast_f16_to_f32_canon(((const unsigned short *)ka->bias)[i]);
#endif
}
#endif

CK_DEVICE float sm90_value(const ck_gemm_kargs *ka, float acc, float bias)
{
    float v = ka->alpha * acc;
    (void)bias;
#if GEMM_BIAS
    v += bias;
#endif
#if GEMM_ACT == 1
    v = ew_relu_f32(v);
#elif GEMM_ACT == 2
    v = ew_gelu_tanh_f32(v);
#elif GEMM_ACT == 3
    v = ew_gelu_erf_f32(v);
#elif GEMM_ACT == 4
    v = ew_silu_f32(v);
#elif GEMM_ACT == 5
    v = ew_sigmoid_f32(v);
#endif
    return v * ka->inv_scale_d;
}

/* D's rows m0 .. m0 + 63, columns n0 .. n0 + TILE_N - 1 from one consumer warpgroup's
 * accumulator, through `ctile` (64 x 64 boxes, 128-byte swizzle) and the tensor map `td`, in
 * GEMM_C_PARTS parts of C_COLS columns (a smaller staging tile leaves shared memory for another
 * stage of the ring). One thread issues the stores; before ctile is written again it waits
 * until they have read it. */
CK_DEVICE void sm90_store_tile(const float *acc, const ck_gemm_kargs *ka, const ck_tensor_map *td,
                               unsigned char *ctile, unsigned wg, int batch, long long m0,
                               long long n0)
{
    (void)batch;
    unsigned t = ck_warpgroup_thread(), w = t / 32, g = (t % 32) / 4, q = t % 4;
    CK_UNROLL for (int part = 0; part < GEMM_C_PARTS; ++part)
    {
        if (t == 0)
            ck_tma_store_wait_read(0);
        ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
        /* registers i, i + 1: one row, 2 columns; this part's columns are registers
         * part * SM90_ACC / PARTS onwards (8 columns per 4 registers) */
        CK_UNROLL for (int j = 0; j < SM90_ACC / GEMM_C_PARTS; j += 2)
        {
            int i = part * (SM90_ACC / GEMM_C_PARTS) + j;
            unsigned r = 16 * w + g + 8 * ((i % 4) / 2), c = 8 * (j / 4) + 2 * q;
            unsigned off = (c / 64) * SM90_BOX_BYTES + r * SM90_ROW_BYTES +
                           ((((c % 64) / 8) ^ (r % 8)) << 4) + (c % 8) * 2;
            float b0 = 0.0f, b1 = 0.0f;
#if GEMM_BIAS
            long long row = m0 + r, col = n0 + part * SM90_C_COLS + c;
            b0 = sm90_bias(ka, batch, row, col);
            b1 = GEMM_BIAS == 1 ? b0 : sm90_bias(ka, batch, row, col + 1);
#endif
            *(unsigned *)(ctile + off) = SM90_CVT(sm90_value(ka, acc[i], b0)) |
                                         (SM90_CVT(sm90_value(ka, acc[i + 1], b1)) << 16);
        }
        ck_fence_proxy_async(); /* the copy engine reads what the threads wrote */
        ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
        if (t == 0) {
            for (int b = 0; b < SM90_C_COLS / SM90_BOX_MN; ++b)
                SM90_TMA_STORE(td, ctile + b * SM90_BOX_BYTES,
                               (int)n0 + part * SM90_C_COLS + b * SM90_BOX_MN, (int)m0, batch);
            ck_tma_store_commit();
        }
    }
}

/* The producer's part of work unit u (of the arguments ka: the problem's, or a group's): thread
 * 0 of the warpgroup issues the TMA boxes of its K steps; with an operand loader every thread of
 * the warpgroup copies its part of the loaded operand(s). */
CK_DEVICE void sm90_produce(const ck_gemm_kargs *ka, const ck_tensor_map *ta,
                            const ck_tensor_map *tb, const ck_ring *ring, unsigned char *stages,
                            ck_ring_pos *pos, long long u)
{
    int lead = ck_warpgroup_thread() == 0;
    int tm, tn, k0, k1, batch;
    (void)ta, (void)tb;
    sm90_tile(ka, sm90_unit(ka, u, &batch, &k0, &k1), &tm, &tn);
    int ba = ka->batch_a ? batch : 0, bb = ka->batch_b ? batch : 0; /* 0: broadcast */
    for (int kt = k0; kt < k1; ++kt, ck_ring_next(ring, pos)) {
        unsigned char *a = stages + pos->slot * SM90_STAGE, *b = a + SM90_A_BYTES;
#if GEMM_CLUSTER > 1
        ck_ring_acquire_cluster(ring, *pos); /* every block's consumers released the slot */
#else
        ck_ring_acquire(ring, *pos);
#endif
        if (lead) {
            unsigned long long *full = ck_ring_expect(ring, *pos, SM90_TMA_BYTES);
#ifndef GEMM_A_LOADER
            sm90_load(a, ta, full, GEMM_A_KMAJOR, GEMM_TILE_M, tm * GEMM_TILE_M, kt * GEMM_TILE_K,
                      ba);
#endif
#ifndef GEMM_B_LOADER
            sm90_load_b_shared(b, tb, full, tn * GEMM_TILE_N, kt * GEMM_TILE_K, bb);
#endif
            (void)full;
        }
#ifdef GEMM_A_LOADER
        GEMM_A_LOADER(a, ka, ba, (long long)tm * GEMM_TILE_M, (long long)kt * GEMM_TILE_K);
#endif
#ifdef GEMM_B_LOADER
        GEMM_B_LOADER(b, ka, bb, (long long)tn * GEMM_TILE_N, (long long)kt * GEMM_TILE_K);
#endif
#if SM90_LOADER_FILLS
        GEMM_LOADER_ARRIVE(&ring->full[pos->slot], ka);
#endif
        (void)ba, (void)bb, (void)a, (void)b;
    }
}

/* The producer's walk: the block's work units, or with GEMM_GROUPED the tiles of the group list
 * (group_walk_kernel.h), each with its group's arguments. */
CK_DEVICE void sm90_producer(const ck_gemm_kargs *ka, const ck_tensor_map *ta,
                             const ck_tensor_map *tb, const ck_ring *ring, unsigned char *stages)
{
    ck_ring_pos pos = ck_ring_start();
#if GEMM_GROUPED
    gemm_group_cursor cur = gemm_group_start(ka);
    for (long long t = ck_block_idx_x(); gemm_group_seek(&cur, ka, t); t += ck_grid_dim_x()) {
        ck_gemm_kargs k = gemm_group_args(ka, cur.g);
        sm90_produce(&k, ta, tb, ring, stages, &pos, t - cur.first);
    }
#else
    for (long long u = sm90_first(ka), end = sm90_end(ka); u < end; u = sm90_next(ka, u))
        sm90_produce(ka, ta, tb, ring, stages, &pos, u);
#endif
#if SM90_LOADER_FILLS
    ck_cp_async_wait_all(); /* no thread leaves with copies in flight */
#endif
}

#if GEMM_SPLIT_K && !GEMM_SPLIT_ATOMIC
/* Split-K: every split of a tile publishes its partial sums (part of the warpgroup's rows) in
 * the workspace and counts itself in; the split that arrives last sums all splits' partials,
 * its own read back like the others, in the fixed order 0, 1, ..., splits - 1, so the result
 * does not depend on the order of arrival, and returns 1: it stores the tile. No split ever
 * waits for another. Each split's registers are loaded together (independent loads in flight). */
CK_DEVICE int sm90_split_reduce(float *acc, const ck_gemm_kargs *ka, long long u, unsigned wg,
                                unsigned *last)
{
    int splits = ka->k_splits, tile = (int)(u / splits);
    if (splits < 2)
        return 1;
    unsigned t = ck_warpgroup_thread();
    size_t part = (size_t)CK_WARPGROUP_THREADS * SM90_ACC; /* floats of one warpgroup's part */
    float *base = ka->ws + ((size_t)tile * splits * GEMM_CONSUMERS + wg) * part + t;
    float *own = base + (size_t)(int)(u % splits) * GEMM_CONSUMERS * part;
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) own[(size_t)i * CK_WARPGROUP_THREADS] = acc[i];
    ck_fence_device(); /* the partials are visible before the count says so */
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (t == 0) {
        unsigned *flag = &ka->ws_flags[tile * GEMM_CONSUMERS + wg];
        last[wg] = ck_atomic_add_u32(flag, 1u) == (unsigned)splits - 1;
        if (last[wg])
            ck_atomic_exch_u32(flag, 0u); /* ready for the next launch */
    }
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (!last[wg])
        return 0;
    ck_fence_device(); /* the other splits' partials, after their counts */
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] = base[(size_t)i * CK_WARPGROUP_THREADS];
    for (int s = 1; s < splits; ++s) {
        const float *p = base + (size_t)s * GEMM_CONSUMERS * part;
        CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] += p[(size_t)i * CK_WARPGROUP_THREADS];
    }
    return 1;
}
#endif

#if GEMM_SPLIT_K && GEMM_SPLIT_ATOMIC
/* Split-K with atomics: every split adds its partial sums into the tile's one f32 workspace
 * tile (f32 atomics, in whatever order the splits come: the sum's rounding differs from run to
 * run) and counts itself in; the split that arrives last takes the sums out (exchanging them
 * for 0, which leaves the workspace ready for the next launch) and returns 1: it stores the
 * tile through the epilogue. No split waits for another. */
CK_DEVICE int sm90_split_reduce(float *acc, const ck_gemm_kargs *ka, long long u, unsigned wg,
                                unsigned *last)
{
    int splits = ka->k_splits, tile = (int)(u / splits);
    if (splits < 2)
        return 1;
    unsigned t = ck_warpgroup_thread();
    size_t part = (size_t)CK_WARPGROUP_THREADS * SM90_ACC;
    float *base = ka->ws + ((size_t)tile * GEMM_CONSUMERS + wg) * part + t;
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i)
        ck_atomic_add_f32(base + (size_t)i * CK_WARPGROUP_THREADS, acc[i]);
    ck_fence_device(); /* the additions are done before the count says so */
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (t == 0) {
        unsigned *flag = &ka->ws_flags[tile * GEMM_CONSUMERS + wg];
        last[wg] = ck_atomic_add_u32(flag, 1u) == (unsigned)splits - 1;
        if (last[wg])
            ck_atomic_exch_u32(flag, 0u);
    }
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (!last[wg])
        return 0;
    ck_fence_device();
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] =
        ck_atomic_exch_f32(base + (size_t)i * CK_WARPGROUP_THREADS, 0.0f);
    return 1;
}
#endif

/* A consumer warp is done with a slot: in every block of the cluster (all were written by the
 * multicast of B). */
CK_DEVICE void sm90_release(const ck_ring *ring, ck_ring_pos pos)
{
#if GEMM_CLUSTER > 1
    for (unsigned r = 0; r < GEMM_CLUSTER; ++r)
        ck_ring_release_in(ring, pos, r);
#else
    ck_ring_release(ring, pos);
#endif
}

/* A consumer warpgroup's part of work unit u (of the arguments ka: the problem's, or a
 * group's): its K steps from the ring, then the reduction of split-K / stream-K and the
 * epilogue. */
CK_DEVICE void sm90_consume(const ck_gemm_kargs *ka, const ck_tensor_map *td, const ck_ring *ring,
                            unsigned char *stages, unsigned wg, unsigned *flags, ck_ring_pos *pos,
                            long long u)
{
    float acc[SM90_ACC];
#if GEMM_QUANT
    float part[SM90_ACC];
    sm90_qscales qs;
#define SM90_SUM part
#else
#define SM90_SUM acc
#endif
    ck_ring_pos prev = *pos;
    (void)flags;
    int tm, tn, k0, k1, batch;
    sm90_tile(ka, sm90_unit(ka, u, &batch, &k0, &k1), &tm, &tn);
#if GEMM_QUANT
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] = 0.0f;
#endif
    for (int kt = k0; kt < k1; ++kt) {
        const unsigned char *a = stages + pos->slot * SM90_STAGE + wg * 64 * SM90_ROW_BYTES;
        const unsigned char *b = stages + pos->slot * SM90_STAGE + SM90_A_BYTES;
        ck_ring_wait(ring, *pos);
#if SM90_LOADER_FILLS
        ck_fence_proxy_async(); /* the cp.async writes (generic proxy) before wgmma reads */
#endif
        ck_wgmma_fence();
#if GEMM_QUANT /* a K block's first k-tile overwrites part */
        int accumulate = (kt - k0) % SM90_KB_TILES != 0;
#else
        int accumulate = kt > k0;
#endif
        CK_UNROLL for (int s = 0; s < 4; ++s)
            SM90_MMA(SM90_SUM, sm90_desc(a, GEMM_A_KMAJOR, s), sm90_desc(b, GEMM_B_KMAJOR, s),
                     (int)(accumulate || s > 0));
        ck_wgmma_commit_group();
#if GEMM_QUANT
        if ((kt - k0 + 1) % SM90_KB_TILES == 0 || kt + 1 == k1) { /* the K block ends */
            sm90_quant_load(&qs, ka, (long long)tm * GEMM_TILE_M + 64 * wg,
                            (long long)tn * GEMM_TILE_N, (kt - k0) / SM90_KB_TILES);
            ck_wgmma_wait_group(0);
            ck_wgmma_fence_operand(part, SM90_ACC);
            sm90_promote(acc, part, &qs);
        } else {
            ck_wgmma_wait_group(1);
            ck_wgmma_fence_operand(part, SM90_ACC);
        }
#else
        ck_wgmma_wait_group(1); /* the previous step's group has finished reading its slot */
        ck_wgmma_fence_operand(acc, SM90_ACC);
#endif
        if (kt > k0 && ck_lane_id() == 0)
            sm90_release(ring, prev);
        prev = *pos;
        ck_ring_next(ring, pos);
    }
#if GEMM_GROUPED
    if (k1 == k0) { /* a group of K 0: no slot was taken, the product is 0 */
        CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] = 0.0f;
    } else
#endif
    {
        ck_wgmma_wait_group(0);
        ck_wgmma_fence_operand(acc, SM90_ACC);
        if (ck_lane_id() == 0)
            sm90_release(ring, prev);
    }
#if GEMM_SPLIT_K
    if (!sm90_split_reduce(acc, ka, u, wg, flags))
        return; /* another split of this tile stores it */
#elif GEMM_STREAM_K
    if (!sm90_stream_fixup(acc, ka, u, wg, flags))
        return; /* another block sharing this tile stores it */
#endif
#if GEMM_TMA_STORE
    sm90_store_tile(acc, ka, td, stages + GEMM_STAGES * SM90_STAGE + wg * SM90_C_BYTES, wg, batch,
                    (long long)tm * GEMM_TILE_M + 64 * wg, (long long)tn * GEMM_TILE_N);
#else
    (void)td;
    gemm_epilogue(acc, ka, batch, (long long)tm * GEMM_TILE_M, (long long)tn * GEMM_TILE_N);
#endif
#undef SM90_SUM
}

/* A consumer warpgroup's walk: the producer's (sm90_producer). */
CK_DEVICE void sm90_consumer(const ck_gemm_kargs *ka, const ck_tensor_map *td, const ck_ring *ring,
                             unsigned char *stages, unsigned wg, unsigned *flags)
{
    ck_ring_pos pos = ck_ring_start();
#if GEMM_GROUPED
    gemm_group_cursor cur = gemm_group_start(ka);
    for (long long t = ck_block_idx_x(); gemm_group_seek(&cur, ka, t); t += ck_grid_dim_x()) {
        ck_gemm_kargs k = gemm_group_args(ka, cur.g);
        sm90_consume(&k, td, ring, stages, wg, flags, &pos, t - cur.first);
    }
#else
    for (long long u = sm90_first(ka), end = sm90_end(ka); u < end; u = sm90_next(ka, u))
        sm90_consume(ka, td, ring, stages, wg, flags, &pos, u);
#endif
#if GEMM_TMA_STORE
    if (ck_warpgroup_thread() == 0)
        ck_tma_store_wait(0);
#endif
}

/* The kernel's body (the source declares the kernel: 128 * (GEMM_CONSUMERS + 1) threads, one
 * block per multiprocessor, tensor maps as grid constants). */
CK_DEVICE void sm90_gemm(const ck_gemm_kargs *ka, const ck_tensor_map *ta, const ck_tensor_map *tb,
                         const ck_tensor_map *td)
{
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    smem += (1024u - (ck_smem_addr(smem) & 1023u)) & 1023u; /* the 128-byte swizzle's pattern */
    unsigned long long *bars =
        (unsigned long long *)(smem + GEMM_STAGES * SM90_STAGE + SM90_C_SMEM);
    ck_ring ring = ck_ring_make(bars, GEMM_STAGES);
    unsigned *flags = (unsigned *)(bars + 2 * GEMM_STAGES); /* split/stream-K: 'last' per wg */
    unsigned wg = ck_warpgroup_id();
    if (ck_thread_linear() == 0) {
#ifndef GEMM_A_LOADER
        ck_tma_prefetch_map(ta);
#endif
#ifndef GEMM_B_LOADER
        ck_tma_prefetch_map(tb);
#endif
        /* one release per consumer warp; fills: the TMA thread (and the loaders' 128 threads) */
        ck_ring_init_fills(&ring, 1 + SM90_LOADER_FILLS, 4 * GEMM_CONSUMERS * GEMM_CLUSTER);
    }
#if GEMM_CLUSTER > 1
    ck_cluster_sync(); /* the peers' barriers exist before any multicast or remote release */
#else
    ck_sync_threads();
#endif
    if (wg == GEMM_CONSUMERS) {
        CK_REGS_PRODUCER(GEMM_REGS_PRODUCER);
        if (SM90_LOADER_FILLS > 0 || ck_warpgroup_thread() == 0)
            sm90_producer(ka, ta, tb, &ring, smem);
    } else {
        CK_REGS_CONSUMER(GEMM_REGS_CONSUMER);
        sm90_consumer(ka, td, &ring, smem, wg, flags);
    }
#if GEMM_CLUSTER > 1
    ck_cluster_sync(); /* no block leaves while a peer may still write or arrive in it */
#endif
}
