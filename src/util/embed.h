/* embed.h - files kbench carries inside its binary: the public variant header
 * (include/kbench/variant.h, which nvcc needs for users' own variant files)
 * and the starting files `kbench new` writes (templates/<op>.cu). The Makefile
 * turns them into build/gen/embedded.c. */
#ifndef KB_EMBED_H
#define KB_EMBED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One carried file. */
typedef struct kb_embedded {
    const char *path; /* its path in the source tree: "include/kbench/variant.h" */
    const char *text; /* its bytes, NUL-terminated */
    size_t len;       /* without the NUL */
} kb_embedded;

/* The table the Makefile generates, ended by a row with path NULL. */
extern const kb_embedded kb_embedded_files[];

/* The file carried under path, or NULL. Static storage. */
const kb_embedded *kb_embedded_find(const char *path);

#ifdef __cplusplus
}
#endif
#endif
