/* embed.c - lookup of the files carried in the binary (see embed.h). */
#include "util/embed.h"

#include <string.h>

const kb_embedded *kb_embedded_find(const char *path)
{
    for (const kb_embedded *f = kb_embedded_files; f->path; f++)
        if (strcmp(f->path, path) == 0)
            return f;
    return NULL;
}
