/*
 * The quantized path of the sm_90a GEMM pipeline (GEMM_QUANT; host side quant.c): block-scaled
 * and row-col fp8. A consumer warpgroup accumulates each K block (block_k / 128 k-tiles) in a
 * second wgmma accumulator `part`; when the block's last wgmma group has completed
 * (wgmma.wait_group 0) it promotes: acc += part * sa(row, kb) * sb(kb, col) in f32, and the
 * next block's first wgmma overwrites part (scale-d 0). The scales of the block are loaded
 * before the wait, so their latency hides behind the tensor cores.
 *
 * Register i of the m64nN accumulator holds row 16 w + g + 8 ((i % 4) / 2) and column
 * 8 (i / 4) + 2 q + i % 2 of the warpgroup's 64 x N (w = warp, g = lane / 4, q = lane % 4).
 */
#ifndef CK_OPS_GEMM_SM90_QUANT_KERNEL_H
#define CK_OPS_GEMM_SM90_QUANT_KERNEL_H

/* k-tiles (of 128 bytes of K) per K block; a VECTOR-only problem has one block: all of K. */
#define SM90_KB_TILES (GEMM_QK_STEPS ? GEMM_QK_STEPS / 4 : 0x40000000)

/* The scales of K block kb for this thread's rows (two) and columns. */
typedef struct sm90_qscales {
    float a[2], b[SM90_ACC / 2];
} sm90_qscales;

CK_DEVICE void sm90_quant_load(sm90_qscales *s, const ck_gemm_kargs *ka, long long m0, long long n0,
                               int kb)
{
    unsigned t = ck_warpgroup_thread(), w = t / 32, g = (t % 32) / 4, q = t % 4;
    CK_UNROLL for (int h = 0; h < 2; ++h)
    {
        long long row = m0 + 16 * w + g + 8 * h;
#if GEMM_SCALE_A
        s->a[h] = row < ka->m ? ka->sa[row / ka->sa_bmn * ka->sa_mn + kb * ka->sa_k] : 0.0f;
#else
        (void)row;
        s->a[h] = 1.0f;
#endif
    }
#if GEMM_SCALE_B
    if (ka->sb_bmn % GEMM_TILE_N == 0) { /* one scale for the tile's columns (128 x 128 blocks) */
        float v = ka->sb[n0 / ka->sb_bmn * ka->sb_mn + kb * ka->sb_k];
        CK_UNROLL for (int j = 0; j < SM90_ACC / 2; ++j) s->b[j] = v;
    } else {
        CK_UNROLL for (int j = 0; j < SM90_ACC / 2; ++j)
        {
            long long col = n0 + 8 * (j / 2) + 2 * q + j % 2;
            s->b[j] = col < ka->n ? ka->sb[col / ka->sb_bmn * ka->sb_mn + kb * ka->sb_k] : 0.0f;
        }
    }
#else
    (void)n0, (void)q;
    CK_UNROLL for (int j = 0; j < SM90_ACC / 2; ++j) s->b[j] = 1.0f;
#endif
}

/* acc += part * sa * sb (register i: row half (i % 4) / 2, column pair index i / 4 * 2 + i % 2). */
CK_DEVICE void sm90_promote(float *acc, const float *part, const sm90_qscales *s)
{
    CK_UNROLL for (int i = 0; i < SM90_ACC; ++i) acc[i] =
        fmaf(part[i], s->a[(i % 4) / 2] * s->b[(i / 4) * 2 + i % 2], acc[i]);
}

#endif
