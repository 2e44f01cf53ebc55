/* ck convert: encode values in a data type (hex code and the value they round to). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/types.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck convert [options] TYPE VALUE...\n\n"
    "Round each decimal VALUE (also nan, inf, -inf, hex floats) once to TYPE and print its\n"
    "code in hex and the value it represents (the exact decimal is rounded, however many\n"
    "digits it has; a hex float is read as f64 first, and sr rounds VALUE read as f64).\n"
    "TYPE is a name listed by 'ck types'\n"
    "(f16, bf16, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp6e2m3, fp4e2m1, i8, ...).\n\n"
    "  --round MODE    rne (default, nearest even), rtz (toward zero), rna (nearest, ties\n"
    "                  away), sr (stochastic, with --rand)\n"
    "  --sat           saturate: out-of-range values and Inf become +-max\n"
    "  --nonsat        overflow gives Inf where TYPE has it, else NaN, else +-max\n"
    "                  (default: --sat for fp8/fp6/fp4, --nonsat for the others)\n"
    "  --rand WORD     32-bit random word of stochastic rounding (default 0x80000000)\n"
    "  --decode        VALUEs are codes (e.g. 0x7e) to decode instead of values to encode\n"
    "  --json          one JSON object\n";

typedef struct row {
    const char *input;
    uint64_t code;
    double value;
    const char *note;
} row;

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        return 0;
    *out = v;
    return 1;
}

/* A decimal number's significant digits (no leading or trailing zeros) and its explicit
 * exponent (e-notation). Returns 0 when s is not a plain decimal. */
typedef struct decimal {
    int negative;
    char digits[1200];
    int n;
    long exp10;
} decimal;

static int parse_decimal(const char *s, decimal *d)
{
    memset(d, 0, sizeof *d);
    if (*s == '+' || *s == '-')
        d->negative = *s++ == '-';
    int any = 0, dots = 0;
    for (; (*s >= '0' && *s <= '9') || *s == '.'; ++s) {
        if (*s == '.') {
            if (dots++)
                return 0;
            continue;
        }
        any = 1;
        if (d->n == 0 && *s == '0')
            continue;
        if (d->n < (int)sizeof d->digits - 1)
            d->digits[d->n++] = *s;
        else if (*s != '0')
            d->digits[sizeof d->digits - 2] = '9'; /* past 1199 digits only "more" counts */
    }
    if (!any)
        return 0;
    if (*s == 'e' || *s == 'E') {
        char *end;
        errno = 0;
        long e = strtol(s + 1, &end, 10);
        if (end == s + 1 || *end || errno)
            return 0;
        if (e > 100000 || e < -100000)
            return 0;
        d->exp10 = e;
        s = end;
    }
    if (*s)
        return 0;
    while (d->n > 0 && d->digits[d->n - 1] == '0')
        --d->n;
    d->digits[d->n] = '\0';
    return 1;
}

/* Sign of (exact value of the decimal text s) - x, or 0 when equal or s is not a plain
 * decimal (hex floats, nan, inf are read exactly or not at all by strtod). x is a long double
 * so that a midpoint between two doubles can be compared (printed exactly by glibc). */
static int decimal_minus(const char *s, long double x)
{
    decimal d;
    if (!isfinite(x) || !parse_decimal(s, &d))
        return 0;
    long point = 0, seen_point = 0, first = -1, idx = 0;
    for (const char *p = s + (*s == '+' || *s == '-'); (*p >= '0' && *p <= '9') || *p == '.';
         ++p) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        if (!seen_point)
            ++point;
        if (first < 0 && *p != '0')
            first = idx;
        ++idx;
    }
    /* digits before the point and the index of the first significant one: the value is
     * 0.DIGITS x 10^dexp */
    long dexp = first < 0 ? 0 : point - first + d.exp10;
    char buf[1200];
    snprintf(buf, sizeof buf, "%.800Le", fabsl(x)); /* exact: glibc prints every digit */
    decimal b;
    memset(&b, 0, sizeof b);
    int bn = 0;
    for (const char *p = buf; *p && *p != 'e'; ++p)
        if (*p >= '0' && *p <= '9')
            b.digits[bn++] = *p;
    while (bn > 0 && b.digits[bn - 1] == '0')
        --bn;
    long bexp = strtol(strchr(buf, 'e') + 1, NULL, 10) + 1;
    int dzero = d.n == 0, bzero = x == 0;
    int dsign = dzero ? 0 : d.negative ? -1 : 1, xsign = bzero ? 0 : x < 0 ? -1 : 1;
    if (dsign != xsign)
        return dsign > xsign ? 1 : -1;
    if (dzero)
        return 0;
    int mag; /* sign of |D| - |x| */
    if (dexp != bexp) {
        mag = dexp > bexp ? 1 : -1;
    } else {
        mag = 0;
        for (int i = 0; !mag && (i < d.n || i < bn); ++i) {
            char c1 = i < d.n ? d.digits[i] : '0', c2 = i < bn ? b.digits[i] : '0';
            mag = c1 > c2 ? 1 : c1 < c2 ? -1 : 0;
        }
    }
    return xsign * mag;
}

