/*
 * Layout wrapper (include/ck/layout.h): the reference's §13 example, property
 * tests on random nested layouts against references written independently
 * (recursive evaluation on the test's own tree, and a flattened brute force),
 * and bad input.
 */
#include <stdlib.h>

#include "ck/layout.h"
#include "test.h"

/* ------------------------------------------------------- the §13 example */

/* Build the layout of §13 as the reference does: make_tuple(4, make_tuple(2, 4)). */
static void make_example_layout(ck_layout *l)
{
    ck_int_tuple shape_parts[2], stride_parts[2], inner[2], shape, stride;
    CHECK_OK(ck_int_tuple_int(4, &shape_parts[0]));
    CHECK_OK(ck_int_tuple_int(2, &inner[0]));
    CHECK_OK(ck_int_tuple_int(4, &inner[1]));
    CHECK_OK(ck_int_tuple_join(inner, 2, &shape_parts[1]));
    CHECK_OK(ck_int_tuple_join(shape_parts, 2, &shape));
    CHECK_OK(ck_int_tuple_int(2, &stride_parts[0]));
    const int64_t inner_strides[2] = {1, 8};
    CHECK_OK(ck_int_tuple_flat(inner_strides, 2, &stride_parts[1]));
    CHECK_OK(ck_int_tuple_join(stride_parts, 2, &stride));
    CHECK_OK(ck_layout_make(&shape, &stride, l));
}

/* The reference's program: fill tensor(w) = w, slice (slice(1,3), (slice(), slice())),
 * print the slice's header line and its values row by row. */
static void run_example(const ck_int_tuple *spec, char *out, size_t size)
{
    ck_layout layout, sliced;
    make_example_layout(&layout);
    int64_t data[32], n = 0, base = -1;
    for (int i = 0; i < 32; ++i)
        data[i] = -1000 - i; /* never read unless the layout is wrong */
    CHECK_OK(ck_layout_size(&layout, &n));
    CHECK_EQ_INT(n, 32);
    for (int64_t w = 0; w < n; ++w) {
        int64_t off = -1;
        CHECK_OK(ck_layout_offset_of_index(&layout, w, &off));
        CHECK(off >= 0 && off < 32);
        if (off >= 0 && off < 32)
            data[off] = w;
    }
    CHECK_OK(ck_layout_slice(&layout, spec, &sliced, &base));
    CHECK_EQ_INT(base, 2); /* slice(1,3) of the mode of stride 2 */
    char header[128];
    CHECK_OK(ck_layout_format(&sliced, header, sizeof header));
    int64_t rows = 0, cols = 0;
    CHECK_OK(ck_layout_mode_size(&sliced, 0, &rows));
    CHECK_OK(ck_layout_mode_size(&sliced, 1, &cols));
    size_t len = (size_t)snprintf(out, size, "%s\n", header);
    for (int64_t h = 0; h < rows; ++h) {
        for (int64_t w = 0; w < cols; ++w) {
            int64_t hw[2] = {h, w}, off = -1;
            CHECK_OK(ck_layout_offset_of_modes(&sliced, hw, 2, &off));
            off += base;
            int64_t v = off >= 0 && off < 32 ? data[off] : -1;
            len += (size_t)snprintf(out + len, size - len, w ? " %lld" : "%lld", (long long)v);
        }
        len += (size_t)snprintf(out + len, size - len, "\n");
    }
}

/* §13: "dims:2,(2,4) strides:2,(1,8)" then the rows 1 5 9 … 29 and 2 6 … 30.
 * The reference prints each value followed by a space; the documented output
 * shows the rows without trailing spaces, which is what is reproduced here. */
static const char *const EXAMPLE_OUTPUT = "dims:2,(2,4) strides:2,(1,8)\n"
                                          "1 5 9 13 17 21 25 29\n"
                                          "2 6 10 14 18 22 26 30\n";

