/*
 * Static verification of a distribution's access pattern over a strided memory layout:
 * coverage (holders per element), vector width, global-memory sectors per warp access and
 * shared-memory bank-conflict ways per warp access, under a simple NVIDIA hardware model.
 * Memory is either a strided layout (ck_access_check) or a tile.h tensor descriptor with the
 * load/store traits' vectors (ck_access_check_desc).
 */
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"
#include "ck/tile.h"
#include "core/error.h"
#include "core/load_store_internal.h"

static const char *const FN = "ck_access_check";
static const char *const FND = "ck_access_check_desc";

ck_access_hw ck_access_hw_default(void)
{
    ck_access_hw hw = {32, 32, 4, 32, 128, 16};
    return hw;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns the number of distinct values (compacted to the front). */
static long long unique_ll(long long *v, long long n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    long long u = 1;
    for (long long i = 1; i < n; ++i)
        if (v[i] != v[u - 1])
            v[u++] = v[i];
    return u;
}

void ck_access_report_free(ck_access_report *report)
{
    if (!report)
        return;
    free(report->stats);
    report->stats = NULL;
    report->num_stats = 0;
}

static ck_status coverage(const ck_distribution *d, ck_access_report *rep)
{
    const ck_dist_encoding *e = &d->enc;
    if (d->tile_elements > (1LL << 26) || d->threads * d->elements_per_thread > (1LL << 28))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the tile has %lld elements and %lld (thread, element) pairs; "
                       "verification supports at most 2^26 and 2^28.",
                       FN, d->tile_elements, d->threads * d->elements_per_thread);
    long long *count = calloc((size_t)d->tile_elements, sizeof *count);
    if (!count)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: cannot allocate %lld counters.", FN,
                       d->tile_elements);
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
    for (long long t = 0; t < d->threads; ++t) {
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            long long lin = 0;
            for (int i = 0; i < e->ndim_x; ++i)
                lin = lin * d->x_lengths[i] + x[i];
            ++count[lin];
        }
    }
    rep->expected_holders = d->replication;
    rep->coverage_ok = 1;
    for (long long lin = 0; lin < d->tile_elements; ++lin)
        if (count[lin] != d->replication) {
            rep->coverage_ok = 0;
            rep->first_bad_holders = count[lin];
            long long rest = lin;
            for (int i = e->ndim_x - 1; i >= 0; --i) {
                rep->first_bad_x[i] = (int)(rest % d->x_lengths[i]);
                rest /= d->x_lengths[i];
            }
            break;
        }
    free(count);
    return CK_SUCCESS;
}

/* Where the elements are: a strided layout or a descriptor, plus the byte mapping. */
typedef struct addr_src {
    const long long *strides;  /* strided layout, or NULL */
    const ck_descriptor *desc; /* descriptor, or NULL */
    long long base;
    int eb;
    ck_nv_swizzle swizzle;
} addr_src;

/* Byte address of the element at (p, y) (before the swizzle); returns 0 when it is padding. */
static int address(const ck_distribution *d, const addr_src *src, const int *p, const int *y,
                   long long *addr)
{
    int x[CK_DIST_MAX_X];
    ck_dist_calculate_x(d, p, y, x);
    long long off = 0;
    if (src->desc) {
        int64_t xi[CK_DIST_MAX_X], o;
        int valid = 0;
        for (int i = 0; i < d->enc.ndim_x; ++i)
            xi[i] = x[i];
        ck_descriptor_is_valid_index(src->desc, xi, &valid);
        if (!valid)
            return 0;
        ck_descriptor_calculate_offset(src->desc, xi, &o);
        off = o;
    } else {
        for (int i = 0; i < d->enc.ndim_x; ++i)
            off += (long long)x[i] * src->strides[i];
    }
    *addr = src->base + off * src->eb;
    return 1;
}

static ck_status check_hw(const ck_access_hw *hw)
{
    if (hw->warp_size < 1 || hw->warp_size > 1024 || hw->num_banks < 1 || hw->num_banks > 1024 ||
        hw->bank_bytes < 1 || hw->bank_bytes > 1024 || hw->sector_bytes < 1 ||
        hw->sector_bytes > 4096 || hw->line_bytes < 1 || hw->max_vector_bytes < 1 ||
        hw->max_vector_bytes > 1024)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the hardware model has a field out of range (warp %d lanes, %d banks "
                       "of %d bytes, sector %d, line %d, vector %d bytes; each must be 1 to "
                       "1024, sectors up to 4096).",
                       FN, hw->warp_size, hw->num_banks, hw->bank_bytes, hw->sector_bytes,
                       hw->line_bytes, hw->max_vector_bytes);
    return CK_SUCCESS;
}

