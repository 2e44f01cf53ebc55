/*
 * The GEMM op's parts and the contract between them (src/ops/gemm):
 *
 *   problem.c    ck_gemm_problem -> ck_gemm_prob (argument checks, every refusal a sentence)
 *   policy.c     candidates of every family, ranked; the tuning table's choice first
 *   params.c     THE parameter table: one list of (name, value) per (problem, instance) that
 *                makes both the generated #defines and the kernel cache key
 *   epilogue.c   generated epilogue windows from the accumulator's encoding (ck_mma_encoding)
 *   sm80.c       family 80: cp.async + ldmatrix + mma.sync (sm80_pipeline_kernel.h)
 *   sm90.c       family 90: TMA + wgmma, warp-specialized, persistent (sm90_pipeline_kernel.h)
 *   plan.c       ck_gemm_plan_create / execute / destroy, ck_gemm(), ck_gemm_candidates
 *   reference.c  the CPU reference shared by the tests and `ck prof gemm`
 *
 * Device sources include "ops/gemm/gemm_args_kernel.h": the argument struct both sides share.
 */
#ifndef CK_SRC_OPS_GEMM_INTERNAL_H
#define CK_SRC_OPS_GEMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ck/distribution.h"
#include "ck/gemm.h"
#include "ck/runtime.h"
#include "ops/gemm/gemm_args_kernel.h"

/* The checked, normalized problem. */
typedef struct ck_gemm_prob {
    ck_gemm_problem p; /* with every ld resolved (never 0) and p.epilogue -> epi below */
    ck_ew_program epi; /* valid when has_epi */
    int has_epi;
    int has_c;           /* p.c.dtype != CK_DTYPE_COUNT */
    int a_kmajor;        /* A row-major: K contiguous */
    int b_kmajor;        /* B column-major: K contiguous */
    ck_dtype compute_in; /* the tensor-core input type: f16, bf16, tf32, fp8 (A's), i8 */
    int split3;          /* 1: f32 inputs with the 3xTF32 split (CK_GEMM_COMPUTE_F32) */
    int tf32_truncate;   /* 1: the tensor cores read f32 inputs as tf32 by dropping the low 13
                            bits (sm90: wgmma on f32 bits in shared memory); 0: rounded to
                            nearest, ties away (sm80: cvt.rna). Set by the plan for its
                            family; the reference follows it. */
    int scalar_copy;     /* bit 0 A, bit 1 B: element-wise global loads (pointer not 16-byte
                            aligned; set by ck_gemm() for the pointers it was given) */
    int quant;           /* 1: scale tensors or packed B (quant.c) */
    int q_block_k;       /* quant: K elements per promoted block (K when no block scales) */
} ck_gemm_prob;

/* SM80Q: family 80's small-M mixed-input variant (quant_skinny.c), a family of its own in the
 * policy (its instances, source and launch differ from the tile pipeline's). */
enum { CK_GEMM_FAMILY_SM80 = 80, CK_GEMM_FAMILY_SM80Q = 81, CK_GEMM_FAMILY_SM90 = 90 };

/* One instance: how the kernel tiles and pipelines the problem. */
typedef struct ck_gemm_instance {
    int family;                 /* CK_GEMM_FAMILY_* */
    int tile_m, tile_n, tile_k; /* block tile */
    int stages;                 /* shared-memory stages of the ring */
    int warps_m, warps_n;       /* sm80: warp grid; sm90: consumer warpgroups along M, N */
    int cluster;                /* blocks per cluster (sm90; 1 = none) */
    int raster;                 /* tile order: 0 along M first, 1 along N first */
    int group;                  /* grouped raster: tiles per group along the fast axis */
    int persistent;             /* 1: grid of resident blocks walking the tiles */
    int split_k;                /* K split into this many ranges per tile, partial sums reduced
                                   in a fixed order (sm90; 0 or 1: none) */
    int decomp;                 /* how K is shared out (sm90, decomp.c): CK_GEMM_DECOMP_TILES
                                   (0: whole tiles, or split_k's fixed-order reduction),
                                   CK_GEMM_DECOMP_SPLIT_K_ATOMIC (split_k ranges added with f32
                                   atomics), CK_GEMM_DECOMP_STREAM_K (even K iterations per
                                   block) */
} ck_gemm_instance;

