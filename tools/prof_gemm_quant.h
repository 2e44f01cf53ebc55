/*
 * `ck prof gemm`'s quantized options (tools/prof_gemm_quant.c): --scale-a / --scale-b MODE,
 * --b-dtype int4|uint4|fp4, --group-size G, --b-zeros; the scale and zero-point buffers.
 */
#ifndef CK_TOOLS_PROF_GEMM_QUANT_H
#define CK_TOOLS_PROF_GEMM_QUANT_H

#include "ck/ck.h"

extern const char prof_gemm_quant_help[];

/* 1 when `opt` is one of these options (each takes a value). */
int prof_gemm_quant_takes(const char *opt);

/* 1: option `opt` with value `v` was a quantized option and is applied to *p; 0: not one;
 * CK_EXIT_USAGE (negated) after printing the usage error: -CK_EXIT_USAGE. */
int prof_gemm_quant_option(const char *sub, const char *opt, const char *v, ck_gemm_problem *p);

/* After parsing: packed B's storage and order, the group size as B's block scale, f32 D for
 * scaled i8. have_d: --d-dtype was given. Returns CK_EXIT_OK or a usage error. */
int prof_gemm_quant_finish(const char *sub, ck_gemm_problem *p, int have_d);

/* The scale tensors and zero points of a checked problem: random host copies (scales of both
 * signs, magnitudes 1/4 .. 4; zero points 0 .. 15) and device copies, set in *dev_args and
 * *host_args. Free with prof_gemm_quant_free. */
typedef struct prof_gemm_quant_bufs {
    void *h[3], *d[3]; /* a_scales, b_scales, b_zeros */
} prof_gemm_quant_bufs;
ck_status prof_gemm_quant_buffers(ck_device *dev, const ck_gemm_problem *q, unsigned *state,
                                  prof_gemm_quant_bufs *b, ck_gemm_args *dev_args,
                                  ck_gemm_args *host_args);
void prof_gemm_quant_free(ck_device *dev, prof_gemm_quant_bufs *b);

/* The bytes a GEMM reads and writes at least, each once: A, B (packed: K / 2 per column), the
 * scale tensors and zero points, C (has_c), D and bias, over all batches; what its GB/s count.
 * The problem as checked (ck_gemm_prob_make's: VECTOR scales resolved). */
double prof_gemm_bytes(const ck_gemm_problem *q, int has_c);

#endif
