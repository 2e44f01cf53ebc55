/*
 * Minimal test harness for ck's C tests. Each check that fails prints the
 * file, line, expression and values, and the program exits non-zero at the
 * end. Every test program ends with CK_TEST_REPORT() which prints
 * "N passed, N failed".
 */
#ifndef CK_TESTS_TEST_H
#define CK_TESTS_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ck/status.h"

static long ckt_pass_;
static long ckt_fail_;
static int ckt_fail_printed_;

#define CKT_FAIL_(...)                                                                             \
    do {                                                                                           \
        ++ckt_fail_;                                                                               \
        if (ckt_fail_printed_++ < 50) {                                                            \
            fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__);                                \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            ++ckt_pass_;                                                                           \
        else                                                                                       \
            CKT_FAIL_("%s", #cond);                                                                \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (cond)                                                                                  \
            ++ckt_pass_;                                                                           \
        else                                                                                       \
            CKT_FAIL_(__VA_ARGS__);                                                                \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long ckt_a_ = (long long)(a), ckt_b_ = (long long)(b);                                \
        if (ckt_a_ == ckt_b_)                                                                      \
            ++ckt_pass_;                                                                           \
        else                                                                                       \
            CKT_FAIL_("%s == %s (%lld vs %lld)", #a, #b, ckt_a_, ckt_b_);                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *ckt_a_ = (a), *ckt_b_ = (b);                                                   \
        if (ckt_a_ && ckt_b_ && strcmp(ckt_a_, ckt_b_) == 0)                                       \
            ++ckt_pass_;                                                                           \
        else                                                                                       \
            CKT_FAIL_("%s == %s (\"%s\" vs \"%s\")", #a, #b, ckt_a_ ? ckt_a_ : "(null)",           \
                      ckt_b_ ? ckt_b_ : "(null)");                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double ckt_a_ = (double)(a), ckt_b_ = (double)(b);                                         \
        if (fabs(ckt_a_ - ckt_b_) <= (tol))                                                        \
            ++ckt_pass_;                                                                           \
        else                                                                                       \
            CKT_FAIL_("%s ~= %s (%.17g vs %.17g, tol %g)", #a, #b, ckt_a_, ckt_b_, (double)(tol)); \
    } while (0)

/* Check that expr returns `st` and that a failing status comes with a sentence. */
#define CHECK_STATUS(expr, st)                                                                     \
    do {                                                                                           \
        ck_status ckt_s_ = (expr);                                                                 \
        if (ckt_s_ != (st))                                                                        \
            CKT_FAIL_("%s returned %s, expected %s (%s)", #expr, ck_status_string(ckt_s_),         \
                      ck_status_string(st), ck_last_error());                                      \
        else if (ckt_s_ != CK_SUCCESS && strlen(ck_last_error()) < 20)                             \
            CKT_FAIL_("%s: error message too short: \"%s\"", #expr, ck_last_error());              \
        else                                                                                       \
            ++ckt_pass_;                                                                           \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, CK_SUCCESS)

/* Run one test function and name it in the output. */
#define RUN_TEST(fn)                                                                               \
    do {                                                                                           \
        long ckt_before_ = ckt_fail_;                                                              \
        fn();                                                                                      \
        printf("%-50s %s\n", #fn, ckt_fail_ == ckt_before_ ? "ok" : "FAILED");                     \
        fflush(stdout);                                                                            \
    } while (0)

#define CK_TEST_REPORT()                                                                           \
    (printf("%ld passed, %ld failed\n", ckt_pass_, ckt_fail_), ckt_fail_ ? 1 : 0)

/* Small deterministic PRNG (splitmix64) so failures reproduce; seed is printed by tests. */
static inline uint64_t ckt_rand64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
