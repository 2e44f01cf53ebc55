/* Consumer of an installed ck: checks that headers, library and version agree. */
#include <stdio.h>
#include <string.h>

#include <ck/ck.h>

int main(void)
{
    if (strcmp(ck_version(), CK_VERSION_STRING) != 0) {
        fprintf(stderr, "header version %s, library version %s\n", CK_VERSION_STRING, ck_version());
        return 1;
    }
    if (ck_query_system(NULL) != CK_ERROR_INVALID_ARGUMENT)
        return 1;
    printf("consumer ok: ck %s (%s)\n", ck_version(), ck_last_error());
    return 0;
}
