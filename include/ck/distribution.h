/*
 * ck/distribution.h - tile distribution encodings, space-filling curves, sweeps,
 * swizzles and static verification of access patterns.
 *
 * A tile distribution encoding (CK's tile_distribution_encoding) says which thread
 * holds which element of a tile:
 *
 *   R lengths          replication dims (threads that hold the same data)
 *   H lengths per X    X dim x is the row-major combination of its H components
 *   P -> RH major/minor each partition dim P (P0 = warp, P1 = lane in CK's 2-P form)
 *                      is the merge of the RH components it lists (last listed fastest)
 *   Y -> RH major/minor each Y dim (a thread's own element index) names one H component
 *
 * RH major 0 is R; RH major k >= 1 is the H list of X dim k-1. Every H component is owned by
 * exactly one P entry or one Y entry; an R component may be owned by one P entry only (an
 * unowned R component must have length 1, as in CK's 2-D patterns' sequence<1>).
 *
 * Threads: the P index of a thread is the row-major decomposition of its linear thread id
 * over the P lengths (P0 slowest); for CK's 2-P form (P0 = warp, P1 = lane of a 32-lane warp)
 * this is tid = warp * 32 + lane. A thread's registers: the static distributed tensor stores
 * element Y at register index d = row-major(Y) over the Y lengths (ys_to_d).
 *
 * All functions are pure host computations; none allocates except ck_access_check (report
 * arrays, released with ck_access_report_free).
 */
#ifndef CK_DISTRIBUTION_H
#define CK_DISTRIBUTION_H

#include <stddef.h>

#include "ck/status.h"
#include "ck/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tile.h's adaptor and descriptor (ck/tile.h includes this header, not the reverse). */
struct ck_adaptor;
struct ck_descriptor;

enum {
    CK_DIST_MAX_R = 8,           /* R dims */
    CK_DIST_MAX_X = 8,           /* X dims */
    CK_DIST_MAX_H = 8,           /* H components per X dim */
    CK_DIST_MAX_P = 8,           /* P dims */
    CK_DIST_MAX_P_RH = 16,       /* RH components merged into one P dim */
    CK_DIST_MAX_Y = 16,          /* Y dims */
    CK_DIST_MAX_LENGTH = 1 << 20 /* largest length of one component */
};

/* CK's tile_distribution_encoding, as plain arrays (counts then entries). */
typedef struct ck_dist_encoding {
    int ndim_r;
    int r_lengths[CK_DIST_MAX_R];
    int ndim_x;
    int ndim_h[CK_DIST_MAX_X]; /* H components of each X dim */
    int h_lengths[CK_DIST_MAX_X][CK_DIST_MAX_H];
    int ndim_p;
    int p_size[CK_DIST_MAX_P]; /* RH components listed by each P dim */
    int p_major[CK_DIST_MAX_P][CK_DIST_MAX_P_RH];
    int p_minor[CK_DIST_MAX_P][CK_DIST_MAX_P_RH];
    int ndim_y;
    int y_major[CK_DIST_MAX_Y];
    int y_minor[CK_DIST_MAX_Y];
} ck_dist_encoding;

/* A validated encoding with its derived lengths (what CK's tile_distribution knows). */
typedef struct ck_distribution {
    ck_dist_encoding enc;
    int x_lengths[CK_DIST_MAX_X];  /* product of each X dim's H lengths */
    int y_lengths[CK_DIST_MAX_Y];  /* length of the H component each Y names */
    int p_lengths[CK_DIST_MAX_P];  /* product of the lengths each P dim merges */
    long long elements_per_thread; /* product of Y lengths (registers per thread) */
    long long threads;             /* product of P lengths */
    long long replication;         /* product of R lengths: holders of each element */
    long long tile_elements;       /* product of X lengths */
    /* Owner of each component: for H component (x, k): y dim (>= 0) or -1 - p dim. */
    int h_owner[CK_DIST_MAX_X][CK_DIST_MAX_H];
    int r_owner[CK_DIST_MAX_R]; /* -1 - p dim, or CK_DIST_UNOWNED for a length-1 R */
} ck_distribution;

#define CK_DIST_UNOWNED (-1000)

/* ---------------------------------------------------------------- encodings */

