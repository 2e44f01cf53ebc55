/*
 * Device code of ck_reduce (included by the source src/ops/reduce/params.c generates, which
 * defines the constants below first). Three kernels:
 *
 *   rd_row_k      RD_KIND 0: a group of RD_G threads per output ("row"), RD_RPB groups per block
 *                 (RD_G 1..32: lanes of one warp; 64..1024: the whole block).
 *                 RD_VB > 0: the reduced elements are contiguous; RD_VB-byte vector loads
 *                 (16 = ck_ld16_nc), RD_U vectors in flight per thread, one accumulator per
 *                 vector lane. RD_VB == 0: any strides (flat reduced index decomposed).
 *                 Warp butterfly (xor) then, for RD_G > 32, the warps' results in warp order.
 *   rd_col_k      RD_KIND 1: the innermost kept dimension is contiguous: each thread owns RD_V
 *                 consecutive outputs (one RD_VB-byte vector per reduced index), RD_CT threads
 *                 along them, RD_RT threads along the reduced index; the RD_RT partial states
 *                 of a column are combined through shared memory in order.
 *   rd_combine_k  RD_KIND 2: one thread per output combines the g.parts partial states that a
 *                 split row or column instance wrote to the workspace, in part order.
 *
 * Every combination happens in an order fixed by the instance: results are deterministic.
 *
 * Constants: RD_TI, RD_TO (CK_NC_* type codes of x and y), RD_ACC64 (accumulate in fp64),
 * RD_OP (ck_reduce_op), RD_PRE (ck_reduce_pre), RD_SCALE (multiply by g.scale), RD_SQRT,
 * RD_KD, RD_RD (kept and reduced dimension counts), RD_KIND, RD_VB, RD_G, RD_RPB, RD_U,
 * RD_CT, RD_RT.
 */
#ifndef CK_OPS_REDUCE_KERNEL_H
#define CK_OPS_REDUCE_KERNEL_H

#include "ck_block.h"
#include "ops/reduce/reduce_geom_kernel.h"

#if RD_ACC64
typedef double rd_acc;
#define RD_SQRT_(v) sqrt(v)
#define RD_ABS_(v)  fabs(v)
#else
typedef float rd_acc;
#define RD_SQRT_(v) sqrtf(v)
#define RD_ABS_(v)  fabsf(v)
#endif

#define RD_IS_ARG  (RD_OP == 6 || RD_OP == 7)
#define RD_IS_MAX  (RD_OP == 2 || RD_OP == 6)
#define RD_IS_MIN  (RD_OP == 3 || RD_OP == 7)
#define RD_IS_SQ   (RD_OP == 4 || RD_OP == 5)
#define RD_NOIDX   0x7fffffffffffffffLL

#if RD_TI == CK_NC_F64
#define RD_ISZ 8
#elif RD_TI == CK_NC_F32 || RD_TI == CK_NC_I32
#define RD_ISZ 4
#elif RD_TI == CK_NC_F16 || RD_TI == CK_NC_BF16
#define RD_ISZ 2
#else
#define RD_ISZ 1
#endif

#if RD_VB > 0
#define RD_V (RD_VB / RD_ISZ)
#else
#define RD_V 1
#endif

/* ---- element conversion (exact): the block library's conversions; f64, i32 and the FNUZ fp8
 * types (constant conditions: the compiler keeps one branch) */
CK_DEVICE rd_acc rd_in(uint64_t c)
{
    if (RD_TI == CK_NC_F64)
        return (rd_acc)ck_nc_bits_f64(c);
    if (RD_TI == CK_NC_I32)
        return (rd_acc)(int32_t)(uint32_t)c;
    if (RD_TI == CK_NC_F32 || RD_TI == CK_NC_BF16 || RD_TI == CK_NC_F16 ||
        RD_TI == CK_NC_FP8_E5M2 || RD_TI == CK_NC_FP8_E4M3 || RD_TI == CK_NC_I8 ||
        RD_TI == CK_NC_U8)
        return (rd_acc)ck_code_to_f32(RD_TI, (uint32_t)c);
    return (rd_acc)ck_nc_to_f32(RD_TI, c);
}

