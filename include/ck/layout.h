/*
 * ck/layout.h - the layout wrapper (reference §13, "Composable Kernel wrapper").
 *
 * A layout maps coordinates to memory offsets through a *hierarchical* shape
 * and a congruent tree of strides, e.g. shape (4,(2,4)) with strides
 * (2,(1,8)). Written in the reference's notation: "dims:4,(2,4) strides:2,(1,8)".
 *
 * Conventions (see docs/layout.md):
 *  - Shapes, strides, coordinates and slice specifications are all
 *    ck_int_tuple values: a tree whose leaves are integers (or, in slice
 *    specifications, "_" = keep the whole mode and "a:b" = a range).
 *  - The size of a (sub)shape is the product of its leaves.
 *  - A 1-D index enumerates a (sub)shape with the FIRST mode fastest
 *    (colexicographic order): for shape (4,(2,4)), index i is the coordinate
 *    (i % 4, ((i / 4) % 2, i / 8)).
 *  - A coordinate may stop at any level: at a node where the coordinate holds
 *    an integer, that integer is a 1-D index into the whole subtree. So for
 *    shape (4,(2,4)) the coordinates 13, (1,3) and (1,(1,1)) are the same
 *    point.
 *  - offset(coordinate) = sum over leaves of leaf coordinate x leaf stride.
 *  - Default (packed) strides are column-major: the first mode is fastest and
 *    each leaf's stride is the product of the leaf lengths before it.
 *
 * All structures are plain values (no allocation, nothing to free). Every
 * function validates its inputs, including layouts and tuples filled in by
 * hand, and returns a ck_status with a sentence (ck_last_error()) on bad
 * input; outputs are written only on success.
 */
#ifndef CK_LAYOUT_H
#define CK_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "ck/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CK_INT_TUPLE_MAX_NODES = 32, /* nodes (tuples and leaves together) in one ck_int_tuple */
    CK_INT_TUPLE_MAX_DEPTH = 8   /* nesting depth: a leaf has depth 0, (a,b) depth 1 */
};

/* Kind of one node of a ck_int_tuple. */
typedef enum ck_int_tuple_kind {
    CK_INT_TUPLE_TUPLE = 0, /* a tuple of `rank` children, which follow it (pre-order) */
    CK_INT_TUPLE_INT = 1,   /* an integer `value` */
    CK_INT_TUPLE_ALL = 2,   /* "_": the whole mode (slice specifications only) */
    CK_INT_TUPLE_RANGE = 3  /* "a:b": indices [value, value2) of a mode (slice specifications
                               only); a negative value2 counts from the end, -1 being the end */
} ck_int_tuple_kind;

/* One node of a ck_int_tuple. */
typedef struct ck_int_tuple_node {
    int32_t kind;   /* ck_int_tuple_kind */
    int32_t rank;   /* number of children of a tuple; 0 for the other kinds */
    int32_t span;   /* nodes in this subtree, itself included (1 for a leaf) */
    int32_t pad_;   /* unused, keep 0 */
    int64_t value;  /* CK_INT_TUPLE_INT: the integer; CK_INT_TUPLE_RANGE: the first index */
    int64_t value2; /* CK_INT_TUPLE_RANGE: the end (exclusive, or negative from the end) */
} ck_int_tuple_node;

/* A hierarchical tuple of integers, e.g. (4,(2,4)), stored in pre-order:
 * node[0] is the root; the children of a tuple node i start at i + 1, and the
 * next sibling of a child c is c + node[c].span. A root that is a single leaf
 * is a plain integer ("7"). Prefer the functions below to filling it in. */
typedef struct ck_int_tuple {
    int32_t count; /* nodes in use: node[0 .. count-1]; node[0].span == count */
    ck_int_tuple_node node[CK_INT_TUPLE_MAX_NODES];
} ck_int_tuple;

/* The integer `value` as a tuple (a single leaf). Fails only for a null `out`. */
ck_status ck_int_tuple_int(int64_t value, ck_int_tuple *out);

/* The flat tuple (values[0], ..., values[n-1]), 0 <= n < CK_INT_TUPLE_MAX_NODES.
 * `values` may be NULL when n is 0 (the empty tuple "()"). */
