/*
 * ck_copy, ck_cast, ck_elementwise (ew_internal.h): the arguments' checks, then problem
 * (problem.c) -> layout and instance (policy.c) -> kernel (ew_gen.c generates it from the spec,
 * which is also its cache key) -> launch. docs/ops-elementwise.md describes the algorithm.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/elementwise.h"
#include "core/error.h"
#include "core/numeric_conv.h"
#include "core/numeric_internal.h"
#include "ops/common/op_common.h"
#include "ops/elementwise/ew_internal.h"

enum { SMALL_N = 65536 };

typedef struct build_ctx {
    const ew_spec *spec;
} build_ctx;

static ck_status build_spec(void *user, char **source)
{
    return ck_ew_generate(((build_ctx *)user)->spec, source);
}

ck_status ck_ew_cast_any_source(char **source)
{
    static const char text[] =
        "/* ck: run-time typed cast (src/ops/elementwise/cast_kernel.h) */\n"
        "#include \"ck_device.h\"\n"
        "#include \"ops/elementwise/cast_kernel.h\"\n\n"
        "CK_KERNEL void ck_cast_any(void *dst, const void *src, int dst_type, int src_type,\n"
        "    int dst_cls, int src_cls, int upe, int round, int ovf, float scale,\n"
        "    unsigned long long seed, long long units, int rank,\n"
        "    long long l0, long long l1, long long l2, long long l3, long long l4,\n"
        "    long long l5, long long l6, long long l7, long long d0, long long d1, long long d2,\n"
        "    long long d3, long long d4, long long d5, long long d6, long long d7,\n"
        "    long long s0, long long s1, long long s2, long long s3, long long s4,\n"
        "    long long s5, long long s6, long long s7)\n"
        "{\n"
        "    ew_cast_any(dst, src, dst_type, src_type, dst_cls, src_cls, upe, round, ovf, scale,\n"
        "                seed, units, rank, l0, l1, l2, l3, l4, l5, l6, l7, d0, d1, d2, d3, d4,\n"
        "                d5, d6, d7, s0, s1, s2, s3, s4, s5, s6, s7);\n"
        "}\n";
    *source = malloc(sizeof text);
    if (!*source)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_cast: out of host memory.");
    memcpy(*source, text, sizeof text);
    return CK_SUCCESS;
}

static ck_status build_any(void *user, char **source)
{
    (void)user;
    return ck_ew_cast_any_source(source);
}

/* Generate (or find) and launch the kernel of `spec` (layout filled in here) over l. */
static ck_status run_spec(ck_context *ctx, const char *op, ew_spec *spec, const ew_layout *l,
                          ew_plan_out *out)
{
    int64_t bn = 1;
    for (int k = 0; k < CK_EW_MAX_INPUTS; ++k)
        spec->bmode[k] = EW_BCAST_NONE;
    spec->layout =
        ck_ew_vec_ok(l, ck_ew_vec_elems(spec), spec, &bn) ? EW_LAYOUT_VEC : EW_LAYOUT_STRIDED;
    if (spec->layout != EW_LAYOUT_VEC)
        for (int k = 0; k < CK_EW_MAX_INPUTS; ++k)
            spec->bmode[k] = EW_BCAST_NONE;
    spec->rank = l->rank;
    spec->idx32 = l->n <= (int64_t)UINT32_MAX;
    ew_instance inst = {EW_UNROLL, EW_BLOCK, EW_WAVES, EW_CS};
    int64_t npacks = 0;
    unsigned grid = 1;
    if (spec->layout == EW_LAYOUT_VEC) {
        char problem[256];
        ck_ew_problem_key(spec, l->n, problem, sizeof problem);
        inst = ck_ew_instance_for(ctx, spec, problem);
        if (out) {
            out->vec = 1;
            ck_ew_instance_name(&inst, out->instance, sizeof out->instance);
            snprintf(out->problem, sizeof out->problem, "%s", problem);
            return CK_SUCCESS;
        }
        npacks = l->n / ck_ew_vec_elems(spec);
        grid = ck_ew_grid(ctx, npacks, (int64_t)inst.block * inst.unroll, inst.waves);
        spec->rank = 0;
        spec->unroll = inst.unroll;
        spec->block = inst.block;
        spec->cs = inst.cs;
        /* 32-bit pack indices when p + step (the loop's last increment) stays below 2^32 */
        spec->idx32 = npacks + (int64_t)grid * inst.block * inst.unroll <= (int64_t)UINT32_MAX;
    } else {
        if (out)
            return CK_SUCCESS; /* strided: no instance to tune */
        spec->alias = 0;
        spec->unroll = spec->block = spec->cs = 0;
    }
    char *key = ck_ew_key(spec);
    if (!key)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of host memory.", op);
    build_ctx bc = {spec};
    ck_kernel *kernel = NULL;
    ck_status st =
        ck_op_kernel(ctx, key, spec->layout == EW_LAYOUT_VEC ? "ck_ew_vec" : "ck_ew_strided",
                     build_spec, &bc, &kernel);
    free(key);
    if (st != CK_SUCCESS)
        return st;
    void *args[EW_MAXT + 2 + CK_TENSOR_MAX_RANK * (EW_MAXT + 1)];
    size_t sizes[EW_MAXT + 2 + CK_TENSOR_MAX_RANK * (EW_MAXT + 1)];
    long long vals[2 + CK_TENSOR_MAX_RANK * (EW_MAXT + 1)];
    void *ptrs[EW_MAXT];
    int na = 0, nv = 0;
    int nin = l->nt - 1;
    ptrs[0] = l->data[nin];
    for (int k = 0; k < nin; ++k)
        ptrs[k + 1] = l->data[k];
    for (int k = 0; k <= nin; ++k) {
        args[na] = &ptrs[k];
        sizes[na++] = sizeof(void *);
    }
#define PUSH(v)                                                                                    \
    do {                                                                                           \
        vals[nv] = (long long)(v);                                                                 \
        args[na] = &vals[nv++];                                                                    \
        sizes[na++] = sizeof(long long);                                                           \
    } while (0)
    unsigned block = EW_BLOCK;
    if (spec->layout == EW_LAYOUT_VEC) {
        PUSH(npacks);
        PUSH(l->n);
        PUSH(bn);
        block = (unsigned)inst.block;
    } else {
        int upe = ck_dtype_get(spec->out)->pack_elements;
        int64_t units = l->n / upe;
        PUSH(units);
        for (int d = 0; d < l->rank; ++d)
            PUSH(l->len[d]);
        for (int k = 0; k <= nin; ++k)
            for (int d = 0; d < l->rank; ++d)
                PUSH(l->str[k][d]);
        grid = ck_ew_grid(ctx, units, EW_BLOCK, 16);
    }
#undef PUSH
    return ck_op_launch(ctx, kernel, grid, 1, 1, block, 0, args, sizes, na);
}

