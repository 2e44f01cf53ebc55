/*
 * Device code of ck_permute (src/ops/permute/params.c generates a source that #defines the
 * constants below and includes this file).
 *
 *   PERM_E        element bytes: 1, 2, 4 or 8
 *   PERM_T        the element's integer type (uint8_t ... uint64_t)
 *   PERM_GN, PERM_GM (tile kernel) the tile shape: GN x GM blocks of V x V elements (8, 16, 32)
 *   PERM_MIN_BLOCKS (tile kernel) blocks per SM of the launch bounds (ck_perm_blocks_per_sm)
 *
 * The generated source declares the kernels (the runtime finds kernels in the source it is
 * given) and calls the bodies below:
 *
 * perm_tile (PERM_TILE defined): dst[b][m][n] = src[b][n][m] in tiles through shared
 * memory (layout: permute_layout_kernel.h). PERM_LDVEC / PERM_STVEC: 1 when the source rows /
 * destination rows allow 16-byte vectors (pointer and strides aligned), else element accesses.
 * Each block walks tiles blockIdx.x,
 * blockIdx.x + gridDim.x, ...; full tiles use no masks.
 *
 * perm_gather (PERM_GATHER defined): every element (or 16-byte vector along the last
 * dimension when PERM_VEC > 1) of an index space copied from its source
 * offset to its destination offset (rank a.rank, at most 8). PERM_IDX32: the item count fits 32
 * bits.
 */
#include "ops/permute/permute_args_kernel.h"
#include "ops/permute/permute_layout_kernel.h"

#define PERM_V (16 / PERM_E)

#if PERM_E == 8
#define PERM_WORDS_PER_ELEM 2
#else
#define PERM_WORDS_PER_ELEM 1
#endif

/* Element k (k < V) of the 16 bytes w[0..3] / put it there (w zeroed first). */
CK_DEVICE PERM_T perm_get(const uint32_t *w, int k)
{
#if PERM_E == 8
    return (PERM_T)w[2 * k] | ((PERM_T)w[2 * k + 1] << 32);
#elif PERM_E == 4
    return w[k];
#else
    return (PERM_T)(w[k / (4 / PERM_E)] >> (8 * PERM_E * (k % (4 / PERM_E))));
#endif
}

CK_DEVICE void perm_put(uint32_t *w, int k, PERM_T v)
{
#if PERM_E == 8
    w[2 * k] = (uint32_t)v;
    w[2 * k + 1] = (uint32_t)(v >> 32);
#elif PERM_E == 4
    w[k] = v;
#else
    w[k / (4 / PERM_E)] |= (uint32_t)v << (8 * PERM_E * (k % (4 / PERM_E)));
#endif
}

#ifdef PERM_TILE

#define PERM_THREADS    (PERM_GN * PERM_GM)
#define PERM_TN         (PERM_GN * PERM_V)
#define PERM_TM         (PERM_GM * PERM_V)
#define PERM_SMEM_BYTES (PERM_TN * PERM_GM * 16)

