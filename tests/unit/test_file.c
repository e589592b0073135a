/* test_file.c - writing to the user's output path (util/file): a new file gets
 * the usual mode, an existing one keeps its own (0600 stays 0600), a symbolic
 * link's target is written and the link kept, a FIFO is written in place and
 * stays a FIFO, an existing PATH.tmp is left alone, "-" is standard output, an
 * empty path is a usage error, a failed write keeps the old file, and every
 * message names the path as the user gave it. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "kbtest.h"
#include "util/file.h"

static char tmp[64];

/* Writes the string ctx; a NULL ctx fails like an emitter whose data is bad. */
static kb_status emit_text(FILE *f, const void *ctx, kb_err *e)
{
    if (!ctx)
        return kb_fail(e, KB_EUSAGE, "bad data");
    fputs((const char *)ctx, f);
    return KB_OK;
}

static const FILE *seen_stream;
static kb_status emit_where(FILE *f, const void *ctx, kb_err *e)
{
    (void)ctx;
    (void)e;
    seen_stream = f;
    return KB_OK;
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
}

static void put(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void assert_file(const char *path, const char *want)
{
    char *got = kbt_slurp(path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* The entries of the test folder, so no temporary file is left behind. */
static int entries(void)
{
    int n = 0;
    DIR *d = opendir(tmp);
    assert_non_null(d);
    for (struct dirent *de = readdir(d); de; de = readdir(d))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void new_and_existing_files(void **state)
{
    (void)state;
    char p[128];
    struct stat sb;
    kb_err e = {{0}};
    const mode_t mask = umask(022);
    path_in(p, sizeof p, "new.html");
    assert_int_equal(kb_write_atomic(p, emit_text, "one\n", &e), KB_OK);
    assert_file(p, "one\n");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    /* a 0600 file keeps its mode */
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(kb_write_atomic(p, emit_text, "two\n", &e), KB_OK);
    assert_file(p, "two\n");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(entries(), 1);
    /* a failed write leaves the old file as it was, and nothing else */
    assert_int_equal(kb_write_atomic(p, emit_text, NULL, &e), KB_EUSAGE);
    assert_file(p, "two\n");
    assert_int_equal(entries(), 1);
    umask(mask);
}

static void existing_tmp_is_kept(void **state)
{
    (void)state;
    char p[128], t[160];
    kb_err e = {{0}};
    path_in(p, sizeof p, "report.md");
    snprintf(t, sizeof t, "%s.tmp", p);
    put(t, "my notes\n", 0644);
    assert_int_equal(kb_write_atomic(p, emit_text, "report\n", &e), KB_OK);
    assert_file(p, "report\n");
    assert_file(t, "my notes\n");
}

static void symlink_target_written(void **state)
{
    (void)state;
    char p[128], target[128], buf[128];
    struct stat sb;
    kb_err e = {{0}};
    path_in(target, sizeof target, "real.json");
    path_in(p, sizeof p, "link.json");
    put(target, "old\n", 0640);
    assert_int_equal(symlink("real.json", p), 0);
    assert_int_equal(kb_write_atomic(p, emit_text, "new\n", &e), KB_OK);
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    ssize_t n = readlink(p, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, "real.json");
    assert_file(target, "new\n");
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    /* a link to nothing yet: its target is created */
    path_in(p, sizeof p, "dangling.json");
    assert_int_equal(symlink("made.json", p), 0);
    assert_int_equal(kb_write_atomic(p, emit_text, "made\n", &e), KB_OK);
    path_in(target, sizeof target, "made.json");
    assert_file(target, "made\n");
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
}

/* A FIFO (as a device node would be) is written in place: a reader on the
 * other end gets the report, and the FIFO is still there. */
static void fifo_written_in_place(void **state)
{
    (void)state;
    char p[128], got[128];
    struct stat sb;
    kb_err e = {{0}};
    path_in(p, sizeof p, "pipe");
    path_in(got, sizeof got, "got");
    assert_int_equal(mkfifo(p, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(10);
        FILE *in = fopen(p, "r"), *out = fopen(got, "w");
        int c;
        if (!in || !out)
            _exit(1);
        while ((c = fgetc(in)) != EOF)
            fputc(c, out);
        _exit(fclose(out) == 0 ? 0 : 1);
    }
    alarm(10);
    assert_int_equal(kb_write_atomic(p, emit_text, "through the pipe\n", &e), KB_OK);
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    alarm(0);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_file(got, "through the pipe\n");
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
}

static void stdout_and_bad_paths(void **state)
{
    (void)state;
    char p[128], want[256];
    kb_err e = {{0}};
    assert_int_equal(kb_write_atomic("-", emit_where, NULL, &e), KB_OK);
    assert_ptr_equal(seen_stream, stdout);
    assert_int_equal(kb_write_atomic("", emit_text, "x", &e), KB_EUSAGE);
    assert_string_equal(e.msg, "empty output path (name a file, or '-' for standard output)");
    path_in(p, sizeof p, "missing/out.html");
    assert_int_equal(kb_write_atomic(p, emit_text, "x", &e), KB_EENV);
    snprintf(want, sizeof want, "cannot write '%s': No such file or directory", p);
    assert_string_equal(e.msg, want);
    path_in(p, sizeof p, "adir");
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(kb_write_atomic(p, emit_text, "x", &e), KB_EENV);
    snprintf(want, sizeof want, "cannot write '%s': it is a directory", p);
    assert_string_equal(e.msg, want);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "%s", kbt_tmpdir());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_and_existing_files, setup, teardown),
        cmocka_unit_test_setup_teardown(existing_tmp_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(symlink_target_written, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(stdout_and_bad_paths, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
