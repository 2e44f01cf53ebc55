/*
 * ck/tile.h - the tile programming model of ck, layers 1-3: sizes that may be
 * run-time symbols, coordinate transforms, tensor adaptors, tensor
 * descriptors and coordinates (CK Tile §7.8-7.10, 7.16, 7.19); it includes
 * ck/distribution.h (tile distributions, §7.5-7.7, 7.11-7.14, 7.17-7.22) and
 * ck/layout.h (the layout wrapper, §13).
 *
 * Direction. Every transform maps an UPPER index (what the user holds) to a
 * LOWER index (closer to memory). Adaptors apply their transforms from the
 * top to the bottom; a descriptor is an adaptor whose single bottom dimension
 * is the linear element offset.
 *
 * Hidden dimensions. An adaptor numbers every dimension that appears in it
 * (bottom, intermediate, top) with a "hidden id" 0..nhidden-1. Each
 * transform reads its upper dims and writes its lower dims by hidden id. The
 * rules an adaptor obeys (checked by ck_adaptor_create, errors name the
 * stage, transform and dimension):
 *   - every hidden id is DEFINED exactly once: as a bottom dim or as an upper
 *     dim of exactly one transform;
 *   - transforms are listed from the bottom up: a transform's lower dims are
 *     bottom dims or upper dims of EARLIER transforms;
 *   - every hidden id that is not a top dim is CONSUMED (is a lower dim of a
 *     transform) exactly once; top dims are never consumed;
 *   - a transform's lower lengths agree with the lengths of the dims it
 *     consumes (equal, or "fits within" for embed/offset/freeze).
 * Example (a tile distribution's P,Y -> X adaptor with one R and two X):
 *   bottom ids {0,1} (X0,X1); unmerge(X0 -> H00,H01) lower {0} upper {2,3};
 *   unmerge(X1 -> H10,H11) lower {1} upper {4,5}; replicate(R) lower {}
 *   upper {6}; merge(P0 <- R,H00) lower {6,2} upper {7}; top ids {7,3,4,5}.
 * Build it with one ck_adaptor_create call (see there).
 *
 * Sizes. Every length, stride, pad, offset... is a ck_ival: a known 64-bit
 * integer or an expression over named run-time symbols (M, K, lda...) with a
 * known [min,max] range and divisor. Expressions live in a ck_expr_arena that
 * must outlive everything built from them. Concrete objects (no symbols)
 * compute offsets directly on int64; symbolic ones are printed, compared and
 * turned concrete with ck_descriptor_bind / ck_adaptor_bind.
 *
 * Ownership. Objects returned through `T **out` are owned by the caller and
 * freed with the matching _destroy (NULL is accepted). Strings returned
 * through `char **out` are freed with ck_tile_free. Values (ck_transform,
 * ck_coordinate, ck_ival) need no freeing.
 *
 * Threads. Adaptors, descriptors and transforms are immutable once built and
 * may be read from any number of threads; a ck_expr_arena must not be used to
 * build expressions from two threads at once.
 *
 * Errors. Every function returning ck_status reports failures with a
 * sentence in ck_last_error(); nothing asserts or crashes on bad input.
 * Messages about adaptors name the stage, the transform (its index in the
 * adaptor, as ck_adaptor_to_string numbers it), its kind and the dimension.
 *
 * Typical use:
 *   ck_descriptor *d, *p;
 *   ck_ival len[2] = {ck_ival_int(4), ck_ival_int(8)}, str[2] = {ck_ival_int(8), ck_ival_int(1)};
 *   ck_descriptor_make_naive(2, len, str, &d);            // offset = 8 i + j
 *   ck_transform pad;
 *   ck_make_pad_transform(len[1], ck_ival_int(1), ck_ival_int(2), &pad);
 *   ck_descriptor_transform_one(d, &pad, (int[]){1}, -1, &p);   // [4, 11]
 *   int64_t off; ck_descriptor_calculate_offset(p, (int64_t[]){1, 2}, &off);  // 9
 */
