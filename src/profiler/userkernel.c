/* userkernel.c - variants from the user's own .cu files (see userkernel.h):
 * nvcc, the build cache, the check of a build's exports in a child, and the
 * rows of the variant table whose hooks load a build in the case's child. */
#include "profiler/userkernel.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kbench/variant.h"
#include "profiler/isolate.h"
#include "util/embed.h"

/* The public ABI mirrors the harness's own types: kbench_args is filled from
 * kb_args field by field, and the dtypes are the same numbers. */
_Static_assert(KBENCH_FP32 == (int)KB_FP32 && KBENCH_FP16 == (int)KB_FP16 &&
                   KBENCH_BF16 == (int)KB_BF16,
               "the public dtype values are kbench's own");
_Static_assert(KBENCH_MAX_AXES == KB_MAX_AXES && KBENCH_MAX_BUFS == KB_MAX_BUFS,
               "the public argument block holds exactly the harness's buffers and axes");

/* Where the public header lives in the source tree (and in the binary). */
#define HEADER_PATH "include/kbench/variant.h"
/* Lines of nvcc's output a compile error shows at most. */
#define NVCC_ERROR_LINES 5
/* Seconds the export check's child may take (loading the object). */
#define PROBE_S 60.0
/* A source file larger than this is refused (a variant is a few hundred lines). */
#define MAX_SOURCE_BYTES (16u << 20)

int kb_user_is_file(const char *entry)
{
    size_t n = strlen(entry);
    return n > 3 && strcmp(entry + n - 3, ".cu") == 0;
}

kb_status kb_user_name(const char *path, char *name, size_t n, kb_err *e)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".cu") == 0)
        len -= 3;
    if (len == 0 || len >= n || len > 47)
        return kb_fail(e, KB_EUSAGE, "variant file '%s' needs a name of 1 to 47 bytes", path);
    for (size_t i = 0; i < len; i++) {
        char c = base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return kb_fail(e, KB_EUSAGE,
                           "variant file name '%s' may hold only letters, digits, '_', '-' "
                           "and '.'",
                           path);
    }
    memcpy(name, base, len);
    name[len] = '\0';
    return KB_OK;
}

static int executable(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

kb_status kb_user_find_nvcc(char *path, size_t n, kb_err *e)
{
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(path, n, "%s/bin/nvcc", home);
        if (executable(path))
            return KB_OK;
        return kb_fail(e, KB_EENV, "no nvcc at '%s' (CUDA_HOME is '%s')", path, home);
    }
    snprintf(path, n, "/usr/local/cuda/bin/nvcc");
    if (executable(path))
        return KB_OK;
    const char *env = getenv("PATH");
    char dirs[4096];
    kb_strlcpy(dirs, env ? env : "", sizeof dirs);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, n, "%s/nvcc", *d ? d : ".");
        if (executable(path))
            return KB_OK;
    }
    path[0] = '\0';
    return kb_fail(e, KB_EENV,
                   "no nvcc found: looked in /usr/local/cuda/bin and PATH ('%.200s'); set "
                   "CUDA_HOME to the CUDA toolkit",
                   env ? env : "");
}

/* mkdir -p of dir. Returns 0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char p[KB_USER_PATH];
    if (kb_strlcpy(p, dir, sizeof p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

kb_status kb_user_cache_dir(char *dir, size_t n, kb_err *e)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(dir, n, "%s/kbench", xdg);
    else if (home && *home)
        snprintf(dir, n, "%s/.cache/kbench", home);
    else
        return kb_fail(e, KB_EENV, "no cache folder for variant files: neither XDG_CACHE_HOME "
                                   "nor HOME is set");
    if (make_dirs(dir) != 0)
        return kb_fail(e, KB_EENV, "cannot make the cache folder '%s': %s", dir, strerror(errno));
    return KB_OK;
}

void kb_user_arch(int major, int minor, char *arch, size_t n)
{
    if (major <= 0)
        snprintf(arch, n, "%s", KB_USER_DEFAULT_ARCH);
    else if (major == 9 && minor == 0)
        snprintf(arch, n, "sm_90a");
    else
        snprintf(arch, n, "sm_%d%d", major, minor);
}

/* Reads the whole file at path into *buf (malloc'd, NUL-terminated, caller
 * frees). KB_EUSAGE when it cannot be read or is too large. */
