/*
 * ck_emu_api.h - the interface between kernel code compiled for ck's CPU emulator and the
 * emulator inside libck. A kernel shared object receives one ck_emu_api table when it is loaded
 * (ck_emu_bind) and reaches the emulator only through it, so the object needs no symbol of libck.
 * Included by host/ck_host_core.h (kernel side) and by src/rt/emulator.c (library side).
 */
#ifndef CK_EMU_API_H
#define CK_EMU_API_H

#include <stddef.h>

#define CK_EMU_API_VERSION 1

/* Identity of one emulated thread; valid while it runs. */
typedef struct ck_emu_thread {
    unsigned tid[3], bid[3], bdim[3], gdim[3]; /* threadIdx, blockIdx, blockDim, gridDim */
    unsigned linear;                           /* threadIdx linearised within the block */
    unsigned block_threads;                    /* threads per block */
    unsigned cluster_rank, cluster_size;       /* block rank in its cluster, blocks per cluster */
    unsigned cluster_idx[3], cluster_dim[3];   /* cluster index in the grid, blocks per cluster */
    void *dynamic_shared;                      /* the block's dynamic shared memory */
} ck_emu_thread;

typedef struct ck_emu_api {
    unsigned version; /* CK_EMU_API_VERSION */
    unsigned size;    /* sizeof(ck_emu_api) */
    const ck_emu_thread *(*self)(void);
    /* Barrier `id` (0..15) expecting `count` threads (0: all threads of the block); wait = 0
     * arrives without waiting (bar.arrive). */
    void (*barrier)(unsigned id, unsigned count, int wait);
    void (*cluster_barrier)(void);
    void (*yield)(void);
    void (*collective)(unsigned group_size, const void *in, size_t in_size, void *out,
                       size_t out_size, void (*fn)(const void *, void *, void *), void *ctx);
    /* Static shared memory of the declaration identified by `site` (same address for every
     * thread of the block). */
    void *(*shared_static)(const void *site, size_t bytes, size_t align);
    void *(*shared_base)(void);
    size_t (*shared_bytes)(void);
    void *(*cluster_map_shared)(const void *p, unsigned rank);
    /* Stop the calling thread's launch with an error naming `what`. Does not return. */
    void (*trap)(const char *what);
} ck_emu_api;

#endif
