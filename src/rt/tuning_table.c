/* The on-disk tuning table (include/ck/tuning.h): a locked, atomically replaced TSV file. */
#include "ck/tuning.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ck/ck.h"
#include "core/error.h"

#define HEADER "# ck tuning table v1: op device problem instance ms metric time\n"

ck_status ck_tuning_path(char *path, size_t size)
{
    CK_REQUIRE_NOT_NULL(path, "ck_tuning_path");
    const char *env = getenv("CK_TUNING_FILE");
    if (env && *env) {
        if (strlen(env) >= size)
            return ck_fail(CK_ERROR_OVERFLOW, "ck_tuning_path: $CK_TUNING_FILE is longer than %zu.",
                           size);
        snprintf(path, size, "%s", env);
        return CK_SUCCESS;
    }
    char dir[CK_PATH_MAX];
    ck_status st = ck_cache_dir(dir, sizeof dir);
    if (st)
        return st;
    if ((size_t)snprintf(path, size, "%s/tuning.tsv", dir) >= size)
        return ck_fail(CK_ERROR_OVERFLOW, "ck_tuning_path: the path does not fit in %zu bytes.",
                       size);
    return CK_SUCCESS;
}

/* Copy field [s, e) into dst (size n); 0 when empty or too long. */
static int take(char *dst, size_t n, const char *s, const char *e)
{
    size_t len = (size_t)(e - s);
    if (len == 0 || len >= n)
        return 0;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return 1;
}

/* Parse one line (without its newline). */
static int parse_line(const char *line, ck_tuning_entry *e)
{
    const char *f[7];
    const char *p = line;
    for (int i = 0; i < 7; ++i) {
        f[i] = p;
        const char *tab = strchr(p, '\t');
        if (i < 6) {
            if (!tab)
                return 0;
            p = tab + 1;
        } else if (tab) {
            return 0;
        }
    }
    memset(e, 0, sizeof *e);
    if (!take(e->op, sizeof e->op, f[0], f[1] - 1) ||
        !take(e->device, sizeof e->device, f[1], f[2] - 1) ||
        !take(e->problem, sizeof e->problem, f[2], f[3] - 1) ||
        !take(e->instance, sizeof e->instance, f[3], f[4] - 1))
        return 0;
    char *end;
    e->ms = strtod(f[4], &end);
    if (end != f[5] - 1 || !(e->ms >= 0))
        return 0;
    e->metric = strtod(f[5], &end);
    if (end != f[6] - 1 || !(e->metric >= 0))
        return 0;
    e->time = strtoll(f[6], &end, 10);
    return *end == '\0' && end != f[6];
}

/* Read every valid entry of the open file. */
static ck_status read_all(FILE *fp, ck_tuning_entry **out, int *count)
{
    *out = NULL;
    *count = 0;
    int cap = 0;
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        ++lineno;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(fp)) { /* over-long line: skip the rest of it */
            int c;
            while ((c = fgetc(fp)) != EOF && c != '\n') {
            }
            CK_LOG(CK_LOG_WARN, "tuning table: line %d is too long; ignored.", lineno);
            continue;
        }
        if (len == 0 || line[0] == '#')
            continue;
        ck_tuning_entry e;
        if (!parse_line(line, &e)) {
            CK_LOG(CK_LOG_WARN, "tuning table: line %d does not parse; ignored.", lineno);
            continue;
        }
        if (*count == cap) {
            int ncap = cap ? 2 * cap : 16;
            ck_tuning_entry *n = realloc(*out, (size_t)ncap * sizeof *n);
            if (!n) {
                free(*out);
                *out = NULL;
                *count = 0;
                return ck_fail(CK_ERROR_OUT_OF_MEMORY, "tuning table: out of host memory.");
            }
            *out = n;
            cap = ncap;
        }
        (*out)[(*count)++] = e;
    }
    return CK_SUCCESS;
}

static ck_status load(const char *path, ck_tuning_entry **entries, int *count)
{
    *entries = NULL;
    *count = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return CK_SUCCESS; /* no table yet */
    flock(fileno(fp), LOCK_SH);
    ck_status st = read_all(fp, entries, count);
    fclose(fp);
    return st;
}

static int same_key(const ck_tuning_entry *a, const char *op, const char *device,
                    const char *problem)
{
    return strcmp(a->op, op) == 0 && (!device || strcmp(a->device, device) == 0) &&
           (!problem || strcmp(a->problem, problem) == 0);
}

ck_status ck_tuning_lookup(const char *op, const char *device, const char *problem,
                           ck_tuning_entry *out, int *found)
{
    static const char *fn = "ck_tuning_lookup";
    CK_REQUIRE_NOT_NULL(op, fn);
    CK_REQUIRE_NOT_NULL(device, fn);
    CK_REQUIRE_NOT_NULL(problem, fn);
    CK_REQUIRE_NOT_NULL(found, fn);
    *found = 0;
    char path[CK_PATH_MAX];
    ck_tuning_entry *all;
    int n;
    if (ck_tuning_path(path, sizeof path) != CK_SUCCESS || load(path, &all, &n) != CK_SUCCESS)
        return CK_SUCCESS; /* an unusable table is an empty one */
    for (int i = n - 1; i >= 0; --i)
        if (same_key(&all[i], op, device, problem)) {
            if (out)
                *out = all[i];
            *found = 1;
            break;
        }
    free(all);
    return CK_SUCCESS;
}

