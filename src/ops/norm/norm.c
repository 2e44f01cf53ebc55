/*
 * layernorm2d / rmsnorm2d / smooth-quant forward: support check, instance selection, source
 * generation (constants + norm_fwd_kernel.h) and launch. docs/ops-norm.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/norm.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"

static const char *kind_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm2d"
           : kind == CK_NORM_RMSNORM ? "rmsnorm2d"
                                     : "smoothquant";
}

/* The tuning table's op names: those of `ck tune`. */
static const char *op_table_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm" : kind == CK_NORM_RMSNORM ? "rmsnorm" : "smoothquant";
}

static int esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : (t == CK_DTYPE_F16 || t == CK_DTYPE_BF16) ? 2 : 1;
}

static int is_float_io(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_F16 || t == CK_DTYPE_BF16;
}

ck_status ck_norm_view_rows(const char *op, const char *name, const ck_tensor *t, ck_norm_rows *r)
{
    ck_status st = ck_op_check_tensor(op, name, t);
    if (st != CK_SUCCESS)
        return st;
    if (t->rank < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' (%s) has rank 0; a tensor of rank >= 1 (rows x hidden) is "
                       "required.",
                       op, name, ck_op_tensor_str(t));
    int k = t->rank - 1;
    r->n = t->shape[k];
    if (r->n > 1 && t->strides[k] != 1)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: tensor '%s' (%s) has stride %lld in its last dimension; the hidden "
                       "dimension must be contiguous (stride 1).",
                       op, name, ck_op_tensor_str(t), (long long)t->strides[k]);
    r->rows = 1;
    r->stride = r->n;
    int first = 1;
    for (int i = k - 1; i >= 0; --i) {
        if (t->shape[i] == 1)
            continue;
        if (first) {
            r->stride = t->strides[i];
            first = 0;
        } else if (t->strides[i] != t->strides[i + 1] * t->shape[i + 1]) {
            /* dimension i+1 may have been skipped when of length 1: find the next used one */
            int j = i + 1;
            while (t->shape[j] == 1)
                ++j;
            if (t->strides[i] != t->strides[j] * t->shape[j])
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: tensor '%s' (%s): its leading dimensions do not collapse into "
                               "one row stride; make them contiguous.",
                               op, name, ck_op_tensor_str(t));
        }
        r->rows *= t->shape[i];
    }
    if (r->rows > 1 && r->stride < r->n)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: tensor '%s' (%s) has row stride %lld below the hidden size %lld; rows "
                       "must not overlap.",
                       op, name, ck_op_tensor_str(t), (long long)r->stride, (long long)r->n);
    return CK_SUCCESS;
}

/* A vector of `n` elements (gamma, beta, smooth, mean, rstd, y_scale): any rank, contiguous. */
ck_status ck_norm_check_vector(const char *op, const char *name, const ck_tensor *t, int64_t n,
                               int f32_only)
{
    ck_status st = ck_op_check_tensor(op, name, t);
    if (st != CK_SUCCESS)
        return st;
    if (ck_tensor_numel(t) != n || !ck_tensor_is_contiguous(t))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' is %s; a contiguous vector of %lld elements is required.",
                       op, name, ck_op_tensor_str(t), (long long)n);
    if (f32_only ? t->dtype != CK_DTYPE_F32 : !is_float_io(t->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: tensor '%s' has dtype %s; %s is supported.", op,
                       name, ck_dtype_name(t->dtype), f32_only ? "f32" : "f32, f16 or bf16");
    return CK_SUCCESS;
}

int ck_norm_row_check(const char *op, const char *name, const ck_tensor *t, const ck_norm_rows *x,
                      ck_norm_rows *r, ck_status *st)
{
    *st = ck_norm_view_rows(op, name, t, r);
    if (*st != CK_SUCCESS)
        return 0;
    if (r->n != x->n || r->rows != x->rows) {
        *st = ck_fail(CK_ERROR_INVALID_ARGUMENT,
                      "%s: tensor '%s' (%s) is %lld rows of %lld; x is %lld rows of %lld, the "
                      "shapes must match.",
                      op, name, ck_op_tensor_str(t), (long long)r->rows, (long long)r->n,
                      (long long)x->rows, (long long)x->n);
        return 0;
    }
    return 1;
}

