/* Random valid tile distribution encodings for the distribution tests (seeded). */
#ifndef CK_TESTS_DIST_RANDOM_H
#define CK_TESTS_DIST_RANDOM_H

#include <string.h>

#include "ck/distribution.h"
#include "test.h"

static int dr_uniform(uint64_t *s, int lo, int hi) /* inclusive */
{
    return lo + (int)(ckt_rand64(s) % (uint64_t)(hi - lo + 1));
}

/* A random valid encoding with ndim_x X dims and ndim_p P dims (-1: random), small sizes. */
static void dr_encoding(uint64_t *s, int ndim_x, int ndim_p, ck_dist_encoding *e)
{
    for (;;) {
        memset(e, 0, sizeof *e);
        e->ndim_x = ndim_x > 0 ? ndim_x : dr_uniform(s, 1, 3);
        e->ndim_p = ndim_p >= 0 ? ndim_p : dr_uniform(s, 0, 3);
        e->ndim_r = dr_uniform(s, 0, 2);
        long long total = 1;
        for (int r = 0; r < e->ndim_r; ++r) {
            e->r_lengths[r] = e->ndim_p ? dr_uniform(s, 1, 3) : 1;
            total *= e->r_lengths[r];
            if (e->ndim_p && dr_uniform(s, 0, 3) != 0) {
                int p = dr_uniform(s, 0, e->ndim_p - 1);
                int n = e->p_size[p]++;
                e->p_major[p][n] = 0;
                e->p_minor[p][n] = r;
            } else {
                e->r_lengths[r] = 1; /* unowned R must have length 1 */
            }
        }
        for (int x = 0; x < e->ndim_x; ++x) {
            e->ndim_h[x] = dr_uniform(s, 1, 3);
            for (int k = 0; k < e->ndim_h[x]; ++k) {
                e->h_lengths[x][k] = dr_uniform(s, 1, 4);
                total *= e->h_lengths[x][k];
                if (e->ndim_p && dr_uniform(s, 0, 1)) {
                    int p = dr_uniform(s, 0, e->ndim_p - 1);
                    int n = e->p_size[p]++;
                    e->p_major[p][n] = x + 1;
                    e->p_minor[p][n] = k;
                } else {
                    int n = e->ndim_y++;
                    e->y_major[n] = x + 1;
                    e->y_minor[n] = k;
                }
            }
        }
        if (total > 4096 || e->ndim_y > CK_DIST_MAX_Y)
            continue;
        /* Shuffle the Y dims and each P's entries (Fisher-Yates). */
        for (int i = e->ndim_y - 1; i > 0; --i) {
            int j = dr_uniform(s, 0, i), t;
            t = e->y_major[i], e->y_major[i] = e->y_major[j], e->y_major[j] = t;
            t = e->y_minor[i], e->y_minor[i] = e->y_minor[j], e->y_minor[j] = t;
        }
        for (int p = 0; p < e->ndim_p; ++p)
            for (int i = e->p_size[p] - 1; i > 0; --i) {
                int j = dr_uniform(s, 0, i), t;
                t = e->p_major[p][i], e->p_major[p][i] = e->p_major[p][j], e->p_major[p][j] = t;
                t = e->p_minor[p][i], e->p_minor[p][i] = e->p_minor[p][j], e->p_minor[p][j] = t;
            }
        return;
    }
}

#endif
