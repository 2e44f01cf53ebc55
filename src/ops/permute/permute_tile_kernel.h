/*
 * ck_permute's tile pipeline (permute_kernel.h documents the constants): dst[b][m][n] =
 * src[b][n][m] by tiles - global -> registers -> shared memory, shared -> registers, transpose
 * of V x V blocks in registers, -> global. The global read and write stages are the
 * generator's choice (indexed by hand, or tile windows).
 */
#ifndef CK_OPS_PERMUTE_TILE_KERNEL_H
#define CK_OPS_PERMUTE_TILE_KERNEL_H
#include "ops/permute/permute_kernel.h"

#define PERM_THREADS    (PERM_GN * PERM_GM)
#define PERM_TN         (PERM_GN * PERM_V)
#define PERM_TM         (PERM_GM * PERM_V)
#define PERM_SMEM_BYTES (PERM_TN * PERM_GM * 16)

/* The 4x4-word transpose of a V x V block: out row i = column i of in. */
CK_DEVICE void perm_transpose(uint32_t in[PERM_V][4], uint32_t out[PERM_V][4])
{
    if (PERM_E == 8) {
        CK_UNROLL for (int i = 0; i < 2; ++i)
        {
            CK_UNROLL for (int j = 0; j < 2; ++j)
            {
                out[i][2 * j] = in[j][2 * i];
                out[i][2 * j + 1] = in[j][2 * i + 1];
            }
        }
    } else if (PERM_E == 4) {
        CK_UNROLL for (int i = 0; i < 4; ++i)
        {
            CK_UNROLL for (int j = 0; j < 4; ++j) out[i][j] = in[j][i];
        }
    } else {
        /* PERM_EPW elements per word: word w of output row i packs element i of input rows
         * w * EPW + k (k < EPW). */
        CK_UNROLL for (int i = 0; i < PERM_V; ++i)
        {
            CK_UNROLL for (int w = 0; w < 4; ++w)
            {
                uint32_t acc = 0;
                CK_UNROLL for (int k = 0; k < PERM_EPW; ++k)
                {
                    uint32_t e =
                        (in[w * PERM_EPW + k][i / PERM_EPW] >> (PERM_EBITS * (i % PERM_EPW))) &
                        ((1u << PERM_EBITS) - 1u);
                    acc |= e << (PERM_EBITS * k);
                }
                out[i][w] = acc;
            }
        }
    }
}

/* stage read: the tile (n0, m0) of the batch's source sb into V 16-byte chunks a thread
 * (pass 1's rows and chunks, ck_perm_pass1), zeros past the edges; the generator defines it as
 * perm_read_indexed (below) or perm_read_window (permute_window_kernel.h) */
CK_DEVICE void perm_read(uint32_t in[PERM_V][4], const PERM_T *sb, const ck_perm_tile_args *a,
                         long long n0, long long m0, int full);
/* stage write: the V transposed chunks of thread (nc, mc) (ck_perm_pass2) to the tile (m0, n0)
 * of the batch's destination db, nothing past the edges; perm_write_indexed (below) or
 * perm_write_window */
CK_DEVICE void perm_write(uint32_t out[PERM_V][4], PERM_T *db, const ck_perm_tile_args *a,
                          long long n0, long long m0, int full);

CK_DEVICE void perm_read_indexed(uint32_t in[PERM_V][4], const PERM_T *sb,
                                 const ck_perm_tile_args *a, long long n0, long long m0, int full)
{
    const int t = (int)ck_thread_idx_x();
    const PERM_T *s = sb + n0 * a->s_n + m0;
    CK_UNROLL for (int q = 0; q < PERM_V; ++q)
    {
        int r, c;
        ck_perm_pass1(t, q, PERM_THREADS, PERM_GM, &r, &c);
        const PERM_T *p = s + r * a->s_n + c * PERM_V;
        /* whole chunks use a vector on edge tiles too; only partial chunks go by element */
        if (PERM_LDVEC && (full || (n0 + r < a->n && m0 + (c + 1) * PERM_V <= a->m))) {
            ck_u32x4 v = ck_ld16_nc(p);
            in[q][0] = v.x;
            in[q][1] = v.y;
            in[q][2] = v.z;
            in[q][3] = v.w;
            continue;
        }
        in[q][0] = in[q][1] = in[q][2] = in[q][3] = 0;
        CK_UNROLL for (int k = 0; k < PERM_V; ++k)
        {
            if (full || (n0 + r < a->n && m0 + c * PERM_V + k < a->m))
                perm_put(in[q], k, p[k]);
        }
    }
}

