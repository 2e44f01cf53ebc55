/* Space-filling curve: §7.13's examples (ERRATA: exact divisibility, snake on by default) and
 * properties on random curves: each access once, steps consistent, snake neighbours adjacent. */
#include <stdlib.h>

#include "ck/distribution.h"
#include "test.h"

static void expect_sequence(const ck_sfc *s, const int (*want)[2], int n)
{
    for (int i = 0; i < n; ++i) {
        int idx[2];
        CHECK_OK(ck_sfc_get_index(s, i, idx));
        CHECK_MSG(idx[0] == want[i][0] && idx[1] == want[i][1],
                  "access %d: got [%d,%d], want [%d,%d]", i, idx[0], idx[1], want[i][0],
                  want[i][1]);
    }
}

static void test_examples(void)
{
    ck_sfc s;
    int len46[2] = {4, 6}, rm[2] = {0, 1}, cm[2] = {1, 0}, one[2] = {1, 1};
    CHECK_OK(ck_sfc_init(&s, 2, len46, rm, one, 0));
    CHECK_EQ_INT(s.num_access, 24);
    static const int rowmajor[][2] = {{0, 0}, {0, 1}, {0, 2}, {0, 3},
                                      {0, 4}, {0, 5}, {1, 0}, {1, 1}};
    expect_sequence(&s, rowmajor, 8);
    CHECK_OK(ck_sfc_init(&s, 2, len46, cm, one, 0));
    static const int colmajor[][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}};
    expect_sequence(&s, colmajor, 5);
    /* Vector-4 on dim 1 of a 4x8 tensor: row 0 cols 0 and 4, then row 1. */
    int len48[2] = {4, 8}, v4[2] = {1, 4};
    CHECK_OK(ck_sfc_init(&s, 2, len48, rm, v4, 0));
    CHECK_EQ_INT(s.num_access, 8);
    static const int vec[][2] = {{0, 0}, {0, 4}, {1, 0}, {1, 4}, {2, 0}};
    expect_sequence(&s, vec, 5);
    /* Snake: rows 1 and 3 reversed. */
    CHECK_OK(ck_sfc_init(&s, 2, len48, rm, one, 1));
    for (int i = 0; i < 32; ++i) {
        int idx[2], r = i / 8, c = i % 8;
        CHECK_OK(ck_sfc_get_index(&s, i, idx));
        CHECK_EQ_INT(idx[0], r);
        CHECK_EQ_INT(idx[1], r % 2 ? 7 - c : c);
    }
    /* GEMM tile 16x32, column-major order, vector-8: 64 accesses. 3-D: 4*4*4 = 64. */
    int len1632[2] = {16, 32}, v8[2] = {1, 8};
    CHECK_OK(ck_sfc_init(&s, 2, len1632, cm, v8, 0));
    CHECK_EQ_INT(s.num_access, 64);
    int len3[3] = {4, 8, 16}, o3[3] = {0, 1, 2}, v3[3] = {1, 2, 4};
    CHECK_OK(ck_sfc_init(&s, 3, len3, o3, v3, 1));
    CHECK_EQ_INT(s.num_access, 64);
    /* Steps: snake 2x3 — forward from (0,2) is (1,2) - (0,2) = (+1, 0). */
    int len23[2] = {2, 3}, step[2];
    CHECK_OK(ck_sfc_init(&s, 2, len23, rm, one, 1));
    CHECK_OK(ck_sfc_forward_step(&s, 2, step));
    CHECK_EQ_INT(step[0], 1);
    CHECK_EQ_INT(step[1], 0);
    CHECK_OK(ck_sfc_backward_step(&s, 4, step)); /* index 4 = (1,1), index 3 = (1,2) */
    CHECK_EQ_INT(step[0], 0);
    CHECK_EQ_INT(step[1], 1);
}

static void test_bad_input(void)
{
    ck_sfc s;
    int len57[2] = {5, 7}, rm[2] = {0, 1}, v23[2] = {2, 3}, bad_order[2] = {0, 0}, one[2] = {1, 1};
    /* §7.13.7's 5x7 with 2x3 accesses: CK requires exact divisibility (ERRATA). */
    CHECK_STATUS(ck_sfc_init(&s, 2, len57, rm, v23, 1), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "scalars_per_access[0] = 2") != NULL);
    CHECK_STATUS(ck_sfc_init(&s, 2, len57, bad_order, one, 1), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_sfc_init(&s, 0, len57, rm, one, 1), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_sfc_init(&s, 2, NULL, rm, one, 1), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_sfc_init(&s, 2, len57, rm, one, 1));
    int idx[2];
    CHECK_STATUS(ck_sfc_get_index(&s, 35, idx), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_sfc_get_index(&s, -1, idx), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_sfc_forward_step(&s, 34, idx), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_sfc_backward_step(&s, 0, idx), CK_ERROR_INVALID_ARGUMENT);
}

