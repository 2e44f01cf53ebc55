/*
 * The permute policy (permute_internal.h): the tile shape and grid of a tiled transpose (the
 * heuristic, the tuning table's entry `ck tune permute` stores, or the developer switch
 * CK_PERMUTE_INSTANCE), and the shared-memory bank check of the tile layout the generator
 * relies on. docs/ops-permute.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ops/common/op_common.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"

#define OP "ck_permute"

/* ---- tile shape and grid ------------------------------------------------------------------ */

/* Blocks along one tile dimension of length len: the candidate (16 or 8 chunk groups of V
 * elements) whose tiles cover len with the least padding (no edge tiles where one divides
 * len), the larger on a tie. `allow16`: 16 is a candidate. */
static int choose_groups(long long len, int v, int allow16)
{
    long long pad8 = (len + 8 * v - 1) / (8 * v) * (8 * v);
    long long pad16 = (len + 16 * v - 1) / (16 * v) * (16 * v);
    return allow16 && pad16 <= pad8 ? 16 : 8;
}

void ck_permute_choose_tile(ck_perm_plan *p, const char *env)
{
    const int e = p->elem_bytes, v = 16 / e, last = p->rank - 1;
    /* default: 16 x 16 groups (8 x 16 for 1-byte elements), a dimension narrowed to 8 groups
     * where that avoids edge tiles or padding (3136 = 49 x 64 bf16) */
    p->gn = choose_groups(p->len[last], v, e > 1);
    p->gm = choose_groups(p->len[p->dim_m], v, 1);
    p->tiles_per_block = 0;
    /* default: the tile windows for elements of 2 bytes or more (bf16 timed at 1.000-1.004 of
     * the hand indexing, bench/RESULTS.md run Z2); 1-byte elements keep the indexing (their edge
     * store window spills) */
    p->window = e >= 2 && ck_permute_window_ok(p);
    int tn, tm, tpb, w = e >= 2, got;
    char extra;
    if (!env ||
        ((got = sscanf(env, "%d,%d,%d,%d%c", &tn, &tm, &tpb, &w, &extra)) != 4 &&
         sscanf(env, "%d,%d,%d%c", &tn, &tm, &tpb, &extra) != 3) ||
        tn < 0 || tm < 0 || tpb < 0 || tn % v || tm % v || w < 0 || w > 1)
        return;
    int gn = tn ? tn / v : p->gn, gm = tm ? tm / v : p->gm;
    if (!ck_perm_shape_ok(e, gn, gm))
        return;
    p->gn = gn;
    p->gm = gm;
    p->tiles_per_block = tpb;
    p->window = w && ck_permute_window_ok(p);
}

void ck_permute_window_env(ck_perm_plan *p)
{
    const char *e = getenv("CK_PERMUTE_WINDOW");
    if (p->kind == CK_PERM_TILE && e && (e[0] == '0' || e[0] == '1') && e[1] == '\0')
        p->window = e[0] == '1' && ck_permute_window_ok(p);
}

void ck_permute_default_tile(ck_perm_plan *p)
{
    ck_permute_choose_tile(p, getenv("CK_PERMUTE_INSTANCE"));
    ck_permute_window_env(p);
}

long long ck_permute_tile_blocks(const ck_perm_plan *p, long long tiles, int sms)
{
    long long tpb = p->tiles_per_block;
    if (tpb <= 0) {
        /* One tile per block while the grid has fewer than 8 waves of resident blocks (the
         * block scheduler balances the tail); up to 4 tiles per block (grid stride) beyond,
         * keeping at least 4 waves. */
        long long slots =
            (long long)(sms > 0 ? sms : 1) * ck_perm_blocks_per_sm(p->elem_bytes, p->gn * p->gm);
        tpb = tiles / (4 * slots);
        tpb = tpb < 1 ? 1 : tpb > 4 ? 4 : tpb;
        if (tiles < 8 * slots)
            tpb = 1;
    }
    long long blocks = (tiles + tpb - 1) / tpb;
    return blocks > 0x7fffffffll ? 0x7fffffffll : blocks;
}

/* ---- shared-memory bank check ------------------------------------------------------------- */

