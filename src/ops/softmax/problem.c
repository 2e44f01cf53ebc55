/*
 * ck_softmax's problem (softmax_plan.h): the argument checks, each refusal a sentence naming the
 * argument, then the problem fields of smx_plan (types, mask, log, row length, elements per
 * access, 16-byte accesses) and the launch geometry (smx_geom: rows, strides, the mask's row
 * map, the causal diagonal). Also the type codes and the row merging that top-k softmax shares.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ck/softmax.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/softmax/softmax_internal.h"
#include "ops/softmax/softmax_plan.h"

#define OP "ck_softmax"

int ck_smx_code(ck_dtype dt)
{
    return dt == CK_DTYPE_F32 ? 0 : dt == CK_DTYPE_F16 ? 1 : dt == CK_DTYPE_BF16 ? 2 : -1;
}

int ck_smx_dtype_code(int code)
{
    return code == 0 ? CK_DTYPE_F32 : code == 1 ? CK_DTYPE_F16 : CK_DTYPE_BF16;
}

int ck_smx_size_of(int code)
{
    return code == 0 ? 4 : 2;
}

int ck_smx_rows(const char *op, const char *name, const ck_tensor *t, int64_t *rows,
                int64_t *row_stride, ck_status *st)
{
    int r = t->rank;
    int64_t n = t->shape[r - 1];
    if (n > 1 && t->strides[r - 1] != 1) {
        *st = ck_fail(CK_ERROR_UNSUPPORTED,
                      "%s: %s %s has a last-dimension stride of %lld; the last dimension must be "
                      "contiguous (stride 1).",
                      op, name, ck_op_tensor_str(t), (long long)t->strides[r - 1]);
        return 0;
    }
    int64_t count = 1, stride = n, prev_len = 0, prev_stride = 0;
    int have = 0;
    for (int d = r - 2; d >= 0; --d) {
        int64_t len = t->shape[d];
        count *= len;
        if (len <= 1)
            continue;
        if (!have) {
            stride = t->strides[d];
            have = 1;
        } else if (t->strides[d] != prev_stride * prev_len) {
            *st = ck_fail(CK_ERROR_UNSUPPORTED,
                          "%s: the leading dimensions of %s %s do not merge into rows of one "
                          "stride (dimension %d has stride %lld, expected %lld).",
                          op, name, ck_op_tensor_str(t), d, (long long)t->strides[d],
                          (long long)(prev_stride * prev_len));
            return 0;
        }
        prev_len = len;
        prev_stride = t->strides[d];
    }
    *rows = count;
    *row_stride = stride;
    return 1;
}

void ck_softmax_options_init(ck_softmax_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->scale = 1.0f;
}

static int aligned16(const void *ptr, int64_t rows, int64_t row_stride, int size, int vec)
{
    if ((vec * size) % 16 != 0 || ((uintptr_t)ptr % 16) != 0)
        return 0;
    return rows <= 1 || (row_stride * size) % 16 == 0;
}

void ck_smx_problem_key(const smx_plan *p, int64_t rows, char *buf, size_t size)
{
    snprintf(buf, size, "%s>%s/n=%lld/rows=%lld/mask=%d%s/log=%d/w=%d%d%d",
             ck_dtype_name((ck_dtype)ck_smx_dtype_code(p->ti)),
             ck_dtype_name((ck_dtype)ck_smx_dtype_code(p->to)), p->n, (long long)rows, p->maskbits,
             (p->maskbits & 1) ? ck_dtype_name((ck_dtype)ck_smx_dtype_code(p->tm)) : "", p->logsm,
             p->wide_x, p->wide_y, p->wide_m);
}

/* Map the mask's rows onto x's: mask row offset of x row r = ((r / mdiv) % mmod) * ms. */
static ck_status mask_map(const ck_tensor *x, const ck_tensor *mk, int64_t *ms, int64_t *mdiv,
                          int64_t *mmod)
{
    int r = x->rank, q = mk->rank;
    int64_t n = x->shape[r - 1];
    if (q < 1 || q > r || mk->shape[q - 1] != n)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": mask %s does not broadcast to x %s: its rank must be 1 to %d and its "
                          "last length %lld.",
                       ck_op_tensor_str(mk), ck_op_tensor_str(x), r, (long long)n);
    if (n > 1 && mk->strides[q - 1] != 1)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": mask %s: the last dimension must be contiguous (stride 1).",
                       ck_op_tensor_str(mk));
    int first = -1, last = -1;
    for (int d = 0; d < r - 1; ++d) {
        int64_t len = d < r - q ? 1 : mk->shape[d - (r - q)];
        if (len != 1 && len != x->shape[d])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": mask %s does not broadcast to x %s (dimension %d: %lld vs %lld).",
                           ck_op_tensor_str(mk), ck_op_tensor_str(x), d, (long long)len,
                           (long long)x->shape[d]);
        if (len > 1) {
            if (first < 0)
                first = d;
            last = d;
        }
    }
    *ms = 0;
    *mdiv = 1;
    *mmod = 1;
    if (first < 0)
        return CK_SUCCESS;
    int64_t prev_stride = 0, prev_len = 0;
    for (int d = last; d >= first; --d) {
        int64_t xl = x->shape[d];
        int64_t ml = d < r - q ? 1 : mk->shape[d - (r - q)];
        if (xl == 1)
            continue;
        if (ml == 1)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": mask %s broadcasts dimension %d of x %s between dimensions it "
                              "does not broadcast; supported: the mask's full dimensions form one "
                              "run of x's leading dimensions.",
                           ck_op_tensor_str(mk), d, ck_op_tensor_str(x));
        int64_t st = mk->strides[d - (r - q)];
        if (prev_len == 0)
            *ms = st;
        else if (st != prev_stride * prev_len)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": mask %s: its leading dimensions do not merge into rows of one "
                              "stride (dimension %d has stride %lld, expected %lld).",
                           ck_op_tensor_str(mk), d - (r - q), (long long)st,
                           (long long)(prev_stride * prev_len));
        prev_stride = st;
        prev_len = xl;
        *mmod *= xl;
    }
    for (int d = last + 1; d < r - 1; ++d)
        *mdiv *= x->shape[d];
    return CK_SUCCESS;
}

