/* ldmatrix and stmatrix (x1, x2, x4, each plain and transposed), one warp. Lane l's row address
 * is byte offset rows[l] (16-byte aligned, all distinct) of a 4 KiB shared buffer.
 * ck-min-target: sm_90a (stmatrix) */
#include "ck_device.h"

/* ld_out[(v * 32 + lane) * 4 + i]: register i after variant v (0 x1, 1 x2, 2 x4, 3 x1.trans,
 * 4 x2.trans, 5 x4.trans; unused registers stay 0) of ldmatrix from the buffer holding src;
 * st_out[v * 1024 + w]: the buffer (pre-filled with 0xEEEEEEEE) after stmatrix variant v of
 * registers regs[(v * 32 + lane) * 4 + i]. */
CK_KERNEL void ldst(const unsigned *src, const unsigned *regs, const unsigned *rows,
                    unsigned *ld_out, unsigned *st_out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned, s, 1024, 16);
    unsigned l = ck_lane_id();
    for (unsigned w = l; w < 1024u; w += 32u)
        s[w] = src[w];
    ck_sync_threads();
    void *row = (unsigned char *)s + rows[l];
    for (int v = 0; v < 6; ++v) {
        unsigned r[4] = {0, 0, 0, 0};
        switch (v) {
        case 0: ck_ldmatrix_x1(r, row); break;
        case 1: ck_ldmatrix_x2(r, row); break;
        case 2: ck_ldmatrix_x4(r, row); break;
        case 3: ck_ldmatrix_x1_trans(r, row); break;
        case 4: ck_ldmatrix_x2_trans(r, row); break;
        default: ck_ldmatrix_x4_trans(r, row); break;
        }
        for (int i = 0; i < 4; ++i)
            ld_out[((unsigned)v * 32u + l) * 4u + (unsigned)i] = r[i];
    }
    for (int v = 0; v < 6; ++v) {
        ck_sync_threads();
        for (unsigned w = l; w < 1024u; w += 32u)
            s[w] = 0xEEEEEEEEu;
        ck_sync_threads();
        const unsigned *r = regs + ((unsigned)v * 32u + l) * 4u;
        switch (v) {
        case 0: ck_stmatrix_x1(row, r); break;
        case 1: ck_stmatrix_x2(row, r); break;
        case 2: ck_stmatrix_x4(row, r); break;
        case 3: ck_stmatrix_x1_trans(row, r); break;
        case 4: ck_stmatrix_x2_trans(row, r); break;
        default: ck_stmatrix_x4_trans(row, r); break;
        }
        ck_sync_threads();
        for (unsigned w = l; w < 1024u; w += 32u)
            st_out[(unsigned)v * 1024u + w] = s[w];
    }
}