/* Worst bank ways over the quarter-warp phases of one warp's 16-byte accesses at addr[32]. */
static int phase_ways(const ck_access_hw *hw, const long long *addr)
{
    int lanes_per_phase = hw->num_banks * hw->bank_bytes / 16; /* 16-byte accesses */
    int worst = 1;
    for (int p = 0; p < hw->warp_size; p += lanes_per_phase) {
        /* per bank: distinct words addressed */
        long long words[64 * 4];
        int nwords = 0;
        for (int l = p; l < p + lanes_per_phase; ++l)
            for (int w = 0; w < 16 / hw->bank_bytes; ++w) {
                long long word = addr[l] / hw->bank_bytes + w;
                int dup = 0;
                for (int k = 0; k < nwords; ++k)
                    dup |= words[k] == word;
                if (!dup && nwords < 64 * 4)
                    words[nwords++] = word;
            }
        for (int b = 0; b < hw->num_banks; ++b) {
            int ways = 0;
            for (int k = 0; k < nwords; ++k)
                ways += (int)(words[k] % hw->num_banks) == b;
            if (ways > worst)
                worst = ways;
        }
    }
    return worst;
}

void ck_permute_smem_ways(int e, int gn, int gm, int *pass1, int *pass2)
{
    ck_access_hw hw = ck_access_hw_default();
    const int v = 16 / e, threads = gn * gm;
    int w1 = 1, w2 = 1;
    long long addr[32];
    for (int warp = 0; warp < threads / hw.warp_size; ++warp) {
        for (int s = 0; s < v; ++s) {
            for (int l = 0; l < hw.warp_size; ++l) {
                int rr, c;
                ck_perm_pass1(warp * hw.warp_size + l, s, threads, gm, &rr, &c);
                addr[l] = ck_perm_smem_offset(rr, c, v, gm);
            }
            int w = phase_ways(&hw, addr);
            w1 = w > w1 ? w : w1;
            for (int l = 0; l < hw.warp_size; ++l) {
                int nc, mc;
                ck_perm_pass2(warp * hw.warp_size + l, gn, &nc, &mc);
                addr[l] = ck_perm_smem_offset(nc * v + s, mc, v, gm);
            }
            w = phase_ways(&hw, addr);
            w2 = w > w2 ? w : w2;
        }
    }
    *pass1 = w1;
    *pass2 = w2;
}

/* The tuning table's problem key of a tiled transpose: element size, the tile dimensions'
 * lengths, the rest as a batch, the vector widths. */
static void tile_problem_key(const ck_perm_plan *p, char *buf, size_t size)
{
    const int last = p->rank - 1;
    long long batch = 1;
    for (int d = 0; d < last; ++d)
        if (d != p->dim_m)
            batch *= p->len[d];
    snprintf(buf, size, "tile/e=%d/n=%lld/m=%lld/batch=%lld/ld=%d/st=%d", p->elem_bytes,
             p->len[last], p->len[p->dim_m], batch, p->ld_vec, p->st_vec);
}

ck_status ck_permute_plan_on(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src,
                             const int *perm, ck_perm_plan *p, char *problem, size_t size)
{
    ck_status st = ck_permute_plan(dst, src, perm, p);
    if (problem && size)
        problem[0] = '\0';
    if (st != CK_SUCCESS || p->kind != CK_PERM_TILE)
        return st;
    /* the tuning table's tile (ck tune permute) unless the developer switch set one */
    char key[160], inst[64];
    int forced = 0;
    tile_problem_key(p, key, sizeof key);
    if (ck_op_tuned(ctx, "permute", key, inst, sizeof inst, &forced) &&
        (forced || !getenv("CK_PERMUTE_INSTANCE"))) {
        ck_permute_choose_tile(p, inst);
        if (!forced) /* the developer switch over the table's window field */
            ck_permute_window_env(p);
    }
    if (problem)
        snprintf(problem, size, "%s", key);
    return CK_SUCCESS;
}

void ck_permute_instance_name(const ck_perm_plan *p, char *buf, size_t size)
{
    const int v = 16 / p->elem_bytes;
    snprintf(buf, size, "%d,%d,%d,%d", p->gn * v, p->gm * v, p->tiles_per_block, p->window);
}
