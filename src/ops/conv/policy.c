/*
 * The convolution policy (CK's instance selection for grouped conv): for one implicit GEMM of a
 * plan and a device, the route its operands take and the GEMM instance that runs it, with the
 * reason for the choice and for every faster route it refused:
 *
 *   gemm  a 1x1, stride-1, unpadded forward convolution is a plain GEMM (A = X as an
 *         (N * out) x C matrix of leading dimension G * C): the GEMM's own policy, kernel and
 *         cache key -- on sm_90a its TMA + wgmma family;
 *   sm90  on sm_90a (and the emulator): the GEMM's sm90 pipeline (persistent, warp-specialized,
 *         wgmma) with the view operands copied by the producer warpgroup with 16-byte cp.async
 *         from their copy windows, the others by TMA: forward A = im2col(X), W by TMA; backward
 *         weight B = im2col(X) (N-major boxes), dY by TMA; backward data A = dY's view and
 *         B = W's view per residue class (strided: the class's rows of dX stored through its
 *         dX view from the wgmma accumulator's encoding). Needs the windows'
 *         rows in 16-byte runs (channels of a group a multiple of 8 for 16-bit types, of 4 for
 *         f32 forward), 16-bit types for the backward directions (their N-major operand) and
 *         the sm90 family's own conditions (types, TMA strides);
 *   sm80  everything else: the sm80 pipeline with the views' copy windows (kernel.c) --
 *         f32 backward, C = 3 stems, 3xTF32.
 *
 * Before them, a depthwise convolution (G = C = K: one channel per group, channel multiplier 1)
 * takes the direct route (depthwise.c, dw_pipeline_kernel.h): as G GEMMs of N = 1 it leaves the
 * tensor cores idle and reads X once per tap, while the direct kernel is memory-bound -- one
 * pass over X and Y, 16-byte vectors of channels, strips of outputs along W reusing each loaded
 * input column. Forward with every epilogue, backward data (per residue class of the stride,
 * conv's classes: the forward convolution of dY with the class's flipped taps) and backward
 * weight (dw_wgrad_pipeline_kernel.h: fixed-order partial sums).
 *
 * The choice enters the kernel cache key through the route tag and the GEMM's parameter table
 * (kernel.c's kernel_key), so every decision here is covered. CK_CONV_ROUTE=sm80 in the
 * environment keeps the policy on the sm80 route (its best instance), for measuring one route
 * against the other (bench/conv.py --route sm80); CK_CONV_ROUTE=gemm keeps depthwise problems on
 * the implicit-GEMM routes (the policy's choice among them), to time the direct route against
 * them; CK_CONV_DW_STRIP=n sets the direct route's outputs per strip, CK_CONV_DW_WGRAD_BLOCKS=n
 * the blocks its backward weight aims at, CK_CONV_DW_MIN_BLOCKS=n the launch bounds' resident
 * blocks per SM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/conv/conv_internal.h"

#define OP "ck_conv"

enum { MAXI = 48 };

int ck_conv_bwd_data_strided(const ck_conv_prob *q)
{
    return q->p.direction == CK_CONV_BWD_DATA &&
           (q->str[0] != 1 || q->str[1] != 1 || q->str[2] != 1);
}

int ck_conv_is_plain_gemm(const ck_conv_prob *q)
{
    if (q->p.direction != CK_CONV_FWD)
        return 0;
    for (int d = 0; d < 3; ++d)
        if (q->fil[d] != 1 || q->str[d] != 1 || q->pl[d] || q->pr[d])
            return 0;
    return 1;
}

const char *ck_conv_route_name(ck_conv_route r)
{
    return r == CK_CONV_ROUTE_GEMM        ? "gemm"
           : r == CK_CONV_ROUTE_SM90      ? "sm90"
           : r == CK_CONV_ROUTE_DEPTHWISE ? "depthwise"
                                          : "sm80";
}

/* The best (or, with smallest, the smallest-tile) instance of `family` among ins[0..n-1] that
 * `ok` accepts; -1 if none. The list is ranked best first. */
