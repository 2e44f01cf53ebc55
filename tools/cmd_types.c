/* ck types: the table of data types (text or JSON). */
#include <stdio.h>
#include <string.h>

#include "ck/types.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck types [--json]\n\n"
    "List every data type ck supports: short name (as accepted by 'ck convert' and the\n"
    "library), bits, exponent/mantissa bits, bias, largest finite value, smallest normal and\n"
    "subnormal values, epsilon, Inf/NaN support, and the overflow behaviour by default.\n"
    "tf32 is a compute mode stored as fp32. docs/types.md describes the formats.\n\n"
    "  --json   one JSON array of objects instead of a table\n";

static void print_json(void)
{
    printf("[");
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        const ck_dtype_info *t = ck_dtype_get((ck_dtype)i);
        printf("%s\n {\"name\":", i ? "," : "");
        cli_json_string(stdout, t->name);
        printf(",\"aliases\":[");
        const char *p = t->aliases;
        int first = 1;
        while (*p) {
            size_t len = strcspn(p, " ");
            if (len) {
                char word[64];
                snprintf(word, sizeof word, "%.*s", (int)len, p);
                printf("%s", first ? "" : ",");
                cli_json_string(stdout, word);
                first = 0;
            }
            p += len;
            p += strspn(p, " ");
        }
        printf("],\"description\":");
        cli_json_string(stdout, t->description);
        printf(",\"bits\":%d,\"storage_bits\":%d,\"pack_elements\":%d,\"pack_bytes\":%d,"
               "\"signed\":%s,\"float\":%s,\"compute_only\":%s,\"fnuz\":%s,"
               "\"exponent_bits\":%d,\"mantissa_bits\":%d,\"bias\":%d,"
               "\"has_inf\":%s,\"has_nan\":%s,\"has_negative_zero\":%s,"
               "\"max\":%.17g,\"lowest\":%.17g,\"min_normal\":%.17g,\"min_subnormal\":%.17g,"
               "\"epsilon\":%.17g,\"max_code\":\"0x%llx\",\"nan_code\":\"0x%llx\","
               "\"default_overflow\":\"%s\"}",
               t->bits, t->storage_bits, t->pack_elements, t->pack_bytes,
               t->is_signed ? "true" : "false", t->is_float ? "true" : "false",
               t->is_compute_only ? "true" : "false", t->is_fnuz ? "true" : "false",
               t->exponent_bits, t->mantissa_bits, t->bias, t->has_inf ? "true" : "false",
               t->has_nan ? "true" : "false", t->has_negative_zero ? "true" : "false",
               t->max_finite, t->lowest, t->min_normal, t->min_subnormal, t->epsilon,
               (unsigned long long)t->max_code, (unsigned long long)t->nan_code,
               ck_overflow_mode_name(t->default_overflow));
    }
    printf("\n]\n");
}

static void print_text(void)
{
    printf("%-12s %4s %4s %3s %3s %5s %13s %13s %13s %11s %3s %3s %-6s %s\n", "name", "bits",
           "sign", "exp", "man", "bias", "max", "min normal", "min subnorm", "epsilon", "inf",
           "nan", "ovf", "description");
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        const ck_dtype_info *t = ck_dtype_get((ck_dtype)i);
        printf("%-12s %4d %4s %3d %3d %5d %13.7g %13.7g %13.7g %11.5g %3s %3s %-6s %s\n", t->name,
               t->bits, t->is_signed ? "yes" : "no", t->exponent_bits, t->mantissa_bits, t->bias,
               t->max_finite, t->min_normal, t->min_subnormal, t->epsilon,
               t->has_inf ? "yes" : "no", t->has_nan ? "yes" : "no",
               ck_overflow_mode_name(t->default_overflow), t->description);
    }
    printf("\nPacked storage: fp4 2 per byte (element 2i in bits 0-3); fp6 4 per 3 bytes "
           "(element 4g+j in bits 6j..6j+5 of the little-endian 24-bit word).\n"
           "Aliases: ");
    for (int i = 0; i < CK_DTYPE_COUNT; ++i) {
        const ck_dtype_info *t = ck_dtype_get((ck_dtype)i);
        if (*t->aliases)
            printf("%s%s = %s", i ? "; " : "", t->name, t->aliases);
    }
    printf(".\n");
}

int ck_cmd_types(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else {
            return cli_usage_error("types", "unknown option '%s'", argv[i]);
        }
    }
    if (json)
        print_json();
    else
        print_text();
    return CK_EXIT_OK;
}
