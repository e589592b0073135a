/* status.h - the status codes every library function returns, and the error
 * message that travels with them.
 *
 * A status value is also the process exit code (only main() exits):
 *   KB_OK 0 · KB_ECHECK 1 (a check the user asked for failed) · KB_EUSAGE 2 ·
 *   KB_EENV 3 (no GPU, CUDA/CUPTI/SQLite/I-O failure).
 * Messages are lowercase, say what went wrong first and quote the bad value. */
#ifndef KB_STATUS_H
#define KB_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kb_status {
    KB_OK = 0,
    KB_ECHECK = 1,
    KB_EUSAGE = 2,
    KB_EENV = 3,
} kb_status;

/* The message that goes with a non-OK status. Zero-initialise it. */
typedef struct kb_err {
    char msg[1024]; /* the message, one line; then (kb_err_set_more) more lines */
} kb_err;

#if defined(__GNUC__)
#define KB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KB_PRINTF(a, b)
#endif

/* In a function with `kb_status st` and a `done:` label (its one cleanup
 * path): runs x, keeps its status in st and jumps to done unless it is KB_OK. */
#define KB_TRY(x)                                                                       \
    do {                                                                                \
        st = (x);                                                                       \
        if (st != KB_OK)                                                                \
            goto done;                                                                  \
    } while (0)

/* Elements of an array (not a pointer). */
#define KB_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Sets e->msg from the format, with no more lines (e may be NULL), and returns s, so that
 * `return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", s);` reads as one step. */
kb_status kb_fail(kb_err *e, kb_status s, const char *fmt, ...) KB_PRINTF(3, 4);

/* Lines to show under e's message (a tool's own output, such as a compiler's
 * errors), '\n' between them, cut to the room left. They are kept in e->msg
 * after the message's terminating NUL, where no value quoted in the message
 * can reach (a C string holds no NUL): the message stays one line, and code
 * that reads e->msg as a string sees only it. */
void kb_err_set_more(kb_err *e, const char *lines);

/* The lines under e's message (kb_err_set_more), "" when there are none. */
const char *kb_err_more(const kb_err *e);

/* Parses a whole decimal integer in [lo, hi]. Returns KB_EUSAGE with a message
 * naming `what` and the text for empty input, trailing garbage, a sign where
 * lo >= 0, or a value out of range (overflow included). */
kb_status kb_parse_i64(const char *s, int64_t lo, int64_t hi, const char *what,
                       int64_t *out, kb_err *e);

/* Parses a whole finite floating-point number in [lo, hi]; errors as above. */
kb_status kb_parse_double(const char *s, double lo, double hi, const char *what,
                          double *out, kb_err *e);

/* Bounded copy that always terminates dst (dst_size > 0). Returns 1 when the
 * source was cut short, 0 otherwise. */
int kb_strlcpy(char *dst, const char *src, size_t dst_size);

/* 1 when word is one of the comma-separated words of list ("a,b"), 0 otherwise. */
int kb_list_has(const char *list, const char *word);

/* The shortest decimal text (15, 16 or 17 significant digits) that reads back
 * to exactly v, into buf; "" when v is not finite. */
void kb_fmt_exact(double v, char *buf, size_t n);

/* t as ISO 8601 UTC, "2026-12-01T05:53:00Z", into buf (n >= 21). */
void kb_iso_time(time_t t, char *buf, size_t n);

/* Levenshtein distance between two short strings (each at most 63 bytes are
 * compared); used for "did you mean" suggestions. */
int kb_edit_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