/* ---- parameter table (params.c) --------------------------------------------------------- */

enum { CK_GEMM_MAX_PARAMS = 64 };

typedef struct ck_gemm_param {
    const char *name; /* the define's name, e.g. "GEMM_TILE_M" */
    long long value;
} ck_gemm_param;

/* Every quantity a kernel source depends on, for this problem and instance. */
int ck_gemm_params(const ck_gemm_prob *prob, const ck_gemm_instance *inst, ck_gemm_param *out,
                   int max);

/* "#define NAME VALUE\n" for each parameter (malloc'd) / the cache key "gemm/NAME=V/..." */
char *ck_gemm_params_defines(const ck_gemm_param *params, int count);
char *ck_gemm_params_key(const ck_gemm_param *params, int count);

/* Storage bytes of a GEMM dtype (0 for types the op does not take). */
int ck_gemm_dtype_bytes(ck_dtype t);
/* Largest power of two <= 16 dividing ld (the divisor the generated windows may assume). */
int ck_gemm_ld_div(int64_t ld);
/* The same for a matrix of the problem: dividing both its ld and its batch stride (nonzero
 * only in batched problems), so every batch's matrix starts as aligned as the first. */
int ck_gemm_matrix_div(const ck_gemm_matrix *m);
/* 1 when operand (0 A, 1 B) is copied global -> shared in 16-byte pieces: ld * size a multiple
 * of 16 bytes (the pointer must then be 16-byte aligned) and not prob->scalar_copy. */
int ck_gemm_copy_vec(const ck_gemm_prob *prob, int operand);

/* ---- epilogue.c -------------------------------------------------------------------------
 * Device C of the epilogue for an accumulator tile of tile_m x tile_n with encoding `acc`
 * (X0 = rows, X1 = columns; P = the window generator's thread mapping):
 *   static void gemm_epilogue(const float *acc, const ck_gemm_kargs *ka, long long batch,
 *                             long long m0, long long n0)   (int *acc for i8 inputs)
 * acc holds CK_NREGS_acc registers in the encoding's ys_to_d order; m0, n0 is the tile's
 * origin in matrix `batch` (C, D and bias at their pointers + batch * their batch
 * strides). It computes alpha * acc (+ beta * C) + bias -> activation -> extras (multi-D, in
 * order, each + or *) -> program -> / scale_d -> cast and stores D through generated windows
 * (masked at the edges). Threads whose P index is out of range store nothing. *src: malloc'd. */
ck_status ck_gemm_epilogue_source(const ck_gemm_prob *prob, const ck_dist_encoding *acc, int tile_m,
                                  int tile_n, char **src);

/* The two generated parts every tile kernel's source starts with: the instance's parameter
 * table as #defines (*defs) and the epilogue over the accumulator encoding `acc` (*epi); both
 * malloc'd, neither set on failure. */
ck_status ck_gemm_source_parts(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                               const ck_dist_encoding *acc, char **defs, char **epi);

/* The device storage type of t's codes ("float", "int", "unsigned short", "unsigned char") and
 * the epilogue's cast of value expression v (float, or double when f64) to a code of t
 * (nearest even; fp8 saturates, f16/bf16 overflow to inf, i32 saturates), into buf ("" when
 * it does not fit) -- for epilogues generated outside the GEMM (convolution's dX view). */
const char *ck_gemm_storage_type(ck_dtype t);
void ck_gemm_cast_expr(ck_dtype t, int f64, const char *v, char *buf, size_t size);

/* ---- kernel families ---------------------------------------------------------------------- */

typedef struct ck_gemm_plan ck_gemm_plan;
typedef struct ck_gemm_repack ck_gemm_repack;

