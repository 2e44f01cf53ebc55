/*
 * Copy windows (see ck/tile_kernel.h): a tile copied from a source tensor in global memory into
 * a shared-memory tile without passing through registers, with cp.async. The two sides are
 * analysed as two windows of the same distribution (window_gen.c: per register, a symbolic
 * offset and the conditions of its validity); the vector is the widest run of registers along
 * one Y dim that both sides prove contiguous and aligned. Every access is then one cp.async of
 * 16 bytes (.cg: the src-size operand zero-fills the part of a vector past the source's edge),
 * of 8 or 4 bytes (.ca; a vector that is not wholly valid is written element by element), or,
 * where no 4-byte vector is provable, plain element loads and stores.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/affine.h"
#include "gen/window_gen.h"

static const char *const FN = "ck_tile_copy_generate";

typedef struct copy_gen {
    const ck_tile_copy_spec *spec;
    ck_tile_window_spec ws, wd; /* the source and destination windows */
    char sname[48], dname[48];
    ck_gen s, d;
    int vdim, w, bytes, async;
    ck_sfc sfc;
    char reason[256];
    int masked;
} copy_gen;

static ck_status oom(void)
{
    return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_tile_copy_generate: out of memory.");
}

static long long gcd_ll(long long a, long long b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The alignment in bytes (a power of two, at most the 16 of the base pointers) proven for the
 * first element of every run of w registers along Y dim v. */
static int vector_align(const ck_gen *g, int v, int w)
{
    long long a = 0;
    for (long long r = 0; r < g->nregs; ++r) {
        int y[CK_DIST_MAX_Y] = {0};
        ck_dist_d_to_ys(&g->dist, r, y);
        if (y[v] % w)
            continue;
        ck_ival off = g->regs[r].offset;
        a = gcd_ll(a, (ck_ival_is_const(off) ? off.v : ck_ival_divisor(off)) * g->ebytes);
    }
    int al = 16;
    while (al > 1 && a % al)
        al /= 2;
    return al;
}

/* Whether vectors of w registers along Y dim v are contiguous and aligned on both sides; if
 * not, why (a clause) in why[n]. */
static int vector_ok(const copy_gen *c, int v, int w, char *why, size_t n)
{
    const char *side[2] = {"source", "destination (the shared tile)"};
    const ck_gen *g[2] = {&c->s, &c->d};
    if (c->s.dist.y_lengths[v] % w) {
        snprintf(why, n, "Y%d has %d elements, not a multiple of %d", v, c->s.dist.y_lengths[v], w);
        return 0;
    }
    for (int k = 0; k < 2; ++k)
        if (!ck_gen_run_ok(g[k], v, w)) {
            snprintf(why, n, "the %s's runs of %d elements along Y%d are not contiguous in memory",
                     side[k], w, v);
            return 0;
        }
    for (int k = 0; k < 2; ++k) {
        int al = vector_align(g[k], v, w);
        if (al < w * g[k]->ebytes) {
            snprintf(why, n,
                     "the %s's vectors along Y%d start at offsets proven multiples of %d "
                     "byte%s only (strides, sizes and origin alignments), not of %d",
                     side[k], v, al, al == 1 ? "" : "s", w * g[k]->ebytes);
            return 0;
        }
    }
    return 1;
}

static ck_status choose_vector(copy_gen *c)
{
    const ck_distribution *d = &c->s.dist;
    const int ny = d->enc.ndim_y, eb = c->s.ebytes, req = c->spec->vector_bytes;
    c->vdim = ny - 1;
    c->w = 1;
    c->reason[0] = '\0';
    if (req) {
        int wr = req / eb, found = 0;
        char why[200] = "";
        if (ny == 0)
            snprintf(why, sizeof why, "each thread copies one element (the encoding has no Y)");
        for (int v = ny - 1; v >= 0 && !found; --v) {
            char w2[200];
            if (vector_ok(c, v, wr, w2, sizeof w2))
                found = 1, c->vdim = v, c->w = wr;
            else if (!why[0])
                snprintf(why, sizeof why, "%s", w2);
        }
        if (!found)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: copy \"%s\": a %d-byte cp.async of %s elements is not provable: "
                           "%s; ask for a narrower vector_bytes, or 0 for the widest provable.",
                           FN, c->spec->name, req, ck_dtype_name(c->spec->dtype), why);
    } else if (ny > 0) {
        for (int v = ny - 1; v >= 0; --v) {
            int wmax = 1;
            while (d->y_lengths[v] % (2 * wmax) == 0 && 2 * wmax * eb <= 16)
                wmax *= 2;
            for (int w = wmax; w > c->w; w /= 2)
                if (vector_ok(c, v, w, NULL, 0)) {
                    c->vdim = v;
                    c->w = w;
                    break;
                }
        }
        if (c->w * eb < 16) {
            char why[200];
            vector_ok(c, c->vdim, 16 / eb, why, sizeof why);
            snprintf(c->reason, sizeof c->reason, "16-byte vectors are not provable: %s", why);
        }
    } else {
        snprintf(c->reason, sizeof c->reason,
                 "each thread copies one element (the encoding has no Y)");
    }
    c->bytes = c->w * eb;
    c->async = c->bytes >= 4;
    int order[CK_SFC_MAX_DIMS], spa[CK_SFC_MAX_DIMS], lens[CK_SFC_MAX_DIMS], k = 0;
    if (ny == 0) {
        lens[0] = 1, order[0] = 0, spa[0] = 1;
        return ck_sfc_init(&c->sfc, 1, lens, order, spa, 1);
    }
    for (int j = 0; j < ny; ++j) {
        lens[j] = d->y_lengths[j];
        spa[j] = j == c->vdim ? c->w : 1;
        if (j != c->vdim)
            order[k++] = j;
    }
    order[k] = c->vdim;
    return ck_sfc_init(&c->sfc, ny, lens, order, spa, 1);
}

