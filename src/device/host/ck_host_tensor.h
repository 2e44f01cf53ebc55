/*
 * Host (CPU emulator) implementation of the tensor-core and asynchronous operations of the
 * device C dialect. Each function runs in the emulated thread that calls it. Warp- and
 * warpgroup-collective operations (ldmatrix, stmatrix, mma, wgmma, elect) deposit the caller's
 * registers through ck_emu_group_collective (EMU_CONTRACT.md), and one lane runs the pure
 * reference of host/ck_emu_tensor_ref.h for the whole group. Asynchronous operations (cp.async,
 * TMA, wgmma) complete at issue, so their commit/wait calls are no-ops; mbarrier waits yield the
 * fiber (ck_emu_yield) until the phase completes.
 *
 * Faults (a wgmma operand outside shared memory or an unsupported type combination, an ldmatrix
 * row address from an inactive lane, a TMA box that does not fit in shared memory, a tensor map
 * that is not an emulator map) stop the launch through ck_emu_trap with a sentence when the
 * runtime's prelude is present; otherwise the wgmma yields NaN accumulators and the copy does
 * nothing. Multicast TMA writes every block of the cluster named in the mask through
 * ck_cluster_map_shared (without the runtime's prelude: the issuing block, as rank 0).
 * Docs: docs/device-tensor.md.
 */
#ifndef CK_DEVICE_HOST_CK_HOST_TENSOR_H
#define CK_DEVICE_HOST_CK_HOST_TENSOR_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "host/ck_emu_tensor_ref.h"

#ifdef CK_HOST_CORE_H
/* The runtime's host prelude is included (ck_device.h includes it before this header): besides
 * the contract's primitives it provides ck_emu_trap (report a kernel fault and stop the launch)
 * and the cluster's distributed shared memory (ck_cluster_nctarank, ck_cluster_map_shared). */
#define CK_EMU_TC_FAULT(what)  ck_emu_trap(what)
#define CK_EMU_TC_HAVE_CLUSTER 1
#else
/* Emulator primitives (EMU_CONTRACT.md), for use without the runtime's prelude. */
unsigned ck_emu_thread_linear(void);
unsigned ck_emu_block_threads(void);
void ck_emu_yield(void);
void ck_emu_group_collective(unsigned group_size, const void *in, size_t in_size, void *out,
                             size_t out_size,
                             void (*fn)(const void *all_in, void *all_out, void *ctx), void *ctx);
void *ck_emu_shared_base(void);
size_t ck_emu_shared_bytes(void);
#define CK_EMU_TC_FAULT(what) ((void)(what))
#endif

/* Shared-memory address (offset from the block's shared memory base) of a pointer into it. */
static inline unsigned ck_smem_addr(const void *p)
{
    return (unsigned)((const char *)p - (const char *)ck_emu_shared_base());
}

/* ------------------------------------------------------------------ cp.async: copy at issue */

static inline void ck_cp_async_4(void *smem, const void *gmem)
{
    memcpy(smem, gmem, 4);
}
static inline void ck_cp_async_8(void *smem, const void *gmem)
{
    memcpy(smem, gmem, 8);
}
static inline void ck_cp_async_16(void *smem, const void *gmem)
{
    memcpy(smem, gmem, 16);
}
static inline void ck_cp_async_16_zfill(void *smem, const void *gmem, unsigned src_bytes)
{
    unsigned n = src_bytes < 16u ? src_bytes : 16u;
    if (n)
        memcpy(smem, gmem, n);
    memset((char *)smem + n, 0, 16u - n);
}
static inline void ck_cp_async_commit(void) {}
static inline void ck_cp_async_wait(int n)
{
    (void)n;
}
static inline void ck_cp_async_wait_all(void) {}

/* ------------------------------------------------------------------ ldmatrix / stmatrix */

typedef struct ck_emu_ldst_cfg {
    unsigned num;
    int trans;
} ck_emu_ldst_cfg;

static inline void ck_emu_ldmatrix_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_ldst_cfg *cfg = (const ck_emu_ldst_cfg *)ctx;
    const void *rows[32];
    uint32_t out[32][4];
    memcpy(rows, all_in, sizeof rows);
    memset(out, 0, sizeof out);
    for (unsigned i = 0; i < 8u * cfg->num; ++i)
        if (rows[i] == NULL) { /* an inactive lane supplied a needed row address */
            CK_EMU_TC_FAULT("ldmatrix: a lane that supplies a row address is not active");
            memcpy(all_out, out, sizeof out);
            return;
        }
    ck_emu_ref_ldmatrix(cfg->num, cfg->trans, out, rows);
    memcpy(all_out, out, sizeof out);
}

static inline void ck_emu_stmatrix_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_ldst_cfg *cfg = (const ck_emu_ldst_cfg *)ctx;
    struct lane_in {
        void *row;
        uint32_t r[4];
    } in[32];
    void *rows[32];
    uint32_t regs[32][4];
    (void)all_out;
    memcpy(in, all_in, sizeof in);
    for (unsigned i = 0; i < 32; ++i) {
        rows[i] = in[i].row;
        memcpy(regs[i], in[i].r, sizeof regs[i]);
    }
    for (unsigned i = 0; i < 8u * cfg->num; ++i)
        if (rows[i] == NULL) {
            CK_EMU_TC_FAULT("stmatrix: a lane that supplies a row address is not active");
            return;
        }
    ck_emu_ref_stmatrix(cfg->num, cfg->trans, rows, (const uint32_t(*)[4])regs);
}

static inline void ck_emu_ldmatrix_(unsigned num, int trans, unsigned *r, const void *row)
{
    ck_emu_ldst_cfg cfg = {num, trans};
    uint32_t out[4] = {0, 0, 0, 0};
    ck_emu_group_collective(32, &row, sizeof row, out, sizeof out, ck_emu_ldmatrix_fn_, &cfg);
    for (unsigned i = 0; i < num; ++i)
        r[i] = out[i];
}

static inline void ck_emu_stmatrix_(unsigned num, int trans, void *row, const unsigned *r)
{
    ck_emu_ldst_cfg cfg = {num, trans};
    struct {
        void *row;
        uint32_t r[4];
    } in;
    memset(&in, 0, sizeof in);
    in.row = row;
    for (unsigned i = 0; i < num; ++i)
        in.r[i] = r[i];
    ck_emu_group_collective(32, &in, sizeof in, NULL, 0, ck_emu_stmatrix_fn_, &cfg);
}

static inline void ck_ldmatrix_x1(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(1, 0, r, row);
}
static inline void ck_ldmatrix_x2(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(2, 0, r, row);
}
static inline void ck_ldmatrix_x4(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(4, 0, r, row);
}
static inline void ck_ldmatrix_x1_trans(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(1, 1, r, row);
}
static inline void ck_ldmatrix_x2_trans(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(2, 1, r, row);
}
static inline void ck_ldmatrix_x4_trans(unsigned *r, const void *row)
{
    ck_emu_ldmatrix_(4, 1, r, row);
}
static inline void ck_stmatrix_x1(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(1, 0, row, r);
}
static inline void ck_stmatrix_x2(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(2, 0, row, r);
}
static inline void ck_stmatrix_x4(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(4, 0, row, r);
}
static inline void ck_stmatrix_x1_trans(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(1, 1, row, r);
}
static inline void ck_stmatrix_x2_trans(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(2, 1, row, r);
}
static inline void ck_stmatrix_x4_trans(void *row, const unsigned *r)
{
    ck_emu_stmatrix_(4, 1, row, r);
}

/* ------------------------------------------------------------------ mma.sync */

enum { CK_EMU_ACC_F32 = 0, CK_EMU_ACC_F16 = 1, CK_EMU_ACC_S32 = 2, CK_EMU_ACC_S32_SAT = 3 };

typedef struct ck_emu_mma_cfg {
    ck_emu_mma_shape shape;
    ck_emu_elem fa, fb;
    int acc;
} ck_emu_mma_cfg;

/* per-lane registers: a[4], b[2], c[4] (32-bit patterns of floats, f16x2 or s32) */
typedef struct ck_emu_mma_lane {
    uint32_t a[4], b[2], c[4];
} ck_emu_mma_lane;

static inline void ck_emu_mma_fn_(const void *all_in, void *all_out, void *ctx)
{
    const ck_emu_mma_cfg *cfg = (const ck_emu_mma_cfg *)ctx;
    const ck_emu_mma_lane *in = (const ck_emu_mma_lane *)all_in;
    uint32_t a[32][4], b[32][2], c[32][4], d[32][4];
    for (unsigned l = 0; l < 32; ++l) {
        memcpy(a[l], in[l].a, sizeof a[l]);
        memcpy(b[l], in[l].b, sizeof b[l]);
        memcpy(c[l], in[l].c, sizeof c[l]);
    }
    memset(d, 0, sizeof d);
    if (cfg->acc == CK_EMU_ACC_F32) {
        float cf[32][4], df[32][4];
        memcpy(cf, c, sizeof cf);
        ck_emu_ref_mma_f32(cfg->shape, cfg->fa, cfg->fb, df, (const uint32_t(*)[4])a,
                           (const uint32_t(*)[2])b, (const float(*)[4])cf);
        memcpy(d, df, sizeof d);
    } else if (cfg->acc == CK_EMU_ACC_F16) {
        uint32_t c2[32][2], d2[32][2];
        for (unsigned l = 0; l < 32; ++l)
            c2[l][0] = c[l][0], c2[l][1] = c[l][1];
        ck_emu_ref_mma_f16acc(cfg->shape, d2, (const uint32_t(*)[4])a, (const uint32_t(*)[2])b,
                              (const uint32_t(*)[2])c2);
        for (unsigned l = 0; l < 32; ++l)
            d[l][0] = d2[l][0], d[l][1] = d2[l][1];
    } else {
        int32_t ci[32][4], di[32][4];
        memcpy(ci, c, sizeof ci);
        ck_emu_ref_mma_s32(cfg->fa, cfg->fb, cfg->acc == CK_EMU_ACC_S32_SAT, di,
                           (const uint32_t(*)[4])a, (const uint32_t(*)[2])b,
                           (const int32_t(*)[4])ci);
        memcpy(d, di, sizeof d);
    }
    memcpy(all_out, d, sizeof d);
}