static int type_ok(const char *name, const ck_tensor *t, ck_status *st)
{
    if (ck_smx_code(t->dtype) >= 0)
        return 1;
    *st = ck_fail(CK_ERROR_UNSUPPORTED, OP ": %s has type %s; supported: f32, f16, bf16.", name,
                  ck_dtype_name(t->dtype));
    return 0;
}

void ck_smx_problem_vec(smx_plan *p)
{
    int smin =
        ck_smx_size_of(p->ti) < ck_smx_size_of(p->to) ? ck_smx_size_of(p->ti) : ck_smx_size_of(p->to);
    if ((p->maskbits & 1) && ck_smx_size_of(p->tm) < smin)
        smin = ck_smx_size_of(p->tm);
    p->vec = 16 / smin;
    while (p->vec > 1 && p->n % p->vec)
        p->vec /= 2;
}

long long ck_smx_nvec(const smx_plan *p)
{
    return p->span ? (p->n + 2LL * p->vec - 2) / p->vec : p->n / p->vec;
}

/* Rows whose 16-byte vectors are not aligned (N not a multiple of the vector of the narrowest
 * type vf; softmax_plan.h): with x 16-byte aligned, row r's aligned span starts at r * xs - h, h = (r * xs) mod
 * vf, so x is read as 16-byte vectors with only the lanes before the row (its head) and past its
 * end masked. y and the mask take 16-byte accesses over the same spans where their row offsets
 * are congruent to x's modulo vf (the same strides, say); else element accesses. */
void ck_smx_problem_span(smx_plan *p, const void *x, const void *y, const void *mask, int64_t rows,
                    int64_t xs, int64_t ys, int64_t ms, int64_t mdiv, int64_t mmod)
{
    smx_plan q = *p;
    q.n = 16; /* the full vector: 16 bytes of the narrowest type */
    ck_smx_problem_vec(&q);
    const int vf = q.vec;
    if (p->vec == vf || (uintptr_t)x % 16 != 0)
        return;
    p->span_vec = vf;
    p->span_wide_y = (uintptr_t)y % 16 == 0 && (rows <= 1 || (ys - xs) % vf == 0);
    p->span_wide_m = (p->maskbits & 1) && (uintptr_t)mask % 16 == 0 &&
                     (rows <= 1 || (mdiv == 1 && (ms - xs) % vf == 0 &&
                                    (mmod >= rows || (mmod * xs) % vf == 0)));
}