static int pick_of(const ck_gemm_instance *ins, int n, int family, int smallest,
                   int (*ok)(const ck_gemm_instance *))
{
    int pick = -1;
    for (int i = 0; i < n; ++i) {
        if ((family && ins[i].family != family) || (ok && !ok(&ins[i])))
            continue;
        if (pick < 0)
            pick = i;
        else if (smallest && ins[i].tile_m * ins[i].tile_n < ins[pick].tile_m * ins[pick].tile_n)
            pick = i;
        if (!smallest)
            break;
    }
    return pick;
}

/* sm90 instances of whole tiles of 128 rows (the smallest-tile picks of the tests; the
 * small-M tiles of 64 rows are not built with loaders). */
static int sm90_plain(const ck_gemm_instance *in)
{
    return in->tile_m >= 128 && in->split_k <= 1 &&
           (in->decomp == CK_GEMM_DECOMP_AUTO || in->decomp == CK_GEMM_DECOMP_TILES) &&
           in->cluster <= 1;
}

/* sm90 loader instances: whole tiles or the deterministic split of K (backward weight's long
 * reduction over N * out on few tiles); no clusters (a loader writes its own block's tile) and
 * none of the nondeterministic or stream-K variants. */
static int sm90_loader_ok(const ck_gemm_instance *in)
{
    return in->tile_m >= 128 && /* the small-M tiles of 64 rows are not built with loaders */
           (in->decomp == CK_GEMM_DECOMP_AUTO || in->decomp == CK_GEMM_DECOMP_TILES ||
            in->decomp == CK_GEMM_DECOMP_SPLIT_K) &&
           in->cluster <= 1;
}

/* Why the sm90 route cannot take this implicit GEMM (0: it can). */
static int sm90_refuses(const ck_conv_prob *q, const ck_conv_class *cls, const ck_gemm_prob *gp,
                        const ck_device_props *props, char *why, size_t size)
{
    char reason[256] = "";
    ck_conv_direction dir = q->p.direction;
    ck_dtype ta = ck_conv_read_dtype(&q->p, 0);
    if (dir != CK_CONV_FWD && (q->p.in_dtype == CK_DTYPE_F32 || ck_conv_8bit(ta))) {
        snprintf(why, size,
                 "sm90 not used: %s reads an N-major operand (%s), which wgmma takes in 16-bit "
                 "types only (tf32 and 8-bit operands are K-major)",
                 dir == CK_CONV_BWD_DATA ? "backward data" : "backward weight",
                 dir == CK_CONV_BWD_DATA ? "W's view: C contiguous" : "dY and im2col(X)");
        return 1;
    }
    if (ta == CK_DTYPE_I8) {
        snprintf(why, size, "sm90 not used: the sm90 family has no i8 wgmma pipeline");
        return 1;
    }
    /* the view operands' copy windows, for the producer warpgroup: 16-byte cp.async */
    ck_gemm_instance in;
    memset(&in, 0, sizeof in);
    in.family = CK_GEMM_FAMILY_SM90;
    in.tile_m = 128, in.tile_n = 64, in.tile_k = 128 / ck_gemm_dtype_bytes(ta);
    in.warps_m = 2, in.warps_n = 1;
    int loaders = dir == CK_CONV_FWD ? 1 : dir == CK_CONV_BWD_WEIGHT ? 2 : 3;
    for (int o = 0; o < 2; ++o) {
        if (!(loaders >> o & 1))
            continue;
        char *src = NULL;
        ck_tile_copy_info info;
        memset(&info, 0, sizeof info);
        ck_status st = ck_conv_window_source(q, cls, &in, o, &src, &info);
        ck_tile_free(src);
        const char *view = dir == CK_CONV_BWD_DATA ? (o ? "W" : "dY") : "im2col";
        if (st) {
            snprintf(why, size, "sm90 not used: no %s copy window (%s)", view, ck_last_error());
            ck_clear_error();
            return 1;
        }
        if (!info.async || info.vector_bytes != 16) {
            snprintf(why, size,
                     "sm90 not used: the producer's cp.async copies need the %s rows in "
                     "16-byte runs, but %s = %lld channels per group of %s give %d-byte %s",
                     view, dir == CK_CONV_BWD_DATA && !o ? "K" : "C",
                     (long long)(dir == CK_CONV_BWD_DATA && !o ? q->p.k : q->p.c),
                     ck_dtype_name(ck_conv_read_dtype(&q->p, o)), info.vector_bytes,
                     info.async ? "cp.async" : "plain loads");
            return 1;
        }
    }
    /* a loaded operand's leading dimension is the loader's business; the family's other
     * conditions hold */
    if (!ck_gemm_family_sm90.supports(gp, props, reason, sizeof reason)) {
        size_t n = strlen(reason);
        if (n && reason[n - 1] == '.')
            reason[n - 1] = 0;
        snprintf(why, size, "sm90 not used: %s", reason);
        return 1;
    }
    return 0;
}

