/*
 * ck/tile_kernel.h - tile programming API for users' own kernels: describe tile windows on
 * the host (a tensor descriptor, a tile distribution, an element type), let ck generate the
 * device C functions that move tiles between memory and per-thread registers, attach them to
 * your kernel source, compile for the GPU or the emulator, launch with ck/runtime.h.
 *
 * For a window named "a" over elements of C type T (float, double, int, signed char, unsigned
 * char; f16/bf16/fp8 are moved as their raw unsigned short / unsigned char storage) the
 * generated source defines, in device C (ck_device.h names only):
 *
 *   CK_NREGS_a                       registers per thread (the distribution's Y product)
 *   typedef struct { T *p; long long o0, o1, ...; long long SYM...; } ck_win_a;
 *       the window: base pointer (16-byte aligned), origin per tensor dim, and one member per
 *       run-time symbol of the descriptor (names as declared, sorted by strcmp; the names
 *       regs, w, i, p, d, x, o<digit>... and ck_... are refused: the generated code uses them)
 *   ck_win_a make_win_a(T *p, long long o0, ..., long long SYM, ...)   same order
 *   void load_a(T *regs, const ck_win_a *w)        regs[d] = tile element Y, d = ys_to_d(Y)
 *   void store_a(const T *regs, const ck_win_a *w)
 *   void update_a(const T *regs, const ck_win_a *w)    mem = CK_UPDATE_a(mem, reg); default +
 *                                                  (a plain read-modify-write: where replicas
 *                                                  or an aliasing descriptor bring several
 *                                                  threads to one element, use atomic_add_a)
 *   void atomic_add_a(const T *regs, const ck_win_a *w)    float and int only
 *   void move_a(ck_win_a *w, long long d0, ...)    origin += step
 *   void tile_x_a(int d, long long *x)             tile index X of register d for this thread
 *   int sweep_a(int i)                             register of the i-th element of CK's
 *                                                  sweep_tile order (X0's span outermost)
 * Elementwise operations on distributed tensors are loops over the CK_NREGS_a registers
 * (every window with the same encoding has the same register layout).
 *
 * Threads: the partition index P comes from the thread's position in the block: one P dim:
 * P0 = linear thread id; two P dims: (P0, P1) = (warp, lane) with 32-lane warps (CK's
 * convention); more: row-major over the P lengths. Threads whose P index is out of range
 * load the fill value and store nothing.
 *
 * Memory: element (origin + X) of the descriptor, X the tile index of the element; origins
 * are >= 0. Accesses outside the tensor or in padding are masked (loads give the fill value,
 * stores are dropped); masks are generated only where the descriptor has padding or where the
 * tensor length is not known to be a multiple of the window length with an origin aligned to
 * it (origin_align) -- in that unmasked case the window must lie inside the tensor. Per-access
 * offsets are folded into one base plus constants (or constant x symbol terms) where the descriptor
 * is affine; 16-byte vector accesses are used where the load/store traits' vector is 16 bytes and
 * the alignment is proven (origin_align, strides' divisors). A load of 16-bit elements whose
 * register pairs are 8x8-matrix fragments (mma A/B, wgmma register A, the m16n8 accumulator)
 * over a concrete tile storing 16-byte aligned rows (ck_smem_tile_make's layouts, swizzled or
 * not) uses ldmatrix(.trans) x4/x2/x1 instead (docs/mma-layouts.md).
 *
 * The generated text starts with a comment naming the window, its encoding, element type and
 * descriptor. Generation is deterministic (same input, same text).
 */
#ifndef CK_TILE_KERNEL_H
#define CK_TILE_KERNEL_H

#include "ck/distribution.h"
#include "ck/runtime.h"
#include "ck/tile.h"
#include "ck/types.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CK_WIN_LOAD = 1,
    CK_WIN_STORE = 2,
    CK_WIN_UPDATE = 4,
    CK_WIN_ATOMIC_ADD = 8,
    CK_WIN_ALL = 15 /* atomic add only where the type allows it */
};

