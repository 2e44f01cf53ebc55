/*
 * ck/gemm.h - the universal GEMM (CK's GemmKernel: problem, policy, pipeline, epilogue,
 * tile partitioner) on tensor cores:
 *
 *     D = epilogue(alpha * scale_a * scale_b * op(A) op(B) + beta * C)
 *     epilogue(x) = cast_to_D(program(extras(act(x + bias))) / scale_d)   (each optional)
 *     extras(y)   = (((y op1 D1) op2 D2) ...)   up to 4 extra tensors (multi-D), op add or
 *                   multiply, each a row vector, column vector or full M x N matrix
 *
 * A is M x K, B is K x N, C and D are M x N, each row- or column-major with any leading
 * dimension (op() is expressed by the order: a transposed operand is the other order).
 * Accumulation is f32 (i32 for i8 x i8). C may alias D exactly (same pointer, order and ld).
 * Strided batched: `batch` such products in one launch, each matrix (and the bias) with a batch
 * stride in elements, 0 broadcasting one matrix to every batch (ck_gemm_problem.batch).
 * Quantized operands (ck_gemm_problem.scale_a / scale_b / b_packed): f32 scale tensors per row,
 * column or block (each K block's partial sums promoted to f32 and scaled: block-scaled fp8,
 * row-col fp8 and i8) and B packed as int4 / uint4 / fp4 with group scales.
 * Grouped: a list of products of different M, N, K, described in device memory, in one launch
 * (ck_gemm_grouped_*); pointer-array batches: products of one shape at addresses taken from
 * device arrays of pointers (ck_gemm_ptr_array_*). Split-K (deterministic or with atomics) and
 * stream-K: the policy's choice, or forced with ck_gemm_plan_create_opt.
 *
 * Two kernel families, chosen by the policy: sm_90a (persistent, warp-specialized TMA + wgmma
 * kernel) and a portable sm_80 family (cp.async + ldmatrix + mma.sync), which also runs on
 * sm_89/sm_90 and on the emulator. Both run unchanged on the emulator.
 *
 * Usage: a plan does the support check, the instance choice and the kernel build once;
 * ck_gemm_plan_execute then only checks pointers and launches (no host allocation, no
 * generation). ck_gemm() is the one-call form over ck_tensor descriptions. The heuristic query
 * lists candidate instances in ranked order; an id from it can be passed back to a plan.
 * docs/ops-gemm.md describes the kernels, instances and measured speed.
 */
#ifndef CK_GEMM_H
#define CK_GEMM_H

#include <stdint.h>

#include "ck/context.h"
#include "ck/elementwise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_gemm_order {
    CK_GEMM_ROW_MAJOR = 0, /* element (i, j) at i * ld + j */
    CK_GEMM_COL_MAJOR = 1  /* element (i, j) at i + j * ld */
} ck_gemm_order;

/* One matrix of the problem: element type, order and leading dimension (elements between
 * consecutive rows (row-major) or columns (column-major); 0 means packed: the number of
 * columns, or rows). In a batched problem (ck_gemm_problem.batch > 1), matrix b of the batch
 * starts batch_stride * b elements after the pointer; batch_stride 0 broadcasts one matrix to
 * every batch (A, B, C; D must have a stride that keeps the batches apart). Ignored when
 * batch is 1. */
typedef struct ck_gemm_matrix {
    ck_dtype dtype;
    ck_gemm_order order;
    int64_t ld;
    int64_t batch_stride; /* elements between consecutive matrices of the batch; >= 0 */
} ck_gemm_matrix;

typedef enum ck_gemm_compute {
    CK_GEMM_COMPUTE_DEFAULT = 0, /* the inputs' own tensor-core type; f32 inputs: TF32 */
    CK_GEMM_COMPUTE_TF32 = 1,    /* f32 inputs rounded to TF32 (10-bit mantissa) */
    CK_GEMM_COMPUTE_F32 = 2      /* f32 inputs with f32-class accuracy (3xTF32 split) */
} ck_gemm_compute;

