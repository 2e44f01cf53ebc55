/*
 * The layernorm / RMSNorm policies (norm_internal.h): problem + device properties (+ the tuning
 * table's entry, the instance `ck tune` forces, or the developer switches) -> the instance.
 * docs/ops-norm.md describes the instances; measurements are in bench/RESULTS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/norm/norm_internal.h"

static int64_t pow2ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

/* Backward knobs from an instance's text "bwd,VPT,PERSISTENT" (the tuning table's form) or the
 * developer switch's "VPT,PERSISTENT": vectors per thread a row is spread over (1..8) and a
 * persistent grid (1) or one group of rows per block (0). 0 when the text is not one of these. */
int ck_norm_bwd_knobs_parse(const char *text, int *vpt, int *persistent)
{
    int a, b;
    if (!text || (sscanf(text, "bwd,%d,%d", &a, &b) != 2 && sscanf(text, "%d,%d", &a, &b) != 2) ||
        a < 1 || a > 8 || (b != 0 && b != 1))
        return 0;
    *vpt = a;
    *persistent = b;
    return 1;
}

void ck_norm_bwd_instance_name(int vpt, int persistent, char *buf, size_t size)
{
    snprintf(buf, size, "bwd,%d,%d", vpt, persistent);
}

int ck_norm_bwd_default_vpt(int64_t n, int vec)
{
    /* rows of more than 512 vectors: 2 vectors per thread (512-thread blocks for 8192 bf16, two
     * per SM) rather than 1 (1024 threads, one block per SM): 1.10x layernorm, 1.03x RMSNorm
     * backward at 16384 x 8192 (bench/RESULTS.md, run Z4) */
    return n / (vec > 0 ? vec : 1) > 512 ? 2 : 1;
}

void ck_norm_bwd_knobs_for(ck_context *ctx, const char *op, const char *problem, int *vpt,
                           int *persistent)
{
    char inst[64];
    int forced = 0;
    *vpt = 0; /* the default for the row length (ck_norm_bwd_default_vpt) */
    *persistent = 1;
    if (ck_op_tuned(ctx, op, problem, inst, sizeof inst, &forced) && strcmp(inst, "auto") != 0 &&
        !ck_norm_bwd_knobs_parse(inst, vpt, persistent))
        CK_LOG(CK_LOG_WARN, "%s: tuning-table instance '%s' for %s does not parse; ignored.", op,
               inst, problem);
    if (!forced)
        ck_norm_bwd_knobs_parse(getenv("CK_NORM_INSTANCE"), vpt, persistent);
}

/* Developer switch of the backward: CK_NORM_BWD="RING,CSLICES" - RING 0 (the previous
 * pipeline: x and dy cached in registers) or 2..4 stages of the shared-memory ring where they
 * fit (-1: automatic), CSLICES 1 (the previous combine: one thread per column over every
 * partial row) or a power of two 2..32 (0: automatic). Missing fields stay automatic. */
static void bwd_switch(int *ring, int *cslices)
{
    const char *e = getenv("CK_NORM_BWD");
    int v[2] = {-1, 0};
    int got = e ? sscanf(e, "%d,%d", &v[0], &v[1]) : 0;
    *ring = got >= 1 && (v[0] == 0 || (v[0] >= 2 && v[0] <= 4)) ? v[0] : -1;
    *cslices = got >= 2 && v[1] >= 1 && v[1] <= 32 && (v[1] & (v[1] - 1)) == 0 ? v[1] : 0;
}

/* The ring's stages: 3 (two rows of loads in flight per block while one is reduced) where the
 * shared memory of the blocks resident on an SM allows, else 2, else none; 16-bit vectors of one
 * element stay in registers (cp.async copies 4 bytes at least). pair_bytes: bytes of an element
 * of x plus one of dy (0: unknown, 8 assumed). */
