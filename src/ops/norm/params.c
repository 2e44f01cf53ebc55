/*
 * THE parameter tables of the layernorm / RMSNorm kernels (norm_internal.h): each generated
 * source's #defines and its kernel cache key are printed from one list; the kernels declared
 * over the pipelines (norm_fwd_kernel.h, norm_bwd_kernel.h) with the argument structs of
 * norm_args_kernel.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"

static const char *kind_name(int kind)
{
    return kind == CK_NORM_LAYERNORM ? "layernorm2d"
           : kind == CK_NORM_RMSNORM ? "rmsnorm2d"
                                     : "smoothquant";
}

/* The launch bounds' blocks per SM: clusters, and row-in-registers instances whose row cache is
 * at most 24 registers a thread, ask for 1024 threads per SM (at most 64 registers): without it
 * ptxas took 72 registers for layernorm bf16 n 8192 (256 threads: 3 blocks per SM instead of
 * 4; the timing in bench/RESULTS.md, run Q) and up to 106 for n 1024; with it, no instance of
 * the bench's shapes spills (nvcc 13, sm_90a). Larger caches (f32 rows of 32
 * values) spill under the bound and keep 1. The bound itself is not yet timed on a GPU. */
static int fwd_bound_blocks(const ck_norm_instance *in, int qfast)
{
    if (in->looped) /* at most 64 registers a thread: a full SM's threads */
        return 1024 / in->block;
    if (in->block >= 1024)
        return 1;
    int words = in->raw ? in->cache * in->vec / 2 : in->cache * in->vec;
    /* the quantized raw-cache instances' fast epilogue: 1280 threads (48 registers, no
     * spill), the occupancy the per-element division had at 48 registers (ptxas gives the
     * fast one 56 under the 1024-thread bound) */
    if (qfast && in->raw && in->cluster == 1 && in->g > 32 && words <= 24 && 1280 % in->block == 0)
        return 1280 / in->block;
    return in->cluster > 1 || words <= 24 ? 1024 / in->block : 1;
}

/* Everything the forward's source depends on besides its text (norm_fwd_kernel.h documents
 * each constant); the last two are the launch bounds' threads and blocks per SM. */
int ck_norm_fwd_params(const ck_norm_fwd_problem *p, const ck_norm_instance *in, ck_op_param *t)
{
    int n = 0;
    int64_t nv = p->n / in->vec;
    ck_op_param_add(t, &n, "NORM_KIND", p->kind);
    ck_op_param_add(t, &n, "NORM_N", p->n);
    ck_op_param_add(t, &n, "NORM_VEC", in->vec);
    ck_op_param_add(t, &n, "NORM_NV", nv);
    ck_op_param_add(t, &n, "NORM_G", in->g);
    ck_op_param_add(t, &n, "NORM_BLOCK", in->block);
    ck_op_param_add(t, &n, "NORM_RPB", in->block / in->g);
    ck_op_param_add(t, &n, "NORM_ITERS", in->iters);
    ck_op_param_add(t, &n, "NORM_CACHE", in->cache);
    ck_op_param_add(t, &n, "NORM_XT", p->xt);
    ck_op_param_add(t, &n, "NORM_YT", p->yt);
    ck_op_param_add(t, &n, "NORM_GT", p->gt < 0 ? 0 : p->gt);
    ck_op_param_add(t, &n, "NORM_BT", p->bt);
    ck_op_param_add(t, &n, "NORM_RT", p->rt);
    ck_op_param_add(t, &n, "NORM_OT", p->ot);
    ck_op_param_add(t, &n, "NORM_ST", p->st);
    ck_op_param_add(t, &n, "NORM_MEAN", p->want_mean);
    ck_op_param_add(t, &n, "NORM_RSTD", p->want_rstd);
    int quant = p->yt == CK_DTYPE_I8 || p->yt == CK_DTYPE_FP8_E4M3, qfast = quant && !in->qexact;
    ck_op_param_add(t, &n, "NORM_QMAX", !quant ? 0 : p->yt == CK_DTYPE_I8 ? 127 : 448);
    ck_op_param_add(t, &n, "NORM_QFAST", qfast);
    ck_op_param_add(t, &n, "NORM_QCVT", qfast && in->fp8cvt);
    ck_op_param_add(t, &n, "NORM_RAW", in->raw);
    ck_op_param_add(t, &n, "NORM_EVEN", nv % ((int64_t)in->g * in->cluster) == 0 ? 1 : 0);
    ck_op_param_add(t, &n, "NORM_CLUSTER", in->cluster);
    if (in->looped) { /* the pipeline (absent: the row in registers, norm_fwd_kernel.h) */
        ck_op_param_add(t, &n, "NORM_LOOPED", 1);
        ck_op_param_add(t, &n, "NORM_SMEM", in->smem);
    }
    if (in->window) /* the read stage through tile windows (absent: norm_read_cached) */
        ck_op_param_add(t, &n, "NORM_WINDOW", 1);
    ck_op_param_add(t, &n, "NORM_BOUND_THREADS", in->block);
    ck_op_param_add(t, &n, "NORM_BOUND_BLOCKS", fwd_bound_blocks(in, qfast));
    return n;
}

