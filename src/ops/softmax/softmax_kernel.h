/*
 * Softmax and log-softmax along the last axis (device C). Included by a source that src/ops/
 * softmax/params.c generates; it defines the problem's constants first:
 *
 *   SMX_TI, SMX_TO, SMX_TM   types of x, y and the additive mask (ck_dtype codes: f32, f16, bf16)
 *   SMX_MASK                 bit 0: additive mask, bit 1: causal mask
 *   SMX_LOG                  1: log-softmax
 *   SMX_N                    row length (elements)
 *   SMX_VEC                  elements per access (divides SMX_N unless SMX_SPAN; every access
 *                             is aligned)
 *   SMX_WIDE_X/_Y/_M         1: accesses of x / y / mask are 16-byte vectors, else elements
 *   SMX_SPAN                 1 (register instance through windows): rows are not 16-byte
 *                             aligned and are read over their aligned spans (SMX_VEC does not
 *                             divide SMX_N; smx_pos.head elements of the span before the row)
 *   register instance (smx_rows): SMX_G threads per row, SMX_NV vectors per thread,
 *                             SMX_CLUSTER blocks per row (a cluster), SMX_ROWS rows per block
 *   online instance (smx_stats / smx_write): SMX_G threads per block, SMX_SEG elements per
 *                             segment (one block each), SMX_S segments per row, SMX_UNROLL
 *
 * Mathematics (reference §5): u = (scale * x + mask) * log2(e); m = max u; l = sum exp2(u - m);
 * softmax = exp2(u - m) / l, log-softmax = (u - m - log2 l) * ln 2. Partial results (m_i, l_i)
 * of parts of a row combine as m = max m_i, l = sum exp2(m_i - m) l_i (5.12-5.13). A maximum of
 * -inf counts as 0 in the exponents (ck_ml_offset), so -inf entries give probability 0, a row
 * that is entirely -inf gives 0/0 = NaN (as PyTorch), NaN and +inf give NaN rows.
 */
#ifndef CK_OPS_SOFTMAX_KERNEL_H
#define CK_OPS_SOFTMAX_KERNEL_H

#include "ops/softmax/softmax_common_kernel.h"

#ifndef SMX_SPAN
#define SMX_SPAN 0
#endif
/* The vectors of a row; with SMX_SPAN (rows not 16-byte aligned, read over their aligned spans:
 * a head of up to SMX_VEC - 1 elements before the row) the most a span covers. */
#if SMX_SPAN
#define SMX_NVEC ((SMX_N + 2 * SMX_VEC - 2) / SMX_VEC)
#else
#define SMX_NVEC (SMX_N / SMX_VEC)
#endif

/* The transformed values u of the SMX_VEC elements from element e of row `row`. */
CK_DEVICE void smx_load_u(const void *x, const void *mask, long long xoff, long long moff,
                          long long e, long long diag, float scale2, float *w)
{
    smx_ldv(x, xoff + e, SMX_TI, SMX_VEC, SMX_WIDE_X, w);
#if SMX_MASK & 1
    float mk[SMX_VEC];
    smx_ldv(mask, moff + e, SMX_TM, SMX_VEC, SMX_WIDE_M, mk);
    CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) w[k] = fmaf(w[k], scale2, mk[k] * SMX_LOG2E);
#else
    (void)mask;
    (void)moff;
    CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) w[k] *= scale2;
#endif
#if SMX_MASK & 2
    CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) if (e + k > diag) w[k] = ck_neg_inf_f32();
#else
    (void)diag;
#endif
}

/* Offsets of row `row` in the mask and its causal diagonal (last unmasked column). */
CK_DEVICE long long smx_mask_row(long long row, long long ms, long long mdiv, long long mmod)
{
    return ((row / mdiv) % mmod) * ms;
}

CK_DEVICE long long smx_diag(long long row, long long cm)
{
    return (row % cm) + ((long long)SMX_N - cm);
}

