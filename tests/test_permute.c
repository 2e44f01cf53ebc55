/* ck_permute on the context's device (the emulator in CI, CK_DEVICE=cuda on a GPU): every output
 * element compared with a CPU reference (exact: permute moves bytes), odd sizes, ranks 1..8 with
 * random permutations, element sizes 1/2/4/8, strided and misaligned tensors, sub-byte types,
 * the plan (collapse, kernel choice, vectors), the shared-memory layout's bank check and the
 * error cases. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"
#include "test.h"

static ck_context *ctx;
static uint64_t rng = 0x5eed0007u;
static long long cases_run, elements_checked;

typedef struct pcase {
    ck_dtype dtype;
    int rank;
    long long shape[8];
    int perm[8];
    int src_pad, dst_pad; /* extra elements per row of every dimension (strided tensors) */
    int src_step;         /* stride of src's last dimension (1 = contiguous) */
    int src_off, dst_off; /* element offsets of data into their buffers (alignment) */
} pcase;

static int elem_bytes(ck_dtype t)
{
    const ck_dtype_info *i = ck_dtype_get(t);
    return i->pack_elements > 1 ? 1 : i->storage_bits / 8;
}

static void make_strides(int rank, const long long *shape, int pad, int step, int64_t *st)
{
    long long acc = step;
    for (int d = rank - 1; d >= 0; --d) {
        st[d] = acc;
        acc = acc * shape[d] + pad;
    }
}

/* Run one case; returns 1 when every element matched. */
static int run_case(const pcase *c, ck_perm_plan *plan_out)
{
    const ck_dtype_info *info = ck_dtype_get(c->dtype);
    int sub = info->pack_elements > 1;
    int e = elem_bytes(c->dtype);
    int64_t sshape[8], dshape[8], sst[8], dst_st[8];
    for (int d = 0; d < c->rank; ++d) {
        sshape[d] = c->shape[d];
        dshape[d] = c->shape[c->perm[d]];
    }
    long long ssh[8], dsh[8];
    for (int d = 0; d < c->rank; ++d) {
        ssh[d] = sshape[d];
        dsh[d] = dshape[d];
    }
    make_strides(c->rank, ssh, c->src_pad, c->src_step, sst);
    make_strides(c->rank, dsh, c->dst_pad, 1, dst_st);
    ck_tensor s, t;
    s.rank = t.rank = c->rank;
    s.dtype = t.dtype = c->dtype;
    long long n = 1, sext = 1, dext = 1;
    for (int d = 0; d < c->rank; ++d) {
        s.shape[d] = sshape[d];
        t.shape[d] = dshape[d];
        s.strides[d] = sst[d];
        t.strides[d] = dst_st[d];
        n *= sshape[d];
        sext += (sshape[d] - 1) * sst[d];
        dext += (dshape[d] - 1) * dst_st[d];
    }
    /* bytes: sub-byte tensors are packed (no pads/offsets in those cases) */
    size_t sbytes = sub ? (size_t)(n * info->storage_bits / 8) : (size_t)((sext + c->src_off) * e);
    size_t dbytes = sub ? (size_t)(n * info->storage_bits / 8) : (size_t)((dext + c->dst_off) * e);
    if (n == 0)
        sbytes = dbytes = 16;
    unsigned char *hs = malloc(sbytes), *hd = malloc(dbytes), *want = malloc(dbytes);
    void *ds = NULL, *dd = NULL;
    int ok = 0;
    if (!hs || !hd || !want)
        goto done;
    for (size_t i = 0; i < sbytes; ++i)
        hs[i] = (unsigned char)ckt_rand64(&rng);
    memset(want, 0xab, dbytes);
    ck_device *dev = ck_context_device(ctx);
    if (ck_malloc(dev, sbytes, &ds) != CK_SUCCESS || ck_malloc(dev, dbytes, &dd) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, ds, hs, sbytes, NULL) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, dd, want, dbytes, NULL) != CK_SUCCESS) {
        CHECK_MSG(0, "device memory: %s", ck_last_error());
        goto done;
    }
    s.data = (char *)ds + (size_t)c->src_off * e;
    t.data = (char *)dd + (size_t)c->dst_off * e;
    if (plan_out)
        CHECK_OK(ck_permute_plan(&t, &s, c->perm, plan_out));
    ck_status st = ck_permute(ctx, &s, c->perm, &t);
    CHECK_MSG(st == CK_SUCCESS, "ck_permute: %s", ck_last_error());
    if (st != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, hd, dd, dbytes, NULL) != CK_SUCCESS)
        goto done;
    /* the library's reference (src/ops/permute/reference.c) on the host copies */
    ck_tensor hs_t = s, want_t = t;
    hs_t.data = hs + (size_t)c->src_off * e;
    want_t.data = want + (size_t)c->dst_off * e;
    CHECK_OK(ck_permute_reference(&want_t, &hs_t, c->perm));
    long long bad = 0;
    for (size_t i = 0; i < dbytes && n > 0; ++i)
        if (hd[i] != want[i] && bad++ < 3)
            CKT_FAIL_("%s rank %d case: byte %zu is 0x%02x, expected 0x%02x", info->name, c->rank,
                      i, hd[i], want[i]);
    ok = bad == 0;
    cases_run++;
    elements_checked += n;
