/*
 * Reference semantics of the tensor copy engine (cp.async.bulk.tensor tile mode) and of the
 * mbarrier phase / transaction-count state machine (src/device/host/ck_emu_tensor_ref.h), checked
 * against independent models: TMA as a walk over the global tensor deciding, for every global
 * element, whether and where it appears in the swizzled box; the mbarrier as a struct with named
 * fields driven by random operation sequences.
 */
#include <stdlib.h>

#include "device/host/ck_emu_tensor_ref.h"
#include "test.h"

static uint64_t rng = 0x7A1E5EEDull;

static unsigned rnd(unsigned n)
{
    return (unsigned)(ckt_rand64(&rng) % n);
}

/* 16-byte chunk within the span XOR (128-byte line index mod chunks per span) */
static uint32_t model_swizzle(uint32_t addr, unsigned mode)
{
    uint32_t S = 16u << mode, chunks = S / 16u;
    uint32_t chunk = (addr % S) / 16u, key = (addr / 128u) % chunks;
    return addr - chunk * 16u + (chunk ^ key) * 16u;
}

typedef struct tcase {
    ck_emu_tmap_desc d;
    int32_t coords[5];
    uint8_t *global;
    size_t global_bytes;
    uint32_t smem_addr;
} tcase;

/* random tensor: rank 1..5, small dims, padded 16-byte-multiple strides, box dims within the
 * hardware rules (inner box bytes multiple of 16 and <= swizzle span), coordinates that often
 * stick out on either side */
static void make_case(tcase *t)
{
    ck_emu_tmap_desc *d = &t->d;
    memset(d, 0, sizeof *d);
    static const uint8_t sizes[4] = {1, 2, 4, 8};
    d->magic = CK_EMU_TMAP_MAGIC;
    d->elem_bytes = sizes[rnd(4)];
    d->rank = (uint8_t)(1 + rnd(5));
    d->swizzle = (uint8_t)rnd(4);
    unsigned span = 16u << d->swizzle;
    unsigned max_inner = d->swizzle ? span / d->elem_bytes : 64u / d->elem_bytes;
    unsigned unit = 16u / d->elem_bytes; /* inner box must be a multiple of 16 bytes */
    d->box[0] = (uint16_t)(unit * (1 + rnd(max_inner / unit)));
    d->elem_strides[0] = (uint8_t)(1 + rnd(3)); /* must be ignored */
    d->dims[0] = 1 + rnd(3u * d->box[0]);
    d->strides[0] = d->elem_bytes;
    uint64_t pitch = ((uint64_t)d->dims[0] * d->elem_bytes + 15u) / 16u * 16u + 16u * rnd(3);
    for (unsigned i = 1; i < 5; ++i) {
        if (i < d->rank) {
            d->box[i] = (uint16_t)(1 + rnd(i == 1 ? 9 : 3));
            d->elem_strides[i] = (uint8_t)(1 + rnd(i == 1 ? 3 : 2));
            d->dims[i] = 1 + rnd(2u * d->box[i] + 1);
            d->strides[i] = pitch;
            pitch = pitch * (d->dims[i] + rnd(2));
        } else {
            d->box[i] = 1, d->elem_strides[i] = 1, d->dims[i] = 1, d->strides[i] = 0;
        }
    }
    t->global_bytes = (size_t)pitch + 64;
    t->global = (uint8_t *)malloc(t->global_bytes);
    for (size_t i = 0; i < t->global_bytes; ++i)
        t->global[i] = (uint8_t)ckt_rand64(&rng);
    d->global_address = (uint64_t)(uintptr_t)t->global;
    for (unsigned i = 0; i < 5; ++i)
        t->coords[i] =
            i < d->rank ? (int32_t)rnd(d->dims[i] + d->box[i]) - (int32_t)d->box[i] / 2 - 1 : 0;
    t->smem_addr = 1024u * (1 + rnd(3)) + (d->swizzle ? 0u : 16u * rnd(8));
}