#ifndef CK_TILE_H
#define CK_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "ck/status.h"
/* The rest of the tile programming model: distributions, space-filling curves, swizzles,
 * access verification and load/store traits (ck/distribution.h, which refers to this
 * header's adaptors and descriptors by struct tag only, so there is no cycle) and the layout
 * wrapper (ck/layout.h). */
#include "ck/distribution.h"
#include "ck/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CK_TILE_MAX_TRANSFORM_DIMS = 16, /* upper or lower dims of one transform */
    CK_TILE_MAX_HIDDEN = 64,         /* hidden dims of one adaptor */
    CK_TILE_MAX_SYMBOL_NAME = 63     /* characters of a symbol's name */
};

/* Free a string or array returned by this header's functions. */
void ck_tile_free(void *p);

/* ======================================================================
 * Layer 0: symbolic integers
 * ====================================================================== */

/* Arena owning expression nodes and symbols. */
typedef struct ck_expr_arena ck_expr_arena;
/* One expression node (opaque here; src/core/expr.h has the structure). */
typedef struct ck_expr ck_expr;

/* An index value: a known integer (e == NULL, value in v) or the expression
 * e (v unused). Builders fold constants, so an expression that is a constant
 * is always returned as e == NULL. */
typedef struct ck_ival {
    int64_t v;
    const ck_expr *e;
} ck_ival;

/* A known integer as a ck_ival. */
static inline ck_ival ck_ival_int(int64_t v)
{
    ck_ival r = {v, NULL};
    return r;
}
/* True when x is a known integer. */
static inline int ck_ival_is_const(ck_ival x)
{
    return x.e == NULL;
}

/* One symbol's value, for evaluation and binding. */
typedef struct ck_binding {
    const char *name;
    int64_t value;
} ck_binding;

/* Create an empty context. Errors: null out, out of memory. */
ck_status ck_expr_arena_create(ck_expr_arena **out);
/* Free a context and every expression in it (NULL accepted). */
void ck_expr_arena_destroy(ck_expr_arena *ctx);

/* Declare (or return the existing) symbol `name` ([A-Za-z_][A-Za-z0-9_]*,
 * at most CK_TILE_MAX_SYMBOL_NAME chars) with values in [min,max], all
 * multiples of `divisor` (>= 1). Redeclaring a name with different facts is
 * an error. */
ck_status ck_expr_symbol(ck_expr_arena *ctx, const char *name, int64_t min, int64_t max,
                         int64_t divisor, ck_ival *out);

/* Arithmetic on ck_ival: sum, difference, product, floor division, floor
 * modulo (result has the divisor's sign), bitwise xor, min, max. Constants
 * are folded (overflow -> CK_ERROR_OVERFLOW), identities simplified (x+0,
 * x*1, (x*c)/c, x/c*c when x is known divisible by c, x mod c when known
 * divisible, min/max decided by ranges). Division or modulo by a known zero
 * -> CK_ERROR_INVALID_ARGUMENT. When both operands are constants no context
 * is needed; otherwise the nodes go to the operands' context. */
