/* text.h - the one sanitiser of untrusted strings (names, tags, reasons,
 * kernel names, paths and values from a report, a store or the command line)
 * on their way to an output: a terminal, markdown, or a CSV cell. HTML has its
 * own escape (report/html.h). */
#ifndef KB_TEXT_H
#define KB_TEXT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kb_safe_kind {
    /* A terminal or a plain-text file: control characters (C0, DEL, C1) shown
     * as escapes (\n, \t, \e, \x7f, \u009b) and bytes that are not UTF-8 as
     * \xNN, so nothing moves the cursor, changes colours or breaks the line. */
    KB_SAFE_TERM,
    /* Markdown text (a table cell, a list item): as for a terminal, and '|',
     * '`', '\', '*', '_', '[', ']' escaped with '\', '<', '>' and '&' as
     * entities, so no cell splits, no markup or raw HTML passes. */
    KB_SAFE_MD,
    /* A CSV cell's content (the caller quotes it): as for a terminal, and a
     * cell starting with '=', '+', '-', '@' (a spreadsheet formula) gets a
     * leading "'". */
    KB_SAFE_CSV,
} kb_safe_kind;

/* s made safe for kind k into b[n] (n > 0), cut on a character boundary when
 * it does not fit; returns b. */
const char *kb_safe(kb_safe_kind k, const char *s, char *b, size_t n);

/* Writes s made safe for kind k to f, whole. */
void kb_put_safe(FILE *f, kb_safe_kind k, const char *s);

#ifdef __cplusplus
}
#endif
#endif