/* The 4x4-word transpose of a V x V block: out row i = column i of in. */
CK_DEVICE void perm_transpose(uint32_t in[PERM_V][4], uint32_t out[PERM_V][4])
{
#if PERM_E == 8
    CK_UNROLL for (int i = 0; i < 2; ++i)
    {
        CK_UNROLL for (int j = 0; j < 2; ++j)
        {
            out[i][2 * j] = in[j][2 * i];
            out[i][2 * j + 1] = in[j][2 * i + 1];
        }
    }
#elif PERM_E == 4
    CK_UNROLL for (int i = 0; i < 4; ++i)
    {
        CK_UNROLL for (int j = 0; j < 4; ++j) out[i][j] = in[j][i];
    }
#else
    /* 4 / PERM_E elements per word: word w of output row i packs element i of input rows
     * w * EPW + k (k < EPW). */
    CK_UNROLL for (int i = 0; i < PERM_V; ++i)
    {
        CK_UNROLL for (int w = 0; w < 4; ++w)
        {
            uint32_t acc = 0;
            CK_UNROLL for (int k = 0; k < 4 / PERM_E; ++k)
            {
                uint32_t e = (in[w * (4 / PERM_E) + k][i / (4 / PERM_E)] >>
                              (8 * PERM_E * (i % (4 / PERM_E)))) &
                             ((1u << (8 * PERM_E)) - 1u);
                acc |= e << (8 * PERM_E * k);
            }
            out[i][w] = acc;
        }
    }
#endif
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
        const PERM_T *s = (const PERM_T *)src + soff + n0 * a.s_n + m0;
        PERM_T *dd = (PERM_T *)dst + doff + m0 * a.d_m + n0;

        /* pass 1: global -> registers (all loads in flight), then -> shared */
        uint32_t in[PERM_V][4];
        CK_UNROLL for (int q = 0; q < PERM_V; ++q)
        {
            int r, c;
            ck_perm_pass1(t, q, PERM_THREADS, PERM_GM, &r, &c);
            const PERM_T *p = s + r * a.s_n + c * PERM_V;
#if PERM_LDVEC
            /* whole chunks use a vector on edge tiles too; only partial chunks go by element */
            if (full || (n0 + r < a.n && m0 + (c + 1) * PERM_V <= a.m)) {
                ck_u32x4 v = ck_ld16_nc(p);
                in[q][0] = v.x;
                in[q][1] = v.y;
                in[q][2] = v.z;
                in[q][3] = v.w;
                continue;
            }
#endif
            in[q][0] = in[q][1] = in[q][2] = in[q][3] = 0;
            CK_UNROLL for (int k = 0; k < PERM_V; ++k)
            {
                if (full || (n0 + r < a.n && m0 + c * PERM_V + k < a.m))
                    perm_put(in[q], k, p[k]);
            }
        }
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
        CK_UNROLL for (int i = 0; i < PERM_V; ++i)
        {
            const long long m = mc * PERM_V + i;
            PERM_T *p = dd + m * a.d_m + nc * PERM_V;
#if PERM_STVEC
            if (full || (m0 + m < a.m && n0 + (nc + 1) * PERM_V <= a.n)) {
                ck_u32x4 v;
                v.x = out[i][0];
                v.y = out[i][1];
                v.z = out[i][2];
                v.w = out[i][3];
                ck_st16(p, v);
                continue;
            }
#endif
            if (full || m0 + m < a.m) {
                CK_UNROLL for (int k = 0; k < PERM_V; ++k)
                {
                    if (full || n0 + nc * PERM_V + k < a.n)
                        p[k] = perm_get(out[i], k);
                }
            }
        }
    }
}
#endif /* PERM_TILE */

#ifdef PERM_GATHER

#if PERM_IDX32
typedef unsigned int perm_idx;
#else
typedef long long perm_idx;
#endif

CK_DEVICE void perm_gather(unsigned char *dst, const unsigned char *src, ck_perm_gather_args a)
{
    const perm_idx step = (perm_idx)ck_grid_dim_x() * ck_block_dim_x();
    for (perm_idx idx = (perm_idx)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
         idx < (perm_idx)a.items; idx += step) {
        perm_idx rest = idx;
        long long so = 0, dof = 0;
        for (int d = (int)a.rank - 1; d >= 0; --d) {
            perm_idx i = rest % (perm_idx)a.len[d];
            rest /= (perm_idx)a.len[d];
            so += (long long)i * a.ss[d];
            dof += (long long)i * a.ds[d];
        }
#if PERM_VEC > 1
        ck_st16((PERM_T *)dst + dof * PERM_VEC, ck_ld16_nc((const PERM_T *)src + so * PERM_VEC));
#else
        ((PERM_T *)dst)[dof] = ((const PERM_T *)src)[so];
#endif
    }
}
#endif /* PERM_GATHER */
