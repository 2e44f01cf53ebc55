/*
 * The elementwise CPU reference (ew_internal.h): a program evaluated in double precision, the
 * one test_elementwise_ops and `ck prof elementwise` check ck_elementwise against. Constants
 * and scales are rounded to f32 as the kernels take them; casts round through the target type.
 */
#include <math.h>

#include "ck/types.h"
#include "ops/elementwise/ew_internal.h"

double ck_ew_reference(const ck_ew_program *p, const double *x)
{
    double st[CK_EW_MAX_STEPS];
    int sp = 0;
    for (int i = 0; i < p->count; ++i) {
        const ck_ew_step *s = &p->steps[i];
        double a = 0, b = 0, r = 0;
        if (s->op >= CK_EW_ADD && s->op <= CK_EW_MIN) {
            b = st[--sp];
            a = st[--sp];
        } else if (s->op != CK_EW_INPUT && s->op != CK_EW_CONST) {
            a = st[--sp];
        }
        switch (s->op) {
        case CK_EW_INPUT:
            r = x[s->input];
            break;
        case CK_EW_CONST:
            r = (double)(float)s->value;
            break;
        case CK_EW_ADD:
            r = a + b;
            break;
        case CK_EW_SUB:
            r = a - b;
            break;
        case CK_EW_MUL:
            r = a * b;
            break;
        case CK_EW_DIV:
            r = a / b;
            break;
        case CK_EW_MAX:
            r = fmax(a, b);
            break;
        case CK_EW_MIN:
            r = fmin(a, b);
            break;
        case CK_EW_NEG:
            r = -a;
            break;
        case CK_EW_RELU:
            r = a < 0 ? 0 : a;
            break;
        case CK_EW_GELU_TANH:
            r = 0.5 * a * (1 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
            break;
        case CK_EW_GELU_ERF:
            r = 0.5 * a * (1 + erf(a / sqrt(2.0)));
            break;
        case CK_EW_SILU:
            r = a / (1 + exp(-a));
            break;
        case CK_EW_SIGMOID:
            r = 1 / (1 + exp(-a));
            break;
        case CK_EW_EXP:
            r = exp(a);
            break;
        case CK_EW_SCALE:
            r = a * (double)(float)s->value;
            break;
        case CK_EW_CAST: {
            uint64_t c;
            ck_convert_from_f64(s->dtype, a, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c);
            ck_convert_to_f64(s->dtype, c, &r);
            break;
        }
        default:
            break;
        }
        st[sp++] = r;
    }
    return sp == 1 ? st[0] : NAN; /* a malformed program: NaN, never an unset value */
}
