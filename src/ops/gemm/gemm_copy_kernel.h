/*
 * Operand tiles global -> shared for the GEMM pipelines, by `threads` threads of which the
 * caller is `tid`: the sm80 pipeline's stages (all threads of the block) and the sm90
 * pipeline's grouped operand path (the producer warpgroup's 128, sm90_grouped_kernel.h). A tile
 * is lines of line_bytes, its 16-byte chunks XOR-swizzled (gemm_swz); with lines of 128 bytes
 * and a 1024-byte aligned tile this is the 128-byte swizzle of TMA and wgmma.
 */
#ifndef CK_OPS_GEMM_COPY_KERNEL_H
#define CK_OPS_GEMM_COPY_KERNEL_H

/* Bytes of an element of GEMM type code t (the ck_dtype of the parameter table's GEMM_*_TYPE). */
#define GEMM_ES(t) (((t) == 0 || (t) == 14) ? 4 : ((t) == 2 || (t) == 3) ? 2 : 1)

/* Byte offset of (line, byte) in a tile of lines of line_bytes: the 16-byte chunk index XORed
 * with the line's rank among the lines that share its 128 bytes of banks (lines of 16, 32, 64
 * bytes: 8, 4, 2 per 128; 128 bytes or more: 1, XOR by line % 8), so that 8 consecutive lines
 * read at one column, or 128 consecutive bytes written, cover all 32 banks. */
CK_DEVICE int gemm_swz(int line, int byte, int line_bytes)
{
    unsigned per = line_bytes >= 128 ? 8u : (unsigned)line_bytes / 16u; /* chunks per 128 B */
    return line * line_bytes + (int)((unsigned)byte ^ ((((unsigned)line / (8u / per)) % per) << 4));
}

/* One operand's tile of one stage: `lines` lines of line_bytes from global line line0 + l
 * (valid below nlines) and byte column col0 (valid below row_bytes), zero outside. */
typedef struct gemm_tile_src {
    const unsigned char *g;
    long long ld_bytes, line0, nlines, col0, row_bytes;
} gemm_tile_src;

/* 16-byte cp.async pieces, zero-filled past the edges (ld and base 16-byte aligned). Thread t
 * copies chunks t, t + threads, ...: a fixed column of every (threads / chunks per line)-th
 * line, so one pointer, one column bound and one line count serve all of its pieces. */
CK_DEVICE void gemm_copy_vec(unsigned char *s, gemm_tile_src t, int lines, int line_bytes, int tid,
                             int threads)
{
    int cpl = line_bytes / 16;
    int l0 = tid / cpl, b = (tid % cpl) * 16, lstep = threads / cpl;
    long long left = t.row_bytes - t.col0 - b, rows = t.nlines - t.line0 - l0;
    unsigned full = left <= 0 ? 0u : left < 16 ? (unsigned)left : 16u;
    int valid = rows < lines ? (int)rows : lines; /* lines l0 + i lstep exist below l0 + valid */
    const unsigned char *g = t.g + (t.line0 + l0) * t.ld_bytes + t.col0 + b;
    long long gstep = lstep * t.ld_bytes;
    CK_UNROLL for (int i = 0; i < (lines * cpl + threads - 1) / threads; ++i)
    {
        if (lines * cpl % threads != 0 && l0 + i * lstep >= lines)
            break;
        ck_cp_async_16_zfill(s + gemm_swz(l0 + i * lstep, b, line_bytes), g + i * gstep,
                             i * lstep < valid ? full : 0u);
    }
}

/* Element by element (pointer or ld not 16-byte aligned): plain loads, zero outside. */
CK_DEVICE void gemm_copy_scalar(unsigned char *s, gemm_tile_src t, int lines, int line_bytes,
                                int es, int tid, int threads)
{
    int per = line_bytes / es;
    for (int c = tid; c < lines * per; c += threads) {
        int l = c / per, b = (c % per) * es;
        long long gl = t.line0 + l, gc = t.col0 + b;
        int ok = gl < t.nlines && gc < t.row_bytes;
        const unsigned char *src = t.g + gl * t.ld_bytes + gc;
        unsigned char *dst = s + gemm_swz(l, b, line_bytes);
        if (es == 4)
            *(unsigned *)dst = ok ? *(const unsigned *)src : 0u;
        else if (es == 2)
            *(unsigned short *)dst = ok ? *(const unsigned short *)src : (unsigned short)0;
        else
            *dst = ok ? *src : (unsigned char)0;
    }
}

#endif