/* One tile window to generate. */
typedef struct ck_tile_window_spec {
    const char *name;            /* C identifier suffix: load_<name>, ... (at most 40 chars) */
    const ck_descriptor *desc;   /* tensor descriptor; visible dims = X dims of the encoding */
    ck_expr_arena *ctx;          /* ctx of desc's symbols (NULL for a concrete descriptor) */
    const ck_dist_encoding *enc; /* tile distribution (window lengths = its X lengths) */
    ck_dtype dtype;
    long long origin_align[CK_DIST_MAX_X]; /* origin i is a multiple of this (0 means 1) */
    double fill;  /* value loaded where masked (f32/f64: also +-inf, NaN); raw-storage
                   types (f16, bf16, fp8): a bit pattern */
    unsigned ops; /* CK_WIN_* bits; 0 means CK_WIN_ALL */
    int read_only; /* 1: the memory is not written while the kernel runs: 16-byte loads take the
                    * read-only data path (ck_ld16_nc) */
} ck_tile_window_spec;

/* Generate the device C of one window (functions as listed above; no #include). *source is
 * freed with ck_tile_free. Errors (CK_ERROR_INVALID_ARGUMENT, naming the field): bad name,
 * encoding, dims or lengths that differ from the descriptor's, symbolic descriptor without
 * ctx, unsupported dtype, atomic add asked for a type without it. */
ck_status ck_tile_window_generate(const ck_tile_window_spec *spec, char **source);

/* A shuffle between two distributions of the same tile through shared memory (CK's
 * shuffle_tile): threads store their registers of distribution `src` into a shared-memory
 * tile and load those of `dst`. The tile's layout is chosen among row-major, row-major with
 * padded rows and an XOR swizzle of 16-byte chunks (ck_make_xor_transform) by the access
 * verifier (ck_access_check_desc): the fewest bank-conflict ways of both passes, then the
 * smallest footprint. Generated for shuffle "s" with C type T:
 *   CK_SHUFFLE_SMEM_s                 elements of shared memory the caller provides
 *   void shuffle_s(T *dst_regs, const T *src_regs, T *smem)    (two block barriers inside:
 *                                     every thread of the block must call it)
 * plus the windows "s_in" (store) and "s_out" (load) it uses. */
typedef struct ck_tile_shuffle_spec {
    const char *name;                  /* C identifier suffix (at most 32 chars) */
    const ck_dist_encoding *src, *dst; /* same X lengths */
    ck_dtype dtype;
} ck_tile_shuffle_spec;

/* What the verifier chose. */
typedef struct ck_tile_shuffle_info {
    char layout[64]; /* "row-major", "padded rows (+N)" or "xor 16-byte chunks" */
    long long smem_elements;
    long long bank_ways_total; /* of the chosen layout, both passes */
    long long bank_ways_min_total;
    long long row_major_bank_ways_total; /* of plain row-major, for comparison */
} ck_tile_shuffle_info;

/* Generate a shuffle's device C (no #include); info may be NULL. Errors name the field:
 * bad name, invalid encodings, different X lengths, unsupported dtype. */
ck_status ck_tile_shuffle_generate(const ck_tile_shuffle_spec *spec, char **source,
                                   ck_tile_shuffle_info *info);

/* A TMA window (sm_90): a tile of a tensor descriptor copied between global and shared memory
 * by the tensor memory accelerator. The descriptor must be concrete and affine (a strided view:
 * offset = sum idx_i * stride_i, origin 0, no padding) with a contiguous dim; the tensor map's
 * dims, byte strides and box come from it and the tile, once, and only the address is given per
 * execution (ck_tma_window_encode). Elements of a box outside the tensor read as zero (loads)
 * and are not written (stores): odd sizes need no masks. */
