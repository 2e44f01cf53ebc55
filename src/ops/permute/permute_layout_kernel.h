/*
 * The shared-memory layout and thread mapping of the permute tile kernel, in one place: the
 * kernel (permute_tile_kernel.h) computes its addresses with these functions, and the host
 * (permute.c, at kernel-build time, and tests/test_permute.c) replays them for every lane to
 * prove that both shared-memory passes are free of bank conflicts. Pure integer C; no hardware.
 *
 * A tile is TN x TM elements of the problem dst[.., m, .., n] = src[.., n, .., m] (n: the
 * destination's contiguous dimension, m: the source's). With V = 16 / element bytes, the tile
 * is GN x GM blocks of V x V elements: TN = GN * V rows of GM 16-byte chunks in shared memory
 * (row r holds src row n0 + r; row pitch GM * 16 bytes; GN, GM each 8, 16 or 32). Chunk c of row r
 * is stored at chunk position c ^ ((r / V) % 8): the XOR swizzle keeps both passes
 * conflict-free:
 *   pass 1 (global -> shared, 16-byte stores): a quarter-warp (8 lanes) writes 8 consecutive
 *     chunks c0..c0+7 (c0 % 8 == 0) of one row (GM >= 8); XOR with one value < 8 permutes them
 * within their aligned group of 8, so the 8 lanes cover the 32 banks once; pass 2 (shared ->
 * registers, 16-byte loads): lane (nc, mc) reads rows nc * V + j of chunk mc; a quarter-warp has 8
 * consecutive nc (GN >= 8), whose rows' swizzles (nc % 8) differ, so its 8 chunks land on 8
 * distinct 16-byte bank groups.
 */
#ifndef CK_OPS_PERMUTE_LAYOUT_KERNEL_H
#define CK_OPS_PERMUTE_LAYOUT_KERNEL_H

#ifndef CK_DEVICE
#define CK_DEVICE static inline
#endif

/* Tile shapes: GN x GM blocks of V x V elements, GN and GM each 8, 16 or 32, GN * GM threads
 * (64 to 256); policy.c chooses one per problem. */
/* Whether (gn, gm) is a supported tile shape for elem_bytes: at most 256 threads and 32 KB of
 * shared memory (gn * gm threads x V chunks of 16 bytes; 1-byte elements: 128 threads). */
CK_DEVICE int ck_perm_shape_ok(int elem_bytes, int gn, int gm)
{
    return (gn == 8 || gn == 16 || gn == 32) && (gm == 8 || gm == 16 || gm == 32) &&
           gn * gm <= 256 && gn * gm * 256 / elem_bytes <= 32768;
}

/* Thread slots per SM the tile kernel is built for: every shape holds V 16-byte chunks per
 * thread, so these give the same shared memory and bytes in flight per SM for every shape
 * (96 KB for 1- and 2-byte elements, 64 KB for 4, 48 KB for 8). */
CK_DEVICE int ck_perm_threads_per_sm(int elem_bytes)
{
    return elem_bytes == 1 ? 384 : elem_bytes == 2 ? 768 : elem_bytes == 4 ? 1024 : 1536;
}

/* Resident blocks per SM the tile kernel is built for (its launch bounds). */
CK_DEVICE int ck_perm_blocks_per_sm(int elem_bytes, int threads)
{
    int b = ck_perm_threads_per_sm(elem_bytes) / threads;
    return b < 1 ? 1 : b;
}

/* Byte offset in shared memory of logical chunk c of tile row r (rows of gm chunks). */
CK_DEVICE int ck_perm_smem_offset(int r, int c, int vec, int gm)
{
    return r * (gm * 16) + ((c ^ ((r / vec) & 7)) << 4);
}

/* Pass 1: thread t's s-th load (s < V) covers tile row *r, chunk *c. */
CK_DEVICE void ck_perm_pass1(int t, int s, int threads, int gm, int *r, int *c)
{
    *r = s * (threads / gm) + t / gm;
    *c = t % gm;
}

/* Pass 2: thread t reads chunk *mc of rows nc * V + j (j < V) and writes destination rows
 * m0 + mc * V + i (i < V) at columns n0 + nc * V ... */
CK_DEVICE void ck_perm_pass2(int t, int gn, int *nc, int *mc)
{
    *nc = t % gn;
    *mc = t / gn;
}

#endif