/* Validate `enc` and fill `dist` with its derived lengths. Fails with
 * CK_ERROR_INVALID_ARGUMENT naming the component (e.g. "H component rhs[2][0] (X1, minor 0)
 * is owned by both P1 entry 0 and Y1") when: a count or length is out of range, a major or
 * minor index is out of range, an H component is owned twice or not at all, an R component
 * is named by a Y dim or owned twice, or an unowned R component has length > 1. */
ck_status ck_dist_make(const ck_dist_encoding *enc, ck_distribution *dist);

/* Parse CK's C++ spelling of an encoding, as pasted from CK sources:
 *   tile_distribution_encoding<sequence<...>, tuple<sequence<...>, ...>,
 *                              tuple<sequence<...>, ...>, tuple<sequence<...>, ...>,
 *                              sequence<...>, sequence<...>>
 * with optional "ck_tile::" prefixes, any whitespace, a trailing "{}" and/or ";".
 * Only integer literals are accepted inside sequences. Fails with CK_ERROR_PARSE and the
 * character position on malformed text; does not validate (call ck_dist_make). */
ck_status ck_dist_encoding_parse(const char *text, ck_dist_encoding *enc);

/* Write the encoding in CK's spelling (parseable by ck_dist_encoding_parse) into buf.
 * Fails with CK_ERROR_OVERFLOW when it does not fit in `size` bytes. */
ck_status ck_dist_encoding_format(const ck_dist_encoding *enc, char *buf, size_t size);

/* ---------------------------------------------------------------- mappings */

/* X index of the element a thread with partition index p holds at Y index y:
 * X[x] = row-major combination of X's H indices, where an H index comes from the Y dim
 * owning it (y[j]) or from the mixed-radix decomposition of its P owner's index (last
 * listed component fastest). This is the function the ps_ys_to_xs adaptor must equal.
 * Fails when p or y is out of range (naming the dim). */
ck_status ck_dist_calculate_x(const ck_distribution *dist, const int *p, const int *y, int *x);

/* R index selected by partition index p (components not owned by P are 0). */
ck_status ck_dist_calculate_r(const ck_distribution *dist, const int *p, int *r);

/* X index of a thread's first element: ck_dist_calculate_x(p, Y = 0). */
ck_status ck_dist_thread_origin(const ck_distribution *dist, const int *p, int *x);

/* Partition index of linear thread id tid (row-major over P lengths), and back. */
ck_status ck_dist_partition_index(const ck_distribution *dist, long long tid, int *p);
ck_status ck_dist_thread_id(const ck_distribution *dist, const int *p, long long *tid);

/* Register index of Y (row-major over Y lengths), and back. */
ck_status ck_dist_ys_to_d(const ck_distribution *dist, const int *y, long long *d);
ck_status ck_dist_d_to_ys(const ck_distribution *dist, long long d, int *y);

/* CK's construction of the distribution as transforms: the ps_ys_to_xs adaptor, bottom dims
 * X0..X{n-1}, top dims P0..P{np-1} then Y0..Y{ny-1}. Transforms, bottom up: one unmerge per X
 * dim (X -> its H components), one replicate of the R components owned by some P (an unowned
 * R component, of length 1, is left out), one merge per P dim of the RH components it lists
 * (last fastest; an empty P dim is a replicate of one length-1 dim). The Y dims are the
 * hidden H components they name. Its bottom index for top (P, Y) equals
 * ck_dist_calculate_x. `dist` is re-validated (ck_dist_make). The caller owns *out
 * (ck_adaptor_destroy). Fails with CK_ERROR_UNSUPPORTED when the components exceed tile.h's
 * CK_TILE_MAX_HIDDEN hidden dims. */
ck_status ck_dist_make_ps_ys_to_xs_adaptor(const ck_distribution *dist, struct ck_adaptor **out);

/* CK's ys_to_d descriptor: packed row-major over the Y lengths, so its offset of Y is the
 * register index ck_dist_ys_to_d. With no Y dims (every H component owned by P) it has one
 * dim of length 1. The caller owns *out (ck_descriptor_destroy). */
ck_status ck_dist_make_ys_to_d_descriptor(const ck_distribution *dist, struct ck_descriptor **out);

/* Distributed spans (CK's get_distributed_spans): for each X dim, the lengths of the Y dims
 * naming its H components, in Y order (CK's span minor numbering). lengths[x][k] is the
 * length and y_dim[x][k] the Y dim of the k-th one. */
