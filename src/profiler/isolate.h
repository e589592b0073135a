/* isolate.h - runs GPU work in a child process, so that a crash, a hang or a
 * sticky CUDA error ends that child and nothing else. The parent never touches
 * CUDA: every CUDA call of `run` happens in a child. */
#ifndef KB_ISOLATE_H
#define KB_ISOLATE_H

#include <stddef.h>

#include "util/status.h"

/* How a child ended. */
typedef struct kb_child_end {
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

/* Installs SIGINT/SIGTERM handlers that make running and later kb_isolate calls
 * kill their child and report interrupted. */
void kb_isolate_catch_signals(void);
/* 1 once an interrupt arrived. */
int kb_isolate_interrupted(void);

/* "exited with code 3", "killed by signal 11 (Segmentation fault)", "timed out
 * after 60 s", "interrupted". */
void kb_child_end_describe(const kb_child_end *end, double timeout_s, char *buf, size_t n);

#endif