/* Cluster-wide combination without cluster barriers in the row's path: the block library's
 * st.async exchange (ck_reduction.h), two exchanges (max, sum) or one (pairs). The barrier.cluster
 * pair it replaces waited, in its release half, until the block's memory operations were done
 * (bench/RESULTS.md). No block reads another's shared memory, and a block's slots are complete
 * before it leaves, so no final cluster barrier. */
CK_DEVICE void smx_cluster_init(unsigned long long *mb, int n, unsigned bytes)
{
    const unsigned b[2] = {bytes, bytes};
    ck_cluster_exchange_init(mb, b, n);
}

#ifdef SMX_NV
/* Vector j of thread tid of cluster block `rank` in its row: the cluster's blocks take turns by
 * vectors of SMX_G (j-major), so every block holds nearly the same share of a row that does
 * not fill the last round (a block-major split left whole blocks idle: 88% of the copy
 * bandwidth at N 100000 with clusters of 8, H100). */
CK_DEVICE long long smx_vi(unsigned rank, int j, unsigned tid)
{
    return ((long long)j * SMX_CLUSTER + rank) * SMX_G + tid;
}
#endif

#ifdef SMX_NV
/* The row's maximum (is_max 1) or sum from each thread's: the warp's or the block's (through
 * `red`, SMX_G / 32 floats), then over a cluster the blocks' (slots `cl`, mbarrier `mb`). The
 * maximum is the first exchange: it waits for the split cluster barrier of smx_cluster_init. */
CK_DEVICE float smx_row_reduce(float v, int is_max, float *red, float *cl,
                               unsigned long long *mb, unsigned rank, unsigned tid)
{
    v = ck_group_reduce_f32(v, is_max ? CK_RED_MAX : CK_RED_SUM, SMX_G, red);
#if SMX_CLUSTER > 1
    (void)rank;
    if (is_max)
        ck_cluster_wait();
    v = ck_cluster_reduce_f32(v, is_max ? CK_RED_MAX : CK_RED_SUM, cl, mb, tid, SMX_CLUSTER);
#else
    (void)cl;
    (void)mb;
    (void)rank;
    (void)tid;
#endif
    return v;
}
#endif

#ifdef SMX_NV
/* every thread's rounds lie inside the row: no column past its end */
#define SMX_FULL ((long long)SMX_NV * SMX_CLUSTER * SMX_G * SMX_VEC == SMX_N)

/* The arguments of a register instance's kernel, and where a thread's part of a row is: the
 * row, the block's rank in its cluster, the thread in the row's group, the causal diagonal. */
typedef struct smx_args {
    void *y;
    const void *x, *mask;
    long long rows, xs, ys, ms, mdiv, mmod, cm;
    float scale2;
} smx_args;

typedef struct smx_pos {
    long long row, diag, first; /* first: the block's first row */
    unsigned rank, tid;
    int head; /* SMX_SPAN: elements of the row's span before the row (x is 16-byte aligned) */
} smx_pos;

/* The row's column of the first element of the thread's vector j (before the row: < 0). */
CK_DEVICE long long smx_col(smx_pos p, int j)
{
    return smx_vi(p.rank, j, p.tid) * SMX_VEC - p.head;
}

/* Register instance, stage read: the transformed values u of the thread's SMX_NV vectors
 * (vector j at v[j * SMX_VEC]), -inf past the row end. Stage write: vector j of the output. The
 * generated source defines them: smx_read_indexed / smx_write_indexed (below), or through the
 * generated tile windows smx_read_window / smx_write_window (softmax_window_kernel.h). */
CK_DEVICE void smx_read(const smx_args *a, smx_pos p, float *v);
CK_DEVICE void smx_write(const smx_args *a, smx_pos p, int j, const float *o);

CK_DEVICE void smx_read_indexed(const smx_args *a, smx_pos p, float *v)
{
    const long long xoff = p.row * a->xs, moff = smx_mask_row(p.row, a->ms, a->mdiv, a->mmod);
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        long long vi = smx_vi(p.rank, j, p.tid);
        if (vi < SMX_NVEC) {
            smx_load_u(a->x, a->mask, xoff, moff, vi * SMX_VEC, p.diag, a->scale2, v + j * SMX_VEC);
        } else {
            CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) v[j * SMX_VEC + k] = ck_neg_inf_f32();
        }
    }
}