static int storage_class(ck_dtype t)
{
    const ck_dtype_info *info = ck_dtype_get(t);
    if (info->pack_elements == 2)
        return 4;
    if (info->pack_elements == 4)
        return 5;
    return info->pack_bytes == 1 ? 0 : info->pack_bytes == 2 ? 1 : info->pack_bytes == 4 ? 2 : 3;
}

/* The run-time typed kernel of cast_kernel.h over l (tensor 0 the source, 1 the destination). */
static ck_status run_any(ck_context *ctx, const ew_layout *l, int round, int ovf, float scale,
                         uint64_t seed)
{
    ck_kernel *kernel = NULL;
    ck_status st = ck_op_kernel(ctx, "ew/cast_any", "ck_cast_any", build_any, NULL, &kernel);
    if (st != CK_SUCCESS)
        return st;
    void *dst = l->data[1], *src = l->data[0];
    int ints[7] = {(int)l->dtype[1],
                   (int)l->dtype[0],
                   storage_class(l->dtype[1]),
                   storage_class(l->dtype[0]),
                   ck_dtype_get(l->dtype[1])->pack_elements,
                   round,
                   ovf};
    float sc = scale;
    unsigned long long sd = seed;
    long long units = l->n / ints[4];
    int rank = l->rank;
    long long geo[3 * CK_TENSOR_MAX_RANK];
    for (int d = 0; d < CK_TENSOR_MAX_RANK; ++d) {
        geo[d] = d < rank ? l->len[d] : 1;
        geo[CK_TENSOR_MAX_RANK + d] = d < rank ? l->str[1][d] : 0;
        geo[2 * CK_TENSOR_MAX_RANK + d] = d < rank ? l->str[0][d] : 0;
    }
    void *args[13 + 3 * CK_TENSOR_MAX_RANK];
    size_t sizes[13 + 3 * CK_TENSOR_MAX_RANK];
    int na = 0;
    args[na] = &dst, sizes[na++] = sizeof dst;
    args[na] = &src, sizes[na++] = sizeof src;
    for (int i = 0; i < 7; ++i)
        args[na] = &ints[i], sizes[na++] = sizeof(int);
    args[na] = &sc, sizes[na++] = sizeof sc;
    args[na] = &sd, sizes[na++] = sizeof sd;
    args[na] = &units, sizes[na++] = sizeof units;
    args[na] = &rank, sizes[na++] = sizeof rank;
    for (int i = 0; i < 3 * CK_TENSOR_MAX_RANK; ++i)
        args[na] = &geo[i], sizes[na++] = sizeof geo[i];
    return ck_op_launch(ctx, kernel, ck_ew_grid(ctx, units, EW_BLOCK, 16), 1, 1, EW_BLOCK, 0, args,
                        sizes, na);
}

