/* Atomics on global and shared memory, int/unsigned/float (conformance kernels). */
#include "ck_device.h"

/* gi[0..2]: add/max/min i32; gu[0..4]: add/max/min u32, CAS counter, exchange; gf[0..2]:
 * add/max/min f32 (exact values); old[g]: what the exchange returned. */
CK_KERNEL void atomics_global(const int *vals, int *gi, unsigned *gu, float *gf, unsigned *old)
{
    unsigned g = ck_block_idx_x() * ck_block_threads() + ck_thread_linear();
    int v = vals[g];
    ck_atomic_add_i32(&gi[0], v);
    ck_atomic_max_i32(&gi[1], v);
    ck_atomic_min_i32(&gi[2], v);
    ck_atomic_add_u32(&gu[0], (unsigned)v);
    ck_atomic_max_u32(&gu[1], (unsigned)v);
    ck_atomic_min_u32(&gu[2], (unsigned)v);
    unsigned seen = gu[3];
    for (;;) {
        unsigned prev = ck_atomic_cas_u32(&gu[3], seen, seen + 1u);
        if (prev == seen)
            break;
        seen = prev;
    }
    old[g] = ck_atomic_exch_u32(&gu[4], g);
    ck_atomic_add_f32(&gf[0], (float)(v % 64));
    ck_atomic_max_f32(&gf[1], (float)v * 0.125f);
    ck_atomic_min_f32(&gf[2], (float)v * 0.125f);
    ck_fence_device();
}

/* Per block: a 16-bin histogram of vals & 15 in shared memory, the maximum and minimum (i32),
 * an exchanged/CAS'd float; written to out[block * 20 ...]. */
CK_KERNEL void atomics_shared(const int *vals, int *out)
{
    CK_SHARED_ARRAY(unsigned, hist, 16);
    CK_SHARED_ARRAY(int, mm, 4);
    CK_SHARED_ARRAY(float, fs, 2);
    unsigned t = ck_thread_linear(), g = ck_block_idx_x() * ck_block_threads() + t;
    if (t < 16u)
        hist[t] = 0u;
    if (t == 0u) {
        mm[0] = -2147483647 - 1;
        mm[1] = 2147483647;
        mm[2] = 0;
        mm[3] = 0;
        fs[0] = 0.0f;
        fs[1] = 0.0f;
    }
    ck_sync_threads();
    int v = vals[g];
    ck_atomic_add_u32(&hist[(unsigned)v & 15u], 1u);
    ck_atomic_max_i32(&mm[0], v);
    ck_atomic_min_i32(&mm[1], v);
    ck_atomic_add_i32(&mm[2], 1);
    ck_atomic_cas_i32(&mm[3], 0, (int)t + 1); /* exactly one thread wins */
    ck_atomic_add_f32(&fs[0], 0.5f);
    ck_atomic_max_f32(&fs[1], (float)(v & 255));
    ck_fence_block();
    ck_sync_threads();
    int *o = out + ck_block_idx_x() * 24u;
    if (t < 16u)
        o[t] = (int)hist[t];
    if (t == 0u) {
        o[16] = mm[0];
        o[17] = mm[1];
        o[18] = mm[2];
        o[19] = mm[3] != 0;
        o[20] = (int)fs[0];
        o[21] = (int)fs[1];
        o[22] = (int)ck_atomic_exch_i32(&mm[2], 7);
        o[23] = mm[2];
    }
}
