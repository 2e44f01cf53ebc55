/* ck dist: printing of the map, the check report and the load/store traits (text, JSON). */
#include <stdio.h>
#include <stdlib.h>

#include "ck/distribution.h"
#include "dist_cmd.h"

void dist_json_ints(const int *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; ++i)
        printf("%s%d", i ? "," : "", v[i]);
    putchar(']');
}

void dist_text_ints(const int *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; ++i)
        printf("%s%d", i ? ", " : "", v[i]);
    putchar(']');
}

static void print_traits_json(const ck_dist_encoding *e, const ck_load_store_traits *t)
{
    long long len[CK_DIST_MAX_Y], str[CK_DIST_MAX_Y];
    printf(",\"traits\":{\"vector_dim_y\":%d,\"scalars_per_vector\":%d,\"vector_bits\":%d,"
           "\"vector_bytes\":%d,\"num_accesses\":%lld,\"access_order\":",
           t->vector_dim_y, t->scalars_per_vector, t->vector_bits, t->vector_bytes,
           t->num_accesses);
    dist_json_ints(t->sfc.dim_access_order, e->ndim_y);
    printf(",\"scalars_per_access\":");
    dist_json_ints(t->sfc.scalars_per_access, e->ndim_y);
    for (int j = 0; j < e->ndim_y; ++j) {
        len[j] = t->y_vector_length[j];
        str[j] = t->y_vector_stride[j];
    }
    printf(",\"y_vector_lengths\":[");
    for (int j = 0; j < e->ndim_y; ++j)
        printf("%s%lld", j ? "," : "", len[j]);
    printf("],\"y_vector_strides\":[");
    for (int j = 0; j < e->ndim_y; ++j)
        printf("%s%lld", j ? "," : "", str[j]);
    printf("]}");
}

static void print_traits_text(const ck_dist_encoding *e, const ck_load_store_traits *t)
{
    if (t->vector_dim_y < 0) {
        printf("  traits:         no Y dims, one access\n");
        return;
    }
    printf("  traits:         %d element%s (%d bits) per access along Y%d, %lld accesses, order ",
           t->scalars_per_vector, t->scalars_per_vector == 1 ? "" : "s", t->vector_bits,
           t->vector_dim_y, t->num_accesses);
    dist_text_ints(t->sfc.dim_access_order, e->ndim_y);
    printf(" (Y dims, first slowest)\n");
}

void dist_print_json(const ck_distribution *d, const long long *tids, long long ntid,
                     const ck_access_report *rep, const ck_load_store_traits *traits)
{
    const ck_dist_encoding *e = &d->enc;
    printf("{\"x_lengths\":");
    dist_json_ints(d->x_lengths, e->ndim_x);
    printf(",\"y_lengths\":");
    dist_json_ints(d->y_lengths, e->ndim_y);
    printf(",\"p_lengths\":");
    dist_json_ints(d->p_lengths, e->ndim_p);
    printf(",\"r_lengths\":");
    dist_json_ints(e->r_lengths, e->ndim_r);
    printf(",\"elements_per_thread\":%lld,\"threads\":%lld,\"replication\":%lld,\"map\":[",
           d->elements_per_thread, d->threads, d->replication);
    for (long long i = 0; i < ntid; ++i) {
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_dist_partition_index(d, tids[i], p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            printf("%s{\"p\":", i || r ? "," : "");
            dist_json_ints(p, e->ndim_p);
            printf(",\"y\":");
            dist_json_ints(y, e->ndim_y);
            printf(",\"x\":");
            dist_json_ints(x, e->ndim_x);
            printf(",\"d\":%lld}", r);
        }
    }
    printf("]");
    if (rep) {
        printf(",\"check\":{\"coverage_ok\":%s,\"expected_holders\":%lld",
               rep->coverage_ok ? "true" : "false", rep->expected_holders);
        if (!rep->coverage_ok) {
            printf(",\"first_bad_x\":");
            dist_json_ints(rep->first_bad_x, e->ndim_x);
            printf(",\"first_bad_holders\":%lld", rep->first_bad_holders);
        }
        printf(
            ",\"element_bytes\":%d,\"vector_y_dim\":%d,\"vector_elements\":%d,\"vector_bytes\":%d,"
            "\"accesses_per_thread\":%lld,\"warps\":%d,\"sectors\":%lld,\"sectors_min\":%lld,"
            "\"bank_ways\":%lld,\"bank_ways_min\":%lld,\"bank_ways_max\":%lld",
            rep->element_bytes, rep->vector_y_dim, rep->vector_elems, rep->vector_bytes,
            rep->accesses_per_thread, rep->warps, rep->sectors_total, rep->sectors_min_total,
            rep->bank_ways_total, rep->bank_ways_min_total, rep->bank_ways_max);
        printf(",\"misaligned_accesses\":%lld,\"masked_accesses\":%lld}", rep->misaligned_accesses,
               rep->masked_accesses);
    }
    if (traits)
        print_traits_json(e, traits);
    printf("}\n");
}

