/*
 * An operation's tile windows (issue 19, "windows, not hand-made indexing"): the policy gives a
 * descriptor (the textual form of `ck desc`, over run-time symbols such as the row count and
 * the row stride) and a distribution; this generates the window functions (ck/tile_kernel.h:
 * load_<name>, store_<name>, ck_win_<name>, ...) into the op's kernel source, with a storage
 * typedef and a constructor that takes the op's own arguments, so that a pipeline stage calls
 * the window without knowing which symbols the generator kept. Used by the layernorm / RMSNorm
 * forward (src/ops/norm/window.c) and softmax (src/ops/softmax/window.c); reduce and permute
 * are still indexed by hand (issue 19).
 * Not installed.
 */
#ifndef CK_SRC_OPS_COMMON_OP_WINDOW_H
#define CK_SRC_OPS_COMMON_OP_WINDOW_H

#include <stdint.h>

#include "ck/tile_kernel.h"
#include "gen/sbuf.h"

/* A run-time symbol of a window's descriptor: range [lo, hi], a multiple of div. */
typedef struct ck_op_sym {
    const char *name;
    int64_t lo, hi, div;
} ck_op_sym;

enum { CK_OP_WINDOW_MAX_SYMS = 8 };

/* One window: the spec handed to the generator and what it owns. Fill spec's name, dtype,
 * ops, fill, read_only and origin_align and the encoding enc; ck_op_window_desc sets the
 * descriptor. */
typedef struct ck_op_window {
    ck_tile_window_spec spec;
    ck_dist_encoding enc;
    ck_expr_arena *ctx;
    ck_descriptor *desc;
} ck_op_window;

/* Zero w (name, dtype, ops: load) and its encoding. */
void ck_op_window_init(ck_op_window *w, const char *name, ck_dtype dtype, unsigned ops);

/* The descriptor of w from its textual form (`ck desc --help`) with the symbols declared first
 * (their ranges and divisors are what the generator proves masks and vectors with); spec.desc,
 * spec.ctx and spec.enc point at w's. Release with ck_op_window_free (also after a failure). */
ck_status ck_op_window_desc(ck_op_window *w, const char *text, const ck_op_sym *syms, int nsyms);
void ck_op_window_free(ck_op_window *w);

/* Append to b the window's device C (ck_tile_window_generate), then
 *   typedef <storage type> <prefix>_win_<name>_t;
 *   ck_win_<name> <prefix>_win_<name>_at(const void *p, long long <param>, ...)
 * whose parameters are given as "member=param" (member: an origin o<i> or a symbol of the
 * descriptor), in this order; origins not named are 0, and a symbol the generator folded away
 * (not a member of ck_win_<name>) is ignored. */
ck_status ck_op_window_emit(ck_sbuf *b, const char *prefix, const ck_op_window *w,
                            const char *const *args, int nargs);

#endif
