/*
 * Max-pool backward, one class of input residues mod the stride (src/ops/pool/kernel.c
 * generates the source per class: the #defines, the windows "dy" and "i" -- over the view of
 * dY that conv's backward data builds for the class, (N * rows) x (taps * C), dy zero and the
 * index -1 where no output exists -- and "dx" over the class's rows of dX, (N * rows) x C).
 * dX[n, i, c] gathers, in a fixed tap order, the dY of the outputs whose index is i:
 * deterministic, no atomics; every element of the class's rows is written.
 */
#include "ops/pool/pool_common_kernel.h"

CK_DEVICE void pool_bwd_tile(const POOL_T *dy, const void *ind, POOL_T *dx)
{
    long long m0 = (long long)ck_block_idx_x() * POOL_TM;
    long long c0 = (long long)ck_block_idx_y() * POOL_TC;
    ck_win_dy wg = make_win_dy((POOL_T *)dy, m0, c0);
    ck_win_i wi = make_win_i((POOL_IT *)ind, m0, c0);
    long long want[CK_NREGS_dy]; /* each register's input position, flattened */
    float acc[CK_NREGS_dy];
    for (int r = 0; r < CK_NREGS_dy; ++r) {
        long long t[2];
        tile_x_dy(r, t);
        long long m = m0 + t[0];
        long long h0 = m / (POOL_ROWS1 * POOL_ROWS2) % POOL_ROWS0, h1 = m / POOL_ROWS2 % POOL_ROWS1,
                  h2 = m % POOL_ROWS2;
        want[r] =
            pool_flat(POOL_R0 + POOL_STR0 * h0, POOL_R1 + POOL_STR1 * h1, POOL_R2 + POOL_STR2 * h2);
        acc[r] = 0.0f;
    }
    for (int t = 0; t < POOL_TAPS; ++t) {
        POOL_T g[CK_NREGS_dy];
        POOL_IT ix[CK_NREGS_dy];
        load_dy(g, &wg);
        load_i(ix, &wi);
        for (int r = 0; r < CK_NREGS_dy; ++r) {
#if POOL_IDX == 2
            long long at = ck_f64_as_i64(ix[r]);
#else
            long long at = ix[r];
#endif
            if (at == want[r])
                acc[r] += pool_to_f32(g[r]);
        }
        move_dy(&wg, 0, POOL_C);
        move_i(&wi, 0, POOL_C);
    }
    POOL_T out[CK_NREGS_dy];
    for (int r = 0; r < CK_NREGS_dy; ++r)
        out[r] = pool_from_f32(acc[r]);
    ck_win_dx wd = make_win_dx(dx, m0, c0);
    store_dx(out, &wd);
}
