/* format.c - figures as strings and the text layout every writer shares (see
 * format.h). */
#include "report/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"
#include "util/text.h"

/* UTF-8 for the middle dot and the micro sign. */
#define DOT "\xC2\xB7"
#define MICRO "\xC2\xB5"

void kb_fmt_time(double us, char *b, size_t n)
{
    static const char *const unit[] = {MICRO "s", "ms", "s"};
    if (!isfinite(us)) {
        snprintf(b, n, "-");
        return;
    }
    char four[40];
    snprintf(four, sizeof four, "%.4g", us); /* rounded first: 99.996 reads "100.0" */
    double v = strtod(four, NULL);
    int u = 0;
    while (u < 2 && fabs(v) >= 1000.0) {
        v /= 1000.0;
        u++;
    }
    int prec = fabs(v) < 10 ? 3 : fabs(v) < 100 ? 2 : 1;
    snprintf(b, n, "%.*f %s", prec, v, unit[u]);
}

void kb_fmt_fixed(double v, int prec, const char *pre, const char *post, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%s%.*f%s", pre, prec, v, post);
}

void kb_fmt_bytes(double v, char *b, size_t n)
{
    if (!isfinite(v) || v <= 0)
        snprintf(b, n, "-");
    else if (v >= 1e9)
        snprintf(b, n, "%.1f GB", v / 1e9);
    else if (v >= 1e6)
        snprintf(b, n, "%.0f MB", v / 1e6);
    else if (v >= 1e3)
        snprintf(b, n, "%.0f kB", v / 1e3);
    else
        snprintf(b, n, "%.0f B", v);
}

/* A ceiling with three significant digits or more: "4229", "51", "8.1". */
static void fmt_ceiling(double v, char *b, size_t n)
{
    snprintf(b, n, "%.*f", fabs(v) >= 10 ? 0 : 1, v);
}