static kb_status read_file(const char *path, char **buf, size_t *len, kb_err *e)
{
    kb_status st = KB_OK;
    struct stat sb;
    FILE *f = NULL;
    *buf = NULL;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return kb_fail(e, KB_EUSAGE, "no variant file '%s'", path);
    if ((size_t)sb.st_size > MAX_SOURCE_BYTES)
        return kb_fail(e, KB_EUSAGE, "variant file '%s' is larger than %u bytes", path,
                       MAX_SOURCE_BYTES);
    if (!(f = fopen(path, "rb")))
        return kb_fail(e, KB_EUSAGE, "cannot read variant file '%s': %s", path, strerror(errno));
    if (!(*buf = malloc((size_t)sb.st_size + 1))) {
        st = kb_fail(e, KB_EENV, "out of memory reading '%s'", path);
        goto done;
    }
    *len = fread(*buf, 1, (size_t)sb.st_size, f);
    if (ferror(f)) {
        st = kb_fail(e, KB_EUSAGE, "cannot read variant file '%s': %s", path, strerror(errno));
        goto done;
    }
    (*buf)[*len] = '\0';
done:
    fclose(f);
    if (st != KB_OK) {
        free(*buf);
        *buf = NULL;
    }
    return st;
}

/* Runs argv (argv[0] a path) with stdout and stderr into *out (malloc'd,
 * NUL-terminated, caller frees); *code is its exit status (-1 when it did not
 * exit normally). KB_EENV when it cannot be run. */
static kb_status run_tool(char *const *argv, char **out, int *code, kb_err *e)
{
    int fds[2];
    size_t used = 0, cap = 4096;
    char *buf = malloc(cap);
    *out = NULL;
    if (!buf)
        return kb_fail(e, KB_EENV, "out of memory");
    if (pipe(fds) != 0) {
        free(buf);
        return kb_fail(e, KB_EENV, "pipe failed: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(buf);
        return kb_fail(e, KB_EENV, "fork failed: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        if (cap - used < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break; /* keep what fits; the exit status still counts */
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fds[0], buf + used, cap - used - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        used += (size_t)r;
    }
    close(fds[0]);
    buf[used] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            free(buf);
            return kb_fail(e, KB_EENV, "waitpid failed: %s", strerror(errno));
        }
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    *out = buf;
    return KB_OK;
}

/* nvcc's "--version" text (its last line: "Build cuda_13.0.r13.0/..."), part
 * of the cache key. Static storage, asked once per process. */
static kb_status nvcc_version(const char *nvcc, const char **v, kb_err *e)
{
    static char version[256];
    static char asked_of[KB_USER_PATH];
    if (version[0] && strcmp(asked_of, nvcc) == 0) {
        *v = version;
        return KB_OK;
    }
    char *argv[] = {(char *)nvcc, (char *)"--version", NULL};
    char *out = NULL;
    int code = 0;
    kb_status st = run_tool(argv, &out, &code, e);
    if (st != KB_OK)
        return st;
    if (!out)
        return kb_fail(e, KB_EENV, "'%s --version' printed nothing", nvcc);
    if (code != 0) {
        free(out);
        return kb_fail(e, KB_EENV, "'%s --version' failed (exit %d)", nvcc, code);
    }
    /* the whole text, newlines folded, cut to fit: it names the release and build */
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    const size_t len = strlen(out);
    kb_strlcpy(version, len >= sizeof version ? out + len - (sizeof version - 1) : out,
               sizeof version);
    kb_strlcpy(asked_of, nvcc, sizeof asked_of);
    free(out);
    *v = version;
    return KB_OK;
}

/* Writes n bytes to path through a temporary file and a rename. Returns 0 or
 * -1 with errno. */
static int write_whole(const char *path, const char *text, size_t n)
{
    char tmp[KB_USER_PATH + 32];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        errno = err;
        return -1;
    }
    return 0;
}

