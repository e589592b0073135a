/* nvml.c - NVML loaded at run time, and the decisions taken from what it says
 * (see nvml.h). The few NVML types used are declared here from the library's
 * documented ABI, so that no NVML header is needed to build. */
#include "profiler/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The library the driver installs (nvidia-smi loads it too). */
#define NVML_LIB "libnvidia-ml.so.1"
/* Where the kernel module says its version. */
#define NVRM_VERSION_FILE "/proc/driver/nvidia/version"

/* NVML's return codes used here. */
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
/* Room for a driver version (NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80). */
#define NVML_VERSION_BUF 80

typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;

/* nvmlProcessInfo_t of the _v2 and _v3 process queries ... */
typedef struct nvml_proc_v2 {
    unsigned int pid;
    unsigned long long used_memory;
    unsigned int gpu_instance, compute_instance;
} nvml_proc_v2;
/* ... and of the first one. */
typedef struct nvml_proc_v1 {
    unsigned int pid;
    unsigned long long used_memory;
} nvml_proc_v1;

struct kb_nvml {
    void *lib;
    nvml_device dev;
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*procs)(nvml_device, unsigned int *, void *);
    size_t proc_size; /* sizeof the struct procs fills */
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    nvml_return (*driver)(char *, unsigned int);
};

/* The first of names that lib exports, or NULL. */
static void *first_symbol(void *lib, const char *const *names, int n, int *which)
{
    for (int i = 0; i < n; i++) {
        void *p = dlsym(lib, names[i]);
        if (p) {
            *which = i;
            return p;
        }
    }
    return NULL;
}