void kb_fmt_ceilings(const kb_device *d, char *b, size_t n)
{
    const char *const name[] = {"copy bw", "batch", "bf16 mma", "fp32"};
    const char *const unit[] = {"GB/s", "GB/s", "TFLOP/s", "TFLOP/s"};
    const double value[] = {d->copy_gbps, d->copy_batch_gbps, d->mma_tflops, d->fp32_tflops};
    size_t used = 0;
    char v[32];
    b[0] = '\0';
    for (size_t i = 0; i < KB_COUNT(value) && used < n; i++) {
        if (!isfinite(value[i]))
            continue;
        fmt_ceiling(value[i], v, sizeof v);
        int w = snprintf(b + used, n - used, "%s%s %s %s", used ? " " DOT " " : "", name[i], v,
                         unit[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used == 0)
        snprintf(b, n, "not calibrated (run 'kbench calibrate')");
    else if (used < n && *d->ceilings_at)
        snprintf(b + used, n - used, " (calibrated %.10s)", d->ceilings_at);
    else if (used < n)
        snprintf(b + used, n - used, " (calibrated)");
}

void kb_fmt_case_title(const kb_result *r, char *b, size_t n)
{
    char shape[256];
    kb_result_shape_str(r, ", ", shape, sizeof shape);
    snprintf(b, n, "%s " DOT " %s " DOT " %s", r->op, r->dtype, shape);
}

size_t kb_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

void kb_text_shorten(const char *s, size_t max, char *b, size_t n)
{
    char line[1024], safe[1024];
    const size_t first = strcspn(s, "\r\n");
    snprintf(line, sizeof line, "%.*s", (int)(first < sizeof line ? first : sizeof line - 1), s);
    kb_safe(KB_SAFE_TERM, line, safe, sizeof safe);
    size_t len = strlen(safe);
    int cut = 0;
    if (max + 1 > n)
        max = n - 1;
    if (len > max) {
        len = max - 3;
        while (len > 0 && ((unsigned char)safe[len] & 0xC0) == 0x80)
            len--;
        cut = 1;
    }
    memcpy(b, safe, len);
    b[len] = '\0';
    if (cut || s[first] != '\0')
        kb_strlcpy(b + len, "...", n - len);
}

void kb_text_line(FILE *f, const char *s)
{
    kb_put_safe(f, KB_SAFE_TERM, s);
}

void kb_md_text(FILE *f, const char *s)
{
    kb_put_safe(f, KB_SAFE_MD, s);
}

/* The bytes of the first n display columns of s (whole UTF-8 characters). */
static size_t cols_to_bytes(const char *s, size_t n)
{
    size_t i = 0, w = 0;
    while (s[i] && w < n) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        w++;
    }
    return i;
}

/* The bytes of s that fit in n bytes without splitting a UTF-8 character. */
static size_t fit_bytes(const char *s, size_t n)
{
    size_t i = strlen(s) < n ? strlen(s) : n;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

void kb_text_wrap(FILE *f, const char *lead, const char *text, size_t width)
{
    /* widths counted in bytes, never fewer than the display columns: a line
     * fits width columns however a reader counts it (a UTF-8 "·" is two) */
    const size_t indent = strlen(lead);
    size_t col = indent;
    int fresh = 1; /* nothing on this line after the lead or indent yet */
    fputs(lead, f);
    for (const char *s = text; *s;) {
        const size_t gap = strspn(s, " "); /* the blanks before the word, kept on a line */
        s += gap;
        const size_t len = strcspn(s, " ");
        if (len == 0)
            break;
        char word[1024];
        size_t take = len < sizeof word ? len : sizeof word - 1;
        memcpy(word, s, take);
        word[take] = '\0';
        size_t w = strlen(word);
        if (width && !fresh && col + gap + w > width) {
            fprintf(f, "\n%*s", (int)kb_text_width(lead), "");
            col = indent;
            fresh = 1;
        }
        if (!fresh) {
            fprintf(f, "%*s", (int)gap, "");
            col += gap;
        }
        /* a word wider than a whole line is cut across lines */
        while (width && w > 0 && col + w > width && width > indent + 1) {
            size_t b = fit_bytes(word, width - col);
            if (b == 0)
                b = cols_to_bytes(word, 1); /* one character, however wide */
            fwrite(word, 1, b, f);
            memmove(word, word + b, strlen(word + b) + 1);
            w = strlen(word);
            fprintf(f, "\n%*s", (int)kb_text_width(lead), "");
            col = indent;
        }
        fputs(word, f);
        col += w;
        fresh = 0;
        s += len;
    }
    fputc('\n', f);
}

/* A line written with its blanks held back until something follows them, so
 * that trailing blanks are never written. */
typedef struct line_out {
    FILE *f;
    size_t blanks; /* held back */
} line_out;

static void put_text(line_out *o, const char *s)
{
    for (; *s; s++) {
        if (*s == ' ') {
            o->blanks++;
            continue;
        }
        for (; o->blanks > 0; o->blanks--)
            fputc(' ', o->f);
        fputc(*s, o->f);
    }
}

void kb_table_text_row(FILE *f, const char *const *cell, const size_t *width, const int *right,
                       const int *vis, int ncol)
{
    line_out o = {f, 0};
    int first = 1;
    for (int c = 0; c < ncol; c++) {
        if (!vis[c])
            continue;
        const size_t w = kb_text_width(cell[c]), gap = width[c] > w ? width[c] - w : 0;
        o.blanks += first ? 0 : 2;
        first = 0;
        if (right[c])
            o.blanks += gap;
        put_text(&o, cell[c]);
        if (!right[c])
            o.blanks += gap;
    }
    fputc('\n', f);
}

void kb_table_md_row(FILE *f, const char *const *cell, const int *vis, int ncol)
{
    fputc('|', f);
    for (int c = 0; c < ncol; c++) {
        if (!vis[c])
            continue;
        fputc(' ', f);
        kb_md_text(f, cell[c]);
        fputs(" |", f);
    }
    fputc('\n', f);
}

void kb_table_md_rule(FILE *f, const int *right, const int *vis, int ncol)
{
    fputc('|', f);
    for (int c = 0; c < ncol; c++)
        if (vis[c])
            fputs(right[c] ? "---:|" : "---|", f);
    fputc('\n', f);
}