/* Largest vector width (power of two, at most 16 bytes of x's type) that divides n and keeps
 * every access aligned: for each tensor its pointer and (row tensors) row stride in bytes must
 * be multiples of min(16, vec * element size). */
int ck_norm_pick_vec(int64_t n, int x_esize, int count, const ck_tensor *const *ts,
                     const int64_t *strides)
{
    int vec = 16 / x_esize;
    for (; vec > 1; vec /= 2) {
        if (n % vec)
            continue;
        int ok = 1;
        for (int i = 0; i < count && ok; ++i) {
            if (!ts[i])
                continue;
            int64_t a = (int64_t)vec * esize(ts[i]->dtype);
            a = a > 16 ? 16 : a;
            if ((uintptr_t)ts[i]->data % (uintptr_t)a || (strides[i] * esize(ts[i]->dtype)) % a)
                ok = 0;
        }
        if (ok)
            break;
    }
    return vec;
}

static int64_t pow2ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

/* Tuning experiments (backward): CK_NORM_INSTANCE="VPT,PERSISTENT" sets the vectors per thread
 * a row is spread over (1..8, default 1) and whether the grid is persistent (1, default) or one group
 * of rows per block (0). Invalid values are ignored. */
static void tune_knobs(int *vpt, int *persistent)
{
    const char *e = getenv("CK_NORM_INSTANCE");
    int a, b;
    if (e && sscanf(e, "%d,%d", &a, &b) == 2 && a >= 1 && a <= 8 && (b == 0 || b == 1)) {
        *vpt = a;
        *persistent = b;
    }
}

