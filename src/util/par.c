/* par.c - kb_par_run's threads (see par.h). */
#include "util/par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/env.h"

int kb_par_threads(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const int online = cpus < 1 ? 1 : cpus > KB_PAR_MAX_THREADS ? KB_PAR_MAX_THREADS : (int)cpus;
    return kb_env_int("KBENCH_THREADS", online, 1, 256);
}

typedef struct par_job {
    int64_t n;
    int chunks;
    kb_par_init_fn init;
    kb_par_chunk_fn fn;
    void *ctx;
    atomic_int next;   /* the next chunk to take */
    atomic_int failed; /* set by the first failure: take no more */
    kb_status *chunk_st, *init_st;
    kb_err *chunk_err, *init_err;
} par_job;

typedef struct par_worker {
    par_job *job;
    int w;
} par_worker;

static void *par_work(void *arg)
{
    const par_worker *pw = arg;
    par_job *j = pw->job;
    const int w = pw->w;
    const int64_t q = j->n / j->chunks, r = j->n % j->chunks; /* chunk k: q + (k < r) */
    if (j->init && (j->init_st[w] = j->init(j->ctx, w, &j->init_err[w])) != KB_OK) {
        atomic_store(&j->failed, 1);
        return NULL;
    }
    while (!atomic_load(&j->failed)) {
        const int k = atomic_fetch_add(&j->next, 1);
        if (k >= j->chunks)
            break;
        const int64_t begin = k * q + (k < r ? k : r), end = begin + q + (k < r);
        if (begin < end &&
            (j->chunk_st[k] = j->fn(j->ctx, k, begin, end, w, &j->chunk_err[k])) != KB_OK)
            atomic_store(&j->failed, 1);
    }
    return NULL;
}

kb_status kb_par_run(int64_t n, int chunks, int threads, kb_par_init_fn init, kb_par_chunk_fn fn,
                     void *ctx, kb_err *e)
{
    if (n <= 0)
        return KB_OK;
    if (chunks < 1)
        chunks = 1;
    if (threads > chunks)
        threads = chunks;
    if ((int64_t)threads > n)
        threads = (int)n;
    if (threads < 1)
        threads = 1;
    par_job j = {.n = n, .chunks = chunks, .init = init, .fn = fn, .ctx = ctx};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    j.chunk_st = calloc((size_t)chunks, sizeof *j.chunk_st);
    j.init_st = calloc((size_t)threads, sizeof *j.init_st);
    j.chunk_err = calloc((size_t)chunks, sizeof *j.chunk_err);
    j.init_err = calloc((size_t)threads, sizeof *j.init_err);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    par_worker *pw = calloc((size_t)threads, sizeof *pw);
    kb_status st = KB_OK;
    if (!j.chunk_st || !j.init_st || !j.chunk_err || !j.init_err || !tid || !pw) {
        st = kb_fail(e, KB_EENV, "out of host memory for %d chunks on %d threads", chunks, threads);
        goto done;
    }
    int started = 1; /* worker 0 is this thread */
    for (int w = 1; w < threads; w++) {
        pw[w] = (par_worker){&j, w};
        if (pthread_create(&tid[w], NULL, par_work, &pw[w]) != 0)
            break; /* the others take its share */
        started++;
    }
    pw[0] = (par_worker){&j, 0};
    par_work(&pw[0]);
    for (int w = 1; w < started; w++)
        pthread_join(tid[w], NULL);
    for (int w = 0; w < started && st == KB_OK; w++)
        if (j.init_st[w] != KB_OK) {
            st = j.init_st[w];
            *e = j.init_err[w];
        }
    for (int k = 0; k < chunks && st == KB_OK; k++)
        if (j.chunk_st[k] != KB_OK) {
            st = j.chunk_st[k];
            *e = j.chunk_err[k];
        }
done:
    free(j.chunk_st);
    free(j.init_st);
    free(j.chunk_err);
    free(j.init_err);
    free(tid);
    free(pw);
    return st;
}
