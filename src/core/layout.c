/*
 * The layout wrapper (reference §13): hierarchical shapes and strides, sizes,
 * 1-D indexing (first mode fastest), coordinate -> offset, index <->
 * coordinate, slicing, packed strides and the reference's printed notation.
 *
 * Both trees of a ck_layout are stored in pre-order (include/ck/layout.h);
 * because the stride tree is congruent to the shape tree, node i of one is
 * node i of the other, and the functions below walk both with one index.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ck/layout.h"
#include "error.h"
#include "int_tuple.h"

/* ------------------------------------------------------------- mode paths */

/* A path names a node by the child indices leading to it from the root,
 * e.g. "mode 1.0" is child 0 of top-level mode 1. */
typedef struct path {
    int depth;
    int index[CK_INT_TUPLE_MAX_DEPTH + 1];
} path;

static const char *path_name(const path *p, char *buf, size_t size)
{
    if (p->depth == 0) {
        snprintf(buf, size, "the whole layout");
        return buf;
    }
    size_t len = (size_t)snprintf(buf, size, "mode ");
    for (int k = 0; k < p->depth && len < size; ++k)
        len += (size_t)snprintf(buf + len, size - len, k ? ".%d" : "%d", p->index[k]);
    return buf;
}

/* Path of node `target` of a valid tree (walks from the root). */
static void path_of(const ck_int_tuple *t, int target, path *p)
{
    int i = 0;
    p->depth = 0;
    while (i != target && t->node[i].kind == CK_INT_TUPLE_TUPLE) {
        int c = i + 1, k = 0;
        while (k < t->node[i].rank && target >= c + t->node[c].span) {
            c += t->node[c].span;
            ++k;
        }
        if (k == t->node[i].rank || p->depth > CK_INT_TUPLE_MAX_DEPTH)
            return;
        p->index[p->depth++] = k;
        i = c;
    }
}

/* ------------------------------------------------------------- validation */

/* Name of node i of a valid tree, for messages ("mode 1.0"). */
#define WHERE(t, i) node_name((t), (i), (char[96]){0}, 96)

static const char *node_name(const ck_int_tuple *t, int i, char *buf, size_t size)
{
    path p;
    path_of(t, i, &p);
    return path_name(&p, buf, size);
}

/* |v| for the overflow bounds (INT64_MIN is rejected before it gets here). */
static uint64_t magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)(-v) : (uint64_t)v;
}

/* Check a layout argument: both trees well formed, the shape root a tuple,
 * integer leaves, shape leaves >= 1, nested tuples non-empty, congruent
 * trees, size and largest |offset| within int64_t. */
