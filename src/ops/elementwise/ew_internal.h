/* Internal interface of src/ops/elementwise: kernel specifications and their generation. */
#ifndef CK_SRC_OPS_ELEMENTWISE_EW_INTERNAL_H
#define CK_SRC_OPS_ELEMENTWISE_EW_INTERNAL_H

#include <stdint.h>

#include "ck/context.h"
#include "ck/elementwise.h"

enum { EW_MODE_CAST = 0, EW_MODE_EXPR = 1 };
enum { EW_LAYOUT_VEC = 0, EW_LAYOUT_STRIDED = 1 };
/* Inputs of the vector layout: same layout as the output (e), a row vector broadcast over rows
 * (e % bn, 16-byte packs), one value per row (e / bn) or one value (0). */
enum { EW_BCAST_NONE = 0, EW_BCAST_ROW = 1, EW_BCAST_COL = 2, EW_BCAST_SCALAR = 3 };

/* Default instance of the vector path: packs per thread in flight, threads per block, blocks
 * per SM of the grid-stride loop (0: one pass, a block per unroll*block packs), streaming
 * stores. CK_EW_INSTANCE="unroll,block,waves[,cs]" overrides them (ck_ew_instance). Strided
 * and run-time typed kernels use EW_BLOCK threads. */
enum { EW_UNROLL = 4, EW_BLOCK = 256, EW_WAVES = 0, EW_CS = 1 };
/* ... and of packs that write two or more 16-byte words (widening casts and expressions) */
enum { EW_WIDE_UNROLL = 1, EW_WIDE_BLOCK = 1024 };

typedef struct ew_instance {
    int unroll; /* 1, 2, 4, 8 */
    int block;  /* 64 .. 1024, a power of two */
    int waves;  /* 0 .. 64 */
    int cs;     /* ck_st16_cs (1) or ck_st16 (0) */
} ew_instance;

struct ew_spec;
/* The vector path's instance for spec (NULL: the plain default): the defaults above, or the
 * developer switch CK_EW_INSTANCE when valid. */
ew_instance ck_ew_instance(const struct ew_spec *spec);

/* What a generated kernel depends on (everything in it goes into the cache key). */
typedef struct ew_spec {
    int mode;   /* EW_MODE_* */
    int layout; /* EW_LAYOUT_* */
    int nin;
    ck_dtype in[CK_EW_MAX_INPUTS];
    ck_dtype out;
    /* EW_MODE_CAST */
    int round, ovf; /* CK_NC_ROUND_*, CK_NC_SATURATE / CK_NC_NONSAT */
    float scale;
    uint64_t seed;
    /* EW_MODE_EXPR */
    const ck_ew_program *prog;
    int f64; /* compute in fp64 */
    /* EW_LAYOUT_VEC */
    int alias;             /* the destination is an input: plain (coherent) loads */
    int unroll, block, cs; /* ew_instance (the kernel's launch bounds are `block`) */
    /* how input k is indexed by the contiguous output's element e (EW_BCAST_*); the kernel
     * receives bn, the output's row length, for the broadcast modes */
    int bmode[CK_EW_MAX_INPUTS];
    int idx32; /* strided: element indices fit 32 bits; vector: pack indices do */
    /* EW_LAYOUT_STRIDED */
    int rank; /* 1..8 after collapsing */
} ew_spec;

/* The cache key of spec (malloc'd). */
char *ck_ew_key(const ew_spec *spec);

/* The kernel source (malloc'd), kernel name "ck_ew_vec" or "ck_ew_strided". */
ck_status ck_ew_generate(const ew_spec *spec, char **source);

/* The source of the run-time typed cast kernel ck_cast_any (malloc'd). */
ck_status ck_ew_cast_any_source(char **source);

/* Elements per vector pack of the vector path: 16 / smallest storage size. */
int ck_ew_vec_elems(const ew_spec *spec);

/* Storage bytes of a byte-sized dtype (0 for fp4/fp6). */
int ck_ew_elem_bytes(ck_dtype t);

/* ---- problem.c */

enum { EW_MAXT = CK_EW_MAX_INPUTS + 1 };

