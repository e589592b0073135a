/* isolate.h - runs GPU work in a child process, so that a crash, a hang or a
 * sticky CUDA error ends that child and nothing else. The parent never touches
 * CUDA: every CUDA call of `run` happens in a child. */
#ifndef KB_ISOLATE_H
#define KB_ISOLATE_H

#include <stddef.h>

#include "util/status.h"

/* How a child ended. */
typedef struct kb_child_end {
    long pid;        /* the child's process id */
    int exited;      /* exited normally with `code` */
    int code;
    int signaled;    /* killed by signal `sig` */
    int sig;
    int timed_out;   /* killed by the parent after the time limit */
    int interrupted; /* killed because the user interrupted the parent */
} kb_child_end;

/* The child's work: write the answer to fd, return the child's exit code. */
typedef int (*kb_child_fn)(void *ctx, int fd);

/* Forks; the child runs fn(ctx, fd) and exits with its return value. The parent
 * collects everything the child writes into *out (malloc'd, NUL-terminated,
 * caller frees; may be empty), kills the child after timeout_s seconds or when
 * kb_isolate_interrupt() was called, reaps it and describes its end in *end.
 * Returns KB_EENV only when fork/pipe/read fail; a child's failure is KB_OK
 * with *end saying what happened. */
kb_status kb_isolate(kb_child_fn fn, void *ctx, double timeout_s, char **out, size_t *len,
                     kb_child_end *end, kb_err *e);

/* Called by the parent while it waits for a child, about every
 * KB_ISOLATE_TICK_S seconds, with the child's process id. */
typedef void (*kb_child_tick)(void *ctx, long child_pid);
#define KB_ISOLATE_TICK_S 0.2

/* kb_isolate, calling tick(tick_ctx, pid) while the child runs (tick may be
 * NULL). */
kb_status kb_isolate_watched(kb_child_fn fn, void *ctx, double timeout_s, kb_child_tick tick,
                             void *tick_ctx, char **out, size_t *len, kb_child_end *end,
                             kb_err *e);

/* A child never outlives the process that started it: right after the fork it
 * asks the kernel for SIGKILL when its parent dies, and exits at once when the
 * parent died before it could ask. Work that runs long checks this between
 * steps: 1 in a process that is not such a child, or while its parent lives;
 * 0 once the parent is gone. */
int kb_isolate_parent_alive(void);

/* Installs SIGINT/SIGTERM handlers that make running and later kb_isolate calls
 * kill their child and report interrupted. */
void kb_isolate_catch_signals(void);
/* 1 once an interrupt arrived. */
int kb_isolate_interrupted(void);

/* "exited with code 3", "killed by signal 11 (Segmentation fault)", "timed out
 * after 60 s", "interrupted". */
void kb_child_end_describe(const kb_child_end *end, double timeout_s, char *buf, size_t n);

#endif
