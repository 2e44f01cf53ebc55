/*
 * The convolution op's parts (src/ops/conv), CK's names:
 *
 *   problem.c     ck_conv_problem -> ck_conv_prob (checks, output lengths, strides of the layouts)
 *   descriptor.c  the im2col views as chains of ck's transforms (pad -> embed -> merge), backward
 *                 data's classes and their views of dY, W and dX
 *   policy.c      the route and GEMM instance of each implicit GEMM on a device, with reasons
 *   kernel.c      the implicit GEMMs: each direction is a ck_gemm problem run by the GEMM's sm80
 *                 or sm90 pipeline with an operand read through a generated copy window (the
 *                 pipelines' GEMM_A_LOADER / GEMM_B_LOADER operand path), or a plain GEMM;
 *                 the plan
 *   source.c      the kernel source of a plan's implicit GEMM and its cache key
 *   layout.c      the NCHW / KCRS front end: ck_permute into and out of the context's workspace
 *   reference.c   the direct CPU reference shared by the tests and `ck prof conv`
 */
#ifndef CK_SRC_OPS_CONV_INTERNAL_H
#define CK_SRC_OPS_CONV_INTERNAL_H

#include <stdint.h>

#include "ck/conv.h"
#include "ck/context.h"
#include "ck/runtime.h"
#include "ck/tile.h"
#include "ck/tile_kernel.h"
#include "ops/gemm/gemm_internal.h"

/* The checked problem with everything derived. Spatial arrays are padded to 3 dims at the
 * front (length 1, stride 1, no padding) so that loops need not care about ndim. */
typedef struct ck_conv_prob {
    ck_conv_problem p; /* c and k per group (the problem's totals / g) */
    int64_t in[3], fil[3], out[3], str[3], dil[3], pl[3], pr[3]; /* 3-D padded */
    int64_t gemm_m;                                              /* N * prod out */
    int64_t gemm_kf;                                             /* prod filter */
    int64_t x_elems, w_elems, y_elems;
} ck_conv_prob;

/* Check and derive. CK_ERROR_INVALID_ARGUMENT / CK_ERROR_UNSUPPORTED with a sentence. */
ck_status ck_conv_prob_make(const ck_conv_problem *problem, ck_conv_prob *prob);

/* Linear offsets of the layouts (3-D padded indices). */
static inline int64_t ck_conv_x_at(const ck_conv_prob *q, int64_t n, const int64_t *i, int64_t g,
                                   int64_t c)
{
    return ((((n * q->in[0] + i[0]) * q->in[1] + i[1]) * q->in[2] + i[2]) * q->p.g + g) * q->p.c +
           c;
}
static inline int64_t ck_conv_w_at(const ck_conv_prob *q, int64_t g, int64_t k, const int64_t *f,
                                   int64_t c)
{
    return ((((g * q->p.k + k) * q->fil[0] + f[0]) * q->fil[1] + f[1]) * q->fil[2] + f[2]) *
               q->p.c +
           c;
}
static inline int64_t ck_conv_y_at(const ck_conv_prob *q, int64_t n, const int64_t *o, int64_t g,
                                   int64_t k)
{
    return ((((n * q->out[0] + o[0]) * q->out[1] + o[1]) * q->out[2] + o[2]) * q->p.g + g) *
               q->p.k +
           k;
}

/* The im2col descriptors of one group (descriptor.c). Forward A: (M, K) = (N*out, fil*C) over X.
 * Backward weight B: (K, N) = (N*out, fil*C) over X (the same view, dims in GEMM order). */
ck_status ck_conv_im2col_make(const ck_conv_prob *q, ck_descriptor **out);

/* Backward data's classes (CK's YTilde / XTilde decomposition): per spatial dim, the input
 * rows i = r + s * h (h < rows) and the taps f = f0 + t * ft (t < taps) that reach them, with
 * output row o = h + c0 - t * os. */
