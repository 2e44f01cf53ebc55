/* Shared helpers of the ck command. */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

#include "ck/status.h"

int cli_is_help(const char *arg)
{
    return arg && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0);
}

int cli_usage_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ck %s: ", sub);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'ck %s --help' for usage.\n", sub);
    return CK_EXIT_USAGE;
}

int cli_library_error(const char *sub)
{
    fprintf(stderr, "ck %s: %s (%s)\n", sub, ck_last_error(), ck_status_string(ck_last_status()));
    return CK_EXIT_FAILURE;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}
