/*
 * ck_reduce's row pipeline (RD_KIND 0; reduce_kernel.h documents it and the constants): a group
 * of RD_G threads per output, RD_RPB groups per block. Load and fold the output's reduced
 * elements (vectors when contiguous, else any strides), fold the per-lane states, the warp's
 * butterfly, the warps' results in order, store (or write a split part). The read stage is
 * the generator's choice (indexed by hand, or tile windows).
 */
#ifndef CK_OPS_REDUCE_ROW_KERNEL_H
#define CK_OPS_REDUCE_ROW_KERNEL_H
#include "ops/reduce/reduce_kernel.h"

/* argmax/argmin's fold of the whole vectors (RD_ARG_SCAN): a state sees its elements in
 * increasing index, so an element replaces it only when strictly better or the first NaN (a
 * tie keeps the lower index, a NaN state stays) - no index comparison, no branch: two compares
 * and two selects an element, the state's index the 32-bit start of its vector (a reduction
 * has at most 2^31 - 1 elements). Folded into s after the loop (s wins no tie: RD_NOIDX). */
CK_DEVICE int rd_arg_takes(rd_acc v, rd_acc best)
{
    /* !(v <= best): v larger, or either is NaN; best == best: best is a number */
    return (RD_IS_MAX ? !(v <= best) : !(v >= best)) && best == best;
}

CK_DEVICE void rd_row_vectors_arg(rd_state *s, const char *xr, long long lo, long long end,
                                  unsigned lt)
{
    const long long step = (long long)RD_G * RD_V;
    long long i = lo + (long long)lt * RD_V;
    rd_acc bv[RD_V];
    int bi[RD_V];
    CK_UNROLL for (int k = 0; k < RD_V; ++k)
    {
        bv[k] = s[k].v;
        bi[k] = (int)i; /* a tie with the initial value: this lane's first element */
    }
    const int seen = i < end;
    for (; i + (RD_U - 1) * step < end; i += RD_U * step) {
        uint32_t w[RD_U > 0 ? RD_U : 1][4];
        CK_UNROLL for (int u = 0; u < RD_U; ++u) rd_ldv(xr + (i + u * step) * RD_ISZ, w[u]);
        CK_UNROLL for (int u = 0; u < RD_U; ++u)
        {
            const int at = (int)(i + u * step);
            CK_UNROLL for (int k = 0; k < RD_V; ++k)
            {
                rd_acc v = rd_val(rd_elem(w[u], k));
                const int t = rd_arg_takes(v, bv[k]);
                bv[k] = t ? v : bv[k];
                bi[k] = t ? at : bi[k];
            }
        }
    }
    for (; i < end; i += step) {
        uint32_t w[4];
        rd_ldv(xr + i * RD_ISZ, w);
        CK_UNROLL for (int k = 0; k < RD_V; ++k)
        {
            rd_acc v = rd_val(rd_elem(w, k));
            const int t = rd_arg_takes(v, bv[k]);
            bv[k] = t ? v : bv[k];
            bi[k] = t ? (int)i : bi[k];
        }
    }
    if (seen)
        CK_UNROLL for (int k = 0; k < RD_V; ++k)
        {
            rd_state o;
            o.v = bv[k];
            o.i = (long long)bi[k] + k;
            s[k] = rd_comb(s[k], o);
        }
}

/* stage load + fold, contiguous reduced elements: RD_VB-byte vectors, RD_U in flight, one
 * state per vector lane; the tail of fewer than RD_V elements one by one */
CK_DEVICE void rd_row_vectors(rd_state *s, const char *xr, long long lo, long long hi, unsigned lt)
{
    const long long step = (long long)RD_G * RD_V;
    long long end = lo + ((hi - lo) / RD_V) * RD_V; /* end of the whole vectors */
    long long i = lo + (long long)lt * RD_V;
    if (RD_ARG_SCAN) {
        rd_row_vectors_arg(s, xr, lo, end, lt);
        i = end; /* only the tail below is left */
    }
    for (; i + (RD_U - 1) * step < end; i += RD_U * step) {
        uint32_t w[RD_U > 0 ? RD_U : 1][4];
        CK_UNROLL for (int u = 0; u < RD_U; ++u) rd_ldv(xr + (i + u * step) * RD_ISZ, w[u]);
        CK_UNROLL for (int u = 0; u < RD_U; ++u)
        {
            CK_UNROLL for (int k = 0; k < RD_V; ++k) rd_add(&s[k], rd_val(rd_elem(w[u], k)),
                                                            i + u * step + k);
        }
    }
    for (; i < end; i += step) {
        uint32_t w[4];
        rd_ldv(xr + i * RD_ISZ, w);
        CK_UNROLL for (int k = 0; k < RD_V; ++k) rd_add(&s[k], rd_val(rd_elem(w, k)), i + k);
    }
    for (long long e = end + lt; e < hi; e += RD_G) /* fewer than RD_V elements left */
        rd_add(&s[0], rd_val(rd_ld1(xr, e)), e);
}

