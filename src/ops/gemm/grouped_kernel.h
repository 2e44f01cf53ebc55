/*
 * Grouped GEMM on the sm80 pipeline (grouped.c): one launch for a list of products of
 * different M, N, K whose descriptions (sizes, pointers, leading dimensions) are in device
 * memory. The tile partitioner runs on the device: the output tiles of all groups form one line
 * (group 0's tiles, then group 1's, ...; within a group the grouped raster of gemm_tile_at),
 * and the persistent grid's block b takes tiles b, b + G, b + 2G, ... Each block walks the
 * group list once alongside (a cursor at the group holding its next tile and the index of that
 * group's first tile), so it reads every description at most once per launch and needs no
 * prefix sums. Groups with M or N of 0 (or below) have no tiles; K of 0 gives the epilogue of
 * a zero product (beta C + bias).
 *
 * Included after sm80_pipeline_kernel.h, with GEMM_A_VEC_AT / GEMM_B_VEC_AT testing each
 * group's pointer and leading dimension (grouped.c's source), so any alignment is taken.
 */
#ifndef CK_OPS_GEMM_GROUPED_KERNEL_H
#define CK_OPS_GEMM_GROUPED_KERNEL_H

#include "ops/gemm/gemm_group_kernel.h"

/* Output tiles of a group. */
CK_DEVICE long long gemm_group_tiles(const ck_gemm_group_kdesc *g)
{
    if (g->m <= 0 || g->n <= 0)
        return 0;
    return ((g->m + GEMM_TILE_M - 1) / GEMM_TILE_M) * ((g->n + GEMM_TILE_N - 1) / GEMM_TILE_N);
}

/* The arguments of group g: ka's scalars (alpha, beta, scales) with the group's sizes, pointers
 * and leading dimensions. */
CK_DEVICE ck_gemm_kargs gemm_group_args(const ck_gemm_kargs *ka, const ck_gemm_group_kdesc *g)
{
    ck_gemm_kargs k = *ka;
    k.a = g->a, k.b = g->b, k.c = g->c, k.d = g->d, k.bias = g->bias;
    k.m = g->m, k.n = g->n, k.k = g->k > 0 ? g->k : 0;
    k.lda = g->lda, k.ldb = g->ldb, k.ldc = g->ldc, k.ldd = g->ldd;
    k.tiles_m = (int)((k.m + GEMM_TILE_M - 1) / GEMM_TILE_M);
    k.tiles_n = (int)((k.n + GEMM_TILE_N - 1) / GEMM_TILE_N);
    k.k_tiles = (int)((k.k + GEMM_TILE_K - 1) / GEMM_TILE_K);
    return k;
}

CK_DEVICE void gemm_grouped_main(ck_gemm_kargs ka, const ck_gemm_group_kdesc *groups, int count)
{
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    int g = 0;
    long long first = 0, tiles = count > 0 ? gemm_group_tiles(&groups[0]) : 0;
    for (long long t = ck_block_idx_x();; t += ck_grid_dim_x()) {
        while (g < count && t >= first + tiles) { /* the group of tile t */
            first += tiles;
            if (++g < count)
                tiles = gemm_group_tiles(&groups[g]);
        }
        if (g >= count)
            return;
        ck_gemm_kargs k = gemm_group_args(&ka, &groups[g]);
        long long batch, m0, n0;
        gemm_tile_at(&k, t - first, &batch, &m0, &n0);
        gemm_sm80_tile(k, smem, 0, m0, n0);
        ck_cp_async_wait(0);
        ck_sync_threads(); /* every warp is done with shared memory before the next tile */
    }
}

#endif