done:
    ck_free(ck_context_device(ctx), ds);
    ck_free(ck_context_device(ctx), dd);
    free(hs);
    free(hd);
    free(want);
    if (ok)
        ++ckt_pass_;
    return ok;
}

static const ck_dtype by_size[4] = {CK_DTYPE_U8, CK_DTYPE_BF16, CK_DTYPE_F32, CK_DTYPE_F64};

static pcase make2d(ck_dtype t, long long r, long long c)
{
    pcase p;
    memset(&p, 0, sizeof p);
    p.dtype = t;
    p.rank = 2;
    p.shape[0] = r;
    p.shape[1] = c;
    p.perm[0] = 1;
    p.perm[1] = 0;
    p.src_step = 1;
    return p;
}

/* 2-D transposes of odd sizes, every element size; full and edge tiles, both vector paths. */
static void test_transpose_odd_sizes(void)
{
    const long long sizes[][2] = {{1, 1},     {3, 17},   {17, 33},   {33, 65},
                                  {65, 1023}, {128, 64}, {256, 136}, {5, 1}};
    for (int t = 0; t < 4; ++t)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
            if (t == 0 && sizes[i][1] == 1023)
                continue; /* 1-byte tiles are 128 x 256: keep the emulator's time down */
            pcase p = make2d(by_size[t], sizes[i][0], sizes[i][1]);
            CHECK_MSG(run_case(&p, NULL), "%s %lldx%lld", ck_dtype_name(p.dtype), sizes[i][0],
                      sizes[i][1]);
        }
}

/* NCHW <-> NHWC: collapses to a batched transpose [N][C][HW] -> [N][HW][C]. */
static void test_nchw_nhwc(void)
{
    pcase p;
    memset(&p, 0, sizeof p);
    p.dtype = CK_DTYPE_BF16;
    p.rank = 4;
    long long sh[4] = {2, 40, 7, 9};
    int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    memcpy(p.shape, sh, sizeof sh);
    memcpy(p.perm, to_nhwc, sizeof to_nhwc);
    p.src_step = 1;
    ck_perm_plan plan;
    CHECK(run_case(&p, &plan));
    CHECK_EQ_INT(plan.kind, CK_PERM_TILE);
    CHECK_EQ_INT(plan.rank, 3); /* [N][HW][C] in the destination's order */
    CHECK_EQ_INT(plan.len[1], 63);
    CHECK_EQ_INT(plan.len[2], 40);
    CHECK_EQ_INT(plan.dim_m, 1);
    CHECK(plan.ld_vec == 0 && plan.st_vec == 1); /* src rows of 63 bf16 are not 16-byte aligned */
    long long sh2[4] = {2, 8, 6, 40};            /* NHWC -> NCHW */
    memcpy(p.shape, sh2, sizeof sh2);
    memcpy(p.perm, to_nchw, sizeof to_nchw);
    CHECK(run_case(&p, &plan));
    CHECK(plan.kind == CK_PERM_TILE && plan.ld_vec == 1 && plan.st_vec == 1);
    /* inner dimension kept: a vectorized gather copy */
    long long sh3[4] = {3, 5, 4, 16};
    int keep[4] = {1, 0, 2, 3};
    memcpy(p.shape, sh3, sizeof sh3);
    memcpy(p.perm, keep, sizeof keep);
    CHECK(run_case(&p, &plan));
    CHECK(plan.kind == CK_PERM_GATHER && plan.vec == 8 && plan.rank == 3);
}