/* Rows x cols view of the tile: the last X dim is the column, the others the row. */
static void grid_shape(const ck_distribution *d, long long *rows, long long *cols)
{
    int nx = d->enc.ndim_x;
    *cols = d->x_lengths[nx - 1];
    *rows = d->tile_elements / *cols;
}

/* First holder (lowest thread id) and its register for every element; -1 when none. */
static int holders(const ck_distribution *d, long long **tid_out, long long **reg_out)
{
    long long n = d->tile_elements;
    long long *tid = malloc(sizeof *tid * (size_t)n), *reg = malloc(sizeof *reg * (size_t)n);
    if (!tid || !reg) {
        free(tid);
        free(reg);
        return -1;
    }
    for (long long i = 0; i < n; ++i)
        tid[i] = reg[i] = -1;
    for (long long t = 0; t < d->threads; ++t) {
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            long long lin = 0;
            for (int i = 0; i < d->enc.ndim_x; ++i)
                lin = lin * d->x_lengths[i] + x[i];
            if (tid[lin] < 0) {
                tid[lin] = t;
                reg[lin] = r;
            }
        }
    }
    *tid_out = tid;
    *reg_out = reg;
    return 0;
}

void dist_print_text(const ck_distribution *d, const dist_opts *o, const long long *tids,
                     long long ntid)
{
    const ck_dist_encoding *e = &d->enc;
    char buf[4096];
    if (ck_dist_encoding_format(e, buf, sizeof buf) == CK_SUCCESS)
        printf("encoding:  %s\n", buf);
    printf("X lengths: ");
    dist_text_ints(d->x_lengths, e->ndim_x);
    printf("  (tile of %lld elements)\nY lengths: ", d->tile_elements);
    dist_text_ints(d->y_lengths, e->ndim_y);
    printf("  (%lld elements per thread)\nP lengths: ", d->elements_per_thread);
    dist_text_ints(d->p_lengths, e->ndim_p);
    printf("  (%lld threads)\nR lengths: ", d->threads);
    dist_text_ints(e->r_lengths, e->ndim_r);
    printf("  (each element held by %lld thread%s)\n", d->replication,
           d->replication == 1 ? "" : "s");
    ck_dist_spans sp;
    ck_dist_get_spans(d, &sp);
    printf("spans:     ");
    for (int x = 0; x < e->ndim_x; ++x) {
        printf("%sX%d ", x ? ", " : "", x);
        dist_text_ints(sp.lengths[x], sp.count[x]);
    }
    printf("\n");
    if (o->npsel) {
        for (long long i = 0; i < ntid; ++i) {
            int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
            ck_dist_partition_index(d, tids[i], p);
            printf("\nthread %lld, P = ", tids[i]);
            dist_text_ints(p, e->ndim_p);
            printf(":\n");
            for (long long r = 0; r < d->elements_per_thread; ++r) {
                ck_dist_d_to_ys(d, r, y);
                ck_dist_calculate_x(d, p, y, x);
                printf("  d %-4lld Y ", r);
                dist_text_ints(y, e->ndim_y);
                printf(" -> X ");
                dist_text_ints(x, e->ndim_x);
                printf("\n");
            }
        }
        return;
    }
    long long rows, cols, *tid, *reg;
    grid_shape(d, &rows, &cols);
    if (cols > 64 || rows > 256) {
        printf("\nmap omitted: the tile is %lld x %lld; use --p, --json or --svg.\n", rows, cols);
        return;
    }
    if (holders(d, &tid, &reg))
        return;
    printf("\nmap: thread:register of each element%s (rows: ",
           d->replication > 1 ? " (lowest holder)" : "");
    for (int x = 0; x + 1 < e->ndim_x; ++x)
        printf("%sX%d", x ? "," : "", x);
    printf("%s, columns: X%d)\n", e->ndim_x > 1 ? "" : "-", e->ndim_x - 1);
    int width = snprintf(NULL, 0, "%lld:%lld", d->threads - 1, d->elements_per_thread - 1) + 1;
    printf("%6s", "");
    for (long long c = 0; c < cols; ++c)
        printf("%*lld", width, c);
    printf("\n");
    for (long long r = 0; r < rows; ++r) {
        printf("%5lld ", r);
        for (long long c = 0; c < cols; ++c) {
            char cell[48];
            snprintf(cell, sizeof cell, "%lld:%lld", tid[r * cols + c], reg[r * cols + c]);
            printf("%*s", width, cell);
        }
        printf("\n");
    }
    free(tid);
    free(reg);
}

