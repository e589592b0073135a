/* json.c - the JSON report: building cJSON trees from the result model,
 * validating and reading them back, and report files. docs/json.md is the
 * schema; keep both in step (field names are an interface for CI). */
#include "store/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/metrics.h"
#include "util/file.h"

/* The largest integer a JSON number (a double) holds exactly: 2^53. */
#define KB_JSON_MAX_INT 9007199254740992LL

/* ---- writing ---------------------------------------------------------------- */

/* A number item: raw exact text, or null for NaN and infinities. */
static cJSON *num_item(double v)
{
    if (!isfinite(v))
        return cJSON_CreateNull();
    char buf[40];
    kb_fmt_exact(v, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

static cJSON *int_item(long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    return cJSON_CreateRaw(buf);
}

/* Adds item under key, freeing it when that fails. Returns 1 on success. */
static int put(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return 1;
    cJSON_Delete(item); /* NULL is a no-op */
    return 0;
}

/* Appends item to the array, freeing it when that fails. Returns 1 on success. */
static int push(cJSON *arr, cJSON *item)
{
    if (item && cJSON_AddItemToArray(arr, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

static int put_num(cJSON *o, const char *key, double v) { return put(o, key, num_item(v)); }
static int put_int(cJSON *o, const char *key, long long v) { return put(o, key, int_item(v)); }
static int put_str(cJSON *o, const char *key, const char *s)
{
    return cJSON_AddStringToObject(o, key, s) != NULL;
}
static int put_bool(cJSON *o, const char *key, int v)
{
    return cJSON_AddBoolToObject(o, key, v ? 1 : 0) != NULL;
}

static cJSON *uint3_item(const unsigned v[3])
{
    cJSON *a = cJSON_CreateArray();
    if (!a)
        return NULL;
    for (int i = 0; i < 3; i++)
        if (!push(a, int_item((long long)v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* An integer, or null when it is negative (unknown). */
static cJSON *int_or_null(long long v)
{
    return v < 0 ? cJSON_CreateNull() : int_item(v);
}

/* An object name -> number of the first n named values, in order. */
static cJSON *named_item(const kb_named_value *v, int n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!put(o, v[i].name, num_item(v[i].value))) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

static cJSON *kernel_item(const kb_kernel *k)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const int nm = kb_kernel_nmetrics(k), ns = kb_kernel_nstalls(k);
    if (!put_str(o, "name", k->name) || !put(o, "grid", uint3_item(k->grid)) ||
        !put(o, "block", uint3_item(k->block)) || !put_int(o, "registers", k->registers) ||
        !put_int(o, "static_smem", k->static_smem) ||
        !put_int(o, "dynamic_smem", k->dynamic_smem) ||
        !put_int(o, "local_bytes", k->local_bytes) ||
        !put_int(o, "blocks_per_sm", k->blocks_per_sm) ||
        !put_num(o, "occupancy", k->occupancy) ||
        !put_str(o, "occupancy_limiter", k->occ_limiter) ||
        !put(o, "metrics", named_item(k->metrics, nm)) ||
        !put(o, "stalls", named_item(k->stalls, ns))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *kb_json_from_shape(const kb_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    for (int i = 0; i < r->naxes && i < KB_RES_MAX_AXES; i++)
        if (!put_int(o, r->axis[i], r->shape[i])) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

static cJSON *seed_item(uint64_t seed)
{
    if (seed <= (uint64_t)KB_JSON_MAX_INT)
        return int_item((long long)seed);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    return cJSON_CreateString(buf);
}

/* The flags of a result as an array of their names. */
static cJSON *flags_item(unsigned flags)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < KB_NFLAGS; i++)
        if ((flags & (1u << i)) && !push(a, cJSON_CreateString(kb_flag_name(i)))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

cJSON *kb_json_from_result(const kb_result *r)
{
    cJSON *o = cJSON_CreateObject(), *chk, *tol, *tm, *smp, *mdl, *der, *cnt, *res, *ks;
    if (!o)
        return NULL;
    if (!put_str(o, "op", r->op) || !put_str(o, "variant", r->variant) ||
        !put_str(o, "dtype", r->dtype) || !put(o, "shape", kb_json_from_shape(r)) ||
        !put_str(o, "status", kb_rstatus_name(r->status)) ||
        !put_str(o, "reason", r->reason) || !put(o, "seed", seed_item(r->seed)))
        goto fail;

    if (!(chk = cJSON_AddObjectToObject(o, "check")) || !put_bool(chk, "checked", r->checked) ||
        !put_num(chk, "max_abs_err", r->max_abs_err) ||
        !put_num(chk, "rel_l2_err", r->rel_l2_err) ||
        !(tol = cJSON_AddObjectToObject(chk, "tolerance")) || !put_num(tol, "atol", r->atol) ||
        !put_num(tol, "rtol", r->rtol) || !put_int(chk, "rows_checked", r->rows_checked))
        goto fail;

    if (!(tm = cJSON_AddObjectToObject(o, "time")) || !put_num(tm, "median_us", r->median_us) ||
        !put_num(tm, "min_us", r->min_us) || !put_num(tm, "max_us", r->max_us) ||
        !put_num(tm, "stdrel", r->stdrel) || !(smp = cJSON_AddArrayToObject(tm, "samples_us")))
        goto fail;
    for (size_t i = 0; i < r->nsamples; i++)
        if (!push(smp, num_item(r->samples_us[i])))
            goto fail;
    if (!put_num(tm, "batch_us", r->batch_us) || !put_num(tm, "batch_stdrel", r->batch_stdrel) ||
        !put_int(tm, "batch_launches", r->batch_launches) ||
        !put_num(tm, "sm_clock_mhz", r->sm_clock_mhz) ||
        !put_str(tm, "throttle_reason", r->throttle_reason) ||
        !put_bool(tm, "throttled", r->throttled) || !put(o, "flags", flags_item(r->flags)))
        goto fail;

    if (!(mdl = cJSON_AddObjectToObject(o, "model")) || !put_num(mdl, "bytes", r->bytes) ||
        !put_num(mdl, "flops", r->flops) || !put_num(mdl, "extra_bytes", r->extra_bytes) ||
        !put_str(o, "bound", r->bound))
        goto fail;
    cJSON *src;
    if (r->source_sha256[0] &&
        (!(src = cJSON_AddObjectToObject(o, "source")) || !put_str(src, "path", r->source_path) ||
         !put_str(src, "sha256", r->source_sha256)))
        goto fail;
    if (!(der = cJSON_AddObjectToObject(o, "derived")) || !put_num(der, "gbps", r->gbps) ||
        !put_num(der, "tflops", r->tflops) || !put_num(der, "pct_peak", r->pct_peak) ||
        !put_num(der, "speedup", r->speedup) || !put_num(der, "gbps_batch", r->gbps_batch) ||
        !put_num(der, "tflops_batch", r->tflops_batch) ||
        !put_num(der, "pct_peak_batch", r->pct_peak_batch) ||
        !put_num(der, "speedup_batch", r->speedup_batch) ||
        !put_num(der, "dram_gbps", r->dram_gbps) ||
        !put_num(der, "excess_traffic", r->excess_traffic))
        goto fail;

    if (!(cnt = cJSON_AddObjectToObject(o, "counters")) || !put_str(cnt, "set", r->metric_set) ||
        !put_int(cnt, "passes", r->passes) || !put_str(cnt, "reason", r->counters_reason) ||
        !put_num(cnt, "dram_bytes", r->dram_bytes) ||
        !put_num(cnt, "achieved_occupancy", r->achieved_occupancy) ||
        !put_str(cnt, "top_stalls", r->top_stalls))
        goto fail;
    if (!(res = cJSON_AddObjectToObject(o, "resources")) ||
        !put(res, "registers", int_or_null(r->registers)) ||
        !put(res, "local_bytes", int_or_null(r->local_bytes)) ||
        !put_num(res, "theoretical_occupancy", r->theoretical_occupancy))
        goto fail;

    if (!(ks = cJSON_AddArrayToObject(o, "kernels")))
        goto fail;
    for (int i = 0; i < r->nkernels; i++)
        if (!push(ks, kernel_item(&r->kernels[i])))
            goto fail;
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

cJSON *kb_json_from_device(const kb_device *d)
{
    char cc[24];
    cJSON *o = cJSON_CreateObject(), *ceil;
    if (!o)
        return NULL;
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    if (!put_int(o, "ordinal", d->ordinal) || !put_str(o, "name", d->name) ||
        !put_str(o, "uuid", d->uuid) || !put_str(o, "cc", cc) || !put_int(o, "sms", d->sms) ||
        !put_int(o, "memory_bytes", d->memory_bytes) || !put_int(o, "l2_bytes", d->l2_bytes) ||
        !put_int(o, "sm_clock_mhz", d->sm_clock_mhz) ||
        !put_int(o, "mem_clock_mhz", d->mem_clock_mhz) ||
        !put_int(o, "mem_bus_bits", d->mem_bus_bits) || !put_str(o, "driver", d->driver) ||
        !put_str(o, "runtime", d->runtime) || !(ceil = cJSON_AddObjectToObject(o, "ceilings")) ||
        !put_num(ceil, "copy_gbps", d->copy_gbps) ||
        !put_num(ceil, "copy_batch_gbps", d->copy_batch_gbps) ||
        !put_str(ceil, "calibrated_at", d->ceilings_at) ||
        !put_str(ceil, "calibrated_driver", d->ceilings_driver) ||
        !put_num(ceil, "calibrated_sm_clock_mhz", d->ceilings_sm_clock_mhz) ||
        !put_int(ceil, "calibrated_mem_clock_mhz", d->ceilings_mem_clock_mhz) ||
        !put_num(ceil, "mma_tflops", d->mma_tflops) ||
        !put_num(ceil, "fp32_tflops", d->fp32_tflops)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *kb_json_from_run(const kb_run *run)
{
    cJSON *root = cJSON_CreateObject(), *kb, *res;
    if (!root)
        return NULL;
    if (!put_int(root, "schema_version", KB_SCHEMA_VERSION) ||
        !(kb = cJSON_AddObjectToObject(root, "kbench")) || !put_str(kb, "version", run->version) ||
        !put_str(kb, "git", run->git) || !put_str(kb, "argv", run->argv) ||
        !put_str(kb, "started", run->started) || !put_str(kb, "finished", run->finished) ||
        !put_str(kb, "state", run->state) || !put_str(kb, "tag", run->tag) ||
        !put(root, "device", kb_json_from_device(&run->dev)) ||
        !(res = cJSON_AddArrayToObject(root, "results")))
        goto fail;
    for (size_t i = 0; i < run->nresults; i++)
        if (!push(res, kb_json_from_result(&run->results[i])))
            goto fail;
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

/* ---- reading ---------------------------------------------------------------- */

enum { OPT = 0, REQ = 1 };

static void fpath(char *buf, size_t n, const char *pre, const char *key)
{
    if (pre && *pre)
        snprintf(buf, n, "%s.%s", pre, key);
    else
        snprintf(buf, n, "%s", key);
}

static const char *jtype(const cJSON *it)
{
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsBool(it))
        return "a boolean";
    if (cJSON_IsNumber(it) || cJSON_IsRaw(it))
        return "a number";
    if (cJSON_IsString(it))
        return "a string";
    if (cJSON_IsArray(it))
        return "an array";
    if (cJSON_IsObject(it))
        return "an object";
    return "an unknown value";
}

/* 1 and *v for a parsed number or a raw number item, else 0. */
static int num_value(const cJSON *it, double *v)
{
    if (cJSON_IsNumber(it)) {
        *v = it->valuedouble;
        return 1;
    }
    if (cJSON_IsRaw(it) && it->valuestring && *it->valuestring) {
        char *end = NULL;
        double d = strtod(it->valuestring, &end);
        if (*end != '\0')
            return 0;
        *v = d;
        return 1;
    }
    return 0;
}

/* *it = obj[key], or NULL when absent and optional; KB_EUSAGE when required. */
static kb_status get_item(const cJSON *obj, const char *pre, const char *key, int req,
                          const cJSON **it, kb_err *e)
{
    char p[256];
    *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*it && req) {
        fpath(p, sizeof p, pre, key);
        return kb_fail(e, KB_EUSAGE, "missing field '%s'", p);
    }
    return KB_OK;
}

static kb_status type_error(const char *pre, const char *key, const char *want,
                            const cJSON *it, kb_err *e)
{
    char p[256];
    fpath(p, sizeof p, pre, key);
    return kb_fail(e, KB_EUSAGE, "field '%s' must be %s, got %s", p, want, jtype(it));
}

static kb_status get_obj(const cJSON *obj, const char *pre, const char *key, int req,
                         const cJSON **out, kb_err *e)
{
    kb_status st = get_item(obj, pre, key, req, out, e);
    if (st == KB_OK && *out && !cJSON_IsObject(*out))
        return type_error(pre, key, "an object", *out, e);
    return st;
}

static kb_status get_arr(const cJSON *obj, const char *pre, const char *key, int req,
                         const cJSON **out, kb_err *e)
{
    kb_status st = get_item(obj, pre, key, req, out, e);
    if (st == KB_OK && *out && !cJSON_IsArray(*out))
        return type_error(pre, key, "an array", *out, e);
    return st;
}

/* Copies a string field into dst[n]; absent and optional leaves dst alone. */
static kb_status get_str(const cJSON *obj, const char *pre, const char *key, int req, char *dst,
                         size_t n, kb_err *e)
{
    const cJSON *it;
    char p[256];
    kb_status st = get_item(obj, pre, key, req, &it, e);
    if (st != KB_OK || !it)
        return st;
    if (!cJSON_IsString(it) || !it->valuestring)
        return type_error(pre, key, "a string", it, e);
    if (strlen(it->valuestring) >= n) {
        fpath(p, sizeof p, pre, key);
        return kb_fail(e, KB_EUSAGE, "field '%s' is too long (at most %zu bytes): '%.40s...'", p,
                       n - 1, it->valuestring);
    }
    kb_strlcpy(dst, it->valuestring, n);
    return KB_OK;
}

/* A number or null (NAN); absent and optional leaves dst alone. */
static kb_status get_num(const cJSON *obj, const char *pre, const char *key, int req,
                         double *dst, kb_err *e)
{
    const cJSON *it;
    kb_status st = get_item(obj, pre, key, req, &it, e);
    if (st == KB_OK && it && cJSON_IsNull(it))
        *dst = NAN;
    else if (st == KB_OK && it && !num_value(it, dst))
        st = type_error(pre, key, "a number or null", it, e);
    return st;
}

/* Checks that item (named pre.key) is an integer in [lo, hi]. */
static kb_status int_value(const cJSON *it, const char *pre, const char *key, int64_t lo,
                           int64_t hi, int64_t *dst, kb_err *e)
{
    double v;
    char p[256];
    if (!num_value(it, &v))
        return type_error(pre, key, "an integer", it, e);
    if (v != floor(v) || v < (double)lo || v > (double)hi || fabs(v) > (double)KB_JSON_MAX_INT) {
        fpath(p, sizeof p, pre, key);
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an integer in [%lld, %lld], got '%.17g'",
                       p, (long long)lo, (long long)hi, v);
    }
    *dst = (int64_t)v;
    return KB_OK;
}

static kb_status get_int(const cJSON *obj, const char *pre, const char *key, int req, int64_t lo,
                         int64_t hi, int64_t *dst, kb_err *e)
{
    const cJSON *it;
    kb_status st = get_item(obj, pre, key, req, &it, e);
    if (st != KB_OK || !it)
        return st;
    return int_value(it, pre, key, lo, hi, dst, e);
}

/* get_int into an int field. */
static kb_status get_int32(const cJSON *obj, const char *pre, const char *key, int req,
                           int64_t lo, int64_t hi, int *dst, kb_err *e)
{
    int64_t v = *dst;
    kb_status st = get_int(obj, pre, key, req, lo, hi, &v, e);
    if (st == KB_OK)
        *dst = (int)v;
    return st;
}

static kb_status get_bool(const cJSON *obj, const char *pre, const char *key, int req, int *dst,
                          kb_err *e)
{
    const cJSON *it;
    kb_status st = get_item(obj, pre, key, req, &it, e);
    if (st != KB_OK || !it)
        return st;
    if (!cJSON_IsBool(it))
        return type_error(pre, key, "true or false", it, e);
    *dst = cJSON_IsTrue(it) ? 1 : 0;
    return KB_OK;
}

/* A non-negative integer of at most 2^53, or a string of decimal digits. */
static kb_status get_seed(const cJSON *obj, const char *pre, uint64_t *dst, kb_err *e)
{
    const cJSON *it;
    char p[256];
    kb_status st = get_item(obj, pre, "seed", REQ, &it, e);
    if (st != KB_OK)
        return st;
    if (cJSON_IsString(it) && it->valuestring) {
        const char *s = it->valuestring;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end != '\0' || errno == ERANGE) {
            fpath(p, sizeof p, pre, "seed");
            return kb_fail(e, KB_EUSAGE, "field '%s' must be an unsigned 64-bit integer, got '%s'",
                           p, s);
        }
        *dst = (uint64_t)v;
        return KB_OK;
    }
    int64_t v = 0;
    KB_TRY(int_value(it, pre, "seed", 0, KB_JSON_MAX_INT, &v, e));
    *dst = (uint64_t)v;
done:
    return st;
}

/* Reads the shape object named name ("shape", "results[3].shape") into r. */
static kb_status shape_from(const cJSON *obj, const char *name, kb_result *r, kb_err *e)
{
    r->naxes = 0;
    if (!cJSON_IsObject(obj))
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an object, got %s", name, jtype(obj));
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        const char *axis = it->string ? it->string : "";
        if (r->naxes == KB_RES_MAX_AXES)
            return kb_fail(e, KB_EUSAGE, "field '%s' has more than %d axes", name,
                           KB_RES_MAX_AXES);
        if (!*axis || strlen(axis) >= sizeof r->axis[0])
            return kb_fail(e, KB_EUSAGE,
                           "field '%s' has a bad axis name '%s' (1 to %zu characters)", name,
                           axis, sizeof r->axis[0] - 1);
        int64_t v = 0;
        kb_status st = int_value(it, name, axis, 0, KB_JSON_MAX_INT, &v, e);
        if (st != KB_OK)
            return st;
        kb_strlcpy(r->axis[r->naxes], axis, sizeof r->axis[0]);
        r->shape[r->naxes++] = v;
    }
    return KB_OK;
}

kb_status kb_json_to_shape(const cJSON *obj, kb_result *r, kb_err *e)
{
    return shape_from(obj, "shape", r, e);
}

/* Reads a [x, y, z] array of unsigned integers. */
static kb_status get_uint3(const cJSON *obj, const char *pre, const char *key, unsigned v[3],
                           kb_err *e)
{
    const cJSON *a, *it;
    char p[256];
    kb_status st = get_arr(obj, pre, key, REQ, &a, e);
    if (st != KB_OK)
        return st;
    int i = 0;
    cJSON_ArrayForEach(it, a)
    {
        double x;
        if (i == 3 || !num_value(it, &x) || x != floor(x) || x < 0 || x > (double)UINT32_MAX)
            break;
        v[i++] = (unsigned)x;
    }
    if (i != 3 || it) {
        fpath(p, sizeof p, pre, key);
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an array of 3 non-negative integers", p);
    }
    return KB_OK;
}

/* Reads the optional object pre.key of name -> number or null (NAN) into v[max],
 * in order; *n = how many (0 when absent). KB_EUSAGE naming the field for a
 * non-object, a non-number, more than max entries or a name of 0 or 96+ bytes. */
static kb_status get_named(const cJSON *obj, const char *pre, const char *key,
                           kb_named_value *v, int max, int *n, kb_err *e)
{
    const cJSON *o, *it;
    char p[256];
    kb_status st = get_obj(obj, pre, key, OPT, &o, e);
    *n = 0;
    if (st != KB_OK || !o)
        return st;
    fpath(p, sizeof p, pre, key);
    cJSON_ArrayForEach(it, o)
    {
        const char *name = it->string ? it->string : "";
        double x;
        if (*n == max)
            return kb_fail(e, KB_EUSAGE, "field '%s' has more than %d entries", p, max);
        if (!*name || strlen(name) >= sizeof v[0].name)
            return kb_fail(e, KB_EUSAGE, "field '%s' has a bad name '%.40s' (1 to %zu bytes)", p,
                           name, sizeof v[0].name - 1);
        if (cJSON_IsNull(it))
            x = NAN;
        else if (!num_value(it, &x))
            return type_error(p, name, "a number or null", it, e);
        kb_strlcpy(v[*n].name, name, sizeof v[0].name);
        v[(*n)++].value = x;
    }
    return KB_OK;
}

/* An optional integer in [0, hi] or null; null reads as -1 (unknown) and
 * absent leaves dst alone. */
static kb_status get_int_or_null(const cJSON *obj, const char *pre, const char *key, int64_t hi,
                                 int64_t *dst, kb_err *e)
{
    const cJSON *it;
    kb_status st = get_item(obj, pre, key, OPT, &it, e);
    if (st == KB_OK && it && cJSON_IsNull(it))
        *dst = -1;
    else if (st == KB_OK && it)
        st = int_value(it, pre, key, 0, hi, dst, e);
    return st;
}

static kb_status kernel_from(const cJSON *o, const char *pre, kb_kernel *k, kb_err *e)
{
    kb_status st = KB_OK;
    memset(k, 0, sizeof *k);
    k->occupancy = NAN;
    if (!cJSON_IsObject(o))
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an object, got %s", pre, jtype(o));
    KB_TRY(get_str(o, pre, "name", REQ, k->name, sizeof k->name, e));
    KB_TRY(get_uint3(o, pre, "grid", k->grid, e));
    KB_TRY(get_uint3(o, pre, "block", k->block, e));
    KB_TRY(get_int32(o, pre, "registers", REQ, 0, INT32_MAX, &k->registers, e));
    KB_TRY(get_int(o, pre, "static_smem", REQ, 0, KB_JSON_MAX_INT, &k->static_smem, e));
    KB_TRY(get_int(o, pre, "dynamic_smem", REQ, 0, KB_JSON_MAX_INT, &k->dynamic_smem, e));
    KB_TRY(get_int(o, pre, "local_bytes", REQ, 0, KB_JSON_MAX_INT, &k->local_bytes, e));
    KB_TRY(get_int32(o, pre, "blocks_per_sm", REQ, 0, INT32_MAX, &k->blocks_per_sm, e));
    KB_TRY(get_num(o, pre, "occupancy", REQ, &k->occupancy, e));
    KB_TRY(get_str(o, pre, "occupancy_limiter", OPT, k->occ_limiter, sizeof k->occ_limiter, e));
    KB_TRY(get_named(o, pre, "metrics", k->metrics, KB_RES_MAX_METRICS, &k->nmetrics, e));
    KB_TRY(get_named(o, pre, "stalls", k->stalls, KB_RES_MAX_STALLS, &k->nstalls, e));
done:
    return st;
}

/* Reads the optional counters object of a result (absent: no counters). */
static kb_status counters_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *cnt, *set;
    char p[256], q[320];
    int64_t passes = 0;
    KB_TRY(get_obj(o, pre, "counters", OPT, &cnt, e));
    if (!cnt)
        goto done;
    fpath(p, sizeof p, pre, "counters");
    KB_TRY(get_item(cnt, p, "set", OPT, &set, e));
    if (set) {
        kb_metric_set ms;
        if (!cJSON_IsString(set) || !set->valuestring) {
            st = type_error(p, "set", "a string", set, e);
            goto done;
        }
        if (kb_metric_set_parse(set->valuestring, &ms) != 0) {
            fpath(q, sizeof q, p, "set");
            st = kb_fail(e, KB_EUSAGE,
                         "field '%s' must be none, core, sol, stalls or full, got '%.40s'", q,
                         set->valuestring);
            goto done;
        }
        kb_strlcpy(r->metric_set, kb_metric_set_name(ms), sizeof r->metric_set);
    }
    KB_TRY(get_int(cnt, p, "passes", OPT, 0, INT32_MAX, &passes, e));
    r->passes = (int)passes;
    KB_TRY(get_str(cnt, p, "reason", OPT, r->counters_reason, sizeof r->counters_reason, e));
    KB_TRY(get_num(cnt, p, "dram_bytes", OPT, &r->dram_bytes, e));
    KB_TRY(get_num(cnt, p, "achieved_occupancy", OPT, &r->achieved_occupancy, e));
    KB_TRY(get_str(cnt, p, "top_stalls", OPT, r->top_stalls, sizeof r->top_stalls, e));
done:
    return st;
}

/* Reads the optional resources object of a result (absent: unknown). */
static kb_status resources_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *res;
    char p[256];
    int64_t regs = r->registers;
    KB_TRY(get_obj(o, pre, "resources", OPT, &res, e));
    if (!res)
        goto done;
    fpath(p, sizeof p, pre, "resources");
    KB_TRY(get_int_or_null(res, p, "registers", INT32_MAX, &regs, e));
    r->registers = (int)regs;
    KB_TRY(get_int_or_null(res, p, "local_bytes", KB_JSON_MAX_INT, &r->local_bytes, e));
    KB_TRY(get_num(res, p, "theoretical_occupancy", OPT, &r->theoretical_occupancy, e));
done:
    return st;
}

static kb_status alloc_fail(kb_err *e)
{
    return kb_fail(e, KB_EENV, "out of memory reading a report");
}

/* The case of a result: op, variant, dtype, shape, status, reason, seed. */
static kb_status case_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *it;
    char p[256], status[16] = "";
    KB_TRY(get_str(o, pre, "op", REQ, r->op, sizeof r->op, e));
    KB_TRY(get_str(o, pre, "variant", REQ, r->variant, sizeof r->variant, e));
    KB_TRY(get_str(o, pre, "dtype", REQ, r->dtype, sizeof r->dtype, e));
    KB_TRY(get_item(o, pre, "shape", REQ, &it, e));
    fpath(p, sizeof p, pre, "shape");
    KB_TRY(shape_from(it, p, r, e));
    KB_TRY(get_str(o, pre, "status", REQ, status, sizeof status, e));
    if (kb_rstatus_parse(status, &r->status) != 0) {
        fpath(p, sizeof p, pre, "status");
        st = kb_fail(e, KB_EUSAGE, "field '%s' must be ok, mismatch, failed or skipped, got '%s'",
                     p, status);
        goto done;
    }
    KB_TRY(get_str(o, pre, "reason", REQ, r->reason, sizeof r->reason, e));
    KB_TRY(get_seed(o, pre, &r->seed, e));
done:
    return st;
}

/* The check object of a result. */
static kb_status check_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *chk, *tol;
    char p[256], q[320];
    fpath(p, sizeof p, pre, "check");
    KB_TRY(get_obj(o, pre, "check", REQ, &chk, e));
    KB_TRY(get_bool(chk, p, "checked", OPT, &r->checked, e));
    KB_TRY(get_num(chk, p, "max_abs_err", REQ, &r->max_abs_err, e));
    KB_TRY(get_num(chk, p, "rel_l2_err", REQ, &r->rel_l2_err, e));
    KB_TRY(get_obj(chk, p, "tolerance", REQ, &tol, e));
    fpath(q, sizeof q, p, "tolerance");
    KB_TRY(get_num(tol, q, "atol", REQ, &r->atol, e));
    KB_TRY(get_num(tol, q, "rtol", REQ, &r->rtol, e));
    KB_TRY(get_int(chk, p, "rows_checked", OPT, 0, KB_JSON_MAX_INT, &r->rows_checked, e));
done:
    return st;
}

/* The samples_us array named name into r->samples_us. */
static kb_status samples_from(const cJSON *smp, const char *name, kb_result *r, kb_err *e)
{
    const cJSON *it;
    const int n = cJSON_GetArraySize(smp);
    if (n <= 0)
        return KB_OK;
    r->samples_us = malloc((size_t)n * sizeof *r->samples_us);
    if (!r->samples_us)
        return alloc_fail(e);
    cJSON_ArrayForEach(it, smp)
    {
        double v;
        if (cJSON_IsNull(it)) {
            v = NAN;
        } else if (!num_value(it, &v)) {
            char idx[24];
            snprintf(idx, sizeof idx, "%zu", r->nsamples);
            return type_error(name, idx, "a number or null", it, e);
        }
        r->samples_us[r->nsamples++] = v;
    }
    return KB_OK;
}

/* The time object of a result: the summary, the samples and the clock. */
static kb_status time_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *tm, *smp;
    char p[256], q[320];
    fpath(p, sizeof p, pre, "time");
    KB_TRY(get_obj(o, pre, "time", REQ, &tm, e));
    KB_TRY(get_num(tm, p, "median_us", REQ, &r->median_us, e));
    KB_TRY(get_num(tm, p, "min_us", REQ, &r->min_us, e));
    KB_TRY(get_num(tm, p, "max_us", REQ, &r->max_us, e));
    KB_TRY(get_num(tm, p, "stdrel", REQ, &r->stdrel, e));
    KB_TRY(get_arr(tm, p, "samples_us", REQ, &smp, e));
    fpath(q, sizeof q, p, "samples_us");
    KB_TRY(samples_from(smp, q, r, e));
    KB_TRY(get_num(tm, p, "sm_clock_mhz", OPT, &r->sm_clock_mhz, e));
    KB_TRY(get_bool(tm, p, "throttled", OPT, &r->throttled, e));
    KB_TRY(get_str(tm, p, "throttle_reason", OPT, r->throttle_reason, sizeof r->throttle_reason,
                   e));
    KB_TRY(get_num(tm, p, "batch_us", OPT, &r->batch_us, e));
    KB_TRY(get_num(tm, p, "batch_stdrel", OPT, &r->batch_stdrel, e));
    KB_TRY(get_int32(tm, p, "batch_launches", OPT, 0, INT32_MAX, &r->batch_launches, e));
done:
    return st;
}

/* The flags array of a result: names kb_flag_parse knows. */
static kb_status flags_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *arr, *it;
    char p[256];
    KB_TRY(get_arr(o, pre, "flags", OPT, &arr, e));
    if (!arr)
        goto done;
    fpath(p, sizeof p, pre, "flags");
    cJSON_ArrayForEach(it, arr)
    {
        unsigned bit = 0;
        if (!cJSON_IsString(it) || !it->valuestring)
            return kb_fail(e, KB_EUSAGE, "field '%s' must hold strings, got %s", p, jtype(it));
        if (kb_flag_parse(it->valuestring, &bit) != 0)
            return kb_fail(e, KB_EUSAGE, "field '%s' holds unknown flag '%.40s'", p,
                           it->valuestring);
        r->flags |= bit;
    }
done:
    return st;
}

/* The optional source object of a result of a variant file: its path and the
 * SHA-256 of its bytes, 64 lowercase hex digits. */
static kb_status source_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *src;
    char p[256];
    KB_TRY(get_obj(o, pre, "source", OPT, &src, e));
    if (!src)
        goto done;
    fpath(p, sizeof p, pre, "source");
    KB_TRY(get_str(src, p, "path", REQ, r->source_path, sizeof r->source_path, e));
    KB_TRY(get_str(src, p, "sha256", REQ, r->source_sha256, sizeof r->source_sha256, e));
    if (strlen(r->source_sha256) != 64 ||
        strspn(r->source_sha256, "0123456789abcdef") != 64) {
        st = kb_fail(e, KB_EUSAGE, "field '%s.sha256' must be 64 lowercase hex digits, got '%s'",
                     p, r->source_sha256);
    }
done:
    return st;
}

/* The model object, the bound and the derived figures of a result. */
static kb_status figures_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *mdl, *der;
    char p[256], bound[64];
    fpath(p, sizeof p, pre, "model");
    KB_TRY(get_obj(o, pre, "model", REQ, &mdl, e));
    KB_TRY(get_num(mdl, p, "bytes", REQ, &r->bytes, e));
    KB_TRY(get_num(mdl, p, "flops", REQ, &r->flops, e));
    KB_TRY(get_num(mdl, p, "extra_bytes", OPT, &r->extra_bytes, e));
    kb_strlcpy(bound, r->bound, sizeof bound);
    KB_TRY(get_str(o, pre, "bound", OPT, bound, sizeof bound, e));
    if (strcmp(bound, "memory") != 0 && strcmp(bound, "compute") != 0) {
        fpath(p, sizeof p, pre, "bound");
        st = kb_fail(e, KB_EUSAGE, "field '%s' must be memory or compute, got '%s'", p, bound);
        goto done;
    }
    kb_strlcpy(r->bound, bound, sizeof r->bound);
    fpath(p, sizeof p, pre, "derived");
    KB_TRY(get_obj(o, pre, "derived", REQ, &der, e));
    KB_TRY(get_num(der, p, "gbps", REQ, &r->gbps, e));
    KB_TRY(get_num(der, p, "tflops", REQ, &r->tflops, e));
    KB_TRY(get_num(der, p, "pct_peak", REQ, &r->pct_peak, e));
    KB_TRY(get_num(der, p, "speedup", OPT, &r->speedup, e));
    KB_TRY(get_num(der, p, "dram_gbps", OPT, &r->dram_gbps, e));
    KB_TRY(get_num(der, p, "excess_traffic", OPT, &r->excess_traffic, e));
    KB_TRY(get_num(der, p, "gbps_batch", OPT, &r->gbps_batch, e));
    KB_TRY(get_num(der, p, "tflops_batch", OPT, &r->tflops_batch, e));
    KB_TRY(get_num(der, p, "pct_peak_batch", OPT, &r->pct_peak_batch, e));
    KB_TRY(get_num(der, p, "speedup_batch", OPT, &r->speedup_batch, e));
done:
    return st;
}

/* The kernels array of a result. */
static kb_status kernels_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *ks, *it;
    char p[256], q[320];
    KB_TRY(get_arr(o, pre, "kernels", REQ, &ks, e));
    const int n = cJSON_GetArraySize(ks);
    if (n <= 0)
        goto done;
    r->kernels = calloc((size_t)n, sizeof *r->kernels);
    if (!r->kernels) {
        st = alloc_fail(e);
        goto done;
    }
    fpath(p, sizeof p, pre, "kernels");
    cJSON_ArrayForEach(it, ks)
    {
        snprintf(q, sizeof q, "%.256s[%d]", p, r->nkernels);
        KB_TRY(kernel_from(it, q, &r->kernels[r->nkernels], e));
        r->nkernels++;
    }
done:
    return st;
}

/* Reads a result object named pre ("" or "results[3]") into an initialised r. */
static kb_status result_from(const cJSON *o, const char *pre, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    if (!cJSON_IsObject(o))
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an object, got %s", *pre ? pre : "result",
                       jtype(o));
    KB_TRY(case_from(o, pre, r, e));
    KB_TRY(check_from(o, pre, r, e));
    KB_TRY(time_from(o, pre, r, e));
    KB_TRY(flags_from(o, pre, r, e));
    KB_TRY(figures_from(o, pre, r, e));
    KB_TRY(source_from(o, pre, r, e));
    KB_TRY(counters_from(o, pre, r, e));
    KB_TRY(resources_from(o, pre, r, e));
    KB_TRY(kernels_from(o, pre, r, e));
done:
    return st;
}