static int bwd_ring(const ck_norm_instance *in, const ck_device_props *props, int pair_bytes,
                    int want)
{
    if (want == 0 || in->vec < 2)
        return 0;
    int64_t stage = (int64_t)in->block * in->iters * in->vec * (pair_bytes > 0 ? pair_bytes : 8);
    int64_t sms = props->multiprocessors > 0 ? props->multiprocessors : 1;
    int64_t per_sm_threads = props->max_threads_per_sm > 0 ? props->max_threads_per_sm : 2048;
    int64_t resident = (in->grid + sms - 1) / sms, most = per_sm_threads / in->block;
    if (resident > most)
        resident = most > 0 ? most : 1;
    int64_t sm_bytes = props->shared_per_sm > 0 ? (int64_t)props->shared_per_sm : 228 << 10;
    int64_t blk_bytes =
        props->max_shared_per_block > 0 ? (int64_t)props->max_shared_per_block : 227 << 10;
    int64_t budget = sm_bytes / resident - 2048; /* the reduction's and the system's shares */
    if (budget > blk_bytes)
        budget = blk_bytes;
    int s = want > 0 ? want : 3;
    while (s >= 2 && s * stage > budget)
        --s;
    return s >= 2 ? s : 0;
}

/* The combine's slices: each thread sums about 16 partial rows (1024 threads at most). */
static int bwd_cslices(int64_t np, int want)
{
    if (want > 0)
        return want;
    int64_t s = pow2ceil((np + 15) / 16);
    return (int)(s > 32 ? 32 : s);
}

/* The block shape, the register cache and the grid. */
static void pick_bwd_grid(int64_t n, int vec, int64_t rows, const ck_device_props *props,
                          int want_part, int vpt, int persistent, ck_norm_instance *in)
{
    int64_t nv = n / vec;
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
    int64_t sms = props->multiprocessors > 0 ? props->multiprocessors : 1;
    int64_t per_sm_threads = props->max_threads_per_sm > 0 ? props->max_threads_per_sm : 2048;
    int64_t rpb = in->block / in->g;
    int64_t need = (rows + rpb - 1) / rpb;
    int64_t resident = sms * (per_sm_threads / in->block);
    in->grid = (unsigned)(need < resident || !persistent ? need : resident);
    if (in->grid == 0)
        in->grid = 1;
    if (!want_part)
        return;
    /* with partial sums: one wave of blocks at 64 registers per thread (the kernel's most), and
     * the partial rows (grid * rows per block, 8 bytes per column) within 64 MiB of workspace,
     * but at least one block per SM */
    int64_t regs = props->regs_per_sm > 0 ? props->regs_per_sm : 65536;
    int64_t per_sm = regs / 64 / in->block;
    int64_t cap = sms * (per_sm > 0 ? per_sm : 1);
    int64_t by_ws = ((int64_t)64 << 20) / (rpb * n * 8);
    if (cap > by_ws)
        cap = by_ws > sms ? by_ws : sms;
    if (in->grid > cap)
        in->grid = (unsigned)cap;
}

/* The backward's instance: a row over the threads of a warp (several rows per block) or of a
 * block, the grid persistent (one wave of resident blocks) unless the knob says otherwise. */
void ck_norm_pick_bwd_with(int64_t n, int vec, int64_t rows, const ck_device_props *props,
                           int want_part, int pair_bytes, int vpt, int persistent,
                           ck_norm_instance *in)
{
    int ring, cslices;
    bwd_switch(&ring, &cslices);
    pick_bwd_grid(n, vec, rows, props, want_part, vpt, persistent, in);
    in->ring = bwd_ring(in, props, pair_bytes, ring);
    if (in->ring)
        in->cache = 0; /* x and dy come from the ring */
    in->cslices = want_part ? bwd_cslices((int64_t)in->grid * (in->block / in->g), cslices) : 1;
}

void ck_norm_pick_bwd(int64_t n, int vec, int64_t rows, const ck_device_props *props, int want_part,
                      int pair_bytes, ck_norm_instance *in)
{
    int vpt = ck_norm_bwd_default_vpt(n, vec), persistent = 1;
    ck_norm_bwd_knobs_parse(getenv("CK_NORM_INSTANCE"), &vpt, &persistent);
    ck_norm_pick_bwd_with(n, vec, rows, props, want_part, pair_bytes, vpt, persistent, in);
}

