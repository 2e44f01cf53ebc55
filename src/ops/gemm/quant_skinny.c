/*
 * The small-M mixed-input variant of family 80 ("sm80q", device source
 * sm80_quant_skinny_kernel.h): decode-shaped GEMMs of f16 / bf16 activations (M <= 64) with
 * packed 4-bit weights (int4, uint4 with zero points, fp4 e2m1) and their scale tensors, the
 * same problems, layouts and arguments as the tile pipeline's quantized path (quant.c), another
 * kernel.
 *
 * Why a variant: at M = 16 the tile pipeline (cp.async into shared memory, ldmatrix, 16-row mma
 * tiles, one block per 32 .. 256 columns and no K split) read a 14336 x 4096 int4 weight at a
 * small fraction of the copy bandwidth (bench/RESULTS.md, fourth session): too few blocks, too
 * few bytes in flight, and most of each mma's rows padding. This one loads each weight byte once
 * with 16-byte loads straight into registers (STAGES chunks of K per warp in flight), puts the
 * weights on the mma's 16-row side (M pads to 8), and splits K over the grid until the device
 * has about two blocks per multiprocessor, the splits' sums added in a fixed order.
 *
 * Offered (supports) for packed B with M <= CK_GEMM_QSKINNY_M, row-major A, A and B copied in
 * 16-byte pieces (leading dimensions of 16 bytes, aligned pointers) and K blocks (scale blocks
 * along K) that are multiples of 32 (a chunk of K must lie in one block); the policy ranks it
 * above the tile pipeline. Developer switches, read at plan creation: CK_GEMM_QSKINNY=0 leaves it
 * out; CK_GEMM_QSKINNY_STAGES=1..7 sets the chunks of K per step (loads in flight per warp: STAGES
 * x column tiles x 2 x 16 bytes a lane), CK_GEMM_QSKINNY_SPLITS=1..16 the split of K (at most the
 * steps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

enum {
    WARPS = 4,      /* warps per block, each its own columns */
    MAX_SPLITS = 16 /* the instance id's field */
};

int ck_gemm_qskinny_enabled(void)
{
    const char *e = getenv("CK_GEMM_QSKINNY");
    return !(e && strcmp(e, "0") == 0);
}

/* A developer switch's integer in lo .. hi, else `fallback`. */
static int env_int(const char *name, int lo, int hi, int fallback)
{
    const char *e = getenv(name);
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    return e && end && end != e && *end == '\0' && v >= lo && v <= hi ? (int)v : fallback;
}

/* Bytes each lane loads per column and chunk of K: 16 (chunks of 128), or 8 / 4 where the K
 * blocks are 64 / 32 long; 0 when a chunk cannot lie in one K block. */
static int lane_bytes(const ck_gemm_prob *prob)
{
    int blocked =
        prob->p.scale_a.mode == CK_GEMM_SCALE_BLOCK || prob->p.scale_b.mode == CK_GEMM_SCALE_BLOCK;
    int bk = prob->q_block_k;
    if (!blocked || bk % 128 == 0)
        return 16;
    return bk % 64 == 0 ? 8 : bk % 32 == 0 ? 4 : 0;
}

static int qs_supports(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                       size_t size)
{
    const ck_gemm_problem *p = &prob->p;
    int cc = props->cc_major * 10 + props->cc_minor;
    const char *why = NULL;
    if (!p->b_packed)
        why = "it takes packed 4-bit B only";
    else if (p->m > CK_GEMM_QSKINNY_M)
        why = "it takes M <= 64 (decode shapes); the tile pipeline takes larger M";
    else if (!prob->a_kmajor)
        why = "it takes row-major A (K contiguous) only";
    else if (!ck_gemm_copy_vec(prob, 0) || !ck_gemm_copy_vec(prob, 1))
        why = "it needs A's and B's rows in whole 16-byte pieces (leading dimensions)";
    else if (!lane_bytes(prob))
        why = "its chunks of K need scale blocks along K that are multiples of 32";
    else if (props->backend == CK_BACKEND_CUDA && cc < 80)
        why = "it needs compute capability 8.0 or later";
    else if (!ck_gemm_qskinny_enabled())
        why = "CK_GEMM_QSKINNY=0 leaves it out";
    if (why) {
        snprintf(reason, size, "the small-M mixed-input variant: %s", why);
        return 0;
    }
    return 1;
}

static int a_stage_bytes(const ck_gemm_instance *in)
{
    return in->tile_m * in->tile_k * in->stages * 2;
}