/* stage read: fold elements [lo, hi) of the output's reduced index (x + xoff its first) into
 * the RD_V states; the generator defines it as rd_row_read_indexed (below) or
 * rd_row_read_window (reduce_window_kernel.h, over generated tile windows) */
CK_DEVICE void rd_row_read(rd_state *s, const void *x, long long xoff, long long lo,
                           long long hi, const rd_geom *g);

CK_DEVICE void rd_row_read_indexed(rd_state *s, const void *x, long long xoff, long long lo,
                                   long long hi, const rd_geom *g)
{
    const unsigned lt = ck_thread_idx_x() % RD_G;
    if (RD_VB > 0)
        rd_row_vectors(s, (const char *)x + xoff * RD_ISZ, lo, hi, lt);
    else
        for (long long j = lo + lt; j < hi; j += RD_G)
            rd_add(&s[0], rd_val(rd_ld1(x, xoff + rd_red_off(g, j))), j);
}

/* The states of a group's lanes combined: the warp's butterfly, then for RD_G > 32 the warps'
 * results in warp order through sv/si (thread 0 of the block holds the block's). */
CK_DEVICE rd_state rd_row_group(rd_state r, unsigned t, rd_acc *sv, long long *si)
{
    r = rd_warp(r);
    if (RD_G > 32) {
        if (ck_lane_id() == 0) {
            sv[t / 32] = r.v;
            si[t / 32] = r.i;
        }
        ck_sync_threads();
        if (t == 0) {
            for (int w = 1; w < RD_G / 32; ++w) {
                rd_state o;
                o.v = sv[w];
                o.i = si[w];
                r = rd_comb(r, o);
            }
        }
    }
    return r;
}

/* A split row (RD_LAST_FOLD, RD_RPB 1): the block writes its part and counts itself in; the
 * last of the row's blocks to arrive combines the parts (part p by thread p mod RD_G, then
 * rd_row_group: an order fixed by the instance, whoever is last) and stores the result. Returns
 * 1 in the block that stored it. */
CK_DEVICE int rd_row_last_fold(void *y, void *ws, unsigned *cnt, const rd_geom *g, rd_state r,
                               long long part, long long row, long long yoff, rd_acc *sv,
                               long long *si)
{
    CK_SHARED_ARRAY(int, rd_last, 1);
    unsigned t = ck_thread_idx_x();
    if (t == 0) {
        rd_put_part(ws, g, part, row, r);
        ck_fence_device(); /* the part is visible before the count says so */
        rd_last[0] = ck_atomic_add_u32(&cnt[row], 1u) == (unsigned)(g->parts - 1);
        if (rd_last[0])
            ck_atomic_exch_u32(&cnt[row], 0u); /* zero for the next launch */
    }
    ck_sync_threads();
    if (!rd_last[0])
        return 0;
    ck_fence_device(); /* the other blocks' parts, after their counts */
    rd_state q = rd_init();
    for (long long p = t; p < g->parts; p += RD_G)
        q = rd_comb(q, rd_get_part(ws, g, p, row));
    q = rd_row_group(q, t, sv, si);
    if (t == 0)
        rd_store(y, yoff, q, g);
    return 1;
}

CK_DEVICE void rd_row(void *y, const void *x, void *ws, unsigned *cnt, const rd_geom *g)
{
    CK_SHARED_ARRAY(rd_acc, rd_sv, 32);
    CK_SHARED_ARRAY(long long, rd_si, 32);
    unsigned t = ck_thread_idx_x();
    unsigned lt = t % RD_G;
    long long blk = ck_block_idx_x();
    long long part = blk % g->parts;
    long long row = (blk / g->parts) * RD_RPB + t / RD_G;
    int valid = row < g->rows;
    long long xoff = 0, yoff = 0, lo = 0, hi = 0;
    if (valid) {
        rd_kept_off(g, RD_KD, row, &xoff, &yoff);
        lo = part * g->seg;
        hi = lo + g->seg < g->n ? lo + g->seg : g->n;
        if (lo > hi)
            lo = hi;
    }
    rd_state s[RD_V];
    CK_UNROLL for (int k = 0; k < RD_V; ++k) s[k] = rd_init();
    rd_row_read(s, x, xoff, lo, hi, g);
    rd_state r = s[0];
    CK_UNROLL for (int k = 1; k < RD_V; ++k) r = rd_comb(r, s[k]);
    r = rd_row_group(r, t, rd_sv, rd_si);
    if (RD_LAST_FOLD && g->parts > 1) {
        rd_row_last_fold(y, ws, cnt, g, r, part, row, yoff, rd_sv, rd_si);
        return;
    }
    if (lt == 0 && valid) {
        if (g->parts > 1)
            rd_put_part(ws, g, part, row, r);
        else
            rd_store(y, yoff, r, g);
    }
}

#endif
