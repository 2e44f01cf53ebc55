/*
 * Depthwise backward weight (G = C = K): dW[g, f] = alpha * sum_{n, o} dY[n, o, g] X[n, o s + f d
 * - pl, g], a reduction over N * out per channel and tap, deterministic -- fixed-order partial
 * sums, no atomics -- in two kernels:
 *
 *   dw_wgrad_partial  grid (filter rows (z, y), channel blocks, lane blocks): a thread owns
 *                     DW_VEC channels and walks the strips of DW_S outputs along W numbered
 *                     lane, lane + lanes, ... (lanes = gridDim.z * DW_TR); per strip it holds
 *                     the strip's dY vectors and walks the DW_L input columns of its filter row
 *                     once, adding dY[s] X[j] to the tap j - s * stride reads (resolved at
 *                     compile time). The block's DW_TR threads of one channel vector then add
 *                     their sums in thread order (through shared memory, one tap at a time) and
 *                     write the block's partial: ws[lane block][tap][g] (f32).
 *   dw_wgrad_sum      one thread per (tap, g): the partials of every lane block in order, times
 *                     alpha, cast to dW (GKYXC: g * taps + tap).
 *
 * The #defines are the forward's (dw_pipeline_kernel.h: DW_SRC = X's lengths, DW_DST = dY's)
 * plus DW_LANE_BLOCKS (the partials per channel and tap).
 */
#include "ck_block.h"
#include "ops/conv/dw_args_kernel.h"

#define DW_TCH        (DW_TCT * DW_VEC)
#define DW_TAPS       (DW_FIL0 * DW_FIL1 * DW_FIL2)
#define DW_L          ((DW_S - 1) * DW_STR2 + (DW_FIL2 - 1) * DW_DIL2 + 1)
#define DW_STRIPS_ROW ((DW_DST2 + DW_S - 1) / DW_S)

CK_DEVICE void dw_wgrad_partial(const ck_conv_dw_kargs *ka, float *ws)
{
    float *red = (float *)ck_dynamic_shared(); /* [DW_TR][DW_TCH] */
    const int tc = (int)ck_thread_linear() % DW_TCT, tr = (int)ck_thread_linear() / DW_TCT;
    const long long c = (long long)ck_block_idx_y() * DW_TCH + tc * DW_VEC;
    const int f0 = (int)ck_block_idx_x() / DW_FIL1, f1 = (int)ck_block_idx_x() % DW_FIL1;
    const long long lanes = (long long)DW_LANE_BLOCKS * DW_TR;
    const long long strips = (long long)DW_N * DW_DST0 * DW_DST1 * DW_STRIPS_ROW;
    const int es = ck_dtype_size(DW_XT), ey = ck_dtype_size(DW_YT);
    float acc[DW_FIL2][DW_VEC];
    CK_UNROLL for (int f2 = 0; f2 < DW_FIL2; ++f2)
    {
        CK_UNROLL for (int e = 0; e < DW_VEC; ++e) acc[f2][e] = 0.0f;
    }
    long long strip = c < DW_G ? (long long)ck_block_idx_z() * DW_TR + tr : strips;
    for (; strip < strips; strip += lanes) {
        const long long o2 = strip % DW_STRIPS_ROW * DW_S, r = strip / DW_STRIPS_ROW;
        const long long o1 = r % DW_DST1, o0 = r / DW_DST1 % DW_DST0, n = r / DW_DST1 / DW_DST0;
        const long long i0 = o0 * DW_STR0 + f0 * DW_DIL0 - DW_PL0;
        const long long i1 = o1 * DW_STR1 + f1 * DW_DIL1 - DW_PL1;
        if (i0 < 0 || i0 >= DW_SRC0 || i1 < 0 || i1 >= DW_SRC1)
            continue;
        /* the strip's dY vectors (zero past the row's end) */
        float dy[DW_S][DW_VEC];
        const char *yrow =
            (const char *)ka->y + (((n * DW_DST0 + o0) * DW_DST1 + o1) * DW_DST2 * DW_G + c) * ey;
        CK_UNROLL for (int s = 0; s < DW_S; ++s)
        {
            if (o2 + s < DW_DST2) {
                ck_load_f32v(yrow + (o2 + s) * DW_G * ey, DW_YT, DW_VEC, dy[s]);
            } else {
                CK_UNROLL for (int e = 0; e < DW_VEC; ++e) dy[s][e] = 0.0f;
            }
        }
        const long long i2 = o2 * DW_STR2 - DW_PL2;
        const char *xrow =
            (const char *)ka->x + (((n * DW_SRC0 + i0) * DW_SRC1 + i1) * DW_SRC2 * DW_G + c) * es;
        CK_UNROLL for (int j = 0; j < DW_L; ++j)
        {
            const long long i = i2 + j;
            float v[DW_VEC];
            if (i >= 0 && i < DW_SRC2) {
                ck_load_f32v(xrow + i * DW_G * es, DW_XT, DW_VEC, v);
            } else {
                CK_UNROLL for (int e = 0; e < DW_VEC; ++e) v[e] = 0.0f;
            }
            CK_UNROLL for (int s = 0; s < DW_S; ++s)
            {
                const int d = j - s * DW_STR2;
                if (d < 0 || d % DW_DIL2 != 0 || d / DW_DIL2 >= DW_FIL2)
                    continue;
                CK_UNROLL for (int e = 0; e < DW_VEC; ++e)
                {
                    acc[d / DW_DIL2][e] = fmaf(dy[s][e], v[e], acc[d / DW_DIL2][e]);
                }
            }
        }
    }
    /* the block's sum over its DW_TR threads of each channel vector, in thread order */
    const int tap0 = (f0 * DW_FIL1 + f1) * DW_FIL2;
    CK_UNROLL for (int f2 = 0; f2 < DW_FIL2; ++f2) /* unrolled: acc stays in registers */
    {
        CK_UNROLL for (int e = 0; e < DW_VEC; ++e) red[tr * DW_TCH + tc * DW_VEC + e] = acc[f2][e];
        ck_sync_threads();
        if (tr == 0 && c < DW_G) {
            float sum[DW_VEC];
            CK_UNROLL for (int e = 0; e < DW_VEC; ++e) sum[e] = red[tc * DW_VEC + e];
            for (int t = 1; t < DW_TR; ++t)
                CK_UNROLL for (int e = 0; e < DW_VEC; ++e) sum[e] +=
                    red[t * DW_TCH + tc * DW_VEC + e];
            float *out = ws + ((long long)ck_block_idx_z() * DW_TAPS + tap0 + f2) * DW_G + c;
            CK_UNROLL for (int e = 0; e < DW_VEC; ++e) out[e] = sum[e];
        }
        ck_sync_threads();
    }
}

CK_DEVICE void dw_wgrad_sum(const ck_conv_dw_kargs *ka, const float *ws)
{
    const long long t = (long long)ck_block_idx_x() * ck_block_threads() + ck_thread_linear();
    if (t >= (long long)DW_G * DW_TAPS)
        return;
    const long long g = t % DW_G, tap = t / DW_G; /* g fastest: the partials' rows coalesce */
    float sum = 0.0f;
    for (int b = 0; b < DW_LANE_BLOCKS; ++b)
        sum += ws[((long long)b * DW_TAPS + tap) * DW_G + g];
    ck_store_f32((void *)ka->w, g * DW_TAPS + tap, DW_WT, ka->alpha * sum);
}
