/* The emulator's compile step: system C compiler, temporary include directory, memfd loading. */
#include "rt/host_compile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck_build_info.h"
#include "core/error.h"
#include "rt/embedded_headers.h"
#include "rt/emulator.h"

extern char **environ;

#if defined(__SANITIZE_ADDRESS__)
#define CK_HC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_HC_ASAN 1
#endif
#endif

static int find_exe(const char *c, char *out, size_t size)
{
    if (!c || !*c)
        return 0;
    if (strchr(c, '/')) {
        if (access(c, X_OK) == 0) {
            snprintf(out, size, "%s", c);
            return 1;
        }
        return 0;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        char full[CK_PATH_MAX];
        snprintf(full, sizeof full, "%.*s/%s", (int)len, path, c);
        if (len && access(full, X_OK) == 0) {
            snprintf(out, size, "%s", full);
            return 1;
        }
        path = end ? end + 1 : NULL;
    }
    return 0;
}

ck_status ck_host_compiler(char *path, size_t size)
{
    const char *env = getenv("CK_HOST_CC");
    if (env && *env) {
        if (find_exe(env, path, size))
            return CK_SUCCESS;
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                       "the emulator's compiler CK_HOST_CC='%s' is not an executable file or "
                       "not on PATH.",
                       env);
    }
    if (find_exe(CK_C_COMPILER_PATH, path, size) || find_exe("cc", path, size))
        return CK_SUCCESS;
    return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                   "the emulator needs a C compiler: neither '%s' (the compiler ck was built "
                   "with) nor 'cc' was found; set CK_HOST_CC.",
                   CK_C_COMPILER_PATH);
}

static int debug_build(void)
{
    const char *e = getenv("CK_EMU_DEBUG");
    return e && *e && strcmp(e, "0") != 0;
}

ck_status ck_host_compile_key(ck_hasher *h)
{
    char cc[CK_PATH_MAX];
    ck_status st = ck_host_compiler(cc, sizeof cc);
    if (st != CK_SUCCESS)
        return st;
    struct stat sb;
    char real[CK_PATH_MAX];
    const char *id = realpath(cc, real) ? real : cc;
    long long ident[3] = {0, 0, debug_build()};
    if (stat(id, &sb) == 0) {
        ident[0] = (long long)sb.st_size;
        ident[1] = (long long)sb.st_mtime;
    }
    ck_hasher_str(h, id);
    ck_hasher_field(h, ident, sizeof ident);
#ifdef CK_HC_ASAN
    ck_hasher_str(h, "asan");
#endif
    return CK_SUCCESS;
}

static ck_status write_text(const char *path, const char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return ck_fail(CK_ERROR_IO, "could not create '%s': %s.", path, strerror(errno));
    size_t w = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || w != size)
        return ck_fail(CK_ERROR_IO, "could not write '%s'.", path);
    return CK_SUCCESS;
}

static ck_status write_headers(const char *incdir)
{
    char path[2 * CK_PATH_MAX];
    for (int i = 0; ck_embedded_headers[i].name; ++i) {
        const char *name = ck_embedded_headers[i].name;
        snprintf(path, sizeof path, "%s/%s", incdir, name);
        for (char *p = path + strlen(incdir) + 1; *p; ++p) { /* subdirectories */
            if (*p == '/') {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
            }
        }
        ck_status st = write_text(path, ck_embedded_headers[i].data, ck_embedded_headers[i].size);
        if (st != CK_SUCCESS)
            return st;
    }
    return CK_SUCCESS;
}

static void remove_tree(const char *dir)
{
    char path[2 * CK_PATH_MAX];
    for (int i = 0; ck_embedded_headers[i].name; ++i) {
        snprintf(path, sizeof path, "%s/include/%s", dir, ck_embedded_headers[i].name);
        unlink(path);
    }
    for (int i = 0; ck_embedded_headers[i].name; ++i) { /* subdirectories, deepest last */
        snprintf(path, sizeof path, "%s/include/%s", dir, ck_embedded_headers[i].name);
        char *slash;
        while ((slash = strrchr(path, '/')) && slash > path + strlen(dir) + 8) {
            *slash = '\0';
            rmdir(path);
        }
    }
    const char *files[] = {"include", "kernel.c", "kernel.so", "compile.log"};
    for (int i = 0; i < 4; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (i == 0)
            rmdir(path);
        else
            unlink(path);
    }
    rmdir(dir);
}

static ck_status read_all(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ck_fail(CK_ERROR_IO, "could not open '%s': %s.", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!p || n < 0 || fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        fclose(f);
        return ck_fail(CK_ERROR_IO, "could not read '%s'.", path);
    }
    ((char *)p)[n] = '\0';
    fclose(f);
    *data = p;
    *size = (size_t)n;
    return CK_SUCCESS;
}

