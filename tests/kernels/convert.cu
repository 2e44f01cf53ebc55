/* Numeric conversions of the prelude (core/numeric_conv.h) in kernel code: decoding codes of
 * every type to f32, and rounding f32 values to every type in every rounding/overflow mode. */
#include "ck_device.h"

/* out[i] = bits of the f32 value of codes[i] of type `type`, for i < n (grid-stride). */
CK_KERNEL void codes_to_f32(int type, const uint32_t *codes, uint32_t *out, int n)
{
    int stride = (int)(ck_grid_dim_x() * ck_block_dim_x());
    for (int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x()); i < n; i += stride)
        out[i] = ck_f32_as_u32(ck_nc_to_f32(type, codes[i]));
}

/* For every combination c < ncombo (combos[3c..3c+2] = type, rounding, overflow as CK_NC_*) and
 * every value i < n (f32 bits xs[i]): out[c * n + i] = the code of xs[i] in that combination,
 * with the stochastic rounding word ck_nc_rand_word(seed, i). Grid: x over values, y over combos. */
CK_KERNEL void f32_to_codes(const uint32_t *xs, int n, const int *combos, int ncombo,
                            unsigned long long seed, uint32_t *out)
{
    int stride = (int)(ck_grid_dim_x() * ck_block_dim_x());
    for (int c = (int)ck_block_idx_y(); c < ncombo; c += (int)ck_grid_dim_y()) {
        int type = combos[3 * c], round = combos[3 * c + 1], overflow = combos[3 * c + 2];
        for (int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x()); i < n;
             i += stride) {
            uint32_t rnd = ck_nc_rand_word(seed, (uint64_t)i);
            out[(size_t)c * (size_t)n + (size_t)i] =
                (uint32_t)ck_nc_from_f32(type, ck_u32_as_f32(xs[i]), round, overflow, rnd);
        }
    }
}

/* The fixed-type shorthands (nearest even, each type's default overflow), one value per thread:
 * out[8i..8i+6] = f16, bf16, e4m3, e5m2, e2m3, e3m2, e2m1 codes of xs[i]; out[8i+7] = the f32 bits
 * of the e4m3 code decoded again. */
CK_KERNEL void shorthands(const uint32_t *xs, int n, uint32_t *out)
{
    int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x());
    if (i >= n)
        return;
    float x = ck_u32_as_f32(xs[i]);
    uint32_t *o = out + 8 * (size_t)i;
    o[0] = ck_nc_f32_to_f16(x);
    o[1] = ck_nc_f32_to_bf16(x);
    o[2] = ck_nc_f32_to_fp8e4m3(x);
    o[3] = ck_nc_f32_to_fp8e5m2(x);
    o[4] = ck_nc_f32_to_fp6e2m3(x);
    o[5] = ck_nc_f32_to_fp6e3m2(x);
    o[6] = ck_nc_f32_to_fp4e2m1(x);
    o[7] = ck_f32_as_u32(ck_nc_fp8e4m3_to_f32(ck_nc_f32_to_fp8e4m3(x)));
}
