/* `ck prof permute`: time ck_permute and check every element against a CPU loop. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/permute/permute_internal.h"
#include "prof.h"

static const char help[] =
    "usage: ck prof permute [--shape AxBx...] [--perm P0,P1,...] [--dtype T] [options]\n"
    "\n"
    "Permute the dimensions of a packed tensor: dst.shape[d] = src.shape[perm[d]] (NCHW -> NHWC\n"
    "is --perm 0,2,3,1). Prints time, GB/s (each byte read once and written once) and the ratio\n"
    "to the measured device-to-device copy bandwidth; every element is checked (exact) unless\n"
    "--no-check.\n"
    "\n"
    "  --shape AxBx...           source shape, rank 1..8 (default 16384x8192)\n"
    "  --perm P0,P1,...          the permutation (default: 1,0 for rank 2, 0,2,3,1 for rank 4,\n"
    "                            else the reversed order)\n"
    "  --dtype T                 element type (default bf16; any ck type name)\n"
    "  --tune                    first time every tile shape and grid of the transpose and store\n"
    "                            the fastest in the tuning table (as `ck tune permute`)\n";

typedef struct job {
    ck_context *ctx;
    ck_tensor dst, src;
    int perm[8];
} job;

static ck_status run(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    job *j = user;
    return ck_permute(j->ctx, &j->src, j->perm, &j->dst);
}

/* Mismatching destination elements of hd against the library's reference (src/ops/permute/
 * reference.c) of hs, computed into want (bytes compared; sub-byte types by packs); -1 when
 * the reference fails. */
static long long check(const job *j, const unsigned char *hs, const unsigned char *hd,
                       unsigned char *want, size_t bytes, int unit)
{
    ck_tensor src = j->src, dst = j->dst;
    src.data = (void *)hs;
    dst.data = want;
    if (ck_permute_reference(&dst, &src, j->perm) != CK_SUCCESS)
        return -1;
    long long bad = 0;
    for (size_t i = 0; i < bytes; i += (size_t)unit)
        bad += memcmp(hd + i, want + i, (size_t)unit) != 0;
    return bad;
}

int prof_permute(int argc, char **argv)
{
    const char *sub = "prof permute";
    prof_common c;
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            fputs(help, stdout);
            fputs(prof_common_help, stdout);
            return CK_EXIT_OK;
        }
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    const char *shape_s = "16384x8192", *perm_s = NULL, *dtype_s = "bf16";
    int tune = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if ((!strcmp(a, "--shape") || !strcmp(a, "--perm") || !strcmp(a, "--dtype")) &&
            i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--shape"))
            shape_s = argv[++i];
        else if (!strcmp(a, "--perm"))
            perm_s = argv[++i];
        else if (!strcmp(a, "--dtype"))
            dtype_s = argv[++i];
        else if (!strcmp(a, "--tune"))
            tune = 1;
        else
            return prof_unknown_argument(sub, a);
    }
    long long dims[8], pv[9];
    int rank = 0;
    rc = prof_shape_option(sub, shape_s, dims, 1, 8, &rank);
    if (rc != CK_EXIT_OK)
        return rc;
    ck_dtype dt;
    if (ck_dtype_from_name(dtype_s, &dt) != CK_SUCCESS)
        return cli_usage_error(sub, "--dtype %s: %s", dtype_s, ck_last_error());
    job j;
    memset(&j, 0, sizeof j);
    if (perm_s) {
        int np = prof_parse_list(perm_s, pv, 9, 0, 8);
        if (np != rank)
            return cli_usage_error(sub, "--perm %s: expected %d indices separated by commas.",
                                   perm_s, rank);
        for (int d = 0; d < rank; ++d)
            j.perm[d] = (int)pv[d];
    } else {
        static const int nhwc[4] = {0, 2, 3, 1};
        for (int d = 0; d < rank; ++d)
            j.perm[d] = rank == 4 ? nhwc[d] : rank - 1 - d;
    }
    const ck_dtype_info *info = ck_dtype_get(dt);
    int64_t ss[8], ds[8];
    long long n = 1;
    for (int d = 0; d < rank; ++d) {
        ss[d] = dims[d];
        n *= dims[d];
    }
    for (int d = 0; d < rank; ++d) {
        if (j.perm[d] < 0 || j.perm[d] >= rank)
            return cli_usage_error(sub, "--perm %s: index %d is out of range.", perm_s, j.perm[d]);
        ds[d] = ss[j.perm[d]];
    }
    size_t bytes = (size_t)(n / info->pack_elements * info->pack_bytes);
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    j.ctx = ctx;
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    void *d_src = NULL, *d_dst = NULL;
    unsigned char *hs = malloc(bytes ? bytes : 1), *hd = malloc(bytes ? bytes : 1),
                  *want = c.check ? malloc(bytes ? bytes : 1) : NULL;
    prof_result r;
    memset(&r, 0, sizeof r);
    rc = CK_EXIT_FAILURE;
    if (!hs || !hd || (c.check && !want)) {
        fprintf(stderr, "ck %s: out of host memory for %zu bytes.\n", sub, bytes);
        goto done;
    }
    unsigned s = c.seed ? c.seed : 1;
    for (size_t i = 0; i < bytes; ++i) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        hs[i] = (unsigned char)(s >> 11);
    }
    if (ck_malloc(dev, bytes ? bytes : 1, &d_src) != CK_SUCCESS ||
        ck_malloc(dev, bytes ? bytes : 1, &d_dst) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, d_src, hs, bytes, NULL) != CK_SUCCESS ||
        ck_tensor_init(&j.src, d_src, dt, rank, ss, NULL) != CK_SUCCESS ||
        ck_tensor_init(&j.dst, d_dst, dt, rank, ds, NULL) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.op = "permute";
    int len = snprintf(r.problem, sizeof r.problem, "%s %s perm ", info->name, shape_s);
    for (int d = 0; d < rank && len > 0 && len < (int)sizeof r.problem - 4; ++d)
        len +=
            snprintf(r.problem + len, sizeof r.problem - (size_t)len, d ? ",%d" : "%d", j.perm[d]);
    r.device = props.name;
    r.ok = 1;
    if (tune) {
        char best[64];
        double best_ms = 0;
        if (ck_permute_tune(ctx, &j.src, j.perm, &j.dst, prof_tune_reps(ctx, &c),
                            prof_tune_progress, &c, best, sizeof best, &best_ms) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    if (c.check) {
        if (ck_permute(ctx, &j.src, j.perm, &j.dst) != CK_SUCCESS ||
            ck_context_synchronize(ctx) != CK_SUCCESS ||
            ck_memcpy_d2h(dev, hd, d_dst, bytes, NULL) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
        long long bad = n ? check(&j, hs, hd, want, bytes, info->pack_bytes) : 0;
        if (bad < 0) {
            rc = cli_library_error(sub);
            goto done;
        }
        r.checked = 1;
        r.ok = bad == 0;
        r.max_error = (double)bad; /* mismatching elements (permute is exact) */
    }
    if (prof_time(ctx, &c, run, &j, &r.ms) != CK_SUCCESS ||
        prof_copy_bandwidth(ctx, &r.copy_gbps) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.bytes = 2.0 * (double)bytes;
    rc = prof_report(&c, &r);
done:
    ck_free(dev, d_src);
    ck_free(dev, d_dst);
    free(hs);
    free(hd);
    free(want);
    ck_context_destroy(ctx);
    return rc;
}