/* strtod rounded the decimal to x; rounding x again to `type` can differ from rounding the
 * decimal once where x lies exactly on a point where the rounding jumps (a value for rtz, a
 * midpoint for rne/rna). The exact decimal then lies strictly between x and its f64 neighbour
 * toward it, where no jump of a type narrower than f64 can lie: round that neighbour instead. */
static double once_rounded_input(ck_dtype type, const char *s, double x, int side,
                                 ck_round_mode round, ck_overflow_mode overflow)
{
    const ck_dtype_info *t = ck_dtype_get(type);
    if (!side || !t || round == CK_ROUND_STOCHASTIC)
        return x;
    if (t->storage_bits >= 64) {
        /* f64: strtod rounded to nearest even, right for rne. rtz wants the neighbour toward
         * zero where the decimal's magnitude is below |x|; rna the neighbour away from zero
         * where the decimal is exactly the midpoint (strtod chose the even one). */
        double y = nextafter(x, side > 0 ? INFINITY : -INFINITY);
        if (round == CK_ROUND_TOWARD_ZERO)
            return x != 0 && (side > 0) != (x > 0) ? y : x;
#if LDBL_MANT_DIG >= 64
        if (round == CK_ROUND_NEAREST_AWAY && isfinite(y) && fabs(y) > fabs(x) &&
            decimal_minus(s, ((long double)x + (long double)y) / 2) == 0)
            return y;
#endif
        return x;
    }
    uint64_t c;
    double lo = NAN, hi = NAN;
    if (ck_convert_from_f64(type, x, CK_ROUND_TOWARD_ZERO, overflow, 0, &c) == CK_SUCCESS)
        ck_convert_to_f64(type, c, &lo);
    if (ck_convert_from_f64(type, x, CK_ROUND_NEAREST_AWAY, overflow, 0, &c) == CK_SUCCESS)
        ck_convert_to_f64(type, c, &hi);
    int jump = round == CK_ROUND_TOWARD_ZERO ? lo == x : lo != hi && x == lo + (hi - lo) / 2;
    return jump ? nextafter(x, side > 0 ? INFINITY : -INFINITY) : x;
}

/* in: the value as strtod read it; inexact: the text's exact value is not in; overflowed: a
 * finite number beyond the f64 range (in is then an infinity). */
static const char *classify(const ck_dtype_info *t, double in, int inexact, int overflowed,
                            double out)
{
    if (isnan(out))
        return isnan(in) ? "nan" : "overflow to nan";
    if (isinf(out))
        return isinf(in) && !overflowed ? "inf" : "overflow to inf";
    if (isnan(in))
        return "nan has no encoding";
    if (in == out && !inexact)
        return "exact";
    /* beyond max by more than half the top ulp (integers: 0.5) */
    double half_ulp = 0.5;
    if (t->is_float) {
        double prev = 0.0;
        ck_convert_to_f64(t->dtype, t->max_code - (t->dtype == CK_DTYPE_TF32 ? 0x2000u : 1u),
                          &prev);
        half_ulp = (t->max_finite - prev) / 2;
    }
    if (isinf(in) || in > t->max_finite + half_ulp || in < t->lowest - half_ulp)
        return "saturated";
    if (out == 0.0)
        return "underflow to zero";
    return "rounded";
}

