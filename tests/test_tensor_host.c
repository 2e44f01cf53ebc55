/*
 * The host (emulator) implementation of the tensor-core dialect (src/device/ck_device_tensor.h
 * compiled as C) run end to end over a test-only implementation of the emulator contract
 * (EMU_CONTRACT.md): every emulated thread is a POSIX thread, ck_emu_group_collective is a
 * barrier rendezvous per warp or warpgroup, ck_emu_yield is sched_yield. Sample kernels (cp.async →
 * ldmatrix → mma; TMA with 128-byte swizzle → mbarrier wait → wgmma over k-slices; stmatrix; elect)
 * are checked against long double products computed here; multicast TMA into a two-block
 * cluster and faults reported through ck_emu_trap use a stand-in of the runtime prelude's
 * cluster and trap functions. Also: the tensor-map encoder's validation.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "device/tensor_map.h"
#include "test.h"

/* ---------------------------------------------------------------- contract stub */

/* Stand in for the runtime's host prelude (its include guard), which the tensor header then
 * uses for ck_emu_trap and the cluster's shared memory: all defined below. */
#define CK_HOST_CORE_H 1

static _Thread_local unsigned tl_id;
static unsigned g_threads;
static pthread_barrier_t g_bar;             /* the whole block (the test's __syncthreads) */
static pthread_barrier_t g_group_bar[2][4]; /* [warp, warpgroup][group index] */
static unsigned char g_in[4][80 * 1024], g_out[4][80 * 1024];
static _Alignas(1024) unsigned char g_smem[96 * 1024];
static int g_bad_group;

unsigned ck_emu_thread_linear(void)
{
    return tl_id;
}
unsigned ck_emu_block_threads(void)
{
    return g_threads;
}
void ck_emu_yield(void)
{
    sched_yield();
}
void *ck_emu_shared_base(void)
{
    return g_smem;
}
size_t ck_emu_shared_bytes(void)
{
    return sizeof g_smem;
}

/* groups of 32 (warps) or 128 (warpgroups), all lanes active */
void ck_emu_group_collective(unsigned group_size, const void *in, size_t in_size, void *out,
                             size_t out_size,
                             void (*fn)(const void *all_in, void *all_out, void *ctx), void *ctx)
{
    int kind = group_size == 32 ? 0 : group_size == 128 ? 1 : -1;
    unsigned idx = tl_id / group_size, lane = tl_id % group_size;
    if (kind < 0 || group_size > g_threads || group_size * in_size > sizeof g_in[0] ||
        group_size * out_size > sizeof g_out[0]) {
        g_bad_group = 1;
        return;
    }
    pthread_barrier_t *bar = &g_group_bar[kind][idx];
    memcpy(g_in[idx] + lane * in_size, in, in_size);
    if (pthread_barrier_wait(bar) == PTHREAD_BARRIER_SERIAL_THREAD)
        fn(g_in[idx], g_out[idx], ctx);
    pthread_barrier_wait(bar);
    if (out_size)
        memcpy(out, g_out[idx] + lane * out_size, out_size);
    pthread_barrier_wait(bar);
}

/* cluster of g_cluster blocks: rank 0 is g_smem, rank 1 g_smem_peer (only rank 0 runs) */
static _Alignas(1024) unsigned char g_smem_peer[sizeof g_smem];
static unsigned g_cluster = 1;
static const char *g_trap;

static void ck_emu_trap(const char *what)
{
    __atomic_store_n(&g_trap, what, __ATOMIC_SEQ_CST);
}
static unsigned ck_cluster_nctarank(void)
{
    return g_cluster;
}
static void *ck_cluster_map_shared(const void *p, unsigned rank)
{
    size_t off = (size_t)((const unsigned char *)p - g_smem);
    return (rank ? g_smem_peer : g_smem) + off;
}

#include "device/ck_device_tensor.h"

typedef struct launch_arg {
    unsigned id;
    void (*kernel)(void *);
    void *params;
} launch_arg;

