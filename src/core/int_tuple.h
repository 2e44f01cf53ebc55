/*
 * Internal helpers of ck_int_tuple (include/ck/layout.h) shared with layout.c:
 * structural validation, parsing of a text span and bounded text output.
 */
#ifndef CK_SRC_CORE_INT_TUPLE_H
#define CK_SRC_CORE_INT_TUPLE_H

#include <stddef.h>

#include "ck/layout.h"

/* Check that `t` is a well-formed tree (counts, spans, ranks, kinds, depth).
 * On failure records a sentence "func: argument 'arg' ..." and returns
 * CK_ERROR_INVALID_ARGUMENT. Does not restrict the kinds of leaves. */
ck_status ck_int_tuple_check(const ck_int_tuple *t, const char *func, const char *arg);

/* Parse text[0..n). With implicit_root, the text is the comma-separated list of
 * the root's children without the enclosing parentheses ("4,(2,4)"); the
 * text "()" then means the empty root. `func` and `what` name the caller and
 * the text in error messages. */
ck_status ck_int_tuple_parse_span(const char *text, size_t n, int implicit_root, ck_int_tuple *out,
                                  const char *func, const char *what);

/* Bounded text output: `len` counts every character asked for, even those
 * that did not fit, so the needed size is len + 1. */
typedef struct ck_text {
    char *buf;
    size_t size;
    size_t len;
} ck_text;

void ck_text_init(ck_text *text, char *buf, size_t size);
void ck_text_puts(ck_text *text, const char *s);

/* Append the subtree of `t` at `node`; with omit_parens the parentheses of
 * that node (if it is a tuple of rank >= 1) are left out. */
void ck_int_tuple_write(ck_text *text, const ck_int_tuple *t, int node, int omit_parens);

/* Return CK_SUCCESS when everything fit, else CK_ERROR_INVALID_ARGUMENT with a
 * sentence naming the size needed (and leave an empty string in buf). */
ck_status ck_text_finish(ck_text *text, const char *func);

#endif