/* Register indices of access a (c->w of them) and its Y index. */
static void access_regs(const copy_gen *c, long long a, long long *regs, int *y)
{
    ck_gen_access_regs(&c->s.dist, &c->sfc, c->vdim, c->w, a, regs, y);
}

static const char *src_addr(const copy_gen *c, long long r, char *buf, size_t n)
{
    const reg_info *ri = &c->s.regs[r];
    if (ri->rel_const)
        snprintf(buf, n, "ck_base + %lld", (long long)ri->rel_value);
    else
        snprintf(buf, n, "ck_base + (%s)", ri->rel);
    return buf;
}

static const char *dst_addr(const copy_gen *c, long long r, char *buf, size_t n)
{
    const reg_info *ri = &c->d.regs[r];
    if (ri->rel_const) {
        snprintf(buf, n, "ck_dbase + %lld", (long long)ri->rel_value);
    } else if (!strstr(ri->rel, "ck_off0")) {
        snprintf(buf, n, "ck_dbase + (%s)", ri->rel);
    } else { /* not affine: the whole offset */
        char *t = NULL;
        if (ck_gen_print_ival(ri->offset, &t)) {
            ck_clear_error();
            snprintf(buf, n, "w->ck_dst + (%s) /* unprintable */", ri->rel);
        } else {
            snprintf(buf, n, "w->ck_dst + (%s)", t);
        }
        free(t);
    }
    return buf;
}

/* Whether b is condition a with its value moved by delta. */
static int cond_match(const ck_gen_cond *a, const ck_gen_cond *b, int64_t delta)
{
    int64_t dv;
    return a->upper == b->upper && ck_ival_equal(a->bound, b->bound) &&
           ck_gen_value_delta(a->value, b->value, &dv) && dv == delta;
}

enum { COND_UNIFORM = 1, COND_PREFIX = 2 };

/* Classify the conditions of the vector's first register: the same for every element
 * (uniform), or value + j < bound for element j (prefix: the valid elements are the first
 * bound - value). Returns 1 when every condition of every element is one of these. */