static void *thread_main(void *p)
{
    launch_arg *a = (launch_arg *)p;
    tl_id = a->id;
    a->kernel(a->params);
    return NULL;
}

static void launch(unsigned threads, void (*kernel)(void *), void *params)
{
    pthread_t th[128];
    launch_arg args[128];
    g_threads = threads;
    pthread_barrier_init(&g_bar, NULL, threads);
    for (unsigned i = 0; i < threads / 32; ++i)
        pthread_barrier_init(&g_group_bar[0][i], NULL, 32);
    for (unsigned i = 0; i < threads / 128; ++i)
        pthread_barrier_init(&g_group_bar[1][i], NULL, 128);
    for (unsigned i = 0; i < threads; ++i) {
        args[i].id = i, args[i].kernel = kernel, args[i].params = params;
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    for (unsigned i = 0; i < threads; ++i)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_bar);
    for (unsigned i = 0; i < threads / 32; ++i)
        pthread_barrier_destroy(&g_group_bar[0][i]);
    for (unsigned i = 0; i < threads / 128; ++i)
        pthread_barrier_destroy(&g_group_bar[1][i]);
}

static uint64_t rng = 0x40575EEDull;

static long double f16v(uint16_t v)
{
    int s = v >> 15, e = (v >> 10) & 31, m = v & 1023;
    return (s ? -1 : 1) * (e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24));
}
static long double bf16v(uint16_t v)
{
    int s = v >> 15, e = (v >> 7) & 255, m = v & 127;
    return (s ? -1 : 1) * (e ? ldexpl(128 + m, e - 134) : ldexpl(m, -133));
}

/* ---------------------------------------------------------------- warp kernel */

typedef struct warp_params {
    uint16_t ga[16][16], gb[16][8]; /* global A (row-major 16x16 f16), B (row-major 16(k)x8) */
    float d[32][4];
    unsigned st_back[32][4];
    int elected[32];
} warp_params;

static void warp_kernel(void *pp)
{
    warp_params *p = (warp_params *)pp;
    unsigned t = ck_emu_thread_linear();
    uint16_t(*sa)[16] = (uint16_t(*)[16])(void *)g_smem;        /* 512 bytes */
    uint16_t(*sb)[8] = (uint16_t(*)[8])(void *)(g_smem + 1024); /* 256 bytes */
    /* cp.async: lanes 0..31 copy the 32 16-byte chunks of A, lanes 0..15 B */
    ck_cp_async_16(&sa[t / 2][(t % 2) * 8], &p->ga[t / 2][(t % 2) * 8]);
    if (t < 16)
        ck_cp_async_16(&sb[t][0], &p->gb[t][0]);
    ck_cp_async_commit();
    ck_cp_async_wait(0);
    pthread_barrier_wait(&g_bar);
    unsigned a[4], b[2];
    /* lane L addresses row (L%8) + 8*((L/8)%2) of column block L/16: matrices in a0..a3 order */
    ck_ldmatrix_x4(a, &sa[(t % 8) + 8 * ((t / 8) % 2)][8 * (t / 16)]);
    ck_ldmatrix_x2_trans(b, &sb[t % 16][0]);
    float c[4] = {0.5f, -0.25f, 1.0f, 2.0f}, d[4];
    ck_mma_m16n8k16_f32_f16(d, a, b, c);
    memcpy(p->d[t], d, sizeof d);
    /* stmatrix then ldmatrix from the same addresses returns the registers */
    unsigned r[4] = {t * 0x10001u, t ^ 0xABCD1234u, ~t, t << 7}, back[4];
    void *row = g_smem + 4096 + 16 * t;
    ck_stmatrix_x4(row, r);
    ck_ldmatrix_x4(back, row);
    memcpy(p->st_back[t], back, sizeof back);
    p->elected[t] = ck_elect_one();
}

