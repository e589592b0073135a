/* trace.h - the kernels a launcher ran, as the CUPTI Activity API records
 * them. kbench's own launchers note their kernels (kb_note_launch) and the
 * runtime gives their static facts; a launcher that calls a library (cuDNN)
 * runs kernels kbench cannot name, so one extra launch is traced instead, for
 * the same facts: name, grid, block, registers, shared and local memory. */
#ifndef KB_TRACE_H
#define KB_TRACE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/op.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel as the Activity API recorded it. */
typedef struct kb_traced_kernel {
    char name[128];       /* the driver's name for it (mangled, cut to fit) */
    kb_dim3 grid, block;
    int registers;        /* per thread */
    int64_t static_smem;  /* bytes per block */
    int64_t dynamic_smem; /* bytes per block */
    int64_t local_bytes;  /* local memory per thread */
} kb_traced_kernel;

/* Runs launch(a, s) once with kernel activity records on and fills
 * k[0 .. *n) with the kernels it ran, in the order they started (at most
 * max). The stream is synchronised before and after.
 * CUPTI refusing (a missing capability, records lost), or another profiler
 * or injection tool being attached (kb_counters_foreign_profiler: its CUPTI
 * client owns the activity buffers, so none is asked for), is not an error:
 * KB_OK with *n = 0 and the reason in why.
 * Returns KB_EENV with the CUDA error in e when the launcher or a stream
 * synchronisation fails. */
kb_status kb_trace_kernels(kb_launch_fn launch, const kb_args *a, cudaStream_t s,
                           kb_traced_kernel *k, int max, int *n, char *why, size_t why_n,
                           kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
