/*
 * ck_device.h - the prelude of ck's device C dialect.
 *
 * Kernel sources include this one header and use only its names for anything hardware-specific.
 * A kernel source is C11 that is also valid CUDA C++ for NVRTC. The implementation is selected
 * here: CUDA (inline PTX, NVRTC) when __CUDACC__ or __CUDACC_RTC__ is defined, else the host
 * implementation for ck's CPU emulator. Both implement the same names with the same semantics:
 *
 *   CK_KERNEL void name(params)      declare a kernel (write it exactly like this: the emulator
 *                                    finds kernels by this pattern to pass their arguments)
 *   CK_KERNEL void CK_LAUNCH_BOUNDS(max_threads[, min_blocks]) name(params)   with bounds
 *   CK_DEVICE                        a device helper function (static inline)
 *   ck_thread_idx_x/y/z(), ck_block_idx_x/y/z(), ck_block_dim_x/y/z(), ck_grid_dim_x/y/z()
 *   ck_thread_linear(), ck_block_threads(), ck_warp_id(), ck_lane_id(), CK_WARP_SIZE
 *   ck_sync_threads()                block barrier (barrier 0, all threads of the block)
 *   ck_named_barrier_sync(id, n), ck_named_barrier_arrive(id, n)   barriers 1..15, n threads
 *   CK_SHARED_ARRAY(type, name, count), CK_SHARED_ARRAY_ALIGNED(type, name, count, align)
 *   CK_SHARED_ARRAY2(type, name, rows, cols)      static shared memory (use name[i] / name[i][j])
 *   ck_dynamic_shared()              the dynamic shared memory of the launch (16-byte aligned)
 *   ck_f32_as_u32(f), ck_u32_as_f32(u)   bit casts
 *   ck_i64_as_f64(i), ck_f64_as_i64(d)   bit casts (an int64 moved by a window of doubles)
 *   ck_fdiv_fast(a, b)               a / b, 2 ulp on the GPU (fast reciprocal), exact on the host
 *   ck_amax_f32(m, v)                max(m, |v|), a NaN in either gives the canonical NaN
 *                                    0x7fffffff: one max.NaN.f32 (a running max |y|)
 *   ck_exp2_ftz(x)                   2^x, one ex2.approx.ftz on the GPU (2 ulp; results below
 *                                    2^-126 are 0); exp2f with the same flush on the host
 *   ck_cvt_bf16x2(lo, hi), ck_cvt_f16x2(lo, hi)   two floats to one register of two bf16 / f16
 *                                    codes (lo low), nearest even, NaN -> 0x7fff: one cvt.rn.*x2
 *   ck_fma_bf16x2(a, b, c), ck_fma_f16x2(a, b, c)   a * b + c on two packed 16-bit halves,
 *                                    one rounding (fma.rn.*x2; the host rounds the f32 fma)
 *   ck_cvt_e4m3x4(a, b, c, d)        four floats to one register of four fp8 e4m3 codes (a low),
 *                                    nearest even, saturating to +-448: two cvt.rn.satfinite
 *   ck_opaque_u32(u)                 u, hidden from the GPU compiler's common-subexpression
 *                                    elimination (recompute derived values, save registers)
 *   ck_byte_perm(x, y, s)            bytes of the pair (y:x) picked by the nibbles of s: byte n
 *                                    of the result is byte (s >> 4n) & 7 of y:x (x = bytes 0..3);
 *                                    one prmt (byte transposes in registers)
 *   CK_UNROLL for (...)              unroll the loop fully on the GPU (keeps constant-indexed
 *                                    arrays such as wgmma accumulators in registers)
 *   ck_shfl_{idx,up,down,xor}_{u32,i32,f32}(v, lane_or_delta)     full-warp shuffles
 *   ck_vote_any(p), ck_vote_all(p), ck_vote_ballot(p)              full-warp votes
 *   ck_warp_reduce_{add,max,min}_{i32,u32,f32}(v)                   full-warp reductions
 *   ck_atomic_{add,max,min,exch,cas}_{i32,u32,f32}(p, ...)          atomics (global or shared)
 *   ck_u32x4 ck_ld16(p) / ck_ld16_nc(p) / ck_ld16_cs(p), ck_st16(p, v) / ck_st16_cs(p, v)
 *   ck_cluster_ctarank(), ck_cluster_nctarank(), ck_cluster_idx_x/y/z(), ck_cluster_dim_x/y/z(),
 *   ck_cluster_sync(), ck_cluster_arrive(), ck_cluster_wait(), ck_cluster_map_shared(ptr, rank)
 *   ck_fence_block(), ck_fence_device(), ck_fence_system(), ck_trap()
 *
 * Floating-point results are the same bits on both when the expressions are: the GPU compiler
 * contracts a * b + c into one rounding (FMA), the host compiler does not; write fmaf(a, b, c)
 * where both must agree.
 *
 * Every #include between headers of src/device names the path relative to src/device (e.g.
 * "host/ck_host_core.h"): NVRTC receives them as named headers under exactly those names.
 */
#ifndef CK_DEVICE_H
#define CK_DEVICE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CK_DEVICE_CUDA 1
#include "cuda/ck_cuda_core.h"
#else
#define CK_DEVICE_HOST 1
#include "host/ck_host_core.h"
#endif

/* ---- Conversions between numeric types -------------------------------------------------------
 * The host library's own conversion code (src/core/numeric_conv.h, embedded into libck as
 * "core/numeric_conv.h"): integer-only, so kernels convert exactly as ck_convert_* on the host, on
 * the GPU and in the emulator alike. Type codes CK_NC_F32 ... CK_NC_I32 (= ck_dtype values),
 * rounding CK_NC_ROUND_{NEAREST_EVEN,TOWARD_ZERO,NEAREST_AWAY,STOCHASTIC}, overflow
 * CK_NC_{SATURATE,NONSAT}:
 *   uint64_t ck_nc_from_f32(type, float x, round, overflow, uint32_t rnd)   f32 -> code
 *   float    ck_nc_to_f32(type, uint64_t code)                              code -> f32
 *   ck_nc_from_f64 / ck_nc_to_f64, ck_nc_rand_word(seed, index) (stochastic rounding's words)
 *   ck_nc_f32_to_{f16,bf16,fp8e4m3,fp8e5m2,fp6e2m3,fp6e3m2,fp4e2m1}(x)     nearest even; fp8/6/4
 *                                                      saturate, f16/bf16 overflow to infinity
 *   ck_nc_{f16,bf16,fp8e4m3,fp8e5m2,fp6e2m3,fp6e3m2,fp4e2m1}_to_f32(c)
 * docs/types.md describes the formats and modes. */
#include "core/numeric_conv.h"

#include "ck_device_tensor.h"

#endif /* CK_DEVICE_H */
