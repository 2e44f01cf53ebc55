/* Thread, block, warp and lane ids and grid/block dimensions (conformance kernel). */
#include "ck_device.h"

CK_KERNEL void CK_LAUNCH_BOUNDS(1024) ids(unsigned *out)
{
    unsigned b = ck_block_idx_x() + ck_grid_dim_x() * (ck_block_idx_y() + ck_grid_dim_y() * ck_block_idx_z());
    unsigned t = ck_thread_linear();
    unsigned *o = out + ((unsigned long)b * ck_block_threads() + t) * 8u;
    o[0] = ck_thread_idx_x();
    o[1] = ck_thread_idx_y();
    o[2] = ck_thread_idx_z();
    o[3] = ck_block_dim_x() | ck_block_dim_y() << 8 | ck_block_dim_z() << 16;
    o[4] = ck_grid_dim_x() | ck_grid_dim_y() << 8 | ck_grid_dim_z() << 16;
    o[5] = b;
    o[6] = ck_warp_id();
    o[7] = ck_lane_id();
}