static void test_warp_kernel(void)
{
    static warp_params p;
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j)
            p.ga[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x83FFu) | ((12u + ckt_rand64(&rng) % 6) << 10));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j)
            p.gb[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x83FFu) | ((12u + ckt_rand64(&rng) % 6) << 10));
    launch(32, warp_kernel, &p);
    CHECK(!g_bad_group);
    static const float c[4] = {0.5f, -0.25f, 1.0f, 2.0f};
    int bad = 0, elected = 0;
    for (unsigned lane = 0; lane < 32; ++lane) {
        for (unsigned i = 0; i < 4; ++i) {
            unsigned row = lane / 4 + (i >= 2 ? 8 : 0), col = (lane % 4) * 2 + (i & 1);
            long double s = c[i], mag = fabsl(s);
            for (int k = 0; k < 16; ++k) {
                long double pr = f16v(p.ga[row][k]) * f16v(p.gb[k][col]);
                s += pr, mag += fabsl(pr);
            }
            if (fabsl(p.d[lane][i] - s) > mag * ldexpl(1, -22))
                ++bad;
        }
        unsigned r[4] = {lane * 0x10001u, lane ^ 0xABCD1234u, ~lane, lane << 7};
        if (memcmp(r, p.st_back[lane], sizeof r) != 0)
            ++bad;
        elected += p.elected[lane];
    }
    CHECK_MSG(bad == 0, "emulated warp kernel: %d wrong values", bad);
    CHECK_EQ_INT(elected, 1);
    CHECK_EQ_INT(p.elected[0], 1);
}

/* ---------------------------------------------------------------- warpgroup kernel */

enum { WG_N = 64, WG_K = 64 };

typedef struct wg_params {
    ck_tensor_map map_a, map_b;
    float d[128][WG_N / 2];
    int waited_ok;
} wg_params;

static void wg_kernel(void *pp)
{
    wg_params *p = (wg_params *)pp;
    unsigned t = ck_emu_thread_linear();
    unsigned char *sa = g_smem, *sb = g_smem + 8192; /* 64 rows x 128 bytes each, 1024-aligned */
    unsigned long long *bar = (unsigned long long *)(void *)(g_smem + 32768);
    if (t == 0) {
        ck_mbar_init(bar, 1);
        ck_mbar_fence_init();
    }
    pthread_barrier_wait(&g_bar);
    if (t == 0) {
        ck_mbar_arrive_expect_tx(bar, 2 * 8192);
        ck_tma_load_2d(sa, &p->map_a, bar, 0, 0);
        ck_tma_load_2d_multicast(sb, &p->map_b, bar, 0, 0, 1);
    }
    ck_mbar_wait_parity(bar, 0);
    p->waited_ok = ck_mbar_try_wait_parity(bar, 0) && !ck_mbar_try_wait_parity(bar, 1);
    CK_SETMAXNREG_INC(240);
    float d[WG_N / 2];
    for (int i = 0; i < WG_N / 2; ++i)
        d[i] = 0.0f;
    ck_wgmma_fence();
    for (int ks = 0; ks < WG_K / 16; ++ks) {
        unsigned long long da = ck_wgmma_desc(sa + 32 * ks, 16, 1024, CK_SWIZZLE_128B);
        unsigned long long db = ck_wgmma_desc(sb + 32 * ks, 16, 1024, CK_SWIZZLE_128B);
        CK_WGMMA_SS(64, bf16, d, da, db, ks > 0, 1, 1, 0, 0);
    }
    ck_wgmma_commit_group();
    ck_wgmma_wait_group(0);
    memcpy(p->d[t], d, sizeof d);
}