/* Addresses are kept below 2^48 + 2^48 so their arithmetic cannot overflow. */
#define ACCESS_MAX_BYTES (1LL << 48)

static ck_status check_swizzle_base(ck_nv_swizzle swizzle, long long base_bytes)
{
    if ((int)swizzle < CK_NV_SWIZZLE_NONE || (int)swizzle > CK_NV_SWIZZLE_128B)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: layout swizzle = %d; accepted: none (0), 32B (1), 64B (2), 128B (3).",
                       FN, (int)swizzle);
    if (base_bytes < 0 || base_bytes > ACCESS_MAX_BYTES)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: layout base_bytes = %lld; accepted: 0 to 2^48 (a GPU's virtual "
                       "address space).",
                       FN, base_bytes);
    return CK_SUCCESS;
}

/* The largest byte offset a strided layout reaches within the tile must stay below 2^48 too,
 * so that base + offset never overflows. */
static ck_status check_strided_extent(const ck_distribution *d, const long long *strides, int eb)
{
    long long reach = 0;
    for (int i = 0; i < d->enc.ndim_x; ++i) {
        long long term;
        if (d->x_lengths[i] > 0 &&
            (__builtin_mul_overflow((long long)(d->x_lengths[i] - 1), strides[i], &term) ||
             __builtin_add_overflow(reach, term, &reach)))
            reach = ACCESS_MAX_BYTES + 1;
    }
    if (reach > ACCESS_MAX_BYTES / eb)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the layout's strides reach element %lld of the tile, more bytes "
                       "(%d each) than 2^48; accepted: a tile within 2^48 bytes.",
                       FN, reach, eb);
    return CK_SUCCESS;
}

