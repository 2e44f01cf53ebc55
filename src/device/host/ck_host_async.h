/*
 * Host (CPU emulator) implementation of the asynchronous part of the device C dialect: wgmma
 * (warpgroup collective, completes at issue), mbarrier (atomic phase / transaction state in the
 * barrier's 8 bytes, waits yield the fiber), the tensor copy engine (box copies at issue with
 * complete_tx on the barrier), fences, setmaxnreg (no-op) and elect. Included by
 * host/ck_host_tensor.h; the model is described there and in docs/device-tensor.md.
 */
#ifndef CK_DEVICE_HOST_CK_HOST_ASYNC_H
#define CK_DEVICE_HOST_CK_HOST_ASYNC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ wgmma */

static inline unsigned long long ck_wgmma_desc(const void *smem, unsigned lbo_bytes,
                                               unsigned sbo_bytes, int swizzle)
{
    return ck_emu_wgmma_desc_make(ck_smem_addr(smem), lbo_bytes, sbo_bytes, (unsigned)swizzle);
}
static inline void ck_wgmma_fence(void) {}
static inline void ck_wgmma_commit_group(void) {}
static inline void ck_wgmma_wait_group(int n)
{
    (void)n;
}
static inline void ck_wgmma_fence_operand(float *d, int n)
{
    (void)d;
    (void)n;
}

typedef struct ck_emu_wgmma_lane {
    uint64_t desc_a, desc_b;
    uint32_t a[4];
    int32_t scale_d;
    uint32_t pad;
    float d[128]; /* only the first n/2 are transferred */
} ck_emu_wgmma_lane;

static inline void ck_emu_wgmma_fn_(const void *all_in, void *all_out, void *ctx)
{
    ck_emu_wgmma_args p = *(const ck_emu_wgmma_args *)ctx;
    /* as ck_emu_wgmma_: at most 128 floats per lane travel (an invalid N yields NaN) */
    size_t half = (p.n <= 256u ? p.n : 256u) / 2u;
    size_t stride = offsetof(ck_emu_wgmma_lane, d) + 4u * half;
    const unsigned char *in = (const unsigned char *)all_in;
    uint32_t a_regs[128][4];
    float *d = (float *)all_out;
    ck_emu_wgmma_lane l0;
    memcpy(&l0, in, offsetof(ck_emu_wgmma_lane, d));
    p.desc_a = l0.desc_a, p.desc_b = l0.desc_b, p.scale_d = l0.scale_d != 0;
    for (unsigned l = 0; l < 128; ++l) {
        memcpy(a_regs[l], in + l * stride + offsetof(ck_emu_wgmma_lane, a), sizeof a_regs[l]);
        memcpy(d + l * half, in + l * stride + offsetof(ck_emu_wgmma_lane, d), 4u * half);
    }
    if (ck_emu_ref_wgmma_f32(&p, d, (const uint32_t(*)[4])a_regs,
                             (const uint8_t *)ck_emu_shared_base(), ck_emu_shared_bytes()) != 0) {
        CK_EMU_TC_FAULT("wgmma: an operand descriptor addresses memory outside the block's shared "
                        "memory, or N / the input types are not a supported combination");
        for (size_t i = 0; i < 128u * half; ++i)
            d[i] = NAN;
    }
}

/* One wgmma.mma_async.m64nNk{8,16,32}.f32 by the calling thread's warpgroup (formats fa, fb). */
static inline void ck_emu_wgmma_(unsigned n, ck_emu_elem fa, ck_emu_elem fb, float *d,
                                 const unsigned *a, unsigned long long desc_a,
                                 unsigned long long desc_b, int scale_d, int scale_a, int scale_b,
                                 int tnsp_a, int tnsp_b)
{
    ck_emu_wgmma_args cfg;
    ck_emu_wgmma_lane in;
    unsigned half = n <= 256u ? n / 2u : 128u;
    memset(&cfg, 0, sizeof cfg);
    cfg.n = n, cfg.fa = fa, cfg.fb = fb, cfg.a_in_regs = a != NULL;
    cfg.neg_a = scale_a < 0, cfg.neg_b = scale_b < 0, cfg.tnsp_a = tnsp_a, cfg.tnsp_b = tnsp_b;
    memset(&in, 0, sizeof in);
    in.desc_a = desc_a, in.desc_b = desc_b, in.scale_d = scale_d;
    if (a)
        memcpy(in.a, a, sizeof in.a);
    memcpy(in.d, d, 4u * half);
    ck_emu_group_collective(128, &in, offsetof(ck_emu_wgmma_lane, d) + 4u * half, d, 4u * half,
                            ck_emu_wgmma_fn_, &cfg);
}

