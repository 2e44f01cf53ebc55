/*
 * The layernorm / RMSNorm forward's tile windows (norm_internal.h): the read stage's x,
 * residual and residual_out accesses as windows generated from a descriptor of the [rows, N]
 * tensor and the instance's distribution of the block's row-group tile (CK_NORM_WINDOW=1;
 * norm_fwd_window_kernel.h is the stage that calls them). The generation itself is the ops'
 * common part (src/ops/common/op_window.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_window.h"
#include "ops/norm/norm_internal.h"

/* Window `name` of the instance over a [rows, N] tensor with row stride symbol `stride`. */
static ck_status norm_window(int64_t n, const ck_norm_instance *in, const char *name, int dtype,
                             const char *stride, ck_op_window *w)
{
    ck_op_window_init(w, name, (ck_dtype)dtype, CK_WIN_LOAD);
    ck_dist_encoding *enc = &w->enc;
    /* P0 = (row of the group, lane), Y = (round, element): X1 = (round, lane, element) */
    enc->ndim_x = 2;
    enc->ndim_h[0] = 1;
    enc->h_lengths[0][0] = in->block / in->g;
    enc->ndim_h[1] = 3;
    enc->h_lengths[1][0] = in->iters;
    enc->h_lengths[1][1] = in->g;
    enc->h_lengths[1][2] = in->vec;
    enc->ndim_p = 1;
    enc->p_size[0] = 2;
    enc->p_major[0][0] = 1, enc->p_minor[0][0] = 0;
    enc->p_major[0][1] = 2, enc->p_minor[0][1] = 1;
    enc->ndim_y = 2;
    enc->y_major[0] = 2, enc->y_minor[0] = 0;
    enc->y_major[1] = 2, enc->y_minor[1] = 2;
    w->spec.origin_align[0] = in->block / in->g; /* the row group's first row */
    w->spec.origin_align[1] = (long long)in->iters * in->g * in->vec; /* column 0 */
    w->spec.fill = 0; /* past the last row or the row end: zeros (count for nothing) */
    w->spec.read_only = 1;
    /* the problem's vector width divides every row stride (16-byte rows) */
    const ck_op_sym syms[2] = {{"rows", 1, INT64_C(1) << 40, 1},
                               {stride, in->vec, INT64_C(1) << 40, in->vec}};
    char text[160];
    snprintf(text, sizeof text, "naive(lengths=[rows,%lld], strides=[%s,1])", (long long)n,
             stride);
    return ck_op_window_desc(w, text, syms, 2);
}

ck_status ck_norm_window_spec(int64_t n, const ck_norm_instance *in, const char *name,
                              int dtype, const char *stride, ck_dist_encoding *enc,
                              ck_tile_window_spec *w)
{
    ck_op_window ow;
    ck_status st = norm_window(n, in, name, dtype, stride, &ow);
    if (st) {
        ck_op_window_free(&ow);
        return ck_fail_context(st, "norm: window '%s'", name);
    }
    *enc = ow.enc;
    *w = ow.spec;
    w->enc = enc;
    return CK_SUCCESS;
}

void ck_norm_window_spec_free(ck_tile_window_spec *w)
{
    ck_descriptor_destroy((ck_descriptor *)w->desc);
    ck_expr_arena_destroy(w->ctx);
    w->desc = NULL;
    w->ctx = NULL;
}

ck_status ck_norm_fwd_windows(const ck_norm_fwd_problem *p, const ck_norm_instance *in, ck_sbuf *b)
{
    static const char *const names[3] = {"x", "r", "ro"}, *const strides[3] = {"SX", "SR", "SO"};
    const int types[3] = {p->xt, p->rt >= 0 ? p->rt : p->xt, p->ot >= 0 ? p->ot : p->xt};
    for (int i = 0; i < 3; ++i) {
        ck_op_window w;
        ck_status st = norm_window(p->n, in, names[i], types[i], strides[i], &w);
        char stride_arg[16];
        snprintf(stride_arg, sizeof stride_arg, "%s=stride", strides[i]);
        const char *args[3] = {"o0=base", stride_arg, "rows=rows"};
        w.spec.ops = i < 2 ? CK_WIN_LOAD : CK_WIN_STORE;
        if (!st)
            st = ck_op_window_emit(b, "norm", &w, args, 3);
        ck_op_window_free(&w);
        if (st)
            return ck_fail_context(st, "norm: window '%s'", names[i]);
    }
    return CK_SUCCESS;
}

char *ck_norm_fwd_window_source(const ck_norm_fwd_problem *p, const ck_norm_instance *in)
{
    ck_sbuf b = {0};
    if (ck_norm_fwd_windows(p, in, &b) != CK_SUCCESS || b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
