/*
 * ck_reduce's read stages through tile windows (RD_WINDOW: CK_REDUCE_WINDOW=1 or the tuning
 * text's WINDOW field; the generated source includes this after the pipeline). The source holds
 * the windows x (one whole tile of the read loop, unmasked) and the edge's (row: xv, a vector a
 * lane, and xe, an element a lane; column: xe, a row a reduced thread; masked at the part's
 * end) over x (src/ops/reduce/window.c); their storage types are rd_win_<name>_t. Each register's place in the tile is tile_x_<name>, so the stage
 * knows the reduced index it folds (argmax) without indexing memory itself. A row's whole
 * tiles of narrow elements in 16-byte vectors are loaded as 32-bit words (RD_WIN_WORDS) and
 * unpacked here, as the indexed stage does.
 *   row:    rd_win_<name>_at(row pointer at the part, first unit, whole tiles | whole vectors |
 *           part length), in the window's units (elements, or words of RD_WIN_PACK)
 *   column: rd_win_<name>_at(pointer at the part, first row, first column, whole tiles | part
 *           length, m, reduced stride)
 *   strided row (RD_VB 0; the stage rd_row_read_gather): xe alone, rd_win_xe_at(row pointer,
 *           first reduced index, the 6 reduced lengths, the 6 reduced strides)
 */
#ifndef CK_OPS_REDUCE_WINDOW_KERNEL_H
#define CK_OPS_REDUCE_WINDOW_KERNEL_H

/* the row's windows x and xv hold 32-bit words of 16-byte vectors of narrow elements,
 * RD_WIN_PACK a word (window.c, ck_reduce_window_words); else elements */
#define RD_WIN_WORDS (RD_KIND == 0 && RD_VB == 16 && RD_ISZ < 4)
#define RD_WIN_PACK  (RD_WIN_WORDS ? 4 / RD_ISZ : 1)

/* an element of x (the window's storage value) as the code rd_val takes */
CK_DEVICE uint64_t rd_win_code(rd_win_xe_t v)
{
    if (RD_TI == CK_NC_F64)
        return ck_nc_f64_bits((double)v);
    if (RD_TI == CK_NC_F32)
        return ck_f32_as_u32((float)v);
    if (RD_ISZ == 4)
        return (uint32_t)(int32_t)v;
    if (RD_ISZ == 2)
        return (uint16_t)v;
    return (uint8_t)v;
}

#if RD_KIND == 0 && RD_VB > 0
/* Fold register d of window x or xv (its tile place e0 in the window's units; `at` the
 * window's origin in elements) if its unit starts before `end` (-1: all do; a unit is valid
 * or masked as a whole). */
CK_DEVICE void rd_fold_unit(rd_state *s, const void *r, int d, long long e0, long long lo,
                            long long at, long long end)
{
    if (end >= 0 && at + e0 * RD_WIN_PACK >= end)
        return;
    CK_UNROLL for (int j = 0; j < RD_WIN_PACK; ++j)
    {
        const long long i = at + e0 * RD_WIN_PACK + j;
        const uint64_t c = RD_WIN_WORDS ? rd_elem((const uint32_t *)r + d, j)
                                        : rd_win_code(((const rd_win_xe_t *)r)[d]);
            rd_add(&s[d % (RD_V / RD_WIN_PACK) * RD_WIN_PACK + j], rd_val(c), lo + i);
    }
}

/* U vectors of RD_V elements a lane per whole tile, then one vector a lane to the last whole
 * vector, then one element a lane to the part's end (the edge loops kept rolled: unrolled,
 * they held 15 more registers than the whole kernel needs elsewhere) */
