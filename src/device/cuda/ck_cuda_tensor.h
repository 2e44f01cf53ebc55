/*
 * CUDA implementation (inline PTX) of the tensor-core and asynchronous operations of the device
 * C dialect: cp.async, ldmatrix/stmatrix, mma.sync, mbarrier, the tensor copy engine (TMA),
 * fences, setmaxnreg, elect. wgmma lives in ck_cuda_wgmma.h. Included by ck_device_tensor.h under
 * NVRTC/nvcc only; the host emulation of the same names is host/ck_host_tensor.h.
 * Architecture notes: cp.async, ldmatrix, mma f16/bf16/tf32/s8 need sm_80; fp8 mma sm_89;
 * stmatrix, mbarrier expect_tx/try_wait, TMA, elect, setmaxnreg, fence.proxy.async sm_90
 * (setmaxnreg and wgmma sm_90a). Docs: docs/device-tensor.md.
 */
#ifndef CK_DEVICE_CUDA_CK_CUDA_TENSOR_H
#define CK_DEVICE_CUDA_CK_CUDA_TENSOR_H

/* 32-bit shared-state-space address of a generic pointer into shared memory (the compiler's
 * own conversion, which it folds: a shared array plus offsets stays 32-bit shared arithmetic). */
CK_TC_FN unsigned ck_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* ------------------------------------------------------------------ cp.async (sm_80) */

CK_TC_FN void ck_cp_async_4(void *smem, const void *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(ck_smem_addr(smem)), "l"(gmem)
                 : "memory");
}
CK_TC_FN void ck_cp_async_8(void *smem, const void *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(ck_smem_addr(smem)), "l"(gmem)
                 : "memory");
}
CK_TC_FN void ck_cp_async_16(void *smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(ck_smem_addr(smem)), "l"(gmem)
                 : "memory");
}
/* Copies src_bytes (0..16) bytes and zero-fills the rest of the 16 (src-size operand). */
CK_TC_FN void ck_cp_async_16_zfill(void *smem, const void *gmem, unsigned src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(ck_smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes)
                 : "memory");
}
CK_TC_FN void ck_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}
/* Wait until at most n (0..7; larger n waits as for 7) committed groups are pending. */
CK_TC_FN void ck_cp_async_wait(int n)
{
    switch (n) {
    case 0:
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        break;
    case 1:
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        break;
    case 2:
        asm volatile("cp.async.wait_group 2;" ::: "memory");
        break;
    case 3:
        asm volatile("cp.async.wait_group 3;" ::: "memory");
        break;
    case 4:
        asm volatile("cp.async.wait_group 4;" ::: "memory");
        break;
    case 5:
        asm volatile("cp.async.wait_group 5;" ::: "memory");
        break;
    case 6:
        asm volatile("cp.async.wait_group 6;" ::: "memory");
        break;
    default:
        asm volatile("cp.async.wait_group 7;" ::: "memory");
        break;
    }
}
CK_TC_FN void ck_cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;" ::: "memory");
}

/* ------------------------------------------------------------------ ldmatrix / stmatrix */

CK_TC_FN void ck_ldmatrix_x1(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(r[0])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_ldmatrix_x2(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_ldmatrix_x4(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_ldmatrix_x1_trans(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(r[0])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_ldmatrix_x2_trans(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_ldmatrix_x4_trans(unsigned *r, const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ck_smem_addr(row))
                 : "memory");
}
CK_TC_FN void ck_stmatrix_x1(void *row, const unsigned *r)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(ck_smem_addr(row)),
                 "r"(r[0])
                 : "memory");
}
CK_TC_FN void ck_stmatrix_x2(void *row, const unsigned *r)
{
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(ck_smem_addr(row)),
        "r"(r[0]), "r"(r[1])
        : "memory");
}
CK_TC_FN void ck_stmatrix_x4(void *row, const unsigned *r)
{
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(ck_smem_addr(row)),
        "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
        : "memory");
}
CK_TC_FN void ck_stmatrix_x1_trans(void *row, const unsigned *r)
{
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(ck_smem_addr(row)),
        "r"(r[0])
        : "memory");
}
CK_TC_FN void ck_stmatrix_x2_trans(void *row, const unsigned *r)
{
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(ck_smem_addr(row)),
        "r"(r[0]), "r"(r[1])
        : "memory");
}
CK_TC_FN void ck_stmatrix_x4_trans(void *row, const unsigned *r)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                     ck_smem_addr(row)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

