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

/* Backward data is decomposed as CK does (its YTilde / XTilde split): dX's input index i of
 * residue r = i mod s receives only the taps f with (r + pl - f d) a multiple of s, an arithmetic
 * progression f = f0 + t * ft (ft = s / gcd(s, d)); for i = r + s h the output row is then
 * o = h + c0 - t * os (c0 = (r + pl - f0 d) / s, os = ft d / s). One implicit GEMM per class of
 * residues (one per dim) multiplies no zero of a stride-dilated dY. */
int ck_conv_classes(const ck_conv_prob *q, ck_conv_class *out, int max)
{
    int n = 0;
    for (int64_t r0 = 0; r0 < q->str[0]; ++r0)
        for (int64_t r1 = 0; r1 < q->str[1]; ++r1)
            for (int64_t r2 = 0; r2 < q->str[2]; ++r2) {
                ck_conv_class c;
                int64_t r[3] = {r0, r1, r2};
                for (int d = 0; d < 3; ++d) {
                    int64_t s = q->str[d], dl = q->dil[d], a = s, b = dl;
                    while (b) {
                        int64_t t = a % b;
                        a = b, b = t;
                    }
                    c.r[d] = r[d];
                    c.ft[d] = s / a;
                    c.rows[d] = r[d] < q->in[d] ? (q->in[d] - r[d] + s - 1) / s : 0;
                    c.f0[d] = 0;
                    while (c.f0[d] < q->fil[d] && (r[d] + q->pl[d] - c.f0[d] * dl) % s != 0)
                        ++c.f0[d];
                    c.taps[d] =
                        c.f0[d] < q->fil[d] ? (q->fil[d] - c.f0[d] + c.ft[d] - 1) / c.ft[d] : 0;
                    c.c0[d] = (r[d] + q->pl[d] - c.f0[d] * dl) / s; /* exact when taps > 0 */
                    c.os[d] = c.ft[d] * dl / s;
                }
                if (n < max)
                    out[n] = c;
                ++n;
            }
    return n;
}

int ck_conv_class_work(const ck_conv_class *c)
{
    int rows = 1, taps = 1;
    for (int d = 0; d < 3; ++d)
        rows &= c->rows[d] > 0, taps &= c->taps[d] > 0;
    return !rows ? CK_CONV_CLASS_EMPTY : !taps ? CK_CONV_CLASS_ZERO : CK_CONV_CLASS_COMPUTE;
}

/* Backward data, operand A of class c: dY seen from dX's side, (M, K) = (N * rows, taps * K):
 *   naive  dY[n, o0, o1, o2, k]   (one group)
 *   pad    o_s (left lp, right rp)          valid iff 0 <= o < out
 *   offset o_s + lp = v_s + c0 + lp
 *   embed  (h_s, t_s) -> v_s  coefficients (1, -os)      (a negative coefficient, as in CK)
 *   merge  (n, h0, h1, h2) -> M,  (t0, t1, t2, k) -> K */
ck_status ck_conv_dy_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out)
{
    *out = NULL;
    const int64_t G = q->p.g, K = q->p.k;
    ck_ival len[5] = {I(q->p.n), I(q->out[0]), I(q->out[1]), I(q->out[2]), I(K)};
    ck_ival str[5] = {I(q->out[0] * q->out[1] * q->out[2] * G * K),
                      I(q->out[1] * q->out[2] * G * K), I(q->out[2] * G * K), I(G * K), I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(5, len, str, &d);
    if (st)
        return st;
    ck_transform t[5];
    int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int pass = 0; pass < 2 && !st; ++pass) { /* pad, then offset */
        st = ck_make_pass_through_transform(len[0], &t[0]);
        for (int s = 0; s < 3 && !st; ++s) {
            int64_t lp = c->c0[s] < 0 ? -c->c0[s] : 0;
            int64_t need = c->rows[s] + c->c0[s] + lp, padded = q->out[s] + lp;
            st = pass == 0 ? ck_make_pad_transform(len[1 + s], I(lp),
                                                   I(need > padded ? need - padded : 0), &t[1 + s])
                           : ck_make_offset_transform(I(c->rows[s]), I(c->c0[s] + lp), &t[1 + s]);
        }
        if (!st)
            st = ck_make_pass_through_transform(len[4], &t[4]);
        if (!st)
            st = stage(&d, 5, t, ids, ids);
    }
    /* embed (h_s, t_s) -> v_s: dims n, h0, t0, h1, t1, h2, t2, k */
    if (!st)
        st = ck_make_pass_through_transform(len[0], &t[0]);
    for (int s = 0; s < 3 && !st; ++s) {
        ck_ival el[2] = {I(c->rows[s]), I(c->taps[s])}, ec[2] = {I(1), I(-c->os[s])};
        st = ck_make_embed_signed_transform(2, el, ec, &t[1 + s]);
    }
    if (!st)
        st = ck_make_pass_through_transform(len[4], &t[4]);
    if (!st)
        st = stage(&d, 5, t, ids, ids);
    ck_ival ml[4] = {I(q->p.n), I(c->rows[0]), I(c->rows[1]), I(c->rows[2])};
    ck_ival kl[4] = {I(c->taps[0]), I(c->taps[1]), I(c->taps[2]), I(K)};
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

/* Backward data, operand B of class c: one group's W[k, f0, f1, f2, c] with the class's taps
 * f_s = f0_s + t_s * ft_s (offset, embed), as (t0, t1, t2, k) x C. */
ck_status ck_conv_w_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out)
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
    ck_transform t[5];
    int ids[5] = {0, 1, 2, 3, 4};
    for (int pass = 0; pass < 2 && !st; ++pass) { /* offset f0, then embed t * ft */
        st = ck_make_pass_through_transform(len[0], &t[0]);
        for (int s = 0; s < 3 && !st; ++s) {
            int64_t reach = (c->taps[s] - 1) * c->ft[s] + 1;
            ck_ival el = I(c->taps[s]), ec = I(c->ft[s]);
            st = pass == 0 ? ck_make_offset_transform(I(reach), I(c->f0[s]), &t[1 + s])
                           : ck_make_embed_transform(1, &el, &ec, &t[1 + s]);
        }
        if (!st)
            st = ck_make_pass_through_transform(len[4], &t[4]);
        if (!st)
            st = stage(&d, 5, t, ids, ids);
    }
    ck_ival kl[4] = {I(c->taps[0]), I(c->taps[1]), I(c->taps[2]), len[0]};
    if (!st)
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

