/*
 * ck_permute's launch (permute_internal.h): problem (problem.c) -> instance (policy.c) ->
 * kernel (params.c) -> launch with the argument structs shared with the device
 * (permute_args_kernel.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ops/common/op_common.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"

#define OP "ck_permute"

#include "ops/permute/permute_args_kernel.h"

ck_status ck_permute(ck_context *ctx, const ck_tensor *src, const int *perm, ck_tensor *dst)
{
    CK_REQUIRE_NOT_NULL(ctx, OP);
    ck_perm_plan p;
    ck_status st = ck_permute_plan_on(ctx, dst, src, perm, &p, NULL, 0);
    if (st != CK_SUCCESS || p.kind == CK_PERM_NOTHING)
        return st;
    const ck_device_props *props = ck_op_props(ctx);
    const int e = p.elem_bytes, v = 16 / e;
    ck_kernel *k = NULL;
    if (p.kind == CK_PERM_TILE) {
        st = ck_permute_kernel(ctx, &p, &k);
        if (st != CK_SUCCESS)
            return st;
        ck_perm_tile_args a;
        memset(&a, 0, sizeof a);
        const int last = p.rank - 1, gn = p.gn, gm = p.gm, threads = gn * gm;
        a.n = p.len[last];
        a.m = p.len[p.dim_m];
        a.s_n = p.ss[last];
        a.d_m = p.ds[p.dim_m];
        a.tiles_n = (a.n + gn * v - 1) / (gn * v);
        a.tiles_m = (a.m + gm * v - 1) / (gm * v);
        a.tiles = a.tiles_n * a.tiles_m;
        int nb = 0;
        for (int d = 0; d < last; ++d)
            if (d != p.dim_m) {
                a.blen[nb] = p.len[d];
                a.bs[nb] = p.ss[d];
                a.bd[nb] = p.ds[d];
                a.tiles *= p.len[d];
                nb++;
            }
        a.nb = nb;
        long long blocks = ck_permute_tile_blocks(&p, a.tiles, props->multiprocessors);
        if (props->backend == CK_BACKEND_HOST) /* the emulator: one block per worker */
            blocks = props->multiprocessors > 0 ? props->multiprocessors : 1;
        if (blocks > a.tiles)
            blocks = a.tiles;
        void *dptr = p.dst, *sptr = (void *)p.src;
        void *args[3] = {&dptr, &sptr, &a};
        size_t sizes[3] = {sizeof dptr, sizeof sptr, sizeof a};
        return ck_op_launch(ctx, k, (unsigned)blocks, 1, 1, (unsigned)threads, 0, args, sizes, 3);
    }
    st = ck_permute_kernel(ctx, &p, &k);
    if (st != CK_SUCCESS)
        return st;
    ck_perm_gather_args a;
    memset(&a, 0, sizeof a);
    a.items = 1;
    a.rank = p.rank;
    for (int d = 0; d < p.rank; ++d) {
        int lastd = d == p.rank - 1;
        a.len[d] = lastd ? p.len[d] / p.vec : p.len[d];
        a.ss[d] = lastd ? p.ss[d] : p.ss[d] / p.vec;
        a.ds[d] = lastd ? p.ds[d] : p.ds[d] / p.vec;
        a.items *= a.len[d];
    }
    long long blocks = (a.items + 255) / 256,
              cap = (long long)(props->multiprocessors > 0 ? props->multiprocessors : 1) * 8;
    if (blocks > cap)
        blocks = cap;
    void *dptr = p.dst, *sptr = (void *)p.src;
    void *args[3] = {&dptr, &sptr, &a};
    size_t sizes[3] = {sizeof dptr, sizeof sptr, sizeof a};
    return ck_op_launch(ctx, k, (unsigned)blocks, 1, 1, 256, 0, args, sizes, 3);
}
