/*
 * ck/elementwise.h - copy, cast and fused elementwise operations of the client API.
 *
 * All three are memory-bound operations on ck_tensor descriptions (ck/context.h) of the
 * context's device, queued on the context's stream. Common rules:
 *   - A tensor with no elements makes the call a successful no-op (nothing is launched).
 *   - Strides are in elements and may be anything >= 0 (0 = broadcast, for inputs only), except
 *     for the sub-byte types fp4 and fp6, which must be packed and contiguous.
 *   - The destination must not overlap an input, except exactly (same data pointer and same
 *     layout), which ck_copy treats as a no-op, ck_cast allows between types of the same
 *     storage size and ck_elementwise allows always (each element is read before it is written,
 *     by the same thread).
 *   - Data pointers must be aligned to the element size. Contiguous tensors whose pointers are
 *     16-byte aligned take the vectorized path (16-byte loads and stores); others take a
 *     general path (scalar, coalesced along the destination's innermost dimension).
 * Errors: CK_ERROR_INVALID_ARGUMENT (null or invalid descriptions, shape or broadcast mismatch,
 * overlap, bad options), CK_ERROR_UNSUPPORTED (sub-byte layouts, dtypes an op does not take),
 * CK_ERROR_PARSE (ck_ew_parse), with a sentence in ck_last_error(); docs/ops-elementwise.md.
 */
#ifndef CK_ELEMENTWISE_H
#define CK_ELEMENTWISE_H

#include <stddef.h>

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src: same shape and dtype (any, fp4/fp6 included), any strides. The bytes of every
 * element are copied unchanged (NaN payloads kept). */
ck_status ck_copy(ck_context *ctx, const ck_tensor *src, ck_tensor *dst);

/* dst = convert(src * opt->scale) between any two numeric types, bit for bit as
 * ck_convert_array (rounding mode, overflow mode, scale, stochastic seed); opt NULL:
 * the defaults of ck_convert_options_init. dst and src have the same shape. Under stochastic
 * rounding element i (its row-major index in the shape) uses the random word ck_nc_rand_word(seed,
 * i), as ck_convert_array does for a contiguous array. Equal types with scale 1 copy the codes. */
ck_status ck_cast(ck_context *ctx, const ck_tensor *src, ck_tensor *dst,
                  const ck_convert_options *opt);

/* ---- fused elementwise ------------------------------------------------------------------
 * A program is a short sequence of steps in reverse Polish notation, evaluated per element on
 * a stack of values: CK_EW_INPUT pushes input `input` (loaded and widened to the compute
 * type), CK_EW_CONST pushes `value`, unary ops replace the top, binary ops pop b then a and
 * push (a op b). The program leaves exactly one value, which is rounded to the destination's
 * dtype (nearest even, the type's default overflow, as ck_convert_from_f32). Compute type:
 * fp32, or fp64 when an input or the destination is f64. */
typedef enum ck_ew_opcode {
    CK_EW_INPUT = 0,    /* push inputs[input] */
    CK_EW_CONST,        /* push value */
    CK_EW_ADD,          /* a + b */
    CK_EW_SUB,          /* a - b */
    CK_EW_MUL,          /* a * b */
    CK_EW_DIV,          /* a / b (IEEE division) */
    CK_EW_MAX,          /* fmax(a, b): a NaN operand gives the other */
    CK_EW_MIN,          /* fmin(a, b) */
    CK_EW_NEG,          /* -a */
    CK_EW_RELU,         /* a < 0 ? 0 : a (NaN propagates) */
    CK_EW_GELU_TANH,    /* 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))) */
    CK_EW_GELU_ERF,     /* 0.5 a (1 + erf(a / sqrt(2))) */
    CK_EW_SILU,         /* a / (1 + exp(-a)) */
    CK_EW_SIGMOID,      /* 1 / (1 + exp(-a)) */
    CK_EW_EXP,          /* exp(a) */
    CK_EW_SCALE,        /* a * value */
    CK_EW_CAST,         /* round a to `dtype` (nearest even, default overflow) and widen back */
    CK_EW_OPCODE_COUNT_ /* not an opcode */
} ck_ew_opcode;

enum { CK_EW_MAX_INPUTS = 4, CK_EW_MAX_STEPS = 64 };

typedef struct ck_ew_step {
    ck_ew_opcode op;
    int input;      /* CK_EW_INPUT: 0 .. CK_EW_MAX_INPUTS - 1 */
    double value;   /* CK_EW_CONST, CK_EW_SCALE (rounded to fp32 when computing in fp32) */
    ck_dtype dtype; /* CK_EW_CAST: a float type (f32 f64 f16 bf16 tf32 fp8* fp6* fp4) */
} ck_ew_step;

typedef struct ck_ew_program {
    int count;
    ck_ew_step steps[CK_EW_MAX_STEPS];
} ck_ew_program;

/* Parse an expression into *prog. Grammar: + - (left associative) below * / below unary
 * minus; primaries are numbers (C syntax: 2, 0.5, 1e-3), inputs x0..x3 (also a, b, c, d) and
 * calls: relu(e) gelu(e) (= gelu_tanh) gelu_tanh(e) gelu_erf(e) silu(e) sigmoid(e) exp(e)
 * neg(e) max(e, e) min(e, e) add(e, e) sub(e, e) mul(e, e) div(e, e) scale(e, number)
 * cast(e, dtype-name). Example: "relu(x0 * x1 + x2)", "cast(silu(x0), bf16) * x1".
 * Errors: CK_ERROR_PARSE with the position and what was expected; more than
 * CK_EW_MAX_STEPS steps: CK_ERROR_UNSUPPORTED. */
ck_status ck_ew_parse(const char *text, ck_ew_program *prog);

/* Write the program as an expression (the syntax ck_ew_parse reads) into buf. Errors as
 * ck_ew_check with no inputs given (CK_ERROR_INVALID_ARGUMENT), or a buffer too small
 * (CK_ERROR_OVERFLOW). */
ck_status ck_ew_format(const ck_ew_program *prog, char *buf, size_t size);

/* Check a program on its own: known opcodes, stack use (no underflow, one value left), input
 * indices below input_count, cast dtypes floating point, finite constants. */
ck_status ck_ew_check(const ck_ew_program *prog, int input_count);

/* dst = program(inputs[0], ..., inputs[input_count - 1]) for every element of dst.
 * 1 <= input_count <= CK_EW_MAX_INPUTS. Inputs broadcast to dst's shape with numpy's rules
 * (shapes aligned at the last dimension; each input dimension equals dst's or is 1; missing
 * leading dimensions count as 1) and may have stride-0 dimensions of their own. Dtypes: the
 * float types (f32 f64 f16 bf16 tf32 fp8 variants; fp6 and fp4 packed) and i8 u8 i32 (read
 * exactly as numbers; a destination integer type saturates, NaN -> 0). */
ck_status ck_elementwise(ck_context *ctx, const ck_ew_program *prog, const ck_tensor *inputs,
                         int input_count, ck_tensor *dst);

/* Parse `expr` and run it (ck_ew_parse + ck_elementwise). */
ck_status ck_elementwise_expr(ck_context *ctx, const char *expr, const ck_tensor *inputs,
                              int input_count, ck_tensor *dst);

#ifdef __cplusplus
}
#endif
#endif
