/* env.c - kb_env_int (see env.h). */
#include "util/env.h"

#include <errno.h>
#include <stdlib.h>

int kb_env_int(const char *name, int dflt, int lo, int hi)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    char *end = NULL;
    errno = 0;
    const long n = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < lo || n > hi)
        return dflt;
    return (int)n;
}