void ck_norm_pick(int64_t n, int vec, int64_t rows, int sms, ck_norm_instance *in)
{
    int64_t nv = n / vec;
    int vpt = 1, persistent = 1;
    tune_knobs(&vpt, &persistent);
    if (nv <= 32 * (int64_t)vpt) { /* a warp (or fewer lanes) per row, several rows per block */
        int64_t g = pow2ceil((nv + vpt - 1) / vpt);
        in->g = (int)(g > 32 ? 32 : g);
        in->block = 256;
    } else { /* one block per row */
        int64_t b = pow2ceil((nv + vpt - 1) / vpt);
        in->block = (int)(b < 64 ? 64 : b > 1024 ? 1024 : b);
        in->g = in->block;
    }
    in->vec = vec;
    in->raw = 0;
    in->cluster = 1;
    in->iters = (int)((nv + in->g - 1) / in->g);
    /* registers: the dgamma/dbeta accumulators (2 x iters x vec floats) come first; x and dy
     * are cached for the second pass (2 x vec floats per vector) within 32 floats per thread
     * in 1024-thread blocks (64 registers), 48 in smaller ones; the rest is re-read (L2) */
    int budget = (in->block >= 1024 ? 32 : 48) - 2 * in->iters * vec;
    int fit = budget > 0 ? budget / (2 * vec) : 0;
    in->cache = fit < in->iters ? fit : in->iters;
    int64_t rpb = in->block / in->g;
    int64_t need = (rows + rpb - 1) / rpb;
    int64_t resident = (int64_t)(sms > 0 ? sms : 1) * (2048 / in->block);
    in->grid = (unsigned)(need < resident || !persistent ? need : resident);
    if (in->grid == 0)
        in->grid = 1;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Developer switches of the forward (over a tuning-table entry): CK_NORM_FWD="G,VALS,RAW,BLOCK"
 * - G threads per row (a power of two 1..1024, 0: automatic), VALS the most values per thread
 * kept as f32 before a larger block (or the raw cache) is chosen (default 32), RAW 0/1
 * forbids/forces the raw cache where it is allowed (-1: automatic), BLOCK threads per block of
 * the lane-group instance (G <= 32; default 128); CK_NORM_CLUSTER="C,G" (below). Missing
 * trailing fields keep their defaults; invalid values are ignored. */
void ck_norm_fwd_knobs_none(ck_norm_fwd_knobs *k)
{
    memset(k, 0, sizeof *k);
    k->vals = 32;
    k->raw = -1;
    k->block = 128;
}

void ck_norm_fwd_knobs_env(ck_norm_fwd_knobs *k)
{
    const char *e = getenv("CK_NORM_FWD");
    int v[4] = {0, 32, -1, 128};
    int got = e ? sscanf(e, "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]) : 0;
    if (got >= 1 && v[0] >= 0 && v[0] <= 1024 && (v[0] & (v[0] - 1)) == 0)
        k->g = v[0];
    if (got >= 2 && v[1] >= 4 && v[1] <= 64) {
        k->vals = v[1];
        k->vals_set = 1;
    }
    if (got >= 3 && v[2] >= -1 && v[2] <= 1)
        k->raw = v[2];
    if (got >= 4 && v[3] >= 32 && v[3] <= 1024 && (v[3] & (v[3] - 1)) == 0)
        k->block = v[3];
    const char *ce = getenv("CK_NORM_CLUSTER");
    int ca = 0, cb = 0;
    if (ce && sscanf(ce, "%d,%d", &ca, &cb) == 2 && (ca == 2 || ca == 4 || ca == 8) &&
        (cb == 128 || cb == 256 || cb == 512)) {
        k->cc = ca;
        k->cg = cb;
    }
}

int ck_norm_fwd_knobs_parse(ck_norm_fwd_knobs *k, const char *text)
{
    int g, raw, block, c;
    if (strcmp(text, "auto") == 0)
        return 1;
    if (sscanf(text, "fwd,%d,%d,%d,%d", &g, &raw, &block, &c) != 4 || g < 1 || g > 1024 ||
        (g & (g - 1)) || raw < -1 || raw > 1 || block < 1 || block > 1024 || c < 1 || c > 8)
        return 0;
    if (c > 1) { /* the cluster instance: G threads per block, raw codes */
        k->cc = c;
        k->cg = g;
        return 1;
    }
    k->g = g;
    k->raw = raw;
    k->block = block;
    return 1;
}

void ck_norm_fwd_instance_name(const ck_norm_instance *in, char *buf, size_t size)
{
    snprintf(buf, size, "fwd,%d,%d,%d,%d", in->g, in->raw, in->block, in->cluster);
}

void ck_norm_pick_fwd(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                      ck_norm_instance *in)
{
    ck_norm_fwd_knobs kn;
    ck_norm_fwd_knobs_none(&kn);
    ck_norm_fwd_knobs_env(&kn);
    ck_norm_pick_fwd_with(n, vec, rows, raw_ok, clusters_ok, &kn, in);
}

void ck_norm_pick_fwd_with(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                           const ck_norm_fwd_knobs *knobs, ck_norm_instance *in)
{
    const ck_norm_fwd_knobs kn = *knobs;
    int64_t nv = n / vec;
    int g = kn.g, raw = 0;
    in->cluster = 1;
    /* Opt-in (knobs cc, cg: C = 2, 4 or 8 blocks of G = 128, 256 or 512 threads; a tuning-table
     * entry or CK_NORM_CLUSTER=C,G): 16-bit rows of 32,769 to 65,536 elements split over a
     * thread-block cluster, 64 raw values per thread at most, the statistics exchanged with
     * st.async (norm_fwd_kernel.h). Not the default: slower on the H100 (bench/RESULTS.md). */
    int cc = kn.cc, cg = kn.cg;
    if (cc > 0 && raw_ok && clusters_ok && kn.g == 0 && !kn.vals_set && kn.raw != 0 &&
        n > 32768 && cdiv(nv, (int64_t)cc * cg) * vec <= 64 && rows <= 0x7fffffffLL / cc) {
        in->vec = vec;
        in->g = in->block = cg;
        in->cluster = cc;
        in->raw = 1;
        in->iters = in->cache = (int)cdiv(nv, (int64_t)cc * cg);
        in->grid = (unsigned)(rows * cc);
        return;
    }
    if (g == 0) {
        if (cdiv(nv, 32) * vec <= 32) { /* up to a warp per row, 4 vectors per lane */
            int64_t p = pow2ceil(cdiv(nv, 4));
            g = (int)(p > 32 ? 32 : p);
            raw = raw_ok == 2 && kn.raw != 0; /* bf16: fewer registers (N 512: 40, not 54) */
        } else {
            /* one block per row: the smallest block holding at most `vals` f32 per thread;
             * beyond, 16-bit x keeps raw codes (up to 64 per thread: 32 registers) in 512 or
             * 1024 threads, else 1024 threads and the rest of the row re-read from L2 */
            g = 0;
            /* bf16 rows longer than 8192: 8 vectors (64 raw values) per thread. H100,
             * layernorm 16384x32768: 2.93 TB/s with 512 threads against 2.57 with 1024
             * (32 values each); 32768x16384: 2.92 with 256 against 2.68 with 512 */
            if (raw_ok == 2 && kn.raw != 0 && !kn.vals_set && n > 8192)
                for (int b = 64; b <= 1024 && !g; b *= 2)
                    if (cdiv(nv, b) * vec <= 64)
                        g = b;
            for (int b = 64; b <= 1024 && !g; b *= 2)
                if (cdiv(nv, b) * vec <= kn.vals)
                    g = b;
            /* bf16 keeps raw codes by default (a shift converts them): 32 registers instead
             * of 39-40, so 4 blocks of 512 threads fit an SM */
            raw = g && raw_ok == 2 && kn.raw != 0;
            if (!g && raw_ok && kn.raw != 0) {
                for (int b = 512; b <= 1024 && !g; b *= 2)
                    if (cdiv(nv, b) * vec <= 64)
                        g = b;
                raw = g != 0;
            }
            if (!g)
                g = 1024;
        }
    }
    int64_t iters = cdiv(nv, g);
    if (raw_ok && kn.raw == 1 && iters * vec <= 64)
        raw = 1;
    if (kn.raw == 0)
        raw = 0;
    in->vec = vec;
    in->g = g;
    in->raw = raw;
    in->block = g > 32 ? g : (kn.block >= g ? kn.block : 32);
    in->iters = (int)iters;
    /* register budget of the cache: 64 raw values (32 registers); f32: 32 values, 16 in
     * 1024-thread blocks (at most 64 registers per thread) */
    int budget = raw ? 64 : g >= 1024 ? 16 : 32;
    if (g <= 32)
        budget = 32;
    in->cache = in->iters * vec <= budget ? in->iters : budget / vec;
    int64_t rpb = in->block / in->g;
    int64_t need = cdiv(rows, rpb);
    in->grid = (unsigned)(need < 0x7fffffffLL ? (need > 0 ? need : 1) : 0x7fffffffLL);
}

char *ck_norm_fwd_source(int kind, int64_t n, const ck_norm_instance *in, int xt, int yt, int gt,
                         int bt, int rt, int ot, int st, int want_mean, int want_rstd)
{
    size_t cap = 2048;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    int qmax = yt == CK_DTYPE_I8 ? 127 : yt == CK_DTYPE_FP8_E4M3 ? 448 : 0;
    snprintf(s, cap,
             "/* ck %s forward: generated by src/ops/norm/norm.c */\n"
             "#include \"ck_device.h\"\n"
             "#define NORM_KIND %d\n#define NORM_N %lld\n#define NORM_VEC %d\n"
             "#define NORM_NV %lld\n#define NORM_G %d\n#define NORM_BLOCK %d\n"
             "#define NORM_RPB %d\n#define NORM_ITERS %d\n#define NORM_CACHE %d\n"
             "#define NORM_XT %d\n#define NORM_YT %d\n#define NORM_GT %d\n#define NORM_BT %d\n"
             "#define NORM_RT %d\n#define NORM_OT %d\n#define NORM_ST %d\n"
             "#define NORM_MEAN %d\n#define NORM_RSTD %d\n#define NORM_QMAX %d\n"
             "#define NORM_RAW %d\n#define NORM_EVEN %d\n#define NORM_CLUSTER %d\n"
             "#include \"ops/norm/norm_fwd_kernel.h\"\n"
             "CK_KERNEL void CK_LAUNCH_BOUNDS(%d, %d) ck_norm_fwd(const void *x, long long sx,\n"
             "    const void *residual, long long sr, void *y, long long sy, void *resout,\n"
             "    long long so, const void *gamma, const void *beta, const void *smooth,\n"
             "    float *yscale, float *mean_out, float *rstd_out, long long rows, float eps)\n"
             "{\n"
             "    ck_norm_fwd_body(x, sx, residual, sr, y, sy, resout, so, gamma, beta, smooth,\n"
             "                     yscale, mean_out, rstd_out, rows, eps);\n"
             "}\n",
             kind_name(kind), kind, (long long)n, in->vec, (long long)(n / in->vec), in->g,
             in->block, in->block / in->g, in->iters, in->cache, xt, yt, gt < 0 ? 0 : gt, bt, rt,
             ot, st, want_mean, want_rstd, qmax, in->raw,
             (n / in->vec) % ((int64_t)in->g * in->cluster) == 0 ? 1 : 0, in->cluster, in->block,
             in->cluster > 1 ? 1024 / in->block : 1);
    return s;
}

typedef struct build_src {
    char *src;
} build_src;

static ck_status build_copy(void *user, char **source)
{
    build_src *b = user;
    *source = strdup(b->src);
    return *source ? CK_SUCCESS
                   : ck_fail(CK_ERROR_OUT_OF_MEMORY, "norm: out of host memory for a source.");
}

ck_status ck_norm_get_kernel(ck_context *ctx, char *src, const char *name, ck_kernel **k)
{
    if (!src)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "norm: out of host memory for a kernel source.");
    build_src b = {src};
    /* the source names every constant it depends on: with the kernel's name it is the key */
    size_t len = strlen(name) + strlen(src) + 2;
    char *key = malloc(len);
    if (!key) {
        free(src);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "norm: out of host memory for a kernel key.");
    }
    snprintf(key, len, "%s\n%s", name, src);
    ck_status st = ck_op_kernel(ctx, key, name, build_copy, &b, k);
    free(key);
    free(src);
    return st;
}