typedef enum ck_gemm_activation {
    CK_GEMM_ACT_NONE = 0,
    CK_GEMM_ACT_RELU,
    CK_GEMM_ACT_GELU_TANH,
    CK_GEMM_ACT_GELU_ERF,
    CK_GEMM_ACT_SILU,
    CK_GEMM_ACT_SIGMOID
} ck_gemm_activation;

typedef enum ck_gemm_bias {
    CK_GEMM_BIAS_NONE = 0,
    CK_GEMM_BIAS_ROW = 1, /* a vector of M values, bias[i] added to row i */
    CK_GEMM_BIAS_COL = 2  /* a vector of N values, bias[j] added to column j */
} ck_gemm_bias;

/* Multi-D: extra tensors combined with the value after the activation, in order, in the
 * epilogue's f32 arithmetic (before the elementwise program and the output cast), e.g. a gated
 * unit D = silu(A B) * D1 or a residual D = A B + D2. */
enum { CK_GEMM_MAX_EXTRAS = 4 };

typedef enum ck_gemm_extra_op {
    CK_GEMM_EXTRA_NONE = 0,
    CK_GEMM_EXTRA_ADD = 1, /* value + extra */
    CK_GEMM_EXTRA_MUL = 2  /* value * extra */
} ck_gemm_extra_op;

typedef enum ck_gemm_extra_broadcast {
    CK_GEMM_EXTRA_ROW = 1, /* a vector of M values, extra[i] for row i (as CK_GEMM_BIAS_ROW) */
    CK_GEMM_EXTRA_COL = 2, /* a vector of N values, extra[j] for column j */
    CK_GEMM_EXTRA_FULL = 3 /* an M x N matrix in its own order and ld */
} ck_gemm_extra_broadcast;

/* One extra tensor: op, broadcast, element type (f32, f16, bf16); for CK_GEMM_EXTRA_FULL the
 * order and leading dimension (0: packed) as ck_gemm_matrix. batch_stride: elements between
 * the tensors of consecutive batches (0: one tensor for every batch; ignored when batch is 1).
 * The extra must not overlap D (not even be D itself). */
typedef struct ck_gemm_extra {
    ck_gemm_extra_op op;
    ck_gemm_extra_broadcast broadcast;
    ck_dtype dtype;
    ck_gemm_order order; /* CK_GEMM_EXTRA_FULL only */
    int64_t ld;          /* CK_GEMM_EXTRA_FULL only; 0: packed */
    int64_t batch_stride;
} ck_gemm_extra;

/* Quantized GEMMs (CK's ABQuantGrouped / mixed-precision GEMMs): scale tensors for A and B,
 * and B packed as 4-bit values. docs/ops-gemm.md ("Block-scaled and mixed-input GEMM").
 *
 * A scale tensor of operand A is an f32 matrix of ceil(M / block_mn) x ceil(K / block_k)
 * entries (one per block of A), of B ceil(K / block_k) x ceil(N / block_mn), each in its own
 * order with its own leading dimension (0: packed). The product is
 *     sum over K blocks kb of (A_block B_block) * sa(i / bmn_a, kb) * sb(kb, j / bmn_b)
 * with each K block's partial sum promoted to f32 and scaled (CK's and DeepSeek-V3's scheme:
 * the low-precision accumulation never spans more than one block). The per-tensor factors
 * ck_gemm_args.scale_a / scale_b still multiply (1 by default). */
typedef enum ck_gemm_scale_mode {
    CK_GEMM_SCALE_TENSOR = 0, /* one factor: ck_gemm_args.scale_a / scale_b (the default) */
    CK_GEMM_SCALE_VECTOR = 1, /* A: one per row (M values); B: one per column (N values) */
    CK_GEMM_SCALE_BLOCK = 2   /* one per block_mn (M or N) x block_k (K) block, e.g. A 1 x 128
                                 and B 128 x 128 (DeepSeek-V3), or B group-wise: 1 x group */
} ck_gemm_scale_mode;

