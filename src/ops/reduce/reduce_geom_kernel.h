/*
 * The problem of one ck_reduce launch, passed by value to every reduce kernel and filled by the
 * host (src/ops/reduce/kernel.c). Plain C shared by the host library and the device code: only
 * long long and double fields, so both sides agree on the layout.
 *
 * The reduction is canonical: kept dimensions k = 0..RD_KD-1 (outer to inner; the output's
 * linear index "row" is row-major over their lengths) and reduced dimensions r = 0..RD_RD-1
 * (row-major flat index = argmax's index). Strides in elements.
 */
#ifndef CK_OPS_REDUCE_GEOM_KERNEL_H
#define CK_OPS_REDUCE_GEOM_KERNEL_H

#define RD_MAXD 6

typedef struct rd_geom {
    long long kl[RD_MAXD];  /* kept lengths */
    long long kxs[RD_MAXD]; /* kept strides of x */
    long long kys[RD_MAXD]; /* kept strides of y */
    long long rl[RD_MAXD];  /* reduced lengths */
    long long rxs[RD_MAXD]; /* reduced strides of x */
    long long rows;         /* outputs (product of kl) */
    long long n;            /* reduced elements per output (product of rl) */
    long long seg;          /* split instances: elements (row) or reduced rows (column) per part */
    long long parts;        /* split parts per output (1: no workspace) */
    long long outer;        /* column instance: outputs / m (product of kl[0..KD-2]) */
    long long m;            /* column instance: length of the innermost kept dimension */
    long long col_blocks;   /* column instance: blocks along m */
    double scale;           /* post-op multiplier */
} rd_geom;

#endif
