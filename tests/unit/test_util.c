/* test_util.c - number parsing, string helpers and edit distance (util/status). */
#include "kbtest.h"
#include "util/status.h"

static void parse_i64_accepts_range(void **state)
{
    (void)state;
    kb_err e = {{0}};
    int64_t v = 0;
    assert_int_equal(kb_parse_i64("4096", 1, 100000, "rows", &v, &e), KB_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(kb_parse_i64("9223372036854775807", 0, INT64_MAX, "x", &v, &e), KB_OK);
    assert_true(v == INT64_MAX);
}

static void parse_i64_rejects_bad_text(void **state)
{
    (void)state;
    kb_err e = {{0}};
    int64_t v = 0;
    assert_int_equal(kb_parse_i64("", 1, 10, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "empty value for rows");
    assert_int_equal(kb_parse_i64("12x", 1, 100, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "rows is not a whole number: '12x'");
    assert_int_equal(kb_parse_i64("abc", 1, 100, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "rows is not a number: 'abc'");
    assert_int_equal(kb_parse_i64("-4", 1, 100, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "rows must not be negative, got '-4'");
    assert_int_equal(kb_parse_i64("0", 1, 100, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "rows must be in [1, 100], got '0'");
    assert_int_equal(kb_parse_i64("99999999999999999999", 1, 100, "rows", &v, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "rows is too large: '99999999999999999999'");
    assert_int_equal(kb_parse_i64("1.5", 1, 100, "rows", &v, &e), KB_EUSAGE);
}

static void parse_double_checks(void **state)
{
    (void)state;
    kb_err e = {{0}};
    double v = 0;
    assert_int_equal(kb_parse_double("0.5", 0, 100, "--max-noise", &v, &e), KB_OK);
    assert_true(v == 0.5);
    assert_int_equal(kb_parse_double("nan", 0, 100, "--max-noise", &v, &e), KB_EUSAGE);
    assert_int_equal(kb_parse_double("1e999", 0, 100, "--max-noise", &v, &e), KB_EUSAGE);
    assert_int_equal(kb_parse_double("200", 0, 100, "--max-noise", &v, &e), KB_EUSAGE);
    assert_int_equal(kb_parse_double("5%", 0, 100, "--max-noise", &v, &e), KB_EUSAGE);
}

static void strlcpy_truncates(void **state)
{
    (void)state;
    char buf[4];
    assert_int_equal(kb_strlcpy(buf, "abc", sizeof buf), 0);
    assert_string_equal(buf, "abc");
    assert_int_equal(kb_strlcpy(buf, "abcdef", sizeof buf), 1);
    assert_string_equal(buf, "abc");
}

static void edit_distance_counts(void **state)
{
    (void)state;
    assert_int_equal(kb_edit_distance("fused", "fused"), 0);
    assert_int_equal(kb_edit_distance("fusd", "fused"), 1);
    assert_int_equal(kb_edit_distance("coalsced", "coalesced"), 1);
    assert_int_equal(kb_edit_distance("", "abc"), 3);
    assert_int_equal(kb_edit_distance("kitten", "sitting"), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_i64_accepts_range),   cmocka_unit_test(parse_i64_rejects_bad_text),
        cmocka_unit_test(parse_double_checks),       cmocka_unit_test(strlcpy_truncates),
        cmocka_unit_test(edit_distance_counts),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
