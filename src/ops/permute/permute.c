/*
 * ck_permute: support check, collapse of the problem, choice between the shared-memory tile
 * transpose and the gather copy, generation of the kernel source, launch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ops/common/op_common.h"
#include "ops/permute/permute_internal.h"
#include "ops/permute/permute_layout_kernel.h"

#define OP "ck_permute"

/* Smallest extent (elements) of the two tile dimensions for the tile kernel; thinner problems
 * use the gather copy. */
enum { TILE_MIN_LEN = 4 };

static int aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

ck_status ck_permute_plan(const ck_tensor *dst, const ck_tensor *src, const int *perm,
                          ck_perm_plan *plan)
{
    CK_REQUIRE_NOT_NULL(dst, OP);
    CK_REQUIRE_NOT_NULL(src, OP);
    CK_REQUIRE_NOT_NULL(plan, OP);
    memset(plan, 0, sizeof *plan);
    ck_status st = ck_op_check_tensor(OP, "src", src);
    if (st == CK_SUCCESS)
        st = ck_op_check_tensor(OP, "dst", dst);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(OP, "dst", dst);
    if (st != CK_SUCCESS)
        return st;
    const int r = src->rank;
    if (dst->rank != r)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst %s has rank %d but src %s has rank %d; they must be equal.",
                       ck_op_tensor_str(dst), dst->rank, ck_op_tensor_str(src), r);
    if (dst->dtype != src->dtype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst has dtype %s but src has %s; permute does not convert (use "
                          "ck_cast first).",
                       ck_dtype_name(dst->dtype), ck_dtype_name(src->dtype));
    if (r > 0 && !perm)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": argument 'perm' is NULL for rank %d.", r);
    int seen[CK_TENSOR_MAX_RANK] = {0};
    for (int d = 0; d < r; ++d) {
        if (perm[d] < 0 || perm[d] >= r || seen[perm[d]])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": perm[%d] = %d; perm must list each of 0..%d exactly once.", d,
                           perm[d], r - 1);
        seen[perm[d]] = 1;
    }
    for (int d = 0; d < r; ++d)
        if (dst->shape[d] != src->shape[perm[d]])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dst.shape[%d] = %lld but src.shape[perm[%d] = %d] = %lld; dst "
                              "%s must have the shape of src %s permuted.",
                           d, (long long)dst->shape[d], d, perm[d], (long long)src->shape[perm[d]],
                           ck_op_tensor_str(dst), ck_op_tensor_str(src));
    if (ck_tensor_numel(src) == 0) {
        plan->kind = CK_PERM_NOTHING;
        return CK_SUCCESS;
    }
    for (int d = 0; d < r; ++d)
        if (dst->shape[d] > 1 && dst->strides[d] == 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": dst %s has stride 0 in dimension %d of length %lld; an output "
                              "element would be written more than once.",
                           ck_op_tensor_str(dst), d, (long long)dst->shape[d]);
    if (ck_op_overlap(dst, src))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": dst %s at %p overlaps src %s at %p; permute cannot work in place.",
                       ck_op_tensor_str(dst), dst->data, ck_op_tensor_str(src), src->data);

    const ck_dtype_info *info = ck_dtype_get(src->dtype);
    long long len[CK_TENSOR_MAX_RANK], ss[CK_TENSOR_MAX_RANK], ds[CK_TENSOR_MAX_RANK];
    for (int d = 0; d < r; ++d) {
        len[d] = dst->shape[d];
        ss[d] = src->strides[perm[d]];
        ds[d] = dst->strides[d];
    }
    int e = info->storage_bits / 8;
    if (info->pack_elements > 1) {
        /* Packed and contiguous (checked): bytes are permuted when the last dimension stays. */
        if (r > 0 && perm[r - 1] != r - 1)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": %s elements are %d bits; a permutation of a sub-byte type must "
                              "keep the last dimension last (perm[%d] = %d).",
                           info->name, info->storage_bits, r - 1, perm[r - 1]);
        long long inner = r > 0 ? len[r - 1] : 1;
        if (inner % info->pack_elements)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": the last dimension of %s %s has %lld elements; a sub-byte "
                              "permute needs whole packs of %d (%d bytes).",
                           info->name, ck_op_tensor_str(src), inner, info->pack_elements,
                           info->pack_bytes);
        long long inner_bytes = inner / info->pack_elements * info->pack_bytes;
        /* row-major strides in bytes of both, in the destination's order */
        long long sstr[CK_TENSOR_MAX_RANK], acc = inner_bytes;
        for (int d = r - 2; d >= 0; --d) {
            sstr[d] = acc;
            acc *= src->shape[d];
        }
        acc = inner_bytes;
        for (int d = r - 2; d >= 0; --d) {
            ds[d] = acc;
            acc *= len[d];
            ss[d] = sstr[perm[d]];
        }
        if (r > 0) {
            len[r - 1] = inner_bytes;
            ss[r - 1] = ds[r - 1] = 1;
        }
        e = 1;
    }
    plan->elem_bytes = e;
    plan->dst = dst->data;
    plan->src = src->data;

    /* drop length-1 dimensions, merge neighbours that stay adjacent and in order in both */
    int n = 0;
    for (int d = 0; d < r; ++d) {
        if (len[d] == 1)
            continue;
        if (n > 0 && plan->ss[n - 1] == ss[d] * len[d] && plan->ds[n - 1] == ds[d] * len[d]) {
            plan->len[n - 1] *= len[d];
            plan->ss[n - 1] = ss[d];
            plan->ds[n - 1] = ds[d];
            continue;
        }
        plan->len[n] = len[d];
        plan->ss[n] = ss[d];
        plan->ds[n] = ds[d];
        n++;
    }
    if (n == 0) {
        plan->len[0] = 1;
        plan->ss[0] = plan->ds[0] = 1;
        n = 1;
    }
    plan->rank = n;

    const int v = 16 / e;
    const int last = n - 1;
    int m = -1;
    if (plan->ds[last] == 1 && plan->ss[last] != 1)
        for (int d = 0; d < last; ++d)
            if (plan->ss[d] == 1)
                m = d;
    if (m >= 0 && plan->len[m] >= TILE_MIN_LEN && plan->len[last] >= TILE_MIN_LEN) {
        plan->kind = CK_PERM_TILE;
        plan->dim_m = m;
        int ld = aligned16(src->data) && (plan->ss[last] * e) % 16 == 0;
        int stv = aligned16(dst->data) && (plan->ds[m] * e) % 16 == 0;
        for (int d = 0; d < last; ++d)
            if (d != m) {
                ld = ld && (plan->ss[d] * e) % 16 == 0;
                stv = stv && (plan->ds[d] * e) % 16 == 0;
            }
        plan->ld_vec = ld;
        plan->st_vec = stv;
        ck_permute_choose_tile(plan, getenv("CK_PERMUTE_INSTANCE"));
        return CK_SUCCESS;
    }
    plan->kind = CK_PERM_GATHER;
    int vec = v > 1 && plan->ss[last] == 1 && plan->ds[last] == 1 && plan->len[last] % v == 0 &&
              aligned16(src->data) && aligned16(dst->data);
    for (int d = 0; d < last && vec; ++d)
        vec = (plan->ss[d] * e) % 16 == 0 && (plan->ds[d] * e) % 16 == 0;
    plan->vec = vec ? v : 1;
    return CK_SUCCESS;
}

