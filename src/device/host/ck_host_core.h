/*
 * ck_host_core.h - host (CPU emulator) implementation of the core device prelude: ids, barriers,
 * shared memory, shuffles, votes, warp reductions, atomics, 16-byte vector access, cluster ids,
 * fences. Selected by ck_device.h when the source is not compiled by a CUDA compiler.
 *
 * Threads of a block are cooperative fibers of the emulator; they switch at barriers and at
 * warp-collective operations, which rendezvous through ck_emu_group_collective. Blocks run in
 * parallel on worker threads, so atomics are real atomics.
 */
#ifndef CK_HOST_CORE_H
#define CK_HOST_CORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "host/ck_emu_api.h"

#define CK_KERNEL
#define CK_LAUNCH_BOUNDS(...)
#define CK_DEVICE    static inline
#define CK_WARP_SIZE 32
#define CK_RESTRICT  restrict
#define CK_NOINLINE  __attribute__((noinline))
#define CK_UNROLL    /* the host compiler unrolls as it sees fit */
#define CK_NO_UNROLL /* a loop kept rolled on the GPU (fewer registers) */

/* The emulator's table, installed by ck_emu_bind when the kernel object is loaded. */
static const ck_emu_api *ck_emu_api_;

__attribute__((visibility("default"))) int ck_emu_bind(const ck_emu_api *api);
__attribute__((visibility("default"))) int ck_emu_bind(const ck_emu_api *api)
{
    if (!api || api->version != CK_EMU_API_VERSION || api->size != sizeof(ck_emu_api))
        return -1;
    ck_emu_api_ = api;
    return 0;
}

/* ---- emulator primitives (EMU_CONTRACT.md) ---------------------------------------------- */
static inline unsigned ck_emu_thread_linear(void)
{
    return ck_emu_api_->self()->linear;
}
static inline unsigned ck_emu_block_threads(void)
{
    return ck_emu_api_->self()->block_threads;
}
static inline void ck_emu_yield(void)
{
    ck_emu_api_->yield();
}
static inline void ck_emu_group_collective(unsigned group_size, const void *in, size_t in_size,
                                           void *out, size_t out_size,
                                           void (*fn)(const void *all_in, void *all_out, void *ctx),
                                           void *ctx)
{
    ck_emu_api_->collective(group_size, in, in_size, out, out_size, fn, ctx);
}
static inline void *ck_emu_shared_base(void)
{
    return ck_emu_api_->shared_base();
}
static inline size_t ck_emu_shared_bytes(void)
{
    return ck_emu_api_->shared_bytes();
}
static inline void ck_emu_trap(const char *what)
{
    ck_emu_api_->trap(what);
    __builtin_unreachable();
}

/* ---- ids -------------------------------------------------------------------------------- */
#define CK_EMU_SELF_ (ck_emu_api_->self())
static inline unsigned ck_thread_idx_x(void)
{
    return CK_EMU_SELF_->tid[0];
}
static inline unsigned ck_thread_idx_y(void)
{
    return CK_EMU_SELF_->tid[1];
}
static inline unsigned ck_thread_idx_z(void)
{
    return CK_EMU_SELF_->tid[2];
}
static inline unsigned ck_block_idx_x(void)
{
    return CK_EMU_SELF_->bid[0];
}
static inline unsigned ck_block_idx_y(void)
{
    return CK_EMU_SELF_->bid[1];
}
static inline unsigned ck_block_idx_z(void)
{
    return CK_EMU_SELF_->bid[2];
}
static inline unsigned ck_block_dim_x(void)
{
    return CK_EMU_SELF_->bdim[0];
}
static inline unsigned ck_block_dim_y(void)
{
    return CK_EMU_SELF_->bdim[1];
}
static inline unsigned ck_block_dim_z(void)
{
    return CK_EMU_SELF_->bdim[2];
}
static inline unsigned ck_grid_dim_x(void)
{
    return CK_EMU_SELF_->gdim[0];
}
static inline unsigned ck_grid_dim_y(void)
{
    return CK_EMU_SELF_->gdim[1];
}
static inline unsigned ck_grid_dim_z(void)
{
    return CK_EMU_SELF_->gdim[2];
}
static inline unsigned ck_thread_linear(void)
{
    return CK_EMU_SELF_->linear;
}
static inline unsigned ck_block_threads(void)
{
    return CK_EMU_SELF_->block_threads;
}
static inline unsigned ck_warp_id(void)
{
    return CK_EMU_SELF_->linear / 32u;
}
static inline unsigned ck_lane_id(void)
{
    return CK_EMU_SELF_->linear % 32u;
}

