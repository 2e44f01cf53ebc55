/*
 * Grouped GEMM on the sm80 pipeline (grouped.c): one launch for a list of products of
 * different M, N, K whose descriptions (sizes, pointers, leading dimensions) are in device
 * memory, or a pointer-array batch (GEMM_PTR_ARRAY). The tile partitioner is
 * group_walk_kernel.h's: the persistent grid's block b takes tiles b, b + G, ... of the line of
 * all groups' tiles (within a group the grouped raster of gemm_tile_at).
 *
 * Included after sm80_pipeline_kernel.h, with GEMM_A_VEC_AT / GEMM_B_VEC_AT testing each
 * group's pointer and leading dimension (grouped.c's source), so any alignment is taken.
 */
#ifndef CK_OPS_GEMM_GROUPED_KERNEL_H
#define CK_OPS_GEMM_GROUPED_KERNEL_H

#include "ops/gemm/group_walk_kernel.h"

CK_DEVICE void gemm_grouped_main(ck_gemm_kargs ka)
{
    unsigned char *smem = (unsigned char *)ck_dynamic_shared();
    gemm_group_cursor cur = gemm_group_start(&ka);
    for (long long t = ck_block_idx_x(); gemm_group_seek(&cur, &ka, t); t += ck_grid_dim_x()) {
        ck_gemm_kargs k = gemm_group_args(&ka, cur.g);
        long long batch, m0, n0;
        gemm_tile_at(&k, t - cur.first, &batch, &m0, &n0);
        gemm_sm80_tile(k, smem, 0, m0, n0);
        ck_cp_async_wait(0);
        ck_sync_threads(); /* every warp is done with shared memory before the next tile */
    }
}

#endif
