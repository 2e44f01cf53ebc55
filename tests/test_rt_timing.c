/* ck_time_runs on the emulator: warm-up and repetitions are counted, rotations cycle, the
 * statistics are ordered, bad options are refused. */
#include "kernel_harness.h"

typedef struct counter {
    int calls;
    int rotations[16];
    ck_kernel *k;
    void *buf;
} counter;

static ck_status run_once(void *user, ck_stream *stream, int rotation)
{
    counter *c = user;
    if (c->calls < 16)
        c->rotations[c->calls] = rotation;
    c->calls++;
    void *args[] = {&c->buf};
    size_t sizes[] = {sizeof c->buf};
    ck_launch_config cfg = {{2, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, stream};
    return ck_launch(c->k, &cfg, args, sizes, 1);
}

static void test_timing(void)
{
    ck_device *d = ckk_open();
    counter c = {0, {0}, ckk_kernel("ids.cu", "ids"), NULL};
    CHECK_OK(ck_malloc(d, 2 * 64 * 8 * 4, &c.buf));
    ck_stream *s = NULL;
    CHECK_OK(ck_stream_create(d, &s));
    ck_timing_options o = {2, 5, 1, 3};
    ck_timing_result r;
    CHECK_OK(ck_time_runs(d, s, &o, run_once, &c, &r));
    CHECK_EQ_INT(c.calls, 7);
    for (int i = 0; i < 7; ++i)
        CHECK_EQ_INT(c.rotations[i], i % 3);
    CHECK_EQ_INT(r.repetitions, 5);
    CHECK(r.min_ms >= 0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
    CHECK(r.mean_ms >= r.min_ms && r.mean_ms <= r.max_ms);
    ck_timing_options bad = {0, 0, 0, 1};
    CHECK_STATUS(ck_time_runs(d, s, &bad, run_once, &c, &r), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_time_runs(d, s, &o, NULL, &c, &r), CK_ERROR_INVALID_ARGUMENT);
    ck_stream_destroy(s);

    /* rotating copies hold the same bytes at different addresses */
    void *copies[4];
    CHECK_OK(ck_rotating_copies(d, c.buf, 2 * 64 * 8 * 4, 4, copies));
    static unsigned x[2 * 64 * 8], y[2 * 64 * 8];
    CHECK_OK(ck_memcpy_d2h(d, x, c.buf, sizeof x, NULL));
    for (int i = 0; i < 4; ++i) {
        CHECK(i == 0 ? copies[i] == c.buf : copies[i] != c.buf);
        CHECK_OK(ck_memcpy_d2h(d, y, copies[i], sizeof y, NULL));
        CHECK(memcmp(x, y, sizeof x) == 0);
    }
    ck_rotating_free(d, copies, 4);
    CHECK_STATUS(ck_rotating_copies(d, c.buf, 16, 0, copies), CK_ERROR_INVALID_ARGUMENT);
    ck_free(d, c.buf);
}

int main(void)
{
    if (!ckk_open())
        return 1;
    RUN_TEST(test_timing);
    ckk_close();
    return CK_TEST_REPORT();
}
