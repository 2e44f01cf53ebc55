/*
 * cast_kernel.h - the run-time typed cast kernel of src/ops/elementwise (ck_cast, ck_copy).
 *
 * One compiled kernel serves every pair of types, every rounding/overflow mode, scale and
 * seed, every layout of rank <= 8 (strides in elements; fp4/fp6 packed and contiguous): it
 * is the general path, used where a specialized kernel (ew_gen.c) is not worth a compile
 * (small tensors of uncommon type pairs) or cannot be generated (fp4/fp6 storage). Each
 * element goes through the host library's own ck_nc_decode / ck_nc_scale / ck_nc_encode, so
 * the result is ck_convert_array's bit for bit.
 *
 * Work unit: `upe` consecutive destination elements (the destination's pack: 2 for fp4,
 * 4 for fp6, else 1) so that no two threads write the same byte. Element i (row-major index
 * over the shape) is at sum_d coord_d(i) * stride_d of each tensor.
 *
 * The kernel itself (ck_cast_any, in the source kernel.c builds) calls ew_cast_any with
 * its parameters: the emulator finds kernels in the compiled source, not in headers.
 */
#ifndef CK_OPS_ELEMENTWISE_CAST_KERNEL_H
#define CK_OPS_ELEMENTWISE_CAST_KERNEL_H

#include "ops/elementwise/ew_kernel.h"

typedef struct ew_cast_geom {
    long long len[8];
    long long ds[8], ss[8];
} ew_cast_geom;

CK_DEVICE uint64_t ew_cast_one(uint64_t code, int src_type, int dst_type, int same, int round,
                               int ovf, float scale, int scaled, unsigned long long seed,
                               unsigned long long i)
{
    if (same)
        return code;
    ck_nc_unpacked u = ck_nc_decode(src_type, code);
    if (scaled)
        u = ck_nc_scale(u, scale);
    uint32_t rnd = round == CK_NC_ROUND_STOCHASTIC ? ck_nc_rand_word(seed, i) : 0u;
    return ck_nc_encode(dst_type, u, round, ovf, rnd);
}

CK_DEVICE void ew_cast_any(void *dst, const void *src, int dst_type, int src_type, int dst_cls,
                           int src_cls, int upe, int round, int ovf, float scale,
                           unsigned long long seed, long long units, int rank, long long l0,
                           long long l1, long long l2, long long l3, long long l4, long long l5,
                           long long l6, long long l7, long long d0, long long d1, long long d2,
                           long long d3, long long d4, long long d5, long long d6, long long d7,
                           long long s0, long long s1, long long s2, long long s3, long long s4,
                           long long s5, long long s6, long long s7)
{
    ew_cast_geom g = {{l0, l1, l2, l3, l4, l5, l6, l7},
                      {d0, d1, d2, d3, d4, d5, d6, d7},
                      {s0, s1, s2, s3, s4, s5, s6, s7}};
    int same = dst_type == src_type && scale == 1.0f;
    int scaled = scale != 1.0f;
    long long step = (long long)ck_grid_dim_x() * ck_block_dim_x();
    for (long long e = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
         e < units; e += step) {
        uint32_t c[4] = {0u, 0u, 0u, 0u};
        unsigned long long doff0 = 0;
        for (int j = 0; j < upe; ++j) {
            unsigned long long i = (unsigned long long)e * (unsigned)upe + (unsigned)j;
            unsigned long long rem = i, doff = 0, soff = 0;
            for (int d = rank - 1; d >= 0; --d) {
                unsigned long long len = (unsigned long long)g.len[d];
                unsigned long long k = rem % len;
                rem /= len;
                doff += k * (unsigned long long)g.ds[d];
                soff += k * (unsigned long long)g.ss[d];
            }
            uint64_t r = ew_cast_one(ew_ld_code(src, src_cls, soff), src_type, dst_type, same,
                                     round, ovf, scale, scaled, seed, i);
            if (upe == 1)
                ew_st_code(dst, dst_cls, doff, r);
            else
                c[j] = (uint32_t)r;
            if (j == 0)
                doff0 = doff;
        }
        if (dst_cls == EW_ST_FP4)
            ew_st_fp4_pack(dst, doff0 >> 1, c[0], c[1]);
        else if (dst_cls == EW_ST_FP6)
            ew_st_fp6_pack(dst, doff0 >> 2, c[0], c[1], c[2], c[3]);
    }
}

#endif