static ck_status check_layout(const ck_layout *l, const char *func, const char *arg)
{
    char sname[64], dname[64];
    if (l == NULL)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' is NULL; a valid pointer is required.", func, arg);
    snprintf(sname, sizeof sname, "%s->shape", arg);
    snprintf(dname, sizeof dname, "%s->stride", arg);
    ck_status st = ck_int_tuple_check(&l->shape, func, sname);
    if (st == CK_SUCCESS)
        st = ck_int_tuple_check(&l->stride, func, dname);
    if (st != CK_SUCCESS)
        return st;
    const ck_int_tuple *s = &l->shape, *d = &l->stride;
    if (s->node[0].kind != CK_INT_TUPLE_TUPLE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' has a shape whose root is not a tuple; build layouts "
                       "with ck_layout_make, which wraps a single integer shape as (n).",
                       func, arg);
    uint64_t size = 1, bound = 0;
    for (int i = 0; i < s->count; ++i) {
        const ck_int_tuple_node *sn = &s->node[i];
        if (sn->kind == CK_INT_TUPLE_ALL || sn->kind == CK_INT_TUPLE_RANGE)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: argument '%s' has '_' or a range in its shape at %s; a shape "
                           "holds only integers and tuples.",
                           func, arg, WHERE(s, i));
        if (i >= d->count || d->node[i].kind != sn->kind || d->node[i].rank != sn->rank)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: argument '%s' has a stride tree that does not match its shape "
                           "tree at %s; strides must have exactly the shape's structure.",
                           func, arg, WHERE(s, i));
        if (sn->kind == CK_INT_TUPLE_TUPLE) {
            if (i > 0 && sn->rank == 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: argument '%s' has an empty nested tuple at %s; nested modes "
                               "need at least one element.",
                               func, arg, WHERE(s, i));
            continue;
        }
        if (sn->value < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: argument '%s' has length %lld at %s; lengths must be >= 1.", func,
                           arg, (long long)sn->value, WHERE(s, i));
        if (d->node[i].value == INT64_MIN)
            return ck_fail(CK_ERROR_OVERFLOW,
                           "%s: argument '%s' has stride INT64_MIN at %s; strides must be "
                           "within +-INT64_MAX.",
                           func, arg, WHERE(s, i));
        uint64_t len = (uint64_t)sn->value, reach;
        if (size > (uint64_t)INT64_MAX / len)
            return ck_fail(CK_ERROR_OVERFLOW,
                           "%s: argument '%s' has a size (product of the lengths) that does not "
                           "fit in int64_t (at %s).",
                           func, arg, WHERE(s, i));
        size *= len;
        uint64_t m = magnitude(d->node[i].value);
        if (m != 0 && (len - 1) > ((uint64_t)INT64_MAX - bound) / m)
            return ck_fail(CK_ERROR_OVERFLOW,
                           "%s: argument '%s' reaches offsets that do not fit in int64_t "
                           "(sum of |stride| x (length - 1) overflows at %s).",
                           func, arg, WHERE(s, i));
        reach = m * (len - 1);
        bound += reach;
    }
    if (d->count != s->count)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' has %d stride nodes for %d shape nodes; strides must "
                       "have exactly the shape's structure.",
                       func, arg, d->count, s->count);
    return CK_SUCCESS;
}

/* ----------------------------------------------------------- tree helpers */

/* Size of the subtree at node i: product of its leaves (fits: checked). */
static int64_t sub_size(const ck_int_tuple *s, int i)
{
    int64_t size = 1;
    for (int k = i; k < i + s->node[i].span; ++k)
        if (s->node[k].kind == CK_INT_TUPLE_INT)
            size *= s->node[k].value;
    return size;
}

/* Offset of 1-D index v (0 <= v < sub_size) of the subtree at node i: the
 * leaves in pre-order are the mixed-radix digits, first leaf fastest. */
static int64_t sub_offset(const ck_layout *l, int i, int64_t v)
{
    int64_t off = 0;
    for (int k = i; k < i + l->shape.node[i].span; ++k) {
        if (l->shape.node[k].kind != CK_INT_TUPLE_INT)
            continue;
        int64_t len = l->shape.node[k].value;
        off += (v % len) * l->stride.node[k].value;
        v /= len;
    }
    return off;
}

/* Index of child k of tuple node i. */
static int child_node(const ck_int_tuple *t, int i, int k)
{
    int c = i + 1;
    while (k-- > 0)
        c += t->node[c].span;
    return c;
}

/* ---------------------------------------------------- construct and print */

ck_status ck_layout_make(const ck_int_tuple *shape, const ck_int_tuple *stride, ck_layout *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_layout_make");
    ck_status st = ck_int_tuple_check(shape, "ck_layout_make", "shape");
    if (st == CK_SUCCESS)
        st = ck_int_tuple_check(stride, "ck_layout_make", "stride");
    if (st != CK_SUCCESS)
        return st;
    ck_layout l;
    if (shape->node[0].kind != CK_INT_TUPLE_TUPLE) {
        if (stride->node[0].kind == CK_INT_TUPLE_TUPLE)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_layout_make: argument 'stride' is a tuple but argument 'shape' is "
                           "a single integer; strides must have exactly the shape's structure.");
        st = ck_int_tuple_join(shape, 1, &l.shape);
        if (st == CK_SUCCESS)
            st = ck_int_tuple_join(stride, 1, &l.stride);
        if (st != CK_SUCCESS)
            return st;
    } else {
        l.shape = *shape;
        l.stride = *stride;
    }
    st = check_layout(&l, "ck_layout_make", "shape:stride");
    if (st != CK_SUCCESS)
        return st;
    *out = l;
    return CK_SUCCESS;
}

