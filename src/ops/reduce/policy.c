/*
 * The reduce policy (reduce_internal.h): canonical problem + device properties -> instance
 * (kind, vector width, threads per output, split parts). docs/ops-reduce.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/reduce.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce_internal.h"

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int pow2ceil(int64_t v)
{
    int p = 1;
    while (p < v && p < (1 << 30))
        p *= 2;
    return p;
}

/* Largest vector (16, 8, ... bytes, at least one element) such that `data` and every stride
 * of `strides` (in elements of `size` bytes) keep vectors aligned. */
static int vec_bytes(const void *data, int size, const int64_t *strides, int count)
{
    for (int vb = 16; vb > size; vb /= 2) {
        int ok = ((uintptr_t)data % (uintptr_t)vb) == 0;
        for (int i = 0; ok && i < count; ++i)
            ok = (strides[i] * size) % vb == 0;
        if (ok)
            return vb;
    }
    return size;
}

/* The split of `rows` rows into 1..most parts whose blocks best fill whole waves of `wave`
 * resident blocks (the fewest parts among equals): rows x parts blocks in ceil(rows x parts /
 * wave) waves, e.g. 64 rows on 132 SMs of two 512-thread blocks: 4 parts, 256 blocks in one
 * wave (about 8 blocks a SM - 17 parts, 1088 blocks - left a fifth wave an eighth full). */
static int64_t whole_waves(int64_t rows, int64_t most, int64_t wave)
{
    int64_t best = 1;
    double best_fill = 0;
    for (int64_t parts = 1; parts <= most && wave > 0; ++parts) {
        int64_t blocks = rows * parts;
        double fill = (double)blocks / (double)(cdiv(blocks, wave) * wave);
        if (fill > best_fill + 1e-9) {
            best = parts;
            best_fill = fill;
        }
    }
    return best;
}

/* The instance of the canonical problem c on a device: row (a group of threads per output,
 * split into parts over a second combine kernel when few rows are long) or column (the
 * innermost kept dimension contiguous). */
void ck_reduce_choose(rd_plan *p, const rd_canon *c, const ck_tensor *x,
                      const ck_device_props *props)
{
    int isz = ck_reduce_in_size(x->dtype);
    int sms = props->multiprocessors > 0 ? props->multiprocessors : 1;
    int64_t rows = c->rows, n = c->n;
    rd_geom *g = &p->geom;
    g->parts = 1;
    g->seg = n;
    if (c->rd == 1 && (c->rxs[0] == 1 || n <= 1)) {
        p->kind = 0;
        p->vb = vec_bytes(x->data, isz, c->kxs, c->kd);
    } else if (c->kd >= 1 && c->kxs[c->kd - 1] == 1 && c->kl[c->kd - 1] * isz >= 32) {
        p->kind = 1;
        int64_t others[2 * RD_MAXD];
        int cnt = 0;
        for (int k = 0; k < c->kd - 1; ++k)
            others[cnt++] = c->kxs[k];
        for (int r = 0; r < c->rd; ++r)
            others[cnt++] = c->rxs[r];
        p->vb = vec_bytes(x->data, isz, others, cnt);
    } else {
        p->kind = 0;
        p->vb = 0;
    }
    int v = p->vb > 0 ? p->vb / isz : 1;
    if (p->kind == 0) {
        p->u = p->vb >= 8 ? 4 : 8;
        int64_t nvec = cdiv(n, v);
        if (rows >= (int64_t)sms * 32 || nvec <= 32 * 8) {
            /* a warp or a part of one per row (about 4 vectors per lane for short rows); blocks
             * of whole warps (shuffles need all 32 lanes), at most 256 threads */
            int64_t gw = pow2ceil(cdiv(nvec, 4));
            p->g = (int)(gw < 32 ? gw : 32);
            int64_t threads = (int64_t)p->g * pow2ceil(rows);
            threads = threads < 32 ? 32 : threads > 256 ? 256 : threads;
            p->rpb = (int)(threads / p->g);
        } else {
            p->g = nvec >= 512 * 8 ? 512 : nvec >= 256 * 4 ? 256 : nvec >= 128 * 2 ? 128 : 64;
            p->rpb = 1;
            int64_t want = cdiv((int64_t)sms * 8, rows);
            int64_t cap = nvec / ((int64_t)p->g * p->u);
            int64_t parts = want < cap ? want : cap;
            if (!ck_reduce_prev_env())
                parts = whole_waves(rows, parts, (int64_t)sms * (2048 / p->g));
            if (parts > 4096)
                parts = 4096;
            if (parts > 1) {
                g->seg = cdiv(nvec, parts) * v;
                g->parts = cdiv(n, g->seg);
            }
        }
    } else {
        p->u = 4;
        int64_t m = c->kl[c->kd - 1];
        int64_t cv = cdiv(m, v);
        p->ct = cv >= 32 ? 32 : pow2ceil(cv);
        p->rt = 256 / p->ct;
        size_t per = (p->acc64 ? 8 : 4) + (ck_reduce_is_arg((ck_reduce_op)p->op) ? 8 : 0);
        while (p->rt > 1 && (size_t)p->rt * (size_t)p->ct * (size_t)v * per > 32768)
            p->rt /= 2;
        p->smem = (size_t)p->rt * (size_t)p->ct * (size_t)v * per;
        g->m = m;
        g->col_blocks = cdiv(cv, p->ct);
        g->outer = rows / m;
        int64_t base = g->col_blocks * g->outer;
        int64_t want = cdiv((int64_t)sms * 8, base);
        int64_t cap = n / ((int64_t)p->rt * p->u * 2);
        int64_t parts = want < cap ? want : cap;
        if (parts > 4096)
            parts = 4096;
        if (parts > 1) {
            g->seg = cdiv(n, parts);
            g->parts = cdiv(n, g->seg);
        }
    }
}

