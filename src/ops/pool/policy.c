/*
 * The pooling policy: a memory-bound op, so the widest access. The vector is the widest power
 * of two (up to 16 bytes, and no wider than the pointers' alignment allows) dividing C; a tile row
 * spans tc channels, a power-of-two number of vectors (up to 8, 128 bytes; up to 32 threads when
 * elements go one by one) that divides C, so that moving the view's origin by C steps exactly one
 * tap; 128 threads, each holding two rows of the tile.
 */
#include "ops/pool/pool_internal.h"

/* the accesses of a run of n elements of b bytes: at most 16 bytes each */
static int access_bytes(int n, int b)
{
    return n * b < 16 ? n * b : 16;
}

void ck_pool_policy(const ck_pool_prob *r, int align, ck_pool_instance *in)
{
    int64_t c = r->p.c;
    int vec = 1;
    while (vec * 2 * r->es <= 16 && c % (vec * 2) == 0 && vec * 2 * r->es <= align &&
           (!r->is || access_bytes(vec * 2, r->is) <= align))
        vec *= 2;
    int cap = vec >= 4 ? 8 : 32, tct = 1;
    while (tct < cap && (c / vec) % (tct * 2) == 0)
        tct *= 2;
    in->vec = vec;
    in->threads = 128;
    in->tc = vec * tct;
    in->tm = in->threads / tct * 2;
}