int ck_norm_bwd_params(const ck_norm_bwd_problem *p, const ck_norm_instance *in, ck_op_param *t)
{
    int n = 0;
    ck_op_param_add(t, &n, "NORM_KIND", p->kind);
    ck_op_param_add(t, &n, "NORM_N", p->n);
    ck_op_param_add(t, &n, "NORM_VEC", in->vec);
    ck_op_param_add(t, &n, "NORM_NV", p->n / in->vec);
    ck_op_param_add(t, &n, "NORM_G", in->g);
    ck_op_param_add(t, &n, "NORM_BLOCK", in->block);
    ck_op_param_add(t, &n, "NORM_RPB", in->block / in->g);
    ck_op_param_add(t, &n, "NORM_ITERS", in->iters);
    ck_op_param_add(t, &n, "NORM_CACHE", in->cache);
    ck_op_param_add(t, &n, "NORM_DYT", p->dyt);
    ck_op_param_add(t, &n, "NORM_XT", p->xt);
    ck_op_param_add(t, &n, "NORM_GT", p->gt);
    ck_op_param_add(t, &n, "NORM_DXT", p->dxt);
    ck_op_param_add(t, &n, "NORM_DGT", p->dgt);
    ck_op_param_add(t, &n, "NORM_DBT", p->dbt);
    ck_op_param_add(t, &n, "NORM_RING", in->ring);
    ck_op_param_add(t, &n, "NORM_CSLICES", in->cslices > 1 ? in->cslices : 1);
    return n;
}

/* NORM_RING stages of NORM_STAGE bytes (norm_bwd_kernel.h) */
size_t ck_norm_bwd_ring_bytes(const ck_norm_bwd_problem *p, const ck_norm_instance *in)
{
    size_t vb = (size_t)in->vec * (ck_dtype_get((ck_dtype)p->xt)->storage_bits / 8 +
                                   ck_dtype_get((ck_dtype)p->dyt)->storage_bits / 8);
    return (size_t)in->ring * (size_t)in->iters * (size_t)in->block * vb;
}

/* NORM_CCOLS x NORM_CSLICES (norm_bwd_kernel.h) */
unsigned ck_norm_bwd_combine_block(const ck_norm_instance *in)
{
    return in->cslices > 1 ? 32u * (unsigned)in->cslices : 256u;
}

/* The table's value of `name` (every caller's name is in its table). */
static long long param(const ck_op_param *t, int n, const char *name)
{
    for (int i = 0; i < n; ++i)
        if (strcmp(t[i].name, name) == 0)
            return t[i].value;
    return 0;
}