typedef struct ck_dist_spans {
    int ndim_x;
    int count[CK_DIST_MAX_X];
    int lengths[CK_DIST_MAX_X][CK_DIST_MAX_H];
    int y_dim[CK_DIST_MAX_X][CK_DIST_MAX_H];
} ck_dist_spans;
ck_status ck_dist_get_spans(const ck_distribution *dist, ck_dist_spans *spans);

/* ---------------------------------------------------------------- sweep */

/* The i-th element (0 <= i < elements_per_thread) of CK's sweep_tile over a distributed
 * tensor: the span of X0 outermost, then X1, ..., each span row-major over its components
 * (as ck_dist_get_spans orders them). Every Y index is visited exactly once (ERRATA: the
 * recursive pseudo-code of §7.20 repeats elements). Writes the Y index. */
ck_status ck_dist_sweep_index(const ck_distribution *dist, long long i, int *y);

/* ---------------------------------------------------------------- helpers (CK's) */

/* Embed: block-level `outer` times warp-level `inner` (same NDimX and NDimP): R and each X's
 * H lists are concatenated (outer first), each P dim lists outer's components then inner's
 * (renumbered), Y dims are outer's then inner's. Validates the result. */
ck_status ck_dist_embed(const ck_dist_encoding *outer, const ck_dist_encoding *inner,
                        ck_dist_encoding *out);

/* Reduce: the X dims with reduce_x[x] != 0 disappear; their P-owned H components become new
 * R components (appended after the existing ones) and their Y-owned ones are dropped.
 * Validates the result (at least one X dim must remain). */
ck_status ck_dist_reduce(const ck_dist_encoding *in, const int *reduce_x, ck_dist_encoding *out);

/* Slice X dim ranges [begin[x], end[x]): each range must be a box in X's H digits that keeps
 * P-owned components whole: components after the sliced one are whole, components before it
 * are fixed (only Y-owned ones may be fixed to a value). The result has the sliced lengths;
 * y_origin[j] receives the Y index at which the slice starts for Y dim j. */
ck_status ck_dist_slice(const ck_dist_encoding *in, const int *begin, const int *end,
                        ck_dist_encoding *out, int *y_origin);

typedef enum ck_dist_pattern {
    CK_DIST_THREAD_RAKED = 0, /* each thread's repeats are consecutive rows */
    CK_DIST_WARP_RAKED = 1,   /* each warp's repeats are consecutive row groups */
    CK_DIST_BLOCK_RAKED = 2   /* repeats of the whole block are outermost */
} ck_dist_pattern;

/* CK's 2-D static encoding patterns (TileDistributionEncodingPattern2D) for a tile of
 * rows x cols (cols contiguous), block_size threads, vector width `vector` on cols, warp
 * size 32. Requires cols % vector == 0, 32 % (cols / vector) == 0, block_size % 32 == 0 and
 * rows divisible by the rows one block covers; fails naming the argument otherwise. */
ck_status ck_dist_make_2d_pattern(ck_dist_pattern pattern, int block_size, int rows, int cols,
                                  int vector, ck_dist_encoding *out);

/* ---------------------------------------------------------------- tensor-core layouts */

/* Operands of a tensor-core instruction. */
typedef enum ck_mma_operand { CK_MMA_A = 0, CK_MMA_B = 1, CK_MMA_C = 2 } ck_mma_operand;

/* A parsed instruction spelling "<family>.m<M>n<N>k<K>.<acc>[.<in>]": family "mma" (mma.sync,
 * one warp, m16n8) or "wgmma" (one warpgroup of 4 warps, m64nN with N a multiple of 8 up to 256),
 * acc "f32", "s32" or "f16", in "f16", "bf16", "tf32", "e4m3", "e5m2", "s8" or "u8" (may be
 * omitted for the C operand). */
typedef struct ck_mma_info {
    int warpgroup; /* 1 for wgmma */
    int m, n, k;
    int acc; /* 0 f32, 1 s32, 2 f16 */
    int in;  /* 0 f16, 1 bf16, 2 tf32, 3 e4m3, 4 e5m2, 5 s8, 6 u8; -1 when omitted */
} ck_mma_info;

/* Parse an instruction spelling. CK_ERROR_PARSE / CK_ERROR_UNSUPPORTED with a sentence. */
ck_status ck_mma_parse(const char *instr, ck_mma_info *info);