ck_status ck_layout_make_packed(const ck_int_tuple *shape, ck_layout *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_layout_make_packed");
    ck_status st = ck_int_tuple_check(shape, "ck_layout_make_packed", "shape");
    if (st != CK_SUCCESS)
        return st;
    ck_int_tuple stride = *shape;
    int64_t run = 1;
    for (int i = 0; i < stride.count; ++i) {
        ck_int_tuple_node *n = &stride.node[i];
        if (n->kind != CK_INT_TUPLE_INT)
            continue;
        int64_t len = n->value;
        n->value = run;
        /* Stop growing once the product is out of range: ck_layout_make then
         * reports the overflow of the size with the offending mode. */
        if (len >= 1 && run <= INT64_MAX / len)
            run *= len;
    }
    return ck_layout_make(shape, &stride, out);
}

ck_status ck_layout_parse(const char *text, ck_layout *out)
{
    static const char *const F = "ck_layout_parse";
    CK_REQUIRE_NOT_NULL(text, F);
    CK_REQUIRE_NOT_NULL(out, F);
    size_t n = strlen(text);
    size_t b = 0;
    while (b < n && text[b] == ' ')
        ++b;
    ck_int_tuple shape, stride;
    ck_status st;
    int has_stride = 0;
    if (strncmp(text + b, "dims:", 5) == 0) {
        /* The reference's notation: "dims:<children> strides:<children>". */
        const char *dims = text + b + 5;
        const char *sep = strstr(dims, "strides:");
        size_t dn = sep ? (size_t)(sep - dims) : strlen(dims);
        st = ck_int_tuple_parse_span(dims, dn, 1, &shape, F, "the dims");
        if (st == CK_SUCCESS && sep) {
            has_stride = 1;
            st = ck_int_tuple_parse_span(sep + 8, strlen(sep + 8), 1, &stride, F, "the strides");
        }
    } else {
        /* "shape:stride" or "shape": split at the first ':' outside parentheses. */
        int depth = 0;
        size_t colon = n;
        for (size_t i = b; i < n && colon == n; ++i) {
            depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
            if (text[i] == ':' && depth == 0)
                colon = i;
        }
        st = ck_int_tuple_parse_span(text, colon, 0, &shape, F, "the shape");
        if (st == CK_SUCCESS && colon < n) {
            has_stride = 1;
            st = ck_int_tuple_parse_span(text + colon + 1, n - colon - 1, 0, &stride, F,
                                         "the stride");
        }
    }
    if (st != CK_SUCCESS)
        return st;
    ck_layout l;
    st = has_stride ? ck_layout_make(&shape, &stride, &l) : ck_layout_make_packed(&shape, &l);
    if (st != CK_SUCCESS)
        return ck_fail_context(st, "ck_layout_parse(\"%.80s\")", text);
    *out = l;
    return CK_SUCCESS;
}

ck_status ck_layout_format(const ck_layout *layout, char *buf, size_t size)
{
    CK_REQUIRE_NOT_NULL(buf, "ck_layout_format");
    ck_status st = check_layout(layout, "ck_layout_format", "layout");
    if (st != CK_SUCCESS)
        return st;
    ck_text text;
    ck_text_init(&text, buf, size);
    ck_text_puts(&text, "dims:");
    ck_int_tuple_write(&text, &layout->shape, 0, 1);
    ck_text_puts(&text, " strides:");
    ck_int_tuple_write(&text, &layout->stride, 0, 1);
    return ck_text_finish(&text, "ck_layout_format");
}

ck_status ck_layout_format_compact(const ck_layout *layout, char *buf, size_t size)
{
    CK_REQUIRE_NOT_NULL(buf, "ck_layout_format_compact");
    ck_status st = check_layout(layout, "ck_layout_format_compact", "layout");
    if (st != CK_SUCCESS)
        return st;
    ck_text text;
    ck_text_init(&text, buf, size);
    ck_int_tuple_write(&text, &layout->shape, 0, 0);
    ck_text_puts(&text, ":");
    ck_int_tuple_write(&text, &layout->stride, 0, 0);
    return ck_text_finish(&text, "ck_layout_format_compact");
}