static int k_steps(const ck_gemm_prob *prob, const ck_gemm_instance *in)
{
    long long step = (long long)in->tile_k * in->stages;
    return (int)((prob->p.k + step - 1) / step);
}

/* Registers a thread of the instance takes, rounded up to what sets its occupancy (ptxas,
 * sm_90a, 2 column tiles a warp: 141, 162 at 1, 2 row tiles; 180 .. 255 at 3 .. 8; 4 column
 * tiles: 160, 213 at 1, 2 row tiles; 1 column tile: 166 at 8): the accumulators and a K
 * block's partial sums, 2 x 4 NT MT floats, decide. */
static int regs_estimate(const ck_gemm_instance *in)
{
    int nt = in->tile_n / in->warps_n / 16, mt = in->tile_m / 8;
    return nt * mt <= 4 ? 168 : 256;
}

/* Blocks of the instance resident on one multiprocessor (registers, shared memory, threads). */
static int resident_blocks(const ck_gemm_instance *in, const ck_device_props *props)
{
    int threads = in->warps_n * 32;
    long long regs = props->regs_per_sm > 0 ? props->regs_per_sm : 65536;
    long long smem = props->shared_per_sm > 0 ? (long long)props->shared_per_sm : 228 * 1024;
    long long by_regs = regs / ((long long)regs_estimate(in) * threads);
    long long by_smem = smem / (2LL * a_stage_bytes(in) + 1024);
    long long by_threads = (props->max_threads_per_sm > 0 ? props->max_threads_per_sm : 2048) /
                           threads;
    long long b = by_regs < by_smem ? by_regs : by_smem;
    b = b < by_threads ? b : by_threads;
    return b < 1 ? 1 : (int)b;
}

/* The split of K that fills one wave of resident blocks (the columns alone give too few: 32
 * tiles at N = 4096), at most MAX_SPLITS and the steps of K: e.g. 3 x 132 / 112 -> 3 splits at
 * 16 x 14336 x 4096. One wave: a second, partial one would leave most multiprocessors idle. */
static int pick_splits(const ck_gemm_prob *prob, const ck_gemm_instance *in,
                       const ck_device_props *props)
{
    long long tiles = (prob->p.n + in->tile_n - 1) / in->tile_n;
    long long wave = (long long)resident_blocks(in, props) *
                     (props->multiprocessors > 0 ? props->multiprocessors : 1);
    long long s = wave / tiles;
    int steps = k_steps(prob, in);
    if (s > steps)
        s = steps;
    if (s > MAX_SPLITS)
        s = MAX_SPLITS;
    return s < 1 ? 1 : (int)s;
}

/* Column tiles of 2 x 16 columns per warp (128 a block), then 1 x 16 (64), and up to 16 rows
 * of A 4 x 16 (256) with 2 chunks in flight; else chunks in flight per warp: 4 up to 32 rows of
 * A, 2 above (registers: at M = 64 two column tiles take 255, with
 * 4 bytes spilled, one 166). Two column tiles first at every M: every block reads its step's
 * rows of A from L2, in all 4 M / (columns a block) times the weight's bytes (2x at M = 64 with
 * 128 columns, 4x with 64), and reads each activation fragment from shared memory once per
 * column tile (M / (4 NT) bytes of shared memory per weight byte). */
static int qs_instances(const ck_gemm_prob *prob, const ck_device_props *props,
                        ck_gemm_instance *out, int max)
{
    int mt = (int)((prob->p.m + 7) / 8), vb = lane_bytes(prob), n = 0;
    for (int i = 0; i < (mt <= 2 ? 3 : 2) && n < max; ++i) {
        int nt = i == 2 ? 4 : 2 - i; /* 4 column tiles (256 columns) at M <= 16: same registers
                                        of weights with half the chunks in flight */
        ck_gemm_instance in;
        memset(&in, 0, sizeof in);
        in.family = CK_GEMM_FAMILY_SM80Q;
        in.tile_m = 8 * mt;
        in.tile_n = 16 * nt * WARPS;
        in.tile_k = 8 * vb;
        in.stages = env_int("CK_GEMM_QSKINNY_STAGES", 1, 7, mt <= 4 && nt < 4 ? 4 : 2);
        in.warps_m = 1;
        in.warps_n = WARPS;
        in.cluster = 1;
        in.split_k =
            env_int("CK_GEMM_QSKINNY_SPLITS", 1, MAX_SPLITS, pick_splits(prob, &in, props));
        if (in.split_k > k_steps(prob, &in))
            in.split_k = k_steps(prob, &in);
        if ((size_t)a_stage_bytes(&in) * 2 > props->max_shared_per_block)
            continue;
        out[n++] = in;
    }
    return n;
}