/* pre-op */
CK_DEVICE rd_acc rd_val(uint64_t c)
{
    rd_acc v = rd_in(c);
#if RD_PRE == 1
    v = RD_ABS_(v);
#elif RD_PRE == 2
    v = v * v;
#endif
    return v;
}

/* ---- reduction state --------------------------------------------------------------------- */
typedef struct rd_state {
    rd_acc v;
    long long i; /* argmax/argmin: flat reduced index (RD_NOIDX: none yet) */
} rd_state;

CK_DEVICE rd_state rd_init(void)
{
    rd_state s;
#if RD_IS_MAX
    s.v = (rd_acc)-ck_u32_as_f32(0x7f800000u);
#elif RD_IS_MIN
    s.v = (rd_acc)ck_u32_as_f32(0x7f800000u);
#else
    s.v = (rd_acc)0;
#endif
    s.i = RD_NOIDX;
    return s;
}

/* 1 when (bv, bi) wins over (av, ai): NaN first (lowest index among NaNs), then the larger
 * (smaller) value, then the lower index. */
CK_DEVICE int rd_better(rd_acc bv, long long bi, rd_acc av, long long ai)
{
    int an = av != av, bn = bv != bv;
    if (an || bn)
        return bn && (!an || bi < ai);
#if RD_IS_MAX
    if (bv > av)
        return 1;
#else
    if (bv < av)
        return 1;
#endif
    return bv == av && bi < ai;
}

/* Fold element value v (after the pre-op) with flat index i into s. */
CK_DEVICE void rd_add(rd_state *s, rd_acc v, long long i)
{
#if RD_IS_ARG
    if (rd_better(v, i, s->v, s->i)) {
        s->v = v;
        s->i = i;
    }
#elif RD_IS_MAX
    (void)i;
    if (v > s->v || v != v)
        s->v = v;
#elif RD_IS_MIN
    (void)i;
    if (v < s->v || v != v)
        s->v = v;
#elif RD_IS_SQ
    (void)i;
    s->v = s->v + v * v;
#else
    (void)i;
    s->v = s->v + v;
#endif
}

CK_DEVICE rd_state rd_comb(rd_state a, rd_state b)
{
#if RD_IS_ARG
    if (rd_better(b.v, b.i, a.v, a.i))
        return b;
#elif RD_IS_MAX
    if (b.v > a.v || b.v != b.v)
        a.v = b.v;
#elif RD_IS_MIN
    if (b.v < a.v || b.v != b.v)
        a.v = b.v;
#else
    a.v = a.v + b.v;
#endif
    return a;
}

CK_DEVICE rd_acc rd_shfl_acc(rd_acc v, unsigned m)
{
    return RD_ACC64 ? (rd_acc)ck_shfl_xor_f64(v, m) : (rd_acc)ck_shfl_xor_f32((float)v, m);
}

/* Butterfly over aligned groups of min(RD_G, 32) lanes: every lane of a group ends with the
 * same state (the whole warp always takes part in the shuffles). */
CK_DEVICE rd_state rd_warp(rd_state s)
{
    for (unsigned m = (RD_G < 32 ? RD_G : 32) / 2; m >= 1; m /= 2) {
        rd_state o;
        o.v = rd_shfl_acc(s.v, m);
#if RD_IS_ARG
        o.i = (long long)ck_shfl_xor_u64((uint64_t)s.i, m);
#else
        o.i = 0;
#endif
        /* fixed operand order by lane bit: both lanes compute comb(lower, upper) */
        s = (ck_lane_id() & m) ? rd_comb(o, s) : rd_comb(s, o);
    }
    return s;
}

