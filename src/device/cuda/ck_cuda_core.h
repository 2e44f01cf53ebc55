/*
 * ck_cuda_core.h - CUDA implementation of the core device prelude (NVRTC, compiled as CUDA C++):
 * ids, barriers, shared memory, shuffles, votes, warp reductions, atomics, 16-byte vector access
 * with cache hints, cluster ids and barriers, fences. Inline PTX of ck lives only under
 * src/device/cuda/. Selected by ck_device.h.
 */
#ifndef CK_CUDA_CORE_H
#define CK_CUDA_CORE_H

/* NVRTC provides no C library headers: the fixed-width types kernels use (LP64, as on the host). */
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned long uintptr_t;
typedef unsigned long size_t;
#define CK_FIXED_WIDTH_TYPES_DEFINED 1 /* core/numeric_conv.h: these typedefs already exist */
#ifndef NULL
#define NULL 0
#endif
#else
#include <stddef.h>
#include <stdint.h>
#endif

#define CK_KERNEL             extern "C" __global__
#define CK_LAUNCH_BOUNDS(...) __launch_bounds__(__VA_ARGS__)
#define CK_DEVICE             static __device__ __forceinline__
#define CK_WARP_SIZE          32
#define CK_RESTRICT           __restrict__
#define CK_NOINLINE           __noinline__
#define CK_UNROLL             _Pragma("unroll")
#define CK_NO_UNROLL          _Pragma("unroll 1")
#define CK_FULL_MASK_         0xffffffffu

