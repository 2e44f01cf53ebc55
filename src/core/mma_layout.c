/*
 * Register layouts of the tensor-core instructions as tile distribution encodings (CK's
 * warp-GEMM attributes): which lane of a warp (mma.sync) or warpgroup (wgmma) holds which
 * element of the A, B and C/D fragments. The formulas are the PTX ISA's (docs/device-tensor.md
 * restates them); the tests re-derive every element from those formulas.
 *
 * Spelling: "<family>.m<M>n<N>k<K>.<acc>[.<in>]", family mma (one warp, m16n8) or wgmma (one
 * warpgroup, m64nN), acc f32 | s32 | f16, in f16 | bf16 | tf32 | e4m3 | e5m2 | s8 | u8.
 */
#include <stdio.h>
#include <string.h>

#include "ck/distribution.h"
#include "core/error.h"

static int parse_type(const char *s, size_t n, const char *const *names, int count)
{
    for (int i = 0; i < count; ++i)
        if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0)
            return i;
    return -1;
}

static const char *const acc_names[] = {"f32", "s32", "f16"};
static const char *const in_names[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"};

ck_status ck_mma_parse(const char *instr, ck_mma_info *info)
{
    static const char *fn = "ck_mma_parse";
    CK_REQUIRE_NOT_NULL(instr, fn);
    CK_REQUIRE_NOT_NULL(info, fn);
    memset(info, 0, sizeof *info);
    info->in = -1;
    const char *p = instr;
    if (strncmp(p, "wgmma.", 6) == 0) {
        info->warpgroup = 1;
        p += 6;
    } else if (strncmp(p, "mma.", 4) == 0) {
        p += 4;
    } else {
        return ck_fail(CK_ERROR_PARSE,
                       "%s: '%s' does not start with 'mma.' or 'wgmma.' (expected e.g. "
                       "'wgmma.m64n256k16.f32.bf16' or 'mma.m16n8k16.f32.f16').",
                       fn, instr);
    }
    int used = 0;
    if (sscanf(p, "m%dn%dk%d%n", &info->m, &info->n, &info->k, &used) != 3 || used == 0)
        return ck_fail(CK_ERROR_PARSE, "%s: '%s' has no shape 'm<M>n<N>k<K>' after the family.",
                       fn, instr);
    p += used;
    if (*p != '.')
        return ck_fail(CK_ERROR_PARSE, "%s: '%s' has no accumulator type after the shape.", fn,
                       instr);
    ++p;
    size_t n = strcspn(p, ".");
    info->acc = parse_type(p, n, acc_names, 3);
    if (info->acc < 0)
        return ck_fail(CK_ERROR_PARSE,
                       "%s: '%s': accumulator type '%.*s' is not one of f32, s32, f16.", fn, instr,
                       (int)n, p);
    p += n;
    if (*p == '.') {
        ++p;
        n = strlen(p);
        info->in = parse_type(p, n, in_names, 7);
        if (info->in < 0)
            return ck_fail(CK_ERROR_PARSE,
                           "%s: '%s': input type '%s' is not one of f16, bf16, tf32, e4m3, e5m2, "
                           "s8, u8.",
                           fn, instr, p);
    }
    if (info->warpgroup) {
        if (info->m != 64 || info->n < 8 || info->n > 256 || info->n % 8 != 0)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: '%s': wgmma shapes are m64nNk* with N a multiple of 8 in 8..256.",
                           fn, instr);
    } else if (info->m != 16 || info->n != 8) {
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: '%s': mma.sync shapes here are m16n8k*.", fn,
                       instr);
    }
    return CK_SUCCESS;
}

/* C/D with f32 or s32 accumulators: mma register r of lane (g, t) is element
 * (g + 8(r>>1), 2t + (r&1)); wgmma register i of warp w is (16w + g + 8((i%4)/2),
 * 8(i/4) + 2t + (i%2)). Both keep a lane's two columns in consecutive registers. */
static void acc32_encoding(const ck_mma_info *mi, ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    if (!mi->warpgroup) {
        /* X0 = [2 (r>>1), 8 (g)], X1 = [4 (t), 2 (r&1)]; P0 = lane = (g, t). */
        e->ndim_h[0] = 2, e->h_lengths[0][0] = 2, e->h_lengths[0][1] = 8;
        e->ndim_h[1] = 2, e->h_lengths[1][0] = 4, e->h_lengths[1][1] = 2;
        e->ndim_p = 1;
        e->p_size[0] = 2;
        e->p_major[0][0] = 1, e->p_minor[0][0] = 1;
        e->p_major[0][1] = 2, e->p_minor[0][1] = 0;
        e->ndim_y = 2;
        e->y_major[0] = 1, e->y_minor[0] = 0;
        e->y_major[1] = 2, e->y_minor[1] = 1;
        return;
    }
    /* X0 = [4 (w), 2 ((i%4)/2), 8 (g)], X1 = [N/8 (i/4), 4 (t), 2 (i%2)];
     * P0 = warp = w, P1 = lane = (g, t); Y = (i/4, (i%4)/2, i%2). */
    e->ndim_h[0] = 3, e->h_lengths[0][0] = 4, e->h_lengths[0][1] = 2, e->h_lengths[0][2] = 8;
    e->ndim_h[1] = 3, e->h_lengths[1][0] = mi->n / 8, e->h_lengths[1][1] = 4;
    e->h_lengths[1][2] = 2;
    e->ndim_p = 2;
    e->p_size[0] = 1;
    e->p_major[0][0] = 1, e->p_minor[0][0] = 0;
    e->p_size[1] = 2;
    e->p_major[1][0] = 1, e->p_minor[1][0] = 2;
    e->p_major[1][1] = 2, e->p_minor[1][1] = 1;
    e->ndim_y = 3;
    e->y_major[0] = 2, e->y_minor[0] = 0;
    e->y_major[1] = 1, e->y_minor[1] = 1;
    e->y_major[2] = 2, e->y_minor[2] = 2;
}

ck_status ck_mma_encoding(const char *instr, ck_mma_operand operand, ck_dist_encoding *enc)
{
    static const char *fn = "ck_mma_encoding";
    CK_REQUIRE_NOT_NULL(enc, fn);
    ck_mma_info mi;
    ck_status st = ck_mma_parse(instr, &mi);
    if (st)
        return st;
    if (operand != CK_MMA_C)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: '%s': only the C/D (accumulator) operand is available so far.", fn,
                       instr);
    if (mi.acc == 2)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: '%s': f16 accumulators are not available so far (f32, s32 are).", fn,
                       instr);
    acc32_encoding(&mi, enc);
    ck_distribution d;
    return ck_dist_make(enc, &d);
}
