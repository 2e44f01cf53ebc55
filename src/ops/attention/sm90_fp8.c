/*
 * fp8 e4m3 attention on the sm90 kernel, host side (the device side: fwd_sm90_fp8_kernel.h):
 * the check that P's registers feed P V's 8-bit register-A fragment in the key order V^T is
 * written in, and V^T itself: the plan's workspace and the pre-pass that fills it at execute.
 *
 * 8-bit wgmma reads B only K-major; for O = P V the reduction runs over the keys, so V
 * [b, s_k, h_k, d_v] is transposed to V^T [b, h_k, d_v, vt_keys] (vt_keys = s_k rounded up to
 * 32; TMA zero-fills past it). Within each 32 keys, position a = 16 h + 4 t + e holds key
 * pi(a) = 16 h + 8 (e / 2) + 2 t + e % 2: the key the S accumulator gives the thread that the
 * register-A fragment gives position a (fwd_sm90_fp8_kernel.h). Splitting the key index into
 * (chunk, k4, k3, k21, k0) (16 k4 + 8 k3 + 2 k21 + k0 within a chunk), pi is the dim order
 * (chunk, k4, k21, k3, k0), so the pre-pass is one ck_permute of rank 8:
 *     [b, chunk, k4, k3, k21, k0, h_k, d_v] -> [b, h_k, d_v, chunk, k4, k21, k3, k0]
 * A last chunk of fewer than 32 keys is first copied into a zeroed staging chunk (so that the
 * keys past s_k are 0 in V^T: P is 0 there, but 0 times a NaN code would not be) and permuted
 * from there. Both buffers are allocated and zeroed with the plan.
 *
 * CK_ATTN_FP8_VT=2 (read at plan creation; to time on the GPU) takes two passes instead: a plain
 * transpose to [b, h_k, d_v, vt_keys] in key order (ck_permute's tiled transpose; the keys past
 * s_k stay 0 from the allocation), then the permutation within each 32 bytes (a gather whose
 * warps read and write whole 32-byte sectors), where the one-pass gather reads one byte of a
 * different row per element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/permute.h"
#include "ck/tile_kernel.h"
#include "core/error.h"
#include "ops/attention/attn_internal.h"

#define OP "ck_attention"

/* pi of the header: the key at position a of a 32-key chunk. */
static int key_at(int a)
{
    int h = a / 16, t = (a % 16) / 4, e = a % 4;
    return 16 * h + 8 * (e / 2) + 2 * t + e % 2;
}

/* The packing of fwd_sm90_fp8_kernel.h's attn90_pack: S register (within chunk j) of byte e of
 * A register r. */
static int s_reg(int r, int e)
{
    return 8 * (r / 2) + 2 * (r % 2) + (e / 2) * 4 + e % 2;
}

ck_status ck_attn_fp8_check_p(int tile_n)
{
    char instr[64];
    ck_dist_encoding ec, ea;
    ck_distribution c, a;
    snprintf(instr, sizeof instr, "wgmma.m64n%dk16.f32.bf16", tile_n);
    ck_status st = ck_mma_encoding(instr, CK_MMA_C, &ec);
    if (!st)
        st = ck_mma_encoding("wgmma.m64n64k32.f32.e4m3", CK_MMA_A, &ea);
    if (!st)
        st = ck_dist_make(&ec, &c);
    if (!st)
        st = ck_dist_make(&ea, &a);
    if (st)
        return st;
    if (a.elements_per_thread != 16)
        return ck_fail(CK_ERROR_INTERNAL, OP ": unexpected 8-bit register-A fragment.");
    for (int t = 0; t < 128; ++t)
        for (int j = 0; j < tile_n / 32; ++j)
            for (int d = 0; d < 16; ++d) { /* register d / 4, byte d % 4 */
                int p[2] = {t / 32, t % 32}, y[CK_DIST_MAX_Y], xa[CK_DIST_MAX_X], xc[CK_DIST_MAX_X];
                if ((st = ck_dist_d_to_ys(&a, d, y)) || (st = ck_dist_calculate_x(&a, p, y, xa)) ||
                    (st = ck_dist_d_to_ys(&c, 16 * j + s_reg(d / 4, d % 4), y)) ||
                    (st = ck_dist_calculate_x(&c, p, y, xc)))
                    return st;
                if (xa[0] != xc[0] || 32 * j + key_at(xa[1]) != xc[1])
                    return ck_fail(CK_ERROR_INTERNAL,
                                   OP ": the e4m3 P fragment does not line up with V^T's key "
                                      "order.");
            }
    return CK_SUCCESS;
}

