/*
 * Kernel signatures found in a kernel source: every `CK_KERNEL void name(params)` outside
 * comments, strings and preprocessor lines. Used to check launch arguments on both backends and
 * to generate the emulator's entry points (a packed-argument struct and a trampoline per kernel).
 */
#ifndef CK_SRC_RT_KERNEL_SIG_H
#define CK_SRC_RT_KERNEL_SIG_H

#include <stddef.h>

#include "ck/status.h"

enum { CK_SIG_MAX_PARAMS = 64, CK_SIG_NAME_MAX = 128, CK_SIG_PARAM_MAX = 256 };

typedef struct ck_kernel_sig {
    char name[CK_SIG_NAME_MAX];
    int param_count;
    char params[CK_SIG_MAX_PARAMS][CK_SIG_PARAM_MAX];     /* declarations, e.g. "const float *x" */
    char param_names[CK_SIG_MAX_PARAMS][CK_SIG_NAME_MAX]; /* e.g. "x" */
} ck_kernel_sig;

/* Parse every kernel of `source`. *sigs (malloc'd, caller frees) receives *count entries.
 * CK_ERROR_PARSE with a sentence naming the kernel when a declaration cannot be understood. */
ck_status ck_kernel_sigs_parse(const char *source, ck_kernel_sig **sigs, int *count);

/* The emulator's translation unit: `source` followed by, for each kernel, a packed-argument
 * struct, a layout table `ck_emu_layout_<name>` ({count, struct size, struct alignment, then
 * offset and size of each parameter}) and a trampoline `ck_emu_run_<name>(const void *)`.
 * Returns a malloc'd string (caller frees) or NULL with CK_ERROR_OUT_OF_MEMORY recorded. */
char *ck_kernel_emu_unit(const char *source, const ck_kernel_sig *sigs, int count);

#endif
