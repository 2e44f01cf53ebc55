/*
 * The attention variants on the S fragment of an mma pipeline (sm80 forward, decode): additive
 * bias and ALiBi, the mask for rows of several heads, dropout with the Philox4x32-10 counter
 * RNG, and the paged K / V addressing. Included by the pipelines after the ATTN_* defines and
 * ATTN_MI / ATTN_NS.
 *
 * Row mapping: fragment row r (rbase + mi * 16 + g (+ 8)) is query row i = r % rdiv of query
 * head h = h0 + r / rdiv (the sm80 kernel: one head, rdiv beyond every row; the decode kernel:
 * the group's heads one after another, rdiv = s_q); rows at or past nrows are padding.
 */
#ifndef CK_OPS_ATTN_VARIANTS_KERNEL_H
#define CK_OPS_ATTN_VARIANTS_KERNEL_H

#include "ck_convert.h"
#include "ops/attention/attn_args_kernel.h"

#ifndef ATTN_BIAS
#define ATTN_BIAS 0 /* 0 none, 1 f32, 2 bf16, 3 f16 */
#endif
#ifndef ATTN_ALIBI
#define ATTN_ALIBI 0
#endif
#ifndef ATTN_PAGED
#define ATTN_PAGED 0
#endif
#ifndef ATTN_DROPOUT
#define ATTN_DROPOUT 0
#endif

/* The bias element (b, h, i, j) as f32. */
CK_DEVICE float attn_bias_at(const ck_attn_kargs *ka, long long b, long long h, long long i,
                             long long j)
{
    long long x = b * ka->bias_b + h * ka->bias_h + i * ka->bias_q + j * ka->bias_k;
#if ATTN_BIAS == 1
    return ((const float *)ka->bias)[x];
#elif ATTN_BIAS == 2
    return ck_fast_bf16_to_f32(((const unsigned short *)ka->bias)[x]);
#else
    return ck_fast_f16_to_f32(((const unsigned short *)ka->bias)[x]);
#endif
}

/* s += (bias + ALiBi) / scale on the rows and keys in range (the units of Q K^T). */
CK_DEVICE void attn_add_bias(float (*s)[ATTN_NS][4], const ck_attn_kargs *ka, long long b,
                             long long h0, long long rbase, long long rdiv, long long nrows,
                             long long j0)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    long long off = ka->bottom_right ? ka->sk - ka->sq : 0;
    (void)off, (void)b;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int e = 0; e < 4; ++e)
    {
        long long r = rbase + mi * 16 + g + 8 * (e >> 1);
        long long h = h0 + r / rdiv, i = r % rdiv;
        if (r >= nrows)
            continue;
        CK_UNROLL for (int n = 0; n < ATTN_NS; ++n)
        {
            long long j = j0 + n * 8 + 2 * t + (e & 1);
            if (j >= ka->sk)
                continue;
            float add = 0.0f;
#if ATTN_BIAS
            add += attn_bias_at(ka, b, h, i, j);
#endif
#if ATTN_ALIBI
            long long dist = j - i - off;
            add -= ka->alibi[h] * (float)(dist < 0 ? -dist : dist);
#endif
            s[mi][n][e] = fmaf(add, ka->inv_scale, s[mi][n][e]);
        }
    }
}

/* -inf where key j is hidden from row i (band i + lo <= j <= i + hi of the sequence, j < sk). */
CK_DEVICE void attn_mask_rows(float (*s)[ATTN_NS][4], const ck_attn_kargs *ka, long long rbase,
                              long long rdiv, long long j0)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int hh = 0; hh < 2; ++hh)
    {
        long long i = (rbase + mi * 16 + g + 8 * hh) % rdiv;
        long long lo = i + ka->lo, hi = i + ka->hi;
        CK_UNROLL for (int n = 0; n < ATTN_NS; ++n) CK_UNROLL for (int e = 0; e < 2; ++e)
        {
            long long j = j0 + n * 8 + 2 * t + e;
            if (j >= ka->sk || j < lo || j > hi)
                s[mi][n][2 * hh + e] = ck_u32_as_f32(0xFF800000u);
        }
    }
}

