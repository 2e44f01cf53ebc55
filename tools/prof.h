/*
 * `ck prof`: run one operation on the GPU (else the emulator), check it against its CPU
 * reference, time it and print time, GB/s and the ratio to the measured device-to-device copy
 * bandwidth (--json for one JSON object). Each operation family has a tools/prof_<family>.c
 * defining the entry points below; this header holds what they share.
 */
#ifndef CK_TOOLS_PROF_H
#define CK_TOOLS_PROF_H

#include <stdio.h>

#include "ck/ck.h"

/* Options every `ck prof OP` accepts (parsed by prof_parse_common). */
typedef struct prof_common {
    ck_backend backend; /* --device auto|cuda|host */
    int json;           /* --json */
    int warmup;         /* --warmup N (default 20; emulator 1) */
    int reps;           /* --reps N (default 100; emulator 2) */
    int check;          /* 1 unless --no-check */
    int flush_l2;       /* --flush: overwrite L2 before every timed run */
    unsigned seed;      /* --seed N (default 1): random inputs */
} prof_common;

/* Remove the common options from argv (in place; *argc updated) and fill *c. Unknown options
 * starting with "--" are left for the caller. Returns CK_EXIT_OK or a usage error. */
int prof_parse_common(const char *sub, int *argc, char **argv, prof_common *c);

/* Help text of the common options (for each OP's --help). */
extern const char prof_common_help[];

/* Measured device-to-device copy bandwidth in GB/s (bytes read + bytes written per second) of
 * a 1 GiB copy on the GPU (64 MiB on the emulator), median of the runs; once per process. */
ck_status prof_copy_bandwidth(ck_context *ctx, double *gbps);

/* Time `fn` with the common options (warm-up, repetitions, optional L2 flush) on the context's
 * stream; *ms receives the median. */
/* Timed runs per candidate for `--tune` / `ck tune`: --reps if given, else 20 on a GPU and 1 on
 * the emulator (every candidate is compiled and run, so tuning takes longer than one prof). */
int prof_tune_reps(ck_context *ctx, const prof_common *c);

ck_status prof_time(ck_context *ctx, const prof_common *c, ck_timed_fn fn, void *user, double *ms);

/* One result line. */
typedef struct prof_result {
    const char *op;     /* "softmax" */
    char problem[256];  /* "bf16 16384x8192" */
    const char *device; /* device name */
    int checked;        /* the reference check ran */
    int ok;             /* it passed (or did not run) */
    double max_error;   /* largest error found by the check (its unit is the op's) */
    double ms;          /* median time */
    double bytes;       /* bytes moved: each input byte read once, each output byte written once */
    double copy_gbps;   /* measured copy bandwidth */
} prof_result;

/* Print the result as text or JSON (c->json). Returns CK_EXIT_OK when r->ok, else
 * CK_EXIT_FAILURE. */
int prof_report(const prof_common *c, const prof_result *r);

/* `ck tune OP`'s progress line for candidate i of n (user: the prof_common; nothing with
 * --json): its instance text and median ms, or "could not run" (ms < 0). */
void prof_tune_progress(void *user, int i, int n, const char *instance, double ms);

/* Deterministic random numbers for inputs: uniform in [lo, hi). */
void prof_fill_uniform(float *x, size_t n, float lo, float hi, unsigned *state);

/* The most elements a shape of `ck prof` may have (2^40): every byte count of its buffers
 * then fits in size_t and int64 without overflow. */
#define PROF_MAX_ELEMENTS (1LL << 40)

/* Parse "AxBxC" (or "A,B,C") into at most max lengths, each >= 1, whose product is at most
 * PROF_MAX_ELEMENTS; returns the count, 0 on any error (an empty part, a sign, a value out of
 * range, a product too large, more than max lengths). */
int prof_parse_shape(const char *text, long long *dims, int max);

/* Parse a list of at most max whole numbers in [lo, hi] separated by 'x' or ','; returns the
 * count, 0 on error. */
int prof_parse_list(const char *text, long long *vals, int max, long long lo, long long hi);

/* --shape TEXT with min_rank..max_rank lengths: CK_EXIT_OK and *rank, or a usage error that
 * says what is accepted. */
int prof_shape_option(const char *sub, const char *text, long long *dims, int min_rank,
                      int max_rank, int *rank);

/* The usage error for an argument no option of SUB consumed: "unknown option" for --x, else
 * "unexpected argument". Returns CK_EXIT_USAGE. */
int prof_unknown_argument(const char *sub, const char *arg);

/* A finite number (the whole text): CK_EXIT_OK, or a usage error naming opt. */
int prof_parse_double(const char *sub, const char *opt, const char *text, double *out);

/* Entry points, one per operation: argv[0] is the operation name. */
int prof_copy(int argc, char **argv);         /* tools/prof_elementwise.c */
int prof_cast(int argc, char **argv);         /* tools/prof_elementwise.c */
int prof_elementwise(int argc, char **argv);  /* tools/prof_elementwise.c */
int prof_permute(int argc, char **argv);      /* tools/prof_permute.c */
int prof_reduce(int argc, char **argv);       /* tools/prof_reduce.c */
int prof_softmax(int argc, char **argv);      /* tools/prof_softmax.c */
int prof_gemm(int argc, char **argv);         /* tools/prof_gemm.c */
/* `ck prof gemm --groups ...` (sub: the command's name for messages) */
int prof_gemm_grouped(const char *sub, int argc, char **argv); /* tools/prof_gemm_grouped.c */
int prof_topk_softmax(int argc, char **argv); /* tools/prof_softmax.c */
int prof_layernorm(int argc, char **argv);    /* tools/prof_norm.c */
int prof_rmsnorm(int argc, char **argv);      /* tools/prof_norm.c */
int prof_attention(int argc, char **argv);    /* tools/prof_attention.c */
int prof_conv(int argc, char **argv);         /* tools/prof_conv.c */
int prof_pool(int argc, char **argv);         /* tools/prof_pool.c */
int prof_im2col(int argc, char **argv);       /* tools/prof_pool.c */

#endif
