/*
 * Register layouts of the tensor-core instructions as tile distribution encodings (CK's
 * warp-GEMM attributes): which lane of a warp (mma.sync) or warpgroup (wgmma) holds which
 * element of the A, B and C/D fragments. The formulas are the PTX ISA's (docs/device-tensor.md
 * restates them); the tests re-derive every element from those formulas.
 *
 * Spelling: "<family>.m<M>n<N>k<K>.<acc>[.<in>]", family mma (one warp, m16n8) or wgmma (one
 * warpgroup, m64nN), acc f32 | s32 | f16, in f16 | bf16 | tf32 | e4m3 | e5m2 | s8 | u8.
 *
 * Each layout is written as the H components of its rows and columns (slowest first) and who
 * owns each: the warp, the lane's group g = lane / 4, its index t = lane % 4, or a Y dim. The
 * Y dims are numbered so that ys_to_d is the register order (the element within a 32-bit
 * register fastest).
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
        return ck_fail(CK_ERROR_PARSE, "%s: '%s' has no shape 'm<M>n<N>k<K>' after the family.", fn,
                       instr);
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

/* ---------------------------------------------------------------- supported instructions */

/* One supported (family, K, accumulator, input) combination. Mixed-input forms (e4m3 x e5m2,
 * s8 x u8) have the layouts of the one-type spelling. */
typedef struct mma_kind {
    const char *spelling; /* wgmma: N spelled "N" */
    int warpgroup, k, acc, in;
} mma_kind;

static const mma_kind kinds[] = {
    {"mma.m16n8k8.f32.f16", 0, 8, 0, 0},      {"mma.m16n8k8.f32.bf16", 0, 8, 0, 1},
    {"mma.m16n8k16.f32.f16", 0, 16, 0, 0},    {"mma.m16n8k16.f32.bf16", 0, 16, 0, 1},
    {"mma.m16n8k8.f16.f16", 0, 8, 2, 0},      {"mma.m16n8k16.f16.f16", 0, 16, 2, 0},
    {"mma.m16n8k8.f32.tf32", 0, 8, 0, 2},     {"mma.m16n8k32.f32.e4m3", 0, 32, 0, 3},
    {"mma.m16n8k32.f32.e5m2", 0, 32, 0, 4},   {"mma.m16n8k32.s32.s8", 0, 32, 1, 5},
    {"mma.m16n8k32.s32.u8", 0, 32, 1, 6},     {"wgmma.m64nNk16.f32.f16", 1, 16, 0, 0},
    {"wgmma.m64nNk16.f32.bf16", 1, 16, 0, 1}, {"wgmma.m64nNk16.f16.f16", 1, 16, 2, 0},
    {"wgmma.m64nNk8.f32.tf32", 1, 8, 0, 2},   {"wgmma.m64nNk32.f32.e4m3", 1, 32, 0, 3},
    {"wgmma.m64nNk32.f32.e5m2", 1, 32, 0, 4}, {"wgmma.m64nNk32.f16.e4m3", 1, 32, 2, 3},
    {"wgmma.m64nNk32.f16.e5m2", 1, 32, 2, 4}, {"wgmma.m64nNk32.s32.s8", 1, 32, 1, 5},
    {"wgmma.m64nNk32.s32.u8", 1, 32, 1, 6},
};
enum { NKINDS = (int)(sizeof kinds / sizeof kinds[0]) };

int ck_mma_spellings(const char **names, int max)
{
    for (int i = 0; names && i < NKINDS && i < max; ++i)
        names[i] = kinds[i].spelling;
    return NKINDS;
}

/* The supported combination matching mi (input omitted: any input with that K and acc). */
static const mma_kind *find_kind(const ck_mma_info *mi)
{
    for (int i = 0; i < NKINDS; ++i)
        if (kinds[i].warpgroup == mi->warpgroup && kinds[i].k == mi->k && kinds[i].acc == mi->acc &&
            (mi->in < 0 || kinds[i].in == mi->in))
            return &kinds[i];
    return NULL;
}

/* ---------------------------------------------------------------- layouts as components */

/* An encoding written as the H components of the two X dims (rows, columns), slowest first,
 * each owned by the warp of the warpgroup (W), the lane's group g = lane / 4 (G), the lane's
 * index in its group t = lane % 4 (T), or Y dim y >= 0. P = (warp,) lane with lane = (g, t). */
enum { OWN_W = -1, OWN_G = -2, OWN_T = -3, END = 0 };
typedef struct comp {
    int len, owner;
} comp;

static ck_status build(const comp *rows, const comp *cols, int warpgroup, ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    int ny = 0, pw = -1, pg = -1, pt = -1, gx = 0, tx = 0, wx = 0;
    for (int x = 0; x < 2; ++x) {
        const comp *c = x == 0 ? rows : cols;
        for (int h = 0; c[h].len != END; ++h) {
            e->h_lengths[x][h] = c[h].len;
            e->ndim_h[x] = h + 1;
            if (c[h].owner == OWN_W)
                wx = x, pw = h;
            else if (c[h].owner == OWN_G)
                gx = x, pg = h;
            else if (c[h].owner == OWN_T)
                tx = x, pt = h;
            else {
                e->y_major[c[h].owner] = x + 1;
                e->y_minor[c[h].owner] = h;
                if (c[h].owner + 1 > ny)
                    ny = c[h].owner + 1;
            }
        }
    }
    e->ndim_y = ny;
    int lane = 0;
    if (warpgroup) {
        e->p_size[0] = 1;
        e->p_major[0][0] = wx + 1, e->p_minor[0][0] = pw;
        lane = 1;
    }
    e->ndim_p = lane + 1;
    e->p_size[lane] = 2;
    e->p_major[lane][0] = gx + 1, e->p_minor[lane][0] = pg;
    e->p_major[lane][1] = tx + 1, e->p_minor[lane][1] = pt;
    ck_distribution d;
    return ck_dist_make(e, &d);
}