/* The register layout of `operand` of `instr` as a tile distribution encoding (CK's warp-GEMM
 * attribute): X dims are (rows, columns) of the operand's tile (A: M x K, B: K x N, C: M x N),
 * P0 = lane for mma; P0 = warp of the warpgroup, P1 = lane for wgmma; register (element) order
 * is the encoding's ys_to_d, one Y element per matrix element: a 32-bit register holding two
 * 16-bit (four 8-bit) elements is 2 (4) consecutive elements d, its low half first. For C,
 * element d is accumulator register d (f32/s32), or half d%2 of register d/2 (f16).
 * Supported (ck_mma_spellings): mma.sync m16n8k8/k16 f16, bf16 (f32 or, for f16, f16
 * accumulators), m16n8k8 tf32, m16n8k32 e4m3/e5m2 (f32) and s8/u8 (s32); wgmma m64nNk16
 * f16/bf16, m64nNk8 tf32, m64nNk32 e4m3/e5m2/s8/u8, N any multiple of 8 up to 256. Operand A of
 * wgmma is the register fragment of the RS form (the mma.sync A fragment of the same input type
 * for rows 16w..16w+15 of warp w); wgmma's B (and SS-form A) lives in shared memory
 * (CK_ERROR_UNSUPPORTED: see ck_smem_tile_make). Mixed-input forms (e4m3 x e5m2, s8 x u8) use
 * the one-type spelling's layouts. Errors: unparsable or unsupported instruction, A/B without
 * an input type (CK_ERROR_INVALID_ARGUMENT). Validated (ck_dist_make). */
ck_status ck_mma_encoding(const char *instr, ck_mma_operand operand, ck_dist_encoding *enc);

/* The supported instruction spellings (static strings; wgmma's are spelled with a literal "N",
 * standing for any multiple of 8 in 8..256). Writes at most `max` of them to names (may be
 * NULL) and returns how many there are. */
int ck_mma_spellings(const char **names, int max);

/* ---------------------------------------------------------------- space-filling curve */

enum { CK_SFC_MAX_DIMS = 16 };

/* CK's space_filling_curve: accesses of scalars_per_access[d] elements over a tensor of
 * `lengths`, dims visited in dim_access_order (first slowest), snake order when snake != 0
 * (CK's default). lengths[d] must be divisible by scalars_per_access[d]. */
typedef struct ck_sfc {
    int ndim;
    int lengths[CK_SFC_MAX_DIMS];
    int dim_access_order[CK_SFC_MAX_DIMS];
    int scalars_per_access[CK_SFC_MAX_DIMS];
    int snake;
    int access_lengths[CK_SFC_MAX_DIMS]; /* lengths / scalars_per_access */
    long long num_access;
} ck_sfc;

/* Initialize; fails naming the argument for bad sizes, a dim order that is not a
 * permutation, or a length not divisible by its scalars per access. */
ck_status ck_sfc_init(ck_sfc *sfc, int ndim, const int *lengths, const int *dim_access_order,
                      const int *scalars_per_access, int snake);

/* Tensor index (in elements) of access i (0 <= i < num_access). */
ck_status ck_sfc_get_index(const ck_sfc *sfc, long long i, int *idx);

/* index(to) - index(from). */
ck_status ck_sfc_step_between(const ck_sfc *sfc, long long from, long long to, int *step);

/* index(i + 1) - index(i), for 0 <= i < num_access - 1. */
ck_status ck_sfc_forward_step(const ck_sfc *sfc, long long i, int *step);

/* index(i - 1) - index(i), for 1 <= i < num_access. */
ck_status ck_sfc_backward_step(const ck_sfc *sfc, long long i, int *step);

/* ---------------------------------------------------------------- load/store traits */

enum { CK_LOAD_STORE_MAX_VECTOR_BYTES = 16 }; /* NVIDIA: at most 16 bytes per thread access */

/* CK's load_store_traits for a tile window access: how each thread walks its elements.
 *   vector_dim_y        the Y dim accessed as vectors (-1 when the encoding has no Y dims)
 *   scalars_per_vector  elements per access along it (a power of two; 1 means scalar)
 *   vector_bits/bytes   bits of one access (scalars x storage bits) and bytes (rounded up)
 *   num_accesses        accesses per thread (elements per thread / scalars_per_vector)
 *   sfc                 the access order: CK's space-filling curve over the Y lengths, the
 *                       other Y dims in order (first slowest), vector_dim_y innermost, snake
 *   y_vector_length/stride  the guarantee the descriptor gives each Y dim (tile.h's
 *                       ck_vector_info through the ps_ys_to_xs adaptor: runs of `length`
 *                       consecutive Y indices starting at a multiple of it are `stride` apart
 *                       in memory; 1 = no guarantee) */