ck_status ck_int_tuple_flat(const int64_t *values, int n, ck_int_tuple *out);

/* "_" (keep a whole mode), for slice specifications. */
ck_status ck_int_tuple_all(ck_int_tuple *out);

/* "from:to" (indices [from, to) of a mode, to < 0 counting from the end with
 * -1 the end, as the reference's slice(from, to)), for slice specifications. */
ck_status ck_int_tuple_range(int64_t from, int64_t to, ck_int_tuple *out);

/* The tuple (parts[0], ..., parts[n-1]) whose children are copies of the
 * given tuples, e.g. (4, (2,4)) from parts {4, (2,4)}. `out` may alias a part.
 * Fails (CK_ERROR_INVALID_ARGUMENT) when the result would exceed
 * CK_INT_TUPLE_MAX_NODES nodes or CK_INT_TUPLE_MAX_DEPTH levels. */
ck_status ck_int_tuple_join(const ck_int_tuple *parts, int n, ck_int_tuple *out);

/* Parse a tuple from text: integers (with optional sign), "_", "a:b",
 * parentheses and commas, spaces anywhere, e.g. "(4,(2,4))", "7", "(1:3,_)".
 * Fails with CK_ERROR_PARSE naming the position for malformed text, and with
 * CK_ERROR_INVALID_ARGUMENT when it is too large or too deep. */
ck_status ck_int_tuple_parse(const char *text, ck_int_tuple *out);

/* Write `t` as text ("(4,(2,4))", "7", "(1:3,_)") into buf (NUL-terminated).
 * Fails with CK_ERROR_INVALID_ARGUMENT (naming the size needed) when `size`
 * bytes are not enough; buf then holds an empty string if size > 0. */
ck_status ck_int_tuple_format(const ck_int_tuple *t, char *buf, size_t size);

/* Rank: the number of children of a tuple root, 1 for a single leaf. */
ck_status ck_int_tuple_rank(const ck_int_tuple *t, int *rank);

/* Depth: 0 for a single leaf, 1 + the largest depth of the children otherwise. */
ck_status ck_int_tuple_depth(const ck_int_tuple *t, int *depth);

/* Child `i` (0 <= i < rank) of a tuple root, as a tuple of its own. For a
 * single leaf root, child 0 is the leaf itself. */
ck_status ck_int_tuple_child(const ck_int_tuple *t, int i, ck_int_tuple *out);

/* 1 when a and b are the same tree with the same kinds and values, else 0
 * (written to *equal). */
ck_status ck_int_tuple_equal(const ck_int_tuple *a, const ck_int_tuple *b, int *equal);

/* ------------------------------------------------------------------ layout */

/* A layout: a shape and a congruent stride tree (same structure). The root of
 * the shape is always a tuple whose children are the layout's modes; every
 * leaf of the shape is an integer >= 1, every stride an integer (0 and
 * negative strides are allowed). ck_layout_make checks that the size and
 * every reachable offset fit in int64_t. */
typedef struct ck_layout {
    ck_int_tuple shape;
    ck_int_tuple stride;
} ck_layout;

/* The layout with the given shape and strides (reference: make_layout).
 * A single-leaf shape and stride (8 and 1) give the rank-1 layout (8):(1).
 * Errors: null pointers; a shape leaf < 1; "_" or ranges in shape or stride;
 * a nested empty tuple; stride not congruent to shape (the message names the
 * first mismatching mode); size or offsets overflowing int64_t
 * (CK_ERROR_OVERFLOW). */
ck_status ck_layout_make(const ck_int_tuple *shape, const ck_int_tuple *stride, ck_layout *out);

/* The packed column-major layout of `shape`: the first mode is fastest and the
 * stride of each leaf is the product of the lengths of the leaves before it
 * (reference: make_layout(shape) without strides). (4,(2,4)) gets (1,(4,8)). */
ck_status ck_layout_make_packed(const ck_int_tuple *shape, ck_layout *out);

/* Parse a layout, in the reference's notation "dims:4,(2,4) strides:2,(1,8)"
 * (top-level parentheses omitted) or as "(4,(2,4)):(2,(1,8))". Without
 * strides ("dims:4,(2,4)" or "(4,(2,4))") the layout is packed column-major. */
