/*
 * The softmax register instances' read and write stages through tile windows (the instance's
 * `window`: tuning text regs,...,1 or CK_SOFTMAX_WINDOW=1; the generated source includes this
 * after softmax_kernel.h). The source holds the windows x, y and, with an additive mask, m
 * (src/ops/softmax/window.c): the block's tile of SMX_ROWS rows, each row cluster-raked - register
 * j * SMX_VEC + k of thread (row, tid) of cluster block `rank` is column
 * ((j * SMX_CLUSTER + rank) * SMX_G + tid) * SMX_VEC + k (smx_vi), masked past the row end.
 * Their storage types are smx_win_<name>_t; the constructors smx_win_x_at(x, first row, first
 * column, rows, row stride), smx_win_y_at(y, first row, round, first column, rows, row stride)
 * (one round: SMX_VEC registers) and smx_win_m_at(mask, mask row, first column, row stride).
 */
#ifndef CK_OPS_SOFTMAX_WINDOW_KERNEL_H
#define CK_OPS_SOFTMAX_WINDOW_KERNEL_H

/* element of type t (its storage value v) as f32 */
#define SMX_WIN_F32(t, v) ((t) == CK_NC_F32 ? (float)(v) : ck_code_to_f32((t), (uint32_t)(v)))
/* the block's first column of the row (the cluster's blocks take turns by rounds) */
#define SMX_COL0(p) ((long long)(p).rank * SMX_G * SMX_VEC)

#if !SMX_SPAN /* windows over the rows */
CK_DEVICE void smx_read_window(const smx_args *a, smx_pos p, float *v)
{
    smx_win_x_t xr[CK_NREGS_x];
    ck_win_x wx = smx_win_x_at(a->x, p.first, SMX_COL0(p), a->rows, a->xs);
    load_x(xr, &wx);
#if SMX_MASK & 1
    smx_win_m_t mr[CK_NREGS_m];
    ck_win_m wm = smx_win_m_at(a->mask, (p.row / a->mdiv) % a->mmod, SMX_COL0(p), a->ms);
    load_m(mr, &wm);
#endif
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        const long long c0 = smx_vi(p.rank, j, p.tid) * SMX_VEC;
        CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
        {
            const int d = j * SMX_VEC + k;
#if SMX_MASK & 1
            float u = fmaf(SMX_WIN_F32(SMX_TI, xr[d]), a->scale2,
                           SMX_WIN_F32(SMX_TM, mr[d]) * SMX_LOG2E);
#else
            float u = SMX_WIN_F32(SMX_TI, xr[d]) * a->scale2;
#endif
            if (((SMX_MASK & 2) && c0 + k > p.diag) || (!SMX_FULL && c0 >= SMX_N))
                u = ck_neg_inf_f32();
            v[d] = u;
        }
    }
}

CK_DEVICE void smx_write_window(const smx_args *a, smx_pos p, int j, const float *o)
{
    smx_win_y_t r[CK_NREGS_y];
    /* each element's storage value: f32 as is, else its code (as ck_store_f32v rounds) */
    CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) r[k] =
        SMX_TO == CK_NC_F32 ? (smx_win_y_t)o[k] : (smx_win_y_t)ck_f32_to_code(SMX_TO, o[k]);
    ck_win_y wy = smx_win_y_at(a->y, p.first, j, SMX_COL0(p), a->rows, a->ys);
    store_y(r, &wy);
}

#else
/* Over the rows' aligned spans (rows not 16-byte aligned: window.c, smx_span_window): the
 * windows are one row per thread, constructed at the span's start (the row's offset minus its
 * head: RA, a multiple of SMX_VEC, where 16-byte accesses are proven; else the row's offset RS);
 * lanes outside the row are masked by the windows and made -inf here (any fill times a negative
 * scale could be +inf). Register j * SMX_VEC + k is column smx_col(p, j) + k of the row. The
 * constructors take (pointer, [round,] first column, RA, RS, H). */
CK_DEVICE void smx_read_span(const smx_args *a, smx_pos p, float *v)
{
    smx_win_x_t xr[CK_NREGS_x];
    const long long xo = p.row * a->xs;
    ck_win_x wx = smx_win_x_at(a->x, SMX_COL0(p), xo - p.head, xo, p.head);
    load_x(xr, &wx);
#if SMX_MASK & 1
    smx_win_m_t mr[CK_NREGS_m];
    const long long mo = smx_mask_row(p.row, a->ms, a->mdiv, a->mmod);
    ck_win_m wm = smx_win_m_at(a->mask, SMX_COL0(p), mo - p.head, mo, p.head);
    load_m(mr, &wm);
#endif
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        const long long c0 = smx_col(p, j);
        CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
        {
            const int d = j * SMX_VEC + k;
#if SMX_MASK & 1
            float u = fmaf(SMX_WIN_F32(SMX_TI, xr[d]), a->scale2,
                           SMX_WIN_F32(SMX_TM, mr[d]) * SMX_LOG2E);
#else
            float u = SMX_WIN_F32(SMX_TI, xr[d]) * a->scale2;
#endif
            if ((unsigned)(c0 + k) >= (unsigned)SMX_N || /* before or past the row */
                ((SMX_MASK & 2) && c0 + k > p.diag))
                u = ck_neg_inf_f32();
            v[d] = u;
        }
    }
}

CK_DEVICE void smx_write_span(const smx_args *a, smx_pos p, int j, const float *o)
{
    smx_win_y_t r[CK_NREGS_y];
    CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) r[k] =
        SMX_TO == CK_NC_F32 ? (smx_win_y_t)o[k] : (smx_win_y_t)ck_f32_to_code(SMX_TO, o[k]);
    const long long yo = p.row * a->ys;
    ck_win_y wy = smx_win_y_at(a->y, j, SMX_COL0(p), yo - p.head, yo, p.head);
    store_y(r, &wy);
}
#endif

#if SMX_RAW && !SMX_SPAN
/* the raw instance: x's codes two per word (the window fills -inf codes past the row end;
 * smx_raw_u makes them -inf after the scale) */
CK_DEVICE void smx_read_raw_window(const smx_args *a, smx_pos p, uint32_t *raw)
{
    smx_win_x_t xr[CK_NREGS_x];
    ck_win_x wx = smx_win_x_at(a->x, p.first, SMX_COL0(p), a->rows, a->xs);
    load_x(xr, &wx);
    CK_UNROLL for (int i = 0; i < SMX_RAW_W; ++i) raw[i] =
        (uint32_t)xr[2 * i] | ((uint32_t)xr[2 * i + 1] << 16);
}
#elif SMX_RAW
/* over the row's aligned span (smx_raw_u makes the lanes outside the row -inf) */
CK_DEVICE void smx_read_raw_span(const smx_args *a, smx_pos p, uint32_t *raw)
{
    smx_win_x_t xr[CK_NREGS_x];
    const long long xo = p.row * a->xs;
    ck_win_x wx = smx_win_x_at(a->x, SMX_COL0(p), xo - p.head, xo, p.head);
    load_x(xr, &wx);
    CK_UNROLL for (int i = 0; i < SMX_RAW_W; ++i) raw[i] =
        (uint32_t)xr[2 * i] | ((uint32_t)xr[2 * i + 1] << 16);
}
#endif

#endif
