/*
 * ck_reduce: checks, canonical form (kept x reduced dimensions, collapsed), instance choice,
 * source generation and launch. Device code: ops/reduce/reduce_kernel.h. docs/ops-reduce.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/reduce.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce_geom_kernel.h"
#include "ops/reduce/reduce_internal.h"

#define OP "ck_reduce"

static const char *const op_names[CK_REDUCE_OP_COUNT] = {"sum",   "mean",  "max",    "min",
                                                         "sumsq", "norm2", "argmax", "argmin"};

void ck_reduce_options_init(ck_reduce_options *opt)
{
    if (!opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->pre = CK_REDUCE_PRE_NONE;
    opt->scale = 1.0;
}

const char *ck_reduce_op_name(ck_reduce_op op)
{
    return (unsigned)op < CK_REDUCE_OP_COUNT ? op_names[op] : NULL;
}

ck_status ck_reduce_op_from_name(const char *name, ck_reduce_op *op)
{
    CK_REQUIRE_NOT_NULL(name, "ck_reduce_op_from_name");
    CK_REQUIRE_NOT_NULL(op, "ck_reduce_op_from_name");
    for (int i = 0; i < CK_REDUCE_OP_COUNT; ++i)
        if (strcmp(name, op_names[i]) == 0) {
            *op = (ck_reduce_op)i;
            return CK_SUCCESS;
        }
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_reduce_op_from_name: unknown reduction '%s'; the reductions are sum, "
                   "mean, max, min, sumsq, norm2, argmax and argmin.",
                   name);
}

static int is_arg(ck_reduce_op op) { return op == CK_REDUCE_ARGMAX || op == CK_REDUCE_ARGMIN; }

static int in_size(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F64:
        return 8;
    case CK_DTYPE_F32:
    case CK_DTYPE_I32:
        return 4;
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return 2;
    case CK_DTYPE_FP8_E4M3:
    case CK_DTYPE_FP8_E5M2:
    case CK_DTYPE_FP8_E4M3_FNUZ:
    case CK_DTYPE_FP8_E5M2_FNUZ:
    case CK_DTYPE_I8:
    case CK_DTYPE_U8:
        return 1;
    default:
        return 0;
    }
}

static int out_ok(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_F64 || t == CK_DTYPE_F16 || t == CK_DTYPE_BF16 ||
           t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2 || t == CK_DTYPE_FP8_E4M3_FNUZ ||
           t == CK_DTYPE_FP8_E5M2_FNUZ;
}

/* The canonical problem. */
typedef struct canon {
    int kd, rd;
    int64_t kl[RD_MAXD], kxs[RD_MAXD], kys[RD_MAXD], rl[RD_MAXD], rxs[RD_MAXD];
    int64_t rows, n;
} canon;