/* ------------------------------------------------------------------ mma.sync */

/* float accumulator, a: 4 regs, b: 2 regs (k16 16-bit, tf32 k8, 8-bit k32) */
#define CK_CUDA_MMA_F32_A4B2(name, shape_types)                                                    \
    CK_TC_FN void name(float *d, const unsigned *a, const unsigned *b, const float *c)             \
    {                                                                                              \
        asm volatile("mma.sync.aligned." shape_types " {%0, %1, %2, %3}, {%4, %5, %6, %7}, "       \
                     "{%8, %9}, {%10, %11, %12, %13};"                                             \
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                              \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),           \
                       "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));                                \
    }
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k16_f32_f16, "m16n8k16.row.col.f32.f16.f16.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k16_f32_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k8_f32_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k32_f32_e4m3, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k32_f32_e5m2, "m16n8k32.row.col.f32.e5m2.e5m2.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k32_f32_e4m3_e5m2, "m16n8k32.row.col.f32.e4m3.e5m2.f32")
CK_CUDA_MMA_F32_A4B2(ck_mma_m16n8k32_f32_e5m2_e4m3, "m16n8k32.row.col.f32.e5m2.e4m3.f32")

/* float accumulator, m16n8k8 16-bit: a 2 regs, b 1 reg */
#define CK_CUDA_MMA_F32_A2B1(name, shape_types)                                                    \
    CK_TC_FN void name(float *d, const unsigned *a, const unsigned *b, const float *c)             \
    {                                                                                              \
        asm volatile("mma.sync.aligned." shape_types " {%0, %1, %2, %3}, {%4, %5}, {%6}, "         \
                     "{%7, %8, %9, %10};"                                                          \
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                              \
                     : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]),           \
                       "f"(c[3]));                                                                 \
    }
CK_CUDA_MMA_F32_A2B1(ck_mma_m16n8k8_f32_f16, "m16n8k8.row.col.f32.f16.f16.f32")
CK_CUDA_MMA_F32_A2B1(ck_mma_m16n8k8_f32_bf16, "m16n8k8.row.col.f32.bf16.bf16.f32")

/* f16 accumulator: c and d are two f16x2 registers */
CK_TC_FN void ck_mma_m16n8k16_f16_f16(unsigned *d, const unsigned *a, const unsigned *b,
                                      const unsigned *c)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, "
                 "{%6, %7}, {%8, %9};"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),
                   "r"(c[1]));
}
CK_TC_FN void ck_mma_m16n8k8_f16_f16(unsigned *d, const unsigned *a, const unsigned *b,
                                     const unsigned *c)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3}, {%4}, "
                 "{%5, %6};"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
}

/* integer: s32 accumulator, a 4 regs, b 2 regs of packed 8-bit values */
#define CK_CUDA_MMA_S32(name, shape_types)                                                         \
    CK_TC_FN void name(int *d, const unsigned *a, const unsigned *b, const int *c)                 \
    {                                                                                              \
        asm volatile("mma.sync.aligned." shape_types " {%0, %1, %2, %3}, {%4, %5, %6, %7}, "       \
                     "{%8, %9}, {%10, %11, %12, %13};"                                             \
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                              \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),           \
                       "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));                                \
    }
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_s8, "m16n8k32.row.col.s32.s8.s8.s32")
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_u8, "m16n8k32.row.col.s32.u8.u8.s32")
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_s8_u8, "m16n8k32.row.col.s32.s8.u8.s32")
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_u8_s8, "m16n8k32.row.col.s32.u8.s8.s32")
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_s8_satfinite, "m16n8k32.row.col.satfinite.s32.s8.s8.s32")
CK_CUDA_MMA_S32(ck_mma_m16n8k32_s32_u8_satfinite, "m16n8k32.row.col.satfinite.s32.u8.u8.s32")