/* ---------------------------------------------------------------- queries */

ck_status ck_layout_size(const ck_layout *layout, int64_t *size)
{
    CK_REQUIRE_NOT_NULL(size, "ck_layout_size");
    ck_status st = check_layout(layout, "ck_layout_size", "layout");
    if (st != CK_SUCCESS)
        return st;
    *size = sub_size(&layout->shape, 0);
    return CK_SUCCESS;
}

ck_status ck_layout_rank(const ck_layout *layout, int *rank)
{
    CK_REQUIRE_NOT_NULL(rank, "ck_layout_rank");
    ck_status st = check_layout(layout, "ck_layout_rank", "layout");
    if (st != CK_SUCCESS)
        return st;
    *rank = layout->shape.node[0].rank;
    return CK_SUCCESS;
}

ck_status ck_layout_depth(const ck_layout *layout, int *depth)
{
    CK_REQUIRE_NOT_NULL(depth, "ck_layout_depth");
    ck_status st = check_layout(layout, "ck_layout_depth", "layout");
    if (st != CK_SUCCESS)
        return st;
    return ck_int_tuple_depth(&layout->shape, depth);
}

/* Node of top-level mode i, after checking the layout and i. */
static ck_status mode_node(const ck_layout *layout, int i, const char *func, int *node)
{
    ck_status st = check_layout(layout, func, "layout");
    if (st != CK_SUCCESS)
        return st;
    int rank = layout->shape.node[0].rank;
    if (i < 0 || i >= rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'i' = %d is out of range; the layout has rank %d, accepted: "
                       "0 to %d.",
                       func, i, rank, rank - 1);
    *node = child_node(&layout->shape, 0, i);
    return CK_SUCCESS;
}

ck_status ck_layout_mode(const ck_layout *layout, int i, ck_layout *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_layout_mode");
    int node;
    ck_status st = mode_node(layout, i, "ck_layout_mode", &node);
    if (st != CK_SUCCESS)
        return st;
    ck_int_tuple s, d;
    st = ck_int_tuple_child(&layout->shape, i, &s);
    if (st == CK_SUCCESS)
        st = ck_int_tuple_child(&layout->stride, i, &d);
    return st != CK_SUCCESS ? st : ck_layout_make(&s, &d, out);
}

ck_status ck_layout_mode_size(const ck_layout *layout, int i, int64_t *size)
{
    CK_REQUIRE_NOT_NULL(size, "ck_layout_mode_size");
    int node = 0;
    ck_status st = mode_node(layout, i, "ck_layout_mode_size", &node);
    if (st != CK_SUCCESS)
        return st;
    *size = sub_size(&layout->shape, node);
    return CK_SUCCESS;
}

/* ------------------------------------------------- coordinates and offsets */

static ck_status index_range_error(const char *func, const char *arg, int64_t v, int64_t size,
                                   const path *p)
{
    char where[96];
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "%s: argument '%s' holds index %lld for %s, whose size is %lld; accepted: 0 "
                   "to %lld.",
                   func, arg, (long long)v, path_name(p, where, sizeof where), (long long)size,
                   (long long)size - 1);
}

ck_status ck_layout_index_to_coord(const ck_layout *layout, int64_t index, ck_int_tuple *coord)
{
    CK_REQUIRE_NOT_NULL(coord, "ck_layout_index_to_coord");
    ck_status st = check_layout(layout, "ck_layout_index_to_coord", "layout");
    if (st != CK_SUCCESS)
        return st;
    int64_t size = sub_size(&layout->shape, 0);
    if (index < 0 || index >= size) {
        path p = {0, {0}};
        return index_range_error("ck_layout_index_to_coord", "index", index, size, &p);
    }
    ck_int_tuple c = layout->shape;
    for (int k = 0; k < c.count; ++k) {
        if (c.node[k].kind != CK_INT_TUPLE_INT)
            continue;
        int64_t len = c.node[k].value;
        c.node[k].value = index % len;
        index /= len;
    }
    *coord = c;
    return CK_SUCCESS;
}

