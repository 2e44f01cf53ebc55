/*
 * Shuffle of a tile between two distributions through shared memory (CK's shuffle_tile): the
 * shared-memory layout is chosen by the access verifier among candidates, then both passes are
 * ordinary generated windows over that layout's descriptor (window_gen.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "gen/window_gen.h"

enum { MAX_CANDIDATES = 8 };

typedef struct candidate {
    ck_descriptor *desc;
    char layout[64];
    long long ways, ways_min, space;
} candidate;

/* Row-major with the row stride (dim n-2) padded by `pad` elements. */
static ck_status make_padded(const ck_distribution *d, long long pad, ck_descriptor **out)
{
    int n = d->enc.ndim_x;
    ck_ival len[CK_DIST_MAX_X], str[CK_DIST_MAX_X];
    long long s = 1;
    for (int i = n - 1; i >= 0; --i) {
        len[i] = ck_ival_int(d->x_lengths[i]);
        str[i] = ck_ival_int(s);
        s *= d->x_lengths[i] + (i == n - 1 ? pad : 0);
    }
    return ck_descriptor_make_naive(n, len, str, out);
}

/* Row-major whose 16-byte chunks of each row are XOR-swizzled with the row index: dims
 * (rows, cols) -> (rows, chunk, e) unmerged, chunk' = chunk ^ (row mod chunks), merged back.
 * Only for 2-D tiles whose chunk count is a power of two > 1. */
static ck_status make_xor(const ck_distribution *d, int ebytes, ck_descriptor **out)
{
    *out = NULL;
    if (d->enc.ndim_x != 2)
        return CK_SUCCESS;
    long long rows = d->x_lengths[0], cols = d->x_lengths[1], v = 16 / ebytes;
    if (v < 1 || cols % v)
        return CK_SUCCESS;
    long long chunks = cols / v;
    if (chunks < 2 || (chunks & (chunks - 1)))
        return CK_SUCCESS;
    ck_ival l3[3] = {ck_ival_int(rows), ck_ival_int(chunks), ck_ival_int(v)};
    ck_descriptor *p = NULL, *x = NULL;
    ck_transform t[2];
    ck_status st = ck_descriptor_make_packed(3, l3, &p);
    if (!st)
        st = ck_make_xor_transform(l3[0], l3[1], &t[0]);
    if (!st)
        st = ck_make_pass_through_transform(l3[2], &t[1]);
    if (!st)
        st = ck_descriptor_transform(p, 2, t, (int[]){0, 1, 2}, (int[]){0, 1, 2}, &x);
    if (!st)
        st = ck_make_merge_transform(2, &l3[1], &t[0]);
    if (!st)
        st = ck_make_pass_through_transform(l3[0], &t[1]);
    if (!st)
        st = ck_descriptor_transform(x, 2, (ck_transform[]){t[1], t[0]}, (int[]){0, 1, 2},
                                     (int[]){0, 1}, out);
    ck_descriptor_destroy(p);
    ck_descriptor_destroy(x);
    return st;
}

static ck_status score(const ck_distribution *a, const ck_distribution *b, ck_dtype dtype,
                       candidate *c)
{
    ck_access_report r;
    c->ways = c->ways_min = 0;
    for (int pass = 0; pass < 2; ++pass) {
        ck_status st =
            ck_access_check_desc(pass ? b : a, c->desc, dtype, 0, CK_NV_SWIZZLE_NONE, NULL, &r);
        if (st)
            return st;
        c->ways += r.bank_ways_total;
        c->ways_min += r.bank_ways_min_total;
        ck_access_report_free(&r);
    }
    c->space = ck_descriptor_element_space_size(c->desc).v;
    return CK_SUCCESS;
}