double ck_gemm_qskinny_score(const ck_gemm_prob *prob, const ck_gemm_instance *in, int slots)
{
    /* memory-bound: rank above the tile pipeline (whose best scores at most 1), the preferred
     * column tile first, by the share of the device's blocks the grid fills */
    long long tiles = (prob->p.n + in->tile_n - 1) / in->tile_n;
    double blocks = (double)tiles * in->split_k, fill = blocks / (2.0 * (slots > 0 ? slots : 1));
    int preferred = in->tile_n == 16 * WARPS * 2;
    return 1.5 + 0.25 * (fill < 1 ? fill : 1) + (preferred ? 0.25 : 0);
}

/* The accumulator's encoding: the mma C fragment transposed (its rows are D's columns),
 * X0 = [MT, <mma cols>] (rows of A), X1 = [warps, NT, <mma rows>] (columns of B), P0 = warp,
 * P1 = lane, Y = (nt, mt, <mma Ys>): register (nt * MT + mt) * 4 + r. */
static ck_status acc_encoding(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                              ck_dist_encoding *out)
{
    ck_dist_encoding in;
    const char *instr =
        prob->compute_in == CK_DTYPE_F16 ? "mma.m16n8k16.f32.f16" : "mma.m16n8k16.f32.bf16";
    ck_status st = ck_mma_encoding(instr, CK_MMA_C, &in);
    if (st)
        return st;
    if (in.ndim_r != 0 || in.ndim_p != 1 || in.ndim_x != 2)
        return ck_fail(CK_ERROR_INTERNAL, OP ": unexpected mma C encoding shape.");
    int nt = inst->tile_n / inst->warps_n / 16;
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    e.ndim_x = 2;
    /* X0 <- the mma's columns (in X1) after [MT]; X1 <- the mma's rows after [warps, NT] */
    int lead[2] = {1, 2};
    e.ndim_h[0] = 1 + in.ndim_h[1];
    e.h_lengths[0][0] = inst->tile_m / 8;
    e.ndim_h[1] = 2 + in.ndim_h[0];
    e.h_lengths[1][0] = inst->warps_n;
    e.h_lengths[1][1] = nt;
    for (int h = 0; h < in.ndim_h[1]; ++h)
        e.h_lengths[0][lead[0] + h] = in.h_lengths[1][h];
    for (int h = 0; h < in.ndim_h[0]; ++h)
        e.h_lengths[1][lead[1] + h] = in.h_lengths[0][h];
        /* an mma component (major 1 = its X0, 2 = its X1) in the swapped encoding */
#define SWAP_MAJOR(m)    ((m) == 1 ? 2 : 1)
#define SWAP_MINOR(m, k) ((k) + lead[SWAP_MAJOR(m) - 1])
    e.ndim_p = 2;
    e.p_size[0] = 1; /* warp */
    e.p_major[0][0] = 2;
    e.p_minor[0][0] = 0;
    e.p_size[1] = in.p_size[0];
    for (int i = 0; i < in.p_size[0]; ++i) {
        e.p_major[1][i] = SWAP_MAJOR(in.p_major[0][i]);
        e.p_minor[1][i] = SWAP_MINOR(in.p_major[0][i], in.p_minor[0][i]);
    }
    e.ndim_y = 2 + in.ndim_y;
    e.y_major[0] = 2; /* nt */
    e.y_minor[0] = 1;
    e.y_major[1] = 1; /* mt */
    e.y_minor[1] = 0;
    for (int i = 0; i < in.ndim_y; ++i) {
        e.y_major[2 + i] = SWAP_MAJOR(in.y_major[i]);
        e.y_minor[2 + i] = SWAP_MINOR(in.y_major[i], in.y_minor[i]);
    }
#undef SWAP_MAJOR
#undef SWAP_MINOR
    ck_distribution d;
    if ((st = ck_dist_make(&e, &d)))
        return ck_fail_context(st, OP ": the small-M mixed-input accumulator encoding");
    *out = e;
    return CK_SUCCESS;
}