static void test_reference_example_output(void)
{
    char out[512];
    ck_int_tuple parts[2], whole[2], spec;
    /* slice(1, 3) and make_tuple(slice(), slice()), slice() == slice(0, -1). */
    CHECK_OK(ck_int_tuple_range(1, 3, &parts[0]));
    CHECK_OK(ck_int_tuple_range(0, -1, &whole[0]));
    CHECK_OK(ck_int_tuple_range(0, -1, &whole[1]));
    CHECK_OK(ck_int_tuple_join(whole, 2, &parts[1]));
    CHECK_OK(ck_int_tuple_join(parts, 2, &spec));
    run_example(&spec, out, sizeof out);
    CHECK_EQ_STR(out, EXAMPLE_OUTPUT);

    /* The same with "_" for the whole modes, and spelled as text. */
    CHECK_OK(ck_int_tuple_parse("(1:3, (_, _))", &spec));
    run_example(&spec, out, sizeof out);
    CHECK_EQ_STR(out, EXAMPLE_OUTPUT);
    CHECK_OK(ck_int_tuple_parse("(1:-2,_)", &spec)); /* -2: one before the end */
    run_example(&spec, out, sizeof out);
    CHECK_EQ_STR(out, EXAMPLE_OUTPUT);
}

static void test_example_layout_properties(void)
{
    ck_layout l, p, m;
    char buf[128];
    make_example_layout(&l);
    int rank = 0, depth = 0;
    int64_t size = 0, off = 0, idx = 0;
    CHECK_OK(ck_layout_rank(&l, &rank));
    CHECK_OK(ck_layout_depth(&l, &depth));
    CHECK_OK(ck_layout_size(&l, &size));
    CHECK_EQ_INT(rank, 2);
    CHECK_EQ_INT(depth, 2);
    CHECK_EQ_INT(size, 32);
    CHECK_OK(ck_layout_format(&l, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:4,(2,4) strides:2,(1,8)");
    CHECK_OK(ck_layout_format_compact(&l, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(4,(2,4)):(2,(1,8))");

    /* Both notations parse back to the same layout. */
    int eq = 0;
    CHECK_OK(ck_layout_parse("dims:4,(2,4) strides:2,(1,8)", &p));
    CHECK_OK(ck_int_tuple_equal(&p.shape, &l.shape, &eq));
    CHECK(eq);
    CHECK_OK(ck_int_tuple_equal(&p.stride, &l.stride, &eq));
    CHECK(eq);
    CHECK_OK(ck_layout_parse(" ( 4 , ( 2 , 4 ) ) : ( 2 , ( 1 , 8 ) ) ", &p));
    CHECK_OK(ck_int_tuple_equal(&p.stride, &l.stride, &eq));
    CHECK(eq);

    /* Packed column-major strides: first mode fastest. */
    CHECK_OK(ck_layout_parse("dims:4,(2,4)", &p));
    CHECK_OK(ck_layout_format(&p, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:4,(2,4) strides:1,(4,8)");
    CHECK_OK(ck_layout_parse("(3,(2,(5,2)),7)", &p));
    CHECK_OK(ck_layout_format_compact(&p, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(3,(2,(5,2)),7):(1,(3,(6,30)),60)");
    CHECK_OK(ck_layout_parse("8:3", &p)); /* a single integer is the rank-1 layout (8):(3) */
    CHECK_OK(ck_layout_format_compact(&p, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(8):(3)");

    /* Coordinates 13, (1,3) and (1,(1,1)) name the same point. */
    ck_int_tuple c;
    CHECK_OK(ck_layout_index_to_coord(&l, 13, &c));
    CHECK_OK(ck_int_tuple_format(&c, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(1,(1,1))");
    const char *forms[3] = {"13", "(1,3)", "(1,(1,1))"};
    for (int k = 0; k < 3; ++k) {
        CHECK_OK(ck_int_tuple_parse(forms[k], &c));
        CHECK_OK(ck_layout_offset(&l, &c, &off));
        CHECK_EQ_INT(off, 1 * 2 + 1 * 1 + 1 * 8);
        CHECK_OK(ck_layout_coord_to_index(&l, &c, &idx));
        CHECK_EQ_INT(idx, 13);
    }
    CHECK_OK(ck_layout_mode(&l, 1, &m));
    CHECK_OK(ck_layout_format(&m, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:2,4 strides:1,8");
    CHECK_OK(ck_layout_mode(&l, 0, &m));
    CHECK_OK(ck_layout_format_compact(&m, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(4):(2)");
    CHECK_OK(ck_layout_mode_size(&l, 1, &size));
    CHECK_EQ_INT(size, 8);

    /* Slicing: fix mode 0, keep the nested mode; fix all; keep all. */
    ck_layout s;
    int64_t base = -1;
    CHECK_OK(ck_int_tuple_parse("(3,(_,2))", &c));
    CHECK_OK(ck_layout_slice(&l, &c, &s, &base));
    CHECK_EQ_INT(base, 3 * 2 + 2 * 8);
    CHECK_OK(ck_layout_format_compact(&s, buf, sizeof buf));
    CHECK_EQ_STR(buf, "((2)):((1))");
    CHECK_OK(ck_int_tuple_parse("(3,(1,2))", &c));
    CHECK_OK(ck_layout_slice(&l, &c, &s, &base));
    CHECK_EQ_INT(base, 3 * 2 + 1 + 2 * 8);
    CHECK_OK(ck_layout_format(&s, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:() strides:()");
    CHECK_OK(ck_layout_size(&s, &size));
    CHECK_EQ_INT(size, 1);
    CHECK_OK(ck_layout_parse("dims:() strides:()", &p));
    CHECK_OK(ck_layout_rank(&p, &rank));
    CHECK_EQ_INT(rank, 0);
    CHECK_OK(ck_int_tuple_parse("_", &c));
    CHECK_OK(ck_layout_slice(&l, &c, &s, &base));
    CHECK_EQ_INT(base, 0);
    CHECK_OK(ck_layout_format(&s, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:4,(2,4) strides:2,(1,8)");
    CHECK_OK(ck_int_tuple_parse("(_,5)", &c)); /* 5 in (2,4) is (1,2) */
    CHECK_OK(ck_layout_slice(&l, &c, &s, &base));
    CHECK_EQ_INT(base, 1 + 2 * 8);
    CHECK_OK(ck_layout_format(&s, buf, sizeof buf));
    CHECK_EQ_STR(buf, "dims:4 strides:2");
    /* The rank-1 layout (8):(3) is sliced by a bare range as its only mode. */
    CHECK_OK(ck_layout_parse("8:3", &p));
    CHECK_OK(ck_int_tuple_parse("2:-1", &c));
    CHECK_OK(ck_layout_slice(&p, &c, &s, &base));
    CHECK_EQ_INT(base, 6);
    CHECK_OK(ck_layout_format_compact(&s, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(6):(3)");
}

/* ------------------------------------------------ random nested layouts */

/* The test's own tree (independent of ck_int_tuple's pre-order arrays). */
typedef struct tnode {
    int nchild; /* 0: a leaf */
    int64_t len, stride;
    struct tnode *child[4];
} tnode;

typedef struct tree {
    tnode pool[32];
    int used;
    int64_t size;
    tnode *root;
} tree;

static uint64_t rng_state;
static int64_t rnd(int64_t n)
{
    return (int64_t)(ckt_rand64(&rng_state) % (uint64_t)n);
}

/* A random subtree of at most `budget` nodes whose size keeps the layout's
 * size at most 4096 (so every index can be checked). */
static tnode *gen_node(tree *t, int level, int max_level, int budget)
{
    tnode *n = &t->pool[t->used++];
    memset(n, 0, sizeof *n);
    if (level > 0 && (level >= max_level || budget < 3 || rnd(3) == 0)) {
        int64_t maxlen = 4096 / t->size;
        n->len = 1 + rnd(maxlen < 4 ? maxlen : 4); /* 1..4, includes degenerate 1 */
        t->size *= n->len;
        n->stride = rnd(41) - 20; /* negative, zero and positive */
        if (rnd(3) == 0)
            n->stride = 1 + rnd(1000);
        return n;
    }
    int most = budget - 1 < (level == 0 ? 4 : 3) ? budget - 1 : (level == 0 ? 4 : 3);
    n->nchild = 1 + (int)rnd(most);
    int left = budget - 1;
    for (int k = 0; k < n->nchild; ++k) {
        int reserve = n->nchild - k - 1; /* one node for each later sibling */
        int give = k == n->nchild - 1 ? left : 1 + (int)rnd(left - reserve);
        n->child[k] = gen_node(t, level + 1, max_level, give);
        left = budget - 1 - (int)(&t->pool[t->used] - (n + 1));
    }
    return n;
}

static void gen_tree(tree *t, int max_level)
{
    t->used = 0;
    t->size = 1;
    t->root = gen_node(t, 0, max_level, 32);
}

static int64_t tsize(const tnode *n)
{
    if (!n->nchild)
        return n->len;
    int64_t s = 1;
    for (int k = 0; k < n->nchild; ++k)
        s *= tsize(n->child[k]);
    return s;
}

/* Recursive reference: offset of 1-D index v (first child fastest). */
static int64_t roffset(const tnode *n, int64_t v)
{
    if (!n->nchild)
        return v * n->stride;
    int64_t off = 0;
    for (int k = 0; k < n->nchild; ++k) {
        int64_t s = tsize(n->child[k]);
        off += roffset(n->child[k], v % s);
        v /= s;
    }
    return off;
}

/* Flattened leaves in depth-first order. */
static void flatten(const tnode *n, int64_t *len, int64_t *stride, int *count)
{
    if (!n->nchild) {
        len[*count] = n->len;
        stride[*count] = n->stride;
        ++*count;
        return;
    }
    for (int k = 0; k < n->nchild; ++k)
        flatten(n->child[k], len, stride, count);
}

static void append(char *buf, size_t size, const char *s)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s", s);
}

static void write_tree(const tnode *n, int strides, char *buf, size_t size)
{
    char num[32];
    if (!n->nchild) {
        snprintf(num, sizeof num, "%lld", (long long)(strides ? n->stride : n->len));
        append(buf, size, num);
        return;
    }
    append(buf, size, "(");
    for (int k = 0; k < n->nchild; ++k) {
        if (k)
            append(buf, size, ",");
        write_tree(n->child[k], strides, buf, size);
    }
    append(buf, size, ")");
}

/* Build the same layout through ck_int_tuple_int/join (a second construction path). */
static ck_status build_tuple(const tnode *n, int strides, ck_int_tuple *out)
{
    if (!n->nchild)
        return ck_int_tuple_int(strides ? n->stride : n->len, out);
    ck_int_tuple parts[4];
    for (int k = 0; k < n->nchild; ++k) {
        ck_status st = build_tuple(n->child[k], strides, &parts[k]);
        if (st != CK_SUCCESS)
            return st;
    }
    return ck_int_tuple_join(parts, n->nchild, out);
}

/* Random coordinate of 1-D index v, stopping at random levels: writes text. */
static void write_coord(const tnode *n, int64_t v, char *buf, size_t size)
{
    char num[32];
    if (!n->nchild || rnd(3) == 0) {
        snprintf(num, sizeof num, "%lld", (long long)v);
        append(buf, size, num);
        return;
    }
    append(buf, size, "(");
    for (int k = 0; k < n->nchild; ++k) {
        int64_t s = tsize(n->child[k]);
        if (k)
            append(buf, size, ",");
        write_coord(n->child[k], v % s, buf, size);
        v /= s;
    }
    append(buf, size, ")");
}

static void test_random_layouts_index_coord_offset(void)
{
    rng_state = 0x1a7e5eedull;
    printf("seed 0x%llx\n", (unsigned long long)rng_state);
    for (int trial = 0; trial < 300; ++trial) {
        tree t;
        gen_tree(&t, 1 + trial % CK_INT_TUPLE_MAX_DEPTH);
        char shape_text[512] = "", stride_text[512] = "", text[1100];
        write_tree(t.root, 0, shape_text, sizeof shape_text);
        write_tree(t.root, 1, stride_text, sizeof stride_text);
        snprintf(text, sizeof text, "%s:%s", shape_text, stride_text);
        ck_layout l, l2;
        ck_status st = ck_layout_parse(text, &l);
        CHECK_MSG(st == CK_SUCCESS, "parse %s: %s", text, ck_last_error());
        if (st != CK_SUCCESS)
            continue;
        ck_int_tuple s, d;
        CHECK_OK(build_tuple(t.root, 0, &s));
        CHECK_OK(build_tuple(t.root, 1, &d));
        CHECK_OK(ck_layout_make(&s, &d, &l2));
        int eq = 0;
        CHECK_OK(ck_int_tuple_equal(&l.shape, &l2.shape, &eq));
        CHECK(eq);
        CHECK_OK(ck_int_tuple_equal(&l.stride, &l2.stride, &eq));
        CHECK(eq);
        char printed[1100];
        CHECK_OK(ck_layout_format_compact(&l, printed, sizeof printed));
        CHECK_EQ_STR(printed, text);

        int64_t len[32], stride[32], prod = 1;
        int nleaf = 0;
        flatten(t.root, len, stride, &nleaf);
        for (int k = 0; k < nleaf; ++k)
            prod *= len[k];
        int64_t size = 0;
        int rank = 0;
        CHECK_OK(ck_layout_size(&l, &size));
        CHECK_EQ_INT(size, prod);
        CHECK_OK(ck_layout_rank(&l, &rank));
        CHECK_EQ_INT(rank, t.root->nchild);
        for (int k = 0; k < rank; ++k) {
            int64_t ms = 0;
            CHECK_OK(ck_layout_mode_size(&l, k, &ms));
            CHECK_EQ_INT(ms, tsize(t.root->child[k]));
        }

        for (int64_t i = 0; i < size; ++i) {
            /* Flattened brute force: colexicographic digits over the leaves. */
            int64_t digit[32], rest = i, flat = 0;
            for (int k = 0; k < nleaf; ++k) {
                digit[k] = rest % len[k];
                rest /= len[k];
                flat += digit[k] * stride[k];
            }
            int64_t rec = roffset(t.root, i);
            CHECK_EQ_INT(rec, flat);

            int64_t off = 0, back = -1;
            CHECK_OK(ck_layout_offset_of_index(&l, i, &off));
            CHECK_EQ_INT(off, flat);

            ck_int_tuple c;
            CHECK_OK(ck_layout_index_to_coord(&l, i, &c));
            int leafno = 0, ok = c.count == l.shape.count;
            for (int k = 0; ok && k < c.count; ++k) {
                ok = c.node[k].kind == l.shape.node[k].kind &&
                     c.node[k].rank == l.shape.node[k].rank;
                if (ok && c.node[k].kind == CK_INT_TUPLE_INT)
                    ok = c.node[k].value == digit[leafno++];
            }
            CHECK_MSG(ok, "layout %s index %lld: natural coordinate mismatch", text, (long long)i);
            CHECK_OK(ck_layout_coord_to_index(&l, &c, &back));
            CHECK_EQ_INT(back, i);
            CHECK_OK(ck_layout_offset(&l, &c, &off));
            CHECK_EQ_INT(off, flat);

            /* A random partial (hierarchical) coordinate of the same point. */
            char ctext[512] = "";
            write_coord(t.root, i, ctext, sizeof ctext);
            st = ck_int_tuple_parse(ctext, &c);
            CHECK_MSG(st == CK_SUCCESS, "parse %s: %s", ctext, ck_last_error());
            CHECK_OK(ck_layout_offset(&l, &c, &off));
            CHECK_MSG(off == flat, "layout %s coord %s: offset %lld, expected %lld", text, ctext,
                      (long long)off, (long long)flat);
            CHECK_OK(ck_layout_coord_to_index(&l, &c, &back));
            CHECK_EQ_INT(back, i);

            /* One 1-D index per top-level mode. */
            int64_t modes[4];
            rest = i;
            for (int k = 0; k < rank; ++k) {
                int64_t ms = tsize(t.root->child[k]);
                modes[k] = rest % ms;
                rest /= ms;
            }
            CHECK_OK(ck_layout_offset_of_modes(&l, modes, rank, &off));
            CHECK_EQ_INT(off, flat);
        }
    }
}

/* ------------------------------------------------------- random slicing */

/* Per test-tree leaf, what the slice does to it. */
typedef struct leaf_slice {
    int kept;
    int64_t from, len; /* kept: indices from .. from+len-1; fixed: from is the index */
} leaf_slice;

typedef struct slice_ref {
    leaf_slice leaf[32];
    int nleaf;
} slice_ref;

/* Fix the subtree at n to 1-D index v: each of its leaves gets its digit. */
static void fix_subtree(const tnode *n, int64_t v, slice_ref *r)
{
    if (!n->nchild) {
        r->leaf[r->nleaf++] = (leaf_slice){0, v, 1};
        return;
    }
    for (int k = 0; k < n->nchild; ++k) {
        int64_t s = tsize(n->child[k]);
        fix_subtree(n->child[k], v % s, r);
        v /= s;
    }
}

static void keep_subtree(const tnode *n, slice_ref *r, char *exp, size_t size)
{
    char num[32];
    if (!n->nchild) {
        r->leaf[r->nleaf++] = (leaf_slice){1, 0, n->len};
        snprintf(num, sizeof num, "%lld", (long long)n->len);
        append(exp, size, num);
        return;
    }
    append(exp, size, "(");
    for (int k = 0; k < n->nchild; ++k) {
        if (k)
            append(exp, size, ",");
        keep_subtree(n->child[k], r, exp, size);
    }
    append(exp, size, ")");
}

/* Random slice spec for node n: writes the spec text, records per-leaf
 * behaviour, writes the expected shape text of what is kept; returns whether
 * anything is kept. */
static int gen_spec(const tnode *n, int top, slice_ref *r, char *spec, char *exp, size_t size)
{
    char num[64];
    int what = (int)rnd(3); /* 0 fix, 1 keep, 2 range (leaves), 3 recurse (tuples) */
    if (n->nchild && what == 2)
        what = 3;
    if (what == 0) { /* fix */
        int64_t v = rnd(tsize(n));
        snprintf(num, sizeof num, "%lld", (long long)v);
        append(spec, size, num);
        fix_subtree(n, v, r);
        return 0;
    }
    if (what == 1) { /* keep all */
        append(spec, size, "_");
        keep_subtree(n, r, exp, size);
        return 1;
    }
    if (what == 2) { /* range of a leaf */
        int64_t a = rnd(n->len), b = a + 1 + rnd(n->len - a);
        int64_t written = b == n->len && rnd(2) ? -1 : (rnd(2) ? b : b - n->len - 1);
        snprintf(num, sizeof num, "%lld:%lld", (long long)a, (long long)written);
        append(spec, size, num);
        r->leaf[r->nleaf++] = (leaf_slice){1, a, b - a};
        snprintf(num, sizeof num, "%lld", (long long)(b - a));
        append(exp, size, num);
        return 1;
    }
    /* recurse into the children */
    size_t mark = strlen(exp);
    append(spec, size, "(");
    append(exp, size, "(");
    int kept = 0;
    for (int k = 0; k < n->nchild; ++k) {
        if (k)
            append(spec, size, ",");
        size_t before = strlen(exp);
        if (kept)
            append(exp, size, ",");
        if (gen_spec(n->child[k], 0, r, spec, exp, size))
            ++kept;
        else
            exp[before] = '\0';
    }
    append(spec, size, ")");
    append(exp, size, ")");
    if (!kept && !top)
        exp[mark] = '\0';
    return kept > 0 || top;
}

static void test_random_slices(void)
{
    rng_state = 0x5117ce5ull;
    printf("seed 0x%llx\n", (unsigned long long)rng_state);
    for (int trial = 0; trial < 400; ++trial) {
        tree t;
        gen_tree(&t, 1 + trial % 4);
        char text[1100] = "", stride_text[512] = "";
        write_tree(t.root, 0, text, sizeof text);
        write_tree(t.root, 1, stride_text, sizeof stride_text);
        append(text, sizeof text, ":");
        append(text, sizeof text, stride_text);
        ck_layout l, s;
        CHECK_OK(ck_layout_parse(text, &l));

        slice_ref r;
        r.nleaf = 0;
        char spec_text[512] = "", exp_shape[512] = "";
        /* The root is a tuple: recurse at least once so the root stays a tuple. */
        append(spec_text, sizeof spec_text, "(");
        append(exp_shape, sizeof exp_shape, "(");
        int kept = 0;
        for (int k = 0; k < t.root->nchild; ++k) {
            if (k)
                append(spec_text, sizeof spec_text, ",");
            size_t before = strlen(exp_shape);
            if (kept)
                append(exp_shape, sizeof exp_shape, ",");
            if (gen_spec(t.root->child[k], 0, &r, spec_text, exp_shape, sizeof exp_shape))
                ++kept;
            else
                exp_shape[before] = '\0';
        }
        append(spec_text, sizeof spec_text, ")");
        append(exp_shape, sizeof exp_shape, ")");

        ck_int_tuple spec;
        int64_t base = 0;
        CHECK_OK(ck_int_tuple_parse(spec_text, &spec));
        ck_status st = ck_layout_slice(&l, &spec, &s, &base);
        CHECK_MSG(st == CK_SUCCESS, "slice %s by %s: %s", text, spec_text, ck_last_error());
        if (st != CK_SUCCESS)
            continue;
        ck_int_tuple exp;
        char got[512];
        CHECK_OK(ck_int_tuple_format(&s.shape, got, sizeof got));
        CHECK_OK(ck_int_tuple_parse(exp_shape, &exp));
        CHECK_MSG(strcmp(got, exp_shape) == 0, "slice %s by %s: shape %s, expected %s", text,
                  spec_text, got, exp_shape);

        int64_t len[32], stride[32], size = 0, expect_size = 1;
        int nleaf = 0;
        flatten(t.root, len, stride, &nleaf);
        CHECK_EQ_INT(nleaf, r.nleaf);
        for (int k = 0; k < r.nleaf; ++k)
            if (r.leaf[k].kept)
                expect_size *= r.leaf[k].len;
        CHECK_OK(ck_layout_size(&s, &size));
        CHECK_EQ_INT(size, expect_size);
        /* Every index of the slice: base + slice(j) == original offset of the
         * full coordinate (kept leaves enumerate colexicographically). */
        for (int64_t j = 0; j < size; ++j) {
            int64_t rest = j, expect = 0, off = 0;
            for (int k = 0; k < r.nleaf; ++k) {
                int64_t c = r.leaf[k].from;
                if (r.leaf[k].kept) {
                    c += rest % r.leaf[k].len;
                    rest /= r.leaf[k].len;
                }
                expect += c * stride[k];
            }
            CHECK_OK(ck_layout_offset_of_index(&s, j, &off));
            CHECK_MSG(base + off == expect, "slice %s by %s: index %lld gives %lld, expected %lld",
                      text, spec_text, (long long)j, (long long)(base + off), (long long)expect);
        }
    }
}

/* ------------------------------------------------------------ bad input */

static void test_bad_input(void)
{
    ck_layout l, out;
    ck_int_tuple t, c;
    int64_t v = 0;
    int r = 0;
    char buf[64];
    make_example_layout(&l);

    /* Null pointers. */
    CHECK_STATUS(ck_int_tuple_int(1, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_flat(NULL, 2, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_parse(NULL, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_format(NULL, buf, sizeof buf), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_join(NULL, 2, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_make(NULL, &t, &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_parse("(4,4)", NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_size(NULL, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_size(&l, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_rank(NULL, &r), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_depth(&l, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_offset(&l, NULL, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_offset_of_modes(&l, NULL, 2, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_slice(&l, NULL, &out, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_format(&l, NULL, 10), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "'buf'") != NULL);

    /* Zero and negative lengths. */
    CHECK_STATUS(ck_layout_parse("(4,(0,4)):(2,(1,8))", &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "length 0 at mode 1.0") != NULL);
    CHECK_STATUS(ck_layout_parse("(-3,2)", &out), CK_ERROR_INVALID_ARGUMENT);

    /* Mismatched shape and stride trees. */
    CHECK_STATUS(ck_layout_parse("(4,(2,4)):(2,1)", &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "mode 1") != NULL);
    CHECK_STATUS(ck_layout_parse("(4,(2,4)):(2,(1,8,3))", &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_parse("dims:4,4 strides:1", &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_int_tuple_int(4, &t));
    CHECK_OK(ck_int_tuple_parse("(1)", &c));
    CHECK_STATUS(ck_layout_make(&t, &c, &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_parse("(4,_):(1,4)", &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_parse("(4,()):(1,())", &out), CK_ERROR_INVALID_ARGUMENT);

    /* Overflow of the size and of the offsets. */
    CHECK_STATUS(ck_layout_parse("(4294967296,4294967296)", &out), CK_ERROR_OVERFLOW);
    CHECK_STATUS(ck_layout_parse("(3,2):(1,9223372036854775807)", &out), CK_ERROR_OVERFLOW);
    CHECK_OK(ck_layout_parse("(2,2):(1,9223372036854775806)", &out));
    CHECK_STATUS(ck_int_tuple_parse("(99999999999999999999)", &t), CK_ERROR_PARSE);

    /* Nesting deeper than supported, too many nodes. */
    CHECK_OK(ck_int_tuple_parse("((((((((1))))))))", &t)); /* 8 levels */
    CHECK_STATUS(ck_int_tuple_parse("(((((((((1)))))))))", &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "deeper") != NULL);
    CHECK_STATUS(ck_layout_parse("(((((((((1))))))))):(((((((((1)))))))))", &out),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_parse("(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,"
                                    "23,24,25,26,27,28,29,30,31,32)",
                                    &t),
                 CK_ERROR_INVALID_ARGUMENT);
    ck_int_tuple parts[2];
    CHECK_OK(ck_int_tuple_parse("((((((((1))))))))", &parts[0]));
    CHECK_OK(ck_int_tuple_int(1, &parts[1]));
    CHECK_STATUS(ck_int_tuple_join(parts, 2, &t), CK_ERROR_INVALID_ARGUMENT);

    /* Malformed text. */
    CHECK_STATUS(ck_int_tuple_parse("(4,(2,4)", &t), CK_ERROR_PARSE);
    CHECK_STATUS(ck_int_tuple_parse("(4,,2)", &t), CK_ERROR_PARSE);
    CHECK(strstr(ck_last_error(), "character 4") != NULL);
    CHECK_STATUS(ck_int_tuple_parse("(4 2)", &t), CK_ERROR_PARSE);
    CHECK_STATUS(ck_int_tuple_parse("", &t), CK_ERROR_PARSE);
    CHECK_STATUS(ck_int_tuple_parse("(4) x", &t), CK_ERROR_PARSE);
    CHECK_STATUS(ck_layout_parse("dims:4,(2,4 strides:2,(1,8)", &out), CK_ERROR_PARSE);

    /* Coordinates out of range or of the wrong structure. */
    CHECK_STATUS(ck_layout_offset_of_index(&l, 32, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_offset_of_index(&l, -1, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_index_to_coord(&l, 32, &c), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_int_tuple_parse("(1,(2,0))", &c));
    CHECK_STATUS(ck_layout_offset(&l, &c, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "mode 1.0") != NULL);
    CHECK_OK(ck_int_tuple_parse("(1,8)", &c));
    CHECK_STATUS(ck_layout_coord_to_index(&l, &c, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_int_tuple_parse("(1,2,3)", &c));
    CHECK_STATUS(ck_layout_offset(&l, &c, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_int_tuple_parse("((1,0),1)", &c));
    CHECK_STATUS(ck_layout_offset(&l, &c, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_int_tuple_parse("(1,_)", &c));
    CHECK_STATUS(ck_layout_offset(&l, &c, &v), CK_ERROR_INVALID_ARGUMENT);
    int64_t modes[2] = {4, 0};
    CHECK_STATUS(ck_layout_offset_of_modes(&l, modes, 2, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_offset_of_modes(&l, modes, 1, &v), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_mode(&l, 2, &out), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_layout_mode_size(&l, -1, &v), CK_ERROR_INVALID_ARGUMENT);

    /* Bad slices. */
    const char *bad_specs[] = {"(1:1,_)",     "(3:2,_)", "(0:5,_)",   "(-1:2,_)",
                               "(0:-6,_)",    "(_,1:2)", "(4,_)",     "(_,(_,4))",
                               "(_,(_,_,_))", "(_,_,_)", "((_,_),_)", "0:2"};
    for (size_t k = 0; k < sizeof bad_specs / sizeof bad_specs[0]; ++k) {
        CHECK_OK(ck_int_tuple_parse(bad_specs[k], &c));
        CHECK_STATUS(ck_layout_slice(&l, &c, &out, &v), CK_ERROR_INVALID_ARGUMENT);
    }

    /* Output buffers too small: the message names the size needed. */
    CHECK_STATUS(ck_layout_format(&l, buf, 10), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "needs 29 bytes") != NULL);
    CHECK_EQ_STR(buf, "");
    CHECK_OK(ck_layout_format(&l, buf, 29));
    CHECK_STATUS(ck_int_tuple_format(&l.shape, buf, 0), CK_ERROR_INVALID_ARGUMENT);

    /* Structures damaged by hand are refused, not followed. */
    ck_layout bad = l;
    bad.shape.count = 0;
    CHECK_STATUS(ck_layout_size(&bad, &v), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.shape.node[0].span = 3;
    CHECK_STATUS(ck_layout_size(&bad, &v), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.shape.node[2].rank = 1000;
    CHECK_STATUS(ck_layout_size(&bad, &v), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.stride.node[3].kind = 9;
    CHECK_STATUS(ck_layout_offset_of_index(&bad, 1, &v), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.shape.node[3].value = 0;
    CHECK_STATUS(ck_layout_offset_of_index(&bad, 1, &v), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.stride.count = 7;
    CHECK_STATUS(ck_layout_rank(&bad, &r), CK_ERROR_INVALID_ARGUMENT);
    bad = l;
    bad.shape.count = 1000;
    CHECK_STATUS(ck_layout_depth(&bad, &r), CK_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN_TEST(test_reference_example_output);
    RUN_TEST(test_example_layout_properties);
    RUN_TEST(test_random_layouts_index_coord_offset);
    RUN_TEST(test_random_slices);
    RUN_TEST(test_bad_input);
    return CK_TEST_REPORT();
}