kb_status kb_user_header_dir(char *inc, size_t n, kb_err *e)
{
    char dir[KB_USER_PATH], hex[KB_SHA256_HEX], file[KB_USER_PATH + 64];
    const kb_embedded *h = kb_embedded_find(HEADER_PATH);
    if (!h)
        return kb_fail(e, KB_EENV, "this kbench binary carries no %s", HEADER_PATH);
    kb_status st = kb_user_cache_dir(dir, sizeof dir, e);
    if (st != KB_OK)
        return st;
    /* one folder per header text, so that kbench builds of different ABIs
     * sharing the cache never see each other's header */
    kb_sha256_of(h->text, h->len, hex);
    snprintf(inc, n, "%s/include-%.16s", dir, hex);
    snprintf(file, sizeof file, "%s/kbench", inc);
    if (make_dirs(file) != 0)
        return kb_fail(e, KB_EENV, "cannot make '%s': %s", file, strerror(errno));
    snprintf(file, sizeof file, "%s/kbench/variant.h", inc);
    char *old = NULL;
    size_t len = 0;
    kb_err ignored = {{0}};
    if (read_file(file, &old, &len, &ignored) == KB_OK && old && len == h->len &&
        memcmp(old, h->text, len) == 0) {
        free(old);
        return KB_OK;
    }
    free(old);
    if (write_whole(file, h->text, h->len) != 0)
        return kb_fail(e, KB_EENV, "cannot write '%s': %s", file, strerror(errno));
    return KB_OK;
}

/* "file(12): error: ..." (nvcc's form) -> "file:12: error: ...", in place. */
static void colon_line(char *line)
{
    for (char *o = strchr(line, '('); o; o = strchr(o + 1, '(')) {
        const size_t d = strspn(o + 1, "0123456789");
        if (d > 0 && strncmp(o + 1 + d, "): ", 3) == 0) {
            *o = ':';
            memmove(o + 1 + d, o + 2 + d, strlen(o + 2 + d) + 1);
            return;
        }
    }
}

/* The first NVCC_ERROR_LINES error lines of nvcc's output into buf, '\n'
 * between them (kb_err_set_more), as file:line: error: ...; without any, the
 * first lines of the output. */
static void first_errors(const char *out, char *buf, size_t n)
{
    size_t used = 0;
    int lines = 0;
    buf[0] = '\0';
    for (int pass = 0; pass < 2 && lines == 0; pass++) {
        for (const char *p = out; *p && lines < NVCC_ERROR_LINES;) {
            const char *end = strchr(p, '\n');
            const size_t len = end ? (size_t)(end - p) : strlen(p);
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1),
                     p);
            p += len + (end ? 1 : 0);
            if (!line[0] || (pass == 0 && !strstr(line, "error")))
                continue;
            colon_line(line);
            int w = snprintf(buf + used, n - used, "%s%s", used ? "\n" : "", line);
            if (w < 0 || (size_t)w >= n - used)
                return;
            used += (size_t)w;
            lines++;
        }
    }
}

/* Hashes a string and its terminating NUL, so that fields cannot run into
 * each other. */
static void hash_str(kb_sha256 *s, const char *str)
{
    kb_sha256_update(s, str, strlen(str) + 1);
}

