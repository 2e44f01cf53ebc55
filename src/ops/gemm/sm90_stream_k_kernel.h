/*
 * Stream-K for the sm90 pipeline (GEMM_DECOMP 4; CK Tile's StreamK tile partitioner, CUTLASS's
 * stream-K): the K steps of all output tiles (of every batch) in one line, iteration
 * i = tile * k_tiles + k, and block b of the G-block persistent grid takes iterations
 * [start(b), start(b + 1)), start(b) = floor(b T / G) of T in all: every block the same work to
 * within one K step, whatever the tile count (no partial last wave).
 *
 * A block's share is cut at tile boundaries into segments (tile, K steps [k0, k1)); a work
 * unit u is the segment's first iteration. A tile whose iterations lie in one block is stored
 * by it; a tile shared by blocks lo .. hi is fixed up like split-K: each block writes its
 * partial sums to its slot of the workspace (slot 0: the segment that starts its share,
 * slot 1: the one that ends it; a block has at most these two partial segments) and counts
 * itself in; the last to arrive sums the slots of lo, lo + 1, ..., hi in that order (the same
 * bits whoever is last) and stores the tile. No block waits for another.
 *
 * Included by sm90_pipeline_kernel.h after sm90_tiles; uses ka->ws (G x 2 slots of
 * TILE_M x TILE_N floats) and ka->ws_flags (one counter per tile and consumer warpgroup, 0
 * between launches: the last arriver resets it). The host launches at most T blocks, so every
 * share holds at least one iteration (floor(T / G) >= 1): every block between a tile's first and
 * last owner works on it and arrives.
 */
#ifndef CK_OPS_GEMM_SM90_STREAM_K_KERNEL_H
#define CK_OPS_GEMM_SM90_STREAM_K_KERNEL_H

/* All iterations: tiles of every batch x K steps. */
CK_DEVICE long long sm90_sk_total(const ck_gemm_kargs *ka)
{
    return (long long)sm90_tiles(ka) * ka->batch * ka->k_tiles;
}

/* First iteration of block b's share. */
CK_DEVICE long long sm90_sk_start(const ck_gemm_kargs *ka, long long b)
{
    return b * sm90_sk_total(ka) / (long long)ck_grid_dim_x();
}

/* The block whose share holds iteration i: the largest b with start(b) <= i, i.e.
 * b = ceil((i + 1) G / T) - 1. */
CK_DEVICE long long sm90_sk_owner(const ck_gemm_kargs *ka, long long i)
{
    long long total = sm90_sk_total(ka), g = (long long)ck_grid_dim_x();
    return ((i + 1) * g + total - 1) / total - 1;
}

CK_DEVICE long long sm90_first(const ck_gemm_kargs *ka)
{
    return sm90_sk_start(ka, (long long)ck_block_idx_x());
}

CK_DEVICE long long sm90_end(const ck_gemm_kargs *ka)
{
    return sm90_sk_start(ka, (long long)ck_block_idx_x() + 1);
}

/* The next segment: at the next tile's first iteration (or the share's end). */
CK_DEVICE long long sm90_next(const ck_gemm_kargs *ka, long long u)
{
    long long next = (u / ka->k_tiles + 1) * ka->k_tiles, end = sm90_end(ka);
    return next < end ? next : end;
}

/* The segment starting at iteration u: its tile (of batch *batch) and K steps [*k0, *k1). */
CK_DEVICE int sm90_unit(const ck_gemm_kargs *ka, long long u, int *batch, int *k0, int *k1)
{
    long long t = u / ka->k_tiles, end = sm90_end(ka), stop = (t + 1) * ka->k_tiles;
    *k0 = (int)(u - t * ka->k_tiles);
    *k1 = (int)((stop < end ? stop : end) - t * ka->k_tiles);
    *batch = (int)(t / sm90_tiles(ka));
    return (int)(t % sm90_tiles(ka));
}

/* The workspace slot of block b's segment of the tile whose first iteration is i0 (b between
 * the tile's first and last owners lo and hi): 1 when it ends b's share after an earlier
 * segment (b = lo, b's share starting before the tile), else 0 (it starts b's share). */
CK_DEVICE int sm90_sk_slot(const ck_gemm_kargs *ka, long long b, long long lo, long long i0)
{
    return b == lo && sm90_sk_start(ka, b) < i0;
}

/* The fix-up of the segment at u after its K steps: returns 1 when this block stores the tile
 * (acc then holds the tile's whole sum), 0 when another block will. */
CK_DEVICE int sm90_stream_fixup(float *acc, const ck_gemm_kargs *ka, long long u, unsigned wg,
                                unsigned *last)
{
    long long tile = u / ka->k_tiles, i0 = tile * ka->k_tiles;
    long long lo = sm90_sk_owner(ka, i0), hi = sm90_sk_owner(ka, i0 + ka->k_tiles - 1);
    if (lo == hi)
        return 1;
    unsigned t = ck_warpgroup_thread();
    long long b = (long long)ck_block_idx_x();
    size_t part = (size_t)CK_WARPGROUP_THREADS * SM90_ACC; /* floats of one warpgroup's part */
#define SM90_SK_AT(blk, slot)                                                                      \
    (ka->ws + ((size_t)((blk)*2 + (slot)) * GEMM_CONSUMERS + wg) * part + t)
    float *own = SM90_SK_AT(b, sm90_sk_slot(ka, b, lo, i0));
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) own[(size_t)i * CK_WARPGROUP_THREADS] = acc[i];
    ck_fence_device(); /* the partials are visible before the count says so */
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (t == 0) {
        unsigned *flag = &ka->ws_flags[tile * GEMM_CONSUMERS + wg];
        last[wg] = ck_atomic_add_u32(flag, 1u) == (unsigned)(hi - lo);
        if (last[wg])
            ck_atomic_exch_u32(flag, 0u); /* ready for the next launch */
    }
    ck_named_barrier_sync(1 + wg, CK_WARPGROUP_THREADS);
    if (!last[wg])
        return 0;
    ck_fence_device(); /* the other blocks' partials, after their counts */
    const float *first = SM90_SK_AT(lo, sm90_sk_slot(ka, lo, lo, i0));
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] = first[(size_t)i * CK_WARPGROUP_THREADS];
    for (long long o = lo + 1; o <= hi; ++o) {
        const float *p = SM90_SK_AT(o, 0);
        CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] += p[(size_t)i * CK_WARPGROUP_THREADS];
    }
#undef SM90_SK_AT
    return 1;
}

#endif