/* ---- ids -------------------------------------------------------------------------------- */
CK_DEVICE unsigned ck_thread_idx_x(void)
{
    return threadIdx.x;
}
CK_DEVICE unsigned ck_thread_idx_y(void)
{
    return threadIdx.y;
}
CK_DEVICE unsigned ck_thread_idx_z(void)
{
    return threadIdx.z;
}
CK_DEVICE unsigned ck_block_idx_x(void)
{
    return blockIdx.x;
}
CK_DEVICE unsigned ck_block_idx_y(void)
{
    return blockIdx.y;
}
CK_DEVICE unsigned ck_block_idx_z(void)
{
    return blockIdx.z;
}
CK_DEVICE unsigned ck_block_dim_x(void)
{
    return blockDim.x;
}
CK_DEVICE unsigned ck_block_dim_y(void)
{
    return blockDim.y;
}
CK_DEVICE unsigned ck_block_dim_z(void)
{
    return blockDim.z;
}
CK_DEVICE unsigned ck_grid_dim_x(void)
{
    return gridDim.x;
}
CK_DEVICE unsigned ck_grid_dim_y(void)
{
    return gridDim.y;
}
CK_DEVICE unsigned ck_grid_dim_z(void)
{
    return gridDim.z;
}
CK_DEVICE unsigned ck_thread_linear(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
CK_DEVICE unsigned ck_block_threads(void)
{
    return blockDim.x * blockDim.y * blockDim.z;
}
CK_DEVICE unsigned ck_warp_id(void)
{
    return ck_thread_linear() / 32u;
}
CK_DEVICE unsigned ck_lane_id(void)
{
    return ck_thread_linear() % 32u;
}

/* ---- barriers ----------------------------------------------------------------------------- */
CK_DEVICE void ck_sync_threads(void)
{
    __syncthreads();
}
CK_DEVICE void ck_named_barrier_sync(unsigned id, unsigned nthreads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}
CK_DEVICE void ck_named_barrier_arrive(unsigned id, unsigned nthreads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

/* ---- shared memory ------------------------------------------------------------------------ */
#define CK_SHARED_ARRAY_ALIGNED(type, name, count, align)                                          \
    __shared__ __align__(align)                                                                    \
    type name[count]
#define CK_SHARED_ARRAY(type, name, count)       __shared__ __align__(16) type name[count]
#define CK_SHARED_ARRAY2(type, name, rows, cols) __shared__ __align__(16) type name[rows][cols]
extern __shared__ __align__(16) unsigned char ck_dynamic_shared_[];
CK_DEVICE void *ck_dynamic_shared(void)
{
    return ck_dynamic_shared_;
}

/* ---- bit casts ---------------------------------------------------------------------------- */
CK_DEVICE uint32_t ck_f32_as_u32(float f)
{
    return __float_as_uint(f);
}
CK_DEVICE float ck_u32_as_f32(uint32_t u)
{
    return __uint_as_float(u);
}
CK_DEVICE double ck_i64_as_f64(long long i)
{
    return __longlong_as_double(i);
}
CK_DEVICE long long ck_f64_as_i64(double d)
{
    return __double_as_longlong(d);
}
/* max(m, |v|) with NaN winning as the canonical NaN 0x7fffffff: one max.NaN.f32 (sm_80+; the
 * absolute value is an operand modifier). */
CK_DEVICE float ck_amax_f32(float m, float v)
{
    float r;
    asm("{ .reg .f32 a;\n\tabs.f32 a, %2;\n\tmax.NaN.f32 %0, %1, a; }" : "=f"(r) : "f"(m), "f"(v));
    return r;
}
/* a / b with the hardware's fast reciprocal: 2 ulp for |b| < 2^126, 0 for 2^126 < |b| < 2^128
 * (the host prelude divides exactly). */
CK_DEVICE float ck_fdiv_fast(float a, float b)
{
    return __fdividef(a, b);
}
/* 2^x by the hardware's ex2.approx.ftz (one instruction; exp2f adds a subnormal-range fixup):
 * 2 ulp, subnormal inputs and results flushed to 0. */
CK_DEVICE float ck_exp2_ftz(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
/* Two floats rounded to nearest even into one register of two bf16 (f16) codes, lo in the low
 * half: one cvt.rn.bf16x2.f32 (cvt.rn.f16x2.f32); subnormals kept, overflow to infinity, NaN
 * gives the canonical NaN 0x7fff. */
CK_DEVICE uint32_t ck_cvt_bf16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
CK_DEVICE uint32_t ck_cvt_f16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
/* a * b + c on two packed bf16 (f16) halves, rounded once to nearest even: one
 * fma.rn.bf16x2 (fma.rn.f16x2); subnormals kept. */
CK_DEVICE uint32_t ck_fma_bf16x2(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
CK_DEVICE uint32_t ck_fma_f16x2(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
/* Four floats rounded to nearest even into one register of four fp8 e4m3 codes, a in the low
 * byte: two cvt.rn.satfinite.e4m3x2.f32 (beyond +-448 saturates to +-448, NaN gives 0x7f). */
CK_DEVICE uint32_t ck_cvt_e4m3x4(float a, float b, float c, float d)
{
    uint32_t r;
    asm("{ .reg .b16 lo, hi;\n\t"
        "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n\t"
        "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n\t"
        "mov.b32 %0, {lo, hi}; }"
        : "=r"(r)
        : "f"(a), "f"(b), "f"(c), "f"(d));
    return r;
}
/* The value of u, opaque to the compiler: values derived from it in one loop are not kept live
 * for reuse in a later one (a kernel recomputes them instead of holding registers). */
CK_DEVICE uint32_t ck_opaque_u32(uint32_t u)
{
    asm volatile("" : "+r"(u));
    return u;
}

/* Byte n of the result: byte (s >> 4n) & 7 of y:x (x holds bytes 0..3). */
CK_DEVICE uint32_t ck_byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    return __byte_perm(x, y, s);
}

/* ---- warp shuffles (all 32 lanes) --------------------------------------------------------- */
CK_DEVICE uint32_t ck_shfl_idx_u32(uint32_t v, unsigned l)
{
    return __shfl_sync(CK_FULL_MASK_, v, (int)l);
}
CK_DEVICE uint32_t ck_shfl_up_u32(uint32_t v, unsigned d)
{
    return __shfl_up_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE uint32_t ck_shfl_down_u32(uint32_t v, unsigned d)
{
    return __shfl_down_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE uint32_t ck_shfl_xor_u32(uint32_t v, unsigned m)
{
    return __shfl_xor_sync(CK_FULL_MASK_, v, (int)m);
}
CK_DEVICE int32_t ck_shfl_idx_i32(int32_t v, unsigned l)
{
    return __shfl_sync(CK_FULL_MASK_, v, (int)l);
}
CK_DEVICE int32_t ck_shfl_up_i32(int32_t v, unsigned d)
{
    return __shfl_up_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE int32_t ck_shfl_down_i32(int32_t v, unsigned d)
{
    return __shfl_down_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE int32_t ck_shfl_xor_i32(int32_t v, unsigned m)
{
    return __shfl_xor_sync(CK_FULL_MASK_, v, (int)m);
}
CK_DEVICE float ck_shfl_idx_f32(float v, unsigned l)
{
    return __shfl_sync(CK_FULL_MASK_, v, (int)l);
}
CK_DEVICE float ck_shfl_up_f32(float v, unsigned d)
{
    return __shfl_up_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE float ck_shfl_down_f32(float v, unsigned d)
{
    return __shfl_down_sync(CK_FULL_MASK_, v, d);
}
CK_DEVICE float ck_shfl_xor_f32(float v, unsigned m)
{
    return __shfl_xor_sync(CK_FULL_MASK_, v, (int)m);
}

/* ---- votes -------------------------------------------------------------------------------- */
CK_DEVICE uint32_t ck_vote_ballot(int p)
{
    return __ballot_sync(CK_FULL_MASK_, p);
}
CK_DEVICE int ck_vote_any(int p)
{
    return __any_sync(CK_FULL_MASK_, p);
}
CK_DEVICE int ck_vote_all(int p)
{
    return __all_sync(CK_FULL_MASK_, p);
}

/* ---- warp reductions (integers: redux.sync; floats: butterfly xor 16, 8, 4, 2, 1) ---------- */
#define CK_CUDA_REDUX_(name, T, ptx, reg)                                                          \
    CK_DEVICE T name(T v)                                                                          \
    {                                                                                              \
        T r;                                                                                       \
        asm volatile("redux.sync." ptx " %0, %1, 0xffffffff;" : "=" reg(r) : reg(v));              \
        return r;                                                                                  \
    }
CK_CUDA_REDUX_(ck_warp_reduce_add_i32, int32_t, "add.s32", "r")
CK_CUDA_REDUX_(ck_warp_reduce_max_i32, int32_t, "max.s32", "r")
CK_CUDA_REDUX_(ck_warp_reduce_min_i32, int32_t, "min.s32", "r")
CK_CUDA_REDUX_(ck_warp_reduce_add_u32, uint32_t, "add.u32", "r")
CK_CUDA_REDUX_(ck_warp_reduce_max_u32, uint32_t, "max.u32", "r")
CK_CUDA_REDUX_(ck_warp_reduce_min_u32, uint32_t, "min.u32", "r")
CK_DEVICE float ck_warp_reduce_add_f32(float v)
{
    for (int off = 16; off >= 1; off /= 2)
        v = v + __shfl_xor_sync(CK_FULL_MASK_, v, off);
    return v;
}
CK_DEVICE float ck_warp_reduce_max_f32(float v)
{
    for (int off = 16; off >= 1; off /= 2)
        v = fmaxf(v, __shfl_xor_sync(CK_FULL_MASK_, v, off));
    return v;
}
CK_DEVICE float ck_warp_reduce_min_f32(float v)
{
    for (int off = 16; off >= 1; off /= 2)
        v = fminf(v, __shfl_xor_sync(CK_FULL_MASK_, v, off));
    return v;
}

/* ---- atomics (return the old value; global or shared memory) ------------------------------ */
CK_DEVICE int32_t ck_atomic_add_i32(int32_t *p, int32_t v)
{
    return atomicAdd(p, v);
}
CK_DEVICE uint32_t ck_atomic_add_u32(uint32_t *p, uint32_t v)
{
    return atomicAdd(p, v);
}
CK_DEVICE float ck_atomic_add_f32(float *p, float v)
{
    return atomicAdd(p, v);
}
CK_DEVICE int32_t ck_atomic_max_i32(int32_t *p, int32_t v)
{
    return atomicMax(p, v);
}
CK_DEVICE uint32_t ck_atomic_max_u32(uint32_t *p, uint32_t v)
{
    return atomicMax(p, v);
}
CK_DEVICE int32_t ck_atomic_min_i32(int32_t *p, int32_t v)
{
    return atomicMin(p, v);
}
CK_DEVICE uint32_t ck_atomic_min_u32(uint32_t *p, uint32_t v)
{
    return atomicMin(p, v);
}
CK_DEVICE int32_t ck_atomic_exch_i32(int32_t *p, int32_t v)
{
    return atomicExch(p, v);
}
CK_DEVICE uint32_t ck_atomic_exch_u32(uint32_t *p, uint32_t v)
{
    return atomicExch(p, v);
}
CK_DEVICE float ck_atomic_exch_f32(float *p, float v)
{
    return atomicExch(p, v);
}
CK_DEVICE int32_t ck_atomic_cas_i32(int32_t *p, int32_t e, int32_t d)
{
    return atomicCAS(p, e, d);
}
CK_DEVICE uint32_t ck_atomic_cas_u32(uint32_t *p, uint32_t e, uint32_t d)
{
    return atomicCAS(p, e, d);
}
#define CK_CUDA_FLOAT_CAS_LOOP_(name, OP)                                                          \
    CK_DEVICE float name(float *p, float v)                                                        \
    {                                                                                              \
        unsigned *q = (unsigned *)p;                                                               \
        unsigned old = *(volatile unsigned *)q, assumed;                                           \
        do {                                                                                       \
            assumed = old;                                                                         \
            old = atomicCAS(q, assumed, __float_as_uint(OP(__uint_as_float(assumed), v)));         \
        } while (old != assumed);                                                                  \
        return __uint_as_float(old);                                                               \
    }
CK_CUDA_FLOAT_CAS_LOOP_(ck_atomic_max_f32, fmaxf)
CK_CUDA_FLOAT_CAS_LOOP_(ck_atomic_min_f32, fminf)

/* ---- 16-byte vector memory access (pointer must be 16-byte aligned) ------------------------
 * ck_ld16/ck_st16: generic (global or shared); _nc: read-only non-coherent path (global data
 * not written by the kernel); _cs: streaming, evict-first (global). */
typedef struct __align__(16) ck_u32x4
{
    uint32_t x, y, z, w;
}
ck_u32x4;
CK_DEVICE ck_u32x4 ck_ld16(const void *p)
{
    return *(const ck_u32x4 *)p;
}
CK_DEVICE ck_u32x4 ck_ld16_nc(const void *p)
{
    ck_u32x4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}
CK_DEVICE ck_u32x4 ck_ld16_cs(const void *p)
{
    ck_u32x4 v;
    asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}
CK_DEVICE void ck_st16(void *p, ck_u32x4 v)
{
    *(ck_u32x4 *)p = v;
}
CK_DEVICE void ck_st16_cs(void *p, ck_u32x4 v)
{
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

/* ---- clusters (sm_90; on older targets every block is a cluster of one) ------------------- */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CK_CUDA_SREG_(name, reg)                                                                   \
    CK_DEVICE unsigned name(void)                                                                  \
    {                                                                                              \
        unsigned r;                                                                                \
        asm volatile("mov.u32 %0, " reg ";" : "=r"(r));                                            \
        return r;                                                                                  \
    }
CK_CUDA_SREG_(ck_cluster_ctarank, "%%cluster_ctarank")
CK_CUDA_SREG_(ck_cluster_nctarank, "%%cluster_nctarank")
CK_CUDA_SREG_(ck_cluster_idx_x, "%%clusterid.x")
CK_CUDA_SREG_(ck_cluster_idx_y, "%%clusterid.y")
CK_CUDA_SREG_(ck_cluster_idx_z, "%%clusterid.z")
CK_CUDA_SREG_(ck_cluster_dim_x, "%%cluster_nctaid.x")
CK_CUDA_SREG_(ck_cluster_dim_y, "%%cluster_nctaid.y")
CK_CUDA_SREG_(ck_cluster_dim_z, "%%cluster_nctaid.z")
CK_DEVICE void ck_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}
/* The two halves of ck_cluster_sync: arrive (release) early, wait (acquire) where the other
 * blocks' earlier writes are needed; every thread calls both, in this order. */
CK_DEVICE void ck_cluster_arrive(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
CK_DEVICE void ck_cluster_wait(void)
{
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
CK_DEVICE void *ck_cluster_map_shared(const void *p, unsigned rank)
{
    unsigned long long r;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
    return (void *)r;
}
#else
CK_DEVICE unsigned ck_cluster_ctarank(void)
{
    return 0;
}
CK_DEVICE unsigned ck_cluster_nctarank(void)
{
    return 1;
}
CK_DEVICE unsigned ck_cluster_idx_x(void)
{
    return blockIdx.x;
}
CK_DEVICE unsigned ck_cluster_idx_y(void)
{
    return blockIdx.y;
}
CK_DEVICE unsigned ck_cluster_idx_z(void)
{
    return blockIdx.z;
}
CK_DEVICE unsigned ck_cluster_dim_x(void)
{
    return 1;
}
CK_DEVICE unsigned ck_cluster_dim_y(void)
{
    return 1;
}
CK_DEVICE unsigned ck_cluster_dim_z(void)
{
    return 1;
}
CK_DEVICE void ck_cluster_sync(void)
{
    __syncthreads();
}
CK_DEVICE void ck_cluster_arrive(void) {}
CK_DEVICE void ck_cluster_wait(void)
{
    __syncthreads();
}
CK_DEVICE void *ck_cluster_map_shared(const void *p, unsigned rank)
{
    (void)rank;
    return (void *)p;
}
#endif

/* ---- fences and traps --------------------------------------------------------------------- */
CK_DEVICE void ck_fence_block(void)
{
    __threadfence_block();
}
CK_DEVICE void ck_fence_device(void)
{
    __threadfence();
}
CK_DEVICE void ck_fence_system(void)
{
    __threadfence_system();
}
CK_DEVICE void ck_trap(void)
{
    __trap();
}

#endif /* CK_CUDA_CORE_H */
