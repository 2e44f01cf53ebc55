/*
 * The im2col view as ck descriptors (reference 7.15): a naive descriptor of one group's input
 * X[n, i0, i1, i2, c] (G fixed by the base pointer; strides of NHWGC), then
 *   pad    each spatial dim i_d by (pad_left_d, pad_right_d)           (zero outside the input)
 *   embed  (f_d, o_d) onto each padded dim with coefficients (dilation_d, stride_d)
 *   merge  (n, o0, o1, o2) -> M  and  (f0, f1, f2, c) -> K
 * so that element (m, k) of the view is the input element the implicit GEMM multiplies there.
 * Dims of length 1 (the spatial dims a 1-D or 2-D problem does not have) are kept: they fold
 * away in the generated code.
 */
#include <stdio.h>

#include "core/error.h"
#include "ops/conv/conv_internal.h"

#define I(x) ck_ival_int(x)

static ck_status stage(ck_descriptor **cur, int nt, const ck_transform *t, const int *low,
                       const int *up)
{
    ck_descriptor *next = NULL;
    ck_status st = ck_descriptor_transform(*cur, nt, t, low, up, &next);
    ck_descriptor_destroy(*cur);
    *cur = next;
    return st;
}

ck_status ck_conv_im2col_make(const ck_conv_prob *q, ck_descriptor **out)
{
    *out = NULL;
    const int64_t G = q->p.g, C = q->p.c;
    /* dims of X: n, i0, i1, i2, c */
    ck_ival len[5] = {I(q->p.n), I(q->in[0]), I(q->in[1]), I(q->in[2]), I(C)};
    ck_ival str[5] = {I(q->in[0] * q->in[1] * q->in[2] * G * C), I(q->in[1] * q->in[2] * G * C),
                      I(q->in[2] * G * C), I(G * C), I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(5, len, str, &d);
    if (st)
        return st;
    ck_transform t[5];
    int low[8], up[8];
    /* pad: n, ip0, ip1, ip2, c */
    st = ck_make_pass_through_transform(I(q->p.n), &t[0]);
    for (int s = 0; s < 3 && !st; ++s)
        st = ck_make_pad_transform(I(q->in[s]), I(q->pl[s]), I(q->pr[s]), &t[1 + s]);
    if (!st)
        st = ck_make_pass_through_transform(I(C), &t[4]);
    for (int i = 0; i < 5; ++i)
        low[i] = up[i] = i;
    if (!st)
        st = stage(&d, 5, t, low, up);
    /* embed: n -> 0; ip_s -> (f_s, o_s) = (1 + 2s, 2 + 2s); c -> 7 */
    if (!st)
        st = ck_make_pass_through_transform(I(q->p.n), &t[0]);
    for (int s = 0; s < 3 && !st; ++s) {
        ck_ival el[2] = {I(q->fil[s]), I(q->out[s])}, ec[2] = {I(q->dil[s]), I(q->str[s])};
        st = ck_make_embed_transform(2, el, ec, &t[1 + s]);
    }
    if (!st)
        st = ck_make_pass_through_transform(I(C), &t[4]);
    for (int i = 0; i < 8; ++i)
        up[i] = i;
    if (!st)
        st = stage(&d, 5, t, low, up);
    /* merge: (n, o0, o1, o2) -> M, (f0, f1, f2, c) -> K */
    ck_ival ml[4] = {I(q->p.n), I(q->out[0]), I(q->out[1]), I(q->out[2])};
    ck_ival kl[4] = {I(q->fil[0]), I(q->fil[1]), I(q->fil[2]), I(C)};
    if (!st)
        st = ck_make_merge_transform(4, ml, &t[0]);
    if (!st)
        st = ck_make_merge_transform(4, kl, &t[1]);
    int low3[8] = {0, 2, 4, 6, 1, 3, 5, 7}, up3[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low3, up3);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the im2col descriptor");
    }
    *out = d;
    return CK_SUCCESS;
}

/* Backward data, operand A: dY seen from dX's side (CK's transposed-convolution view). For
 * input row h and tap f the output row is o with o * s = h + pl - f * d, so per spatial dim:
 *   dY's o with a dim r of length 1 (stride 0) padded to s (valid only at r = 0),
 *   merge (o, r) -> j = o * s + r        (the stride-dilated output: j valid iff j % s == 0)
 *   pad j to the right                  (valid iff 0 <= j < out * s)
 *   offset v -> j = v + pl
 *   embed (h, f) -> v = h - f * d       (a negative coefficient, as in CK)
 * then merge (n, h...) -> M and (f..., k) -> K. Taps whose j is not a multiple of s read zero:
 * for stride > 1 the GEMM multiplies those zeros (CK's decomposition into s^dims zero-free
 * GEMMs is the next step, docs/ops-conv.md). */