ck_status ck_tile_shuffle_generate(const ck_tile_shuffle_spec *spec, char **source,
                                   ck_tile_shuffle_info *info)
{
    CK_REQUIRE_NOT_NULL(spec, "ck_tile_shuffle_generate");
    CK_REQUIRE_NOT_NULL(source, "ck_tile_shuffle_generate");
    *source = NULL;
    if (!spec->name || strlen(spec->name) > 32 || !spec->src || !spec->dst)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_shuffle_generate: spec->name (a C identifier of at most 32 "
                       "characters), spec->src and spec->dst must be given.");
    ck_distribution a, b;
    ck_status st = ck_dist_make(spec->src, &a);
    if (!st)
        st = ck_dist_make(spec->dst, &b);
    if (st)
        return st;
    int same = a.enc.ndim_x == b.enc.ndim_x;
    for (int i = 0; same && i < a.enc.ndim_x; ++i)
        same = a.x_lengths[i] == b.x_lengths[i];
    if (!same)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_shuffle_generate: shuffle \"%s\": spec->src and spec->dst "
                       "distribute tiles of different X lengths; they must be equal.",
                       spec->name);
    int eb;
    const char *T = ck_gen_ctype(spec->dtype, &eb);
    if (!T)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_shuffle_generate: shuffle \"%s\": element type %d is not "
                       "supported.",
                       spec->name, (int)spec->dtype);
    candidate c[MAX_CANDIDATES];
    int nc = 0;
    memset(c, 0, sizeof c);
    static const long long pads[] = {0, 1, 2, 4, 8};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0] && !st; ++i) {
        long long pad = pads[i] * (i ? (eb >= 4 ? 1 : 4 / eb) : 1);
        if (i && a.enc.ndim_x < 2)
            break;
        st = make_padded(&a, pad, &c[nc].desc);
        if (!st) {
            if (pad)
                snprintf(c[nc].layout, sizeof c[nc].layout, "padded rows (+%lld)", pad);
            else
                snprintf(c[nc].layout, sizeof c[nc].layout, "row-major");
            ++nc;
        }
    }
    if (!st) {
        st = make_xor(&a, eb, &c[nc].desc);
        if (!st && c[nc].desc)
            snprintf(c[nc++].layout, sizeof c[0].layout, "xor 16-byte chunks");
    }
    for (int i = 0; i < nc && !st; ++i) {
        st = score(&a, &b, spec->dtype, &c[i]);
        if (st && i > 0) { /* a candidate the verifier cannot judge is not taken */
            ck_clear_error();
            st = CK_SUCCESS;
            c[i].ways = INT64_MAX;
        }
    }
    int best = 0;
    for (int i = 1; i < nc && !st; ++i)
        if (c[i].ways < c[best].ways || (c[i].ways == c[best].ways && c[i].space < c[best].space))
            best = i;
    char *win = NULL;
    ck_sbuf out = {0};
    char nin[48], nout[48];
    snprintf(nin, sizeof nin, "%s_in", spec->name);
    snprintf(nout, sizeof nout, "%s_out", spec->name);
    ck_tile_window_spec w[2];
    memset(w, 0, sizeof w);
    for (int k = 0; k < 2 && !st; ++k) {
        w[k].name = k ? nout : nin;
        w[k].desc = c[best].desc;
        w[k].enc = k ? spec->dst : spec->src;
        w[k].dtype = spec->dtype;
        w[k].ops = k ? CK_WIN_LOAD : CK_WIN_STORE;
        for (int i = 0; i < a.enc.ndim_x; ++i)
            w[k].origin_align[i] = a.x_lengths[i];
        st = ck_tile_window_generate(&w[k], &win);
        if (!st)
            ck_sbuf_printf(&out, "%s", win);
        free(win);
        win = NULL;
    }
    if (!st) {
        const char *n = spec->name;
        ck_sbuf_printf(&out,
                       "/* ---- shuffle \"%s\": shared-memory layout %s, chosen by the "
                       "access verifier (bank-conflict ways %lld, minimum %lld; "
                       "row-major %lld) ---- */\n",
                       n, c[best].layout, c[best].ways, c[best].ways_min, c[0].ways);
        ck_sbuf_printf(&out, "#define CK_SHUFFLE_SMEM_%s %lld\n", n, c[best].space);
        ck_sbuf_printf(&out,
                       "CK_DEVICE void shuffle_%s(%s *dst_regs, const %s *src_regs, %s *smem)\n"
                       "{\n    ck_win_%s wi = make_win_%s(smem",
                       n, T, T, T, nin, nin);
        for (int i = 0; i < a.enc.ndim_x; ++i)
            ck_sbuf_printf(&out, ", 0");
        ck_sbuf_printf(&out, ");\n    ck_win_%s wo = make_win_%s(smem", nout, nout);
        for (int i = 0; i < a.enc.ndim_x; ++i)
            ck_sbuf_printf(&out, ", 0");
        ck_sbuf_printf(&out,
                       ");\n    store_%s(src_regs, &wi);\n    ck_sync_threads();\n"
                       "    load_%s(dst_regs, &wo);\n    ck_sync_threads();\n}\n\n",
                       nin, nout);
        if (out.oom)
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_tile_shuffle_generate: out of memory.");
    }
    if (!st && info) {
        memset(info, 0, sizeof *info);
        snprintf(info->layout, sizeof info->layout, "%s", c[best].layout);
        info->smem_elements = c[best].space;
        info->bank_ways_total = c[best].ways;
        info->bank_ways_min_total = c[best].ways_min;
        info->row_major_bank_ways_total = c[0].ways;
    }
    for (int i = 0; i < nc; ++i)
        ck_descriptor_destroy(c[i].desc);
    if (st) {
        free(out.s);
        return st;
    }
    *source = out.s;
    return CK_SUCCESS;
}