kb_status kb_user_build(const char *path, const char *arch, kb_user_file *f, kb_err *e)
{
    kb_status st = KB_OK;
    char *src = NULL, *out = NULL;
    size_t len = 0;
    char nvcc[KB_USER_PATH], inc[KB_USER_PATH], dir[KB_USER_PATH], tmp[KB_USER_PATH + 64];
    char gencode[64], incflag[KB_USER_PATH + 8];
    const char *version = NULL;
    tmp[0] = '\0';
    memset(f, 0, sizeof *f);
    if (kb_strlcpy(f->path, path, sizeof f->path))
        return kb_fail(e, KB_EUSAGE, "variant file path is too long: '%.200s...'", path);
    KB_TRY(kb_user_name(path, f->name, sizeof f->name, e));
    kb_strlcpy(f->arch, arch, sizeof f->arch);
    KB_TRY(read_file(path, &src, &len, e));
    kb_sha256_of(src, len, f->sha256);
    KB_TRY(kb_user_find_nvcc(nvcc, sizeof nvcc, e));
    KB_TRY(nvcc_version(nvcc, &version, e));
    KB_TRY(kb_user_header_dir(inc, sizeof inc, e));
    KB_TRY(kb_user_cache_dir(dir, sizeof dir, e));

    snprintf(gencode, sizeof gencode, "-arch=%s", arch);
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    char *argv[] = {nvcc,         (char *)"-shared", (char *)"-Xcompiler", (char *)"-fPIC",
                    (char *)"-std=c++17", (char *)"-O3", (char *)"-lineinfo", gencode,
                    incflag,      (char *)"-o",      tmp, (char *)path, NULL};
    const int nflags = 9; /* argv[1 .. nflags): the flags that shape the build */

    /* the key: the source, the header, the flags and nvcc's version */
    kb_sha256 s;
    unsigned char digest[KB_SHA256_BYTES];
    char key[KB_SHA256_HEX];
    const kb_embedded *h = kb_embedded_find(HEADER_PATH);
    kb_sha256_init(&s);
    hash_str(&s, "kbench variant build 1");
    kb_sha256_update(&s, src, len);
    kb_sha256_update(&s, h->text, h->len);
    for (int i = 1; i < nflags; i++)
        hash_str(&s, argv[i]);
    hash_str(&s, version);
    kb_sha256_final(&s, digest);
    kb_sha256_hex(digest, key);
    if ((size_t)snprintf(f->so, sizeof f->so, "%s/%s.so", dir, key) >= sizeof f->so) {
        st = kb_fail(e, KB_EENV, "the cache folder's path is too long: '%.200s'", dir);
        goto done;
    }
    if (access(f->so, R_OK) == 0)
        goto done;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", f->so, (long)getpid()) >= sizeof tmp) {
        tmp[0] = '\0';
        st = kb_fail(e, KB_EENV, "the cache folder's path is too long: '%.200s'", dir);
        goto done;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int code = 0;
    KB_TRY(run_tool(argv, &out, &code, e));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (code != 0) {
        char errs[768];
        first_errors(out, errs, sizeof errs);
        st = kb_fail(e, KB_EUSAGE, "'%s' does not compile (nvcc, %s):", path, arch);
        if (e)
            kb_err_set_more(e, errs);
        goto done;
    }
    if (rename(tmp, f->so) != 0) {
        st = kb_fail(e, KB_EENV, "cannot store the build of '%s' in '%s': %s", path, f->so,
                     strerror(errno));
        goto done;
    }
    f->compiled = 1;
    f->compile_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
done:
    if (tmp[0])
        unlink(tmp); /* gone already after the rename */
    free(src);
    free(out);
    return st;
}

/* ---- the rows of the variant table, and their hooks in the case's child ------ */

/* One variant file's row, and what the case's child loaded of it. */
typedef struct slot {
    int used;
    kb_variant v;
    char path[KB_USER_PATH];
    char name[48];
    char summary[160];
    char sha256[KB_SHA256_HEX];
    char so[KB_USER_PATH];
    int naxes; /* the operator's */
    /* in the case's child, once loaded */
    void *dl;
    kbench_launch_fn launch;
    void *scratch; /* from kbench_scratch_bytes, freed at exit */
    size_t scratch_bytes;
} slot;

static slot slots[KB_USER_MAX];

static cudaError_t slot_launch(int i, const kb_args *a, cudaStream_t s)
{
    slot *u = &slots[i];
    if (!u->launch)
        return cudaErrorInvalidDeviceFunction; /* prepare did not load it */
    kbench_args k;
    memset(&k, 0, sizeof k);
    k.abi = KBENCH_VARIANT_ABI;
    k.dtype = (kbench_dtype)a->dtype;
    k.naxes = u->naxes;
    k.shape = a->shape;
    for (int b = 0; b < KB_MAX_BUFS; b++) {
        k.in[b] = a->in[b];
        k.out[b] = a->out[b];
    }
    k.scratch = u->scratch;
    k.scratch_bytes = u->scratch_bytes;
    return u->launch(&k, s);
}

static void free_scratch(void)
{
    for (int i = 0; i < KB_USER_MAX; i++)
        if (slots[i].scratch) {
            cudaFree(slots[i].scratch);
            slots[i].scratch = NULL;
        }
}

/* The row's prepare hook: loads the build, asks its kbench_unsupported (1:
 * skipped with its reason) and allocates its kbench_scratch_bytes. -1 with the
 * reason when the build does not load or the scratch cannot be had. */