ck_status ck_conv_policy_choose(const ck_conv_prob *q, const ck_conv_class *cls,
                                const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                                const ck_device_props *props, int pick, ck_conv_choice *out)
{
    memset(out, 0, sizeof *out);
    ck_gemm_instance ins[MAXI];
    double score[MAXI];
    char reason[512] = "";
    int smallest = pick != CK_CONV_PICK_POLICY, split = pick == CK_CONV_PICK_SM90_SPLIT;
    const char *env = getenv("CK_CONV_ROUTE");
    int only80 = pick == CK_CONV_PICK_POLICY && env && strcmp(env, "sm80") == 0;
    if (split)
        pick = CK_CONV_PICK_SM90_SMALLEST, plain_gp = NULL; /* the loader route, split */
    /* 1. a plain GEMM: the GEMM's policy over every family */
    if (plain_gp && pick != CK_CONV_PICK_SM80_SMALLEST && !only80) {
        int n = ck_gemm_policy_rank(plain_gp, props, ins, score, MAXI, reason, sizeof reason);
        int i = pick_of(ins, n, pick == CK_CONV_PICK_SM90_SMALLEST ? CK_GEMM_FAMILY_SM90 : 0,
                        smallest, pick == CK_CONV_PICK_SM90_SMALLEST ? sm90_plain : NULL);
        if (i >= 0) {
            out->route = CK_CONV_ROUTE_GEMM;
            out->inst = ins[i];
            snprintf(out->why, sizeof out->why,
                     "gemm: a 1x1, stride-1, unpadded forward convolution is a plain GEMM "
                     "(X read as its A matrix); the GEMM's policy chose family %d",
                     ins[i].family);
            return CK_SUCCESS;
        }
    }
    /* 2. sm90 with the im2col loader */
    char no90[320] = "";
    if (pick == CK_CONV_PICK_SM80_SMALLEST || only80)
        snprintf(no90, sizeof no90, "sm90 not used: the sm80 pipeline was asked for%s",
                 only80 ? " (CK_CONV_ROUTE=sm80)" : "");
    else if (!sm90_refuses(q, cls, loader_gp, props, no90, sizeof no90)) {
        int n = ck_gemm_family_sm90.instances(loader_gp, props, ins, MAXI);
        int slots = props->multiprocessors > 0 ? props->multiprocessors : 1;
        for (int i = 0; i < n; ++i) /* best first by the family's own score */
            score[i] = ck_gemm_sm90_score(loader_gp, &ins[i], slots);
        for (int i = 1; i < n; ++i)
            for (int j = i; j > 0 && score[j - 1] < score[j]; --j) {
                ck_gemm_instance t = ins[j];
                double s = score[j];
                ins[j] = ins[j - 1], score[j] = score[j - 1];
                ins[j - 1] = t, score[j - 1] = s;
            }
        int i =
            pick_of(ins, n, CK_GEMM_FAMILY_SM90, smallest, smallest ? sm90_plain : sm90_loader_ok);
        if (i >= 0) {
            out->route = CK_CONV_ROUTE_SM90;
            out->inst = ins[i];
            if (split)
                out->inst.split_k = 3;
            ck_conv_direction dir = q->p.direction;
            snprintf(out->why, sizeof out->why,
                     "sm90: %s on sm_90a, %s by the producer warpgroup's 16-byte cp.async%s, "
                     "wgmma; tile %dx%d, %d stages, K split %d ways%s",
                     dir == CK_CONV_FWD        ? "forward"
                     : dir == CK_CONV_BWD_DATA ? "backward data"
                                               : "backward weight",
                     dir == CK_CONV_FWD          ? "A = im2col(X)"
                     : dir == CK_CONV_BWD_WEIGHT ? "B = im2col(X)"
                                                 : "A = dY's view and B = W's view",
                     dir == CK_CONV_FWD          ? ", W by TMA"
                     : dir == CK_CONV_BWD_WEIGHT ? ", dY by TMA"
                                                 : "",
                     ins[i].tile_m, ins[i].tile_n, ins[i].stages,
                     out->inst.split_k > 1 ? out->inst.split_k : 1,
                     smallest ? " (the smallest tile, as asked)" : " (the family's best score)");
            return CK_SUCCESS;
        }
        snprintf(no90, sizeof no90, "sm90 not used: no instance fits the shared memory");
    }
    /* 3. sm80 with the views' copy windows: the policy's best sm80 instance whose windows
     * exist (a 2-D thread pattern, lines of whole 16-byte chunks), or the smallest */
    char no80[256] = "";
    (void)reason;
    if (!ck_gemm_family_sm80.supports(loader_gp, props, no80, sizeof no80))
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": %s; %s.", no90, no80);
    int n = ck_gemm_policy_rank(loader_gp, props, ins, score, MAXI, reason, sizeof reason);
    int best = -1;
    for (int i = 0; i < n && (smallest || best < 0); ++i) {
        if (ins[i].family != CK_GEMM_FAMILY_SM80)
            continue;
        if (!ck_conv_windows_exist(q, cls, &ins[i]))
            continue;
        if (best < 0 ||
            (smallest && ins[i].tile_m * ins[i].tile_n < ins[best].tile_m * ins[best].tile_n))
            best = i;
    }
    if (best < 0)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": no sm80 GEMM instance can read this problem's views (%s).", no90);
    out->route = CK_CONV_ROUTE_SM80;
    out->inst = ins[best];
    snprintf(out->why, sizeof out->why,
             "sm80: cp.async + mma.sync with the views' copy windows, "
             "tile %dx%dx%d; %s",
             ins[best].tile_m, ins[best].tile_n, ins[best].tile_k, no90);
    return CK_SUCCESS;
}

