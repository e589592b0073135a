/* isolate.c - fork a child for GPU work, collect its answer through a pipe, and
 * bound it in time (see isolate.h). */
#include "isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;

/* In a child of spawn(): the process id of the parent that forked it; 0 in a
 * process that is not such a child. */
static pid_t parent_pid;

int kb_isolate_parent_alive(void)
{
    return parent_pid == 0 || getppid() == parent_pid;
}

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

/* A running child and what it has answered so far. */
typedef struct child {
    pid_t pid;
    int fd;       /* the read end of its pipe, or -1 */
    int killed;   /* the parent has killed it */
    char *buf;    /* its answer so far (malloc'd) */
    size_t used, cap;
} child;

/* Bytes the answer buffer starts with, and the least room it keeps free. */
#define ANSWER_FIRST 65536
#define ANSWER_ROOM 4096
/* How long one wait for the child's answer lasts, ms, so that the deadline and
 * interrupts are looked at in time; once it is killed, a wait for its end. */
#define POLL_MS 200
#define POLL_KILLED_MS 1000

/* Forks; the child runs fn(ctx, fd) with default signal handling and exits with
 * its return value. The parent keeps the read end in c->fd. */
static kb_status spawn(kb_child_fn fn, void *ctx, child *c, kb_err *e)
{
    int fds[2] = {-1, -1};
    if (pipe(fds) != 0)
        return kb_fail(e, KB_EENV, "pipe failed: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    const pid_t parent = getpid();
    c->pid = fork();
    if (c->pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return kb_fail(e, KB_EENV, "fork failed: %s", strerror(errno));
    }
    if (c->pid == 0) {
        /* die with the parent; it may have died before this line (then the
         * child was already handed to another parent) */
        parent_pid = parent;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(KB_EENV);
        close(fds[0]);
        /* the child dies of its own faults, whatever handlers the parent had */
        static const int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                   SIGABRT};
        for (size_t i = 0; i < KB_COUNT(sigs); i++)
            signal(sigs[i], SIG_DFL);
        int code = fn(ctx, fds[1]);
        close(fds[1]);
        _exit(code);
    }
    close(fds[1]);
    c->fd = fds[0];
    return KB_OK;
}

static void kill_child(child *c)
{
    kill(c->pid, SIGKILL);
    c->killed = 1;
}

/* Reads what is waiting on the pipe; *open = 0 at its end. */
static kb_status read_some(child *c, int *open, kb_err *e)
{
    if (c->cap - c->used < ANSWER_ROOM) {
        size_t ncap = c->cap ? c->cap * 2 : ANSWER_FIRST;
        char *nb = realloc(c->buf, ncap);
        if (!nb)
            return kb_fail(e, KB_EENV, "out of memory reading a child's answer");
        c->buf = nb;
        c->cap = ncap;
    }
    ssize_t r = read(c->fd, c->buf + c->used, c->cap - c->used - 1);
    if (r < 0)
        return errno == EINTR ? KB_OK
                              : kb_fail(e, KB_EENV, "reading a child's answer failed: %s",
                                        strerror(errno));
    *open = r > 0;
    c->used += (size_t)r;
    return KB_OK;
}

/* Collects the child's answer until its pipe closes, killing it at the
 * deadline or on an interrupt; calls tick while it runs. */
static kb_status collect(child *c, double timeout_s, kb_child_tick tick, void *tick_ctx,
                         kb_child_end *end, kb_err *e)
{
    const double deadline = now_s() + timeout_s;
    double next_tick = now_s() + KB_ISOLATE_TICK_S;
    int open = 1;
    while (open) {
        if (tick && !c->killed && now_s() >= next_tick) {
            tick(tick_ctx, (long)c->pid);
            next_tick = now_s() + KB_ISOLATE_TICK_S;
        }
        if (!c->killed && got_signal) {
            end->interrupted = 1;
            kill_child(c);
        }
        double left = deadline - now_s();
        if (!c->killed && left <= 0) {
            end->timed_out = 1;
            kill_child(c);
        }
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int wait_ms = c->killed ? POLL_KILLED_MS
                                : (left > POLL_MS / 1e3 ? POLL_MS : (int)(left * 1000) + 1);
        int pr = poll(&p, 1, wait_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return kb_fail(e, KB_EENV, "poll failed: %s", strerror(errno));
        if (pr > 0) {
            kb_status st = read_some(c, &open, e);
            if (st != KB_OK)
                return st;
        }
    }
    return KB_OK;
}

/* Waits for the child's end (killing it on an interrupt) and describes it. */
static kb_status reap(child *c, kb_child_end *end, kb_err *e)
{
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0) {
        if (errno != EINTR)
            return kb_fail(e, KB_EENV, "waitpid failed: %s", strerror(errno));
        if (got_signal && !c->killed) {
            end->interrupted = 1;
            kill_child(c);
        }
    }
    if (WIFEXITED(status)) {
        end->exited = 1;
        end->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        end->signaled = 1;
        end->sig = WTERMSIG(status);
    }
    return KB_OK;
}

kb_status kb_isolate(kb_child_fn fn, void *ctx, double timeout_s, char **out, size_t *len,
                     kb_child_end *end, kb_err *e)
{
    return kb_isolate_watched(fn, ctx, timeout_s, NULL, NULL, out, len, end, e);
}

kb_status kb_isolate_watched(kb_child_fn fn, void *ctx, double timeout_s, kb_child_tick tick,
                             void *tick_ctx, char **out, size_t *len, kb_child_end *end,
                             kb_err *e)
{
    child c = {.pid = -1, .fd = -1};
    memset(end, 0, sizeof *end);
    *out = NULL;
    *len = 0;
    kb_status st = spawn(fn, ctx, &c, e);
    if (st != KB_OK)
        return st;
    end->pid = (long)c.pid;
    st = collect(&c, timeout_s, tick, tick_ctx, end, e);
    if (st != KB_OK)
        kill_child(&c);
    kb_err re = {{0}};
    kb_status rs = reap(&c, end, &re);
    if (st == KB_OK && rs != KB_OK) {
        st = rs;
        *e = re;
    }
    close(c.fd);
    if (st == KB_OK && !c.buf)
        c.buf = calloc(1, 1); /* nothing read: an empty text */
    if (st == KB_OK && !c.buf)
        st = kb_fail(e, KB_EENV, "out of memory");
    if (st != KB_OK || !c.buf) {
        free(c.buf);
        return st;
    }
    c.buf[c.used] = '\0';
    *out = c.buf;
    *len = c.used;
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
