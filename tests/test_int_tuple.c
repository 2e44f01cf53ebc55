/*
 * Hierarchical integer tuples (ck_int_tuple, include/ck/layout.h): building,
 * parsing, printing, queries and bad input. The layouts built on them are
 * tested in test_layout.c.
 */
#include "ck/layout.h"
#include "test.h"

static void test_int_tuples(void)
{
    ck_int_tuple t, c, parts[2];
    char buf[128];
    int rank = -1, depth = -1, eq = -1;
    CHECK_OK(ck_int_tuple_parse(" ( 1 , ( -2 , _ ) , 3:-1 ) ", &t));
    CHECK_OK(ck_int_tuple_format(&t, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(1,(-2,_),3:-1)");
    CHECK_OK(ck_int_tuple_rank(&t, &rank));
    CHECK_EQ_INT(rank, 3);
    CHECK_OK(ck_int_tuple_depth(&t, &depth));
    CHECK_EQ_INT(depth, 2);
    CHECK_OK(ck_int_tuple_child(&t, 1, &c));
    CHECK_OK(ck_int_tuple_format(&c, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(-2,_)");
    CHECK_OK(ck_int_tuple_child(&t, 2, &c));
    CHECK_EQ_INT(c.node[0].kind, CK_INT_TUPLE_RANGE);
    CHECK_EQ_INT(c.node[0].value, 3);
    CHECK_EQ_INT(c.node[0].value2, -1);
    CHECK_STATUS(ck_int_tuple_child(&t, 3, &c), CK_ERROR_INVALID_ARGUMENT);

    /* A single integer: rank 1, depth 0, its only child is itself. */
    CHECK_OK(ck_int_tuple_parse("7", &t));
    CHECK_OK(ck_int_tuple_rank(&t, &rank));
    CHECK_EQ_INT(rank, 1);
    CHECK_OK(ck_int_tuple_depth(&t, &depth));
    CHECK_EQ_INT(depth, 0);
    CHECK_OK(ck_int_tuple_child(&t, 0, &c));
    CHECK_OK(ck_int_tuple_equal(&t, &c, &eq));
    CHECK_EQ_INT(eq, 1);

    /* flat, join (with the output aliasing a part) and equal. */
    const int64_t v[3] = {5, 6, 7};
    CHECK_OK(ck_int_tuple_flat(v, 3, &parts[0]));
    CHECK_OK(ck_int_tuple_all(&parts[1]));
    CHECK_OK(ck_int_tuple_join(parts, 2, &parts[0]));
    CHECK_OK(ck_int_tuple_format(&parts[0], buf, sizeof buf));
    CHECK_EQ_STR(buf, "((5,6,7),_)");
    CHECK_OK(ck_int_tuple_parse("((5,6,7),_)", &t));
    CHECK_OK(ck_int_tuple_equal(&t, &parts[0], &eq));
    CHECK_EQ_INT(eq, 1);
    CHECK_OK(ck_int_tuple_parse("((5,6,8),_)", &t));
    CHECK_OK(ck_int_tuple_equal(&t, &parts[0], &eq));
    CHECK_EQ_INT(eq, 0);
    CHECK_OK(ck_int_tuple_flat(NULL, 0, &t));
    CHECK_OK(ck_int_tuple_format(&t, buf, sizeof buf));
    CHECK_EQ_STR(buf, "()");

    CHECK_STATUS(ck_int_tuple_flat(v, -1, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_flat(v, CK_INT_TUPLE_MAX_NODES, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_rank(&t, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_depth(NULL, &depth), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_equal(&t, NULL, &eq), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_all(NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_int_tuple_range(0, 1, NULL), CK_ERROR_INVALID_ARGUMENT);
    /* Joining past CK_INT_TUPLE_MAX_NODES nodes. */
    int64_t many[20] = {0};
    CHECK_OK(ck_int_tuple_flat(many, 20, &parts[0]));
    parts[1] = parts[0];
    CHECK_STATUS(ck_int_tuple_join(parts, 2, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "parts[1]") != NULL);
    /* A hand-damaged part is named. */
    CHECK_OK(ck_int_tuple_flat(v, 3, &parts[1]));
    parts[1].node[2].span = 2;
    CHECK_STATUS(ck_int_tuple_join(parts, 2, &t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "parts[1]") != NULL);
}

int main(void)
{
    RUN_TEST(test_int_tuples);
    return CK_TEST_REPORT();
}