typedef struct ck_gemm_family {
    int id;
    const char *name;
    /* 1 when the family can run the problem on this device; else 0 with a sentence in
     * reason (why not: which field, which value). */
    int (*supports)(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                    size_t reason_size);
    /* The family's instances for the problem, best guess first; returns how many written. */
    int (*instances)(const ck_gemm_prob *prob, const ck_device_props *props, ck_gemm_instance *out,
                     int max);
    /* The full kernel source (generated windows and defines, then the pipeline include). */
    ck_status (*source)(const ck_gemm_prob *prob, const ck_gemm_instance *inst, char **source);
    /* Name of the kernel in the source. */
    const char *kernel_name;
    /* Fill plan->launch (grid, block, cluster, shared bytes) after the kernel is built. */
    ck_status (*prepare)(ck_gemm_plan *plan);
    /* Launch one execution on the context's stream (pointers already checked). */
    ck_status (*launch)(ck_gemm_plan *plan, const ck_gemm_args *args);
} ck_gemm_family;

extern const ck_gemm_family ck_gemm_family_sm80;
extern const ck_gemm_family ck_gemm_family_sm90;
extern const ck_gemm_family ck_gemm_family_sm80q;

struct ck_gemm_plan {
    ck_context *ctx;
    ck_gemm_prob prob;
    ck_gemm_instance inst;
    const ck_gemm_family *family;
    ck_kernel *kernel;
    ck_launch_config launch;                     /* stream filled at execution */
    unsigned align_a, align_b, align_c, align_d; /* byte alignment the instance needs */
    /* Family state, e.g. the sm90 family's tensor maps cached for the last pointers. */
    void *family_state;
    void (*family_state_free)(void *state);
    /* NULL, or the copies of A / B made before each launch (repack.c): prob is then the
     * padded problem the kernel runs, the caller's is in the repack state. */
    ck_gemm_repack *repack;
    /* 1: the kernel reads A (B) through its source's GEMM_A_LOADER (GEMM_B_LOADER) (sm90: no
     * tensor map of it; convolution's views, src/ops/conv) */
    int a_loader, b_loader;
};

/* ---- operand repacking (repack.c) ---------------------------------------------------------- */

/* A plan of the problem with A and/or B copied to 16-byte rows first, when that lets a faster
 * family run it (*out NULL otherwise: plan the problem as it is). */
ck_status ck_gemm_repack_try(ck_context *ctx, const ck_gemm_prob *prob, ck_gemm_plan **out);
/* The problem the caller's arguments follow (the plan's own without repacking). */
const ck_gemm_prob *ck_gemm_repack_user(const ck_gemm_plan *plan);
/* Copy the operands, then launch the family's kernel on the copies. */
ck_status ck_gemm_repack_launch(ck_gemm_plan *plan, const ck_gemm_args *args);
void ck_gemm_repack_free(ck_gemm_repack *r);

/* ---- shared by the families and the plan -------------------------------------------------- */

/* The kernel argument struct of one execution (alpha folded with scale_a * scale_b). */
void ck_gemm_fill_kargs(const ck_gemm_plan *plan, const ck_gemm_args *args, ck_gemm_kargs *ka);

/* The sm80 block accumulator's encoding (X0 rows, X1 columns, P = (warp, lane), register
 * (mi * NI + ni) * 4 + r of the mma C fragments). */
ck_status ck_gemm_sm80_acc_encoding(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    ck_dist_encoding *out);

/* The sm80 family's kernel source (defines, generated epilogue) ending in `entry`: the
 * pipeline's include and the kernel that calls it (grouped.c has its own). */
ck_status ck_gemm_sm80_source_entry(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    const char *entry, char **source);

/* ---- grouped GEMM and pointer-array batches (grouped.c, ptr_array.c) ---------------------- */

/* A grouped kernel: its template problem (types, orders, epilogue; sizes and leading dimensions
 * 1), its instance (either family), the list kind and the launch shape (a resident grid). The
 * public grouped plan is this; a pointer-array plan holds one (ptr_array.c). */