/* Backward data, D of class c: one group's dX rows i_s = r_s + s_s h_s (offset, embed), as
 * (n, h0, h1, h2) x C -- the epilogue's store window. */
ck_status ck_conv_dx_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out)
{
    *out = NULL;
    const int64_t G = q->p.g, C = q->p.c;
    ck_ival len[5] = {I(q->p.n), I(q->in[0]), I(q->in[1]), I(q->in[2]), I(C)};
    ck_ival str[5] = {I(q->in[0] * q->in[1] * q->in[2] * G * C), I(q->in[1] * q->in[2] * G * C),
                      I(q->in[2] * G * C), I(G * C), I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(5, len, str, &d);
    if (st)
        return st;
    ck_transform t[5];
    int ids[5] = {0, 1, 2, 3, 4};
    for (int pass = 0; pass < 2 && !st; ++pass) { /* offset r, then embed h * s */
        st = ck_make_pass_through_transform(len[0], &t[0]);
        for (int s = 0; s < 3 && !st; ++s) {
            int64_t reach = (c->rows[s] - 1) * q->str[s] + 1;
            ck_ival el = I(c->rows[s]), ec = I(q->str[s]);
            st = pass == 0 ? ck_make_offset_transform(I(reach), I(c->r[s]), &t[1 + s])
                           : ck_make_embed_transform(1, &el, &ec, &t[1 + s]);
        }
        if (!st)
            st = ck_make_pass_through_transform(len[4], &t[4]);
        if (!st)
            st = stage(&d, 5, t, ids, ids);
    }
    ck_ival ml[4] = {len[0], I(c->rows[0]), I(c->rows[1]), I(c->rows[2])};
    if (!st)
        st = ck_make_merge_transform(4, ml, &t[0]);
    if (!st)
        st = ck_make_pass_through_transform(len[4], &t[1]);
    int low[5] = {0, 1, 2, 3, 4}, up[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low, up);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the backward-data view of dX");
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

/* The sm90 pipeline's MN-major operand tile (what its TMA boxes of 64 elements write): `boxes`
 * boxes of `lines` lines of 128 bytes (one line per k, 64 16-bit elements of M or N), the
 * 16-byte chunks XORed with line % 8; dims (k, mn) with mn = 64 box + element. */
ck_status ck_conv_smem_boxes(int lines, int boxes, int es, ck_descriptor **out)
{
    *out = NULL;
    int epc = 16 / es, per = 8; /* elements per chunk, chunks per line */
    if (lines % 8 || boxes < 1 || es != 2)
        return ck_fail(CK_ERROR_INTERNAL,
                       "ck_conv: no box tile of %d lines, %d boxes of %d-byte elements.", lines,
                       boxes, es);
    /* naive over (box, line_hi, rank, chunk, elem), in elements */
    ck_ival len[5] = {I(boxes), I(lines / 8), I(8), I(per), I(epc)};
    ck_ival str[5] = {I((long long)lines * 128 / es), I(8 * 128 / es), I(128 / es), I(epc), I(1)};
    ck_descriptor *d = NULL;
    ck_status st = ck_descriptor_make_naive(5, len, str, &d);
    if (st)
        return st;
    /* xor: chunk ^= rank */
    ck_transform t[4];
    st = ck_make_pass_through_transform(len[0], &t[0]);
    if (!st)
        st = ck_make_pass_through_transform(len[1], &t[1]);
    if (!st)
        st = ck_make_xor_transform(len[2], len[3], &t[2]);
    if (!st)
        st = ck_make_pass_through_transform(len[4], &t[3]);
    int low[5] = {0, 1, 2, 3, 4}, up[5] = {0, 1, 2, 3, 4};
    if (!st)
        st = stage(&d, 4, t, low, up);
    /* merge (line_hi, rank) -> k, (box, chunk, elem) -> mn */
    ck_ival l1[2] = {len[1], len[2]}, l2[3] = {len[0], len[3], len[4]};
    if (!st)
        st = ck_make_merge_transform(2, l1, &t[0]);
    if (!st)
        st = ck_make_merge_transform(3, l2, &t[1]);
    int low2[5] = {1, 2, 0, 3, 4}, up2[2] = {0, 1};
    if (!st)
        st = stage(&d, 2, t, low2, up2);
    if (st) {
        ck_descriptor_destroy(d);
        return ck_fail_context(st, "ck_conv: the shared-memory box tile descriptor");
    }
    *out = d;
    return CK_SUCCESS;
}
