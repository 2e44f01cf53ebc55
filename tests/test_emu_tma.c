/* The tensor memory accelerator and mbarriers through the runtime (tests/kernels/tma.cu,
 * mbarrier.cu) with tensor maps from ck_tensor_map_create, on the device CK_DEVICE chooses (the
 * emulator in CI): box loads of rank 2, 3 and 5 with every swizzle, partly outside the tensor
 * (zero fill) and at negative coordinates, one mbarrier over successive phases; box stores; the
 * phase/parity rules of mbarriers. References are computed here from the definitions (dense
 * row-major box, then the 16-byte chunk swizzle of each 1024-byte-aligned address). Every
 * result is exact and dumped for scripts/gpu-check. Also: ck_tensor_map_create's refusals. */
#include <string.h>

#include "kernel_harness.h"

static uint64_t seed = 0x7a7a5eed00060003ull;

/* Shared-memory offset of dense box byte offset o under swizzle mode swz (an involution). */
static unsigned swizzled(unsigned o, int swz)
{
    unsigned mask = (1u << swz) - 1u;
    return o ^ (((o >> 7) & mask) << 4);
}

typedef struct tma_case {
    const char *name;
    unsigned eb, rank;
    uint64_t dims[5];
    uint32_t box[5];
    int swz;
    int coords[4][5];
} tma_case;

static const tma_case cases[] = {
    {"2-D bf16, 128B swizzle",
     2,
     2,
     {200, 100},
     {64, 32},
     3,
     {{0, 0}, {64, 32}, {152, 90}, {-16, -5}}},
    {"2-D u8, no swizzle", 1, 2, {300, 70}, {48, 20}, 0, {{0, 0}, {16, 7}, {272, 60}, {-32, 1}}},
    {"3-D f32, 64B swizzle",
     4,
     3,
     {40, 30, 6},
     {16, 8, 3},
     2,
     {{0, 0, 0}, {24, 20, 4}, {8, -3, 1}, {36, 28, 5}}},
    {"3-D f32, 128B swizzle",
     4,
     3,
     {40, 30, 6},
     {32, 8, 2},
     3,
     {{8, 1, 0}, {0, 25, 5}, {-4, 0, 2}, {16, 16, 3}}},
    {"5-D f16, 32B swizzle",
     2,
     5,
     {24, 5, 4, 3, 2},
     {16, 3, 2, 2, 2},
     1,
     {{0, 0, 0, 0, 0}, {8, 3, 2, 1, 1}, {-8, -1, 3, 2, 0}, {16, 4, 1, 0, -1}}},
};

static void tensor_geometry(const tma_case *c, uint64_t strides[4], size_t *bytes,
                            unsigned *box_bytes)
{
    uint64_t s = c->dims[0] * c->eb;
    s = (s + 15) / 16 * 16; /* rows padded to 16 bytes */
    for (unsigned i = 1; i < c->rank; ++i) {
        strides[i - 1] = s;
        s *= c->dims[i];
    }
    *bytes = (size_t)s;
    unsigned b = c->eb;
    for (unsigned i = 0; i < c->rank; ++i)
        b *= c->box[i];
    *box_bytes = b;
}

/* The global byte offset of box element j (box-relative index vector) at coordinates co, or -1
 * when it lies outside the tensor. */
static long elem_offset(const tma_case *c, const uint64_t *strides, const int *co,
                        const unsigned *j, int store)
{
    long off = 0;
    for (unsigned i = 0; i < c->rank; ++i) {
        long x = (long)co[i] + (long)j[i];
        long end = (long)c->dims[i];
        if (store && i == 0) /* stores write whole 16-byte chunks of a row (H100) */
            end = ((long)c->dims[0] * c->eb + 15) / 16 * 16 / c->eb;
        if (x < 0 || x >= end)
            return -1;
        off += x * (i == 0 ? (long)c->eb : (long)strides[i - 1]);
    }
    return off;
}

static int make_map(const tma_case *c, void *global, const uint64_t *strides, ck_tensor_map *map)
{
    ck_tensor_map_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = c->eb, d.rank = c->rank, d.global_address = global, d.swizzle = c->swz;
    for (unsigned i = 0; i < c->rank; ++i) {
        d.dims[i] = c->dims[i], d.box[i] = c->box[i];
        if (i > 0)
            d.strides[i - 1] = strides[i - 1];
    }
    ck_status st = ck_tensor_map_create(ckk_device, &d, map);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", c->name, ck_last_error());
    return st == CK_SUCCESS;
}