static int slot_prepare(int i, const kb_args *a, char *why, size_t n)
{
    slot *u = &slots[i];
    if (!u->dl && !(u->dl = dlopen(u->so, RTLD_NOW | RTLD_LOCAL))) {
        snprintf(why, n, "loading the build of %s failed: %s", u->path, dlerror());
        return -1;
    }
    u->launch = (kbench_launch_fn)dlsym(u->dl, "kbench_launch");
    if (!u->launch) {
        snprintf(why, n, "%s does not export kbench_launch", u->path);
        return -1;
    }
    kbench_unsupported_fn unsup = (kbench_unsupported_fn)dlsym(u->dl, "kbench_unsupported");
    if (unsup) {
        why[0] = '\0';
        if (unsup(a->shape, u->naxes, (kbench_dtype)a->dtype, why, n)) {
            if (!why[0])
                snprintf(why, n, "%s's kbench_unsupported refuses the case (no reason given)",
                         u->name);
            return 1;
        }
    }
    kbench_scratch_fn scratch = (kbench_scratch_fn)dlsym(u->dl, "kbench_scratch_bytes");
    u->scratch_bytes = scratch ? scratch(a->shape, u->naxes, (kbench_dtype)a->dtype) : 0;
    if (u->scratch_bytes && !u->scratch) {
        cudaError_t ce = cudaMalloc(&u->scratch, u->scratch_bytes);
        if (ce != cudaSuccess) {
            snprintf(why, n, "cudaMalloc of %zu bytes of scratch for %s failed: %s",
                     u->scratch_bytes, u->name, cudaGetErrorString(ce));
            u->scratch = NULL;
            return -1;
        }
        static int at_exit;
        if (!at_exit && atexit(free_scratch) == 0)
            at_exit = 1;
    }
    return 0;
}

/* A launch and a prepare hook per slot: the harness's hooks take no context. */
#define SLOT_HOOKS(i)                                                                   \
    static cudaError_t launch_##i(const kb_args *a, cudaStream_t s)                     \
    {                                                                                   \
        return slot_launch(i, a, s);                                                    \
    }                                                                                   \
    static int prepare_##i(const kb_args *a, char *why, size_t n)                       \
    {                                                                                   \
        return slot_prepare(i, a, why, n);                                              \
    }
SLOT_HOOKS(0)
SLOT_HOOKS(1)
SLOT_HOOKS(2)
SLOT_HOOKS(3)
SLOT_HOOKS(4)
SLOT_HOOKS(5)
SLOT_HOOKS(6)
SLOT_HOOKS(7)

static const struct {
    kb_launch_fn launch;
    int (*prepare)(const kb_args *a, char *why, size_t n);
} hooks[KB_USER_MAX] = {
    {launch_0, prepare_0}, {launch_1, prepare_1}, {launch_2, prepare_2}, {launch_3, prepare_3},
    {launch_4, prepare_4}, {launch_5, prepare_5}, {launch_6, prepare_6}, {launch_7, prepare_7},
};

/* What the export check's child answers. */
typedef struct probe {
    int32_t status;   /* KB_OK, or KB_EUSAGE with msg */
    char msg[512];
    int32_t abi;      /* kbench_variant_abi */
    char op[32];      /* kbench_operator */
    char summary[160]; /* kbench_summary, control characters made spaces */
    uint32_t dtypes;  /* kbench_dtypes */
} probe;

static int write_probe(int fd, const probe *p)
{
    const char *b = (const char *)p;
    size_t n = sizeof *p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            return KB_EENV;
        b += w;
        n -= (size_t)w;
    }
    return p->status;
}

/* Copies the string at sym (at most n - 1 bytes) into dst, control characters
 * as spaces. */
static void copy_text(char *dst, const void *sym, size_t n)
{
    const char *s = sym;
    size_t i = 0;
    for (; i + 1 < n && s[i]; i++)
        dst[i] = (unsigned char)s[i] < 32 ? ' ' : s[i];
    dst[i] = '\0';
}

