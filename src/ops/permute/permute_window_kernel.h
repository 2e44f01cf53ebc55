/*
 * ck_permute's tile read and write stages through tile windows (PERM_WINDOW:
 * CK_PERMUTE_WINDOW=1 or the tuning text's fourth field; the generated source includes this
 * after the pipeline). The source holds the windows s (full tiles) and se (edge tiles, masked)
 * over the batch's source, d and de over the batch's destination (src/ops/permute/window.c):
 * register q * V + k of window s is element k of pass 1's chunk q (se: one chunk a call, at
 * the chunk's origin row), register i * V + k of
 * window d element k of the transposed row i, so the stages only move words between the
 * windows' registers and the pipeline's chunks. Elements of 1, 2, 4 and 8 bytes (unsigned
 * char, unsigned short, int, double: bits copied, never computed on).
 *   perm_win_s_at(batch source, n0, m0, whole n, whole m, source row stride), se: n, m;
 *   perm_win_d_at(batch destination, m0, n0, whole m, whole n, destination row stride), de;
 *   the full-tile windows of 1- and 2-byte elements count columns and strides in words.
 */
#ifndef CK_OPS_PERMUTE_WINDOW_KERNEL_H
#define CK_OPS_PERMUTE_WINDOW_KERNEL_H

/* an element's bits from a window register, and back */
CK_DEVICE PERM_T perm_win_bits(perm_win_s_t v)
{
    return PERM_E == 8 ? (PERM_T)ck_nc_f64_bits((double)v) : (PERM_T)(uint32_t)v;
}

CK_DEVICE perm_win_d_t perm_win_value(PERM_T b)
{
    return PERM_E == 8 ? (perm_win_d_t)ck_nc_bits_f64((uint64_t)b) : (perm_win_d_t)(uint32_t)b;
}

/* the full-tile windows view rows of 1- and 2-byte elements as words where the plan's 16-byte
 * accesses are (window.c, ck_permute_window_words): register q * 4 + w is word w of chunk q */
#define PERM_WORDS_S (PERM_E < 4 && PERM_LDVEC)
#define PERM_WORDS_D (PERM_E < 4 && PERM_STVEC)
#define PERM_EPW_S   (PERM_WORDS_S ? PERM_EPW : 1)
#define PERM_EPW_D   (PERM_WORDS_D ? PERM_EPW : 1)

CK_DEVICE void perm_read_window(uint32_t in[PERM_V][4], const PERM_T *sb,
                                const ck_perm_tile_args *a, long long n0, long long m0, int full)
{
    if (full && (PERM_WORDS_S || PERM_E >= 4)) {
        perm_win_s_t r[CK_NREGS_s];
        ck_win_s w = perm_win_s_at(sb, n0, m0 / PERM_EPW_S, a->n / PERM_TN * PERM_TN,
                                   a->m / PERM_TM * PERM_TM / PERM_EPW_S, a->s_n / PERM_EPW_S);
        load_s(r, &w);
        CK_UNROLL for (int q = 0; q < PERM_V; ++q)
        {
            if (PERM_WORDS_S) {
                CK_UNROLL for (int k = 0; k < 4; ++k) in[q][k] = (uint32_t)r[q * 4 + k];
            } else {
                CK_UNROLL for (int k = 0; k < PERM_V; ++k)
                    perm_put(in[q], k, perm_win_bits(r[q * PERM_V + k]));
            }
        }
    } else if (full) {
        /* unaligned rows of 1- or 2-byte elements: window s one chunk a call, as se */
        CK_UNROLL for (int q = 0; q < PERM_V; ++q)
        {
            perm_win_s_t r[CK_NREGS_s];
            ck_win_s w = perm_win_s_at(sb, n0 + q * PERM_GN, m0, a->n / PERM_TN * PERM_TN,
                                       a->m / PERM_TM * PERM_TM, a->s_n);
            load_s(r, &w);
            in[q][0] = in[q][1] = in[q][2] = in[q][3] = 0; /* perm_put ORs sub-words in */
            CK_UNROLL for (int k = 0; k < PERM_V; ++k) perm_put(in[q], k, perm_win_bits(r[k]));
        }
    } else {
        /* edge tiles chunk by chunk: row q * GN + t / GM of the tile, V elements masked */
        CK_UNROLL for (int q = 0; q < PERM_V; ++q)
        {
            perm_win_se_t r[CK_NREGS_se];
            ck_win_se w = perm_win_se_at(sb, n0 + q * PERM_GN, m0, a->n, a->m, a->s_n);
            load_se(r, &w);
            in[q][0] = in[q][1] = in[q][2] = in[q][3] = 0;
            CK_UNROLL for (int k = 0; k < PERM_V; ++k)
                perm_put(in[q], k, perm_win_bits((perm_win_s_t)r[k]));
        }
    }
}

CK_DEVICE void perm_write_window(uint32_t out[PERM_V][4], PERM_T *db, const ck_perm_tile_args *a,
                                 long long n0, long long m0, int full)
{
    if (full) {
        perm_win_d_t r[CK_NREGS_d];
        CK_UNROLL for (int i = 0; i < PERM_V; ++i)
        {
            if (PERM_WORDS_D) {
                CK_UNROLL for (int k = 0; k < 4; ++k) r[i * 4 + k] = (perm_win_d_t)out[i][k];
            } else {
                CK_UNROLL for (int k = 0; k < PERM_V; ++k) r[i * PERM_V + k] =
                    perm_win_value(perm_get(out[i], k));
            }
        }
        ck_win_d w = perm_win_d_at(db, m0, n0 / PERM_EPW_D, a->m / PERM_TM * PERM_TM,
                                   a->n / PERM_TN * PERM_TN / PERM_EPW_D, a->d_m / PERM_EPW_D);
        store_d(r, &w);
    } else {
        perm_win_de_t r[CK_NREGS_de];
        CK_UNROLL for (int i = 0; i < PERM_V; ++i)
        {
            CK_UNROLL for (int k = 0; k < PERM_V; ++k) r[i * PERM_V + k] =
                (perm_win_de_t)perm_win_value(perm_get(out[i], k));
        }
        ck_win_de w = perm_win_de_at(db, m0, n0, a->m, a->n, a->d_m);
        store_de(r, &w);
    }
}

#endif