static void test_tma(void)
{
    ck_kernel *kl = ckk_kernel("tma.cu", "tma_loads"), *ks = ckk_kernel("tma.cu", "tma_stores");
    size_t ncase = sizeof cases / sizeof *cases;
    for (size_t ci = 0; ci < ncase; ++ci) {
        const tma_case *c = &cases[ci];
        uint64_t strides[4] = {0, 0, 0, 0};
        size_t bytes;
        unsigned bb;
        tensor_geometry(c, strides, &bytes, &bb);
        unsigned char *g = malloc(bytes), *g2 = malloc(bytes), *want = malloc(bytes);
        unsigned char *out = malloc(4 * (size_t)bb), *exp = malloc(4 * (size_t)bb),
                      *src = malloc(4 * (size_t)bb);
        for (size_t i = 0; i < bytes; ++i)
            g[i] = (unsigned char)(ckt_rand64(&seed) | 1u); /* never zero: zero fill is visible */
        for (size_t i = 0; i < 4 * (size_t)bb; ++i)
            src[i] = (unsigned char)ckt_rand64(&seed);
        /* Stores use the same boxes moved to non-negative coordinates: a TMA store at a
         * negative coordinate is an illegal instruction on the H100 (measured), loads are not. */
        int scoords[4][5];
        for (int p = 0; p < 4; ++p)
            for (int i = 0; i < 5; ++i)
                scoords[p][i] = c->coords[p][i] < 0 ? 0 : c->coords[p][i];
        void *dg = ckk_upload(g, bytes), *dco = ckk_upload(c->coords, sizeof c->coords);
        void *dsco = ckk_upload(scoords, sizeof scoords);
        void *dout = ckk_upload(NULL, 4 * (size_t)bb), *dsrc = ckk_upload(src, 4 * (size_t)bb);
        ck_tensor_map map;
        int rank = (int)c->rank, n = 4, box_bytes = (int)bb;
        if (!make_map(c, dg, strides, &map))
            continue;
        /* loads */
        CHECK_OK(ckk_launch(kl, 1, 1, 1, 128, 1, 1, 0, 6, CKK_ARG(map), CKK_ARG(rank), CKK_ARG(n),
                            CKK_ARG(dco), CKK_ARG(box_bytes), CKK_ARG(dout)));
        ckk_download(out, dout, 4 * (size_t)bb);
        /* expected: box element j at dense offset, then swizzled; outside the tensor zero */
        memcpy(want, g, bytes);
        for (int p = 0; p < 4; ++p) {
            unsigned char *e = exp + (size_t)p * bb;
            for (unsigned o = 0; o < bb; o += c->eb) {
                unsigned j[5] = {0, 0, 0, 0, 0}, r = o / c->eb;
                for (unsigned i = 0; i < c->rank; ++i)
                    j[i] = r % c->box[i], r /= c->box[i];
                long go = elem_offset(c, strides, c->coords[p], j, 0);
                unsigned so = swizzled(o, c->swz);
                if (go < 0)
                    memset(e + so, 0, c->eb);
                else
                    memcpy(e + so, g + go, c->eb);
                /* stores: global element j <- shared bytes at the swizzled offset of j */
                long sgo = elem_offset(c, strides, scoords[p], j, 1);
                if (sgo >= 0)
                    memcpy(want + sgo, src + (size_t)p * bb + so, c->eb);
            }
        }
        size_t first = 0;
        while (first < 4 * (size_t)bb && out[first] == exp[first])
            ++first;
        CHECK_MSG(first == 4 * (size_t)bb,
                  "TMA load %s: box %zu byte %zu is 0x%02x, expected 0x%02x", c->name, first / bb,
                  first % bb, first < 4 * (size_t)bb ? out[first] : 0,
                  first < 4 * (size_t)bb ? exp[first] : 0);
        char name[64];
        snprintf(name, sizeof name, "tma_load_%zu", ci);
        ckk_dump(name, out, 4 * (size_t)bb);
        /* stores into the same tensor */
        CHECK_OK(ckk_launch(ks, 1, 1, 1, 128, 1, 1, 0, 6, CKK_ARG(map), CKK_ARG(rank), CKK_ARG(n),
                            CKK_ARG(dsco), CKK_ARG(dsrc), CKK_ARG(box_bytes)));
        ckk_download(g2, dg, bytes);
        first = 0;
        while (first < bytes && g2[first] == want[first])
            ++first;
        CHECK_MSG(first == bytes, "TMA store %s: tensor byte %zu is 0x%02x, expected 0x%02x",
                  c->name, first, first < bytes ? g2[first] : 0, first < bytes ? want[first] : 0);
        snprintf(name, sizeof name, "tma_store_%zu", ci);
        ckk_dump(name, g2, bytes);
        ck_free(ckk_device, dg), ck_free(ckk_device, dco), ck_free(ckk_device, dsco),
            ck_free(ckk_device, dout), ck_free(ckk_device, dsrc);
        free(g), free(g2), free(want), free(out), free(exp), free(src);
    }
}

