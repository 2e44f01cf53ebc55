/*
 * Sweep order over a distributed tensor (CK's sweep_tile): the distributed spans of X0
 * outermost, then X1, ..., each span row-major over its Y-owned H components in minor order.
 * Every Y index (register) of a thread is visited exactly once.
 */
#include "ck/distribution.h"
#include "core/error.h"

ck_status ck_dist_sweep_index(const ck_distribution *dist, long long i, int *y)
{
    static const char *fn = "ck_dist_sweep_index";
    CK_REQUIRE_NOT_NULL(dist, fn);
    if (i < 0 || i >= dist->elements_per_thread)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: sweep step %lld is out of range [0, %lld).",
                       fn, i, dist->elements_per_thread);
    if (dist->enc.ndim_y > 0)
        CK_REQUIRE_NOT_NULL(y, fn);
    /* Innermost = last X dim's last Y-owned component: decompose from the end. */
    const ck_dist_encoding *e = &dist->enc;
    for (int x = e->ndim_x - 1; x >= 0; --x)
        for (int k = e->ndim_h[x] - 1; k >= 0; --k) {
            int yd = dist->h_owner[x][k];
            if (yd < 0)
                continue;
            y[yd] = (int)(i % e->h_lengths[x][k]);
            i /= e->h_lengths[x][k];
        }
    return CK_SUCCESS;
}
