/*
 * Direct depthwise convolution (G = C = K, one channel per group), NHWGC: channels innermost,
 * so a thread owns DW_VEC adjacent channels (one 16-byte access of 16-bit types) and a strip of
 * DW_S outputs along the innermost spatial dim W. For each filter row (z, y) it walks the
 * strip's DW_L input columns once, each loaded once and used by every (output, tap) pair that
 * reads it -- the pairs are resolved at compile time, so only one input vector is live -- and
 * accumulates in f32. The block stages its DW_TCH channels' filter taps in shared memory as
 * f32 [tap][channel] (W's channels of a block are one contiguous run). Backward data runs one
 * launch per residue class of the stride (conv's classes) as the forward convolution of dY with
 * the class's taps, flipped (DW_FLIP), its outputs stored at DW_DOFF + o * DW_DSTR of dX.
 *
 * src/ops/conv/depthwise.c generates the #defines (the parameter table) and the kernel entry:
 *   DW_XT DW_WT DW_YT DW_RT DW_BT   element types (ck_dtype codes: CK_NC_*)
 *   DW_N DW_G                       batch, channels
 *   DW_SRC0..2 DW_DST0..2           spatial lengths of the gathered (X / dY) and written tensor
 *   DW_FIL0..2 DW_STR0..2 DW_DIL0..2 DW_PL0..2   kernel taps, stride, dilation, left padding:
 *                                   the written position o reads o * STR + k * DIL - PL
 *   DW_WF0..2 DW_F00..2 DW_FT0..2   the filter's lengths; kernel tap k is its tap F0 + k * FT
 *                                   (DW_FLIP: F0 + (FIL - 1 - k) * FT)
 *   DW_OUTL0..2 DW_DSTR0..2 DW_DOFF0..2   the written tensor's lengths; o is stored at
 *                                   DOFF + o * DSTR (forward: 0 + o * 1)
 *   DW_FLIP DW_BIAS DW_RES DW_ACT   epilogue: act(alpha * acc + residual + bias), then the cast
 *   DW_VEC DW_TCT DW_TR DW_S DW_THREADS   instance: channels per thread, threads along the
 *                                   channels, strips per block, outputs per strip, threads
 */
#include "ck_block.h"
#include "ops/conv/dw_args_kernel.h"
#include "ops/elementwise/ew_kernel.h"

#define DW_TCH        (DW_TCT * DW_VEC)
#define DW_TAPS       (DW_FIL0 * DW_FIL1 * DW_FIL2)
#define DW_L          ((DW_S - 1) * DW_STR2 + (DW_FIL2 - 1) * DW_DIL2 + 1)
#define DW_STRIPS_ROW ((DW_DST2 + DW_S - 1) / DW_S)

/* kernel tap k of dim d for the filter's tap f (its class: f = f0 + k' ft, k' < fil; flip:
 * k = fil - 1 - k'), or -1 when f is not one of the class's taps */
CK_DEVICE int dw_tap_of(long long f, long long f0, long long ft, long long fil)
{
    if (f < f0 || (f - f0) % ft != 0 || (f - f0) / ft >= fil)
        return -1;
    return (int)(DW_FLIP ? fil - 1 - (f - f0) / ft : (f - f0) / ft);
}

/* The block's filter: channels cb .. cb + DW_TCH - 1 (one contiguous run of W) as f32
 * [kernel tap][channel], the filter's taps that are not the class's left out. */
CK_DEVICE void dw_stage_filter(const void *w, long long cb, float *sw)
{
    const int wtaps = DW_WF0 * DW_WF1 * DW_WF2;
    const long long base = cb * wtaps, total = (long long)DW_G * wtaps;
    for (int e = (int)ck_thread_linear(); e < DW_TCH * wtaps; e += DW_THREADS) {
        const int ch = e / wtaps, f = e % wtaps;
        const int k0 = dw_tap_of(f / (DW_WF1 * DW_WF2), DW_F00, DW_FT0, DW_FIL0);
        const int k1 = dw_tap_of(f / DW_WF2 % DW_WF1, DW_F01, DW_FT1, DW_FIL1);
        const int k2 = dw_tap_of(f % DW_WF2, DW_F02, DW_FT2, DW_FIL2);
        if (k0 >= 0 && k1 >= 0 && k2 >= 0)
            sw[((k0 * DW_FIL1 + k1) * DW_FIL2 + k2) * DW_TCH + ch] =
                base + e < total ? ck_load_f32(w, base + e, DW_WT) : 0.0f;
    }
}

CK_DEVICE float dw_act(float v)
{
#if DW_ACT == 1
    v = ew_relu_f32(v);
#elif DW_ACT == 2
    v = ew_gelu_tanh_f32(v);
#elif DW_ACT == 3
    v = ew_gelu_erf_f32(v);
#elif DW_ACT == 4
    v = ew_silu_f32(v);
#elif DW_ACT == 5
    v = ew_sigmoid_f32(v);
#endif
    return v;
}