/* Philox4x32-10 (Salmon et al., SC'11): 10 rounds of the counter c under key (k0, k1). */
CK_DEVICE void attn_philox(unsigned *c, unsigned k0, unsigned k1)
{
    for (int r = 0; r < 10; ++r) {
        unsigned long long p0 = 0xD2511F53ull * c[0], p1 = 0xCD9E8D57ull * c[2];
        unsigned x0 = (unsigned)(p1 >> 32) ^ c[1] ^ k0, x2 = (unsigned)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (unsigned)p1, c[3] = (unsigned)p0, c[0] = x0, c[2] = x2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
}

/* Dropout of p = s (after the softmax): kept (times drop_scale) when word j % 4 of Philox of
 * counter (j / 4, i, b hq + h, offset_lo), key (seed_lo, seed_hi ^ offset_hi) is at least
 * drop_thresh; the mask of visible and kept entries to dmask. The two columns of a thread's
 * pair share one Philox call. */
CK_DEVICE void attn_dropout(float (*s)[ATTN_NS][4], const ck_attn_kargs *ka, long long b,
                            long long h0, long long rbase, long long rdiv, long long nrows,
                            long long j0)
{
    int lane = (int)ck_lane_id(), g = lane >> 2, t = lane & 3;
    CK_UNROLL for (int mi = 0; mi < ATTN_MI; ++mi) CK_UNROLL for (int hh = 0; hh < 2; ++hh)
    {
        long long r = rbase + mi * 16 + g + 8 * hh;
        long long h = h0 + r / rdiv, i = r % rdiv;
        CK_UNROLL for (int n = 0; n < ATTN_NS; ++n)
        {
            long long j = j0 + n * 8 + 2 * t;
            unsigned c[4] = {(unsigned)(j >> 2), (unsigned)i, (unsigned)(b * ka->hq + h),
                             ka->offset_lo};
            attn_philox(c, ka->seed_lo, ka->seed_hi ^ ka->offset_hi);
            CK_UNROLL for (int e = 0; e < 2; ++e)
            {
                int w = (int)((j + e) & 3); /* selects, not an indexed (local memory) array */
                unsigned word = w == 0 ? c[0] : w == 1 ? c[1] : w == 2 ? c[2] : c[3];
                int keep = word >= ka->drop_thresh;
                float *p = &s[mi][n][2 * hh + e];
                *p = keep ? *p * ka->drop_scale : 0.0f;
                if (ka->dmask && r < nrows && i < ka->mask_sq && j + e < ka->sk &&
                    j + e < ka->mask_sk) {
                    int vis = j + e >= i + ka->lo && j + e <= i + ka->hi;
                    ka->dmask[((b * ka->hq + h) * ka->mask_sq + i) * ka->mask_sk + j + e] =
                        (unsigned char)(vis && keep);
                }
            }
        }
    }
}

/* Paged K / V: the first element of key row j of head hk in the pool `base` (batch stride:
 * pages), or 0 past the pool (never read: the sequence was found bad first). */
CK_DEVICE const unsigned short *attn_page_row(const ck_attn_kargs *ka, const unsigned short *base,
                                              long long page_stride, long long row_stride,
                                              long long b, long long j)
{
    long long pg = ka->table[b * ka->max_pages + j / ka->page];
    if (pg < 0 || pg >= ka->num_pages)
        pg = 0;
    return base + pg * page_stride + (j % ka->page) * row_stride;
}

/* Keys of sequence b (seqlens_k clamped to [0, sk], or sk), and whether one of their pages is
 * outside the pool (every thread of the block gets the same answer; one barrier). */
CK_DEVICE int attn_paged_bad(const ck_attn_kargs *ka, long long b, long long *sk)
{
    CK_SHARED_ARRAY(int, attn_bad_page, 1);
    long long n = ka->seqlens_k ? ka->seqlens_k[b] : ka->sk;
    n = n < 0 ? 0 : n > ka->sk ? ka->sk : n;
    *sk = n;
    if (ck_thread_linear() == 0)
        attn_bad_page[0] = 0;
    ck_sync_threads();
    long long pages = (n + ka->page - 1) / ka->page;
    for (long long x = ck_thread_linear(); x < pages; x += ck_block_threads()) {
        int pg = ka->table[b * ka->max_pages + x];
        if (pg < 0 || pg >= ka->num_pages)
            attn_bad_page[0] = 1;
    }
    ck_sync_threads();
    int bad = attn_bad_page[0];
    ck_sync_threads();
    return bad;
}

#endif