int ck_cmd_convert(int argc, char **argv)
{
    ck_round_mode round = CK_ROUND_NEAREST_EVEN;
    ck_overflow_mode overflow = CK_OVERFLOW_DEFAULT;
    uint64_t rand_word = 0x80000000u;
    int json = 0, decode = 0, first = -1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (first < 0 && cli_is_help(a)) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        } else if (first < 0 && strcmp(a, "--round") == 0) {
            if (++i >= argc)
                return cli_usage_error("convert", "--round needs a mode (rne, rtz, rna, sr)");
            if (ck_round_mode_from_name(argv[i], &round) != CK_SUCCESS)
                return cli_usage_error("convert", "%s", ck_last_error());
        } else if (first < 0 && strcmp(a, "--sat") == 0) {
            overflow = CK_OVERFLOW_SATURATE;
        } else if (first < 0 && strcmp(a, "--nonsat") == 0) {
            overflow = CK_OVERFLOW_NONSATURATE;
        } else if (first < 0 && strcmp(a, "--rand") == 0) {
            if (++i >= argc || !parse_u64(argv[i], &rand_word) || rand_word > 0xFFFFFFFFu)
                return cli_usage_error("convert", "--rand needs a 32-bit unsigned word");
        } else if (first < 0 && strcmp(a, "--decode") == 0) {
            decode = 1;
        } else if (first < 0 && strcmp(a, "--json") == 0) {
            json = 1;
        } else if (first < 0 && a[0] == '-' && a[1] == '-') {
            return cli_usage_error("convert", "unknown option '%s'", a);
        } else if (first < 0) {
            first = i;
        }
    }
    if (first < 0 || first + 1 >= argc)
        return cli_usage_error("convert", "expected a TYPE and at least one VALUE");
    ck_dtype dtype;
    if (ck_dtype_from_name(argv[first], &dtype) != CK_SUCCESS)
        return cli_usage_error("convert", "%s", ck_last_error());
    const ck_dtype_info *t = ck_dtype_get(dtype);
    int n = argc - first - 1;
    row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "ck convert: out of memory\n");
        return CK_EXIT_FAILURE;
    }
    for (int k = 0; k < n; ++k) {
        const char *s = argv[first + 1 + k];
        row *r = &rows[k];
        r->input = s;
        ck_status st;
        if (decode) {
            if (!parse_u64(s, &r->code)) {
                free(rows);
                return cli_usage_error("convert", "'%s' is not a code (e.g. 0x7e or 126)", s);
            }
            st = ck_convert_to_f64(dtype, r->code, &r->value);
            r->note = "decoded";
        } else {
            char *end;
            errno = 0;
            double x = strtod(s, &end);
            int range = errno == ERANGE;
            if (end == s || *end) {
                free(rows);
                return cli_usage_error("convert", "'%s' is not a number", s);
            }
            /* plain decimals are compared exactly with what strtod read; a hex float is
             * inexact only where strtod reports a range error */
            decimal dec;
            int plain = parse_decimal(s, &dec);
            int side = plain && isfinite(x) ? decimal_minus(s, x) : 0;
            int overflowed = isinf(x) && (plain || range);
            int inexact = side != 0 || (!plain && range);
            if (overflowed && round == CK_ROUND_TOWARD_ZERO)
                x = copysign(DBL_MAX, x); /* rtz never leaves the finite range */
            double once = once_rounded_input(dtype, s, x, side, round, overflow);
            st = ck_convert_from_f64(dtype, once, round, overflow, (uint32_t)rand_word, &r->code);
            if (st == CK_SUCCESS)
                st = ck_convert_to_f64(dtype, r->code, &r->value);
            r->note = classify(t, overflowed ? copysign(INFINITY, x) : x, inexact, overflowed,
                               r->value);
        }
        if (st != CK_SUCCESS) {
            free(rows);
            return cli_library_error("convert");
        }
    }
    int hexw = (t->storage_bits + 3) / 4;
    int prec = dtype == CK_DTYPE_F64 ? 17 : 9;
    if (json) {
        printf("{\"type\":");
        cli_json_string(stdout, t->name);
        printf(",\"round\":\"%s\",\"overflow\":\"%s\",\"results\":[", ck_round_mode_name(round),
               ck_overflow_mode_name(overflow == CK_OVERFLOW_DEFAULT ? t->default_overflow
                                                                     : overflow));
        for (int k = 0; k < n; ++k) {
            printf("%s{\"input\":", k ? "," : "");
            cli_json_string(stdout, rows[k].input);
            char value[64];
            if (isnan(rows[k].value) || isinf(rows[k].value))
                snprintf(value, sizeof value, "\"%s\"",
                         isnan(rows[k].value) ? "nan"
                         : rows[k].value > 0  ? "inf"
                                              : "-inf");
            else
                snprintf(value, sizeof value, "%.*g", prec, rows[k].value);
            printf(",\"code\":\"0x%0*llx\",\"value\":%s,\"note\":\"%s\"}", hexw,
                   (unsigned long long)rows[k].code, value, rows[k].note);
        }
        printf("]}\n");
    } else {
        printf("%s (%s), round %s, overflow %s\n", t->name, t->description,
               ck_round_mode_name(round),
               ck_overflow_mode_name(overflow == CK_OVERFLOW_DEFAULT ? t->default_overflow
                                                                     : overflow));
        for (int k = 0; k < n; ++k)
            printf("%-16s -> 0x%0*llx = %-16.*g (%s)\n", rows[k].input, hexw,
                   (unsigned long long)rows[k].code, prec, rows[k].value, rows[k].note);
    }
    free(rows);
    return CK_EXIT_OK;
}
