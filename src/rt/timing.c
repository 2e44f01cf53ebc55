/* ck_time_runs: warm-up, timed repetitions between events, median; optional L2 flush before
 * each run and rotating inputs (the ideas of CK's flush_cache and rotating_buffer). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "rt/runtime_internal.h"

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

ck_status ck_time_runs(ck_device *d, ck_stream *stream, const ck_timing_options *o, ck_timed_fn fn,
                       void *user, ck_timing_result *r)
{
    CK_REQUIRE_NOT_NULL(d, "ck_time_runs");
    CK_REQUIRE_NOT_NULL(o, "ck_time_runs");
    CK_REQUIRE_NOT_NULL(fn, "ck_time_runs");
    CK_REQUIRE_NOT_NULL(r, "ck_time_runs");
    memset(r, 0, sizeof *r);
    if (o->repetitions < 1 || o->repetitions > 1000000 || o->warmup < 0 || o->rotating_count < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_time_runs: repetitions = %d, warmup = %d, rotating_count = %d; "
                       "accepted: 1 to 1000000 repetitions, warmup >= 0, rotating_count >= 0.",
                       o->repetitions, o->warmup, o->rotating_count);
    if (stream && stream->device != d)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_time_runs: the stream belongs to another device.");
    int rot = o->rotating_count > 0 ? o->rotating_count : 1;
    size_t flush_bytes = 0;
    void *flush = NULL;
    float *times = calloc((size_t)o->repetitions, sizeof *times);
    ck_event *start = NULL, *end = NULL;
    ck_status st = times ? CK_SUCCESS : ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_time_runs: no memory.");
    if (st == CK_SUCCESS && o->flush_l2) {
        flush_bytes = d->props.l2_bytes ? 2 * d->props.l2_bytes : (size_t)64 << 20;
        st = ck_malloc(d, flush_bytes, &flush);
    }
    if (st == CK_SUCCESS)
        st = ck_event_create(d, &start);
    if (st == CK_SUCCESS)
        st = ck_event_create(d, &end);
    int it = 0;
    for (int i = 0; st == CK_SUCCESS && i < o->warmup; ++i, ++it)
        st = fn(user, stream, it % rot);
    for (int i = 0; st == CK_SUCCESS && i < o->repetitions; ++i, ++it) {
        if (flush)
            st = ck_memset_d8(d, flush, (unsigned char)i, flush_bytes, stream);
        if (st == CK_SUCCESS)
            st = ck_event_record(start, stream);
        if (st == CK_SUCCESS)
            st = fn(user, stream, it % rot);
        if (st == CK_SUCCESS)
            st = ck_event_record(end, stream);
        if (st == CK_SUCCESS)
            st = ck_event_synchronize(end);
        if (st == CK_SUCCESS)
            st = ck_event_elapsed_ms(start, end, &times[i]);
    }
    if (st == CK_SUCCESS) {
        int n = o->repetitions;
        double sum = 0;
        for (int i = 0; i < n; ++i)
            sum += times[i];
        qsort(times, (size_t)n, sizeof *times, cmp_float);
        r->repetitions = n;
        r->min_ms = times[0];
        r->max_ms = times[n - 1];
        r->mean_ms = (float)(sum / n);
        r->median_ms = n % 2 ? times[n / 2] : 0.5f * (times[n / 2 - 1] + times[n / 2]);
    }
    ck_event_destroy(start);
    ck_event_destroy(end);
    if (flush)
        ck_free(d, flush);
    free(times);
    return st;
}

ck_status ck_rotating_copies(ck_device *d, void *src, size_t bytes, int count, void **copies)
{
    CK_REQUIRE_NOT_NULL(d, "ck_rotating_copies");
    CK_REQUIRE_NOT_NULL(src, "ck_rotating_copies");
    CK_REQUIRE_NOT_NULL(copies, "ck_rotating_copies");
    if (count < 1 || count > 64)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_rotating_copies: count = %d; 1 to 64 copies are accepted.", count);
    copies[0] = src;
    for (int i = 1; i < count; ++i) {
        copies[i] = NULL;
        ck_status st = ck_malloc(d, bytes, &copies[i]);
        if (st == CK_SUCCESS)
            st = ck_memcpy_d2d(d, copies[i], src, bytes, NULL);
        if (st != CK_SUCCESS) {
            ck_rotating_free(d, copies, i + 1);
            return st;
        }
    }
    return CK_SUCCESS;
}

void ck_rotating_free(ck_device *d, void **copies, int count)
{
    if (!d || !copies)
        return;
    for (int i = 1; i < count && i < 64; ++i) {
        if (copies[i])
            ck_free(d, copies[i]);
        copies[i] = NULL;
    }
}
