/*
 * The elementwise problem (ew_internal.h): a destination and its broadcast inputs collapsed into
 * the fewest dimensions every tensor walks alike, and the in-place test. The arguments' checks
 * are those of ck_copy / ck_cast / ck_elementwise (kernel.c). docs/ops-elementwise.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/elementwise.h"
#include "core/error.h"
#include "core/numeric_conv.h"
#include "core/numeric_internal.h"
#include "ops/common/op_common.h"
#include "ops/elementwise/ew_internal.h"

/* Fill l from the destination and broadcast inputs (already checked), dropping length-1
 * dimensions and merging dimension pairs that every tensor walks contiguously. */
void ck_ew_collapse(ew_layout *l, const ck_tensor *dst, const ck_tensor *in, int nin)
{
    memset(l, 0, sizeof *l);
    l->nt = nin + 1;
    l->n = ck_tensor_numel(dst);
    for (int k = 0; k <= nin; ++k) {
        const ck_tensor *t = k < nin ? &in[k] : dst;
        l->data[k] = t->data;
        l->dtype[k] = t->dtype;
    }
    int r = 0;
    for (int d = 0; d < dst->rank; ++d) {
        if (dst->shape[d] == 1)
            continue;
        l->len[r] = dst->shape[d];
        for (int k = 0; k <= nin; ++k) {
            const ck_tensor *t = k < nin ? &in[k] : dst;
            int td = d - (dst->rank - t->rank); /* aligned at the last dimension */
            l->str[k][r] = td < 0 || t->shape[td] == 1 ? 0 : t->strides[td];
        }
        ++r;
    }
    /* merge d-1 and d when, for every tensor, stride[d-1] == stride[d] * len[d] */
    int w = 0;
    for (int d = 0; d < r; ++d) {
        int merge = w > 0;
        for (int k = 0; merge && k <= nin; ++k)
            merge = l->str[k][w - 1] == l->str[k][d] * l->len[d];
        if (merge) {
            l->len[w - 1] *= l->len[d];
            for (int k = 0; k <= nin; ++k)
                l->str[k][w - 1] = l->str[k][d];
        } else {
            l->len[w] = l->len[d];
            for (int k = 0; k <= nin; ++k)
                l->str[k][w] = l->str[k][d];
            ++w;
        }
    }
    if (w == 0) { /* a single element */
        l->len[0] = 1;
        for (int k = 0; k <= nin; ++k)
            l->str[k][0] = 1;
        w = 1;
    }
    l->rank = w;
}

int ck_ew_has_subbyte(const ew_layout *l)
{
    for (int k = 0; k < l->nt; ++k)
        if (ck_ew_elem_bytes(l->dtype[k]) == 0)
            return 1;
    return 0;
}

/* Same pointer and, dimension by dimension, the same strides where the length exceeds 1. */
int ck_ew_same_layout(const ck_tensor *a, const ck_tensor *b)
{
    if (a->data != b->data || a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; ++d)
        if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d]))
            return 0;
    return 1;
}
