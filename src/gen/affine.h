/*
 * Affine forms of symbolic expressions (src/gen): x = k + sum coef_i * atom_i, where an atom is
 * any sub-expression that is not a sum, difference, constant or constant multiple (a symbol,
 * a quotient, a remainder, a product of two non-constants, ...). Atoms are compared
 * structurally (ck_ival_equal). Used to fold per-access offsets into one base plus constants
 * (or constant x stride terms) and by ck_gen_simplify's division rules.
 */
#ifndef CK_SRC_GEN_AFFINE_H
#define CK_SRC_GEN_AFFINE_H

#include <stddef.h>

#include "core/expr.h"

enum { CK_AFFINE_MAX_TERMS = 48 };

typedef struct ck_affine {
    int n;
    ck_ival atom[CK_AFFINE_MAX_TERMS];
    int64_t coef[CK_AFFINE_MAX_TERMS]; /* never 0 */
    int64_t k;
} ck_affine;

/* Decompose x. CK_ERROR_OVERFLOW when a coefficient overflows int64, CK_ERROR_UNSUPPORTED
 * when more than CK_AFFINE_MAX_TERMS distinct atoms appear. */
ck_status ck_affine_from(ck_ival x, ck_affine *out);

/* out = a + scale * b. */
ck_status ck_affine_axpy(const ck_affine *a, int64_t scale, const ck_affine *b, ck_affine *out);

/* Rebuild an expression (atoms in the order kept by the form; ctx is needed only when the form
 * has atoms, and is taken from them). */
ck_status ck_affine_to_ival(const ck_affine *a, ck_ival *out);

/* Print as C ("k", or "c*atom + ... + k"); like snprintf, returns the length needed. */
size_t ck_affine_print(const ck_affine *a, char *buf, size_t size);

/* Sort the atoms by their printed text (a canonical order). */
void ck_affine_sort(ck_affine *a);

/* Simplify x: children first, then sums as canonical affine forms (like terms combined,
 * atoms ordered), and floor division / modulo by a positive constant c using ranges: with
 * x = c*Q + R where R collects the terms whose coefficients are not multiples of c, when the
 * known range of R lies in [0, c) then x / c = Q and x mod c = R (so (a*32 + b) / 32 -> a and
 * (tid % 32) / 32 -> 0 when 0 <= b < 32); a quotient or remainder decided by the range of
 * its dividend folds to a constant or to the dividend. The result equals x for every binding
 * of the symbols within their declared ranges and divisors. */
ck_status ck_gen_simplify(ck_ival x, ck_ival *out);

#endif
