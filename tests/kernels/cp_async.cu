/* cp.async: 16-, 8- and 4-byte copies and zero-filling copies in four commit groups, 128 threads. */
#include "ck_device.h"

/* out[0..8191]: the 8 KiB shared buffer (pre-filled with 0xCD) after thread t copied
 *   group 0: g[16t .. +16]            -> s[16 (127 - t) ..]
 *   group 1: g[2048 + 8 ((37t) % 128)] -> s[2048 + 8t ..]  (8 bytes)
 *   group 2: g[3072 + 4 ((5t) % 128)]  -> s[3072 + 4t ..]  (4 bytes)
 *   group 3: g[4096 + 16t], zbytes[t] bytes, zero-filled to 16 -> s[4096 + 16t ..]
 * ok[t]: 1 when, after ck_cp_async_wait(1), thread t sees its copies of groups 0..2. */
CK_KERNEL void cp_async_groups(const unsigned char *g, const unsigned *zbytes, unsigned char *out,
                               unsigned *ok)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, s, 8192, 16);
    unsigned t = ck_thread_idx_x();
    for (unsigned i = t; i < 8192u; i += 128u)
        s[i] = 0xCD;
    ck_sync_threads();
    unsigned a0 = 16u * (127u - t), a1 = 2048u + 8u * t, a2 = 3072u + 4u * t;
    unsigned g1 = 2048u + 8u * ((37u * t) % 128u), g2 = 3072u + 4u * ((5u * t) % 128u);
    ck_cp_async_16(s + a0, g + 16u * t);
    ck_cp_async_commit();
    ck_cp_async_8(s + a1, g + g1);
    ck_cp_async_commit();
    ck_cp_async_4(s + a2, g + g2);
    ck_cp_async_commit();
    ck_cp_async_16_zfill(s + 4096u + 16u * t, g + 4096u + 16u * t, zbytes[t]);
    ck_cp_async_commit();
    ck_cp_async_wait(1);
    unsigned good = 1;
    for (unsigned i = 0; i < 16u; ++i)
        good &= s[a0 + i] == g[16u * t + i];
    for (unsigned i = 0; i < 8u; ++i)
        good &= s[a1 + i] == g[g1 + i];
    for (unsigned i = 0; i < 4u; ++i)
        good &= s[a2 + i] == g[g2 + i];
    ok[t] = good;
    ck_cp_async_wait_all();
    ck_sync_threads();
    for (unsigned i = t; i < 8192u; i += 128u)
        out[i] = s[i];
}