static ck_status mkdir_parent(const char *path)
{
    char tmp[CK_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return ck_fail(CK_ERROR_IO, "tuning table: could not create directory '%s': %s.", tmp,
                           strerror(errno));
        *p = '/';
    }
    return CK_SUCCESS;
}

/* Under the exclusive lock: read, let edit() change the list, write a new file and rename it
 * over the table. */
typedef int (*edit_fn)(ck_tuning_entry *all, int n, void *user);

static ck_status rewrite(edit_fn edit, void *user, const ck_tuning_entry *append)
{
    char path[CK_PATH_MAX], lock[CK_PATH_MAX + 8], tmp[CK_PATH_MAX + 32];
    ck_status st = ck_tuning_path(path, sizeof path);
    if (st || (st = mkdir_parent(path)))
        return st;
    snprintf(lock, sizeof lock, "%s.lock", path);
    int lfd = open(lock, O_RDWR | O_CREAT, 0644);
    if (lfd < 0)
        return ck_fail(CK_ERROR_IO, "tuning table: could not open the lock '%s': %s.", lock,
                       strerror(errno));
    flock(lfd, LOCK_EX);
    ck_tuning_entry *all = NULL;
    int n = 0;
    st = load(path, &all, &n);
    if (st == CK_SUCCESS) {
        n = edit(all, n, user);
        snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
        FILE *fp = fopen(tmp, "w");
        if (!fp) {
            st = ck_fail(CK_ERROR_IO, "tuning table: could not create '%s': %s.", tmp,
                         strerror(errno));
        } else {
            int ok = fputs(HEADER, fp) >= 0;
            for (int i = 0; i <= n && ok; ++i) {
                const ck_tuning_entry *e = i < n ? &all[i] : append;
                if (!e)
                    break;
                ok = fprintf(fp, "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%lld\n", e->op, e->device, e->problem,
                             e->instance, e->ms, e->metric, e->time) > 0;
            }
            ok = fclose(fp) == 0 && ok;
            if (!ok || rename(tmp, path) != 0) {
                int err = errno;
                unlink(tmp);
                st = ck_fail(CK_ERROR_IO, "tuning table: could not write '%s': %s.", path,
                             strerror(err));
            }
        }
    }
    free(all);
    flock(lfd, LOCK_UN);
    close(lfd);
    return st;
}

typedef struct remove_ctx {
    const char *op, *device, *problem;
    int removed;
} remove_ctx;

static int remove_matching(ck_tuning_entry *all, int n, void *user)
{
    remove_ctx *r = user;
    int w = 0;
    for (int i = 0; i < n; ++i) {
        if (!r->op || same_key(&all[i], r->op, r->device, r->problem))
            r->removed++;
        else
            all[w++] = all[i];
    }
    return w;
}

static ck_status check_field(const char *name, const char *v, size_t max)
{
    size_t len = strnlen(v, max);
    if (len == 0 || len >= max || strpbrk(v, "\t\n\r"))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tuning_store: field '%s' must be 1..%zu characters without tab or "
                       "newline.",
                       name, max - 1);
    return CK_SUCCESS;
}

ck_status ck_tuning_store(const ck_tuning_entry *entry)
{
    CK_REQUIRE_NOT_NULL(entry, "ck_tuning_store");
    ck_status st;
    if ((st = check_field("op", entry->op, sizeof entry->op)) ||
        (st = check_field("device", entry->device, sizeof entry->device)) ||
        (st = check_field("problem", entry->problem, sizeof entry->problem)) ||
        (st = check_field("instance", entry->instance, sizeof entry->instance)))
        return st;
    if (!(entry->ms >= 0) || !(entry->metric >= 0))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tuning_store: ms (%g) and metric (%g) must be numbers >= 0.", entry->ms,
                       entry->metric);
    ck_tuning_entry e = *entry;
    if (e.time == 0)
        e.time = (long long)time(NULL);
    remove_ctx r = {e.op, e.device, e.problem, 0};
    return rewrite(remove_matching, &r, &e);
}

ck_status ck_tuning_list(ck_tuning_entry **entries, int *count)
{
    CK_REQUIRE_NOT_NULL(entries, "ck_tuning_list");
    CK_REQUIRE_NOT_NULL(count, "ck_tuning_list");
    char path[CK_PATH_MAX];
    ck_status st = ck_tuning_path(path, sizeof path);
    if (st)
        return st;
    return load(path, entries, count);
}

ck_status ck_tuning_clear(const char *op, int *removed)
{
    remove_ctx r = {op, NULL, NULL, 0};
    ck_status st = rewrite(remove_matching, &r, NULL);
    if (removed)
        *removed = r.removed;
    return st;
}
