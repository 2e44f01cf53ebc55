/*
 * ck_reduction.h - the block library's reductions of per-thread partial results (part of
 * ck_block.h): lanes -> group of threads -> cluster of blocks, for
 *   CK_RED_SUM     a + b
 *   CK_RED_MAX     fmaxf (a NaN loses to a number)
 *   CK_RED_NANMAX  the larger, NaN wins
 *   ck_welford     (count, mean, M2) states merged by Chan's formula
 *   ck_ml          online-softmax pairs (m, l): l a sum of exp2(u - m), merged at the common
 *                  maximum (reference 5.12-5.13; a part with m = -inf counts 0)
 * and the 64-bit lane exchanges ck_shfl_xor_u64 / ck_shfl_xor_f64 (reductions of f64 values or
 * (value, index) pairs build their butterflies on them).
 *
 * A "group" is `g` threads (a power of two) working on one row: aligned lane groups of a warp
 * when g <= 32, else the whole block (g == the block's threads). Lane butterflies run the xor
 * masks g/2 .. 1 with the lower lane's value first, so every thread of the group gets the same
 * bits. Group reductions with g > 32 exchange the warps' results through `sh` (one barrier;
 * 32 floats per float reduced: 32 for f32, 64 for ck_ml and ck_group_sum2_f32, 96 for
 * ck_welford), after which lane l
 * of every warp reads warp l mod (g / 32)'s result and a butterfly finishes. A caller that
 * reduces again alternates two such buffers (one is rewritten only after the next barrier).
 *
 * Cluster exchange (st.async, no cluster barrier in a row's path): every block of a cluster
 * receives every block's value into its own shared slots, completing on its own mbarrier, and
 * combines them in rank order, so every block computes the same bits. Each exchange has its own
 * mbarrier, used once per kernel:
 *   ck_cluster_exchange_init(bars, bytes, n)   all threads (thread 0 arms barrier i for bytes[i],
 *                                              the bytes all ranks send it); starts a split
 *                                              cluster barrier: call ck_cluster_wait() before the
 *                                              first exchange (the loads overlap it)
 *   ck_cluster_exchange(v, n, slot, stride, bar, tid, clusters)   thread tid < clusters of each
 *                                              block stores the block's n <= 3 floats v into
 *                                              slot + stride * rank of block tid; then every
 *                                              thread waits for its block's slots
 *   ck_cluster_reduce_f32 / ck_cluster_ml / ck_cluster_welford   exchange and combine
 */
#ifndef CK_DEVICE_CK_REDUCTION_H
#define CK_DEVICE_CK_REDUCTION_H

#include "ck_device.h"

#define CK_RED_SUM    0
#define CK_RED_MAX    1
#define CK_RED_NANMAX 2

CK_DEVICE float ck_neg_inf_f32(void)
{
    return ck_u32_as_f32(0xff800000u);
}

/* The larger of a and b; a NaN (a's first) wins. */
CK_DEVICE float ck_nanmax_f32(float a, float b)
{
    return (a != a || a > b) ? a : b;
}

CK_DEVICE float ck_red_op_f32(float a, float b, int op)
{
    return op == CK_RED_SUM ? a + b : op == CK_RED_MAX ? fmaxf(a, b) : ck_nanmax_f32(a, b);
}

/* ---- 64-bit lane exchange (f64 partial sums, argmax indices) ------------------------------ */

CK_DEVICE uint64_t ck_shfl_xor_u64(uint64_t v, unsigned m)
{
    uint32_t lo = ck_shfl_xor_u32((uint32_t)v, m), hi = ck_shfl_xor_u32((uint32_t)(v >> 32), m);
    return ((uint64_t)hi << 32) | lo;
}

CK_DEVICE double ck_shfl_xor_f64(double v, unsigned m)
{
    return ck_nc_bits_f64(ck_shfl_xor_u64(ck_nc_f64_bits(v), m));
}

/* ---- f32 ------------------------------------------------------------------------------------ */

/* Over the aligned groups of `width` lanes (a power of two <= 32). */
CK_DEVICE float ck_lanes_reduce_f32(float v, int op, unsigned width)
{
    for (unsigned m = width / 2; m >= 1; m /= 2)
        v = ck_red_op_f32(v, ck_shfl_xor_f32(v, m), op);
    return v;
}

/* Over a group of g threads (see the top); sh: 32 floats of shared memory when g > 32. */
CK_DEVICE float ck_group_reduce_f32(float v, int op, unsigned g, float *sh)
{
    v = ck_lanes_reduce_f32(v, op, g < 32 ? g : 32);
    if (g > 32) {
        if (ck_lane_id() == 0)
            sh[ck_warp_id()] = v;
        ck_sync_threads();
        v = ck_lanes_reduce_f32(sh[ck_lane_id() % (g / 32)], op, g / 32);
    }
    return v;
}