/* Checks shared by ck_reduce and its reference; fills the reduced-axis mask. */
static ck_status check_common(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                              const ck_reduce_options *opt, int *mask)
{
    if ((unsigned)op >= CK_REDUCE_OP_COUNT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": op %d is not a ck_reduce_op (0 sum ... 7 argmin).", (int)op);
    ck_status st = ck_op_check_tensor(OP, "x", x);
    if (st != CK_SUCCESS)
        return st;
    if (x->rank > CK_REDUCE_MAX_RANK)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": x %s has rank %d; ranks 0 to %d are supported.",
                       ck_op_tensor_str(x), x->rank, CK_REDUCE_MAX_RANK);
    if (!in_size(x->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": x has type %s; supported: f32, f64, f16, bf16, fp8e4m3, fp8e5m2 (and "
                          "FNUZ), i8, u8, i32.",
                       ck_dtype_name(x->dtype));
    if (naxes > 0 && !axes)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": argument 'axes' is NULL but naxes is %d; pass an array of %d axis "
                          "numbers.",
                       naxes, naxes);
    if (naxes <= 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": the list of reduced axes is empty (naxes %d); list at least one axis "
                          "(to reduce every axis of x %s, list them all).",
                       naxes, ck_op_tensor_str(x));
    if (naxes > x->rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %d reduced axes for x %s of rank %d; each axis may appear once.",
                       naxes, ck_op_tensor_str(x), x->rank);
    for (int d = 0; d < CK_REDUCE_MAX_RANK; ++d)
        mask[d] = 0;
    for (int i = 0; i < naxes; ++i) {
        int a = axes[i];
        if (a < -x->rank || a >= x->rank)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": axis %d (axes[%d]) is out of range for x %s of rank %d (valid: "
                              "%d to %d).",
                           a, i, ck_op_tensor_str(x), x->rank, -x->rank, x->rank - 1);
        if (a < 0)
            a += x->rank;
        if (mask[a])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": axis %d appears more than once in the reduced axes (axes[%d] = "
                              "%d).",
                           a, i, axes[i]);
        mask[a] = 1;
    }
    if (opt->pre != CK_REDUCE_PRE_NONE && opt->pre != CK_REDUCE_PRE_ABS &&
        opt->pre != CK_REDUCE_PRE_SQUARE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": pre-op %d is not a ck_reduce_pre (0 none, 1 abs, 2 square).",
                       (int)opt->pre);
    if (opt->flags & ~(unsigned)CK_REDUCE_FAST)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": options.flags 0x%x has unknown bits; the only flag is CK_REDUCE_FAST "
                          "(0x%x).",
                       opt->flags, (unsigned)CK_REDUCE_FAST);
    if (!isfinite(opt->scale))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": options.scale is %g; a finite number is required.", opt->scale);
    if (is_arg(op) && (opt->scale != 1.0 || opt->post_sqrt))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s writes indices; it takes no post-op (scale %g, sqrt %d).",
                       op_names[op], opt->scale, opt->post_sqrt);
    int64_t n = 1, rows = 1;
    for (int d = 0; d < x->rank; ++d) {
        if (mask[d])
            n *= x->shape[d];
        else
            rows *= x->shape[d];
    }
    if (n == 0 && rows > 0 &&
        (op == CK_REDUCE_MAX || op == CK_REDUCE_MIN || is_arg(op)))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s over zero elements (x %s reduced over axes of length 0) has no "
                          "value; only sum, mean, sumsq and norm2 accept an empty reduction.",
                       op_names[op], ck_op_tensor_str(x));
    if (is_arg(op) && n > INT32_MAX)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s over %lld elements: indices are written as i32, so at most "
                          "2147483647 elements may be reduced.",
                       op_names[op], (long long)n);
    return CK_SUCCESS;
}

