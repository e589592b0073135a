/* nvml.h - what the driver's management library (NVML, libnvidia-ml.so.1,
 * installed with the driver) says about a GPU while kbench measures on it:
 * the other processes computing on it, and why its clocks are held down. The
 * library is loaded at run time (no link dependency): where it is absent the
 * checks are unavailable, which is reported, not an error. The parent process
 * asks, before, during and after each case (profiler/child.c); the decisions
 * taken from the answers (who is "another process", which reasons are
 * throttling, what a result is flagged) are pure functions below, testable
 * without a GPU. */
#ifndef KB_NVML_H
#define KB_NVML_H

#include <stddef.h>

#include "results/result.h"

/* A loaded and initialised NVML, with the handle of one GPU. */
typedef struct kb_nvml kb_nvml;

/* Compute processes read from the driver at most. */
#define KB_GPU_MAX_PROCS 64

/* One reading of a GPU. */
typedef struct kb_gpu_state {
    int procs_known;          /* the process list was read */
    int nprocs;               /* compute processes on the GPU (may exceed the pids read) */
    long pids[KB_GPU_MAX_PROCS];
    int npids;                /* pids read, <= KB_GPU_MAX_PROCS */
    int reasons_known;        /* the clocks' event (throttle) reasons were read */
    unsigned long long reasons; /* NVML's clocks event reason bits */
} kb_gpu_state;

/* Loads NVML, initialises it and finds the GPU with this uuid
 * ("GPU-xxxxxxxx-..."). Returns the handle (the caller closes it with
 * kb_nvml_close), or NULL with why ("libnvidia-ml.so.1 not found", "nvmlInit
 * failed: ...") when the checks are unavailable. */
kb_nvml *kb_nvml_open(const char *uuid, char *why, size_t why_size);

/* Shuts NVML down and unloads it; NULL is a no-op. */
void kb_nvml_close(kb_nvml *n);

/* Reads the GPU's compute processes and clocks event reasons into *s; a part
 * the driver does not answer is marked unknown. */
void kb_nvml_sample(kb_nvml *n, kb_gpu_state *s);

/* A process that has just exited may still be listed for a moment while the
 * driver tears its context down: a reading that shows another process is
 * taken again this many times, this far apart, before it counts. */
#define KB_GPU_SETTLE_TRIES 5
#define KB_GPU_SETTLE_S 0.1

/* kb_nvml_sample, taken again (KB_GPU_SETTLE_TRIES) while it shows a compute
 * process that is not one of ours[0 .. nours); the last reading in *s. */
void kb_nvml_sample_settled(kb_nvml *n, kb_gpu_state *s, const long *ours, int nours);

/* The driver's version ("580.159") into buf: NVML's answer, else the kernel
 * module's (/proc/driver/nvidia/version); "" when neither says. */
void kb_driver_version(char *buf, size_t n);

/* The version in the first line of the text of /proc/driver/nvidia/version
 * ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Thu ...", or
 * "... Open Kernel Module for x86_64  580.95.05  Release Build ...": the
 * first word of digits and dots) into buf. 0, or -1 (buf "") when it has
 * none or buf is too small. */
int kb_nvrm_version(const char *text, char *buf, size_t n);

/* KB_OK when no process other than this one computes on gpu's GPU (the
 * ordinal names it in messages); else KB_EENV "another process (pid N) is
 * using GPU 0; --exclusive measures only on an idle GPU", or "--exclusive
 * cannot tell whether another process uses GPU 0" when gpu is NULL or the
 * driver does not say. `run --exclusive` asks before any GPU work. */
kb_status kb_gpu_exclusive(kb_nvml *gpu, int ordinal, kb_err *e);

/* ---- decisions, no GPU needed ------------------------------------------------ */

/* NVML's clocks event reasons that mean thermal or power throttling (the
 * others: idle, application clocks, sync boost, display clock). */
#define KB_THROTTLE_SW_POWER_CAP 0x4ull
#define KB_THROTTLE_HW_SLOWDOWN 0x8ull
#define KB_THROTTLE_SW_THERMAL 0x20ull
#define KB_THROTTLE_HW_THERMAL 0x40ull
#define KB_THROTTLE_HW_POWER_BRAKE 0x80ull

/* The thermal and power reasons among bits, by name ("sw power cap, hw
 * thermal slowdown"), into buf; "" when there is none. */
void kb_throttle_reasons_str(unsigned long long bits, char *buf, size_t n);

/* The compute processes of s that are not ours[0 .. nours) (the kbench
 * parent and its case's child); *first is one of them (0 when only their
 * count is known). */
int kb_gpu_others(const kb_gpu_state *s, const long *ours, int nours, long *first);

/* What was seen on the GPU around and during one case. Zero it to start. */
typedef struct kb_gpu_watch {
    int procs_checked;   /* every process reading of the case was made */
    int procs_missed;    /* a reading could not be made */
    int others;          /* most other processes seen at once */
    long other_pid;      /* one of them, 0 when unknown */
    unsigned long long reasons; /* every thermal or power reason seen */
} kb_gpu_watch;

/* Adds a process reading (s, or NULL when NVML is unavailable) to w. */
void kb_gpu_watch_procs(kb_gpu_watch *w, const kb_gpu_state *s, const long *ours, int nours);

/* Adds a reasons reading to w (s may be NULL). */
void kb_gpu_watch_reasons(kb_gpu_watch *w, const kb_gpu_state *s);

/* Marks r with what w saw: gpu_shared when another process was seen,
 * gpu_unchecked when a process reading could not be made, and throttled with
 * the reasons joined to the result's own throttle_reason. */
void kb_gpu_watch_apply(const kb_gpu_watch *w, kb_result *r);

#endif