static void test_warpgroup_tma_wgmma(void)
{
    static wg_params p;
    static _Alignas(16) uint16_t ga[100][WG_K], gb[WG_N][WG_K]; /* A has extra rows */
    for (int i = 0; i < 100; ++i)
        for (int j = 0; j < WG_K; ++j)
            ga[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x807Fu) | ((122u + ckt_rand64(&rng) % 8) << 7));
    for (int i = 0; i < WG_N; ++i)
        for (int j = 0; j < WG_K; ++j)
            gb[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x807Fu) | ((122u + ckt_rand64(&rng) % 8) << 7));
    ck_tensor_map_params mp;
    memset(&mp, 0, sizeof mp);
    mp.elem_bytes = 2, mp.rank = 2, mp.global_address = ga;
    mp.dims[0] = WG_K, mp.dims[1] = 100, mp.strides[0] = 2 * WG_K;
    mp.box[0] = 64, mp.box[1] = 64, mp.elem_strides[0] = mp.elem_strides[1] = 1;
    mp.swizzle = CK_SWIZZLE_128B;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map_a));
    mp.global_address = gb, mp.dims[1] = WG_N;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map_b));
    launch(128, wg_kernel, &p);
    CHECK(!g_bad_group);
    CHECK(p.waited_ok);
    int bad = 0;
    for (unsigned lane = 0; lane < 128; ++lane)
        for (unsigned i = 0; i < WG_N / 2; ++i) {
            unsigned w = lane / 32, l = lane % 32;
            unsigned row = 16 * w + l / 4 + ((i % 4) >= 2 ? 8 : 0),
                     col = 8 * (i / 4) + 2 * (l % 4) + (i & 1);
            long double s = 0, mag = 0;
            for (int k = 0; k < WG_K; ++k) {
                long double pr = bf16v(ga[row][k]) * bf16v(gb[col][k]);
                s += pr, mag += fabsl(pr);
            }
            /* four k16 steps, each rounded to float */
            if (fabsl(p.d[lane][i] - s) > mag * ldexpl(1, -21))
                ++bad;
        }
    CHECK_MSG(bad == 0, "emulated TMA + wgmma kernel: %d of %d wrong", bad, 128 * WG_N / 2);
}

/* Register A from ldmatrix (no swizzle, TMA box copy), MN-major B through two 128B-swizzled TMA
 * boxes (LBO between the 64-column chunks, SBO between groups of 8 k), negated B, N = 128;
 * then a TMA store of the A tile and a wgmma with an out-of-range descriptor (NaN). */
enum { RS_N = 128 };

typedef struct rs_params {
    ck_tensor_map map_a, map_b, map_o;
    float d[128][RS_N / 2];
    float bad[128][4];
    int acc_ok[128];
} rs_params;

static void rs_kernel(void *pp)
{
    rs_params *p = (rs_params *)pp;
    unsigned t = ck_emu_thread_linear(), w = t / 32, l = t % 32;
    uint16_t *sa = (uint16_t *)(void *)g_smem; /* 64 x 16 bf16, 2 KiB */
    unsigned char *sb = g_smem + 4096;         /* two 16 x 64 boxes, 2 KiB each */
    unsigned long long *bar = (unsigned long long *)(void *)(g_smem + 16384);
    if (t == 0)
        ck_mbar_init(bar, 1);
    pthread_barrier_wait(&g_bar);
    if (t == 0) {
        ck_mbar_expect_tx(bar, 2048 + 4096);
        ck_tma_load_2d(sa, &p->map_a, bar, 0, 0);
        ck_tma_load_2d(sb, &p->map_b, bar, 0, 0);
        ck_tma_load_2d(sb + 2048, &p->map_b, bar, 64, 0);
        ck_mbar_arrive(bar);
    }
    ck_mbar_wait_parity(bar, 0);
    unsigned a[4];
    unsigned row = 16 * w + (l % 8) + 8 * ((l / 8) % 2), col = 8 * (l / 16);
    ck_ldmatrix_x4(a, &sa[row * 16 + col]);
    float d[RS_N / 2];
    for (int i = 0; i < RS_N / 2; ++i)
        d[i] = 1.0f; /* ignored: scale-d 0 */
    unsigned long long db = ck_wgmma_desc(sb, 2048, 1024, CK_SWIZZLE_128B);
    ck_wgmma_fence();
    CK_WGMMA_RS(128, bf16, d, a, db, 0, 1, -1, 1);
    ck_wgmma_commit_group();
    ck_wgmma_wait_group(0);
    memcpy(p->d[t], d, sizeof d);
    if (t == 0) {
        ck_fence_proxy_async();
        ck_tma_store_2d(&p->map_o, sa, 0, 0);
        ck_tma_store_commit();
        ck_tma_store_wait(0);
    }
    float bad[4] = {0, 0, 0, 0};
    unsigned long long far = (200u * 1024u) >> 4; /* start address 200 KiB: outside */
    CK_WGMMA_SS(8, f16, bad, far, far, 1, 1, 1, 0, 0);
    memcpy(p->bad[t], bad, sizeof bad);
    /* tf32 and fp8 forms through the same plumbing: A from registers of zeros, B in range
     * (zero-initialised shared memory past the tiles), D must become exactly the accumulator */
    unsigned zero[4] = {0, 0, 0, 0};
    unsigned long long dz = ck_wgmma_desc(g_smem + 32768, 128, 256, CK_SWIZZLE_NONE);
    float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CK_WGMMA_RS_TF32(8, acc, zero, dz, 1, 1, 1);
    CK_WGMMA_RS_F8(16, e4m3, e5m2, acc, zero, dz, 1, 1, -1);
    CK_WGMMA_SS_F8(16, e5m2, e5m2, acc, dz, dz, 1, 1, 1);
    CK_WGMMA_SS_TF32(16, acc, dz, dz, 1, -1, 1);
    for (int i = 0; i < 8; ++i)
        p->acc_ok[t] += acc[i] == (float)(i + 1);
}