ck_status ck_smx_problem_of(const ck_tensor *x, const ck_tensor *y,
                            const ck_softmax_options *options, smx_plan *pp, smx_geom *g)
{
    memset(pp, 0, sizeof *pp);
    memset(g, 0, sizeof *g);
    CK_REQUIRE_NOT_NULL(x, OP);
    CK_REQUIRE_NOT_NULL(y, OP);
    ck_softmax_options o;
    ck_softmax_options_init(&o);
    if (options)
        o = *options;
    ck_status st = ck_op_check_tensor(OP, "x", x);
    if (st == CK_SUCCESS)
        st = ck_op_check_tensor(OP, "y", y);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(OP, "y", y);
    if (st == CK_SUCCESS && o.mask)
        st = ck_op_check_tensor(OP, "mask", o.mask);
    if (st != CK_SUCCESS)
        return st;
    if (!type_ok("x", x, &st) || !type_ok("y", y, &st) || (o.mask && !type_ok("mask", o.mask, &st)))
        return st;
    if (x->rank < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": x %s is a scalar; softmax needs rank >= 1 (it acts on the last axis).",
                       ck_op_tensor_str(x));
    st = ck_op_check_same_shape(OP, "x", x, "y", y);
    if (st != CK_SUCCESS)
        return st;
    if (!isfinite(o.scale))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": options.scale is %g; a finite number is required.", (double)o.scale);
    if (o.log != 0 && o.log != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": options.log is %d; expected 0 or 1.",
                       o.log);
    if (o.causal != 0 && o.causal != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": options.causal is %d; expected 0 or 1.",
                       o.causal);
    int r = x->rank;
    int64_t n = x->shape[r - 1];
    int64_t rows, xs, ys, ms = 0, mdiv = 1, mmod = 1;
    if (!ck_smx_rows(OP, "x", x, &rows, &xs, &st) || !ck_smx_rows(OP, "y", y, &rows, &ys, &st))
        return st;
    if (o.mask && (st = mask_map(x, o.mask, &ms, &mdiv, &mmod)) != CK_SUCCESS)
        return st;
    if (n > 0x7fffffffLL)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": x %s has rows of %lld elements; at most 2^31 - 1.",
                       ck_op_tensor_str(x), (long long)n);
    if (ck_op_overlap(x, y)) {
        int same = x->data == y->data && x->dtype == y->dtype &&
                   memcmp(x->strides, y->strides, sizeof(int64_t) * (size_t)r) == 0;
        if (!same)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": y %s overlaps x %s; supported: separate memory, or y identical "
                              "to x (in place).",
                           ck_op_tensor_str(y), ck_op_tensor_str(x));
    }
    if (o.mask && ck_op_overlap(o.mask, y))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": y %s overlaps the mask %s.",
                       ck_op_tensor_str(y), ck_op_tensor_str(o.mask));
    g->rows = rows;
    if (rows == 0 || n == 0)
        return CK_SUCCESS;
    smx_plan p;
    memset(&p, 0, sizeof p);
    p.ti = ck_smx_code(x->dtype);
    p.to = ck_smx_code(y->dtype);
    p.tm = o.mask ? ck_smx_code(o.mask->dtype) : 0;
    p.maskbits = (o.mask ? 1 : 0) | (o.causal ? 2 : 0);
    p.logsm = o.log;
    p.n = n;
    ck_smx_problem_vec(&p);
    p.wide_x = aligned16(x->data, rows, xs, ck_smx_size_of(p.ti), p.vec);
    p.wide_y = aligned16(y->data, rows, ys, ck_smx_size_of(p.to), p.vec);
    p.wide_m =
        o.mask ? aligned16(o.mask->data, mmod > 1 ? 2 : 1, ms, ck_smx_size_of(p.tm), p.vec) : 0;
    ck_smx_problem_span(&p, x->data, y->data, o.mask ? o.mask->data : NULL, rows, xs, ys, ms, mdiv, mmod);
    *pp = p;
    g->xs = xs;
    g->ys = ys;
    g->ms = ms;
    g->mdiv = mdiv;
    g->mmod = mmod;
    g->cm = o.causal ? (r >= 2 ? x->shape[r - 2] : 1) : 1;
    g->scale2 = o.scale * 1.4426950408889634f;
    g->x = x->data;
    g->y = y->data;
    g->mask = o.mask ? o.mask->data : x->data;
    return CK_SUCCESS;
}