void ck_norm_pick(int64_t n, int vec, int64_t rows, int sms, ck_norm_instance *in)
{
    ck_device_props props;
    memset(&props, 0, sizeof props);
    props.multiprocessors = sms;
    ck_norm_pick_bwd(n, vec, rows, &props, 0, 0, in);
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
    k->lcache = -1;
    k->lres = -1;
    k->lsmem = -1;
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
    const char *we = getenv("CK_NORM_WINDOW");
    if (we && (we[0] == '0' || we[0] == '1') && we[1] == '\0')
        k->window = we[0] - '0';
    const char *re = getenv("CK_NORM_RESIDENT");
    if (re && (re[0] == '0' || re[0] == '1') && re[1] == '\0')
        k->lres = re[0] - '0';
    const char *qe = getenv("CK_NORM_QUANT");
    const char *qnames[4] = {"fast", "exact", "intcvt", "recompute"};
    for (int i = 0; qe && i < 4; ++i)
        if (strcmp(qe, qnames[i]) == 0)
            k->quant = i;
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
    int lg, lc, lcache, lsmem = 0;
    int lf = sscanf(text, "loop,%d,%d,%d,%d", &lg, &lc, &lcache, &lsmem);
    if (lf >= 3) {
        if (lg < 32 || lg > 1024 || (lg & (lg - 1)) || (lc != 1 && lc != 2 && lc != 4 && lc != 8) ||
            lcache < -1 || lcache > 16 || lsmem < -1 || lsmem > 64)
            return 0;
        k->lg = lg;
        k->lc = lc;
        k->lcache = lcache;
        k->lres = lf == 4; /* the fifth field: resident */
        k->lsmem = lf == 4 ? lsmem : -1;
        return 1;
    }
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
    if (in->looped && in->raw) {
        snprintf(buf, size, "loop,%d,%d,%d,%d", in->g, in->cluster, in->cache, in->smem);
        return;
    }
    if (in->looped) {
        snprintf(buf, size, "loop,%d,%d,%d", in->g, in->cluster, in->cache);
        return;
    }
    snprintf(buf, size, "fwd,%d,%d,%d,%d", in->g, in->raw, in->block, in->cluster);
}

size_t ck_norm_fwd_smem_bytes(const ck_norm_instance *in)
{
    return in->looped && in->raw ? (size_t)in->smem * (size_t)in->g * 16u : 0u;
}

/* The looped pipeline (norm_fwd_looped_kernel.h): rows longer than the registers of a block
 * hold. Default: 1024 threads, 8 blocks per row on a cluster. Resident (the default for 16-bit
 * x in 16-byte vectors without a residual, on clusters; raw_ok): x's raw codes held on chip, 4
 * vectors per thread in registers (16 registers) and the rest of the row in shared memory
 * (1,048,576 bf16: 12 vectors, 192 KiB a block), so x is read from DRAM once with every load
 * in flight at once. Otherwise (CK_NORM_RESIDENT=0, or f32 / residual rows) streamed: an f32
 * cache of 16 values per thread (the most 1024-thread blocks keep within 64 registers), the
 * rest read again in each pass (from L2: the rows in flight on clusters fit it). */
