/*
 * The decode kernel and split-KV on the host: when the decode kernel applies, its instance
 * (rows of a head group per block, keys per warp, depth of the K / V ring, parts of the key
 * range), its source and cache key (the parameter table of kernel.c), the combine kernel's, and
 * the launch of both.
 *
 * Developer switches (read at plan creation; the kernel cache keys the CK_* environment):
 * CK_ATTN_DECODE_SPLITS=N (1 to 64) replaces the policy's parts, CK_ATTN_DECODE_STAGES=S (2 to
 * 4) the ring depth, CK_ATTN_DECODE_INSTANCE=NxW the keys per warp (16, 32, 64) and warps (1, 2,
 * 4, 8). A value outside those is ignored with a CK_LOG warning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/attention/attn_internal.h"
#include "ops/common/op_common.h"

#define OP "ck_attention"

enum { DEC_MAX_SQ = 16, DEC_MAX_SPLITS = 64 };

int ck_attn_decode_ok(const ck_attn_prob *prob, int why)
{
    const ck_attention_problem *p = &prob->p;
    if (p->s_q > DEC_MAX_SQ || p->s_q < 1) {
        if (why)
            ck_fail(CK_ERROR_UNSUPPORTED,
                    OP ": the decode kernel (and split-KV) takes s_q from 1 to %d; s_q = %lld.",
                    DEC_MAX_SQ, (long long)p->s_q);
        return 0;
    }
    if (p->varlen) {
        if (why)
            ck_fail(CK_ERROR_UNSUPPORTED,
                    OP ": the decode kernel (and split-KV) takes fixed-length or paged "
                       "sequences, not varlen.");
        return 0;
    }
    if (p->dtype == CK_DTYPE_FP8_E4M3) { /* the sm90 kernel takes those */
        if (why)
            ck_fail(CK_ERROR_UNSUPPORTED,
                    OP ": the decode kernel (and split-KV) takes bf16 or f16, not fp8e4m3.");
        return 0;
    }
    return 1;
}

/* Ring depth of an instance (0: the default 2). */
static int dec_stages(const ck_attn_instance *in)
{
    return in->stages ? in->stages : 2;
}

size_t ck_attn_decode_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    const ck_attention_problem *p = &prob->p;
    size_t q = (size_t)in->tile_m * (size_t)p->d * 2;
    size_t stages = (size_t)dec_stages(in) * (size_t)in->warps * (size_t)in->tile_n *
                    (size_t)(p->d + p->d_v) * 2;
    size_t merge = (size_t)in->tile_m * (size_t)(p->d_v + 2) * 4;
    return q + (stages > merge ? stages : merge);
}

/* A developer switch's integer in [lo, hi], or 0 (unset, or outside: a warning). */
static int env_int(const char *name, int lo, int hi)
{
    const char *e = getenv(name);
    char *end = NULL;
    if (!e || !*e)
        return 0;
    long x = strtol(e, &end, 10);
    if (*end || x < lo || x > hi) {
        CK_LOG(CK_LOG_WARN, OP ": %s=%s ignored; accepted: %d to %d.", name, e, lo, hi);
        return 0;
    }
    return (int)x;
}

int ck_attn_decode_env_splits(void)
{
    return env_int("CK_ATTN_DECODE_SPLITS", 1, DEC_MAX_SPLITS);
}

/* The model's unit: the time one SM takes to read one key tile (K and V) at its share of the
 * memory bandwidth. A block's fixed cost (filling the ring, merging the warps, storing) and the
 * combine kernel's launch are counted in that unit; an SM keeps its share of the bandwidth only
 * with DEC_STREAMS blocks in flight (fewer leave it waiting on latency: bench/RESULTS.md,
 * eighth session, run R). */
enum { DEC_BLOCK_COST = 2, DEC_COMBINE_COST = 6, DEC_STREAMS = 4 };

/* One SM's time for n resident blocks of `per` key tiles each. */
static double dec_sm_time(int64_t n, int64_t per)
{
    return (double)(n < DEC_STREAMS ? DEC_STREAMS : n) * (double)(per + DEC_BLOCK_COST);
}

