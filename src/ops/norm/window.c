/*
 * The layernorm / RMSNorm forward's tile windows (norm_internal.h): the read stage's x,
 * residual and residual_out accesses as windows generated from a descriptor of the [rows, N]
 * tensor and the instance's distribution of the block's row-group tile (CK_NORM_WINDOW=1;
 * norm_fwd_window_kernel.h is the stage that calls them).
 */
#include <string.h>

#include "core/error.h"
#include "ops/norm/norm_internal.h"

ck_status ck_norm_window_spec(int64_t n, const ck_norm_instance *in, const char *name,
                              int dtype, const char *stride, ck_dist_encoding *enc,
                              ck_tile_window_spec *w)
{
    memset(w, 0, sizeof *w);
    memset(enc, 0, sizeof *enc);
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
    ck_expr_arena *ctx = NULL;
    ck_descriptor *desc = NULL;
    ck_ival rows, ld;
    ck_status st = ck_expr_arena_create(&ctx);
    if (!st)
        st = ck_expr_symbol(ctx, "rows", 1, INT64_C(1) << 40, 1, &rows);
    if (!st) /* the problem's vector width divides every row stride (16-byte rows) */
        st = ck_expr_symbol(ctx, stride, in->vec, INT64_C(1) << 40, in->vec, &ld);
    if (!st) {
        ck_ival len[2] = {rows, ck_ival_int(n)}, str[2] = {ld, ck_ival_int(1)};
        st = ck_descriptor_make_naive(2, len, str, &desc);
    }
    if (st) {
        ck_expr_arena_destroy(ctx);
        return ck_fail_context(st, "norm: window '%s'", name);
    }
    w->name = name;
    w->desc = desc;
    w->ctx = ctx;
    w->enc = enc;
    w->dtype = (ck_dtype)dtype;
    w->origin_align[0] = in->block / in->g; /* the row group's first row */
    w->origin_align[1] = (long long)in->iters * in->g * in->vec; /* column 0 */
    w->fill = 0; /* past the last row or the row end: zeros (count for nothing) */
    w->read_only = 1;
    return CK_SUCCESS;
}

void ck_norm_window_spec_free(ck_tile_window_spec *w)
{
    ck_descriptor_destroy((ck_descriptor *)w->desc);
    ck_expr_arena_destroy(w->ctx);
    w->desc = NULL;
    w->ctx = NULL;
}
