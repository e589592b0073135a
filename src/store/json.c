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
#include "util/member.h"

/* The largest integer a JSON number (a double) holds exactly: 2^53. */
#define KB_JSON_MAX_INT 9007199254740992LL

/* ---- field tables ----------------------------------------------------------- */

/* Whether reading a field requires it. */
enum { OPT = 0, REQ = 1 };

/* The objects of the report whose fields the schema table lists. A few are
 * listed in parts, which the reader takes in another order than the writer. */
typedef enum field_group {
    G_CHECK,
    G_TOLERANCE,
    G_TIME,       /* the summary, before the samples */
    G_TIME_BATCH, /* the batch figures, after them */
    G_MODEL,
    G_DERIVED,
    G_DERIVED_BATCH,
    G_DERIVED_DRAM,
    G_COUNTERS, /* after the set */
    G_RESOURCES,
    G_KERNEL,      /* between the launch shape and the counters */
    G_DEVICE_ID,   /* before the compute capability */
    G_DEVICE,      /* after it */
    G_CEIL_COPY,   /* the ceilings object: the copy bandwidth, */
    G_CEIL_CALIB,  /* how the ceilings were calibrated, */
    G_CEIL_PEAK,   /* the compute peaks */
    G_KBENCH,      /* before the tag */
} field_group;

/* What the member of a field holds. Integers are int or int64_t members,
 * told apart by their size; read back, an int is in [0, INT32_MAX] and an
 * int64_t in [0, 2^53]. */
typedef enum field_kind {
    F_NUM,   /* double: a number, null for NaN and infinities */
    F_LATER, /* double added to the format later: a number, left out when not
                finite, so that reports from before it read and write back as
                they were */
    F_INT,   /* int or int64_t: an integer */
    F_KNOWN, /* int or int64_t: an integer, null when negative (unknown) */
    F_BOOL,  /* int: true or false */
    F_STR,   /* char[size]: a string */
    F_LATER_STR, /* char[size] added to the format later: a string, left out
                    when empty, as F_LATER */
    F_OBJ,   /* the object of the group sub, members of the same struct */
} field_kind;

/* One field of an object of the report and the struct member it is written
 * from and read into. */
typedef struct field {
    const char *key;
    size_t off, size; /* the member's offset in its struct (kb_result, kb_kernel,
                       * kb_device or kb_run, as the group says) and its size */
    field_group group;
    field_kind kind;
    int req;         /* REQ or OPT, for reading; F_KNOWN fields are OPT */
    field_group sub; /* F_OBJ: the object's group; else the field's own */
} field;

#define MEMBER(type, member) offsetof(type, member), sizeof(((type *)0)->member)
#define RES(member) MEMBER(kb_result, member)
#define KRN(member) MEMBER(kb_kernel, member)
#define DEV(member) MEMBER(kb_device, member)
#define RUN(member) MEMBER(kb_run, member)
/* A row of a plain member, and a row of an object within the group's. */
#define FIELD(group, key, kind, req, member) {key, member, group, kind, req, group}
#define OBJECT(group, key, req, sub) {key, 0, 0, group, F_OBJ, req, sub}

/* The schema (docs/json.md) of the fields that are plain members: the
 * writer and the reader of each object walk its group here, so the two
 * cannot drift apart. Within a group, the order is the output's. */