static ck_status cast_impl(const char *op, ck_context *ctx, const ck_tensor *dst,
                           const ck_tensor *src, const ck_convert_options *opt, ew_plan_out *out)
{
    CK_REQUIRE_NOT_NULL(ctx, op);
    ck_status st = ck_op_check_tensor(op, "dst", dst);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(op, "dst", dst);
    if (st == CK_SUCCESS)
        st = ck_op_check_tensor(op, "src", src);
    if (st == CK_SUCCESS)
        st = ck_op_check_same_shape(op, "dst", dst, "src", src);
    if (st != CK_SUCCESS)
        return st;
    ck_convert_options o = opt ? *opt : ck_convert_options_default();
    int ovf = 0;
    st = ck_numeric_check_modes(op, dst->dtype, o.round, o.overflow, &ovf);
    if (st != CK_SUCCESS)
        return st;
    if (!isfinite(o.scale) || o.scale == 0.0f)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: option 'scale' = %g is not allowed; the scale must be finite and "
                       "nonzero (1 for a plain conversion).",
                       op, (double)o.scale);
    if (ck_tensor_numel(dst) == 0)
        return CK_SUCCESS;
    int same = dst->dtype == src->dtype && o.scale == 1.0f;
    int alias = 0;
    if (ck_op_overlap(dst, src)) {
        const ck_dtype_info *di = ck_dtype_get(dst->dtype), *si = ck_dtype_get(src->dtype);
        if (!ck_ew_same_layout(dst, src) || di->pack_elements > 1 || si->pack_elements > 1 ||
            di->pack_bytes != si->pack_bytes)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: the destination %s overlaps the source %s; they must be "
                           "disjoint, or the same memory with the same layout and a type of "
                           "the same storage size (in place).",
                           op, ck_op_tensor_str(dst), ck_op_tensor_str(src));
        if (same)
            return CK_SUCCESS; /* copying onto itself */
        alias = 1;
    }
    ew_layout l;
    ck_ew_collapse(&l, dst, src, 1);
    int fast_pair =
        (src->dtype == CK_DTYPE_F32 || src->dtype == CK_DTYPE_BF16 || src->dtype == CK_DTYPE_F16) &&
        (dst->dtype == CK_DTYPE_F32 || dst->dtype == CK_DTYPE_BF16 || dst->dtype == CK_DTYPE_F16) &&
        o.scale == 1.0f && o.round == CK_ROUND_NEAREST_EVEN && ovf == CK_NC_NONSAT;
    if (same && l.rank == 1 && l.str[0][0] == 1 && l.str[1][0] == 1) {
        /* a contiguous copy of any type moves bytes: one kernel for every dtype */
        size_t bytes = 0;
        st = ck_dtype_storage_size(dst->dtype, (size_t)l.n, &bytes);
        if (st != CK_SUCCESS)
            return st;
        l.n = (int64_t)bytes;
        l.len[0] = l.n;
        l.dtype[0] = l.dtype[1] = CK_DTYPE_U8;
    }
    if (ck_ew_has_subbyte(&l) || (!same && !fast_pair && l.n < SMALL_N))
        return out ? CK_SUCCESS : run_any(ctx, &l, (int)o.round, ovf, o.scale, o.seed);
    ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.mode = EW_MODE_CAST;
    spec.nin = 1;
    spec.in[0] = l.dtype[0];
    spec.out = l.dtype[1];
    spec.round = (int)o.round;
    spec.ovf = ovf;
    spec.scale = o.scale;
    spec.seed = o.round == CK_ROUND_STOCHASTIC ? o.seed : 0;
    spec.alias = alias;
    return run_spec(ctx, op, &spec, &l, out);
}

