/*
 * ck/tuning.h - the on-disk tuning table. `ck tune OP ...` times the candidate instances of a
 * problem and stores the fastest here, keyed by operation, device and problem; the operation's
 * policy then picks that instance for the same problem on the same device (a plan made with an
 * explicit instance ignores the table).
 *
 * The table is one text file, $CK_TUNING_FILE or <ck_cache_dir()>/tuning.tsv: a header line,
 * then one tab-separated line per entry (op, device, problem, instance, ms, metric, unix time).
 * Updates take an exclusive lock and replace the file atomically, so concurrent processes never
 * corrupt it; lines that do not parse are ignored (logged at warn level) and dropped by the
 * next update.
 */
#ifndef CK_TUNING_H
#define CK_TUNING_H

#include <stddef.h>

#include "ck/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CK_TUNING_OP_MAX = 32,
    CK_TUNING_DEVICE_MAX = 128,
    CK_TUNING_PROBLEM_MAX = 256,
    CK_TUNING_INSTANCE_MAX = 96
};

typedef struct ck_tuning_entry {
    char op[CK_TUNING_OP_MAX];             /* "gemm" */
    char device[CK_TUNING_DEVICE_MAX];     /* device name and target, e.g. "NVIDIA H100 80GB
                                              HBM3/sm_90a" */
    char problem[CK_TUNING_PROBLEM_MAX];   /* the op's problem key */
    char instance[CK_TUNING_INSTANCE_MAX]; /* the op's instance name */
    double ms;                             /* measured median time */
    double metric;                         /* the op's figure of merit (TFLOP/s for GEMM) */
    long long time;                        /* when it was stored (seconds since the epoch) */
} ck_tuning_entry;

/* The table's path ($CK_TUNING_FILE, else tuning.tsv in the kernel cache directory). */
ck_status ck_tuning_path(char *path, size_t size);

/* Look up (op, device, problem). *found is 1 and *out filled when present, else 0 (a missing
 * or unreadable table is "not found", not an error). */
ck_status ck_tuning_lookup(const char *op, const char *device, const char *problem,
                           ck_tuning_entry *out, int *found);

/* Insert or replace the entry with the same (op, device, problem). Fields must be non-empty
 * and hold no tab or newline (CK_ERROR_INVALID_ARGUMENT naming the field). Creates the
 * directory and the file as needed (CK_ERROR_IO with the reason otherwise). */
ck_status ck_tuning_store(const ck_tuning_entry *entry);

/* Every valid entry; *entries is malloc'd (free with free()), NULL when there are none. */
ck_status ck_tuning_list(ck_tuning_entry **entries, int *count);

/* Delete the entries of `op` (NULL: all); *removed (may be NULL) receives how many. */
ck_status ck_tuning_clear(const char *op, int *removed);

#ifdef __cplusplus
}
#endif
#endif /* CK_TUNING_H */