typedef struct ck_conv_class {
    int64_t r[3], rows[3], f0[3], ft[3], taps[3], c0[3], os[3];
} ck_conv_class;

/* The classes of the problem (prod stride of them), up to max written; returns the count. */
int ck_conv_classes(const ck_conv_prob *q, ck_conv_class *out, int max);

/* What a class needs: no input row (nothing), rows that no filter tap reaches (zeros), or a
 * computation. */
enum { CK_CONV_CLASS_EMPTY, CK_CONV_CLASS_ZERO, CK_CONV_CLASS_COMPUTE };
int ck_conv_class_work(const ck_conv_class *c);

/* Backward data views of class c: A = dY as (N * rows, taps * K), B = W as (taps * K, C),
 * D = dX's rows of the class as (N * rows, C). */
ck_status ck_conv_dy_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out);
ck_status ck_conv_w_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out);
ck_status ck_conv_dx_view_make(const ck_conv_prob *q, const ck_conv_class *c, ck_descriptor **out);

/* ---- the policy (policy.c) ------------------------------------------------------------- */

/* How an implicit GEMM reads its operands. */
typedef enum ck_conv_route {
    CK_CONV_ROUTE_SM80 = 0, /* sm80 pipeline, view operands through copy windows (loaders) */
    CK_CONV_ROUTE_SM90 = 1, /* sm90 pipeline, A = im2col(X) by cp.async producers, B by TMA */
    CK_CONV_ROUTE_GEMM = 2, /* a plain GEMM (1x1, stride 1, unpadded forward): the GEMM's kernel */
    CK_CONV_ROUTE_DEPTHWISE = 3 /* G = C = K: the direct kernel (depthwise.c), no GEMM */
} ck_conv_route;

/* What the policy is asked for: its choice, or (tests: quick to compile and emulate) the
 * smallest tile of the sm80 loader route, the smallest sm90 tile (plain GEMM or loader), or
 * the smallest sm90 loader tile with K split 3 ways. */
enum {
    CK_CONV_PICK_POLICY = 0,
    CK_CONV_PICK_SM80_SMALLEST = 1,
    CK_CONV_PICK_SM90_SMALLEST = 2,
    CK_CONV_PICK_SM90_SPLIT = 3
};

typedef struct ck_conv_choice {
    ck_conv_route route;
    ck_gemm_instance inst;
    char why[512]; /* the route and instance, and why no faster route was taken */
    int tuned;     /* 1: the tuned instance (ck_conv_policy_tuned) */
} ck_conv_choice;

/* 1 when the problem is a forward 1x1 convolution of stride 1 without padding. */
int ck_conv_is_plain_gemm(const ck_conv_prob *q);
/* 1 for backward data with a stride above 1 (residue classes whose rows of dX are a view). */
int ck_conv_bwd_data_strided(const ck_conv_prob *q);
const char *ck_conv_route_name(ck_conv_route r);

/* The choice for one implicit GEMM: loader_gp is its GEMM problem with view operands,
 * plain_gp (NULL unless ck_conv_is_plain_gemm) the same as a plain GEMM. Refusal: a
 * sentence naming every route's reason. */
ck_status ck_conv_policy_choose(const ck_conv_prob *q, const ck_conv_class *cls,
                                const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                                const ck_device_props *props, int pick, ck_conv_choice *out);

/* ---- tuned choices (policy.c; the tuner: tune.c) ----------------------------------------- */

/* A tuned instance's text: "ROUTE:GEMM-INSTANCE" for the GEMM routes ("sm90:sm90.128x64x64.s4.
 * w2x1", "sm80:...", "gemm:..."), "depthwise:sS" (strip of S outputs) or, backward weight,
 * "depthwise:sS.bB" (B lane blocks of partial sums) for the direct route. */
enum { CK_CONV_TUNED_MAX = 96 };

/* The tuning table's problem key of the problem (ck_conv_tuning_problem_key, problem.c). */
void ck_conv_tuning_problem_key(const ck_conv_prob *q, char *buf, size_t size);

