/* test_util.c - number parsing, string helpers, edit distance (util/status) and
 * the sanitiser of untrusted strings (util/text). */
#include "kbtest.h"
#include "util/status.h"
#include "util/text.h"

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

/* The one sanitiser of untrusted strings, per output kind. */
static void safe_text_per_kind(void **state)
{
    (void)state;
    char b[256];
    /* a terminal: escape sequences, line breaks, C1 controls and bad UTF-8
     * shown escaped; good UTF-8 kept */
    assert_string_equal(kb_safe(KB_SAFE_TERM, "red\x1b[31m\nnext\ttab\x7f\xc2\x9b\xff 2\xc2\xb5s",
                                b, sizeof b),
                        "red\\e[31m\\nnext\\ttab\\x7f\\u009b\\xff 2\xc2\xb5s");
    assert_string_equal(kb_safe(KB_SAFE_TERM, "a\rb\x01", b, sizeof b), "a\\rb\\x01");
    /* markdown: no cell split, code span, raw HTML or line break */
    assert_string_equal(kb_safe(KB_SAFE_MD, "a|b `c` <script>&\nx\\", b, sizeof b),
                        "a\\|b \\`c\\` &lt;script>&amp;\\nx\\\\");
    /* CSV: a formula is neutralised, other cells left as they are */
    assert_string_equal(kb_safe(KB_SAFE_CSV, "=HYPERLINK(\"x\")", b, sizeof b),
                        "'=HYPERLINK(\"x\")");
    for (const char *p = "+-@"; *p; p++) {
        char in[8] = {*p, '1', '\0'}, want[8] = {'\'', *p, '1', '\0'};
        assert_string_equal(kb_safe(KB_SAFE_CSV, in, b, sizeof b), want);
    }
    assert_string_equal(kb_safe(KB_SAFE_CSV, "a=1", b, sizeof b), "a=1");
    assert_string_equal(kb_safe(KB_SAFE_CSV, "", b, sizeof b), "");
    /* cut whole at a character boundary when the buffer is short */
    assert_string_equal(kb_safe(KB_SAFE_TERM, "ab\x1b", b, 4), "ab");
    assert_string_equal(kb_safe(KB_SAFE_TERM, "a\xc2\xb5", b, 3), "a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_i64_accepts_range),   cmocka_unit_test(parse_i64_rejects_bad_text),
        cmocka_unit_test(parse_double_checks),       cmocka_unit_test(strlcpy_truncates),
        cmocka_unit_test(edit_distance_counts),      cmocka_unit_test(safe_text_per_kind),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
