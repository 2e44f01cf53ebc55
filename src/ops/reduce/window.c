/*
 * The reduce read stages' tile windows (reduce_internal.h; CK_REDUCE_WINDOW=1 or the tuning
 * text's WINDOW field; reduce_window_kernel.h is the stage that calls them). Each read loop
 * walks the reduced index of a part in tiles; window x is one whole tile (no masks: its
 * descriptor's length is the part's whole tiles, a multiple of the tile), the edge windows one
 * step of what is left (masked at their length, zeros past it, which the stage does not fold).
 *
 *   row (RD_KIND 0, contiguous reduced elements): the window's pointer is the group's row at
 *     the part's start; the tile is [U * G * V] elements, P0 = (row of the block, lane),
 *     Y = (vector u, element k): register u * V + k of lane l is element (u * G + l) * V + k,
 *     the rows of the block replicas (each at its own pointer). Window xv: one vector a lane
 *     up to the last whole vector (masked by whole vectors), xe: one element a lane to the
 *     part's end. Narrow elements in 16-byte vectors: x's and xv's registers are the vectors'
 *     32-bit words (descriptor and origin in words), unpacked by the stage as the indexed
 *     stage does (ck_reduce_window_words): one register per element would double (16-bit) or
 *     quadruple (fp8) the registers the loads hold.
 *   strided row (RD_KIND 0, vb = 0): xe alone, one element a lane over the reduced dimensions
 *     merged into the reduced index (gather_window), masked at n.
 *   column (RD_KIND 1, one reduced dimension): the descriptor is [reduced, m] with the reduced
 *     stride; the tile is [U * RT, CT * V], P0 = (reduced thread, column thread), Y = (u, k):
 *     register u * V + k of thread (ty, tx) is (u * RT + ty, tx * V + k), masked past column
 *     m. Edge xe: [RT, CT * V], one row a reduced thread.
 * The generation is the ops' common part (src/ops/common/op_window.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_window.h"
#include "ops/reduce/reduce_internal.h"

static int vec_elems(const rd_plan *p)
{
    return p->vb > 0 ? p->vb / ck_reduce_in_size((ck_dtype)p->ti) : 1;
}

int ck_reduce_window_ok(const rd_plan *p)
{
    if (p->kind == 0)
        return p->vb == 0 || (long long)p->u * p->g * vec_elems(p) <= CK_DIST_MAX_LENGTH;
    return p->kind == 1 && p->rd == 1;
}

/* The row instance's encoding: `vectors` vectors of `units` a lane (tile [vectors * G *
 * units]; xe: one element a lane), the block's rows replicas. */
static void row_encoding(const rd_plan *p, int vectors, int units, ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 1;
    int h = 0;
    if (vectors > 1)
        e->h_lengths[0][h++] = vectors;
    e->h_lengths[0][h++] = p->g;
    e->h_lengths[0][h++] = units;
    e->ndim_h[0] = h;
    e->ndim_p = 1;
    int q = 0;
    if (p->rpb > 1) {
        e->ndim_r = 1;
        e->r_lengths[0] = p->rpb;
        e->p_major[0][q] = 0, e->p_minor[0][q++] = 0;
    }
    e->p_major[0][q] = 1, e->p_minor[0][q++] = h - 2; /* the lane */
    e->p_size[0] = q;
    int y = 0;
    if (vectors > 1)
        e->y_major[y] = 1, e->y_minor[y++] = 0;
    e->y_major[y] = 1, e->y_minor[y++] = h - 1;
    e->ndim_y = y;
}

/* The column instance's encoding: tile [U * RT, CT * V] (edge: [RT, CT * V]). */
static void col_encoding(const rd_plan *p, int edge, ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    int h = 0;
    if (!edge)
        e->h_lengths[0][h++] = p->u;
    e->h_lengths[0][h++] = p->rt;
    e->ndim_h[0] = h;
    e->ndim_h[1] = 2;
    e->h_lengths[1][0] = p->ct;
    e->h_lengths[1][1] = vec_elems(p);
    e->ndim_p = 1;
    e->p_size[0] = 2;
    e->p_major[0][0] = 1, e->p_minor[0][0] = h - 1; /* reduced thread, then column thread */
    e->p_major[0][1] = 2, e->p_minor[0][1] = 0;
    int y = 0;
    if (!edge)
        e->y_major[y] = 1, e->y_minor[y++] = 0;
    e->y_major[y] = 2, e->y_minor[y++] = 1;
    e->ndim_y = y;
}

int ck_reduce_window_words(const rd_plan *p)
{
    return p->kernel_kind == 0 && p->vb == 16 && ck_reduce_in_size((ck_dtype)p->ti) < 4;
}

/* Row windows: x the whole tiles (U vectors a lane), xv whole vectors (one a lane; masked by
 * vector), xe the last elements (one a lane; masked). x and xv hold the vectors' 32-bit words
 * where ck_reduce_window_words says so. Lengths and origins are in the window's units. */
static ck_status row_window(const rd_plan *p, const char *name, ck_op_window *w)
{
    const int v = vec_elems(p), pack = ck_reduce_window_words(p) ? 4 / (p->vb / v) : 1;
    const int edge = name[1] == 'e', vectors = name[1] == 0 ? p->u : 1, units = edge ? 1 : v / pack;
    const char *len = name[1] == 0 ? "nt" : name[1] == 'v' ? "nv" : "ns";
    if (pack > 1 && !edge)
        w->spec.dtype = CK_DTYPE_I32;
    row_encoding(p, vectors, units, &w->enc);
    const long long tile = (long long)vectors * p->g * units;
    /* x: the length a multiple of the tile (no masks); xv: of the vector (one condition a
     * vector); xe: any. Origins: x and xv tile multiples, xe any */
    w->spec.origin_align[0] = edge ? 1 : tile;
    const long long div = name[1] == 0 ? tile : name[1] == 'v' ? units : 1;
    const ck_op_sym syms[1] = {{len, div, INT64_C(1) << 40, div}};
    char text[96];
    snprintf(text, sizeof text, "naive(lengths=[%s], strides=[1])", len);
    return ck_op_window_desc(w, text, syms, 1);
}

