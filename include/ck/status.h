/*
 * ck/status.h - status codes, per-thread error messages and logging control.
 *
 * Every public function of ck that can fail returns a ck_status. When it is
 * not CK_SUCCESS, ck_last_error() returns a full sentence for the calling
 * thread saying what was wrong, which argument and value, and what is
 * accepted. The library never prints unless logging is enabled with the
 * environment variable CK_LOG=error|warn|info|debug (to stderr) or with
 * ck_set_log_level().
 */
#ifndef CK_STATUS_H
#define CK_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_status {
    CK_SUCCESS = 0,
    CK_ERROR_INVALID_ARGUMENT,    /* an argument is null, out of range or inconsistent */
    CK_ERROR_UNSUPPORTED,         /* valid, but not supported by this operation/backend */
    CK_ERROR_OUT_OF_MEMORY,       /* host or device allocation failed */
    CK_ERROR_NOT_FOUND,           /* a named thing (type, device, file, entry) does not exist */
    CK_ERROR_BACKEND_UNAVAILABLE, /* CUDA driver/NVRTC/GPU or host compiler is absent */
    CK_ERROR_COMPILE,             /* a kernel source failed to compile */
    CK_ERROR_LAUNCH,              /* a kernel launch or execution failed */
    CK_ERROR_DEVICE,              /* any other error reported by the device driver */
    CK_ERROR_IO,                  /* a file or directory operation failed */
    CK_ERROR_OVERFLOW,            /* a size or offset does not fit its representation */
    CK_ERROR_PARSE,               /* a textual input could not be parsed */
    CK_ERROR_NOT_IMPLEMENTED,     /* a documented feature that this build does not provide yet */
    CK_ERROR_INTERNAL,            /* a bug in ck: please report it with the message */
    CK_STATUS_COUNT_              /* number of status codes; not a status */
} ck_status;

/* Short constant name of a status, e.g. "CK_ERROR_INVALID_ARGUMENT".
 * Never returns NULL; unknown values give "CK_STATUS_UNKNOWN". */
const char *ck_status_string(ck_status status);

/* The message of the last failing ck call on the calling thread: a full
 * sentence. "no error" when no call has failed since ck_clear_error().
 * The pointer is owned by ck and valid until the next ck call on the thread. */
const char *ck_last_error(void);

/* Status of the last failing ck call on the calling thread (CK_SUCCESS if none). */
ck_status ck_last_status(void);

/* Forget the calling thread's last error. */
void ck_clear_error(void);

typedef enum ck_log_level {
    CK_LOG_OFF = 0,
    CK_LOG_ERROR = 1,
    CK_LOG_WARN = 2,
    CK_LOG_INFO = 3,
    CK_LOG_DEBUG = 4
} ck_log_level;

/* Current log level. Initialised once from the environment variable CK_LOG
 * ("off", "error", "warn", "info", "debug"; unset means off). */
ck_log_level ck_get_log_level(void);

/* Override the log level for the whole process (thread-safe). */
void ck_set_log_level(ck_log_level level);

/* Parse a level name as CK_LOG accepts it. Returns CK_ERROR_INVALID_ARGUMENT
 * (with a sentence) for unknown names or null pointers. */
ck_status ck_log_level_from_string(const char *name, ck_log_level *level);

/* Optional log sink: when set, log lines go to it instead of stderr.
 * Pass NULL to restore stderr. The callback may be called from any thread. */
typedef void (*ck_log_sink)(ck_log_level level, const char *line, void *user);
void ck_set_log_sink(ck_log_sink sink, void *user);

#ifdef __cplusplus
}
#endif
#endif /* CK_STATUS_H */
