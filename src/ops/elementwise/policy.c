/*
 * The elementwise policy (ew_internal.h): the layout (vector packs with their broadcast modes, or
 * strided) and the vector instance (packs per thread, block, waves, streaming stores) for a
 * problem on a device, from the heuristic, the tuning table (`ck tune elementwise`) or the
 * developer switch CK_EW_INSTANCE. docs/ops-elementwise.md.
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

/* The vector layout: the destination contiguous (rank 1, or rank 2 with rows of bn = len[1]
 * elements) with a 16-byte aligned pointer; each input laid out like it (16-byte aligned), a
 * row vector broadcast over the rows (16-byte aligned, bn a multiple of the pack), one value
 * per row, or one value. Fills spec->bmode and *bn. V: elements per pack. */
int ck_ew_vec_ok(const ew_layout *l, int V, ew_spec *spec, int64_t *bn)
{
    int nin = l->nt - 1;
    *bn = 1;
    if (l->rank > 2 || ck_ew_has_subbyte(l) || V <= 0 || (uintptr_t)l->data[nin] % 16u)
        return 0;
    int r2 = l->rank == 2;
    if (l->str[nin][r2] != 1 || (r2 && l->str[nin][0] != l->len[1]))
        return 0;
    if (r2) {
        if (l->len[1] % V)
            return 0;
        *bn = l->len[1];
    }
    for (int k = 0; k < nin; ++k) {
        const int64_t *st = l->str[k];
        int aligned = (uintptr_t)l->data[k] % 16u == 0;
        if (st[r2] == 1 && (!r2 || st[0] == l->len[1]) && aligned)
            spec->bmode[k] = EW_BCAST_NONE;
        else if (r2 && st[0] == 0 && st[1] == 1 && aligned)
            spec->bmode[k] = EW_BCAST_ROW;
        else if (r2 && st[0] == 1 && st[1] == 0)
            spec->bmode[k] = EW_BCAST_COL;
        else if (st[0] == 0 && (!r2 || st[1] == 0))
            spec->bmode[k] = EW_BCAST_SCALAR;
        else
            return 0;
    }
    return 1;
}

/* Blocks for `work` items, per_block each, at most waves x SMs (waves 0: no cap but the
 * grid's limit; the kernels' grid-stride loops cover what one pass does not). */
unsigned ck_ew_grid(ck_context *ctx, int64_t work, int64_t per_block, int waves)
{
    int64_t blocks = (work + per_block - 1) / per_block;
    int64_t cap = waves > 0 ? (int64_t)(ck_op_props(ctx)->multiprocessors > 0
                                            ? ck_op_props(ctx)->multiprocessors
                                            : 1) *
                                  waves
                            : INT32_MAX;
    if (blocks > cap)
        blocks = cap;
    return blocks < 1 ? 1u : (unsigned)blocks;
}

/* The heuristic's vector instance: EW_UNROLL packs per thread in EW_BLOCK threads, one pass. */
static ew_instance default_instance(const ew_spec *spec)
{
    ew_instance in = {EW_UNROLL, EW_BLOCK, EW_WAVES, EW_CS};
    /* Packs whose output is two or more 16-byte words (bf16 -> f32 and other widenings): one
     * pack per thread in 1024-thread blocks (bf16 -> f32 at 94.7% of copy on the H100 against
     * 76% with 4 packs of 256 threads, bench/RESULTS.md). */
    if (spec && ck_ew_vec_elems(spec) * ck_ew_elem_bytes(spec->out) >= 32) {
        in.unroll = EW_WIDE_UNROLL;
        in.block = EW_WIDE_BLOCK;
    }
    return in;
}

int ck_ew_instance_parse(const char *text, ew_instance *in)
{
    int u, bl, w, cs = EW_CS;
    int got = text ? sscanf(text, "%d,%d,%d,%d", &u, &bl, &w, &cs) : 0;
    if (got < 3 || !(u == 1 || u == 2 || u == 4 || u == 8) || bl < 64 || bl > 1024 ||
        (bl & (bl - 1)) || w < 0 || w > 64 || (cs != 0 && cs != 1))
        return 0;
    in->unroll = u;
    in->block = bl;
    in->waves = w;
    in->cs = cs;
    return 1;
}

void ck_ew_instance_name(const ew_instance *in, char *buf, size_t size)
{
    snprintf(buf, size, "%d,%d,%d,%d", in->unroll, in->block, in->waves, in->cs);
}

/* The developer switch CK_EW_INSTANCE="unroll,block,waves[,cs]" (unroll 1/2/4/8, block a power
 * of two 64..1024, waves 0..64, cs 0/1; invalid values are ignored) over the heuristic. */
ew_instance ck_ew_instance(const ew_spec *spec)
{
    ew_instance in = default_instance(spec);
    ck_ew_instance_parse(getenv("CK_EW_INSTANCE"), &in);
    return in;
}

/* FNV-1a over the program's steps: the problem key names the program by this hash. */
static uint64_t program_hash(const ck_ew_program *p)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < p->count; ++i) {
        const ck_ew_step *st = &p->steps[i];
        long long f[3] = {(long long)st->op, st->input, (long long)st->dtype};
        double v = st->value;
        unsigned char b[3 * sizeof(long long) + sizeof(double)];
        memcpy(b, f, sizeof f);
        memcpy(b + sizeof f, &v, sizeof v);
        for (size_t k = 0; k < sizeof b; ++k)
            h = (h ^ b[k]) * 1099511628211ull;
    }
    return h;
}

void ck_ew_problem_key(const ew_spec *s, int64_t n, char *buf, size_t size)
{
    char ins[64] = "";
    size_t len = 0;
    for (int k = 0; k < s->nin && len < sizeof ins; ++k)
        len += (size_t)snprintf(ins + len, sizeof ins - len, "%s%s", k ? "," : "",
                                ck_dtype_name(s->in[k]));
    char what[64], bm[CK_EW_MAX_INPUTS + 1] = "";
    for (int k = 0; k < s->nin; ++k)
        bm[k] = (char)('0' + s->bmode[k]);
    if (s->mode == EW_MODE_CAST)
        snprintf(what, sizeof what, "cast/r=%d/o=%d/s=%a", s->round, s->ovf, (double)s->scale);
    else
        snprintf(what, sizeof what, "expr/f64=%d/p=%016llx", s->f64,
                 (unsigned long long)program_hash(s->prog));
    snprintf(buf, size, "%s>%s/%s/n=%lld/b=%s/alias=%d", ins, ck_dtype_name(s->out), what,
             (long long)n, bm, s->alias);
}

ew_instance ck_ew_instance_for(ck_context *ctx, const ew_spec *spec, const char *problem)
{
    ew_instance in = default_instance(spec);
    char text[64];
    int forced = 0;
    if (ck_op_tuned(ctx, "elementwise", problem, text, sizeof text, &forced) &&
        !ck_ew_instance_parse(text, &in))
        CK_LOG(CK_LOG_WARN,
               "elementwise: tuning-table instance '%s' for %s does not parse; ignored.", text,
               problem);
    if (!forced)
        ck_ew_instance_parse(getenv("CK_EW_INSTANCE"), &in);
    return in;
}
