/*
 * Magic-number division: n / d computed as (umulhi(n, mul) + n) >> shift for
 * 0 <= n < 2^31 and 1 <= d <= 2^31 (the round-up method of Granlund and
 * Montgomery, as CK's MagicDivision uses it).
 */
#ifndef CK_SRC_CORE_MAGIC_DIV_H
#define CK_SRC_CORE_MAGIC_DIV_H

#include <stdint.h>

enum { CK_MAGIC_MAX_DIVIDEND = 0x7fffffff };

/* Multiplier and shift for divisor d in [1, 2^31]. */
static inline void ck_magic_div_init(uint32_t d, uint32_t *mul, uint32_t *shift)
{
    uint32_t s = 0;
    while (((uint64_t)1 << s) < d)
        ++s;
    uint64_t m = ((((uint64_t)1 << s) - d) << 32) / d + 1;
    *mul = (uint32_t)m;
    *shift = s;
}

/* n / d for n in [0, 2^31). */
static inline uint32_t ck_magic_div(uint32_t n, uint32_t mul, uint32_t shift)
{
    uint64_t hi = ((uint64_t)n * mul) >> 32;
    return (uint32_t)((hi + n) >> shift);
}

#endif