typedef struct ck_gemm_scale {
    ck_gemm_scale_mode mode;
    int block_mn, block_k; /* CK_GEMM_SCALE_BLOCK only (VECTOR: 1 and K) */
    ck_gemm_order order;   /* of the scale matrix (A's: M blocks x K blocks; B's: K x N) */
    int64_t ld;            /* 0: packed */
} ck_gemm_scale;

/* B packed as two 4-bit values per byte (weight-only quantization). B is then a column-major
 * matrix of bytes (b.dtype CK_DTYPE_U8, b.ld in bytes >= K / 2; K even): byte (j * ld + k / 2)
 * holds B(k, j) in its low nibble for even k and B(k + 1, j) in its high nibble (torch's
 * [N, K / 2] uint8 weight). The values are dequantized in registers to A's type (f16 or bf16
 * A) exactly, then scaled per group by B's scale tensor (usually CK_GEMM_SCALE_BLOCK with
 * block_mn 1, block_k the group size). */
typedef enum ck_gemm_packed {
    CK_GEMM_PACKED_NONE = 0,    /* B holds elements of b.dtype */
    CK_GEMM_PACKED_INT4 = 1,    /* two's complement -8 .. 7 */
    CK_GEMM_PACKED_UINT4 = 2,   /* 0 .. 15 (usually with zero points) */
    CK_GEMM_PACKED_FP4_E2M1 = 3 /* OCP e2m1: 0, +-0.5, 1, 1.5, 2, 3, 4, 6 */
} ck_gemm_packed;

/* What to compute (everything a kernel is specialized for; pointers and alpha/beta/scales
 * come at execution). */
typedef struct ck_gemm_problem {
    int64_t m, n, k;
    ck_gemm_matrix a, b; /* f16, bf16, f32, fp8 e4m3 / e5m2 (any mix), i8 (with i8) */
    ck_gemm_matrix c;    /* dtype CK_DTYPE_COUNT: no C (beta must then be 0) */
    ck_gemm_matrix d;    /* f32, f16, bf16; fp8 e4m3/e5m2 (with scale_d); i32 (i8 inputs) */
    ck_gemm_compute compute;
    ck_gemm_bias bias;
    ck_dtype bias_dtype; /* f32, f16 or bf16 when bias != NONE */
    ck_gemm_activation activation;
    /* Optional: an elementwise program applied after the activation, x0 = the value
     * (ck/elementwise.h; one input). NULL: none. Copied into the plan. */
    const ck_ew_program *epilogue;
    /* Strided batched GEMM: `batch` (>= 1) independent products in one launch, D_b =
     * epilogue(A_b B_b, C_b, bias_b) with X_b at X's pointer + b * X.batch_stride elements
     * (the matrices' batch_stride; 0 = the same matrix for every b). The batches share M, N, K,
     * types, orders, leading dimensions and the epilogue; the kernels' tile schedulers walk
     * batch x tiles. D's batches must not overlap each other. */
    int64_t batch;
    /* Elements between the bias vectors of consecutive batches; 0: one bias for every batch. */
    int64_t bias_batch_stride;
    /* Multi-D: extras[0 .. extra_count - 1] applied in order (0 .. CK_GEMM_MAX_EXTRAS; 0: none,
     * what ck_gemm_problem_init sets). Pointers in ck_gemm_args.extra. */
    int extra_count;
    ck_gemm_extra extras[CK_GEMM_MAX_EXTRAS];
    /* Quantized operands (ck_gemm_problem_init: per-tensor scales, B not packed). Scale
     * tensors in ck_gemm_args.a_scales / b_scales. */
    ck_gemm_scale scale_a, scale_b;
    ck_gemm_packed b_packed;
    /* 1: B's 4-bit integers have zero points, B(k, j) = q - z(kb, j) with z an unsigned byte
     * (0 .. 15) per entry of B's scale tensor, in its layout (ck_gemm_args.b_zeros). */
    int b_zeros;
} ck_gemm_problem;

