/*
 * The sm_90a attention kernel's host side (fwd_sm90_pipeline_kernel.h): what it supports (and
 * why not: the policy then takes the sm80 kernel), its instance, its parameter table (the
 * defines and the kernel cache key), the parts generated from the accumulators' encodings, the
 * tensor maps of Q, K and V (and O for the TMA store) and the launch. Knobs for timing on the
 * GPU (each in the parameter table, so in the cache key): CK_ATTN_SM90_PINGPONG=0,
 * CK_ATTN_SM90_STAGES=3|4, CK_ATTN_SM90_OSTORE=window, CK_ATTN_SM90_ORDER=linear|snake|lpt,
 * CK_ATTN_SM90_CONSUMERS=2|3, CK_ATTN_SM90_TILE_N=64..192, CK_ATTN_SM90_REGS=P,C (and
 * CK_ATTN_SM90_SECTION=N, the lpt order's (head, batch) pairs per L2 section, a kernel
 * argument).
 *
 * Generated from the encodings (ck_mma_encoding of wgmma m64nNk16's C, stacked over the consumer
 * warpgroups: P0 = warp of the block, P1 = lane): the window over S (its tile_x gives the mask
 * each register's row and column), the window over O (the epilogue's store), and from the
 * distribution itself the row slots (which registers share a row), the lanes that share a row
 * (the row reductions' shuffles) and a check that the S fragment's register pairs are the
 * register-A fragment of P V (wgmma's RS form), without which P could not stay in registers.
 * fp8 e4m3 inputs (ATTN_FP8): 1-byte tiles, e4m3 wgmma, V through V^T (sm90_fp8.c, which also
 * checks the e4m3 P fragment), bf16 O.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/attention/attn_internal.h"
#include "ops/common/op_params.h"
#include "ops/common/op_common.h"

#define OP "ck_attention"

enum {
    A90_ROW = 128, /* bytes of a tile line: the 128-byte swizzle span */
    A90_ORDER_LINEAR = 0,
    A90_ORDER_SNAKE = 1,
    A90_ORDER_LPT = 2
};

/* setmaxnreg's split of the registers the launch bounds give a block (65536 / threads, rounded
 * down to 8, times threads): two consumer warpgroups 240 each and the producer 24 (24 + 2 * 240
 * = 3 * 168); three consumers 160 each and the producer 32 (32 + 3 * 160 = 4 * 128,
 * FlashAttention-3's split). CK_ATTN_SM90_REGS=P,C sets another (multiples of 8 in 24 .. 256
 * within the block's registers; else ignored, with a CK_LOG warning): per ptxas, 40,224 removes
 * the producer's spills at d_v <= 128 with two consumers. */
static void regs_split(int consumers, int *producer, int *consumer)
{
    const char *e = getenv("CK_ATTN_SM90_REGS");
    int p = 0, c = 0, per = 65536 / (128 * (consumers + 1)) / 8 * 8;
    *producer = consumers == 3 ? 32 : 24;
    *consumer = consumers == 3 ? 160 : 240;
    if (!e)
        return;
    if (sscanf(e, "%d,%d", &p, &c) == 2 && p % 8 == 0 && c % 8 == 0 && p >= 24 && c >= 24 &&
        p <= 256 && c <= 256 && p + consumers * c <= per * (consumers + 1))
        *producer = p, *consumer = c;
    else
        CK_LOG(CK_LOG_WARN,
               OP ": CK_ATTN_SM90_REGS=%s ignored: it takes P,C (multiples of 8 in 24 .. 256) with "
                  "P + %d C <= %d.",
               e, consumers, per * (consumers + 1));
}

/* ---- what the kernel runs ------------------------------------------------------------------ */

static int refuse(char *reason, size_t size, const char *fmt, ...) CK_PRINTF_LIKE(3, 4);
static int refuse(char *reason, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (reason && size)
        vsnprintf(reason, size, fmt, ap);
    va_end(ap);
    return 0;
}

/* A stride TMA can take: a multiple of 16 bytes below 2^40 bytes, unless its dim has one index
 * (then it is never used); es: bytes of an element. */
static int tma_stride_ok(int64_t stride, int64_t len, int es)
{
    return len <= 1 || ((stride * es) % 16 == 0 && stride > 0 && stride * es < (1LL << 40));
}

/* Bytes of an input element: 1 for fp8 e4m3 (O is bf16 then), else 2. */
static int in_bytes(const ck_attention_problem *p)
{
    return p->dtype == CK_DTYPE_FP8_E4M3 ? 1 : 2;
}

/* The fields of the problem this kernel reads; any other field away from its default (a
 * variant added to the problem later) leaves the problem to the sm80 kernel. */
static int only_known_fields(const ck_attention_problem *p)
{
    ck_attention_problem def, x = *p;
    ck_attention_problem_init(&def);
    x.b = def.b, x.s_q = def.s_q, x.s_k = def.s_k, x.h_q = def.h_q, x.h_k = def.h_k;
    x.d = def.d, x.d_v = def.d_v, x.dtype = def.dtype;
    x.q = def.q, x.k = def.k, x.v = def.v, x.o = def.o;
    x.mask = def.mask, x.align = def.align;
    x.window_left = def.window_left, x.window_right = def.window_right;
    x.lse = def.lse, x.softcap = def.softcap;
    x.varlen = def.varlen, x.total_q = def.total_q, x.total_k = def.total_k;
    x.descale = def.descale;
    return memcmp(&x, &def, sizeof x) == 0;
}