/* The A fragment of mma.sync (16 x K), with the warp of the warpgroup as the slowest row
 * component for wgmma's register A (rows 16w .. 16w + 15). Registers hold 32 bits: 2 16-bit,
 * 4 8-bit or 1 tf32 element, the element within a register fastest in Y. */
static ck_status a_fragment(int in, int k, int warpgroup, ck_dist_encoding *e)
{
    comp rows[4] = {{0}}, cols[4] = {{0}};
    int i = 0;
    if (warpgroup)
        rows[i++] = (comp){4, OWN_W};
    if (in == 2) { /* tf32 k8: register r = (g + 8(r&1), t + 4(r>>1)) */
        rows[i] = (comp){2, 1}, rows[i + 1] = (comp){8, OWN_G};
        cols[0] = (comp){2, 0}, cols[1] = (comp){4, OWN_T};
    } else if (in >= 3) { /* 8-bit k32: (g + 8(r&1), 4t + 16(r>>1) + e) */
        rows[i] = (comp){2, 1}, rows[i + 1] = (comp){8, OWN_G};
        cols[0] = (comp){2, 0}, cols[1] = (comp){4, OWN_T}, cols[2] = (comp){4, 2};
    } else if (k == 16) { /* 16-bit k16: (g + 8(r&1), 2t + 8(r>>1) + e) */
        rows[i] = (comp){2, 1}, rows[i + 1] = (comp){8, OWN_G};
        cols[0] = (comp){2, 0}, cols[1] = (comp){4, OWN_T}, cols[2] = (comp){2, 2};
    } else { /* 16-bit k8: (g + 8r, 2t + e) */
        rows[i] = (comp){2, 0}, rows[i + 1] = (comp){8, OWN_G};
        cols[0] = (comp){4, OWN_T}, cols[1] = (comp){2, 1};
    }
    return build(rows, cols, warpgroup, e);
}

/* The B fragment of mma.sync (K x 8). */
static ck_status b_fragment(int in, int k, ck_dist_encoding *e)
{
    comp rows[4] = {{0}}, cols[2] = {{8, OWN_G}, {0}};
    if (in == 2) { /* tf32: register r = (t + 4r, g) */
        rows[0] = (comp){2, 0}, rows[1] = (comp){4, OWN_T};
    } else if (in >= 3) { /* 8-bit: (4t + 16r + e, g) */
        rows[0] = (comp){2, 0}, rows[1] = (comp){4, OWN_T}, rows[2] = (comp){4, 1};
    } else if (k == 16) { /* 16-bit k16: (2t + 8r + e, g) */
        rows[0] = (comp){2, 0}, rows[1] = (comp){4, OWN_T}, rows[2] = (comp){2, 1};
    } else { /* 16-bit k8: (2t + e, g) */
        rows[0] = (comp){4, OWN_T}, rows[1] = (comp){2, 0};
    }
    return build(rows, cols, 0, e);
}

/* C/D: mma element i = (g + 8(i>>1), 2t + (i&1)) (f32/s32: register i; f16: half i&1 of
 * register i>>1); wgmma element i of warp w = (16w + g + 8((i%4)/2), 8(i/4) + 2t + (i%2)). */
static ck_status c_fragment(const ck_mma_info *mi, ck_dist_encoding *e)
{
    if (!mi->warpgroup) {
        const comp rows[] = {{2, 0}, {8, OWN_G}, {0}}, cols[] = {{4, OWN_T}, {2, 1}, {0}};
        return build(rows, cols, 0, e);
    }
    const comp rows[] = {{4, OWN_W}, {2, 1}, {8, OWN_G}, {0}},
               cols[] = {{mi->n / 8, 0}, {4, OWN_T}, {2, 2}, {0}};
    return build(rows, cols, 1, e);
}

ck_status ck_mma_encoding(const char *instr, ck_mma_operand operand, ck_dist_encoding *enc)
{
    static const char *fn = "ck_mma_encoding";
    CK_REQUIRE_NOT_NULL(enc, fn);
    ck_mma_info mi;
    ck_status st = ck_mma_parse(instr, &mi);
    if (st)
        return st;
    if ((int)operand < CK_MMA_A || (int)operand > CK_MMA_C)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: operand = %d; accepted: CK_MMA_A (0), CK_MMA_B (1), CK_MMA_C (2).", fn,
                       (int)operand);
    const mma_kind *kind = find_kind(&mi);
    if (!kind)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: '%s' is not a supported combination of shape, accumulator and input "
                       "type ('ck dist --mma list' lists them).",
                       fn, instr);
    if (operand == CK_MMA_C)
        return c_fragment(&mi, enc);
    if (mi.in < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: '%s' names no input type; the %s operand's layout depends on it "
                       "(append e.g. '.bf16').",
                       fn, instr, operand == CK_MMA_A ? "A" : "B");
    if (operand == CK_MMA_B && mi.warpgroup)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: '%s': wgmma reads B from shared memory through a matrix descriptor; "
                       "it has no register layout (see ck_smem_tile_make for the shared-memory "
                       "tile).",
                       fn, instr);
    if (operand == CK_MMA_A)
        return a_fragment(mi.in, mi.k, mi.warpgroup, enc);
    return b_fragment(mi.in, mi.k, enc);
}