/* Checks of y; builds the canonical form. */
static ck_status analyze(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                         const ck_tensor *y, const ck_reduce_options *opt, canon *c)
{
    int mask[CK_REDUCE_MAX_RANK];
    ck_status st = check_common(op, x, axes, naxes, opt, mask);
    if (st != CK_SUCCESS)
        return st;
    st = ck_op_check_tensor(OP, "y", y);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(OP, "y", y);
    if (st != CK_SUCCESS)
        return st;
    if (is_arg(op) ? y->dtype != CK_DTYPE_I32 : !out_ok(y->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       is_arg(op) ? OP ": y has type %s; %s writes i32 indices."
                                  : OP ": y has type %s; %s writes f32, f64, f16, bf16 or fp8.",
                       ck_dtype_name(y->dtype), op_names[op]);
    int keep = y->rank == x->rank;
    if (!keep && y->rank != x->rank - naxes)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": y %s has rank %d; reducing %d axes of x %s needs rank %d (axes "
                          "removed) or %d (kept with length 1).",
                       ck_op_tensor_str(y), y->rank, naxes, ck_op_tensor_str(x), x->rank - naxes,
                       x->rank);
    int kd = 0, rd = 0;
    c->rows = 1;
    c->n = 1;
    for (int d = 0, e = 0; d < x->rank; ++d) {
        int64_t want = mask[d] ? 1 : x->shape[d];
        int yd = keep ? d : e;
        if (!mask[d] || keep) {
            if (y->shape[yd] != want)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP ": y %s does not match x %s reduced over the given axes: "
                                  "dimension %d of y has length %lld, expected %lld.",
                               ck_op_tensor_str(y), ck_op_tensor_str(x), yd,
                               (long long)y->shape[yd], (long long)want);
            ++e;
        }
        if (mask[d]) {
            c->n *= x->shape[d];
            if (x->shape[d] != 1) {
                c->rl[rd] = x->shape[d];
                c->rxs[rd++] = x->strides[d];
            }
        } else {
            c->rows *= x->shape[d];
            if (x->shape[d] != 1) {
                if (y->strides[yd] == 0)
                    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                                   OP ": y %s has stride 0 in dimension %d of length %lld: "
                                      "several results would be written to one element.",
                                   ck_op_tensor_str(y), yd, (long long)y->shape[yd]);
                c->kl[kd] = x->shape[d];
                c->kxs[kd] = x->strides[d];
                c->kys[kd++] = y->strides[yd];
            }
        }
    }
    if (c->rows > 0 && c->n > 0 && ck_op_overlap(x, y))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": y %s overlaps x %s; the output must not share memory with the input.",
                       ck_op_tensor_str(y), ck_op_tensor_str(x));
    if (c->n == 0) { /* one empty reduced dimension */
        rd = 1;
        c->rl[0] = 0;
        c->rxs[0] = 1;
    }
    /* kept: the contiguous dimension of x last, then merge neighbours */
    for (int k = 0; k < kd - 1; ++k)
        if (c->kxs[k] == 1) {
            int64_t l = c->kl[k], xs = c->kxs[k], ys = c->kys[k];
            for (int j = k; j < kd - 1; ++j) {
                c->kl[j] = c->kl[j + 1];
                c->kxs[j] = c->kxs[j + 1];
                c->kys[j] = c->kys[j + 1];
            }
            c->kl[kd - 1] = l;
            c->kxs[kd - 1] = xs;
            c->kys[kd - 1] = ys;
            break;
        }
    int m = 0;
    for (int k = 0; k < kd; ++k) {
        if (m > 0 && c->kxs[m - 1] == c->kxs[k] * c->kl[k] &&
            c->kys[m - 1] == c->kys[k] * c->kl[k]) {
            c->kl[m - 1] *= c->kl[k];
            c->kxs[m - 1] = c->kxs[k];
            c->kys[m - 1] = c->kys[k];
        } else {
            c->kl[m] = c->kl[k];
            c->kxs[m] = c->kxs[k];
            c->kys[m++] = c->kys[k];
        }
    }
    c->kd = m;
    /* reduced: order by decreasing stride (value ops; argmax's index needs x's order), merge */
    if (!is_arg(op))
        for (int i = 1; i < rd; ++i)
            for (int j = i; j > 0 && c->rxs[j - 1] < c->rxs[j]; --j) {
                int64_t l = c->rl[j], s = c->rxs[j];
                c->rl[j] = c->rl[j - 1];
                c->rxs[j] = c->rxs[j - 1];
                c->rl[j - 1] = l;
                c->rxs[j - 1] = s;
            }
    m = 0;
    for (int r = 0; r < rd; ++r) {
        if (m > 0 && c->rxs[m - 1] == c->rxs[r] * c->rl[r]) {
            c->rl[m - 1] *= c->rl[r];
            c->rxs[m - 1] = c->rxs[r];
        } else {
            c->rl[m] = c->rl[r];
            c->rxs[m++] = c->rxs[r];
        }
    }
    if (m == 0) { /* every reduced axis has length 1 */
        c->rl[0] = 1;
        c->rxs[0] = 1;
        m = 1;
    }
    c->rd = m;
    return CK_SUCCESS;
}

/* ---- instance ------------------------------------------------------------------------------ */
typedef struct plan {
    int kind; /* 0 row, 1 column */
    int ti, to, acc64, op, pre, scale, sqrt_, kd, rd, vb, g, rpb, u, ct, rt;
    int kernel_kind; /* 0 row, 1 column, 2 combine: the source being built */
    size_t smem;
    rd_geom geom;
} plan;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

