/*
 * The tile partitioner of grouped GEMM (CK Tile's grouped GEMM partitioner), on the device, for
 * both families' grouped kernels (grouped_kernel.h: sm80; sm90_pipeline_kernel.h with
 * GEMM_GROUPED): the output tiles of all ka->group_count groups form one line (group 0's tiles,
 * then group 1's, ...), and a persistent block takes tiles b, b + G, b + 2G, ... A cursor
 * follows the block along the groups (the group holding its next tile and the index of that
 * group's first tile), so each block reads every description at most once and no prefix sum is
 * needed. Groups with M or N of 0 (or below) have no tiles; K of 0 (or below) is a zero product.
 *
 * Two list kinds: descriptions (ka->groups, ck_gemm_group_kdesc: each group its own sizes,
 * pointers and leading dimensions), or with GEMM_PTR_ARRAY a pointer-array batch: every group
 * the sizes and leading dimensions of ka, its matrices at ka->arrays.x[g] (every group the same
 * tile count, so the group of a tile is a division).
 */
#ifndef CK_OPS_GEMM_GROUP_WALK_KERNEL_H
#define CK_OPS_GEMM_GROUP_WALK_KERNEL_H

#include "ops/gemm/gemm_args_kernel.h"

#ifndef GEMM_PTR_ARRAY
#define GEMM_PTR_ARRAY 0
#endif

/* Output tiles of an m x n product. */
CK_DEVICE long long gemm_group_tiles(long long m, long long n)
{
    if (m <= 0 || n <= 0)
        return 0;
    return ((m + GEMM_TILE_M - 1) / GEMM_TILE_M) * ((n + GEMM_TILE_N - 1) / GEMM_TILE_N);
}

/* The arguments of group g: ka's scalars (alpha, beta, scales) with the group's sizes, pointers
 * and leading dimensions, and its tile counts. */
CK_DEVICE ck_gemm_kargs gemm_group_args(const ck_gemm_kargs *ka, int g)
{
    ck_gemm_kargs k = *ka;
#if GEMM_PTR_ARRAY
    k.a = ka->arrays.a[g], k.b = ka->arrays.b[g], k.d = ka->arrays.d[g];
    k.c = ka->arrays.c ? ka->arrays.c[g] : 0;
    k.bias = ka->arrays.bias ? ka->arrays.bias[g] : 0;
#else
    const ck_gemm_group_kdesc *d = &ka->groups[g];
    k.a = d->a, k.b = d->b, k.c = d->c, k.d = d->d, k.bias = d->bias;
    k.m = d->m, k.n = d->n, k.k = d->k > 0 ? d->k : 0;
    k.lda = d->lda, k.ldb = d->ldb, k.ldc = d->ldc, k.ldd = d->ldd;
    k.tiles_m = (int)((k.m + GEMM_TILE_M - 1) / GEMM_TILE_M);
    k.tiles_n = (int)((k.n + GEMM_TILE_N - 1) / GEMM_TILE_N);
    k.k_tiles = (int)((k.k + GEMM_TILE_K - 1) / GEMM_TILE_K);
#endif
    return k;
}

/* A block's place in the line of tiles: group g, whose first tile is `first`, of `tiles`. */
typedef struct gemm_group_cursor {
    int g;
    long long first, tiles;
} gemm_group_cursor;

CK_DEVICE long long gemm_group_tiles_of(const ck_gemm_kargs *ka, int g)
{
#if GEMM_PTR_ARRAY
    (void)g;
    return gemm_group_tiles(ka->m, ka->n);
#else
    return gemm_group_tiles(ka->groups[g].m, ka->groups[g].n);
#endif
}

CK_DEVICE gemm_group_cursor gemm_group_start(const ck_gemm_kargs *ka)
{
    gemm_group_cursor c;
    c.g = 0, c.first = 0;
    c.tiles = ka->group_count > 0 ? gemm_group_tiles_of(ka, 0) : 0;
    return c;
}

/* Move the cursor to the group of tile t (t never decreases along a block's walk); 0 when t
 * lies past the last group's tiles. */
CK_DEVICE int gemm_group_seek(gemm_group_cursor *c, const ck_gemm_kargs *ka, long long t)
{
#if GEMM_PTR_ARRAY
    if (c->tiles <= 0 || t / c->tiles >= ka->group_count)
        return 0;
    c->g = (int)(t / c->tiles);
    c->first = (long long)c->g * c->tiles;
    return 1;
#else
    while (c->g < ka->group_count && t >= c->first + c->tiles) {
        c->first += c->tiles;
        if (++c->g < ka->group_count)
            c->tiles = gemm_group_tiles_of(ka, c->g);
    }
    return c->g < ka->group_count;
#endif
}

#endif
