/* Every kernel variant ck_permute generates (tile transpose and gather copy; element sizes
 * 1/2/4/8; every tile shape; vector and element accesses) compiles with NVRTC for sm_90a against
 * the embedded prelude and op headers (no GPU needed). Skipped when NVRTC is absent. */
#include <stdlib.h>
#include <string.h>

#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"
#include "rt/runtime_internal.h"
#include "test.h"

static void compile(const ck_perm_plan *p)
{
    char *src = NULL;
    const char *name = NULL;
    CHECK_OK(ck_permute_source(p, &src, &name));
    if (!src)
        return;
    CHECK(strstr(src, name) != NULL);
    void *cubin = NULL;
    size_t size = 0;
    ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s (e=%d): %s", name, p->elem_bytes, ck_last_error());
    CHECK(st != CK_SUCCESS || (size > 4 && memcmp(cubin, "\177ELF", 4) == 0));
    free(cubin);
    free(src);
}

int main(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return 0;
    }
    printf("NVRTC %d.%d\n", major, minor);
    int n = 0;
    for (int e = 1; e <= 8; e *= 2) {
        ck_perm_plan p;
        memset(&p, 0, sizeof p);
        p.elem_bytes = e;
        p.rank = 3;
        p.kind = CK_PERM_TILE;
        /* every tile shape with 16-byte accesses both sides; every access mix on two shapes */
        for (int gn = 8; gn <= 32; gn *= 2)
            for (int gm = 8; gm <= 32; gm *= 2) {
                if (!ck_perm_shape_ok(e, gn, gm))
                    continue;
                p.gn = gn;
                p.gm = gm;
                for (int v = 0; v < 4; ++v) {
                    p.ld_vec = v & 1;
                    p.st_vec = v >> 1;
                    if (v == 3 || (gn == 8 && gm == 8) || (gn == 16 && gm == 16) ||
                        (e == 1 && gn == 8 && gm == 16)) {
                        compile(&p);
                        n++;
                    }
                }
            }
        p.kind = CK_PERM_GATHER;
        p.vec = 1;
        compile(&p);
        p.vec = 16 / e;
        p.len[0] = 1ll << 40; /* 64-bit indices */
        compile(&p);
        n += 2;
    }
    printf("%d kernels compiled\n", n);
    return CK_TEST_REPORT();
}