/* The strided row's one window (vb = 0): xe, one element a lane over the reduced index, the
 * reduced dimensions merged (lengths l<r>, strides s<r> in elements); masked at n, their
 * product (a split part's stage folds nothing past its end). */
static ck_status gather_window(const rd_plan *p, ck_op_window *w)
{
    row_encoding(p, 1, 1, &w->enc);
    w->spec.origin_align[0] = 1;
    ck_op_sym syms[2 * RD_MAXD];
    static const char *const names[2][RD_MAXD] = {{"l0", "l1", "l2", "l3", "l4", "l5"},
                                                  {"s0", "s1", "s2", "s3", "s4", "s5"}};
    char lens[64] = "", strides[64] = "", dims[64] = "", text[256];
    for (int r = 0; r < p->rd; ++r) {
        const char *sep = r ? "," : "";
        syms[r] = (ck_op_sym){names[0][r], 1, INT64_C(1) << 40, 1};
        syms[p->rd + r] = (ck_op_sym){names[1][r], 0, INT64_C(1) << 40, 1};
        snprintf(lens + strlen(lens), sizeof lens - strlen(lens), "%s%s", sep, names[0][r]);
        snprintf(strides + strlen(strides), sizeof strides - strlen(strides), "%s%s", sep,
                 names[1][r]);
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%d", sep, r);
    }
    snprintf(text, sizeof text, "naive(lengths=[%s], strides=[%s])%s%s%s", lens, strides,
             p->rd > 1 ? " | merge(dims=[" : "", p->rd > 1 ? dims : "", p->rd > 1 ? "])" : "");
    return ck_op_window_desc(w, text, syms, 2 * p->rd);
}

/* Column windows: x the whole tiles (U rows a reduced thread), xe one row a reduced thread. */
static ck_status col_window(const rd_plan *p, const char *name, ck_op_window *w)
{
    const int v = vec_elems(p), edge = name[1] == 'e';
    const long long rows = (long long)(edge ? 1 : p->u) * p->rt;
    col_encoding(p, edge, &w->enc);
    w->spec.origin_align[0] = edge ? p->rt : rows;
    w->spec.origin_align[1] = (long long)p->ct * v;
    /* the reduced stride keeps the policy's vectors aligned (vec_bytes) */
    const char *len = edge ? "ns" : "nt";
    const ck_op_sym syms[3] = {{len, edge ? 1 : rows, INT64_C(1) << 40, edge ? 1 : rows},
                               {"cols", 1, INT64_C(1) << 40, 1},
                               {"sx", 0, INT64_C(1) << 40, v}};
    char text[96];
    snprintf(text, sizeof text, "naive(lengths=[%s,cols], strides=[sx,1])", len);
    return ck_op_window_desc(w, text, syms, 3);
}

static ck_status rd_window(const rd_plan *p, const char *name, ck_op_window *w)
{
    ck_op_window_init(w, name, (ck_dtype)p->ti, CK_WIN_LOAD);
    w->spec.read_only = 1;
    w->spec.fill = 0; /* past the part's end or column m: not folded */
    if (p->kernel_kind == 0)
        return p->vb == 0 ? gather_window(p, w) : row_window(p, name, w);
    return col_window(p, name, w);
}

ck_status ck_reduce_windows(const rd_plan *p, ck_sbuf *b)
{
    static const char *const row_names[3] = {"x", "xv", "xe"}, *const col_names[2] = {"x", "xe"};
    static const char *const row_args[3][2] = {
        {"o0=at", "nt=whole"}, {"o0=at", "nv=vend"}, {"o0=at", "ns=len"}};
    static const char *const col_args[2][5] = {{"o0=at", "o1=col0", "nt=whole", "cols=m", "sx=sx"},
                                               {"o0=at", "o1=col0", "ns=len", "cols=m", "sx=sx"}};
    static const char *const gather_args[1 + 2 * RD_MAXD] = {
        "o0=at", "l0=l0", "l1=l1", "l2=l2", "l3=l3", "l4=l4", "l5=l5",
        "s0=s0", "s1=s1", "s2=s2", "s3=s3", "s4=s4", "s5=s5"};
    const int row = p->kernel_kind == 0;
    if (row && p->vb == 0) { /* strided: xe over the merged reduced dimensions */
        ck_op_window w;
        ck_status st = rd_window(p, "xe", &w);
        if (!st)
            st = ck_op_window_emit(b, "rd", &w, gather_args, 1 + 2 * RD_MAXD);
        ck_op_window_free(&w);
        return st ? ck_fail_context(st, "ck_reduce: window 'xe'") : CK_SUCCESS;
    }
    for (int i = 0; i < (row ? 3 : 2); ++i) {
        const char *name = row ? row_names[i] : col_names[i];
        ck_op_window w;
        ck_status st = rd_window(p, name, &w);
        if (!st)
            st = ck_op_window_emit(b, "rd", &w, row ? row_args[i] : col_args[i], row ? 2 : 5);
        ck_op_window_free(&w);
        if (st)
            return ck_fail_context(st, "ck_reduce: window '%s'", name);
    }
    return CK_SUCCESS;
}

ck_status ck_reduce_window_spec(const rd_plan *p, const char *name, ck_op_window *w)
{
    ck_status st = rd_window(p, name, w);
    if (st)
        ck_op_window_free(w);
    return st;
}