typedef struct ck_load_store_traits {
    int vector_dim_y;
    int scalars_per_vector;
    int vector_bits;
    int vector_bytes;
    long long num_accesses;
    ck_sfc sfc;
    long long y_vector_length[CK_DIST_MAX_Y];
    long long y_vector_stride[CK_DIST_MAX_Y];
} ck_load_store_traits;

/* Choose the traits of an access of the tile `enc` (validated with ck_dist_make) through the
 * concrete tensor descriptor `desc` (tile.h; its visible dims are the X dims, with lengths
 * equal to the X lengths) for elements of type `dtype`. The width along Y dim j is the
 * largest power of two w dividing both the Y length and its guaranteed run length, when the
 * guaranteed stride is 1, with w * storage bits <= 128 (16 bytes; sub-byte types count in
 * bits). vector_dim_y is the Y dim with the widest w, the last one among equals (CK's
 * "last Y dim that maps to the fastest contiguous X"); when no Y dim allows w > 1 it is the
 * last Y dim with one scalar per access. Every access (Y index of the sfc, w elements along
 * vector_dim_y) is then contiguous in memory for every thread and entirely valid or
 * entirely padding. Errors (CK_ERROR_INVALID_ARGUMENT, naming the argument): invalid
 * encoding, NULL or symbolic descriptor, dims or lengths that differ from the X dims, an
 * unknown dtype. */
ck_status ck_load_store_traits_make(const ck_dist_encoding *enc, const struct ck_descriptor *desc,
                                    ck_dtype dtype, ck_load_store_traits *out);

/* ---------------------------------------------------------------- swizzles */

/* CK's LDS XOR pre-shuffle of an M x K tile (K contiguous in KPack vectors):
 *   m0 = m / MLdsLayer, l = m % MLdsLayer, k0 = k / KPack, k1 = k % KPack, K0 = K / KPack
 *   k0' = (l * K0 + k0) XOR (m0 mod (K0 * MLdsLayer))
 *   offset = m0 * (K * MLdsLayer) + k0' * KPack + k1
 * A bijection of [0, M*K) when K0 * MLdsLayer is a power of two, M % MLdsLayer == 0 and
 * K % KPack == 0 (checked by ck_lds_xor_check). */
typedef struct ck_lds_xor {
    int m_per_block, k_per_block, kpack, mlds_layer;
} ck_lds_xor;
ck_status ck_lds_xor_check(const ck_lds_xor *s);
ck_status ck_lds_xor_offset(const ck_lds_xor *s, int m, int k, long long *offset);
ck_status ck_lds_xor_inverse(const ck_lds_xor *s, long long offset, int *m, int *k);

/* Morton (Z-order) code of (y, x) with `bits` bits each: bit i of x goes to bit 2i, bit i of
 * y to bit 2i+1 (so merging bits in the order y1, x1, y0, x0, most significant first).
 * bits in [0, 15]; y and x must be < 2^bits. */
ck_status ck_morton_encode(int bits, int y, int x, long long *code);
ck_status ck_morton_decode(int bits, long long code, int *y, int *x);

/* Tiled Morton layout of an H x W matrix in T x T tiles (T a power of two dividing H and W):
 * offset = (tile_y * (W / T) + tile_x) * T*T + morton(y % T, x % T). */
ck_status ck_morton_tiled_offset(int h, int w, int tile, int y, int x, long long *offset);
ck_status ck_morton_tiled_inverse(int h, int w, int tile, long long offset, int *y, int *x);

/* NVIDIA shared-memory swizzle modes of wgmma matrix descriptors and TMA tensor maps: the
 * 16-byte chunk index within each 32/64/128-byte span is XORed with the low 1/2/3 bits of the
 * 128-byte row index (byte address bits [4, 4+b) ^= bits [7, 7+b)); the pattern repeats every
 * 256/512/1024 bytes. An involution on byte offsets. */
typedef enum ck_nv_swizzle {
    CK_NV_SWIZZLE_NONE = 0,
    CK_NV_SWIZZLE_32B = 1,
    CK_NV_SWIZZLE_64B = 2,
    CK_NV_SWIZZLE_128B = 3
} ck_nv_swizzle;
ck_status ck_nv_swizzle_offset(ck_nv_swizzle mode, long long byte_offset, long long *swizzled);

/* ---------------------------------------------------------------- access verification */