static void choose(plan *p, const canon *c, const ck_tensor *x, const ck_device_props *props)
{
    int isz = in_size(x->dtype);
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
        size_t per = (p->acc64 ? 8 : 4) + (is_arg((ck_reduce_op)p->op) ? 8 : 0);
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

static ck_status build_source(void *user, char **source)
{
    const plan *p = user;
    size_t cap = 2048;
    char *s = malloc(cap);
    if (!s)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    int k = snprintf(s, cap,
                     "/* ck_reduce: generated by src/ops/reduce/reduce.c */\n"
                     "#define RD_TI %d\n#define RD_TO %d\n#define RD_ACC64 %d\n#define RD_OP %d\n"
                     "#define RD_PRE %d\n#define RD_SCALE %d\n#define RD_SQRT %d\n"
                     "#define RD_KD %d\n#define RD_RD %d\n#define RD_KIND %d\n#define RD_VB %d\n"
                     "#define RD_G %d\n#define RD_RPB %d\n#define RD_U %d\n#define RD_CT %d\n"
                     "#define RD_RT %d\n#include \"ops/reduce/reduce_kernel.h\"\n",
                     p->ti, p->to, p->acc64, p->op, p->pre, p->scale, p->sqrt_, p->kd, p->rd,
                     p->kernel_kind, p->vb, p->g, p->rpb, p->u, p->ct, p->rt);
    if (p->kernel_kind == 0)
        snprintf(s + k, cap - (size_t)k,
                 "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) rd_row_k(void *y, const void *x, void *ws, "
                 "rd_geom g)\n{\n    rd_row(y, x, ws, &g);\n}\n",
                 p->g * p->rpb);
    else if (p->kernel_kind == 1)
        snprintf(s + k, cap - (size_t)k,
                 "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) rd_col_k(void *y, const void *x, void *ws, "
                 "rd_geom g)\n{\n    rd_col(y, x, ws, &g);\n}\n",
                 p->ct * p->rt);
    else
        snprintf(s + k, cap - (size_t)k,
                 "CK_KERNEL void CK_LAUNCH_BOUNDS(256) rd_combine_k(void *y, const void *ws, "
                 "rd_geom g)\n{\n    rd_combine(y, ws, &g);\n}\n");
    *source = s;
    return CK_SUCCESS;
}

static void plan_key(const plan *p, char *key, size_t size)
{
    snprintf(key, size,
             "reduce/k=%d/ti=%d/to=%d/a=%d/op=%d/pre=%d/s=%d/q=%d/kd=%d/rd=%d/vb=%d/g=%d/rpb=%d/"
             "u=%d/ct=%d/rt=%d",
             p->kernel_kind, p->ti, p->to, p->acc64, p->op, p->pre, p->scale, p->sqrt_, p->kd,
             p->rd, p->vb, p->g, p->rpb, p->u, p->ct, p->rt);
}

static ck_status make_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                           int naxes, const ck_tensor *y, const ck_reduce_options *opt, plan *p,
                           canon *c)
{
    if (!ctx)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": ctx is NULL.");
    if (!x || !y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": %s is NULL.", !x ? "x" : "y");
    ck_reduce_options defaults;
    ck_reduce_options_init(&defaults);
    if (!opt)
        opt = &defaults;
    ck_status st = analyze(op, x, axes, naxes, y, opt, c);
    if (st != CK_SUCCESS)
        return st;
    memset(p, 0, sizeof *p);
    p->ti = (int)x->dtype;
    p->to = (int)y->dtype;
    p->acc64 = x->dtype == CK_DTYPE_F64 || x->dtype == CK_DTYPE_I32;
    p->op = (int)op;
    p->pre = (int)opt->pre;
    p->scale = opt->scale != 1.0;
    p->sqrt_ = opt->post_sqrt != 0;
    p->kd = c->kd;
    p->rd = c->rd;
    rd_geom *g = &p->geom;
    for (int k = 0; k < c->kd; ++k) {
        g->kl[k] = c->kl[k];
        g->kxs[k] = c->kxs[k];
        g->kys[k] = c->kys[k];
    }
    for (int r = 0; r < c->rd; ++r) {
        g->rl[r] = c->rl[r];
        g->rxs[r] = c->rxs[r];
    }
    g->rows = c->rows;
    g->n = c->n;
    g->scale = opt->scale;
    choose(p, c, x, ck_op_props(ctx));
    return CK_SUCCESS;
}