static void test_warpgroup_rs_mn_major(void)
{
    static rs_params p;
    memset(g_smem, 0, sizeof g_smem);
    static _Alignas(16) uint16_t ga[64][16], gb[16][RS_N], go[64][16];
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 16; ++j)
            ga[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x807Fu) | ((122u + ckt_rand64(&rng) % 8) << 7));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < RS_N; ++j)
            gb[i][j] =
                (uint16_t)((ckt_rand64(&rng) & 0x807Fu) | ((122u + ckt_rand64(&rng) % 8) << 7));
    memset(go, 0, sizeof go);
    ck_tensor_map_params mp;
    memset(&mp, 0, sizeof mp);
    mp.elem_bytes = 2, mp.rank = 2, mp.global_address = ga;
    mp.dims[0] = 16, mp.dims[1] = 64, mp.strides[0] = 32;
    mp.box[0] = 16, mp.box[1] = 64, mp.elem_strides[0] = mp.elem_strides[1] = 1;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map_a));
    mp.global_address = go;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map_o));
    mp.global_address = gb, mp.dims[0] = RS_N, mp.dims[1] = 16, mp.strides[0] = 2 * RS_N;
    mp.box[0] = 64, mp.box[1] = 16, mp.swizzle = CK_SWIZZLE_128B;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map_b));
    launch(128, rs_kernel, &p);
    CHECK(!g_bad_group);
    int bad = 0, nan = 0;
    for (unsigned lane = 0; lane < 128; ++lane) {
        for (unsigned i = 0; i < RS_N / 2; ++i) {
            unsigned w = lane / 32, l = lane % 32;
            unsigned row = 16 * w + l / 4 + ((i % 4) >= 2 ? 8 : 0);
            unsigned col = 8 * (i / 4) + 2 * (l % 4) + (i & 1);
            long double s = 0, mag = 0;
            for (int k = 0; k < 16; ++k) {
                long double pr = -bf16v(ga[row][k]) * bf16v(gb[k][col]);
                s += pr, mag += fabsl(pr);
            }
            if (fabsl(p.d[lane][i] - s) > mag * ldexpl(1, -22))
                ++bad;
        }
        for (unsigned i = 0; i < 4; ++i)
            nan += isnan(p.bad[lane][i]) != 0;
    }
    CHECK_MSG(bad == 0, "emulated RS wgmma with MN-major B: %d of %d wrong", bad, 128 * RS_N / 2);
    CHECK_EQ_INT(nan, 512);
    int acc_ok = 0;
    for (unsigned lane = 0; lane < 128; ++lane)
        acc_ok += p.acc_ok[lane];
    CHECK_EQ_INT(acc_ok, 128 * 8);
    CHECK(memcmp(go, ga, sizeof ga) == 0); /* TMA store of the A tile */
}

