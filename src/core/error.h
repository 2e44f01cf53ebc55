/*
 * Internal error and logging helpers. Library code reports failures with
 * ck_fail() (which records the per-thread sentence and returns the status)
 * and writes diagnostics only through CK_LOG.
 */
#ifndef CK_SRC_CORE_ERROR_H
#define CK_SRC_CORE_ERROR_H

#include "ck/status.h"

#if defined(__GNUC__) || defined(__clang__)
#define CK_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define CK_PRINTF_LIKE(f, a)
#endif

/* Record `status` with a printf-formatted sentence as the calling thread's
 * last error, log it at debug level, and return `status`. */
ck_status ck_fail(ck_status status, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);

/* Append context in front of the current last error: "ctx: <previous>".
 * Returns `status` unchanged. Used to name the stage/operation that failed. */
ck_status ck_fail_context(ck_status status, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);

/* Write one log line if `level` is enabled. */
void ck_log_write(ck_log_level level, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);

#define CK_LOG(level, ...)                                                                         \
    do {                                                                                           \
        if (ck_get_log_level() >= (level))                                                         \
            ck_log_write((level), __VA_ARGS__);                                                    \
    } while (0)

/* Return CK_ERROR_INVALID_ARGUMENT naming the function and argument when p is NULL. */
#define CK_REQUIRE_NOT_NULL(p, func)                                                               \
    do {                                                                                           \
        if ((p) == NULL)                                                                           \
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,                                              \
                           "%s: argument '%s' is NULL; a valid pointer is required.", (func), #p); \
    } while (0)

#endif