static void pick_looped(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                        const ck_norm_fwd_knobs *kn, ck_norm_instance *in)
{
    int64_t nv = n / vec;
    int g = kn->lg > 0 ? kn->lg : 1024, c = kn->lg > 0 ? kn->lc : 8;
    if (!clusters_ok || rows > 0x7fffffffLL / c)
        c = 1;
    in->looped = 1;
    in->raw = 0;
    in->vec = vec;
    in->g = in->block = g;
    in->cluster = c;
    in->iters = (int)cdiv(nv, (int64_t)g * c);
    int cache = (g >= 1024 ? 16 : 32) / vec;
    if (kn->lg > 0 && kn->lcache >= 0)
        cache = kn->lcache;
    in->cache = cache < in->iters ? cache : in->iters;
    in->smem = 0;
    int resident = kn->lres >= 0 ? kn->lres : c > 1;
    if (resident && raw_ok && vec == 8) {
        int64_t fit = (c > 1 ? CK_NORM_LOOP_SMEM_CLUSTER : CK_NORM_LOOP_SMEM_ONE) / (16 * g);
        int held = kn->lg > 0 && kn->lcache >= 0 ? kn->lcache : 4;
        in->raw = 1;
        in->cache = held < in->iters ? held : in->iters;
        int64_t rest = in->iters - in->cache;
        if (kn->lsmem >= 0 && kn->lsmem < rest)
            rest = kn->lsmem;
        in->smem = (int)(rest < fit ? rest : fit);
    }
    int64_t grid = c > 1 ? rows * c : rows;
    in->grid = (unsigned)(grid < 0x7fffffffLL ? (grid > 0 ? grid : 1) : 0x7fffffffLL);
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
    in->looped = 0;
    in->smem = 0;
    in->qexact = kn.quant == CK_NORM_Q_EXACT;
    in->fp8cvt = 0; /* the caller sets it from the device */
    if (kn.lg > 0 || n > CK_NORM_REG_MAX_N) {
        pick_looped(n, vec, rows, raw_ok, clusters_ok, &kn, in);
        return;
    }
    /* Opt-in (knobs cc, cg: C = 2, 4 or 8 blocks of G = 128, 256 or 512 threads; a tuning-table
     * entry or CK_NORM_CLUSTER=C,G): 16-bit rows of 32,769 to 65,536 elements split over a
     * thread-block cluster, 64 raw values per thread at most, the statistics exchanged with
     * st.async (norm_fwd_kernel.h). Not the default: slower on the H100 (bench/RESULTS.md). */
    int cc = kn.cc, cg = kn.cg;
    if (cc > 0 && raw_ok && clusters_ok && kn.g == 0 && !kn.vals_set && kn.raw != 0 && n > 32768 &&
        cdiv(nv, (int64_t)cc * cg) * vec <= 64 && rows <= 0x7fffffffLL / cc) {
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
            /* bf16 rows longer than 8192: 8 vectors (64 raw values) per thread, faster on the
             * H100 than 32 values each in twice the threads (bench/RESULTS.md, "Measurements
             * moved out of the memory-bound ops' sources") */
            if (raw_ok == 2 && kn.raw != 0 && !kn.vals_set && n > 8192)
                for (int b = 64; b <= 1024 && !g; b *= 2)
                    if (cdiv(nv, b) * vec <= 64)
                        g = b;
            for (int b = 64; b <= 1024 && !g; b *= 2)
                if (cdiv(nv, b) * vec <= kn.vals)
                    g = b;
            /* bf16 keeps raw codes by default (a shift converts them): 32 registers instead
             * of 39-40, so 4 blocks of 512 threads fit an SM. Not for a quantized y's fast
             * epilogue (f32 values of x, then y, converted once: 2 instructions an element
             * fewer than the raw codes with y kept, 56-61 registers; CK_NORM_QUANT) */
            int qf32 = kn.qf32 && (kn.quant == CK_NORM_Q_FAST || kn.quant == CK_NORM_Q_INTCVT);
            raw = g && raw_ok == 2 && kn.raw != 0 && !(qf32 && cdiv(nv, g) * vec <= 32);
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

/* The knobs for a problem: the instance ck tune forces, else the table's entry with the
 * developer switches over it. */
void ck_norm_fwd_knobs_for(ck_context *ctx, const char *op, const char *problem,
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

int ck_norm_fwd_window_ok(const ck_norm_fwd_problem *p, const ck_norm_instance *in)
{
    const int types[3] = {p->xt, p->rt, p->ot};
    for (int i = 0; i < 3; ++i)
        if (types[i] >= 0 && in->vec * ck_dtype_get((ck_dtype)types[i])->storage_bits != 128)
            return 0;
    return !in->looped && in->cluster == 1 && in->cache == in->iters &&
           (int64_t)in->iters * in->g * in->vec <= CK_DIST_MAX_LENGTH;
}