ck_status ck_host_compile(const char *unit, const char *const *options, int option_count, void **so,
                          size_t *so_size)
{
    *so = NULL;
    *so_size = 0;
    char cc[CK_PATH_MAX];
    ck_status st = ck_host_compiler(cc, sizeof cc);
    if (st != CK_SUCCESS)
        return st;
    const char *tmpdir = getenv("TMPDIR");
    char dir[CK_PATH_MAX], inc[CK_PATH_MAX + 16], src[CK_PATH_MAX + 16], out[CK_PATH_MAX + 16],
        logp[CK_PATH_MAX + 16], incflag[CK_PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/ck-emu-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir))
        return ck_fail(CK_ERROR_IO, "emulator: could not create a temporary directory '%s': %s.",
                       dir, strerror(errno));
    snprintf(inc, sizeof inc, "%s/include", dir);
    snprintf(src, sizeof src, "%s/kernel.c", dir);
    snprintf(out, sizeof out, "%s/kernel.so", dir);
    snprintf(logp, sizeof logp, "%s/compile.log", dir);
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    if (mkdir(inc, 0755) != 0 || (st = write_headers(inc)) != CK_SUCCESS ||
        (st = write_text(src, unit, strlen(unit))) != CK_SUCCESS) {
        if (st == CK_SUCCESS)
            st = ck_fail(CK_ERROR_IO, "emulator: could not create '%s'.", inc);
        remove_tree(dir);
        return st;
    }
    const char *argv[64 + 24];
    int n = 0;
    argv[n++] = cc;
    argv[n++] = "-std=gnu11";
    argv[n++] = debug_build() ? "-O0" : "-O2";
    if (debug_build())
        argv[n++] = "-g";
    argv[n++] = "-fPIC";
    argv[n++] = "-shared";
    argv[n++] = "-fvisibility=hidden";
#ifdef CK_HC_ASAN
    argv[n++] = "-fsanitize=address";
    argv[n++] = "-fno-omit-frame-pointer";
#endif
    argv[n++] = incflag;
    for (int i = 0; i < option_count && i < 64; ++i)
        argv[n++] = options[i];
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n++] = src;
    argv[n++] = "-lm";
    argv[n] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, cc, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        remove_tree(dir);
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                       "emulator: could not run the compiler '%s': %s.", cc, strerror(rc));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        void *log = NULL;
        size_t loglen = 0;
        if (read_all(logp, &log, &loglen) != CK_SUCCESS)
            log = NULL;
        st = ck_fail(CK_ERROR_COMPILE,
                     "the kernel source failed to compile for the emulator with %s; the source "
                     "is kept in %s (log: %s). Compiler output:\n%.1500s",
                     cc, src, logp, log ? (const char *)log : "(no log)");
        free(log);
        return st; /* the directory stays for inspection */
    }
    st = read_all(out, so, so_size);
    remove_tree(dir);
    return st;
}

ck_status ck_host_load(const void *so, size_t so_size, void **handle)
{
    *handle = NULL;
    /* A uniquely named temporary file: the loader recognises objects by name, so names must
     * never repeat within a process. It is unlinked once mapped. */
    const char *tmpdir = getenv("TMPDIR");
    char path[CK_PATH_MAX];
    static unsigned long counter;
    snprintf(path, sizeof path, "%s/ck-kernel-%ld-%lu-XXXXXX.so",
             tmpdir && *tmpdir ? tmpdir : "/tmp", (long)getpid(),
             __atomic_fetch_add(&counter, 1ul, __ATOMIC_RELAXED));
    int fd = mkstemps(path, 3);
    if (fd < 0)
        return ck_fail(CK_ERROR_IO, "emulator: could not create a temporary file '%s': %s.", path,
                       strerror(errno));
    const char *p = so;
    size_t left = so_size;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return ck_fail(CK_ERROR_IO, "emulator: could not write the kernel object '%s'.", path);
        }
        p += w;
        left -= (size_t)w;
    }
    close(fd);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path);
    if (!h)
        return ck_fail(CK_ERROR_COMPILE,
                       "emulator: the compiled kernel object could not be "
                       "loaded: %s.",
                       dlerror());
    int (*bind)(const ck_emu_api *) = NULL;
    void *sym = dlsym(h, "ck_emu_bind");
    memcpy(&bind, &sym, sizeof sym);
    if (!bind || bind(ck_emu_api_table()) != 0) {
        dlclose(h);
        return ck_fail(CK_ERROR_COMPILE,
                       "emulator: the kernel object does not include ck_device.h or was built "
                       "for another emulator version (no usable ck_emu_bind).");
    }
    *handle = h;
    return CK_SUCCESS;
}