static char *fwd_source(const ck_norm_fwd_problem *p, const ck_norm_instance *in)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    int n = ck_norm_fwd_params(p, in, t);
    char *defs = ck_op_params_defines(t, n - 2); /* the launch bounds are not #defines */
    if (!defs)
        return NULL;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* ck %s forward: generated by src/ops/norm/params.c */\n"
                   "#include \"ck_device.h\"\n%s",
                   kind_name(p->kind), defs);
    free(defs);
    if (in->window && ck_norm_fwd_windows(p, in, &b) != CK_SUCCESS) {
        free(b.s);
        return NULL;
    }
    ck_sbuf_printf(&b, "#include \"ops/norm/%s\"\n",
                   in->looped ? "norm_fwd_looped_kernel.h" : "norm_fwd_kernel.h");
    if (!in->looped) /* the read stage the instance takes */
        ck_sbuf_printf(&b,
                       "%s"
                       "CK_DEVICE void norm_read(const ck_norm_fwd_kargs *a, norm_pos p, "
                       "norm_row_cache *c)\n{\n    norm_read_%s(a, p, c);\n}\n",
                       in->window ? "#include \"ops/norm/norm_fwd_window_kernel.h\"\n" : "",
                       in->window ? "window" : "cached");
    ck_sbuf_printf(&b,
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%lld, %lld) ck_norm_fwd(ck_norm_fwd_kargs a)\n"
                   "{\n    %s(a);\n}\n",
                   param(t, n, "NORM_BOUND_THREADS"), param(t, n, "NORM_BOUND_BLOCKS"),
                   in->looped ? "ck_norm_fwd_looped" : "ck_norm_fwd_body");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static char *bwd_source(const ck_norm_bwd_problem *p, const ck_norm_instance *in)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    char *defs = ck_op_params_defines(t, ck_norm_bwd_params(p, in, t));
    if (!defs)
        return NULL;
    ck_sbuf b = {0};
    ck_sbuf_printf(
        &b,
        "/* ck %s backward: generated by src/ops/norm/params.c */\n"
        "#include \"ck_device.h\"\n%s"
        "#include \"ops/norm/norm_bwd_kernel.h\"\n"
        "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_norm_bwd(ck_norm_bwd_kargs a)\n"
        "{\n"
        "    ck_norm_bwd_body(a);\n"
        "}\n"
        "CK_KERNEL void ck_norm_bwd_combine(ck_norm_combine_kargs a)\n"
        "{\n"
        "    ck_norm_bwd_combine_body(a);\n"
        "}\n",
        p->kind == CK_NORM_LAYERNORM ? "layernorm2d" : "rmsnorm2d", defs, in->block);
    free(defs);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *ck_norm_fwd_source(int kind, int64_t n, const ck_norm_instance *in, int xt, int yt, int gt,
                         int bt, int rt, int ot, int st, int want_mean, int want_rstd)
{
    ck_norm_fwd_problem p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.n = n;
    p.xt = xt, p.yt = yt, p.gt = gt, p.bt = bt, p.rt = rt, p.ot = ot, p.st = st;
    p.want_mean = want_mean;
    p.want_rstd = want_rstd;
    return fwd_source(&p, in);
}

char *ck_norm_bwd_source(int kind, int64_t n, const ck_norm_instance *in, int dyt, int xt, int gt,
                         int dxt, int dgt, int dbt)
{
    ck_norm_bwd_problem p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.n = n;
    p.dyt = dyt, p.xt = xt, p.gt = gt, p.dxt = dxt, p.dgt = dgt, p.dbt = dbt;
    return bwd_source(&p, in);
}

typedef struct build_args {
    const ck_norm_fwd_problem *fwd; /* or */
    const ck_norm_bwd_problem *bwd;
    const ck_norm_instance *in;
} build_args;

static ck_status build(void *user, char **source)
{
    const build_args *b = user;
    *source = b->fwd ? fwd_source(b->fwd, b->in) : bwd_source(b->bwd, b->in);
    return *source ? CK_SUCCESS
                   : ck_fail(CK_ERROR_OUT_OF_MEMORY, "norm: out of host memory for a source.");
}

/* "norm_fwd/KIND=0/N=4096/.../k=ck_norm_fwd": the table without its prefix and the kernel. */
static ck_status kernel_of(ck_context *ctx, const char *op, const ck_op_param *t, int n,
                           const build_args *b, const char *name, ck_kernel **k)
{
    char key[1024];
    size_t len;
    if (ck_op_params_key(op, t, n, 5, key, sizeof key) != 0 ||
        (len = strlen(key)) + strlen(name) + 4 > sizeof key)
        return ck_fail(CK_ERROR_INTERNAL, "norm: the kernel key does not fit %zu bytes.",
                       sizeof key);
    snprintf(key + len, sizeof key - len, "/k=%s", name);
    return ck_op_kernel(ctx, key, name, build, (void *)b, k);
}

ck_status ck_norm_fwd_kernel(ck_context *ctx, const ck_norm_fwd_problem *p,
                             const ck_norm_instance *in, ck_kernel **k)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    build_args b = {p, NULL, in};
    return kernel_of(ctx, "norm_fwd", t, ck_norm_fwd_params(p, in, t), &b, "ck_norm_fwd", k);
}

ck_status ck_norm_bwd_kernel(ck_context *ctx, const ck_norm_bwd_problem *p,
                             const ck_norm_instance *in, const char *name, ck_kernel **k)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    build_args b = {NULL, p, in};
    return kernel_of(ctx, "norm_bwd", t, ck_norm_bwd_params(p, in, t), &b, name, k);
}
