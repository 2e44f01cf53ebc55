/* Cluster ids, cluster barrier and distributed shared memory (sm_90; conformance kernel).
 * Blocks of 64 threads; 8 outputs per thread. */
#include "ck_device.h"

CK_KERNEL void cluster_ids(unsigned *out)
{
    CK_SHARED_ARRAY(unsigned, s, 64);
    unsigned t = ck_thread_linear();
    unsigned b = ck_block_idx_x() + ck_grid_dim_x() * ck_block_idx_y();
    s[t] = b * 1000u + t;
    ck_cluster_sync();
    unsigned peer = (ck_cluster_ctarank() + 1u) % ck_cluster_nctarank();
    const unsigned *ps = (const unsigned *)ck_cluster_map_shared(s, peer);
    unsigned *o = out + (b * 64u + t) * 8u;
    o[0] = ps[63u - t];
    o[1] = ck_cluster_ctarank();
    o[2] = ck_cluster_nctarank();
    o[3] = ck_cluster_idx_x();
    o[4] = ck_cluster_idx_y();
    o[5] = ck_cluster_dim_x();
    o[6] = ck_cluster_dim_y();
    o[7] = ck_cluster_idx_z() + ck_cluster_dim_z() * 100u;
    ck_cluster_sync();
}