/* ---- tile shape and grid ------------------------------------------------------------------ */

/* Blocks along one tile dimension of length len: the candidate (16 or 8 chunk groups of V
 * elements) whose tiles cover len with the least padding (no edge tiles where one divides
 * len), the larger on a tie. `allow16`: 16 is a candidate. */
static int choose_groups(long long len, int v, int allow16)
{
    long long pad8 = (len + 8 * v - 1) / (8 * v) * (8 * v);
    long long pad16 = (len + 16 * v - 1) / (16 * v) * (16 * v);
    return allow16 && pad16 <= pad8 ? 16 : 8;
}

void ck_permute_choose_tile(ck_perm_plan *p, const char *env)
{
    const int e = p->elem_bytes, v = 16 / e, last = p->rank - 1;
    /* default: 16 x 16 groups (8 x 16 for 1-byte elements), a dimension narrowed to 8 groups
     * where that avoids edge tiles or padding (3136 = 49 x 64 bf16) */
    p->gn = choose_groups(p->len[last], v, e > 1);
    p->gm = choose_groups(p->len[p->dim_m], v, 1);
    p->tiles_per_block = 0;
    int tn, tm, tpb;
    char extra;
    if (!env || sscanf(env, "%d,%d,%d%c", &tn, &tm, &tpb, &extra) != 3 || tn < 0 || tm < 0 ||
        tpb < 0 || tn % v || tm % v)
        return;
    int gn = tn ? tn / v : p->gn, gm = tm ? tm / v : p->gm;
    if (!ck_perm_shape_ok(e, gn, gm))
        return;
    p->gn = gn;
    p->gm = gm;
    p->tiles_per_block = tpb;
}