/* ---- tuned choices (tune.c, the tuning table) --------------------------------------------- */

/* Insert ins[n] into ins[0..n-1] ranked by score, best first (ties keep their order). */
static void rank_insert(ck_gemm_instance *ins, double *score, int n)
{
    for (int j = n; j > 0 && score[j - 1] < score[j]; --j) {
        ck_gemm_instance t = ins[j];
        double s = score[j];
        ins[j] = ins[j - 1], score[j] = score[j - 1];
        ins[j - 1] = t, score[j - 1] = s;
    }
}

int ck_conv_route_instances(const ck_conv_prob *q, const ck_conv_class *cls,
                            const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                            const ck_device_props *props, ck_conv_route route,
                            ck_gemm_instance *out, int max)
{
    ck_gemm_instance ins[MAXI];
    double score[MAXI];
    char why[512];
    int n = 0, kept = 0;
    if (route == CK_CONV_ROUTE_GEMM) { /* the GEMM's own candidates, every family */
        if (!plain_gp)
            return 0;
        n = ck_gemm_policy_rank(plain_gp, props, ins, score, MAXI, why, sizeof why);
        for (int i = 0; i < n && kept < max; ++i)
            out[kept++] = ins[i];
        return kept;
    }
    if (route == CK_CONV_ROUTE_SM90) { /* the family's loader instances, by its score */
        if (sm90_refuses(q, cls, loader_gp, props, why, sizeof why))
            return 0;
        n = ck_gemm_family_sm90.instances(loader_gp, props, ins, MAXI);
        int slots = props->multiprocessors > 0 ? props->multiprocessors : 1;
        for (int i = 0; i < n; ++i) {
            score[i] = ck_gemm_sm90_score(loader_gp, &ins[i], slots);
            rank_insert(ins, score, i);
        }
        for (int i = 0; i < n && kept < max; ++i)
            if (sm90_loader_ok(&ins[i]))
                out[kept++] = ins[i];
        return kept;
    }
    if (route != CK_CONV_ROUTE_SM80 ||
        !ck_gemm_family_sm80.supports(loader_gp, props, why, sizeof why))
        return 0;
    n = ck_gemm_policy_rank(loader_gp, props, ins, score, MAXI, why, sizeof why);
    for (int i = 0; i < n && kept < max; ++i)
        if (ins[i].family == CK_GEMM_FAMILY_SM80 && ck_conv_windows_exist(q, cls, &ins[i]))
            out[kept++] = ins[i];
    return kept;
}