/* A problem after broadcasting and collapsing: tensor k < nin is input k, tensor nin the
 * destination; lengths and strides (elements) of `rank` dimensions, row-major order kept. */
typedef struct ew_layout {
    int nt, rank;
    int64_t n;
    int64_t len[CK_TENSOR_MAX_RANK];
    int64_t str[EW_MAXT][CK_TENSOR_MAX_RANK];
    void *data[EW_MAXT];
    ck_dtype dtype[EW_MAXT];
} ew_layout;

void ck_ew_collapse(ew_layout *l, const ck_tensor *dst, const ck_tensor *in, int nin);
/* 1 when a tensor of l has a sub-byte type (fp4, fp6). */
int ck_ew_has_subbyte(const ew_layout *l);
/* Same pointer and, dimension by dimension, the same strides where the length exceeds 1. */
int ck_ew_same_layout(const ck_tensor *a, const ck_tensor *b);

/* ---- policy.c */

/* The vector layout: the destination contiguous (rank 1, or rank 2 with rows of bn = len[1]
 * elements) with a 16-byte aligned pointer; each input laid out like it (16-byte aligned), a
 * row vector broadcast over the rows (16-byte aligned, bn a multiple of the pack), one value
 * per row, or one value. Fills spec->bmode and *bn. V: elements per pack. */
int ck_ew_vec_ok(const ew_layout *l, int V, ew_spec *spec, int64_t *bn);
/* Blocks for `work` items, per_block each, at most waves x SMs (waves 0: no cap but the
 * grid's limit; the kernels' grid-stride loops cover what one pass does not). */
unsigned ck_ew_grid(ck_context *ctx, int64_t work, int64_t per_block, int waves);

/* The tuning table's problem key of a vector-layout spec over n elements (types, the cast's
 * modes or a hash of the program, n, broadcast modes, in place): "f32>bf16/cast/r=0/o=0/
 * s=0x1p+0/n=1024/b=0/alias=0". */
void ck_ew_problem_key(const ew_spec *spec, int64_t n, char *buf, size_t size);
/* The vector instance on ctx: the instance `ck tune` forces, else the tuning table's entry
 * (op "elementwise") with the developer switch CK_EW_INSTANCE over it, else the heuristic. */
ew_instance ck_ew_instance_for(ck_context *ctx, const ew_spec *spec, const char *problem);
/* An instance's text "unroll,block,waves,cs" (the table's form) and back (0: invalid). */
void ck_ew_instance_name(const ew_instance *in, char *buf, size_t size);
int ck_ew_instance_parse(const char *text, ew_instance *in);

/* ---- kernel.c */

/* What ck_copy / ck_cast / ck_elementwise would run (checks included): vec 1 and the vector
 * instance's text and problem key for the vector layout; vec 0 otherwise (strided, run-time
 * typed or nothing to run). */
typedef struct ew_plan_out {
    int vec;
    char instance[64];
    char problem[256];
} ew_plan_out;
enum { EW_CALL_COPY = 0, EW_CALL_CAST = 1, EW_CALL_EXPR = 2 };
ck_status ck_ew_plan(ck_context *ctx, int call, ck_tensor *dst, const ck_tensor *inputs,
                     int input_count, const ck_convert_options *opt, const ck_ew_program *prog,
                     ew_plan_out *out);

/* `ck tune copy|cast|elementwise`: times every distinct vector instance (packs per thread,
 * block, stores) of the call and stores the fastest in the tuning table
 * (CK_ERROR_UNSUPPORTED when the call does not take the vector layout). */
typedef void (*ck_ew_tune_progress)(void *user, int i, int n, const char *instance, double ms);
ck_status ck_ew_tune(ck_context *ctx, int call, ck_tensor *dst, const ck_tensor *inputs,
                     int input_count, const ck_convert_options *opt, const ck_ew_program *prog,
                     int reps, ck_ew_tune_progress progress, void *user, char *best,
                     size_t best_size, double *best_ms);

/* CPU reference (reference.c; test_elementwise_ops and `ck prof elementwise` share it): the
 * program's value in double precision for the inputs' values x[0..] (constants and scales
 * rounded to f32 as the kernels take them, casts rounded through their type). */
double ck_ew_reference(const ck_ew_program *p, const double *x);

#endif
