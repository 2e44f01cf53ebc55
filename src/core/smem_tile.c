/*
 * Shared-memory operand tiles of the tensor-core instructions as tensor descriptors: the
 * canonical layouts of wgmma matrix descriptors and TMA boxes (docs/device-tensor.md), built
 * from transforms. A tile has a contiguous dim (16-byte chunks of consecutive elements) and a
 * strided dim (rows of the pattern):
 *
 *   swizzled (span S = 32/64/128 bytes): byte = (s%8)*S + (s/8)*G + cb%S + (cb/S)*P, then the
 *       16-byte chunk index within the span XOR-ed with the 128-byte line within the pattern;
 *   none (8 x 16-byte core matrices):    byte = (s%8)*16 + (s/8)*G + cb%16 + (cb/16)*P,
 *
 * with s the strided index, cb the contiguous index in bytes, G the stride of 8-row groups and
 * P that of spans (chunks). As transforms: the strided dim merges (groups, line, row in line),
 * the contiguous dim merges (spans, chunk, element in chunk); an xor transform swaps the chunk
 * for chunk ^ line; a naive descriptor places the six digits. The swizzle is that of the
 * absolute address, so the tile's base must be aligned to the pattern (2^(7+b) bytes).
 */
#include <string.h>

#include "ck/tile.h"
#include "core/error.h"

static const char *const FN = "ck_smem_tile_make";

static ck_status resolve(ck_smem_tile *t)
{
    const int eb = t->elem_bytes;
    if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: elem_bytes = %d; accepted: 1, 2, 4, 8.", FN,
                       eb);
    if ((int)t->swizzle < CK_NV_SWIZZLE_NONE || (int)t->swizzle > CK_NV_SWIZZLE_128B)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: swizzle = %d; accepted: none (0), 32B (1), 64B (2), 128B (3).", FN,
                       (int)t->swizzle);
    if (t->contiguous_dim != 0 && t->contiguous_dim != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: contiguous_dim = %d; accepted: 0 (rows contiguous) or 1 (columns "
                       "contiguous).",
                       FN, t->contiguous_dim);
    if (t->rows < 1 || t->cols < 1 || t->rows > (1 << 16) || t->cols > (1 << 16))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the tile is %d x %d; each side must be 1 to 65536.", FN, t->rows,
                       t->cols);
    const int b = (int)t->swizzle;
    const long long span = b ? 16LL << b : 16, pattern = b ? 128LL << b : 16;
    const long long clen = t->contiguous_dim ? t->cols : t->rows,
                    slen = t->contiguous_dim ? t->rows : t->cols;
    if ((clen * eb) % span)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the contiguous dim holds %lld bytes (%lld elements of %d bytes); it "
                       "must be a multiple of the %lld-byte %s.",
                       FN, clen * eb, clen, eb, span, b ? "swizzle span" : "core-matrix row");
    if (slen % 8)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the strided dim has length %lld; it must be a multiple of 8 (rows of "
                       "the 8-row pattern).",
                       FN, slen);
    const long long spans = clen * eb / span, groups = slen / 8;
    const long long group_bytes = b ? 8 * span : 128; /* one 8-row group of one span */
    if (t->group_stride_bytes == 0 && t->span_stride_bytes == 0) {
        /* dense: swizzled spans outermost (one TMA box per span); core matrices along the
         * contiguous dim adjacent */
        t->group_stride_bytes = b ? group_bytes : spans * group_bytes;
        t->span_stride_bytes = b ? groups * group_bytes : group_bytes;
    }
    if (t->group_stride_bytes <= 0 || t->span_stride_bytes <= 0 ||
        t->group_stride_bytes % pattern || t->span_stride_bytes % pattern ||
        t->group_stride_bytes > (1LL << 24) || t->span_stride_bytes > (1LL << 24))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: group_stride_bytes = %lld and span_stride_bytes = %lld must both be "
                       "positive multiples of %lld bytes (the swizzle pattern) up to 2^24, or "
                       "both 0 for the dense layout.",
                       FN, t->group_stride_bytes, t->span_stride_bytes, pattern);
    t->span_bytes = (int)span;
    t->align_bytes = pattern < 16 ? 16 : pattern;
    long long last = (groups - 1) * t->group_stride_bytes + (spans - 1) * t->span_stride_bytes;
    t->bytes = last + group_bytes;
    return CK_SUCCESS;
}