ck_status ck_reduce_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                         ck_reduce_plan_info *info)
{
    plan p;
    canon c;
    ck_status st = make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    if (info) {
        memset(info, 0, sizeof *info);
        info->kind = p.kind;
        info->vb = p.vb;
        info->g = p.g;
        info->rpb = p.rpb;
        info->ct = p.ct;
        info->rt = p.rt;
        info->kd = p.kd;
        info->rd = p.rd;
        info->parts = p.geom.parts;
        info->rows = p.geom.rows;
        info->n = p.geom.n;
    }
    return CK_SUCCESS;
}

static void combine_plan(plan *q)
{
    q->kernel_kind = 2;
    q->ti = 0;
    q->pre = 0;
    q->vb = q->g = q->rpb = q->u = q->ct = q->rt = q->rd = 0;
}

ck_status ck_reduce_source(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                           int naxes, const ck_tensor *y, const ck_reduce_options *opt, int which,
                           char **source)
{
    CK_REQUIRE_NOT_NULL(source, "ck_reduce_source");
    *source = NULL;
    plan p;
    canon c;
    ck_status st = make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS)
        return st;
    p.kernel_kind = p.kind;
    if (which) {
        if (p.geom.parts <= 1)
            return ck_fail(CK_ERROR_NOT_FOUND,
                           "ck_reduce_source: this instance does not split; it has no combine "
                           "kernel.");
        combine_plan(&p);
    }
    return build_source(&p, source);
}

ck_status ck_reduce(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                    int naxes, const ck_tensor *y, const ck_reduce_options *opt)
{
    plan p;
    canon c;
    ck_status st = make_plan(ctx, op, x, axes, naxes, y, opt, &p, &c);
    if (st != CK_SUCCESS || c.rows == 0)
        return st;
    rd_geom *g = &p.geom;
    int64_t blocks = p.kind == 0 ? cdiv(g->rows, p.rpb) * g->parts
                                 : g->col_blocks * g->outer * g->parts;
    if (blocks > 0x7fffffffLL)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": x %s needs %lld blocks, more than a launch can have (2^31 - 1).",
                       ck_op_tensor_str(x), (long long)blocks);
    void *ws = NULL;
    if (g->parts > 1) {
        size_t per = (p.acc64 ? 8u : 4u) + (is_arg(op) ? 8u : 0u);
        st = ck_op_workspace(ctx, (size_t)g->parts * (size_t)g->rows * per, &ws);
        if (st != CK_SUCCESS)
            return st;
    }
    char key[256];
    ck_kernel *kernel = NULL;
    p.kernel_kind = p.kind;
    plan_key(&p, key, sizeof key);
    st = ck_op_kernel(ctx, key, p.kind == 0 ? "rd_row_k" : "rd_col_k", build_source, &p, &kernel);
    if (st != CK_SUCCESS)
        return st;
    void *yd = y->data, *xd = x->data;
    void *args[4] = {&yd, &xd, &ws, g};
    size_t sizes[4] = {sizeof yd, sizeof xd, sizeof ws, sizeof *g};
    unsigned block = p.kind == 0 ? (unsigned)(p.g * p.rpb) : (unsigned)(p.ct * p.rt);
    st = ck_op_launch(ctx, kernel, (unsigned)blocks, 1, 1, block, p.smem, args, sizes, 4);
    if (st != CK_SUCCESS || g->parts == 1)
        return st;
    /* second pass: the parts of each output, in order */
    plan q = p;
    combine_plan(&q);
    plan_key(&q, key, sizeof key);
    st = ck_op_kernel(ctx, key, "rd_combine_k", build_source, &q, &kernel);
    if (st != CK_SUCCESS)
        return st;
    void *cargs[3] = {&yd, &ws, g};
    size_t csizes[3] = {sizeof yd, sizeof ws, sizeof *g};
    return ck_op_launch(ctx, kernel, (unsigned)cdiv(g->rows, 256), 1, 1, 256, 0, cargs, csizes,
                        3);
}

