/*
 * Symbolic integer expressions of src/gen: affine forms and ck_gen_simplify.
 *  - random expressions over symbols with ranges and divisors: the simplified expression and
 *    the original evaluate equally (ck_ival_eval) under random bindings within the declared
 *    ranges and divisors, and the affine form rebuilt evaluates equally too;
 *  - the C emission: simplified expressions printed as C, compiled into one kernel and run on
 *    the device (the emulator in CI), equal the host evaluation;
 *  - targeted simplifications ((tid % 32) / 32 -> 0, (a*32 + b) / 32 -> a when 0 <= b < 32,
 *    remainders, canonical order, strength reduction of offset differences).
 */
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "gen/affine.h"
#include "kernel_harness.h"

static uint64_t seed = 0x51a9e5eedull;

typedef struct sym {
    const char *name;
    int64_t min, max, div;
    ck_ival v;
} sym;

static sym syms[] = {{"tid", 0, 255, 1, {0, 0}},
                     {"a", 0, 100, 1, {0, 0}},
                     {"b", -50, 50, 1, {0, 0}},
                     {"c", 4, 64, 4, {0, 0}},
                     {"ld", 8, 4096, 8, {0, 0}}};
enum { NSYM = 5 };

static int64_t rnd(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(ckt_rand64(&seed) % (uint64_t)(hi - lo + 1));
}

/* A random expression of depth <= d (values stay far from overflow). */
static ck_ival rexpr(int d)
{
    ck_ival r, x, y;
    int k = (int)rnd(0, d > 0 ? 9 : 1);
    if (k == 0)
        return ck_ival_int(rnd(-20, 40));
    if (k == 1)
        return syms[rnd(0, NSYM - 1)].v;
    x = rexpr(d - 1);
    switch (k) {
    case 2:
    case 3:
        y = rexpr(d - 1);
        return ck_ival_add(x, y, &r) ? x : r;
    case 4:
        y = rexpr(d - 1);
        return ck_ival_sub(x, y, &r) ? x : r;
    case 5: /* multiply by a constant or a symbol */
        y = rnd(0, 1) ? ck_ival_int(rnd(-4, 33)) : syms[rnd(0, NSYM - 1)].v;
        return ck_ival_mul(x, y, &r) ? x : r;
    case 6:
    case 7: { /* floor division / modulo by a positive constant or by c */
        y = rnd(0, 3) ? ck_ival_int(rnd(1, 64)) : syms[3].v;
        ck_status st = k == 6 ? ck_ival_floordiv(x, y, &r) : ck_ival_mod(x, y, &r);
        return st ? x : r;
    }
    case 8:
        y = rexpr(d - 1);
        return ck_ival_min(x, y, &r) ? x : r;
    default:
        y = rexpr(d - 1);
        return ck_ival_max(x, y, &r) ? x : r;
    }
}

static void bind_random(ck_binding *b)
{
    for (int i = 0; i < NSYM; ++i) {
        int64_t v = rnd(syms[i].min, syms[i].max);
        v -= ((v % syms[i].div) + syms[i].div) % syms[i].div;
        if (v < syms[i].min)
            v += syms[i].div;
        b[i].name = syms[i].name;
        b[i].value = v;
    }
}

static ck_expr_arena *ctx;

static void declare(void)
{
    CHECK_OK(ck_expr_arena_create(&ctx));
    for (int i = 0; i < NSYM; ++i)
        CHECK_OK(
            ck_expr_symbol(ctx, syms[i].name, syms[i].min, syms[i].max, syms[i].div, &syms[i].v));
}

