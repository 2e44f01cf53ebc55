/*
 * Device code of ck_reduce shared by its three pipelines (the source src/ops/reduce/params.c
 * generates defines the constants below, then includes the pipeline of its kernel):
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
 * RD_CT, RD_RT, RD_ARG_SCAN (row argmax/argmin: the branch-free fold of the vectors,
 * reduce_row_kernel.h), RD_LAST_FOLD (a split row's last block combines the parts), and RD_ACC_T (rd_acc's C type: double or float). Every branch on them is a
 * constant condition the compiler folds; the generator picks the pipeline
 * (reduce_row_kernel.h, reduce_col_kernel.h, reduce_combine_kernel.h).
 */
#ifndef CK_OPS_REDUCE_KERNEL_H
#define CK_OPS_REDUCE_KERNEL_H

#include "ck_block.h"
#include "ops/reduce/reduce_geom_kernel.h"

typedef RD_ACC_T rd_acc; /* double when RD_ACC64, else float (from the generator) */

#define RD_IS_ARG  (RD_OP == 6 || RD_OP == 7)
#define RD_IS_MAX  (RD_OP == 2 || RD_OP == 6)
#define RD_IS_MIN  (RD_OP == 3 || RD_OP == 7)
#define RD_IS_SQ   (RD_OP == 4 || RD_OP == 5)
#define RD_NOIDX   0x7fffffffffffffffLL

/* bytes of an x element; elements per vector access */
#define RD_ISZ                                                                                     \
    (RD_TI == CK_NC_F64                           ? 8                                              \
     : RD_TI == CK_NC_F32 || RD_TI == CK_NC_I32   ? 4                                              \
     : RD_TI == CK_NC_F16 || RD_TI == CK_NC_BF16 ? 2                                              \
                                                   : 1)
#define RD_V (RD_VB > 0 ? RD_VB / RD_ISZ : 1)

CK_DEVICE rd_acc rd_sqrt(rd_acc v)
{
    return RD_ACC64 ? (rd_acc)sqrt((double)v) : (rd_acc)sqrtf((float)v);
}

CK_DEVICE rd_acc rd_abs(rd_acc v)
{
    return RD_ACC64 ? (rd_acc)fabs((double)v) : (rd_acc)fabsf((float)v);
}

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
    if (RD_PRE == 1)
        v = rd_abs(v);
    else if (RD_PRE == 2)
        v = v * v;
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
    s.v = RD_IS_MAX   ? (rd_acc)-ck_u32_as_f32(0x7f800000u)
          : RD_IS_MIN ? (rd_acc)ck_u32_as_f32(0x7f800000u)
                      : (rd_acc)0;
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
    if (RD_IS_MAX ? bv > av : bv < av)
        return 1;
    return bv == av && bi < ai;
}

/* Fold element value v (after the pre-op) with flat index i into s. */
CK_DEVICE void rd_add(rd_state *s, rd_acc v, long long i)
{
    if (RD_IS_ARG) {
        if (rd_better(v, i, s->v, s->i)) {
            s->v = v;
            s->i = i;
        }
    } else if (RD_IS_MAX) {
        if (v > s->v || v != v)
            s->v = v;
    } else if (RD_IS_MIN) {
        if (v < s->v || v != v)
            s->v = v;
    } else if (RD_IS_SQ) {
        s->v = s->v + v * v;
    } else {
        s->v = s->v + v;
    }
}

CK_DEVICE rd_state rd_comb(rd_state a, rd_state b)
{
    if (RD_IS_ARG) {
        if (rd_better(b.v, b.i, a.v, a.i))
            return b;
    } else if (RD_IS_MAX) {
        if (b.v > a.v || b.v != b.v)
            a.v = b.v;
    } else if (RD_IS_MIN) {
        if (b.v < a.v || b.v != b.v)
            a.v = b.v;
    } else {
        a.v = a.v + b.v;
    }
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
        o.i = RD_IS_ARG ? (long long)ck_shfl_xor_u64((uint64_t)s.i, m) : 0;
        /* fixed operand order by lane bit: both lanes compute comb(lower, upper) */
        s = (ck_lane_id() & m) ? rd_comb(o, s) : rd_comb(s, o);
    }
    return s;
}

