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

#include "ck/gemm.h"
#include "ck/runtime.h"
#include "ops/gemm/gemm_args_kernel.h"

/* The checked, normalized problem. */
typedef struct ck_gemm_prob {
    ck_gemm_problem p;   /* with every ld resolved (never 0) and p.epilogue -> epi below */
    ck_ew_program epi;   /* valid when has_epi */
    int has_epi;
    int has_c;           /* p.c.dtype != CK_DTYPE_COUNT */
    int a_kmajor;        /* A row-major: K contiguous */
    int b_kmajor;        /* B column-major: K contiguous */
    ck_dtype compute_in; /* the tensor-core input type: f16, bf16, tf32, fp8 (A's), i8 */
    int split3;          /* 1: f32 inputs with the 3xTF32 split (CK_GEMM_COMPUTE_F32) */
} ck_gemm_prob;

enum { CK_GEMM_FAMILY_SM80 = 80, CK_GEMM_FAMILY_SM90 = 90 };

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

/* ---- kernel families ---------------------------------------------------------------------- */

typedef struct ck_gemm_plan ck_gemm_plan;

typedef struct ck_gemm_family {
    int id;
    const char *name;
    /* 1 when the family can run the problem on this device; else 0 with a sentence in
     * reason (why not: which field, which value). */
    int (*supports)(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                    size_t reason_size);
    /* The family's instances for the problem, best guess first; returns how many written. */
    int (*instances)(const ck_gemm_prob *prob, const ck_device_props *props,
                     ck_gemm_instance *out, int max);
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

struct ck_gemm_plan {
    ck_context *ctx;
    ck_gemm_prob prob;
    ck_gemm_instance inst;
    const ck_gemm_family *family;
    ck_kernel *kernel;
    ck_launch_config launch; /* stream filled at execution */
    unsigned align_a, align_b, align_c, align_d; /* byte alignment the instance needs */
    /* Family state, e.g. the sm90 family's tensor maps cached for the last pointers. */
    void *family_state;
    void (*family_state_free)(void *state);
};

/* ---- problem.c / policy.c / reference.c ------------------------------------------------- */

/* Check and normalize. CK_ERROR_INVALID_ARGUMENT / CK_ERROR_UNSUPPORTED with a sentence. */
ck_status ck_gemm_prob_make(const ck_gemm_problem *problem, ck_gemm_prob *prob);

/* Ranked instances of every family that supports the problem; 0 written means none does and
 * `reason` says why (each family's sentence). */
int ck_gemm_policy_rank(const ck_gemm_prob *prob, const ck_device_props *props,
                        ck_gemm_instance *out, double *score, int max, char *reason,
                        size_t reason_size);

/* The CPU reference: D (host memory, problem layout) from host copies of A, B, C, bias, with
 * products exact in double, the epilogue in double except the rounding of the inputs the
 * tensor cores see (tf32 rounding of f32 inputs unless split3). */
ck_status ck_gemm_reference(const ck_gemm_prob *prob, const ck_gemm_args *host_args);

/* A bound on |gpu - reference| for element (i, j): derived from K, the input and output types
 * and sum |a_ik b_kj| (the caller passes that sum). */
double ck_gemm_tolerance(const ck_gemm_prob *prob, double abs_dot, double ref_value);

#endif