static void test_tma_load_store(void)
{
    enum { SMEM = 128 * 1024 };
    static uint8_t smem[SMEM], smem0[SMEM];
    for (int rep = 0; rep < 300; ++rep) {
        tcase t;
        make_case(&t);
        const ck_emu_tmap_desc *d = &t.d;
        unsigned eb = d->elem_bytes;
        /* box extents in shared memory, written independently of the reference */
        unsigned cnt[5], total = 1;
        for (unsigned i = 0; i < 5; ++i) {
            unsigned es = (i == 0 || i >= d->rank) ? 1 : d->elem_strides[i];
            cnt[i] = i < d->rank ? (d->box[i] + es - 1) / es : 1;
            total *= cnt[i];
        }
        for (unsigned i = 0; i < SMEM; ++i)
            smem0[i] = smem[i] = (uint8_t)ckt_rand64(&rng);
        uint32_t bytes = ck_emu_ref_tma_copy(d, t.coords, smem, SMEM, t.smem_addr, 0);
        CHECK_EQ_INT(bytes, total * eb);
        CHECK_EQ_INT(ck_emu_tmap_box_bytes(d), total * eb);
        /* every shared byte: inside the box image → expected global element or zero;
         * outside → untouched */
        static unsigned char covered[SMEM];
        memset(covered, 0, sizeof covered);
        int bad = 0;
        for (unsigned lin = 0; lin < total; ++lin) {
            unsigned rest = lin, j[5];
            for (unsigned i = 0; i < 5; ++i)
                j[i] = rest % cnt[i], rest /= cnt[i];
            int inside = 1;
            size_t off = 0;
            for (unsigned i = 0; i < d->rank; ++i) {
                long long c =
                    (long long)t.coords[i] + (long long)j[i] * (i ? d->elem_strides[i] : 1);
                if (c < 0 || c >= (long long)d->dims[i])
                    inside = 0;
                else
                    off += (size_t)c * (i ? d->strides[i] : eb);
            }
            uint32_t a = model_swizzle(t.smem_addr + lin * eb, d->swizzle);
            for (unsigned b = 0; b < eb; ++b) {
                uint8_t want = inside ? t.global[off + b] : 0;
                if (smem[a + b] != want)
                    ++bad;
                covered[a + b] = 1;
            }
        }
        for (unsigned i = 0; i < SMEM; ++i)
            if (!covered[i] && smem[i] != smem0[i])
                ++bad;
        CHECK_MSG(bad == 0, "tma load rank %u eb %u swz %u: %d bytes wrong", d->rank, eb,
                  d->swizzle, bad);

        /* store back from fresh random shared memory: in-bounds elements take the shared value,
         * everything else in global memory stays as it was */
        uint8_t *g0 = (uint8_t *)malloc(t.global_bytes);
        memcpy(g0, t.global, t.global_bytes);
        for (unsigned i = 0; i < SMEM; ++i)
            smem[i] = (uint8_t)ckt_rand64(&rng);
        bytes = ck_emu_ref_tma_copy(d, t.coords, smem, SMEM, t.smem_addr, 1);
        CHECK_EQ_INT(bytes, total * eb);
        unsigned char *written = (unsigned char *)calloc(t.global_bytes, 1);
        bad = 0;
        for (unsigned lin = 0; lin < total; ++lin) {
            unsigned rest = lin, j[5];
            for (unsigned i = 0; i < 5; ++i)
                j[i] = rest % cnt[i], rest /= cnt[i];
            int inside = 1;
            size_t off = 0;
            for (unsigned i = 0; i < d->rank; ++i) {
                long long c =
                    (long long)t.coords[i] + (long long)j[i] * (i ? d->elem_strides[i] : 1);
                /* stores write whole 16-byte chunks of a row (the H100, measured) */
                long long end = i ? (long long)d->dims[i]
                                  : ((long long)d->dims[0] * eb + 15) / 16 * 16 / eb;
                if (c < 0 || c >= end)
                    inside = 0;
                else
                    off += (size_t)c * (i ? d->strides[i] : eb);
            }
            if (!inside)
                continue;
            uint32_t a = model_swizzle(t.smem_addr + lin * eb, d->swizzle);
            for (unsigned b = 0; b < eb; ++b) {
                if (t.global[off + b] != smem[a + b])
                    ++bad;
                written[off + b] = 1;
            }
        }
        for (size_t i = 0; i < t.global_bytes; ++i)
            if (!written[i] && t.global[i] != g0[i])
                ++bad;
        CHECK_MSG(bad == 0, "tma store rank %u eb %u swz %u: %d bytes wrong", d->rank, eb,
                  d->swizzle, bad);
        free(written);
        free(g0);
        free(t.global);
    }
}

static void test_tma_bad_input(void)
{
    static uint8_t smem[4096], g[16 * 64];
    ck_emu_tmap_desc d;
    int32_t coords[5] = {0, 0, 0, 0, 0};
    memset(&d, 0, sizeof d);
    d.magic = CK_EMU_TMAP_MAGIC, d.elem_bytes = 2, d.rank = 2;
    d.global_address = (uint64_t)(uintptr_t)g;
    d.dims[0] = 8, d.dims[1] = 64, d.strides[0] = 2, d.strides[1] = 16;
    d.box[0] = 8, d.box[1] = 8, d.elem_strides[0] = d.elem_strides[1] = 1;
    memset(smem, 0x77, sizeof smem);
    /* a 128-byte box at 4096 - 64 would run past the end: nothing copied, 0 reported */
    CHECK_EQ_INT(ck_emu_ref_tma_copy(&d, coords, smem, sizeof smem, 4096 - 64, 0), 0);
    CHECK_EQ_INT(smem[4095], 0x77);
    CHECK_EQ_INT(ck_emu_ref_tma_copy(&d, coords, smem, sizeof smem, 4096 - 128, 0), 128);
    /* a 256^5-element box (2^40 elements) is refused without overflowing the byte count */
    ck_emu_tmap_desc huge = d;
    huge.rank = 5;
    for (int i = 0; i < 5; ++i)
        huge.box[i] = 256, huge.elem_strides[i] = 1, huge.dims[i] = 1;
    CHECK_EQ_INT(ck_emu_ref_tma_copy(&huge, coords, smem, sizeof smem, 0, 0), 0);
    CHECK_EQ_INT(ck_emu_tmap_box_bytes(&huge), 0xFFFFFFFFu);
    d.swizzle = CK_EMU_SWIZZLE_128B; /* swizzled boxes need their whole 128-byte lines */
    CHECK_EQ_INT(ck_emu_ref_tma_copy(&d, coords, smem, sizeof smem, 4096 - 112, 0), 0);
}

