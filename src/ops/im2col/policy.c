/*
 * ck_im2col's policy: a memory-bound copy, so the instance maximizes the access width. The
 * vector is the widest power of two (up to 16 bytes, and no wider than the pointers' alignment)
 * dividing C: a run of C channels is the
 * only contiguous piece of a row of the view (and K = filter * C keeps the matrix's rows
 * aligned to it). A row of the tile spans up to 8 such vectors (128 bytes) -- 32 threads when
 * the elements go one by one -- and each of the 128 threads moves 4 vectors.
 */
#include "ops/im2col/im2col_internal.h"

void ck_im2col_policy(const ck_im2col_prob *r, int align, ck_im2col_instance *in)
{
    int vec = 1;
    while (vec * 2 * r->es <= 16 && vec * 2 * r->es <= align && r->q.p.c % (vec * 2) == 0)
        vec *= 2;
    int64_t need = (r->k + vec - 1) / vec; /* vectors per row */
    int cap = vec >= 4 ? 8 : 32, tkt = 1;
    while (tkt < cap && tkt < need)
        tkt *= 2;
    in->vec = vec;
    in->threads = 128;
    in->tk = vec * tkt;
    in->tm = in->threads / tkt * 4;
}