static int prefix_form(const copy_gen *c, const long long *regs, int *kind)
{
    const reg_info *r0 = &c->s.regs[regs[0]];
    for (int k = 0; k < r0->ncond; ++k) {
        int uni = 1, pre = r0->cond[k].upper;
        for (int j = 1; j < c->w; ++j) {
            const reg_info *rj = &c->s.regs[regs[j]];
            int u = 0, p = 0;
            for (int m = 0; m < rj->ncond; ++m) {
                u |= cond_match(&r0->cond[k], &rj->cond[m], 0);
                p |= cond_match(&r0->cond[k], &rj->cond[m], j);
            }
            uni &= u;
            pre &= p;
        }
        kind[k] = uni ? COND_UNIFORM : pre ? COND_PREFIX : 0;
        if (!kind[k])
            return 0;
    }
    for (int j = 1; j < c->w; ++j) {
        const reg_info *rj = &c->s.regs[regs[j]];
        for (int m = 0; m < rj->ncond; ++m) {
            int ok = 0;
            for (int k = 0; k < r0->ncond && !ok; ++k)
                ok = cond_match(&r0->cond[k], &rj->cond[m], kind[k] == COND_UNIFORM ? 0 : j);
            if (!ok)
                return 0;
        }
    }
    return 1;
}

static void print_cond(ck_sbuf *b, const ck_gen_cond *cd, const char *sep)
{
    char *v = NULL, *bd = NULL;
    if (ck_gen_print_ival(cd->value, &v) || ck_gen_print_ival(cd->bound, &bd)) {
        ck_clear_error();
        b->oom = 1;
    } else if (cd->upper) {
        ck_sbuf_printf(b, "%s%s < %s", sep, v, bd);
    } else {
        ck_sbuf_printf(b, "%s%s <= %s", sep, bd, v);
    }
    free(v);
    free(bd);
}

/* 16 bytes with src-size: the count of valid leading elements, zero when a uniform condition
 * fails; the source address of an empty copy is the tensor's base (nothing is read). */
static void emit_zfill(const copy_gen *c, ck_sbuf *b, const long long *regs, const int *kind)
{
    const reg_info *r0 = &c->s.regs[regs[0]];
    char sa[4200], da[4200];
    ck_sbuf uni = {0};
    ck_sbuf_printf(b, "    {\n        long long ck_n = %d;\n", c->w);
    for (int k = 0; k < r0->ncond; ++k) {
        if (kind[k] == COND_UNIFORM) {
            print_cond(&uni, &r0->cond[k], uni.len ? " && " : "");
            continue;
        }
        char *v = NULL, *bd = NULL;
        if (ck_gen_print_ival(r0->cond[k].value, &v) || ck_gen_print_ival(r0->cond[k].bound, &bd)) {
            ck_clear_error();
            b->oom = 1;
        } else {
            ck_sbuf_printf(b, "        if (ck_n > (%s) - (%s))\n            ck_n = (%s) - (%s);\n",
                           bd, v, bd, v);
        }
        free(v);
        free(bd);
    }
    ck_sbuf_printf(b, "        if (%s%s%sck_n < 0)\n            ck_n = 0;\n", uni.len ? "!(" : "",
                   uni.len ? uni.s : "", uni.len ? ") || " : "");
    ck_sbuf_printf(b,
                   "        ck_cp_async_16_zfill(%s, ck_n > 0 ? (const void *)(%s) : (const void "
                   "*)w->p, (unsigned)ck_n * %du);\n    }\n",
                   dst_addr(c, regs[0], da, sizeof da), src_addr(c, regs[0], sa, sizeof sa),
                   c->s.ebytes);
    if (uni.oom)
        b->oom = 1;
    free(uni.s);
}

/* The whole vector, valid: one cp.async, or element copies (ind: indentation). */
static void emit_whole(const copy_gen *c, ck_sbuf *b, const long long *regs, const char *ind)
{
    char sa[4200], da[4200];
    if (c->async) {
        ck_sbuf_printf(b, "%sck_cp_async_%d(%s, %s);\n", ind, c->bytes,
                       dst_addr(c, regs[0], da, sizeof da), src_addr(c, regs[0], sa, sizeof sa));
        return;
    }
    for (int j = 0; j < c->w; ++j)
        ck_sbuf_printf(b, "%s*(%s) = *(%s);\n", ind, dst_addr(c, regs[j], da, sizeof da),
                       src_addr(c, regs[j], sa, sizeof sa));
}