/* ---- barriers ----------------------------------------------------------------------------- */
static inline void ck_sync_threads(void)
{
    ck_emu_api_->barrier(0, 0, 1);
}
static inline void ck_named_barrier_sync(unsigned id, unsigned nthreads)
{
    ck_emu_api_->barrier(id, nthreads, 1);
}
static inline void ck_named_barrier_arrive(unsigned id, unsigned nthreads)
{
    ck_emu_api_->barrier(id, nthreads, 0);
}

/* ---- shared memory ------------------------------------------------------------------------ */
#define CK_SHARED_ARRAY_ALIGNED(type, name, count, align)                                          \
    static char ck_shared_site_##name;                                                             \
    type *name = (type *)ck_emu_api_->shared_static(&ck_shared_site_##name,                        \
                                                    sizeof(type) * (size_t)(count), (align))
#define CK_SHARED_ARRAY(type, name, count)                                                         \
    CK_SHARED_ARRAY_ALIGNED(type, name, count, _Alignof(type) > 16 ? _Alignof(type) : 16)
#define CK_SHARED_ARRAY2(type, name, rows, cols)                                                   \
    static char ck_shared_site_##name;                                                             \
    type(*name)[cols] = (type(*)[cols])ck_emu_api_->shared_static(                                 \
        &ck_shared_site_##name, sizeof(type) * (size_t)(rows) * (size_t)(cols), 16)
static inline void *ck_dynamic_shared(void)
{
    return CK_EMU_SELF_->dynamic_shared;
}

/* ---- bit casts ---------------------------------------------------------------------------- */
static inline uint32_t ck_f32_as_u32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float ck_u32_as_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline double ck_i64_as_f64(long long i)
{
    double d;
    memcpy(&d, &i, 8);
    return d;
}
static inline long long ck_f64_as_i64(double d)
{
    long long i;
    memcpy(&i, &d, 8);
    return i;
}
/* a / b (the GPU's version uses the fast reciprocal: 2 ulp, 0 for 2^126 < |b| < 2^128). */
/* max(m, |v|); a NaN gives the canonical NaN 0x7fffffff (max.NaN.f32). */
static inline float ck_amax_f32(float m, float v)
{
    v = fabsf(v);
    return (m != m || v != v) ? ck_u32_as_f32(0x7fffffffu) : m > v ? m : v;
}
static inline float ck_fdiv_fast(float a, float b)
{
    return a / b;
}
/* 2^x; results below 2^-126 flushed to 0 as the GPU's ex2.approx.ftz does (which is also
 * 2 ulp where this is exact). */
static inline float ck_exp2_ftz(float x)
{
    float r = exp2f(x);
    return r < 0x1p-126f ? 0.0f * r : r;
}
/* f32 -> bf16 / f16 code as the GPU's cvt.rn: nearest even, subnormals kept, overflow to
 * infinity, NaN the canonical 0x7fff. */
static inline uint32_t ck_host_cvt_bf16_(float x)
{
    uint32_t u = ck_f32_as_u32(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fffu;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
static inline uint32_t ck_host_cvt_f16_(float x)
{
    uint32_t u = ck_f32_as_u32(x), sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u > 0x7f800000u)
        return 0x7fffu;
    if (u >= 0x47800000u) /* >= 65536: infinity */
        return sign | 0x7c00u;
    if (u < 0x38800000u) /* below 2^-14: one exact addition aligns bit 0 to 2^-24 */
        return sign | (ck_f32_as_u32(ck_u32_as_f32(u) + 0.5f) - 0x3f000000u);
    u += 0xc8000fffu + ((u >> 13) & 1u); /* rebias (15 - 127) << 23, plus rounding */
    return sign | (u >> 13);
}
/* Two floats into one register of two bf16 (f16) codes, lo in the low half (cvt.rn.*x2). */
static inline uint32_t ck_cvt_bf16x2(float lo, float hi)
{
    return ck_host_cvt_bf16_(lo) | (ck_host_cvt_bf16_(hi) << 16);
}
static inline uint32_t ck_cvt_f16x2(float lo, float hi)
{
    return ck_host_cvt_f16_(lo) | (ck_host_cvt_f16_(hi) << 16);
}
/* a * b + c on two packed bf16 (f16) halves: each half's fmaf in f32, then rounded to 16
 * bits. The GPU rounds once; the two agree whenever the f32 result is exact (products of
 * 16-bit numbers are, and sums of numbers within 2^13 of each other's scale). */
static inline float ck_host_f16_value_(uint32_t h)
{
    uint32_t e = (h >> 10) & 31u, m = h & 1023u;
    float v = e == 0    ? (float)m * 0x1p-24f
              : e == 31 ? (m ? ck_u32_as_f32(0x7fc00000u) : ck_u32_as_f32(0x7f800000u))
                        : ck_u32_as_f32(((e + 112u) << 23) | (m << 13));
    return (h & 0x8000u) ? -v : v;
}
static inline uint32_t ck_fma_bf16x2(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r = 0;
    for (int h = 0; h < 2; ++h) {
        float x = ck_u32_as_f32(((a >> 16 * h) & 0xffffu) << 16);
        float y = ck_u32_as_f32(((b >> 16 * h) & 0xffffu) << 16);
        float z = ck_u32_as_f32(((c >> 16 * h) & 0xffffu) << 16);
        r |= ck_host_cvt_bf16_(fmaf(x, y, z)) << 16 * h;
    }
    return r;
}
static inline uint32_t ck_fma_f16x2(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r = 0;
    for (int h = 0; h < 2; ++h) {
        float x = ck_host_f16_value_((a >> 16 * h) & 0xffffu);
        float y = ck_host_f16_value_((b >> 16 * h) & 0xffffu);
        float z = ck_host_f16_value_((c >> 16 * h) & 0xffffu);
        r |= ck_host_cvt_f16_(fmaf(x, y, z)) << 16 * h;
    }
    return r;
}
/* f32 -> fp8 e4m3 code, nearest even, saturating to +-448 (cvt.rn.satfinite), NaN -> 0x7f. */
static inline uint32_t ck_host_cvt_e4m3_(float f)
{
    uint32_t u = ck_f32_as_u32(f), sign = (u >> 24) & 0x80u;
    u &= 0x7fffffffu;
    if (u > 0x7f800000u)
        return 0x7fu;
    if (u >= 0x43e00000u) /* >= 448 */
        return sign | 0x7eu;
    if (u < 0x3c800000u) /* below 2^-6: one exact addition aligns bit 0 to 2^-9 */
        return sign | (ck_f32_as_u32(ck_u32_as_f32(u) + 16384.0f) - 0x46800000u);
    u += 0xc407ffffu + ((u >> 20) & 1u); /* rebias -(127 - 7) << 23, plus rounding */
    return sign | (u >> 20);
}
/* Four floats into one register of four e4m3 codes, a in the low byte (2 cvt.*e4m3x2). */
static inline uint32_t ck_cvt_e4m3x4(float a, float b, float c, float d)
{
    return ck_host_cvt_e4m3_(a) | (ck_host_cvt_e4m3_(b) << 8) | (ck_host_cvt_e4m3_(c) << 16) |
           (ck_host_cvt_e4m3_(d) << 24);
}
/* The value of u (on the GPU opaque to the compiler, so derived values are recomputed). */
static inline uint32_t ck_opaque_u32(uint32_t u)
{
    return u;
}

/* Byte n of the result: byte (s >> 4n) & 7 of y:x (x holds bytes 0..3). */
static inline uint32_t ck_byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    uint64_t v = (uint64_t)x | ((uint64_t)y << 32);
    uint32_t r = 0;
    for (int n = 0; n < 4; ++n)
        r |= (uint32_t)((v >> (8 * ((s >> (4 * n)) & 7u))) & 0xffu) << (8 * n);
    return r;
}

/* ---- warp shuffles ------------------------------------------------------------------------ */
typedef struct ck_emu_shfl_in_ {
    uint32_t value, arg;
} ck_emu_shfl_in_;

static inline void ck_emu_shfl_idx_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_shfl_in_ *in = (const ck_emu_shfl_in_ *)all_in;
    uint32_t *out = (uint32_t *)all_out;
    (void)ctx;
    for (unsigned i = 0; i < 32; ++i)
        out[i] = in[in[i].arg & 31u].value;
}
static inline void ck_emu_shfl_up_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_shfl_in_ *in = (const ck_emu_shfl_in_ *)all_in;
    uint32_t *out = (uint32_t *)all_out;
    (void)ctx;
    for (unsigned i = 0; i < 32; ++i)
        out[i] = in[i].arg <= i ? in[i - in[i].arg].value : in[i].value;
}
static inline void ck_emu_shfl_down_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_shfl_in_ *in = (const ck_emu_shfl_in_ *)all_in;
    uint32_t *out = (uint32_t *)all_out;
    (void)ctx;
    for (unsigned i = 0; i < 32; ++i)
        out[i] = in[i].arg < 32u - i ? in[i + in[i].arg].value : in[i].value;
}
static inline void ck_emu_shfl_xor_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_shfl_in_ *in = (const ck_emu_shfl_in_ *)all_in;
    uint32_t *out = (uint32_t *)all_out;
    (void)ctx;
    for (unsigned i = 0; i < 32; ++i)
        out[i] = in[i ^ (in[i].arg & 31u)].value;
}
static inline uint32_t ck_emu_shfl_(uint32_t v, uint32_t arg,
                                    void (*fn)(const void *, void *, void *))
{
    ck_emu_shfl_in_ in = {v, arg};
    uint32_t out = 0;
    ck_emu_group_collective(32, &in, sizeof in, &out, sizeof out, fn, NULL);
    return out;
}
static inline uint32_t ck_emu_f2u_(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float ck_emu_u2f_(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t ck_shfl_idx_u32(uint32_t v, unsigned lane)
{
    return ck_emu_shfl_(v, lane, ck_emu_shfl_idx_fn_);
}
static inline uint32_t ck_shfl_up_u32(uint32_t v, unsigned d)
{
    return ck_emu_shfl_(v, d, ck_emu_shfl_up_fn_);
}
static inline uint32_t ck_shfl_down_u32(uint32_t v, unsigned d)
{
    return ck_emu_shfl_(v, d, ck_emu_shfl_down_fn_);
}
static inline uint32_t ck_shfl_xor_u32(uint32_t v, unsigned mask)
{
    return ck_emu_shfl_(v, mask, ck_emu_shfl_xor_fn_);
}
static inline int32_t ck_shfl_idx_i32(int32_t v, unsigned l)
{
    return (int32_t)ck_shfl_idx_u32((uint32_t)v, l);
}
static inline int32_t ck_shfl_up_i32(int32_t v, unsigned d)
{
    return (int32_t)ck_shfl_up_u32((uint32_t)v, d);
}
static inline int32_t ck_shfl_down_i32(int32_t v, unsigned d)
{
    return (int32_t)ck_shfl_down_u32((uint32_t)v, d);
}
static inline int32_t ck_shfl_xor_i32(int32_t v, unsigned m)
{
    return (int32_t)ck_shfl_xor_u32((uint32_t)v, m);
}
static inline float ck_shfl_idx_f32(float v, unsigned l)
{
    return ck_emu_u2f_(ck_shfl_idx_u32(ck_emu_f2u_(v), l));
}
static inline float ck_shfl_up_f32(float v, unsigned d)
{
    return ck_emu_u2f_(ck_shfl_up_u32(ck_emu_f2u_(v), d));
}
static inline float ck_shfl_down_f32(float v, unsigned d)
{
    return ck_emu_u2f_(ck_shfl_down_u32(ck_emu_f2u_(v), d));
}
static inline float ck_shfl_xor_f32(float v, unsigned m)
{
    return ck_emu_u2f_(ck_shfl_xor_u32(ck_emu_f2u_(v), m));
}

/* ---- votes -------------------------------------------------------------------------------- */
typedef struct ck_emu_vote_in_ {
    uint32_t pred, active;
} ck_emu_vote_in_;
typedef struct ck_emu_vote_out_ {
    uint32_t ballot, active;
} ck_emu_vote_out_;
static inline void ck_emu_vote_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_vote_in_ *in = (const ck_emu_vote_in_ *)all_in;
    ck_emu_vote_out_ *out = (ck_emu_vote_out_ *)all_out;
    uint32_t ballot = 0, active = 0;
    (void)ctx;
    for (unsigned i = 0; i < 32; ++i) {
        ballot |= (in[i].pred ? 1u : 0u) << i;
        active |= (in[i].active ? 1u : 0u) << i;
    }
    for (unsigned i = 0; i < 32; ++i) {
        out[i].ballot = ballot;
        out[i].active = active;
    }
}
static inline ck_emu_vote_out_ ck_emu_vote_(int pred)
{
    ck_emu_vote_in_ in = {pred != 0, 1};
    ck_emu_vote_out_ out = {0, 0};
    ck_emu_group_collective(32, &in, sizeof in, &out, sizeof out, ck_emu_vote_fn_, NULL);
    return out;
}
static inline uint32_t ck_vote_ballot(int pred)
{
    return ck_emu_vote_(pred).ballot;
}
static inline int ck_vote_any(int pred)
{
    return ck_emu_vote_(pred).ballot != 0;
}
static inline int ck_vote_all(int pred)
{
    ck_emu_vote_out_ o = ck_emu_vote_(pred);
    return o.ballot == o.active;
}

/* ---- warp reductions ----------------------------------------------------------------------
 * Integer reductions are exact. Float reductions follow the CUDA implementation's butterfly
 * (xor 16, 8, 4, 2, 1), so both produce the same bits. */
enum {
    CK_EMU_RED_ADD_I32,
    CK_EMU_RED_MAX_I32,
    CK_EMU_RED_MIN_I32,
    CK_EMU_RED_ADD_U32,
    CK_EMU_RED_MAX_U32,
    CK_EMU_RED_MIN_U32,
    CK_EMU_RED_ADD_F32,
    CK_EMU_RED_MAX_F32,
    CK_EMU_RED_MIN_F32
};
static inline uint32_t ck_emu_red_op_(int op, uint32_t a, uint32_t b)
{
    int32_t sa = (int32_t)a, sb = (int32_t)b;
    float fa = ck_emu_u2f_(a), fb = ck_emu_u2f_(b);
    switch (op) {
    case CK_EMU_RED_ADD_I32:
        return (uint32_t)((int64_t)sa + sb);
    case CK_EMU_RED_MAX_I32:
        return (uint32_t)(sa > sb ? sa : sb);
    case CK_EMU_RED_MIN_I32:
        return (uint32_t)(sa < sb ? sa : sb);
    case CK_EMU_RED_ADD_U32:
        return a + b;
    case CK_EMU_RED_MAX_U32:
        return a > b ? a : b;
    case CK_EMU_RED_MIN_U32:
        return a < b ? a : b;
    case CK_EMU_RED_ADD_F32:
        return ck_emu_f2u_(fa + fb);
    case CK_EMU_RED_MAX_F32:
        return ck_emu_f2u_(fmaxf(fa, fb));
    default:
        return ck_emu_f2u_(fminf(fa, fb));
    }
}
static inline void ck_emu_reduce_fn_(const void *all_in, void *all_out, void *ctx)
{
    int op = *(const int *)ctx;
    uint32_t v[32], w[32];
    memcpy(v, all_in, sizeof v);
    for (unsigned off = 16; off >= 1; off /= 2) {
        for (unsigned i = 0; i < 32; ++i)
            w[i] = ck_emu_red_op_(op, v[i], v[i ^ off]);
        memcpy(v, w, sizeof v);
    }
    memcpy(all_out, v, sizeof v);
}
static inline uint32_t ck_emu_reduce_(int op, uint32_t x)
{
    uint32_t out = 0;
    ck_emu_group_collective(32, &x, sizeof x, &out, sizeof out, ck_emu_reduce_fn_, &op);
    return out;
}
static inline int32_t ck_warp_reduce_add_i32(int32_t v)
{
    return (int32_t)ck_emu_reduce_(CK_EMU_RED_ADD_I32, (uint32_t)v);
}
static inline int32_t ck_warp_reduce_max_i32(int32_t v)
{
    return (int32_t)ck_emu_reduce_(CK_EMU_RED_MAX_I32, (uint32_t)v);
}
static inline int32_t ck_warp_reduce_min_i32(int32_t v)
{
    return (int32_t)ck_emu_reduce_(CK_EMU_RED_MIN_I32, (uint32_t)v);
}
static inline uint32_t ck_warp_reduce_add_u32(uint32_t v)
{
    return ck_emu_reduce_(CK_EMU_RED_ADD_U32, v);
}
static inline uint32_t ck_warp_reduce_max_u32(uint32_t v)
{
    return ck_emu_reduce_(CK_EMU_RED_MAX_U32, v);
}
static inline uint32_t ck_warp_reduce_min_u32(uint32_t v)
{
    return ck_emu_reduce_(CK_EMU_RED_MIN_U32, v);
}
static inline float ck_warp_reduce_add_f32(float v)
{
    return ck_emu_u2f_(ck_emu_reduce_(CK_EMU_RED_ADD_F32, ck_emu_f2u_(v)));
}
static inline float ck_warp_reduce_max_f32(float v)
{
    return ck_emu_u2f_(ck_emu_reduce_(CK_EMU_RED_MAX_F32, ck_emu_f2u_(v)));
}
static inline float ck_warp_reduce_min_f32(float v)
{
    return ck_emu_u2f_(ck_emu_reduce_(CK_EMU_RED_MIN_F32, ck_emu_f2u_(v)));
}

/* ---- atomics (return the old value; global or shared memory) ------------------------------ */
#define CK_EMU_ATOMIC_RMW_(name, T, builtin)                                                       \
    static inline T name(T *p, T v)                                                                \
    {                                                                                              \
        return builtin(p, v, __ATOMIC_RELAXED);                                                    \
    }
CK_EMU_ATOMIC_RMW_(ck_atomic_add_i32, int32_t, __atomic_fetch_add)
CK_EMU_ATOMIC_RMW_(ck_atomic_add_u32, uint32_t, __atomic_fetch_add)
CK_EMU_ATOMIC_RMW_(ck_atomic_exch_i32, int32_t, __atomic_exchange_n)
CK_EMU_ATOMIC_RMW_(ck_atomic_exch_u32, uint32_t, __atomic_exchange_n)
static inline int32_t ck_atomic_cas_i32(int32_t *p, int32_t expected, int32_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
static inline uint32_t ck_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
#define CK_EMU_ATOMIC_LOOP_(name, T, U, NEW)                                                       \
    static inline T name(T *p, T v)                                                                \
    {                                                                                              \
        U *q = (U *)(void *)p;                                                                     \
        U old_bits = __atomic_load_n(q, __ATOMIC_RELAXED), new_bits;                               \
        T old;                                                                                     \
        do {                                                                                       \
            memcpy(&old, &old_bits, sizeof old);                                                   \
            T nv = NEW;                                                                            \
            memcpy(&new_bits, &nv, sizeof nv);                                                     \
        } while (!__atomic_compare_exchange_n(q, &old_bits, new_bits, 1, __ATOMIC_RELAXED,         \
                                              __ATOMIC_RELAXED));                                  \
        return old;                                                                                \
    }
CK_EMU_ATOMIC_LOOP_(ck_atomic_max_i32, int32_t, int32_t, old > v ? old : v)
CK_EMU_ATOMIC_LOOP_(ck_atomic_min_i32, int32_t, int32_t, old < v ? old : v)
CK_EMU_ATOMIC_LOOP_(ck_atomic_max_u32, uint32_t, uint32_t, old > v ? old : v)
CK_EMU_ATOMIC_LOOP_(ck_atomic_min_u32, uint32_t, uint32_t, old < v ? old : v)
CK_EMU_ATOMIC_LOOP_(ck_atomic_add_f32, float, uint32_t, old + v)
CK_EMU_ATOMIC_LOOP_(ck_atomic_max_f32, float, uint32_t, fmaxf(old, v))
CK_EMU_ATOMIC_LOOP_(ck_atomic_min_f32, float, uint32_t, fminf(old, v))
CK_EMU_ATOMIC_LOOP_(ck_atomic_exch_f32, float, uint32_t, v)

/* ---- 16-byte vector memory access (pointer must be 16-byte aligned) ------------------------ */
typedef struct ck_u32x4 {
    _Alignas(16) uint32_t x;
    uint32_t y, z, w;
} ck_u32x4;
static inline void ck_emu_check16_(const void *p)
{
    if ((uintptr_t)p % 16u)
        ck_emu_trap("a 16-byte vector access used an address that is not 16-byte aligned");
}
static inline ck_u32x4 ck_ld16(const void *p)
{
    ck_u32x4 v;
    ck_emu_check16_(p);
    memcpy(&v, p, 16);
    return v;
}
static inline ck_u32x4 ck_ld16_nc(const void *p)
{
    return ck_ld16(p);
}
static inline ck_u32x4 ck_ld16_cs(const void *p)
{
    return ck_ld16(p);
}
static inline void ck_st16(void *p, ck_u32x4 v)
{
    ck_emu_check16_(p);
    memcpy(p, &v, 16);
}
static inline void ck_st16_cs(void *p, ck_u32x4 v)
{
    ck_st16(p, v);
}

/* ---- clusters ----------------------------------------------------------------------------- */
static inline unsigned ck_cluster_ctarank(void)
{
    return CK_EMU_SELF_->cluster_rank;
}
static inline unsigned ck_cluster_nctarank(void)
{
    return CK_EMU_SELF_->cluster_size;
}
static inline unsigned ck_cluster_idx_x(void)
{
    return CK_EMU_SELF_->cluster_idx[0];
}
static inline unsigned ck_cluster_idx_y(void)
{
    return CK_EMU_SELF_->cluster_idx[1];
}
static inline unsigned ck_cluster_idx_z(void)
{
    return CK_EMU_SELF_->cluster_idx[2];
}
static inline unsigned ck_cluster_dim_x(void)
{
    return CK_EMU_SELF_->cluster_dim[0];
}
static inline unsigned ck_cluster_dim_y(void)
{
    return CK_EMU_SELF_->cluster_dim[1];
}
static inline unsigned ck_cluster_dim_z(void)
{
    return CK_EMU_SELF_->cluster_dim[2];
}
static inline void ck_cluster_sync(void)
{
    ck_emu_api_->cluster_barrier();
}
/* Split form: the emulator barriers at the wait (every thread has arrived by then). */
static inline void ck_cluster_arrive(void) {}
static inline void ck_cluster_wait(void)
{
    ck_emu_api_->cluster_barrier();
}
/* The address of the same shared-memory location in the block of cluster rank `rank`. */
static inline void *ck_cluster_map_shared(const void *p, unsigned rank)
{
    return ck_emu_api_->cluster_map_shared(p, rank);
}

/* ---- fences and traps --------------------------------------------------------------------- */
static inline void ck_fence_block(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void ck_fence_device(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void ck_fence_system(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void ck_trap(void)
{
    ck_emu_trap("the kernel called ck_trap()");
}

#endif /* CK_HOST_CORE_H */
