/*
 * fp8 attention's V^T pre-pass alone (src/ops/attention/fp8_vt_kernel.h, launched by
 * sm90_fp8.c) on the device CK_DEVICE chooses: V [b, s_k, h_k, d_v] of random bytes in BSHD and
 * BHSD, padded rows, strides that allow no 16-byte loads, s_k from 1 to a few hundred (one and
 * several key tiles, odd tails), d_v 64, 128 and 256; every byte of the workspace [b, h_k, d_v,
 * vt_keys] against a CPU transpose with the P fragment's key order written out here (position a
 * = 16h + 4t + e of 32 keys holds key 16h + 8(e / 2) + 2t + e % 2), keys past s_k 0 over a
 * sentinel. The ck_permute paths (CK_ATTN_FP8_VT=1, 2) against the same reference. And the
 * kernel's shared-memory layout, replayed for every lane: a bijection, and both passes free of
 * bank conflicts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/attention/attn_internal.h"
#include "ops/attention/fp8_vt_kernel.h"
#include "test.h"

static ck_context *v_ctx;
static uint64_t v_rng = 0x243f6a8885a308d3ull;

typedef struct vcase {
    int64_t b, sk, hk, dv;
    int bhsd, pad; /* pad: extra elements per row */
} vcase;

/* The key at position a of a 32-key chunk of V^T (the P fragment's order). */
static int64_t ref_key(int64_t a)
{
    int64_t h = a / 16, t = (a % 16) / 4, e = a % 4;
    return 16 * h + 8 * (e / 2) + 2 * t + e % 2;
}

static void v_problem(const vcase *c, ck_attention_problem *p)
{
    ck_attention_problem_init(p);
    p->b = c->b, p->s_q = 1, p->s_k = c->sk, p->h_q = p->h_k = c->hk;
    p->d = p->d_v = c->dv, p->dtype = CK_DTYPE_FP8_E4M3;
    int64_t row = c->dv + c->pad;
    if (c->bhsd)
        p->v.seq = row, p->v.head = c->sk * row, p->v.batch = c->hk * c->sk * row;
    else
        p->v.head = row, p->v.seq = c->hk * row, p->v.batch = c->sk * c->hk * row;
}

/* One case through the pre-pass of mode `mode` (CK_ATTN_FP8_VT); returns the wrong bytes. */
static long v_run(const vcase *c, const char *mode)
{
    ck_device *dev = ck_context_device(v_ctx);
    ck_attention_problem p;
    ck_attn_prob prob;
    ck_attn_fp8_ws ws;
    v_problem(c, &p);
    CHECK_OK(ck_attn_prob_make(&p, &prob));
    if (mode)
        setenv("CK_ATTN_FP8_VT", mode, 1);
    else
        unsetenv("CK_ATTN_FP8_VT");
    ck_status st = ck_attn_fp8_workspace(v_ctx, &prob, &ws);
    unsetenv("CK_ATTN_FP8_VT");
    CHECK_MSG(st == CK_SUCCESS, "workspace: %s", ck_last_error());
    if (st)
        return 1;
    const ck_attention_problem *q = &prob.p;
    int64_t keys = ck_attn_fp8_vt_keys(&prob);
    size_t nv = (size_t)ck_attn_span(&q->v, q->b, q->s_k, q->h_k, q->d_v);
    size_t nt = (size_t)(q->b * q->h_k * q->d_v * keys);
    unsigned char *hv = malloc(nv), *ht = malloc(nt);
    for (size_t i = 0; i < nv; ++i)
        hv[i] = (unsigned char)(ckt_rand64(&v_rng) >> 56);
    void *dv = NULL;
    CHECK_OK(ck_malloc(dev, nv, &dv));
    CHECK_OK(ck_memcpy_h2d(dev, dv, hv, nv, NULL));
    /* the kernel writes every byte, zeros past s_k included; ck_permute keeps the zeroed ones */
    if (ws.mode == CK_ATTN_VT_KERNEL)
        CHECK_OK(ck_memset_d8(dev, ws.vt, 0xA5, nt, ck_context_stream(v_ctx)));
    CHECK_OK(ck_attn_fp8_transpose_v(v_ctx, &prob, &ws, dv));
    CHECK_OK(ck_context_synchronize(v_ctx));
    CHECK_OK(ck_memcpy_d2h(dev, ht, ws.vt, nt, NULL));
    long bad = 0;
    for (int64_t b = 0; b < q->b; ++b)
        for (int64_t h = 0; h < q->h_k; ++h)
            for (int64_t x = 0; x < q->d_v; ++x)
                for (int64_t a = 0; a < keys; ++a) {
                    int64_t key = a / 32 * 32 + ref_key(a % 32);
                    unsigned want = key < q->s_k ? hv[ck_attn_offset(&q->v, b, key, h) + x] : 0;
                    unsigned got = ht[((b * q->h_k + h) * q->d_v + x) * keys + a];
                    if (got != want && bad++ < 5)
                        CHECK_MSG(0,
                                  "mode %s b%lld sk%lld hk%lld dv%lld bhsd %d pad %d: V^T[%lld, "
                                  "%lld, %lld, %lld] = 0x%02x, want 0x%02x (key %lld)",
                                  mode ? mode : "default", (long long)q->b, (long long)q->s_k,
                                  (long long)q->h_k, (long long)q->d_v, c->bhsd, c->pad,
                                  (long long)b, (long long)h, (long long)x, (long long)a, got, want,
                                  (long long)key);
                }
    CHECK(bad == 0);
    ck_free(dev, dv);
    free(hv), free(ht);
    ck_attn_fp8_workspace_free(v_ctx, &ws);
    return bad;
}