/* Multicast into a two-block cluster, and faults reported through ck_emu_trap. */
typedef struct mc_params {
    ck_tensor_map map, bogus;
    int own_done, peer_done;
    const char *trap_map, *trap_box, *trap_wgmma;
} mc_params;

static void mc_kernel(void *pp)
{
    mc_params *p = (mc_params *)pp;
    unsigned char *s = g_smem + 2048;
    unsigned long long *bar = (unsigned long long *)(void *)(g_smem + 1024);
    unsigned long long *peer_bar = (unsigned long long *)ck_cluster_map_shared(bar, 1);
    if (ck_emu_thread_linear() == 0) {
        ck_mbar_init(bar, 1);
        ck_mbar_init(peer_bar, 1); /* the peer block's own initialisation */
        ck_mbar_arrive_expect_tx(bar, 16 * 8 * 4);
        ck_mbar_arrive_expect_tx(peer_bar, 16 * 8 * 4);
        ck_tma_load_2d_multicast(s, &p->map, bar, 4, 2, (unsigned short)3);
        p->own_done = ck_mbar_try_wait_parity(bar, 0);
        p->peer_done = ck_mbar_try_wait_parity(peer_bar, 0);
        ck_tma_load_1d(s, &p->bogus, bar, 0);
        p->trap_map = __atomic_exchange_n(&g_trap, NULL, __ATOMIC_SEQ_CST);
        ck_tma_load_2d(g_smem + sizeof g_smem - 64, &p->map, bar, 0, 0);
        p->trap_box = __atomic_exchange_n(&g_trap, NULL, __ATOMIC_SEQ_CST);
    }
    float acc[4] = {0, 0, 0, 0};
    unsigned long long far = (250u * 1024u) >> 4;
    CK_WGMMA_SS(8, bf16, acc, far, far, 1, 1, 1, 0, 0);
    pthread_barrier_wait(&g_bar);
    if (ck_emu_thread_linear() == 0)
        p->trap_wgmma = __atomic_exchange_n(&g_trap, NULL, __ATOMIC_SEQ_CST);
}

static void test_multicast_and_faults(void)
{
    static mc_params p;
    static _Alignas(16) float g[40][24];
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j < 24; ++j)
            g[i][j] = (float)(i * 100 + j);
    ck_tensor_map_params mp;
    memset(&mp, 0, sizeof mp);
    mp.elem_bytes = 4, mp.rank = 2, mp.global_address = g;
    mp.dims[0] = 24, mp.dims[1] = 40, mp.strides[0] = 24 * 4;
    mp.box[0] = 8, mp.box[1] = 16, mp.elem_strides[0] = mp.elem_strides[1] = 1;
    mp.swizzle = CK_SWIZZLE_32B;
    CHECK_OK(ck_tensor_map_encode_emu(&mp, &p.map));
    memset(&p.bogus, 0x5A, sizeof p.bogus);
    memset(g_smem, 0, sizeof g_smem);
    memset(g_smem_peer, 0, sizeof g_smem_peer);
    g_cluster = 2;
    g_trap = NULL;
    launch(128, mc_kernel, &p);
    g_cluster = 1;
    CHECK(p.own_done);
    CHECK(p.peer_done);
    int bad = 0;
    for (unsigned r = 0; r < 16; ++r)
        for (unsigned c = 0; c < 8; ++c) {
            /* element (row 2 + r, column 4 + c) at the 32B-swizzled position of box index r*8+c */
            uint32_t off = 2048 + (r * 8 + c) * 4;
            uint32_t sw = off ^ (((off >> 7) & 1u) << 4);
            float own, peer;
            memcpy(&own, g_smem + sw, 4);
            memcpy(&peer, g_smem_peer + sw, 4);
            if (own != g[2 + r][4 + c] || peer != own)
                ++bad;
        }
    CHECK_MSG(bad == 0, "multicast TMA: %d elements wrong", bad);
    CHECK(p.trap_map && strstr(p.trap_map, "tensor map"));
    CHECK(p.trap_box && strstr(p.trap_box, "does not fit"));
    CHECK(p.trap_wgmma && strstr(p.trap_wgmma, "wgmma"));
}