int ck_attn_decode_splits(const ck_attn_prob *prob, const ck_attn_instance *in, int64_t sms,
                          int64_t per_sm)
{
    const ck_attention_problem *p = &prob->p;
    int64_t rows = p->h_q / p->h_k * p->s_q, chunks = (rows + in->tile_m - 1) / in->tile_m;
    int64_t units = p->b * p->h_k * chunks, key_tile = (int64_t)in->warps * in->tile_n;
    int64_t lo, hi; /* the key tiles a mask leaves visible to some row (the kernel's t0, t1) */
    ck_attn_band(prob, p->s_q, p->s_k, &lo, &hi);
    lo = lo < 0 ? 0 : lo;
    hi = hi < p->s_k - p->s_q ? p->s_q - 1 + hi : p->s_k - 1;
    int64_t tiles = hi < lo ? 0 : hi / key_tile - lo / key_tile + 1;
    sms = sms > 0 ? sms : 1;
    per_sm = per_sm > 0 ? per_sm : 1;
    double tile_bytes = (double)key_tile * (double)(p->d + p->d_v) * 2.0;
    if (units <= 0 || tiles <= 1)
        return 1;
    int best = 1;
    double best_cost = 0.0;
    for (int s = 1; s <= DEC_MAX_SPLITS && s <= tiles; ++s) {
        int64_t per = (tiles + s - 1) / s;
        if ((s - 1) * per >= tiles) /* an empty part: a smaller count splits the same way */
            continue;
        /* the blocks an SM runs: whole rounds of per_sm resident blocks, then the rest */
        int64_t on_sm = (units * s + sms - 1) / sms, rounds = on_sm / per_sm, rest = on_sm % per_sm;
        double cost =
            (double)rounds * dec_sm_time(per_sm, per) + (rest ? dec_sm_time(rest, per) : 0);
        if (s > 1) { /* the parts' O (f32) and LSE written and read back, O written */
            double bytes = (double)(p->b * p->h_q * p->s_q) *
                           ((double)s * (double)(p->d_v + 1) * 8.0 + (double)p->d_v * 2.0);
            cost += DEC_COMBINE_COST + bytes / (double)sms / tile_bytes;
        }
        if (s == 1 || cost < best_cost)
            best = s, best_cost = cost;
    }
    return best;
}

/* Blocks of the instance one SM holds, from the device's shared memory and threads (the plan
 * asks the driver where there is one: decode_plan in kernel.c). */
static int64_t dec_per_sm(const ck_attn_prob *prob, const ck_device_props *props,
                          const ck_attn_instance *in)
{
    if (!props->shared_per_sm)
        return 1;
    int64_t n = (int64_t)(props->shared_per_sm / (ck_attn_decode_shared_bytes(prob, in) + 1024));
    if (props->max_threads_per_sm > 0 && n > props->max_threads_per_sm / (in->warps * 32))
        n = props->max_threads_per_sm / (in->warps * 32);
    n = n < 32 ? n : 32;
    return n < 1 ? 1 : n;
}

/* CK_ATTN_DECODE_INSTANCE=NxW: keys per warp and warps instead of the policy's, checked. */
static void dec_env_instance(const ck_attn_prob *prob, const ck_device_props *props,
                             ck_attn_instance *in)
{
    const char *e = getenv("CK_ATTN_DECODE_INSTANCE");
    int n = 0, w = 0;
    char tail = 0;
    if (!e || !*e)
        return;
    ck_attn_instance x = *in;
    if (sscanf(e, "%dx%d%c", &n, &w, &tail) == 2 && (w == 1 || w == 2 || w == 4 || w == 8) &&
        (n == 16 || n == 32 || n == 64)) {
        x.tile_n = n, x.warps = w;
        if (ck_attn_decode_shared_bytes(prob, &x) <= props->max_shared_per_block) {
            *in = x;
            return;
        }
    }
    CK_LOG(CK_LOG_WARN,
           OP ": CK_ATTN_DECODE_INSTANCE=%s ignored; accepted: NxW with N keys per warp (16, 32 "
              "or 64) and W warps (1, 2, 4 or 8) whose stages fit the shared memory.",
           e);
}

ck_status ck_attn_decode_policy(const ck_attn_prob *prob, const ck_device_props *props, int splits,
                                ck_attn_instance *out)
{
    const ck_attention_problem *p = &prob->p;
    if (!ck_attn_decode_ok(prob, 1))
        return CK_ERROR_UNSUPPORTED;
    if (splits < 0 || splits > DEC_MAX_SPLITS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": split-KV into %d parts; accepted: 1 .. %d (0: the policy's).", splits,
                       DEC_MAX_SPLITS);
    int64_t dmax = p->d > p->d_v ? p->d : p->d_v;
    int64_t rows = p->h_q / p->h_k * p->s_q;
    int mi = (int)((rows + 15) / 16), max_mi = dmax <= 128 ? 4 : 2;
    /* One warp of 32 keys per block, two stages (16 KiB per stage at d 128): many small
     * independent blocks per SM keep the most loads in flight and merge no warps (the kernel is
     * bandwidth bound); measured against the earlier 16 keys x 4 warps and the other shapes in
     * bench/RESULTS.md (seventh session, runs N and O); CK_ATTN_DECODE_INSTANCE times them */
    int stages = env_int("CK_ATTN_DECODE_STAGES", 2, 4);
    ck_attn_instance in = {16 * (mi < max_mi ? mi : max_mi), 32, 1, 1, 1, stages ? stages : 2};
    while (ck_attn_decode_shared_bytes(prob, &in) > props->max_shared_per_block && in.warps > 1)
        in.warps /= 2;
    if (ck_attn_decode_shared_bytes(prob, &in) > props->max_shared_per_block)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the decode kernel for d = %lld, d_v = %lld needs %zu bytes of shared "
                          "memory; the device allows %zu per block.",
                       (long long)p->d, (long long)p->d_v, ck_attn_decode_shared_bytes(prob, &in),
                       props->max_shared_per_block);
    dec_env_instance(prob, props, &in);
    if (splits == 0)
        splits = ck_attn_decode_env_splits();
    if (splits == 0) /* (b h_k row chunks) x parts: the SMs' rounds of resident blocks */
        splits = ck_attn_decode_splits(prob, &in, props->multiprocessors,
                                       dec_per_sm(prob, props, &in));
    in.splits = splits;
    *out = in;
    return CK_SUCCESS;
}