int64_t ck_attn_fp8_vt_keys(const ck_attn_prob *prob)
{
    return (prob->p.s_k + 31) / 32 * 32;
}

ck_status ck_attn_fp8_workspace(ck_context *ctx, const ck_attn_prob *prob, ck_attn_fp8_ws *ws)
{
    const ck_attention_problem *p = &prob->p;
    ck_device *dev = ck_context_device(ctx);
    const char *e = getenv("CK_ATTN_FP8_VT");
    int two = e && strcmp(e, "2") == 0;
    size_t vt = (size_t)(p->b * p->h_k * p->d_v * ck_attn_fp8_vt_keys(prob));
    size_t stage = two ? vt : p->s_k % 32 ? (size_t)(p->b * 32 * p->h_k * p->d_v) : 0;
    ck_stream *s = ck_context_stream(ctx);
    ck_status st;
    memset(ws, 0, sizeof *ws);
    ws->two_pass = two;
    if (!vt)
        return CK_SUCCESS;
    if ((st = ck_malloc(dev, vt, &ws->vt)) || (st = ck_memset_d8(dev, ws->vt, 0, vt, s)) ||
        (stage && ((st = ck_malloc(dev, stage, &ws->stage)) ||
                   (st = ck_memset_d8(dev, ws->stage, 0, stage, s))))) {
        ck_attn_fp8_workspace_free(ctx, ws);
        return ck_fail_context(st, OP ": V^T workspace of %zu bytes", vt + stage);
    }
    return CK_SUCCESS;
}

void ck_attn_fp8_workspace_free(ck_context *ctx, ck_attn_fp8_ws *ws)
{
    ck_device *dev = ck_context_device(ctx);
    ck_free(dev, ws->vt);
    ck_free(dev, ws->stage);
    ws->vt = ws->stage = NULL;
}

/* A rank-8 fp8 tensor view. */
static ck_status view(ck_tensor *t, const void *data, const int64_t *shape, const int64_t *strides)
{
    return ck_tensor_init(t, (void *)data, CK_DTYPE_FP8_E4M3, 8, shape, strides);
}

/* chunks 32-key chunks of src (key stride ks, first key at src) permuted into V^T from chunk c0. */
static ck_status permute_chunks(ck_context *ctx, const ck_attention_problem *p, const void *src,
                                const ck_attn_strides *vs, int64_t chunks, void *vt, int64_t keys,
                                int64_t c0)
{
    static const int perm[8] = {0, 6, 7, 1, 2, 4, 3, 5};
    int64_t ks = vs->seq;
    int64_t shape_s[8] = {p->b, chunks, 2, 2, 4, 2, p->h_k, p->d_v};
    int64_t str_s[8] = {vs->batch, 32 * ks, 16 * ks, 8 * ks, 2 * ks, ks, vs->head, 1};
    int64_t shape_d[8] = {p->b, p->h_k, p->d_v, chunks, 2, 4, 2, 2};
    int64_t str_d[8] = {p->h_k * p->d_v * keys, p->d_v * keys, keys, 32, 16, 4, 2, 1};
    ck_tensor s, d;
    ck_status st = view(&s, src, shape_s, str_s);
    if (!st)
        st = view(&d, (unsigned char *)vt + 32 * c0, shape_d, str_d);
    return st ? st : ck_permute(ctx, &s, perm, &d);
}

