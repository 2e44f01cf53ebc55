/*
 * ck_block.h - the device block library: stages that operation pipelines are assembled from,
 * written over the prelude's names only (ck_device.h), so they run on the GPU and in the
 * emulator alike. Op kernels include it after ck_device.h.
 *
 *   convert     exact fast conversions f32 <-> f16 / bf16 / fp8 (ck_convert.h)
 *   by dtype    element and vector loads / stores of any float type as f32, widest aligned
 *               access (ck_vector.h)
 *   row reduce  lanes -> group -> cluster reductions: sum, max, NaN-max, Welford, the
 *               online-softmax (m, l) merge, the st.async cluster exchange (ck_reduction.h)
 *   vectors     ck_f32x4 / ck_b16x8 (8 f16 or bf16 bit patterns): ck_load_* / ck_store_* of 16
 *               bytes (16-byte aligned), ck_load_bf16x8_as_f32 / ck_store_f32_as_bf16x8
 *   reductions  ck_warp_sum_f32 / ck_warp_max_f32 (every lane gets the result),
 *               ck_block_sum_f32 / ck_block_max_f32 (every thread of the block; 32 floats of
 *               shared scratch; all threads must call)
 *   stage ring  ck_ring: `stages` slots, each a full and an empty mbarrier, for a producer
 *               (TMA) and consumers (tensor cores) that walk the slots in the same order:
 *                 ck_ring_init (one thread, then a block barrier); ck_ring_init_fills
 *                 when producer threads also fill slots with cp.async
 *                 producer:  ck_ring_acquire (wait until the slot is empty)
 *                            ck_ring_expect (arm its full barrier with the bytes coming; returns
 *                            the barrier the copies complete on)
 *                 consumer:  ck_ring_wait (wait until the slot is full)
 *                            ck_ring_release (one arrival on the empty barrier)
 *                 both:      ck_ring_next (next slot; the phase flips after the last)
 *               A fresh barrier reports parity 1 complete, so the producer's first round of
 *               acquires passes at once.
 *   registers   ck_warpgroup_id / ck_warpgroup_thread, CK_WARPGROUP_THREADS, and the role
 *               split of setmaxnreg: CK_REGS_PRODUCER(n) lowers, CK_REGS_CONSUMER(n) raises the
 *               calling warpgroup's register budget (literal n; needs a kernel declared with
 *               CK_LAUNCH_BOUNDS(threads, 1); each role one branch of one if/else).
 */
#ifndef CK_DEVICE_CK_BLOCK_H
#define CK_DEVICE_CK_BLOCK_H

#include "ck_device.h"
#include "ck_convert.h"
#include "ck_vector.h"
#include "ck_reduction.h"

/* ---- typed 16-byte vectors ------------------------------------------------------------------ */

typedef struct ck_f32x4 {
    float v[4];
} ck_f32x4;

typedef struct ck_b16x8 { /* 8 f16 or bf16 bit patterns */
    unsigned short v[8];
} ck_b16x8;

CK_DEVICE ck_f32x4 ck_load_f32x4(const float *p)
{
    ck_u32x4 u = ck_ld16(p);
    ck_f32x4 r;
    r.v[0] = ck_u32_as_f32(u.x), r.v[1] = ck_u32_as_f32(u.y);
    r.v[2] = ck_u32_as_f32(u.z), r.v[3] = ck_u32_as_f32(u.w);
    return r;
}

CK_DEVICE void ck_store_f32x4(float *p, ck_f32x4 a)
{
    ck_u32x4 u;
    u.x = ck_f32_as_u32(a.v[0]), u.y = ck_f32_as_u32(a.v[1]);
    u.z = ck_f32_as_u32(a.v[2]), u.w = ck_f32_as_u32(a.v[3]);
    ck_st16(p, u);
}

CK_DEVICE unsigned ck_pack_b16x2_(unsigned short lo, unsigned short hi)
{
    return (unsigned)lo | ((unsigned)hi << 16);
}