/* Ranks 1..8, random shapes and permutations, every element size, some strided or misaligned. */
static void test_random(void)
{
    for (int it = 0; it < 48; ++it) {
        pcase p;
        memset(&p, 0, sizeof p);
        p.dtype = by_size[it % 4];
        p.rank = 1 + (it / 4) % 8;
        long long budget = 3000, n = 1;
        for (int d = 0; d < p.rank; ++d) {
            long long cap = budget / n;
            long long lim = cap < 2 ? 1 : (p.rank <= 2 ? cap : (cap < 9 ? cap : 9));
            if (p.rank <= 2 && lim > 70)
                lim = 70;
            p.shape[d] = 1 + (long long)(ckt_rand64(&rng) % (uint64_t)lim);
            n *= p.shape[d];
        }
        for (int d = 0; d < p.rank; ++d)
            p.perm[d] = d;
        for (int d = p.rank - 1; d > 0; --d) {
            int j = (int)(ckt_rand64(&rng) % (uint64_t)(d + 1)), tmp = p.perm[d];
            p.perm[d] = p.perm[j];
            p.perm[j] = tmp;
        }
        p.src_step = it % 5 == 3 ? 2 : 1;
        p.src_pad = it % 3 == 1 ? 3 : 0;
        p.dst_pad = it % 7 == 2 ? 1 : 0;
        p.src_off = it % 6 == 5 ? 1 : 0;
        p.dst_off = it % 11 == 4 ? 1 : 0;
        CHECK_MSG(run_case(&p, NULL), "random case %d (rank %d, %s)", it, p.rank,
                  ck_dtype_name(p.dtype));
    }
}

/* Strided and misaligned tiles: element accesses where 16-byte vectors are not allowed. */
static void test_strided_tiles(void)
{
    for (int t = 1; t < 4; ++t) {
        pcase p = make2d(by_size[t], 70, 90);
        p.src_pad = 6;
        ck_perm_plan plan;
        CHECK(run_case(&p, &plan));
        CHECK(plan.kind == CK_PERM_TILE);
        p.src_pad = 0;
        p.src_off = 1;
        p.dst_off = 1;
        CHECK(run_case(&p, &plan));
        CHECK(plan.kind == CK_PERM_TILE && plan.ld_vec == 0 && plan.st_vec == 0);
    }
    /* a batched 3-D transpose with a padded batch stride */
    pcase b;
    memset(&b, 0, sizeof b);
    b.dtype = CK_DTYPE_F16;
    b.rank = 3;
    b.shape[0] = 3;
    b.shape[1] = 24;
    b.shape[2] = 40;
    b.perm[0] = 0;
    b.perm[1] = 2;
    b.perm[2] = 1;
    b.src_step = 1;
    b.src_pad = 8;
    ck_perm_plan plan;
    CHECK(run_case(&b, &plan));
    CHECK(plan.kind == CK_PERM_TILE && plan.ld_vec == 1);
}

/* Sub-byte types: bytes permuted when the last dimension stays; refused otherwise. */
static void test_sub_byte(void)
{
    pcase p;
    memset(&p, 0, sizeof p);
    p.dtype = CK_DTYPE_FP4_E2M1;
    p.rank = 3;
    p.shape[0] = 5;
    p.shape[1] = 7;
    p.shape[2] = 6;
    p.perm[0] = 1;
    p.perm[1] = 0;
    p.perm[2] = 2;
    p.src_step = 1;
    CHECK(run_case(&p, NULL));
    p.dtype = CK_DTYPE_FP6_E2M3;
    p.shape[2] = 8;
    CHECK(run_case(&p, NULL));
    static unsigned char buf[4096];
    ck_tensor s, d;
    int64_t sh[2] = {4, 6}, dsh[2] = {6, 4};
    CHECK_OK(ck_tensor_init(&s, buf, CK_DTYPE_FP4_E2M1, 2, sh, NULL));
    CHECK_OK(ck_tensor_init(&d, buf + 1024, CK_DTYPE_FP4_E2M1, 2, dsh, NULL));
    int perm[2] = {1, 0};
    CHECK_STATUS(ck_permute(ctx, &s, perm, &d), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "last dimension") != NULL);
}