static void test_random_equal(void)
{
    long long compared = 0;
    for (int n = 0; n < 400; ++n) {
        ck_ival x = rexpr(4), s;
        ck_status st = ck_gen_simplify(x, &s);
        CHECK_MSG(st == CK_SUCCESS, "simplify: %s", ck_last_error());
        if (st)
            continue;
        ck_affine f;
        ck_ival fx = x;
        if (ck_affine_from(x, &f) == CK_SUCCESS)
            CHECK_OK(ck_affine_to_ival(&f, &fx));
        int64_t smn, smx;
        ck_ival_range(s, &smn, &smx);
        for (int k = 0; k < 25; ++k) {
            ck_binding b[NSYM];
            bind_random(b);
            int64_t v0 = 0, v1 = 0, v2 = 0;
            CHECK_OK(ck_ival_eval(x, b, NSYM, &v0));
            CHECK_OK(ck_ival_eval(s, b, NSYM, &v1));
            CHECK_OK(ck_ival_eval(fx, b, NSYM, &v2));
            if (v0 != v1 || v0 != v2 || v1 < smn || v1 > smx) {
                char t0[2048], t1[2048];
                ck_ival_print(x, t0, sizeof t0);
                ck_ival_print(s, t1, sizeof t1);
                CKT_FAIL_("%s = %lld but simplified %s = %lld (affine %lld, range [%lld, %lld])",
                          t0, (long long)v0, t1, (long long)v1, (long long)v2, (long long)smn,
                          (long long)smx);
            }
            ++compared;
        }
    }
    CHECK(compared == 400 * 25);
}

/* Simplified expressions printed as C and evaluated by compiled device code. */
static void test_emitted_c(void)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    enum { N = 60, B = 8 };
    ck_ival ex[N];
    char *user = malloc(1 << 20);
    size_t len = 0;
    len += (size_t)snprintf(
        user + len, 4096,
        "CK_KERNEL void evalx(long long *out, const long long *bind)\n{\n"
        "    int k = ck_thread_linear();\n    const long long tid = bind[k * 5 + 0];\n"
        "    const long long a = bind[k * 5 + 1];\n    const long long b = bind[k * 5 + 2];\n"
        "    const long long c = bind[k * 5 + 3];\n    const long long ld = bind[k * 5 + 4];\n"
        "    (void)tid; (void)a; (void)b; (void)c; (void)ld;\n");
    for (int i = 0; i < N; ++i) {
        ck_ival x = rexpr(4);
        CHECK_OK(ck_gen_simplify(x, &ex[i]));
        char t[8192];
        ck_ival_print(ex[i], t, sizeof t);
        len += (size_t)snprintf(user + len, 16384, "    out[k * %d + %d] = %s;\n", N, i, t);
    }
    snprintf(user + len, 64, "}\n");
    char *src = NULL;
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_tile_kernel_source(0, NULL, user, &src));
    free(user);
    ck_status st = ck_module_load(dev, src, NULL, 0, &mod);
    CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    ck_tile_free(src);
    if (st || ck_module_get_kernel(mod, "evalx", &k))
        return;
    long long bind[B * NSYM], out[B * N];
    ck_binding b[B][NSYM];
    for (int j = 0; j < B; ++j) {
        bind_random(b[j]);
        for (int i = 0; i < NSYM; ++i)
            bind[j * NSYM + i] = b[j][i].value;
    }
    void *dout = NULL, *dbind = NULL;
    CHECK_OK(ck_malloc(dev, sizeof out, &dout));
    CHECK_OK(ck_malloc(dev, sizeof bind, &dbind));
    CHECK_OK(ck_memcpy_h2d(dev, dbind, bind, sizeof bind, NULL));
    ck_launch_config cfg = {{1, 1, 1}, {B, 1, 1}, {0, 0, 0}, 0, NULL};
    void *args[2] = {&dout, &dbind};
    size_t sz[2] = {sizeof dout, sizeof dbind};
    CHECK_OK(ck_launch(k, &cfg, args, sz, 2));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, sizeof out, NULL));
    for (int j = 0; j < B; ++j)
        for (int i = 0; i < N; ++i) {
            int64_t want = 0;
            CHECK_OK(ck_ival_eval(ex[i], b[j], NSYM, &want));
            if (out[j * N + i] != want) {
                char t[4096];
                ck_ival_print(ex[i], t, sizeof t);
                CKT_FAIL_("emitted %s gave %lld, expected %lld", t, out[j * N + i],
                          (long long)want);
            }
        }
    ck_free(dev, dout);
    ck_free(dev, dbind);
}

static void expect_text(ck_ival x, const char *want)
{
    ck_ival s;
    char t[1024];
    CHECK_OK(ck_gen_simplify(x, &s));
    ck_ival_print(s, t, sizeof t);
    CHECK_EQ_STR(t, want);
}