CK_DEVICE ck_b16x8 ck_load_b16x8(const unsigned short *p)
{
    ck_u32x4 u = ck_ld16(p);
    unsigned w[4] = {u.x, u.y, u.z, u.w};
    ck_b16x8 r;
    for (int i = 0; i < 4; ++i) {
        r.v[2 * i] = (unsigned short)(w[i] & 0xFFFFu);
        r.v[2 * i + 1] = (unsigned short)(w[i] >> 16);
    }
    return r;
}

CK_DEVICE void ck_store_b16x8(unsigned short *p, ck_b16x8 a)
{
    ck_u32x4 u;
    u.x = ck_pack_b16x2_(a.v[0], a.v[1]), u.y = ck_pack_b16x2_(a.v[2], a.v[3]);
    u.z = ck_pack_b16x2_(a.v[4], a.v[5]), u.w = ck_pack_b16x2_(a.v[6], a.v[7]);
    ck_st16(p, u);
}

/* dst[0..8) = the 8 bf16 values at p, as floats (exact). */
CK_DEVICE void ck_load_bf16x8_as_f32(float *dst, const unsigned short *p)
{
    ck_b16x8 b = ck_load_b16x8(p);
    for (int i = 0; i < 8; ++i)
        dst[i] = ck_u32_as_f32((unsigned)b.v[i] << 16);
}

/* The 8 floats of src rounded to bf16 (nearest even) and stored at p. */
CK_DEVICE void ck_store_f32_as_bf16x8(unsigned short *p, const float *src)
{
    ck_b16x8 b;
    for (int i = 0; i < 8; ++i)
        b.v[i] = (unsigned short)ck_fast_f32_to_bf16(src[i]);
    ck_store_b16x8(p, b);
}

/* ---- reductions ----------------------------------------------------------------------------- */

CK_DEVICE float ck_warp_sum_f32(float v)
{
    return ck_warp_reduce_add_f32(v);
}

CK_DEVICE float ck_warp_max_f32(float v)
{
    return ck_warp_reduce_max_f32(v);
}

/* Block-wide: each warp's result goes to scratch[warp]; warp 0 combines them; every thread
 * returns the total. Two block barriers (scratch is reusable after the call). */
CK_DEVICE float ck_block_reduce_f32_(float v, float *scratch, int is_max)
{
    unsigned warps = (ck_block_threads() + 31u) / 32u, w = ck_warp_id(), l = ck_lane_id();
    v = is_max ? ck_warp_max_f32(v) : ck_warp_sum_f32(v);
    if (l == 0)
        scratch[w] = v;
    ck_sync_threads();
    if (w == 0) {
        float x = l < warps ? scratch[l] : (is_max ? ck_u32_as_f32(0xFF800000u) : 0.0f);
        x = is_max ? ck_warp_max_f32(x) : ck_warp_sum_f32(x);
        if (l == 0)
            scratch[32] = x;
    }
    ck_sync_threads();
    return scratch[32];
}

/* scratch: 33 floats of shared memory. */
CK_DEVICE float ck_block_sum_f32(float v, float *scratch)
{
    return ck_block_reduce_f32_(v, scratch, 0);
}

CK_DEVICE float ck_block_max_f32(float v, float *scratch)
{
    return ck_block_reduce_f32_(v, scratch, 1);
}

/* ---- stage ring of full / empty mbarriers ---------------------------------------------------- */

typedef struct ck_ring {
    unsigned long long *full;  /* [stages]: completes when the slot's data has landed */
    unsigned long long *empty; /* [stages]: completes when every consumer has released it */
    int stages;
} ck_ring;

/* A walker's position: slot and the parity of the slot's current phase. */
typedef struct ck_ring_pos {
    int slot;
    unsigned phase;
} ck_ring_pos;

