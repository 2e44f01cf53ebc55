/* st.async between the blocks of a cluster (sm_90; conformance kernel). ck-min-target: sm_90a */
#include "ck_device.h"

/* Cluster-wide exchange without barrier.cluster in the data path: every block sends one value
 * and one pair to every block (st.async completing on the receiver's mbarriers); each thread
 * writes what its block received, 3 outputs per rank (up to 16 ranks). */
CK_KERNEL void cluster_st_async(float *out, float base)
{
    CK_SHARED_ARRAY(float, one, 16);
    CK_SHARED_ARRAY(float, two, 32);
    CK_SHARED_ARRAY(unsigned long long, bar, 2);
    unsigned t = ck_thread_linear(), rank = ck_cluster_ctarank(), n = ck_cluster_nctarank();
    unsigned b = ck_block_idx_x() + ck_grid_dim_x() * ck_block_idx_y();
    if (t == 0) {
        ck_mbar_init(&bar[0], 1);
        ck_mbar_init(&bar[1], 1);
        (void)ck_mbar_arrive_expect_tx(&bar[0], 4u * n);
        (void)ck_mbar_arrive_expect_tx(&bar[1], 8u * n);
        ck_mbar_fence_init();
    }
    ck_cluster_arrive();
    float v = base + (float)b;
    ck_cluster_wait();
    if (t < n) {
        ck_st_async_f32(one + rank, v, &bar[0], t);
        ck_st_async_2f32(two + 2u * rank, v * 2.0f, v + 0.5f, &bar[1], t);
    }
    ck_mbar_wait_parity_cluster(&bar[0], 0);
    ck_mbar_wait_parity_cluster(&bar[1], 0);
    float *o = out + (b * 64u + t) * 48u;
    for (unsigned r = 0; r < n; ++r) {
        o[3u * r] = one[r];
        o[3u * r + 1u] = two[2u * r];
        o[3u * r + 2u] = two[2u * r + 1u];
    }
}
