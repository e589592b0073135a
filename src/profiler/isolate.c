/* isolate.c - fork a child for GPU work, collect its answer through a pipe, and
 * bound it in time (see isolate.h). */
#include "isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

void kb_isolate_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int kb_isolate_interrupted(void)
{
    return got_signal != 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

kb_status kb_isolate(kb_child_fn fn, void *ctx, double timeout_s, char **out, size_t *len,
                     kb_child_end *end, kb_err *e)
{
    int fds[2] = {-1, -1};
    char *buf = NULL;
    size_t used = 0, cap = 0;
    kb_status st = KB_OK;
    memset(end, 0, sizeof *end);
    *out = NULL;
    *len = 0;
    if (pipe(fds) != 0)
        return kb_fail(e, KB_EENV, "pipe failed: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        st = kb_fail(e, KB_EENV, "fork failed: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) {
        close(fds[0]);
        /* the child dies of its own faults, whatever handlers the parent had */
        static const int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                   SIGABRT};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        int code = fn(ctx, fds[1]);
        close(fds[1]);
        _exit(code);
    }
    close(fds[1]);
    fds[1] = -1;
    double deadline = now_s() + timeout_s;
    int open_pipe = 1, killed = 0;
    while (open_pipe) {
        if (!killed && got_signal) {
            end->interrupted = 1;
            kill(pid, SIGKILL);
            killed = 1;
        }
        double left = deadline - now_s();
        if (!killed && left <= 0) {
            end->timed_out = 1;
            kill(pid, SIGKILL);
            killed = 1;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int wait_ms = killed ? 1000 : (left > 0.2 ? 200 : (int)(left * 1000) + 1);
        int pr = poll(&p, 1, wait_ms);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            st = kb_fail(e, KB_EENV, "poll failed: %s", strerror(errno));
            kill(pid, SIGKILL);
            break;
        }
        if (pr == 0)
            continue;
        if (cap - used < 4096) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                st = kb_fail(e, KB_EENV, "out of memory reading a child's answer");
                kill(pid, SIGKILL);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fds[0], buf + used, cap - used - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            st = kb_fail(e, KB_EENV, "reading a child's answer failed: %s", strerror(errno));
            kill(pid, SIGKILL);
            break;
        }
        if (r == 0)
            open_pipe = 0;
        used += (size_t)r;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            if (st == KB_OK)
                st = kb_fail(e, KB_EENV, "waitpid failed: %s", strerror(errno));
            break;
        }
        if (got_signal && !killed) {
            end->interrupted = 1;
            kill(pid, SIGKILL);
            killed = 1;
        }
    }
    if (WIFEXITED(status)) {
        end->exited = 1;
        end->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        end->signaled = 1;
        end->sig = WTERMSIG(status);
    }
done:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (st != KB_OK) {
        free(buf);
        return st;
    }
    if (!buf)
        buf = calloc(1, 1);
    if (!buf)
        return kb_fail(e, KB_EENV, "out of memory");
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return KB_OK;
}

void kb_child_end_describe(const kb_child_end *end, double timeout_s, char *buf, size_t n)
{
    if (end->interrupted)
        snprintf(buf, n, "interrupted");
    else if (end->timed_out)
        snprintf(buf, n, "timed out after %.0f s (hang?)", timeout_s);
    else if (end->signaled)
        snprintf(buf, n, "killed by signal %d (%s)", end->sig, strsignal(end->sig));
    else
        snprintf(buf, n, "exited with code %d", end->code);
}