int ck_attn_sm90_supports(const ck_attn_prob *prob, const ck_device_props *props, char *reason,
                          size_t reason_size)
{
    const ck_attention_problem *p = &prob->p;
    if (props->backend != CK_BACKEND_HOST && strcmp(props->target, "sm_90a") != 0)
        return refuse(reason, reason_size,
                      "the sm90 kernel needs an sm_90a device (wgmma, TMA); this one is %s.",
                      props->target);
    if (!only_known_fields(p))
        return refuse(reason, reason_size,
                      "the problem uses a variant the sm90 kernel does not have.");
    int64_t dims[2] = {p->d, p->d_v};
    for (int i = 0; i < 2; ++i)
        if (dims[i] != 64 && dims[i] != 128 && dims[i] != 192 && dims[i] != 256)
            /* (fp8: 64, 128, 256, checked with the problem) */
            return refuse(reason, reason_size,
                          "the sm90 kernel takes head dims of 64, 128, 192 or 256 (whole 128-byte "
                          "swizzle lines); %s = %lld.",
                          i ? "d_v" : "d", (long long)dims[i]);
    if (prob->scalar_copy)
        return refuse(reason, reason_size,
                      "the sm90 kernel loads with TMA and stores 16-byte aligned rows; a pointer "
                      "is not 16-byte aligned.");
    /* varlen: one batch of the packed rows */
    int64_t nb = p->varlen ? 1 : p->b, rq = p->varlen ? p->total_q : p->s_q;
    int64_t rk = p->varlen ? p->total_k : p->s_k;
    struct {
        const char *name;
        const ck_attn_strides *st;
        int64_t s, h;
    } t[4] = {{"q", &p->q, rq, p->h_q},
              {"k", &p->k, rk, p->h_k},
              {"v", &p->v, rk, p->h_k},
              {"o", &p->o, rq, p->h_q}};
    /* fp8: V is read through V^T (the plan's pre-pass takes any strides), O is bf16 */
    int fp8 = p->dtype == CK_DTYPE_FP8_E4M3;
    for (int i = 0; i < 4; ++i) {
        int es = i < 3 ? in_bytes(p) : 2;
        if ((t[i].s > 0 || i == 0 || i == 3) && !(fp8 && i == 2) &&
            (!tma_stride_ok(t[i].st->batch, nb, es) || !tma_stride_ok(t[i].st->seq, t[i].s, es) ||
             !tma_stride_ok(t[i].st->head, t[i].h, es)))
            return refuse(reason, reason_size,
                          "the sm90 kernel needs strides of a multiple of %d elements (16 bytes) "
                          "below 2^40 bytes; %s's are (batch %lld, seq %lld, head %lld).",
                          16 / es, t[i].name, (long long)t[i].st->batch, (long long)t[i].st->seq,
                          (long long)t[i].st->head);
    }
    if (rq > (1LL << 31) - 256 || rk > (1LL << 31) - 256)
        return refuse(reason, reason_size,
                      "the sm90 kernel addresses rows with TMA's 32-bit coordinates; it has %lld "
                      "rows of Q and %lld of K.",
                      (long long)rq, (long long)rk);
    ck_attn_instance in;
    if (ck_attn_sm90_instance(prob, props, &in) != CK_SUCCESS)
        return refuse(reason, reason_size,
                      "the sm90 kernel's smallest tile for d = %lld, d_v = %lld does not fit in "
                      "the device's %zu bytes of shared memory per block.",
                      (long long)p->d, (long long)p->d_v, props->max_shared_per_block);
    if (!p->varlen && (rq + in.tile_m - 1) / in.tile_m * p->b * p->h_q >= (1LL << 31))
        return refuse(reason, reason_size,
                      "the sm90 kernel numbers its work items (query tiles x heads x batches) "
                      "in 32 bits; this problem has %lld.",
                      (long long)((rq + in.tile_m - 1) / in.tile_m * p->b * p->h_q));
    return 1;
}

/* Slots of the K ring and of the V ring: 2, or CK_ATTN_SM90_STAGES (2 to 4, to time more where
 * the shared memory allows; an instance that then does not fit is refused). */
static int stages(void)
{
    const char *e = getenv("CK_ATTN_SM90_STAGES");
    return e && e[0] >= '2' && e[0] <= '4' && !e[1] ? e[0] - '0' : 2;
}

/* Shared bytes of the instance without O's staging tile. */
static size_t base_bytes(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    const ck_attention_problem *p = &prob->p;
    size_t q = (size_t)in->tile_m * (size_t)p->d * (size_t)in_bytes(p);
    size_t kv = (size_t)in->tile_n * (size_t)(p->d + p->d_v) * (size_t)in_bytes(p);
    /* barriers: Q's two, the K and V rings', the work ring's four and its two slots */
    return 1024 + q + (size_t)stages() * kv + 8 * (2 + 4 * (size_t)stages() + 6);
}