int ck_reduce_knobs_parse(const char *text, rd_knobs *k)
{
    int a, b, parts, window = -1;
    k->kind = -1;
    k->window = -1;
    if (!text || strcmp(text, "auto") == 0)
        return text != NULL;
    if (strcmp(text, "window") == 0) { /* the heuristic's instance, through tile windows */
        k->window = 1;
        return 1;
    }
    if (sscanf(text, "row,%d,%d,%d,%d", &a, &b, &parts, &window) >= 3)
        k->kind = 0;
    else if (sscanf(text, "col,%d,%d,%d,%d", &a, &b, &parts, &window) >= 3)
        k->kind = 1;
    else
        return 0;
    if (a < 1 || a > 1024 || (a & (a - 1)) || b < 1 || b > 1024 || (b & (b - 1)) ||
        (int64_t)a * b > 1024 || parts < 0 || parts > 4096 || window < -1 || window > 1 ||
        (k->kind == 0 && (a > 32 ? b != 1 : (a * b) % 32 != 0)) || (k->kind == 1 && a > 32)) {
        k->kind = -1;
        return 0;
    }
    k->a = a;
    k->b = b;
    k->parts = parts;
    k->window = window;
    return 1;
}

void ck_reduce_knobs_env(rd_knobs *k)
{
    const char *e = getenv("CK_REDUCE_WINDOW");
    if (e && (e[0] == '0' || e[0] == '1') && e[1] == '\0')
        k->window = e[0] - '0';
}

int ck_reduce_prev_env(void)
{
    const char *e = getenv("CK_REDUCE_PREV");
    return e && e[0] == '1' && e[1] == '\0';
}

void ck_reduce_instance_name(const rd_plan *p, char *buf, size_t size)
{
    if (p->kind == 0)
        snprintf(buf, size, "row,%d,%d,%lld%s", p->g, p->rpb, p->geom.parts,
                 p->window ? ",1" : "");
    else
        snprintf(buf, size, "col,%d,%d,%lld%s", p->ct, p->rt, p->geom.parts,
                 p->window ? ",1" : "");
}

/* The instance a tuning-table entry (or the one `ck tune reduce` forces) names, over the
 * heuristic's: threads per output and outputs per block (row), column and reduced threads
 * (column), the split into parts (0: the heuristic's). A shape for the other kind, or one the
 * column kernel's shared memory cannot hold, is ignored. */
void ck_reduce_apply_knobs(rd_plan *p, const rd_canon *c, const ck_tensor *x, const rd_knobs *k)
{
    if (!k || k->kind != p->kind)
        return;
    int isz = ck_reduce_in_size(x->dtype);
    int v = p->vb > 0 ? p->vb / isz : 1;
    int64_t n = c->n;
    rd_geom *g = &p->geom;
    if (p->kind == 0) {
        p->g = k->a;
        p->rpb = k->b;
        if (k->parts > 0) {
            int64_t nvec = cdiv(n, v), parts = k->parts < nvec ? k->parts : nvec;
            g->seg = n;
            g->parts = 1;
            if (parts > 1) {
                g->seg = cdiv(nvec, parts) * v;
                g->parts = cdiv(n, g->seg);
            }
        }
        return;
    }
    size_t per = (p->acc64 ? 8 : 4) + (ck_reduce_is_arg((ck_reduce_op)p->op) ? 8 : 0);
    size_t smem = (size_t)k->b * (size_t)k->a * (size_t)v * per;
    if (smem > 32768)
        return;
    p->ct = k->a;
    p->rt = k->b;
    p->smem = smem;
    g->col_blocks = cdiv(cdiv(g->m, v), p->ct);
    if (k->parts > 0) {
        int64_t parts = k->parts < n ? k->parts : n;
        g->seg = n;
        g->parts = 1;
        if (parts > 1) {
            g->seg = cdiv(n, parts);
            g->parts = cdiv(n, g->seg);
        }
    }
}

void ck_reduce_problem_key(const rd_plan *p, char *buf, size_t size)
{
    snprintf(buf, size, "%s>%s/op=%s/pre=%d/s=%d/q=%d/rows=%lld/n=%lld/kd=%d/rd=%d/vb=%d",
             ck_dtype_name((ck_dtype)p->ti), ck_dtype_name((ck_dtype)p->to),
             ck_reduce_op_names[p->op], p->pre, p->scale, p->sqrt_, p->geom.rows, p->geom.n, p->kd,
             p->rd, p->vb);
}
