/*
 * The layernorm / RMSNorm forward's read stage through tile windows (CK_NORM_WINDOW=1; the
 * generated source includes it after norm_fwd_kernel.h). The source holds the windows x, r and
 * ro (x, residual, residual_out; src/ops/norm/window.c) over the [rows, N] tensors and the
 * block's row-group tile: register it * NORM_VEC + k of thread (row, lane) is column
 * (it * NORM_G + lane) * NORM_VEC + k, 16-byte accesses, rows past the last and columns past
 * the row end masked (zeros); a raw 16-bit cache (NORM_RAW) packs x's codes two per word.
 * Their storage types are norm_win_x_t, norm_win_r_t, norm_win_ro_t;
 * norm_win_<name>_at(pointer, first row, row stride, rows) makes each at the row group.
 */
#ifndef CK_NORM_FWD_WINDOW_KERNEL_H
#define CK_NORM_FWD_WINDOW_KERNEL_H

/* element of type t (its storage value v) as f32, and back */
#define NORM_WIN_F32(t, v) ((t) == CK_NC_F32 ? (float)(v) : ck_code_to_f32((t), (uint32_t)(v)))

CK_DEVICE void norm_read_window(const ck_norm_fwd_kargs *a, norm_pos p, norm_row_cache *c)
{
    norm_win_x_t xr[CK_NREGS_x];
    norm_win_r_t rr[CK_NREGS_r];
    ck_win_x wx = norm_win_x_at(a->x, p.base, a->sx, a->rows);
    load_x(xr, &wx);
    if (NORM_RT >= 0) {
        ck_win_r wr = norm_win_r_at(a->residual, p.base, a->sr, a->rows);
        load_r(rr, &wr);
    }
    CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
    {
        CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
        {
            if (NORM_RAW) { /* 16-bit x kept raw: two codes per word (no residual) */
                if (k % 2 == 0)
                    c->w[NORM_RAW ? it : 0][k / 2] =
                        (uint32_t)xr[it * NORM_VEC + k] |
                        ((uint32_t)xr[it * NORM_VEC + (k + 1) % NORM_VEC] << 16);
                continue;
            }
            float v = NORM_WIN_F32(NORM_XT, xr[it * NORM_VEC + k]);
            if (NORM_RT >= 0)
                v += NORM_WIN_F32(NORM_RT, rr[it * NORM_VEC + k]);
            c->f[NORM_RAW ? 0 : it][k] = v;
        }
    }
    if (NORM_OT >= 0) {
        norm_win_ro_t o[CK_NREGS_ro];
        CK_UNROLL for (int it = 0; it < NORM_CACHE; ++it)
        {
            /* each element's storage value: f32 as is, else its code (as ck_store_f32v rounds) */
            CK_UNROLL for (int k = 0; k < NORM_VEC; ++k)
            {
                float v = c->f[NORM_RAW ? 0 : it][k];
                o[it * NORM_VEC + k] = NORM_OT == CK_NC_F32
                                           ? (norm_win_ro_t)v
                                           : (norm_win_ro_t)ck_f32_to_code(NORM_OT, v);
            }
        }
        ck_win_ro wo = norm_win_ro_at(a->resout, p.base, a->so, a->rows);
        store_ro(o, &wo);
    }
}

#endif
