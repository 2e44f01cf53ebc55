/*
 * The softmax policy: the problem of an smx_plan + the device's properties (+ the knobs: a
 * tuning-table entry, the instance `ck tune` times, or the developer switches) -> the instance
 * (softmax_plan.h). docs/ops-softmax.md describes the instances.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/softmax/softmax_plan.h"

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

void ck_smx_knobs_none(smx_knobs *k)
{
    memset(k, 0, sizeof *k);
    k->raw = k->red = k->window = k->span = -1;
}

int ck_smx_knobs_parse(smx_knobs *k, const char *text)
{
    int v[7], n;
    if (strcmp(text, "auto") == 0) /* the heuristic's choice */
        return 1;
    if (strcmp(text, "regs") == 0) {
        k->regs_only = 1;
        return 1;
    }
    if (strcmp(text, "staged") == 0) {
        k->staged_opt_in = 1;
        return 1;
    }
    if (strcmp(text, "window") == 0) { /* the heuristic's instance, through tile windows */
        k->window = 1;
        return 1;
    }
    v[6] = -1;
    if ((n = sscanf(text, "regs,%d,%d,%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                    &v[6])) >= 6) {
        k->shape = 1;
        k->g = v[0], k->c = v[1], k->r = v[2], k->raw = v[3], k->red = v[4], k->minb = v[5];
        k->window = v[6];
        return v[3] >= -1 && v[3] <= 1 && v[4] >= -1 && v[4] <= 1 && v[6] >= -1 && v[6] <= 1;
    }
    v[4] = 0;
    if ((n = sscanf(text, "staged,%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4])) >= 4) {
        k->shape = 2;
        k->g = v[0], k->c = v[1], k->s = v[2], k->b = v[3], k->k = v[4];
        return 1;
    }
    return 0;
}

void ck_smx_knobs_env(smx_knobs *k)
{
    const char *e = getenv("CK_SOFTMAX_VARIANT");
    if (e)
        (void)ck_smx_knobs_parse(k, e);
    int g, c, r;
    if ((e = getenv("CK_SOFTMAX_INSTANCE")) && sscanf(e, "%d,%d,%d", &g, &c, &r) == 3) {
        k->shape = 1;
        k->g = g, k->c = c, k->r = r;
    }
    if ((e = getenv("CK_SOFTMAX_RAW")) && (e[0] == '0' || e[0] == '1') && e[1] == '\0')
        k->raw = e[0] == '1';
    if ((e = getenv("CK_SOFTMAX_RED")) && strcmp(e, "two") == 0)
        k->red = 0;
    if (e && strcmp(e, "pair") == 0)
        k->red = 1;
    if ((e = getenv("CK_SOFTMAX_WINDOW")) && (e[0] == '0' || e[0] == '1') && e[1] == '\0')
        k->window = e[0] == '1';
    if ((e = getenv("CK_SOFTMAX_SPAN")) && (e[0] == '0' || e[0] == '1') && e[1] == '\0')
        k->span = e[0] == '1';
    if ((e = getenv("CK_SOFTMAX_MINB")) && sscanf(e, "%d", &g) == 1 && g >= 1 && g <= 32)
        k->minb = g;
}

/* The raw 16-bit register instance applies: 16-bit x read as 16-byte vectors (8 elements), no
 * additive mask (the causal mask depends on the column only). */
static int raw_allowed(const smx_plan *p)
{
    return p->ti != 0 /* f32 */ && p->vec == 8 && p->wide_x && !(p->maskbits & 1);
}

/* Choose the instance (smx_plan.kind, g, nv, cluster, ...) for rows of length n. */
static void choose(smx_plan *p, int64_t rows, const ck_device_props *props)
{
    int64_t nvec = ck_smx_nvec(p);
    p->kind = 0;
    p->cluster = 1;
    p->rows_per_block = 1;
    if (cdiv(nvec, 32) * p->vec <= 32) { /* a warp per row, 4 rows per block */
        p->g = 32;
        p->nv = (int)cdiv(nvec, 32);
        p->rows_per_block = rows >= 4 ? 4 : (int)rows;
        return;
    }
    for (int g = 64; g <= 1024; g *= 2)
        if (cdiv(nvec, g) * p->vec <= 16) {
            p->g = g;
            p->nv = (int)cdiv(nvec, g);
            return;
        }
    int clusters = props->backend == CK_BACKEND_HOST || props->cc_major >= 9;
    /* Rows of 16-bit x without an additive mask keep their raw inputs in registers (choose_raw,
     * 64 or 128 values per thread). The shapes below measured best on the H100 (bench/
     * RESULTS.md, 2026-11-25, 1 GiB of bf16, % of copy): 512 threads for N <= 32768 (98.6%);
     * clusters of 4 x 256 threads for N <= 65536 (98.3%; one block of 1024: 95.9%), 8 x 128
     * threads with up to 128 values each for N <= 131072 (95.5% at 70000, 96.5% at 100000,
     * 97.3% at 131072), 8 x 256 threads with up to 104 values (three blocks per SM) for N <=
     * 212992 (92.1% at 200000; 16 x 256: 87.0%) and 16 x 256 threads beyond (93.0% at 262144;
     * 8 x 512: 90.7%; clusters of 16 are an sm_90 opt-in). */
    if (raw_allowed(p)) {
        static const int shapes[6][3] = {{512, 1, 64},  {256, 4, 64},  {128, 8, 128},
                                         {256, 8, 104}, {256, 16, 64}, {512, 8, 64}};
        for (int i = 0; i < 6; ++i) {
            int g = shapes[i][0], c = shapes[i][1], vals = shapes[i][2];
            int c_ok =
                c == 1 ||
                (clusters && (c <= 8 || props->backend == CK_BACKEND_HOST || props->cc_major == 9));
            if (c_ok && cdiv(nvec, (int64_t)g * c) * p->vec <= vals && rows * c <= 0x7fffffffLL) {
                p->g = g;
                p->cluster = c;
                p->nv = (int)cdiv(nvec, (int64_t)g * c);
                return;
            }
        }
    }
    if (cdiv(nvec, 1024) * p->vec <= 32) {
        p->g = 1024;
        p->nv = (int)cdiv(nvec, 1024);
        return;
    }
    for (int c = 2; clusters && c <= 8; c *= 2)
        if (cdiv(nvec, 1024LL * c) * p->vec <= 32 && rows * c <= 0x7fffffffLL) {
            p->g = 1024;
            p->cluster = c;
            p->nv = (int)cdiv(nvec, 1024LL * c);
            return;
        }
    /* online: segments of 64 Ki elements (at least 8 chunks of 512 threads x vec x 2) */
    p->kind = 1;
    p->g = 512;
    p->unroll = p->vec >= 4 ? 2 : 8;
    p->seg_elems = 65536;
    p->segs = (int)cdiv(p->n, p->seg_elems);
}

/* Raw 16-bit storage in registers (smx_rows_raw) for register instances of 16-bit x read as
 * 16-byte vectors without an additive mask, where a thread holds more than 16 elements or the
 * row is split over a cluster. The knob raw overrides the choice (where allowed). */
static void choose_raw(smx_plan *p, const ck_device_props *props, const smx_knobs *k)
{
    int allowed = p->kind == 0 && raw_allowed(p);
    p->raw = allowed && (p->cluster > 1 || p->nv * p->vec > 16);
    if (allowed && k->raw >= 0)
        p->raw = k->raw;
    if (p->kind == 0 && p->raw) {
        /* Reductions: the maximum then the sum. One reduction of (m, l) pairs saves an exchange
         * but measured slower at every length on the H100 (bench/RESULTS.md, "Reduction form
         * with st.async"). The knob red overrides. */
        p->pairred = k->red == 1;
        /* as many blocks as the registers allow: the raw words (4 per vector) and about 32
         * more per thread */
        int threads = p->g * p->rows_per_block;
        /* with spans about 16 more: the head and every element's bounds in each pass
         * (nvcc 13 -arch=sm_90a: 7 vectors spilled 40 bytes under 64 registers, none under 85) */
        int regs = 4 * p->nv + 32 + (p->span ? 16 : 0);
        p->per_sm = (props->regs_per_sm > 0 ? props->regs_per_sm : 65536) / (threads * regs);
        if (p->per_sm > 1024 / threads)
            p->per_sm = 1024 / threads;
        if (p->per_sm < 1)
            p->per_sm = 1;
        if (k->minb >= 1 && k->minb <= 32)
            p->per_sm = k->minb;
    }
}

/* A register shape (knobs g, c, r: G threads per row, C blocks per row, R rows per block)
 * replaces the heuristic's choice when it is valid for the problem. */
static void shape_override(smx_plan *p, int64_t rows, const smx_knobs *k)
{
    if (k->shape != 1)
        return;
    int g = k->g, c = k->c, r = k->r;
    int64_t nvec = ck_smx_nvec(p);
    if (g < 32 || g > 1024 || (g & (g - 1)) || (c != 1 && c != 2 && c != 4 && c != 8 && c != 16) ||
        r < 1 || g * r > 1024 || (c > 1 && r != 1) || (g == 32) != (r > 1 || g == 32) || r > rows)
        return;
    int64_t nv = cdiv(nvec, (int64_t)g * c);
    /* 64 values per thread; 128 for the raw 16-bit instance (64 registers of inputs) */
    if (nv * p->vec > (raw_allowed(p) ? 128 : 64))
        return;
    p->kind = 0;
    p->g = g;
    p->cluster = c;
    p->rows_per_block = r;
    p->nv = (int)nv;
    p->pv = p->v = p->xu = p->stages = p->per_sm = p->grid_clusters = 0;
    p->smem = 0;
}

/* ---- staged instance (softmax_staged_kernel.h) ---------------------------------------------- */
#define SMX_STAGED_PART_MAX (96 * 1024) /* bytes of x per block (two stages: 192 KiB) */

/* x read as 16-byte units (cp.async), no additive mask (the causal mask is fine). */
static int staged_allowed(const smx_plan *p)
{
    return p->wide_x && !p->span && !(p->maskbits & 1) && (p->vec * ck_smx_size_of(p->ti)) % 16 == 0;
}

/* Plan the staged instance with g threads per block, c blocks per row, s stages and a grid of
 * b blocks per SM (0: as many as fit) or k clusters (k > 0). Returns 0 (plan unchanged) when
 * that shape is invalid or does not fit in shared memory. */
static int staged_plan(smx_plan *p, int64_t rows, const ck_device_props *props, int g, int c, int s,
                       int b, int k)
{
    int clusters = props->backend == CK_BACKEND_HOST || props->cc_major >= 9;
    if (!staged_allowed(p) || g < 64 || g > 1024 || (g & (g - 1)) ||
        (c != 1 && c != 2 && c != 4 && c != 8) || (c > 1 && !clusters) || (s != 1 && s != 2) ||
        b < 0 || b > 64 || k < 0)
        return 0;
    int xu = p->vec * ck_smx_size_of(p->ti) / 16;
    int64_t nvec = p->n / p->vec, pv = cdiv(nvec, c), v = cdiv(pv, g);
    if (v > 32 || pv * xu * 16 > SMX_STAGED_PART_MAX)
        return 0;
    long long smem = (long long)s * xu * v * g * 16;
    long long red = 4LL * (g / 32) * 4 + 64; /* the kernel's static shared memory */
    long long maxs =
        props->max_shared_per_block ? (long long)props->max_shared_per_block : 227LL * 1024;
    if (smem + red > maxs)
        return 0;
    long long sm_shared = props->shared_per_sm ? (long long)props->shared_per_sm : maxs;
    int fit = (int)(sm_shared / (smem + red + 1024)); /* 1 KiB reserved per block */
    /* registers: at least 64 per thread, 128 with more than 4 vectors per thread (nvcc
     * --resource-usage: 8 vectors per thread under 64 or 80 registers spill a few bytes) */
    if (fit > (v > 4 ? 512 : 1024) / g)
        fit = (v > 4 ? 512 : 1024) / g;
    if (fit > 32)
        fit = 32;
    if (fit < 1)
        fit = 1;
    int grid_b = b > 0 ? b : fit;
    int64_t sms = props->multiprocessors > 0 ? props->multiprocessors : 1;
    /* The grid is persistent: every cluster must be resident at once, or the rows of a late one
     * double the time. Clusters are placed within a GPC (H100: 16-18 SMs each), so clusters of 4
     * and 8 are counted conservatively (132 SMs: 32 of 4, 16 of 8). */
    int64_t slots = sms * grid_b;
    int64_t maxcl = c == 4 ? (slots - 4) / 4 : slots / c;
    if (k > 0)
        maxcl = k;
    if (maxcl < 1)
        maxcl = 1;
    int64_t waves = cdiv(rows, maxcl);
    p->kind = 2;
    p->g = g;
    p->cluster = c;
    p->rows_per_block = 1;
    p->nv = 0;
    p->pv = (int)pv;
    p->v = (int)v;
    p->xu = xu;
    p->stages = s;
    p->per_sm = grid_b < fit ? grid_b : fit; /* launch bounds: registers for this many */
    p->grid_clusters = (int)cdiv(rows, waves);
    p->smem = smem;
    return 1;
}

/* Staged instance: knob shape 2 forces a staged shape (G threads, C blocks per row, S stages,
 * a grid of B blocks per SM (0 automatic) or of K clusters) where valid; regs_only keeps the
 * register / online choice; staged_opt_in sends rows of more than 64 KiB of x (bf16/f16
 * N > 32,768, f32 N > 16,384) that fit in blocks of at most 96 KiB (clusters of up to 8) to the
 * staged instance: 512 threads, two stages, the fewest blocks per row. */
static void choose_staged(smx_plan *p, int64_t rows, const ck_device_props *props,
                          const smx_knobs *k)
{
    if (k->regs_only)
        return;
    if (k->shape == 2 && staged_plan(p, rows, props, k->g, k->c, k->s, k->b, k->k))
        return;
    /* Not yet the default: the staged instance has run on the emulator only, while the register
     * instances are measured and checked on the H100 (bench/RESULTS.md). "staged" opts in. */
    if (!k->staged_opt_in)
        return;
    if (!staged_allowed(p) || p->n * ck_smx_size_of(p->ti) <= 64 * 1024)
        return;
    for (int c = 1; c <= 8; c *= 2)
        if (staged_plan(p, rows, props, 512, c, 2, 0, 0))
            return;
}

static void policy(smx_plan *p, int64_t rows, const ck_device_props *props, const smx_knobs *k)
{
    choose(p, rows, props);
    choose_staged(p, rows, props, k);
    shape_override(p, rows, k);
    choose_raw(p, props, k);
    /* Register instances through generated tile windows unless asked not to (CK_SOFTMAX_WINDOW=0
     * or the tuning text's eighth field 0): the same 16-byte accesses, as fast as the hand
     * indexing on the six large bench shapes (bench/RESULTS.md, eighth session, run U). */
    p->window = k->window != 0 && ck_smx_window_ok(p);
}

void ck_smx_policy(smx_plan *p, int64_t rows, const ck_device_props *props, const smx_knobs *k)
{
    /* Rows not 16-byte aligned (odd N, say): a register instance through windows over each
     * row's aligned span takes 16-byte vectors (one access for 8 bf16 elements instead of 8)
     * unless asked not to (CK_SOFTMAX_SPAN=0); the online and staged instances keep element
     * accesses. By default only for rows longer than 8192 elements: on the H100 spans ran
     * 1.13x at 300 x 212993 bf16, 1.09x at 4096 x 50257, but 0.69x at 16384 x 1023, where
     * they move the rows from warps to 128-thread blocks (bench/RESULTS.md, run Z4);
     * CK_SOFTMAX_SPAN=1 asks for them at any length. */
    if (p->span_vec && (k->span == 1 || (k->span != 0 && p->n > 8192)) && k->window != 0) {
        smx_plan q = *p;
        q.span = 1;
        q.vec = q.span_vec;
        q.wide_x = 1;
        q.wide_y = q.span_wide_y;
        q.wide_m = q.span_wide_m;
        policy(&q, rows, props, k);
        if (q.kind == 0 && q.window) {
            *p = q;
            return;
        }
    }
    p->span = 0;
    policy(p, rows, props, k);
}

void ck_smx_instance_name(const smx_plan *p, char *buf, size_t size)
{
    if (p->kind == 2)
        snprintf(buf, size, "staged,%d,%d,%d,%d,%d", p->g, p->cluster, p->stages, p->per_sm,
                 p->grid_clusters);
    else if (p->kind == 0)
        snprintf(buf, size, "regs,%d,%d,%d,%d,%d,%d%s", p->g, p->cluster, p->rows_per_block,
                 p->raw, p->pairred, p->per_sm, p->window ? ",1" : ",0");
    else
        snprintf(buf, size, "online,%d,%d", p->g, p->unroll);
}