CK_DEVICE void perm_write_indexed(uint32_t out[PERM_V][4], PERM_T *db, const ck_perm_tile_args *a,
                                  long long n0, long long m0, int full)
{
    int nc, mc;
    ck_perm_pass2((int)ck_thread_idx_x(), PERM_GN, &nc, &mc);
    PERM_T *dd = db + m0 * a->d_m + n0;
    CK_UNROLL for (int i = 0; i < PERM_V; ++i)
    {
        const long long m = mc * PERM_V + i;
        PERM_T *p = dd + m * a->d_m + nc * PERM_V;
        if (PERM_STVEC && (full || (m0 + m < a->m && n0 + (nc + 1) * PERM_V <= a->n))) {
            ck_u32x4 v;
            v.x = out[i][0];
            v.y = out[i][1];
            v.z = out[i][2];
            v.w = out[i][3];
            ck_st16(p, v);
            continue;
        }
        if (full || m0 + m < a->m) {
            CK_UNROLL for (int k = 0; k < PERM_V; ++k)
            {
                if (full || n0 + nc * PERM_V + k < a->n)
                    p[k] = perm_get(out[i], k);
            }
        }
    }
}

CK_DEVICE void perm_tile(unsigned char *dst, const unsigned char *src, ck_perm_tile_args a)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, sh, PERM_SMEM_BYTES, 16);
    const int t = (int)ck_thread_idx_x();
    int nc, mc;
    ck_perm_pass2(t, PERM_GN, &nc, &mc);
    for (long long tile = ck_block_idx_x(); tile < a.tiles; tile += ck_grid_dim_x()) {
        long long tm = tile % a.tiles_m, rest = tile / a.tiles_m;
        long long tn = rest % a.tiles_n, b = rest / a.tiles_n;
        long long soff = 0, doff = 0;
        for (int d = (int)a.nb - 1; d >= 0; --d) {
            long long i = b % a.blen[d];
            b /= a.blen[d];
            soff += i * a.bs[d];
            doff += i * a.bd[d];
        }
        const long long n0 = tn * PERM_TN, m0 = tm * PERM_TM;
        const int full = n0 + PERM_TN <= a.n && m0 + PERM_TM <= a.m;

        /* pass 1: global -> registers (all loads in flight), then -> shared */
        uint32_t in[PERM_V][4];
        perm_read(in, (const PERM_T *)src + soff, &a, n0, m0, full);
        ck_sync_threads(); /* the previous tile's pass 2 is done with sh */
        CK_UNROLL for (int q = 0; q < PERM_V; ++q)
        {
            int r, c;
            ck_perm_pass1(t, q, PERM_THREADS, PERM_GM, &r, &c);
            ck_u32x4 v;
            v.x = in[q][0];
            v.y = in[q][1];
            v.z = in[q][2];
            v.w = in[q][3];
            ck_st16(sh + ck_perm_smem_offset(r, c, PERM_V, PERM_GM), v);
        }
        ck_sync_threads();

        /* pass 2: shared -> registers (V rows of chunk mc), transpose, -> global */
        CK_UNROLL for (int j = 0; j < PERM_V; ++j)
        {
            ck_u32x4 v = ck_ld16(sh + ck_perm_smem_offset(nc * PERM_V + j, mc, PERM_V, PERM_GM));
            in[j][0] = v.x;
            in[j][1] = v.y;
            in[j][2] = v.z;
            in[j][3] = v.w;
        }
        uint32_t out[PERM_V][4];
        perm_transpose(in, out);
        perm_write(out, (PERM_T *)dst + doff, &a, n0, m0, full);
    }
}

#endif