/* The loaded library, initialised, with its entry points; NULL with why. */
static kb_nvml *load(char *why, size_t why_size)
{
    kb_nvml *n = calloc(1, sizeof *n);
    nvml_return (*init)(void) = NULL;
    if (!n) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    n->lib = dlopen(NVML_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        snprintf(why, why_size, "%s could not be loaded", NVML_LIB);
        free(n);
        return NULL;
    }
    static const char *const inits[] = {"nvmlInit_v2", "nvmlInit"};
    static const char *const procs[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                        "nvmlDeviceGetComputeRunningProcesses_v2",
                                        "nvmlDeviceGetComputeRunningProcesses"};
    static const char *const reasons[] = {"nvmlDeviceGetCurrentClocksEventReasons",
                                          "nvmlDeviceGetCurrentClocksThrottleReasons"};
    int which = 0;
    *(void **)&init = first_symbol(n->lib, inits, (int)KB_COUNT(inits), &which);
    *(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
    *(void **)&n->error_string = dlsym(n->lib, "nvmlErrorString");
    *(void **)&n->driver = dlsym(n->lib, "nvmlSystemGetDriverVersion");
    *(void **)&n->reasons = first_symbol(n->lib, reasons, (int)KB_COUNT(reasons), &which);
    *(void **)&n->procs = first_symbol(n->lib, procs, (int)KB_COUNT(procs), &which);
    n->proc_size = which < 2 ? sizeof(nvml_proc_v2) : sizeof(nvml_proc_v1);
    if (!init || !n->shutdown || !n->error_string) {
        snprintf(why, why_size, "%s lacks nvmlInit", NVML_LIB);
        dlclose(n->lib);
        free(n);
        return NULL;
    }
    nvml_return rc = init();
    if (rc != NVML_SUCCESS) {
        snprintf(why, why_size, "nvmlInit failed: %s", n->error_string(rc));
        dlclose(n->lib);
        free(n);
        return NULL;
    }
    return n;
}

kb_nvml *kb_nvml_open(const char *uuid, char *why, size_t why_size)
{
    nvml_return (*by_uuid)(const char *, nvml_device *) = NULL;
    kb_nvml *n = load(why, why_size);
    if (!n)
        return NULL;
    *(void **)&by_uuid = dlsym(n->lib, "nvmlDeviceGetHandleByUUID");
    nvml_return rc = by_uuid ? by_uuid(uuid, &n->dev) : -1;
    if (rc != NVML_SUCCESS) {
        snprintf(why, why_size, "NVML does not know GPU %s: %s", uuid,
                 by_uuid ? n->error_string(rc) : "no nvmlDeviceGetHandleByUUID");
        kb_nvml_close(n);
        return NULL;
    }
    if (!n->procs) {
        snprintf(why, why_size, "%s cannot list a GPU's processes", NVML_LIB);
        kb_nvml_close(n);
        return NULL;
    }
    return n;
}

void kb_nvml_close(kb_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

/* The process list into s. */
static void read_procs(kb_nvml *n, kb_gpu_state *s)
{
    unsigned char buf[KB_GPU_MAX_PROCS * sizeof(nvml_proc_v2)];
    unsigned int count = KB_GPU_MAX_PROCS;
    nvml_return rc = n->procs(n->dev, &count, buf);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) { /* more than we read: count is how many */
        s->procs_known = 1;
        s->nprocs = (int)count;
        return;
    }
    if (rc != NVML_SUCCESS)
        return;
    s->procs_known = 1;
    s->nprocs = (int)(count < KB_GPU_MAX_PROCS ? count : KB_GPU_MAX_PROCS);
    for (int i = 0; i < s->nprocs; i++) {
        unsigned int pid;
        memcpy(&pid, buf + (size_t)i * n->proc_size, sizeof pid);
        s->pids[s->npids++] = (long)pid;
    }
}

void kb_nvml_sample(kb_nvml *n, kb_gpu_state *s)
{
    memset(s, 0, sizeof *s);
    if (!n)
        return;
    read_procs(n, s);
    if (n->reasons && n->reasons(n->dev, &s->reasons) == NVML_SUCCESS)
        s->reasons_known = 1;
}

/* 1 when t[0 .. len) is a version number: digits and dots, a dot inside. */
static int is_version(const char *t, size_t len)
{
    return len >= 3 && t[0] >= '0' && t[0] <= '9' && strspn(t, "0123456789.") >= len &&
           memchr(t, '.', len) && t[len - 1] != '.';
}

void kb_nvml_sample_settled(kb_nvml *n, kb_gpu_state *s, const long *ours, int nours)
{
    long first = 0;
    kb_nvml_sample(n, s);
    for (int i = 0; i < KB_GPU_SETTLE_TRIES && s->procs_known &&
                    kb_gpu_others(s, ours, nours, &first) > 0;
         i++) {
        const struct timespec ts = {0, (long)(KB_GPU_SETTLE_S * 1e9)};
        nanosleep(&ts, NULL);
        kb_nvml_sample(n, s);
    }
}

int kb_nvrm_version(const char *text, char *buf, size_t n)
{
    const size_t line = strcspn(text, "\n");
    buf[0] = '\0';
    for (size_t i = 0; i < line;) {
        i += strspn(text + i, " \t");
        const size_t len = strcspn(text + i, " \t\n");
        if (i + len > line)
            break;
        if (is_version(text + i, len)) {
            if (len >= n)
                return -1;
            memcpy(buf, text + i, len);
            buf[len] = '\0';
            return 0;
        }
        i += len;
    }
    return -1;
}

void kb_driver_version(char *buf, size_t n)
{
    char why[128], text[512];
    buf[0] = '\0';
    kb_nvml *nv = load(why, sizeof why);
    if (nv) {
        char v[NVML_VERSION_BUF];
        if (nv->driver && nv->driver(v, sizeof v) == NVML_SUCCESS)
            kb_strlcpy(buf, v, n);
        kb_nvml_close(nv);
        if (*buf)
            return;
    }
    FILE *f = fopen(NVRM_VERSION_FILE, "r");
    if (!f)
        return;
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    (void)kb_nvrm_version(text, buf, n);
}

/* ---- decisions ---------------------------------------------------------------- */

static const struct {
    unsigned long long bit;
    const char *name;
} throttle_names[] = {
    {KB_THROTTLE_SW_POWER_CAP, "sw power cap"},
    {KB_THROTTLE_HW_SLOWDOWN, "hw slowdown"},
    {KB_THROTTLE_SW_THERMAL, "sw thermal slowdown"},
    {KB_THROTTLE_HW_THERMAL, "hw thermal slowdown"},
    {KB_THROTTLE_HW_POWER_BRAKE, "hw power brake"},
};

void kb_throttle_reasons_str(unsigned long long bits, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < KB_COUNT(throttle_names) && used < n; i++) {
        if (!(bits & throttle_names[i].bit))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", throttle_names[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* The thermal and power bits among NVML's reasons. */
static unsigned long long throttling(unsigned long long bits)
{
    unsigned long long mask = 0;
    for (size_t i = 0; i < KB_COUNT(throttle_names); i++)
        mask |= throttle_names[i].bit;
    return bits & mask;
}

static int is_ours(long pid, const long *ours, int nours)
{
    for (int i = 0; i < nours; i++)
        if (ours[i] == pid)
            return 1;
    return 0;
}

int kb_gpu_others(const kb_gpu_state *s, const long *ours, int nours, long *first)
{
    int others = 0, mine = 0;
    *first = 0;
    for (int i = 0; i < s->npids; i++) {
        if (is_ours(s->pids[i], ours, nours)) {
            mine++;
            continue;
        }
        if (!others++)
            *first = s->pids[i];
    }
    /* processes counted but not read: others, but for those of ours not found
     * among the pids read */
    const int unread = s->nprocs - s->npids, ours_unread = nours - mine;
    if (unread > ours_unread)
        others += unread - ours_unread;
    return others;
}

void kb_gpu_watch_procs(kb_gpu_watch *w, const kb_gpu_state *s, const long *ours, int nours)
{
    if (!s || !s->procs_known) {
        w->procs_missed = 1;
        return;
    }
    w->procs_checked = 1;
    long first = 0;
    const int others = kb_gpu_others(s, ours, nours, &first);
    if (others > w->others)
        w->others = others;
    if (others > 0 && !w->other_pid)
        w->other_pid = first;
}

void kb_gpu_watch_reasons(kb_gpu_watch *w, const kb_gpu_state *s)
{
    if (s && s->reasons_known)
        w->reasons |= throttling(s->reasons);
}

void kb_gpu_watch_apply(const kb_gpu_watch *w, kb_result *r)
{
    if (w->others > 0)
        r->flags |= KB_FLAG_GPU_SHARED;
    if (w->procs_missed || !w->procs_checked)
        r->flags |= KB_FLAG_GPU_UNCHECKED;
    if (!w->reasons)
        return;
    char why[sizeof r->throttle_reason], both[2 * sizeof r->throttle_reason + 2];
    kb_throttle_reasons_str(w->reasons, why, sizeof why);
    r->throttled = 1;
    snprintf(both, sizeof both, "%s%s%s", r->throttle_reason, *r->throttle_reason ? ", " : "",
             why);
    kb_strlcpy(r->throttle_reason, both, sizeof r->throttle_reason);
}

/* The refusal of --exclusive when w saw another process or could not look. */
static kb_status exclusive_refusal(const kb_gpu_watch *w, int ordinal, kb_err *e)
{
    if (w->others > 0 && w->other_pid)
        return kb_fail(e, KB_EENV, "another process (pid %ld) is using GPU %d; --exclusive "
                       "measures only on an idle GPU", w->other_pid, ordinal);
    if (w->others > 0)
        return kb_fail(e, KB_EENV, "%d other processes are using GPU %d; --exclusive measures "
                       "only on an idle GPU", w->others, ordinal);
    if (!w->procs_checked || w->procs_missed)
        return kb_fail(e, KB_EENV, "--exclusive cannot tell whether another process uses GPU %d",
                       ordinal);
    return KB_OK;
}

kb_status kb_gpu_exclusive(kb_nvml *gpu, int ordinal, kb_err *e)
{
    kb_gpu_state s;
    kb_gpu_watch w;
    const long ours = (long)getpid();
    memset(&w, 0, sizeof w);
    kb_nvml_sample_settled(gpu, &s, &ours, 1);
    kb_gpu_watch_procs(&w, gpu ? &s : NULL, &ours, 1);
    return exclusive_refusal(&w, ordinal, e);
}