struct ck_gemm_grouped_plan {
    ck_context *ctx;
    ck_gemm_prob prob; /* the kernel's template: leading dimensions 1 */
    ck_gemm_instance inst;
    int ptr_array; /* 1: the groups are a pointer-array batch (GEMM_PTR_ARRAY) */
    ck_kernel *kernel;
    ck_launch_config launch; /* stream filled at execution */
};

/* The template problem of a grouped kernel: refusals (batch, extras, scale tensors) name `fn`. */
ck_status ck_gemm_grouped_prob(const ck_gemm_problem *problem, const char *fn, ck_gemm_prob *prob);
/* The source of a grouped kernel (family 80 or 90 by the instance; ptr_array: the list kind). */
ck_status ck_gemm_grouped_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                 int ptr_array, char **source);
/* The instances a grouped kernel can take for `problem` (its m, n, k, where > 0, size the
 * ranking; else 1024 each), best first: the sm90 family's whole tiles without clusters where it
 * supports the problem (else `why90` says why not, when given), then the sm80 family's.
 * Returns the count (0: neither family; the error is set). */
int ck_gemm_grouped_instances(ck_context *ctx, const ck_gemm_problem *problem, const char *fn,
                              ck_gemm_instance *out, int max, char *why90, size_t why90_size);
/* Fill *g: template, instance (options->instance, or the first of ck_gemm_grouped_instances),
 * kernel and launch shape. `fn` names the public function in refusals. */
ck_status ck_gemm_grouped_build(ck_context *ctx, const ck_gemm_problem *problem,
                                const ck_gemm_plan_options *options, int ptr_array, const char *fn,
                                ck_gemm_grouped_plan *g);
/* The kernel arguments' scalars (alpha, beta, scale_d) of an execution; refuses a bad scale_d. */
ck_status ck_gemm_grouped_scalars(const ck_gemm_grouped_plan *g, const ck_gemm_args *args,
                                  const char *fn, ck_gemm_kargs *ka);
/* Launch the grouped kernel with ka (its list and count set). */
ck_status ck_gemm_grouped_launch(const ck_gemm_grouped_plan *g, ck_gemm_kargs *ka);
/* The checks of matrix `name` of product `where` (e.g. "group 3") of a host copy of a list:
 * non-NULL, aligned to its elements, ld covering its contiguous extent; *lo, *hi its byte
 * range. */
ck_status ck_gemm_grouped_check_matrix(const char *fn, const char *where, const char *name,
                                       const void *p, const ck_gemm_matrix *m, int64_t ld,
                                       int64_t rows, int64_t cols, uintptr_t *lo, uintptr_t *hi);

/* The sm90 family's kernel source with `loaders` (device C defining GEMM_A_LOADER and / or
 * GEMM_B_LOADER, see sm90_pipeline_kernel.h; NULL: A and B by TMA) placed before the
 * pipeline's include, and `epilogue` (device C defining gemm_epilogue for the accumulator of
 * ck_gemm_sm90_acc_encoding; NULL: the generated one, or the TMA store). */
ck_status ck_gemm_sm90_source_entry(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                                    const char *loaders, const char *epilogue, char **source);

/* The sm90 family's block (threads: consumer warpgroups and the producer's) and dynamic shared
 * memory (the stage ring, D's staging, the barriers) for an instance. */
void ck_gemm_sm90_launch_shape(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                               unsigned *threads, size_t *shared);

/* The sm90 family's accumulator encoding for an instance (wgmma m64nN C fragments of its
 * consumer warpgroups stacked along M; P0 = warp of the block, P1 = lane). */
void ck_gemm_sm90_acc_encoding(const ck_gemm_instance *inst, ck_dist_encoding *out);

/* The policy's score of a family-90 instance: the estimate adjusted by measurements of its
 * variants (stages and staging of D, clusters). */
double ck_gemm_sm90_score(const ck_gemm_prob *prob, const ck_gemm_instance *in, int slots);

