/* format.h - the figures as every report shows them (times, fixed-point
 * figures, bytes, ceilings, case titles) and the text layout the writers share:
 * display widths, cutting a string to a width, markdown cells, and the rows of
 * aligned text tables and markdown pipe tables. Formatting only: the figures
 * come from the result model. */
#ifndef KB_FORMAT_H
#define KB_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "results/result.h"

/* Microseconds with about four significant digits in µs, ms or s: "812.2 µs",
 * "3.195 ms"; "-" when not finite. */
void kb_fmt_time(double us, char *b, size_t n);

/* pre, v with prec decimals, post: "±1.2%"; "-" when v is not finite. */
void kb_fmt_fixed(double v, int prec, const char *pre, const char *post, char *b, size_t n);

/* Device memory in decimal units: "4.3 GB", "512 MB", "12 kB", "96 B"; "-"
 * for none (0) or unknown. */
void kb_fmt_bytes(double v, char *b, size_t n);

/* The device's known calibrated ceilings: "copy bw 4229 GB/s · bf16 mma 780
 * TFLOP/s · fp32 51 TFLOP/s (calibrated)", only those known, or "not
 * calibrated (run 'kbench calibrate')". */
void kb_fmt_ceilings(const kb_device *d, char *b, size_t n);

/* The title of r's case: "softmax · fp32 · rows=4096, cols=1024". */
void kb_fmt_case_title(const kb_result *r, char *b, size_t n);

/* Display columns of a UTF-8 string (one per code point). */
size_t kb_text_width(const char *s);

/* The first line of s in at most max bytes (cut on a UTF-8 boundary, "..."
 * marking the cut), made safe for a terminal (kb_safe), into b[n]. */
void kb_text_shorten(const char *s, size_t max, char *b, size_t n);

/* The widest text line by default, in columns: what a 100-column terminal
 * shows without wrapping. */
#define KB_TEXT_WIDTH 100

/* Writes lead then text, wrapped at spaces so that no line is wider than
 * width columns (0: no limit; a word longer than a line is cut), continuation
 * lines indented by lead's width; then a newline. Both are written as they are
 * (make untrusted text safe first). */
void kb_text_wrap(FILE *f, const char *lead, const char *text, size_t width);

/* Writes untrusted s for a terminal or text file (kb_put_safe KB_SAFE_TERM:
 * control characters escaped, so it stays on its line). */
void kb_text_line(FILE *f, const char *s);

/* Writes untrusted s as markdown text (kb_put_safe KB_SAFE_MD). */
void kb_md_text(FILE *f, const char *s);

/* One row of an aligned text table: the cells of the visible columns (vis[c]),
 * two spaces apart, each padded to width[c] (right-aligned where right[c]),
 * trailing blanks dropped, then a newline. A cell wider than its width is
 * written whole: the caller cuts it first. */
void kb_table_text_row(FILE *f, const char *const *cell, const size_t *width, const int *right,
                       const int *vis, int ncol);

/* One row of a markdown pipe table: "| a | b |" over the visible columns, the
 * cells as kb_md_text. */
void kb_table_md_row(FILE *f, const char *const *cell, const int *vis, int ncol);

/* The rule under a markdown table's heading row: "|---|---:|", right-aligned
 * where right[c]. */
void kb_table_md_rule(FILE *f, const int *right, const int *vis, int ncol);

#endif
