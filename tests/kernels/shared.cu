/* Block barriers, named barriers, static and dynamic shared memory (conformance kernels). */
#include "ck_device.h"

/* 256 threads: reverse each block's 256 values through static shared memory. */
CK_KERNEL void CK_LAUNCH_BOUNDS(256, 2) reverse_static(const int *in, int *out)
{
    CK_SHARED_ARRAY(int, buf, 256);
    unsigned t = ck_thread_linear(), base = ck_block_idx_x() * 256u;
    buf[t] = in[base + t];
    ck_sync_threads();
    out[base + t] = buf[255u - t];
}

/* 32 x 8 threads: transpose 32 x 32 tiles through a padded 2-D shared array. */
CK_KERNEL void transpose_2d(const float *in, float *out)
{
    CK_SHARED_ARRAY2(float, tile, 32, 33);
    unsigned x = ck_thread_idx_x(), y = ck_thread_idx_y();
    unsigned bx = ck_block_idx_x() * 32u, by = ck_block_idx_y() * 32u;
    unsigned w = ck_grid_dim_x() * 32u, h = ck_grid_dim_y() * 32u;
    for (unsigned j = y; j < 32u; j += 8u)
        tile[j][x] = in[(by + j) * w + bx + x];
    ck_sync_threads();
    for (unsigned j = y; j < 32u; j += 8u)
        out[(bx + j) * h + by + x] = tile[x][j];
}

/* n words per block staged in dynamic shared memory, rotated by one. */
CK_KERNEL void dynamic_rotate(const unsigned *in, unsigned *out, int n)
{
    unsigned *s = (unsigned *)ck_dynamic_shared();
    unsigned t = ck_thread_linear(), nt = ck_block_threads();
    const unsigned *src = in + (unsigned long)ck_block_idx_x() * (unsigned)n;
    for (unsigned i = t; i < (unsigned)n; i += nt)
        s[i] = src[i];
    ck_sync_threads();
    for (unsigned i = t; i < (unsigned)n; i += nt)
        out[(unsigned long)ck_block_idx_x() * (unsigned)n + i] = s[(i + 1u) % (unsigned)n] ^ i;
}

/* 192 threads: warps 0-1 produce, warps 2-3 consume through named barriers 1 and 2 (128
 * threads each); warps 4-5 meanwhile sum pairs among themselves with barrier 3 (64 threads). */
CK_KERNEL void named_barriers(const int *in, int *out, int *side)
{
    CK_SHARED_ARRAY(int, buf, 64);
    CK_SHARED_ARRAY(int, pair, 64);
    unsigned t = ck_thread_linear();
    for (int round = 0; round < 4; ++round) {
        if (t < 64u) {
            buf[t] = in[round * 64 + (int)t] * 3;
            ck_named_barrier_arrive(1, 128);
            ck_named_barrier_sync(2, 128);
        } else if (t < 128u) {
            ck_named_barrier_sync(1, 128);
            out[round * 64 + (int)(t - 64u)] = buf[127u - t] + round;
            ck_named_barrier_arrive(2, 128);
        } else {
            unsigned u = t - 128u;
            pair[u] = in[256 + round * 64 + (int)u];
            ck_named_barrier_sync(3, 64);
            side[round * 64 + (int)u] = pair[u] + pair[u ^ 1u];
            ck_named_barrier_sync(3, 64);
        }
    }
}