/* Fill *p: m = n = k = 0, batch 1 (batch strides 0), every matrix bf16 row-major packed, no C,
 * compute default, no bias, no activation, no epilogue program, no extras. */
void ck_gemm_problem_init(ck_gemm_problem *p);

/* Run-time values of one execution. */
typedef struct ck_gemm_args {
    const void *a, *b;
    const void *c;    /* NULL when the problem has no C */
    void *d;
    const void *bias; /* NULL when the problem has no bias */
    float alpha, beta;
    float scale_a, scale_b; /* per-tensor input scales (fp8); 1 otherwise */
    float scale_d;          /* D = value / scale_d before an fp8 cast; 1 otherwise */
    const void *extra[CK_GEMM_MAX_EXTRAS]; /* the problem's extras (multi-D); NULL beyond */
    const float *a_scales, *b_scales;      /* scale tensors of CK_GEMM_SCALE_VECTOR / _BLOCK */
    const unsigned char *b_zeros;          /* zero points of packed B (ck_gemm_problem.b_zeros) */
} ck_gemm_args;

/* alpha 1, beta 0, scales 1, pointers NULL. */
void ck_gemm_args_init(ck_gemm_args *args);

enum { CK_GEMM_MAX_CANDIDATES = 64 };

/* One candidate instance of the heuristic query. */
typedef struct ck_gemm_candidate {
    int id;             /* pass to ck_gemm_plan_create */
    char name[96];      /* e.g. "sm90.ws.128x256x64.s4.c2" */
    int family;         /* 90: TMA + wgmma, 80: cp.async + mma.sync */
    int tile_m, tile_n, tile_k, stages, cluster;
    double est_waves;   /* tiles / resident blocks */
    double score;       /* the heuristic's estimate (higher is better) */
    int tuned;          /* 1 when the tuning table chose it for this problem */
} ck_gemm_candidate;

/* Candidates for `problem` on the context's device, best first (the tuning table's choice, if
 * any, first; then the heuristic's ranking). Every listed candidate supports the problem.
 * *count receives the number written (at most max). Errors: the problem is refused (the
 * sentence says why) or max < 1. */
ck_status ck_gemm_candidates(ck_context *ctx, const ck_gemm_problem *problem,
                             ck_gemm_candidate *out, int max, int *count);

typedef struct ck_gemm_plan ck_gemm_plan;

/* Check the problem (every refusal a sentence naming the field), choose the instance (instance
 * < 0: the policy's choice; else an id from ck_gemm_candidates) and build its kernel. Free with
 * ck_gemm_plan_destroy. */
ck_status ck_gemm_plan_create(ck_context *ctx, const ck_gemm_problem *problem, int instance,
                              ck_gemm_plan **plan);

/* The chosen instance. */
ck_status ck_gemm_plan_instance(const ck_gemm_plan *plan, ck_gemm_candidate *out);

/* Run the plan on the context's stream. Checks the pointers (non-NULL where needed, aligned as
 * the instance requires, D not overlapping A, B, bias or an extra; C either exactly D or not
 * overlapping it; for a batched problem, over the span of all batches) and refuses with a
 * sentence. No host allocation or generation. */
ck_status ck_gemm_plan_execute(ck_gemm_plan *plan, const ck_gemm_args *args);

void ck_gemm_plan_destroy(ck_gemm_plan *plan);

/* ---- split-K and stream-K (docs/ops-gemm.md, "Split-K, stream-K") -------------------------
 * How a plan shares the K iterations of the output tiles among the blocks of the persistent
 * sm90 kernel. The policy chooses (CK_GEMM_DECOMP_AUTO) among whole tiles, the deterministic
 * split-K and stream-K by its model; the other values force one. All but the atomic split-K
 * give the same bits on every run. */