ck_status ck_conv_dy_view_make(const ck_conv_prob *q, ck_descriptor **out)
{
    *out = NULL;
    const int64_t G = q->p.g, K = q->p.k;
    ck_ival len[8], str[8];
    len[0] = I(q->p.n);
    str[0] = I(q->out[0] * q->out[1] * q->out[2] * G * K);
    for (int s = 0; s < 3; ++s) {
        int64_t inner = G * K;
        for (int t = s + 1; t < 3; ++t)
            inner *= q->out[t];
        len[1 + 2 * s] = I(q->out[s]), str[1 + 2 * s] = I(inner);
        len[2 + 2 * s] = I(1), str[2 + 2 * s] = I(0);
    }
    len[7] = I(K), str[7] = I(1);
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(8, len, str, &d);
    if (st)
        return st;
    ck_transform t[8];
    int low[8], up[8];
    for (int i = 0; i < 8; ++i)
        low[i] = up[i] = i;
    /* r_s padded to the stride */
    st = ck_make_pass_through_transform(len[0], &t[0]);
    for (int s = 0; s < 3 && !st; ++s) {
        st = ck_make_pass_through_transform(len[1 + 2 * s], &t[1 + 2 * s]);
        if (!st)
            st = ck_make_pad_transform(I(1), I(0), I(q->str[s] - 1), &t[2 + 2 * s]);
    }
    if (!st)
        st = ck_make_pass_through_transform(len[7], &t[7]);
    if (!st)
        st = stage(&d, 8, t, low, up);
    /* merge (o_s, r_s) -> j_s: dims n, j0, j1, j2, k */
    if (!st)
        st = ck_make_pass_through_transform(len[0], &t[0]);
    for (int s = 0; s < 3 && !st; ++s) {
        ck_ival ml[2] = {I(q->out[s]), I(q->str[s])};
        st = ck_make_merge_transform(2, ml, &t[1 + s]);
    }
    if (!st)
        st = ck_make_pass_through_transform(len[7], &t[4]);
    int lowm[8] = {0, 1, 2, 3, 4, 5, 6, 7}, upm[5] = {0, 1, 2, 3, 4};
    if (!st)
        st = stage(&d, 5, t, lowm, upm);
    /* pad j_s to the right so that every j = h + pl - f d of the view fits; then offset */
    for (int pass = 0; pass < 2 && !st; ++pass) {
        st = ck_make_pass_through_transform(len[0], &t[0]);
        for (int s = 0; s < 3 && !st; ++s) {
            int64_t lj = q->out[s] * q->str[s], need = q->in[s] + q->pl[s];
            st = pass == 0
                     ? ck_make_pad_transform(I(lj), I(0), I(need > lj ? need - lj : 0), &t[1 + s])
                     : ck_make_offset_transform(I(q->in[s]), I(q->pl[s]), &t[1 + s]);
        }
        if (!st)
            st = ck_make_pass_through_transform(len[7], &t[4]);
        if (!st)
            st = stage(&d, 5, t, upm, upm);
    }
    /* embed (h_s, f_s) -> v_s with coefficients (1, -dilation): dims n, h0, f0, h1, f1, h2, f2, k
     */
    if (!st)
        st = ck_make_pass_through_transform(len[0], &t[0]);
    for (int s = 0; s < 3 && !st; ++s) {
        ck_ival el[2] = {I(q->in[s]), I(q->fil[s])}, ec[2] = {I(1), I(-q->dil[s])};
        st = ck_make_embed_transform(2, el, ec, &t[1 + s]);
    }
    if (!st)
        st = ck_make_pass_through_transform(len[7], &t[4]);
    if (!st)
        st = stage(&d, 5, t, upm, lowm);
    /* merge (n, h0, h1, h2) -> M, (f0, f1, f2, k) -> K */
    ck_ival ml[4] = {I(q->p.n), I(q->in[0]), I(q->in[1]), I(q->in[2])};
    ck_ival kl[4] = {I(q->fil[0]), I(q->fil[1]), I(q->fil[2]), I(K)};
    if (!st)
        st = ck_make_merge_transform(4, ml, &t[0]);
    if (!st)
        st = ck_make_merge_transform(4, kl, &t[1]);
    int low3[8] = {0, 1, 3, 5, 2, 4, 6, 7}, up3[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low3, up3);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the backward-data view of dY");
    }
    *out = d;
    return CK_SUCCESS;
}