ck_status ck_smem_tile_make(ck_smem_tile *t, ck_descriptor **out)
{
    CK_REQUIRE_NOT_NULL(t, FN);
    CK_REQUIRE_NOT_NULL(out, FN);
    *out = NULL;
    ck_status st = resolve(t);
    if (st)
        return st;
    const int b = (int)t->swizzle, eb = t->elem_bytes;
    const long long span = t->span_bytes;
    const long long clen = t->contiguous_dim ? t->cols : t->rows,
                    slen = t->contiguous_dim ? t->rows : t->cols;
    /* digits: strided (group, line, row in line), contiguous (span, chunk, element) */
    const long long lines = 1LL << b, rows_per_line = 8 / lines;
    const long long len[6] = {slen / 8, lines, rows_per_line, clen * eb / span, span / 16, 16 / eb};
    const long long stride[6] = {t->group_stride_bytes / eb, 128 / eb, span / eb,
                                 t->span_stride_bytes / eb,  16 / eb,  1};
    ck_ival L[6], S[6];
    for (int i = 0; i < 6; ++i)
        L[i] = ck_ival_int(len[i]), S[i] = ck_ival_int(stride[i]);
    if (!b) /* no lines: the row in the group is one digit of stride 16 bytes */
        S[2] = ck_ival_int(16 / eb);
    ck_descriptor *naive = NULL, *xored = NULL;
    if ((st = ck_descriptor_make_naive(6, L, S, &naive)))
        return ck_fail_context(st, "%s", FN);
    ck_transform tr[6];
    int low[8], up[8], n = 0, k = 0;
    /* stage 1: chunk' = chunk ^ line (identity for no swizzle: lines = 1) */
    for (int i = 0; i < 6 && !st; ++i) {
        if (i == 1) {
            st = ck_make_xor_transform(L[1], L[4], &tr[n++]);
            low[k] = 1, up[k++] = 1, low[k] = 4, up[k++] = 4;
        } else if (i != 4) {
            st = ck_make_pass_through_transform(L[i], &tr[n++]);
            low[k] = i, up[k++] = i;
        }
    }
    if (!st)
        st = ck_descriptor_transform(naive, n, tr, low, up, &xored);
    ck_descriptor_destroy(naive);
    if (st)
        return ck_fail_context(st, "%s", FN);
    /* stage 2: strided index = merge(group, line, row in line), contiguous = merge(span,
     * chunk, element) */
    const int sdim = t->contiguous_dim ? 0 : 1;
    int low2[6] = {0, 1, 2, 3, 4, 5}, up2[2] = {sdim, 1 - sdim};
    if ((st = ck_make_merge_transform(3, L, &tr[0])) ||
        (st = ck_make_merge_transform(3, L + 3, &tr[1])) ||
        (st = ck_descriptor_transform(xored, 2, tr, low2, up2, out)))
        st = ck_fail_context(st, "%s", FN);
    ck_descriptor_destroy(xored);
    return st;
}

ck_status ck_smem_tile_wgmma_offsets(const ck_smem_tile *t, int k_dim, long long *lbo,
                                     long long *sbo)
{
    static const char *fn = "ck_smem_tile_wgmma_offsets";
    CK_REQUIRE_NOT_NULL(t, fn);
    CK_REQUIRE_NOT_NULL(lbo, fn);
    CK_REQUIRE_NOT_NULL(sbo, fn);
    if (k_dim != 0 && k_dim != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: k_dim = %d; accepted: 0 or 1.", fn, k_dim);
    ck_smem_tile r = *t;
    ck_status st = resolve(&r);
    if (st)
        return ck_fail_context(st, "%s", fn);
    const int k_major = r.contiguous_dim == k_dim;
    if (k_major) { /* none: (kb/16)*LBO, (mn/8)*SBO; swizzled: (mn/8)*SBO, LBO unused */
        *lbo = r.swizzle ? 16 : r.span_stride_bytes;
        *sbo = r.group_stride_bytes;
    } else { /* none: (mb/16)*SBO, (k/8)*LBO; swizzled: (mb/S)*LBO, (k/8)*SBO */
        *lbo = r.swizzle ? r.span_stride_bytes : r.group_stride_bytes;
        *sbo = r.swizzle ? r.group_stride_bytes : r.span_stride_bytes;
    }
    return CK_SUCCESS;
}
