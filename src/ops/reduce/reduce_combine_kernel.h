/*
 * ck_reduce's combine kernel (RD_KIND 2; reduce_kernel.h documents the constants): one thread
 * per output combines the parts a split row or column instance wrote, in part order.
 */
#ifndef CK_OPS_REDUCE_COMBINE_KERNEL_H
#define CK_OPS_REDUCE_COMBINE_KERNEL_H
#include "ops/reduce/reduce_kernel.h"

CK_DEVICE void rd_combine(void *y, const void *ws, const rd_geom *g)
{
    long long row = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
    if (row >= g->rows)
        return;
    rd_state r = rd_get_part(ws, g, 0, row);
    for (long long p = 1; p < g->parts; ++p)
        r = rd_comb(r, rd_get_part(ws, g, p, row));
    long long xo, yo;
    rd_kept_off(g, RD_KD, row, &xo, &yo);
    rd_store(y, yo, r, g);
}

#endif