/* ---- addressing ------------------------------------------------------------------------- */
CK_DEVICE uint64_t rd_ld1(const void *x, long long e)
{
    if (RD_ISZ == 8)
        return ((const uint64_t *)x)[e];
    if (RD_ISZ == 4)
        return ((const uint32_t *)x)[e];
    if (RD_ISZ == 2)
        return ((const uint16_t *)x)[e];
    return ((const uint8_t *)x)[e];
}

/* One RD_VB-byte vector (the block library's widest aligned access). */
CK_DEVICE void rd_ldv(const char *p, uint32_t *w)
{
    ck_ld_words(p, RD_VB, w);
}

CK_DEVICE uint64_t rd_elem(const uint32_t *w, int k)
{
    if (RD_ISZ == 8)
        return (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
    if (RD_ISZ == 4)
        return w[k];
    if (RD_ISZ == 2)
        return (w[k >> 1] >> ((k & 1) * 16)) & 0xffffu;
    return (w[k >> 2] >> ((k & 3) * 8)) & 0xffu;
}

/* Offset in x of flat reduced index j. */
CK_DEVICE long long rd_red_off(const rd_geom *g, long long j)
{
    if (RD_RD == 1)
        return j * g->rxs[0];
    long long o = 0;
    CK_UNROLL for (int r = RD_RD - 1; r >= 0; --r)
    {
        long long q = j / g->rl[r];
        o += (j - q * g->rl[r]) * g->rxs[r];
        j = q;
    }
    return o;
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
    if (RD_IS_ARG) {
        ((int32_t *)y)[off] = (int32_t)s.i;
        return;
    }
    rd_acc r = s.v;
    if (RD_OP == 1)
        r = r / (rd_acc)g->n; /* 0 / 0 = NaN for an empty reduction, as PyTorch */
    else if (RD_OP == 5)
        r = rd_sqrt(r);
    if (RD_SCALE)
        r = r * (rd_acc)g->scale;
    if (RD_SQRT)
        r = rd_sqrt(r);
    /* 16-bit types round to nearest even; fp8 saturates (OCP satfinite) */
    const int sat = RD_TO == CK_NC_F16 || RD_TO == CK_NC_BF16 ? CK_NC_NONSAT : CK_NC_SATURATE;
    if (RD_TO == CK_NC_F32)
        ((float *)y)[off] = (float)r;
    else if (RD_TO == CK_NC_F64)
        ((double *)y)[off] = (double)r;
    else {
        uint32_t code = RD_ACC64 ? (uint32_t)ck_nc_from_f64(RD_TO, (double)r, CK_NC_ROUND_NEAREST_EVEN, sat, 0)
                                 : (uint32_t)ck_nc_from_f32(RD_TO, (float)r, CK_NC_ROUND_NEAREST_EVEN, sat, 0);
        if (RD_TO == CK_NC_F16 || RD_TO == CK_NC_BF16)
            ((uint16_t *)y)[off] = (uint16_t)code;
        else
            ((uint8_t *)y)[off] = (uint8_t)code;
    }
}

/* Workspace of a split instance: values [parts][rows] then indices [parts][rows]. */
CK_DEVICE void rd_put_part(void *ws, const rd_geom *g, long long part, long long row, rd_state s)
{
    long long at = part * g->rows + row;
    ((rd_acc *)ws)[at] = s.v;
    if (RD_IS_ARG)
        ((long long *)((rd_acc *)ws + g->parts * g->rows))[at] = s.i;
}

CK_DEVICE rd_state rd_get_part(const void *ws, const rd_geom *g, long long part, long long row)
{
    long long at = part * g->rows + row;
    rd_state s;
    s.v = ((const rd_acc *)ws)[at];
    s.i = RD_IS_ARG ? ((const long long *)((const rd_acc *)ws + g->parts * g->rows))[at] : 0;
    return s;
}

#endif
