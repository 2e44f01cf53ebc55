/* Per-thread error state and status names. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { CK_ERROR_MESSAGE_MAX = 2048 };

static _Thread_local char tls_message[CK_ERROR_MESSAGE_MAX];
static _Thread_local ck_status tls_status = CK_SUCCESS;

static const char *const status_names[CK_STATUS_COUNT_] = {
    [CK_SUCCESS] = "CK_SUCCESS",
    [CK_ERROR_INVALID_ARGUMENT] = "CK_ERROR_INVALID_ARGUMENT",
    [CK_ERROR_UNSUPPORTED] = "CK_ERROR_UNSUPPORTED",
    [CK_ERROR_OUT_OF_MEMORY] = "CK_ERROR_OUT_OF_MEMORY",
    [CK_ERROR_NOT_FOUND] = "CK_ERROR_NOT_FOUND",
    [CK_ERROR_BACKEND_UNAVAILABLE] = "CK_ERROR_BACKEND_UNAVAILABLE",
    [CK_ERROR_COMPILE] = "CK_ERROR_COMPILE",
    [CK_ERROR_LAUNCH] = "CK_ERROR_LAUNCH",
    [CK_ERROR_DEVICE] = "CK_ERROR_DEVICE",
    [CK_ERROR_IO] = "CK_ERROR_IO",
    [CK_ERROR_OVERFLOW] = "CK_ERROR_OVERFLOW",
    [CK_ERROR_PARSE] = "CK_ERROR_PARSE",
    [CK_ERROR_NOT_IMPLEMENTED] = "CK_ERROR_NOT_IMPLEMENTED",
    [CK_ERROR_INTERNAL] = "CK_ERROR_INTERNAL",
};

const char *ck_status_string(ck_status status)
{
    if ((int)status < 0 || status >= CK_STATUS_COUNT_)
        return "CK_STATUS_UNKNOWN";
    return status_names[status];
}

const char *ck_last_error(void)
{
    return tls_status == CK_SUCCESS ? "no error" : tls_message;
}

ck_status ck_last_status(void)
{
    return tls_status;
}

void ck_clear_error(void)
{
    tls_status = CK_SUCCESS;
    tls_message[0] = '\0';
}

ck_status ck_fail(ck_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    tls_status = status;
    CK_LOG(CK_LOG_DEBUG, "%s: %s", ck_status_string(status), tls_message);
    return status;
}

ck_status ck_fail_context(ck_status status, const char *fmt, ...)
{
    char prefix[512];
    char previous[CK_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(previous, tls_message, sizeof previous);
    if (tls_status == CK_SUCCESS)
        previous[0] = '\0';
    /* "prefix: previous", truncated to the buffer (built by hand: the pieces may be long). */
    size_t plen = strlen(prefix), rlen = strlen(previous), cap = sizeof tls_message - 1;
    if (plen > cap)
        plen = cap;
    memcpy(tls_message, prefix, plen);
    size_t used = plen;
    if (used + 2 <= cap) {
        memcpy(tls_message + used, ": ", 2);
        used += 2;
    }
    if (rlen > cap - used)
        rlen = cap - used;
    memcpy(tls_message + used, previous, rlen);
    tls_message[used + rlen] = '\0';
    tls_status = status;
    return status;
}
