/* The operations' parameter tables (op_params.h): one list, printed as defines and as the key. */
#include <stdio.h>
#include <string.h>

#include "gen/sbuf.h"
#include "ops/common/op_params.h"

static void add(ck_op_param *t, int *n, const char *name, long long value, int ll)
{
    if (*n >= CK_OP_MAX_PARAMS)
        return; /* a programming error the tests catch: the key and the source lack it alike */
    t[*n].name = name;
    t[*n].value = value;
    t[*n].ll = ll;
    ++*n;
}

void ck_op_param_add(ck_op_param *t, int *n, const char *name, long long value)
{
    add(t, n, name, value, 0);
}

void ck_op_param_add_ll(ck_op_param *t, int *n, const char *name, long long value)
{
    add(t, n, name, value, 1);
}

char *ck_op_params_defines(const ck_op_param *t, int n)
{
    ck_sbuf b = {0};
    for (int i = 0; i < n; ++i)
        ck_sbuf_printf(&b, "#define %s %lld%s\n", t[i].name, t[i].value, t[i].ll ? "LL" : "");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s ? b.s : calloc(1, 1);
}

/* Append the text [s, s + n) at *len; 0, or -1 when it does not fit (with its terminator). */
static int put(char *key, size_t size, size_t *len, const char *s, size_t n)
{
    if (n >= size - *len)
        return -1;
    memcpy(key + *len, s, n);
    *len += n;
    key[*len] = '\0';
    return 0;
}

/* The key is built on every call of an operation (it finds the cached kernel), so by hand:
 * snprintf took most of a one-call operation's host time. */
int ck_op_params_key(const char *op, const ck_op_param *t, int n, int strip, char *key, size_t size)
{
    size_t len = 0;
    if (size == 0 || put(key, size, &len, op, strlen(op)))
        return -1;
    for (int i = 0; i < n; ++i) {
        size_t nl = strlen(t[i].name);
        const char *name = nl > (size_t)strip ? t[i].name + strip : t[i].name;
        char num[24], *d = num + sizeof num;
        unsigned long long v = t[i].value < 0 ? 0ull - (unsigned long long)t[i].value
                                              : (unsigned long long)t[i].value;
        do
            *--d = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        if (t[i].value < 0)
            *--d = '-';
        if (put(key, size, &len, "/", 1) || put(key, size, &len, name, strlen(name)) ||
            put(key, size, &len, "=", 1) ||
            put(key, size, &len, d, (size_t)(num + sizeof num - d)))
            return -1;
    }
    return 0;
}
