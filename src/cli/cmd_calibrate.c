/* cmd_calibrate.c - `kbench calibrate`: measure this GPU's ceilings (device copy
 * bandwidth, bf16 matrix-unit and fp32 peaks) and store them per device. The
 * measuring is the profiler's (profiler/policy.h), in a child process. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "profiler/child.h"
#include "profiler/policy.h"
#include "store/store.h"

/* The ceilings stored before this calibration, with their age. */
static void print_previous(const kb_device *d)
{
    if (kb_ceilings_missing(d)) {
        printf("no ceilings were stored for %s\n", d->name);
        return;
    }
    const double age = kb_ceilings_age_days(d, time(NULL));
    if (isfinite(age))
        printf("stored ceilings: %.1f days old (%s, driver %s)\n", age, d->ceilings_at,
               *d->ceilings_driver ? d->ceilings_driver : "unknown");
    else
        printf("stored ceilings: of unknown age (no date)\n");
}

int cmd_calibrate(int argc, char **argv)
{
    const char *db = NULL;
    int64_t ordinal = 0;
    kb_err e = {{0}};
    kb_store *store = NULL;
    kb_device d;
    int measured = 0;
    char why[256];
    if (kb_cli_wants_help(argc, argv)) {
        printf("usage: kbench calibrate [--device N] [--db PATH]\n\n"
               "Measures this GPU's ceilings and stores them: the device-to-device copy\n"
               "bandwidth (bytes read + written per second, best of a 16-byte-vector copy\n"
               "kernel and cudaMemcpy over 1 GiB), the bf16 matrix-unit peak and the fp32\n"
               "peak (cuBLAS GEMMs of 8192^3 on random data). The copy is timed both ways\n"
               "a case is: cold (each copy after an L2 flush) and batch (back to back).\n"
               "Says the age of the ceilings it replaces. 'run' uses them for %% of peak,\n"
               "and calibrates first when they are missing, older than %d days or were\n"
               "measured under another driver.\n", KB_CEILINGS_MAX_AGE_DAYS);
        return kb_cli_finish_stdout(KB_OK);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            if (kb_parse_i64(argv[++i], 0, KB_MAX_DEVICE, "--device", &ordinal, &e) != KB_OK)
                return kb_cli_fail(KB_EUSAGE, &e);
        } else {
            return kb_cli_error(KB_EUSAGE, "unknown option '%s' for calibrate", argv[i]);
        }
    }
    kb_status st = KB_OK;
    KB_TRY(kb_child_device((int)ordinal, &d, &e)); /* no GPU: nothing is created */
    KB_TRY(kb_store_open(kb_cli_db_path(db), 1, &store, &e));
    KB_TRY(kb_store_get_ceilings(store, &d, &e));
    print_previous(&d);
    KB_TRY(kb_ceilings_ensure((int)ordinal, &d, KB_CALIBRATE_ALWAYS, &measured, why, sizeof why,
                              &e));
    KB_TRY(kb_store_set_ceilings(store, &d, &e));
    printf("%s (%s), stored in %s:\n"
           "  device copy bandwidth  %.0f GB/s cold, %.0f GB/s batch (read + write)\n"
           "  bf16 matrix units      %.1f TFLOP/s (cuBLAS GEMM 8192^3)\n"
           "  fp32                   %.1f TFLOP/s (cuBLAS SGEMM 8192^3, no TF32)\n"
           "  measured               %s, driver %s, SM clock %.0f MHz, memory clock %d MHz\n",
           d.name, d.uuid, kb_cli_db_path(db), d.copy_gbps, d.copy_batch_gbps, d.mma_tflops,
           d.fp32_tflops, d.ceilings_at, *d.ceilings_driver ? d.ceilings_driver : "unknown",
           d.ceilings_sm_clock_mhz, d.ceilings_mem_clock_mhz);
done:
    kb_store_close(store);
    if (st != KB_OK)
        return kb_cli_fail(st, &e);
    return kb_cli_finish_stdout(KB_OK);
}
