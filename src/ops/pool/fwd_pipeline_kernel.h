/*
 * Forward pooling (src/ops/pool/kernel.c generates the source: the parameter table's #defines,
 * the windows "x" -- over conv's im2col view of the input, (N * out) x (taps * C), filled with
 * POOL_FILL in the padding -- "y" and, with indices, "i" -- over the packed (N * out) x C
 * output -- then this file). One block reduces one POOL_TM x POOL_TC tile over the taps: the
 * view's origin moves by C per tap.
 */
#include "ops/pool/pool_common_kernel.h"

CK_DEVICE void pool_fwd_tile(const POOL_T *x, POOL_T *y, void *ind)
{
    long long m0 = (long long)ck_block_idx_x() * POOL_TM;
    long long c0 = (long long)ck_block_idx_y() * POOL_TC;
    ck_win_x wx = make_win_x((POOL_T *)x, m0, c0);
    POOL_T v[CK_NREGS_x], best[CK_NREGS_x];
    float acc[CK_NREGS_x];
    int arg[CK_NREGS_x];
    for (int r = 0; r < CK_NREGS_x; ++r) {
        best[r] = (POOL_T)POOL_FILL;
        acc[r] = POOL_MAX ? ck_neg_inf_f32() : 0.0f;
        arg[r] = -1;
    }
    for (int f = 0; f < POOL_TAPS; ++f) {
        load_x(v, &wx);
        for (int r = 0; r < CK_NREGS_x; ++r) {
            float a = pool_to_f32(v[r]);
#if POOL_MAX
            if (a > acc[r] || a != a) { /* torch's: the largest, the last NaN */
                acc[r] = a;
                best[r] = v[r];
                arg[r] = f;
            }
#else
            acc[r] += a;
#endif
        }
        move_x(&wx, 0, POOL_C);
    }
    /* the epilogue: each register's output position gives its divisor or input index */
    POOL_T out[CK_NREGS_x];
#if POOL_IDX
    POOL_IT idx[CK_NREGS_x];
#endif
    for (int r = 0; r < CK_NREGS_x; ++r) {
        long long t[2];
        tile_x_x(r, t);
        long long m = m0 + t[0];
        long long o[3] = {m / (POOL_OUT1 * POOL_OUT2) % POOL_OUT0, m / POOL_OUT2 % POOL_OUT1,
                          m % POOL_OUT2};
        const long long str[3] = {POOL_STR0, POOL_STR1, POOL_STR2};
        const long long pad[3] = {POOL_PAD0, POOL_PAD1, POOL_PAD2};
        const long long in[3] = {POOL_IN0, POOL_IN1, POOL_IN2};
        const long long ker[3] = {POOL_KER0, POOL_KER1, POOL_KER2};
        (void)ker, (void)in;
#if POOL_MAX
        const long long dil[3] = {POOL_DIL0, POOL_DIL1, POOL_DIL2};
        long long f[3] = {arg[r] / (POOL_KER1 * POOL_KER2), arg[r] / POOL_KER2 % POOL_KER1,
                          arg[r] % POOL_KER2},
                  i[3];
        for (int d = 0; d < 3; ++d) {
            long long s = o[d] * str[d] - pad[d];
            if (arg[r] < 0) /* every element -inf: torch's index is the first in the input */
                f[d] = s < 0 ? (-s + dil[d] - 1) / dil[d] : 0;
            i[d] = s + f[d] * dil[d];
        }
        out[r] = best[r];
#if POOL_IDX == 1
        idx[r] = (POOL_IT)pool_flat(i[0], i[1], i[2]);
#elif POOL_IDX == 2
        idx[r] = ck_i64_as_f64(pool_flat(i[0], i[1], i[2]));
#else
        (void)i;
#endif
#else
        long long size = 1, count = 1;
        for (int d = 0; d < 3; ++d) {
            long long s = o[d] * str[d] - pad[d], e = s + ker[d];
            e = e < in[d] + pad[d] ? e : in[d] + pad[d];
            size *= e - s;
            s = s > 0 ? s : 0;
            e = e < in[d] ? e : in[d];
            count *= e - s;
        }
        float div = POOL_DIVISOR > 0 ? (float)POOL_DIVISOR
                    : POOL_INCLUDE_PAD ? (float)size
                                       : (float)count;
        out[r] = pool_from_f32(acc[r] / div);
#endif
    }
    ck_win_y wy = make_win_y(y, m0, c0);
    store_y(out, &wy);
#if POOL_IDX
    ck_win_i wi = make_win_i((POOL_IT *)ind, m0, c0);
    store_i(idx, &wi);
#else
    (void)ind;
#endif
}