/* Element by element, zeros where the source is masked. */
static void emit_elements(const copy_gen *c, ck_sbuf *b, const long long *regs, const char *ind)
{
    char sa[4200], da[4200];
    for (int j = 0; j < c->w; ++j) {
        ck_sbuf cj = {0};
        ck_gen_access_cond(&c->s, &regs[j], 1, &cj);
        dst_addr(c, regs[j], da, sizeof da);
        src_addr(c, regs[j], sa, sizeof sa);
        if (cj.len)
            ck_sbuf_printf(b, "%s*(%s) = (%s) ? *(%s) : (%s)0;\n", ind, da, cj.s, sa, c->s.ctype);
        else
            ck_sbuf_printf(b, "%s*(%s) = *(%s);\n", ind, da, sa);
        if (cj.oom)
            b->oom = 1;
        free(cj.s);
    }
}

static void emit_access(copy_gen *c, ck_sbuf *b, long long a)
{
    long long regs[16];
    int y[CK_DIST_MAX_Y] = {0}, kind[CK_GEN_MAX_REG_CONDS];
    access_regs(c, a, regs, y);
    ck_sbuf_printf(b, "    /* access %lld: Y = (", a);
    for (int j = 0; j < c->s.dist.enc.ndim_y; ++j)
        ck_sbuf_printf(b, "%s%d", j ? ", " : "", y[j]);
    ck_sbuf_printf(b, "), registers");
    for (int j = 0; j < c->w; ++j)
        ck_sbuf_printf(b, " %lld", regs[j]);
    ck_sbuf all = {0};
    ck_gen_access_cond(&c->s, regs, c->w, &all);
    if (!all.len) {
        ck_sbuf_printf(b, " */\n");
        emit_whole(c, b, regs, "    ");
    } else if (c->bytes == 16 && prefix_form(c, regs, kind)) {
        ck_sbuf_printf(b, ": masked, zero-filled by src-size */\n");
        emit_zfill(c, b, regs, kind);
        c->masked++;
    } else {
        ck_sbuf_printf(b, ": masked, element by element at the edges */\n");
        ck_sbuf_printf(b, "    if (%s) {\n", all.s);
        emit_whole(c, b, regs, "        ");
        ck_sbuf_printf(b, "    } else {\n");
        emit_elements(c, b, regs, "        ");
        ck_sbuf_printf(b, "    }\n");
        c->masked++;
    }
    if (all.oom)
        b->oom = 1;
    free(all.s);
}