long long ck_permute_tile_blocks(const ck_perm_plan *p, long long tiles, int sms)
{
    long long tpb = p->tiles_per_block;
    if (tpb <= 0) {
        /* One tile per block while the grid has fewer than 8 waves of resident blocks (the
         * block scheduler balances the tail); up to 4 tiles per block (grid stride) beyond,
         * keeping at least 4 waves. */
        long long slots =
            (long long)(sms > 0 ? sms : 1) * ck_perm_blocks_per_sm(p->elem_bytes, p->gn * p->gm);
        tpb = tiles / (4 * slots);
        tpb = tpb < 1 ? 1 : tpb > 4 ? 4 : tpb;
        if (tiles < 8 * slots)
            tpb = 1;
    }
    long long blocks = (tiles + tpb - 1) / tpb;
    return blocks > 0x7fffffffll ? 0x7fffffffll : blocks;
}

/* ---- shared-memory bank check ------------------------------------------------------------- */

/* Worst bank ways over the quarter-warp phases of one warp's 16-byte accesses at addr[32]. */
static int phase_ways(const ck_access_hw *hw, const long long *addr)
{
    int lanes_per_phase = hw->num_banks * hw->bank_bytes / 16; /* 16-byte accesses */
    int worst = 1;
    for (int p = 0; p < hw->warp_size; p += lanes_per_phase) {
        /* per bank: distinct words addressed */
        long long words[64 * 4];
        int nwords = 0;
        for (int l = p; l < p + lanes_per_phase; ++l)
            for (int w = 0; w < 16 / hw->bank_bytes; ++w) {
                long long word = addr[l] / hw->bank_bytes + w;
                int dup = 0;
                for (int k = 0; k < nwords; ++k)
                    dup |= words[k] == word;
                if (!dup && nwords < 64 * 4)
                    words[nwords++] = word;
            }
        for (int b = 0; b < hw->num_banks; ++b) {
            int ways = 0;
            for (int k = 0; k < nwords; ++k)
                ways += (int)(words[k] % hw->num_banks) == b;
            if (ways > worst)
                worst = ways;
        }
    }
    return worst;
}

void ck_permute_smem_ways(int e, int gn, int gm, int *pass1, int *pass2)
{
    ck_access_hw hw = ck_access_hw_default();
    const int v = 16 / e, threads = gn * gm;
    int w1 = 1, w2 = 1;
    long long addr[32];
    for (int warp = 0; warp < threads / hw.warp_size; ++warp) {
        for (int s = 0; s < v; ++s) {
            for (int l = 0; l < hw.warp_size; ++l) {
                int rr, c;
                ck_perm_pass1(warp * hw.warp_size + l, s, threads, gm, &rr, &c);
                addr[l] = ck_perm_smem_offset(rr, c, v, gm);
            }
            int w = phase_ways(&hw, addr);
            w1 = w > w1 ? w : w1;
            for (int l = 0; l < hw.warp_size; ++l) {
                int nc, mc;
                ck_perm_pass2(warp * hw.warp_size + l, gn, &nc, &mc);
                addr[l] = ck_perm_smem_offset(nc * v + s, mc, v, gm);
            }
            w = phase_ways(&hw, addr);
            w2 = w > w2 ? w : w2;
        }
    }
    *pass1 = w1;
    *pass2 = w2;
}

