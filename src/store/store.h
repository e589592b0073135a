/* store.h - the SQLite store of runs, results, devices and their calibrated
 * ceilings (default results/kbench.db). Only the parent process writes it; each
 * result is committed as it completes, so an interrupted run keeps what it
 * finished. The schema is versioned with PRAGMA user_version and migrated
 * forward on open; a file that is not a kbench store, or a store from a newer
 * kbench, is refused and left untouched. Tables are listed in store.c. */
#ifndef KB_STORE_H
#define KB_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "results/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The store schema this build reads and writes (the number of migration steps). */
#define KB_STORE_VERSION 7

typedef struct kb_store kb_store;

/* Opens the store at path; with create != 0 creates it when missing (and its
 * parent folder, one level) and opens it for writing, marking runs left
 * "running" by a process of this host that no longer exists as "interrupted".
 * With create == 0 a missing store is an error and nothing is created.
 * Applies forward migrations in one transaction; WAL journal, busy timeout,
 * foreign keys on. Refuses with KB_EENV and one line, without modifying the
 * file: a directory, a file that is not SQLite, an SQLite file without the
 * kbench marker, a store whose schema is newer than KB_STORE_VERSION or
 * negative, an unwritable location when create != 0. A missing store is built
 * complete in a temporary file beside path and linked into place, so processes
 * creating the same store at once all open the one that won; no file at path is
 * ever removed. On success the caller owns *out (kb_store_close); on error *out
 * is NULL. */
kb_status kb_store_open(const char *path, int create, kb_store **out, kb_err *e);

/* Closes the store; NULL is a no-op. */
void kb_store_close(kb_store *s);

/* The path the store was opened with (owned by the store). */
const char *kb_store_path(const kb_store *s);

/* Records the start of a run: its device (upserted into devices by uuid), meta
 * fields, state "running" and this process's id and host. Sets run->id and
 * run->state. Committed when it returns. KB_EENV on SQLite errors. */
kb_status kb_store_begin_run(kb_store *s, kb_run *run, kb_err *e);

/* Appends one result (and its kernels) to run run_id in its own transaction,
 * committed when it returns. KB_EUSAGE "no run N in 'STORE'" for an unknown
 * run; KB_EENV on SQLite errors. */
kb_status kb_store_add_result(kb_store *s, int64_t run_id, const kb_result *r, kb_err *e);

/* Sets the run's final state ("complete" or "interrupted") and finish time.
 * KB_EUSAGE for another state or an unknown run; KB_EENV on SQLite errors. */
kb_status kb_store_finish_run(kb_store *s, int64_t run_id, const char *state,
                              const char *finished, kb_err *e);

/* Loads run id (0: the latest, the run that started last; ids break ties) with its results and kernels, in the order they
 * were added. Initialises *out; on success the caller owns it (kb_run_release),
 * on error it holds nothing. KB_EUSAGE "no run N in 'STORE'" (or "no runs in
 * 'STORE'"); KB_EENV on SQLite errors or a damaged row. */
kb_status kb_store_load_run(kb_store *s, int64_t id, kb_run *out, kb_err *e);

/* Writes one line per stored run to f (id, started, state, device, operators,
 * result count, tag) under a header, or "no runs in 'STORE'". KB_EENV on
 * SQLite or write errors. */
kb_status kb_store_list_runs(kb_store *s, FILE *f, kb_err *e);

/* Stores a whole run read from a JSON report (device, meta, state as recorded,
 * results, kernels) in one transaction: all of it or nothing. Sets run->id.
 * KB_EENV on SQLite errors. */
kb_status kb_store_import_run(kb_store *s, kb_run *run, kb_err *e);

/* *id = the first stored run with run's device uuid, start time and command
 * line (the same run, imported or recorded before), 0 when there is none.
 * KB_EENV on SQLite errors. */
kb_status kb_store_find_run(kb_store *s, const kb_run *run, int64_t *id, kb_err *e);

/* Stores a calibrated ceiling of device d (upserted by uuid): "copy_gbps",
 * "mma_tflops", "fp32_tflops" or "copy_batch_gbps" (any name is kept), with
 * the time it was measured (d->ceilings_at, or now when that is ""), the
 * driver and the clocks (d->ceilings_*), replacing an older value of that
 * name. NAN is stored as unknown.
 * KB_EENV on SQLite errors. */
kb_status kb_store_set_ceiling(kb_store *s, const kb_device *d, const char *name, double value,
                               kb_err *e);

/* *value = the stored ceiling name of the device with this uuid, NAN when there
 * is none. KB_EENV on SQLite errors. */
kb_status kb_store_get_ceiling(kb_store *s, const char *uuid, const char *name, double *value,
                               kb_err *e);

/* Stores the calibrated ceilings of d (kb_ceiling_name) as
 * kb_store_set_ceiling does, each in its own transaction. KB_EENV on SQLite
 * errors. */
kb_status kb_store_set_ceilings(kb_store *s, const kb_device *d, kb_err *e);

/* Reads the stored ceilings of the device with d's uuid into d's ceiling fields
 * (NAN for those not stored), and into d->ceilings_* when, under which driver
 * and at which clocks the oldest of them was measured ("" / NAN / 0 when not
 * stored). KB_EENV on SQLite errors. */
kb_status kb_store_get_ceilings(kb_store *s, kb_device *d, kb_err *e);

/* For migration tests: creates a new store at path holding only the first
 * `version` schema steps (0 = an empty SQLite database). KB_EUSAGE when the
 * file exists or version is out of [0, KB_STORE_VERSION]; KB_EENV on SQLite
 * errors. */
kb_status kb_store_create_at_version(const char *path, int version, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