static void test_mbarrier_phases(void)
{
    ck_kernel *k = ckk_kernel("mbarrier.cu", "mbar_phases");
    enum { PHASES = 7 };
    unsigned out[(PHASES + 1) * 128];
    void *d = ckk_upload(NULL, sizeof out);
    int phases = PHASES;
    CHECK_OK(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 2, CKK_ARG(phases), CKK_ARG(d)));
    ckk_download(out, d, sizeof out);
    int bad = 0;
    for (int p = 0; p < PHASES; ++p)
        for (int t = 0; t < 128; ++t)
            bad +=
                out[p * 128 + t] != 6u; /* not complete before arriving; previous complete; done */
    for (int t = 0; t < 128; ++t)
        bad += out[PHASES * 128 + t] != 2u; /* pending transaction holds the phase open */
    CHECK_MSG(bad == 0,
              "mbarrier phases: %d of %d threads' observations wrong (first phase words 0x%x 0x%x)",
              bad, (PHASES + 1) * 128, out[0], out[PHASES * 128]);
    ckk_dump("mbarrier_phases", out, sizeof out);
    ck_free(ckk_device, d);
}

/* cp.async completion tracked by an mbarrier (cp.async.mbarrier.arrive.noinc): each phase's
 * copies are visible to every thread once the phase completes. */
static void test_mbarrier_cp_async(void)
{
    ck_kernel *k = ckk_kernel("mbarrier.cu", "mbar_cp_async");
    enum { PHASES = 5 };
    unsigned char g[PHASES * 2048];
    for (size_t i = 0; i < sizeof g; ++i)
        g[i] = (unsigned char)(ckt_rand64(&seed) >> 56);
    unsigned out[PHASES * 128];
    void *dg = ckk_upload(g, sizeof g), *d = ckk_upload(NULL, sizeof out);
    int phases = PHASES;
    CHECK_OK(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 3, CKK_ARG(phases), CKK_ARG(dg), CKK_ARG(d)));
    ckk_download(out, d, sizeof out);
    int bad = 0;
    for (int i = 0; i < PHASES * 128; ++i)
        bad += out[i] != 1u;
    CHECK_MSG(bad == 0, "cp.async mbarrier arrivals: %d of %d observations wrong", bad,
              PHASES * 128);
    ckk_dump("mbarrier_cp_async", out, sizeof out);
    ck_free(ckk_device, dg);
    ck_free(ckk_device, d);
}

