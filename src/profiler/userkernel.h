/* userkernel.h - a variant in a file of the user's own (`--variants ./mine.cu`):
 * found nvcc, compiled into a shared object in the cache (keyed by a hash of
 * the source, the public header, the flags and the nvcc version), its exports
 * checked in a child process, and a row of the variant table that loads it in
 * each case's child and runs it like a built-in variant. The public ABI is
 * include/kbench/variant.h, which the binary carries (util/embed.h) and writes
 * into the cache for nvcc.
 *
 * The parent compiles (once per file per run, before the cases) and never
 * loads the file; each case's child loads it in the row's `prepare` hook. */
#ifndef KB_USERKERNEL_H
#define KB_USERKERNEL_H

#include <stddef.h>

#include "kernels/op.h"
#include "results/result.h"
#include "util/sha256.h"
#include "util/status.h"

/* Variant files one run takes. */
#define KB_USER_MAX 8
/* Room for a path. */
#define KB_USER_PATH 1024
/* The target of a machine without a GPU: the H200's. */
#define KB_USER_DEFAULT_ARCH "sm_90"

/* One variant file and its build. */
typedef struct kb_user_file {
    char path[KB_USER_PATH]; /* the source, as given */
    char name[48];           /* the variant's name: the file's stem */
    char sha256[KB_SHA256_HEX]; /* of the source's bytes (what sha256sum says) */
    char arch[16];           /* the target it was built for: "sm_90a" */
    char so[KB_USER_PATH];   /* the shared object in the cache */
    int compiled;            /* 1: nvcc ran now; 0: the cache had it */
    double compile_s;        /* seconds nvcc took when it ran */
} kb_user_file;

/* 1 when a --variants entry names a variant file (ends in ".cu"). */
int kb_user_is_file(const char *entry);

/* The variant name of file path (its stem) into name. KB_EUSAGE when the stem
 * is empty, longer than 47 bytes or holds a byte other than letters, digits,
 * '_', '-' and '.'. */
kb_status kb_user_name(const char *path, char *name, size_t n, kb_err *e);

/* The nvcc kbench uses into path: $CUDA_HOME/bin/nvcc when CUDA_HOME is set
 * (and only there), else /usr/local/cuda/bin/nvcc, else the first on PATH.
 * KB_EENV naming where it looked when there is none. */
kb_status kb_user_find_nvcc(char *path, size_t n, kb_err *e);

/* The cache folder into dir: $XDG_CACHE_HOME/kbench, else ~/.cache/kbench;
 * created when missing. KB_EENV when there is no home or it cannot be made. */
kb_status kb_user_cache_dir(char *dir, size_t n, kb_err *e);

/* The nvcc target for a GPU of compute capability major.minor ("sm_90a" for
 * Hopper, whose wgmma and setmaxnreg need the arch-specific target; "sm_XY"
 * otherwise), or KB_USER_DEFAULT_ARCH when major is 0 (no GPU). */
void kb_user_arch(int major, int minor, char *arch, size_t n);

/* Builds the variant file at path for target arch into *f: reads and hashes
 * the source, then takes the shared object from the cache or compiles it
 * with nvcc (-shared, position-independent, the header on the include path).
 * Nothing is stored when the compile fails. KB_EUSAGE: no such file, a bad
 * name (kb_user_name), or "'x.cu' does not compile (nvcc, sm_90):" with
 * nvcc's first errors under it (kb_err_more), one a line, as file:line:
 * message. KB_EENV: no nvcc
 * (kb_user_find_nvcc), the cache, or running nvcc failed. */
kb_status kb_user_build(const char *path, const char *arch, kb_user_file *f, kb_err *e);

/* Checks the exports of f's shared object in a child process and makes the
 * variant row that runs it for op: name, summary, dtypes, and the hooks that
 * load it in each case's child. A file given again (by path) takes its old
 * row, so a rebuilt file replaces its earlier build. On success *v is the row
 * (static storage, until the process ends). KB_EUSAGE: a required export is
 * missing ("'x.cu' does not export kbench_launch, kbench_dtypes"), the ABI
 * version is not KBENCH_VARIANT_ABI, the operator is not op, no dtype kbench
 * knows, the object does not load, or more than KB_USER_MAX files; KB_EENV
 * when the child cannot be run. */
kb_status kb_user_load(const kb_user_file *f, const kb_op *op, const kb_variant **v, kb_err *e);

/* Writes the public header into the cache (kb_user_build does this itself):
 * *inc is the folder to put on nvcc's include path. */
kb_status kb_user_header_dir(char *inc, size_t n, kb_err *e);

#endif
