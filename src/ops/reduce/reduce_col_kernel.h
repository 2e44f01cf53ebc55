/*
 * ck_reduce's column pipeline (RD_KIND 1; reduce_kernel.h documents it and the constants): each
 * thread folds RD_V consecutive outputs over its share of the reduced index (one vector per
 * index), RD_CT threads along the outputs, RD_RT along the reduced index; the RD_RT states of a
 * column are combined through shared memory in order, then stored (or written as a part).
 */
#ifndef CK_OPS_REDUCE_COL_KERNEL_H
#define CK_OPS_REDUCE_COL_KERNEL_H
#include "ops/reduce/reduce_kernel.h"

/* stage read: fold rows [lo, hi) of the reduced index into the RD_V states of the thread's
 * columns (col0, the block's first column, + tx * RD_V; x + xo the outer output's first); the
 * generator defines it as rd_col_read_indexed (below) or rd_col_read_window
 * (reduce_window_kernel.h, over generated tile windows) */
CK_DEVICE void rd_col_read(rd_state *s, const void *x, long long xo, long long col0,
                           long long lo, long long hi, const rd_geom *g);

CK_DEVICE void rd_col_read_indexed(rd_state *s, const void *x, long long xo, long long col0,
                                   long long lo, long long hi, const rd_geom *g)
{
    const unsigned tx = ck_thread_idx_x() % RD_CT, ty = ck_thread_idx_x() / RD_CT;
    const long long c0 = col0 + (long long)tx * RD_V;
    if (c0 + RD_V <= g->m) {
        const char *base = (const char *)x + (xo + c0) * RD_ISZ;
        long long j = lo + ty;
        for (; j + (RD_U - 1) * RD_RT < hi; j += RD_U * RD_RT) {
            uint32_t w[RD_U > 0 ? RD_U : 1][4];
            CK_UNROLL for (int u = 0; u < RD_U; ++u)
                rd_ldv(base + rd_red_off(g, j + u * RD_RT) * RD_ISZ, w[u]);
            CK_UNROLL for (int u = 0; u < RD_U; ++u)
            {
                CK_UNROLL for (int k = 0; k < RD_V; ++k) rd_add(&s[k], rd_val(rd_elem(w[u], k)),
                                                                j + u * RD_RT);
            }
        }
        for (; j < hi; j += RD_RT) {
            uint32_t w[4];
            rd_ldv(base + rd_red_off(g, j) * RD_ISZ, w);
            CK_UNROLL for (int k = 0; k < RD_V; ++k) rd_add(&s[k], rd_val(rd_elem(w, k)), j);
        }
    } else if (c0 < g->m) {
        for (long long j = lo + ty; j < hi; j += RD_RT) {
            long long e = xo + c0 + rd_red_off(g, j);
            for (int k = 0; k < RD_V && c0 + k < g->m; ++k)
                rd_add(&s[k], rd_val(rd_ld1(x, e + k)), j);
        }
    }
}

CK_DEVICE void rd_col(void *y, const void *x, void *ws, const rd_geom *g)
{
    unsigned t = ck_thread_idx_x();
    unsigned tx = t % RD_CT, ty = t / RD_CT;
    long long b = ck_block_idx_x();
    long long part = b % g->parts;
    b /= g->parts;
    long long cb = b % g->col_blocks, o = b / g->col_blocks;
    long long xo = 0, yo = 0;
    rd_kept_off(g, RD_KD - 1, o, &xo, &yo);
    long long lo = part * g->seg, hi = lo + g->seg < g->n ? lo + g->seg : g->n;
    rd_state s[RD_V];
    CK_UNROLL for (int k = 0; k < RD_V; ++k) s[k] = rd_init();
    rd_col_read(s, x, xo, cb * RD_CT * RD_V, lo, hi, g);
    const int cols = RD_CT * RD_V;
    rd_acc *sv = (rd_acc *)ck_dynamic_shared();
    long long *si = (long long *)(sv + RD_RT * cols);
    CK_UNROLL for (int k = 0; k < RD_V; ++k)
    {
        sv[ty * cols + tx * RD_V + k] = s[k].v;
        if (RD_IS_ARG)
            si[ty * cols + tx * RD_V + k] = s[k].i;
    }
    ck_sync_threads();
    for (int c = (int)t; c < cols; c += RD_CT * RD_RT) {
        long long col = cb * cols + c;
        if (col >= g->m)
            break;
        rd_state r;
        r.v = sv[c];
        r.i = RD_IS_ARG ? si[c] : 0;
        for (int q = 1; q < RD_RT; ++q) {
            rd_state e;
            e.v = sv[q * cols + c];
            e.i = RD_IS_ARG ? si[q * cols + c] : 0;
            r = rd_comb(r, e);
        }
        if (g->parts > 1)
            rd_put_part(ws, g, part, o * g->m + col, r);
        else
            rd_store(y, yo + col * g->kys[RD_KD - 1], r, g);
    }
}

#endif
