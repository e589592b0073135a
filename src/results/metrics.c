/* metrics.c - the names of the metric sets (see metrics.h). */
#include "results/metrics.h"

#include <string.h>

static const char *const set_names[KB_METRICS_COUNT] = {
    [KB_METRICS_NONE] = "none",     [KB_METRICS_CORE] = "core", [KB_METRICS_SOL] = "sol",
    [KB_METRICS_STALLS] = "stalls", [KB_METRICS_FULL] = "full",
};

int kb_metric_set_parse(const char *s, kb_metric_set *out)
{
    if (!s)
        return -1;
    for (int i = 0; i < KB_METRICS_COUNT; i++)
        if (strcmp(s, set_names[i]) == 0) {
            *out = (kb_metric_set)i;
            return 0;
        }
    return -1;
}

const char *kb_metric_set_name(kb_metric_set s)
{
    return (int)s >= 0 && (int)s < KB_METRICS_COUNT ? set_names[s] : "?";
}