static const field schema[] = {
    FIELD(G_CHECK, "checked", F_BOOL, OPT, RES(checked)),
    FIELD(G_CHECK, "max_abs_err", F_NUM, REQ, RES(max_abs_err)),
    FIELD(G_CHECK, "rel_l2_err", F_NUM, REQ, RES(rel_l2_err)),
    OBJECT(G_CHECK, "tolerance", REQ, G_TOLERANCE),
    FIELD(G_CHECK, "rows_checked", F_INT, OPT, RES(rows_checked)),
    FIELD(G_TOLERANCE, "atol", F_NUM, REQ, RES(atol)),
    FIELD(G_TOLERANCE, "rtol", F_NUM, REQ, RES(rtol)),
    FIELD(G_TIME, "median_us", F_NUM, REQ, RES(median_us)),
    FIELD(G_TIME, "min_us", F_NUM, REQ, RES(min_us)),
    FIELD(G_TIME, "max_us", F_NUM, REQ, RES(max_us)),
    FIELD(G_TIME, "stdrel", F_NUM, REQ, RES(stdrel)),
    FIELD(G_TIME_BATCH, "batch_us", F_NUM, OPT, RES(batch_us)),
    FIELD(G_TIME_BATCH, "batch_stdrel", F_NUM, OPT, RES(batch_stdrel)),
    FIELD(G_TIME_BATCH, "batch_launches", F_INT, OPT, RES(batch_launches)),
    FIELD(G_TIME_BATCH, "batch_sm_clock_mhz", F_LATER, OPT, RES(batch_sm_clock_mhz)),
    FIELD(G_MODEL, "bytes", F_NUM, REQ, RES(bytes)),
    FIELD(G_MODEL, "flops", F_NUM, REQ, RES(flops)),
    FIELD(G_MODEL, "extra_bytes", F_NUM, OPT, RES(extra_bytes)),
    FIELD(G_DERIVED, "gbps", F_NUM, REQ, RES(gbps)),
    FIELD(G_DERIVED, "tflops", F_NUM, REQ, RES(tflops)),
    FIELD(G_DERIVED, "pct_peak", F_NUM, REQ, RES(pct_peak)),
    FIELD(G_DERIVED, "speedup", F_NUM, OPT, RES(speedup)),
    FIELD(G_DERIVED_BATCH, "gbps_batch", F_NUM, OPT, RES(gbps_batch)),
    FIELD(G_DERIVED_BATCH, "tflops_batch", F_NUM, OPT, RES(tflops_batch)),
    FIELD(G_DERIVED_BATCH, "pct_peak_batch", F_NUM, OPT, RES(pct_peak_batch)),
    FIELD(G_DERIVED_BATCH, "speedup_batch", F_NUM, OPT, RES(speedup_batch)),
    FIELD(G_DERIVED_DRAM, "dram_gbps", F_NUM, OPT, RES(dram_gbps)),
    FIELD(G_DERIVED_DRAM, "excess_traffic", F_NUM, OPT, RES(excess_traffic)),
    FIELD(G_COUNTERS, "passes", F_INT, OPT, RES(passes)),
    FIELD(G_COUNTERS, "reason", F_STR, OPT, RES(counters_reason)),
    FIELD(G_COUNTERS, "dram_bytes", F_NUM, OPT, RES(dram_bytes)),
    FIELD(G_COUNTERS, "achieved_occupancy", F_NUM, OPT, RES(achieved_occupancy)),
    FIELD(G_COUNTERS, "top_stalls", F_STR, OPT, RES(top_stalls)),
    FIELD(G_RESOURCES, "registers", F_KNOWN, OPT, RES(registers)),
    FIELD(G_RESOURCES, "local_bytes", F_KNOWN, OPT, RES(local_bytes)),
    FIELD(G_RESOURCES, "theoretical_occupancy", F_NUM, OPT, RES(theoretical_occupancy)),
    FIELD(G_KERNEL, "registers", F_INT, REQ, KRN(registers)),
    FIELD(G_KERNEL, "static_smem", F_INT, REQ, KRN(static_smem)),
    FIELD(G_KERNEL, "dynamic_smem", F_INT, REQ, KRN(dynamic_smem)),
    FIELD(G_KERNEL, "local_bytes", F_INT, REQ, KRN(local_bytes)),
    FIELD(G_KERNEL, "blocks_per_sm", F_INT, REQ, KRN(blocks_per_sm)),
    FIELD(G_KERNEL, "occupancy", F_NUM, REQ, KRN(occupancy)),
    FIELD(G_KERNEL, "occupancy_limiter", F_STR, OPT, KRN(occ_limiter)),
    FIELD(G_DEVICE_ID, "ordinal", F_INT, OPT, DEV(ordinal)),
    FIELD(G_DEVICE_ID, "name", F_STR, REQ, DEV(name)),
    FIELD(G_DEVICE_ID, "uuid", F_STR, REQ, DEV(uuid)),
    FIELD(G_DEVICE, "sms", F_INT, REQ, DEV(sms)),
    FIELD(G_DEVICE, "memory_bytes", F_INT, REQ, DEV(memory_bytes)),
    FIELD(G_DEVICE, "l2_bytes", F_INT, OPT, DEV(l2_bytes)),
    FIELD(G_DEVICE, "sm_clock_mhz", F_INT, OPT, DEV(sm_clock_mhz)),
    FIELD(G_DEVICE, "mem_clock_mhz", F_INT, OPT, DEV(mem_clock_mhz)),
    FIELD(G_DEVICE, "mem_bus_bits", F_INT, OPT, DEV(mem_bus_bits)),
    FIELD(G_DEVICE, "driver", F_STR, REQ, DEV(driver)),
    FIELD(G_DEVICE, "runtime", F_STR, REQ, DEV(runtime)),
    FIELD(G_CEIL_COPY, "copy_gbps", F_NUM, REQ, DEV(copy_gbps)),
    FIELD(G_CEIL_CALIB, "copy_batch_gbps", F_NUM, OPT, DEV(copy_batch_gbps)),
    FIELD(G_CEIL_CALIB, "calibrated_at", F_STR, OPT, DEV(ceilings_at)),
    FIELD(G_CEIL_CALIB, "calibrated_driver", F_STR, OPT, DEV(ceilings_driver)),
    FIELD(G_CEIL_CALIB, "calibrated_sm_clock_mhz", F_NUM, OPT, DEV(ceilings_sm_clock_mhz)),
    FIELD(G_CEIL_CALIB, "calibrated_mem_clock_mhz", F_INT, OPT, DEV(ceilings_mem_clock_mhz)),
    FIELD(G_CEIL_PEAK, "mma_tflops", F_NUM, OPT, DEV(mma_tflops)),
    FIELD(G_CEIL_PEAK, "fp32_tflops", F_NUM, OPT, DEV(fp32_tflops)),
    FIELD(G_KBENCH, "version", F_STR, REQ, RUN(version)),
    FIELD(G_KBENCH, "git", F_STR, REQ, RUN(git)),
    FIELD(G_KBENCH, "argv", F_STR, REQ, RUN(argv)),
    FIELD(G_KBENCH, "env", F_LATER_STR, OPT, RUN(env)),
    FIELD(G_KBENCH, "started", F_STR, REQ, RUN(started)),
    FIELD(G_KBENCH, "finished", F_STR, OPT, RUN(finished)),
    FIELD(G_KBENCH, "state", F_STR, OPT, RUN(state)),
};

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

