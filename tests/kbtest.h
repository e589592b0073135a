/* kbtest.h - what every kbench test includes: cmocka, plus helpers for tests
 * that need a GPU (they skip, saying so, without one) or run the kbench binary. */
#ifndef KB_TEST_H
#define KB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Reads a whole file into a malloc'd NUL-terminated string (caller frees), or NULL. */
static inline char *kbt_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
        if (cap - n < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* A fresh empty temporary directory (static buffer; call once per test). */
static inline const char *kbt_tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kbtest.XXXXXX");
    return mkdtemp(dir);
}

#endif
