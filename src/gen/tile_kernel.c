/*
 * Kernel sources made of generated tile windows plus the user's code (ck/tile_kernel.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "gen/window_gen.h"

/* Whether window name w collides with a name generated for copy c (move_copy_<c>,
 * move_copy_dst_<c> are a window's move_<w>). */
static int window_collides_with_copy(const char *w, const char *c)
{
    if (strncmp(w, "copy_", 5) != 0)
        return 0;
    w += 5;
    return !strcmp(w, c) || (!strncmp(w, "dst_", 4) && !strcmp(w + 4, c));
}

ck_status ck_tile_kernel_source_copies(int nwindows, const ck_tile_window_spec *windows,
                                       int ncopies, const ck_tile_copy_spec *copies,
                                       const char *user_source, char **source)
{
    CK_REQUIRE_NOT_NULL(source, "ck_tile_kernel_source");
    CK_REQUIRE_NOT_NULL(user_source, "ck_tile_kernel_source");
    *source = NULL;
    if (nwindows < 0 || (nwindows > 0 && !windows))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_kernel_source: nwindows = %d with windows %s; give 0 or more "
                       "windows in a non-NULL array.",
                       nwindows, windows ? "given" : "NULL");
    if (ncopies < 0 || (ncopies > 0 && !copies))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_kernel_source: ncopies = %d with copies %s; give 0 or more "
                       "copies in a non-NULL array.",
                       ncopies, copies ? "given" : "NULL");
    for (int i = 0; i < ncopies; ++i) {
        for (int j = 0; j < i; ++j)
            if (copies[i].name && copies[j].name && !strcmp(copies[i].name, copies[j].name))
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_tile_kernel_source: copies %d and %d are both named \"%s\"; "
                               "names must differ.",
                               j, i, copies[i].name);
        for (int j = 0; j < nwindows; ++j)
            if (copies[i].name && windows[j].name &&
                (!strcmp(copies[i].name, windows[j].name) ||
                 window_collides_with_copy(windows[j].name, copies[i].name)))
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_tile_kernel_source: window %d (\"%s\") and copy %d (\"%s\") "
                               "would generate functions of the same name; rename one.",
                               j, windows[j].name, i, copies[i].name);
    }
    for (int i = 0; i < nwindows; ++i)
        for (int j = 0; j < i; ++j)
            if (windows[i].name && windows[j].name && !strcmp(windows[i].name, windows[j].name))
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_tile_kernel_source: windows %d and %d are both named \"%s\"; "
                               "names must differ.",
                               j, i, windows[i].name);
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
                   "/* Kernel source assembled by ck_tile_kernel_source: %d generated tile "
                   "window(s), %d copy window(s), then the user's code. */\n"
                   "#include \"ck_device.h\"\n\n",
                   nwindows, ncopies);
    ck_sbuf_printf(&b, "#ifndef CK_FLOORDIV\n"
                       "#define CK_FLOORDIV(a, b) ((a) / (b) - (((a) %% (b) != 0) && (((a) < 0) "
                       "!= ((b) < 0))))\n"
                       "#define CK_FLOORMOD(a, b) ((a) - CK_FLOORDIV(a, b) * (b))\n#endif\n"
                       "#ifndef CK_MIN\n#define CK_MIN(a, b) ((a) < (b) ? (a) : (b))\n#endif\n"
                       "#ifndef CK_MAX\n#define CK_MAX(a, b) ((a) > (b) ? (a) : (b))\n#endif\n\n");
    for (int i = 0; i < nwindows; ++i) {
        char *w = NULL;
        ck_status st = ck_tile_window_generate(&windows[i], &w);
        if (st) {
            free(b.s);
            return st;
        }
        ck_sbuf_printf(&b, "%s", w);
        free(w);
    }
    for (int i = 0; i < ncopies; ++i) {
        char *w = NULL;
        ck_status st = ck_tile_copy_generate(&copies[i], &w, NULL);
        if (st) {
            free(b.s);
            return st;
        }
        ck_sbuf_printf(&b, "%s", w);
        free(w);
    }
    ck_sbuf_printf(&b, "/* ---- user code ---- */\n%s", user_source);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_tile_kernel_source: out of memory.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

ck_status ck_tile_kernel_source(int nwindows, const ck_tile_window_spec *windows,
                                const char *user_source, char **source)
{
    return ck_tile_kernel_source_copies(nwindows, windows, 0, NULL, user_source, source);
}

ck_status ck_tile_kernel_load(ck_device *device, int nwindows, const ck_tile_window_spec *windows,
                              const char *user_source, ck_module **module)
{
    return ck_tile_kernel_load_copies(device, nwindows, windows, 0, NULL, user_source, module);
}

ck_status ck_tile_kernel_load_copies(ck_device *device, int nwindows,
                                     const ck_tile_window_spec *windows, int ncopies,
                                     const ck_tile_copy_spec *copies, const char *user_source,
                                     ck_module **module)
{
    CK_REQUIRE_NOT_NULL(device, "ck_tile_kernel_load");
    CK_REQUIRE_NOT_NULL(module, "ck_tile_kernel_load");
    char *src = NULL;
    ck_status st =
        ck_tile_kernel_source_copies(nwindows, windows, ncopies, copies, user_source, &src);
    if (st)
        return st;
    st = ck_module_load(device, src, NULL, 0, module);
    free(src);
    return st;
}