static ck_status qs_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst, char **source)
{
    *source = NULL;
    ck_dist_encoding acc;
    char *defs = NULL, *epi = NULL;
    ck_status st = acc_encoding(prob, inst, &acc);
    if (st || (st = ck_gemm_source_parts(prob, inst, &acc, &defs, &epi)))
        return st;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* ck_gemm, family sm80, small-M mixed-input variant (weights straight to "
                   "registers, mma.sync with roles swapped), instance %dx%dx%d u%d w%d k%d */\n"
                   "#include \"ck_device.h\"\n%s"
                   "#include \"ops/gemm/gemm_args_kernel.h\"\n%s"
                   "#include \"ops/gemm/sm80_quant_skinny_kernel.h\"\n"
                   "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_gemm_sm80q(ck_gemm_kargs ka)\n"
                   "{\n    gemm_quant_skinny_main(ka);\n}\n",
                   inst->tile_m, inst->tile_n, inst->tile_k, inst->stages, inst->warps_n,
                   inst->split_k, defs, epi, inst->warps_n * 32);
    free(defs);
    free(epi);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the kernel source.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

typedef struct qs_state {
    ck_device *dev;
    void *ws; /* splits' partial sums, then a counter per column tile */
    size_t ws_flags_offset;
    int splits;
} qs_state;

static void qs_state_free(void *p)
{
    qs_state *s = p;
    if (s && s->ws)
        ck_free(s->dev, s->ws);
    free(s);
}

static ck_status qs_prepare(ck_gemm_plan *plan)
{
    const ck_gemm_instance *in = &plan->inst;
    const ck_gemm_prob *prob = &plan->prob;
    long long tiles = (prob->p.n + in->tile_n - 1) / in->tile_n;
    int steps = k_steps(prob, in);
    qs_state *s = calloc(1, sizeof *s);
    if (!s)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the plan state.");
    s->dev = ck_context_device(plan->ctx);
    s->splits = in->split_k < 1 ? 1 : in->split_k > steps ? steps : in->split_k;
    plan->family_state = s;
    plan->family_state_free = qs_state_free;
    memset(&plan->launch, 0, sizeof plan->launch);
    plan->launch.grid[0] = (unsigned)(tiles * s->splits);
    plan->launch.grid[1] = plan->launch.grid[2] = 1;
    plan->launch.block[0] = (unsigned)(in->warps_n * 32);
    plan->launch.block[1] = plan->launch.block[2] = 1;
    plan->launch.dynamic_shared_bytes = (size_t)a_stage_bytes(in) * 2;
    plan->align_a = plan->align_b = 16;
    int dd = ck_gemm_matrix_div(&prob->p.d) >= 2 ? 2 : 1;
    plan->align_d = (unsigned)(dd * ck_gemm_dtype_bytes(prob->p.d.dtype));
    int cd = prob->has_c && ck_gemm_matrix_div(&prob->p.c) >= 2 ? 2 : 1;
    plan->align_c = prob->has_c ? (unsigned)(cd * ck_gemm_dtype_bytes(prob->p.c.dtype)) : 1;
    if (s->splits < 2)
        return CK_SUCCESS;
    /* one slot of tile_m x tile_n floats per (column tile, split), then the counters (zero) */
    s->ws_flags_offset = (size_t)tiles * s->splits * in->tile_m * in->tile_n * sizeof(float);
    size_t bytes = s->ws_flags_offset + (size_t)tiles * sizeof(unsigned);
    ck_status st = ck_malloc(s->dev, bytes, &s->ws);
    if (!st)
        st = ck_memset_d8(s->dev, (char *)s->ws + s->ws_flags_offset, 0, bytes - s->ws_flags_offset,
                          NULL);
    return st;
}

static ck_status qs_launch(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    const qs_state *s = plan->family_state;
    ck_gemm_kargs ka;
    ck_gemm_fill_kargs(plan, args, &ka);
    ka.k_splits = s->splits;
    ka.ws = s->ws;
    ka.ws_flags = s->ws ? (unsigned *)((char *)s->ws + s->ws_flags_offset) : NULL;
    void *argv[1] = {&ka};
    size_t sizes[1] = {sizeof ka};
    return ck_op_launch(plan->ctx, plan->kernel, plan->launch.grid[0], 1, 1, plan->launch.block[0],
                        plan->launch.dynamic_shared_bytes, argv, sizes, 1);
}

const ck_gemm_family ck_gemm_family_sm80q = {
    CK_GEMM_FAMILY_SM80Q, "sm80q",    qs_supports, qs_instances, qs_source,
    "ck_gemm_sm80q",      qs_prepare, qs_launch,
};
