/* Conformance of the core device prelude: every kernel of tests/kernels/ runs on the device
 * chosen by CK_DEVICE (the emulator in CI) and is checked against a CPU reference. */
#include <stdint.h>

#include "kernel_harness.h"

static uint64_t seed = 20261122;

static void test_ids(void)
{
    ck_kernel *k = ckk_kernel("ids.cu", "ids");
    enum { GX = 3, GY = 2, GZ = 2, BX = 8, BY = 6, BZ = 2 };
    size_t n = (size_t)GX * GY * GZ * BX * BY * BZ * 8;
    unsigned *out = calloc(n, 4);
    void *d = ckk_upload(NULL, n * 4);
    CHECK_OK(ckk_launch(k, GX, GY, GZ, BX, BY, BZ, 0, 1, CKK_ARG(d)));
    ckk_download(out, d, n * 4);
    for (unsigned bz = 0; bz < GZ; ++bz)
        for (unsigned by = 0; by < GY; ++by)
            for (unsigned bx = 0; bx < GX; ++bx)
                for (unsigned z = 0; z < BZ; ++z)
                    for (unsigned y = 0; y < BY; ++y)
                        for (unsigned x = 0; x < BX; ++x) {
                            unsigned b = bx + GX * (by + GY * bz), t = x + BX * (y + BY * z);
                            unsigned *o = out + ((size_t)b * BX * BY * BZ + t) * 8;
                            CHECK_EQ_INT(o[0], x);
                            CHECK_EQ_INT(o[1], y);
                            CHECK_EQ_INT(o[2], z);
                            CHECK_EQ_INT(o[3], BX | BY << 8 | BZ << 16);
                            CHECK_EQ_INT(o[4], GX | GY << 8 | GZ << 16);
                            CHECK_EQ_INT(o[5], b);
                            CHECK_EQ_INT(o[6], t / 32);
                            CHECK_EQ_INT(o[7], t % 32);
                        }
    ckk_dump("ids", out, n * 4);
    ck_free(ckk_device, d);
    free(out);
}

static void test_shared(void)
{
    /* reverse through static shared memory */
    ck_kernel *k = ckk_kernel("shared.cu", "reverse_static");
    enum { NB = 5, N = NB * 256 };
    int in[N], out[N];
    for (int i = 0; i < N; ++i)
        in[i] = (int)(ckt_rand64(&seed) % 100000) - 50000;
    void *din = ckk_upload(in, sizeof in), *dout = ckk_upload(NULL, sizeof out);
    CHECK_OK(ckk_launch(k, NB, 1, 1, 256, 1, 1, 0, 2, CKK_ARG(din), CKK_ARG(dout)));
    ckk_download(out, dout, sizeof out);
    for (int b = 0; b < NB; ++b)
        for (int t = 0; t < 256; ++t)
            CHECK_EQ_INT(out[b * 256 + t], in[b * 256 + 255 - t]);
    ckk_dump("reverse_static", out, sizeof out);
    ck_free(ckk_device, din);
    ck_free(ckk_device, dout);

    /* transpose through a padded 2-D array: 96 x 64 matrix, grid 3 x 2 */
    k = ckk_kernel("shared.cu", "transpose_2d");
    enum { W = 96, H = 64 };
    float *a = malloc(sizeof(float) * W * H), *t = malloc(sizeof(float) * W * H);
    for (int i = 0; i < W * H; ++i)
        a[i] = (float)(ckt_rand64(&seed) % 1000000) * 0.25f;
    din = ckk_upload(a, sizeof(float) * W * H);
    dout = ckk_upload(NULL, sizeof(float) * W * H);
    CHECK_OK(ckk_launch(k, W / 32, H / 32, 1, 32, 8, 1, 0, 2, CKK_ARG(din), CKK_ARG(dout)));
    ckk_download(t, dout, sizeof(float) * W * H);
    for (int r = 0; r < H; ++r)
        for (int c = 0; c < W; ++c)
            CHECK(t[c * H + r] == a[r * W + c]);
    ckk_dump("transpose_2d", t, sizeof(float) * W * H);
    ck_free(ckk_device, din);
    ck_free(ckk_device, dout);
    free(a);
    free(t);

    /* dynamic shared memory above 48 KiB: 20000 words per block */
    k = ckk_kernel("shared.cu", "dynamic_rotate");
    int n = 20000;
    unsigned *u = malloc(4u * 3 * (unsigned)n), *v = malloc(4u * 3 * (unsigned)n);
    for (int i = 0; i < 3 * n; ++i)
        u[i] = (unsigned)ckt_rand64(&seed);
    din = ckk_upload(u, 4u * 3 * (unsigned)n);
    dout = ckk_upload(NULL, 4u * 3 * (unsigned)n);
    CHECK_OK(ckk_launch(k, 3, 1, 1, 128, 1, 1, 4u * (unsigned)n, 3, CKK_ARG(din), CKK_ARG(dout),
                        CKK_ARG(n)));
    ckk_download(v, dout, 4u * 3 * (unsigned)n);
    for (int b = 0; b < 3; ++b)
        for (int i = 0; i < n; ++i)
            CHECK_EQ_INT(v[b * n + i], u[b * n + (i + 1) % n] ^ (unsigned)i);
    ckk_dump("dynamic_rotate", v, 4u * 3 * (unsigned)n);
    ck_free(ckk_device, din);
    ck_free(ckk_device, dout);
    free(u);
    free(v);
}

