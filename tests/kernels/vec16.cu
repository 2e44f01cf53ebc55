/* 16-byte vector loads and stores with cache hints, through global and shared memory. */
#include "ck_device.h"

/* 64 threads per block, 16 bytes per thread per array: out1 = in (plain), out2 = in (nc + cs
 * store, words rotated), out3 = in through shared memory. */
CK_KERNEL void vec16(const unsigned *in, unsigned *out1, unsigned *out2, unsigned *out3)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned, s, 256, 16);
    unsigned t = ck_thread_linear(), g = ck_block_idx_x() * ck_block_threads() + t;
    ck_u32x4 a = ck_ld16(in + g * 4u);
    ck_st16(out1 + g * 4u, a);
    ck_u32x4 b = ck_ld16_nc(in + g * 4u);
    ck_u32x4 r;
    r.x = b.y;
    r.y = b.z;
    r.z = b.w;
    r.w = b.x;
    ck_st16_cs(out2 + g * 4u, r);
    ck_u32x4 c = ck_ld16_cs(in + g * 4u);
    ck_st16(s + (63u - t) * 4u, c);
    ck_sync_threads();
    ck_st16(out3 + g * 4u, ck_ld16(s + (63u - t) * 4u));
}

/* Misaligned on purpose (bad-input test; not for the GPU check). */
CK_KERNEL void vec16_misaligned(const unsigned *in, unsigned *out)
{
    ck_st16(out, ck_ld16(in + 1));
}