#define CK_EMU_WG_FMT_f16  CK_EMU_F16
#define CK_EMU_WG_FMT_bf16 CK_EMU_BF16
#define CK_EMU_WG_FMT_e4m3 CK_EMU_E4M3
#define CK_EMU_WG_FMT_e5m2 CK_EMU_E5M2
#define CK_WGMMA_SS(N, TYPE, d, da, db, sd, SA, SB, TA, TB)                                        \
    ck_emu_wgmma_((N), CK_EMU_WG_FMT_##TYPE, CK_EMU_WG_FMT_##TYPE, (d), NULL, (da), (db), (sd),    \
                  (SA), (SB), (TA), (TB))
#define CK_WGMMA_RS(N, TYPE, d, a, db, sd, SA, SB, TB)                                             \
    ck_emu_wgmma_((N), CK_EMU_WG_FMT_##TYPE, CK_EMU_WG_FMT_##TYPE, (d), (a), 0ull, (db), (sd),     \
                  (SA), (SB), 0, (TB))
#define CK_WGMMA_SS_TF32(N, d, da, db, sd, SA, SB)                                                 \
    ck_emu_wgmma_((N), CK_EMU_TF32, CK_EMU_TF32, (d), NULL, (da), (db), (sd), (SA), (SB), 0, 0)
#define CK_WGMMA_RS_TF32(N, d, a, db, sd, SA, SB)                                                  \
    ck_emu_wgmma_((N), CK_EMU_TF32, CK_EMU_TF32, (d), (a), 0ull, (db), (sd), (SA), (SB), 0, 0)
#define CK_WGMMA_SS_F8(N, TA, TB, d, da, db, sd, SA, SB)                                           \
    ck_emu_wgmma_((N), CK_EMU_WG_FMT_##TA, CK_EMU_WG_FMT_##TB, (d), NULL, (da), (db), (sd), (SA),  \
                  (SB), 0, 0)
#define CK_WGMMA_RS_F8(N, TA, TB, d, a, db, sd, SA, SB)                                            \
    ck_emu_wgmma_((N), CK_EMU_WG_FMT_##TA, CK_EMU_WG_FMT_##TB, (d), (a), 0ull, (db), (sd), (SA),   \
                  (SB), 0, 0)

/* ------------------------------------------------------------------ mbarrier */