/* The instances the route can run for this implicit GEMM (best first; 0 when the route does
 * not take it): gemm the GEMM's candidates of plain_gp (NULL: none), sm90 the family's loader
 * instances, sm80 the ranked sm80 instances whose copy windows exist. */
int ck_conv_route_instances(const ck_conv_prob *q, const ck_conv_class *cls,
                            const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                            const ck_device_props *props, ck_conv_route route,
                            ck_gemm_instance *out, int max);

/* "ROUTE:GEMM-INSTANCE" of a GEMM route's choice. */
void ck_conv_gemm_choice_name(ck_conv_route route, const ck_gemm_instance *in, char *buf,
                              size_t size);

/* The choice named by a tuned text when its route takes this implicit GEMM and lists that
 * instance: 1 with *out filled, else 0 (the caller falls back to the policy). */
int ck_conv_policy_tuned(const ck_conv_prob *q, const ck_conv_class *cls,
                         const ck_gemm_prob *loader_gp, const ck_gemm_prob *plain_gp,
                         const ck_device_props *props, const char *text, ck_conv_choice *out);

/* The tuned text for the problem on the context's device: the instance ck tune forces, else
 * the tuning table's entry unless a developer switch (CK_CONV_ROUTE, CK_CONV_DW_STRIP,
 * CK_CONV_DW_WGRAD_BLOCKS) is set -- they keep priority over the table, as the norms' do --;
 * "" when none (tune.c). Returns 1 when the text is forced (ck tune's candidate). */
int ck_conv_tuned_text(ck_context *ctx, const ck_conv_prob *q, char *buf, size_t size);

/* 1 when the plan accepts a tuned text: a direct depthwise instance (of the direction's form)
 * of a problem the route fits, or an instance its GEMM route lists for the problem's first
 * implicit GEMM (tune.c). Later classes of backward data that refuse it take the policy's. */
int ck_conv_tuned_ok(const ck_conv_prob *q, const ck_device_props *props, const char *text);

/* The instance text of a plan's (first) kernel, as ck_conv_plan_choice names it. */
void ck_conv_plan_instance(const ck_conv_plan *plan, char *name, size_t size);

/* The instance text the plan runs (a tuned text that selects it again) and whether it honoured
 * the instance forced for "conv" or the table's entry (kernel.c; decides without building). */
ck_status ck_conv_plan_choice(ck_context *ctx, const ck_conv_problem *problem, char *name,
                              size_t size, int *tuned);

/* ---- the direct depthwise route (policy.c: the instance; depthwise.c: the kernel) ------- */

/* The direct kernel's geometry and instance (dw_pipeline_kernel.h's #defines). It gathers from
 * `src` (forward and backward weight: X; backward data: dY) for the positions o < dst of the
 * written tensor (Y, dY; backward data: the rows of one residue class of dX): position o reads
 * o * str + k * dil - pl of src with kernel tap k < fil, which is the filter's tap
 * f0 + k * ft (flip: f0 + (fil - 1 - k) * ft), and is stored at doff + o * dstr of the written
 * tensor's lengths outl. Forward: the problem's geometry (f0 0, ft 1, dstr 1, doff 0);
 * backward data: one class of conv's (ck_conv_classes), as a forward convolution of dY. */
typedef struct ck_conv_dw {
    int64_t src[3], dst[3], str[3], dil[3], pl[3], fil[3], f0[3], ft[3];
    int64_t outl[3], dstr[3], doff[3];
    int flip;
    int vec;        /* channels per thread (one access of up to 16 bytes) */
    int vec_set;    /* 1: vec chosen by a tuned text or CK_CONV_DW_VEC, not the widest */
    int tct;        /* threads along the channels: a block covers tct * vec channels */
    int tr;         /* strips of outputs per block */
    int strip;      /* outputs per strip along the innermost spatial dim */
    int threads;    /* tct * tr */
    int min_blocks; /* the launch bounds' blocks per SM (0: the compiler's choice) */
    size_t smem;    /* the block's filter taps as f32 */
    unsigned grid_x, grid_y, grid_z;
    int lane_blocks;      /* backward weight: partial sums per channel and tap */
    unsigned sum_blocks;  /* backward weight: blocks of the fixed-order sum (256 threads) */
    size_t ws_bytes;      /* backward weight: the partials (f32), owned by the plan */
    char why[384];        /* the route and instance, and why */
    int tuned;            /* 1: strip and lane blocks from a tuned text */
    ck_kernel *kernel[2]; /* the kernel; backward weight: the partials, their sum */
} ck_conv_dw;