/* Walk a coordinate against the layout: for coordinate node ci matching
 * shape node si, accumulate the 1-D index (within si) and the offset. */
typedef struct coord_walk {
    const ck_layout *l;
    const ck_int_tuple *c;
    const char *func, *arg;
    path p;
} coord_walk;

static ck_status walk_coord(coord_walk *w, int si, int ci, int64_t *index, int64_t *offset)
{
    const ck_int_tuple_node *cn = &w->c->node[ci];
    const ck_int_tuple_node *sn = &w->l->shape.node[si];
    char where[96];
    if (cn->kind == CK_INT_TUPLE_INT) {
        int64_t size = sub_size(&w->l->shape, si);
        if (cn->value < 0 || cn->value >= size)
            return index_range_error(w->func, w->arg, cn->value, size, &w->p);
        *index = cn->value;
        *offset = sub_offset(w->l, si, cn->value);
        return CK_SUCCESS;
    }
    if (cn->kind != CK_INT_TUPLE_TUPLE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' holds '_' or a range for %s; coordinates hold only "
                       "integers and tuples (use ck_layout_slice to keep modes).",
                       w->func, w->arg, path_name(&w->p, where, sizeof where));
    if (sn->kind != CK_INT_TUPLE_TUPLE || sn->rank != cn->rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' holds a tuple of rank %d for %s, which is %s of rank "
                       "%d; give a tuple of the same rank or a single 1-D index.",
                       w->func, w->arg, cn->rank, path_name(&w->p, where, sizeof where),
                       sn->kind == CK_INT_TUPLE_TUPLE ? "a tuple" : "an integer mode",
                       sn->kind == CK_INT_TUPLE_TUPLE ? sn->rank : 1);
    int64_t idx = 0, off = 0, scale = 1;
    int sc = si + 1, cc = ci + 1;
    for (int k = 0; k < cn->rank; ++k) {
        int64_t ki, ko;
        w->p.index[w->p.depth++] = k;
        ck_status st = walk_coord(w, sc, cc, &ki, &ko);
        w->p.depth--;
        if (st != CK_SUCCESS)
            return st;
        idx += ki * scale;
        off += ko;
        scale *= sub_size(&w->l->shape, sc);
        sc += w->l->shape.node[sc].span;
        cc += w->c->node[cc].span;
    }
    *index = idx;
    *offset = off;
    return CK_SUCCESS;
}

static ck_status eval_coord(const ck_layout *layout, const ck_int_tuple *coord, const char *func,
                            int64_t *index, int64_t *offset)
{
    ck_status st = check_layout(layout, func, "layout");
    if (st == CK_SUCCESS)
        st = ck_int_tuple_check(coord, func, "coord");
    if (st != CK_SUCCESS)
        return st;
    coord_walk w = {layout, coord, func, "coord", {0, {0}}};
    return walk_coord(&w, 0, 0, index, offset);
}

ck_status ck_layout_coord_to_index(const ck_layout *layout, const ck_int_tuple *coord,
                                   int64_t *index)
{
    CK_REQUIRE_NOT_NULL(index, "ck_layout_coord_to_index");
    int64_t idx, off;
    ck_status st = eval_coord(layout, coord, "ck_layout_coord_to_index", &idx, &off);
    if (st == CK_SUCCESS)
        *index = idx;
    return st;
}

ck_status ck_layout_offset(const ck_layout *layout, const ck_int_tuple *coord, int64_t *offset)
{
    CK_REQUIRE_NOT_NULL(offset, "ck_layout_offset");
    int64_t idx, off;
    ck_status st = eval_coord(layout, coord, "ck_layout_offset", &idx, &off);
    if (st == CK_SUCCESS)
        *offset = off;
    return st;
}

