/* test_util.c - number parsing, string helpers, edit distance (util/status) and
 * the sanitiser of untrusted strings (util/text). */
#include "kbtest.h"
#include "util/embed.h"
#include "util/sha256.h"
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

static void list_has_whole_words(void **state)
{
    (void)state;
    assert_true(kb_list_has("softmax,layernorm", "softmax"));
    assert_true(kb_list_has("softmax,layernorm", "layernorm"));
    assert_false(kb_list_has("softmax,layernorm", "norm"));
    assert_false(kb_list_has("flash-wgmma", "flash"));
    assert_false(kb_list_has("", "fused"));
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

/* Lines under an error's message live past its NUL: the message reads as one
 * line, a new message drops them, and a value in a message cannot make one. */
static void error_more_lines(void **state)
{
    (void)state;
    kb_err e = {{0}};
    assert_string_equal(kb_err_more(&e), "");
    kb_fail(&e, KB_EUSAGE, "'%s' does not compile", "x.cu");
    kb_err_set_more(&e, "x.cu:3: error: a\nx.cu:4: error: b");
    assert_string_equal(e.msg, "'x.cu' does not compile");
    assert_string_equal(kb_err_more(&e), "x.cu:3: error: a\nx.cu:4: error: b");
    kb_fail(&e, KB_EUSAGE, "unknown variant '%s'", "a\nb");
    assert_string_equal(e.msg, "unknown variant 'a\nb'");
    assert_string_equal(kb_err_more(&e), "");
    /* a message that fills the buffer leaves no room, and nothing is written */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    kb_fail(&e, KB_EENV, "%s", big);
    kb_err_set_more(&e, "never shown");
    assert_string_equal(kb_err_more(&e), "");
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
}

/* FIPS 180-4 / NIST CSRC example vectors, and a message of exactly one block
 * of padding room (55, 56 and 64 bytes cross the padding's edge cases). */
static void sha256_vectors(void **state)
{
    (void)state;
    char hex[KB_SHA256_HEX];
    kb_sha256_of("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    kb_sha256_of("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    kb_sha256_of(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjk"
                       "lmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    kb_sha256_of(four, strlen(four), hex);
    assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* one million 'a', fed in uneven pieces */
    kb_sha256 s;
    unsigned char d[KB_SHA256_BYTES];
    char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    kb_sha256_init(&s);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof chunk ? left : sizeof chunk;
        kb_sha256_update(&s, chunk, n);
        left -= n;
    }
    kb_sha256_final(&s, d);
    kb_sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* The files the binary carries are byte for byte the tree's (run from the
 * repository root, as tests/run.sh does). */
static void embedded_files_match_the_tree(void **state)
{
    (void)state;
    int n = 0;
    for (const kb_embedded *f = kb_embedded_files; f->path; f++, n++) {
        char *text = kbt_slurp(f->path);
        assert_non_null(text);
        assert_int_equal(strlen(text), f->len);
        assert_string_equal(text, f->text);
        free(text);
    }
    assert_true(n >= 2);
    assert_non_null(kb_embedded_find("include/kbench/variant.h"));
    assert_non_null(kb_embedded_find("templates/softmax.cu"));
    assert_null(kb_embedded_find("templates/nope.cu"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_i64_accepts_range),   cmocka_unit_test(parse_i64_rejects_bad_text),
        cmocka_unit_test(parse_double_checks),       cmocka_unit_test(strlcpy_truncates),
        cmocka_unit_test(list_has_whole_words),
        cmocka_unit_test(edit_distance_counts),      cmocka_unit_test(safe_text_per_kind),
        cmocka_unit_test(sha256_vectors),            cmocka_unit_test(embedded_files_match_the_tree),
        cmocka_unit_test(error_more_lines),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