CK_DEVICE void smx_write_indexed(const smx_args *a, smx_pos p, int j, const float *o)
{
    smx_stv(a->y, p.row * a->ys + smx_vi(p.rank, j, p.tid) * SMX_VEC, SMX_TO, SMX_VEC, SMX_WIDE_Y,
            o);
}

/* Whether the thread's vector j lies in the row (not past its end). */
CK_DEVICE int smx_holds(smx_pos p, int j)
{
    return smx_vi(p.rank, j, p.tid) < SMX_NVEC;
}

/* The thread's position; 0 rows past the last (a warp per row: it returns, no barrier). */
CK_DEVICE int smx_pos_of(const smx_args *a, smx_pos *p)
{
#if SMX_CLUSTER > 1
    p->rank = ck_cluster_ctarank();
#else
    p->rank = 0;
#endif
    p->tid = ck_thread_idx_x() % SMX_G;
    p->first = (long long)(ck_block_idx_x() / SMX_CLUSTER) * SMX_ROWS;
    p->row = p->first + ck_thread_idx_x() / SMX_G;
    p->diag = smx_diag(p->row, a->cm);
    p->head = SMX_SPAN ? (int)((p->row * a->xs) & (SMX_VEC - 1)) : 0;
    return !(SMX_G == 32 && p->row >= a->rows);
}

/* Register instance: each row (or each 1/SMX_CLUSTER of a row) is held in registers, SMX_NV
 * vectors per thread, so x is read once and y written once. */
CK_DEVICE void smx_rows(void *y, const void *x, const void *mask, long long rows, long long xs,
                        long long ys, long long ms, long long mdiv, long long mmod, long long cm,
                        float scale2)
{
    /* the block reductions' slots and the cluster exchanges' (a few unused bytes without) */
    CK_SHARED_ARRAY(float, smx_red_m, SMX_G / 32);
    CK_SHARED_ARRAY(float, smx_red_l, SMX_G / 32);
    CK_SHARED_ARRAY(float, smx_cl_m, SMX_CLUSTER);
    CK_SHARED_ARRAY(float, smx_cl_l, SMX_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, smx_mb, 2);
    const smx_args a = {y, x, mask, rows, xs, ys, ms, mdiv, mmod, cm, scale2};
    smx_pos p;
    const int live = smx_pos_of(&a, &p);
#if SMX_CLUSTER > 1
    smx_cluster_init(smx_mb, 2, 4 * SMX_CLUSTER);
#endif
    if (!live)
        return;
    float v[SMX_NV * SMX_VEC];
    smx_read(&a, p, v);
    float m = ck_neg_inf_f32();
    CK_UNROLL for (int e = 0; e < SMX_NV * SMX_VEC; ++e) m = fmaxf(m, v[e]);
    m = smx_row_reduce(m, 1, smx_red_m, smx_cl_m, &smx_mb[0], p.rank, p.tid);
    const float mx = ck_ml_offset(m);
    float l = 0.0f;
    CK_UNROLL for (int e = 0; e < SMX_NV * SMX_VEC; ++e)
    {
        float q = exp2f(v[e] - mx);
        l += q;
#if !SMX_LOG
        v[e] = q;
#endif
    }
    l = smx_row_reduce(l, 0, smx_red_l, smx_cl_l, &smx_mb[1], p.rank, p.tid);
#if SMX_LOG
    const float c = mx + log2f(l);
#else
    const float c = 1.0f / l;
#endif
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        if (smx_holds(p, j)) {
            float o[SMX_VEC];
            CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
            {
#if SMX_LOG
                o[k] = (v[j * SMX_VEC + k] - c) * SMX_LN2;
#else
                o[k] = v[j * SMX_VEC + k] * c;
#endif
            }
            smx_write(&a, p, j, o);
        }
    }
}
#endif /* SMX_NV */

