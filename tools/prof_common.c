/* What every `ck prof OP` shares: common options, copy bandwidth, timing, reporting. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prof.h"

const char prof_common_help[] =
    "  --device auto|cuda|host   where to run (default auto: a GPU if usable)\n"
    "  --json                    one JSON object instead of text\n"
    "  --warmup N                untimed runs first (default 20; emulator 1)\n"
    "  --reps N                  timed runs, median reported (default 100; emulator 2)\n"
    "  --flush                   overwrite the L2 cache before every timed run\n"
    "  --no-check                skip the CPU reference check\n"
    "  --seed N                  seed of the random inputs (default 1)\n";

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > 1000000)
        return 0;
    *out = (int)v;
    return 1;
}

int prof_parse_common(const char *sub, int *argc, char **argv, prof_common *c)
{
    memset(c, 0, sizeof *c);
    c->backend = CK_BACKEND_AUTO;
    c->warmup = -1;
    c->reps = -1;
    c->check = 1;
    c->seed = 1;
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        const char *a = argv[i];
        int needs = !strcmp(a, "--device") || !strcmp(a, "--warmup") || !strcmp(a, "--reps") ||
                    !strcmp(a, "--seed");
        if (needs && i + 1 >= *argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--device")) {
            const char *v = argv[++i];
            if (!strcmp(v, "auto"))
                c->backend = CK_BACKEND_AUTO;
            else if (!strcmp(v, "cuda"))
                c->backend = CK_BACKEND_CUDA;
            else if (!strcmp(v, "host"))
                c->backend = CK_BACKEND_HOST;
            else
                return cli_usage_error(sub, "--device %s: expected auto, cuda or host.", v);
        } else if (!strcmp(a, "--warmup")) {
            if (!parse_int(argv[++i], 0, &c->warmup))
                return cli_usage_error(sub, "--warmup %s: expected a count >= 0.", argv[i]);
        } else if (!strcmp(a, "--reps")) {
            if (!parse_int(argv[++i], 1, &c->reps))
                return cli_usage_error(sub, "--reps %s: expected a count >= 1.", argv[i]);
        } else if (!strcmp(a, "--seed")) {
            int s;
            if (!parse_int(argv[++i], 0, &s))
                return cli_usage_error(sub, "--seed %s: expected a number >= 0.", argv[i]);
            c->seed = (unsigned)s;
        } else if (!strcmp(a, "--json")) {
            c->json = 1;
        } else if (!strcmp(a, "--flush")) {
            c->flush_l2 = 1;
        } else if (!strcmp(a, "--no-check")) {
            c->check = 0;
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    return CK_EXIT_OK;
}

static void defaults(ck_context *ctx, prof_common *c)
{
    int host = ck_context_backend(ctx) == CK_BACKEND_HOST;
    if (c->warmup < 0)
        c->warmup = host ? 1 : 20; /* the H100's clocks need sustained work to settle */
    if (c->reps < 0)
        c->reps = host ? 2 : 100;
}

typedef struct copy_job {
    ck_device *dev;
    void *dst, *src;
    size_t bytes;
} copy_job;

static ck_status run_copy(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    copy_job *j = user;
    return ck_memcpy_d2d(j->dev, j->dst, j->src, j->bytes, stream);
}

ck_status prof_copy_bandwidth(ck_context *ctx, double *gbps)
{
    static double cached;
    if (cached > 0) {
        *gbps = cached;
        return CK_SUCCESS;
    }
    copy_job j = {ck_context_device(ctx), NULL, NULL, 0};
    int host = ck_context_backend(ctx) == CK_BACKEND_HOST;
    j.bytes = host ? (64u << 20) : (1u << 30);
    ck_status st = ck_malloc(j.dev, j.bytes, &j.src);
    if (st == CK_SUCCESS)
        st = ck_malloc(j.dev, j.bytes, &j.dst);
    if (st == CK_SUCCESS)
        st = ck_memset_d8(j.dev, j.src, 0x5a, j.bytes, NULL);
    ck_timing_options o = {host ? 1 : 10, host ? 3 : 50, 0, 1};
    ck_timing_result r;
    if (st == CK_SUCCESS)
        st = ck_time_runs(j.dev, ck_context_stream(ctx), &o, run_copy, &j, &r);
    ck_free(j.dev, j.src);
    ck_free(j.dev, j.dst);
    if (st != CK_SUCCESS)
        return st;
    cached = 2.0 * (double)j.bytes / (r.median_ms * 1e-3) / 1e9;
    *gbps = cached;
    return CK_SUCCESS;
}

int prof_tune_reps(ck_context *ctx, const prof_common *c)
{
    if (c->reps > 0)
        return c->reps;
    return ck_context_backend(ctx) == CK_BACKEND_HOST ? 1 : 20;
}

ck_status prof_time(ck_context *ctx, const prof_common *cin, ck_timed_fn fn, void *user, double *ms)
{
    prof_common c = *cin;
    defaults(ctx, &c);
    ck_timing_options o = {c.warmup, c.reps, c.flush_l2, 1};
    ck_timing_result r;
    ck_status st =
        ck_time_runs(ck_context_device(ctx), ck_context_stream(ctx), &o, fn, user, &r);
    if (st == CK_SUCCESS)
        *ms = r.median_ms;
    return st;
}