/* Memory layout of the tile: element offset = sum x[d] * strides[d] (a naive descriptor);
 * byte address = base_bytes + offset * element size, then (for a swizzled shared-memory tile)
 * the NVIDIA swizzle `swizzle` applied to that byte address (sectors and banks are counted on
 * the swizzled addresses). */
typedef struct ck_access_layout {
    int ndim;
    long long strides[CK_DIST_MAX_X];
    long long base_bytes;  /* byte address of element 0 (alignment matters for vectors) */
    ck_nv_swizzle swizzle; /* CK_NV_SWIZZLE_NONE (0) for a plain layout */
} ck_access_layout;

/* Hardware model; ck_access_hw_default gives an NVIDIA SM: 32 lanes, 32 banks of 4 bytes,
 * 32-byte sectors, 128-byte lines, at most 16 bytes per vector access. */
typedef struct ck_access_hw {
    int warp_size, num_banks, bank_bytes, sector_bytes, line_bytes, max_vector_bytes;
} ck_access_hw;
ck_access_hw ck_access_hw_default(void);

/* One vector access of one warp (all its lanes at the same access number). */
typedef struct ck_access_stat {
    int warp;
    long long access;        /* access number within a thread, in issue order */
    long long sectors;       /* 32-byte sectors touched by the warp */
    long long sectors_min;   /* ceil(distinct bytes / sector_bytes) */
    long long bank_ways;     /* max over banks of distinct words addressed in that bank */
    long long bank_ways_min; /* ceil(distinct words / num_banks) */
} ck_access_stat;

typedef struct ck_access_report {
    /* (a) coverage */
    int coverage_ok;                /* every element held by exactly `replication` threads */
    long long expected_holders;     /* the replication product */
    int first_bad_x[CK_DIST_MAX_X]; /* first element (row-major) held a wrong number of times */
    long long first_bad_holders;
    /* (d) vectors */
    int vector_y_dim; /* Y dim vectorized, -1 if scalar */
    int vector_elems, vector_bytes;
    int element_bytes;
    long long accesses_per_thread;
    int warps;
    /* (b), (c) per access and warp */
    long long num_stats;
    ck_access_stat *stats; /* num_stats entries, owned by the report */
    long long sectors_total, sectors_min_total;
    long long bank_ways_total, bank_ways_min_total;
    long long bank_ways_max; /* worst access */
    /* Lane accesses whose byte address is not a multiple of the vector size, and lane
     * accesses to padding (not issued, not counted in sectors or banks). */
    long long misaligned_accesses;
    long long masked_accesses;
    /* ck_access_check_desc: the load/store traits used (has_traits = 1). */
    int has_traits;
    ck_load_store_traits traits;
} ck_access_report;

/* Verify the access pattern of `dist` over `layout` with elements of element_bytes bytes:
 * coverage, vector width (the longest Y dim naming the last H component of a stride-1 X
 * dim, limited by max_vector_bytes, its length and the alignment of every access), then
 * for each access (CK's space-filling curve over Y, vector dim last, snake order) and warp:
 * sectors touched and bank-conflict ways. Fills `report` (free with ck_access_report_free).
 * hw may be NULL for the default model. */
ck_status ck_access_check(const ck_distribution *dist, const ck_access_layout *layout,
                          int element_bytes, const ck_access_hw *hw, ck_access_report *report);

/* Verify the access pattern of `dist` through the concrete tensor descriptor `desc` (tile.h;
 * its visible dims are the X dims with the X lengths; padding allowed) with elements of
 * `dtype`: coverage as above; the vectors and the access order are those of
 * ck_load_store_traits_make (limited to hw->max_vector_bytes), stored in report->traits;
 * byte address = base_bytes + descriptor offset * element bytes, then `swizzle`. An access
 * to padding is not issued (masked_accesses counts them); misaligned_accesses counts lane
 * accesses not aligned to their size. Types whose storage is not whole bytes (fp4, fp6):
 * CK_ERROR_UNSUPPORTED. Free the report with ck_access_report_free. */
ck_status ck_access_check_desc(const ck_distribution *dist, const struct ck_descriptor *desc,
                               ck_dtype dtype, long long base_bytes, ck_nv_swizzle swizzle,
                               const ck_access_hw *hw, ck_access_report *report);
void ck_access_report_free(ck_access_report *report);

#ifdef __cplusplus
}
#endif
#endif /* CK_DISTRIBUTION_H */