/* ---------------------------------------------------------------- tensor map validation */

static void test_tensor_map_params(void)
{
    static _Alignas(16) unsigned char g[4096];
    ck_tensor_map m;
    ck_tensor_map_params ok, p;
    memset(&ok, 0, sizeof ok);
    ok.elem_bytes = 4, ok.rank = 3, ok.global_address = g;
    ok.dims[0] = 8, ok.dims[1] = 4, ok.dims[2] = 2, ok.strides[0] = 32, ok.strides[1] = 128;
    ok.box[0] = 8, ok.box[1] = 2, ok.box[2] = 1;
    ok.elem_strides[0] = ok.elem_strides[1] = ok.elem_strides[2] = 1;
    ok.swizzle = CK_SWIZZLE_32B;
    CHECK_OK(ck_tensor_map_encode_emu(&ok, &m));
    ck_emu_tmap_desc d;
    memcpy(&d, &m, sizeof d);
    CHECK_EQ_INT(d.magic, CK_EMU_TMAP_MAGIC);
    CHECK_EQ_INT(d.rank, 3);
    CHECK_EQ_INT(d.strides[0], 4);
    CHECK_EQ_INT(d.strides[2], 128);
    CHECK_EQ_INT(d.box[1], 2);
    CHECK_EQ_INT(d.dims[3], 1);
    CHECK_EQ_INT(sizeof(ck_tensor_map), 128);
    CHECK_EQ_INT(_Alignof(ck_tensor_map), 64);
#define BAD(field_change)                                                                          \
    do {                                                                                           \
        p = ok;                                                                                    \
        field_change;                                                                              \
        CHECK_STATUS(ck_tensor_map_encode_emu(&p, &m), CK_ERROR_INVALID_ARGUMENT);                 \
    } while (0)
    BAD(p.elem_bytes = 3);
    BAD(p.rank = 0);
    BAD(p.rank = 6);
    BAD(p.global_address = g + 8);
    BAD(p.global_address = NULL);
    BAD(p.dims[1] = 0);
    BAD(p.strides[0] = 40);
    BAD(p.strides[1] = 1ull << 40);
    BAD(p.box[2] = 0);
    BAD(p.box[1] = 257);
    BAD(p.elem_strides[1] = 9);
    BAD(p.box[0] = 2);  /* 8 bytes: not a multiple of 16 */
    BAD(p.box[0] = 16); /* 64 bytes > 32-byte swizzle span */
    BAD(p.swizzle = 4);
    CHECK_STATUS(ck_tensor_map_encode_emu(NULL, &m), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tensor_map_encode_emu(&ok, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "map") != NULL);
#undef BAD
    /* values of CUtensorMapDataType (cuda.h): UINT8 0, UINT16 1, UINT32 2, UINT64 4 */
    CHECK_EQ_INT(ck_tensor_map_cu_dtype(1), 0);
    CHECK_EQ_INT(ck_tensor_map_cu_dtype(2), 1);
    CHECK_EQ_INT(ck_tensor_map_cu_dtype(4), 2);
    CHECK_EQ_INT(ck_tensor_map_cu_dtype(8), 4);
    CHECK_EQ_INT(ck_tensor_map_cu_dtype(3), -1);
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)rng);
    RUN_TEST(test_tensor_map_params);
    RUN_TEST(test_warp_kernel);
    RUN_TEST(test_warpgroup_tma_wgmma);
    RUN_TEST(test_warpgroup_rs_mn_major);
    RUN_TEST(test_multicast_and_faults);
    return CK_TEST_REPORT();
}