static void test_errors(void)
{
    void *mem = NULL;
    ck_device *dev = ck_context_device(ctx);
    CHECK_OK(ck_malloc(dev, 1 << 16, &mem));
    if (!mem)
        return;
    char *base = mem;
    ck_tensor s, d;
    int64_t sh[3] = {4, 6, 8}, dsh[3] = {8, 4, 6};
    CHECK_OK(ck_tensor_init(&s, base, CK_DTYPE_F32, 3, sh, NULL));
    CHECK_OK(ck_tensor_init(&d, base + 4096, CK_DTYPE_F32, 3, dsh, NULL));
    int good[3] = {2, 0, 1}, dup[3] = {2, 0, 0}, range[3] = {3, 0, 1}, wrong[3] = {2, 1, 0};
    CHECK_OK(ck_permute(ctx, &s, good, &d));
    CHECK_STATUS(ck_permute(ctx, &s, dup, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "perm") != NULL);
    CHECK_STATUS(ck_permute(ctx, &s, range, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_permute(ctx, &s, wrong, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "shape") != NULL);
    CHECK_STATUS(ck_permute(ctx, &s, NULL, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_permute(NULL, &s, good, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_permute(ctx, &s, good, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* aliasing: dst overlapping src, in place included */
    ck_tensor alias = d;
    alias.data = base + 64;
    CHECK_STATUS(ck_permute(ctx, &s, good, &alias), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlap") != NULL);
    /* dtype and rank mismatch */
    ck_tensor other = d;
    other.dtype = CK_DTYPE_I32;
    CHECK_STATUS(ck_permute(ctx, &s, good, &other), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "dtype") != NULL);
    other = d;
    other.rank = 2;
    CHECK_STATUS(ck_permute(ctx, &s, good, &other), CK_ERROR_INVALID_ARGUMENT);
    /* misaligned element pointer (f32 at an odd byte) */
    other = d;
    other.data = base + 4097;
    CHECK_STATUS(ck_permute(ctx, &s, good, &other), CK_ERROR_INVALID_ARGUMENT);
    /* a destination writing one element twice */
    other = d;
    other.strides[0] = 0;
    CHECK_STATUS(ck_permute(ctx, &s, good, &other), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "stride 0") != NULL);
    /* negative stride in the description */
    other = s;
    other.strides[1] = -1;
    CHECK_STATUS(ck_permute(ctx, &other, good, &d), CK_ERROR_INVALID_ARGUMENT);
    /* zero-size: a no-op, even with NULL data */
    ck_tensor zs, zd;
    int64_t z[3] = {4, 0, 8}, zt[3] = {8, 4, 0};
    CHECK_OK(ck_tensor_init(&zs, NULL, CK_DTYPE_F32, 3, z, NULL));
    CHECK_OK(ck_tensor_init(&zd, NULL, CK_DTYPE_F32, 3, zt, NULL));
    int kernels = ck_context_kernel_count(ctx);
    CHECK_OK(ck_permute(ctx, &zs, good, &zd));
    CHECK_EQ_INT(ck_context_kernel_count(ctx), kernels);
    /* rank 0: one element */
    ck_tensor s0, d0;
    CHECK_OK(ck_tensor_init(&s0, base, CK_DTYPE_F64, 0, NULL, NULL));
    CHECK_OK(ck_tensor_init(&d0, base + 8192, CK_DTYPE_F64, 0, NULL, NULL));
    CHECK_OK(ck_permute(ctx, &s0, NULL, &d0));
    CHECK_OK(ck_context_synchronize(ctx));
    ck_free(dev, mem);
}

/* The tile kernel's shared-memory layout is conflict-free in both passes for every element
 * size and every supported tile shape. */
static void test_bank_conflicts(void)
{
    int shapes = 0;
    for (int e = 1; e <= 8; e *= 2)
        for (int gn = 8; gn <= 32; gn *= 2)
            for (int gm = 8; gm <= 32; gm *= 2) {
                if (!ck_perm_shape_ok(e, gn, gm))
                    continue;
                int w1 = 0, w2 = 0;
                ck_permute_smem_ways(e, gn, gm, &w1, &w2);
                CHECK_MSG(w1 == 1 && w2 == 1, "%d-byte elements, %d x %d: %d-way / %d-way", e, gn,
                          gm, w1, w2);
                shapes++;
            }
    CHECK_EQ_INT(shapes, 3 + 6 * 3); /* 1-byte: 128 threads at most */
    CHECK(!ck_perm_shape_ok(2, 32, 16) && !ck_perm_shape_ok(1, 16, 16) &&
          !ck_perm_shape_ok(4, 4, 16) && !ck_perm_shape_ok(4, 16, 64));
}

static ck_perm_plan tile_plan(int e, long long n, long long m)
{
    ck_perm_plan p;
    memset(&p, 0, sizeof p);
    p.kind = CK_PERM_TILE;
    p.elem_bytes = e;
    p.rank = 3;
    p.len[0] = 16;
    p.len[1] = m;
    p.len[2] = n;
    p.dim_m = 1;
    return p;
}

/* Automatic tile shape (edge tiles avoided), the CK_PERMUTE_INSTANCE override and the grid. */
static void test_tile_choice(void)
{
    ck_perm_plan p = tile_plan(2, 256, 3136); /* NCHW -> NHWC bf16: [N][3136][256] */
    ck_permute_choose_tile(&p, NULL);
    CHECK(p.gn == 16 && p.gm == 8 && p.tiles_per_block == 0);
    p = tile_plan(2, 3136, 256); /* NHWC -> NCHW */
    ck_permute_choose_tile(&p, NULL);
    CHECK(p.gn == 8 && p.gm == 16);
    p = tile_plan(2, 8192, 16384);
    ck_permute_choose_tile(&p, NULL);
    CHECK(p.gn == 16 && p.gm == 16);
    p = tile_plan(1, 1000, 1000); /* u8: n groups stay 8; 1000 pads to 1024 either way */
    ck_permute_choose_tile(&p, NULL);
    CHECK(p.gn == 8 && p.gm == 16);
    p = tile_plan(4, 24, 40); /* f32: 24 pads to 32 (8 groups) or 64; 40 to 64 either way */
    ck_permute_choose_tile(&p, NULL);
    CHECK(p.gn == 8 && p.gm == 16);
    /* overrides: TN,TM in elements, TPB; 0 keeps the automatic value; invalid ones ignored */
    p = tile_plan(2, 8192, 16384);
    ck_permute_choose_tile(&p, "64,256,2");
    CHECK(p.gn == 8 && p.gm == 32 && p.tiles_per_block == 2);
    ck_permute_choose_tile(&p, "0,64,0");
    CHECK(p.gn == 16 && p.gm == 8 && p.tiles_per_block == 0);
    const char *bad[] = {"256,256,1", "100,64,1", "64,64", "64,64,-1", "64,64,1x", "32,64,1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ck_permute_choose_tile(&p, bad[i]);
        CHECK_MSG(p.gn == 16 && p.gm == 16 && p.tiles_per_block == 0, "override '%s'", bad[i]);
    }
    /* grid: 132 SMs, bf16 16 x 16 (3 blocks per SM = 396 slots) */
    p = tile_plan(2, 8192, 16384);
    ck_permute_choose_tile(&p, NULL);
    CHECK(ck_permute_tile_blocks(&p, 8192, 132) == 2048); /* 4 tiles per block */
    CHECK(ck_permute_tile_blocks(&p, 1024, 132) == 1024); /* 16 x 1024 x 1024: one per block */
    CHECK(ck_permute_tile_blocks(&p, 3, 132) == 3);
    p.tiles_per_block = 3;
    CHECK(ck_permute_tile_blocks(&p, 1024, 132) == 342);
}

/* Every supported tile shape (forced through CK_PERMUTE_INSTANCE), every element size, odd
 * sizes (edge tiles in both dimensions) and exact multiples, a batch dimension, several tiles
 * per block. */
static void test_tile_shapes(void)
{
    char env[64];
    int shapes = 0;
    for (int t = 0; t < 4; ++t) {
        int e = 1 << t, v = 16 / e;
        for (int gn = 8; gn <= 32; gn *= 2)
            for (int gm = 8; gm <= 32; gm *= 2) {
                if (!ck_perm_shape_ok(e, gn, gm))
                    continue;
                snprintf(env, sizeof env, "%d,%d,%d", gn * v, gm * v, 1 + shapes % 3);
                setenv("CK_PERMUTE_INSTANCE", env, 1);
                /* batched [3][R][C] -> [3][C][R]: R = n (dst contiguous), C = m */
                pcase b;
                memset(&b, 0, sizeof b);
                b.dtype = by_size[t];
                b.rank = 3;
                b.shape[0] = 3;
                b.shape[1] = gn * v + 5; /* an edge tile along n */
                b.shape[2] = gm * v - 3; /* one partial tile along m */
                b.perm[0] = 0;
                b.perm[1] = 2;
                b.perm[2] = 1;
                b.src_step = 1;
                ck_perm_plan plan;
                CHECK_MSG(run_case(&b, &plan), "%d-byte %s", e, env);
                CHECK(plan.kind == CK_PERM_TILE && plan.gn == gn && plan.gm == gm);
                pcase q = make2d(by_size[t], 2 * gm * v, gn * v); /* full tiles only */
                CHECK_MSG(run_case(&q, &plan), "%d-byte %s full", e, env);
                CHECK(plan.gn == gn && plan.gm == gm && plan.ld_vec && plan.st_vec);
                shapes++;
            }
    }
    unsetenv("CK_PERMUTE_INSTANCE");
    CHECK_EQ_INT(shapes, 21);
    /* automatic 8-group tiles: m = 3 x 64 bf16 (no edge tile), odd n */
    pcase q = make2d(CK_DTYPE_BF16, 37, 192);
    ck_perm_plan plan;
    CHECK(run_case(&q, &plan));
    CHECK(plan.gn == 8 && plan.gm == 8);
}

/* Large problems on a GPU (skipped on the emulator). */
static void test_large_gpu(void)
{
    if (ck_context_backend(ctx) != CK_BACKEND_CUDA)
        return;
    pcase p = make2d(CK_DTYPE_BF16, 16384, 8192);
    CHECK(run_case(&p, NULL));
    pcase q;
    memset(&q, 0, sizeof q);
    q.dtype = CK_DTYPE_BF16;
    q.rank = 4;
    long long sh[4] = {64, 256, 56, 56};
    int pm[4] = {0, 2, 3, 1};
    memcpy(q.shape, sh, sizeof sh);
    memcpy(q.perm, pm, sizeof pm);
    q.src_step = 1;
    CHECK(run_case(&q, NULL));
    for (int t = 0; t < 4; ++t) {
        pcase r = make2d(by_size[t], 4097, 3001);
        CHECK(run_case(&r, NULL));
    }
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device (%s); skipped\n", ck_last_error());
        return 0;
    }
    RUN_TEST(test_bank_conflicts);
    RUN_TEST(test_tile_choice);
    RUN_TEST(test_tile_shapes);
    RUN_TEST(test_errors);
    RUN_TEST(test_transpose_odd_sizes);
    RUN_TEST(test_nchw_nhwc);
    RUN_TEST(test_strided_tiles);
    RUN_TEST(test_sub_byte);
    RUN_TEST(test_random);
    RUN_TEST(test_large_gpu);
    printf("%lld cases, %lld elements compared, %d kernels built\n", cases_run, elements_checked,
           ck_context_kernel_count(ctx));
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