static vcase v_case(int64_t b, int64_t sk, int64_t hk, int64_t dv, int bhsd, int pad)
{
    vcase c = {b, sk, hk, dv, bhsd, pad};
    return c;
}

/* The kernel: both layouts, every d_v, tails, one and several key tiles. */
static void test_kernel(void)
{
    v_run(&(vcase){2, 300, 3, 64, 0, 0}, NULL);   /* BSHD, 2 tiles of 256 keys, tail of 12 */
    v_run(&(vcase){2, 77, 2, 128, 1, 0}, NULL);   /* BHSD */
    v_run(&(vcase){1, 161, 2, 256, 0, 16}, NULL); /* padded rows (16-byte loads still) */
    v_run(&(vcase){1, 256, 1, 128, 1, 32}, NULL); /* whole tiles, BHSD padded */
    v_run(&(vcase){3, 31, 2, 64, 1, 0}, NULL);    /* fewer keys than a chunk */
    v_run(&(vcase){1, 1, 1, 256, 0, 0}, NULL);    /* one key */
    vcase c = v_case(2, 45, 3, 128, 0, 0);
    v_run(&c, "0");
    v_run(&c, "kernel");
}

/* Strides that are not multiples of 16 bytes: byte loads (VT_VEC 0). */
static void test_unaligned_rows(void)
{
    v_run(&(vcase){2, 133, 2, 128, 0, 1}, NULL);
    v_run(&(vcase){1, 70, 3, 64, 1, 3}, NULL);
}

/* The ck_permute paths against the same reference. */
static void test_permute_modes(void)
{
    vcase c = v_case(2, 70, 2, 64, 0, 0);
    v_run(&c, "1");
    v_run(&c, "permute");
    v_run(&c, "2");
    c = v_case(1, 96, 2, 128, 1, 0);
    v_run(&c, "1");
}

/* 8 lanes of 16-byte accesses: distinct 16-byte bank groups (or one address). */
static int quarter_ok(const unsigned *addr)
{
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < i; ++j)
            if (addr[i] != addr[j] && addr[i] / 16 % 8 == addr[j] / 16 % 8)
                return 0;
    return 1;
}

/* The layout of every tile shape the host generates (d_v 64: 256 keys; 128, 256: 128 keys). */
static void test_layout(void)
{
    static const int shapes[3][2] = {{64, 256}, {128, 128}, {256, 128}};
    for (int k = 0; k < 3; ++k) {
        unsigned gm = (unsigned)shapes[k][0] / 16, kgs = (unsigned)shapes[k][1] / 16;
        unsigned threads = gm * kgs, rows = 16 * kgs, bytes = rows * gm * 16;
        unsigned char *seen = calloc(bytes / 16, 1);
        int bij = 1, w1 = 1, w2 = 1, cover = 1;
        for (unsigned t = 0; t < threads; t += 8)
            for (unsigned s = 0; s < 16; ++s) {
                unsigned a1[8], a2[8];
                for (unsigned l = 0; l < 8; ++l) {
                    unsigned r, c, kg, cg;
                    ck_vt_pass1(t + l, s, threads, gm, &r, &c);
                    a1[l] = ck_vt_smem_offset(r, c, gm);
                    bij &= a1[l] < bytes && !seen[a1[l] / 16];
                    if (a1[l] < bytes)
                        seen[a1[l] / 16] = 1;
                    ck_vt_pass2(t + l, gm, &kg, &cg);
                    a2[l] = ck_vt_smem_offset(16 * kg + ck_vt_key(s), cg, gm);
                }
                w1 &= quarter_ok(a1);
                w2 &= quarter_ok(a2);
            }
        /* pass 2 reads every row of every chunk once: (kg, cg) over the threads, keys over p */
        unsigned char *hit = calloc(rows * gm, 1);
        for (unsigned t = 0; t < threads; ++t)
            for (unsigned p = 0; p < 16; ++p) {
                unsigned kg, cg;
                ck_vt_pass2(t, gm, &kg, &cg);
                unsigned r = 16 * kg + ck_vt_key(p);
                cover &= r < rows && !hit[r * gm + cg];
                if (r < rows)
                    hit[r * gm + cg] = 1;
            }
        CHECK_MSG(bij, "d_v %d: pass 1 does not fill the tile one slot each", shapes[k][0]);
        CHECK_MSG(w1, "d_v %d: pass 1's shared stores have bank conflicts", shapes[k][0]);
        CHECK_MSG(w2, "d_v %d: pass 2's shared loads have bank conflicts", shapes[k][0]);
        CHECK_MSG(cover, "d_v %d: pass 2 does not read each (row, chunk) once", shapes[k][0]);
        free(seen), free(hit);
    }
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &v_ctx));
    if (!v_ctx)
        return 1;
    printf("seed 0x%016llx\n", (unsigned long long)v_rng);
    RUN_TEST(test_layout);
    RUN_TEST(test_kernel);
    RUN_TEST(test_unaligned_rows);
    RUN_TEST(test_permute_modes);
    ck_context_destroy(v_ctx);
    return CK_TEST_REPORT();
}