/* O is stored through shared memory and TMA (ATTN_O_TMA) for fixed lengths (TMA clips at the
 * tensor's end, not a sequence's) where its staging tile (tile_m x d_v) still fits in the
 * 227 KiB of an H100 block (the emulator's too): faster than the generated window's stores at
 * d 128 on the H100 (bench/RESULTS.md, fifth session), though ptxas spills a few bytes of the
 * consumers there. Otherwise, and with CK_ATTN_SM90_OSTORE=window, through the generated
 * window over O. */
static int o_tma(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    const char *e = getenv("CK_ATTN_SM90_OSTORE");
    size_t o = (size_t)in->tile_m * (size_t)prob->p.d_v * 2;
    return !(e && strcmp(e, "window") == 0) && !prob->p.varlen &&
           base_bytes(prob, in) + o <= 227 * 1024;
}

size_t ck_attn_sm90_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    return base_bytes(prob, in) +
           (o_tma(prob, in) ? (size_t)in->tile_m * (size_t)prob->p.d_v * 2 : 0);
}

/* A developer switch's integer value (0: unset or not a number). */
static int env_int(const char *name)
{
    const char *e = getenv(name);
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    return e && end != e && !*end && v > 0 && v < 1024 ? (int)v : 0;
}

/* Whether the consumers' registers hold the S and O accumulators and P of (tile_n, d_v):
 * TILE_N / 2 + d_v / 2 + TILE_N / 4 of them, within 192 of the 240 a consumer of two has
 * (d_v 192 with 128 keys; d_v 256 with 80, as FlashAttention-3) or 128 of the 160 of three
 * (d 64 with 128 keys). */
static int regs_fit(int consumers, int tile_n, int64_t d_v)
{
    int64_t need = tile_n / 2 + d_v / 2 + tile_n / 4;
    return need <= (consumers == 3 ? 128 : 192);
}

/* e4m3 wgmma has N of 64, 128 or 256 only (S = Q K^T's N is the key tile). */
static int fp8_tile_ok(const ck_attn_prob *prob, int tile_n)
{
    return prob->p.dtype != CK_DTYPE_FP8_E4M3 || tile_n == 64 || tile_n == 128 || tile_n == 256;
}

int ck_attn_sm90_shape_ok(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    int c = in->tile_m / 64;
    return (c == 2 || c == 3) && in->tile_m == 64 * c && fp8_tile_ok(prob, in->tile_n) &&
           in->warps == (c == 3 ? CK_ATTN_SM90_WARPS3 : CK_ATTN_SM90_WARPS) &&
           in->tile_n % 16 == 0 && in->tile_n >= 64 && in->tile_n <= 192 &&
           regs_fit(c, in->tile_n, prob->p.d_v);
}

/* The query tile: three consumer warpgroups (192 rows) for d and d_v up to 64 (FlashAttention-3's
 * d 64 tile: more rows per K / V tile loaded) without a causal band, else two (128 rows: a
 * causal band's diagonal tiles waste less of a shorter query tile; bench/RESULTS.md, seventh
 * session, run M); CK_ATTN_SM90_CONSUMERS=2|3 to time the other. Key tiles of 128 rows where the
 * registers and the shared memory allow, else 80 (d_v 256: the 64-row tile's S is too narrow for
 * the wgmma to hide the softmax) or 64; CK_ATTN_SM90_TILE_N=64|80|96|128|192 forces one (refused
 * where it does not fit). */
ck_status ck_attn_sm90_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                ck_attn_instance *out)
{
    const ck_attention_problem *p = &prob->p;
    size_t smem = props->max_shared_per_block ? props->max_shared_per_block : 227 * 1024;
    int causal = prob->left < 0 && prob->right >= 0;
    int consumers = p->d <= 64 && p->d_v <= 64 && !causal ? 3 : 2;
    int want_n = env_int("CK_ATTN_SM90_TILE_N");
    int env_c = env_int("CK_ATTN_SM90_CONSUMERS");
    if (env_c == 2 || env_c == 3)
        consumers = env_c;
    static const int tile_ns[3] = {128, 80, 64};
    for (int i = 0; i < (want_n ? 1 : 3); ++i) {
        int n = want_n ? want_n : tile_ns[i];
        ck_attn_instance in = {
            64 * consumers, n, consumers == 3 ? CK_ATTN_SM90_WARPS3 : CK_ATTN_SM90_WARPS, 0, 1, 0};
        if (n % 16 || n < 64 || n > 192 || !regs_fit(consumers, n, p->d_v) ||
            !fp8_tile_ok(prob, n) || (!want_n && n == 80 && p->d_v <= 192))
            continue;
        if (ck_attn_sm90_shared_bytes(prob, &in) <= smem) {
            *out = in;
            return CK_SUCCESS;
        }
    }
    return ck_fail(CK_ERROR_UNSUPPORTED,
                   OP ": the sm90 kernel's tiles for d = %lld, d_v = %lld (%d consumer "
                      "warpgroups, key tile %s) do not fit in %zu bytes of shared memory or the "
                      "consumers' registers.",
                   (long long)p->d, (long long)p->d_v, consumers,
                   want_n ? "from CK_ATTN_SM90_TILE_N" : "128, 80 or 64", smem);
}

/* ---- the parameter table ------------------------------------------------------------------- */