/* The sums of two values over a group of g threads in one exchange (one barrier when g > 32;
 * each sum has the bits ck_group_reduce_f32 gives it); sh: 64 floats when g > 32. */
CK_DEVICE void ck_group_sum2_f32(float *a, float *b, unsigned g, float *sh)
{
    for (unsigned m = (g < 32 ? g : 32) / 2; m >= 1; m /= 2) {
        float oa = ck_shfl_xor_f32(*a, m), ob = ck_shfl_xor_f32(*b, m);
        *a = *a + oa;
        *b = *b + ob;
    }
    if (g > 32) {
        if (ck_lane_id() == 0) {
            sh[ck_warp_id()] = *a;
            sh[32 + ck_warp_id()] = *b;
        }
        ck_sync_threads();
        *a = ck_lanes_reduce_f32(sh[ck_lane_id() % (g / 32)], CK_RED_SUM, g / 32);
        *b = ck_lanes_reduce_f32(sh[32 + ck_lane_id() % (g / 32)], CK_RED_SUM, g / 32);
    }
}

/* ---- online-softmax pairs (m, l) ------------------------------------------------------------- */

/* exp2(m_part - m): rescales a part's sum relative to m_part to the common maximum m (>= m_part).
 * A part that saw only -inf contributes 0 (its sum is 0, or NaN which survives). */
CK_DEVICE float ck_ml_rescale(float m_part, float m)
{
    return m_part == ck_neg_inf_f32() ? 0.0f : exp2f(m_part - m);
}

/* m as the offset of the exponents: a maximum of -inf (nothing seen, or all -inf) counts as 0,
 * so -inf entries give exp2(-inf) = 0 rather than NaN; NaN still propagates. */
CK_DEVICE float ck_ml_offset(float m)
{
    return m == ck_neg_inf_f32() ? 0.0f : m;
}

/* (m, l) merged with (m2, l2). */
CK_DEVICE void ck_ml_merge(float *m, float *l, float m2, float l2)
{
    float mn = fmaxf(*m, m2);
    *l = *l * ck_ml_rescale(*m, mn) + l2 * ck_ml_rescale(m2, mn);
    *m = mn;
}

CK_DEVICE void ck_lanes_ml(float *m, float *l, unsigned width)
{
    for (unsigned o = width / 2; o >= 1; o /= 2) {
        float m2 = ck_shfl_xor_f32(*m, o), l2 = ck_shfl_xor_f32(*l, o);
        ck_ml_merge(m, l, m2, l2);
    }
}

/* sh: 64 floats when g > 32. */
CK_DEVICE void ck_group_ml(float *m, float *l, unsigned g, float *sh)
{
    ck_lanes_ml(m, l, g < 32 ? g : 32);
    if (g > 32) {
        if (ck_lane_id() == 0) {
            sh[2 * ck_warp_id()] = *m;
            sh[2 * ck_warp_id() + 1] = *l;
        }
        ck_sync_threads();
        unsigned w = ck_lane_id() % (g / 32);
        *m = sh[2 * w];
        *l = sh[2 * w + 1];
        ck_lanes_ml(m, l, g / 32);
    }
}

/* ---- Welford / Chan states --------------------------------------------------------------------
 */

typedef struct ck_welford {
    float n, mean, m2; /* count, mean, sum of squared deviations from the mean */
} ck_welford;

/* a (the lower-numbered part) merged with b. */
CK_DEVICE ck_welford ck_welford_merge(ck_welford a, ck_welford b)
{
    ck_welford r;
    r.n = a.n + b.n;
    if (r.n == 0.0f)
        return a;
    float delta = b.mean - a.mean, fb = b.n / r.n;
    r.mean = a.mean + delta * fb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * fb;
    return r;
}

/* The same bits as ck_welford_merge for parts of equal count (b.n / r.n is exactly 0.5), with
 * no division. */
CK_DEVICE ck_welford ck_welford_merge_even(ck_welford a, ck_welford b)
{
    ck_welford r;
    float delta = b.mean - a.mean;
    r.n = a.n + b.n;
    r.mean = a.mean + delta * 0.5f;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * 0.5f;
    return r;
}

/* s with n more values a[0..n): their own mean and deviations (two passes over registers),
 * then Chan's merge. */
