/*
 * Device helpers shared by the pooling pipelines: the element type's conversions (POOL_TYPE
 * 0 f32, 1 f16, 2 bf16; POOL_T its storage) and the output index space (a view row m is
 * (n, o0, o1, o2) row-major over (N, POOL_OUT0..2); spatial dims padded to 3 at the front).
 */
#include "ck_block.h"

CK_DEVICE float pool_to_f32(POOL_T v)
{
#if POOL_TYPE == 0
    return v;
#elif POOL_TYPE == 1
    return ck_fast_f16_to_f32(v);
#else
    return ck_fast_bf16_to_f32(v);
#endif
}

CK_DEVICE POOL_T pool_from_f32(float f)
{
#if POOL_TYPE == 0
    return f;
#elif POOL_TYPE == 1
    return (POOL_T)ck_fast_f32_to_f16(f);
#else
    return (POOL_T)ck_fast_f32_to_bf16(f);
#endif
}

/* The input position's index in its (n, c) plane, flattened over the spatial dims (torch's). */
CK_DEVICE long long pool_flat(long long i0, long long i1, long long i2)
{
    return (i0 * POOL_IN1 + i1) * POOL_IN2 + i2;
}
