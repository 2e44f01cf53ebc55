/* ck cache: list or clear the on-disk kernel module cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/runtime.h"
#include "cli.h"
#include "rt/module_cache.h"

static const char usage[] =
    "Usage: ck cache [list [--json] | clear | dir]\n\n"
    "The kernel module cache holds compiled kernels (NVRTC cubins and CPU-emulator shared\n"
    "objects) keyed by a hash of source, prelude, target, compiler and options. Its directory\n"
    "is $CK_CACHE_DIR, else $XDG_CACHE_HOME/ck, else ~/.cache/ck.\n\n"
    "  list      one line per entry: file, kind, bytes, valid or corrupted (default)\n"
    "  --json    with list: a JSON object instead of text\n"
    "  clear     delete every entry\n"
    "  dir       print the cache directory\n";

static int list(int json)
{
    ck_cache_entry *e = NULL;
    int n = 0;
    char dir[CK_PATH_MAX];
    if (ck_cache_dir(dir, sizeof dir) != CK_SUCCESS || ck_cache_list(&e, &n) != CK_SUCCESS)
        return cli_library_error("cache");
    size_t total = 0;
    for (int i = 0; i < n; ++i)
        total += e[i].bytes;
    if (json) {
        printf("{\"dir\":");
        cli_json_string(stdout, dir);
        printf(",\"total_bytes\":%zu,\"entries\":[", total);
        for (int i = 0; i < n; ++i) {
            printf("%s{\"file\":", i ? "," : "");
            cli_json_string(stdout, e[i].file);
            printf(",\"kind\":");
            cli_json_string(stdout, e[i].kind);
            printf(",\"bytes\":%zu,\"mtime\":%lld,\"valid\":%s}", e[i].bytes, e[i].mtime,
                   e[i].valid ? "true" : "false");
        }
        printf("]}\n");
    } else {
        const char *why = ck_mcache_dir_refused();
        printf("cache: %s\n", dir);
        for (int i = 0; i < n; ++i)
            printf("%s  %-8s %10zu bytes  %s\n", e[i].file, e[i].kind, e[i].bytes,
                   e[i].valid ? "valid"
                   : why      ? "not used"
                              : "corrupted");
        printf("%d entries, %zu bytes\n", n, total);
        if (why)
            printf("not used: ck neither reads nor writes this directory because %s (it must be "
                   "a directory of this user, not a link, that group and others cannot write)\n",
                   why);
    }
    free(e);
    return CK_EXIT_OK;
}

int ck_cmd_cache(int argc, char **argv)
{
    const char *action = NULL;
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            printf("%s", usage);
            return CK_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (!action && (strcmp(argv[i], "list") == 0 || strcmp(argv[i], "clear") == 0 ||
                               strcmp(argv[i], "dir") == 0)) {
            action = argv[i];
        } else {
            return cli_usage_error("cache", "unknown argument '%s'", argv[i]);
        }
    }
    if (!action || strcmp(action, "list") == 0)
        return list(json);
    if (json)
        return cli_usage_error("cache", "--json goes with 'list' only");
    if (strcmp(action, "dir") == 0) {
        char dir[CK_PATH_MAX];
        if (ck_cache_dir(dir, sizeof dir) != CK_SUCCESS)
            return cli_library_error("cache");
        printf("%s\n", dir);
        return CK_EXIT_OK;
    }
    int removed = 0;
    ck_status st = ck_cache_clear(&removed);
    printf("removed %d entries\n", removed);
    if (st != CK_SUCCESS)
        return cli_library_error("cache");
    return CK_EXIT_OK;
}