/* The child: loads the build and reads its exports. */
static int probe_main(void *ctx, int fd)
{
    const kb_user_file *f = ctx;
    probe p;
    memset(&p, 0, sizeof p);
    void *dl = dlopen(f->so, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        p.status = KB_EUSAGE;
        snprintf(p.msg, sizeof p.msg, "the build of '%.200s' does not load: %.280s", f->path,
                 dlerror());
        return write_probe(fd, &p);
    }
    static const char *const required[] = {"kbench_variant_abi", "kbench_operator",
                                           "kbench_summary", "kbench_dtypes", "kbench_launch"};
    const void *sym[KB_COUNT(required)];
    char missing[256] = "";
    for (size_t i = 0; i < KB_COUNT(required); i++)
        if (!(sym[i] = dlsym(dl, required[i])))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", required[i]);
    if (missing[0]) {
        p.status = KB_EUSAGE;
        snprintf(p.msg, sizeof p.msg,
                 "'%.200s' does not export %s (kbench/variant.h lists what a variant file "
                 "exports; 'kbench new OP NAME' writes a complete one)",
                 f->path, missing);
        return write_probe(fd, &p);
    }
    p.abi = *(const int *)sym[0];
    copy_text(p.op, sym[1], sizeof p.op);
    copy_text(p.summary, sym[2], sizeof p.summary);
    p.dtypes = *(const unsigned *)sym[3];
    return write_probe(fd, &p);
}

/* The slot of path: its old one, else a free one; NULL when all are taken. */
static slot *slot_for(const char *path)
{
    for (int i = 0; i < KB_USER_MAX; i++)
        if (slots[i].used && strcmp(slots[i].path, path) == 0)
            return &slots[i];
    for (int i = 0; i < KB_USER_MAX; i++)
        if (!slots[i].used)
            return &slots[i];
    return NULL;
}

kb_status kb_user_load(const kb_user_file *f, const kb_op *op, const kb_variant **v, kb_err *e)
{
    char *out = NULL;
    size_t len = 0;
    kb_child_end end;
    probe p;
    slot *u = slot_for(f->path);
    if (!u)
        return kb_fail(e, KB_EUSAGE, "at most %d variant files in a run", KB_USER_MAX);
    kb_status st = kb_isolate(probe_main, (void *)f, PROBE_S, &out, &len, &end, e);
    if (st != KB_OK)
        return st;
    if (len != sizeof p) {
        char how[128];
        kb_child_end_describe(&end, PROBE_S, how, sizeof how);
        free(out);
        return kb_fail(e, KB_EUSAGE, "loading the build of '%s' failed: the loader %s",
                       f->path, how);
    }
    memcpy(&p, out, sizeof p);
    free(out);
    p.msg[sizeof p.msg - 1] = '\0';
    if (p.status != KB_OK)
        return kb_fail(e, KB_EUSAGE, "%s", p.msg);
    if (p.abi != KBENCH_VARIANT_ABI)
        return kb_fail(e, KB_EUSAGE,
                       "'%s' is written for variant ABI %d; this kbench knows ABI %d "
                       "(kbench_variant_abi)",
                       f->path, (int)p.abi, KBENCH_VARIANT_ABI);
    if (strcmp(p.op, op->name) != 0)
        return kb_fail(e, KB_EUSAGE, "'%s' is a variant of '%s' (kbench_operator), not of %s",
                       f->path, p.op, op->name);
    if (!(p.dtypes & op->dtypes) || (p.dtypes & ~KB_DT_ALL))
        return kb_fail(e, KB_EUSAGE,
                       "'%s' exports kbench_dtypes 0x%x: it must name dtypes of %s and no "
                       "other bits (KBENCH_DT(KBENCH_FP32) ...)",
                       f->path, (unsigned)p.dtypes, op->name);
    const int i = (int)(u - slots);
    memset(u, 0, sizeof *u);
    u->used = 1;
    kb_strlcpy(u->path, f->path, sizeof u->path);
    kb_strlcpy(u->name, f->name, sizeof u->name);
    kb_strlcpy(u->summary, p.summary, sizeof u->summary);
    kb_strlcpy(u->sha256, f->sha256, sizeof u->sha256);
    kb_strlcpy(u->so, f->so, sizeof u->so);
    u->naxes = op->naxes;
    u->v = (kb_variant){.name = u->name,
                        .summary = u->summary,
                        .dtypes = p.dtypes & op->dtypes,
                        .launch = hooks[i].launch,
                        .prepare = hooks[i].prepare,
                        .source_path = u->path,
                        .source_sha256 = u->sha256};
    *v = &u->v;
    return KB_OK;
}