/* ---- CPU reference --------------------------------------------------------------------- */
static double load_f64(const ck_tensor *x, int64_t off)
{
    const unsigned char *b = (const unsigned char *)x->data + off * in_size(x->dtype);
    uint64_t code = 0;
    memcpy(&code, b, (size_t)in_size(x->dtype)); /* little-endian */
    double v = 0;
    ck_convert_to_f64(x->dtype, code, &v);
    return v;
}

ck_status ck_reduce_reference(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                              const ck_reduce_options *opt, double *val, int64_t *idx,
                              double *mag)
{
    ck_reduce_options defaults;
    ck_reduce_options_init(&defaults);
    if (!opt)
        opt = &defaults;
    if (!x || !val || !idx || !mag)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_reduce_reference: an argument is NULL.");
    int mask[CK_REDUCE_MAX_RANK];
    ck_status st = check_common(op, x, axes, naxes, opt, mask);
    if (st != CK_SUCCESS)
        return st;
    int r = x->rank;
    int64_t rows = 1, n = 1;
    for (int d = 0; d < r; ++d) {
        if (mask[d])
            n *= x->shape[d];
        else
            rows *= x->shape[d];
    }
    int64_t ki[CK_REDUCE_MAX_RANK] = {0};
    for (int64_t row = 0; row < rows; ++row) {
        int64_t base = 0, rem = row;
        for (int d = r - 1; d >= 0; --d)
            if (!mask[d]) {
                ki[d] = rem % x->shape[d];
                rem /= x->shape[d];
                base += ki[d] * x->strides[d];
            }
        int maxlike = op == CK_REDUCE_MAX || op == CK_REDUCE_ARGMAX;
        double acc = op == CK_REDUCE_MAX || op == CK_REDUCE_ARGMAX   ? -INFINITY
                     : op == CK_REDUCE_MIN || op == CK_REDUCE_ARGMIN ? INFINITY
                                                                     : 0.0;
        double m = 0;
        int64_t best = -1;
        for (int64_t j = 0; j < n; ++j) {
            int64_t off = base, q = j;
            for (int d = r - 1; d >= 0; --d)
                if (mask[d]) {
                    off += (q % x->shape[d]) * x->strides[d];
                    q /= x->shape[d];
                }
            double v = load_f64(x, off);
            if (opt->pre == CK_REDUCE_PRE_ABS)
                v = fabs(v);
            else if (opt->pre == CK_REDUCE_PRE_SQUARE)
                v = v * v;
            if (op == CK_REDUCE_SUM_SQUARES || op == CK_REDUCE_NORM2)
                v = v * v;
            switch (op) {
            case CK_REDUCE_MAX:
            case CK_REDUCE_MIN:
            case CK_REDUCE_ARGMAX:
            case CK_REDUCE_ARGMIN:
                if (isnan(acc))
                    break;
                if (isnan(v) || best < 0 || (maxlike ? v > acc : v < acc)) {
                    acc = v;
                    best = j;
                }
                break;
            default:
                acc += v;
                m += fabs(v);
            }
        }
        if (op == CK_REDUCE_MAX || op == CK_REDUCE_MIN)
            m = fabs(acc);
        if (op == CK_REDUCE_MEAN) {
            acc /= (double)n;
            m /= (double)n;
        } else if (op == CK_REDUCE_NORM2) {
            acc = sqrt(acc);
            m = sqrt(m);
        }
        if (!is_arg(op)) {
            acc *= opt->scale;
            m *= fabs(opt->scale);
            if (opt->post_sqrt) {
                acc = sqrt(acc);
                m = sqrt(m);
            }
        }
        val[row] = acc;
        idx[row] = best;
        mag[row] = m;
    }
    return CK_SUCCESS;
}