typedef struct ck_tma_window_spec {
    const ck_descriptor *desc; /* concrete, affine, 1..5 dims */
    int tile[5];               /* box lengths per descriptor dim, 1..256 */
    ck_dtype dtype;            /* 1-, 2-, 4- or 8-byte types */
    int swizzle;               /* 0 none, 1 32-byte, 2 64-byte, 3 128-byte (CK_SWIZZLE_*) */
} ck_tma_window_spec;

typedef struct ck_tma_window {
    int rank;
    int perm[5];            /* TMA dim j is descriptor dim perm[j] (perm[0]: contiguous) */
    ck_tensor_map_desc map; /* everything but global_address */
    long long box_bytes;    /* bytes one box fills in shared memory (expect_tx) */
} ck_tma_window;

/* Derive the window. Errors (CK_ERROR_UNSUPPORTED / INVALID_ARGUMENT with a sentence): symbolic
 * or non-affine descriptor, no contiguous dim, byte strides that are not multiples of 16, box
 * lengths out of 1..256, an inner box row that is not a multiple of 16 bytes or exceeds the
 * swizzle span, an unsupported dtype. */
ck_status ck_tma_window_make(const ck_tma_window_spec *spec, ck_tma_window *out);

/* The tensor map of the window over the tensor at `address` (ck_tensor_map_create's checks). */
ck_status ck_tma_window_encode(ck_device *device, const ck_tma_window *w, const void *address,
                               ck_tensor_map *map);

/* Device C for the window "name": CK_TMA_BYTES_<name> and
 *   void tma_load_<name>(void *smem, const ck_tensor_map *map, unsigned long long *bar,
 *                        long long o0, ...)   the box at origin (o0, ...) in descriptor order
 *   void tma_store_<name>(const ck_tensor_map *map, const void *smem, long long o0, ...)
 * (origins in the descriptor's dim order; the TMA coordinate order is generated). */
ck_status ck_tma_window_generate(const char *name, const ck_tma_window *w, char **source);

/* A copy window: a tile copied from a source tensor in global memory into a shared-memory tile
 * by the threads of a block without passing through registers -- cp.async (sm_80 and later).
 * One distribution (enc) says which thread copies which elements, as for a window; the source
 * window is a tensor descriptor that may have run-time symbols (masked at its edges like a load
 * window), the destination window a concrete shared-memory descriptor (ck_smem_tile_make's
 * layouts, swizzled or not, or any other) that holds the whole window (no masks). Generated for
 * copy "a" with C type T:
 *
 *   typedef struct { T *p; long long o0, ...; long long SYM...; T *ck_dst; long long ck_do0, ...; }
 *       ck_copy_a;     source pointer (16-byte aligned), origin, the source descriptor's
 *                      run-time symbols (sorted, as for a window), destination pointer (aligned
 *                      as the tile requires, at least 16 bytes) and origin
 *   ck_copy_a make_copy_a(T *src, long long o0, ..., long long SYM, ..., T *dst,
 *                         long long do0, ...)
 *   void copy_a(const ck_copy_a *w)                  issue this thread's copies
 *   void move_copy_a(ck_copy_a *w, long long d0, ...)        source origin += step
 *   void move_copy_dst_a(ck_copy_a *w, long long d0, ...)    destination origin += step
 *
 * copy_a only issues: the caller groups copies with ck_cp_async_commit(), waits with
 * ck_cp_async_wait(n) / ck_cp_async_wait_all() and then makes the tile visible to the block
 * with ck_sync_threads(), as for any cp.async. Every access is `vector_bytes` wide along one Y
 * dim: 16 bytes (cp.async.cg; masked edges use its src-size operand, which zero-fills the
 * elements past the edge, where the valid elements of the vector are a prefix of it), else 8 or
 * 4 bytes (cp.async.ca; a vector not wholly valid is written element by element, zeros where
 * masked), as wide as both windows prove contiguous and aligned (the run-time symbols' divisors,
 * origin alignments, the tile's layout). Where no 4-byte vector is provable (a 2-byte element
 * whose runs are not contiguous in both memories, say) the copy is plain loads and stores,
 * synchronous (the commit and wait then do nothing), and the generated comment says why. */
