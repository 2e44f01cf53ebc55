/* An independent GEMM reference for tests/test_gemm_random.c: one thread per output element,
 * products and sums in double, inputs decoded with the prelude's exact conversions. Written
 * separately from src/ops/gemm on purpose (no tiles, no tensor cores). */
#include "ck_device.h"

CK_DEVICE double ref_load(const void *p, int type, long long i)
{
    switch (type) {
    case CK_NC_F32: return (double)((const float *)p)[i];
    case CK_NC_F16:
    case CK_NC_BF16: return ck_nc_to_f64(type, ((const unsigned short *)p)[i]);
    case CK_NC_I8: return (double)((const signed char *)p)[i];
    case CK_NC_I32: return (double)((const int *)p)[i];
    default: return ck_nc_to_f64(type, ((const unsigned char *)p)[i]);
    }
}

/* out[i*n + j] = sum_k A(i,k) B(k,j); absdot[i*n + j] = sum_k |A(i,k) B(k,j)|.
 * A(i,k) at i*sa0 + k*sa1, B(k,j) at k*sb0 + j*sb1 (elements). */
CK_KERNEL void gemm_ref(const void *a, int ta, long long sa0, long long sa1, const void *b,
                        int tb, long long sb0, long long sb1, long long m, long long n,
                        long long k, double *out, double *absdot)
{
    long long idx = (long long)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
    if (idx >= m * n)
        return;
    long long i = idx / n, j = idx % n;
    double s = 0, sa = 0;
    for (long long q = 0; q < k; ++q) {
        double x = ref_load(a, ta, i * sa0 + q * sa1);
        double y = ref_load(b, tb, q * sb0 + j * sb1);
        s += x * y;
        sa += x * y < 0 ? -x * y : x * y;
    }
    out[idx] = s;
    absdot[idx] = sa;
}
