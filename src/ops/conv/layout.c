/*
 * The NCHW front end of ck_conv (issue 18): PyTorch's layouts -- X as N C spatial, W as
 * K C/G filter ("KCRS"), Y as N K spatial -- taken through the permute op. An execution
 * permutes the tensors the direction reads into CK's layouts (NHWGC, GKYXC, NHWGK) in the
 * context's workspace, runs the kernels there and permutes the tensor it wrote back. The
 * workspace belongs to the context (reused, freed with it): no path of an execution allocates
 * or has anything to free. Channels of the groups are consecutive in both layouts (c = g C + c'),
 * so each conversion is one permutation of the spatial dims against the channel dim:
 *   X, dX  N C S...  <->  N S... C        W, dW  K C' F...  <->  K F... C'
 *   Y, dY  N K S...  <->  N S... K        (S: spatial dims, F: filter dims)
 */
#include <string.h>

#include "ck/permute.h"
#include "ops/common/op_common.h"
#include "ops/conv/conv_internal.h"

#define OP "ck_conv_plan_execute"

/* One tensor of the problem in both layouts: outer (N or K), channels, spatial lengths. */
typedef struct nchw_tensor {
    int64_t outer, chan, sp[3];
    ck_dtype dt;
} nchw_tensor;

/* ck_tensor descriptions of t in NCHW (rank 2 + ndim) and in CK's channels-last form. */
static ck_status describe(const nchw_tensor *t, int ndim, void *nchw, void *ck, ck_tensor *a,
                          ck_tensor *b)
{
    int64_t sa[5] = {t->outer, t->chan}, sb[5] = {t->outer};
    for (int d = 0; d < ndim; ++d)
        sa[2 + d] = sb[1 + d] = t->sp[d];
    sb[1 + ndim] = t->chan;
    ck_status st = ck_tensor_init(a, nchw, t->dt, 2 + ndim, sa, NULL);
    return st ? st : ck_tensor_init(b, ck, t->dt, 2 + ndim, sb, NULL);
}

/* dst (CK's layout) = src (NCHW) when to_ck, else the way back. */
static ck_status convert(ck_context *ctx, const nchw_tensor *t, int ndim, void *nchw, void *ck,
                         int to_ck, const char *name)
{
    ck_tensor a, b;
    int perm[5];
    ck_status st = describe(t, ndim, nchw, ck, &a, &b);
    /* to CK: (0, 2, .., 1+ndim, 1); back: (0, 1+ndim, 1, .., ndim) */
    perm[0] = 0;
    for (int d = 0; d <= ndim; ++d)
        perm[1 + d] = to_ck ? (d < ndim ? 2 + d : 1) : (d == 0 ? 1 + ndim : d);
    if (!st)
        st = to_ck ? ck_permute(ctx, &a, perm, &b) : ck_permute(ctx, &b, perm, &a);
    return st ? ck_fail_context(st, OP ": the NCHW %s", name) : CK_SUCCESS;
}

static size_t elem_bytes(ck_dtype t)
{
    return (size_t)ck_dtype_get(t)->storage_bits / 8;
}

static size_t round256(size_t v)
{
    return (v + 255) / 256 * 256;
}

ck_status ck_conv_plan_execute(ck_conv_plan *plan, const ck_conv_args *a)
{
    if (!plan || !a)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": plan and args must not be NULL.");
    const ck_conv_prob *q = ck_conv_plan_prob(plan);
    const ck_conv_problem *p = &q->p;
    if (p->layout != CK_CONV_LAYOUT_NCHW)
        return ck_conv_execute_ck_layout(plan, a);
    ck_context *ctx = ck_conv_plan_context(plan);
    const int nd = p->ndim, off = 3 - nd;
    nchw_tensor x = {p->n, p->g * p->c, {0}, p->in_dtype};
    nchw_tensor w = {p->g * p->k, p->c, {0}, p->wei_dtype};
    nchw_tensor y = {p->n, p->g * p->k, {0}, p->out_dtype};
    nchw_tensor r = {p->n, p->g * p->k, {0}, p->residual_dtype};
    for (int d = 0; d < nd; ++d) {
        x.sp[d] = q->in[off + d];
        w.sp[d] = q->fil[off + d];
        y.sp[d] = r.sp[d] = q->out[off + d];
    }
    int fwd = p->direction == CK_CONV_FWD, bwd_data = p->direction == CK_CONV_BWD_DATA;
    const char *need[3] = {"x", "w", "y"};
    void *ptr[3] = {a->x, a->w, a->y};
    for (int i = 0; i < 3; ++i)
        if (!ptr[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": %s must not be NULL.", need[i]);
    if (fwd && p->residual && !a->residual)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": residual must not be NULL.");
    size_t bx = round256((size_t)q->x_elems * elem_bytes(x.dt));
    size_t bw = round256((size_t)q->w_elems * elem_bytes(w.dt));
    size_t by = round256((size_t)q->y_elems * elem_bytes(y.dt));
    size_t br = fwd && p->residual ? round256((size_t)q->y_elems * elem_bytes(r.dt)) : 0;
    void *ws = NULL;
    ck_status st = ck_op_workspace(ctx, bx + bw + by + br, &ws);
    if (st)
        return st;
    ck_conv_args in = *a;
    in.x = ws;
    in.w = (char *)ws + bx;
    in.y = (char *)ws + bx + bw;
    if (br)
        in.residual = (char *)ws + bx + bw + by;
    /* the inputs of the direction into CK's layouts */
    if (!bwd_data)
        st = convert(ctx, &x, nd, a->x, in.x, 1, "input x");
    if (!st && p->direction != CK_CONV_BWD_WEIGHT)
        st = convert(ctx, &w, nd, a->w, in.w, 1, "weight w");
    if (!st && !fwd)
        st = convert(ctx, &y, nd, a->y, in.y, 1, "output gradient y (dY)");
    if (!st && br)
        st = convert(ctx, &r, nd, (void *)(uintptr_t)a->residual, (void *)(uintptr_t)in.residual, 1,
                     "residual");
    if (!st)
        st = ck_conv_execute_ck_layout(plan, &in);
    /* the written tensor back */
    if (!st)
        st = fwd        ? convert(ctx, &y, nd, a->y, in.y, 0, "output y")
             : bwd_data ? convert(ctx, &x, nd, a->x, in.x, 0, "input gradient x (dX)")
                        : convert(ctx, &w, nd, a->w, in.w, 0, "weight gradient w (dW)");
    return st;
}