ck_status ck_layout_parse(const char *text, ck_layout *out);

/* Write the layout in the reference's notation, e.g.
 * "dims:2,(2,4) strides:2,(1,8)" (the parentheses of the root tuple are
 * omitted; a rank-0 layout prints "dims:() strides:()"). Fails as
 * ck_int_tuple_format does when `size` is too small. */
ck_status ck_layout_format(const ck_layout *layout, char *buf, size_t size);

/* Write the layout as "shape:stride", e.g. "(2,(2,4)):(2,(1,8))". */
ck_status ck_layout_format_compact(const ck_layout *layout, char *buf, size_t size);

/* Size: the product of all shape leaves (1 for rank 0). */
ck_status ck_layout_size(const ck_layout *layout, int64_t *size);

/* Rank: the number of top-level modes. */
ck_status ck_layout_rank(const ck_layout *layout, int *rank);

/* Depth of the shape: 1 for a flat layout such as (4,8), 2 for (4,(2,4)). */
ck_status ck_layout_depth(const ck_layout *layout, int *depth);

/* Mode `i` (0 <= i < rank) as a layout of its own: a nested mode (2,4):(1,8)
 * keeps its modes; a leaf mode 4:2 becomes the rank-1 layout (4):(2). */
ck_status ck_layout_mode(const ck_layout *layout, int i, ck_layout *out);

/* Size of mode `i` (reference: size<i>(layout)). */
ck_status ck_layout_mode_size(const ck_layout *layout, int i, int64_t *size);

/* The natural coordinate of 1-D index `index` (0 <= index < size): a tuple
 * congruent to the shape, first mode fastest. (4,(2,4)), 13 -> (1,(1,1)). */
ck_status ck_layout_index_to_coord(const ck_layout *layout, int64_t index, ck_int_tuple *coord);

/* The 1-D index of a coordinate (inverse of ck_layout_index_to_coord). The
 * coordinate may hold an integer at any node (a 1-D index of that subtree);
 * where it holds a tuple, the shape must have a tuple of the same rank there.
 * A single integer is a 1-D index of the whole layout. Errors: out-of-range
 * values and mismatched trees, naming the mode. */
ck_status ck_layout_coord_to_index(const ck_layout *layout, const ck_int_tuple *coord,
                                   int64_t *index);

/* The offset of a coordinate (same forms as ck_layout_coord_to_index):
 * sum of leaf coordinate x leaf stride (reference: layout(coord)). */
ck_status ck_layout_offset(const ck_layout *layout, const ck_int_tuple *coord, int64_t *offset);

/* The offset of 1-D index `index` (reference: layout(index), tensor(w)). */
ck_status ck_layout_offset_of_index(const ck_layout *layout, int64_t index, int64_t *offset);

/* The offset of the coordinate (coords[0], ..., coords[n-1]), one 1-D index
 * per top-level mode, n == rank (reference: tensor_slice(h, w)). */
ck_status ck_layout_offset_of_modes(const ck_layout *layout, const int64_t *coords, int n,
                                    int64_t *offset);

/* Slice a layout (reference: tensor(slice(1,3), make_tuple(slice(), slice()))).
 * `spec` has the layout's structure, possibly stopping early, with at each node:
 *  - an integer: fix that (sub)mode at this 1-D index; it disappears from the result;
 *  - "_": keep that (sub)mode whole;
 *  - "a:b": keep indices [a, b) of a leaf mode (b < 0 counts from the end,
 *    -1 being the end): its length becomes b - a and the offset grows by a x stride;
 *  - a tuple: slice the children of a nested mode.
 * The result keeps the tree structure of what is kept (a nested mode with one
 * kept child stays a 1-tuple; a nested mode with none kept disappears), and
 * result(c) = *offset + layout(c expanded with the fixed indices).
 * Fixing every mode gives the rank-0 layout of size 1.
 * Errors: out-of-range indices or ranges, empty ranges, ranges over nested
 * modes (not representable with strides), mismatched trees. */
ck_status ck_layout_slice(const ck_layout *layout, const ck_int_tuple *spec, ck_layout *out,
                          int64_t *offset);

#ifdef __cplusplus
}
#endif
#endif /* CK_LAYOUT_H */