CK_DEVICE ck_welford ck_welford_add(ck_welford s, const float *a, int n)
{
    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
        sum += a[k];
    ck_welford v;
    v.n = (float)n;
    v.mean = sum * (1.0f / (float)n);
    v.m2 = 0.0f;
    for (int k = 0; k < n; ++k) {
        float d = a[k] - v.mean;
        v.m2 = fmaf(d, d, v.m2);
    }
    return ck_welford_merge(s, v);
}

/* even: every lane's state counts as many values. */
CK_DEVICE ck_welford ck_lanes_welford(ck_welford s, unsigned width, int even)
{
    unsigned lane = ck_lane_id();
    for (unsigned m = width / 2; m >= 1; m /= 2) {
        ck_welford o;
        o.n = ck_shfl_xor_f32(s.n, m);
        o.mean = ck_shfl_xor_f32(s.mean, m);
        o.m2 = ck_shfl_xor_f32(s.m2, m);
        ck_welford lo = (lane & m) ? o : s, hi = (lane & m) ? s : o;
        s = even ? ck_welford_merge_even(lo, hi) : ck_welford_merge(lo, hi);
    }
    return s;
}

/* sh: 96 floats when g > 32. */
CK_DEVICE ck_welford ck_group_welford(ck_welford s, unsigned g, int even, float *sh)
{
    s = ck_lanes_welford(s, g < 32 ? g : 32, even);
    if (g > 32) {
        unsigned lane = ck_lane_id(), warp = ck_warp_id();
        if (lane == 0) {
            sh[3 * warp] = s.n;
            sh[3 * warp + 1] = s.mean;
            sh[3 * warp + 2] = s.m2;
        }
        ck_sync_threads();
        unsigned w = lane % (g / 32);
        s.n = sh[3 * w];
        s.mean = sh[3 * w + 1];
        s.m2 = sh[3 * w + 2];
        s = ck_lanes_welford(s, g / 32, even);
    }
    return s;
}

/* ---- cluster exchange (st.async) ---------------------------------------------------------------
 */

CK_DEVICE void ck_cluster_exchange_init(unsigned long long *bars, const unsigned *bytes, int n)
{
    if (ck_thread_idx_x() == 0) {
        for (int i = 0; i < n; ++i) {
            ck_mbar_init(&bars[i], 1);
            (void)ck_mbar_arrive_expect_tx(&bars[i], bytes[i]);
        }
        ck_mbar_fence_init();
    }
    ck_cluster_arrive();
}

CK_DEVICE void ck_cluster_exchange(const float *v, int n, float *slot, unsigned stride,
                                   unsigned long long *bar, unsigned tid, unsigned clusters)
{
    if (tid < clusters) {
        float *dst = slot + stride * ck_cluster_ctarank();
        if (n >= 2)
            ck_st_async_2f32(dst, v[0], v[1], bar, tid);
        if (n == 1 || n == 3)
            ck_st_async_f32(dst + (n - 1), v[n - 1], bar, tid);
    }
    ck_mbar_wait_parity_cluster(bar, 0);
}

/* The cluster's blocks' values v combined by op in rank order (slots: clusters floats). */
CK_DEVICE float ck_cluster_reduce_f32(float v, int op, float *slot, unsigned long long *bar,
                                      unsigned tid, unsigned clusters)
{
    ck_cluster_exchange(&v, 1, slot, 1, bar, tid, clusters);
    v = slot[0];
    for (unsigned r = 1; r < clusters; ++r)
        v = ck_red_op_f32(v, slot[r], op);
    return v;
}

/* slots: 2 * clusters floats. */
CK_DEVICE void ck_cluster_ml(float *m, float *l, float *slot, unsigned long long *bar, unsigned tid,
                             unsigned clusters)
{
    float v[2] = {*m, *l};
    ck_cluster_exchange(v, 2, slot, 2, bar, tid, clusters);
    *m = slot[0];
    *l = slot[1];
    for (unsigned r = 1; r < clusters; ++r)
        ck_ml_merge(m, l, slot[2 * r], slot[2 * r + 1]);
}

/* slots: 4 * clusters floats. */
CK_DEVICE ck_welford ck_cluster_welford(ck_welford s, float *slot, unsigned long long *bar,
                                        unsigned tid, unsigned clusters)
{
    float v[3] = {s.n, s.mean, s.m2};
    ck_cluster_exchange(v, 3, slot, 4, bar, tid, clusters);
    for (unsigned r = 0; r < clusters; ++r) {
        ck_welford o;
        o.n = slot[4 * r];
        o.mean = slot[4 * r + 1];
        o.m2 = slot[4 * r + 2];
        s = r == 0 ? o : ck_welford_merge(s, o);
    }
    return s;
}

#endif /* CK_DEVICE_CK_REDUCTION_H */
