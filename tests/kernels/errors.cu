/* Kernels that go wrong on purpose (emulator bad-input tests; not for the GPU check). */
#include "ck_device.h"

/* Thread 0 exits while the others wait at the block barrier. */
CK_KERNEL void early_exit(int *out)
{
    if (ck_thread_linear() == 0)
        return;
    ck_sync_threads();
    out[ck_thread_linear()] = 1;
}

/* Half the block waits at barrier 0, the other half at barrier 1. */
CK_KERNEL void split_barriers(int *out)
{
    if (ck_thread_linear() < 64)
        ck_sync_threads();
    else
        ck_named_barrier_sync(1, 128);
    out[ck_thread_linear()] = 2;
}

/* Lane 3 of warp 0 skips the shuffle the others wait in. */
CK_KERNEL void divergent_shuffle(int *out)
{
    unsigned t = ck_thread_linear();
    if (t != 3)
        out[t] = (int)ck_shfl_xor_u32(t, 1);
    else
        ck_sync_threads();
}

CK_KERNEL void traps(int *out)
{
    if (ck_block_idx_x() == 1 && ck_thread_linear() == 5)
        ck_trap();
    out[0] = 1;
}

/* Reads one element past the end of `in` (n elements). */
CK_KERNEL void out_of_bounds(const int *in, int *out, int n)
{
    unsigned t = ck_thread_linear();
    out[t] = in[t + (unsigned)n];
}

CK_KERNEL void no_params(void) {}

/* Barrier misuse: two thread counts on barrier 2 at once (64 vs 96 threads). */
CK_KERNEL void barrier_counts(int *out)
{
    if (ck_thread_linear() < 32)
        ck_named_barrier_sync(2, 64);
    else
        ck_named_barrier_sync(2, 96);
    out[0] = 1;
}

/* Barrier id out of range. */
CK_KERNEL void barrier_id(int *out)
{
    ck_named_barrier_sync(16, 32);
    out[0] = 1;
}