ck_status ck_attn_decode_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                  const ck_attn_instance *want, ck_attn_instance *in)
{
    ck_attn_instance x = *in;
    int w = want->tile_n ? want->warps : in->warps, n = want->tile_n ? want->tile_n : in->tile_n;
    x.tile_m = want->tile_m ? want->tile_m : in->tile_m;
    x.tile_n = n, x.warps = w;
    x.stages = want->stages ? want->stages : in->stages;
    if ((w != 1 && w != 2 && w != 4 && w != 8) || (n != 16 && n != 32 && n != 64) ||
        x.tile_m < 16 || x.tile_m > 64 || x.tile_m % 16 || x.stages < 0 || x.stages == 1 ||
        x.stages > 4)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": decode instance r%dn%d w%d with %d stages; accepted: 16 to 64 rows "
                          "in steps of 16, 16, 32 or 64 keys per warp, 1, 2, 4 or 8 warps, 2 to "
                          "4 stages.",
                       x.tile_m, n, w, dec_stages(&x));
    if (ck_attn_decode_shared_bytes(prob, &x) > props->max_shared_per_block)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": decode instance r%dn%d w%d needs %zu bytes of shared memory; the "
                          "device allows %zu per block.",
                       x.tile_m, n, w, ck_attn_decode_shared_bytes(prob, &x),
                       props->max_shared_per_block);
    *in = x;
    return CK_SUCCESS;
}

static ck_status finish(ck_sbuf *b, char **source)
{
    if (b->oom) {
        free(b->s);
        *source = NULL;
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b->s;
    return CK_SUCCESS;
}

ck_status ck_attn_decode_source(const ck_attn_prob *prob, const ck_attn_instance *in, char **source)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* ck_attention decode (s_q <= 16: a head group's rows per block, K / V read "
                   "once), instance r%dn%d w%d, %d stages */\n#include \"ck_device.h\"\n",
                   in->tile_m, in->tile_n, in->warps, dec_stages(in));
    ck_attn_defines(prob, in, &b);
    ck_sbuf_printf(&b,
                   "#include \"ops/attention/decode_pipeline_kernel.h\"\n"
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_attn_decode(ck_attn_kargs ka)\n"
                   "{\n    attn_decode_main(ka);\n}\n",
                   in->warps * 32);
    return finish(&b, source);
}

char *ck_attn_decode_key(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    return ck_attn_params_key("attention/decode", prob, in);
}

static const ck_attn_instance combine_inst = {16, 16, 4, 1, 2, 0};

ck_status ck_attn_combine_source(const ck_attn_prob *prob, char **source)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "/* ck_attention split-KV combine */\n#include \"ck_device.h\"\n");
    ck_attn_defines(prob, &combine_inst, &b);
    ck_sbuf_printf(&b, "#include \"ops/attention/splitkv_combine_kernel.h\"\n"
                       "CK_KERNEL void ck_attn_combine(ck_attn_kargs ka)\n"
                       "{\n    attn_combine_main(ka);\n}\n");
    return finish(&b, source);
}

char *ck_attn_combine_key(const ck_attn_prob *prob)
{
    return ck_attn_params_key("attention/combine", prob, &combine_inst);
}

ck_status ck_attn_decode_launch(ck_context *ctx, const ck_attn_prob *prob,
                                const ck_attn_instance *in, ck_kernel *decode, ck_kernel *combine,
                                ck_attn_kargs *ka, size_t shared)
{
    const ck_attention_problem *p = &prob->p;
    int64_t rows = p->h_q / p->h_k * p->s_q, chunks = (rows + in->tile_m - 1) / in->tile_m;
    ka->splits = in->splits;
    if (in->splits > 1) {
        size_t n = (size_t)(in->splits * p->b * p->h_q * p->s_q);
        void *ws = NULL;
        ck_status st = ck_op_workspace(ctx, n * (size_t)(p->d_v + 1) * 4, &ws);
        if (st)
            return st;
        ka->ws_o = ws;
        ka->ws_lse = (float *)ws + n * (size_t)p->d_v;
    }
    void *argv[1] = {ka};
    size_t sizes[1] = {sizeof *ka};
    ck_status st = ck_op_launch(ctx, decode, (unsigned)(chunks * in->splits), (unsigned)p->h_k,
                                (unsigned)p->b, (unsigned)in->warps * 32, shared, argv, sizes, 1);
    if (st || in->splits == 1)
        return st;
    return ck_op_launch(ctx, combine, (unsigned)p->s_q, (unsigned)p->h_q, (unsigned)p->b, 128, 0,
                        argv, sizes, 1);
}
