/*
 * The softmax register instances' tile windows (softmax_plan.h): x, y and the additive mask m as
 * windows generated from descriptors of the [rows, N] tensors and the instance's distribution
 * of the block's tile (softmax_window_kernel.h is the stage that calls them). A row is
 * cluster-raked: the cluster's C blocks take turns by rounds of G * VEC columns, so the
 * descriptor views the row (padded to the rounds) as [round, C * G * VEC] and a block's tile
 * starts at column rank * G * VEC of every round: one encoding, P0 = (row, thread), Y = (round,
 * element), for every register instance.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_window.h"
#include "ops/softmax/softmax_internal.h"
#include "ops/softmax/softmax_plan.h"

int ck_smx_window_ok(const smx_plan *p)
{
    return p->kind == 0;
}

/* The encoding of window `which` ('x', 'y': one round, 'm': one row per row group; with
 * spans every window is one row per row group: each row has its own span). */
static void smx_encoding(const smx_plan *p, char which, ck_dist_encoding *e)
{
    const int replica = which == 'm' || p->span;
    memset(e, 0, sizeof *e);
    e->ndim_x = 3;
    e->ndim_h[0] = e->ndim_h[1] = 1;
    e->h_lengths[0][0] = replica ? 1 : p->rows_per_block;
    e->h_lengths[1][0] = which == 'y' ? 1 : p->nv;
    e->ndim_h[2] = 2;
    e->h_lengths[2][0] = p->g;
    e->h_lengths[2][1] = p->vec;
    e->ndim_p = 1;
    e->p_size[0] = 2;
    if (replica) { /* the block's rows are replicas, each at its own (mask) row */
        e->ndim_r = 1;
        e->r_lengths[0] = p->rows_per_block;
        e->p_major[0][0] = 0, e->p_minor[0][0] = 0;
    } else {
        e->p_major[0][0] = 1, e->p_minor[0][0] = 0;
    }
    e->p_major[0][1] = 3, e->p_minor[0][1] = 0;
    int y = 0;
    if (replica)
        e->y_major[y] = 1, e->y_minor[y++] = 0;
    e->y_major[y] = 2, e->y_minor[y++] = 0;
    e->y_major[y] = 3, e->y_minor[y++] = 1;
    e->ndim_y = y;
}

/* The descriptor of window `which` over one row's aligned span (plan.span): the row of N
 * elements starts H (0 .. VEC - 1) elements past the span's start, so column c of the span is
 * element c - H of the row, masked outside [0, N) by the pad. Where the window takes 16-byte
 * accesses the window's pointer plus RA, a multiple of VEC, is the span's start (RA + H the
 * row's offset); else RS is the row's offset. */
static ck_status smx_span_window(const smx_plan *p, char which, int wide, ck_op_window *w)
{
    const long long cgv = (long long)p->cluster * p->g * p->vec, padded = (long long)p->nv * cgv;
    const ck_op_sym syms[2] = {{wide ? "RA" : "RS", 0, INT64_C(1) << 40, wide ? p->vec : 1},
                               {"H", 0, p->vec - 1, 1}};
    const char *start = wide ? "RA+H" : "RS";
    char text[320];
    snprintf(text, sizeof text,
             "naive(lengths=[1,%s+%lld], strides=[0,1]) | offset(dim=1, offset=%s, length=%lld) "
             "| pad(dim=1, left=H, right=%lld-H) | unmerge(dim=1, lengths=[%d,%lld])",
             start, p->n, start, p->n, padded - p->n, p->nv, cgv);
    (void)which;
    return ck_op_window_desc(w, text, syms, 2);
}

/* Window `which` over a [R, N] tensor with row stride symbol `stride`. */
static ck_status smx_window(const smx_plan *p, char which, ck_op_window *w)
{
    static const char *const names[3] = {"x", "y", "m"};
    const int i = which == 'x' ? 0 : which == 'y' ? 1 : 2;
    const int type[3] = {p->ti, p->to, p->tm}, wide[3] = {p->wide_x, p->wide_y, p->wide_m};
    const char *stride = i == 0 ? "SX" : i == 1 ? "SY" : "MS", *rows = i == 2 ? "MR" : "rows";
    ck_op_window_init(w, names[i], (ck_dtype)ck_smx_dtype_code(type[i]),
                      i == 1 ? CK_WIN_STORE : CK_WIN_LOAD);
    smx_encoding(p, which, &w->enc);
    const long long cgv = (long long)p->cluster * p->g * p->vec;
    w->spec.origin_align[0] = which == 'm' || p->span ? 1 : p->rows_per_block;
    w->spec.origin_align[1] = which == 'y' ? 1 : p->nv;
    w->spec.origin_align[2] = (long long)p->g * p->vec; /* rank * G * VEC */
    /* past the row end: -inf codes for the raw instance; else the stage writes -inf itself */
    w->spec.fill = i == 0 && p->raw ? (p->ti == 2 ? 0xff80 : 0xfc00) : 0;
    w->spec.read_only = i != 1;
    if (p->span)
        return smx_span_window(p, which, wide[i], w);
    /* a row stride of 16-byte accesses is a multiple of the vector; a mask row may repeat */
    const ck_op_sym syms[2] = {{rows, 1, INT64_C(1) << 40, 1},
                               {stride, i == 2 ? 0 : 1, INT64_C(1) << 40, wide[i] ? p->vec : 1}};
    char text[256], pad[64] = "";
    long long padded = (long long)p->nv * cgv;
    if (padded > p->n)
        snprintf(pad, sizeof pad, " | right_pad(dim=1, right=%lld)", padded - p->n);
    snprintf(text, sizeof text,
             "naive(lengths=[%s,%lld], strides=[%s,1])%s | unmerge(dim=1, lengths=[%d,%lld])",
             rows, p->n, stride, pad, p->nv, cgv);
    return ck_op_window_desc(w, text, syms, 2);
}

ck_status ck_smx_windows(const smx_plan *p, ck_sbuf *b)
{
    static const char *const xargs[4] = {"o0=first", "o2=col0", "rows=rows", "SX=stride"};
    static const char *const yargs[5] = {"o0=first", "o1=round", "o2=col0", "rows=rows",
                                         "SY=stride"};
    static const char *const margs[3] = {"o0=mrow", "o2=col0", "MS=stride"};
    /* spans: the row's offset as RA + H (16-byte accesses) or RS */
    static const char *const sargs[4] = {"o2=col0", "RA=ra", "RS=rs", "H=head"};
    static const char *const syargs[5] = {"o1=round", "o2=col0", "RA=ra", "RS=rs", "H=head"};
    const char which[3] = {'x', 'y', 'm'};
    const char *const *args[3] = {xargs, yargs, margs};
    int nargs[3] = {4, 5, 3};
    if (p->span) {
        args[0] = args[2] = sargs;
        args[1] = syargs;
        nargs[2] = 4;
    }
    for (int i = 0; i < ((p->maskbits & 1) && !p->raw ? 3 : 2); ++i) {
        ck_op_window w;
        ck_status st = smx_window(p, which[i], &w);
        if (!st)
            st = ck_op_window_emit(b, "smx", &w, args[i], nargs[i]);
        ck_op_window_free(&w);
        if (st)
            return ck_fail_context(st, "ck_softmax: window '%c'", which[i]);
    }
    return CK_SUCCESS;
}

ck_status ck_smx_window_spec(const smx_plan *p, char which, ck_op_window *w)
{
    ck_status st = smx_window(p, which, w);
    if (st)
        ck_op_window_free(w);
    return st;
}