void dist_print_check(const ck_distribution *d, const dist_opts *o, const ck_access_report *rep,
                      const ck_load_store_traits *traits)
{
    const ck_access_layout *lay = &o->layout;
    static const char *const modes[] = {"none", "32B", "64B", "128B"};
    if (o->desc_text) {
        printf("\ncheck: %d-byte elements (%s), descriptor %s\n", rep->element_bytes,
               ck_dtype_name(o->dtype), o->desc_text);
    } else {
        printf("\ncheck: %d-byte elements, element strides [", rep->element_bytes);
        for (int i = 0; i < lay->ndim; ++i)
            printf("%s%lld", i ? ", " : "", lay->strides[i]);
        printf("]\n");
    }
    printf("       element 0 at byte %lld, swizzle %s\n", lay->base_bytes, modes[lay->swizzle & 3]);
    if (rep->coverage_ok) {
        printf("  coverage:       ok, every element held by exactly %lld thread%s\n",
               rep->expected_holders, rep->expected_holders == 1 ? "" : "s");
    } else {
        printf("  coverage:       FAILED, element X ");
        dist_text_ints(rep->first_bad_x, d->enc.ndim_x);
        printf(" is held by %lld threads, expected %lld\n", rep->first_bad_holders,
               rep->expected_holders);
    }
    if (rep->vector_y_dim >= 0)
        printf("  vectors:        %d elements (%d bytes) along Y%d\n", rep->vector_elems,
               rep->vector_bytes, rep->vector_y_dim);
    else
        printf("  vectors:        scalar (%d bytes)\n", rep->vector_bytes);
    if (traits)
        print_traits_text(&d->enc, traits);
    printf("  accesses:       %lld per thread, %d warp%s\n", rep->accesses_per_thread, rep->warps,
           rep->warps == 1 ? "" : "s");
    if (rep->misaligned_accesses || rep->masked_accesses)
        printf("  lane accesses:  %lld misaligned, %lld on padding (masked)\n",
               rep->misaligned_accesses, rep->masked_accesses);
    printf("  global memory:  %lld sectors, minimum %lld (%.1f%% efficiency)\n", rep->sectors_total,
           rep->sectors_min_total,
           rep->sectors_total ? 100.0 * (double)rep->sectors_min_total / (double)rep->sectors_total
                              : 100.0);
    printf("  shared memory:  %lld wavefronts, minimum %lld; worst access %lld-way\n",
           rep->bank_ways_total, rep->bank_ways_min_total, rep->bank_ways_max);
    printf("  per access of warp 0:\n    access  sectors  min  bank-ways  min\n");
    for (long long i = 0; i < rep->num_stats; ++i) {
        const ck_access_stat *s = &rep->stats[i];
        if (s->warp == 0 && s->access < 16)
            printf("    %6lld  %7lld  %3lld  %9lld  %3lld\n", s->access, s->sectors, s->sectors_min,
                   s->bank_ways, s->bank_ways_min);
    }
    if (rep->accesses_per_thread > 16)
        printf("    ... %lld more accesses (--json gives the totals)\n",
               rep->accesses_per_thread - 16);
}