void ck_conv_gemm_choice_name(ck_conv_route route, const ck_gemm_instance *in, char *buf,
                              size_t size)
{
    char name[96];
    ck_gemm_instance_name(in, name, sizeof name);
    snprintf(buf, size, "%s:%s", ck_conv_route_name(route), name);
}

int ck_conv_policy_tuned(const ck_conv_prob *q, const ck_conv_class *cls,
                         const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                         const ck_device_props *props, const char *text, ck_conv_choice *out)
{
    static const ck_conv_route routes[] = {CK_CONV_ROUTE_GEMM, CK_CONV_ROUTE_SM90,
                                           CK_CONV_ROUTE_SM80};
    ck_gemm_instance ins[MAXI];
    char name[CK_CONV_TUNED_MAX];
    for (size_t r = 0; r < sizeof routes / sizeof routes[0]; ++r) {
        size_t len = strlen(ck_conv_route_name(routes[r]));
        if (strncmp(text, ck_conv_route_name(routes[r]), len) != 0 || text[len] != ':')
            continue;
        int n = ck_conv_route_instances(q, cls, loader_gp, plain_gp, props, routes[r], ins, MAXI);
        for (int i = 0; i < n; ++i) {
            ck_conv_gemm_choice_name(routes[r], &ins[i], name, sizeof name);
            if (strcmp(name, text) != 0)
                continue;
            memset(out, 0, sizeof *out);
            out->route = routes[r];
            out->inst = ins[i];
            out->tuned = 1;
            snprintf(out->why, sizeof out->why,
                     "%s: the tuned instance %s (the tuning table or ck tune)",
                     ck_conv_route_name(routes[r]), text);
            return 1;
        }
    }
    return 0;
}

/* ---- the direct depthwise route ---------------------------------------------------------- */

enum { DW_SMEM_MAX = 48 * 1024 }; /* the filter stage: no opt-in to more shared memory */

/* Why the direct route cannot take the problem, the developer switch CK_CONV_ROUTE included
 * when use_env (0: it can). */
static int dw_refuses(const ck_conv_prob *q, int use_env, char *why, size_t size)
{
    const ck_conv_problem *p = &q->p;
    const char *env = use_env ? getenv("CK_CONV_ROUTE") : NULL;
    why[0] = 0;
    if (ck_conv_8bit(ck_conv_read_dtype(p, 0)))
        snprintf(why, size,
                 "depthwise not used: the direct kernel reads f32, f16 and bf16; %s inputs take "
                 "the implicit GEMM (8-bit tensor cores, per-tensor scales)",
                 ck_dtype_name(ck_conv_read_dtype(p, 0)));
    else if (p->c != 1 || p->k != 1)
        snprintf(why, size,
                 "depthwise not used: %lld input and %lld output channels per group (the direct "
                 "kernel takes one of each: G = C = K)",
                 (long long)p->c, (long long)p->k);
    else if (env && (strcmp(env, "gemm") == 0 || strcmp(env, "sm80") == 0))
        snprintf(why, size, "depthwise not used: CK_CONV_ROUTE=%s", env);
    else if (p->direction != CK_CONV_BWD_WEIGHT &&
             q->gemm_kf * 4 * 16 / ck_gemm_dtype_bytes(p->in_dtype) > DW_SMEM_MAX)
        snprintf(why, size,
                 "depthwise not used: %lld filter taps of one vector of channels exceed the "
                 "filter stage's %d bytes of shared memory",
                 (long long)q->gemm_kf, (int)DW_SMEM_MAX);
    return why[0] != 0;
}