/* ---- small M (skinny.c) -------------------------------------------------------------------
 * Problems of M <= CK_GEMM_SKINNY_M are bound by reading B: the sm90 family also offers tiles of
 * 64 rows (one consumer warpgroup, up to CK_GEMM_SKINNY_MAX_STAGES stages) and its estimate
 * takes the memory time below as a floor. */
enum { CK_GEMM_SKINNY_M = 128, CK_GEMM_SKINNY_TILE_M = 64, CK_GEMM_SKINNY_MAX_STAGES = 8 };

/* 1 when the problem is small-M (M <= CK_GEMM_SKINNY_M) and CK_GEMM_SKINNY is not "0". */
int ck_gemm_skinny(const ck_gemm_prob *prob);
/* The time, in K steps of 128 x 256 on one multiprocessor, to stream the operands of a
 * tile_m x tile_n tiling with K split `split` ways on `slots` blocks (the busiest block, or
 * the whole device's bandwidth); *ideal: the operands' bytes at the device's bandwidth. */
double ck_gemm_skinny_memory_time(const ck_gemm_prob *prob, int tile_m, int tile_n, int tile_k,
                                  int split, int slots, double *ideal);
/* CK_GEMM_SKINNY (developer switch): "0" leaves the 64-row instances out (the policy as before
 * them, to compare); unset or anything else offers them. */
int ck_gemm_skinny_enabled(void);
/* CK_GEMM_SKINNY_STAGES=2..8 (developer switch): the 64-row instances' stages (at most what
 * the shared memory holds); else `fallback`. */
int ck_gemm_skinny_stages(int fallback);

/* ---- small-M mixed input (quant_skinny.c) ----------------------------------------------------
 * Packed 4-bit B with M <= CK_GEMM_QSKINNY_M: family SM80Q streams the weights once, straight to
 * registers, K split over the grid; the policy ranks it above the tile pipeline. */
enum { CK_GEMM_QSKINNY_M = 64 };

/* The policy's score of an SM80Q instance (above every family-80 tile instance). */
double ck_gemm_qskinny_score(const ck_gemm_prob *prob, const ck_gemm_instance *in, int slots);
/* CK_GEMM_QSKINNY (developer switch): "0" leaves the variant out (the tile pipeline runs). */
int ck_gemm_qskinny_enabled(void);

/* Test hook: a stream-K plan's grid set to `blocks` (at most the K iterations), its workspace
 * sized again; the fix-ups then meet other boundaries than the device's grid gives. */
ck_status ck_gemm_sm90_set_grid(ck_gemm_plan *plan, int blocks);

/* A stable id of an instance (what ck_gemm_candidate.id carries) and its name. */
int ck_gemm_instance_id(const ck_gemm_instance *inst);
void ck_gemm_instance_name(const ck_gemm_instance *inst, char *buf, size_t size);

/* The family with this id (NULL if none). */
const ck_gemm_family *ck_gemm_family_of(int id);

/* Fill a candidate record of instance `in` with the policy's score. */
void ck_gemm_candidate_fill(const ck_gemm_prob *prob, const ck_gemm_instance *in,
                            const ck_device_props *props, double score, ck_gemm_candidate *c);

/* Plan from a checked problem (ck_gemm_plan_create after ck_gemm_prob_make). */
ck_status ck_gemm_plan_create_prob(ck_context *ctx, const ck_gemm_prob *prob, int instance,
                                   ck_gemm_plan **plan);

/* Plan of this instance (no ranking): the kernel built (or found in the cache) and prepared. */
ck_status ck_gemm_plan_build(ck_context *ctx, const ck_gemm_prob *prob,
                             const ck_gemm_instance *inst, ck_gemm_plan **plan);

/* ---- problem.c / policy.c / reference.c ------------------------------------------------- */

/* Check and normalize. CK_ERROR_INVALID_ARGUMENT / CK_ERROR_UNSUPPORTED with a sentence. */
ck_status ck_gemm_prob_make(const ck_gemm_problem *problem, ck_gemm_prob *prob);

/* Ranked instances of every family that supports the problem; 0 written means none does and
 * `reason` says why (each family's sentence). */