static int put_object(cJSON *o, const char *key, const void *base, field_group g);

/* Adds the fields of group g, members of the struct at base, to o in schema
 * order. Returns 1 on success. */
static int put_group(cJSON *o, const void *base, field_group g)
{
    for (size_t i = 0; i < KB_COUNT(schema); i++) {
        const field *f = &schema[i];
        const void *m = (const char *)base + f->off;
        int ok = 1;
        if (f->group != g)
            continue;
        switch (f->kind) {
        case F_NUM:
            ok = put_num(o, f->key, *(const double *)m);
            break;
        case F_LATER:
            ok = !isfinite(*(const double *)m) || put_num(o, f->key, *(const double *)m);
            break;
        case F_INT:
            ok = put_int(o, f->key, kb_int_member(m, f->size));
            break;
        case F_KNOWN:
            ok = put(o, f->key, int_or_null(kb_int_member(m, f->size)));
            break;
        case F_BOOL:
            ok = put_bool(o, f->key, *(const int *)m);
            break;
        case F_STR:
            ok = put_str(o, f->key, m);
            break;
        case F_LATER_STR:
            ok = !*(const char *)m || put_str(o, f->key, m);
            break;
        default: /* F_OBJ */
            ok = put_object(o, f->key, base, f->sub);
            break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* Adds an object key of the fields of group g to o. Returns 1 on success. */
static int put_object(cJSON *o, const char *key, const void *base, field_group g)
{
    cJSON *obj = cJSON_AddObjectToObject(o, key);
    return obj && put_group(obj, base, g);
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
        !put(o, "block", uint3_item(k->block)) || !put_group(o, k, G_KERNEL) ||
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
    cJSON *o = cJSON_CreateObject(), *tm, *smp, *der, *cnt, *ks;
    if (!o)
        return NULL;
    if (!put_str(o, "op", r->op) || !put_str(o, "variant", r->variant) ||
        !put_str(o, "dtype", r->dtype) || !put(o, "shape", kb_json_from_shape(r)) ||
        !put_str(o, "status", kb_rstatus_name(r->status)) ||
        !put_str(o, "reason", r->reason) || !put(o, "seed", seed_item(r->seed)))
        goto fail;

    if (!put_object(o, "check", r, G_CHECK))
        goto fail;

    if (!(tm = cJSON_AddObjectToObject(o, "time")) ||
        !put_group(tm, r, G_TIME) ||
        !(smp = cJSON_AddArrayToObject(tm, "samples_us")))
        goto fail;
    for (size_t i = 0; i < r->nsamples; i++)
        if (!push(smp, num_item(r->samples_us[i])))
            goto fail;
    if (!put_group(tm, r, G_TIME_BATCH) ||
        !put_num(tm, "sm_clock_mhz", r->sm_clock_mhz) ||
        !put_str(tm, "throttle_reason", r->throttle_reason) ||
        !put_bool(tm, "throttled", r->throttled) || !put(o, "flags", flags_item(r->flags)))
        goto fail;

    if (!put_object(o, "model", r, G_MODEL) || !put_str(o, "bound", r->bound))
        goto fail;
    cJSON *src;
    if (r->source_sha256[0] &&
        (!(src = cJSON_AddObjectToObject(o, "source")) || !put_str(src, "path", r->source_path) ||
         !put_str(src, "sha256", r->source_sha256)))
        goto fail;
    if (!(der = cJSON_AddObjectToObject(o, "derived")) ||
        !put_group(der, r, G_DERIVED) ||
        !put_group(der, r, G_DERIVED_BATCH) ||
        !put_group(der, r, G_DERIVED_DRAM))
        goto fail;

    if (!(cnt = cJSON_AddObjectToObject(o, "counters")) || !put_str(cnt, "set", r->metric_set) ||
        !put_group(cnt, r, G_COUNTERS) ||
        !put_object(o, "resources", r, G_RESOURCES))
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
    if (!put_group(o, d, G_DEVICE_ID) || !put_str(o, "cc", cc) ||
        !put_group(o, d, G_DEVICE) ||
        !(ceil = cJSON_AddObjectToObject(o, "ceilings")) ||
        !put_group(ceil, d, G_CEIL_COPY) ||
        !put_group(ceil, d, G_CEIL_CALIB) ||
        !put_group(ceil, d, G_CEIL_PEAK)) {
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
        !(kb = cJSON_AddObjectToObject(root, "kbench")) ||
        !put_group(kb, run, G_KBENCH) || !put_str(kb, "tag", run->tag) ||
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

static kb_status get_object(const cJSON *obj, const char *pre, const char *key, int req,
                            void *base, field_group g, kb_err *e);

/* Reads the fields of group g of obj (named pre) into the members of the
 * struct at base, in schema order; a field absent and optional leaves its
 * member alone. KB_EUSAGE naming the first field that is missing or not what
 * it must be. */
static kb_status get_group(const cJSON *obj, const char *pre, void *base, field_group g,
                           kb_err *e)
{
    kb_status st = KB_OK;
    for (size_t i = 0; i < KB_COUNT(schema) && st == KB_OK; i++) {
        const field *f = &schema[i];
        void *m = (char *)base + f->off;
        const int64_t hi = f->size == sizeof(int) ? INT32_MAX : KB_JSON_MAX_INT;
        int64_t v = 0;
        if (f->group != g)
            continue;
        switch (f->kind) {
        case F_NUM:
        case F_LATER:
            st = get_num(obj, pre, f->key, f->req, m, e);
            break;
        case F_INT:
            v = kb_int_member(m, f->size);
            st = get_int(obj, pre, f->key, f->req, 0, hi, &v, e);
            if (st == KB_OK)
                kb_set_int_member(m, f->size, v);
            break;
        case F_KNOWN:
            v = kb_int_member(m, f->size);
            st = get_int_or_null(obj, pre, f->key, hi, &v, e);
            if (st == KB_OK)
                kb_set_int_member(m, f->size, v);
            break;
        case F_BOOL:
            st = get_bool(obj, pre, f->key, f->req, m, e);
            break;
        case F_STR:
        case F_LATER_STR:
            st = get_str(obj, pre, f->key, f->req, m, f->size, e);
            break;
        default: /* F_OBJ */
            st = get_object(obj, pre, f->key, f->req, base, f->sub, e);
            break;
        }
    }
    return st;
}

/* Reads the object pre.key of the fields of group g into the struct at base;
 * absent and optional leaves it alone. */
static kb_status get_object(const cJSON *obj, const char *pre, const char *key, int req,
                            void *base, field_group g, kb_err *e)
{
    const cJSON *o;
    char p[320];
    kb_status st = get_obj(obj, pre, key, req, &o, e);
    if (st != KB_OK || !o)
        return st;
    fpath(p, sizeof p, pre, key);
    return get_group(o, p, base, g, e);
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
    KB_TRY(get_group(o, pre, k, G_KERNEL, e));
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
    KB_TRY(get_group(cnt, p, r, G_COUNTERS, e));
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
    KB_TRY(get_group(tm, p, r, G_TIME, e));
    KB_TRY(get_arr(tm, p, "samples_us", REQ, &smp, e));
    fpath(q, sizeof q, p, "samples_us");
    KB_TRY(samples_from(smp, q, r, e));
    KB_TRY(get_num(tm, p, "sm_clock_mhz", OPT, &r->sm_clock_mhz, e));
    KB_TRY(get_bool(tm, p, "throttled", OPT, &r->throttled, e));
    KB_TRY(get_str(tm, p, "throttle_reason", OPT, r->throttle_reason, sizeof r->throttle_reason,
                   e));
    KB_TRY(get_group(tm, p, r, G_TIME_BATCH, e));
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
    const cJSON *der;
    char p[256], bound[64];
    KB_TRY(get_object(o, pre, "model", REQ, r, G_MODEL, e));
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
    KB_TRY(get_group(der, p, r, G_DERIVED, e));
    KB_TRY(get_group(der, p, r, G_DERIVED_DRAM, e));
    KB_TRY(get_group(der, p, r, G_DERIVED_BATCH, e));
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
    KB_TRY(get_object(o, pre, "check", REQ, r, G_CHECK, e));
    KB_TRY(time_from(o, pre, r, e));
    KB_TRY(flags_from(o, pre, r, e));
    KB_TRY(figures_from(o, pre, r, e));
    KB_TRY(source_from(o, pre, r, e));
    KB_TRY(counters_from(o, pre, r, e));
    KB_TRY(get_object(o, pre, "resources", OPT, r, G_RESOURCES, e));
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
    KB_TRY(get_group(o, pre, d, G_DEVICE_ID, e));
    KB_TRY(get_str(o, pre, "cc", REQ, cc, sizeof cc, e));
    if (parse_cc(cc, &d->cc_major, &d->cc_minor) != 0) {
        fpath(p, sizeof p, pre, "cc");
        st = kb_fail(e, KB_EUSAGE, "field '%s' must be like \"9.0\", got '%s'", p, cc);
        goto done;
    }
    KB_TRY(get_group(o, pre, d, G_DEVICE, e));
    fpath(p, sizeof p, pre, "ceilings");
    KB_TRY(get_obj(o, pre, "ceilings", REQ, &ceil, e));
    KB_TRY(get_group(ceil, p, d, G_CEIL_COPY, e));
    KB_TRY(get_group(ceil, p, d, G_CEIL_PEAK, e));
    KB_TRY(get_group(ceil, p, d, G_CEIL_CALIB, e));
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
    KB_TRY(get_group(kb, "kbench", out, G_KBENCH, e));
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