/* ---- source, kernel, launch --------------------------------------------------------------- */

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

ck_status ck_permute_source(const ck_perm_plan *p, char **source, const char **kernel_name)
{
    char buf[1024];
    if (p->kind == CK_PERM_TILE) {
        snprintf(buf, sizeof buf,
                 "/* ck_permute: tile transpose through shared memory (ops/permute) */\n"
                 "#include \"ck_device.h\"\n#define PERM_TILE 1\n#define PERM_E %d\n"
                 "#define PERM_T %s\n#define PERM_LDVEC %d\n"
                 "#define PERM_STVEC %d\n#define PERM_GN %d\n#define PERM_GM %d\n"
                 "#define PERM_MIN_BLOCKS %d\n#include \"ops/permute/permute_kernel.h\"\n"
                 "CK_KERNEL void CK_LAUNCH_BOUNDS(PERM_THREADS, PERM_MIN_BLOCKS)\n"
                 "ck_permute_tile(unsigned char *dst, const unsigned char *src, "
                 "ck_perm_tile_args a)\n{\n    perm_tile(dst, src, a);\n}\n",
                 p->elem_bytes, elem_type(p->elem_bytes), p->ld_vec, p->st_vec, p->gn, p->gm,
                 ck_perm_blocks_per_sm(p->elem_bytes, p->gn * p->gm));
        *kernel_name = "ck_permute_tile";
    } else {
        snprintf(buf, sizeof buf,
                 "/* ck_permute: gather copy (ops/permute) */\n"
                 "#include \"ck_device.h\"\n#define PERM_GATHER 1\n#define PERM_E %d\n"
                 "#define PERM_T %s\n#define PERM_VEC %d\n"
                 "#define PERM_IDX32 %d\n#include \"ops/permute/permute_kernel.h\"\n"
                 "CK_KERNEL void ck_permute_gather(unsigned char *dst, const unsigned char *src, "
                 "ck_perm_gather_args a)\n{\n    perm_gather(dst, src, a);\n}\n",
                 p->elem_bytes, elem_type(p->elem_bytes), p->vec, idx32(p));
        *kernel_name = "ck_permute_gather";
    }
    *source = strdup(buf);
    if (!*source)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory.");
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

/* Launch arguments, laid out as the kernel's structs (all long long). */
typedef struct tile_args {
    long long n, m, s_n, d_m, tiles_m, tiles_n, tiles, nb;
    long long blen[6], bs[6], bd[6];
} tile_args;

typedef struct gather_args {
    long long len[8], ss[8], ds[8];
    long long items, rank;
} gather_args;

/* The tuning table's problem key of a tiled transpose: element size, the tile dimensions'
 * lengths, the rest as a batch, the vector widths. */
static void tile_problem_key(const ck_perm_plan *p, char *buf, size_t size)
{
    const int last = p->rank - 1;
    long long batch = 1;
    for (int d = 0; d < last; ++d)
        if (d != p->dim_m)
            batch *= p->len[d];
    snprintf(buf, size, "tile/e=%d/n=%lld/m=%lld/batch=%lld/ld=%d/st=%d", p->elem_bytes,
             p->len[last], p->len[p->dim_m], batch, p->ld_vec, p->st_vec);
}

ck_status ck_permute_plan_on(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src,
                             const int *perm, ck_perm_plan *p, char *problem, size_t size)
{
    ck_status st = ck_permute_plan(dst, src, perm, p);
    if (problem && size)
        problem[0] = '\0';
    if (st != CK_SUCCESS || p->kind != CK_PERM_TILE)
        return st;
    /* the tuning table's tile (ck tune permute) unless the developer switch set one */
    char key[160], inst[64];
    int forced = 0;
    tile_problem_key(p, key, sizeof key);
    if (ck_op_tuned(ctx, "permute", key, inst, sizeof inst, &forced) &&
        (forced || !getenv("CK_PERMUTE_INSTANCE")))
        ck_permute_choose_tile(p, inst);
    if (problem)
        snprintf(problem, size, "%s", key);
    return CK_SUCCESS;
}

void ck_permute_instance_name(const ck_perm_plan *p, char *buf, size_t size)
{
    const int v = 16 / p->elem_bytes;
    snprintf(buf, size, "%d,%d,%d", p->gn * v, p->gm * v, p->tiles_per_block);
}

ck_status ck_permute(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src, const int *perm)
{
    CK_REQUIRE_NOT_NULL(ctx, OP);
    ck_perm_plan p;
    ck_status st = ck_permute_plan_on(ctx, dst, src, perm, &p, NULL, 0);
    if (st != CK_SUCCESS || p.kind == CK_PERM_NOTHING)
        return st;
    const ck_device_props *props = ck_op_props(ctx);
    const int e = p.elem_bytes, v = 16 / e;
    char key[160];
    ck_kernel *k = NULL;
    if (p.kind == CK_PERM_TILE) {
        snprintf(key, sizeof key, "permute/tile/e=%d/ld=%d/st=%d/gn=%d/gm=%d", e, p.ld_vec,
                 p.st_vec, p.gn, p.gm);
        st = ck_op_kernel(ctx, key, "ck_permute_tile", build, &p, &k);
        if (st != CK_SUCCESS)
            return st;
        tile_args a;
        memset(&a, 0, sizeof a);
        const int last = p.rank - 1, gn = p.gn, gm = p.gm, threads = gn * gm;
        a.n = p.len[last];
        a.m = p.len[p.dim_m];
        a.s_n = p.ss[last];
        a.d_m = p.ds[p.dim_m];
        a.tiles_n = (a.n + gn * v - 1) / (gn * v);
        a.tiles_m = (a.m + gm * v - 1) / (gm * v);
        a.tiles = a.tiles_n * a.tiles_m;
        int nb = 0;
        for (int d = 0; d < last; ++d)
            if (d != p.dim_m) {
                a.blen[nb] = p.len[d];
                a.bs[nb] = p.ss[d];
                a.bd[nb] = p.ds[d];
                a.tiles *= p.len[d];
                nb++;
            }
        a.nb = nb;
        long long blocks = ck_permute_tile_blocks(&p, a.tiles, props->multiprocessors);
        if (props->backend == CK_BACKEND_HOST) /* the emulator: one block per worker */
            blocks = props->multiprocessors > 0 ? props->multiprocessors : 1;
        if (blocks > a.tiles)
            blocks = a.tiles;
        void *dptr = p.dst, *sptr = (void *)p.src;
        void *args[3] = {&dptr, &sptr, &a};
        size_t sizes[3] = {sizeof dptr, sizeof sptr, sizeof a};
        return ck_op_launch(ctx, k, (unsigned)blocks, 1, 1, (unsigned)threads, 0, args, sizes, 3);
    }
    snprintf(key, sizeof key, "permute/gather/e=%d/v=%d/i32=%d", e, p.vec, idx32(&p));
    st = ck_op_kernel(ctx, key, "ck_permute_gather", build, &p, &k);
    if (st != CK_SUCCESS)
        return st;
    gather_args a;
    memset(&a, 0, sizeof a);
    a.items = 1;
    a.rank = p.rank;
    for (int d = 0; d < p.rank; ++d) {
        int lastd = d == p.rank - 1;
        a.len[d] = lastd ? p.len[d] / p.vec : p.len[d];
        a.ss[d] = lastd ? p.ss[d] : p.ss[d] / p.vec;
        a.ds[d] = lastd ? p.ds[d] : p.ds[d] / p.vec;
        a.items *= a.len[d];
    }
    long long blocks = (a.items + 255) / 256,
              cap = (long long)(props->multiprocessors > 0 ? props->multiprocessors : 1) * 8;
    if (blocks > cap)
        blocks = cap;
    void *dptr = p.dst, *sptr = (void *)p.src;
    void *args[3] = {&dptr, &sptr, &a};
    size_t sizes[3] = {sizeof dptr, sizeof sptr, sizeof a};
    return ck_op_launch(ctx, k, (unsigned)blocks, 1, 1, 256, 0, args, sizes, 3);
}
