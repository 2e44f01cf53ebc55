/* Internal helpers shared by numeric.c and numeric_array.c. */
#ifndef CK_SRC_CORE_NUMERIC_INTERNAL_H
#define CK_SRC_CORE_NUMERIC_INTERNAL_H

#include <stdint.h>

#include "ck/types.h"

/* Validate dtype, rounding and overflow mode for `func`; on success *nc_overflow (if not
 * NULL) is CK_NC_SATURATE or CK_NC_NONSAT with CK_OVERFLOW_DEFAULT resolved for dtype. */
ck_status ck_numeric_check_modes(const char *func, ck_dtype dtype, ck_round_mode round,
                                 ck_overflow_mode overflow, int *nc_overflow);

/* Validate dtype and that `code` fits its storage bits. */
ck_status ck_numeric_check_code(const char *func, ck_dtype dtype, uint64_t code);

#endif