typedef enum ck_gemm_decomposition {
    CK_GEMM_DECOMP_AUTO = 0,           /* the policy's choice (or the instance's) */
    CK_GEMM_DECOMP_TILES = 1,          /* one work unit per output tile, all of K */
    CK_GEMM_DECOMP_SPLIT_K = 2,        /* K in split_k ranges per tile, the partial sums added
                                          in a fixed order from a workspace (deterministic) */
    CK_GEMM_DECOMP_SPLIT_K_ATOMIC = 3, /* K in split_k ranges per tile, the partial sums added
                                          with f32 atomics into a workspace: less workspace
                                          and traffic, NOT bit-identical from run to run */
    CK_GEMM_DECOMP_STREAM_K = 4        /* stream-K: every block of the persistent grid takes an
                                          even share of all tiles' K iterations; tiles shared
                                          by several blocks are summed in a fixed order
                                          (deterministic) */
} ck_gemm_decomposition;

/* Options of ck_gemm_plan_create_opt. */
typedef struct ck_gemm_plan_options {
    int instance;                 /* -1: the policy's; else an id from ck_gemm_candidates */
    ck_gemm_decomposition decomp; /* not AUTO: the sm90 family's 128 x 128 instance (or the
                                     given one) with this decomposition */
    int split_k;                  /* SPLIT_K / SPLIT_K_ATOMIC: ranges per tile, 2 .. 16 (at most
                                     the K tiles: fewer are used when K is short) */
} ck_gemm_plan_options;

/* instance -1, decomp AUTO, split_k 0. */
void ck_gemm_plan_options_init(ck_gemm_plan_options *options);

/* ck_gemm_plan_create with options (NULL: the defaults). A forced decomposition needs the sm90
 * family (sm_90a or the emulator) and is refused with its reason otherwise. */
ck_status ck_gemm_plan_create_opt(ck_context *ctx, const ck_gemm_problem *problem,
                                  const ck_gemm_plan_options *options, ck_gemm_plan **plan);

/* ---- grouped GEMM (docs/ops-gemm.md, "Grouped GEMM") ----------------------------------------
 * A list of independent products of different M, N, K in one launch, D_g = epilogue(A_g B_g,
 * C_g, bias_g), all with the types, orders, compute, bias kind, activation and program of one
 * problem. The list lives in device memory, so a kernel (e.g. a mixture-of-experts router) can
 * fill it without a round trip to the host; the persistent grid walks the tiles of every
 * group in order (group 0's tiles, then group 1's, ...). */
typedef struct ck_gemm_group_desc {
    int64_t m, n, k; /* any of them 0: an empty group (M or N 0: nothing is written; K 0: D =
                        epilogue(beta C + bias)); the kernel takes negative sizes as 0 */
    const void *a, *b;
    const void *c;    /* NULL when the problem has no C (or beta is 0) */
    void *d;
    const void *bias; /* NULL when the problem has no bias */
    int64_t lda, ldb, ldc, ldd; /* leading dimensions in elements, in the problem's orders */
} ck_gemm_group_desc;

typedef struct ck_gemm_grouped_plan ck_gemm_grouped_plan;

/* A grouped plan for groups shaped like `problem`: its leading dimensions are ignored, its m, n,
 * k (where > 0; else 1024 each) only size the instance choice (a typical group's shape), batch
 * must be 1, no extras, no scale tensors or packed B. Any pointer alignment and leading
 * dimension is taken: each group's A and B are copied in 16-byte pieces where its pointers and
 * leading dimensions allow, element by element otherwise. The kernel: the sm90 family's (its
 * producer warpgroup copying each group's A and B) where it takes the types and orders, else
 * the sm80 family's; ck_gemm_grouped_plan_instance says which (CK_LOG=info, why not sm90). */
ck_status ck_gemm_grouped_plan_create(ck_context *ctx, const ck_gemm_problem *problem,
                                      ck_gemm_grouped_plan **plan);

