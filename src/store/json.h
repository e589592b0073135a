/* json.h - the JSON report (schema in docs/json.md): a kb_run as a cJSON tree and
 * back, and report files. Every kb_result field round-trips exactly.
 *
 * Trees built by the kb_json_from_* functions hold their numbers as cJSON_Raw
 * items with the shortest decimal text that reads back to the same double (cJSON's
 * own number printer drops digits); print them with cJSON_Print* or read them
 * back with kb_json_to_*, which accept both raw and parsed numbers. NaN and
 * infinities are written as null, and null reads back as NAN. */
#ifndef KB_JSON_H
#define KB_JSON_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "results/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_SCHEMA_VERSION 1 /* the JSON report's schema_version (docs/json.md) */

/* The whole report of a run (schema_version, kbench, device, results). The
 * store id is not part of the report. Returns a tree the caller frees with
 * cJSON_Delete(), or NULL when out of memory. */
cJSON *kb_json_from_run(const kb_run *run);

/* Rebuilds a run from a report tree. Initialises *out first; on success the
 * caller owns it (kb_run_release), on error it holds nothing. KB_EUSAGE naming
 * the missing or bad field ("missing field 'results[2].time.median_us'"), or
 * for a schema_version newer than KB_SCHEMA_VERSION; KB_EENV when out of memory. */
kb_status kb_json_to_run(const cJSON *root, kb_run *out, kb_err *e);

/* One result object; caller cJSON_Delete()s; NULL when out of memory. */
cJSON *kb_json_from_result(const kb_result *r);

/* Rebuilds a result from its object. Initialises *out first; on success the
 * caller owns it (kb_result_release), on error it holds nothing. Errors as
 * kb_json_to_run, with field names relative to the object. */
kb_status kb_json_to_result(const cJSON *obj, kb_result *out, kb_err *e);

/* The device object; caller cJSON_Delete()s; NULL when out of memory. */
cJSON *kb_json_from_device(const kb_device *d);

/* Rebuilds a device from its object (initialises *out first). KB_EUSAGE naming
 * the missing or bad field. */
kb_status kb_json_to_device(const cJSON *obj, kb_device *out, kb_err *e);

/* The shape object of a result: axis name -> integer, in axis order. Caller
 * cJSON_Delete()s; NULL when out of memory. */
cJSON *kb_json_from_shape(const kb_result *r);

/* Sets r->naxes, r->axis and r->shape from a shape object. KB_EUSAGE (naming
 * the field "shape") for a non-object, too many axes, a long axis name or a
 * value that is not a non-negative integer. */
kb_status kb_json_to_shape(const cJSON *obj, kb_result *r, kb_err *e);

/* The run's report (kb_json_from_run) pretty-printed with a final newline to f,
 * which the caller flushes and closes. KB_EENV when out of memory or when f
 * reports a write error. */
kb_status kb_json_write_run(FILE *f, const kb_run *run, kb_err *e);

/* 1 when a BASE/NEW/RUN argument names a JSON report file (it contains '/' or
 * ends in ".json") rather than a stored run id or "latest". */
int kb_report_arg_is_file(const char *arg);

/* Reads and parses the JSON file at path ("-" reads stdin). On success *out is a
 * tree the caller cJSON_Delete()s. KB_EENV when the file is missing or
 * unreadable; KB_EUSAGE "'FILE' is not valid JSON (near byte N)" when it is
 * malformed or truncated. */
kb_status kb_json_read_file(const char *path, cJSON **out, kb_err *e);

/* kb_json_read_file then kb_json_to_run, with messages naming the file:
 * "'FILE' has schema_version 2, newer than this kbench (1)",
 * "invalid report 'FILE': missing field 'device.uuid'". Ownership of *out as
 * kb_json_to_run; errors as the two functions. */
kb_status kb_json_load_run(const char *path, kb_run *out, kb_err *e);

/* Writes the run's report (kb_json_from_run) pretty-printed with a final
 * newline to path, or to stdout for "-" (the caller flushes and checks
 * stdout). A file is written to a temporary file beside it, flushed, closed
 * and renamed over path (kb_write_atomic), so a reader never sees half a
 * report. KB_EENV when
 * out of memory or on any I/O failure. */
kb_status kb_json_save_run(const kb_run *run, const char *path, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif
