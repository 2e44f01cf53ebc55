/* mma.sync, every variant of the prelude: one warp; the fragments come from global memory in
 * register order (lane l's registers at [l * count + i]) and D goes back the same way.
 * ck-min-target: sm_89 (fp8 variants) */
#include "ck_device.h"

/* variant: 0 k16 f32.f16, 1 k16 f32.bf16, 2 k8 f32.tf32, 3 k32 f32.e4m3, 4 f32.e5m2,
 * 5 f32.e4m3.e5m2, 6 f32.e5m2.e4m3, 7 k8 f32.f16, 8 k8 f32.bf16, 9 k16 f16.f16, 10 k8 f16.f16,
 * 11 k32 s32.s8, 12 s32.u8, 13 s32.s8.u8, 14 s32.u8.s8, 15 s32.s8 satfinite,
 * 16 s32.u8 satfinite. a: 4 words per lane, b: 2, c and d: 4 (f32/s32 bits; f16: 2 used). */
CK_KERNEL void mma_all(int variant, const unsigned *a, const unsigned *b, const unsigned *c,
                       unsigned *d)
{
    unsigned l = ck_lane_id(), ra[4], rb[2], rc[4], rd[4] = {0, 0, 0, 0};
    float fc[4], fd[4] = {0, 0, 0, 0};
    int ic[4], id[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) {
        ra[i] = a[l * 4 + i];
        rc[i] = c[l * 4 + i];
        fc[i] = ck_u32_as_f32(rc[i]);
        ic[i] = (int)rc[i];
    }
    rb[0] = b[l * 2];
    rb[1] = b[l * 2 + 1];
    switch (variant) {
    case 0: ck_mma_m16n8k16_f32_f16(fd, ra, rb, fc); break;
    case 1: ck_mma_m16n8k16_f32_bf16(fd, ra, rb, fc); break;
    case 2: ck_mma_m16n8k8_f32_tf32(fd, ra, rb, fc); break;
    case 3: ck_mma_m16n8k32_f32_e4m3(fd, ra, rb, fc); break;
    case 4: ck_mma_m16n8k32_f32_e5m2(fd, ra, rb, fc); break;
    case 5: ck_mma_m16n8k32_f32_e4m3_e5m2(fd, ra, rb, fc); break;
    case 6: ck_mma_m16n8k32_f32_e5m2_e4m3(fd, ra, rb, fc); break;
    case 7: ck_mma_m16n8k8_f32_f16(fd, ra, rb, fc); break;
    case 8: ck_mma_m16n8k8_f32_bf16(fd, ra, rb, fc); break;
    case 9: ck_mma_m16n8k16_f16_f16(rd, ra, rb, rc); break;
    case 10: ck_mma_m16n8k8_f16_f16(rd, ra, rb, rc); break;
    case 11: ck_mma_m16n8k32_s32_s8(id, ra, rb, ic); break;
    case 12: ck_mma_m16n8k32_s32_u8(id, ra, rb, ic); break;
    case 13: ck_mma_m16n8k32_s32_s8_u8(id, ra, rb, ic); break;
    case 14: ck_mma_m16n8k32_s32_u8_s8(id, ra, rb, ic); break;
    case 15: ck_mma_m16n8k32_s32_s8_satfinite(id, ra, rb, ic); break;
    default: ck_mma_m16n8k32_s32_u8_satfinite(id, ra, rb, ic); break;
    }
    for (int i = 0; i < 4; ++i)
        d[l * 4 + i] = variant <= 8 ? ck_f32_as_u32(fd[i]) : variant <= 10 ? rd[i] : (unsigned)id[i];
}