#if defined(SMX_NV) && SMX_RAW
/* Register instance keeping the raw 16-bit inputs (two per 32-bit register) instead of the
 * f32 values: half the registers, so a 1024-thread block or a cluster part holds 32 elements
 * per thread without spilling. Each pass converts again (a shift for bf16) and the write pass
 * recomputes exp2. Only without an additive mask (the causal mask depends on the column only),
 * for 16-bit x read as 16-byte vectors (SMX_VEC == 8). */
#define SMX_RAW_W (SMX_NV * 4)
/* SMX_PAIRRED (from the generator) 1: one reduction of per-thread pairs (m, l); 0: the row's
 * maximum, then its sum. */
CK_DEVICE float smx_raw_u(const uint32_t *raw, int e, float scale2, long long col, long long diag)
{
    uint32_t w = ck_opaque_u32(raw[e >> 1]); /* converted again in each pass, not kept */
    float u = ck_code_to_f32(SMX_TI, (e & 1) ? (w >> 16) : (w & 0xffffu)) * scale2;
#if SMX_MASK & 2
    /* also past the row end (diag < SMX_N); with spans also before the row (64-bit compares:
     * with 32-bit ones ptxas kept more registers live, 115 unbounded against 75) */
    if (col > diag || (SMX_SPAN && col < 0))
        u = ck_neg_inf_f32();
#else
    (void)diag;
    /* outside the row: -inf whatever the sign of the scale (the -inf codes times a negative
     * scale were +inf, and the row NaN) */
    if (SMX_SPAN ? (unsigned long long)col >= (unsigned long long)SMX_N
                 : (!SMX_FULL && col >= SMX_N))
        u = ck_neg_inf_f32();
#endif
    return u;
}

/* -inf in the input type, twice */
#define SMX_RAW_NINF (SMX_TI == CK_NC_BF16 ? 0xff80ff80u : 0xfc00fc00u)

/* Raw instance, stage read: the thread's SMX_NV 16-byte vectors of x into raw (vector j at
 * raw[4j..4j+3]), -inf past the row end (counts for nothing); defined by the generated source
 * as smx_read_raw_indexed (below) or smx_read_raw_window (softmax_window_kernel.h). */
CK_DEVICE void smx_read_raw(const smx_args *a, smx_pos p, uint32_t *raw);

CK_DEVICE void smx_read_raw_indexed(const smx_args *a, smx_pos p, uint32_t *raw)
{
    const long long xoff = p.row * a->xs;
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        long long vi = smx_vi(p.rank, j, p.tid);
        if (vi < SMX_NVEC) {
            ck_u32x4 r = ck_ld16_nc((const char *)a->x + (xoff + vi * SMX_VEC) * 2);
            raw[4 * j] = r.x;
            raw[4 * j + 1] = r.y;
            raw[4 * j + 2] = r.z;
            raw[4 * j + 3] = r.w;
        } else {
            CK_UNROLL for (int k = 0; k < 4; ++k) raw[4 * j + k] = SMX_RAW_NINF;
        }
    }
}

CK_DEVICE void smx_rows_raw(void *y, const void *x, long long rows, long long xs, long long ys,
                            long long cm, float scale2)
{
    /* the block reductions' slots and the cluster exchanges' (pairs: 2 floats per slot) */
    CK_SHARED_ARRAY(float, smx_red_m, (1 + SMX_PAIRRED) * (SMX_G / 32));
    CK_SHARED_ARRAY(float, smx_red_l, SMX_G / 32);
    CK_SHARED_ARRAY(float, smx_cl_m, (1 + SMX_PAIRRED) * SMX_CLUSTER);
    CK_SHARED_ARRAY(float, smx_cl_l, SMX_CLUSTER);
    CK_SHARED_ARRAY(unsigned long long, smx_mb, 2);
    const smx_args a = {y, x, x, rows, xs, ys, 0, 1, 1, cm, scale2};
    smx_pos p;
    const int live = smx_pos_of(&a, &p);
#if SMX_CLUSTER > 1
    smx_cluster_init(smx_mb, 2 - SMX_PAIRRED, (4 + 4 * SMX_PAIRRED) * SMX_CLUSTER);
#endif
    if (!live)
        return;
    const unsigned rank = p.rank, tid = p.tid;
    const long long diag = p.diag;
    uint32_t raw[SMX_RAW_W];
    smx_read_raw(&a, p, raw);
    /* the maximum: this thread's, then (max then sum) the row's */
    float m = ck_neg_inf_f32();
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        long long c0 = smx_col(p, j);
        CK_UNROLL for (int k = 0; k < 8; ++k) m = fmaxf(m, smx_raw_u(raw, 8 * j + k, scale2, c0 + k, diag));
    }
