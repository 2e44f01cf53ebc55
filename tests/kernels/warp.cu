/* Warp shuffles, votes and reductions (conformance kernels). Blocks of 64 threads. */
#include "ck_device.h"

/* Per thread 12 outputs: idx/up/down/xor for u32, f32 (as bits) and i32. */
CK_KERNEL void shuffles(const unsigned *in, const float *fin, const unsigned *params,
                        unsigned *out)
{
    unsigned g = ck_block_idx_x() * ck_block_threads() + ck_thread_linear();
    unsigned v = in[g], p = params[g] & 31u;
    float f = fin[g];
    int s = (int)v;
    unsigned *o = out + g * 12u;
    o[0] = ck_shfl_idx_u32(v, p);
    o[1] = ck_shfl_up_u32(v, p);
    o[2] = ck_shfl_down_u32(v, p);
    o[3] = ck_shfl_xor_u32(v, p);
    o[4] = ck_f32_as_u32(ck_shfl_idx_f32(f, p));
    o[5] = ck_f32_as_u32(ck_shfl_up_f32(f, p));
    o[6] = ck_f32_as_u32(ck_shfl_down_f32(f, p));
    o[7] = ck_f32_as_u32(ck_shfl_xor_f32(f, p));
    o[8] = (unsigned)ck_shfl_idx_i32(s, p);
    o[9] = (unsigned)ck_shfl_up_i32(s, p);
    o[10] = (unsigned)ck_shfl_down_i32(s, p);
    o[11] = (unsigned)ck_shfl_xor_i32(s, p);
}

CK_KERNEL void votes(const int *pred, unsigned *out)
{
    unsigned g = ck_block_idx_x() * ck_block_threads() + ck_thread_linear();
    int p = pred[g];
    out[g * 3u + 0u] = ck_vote_ballot(p);
    out[g * 3u + 1u] = (unsigned)ck_vote_any(p);
    out[g * 3u + 2u] = (unsigned)ck_vote_all(p);
}

/* Per thread 9 outputs: add/max/min of i32, u32 and f32 (as bits). */
CK_KERNEL void reductions(const int *iv, const float *fv, unsigned *out)
{
    unsigned g = ck_block_idx_x() * ck_block_threads() + ck_thread_linear();
    unsigned *o = out + g * 9u;
    o[0] = (unsigned)ck_warp_reduce_add_i32(iv[g]);
    o[1] = (unsigned)ck_warp_reduce_max_i32(iv[g]);
    o[2] = (unsigned)ck_warp_reduce_min_i32(iv[g]);
    o[3] = ck_warp_reduce_add_u32((unsigned)iv[g]);
    o[4] = ck_warp_reduce_max_u32((unsigned)iv[g]);
    o[5] = ck_warp_reduce_min_u32((unsigned)iv[g]);
    o[6] = ck_f32_as_u32(ck_warp_reduce_add_f32(fv[g]));
    o[7] = ck_f32_as_u32(ck_warp_reduce_max_f32(fv[g]));
    o[8] = ck_f32_as_u32(ck_warp_reduce_min_f32(fv[g]));
}