/* act(alpha * acc + residual + bias) of DW_VEC channels at element `at`, cast and stored */
CK_DEVICE void dw_store(const ck_conv_dw_kargs *ka, long long at, long long c, float *acc)
{
    float r[DW_VEC], b[DW_VEC];
#if DW_RES
    ck_load_f32v((const char *)ka->residual + at * ck_dtype_size(DW_RT), DW_RT, DW_VEC, r);
#endif
#if DW_BIAS
    ck_load_f32v_elems((const char *)ka->bias + c * ck_dtype_size(DW_BT), DW_BT, DW_VEC, b);
#endif
    CK_UNROLL for (int e = 0; e < DW_VEC; ++e)
    {
        float v = ka->alpha * acc[e];
        (void)r, (void)b, (void)c;
#if DW_RES
        v += r[e];
#endif
#if DW_BIAS
        v += b[e];
#endif
        acc[e] = dw_act(v);
    }
    ck_store_f32v((char *)ka->y + at * ck_dtype_size(DW_YT), DW_YT, DW_VEC, acc);
}

CK_DEVICE void dw_tile(const ck_conv_dw_kargs *ka)
{
    float *sw = (float *)ck_dynamic_shared();
    const long long cb = (long long)ck_block_idx_y() * DW_TCH;
    dw_stage_filter(ka->w, cb, sw);
    ck_sync_threads();
    const int tc = (int)ck_thread_linear() % DW_TCT; /* channels fastest: coalesced rows */
    const long long c = cb + tc * DW_VEC;
    long long strip = (long long)ck_block_idx_x() * DW_TR + (int)ck_thread_linear() / DW_TCT;
    if (c >= DW_G || strip >= (long long)DW_N * DW_DST0 * DW_DST1 * DW_STRIPS_ROW)
        return;
    const long long o2 = strip % DW_STRIPS_ROW * DW_S, r = strip / DW_STRIPS_ROW;
    const long long o1 = r % DW_DST1, o0 = r / DW_DST1 % DW_DST0, n = r / DW_DST1 / DW_DST0;
    const long long i2 = o2 * DW_STR2 - DW_PL2; /* the strip's first input column */
    const int es = ck_dtype_size(DW_XT);
    float acc[DW_S][DW_VEC];
    CK_UNROLL for (int s = 0; s < DW_S; ++s)
    {
        CK_UNROLL for (int e = 0; e < DW_VEC; ++e) acc[s][e] = 0.0f;
    }
    for (int f0 = 0; f0 < DW_FIL0; ++f0) {
        const long long i0 = o0 * DW_STR0 + f0 * DW_DIL0 - DW_PL0;
        if (i0 < 0 || i0 >= DW_SRC0)
            continue;
        for (int f1 = 0; f1 < DW_FIL1; ++f1) {
            const long long i1 = o1 * DW_STR1 + f1 * DW_DIL1 - DW_PL1;
            if (i1 < 0 || i1 >= DW_SRC1)
                continue;
            /* this filter row's taps for the thread's channels, then the input row's columns */
            float wr[DW_FIL2][DW_VEC];
            const float *ws = sw + (f0 * DW_FIL1 + f1) * DW_FIL2 * DW_TCH + tc * DW_VEC;
            CK_UNROLL for (int f2 = 0; f2 < DW_FIL2; ++f2)
            {
                CK_UNROLL for (int e = 0; e < DW_VEC; ++e) wr[f2][e] = ws[f2 * DW_TCH + e];
            }
            const char *row = (const char *)ka->x +
                              (((n * DW_SRC0 + i0) * DW_SRC1 + i1) * DW_SRC2 * DW_G + c) * es;
            CK_UNROLL for (int j = 0; j < DW_L; ++j)
            {
                float v[DW_VEC];
                const long long i = i2 + j;
                if (i >= 0 && i < DW_SRC2) {
                    ck_load_f32v(row + i * DW_G * es, DW_XT, DW_VEC, v);
                } else {
                    CK_UNROLL for (int e = 0; e < DW_VEC; ++e) v[e] = 0.0f;
                }
                /* every output s of the strip whose tap f2 reads column j */
                CK_UNROLL for (int s = 0; s < DW_S; ++s)
                {
                    const int d = j - s * DW_STR2;
                    if (d < 0 || d % DW_DIL2 != 0 || d / DW_DIL2 >= DW_FIL2)
                        continue;
                    CK_UNROLL for (int e = 0; e < DW_VEC; ++e)
                    {
                        acc[s][e] = fmaf(v[e], wr[d / DW_DIL2][e], acc[s][e]);
                    }
                }
            }
        }
    }
    /* position o of the written rows is doff + o * dstr of the written tensor */
    const long long w0 = DW_DOFF0 + o0 * DW_DSTR0, w1 = DW_DOFF1 + o1 * DW_DSTR1,
                    w2 = DW_DOFF2 + o2 * DW_DSTR2;
    const long long at = (((n * DW_OUTL0 + w0) * DW_OUTL1 + w1) * DW_OUTL2 + w2) * DW_G + c;
    CK_UNROLL for (int s = 0; s < DW_S; ++s)
    {
        if (o2 + s < DW_DST2)
            dw_store(ka, at + s * DW_DSTR2 * DW_G, c, acc[s]);
    }
}