static void test_tensor_map_refusals(void)
{
    void *g = NULL;
    CHECK_OK(ck_malloc(ckk_device, 4096, &g));
    ck_tensor_map_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = 2, d.rank = 2, d.global_address = g, d.dims[0] = 64, d.dims[1] = 32;
    d.strides[0] = 128, d.box[0] = 64, d.box[1] = 8, d.swizzle = 3;
    ck_tensor_map map, zero;
    memset(&map, 0, sizeof map);
    memset(&zero, 0, sizeof zero);
    CHECK_OK(ck_tensor_map_create(ckk_device, &d, &map));
    CHECK(memcmp(&map, &zero, sizeof map) != 0);
    memset(&map, 0, sizeof map);
    CHECK_STATUS(ck_tensor_map_create(NULL, &d, &map), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tensor_map_create(ckk_device, NULL, &map), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tensor_map_create(ckk_device, &d, NULL), CK_ERROR_INVALID_ARGUMENT);
    struct {
        const char *what;
        int field;
        const char *msg;
    } bad[] = {{"rank 0", 0, "rank = 0"},
               {"elem_bytes 3", 1, "elem_bytes = 3"},
               {"misaligned", 2, "16-byte aligned"},
               {"stride 100", 3, "strides[0] = 100"},
               {"box 300", 4, "box[1] = 300"},
               {"swizzle 7", 5, "swizzle = 7"},
               {"dims 0", 6, "dims[1] = 0"},
               {"elem stride 9", 7, "elem_strides[1] = 9"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        ck_tensor_map_desc e = d;
        switch (bad[i].field) {
        case 0:
            e.rank = 0;
            break;
        case 1:
            e.elem_bytes = 3;
            break;
        case 2:
            e.global_address = (const char *)g + 8;
            break;
        case 3:
            e.strides[0] = 100;
            break;
        case 4:
            e.box[1] = 300;
            break;
        case 5:
            e.swizzle = 7;
            break;
        case 6:
            e.dims[1] = 0;
            break;
        default:
            e.elem_strides[1] = 9;
            break;
        }
        CHECK_STATUS(ck_tensor_map_create(ckk_device, &e, &map), CK_ERROR_INVALID_ARGUMENT);
        CHECK_MSG(strstr(ck_last_error(), bad[i].msg) != NULL, "%s: '%s' lacks '%s'", bad[i].what,
                  ck_last_error(), bad[i].msg);
        CHECK_MSG(strstr(ck_last_error(), "ck_tensor_map_create") != NULL, "%s", ck_last_error());
    }
    CHECK(memcmp(&map, &zero, sizeof map) == 0); /* untouched on error */
    ck_free(ckk_device, g);
}

/* A box whose innermost coordinate is not a multiple of 16 bytes faults on the H100 (illegal
 * instruction, measured); the emulator must refuse it too rather than copy. Emulator only: on a
 * GPU the fault would poison the context for the rest of the program. */
static void test_tma_misaligned_coordinate_faults(void)
{
    if (!ckk_is_host()) {
        printf("  (skipped on the GPU: the fault is sticky)\n");
        return;
    }
    ck_kernel *kl = ckk_kernel("tma.cu", "tma_loads");
    const tma_case *c = &cases[0]; /* 2-D bf16: x = 3 is 6 bytes */
    uint64_t strides[4] = {0, 0, 0, 0};
    size_t bytes;
    unsigned bb;
    tensor_geometry(c, strides, &bytes, &bb);
    int coords[5] = {3, 0, 0, 0, 0};
    void *dg = ckk_upload(NULL, bytes), *dco = ckk_upload(coords, sizeof coords);
    void *dout = ckk_upload(NULL, bb);
    ck_tensor_map map;
    int rank = 2, n = 1, box_bytes = (int)bb;
    if (make_map(c, dg, strides, &map)) {
        CHECK_STATUS(ckk_launch(kl, 1, 1, 1, 128, 1, 1, 0, 6, CKK_ARG(map), CKK_ARG(rank),
                                CKK_ARG(n), CKK_ARG(dco), CKK_ARG(box_bytes), CKK_ARG(dout)),
                     CK_ERROR_LAUNCH);
        CHECK(strstr(ck_last_error(), "16 bytes") != NULL);
    }
    /* A store at a negative coordinate also faults on the H100 (measured). */
    ck_kernel *ks = ckk_kernel("tma.cu", "tma_stores");
    int neg[5] = {-16, 0, 0, 0, 0};
    void *dneg = ckk_upload(neg, sizeof neg), *dsrc = ckk_upload(NULL, bb);
    if (make_map(c, dg, strides, &map)) {
        CHECK_STATUS(ckk_launch(ks, 1, 1, 1, 128, 1, 1, 0, 6, CKK_ARG(map), CKK_ARG(rank),
                                CKK_ARG(n), CKK_ARG(dneg), CKK_ARG(dsrc), CKK_ARG(box_bytes)),
                     CK_ERROR_LAUNCH);
        CHECK(strstr(ck_last_error(), "negative") != NULL);
    }
    ck_free(ckk_device, dneg);
    ck_free(ckk_device, dsrc);
    ck_free(ckk_device, dg);
    ck_free(ckk_device, dco);
    ck_free(ckk_device, dout);
}

int main(void)
{
    if (!ckk_open())
        return 1;
    RUN_TEST(test_tma);
    RUN_TEST(test_tma_misaligned_coordinate_faults);
    RUN_TEST(test_mbarrier_phases);
    RUN_TEST(test_mbarrier_cp_async);
    RUN_TEST(test_tensor_map_refusals);
    ckk_close();
    return CK_TEST_REPORT();
}
