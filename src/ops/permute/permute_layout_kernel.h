/*
 * The shared-memory layout and thread mapping of the permute tile kernel, in one place: the
 * kernel (permute_kernel.h) computes its addresses with these functions, and the host
 * (permute.c, at kernel-build time, and tests/test_permute.c) replays them for every lane to
 * prove that both shared-memory passes are free of bank conflicts. Pure integer C; no hardware.
 *
 * A tile is TN x TM elements of the problem dst[.., m, .., n] = src[.., n, .., m] (n: the
 * destination's contiguous dimension, m: the source's). With V = 16 / element bytes, the tile
 * is GN x GM blocks of V x V elements: TN = GN * V rows of GM 16-byte chunks in shared memory
 * (row r holds src row n0 + r; row pitch GM * 16 bytes, GM = 16, so 256 bytes). Chunk c of row r
 * is stored at chunk position c ^ ((r / V) % 8): the XOR swizzle keeps both passes
 * conflict-free:
 *   pass 1 (global -> shared, 16-byte stores): a quarter-warp (8 lanes) writes 8 consecutive
 *     chunks c0..c0+7 (c0 % 8 == 0) of one row; XOR with one value < 8 permutes them within
 *     their aligned group of 8, so the 8 lanes cover the 32 banks once;
 *   pass 2 (shared -> registers, 16-byte loads): lane (nc, mc) reads rows nc * V + j of chunk
 *     mc; a quarter-warp has 8 consecutive nc, whose rows' swizzles (nc % 8) differ, so its 8
 *     chunks land on 8 distinct 16-byte bank groups.
 */
#ifndef CK_OPS_PERMUTE_LAYOUT_KERNEL_H
#define CK_OPS_PERMUTE_LAYOUT_KERNEL_H

#ifndef CK_DEVICE
#define CK_DEVICE static inline
#endif

/* Chunks (16 bytes) per shared-memory row. */
#define CK_PERM_GM 16

/* n-direction blocks of a tile: 8 for 1-byte elements (128 threads), else 16 (256 threads). */
CK_DEVICE int ck_perm_gn(int elem_bytes)
{
    return elem_bytes == 1 ? 8 : 16;
}

/* Resident blocks per SM the tile kernel is built for (its launch bounds). */
CK_DEVICE int ck_perm_blocks_per_sm(int elem_bytes)
{
    return elem_bytes <= 2 ? 3 : elem_bytes == 8 ? 6 : 4;
}

/* Byte offset in shared memory of logical chunk c of tile row r. */
CK_DEVICE int ck_perm_smem_offset(int r, int c, int vec)
{
    return r * (CK_PERM_GM * 16) + ((c ^ ((r / vec) & 7)) << 4);
}

/* Pass 1: thread t's s-th load (s < V) covers tile row *r, chunk *c. */
CK_DEVICE void ck_perm_pass1(int t, int s, int threads, int *r, int *c)
{
    *r = s * (threads / CK_PERM_GM) + t / CK_PERM_GM;
    *c = t % CK_PERM_GM;
}

/* Pass 2: thread t reads chunk *mc of rows nc * V + j (j < V) and writes destination rows
 * m0 + mc * V + i (i < V) at columns n0 + nc * V ... */
CK_DEVICE void ck_perm_pass2(int t, int gn, int *nc, int *mc)
{
    *nc = t % gn;
    *mc = t / gn;
}

#endif