CK_DEVICE void rd_row_read_window(rd_state *s, const void *x, long long xoff, long long lo,
                                  long long hi, const rd_geom *g)
{
    (void)g;
    const long long tile = (long long)RD_U * RD_G * RD_V, step = (long long)RD_G * RD_V;
    const long long len = hi - lo, whole = len / tile * tile, vend = len / RD_V * RD_V;
    const char *part = (const char *)x + (xoff + lo) * RD_ISZ;
    ck_win_x w = rd_win_x_at(part, 0, whole / RD_WIN_PACK);
    for (long long at = 0; at < whole; at += tile) {
        rd_win_x_t r[CK_NREGS_x];
        load_x(r, &w);
        CK_UNROLL for (int d = 0; d < CK_NREGS_x; ++d)
        {
            long long e[1];
            tile_x_x(d, e);
            rd_fold_unit(s, r, d, e[0], lo, at, -1);
        }
        move_x(&w, tile / RD_WIN_PACK);
    }
    ck_win_xv wv = rd_win_xv_at(part, whole / RD_WIN_PACK, vend / RD_WIN_PACK);
    CK_NO_UNROLL for (long long at = whole; at < vend; at += step) {
        rd_win_xv_t r[CK_NREGS_xv];
        load_xv(r, &wv);
        CK_UNROLL for (int d = 0; d < CK_NREGS_xv; ++d)
        {
            long long e[1];
            tile_x_xv(d, e);
            rd_fold_unit(s, r, d, e[0], lo, at, vend);
        }
        move_xv(&wv, step / RD_WIN_PACK);
    }
    ck_win_xe we = rd_win_xe_at(part, vend, len);
    CK_NO_UNROLL for (long long at = vend; at < len; at += RD_G) {
        rd_win_xe_t r[CK_NREGS_xe];
        load_xe(r, &we);
        long long e[1];
        tile_x_xe(0, e);
        if (at + e[0] < len)
            rd_add(&s[0], rd_val(rd_win_code(r[0])), lo + at + e[0]);
        move_xe(&we, RD_G);
    }
}
#endif

#if RD_KIND == 0 && RD_VB == 0
/* The strided row (RD_VB 0, the generator's rd_row_read_gather): one element a lane, as the
 * indexed stage walks them, from window xe over the reduced dimensions merged into the reduced
 * index (its offsets are the descriptor's; lengths and strides of the geometry, those past
 * RD_RD unused). The window masks at n; a split part folds nothing past its end hi. */
CK_DEVICE void rd_row_read_gather(rd_state *s, const void *x, long long xoff, long long lo,
                                  long long hi, const rd_geom *g)
{
    const long long *l = g->rl, *sx = g->rxs;
    ck_win_xe w = rd_win_xe_at((const char *)x + xoff * RD_ISZ, lo, l[0], l[1], l[2], l[3], l[4],
                               l[5], sx[0], sx[1], sx[2], sx[3], sx[4], sx[5]);
    long long e[1];
    tile_x_xe(0, e);
    for (long long at = lo; at < hi; at += RD_G) {
        rd_win_xe_t r[CK_NREGS_xe];
        load_xe(r, &w);
        if (at + e[0] < hi)
            rd_add(&s[0], rd_val(rd_win_code(r[0])), at + e[0]);
        move_xe(&w, RD_G);
    }
}
#endif

#if RD_KIND == 1
/* U rows a reduced thread per whole tile (one RD_V-vector of its columns each), then one row a
 * reduced thread to the part's end; columns past m are masked and not folded */
CK_DEVICE void rd_col_read_window(rd_state *s, const void *x, long long xo, long long col0,
                                  long long lo, long long hi, const rd_geom *g)
{
    const long long tile = (long long)RD_U * RD_RT, len = hi - lo, whole = len / tile * tile;
    const long long m = g->m, sx = g->rxs[0];
    const char *part = (const char *)x + (xo + lo * sx) * RD_ISZ;
    ck_win_x w = rd_win_x_at(part, 0, col0, whole, m, sx);
    for (long long at = 0; at < whole; at += tile) {
        rd_win_x_t r[CK_NREGS_x];
        load_x(r, &w);
        CK_UNROLL for (int d = 0; d < CK_NREGS_x; ++d)
        {
            long long e[2];
            tile_x_x(d, e);
            if (col0 + e[1] < m)
                rd_add(&s[d % RD_V], rd_val(rd_win_code(r[d])), lo + at + e[0]);
        }
        move_x(&w, tile, 0);
    }
    ck_win_xe we = rd_win_xe_at(part, whole, col0, len, m, sx);
    for (long long at = whole; at < len; at += RD_RT) {
        rd_win_xe_t r[CK_NREGS_xe];
        load_xe(r, &we);
        CK_UNROLL for (int d = 0; d < CK_NREGS_xe; ++d)
        {
            long long e[2];
            tile_x_xe(d, e);
            if (at + e[0] < len && col0 + e[1] < m)
                rd_add(&s[d], rd_val(rd_win_code(r[d])), lo + at + e[0]);
        }
        move_xe(&we, RD_RT, 0);
    }
}
#endif

#endif
