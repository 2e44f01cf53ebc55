/*
 * `ck tune OP` for the operations without plans (softmax, layernorm, RMSNorm, ...): every
 * distinct instance among an op's candidate texts is forced in turn (ck_op_force_instance),
 * timed on the context's device, and the fastest is stored in the tuning table (ck/tuning.h)
 * under the device and the op's problem key, where the op's policy finds it (ck_op_tuned).
 * Not installed.
 */
#ifndef CK_SRC_OPS_COMMON_OP_TUNE_H
#define CK_SRC_OPS_COMMON_OP_TUNE_H

#include <stddef.h>

#include "ck/context.h"

typedef struct ck_op_tuner {
    const char *op;           /* the table's op name ("softmax") */
    const char *const *texts; /* candidate instance texts; "auto": the heuristic's choice */
    int count;
    /* with the forced instance in place: the instance the op would run (its text in the
     * table's form, which forced again selects the same instance; "" to skip a candidate not
     * worth timing) and the problem key */
    ck_status (*plan)(void *user, char *name, size_t name_size, char *problem, size_t problem_size);
    ck_status (*run)(void *user); /* one call of the op (queued on the context's stream) */
    double bytes;                 /* moved per call: the metric stored is GB/s */
    void *user;
} ck_op_tuner;

/* Progress: candidate i of n (its instance text), its median ms or -1 when it could not run. */
typedef void (*ck_op_tune_progress)(void *user, int i, int n, const char *instance, double ms);

/* Time every distinct candidate (reps runs after 2 warm-up runs, median) and store the
 * fastest; *best (best_size bytes) and *best_ms receive it. The forced instance is cleared on
 * return. */
ck_status ck_op_tune(ck_context *ctx, const ck_op_tuner *t, int reps, ck_op_tune_progress progress,
                     void *user, char *best, size_t best_size, double *best_ms);

#endif
