/* cmd_new.c - `kbench new OP NAME`: writes NAME.cu, a correct and commented
 * starting variant for OP against the public header kbench/variant.h (the
 * templates/<op>.cu the binary carries), ready for
 * `kbench run OP --variants ./NAME.cu`. Needs no GPU. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kernels/op.h"
#include "profiler/userkernel.h"
#include "util/embed.h"

static const char usage_text[] =
    "usage: kbench new OP NAME\n\n"
    "Writes NAME.cu (NAME may be a path; '.cu' is added when missing): a correct,\n"
    "commented starting variant for OP that uses the public header kbench/variant.h.\n"
    "Run it beside the built-in variants, and again on every save, with\n"
    "  kbench run OP --variants fused,./NAME.cu --watch\n"
    "An existing file is never overwritten.\n\n"
    "exit: 0 written, 2 usage (unknown operator, the file exists), 3 I/O error\n";

/* Writes n bytes to a new file at path; KB_EUSAGE when it exists. */
static kb_status write_new(const char *path, const char *text, size_t n, kb_err *e)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 && errno == EEXIST)
        return kb_fail(e, KB_EUSAGE, "'%s' exists; kbench new never overwrites a file", path);
    if (fd < 0)
        return kb_fail(e, KB_EENV, "cannot create '%s': %s", path, strerror(errno));
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w <= 0) {
            int err = errno;
            close(fd);
            unlink(path);
            return kb_fail(e, KB_EENV, "writing '%s' failed: %s", path, strerror(err));
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        int err = errno;
        unlink(path);
        return kb_fail(e, KB_EENV, "writing '%s' failed: %s", path, strerror(err));
    }
    return KB_OK;
}

int cmd_new(int argc, char **argv)
{
    kb_err e = {{0}};
    char path[KB_USER_PATH], tpl[64], name[48];
    if (kb_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return kb_cli_finish_stdout(KB_OK);
    }
    if (argc != 3)
        return kb_cli_error(KB_EUSAGE, "new needs an operator and a name: kbench new OP NAME");
    const char *op = argv[1], *arg = argv[2];
    if (!kb_op_find(op)) {
        const char *s = kb_op_suggest(op);
        if (s)
            return kb_cli_error(KB_EUSAGE, "unknown operator '%s' (did you mean '%s'?)", op, s);
        return kb_cli_error(KB_EUSAGE, "unknown operator '%s' (see 'kbench list')", op);
    }
    snprintf(tpl, sizeof tpl, "templates/%s.cu", op);
    const kb_embedded *t = kb_embedded_find(tpl);
    if (!t)
        return kb_cli_error(KB_EUSAGE, "no starting file for operator '%s' in this kbench", op);
    if ((size_t)snprintf(path, sizeof path, "%s%s", arg, kb_user_is_file(arg) ? "" : ".cu") >=
        sizeof path)
        return kb_cli_error(KB_EUSAGE, "the name is too long: '%.200s...'", arg);
    kb_status st = kb_user_name(path, name, sizeof name, &e);
    if (st == KB_OK && kb_variant_find(kb_op_find(op), name))
        st = kb_fail(&e, KB_EUSAGE,
                     "'%s' is the name of a built-in %s variant; choose another name", name, op);
    if (st == KB_OK)
        st = write_new(path, t->text, t->len, &e);
    if (st != KB_OK)
        return kb_cli_fail(st, &e);
    printf("wrote %s; run it with: kbench run %s --variants %s%s\n", path, op,
           strchr(path, '/') ? "" : "./", path);
    return kb_cli_finish_stdout(KB_OK);
}