static void test_named_barriers(void)
{
    ck_kernel *k = ckk_kernel("shared.cu", "named_barriers");
    int in[512], out[256], side[256];
    for (int i = 0; i < 512; ++i)
        in[i] = (int)(ckt_rand64(&seed) % 2001) - 1000;
    void *din = ckk_upload(in, sizeof in), *dout = ckk_upload(NULL, sizeof out),
         *dside = ckk_upload(NULL, sizeof side);
    CHECK_OK(ckk_launch(k, 1, 1, 1, 192, 1, 1, 0, 3, CKK_ARG(din), CKK_ARG(dout), CKK_ARG(dside)));
    ckk_download(out, dout, sizeof out);
    ckk_download(side, dside, sizeof side);
    for (int round = 0; round < 4; ++round)
        for (int c = 0; c < 64; ++c) {
            /* consumer thread 64 + c reads buf[63 - c], written by producer 63 - c */
            CHECK_EQ_INT(out[round * 64 + c], in[round * 64 + 63 - c] * 3 + round);
            CHECK_EQ_INT(side[round * 64 + c],
                         in[256 + round * 64 + c] + in[256 + round * 64 + (c ^ 1)]);
        }
    ckk_dump("named_barriers", out, sizeof out);
    ck_free(ckk_device, din);
    ck_free(ckk_device, dout);
    ck_free(ckk_device, dside);
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void test_shuffles(void)
{
    ck_kernel *k = ckk_kernel("warp.cu", "shuffles");
    enum { N = 128 };
    unsigned in[N], params[N], out[N * 12];
    float fin[N];
    for (int i = 0; i < N; ++i) {
        in[i] = (unsigned)ckt_rand64(&seed);
        params[i] = (unsigned)(ckt_rand64(&seed) % 32);
        fin[i] = (float)((int)(ckt_rand64(&seed) % 20001) - 10000) / 7.0f;
    }
    void *a = ckk_upload(in, sizeof in), *b = ckk_upload(fin, sizeof fin),
         *c = ckk_upload(params, sizeof params), *o = ckk_upload(NULL, sizeof out);
    CHECK_OK(
        ckk_launch(k, 2, 1, 1, 64, 1, 1, 0, 4, CKK_ARG(a), CKK_ARG(b), CKK_ARG(c), CKK_ARG(o)));
    ckk_download(out, o, sizeof out);
    for (int g = 0; g < N; ++g) {
        int w = g / 32 * 32, l = g % 32, p = (int)params[g];
        int idx = w + p, up = l - p >= 0 ? g - p : g, down = l + p < 32 ? g + p : g,
            x = w + (l ^ p);
        const unsigned *r = out + g * 12;
        CHECK_EQ_INT(r[0], in[idx]);
        CHECK_EQ_INT(r[1], in[up]);
        CHECK_EQ_INT(r[2], in[down]);
        CHECK_EQ_INT(r[3], in[x]);
        CHECK_EQ_INT(r[4], f2u(fin[idx]));
        CHECK_EQ_INT(r[5], f2u(fin[up]));
        CHECK_EQ_INT(r[6], f2u(fin[down]));
        CHECK_EQ_INT(r[7], f2u(fin[x]));
        CHECK_EQ_INT(r[8], in[idx]);
        CHECK_EQ_INT(r[9], in[up]);
        CHECK_EQ_INT(r[10], in[down]);
        CHECK_EQ_INT(r[11], in[x]);
    }
    ckk_dump("shuffles", out, sizeof out);
    ck_free(ckk_device, a);
    ck_free(ckk_device, b);
    ck_free(ckk_device, c);
    ck_free(ckk_device, o);
}

static void test_votes(void)
{
    ck_kernel *k = ckk_kernel("warp.cu", "votes");
    enum { N = 192 };
    int pred[N];
    unsigned out[N * 3];
    for (int i = 0; i < N; ++i) {
        int w = i / 32; /* warp 0: random, 1: all zero, 2: all set, 3: one set, 4-5: random */
        pred[i] = w == 1   ? 0
                  : w == 2 ? 5
                  : w == 3 ? (i % 32 == 17) * -3
                           : (int)(ckt_rand64(&seed) % 3);
    }
    void *a = ckk_upload(pred, sizeof pred), *o = ckk_upload(NULL, sizeof out);
    CHECK_OK(ckk_launch(k, 3, 1, 1, 64, 1, 1, 0, 2, CKK_ARG(a), CKK_ARG(o)));
    ckk_download(out, o, sizeof out);
    for (int g = 0; g < N; ++g) {
        unsigned ballot = 0;
        int any = 0, all = 1;
        for (int l = 0; l < 32; ++l) {
            int p = pred[g / 32 * 32 + l] != 0;
            ballot |= (unsigned)p << l;
            any |= p;
            all &= p;
        }
        CHECK_EQ_INT(out[g * 3], ballot);
        CHECK_EQ_INT(out[g * 3 + 1], any);
        CHECK_EQ_INT(out[g * 3 + 2], all);
    }
    ckk_dump("votes", out, sizeof out);
    ck_free(ckk_device, a);
    ck_free(ckk_device, o);
}

/* Float sum over one warp folded in halves: (v[i] + v[i + 16]), then + 8, ... (the same
 * association as a butterfly, written the other way round). */
static float fold_sum(const float *v)
{
    float t[32];
    memcpy(t, v, sizeof t);
    for (int h = 16; h >= 1; h /= 2)
        for (int i = 0; i < h; ++i)
            t[i] = t[i] + t[i + h];
    return t[0];
}

static void test_reductions(void)
{
    ck_kernel *k = ckk_kernel("warp.cu", "reductions");
    enum { N = 128 };
    int iv[N];
    float fv[N];
    unsigned out[N * 9];
    for (int i = 0; i < N; ++i) {
        iv[i] = (int)(ckt_rand64(&seed) % 2000000001u) - 1000000000;
        fv[i] = (float)((int)(ckt_rand64(&seed) % 2000001) - 1000000) / 997.0f;
    }
    void *a = ckk_upload(iv, sizeof iv), *b = ckk_upload(fv, sizeof fv),
         *o = ckk_upload(NULL, sizeof out);
    CHECK_OK(ckk_launch(k, 2, 1, 1, 64, 1, 1, 0, 3, CKK_ARG(a), CKK_ARG(b), CKK_ARG(o)));
    ckk_download(out, o, sizeof out);
    for (int w = 0; w < N / 32; ++w) {
        long long sum = 0;
        int mx = iv[w * 32], mn = iv[w * 32];
        unsigned usum = 0, umx = 0, umn = 0xffffffffu;
        float fmx = fv[w * 32], fmn = fv[w * 32];
        for (int l = 0; l < 32; ++l) {
            int v = iv[w * 32 + l];
            sum += v;
            mx = v > mx ? v : mx;
            mn = v < mn ? v : mn;
            usum += (unsigned)v;
            umx = (unsigned)v > umx ? (unsigned)v : umx;
            umn = (unsigned)v < umn ? (unsigned)v : umn;
            fmx = fv[w * 32 + l] > fmx ? fv[w * 32 + l] : fmx;
            fmn = fv[w * 32 + l] < fmn ? fv[w * 32 + l] : fmn;
        }
        float fs = fold_sum(fv + w * 32);
        double exact = 0;
        for (int l = 0; l < 32; ++l)
            exact += fv[w * 32 + l];
        for (int l = 0; l < 32; ++l) {
            const unsigned *r = out + (w * 32 + l) * 9;
            CHECK_EQ_INT(r[0], (unsigned)(uint32_t)(int32_t)(uint32_t)sum);
            CHECK_EQ_INT(r[1], (unsigned)mx);
            CHECK_EQ_INT(r[2], (unsigned)mn);
            CHECK_EQ_INT(r[3], usum);
            CHECK_EQ_INT(r[4], umx);
            CHECK_EQ_INT(r[5], umn);
            CHECK_EQ_INT(r[6], f2u(fs));
            CHECK_NEAR(*(const float *)&r[6], exact, 1e-3 * (1 + fabs(exact)));
            CHECK_EQ_INT(r[7], f2u(fmx));
            CHECK_EQ_INT(r[8], f2u(fmn));
        }
    }
    ckk_dump("reductions", out, sizeof out);
    ck_free(ckk_device, a);
    ck_free(ckk_device, b);
    ck_free(ckk_device, o);
}

static void test_atomics(void)
{
    ck_kernel *k = ckk_kernel("atomics.cu", "atomics_global");
    enum { NB = 6, BT = 96, N = NB * BT };
    int vals[N];
    for (int i = 0; i < N; ++i)
        vals[i] = (int)(ckt_rand64(&seed) % 20001) - 10000;
    int gi[3] = {5, -2147483647 - 1, 2147483647};
    unsigned gu[5] = {7, 0, 0xffffffffu, 0, 1000000};
    float gf[3] = {0.5f, -1e30f, 1e30f};
    unsigned old[N];
    void *dv = ckk_upload(vals, sizeof vals), *dgi = ckk_upload(gi, sizeof gi),
         *dgu = ckk_upload(gu, sizeof gu), *dgf = ckk_upload(gf, sizeof gf),
         *dold = ckk_upload(NULL, sizeof old);
    CHECK_OK(ckk_launch(k, NB, 1, 1, BT, 1, 1, 0, 5, CKK_ARG(dv), CKK_ARG(dgi), CKK_ARG(dgu),
                        CKK_ARG(dgf), CKK_ARG(dold)));
    int ri[3];
    unsigned ru[5];
    float rf[3];
    ckk_download(ri, dgi, sizeof ri);
    ckk_download(ru, dgu, sizeof ru);
    ckk_download(rf, dgf, sizeof rf);
    ckk_download(old, dold, sizeof old);
    long long sum = 5;
    int mx = gi[1], mn = gi[2];
    unsigned usum = 7, umx = 0, umn = 0xffffffffu;
    double fsum = 0.5;
    float fmx = -1e30f, fmn = 1e30f;
    for (int i = 0; i < N; ++i) {
        sum += vals[i];
        mx = vals[i] > mx ? vals[i] : mx;
        mn = vals[i] < mn ? vals[i] : mn;
        usum += (unsigned)vals[i];
        umx = (unsigned)vals[i] > umx ? (unsigned)vals[i] : umx;
        umn = (unsigned)vals[i] < umn ? (unsigned)vals[i] : umn;
        fsum += vals[i] % 64;
        fmx = (float)vals[i] * 0.125f > fmx ? (float)vals[i] * 0.125f : fmx;
        fmn = (float)vals[i] * 0.125f < fmn ? (float)vals[i] * 0.125f : fmn;
    }
    CHECK_EQ_INT(ri[0], (int)sum);
    CHECK_EQ_INT(ri[1], mx);
    CHECK_EQ_INT(ri[2], mn);
    CHECK_EQ_INT(ru[0], usum);
    CHECK_EQ_INT(ru[1], umx);
    CHECK_EQ_INT(ru[2], umn);
    CHECK_EQ_INT(ru[3], N);
    /* exchange: the returned values plus the final one are the initial value and every id */
    unsigned long long xs = ru[4], expect = 1000000;
    for (int i = 0; i < N; ++i) {
        xs += old[i];
        expect += (unsigned)i;
    }
    CHECK_EQ_INT(xs, expect);
    CHECK(ru[4] < N);
    CHECK(rf[0] == (float)fsum);
    CHECK(rf[1] == fmx);
    CHECK(rf[2] == fmn);
    ck_free(ckk_device, dv);
    ck_free(ckk_device, dgi);
    ck_free(ckk_device, dgu);
    ck_free(ckk_device, dgf);
    ck_free(ckk_device, dold);

    k = ckk_kernel("atomics.cu", "atomics_shared");
    int out[NB * 24];
    dv = ckk_upload(vals, sizeof vals);
    void *dout = ckk_upload(NULL, sizeof out);
    CHECK_OK(ckk_launch(k, NB, 1, 1, BT, 1, 1, 0, 2, CKK_ARG(dv), CKK_ARG(dout)));
    ckk_download(out, dout, sizeof out);
    for (int b = 0; b < NB; ++b) {
        int hist[16] = {0}, bmx = -2147483647 - 1, bmn = 2147483647, fm = 0;
        for (int t = 0; t < BT; ++t) {
            int v = vals[b * BT + t];
            hist[(unsigned)v & 15u]++;
            bmx = v > bmx ? v : bmx;
            bmn = v < bmn ? v : bmn;
            fm = (v & 255) > fm ? (v & 255) : fm;
        }
        const int *o = out + b * 24;
        for (int i = 0; i < 16; ++i)
            CHECK_EQ_INT(o[i], hist[i]);
        CHECK_EQ_INT(o[16], bmx);
        CHECK_EQ_INT(o[17], bmn);
        CHECK_EQ_INT(o[18], BT);
        CHECK_EQ_INT(o[19], 1);
        CHECK_EQ_INT(o[20], BT / 2);
        CHECK_EQ_INT(o[21], fm);
        CHECK_EQ_INT(o[22], BT);
        CHECK_EQ_INT(o[23], 7);
    }
    ckk_dump("atomics_shared", out, sizeof out);
    ck_free(ckk_device, dv);
    ck_free(ckk_device, dout);
}

static void test_vec16(void)
{
    ck_kernel *k = ckk_kernel("vec16.cu", "vec16");
    enum { NB = 3, N = NB * 64 * 4 };
    unsigned in[N], o1[N], o2[N], o3[N];
    for (int i = 0; i < N; ++i)
        in[i] = (unsigned)ckt_rand64(&seed);
    void *a = ckk_upload(in, sizeof in), *b = ckk_upload(NULL, sizeof o1),
         *c = ckk_upload(NULL, sizeof o2), *d = ckk_upload(NULL, sizeof o3);
    CHECK_OK(
        ckk_launch(k, NB, 1, 1, 64, 1, 1, 0, 4, CKK_ARG(a), CKK_ARG(b), CKK_ARG(c), CKK_ARG(d)));
    ckk_download(o1, b, sizeof o1);
    ckk_download(o2, c, sizeof o2);
    ckk_download(o3, d, sizeof o3);
    for (int g = 0; g < NB * 64; ++g)
        for (int j = 0; j < 4; ++j) {
            CHECK_EQ_INT(o1[g * 4 + j], in[g * 4 + j]);
            CHECK_EQ_INT(o2[g * 4 + j], in[g * 4 + (j + 1) % 4]);
            CHECK_EQ_INT(o3[g * 4 + j], in[g * 4 + j]);
        }
    ckk_dump("vec16", o2, sizeof o2);
    ck_free(ckk_device, a);
    ck_free(ckk_device, b);
    ck_free(ckk_device, c);
    ck_free(ckk_device, d);
}

static void test_cluster(void)
{
    ck_device_props p;
    if (!ckk_open() || ck_device_get_props(ckk_device, &p) != CK_SUCCESS || p.cc_major < 9) {
        printf("clusters need compute capability 9.0; skipped\n");
        return;
    }
    ck_kernel *k = ckk_kernel("cluster.cu", "cluster_ids");
    enum { GX = 4, GY = 2, CX = 2 };
    unsigned out[GX * GY * 64 * 8];
    void *d = ckk_upload(NULL, sizeof out);
    void *args[] = {&d};
    size_t sizes[] = {sizeof d};
    ck_launch_config c = {{GX, GY, 1}, {64, 1, 1}, {CX, 1, 1}, 0, NULL};
    CHECK_OK(ck_launch(k, &c, args, sizes, 1));
    CHECK_OK(ck_device_synchronize(ckk_device));
    ckk_download(out, d, sizeof out);
    for (unsigned by = 0; by < GY; ++by)
        for (unsigned bx = 0; bx < GX; ++bx)
            for (unsigned t = 0; t < 64; ++t) {
                unsigned b = bx + GX * by, rank = bx % CX;
                unsigned peer_bx = bx - rank + (rank + 1) % CX;
                const unsigned *o = out + (b * 64 + t) * 8;
                CHECK_EQ_INT(o[0], (peer_bx + GX * by) * 1000 + 63 - t);
                CHECK_EQ_INT(o[1], rank);
                CHECK_EQ_INT(o[2], CX);
                CHECK_EQ_INT(o[3], bx / CX);
                CHECK_EQ_INT(o[4], by);
                CHECK_EQ_INT(o[5], CX);
                CHECK_EQ_INT(o[6], 1);
                CHECK_EQ_INT(o[7], 100);
            }
    ckk_dump("cluster_ids", out, sizeof out);
    ck_free(ckk_device, d);
}

/* st.async into every block of clusters of 4 and 16 (the non-portable size), completing on the
 * receivers' mbarriers; and the resident-block query (the emulator: 0, no limit). */
static void test_cluster_st_async(void)
{
    ck_device_props p;
    if (!ckk_open() || ck_device_get_props(ckk_device, &p) != CK_SUCCESS || p.cc_major < 9) {
        printf("clusters need compute capability 9.0; skipped\n");
        return;
    }
    ck_kernel *k = ckk_kernel("cluster_async.cu", "cluster_st_async");
    static const unsigned cxs[2] = {4, 16};
    for (int i = 0; i < 2; ++i) {
        unsigned cx = cxs[i], gx = 2 * cx, gy = 2, blocks = gx * gy;
        size_t count = (size_t)blocks * 64 * 48;
        float *out = calloc(count, sizeof(float));
        void *d = ckk_upload(NULL, count * sizeof(float));
        float base = 0.25f + (float)(ckt_rand64(&seed) % 100);
        void *args[] = {&d, &base};
        size_t sizes[] = {sizeof d, sizeof base};
        ck_launch_config c = {{gx, gy, 1}, {64, 1, 1}, {cx, 1, 1}, 0, NULL};
        CHECK_OK(ck_launch(k, &c, args, sizes, 2));
        CHECK_OK(ck_device_synchronize(ckk_device));
        ckk_download(out, d, count * sizeof(float));
        for (unsigned by = 0; by < gy; ++by)
            for (unsigned bx = 0; bx < gx; ++bx)
                for (unsigned t = 0; t < 64; ++t)
                    for (unsigned r = 0; r < cx; ++r) {
                        unsigned b = bx + gx * by, src = bx - bx % cx + r + gx * by;
                        float v = base + (float)src;
                        const float *o = out + ((size_t)b * 64 + t) * 48 + 3 * r;
                        CHECK(o[0] == v && o[1] == v * 2.0f && o[2] == v + 0.5f);
                    }
        if (i == 1) {
            int active = -1;
            CHECK_OK(ck_kernel_max_active(k, &c, &active));
            CHECK(p.backend == CK_BACKEND_CUDA ? active >= 1 : active == 0);
        }
        ck_free(ckk_device, d);
        free(out);
    }
}

int main(void)
{
    printf("seed %llu\n", (unsigned long long)seed);
    if (!ckk_open())
        return 1;
    RUN_TEST(test_ids);
    RUN_TEST(test_shared);
    RUN_TEST(test_named_barriers);
    RUN_TEST(test_shuffles);
    RUN_TEST(test_votes);
    RUN_TEST(test_reductions);
    RUN_TEST(test_atomics);
    RUN_TEST(test_vec16);
    RUN_TEST(test_cluster);
    RUN_TEST(test_cluster_st_async);
    ckk_close();
    return CK_TEST_REPORT();
}