/* Atomically apply one state update; returns the state before it. */
static inline unsigned long long ck_emu_mbar_apply_(unsigned long long *bar, unsigned arrivals,
                                                    int32_t tx)
{
    unsigned long long old = __atomic_load_n(bar, __ATOMIC_ACQUIRE), nw;
    do {
        nw = (unsigned long long)ck_emu_ref_mbar_update((uint64_t)old, arrivals, tx);
    } while (!__atomic_compare_exchange_n(bar, &old, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return old;
}

static inline void ck_mbar_init(unsigned long long *bar, unsigned count)
{
    __atomic_store_n(bar, (unsigned long long)ck_emu_ref_mbar_init(count), __ATOMIC_RELEASE);
}
static inline void ck_mbar_inval(unsigned long long *bar)
{
    __atomic_store_n(bar, 0ull, __ATOMIC_RELEASE);
}
static inline void ck_mbar_fence_init(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline unsigned long long ck_mbar_arrive(unsigned long long *bar)
{
    return ck_emu_mbar_apply_(bar, 1, 0);
}
/* cp.async completes at issue in the emulator: the arrival the copies trigger is immediate. */
static inline void ck_cp_async_mbar_arrive_noinc(unsigned long long *bar)
{
    ck_emu_mbar_apply_(bar, 1, 0);
}
static inline unsigned long long ck_mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes)
{
    return ck_emu_mbar_apply_(bar, 1, (int32_t)bytes);
}
static inline void ck_mbar_expect_tx(unsigned long long *bar, unsigned bytes)
{
    ck_emu_mbar_apply_(bar, 0, (int32_t)bytes);
}
static inline void ck_mbar_complete_tx(unsigned long long *bar, unsigned bytes)
{
    ck_emu_mbar_apply_(bar, 0, -(int32_t)bytes);
}
/* Test; when the phase is not complete, let other fibers run once and test again (the GPU's
 * try_wait also suspends for a while before reporting failure). */
static inline int ck_mbar_try_wait_parity(unsigned long long *bar, unsigned parity)
{
    if (ck_emu_ref_mbar_test_parity(__atomic_load_n(bar, __ATOMIC_ACQUIRE), parity))
        return 1;
    ck_emu_yield();
    return ck_emu_ref_mbar_test_parity(__atomic_load_n(bar, __ATOMIC_ACQUIRE), parity);
}
static inline void ck_mbar_wait_parity(unsigned long long *bar, unsigned parity)
{
    while (!ck_emu_ref_mbar_test_parity(__atomic_load_n(bar, __ATOMIC_ACQUIRE), parity))
        ck_emu_yield();
}

static inline void ck_mbar_arrive_cluster(unsigned long long *bar, unsigned rank)
{
    ck_emu_mbar_apply_((unsigned long long *)ck_cluster_map_shared(bar, rank), 1, 0);
}
static inline void ck_mbar_arrive_remote(unsigned long long *bar, unsigned rank)
{
    ck_mbar_arrive_cluster(bar, rank);
}
static inline void ck_mbar_wait_parity_cluster(unsigned long long *bar, unsigned parity)
{
    ck_mbar_wait_parity(bar, parity);
}

/* ------------------------------------------------------------------ st.async */

/* The store, then the completion on the target block's barrier (an atomic update with release
 * order, so a waiter that sees the phase complete sees the data). */
static inline void ck_st_async_f32(float *dst, float v, unsigned long long *bar, unsigned rank)
{
    *(float *)ck_cluster_map_shared(dst, rank) = v;
    ck_mbar_complete_tx((unsigned long long *)ck_cluster_map_shared(bar, rank), 4);
}
static inline void ck_st_async_2f32(float *dst, float a, float b, unsigned long long *bar,
                                    unsigned rank)
{
    float *t = (float *)ck_cluster_map_shared(dst, rank);
    t[0] = a;
    t[1] = b;
    ck_mbar_complete_tx((unsigned long long *)ck_cluster_map_shared(bar, rank), 8);
}

/* ------------------------------------------------------------------ tensor copy engine */

static inline int ck_emu_tmap_get_(const ck_tensor_map *map, ck_emu_tmap_desc *d)
{
    memcpy(d, map->opaque, sizeof *d);
    if (d->magic == CK_EMU_TMAP_MAGIC && d->rank >= 1 && d->rank <= 5)
        return 1;
    CK_EMU_TC_FAULT(
        "TMA: the tensor map was not built for the emulator (ck_tensor_map_encode_emu)");
    return 0;
}

/* Copy one box into the shared memory at `base` (a block's shared memory) and complete its
 * bytes on the barrier at the same offset. */
static inline void ck_emu_tma_load_into_(const ck_emu_tmap_desc *d, const int32_t *coords,
                                         unsigned char *base, size_t bytes, uint32_t smem_off,
                                         uint32_t bar_off)
{
    uint32_t n = ck_emu_ref_tma_copy(d, coords, base, bytes, smem_off, 0);
    if (n == 0) {
        CK_EMU_TC_FAULT("TMA load: the box does not fit in shared memory at the destination");
        return;
    }
    if ((size_t)bar_off + 8u <= bytes)
        ck_emu_mbar_apply_((unsigned long long *)(void *)(base + bar_off), 0, -(int32_t)n);
}

/* The H100 raises an illegal instruction when the box's innermost coordinate is not a multiple
 * of 16 bytes (measured on 2026-11-22 for loads of every swizzle mode, positive and negative
 * coordinates; stores are assumed to follow the same rule). The emulator stops the launch
 * instead of copying, so it never accepts what the hardware refuses. */
static inline int ck_emu_tma_coord_ok_(const ck_emu_tmap_desc *d, const int32_t *coords)
{
    if (((int64_t)coords[0] * (int64_t)d->elem_bytes) % 16 == 0)
        return 1;
    CK_EMU_TC_FAULT("TMA: the innermost box coordinate times the element size is not a multiple "
                    "of 16 bytes (the GPU raises an illegal instruction)");
    return 0;
}

static inline void ck_emu_tma_load_(void *smem, const ck_tensor_map *map, unsigned long long *bar,
                                    const int32_t *coords, int multicast, unsigned short mask)
{
    ck_emu_tmap_desc d;
    if (!ck_emu_tmap_get_(map, &d) || !ck_emu_tma_coord_ok_(&d, coords))
        return;
    uint32_t off = ck_smem_addr(smem), boff = ck_smem_addr(bar);
    unsigned char *own = (unsigned char *)ck_emu_shared_base();
    if (!multicast) {
        ck_emu_tma_load_into_(&d, coords, own, ck_emu_shared_bytes(), off, boff);
        return;
    }
#ifdef CK_EMU_TC_HAVE_CLUSTER
    /* the same offsets in each destination block of the cluster */
    for (unsigned r = 0; r < 16u && r < ck_cluster_nctarank(); ++r)
        if (mask & (1u << r))
            ck_emu_tma_load_into_(&d, coords, (unsigned char *)ck_cluster_map_shared(own, r),
                                  ck_emu_shared_bytes(), off, boff);
#else
    if (mask & 1u) /* the block is rank 0 of a one-block cluster */
        ck_emu_tma_load_into_(&d, coords, own, ck_emu_shared_bytes(), off, boff);
#endif
}

static inline void ck_emu_tma_store_(const ck_tensor_map *map, const void *smem,
                                     const int32_t *coords)
{
    ck_emu_tmap_desc d;
    if (!ck_emu_tmap_get_(map, &d) || !ck_emu_tma_coord_ok_(&d, coords))
        return;
    /* A store at a negative coordinate (any dimension, any swizzle) is an illegal instruction
     * on the H100 (measured 2026-11-22); loads accept negative coordinates (zero fill). */
    for (unsigned i = 0; i < d.rank; ++i)
        if (coords[i] < 0) {
            CK_EMU_TC_FAULT("TMA store: a box coordinate is negative (the GPU raises an illegal "
                            "instruction; only loads may start outside the tensor)");
            return;
        }
    if (ck_emu_ref_tma_copy(&d, coords, (uint8_t *)ck_emu_shared_base(), ck_emu_shared_bytes(),
                            ck_smem_addr(smem), 1) == 0)
        CK_EMU_TC_FAULT("TMA store: the box does not fit in shared memory at the source");
}

static inline void ck_tma_prefetch_map(const ck_tensor_map *map)
{
    (void)map;
}

static inline void ck_tma_load_1d(void *s, const ck_tensor_map *m, unsigned long long *b, int c0)
{
    int32_t c[5] = {c0, 0, 0, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 0, 0);
}
static inline void ck_tma_load_2d(void *s, const ck_tensor_map *m, unsigned long long *b, int c0,
                                  int c1)
{
    int32_t c[5] = {c0, c1, 0, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 0, 0);
}
static inline void ck_tma_load_3d(void *s, const ck_tensor_map *m, unsigned long long *b, int c0,
                                  int c1, int c2)
{
    int32_t c[5] = {c0, c1, c2, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 0, 0);
}
static inline void ck_tma_load_4d(void *s, const ck_tensor_map *m, unsigned long long *b, int c0,
                                  int c1, int c2, int c3)
{
    int32_t c[5] = {c0, c1, c2, c3, 0};
    ck_emu_tma_load_(s, m, b, c, 0, 0);
}
static inline void ck_tma_load_5d(void *s, const ck_tensor_map *m, unsigned long long *b, int c0,
                                  int c1, int c2, int c3, int c4)
{
    int32_t c[5] = {c0, c1, c2, c3, c4};
    ck_emu_tma_load_(s, m, b, c, 0, 0);
}
static inline void ck_tma_load_1d_multicast(void *s, const ck_tensor_map *m, unsigned long long *b,
                                            int c0, unsigned short mask)
{
    int32_t c[5] = {c0, 0, 0, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 1, mask);
}
static inline void ck_tma_load_2d_multicast(void *s, const ck_tensor_map *m, unsigned long long *b,
                                            int c0, int c1, unsigned short mask)
{
    int32_t c[5] = {c0, c1, 0, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 1, mask);
}
static inline void ck_tma_load_3d_multicast(void *s, const ck_tensor_map *m, unsigned long long *b,
                                            int c0, int c1, int c2, unsigned short mask)
{
    int32_t c[5] = {c0, c1, c2, 0, 0};
    ck_emu_tma_load_(s, m, b, c, 1, mask);
}
static inline void ck_tma_load_4d_multicast(void *s, const ck_tensor_map *m, unsigned long long *b,
                                            int c0, int c1, int c2, int c3, unsigned short mask)
{
    int32_t c[5] = {c0, c1, c2, c3, 0};
    ck_emu_tma_load_(s, m, b, c, 1, mask);
}
static inline void ck_tma_load_5d_multicast(void *s, const ck_tensor_map *m, unsigned long long *b,
                                            int c0, int c1, int c2, int c3, int c4,
                                            unsigned short mask)
{
    int32_t c[5] = {c0, c1, c2, c3, c4};
    ck_emu_tma_load_(s, m, b, c, 1, mask);
}
static inline void ck_tma_store_1d(const ck_tensor_map *m, const void *s, int c0)
{
    int32_t c[5] = {c0, 0, 0, 0, 0};
    ck_emu_tma_store_(m, s, c);
}
static inline void ck_tma_store_2d(const ck_tensor_map *m, const void *s, int c0, int c1)
{
    int32_t c[5] = {c0, c1, 0, 0, 0};
    ck_emu_tma_store_(m, s, c);
}
static inline void ck_tma_store_3d(const ck_tensor_map *m, const void *s, int c0, int c1, int c2)
{
    int32_t c[5] = {c0, c1, c2, 0, 0};
    ck_emu_tma_store_(m, s, c);
}
static inline void ck_tma_store_4d(const ck_tensor_map *m, const void *s, int c0, int c1, int c2,
                                   int c3)
{
    int32_t c[5] = {c0, c1, c2, c3, 0};
    ck_emu_tma_store_(m, s, c);
}
static inline void ck_tma_store_5d(const ck_tensor_map *m, const void *s, int c0, int c1, int c2,
                                   int c3, int c4)
{
    int32_t c[5] = {c0, c1, c2, c3, c4};
    ck_emu_tma_store_(m, s, c);
}
static inline void ck_tma_store_commit(void) {}
static inline void ck_tma_store_wait(int n)
{
    (void)n;
}
static inline void ck_tma_store_wait_read(int n)
{
    (void)n;
}

/* ------------------------------------------------------------------ fences, registers, elect */

static inline void ck_fence_proxy_async(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#define CK_SETMAXNREG_INC(n) ((void)0)
#define CK_SETMAXNREG_DEC(n) ((void)0)

static inline void ck_emu_elect_fn_(const void *all_in, void *all_out, void *ctx)
{
    const unsigned char *in = (const unsigned char *)all_in;
    unsigned char *out = (unsigned char *)all_out;
    int done = 0;
    (void)ctx;
    for (unsigned l = 0; l < 32; ++l) {
        out[l] = (unsigned char)(!done && in[l]);
        done |= in[l];
    }
}
/* 1 in the lowest-numbered active lane of the warp, 0 elsewhere. */
static inline int ck_elect_one(void)
{
    unsigned char me = 1, out = 0;
    ck_emu_group_collective(32, &me, 1, &out, 1, ck_emu_elect_fn_, NULL);
    return out;
}

#endif
