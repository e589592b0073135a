/* text.c - the sanitiser of untrusted strings (text.h). */
#include "util/text.h"

#include <string.h>

/* Where the safe form goes: a buffer (cut at a character boundary when full)
 * or a stream. */
typedef struct sink {
    FILE *f;
    char *b;
    size_t n, used;
    int full;
} sink;

/* Appends the whole piece p[0..len), or nothing once it no longer fits. */
static void put(sink *o, const char *p, size_t len)
{
    if (o->f) {
        fwrite(p, 1, len, o->f);
        return;
    }
    if (o->full || o->used + len + 1 > o->n) {
        o->full = 1;
        return;
    }
    memcpy(o->b + o->used, p, len);
    o->used += len;
    o->b[o->used] = '\0';
}

/* The length of the valid UTF-8 character at s (1-4), or 0 when s does not
 * start one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t len = 0;
    if (s[0] < 0x80)
        len = 1;
    else if (s[0] >= 0xC2 && s[0] <= 0xDF)
        len = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        len = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        len = 4;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, or a surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0;
    return len;
}

static void sanitise(sink *o, kb_safe_kind k, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    if (k == KB_SAFE_CSV && strchr("=+-@", *s) && *s)
        put(o, "'", 1);
    while (*s) {
        const unsigned char c = *s;
        const size_t len = utf8_len(s);
        char esc[8];
        const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                            : c == 0x1B ? "\\e" : NULL;
        if (named) {
            put(o, named, 2);
        } else if (len == 0 || c < 0x20 || c == 0x7F) {
            const char x[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            put(o, x, 4);
        } else if (len == 2 && c == 0xC2 && s[1] < 0xA0) { /* C1 controls, U+0080..U+009F */
            const char u[6] = {'\\', 'u', '0', '0', hex[s[1] >> 4], hex[s[1] & 15]};
            put(o, u, 6);
        } else if (k == KB_SAFE_MD && strchr("|`\\", c)) {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(o, esc, 2);
        } else if (k == KB_SAFE_MD && (c == '<' || c == '&')) {
            const char *ent = c == '<' ? "&lt;" : "&amp;";
            put(o, ent, strlen(ent));
        } else {
            put(o, (const char *)s, len);
        }
        s += len ? len : 1;
    }
}

const char *kb_safe(kb_safe_kind k, const char *s, char *b, size_t n)
{
    sink o = {NULL, b, n, 0, 0};
    b[0] = '\0';
    sanitise(&o, k, s);
    return b;
}

void kb_put_safe(FILE *f, kb_safe_kind k, const char *s)
{
    sink o = {f, NULL, 0, 0, 0};
    sanitise(&o, k, s);
}
