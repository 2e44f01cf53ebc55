/*
 * `ck prof gemm`'s quantized GEMM options: scale modes of A and B (per-tensor, per row /
 * column, blocks), B packed as int4 / uint4 (with zero points) / fp4 e2m1 with group scales,
 * and the buffers of their scale tensors and zero points.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prof.h"
#include "prof_gemm_quant.h"

const char prof_gemm_quant_help[] =
    "  --scale-a/--scale-b MODE\n"
    "                     tensor (one factor, the default), row / col (A per row, B per\n"
    "                     column: row-col scaling), or a block MNxK, e.g. --scale-a 1x128\n"
    "                     --scale-b 128x128 (DeepSeek-V3's fp8); each K block's partial\n"
    "                     sums are promoted to f32 and scaled (random f32 scale tensors)\n"
    "  --b-dtype int4|uint4|fp4\n"
    "                     B packed two per byte (column-major, low nibble = even k), with\n"
    "                     f16/bf16 A; dequantized in registers\n"
    "  --group-size G     B's scales per G of K and column (--scale-b 1xG)\n"
    "  --b-zeros 1        uint4 zero points (one byte per group and column)\n";

int prof_gemm_quant_takes(const char *opt)
{
    static const char *const names[] = {"--scale-a", "--scale-b", "--group-size", "--b-zeros"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strcmp(opt, names[i]))
            return 1;
    return 0;
}

static int parse_mode(const char *v, ck_gemm_scale *s)
{
    memset(s, 0, sizeof *s);
    int mn = 0, k = 0;
    char tail = 0;
    if (!strcmp(v, "tensor"))
        return 1;
    if (!strcmp(v, "row") || !strcmp(v, "col") || !strcmp(v, "vector")) {
        s->mode = CK_GEMM_SCALE_VECTOR;
        return 1;
    }
    if (sscanf(v, "%dx%d%c", &mn, &k, &tail) == 2 && mn > 0 && k > 0) {
        s->mode = CK_GEMM_SCALE_BLOCK;
        s->block_mn = mn, s->block_k = k;
        return 1;
    }
    return 0;
}

int prof_gemm_quant_option(const char *sub, const char *opt, const char *v, ck_gemm_problem *p)
{
    if (!strcmp(opt, "--scale-a") || !strcmp(opt, "--scale-b")) {
        ck_gemm_scale *s = opt[8] == 'a' ? &p->scale_a : &p->scale_b;
        if (!parse_mode(v, s))
            return -cli_usage_error(sub,
                                    "%s %s: expected tensor, row, col or a block MNxK (e.g. "
                                    "1x128, 128x128).",
                                    opt, v);
        /* A's scales MN-major per K block (DeepGEMM's layout), B's row-major (K blocks) */
        s->order = opt[8] == 'a' ? CK_GEMM_COL_MAJOR : CK_GEMM_ROW_MAJOR;
        return 1;
    }
    if (!strcmp(opt, "--b-dtype")) {
        ck_gemm_packed f = !strcmp(v, "int4")                        ? CK_GEMM_PACKED_INT4
                           : !strcmp(v, "uint4")                     ? CK_GEMM_PACKED_UINT4
                           : !strcmp(v, "fp4") || !strcmp(v, "e2m1") ? CK_GEMM_PACKED_FP4_E2M1
                                                                     : CK_GEMM_PACKED_NONE;
        if (f == CK_GEMM_PACKED_NONE)
            return 0;
        p->b_packed = f;
        return 1;
    }
    if (!strcmp(opt, "--group-size")) {
        long long g;
        if (prof_parse_list(v, &g, 1, 1, 1 << 30) != 1)
            return -cli_usage_error(sub, "--group-size %s: expected a whole number >= 1.", v);
        p->scale_b.mode = CK_GEMM_SCALE_BLOCK;
        p->scale_b.block_mn = 1, p->scale_b.block_k = (int)g;
        p->scale_b.order = CK_GEMM_ROW_MAJOR;
        return 1;
    }
    if (!strcmp(opt, "--b-zeros")) {
        p->b_zeros = strcmp(v, "0") != 0;
        return 1;
    }
    return 0;
}

int prof_gemm_quant_finish(const char *sub, ck_gemm_problem *p, int have_d)
{
    if (p->b_packed) {
        p->b.dtype = CK_DTYPE_U8;
        p->b.order = CK_GEMM_COL_MAJOR;
        p->b.ld = 0;
        if (p->a.dtype != CK_DTYPE_F16 && p->a.dtype != CK_DTYPE_BF16)
            return cli_usage_error(sub, "--b-dtype %s needs --dtype bf16 or f16 (A's type).",
                                   p->b_packed == CK_GEMM_PACKED_FP4_E2M1 ? "fp4" : "int4");
        if (p->scale_b.mode == CK_GEMM_SCALE_TENSOR && p->b_zeros)
            return cli_usage_error(sub, "--b-zeros needs --group-size or --scale-b.");
    }
    int scaled = p->scale_a.mode || p->scale_b.mode;
    if (scaled && p->a.dtype == CK_DTYPE_I8 && !have_d)
        p->d.dtype = CK_DTYPE_F32;
    return CK_EXIT_OK;
}