/* ------------------------------------------------------------------ mbarrier */

CK_TC_FN void ck_mbar_init(unsigned long long *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(ck_smem_addr(bar)), "r"(count)
                 : "memory");
}
CK_TC_FN void ck_mbar_inval(unsigned long long *bar)
{
    asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(ck_smem_addr(bar)) : "memory");
}
/* Make the initialisation visible to the cluster and the async proxy (sm_90). */
CK_TC_FN void ck_mbar_fence_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
/* One arrive-on; returns an opaque state token. */
CK_TC_FN unsigned long long ck_mbar_arrive(unsigned long long *bar)
{
    unsigned long long st;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
                 : "=l"(st)
                 : "r"(ck_smem_addr(bar))
                 : "memory");
    return st;
}
/* One arrive-on, triggered when every cp.async this thread issued before it has landed
 * (cp.async.mbarrier.arrive.noinc, sm_80): the barrier's expected count includes this arrival,
 * so a producer of cp.async copies signals a stage's full barrier without waiting for them. */
CK_TC_FN void ck_cp_async_mbar_arrive_noinc(unsigned long long *bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ck_smem_addr(bar))
                 : "memory");
}
/* expect_tx(bytes) then arrive-on (sm_90). */
CK_TC_FN unsigned long long ck_mbar_arrive_expect_tx(unsigned long long *bar, unsigned bytes)
{
    unsigned long long st;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(st)
                 : "r"(ck_smem_addr(bar)), "r"(bytes)
                 : "memory");
    return st;
}
CK_TC_FN void ck_mbar_expect_tx(unsigned long long *bar, unsigned bytes)
{
    asm volatile(
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(ck_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
CK_TC_FN void ck_mbar_complete_tx(unsigned long long *bar, unsigned bytes)
{
    asm volatile(
        "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(ck_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
/* 1 when the phase with parity `parity` has completed (try_wait on sm_90, test_wait before). */
CK_TC_FN int ck_mbar_try_wait_parity(unsigned long long *bar, unsigned parity)
{
    unsigned ok;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok)
                 : "r"(ck_smem_addr(bar)), "r"(parity)
                 : "memory");
#else
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok)
                 : "r"(ck_smem_addr(bar)), "r"(parity)
                 : "memory");
#endif
    return (int)ok;
}
CK_TC_FN void ck_mbar_wait_parity(unsigned long long *bar, unsigned parity)
{
    while (!ck_mbar_try_wait_parity(bar, parity)) {
    }
}

/* Wait with acquire semantics at cluster scope: for data that other blocks of the cluster
 * wrote into this block's shared memory (ck_st_async_*) before completing on `bar`. */
CK_TC_FN void ck_mbar_wait_parity_cluster(unsigned long long *bar, unsigned parity)
{
    unsigned ok;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 "
                     "p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok)
                     : "r"(ck_smem_addr(bar)), "r"(parity)
                     : "memory");
    } while (!ok);
}

/* ------------------------------------------------------------------ st.async (sm_90) */

/* Store into the shared memory of the cluster's block `rank` at the offset of `dst` in this
 * block, and complete the stored bytes on that block's mbarrier at the offset of `bar`; no
 * fence, the receiver waits on its barrier (ck_mbar_wait_parity_cluster). dst: 4 (f32) or 8
 * (2f32) byte aligned. */
CK_TC_FN unsigned ck_mapa_shared_(const void *p, unsigned rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(r)
                 : "r"(ck_smem_addr(p)), "r"(rank));
    return r;
}
/* One arrival, with release semantics at cluster scope, on the mbarrier at the offset of `bar`
 * in the shared memory of the cluster's block `rank` (which may be this block). */