typedef struct ck_tile_copy_spec {
    const char *name;            /* C identifier suffix: copy_<name>, ... (at most 36 chars) */
    const ck_dist_encoding *enc; /* thread -> element mapping (window lengths = its X lengths) */
    ck_dtype dtype;
    const ck_descriptor *src; /* source tensor (global memory); visible dims = X dims */
    ck_expr_arena *ctx;       /* ctx of src's symbols (NULL for a concrete descriptor) */
    long long src_origin_align[CK_DIST_MAX_X]; /* source origin i is a multiple (0 means 1) */
    const ck_descriptor *dst; /* shared-memory tile, concrete; visible dims = X dims */
    long long dst_origin_align[CK_DIST_MAX_X]; /* destination origin i is a multiple (0: 1) */
    int vector_bytes; /* 0: the widest provable (cp.async 16, 8, 4, else plain loads and
                         stores); 4, 8 or 16: exactly this cp.async width, refused with the
                         reason where it is not provable */
} ck_tile_copy_spec;

/* What the generator chose. */
typedef struct ck_tile_copy_info {
    int async;           /* 1: cp.async; 0: plain loads and stores */
    int vector_bytes;    /* bytes per access */
    int vector_dim_y;    /* the Y dim of the vectors */
    long long accesses;  /* per thread */
    int masked_accesses; /* accesses of one thread that test the source's edges */
    char reason[256];    /* why no wider vector (empty at 16 bytes) */
} ck_tile_copy_info;

/* Generate the device C of one copy window (functions as listed above; no #include; like a
 * window's, it may use ck_tile_kernel_source's CK_FLOORDIV / CK_FLOORMOD where an index can be
 * negative). *source is freed with ck_tile_free; info may be NULL. Errors
 * (CK_ERROR_INVALID_ARGUMENT or CK_ERROR_UNSUPPORTED with a sentence): bad name, NULL descriptors
 * or encoding, dims differing from the encoding's X dims, an unsupported dtype, a symbolic
 * destination, a destination window that would need masks (its origin alignment or the tile's
 * lengths do not keep it inside the tile, or the tile pads), vector_bytes not 0, 4, 8 or 16 or
 * narrower than an element, and a requested width that the layouts do not allow (which memory's
 * runs are not contiguous, or the alignment that is proven). */
ck_status ck_tile_copy_generate(const ck_tile_copy_spec *spec, char **source,
                                ck_tile_copy_info *info);

/* A whole kernel source: #include "ck_device.h", every window's functions, then user_source
 * (which declares its CK_KERNELs and calls the window functions). Free with ck_tile_free. */
ck_status ck_tile_kernel_source(int nwindows, const ck_tile_window_spec *windows,
                                const char *user_source, char **source);

/* ck_tile_kernel_source then ck_module_load (so CK_DUMP=dir writes the generated source). */
ck_status ck_tile_kernel_load(ck_device *device, int nwindows, const ck_tile_window_spec *windows,
                              const char *user_source, ck_module **module);

/* As ck_tile_kernel_source / ck_tile_kernel_load, with copy windows too (generated after the
 * windows). Names must differ among windows and copies, and no window may be named
 * copy_<c> or copy_dst_<c> for a copy c (their move functions would collide). */
ck_status ck_tile_kernel_source_copies(int nwindows, const ck_tile_window_spec *windows,
                                       int ncopies, const ck_tile_copy_spec *copies,
                                       const char *user_source, char **source);
ck_status ck_tile_kernel_load_copies(ck_device *device, int nwindows,
                                     const ck_tile_window_spec *windows, int ncopies,
                                     const ck_tile_copy_spec *copies, const char *user_source,
                                     ck_module **module);

#ifdef __cplusplus
}
#endif
#endif /* CK_TILE_KERNEL_H */