static ck_status emit(copy_gen *c, ck_sbuf *b)
{
    const ck_tile_copy_spec *sp = c->spec;
    const ck_distribution *d = &c->s.dist;
    const char *n = sp->name, *T = c->s.ctype;
    const int nx = d->enc.ndim_x;
    char enc[4096];
    char *sdesc = NULL, *ddesc = NULL;
    ck_status st = ck_dist_encoding_format(&d->enc, enc, sizeof enc);
    if (!st)
        st = ck_descriptor_to_string(sp->src, &sdesc);
    if (!st)
        st = ck_descriptor_to_string(sp->dst, &ddesc);
    if (st) {
        ck_tile_free(sdesc);
        return st;
    }
    ck_sbuf_printf(b,
                   "/* ---- copy window \"%s\" (generated by ck's window generator): global -> "
                   "shared ----\n * element type: %s (%s), window lengths:",
                   n, ck_dtype_name(sp->dtype), T);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, " %d", d->x_lengths[i]);
    ck_sbuf_printf(b, ", %lld threads, %lld elements per thread\n * encoding: %s\n", d->threads,
                   d->elements_per_thread, enc);
    ck_sbuf_printf(b, " * source descriptor:\n");
    ck_gen_emit_comment_block(b, sdesc);
    ck_sbuf_printf(b, " * destination descriptor (shared memory):\n");
    ck_gen_emit_comment_block(b, ddesc);
    ck_tile_free(sdesc);
    ck_tile_free(ddesc);
    ck_sbuf_printf(b,
                   " * accesses per thread: %lld of %d element(s) along Y%d: ", c->sfc.num_access,
                   c->w, c->vdim);
    if (c->bytes == 16)
        ck_sbuf_printf(b, "16-byte cp.async.cg, zero-filled past the source's edges (src-size)");
    else if (c->async)
        ck_sbuf_printf(b, "%d-byte cp.async.ca", c->bytes);
    else
        ck_sbuf_printf(b, "plain loads and stores (no asynchronous copy: nothing of 4 bytes or "
                          "more is provable; synchronous, commit and wait do nothing for it)");
    if (c->reason[0])
        ck_sbuf_printf(b, "\n *   (%s)", c->reason);
    ck_sbuf_printf(b,
                   "\n * Issue with copy_%s, then ck_cp_async_commit(), ck_cp_async_wait(n) and "
                   "ck_sync_threads() before reading the tile.\n */\n",
                   n);
    /* the struct and make */
    ck_sbuf_printf(b, "typedef struct ck_copy_%s {\n    %s *p;\n", n, T);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, "    long long o%d;\n", i);
    for (int i = 0; i < c->s.nsyms; ++i)
        ck_sbuf_printf(b, "    long long %s;\n", c->s.syms[i]);
    ck_sbuf_printf(b, "    %s *ck_dst;\n", T);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, "    long long ck_do%d;\n", i);
    ck_sbuf_printf(b, "} ck_copy_%s;\n\n", n);
    ck_sbuf_printf(b, "CK_DEVICE ck_copy_%s make_copy_%s(%s *p", n, n, T);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, ", long long o%d", i);
    for (int i = 0; i < c->s.nsyms; ++i)
        ck_sbuf_printf(b, ", long long %s", c->s.syms[i]);
    ck_sbuf_printf(b, ", %s *ck_dst", T);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, ", long long ck_do%d", i);
    ck_sbuf_printf(b, ")\n{\n    ck_copy_%s w;\n    w.p = p;\n", n);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, "    w.o%d = o%d;\n", i, i);
    for (int i = 0; i < c->s.nsyms; ++i)
        ck_sbuf_printf(b, "    w.%s = %s;\n", c->s.syms[i], c->s.syms[i]);
    ck_sbuf_printf(b, "    w.ck_dst = ck_dst;\n");
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, "    w.ck_do%d = ck_do%d;\n", i, i);
    ck_sbuf_printf(b, "    return w;\n}\n\n");
    /* moves */
    for (int k = 0; k < 2; ++k) {
        ck_sbuf_printf(b, "CK_DEVICE void move_copy_%s%s(ck_copy_%s *w", k ? "dst_" : "", n, n);
        for (int i = 0; i < nx; ++i)
            ck_sbuf_printf(b, ", long long d%d", i);
        ck_sbuf_printf(b, ")\n{\n");
        for (int i = 0; i < nx; ++i)
            ck_sbuf_printf(b, "    w->%s%d += d%d;\n", k ? "ck_do" : "o", i, i);
        ck_sbuf_printf(b, "}\n\n");
    }
    /* the copy */
    ck_sbuf_printf(b, "CK_DEVICE void copy_%s(const ck_copy_%s *w)\n{\n", n, n);
    ck_gen_emit_prologue(&c->s, b, 0);
    for (int i = 0; i < nx; ++i)
        ck_sbuf_printf(b, "    const long long %s = w->ck_do%d;\n    (void)%s;\n", c->d.oname[i], i,
                       c->d.oname[i]);
    for (int i = 0; i < d->enc.ndim_p; ++i)
        ck_sbuf_printf(b, "    const long long %s = %s;\n    (void)%s;\n", c->d.pname[i],
                       c->s.pname[i], c->d.pname[i]);
    char *o0 = NULL;
    if ((st = ck_gen_print_ival(c->d.regs[0].offset, &o0)))
        return st;
    ck_sbuf_printf(b,
                   "    const long long ck_doff0 = %s;\n    %s *ck_dbase = w->ck_dst + ck_doff0;\n"
                   "    (void)ck_dbase;\n",
                   o0, T);
    free(o0);
    for (long long a = 0; a < c->sfc.num_access; ++a)
        emit_access(c, b, a);
    ck_sbuf_printf(b, "}\n\n");
    return b->oom ? oom() : CK_SUCCESS;
}