ck_status ck_layout_offset_of_index(const ck_layout *layout, int64_t index, int64_t *offset)
{
    CK_REQUIRE_NOT_NULL(offset, "ck_layout_offset_of_index");
    ck_status st = check_layout(layout, "ck_layout_offset_of_index", "layout");
    if (st != CK_SUCCESS)
        return st;
    int64_t size = sub_size(&layout->shape, 0);
    if (index < 0 || index >= size) {
        path p = {0, {0}};
        return index_range_error("ck_layout_offset_of_index", "index", index, size, &p);
    }
    *offset = sub_offset(layout, 0, index);
    return CK_SUCCESS;
}

ck_status ck_layout_offset_of_modes(const ck_layout *layout, const int64_t *coords, int n,
                                    int64_t *offset)
{
    static const char *const F = "ck_layout_offset_of_modes";
    CK_REQUIRE_NOT_NULL(offset, F);
    ck_status st = check_layout(layout, F, "layout");
    if (st != CK_SUCCESS)
        return st;
    int rank = layout->shape.node[0].rank;
    if (n != rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'n' = %d does not match the layout's rank %d; give one "
                       "1-D index per top-level mode.",
                       F, n, rank);
    if (n > 0)
        CK_REQUIRE_NOT_NULL(coords, F);
    int64_t off = 0;
    int node = 1;
    for (int k = 0; k < n; ++k) {
        int64_t size = sub_size(&layout->shape, node);
        if (coords[k] < 0 || coords[k] >= size) {
            path p = {1, {k}};
            return index_range_error(F, "coords", coords[k], size, &p);
        }
        off += sub_offset(layout, node, coords[k]);
        node += layout->shape.node[node].span;
    }
    *offset = off;
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- slicing */

typedef struct slicer {
    const ck_layout *l;
    const ck_int_tuple *spec;
    ck_layout out;
    int64_t offset;
    path p;
} slicer;

static void append_nodes(slicer *s, int si, int count)
{
    memcpy(&s->out.shape.node[s->out.shape.count], &s->l->shape.node[si],
           (size_t)count * sizeof s->out.shape.node[0]);
    memcpy(&s->out.stride.node[s->out.stride.count], &s->l->stride.node[si],
           (size_t)count * sizeof s->out.stride.node[0]);
    s->out.shape.count += count;
    s->out.stride.count += count;
}

static ck_status slice_range(slicer *s, int si, int64_t from, int64_t to)
{
    static const char *const F = "ck_layout_slice";
    char where[96];
    const ck_int_tuple_node *sn = &s->l->shape.node[si];
    if (sn->kind != CK_INT_TUPLE_INT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'spec' holds the range %lld:%lld for %s, which is nested; "
                       "a range of a nested mode is not a strided layout, so ranges are "
                       "accepted only for integer modes (slice the nested mode's elements).",
                       F, (long long)from, (long long)to, path_name(&s->p, where, sizeof where));
    int64_t len = sn->value;
    int64_t end = to < 0 ? (to < -len - 1 ? -1 : len + 1 + to) : to;
    if (from < 0 || end > len || end <= from)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'spec' holds the range %lld:%lld for %s of length %lld; "
                       "accepted: 0 <= from < to <= %lld, or to < 0 counting from the end (-1 is "
                       "the end), with a non-empty result.",
                       F, (long long)from, (long long)to, path_name(&s->p, where, sizeof where),
                       (long long)len, (long long)len);
    int at = s->out.shape.count;
    append_nodes(s, si, 1);
    s->out.shape.node[at].value = end - from;
    s->offset += from * s->l->stride.node[si].value;
    return CK_SUCCESS;
}

/* Slice shape node si with spec node ci; *kept tells whether anything of it
 * remains in the result (appended to s->out in pre-order). */
