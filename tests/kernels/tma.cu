/* The tensor memory accelerator: box loads completing an mbarrier (one barrier reused over
 * successive phases) and box stores, for tensors of rank 2 to 5, through a ck_tensor_map made by
 * ck_tensor_map_create. 128 threads; shared memory 1024-byte aligned (swizzle patterns).
 * ck-min-target: sm_90a */
#include "ck_device.h"

#define TMA_SMEM 16384

CK_DEVICE void tma_load_box(unsigned char *smem, const ck_tensor_map *map, unsigned long long *bar,
                            int rank, const int *c)
{
    switch (rank) {
    case 1: ck_tma_load_1d(smem, map, bar, c[0]); break;
    case 2: ck_tma_load_2d(smem, map, bar, c[0], c[1]); break;
    case 3: ck_tma_load_3d(smem, map, bar, c[0], c[1], c[2]); break;
    case 4: ck_tma_load_4d(smem, map, bar, c[0], c[1], c[2], c[3]); break;
    default: ck_tma_load_5d(smem, map, bar, c[0], c[1], c[2], c[3], c[4]); break;
    }
}

/* For p < n: load the box at coordinates coords[5p .. 5p + rank) (elements; may lie partly
 * outside the tensor) and write the shared-memory image (box_bytes, swizzled as the map says)
 * to out[p * box_bytes ..]. Load p completes phase p of one mbarrier. */
CK_KERNEL void tma_loads(CK_GRID_CONSTANT const ck_tensor_map map, int rank, int n,
                         const int *coords, int box_bytes, unsigned char *out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, TMA_SMEM, 1024);
    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);
    unsigned t = ck_thread_idx_x();
    if (t == 0) {
        ck_tma_prefetch_map(&map);
        ck_mbar_init(bar, 1);
        ck_mbar_fence_init();
    }
    ck_sync_threads();
    for (int p = 0; p < n; ++p) {
        if (t == 0) {
            ck_mbar_arrive_expect_tx(bar, (unsigned)box_bytes);
            tma_load_box(smem, &map, bar, rank, coords + 5 * p);
        }
        ck_mbar_wait_parity(bar, (unsigned)p & 1u);
        for (int i = (int)t; i < box_bytes; i += 128)
            out[(size_t)p * (size_t)box_bytes + (size_t)i] = smem[i];
        ck_sync_threads(); /* everyone has read the box before the next load overwrites it */
    }
}

/* For p < n: copy src[p * box_bytes ..] into shared memory (as the swizzled image) and store
 * the box to the tensor at coordinates coords[5p ..] (elements outside the tensor are skipped). */
CK_KERNEL void tma_stores(CK_GRID_CONSTANT const ck_tensor_map map, int rank, int n,
                          const int *coords, const unsigned char *src, int box_bytes)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, TMA_SMEM, 1024);
    unsigned t = ck_thread_idx_x();
    for (int p = 0; p < n; ++p) {
        for (int i = (int)t; i < box_bytes; i += 128)
            smem[i] = src[(size_t)p * (size_t)box_bytes + (size_t)i];
        ck_fence_proxy_async(); /* the copy engine reads what the threads wrote */
        ck_sync_threads();
        if (t == 0) {
            const int *c = coords + 5 * p;
            switch (rank) {
            case 1: ck_tma_store_1d(&map, smem, c[0]); break;
            case 2: ck_tma_store_2d(&map, smem, c[0], c[1]); break;
            case 3: ck_tma_store_3d(&map, smem, c[0], c[1], c[2]); break;
            case 4: ck_tma_store_4d(&map, smem, c[0], c[1], c[2], c[3]); break;
            default: ck_tma_store_5d(&map, smem, c[0], c[1], c[2], c[3], c[4]); break;
            }
            ck_tma_store_commit();
            /* Wait for the global writes, not only the shared-memory reads: boxes of successive
             * stores overlap, and bulk groups are not ordered with each other. */
            ck_tma_store_wait(0);
        }
        ck_sync_threads();
    }
    if (t == 0)
        ck_tma_store_wait(0); /* the writes are done */
}
