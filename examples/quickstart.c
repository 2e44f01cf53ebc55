/* Quick start: query what ck can use on this machine and see the error model. */
#include <stdio.h>

#include <ck/ck.h>

int main(void)
{
    ck_system_info sys;
    if (ck_query_system(&sys) != CK_SUCCESS) {
        fprintf(stderr, "ck: %s\n", ck_last_error());
        return 1;
    }
    printf("ck %s: %d GPU(s), NVRTC %s, kernel cache %s\n", ck_version(), sys.device_count,
           sys.nvrtc_found ? "found" : "absent", sys.cache_dir);

    /* Every failure returns a status and leaves a sentence for this thread. */
    ck_status st = ck_query_system(NULL);
    printf("%s: %s\n", ck_status_string(st), ck_last_error());
    return st == CK_ERROR_INVALID_ARGUMENT ? 0 : 1;
}