int prof_report(const prof_common *c, const prof_result *r)
{
    double gbps = r->ms > 0 ? r->bytes / (r->ms * 1e-3) / 1e9 : 0;
    double ratio = r->copy_gbps > 0 ? gbps / r->copy_gbps : 0;
    const char *verdict = !r->checked ? "unchecked" : r->ok ? "ok" : "MISMATCH";
    if (c->json) {
        printf("{\"op\": ");
        cli_json_string(stdout, r->op);
        printf(", \"problem\": ");
        cli_json_string(stdout, r->problem);
        printf(", \"device\": ");
        cli_json_string(stdout, r->device ? r->device : "");
        printf(", \"check\": \"%s\", \"max_error\": %.6g, \"ms\": %.6f, \"bytes\": %.0f, "
               "\"gbps\": %.2f, \"copy_gbps\": %.2f, \"ratio_to_copy\": %.4f}\n",
               verdict, isfinite(r->max_error) ? r->max_error : -1.0, r->ms, r->bytes, gbps,
               r->copy_gbps, ratio);
    } else {
        printf("%s %s on %s: %s (max error %.3g), %.4f ms, %.1f GB/s, %.1f%% of copy (%.1f GB/s)\n",
               r->op, r->problem, r->device ? r->device : "?", verdict, r->max_error, r->ms, gbps,
               100.0 * ratio, r->copy_gbps);
    }
    return r->ok ? CK_EXIT_OK : CK_EXIT_FAILURE;
}

void prof_fill_uniform(float *x, size_t n, float lo, float hi, unsigned *state)
{
    unsigned s = *state ? *state : 1u;
    for (size_t i = 0; i < n; ++i) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        x[i] = lo + (hi - lo) * (float)(s >> 8) * (1.0f / 16777216.0f);
    }
    *state = s;
}

/* One decimal integer in [lo, hi] (digits only: no sign, no blanks); *end past it. */
static int parse_bounded(const char *p, long long lo, long long hi, long long *v, const char **end)
{
    long long x = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9') {
        if (x > (hi - (*q - '0')) / 10)
            return 0; /* above hi (and never an overflow) */
        x = x * 10 + (*q - '0');
        ++q;
    }
    if (q == p || x < lo)
        return 0;
    *v = x;
    *end = q;
    return 1;
}

int prof_parse_list(const char *text, long long *vals, int max, long long lo, long long hi)
{
    int n = 0;
    const char *p = text;
    if (!p || !*p)
        return 0;
    for (;;) {
        const char *end;
        if (n >= max || !parse_bounded(p, lo, hi, &vals[n], &end))
            return 0;
        ++n;
        if (*end == '\0')
            return n;
        if (*end != 'x' && *end != 'X' && *end != ',')
            return 0;
        p = end + 1; /* a separator must be followed by a number: "4x" is refused */
    }
}

int prof_parse_shape(const char *text, long long *dims, int max)
{
    int n = prof_parse_list(text, dims, max, 1, PROF_MAX_ELEMENTS);
    long long total = 1;
    for (int d = 0; d < n; ++d) {
        if (total > PROF_MAX_ELEMENTS / dims[d])
            return 0;
        total *= dims[d];
    }
    return n;
}

int prof_shape_option(const char *sub, const char *text, long long *dims, int min_rank,
                      int max_rank, int *rank)
{
    long long v[CK_TENSOR_MAX_RANK + 1];
    int n = prof_parse_list(text, v, CK_TENSOR_MAX_RANK + 1, 1, PROF_MAX_ELEMENTS);
    if (n < min_rank || n > max_rank)
        return cli_usage_error(sub,
                               "--shape %s: expected %d to %d lengths, each a whole number >= 1 "
                               "(at most 2^40), separated by 'x' (such as 16384x8192).",
                               text, min_rank, max_rank);
    if (prof_parse_shape(text, v, n) != n)
        return cli_usage_error(sub,
                               "--shape %s: more than 2^40 elements in all; at most 2^40 are "
                               "accepted.",
                               text);
    memcpy(dims, v, sizeof(long long) * (size_t)n);
    *rank = n;
    return CK_EXIT_OK;
}

int prof_unknown_argument(const char *sub, const char *arg)
{
    if (arg[0] == '-' && arg[1] == '-')
        return cli_usage_error(sub, "unknown option '%s'.", arg);
    return cli_usage_error(sub, "unexpected argument '%s'; every argument is an option starting "
                                "with -- (followed by its value where it takes one).",
                           arg);
}

int prof_parse_double(const char *sub, const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v))
        return cli_usage_error(sub, "%s %s: expected a finite number such as 0.125.", opt, text);
    *out = v;
    return CK_EXIT_OK;
}

void prof_tune_progress(void *user, int i, int n, const char *instance, double ms)
{
    const prof_common *c = user;
    if (c->json)
        return;
    if (ms >= 0)
        printf("  [%d/%d] %-28s %9.4f ms\n", i + 1, n, instance, ms);
    else
        printf("  [%d/%d] %-28s could not run\n", i + 1, n, instance);
    fflush(stdout);
}
