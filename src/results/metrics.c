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

/* The metrics of kbench's sets, by CUPTI name (the stall reasons have their
 * own table in the writers: they are shares, named by reason). */
static const struct {
    const char *name;
    kb_metric_info info;
} known[] = {
    {"gpu__time_duration.sum", {"duration", KB_UNIT_NS}},
    {"dram__bytes_read.sum", {"DRAM read", KB_UNIT_BYTES}},
    {"dram__bytes_write.sum", {"DRAM written", KB_UNIT_BYTES}},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"DRAM throughput", KB_UNIT_PCT}},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", {"achieved occupancy", KB_UNIT_PCT}},
    {"sm__inst_issued.avg.pct_of_peak_sustained_active", {"issue active", KB_UNIT_PCT}},
    {"smsp__issue_active.avg.pct_of_peak_sustained_active", {"issue active", KB_UNIT_PCT}},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
     {"tensor pipe active", KB_UNIT_PCT}},
    {"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", {"local memory loaded", KB_UNIT_BYTES}},
    {"l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", {"local memory stored", KB_UNIT_BYTES}},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"SM speed of light", KB_UNIT_PCT}},
    {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
     {"memory speed of light", KB_UNIT_PCT}},
    {"l1tex__t_sector_hit_rate.pct", {"L1 hit rate", KB_UNIT_PCT}},
    {"lts__t_sector_hit_rate.pct", {"L2 hit rate", KB_UNIT_PCT}},
};

kb_metric_info kb_metric_info_of(const char *name)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i].name) == 0)
            return known[i].info;
    kb_metric_info m = {name, KB_UNIT_COUNT};
    if (strstr(name, "pct_of_peak") || strstr(name, ".pct"))
        m.unit = KB_UNIT_PCT;
    else if (strstr(name, "bytes"))
        m.unit = KB_UNIT_BYTES;
    else if (strstr(name, "duration"))
        m.unit = KB_UNIT_NS;
    return m;
}