/* ck_gemm_grouped_plan_create with options (NULL: the defaults): options->instance, an id from
 * ck_gemm_grouped_candidates, forces that instance (e.g. the sm80 family's on an sm_90a
 * device); decomp must be AUTO or TILES (every group's tiles are whole). */
ck_status ck_gemm_grouped_plan_create_opt(ck_context *ctx, const ck_gemm_problem *problem,
                                          const ck_gemm_plan_options *options,
                                          ck_gemm_grouped_plan **plan);

/* The instances a grouped (or pointer-array) plan of `problem` can take on the context's
 * device, best first (the policy's choice first): the sm90 family's whole tiles without
 * clusters where the family takes the problem's types and orders, then the sm80 family's.
 * *count receives the number written (at most max). Errors as ck_gemm_grouped_plan_create's,
 * or max < 1. */
ck_status ck_gemm_grouped_candidates(ck_context *ctx, const ck_gemm_problem *problem,
                                     ck_gemm_candidate *out, int max, int *count);

/* Run `count` groups whose descriptions are in device memory at `groups` (count >= 0; 0 runs
 * nothing). args gives alpha, beta and the scales (its pointers are ignored). The kernel
 * cannot refuse what it reads on the device: a host copy of the list can be checked first
 * with ck_gemm_grouped_check. */
ck_status ck_gemm_grouped_execute(ck_gemm_grouped_plan *plan, const ck_gemm_group_desc *groups,
                                  int count, const ck_gemm_args *args);

/* Check a host copy of a group list for the plan: sizes >= 0, pointers non-NULL where the
 * group has elements, leading dimensions covering the rows / columns, D overlapping no input
 * of its group (C may be D exactly); the sentence names the group and the field. */
ck_status ck_gemm_grouped_check(const ck_gemm_grouped_plan *plan, const ck_gemm_group_desc *groups,
                                int count, const ck_gemm_args *args);

/* The plan's kernel instance (the family that runs the groups). */
ck_status ck_gemm_grouped_plan_instance(const ck_gemm_grouped_plan *plan, ck_gemm_candidate *out);

void ck_gemm_grouped_plan_destroy(ck_gemm_grouped_plan *plan);

/* ---- pointer-array batched GEMM (docs/ops-gemm.md, "Pointer-array batches") -----------------
 * `count` products D_i = epilogue(A_i B_i, C_i, bias_i) of one problem's M, N, K, types,
 * orders, leading dimensions and epilogue, each matrix at its own address, given as device
 * arrays of count pointers (cuBLAS's cublasGemmBatchedEx, CUTLASS's pointer-array batches).
 * Pointers may repeat (one B, or one A, for every product); no D_i may overlap another D_j or
 * any product's inputs (C_i may be exactly D_i). It runs on the grouped kernel, every product a
 * group of the problem's shape. */
typedef struct ck_gemm_ptr_arrays {
    const void *const *a; /* device array of count pointers to A_i */
    const void *const *b; /* ... to B_i */
    const void *const *c; /* ... to C_i; NULL when the problem has no C (or beta is 0) */
    void *const *d;       /* ... to D_i */
    const void *const *bias; /* ... to bias_i; NULL when the problem has no bias */
} ck_gemm_ptr_arrays;

typedef struct ck_gemm_ptr_array_plan ck_gemm_ptr_array_plan;

/* A pointer-array plan for products of `problem` (m, n, k >= 1, orders and leading dimensions
 * as ck_gemm_plan_create; batch must be 1, as its batch strides are ignored: the count comes at
 * execution; no extras, scale tensors or packed B). options (NULL: the defaults) as
 * ck_gemm_grouped_plan_create_opt's, with ids from ck_gemm_grouped_candidates of this problem.
 * Any pointer alignment is taken (16-byte copies where a product's A or B allows). */
ck_status ck_gemm_ptr_array_plan_create(ck_context *ctx, const ck_gemm_problem *problem,
                                        const ck_gemm_plan_options *options,
                                        ck_gemm_ptr_array_plan **plan);

