/* ck dist: options and the printing functions shared by tools/cmd_dist.c and
 * tools/dist_output.c. */
#ifndef CK_TOOLS_DIST_CMD_H
#define CK_TOOLS_DIST_CMD_H

#include "ck/distribution.h"

typedef struct dist_opts {
    int json, check, npsel;
    int psel[64][CK_DIST_MAX_P];
    int element_bytes;
    int have_dtype; /* dtype names a ck_dtype (a name, or a size of 1, 2, 4 or 8 bytes) */
    ck_dtype dtype;
    int have_strides;
    ck_access_layout layout; /* strides (without --desc), base and swizzle */
    const char *desc_text;   /* --desc, or NULL */
    const char *svg;
} dist_opts;

void dist_json_ints(const int *v, int n);
void dist_text_ints(const int *v, int n);
/* The JSON object; rep and traits may be NULL. */
void dist_print_json(const ck_distribution *d, const long long *tids, long long ntid,
                     const ck_access_report *rep, const ck_load_store_traits *traits);
void dist_print_text(const ck_distribution *d, const dist_opts *o, const long long *tids,
                     long long ntid);
void dist_print_check(const ck_distribution *d, const dist_opts *o, const ck_access_report *rep,
                      const ck_load_store_traits *traits);
int cmd_dist_svg(const ck_distribution *d, const char *path); /* tools/dist_svg.c */

#endif