int ck_conv_dw_refuses(const ck_conv_prob *q, char *why, size_t size)
{
    return dw_refuses(q, 1, why, size);
}

int ck_conv_dw_fits(const ck_conv_prob *q)
{
    char why[384];
    return !dw_refuses(q, 0, why, sizeof why);
}

int ck_conv_dw_parse(const char *text, int wgrad, int *strip, int *lane_blocks, int *vec)
{
    int s = 0, b = 0, v = 0, used = 0, more = 0;
    *strip = *lane_blocks = *vec = 0;
    if (sscanf(text, "depthwise:s%d%n", &s, &used) != 1 || s < 1 || s > 16)
        return 0;
    if (wgrad && (sscanf(text + used, ".b%d%n", &b, &more) != 1 || b < 1 || b > 65535))
        return 0;
    used += more;
    if (text[used] == '.' && (sscanf(text + used, ".v%d%n", &v, &more) != 1 || v < 1 || v > 16 ||
                              (v & (v - 1)) != 0))
        return 0;
    used += v ? more : 0;
    if (text[used] != '\0')
        return 0;
    *strip = s, *lane_blocks = b, *vec = v;
    return 1;
}

void ck_conv_dw_name(const ck_conv_prob *q, const ck_conv_dw *dw, char *buf, size_t size)
{
    char v[16] = "";
    if (dw->vec_set)
        snprintf(v, sizeof v, ".v%d", dw->vec);
    if (q->p.direction == CK_CONV_BWD_WEIGHT)
        snprintf(buf, size, "depthwise:s%d.b%d%s", dw->strip, dw->lane_blocks, v);
    else
        snprintf(buf, size, "depthwise:s%d%s", dw->strip, v);
}

int ck_conv_dw_widest_vec(const ck_conv_prob *q)
{
    int es = ck_gemm_dtype_bytes(q->p.in_dtype), vec = 1;
    while (vec * 2 * es <= 16 && q->p.g % (vec * 2) == 0)
        vec *= 2;
    return vec;
}

/* At most 4 channels per thread: with 8 (16-byte bf16 accesses) a thread's accumulators and
 * taps halve the resident blocks per SM, and the kernel is latency bound at that occupancy;
 * with 4 both directions ran faster over the depthwise set (ncu and timings: bench/RESULTS.md,
 * eighth session, runs S and T). */
int ck_conv_dw_policy_vec(const ck_conv_prob *q)
{
    int w = ck_conv_dw_widest_vec(q);
    return w > 4 ? 4 : w;
}