/* The persistent grid's walk over the work items (fixed lengths; varlen has a grid of its own):
 * snake where the query tiles' work grows with their index (a causal band: left unbounded, right
 * bounded), else linear; CK_ATTN_SM90_ORDER=linear|snake|lpt to time the others (on the H100
 * snake beat lpt on causal masks, whose counter and work ring cost more than their balance
 * gains: bench/RESULTS.md, sixth session, run J). linear: block
 * x takes items x, x + gridDim.x, ... (a head's query tiles fastest, last first); snake: the same
 * with every other round reversed (blocks that took a long tile take a short one next); lpt:
 * items from a counter in global memory as blocks free up, longest first within L2 sections of
 * heads (fwd_sm90_pipeline_kernel.h, attn90_item). */
static int order(const ck_attn_prob *prob)
{
    const char *e = getenv("CK_ATTN_SM90_ORDER");
    if (prob->p.varlen)
        return A90_ORDER_LINEAR;
    if (e && strcmp(e, "linear") == 0)
        return A90_ORDER_LINEAR;
    if (e && strcmp(e, "snake") == 0)
        return A90_ORDER_SNAKE;
    if (e && strcmp(e, "lpt") == 0)
        return A90_ORDER_LPT;
    return prob->left < 0 && prob->right >= 0 ? A90_ORDER_SNAKE : A90_ORDER_LINEAR;
}

/* The consumer warpgroups' ping-pong: on, unless CK_ATTN_SM90_PINGPONG=0 (to time without). */
static int pingpong(void)
{
    const char *e = getenv("CK_ATTN_SM90_PINGPONG");
    return !(e && strcmp(e, "0") == 0);
}

/* THE parameter table (ops/common/op_params.h: the #defines and the kernel cache key). */
static int params(const ck_attn_prob *prob, const ck_attn_instance *in, ck_op_param *t)
{
    const ck_attention_problem *p = &prob->p;
    int n = 0;
    ck_op_param_add(t, &n, "ATTN_D", p->d);
    ck_op_param_add(t, &n, "ATTN_DV", p->d_v);
    ck_op_param_add(t, &n, "ATTN_BF16", p->dtype == CK_DTYPE_BF16);
    ck_op_param_add(t, &n, "ATTN_FP8", p->dtype == CK_DTYPE_FP8_E4M3);
    ck_op_param_add(t, &n, "ATTN_TILE_M", in->tile_m);
    ck_op_param_add(t, &n, "ATTN_TILE_N", in->tile_n);
    ck_op_param_add(t, &n, "ATTN_STAGES", stages());
    ck_op_param_add(t, &n, "ATTN_CONSUMERS", in->tile_m / 64);
    ck_op_param_add(t, &n, "ATTN_PINGPONG", pingpong());
    ck_op_param_add(t, &n, "ATTN_O_TMA", o_tma(prob, in));
    ck_op_param_add(t, &n, "ATTN_ORDER", order(prob));
    ck_op_param_add(t, &n, "ATTN_VARLEN", p->varlen != 0);
    int producer, consumer;
    regs_split(in->tile_m / 64, &producer, &consumer);
    ck_op_param_add(t, &n, "ATTN_REGS_PRODUCER", producer);
    ck_op_param_add(t, &n, "ATTN_REGS_CONSUMER", consumer);
    return n;
}

char *ck_attn_sm90_key(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    return ck_attn_table_key("attention/sm90", t, params(prob, in, t));
}

/* ---- parts generated from the encodings ------------------------------------------------------ */

/* The wgmma m64nNk16 operand `op` of the problem's type. */
static ck_status wgmma_encoding(const ck_attn_prob *prob, int n, ck_mma_operand op,
                                ck_dist_encoding *e)
{
    char instr[64];
    snprintf(instr, sizeof instr, "wgmma.m64n%dk16.f32.%s", n,
             prob->p.dtype == CK_DTYPE_F16 ? "f16" : "bf16"); /* fp8: C as bf16's */
    return ck_mma_encoding(instr, op, e);
}

/* The accumulator of `wgs` warpgroups stacked along the rows: X0 gains an outer component of
 * length wgs, owned with the warpgroup's warp by P0 (the warp of the block). */
static ck_status stacked(const ck_dist_encoding *in, int wgs, ck_dist_encoding *e)
{
    if (in->ndim_r != 0 || in->ndim_p != 2 || in->ndim_x != 2 || in->p_size[0] != 1 ||
        in->ndim_h[0] + 1 > CK_DIST_MAX_H)
        return ck_fail(CK_ERROR_INTERNAL, OP ": unexpected wgmma accumulator encoding.");
    *e = *in;
    e->ndim_h[0] = in->ndim_h[0] + 1;
    e->h_lengths[0][0] = wgs;
    for (int h = 0; h < in->ndim_h[0]; ++h)
        e->h_lengths[0][h + 1] = in->h_lengths[0][h];
    for (int p = 0; p < 2; ++p)
        for (int k = 0; k < in->p_size[p]; ++k)
            if (in->p_major[p][k] == 1)
                e->p_minor[p][k] = in->p_minor[p][k] + 1;
    e->p_size[0] = 2;
    e->p_major[0][0] = 1, e->p_minor[0][0] = 0;
    e->p_major[0][1] = 1, e->p_minor[0][1] = in->p_minor[0][0] + 1;
    for (int y = 0; y < in->ndim_y; ++y)
        if (in->y_major[y] == 1)
            e->y_minor[y] = in->y_minor[y] + 1;
    ck_distribution d;
    return ck_dist_make(e, &d);
}

