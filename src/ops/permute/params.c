/*
 * THE parameter table of the permute kernels (permute_internal.h): the generated source's
 * #defines and the kernel cache key are printed from one list; the kernels declared over the
 * pipelines of permute_kernel.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/common/op_common.h"
#include "ops/common/op_params.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"

#define OP "ck_permute"

static const char *elem_type(int e)
{
    return e == 1 ? "uint8_t" : e == 2 ? "uint16_t" : e == 4 ? "uint32_t" : "uint64_t";
}

static int idx32(const ck_perm_plan *p)
{
    long long items = 1;
    for (int d = 0; d < p->rank; ++d)
        items *= p->len[d];
    return items / p->vec < (1ll << 31);
}

/* Everything the source depends on (permute_kernel.h documents each constant; PERM_T, the
 * element's integer type, follows from PERM_E). */
static int params(const ck_perm_plan *p, ck_op_param *t)
{
    int n = 0;
    if (p->kind == CK_PERM_TILE) {
        ck_op_param_add(t, &n, "PERM_TILE", 1);
        ck_op_param_add(t, &n, "PERM_E", p->elem_bytes);
        ck_op_param_add(t, &n, "PERM_LDVEC", p->ld_vec);
        ck_op_param_add(t, &n, "PERM_STVEC", p->st_vec);
        ck_op_param_add(t, &n, "PERM_GN", p->gn);
        ck_op_param_add(t, &n, "PERM_GM", p->gm);
        ck_op_param_add(t, &n, "PERM_MIN_BLOCKS",
                        ck_perm_blocks_per_sm(p->elem_bytes, p->gn * p->gm));
        if (p->window) /* global accesses through tile windows (absent: indexed by hand) */
            ck_op_param_add(t, &n, "PERM_WINDOW", 1);
    } else {
        ck_op_param_add(t, &n, "PERM_GATHER", 1);
        ck_op_param_add(t, &n, "PERM_E", p->elem_bytes);
        ck_op_param_add(t, &n, "PERM_VEC", p->vec);
        ck_op_param_add(t, &n, "PERM_IDX32", idx32(p));
    }
    return n;
}

/* The tile pipeline's global read and write stages: indexed by hand, or the generated windows
 * (window.c) and the stages over them (permute_window_kernel.h). */
static ck_status tile_stages(const ck_perm_plan *p, ck_sbuf *b)
{
    const char *how = p->window ? "window" : "indexed";
    if (p->window) {
        ck_status st = ck_permute_windows(p, b);
        if (st)
            return st;
        ck_sbuf_printf(b, "#include \"ops/permute/permute_window_kernel.h\"\n");
    }
    ck_sbuf_printf(b,
                   "CK_DEVICE void perm_read(uint32_t in[PERM_V][4], const PERM_T *sb,\n"
                   "    const ck_perm_tile_args *a, long long n0, long long m0, int full)\n"
                   "{\n    perm_read_%s(in, sb, a, n0, m0, full);\n}\n"
                   "CK_DEVICE void perm_write(uint32_t out[PERM_V][4], PERM_T *db,\n"
                   "    const ck_perm_tile_args *a, long long n0, long long m0, int full)\n"
                   "{\n    perm_write_%s(out, db, a, n0, m0, full);\n}\n",
                   how, how);
    return CK_SUCCESS;
}

ck_status ck_permute_source(const ck_perm_plan *p, char **source, const char **kernel_name)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    char *defs = ck_op_params_defines(t, params(p, t));
    ck_sbuf b = {0};
    if (defs) {
        ck_sbuf_printf(&b,
                       "/* ck_permute: %s (ops/permute) */\n#include \"ck_device.h\"\n%s"
                       "#define PERM_T %s\n%s#include \"ops/permute/permute_%s_kernel.h\"\n",
                       p->kind == CK_PERM_TILE ? "tile transpose through shared memory"
                                               : "gather copy",
                       defs, elem_type(p->elem_bytes),
                       p->kind == CK_PERM_TILE ? ""
                       : idx32(p)              ? "#define PERM_IDX_T unsigned int\n"
                                               : "#define PERM_IDX_T long long\n",
                       p->kind == CK_PERM_TILE ? "tile" : "gather");
        free(defs);
    }
    if (defs && p->kind == CK_PERM_TILE && tile_stages(p, &b) != CK_SUCCESS) {
        free(b.s);
        *source = NULL;
        return CK_ERROR_INTERNAL; /* the error is recorded */
    }
    if (p->kind == CK_PERM_TILE) {
        ck_sbuf_printf(&b, "CK_KERNEL void CK_LAUNCH_BOUNDS(PERM_THREADS, PERM_MIN_BLOCKS)\n"
                           "ck_permute_tile(unsigned char *dst, const unsigned char *src, "
                           "ck_perm_tile_args a)\n{\n    perm_tile(dst, src, a);\n}\n");
        *kernel_name = "ck_permute_tile";
    } else {
        ck_sbuf_printf(&b,
                       "CK_KERNEL void ck_permute_gather(unsigned char *dst, const unsigned "
                       "char *src, ck_perm_gather_args a)\n{\n    perm_gather(dst, src, a);\n}\n");
        *kernel_name = "ck_permute_gather";
    }
    if (!defs || b.oom) {
        free(b.s);
        *source = NULL;
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory.");
    }
    *source = b.s;
    return CK_SUCCESS;
}

static ck_status build(void *user, char **source)
{
    const ck_perm_plan *p = user;
    if (p->kind == CK_PERM_TILE) {
        /* the generator's assertion: the layout it relies on is conflict-free */
        int w1, w2;
        if (!ck_perm_shape_ok(p->elem_bytes, p->gn, p->gm))
            return ck_fail(CK_ERROR_INTERNAL,
                           OP ": tile shape %d x %d groups is not supported for %d-byte elements.",
                           p->gn, p->gm, p->elem_bytes);
        ck_permute_smem_ways(p->elem_bytes, p->gn, p->gm, &w1, &w2);
        if (w1 != 1 || w2 != 1)
            return ck_fail(CK_ERROR_INTERNAL,
                           OP ": the shared-memory layout for %d-byte elements in %d x %d tiles "
                              "has %d-way / %d-way bank conflicts.",
                           p->elem_bytes, p->gn, p->gm, w1, w2);
    }
    const char *name;
    return ck_permute_source(p, source, &name);
}

ck_status ck_permute_kernel(ck_context *ctx, const ck_perm_plan *p, ck_kernel **kernel)
{
    ck_op_param t[CK_OP_MAX_PARAMS];
    char key[256];
    if (ck_op_params_key("permute", t, params(p, t), 5, key, sizeof key) != 0)
        return ck_fail(CK_ERROR_INTERNAL, OP ": the kernel key does not fit %zu bytes.",
                       sizeof key);
    return ck_op_kernel(ctx, key, p->kind == CK_PERM_TILE ? "ck_permute_tile" : "ck_permute_gather",
                        build, (void *)p, kernel);
}
