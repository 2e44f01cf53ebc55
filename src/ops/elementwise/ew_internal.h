/* Internal interface of src/ops/elementwise: kernel specifications and their generation. */
#ifndef CK_SRC_OPS_ELEMENTWISE_EW_INTERNAL_H
#define CK_SRC_OPS_ELEMENTWISE_EW_INTERNAL_H

#include <stdint.h>

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
/* The vector path's instance for spec (NULL: the plain default): the defaults above, or
 * CK_EW_INSTANCE when valid. */
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
    int alias; /* the destination is an input: plain (coherent) loads */
    int unroll, block, cs; /* ew_instance (the kernel's launch bounds are `block`) */
    /* how input k is indexed by the contiguous output's element e (EW_BCAST_*); the kernel
     * receives bn, the output's row length, for the broadcast modes */
    int bmode[CK_EW_MAX_INPUTS];
    int idx32; /* strided: element indices fit 32 bits; vector: pack indices do */
    /* EW_LAYOUT_STRIDED */
    int rank;  /* 1..8 after collapsing */
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

#endif