/* Row slot of every register: the registers' Y components along the rows (X0), row-major. */
static ck_status row_slots(const ck_distribution *d, int *slot, int *nslots)
{
    ck_dist_spans sp;
    ck_status st = ck_dist_get_spans(d, &sp);
    if (st)
        return st;
    *nslots = 1;
    for (int k = 0; k < sp.count[0]; ++k)
        *nslots *= sp.lengths[0][k];
    for (long long r = 0; r < d->elements_per_thread; ++r) {
        int y[CK_DIST_MAX_Y];
        if ((st = ck_dist_d_to_ys(d, r, y)))
            return st;
        int s = 0;
        for (int k = 0; k < sp.count[0]; ++k)
            s = s * sp.lengths[0][k] + y[sp.y_dim[0][k]];
        slot[r] = s;
    }
    return CK_SUCCESS;
}

/* Rows of thread (warp, lane)'s registers, by slot (-1: none yet); fails when two registers of
 * one slot have different rows. */
static ck_status slot_rows(const ck_distribution *d, const int *slot, int warp, int lane, int *rows)
{
    for (long long r = 0; r < d->elements_per_thread; ++r) {
        int p[2] = {warp, lane}, y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_status st = ck_dist_d_to_ys(d, r, y);
        if (!st)
            st = ck_dist_calculate_x(d, p, y, x);
        if (st)
            return st;
        if (rows[slot[r]] >= 0 && rows[slot[r]] != x[0])
            return ck_fail(CK_ERROR_INTERNAL, OP ": registers of one row slot on two rows.");
        rows[slot[r]] = x[0];
    }
    return CK_SUCCESS;
}

/* The lane bits that keep a thread's rows (the lanes sharing its rows: the row reductions'
 * shuffles), checked for every warp and lane; and that S and O give every thread the same rows
 * slot by slot (O is divided by the l of S's slot). */
static ck_status row_lanes(const ck_distribution *ds, const int *slot_s, const ck_distribution *dO,
                           const int *slot_o, int nslots, int warps, unsigned *mask)
{
    *mask = 0;
    for (int bit = 1; bit < 32; bit <<= 1) {
        int same = 1;
        for (int w = 0; w < warps && same; ++w)
            for (int lane = 0; lane < 32 && same; ++lane) {
                int a[8], b[8], c[8];
                for (int s = 0; s < nslots; ++s)
                    a[s] = b[s] = c[s] = -1;
                ck_status st = slot_rows(ds, slot_s, w, lane, a);
                if (!st)
                    st = slot_rows(ds, slot_s, w, lane ^ bit, b);
                if (!st)
                    st = slot_rows(dO, slot_o, w, lane, c);
                if (st)
                    return st;
                if (memcmp(a, c, sizeof(int) * (size_t)nslots) != 0)
                    return ck_fail(CK_ERROR_INTERNAL, OP ": S and O rows differ by slot.");
                same = memcmp(a, b, sizeof(int) * (size_t)nslots) == 0;
            }
        if (same)
            *mask |= (unsigned)bit;
    }
    return CK_SUCCESS;
}

/* P stays in registers: S registers 8j .. 8j + 7 of every thread hold the elements of the
 * register-A fragment of P V's k-step j (keys 16j .. 16j + 15), in order. */
static ck_status check_p_fragment(const ck_attn_prob *prob, int tile_n)
{
    ck_dist_encoding ec, ea;
    ck_distribution c, a;
    ck_status st = wgmma_encoding(prob, tile_n, CK_MMA_C, &ec);
    if (!st)
        st = wgmma_encoding(prob, 64, CK_MMA_A, &ea);
    if (!st)
        st = ck_dist_make(&ec, &c);
    if (!st)
        st = ck_dist_make(&ea, &a);
    if (st)
        return st;
    if (a.elements_per_thread != 8)
        return ck_fail(CK_ERROR_INTERNAL, OP ": unexpected register-A fragment.");
    for (int t = 0; t < 128; ++t)
        for (int j = 0; j < tile_n / 16; ++j)
            for (int e = 0; e < 8; ++e) {
                int p[2] = {t / 32, t % 32}, y[CK_DIST_MAX_Y], xa[CK_DIST_MAX_X], xc[CK_DIST_MAX_X];
                if ((st = ck_dist_d_to_ys(&a, e, y)) || (st = ck_dist_calculate_x(&a, p, y, xa)) ||
                    (st = ck_dist_d_to_ys(&c, 8 * j + e, y)) ||
                    (st = ck_dist_calculate_x(&c, p, y, xc)))
                    return st;
                if (xa[0] != xc[0] || xa[1] + 16 * j != xc[1])
                    return ck_fail(CK_ERROR_INTERNAL,
                                   OP ": the S fragment is not P V's register-A fragment.");
            }
    return CK_SUCCESS;
}