static ck_status check_disjoint(const char *op, int count, const char *const *names,
                                const ck_tensor *const *ts, int first_output)
{
    for (int i = first_output; i < count; ++i) {
        if (!ts[i])
            continue;
        for (int j = 0; j < count; ++j) {
            if (j == i || !ts[j] || (j > i && j >= first_output))
                continue;
            if (ck_op_overlap(ts[i], ts[j]))
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: output '%s' overlaps '%s' in memory; outputs must not alias "
                               "inputs or other outputs.",
                               op, names[i], names[j]);
        }
    }
    return CK_SUCCESS;
}

/* The tuning table's problem key: op, types, hidden size, rows, vector width, the optional
 * tensors present (residual, residual_out, beta, smooth, mean, rstd as bits). */
static void fwd_problem_key(const ck_norm_forward_desc *d, int64_t n, int64_t rows, int vec,
                            char *buf, size_t size)
{
    int extras = (d->residual ? 1 : 0) | (d->residual_out ? 2 : 0) | (d->beta ? 4 : 0) |
                 (d->smooth ? 8 : 0) | (d->mean ? 16 : 0) | (d->rstd ? 32 : 0);
    snprintf(buf, size, "%s>%s/n=%lld/rows=%lld/vec=%d/t=%d", ck_dtype_name(d->x->dtype),
             ck_dtype_name(d->y->dtype), (long long)n, (long long)rows, vec, extras);
}