static int is_identifier(const char *s, size_t max)
{
    if (!s || !s[0] || strlen(s) > max || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (; *s; ++s)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

static ck_status check_spec(const ck_tile_copy_spec *s)
{
    if (!is_identifier(s->name, 36))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: spec->name must be a C identifier of 1 to 36 characters.", FN);
    if (!s->enc || !s->src || !s->dst)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: copy \"%s\": spec->enc, spec->src and spec->dst must not be NULL.", FN,
                       s->name);
    if (!ck_descriptor_is_concrete(s->dst))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: copy \"%s\": the destination descriptor has run-time symbols; a "
                       "shared-memory tile must have known lengths and strides (bind them with "
                       "ck_descriptor_bind).",
                       FN, s->name);
    int eb = 0;
    if (!ck_gen_ctype(s->dtype, &eb))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: copy \"%s\": element type %s is not supported (accepted: f32, tf32, "
                       "f64, f16, bf16, i32, i8, u8 and the fp8 types).",
                       FN, s->name, ck_dtype_name(s->dtype));
    int vb = s->vector_bytes;
    if (vb != 0 && vb != 4 && vb != 8 && vb != 16)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: copy \"%s\": vector_bytes = %d; cp.async copies 4, 8 or 16 bytes (0 "
                       "chooses the widest provable).",
                       FN, s->name, vb);
    if (vb && vb < eb)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: copy \"%s\": vector_bytes = %d is narrower than one %s element (%d "
                       "bytes).",
                       FN, s->name, vb, ck_dtype_name(s->dtype), eb);
    return CK_SUCCESS;
}

/* The destination must hold the whole window: no register of it may need a mask. */
static ck_status check_destination(const copy_gen *c)
{
    for (long long r = 0; r < c->d.nregs; ++r)
        if (c->d.regs[r].ncond) {
            const ck_distribution *d = &c->d.dist;
            char lens[64] = "";
            for (int i = 0, k = 0; i < d->enc.ndim_x; ++i)
                k += snprintf(lens + k, sizeof lens - (size_t)k, "%s%d", i ? " x " : "",
                              d->x_lengths[i]);
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: copy \"%s\": the destination window would need masks (register "
                           "%lld may fall outside the shared tile or in its padding); the tile "
                           "must hold the whole %s window: make its lengths multiples of the "
                           "window's and set dst_origin_align to them.",
                           FN, c->spec->name, r, lens);
        }
    return CK_SUCCESS;
}

ck_status ck_tile_copy_generate(const ck_tile_copy_spec *spec, char **source,
                                ck_tile_copy_info *info)
{
    CK_REQUIRE_NOT_NULL(spec, FN);
    CK_REQUIRE_NOT_NULL(source, FN);
    *source = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    ck_status st = check_spec(spec);
    if (st)
        return st;
    copy_gen c;
    memset(&c, 0, sizeof c);
    c.spec = spec;
    snprintf(c.sname, sizeof c.sname, "%s_src", spec->name);
    snprintf(c.dname, sizeof c.dname, "%s_dst", spec->name);
    ck_tile_window_spec *ws = &c.ws, *wd = &c.wd;
    ws->name = c.sname, ws->desc = spec->src, ws->ctx = spec->ctx, ws->enc = spec->enc;
    ws->dtype = spec->dtype, ws->ops = CK_WIN_LOAD;
    wd->name = c.dname, wd->desc = spec->dst, wd->enc = spec->enc;
    wd->dtype = spec->dtype, wd->ops = CK_WIN_STORE;
    for (int i = 0; i < CK_DIST_MAX_X; ++i) {
        ws->origin_align[i] = spec->src_origin_align[i];
        wd->origin_align[i] = spec->dst_origin_align[i];
    }
    ck_sbuf b = {0};
    if ((st = ck_gen_prepare(&c.s, ws)))
        st = ck_fail_context(st, "%s: copy \"%s\", the source window", FN, spec->name);
    if (!st && (st = ck_gen_prepare(&c.d, wd)))
        st = ck_fail_context(st, "%s: copy \"%s\", the destination window", FN, spec->name);
    if (!st)
        st = check_destination(&c);
    if (!st)
        st = choose_vector(&c);
    if (!st)
        st = emit(&c, &b);
    if (!st && info) {
        info->async = c.async;
        info->vector_bytes = c.bytes;
        info->vector_dim_y = c.vdim;
        info->accesses = c.sfc.num_access;
        info->masked_accesses = c.masked;
        snprintf(info->reason, sizeof info->reason, "%s", c.reason);
    }
    ck_gen_release(&c.s);
    ck_gen_release(&c.d);
    if (st) {
        free(b.s);
        return st;
    }
    *source = b.s;
    return CK_SUCCESS;
}
