/* status.c - error messages, number parsing and formatting, and small string
 * helpers shared by every module. */
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_fail(kb_err *e, kb_status s, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        kb_err_set_more(e, "");
    }
    return s;
}

void kb_err_set_more(kb_err *e, const char *lines)
{
    const size_t at = strnlen(e->msg, sizeof e->msg - 1) + 1; /* past the message's NUL */
    if (at < sizeof e->msg)
        kb_strlcpy(e->msg + at, lines, sizeof e->msg - at);
}

const char *kb_err_more(const kb_err *e)
{
    const size_t at = strnlen(e->msg, sizeof e->msg - 1) + 1;
    return at < sizeof e->msg ? e->msg + at : "";
}

kb_status kb_parse_i64(const char *s, int64_t lo, int64_t hi, const char *what,
                       int64_t *out, kb_err *e)
{
    if (!s || !*s)
        return kb_fail(e, KB_EUSAGE, "empty value for %s", what);
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p == '-' && lo >= 0)
        return kb_fail(e, KB_EUSAGE, "%s must not be negative, got '%s'", what, s);
    if (!(*p == '-' || *p == '+' || (*p >= '0' && *p <= '9')))
        return kb_fail(e, KB_EUSAGE, "%s is not a number: '%s'", what, s);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p || *end != '\0')
        return kb_fail(e, KB_EUSAGE, "%s is not a whole number: '%s'", what, s);
    if (errno == ERANGE)
        return kb_fail(e, KB_EUSAGE, "%s is too large: '%s'", what, s);
    if (v < lo || v > hi)
        return kb_fail(e, KB_EUSAGE, "%s must be in [%lld, %lld], got '%s'", what,
                       (long long)lo, (long long)hi, s);
    *out = (int64_t)v;
    return KB_OK;
}

kb_status kb_parse_double(const char *s, double lo, double hi, const char *what,
                          double *out, kb_err *e)
{
    if (!s || !*s)
        return kb_fail(e, KB_EUSAGE, "empty value for %s", what);
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return kb_fail(e, KB_EUSAGE, "%s is not a number: '%s'", what, s);
    if (errno == ERANGE || !isfinite(v))
        return kb_fail(e, KB_EUSAGE, "%s is out of range: '%s'", what, s);
    if (v < lo || v > hi)
        return kb_fail(e, KB_EUSAGE, "%s must be in [%g, %g], got '%s'", what, lo, hi, s);
    *out = v;
    return KB_OK;
}

int kb_list_has(const char *list, const char *word)
{
    const size_t n = strlen(word);
    for (const char *s = list; *s;) {
        const char *c = strchr(s, ',');
        const size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == n && !strncmp(s, word, n))
            return 1;
        s += len + (c ? 1 : 0);
    }
    return 0;
}

int kb_strlcpy(char *dst, const char *src, size_t dst_size)
{
    size_t n = strlen(src);
    if (n < dst_size) {
        memcpy(dst, src, n + 1);
        return 0;
    }
    memcpy(dst, src, dst_size - 1);
    dst[dst_size - 1] = '\0';
    return 1;
}

void kb_fmt_exact(double v, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!isfinite(v))
        return;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

int kb_edit_distance(const char *a, const char *b)
{
    enum { N = 64 };
    size_t la = strnlen(a, N - 1), lb = strnlen(b, N - 1);
    int row[N];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

void kb_iso_time(time_t t, char *buf, size_t n)
{
    struct tm tm;
    buf[0] = '\0';
    if (gmtime_r(&t, &tm))
        strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