/* O is stored by register pairs (one 32-bit word of two 16-bit elements): registers 2i and
 * 2i + 1 of every thread must be two neighbouring columns of one row. */
static ck_status check_pairs(const ck_distribution *d, int warps)
{
    for (int t = 0; t < 32 * warps; ++t)
        for (long long r = 0; r < d->elements_per_thread; r += 2) {
            int p[2] = {t / 32, t % 32}, y[CK_DIST_MAX_Y], a[CK_DIST_MAX_X], b[CK_DIST_MAX_X];
            ck_status st = ck_dist_d_to_ys(d, r, y);
            if (!st)
                st = ck_dist_calculate_x(d, p, y, a);
            if (!st)
                st = ck_dist_d_to_ys(d, r + 1, y);
            if (!st)
                st = ck_dist_calculate_x(d, p, y, b);
            if (st)
                return st;
            if (a[0] != b[0] || a[1] + 1 != b[1] || a[1] % 2)
                return ck_fail(CK_ERROR_INTERNAL, OP ": O's register pairs are not column pairs.");
        }
    return CK_SUCCESS;
}

/* A switch from register to slot: "CK_DEVICE int name(int d)". */
static void emit_slots(ck_sbuf *b, const char *name, const int *slot, long long n)
{
    ck_sbuf_printf(b, "CK_DEVICE int %s(int d)\n{\n    switch (d) {\n", name);
    for (long long r = 0; r < n; ++r)
        if (slot[r])
            ck_sbuf_printf(b, "    case %lld:\n", r);
    ck_sbuf_printf(b, "        return 1;\n    default:\n        return 0;\n    }\n}\n\n");
}

/* A window over a rows x cols tile with encoding enc: S (concrete, for tile_x) or O (rows SQ,
 * row stride LDO, 16-bit, stored). */
static ck_status emit_window(ck_sbuf *b, const char *name, const ck_dist_encoding *enc, int rows,
                             int cols, int is_o, ck_dtype dtype)
{
    ck_expr_arena *ctx = NULL;
    ck_descriptor *desc = NULL;
    ck_ival len[2], str[2];
    ck_status st = ck_expr_arena_create(&ctx);
    if (!st && is_o) {
        st = ck_expr_symbol(ctx, "SQ", 1, (1LL << 31), 1, &len[0]);
        if (!st)
            st = ck_expr_symbol(ctx, "LDO", 8, 1LL << 39, 8, &str[0]);
    } else {
        len[0] = ck_ival_int(rows), str[0] = ck_ival_int(cols);
    }
    len[1] = ck_ival_int(cols), str[1] = ck_ival_int(1);
    if (!st)
        st = ck_descriptor_make_naive(2, len, str, &desc);
    char *text = NULL;
    if (!st) {
        ck_tile_window_spec w;
        memset(&w, 0, sizeof w);
        w.name = name;
        w.desc = desc;
        w.ctx = ctx;
        w.enc = enc;
        w.dtype = is_o ? dtype : CK_DTYPE_F32;
        w.origin_align[0] = rows;
        w.origin_align[1] = cols;
        w.ops = is_o ? CK_WIN_STORE : CK_WIN_LOAD;
        st = ck_tile_window_generate(&w, &text);
    }
    if (!st)
        ck_sbuf_printf(b, "%s\n", text);
    ck_tile_free(text);
    ck_descriptor_destroy(desc);
    ck_expr_arena_destroy(ctx);
    return st ? ck_fail_context(st, OP ": sm90 window '%s'", name) : CK_SUCCESS;
}

