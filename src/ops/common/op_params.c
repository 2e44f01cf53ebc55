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

int ck_op_params_key(const char *op, const ck_op_param *t, int n, int strip, char *key, size_t size)
{
    size_t len = 0;
    int k = snprintf(key, size, "%s", op);
    if (k < 0 || (size_t)k >= size)
        return -1;
    len = (size_t)k;
    for (int i = 0; i < n; ++i) {
        const char *name = strlen(t[i].name) > (size_t)strip ? t[i].name + strip : t[i].name;
        k = snprintf(key + len, size - len, "/%s=%lld", name, t[i].value);
        if (k < 0 || (size_t)k >= size - len)
            return -1;
        len += (size_t)k;
    }
    return 0;
}
