/*
 * Tensor-core and asynchronous operations of the device C dialect (included at the end of
 * ck_device.h). One set of names, two implementations: inline PTX when compiled by NVRTC/nvcc
 * (cuda/ck_cuda_tensor.h, cuda/ck_cuda_wgmma.h) and the CPU emulator's model otherwise
 * (host/ck_host_tensor.h over the pure references of host/ck_emu_tensor_ref.h).
 *
 *   cp.async       ck_cp_async_{4,8,16}, ck_cp_async_16_zfill, ck_cp_async_commit,
 *                  ck_cp_async_wait(n), ck_cp_async_wait_all,
 *                  ck_cp_async_mbar_arrive_noinc(bar) (one arrival on an mbarrier when the
 *                  thread's earlier cp.async copies have landed; counted in its expected count)
 *   ldmatrix       ck_ldmatrix_x{1,2,4}[_trans](unsigned *r, const void *row)
 *   stmatrix       ck_stmatrix_x{1,2,4}[_trans](void *row, const unsigned *r)
 *   mma.sync       ck_mma_m16n8k{8,16}_f32_{f16,bf16}, ck_mma_m16n8k{8,16}_f16_f16,
 *                  ck_mma_m16n8k8_f32_tf32, ck_mma_m16n8k32_s32_{s8,u8,s8_u8,u8_s8}[_satfinite],
 *                  ck_mma_m16n8k32_f32_{e4m3,e5m2,e4m3_e5m2,e5m2_e4m3}
 *   wgmma          ck_wgmma_desc, ck_wgmma_fence, ck_wgmma_commit_group, ck_wgmma_wait_group,
 *                  ck_wgmma_fence_operand, CK_WGMMA_SS(...), CK_WGMMA_RS(...),
 *                  CK_WGMMA_{SS,RS}_TF32(...), CK_WGMMA_{SS,RS}_F8(...)
 *   mbarrier       ck_mbar_init, ck_mbar_inval, ck_mbar_fence_init, ck_mbar_arrive,
 *                  ck_mbar_arrive_expect_tx, ck_mbar_expect_tx, ck_mbar_complete_tx,
 *                  ck_mbar_try_wait_parity, ck_mbar_wait_parity,
 *                  ck_mbar_wait_parity_cluster (acquire at cluster scope),
 *                  ck_mbar_arrive_cluster(bar, rank) (one arrival, release at cluster scope,
 *                  on the barrier at bar's offset in the cluster's block `rank`),
 *                  ck_mbar_arrive_remote(bar, rank) (the same with release at CTA scope: a
 *                  "done reading" signal that publishes no data, so no cluster fence)
 *                  (a try_wait's result reflects the barrier when the result is used: use it
 *                  before the thread's next arrive/complete_tx/barrier; docs/device-tensor.md)
 *   st.async       ck_st_async_f32, ck_st_async_2f32 (store into a cluster peer's shared memory
 *                  and complete the bytes on its mbarrier)
 *   TMA            ck_tensor_map, CK_GRID_CONSTANT, ck_tma_prefetch_map,
 *                  ck_tma_load_{1..5}d[_multicast], ck_tma_store_{1..5}d, ck_tma_store_commit,
 *                  ck_tma_store_wait(n), ck_tma_store_wait_read(n)
 *   misc           ck_smem_addr, ck_fence_proxy_async, CK_SETMAXNREG_INC/DEC(n), ck_elect_one
 *
 * Fragment layouts, descriptor formats and the emulator's model: docs/device-tensor.md.
 */
#ifndef CK_DEVICE_CK_DEVICE_TENSOR_H
#define CK_DEVICE_CK_DEVICE_TENSOR_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CK_TC_FN static __device__ __forceinline__
#ifndef CK_GRID_CONSTANT
#define CK_GRID_CONSTANT __grid_constant__
#endif
#else
#define CK_TC_FN static inline
#ifndef CK_GRID_CONSTANT
#define CK_GRID_CONSTANT
#endif
#endif

#define CK_TC_COMMA ,

/* Swizzle modes of shared-memory tiles (TMA and wgmma), numbered as CUtensorMapSwizzle. */
#define CK_SWIZZLE_NONE 0
#define CK_SWIZZLE_32B  1
#define CK_SWIZZLE_64B  2
#define CK_SWIZZLE_128B 3

/* A tensor map: on the GPU the driver's 128-byte CUtensorMap (built by the runtime with
 * cuTensorMapEncodeTiled); in the emulator the same 128 bytes hold the emulator's description
 * (ck_emu_tmap_desc). Pass it to kernels by value as `CK_GRID_CONSTANT const ck_tensor_map map`
 * and to the ck_tma_* functions by address. */
#ifndef CK_TENSOR_MAP_DEFINED /* include/ck/runtime.h defines the same type for the host side */
#define CK_TENSOR_MAP_DEFINED 1
typedef struct __attribute__((aligned(64))) ck_tensor_map {
    unsigned long long opaque[16];
} ck_tensor_map;
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include "cuda/ck_cuda_tensor.h"
#else
#include "host/ck_host_tensor.h"
#endif

#endif