/* ---------------------------------------------------------------- mbarrier */

typedef struct mbar_model {
    unsigned phase, pending, expected;
    long tx;
} mbar_model;

static void model_step(mbar_model *m, unsigned arrivals, long tx)
{
    m->tx += tx;
    m->pending = arrivals >= m->pending ? 0 : m->pending - arrivals;
    if (m->pending == 0 && m->tx == 0) {
        m->phase = !m->phase;
        m->pending = m->expected;
    }
}

static void test_mbarrier(void)
{
    /* scripted: two arrivals and 100 transaction bytes */
    uint64_t s = ck_emu_ref_mbar_init(2);
    CHECK(!ck_emu_ref_mbar_test_parity(s, 0));
    CHECK(ck_emu_ref_mbar_test_parity(s, 1)); /* the "previous" phase counts as complete */
    s = ck_emu_ref_mbar_update(s, 1, 0);
    CHECK(!ck_emu_ref_mbar_test_parity(s, 0));
    s = ck_emu_ref_mbar_update(s, 1, 100); /* arrive.expect_tx: pending 0 but 100 bytes due */
    CHECK(!ck_emu_ref_mbar_test_parity(s, 0));
    CHECK_EQ_INT(ck_emu_mbar_tx(s), 100);
    s = ck_emu_ref_mbar_update(s, 0, -60);
    CHECK(!ck_emu_ref_mbar_test_parity(s, 0));
    s = ck_emu_ref_mbar_update(s, 0, -40);
    CHECK(ck_emu_ref_mbar_test_parity(s, 0));
    CHECK(!ck_emu_ref_mbar_test_parity(s, 1));
    CHECK_EQ_INT(ck_emu_mbar_pending(s), 2);
    CHECK_EQ_INT(ck_emu_mbar_tx(s), 0);
    /* complete_tx before expect_tx (a copy that lands before the expectation is posted) */
    s = ck_emu_ref_mbar_update(s, 0, -256);
    CHECK_EQ_INT(ck_emu_mbar_tx(s), -256);
    s = ck_emu_ref_mbar_update(s, 2, 256);
    CHECK(ck_emu_ref_mbar_test_parity(s, 1));
    CHECK_EQ_INT(ck_emu_mbar_phase(s), 0);

    /* random sequences against the field model */
    int bad = 0;
    for (int rep = 0; rep < 2000; ++rep) {
        unsigned count = 1 + rnd(rep % 3 ? 8 : CK_EMU_MBAR_MAX_COUNT);
        mbar_model m = {0, count, count, 0};
        s = ck_emu_ref_mbar_init(count);
        for (int step = 0; step < 40; ++step) {
            unsigned arrivals = 0;
            long tx = 0;
            switch (rnd(4)) {
            case 0:
                arrivals = 1 + rnd(m.pending ? m.pending : 1);
                break;
            case 1:
                tx = 1 + rnd(4096);
                break; /* expect_tx */
            case 2:
                tx = -(long)(1 + rnd(4096));
                break; /* complete_tx */
            default:
                tx = -m.tx, arrivals = m.pending;
                break; /* everything lands and arrives */
            }
            model_step(&m, arrivals, tx);
            s = ck_emu_ref_mbar_update(s, arrivals, (int32_t)tx);
            if (ck_emu_mbar_phase(s) != m.phase || ck_emu_mbar_pending(s) != m.pending ||
                ck_emu_mbar_expected(s) != m.expected || ck_emu_mbar_tx(s) != m.tx)
                ++bad;
            if (ck_emu_ref_mbar_test_parity(s, m.phase) ||
                !ck_emu_ref_mbar_test_parity(s, !m.phase))
                ++bad;
        }
    }
    CHECK_MSG(bad == 0, "mbarrier: %d state mismatches", bad);
}

int main(void)
{
    printf("seed 0x%llx\n", (unsigned long long)rng);
    RUN_TEST(test_tma_load_store);
    RUN_TEST(test_tma_bad_input);
    RUN_TEST(test_mbarrier);
    return CK_TEST_REPORT();
}