ck_status ck_ival_add(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_sub(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_mul(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_floordiv(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_mod(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_xor(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_min(ck_ival a, ck_ival b, ck_ival *out);
ck_status ck_ival_max(ck_ival a, ck_ival b, ck_ival *out);

/* Evaluate x with the symbols bound to values. Every symbol of x must be
 * bound (CK_ERROR_NOT_FOUND otherwise) to a value within its range and
 * divisible by its divisor (CK_ERROR_INVALID_ARGUMENT otherwise). */
ck_status ck_ival_eval(ck_ival x, const ck_binding *bindings, int nbindings, int64_t *out);

/* Known facts: a range [*min,*max] containing every value of x, and a
 * divisor (>= 1) of every value of x (x itself when a nonzero constant). */
void ck_ival_range(ck_ival x, int64_t *min, int64_t *max);
int64_t ck_ival_divisor(ck_ival x);

/* Structural equality after canonicalisation (true means equal for every
 * binding; false may still be equal). */
int ck_ival_equal(ck_ival a, ck_ival b);

/* Print x as a C expression into buf (always NUL-terminated, truncated at
 * size). Floor division and modulo print as '/' and '%' when both operands
 * are known non-negative, else as CK_FLOORDIV(a,b) / CK_FLOORMOD(a,b).
 * Returns the length the full text needs (like snprintf). */
size_t ck_ival_print(ck_ival x, char *buf, size_t size);

/* ======================================================================
 * Layer 1: transforms (upper index -> lower index)
 * ====================================================================== */

typedef enum ck_transform_kind {
    CK_TRANSFORM_PASS_THROUGH, /* 1->1  low = up */
    CK_TRANSFORM_PAD,          /* 1->1  low = up - left; valid iff 0 <= low < L */
    CK_TRANSFORM_LEFT_PAD,     /* 1->1  low = up - left; valid iff up >= left */
    CK_TRANSFORM_RIGHT_PAD,    /* 1->1  low = up; valid iff up < L */
    CK_TRANSFORM_EMBED,        /* n->1  low = sum up_i * coef_i */
    CK_TRANSFORM_MERGE,        /* 1->n  mixed radix, last lower dim fastest */
    CK_TRANSFORM_UNMERGE,      /* n->1  low = sum up_i * prod_{k>i} len_k */
    CK_TRANSFORM_FREEZE,       /* 0->1  low = value */
    CK_TRANSFORM_INSERT,       /* 1->0  the upper dim is ignored */
    CK_TRANSFORM_REPLICATE,    /* n->0  broadcast */
    CK_TRANSFORM_SLICE,        /* 1->1  low = up + begin, upper length end - begin */
    CK_TRANSFORM_MODULO,       /* 1->1  low = up mod m */
    CK_TRANSFORM_XOR,          /* 2->2  low0 = up0, low1 = up1 ^ (up0 mod len1) */
    CK_TRANSFORM_OFFSET,       /* 1->1  low = up + offset */
    CK_TRANSFORM_INDEXING,     /* 1->1  low = table[up] (gather) */
    CK_TRANSFORM_KIND_COUNT_
} ck_transform_kind;

/* A transform is a value; build it with a ck_make_*_transform function and
 * read it freely. Fields not used by a kind are zero. */
typedef struct ck_transform {
    ck_transform_kind kind;
    int nup, nlow;
    ck_ival up_lengths[CK_TILE_MAX_TRANSFORM_DIMS];
    /* Lengths of the lower dims. When low_fits is set the lower dim only has
     * to be at least this long (embed, offset, freeze: the extent reached). */
    ck_ival low_lengths[CK_TILE_MAX_TRANSFORM_DIMS];
    int low_fits;
    /* embed: coefficients per upper dim; merge/unmerge/xor: the lengths that
     * are combined (lower lengths of merge, upper of unmerge). */
    ck_ival coefs[CK_TILE_MAX_TRANSFORM_DIMS];
    ck_ival p0, p1; /* pad: left,right; left_pad: left; right_pad: right;
                       slice: begin,end; offset: offset; freeze: value;
                       modulo: modulus */
    /* merge with magic-number division (concrete lengths only): for lower dim
     * i < nlow-1, the multiplier and shift dividing by prod_{j>i} len_j. */
    int use_magic;
    uint32_t magic_mul[CK_TILE_MAX_TRANSFORM_DIMS];
    uint32_t magic_shift[CK_TILE_MAX_TRANSFORM_DIMS];
    /* indexing: the table (borrowed from the caller until copied into an
     * adaptor, which owns its copy) of up_lengths[0] entries. */
    const int64_t *table;
} ck_transform;

/* Constructors. Lengths must be >= 1 (symbols: minimum >= 1), pads, begin,
 * offsets >= 0, begin < end <= L, freeze value >= 0. Errors name the
 * argument. Symbolic arguments are accepted wherever ck_ival is taken. */
ck_status ck_make_pass_through_transform(ck_ival length, ck_transform *out);
ck_status ck_make_pad_transform(ck_ival low_length, ck_ival left, ck_ival right, ck_transform *out);
ck_status ck_make_left_pad_transform(ck_ival low_length, ck_ival left, ck_transform *out);
ck_status ck_make_right_pad_transform(ck_ival low_length, ck_ival right, ck_transform *out);
/* n upper dims of `lengths`, lower index sum up_i*coefs_i (coefs >= 0). */
ck_status ck_make_embed_transform(int n, const ck_ival *lengths, const ck_ival *coefs,
                                  ck_transform *out);
/* The same (kind CK_TRANSFORM_EMBED) where coefficients may also be negative constants, as in
 * CK's backward-data convolution views (o = h - t * step): the lower index may then be
 * negative and is made valid by a later offset and pad; the lower extent counts the positive
 * terms only. */
ck_status ck_make_embed_signed_transform(int n, const ck_ival *lengths, const ck_ival *coefs,
                                         ck_transform *out);
/* One upper dim of length prod(lengths) onto n lower dims of `lengths`.
 * The division form; see ck_make_merge_magic_transform for the other. */
ck_status ck_make_merge_transform(int n, const ck_ival *lengths, ck_transform *out);
/* Merge computing its quotients by magic-number multiplication; identical
 * results for every upper index in range. Lengths must be known and their
 * product at most 2^31 (CK_ERROR_UNSUPPORTED otherwise). */
ck_status ck_make_merge_magic_transform(int n, const ck_ival *lengths, ck_transform *out);
ck_status ck_make_unmerge_transform(int n, const ck_ival *lengths, ck_transform *out);
ck_status ck_make_freeze_transform(ck_ival value, ck_transform *out);
ck_status ck_make_insert_transform(ck_ival length, ck_transform *out);
ck_status ck_make_replicate_transform(int n, const ck_ival *lengths, ck_transform *out);
ck_status ck_make_slice_transform(ck_ival low_length, ck_ival begin, ck_ival end,
                                  ck_transform *out);
/* Upper length `length`, low = up mod modulus. */
ck_status ck_make_modulo_transform(ck_ival modulus, ck_ival length, ck_transform *out);
/* Lengths len0, len1 of both the upper and the lower dims (known, >= 1). */
ck_status ck_make_xor_transform(ck_ival len0, ck_ival len1, ck_transform *out);
/* Upper length `length`, low = up + offset; the lower dim must be at least
 * length + offset long. */
ck_status ck_make_offset_transform(ck_ival length, ck_ival offset, ck_transform *out);
/* Gather: upper length n, low = table[up]; every entry in [0, low_length).
 * The table is borrowed until the transform is put into an adaptor. */
ck_status ck_make_indexing_transform(int64_t n, const int64_t *table, ck_ival low_length,
                                     ck_transform *out);

/* Short name of a kind ("pass_through", "pad", ...). */
const char *ck_transform_kind_name(ck_transform_kind kind);

/* Lower index from upper index (concrete transforms only: every parameter
 * known). `up` has t->nup entries, `low` gets t->nlow. Out-of-range upper
 * indices are computed by the same formulas (pad gives negative lowers). */
ck_status ck_transform_calculate_lower_index(const ck_transform *t, const int64_t *up,
                                             int64_t *low);

/* Incremental update: given the old upper index `up_old`, the step
 * `up_diff` and the old lower index `low` (updated in place), compute the
 * new lower index and the lower step `low_diff` (may be NULL), without full
 * recomputation where the transform allows (merge carries digit by digit). */
ck_status ck_transform_update_lower_index(const ck_transform *t, const int64_t *up_old,
                                          const int64_t *up_diff, int64_t *low, int64_t *low_diff);

/* Whether the upper index `up` maps to a valid lower index (padding).
 * Only pad, left_pad and right_pad can be invalid. */
int ck_transform_is_valid_upper_index(const ck_transform *t, const int64_t *up);

/* Vectorization guarantee of one dimension: every run of `length`
 * consecutive indices along it that starts at a multiple of `length`
 * (other indices fixed, all in range) is either entirely invalid or entirely
 * valid with bottom offsets o, o+stride, ..., o+(length-1)*stride.
 * length 0 means "any run": the offset is affine in this index over its
 * whole range with step `stride` and validity does not depend on it.
 * length 1 is no guarantee. stride_known is 0 when the step is symbolic.
 * Alignment of the run's first offset is not part of the guarantee (it
 * depends on where the access starts): compute the offset with
 * ck_descriptor_calculate_offset_expr from index symbols declared multiples
 * of the vector length and read ck_ival_divisor of the result. */
typedef struct ck_vector_info {
    int64_t length;
    int64_t stride;
    int stride_known;
} ck_vector_info;

/* Guarantees of the upper dims from those of the lower dims (CK's safe
 * vector length/stride). `low` has t->nlow entries, `up` gets t->nup. */
void ck_transform_upper_vector_info(const ck_transform *t, const ck_vector_info *low,
                                    ck_vector_info *up);

/* ======================================================================
 * Layer 2: adaptors
 * ====================================================================== */

typedef struct ck_adaptor ck_adaptor;

/* Create an adaptor from transforms over hidden ids.
 *   transforms[ntransforms]: listed bottom-up;
 *   lower_ids: concatenation, for each transform in order, of its nlow
 *              lower hidden ids; upper_ids likewise with nup upper ids;
 *   bottom_ids[nbottom], top_ids[ntop]: hidden ids of bottom and top dims;
 *   bottom_lengths: lengths of the bottom dims, or NULL to take them from
 *              the transforms consuming them (which must then be exact).
 * The number of hidden dims is max id + 1; every id below it must be used.
 * Indexing tables are copied. See the rules at the top of this file. */
ck_status ck_adaptor_create(int ntransforms, const ck_transform *transforms, const int *lower_ids,
                            const int *upper_ids, int nbottom, const int *bottom_ids,
                            const ck_ival *bottom_lengths, int ntop, const int *top_ids,
                            ck_adaptor **out);
/* Deep copy. */
ck_status ck_adaptor_copy(const ck_adaptor *a, ck_adaptor **out);
void ck_adaptor_destroy(ck_adaptor *a);

/* n dims passed through (bottom ids 0..n-1, top ids n..2n-1). */
ck_status ck_adaptor_make_identity(int n, const ck_ival *lengths, ck_adaptor **out);
/* Transpose: top dim i is bottom dim perm[i] (so bottom[perm[i]] = top[i]);
 * `lengths` are the bottom lengths. perm must be a permutation of 0..n-1. */
ck_status ck_adaptor_make_transpose(int n, const ck_ival *lengths, const int *perm,
                                    ck_adaptor **out);
/* One stage over nbottom bottom dims: lower_dims/upper_dims are positions
 * (bottom dims 0..nbottom-1, top dims 0..ntop-1), concatenated per transform
 * as in ck_adaptor_create. Every bottom dim consumed once; upper dims must
 * be a permutation of 0..ntop-1. */
ck_status ck_adaptor_make_single_stage(int nbottom, const ck_ival *bottom_lengths, int ntransforms,
                                       const ck_transform *transforms, const int *lower_dims,
                                       const int *upper_dims, ck_adaptor **out);
/* Append a stage (CK's transform_tensor_adaptor): lower_dims are positions
 * among a's top dims (each consumed exactly once), upper_dims the positions
 * of the new top dims (a permutation of 0..ntop_new-1). New hidden ids are
 * old nhidden + new top position. */
ck_status ck_adaptor_transform(const ck_adaptor *a, int ntransforms, const ck_transform *transforms,
                               const int *lower_dims, const int *upper_dims, ck_adaptor **out);
/* Chain: `lower`'s top dims feed `upper`'s bottom dims (same count and
 * lengths, position by position); the result has lower's bottom and upper's
 * top. */
ck_status ck_adaptor_chain(const ck_adaptor *lower, const ck_adaptor *upper, ck_adaptor **out);

/* Queries (a must be non-NULL; out-of-range positions give -1 / zero). */
int ck_adaptor_ntop(const ck_adaptor *a);
int ck_adaptor_nbottom(const ck_adaptor *a);
int ck_adaptor_nhidden(const ck_adaptor *a);
int ck_adaptor_ntransforms(const ck_adaptor *a);
/* Number of stages (groups of transforms appended together). */
int ck_adaptor_nstages(const ck_adaptor *a);
int ck_adaptor_top_id(const ck_adaptor *a, int i);
int ck_adaptor_bottom_id(const ck_adaptor *a, int i);
ck_ival ck_adaptor_hidden_length(const ck_adaptor *a, int hidden_id);
ck_ival ck_adaptor_top_length(const ck_adaptor *a, int i);
/* Transform i with its hidden ids (pointers into a; valid while a lives). */
const ck_transform *ck_adaptor_get_transform(const ck_adaptor *a, int i, const int **lower_ids,
                                             const int **upper_ids, int *stage);
/* True when no length or parameter is symbolic. */
int ck_adaptor_is_concrete(const ck_adaptor *a);

/* Bottom index from top index (concrete adaptors). */
ck_status ck_adaptor_calculate_bottom_index(const ck_adaptor *a, const int64_t *top,
                                            int64_t *bottom);
/* A validity condition lo <= value < hi (from a padding transform); stage and
 * transform say where it comes from. Unbounded sides are INT64_MIN/INT64_MAX. */
typedef struct ck_index_condition {
    ck_ival value, lo, hi;
    int stage, transform;
} ck_index_condition;

/* Symbolic lower index of one transform: `up` holds t->nup expressions (over
 * any symbols: thread ids, loop counters, sizes), `low` gets t->nlow. An
 * indexing (gather) transform needs a known upper index (CK_ERROR_UNSUPPORTED
 * otherwise). */
ck_status ck_transform_calculate_lower_expr(const ck_transform *t, const ck_ival *up, ck_ival *low);

/* Symbolic bottom index of a top index given as expressions, plus the
 * padding conditions that must hold for validity (conditions proven by the
 * known ranges are dropped). At most max_conds are written to conds (may be
 * NULL with max_conds 0); *nconds gets the number needed (more than max_conds
 * -> CK_ERROR_INVALID_ARGUMENT after counting). The top range 0 <= idx < len
 * is not included. Works for concrete and symbolic adaptors. */
ck_status ck_adaptor_calculate_bottom_expr(const ck_adaptor *a, const ck_ival *top, ck_ival *bottom,
                                           ck_index_condition *conds, int max_conds, int *nconds);
/* Replace every bound symbol by its value (checked against the symbol's
 * range and divisor) and re-check every transform. Symbols without a binding
 * stay symbolic (partial specialisation); ck_adaptor_is_concrete tells. */
ck_status ck_adaptor_bind(const ck_adaptor *a, const ck_binding *bindings, int nbindings,
                          ck_adaptor **out);
/* Vector guarantees of the top dims given those of the bottom dims. */
ck_status ck_adaptor_vector_info(const ck_adaptor *a, const ck_vector_info *bottom,
                                 ck_vector_info *top);
/* Readable multi-line dump (stages, transforms, hidden ids, lengths). */
ck_status ck_adaptor_to_string(const ck_adaptor *a, char **out);

/* ======================================================================
 * Layer 3: tensor descriptors
 * ====================================================================== */

/* An adaptor with one bottom dim (the element offset, hidden id 0) plus the
 * element space size. */
typedef struct ck_descriptor ck_descriptor;

/* Naive: offset = sum idx_i * strides_i (embed transform, hidden ids
 * 1..n). Element space size 1 + sum (len_i - 1) * stride_i. Lengths >= 1,
 * strides >= 0; sizes overflowing int64 -> CK_ERROR_OVERFLOW. */
ck_status ck_descriptor_make_naive(int n, const ck_ival *lengths, const ck_ival *strides,
                                   ck_descriptor **out);
/* Packed row-major (unmerge transform); element space prod(lengths). */
ck_status ck_descriptor_make_packed(int n, const ck_ival *lengths, ck_descriptor **out);
/* Row-major with the stride of dim n-2 rounded up to a multiple of align
 * (>= 1); element space as naive. */
ck_status ck_descriptor_make_aligned(int n, const ck_ival *lengths, ck_ival align,
                                     ck_descriptor **out);
/* CK's transform_tensor_descriptor: lower_dims (concatenated per transform)
 * are visible dims of d, each consumed exactly once; upper_dims are the new
 * visible dims (a permutation of 0..n_new-1). */
ck_status ck_descriptor_transform(const ck_descriptor *d, int ntransforms,
                                  const ck_transform *transforms, const int *lower_dims,
                                  const int *upper_dims, ck_descriptor **out);
/* Convenience stage: apply the one transform t to the visible dims
 * lower_dims[0..t->nlow-1] and keep every other visible dim with a
 * pass_through, in order. t's upper dims are placed at position `at` of the
 * new visible dims (0..number of kept dims), or, with at = -1, where the
 * first consumed dim was (at the end when t consumes nothing). */
ck_status ck_descriptor_transform_one(const ck_descriptor *d, const ck_transform *t,
                                      const int *lower_dims, int at, ck_descriptor **out);
ck_status ck_descriptor_copy(const ck_descriptor *d, ck_descriptor **out);
void ck_descriptor_destroy(ck_descriptor *d);

int ck_descriptor_ndim(const ck_descriptor *d);
/* Length of visible dim i (zero ck_ival when out of range). */
ck_ival ck_descriptor_length(const ck_descriptor *d, int i);
ck_ival ck_descriptor_element_space_size(const ck_descriptor *d);
/* The underlying adaptor (owned by d). */
const ck_adaptor *ck_descriptor_adaptor(const ck_descriptor *d);
int ck_descriptor_is_concrete(const ck_descriptor *d);

/* Offset of a visible index (concrete descriptors). The index is not range
 * checked; use ck_descriptor_is_valid_index for validity. */
ck_status ck_descriptor_calculate_offset(const ck_descriptor *d, const int64_t *idx,
                                         int64_t *offset);
/* *valid = every index within [0,len) and every padding transform valid. */
ck_status ck_descriptor_is_valid_index(const ck_descriptor *d, const int64_t *idx, int *valid);
/* Symbolic offset of a visible index given as expressions, with its padding
 * conditions (see ck_adaptor_calculate_bottom_expr). */
ck_status ck_descriptor_calculate_offset_expr(const ck_descriptor *d, const ck_ival *idx,
                                              ck_ival *offset, ck_index_condition *conds,
                                              int max_conds, int *nconds);
/* As ck_adaptor_bind, for a descriptor (element space size included). */
ck_status ck_descriptor_bind(const ck_descriptor *d, const ck_binding *bindings, int nbindings,
                             ck_descriptor **out);
/* Vector guarantees of the visible dims (the offset dim being memory: any
 * run, stride 1). A length-0 ("any run") result is reported as the dim's
 * length when that is known. */
ck_status ck_descriptor_vector_info(const ck_descriptor *d, ck_vector_info *top);
ck_status ck_descriptor_to_string(const ck_descriptor *d, char **out);
/* Build a descriptor from the textual form of `ck desc --help`; symbols
 * named in it are declared in ctx (range [1, 2^31-1], divisor 1) unless
 * already declared. Errors: CK_ERROR_PARSE with the position. */
ck_status ck_descriptor_parse(const char *text, ck_expr_arena *ctx, ck_descriptor **out);

/* ======================================================================
 * Shared-memory tiles of tensor-core instructions (wgmma / TMA layouts)
 * ====================================================================== */

/* An operand tile in shared memory in the canonical layouts of wgmma matrix descriptors and
 * TMA boxes (docs/device-tensor.md, docs/mma-layouts.md). The descriptor's dims are
 * (rows, cols); `contiguous_dim` is the one whose consecutive elements fill 16-byte chunks
 * (1: row-major, e.g. a K-major A (M x K) or an MN-major B (K x N); 0: column-major). With
 * s the strided index and cb the contiguous byte index, the byte offset is
 *   swizzle S = 32/64/128 bytes: (s%8)*S + (s/8)*group + cb%S + (cb/S)*span, then the NVIDIA
 *                                swizzle (ck_nv_swizzle_offset) of that offset;
 *   none:                        (s%8)*16 + (s/8)*group + cb%16 + (cb/16)*span
 *                                (8 x 16-byte core matrices).
 * Inputs: rows, cols, elem_bytes (1, 2, 4, 8), swizzle, contiguous_dim, and the strides
 * group_stride_bytes / span_stride_bytes (both 0: dense; swizzled: group = 8*S, span = all
 * the groups of one span, i.e. the contiguous dim in S-byte boxes one after the other, as TMA
 * loads of S-byte-wide boxes place them; none: span = 128, group = all the chunks of a row
 * group). Requirements: contiguous bytes a multiple of S (16 unswizzled), strided length a
 * multiple of 8, strides multiples of the pattern (2^(7+b) bytes for mode b, 16 unswizzled).
 * ck_smem_tile_make fills span_bytes, bytes (the footprint) and align_bytes (the base
 * alignment the swizzle assumes: 256/512/1024 bytes, 16 unswizzled) and the strides when 0. */
typedef struct ck_smem_tile {
    int rows, cols;
    int elem_bytes;
    ck_nv_swizzle swizzle;
    int contiguous_dim;
    long long group_stride_bytes, span_stride_bytes;
    int span_bytes;        /* out: S, or 16 without swizzle */
    long long bytes;       /* out: bytes from the first to past the last element */
    long long align_bytes; /* out: required alignment of the tile's base */
} ck_smem_tile;

/* Build the tile's descriptor (element offsets; the caller owns *out, ck_descriptor_destroy)
 * from transforms: merge of the strided dim into (8-row group, 128-byte line, row in line),
 * merge of the contiguous dim into (span, 16-byte chunk, element), an xor transform
 * chunk ^= line (the swizzle), a naive descriptor of the six digits. Completes *t (see above).
 * Errors (CK_ERROR_INVALID_ARGUMENT, naming the field) for the requirements above. */
ck_status ck_smem_tile_make(ck_smem_tile *t, ck_descriptor **out);

/* The leading- and stride-dimension byte offsets (LBO, SBO) of a wgmma matrix descriptor
 * (ck_wgmma_desc) for tile t as an operand whose K dim is k_dim (0 rows, 1 cols): K-major when
 * k_dim is the contiguous dim, else MN-major (the table of docs/device-tensor.md). LBO is
 * unused by K-major swizzled layouts and reported as 16. */
ck_status ck_smem_tile_wgmma_offsets(const ck_smem_tile *t, int k_dim, long long *lbo,
                                     long long *sbo);

/* ======================================================================
 * Coordinates
 * ====================================================================== */

/* Every hidden index of an adaptor at one top index (a value type). */
typedef struct ck_coordinate {
    int nhidden;
    int64_t hidden[CK_TILE_MAX_HIDDEN];
} ck_coordinate;

/* Compute all hidden indices for `top` (concrete adaptors). */
ck_status ck_adaptor_coordinate_make(const ck_adaptor *a, const int64_t *top, ck_coordinate *c);
/* Move by a STEP on the top index: only transforms whose upper index changed
 * are updated. `bottom_diff` (may be NULL) gets the change of the bottom. */
ck_status ck_adaptor_coordinate_move(const ck_adaptor *a, ck_coordinate *c, const int64_t *step,
                                     int64_t *bottom_diff);
void ck_adaptor_coordinate_top(const ck_adaptor *a, const ck_coordinate *c, int64_t *top);
void ck_adaptor_coordinate_bottom(const ck_adaptor *a, const ck_coordinate *c, int64_t *bottom);
/* Every padding transform valid at the cached indices (top range not checked). */
int ck_adaptor_coordinate_is_valid(const ck_adaptor *a, const ck_coordinate *c);

ck_status ck_coordinate_make(const ck_descriptor *d, const int64_t *idx, ck_coordinate *c);
ck_status ck_coordinate_move(const ck_descriptor *d, ck_coordinate *c, const int64_t *step);
/* The element offset (hidden dim 0). */
static inline int64_t ck_coordinate_offset(const ck_coordinate *c)
{
    return c->hidden[0];
}
/* Top index within [0,len) and every padding transform valid. */
int ck_coordinate_is_valid(const ck_descriptor *d, const ck_coordinate *c);

#ifdef __cplusplus
}
#endif
#endif /* CK_TILE_H */