/* Backward data, operand B: one group's W[k, f0, f1, f2, c] as (f..., k) x c. */
ck_status ck_conv_w_view_make(const ck_conv_prob *q, ck_descriptor **out)
{
    *out = NULL;
    const int64_t C = q->p.c;
    ck_ival len[5] = {I(q->p.k), I(q->fil[0]), I(q->fil[1]), I(q->fil[2]), I(C)};
    ck_ival str[5] = {I(q->fil[0] * q->fil[1] * q->fil[2] * C), I(q->fil[1] * q->fil[2] * C),
                      I(q->fil[2] * C), I(C), I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(5, len, str, &d);
    if (st)
        return st;
    ck_transform t[2];
    ck_ival kl[4] = {len[1], len[2], len[3], len[0]};
    st = ck_make_merge_transform(4, kl, &t[0]);
    if (!st)
        st = ck_make_pass_through_transform(len[4], &t[1]);
    int low[5] = {1, 2, 3, 0, 4}, up[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low, up);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the backward-data view of W");
    }
    *out = d;
    return CK_SUCCESS;
}

ck_status ck_conv_im2col_descriptor(const ck_conv_problem *p, ck_descriptor **out)
{
    if (!out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_im2col_descriptor: out must not be NULL.");
    *out = NULL;
    ck_conv_prob q;
    ck_status st = ck_conv_prob_make(p, &q);
    if (st)
        return st;
    return ck_conv_im2col_make(&q, out);
}

/* gemm_swz: byte (line, b) at line * LB + (b ^ (rank << 4)) with, per 128 bytes of banks,
 * per = min(LB, 128) / 16 chunks and rank = (line / (8 / per)) % per. As transforms: the line
 * split into (line / (8 / per), line % (8 / per)) is not needed when per = 8 (LB >= 128); for
 * LB = 64 or 32 the row index inside 128 bytes and the chunk are xor'ed the same way. Built
 * here as: dims (line, chunk-group, chunk, element) with xor (line-rank, chunk). */
ck_status ck_conv_smem_lines(int lines, int line_bytes, int es, ck_descriptor **out)
{
    *out = NULL;
    int per = line_bytes >= 128 ? 8 : line_bytes / 16;
    int rep = 8 / per; /* consecutive lines sharing one rank */
    int groups = line_bytes / (per * 16), epc = 16 / es;
    if (per < 1 || line_bytes % (per * 16) || lines % (rep * per))
        return ck_fail(CK_ERROR_INTERNAL, "ck_conv: no swizzled tile of %d lines of %d bytes.",
                       lines, line_bytes);
    /* naive over (line_hi, rank, line_lo, group, chunk, elem) */
    ck_ival len[6] = {I(lines / (rep * per)), I(per), I(rep), I(groups), I(per), I(epc)};
    ck_ival str[6] = {I((long long)rep * per * line_bytes / es),
                      I((long long)rep * line_bytes / es),
                      I(line_bytes / es),
                      I(per * 16 / es),
                      I(16 / es),
                      I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(6, len, str, &d);
    if (st)
        return st;
    /* xor: chunk ^= rank (rank < per, chunk < per) */
    ck_transform t[6];
    st = ck_make_pass_through_transform(len[0], &t[0]);
    if (!st)
        st = ck_make_xor_transform(len[1], len[4], &t[1]);
    if (!st)
        st = ck_make_pass_through_transform(len[2], &t[2]);
    if (!st)
        st = ck_make_pass_through_transform(len[3], &t[3]);
    if (!st)
        st = ck_make_pass_through_transform(len[5], &t[4]);
    int low[6] = {0, 1, 4, 2, 3, 5}, up[6] = {0, 1, 4, 2, 3, 5};
    if (!st)
        st = stage(&d, 5, t, low, up);
    /* merge (line_hi, rank, line_lo) -> line, (group, chunk, elem) -> element */
    ck_ival l1[3] = {len[0], len[1], len[2]}, l2[3] = {len[3], len[4], len[5]};
    if (!st)
        st = ck_make_merge_transform(3, l1, &t[0]);
    if (!st)
        st = ck_make_merge_transform(3, l2, &t[1]);
    int low2[6] = {0, 1, 2, 3, 4, 5}, up2[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low2, up2);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the shared-memory tile descriptor");
    }
    *out = d;
    return CK_SUCCESS;
}
