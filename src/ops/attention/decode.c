/*
 * The decode kernel and split-KV on the host: when the decode kernel applies, its instance
 * (rows of a head group per block, keys per warp, parts of the key range), its source and cache
 * key (the parameter table of kernel.c), the combine kernel's, and the launch of both.
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
    return 1;
}

size_t ck_attn_decode_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    const ck_attention_problem *p = &prob->p;
    size_t q = (size_t)in->tile_m * (size_t)p->d * 2;
    size_t stages = 2 * (size_t)in->warps * (size_t)in->tile_n * (size_t)(p->d + p->d_v) * 2;
    size_t merge = (size_t)in->tile_m * (size_t)(p->d_v + 2) * 4;
    return q + (stages > merge ? stages : merge);
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
    /* 16 keys per warp: 64 KiB of stages at d 128, so that three blocks share an SM and hide
     * each other's waits (the kernel is bandwidth bound); scripts/gpu-attention compares 32 */
    ck_attn_instance in = {16 * (mi < max_mi ? mi : max_mi), 16, 4, 1, 1};
    while (ck_attn_decode_shared_bytes(prob, &in) > props->max_shared_per_block && in.warps > 1)
        in.warps /= 2;
    if (ck_attn_decode_shared_bytes(prob, &in) > props->max_shared_per_block)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the decode kernel for d = %lld, d_v = %lld needs %zu bytes of shared "
                          "memory; the device allows %zu per block.",
                       (long long)p->d, (long long)p->d_v, ck_attn_decode_shared_bytes(prob, &in),
                       props->max_shared_per_block);
    if (splits == 0) { /* few (b h_k) units: split the keys until the SMs have two blocks each */
        int64_t chunks = (rows + in.tile_m - 1) / in.tile_m;
        int64_t units = p->b * p->h_k * chunks, sms = props->multiprocessors;
        int64_t tiles = (p->s_k + in.warps * in.tile_n - 1) / (in.warps * in.tile_n);
        splits = 1;
        if (units > 0 && units < sms) {
            int64_t want = (2 * sms + units - 1) / units, most = tiles / 4;
            want = want < most ? want : most;
            splits = (int)(want < 1 ? 1 : want > DEC_MAX_SPLITS ? DEC_MAX_SPLITS : want);
        }
    }
    in.splits = splits;
    *out = in;
    return CK_SUCCESS;
}

ck_status ck_attn_decode_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                  const ck_attn_instance *want, ck_attn_instance *in)
{
    ck_attn_instance x = *in;
    int w = want->warps, n = want->tile_n;
    x.tile_m = want->tile_m ? want->tile_m : in->tile_m;
    x.tile_n = n, x.warps = w;
    if ((w != 1 && w != 2 && w != 4 && w != 8) || (n != 16 && n != 32 && n != 64) ||
        x.tile_m < 16 || x.tile_m > 64 || x.tile_m % 16)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": decode instance r%dn%d w%d; accepted: 16 to 64 rows in steps of 16, "
                          "16, 32 or 64 keys per warp, 1, 2, 4 or 8 warps.",
                       x.tile_m, n, w);
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
                   "once), instance r%dn%d w%d */\n#include \"ck_device.h\"\n",
                   in->tile_m, in->tile_n, in->warps);
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

static const ck_attn_instance combine_inst = {16, 16, 4, 1, 2};

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