static ck_status slice_node(slicer *s, int si, int ci, int *kept)
{
    static const char *const F = "ck_layout_slice";
    char where[96];
    const ck_int_tuple_node *cn = &s->spec->node[ci];
    const ck_int_tuple_node *sn = &s->l->shape.node[si];
    *kept = 0;
    switch (cn->kind) {
    case CK_INT_TUPLE_INT: {
        int64_t size = sub_size(&s->l->shape, si);
        if (cn->value < 0 || cn->value >= size)
            return index_range_error(F, "spec", cn->value, size, &s->p);
        s->offset += sub_offset(s->l, si, cn->value);
        return CK_SUCCESS;
    }
    case CK_INT_TUPLE_ALL:
        append_nodes(s, si, sn->span);
        *kept = 1;
        return CK_SUCCESS;
    case CK_INT_TUPLE_RANGE:
        *kept = 1;
        return slice_range(s, si, cn->value, cn->value2);
    default:
        break;
    }
    if (sn->kind != CK_INT_TUPLE_TUPLE || sn->rank != cn->rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'spec' holds a tuple of rank %d for %s, which is %s of rank "
                       "%d; give a tuple of the same rank, an index, '_' or a range.",
                       F, cn->rank, path_name(&s->p, where, sizeof where),
                       sn->kind == CK_INT_TUPLE_TUPLE ? "a tuple" : "an integer mode",
                       sn->kind == CK_INT_TUPLE_TUPLE ? sn->rank : 1);
    int at = s->out.shape.count;
    append_nodes(s, si, 1); /* the tuple node; rank and span are set below */
    int rank = 0, sc = si + 1, cc = ci + 1;
    for (int k = 0; k < cn->rank; ++k) {
        int child_kept;
        s->p.index[s->p.depth++] = k;
        ck_status st = slice_node(s, sc, cc, &child_kept);
        s->p.depth--;
        if (st != CK_SUCCESS)
            return st;
        rank += child_kept;
        sc += s->l->shape.node[sc].span;
        cc += s->spec->node[cc].span;
    }
    if (rank == 0 && si != 0) { /* nothing kept: the nested mode disappears */
        s->out.shape.count = at;
        s->out.stride.count = at;
        return CK_SUCCESS;
    }
    int span = s->out.shape.count - at;
    s->out.shape.node[at].rank = s->out.stride.node[at].rank = rank;
    s->out.shape.node[at].span = s->out.stride.node[at].span = span;
    *kept = 1;
    return CK_SUCCESS;
}

ck_status ck_layout_slice(const ck_layout *layout, const ck_int_tuple *spec, ck_layout *out,
                          int64_t *offset)
{
    static const char *const F = "ck_layout_slice";
    CK_REQUIRE_NOT_NULL(out, F);
    CK_REQUIRE_NOT_NULL(offset, F);
    ck_status st = check_layout(layout, F, "layout");
    if (st == CK_SUCCESS)
        st = ck_int_tuple_check(spec, F, "spec");
    if (st != CK_SUCCESS)
        return st;
    slicer s;
    memset(&s, 0, sizeof s);
    s.l = layout;
    s.spec = spec;
    int kept;
    const ck_int_tuple_node *root = &spec->node[0];
    if (root->kind == CK_INT_TUPLE_RANGE && layout->shape.node[0].rank == 1) {
        /* A rank-1 layout is sliced by a range as its single mode is. */
        s.p.depth = 1;
        s.out.shape.count = s.out.stride.count = 1;
        s.out.shape.node[0] = layout->shape.node[0];
        s.out.stride.node[0] = layout->stride.node[0];
        st = slice_range(&s, 1, root->value, root->value2);
        s.out.shape.node[0].span = s.out.stride.node[0].span = s.out.shape.count;
    } else if (root->kind == CK_INT_TUPLE_INT) {
        /* A 1-D index of the whole layout fixes everything: rank 0. */
        st = slice_node(&s, 0, 0, &kept);
        s.out.shape.count = s.out.stride.count = 1;
        s.out.shape.node[0] = (ck_int_tuple_node){CK_INT_TUPLE_TUPLE, 0, 1, 0, 0, 0};
        s.out.stride.node[0] = s.out.shape.node[0];
    } else {
        st = slice_node(&s, 0, 0, &kept);
    }
    if (st != CK_SUCCESS)
        return st;
    st = check_layout(&s.out, F, "result"); /* cannot fail: a guard against bugs */
    if (st != CK_SUCCESS)
        return ck_fail_context(CK_ERROR_INTERNAL, "ck_layout_slice built an invalid layout");
    *out = s.out;
    *offset = s.offset;
    return CK_SUCCESS;
}