static ck_status emit_generated(ck_sbuf *b, const ck_attn_prob *prob, const ck_attn_instance *in)
{
    int wgs = in->tile_m / 64;
    ck_dist_encoding cs, co, es, eo;
    ck_distribution ds, dO;
    ck_status st = wgmma_encoding(prob, in->tile_n, CK_MMA_C, &cs);
    if (!st)
        st = wgmma_encoding(prob, (int)prob->p.d_v, CK_MMA_C, &co);
    if (!st)
        st = stacked(&cs, wgs, &es);
    if (!st)
        st = stacked(&co, wgs, &eo);
    if (!st)
        st = ck_dist_make(&es, &ds);
    if (!st)
        st = ck_dist_make(&eo, &dO);
    if (!st)
        st = prob->p.dtype == CK_DTYPE_FP8_E4M3 ? ck_attn_fp8_check_p(in->tile_n)
                                                : check_p_fragment(prob, in->tile_n);
    if (!st)
        st = check_pairs(&dO, 4 * wgs);
    if (st)
        return st;
    int slot_s[128], slot_o[128], ns = 0, no = 0;
    unsigned lanes = 0;
    if (ds.elements_per_thread > 128 || dO.elements_per_thread > 128)
        return ck_fail(CK_ERROR_INTERNAL, OP ": accumulators larger than 128 registers.");
    if ((st = row_slots(&ds, slot_s, &ns)) || (st = row_slots(&dO, slot_o, &no)))
        return st;
    if (ns != 2 || no != 2) /* emit_slots writes two-slot switches */
        return ck_fail(CK_ERROR_INTERNAL, OP ": %d and %d row slots; the kernel has 2.", ns, no);
    if ((st = row_lanes(&ds, slot_s, &dO, slot_o, ns, 4 * wgs, &lanes)))
        return st;
    char text[1024];
    if (ck_dist_encoding_format(&es, text, sizeof text))
        snprintf(text, sizeof text, "(too long to print)");
    ck_sbuf_printf(b, "/* generated from the S accumulator's encoding %s */\n", text);
    ck_sbuf_printf(b, "#define ATTN90_SLOTS %d\n#define ATTN90_ROW_LANES %uu\n", ns, lanes);
    emit_slots(b, "attn90_slot_s", slot_s, ds.elements_per_thread);
    emit_slots(b, "attn90_slot_o", slot_o, dO.elements_per_thread);
    ck_sbuf_printf(b, "CK_DEVICE int attn90_slot_reg(int slot)\n{\n    switch (slot) {\n");
    for (int s = 0; s < ns; ++s)
        for (long long r = 0; r < ds.elements_per_thread; ++r)
            if (slot_s[r] == s) {
                ck_sbuf_printf(b, "    case %d:\n        return %lld;\n", s, r);
                break;
            }
    ck_sbuf_printf(b, "    default:\n        return 0;\n    }\n}\n\n");
    for (int k = 0; k < 2; ++k) { /* attn90_row_max, attn90_row_sum */
        ck_sbuf_printf(b, "CK_DEVICE float attn90_row_%s(float v)\n{\n", k ? "sum" : "max");
        for (unsigned bit = 1; bit < 32; bit <<= 1)
            if (lanes & bit)
                ck_sbuf_printf(b,
                               k ? "    v = v + ck_shfl_xor_f32(v, %u);\n"
                                 : "    v = fmaxf(v, ck_shfl_xor_f32(v, %u));\n",
                               bit);
        ck_sbuf_printf(b, "    return v;\n}\n\n");
    }
    if ((st = emit_window(b, "s", &es, in->tile_m, in->tile_n, 0, prob->p.dtype)))
        return st;
    return emit_window(b, "o", &eo, in->tile_m, (int)prob->p.d_v, 1,
                       prob->p.dtype == CK_DTYPE_FP8_E4M3 ? CK_DTYPE_BF16 : prob->p.dtype);
}

ck_status ck_attn_sm90_source(const ck_attn_prob *prob, const ck_attn_instance *in, char **source)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    char *defines = ck_op_params_defines(t, params(prob, in, t));
    ck_sbuf b = {0};
    *source = NULL;
    ck_sbuf_printf(&b,
                   "/* ck_attention forward, sm90 (TMA + wgmma, warp-specialized), instance "
                   "m%dn%d, %d consumer warpgroups, %d stages */\n#include \"ck_device.h\"\n",
                   in->tile_m, in->tile_n, in->tile_m / 64, stages());
    if (defines)
        ck_sbuf_printf(&b, "%s", defines);
    else
        b.oom = 1;
    free(defines);
    ck_status st = emit_generated(&b, prob, in);
    if (st) {
        free(b.s);
        return st;
    }
    ck_sbuf_printf(&b,
                   "#include \"ops/attention/fwd_sm90_pipeline_kernel.h\"\n"
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%d, 1) ck_attn_fwd_sm90(ck_attn_kargs ka,\n"
                   "    CK_GRID_CONSTANT const ck_tensor_map tq, CK_GRID_CONSTANT const "
                   "ck_tensor_map tk,\n    CK_GRID_CONSTANT const ck_tensor_map tv, "
                   "CK_GRID_CONSTANT const ck_tensor_map to)\n"
                   "{\n    attn_fwd_sm90_main(&ka, &tq, &tk, &tv, &to);\n}\n",
                   in->warps * 32);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

/* ---- launch -------------------------------------------------------------------------------- */

/* The map of a tensor at ptr: dims (d, s, h, b) with strides st (elements; es bytes each), boxes
 * of `line` bytes (64 or 128, with that swizzle) by `rows`. */
static ck_status tile_map(ck_device *dev, const void *ptr, const ck_attn_strides *st, int64_t d,
                          int64_t s, int64_t h, int64_t b, int line, int rows, int es,
                          ck_tensor_map *map)
{
    ck_tensor_map_desc m;
    memset(&m, 0, sizeof m);
    m.elem_bytes = (unsigned)es, m.rank = 4, m.global_address = ptr;
    int64_t len[3] = {s, h, b}, str[3] = {st->seq, st->head, st->batch};
    m.dims[0] = (uint64_t)d;
    for (int i = 0; i < 3; ++i) {
        m.dims[i + 1] = (uint64_t)(len[i] > 0 ? len[i] : 1);
        m.strides[i] = (uint64_t)(len[i] > 1 ? str[i] * es : 16);
    }
    m.box[0] = (uint32_t)(line / es), m.box[1] = (uint32_t)rows, m.box[2] = m.box[3] = 1;
    for (int i = 0; i < 4; ++i)
        m.elem_strides[i] = 1;
    m.swizzle = line == A90_ROW ? 3 : 2; /* 128-byte, or 64-byte lines */
    return ck_tensor_map_create(dev, &m, map);
}

/* The map of Q, K or V at ptr: dims (d, s, h, b) with the tensor's strides, boxes of
 * min(128 bytes, d) x rows (128- or 64-byte swizzle); es: bytes of an element. A dim of one index
 * gets a stride TMA accepts (never used). */