/* na/nb: registers of a and b; nc: registers of c and d (4, or 2 for f16 accumulators) */
static inline void ck_emu_mma_(ck_emu_mma_shape shape, ck_emu_elem fa, ck_emu_elem fb, int acc,
                               void *d, const unsigned *a, unsigned na, const unsigned *b,
                               unsigned nb, const void *c, unsigned nc)
{
    ck_emu_mma_cfg cfg = {shape, fa, fb, acc};
    ck_emu_mma_lane in;
    uint32_t out[4] = {0, 0, 0, 0};
    memset(&in, 0, sizeof in);
    for (unsigned i = 0; i < na; ++i)
        in.a[i] = a[i];
    for (unsigned i = 0; i < nb; ++i)
        in.b[i] = b[i];
    memcpy(in.c, c, 4u * nc);
    ck_emu_group_collective(32, &in, sizeof in, out, sizeof out, ck_emu_mma_fn_, &cfg);
    memcpy(d, out, 4u * nc);
}

#define CK_EMU_MMA_FLOAT_(name, shape, fa, fb, na, nb)                                             \
    static inline void name(float *d, const unsigned *a, const unsigned *b, const float *c)        \
    {                                                                                              \
        ck_emu_mma_(shape, fa, fb, CK_EMU_ACC_F32, d, a, na, b, nb, c, 4);                         \
    }
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k16_f32_f16, CK_EMU_M16N8K16, CK_EMU_F16, CK_EMU_F16, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k16_f32_bf16, CK_EMU_M16N8K16, CK_EMU_BF16, CK_EMU_BF16, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k8_f32_f16, CK_EMU_M16N8K8, CK_EMU_F16, CK_EMU_F16, 2, 1)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k8_f32_bf16, CK_EMU_M16N8K8, CK_EMU_BF16, CK_EMU_BF16, 2, 1)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k8_f32_tf32, CK_EMU_M16N8K8, CK_EMU_TF32, CK_EMU_TF32, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k32_f32_e4m3, CK_EMU_M16N8K32, CK_EMU_E4M3, CK_EMU_E4M3, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k32_f32_e5m2, CK_EMU_M16N8K32, CK_EMU_E5M2, CK_EMU_E5M2, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k32_f32_e4m3_e5m2, CK_EMU_M16N8K32, CK_EMU_E4M3, CK_EMU_E5M2, 4, 2)
CK_EMU_MMA_FLOAT_(ck_mma_m16n8k32_f32_e5m2_e4m3, CK_EMU_M16N8K32, CK_EMU_E5M2, CK_EMU_E4M3, 4, 2)

static inline void ck_mma_m16n8k16_f16_f16(unsigned *d, const unsigned *a, const unsigned *b,
                                           const unsigned *c)
{
    ck_emu_mma_(CK_EMU_M16N8K16, CK_EMU_F16, CK_EMU_F16, CK_EMU_ACC_F16, d, a, 4, b, 2, c, 2);
}
static inline void ck_mma_m16n8k8_f16_f16(unsigned *d, const unsigned *a, const unsigned *b,
                                          const unsigned *c)
{
    ck_emu_mma_(CK_EMU_M16N8K8, CK_EMU_F16, CK_EMU_F16, CK_EMU_ACC_F16, d, a, 2, b, 1, c, 2);
}

#define CK_EMU_MMA_INT_(name, fa, fb, acc)                                                         \
    static inline void name(int *d, const unsigned *a, const unsigned *b, const int *c)            \
    {                                                                                              \
        ck_emu_mma_(CK_EMU_M16N8K32, fa, fb, acc, d, a, 4, b, 2, c, 4);                            \
    }
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_s8, CK_EMU_S8, CK_EMU_S8, CK_EMU_ACC_S32)
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_u8, CK_EMU_U8, CK_EMU_U8, CK_EMU_ACC_S32)
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_s8_u8, CK_EMU_S8, CK_EMU_U8, CK_EMU_ACC_S32)
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_u8_s8, CK_EMU_U8, CK_EMU_S8, CK_EMU_ACC_S32)
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_s8_satfinite, CK_EMU_S8, CK_EMU_S8, CK_EMU_ACC_S32_SAT)
CK_EMU_MMA_INT_(ck_mma_m16n8k32_s32_u8_satfinite, CK_EMU_U8, CK_EMU_U8, CK_EMU_ACC_S32_SAT)

#include "host/ck_host_async.h"

#endif
