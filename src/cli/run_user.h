/* run_user.h - `kbench run`'s variant files (see run_user.c): built and
 * loaded before the cases, and watched for saves with --watch. */
#ifndef KB_RUN_USER_H
#define KB_RUN_USER_H

#include <stdio.h>

#include "profiler/plan.h"
#include "profiler/userkernel.h"
#include "results/result.h"
#include "util/status.h"

/* The nvcc target for dev (NULL: no GPU, KB_USER_DEFAULT_ARCH) into arch. */
void kb_run_files_arch(const kb_device *dev, char *arch, size_t n);

/* Builds (kb_user_build, for dev's target) and loads (kb_user_load) every
 * variant file of the plan into files[0 .. p->nuser) and the plan's rows,
 * saying on stderr which ones nvcc compiled. The first error's status and
 * message otherwise (KB_EUSAGE: the file does not compile or lacks an export;
 * KB_EENV: no nvcc, the cache). */
kb_status kb_run_build_files(kb_plan *p, const kb_device *dev, kb_user_file *files, kb_err *e);

/* --watch: waits until a variant file's bytes change, then builds and loads
 * it again and returns its index; a save that does not build is reported on
 * stderr and the wait goes on (the last good build stays). -1 when the user
 * interrupted (kb_isolate_interrupted). */
int kb_run_watch_wait(kb_plan *p, const kb_device *dev, kb_user_file *files);

/* Prints, for each result of cur, its verdict against the same case in prev
 * (the file's previous results), as `kbench compare` decides it:
 * "mine softmax · fp32 · rows=..: FASTER (812.2 µs -> 640.1 µs, 0.788x)". */
void kb_run_watch_verdicts(FILE *out, const kb_run *prev, const kb_run *cur);

#endif