#if !SMX_PAIRRED
    m = smx_row_reduce(m, 1, smx_red_m, smx_cl_m, &smx_mb[0], rank, tid);
#endif
    /* the sum relative to that maximum */
    const float mt = ck_ml_offset(m);
    float l = 0.0f;
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        long long c0 = smx_col(p, j);
        CK_UNROLL for (int k = 0; k < 8; ++k) l += ck_exp2_ftz(smx_raw_u(raw, 8 * j + k, scale2, c0 + k, diag) - mt);
    }
#if SMX_PAIRRED
    /* one reduction of the pairs (5.12-5.13): the block's (one barrier), then the cluster's
     * blocks' (one cluster barrier) */
    ck_group_ml(&m, &l, SMX_G, smx_red_m);
#if SMX_CLUSTER > 1
    ck_cluster_wait();
    ck_cluster_ml(&m, &l, smx_cl_m, &smx_mb[0], tid, SMX_CLUSTER);
#endif
#else
    l = smx_row_reduce(l, 0, smx_red_l, smx_cl_l, &smx_mb[1], rank, tid);
#endif
    const float mx = ck_ml_offset(m);
#if SMX_LOG
    /* log2 l as -log2(1 / l) (equal up to rounding): with log2f(l) ptxas spilled 144 bytes at
     * 64 registers (N 32768 and 65536), with the division none */
    const float c = mx - log2f(1.0f / l);
#else
    const float c = 1.0f / l;
#endif
    CK_UNROLL for (int j = 0; j < SMX_NV; ++j)
    {
        if (smx_holds(p, j)) {
            long long c0 = smx_col(p, j);
            float o[8];
            CK_UNROLL for (int k = 0; k < 8; ++k)
            {
                float u = smx_raw_u(raw, 8 * j + k, scale2, c0 + k, diag);
#if SMX_LOG
                o[k] = (u - c) * SMX_LN2;
#else
                o[k] = ck_exp2_ftz(u - mx) * c;
#endif
            }
            smx_write(&a, p, j, o);
        }
    }
}
#endif /* SMX_RAW */

#ifdef SMX_SEG
/* Online instance, for rows longer than the register instance holds. Row `row` is cut into
 * SMX_S segments of SMX_SEG elements (the last may be shorter), one block each. smx_stats reads
 * its segment once, keeping a running (m, l) per thread that is rescaled by exp2(m_old - m_new)
 * whenever the maximum grows (5.12-5.13), combines the block's pairs and writes them to
 * ws[2 * (row * SMX_S + s)]. smx_write combines the row's SMX_S pairs and reads the segment a
 * second time to write y. Traffic: 2 reads of x + 1 write of y. */
#define SMX_CHUNK (SMX_G * SMX_VEC * SMX_UNROLL)