/* Run `count` products (count >= 0; 0 runs nothing) whose pointers are in the device arrays of
 * *arrays (a, b, d needed for count > 0; c when the problem has C and args->beta != 0; bias
 * when it has a bias). args gives alpha, beta and the scales (its pointers are ignored). The
 * kernel cannot refuse what it reads on the device: ck_gemm_ptr_array_check checks host
 * copies of the arrays first. Refused with a sentence: a NULL plan, args or arrays, count < 0,
 * a needed array NULL, scale_d 0 or NaN. */
ck_status ck_gemm_ptr_array_execute(ck_gemm_ptr_array_plan *plan, const ck_gemm_ptr_arrays *arrays,
                                    int count, const ck_gemm_args *args);

/* Check host copies of the arrays (each of count pointers, arranged as for execution): every
 * pointer non-NULL and aligned to its elements, and no product's D overlapping another's D or
 * any product's A, B, bias or C (C_i exactly D_i is in place); the sentence names the product
 * and the matrix. O(count log count). */
ck_status ck_gemm_ptr_array_check(const ck_gemm_ptr_array_plan *plan,
                                  const ck_gemm_ptr_arrays *host_arrays, int count,
                                  const ck_gemm_args *args);

/* The plan's kernel instance (the family that runs the products). */
ck_status ck_gemm_ptr_array_plan_instance(const ck_gemm_ptr_array_plan *plan,
                                          ck_gemm_candidate *out);

void ck_gemm_ptr_array_plan_destroy(ck_gemm_ptr_array_plan *plan);

/* Progress of ck_gemm_tune, after each candidate: its index (0-based) of count, the candidate
 * and its median time in ms (negative when it could not run; ck_last_error() says why). */
typedef void (*ck_gemm_tune_progress)(void *user, int index, int count,
                                      const ck_gemm_candidate *candidate, double ms);

/* Time every candidate of `problem` on the context's device with the buffers of `args` (D is
 * overwritten), `reps` timed runs each after 2 warm-up runs (median), then store the fastest in
 * the tuning table (ck/tuning.h) under this device and problem: later plans with instance < 0
 * for the same problem on the same device use it. *best and *best_ms (either may be NULL)
 * receive the winner. Errors: the problem is refused, reps < 1, no candidate could run, the
 * table could not be written. */
ck_status ck_gemm_tune(ck_context *ctx, const ck_gemm_problem *problem, const ck_gemm_args *args,
                       int reps, ck_gemm_tune_progress progress, void *user,
                       ck_gemm_candidate *best, double *best_ms);

/* Options of the one-call form. */
typedef struct ck_gemm_options {
    float alpha, beta, scale_a, scale_b, scale_d;
    ck_gemm_compute compute;
    const ck_tensor *bias; /* rank 1: length M (per row) or N (per column); see bias_mode */
    ck_gemm_bias bias_mode;
    ck_gemm_activation activation;
    const ck_ew_program *epilogue;
    int instance; /* -1: the policy's choice */
} ck_gemm_options;

/* alpha 1, beta 0, scales 1, default compute, no bias, no activation, instance -1. */
void ck_gemm_options_init(ck_gemm_options *options);

/* D = epilogue(alpha * A B + beta * C) over rank-2 tensors (each with one unit stride: row- or
 * column-major); c may be NULL. Batched: rank-3 tensors [batch, rows, cols] (d must be rank 3);
 * a rank-2 a, b or c, or a leading extent of 1, is broadcast to every batch (batch stride 0);
 * a rank-1 bias serves every batch, a rank-2 bias [batch, M or N] one per batch. Builds (or
 * reuses, from the context's kernel cache) a plan and executes it. */
ck_status ck_gemm(ck_context *ctx, const ck_tensor *a, const ck_tensor *b, const ck_tensor *c,
                  const ck_tensor *d, const ck_gemm_options *options);

#ifdef __cplusplus
}
#endif
#endif /* CK_GEMM_H */
