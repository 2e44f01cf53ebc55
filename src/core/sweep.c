/*
 * Sweep order over a distributed tensor (CK's sweep_tile): the distributed spans of X0
 * outermost, then X1, ..., each span row-major over the Y dims naming X's H components, in
 * Y order (CK's span minor order).
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
    /* Innermost = the last Y dim of the last X dim's span: decompose from the end. */
    const ck_dist_encoding *e = &dist->enc;
    for (int x = e->ndim_x - 1; x >= 0; --x)
        for (int j = e->ndim_y - 1; j >= 0; --j) {
            if (e->y_major[j] - 1 != x)
                continue;
            y[j] = (int)(i % dist->y_lengths[j]);
            i /= dist->y_lengths[j];
        }
    return CK_SUCCESS;
}