int ck_gemm_policy_rank(const ck_gemm_prob *prob, const ck_device_props *props,
                        ck_gemm_instance *out, double *score, int max, char *reason,
                        size_t reason_size);

/* The arguments of batch b (0 <= b < batch): every pointer moved by its batch stride. */
void ck_gemm_args_batch(const ck_gemm_prob *prob, const ck_gemm_args *args, int64_t b,
                        ck_gemm_args *out);

/* The CPU reference: D (host memory, problem layout; every batch) from host copies of A, B, C,
 * bias, with products exact in double, the epilogue in double except the rounding of the
 * inputs the tensor cores see (tf32 rounding of f32 inputs unless split3). */
ck_status ck_gemm_reference(const ck_gemm_prob *prob, const ck_gemm_args *host_args);

/* The reference's value of element (i, j) before the output cast; *abs_terms (may be NULL)
 * receives the magnitude of every term (sum |alpha a b| + |beta c| + |bias|, / scale_d): the
 * abs_dot of ck_gemm_tolerance. The activation / program in double. */
double ck_gemm_reference_value(const ck_gemm_prob *prob, const ck_gemm_args *host_args, int64_t i,
                               int64_t j, double *abs_terms);
double ck_gemm_act_f64(ck_gemm_activation a, double x);
double ck_gemm_program_f64(const ck_ew_program *prog, double x0);

/* A bound on |gpu - reference| for element (i, j): derived from K, the input and output types
 * and abs_dot = the magnitude of all terms (ck_gemm_reference_value's abs_terms). */
double ck_gemm_tolerance(const ck_gemm_prob *prob, double abs_dot, double ref_value);

/* ---- quant.c: scale tensors and packed 4-bit B ------------------------------------------- */

/* Packed B's own rules (A type, storage, order, even K, zero points). */
ck_status ck_gemm_quant_check_packed(const ck_gemm_problem *p);
/* Scale tensors and packed B of a checked problem: normalizes prob->p.scale_a / scale_b (VECTOR
 * as a block of 1 x K, ld resolved), sets prob->quant and q_block_k; refusals as sentences. */
ck_status ck_gemm_quant_check(ck_gemm_prob *prob);
/* The kernel arguments of scale tensors and zero points (nothing when !prob->quant). */
void ck_gemm_quant_kargs(const ck_gemm_plan *plan, const ck_gemm_args *args, ck_gemm_kargs *ka);
/* Execution checks of the scale and zero-point pointers (non-NULL, aligned, not over D). */
ck_status ck_gemm_quant_check_args(const ck_gemm_plan *plan, const ck_gemm_args *args);
/* The parameters of quantized problems (none otherwise); -1 when max is too small. */
int ck_gemm_quant_params(const ck_gemm_prob *prob, ck_gemm_param *out, int max);
/* 1 when the family takes the problem's quantization; else 0 with a sentence. */
int ck_gemm_quant_supported_by(const ck_gemm_prob *prob, int family, char *reason, size_t size);
/* The instances of a family that can run the problem's quantization (all when not quantized):
 * compacts in[0 .. n-1] and returns the count kept. */
int ck_gemm_quant_filter(const ck_gemm_prob *prob, ck_gemm_instance *in, int n);
/* The reference's operand values: A element a (as stored) at (i, k) times its scale; B at
 * (k, j): b as stored, or the packed value (minus its zero point), times its scale. */
double ck_gemm_quant_a(const ck_gemm_prob *prob, const ck_gemm_args *h, double a, int64_t i,
                       int64_t k);
double ck_gemm_quant_b(const ck_gemm_prob *prob, const ck_gemm_args *h, double b, int64_t k,
                       int64_t j);

/* The tuning table's keys (ck/tuning.h): the device ("name/target") and the problem (every
 * field a kernel choice may depend on). */
void ck_gemm_tuning_device_key(const ck_device_props *props, char *buf, size_t size);
void ck_gemm_tuning_problem_key(const ck_gemm_prob *prob, char *buf, size_t size);

#endif