CK_DEVICE void smx_stats(float *ws, const void *x, const void *mask, long long rows, long long xs,
                         long long ms, long long mdiv, long long mmod, long long cm, float scale2)
{
    CK_SHARED_ARRAY(float, smx_red_m, SMX_G / 32);
    CK_SHARED_ARRAY(float, smx_red_l, SMX_G / 32);
    const unsigned tid = ck_thread_idx_x();
    const long long row = (long long)ck_block_idx_x() / SMX_S;
    const long long seg = (long long)ck_block_idx_x() % SMX_S;
    (void)rows;
    const long long xoff = row * xs, moff = smx_mask_row(row, ms, mdiv, mmod);
    const long long diag = smx_diag(row, cm);
    const long long begin = seg * SMX_SEG;
    const long long end = begin + SMX_SEG < SMX_N ? begin + SMX_SEG : SMX_N;
    float m = ck_neg_inf_f32(), l = 0.0f;
    for (long long c = begin; c < end; c += SMX_CHUNK) {
        float v[SMX_UNROLL * SMX_VEC];
        CK_UNROLL for (int j = 0; j < SMX_UNROLL; ++j)
        {
            long long e = c + ((long long)j * SMX_G + tid) * SMX_VEC;
            if (e < end) {
                smx_load_u(x, mask, xoff, moff, e, diag, scale2, v + j * SMX_VEC);
            } else {
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) v[j * SMX_VEC + k] = ck_neg_inf_f32();
            }
        }
        float cmax = ck_neg_inf_f32();
        CK_UNROLL for (int e = 0; e < SMX_UNROLL * SMX_VEC; ++e) cmax = fmaxf(cmax, v[e]);
        float mn = fmaxf(m, cmax), mx = ck_ml_offset(mn);
        float s = 0.0f;
        CK_UNROLL for (int e = 0; e < SMX_UNROLL * SMX_VEC; ++e) s += exp2f(v[e] - mx);
        l = l * ck_ml_rescale(m, mn) + s;
        m = mn;
    }
    /* block combine of the (m, l) pairs: maximum first, then the rescaled sums */
    float bm = ck_group_reduce_f32(m, CK_RED_MAX, SMX_G, smx_red_m);
    float bl = ck_group_reduce_f32(l * ck_ml_rescale(m, bm), CK_RED_SUM, SMX_G, smx_red_l);
    if (tid == 0) {
        ws[2 * (row * SMX_S + seg)] = bm;
        ws[2 * (row * SMX_S + seg) + 1] = bl;
    }
}

CK_DEVICE void smx_write(void *y, const float *ws, const void *x, const void *mask, long long rows,
                         long long xs, long long ys, long long ms, long long mdiv, long long mmod,
                         long long cm, float scale2)
{
    const unsigned tid = ck_thread_idx_x();
    const long long row = (long long)ck_block_idx_x() / SMX_S;
    const long long seg = (long long)ck_block_idx_x() % SMX_S;
    (void)rows;
    float m = ck_neg_inf_f32(), l = 0.0f;
    for (int s = 0; s < SMX_S; ++s)
        ck_ml_merge(&m, &l, ws[2 * (row * SMX_S + s)], ws[2 * (row * SMX_S + s) + 1]);
    const float mx = ck_ml_offset(m);
#if SMX_LOG
    const float c = mx + log2f(l);
#else
    const float c = 1.0f / l;
#endif
    const long long xoff = row * xs, yoff = row * ys, moff = smx_mask_row(row, ms, mdiv, mmod);
    const long long diag = smx_diag(row, cm);
    const long long begin = seg * SMX_SEG;
    const long long end = begin + SMX_SEG < SMX_N ? begin + SMX_SEG : SMX_N;
    for (long long c0 = begin; c0 < end; c0 += SMX_CHUNK) {
        float v[SMX_UNROLL * SMX_VEC];
        CK_UNROLL for (int j = 0; j < SMX_UNROLL; ++j)
        {
            long long e = c0 + ((long long)j * SMX_G + tid) * SMX_VEC;
            if (e < end) {
                smx_load_u(x, mask, xoff, moff, e, diag, scale2, v + j * SMX_VEC);
            } else {
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k) v[j * SMX_VEC + k] = 0.0f;
            }
        }
        CK_UNROLL for (int j = 0; j < SMX_UNROLL; ++j)
        {
            long long e = c0 + ((long long)j * SMX_G + tid) * SMX_VEC;
            if (e < end) {
                float o[SMX_VEC];
                CK_UNROLL for (int k = 0; k < SMX_VEC; ++k)
                {
#if SMX_LOG
                    o[k] = (v[j * SMX_VEC + k] - c) * SMX_LN2;
#else
                    o[k] = exp2f(v[j * SMX_VEC + k] - mx) * c;
#endif
                }
                smx_stv(y, yoff + e, SMX_TO, SMX_VEC, SMX_WIDE_Y, o);
            }
        }
    }
}
#endif /* SMX_SEG */

#endif