CK_TC_FN void ck_mbar_arrive_cluster(unsigned long long *bar, unsigned rank)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                     ck_mapa_shared_(bar, rank))
                 : "memory");
}
/* One arrival on a cluster peer's mbarrier with the default semantics (release at CTA scope):
 * "this warp is done reading a buffer that the peer's copy engine will overwrite". Nothing the
 * thread wrote is published to the peer, so no cluster-scope fence is needed; with release at
 * cluster scope (ck_mbar_arrive_cluster) every arrival waits on a fence, which stalled the
 * consumers of a multicast GEMM ring behind their own wgmma (ncu; bench/RESULTS.md). */
CK_TC_FN void ck_mbar_arrive_remote(unsigned long long *bar, unsigned rank)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(ck_mapa_shared_(bar, rank))
                 : "memory");
}
CK_TC_FN void ck_st_async_f32(float *dst, float v, unsigned long long *bar, unsigned rank)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(
                     ck_mapa_shared_(dst, rank)),
                 "f"(v), "r"(ck_mapa_shared_(bar, rank))
                 : "memory");
}
CK_TC_FN void ck_st_async_2f32(float *dst, float a, float b, unsigned long long *bar, unsigned rank)
{
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
            ck_mapa_shared_(dst, rank)),
        "f"(a), "f"(b), "r"(ck_mapa_shared_(bar, rank))
        : "memory");
}

/* ------------------------------------------------------------------ tensor copy engine */

CK_TC_FN unsigned long long ck_tmap_addr_(const ck_tensor_map *map)
{
    return (unsigned long long)map;
}
CK_TC_FN void ck_tma_prefetch_map(const ck_tensor_map *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(ck_tmap_addr_(map)) : "memory");
}

#define CK_CUDA_TMA_LOAD(dim, coord_params, coord_list, mask_op, coord_ops)                        \
    CK_TC_FN void ck_tma_load_##dim##d(void *smem, const ck_tensor_map *map,                       \
                                       unsigned long long *bar coord_params)                       \
    {                                                                                              \
        asm volatile("cp.async.bulk.tensor." #dim "d.shared::cluster.global.tile"                  \
                     ".mbarrier::complete_tx::bytes [%0], [%1, {" coord_list                       \
                     "}], [%2];" ::"r"(ck_smem_addr(smem)),                                        \
                     "l"(ck_tmap_addr_(map)), "r"(ck_smem_addr(bar))coord_ops                      \
                     : "memory");                                                                  \
    }                                                                                              \
    CK_TC_FN void ck_tma_load_##dim##d_multicast(void *smem, const ck_tensor_map *map,             \
                                                 unsigned long long *bar coord_params,             \
                                                 unsigned short cta_mask)                          \
    {                                                                                              \
        asm volatile("cp.async.bulk.tensor." #dim "d.shared::cluster.global.tile"                  \
                     ".mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {" coord_list    \
                     "}], [%2], " mask_op ";" ::"r"(ck_smem_addr(smem)),                           \
                     "l"(ck_tmap_addr_(map)), "r"(ck_smem_addr(bar))coord_ops, "h"(cta_mask)       \
                     : "memory");                                                                  \
    }
/* operand numbers: %0 smem, %1 map, %2 mbarrier, coordinates from %3, then the multicast mask */
CK_CUDA_TMA_LOAD(1, CK_TC_COMMA int c0, "%3", "%4", CK_TC_COMMA "r"(c0))
CK_CUDA_TMA_LOAD(2, CK_TC_COMMA int c0 CK_TC_COMMA int c1, "%3, %4", "%5",
                 CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1))
CK_CUDA_TMA_LOAD(3, CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2, "%3, %4, %5", "%6",
                 CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2))
CK_CUDA_TMA_LOAD(4, CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2 CK_TC_COMMA int c3,
                 "%3, %4, %5, %6", "%7",
                 CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2)CK_TC_COMMA "r"(c3))
CK_CUDA_TMA_LOAD(
    5,
    CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2 CK_TC_COMMA int c3 CK_TC_COMMA int c4,
    "%3, %4, %5, %6, %7", "%8",
    CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2)CK_TC_COMMA "r"(c3)CK_TC_COMMA "r"(c4))