ck_status ck_conv_dw_policy(const ck_conv_prob *q, const ck_conv_class *cls, const char *tuned,
                            ck_conv_dw *dw)
{
    int tuned_strip = 0, tuned_blocks = 0, tuned_vec = 0;
    if (tuned && !ck_conv_dw_parse(tuned, q->p.direction == CK_CONV_BWD_WEIGHT, &tuned_strip,
                                   &tuned_blocks, &tuned_vec))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": the tuned instance \"%s\" is no direct depthwise instance of this "
                          "direction (depthwise:sS%s[.vV]).",
                       tuned, q->p.direction == CK_CONV_BWD_WEIGHT ? ".bB" : "");
    const ck_conv_problem *p = &q->p;
    memset(dw, 0, sizeof *dw);
    int bwd = p->direction == CK_CONV_BWD_DATA, wgrad = p->direction == CK_CONV_BWD_WEIGHT;
    for (int d = 0; d < 3; ++d) {
        dw->src[d] = bwd ? q->out[d] : q->in[d];
        dw->outl[d] = bwd ? q->in[d] : q->out[d];
        dw->dst[d] = bwd ? cls->rows[d] : q->out[d];
        dw->dstr[d] = bwd ? q->str[d] : 1;
        dw->doff[d] = bwd ? cls->r[d] : 0;
        /* backward data, class of residues r: dX[r + s h] = sum_t dY[h + c0 - t os] W[f0 + t ft]
         * = sum_k dY[h + k os - pl'] W[f0 + (taps - 1 - k) ft] with pl' = (taps - 1) os - c0 */
        dw->str[d] = bwd ? 1 : q->str[d];
        dw->dil[d] = bwd ? cls->os[d] : q->dil[d];
        dw->fil[d] = bwd ? cls->taps[d] : q->fil[d];
        dw->f0[d] = bwd ? cls->f0[d] : 0;
        dw->ft[d] = bwd ? cls->ft[d] : 1;
        dw->pl[d] = bwd ? (cls->taps[d] - 1) * cls->os[d] - cls->c0[d] : q->pl[d];
    }
    dw->flip = bwd;
    /* channels per thread: the widest vector (up to 16 bytes of the input type, dividing G:
     * every thread's channels lie inside the tensor and are aligned to the vector), at most 4
     * (ck_conv_dw_policy_vec); a tuned text or CK_CONV_DW_VEC may ask for another */
    int64_t G = p->g;
    int widest = ck_conv_dw_widest_vec(q);
    dw->vec = ck_conv_dw_policy_vec(q);
    int want_vec = tuned_vec;
    const char *ve = tuned ? NULL : getenv("CK_CONV_DW_VEC");
    if (ve && *ve) {
        char *end = NULL;
        long v = strtol(ve, &end, 10);
        if (*end || v < 1 || v > 16 || (v & (v - 1)) != 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": CK_CONV_DW_VEC = \"%s\"; accepted: 1, 2, 4, 8 or 16 channels "
                              "per thread.",
                           ve);
        want_vec = (int)v;
    }
    if (want_vec && want_vec != dw->vec) {
        if (want_vec > widest)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": %d channels per thread asked for; this problem allows at most "
                              "%d (16 bytes of the input type, dividing G = %lld).",
                           want_vec, widest, (long long)G);
        dw->vec = want_vec, dw->vec_set = 1;
    }
    /* threads along the channels: every vector of G in one block up to a warp's 32 (a warp's
     * load is then up to 512 contiguous bytes of one pixel), else an even split into blocks
     * of at most 32 -- no power of two, so that 96 or 144 channels leave no thread idle --;
     * halved while the filter stage would exceed its shared memory; about 256 threads, the
     * rest along the strips */
    int64_t vecs = G / dw->vec, tiles = (vecs + 31) / 32;
    dw->tct = (int)((vecs + tiles - 1) / tiles);
    while (!wgrad && dw->tct > 1 &&
           (size_t)q->gemm_kf * (size_t)(dw->tct * dw->vec) * 4 > DW_SMEM_MAX)
        dw->tct = (dw->tct + 1) / 2;
    dw->tr = 256 / dw->tct;
    dw->threads = dw->tct * dw->tr;
    /* outputs per strip: 4 (3x3 stride 1: 6 column loads per row for 12 products) */
    dw->strip = 4;
    const char *env = tuned ? NULL : getenv("CK_CONV_DW_STRIP");
    int forced = 0;
    if (tuned)
        dw->strip = tuned_strip, forced = 2, dw->tuned = 1;
    else if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (*end || v < 1 || v > 16)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": CK_CONV_DW_STRIP = \"%s\"; accepted: 1 to 16 outputs per strip.",
                           env);
        dw->strip = (int)v, forced = 1;
    }
    /* CK_CONV_DW_MIN_BLOCKS=n: launch bounds asking the compiler for n resident blocks of the
     * kernel per SM (fewer registers a thread), to time occupancy against reuse */
    const char *mb = getenv("CK_CONV_DW_MIN_BLOCKS");
    if (mb && *mb) {
        char *end = NULL;
        long v = strtol(mb, &end, 10);
        if (*end || v < 1 || v > 8)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": CK_CONV_DW_MIN_BLOCKS = \"%s\"; accepted: 1 to 8 blocks per SM.",
                           mb);
        dw->min_blocks = (int)v;
    }
    if (dw->strip > dw->dst[2])
        dw->strip = (int)dw->dst[2];
    int64_t strips = p->n * dw->dst[0] * dw->dst[1] * ((dw->dst[2] + dw->strip - 1) / dw->strip);
    int64_t gx = (strips + dw->tr - 1) / dw->tr,
            gy = (G + dw->tct * dw->vec - 1) / (dw->tct * dw->vec);
    int64_t rows = dw->fil[0] * dw->fil[1]; /* filter rows (z, y) */
    if (wgrad) {
        /* backward weight: blocks (filter rows, channel blocks, lane blocks) -- the filter rows
         * fastest, so that the blocks reading the same strips of dY and neighbouring rows of X
         * run together and share them in L2 --; about 1024 blocks in all (several waves of 132
         * SMs; CK_CONV_DW_WGRAD_BLOCKS=n sets the target), each thread's strips strided by the
         * lanes, one partial per lane block: the fixed-order sum reads lane_blocks x taps x G
         * floats */
        int64_t target = 1024;
        const char *tb = tuned ? NULL : getenv("CK_CONV_DW_WGRAD_BLOCKS");
        if (tb && *tb) {
            char *end = NULL;
            long v = strtol(tb, &end, 10);
            if (*end || v < 1 || v > 1 << 20)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               OP ": CK_CONV_DW_WGRAD_BLOCKS = \"%s\"; accepted: 1 to 2^20 "
                                  "blocks.",
                               tb);
            target = v;
        }
        int64_t want = tuned ? tuned_blocks : (target + gy * rows - 1) / (gy * rows);
        gx = want < gx ? want : gx;
        gx = gx < 1 ? 1 : gx > 65535 ? 65535 : gx;
        dw->lane_blocks = (int)gx;
        dw->smem = (size_t)dw->threads * (size_t)dw->vec * 4; /* the block's sums */
        dw->ws_bytes = (size_t)gx * (size_t)q->gemm_kf * (size_t)G * 4;
        int64_t sb = (G * q->gemm_kf + 255) / 256;
        if (sb > INT32_MAX || rows > INT32_MAX)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": the depthwise backward weight needs %lld blocks for its sum and "
                              "%lld filter rows; at most 2^31 - 1 each.",
                           (long long)sb, (long long)rows);
        dw->sum_blocks = (unsigned)sb;
    } else {
        dw->smem = (size_t)(dw->fil[0] * dw->fil[1] * dw->fil[2]) * (size_t)(dw->tct * dw->vec) *
                   4; /* the class's filter taps */
    }
    if (gx > INT32_MAX || gy > 65535)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the depthwise launch needs a grid of %lld x %lld blocks; at most "
                          "2^31 - 1 x 65535.",
                       (long long)gx, (long long)gy);
    dw->grid_x = (unsigned)(wgrad ? rows : gx), dw->grid_y = (unsigned)gy;
    dw->grid_z = wgrad ? (unsigned)gx : 1;
    snprintf(dw->why, sizeof dw->why,
             "depthwise: G = C = K = %lld, the direct memory-bound kernel (one pass over the "
             "tensors, no GEMM of N = 1)%s; %d channels per thread, %d threads along the "
             "channels, strips of %d outputs along W%s",
             (long long)G,
             bwd     ? ", backward data per residue class of the stride as the flipped filter's "
                       "forward convolution"
             : wgrad ? ", backward weight as fixed-order partial sums per block and their sum"
                     : "",
             dw->vec, dw->tct, dw->strip,
             forced == 2 ? " (tuned)"
             : forced    ? " (CK_CONV_DW_STRIP)"
                         : "");
    if (wgrad) {
        size_t n = strlen(dw->why);
        snprintf(dw->why + n, sizeof dw->why - n, ", %d lane blocks x %lld filter rows",
                 dw->lane_blocks, (long long)rows);
    }
    return CK_SUCCESS;
}