/* The knobs for a problem: the instance ck tune forces, else the table's entry with the
 * developer switches over it. */
static void fwd_knobs_for(ck_context *ctx, const char *op, const char *problem,
                          ck_norm_fwd_knobs *k)
{
    char inst[128];
    int forced = 0;
    ck_norm_fwd_knobs_none(k);
    if (ck_op_tuned(ctx, op, problem, inst, sizeof inst, &forced) &&
        !ck_norm_fwd_knobs_parse(k, inst)) {
        CK_LOG(CK_LOG_WARN, "%s: tuning-table instance '%s' for %s does not parse; ignored.", op,
               inst, problem);
        ck_norm_fwd_knobs_none(k);
    }
    if (!forced)
        ck_norm_fwd_knobs_env(k);
}

static ck_status norm_forward_run(ck_context *ctx, const ck_norm_forward_desc *d,
                                  ck_norm_instance *plan, char *problem, size_t problem_size);

ck_status ck_norm_forward(ck_context *ctx, const ck_norm_forward_desc *d)
{
    return norm_forward_run(ctx, d, NULL, NULL, 0);
}

ck_status ck_norm_forward_plan(ck_context *ctx, const ck_norm_forward_desc *d,
                               ck_norm_instance *in, char *problem, size_t problem_size)
{
    memset(in, 0, sizeof *in);
    return norm_forward_run(ctx, d, in, problem, problem_size);
}