/* ---- addressing ------------------------------------------------------------------------- */
CK_DEVICE uint64_t rd_ld1(const void *x, long long e)
{
#if RD_ISZ == 8
    return ((const uint64_t *)x)[e];
#elif RD_ISZ == 4
    return ((const uint32_t *)x)[e];
#elif RD_ISZ == 2
    return ((const uint16_t *)x)[e];
#else
    return ((const uint8_t *)x)[e];
#endif
}

#if RD_VB > 0
/* One RD_VB-byte vector (the block library's widest aligned access). */
CK_DEVICE void rd_ldv(const char *p, uint32_t *w)
{
    ck_ld_words(p, RD_VB, w);
}

CK_DEVICE uint64_t rd_elem(const uint32_t *w, int k)
{
#if RD_ISZ == 8
    return (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
#elif RD_ISZ == 4
    return w[k];
#elif RD_ISZ == 2
    return (w[k >> 1] >> ((k & 1) * 16)) & 0xffffu;
#else
    return (w[k >> 2] >> ((k & 3) * 8)) & 0xffu;
#endif
}
#endif

/* Offset in x of flat reduced index j. */
CK_DEVICE long long rd_red_off(const rd_geom *g, long long j)
{
#if RD_RD == 1
    return j * g->rxs[0];
#else
    long long o = 0;
    CK_UNROLL for (int r = RD_RD - 1; r >= 0; --r)
    {
        long long q = j / g->rl[r];
        o += (j - q * g->rl[r]) * g->rxs[r];
        j = q;
    }
    return o;
#endif
}

/* Offsets in x and y of output `row` over kept dimensions [0, kd). */
CK_DEVICE void rd_kept_off(const rd_geom *g, int kd, long long row, long long *xo, long long *yo)
{
    long long a = 0, b = 0;
    for (int k = kd - 1; k >= 0; --k) {
        long long q = row / g->kl[k];
        long long c = row - q * g->kl[k];
        a += c * g->kxs[k];
        b += c * g->kys[k];
        row = q;
    }
    *xo = a;
    *yo = b;
}

/* ---- results ------------------------------------------------------------------------------ */
CK_DEVICE void rd_store(void *y, long long off, rd_state s, const rd_geom *g)
{
#if RD_IS_ARG
    (void)g;
    ((int32_t *)y)[off] = (int32_t)s.i;
#else
    rd_acc r = s.v;
#if RD_OP == 1
    r = r / (rd_acc)g->n; /* 0 / 0 = NaN for an empty reduction, as PyTorch */
#elif RD_OP == 5
    r = RD_SQRT_(r);
#endif
#if RD_SCALE
    r = r * (rd_acc)g->scale;
#else
    (void)g;
#endif
#if RD_SQRT
    r = RD_SQRT_(r);
#endif
#if RD_TO == CK_NC_F32
    ((float *)y)[off] = (float)r;
#elif RD_TO == CK_NC_F64
    ((double *)y)[off] = (double)r;
#elif RD_TO == CK_NC_F16 || RD_TO == CK_NC_BF16
#if RD_ACC64
    ((uint16_t *)y)[off] = (uint16_t)ck_nc_from_f64(RD_TO, r, CK_NC_ROUND_NEAREST_EVEN, CK_NC_NONSAT, 0);
#else
    ((uint16_t *)y)[off] = (uint16_t)ck_nc_from_f32(RD_TO, r, CK_NC_ROUND_NEAREST_EVEN, CK_NC_NONSAT, 0);
#endif
#else /* fp8: saturate (OCP satfinite) */
#if RD_ACC64
    ((uint8_t *)y)[off] = (uint8_t)ck_nc_from_f64(RD_TO, r, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
#else
    ((uint8_t *)y)[off] = (uint8_t)ck_nc_from_f32(RD_TO, r, CK_NC_ROUND_NEAREST_EVEN, CK_NC_SATURATE, 0);
#endif
#endif
#endif
}

/* Workspace of a split instance: values [parts][rows] then indices [parts][rows]. */
CK_DEVICE void rd_put_part(void *ws, const rd_geom *g, long long part, long long row, rd_state s)
{
    long long at = part * g->rows + row;
    ((rd_acc *)ws)[at] = s.v;
#if RD_IS_ARG
    ((long long *)((rd_acc *)ws + g->parts * g->rows))[at] = s.i;
#endif
}

CK_DEVICE rd_state rd_get_part(const void *ws, const rd_geom *g, long long part, long long row)
{
    long long at = part * g->rows + row;
    rd_state s;
    s.v = ((const rd_acc *)ws)[at];
#if RD_IS_ARG
    s.i = ((const long long *)((const rd_acc *)ws + g->parts * g->rows))[at];
#else
    s.i = 0;
#endif
    return s;
}

#if RD_KIND == 0
/* ---- row instance --------------------------------------------------------------------------- */
CK_DEVICE void rd_row(void *y, const void *x, void *ws, const rd_geom *g)
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
#if RD_VB > 0
    const char *xr = (const char *)x + xoff * RD_ISZ;
    const long long step = (long long)RD_G * RD_V;
    long long end = lo + ((hi - lo) / RD_V) * RD_V; /* end of the whole vectors */
    long long i = lo + (long long)lt * RD_V;
    for (; i + (RD_U - 1) * step < end; i += RD_U * step) {
        uint32_t w[RD_U][4];
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
#else
    for (long long j = lo + lt; j < hi; j += RD_G)
        rd_add(&s[0], rd_val(rd_ld1(x, xoff + rd_red_off(g, j))), j);
#endif
    rd_state r = s[0];
    CK_UNROLL for (int k = 1; k < RD_V; ++k) r = rd_comb(r, s[k]);
    r = rd_warp(r);
#if RD_G > 32
    if (ck_lane_id() == 0) {
        rd_sv[t / 32] = r.v;
        rd_si[t / 32] = r.i;
    }
    ck_sync_threads();
    if (t == 0) {
        for (int w = 1; w < RD_G / 32; ++w) {
            rd_state o;
            o.v = rd_sv[w];
            o.i = rd_si[w];
            r = rd_comb(r, o);
        }
    }
#else
    (void)rd_sv;
    (void)rd_si;
#endif
    if (lt == 0 && valid) {
        if (g->parts > 1)
            rd_put_part(ws, g, part, row, r);
        else
            rd_store(y, yoff, r, g);
    }
}
#endif

#if RD_KIND == 1
/* ---- column instance ------------------------------------------------------------------------ */
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
    long long c0 = (cb * RD_CT + tx) * RD_V;
    long long lo = part * g->seg, hi = lo + g->seg < g->n ? lo + g->seg : g->n;
    rd_state s[RD_V];
    CK_UNROLL for (int k = 0; k < RD_V; ++k) s[k] = rd_init();
    if (c0 + RD_V <= g->m) {
        const char *base = (const char *)x + (xo + c0) * RD_ISZ;
        long long j = lo + ty;
        for (; j + (RD_U - 1) * RD_RT < hi; j += RD_U * RD_RT) {
            uint32_t w[RD_U][4];
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
    const int cols = RD_CT * RD_V;
    rd_acc *sv = (rd_acc *)ck_dynamic_shared();
    long long *si = (long long *)(sv + RD_RT * cols);
    CK_UNROLL for (int k = 0; k < RD_V; ++k)
    {
        sv[ty * cols + tx * RD_V + k] = s[k].v;
#if RD_IS_ARG
        si[ty * cols + tx * RD_V + k] = s[k].i;
#else
        (void)si;
#endif
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

#if RD_KIND == 2
/* ---- combine the parts of a split instance, in part order --------------------------------- */
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

#endif
