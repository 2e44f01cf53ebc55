/*
 * Small M (decode / GEMV-like GEMMs, M <= CK_GEMM_SKINNY_M): the time of streaming the operands
 * from memory, which the sm90 family's estimate (sm90.c) takes as a floor under its
 * tensor-core time for such problems, and the developer switches of the family's small-M
 * instances (tiles of 64 rows: one consumer warpgroup, a deeper ring).
 *
 * At M = 16 a 4096 x 4096 weight matrix B is 32 MiB and the multiply-adds are few: the time
 * is B's bytes over the memory bandwidth, provided enough blocks stream enough bytes each. The
 * model counts in the unit of sm90.c's estimate, one K step of a 128 x 256 tile on one
 * multiprocessor, in which a multiprocessor's fair share of the HBM bandwidth moves about
 * 16 KiB (the H100's GEMM rate and copy bandwidth: bench/RESULTS.md, ANCHORS.md). A block that streams alone
 * gets at most twice its fair share (its ring's bytes in flight over the latency).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_internal.h"

enum {
    BYTES_PER_STEP = 16384, /* a multiprocessor's share of HBM per 128 x 256 K step */
    BLOCK_BOOST = 2         /* the most a lone block streams, in fair shares */
};

int ck_gemm_skinny(const ck_gemm_prob *prob)
{
    return prob->p.m <= CK_GEMM_SKINNY_M && ck_gemm_skinny_enabled();
}

static int dtype_bytes(ck_dtype t)
{
    int b = ck_gemm_dtype_bytes(t);
    return b > 0 ? b : 2;
}

double ck_gemm_skinny_memory_time(const ck_gemm_prob *prob, int tile_m, int tile_n, int tile_k,
                                  int split, int slots, double *ideal)
{
    const ck_gemm_problem *p = &prob->p;
    double s = slots > 0 ? slots : 1;
    double ea = dtype_bytes(p->a.dtype), eb = dtype_bytes(p->b.dtype);
    double ed = dtype_bytes(p->d.dtype);
    double batch = (double)p->batch;
    /* every operand once: B's tile rows (at most 2 of 64 at M <= 128) meet in L2, and A (at
     * most 128 rows) stays there for every tile column */
    double bytes = batch * ((double)p->m * p->k * ea + (double)p->k * p->n * eb +
                            (double)p->m * p->n * ed * (prob->has_c ? 2 : 1));
    *ideal = bytes / (BYTES_PER_STEP * s);
    double tiles_m = ceil((double)p->m / tile_m), tiles_n = ceil((double)p->n / tile_n);
    double units = tiles_m * tiles_n * batch * split;
    /* a split's partial sums, written and read back by the last split (mostly in L2: counted
     * once) */
    double partials = split > 1 ? units * tile_m * tile_n * 4.0 : 0;
    double total = bytes + partials;
    /* the busiest block: its units' bytes of B (and A) at most BLOCK_BOOST fair shares */
    double k_tiles = ceil((double)p->k / tile_k);
    double unit_bytes = ceil(k_tiles / split) * tile_k * (tile_n * eb + tile_m * ea);
    double per_block = ceil(units / s) * unit_bytes / (BLOCK_BOOST * BYTES_PER_STEP);
    double device = total / (BYTES_PER_STEP * s);
    return per_block > device ? per_block : device;
}

int ck_gemm_skinny_enabled(void)
{
    const char *e = getenv("CK_GEMM_SKINNY");
    return !(e && strcmp(e, "0") == 0);
}

int ck_gemm_skinny_stages(int fallback)
{
    const char *e = getenv("CK_GEMM_SKINNY_STAGES");
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    return e && end && *end == '\0' && v >= 2 && v <= CK_GEMM_SKINNY_MAX_STAGES ? (int)v : fallback;
}