#define CK_CUDA_TMA_STORE(dim, coord_params, coord_list, coord_ops)                                \
    CK_TC_FN void ck_tma_store_##dim##d(const ck_tensor_map *map, const void *smem coord_params)   \
    {                                                                                              \
        asm volatile("cp.async.bulk.tensor." #dim "d.global.shared::cta.tile.bulk_group"           \
                     " [%0, {" coord_list "}], [%1];" ::"l"(ck_tmap_addr_(map)),                   \
                     "r"(ck_smem_addr(smem))coord_ops                                              \
                     : "memory");                                                                  \
    }
CK_CUDA_TMA_STORE(1, CK_TC_COMMA int c0, "%2", CK_TC_COMMA "r"(c0))
CK_CUDA_TMA_STORE(2, CK_TC_COMMA int c0 CK_TC_COMMA int c1, "%2, %3",
                  CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1))
CK_CUDA_TMA_STORE(3, CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2, "%2, %3, %4",
                  CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2))
CK_CUDA_TMA_STORE(4, CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2 CK_TC_COMMA int c3,
                  "%2, %3, %4, %5",
                  CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2)CK_TC_COMMA "r"(c3))
CK_CUDA_TMA_STORE(
    5,
    CK_TC_COMMA int c0 CK_TC_COMMA int c1 CK_TC_COMMA int c2 CK_TC_COMMA int c3 CK_TC_COMMA int c4,
    "%2, %3, %4, %5, %6",
    CK_TC_COMMA "r"(c0)CK_TC_COMMA "r"(c1)CK_TC_COMMA "r"(c2)CK_TC_COMMA "r"(c3)CK_TC_COMMA "r"(c4))

CK_TC_FN void ck_tma_store_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/* Wait until at most n (0..7) bulk store groups still read shared memory / are incomplete. */
#define CK_CUDA_BULK_WAIT(name, suffix)                                                            \
    CK_TC_FN void name(int n)                                                                      \
    {                                                                                              \
        switch (n) {                                                                               \
        case 0:                                                                                    \
            asm volatile("cp.async.bulk.wait_group" suffix " 0;" ::: "memory");                    \
            break;                                                                                 \
        case 1:                                                                                    \
            asm volatile("cp.async.bulk.wait_group" suffix " 1;" ::: "memory");                    \
            break;                                                                                 \
        case 2:                                                                                    \
            asm volatile("cp.async.bulk.wait_group" suffix " 2;" ::: "memory");                    \
            break;                                                                                 \
        case 3:                                                                                    \
            asm volatile("cp.async.bulk.wait_group" suffix " 3;" ::: "memory");                    \
            break;                                                                                 \
        default:                                                                                   \
            asm volatile("cp.async.bulk.wait_group" suffix " 4;" ::: "memory");                    \
            break;                                                                                 \
        }                                                                                          \
    }
CK_CUDA_BULK_WAIT(ck_tma_store_wait_read, ".read")
CK_CUDA_BULK_WAIT(ck_tma_store_wait, "")

/* ------------------------------------------------------------------ fences, registers, elect */

/* Order generic-proxy shared-memory writes before later async-proxy reads (TMA store, wgmma). */
CK_TC_FN void ck_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/* setmaxnreg.{inc,dec}.sync.aligned.u32 N (N a literal multiple of 8 in 24..256; sm_90a). */
#define CK_SETMAXNREG_INC(n) asm volatile("setmaxnreg.inc.sync.aligned.u32 " #n ";" ::: "memory")
#define CK_SETMAXNREG_DEC(n) asm volatile("setmaxnreg.dec.sync.aligned.u32 " #n ";" ::: "memory")

/* 1 in exactly one active lane of the warp (elect.sync, sm_90). */
CK_TC_FN int ck_elect_one(void)
{
    unsigned ok;
    asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 %0, 1, 0, p; }" : "=r"(ok));
    return (int)ok;
}

#include "cuda/ck_cuda_wgmma.h"

#endif