/* Independent model: enumerate nested loops in access order with explicit direction flags. */
static void reference_walk(const ck_sfc *s, int *out /* num_access x ndim */)
{
    int n = s->ndim, ctr[CK_SFC_MAX_DIMS] = {0};
    long long count = 0;
    /* Odometer over ordered dims; with snake, an inner dim reverses each time any outer dim ticks.
     */
    int dir[CK_SFC_MAX_DIMS], pos[CK_SFC_MAX_DIMS];
    for (int k = 0; k < n; ++k) {
        dir[k] = 1;
        pos[k] = 0;
    }
    for (;;) {
        for (int k = 0; k < n; ++k) {
            int d = s->dim_access_order[k];
            out[count * n + d] = pos[k] * s->scalars_per_access[d];
        }
        ++count;
        int k = n - 1;
        for (; k >= 0; --k) {
            int len = s->access_lengths[s->dim_access_order[k]];
            if (ctr[k] + 1 < len) {
                ++ctr[k];
                pos[k] += s->snake ? dir[k] : 1;
                break;
            }
            ctr[k] = 0;
            if (s->snake)
                dir[k] = -dir[k]; /* stays at its end and turns around */
            else
                pos[k] = 0;
        }
        if (k < 0)
            break;
    }
}

static void test_random(void)
{
    uint64_t seed = 0xC0FFEE17ULL, st = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    long long bad_ref = 0, bad_once = 0, bad_step = 0, bad_adj = 0;
    for (int iter = 0; iter < 300; ++iter) {
        int n = 1 + (int)(ckt_rand64(&st) % 4), len[4], ord[4], sc[4];
        for (int d = 0; d < n; ++d) {
            sc[d] = 1 + (int)(ckt_rand64(&st) % 3);
            len[d] = sc[d] * (1 + (int)(ckt_rand64(&st) % 4));
            ord[d] = d;
        }
        for (int d = n - 1; d > 0; --d) {
            int j = (int)(ckt_rand64(&st) % (uint64_t)(d + 1)), t = ord[d];
            ord[d] = ord[j];
            ord[j] = t;
        }
        int snake = (int)(ckt_rand64(&st) & 1);
        ck_sfc s;
        CHECK_OK(ck_sfc_init(&s, n, len, ord, sc, snake));
        int *ref = malloc(sizeof(int) * (size_t)(s.num_access * n));
        reference_walk(&s, ref);
        long long total = 1;
        for (int d = 0; d < n; ++d)
            total *= len[d];
        char *seen = calloc((size_t)total, 1);
        int prev[4] = {0};
        for (long long i = 0; i < s.num_access; ++i) {
            int idx[4], fs[4], bs[4];
            ck_sfc_get_index(&s, i, idx);
            long long lin = 0;
            int manhattan = 0;
            for (int d = 0; d < n; ++d) {
                bad_ref += idx[d] != ref[i * n + d];
                bad_once += idx[d] % sc[d] != 0;
                lin = lin * len[d] + idx[d];
                if (i > 0)
                    manhattan += abs(idx[d] - prev[d]) / sc[d];
            }
            bad_once += seen[lin]++ != 0;
            if (i > 0 && snake)
                bad_adj += manhattan != 1;
            if (i + 1 < s.num_access) {
                int nxt[4];
                ck_sfc_forward_step(&s, i, fs);
                ck_sfc_get_index(&s, i + 1, nxt);
                for (int d = 0; d < n; ++d)
                    bad_step += idx[d] + fs[d] != nxt[d];
            }
            if (i > 0) {
                ck_sfc_backward_step(&s, i, bs);
                for (int d = 0; d < n; ++d)
                    bad_step += idx[d] + bs[d] != prev[d];
            }
            memcpy(prev, idx, sizeof prev);
        }
        free(seen);
        free(ref);
    }
    CHECK_EQ_INT(bad_ref, 0);
    CHECK_EQ_INT(bad_once, 0);
    CHECK_EQ_INT(bad_step, 0);
    CHECK_EQ_INT(bad_adj, 0);
}

int main(void)
{
    RUN_TEST(test_examples);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_random);
    return CK_TEST_REPORT();
}