/* CK_ATTN_FP8_VT=2: V to ws->stage [b, h_k, d_v, keys] in key order, then each 32 keys to V^T's
 * order. */
static ck_status two_pass(ck_context *ctx, const ck_attention_problem *p, const ck_attn_fp8_ws *ws,
                          const void *v, int64_t keys)
{
    static const int tr[4] = {0, 2, 3, 1}, in32[8] = {0, 1, 2, 3, 4, 6, 5, 7};
    int64_t shape_v[4] = {p->b, p->s_k, p->h_k, p->d_v},
            str_v[4] = {p->v.batch, p->v.seq, p->v.head, 1};
    int64_t shape_t[4] = {p->b, p->h_k, p->d_v, p->s_k};
    int64_t str_t[4] = {p->h_k * p->d_v * keys, p->d_v * keys, keys, 1};
    int64_t shape_s[8] = {p->b, p->h_k, p->d_v, keys / 32, 2, 2, 4, 2};
    int64_t str_s[8] = {str_t[0], str_t[1], keys, 32, 16, 8, 2, 1};
    int64_t shape_d[8] = {p->b, p->h_k, p->d_v, keys / 32, 2, 4, 2, 2};
    int64_t str_d[8] = {str_t[0], str_t[1], keys, 32, 16, 4, 2, 1};
    ck_tensor a, b;
    ck_status st = ck_tensor_init(&a, (void *)v, CK_DTYPE_FP8_E4M3, 4, shape_v, str_v);
    if (!st)
        st = ck_tensor_init(&b, ws->stage, CK_DTYPE_FP8_E4M3, 4, shape_t, str_t);
    if (!st)
        st = ck_permute(ctx, &a, tr, &b);
    if (!st)
        st = view(&a, ws->stage, shape_s, str_s);
    if (!st)
        st = view(&b, ws->vt, shape_d, str_d);
    if (!st)
        st = ck_permute(ctx, &a, in32, &b);
    return st ? ck_fail_context(st, OP ": V^T of the fp8 pre-pass (two passes)") : CK_SUCCESS;
}

ck_status ck_attn_fp8_transpose_v(ck_context *ctx, const ck_attn_prob *prob,
                                  const ck_attn_fp8_ws *ws, const void *v)
{
    const ck_attention_problem *p = &prob->p;
    int64_t keys = ck_attn_fp8_vt_keys(prob), full = p->s_k / 32, tail = p->s_k % 32;
    ck_status st = CK_SUCCESS;
    if (ws->two_pass)
        return two_pass(ctx, p, ws, v, keys);
    if (full > 0 && (st = permute_chunks(ctx, p, v, &p->v, full, ws->vt, keys, 0)))
        return ck_fail_context(st, OP ": V^T of the fp8 pre-pass");
    if (!tail)
        return CK_SUCCESS;
    /* the last keys into the staging chunk [b, 32, h_k, d_v] (zero past them), then as one chunk */
    ck_attn_strides ss = {32 * p->h_k * p->d_v, p->h_k * p->d_v, p->d_v};
    int64_t shape[8] = {p->b, tail, p->h_k, p->d_v, 1, 1, 1, 1};
    int64_t str_s[8] = {p->v.batch, p->v.seq, p->v.head, 1, 1, 1, 1, 1};
    int64_t str_d[8] = {ss.batch, ss.seq, ss.head, 1, 1, 1, 1, 1};
    static const int id[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ck_tensor s, d;
    st = view(&s, (const unsigned char *)v + full * 32 * p->v.seq, shape, str_s);
    if (!st)
        st = view(&d, ws->stage, shape, str_d);
    if (!st)
        st = ck_permute(ctx, &s, id, &d);
    if (!st)
        st = permute_chunks(ctx, p, ws->stage, &ss, 1, ws->vt, keys, full);
    return st ? ck_fail_context(st, OP ": V^T's last keys in the fp8 pre-pass") : CK_SUCCESS;
}