static ck_status qkv_map(ck_device *dev, const void *ptr, const ck_attn_strides *st, int64_t d,
                         int64_t s, int64_t h, int64_t b, int rows, int es, ck_tensor_map *map)
{
    return tile_map(dev, ptr, st, d, s, h, b, d * es < A90_ROW ? (int)(d * es) : A90_ROW, rows, es,
                    map);
}

/* The lpt order's L2 section: (query head, batch) pairs whose K and V fill about two thirds of
 * the L2 (whole GQA groups; all pairs on the emulator, whose L2 size is 0), or
 * CK_ATTN_SM90_SECTION=N. */
static long long section_heads(const ck_attn_prob *prob, const ck_device_props *props)
{
    const ck_attention_problem *p = &prob->p;
    long long all = p->b * p->h_q, group = p->h_q / p->h_k, e = env_int("CK_ATTN_SM90_SECTION");
    long long kv = p->s_k * (p->d + p->d_v) * in_bytes(p),
              fit = props->l2_bytes && kv ? (long long)(props->l2_bytes * 2 / 3) / kv : all;
    long long heads = e ? e : (fit < 1 ? 1 : fit) * group;
    return heads < all ? heads : all;
}

ck_status ck_attn_sm90_launch(ck_context *ctx, ck_kernel *kernel, const ck_attn_prob *prob,
                              const ck_attn_instance *in, const ck_attn_kargs *kargs)
{
    ck_attn_kargs k2 = *kargs, *ka = &k2;
    const ck_attention_problem *p = &prob->p;
    ck_device *dev = ck_context_device(ctx);
    ck_tensor_map tq, tk, tv, to;
    /* varlen: the packed rows, one batch */
    int64_t nb = p->varlen ? 1 : p->b, rq = p->varlen ? p->total_q : p->s_q;
    int64_t rk = p->varlen ? p->total_k : p->s_k;
    int es = in_bytes(p);
    ck_status st = qkv_map(dev, ka->q, &p->q, p->d, rq, p->h_q, nb, in->tile_m, es, &tq);
    if (!st && rk > 0)
        st = qkv_map(dev, ka->k, &p->k, p->d, rk, p->h_k, nb, in->tile_n, es, &tk);
    if (!st && rk > 0 && es == 1) { /* fp8: V^T [b, h_k, d_v, vt_keys] (sm90_fp8.c), boxes of
                                       min(tile_n, 128) keys by d_v lines */
        ck_attn_strides vt = {p->h_k * p->d_v * ka->vt_keys, ka->vt_keys, p->d_v * ka->vt_keys};
        st = tile_map(dev, ka->v, &vt, ka->vt_keys, p->d_v, p->h_k, nb,
                      in->tile_n < A90_ROW ? in->tile_n : A90_ROW, (int)p->d_v, 1, &tv);
    } else if (!st && rk > 0) {
        st = qkv_map(dev, ka->v, &p->v, p->d_v, rk, p->h_k, nb, in->tile_n, es, &tv);
    }
    if (st)
        return st;
    if (rk == 0) /* no key tile is loaded */
        tk = tv = tq;
    to = tq; /* unused without ATTN_O_TMA */
    if (o_tma(prob, in) &&
        (st = qkv_map(dev, ka->o, &p->o, p->d_v, rq, p->h_q, nb, 64, 2, &to)) != CK_SUCCESS)
        return st;
    /* lpt: the work counter, zero at the start (stream order); its L2 section. (The order is
     * read again here: a kernel built for lpt under another CK_ATTN_SM90_ORDER than now finds
     * no counter and walks its items statically.) */
    ka->sect = section_heads(prob, ck_op_props(ctx));
    if (order(prob) == A90_ORDER_LPT) {
        void *ws = NULL;
        if ((st = ck_op_workspace(ctx, sizeof(int), &ws)) ||
            (st = ck_memset_d8(dev, ws, 0, sizeof(int), ck_context_stream(ctx))))
            return st;
        ka->sched = ws;
    }
    void *argv[5] = {(void *)ka, &tq, &tk, &tv, &to};
    size_t sizes[5] = {sizeof *ka, sizeof tq, sizeof tk, sizeof tv, sizeof to};
    /* fixed lengths: a persistent grid, one block per multiprocessor over the (query tile,
     * head, batch) work items; varlen: blocks along the rows of the longest sequence hint (each
     * walks every gridDim.x-th query tile of its sequence) */
    long long tiles = (p->s_q + in->tile_m - 1) / in->tile_m;
    tiles = tiles ? tiles : 1;
    unsigned gx = (unsigned)tiles, gy = (unsigned)p->h_q, gz = (unsigned)p->b;
    if (!p->varlen) {
        long long work = tiles * p->h_q * p->b, sms = ck_op_props(ctx)->multiprocessors;
        gx = (unsigned)(work < sms || sms < 1 ? work : sms);
        gy = gz = 1;
    }
    return ck_op_launch(ctx, kernel, gx, gy, gz, (unsigned)in->warps * 32,
                        ck_attn_sm90_shared_bytes(prob, in), argv, sizes, 5);
}