/* The ring over bars: 2 * stages mbarriers in shared memory. */
CK_DEVICE ck_ring ck_ring_make(unsigned long long *bars, int stages)
{
    ck_ring r;
    r.full = bars, r.empty = bars + stages, r.stages = stages;
    return r;
}

/* Called by one thread; a block (or cluster) barrier must follow before any use.
 * `fills`: the arrivals that fill a slot (1: the producer's ck_ring_expect alone; more where
 * producer threads also copy with cp.async and arrive through ck_cp_async_mbar_arrive_noinc),
 * `releases`: the arrivals that empty it. */
CK_DEVICE void ck_ring_init_fills(const ck_ring *r, unsigned fills, unsigned releases)
{
    for (int s = 0; s < r->stages; ++s) {
        ck_mbar_init(&r->full[s], fills);
        ck_mbar_init(&r->empty[s], releases);
    }
    ck_mbar_fence_init();
}

CK_DEVICE void ck_ring_init(const ck_ring *r, unsigned releases)
{
    ck_ring_init_fills(r, 1, releases);
}

CK_DEVICE ck_ring_pos ck_ring_start(void)
{
    ck_ring_pos p;
    p.slot = 0, p.phase = 0;
    return p;
}

CK_DEVICE void ck_ring_next(const ck_ring *r, ck_ring_pos *p)
{
    if (++p->slot == r->stages) {
        p->slot = 0;
        p->phase ^= 1u;
    }
}

/* Producer: wait until the consumers released the slot's previous contents. */
CK_DEVICE void ck_ring_acquire(const ck_ring *r, ck_ring_pos p)
{
    ck_mbar_wait_parity(&r->empty[p.slot], p.phase ^ 1u);
}

/* Producer: arm the slot's full barrier for `bytes` of copies; returns that barrier. */
CK_DEVICE unsigned long long *ck_ring_expect(const ck_ring *r, ck_ring_pos p, unsigned bytes)
{
    ck_mbar_arrive_expect_tx(&r->full[p.slot], bytes);
    return &r->full[p.slot];
}

/* Consumer: wait until the slot's data has landed. */
CK_DEVICE void ck_ring_wait(const ck_ring *r, ck_ring_pos p)
{
    ck_mbar_wait_parity(&r->full[p.slot], p.phase);
}

/* Consumer: one arrival on the slot's empty barrier. */
CK_DEVICE void ck_ring_release(const ck_ring *r, ck_ring_pos p)
{
    ck_mbar_arrive(&r->empty[p.slot]);
}

/* A ring shared by the blocks of a cluster whose producers multicast into every block's slots
 * (each block's empty barriers then count the releases of all the cluster's consumers):
 * a consumer releases the slot in block `rank`. A release publishes no data (the consumer only
 * read the slot), so it is an arrival at CTA scope, and the producer's wait needs no
 * cluster-scope acquire: ck_ring_acquire serves. */
CK_DEVICE void ck_ring_release_in(const ck_ring *r, ck_ring_pos p, unsigned rank)
{
    ck_mbar_arrive_remote(&r->empty[p.slot], rank);
}

CK_DEVICE void ck_ring_acquire_cluster(const ck_ring *r, ck_ring_pos p)
{
    ck_ring_acquire(r, p);
}

/* ---- warpgroups and register reallocation ---------------------------------------------------- */

#define CK_WARPGROUP_THREADS 128

CK_DEVICE unsigned ck_warpgroup_id(void)
{
    return ck_thread_linear() / CK_WARPGROUP_THREADS;
}

CK_DEVICE unsigned ck_warpgroup_thread(void)
{
    return ck_thread_linear() % CK_WARPGROUP_THREADS;
}

#define CK_REGS_PRODUCER(n) CK_SETMAXNREG_DEC(n)
#define CK_REGS_CONSUMER(n) CK_SETMAXNREG_INC(n)

#endif /* CK_DEVICE_CK_BLOCK_H */