/* Why the direct depthwise route cannot take the problem (0: it can; *why then empty). */
int ck_conv_dw_refuses(const ck_conv_prob *q, char *why, size_t size);

/* 1 when the direct route can take the problem, whatever CK_CONV_ROUTE says (the tuner). */
int ck_conv_dw_fits(const ck_conv_prob *q);

/* Parse a tuned text "depthwise:sS" (backward weight: "depthwise:sS.bB"), either followed by
 * ".vV" (V channels per thread instead of the widest vector; *vec 0 without): 1 when valid. */
int ck_conv_dw_parse(const char *text, int wgrad, int *strip, int *lane_blocks, int *vec);

/* Channels per thread of the widest vector: up to 16 bytes of the input type, dividing G. */
int ck_conv_dw_widest_vec(const ck_conv_prob *q);

/* The tuned text of an instance (selects it again). */
void ck_conv_dw_name(const ck_conv_prob *q, const ck_conv_dw *dw, char *buf, size_t size);

/* The route's instance for the problem (after ck_conv_dw_refuses said 0) -- backward data: for
 * class cls, one with rows and taps --: the policy's vector, threads and strip,
 * CK_CONV_DW_STRIP=n (1..16) in the environment overriding the strip; a tuned text (not NULL:
 * ck_conv_dw_parse's form) sets the strip, backward weight's lane blocks and the vector instead
 * of the policy and the switches (CK_CONV_DW_VEC=v: v channels per thread). */
ck_status ck_conv_dw_policy(const ck_conv_prob *q, const ck_conv_class *cls, const char *tuned,
                            ck_conv_dw *dw);

/* The kernel source of the instance (malloc'd). */
ck_status ck_conv_dw_source(const ck_conv_prob *q, const ck_conv_dw *dw, char **source);

/* Build (or find in the context's cache) the instance's kernels into dw->kernel: [0] the
 * convolution (backward weight: the partials), [1] backward weight's fixed-order sum (NULL for
 * the other directions). */
ck_status ck_conv_dw_kernels(ck_context *ctx, const ck_conv_prob *q, ck_conv_dw *dw);

/* Launch: x, w, y as ck_conv_args (CK's layouts), pointers already checked; ws: backward
 * weight's partials (dw->ws_bytes of device memory). */
ck_status ck_conv_dw_launch(ck_context *ctx, const ck_conv_prob *q, const ck_conv_dw *dw, float *ws,
                            const ck_conv_args *args);

/* ---- kernel.c: the plan; source.c: its kernels' sources ------------------------------------- */

/* One implicit GEMM of the plan: forward and backward weight have one; backward data one per
 * class of input residues (cls) that has both rows and taps. */
typedef struct ck_conv_sub {
    ck_gemm_plan g; /* the GEMM's plan record: problem, instance, kernel, launch */
    ck_conv_class cls;
    ck_conv_choice choice; /* the policy's route, instance and reasons */
} ck_conv_sub;

struct ck_conv_plan {
    ck_context *ctx;
    ck_conv_prob q;
    int loaders;   /* bit 0: A through a view's copy window, bit 1: B */
    int zero_fill; /* backward data: some rows of dX receive no tap (zeroed first) */
    int nsub;
    ck_conv_sub *sub;
    int direct;     /* the direct depthwise route (no sub-GEMM) */
    int ndw;        /* its instances: one; backward data: one per residue class with taps */
    ck_conv_dw *dw; /* their geometry, instance, reason and kernels */
    float *dw_ws;   /* backward weight: the partials (device memory, the plan's) */
};

