/* run_user.c - `kbench run`'s variant files (--variants ./mine.cu): building
 * and loading them before the cases, and --watch's wait for a saved file and
 * its verdicts against the file's previous results. */
#include "run_user.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "profiler/isolate.h"
#include "report/format.h"
#include "results/compare.h"
#include "util/text.h"

/* How often --watch looks at the files, milliseconds. */
#define WATCH_POLL_MS 300

/* Builds and loads file i of the plan for target arch into files[i] and the
 * plan's row; says on stderr when nvcc ran. */
static kb_status build_one(kb_plan *p, int i, const char *arch, kb_user_file *files, kb_err *e)
{
    const kb_variant *v = NULL;
    kb_status st = kb_user_build(p->user_path[i], arch, &files[i], e);
    if (st == KB_OK)
        st = kb_user_load(&files[i], p->ops[0], &v, e);
    if (st != KB_OK)
        return st;
    if (files[i].compiled)
        fprintf(stderr, "kbench: compiled %s for %s in %.1f s\n", files[i].path, arch,
                files[i].compile_s);
    kb_plan_set_user(p, i, v);
    return KB_OK;
}

void kb_run_files_arch(const kb_device *dev, char *arch, size_t n)
{
    kb_user_arch(dev ? dev->cc_major : 0, dev ? dev->cc_minor : 0, arch, n);
}

kb_status kb_run_build_files(kb_plan *p, const kb_device *dev, kb_user_file *files, kb_err *e)
{
    char arch[16];
    kb_run_files_arch(dev, arch, sizeof arch);
    for (int i = 0; i < p->nuser; i++) {
        kb_status st = build_one(p, i, arch, files, e);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

/* 1 when file f's bytes differ from the build it ran (its hash). */
static int changed(const kb_user_file *f, struct stat *last)
{
    struct stat sb;
    if (stat(f->path, &sb) != 0)
        return 0; /* an editor between unlink and write: look again later */
    if (sb.st_mtim.tv_sec == last->st_mtim.tv_sec &&
        sb.st_mtim.tv_nsec == last->st_mtim.tv_nsec && sb.st_size == last->st_size)
        return 0;
    *last = sb;
    FILE *in = fopen(f->path, "rb");
    if (!in)
        return 0;
    kb_sha256 s;
    unsigned char d[KB_SHA256_BYTES], buf[65536];
    char hex[KB_SHA256_HEX];
    size_t got;
    kb_sha256_init(&s);
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        kb_sha256_update(&s, buf, got);
    fclose(in);
    kb_sha256_final(&s, d);
    kb_sha256_hex(d, hex);
    return strcmp(hex, f->sha256) != 0;
}

int kb_run_watch_wait(kb_plan *p, const kb_device *dev, kb_user_file *files)
{
    struct stat last[KB_USER_MAX];
    char arch[16];
    kb_run_files_arch(dev, arch, sizeof arch);
    for (int i = 0; i < p->nuser; i++)
        if (stat(files[i].path, &last[i]) != 0)
            memset(&last[i], 0, sizeof last[i]);
    fprintf(stderr, "kbench: watching %d file%s; Ctrl-C ends\n", p->nuser,
            p->nuser == 1 ? "" : "s");
    const struct timespec pause = {0, WATCH_POLL_MS * 1000000L};
    while (!kb_isolate_interrupted()) {
        for (int i = 0; i < p->nuser; i++) {
            if (!changed(&files[i], &last[i]))
                continue;
            kb_err e = {{0}};
            const kb_user_file good = files[i];
            if (build_one(p, i, arch, files, &e) != KB_OK) {
                /* a broken save: say why and keep the last good build; the file
                 * is built again when its bytes change again */
                char sha[KB_SHA256_HEX];
                kb_strlcpy(sha, files[i].sha256, sizeof sha);
                kb_cli_fail(KB_EUSAGE, &e);
                files[i] = good;
                if (sha[0])
                    kb_strlcpy(files[i].sha256, sha, sizeof files[i].sha256);
                continue;
            }
            return i;
        }
        nanosleep(&pause, NULL);
    }
    return -1;
}

void kb_run_watch_verdicts(FILE *out, const kb_run *prev, const kb_run *cur)
{
    kb_compare c;
    kb_err e = {{0}};
    if (kb_compare_runs(prev, "previous", cur, "this save", KB_CMP_THRESHOLD, &c, &e) != KB_OK) {
        fputs("no verdict: ", out);
        kb_put_safe(out, KB_SAFE_TERM, e.msg);
        fputc('\n', out);
        return;
    }
    for (size_t i = 0; i < c.ncases; i++) {
        const kb_cmp_case *k = &c.cases[i];
        if (!k->cur)
            continue;
        char title[256], before[32], after[32];
        kb_fmt_case_title(k->cur, title, sizeof title);
        kb_fmt_time(k->base_median, before, sizeof before);
        kb_fmt_time(k->new_median, after, sizeof after);
        fprintf(out, "%s %s: %s", k->cur->variant, title, kb_verdict_name(k->verdict));
        if (isfinite(k->time_ratio))
            fprintf(out, " (%s -> %s, %.3fx)", before, after, k->time_ratio);
        if (k->why[0])
            fprintf(out, ": %s", k->why);
        fprintf(out, "\n");
    }
    kb_compare_release(&c);
}
