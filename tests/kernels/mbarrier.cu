/* mbarrier phases and parity: 128 threads arrive on one barrier (count 128) for `phases`
 * phases, then one phase also waits for a 64-byte transaction count.
 * ck-min-target: sm_90a (transaction counts) */
#include "ck_device.h"

/* out[p * 128 + t], for phase p < phases: bit 0 = try_wait(parity of p) before t arrived (must
 * be 0), bit 1 = try_wait(parity of p - 1) before t arrived (1: the previous phase is complete),
 * bit 2 = try_wait(parity of p) after wait_parity returned (1).
 * out[phases * 128 + t]: bit 0 = try_wait after everyone arrived but before the transaction
 * completed (0), bit 1 = after complete_tx (1).
 *
 * Each observation is stored (a volatile store) before the thread's next barrier operation: on
 * the H100 a try_wait whose result is not yet used when the thread issues a later arrive,
 * complete_tx or block barrier may observe the state after those (measured 2026-11-24: with the
 * store after the arrive every observation read "complete"; docs/device-tensor.md). */
CK_KERNEL void mbar_phases(int phases, unsigned *out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);
    unsigned t = ck_thread_idx_x();
    if (t == 0) {
        ck_mbar_init(bar, 128);
        ck_mbar_fence_init();
    }
    ck_sync_threads();
    for (int p = 0; p < phases; ++p) {
        unsigned par = (unsigned)p & 1u;
        volatile unsigned *o = out + p * 128 + (int)t;
        unsigned r = (unsigned)ck_mbar_try_wait_parity(bar, par);
        r |= (unsigned)ck_mbar_try_wait_parity(bar, par ^ 1u) << 1;
        *o = r; /* uses the observations before the arrival */
        (void)ck_mbar_arrive(bar);
        ck_mbar_wait_parity(bar, par);
        r |= (unsigned)ck_mbar_try_wait_parity(bar, par) << 2;
        *o = r;
    }
    /* phase `phases`: arrivals plus a transaction of 64 bytes */
    unsigned par = (unsigned)phases & 1u;
    if (t == 0)
        (void)ck_mbar_arrive_expect_tx(bar, 64);
    else
        (void)ck_mbar_arrive(bar);
    ck_sync_threads();
    volatile unsigned *o = out + phases * 128 + (int)t;
    unsigned r = (unsigned)ck_mbar_try_wait_parity(bar, par);
    *o = r; /* uses the observation before the barrier and complete_tx */
    ck_sync_threads();
    if (t == 1)
        ck_mbar_complete_tx(bar, 64);
    ck_mbar_wait_parity(bar, par);
    r |= (unsigned)ck_mbar_try_wait_parity(bar, par) << 1;
    *o = r;
}

/* cp.async completion on an mbarrier (ck_cp_async_mbar_arrive_noinc): for each of `phases`
 * phases, every one of 128 threads copies 16 bytes g[phase][t] into its slot of a shared buffer
 * with cp.async and arrives through the copies (the barrier counts 128 such arrivals); after the
 * phase completes, thread t reads the slot of thread 127 - t: out[p * 128 + t] = 1 when all 16
 * bytes are the ones copied in phase p. */
CK_KERNEL void mbar_cp_async(int phases, const unsigned char *g, unsigned *out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);
    CK_SHARED_ARRAY_ALIGNED(unsigned char, s, 2048, 16);
    unsigned t = ck_thread_idx_x();
    if (t == 0) {
        ck_mbar_init(bar, 128);
        ck_mbar_fence_init();
    }
    ck_sync_threads();
    for (int p = 0; p < phases; ++p) {
        const unsigned char *src = g + (size_t)p * 2048u;
        ck_cp_async_16(s + 16u * t, src + 16u * t);
        ck_cp_async_mbar_arrive_noinc(bar);
        ck_mbar_wait_parity(bar, (unsigned)p & 1u);
        unsigned o = 127u - t, good = 1;
        for (unsigned i = 0; i < 16u; ++i)
            good &= s[16u * o + i] == src[16u * o + i];
        out[p * 128 + (int)t] = good;
        ck_sync_threads(); /* every thread has read before the next phase's copies land */
    }
}