/* What ck_conv_build_source builds: one implicit GEMM of a plan. */
typedef struct ck_conv_build {
    const ck_conv_plan *plan;
    const ck_conv_sub *sub;
} ck_conv_build;

/* The kernel source of b's implicit GEMM (a ck_op_kernel builder; user: a ck_conv_build). */
ck_status ck_conv_build_source(void *user, char **source);

/* The GEMM route: the GEMM's own key (its kernel is the GEMM's); the others
 * "conv/<dir>/<every derived length>/<route>/<the GEMM's parameter key>" (malloc'd). */
char *ck_conv_kernel_key(const ck_conv_plan *plan, const ck_conv_sub *sub);

/* "fwd", "bwd_data", "bwd_weight". */
const char *ck_conv_dir_tag(ck_conv_direction d);

/* The copy window of operand `operand` (0 A, 1 B) of an instance of family 80 (its block's
 * threads) or 90 (the producer warpgroup's 128 threads; B into the MN-major box tile), named
 * "va" / "vb". */
ck_status ck_conv_window_source(const ck_conv_prob *q, const ck_conv_class *c,
                                const ck_gemm_instance *in, int operand, char **src,
                                ck_tile_copy_info *info);
/* The implicit GEMM of class cls (backward data; else unused) as a GEMM problem with view
 * operands (loader) and, for ck_conv_is_plain_gemm problems, as a plain GEMM (plain). */
ck_status ck_conv_gemm_probs(const ck_conv_prob *q, const ck_conv_class *cls, ck_gemm_prob *loader,
                             ck_gemm_prob *plain);

/* 1 when every view operand of the direction has a copy window for this sm80 instance. */
int ck_conv_windows_exist(const ck_conv_prob *q, const ck_conv_class *c,
                          const ck_gemm_instance *in);

/* ck_conv_plan_create with `pick` (CK_CONV_PICK_*) in place of the policy's choice. */
ck_status ck_conv_plan_create_ex(ck_context *ctx, const ck_conv_problem *problem, int pick,
                                 ck_conv_plan **plan);

/* The kernel source a plan would build for a device with these properties (the NVRTC test:
 * no device needed), for its first implicit GEMM. *source: malloc'd. */
ck_status ck_conv_source(const ck_conv_problem *problem, const ck_device_props *props, int pick,
                         char **source);

/* The route of the plan's first implicit GEMM (tests). */
ck_conv_route ck_conv_plan_route(const ck_conv_plan *plan);
/* The plan's checked problem and context (layout.c). */
const ck_conv_prob *ck_conv_plan_prob(const ck_conv_plan *plan);
ck_context *ck_conv_plan_context(const ck_conv_plan *plan);

/* ck_conv_plan_execute on tensors in CK's layouts, whatever the problem's layout (kernel.c);
 * ck_conv_plan_execute (layout.c) calls it directly or between the permutes of NCHW. */
ck_status ck_conv_execute_ck_layout(ck_conv_plan *plan, const ck_conv_args *args);

/* Shared-memory tile descriptors of the GEMM's sm80 stages (gemm_swz of
 * sm80_pipeline_kernel.h): `lines` lines of line_bytes with elements of es bytes; dims
 * (line, element in line). */
ck_status ck_conv_smem_lines(int lines, int line_bytes, int es, ck_descriptor **out);

/* The sm90 pipeline's MN-major operand tile as a descriptor: `boxes` boxes of `lines` lines of
 * 128 bytes (64 16-bit elements of M or N per line, one line per k), 16-byte chunks XORed with
 * line % 8 (TMA's 128-byte swizzle); dims (k, mn). */
ck_status ck_conv_smem_boxes(int lines, int boxes, int es, ck_descriptor **out);

#endif
