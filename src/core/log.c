/* Logging: off unless CK_LOG or ck_set_log_level() enables it; stderr or a user sink. */
#include "error.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LEVEL_UNSET (-1)

static atomic_int log_level = LEVEL_UNSET;
static _Atomic(ck_log_sink) log_sink;
static _Atomic(void *) log_sink_user;

static const char *const level_names[] = {"off", "error", "warn", "info", "debug"};

ck_status ck_log_level_from_string(const char *name, ck_log_level *level)
{
    CK_REQUIRE_NOT_NULL(name, "ck_log_level_from_string");
    CK_REQUIRE_NOT_NULL(level, "ck_log_level_from_string");
    for (int i = 0; i <= CK_LOG_DEBUG; ++i) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *level = (ck_log_level)i;
            return CK_SUCCESS;
        }
    }
    if (strcasecmp(name, "warning") == 0) {
        *level = CK_LOG_WARN;
        return CK_SUCCESS;
    }
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "ck_log_level_from_string: log level '%s' is not known; accepted levels are "
                   "off, error, warn, info and debug.",
                   name);
}

ck_log_level ck_get_log_level(void)
{
    int lv = atomic_load_explicit(&log_level, memory_order_relaxed);
    if (lv != LEVEL_UNSET)
        return (ck_log_level)lv;
    ck_log_level parsed = CK_LOG_OFF;
    const char *env = getenv("CK_LOG");
    int bad = 0;
    if (env && *env) {
        /* Parse without touching the thread's last error. */
        bad = 1;
        for (int i = 0; i <= CK_LOG_DEBUG; ++i)
            if (strcasecmp(env, level_names[i]) == 0) {
                parsed = (ck_log_level)i;
                bad = 0;
            }
        if (bad && strcasecmp(env, "warning") == 0) {
            parsed = CK_LOG_WARN;
            bad = 0;
        }
        if (bad)
            parsed = CK_LOG_WARN;
    }
    int expected = LEVEL_UNSET;
    if (atomic_compare_exchange_strong(&log_level, &expected, (int)parsed) && bad)
        ck_log_write(CK_LOG_WARN,
                     "CK_LOG='%s' is not a log level (off, error, warn, info, debug); using warn.",
                     env);
    return (ck_log_level)atomic_load(&log_level);
}

void ck_set_log_level(ck_log_level level)
{
    if ((int)level < CK_LOG_OFF)
        level = CK_LOG_OFF;
    if (level > CK_LOG_DEBUG)
        level = CK_LOG_DEBUG;
    atomic_store(&log_level, (int)level);
}

void ck_set_log_sink(ck_log_sink sink, void *user)
{
    atomic_store(&log_sink_user, user);
    atomic_store(&log_sink, sink);
}

void ck_log_write(ck_log_level level, const char *fmt, ...)
{
    if (level <= CK_LOG_OFF || level > ck_get_log_level())
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ck_log_sink sink = atomic_load(&log_sink);
    if (sink) {
        sink(level, line, atomic_load(&log_sink_user));
        return;
    }
    fprintf(stderr, "[ck %s] %s\n", level_names[level], line);
}