ck_status ck_copy(ck_context *ctx, const ck_tensor *src, ck_tensor *dst)
{
    if (dst && src && dst->dtype != src->dtype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_copy: 'dst' has dtype %s and 'src' %s; a copy keeps the type (use "
                       "ck_cast to convert).",
                       ck_dtype_name(dst->dtype), ck_dtype_name(src->dtype));
    return cast_impl("ck_copy", ctx, dst, src, NULL, NULL);
}

ck_status ck_cast(ck_context *ctx, const ck_tensor *src, ck_tensor *dst,
                  const ck_convert_options *opt)
{
    return cast_impl("ck_cast", ctx, dst, src, opt, NULL);
}

static ck_status elementwise_impl(ck_context *ctx, const ck_tensor *dst, const ck_tensor *inputs,
                                  int input_count, const ck_ew_program *prog, ew_plan_out *out)
{
    static const char op[] = "ck_elementwise";
    CK_REQUIRE_NOT_NULL(ctx, op);
    CK_REQUIRE_NOT_NULL(prog, op);
    if (input_count < 1 || input_count > CK_EW_MAX_INPUTS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: input_count = %d; 1 to %d inputs are supported.", op, input_count,
                       CK_EW_MAX_INPUTS);
    CK_REQUIRE_NOT_NULL(inputs, op);
    ck_status st = ck_ew_check(prog, input_count);
    if (st != CK_SUCCESS)
        return st;
    st = ck_op_check_tensor(op, "dst", dst);
    if (st == CK_SUCCESS)
        st = ck_op_check_output(op, "dst", dst);
    if (st != CK_SUCCESS)
        return st;
    static const char *names[CK_EW_MAX_INPUTS] = {"inputs[0]", "inputs[1]", "inputs[2]",
                                                  "inputs[3]"};
    for (int k = 0; k < input_count; ++k) {
        const ck_tensor *t = &inputs[k];
        st = ck_op_check_tensor(op, names[k], t);
        if (st != CK_SUCCESS)
            return st;
        if (t->rank > dst->rank)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: %s (%s) has rank %d, more than the destination's %d (%s); inputs "
                           "broadcast to the destination's shape.",
                           op, names[k], ck_op_tensor_str(t), t->rank, dst->rank,
                           ck_op_tensor_str(dst));
        for (int d = 0; d < t->rank; ++d) {
            int64_t want = dst->shape[dst->rank - t->rank + d];
            if (t->shape[d] != want && t->shape[d] != 1)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: %s (%s) does not broadcast to the destination's shape (%s): "
                               "its dimension %d has length %lld where %lld (or 1) is needed.",
                               op, names[k], ck_op_tensor_str(t), ck_op_tensor_str(dst), d,
                               (long long)t->shape[d], (long long)want);
        }
    }
    if (ck_tensor_numel(dst) == 0)
        return CK_SUCCESS;
    int alias = 0;
    for (int k = 0; k < input_count; ++k) {
        const ck_tensor *t = &inputs[k];
        if (!ck_op_overlap(dst, t))
            continue;
        const ck_dtype_info *di = ck_dtype_get(dst->dtype), *si = ck_dtype_get(t->dtype);
        if (!ck_ew_same_layout(dst, t) || di->pack_elements > 1 || si->pack_elements > 1 ||
            di->pack_bytes != si->pack_bytes)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: the destination %s overlaps %s (%s); an input may be the "
                           "destination itself (same memory, same shape and strides, a type of "
                           "the same storage size, not fp4/fp6) but may not overlap it "
                           "otherwise.",
                           op, ck_op_tensor_str(dst), names[k], ck_op_tensor_str(t));
        alias = 1;
    }
    ew_layout l;
    ck_ew_collapse(&l, dst, inputs, input_count);
    ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.mode = EW_MODE_EXPR;
    spec.nin = input_count;
    for (int k = 0; k < input_count; ++k) {
        spec.in[k] = inputs[k].dtype;
        if (spec.in[k] == CK_DTYPE_F64)
            spec.f64 = 1;
    }
    spec.out = dst->dtype;
    if (spec.out == CK_DTYPE_F64)
        spec.f64 = 1;
    spec.prog = prog;
    spec.alias = alias;
    return run_spec(ctx, op, &spec, &l, out);
}

ck_status ck_elementwise(ck_context *ctx, const ck_ew_program *prog, const ck_tensor *inputs,
                         int input_count, ck_tensor *dst)
{
    return elementwise_impl(ctx, dst, inputs, input_count, prog, NULL);
}

ck_status ck_ew_plan(ck_context *ctx, int call, ck_tensor *dst, const ck_tensor *inputs,
                     int input_count, const ck_convert_options *opt, const ck_ew_program *prog,
                     ew_plan_out *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ew_plan");
    memset(out, 0, sizeof *out);
    if (call == EW_CALL_EXPR)
        return elementwise_impl(ctx, dst, inputs, input_count, prog, out);
    if (call == EW_CALL_COPY && dst && inputs && dst->dtype != inputs->dtype)
        return ck_copy(ctx, inputs, dst); /* the refusal */
    return cast_impl(call == EW_CALL_COPY ? "ck_copy" : "ck_cast", ctx, dst, inputs,
                     call == EW_CALL_COPY ? NULL : opt, out);
}

ck_status ck_elementwise_expr(ck_context *ctx, const char *expr, const ck_tensor *inputs,
                              int input_count, ck_tensor *dst)
{
    ck_ew_program prog;
    ck_status st = ck_ew_parse(expr, &prog);
    if (st != CK_SUCCESS)
        return st;
    return ck_elementwise(ctx, &prog, inputs, input_count, dst);
}
