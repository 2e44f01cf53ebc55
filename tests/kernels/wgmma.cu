/* wgmma (m64nNk16 f16/bf16, m64nNk8 tf32, m64nNk32 fp8) with f32 accumulators, one warpgroup.
 * The operand tiles arrive as shared-memory images (the host lays them out and swizzles them);
 * the kernel copies them to 1024-byte aligned shared memory, builds descriptors and runs
 * `ksteps` instructions, advancing both start addresses by `kadv` bytes per step.
 * ck-min-target: sm_90a */
#include "ck_device.h"

#define WG_SMEM_A 8192
#define WG_SMEM   (8192 + 32768)

/* Variants: 0..2 bf16 N = 64/128/256, 3..5 f16 N = 64/128/256, 6 tf32 N = 64, 7 tf32 N = 128,
 * 8 e4m3 x e4m3 N = 64, 9 e5m2 x e4m3 N = 128. */
CK_DEVICE int wg_n(int variant)
{
    return variant <= 5 ? 64 << (variant % 3) : variant % 2 == 0 ? 64 : 128;
}

CK_DEVICE void wg_load_tiles(unsigned char *smem, const unsigned *ga, int a_bytes,
                             const unsigned *gb, int b_bytes)
{
    unsigned t = ck_thread_idx_x();
    unsigned *sa = (unsigned *)smem, *sb = (unsigned *)(smem + WG_SMEM_A);
    for (int i = (int)t; i < a_bytes / 4; i += 128)
        sa[i] = ga[i];
    for (int i = (int)t; i < b_bytes / 4; i += 128)
        sb[i] = gb[i];
    ck_fence_proxy_async(); /* generic-proxy writes, read by wgmma (async proxy) */
    ck_sync_threads();
}

/* Constant indices only (full unrolling): the accumulators stay in registers, never in local
 * memory the compiler could touch while a wgmma is in flight. */
CK_DEVICE void wg_store(float *out, const float *d, int n)
{
    unsigned t = ck_thread_idx_x();
    CK_UNROLL for (int i = 0; i < 128; ++i)
    {
        if (i < n / 2)
            out[(int)t * (n / 2) + i] = d[i];
    }
}

/* Both operands from shared memory (K-major). out[t * N/2 + i] = d[i] of thread t. */
CK_KERNEL void CK_LAUNCH_BOUNDS(128) wgmma_ss(int variant, int swizzle, int lbo, int sbo,
                                              int kadv, int ksteps, const unsigned *ga,
                                              int a_bytes, const unsigned *gb, int b_bytes,
                                              float *out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, WG_SMEM, 1024);
    wg_load_tiles(smem, ga, a_bytes, gb, b_bytes);
    float d[128];
    CK_UNROLL for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    for (int ks = 0; ks < ksteps; ++ks) {
        ck_wgmma_fence();
        unsigned long long da = ck_wgmma_desc(smem + ks * kadv, (unsigned)lbo, (unsigned)sbo, swizzle);
        unsigned long long db =
            ck_wgmma_desc(smem + WG_SMEM_A + ks * kadv, (unsigned)lbo, (unsigned)sbo, swizzle);
        int sd = ks > 0;
        switch (variant) {
        case 0: CK_WGMMA_SS(64, bf16, d, da, db, sd, 1, 1, 0, 0); break;
        case 1: CK_WGMMA_SS(128, bf16, d, da, db, sd, 1, 1, 0, 0); break;
        case 2: CK_WGMMA_SS(256, bf16, d, da, db, sd, 1, 1, 0, 0); break;
        case 3: CK_WGMMA_SS(64, f16, d, da, db, sd, 1, 1, 0, 0); break;
        case 4: CK_WGMMA_SS(128, f16, d, da, db, sd, 1, 1, 0, 0); break;
        case 5: CK_WGMMA_SS(256, f16, d, da, db, sd, 1, 1, 0, 0); break;
        case 6: CK_WGMMA_SS_TF32(64, d, da, db, sd, 1, 1); break;
        case 7: CK_WGMMA_SS_TF32(128, d, da, db, sd, 1, 1); break;
        case 8: CK_WGMMA_SS_F8(64, e4m3, e4m3, d, da, db, sd, 1, 1); break;
        default: CK_WGMMA_SS_F8(128, e5m2, e4m3, d, da, db, sd, 1, 1); break;
        }
        ck_wgmma_commit_group();
        ck_wgmma_wait_group(0);
    }
    wg_store(out, d, wg_n(variant));
}

/* A from registers: afrag[(ks * 128 + t) * 4 + i] is register i of thread t for k-step ks (the
 * mma.sync A fragment of rows 16w..16w+15); B from shared memory as in wgmma_ss. */
CK_KERNEL void CK_LAUNCH_BOUNDS(128) wgmma_rs(int variant, int swizzle, int lbo, int sbo,
                                              int kadv, int ksteps, const unsigned *afrag,
                                              const unsigned *gb, int b_bytes, float *out)
{
    CK_SHARED_ARRAY_ALIGNED(unsigned char, smem, WG_SMEM, 1024);
    wg_load_tiles(smem, gb, 0, gb, b_bytes);
    unsigned t = ck_thread_idx_x();
    float d[128];
    CK_UNROLL for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    for (int ks = 0; ks < ksteps; ++ks) {
        unsigned a[4];
        for (int i = 0; i < 4; ++i)
            a[i] = afrag[((unsigned)ks * 128u + t) * 4u + (unsigned)i];
        ck_wgmma_fence(); /* orders the writes of a (and d) before the instruction */
        unsigned long long db =
            ck_wgmma_desc(smem + WG_SMEM_A + ks * kadv, (unsigned)lbo, (unsigned)sbo, swizzle);
        int sd = ks > 0;
        switch (variant) {
        case 0: CK_WGMMA_RS(64, bf16, d, a, db, sd, 1, 1, 0); break;
        case 1: CK_WGMMA_RS(128, bf16, d, a, db, sd, 1, 1, 0); break;
        case 2: CK_WGMMA_RS(256, bf16, d, a, db, sd, 1, 1, 0); break;
        case 3: CK_WGMMA_RS(64, f16, d, a, db, sd, 1, 1, 0); break;
        case 4: CK_WGMMA_RS(128, f16, d, a, db, sd, 1, 1, 0); break;
        case 5: CK_WGMMA_RS(256, f16, d, a, db, sd, 1, 1, 0); break;
        case 6: CK_WGMMA_RS_TF32(64, d, a, db, sd, 1, 1); break;
        case 7: CK_WGMMA_RS_TF32(128, d, a, db, sd, 1, 1); break;
        case 8: CK_WGMMA_RS_F8(64, e4m3, e4m3, d, a, db, sd, 1, 1); break;
        default: CK_WGMMA_RS_F8(128, e5m2, e4m3, d, a, db, sd, 1, 1); break;
        }
        ck_wgmma_commit_group();
        ck_wgmma_wait_group(0); /* the registers of a are reused next step */
    }
    wg_store(out, d, wg_n(variant));
}