kb_status kb_json_to_result(const cJSON *obj, kb_result *out, kb_err *e)
{
    kb_result_init(out);
    kb_status st = result_from(obj, "", out, e);
    if (st != KB_OK) {
        kb_result_release(out);
        kb_result_init(out);
    }
    return st;
}

/* Parses "9.0" into major and minor. */
static int parse_cc(const char *s, int *major, int *minor)
{
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return -1;
    long a = strtol(s, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9' || a > 1000)
        return -1;
    const char *m = end + 1;
    long b = strtol(m, &end, 10);
    if (*end != '\0' || b > 1000)
        return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

/* Reads a device object named pre into an initialised d. */
static kb_status device_from(const cJSON *o, const char *pre, kb_device *d, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *ceil;
    char p[256], cc[24] = "";
    if (!cJSON_IsObject(o))
        return kb_fail(e, KB_EUSAGE, "field '%s' must be an object, got %s", *pre ? pre : "device",
                       jtype(o));
    KB_TRY(get_int32(o, pre, "ordinal", OPT, 0, INT32_MAX, &d->ordinal, e));
    KB_TRY(get_str(o, pre, "name", REQ, d->name, sizeof d->name, e));
    KB_TRY(get_str(o, pre, "uuid", REQ, d->uuid, sizeof d->uuid, e));
    KB_TRY(get_str(o, pre, "cc", REQ, cc, sizeof cc, e));
    if (parse_cc(cc, &d->cc_major, &d->cc_minor) != 0) {
        fpath(p, sizeof p, pre, "cc");
        st = kb_fail(e, KB_EUSAGE, "field '%s' must be like \"9.0\", got '%s'", p, cc);
        goto done;
    }
    KB_TRY(get_int32(o, pre, "sms", REQ, 0, INT32_MAX, &d->sms, e));
    KB_TRY(get_int(o, pre, "memory_bytes", REQ, 0, KB_JSON_MAX_INT, &d->memory_bytes, e));
    KB_TRY(get_int(o, pre, "l2_bytes", OPT, 0, KB_JSON_MAX_INT, &d->l2_bytes, e));
    KB_TRY(get_int32(o, pre, "sm_clock_mhz", OPT, 0, INT32_MAX, &d->sm_clock_mhz, e));
    KB_TRY(get_int32(o, pre, "mem_clock_mhz", OPT, 0, INT32_MAX, &d->mem_clock_mhz, e));
    KB_TRY(get_int32(o, pre, "mem_bus_bits", OPT, 0, INT32_MAX, &d->mem_bus_bits, e));
    KB_TRY(get_str(o, pre, "driver", REQ, d->driver, sizeof d->driver, e));
    KB_TRY(get_str(o, pre, "runtime", REQ, d->runtime, sizeof d->runtime, e));
    fpath(p, sizeof p, pre, "ceilings");
    KB_TRY(get_obj(o, pre, "ceilings", REQ, &ceil, e));
    KB_TRY(get_num(ceil, p, "copy_gbps", REQ, &d->copy_gbps, e));
    KB_TRY(get_num(ceil, p, "mma_tflops", OPT, &d->mma_tflops, e));
    KB_TRY(get_num(ceil, p, "fp32_tflops", OPT, &d->fp32_tflops, e));
    KB_TRY(get_num(ceil, p, "copy_batch_gbps", OPT, &d->copy_batch_gbps, e));
    KB_TRY(get_str(ceil, p, "calibrated_at", OPT, d->ceilings_at, sizeof d->ceilings_at, e));
    KB_TRY(get_str(ceil, p, "calibrated_driver", OPT, d->ceilings_driver,
                   sizeof d->ceilings_driver, e));
    KB_TRY(get_num(ceil, p, "calibrated_sm_clock_mhz", OPT, &d->ceilings_sm_clock_mhz, e));
    KB_TRY(get_int32(ceil, p, "calibrated_mem_clock_mhz", OPT, 0, INT32_MAX,
                     &d->ceilings_mem_clock_mhz, e));
done:
    return st;
}

kb_status kb_json_to_device(const cJSON *obj, kb_device *out, kb_err *e)
{
    kb_device_init(out);
    kb_status st = device_from(obj, "", out, e);
    if (st != KB_OK)
        kb_device_init(out);
    return st;
}

/* kb_json_to_run, naming file (or "the document" when NULL) in its messages. */
static kb_status run_from(const cJSON *root, const char *file, kb_run *out, kb_err *e)
{
    kb_status st = KB_OK;
    const cJSON *kb, *dev, *res, *it;
    kb_result r;
    int64_t ver = 0;
    int framed = 1; /* the message names its subject; field errors get "invalid report" */
    char what[300];

    kb_run_init(out);
    kb_result_init(&r);
    if (file)
        snprintf(what, sizeof what, "'%s'", file);
    else
        snprintf(what, sizeof what, "the document");
    if (!cJSON_IsObject(root)) {
        st = kb_fail(e, KB_EUSAGE, "%s is not a kbench report (the top level is %s, not an object)",
                     what, jtype(root));
        goto done;
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "schema_version")) {
        st = kb_fail(e, KB_EUSAGE, "%s is not a kbench report (missing field 'schema_version')",
                     what);
        goto done;
    }
    framed = 0;
    KB_TRY(get_int(root, "", "schema_version", REQ, 1, KB_JSON_MAX_INT, &ver, e));
    if (ver > KB_SCHEMA_VERSION) {
        framed = 1;
        st = kb_fail(e, KB_EUSAGE, "%s has schema_version %lld, newer than this kbench (%d)", what,
                     (long long)ver, KB_SCHEMA_VERSION);
        goto done;
    }
    KB_TRY(get_obj(root, "", "kbench", REQ, &kb, e));
    KB_TRY(get_str(kb, "kbench", "version", REQ, out->version, sizeof out->version, e));
    KB_TRY(get_str(kb, "kbench", "git", REQ, out->git, sizeof out->git, e));
    KB_TRY(get_str(kb, "kbench", "argv", REQ, out->argv, sizeof out->argv, e));
    KB_TRY(get_str(kb, "kbench", "started", REQ, out->started, sizeof out->started, e));
    KB_TRY(get_str(kb, "kbench", "finished", OPT, out->finished, sizeof out->finished, e));
    KB_TRY(get_str(kb, "kbench", "state", OPT, out->state, sizeof out->state, e));
    if (!*out->state)
        kb_strlcpy(out->state, "complete", sizeof out->state);
    if (strcmp(out->state, "running") != 0 && strcmp(out->state, "complete") != 0 &&
        strcmp(out->state, "interrupted") != 0) {
        st = kb_fail(e, KB_EUSAGE,
                     "field 'kbench.state' must be running, complete or interrupted, got '%s'",
                     out->state);
        goto done;
    }
    KB_TRY(get_str(kb, "kbench", "tag", OPT, out->tag, sizeof out->tag, e));
    KB_TRY(get_obj(root, "", "device", REQ, &dev, e));
    KB_TRY(device_from(dev, "device", &out->dev, e));
    KB_TRY(get_arr(root, "", "results", REQ, &res, e));
    cJSON_ArrayForEach(it, res)
    {
        char pre[32];
        snprintf(pre, sizeof pre, "results[%zu]", out->nresults);
        KB_TRY(result_from(it, pre, &r, e));
        if (kb_run_add(out, &r) != 0) {
            st = alloc_fail(e);
            goto done;
        }
        kb_result_init(&r);
    }
done:
    kb_result_release(&r);
    if (st != KB_OK) {
        kb_run_release(out);
        kb_run_init(out);
        if (e && st == KB_EUSAGE && !framed) {
            char inner[sizeof e->msg];
            kb_strlcpy(inner, e->msg, sizeof inner);
            if (file)
                kb_fail(e, st, "invalid report '%s': %s", file, inner);
            else
                kb_fail(e, st, "invalid report: %s", inner);
        }
    }
    return st;
}

kb_status kb_json_to_run(const cJSON *root, kb_run *out, kb_err *e)
{
    return run_from(root, NULL, out, e);
}

/* ---- files ------------------------------------------------------------------ */

/* Writes the tree pretty-printed with a final newline to f. */
static kb_status emit_tree(FILE *f, const void *ctx, kb_err *e)
{
    kb_status st = KB_OK;
    char *text = cJSON_Print((const cJSON *)ctx);
    if (!text)
        st = kb_fail(e, KB_EENV, "out of memory printing the report");
    else if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
        st = kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
    cJSON_free(text);
    return st;
}

kb_status kb_json_write_run(FILE *f, const kb_run *run, kb_err *e)
{
    cJSON *root = kb_json_from_run(run);
    if (!root)
        return kb_fail(e, KB_EENV, "out of memory building the JSON report");
    kb_status st = emit_tree(f, root, e);
    cJSON_Delete(root);
    return st;
}

int kb_report_arg_is_file(const char *arg)
{
    size_t n = strlen(arg);
    return strchr(arg, '/') != NULL || (n > 5 && strcmp(arg + n - 5, ".json") == 0);
}

kb_status kb_json_read_file(const char *path, cJSON **out, kb_err *e)
{
    kb_status st = KB_OK;
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    *out = NULL;
    if (!f) {
        st = kb_fail(e, KB_EENV, "cannot read '%s': %s", path, strerror(errno));
        goto done;
    }
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                st = kb_fail(e, KB_EENV, "out of memory reading '%s'", path);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        st = kb_fail(e, KB_EENV, "cannot read '%s': %s", path, strerror(errno));
        goto done;
    }
    buf[len] = '\0';
    size_t skip = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        st = kb_fail(e, KB_EUSAGE, "'%s' is not valid JSON (near byte %zu)", path,
                     (size_t)(nul - buf));
        goto done;
    }
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(buf + skip, len - skip + 1, &end, 1);
    if (!*out) {
        size_t at = end && end >= buf + skip ? (size_t)(end - buf) : len;
        st = kb_fail(e, KB_EUSAGE, "'%s' is not valid JSON (near byte %zu)", path, at);
        goto done;
    }
done:
    if (f && !is_stdin)
        fclose(f);
    free(buf);
    return st;
}

kb_status kb_json_load_run(const char *path, kb_run *out, kb_err *e)
{
    cJSON *root = NULL;
    kb_status st = kb_json_read_file(path, &root, e);
    if (st != KB_OK) {
        kb_run_init(out);
        return st;
    }
    st = run_from(root, path, out, e);
    cJSON_Delete(root);
    return st;
}

kb_status kb_json_save_run(const kb_run *run, const char *path, kb_err *e)
{
    cJSON *root = kb_json_from_run(run);
    if (!root)
        return kb_fail(e, KB_EENV, "out of memory building the report for '%s'", path);
    kb_status st = kb_write_atomic(path, emit_tree, root, e);
    cJSON_Delete(root);
    return st;
}