/* Sectors and bank ways of every access of the sfc and every warp, v elements along vdim. */
static ck_status warp_stats(const ck_distribution *dist, const addr_src *src,
                            const ck_access_hw *hwp, int v, const ck_sfc *sfc,
                            ck_access_report *report)
{
    const ck_access_hw hw = *hwp;
    const ck_dist_encoding *e = &dist->enc;
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y] = {0};
    report->accesses_per_thread = sfc->num_access;
    report->warps = (int)((dist->threads + hw.warp_size - 1) / hw.warp_size);

    const long long vb = (long long)v * src->eb;
    const long long pieces = vb / 16 + 2; /* 16-byte pieces of one lane's access */
    const long long per_lane_words = vb / hw.bank_bytes + 2 * pieces,
                    per_lane_sectors = vb / hw.sector_bytes + 2 * pieces;
    long long cap =
        hw.warp_size * (per_lane_words > per_lane_sectors ? per_lane_words : per_lane_sectors);
    if (cap < 2LL * hw.warp_size)
        cap = 2LL * hw.warp_size;
    report->num_stats = sfc->num_access * report->warps;
    if (report->num_stats > (1LL << 24))
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: %lld warp accesses; at most 2^24 are verified.",
                       FN, report->num_stats);
    report->stats = calloc((size_t)report->num_stats, sizeof *report->stats);
    long long *buf = malloc((size_t)cap * sizeof *buf);
    long long *starts = malloc((size_t)hw.warp_size * sizeof *starts);
    long long *words = malloc((size_t)cap * sizeof *words);
    long long *bank_count = calloc((size_t)hw.num_banks, sizeof *bank_count);
    if (!report->stats || !buf || !starts || !words || !bank_count) {
        free(buf);
        free(starts);
        free(words);
        free(bank_count);
        ck_access_report_free(report);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: cannot allocate the report.", FN);
    }
    long long k = 0;
    for (long long a = 0; a < sfc->num_access; ++a) {
        if (e->ndim_y > 0)
            ck_sfc_get_index(sfc, a, y);
        for (int w = 0; w < report->warps; ++w, ++k) {
            ck_access_stat *s = &report->stats[k];
            s->warp = w;
            s->access = a;
            long long lanes = 0, ns = 0, nw = 0;
            for (int l = 0; l < hw.warp_size; ++l) {
                long long t = (long long)w * hw.warp_size + l, addr;
                if (t >= dist->threads)
                    break;
                ck_dist_partition_index(dist, t, p);
                if (!address(dist, src, p, y, &addr)) {
                    ++report->masked_accesses; /* padding: not issued */
                    continue;
                }
                if (addr % vb)
                    ++report->misaligned_accesses;
                starts[lanes++] = addr;
                /* Physical pieces: a swizzle moves whole 16-byte chunks. */
                for (long long lo = addr, hi; lo < addr + vb; lo = hi) {
                    hi = addr + vb;
                    long long ph = lo;
                    if (src->swizzle != CK_NV_SWIZZLE_NONE) {
                        if (hi > (lo / 16 + 1) * 16)
                            hi = (lo / 16 + 1) * 16;
                        ck_nv_swizzle_offset(src->swizzle, lo, &ph);
                    }
                    const long long pe = ph + (hi - lo) - 1;
                    for (long long sct = ph / hw.sector_bytes; sct <= pe / hw.sector_bytes; ++sct)
                        buf[ns++] = sct;
                    for (long long wd = ph / hw.bank_bytes; wd <= pe / hw.bank_bytes; ++wd)
                        words[nw++] = wd;
                }
            }
            s->sectors = unique_ll(buf, ns);
            /* Distinct bytes: union of [start, start + vb) over lanes. */
            lanes = unique_ll(starts, lanes);
            long long bytes = 0, covered_to = -1;
            for (long long i = 0; i < lanes; ++i) {
                long long lo = starts[i] > covered_to ? starts[i] : covered_to;
                if (starts[i] + vb > lo)
                    bytes += starts[i] + vb - lo;
                if (starts[i] + vb > covered_to)
                    covered_to = starts[i] + vb;
            }
            s->sectors_min = (bytes + hw.sector_bytes - 1) / hw.sector_bytes;
            nw = unique_ll(words, nw);
            memset(bank_count, 0, (size_t)hw.num_banks * sizeof *bank_count);
            long long ways = 0;
            for (long long i = 0; i < nw; ++i) {
                long long c = ++bank_count[words[i] % hw.num_banks];
                if (c > ways)
                    ways = c;
            }
            s->bank_ways = ways;
            s->bank_ways_min = (nw + hw.num_banks - 1) / hw.num_banks;
            report->sectors_total += s->sectors;
            report->sectors_min_total += s->sectors_min;
            report->bank_ways_total += s->bank_ways;
            report->bank_ways_min_total += s->bank_ways_min;
            if (s->bank_ways > report->bank_ways_max)
                report->bank_ways_max = s->bank_ways;
        }
    }
    free(buf);
    free(starts);
    free(words);
    free(bank_count);
    return CK_SUCCESS;
}