/* Elements of an operand's scale matrix (A: M blocks x K blocks, B: K blocks x N blocks), its
 * ld resolved by the problem's check. */
static size_t scale_elems(const ck_gemm_scale *s, int is_b, int64_t mn, int64_t k)
{
    if (s->mode == CK_GEMM_SCALE_TENSOR)
        return 0;
    int64_t bmn = (mn + s->block_mn - 1) / s->block_mn, bk = (k + s->block_k - 1) / s->block_k;
    int64_t rows = is_b ? bk : bmn, cols = is_b ? bmn : bk;
    return (size_t)((s->order == CK_GEMM_ROW_MAJOR ? rows : cols) * s->ld);
}

ck_status prof_gemm_quant_buffers(ck_device *dev, const ck_gemm_problem *q, unsigned *state,
                                  prof_gemm_quant_bufs *b, ck_gemm_args *dev_args,
                                  ck_gemm_args *host_args)
{
    memset(b, 0, sizeof *b);
    const ck_gemm_scale *s[3] = {&q->scale_a, &q->scale_b, &q->scale_b};
    int64_t mn[3] = {q->m, q->n, q->n};
    for (int i = 0; i < 3; ++i) {
        size_t n = scale_elems(s[i], i > 0, mn[i], q->k);
        if (!n || (i == 2 && !q->b_zeros))
            continue;
        size_t bytes = n * (i == 2 ? 1 : 4);
        if (!(b->h[i] = malloc(bytes)))
            return CK_ERROR_OUT_OF_MEMORY;
        for (size_t e = 0; e < n; ++e) {
            float u;
            prof_fill_uniform(&u, 1, -1, 1, state);
            if (i == 2)
                ((unsigned char *)b->h[i])[e] = (unsigned char)((u + 1) * 7.99f);
            else /* both signs, |scale| in [1/4, 4] */
                ((float *)b->h[i])[e] = (u < 0 ? -1.0f : 1.0f) * (0.25f + 3.75f * (u < 0 ? -u : u));
        }
        ck_status st = ck_malloc(dev, bytes, &b->d[i]);
        if (!st)
            st = ck_memcpy_h2d(dev, b->d[i], b->h[i], bytes, NULL);
        if (st)
            return st;
    }
    dev_args->a_scales = b->d[0], dev_args->b_scales = b->d[1], dev_args->b_zeros = b->d[2];
    host_args->a_scales = b->h[0], host_args->b_scales = b->h[1], host_args->b_zeros = b->h[2];
    return CK_SUCCESS;
}

void prof_gemm_quant_free(ck_device *dev, prof_gemm_quant_bufs *b)
{
    for (int i = 0; i < 3; ++i) {
        free(b->h[i]);
        if (b->d[i])
            ck_free(dev, b->d[i]);
        b->h[i] = b->d[i] = NULL;
    }
}

static double dtype_bytes(ck_dtype t)
{
    size_t b = 0;
    return ck_dtype_storage_size(t, 1, &b) == CK_SUCCESS && b ? (double)b : 1.0;
}

/* Entries of an operand's scale matrix (0 per-tensor). */
static double scale_entries(const ck_gemm_scale *s, int64_t mn, int64_t k)
{
    if (s->mode == CK_GEMM_SCALE_TENSOR || s->block_mn < 1 || s->block_k < 1)
        return 0;
    return (double)((mn + s->block_mn - 1) / s->block_mn) *
           (double)((k + s->block_k - 1) / s->block_k);
}

double prof_gemm_bytes(const ck_gemm_problem *q, int has_c)
{
    double m = (double)q->m, n = (double)q->n, k = (double)q->k;
    double b = q->b_packed ? n * (k / 2) : k * n * dtype_bytes(q->b.dtype);
    double sa = scale_entries(&q->scale_a, q->m, q->k), sb = scale_entries(&q->scale_b, q->n, q->k);
    double bytes = m * k * dtype_bytes(q->a.dtype) + b + 4 * (sa + sb) + (q->b_zeros ? sb : 0) +
                   m * n * dtype_bytes(q->d.dtype) * (has_c ? 2 : 1);
    if (q->bias != CK_GEMM_BIAS_NONE)
        bytes += (q->bias == CK_GEMM_BIAS_ROW ? m : n) * dtype_bytes(q->bias_dtype);
    return bytes * (double)q->batch;
}