/* The checks, the problem and the policy; then the launch, or (plan != NULL) only the plan. */
static ck_status norm_forward_run(ck_context *ctx, const ck_norm_forward_desc *d,
                                  ck_norm_instance *plan, char *problem, size_t problem_size)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_norm_forward");
    CK_REQUIRE_NOT_NULL(d, "ck_norm_forward");
    if (d->kind != CK_NORM_LAYERNORM && d->kind != CK_NORM_RMSNORM && d->kind != CK_NORM_NONE)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_norm_forward: kind %d is not CK_NORM_LAYERNORM, CK_NORM_RMSNORM or "
                       "CK_NORM_NONE.",
                       (int)d->kind);
    const char *op = kind_name(d->kind);
    if (!d->x || !d->y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: tensors 'x' and 'y' are required.", op);
    ck_status st;
    ck_norm_rows xr;
    if ((st = ck_norm_view_rows(op, "x", d->x, &xr)) != CK_SUCCESS)
        return st;
    if (!is_float_io(d->x->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: x has dtype %s; f32, f16 or bf16 is supported.",
                       op, ck_dtype_name(d->x->dtype));
    if (xr.n > CK_NORM_MAX_N)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: hidden size %lld (x is %s) exceeds the supported maximum %d.", op,
                       (long long)xr.n, ck_op_tensor_str(d->x), (int)CK_NORM_MAX_N);
    if (xr.n == 0 && xr.rows > 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: x (%s) has an empty hidden dimension; normalizing zero elements is "
                       "undefined.",
                       op, ck_op_tensor_str(d->x));
    ck_norm_rows yr, rr = xr, orr = xr;
    if (!ck_norm_row_check(op, "y", d->y, &xr, &yr, &st))
        return st;
    int quant = d->y->dtype == CK_DTYPE_I8 || d->y->dtype == CK_DTYPE_FP8_E4M3;
    if (!quant && !is_float_io(d->y->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: y has dtype %s; f32, f16, bf16 (or i8, fp8e4m3 quantized) is supported.",
                       op, ck_dtype_name(d->y->dtype));
    if (d->kind == CK_NORM_NONE && !quant)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "smoothquant: y has dtype %s; the quantized types i8 and fp8e4m3 are "
                       "supported.",
                       ck_dtype_name(d->y->dtype));
    if (d->residual && !ck_norm_row_check(op, "residual", d->residual, &xr, &rr, &st))
        return st;
    if (d->residual && !is_float_io(d->residual->dtype))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: residual has dtype %s; f32, f16 or bf16.", op,
                       ck_dtype_name(d->residual->dtype));
    if (d->residual_out) {
        if (!d->residual)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: residual_out is given without residual; it receives x + "
                           "residual.",
                           op);
        if (!ck_norm_row_check(op, "residual_out", d->residual_out, &xr, &orr, &st))
            return st;
        if (!is_float_io(d->residual_out->dtype))
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: residual_out has dtype %s; f32, f16 or bf16 is supported.", op,
                           ck_dtype_name(d->residual_out->dtype));
    }
    if (d->kind == CK_NORM_NONE) {
        if (d->gamma || d->beta || d->mean || d->rstd)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "smoothquant: gamma, beta, mean and rstd must be NULL (no "
                           "normalization).");
    } else {
        if (!d->gamma)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: gamma is required.", op);
        if ((st = ck_norm_check_vector(op, "gamma", d->gamma, xr.n, 0)) != CK_SUCCESS)
            return st;
    }
    if (d->beta && d->kind != CK_NORM_LAYERNORM)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: beta is only for layernorm; pass NULL.",
                       op);
    if (d->beta && (st = ck_norm_check_vector(op, "beta", d->beta, xr.n, 0)) != CK_SUCCESS)
        return st;
    if (d->smooth && !quant)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: smooth is given but y (%s) is not quantized; smooth scales y before "
                       "quantization to i8 or fp8e4m3.",
                       op, ck_op_tensor_str(d->y));
    if (d->smooth && (st = ck_norm_check_vector(op, "smooth", d->smooth, xr.n, 0)) != CK_SUCCESS)
        return st;
    if (quant && !d->y_scale)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: y is quantized (%s) and needs y_scale (f32, one per row).", op,
                       ck_dtype_name(d->y->dtype));
    if (!quant && d->y_scale)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: y_scale is given but y (%s) is not quantized.", op,
                       ck_op_tensor_str(d->y));
    if (d->y_scale &&
        (st = ck_norm_check_vector(op, "y_scale", d->y_scale, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (d->mean && d->kind != CK_NORM_LAYERNORM)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: mean is only for layernorm; pass NULL.",
                       op);
    if (d->mean && (st = ck_norm_check_vector(op, "mean", d->mean, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (d->rstd && (st = ck_norm_check_vector(op, "rstd", d->rstd, xr.rows, 1)) != CK_SUCCESS)
        return st;
    if (!(d->epsilon >= 0.0f) || d->epsilon > 1e30f)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: epsilon %g is not a finite value >= 0.", op, (double)d->epsilon);
    const char *names[] = {"x",    "residual", "gamma", "beta", "smooth",
                           "y",    "y_scale",  "residual_out", "mean", "rstd"};
    const ck_tensor *all[] = {d->x, d->residual, d->gamma, d->beta, d->smooth,
                              d->y, d->y_scale, d->residual_out, d->mean, d->rstd};
    if ((st = check_disjoint(op, 10, names, all, 5)) != CK_SUCCESS)
        return st;
    if (xr.rows == 0)
        return CK_SUCCESS;

    const ck_tensor *vt[] = {d->x, d->residual, d->y, d->residual_out, d->gamma, d->beta,
                             d->smooth};
    int64_t vs[] = {xr.stride, rr.stride, yr.stride, orr.stride, 0, 0, 0};
    int vec = ck_norm_pick_vec(xr.n, esize(d->x->dtype), 7, vt, vs);
    ck_norm_instance in;
    int raw_ok = (d->x->dtype == CK_DTYPE_BF16 || d->x->dtype == CK_DTYPE_F16) && vec == 8 &&
                 !d->residual;
    raw_ok = raw_ok && d->x->dtype == CK_DTYPE_BF16 ? 2 : raw_ok;
    const ck_device_props *props = ck_op_props(ctx);
    char key[128];
    ck_norm_fwd_knobs knobs;
    fwd_problem_key(d, xr.n, xr.rows, vec, key, sizeof key);
    fwd_knobs_for(ctx, op_table_name(d->kind), key, &knobs);
    ck_norm_pick_fwd_with(xr.n, vec, xr.rows, raw_ok,
                          props->backend == CK_BACKEND_HOST || props->cc_major >= 9, &knobs, &in);
    if (plan) {
        *plan = in;
        snprintf(problem, problem_size, "%s", key);
        return CK_SUCCESS;
    }
    char *src = ck_norm_fwd_source(
        d->kind, xr.n, &in, d->x->dtype, d->y->dtype, d->gamma ? (int)d->gamma->dtype : -1,
        d->beta ? (int)d->beta->dtype : -1, d->residual ? (int)d->residual->dtype : -1,
        d->residual_out ? (int)d->residual_out->dtype : -1, d->smooth ? (int)d->smooth->dtype : -1,
        d->mean != NULL, d->rstd != NULL);
    ck_kernel *k = NULL;
    if ((st = ck_norm_get_kernel(ctx, src, "ck_norm_fwd", &k)) != CK_SUCCESS)
        return ck_fail_context(st, "%s", op);
    const void *px = d->x->data, *pr = d->residual ? d->residual->data : NULL;
    void *py = d->y->data, *po = d->residual_out ? d->residual_out->data : NULL;
    const void *pg = d->gamma ? d->gamma->data : NULL, *pb = d->beta ? d->beta->data : NULL;
    const void *ps = d->smooth ? d->smooth->data : NULL;
    float *pscale = d->y_scale ? d->y_scale->data : NULL;
    float *pmean = d->mean ? d->mean->data : NULL, *prstd = d->rstd ? d->rstd->data : NULL;
    long long sx = xr.stride, sr = rr.stride, sy = yr.stride, so = orr.stride, rows = xr.rows;
    float eps = d->epsilon;
    void *args[] = {&px, &sx, &pr, &sr, &py, &sy, &po, &so,
                    &pg, &pb, &ps, &pscale, &pmean, &prstd, &rows, &eps};
    size_t sizes[] = {sizeof px, sizeof sx, sizeof pr, sizeof sr, sizeof py, sizeof sy,
                      sizeof po, sizeof so, sizeof pg, sizeof pb, sizeof ps, sizeof pscale,
                      sizeof pmean, sizeof prstd, sizeof rows, sizeof eps};
    if (in.cluster > 1) {
        ck_launch_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.grid[0] = in.grid;
        cfg.block[0] = (unsigned)in.block;
        cfg.cluster[0] = (unsigned)in.cluster;
        cfg.stream = ck_context_stream(ctx);
        st = ck_launch(k, &cfg, args, sizes, 16);
    } else {
        st = ck_op_launch(ctx, k, in.grid, 1, 1, (unsigned)in.block, 0, args, sizes, 16);
    }
    return st == CK_SUCCESS ? st : ck_fail_context(st, "%s", op);
}

ck_status ck_layernorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                                 const ck_tensor *beta, float epsilon, ck_tensor *y)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_LAYERNORM;
    d.epsilon = epsilon;
    d.x = x;
    d.gamma = gamma;
    d.beta = beta;
    d.y = y;
    return ck_norm_forward(ctx, &d);
}

ck_status ck_rmsnorm2d_forward(ck_context *ctx, const ck_tensor *x, const ck_tensor *gamma,
                               float epsilon, ck_tensor *y)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_RMSNORM;
    d.epsilon = epsilon;
    d.x = x;
    d.gamma = gamma;
    d.y = y;
    return ck_norm_forward(ctx, &d);
}

ck_status ck_smoothquant(ck_context *ctx, const ck_tensor *x, const ck_tensor *smooth,
                         ck_tensor *y, ck_tensor *y_scale)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_NONE;
    d.x = x;
    d.smooth = smooth;
    d.y = y;
    d.y_scale = y_scale;
    return ck_norm_forward(ctx, &d);
}