ck_status ck_access_check(const ck_distribution *dist, const ck_access_layout *layout,
                          int element_bytes, const ck_access_hw *hw_in, ck_access_report *report)
{
    CK_REQUIRE_NOT_NULL(dist, FN);
    CK_REQUIRE_NOT_NULL(layout, FN);
    CK_REQUIRE_NOT_NULL(report, FN);
    memset(report, 0, sizeof *report);
    const ck_access_hw hw = hw_in ? *hw_in : ck_access_hw_default();
    ck_status st = check_hw(&hw);
    if (st)
        return st;
    if (element_bytes < 1 || element_bytes > 64)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: element_bytes = %d; accepted: 1 to 64.", FN,
                       element_bytes);
    const ck_dist_encoding *e = &dist->enc;
    if (layout->ndim != e->ndim_x)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the layout has %d dims but the distribution has %d X dims; they must "
                       "match.",
                       FN, layout->ndim, e->ndim_x);
    for (int i = 0; i < layout->ndim; ++i)
        if (layout->strides[i] < 0 || layout->strides[i] > (1LL << 32))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: layout stride[%d] = %lld; accepted: 0 to 2^32.", FN, i,
                           layout->strides[i]);
    if ((st = check_swizzle_base(layout->swizzle, layout->base_bytes)))
        return st;
    if ((st = check_strided_extent(dist, layout->strides, element_bytes)))
        return st;
    if ((st = coverage(dist, report)))
        return st;
    report->element_bytes = element_bytes;
    addr_src src = {layout->strides, NULL, layout->base_bytes, element_bytes, layout->swizzle};

    /* Vector dim: the longest Y naming the last H component of a stride-1 X dim. */
    int vdim = -1;
    for (int j = 0; j < e->ndim_y; ++j) {
        int x = e->y_major[j] - 1;
        if (e->y_minor[j] == e->ndim_h[x] - 1 && layout->strides[x] == 1 &&
            (vdim < 0 || dist->y_lengths[j] >= dist->y_lengths[vdim]))
            vdim = j;
    }
    int v = 1;
    if (vdim >= 0)
        while (dist->y_lengths[vdim] % (2 * v) == 0 && 2 * v * element_bytes <= hw.max_vector_bytes)
            v *= 2;
    int order[CK_DIST_MAX_Y], scal[CK_DIST_MAX_Y];
    int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y];
    ck_sfc sfc;
    for (;;) { /* halve v until every access is aligned to its size */
        if (v == 1)
            vdim = -1;
        /* Access order: Y dims in order, the vector dim last. */
        int n = 0;
        for (int j = 0; j < e->ndim_y; ++j)
            if (j != vdim)
                order[n++] = j;
        if (vdim >= 0)
            order[n++] = vdim;
        for (int j = 0; j < e->ndim_y; ++j)
            scal[j] = j == vdim ? v : 1;
        if (e->ndim_y > 0) {
            if ((st = ck_sfc_init(&sfc, e->ndim_y, dist->y_lengths, order, scal, 1)))
                return ck_fail_context(st, "%s", FN);
        } else {
            memset(&sfc, 0, sizeof sfc);
            sfc.num_access = 1;
        }
        int aligned = 1;
        for (long long a = 0; a < sfc.num_access && aligned && v > 1; ++a) {
            ck_sfc_get_index(&sfc, a, y);
            for (long long t = 0; t < dist->threads && aligned; ++t) {
                long long addr = 0;
                ck_dist_partition_index(dist, t, p);
                address(dist, &src, p, y, &addr);
                aligned = addr % ((long long)v * element_bytes) == 0;
            }
        }
        if (aligned)
            break;
        v /= 2;
    }
    report->vector_y_dim = vdim;
    report->vector_elems = v;
    report->vector_bytes = v * element_bytes;
    return warp_stats(dist, &src, &hw, v, &sfc, report);
}

ck_status ck_access_check_desc(const ck_distribution *dist, const ck_descriptor *desc,
                               ck_dtype dtype, long long base_bytes, ck_nv_swizzle swizzle,
                               const ck_access_hw *hw_in, ck_access_report *report)
{
    CK_REQUIRE_NOT_NULL(dist, FND);
    CK_REQUIRE_NOT_NULL(desc, FND);
    CK_REQUIRE_NOT_NULL(report, FND);
    memset(report, 0, sizeof *report);
    const ck_access_hw hw = hw_in ? *hw_in : ck_access_hw_default();
    ck_status st = check_hw(&hw);
    if (st)
        return st;
    const ck_dtype_info *ti = ck_dtype_get(dtype);
    if (!ti)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument 'dtype' = %d is not a ck_dtype value (see ck/types.h).", FND,
                       (int)dtype);
    if (ti->storage_bits % 8)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: %s elements take %d bits; the access check counts whole bytes "
                       "(use ck_load_store_traits_make for the vectors of packed types).",
                       FND, ti->name, ti->storage_bits);
    if ((st = check_swizzle_base(swizzle, base_bytes)))
        return st;
    ck_ival space = ck_descriptor_element_space_size(desc);
    if (space.e || space.v < 0 || space.v > ACCESS_MAX_BYTES / 8)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the descriptor's element space is %s%lld elements; accepted: a "
                       "concrete size of at most 2^45 elements (2^48 bytes).",
                       FND, space.e ? "symbolic, not " : "", (long long)space.v);
    if ((st = ck_load_store_traits_make_capped(&dist->enc, desc, dtype, hw.max_vector_bytes * 8,
                                               &report->traits)))
        return ck_fail_context(st, "%s", FND);
    report->has_traits = 1;
    if ((st = coverage(dist, report)))
        return st;
    const int eb = ti->storage_bits / 8;
    report->element_bytes = eb;
    const ck_load_store_traits *t = &report->traits;
    report->vector_y_dim = t->scalars_per_vector > 1 ? t->vector_dim_y : -1;
    report->vector_elems = t->scalars_per_vector;
    report->vector_bytes = t->vector_bytes;
    addr_src src = {NULL, desc, base_bytes, eb, swizzle};
    return warp_stats(dist, &src, &hw, t->scalars_per_vector, &t->sfc, report);
}
