/* cmd_devices.c - `kbench devices`: the visible GPUs and, where `calibrate` has
 * run, their stored ceilings. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "profiler/device.h"
#include "profiler/policy.h"
#include "store/store.h"

static void print_device(const kb_device *d, kb_store *store)
{
    printf("GPU %d: %s\n", d->ordinal, d->name);
    printf("  uuid                %s\n", d->uuid);
    printf("  compute capability  %d.%d\n", d->cc_major, d->cc_minor);
    printf("  SMs                 %d\n", d->sms);
    printf("  memory              %.1f GiB (%lld bytes), %d-bit bus\n",
           (double)d->memory_bytes / (1 << 30), (long long)d->memory_bytes, d->mem_bus_bits);
    printf("  L2 cache            %.1f MiB\n", (double)d->l2_bytes / (1 << 20));
    printf("  peak clocks         SM %d MHz, memory %d MHz\n", d->sm_clock_mhz,
           d->mem_clock_mhz);
    printf("  driver / runtime    %s / %s\n", d->driver, d->runtime);
    kb_device c = *d;
    kb_err e = {{0}};
    if (store && kb_store_get_ceilings(store, &c, &e) == KB_OK && isfinite(c.copy_gbps)) {
        printf("  copy bandwidth      %.0f GB/s (calibrated, read + write)\n", c.copy_gbps);
        if (isfinite(c.copy_batch_gbps))
            printf("  copy, batch         %.0f GB/s (calibrated, copies back to back)\n",
                   c.copy_batch_gbps);
        if (isfinite(c.mma_tflops))
            printf("  bf16 matrix units   %.1f TFLOP/s (calibrated)\n", c.mma_tflops);
        if (isfinite(c.fp32_tflops))
            printf("  fp32                %.1f TFLOP/s (calibrated)\n", c.fp32_tflops);
        const double age = kb_ceilings_age_days(&c, time(NULL));
        if (isfinite(age))
            printf("  calibrated          %s, %.1f days ago, driver %s\n", c.ceilings_at, age,
                   *c.ceilings_driver ? c.ceilings_driver : "unknown");
    } else {
        printf("  ceilings            not calibrated (run 'kbench calibrate')\n");
    }
}

int cmd_devices(int argc, char **argv)
{
    const char *db = NULL;
    kb_err e = {{0}};
    kb_store *store = NULL;
    int n = 0, rc = KB_OK;
    if (kb_cli_wants_help(argc, argv)) {
        printf("usage: kbench devices [--db PATH]\n\n"
               "Lists the visible GPUs: name, uuid, compute capability, SMs, memory, L2,\n"
               "clocks, driver and runtime, and the copy bandwidth stored by 'kbench "
               "calibrate'.\n");
        return kb_cli_finish_stdout(KB_OK);
    }
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--db")) && i + 1 < argc)
            db = argv[++i];
        else
            return kb_cli_error(KB_EUSAGE, "unknown option '%s' for devices", argv[i]);
    }
    kb_status st = kb_device_count(&n, &e);
    if (st != KB_OK)
        return kb_cli_fail(st, &e);
    const char *path = kb_cli_db_path(db);
    struct stat sb;
    if (stat(path, &sb) == 0 && kb_store_open(path, 0, &store, &e) != KB_OK) {
        kb_cli_warn("%s (ceilings not shown)", e.msg);
        store = NULL;
    }
    for (int i = 0; i < n; i++) {
        kb_device d;
        st = kb_device_query(i, &d, &e);
        if (st != KB_OK) {
            rc = kb_cli_fail(st, &e);
            break;
        }
        if (i)
            printf("\n");
        print_device(&d, store);
    }
    kb_store_close(store);
    return kb_cli_finish_stdout(rc);
}