static void test_targeted(void)
{
    ck_ival tid = syms[0].v, a = syms[1].v, ld = syms[4].v, lane, q, r, t, u, bb;
    /* (tid % 32) / 32 -> 0 */
    CHECK_OK(ck_ival_mod(tid, ck_ival_int(32), &lane));
    CHECK_OK(ck_ival_floordiv(lane, ck_ival_int(32), &q));
    expect_text(q, "0");
    /* (a*32 + lane) / 32 -> a; (a*32 + lane) % 32 -> lane */
    CHECK_OK(ck_ival_mul(a, ck_ival_int(32), &t));
    CHECK_OK(ck_ival_add(t, lane, &u));
    CHECK_OK(ck_ival_floordiv(u, ck_ival_int(32), &q));
    expect_text(q, "a");
    CHECK_OK(ck_ival_mod(u, ck_ival_int(32), &r));
    expect_text(r, "tid % 32");
    /* (a*64 + tid % 32 + 7) / 32 -> a * 2 (0 <= lane + 7 < 39 is not < 32: stays) */
    CHECK_OK(ck_ival_mul(a, ck_ival_int(64), &t));
    CHECK_OK(ck_ival_add(t, lane, &u));
    CHECK_OK(ck_ival_floordiv(u, ck_ival_int(32), &q));
    expect_text(q, "a * 2");
    CHECK_OK(ck_ival_add(u, ck_ival_int(7), &bb));
    CHECK_OK(ck_ival_floordiv(bb, ck_ival_int(32), &q));
    ck_ival sq;
    CHECK_OK(ck_gen_simplify(q, &sq));
    CHECK(!ck_ival_is_const(sq));
    /* constant folding and canonical order: (3 + a) + (2 + a) - 5 -> a * 2 */
    ck_ival x1, x2, x3;
    CHECK_OK(ck_ival_add(ck_ival_int(3), a, &x1));
    CHECK_OK(ck_ival_add(ck_ival_int(2), a, &x2));
    CHECK_OK(ck_ival_add(x1, x2, &x3));
    CHECK_OK(ck_ival_sub(x3, ck_ival_int(5), &x3));
    expect_text(x3, "a * 2");
    /* strength reduction: offset of row (a + 3) minus offset of row a, with stride ld */
    ck_ival r0, r1, o0, o1;
    CHECK_OK(ck_ival_add(a, ck_ival_int(3), &r1));
    CHECK_OK(ck_ival_mul(a, ld, &o0));
    CHECK_OK(ck_ival_add(o0, tid, &o0));
    CHECK_OK(ck_ival_mul(r1, ld, &o1));
    CHECK_OK(ck_ival_add(o1, tid, &o1));
    CHECK_OK(ck_ival_add(o1, ck_ival_int(2), &o1));
    ck_affine f0, f1, d;
    CHECK_OK(ck_affine_from(o0, &f0));
    CHECK_OK(ck_affine_from(o1, &f1));
    CHECK_OK(ck_affine_axpy(&f1, -1, &f0, &d));
    char text[256];
    ck_affine_print(&d, text, sizeof text);
    CHECK_EQ_STR(text, "3 * ld + 2");
    (void)r0;
    /* divisors: (o + 4*p + 1) / 4 -> o / 4 + p and (o + 4*p + 1) % 4 -> 1 when o % 64 == 0 */
    {
        ck_ival o, p4, e, dq, dr;
        CHECK_OK(ck_expr_symbol(ctx, "o", 0, 1 << 20, 64, &o));
        CHECK_OK(ck_ival_mul(a, ck_ival_int(4), &p4));
        CHECK_OK(ck_ival_add(o, p4, &e));
        CHECK_OK(ck_ival_add(e, ck_ival_int(1), &e));
        CHECK_OK(ck_ival_floordiv(e, ck_ival_int(4), &dq));
        CHECK_OK(ck_ival_mod(e, ck_ival_int(4), &dr));
        expect_text(dq, "a + o / 4");
        expect_text(dr, "1");
    }
    /* symbols and constants pass through */
    expect_text(ld, "ld");
    expect_text(ck_ival_int(-7), "-7");
    ck_ival out;
    CHECK_STATUS(ck_gen_simplify(a, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_gen_simplify(a, &out));
}

int main(void)
{
    declare();
    RUN_TEST(test_targeted);
    RUN_TEST(test_random_equal);
    if (ckk_open())
        RUN_TEST(test_emitted_c);
    ckk_close();
    ck_expr_arena_destroy(ctx);
    return CK_TEST_REPORT();
}
