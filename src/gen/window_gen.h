/* Internal pieces of the window generator shared between src/gen files. */
#ifndef CK_SRC_GEN_WINDOW_GEN_H
#define CK_SRC_GEN_WINDOW_GEN_H

#include "ck/tile_kernel.h"
#include "core/expr.h"
#include "gen/sbuf.h"

enum { CK_GEN_MAX_REGS = 4096, CK_GEN_MAX_SYMS = 32, CK_GEN_MAX_CONDS = 16 };

/* C storage type of dtype ("float", "unsigned short", ...) or NULL when unsupported. */
const char *ck_gen_ctype(ck_dtype dtype, int *bytes);

/* The generator's state (window_gen.c analyses, window_emit.c writes). */
/* One register's access. */
/* One validity condition: value < bound (upper) or bound <= value. */
typedef struct ck_gen_cond {
    ck_ival value, bound;
    int upper;
} ck_gen_cond;

enum { CK_GEN_MAX_REG_CONDS = 2 * CK_GEN_MAX_CONDS + CK_DIST_MAX_X };

typedef struct reg_info {
    ck_ival offset; /* simplified element offset */
    int ncond;      /* validity: every condition holds (none: always valid) */
    ck_gen_cond cond[CK_GEN_MAX_REG_CONDS];
    char *rel;     /* offset relative to the base, as C */
    int rel_const; /* rel is a constant (rel_value) */
    int64_t rel_value;
    ck_ival x[CK_DIST_MAX_X];
} reg_info;

typedef struct ck_gen {
    const ck_tile_window_spec *spec;
    ck_distribution dist;
    ck_expr_arena *ctx, *own_ctx;
    ck_adaptor *adaptor;
    const char *ctype;
    int ebytes;
    ck_ival p[CK_DIST_MAX_P], o[CK_DIST_MAX_X];
    char pname[CK_DIST_MAX_P][64], oname[CK_DIST_MAX_X][64];
    long long nregs;
    reg_info *regs;
    char *syms[CK_GEN_MAX_SYMS];
    int nsyms;
    int vdim, vwidth; /* vector Y dim and elements per access */
    int from_traits;  /* chosen by ck_load_store_traits_make */
    char fill[96];    /* the fill value as a C expression of the element type */
    ck_sfc sfc;
    /* ldmatrix loads (window_ldmatrix.c): 0 none, 1 ldmatrix, 2 ldmatrix.trans; the row
     * address (C expression over the lane's row symbol) of each register pair */
    int ldm, ldm_nq;
    char ldm_rowname[64];
    char *ldm_row[32];
} ck_gen;

/* Check the spec, build the distribution and analyse every register (declare the thread and
 * origin symbols, offsets, conditions, run-time symbols); the vector is not chosen yet. Release
 * g with ck_gen_release whether or not this succeeds. */
ck_status ck_gen_prepare(ck_gen *g, const ck_tile_window_spec *spec);
void ck_gen_release(ck_gen *g);

/* Whether every run of w registers along Y dim v (starting at multiples of w) is contiguous in
 * memory, proven on the affine forms of the offsets. */
int ck_gen_run_ok(const ck_gen *g, int v, int w);

/* The conditions under which every one of the `count` registers is valid, joined with && (a
 * condition implied by another of the same bound left out); nothing when none. */
void ck_gen_access_cond(const ck_gen *g, const long long *regs, int count, ck_sbuf *b);

/* Print x as C into a malloc'd string. */
ck_status ck_gen_print_ival(ck_ival x, char **out);

/* The start of a load/store function: origins, symbols, partition index, the out-of-range
 * early return, ck_off0 and ck_base. */
void ck_gen_emit_prologue(const ck_gen *g, ck_sbuf *b, int is_load);

/* Decide whether the load can use ldmatrix and prepare its row addresses (sets g->ldm). */
ck_status ck_gen_ldmatrix_plan(ck_gen *g);
/* Write the ldmatrix load function. */
void ck_gen_ldmatrix_emit_load(const ck_gen *g, ck_sbuf *b);

/* Write the whole window source (comment, struct, functions) into b. */
ck_status ck_gen_emit(const ck_gen *g, ck_sbuf *b);

/* Each line of text as a line of the generated header comment (" *   line"). */
void ck_gen_emit_comment_block(ck_sbuf *b, const char *text);

/* value(b) - value(a) into *delta when it is a known constant (1), else 0. */
int ck_gen_value_delta(ck_ival a, ck_ival b, int64_t *delta);

/* Register indices of access a of a sweep over `dist`'s Y space (`width` registers along Y dim
 * vdim, the sweep's order in sfc) and the access's Y index (window loads/stores, copies). */
void ck_gen_access_regs(const ck_distribution *dist, const ck_sfc *sfc, int vdim, int width,
                        long long a, long long *regs, int *y);

#endif
